//! A room run as the engine hands it to its reporters: the events a listener hears, and the
//! demo room's results made into a scoreboard (moved out of `report::board`, which renders
//! results and imports no engine).
use std::collections::BTreeSet;

use trainlab::catalog::Catalog;
use trainlab::cluster::ConnectOpts;
use trainlab::exit::ExitCode;
use trainlab::grade::{run, Learners, Quiet, Room, RoomOutput, RoomRequest};
use trainlab::plan::{Event, Listener};
use trainlab::report::room::RoomFormat;
use trainlab::report::Scoreboard;
use trainlab::results::room::{room_exit_code as exit_code, RoomResult};
use trainlab::text::Lang;

use serde_json::Value;

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
        watch: None,
        output: RoomOutput {
            format: RoomFormat::Table,
            lang: Lang::En,
            html: None,
            serve: None,
        },
    }
}

/// Passes the events on to `inner` and keeps the room the run hands over when it is finished.
struct Keep<L> {
    inner: L,
    finished: Option<RoomResult>,
}

impl<L: Listener<RoomResult>> Listener<RoomResult> for Keep<L> {
    fn on(&mut self, event: Event<'_, RoomResult>) {
        self.inner.on(event);
    }

    fn finished(&mut self, room: RoomResult) {
        self.finished = Some(room);
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
fn run_demo_room<L: Listener<RoomResult> + 'static>(listener: L) -> (RoomResult, L) {
    let c = Catalog::embedded().unwrap();
    let room = Room::resolve(&c, demo_request()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut keep = Keep {
        inner: listener,
        finished: None,
    };
    let code = rt.block_on(run(&room, &mut keep)).unwrap();
    let room = keep
        .finished
        .take()
        .expect("the run hands its room to the listener");
    assert_eq!(
        code,
        exit_code(&room),
        "the run returns the room's exit code"
    );
    (room, keep.inner)
}

#[test]
fn a_room_run_tells_its_listener_each_learner_then_the_graded_room() {
    let (_, rec) = run_demo_room(Recorder::default());
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
    let (result, _) = run_demo_room(Quiet);
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

#[test]
fn a_board_updated_for_some_learners_is_the_board_of_the_new_room_for_them() {
    let (room, _) = run_demo_room(Quiet);
    let json = |b: &Scoreboard| serde_json::to_value(b).unwrap();
    let mut changed = room.clone();
    let aiko = changed
        .learners
        .iter_mut()
        .find(|l| l.name == "aiko")
        .unwrap();
    aiko.results = Err("the cluster did not answer".into());
    changed.learners.retain(|l| l.name != "hana");

    let mut board = Scoreboard::new(&room, Lang::En);
    board.update(&changed, &["aiko"]);
    assert_eq!(
        json(&board),
        json(&Scoreboard::new(&changed, Lang::En)),
        "aiko's row made anew, hana's gone, the room's score and summary recomputed"
    );

    // A learner not named keeps the row the board had.
    let mut stale = Scoreboard::new(&room, Lang::En);
    stale.update(&changed, &[]);
    let aiko_row = |b: &Scoreboard| json(b)["learners"][0].clone();
    assert_eq!(aiko_row(&stale)["id"], "aiko");
    assert_eq!(
        aiko_row(&stale),
        aiko_row(&Scoreboard::new(&room, Lang::En))
    );
}

#[test]
fn an_outline_is_the_board_without_reports_and_its_rows_read_back_are_the_boards() {
    let (room, _) = run_demo_room(Quiet);
    let json = |v: &dyn erased::Json| v.json();
    for lang in [Lang::En, Lang::Ja] {
        let board = Scoreboard::new(&room, lang);
        let outline = Scoreboard::outline(&room, lang);
        assert!(outline
            .learners
            .iter()
            .flat_map(|r| &r.cells)
            .all(|c| c.report.is_none()));
        // Marks, scores and the room's summary are the board's.
        assert_eq!(json(&outline.most_failed), json(&board.most_failed));
        assert_eq!(json(&outline.score), json(&board.score));
        for (o, b) in outline.learners.iter().zip(&board.learners) {
            let marks = |r: &trainlab::report::Row| -> Vec<&str> {
                r.cells.iter().map(|c| c.mark.as_str()).collect()
            };
            assert_eq!(marks(o), marks(b));
            let full = outline
                .full_row(&room, &o.id)
                .expect("the learner is in the room");
            assert_eq!(json(&full), json(b), "{}'s row read back", o.id);
        }
        // The terminal's table is the same made from the outline (it shows marks and scores).
        let table = trainlab::report::room::RoomFormat::Table;
        assert!(!table.shows_checks());
        assert_eq!(
            trainlab::report::room::render(&outline, table, Some(120)),
            trainlab::report::room::render(&board, table, Some(120))
        );
        // The served page is the same made from the outline as from the board, and embeds no
        // cell's details: the page asks for a learner's when a cell is opened.
        let live = trainlab::report::html::Live {
            events: "events",
            details: "cells.json",
            query: "",
        };
        let served = trainlab::report::html::render_live(&outline, &live);
        assert_eq!(served, trainlab::report::html::render_live(&board, &live));
        assert_eq!(embedded_cells(&served), Vec::<Value>::new());
        // What it is given then is what the file's page embeds for that learner.
        let file = embedded_cells(&trainlab::report::html::render(&board));
        for o in &outline.learners {
            let full = outline.full_row(&room, &o.id).unwrap();
            let details: Value =
                serde_json::from_str(&trainlab::report::html::learner_details(&outline, &full, 7))
                    .unwrap();
            assert_eq!(details["version"], 7);
            let theirs: Vec<&Value> = file
                .iter()
                .filter(|c| c["learner"] == o.id.as_str())
                .collect();
            assert_eq!(
                details["cells"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .collect::<Vec<_>>(),
                theirs
            );
            assert!(!theirs.is_empty());
        }
    }

    // Updated for some learners, an outline stays the outline of the new room.
    let mut changed = room.clone();
    changed.learners[0].results = Err("the cluster did not answer".into());
    changed.learners.retain(|l| l.name != "hana");
    let mut outline = Scoreboard::outline(&room, Lang::En);
    outline.update(&changed, &[changed.learners[0].name.as_str()]);
    let fresh = Scoreboard::outline(&changed, Lang::En);
    assert_eq!(json(&outline.most_failed), json(&fresh.most_failed));
    assert_eq!(json(&outline.learners), json(&fresh.learners));
}

/// The cells' details a scoreboard page embeds (its `room-data`).
fn embedded_cells(page: &str) -> Vec<Value> {
    let open = r#"<script type="application/json" id="room-data">"#;
    let data = &page[page.find(open).unwrap() + open.len()..];
    let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
    data["cells"].as_array().unwrap().clone()
}

/// Any serialisable value as JSON, for comparing parts of boards.
mod erased {
    pub trait Json {
        fn json(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap()
        }
    }
}

#[test]
fn a_live_board_pushes_only_the_rows_of_the_learners_judged_again_that_changed() {
    let (room, _) = run_demo_room(Quiet);
    let live = trainlab::serve::LiveBoard::new(Lang::En);
    let mut pushes = live.subscribe();
    assert!(
        live.publish(&room).is_empty(),
        "nothing is marked changed on the first board"
    );
    let first: Value = serde_json::from_str(&pushes.try_recv().unwrap().data).unwrap();
    assert_eq!(
        first["rows"].as_array().unwrap().len(),
        8,
        "every row at first"
    );

    let mut changed = room.clone();
    changed
        .learners
        .iter_mut()
        .find(|l| l.name == "aiko")
        .unwrap()
        .results = Err("the cluster did not answer".into());
    changed.learners.retain(|l| l.name != "hana");
    // ben is judged again but nothing of his changed: his row is not pushed.
    let marked = live.publish_learners(&changed, &["aiko", "ben"]);
    let push = pushes.try_recv().unwrap();
    assert_eq!(push.event, "rows");
    let update: Value = serde_json::from_str(&push.data).unwrap();
    let rows: Vec<&str> = update["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["learner"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["aiko"]);
    assert_eq!(update["removed"], serde_json::json!(["hana"]));
    assert!(
        !marked.is_empty() && marked.iter().all(|c| c.starts_with("aiko/")),
        "{marked:?}"
    );
    assert_eq!(update["changed"], serde_json::json!(marked));
    assert_eq!(update["version"], 2);
}

#[test]
fn every_row_of_a_big_room_is_pushed_in_parts_each_row_once() {
    let (demo, _) = run_demo_room(Quiet);
    // 120 learners: the demo's eight, again and again under other names.
    let mut room = demo.clone();
    room.learners = (0..120)
        .map(|i| {
            let mut l = demo.learners[i % demo.learners.len()].clone();
            l.name = format!("learner-{i:03}");
            l
        })
        .collect();
    let live = trainlab::serve::LiveBoard::new(Lang::En);
    let mut pushes = live.subscribe();
    live.publish(&room);
    let mut seen: Vec<String> = Vec::new();
    let mut parts = 0;
    while let Ok(p) = pushes.try_recv() {
        assert_eq!(p.event, "rows");
        let v: Value = serde_json::from_str(&p.data).unwrap();
        let rows = v["rows"].as_array().unwrap();
        assert!(rows.len() <= 50, "a part of {} rows", rows.len());
        assert_eq!(v["version"], 1);
        seen.extend(
            rows.iter()
                .map(|r| r["learner"].as_str().unwrap().to_string()),
        );
        parts += 1;
    }
    assert_eq!(parts, 3, "120 rows in parts of at most 50");
    let names: Vec<String> = room.learners.iter().map(|l| l.name.clone()).collect();
    assert_eq!(seen, names, "every row once, in the board's order");
}

#[test]
fn the_room_document_written_learner_by_learner_is_the_boards_byte_for_byte() {
    let (room, _) = run_demo_room(Quiet);
    for lang in [Lang::En, Lang::Ja] {
        let mut whole = Vec::new();
        trainlab::report::room::write_json(&Scoreboard::from_room(room.clone(), lang), &mut whole)
            .unwrap();
        let mut streamed = Vec::new();
        trainlab::report::write_json_streamed(room.clone(), lang, &mut streamed).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }
}
