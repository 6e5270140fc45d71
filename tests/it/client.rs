//! trainlab's Kubernetes client layer (`trainlab::cluster`) against the API emulator: what every
//! request carries, how LISTs are paged, what discovery keeps between observations, refused
//! credentials, and the `-v` request log of the real binary.

use crate::support::emulator;

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use emulator::{Emulator, Fault, Recorded};
use serde_json::{json, Value};
use trainlab::cluster::{connect, gather, Conn, ConnectOpts, Discovery};
use trainlab::observe::{kinds, Query, Unavailable};

// --- helpers ----------------------------------------------------------------------------------

async fn bounded<T>(step: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), step)
        .await
        .expect("step did not finish in 30s")
}

/// A connection to `emu` through a kubeconfig it wrote (kept alive with the returned dir).
async fn conn(emu: &Emulator) -> (Conn, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = emu.kubeconfig(dir.path(), "emulator");
    let opts = ConnectOpts {
        kubeconfig: Some(path),
        ..ConnectOpts::default()
    };
    (connect(&opts).await.unwrap(), dir)
}

fn node(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name},
        "spec": {"providerID": format!("kind://docker/trainlab/{name}")},
    })
}

fn pod(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "train"}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    })
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn query_pairs(r: &Recorded) -> Vec<(String, String)> {
    r.query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn param(r: &Recorded, key: &str) -> Option<String> {
    query_pairs(r)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// The LIST requests sent for one path, in order.
fn lists_of(emu: &Emulator, path: &str) -> Vec<Recorded> {
    emu.requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path == path)
        .collect()
}

fn discoveries_of(emu: &Emulator, group_version_path: &str) -> usize {
    emu.requests()
        .iter()
        .filter(|r| r.path == group_version_path)
        .count()
}

// --- User-Agent -------------------------------------------------------------------------------

#[tokio::test]
async fn every_request_carries_the_trainlab_user_agent() {
    let emu = Emulator::start(vec![node("n1")]);
    let (conn, _dir) = conn(&emu).await;
    let discovery = Discovery::new();
    let obs = bounded(gather(&conn, &discovery, &[Query::cluster(&kinds::NODES)]))
        .await
        .unwrap();
    assert_eq!(obs.list(&Query::cluster(&kinds::NODES)).unwrap().len(), 1);
    let requests = emu.requests();
    assert!(
        requests.len() >= 3,
        "version, discovery, list: {requests:?}"
    );
    let expected = format!("trainlab/{}", env!("CARGO_PKG_VERSION"));
    for r in &requests {
        assert_eq!(r.header("user-agent"), Some(expected.as_str()), "{r:?}");
    }
}

// --- paging -----------------------------------------------------------------------------------

#[tokio::test]
async fn a_big_namespace_is_read_in_pages_of_500() {
    let mut seed = vec![namespace("big")];
    seed.extend((0..1200).map(|i| pod("big", &format!("p{i:04}"))));
    let emu = Emulator::start(seed);
    let (conn, _dir) = conn(&emu).await;
    let q = Query::new(&kinds::PODS, "big").with_selector("app=train");
    let obs = bounded(gather(&conn, &Discovery::new(), std::slice::from_ref(&q)))
        .await
        .unwrap();
    let pods = obs.list(&q).unwrap();
    assert_eq!(pods.len(), 1200);
    let mut names: Vec<&str> = pods.iter().map(|p| p.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 1200, "every pod once");

    let lists = lists_of(&emu, "/api/v1/namespaces/big/pods");
    assert_eq!(lists.len(), 3, "{lists:?}");
    for r in &lists {
        assert_eq!(param(r, "limit").as_deref(), Some("500"), "{r:?}");
        assert_eq!(
            param(r, "labelSelector").as_deref(),
            Some("app%3Dtrain"),
            "{r:?}"
        );
    }
    assert_eq!(param(&lists[0], "continue"), None);
    assert_eq!(
        param(&lists[1], "continue").as_deref(),
        Some("emulator-500")
    );
    assert_eq!(
        param(&lists[2], "continue").as_deref(),
        Some("emulator-1000")
    );
}

#[tokio::test]
async fn chunk_size_sets_the_page_and_zero_reads_each_list_in_one_response() {
    let mut seed = vec![namespace("big")];
    seed.extend((0..1200).map(|i| pod("big", &format!("p{i:04}"))));
    let emu = Emulator::start(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = emu.kubeconfig(dir.path(), "emulator");
    let q = Query::new(&kinds::PODS, "big");
    for (chunk, requests, limit) in [(1000, 2, Some("1000")), (0, 1, None)] {
        let before = lists_of(&emu, "/api/v1/namespaces/big/pods").len();
        let opts = ConnectOpts {
            kubeconfig: Some(path.clone()),
            chunk_size: chunk,
            ..ConnectOpts::default()
        };
        let conn = connect(&opts).await.unwrap();
        let obs = bounded(gather(&conn, &Discovery::new(), std::slice::from_ref(&q)))
            .await
            .unwrap();
        assert_eq!(obs.list(&q).unwrap().len(), 1200, "--chunk-size {chunk}");
        let lists = lists_of(&emu, "/api/v1/namespaces/big/pods");
        let mine = &lists[before..];
        assert_eq!(mine.len(), requests, "--chunk-size {chunk}: {mine:?}");
        assert_eq!(param(&mine[0], "limit").as_deref(), limit, "{mine:?}");
    }
}

#[tokio::test]
async fn an_expired_continue_token_falls_back_to_one_full_list() {
    let mut seed = vec![namespace("big")];
    seed.extend((0..700).map(|i| pod("big", &format!("p{i:04}"))));
    let emu = Emulator::start(seed);
    // The first page passes; the second answers 410 Expired, as when etcd compacted the
    // resourceVersion the continue token was taken at.
    emu.fault(
        Some("GET"),
        "/api/v1/namespaces/big/pods",
        false,
        Fault::Sequence(vec![200, 410]),
    );
    let (conn, _dir) = conn(&emu).await;
    let q = Query::new(&kinds::PODS, "big");
    let obs = bounded(gather(&conn, &Discovery::new(), std::slice::from_ref(&q)))
        .await
        .unwrap();
    assert_eq!(
        obs.list(&q).unwrap().len(),
        700,
        "no pod twice, none missing"
    );
    let lists = lists_of(&emu, "/api/v1/namespaces/big/pods");
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert_eq!(
        param(&lists[1], "continue").as_deref(),
        Some("emulator-500")
    );
    assert_eq!(
        param(&lists[2], "limit"),
        None,
        "the fallback is one full list"
    );
    assert_eq!(param(&lists[2], "continue"), None);
}

#[tokio::test]
async fn secrets_are_read_as_metadata_only() {
    // `kubectl apply` of a Secret writes its data into the last-applied annotation: metadata
    // alone would still carry it.
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "token", "namespace": "lab", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration":
                "{\"data\":{\"password\":\"c2VjcmV0\"},\"kind\":\"Secret\"}",
            "team": "ml",
        }},
        "data": {"password": "c2VjcmV0"},
    });
    let emu = Emulator::start(vec![namespace("lab"), secret]);
    let (conn, _dir) = conn(&emu).await;
    let q = Query::new(&kinds::SECRETS, "lab");
    let obs = bounded(gather(&conn, &Discovery::new(), std::slice::from_ref(&q)))
        .await
        .unwrap();
    let secrets = obs.list(&q).unwrap();
    assert_eq!(secrets.len(), 1);
    assert_eq!(secrets[0].name(), "token");
    assert_eq!(secrets[0].kind(), "Secret");
    assert!(
        !secrets[0].value.to_string().contains("c2VjcmV0"),
        "no Secret data, not even in an annotation: {}",
        secrets[0].value
    );
    assert_eq!(
        secrets[0].value["metadata"]["annotations"],
        json!({"team": "ml"})
    );
    let list = &lists_of(&emu, "/api/v1/namespaces/lab/secrets")[0];
    assert!(
        list.header("accept")
            .is_some_and(|a| a.contains("as=PartialObjectMetadataList")),
        "{list:?}"
    );
}

#[tokio::test]
async fn what_no_check_reads_and_makes_objects_big_is_dropped_as_objects_arrive() {
    let mut p = pod("lab", "worker-0");
    p["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Apply"}]);
    p["metadata"]["annotations"] = json!({
        "kubectl.kubernetes.io/last-applied-configuration": "{\"kind\":\"Pod\"}",
        "team": "ml",
    });
    let mut n = node("worker");
    n["status"] =
        json!({"images": [{"names": ["busybox"], "sizeBytes": 1}], "capacity": {"cpu": "8"}});
    let emu = Emulator::start(vec![namespace("lab"), p, n]);
    let (conn, _dir) = conn(&emu).await;
    let pods = Query::new(&kinds::PODS, "lab");
    let nodes = Query::cluster(&kinds::NODES);
    let obs = bounded(gather(
        &conn,
        &Discovery::new(),
        &[pods.clone(), nodes.clone()],
    ))
    .await
    .unwrap();
    let pod = &obs.list(&pods).unwrap()[0].value;
    assert!(pod["metadata"].get("managedFields").is_none(), "{pod}");
    assert_eq!(pod["metadata"]["annotations"], json!({"team": "ml"}));
    let node = &obs.list(&nodes).unwrap()[0].value;
    assert!(node["status"].get("images").is_none(), "{node}");
    assert_eq!(node["status"]["capacity"]["cpu"], "8");
}

#[tokio::test]
async fn a_named_query_sends_a_field_selector() {
    let emu = Emulator::start(vec![node("n1"), node("n2")]);
    let (conn, _dir) = conn(&emu).await;
    let q = Query::cluster(&kinds::NODES).named("n2");
    let obs = bounded(gather(&conn, &Discovery::new(), std::slice::from_ref(&q)))
        .await
        .unwrap();
    let names: Vec<&str> = obs.list(&q).unwrap().iter().map(|o| o.name()).collect();
    assert_eq!(names, ["n2"]);
    let list = &lists_of(&emu, "/api/v1/nodes")[0];
    assert_eq!(
        param(list, "fieldSelector").as_deref(),
        Some("metadata.name%3Dn2")
    );
}

// --- discovery across observations ------------------------------------------------------------

#[tokio::test]
async fn a_failed_discovery_is_asked_again_on_the_next_observation() {
    let emu = Emulator::start(vec![namespace("lab")]);
    emu.serve_crd("batch.volcano.sh", "v1alpha1", "Job", "jobs", true);
    emu.fault(
        None,
        "/apis/batch.volcano.sh/v1alpha1",
        false,
        Fault::Status(500, "etcd leader changed".into()),
    );
    let (conn, _dir) = conn(&emu).await;
    let discovery = Discovery::new();
    let q = Query::new(&kinds::VOLCANO_JOBS, "lab");
    let first = bounded(gather(&conn, &discovery, std::slice::from_ref(&q)))
        .await
        .unwrap();
    assert!(
        matches!(first.list(&q), Err(Unavailable::Failed { .. })),
        "{:?}",
        first.list(&q)
    );

    emu.clear_faults();
    let second = bounded(gather(&conn, &discovery, std::slice::from_ref(&q)))
        .await
        .unwrap();
    assert_eq!(second.list(&q).unwrap().len(), 0);
}

#[tokio::test]
async fn a_crd_installed_while_watching_is_seen_on_the_next_observation() {
    let emu = Emulator::start(vec![namespace("lab")]);
    let (conn, _dir) = conn(&emu).await;
    let discovery = Discovery::new();
    let q = Query::new(&kinds::MPIJOBS, "lab");
    let first = bounded(gather(&conn, &discovery, std::slice::from_ref(&q)))
        .await
        .unwrap();
    assert!(
        matches!(first.list(&q), Err(Unavailable::NotServed { .. })),
        "{:?}",
        first.list(&q)
    );

    emu.serve_crd("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", true);
    let second = bounded(gather(&conn, &discovery, std::slice::from_ref(&q)))
        .await
        .unwrap();
    assert_eq!(second.list(&q).unwrap().len(), 0);
}

#[tokio::test]
async fn a_served_kind_is_discovered_once_per_run_and_once_per_observation() {
    for legacy in [false, true] {
        let emu = Emulator::start(vec![namespace("a"), namespace("b")]);
        emu.legacy_discovery_only(legacy);
        emu.serve_crd("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", true);
        let (conn, _dir) = conn(&emu).await;
        let discovery = Discovery::new();
        // Two reads of one group/version share one discovery answer.
        let queries = [
            Query::new(&kinds::MPIJOBS, "a"),
            Query::new(&kinds::MPIJOBS, "b"),
        ];
        for _ in 0..3 {
            bounded(gather(&conn, &discovery, &queries)).await.unwrap();
        }
        // Aggregated discovery: `/apis` answers every group at once. A legacy server's `/apis`
        // only names its group/versions; the one read is then asked on its own, once.
        assert_eq!(discoveries_of(&emu, "/apis"), 1, "legacy: {legacy}");
        assert_eq!(
            discoveries_of(&emu, "/apis/kubeflow.org/v2beta1"),
            usize::from(legacy)
        );
        // A kind that is not served is asked about once per observation, not once per read:
        // `/apis` again (its last answer did not serve it). Its group/version is never asked
        // on its own: even a legacy `/apis` says it is not served.
        let absent = [
            Query::new(&kinds::PYTORCHJOBS, "a"),
            Query::new(&kinds::PYTORCHJOBS, "b"),
        ];
        for _ in 0..2 {
            bounded(gather(&conn, &discovery, &absent)).await.unwrap();
        }
        assert_eq!(discoveries_of(&emu, "/apis"), 3, "legacy: {legacy}");
        assert_eq!(discoveries_of(&emu, "/apis/kubeflow.org/v1"), 0);
    }
}

// --- refused credentials ----------------------------------------------------------------------

fn assert_refresh_advice(err: &trainlab::Error) {
    assert!(matches!(err, trainlab::Error::Environment(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("401"), "{text}");
    assert!(text.contains("aws sso login"), "{text}");
    assert!(text.contains("aws eks update-kubeconfig"), "{text}");
}

#[tokio::test]
async fn refused_credentials_are_one_environment_error() {
    let emu = Emulator::start(vec![node("n1")]);
    emu.fault(None, "/", false, Fault::Status(401, "Unauthorized".into()));
    let (conn, _dir) = conn(&emu).await;
    let err = bounded(gather(
        &conn,
        &Discovery::new(),
        &[Query::cluster(&kinds::NODES)],
    ))
    .await
    .unwrap_err();
    assert_refresh_advice(&err);
}

#[tokio::test]
async fn a_token_that_expires_between_observations_stops_the_observation() {
    let emu = Emulator::start(vec![node("n1"), namespace("lab")]);
    let (conn, _dir) = conn(&emu).await;
    let discovery = Discovery::new();
    let queries = [
        Query::cluster(&kinds::NODES),
        Query::new(&kinds::PODS, "lab"),
    ];
    bounded(gather(&conn, &discovery, &queries)).await.unwrap();
    // The probe already succeeded; now every LIST is refused.
    emu.fault(
        None,
        "/api/v1/",
        false,
        Fault::Status(401, "Unauthorized".into()),
    );
    let err = bounded(gather(&conn, &discovery, &queries))
        .await
        .unwrap_err();
    assert_refresh_advice(&err);
}

// --- the binary: -v and credentials -----------------------------------------------------------

struct Run {
    code: i32,
    stderr: String,
}

fn trainlab(kubeconfig: &std::ffi::OsStr, args: &[&str]) -> Run {
    let out = assert_cmd::Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", kubeconfig)
        .env(
            "TRAINLAB_CACHE_DIR",
            crate::support::cache_beside(kubeconfig),
        )
        .env_remove("LC_ALL")
        .timeout(Duration::from_secs(60))
        .write_stdin("")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn kubeconfig_of(emu: &Emulator) -> (PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (emu.kubeconfig(dir.path(), "kind-trainlab"), dir)
}

#[test]
fn verbose_logs_one_line_per_request() {
    let emu = Emulator::start(vec![node("n1")]);
    let (kubeconfig, _dir) = kubeconfig_of(&emu);
    // Without the discovery cache, both runs send the same requests.
    let quiet = trainlab(
        kubeconfig.as_os_str(),
        &["check", "efa-nccl", "--no-cache", "-o", "json"],
    );
    assert!(!quiet.stderr.contains("GET /"), "{}", quiet.stderr);
    let quiet_requests = emu.requests().len();

    emu.clear_requests();
    let run = trainlab(
        kubeconfig.as_os_str(),
        &["-v", "check", "efa-nccl", "--no-cache", "-o", "json"],
    );
    assert_eq!(run.code, quiet.code, "{}", run.stderr);
    let logged: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(" GET /"))
        .collect();
    assert_eq!(logged.len(), emu.requests().len(), "{}", run.stderr);
    assert_eq!(logged.len(), quiet_requests, "{}", run.stderr);
    let nodes = logged
        .iter()
        .find(|l| l.contains("GET /api/v1/nodes 200 "))
        .unwrap_or_else(|| panic!("no nodes LIST line in:\n{}", run.stderr));
    // "... GET /api/v1/nodes 200 1.2ms"
    let ms = nodes.rsplit(' ').next().unwrap();
    assert!(
        ms.ends_with("ms") && ms.trim_end_matches("ms").parse::<f64>().is_ok(),
        "{nodes}"
    );
    assert!(run.stderr.contains("GET /version 200 "), "{}", run.stderr);
}

#[test]
fn refused_credentials_exit_3_with_one_message() {
    let emu = Emulator::start(vec![node("n1")]);
    emu.fault(None, "/", false, Fault::Status(401, "Unauthorized".into()));
    let (kubeconfig, _dir) = kubeconfig_of(&emu);
    let run = trainlab(kubeconfig.as_os_str(), &["check", "efa-nccl"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("aws sso login").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("aws eks update-kubeconfig"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_malformed_kubeconfig_env_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken-config");
    std::fs::write(&bad, "apiVersion: v1\nclusters: [unclosed\n").unwrap();
    let run = trainlab(bad.as_os_str(), &["check", "efa-nccl"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&*bad.to_string_lossy()),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("no kubeconfig found"),
        "{}",
        run.stderr
    );
}
