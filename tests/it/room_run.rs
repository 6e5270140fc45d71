//! A room run as the engine hands it to its reporters: the events a listener hears, and the
//! demo room's results made into a scoreboard (moved out of `report::board`, which renders
//! results and imports no engine).
use std::collections::BTreeSet;

use trainlab::catalog::Catalog;
use trainlab::cluster::ConnectOpts;
use trainlab::exit::ExitCode;
use trainlab::grade::{run, Learners, Quiet, Room, RoomRequest};
use trainlab::plan::{Event, Listener};
use trainlab::report::Scoreboard;
use trainlab::results::room::{room_exit_code as exit_code, RoomResult};
use trainlab::text::Lang;

fn demo_request() -> RoomRequest {
    RoomRequest {
        labs: Vec::new(),
        all: false,
        learners: Learners::Demo,
        template: None,
        connect: ConnectOpts::default(),
        params: Vec::new(),
        profile: None,
        concurrency: 4,
    }
}

/// Writes down the events of a room run, as a screen would receive them.
#[derive(Default)]
struct Recorder(Vec<String>);

impl Listener<RoomResult> for Recorder {
    fn on(&mut self, event: Event<'_, RoomResult>) {
        self.0.push(match event {
            Event::Grading { learners } => format!("grading {learners}"),
            Event::LearnerDone(l) => format!("done {l}"),
            Event::Graded(room) => format!("graded {}", room.learners.len()),
            Event::Regraded { result, .. } => format!("regraded {}", result.learners.len()),
            Event::Stream(_) => "stream".into(),
            Event::Connected(_) => "connected".into(),
            Event::Reading { .. } | Event::ReadDone => "reading".into(),
            Event::Waiting { .. } | Event::WaitDone => "waiting".into(),
            // A room run has no steps of a command that changes the cluster.
            Event::StepStarted(_)
            | Event::StepNews(_)
            | Event::StepDone(_)
            | Event::StepFailed(_)
            | Event::Note(_) => "step".into(),
        });
    }
}

/// Grades the demo room once, telling `listener`.
fn run_demo_room(listener: &mut (dyn Listener<RoomResult> + 'static)) -> RoomResult {
    let c = Catalog::embedded().unwrap();
    let room = Room::resolve(&c, demo_request()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(&room, None, listener)).unwrap()
}

#[test]
fn a_room_run_tells_its_listener_each_learner_then_the_graded_room() {
    let mut rec = Recorder::default();
    run_demo_room(&mut rec);
    assert_eq!(rec.0.first().map(String::as_str), Some("grading 8"));
    assert_eq!(rec.0.last().map(String::as_str), Some("graded 8"));
    let done: BTreeSet<&str> = rec
        .0
        .iter()
        .filter_map(|e| e.strip_prefix("done "))
        .collect();
    assert_eq!(done.len(), 8, "{:?}", rec.0);
    assert_eq!(rec.0.len(), 10, "{:?}", rec.0);
}

#[test]
fn the_demo_room_has_eight_learners_at_different_stages() {
    let result = run_demo_room(&mut Quiet);
    assert_eq!(result.learners.len(), 8);
    let board = Scoreboard::new(&result, Lang::En);
    let json = |b: &Scoreboard| serde_json::to_value(b).unwrap();
    assert_eq!(
        json(&Scoreboard::from_room(result.clone(), Lang::En)),
        json(&board),
        "made from the results as they are dropped, the same board"
    );
    let totals: BTreeSet<String> = board
        .learners
        .iter()
        .map(|r| format!("{:?}", r.score.percent))
        .collect();
    assert!(
        totals.len() >= 5,
        "different stages, different totals: {totals:?}"
    );
    let marks: BTreeSet<&str> = board
        .learners
        .iter()
        .flat_map(|r| r.cells.iter().map(|c| c.mark.as_str()))
        .collect();
    for m in ["done", "partial", "not-started"] {
        assert!(marks.contains(m), "{m} in {marks:?}");
    }
    // Nothing in the demo room errors: it is complete state.
    assert!(!marks.contains("error"), "{marks:?}");
    assert_eq!(exit_code(&result), ExitCode::Ok);
}
