//! What `start`, `solve` and `reset` write, against the Kubernetes API emulator
//! (tests/support/emulator/), with the learner's own writes sent the way kubectl sends them:
//! - reset finds what the learner applied from a draft by its `trainlab.dev/lab` label, lists an
//!   object the task names that lacks the label with the `kubectl delete` for it (exit 1), reports
//!   kinds it cannot search (exit 3) or the cluster does not serve;
//! - reset waits for the namespace to finish terminating, or says it still is (exit 4), and
//!   `start` refuses a terminating namespace instead of racing it;
//! - `start` applies without force: a starter field the learner changed is a conflict naming the
//!   field and its manager, and nothing is written; only `solve` forces;
//! - `--learner NAME` puts a learner's copy where `grade --learners NAME` looks: their namespace,
//!   and the task's cluster-scoped objects (the draft's too) named `NAME-<name>`; reset
//!   `--learner` removes only theirs.

use crate::support::emulator;
use crate::support::live::{self, Crd, CONTEXT};

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use emulator::{Fault, Recorded};
use serde_json::{json, Value};

const LAB_LABEL: &str = "trainlab.dev/lab";
const NODEPOOLS: &str = "/apis/karpenter.sh/v1/nodepools";

// --- helpers ----------------------------------------------------------------------------------

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The kind nodes (every gradable lab's live tests start from them).
fn nodes() -> Vec<Value> {
    let dir = root().join("tests/data/kind-nodes");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for doc in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
            match doc["items"].as_array() {
                Some(items) => out.extend(items.iter().cloned()),
                None if doc.is_object() => out.push(doc),
                None => {}
            }
        }
    }
    out
}

/// The shared live harness (`tests/support/live.rs`) serving Volcano's CRDs, and Karpenter's
/// only when `karpenter`; what these tests add to it is below.
struct Cluster(live::Cluster);

impl std::ops::Deref for Cluster {
    type Target = live::Cluster;
    fn deref(&self) -> &live::Cluster {
        &self.0
    }
}

impl Cluster {
    fn new(seed: Vec<Value>, karpenter: bool) -> Cluster {
        let crds: &[Crd] = if karpenter {
            &[Crd::Volcano, Crd::Karpenter]
        } else {
            &[Crd::Volcano]
        };
        Cluster(live::Cluster::start(seed, crds))
    }

    /// `trainlab ARGS --request-timeout 2s` against this emulator, in its scratch folder:
    /// (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut c = self.cmd(args);
        c.args(["--request-timeout", "2s"]);
        live::output(c)
    }

    fn has(&self, kind: &str, namespace: Option<&str>, name: &str) -> bool {
        self.object(kind, namespace, name).is_some()
    }

    /// Every stored object labelled for `lab`, as `Kind/name`.
    fn labelled(&self, lab: &str) -> Vec<String> {
        self.emu
            .objects()
            .iter()
            .filter(|o| o["metadata"]["labels"][LAB_LABEL] == lab)
            .map(|o| format!("{}/{}", o["kind"].as_str().unwrap(), o["metadata"]["name"]))
            .collect()
    }

    /// One request as the learner's kubectl sends it (its User-Agent, JSON or YAML body):
    /// (status code, answer).
    fn kubectl(&self, method: &str, path: &str, content_type: &str, body: &str) -> (u16, Value) {
        let addr = self.emu.url().trim_start_matches("http://").to_string();
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: kubectl/v1.33.1 (linux/amd64) kubernetes/8adc0f0\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, answer) = response.split_once("\r\n\r\n").unwrap();
        let code = head.split(' ').nth(1).unwrap().parse().unwrap();
        (code, serde_json::from_str(answer).unwrap_or(Value::Null))
    }

    /// `kubectl apply -f FILE` for a new object: client-side apply creates it as the
    /// `kubectl-client-side-apply` field manager.
    fn kubectl_apply_new(&self, collection: &str, manifest: &Value) {
        let path = format!("{collection}?fieldManager=kubectl-client-side-apply");
        let (code, answer) = self.kubectl("POST", &path, "application/json", &manifest.to_string());
        assert_eq!(code, 201, "{answer}");
    }

    /// `kubectl edit`: a merge patch by the `kubectl-edit` field manager.
    fn kubectl_edit(&self, path: &str, patch: Value) {
        let (code, answer) = self.kubectl(
            "PATCH",
            &format!("{path}?fieldManager=kubectl-edit"),
            "application/merge-patch+json",
            &patch.to_string(),
        );
        assert_eq!(code, 200, "{answer}");
    }
}

/// The one object of a YAML file, as JSON.
fn manifest(path: &Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn is_write(r: &Recorded) -> bool {
    matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")
}

fn is_dry_run(r: &Recorded) -> bool {
    r.query.split('&').any(|p| p == "dryRun=All")
}

/// `METHOD path` of every write that was not a dry run.
fn real_writes(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .filter(|r| is_write(r) && !is_dry_run(r))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn node_pool(name: &str, labels: Value) -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": name, "labels": labels},
        "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [],
        }}},
    })
}

// --- 1. reset finds what the learner applied ----------------------------------------------------

#[test]
fn reset_deletes_the_nodepool_the_learner_applied_from_the_draft_before_its_node_class() {
    let c = Cluster::new(nodes(), true);
    let (code, stdout, stderr) = c.run(&["start", "15"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("EC2NodeClass/default created"), "{stdout}");
    // The learner applies the draft as written (its label included).
    let draft = manifest(&c.dir.path().join("nodepool.yaml"));
    assert_eq!(
        draft["metadata"]["labels"][LAB_LABEL],
        "karpenter-single-az"
    );
    c.kubectl_apply_new(NODEPOOLS, &draft);

    c.emu.clear_requests();
    let (code, stdout, stderr) = c.run(&["reset", "15", "--yes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for line in [
        "deleted NodePool/gpu-training",
        "deleted EC2NodeClass/default",
        "deleted Namespace/trainlab-karpenter-single-az",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    assert!(
        c.labelled("karpenter-single-az").is_empty(),
        "{:?}",
        c.labelled("karpenter-single-az")
    );
    assert!(!c.has("NodePool", None, "gpu-training"));
    // The NodePool goes before the node class it points at.
    assert_eq!(
        real_writes(&c.emu.requests()),
        [
            "DELETE /apis/karpenter.sh/v1/nodepools/gpu-training",
            "DELETE /apis/karpenter.k8s.aws/v1/ec2nodeclasses/default",
            "DELETE /api/v1/namespaces/trainlab-karpenter-single-az",
        ]
    );
    // Dependents are deleted too, as `kubectl delete` does (a batch/v1 Job would orphan its pods).
    let delete = c
        .emu
        .requests()
        .into_iter()
        .find(|r| r.method == "DELETE")
        .unwrap();
    assert!(
        delete.body.contains("\"propagationPolicy\":\"Background\""),
        "{}",
        delete.body
    );
}

#[test]
fn an_unlabelled_object_the_task_names_is_listed_with_its_kubectl_command_never_deleted() {
    let c = Cluster::new(nodes(), true);
    let (code, _, stderr) = c.run(&["start", "15"]);
    assert_eq!(code, 0, "{stderr}");
    // The learner removed the label before applying.
    let mut draft = manifest(&c.dir.path().join("nodepool.yaml"));
    draft["metadata"].as_object_mut().unwrap().remove("labels");
    c.kubectl_apply_new(NODEPOOLS, &draft);

    c.emu.clear_requests();
    let (code, stdout, stderr) = c.run(&["reset", "15", "--yes", "--context", CONTEXT]);
    assert_eq!(code, 1, "something was left → exit 1\n{stdout}\n{stderr}");
    assert!(
        c.has("NodePool", None, "gpu-training"),
        "never deleted silently"
    );
    assert!(
        stdout.contains(&format!(
            "kubectl --context {CONTEXT} delete nodepools.karpenter.sh gpu-training\n"
        )),
        "never left silently: {stdout}"
    );
    assert!(
        stdout.contains("lack the trainlab.dev/lab label"),
        "{stdout}"
    );
    // What trainlab labelled went, as usual.
    assert!(!c.has("EC2NodeClass", None, "default"));
    assert!(!c.has("Namespace", None, "trainlab-karpenter-single-az"));
    assert!(
        real_writes(&c.emu.requests())
            .iter()
            .all(|w| !w.contains("nodepools")),
        "{:?}",
        real_writes(&c.emu.requests())
    );

    // The learner runs the printed command; reset then has nothing left to report.
    let (code, answer) = c.kubectl(
        "DELETE",
        "/apis/karpenter.sh/v1/nodepools/gpu-training",
        "application/json",
        "",
    );
    assert_eq!(code, 200, "{answer}");
    let (code, stdout, _) = c.run(&["reset", "15", "--yes"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("nothing to reset"), "{stdout}");
    assert!(!stdout.contains("kubectl"), "{stdout}");
}

#[test]
fn in_a_workshop_the_prefix_names_the_learners_objects_and_spares_other_learners() {
    let mut seed = nodes();
    seed.push(node_pool("alice-gpu-training", json!({})));
    seed.push(node_pool(
        "bob-gpu-training",
        json!({LAB_LABEL: "karpenter-single-az"}),
    ));
    seed.push(node_pool(
        "alice-scratch",
        json!({LAB_LABEL: "karpenter-single-az"}),
    ));
    let c = Cluster::new(seed, true);
    let (code, stdout, stderr) = c.run(&[
        "reset",
        "15",
        "-n",
        "alice-karpenter-single-az",
        "--name-prefix",
        "alice-",
        "--yes",
    ]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("deleted NodePool/alice-scratch"),
        "{stdout}"
    );
    assert!(
        stdout.contains("kubectl delete nodepools.karpenter.sh alice-gpu-training\n"),
        "the task's name with the prefix: {stdout}"
    );
    assert!(
        stdout.contains("kept (labelled for this lab, but not yours: without your prefix alice-, or another learner's): NodePool/bob-gpu-training"),
        "{stdout}"
    );
    assert!(c.has("NodePool", None, "bob-gpu-training"));
    assert!(c.has("NodePool", None, "alice-gpu-training"));
    assert!(!c.has("NodePool", None, "alice-scratch"));
}

#[test]
fn in_a_namespace_trainlab_did_not_create_reset_deletes_labelled_objects_of_every_lab_kind() {
    let mut seed = nodes();
    seed.push(namespace("team-a"));
    // The learner's Job without the label, a labelled PodGroup (a kind only the verifier reads)
    // and a Node that carries the label (a NodePool's template labels reach its nodes).
    seed.push(json!({
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "metadata": {"name": "gang-train", "namespace": "team-a"},
        "spec": {"minAvailable": 4, "tasks": []},
    }));
    seed.push(json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "leftover", "namespace": "team-a", "labels": {LAB_LABEL: "volcano-gang"}},
        "spec": {"minMember": 4},
    }));
    let mut labelled_node = nodes().into_iter().find(|n| n["kind"] == "Node").unwrap();
    labelled_node["metadata"]["name"] = json!("labelled-node");
    labelled_node["metadata"]["labels"][LAB_LABEL] = json!("volcano-gang");
    seed.push(labelled_node);
    let c = Cluster::new(seed, false);

    let (code, stdout, stderr) = c.run(&["reset", "9", "-n", "team-a", "--yes"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("deleted PodGroup/leftover in namespace team-a"),
        "{stdout}"
    );
    assert!(
        stdout.contains("kubectl delete jobs.batch.volcano.sh gang-train -n team-a\n"),
        "{stdout}"
    );
    assert!(stdout.contains("kept Namespace/team-a"), "{stdout}");
    assert!(c.has("Job", Some("team-a"), "gang-train"));
    assert!(
        c.has("Node", None, "labelled-node"),
        "nodes are never deleted"
    );
    assert!(c.has("Namespace", None, "team-a"));
}

/// The same reset under `--lang ja` (issue 31 §5): what it deleted, kept and left is said in
/// Japanese, the names and the kubectl command as they are.
#[test]
fn reset_says_what_it_deleted_kept_and_left_in_japanese() {
    let mut seed = nodes();
    seed.push(namespace("team-a"));
    seed.push(json!({
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "metadata": {"name": "gang-train", "namespace": "team-a"},
        "spec": {"minAvailable": 4, "tasks": []},
    }));
    seed.push(json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "leftover", "namespace": "team-a", "labels": {LAB_LABEL: "volcano-gang"}},
        "spec": {"minMember": 4},
    }));
    let c = Cluster::new(seed, false);
    let (code, stdout, stderr) = c.run(&["--lang", "ja", "reset", "9", "-n", "team-a", "--yes"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    for said in [
        "削除しました: PodGroup/leftover（名前空間 team-a）",
        "Namespace/team-a は残しました: trainlab.dev/lab=volcano-gang のラベルがありません",
        "クラスターに残っています: 課題が名前を挙げるものですが",
        "kubectl delete jobs.batch.volcano.sh gang-train -n team-a\n",
    ] {
        assert!(stdout.contains(said), "{said:?}:\n{stdout}");
    }
    for english in [
        "deleted ",
        "in namespace",
        "kept Namespace",
        "left on the cluster",
    ] {
        assert!(!stdout.contains(english), "{english:?}:\n{stdout}");
    }
}

#[test]
fn kinds_the_cluster_does_not_serve_are_reported_and_kinds_reset_cannot_search_exit_3() {
    // No Karpenter CRDs: nothing of those kinds can exist, and reset says so.
    let c = Cluster::new(nodes(), false);
    let (code, stdout, stderr) = c.run(&["reset", "15", "--yes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "not served by this cluster, so nothing of these kinds exists: NodePool (karpenter.sh), EC2NodeClass (karpenter.k8s.aws), NodeClaim (karpenter.sh)"
        ),
        "{stdout}"
    );

    // Served, but listing NodePools is forbidden: reset cannot know what is left.
    let c = Cluster::new(nodes(), true);
    c.emu.fault(
        Some("GET"),
        NODEPOOLS,
        false,
        Fault::Status(403, "nodepools.karpenter.sh is forbidden: User \"learner\" cannot list resource \"nodepools\"".into()),
    );
    let (code, stdout, stderr) = c.run(&["reset", "15", "--yes"]);
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("could not be searched, so objects of these kinds may be left:"),
        "{stdout}"
    );
    assert!(stdout.contains("NodePool"), "{stdout}");
}

/// Every lab's draft carries the lab label, with a comment on the same line telling the learner
/// to keep it for `trainlab reset`.
#[test]
fn every_draft_object_carries_the_lab_label_with_a_comment_to_keep_it() {
    let labs = root().join("labs");
    let mut drafts = 0;
    for lab in std::fs::read_dir(&labs).unwrap() {
        let dir = lab.unwrap().path();
        let Ok(files) = std::fs::read_dir(dir.join("draft")) else {
            continue;
        };
        let lab_yaml: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(dir.join("lab.yaml")).unwrap())
                .unwrap();
        let id = lab_yaml["id"].as_str().unwrap().to_string();
        for file in files {
            let path = file.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for doc in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
                if doc.is_null() {
                    continue;
                }
                drafts += 1;
                assert_eq!(
                    doc["metadata"]["labels"][LAB_LABEL],
                    id,
                    "{}: {} {}",
                    path.display(),
                    doc["kind"],
                    doc["metadata"]["name"]
                );
            }
            for line in text.lines().filter(|l| l.contains("trainlab.dev/lab:")) {
                assert!(
                    line.contains('#') && line.contains("trainlab reset"),
                    "{}: a comment saying reset needs the label: {line}",
                    path.display()
                );
            }
        }
    }
    assert!(drafts >= 4, "the labs with drafts were found ({drafts})");
}

// --- 2. reset waits for the namespace -----------------------------------------------------------

#[test]
fn reset_waits_for_the_namespace_to_finish_terminating_and_shows_it() {
    let c = Cluster::new(nodes(), false);
    c.emu
        .terminate_namespaces_after(Duration::from_millis(2500));
    let (code, _, stderr) = c.run(&["start", "9"]);
    assert_eq!(code, 0, "{stderr}");

    let started = Instant::now();
    let (code, stdout, stderr) = c.run(&["reset", "9", "--yes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        started.elapsed() >= Duration::from_millis(2400),
        "returned after {:?}",
        started.elapsed()
    );
    assert!(
        stderr
            .contains("waiting up to 2m for Namespace/trainlab-volcano-gang to finish terminating"),
        "{stderr}"
    );
    assert!(
        stdout.contains("Namespace/trainlab-volcano-gang is gone"),
        "{stdout}"
    );
    assert!(!c.has("Namespace", None, "trainlab-volcano-gang"));

    // A start right after does not race anything.
    let (code, stdout, stderr) = c.run(&["start", "9", "--force"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Namespace/trainlab-volcano-gang created"),
        "{stdout}"
    );
}

#[test]
fn a_namespace_still_terminating_is_said_plainly_and_start_refuses_it_instead_of_racing_it() {
    let c = Cluster::new(nodes(), false);
    c.emu.terminate_namespaces_after(Duration::from_secs(120));
    let (code, _, stderr) = c.run(&["start", "9"]);
    assert_eq!(code, 0, "{stderr}");

    let (code, stdout, stderr) = c.run(&["reset", "9", "--yes", "--wait", "1s"]);
    assert_eq!(code, 4, "still terminating → exit 4\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("Namespace/trainlab-volcano-gang is still terminating"),
        "{stdout}"
    );
    let ns = c
        .object("Namespace", None, "trainlab-volcano-gang")
        .unwrap();
    assert_eq!(ns["status"]["phase"], "Terminating");

    // Again: nothing more is deleted, it is still said.
    c.emu.clear_requests();
    let (code, stdout, _) = c.run(&["reset", "9", "--yes", "--wait", "0s"]);
    assert_eq!(code, 4, "{stdout}");
    assert!(stdout.contains("already terminating"), "{stdout}");
    assert!(real_writes(&c.emu.requests()).is_empty());

    // start refuses before writing anything, and says what to wait for.
    c.emu.clear_requests();
    let (code, stdout, stderr) = c.run(&["start", "9", "--force"]);
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("Namespace/trainlab-volcano-gang is still terminating"),
        "{stderr}"
    );
    assert!(
        stderr.contains("kubectl get namespace trainlab-volcano-gang"),
        "{stderr}"
    );
    let writes: Vec<String> = c
        .emu
        .requests()
        .iter()
        .filter(|r| is_write(r))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
}

// --- 3. start never takes the learner's fields --------------------------------------------------

const SETTINGS: &str = "/api/v1/namespaces/trainlab-volcano-gang/configmaps/gang-settings";

/// A copy of the labs whose lab 9 starter also has a ConfigMap the learner may edit.
fn labs_with_a_starter_config_map() -> tempfile::TempDir {
    let labs = tempfile::tempdir().unwrap();
    copy_dir(&root().join("labs"), labs.path());
    std::fs::write(
        labs.path().join("09-volcano-gang/starter/settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gang-settings\ndata:\n  queue: default\n  nodes: \"3\"\n",
    )
    .unwrap();
    labs
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// (manager, operation, FieldsV1) of each managedFields entry.
fn owners(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

#[test]
fn start_again_names_the_field_the_learner_changed_and_its_manager_and_writes_nothing() {
    let labs = labs_with_a_starter_config_map();
    let labs_dir = labs.path().to_str().unwrap();
    let c = Cluster::new(nodes(), false);
    let (code, stdout, stderr) = c.run(&["--labs-dir", labs_dir, "start", "9"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ConfigMap/gang-settings created"),
        "{stdout}"
    );
    let patches: Vec<Recorded> = c
        .emu
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    assert!(!patches.is_empty());
    for p in &patches {
        assert!(p.query.contains("fieldManager=trainlab"), "{}", p.query);
        assert!(
            !p.query.contains("force"),
            "start never forces: {}",
            p.query
        );
    }

    // The learner changes the queue with `kubectl edit`, then runs start again.
    c.kubectl_edit(SETTINGS, json!({"data": {"queue": "research"}}));
    let edited = c
        .object("ConfigMap", Some("trainlab-volcano-gang"), "gang-settings")
        .unwrap();
    std::fs::remove_file(c.dir.path().join("gang-train.yaml")).unwrap();
    c.emu.clear_requests();
    let (code, stdout, stderr) = c.run(&["--labs-dir", labs_dir, "start", "9"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    for said in [
        "ConfigMap/gang-settings .data.queue: now managed by \"kubectl-edit\" using v1",
        "Your edits are kept",
        "trainlab reset volcano-gang --yes && trainlab start volcano-gang",
        "`trainlab start --force` only rewrites the draft file",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    assert!(
        !stderr.contains(".data.nodes"),
        "only the changed field: {stderr}"
    );
    assert_eq!(
        c.object("ConfigMap", Some("trainlab-volcano-gang"), "gang-settings")
            .unwrap(),
        edited,
        "the learner's edit is kept"
    );
    assert!(
        real_writes(&c.emu.requests()).is_empty(),
        "{:?}",
        real_writes(&c.emu.requests())
    );
    assert!(
        !c.dir.path().join("gang-train.yaml").exists(),
        "nothing written, the draft neither"
    );
}

#[test]
fn start_keeps_fields_the_starter_does_not_set_and_only_solve_takes_the_learners_fields() {
    let labs = labs_with_a_starter_config_map();
    let labs_dir = labs.path().to_str().unwrap();
    let c = Cluster::new(nodes(), false);
    let (code, _, stderr) = c.run(&["--labs-dir", labs_dir, "start", "9"]);
    assert_eq!(code, 0, "{stderr}");

    // A key the starter does not set is the learner's alone: start leaves it and changes nothing.
    c.kubectl_edit(SETTINGS, json!({"data": {"extra": "1"}}));
    let (code, stdout, stderr) = c.run(&["--labs-dir", labs_dir, "start", "9", "--force"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ConfigMap/gang-settings unchanged"),
        "{stdout}"
    );
    let map = c
        .object("ConfigMap", Some("trainlab-volcano-gang"), "gang-settings")
        .unwrap();
    assert_eq!(map["data"]["extra"], "1");

    // solve forces: the queue the learner changed is the solution's again, and trainlab's.
    c.kubectl_edit(SETTINGS, json!({"data": {"queue": "research"}}));
    c.emu.clear_requests();
    let (code, stdout, stderr) = c.run(&["--labs-dir", labs_dir, "solve", "9"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ConfigMap/gang-settings configured"),
        "{stdout}"
    );
    for p in c.emu.requests().iter().filter(|r| r.method == "PATCH") {
        assert!(p.query.contains("force=true"), "solve forces: {}", p.query);
    }
    let map = c
        .object("ConfigMap", Some("trainlab-volcano-gang"), "gang-settings")
        .unwrap();
    assert_eq!(map["data"]["queue"], "default");
    assert_eq!(map["data"]["extra"], "1", "what solve does not set stays");
    assert_eq!(
        owners(&map),
        [
            (
                "trainlab".to_string(),
                "Apply".to_string(),
                json!({
                    "f:data": {"f:nodes": {}, "f:queue": {}},
                    "f:metadata": {"f:labels": {"f:trainlab.dev/lab": {}}},
                })
            ),
            (
                "kubectl-edit".to_string(),
                "Update".to_string(),
                json!({"f:data": {"f:extra": {}}})
            ),
        ]
    );
}

// --- 4. a workshop learner: start/solve/reset --learner NAME ------------------------------------

/// `check → status` of one learner's cell of lab `lab` in `grade -o json`.
fn graded(board: &Value, learner: &str, lab: &str) -> Vec<(String, String)> {
    let row = board["learners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == learner)
        .unwrap_or_else(|| panic!("no learner {learner}: {board}"));
    let cell = row["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["lab"] == lab)
        .unwrap();
    cell["report"]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["check"].as_str().unwrap().to_string(),
                o["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn solve_as_a_learner_puts_the_lab_where_grade_looks_and_grade_finds_it() {
    let c = Cluster::new(nodes(), true);
    let (code, stdout, stderr) = c.run(&["solve", "15", "--learner", "alice"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for line in [
        "Namespace/alice-karpenter-single-az created",
        "EC2NodeClass/default created",
        "NodePool/alice-gpu-training created",
        "grade it with `trainlab grade karpenter-single-az --learners alice`",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let pool = c.object("NodePool", None, "alice-gpu-training").unwrap();
    assert_eq!(pool["metadata"]["labels"][LAB_LABEL], "karpenter-single-az");
    // The shared node class of the starter keeps its name, and the pool still points at it.
    assert_eq!(
        pool["spec"]["template"]["spec"]["nodeClassRef"]["name"],
        "default"
    );
    assert!(c.has("EC2NodeClass", None, "default"));
    assert!(!c.has("NodePool", None, "gpu-training"));
    assert!(!c.has("Namespace", None, "trainlab-karpenter-single-az"));
    let writes = real_writes(&c.emu.requests());
    assert!(
        writes.contains(&"PATCH /apis/karpenter.sh/v1/nodepools/alice-gpu-training".to_string()),
        "{writes:?}"
    );
    assert!(
        writes.contains(&"PATCH /api/v1/namespaces/alice-karpenter-single-az".to_string()),
        "{writes:?}"
    );

    // The instructor grades the room on the shared cluster: alice's pool is found by its
    // prefixed name and passes; bob, who did nothing, has no pool.
    let (code, stdout, stderr) = c.run(&["grade", "15", "--learners", "alice,bob", "-o", "json"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let board: Value = serde_json::from_str(&stdout).unwrap();
    let alice = graded(&board, "alice", "karpenter-single-az");
    for check in [
        "zone-single",
        "zone-exists",
        "efa-instance-types",
        "on-demand",
        "node-class-ref",
    ] {
        assert!(
            alice.contains(&(check.to_string(), "pass".to_string())),
            "{check}: {alice:?}"
        );
    }
    assert!(
        graded(&board, "bob", "karpenter-single-az")
            .iter()
            .any(|(check, status)| check == "zone-single" && status == "fail"),
        "{board}"
    );

    // --dry-run shows the same names without a cluster.
    let (code, stdout, _) = c.run(&["solve", "15", "--learner", "carol", "--dry-run"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("name: carol-gpu-training"), "{stdout}");
    assert!(
        stdout.contains("name: carol-karpenter-single-az"),
        "{stdout}"
    );
    assert!(stdout.contains("  name: default"), "{stdout}");

    // The learner checks their own lab as grade does: live, and their files in static mode.
    let (code, stdout, stderr) = c.run(&["check", "15", "--learner", "alice", "-o", "json"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let own: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(own["target"]["namespace"], "alice-karpenter-single-az");
    assert_eq!(own["target"]["name_prefix"], "alice-");
    let carol = c.dir.path().join("carol.yaml");
    let (_, plan, _) = c.run(&["solve", "15", "--learner", "carol", "--dry-run"]);
    std::fs::write(&carol, plan).unwrap();
    let files = [
        "check",
        "15",
        "--profile",
        "kind",
        "--files",
        carol.to_str().unwrap(),
    ];
    let (code, stdout, stderr) =
        c.run(&[&["--lang", "en"][..], &files[..], &["--learner", "carol"]].concat());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Without --learner the task's own name is looked for, and carol's pool is not it.
    let (code, stdout, _) = c.run(&[&["--lang", "en"][..], &files[..]].concat());
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("gpu-training"), "{stdout}");
}

/// Whether the kinds table says a draft object is cluster-scoped (unknown kinds: namespaced).
fn cluster_scoped(doc: &Value) -> bool {
    let (api_version, kind) = (
        doc["apiVersion"].as_str().unwrap(),
        doc["kind"].as_str().unwrap(),
    );
    trainlab::observe::kinds::ALL
        .iter()
        .find(|k| k.matches(api_version, kind))
        .is_some_and(|k| !k.namespaced)
}

#[test]
fn start_as_a_learner_writes_every_labs_draft_with_the_prefixed_names_and_its_comments() {
    let c = Cluster::new(nodes(), false);
    let mut prefixed = 0;
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    for lab in catalog.labs.iter().filter(|b| b.lab.is_gradable()) {
        let Some(draft) = lab.lab.task.as_ref().and_then(|t| t.draft.as_ref()) else {
            continue;
        };
        let id = lab.lab.id.clone();
        let original = lab.files[draft].clone();
        let out = c.dir.path().join(format!("{id}.yaml"));
        let (code, stdout, stderr) = c.run(&[
            "start",
            &id,
            "--draft-only",
            "--learner",
            "alice",
            "--draft",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{id}: {stdout}\n{stderr}");
        assert!(
            stdout.contains(&format!("trainlab start {id} --learner alice")),
            "{id}: {stdout}"
        );
        assert!(
            stdout.contains(&format!("trainlab check {id} --learner alice --files")),
            "{id}: {stdout}"
        );
        let written = std::fs::read_to_string(&out).unwrap();
        let before: Vec<Value> = serde_saphyr::from_multiple(&original).unwrap();
        let after: Vec<Value> = serde_saphyr::from_multiple(&written).unwrap();
        assert_eq!(before.len(), after.len(), "{id}");
        let mut renamed = Vec::new();
        for (b, a) in before.iter().zip(&after).filter(|(b, _)| !b.is_null()) {
            let name = b["metadata"]["name"].as_str().unwrap();
            let want = if cluster_scoped(b) {
                renamed.push(name.to_string());
                format!("alice-{name}")
            } else {
                name.to_string()
            };
            assert_eq!(a["metadata"]["name"], want.as_str(), "{id}");
            assert_eq!(
                a["metadata"]["labels"], b["metadata"]["labels"],
                "{id}: the lab label stays"
            );
        }
        prefixed += renamed.len();
        // Every line but the renamed names (and the fields naming them) is the draft's own.
        assert_eq!(original.lines().count(), written.lines().count(), "{id}");
        for (o, w) in original
            .lines()
            .zip(written.lines())
            .filter(|(o, w)| o != w)
        {
            assert!(
                renamed
                    .iter()
                    .any(|n| *w == o.replacen(n.as_str(), &format!("alice-{n}"), 1)),
                "{id}: only a name gets the prefix:\n  {o}\n  {w}"
            );
        }
    }
    assert!(
        prefixed >= 1,
        "a draft with a cluster-scoped object was tried"
    );
}

#[test]
fn start_as_a_learner_on_a_cluster_prints_the_learners_namespace_and_grade_command() {
    let c = Cluster::new(nodes(), true);
    let (code, stdout, stderr) = c.run(&["start", "15", "--learner", "alice"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for line in [
        "Namespace/alice-karpenter-single-az created",
        "EC2NodeClass/default created",
        "kubectl apply -n alice-karpenter-single-az -f nodepool.yaml",
        "trainlab grade karpenter-single-az --learners alice",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let draft = manifest(&c.dir.path().join("nodepool.yaml"));
    assert_eq!(draft["metadata"]["name"], "alice-gpu-training");
    // The learner applies it as written; grade finds it by the learner's prefix.
    c.kubectl_apply_new(NODEPOOLS, &draft);
    let (code, stdout, stderr) = c.run(&["grade", "15", "--learners", "alice", "-o", "json"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let board: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        graded(&board, "alice", "karpenter-single-az")
            .contains(&("node-class-ref".to_string(), "pass".to_string())),
        "found by its name: {board}"
    );
}

#[test]
fn reset_as_a_learner_deletes_theirs_and_keeps_other_learners_and_the_shared_node_class() {
    let mut seed = nodes();
    // Learner `alice-b`'s pool starts with `alice-` too.
    seed.push(node_pool(
        "alice-b-gpu-training",
        json!({LAB_LABEL: "karpenter-single-az"}),
    ));
    let c = Cluster::new(seed, true);
    for learner in ["alice", "bob"] {
        let (code, stdout, stderr) = c.run(&["solve", "15", "--learner", learner]);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
    }
    c.emu.clear_requests();
    let (code, stdout, stderr) = c.run(&["reset", "15", "--learner", "alice", "--yes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        real_writes(&c.emu.requests()),
        [
            "DELETE /apis/karpenter.sh/v1/nodepools/alice-gpu-training",
            "DELETE /api/v1/namespaces/alice-karpenter-single-az",
        ]
    );
    assert!(
        stdout.contains("kept (labelled for this lab, but not yours"),
        "{stdout}"
    );
    for kept in [
        "NodePool/bob-gpu-training",
        "NodePool/alice-b-gpu-training",
        "EC2NodeClass/default",
    ] {
        assert!(stdout.contains(kept), "{kept}: {stdout}");
    }
    assert!(!c.has("NodePool", None, "alice-gpu-training"));
    assert!(!c.has("Namespace", None, "alice-karpenter-single-az"));
    assert!(c.has("NodePool", None, "bob-gpu-training"));
    assert!(c.has("NodePool", None, "alice-b-gpu-training"));
    assert!(c.has("Namespace", None, "bob-karpenter-single-az"));
    assert!(c.has("EC2NodeClass", None, "default"));

    // --learner is --name-prefix NAME- plus the namespace: a different prefix is refused.
    c.emu.clear_requests();
    let (code, _, stderr) = c.run(&[
        "reset",
        "15",
        "--learner",
        "bob",
        "--name-prefix",
        "alice-",
        "--yes",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--learner bob"), "{stderr}");
    assert!(c.emu.requests().is_empty());
    let (code, stdout, stderr) = c.run(&[
        "reset",
        "15",
        "--learner",
        "bob",
        "--name-prefix",
        "bob-",
        "--yes",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!c.has("NodePool", None, "bob-gpu-training"));
}

#[test]
fn a_learner_name_that_cannot_be_part_of_a_name_is_refused_with_what_is_allowed() {
    let c = Cluster::new(nodes(), true);
    let long = "a".repeat(64);
    for bad in ["Alice", "al_ice", "-alice", long.as_str()] {
        let flag = format!("--learner={bad}");
        for args in [
            vec!["start", "15", &flag, "--draft-only"],
            vec!["solve", "15", &flag],
            vec!["reset", "15", &flag, "--yes"],
        ] {
            let (code, _, stderr) = c.run(&args);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(
                stderr.contains("lowercase letters, digits and `-`"),
                "{args:?}: {stderr}"
            );
        }
    }
    // A valid name whose namespace would be too long says so, and how to go on.
    let (code, _, stderr) = c.run(&["solve", "15", "--learner", &"a".repeat(50)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("63 characters"), "{stderr}");
    assert!(real_writes(&c.emu.requests()).is_empty());
}
