//! `trainlab grade` against the Kubernetes API emulator (tests/support/emulator/): a shared
//! cluster costs one LIST per kind plus discovery whatever the number of learners, grades each
//! learner exactly as `check` grades one, falls back per namespace where RBAC forbids a
//! cluster-wide read, finds learners from labelled namespaces; one cluster per learner keeps
//! going when one cluster fails; every output format; `--watch` rewrites the page; and grading
//! never writes.

use crate::room;
use crate::support::{emulator, live};

use std::collections::{BTreeMap, BTreeSet};

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use emulator::{Emulator, Fault, Recorded};
use serde_json::{json, Value};

use live::{json_of, output as run, Cluster, ALL_CRDS};

/// An emulator serving `seed` and every lab's CRD groups, with a kubeconfig.
fn cluster(seed: Vec<Value>) -> Cluster {
    Cluster::start(seed, &ALL_CRDS)
}

fn serve_crds(emu: &Emulator) {
    live::serve(emu, &ALL_CRDS);
}

fn is_discovery(path: &str) -> bool {
    live::is_version_or_discovery(path)
}

/// The paths of LISTs (GETs on a collection, not watches), in order.
fn lists(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .filter(|r| r.method == "GET" && !is_discovery(&r.path))
        .filter(|r| {
            !r.query
                .split('&')
                .any(|p| p == "watch=true" || p == "watch=1")
        })
        .filter(|r| {
            let segs: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
            let rest = match segs.as_slice() {
                ["api", _, rest @ ..] => rest,
                ["apis", _, _, rest @ ..] => rest,
                _ => return false,
            };
            matches!(rest, [_] | ["namespaces", _, _])
        })
        .map(|r| r.path.clone())
        .collect()
}

fn writes(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// `learner → lab → (mark, percent)` from `grade -o json`.
fn marks(board: &Value) -> BTreeMap<String, BTreeMap<String, (String, Option<f64>)>> {
    board["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let cells = r["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["lab"].as_str().unwrap().to_string(),
                        (
                            c["mark"].as_str().unwrap().to_string(),
                            c["score"]["percent"].as_f64(),
                        ),
                    )
                })
                .collect();
            (r["id"].as_str().unwrap().to_string(), cells)
        })
        .collect()
}

/// `lab → [(check, status)]` of one learner's cells.
fn outcomes_of(board: &Value, learner: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let row = board["learners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == learner)
        .unwrap_or_else(|| panic!("no learner {learner}"));
    row["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let o = c["report"]["outcomes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["check"].as_str().unwrap().to_string(),
                        o["status"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            (c["lab"].as_str().unwrap().to_string(), o)
        })
        .collect()
}

/// The reason of one outcome of a learner's cell.
fn reason_of(board: &Value, learner: &str, lab: &str, check: &str) -> String {
    board["learners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == learner)
        .and_then(|r| {
            r["cells"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["lab"] == lab)
        })
        .and_then(|c| {
            c["report"]["outcomes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["check"] == check)
        })
        .and_then(|o| o["reason"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The same from `check -o json` (several labs).
fn check_outcomes(report: &Value) -> BTreeMap<String, Vec<(String, String)>> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let o = r["outcomes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["check"].as_str().unwrap().to_string(),
                        o["status"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            (r["lab"]["id"].as_str().unwrap().to_string(), o)
        })
        .collect()
}

fn labs() -> Vec<&'static str> {
    room::gradable()
}

// --- a shared cluster ------------------------------------------------------------------------

#[test]
fn a_shared_room_grades_every_learner_like_check_and_costs_one_list_per_kind() {
    let labs = labs();
    let half: Vec<&str> = labs.iter().step_by(2).copied().collect();
    let c = cluster(room::room(&[
        ("alice", &labs),
        ("bob", &[]),
        ("carol", &half),
    ]));
    let (code, stdout, stderr) = c.run(&[
        "grade",
        "--learners",
        "alice,bob,carol",
        "--request-timeout",
        "5s",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let board = json_of(&stdout);
    assert_eq!(board["schema_version"], 1);
    let reqs = c.emu.requests();
    assert!(writes(&reqs).is_empty(), "grade wrote: {:?}", writes(&reqs));

    // One LIST per kind, all cluster-wide; discovery once per group/version.
    let lists = lists(&reqs);
    let distinct: BTreeSet<&String> = lists.iter().collect();
    assert_eq!(
        lists.len(),
        distinct.len(),
        "each kind listed once: {lists:#?}"
    );
    assert!(
        lists.iter().all(|p| !p.contains("/namespaces/")),
        "cluster-wide reads only: {lists:#?}"
    );
    let discovery: Vec<&str> = reqs
        .iter()
        .map(|r| r.path.as_str())
        .filter(|p| is_discovery(p))
        .collect();
    let distinct_discovery: BTreeSet<&&str> = discovery.iter().collect();
    assert_eq!(discovery.len(), distinct_discovery.len(), "{discovery:?}");
    assert_eq!(
        reqs.len(),
        lists.len() + discovery.len(),
        "nothing but LISTs and discovery: {reqs:#?}"
    );
    // The kinds are exactly what the labs read, plus Nodes and the controllers' Deployments.
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    for v in trainlab::labs::VERIFIERS {
        if labs.contains(&v.lab_id()) {
            for r in v.reads() {
                kinds.insert(r.kind.resource_name());
            }
        }
    }
    kinds.insert("nodes".into());
    kinds.insert("deployments.apps".into());
    // The emulated cluster is not EKS Auto Mode: discovery says its NodeClass is not served,
    // so nothing lists it.
    kinds.remove("nodeclasses.eks.amazonaws.com");
    // Nor does it run Kubeflow Trainer v2: no TrainJobs, runtimes or JobSets are listed.
    for k in [
        "trainjobs.trainer.kubeflow.org",
        "trainingruntimes.trainer.kubeflow.org",
        "clustertrainingruntimes.trainer.kubeflow.org",
        "jobsets.jobset.x-k8s.io",
    ] {
        assert!(
            kinds.remove(k),
            "{k} is read by the labs that accept a TrainJob"
        );
    }
    // Room grading never reads Secrets (the grader's role has no permission on them).
    let reads_secrets = kinds.remove("secrets");
    assert!(
        reqs.iter().all(|r| !r.path.ends_with("/secrets")),
        "a Secret was read"
    );
    assert_eq!(lists.len(), kinds.len(), "{lists:#?} for {kinds:?}");

    // alice solved everything: her room grade is exactly `check` on her own cluster.
    let own = cluster({
        let mut s = room::cluster_base();
        for lab in &labs {
            s.extend(room::load(&format!("{lab}/solution-state")));
        }
        s
    });
    let (code, stdout, stderr) =
        own.run(&["check", "--all", "--request-timeout", "5s", "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let alone = check_outcomes(&json_of(&stdout));
    let mine = outcomes_of(&board, "alice");
    assert_eq!(
        mine.keys().collect::<Vec<_>>(),
        alone.keys().collect::<Vec<_>>()
    );
    let mut withheld = Vec::new();
    for (lab, outcomes) in &mine {
        assert_eq!(outcomes.len(), alone[lab].len(), "{lab}");
        for ((check, status), (check2, status2)) in outcomes.iter().zip(&alone[lab]) {
            assert_eq!(check, check2);
            // A check that needs a Secret is skipped in the room, saying why.
            if status == "skipped" && status2 != "skipped" {
                let reason = reason_of(&board, "alice", lab, check);
                assert!(
                    reason.starts_with(
                        "workshop grading reads no Secrets: RBAC cannot grant metadata-only reads"
                    ),
                    "{lab}/{check}: {reason}"
                );
                withheld.push(format!("{lab}/{check}"));
                continue;
            }
            assert_eq!(status, status2, "{lab}/{check}");
        }
    }
    assert_eq!(!withheld.is_empty(), reads_secrets, "{withheld:?}");
    for w in &withheld {
        let notes = board["notes"].to_string();
        assert!(
            notes.contains("Secrets are not read") && notes.contains(w.as_str()),
            "{notes}"
        );
    }

    let m = marks(&board);
    assert_eq!(m.keys().collect::<Vec<_>>(), ["alice", "bob", "carol"]);
    for lab in &labs {
        assert_eq!(m["alice"][*lab].0, "done", "alice {lab}");
        assert_eq!(m["bob"][*lab].0, "not-started", "bob {lab}");
        let want = if half.contains(lab) {
            "done"
        } else {
            "not-started"
        };
        assert_eq!(m["carol"][*lab].0, want, "carol {lab}");
    }
    // Namespaces and prefixes follow the template.
    let cell = &board["learners"][0]["cells"][0];
    assert_eq!(cell["id"], format!("alice/{}", labs[0]));
    assert_eq!(
        cell["report"]["target"]["namespace"],
        format!("alice-{}", labs[0])
    );
    assert_eq!(cell["report"]["target"]["name_prefix"], "alice-");
    assert_eq!(cell["report"]["target"]["learner"], "alice");
}

#[test]
fn the_request_count_does_not_grow_with_the_number_of_learners() {
    let labs = labs();
    let count = |n: usize| {
        let names: Vec<String> = (0..n).map(|i| format!("l{i:02}")).collect();
        let solved: Vec<(&str, &[&str])> = names.iter().map(|s| (s.as_str(), &labs[..])).collect();
        let c = cluster(room::room(&solved));
        let (code, stdout, stderr) = c.run(&[
            "grade",
            "--learners",
            &names.join(","),
            "--request-timeout",
            "5s",
            "-o",
            "json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let m = marks(&json_of(&stdout));
        assert_eq!(m.len(), n);
        for (l, cells) in &m {
            for (lab, (mark, _)) in cells {
                assert_eq!(mark, "done", "{l} {lab}");
            }
        }
        let reqs = c.emu.requests();
        assert!(writes(&reqs).is_empty());
        reqs.len()
    };
    let one = count(1);
    // 20 learners keep every LIST on one page (500 items; each learner brings ~24 pods).
    let many = count(20);
    assert_eq!(one, many, "20 learners cost what 1 costs");
}

#[test]
fn a_kind_forbidden_cluster_wide_is_read_per_namespace_and_the_room_says_so() {
    let labs = labs();
    let seed = room::room(&[("alice", &labs), ("bob", &labs[..1])]);
    let open = cluster(seed.clone());
    let (code, stdout, _) = open.run(&["grade", "--learners", "alice,bob", "-o", "json"]);
    assert_eq!(code, 0);
    let unrestricted = json_of(&stdout);

    let c = cluster(seed);
    // Pods may be listed only namespace by namespace (RBAC with RoleBindings per namespace).
    c.emu.fault(
        Some("GET"),
        "/api/v1/pods",
        false,
        Fault::Status(403, "pods is forbidden: User \"grader\" cannot list resource \"pods\" in API group \"\" at the cluster scope".into()),
    );
    let (code, stdout, stderr) = c.run(&["grade", "--learners", "alice,bob", "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let board = json_of(&stdout);
    assert_eq!(marks(&board), marks(&unrestricted), "the same grades");
    for l in ["alice", "bob"] {
        assert_eq!(outcomes_of(&board, l), outcomes_of(&unrestricted, l));
    }
    let notes: Vec<&str> = board["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(
            |n| n.starts_with("pods: listing them cluster-wide is forbidden")
                && n.contains("namespace by namespace")
        ),
        "{notes:?}"
    );
    let lists = lists(&c.emu.requests());
    let pod_reads: Vec<&String> = lists.iter().filter(|p| p.ends_with("/pods")).collect();
    let pod_labs = trainlab::labs::VERIFIERS
        .iter()
        .filter(|v| labs.contains(&v.lab_id()))
        .filter(|v| v.reads().iter().any(|r| r.kind.plural == "pods"))
        .count();
    // One refused cluster-wide LIST, then one per learner namespace that reads pods.
    assert_eq!(pod_reads.len(), 1 + 2 * pod_labs, "{pod_reads:#?}");
    assert!(pod_reads.contains(&&format!(
        "/api/v1/namespaces/alice-{}/pods",
        "volcano-gang"
    )));

    // The table says it too.
    let (_, table, _) = c.run(&["grade", "--learners", "alice,bob"]);
    assert!(table.contains("namespace by namespace"), "{table}");
}

fn label_namespace(seed: &mut [Value], name: &str, key: &str, value: &str) {
    let ns = seed
        .iter_mut()
        .find(|o| o["kind"] == "Namespace" && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("namespace {name} in the seed"));
    ns["metadata"]["labels"][key] = json!(value);
}

#[test]
fn learners_are_found_from_labelled_namespaces_through_the_template() {
    let labs = labs();
    let mut seed = room::room(&[("alice", &labs), ("bob", &labs), ("carol", &labs[..2])]);
    for (l, lab) in [("alice", labs[0]), ("carol", labs[1])] {
        label_namespace(
            &mut seed,
            &format!("{l}-{lab}"),
            "trainlab.dev/workshop",
            "w1",
        );
    }
    // bob's namespaces carry another workshop's label.
    label_namespace(
        &mut seed,
        &format!("bob-{}", labs[0]),
        "trainlab.dev/workshop",
        "w2",
    );
    let c = cluster(seed);
    let (code, stdout, stderr) = c.run(&[
        "grade",
        "--learners-from-namespaces",
        "trainlab.dev/workshop=w1",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let m = marks(&json_of(&stdout));
    assert_eq!(m.keys().collect::<Vec<_>>(), ["alice", "carol"]);
    assert_eq!(m["alice"][labs[0]].0, "done");
    let reqs = c.emu.requests();
    let ns_lists: Vec<&Recorded> = reqs
        .iter()
        .filter(|r| r.path == "/api/v1/namespaces")
        .collect();
    assert_eq!(ns_lists.len(), 1, "one namespaces LIST");
    assert!(
        ns_lists[0]
            .query
            .contains("labelSelector=trainlab.dev%2Fworkshop%3Dw1")
            || ns_lists[0]
                .query
                .contains("labelSelector=trainlab.dev/workshop%3Dw1"),
        "{}",
        ns_lists[0].query
    );
    assert!(writes(&reqs).is_empty());

    // Nobody matches: an error that says what to do, exit 3.
    let (code, _, stderr) = c.run(&[
        "grade",
        "--learners-from-namespaces",
        "trainlab.dev/workshop=none",
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("kubectl label namespace"), "{stderr}");
}

// --- one cluster per learner --------------------------------------------------------------------

/// A kubeconfig with one context per (name, server URL).
fn kubeconfig(dir: &Path, contexts: &[(&str, String)]) -> PathBuf {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": contexts.iter().map(|(n, url)| json!({"name": n, "cluster": {"server": url}})).collect::<Vec<_>>(),
        "users": contexts.iter().map(|(n, _)| json!({"name": n, "user": {}})).collect::<Vec<_>>(),
        "contexts": contexts.iter().map(|(n, _)| json!({"name": n, "context": {"cluster": n, "user": n}})).collect::<Vec<_>>(),
        "current-context": contexts[0].0,
    });
    let path = dir.join("kubeconfig");
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    path
}

#[test]
fn one_cluster_per_learner_grades_each_and_a_failing_cluster_stops_no_other() {
    let labs = labs();
    let mut solved = room::cluster_base();
    for lab in &labs {
        solved.extend(room::load(&format!("{lab}/solution-state")));
    }
    let alice = Emulator::start(solved);
    serve_crds(&alice);
    let bob = Emulator::start(room::cluster_base());
    serve_crds(&bob);
    // A port nothing listens on: bind, note, close.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(
        dir.path(),
        &[
            ("kind-alice", alice.url()),
            ("kind-dead", dead),
            ("kind-bob", bob.url()),
        ],
    );
    let mut cmd = Command::cargo_bin("trainlab").unwrap();
    cmd.env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", &kc)
        .env("TRAINLAB_CACHE_DIR", crate::support::cache_beside(&kc))
        .timeout(Duration::from_secs(120))
        .args([
            "grade",
            "--contexts",
            "kind-alice,kind-dead,kind-bob",
            "--concurrency",
            "2",
            "--request-timeout",
            "3s",
            "-o",
            "json",
        ]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(
        code, 3,
        "an unreachable cluster is an environment error: {stderr}"
    );
    let board = json_of(&stdout);
    let rows = board["learners"].as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["kind-alice", "kind-dead", "kind-bob"],
        "the order given"
    );
    let m = marks(&board);
    for lab in &labs {
        assert_eq!(m["kind-alice"][*lab].0, "done", "alice {lab}");
        assert_eq!(m["kind-bob"][*lab].0, "not-started", "bob {lab}");
        assert_eq!(m["kind-dead"][*lab].0, "error");
    }
    let dead_row = &rows[1];
    assert!(
        dead_row["error"]
            .as_str()
            .unwrap()
            .contains("cannot reach the API server"),
        "{dead_row}"
    );
    // Each learner's labs live in the lab's usual namespace of their own cluster.
    assert_eq!(
        rows[0]["cells"][0]["report"]["target"]["namespace"],
        format!("trainlab-{}", labs[0])
    );
    for emu in [&alice, &bob] {
        let reqs = emu.requests();
        assert!(!lists(&reqs).is_empty(), "each cluster was read");
        assert!(writes(&reqs).is_empty(), "{:?}", writes(&reqs));
    }

    // JUnit: a testsuite per learner × lab; the dead cluster's are errors.
    let mut cmd = Command::cargo_bin("trainlab").unwrap();
    cmd.env("KUBECONFIG", &kc)
        .env("TRAINLAB_CACHE_DIR", crate::support::cache_beside(&kc))
        .timeout(Duration::from_secs(120))
        .args([
            "grade",
            "--contexts",
            "kind-alice,kind-dead",
            "--request-timeout",
            "3s",
            "-o",
            "junit",
        ]);
    let (_, xml, _) = run(cmd);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 2 * labs.len());
    let dead_suite = suites
        .iter()
        .find(|s| s.attribute("name") == Some(&format!("kind-dead/{}", labs[0])[..]))
        .unwrap();
    assert!(dead_suite.descendants().any(|n| n.has_tag_name("error")));
}

// --- outputs -----------------------------------------------------------------------------------

#[test]
fn table_csv_and_junit_show_the_same_room() {
    let labs = labs();
    let c = cluster(room::room(&[("alice", &labs), ("bob", &labs[..1])]));
    let (code, json_out, _) = c.run(&["grade", "--learners", "alice,bob", "-o", "json"]);
    assert_eq!(code, 0);
    let m = marks(&json_of(&json_out));

    let (code, table, _) = c.run(&["grade", "--learners", "alice,bob"]);
    assert_eq!(code, 0);
    let alice_line = table.lines().find(|l| l.contains("alice")).unwrap();
    assert_eq!(alice_line.matches("✔ 100%").count(), labs.len(), "{table}");
    let bob_line = table.lines().find(|l| l.contains(" bob ")).unwrap();
    assert_eq!(bob_line.matches("✔ 100%").count(), 1, "{table}");
    assert!(table.contains("legend: ✔ done"), "{table}");
    assert!(table.contains("room: "), "{table}");

    let (code, csv_out, _) = c.run(&["grade", "--learners", "alice,bob", "-o", "csv"]);
    assert_eq!(code, 0);
    let mut rd = csv::Reader::from_reader(csv_out.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header, trainlab::report::csv::COLUMNS);
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * labs.len());
    for r in &rows {
        let (mark, pct) = &m[&r[0]][&r[2]];
        assert_eq!(&r[5], mark);
        assert_eq!(r[6].parse::<f64>().ok(), *pct);
        assert_eq!(&r[4], &format!("{}/{}", &r[0], &r[2]));
    }

    let (code, xml, _) = c.run(&["grade", "--learners", "alice,bob", "-o", "junit"]);
    assert_eq!(code, 0);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| n.attribute("name").unwrap().to_string())
        .collect();
    let want: Vec<String> = ["alice", "bob"]
        .iter()
        .flat_map(|l| labs.iter().map(move |lab| format!("{l}/{lab}")))
        .collect();
    assert_eq!(suites, want);
    assert!(writes(&c.emu.requests()).is_empty());
}

#[test]
fn the_demo_room_needs_no_cluster_and_keeps_stable_ids() {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("LANG", "C.UTF-8")
        .env("KUBECONFIG", "/nonexistent")
        .args(["grade", "--demo", "-o", "json"]);
    let (code, a, stderr) = run(c);
    assert_eq!(code, 0, "{stderr}");
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("KUBECONFIG", "/nonexistent")
        .args(["grade", "--demo", "-o", "json"]);
    let (_, b, _) = run(c);
    let (mut a, mut b) = (json_of(&a), json_of(&b));
    a["graded_at"] = Value::Null;
    b["graded_at"] = Value::Null;
    assert_eq!(a, b, "the same room, the same document");
    let rows = a["learners"].as_array().unwrap();
    assert_eq!(rows.len(), trainlab::grade::DEMO_LEARNERS.len());
    assert_eq!(a["source"]["kind"], "demo");
    for r in rows {
        for cell in r["cells"].as_array().unwrap() {
            assert_eq!(
                cell["id"],
                format!(
                    "{}/{}",
                    r["id"].as_str().unwrap(),
                    cell["lab"].as_str().unwrap()
                )
            );
        }
    }
}

/// Issue 21 item 20: a demo learner's state in a lab depends on the lab, never on the other labs
/// graded with it, so each cell of a few labs equals that cell in the whole room.
#[test]
fn the_demo_room_is_the_same_learners_in_the_same_states_whatever_labs_are_chosen() {
    let cells = |labs: &[&str]| -> Vec<(String, Value)> {
        let mut c = Command::cargo_bin("trainlab").unwrap();
        c.env("KUBECONFIG", "/nonexistent")
            .args(["grade", "--demo", "-o", "json"])
            .args(labs);
        let (_, out, stderr) = run(c);
        let doc = json_of(&out);
        assert!(doc["learners"].is_array(), "{stderr}");
        doc["learners"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["cells"].as_array().unwrap().clone())
            .map(|cell| {
                (
                    cell["id"].as_str().unwrap().to_string(),
                    cell["score"].clone(),
                )
            })
            .collect()
    };
    let whole = cells(&[]);
    // Labs 2, 10 and 11 without lab 1: their TrainJobs' runtime is in lab 1's demo file.
    for pick in [&["9"][..], &["14", "2"], &["15", "13", "11"], &["10"]] {
        let some = cells(pick);
        assert!(!some.is_empty());
        for (id, score) in &some {
            let same = whole.iter().find(|(w, _)| w == id).map(|(_, s)| s);
            assert_eq!(same, Some(score), "{id} with labs {pick:?}");
        }
    }
}

#[test]
fn bad_input_is_exit_2_with_what_to_do() {
    let c = cluster(room::cluster_base());
    for (args, says) in [
        (&["grade", "--learners", "Alice"][..], "lowercase"),
        (
            &["grade", "no-such-lab", "--learners", "a"][..],
            "no-such-lab",
        ),
        (
            &["grade", "--learners", "a", "--watch", "-o", "json"][..],
            "--watch",
        ),
        (
            &[
                "grade",
                "--learners",
                "a",
                "--html",
                "no/such/dir/room.html",
            ][..],
            "does not exist",
        ),
        (
            &["grade", "--learners", "a", "--namespace-template", "{lab}"][..],
            "{learner}",
        ),
        (&["grade", "--demo", "--watch"][..], "demo"),
        (&["grade"][..], "--learners"),
    ] {
        let (code, _, stderr) = c.run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(c.emu.requests().is_empty(), "bad input reads nothing");
}

// --- --watch -------------------------------------------------------------------------------------

fn mark_in_page(page: &str, cell: &str) -> Option<String> {
    let at = page.find(&format!("data-cell=\"{cell}\""))?;
    let rest = &page[at..];
    let m = rest.find("data-mark=\"")? + "data-mark=\"".len();
    Some(rest[m..].split('"').next()?.to_string())
}

#[test]
fn watch_regrades_and_rewrites_the_page_until_ctrl_c() {
    let c = cluster(room::room(&[("alice", &["volcano-gang"]), ("bob", &[])]));
    let page = c.dir.path().join("room.html");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("trainlab"))
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", &c.kubeconfig)
        .env(
            "TRAINLAB_CACHE_DIR",
            crate::support::cache_beside(&c.kubeconfig),
        )
        .args([
            "grade",
            "volcano-gang",
            "--learners",
            "alice,bob",
            "--watch",
            "--interval",
            "1s",
            "--html",
        ])
        .arg(&page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the page shows it, or trainlab stopped without showing it (no clock: a page that
    // never comes hangs the test, which cargo test names after 60 s).
    let wait_for = |child: &mut std::process::Child, what: &str, f: &dyn Fn(&str) -> bool| loop {
        // The page is replaced whole: whenever it exists it is a complete page.
        if let Ok(text) = std::fs::read_to_string(&page) {
            assert!(text.trim_end().ends_with("</html>"), "a torn page");
            if f(&text) {
                return text;
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("trainlab stopped ({status}) before {what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let first = wait_for(&mut child, "the first page", &|t| {
        t.contains("data-cell=\"bob/volcano-gang\"")
    });
    assert_eq!(
        mark_in_page(&first, "alice/volcano-gang").as_deref(),
        Some("done")
    );
    assert_eq!(
        mark_in_page(&first, "bob/volcano-gang").as_deref(),
        Some("not-started")
    );

    // bob starts: his namespace and a Volcano Job appear.
    c.emu.create(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bob-volcano-gang"}}),
    );
    let job = room::as_created("bob", "volcano-gang", "solution-state", "Job");
    c.emu.create(
        "/apis/batch.volcano.sh/v1alpha1/namespaces/bob-volcano-gang/jobs",
        &job,
    );
    let later = wait_for(&mut child, "bob's new grade", &|t| {
        mark_in_page(t, "bob/volcano-gang").is_some_and(|m| m != "not-started")
    });
    assert_eq!(
        mark_in_page(&later, "alice/volcano-gang").as_deref(),
        Some("done")
    );

    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Waits for the exit itself: were Ctrl-C ignored, this test would hang, and cargo test
    // names a test that runs for over 60 s.
    let out = child.wait_with_output().unwrap();
    let status = out.status;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(status.code(), Some(0), "{stdout}");
    assert!(stdout.matches("legend:").count() >= 2, "redrawn: {stdout}");
    // No temporary file left beside the page.
    let names: Vec<String> = std::fs::read_dir(c.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    // Only the two test POSTs wrote; grade itself never did.
    let reqs = c.emu.requests();
    let w = writes(&reqs);
    assert_eq!(w.len(), 2, "{w:?}");
    // Followed through watches, not rounds: each kind was listed once and watched once, however
    // many --interval seconds passed.
    let listed = lists(&reqs);
    let kinds: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(listed.len(), kinds.len(), "a kind listed again: {listed:?}");
    let watched: Vec<&String> = reqs
        .iter()
        .filter(|r| r.query.split('&').any(|p| p == "watch=true"))
        .map(|r| &r.path)
        .collect();
    assert_eq!(watched.len(), kinds.len(), "{watched:?} for {kinds:?}");
    assert_eq!(watched.into_iter().collect::<BTreeSet<_>>(), kinds);
}

// --- --html over an existing file ------------------------------------------------------------

fn demo_page(page: &std::path::Path) -> (i32, String) {
    let out = Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .args(["grade", "--demo", "--html"])
        .arg(page)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn html_over_a_private_file_keeps_it_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("room.html");
    std::fs::write(&page, "old").unwrap();
    std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (code, stderr) = demo_page(&page);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read_to_string(&page).unwrap().contains("</html>"));
    let mode = std::fs::metadata(&page).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "not made world-readable");
}

#[test]
fn html_refuses_a_read_only_file_and_leaves_it_alone() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("room.html");
    std::fs::write(&page, "keep me").unwrap();
    std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o444)).unwrap();
    let (code, stderr) = demo_page(&page);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("read-only (mode 0444)"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "keep me");
}

#[test]
fn html_over_someone_elses_file_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt as _;
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("room.html");
    std::fs::write(&page, "theirs").unwrap();
    // Only root can give a file to another user to set this up; elsewhere the file is ours and
    // the test shows the owner is unchanged all the same.
    let _ = std::os::unix::fs::chown(&page, Some(65534), Some(65534));
    let before = std::fs::metadata(&page).unwrap();
    let (code, stderr) = demo_page(&page);
    assert_eq!(code, 0, "{stderr}");
    let after = std::fs::metadata(&page).unwrap();
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert!(std::fs::read_to_string(&page).unwrap().contains("</html>"));
}

// --- --watch: a floor on the interval, Ctrl-C at any time ----------------------------------------

#[test]
fn watch_refuses_an_interval_below_one_second_before_reading_anything() {
    let c = cluster(room::room(&[("alice", &["volcano-gang"])]));
    for interval in ["0s", "1ms", "10ms", "999ms"] {
        let (code, _, stderr) = c.run(&[
            "grade",
            "--learners",
            "alice",
            "--watch",
            "--interval",
            interval,
        ]);
        assert_eq!(code, 2, "{interval}: {stderr}");
        assert!(stderr.contains("at least 1s between rounds"), "{stderr}");
    }
    assert!(c.emu.requests().is_empty(), "bad input reads nothing");
}

fn a_signal_during_a_round_that_never_ends_stops_watch(signal: &str) {
    let c = cluster(room::room(&[("alice", &["volcano-gang"])]));
    // Every LIST is held far longer than the test would wait.
    c.emu.fault(
        Some("GET"),
        "/api",
        false,
        Fault::Latency(Duration::from_secs(3600)),
    );
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("trainlab"))
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", &c.kubeconfig)
        .env(
            "TRAINLAB_CACHE_DIR",
            crate::support::cache_beside(&c.kubeconfig),
        )
        .args([
            "grade",
            "volcano-gang",
            "--learners",
            "alice",
            "--watch",
            "--request-timeout",
            "3600s",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the round is under way (its first request is held).
    while c.emu.requests().is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "trainlab stopped early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    // Ends on its own (a hang is named by cargo test's slow-test notice, no clock here).
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("interrupted (Ctrl-C) before the first round finished"),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_during_a_round_that_never_ends_stops_watch() {
    a_signal_during_a_round_that_never_ends_stops_watch("-INT");
}

#[test]
fn sigterm_during_a_round_that_never_ends_stops_watch_the_same_way() {
    a_signal_during_a_round_that_never_ends_stops_watch("-TERM");
}
