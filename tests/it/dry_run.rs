//! `check LAB --files F --dry-run=server` against the API emulator: the files are sent as
//! server-side dry-run applies (dryRun=All, fieldValidation=Strict, field manager trainlab,
//! force), refusals are quoted exactly as kube-apiserver words them under the check they belong
//! to (or on the lab), nothing is stored, environment failures are exit 3 and never a fail, and
//! without `--dry-run=server` no request reaches any cluster. The emulator checks custom
//! resources against the CRDs in tests/data/crds/ (declared fields and enums).

use crate::support::emulator;
use crate::support::live::{json_of, output as run, trainlab, Cluster, CONTEXT};

use std::path::{Path, PathBuf};

use emulator::{Emulator, Fault, Recorded};
use serde_json::{json, Value};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn lab_file(rel: &str) -> PathBuf {
    root().join("labs").join(rel)
}

/// The CRDs of tests/data/crds/ as JSON values, to seed.
fn crds() -> Vec<Value> {
    let dir = root().join("tests/data/crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_saphyr::from_str::<Value>(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

/// An emulator serving the CRDs of tests/data/crds/ (validated like the API server does) and
/// `extra`, with a kubeconfig.
fn cluster(extra: Vec<Value>) -> Cluster {
    let mut seed = crds();
    seed.extend(extra);
    Cluster::on(Emulator::start(seed))
}

/// Writes a manifest into the cluster's scratch folder and returns its path.
fn write_file(c: &Cluster, name: &str, text: &str) -> PathBuf {
    let p = c.dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn outcome<'a>(report: &'a Value, check: &str) -> &'a Value {
    report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["check"] == check)
        .unwrap_or_else(|| panic!("no outcome {check} in {report}"))
}

fn patches(reqs: &[Recorded]) -> Vec<&Recorded> {
    reqs.iter().filter(|r| r.method == "PATCH").collect()
}

fn is_write(r: &Recorded) -> bool {
    matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")
}

/// The solution NodePool of lab 15 with `from` replaced by `to` (which must occur once).
fn nodepool_with(from: &str, to: &str) -> String {
    let text =
        std::fs::read_to_string(lab_file("15-karpenter-single-az/solution/nodepool.yaml")).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from}");
    text.replace(from, to)
}

// --- without the flag, static mode stays offline ------------------------------------------------

#[test]
fn static_mode_sends_nothing_to_the_cluster_of_the_kube_context() {
    let c = cluster(Vec::new());
    let solution = lab_file("15-karpenter-single-az/solution/nodepool.yaml");
    let file = solution.to_str().unwrap();
    for extra in [&[][..], &["--dry-run=none"][..], &["--dry-run=client"][..]] {
        let mut args = vec!["check", "15", "--files", file, "-o", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = c.run(&args);
        assert_eq!(code, 0, "{extra:?}\n{out}\n{err}");
        let report = json_of(&out);
        assert!(report.get("server_dry_run").is_none(), "{report}");
        assert!(!err.contains("using context"), "{err}");
    }
    assert!(
        c.requests().is_empty(),
        "static mode reached the cluster: {:?}",
        c.requests()
    );
}

// --- a clean manifest -------------------------------------------------------------------------

#[test]
fn a_clean_manifest_passes_the_dry_run_and_nothing_is_stored() {
    let c = cluster(vec![namespace("trainlab-mpijob-slots")]);
    let before = c.emu.objects();
    let nodepool = lab_file("15-karpenter-single-az/solution/nodepool.yaml");
    let (code, out, err) = c.run(&[
        "check",
        "15",
        "--files",
        nodepool.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains(&format!("trainlab: using context {CONTEXT}")),
        "{err}"
    );
    let report = json_of(&out);
    let server = &report["server_dry_run"];
    assert_eq!(server["sent"], 1, "{server}");
    assert_eq!(server["refused"], json!([]));
    assert_eq!(server["errors"], json!([]));
    assert_eq!(report["counts"]["fail"], 0, "{report}");

    // One request writes, and it is kubectl's server-side dry run: an apply patch with
    // dryRun=All, force, field manager trainlab and strict field validation.
    let reqs = c.requests();
    let writes: Vec<&Recorded> = reqs.iter().filter(|r| is_write(r)).collect();
    assert_eq!(writes.len(), 1, "{writes:?}");
    let w = writes[0];
    assert_eq!(
        (w.method.as_str(), w.path.as_str()),
        ("PATCH", "/apis/karpenter.sh/v1/nodepools/gpu-training")
    );
    assert_eq!(
        w.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    let mut query: Vec<&str> = w.query.split('&').filter(|p| !p.is_empty()).collect();
    query.sort_unstable();
    assert_eq!(
        query,
        [
            "dryRun=All",
            "fieldManager=trainlab",
            "fieldValidation=Strict",
            "force=true"
        ]
    );

    // A namespaced kind goes to the lab's namespace, and is not stored either.
    let mpijob = lab_file("13-mpijob-slots/solution/mpijob.yaml");
    let (code, out, err) = c.run(&[
        "check",
        "13",
        "--files",
        mpijob.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(json_of(&out)["server_dry_run"]["refused"], json!([]));
    assert!(
        patches(&c.requests()).iter().any(|r| r.path
            == "/apis/kubeflow.org/v2beta1/namespaces/trainlab-mpijob-slots/mpijobs/nccl-allreduce"
            && r.query.contains("dryRun=All")),
        "{:?}",
        c.requests()
    );

    // Nothing persisted: the emulator holds exactly what it was seeded with.
    let after = c.emu.objects();
    let kinds: Vec<&str> = after.iter().filter_map(|o| o["kind"].as_str()).collect();
    assert!(
        !kinds.contains(&"NodePool") && !kinds.contains(&"MPIJob"),
        "{kinds:?}"
    );
    assert_eq!(after, before);
}

// --- refusals, as the server words them -----------------------------------------------------

#[test]
fn a_crd_enum_violation_is_quoted_exactly_and_fails_the_checks_that_read_the_object() {
    let c = cluster(Vec::new());
    // karpenter v1beta1's value, renamed in v1.
    let file = write_file(
        &c,
        "nodepool.yaml",
        &nodepool_with(
            "consolidationPolicy: WhenEmpty",
            "consolidationPolicy: WhenUnderutilized",
        ),
    );
    let args = [
        "check",
        "15",
        "--files",
        file.to_str().unwrap(),
        "--dry-run=server",
    ];
    let (code, out, err) = c.run(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(code, 1, "a refusal is the learner's fail\n{out}\n{err}");
    let report = json_of(&out);
    let refused = &report["server_dry_run"]["refused"][0];
    // k8s.io/apimachinery pkg/api/errors NewInvalid + field.NotSupported, word for word.
    let server_said = "NodePool.karpenter.sh \"gpu-training\" is invalid: spec.disruption.consolidationPolicy: Unsupported value: \"WhenUnderutilized\": supported values: \"WhenEmpty\", \"WhenEmptyOrUnderutilized\", \"Balanced\"";
    assert_eq!(refused["message"], server_said, "{refused}");
    assert_eq!(refused["code"], 422);
    assert_eq!(refused["reason"], "Invalid");
    assert_eq!(
        refused["fields"],
        json!(["spec.disruption.consolidationPolicy"])
    );
    assert_eq!(refused["object"], "NodePool/gpu-training");
    // No check of lab 15 judges the consolidation policy: the refusal belongs to the checks that
    // read the NodePool, which would all find it missing on the cluster.
    let checks = refused["checks"].as_array().unwrap();
    assert!(checks.len() > 1, "{refused}");
    for check in checks {
        let o = outcome(&report, check.as_str().unwrap());
        assert_eq!(o["status"], "fail", "{o}");
        // JSON and JUnit say the whole refusal at each check; human output quotes it once.
        assert!(o["reason"].as_str().unwrap().ends_with(server_said), "{o}");
        assert_eq!(o["found"], "refused (422 Invalid)");
        assert_eq!(o["hint"], Value::Null, "{o}");
    }
    // State checks stay skipped (static mode).
    assert_eq!(outcome(&report, "nodepool-ready")["status"], "skipped");

    // Human output: the server's words once, inside trainlab's.
    let (code, out, _) = c.run(&args);
    assert_eq!(code, 1);
    let line = format!("the API server refused NodePool/gpu-training ({}, document 1) in a server-side dry run (422 Invalid): {server_said}", file.display());
    assert_eq!(out.matches(&line).count(), 1, "{out}");
    assert_eq!(
        out.matches("fail: the API server refused NodePool/gpu-training (quoted above)")
            .count(),
        checks.len(),
        "{out}"
    );

    // Japanese around the same words.
    let (code, out, _) = c.run(&[&args[..], &["--lang", "ja"]].concat());
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!("API サーバーがサーバー側ドライランで NodePool/gpu-training（{}, document 1）を拒否しました（422 Invalid）: {server_said}", file.display())),
        "{out}"
    );
}

#[test]
fn an_enum_violation_in_a_field_a_check_judges_is_reported_at_that_check() {
    let c = cluster(Vec::new());
    let file = write_file(
        &c,
        "nodepool.yaml",
        &nodepool_with(
            "- key: topology.kubernetes.io/zone\n          operator: In",
            "- key: topology.kubernetes.io/zone\n          operator: in",
        ),
    );
    let (code, out, err) = c.run(&[
        "check",
        "15",
        "--files",
        file.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    let report = json_of(&out);
    let refused = &report["server_dry_run"]["refused"][0];
    let server_said = "NodePool.karpenter.sh \"gpu-training\" is invalid: spec.template.spec.requirements[0].operator: Unsupported value: \"in\": supported values: \"Gte\", \"Lte\", \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"";
    assert_eq!(refused["message"], server_said);
    assert_eq!(refused["checks"], json!(["zone-single"]), "{refused}");
    let zone = outcome(&report, "zone-single");
    assert_eq!(zone["status"], "fail");
    let reason = zone["reason"].as_str().unwrap();
    assert!(reason.ends_with(server_said), "{reason}");
    // The other NodePool checks judge what they judge.
    assert_eq!(outcome(&report, "on-demand")["status"], "pass", "{report}");
}

#[test]
fn an_unknown_field_is_quoted_exactly_as_server_side_apply_words_it() {
    let c = cluster(Vec::new());
    // karpenter v1beta1's nodeClassRef had an apiVersion; v1 has a group.
    let file = write_file(
        &c,
        "nodepool.yaml",
        &nodepool_with(
            "group: karpenter.k8s.aws\n",
            "group: karpenter.k8s.aws\n        apiVersion: karpenter.k8s.aws/v1beta1\n",
        ),
    );
    let (code, out, err) = c.run(&[
        "check",
        "15",
        "--files",
        file.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    let report = json_of(&out);
    let refused = &report["server_dry_run"]["refused"][0];
    // structuredmerge.go Apply + structured-merge-diff's ValidationErrors, answered with 500.
    assert_eq!(
        refused["message"],
        "failed to create typed patch object (/gpu-training; karpenter.sh/v1, Kind=NodePool): .spec.template.spec.nodeClassRef.apiVersion: field not declared in schema"
    );
    assert_eq!(refused["code"], 500);
    assert_eq!(refused["reason"], "");
    assert_eq!(
        refused["fields"],
        json!([".spec.template.spec.nodeClassRef.apiVersion"])
    );
    let text = refused["text"].as_str().unwrap();
    assert!(text.contains("kubernetes/kubernetes#139253"), "{text}");
    // No check reads the undeclared field; the checks that read the NodePool fail.
    assert!(
        refused["checks"]
            .as_array()
            .unwrap()
            .contains(&json!("node-class-ref")),
        "{refused}"
    );
    assert_eq!(outcome(&report, "node-class-ref")["status"], "fail");
    // Nothing stored.
    assert!(!c.emu.objects().iter().any(|o| o["kind"] == "NodePool"));
}

#[test]
fn an_admission_webhook_denial_is_the_learners_fail_quoted_exactly() {
    let c = cluster(vec![namespace("trainlab-volcano-gang")]);
    let denial = "admission webhook \"validatejob.volcano.sh\" denied the request: job 'minAvailable' should not be greater than total replicas in tasks";
    c.emu.fault(
        Some("PATCH"),
        "/apis/batch.volcano.sh/",
        true,
        Fault::Status(400, denial.into()),
    );
    let job = lab_file("09-volcano-gang/solution/gang-train.yaml");
    let (code, out, err) = c.run(&[
        "check",
        "9",
        "--files",
        job.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    let refused = &json_of(&out)["server_dry_run"]["refused"][0];
    assert_eq!(refused["message"], denial);
    assert_eq!(refused["code"], 400);
}

// --- the environment is never a fail --------------------------------------------------------

#[test]
fn a_forbidden_dry_run_is_an_environment_error_and_fails_nothing() {
    let c = cluster(Vec::new());
    let rbac = "nodepools.karpenter.sh \"gpu-training\" is forbidden: User \"learner\" cannot patch resource \"nodepools\" in API group \"karpenter.sh\" at the cluster scope";
    c.emu.fault(
        Some("PATCH"),
        "/apis/karpenter.sh/",
        true,
        Fault::Status(403, rbac.into()),
    );
    let nodepool = lab_file("15-karpenter-single-az/solution/nodepool.yaml");
    let args = [
        "check",
        "15",
        "--files",
        nodepool.to_str().unwrap(),
        "--dry-run=server",
    ];
    let (code, out, err) = c.run(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(code, 3, "{out}\n{err}");
    let report = json_of(&out);
    assert_eq!(report["counts"]["fail"], 0, "{report}");
    assert_eq!(report["server_dry_run"]["refused"], json!([]));
    let errors = report["server_dry_run"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0].as_str().unwrap();
    assert!(e.contains("`patch nodepools.karpenter.sh`"), "{e}");
    assert!(e.ends_with(rbac), "{e}");
    let (code, out, _) = c.run(&args);
    assert_eq!(code, 3);
    assert!(
        out.contains("! NodePool/gpu-training: the server-side dry run is forbidden"),
        "{out}"
    );
}

#[test]
fn an_unreachable_cluster_is_an_environment_error_and_the_static_grade_still_shows() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kubeconfig = dir.path().join("kubeconfig");
    let config = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "gone", "cluster": {"server": format!("http://127.0.0.1:{port}")}}],
        "users": [{"name": "gone", "user": {}}],
        "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "gone"}}],
        "current-context": "gone",
    });
    std::fs::write(&kubeconfig, config.to_string()).unwrap();
    let nodepool = lab_file("15-karpenter-single-az/solution/nodepool.yaml");
    let (code, out, err) = run(trainlab(
        &kubeconfig,
        dir.path(),
        &[
            "check",
            "15",
            "--files",
            nodepool.to_str().unwrap(),
            "--dry-run=server",
            "--request-timeout",
            "2s",
            "-o",
            "json",
        ],
    ));
    assert_eq!(code, 3, "{out}\n{err}");
    let report = json_of(&out);
    assert_eq!(
        outcome(&report, "zone-single")["status"],
        "pass",
        "{report}"
    );
    let errors = report["server_dry_run"]["errors"].as_array().unwrap();
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .contains("cannot reach the API server"),
        "{errors:?}"
    );
}

#[test]
fn a_namespace_that_does_not_exist_yet_is_an_environment_error_saying_how_to_create_it() {
    let c = cluster(Vec::new());
    let job = lab_file("09-volcano-gang/solution/gang-train.yaml");
    let (code, out, err) = c.run(&[
        "check",
        "9",
        "--files",
        job.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 3, "{out}\n{err}");
    let errors = &json_of(&out)["server_dry_run"]["errors"];
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .contains("namespace `trainlab-volcano-gang` does not exist"),
        "{errors}"
    );
}

// --- the flag -----------------------------------------------------------------------------------

#[test]
fn dry_run_is_spelled_as_kubectls_and_needs_files() {
    let c = cluster(Vec::new());
    let nodepool = lab_file("15-karpenter-single-az/solution/nodepool.yaml");
    let file = nodepool.to_str().unwrap();
    // kubectl's spelling: `--dry-run=server`; a bare or spaced value is refused.
    let (code, _, err) = c.run(&["check", "15", "--files", file, "--dry-run", "server"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = c.run(&["check", "15", "--files", file, "--dry-run=sever"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("server"), "{err}");
    let (code, _, err) = c.run(&["check", "15", "--dry-run=server"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--files"), "{err}");
    assert!(c.requests().is_empty(), "{:?}", c.requests());

    let (code, out, _) = c.run(&["check", "--help"]);
    assert_eq!(code, 0);
    for words in [
        "--dry-run=<STRATEGY>",
        "dryRun=All",
        "fieldValidation=Strict",
        "stores nothing",
        "audit log",
    ] {
        assert!(out.contains(words), "`{words}` missing from --help:\n{out}");
    }
}

// --- the emulator's create and update bodies ------------------------------------------------

#[tokio::test]
async fn the_emulator_refuses_unknown_fields_of_a_strict_create_as_kube_apiserver_does() {
    use kube::config::{KubeConfigOptions, Kubeconfig};

    let c = cluster(vec![namespace("ns")]);
    let kubeconfig = Kubeconfig::read_from(&c.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let job = json!({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "x"},
        "spec": {"slotsPerWorkers": 8, "mpiReplicaSpecs": {}},
    });
    // kube 5's PostParams has no fieldValidation: the query is written by hand.
    let post = |query: &str| {
        http::Request::post(format!(
            "/apis/kubeflow.org/v2beta1/namespaces/ns/mpijobs?dryRun=All{query}"
        ))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&job).unwrap())
        .unwrap()
    };
    let err = client
        .request::<Value>(post("&fieldValidation=Strict"))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        status.message,
        "MPIJob in version \"v2beta1\" cannot be handled as a MPIJob: strict decoding error: unknown field \"spec.slotsPerWorkers\""
    );
    // Without Strict the emulator keeps the field (a real server prunes it, with a warning).
    assert!(client.request::<Value>(post("")).await.is_ok());
    assert!(!c.emu.objects().iter().any(|o| o["kind"] == "MPIJob"));
}

#[test]
fn a_version_the_cluster_does_not_serve_is_refused_as_kubectl_says_and_a_missing_crd_is_not_a_fail()
{
    let c = cluster(Vec::new());
    // karpenter.sh is served (v1 only): the learner's apiVersion is wrong.
    let file = write_file(
        &c,
        "nodepool.yaml",
        &nodepool_with(
            "apiVersion: karpenter.sh/v1",
            "apiVersion: karpenter.sh/v1beta1",
        ),
    );
    let args = [
        "check",
        "15",
        "--files",
        file.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ];
    let (code, out, err) = c.run(&args);
    assert_eq!(code, 1, "{out}\n{err}");
    let refused = &json_of(&out)["server_dry_run"]["refused"][0];
    // k8s.io/apimachinery pkg/api/meta/errors.go NoKindMatchError, as kubectl prints it.
    assert_eq!(
        refused["message"],
        "no matches for kind \"NodePool\" in version \"karpenter.sh/v1beta1\""
    );
    assert_eq!(
        (refused["code"].as_u64(), refused["reason"].as_str()),
        (Some(0), Some("NoKindMatch"))
    );
    assert!(
        c.requests().iter().all(|r| r.method == "GET"),
        "nothing is sent for a kind the cluster does not serve: {:?}",
        c.requests()
    );

    // A group the cluster does not serve at all: its CRDs are missing, the environment's.
    let other = write_file(
        &c,
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
    );
    let solution = lab_file("15-karpenter-single-az/solution/nodepool.yaml");
    let (code, out, err) = c.run(&[
        "check",
        "15",
        "--files",
        solution.to_str().unwrap(),
        other.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 3, "{out}\n{err}");
    let server = &json_of(&out)["server_dry_run"];
    assert_eq!(server["sent"], 2);
    assert_eq!(server["refused"], json!([]));
    assert!(
        server["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("Widget/w: the cluster does not serve Widget (example.com/v1)"),
        "{server}"
    );
}

#[test]
fn several_unknown_fields_are_one_refusal_listing_each_as_the_server_does() {
    let c = cluster(vec![namespace("trainlab-mpijob-slots")]);
    let text = std::fs::read_to_string(lab_file("13-mpijob-slots/solution/mpijob.yaml")).unwrap();
    let typos = text
        .replace("  slotsPerWorker: 8", "  slotsPerWorkers: 8")
        .replace("  sshAuthMountPath:", "  sshAuthMountPaths:");
    let file = write_file(&c, "mpijob.yaml", &typos);
    let (code, out, err) = c.run(&[
        "check",
        "13",
        "--files",
        file.to_str().unwrap(),
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    let report = json_of(&out);
    let refused = &report["server_dry_run"]["refused"][0];
    assert_eq!(
        refused["message"],
        "failed to create typed patch object (trainlab-mpijob-slots/nccl-allreduce; kubeflow.org/v2beta1, Kind=MPIJob): errors:\n  .spec.slotsPerWorkers: field not declared in schema\n  .spec.sshAuthMountPaths: field not declared in schema"
    );
    assert_eq!(
        refused["fields"],
        json!([".spec.slotsPerWorkers", ".spec.sshAuthMountPaths"])
    );
    // The slots check failed on its own already (slotsPerWorker unset: 1); it keeps its hint and
    // says the server's refusal too.
    let slots = outcome(&report, "slots-match-gpus");
    assert_eq!(slots["status"], "fail");
    assert!(slots["hint"].is_string(), "{slots}");
    assert!(
        slots["reason"]
            .as_str()
            .unwrap()
            .contains(".spec.slotsPerWorkers: field not declared in schema"),
        "{slots}"
    );
}
