//! Offline sources: a snapshot folder of saved `kubectl get -o yaml` output (Lists,
//! multi-document YAML, JSON, nested folders), the learner's files (static mode), and the errors
//! bad input gives — each naming the file and the document, never a panic.

use std::path::{Path, PathBuf};

use trainlab::observe::{kinds, sources, InputError, Obj, Observed, Query, Unavailable};

const NS: &str = "trainlab-volcano-gang";

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sources")
        .join(rel)
}

fn snapshot() -> Observed {
    sources::snapshot(&data("snapshot")).expect("the snapshot fixture loads")
}

/// `namespace/name` of the objects a query returns, sorted, for order-independent comparison.
fn names(objs: &[&Obj]) -> Vec<String> {
    let mut v: Vec<String> = objs
        .iter()
        .map(|o| format!("{}/{}", o.namespace().unwrap_or("-"), o.name()))
        .collect();
    v.sort();
    v
}

fn list(obs: &Observed, q: Query) -> Vec<String> {
    let objs = obs
        .list(&q)
        .unwrap_or_else(|u| panic!("{} should be answerable, got: {u}", q.describe()));
    names(&objs)
}

// ---------------------------------------------------------------------------------------------
// Snapshot folders

#[test]
fn snapshot_reads_lists_multi_document_yaml_json_and_nested_folders_but_not_readme() {
    let obs = snapshot();
    let mut kinds: Vec<String> = obs
        .objects()
        .iter()
        .map(|o| format!("{} {}", o.kind(), o.name()))
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "ConfigMap train-config",
            "Job gang-train",
            "Node trainlab-worker", // nested/cluster/nodes.yaml
            "Pod gang-train-launcher-0",
            "Pod gang-train-worker-0",
            "Pod gang-train-worker-0",
            "PodGroup gang-train-5f1c2a7e-0b3d-4e8a-9c61-2d4b7a9e0f13", // podgroups.json
        ],
        "README.md must be ignored and the List wrappers unwrapped (no `List` object)"
    );
    assert_eq!(obs.source.as_str(), "snapshot");
    assert!(
        obs.detail.ends_with("tests/data/sources/snapshot"),
        "{}",
        obs.detail
    );
}

#[test]
fn snapshot_objects_remember_file_document_and_list_item() {
    let obs = snapshot();
    let origin = |kind: &str, name: &str| {
        obs.objects()
            .into_iter()
            .find(|o| o.kind() == kind && o.name() == name)
            .unwrap_or_else(|| panic!("no {kind}/{name}"))
            .origin
            .to_string()
    };
    let launcher = origin("Pod", "gang-train-launcher-0");
    assert!(
        launcher.ends_with("snapshot/pods.yaml, document 1, item 2"),
        "{launcher}"
    );
    let cm = origin("ConfigMap", "train-config");
    assert!(cm.ends_with("snapshot/workloads.yaml, document 2"), "{cm}");
    let node = origin("Node", "trainlab-worker");
    assert!(
        node.ends_with("snapshot/nested/cluster/nodes.yaml, document 1, item 1"),
        "{node}"
    );
}

#[test]
fn snapshot_keeps_the_full_object_including_managed_fields() {
    let obs = snapshot();
    let pods = obs.list(&Query::new(&kinds::PODS, NS)).unwrap();
    let worker = pods
        .iter()
        .find(|o| o.name() == "gang-train-worker-0")
        .unwrap();
    assert_eq!(
        worker.value["metadata"]["managedFields"][0]["manager"],
        "vc-controller-manager"
    );
    assert_eq!(worker.uid(), Some("8d2f7b1c-3a4e-4f6d-9b0a-1c2e3f4a5b60"));
    assert_eq!(worker.label("volcano.sh/task-spec"), Some("worker"));
}

#[test]
fn listing_pods_filters_by_namespace() {
    let obs = snapshot();
    assert_eq!(
        list(&obs, Query::new(&kinds::PODS, NS)),
        [
            "trainlab-volcano-gang/gang-train-launcher-0",
            "trainlab-volcano-gang/gang-train-worker-0",
        ]
    );
    assert_eq!(
        list(&obs, Query::new(&kinds::PODS, "someone-else")),
        ["someone-else/gang-train-worker-0"]
    );
    assert!(list(&obs, Query::new(&kinds::PODS, "empty-namespace")).is_empty());
}

#[test]
fn listing_pods_filters_by_label_selector() {
    let obs = snapshot();
    let q = |sel: &str| list(&obs, Query::new(&kinds::PODS, NS).with_selector(sel));
    assert_eq!(
        q("role=worker"),
        ["trainlab-volcano-gang/gang-train-worker-0"]
    );
    assert_eq!(
        q("role==launcher"),
        ["trainlab-volcano-gang/gang-train-launcher-0"]
    );
    assert_eq!(
        q("app=gang-train,role!=launcher"),
        ["trainlab-volcano-gang/gang-train-worker-0"]
    );
    assert_eq!(
        q("volcano.sh/task-spec"),
        ["trainlab-volcano-gang/gang-train-worker-0"]
    );
    assert_eq!(
        q("!volcano.sh/task-spec"),
        ["trainlab-volcano-gang/gang-train-launcher-0"]
    );
    assert_eq!(q("volcano.sh/job-name=gang-train").len(), 2);
    assert!(q("role=ps").is_empty());
    // The pod in `someone-else` carries the same labels; the namespace still applies.
    assert_eq!(
        list(
            &obs,
            Query::new(&kinds::PODS, "someone-else").with_selector("role=worker")
        ),
        ["someone-else/gang-train-worker-0"]
    );
}

#[test]
fn kinds_match_by_group_so_a_volcano_job_is_not_a_batch_job() {
    let obs = snapshot();
    assert_eq!(
        list(&obs, Query::new(&kinds::VOLCANO_JOBS, NS)),
        ["trainlab-volcano-gang/gang-train"]
    );
    // The Volcano Job is no batch/v1 Job: the snapshot holds none, so none were saved.
    assert_eq!(
        obs.list(&Query::new(&kinds::JOBS, NS)).unwrap_err(),
        Unavailable::NotCaptured {
            resource: "jobs.batch".into()
        }
    );
    assert_eq!(
        list(&obs, Query::new(&kinds::PODGROUPS, NS)),
        ["trainlab-volcano-gang/gang-train-5f1c2a7e-0b3d-4e8a-9c61-2d4b7a9e0f13"]
    );
}

#[test]
fn snapshot_answers_state_kinds_such_as_nodes() {
    let obs = snapshot();
    assert_eq!(
        list(&obs, Query::cluster(&kinds::NODES)),
        ["-/trainlab-worker"]
    );
    // A cluster-scoped kind ignores the namespace given to Query::new.
    assert_eq!(
        list(&obs, Query::new(&kinds::NODES, NS)),
        ["-/trainlab-worker"]
    );
}

#[test]
fn a_snapshot_without_nodes_reports_them_not_captured_rather_than_an_empty_cluster() {
    let obs = sources::snapshot(&data("no-nodes")).expect("loads");
    assert_eq!(
        obs.list(&Query::cluster(&kinds::NODES)).unwrap_err(),
        Unavailable::NotCaptured {
            resource: "nodes".into()
        }
    );
    // A kind the folder holds no object of was not saved either (kubectl writes nothing for an
    // empty read): "no pods" would otherwise grade as "the pods were deleted".
    assert_eq!(
        obs.list(&Query::new(&kinds::PODS, NS)).unwrap_err(),
        Unavailable::NotCaptured {
            resource: "pods".into()
        }
    );
    assert_eq!(
        list(&obs, Query::new(&kinds::JOBS, NS)),
        ["trainlab-volcano-gang/pi"]
    );
}

#[test]
fn an_empty_read_saved_by_trainlab_snapshot_is_captured_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    let pods = Query::new(&kinds::PODS, NS);
    let jobs = Query::new(&kinds::VOLCANO_JOBS, NS);
    std::fs::write(
        dir.path()
            .join(trainlab::observe::save::file_name(0, &pods)),
        trainlab::observe::save::to_list_json(&pods, &[]),
    )
    .unwrap();
    let obs = sources::snapshot(dir.path()).expect("an empty but marked read loads");
    assert!(obs.list(&pods).unwrap().is_empty());
    assert_eq!(
        obs.list(&jobs).unwrap_err(),
        Unavailable::NotCaptured {
            resource: "jobs.batch.volcano.sh".into()
        }
    );
}

// ---------------------------------------------------------------------------------------------
// The learner's files (static mode)

fn learner_files() -> Observed {
    sources::files(&[data("manifests/gang.yaml")]).expect("the manifests fixture loads")
}

#[test]
fn static_mode_cannot_answer_state_only_kinds() {
    let obs = learner_files();
    assert_eq!(obs.source.as_str(), "files");
    // Even though the file holds a Pod: what the learner wrote is not what the cluster runs.
    assert_eq!(
        obs.list(&Query::new(&kinds::PODS, NS)).unwrap_err(),
        Unavailable::NeedsLiveCluster
    );
    assert_eq!(
        obs.list(&Query::cluster(&kinds::NODES)).unwrap_err(),
        Unavailable::NeedsLiveCluster
    );
    assert_eq!(
        obs.list(&Query::new(&kinds::PODGROUPS, NS)).unwrap_err(),
        Unavailable::NeedsLiveCluster
    );
}

#[test]
fn static_mode_returns_spec_kinds_and_a_manifest_without_namespace_matches_any_namespace() {
    let obs = learner_files();
    assert_eq!(
        list(&obs, Query::new(&kinds::VOLCANO_JOBS, NS)),
        ["-/gang-train"]
    );
    assert_eq!(
        list(&obs, Query::new(&kinds::VOLCANO_JOBS, "other-ns")),
        ["-/gang-train"]
    );
    assert_eq!(
        list(
            &obs,
            Query::new(&kinds::VOLCANO_JOBS, NS).with_selector("app=gang-train")
        ),
        ["-/gang-train"]
    );
    // An explicit namespace still has to match.
    assert!(list(&obs, Query::new(&kinds::CONFIGMAPS, NS)).is_empty());
    assert_eq!(
        list(&obs, Query::new(&kinds::CONFIGMAPS, "somewhere-else")),
        ["somewhere-else/train-config"]
    );
}

#[test]
fn static_mode_accepts_a_folder_and_several_paths() {
    let obs = sources::files(&[data("manifests"), data("no-nodes/jobs.yaml")]).unwrap();
    assert_eq!(
        list(&obs, Query::new(&kinds::VOLCANO_JOBS, NS)),
        ["-/gang-train"]
    );
    assert_eq!(
        list(&obs, Query::new(&kinds::JOBS, NS)),
        ["trainlab-volcano-gang/pi"]
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: a specific error naming file and document, never a panic

fn snapshot_err(rel: &str) -> InputError {
    match sources::snapshot(&data(rel)) {
        Ok(o) => panic!(
            "{rel} should be rejected, loaded {} objects",
            o.objects().len()
        ),
        Err(e) => e,
    }
}

#[test]
fn invalid_yaml_names_file_document_and_line() {
    let err = snapshot_err("bad/syntax");
    let shown = err.to_string();
    match &err {
        InputError::Syntax {
            path, doc, line, ..
        } => {
            assert!(path.ends_with("bad/syntax/state.yaml"), "{path}");
            assert_eq!(*doc, 2, "the first document is fine; the second is broken");
            let line = line.expect("a syntax error has a line");
            // The unclosed flow mapping opens on line 10; the parser notices at or after it.
            assert!((10..=12).contains(&line), "line {line}: {shown}");
            assert!(shown.contains(&format!("state.yaml:{line}")), "{shown}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    assert!(shown.contains("document 2"), "{shown}");
    // The same error through static mode.
    let via_files = sources::files(&[data("bad/syntax/state.yaml")]).unwrap_err();
    assert_eq!(via_files, err);
}

#[test]
fn a_list_item_that_is_not_an_object_names_file_document_and_item() {
    let err = snapshot_err("bad/list-item");
    assert!(matches!(err, InputError::NotAnObject { .. }), "{err:?}");
    let shown = err.to_string();
    assert!(
        shown.contains("bad/list-item/pods.yaml, document 1, item 2"),
        "{shown}"
    );
    assert!(
        shown.contains("apiVersion") && shown.contains("kind"),
        "{shown}"
    );
}

#[test]
fn a_document_without_api_version_and_kind_names_file_and_document() {
    let err = snapshot_err("bad/no-kind");
    assert!(matches!(err, InputError::NotAnObject { .. }), "{err:?}");
    let shown = err.to_string();
    assert!(
        shown.contains("bad/no-kind/objects.yaml, document 2"),
        "{shown}"
    );
    assert!(!shown.contains("item"), "not a List, so no item: {shown}");
}

#[test]
fn a_nonexistent_path_is_unreadable_naming_it() {
    let missing = data("does-not-exist");
    let err = sources::snapshot(&missing).unwrap_err();
    match &err {
        InputError::Unreadable { path, message } => {
            assert_eq!(path, &missing.display().to_string());
            assert!(!message.is_empty());
        }
        other => panic!("expected Unreadable, got {other:?}"),
    }
    let err = sources::files(&[missing.join("gang.yaml")]).unwrap_err();
    assert!(matches!(err, InputError::Unreadable { .. }), "{err:?}");
    assert!(
        err.to_string().contains("does-not-exist/gang.yaml"),
        "{err}"
    );
}

#[test]
fn an_empty_folder_is_an_error_not_an_empty_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let err = sources::snapshot(dir.path()).unwrap_err();
    assert_eq!(
        err,
        InputError::Empty {
            path: dir.path().display().to_string()
        }
    );
    // Only ignored files is the same as empty.
    std::fs::write(dir.path().join("README.md"), "# notes\n").unwrap();
    std::fs::write(dir.path().join("empty.yaml"), "---\n# nothing saved\n").unwrap();
    let err = sources::snapshot(dir.path()).unwrap_err();
    assert!(matches!(err, InputError::Empty { .. }), "{err:?}");
    assert!(err.to_string().contains("no Kubernetes objects"), "{err}");
    let err = sources::files(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(matches!(err, InputError::Empty { .. }), "{err:?}");
}

#[test]
fn a_typed_view_of_a_wrong_field_names_the_field_path() {
    let obs = sources::files(&[data("bad/field/job.yaml")]).expect("syntactically fine");
    let jobs = obs.list(&Query::new(&kinds::JOBS, NS)).unwrap();
    assert_eq!(jobs.len(), 1);
    let err = jobs[0]
        .parse::<k8s_openapi::api::batch::v1::Job>()
        .unwrap_err();
    match &err {
        InputError::Field {
            origin,
            object,
            field,
            message,
        } => {
            assert_eq!(field, "spec.completions");
            assert_eq!(object, "Job/pi");
            assert!(
                origin.ends_with("bad/field/job.yaml, document 1"),
                "{origin}"
            );
            assert!(message.contains("four"), "{message}");
        }
        other => panic!("expected a field error, got {other:?}"),
    }
    // And a good Job parses into the same type.
    let good = sources::snapshot(&data("no-nodes")).unwrap();
    let jobs = good.list(&Query::new(&kinds::JOBS, NS)).unwrap();
    let job: k8s_openapi::api::batch::v1::Job = jobs[0].parse().unwrap();
    assert_eq!(job.spec.unwrap().completions, Some(4));
}

#[test]
fn a_yaml_file_in_flow_style_is_parsed_as_yaml() {
    // `{a: b}` is valid YAML but not JSON; a .yaml file must be read as YAML.
    let objs = trainlab::observe::parse_text(
        "{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}}\n",
        "flow.yaml",
    )
    .expect("YAML flow style is YAML");
    assert_eq!(objs[0].name(), "flow");
    let objs = trainlab::observe::parse_text(
        "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n",
        "two.yaml",
    )
    .expect("JSON documents separated by --- are multi-document YAML");
    assert_eq!(objs.len(), 2);
}

#[test]
fn saved_nodes_that_do_not_match_a_selector_are_an_empty_answer_not_missing() {
    let obs = snapshot();
    let q = Query::cluster(&kinds::NODES)
        .with_selector("node.kubernetes.io/instance-type=p4d.24xlarge");
    assert_eq!(obs.list(&q).map(|v| v.len()), Ok(0));
}
