//! Lab 6 `bionemo`: Job `bionemo-esm2` fine-tunes ESM-2 in the BioNeMo Framework container with
//! a pinned image, GPUs in limits, a memory-backed /dev/shm and the NGC key from a Secret; the
//! Secret is looked up by name in a metadata-only list, and grading never reads Secret data.

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use support::emulator::Emulator;
use support::state::*;
use trainlab::verify::Status;

const LAB: &str = "bionemo";
const JOB: &str = "bionemo-esm2";
const POD: &str = "bionemo-esm2-q8w4t";
const SPEC_CHECKS: [&str; 4] = [
    "bionemo-image",
    "gpu-request",
    "shm-memory",
    "ngc-key-from-secret",
];
const STATE_CHECKS: [&str; 2] = ["secret-exists", "pods-running"];
const BIONEMO: &str = "nvcr.io/nvidia/clara/bionemo-framework";

fn solved() -> State {
    State::load("bionemo/solution-state").and("kind-nodes")
}

fn files(folder: &str) -> State {
    State::load(&format!("../../labs/06-bionemo/{folder}"))
        .into_files()
        .param("gpus_per_node", "8")
        .param("nodes", "3")
}

fn spec(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]
}

fn container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

fn edit_job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("Job", JOB, f)
}

/// Sets the GPU limit (and the request the API server defaulted from it in the saved state).
fn gpus(n: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let r = &mut container(v)["resources"];
        r["limits"]["nvidia.com/gpu"] = n.clone();
        if r["requests"].is_object() {
            r["requests"]["nvidia.com/gpu"] = n;
        }
    }
}

fn image(s: State, image: &'static str) -> State {
    edit_job(s, move |v| container(v)["image"] = json!(image))
}

fn env(v: &mut Value) -> &mut Vec<Value> {
    container(v)["env"].as_array_mut().expect("env")
}

/// Replaces the env entry named `name`.
fn set_env(name: &'static str, entry: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let e = env(v);
        let i = e
            .iter()
            .position(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("no env {name}"));
        e[i] = entry;
    }
}

fn volume(v: &mut Value, name: &str) -> usize {
    spec(v)["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|x| x["name"] == name)
        .unwrap_or_else(|| panic!("no volume {name}"))
}

/// Replaces the `dshm` volume's source.
fn dshm(source: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let i = volume(v, "dshm");
        let mut vol = json!({"name": "dshm"});
        for (k, x) in source.as_object().unwrap() {
            vol[k] = x.clone();
        }
        spec(v)["volumes"][i] = vol;
    }
}

fn drop_mount(path: &'static str) -> impl FnOnce(&mut Value) {
    move |v| {
        container(v)["volumeMounts"]
            .as_array_mut()
            .unwrap()
            .retain(|m| m["mountPath"] != path)
    }
}

fn pod_status(f: impl FnOnce(&mut Value)) -> impl FnOnce(&mut Value) {
    move |p| f(&mut p["status"])
}

/// An EKS node (providerID aws://): the profile becomes `eks`, whose parameters name no stand-in.
const EKS_NODE: &str = r#"
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-17.us-west-2.compute.internal
  labels:
    node.kubernetes.io/instance-type: p5.48xlarge
spec:
  providerID: aws:///us-west-2a/i-0abc123def4567890
status:
  allocatable: {nvidia.com/gpu: "8", cpu: "191450m", memory: 1938410Mi, pods: "100"}
  capacity: {nvidia.com/gpu: "8", cpu: "192", memory: 2063731Mi, pods: "100"}
"#;

// ---------------------------------------------------------------------------------------------
// The reference answer.

#[test]
fn the_solved_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "shm-memory").found.as_deref(),
        Some("dshm: emptyDir.medium: Memory, sizeLimit: 1Gi → /dev/shm")
    );
    assert_eq!(
        outcome(&r, "ngc-key-from-secret").found.as_deref(),
        Some("spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef")
    );
    assert_eq!(
        outcome(&r, "secret-exists").found.as_deref(),
        Some("Secret ngc-api-key")
    );
    assert_eq!(
        outcome(&r, "gpu-request").found.as_deref(),
        Some("nvidia.com/gpu: 8")
    );
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn the_solution_passes_static_mode_and_state_checks_are_skipped() {
    let r = files("solution").grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
    // Without the node facts (no profile, no --param) the bound cannot be judged: see
    // gpus_in_limits_without_the_nodes_or_their_param_is_not_a_pass.
}

#[test]
fn the_draft_fails_what_it_leaves_as_todo() {
    let r = files("draft").grade(LAB);
    assert_eq!(status(&r, "bionemo-image"), Status::Pass);
    assert_eq!(outcome(&r, "gpu-request").status, Status::Fail);
    assert_eq!(outcome(&r, "gpu-request").hint, None);
    assert_eq!(outcome(&r, "shm-memory").status, Status::Fail);
    assert_eq!(outcome(&r, "shm-memory").hint, None);
    let key = outcome(&r, "ngc-key-from-secret");
    assert_eq!(key.hint.as_deref(), Some("literal"));
    // The key's value is never reported, only where it is written.
    assert_eq!(
        key.found.as_deref(),
        Some("spec.template.spec.containers[0].env[0].value")
    );
    assert!(!format!("{key:?}").contains("paste-your-ngc-api-key-here"));
}

#[test]
fn a_missing_job_or_another_api_version_fails_every_check_once_with_the_missing_text() {
    let r = solved().remove(|o| o.kind() == "Job").grade(LAB);
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Fail, "{}", o.check);
        assert_eq!(o.hint.as_deref(), Some("missing"));
    }
    let r = files("solution")
        .edit("Job", JOB, |v| v["apiVersion"] = json!("batch/v2"))
        .grade(LAB);
    let o = outcome(&r, "bionemo-image");
    assert_eq!(o.hint.as_deref(), Some("missing"));
    assert_eq!(o.expected.as_deref(), Some("batch/v1 Job bionemo-esm2"));
    assert_eq!(o.found.as_deref(), Some("batch/v2 Job bionemo-esm2"));
}

// ---------------------------------------------------------------------------------------------
// bionemo-image

#[test]
fn latest_or_no_tag_fails_only_the_image_check() {
    for img in [
        "nvcr.io/nvidia/clara/bionemo-framework",
        "nvcr.io/nvidia/clara/bionemo-framework:latest",
    ] {
        let r = image(solved(), img).grade(LAB);
        let o = assert_only_fails(&r, "bionemo-image", Some("latest"));
        assert_eq!(o.found.as_deref(), Some(img));
        assert_eq!(o.evidence["repository"], BIONEMO);
    }
}

#[test]
fn a_pinned_bionemo_image_passes_on_every_profile_and_nightly_is_advised() {
    for img in [
        "nvcr.io/nvidia/clara/bionemo-framework:2.6",
        "nvcr.io/nvidia/clara/bionemo-framework:2.7.1",
        "nvcr.io/nvidia/clara/bionemo-framework@sha256:5f2a9c0e8b7d6a4f3e2d1c0b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918076e5d",
    ] {
        let r = image(solved(), img).grade(LAB);
        assert_all_pass(&r);
        let r = image(solved().add(EKS_NODE), img).grade(LAB);
        assert_eq!(r.profile, Some(trainlab::facts::Profile::Eks));
        assert_all_pass(&r);
    }
    let r = image(solved(), "nvcr.io/nvidia/clara/bionemo-framework:nightly").grade(LAB);
    assert_all_pass(&r);
    assert_eq!(r.advice.len(), 1);
    assert_eq!(r.advice[0].id, "floating-tag");
    assert_eq!(r.advice[0].evidence["tag"], "nightly");
}

#[test]
fn another_image_fails_and_the_kind_stand_in_passes_only_on_kind() {
    let r = image(solved(), "nvcr.io/nvidia/pytorch:25.04-py3").grade(LAB);
    let o = assert_only_fails(&r, "bionemo-image", Some("standin"));
    assert_eq!(o.evidence["standin"], "python:3.13-slim");
    assert_eq!(
        o.expected.as_deref(),
        Some("nvcr.io/nvidia/clara/bionemo-framework:<tag ≠ latest> | python:3.13-slim")
    );
    // On EKS the stand-in image is not the BioNeMo container.
    let r = solved().add(EKS_NODE).grade(LAB);
    let o = assert_only_fails(&r, "bionemo-image", None);
    assert_eq!(o.found.as_deref(), Some("python:3.13-slim"));
}

// ---------------------------------------------------------------------------------------------
// gpu-request

#[test]
fn no_gpu_in_limits_fails_only_gpu_request() {
    let r = edit_job(solved(), |v| {
        container(v)["resources"] = json!({"limits": {"memory": "2Gi"}})
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "gpu-request", None);
    assert_eq!(o.found.as_deref(), Some("nvidia.com/gpu: —"));
    assert_eq!(
        o.evidence["path"],
        "spec.template.spec.containers[0].resources.limits"
    );
    assert_eq!(o.evidence["gpus_per_node"], "8");
}

#[test]
fn more_gpus_than_a_node_has_fails_with_too_many() {
    let r = edit_job(solved(), gpus(json!(16))).grade(LAB);
    let o = assert_only_fails(&r, "gpu-request", Some("too-many"));
    assert_eq!(o.expected.as_deref(), Some("nvidia.com/gpu: 1–8"));
}

#[test]
fn gpus_in_limits_without_the_nodes_or_their_param_is_not_a_pass() {
    // Static mode without a profile or `--param gpus_per_node`: the bound cannot be judged, so
    // the check says which parameter it needs (the kind and EKS profiles give it).
    let r = State::load("../../labs/06-bionemo/solution")
        .into_files()
        .grade(LAB);
    let o = outcome(&r, "gpu-request");
    assert_eq!(o.status, Status::Skipped, "{o:?}");
    assert_eq!(
        o.reason,
        Some(trainlab::verify::Reason::NeedsParam("gpus_per_node".into()))
    );
    // A snapshot that saved no nodes: the check says the read is missing, not the learner's pass.
    let r = State::load("bionemo/solution-state").grade(LAB);
    let o = outcome(&r, "gpu-request");
    assert_eq!(o.status, Status::Skipped, "{o:?}");
    assert!(
        matches!(
            o.reason,
            Some(trainlab::verify::Reason::Unavailable(
                trainlab::observe::Unavailable::NotCaptured { .. }
            ))
        ),
        "{o:?}"
    );
}

#[test]
fn fewer_gpus_or_a_gpu_in_another_container_pass() {
    // "GPUs in limits": one GPU is a valid, smaller job.
    let r = edit_job(solved(), gpus(json!(1))).grade(LAB);
    assert_all_pass(&r);
    // A sidecar first, the training container second: the one with the GPUs is judged.
    let r = edit_job(solved(), |v| {
        let c = container(v).clone();
        spec(v)["containers"] =
            json!([{"name": "log-shipper", "image": "fluent/fluent-bit:3.2"}, c]);
    })
    .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "ngc-key-from-secret").found.as_deref(),
        Some("spec.template.spec.containers[1].env[0].valueFrom.secretKeyRef")
    );
}

#[test]
fn what_the_api_server_refuses_fails_gpu_request_in_static_mode() {
    // GPUs in requests without limits: the pod would be refused.
    let r = files("solution")
        .edit("Job", JOB, |v| {
            container(v)["resources"] = json!({"requests": {"nvidia.com/gpu": 8}})
        })
        .grade(LAB);
    let o = outcome(&r, "gpu-request");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert!(
        o.found.as_deref().unwrap().contains("Required value"),
        "{o:?}"
    );
    // Half a GPU, in a Job the API server refuses for its restartPolicy first.
    let r = files("solution")
        .edit("Job", JOB, |v| {
            spec(v)["restartPolicy"] = json!("Always");
            container(v)["resources"]["limits"]["nvidia.com/gpu"] = json!("500m");
        })
        .grade(LAB);
    assert_eq!(outcome(&r, "gpu-request").hint.as_deref(), Some("rejected"));
    assert_eq!(
        outcome(&r, "bionemo-image").hint.as_deref(),
        Some("rejected")
    );
    // A Job whose pods restart Always is refused too, and that is no GPU matter.
    let r = files("solution")
        .edit("Job", JOB, |v| spec(v)["restartPolicy"] = json!("Always"))
        .grade(LAB);
    let o = outcome(&r, "bionemo-image");
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert_eq!(o.evidence["field"], "spec.template.spec.restartPolicy");
}

// ---------------------------------------------------------------------------------------------
// shm-memory

#[test]
fn no_shared_memory_mount_fails_only_shm_memory() {
    let r = edit_job(solved(), |v| {
        drop_mount("/dev/shm")(v);
        let i = volume(v, "dshm");
        spec(v)["volumes"].as_array_mut().unwrap().remove(i);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "shm-memory", None);
    assert_eq!(o.found.as_deref(), Some("/dev/shm: —"));
}

#[test]
fn a_memory_volume_that_is_not_mounted_at_dev_shm_fails_with_not_mounted() {
    let r = edit_job(solved(), drop_mount("/dev/shm")).grade(LAB);
    let o = assert_only_fails(&r, "shm-memory", Some("not-mounted"));
    assert_eq!(o.evidence["volume"], "dshm");
    assert!(o.evidence["mounts"].contains("data → /data"), "{o:?}");
}

#[test]
fn a_disk_host_path_or_other_volume_at_dev_shm_fails_with_its_hint() {
    for (source, hint) in [
        (json!({"emptyDir": {}}), "not-memory"),
        (json!({"emptyDir": {"medium": ""}}), "not-memory"),
        (
            json!({"hostPath": {"path": "/dev/shm", "type": "Directory"}}),
            "host-path",
        ),
        (
            json!({"persistentVolumeClaim": {"claimName": "scratch"}}),
            "other-volume",
        ),
    ] {
        let r = edit_job(solved(), dshm(source.clone())).grade(LAB);
        let o = assert_only_fails(&r, "shm-memory", Some(hint));
        assert_eq!(o.evidence["volume"], "dshm", "{source}");
    }
}

#[test]
fn a_size_limit_no_larger_than_the_default_fails_with_too_small() {
    let r = edit_job(
        solved(),
        dshm(json!({"emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}})),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "shm-memory", Some("too-small"));
    assert_eq!(o.evidence["size"], "64Mi");
}

#[test]
fn a_mount_of_a_volume_the_pod_lacks_fails_with_no_volume() {
    let r = edit_job(solved(), |v| {
        let i = volume(v, "dshm");
        spec(v)["volumes"].as_array_mut().unwrap().remove(i);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "shm-memory", Some("no-volume"));
    assert_eq!(o.evidence["volume"], "dshm");
}

#[test]
fn any_memory_volume_at_dev_shm_passes_whatever_its_name_or_size() {
    // Another name, no size limit, a trailing slash on the mount path.
    let r = edit_job(solved(), |v| {
        let i = volume(v, "dshm");
        spec(v)["volumes"][i] = json!({"name": "shm", "emptyDir": {"medium": "Memory"}});
        for m in container(v)["volumeMounts"].as_array_mut().unwrap() {
            if m["name"] == "dshm" {
                *m = json!({"name": "shm", "mountPath": "/dev/shm/"});
            }
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "shm-memory").found.as_deref(),
        Some("shm: emptyDir.medium: Memory → /dev/shm")
    );
}

// ---------------------------------------------------------------------------------------------
// ngc-key-from-secret and secret-exists

#[test]
fn a_literal_key_fails_with_the_reason_and_never_echoes_the_key() {
    let r = edit_job(
        solved(),
        set_env(
            "NGC_CLI_API_KEY",
            json!({"name": "NGC_CLI_API_KEY", "value": "nvapi-SECRET-CANARY"}),
        ),
    )
    .grade(LAB);
    let key = outcome(&r, "ngc-key-from-secret");
    assert_eq!(key.status, Status::Fail);
    assert_eq!(key.hint.as_deref(), Some("literal"));
    assert_eq!(key.evidence["variable"], "NGC_CLI_API_KEY");
    assert_eq!(key.evidence["container"], "bionemo");
    for lang in [trainlab::text::Lang::Ja, trainlab::text::Lang::En] {
        let rendered = format!("{:?}", trainlab::report::LabReport::new(&r, lang).outcomes);
        assert!(!rendered.contains("CANARY"), "{rendered}");
    }
    // No Secret is referenced any more, so there is nothing to look for.
    let s = outcome(&r, "secret-exists");
    assert_eq!(s.status, Status::Skipped);
    assert_eq!(message(s), "no-secret-ref");
    assert!(r
        .outcomes
        .iter()
        .filter(|o| o.check != "ngc-key-from-secret" && o.check != "secret-exists")
        .all(|o| o.status == Status::Pass));
}

#[test]
fn a_key_from_a_config_map_or_a_field_fails_with_its_hint() {
    for (entry, hint) in [
        (
            json!({"name": "NGC_CLI_API_KEY",
                   "valueFrom": {"configMapKeyRef": {"name": "ngc", "key": "NGC_CLI_API_KEY"}}}),
            "configmap",
        ),
        (
            json!({"name": "NGC_CLI_API_KEY",
                   "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['ngc']"}}}),
            "other-source",
        ),
    ] {
        let r = edit_job(solved(), set_env("NGC_CLI_API_KEY", entry)).grade(LAB);
        let o = outcome(&r, "ngc-key-from-secret");
        assert_eq!(o.hint.as_deref(), Some(hint));
        assert_eq!(o.status, Status::Fail);
    }
}

#[test]
fn no_key_at_all_passes_the_key_is_optional_and_advice_says_when_one_is_needed() {
    // Issue 20: the ESM-2 8M checkpoint is public; BioNeMo's downloader signs in as a guest.
    let r = edit_job(solved(), |v| {
        env(v).retain(|e| e["name"] != "NGC_CLI_API_KEY");
    })
    .grade(LAB);
    let o = outcome(&r, "ngc-key-from-secret");
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.found.as_deref(), Some("NGC_CLI_API_KEY: —"));
    let s = outcome(&r, "secret-exists");
    assert_eq!(s.status, Status::Skipped);
    assert_eq!(message(s), "no-secret-ref");
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["no-ngc-key"]);
}

#[test]
fn the_lab_text_never_says_the_key_is_needed() {
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let lab = &catalog.get(LAB).unwrap().lab;
    let task = lab.task.as_ref().unwrap();
    assert!(
        task.text.en.contains("The key is optional"),
        "{}",
        task.text.en
    );
    assert!(
        task.text.ja.contains("キーは省略できます"),
        "{}",
        task.text.ja
    );
    let notes: String = lab.notes.iter().map(|n| n.text.en.clone()).collect();
    assert!(!notes.contains("needs `NGC_CLI_API_KEY`"), "{notes}");
    assert!(notes.contains("not needed for this lab's ESM-2 8M checkpoint"));
    // ...and that --restore-from-checkpoint-path is optional to v2.6's parser.
    assert!(notes.contains("`required=False`"), "{notes}");
}

#[test]
fn the_eks_solution_is_the_real_container_and_passes_the_spec_checks() {
    // Issue 20 §1: `solution-eks/` replaces the kind Job and Secret of the same names.
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    let eks = State::load("../../labs/06-bionemo/solution-eks").into_files();
    let r = trainlab::labs::grade_lab(
        bundle,
        &eks.observed(),
        &trainlab::verify::Target::for_lab(LAB),
        &std::collections::BTreeMap::new(),
        Some(trainlab::facts::Profile::Eks),
    )
    .unwrap();
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    let job = eks.objects.iter().find(|o| o.kind() == "Job").unwrap();
    let c = &job.value["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "nvcr.io/nvidia/clara/bionemo-framework:2.6");
    // No stand-in on EKS: neither its mount nor its PATH.
    let mounts = c["volumeMounts"].as_array().unwrap();
    assert!(mounts.iter().all(|m| m["name"] != "bionemo-standin"));
    assert!(c["env"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["name"] != "PATH"));
    let script = c["args"][0].as_str().unwrap();
    assert!(script.contains("download_bionemo_data esm2/8m:2.0"));
    assert!(script.contains("exec finetune_esm2"));
}

#[test]
fn the_key_from_a_secret_passes_through_env_from_another_name_or_an_init_container() {
    // envFrom a whole Secret: the key names inside it cannot be seen (metadata only).
    let r = edit_job(solved(), |v| {
        env(v).retain(|e| e["name"] != "NGC_CLI_API_KEY");
        container(v)["envFrom"] = json!([{"secretRef": {"name": "ngc-api-key"}}]);
    })
    .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "ngc-key-from-secret").found.as_deref(),
        Some("spec.template.spec.containers[0].envFrom[0].secretRef")
    );
    // NIM's variable name.
    let r = edit_job(
        solved(),
        set_env(
            "NGC_CLI_API_KEY",
            json!({"name": "NGC_API_KEY",
                   "valueFrom": {"secretKeyRef": {"name": "ngc-api-key", "key": "NGC_CLI_API_KEY"}}}),
        ),
    )
    .grade(LAB);
    assert_all_pass(&r);
    // The checkpoint is downloaded by an init container that has the key; the trainer needs none.
    let r = edit_job(solved(), |v| {
        let key = env(v).remove(0);
        spec(v)["initContainers"] = json!([{
            "name": "download", "image": "python:3.13-slim",
            "command": ["download_bionemo_data", "esm2/8m:2.0"],
            "env": [key, {"name": "NGC_CLI_ORG", "value": "nvidia"}]
        }]);
    })
    .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "ngc-key-from-secret").found.as_deref(),
        Some("spec.template.spec.initContainers[0].env[0].valueFrom.secretKeyRef")
    );
}

#[test]
fn no_org_next_to_the_key_is_advice_not_a_failure() {
    let r = edit_job(solved(), |v| env(v).retain(|e| e["name"] != "NGC_CLI_ORG")).grade(LAB);
    assert_all_pass(&r);
    assert_eq!(r.advice.len(), 1);
    assert_eq!(r.advice[0].id, "no-ngc-org");
    // An empty org sets nothing (kit `env`: an empty literal is no setting).
    let r = edit_job(solved(), |v| {
        for e in env(v).iter_mut().filter(|e| e["name"] == "NGC_CLI_ORG") {
            *e = json!({"name": "NGC_CLI_ORG", "value": ""});
        }
    })
    .grade(LAB);
    assert_eq!(r.advice.len(), 1);
    assert_eq!(r.advice[0].id, "no-ngc-org");
    // A whole Secret in envFrom may carry the org: its keys cannot be seen, so no advice.
    let r = edit_job(solved(), |v| {
        env(v).retain(|e| e["name"] != "NGC_CLI_ORG");
        container(v)["envFrom"] = json!([{"secretRef": {"name": "ngc-api-key"}}]);
    })
    .grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn a_missing_secret_fails_only_secret_exists() {
    let r = solved().remove(|o| o.kind() == "Secret").grade(LAB);
    let o = assert_only_fails(&r, "secret-exists", None);
    assert_eq!(o.found.as_deref(), Some("Secret ngc-api-key: —"));
    assert_eq!(o.evidence["secret"], "ngc-api-key");
    assert_eq!(o.evidence["key"], "NGC_CLI_API_KEY");
    // A Secret of another name does not count.
    let r = solved()
        .edit("Secret", "ngc-api-key", |s| {
            s["metadata"]["name"] = json!("ngc-key")
        })
        .grade(LAB);
    assert_only_fails(&r, "secret-exists", None);
}

// ---------------------------------------------------------------------------------------------
// pods-running

#[test]
fn a_container_that_failed_fails_pods_running_quoting_its_message() {
    let message = "RuntimeError: DataLoader worker (pid(s) 8) exited unexpectedly";
    let r = solved()
        .edit(
            "Pod",
            POD,
            pod_status(move |st| {
                st["phase"] = json!("Failed");
                st["containerStatuses"][0]["state"] = json!({"terminated": {
                    "exitCode": 1, "reason": "Error", "message": format!("{message}\n")}});
            }),
        )
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("crashed"));
    assert_eq!(
        o.found.as_deref(),
        Some(format!("{POD}/bionemo: Error (exit 1)").as_str())
    );
    // The hint quotes the tool's own words (kit `pods::running`: evidence, not found).
    assert_eq!(o.evidence["message"], message);
    assert_eq!(
        (
            o.evidence["container"].as_str(),
            o.evidence["exit_code"].as_str()
        ),
        ("bionemo", "1")
    );
}

#[test]
fn a_pod_stuck_on_a_missing_secret_key_fails_with_stuck() {
    let says = "couldn't find key NGC_CLI_API_KEY in Secret trainlab-bionemo/ngc-api-key";
    let r = solved()
        .edit(
            "Pod",
            POD,
            pod_status(move |st| {
                st["phase"] = json!("Pending");
                st["containerStatuses"][0]["state"] = json!({"waiting": {
                    "reason": "CreateContainerConfigError", "message": says}});
            }),
        )
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("stuck"));
    assert_eq!(o.evidence["message"], says);
    assert_eq!(
        o.found.as_deref(),
        Some(format!("{POD}/bionemo: CreateContainerConfigError").as_str())
    );
}

#[test]
fn a_failed_or_suspended_job_fails_pods_running() {
    let r = solved()
        .remove(|o| o.kind() == "Pod")
        .edit("Job", JOB, |v| {
            v["status"] = json!({"failed": 1, "conditions": [{"type": "Failed", "status": "True",
                "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]})
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("job-failed"));
    assert_eq!(
        o.evidence["message"],
        "Job has reached the specified backoff limit"
    );
    let r = solved()
        .remove(|o| o.kind() == "Pod")
        .edit("Job", JOB, |v| {
            v["spec"]["suspend"] = json!(true);
            v["status"] = json!({});
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("suspended"));
    assert_eq!(o.evidence["field"], "spec.suspend");
}

#[test]
fn pods_that_are_not_up_yet_are_pending_not_failed() {
    let r = solved().remove(|o| o.kind() == "Pod").grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message(o), "no-pods");
    let r = solved()
        .edit(
            "Pod",
            POD,
            pod_status(|st| {
                st["phase"] = json!("Pending");
                st["containerStatuses"][0]["state"] =
                    json!({"waiting": {"reason": "ContainerCreating"}});
            }),
        )
        .grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!((o.status, message(o)), (Status::Pending, "pods-starting"));
    assert_eq!(o.evidence["up"], "0");
    let says = "0/5 nodes are available: 5 Insufficient nvidia.com/gpu.";
    let r = solved()
        .edit("Pod", POD, move |p| {
            p["spec"]["nodeName"] = Value::Null;
            p["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
                "status": "False", "reason": "Unschedulable", "message": says}]});
        })
        .grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!(
        (o.status, message(o)),
        (Status::Pending, "pods-unschedulable")
    );
    assert_eq!(o.evidence["message"], says);
    assert_eq!(r.count(Status::Fail), 0);
}

#[test]
fn a_completed_job_passes_even_after_its_pod_is_gone() {
    let r = solved()
        .remove(|o| o.kind() == "Pod")
        .edit("Job", JOB, |v| {
            v["status"] = json!({"succeeded": 1, "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True"},
                {"type": "Complete", "status": "True"}]})
        })
        .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// Secrets are read as metadata only.

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn grading_lists_secrets_as_metadata_only_and_never_gets_one() {
    let dir = tempfile::tempdir().unwrap();
    // The cluster's Secret carries data; nothing of it may reach trainlab.
    let secret = dir.path().join("secret.yaml");
    std::fs::write(
        &secret,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ngc-api-key\n  namespace: trainlab-bionemo\n  uid: c2b7e9d4-1a3f-4c68-9e20-5b8d7f1a3c45\ntype: Opaque\ndata:\n  NGC_CLI_API_KEY: bnZhcGktU0VDUkVULUNBTkFSWQ==\nstringData:\n  NGC_CLI_ORG: nvapi-SECRET-CANARY\n",
    )
    .unwrap();
    let data = root().join("tests/data");
    let emu = Emulator::start_from(&[
        &data.join("kind-nodes"),
        &data.join("kind-operators"),
        &data.join("bionemo/solution-state/jobs.yaml"),
        &data.join("bionemo/solution-state/pods.yaml"),
        &secret,
    ]);
    let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
    let out = Command::new(env!("CARGO_BIN_EXE_trainlab"))
        .env("KUBECONFIG", &kubeconfig)
        .env(
            "TRAINLAB_CACHE_DIR",
            crate::support::cache_beside(&kubeconfig),
        )
        .env("NO_COLOR", "1")
        .current_dir(dir.path())
        .args(["check", LAB, "--request-timeout", "5s", "-o", "json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let secret_check = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["check"] == "secret-exists")
        .unwrap();
    assert_eq!(secret_check["status"], "pass", "{secret_check}");
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains("CANARY") && !text.contains("bnZhcGkt"),
            "{text}"
        );
    }

    let reqs = emu.requests();
    let secret_reqs: Vec<_> = reqs
        .iter()
        .filter(|r| r.path.split('/').any(|s| s == "secrets"))
        .collect();
    assert!(
        !secret_reqs.is_empty(),
        "the Secret was looked up: {reqs:#?}"
    );
    for r in &secret_reqs {
        assert_eq!(r.method, "GET", "{r:?}");
        // Only the namespace's collection is listed: no GET of one Secret (which returns data).
        assert_eq!(
            r.path, "/api/v1/namespaces/trainlab-bionemo/secrets",
            "{r:?}"
        );
        assert!(
            !r.query
                .split('&')
                .any(|p| p == "watch=true" || p == "watch=1"),
            "{r:?}"
        );
        let accept = r.header("accept").unwrap_or_default();
        assert!(
            accept.contains("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
            "a Secret LIST without the metadata-only Accept header: {r:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The kind stand-in (the starter's ConfigMap `bionemo-standin`), run with the machine's python3.

/// The `data` of a ConfigMap manifest in the lab folder.
fn config_map_data(rel: &str) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(root().join("labs/06-bionemo").join(rel)).unwrap();
    let v: Value = serde_saphyr::from_str(&text).unwrap();
    v["data"].as_object().unwrap().clone()
}

struct StandIn {
    dir: tempfile::TempDir,
}

impl StandIn {
    /// The stand-in's programs and the starter's CSVs in a scratch folder.
    fn new() -> StandIn {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["bin", "data", "shm", "cache"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        for (name, text) in config_map_data("starter/bionemo-standin.yaml") {
            std::fs::write(dir.path().join("bin").join(name), text.as_str().unwrap()).unwrap();
        }
        for (name, text) in config_map_data("starter/esm2-finetune-data.yaml") {
            std::fs::write(dir.path().join("data").join(name), text.as_str().unwrap()).unwrap();
        }
        StandIn { dir }
    }

    fn path(&self, sub: &str) -> String {
        self.dir.path().join(sub).display().to_string()
    }

    /// The reference solution's shell script, with /data, /results and the stand-in's folder
    /// moved into the scratch folder; returns (exit code, termination message, stderr).
    fn run_solution(&self, env: &[(&str, &str)]) -> (i32, String, String) {
        let text =
            std::fs::read_to_string(root().join("labs/06-bionemo/solution/bionemo-esm2.yaml"))
                .unwrap();
        let job: Value = serde_saphyr::from_str(&text).unwrap();
        let script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
            .as_str()
            .unwrap()
            .replace("/data/", &format!("{}/", self.path("data")))
            .replace("/results", &self.path("results"))
            .replace("exec finetune_esm2", "exec python3 \"$BIN/finetune_esm2\"")
            .replace(
                "$(download_bionemo_data",
                "$(python3 \"$BIN/download_bionemo_data\"",
            );
        let log = self.dir.path().join("termination-log");
        std::fs::write(&log, "").unwrap();
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(script)
            .env("BIN", self.path("bin"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("TRAINLAB_STANDIN_SECONDS", "0")
            .env("TRAINLAB_STANDIN_ALLOCATE", "0")
            .env("TRAINLAB_STANDIN_SHM_DIR", self.path("shm"))
            .env("TRAINLAB_TERMINATION_LOG", &log)
            .env("BIONEMO_CACHE_DIR", self.path("cache"))
            .env_remove("NGC_CLI_API_KEY")
            .env_remove("TRAINLAB_STANDIN_SHM_MB_PER_WORKER");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            std::fs::read_to_string(&log).unwrap().trim().to_string(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }
}

#[test]
fn the_stand_in_runs_the_solution_command_and_never_prints_the_key() {
    let s = StandIn::new();
    let (code, message, stderr) = s.run_solution(&[("NGC_CLI_API_KEY", "nvapi-SECRET-CANARY")]);
    assert_eq!(code, 0, "{message}\n{stderr}");
    assert_eq!(
        message,
        "trainlab stand-in (not BioNeMo): finetune_esm2 task=regression precision=bf16-mixed \
         gpus=8 nodes=1 workers=4 shm=192MiB ngc-key=set"
    );
    assert!(!stderr.contains("CANARY") && !message.contains("CANARY"));
    // Without the key the NGC client signs in as a guest: said on stderr, not a failure.
    let (code, message, stderr) = s.run_solution(&[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(message.ends_with("ngc-key=unset"), "{message}");
    assert!(stderr.contains("NGC_CLI_API_KEY is not set"), "{stderr}");
}

#[test]
fn the_stand_in_dies_like_the_data_loader_when_dev_shm_is_too_small() {
    let s = StandIn::new();
    // More shared memory per worker than the folder standing in for /dev/shm has free.
    let (code, message, stderr) =
        s.run_solution(&[("TRAINLAB_STANDIN_SHM_MB_PER_WORKER", "1000000000000")]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        message.starts_with("RuntimeError: DataLoader worker (pid(s) "),
        "{message}"
    );
    assert!(message.ends_with(") exited unexpectedly"), "{message}");
    assert!(
        stderr.contains("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."),
        "{stderr}"
    );
}

#[test]
fn the_stand_in_refuses_what_finetune_esm2_refuses() {
    let s = StandIn::new();
    let log = s.dir.path().join("log");
    let run = |args: &[&str]| {
        std::fs::write(&log, "").unwrap();
        let out = Command::new("python3")
            .arg(s.dir.path().join("bin/finetune_esm2"))
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("TRAINLAB_STANDIN_SECONDS", "0")
            .env("TRAINLAB_STANDIN_ALLOCATE", "0")
            .env("TRAINLAB_STANDIN_SHM_DIR", s.path("shm"))
            .env("TRAINLAB_TERMINATION_LOG", &log)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            std::fs::read_to_string(&log).unwrap().trim().to_string(),
        )
    };
    let train = format!("{}/train.csv", s.path("data"));
    let (code, msg) = run(&["--train-data-path", &train, "--valid-data-path", &train]);
    assert_eq!(code, 2);
    assert_eq!(
        msg,
        "finetune_esm2: error: the following arguments are required: --task-type"
    );
    let (code, msg) = run(&[
        "--train-data-path",
        "/nonexistent/train.csv",
        "--valid-data-path",
        &train,
        "--task-type",
        "regression",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        msg,
        "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/train.csv'"
    );
    let (code, msg) = run(&[
        "--train-data-path",
        &train,
        "--valid-data-path",
        &train,
        "--task-type",
        "regression",
        "--precision",
        "bf17",
    ]);
    assert_eq!(code, 2);
    assert!(
        msg.starts_with("finetune_esm2: error: argument --precision: invalid choice: 'bf17'"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------------------------
// The same lab as a TrainJob (Kubeflow Trainer v2) over `torch-distributed`.

fn trainjob() -> State {
    State::load("bionemo/trainjob-state").and("kind-nodes")
}

#[test]
fn a_trainjob_running_bionemo_passes_every_check() {
    assert_all_pass(&trainjob().grade(LAB));
}

#[test]
fn a_trainjob_without_its_gpu_fails_gpu_request_at_resources_per_node() {
    let r = trainjob()
        .edit("TrainJob", "bionemo-esm2", |v| {
            v["spec"]["trainer"]["resourcesPerNode"]["limits"]
                .as_object_mut()
                .unwrap()
                .remove("nvidia.com/gpu");
            if let Some(req) = v["spec"]["trainer"]["resourcesPerNode"]["requests"].as_object_mut()
            {
                req.remove("nvidia.com/gpu");
            }
        })
        .grade(LAB);
    let o = outcome(&r, "gpu-request");
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(
        format!("{:?}", o.evidence).contains("spec.trainer.resourcesPerNode"),
        "{o:?}"
    );
}
