//! A room on a shared cluster graded from watches (`grade::follow`, what `grade --watch` runs)
//! against the emulator: a learner's change reaches the graded room and re-judges only that
//! learner's cell; a forced `410 Gone` relists and loses nothing; a dropped stream reconnects
//! from the last bookmark; a new labelled namespace adds a learner; each kind costs one LIST and
//! one WATCH (plus reconnects), and only get/list/watch are sent. No clock: each wait ends on
//! what is heard, with a generous bound only so a broken engine fails instead of hanging.

use crate::room;
use crate::support::live::{Cluster, ALL_CRDS};

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use trainlab::catalog::Catalog;
use trainlab::cluster::ConnectOpts;
use trainlab::grade::{follow, Learners, Room, RoomRequest};
use trainlab::plan::stream::StreamState;
use trainlab::plan::{Event, Listener};
use trainlab::results::room::RoomResult;
use trainlab::verify::Status;

/// What the test hears from the engine.
#[derive(Debug)]
enum Heard {
    /// The checks passed per cell, and why each check that errored did.
    Graded(Vec<(String, usize)>, Vec<String>),
    Regraded {
        changed: Vec<String>,
        passed: Vec<(String, usize)>,
        /// Why each check that errored did, as `learner/lab: reason`.
        errors: Vec<String>,
    },
    Stream(StreamState),
}

/// `learner/lab` → checks passed, for every cell of the room.
fn passed(r: &RoomResult) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for l in &r.learners {
        for lab in l.labs().unwrap() {
            let n = lab
                .outcomes
                .iter()
                .filter(|o| o.status == Status::Pass)
                .count();
            out.push((format!("{}/{}", l.name, lab.lab.id), n));
        }
    }
    out
}

/// `learner/lab: reason` for every check that errored.
fn errors(r: &RoomResult) -> Vec<String> {
    let mut out = Vec::new();
    for l in &r.learners {
        for lab in l.labs().unwrap() {
            for o in lab.outcomes.iter().filter(|o| o.status == Status::Error) {
                out.push(format!("{}/{}: {:?}", l.name, lab.lab.id, o.reason));
            }
        }
    }
    out
}

struct Tell(mpsc::Sender<Heard>);

impl Listener<RoomResult> for Tell {
    fn on(&mut self, event: Event<'_, RoomResult>) {
        let heard = match event {
            Event::Graded(r) => Heard::Graded(passed(r), errors(r)),
            Event::Regraded { result, changed } => Heard::Regraded {
                changed: changed
                    .iter()
                    .map(|c| format!("{}/{}", c.learner, c.lab))
                    .collect(),
                passed: passed(result),
                errors: errors(result),
            },
            Event::Stream(s) => Heard::Stream(s.clone()),
            _ => return,
        };
        let _ = self.0.send(heard);
    }
}

/// The engine following `c`'s room on its own thread until the returned sender is dropped.
struct Following {
    heard: mpsc::Receiver<Heard>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Following {
    fn start(c: &Cluster, learners: Learners) -> Following {
        Following::bounded(c, learners, trainlab::observe::limits::Limits::default())
    }

    /// Following with `--max-input-mib` and `--max-objects` as `limits` say.
    fn bounded(
        c: &Cluster,
        learners: Learners,
        limits: trainlab::observe::limits::Limits,
    ) -> Following {
        let (tx, heard) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let kubeconfig = c.kubeconfig.clone();
        let thread = std::thread::spawn(move || {
            let catalog = Catalog::embedded().unwrap();
            let room = Room::resolve(
                &catalog,
                RoomRequest {
                    labs: vec!["volcano-gang".into()],
                    all: false,
                    learners,
                    template: None,
                    connect: ConnectOpts {
                        kubeconfig: Some(kubeconfig),
                        limits,
                        ..ConnectOpts::default()
                    },
                    params: Vec::new(),
                    profile: None,
                    concurrency: 1,
                    watch: Some(Duration::from_secs(10)),
                    output: trainlab::grade::RoomOutput {
                        format: trainlab::report::room::RoomFormat::Table,
                        lang: trainlab::text::Lang::En,
                        html: None,
                        serve: None,
                    },
                },
            )
            .unwrap();
            let rt = tokio::runtime::Runtime::new().unwrap();
            let mut tell = Tell(tx);
            let stop = async {
                let _ = stopped.await;
            };
            rt.block_on(follow(&room, &mut tell, stop)).unwrap();
        });
        Following {
            heard,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The next thing heard that `f` picks (a bound only against a hang).
    fn until<T>(&self, what: &str, mut f: impl FnMut(&Heard) -> Option<T>) -> T {
        loop {
            let h = self
                .heard
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("never heard {what}"));
            if let Some(t) = f(&h) {
                return t;
            }
        }
    }

    fn graded(&self) -> Vec<(String, usize)> {
        self.until("the first grading", |h| match h {
            Heard::Graded(p, _) => Some(p.clone()),
            _ => None,
        })
    }

    /// The first grading's errored checks (`learner/lab: reason`).
    fn graded_errors(&self) -> Vec<String> {
        self.until("the first grading", |h| match h {
            Heard::Graded(_, errors) => Some(errors.clone()),
            _ => None,
        })
    }

    /// Every Regraded until one has `cell` among its changed cells: (all changed, passed).
    fn regraded_with(&self, cell: &str) -> (Vec<String>, Vec<(String, usize)>) {
        let mut all = Vec::new();
        let passed = self.until(&format!("{cell} judged again"), |h| match h {
            Heard::Regraded {
                changed, passed, ..
            } => {
                all.push(changed.clone());
                changed.iter().any(|c| c == cell).then(|| passed.clone())
            }
            _ => None,
        });
        (all.concat(), passed)
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// bob's Volcano Job of the lab's solution, as he would create it.
fn bobs_job() -> Value {
    room::as_created("bob", "volcano-gang", "solution-state", "Job")
}

fn namespace(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
}

/// alice solved the lab, and her namespace carries `label` (the room's learners are found
/// from it).
fn alice_labelled(label: &Value) -> Cluster {
    let mut seed = room::room(&[("alice", &["volcano-gang"])]);
    for o in &mut seed {
        if o["kind"] == "Namespace" && o["metadata"]["name"] == "alice-volcano-gang" {
            o["metadata"]["labels"] = label.clone();
        }
    }
    if !seed
        .iter()
        .any(|o| o["kind"] == "Namespace" && o["metadata"]["name"] == "alice-volcano-gang")
    {
        seed.push(namespace("alice-volcano-gang", label.clone()));
    }
    Cluster::start(seed, &ALL_CRDS)
}

/// alice solved the lab; bob has an empty namespace.
fn two_learners() -> Cluster {
    let mut seed = room::room(&[("alice", &["volcano-gang"]), ("bob", &[])]);
    seed.push(namespace("bob-volcano-gang", json!({})));
    Cluster::start(seed, &ALL_CRDS)
}

fn named() -> Learners {
    Learners::Named(vec!["alice".into(), "bob".into()])
}

fn is_watch(r: &crate::support::emulator::Recorded) -> bool {
    r.query
        .split('&')
        .any(|p| p == "watch=true" || p == "watch=1")
}

fn is_api(path: &str) -> bool {
    !crate::support::live::is_version_or_discovery(path)
}

fn score(passed: &[(String, usize)], cell: &str) -> usize {
    passed.iter().find(|(c, _)| c == cell).unwrap().1
}

const JOBS: &str = "/apis/batch.volcano.sh/v1alpha1/jobs";
const BOBS_JOBS: &str = "/apis/batch.volcano.sh/v1alpha1/namespaces/bob-volcano-gang/jobs";

#[test]
fn a_learners_change_reaches_the_room_and_only_their_cell_is_judged_again() {
    let c = two_learners();
    let f = Following::start(&c, named());
    let first = f.graded();
    let mut job = bobs_job();
    job["metadata"]["namespace"] = json!("bob-volcano-gang");
    c.emu.create(BOBS_JOBS, &job);
    let (changed, now) = f.regraded_with("bob/volcano-gang");
    assert!(
        changed.iter().all(|c| c == "bob/volcano-gang"),
        "alice had no change and was not judged again: {changed:?}"
    );
    assert!(
        score(&now, "bob/volcano-gang") > score(&first, "bob/volcano-gang"),
        "{first:?} → {now:?}"
    );
    assert_eq!(
        score(&now, "alice/volcano-gang"),
        score(&first, "alice/volcano-gang")
    );

    // One LIST and one WATCH per kind, all GETs but the test's own POST.
    let reqs = c.emu.requests();
    let others: Vec<String> = reqs
        .iter()
        .filter(|r| r.method != "GET" && r.method != "POST")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(others.is_empty(), "{others:?}");
    let posts = reqs.iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 1, "only the test wrote");
    let gets: Vec<_> = reqs
        .iter()
        .filter(|r| r.method == "GET" && is_api(&r.path))
        .collect();
    let lists: Vec<&str> = gets
        .iter()
        .filter(|r| !is_watch(r))
        .map(|r| r.path.as_str())
        .collect();
    let watches: Vec<&str> = gets
        .iter()
        .filter(|r| is_watch(r))
        .map(|r| r.path.as_str())
        .collect();
    let kinds: BTreeSet<&str> = lists.iter().copied().collect();
    assert_eq!(lists.len(), kinds.len(), "each kind listed once: {lists:?}");
    assert_eq!(
        watches.iter().copied().collect::<BTreeSet<_>>(),
        kinds,
        "each listed kind watched"
    );
    assert_eq!(watches.len(), kinds.len(), "each watched once: {watches:?}");
    assert!(kinds.contains(JOBS), "{kinds:?}");
    assert!(
        gets.iter()
            .filter(|r| is_watch(r))
            .all(|r| r.query.contains("allowWatchBookmarks=true")),
        "watches ask for bookmarks"
    );
}

#[test]
fn after_a_forced_410_the_relist_shows_a_change_made_while_the_watch_was_broken() {
    let c = two_learners();
    let f = Following::start(&c, named());
    let first = f.graded();
    let mut job = bobs_job();
    job["metadata"]["namespace"] = json!("bob-volcano-gang");
    // Every open stream gets `410 Gone` before the Job is stored, and a watch from before it
    // is refused: only a new LIST can show it.
    c.emu.expire_watches(Some(job));
    let why = f.until("the stream's 410", |h| match h {
        Heard::Stream(StreamState::Reconnecting { kind, why, .. }) if kind.contains("jobs") => {
            Some(why.clone())
        }
        _ => None,
    });
    assert!(why.contains("too old resource version"), "{why}");
    let (changed, now) = f.regraded_with("bob/volcano-gang");
    assert!(
        changed.iter().all(|c| c == "bob/volcano-gang"),
        "{changed:?}"
    );
    assert!(score(&now, "bob/volcano-gang") > score(&first, "bob/volcano-gang"));
    let job_lists = c
        .emu
        .requests()
        .iter()
        .filter(|r| r.path == JOBS && !is_watch(r))
        .count();
    assert_eq!(job_lists, 2, "listed, then listed again after 410");
}

/// The engine reports the room before its watches are open: waits for every watch it asked for
/// to be open, so a drop meets them.
fn every_watch_open(c: &Cluster) {
    for _ in 0..3000 {
        let asked = c
            .emu
            .requests()
            .iter()
            .filter(|r| r.query.contains("watch=true"))
            .count();
        if asked > 0 && c.emu.open_watches() >= asked {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_watch_that_failed_and_resumed_says_the_room_is_followed_again_without_a_change() {
    let c = two_learners();
    let f = Following::start(&c, named());
    f.graded();
    let following = |h: &Heard| match h {
        Heard::Stream(StreamState::Watching { kinds }) => Some(*kinds),
        _ => None,
    };
    let kinds = f.until("the room followed", following);
    every_watch_open(&c);
    // The Jobs' watch ends, and its next start is refused (500, and the client's two retries):
    // the stream reconnects from where it stood, listing nothing again.
    c.emu.fault(
        Some("GET"),
        JOBS,
        false,
        crate::support::emulator::Fault::Sequence(vec![500, 500, 500]),
    );
    c.emu.drop_watches();
    f.until("the Jobs' stream lost", |h| match h {
        Heard::Stream(StreamState::Reconnecting { kind, .. }) if kind.contains("jobs") => Some(()),
        Heard::Stream(StreamState::Watching { .. }) => panic!("followed again before it was"),
        _ => None,
    });
    // Nothing changes in the room: the server answering again is what says so.
    assert_eq!(f.until("the room followed again", following), kinds);
    let mut job = bobs_job();
    job["metadata"]["namespace"] = json!("bob-volcano-gang");
    c.emu.create(BOBS_JOBS, &job);
    f.regraded_with("bob/volcano-gang");
    let reqs = c.emu.requests();
    let lists: Vec<&str> = reqs
        .iter()
        .filter(|r| r.path == JOBS && !is_watch(r))
        .map(|r| r.query.as_str())
        .collect();
    assert_eq!(
        lists
            .iter()
            .filter(|q| !q.contains("limit=1&") && !q.ends_with("limit=1"))
            .count(),
        1,
        "resumed, not listed again: {lists:?}"
    );
    assert_eq!(
        lists.len(),
        2,
        "one LIST of one object asked whether the server answers: {lists:?}"
    );
}

#[test]
fn a_kind_that_grows_past_max_objects_through_its_watch_is_answered_with_the_bound() {
    let c = two_learners();
    let unbounded = {
        let f = Following::start(&c, named());
        f.graded()
    };
    // A bound every kind of the room fits under at first, as `--max-objects 12` would be.
    let limits = trainlab::observe::limits::Limits {
        max_objects: 12,
        ..trainlab::observe::limits::Limits::default()
    };
    let f = Following::bounded(&c, named(), limits);
    assert_eq!(
        f.graded(),
        unbounded,
        "under the bound, graded as without it"
    );
    // A kind whose first list goes over a bound is answered with it from the start.
    let tight = trainlab::observe::limits::Limits {
        max_objects: 3,
        ..limits
    };
    let errors = Following::bounded(&c, named(), tight).graded_errors();
    assert!(
        errors.iter().any(|e| e.contains("more than 3 objects")),
        "{errors:?}"
    );
    // bob creates Jobs until the room holds more than twelve.
    for i in 0..12 {
        let mut job = bobs_job();
        job["metadata"]["namespace"] = json!("bob-volcano-gang");
        job["metadata"]["name"] = json!(format!("gang-{i}"));
        c.emu.create(BOBS_JOBS, &job);
    }
    let errors = f.until("the Jobs over the bound", |h| match h {
        Heard::Regraded { errors, .. } if !errors.is_empty() => Some(errors.clone()),
        _ => None,
    });
    assert!(
        errors.iter().any(|e| e.starts_with("alice/volcano-gang: ")
            && e.contains("more than 12 objects")
            && e.contains("--max-objects")),
        "alice's Job is no longer answered: the kind went over the bound: {errors:?}"
    );
}

#[test]
fn a_dropped_watch_reconnects_from_the_last_bookmark_without_a_relist() {
    let c = two_learners();
    let f = Following::start(&c, named());
    f.graded();
    every_watch_open(&c);
    let at = c.emu.resource_version();
    c.emu.bookmark();
    c.emu.drop_watches();
    // The Job is created once the Jobs are watched again: created earlier, it could still reach
    // the client through the watch being dropped (the race this test once lost under load).
    let jobs_watches = || {
        c.emu
            .requests()
            .iter()
            .filter(|r| r.path == JOBS && is_watch(r))
            .count()
    };
    for _ in 0..3000 {
        if jobs_watches() >= 2 && c.emu.open_watches() > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(jobs_watches() >= 2, "the Jobs were never watched again");
    let mut job = bobs_job();
    job["metadata"]["namespace"] = json!("bob-volcano-gang");
    c.emu.create(BOBS_JOBS, &job);
    let (changed, _) = f.regraded_with("bob/volcano-gang");
    assert!(
        changed.iter().all(|c| c == "bob/volcano-gang"),
        "{changed:?}"
    );
    let reqs = c.emu.requests();
    let jobs: Vec<&str> = reqs
        .iter()
        .filter(|r| r.path == JOBS)
        .map(|r| r.query.as_str())
        .collect();
    assert_eq!(
        jobs.iter().filter(|q| !q.contains("watch=")).count(),
        1,
        "no relist: {jobs:?}"
    );
    let rewatch = jobs.iter().filter(|q| q.contains("watch=")).nth(1);
    assert!(
        rewatch.is_some_and(|q| q.contains(&format!("resourceVersion={at}"))),
        "re-watched from the bookmark's resourceVersion {at}: {jobs:?}"
    );
}

#[test]
fn a_new_labelled_namespace_adds_a_learner_and_only_their_cells_are_judged() {
    let label = json!({"trainlab.dev/workshop": "w1"});
    let c = alice_labelled(&label);
    let f = Following::start(
        &c,
        Learners::FromNamespaces("trainlab.dev/workshop=w1".into()),
    );
    let first = f.graded();
    assert_eq!(first.len(), 1, "{first:?}");
    c.emu
        .create("/api/v1/namespaces", &namespace("bob-volcano-gang", label));
    let (changed, now) = f.regraded_with("bob/volcano-gang");
    assert_eq!(changed, ["bob/volcano-gang"]);
    let cells: Vec<&str> = now.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(cells, ["alice/volcano-gang", "bob/volcano-gang"]);
}

#[test]
fn a_kind_forbidden_cluster_wide_is_watched_in_every_labelled_learners_namespace_new_ones_too() {
    let label = json!({"trainlab.dev/workshop": "w1"});
    let c = alice_labelled(&label);
    // The grader may read Volcano Jobs in namespaces, not cluster-wide (a namespaced RBAC).
    c.emu.fault(
        Some("GET"),
        JOBS,
        false,
        crate::support::emulator::Fault::Status(
            403,
            "jobs.batch.volcano.sh is forbidden: cannot list resource \"jobs\" at the cluster scope"
                .into(),
        ),
    );
    let f = Following::start(
        &c,
        Learners::FromNamespaces("trainlab.dev/workshop=w1".into()),
    );
    let first = f.graded();
    assert!(
        score(&first, "alice/volcano-gang") > 0,
        "alice's Job, read in her namespace: {first:?}"
    );
    // bob arrives: his namespace is labelled, then his Job is created.
    c.emu
        .create("/api/v1/namespaces", &namespace("bob-volcano-gang", label));
    let mut job = bobs_job();
    job["metadata"]["namespace"] = json!("bob-volcano-gang");
    c.emu.create(BOBS_JOBS, &job);
    f.until("bob's Job judged", |h| match h {
        Heard::Regraded { passed, .. } => passed
            .iter()
            .any(|(cell, n)| cell == "bob/volcano-gang" && *n > 0)
            .then_some(()),
        _ => None,
    });
    let reqs = c.emu.requests();
    for learner in ["alice", "bob"] {
        let path =
            format!("/apis/batch.volcano.sh/v1alpha1/namespaces/{learner}-volcano-gang/jobs");
        assert!(
            reqs.iter().any(|r| r.path == path && is_watch(r)),
            "{learner}'s namespace watched"
        );
    }
}

#[test]
fn a_kind_whose_first_list_fails_is_graded_without_it_and_again_once_it_lists() {
    let c = two_learners();
    // The first LIST of Volcano Jobs fails (each of the client's three attempts); the next one
    // succeeds.
    c.emu.fault(
        Some("GET"),
        JOBS,
        false,
        crate::support::emulator::Fault::Sequence(vec![500, 500, 500]),
    );
    let f = Following::start(&c, named());
    let first = f.graded();
    let (changed, now) = f.regraded_with("alice/volcano-gang");
    assert!(
        changed.iter().all(|c| c.ends_with("/volcano-gang")),
        "{changed:?}"
    );
    assert!(
        score(&now, "alice/volcano-gang") > score(&first, "alice/volcano-gang"),
        "judged without the Jobs first, with them once listed: {first:?} → {now:?}"
    );
}
