//! Grading in one round trip (issue 24 §1), pinned on what the API emulator records: `/version`
//! goes out beside the reads, discovery is one request per root (aggregated discovery) or comes
//! from the disk cache of the last run, and several labs' reads of one kind are one cluster-wide
//! LIST. Nothing here measures time: concurrency is shown with a gate that holds requests until
//! all of them are in flight (a client that waited for one answer before the next request would
//! never get past it), and `cargo bench --bench grade` prints the timelines.

use crate::support::emulator::{Emulator, Fault, Recorded};
use crate::support::live::{self, is_discovery, Cluster, LAB_CRDS};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// An emulator with the kind nodes, the operators `setup kind` installs, the solution state of
/// `labs` and the CRD groups the kind profile serves; a kubeconfig for it and a discovery
/// cache folder of its own.
fn cluster(labs: &[&str]) -> Cluster {
    let mut paths = vec![data("kind-nodes"), data("kind-operators")];
    paths.extend(
        labs.iter()
            .map(|lab| data(&format!("{lab}/solution-state"))),
    );
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let emu = Emulator::start_from(&refs);
    live::serve(&emu, &LAB_CRDS);
    Cluster::on(emu)
}

/// What these tests ask of a cluster beyond the shared harness: its cache and `check -o json`.
trait RoundTrip {
    fn cache(&self) -> PathBuf;
    fn cache_file(&self) -> PathBuf;
    fn check_code(&self, args: &[&str]) -> (i32, Value, Vec<Recorded>);
    fn check(&self, args: &[&str]) -> (Value, Vec<Recorded>);
}

impl RoundTrip for Cluster {
    fn cache(&self) -> PathBuf {
        crate::support::cache_beside(&self.kubeconfig)
    }

    fn cache_file(&self) -> PathBuf {
        let server = self.emu.url().replace("http://", "").replace(':', "_");
        self.cache()
            .join("discovery")
            .join(server)
            .join("resources.json")
    }

    /// `check ARGS -o json`: the exit code, the report and the requests it sent.
    fn check_code(&self, args: &[&str]) -> (i32, Value, Vec<Recorded>) {
        self.emu.clear_requests();
        let mut full = vec!["check"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--request-timeout", "5s", "-o", "json"]);
        let (code, stdout, stderr) = self.run(&full);
        let report = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{full:?} exited {code}, {e}:\n{stdout}\n{stderr}"));
        (code, report, self.emu.requests())
    }

    /// [`RoundTrip::check_code`] that must exit 0.
    fn check(&self, args: &[&str]) -> (Value, Vec<Recorded>) {
        let (code, report, reqs) = self.check_code(args);
        assert_eq!(code, 0, "{args:?}: {report}");
        (report, reqs)
    }
}

fn paths(reqs: &[Recorded], keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = reqs
        .iter()
        .map(|r| r.path.clone())
        .filter(|p| keep(p))
        .collect();
    out.sort();
    out
}

fn discovery(reqs: &[Recorded]) -> Vec<String> {
    paths(reqs, is_discovery)
}

/// The LISTs: everything that is neither discovery nor `/version`.
fn lists(reqs: &[Recorded]) -> Vec<String> {
    paths(reqs, |p| !is_discovery(p) && p != "/version")
}

/// lab → [(check, status)] of a `check -o json` report (one lab or several).
fn outcomes(report: &Value) -> BTreeMap<String, Vec<(String, String)>> {
    let results = match report["results"].as_array() {
        Some(r) => r.clone(),
        None => vec![report.clone()],
    };
    results
        .iter()
        .map(|r| {
            let checks = r["outcomes"]
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
            (r["lab"]["id"].as_str().unwrap().to_string(), checks)
        })
        .collect()
}

fn all_pass(report: &Value) {
    for (lab, checks) in outcomes(report) {
        for (check, status) in checks {
            assert_eq!(status, "pass", "{lab}/{check}");
        }
    }
}

/// What `check efa-nccl` reads: its Job (or MPIJob), pods and ConfigMaps, the nodes, and the
/// NodePools that may launch more.
const EFA_LISTS: [&str; 6] = [
    "/api/v1/namespaces/trainlab-efa-nccl/configmaps",
    "/api/v1/namespaces/trainlab-efa-nccl/pods",
    "/api/v1/nodes",
    "/apis/batch/v1/namespaces/trainlab-efa-nccl/jobs",
    "/apis/karpenter.sh/v1/nodepools",
    "/apis/kubeflow.org/v2beta1/namespaces/trainlab-efa-nccl/mpijobs",
];

// --- one round trip -----------------------------------------------------------------------------

#[test]
fn a_repeated_check_sends_only_its_lists_and_the_version_all_at_once() {
    let c = cluster(&["efa-nccl"]);
    // Cold: aggregated discovery is one request per root, beside `/version`.
    let (cold, reqs) = c.check(&["efa-nccl"]);
    all_pass(&cold);
    assert_eq!(discovery(&reqs), ["/api", "/apis"], "{reqs:#?}");
    assert_eq!(lists(&reqs), EFA_LISTS);
    assert_eq!(reqs.iter().filter(|r| r.path == "/version").count(), 1);
    assert!(c.cache_file().is_file(), "{}", c.cache_file().display());

    // Warm: no discovery at all; the six LISTs and `/version` go out together. The gate holds
    // every request until seven are in flight: a client that waited for any answer first (the
    // version before the reads, discovery before a LIST) would stop at the gate and fail on its
    // request timeout.
    c.emu.fault(None, "/", false, Fault::Gate(7));
    let (warm, reqs) = c.check(&["efa-nccl"]);
    assert_eq!(outcomes(&warm), outcomes(&cold), "graded the same");
    assert_eq!(discovery(&reqs), Vec::<String>::new(), "{reqs:#?}");
    assert_eq!(lists(&reqs), EFA_LISTS);
    assert_eq!(paths(&reqs, |p| p == "/version").len(), 1);
    assert_eq!(reqs.len(), 7, "nothing else: {reqs:#?}");
}

#[test]
fn capability_detection_reads_beside_the_labs_reads_not_after_them() {
    // volcano-gang names the Volcano capability: its two controller Deployments are read (one
    // LIST for both) in the same round as the lab's reads, and its kinds come from the cache.
    let c = cluster(&["volcano-gang"]);
    let (cold, _) = c.check(&["volcano-gang"]);
    all_pass(&cold);
    c.emu.fault(None, "/", false, Fault::Gate(6));
    let (warm, reqs) = c.check(&["volcano-gang"]);
    assert_eq!(outcomes(&warm), outcomes(&cold));
    assert_eq!(
        lists(&reqs),
        [
            "/api/v1/namespaces/trainlab-volcano-gang/pods",
            "/api/v1/nodes",
            "/apis/apps/v1/deployments",
            "/apis/batch.volcano.sh/v1alpha1/namespaces/trainlab-volcano-gang/jobs",
            "/apis/scheduling.volcano.sh/v1beta1/namespaces/trainlab-volcano-gang/podgroups",
        ]
    );
    assert_eq!(reqs.len(), 6, "and /version: {reqs:#?}");
}

// --- the disk cache -----------------------------------------------------------------------------

#[test]
fn a_kind_the_cache_does_not_list_is_looked_up_again_once() {
    let c = cluster(&["volcano-gang"]);
    c.emu.unserve_crd("batch.volcano.sh", "v1alpha1", "jobs");
    c.emu
        .unserve_crd("scheduling.volcano.sh", "v1beta1", "podgroups");
    let (_, before, _) = c.check_code(&["volcano-gang"]);
    let skipped = outcomes(&before)["volcano-gang"]
        .iter()
        .filter(|(_, s)| s == "skipped")
        .count();
    assert!(skipped > 0, "without Volcano's CRDs: {before}");

    // Volcano installed since: the cached answer lacks its kinds, so `/apis` is read again,
    // once, and the lab passes.
    live::serve(&c.emu, &LAB_CRDS);
    let (after, reqs) = c.check(&["volcano-gang"]);
    all_pass(&after);
    assert_eq!(discovery(&reqs), ["/apis"], "{reqs:#?}");
    // And the file now lists them: nothing is looked up next time.
    let (_, reqs) = c.check(&["volcano-gang"]);
    assert_eq!(discovery(&reqs), Vec::<String>::new(), "{reqs:#?}");
}

#[test]
fn a_kind_the_cache_lists_but_the_server_no_longer_serves_is_noticed_by_its_404() {
    let c = cluster(&["mpijob-slots"]);
    let (warm, _) = c.check(&["mpijob-slots"]);
    all_pass(&warm);
    // The MPI Operator's CRD removed since: the cached answer still lists MPIJobs, the LIST
    // answers 404, and the lab says what a cold run says about a missing CRD.
    c.emu.unserve_crd("kubeflow.org", "v2beta1", "mpijobs");
    let (code, gone, reqs) = c.check_code(&["mpijob-slots"]);
    let cold = cluster(&["mpijob-slots"]);
    cold.emu.unserve_crd("kubeflow.org", "v2beta1", "mpijobs");
    let (cold_code, expected, _) = cold.check_code(&["mpijob-slots"]);
    assert_eq!((code, outcomes(&gone)), (cold_code, outcomes(&expected)));
    assert_eq!(
        reqs.iter().filter(|r| r.path.ends_with("/mpijobs")).count(),
        1,
        "listed once, not retried: {reqs:#?}"
    );
    // The 404 set the file aside: the next run asks the server.
    let (_, _, reqs) = c.check_code(&["mpijob-slots"]);
    assert!(discovery(&reqs).contains(&"/apis".to_string()), "{reqs:#?}");
}

#[test]
fn a_corrupt_or_unwritable_cache_is_never_an_error() {
    let c = cluster(&["efa-nccl"]);
    let (good, _) = c.check(&["efa-nccl"]);
    for junk in [&b"{\"format\": 1, \"server\": tru"[..], b"\x00\xff", b"[]"] {
        std::fs::write(c.cache_file(), junk).unwrap();
        let (report, reqs) = c.check(&["efa-nccl"]);
        assert_eq!(outcomes(&report), outcomes(&good));
        assert_eq!(discovery(&reqs), ["/api", "/apis"], "asked the server");
        let text = std::fs::read_to_string(c.cache_file()).unwrap();
        assert!(
            serde_json::from_str::<Value>(&text).is_ok(),
            "rewritten: {text}"
        );
    }

    // A cache folder that cannot be made (a file is in the way): grading goes on, silently.
    let blocked = c.dir.path().join("blocked");
    std::fs::write(&blocked, "not a folder").unwrap();
    for _ in 0..2 {
        c.emu.clear_requests();
        let out = c
            .cmd(&["check", "efa-nccl", "-o", "json"])
            .env("TRAINLAB_CACHE_DIR", blocked.join("cache"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("cache"), "{stderr}");
        let reqs = c.emu.requests();
        assert_eq!(discovery(&reqs), ["/api", "/apis"], "nothing was kept");
    }
}

#[test]
fn no_cache_asks_every_time_and_keeps_nothing() {
    let c = cluster(&["efa-nccl"]);
    for (args, env) in [
        (&["check", "efa-nccl", "--no-cache", "-o", "json"][..], None),
        (&["check", "efa-nccl", "-o", "json"], Some("1")),
        (&["check", "efa-nccl", "-o", "json"], Some("true")),
    ] {
        c.emu.clear_requests();
        let mut cmd = c.cmd(args);
        if let Some(v) = env {
            cmd.env("TRAINLAB_NO_CACHE", v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(discovery(&c.emu.requests()), ["/api", "/apis"], "{args:?}");
    }
    assert!(!c.cache().exists());
}

// --- aggregated discovery and the legacy fallback ----------------------------------------------

#[test]
fn aggregated_discovery_replaces_the_per_group_requests_and_legacy_servers_still_work() {
    let aggregated = cluster(&["efa-nccl"]);
    let (report, reqs) = aggregated.check(&["efa-nccl", "--no-cache"]);
    all_pass(&report);
    assert_eq!(discovery(&reqs), ["/api", "/apis"]);
    for r in reqs.iter().filter(|r| is_discovery(&r.path)) {
        let accept = r.header("accept").unwrap_or_default();
        assert!(
            accept.starts_with("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"),
            "{accept}"
        );
    }

    // A server before 1.27 answers the roots with the legacy documents: the group/versions the
    // lab reads are then asked one by one, once each, and it grades the same.
    let legacy = cluster(&["efa-nccl"]);
    legacy.emu.legacy_discovery_only(true);
    let (report, reqs) = legacy.check(&["efa-nccl"]);
    all_pass(&report);
    assert_eq!(
        discovery(&reqs),
        [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/batch/v1",
            "/apis/karpenter.sh/v1",
            "/apis/kubeflow.org/v2beta1"
        ]
    );
    assert_eq!(lists(&reqs), EFA_LISTS);
    // The cache keeps the legacy answers too.
    let (_, reqs) = legacy.check(&["efa-nccl"]);
    assert_eq!(discovery(&reqs), Vec::<String>::new());
}

// --- several labs: one cluster-wide LIST per kind ---------------------------------------------

fn gradable() -> Vec<&'static str> {
    trainlab::labs::VERIFIERS
        .iter()
        .map(|v| v.lab_id())
        .collect()
}

#[test]
fn check_all_lists_each_kind_once_and_grades_as_lab_by_lab() {
    let labs = gradable();
    let c = cluster(&labs);
    let (all, reqs) = c.check(&["--all"]);
    let lists = lists(&reqs);
    // Before, `check --all` sent one LIST per (kind, namespace) and capability detection one
    // per controller Deployment: 65 LISTs. Now the reads of a kind in several namespaces are one
    // cluster-wide LIST, filtered here; a kind only one lab reads keeps its namespaced LIST, and
    // Secrets are read only where a lab asks (bionemo, slurm-accounting), never cluster-wide.
    let kind_of = |path: &str| -> String {
        let segs: Vec<&str> = path.split('/').collect();
        match segs.iter().position(|s| *s == "namespaces") {
            Some(i) if i + 2 < segs.len() => [&segs[..i], &segs[i + 2..]].concat().join("/"),
            _ => path.to_string(),
        }
    };
    let mut kinds: Vec<String> = lists
        .iter()
        .filter(|p| !p.ends_with("/secrets"))
        .map(|p| kind_of(p))
        .collect();
    let listed = kinds.len();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), listed, "each kind once: {lists:#?}");
    let secrets: Vec<&String> = lists.iter().filter(|p| p.ends_with("/secrets")).collect();
    assert_eq!(
        secrets,
        [
            "/api/v1/namespaces/trainlab-bionemo/secrets",
            "/api/v1/namespaces/trainlab-slurm-accounting/secrets"
        ]
    );
    for wide in [
        "/api/v1/pods",
        "/apis/batch/v1/jobs",
        "/apis/apps/v1/deployments",
    ] {
        assert!(lists.iter().any(|p| p == wide), "{wide}: {lists:#?}");
    }
    assert!(lists.len() <= 22, "{} LISTs: {lists:#?}", lists.len());

    // With the answers cached, the whole of `check --all` is one concurrent round: its LISTs,
    // `/version`, and `/apis` asked again (beside them) about the Kubeflow Trainer kinds the
    // file does not list, as they are not served here. The gate holds every request until all
    // of them are in flight.
    let (_, warm) = c.check(&["--all"]);
    assert_eq!(discovery(&warm), ["/apis"]);
    assert_eq!(warm.len(), lists.len() + 2, "{warm:#?}");
    c.emu.fault(None, "/", false, Fault::Gate(warm.len()));
    let (again, reqs) = c.check(&["--all"]);
    assert_eq!(outcomes(&again), outcomes(&all));
    assert_eq!(reqs.len(), warm.len());

    // The same grade as each lab on its own (one LIST per read there).
    let mut one_by_one = BTreeMap::new();
    for lab in &labs {
        let (report, _) = c.check(&[lab]);
        one_by_one.extend(outcomes(&report));
    }
    assert_eq!(outcomes(&all), one_by_one);
}

#[test]
fn a_learner_who_may_not_list_pods_cluster_wide_is_read_namespace_by_namespace() {
    let labs = gradable();
    let c = cluster(&labs);
    let (healthy, _) = c.check(&["--all"]);
    // Namespace-scoped RBAC: pods may be listed in the lab namespaces only.
    c.emu.fault(
        Some("GET"),
        "/api/v1/pods",
        false,
        Fault::Status(
            403,
            "pods is forbidden: User \"learner\" cannot list resource \"pods\" in API group \"\" at the cluster scope".into(),
        ),
    );
    let (report, reqs) = c.check(&["--all"]);
    assert_eq!(outcomes(&report), outcomes(&healthy), "graded the same");
    let pods = lists(&reqs)
        .into_iter()
        .filter(|p| p.ends_with("/pods"))
        .collect::<Vec<_>>();
    let per_namespace = pods.iter().filter(|p| p.contains("/namespaces/")).count();
    assert_eq!(
        pods.len(),
        per_namespace + 1,
        "one refused cluster-wide LIST: {pods:#?}"
    );
    assert!(per_namespace >= 10, "{pods:#?}");
}
