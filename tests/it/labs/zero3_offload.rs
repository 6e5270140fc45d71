//! Lab 12 `zero3-offload`: a ConfigMap `ds-config` with a DeepSpeed config (ZeRO stage 3, the
//! optimizer state and the parameters offloaded to CPU), mounted into the job `zero3-train`
//! (a Job or a PyTorchJob) that passes the file with `--deepspeed`.

use crate::support;

use serde_json::{json, Value};
use support::state::*;
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::kit::cmdline::Args;
use trainlab::verify::{LabResult, Status};

const LAB: &str = "zero3-offload";
const JOB: &str = "zero3-train";
const CM: &str = "ds-config";
const POD: &str = "zero3-train-q8m4z";
const CONFIG_CHECKS: [&str; 4] = [
    "config-parses",
    "zero-stage-3",
    "offload-optimizer-cpu",
    "offload-param-cpu",
];

fn solved() -> State {
    State::load("zero3-offload/solution-state").and("kind-nodes")
}

fn grade(s: &State) -> LabResult {
    s.grade(LAB)
}

/// The lab's own folder read as the learner's files (static mode).
fn files(folder: &str) -> State {
    State::load(&format!("../../labs/12-zero3-offload/{folder}")).into_files()
}

/// The EKS profile's answer as the learner's files: `solution/` with each file of
/// `solution-eks/` in place of the same-named one, graded with the lab's EKS parameters.
fn eks_solution() -> State {
    State::solution_of(LAB, "eks")
}

/// The training command's arguments of the job among these objects.
fn english_hint(r: &LabResult, check: &str) -> String {
    LabReport::new(r, Lang::En)
        .outcomes
        .iter()
        .find(|o| o.check == check)
        .unwrap()
        .hint
        .clone()
        .unwrap_or_default()
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

/// The solution's config with `zero_optimization` replaced.
fn zero(section: Value) -> State {
    config(json!({
        "train_micro_batch_size_per_gpu": "auto",
        "bf16": {"enabled": "auto"},
        "zero_optimization": section,
    }))
}

fn config(v: Value) -> State {
    config_text(&serde_json::to_string_pretty(&v).unwrap())
}

fn config_text(text: &str) -> State {
    let text = text.to_string();
    solved().edit("ConfigMap", CM, move |v| {
        v["data"] = json!({ "ds_config.json": text })
    })
}

fn container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

fn edit_job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("Job", JOB, f)
}

/// Replaces the `--deepspeed` value (or drops the flag with None).
fn deepspeed(value: Option<&'static str>) -> impl FnOnce(&mut Value) {
    move |v| {
        let args = container(v)["args"].as_array_mut().unwrap();
        let i = args.iter().position(|a| a == "--deepspeed").unwrap();
        match value {
            Some(p) => args[i + 1] = json!(p),
            None => {
                args.drain(i..i + 2);
            }
        }
    }
}

/// The ds-config mount (index 1) and volume (index 1) edited.
fn mount(f: impl FnOnce(&mut Value, &mut Value)) -> impl FnOnce(&mut Value) {
    move |v| {
        let mut m = container(v)["volumeMounts"][1].take();
        let mut vol = v["spec"]["template"]["spec"]["volumes"][1].take();
        f(&mut m, &mut vol);
        container(v)["volumeMounts"][1] = m;
        v["spec"]["template"]["spec"]["volumes"][1] = vol;
    }
}

fn pod(f: impl FnOnce(&mut Value)) -> impl FnOnce(State) -> State {
    move |s| s.edit("Pod", POD, f)
}

/// The job still running: no condition yet.
fn job_active(v: &mut Value) {
    v["status"] = json!({"active": 1, "startTime": "2026-12-03T09:00:00Z"});
}

// ---------------------------------------------------------------------------------------------
// The reference answer and the variants that are right.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = grade(&solved());
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    assert_eq!(
        outcome(&r, "config-parses").found.as_deref(),
        Some("ds-config[ds_config.json]")
    );
    assert_eq!(
        outcome(&r, "config-mounted").found.as_deref(),
        Some("Job: --deepspeed /etc/deepspeed/ds_config.json → ds-config[ds_config.json]")
    );
}

#[test]
fn the_solution_passes_static_mode_and_the_draft_fails_it() {
    let r = grade(&files("solution"));
    for o in &r.outcomes {
        let want = if o.check == "pods-running" {
            Status::Skipped
        } else {
            Status::Pass
        };
        assert_eq!(o.status, want, "{o:?}");
    }
    let r = grade(&files("draft"));
    let failed: Vec<&str> = r
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Fail)
        .map(|o| o.check.as_str())
        .collect();
    assert_eq!(
        failed,
        ["zero-stage-3", "offload-param-cpu", "config-mounted"]
    );
}

#[test]
fn the_eks_solution_passes_every_spec_check_with_the_eks_params() {
    let s = eks_solution();
    let r = grade(&s);
    for o in &r.outcomes {
        let want = if o.check == "pods-running" {
            Status::Skipped
        } else {
            Status::Pass
        };
        assert_eq!(o.status, want, "{o:?}");
    }
    // 256Gi covers DeepSpeed's ~192Gi estimate for 7.6B parameters: no advice.
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    let job = s.objects.iter().find(|o| o.kind() == "Job").unwrap();
    let spec = &job.value["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    assert_eq!(c["image"], "nvcr.io/nvidia/pytorch:25.04-py3");
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], 8);
    let script = c["args"][0].as_str().unwrap();
    assert!(script.contains("transformers==5.24.0 deepspeed==0.19.5"));
    assert!(script.contains("/transformers/v5.24.0/examples/pytorch/language-modeling/run_clm.py"));
    assert!(script.contains("torchrun --nproc-per-node 8 "));
    // 8 NCCL ranks in one pod: a memory-backed /dev/shm.
    let shm = spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "dshm")
        .unwrap();
    assert_eq!(shm["emptyDir"]["medium"], "Memory");
    assert!(c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["mountPath"] == "/dev/shm" && m["name"] == "dshm"));
    // Too small a request for the EKS model is still advised.
    let small = s.edit("Job", JOB, |v| {
        container(v)["resources"]["requests"]["memory"] = json!("64Gi")
    });
    let r = grade(&small);
    assert_eq!(advice_ids(&r), ["host-memory"]);
    assert_eq!(r.advice[0].evidence["estimate"], "192Gi");
}

#[test]
fn every_answer_and_the_draft_run_with_run_clms_own_arguments() {
    support::run_clm::assert_every_answer_and_the_draft_start(LAB, JOB);
    // The command line the lab had before: no dataset, no --do_train.
    let old = Args::new([
        "--deepspeed",
        "/etc/deepspeed/ds_config.json",
        "--model_name_or_path",
        "EleutherAI/pythia-14m",
        "--per_device_train_batch_size",
        "1",
        "--bf16",
        "--output_dir",
        "/tmp/zero3-train",
        "--max_steps",
        "20",
    ]);
    assert_eq!(
        support::run_clm::refusal(&old).as_deref(),
        Some("Need either a dataset name or a training/validation file.")
    );
}

#[test]
fn a_pytorchjob_runs_the_same_config() {
    let pytorchjob = r#"
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: zero3-train, namespace: trainlab-zero3-offload, uid: 6b1d9e3a-0000-4000-8000-00000000a001}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: python:3.13-slim
            command: [torchrun]
            args: [run_clm.py, --deepspeed=/etc/deepspeed/ds_config.json, --bf16, --output_dir, /tmp/o]
            resources:
              requests: {memory: 1Gi}
              limits: {memory: 1Gi, nvidia.com/gpu: 1}
            volumeMounts:
            - {name: ds, mountPath: /etc/deepspeed}
          volumes:
          - name: ds
            configMap: {name: ds-config}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: python:3.13-slim
            command: [torchrun]
            args: [run_clm.py, --deepspeed=/etc/deepspeed/ds_config.json, --bf16, --output_dir, /tmp/o]
            resources:
              requests: {memory: 1Gi}
              limits: {memory: 1Gi, nvidia.com/gpu: 1}
            volumeMounts:
            - {name: ds, mountPath: /etc/deepspeed}
          volumes:
          - name: ds
            configMap: {name: ds-config}
status:
  conditions:
  - {type: Created, status: "True"}
  - {type: Running, status: "True"}
---
apiVersion: v1
kind: Pod
metadata:
  name: zero3-train-master-0
  namespace: trainlab-zero3-offload
  ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: zero3-train, uid: 6b1d9e3a-0000-4000-8000-00000000a001, controller: true}]
spec: {nodeName: trainlab-worker, containers: [{name: pytorch, image: python:3.13-slim}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: zero3-train-worker-0
  namespace: trainlab-zero3-offload
  ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: zero3-train, uid: 6b1d9e3a-0000-4000-8000-00000000a001, controller: true}]
spec: {nodeName: trainlab-worker2, containers: [{name: pytorch, image: python:3.13-slim}]}
status: {phase: Running}
"#;
    let s = solved()
        .remove(|o| o.kind() == "Job" || o.kind() == "Pod")
        .add(pytorchjob);
    let r = grade(&s);
    assert_all_pass(&r);
    assert!(outcome(&r, "config-mounted")
        .found
        .as_deref()
        .unwrap()
        .starts_with("Master: --deepspeed /etc/deepspeed/ds_config.json"));
    // Its Master and Worker must both mount the config.
    let r = grade(&s.clone().edit("PyTorchJob", JOB, |v| {
        v["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
            ["volumeMounts"] = json!([]);
    }));
    let o = assert_only_fails(&r, "config-mounted", None);
    assert_eq!(o.evidence["role"], "Worker");
}

#[test]
fn every_way_to_mount_and_point_at_the_file_passes() {
    let variants: Vec<State> = vec![
        // A subPath mount of the key as a file.
        edit_job(solved(), |v| {
            mount(
                |m, _| *m = json!({"name": "ds-config", "mountPath": "/etc/ds.json", "subPath": "ds_config.json"}),
            )(v);
            deepspeed(Some("/etc/ds.json"))(v);
        }),
        // `items` map the key to another file name.
        edit_job(solved(), |v| {
            mount(|_, vol| {
                vol["configMap"]["items"] =
                    json!([{"key": "ds_config.json", "path": "zero3/config.json"}])
            })(v);
            deepspeed(Some("/etc/deepspeed/zero3/config.json"))(v);
        }),
        // A relative path from the container's workingDir.
        edit_job(solved(), |v| {
            container(v)["workingDir"] = json!("/etc/deepspeed");
            deepspeed(Some("./ds_config.json"))(v);
        }),
        // A projected volume with the ConfigMap as one source.
        edit_job(
            solved(),
            mount(
                |_, vol| *vol = json!({"name": "ds-config", "projected": {"sources": [{"configMap": {"name": "ds-config"}}]}}),
            ),
        ),
        // DeepSpeed's own launcher: `--deepspeed` is a switch, the file is `--deepspeed_config`.
        edit_job(solved(), |v| {
            container(v)["command"] = json!(["deepspeed"]);
            container(v)["args"] = json!([
                "--num_gpus",
                "1",
                "train.py",
                "--deepspeed",
                "--deepspeed_config",
                "/etc/deepspeed/ds_config.json"
            ]);
        }),
        // accelerate with the DeepSpeed plugin.
        edit_job(solved(), |v| {
            container(v)["command"] = json!([
                "accelerate",
                "launch",
                "--use_deepspeed",
                "--deepspeed_config_file",
                "/etc/deepspeed/ds_config.json",
                "run_clm.py"
            ]);
            container(v)["args"] = json!(["--bf16", "--output_dir", "/tmp/o"]);
        }),
        // A shell script, `=` spelling, and a path through `..`.
        edit_job(solved(), |v| {
            container(v)["command"] = json!(["bash", "-c"]);
            container(v)["args"] = json!(["pip list >/dev/null && exec torchrun --nproc-per-node 1 run_clm.py --deepspeed=/etc/deepspeed/../deepspeed/ds_config.json --bf16"]);
        }),
    ];
    for s in variants {
        assert_all_pass(&grade(&s));
    }
}

#[test]
fn every_way_to_write_the_offload_config_passes() {
    for s in [
        // pin_memory unset: pinned by default since DeepSpeed v0.19.5.
        zero(
            json!({"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}),
        ),
        // The deprecated booleans still turn the CPU offloads on.
        zero(json!({"stage": 3, "cpu_offload": true, "cpu_offload_param": true})),
        // Other keys in the ConfigMap, and the config under another key name the job mounts.
        solved()
            .edit("ConfigMap", CM, |v| {
                let text = v["data"]["ds_config.json"].take();
                v["data"] = json!({"zero3.json": text, "README": "ZeRO-3 config for run_clm.py"});
            })
            .edit("Job", JOB, deepspeed(Some("/etc/deepspeed/zero3.json"))),
    ] {
        assert_all_pass(&grade(&s));
    }
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn invalid_json_fails_config_parses_with_line_and_column() {
    let r = grade(&config_text(
        "{\n  \"zero_optimization\": {\n    \"stage\": 3,\n  }\n}",
    ));
    let o = outcome(&r, "config-parses");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint, None);
    assert_eq!(o.found.as_deref(), Some("ds-config[ds_config.json]:4:3"));
    assert_eq!(
        (o.evidence["line"].as_str(), o.evidence["column"].as_str()),
        ("4", "3")
    );
    let hint = english_hint(&r, "config-parses");
    assert!(hint.contains("line 4, column 3: trailing comma"), "{hint}");
    // What depends on the config cannot be judged; the job and its pods still can.
    for c in &CONFIG_CHECKS[1..] {
        assert_eq!(outcome(&r, c).status, Status::Skipped, "{c}");
        assert_eq!(message(outcome(&r, c)), "config-unread");
    }
    for c in ["config-mounted", "pods-running"] {
        assert_eq!(outcome(&r, c).status, Status::Pass, "{c}");
    }
}

#[test]
fn a_value_deepspeed_refuses_fails_config_parses_with_its_field() {
    let r = grade(&zero(json!({"stage": "three"})));
    let o = outcome(&r, "config-parses");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("field")));
    assert_eq!(o.evidence["field"], "zero_optimization.stage");
    let r = grade(&zero(json!({"stage": 4})));
    assert!(outcome(&r, "config-parses").evidence["message"]
        .contains("Maximum supported ZeRO stage is 3"));
}

#[test]
fn an_empty_or_ambiguous_config_map_fails_config_parses() {
    let r = grade(&solved().edit("ConfigMap", CM, |v| v["data"] = json!({})));
    assert_eq!(outcome(&r, "config-parses").hint.as_deref(), Some("empty"));
    // Two keys and a job that reads neither: which one is the config?
    let s = solved()
        .edit("ConfigMap", CM, |v| {
            v["data"]["other.json"] = json!("{}");
        })
        .edit("Job", JOB, deepspeed(None));
    let r = grade(&s);
    let o = outcome(&r, "config-parses");
    assert_eq!(o.hint.as_deref(), Some("which-key"));
    assert_eq!(o.evidence["keys"], "ds_config.json, other.json");
}

#[test]
fn a_stage_below_3_fails_only_zero_stage_3() {
    let r = grade(&zero(
        json!({"stage": 2, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}),
    ));
    let o = assert_only_fails(&r, "zero-stage-3", Some("param-ignored"));
    assert_eq!(o.found.as_deref(), Some("zero_optimization.stage: 2"));
    let r = grade(&zero(json!({"offload_optimizer": {"device": "cpu"}})));
    let o = outcome(&r, "zero-stage-3");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, None));
    assert_eq!(o.found.as_deref(), Some("zero_optimization.stage: —"));
    let r = grade(&config(json!({"zero_optimization": true})));
    assert_eq!(outcome(&r, "zero-stage-3").hint.as_deref(), Some("legacy"));
}

#[test]
fn an_optimizer_not_offloaded_to_cpu_fails_only_offload_optimizer_cpu() {
    let param = json!({"device": "cpu", "pin_memory": true});
    for (optimizer, hint, found) in [
        (
            json!({"device": "none"}),
            None,
            "zero_optimization.offload_optimizer.device: none",
        ),
        (
            json!({"pin_memory": true}),
            None,
            "zero_optimization.offload_optimizer.device: — (none)",
        ),
        (
            json!({"device": "nvme", "nvme_path": "/local_nvme"}),
            Some("nvme"),
            "zero_optimization.offload_optimizer.device: nvme",
        ),
    ] {
        let r = grade(&zero(
            json!({"stage": 3, "offload_optimizer": optimizer, "offload_param": param}),
        ));
        let o = assert_only_fails(&r, "offload-optimizer-cpu", hint);
        assert_eq!(o.found.as_deref(), Some(found));
    }
    let r = grade(&zero(json!({"stage": 3, "offload_param": param})));
    assert_only_fails(&r, "offload-optimizer-cpu", None);
}

#[test]
fn parameters_not_offloaded_to_cpu_fail_only_offload_param_cpu() {
    let optimizer = json!({"device": "cpu", "pin_memory": true});
    let r = grade(&zero(json!({"stage": 3, "offload_optimizer": optimizer})));
    let o = assert_only_fails(&r, "offload-param-cpu", None);
    assert_eq!(
        o.found.as_deref(),
        Some("zero_optimization.offload_param: —")
    );
    // Written at the top level, DeepSpeed never reads it.
    let r = grade(&config(json!({
        "zero_optimization": {"stage": 3, "offload_optimizer": optimizer},
        "offload_param": {"device": "cpu"},
    })));
    assert_only_fails(&r, "offload-param-cpu", Some("misplaced"));
    let r = grade(&zero(
        json!({"stage": 3, "offload_optimizer": optimizer, "offload_param": {"device": "nvme"}}),
    ));
    assert_only_fails(&r, "offload-param-cpu", Some("nvme"));
    // NVMe without a path: the advice says what NVMe offload needs.
    assert_eq!(advice_ids(&r), ["nvme"]);
}

#[test]
fn a_config_the_job_does_not_read_from_the_config_map_fails_only_config_mounted() {
    let cases: Vec<(State, Option<&str>, &str)> = vec![
        // Not mounted at all: a file of the image.
        (
            edit_job(solved(), |v| {
                container(v)["volumeMounts"]
                    .as_array_mut()
                    .unwrap()
                    .remove(1);
                v["spec"]["template"]["spec"]["volumes"]
                    .as_array_mut()
                    .unwrap()
                    .remove(1);
            }),
            None,
            "--deepspeed /etc/deepspeed/ds_config.json",
        ),
        (edit_job(solved(), deepspeed(None)), Some("no-flag"), "—"),
        (
            edit_job(solved(), deepspeed(Some("/etc/deepspeed/ds.json"))),
            Some("no-key"),
            "--deepspeed /etc/deepspeed/ds.json → ds-config[ds.json]",
        ),
        // `items` that do not list the path: no such file in the volume.
        (
            edit_job(
                solved(),
                mount(|_, vol| {
                    vol["configMap"]["items"] =
                        json!([{"key": "ds_config.json", "path": "zero3.json"}])
                }),
            ),
            Some("no-key"),
            "--deepspeed /etc/deepspeed/ds_config.json → ds-config[ds_config.json]",
        ),
        (
            edit_job(
                solved(),
                mount(|_, vol| *vol = json!({"name": "ds-config", "emptyDir": {}})),
            ),
            Some("other-volume"),
            "--deepspeed /etc/deepspeed/ds_config.json → emptyDir",
        ),
        (
            edit_job(
                solved(),
                mount(|_, vol| vol["configMap"]["name"] = json!("trainer-standin")),
            ),
            Some("other-volume"),
            "--deepspeed /etc/deepspeed/ds_config.json → configMap trainer-standin",
        ),
        (
            edit_job(solved(), deepspeed(Some("ds_config.json"))),
            Some("relative"),
            "--deepspeed ds_config.json",
        ),
        (
            edit_job(solved(), deepspeed(Some("$(DS_CONFIG)"))),
            Some("variable"),
            "--deepspeed $(DS_CONFIG)",
        ),
        (
            edit_job(
                solved(),
                deepspeed(Some("{\"zero_optimization\": {\"stage\": 3}}")),
            ),
            Some("inline"),
            "--deepspeed {…}",
        ),
        (
            edit_job(solved(), |v| {
                container(v)["command"] = json!(["sleep"]);
                container(v)["args"] = json!(["3600"]);
            }),
            Some("no-command"),
            "sleep 3600",
        ),
    ];
    for (s, hint, found) in cases {
        let r = grade(&s);
        let o = assert_only_fails(&r, "config-mounted", hint);
        assert_eq!(o.found.as_deref(), Some(found), "{hint:?}");
    }
}

#[test]
fn what_the_api_server_refuses_fails_config_mounted_also_in_static_mode() {
    // The mount names no volume of the pod.
    let s = edit_job(solved(), mount(|m, _| m["name"] = json!("deepspeed")));
    let o = assert_only_fails(&grade(&s), "config-mounted", Some("rejected"));
    assert_eq!(
        o.evidence["error"],
        "spec.template.spec.containers[0].volumeMounts[1].name: Not found: \"deepspeed\""
    );
    let r = grade(&files("solution").edit("Job", JOB, |v| {
        container(v)["volumeMounts"][1]["mountPath"] = json!("/opt/trainlab/bin");
    }));
    let o = outcome(&r, "config-mounted");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("rejected"))
    );
    assert!(o.evidence["error"].ends_with("must be unique"), "{o:?}");
    // A Job's pods may not restart Always.
    let r = grade(&files("solution").edit("Job", JOB, |v| {
        v["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    }));
    assert_eq!(
        outcome(&r, "config-mounted").hint.as_deref(),
        Some("rejected")
    );
}

#[test]
fn a_pod_the_trainer_refused_fails_only_pods_running_quoting_its_message() {
    let message = "trainlab stand-in: error: argument --per_device_train_batch_size: invalid int value: 'one'";
    let s = pod(|p| {
        p["status"]["phase"] = json!("Failed");
        p["status"]["containerStatuses"][0]["state"] =
            json!({"terminated": {"exitCode": 2, "reason": "Error", "message": message}});
    })(solved().edit("Job", JOB, job_active));
    let o = assert_only_fails(&grade(&s), "pods-running", Some("crashed"));
    assert_eq!(o.evidence["message"], message);
    assert_eq!(
        o.found.as_deref(),
        Some("zero3-train-q8m4z/trainer: Error (exit 2)")
    );
    assert!(english_hint(&grade(&s), "pods-running").contains("kubectl delete job zero3-train"));
}

#[test]
fn a_failed_stuck_or_suspended_job_fails_pods_running() {
    let s = pod(|p| {
        p["status"]["phase"] = json!("Pending");
        p["status"]["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"python:3.13-slimm\""}});
    })(solved().edit("Job", JOB, job_active));
    assert_only_fails(&grade(&s), "pods-running", Some("stuck"));
    let s = solved().edit("Job", JOB, |v| {
        v["status"] = json!({"failed": 2, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]});
    });
    let s = pod(|p| p["status"]["phase"] = json!("Failed"))(s);
    assert_only_fails(&grade(&s), "pods-running", Some("job-failed"));
    let s = solved()
        .edit("Job", JOB, |v| {
            v["spec"]["suspend"] = json!(true);
            v["status"] = json!({});
        })
        .remove(|o| o.kind() == "Pod");
    assert_only_fails(&grade(&s), "pods-running", Some("suspended"));
}

#[test]
fn pods_still_starting_are_pending_not_failed() {
    let s = solved().edit("Job", JOB, job_active);
    let r = grade(&s.clone().remove(|o| o.kind() == "Pod"));
    assert_eq!(outcome(&r, "pods-running").status, Status::Pending);
    assert_eq!(message(outcome(&r, "pods-running")), "no-pods");
    let r = grade(&pod(|p| {
        p["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/5 nodes are available: 5 Insufficient memory."}]});
    })(s.clone()));
    let o = outcome(&r, "pods-running");
    assert_eq!(
        (o.status, message(o)),
        (Status::Pending, "pods-unschedulable")
    );
    let r = grade(&pod(|p| {
        p["status"] = json!({"phase": "Pending", "containerStatuses": [{"name": "trainer", "image": "python:3.13-slim", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]});
    })(s));
    assert_eq!(message(outcome(&r, "pods-running")), "pods-starting");
    // Pods of another job with the same name do not count (ownership is by uid).
    let r = grade(
        &solved().edit("Job", JOB, job_active).edit("Pod", POD, |p| {
            p["metadata"]["ownerReferences"][0]["uid"] =
                json!("00000000-0000-0000-0000-000000000000")
        }),
    );
    assert_eq!(message(outcome(&r, "pods-running")), "no-pods");
}

#[test]
fn a_missing_config_map_or_job_fails_with_the_missing_text() {
    let r = grade(&solved().remove(|o| o.kind() == "ConfigMap"));
    for c in CONFIG_CHECKS.iter().chain(["config-mounted"].iter()) {
        let o = outcome(&r, c);
        assert_eq!(
            (o.status, o.hint.as_deref()),
            (Status::Fail, Some("missing")),
            "{c}"
        );
        assert_eq!(o.evidence["name"], "ds-config");
    }
    assert_eq!(outcome(&r, "pods-running").status, Status::Pass);
    let r = grade(&solved().remove(|o| o.kind() == "Job"));
    for c in CONFIG_CHECKS {
        assert_eq!(outcome(&r, c).status, Status::Pass, "{c}");
    }
    for c in ["config-mounted", "pods-running"] {
        let o = outcome(&r, c);
        assert_eq!(
            (o.status, o.hint.as_deref()),
            (Status::Fail, Some("missing"))
        );
        assert_eq!(
            o.expected.as_deref(),
            Some("kubeflow.org/v1 PyTorchJob zero3-train | batch/v1 Job zero3-train | trainer.kubeflow.org/v1alpha1 TrainJob zero3-train")
        );
    }
    let hint = english_hint(&r, "pods-running");
    assert!(
        hint.contains("There is no `zero3-train` in namespace `trainlab-zero3-offload` of a kind this lab accepts: `kubeflow.org/v1` PyTorchJob, `batch/v1` Job, `trainer.kubeflow.org/v1alpha1` TrainJob."),
        "{hint}"
    );
    // A version the API server does not serve is not there either.
    let r = grade(&solved().edit("Job", JOB, |v| v["apiVersion"] = json!("batch/v2")));
    assert_eq!(
        outcome(&r, "config-mounted").hint.as_deref(),
        Some("missing")
    );
}

// ---------------------------------------------------------------------------------------------
// Advice.

#[test]
fn unpinned_offloads_pass_and_draw_the_unpinned_advice() {
    // `pin_memory: false` is what the lab recommends on hosts with a low `ulimit -l`: the state
    // is still offloaded to the CPU, only more slowly.
    let pinned = json!({"device": "cpu", "pin_memory": true});
    let unpinned = json!({"device": "cpu", "pin_memory": false});
    for (optimizer, param, paths) in [
        (
            &unpinned,
            &pinned,
            "zero_optimization.offload_optimizer.pin_memory",
        ),
        (
            &pinned,
            &unpinned,
            "zero_optimization.offload_param.pin_memory",
        ),
        (
            &unpinned,
            &unpinned,
            "zero_optimization.offload_optimizer.pin_memory, zero_optimization.offload_param.pin_memory",
        ),
    ] {
        let r = grade(&zero(
            json!({"stage": 3, "offload_optimizer": optimizer, "offload_param": param}),
        ));
        assert_all_pass(&r);
        assert_eq!(advice_ids(&r), ["unpinned"]);
        assert_eq!(r.advice[0].evidence["paths"], paths);
        for lang in [Lang::Ja, Lang::En] {
            let text = &LabReport::new(&r, lang).advice[0].text;
            assert!(text.contains("ulimit -l") && text.contains(paths), "{text}");
        }
    }
    // Pinned, or unset (pinned by default since DeepSpeed v0.19.5): no advice.
    let r = grade(&zero(
        json!({"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": pinned}),
    ));
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // An unpinned NVMe offload is the nvme hint's, not this advice's.
    let r = grade(&zero(
        json!({"stage": 3, "offload_optimizer": pinned, "offload_param": {"device": "nvme", "nvme_path": "/nvme", "pin_memory": false}}),
    ));
    assert_only_fails(&r, "offload-param-cpu", Some("nvme"));
    assert!(!advice_ids(&r).contains(&"unpinned"));
}

#[test]
fn too_little_host_memory_for_the_offloaded_state_is_advised() {
    let s = edit_job(solved(), |v| {
        container(v)["resources"] =
            json!({"requests": {"memory": "256Mi"}, "limits": {"memory": "256Mi"}});
    });
    let r = grade(&s);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["host-memory"]);
    let a = &r.advice[0];
    assert_eq!(
        (
            a.evidence["estimate"].as_str(),
            a.evidence["request"].as_str()
        ),
        ("361Mi", "256Mi")
    );
    assert_eq!(a.evidence["bytes"], "18");
    // Only the optimizer offloaded: 16 bytes per parameter (14M × 16 × 1.5 = 321Mi).
    let opt = edit_job(
        zero(json!({"stage": 3, "offload_optimizer": {"device": "cpu"}})),
        |v| container(v)["resources"] = json!({"requests": {"memory": "256Mi"}}),
    );
    let r = grade(&opt);
    let a = r.advice.iter().find(|a| a.id == "host-memory").unwrap();
    assert_eq!(
        (
            a.evidence["bytes"].as_str(),
            a.evidence["estimate"].as_str()
        ),
        ("16", "321Mi")
    );
    // A 7.6B model needs far more than the kind solution requests.
    let r = s.clone().param("model_params", "7.6B").grade(LAB);
    assert_eq!(r.advice[0].evidence["estimate"], "192Gi");
    // No request at all is advised too; a bad parameter is bad input.
    let r = grade(&edit_job(solved(), |v| {
        container(v)["resources"] = json!({})
    }));
    assert_eq!(r.advice[0].evidence["request"], "—");
    assert!(s.param("model_params", "large").try_grade(LAB).is_err());
}

// ---------------------------------------------------------------------------------------------
// Texts.

/// Three lowercase words in a row: English built in Rust, which belongs in lab.yaml instead.
fn english(text: &str) -> bool {
    let plain = |w: &&str| {
        let w = w.trim_matches(|c: char| matches!(c, ',' | ';' | '.' | ':' | '(' | ')'));
        w.len() >= 2 && w.chars().all(|c| c.is_ascii_lowercase())
    };
    text.split_whitespace()
        .collect::<Vec<_>>()
        .windows(3)
        .any(|w| w.iter().all(plain))
}

#[test]
fn expected_and_found_are_values_and_hints_are_filled_in_both_languages() {
    let states = vec![
        solved(),
        files("draft"),
        config_text("{ \"stage\": 3, }"),
        zero(json!({"stage": "three"})),
        zero(json!({"stage": 2, "offload_param": {"device": "cpu"}})),
        zero(
            json!({"stage": 3, "offload_optimizer": {"device": "nvme"}, "offload_param": {"device": "cpu", "pin_memory": false}}),
        ),
        edit_job(solved(), deepspeed(Some("/etc/deepspeed/ds.json"))),
        edit_job(solved(), mount(|m, _| m["name"] = json!("deepspeed"))),
        pod(|p| {
            p["status"]["phase"] = json!("Failed");
            p["status"]["containerStatuses"][0]["state"] = json!({"terminated": {"exitCode": 1, "reason": "Error", "message": "ValueError: Expected a string path to an existing deepspeed config"}});
        })(solved().edit("Job", JOB, job_active)),
        solved().remove(|o| o.kind() == "ConfigMap" || o.kind() == "Job"),
    ];
    for s in states {
        let r = grade(&s);
        for o in &r.outcomes {
            for v in [&o.expected, &o.found].into_iter().flatten() {
                assert!(!english(v), "{}: {v}", o.check);
            }
        }
        for lang in [Lang::Ja, Lang::En] {
            let rep = LabReport::new(&r, lang);
            let texts = rep
                .outcomes
                .iter()
                .filter_map(|o| o.hint.as_ref().or(o.reason.as_ref()))
                .chain(rep.advice.iter().map(|a| &a.text));
            for t in texts {
                let unfilled: Vec<String> = trainlab::catalog::placeholders(t);
                assert!(
                    unfilled.is_empty(),
                    "{lang:?}: unfilled {unfilled:?} in {t}"
                );
            }
        }
    }
}

#[test]
fn a_run_clm_line_without_a_dataset_is_advised_not_failed() {
    support::run_clm::assert_a_line_run_clm_refuses_is_advised_not_failed(
        LAB,
        "Job",
        State::solution_of(LAB, "eks"),
    );
}

// ---------------------------------------------------------------------------------------------
// The same lab as a TrainJob over Kubeflow Trainer v2's `deepspeed-distributed` runtime (MPI).

fn trainjob() -> State {
    State::load("zero3-offload/trainjob-state").and("kind-nodes")
}

#[test]
fn a_trainjob_over_deepspeed_distributed_passes_every_check() {
    let r = trainjob().grade(LAB);
    assert_all_pass(&r);
    // Both the launcher and the sshd worker see the config at the path mpirun's ranks read.
    let found = outcome(&r, "config-mounted")
        .found
        .clone()
        .unwrap_or_default();
    assert!(
        found.contains("node: --deepspeed /etc/deepspeed/ds_config.json"),
        "{found}"
    );
    assert!(found.contains("launcher: --deepspeed"), "{found}");
}

#[test]
fn a_trainjob_whose_workers_lack_the_config_mount_fails_config_mounted_for_the_workers() {
    let r = trainjob()
        .edit("TrainJob", "zero3-train", |v| {
            let jobs = &mut v["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]
                ["spec"]["replicatedJobs"];
            jobs.as_array_mut().unwrap().retain(|j| j["name"] != "node");
        })
        .grade(LAB);
    let o = outcome(&r, "config-mounted");
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.evidence["role"], "node");
}

#[test]
fn a_trainjob_over_a_runtime_the_cluster_lacks_fails_config_mounted_naming_its_runtimes() {
    let r = trainjob()
        .edit("TrainJob", "zero3-train", |v| {
            v["spec"]["runtimeRef"]["name"] = json!("deepspeed")
        })
        .grade(LAB);
    let o = outcome(&r, "config-mounted");
    assert_eq!(o.hint.as_deref(), Some("runtime-missing"));
    assert_eq!(o.evidence["runtimes"], "deepspeed-distributed");
    // The config checks read the ConfigMap, not the job: still graded.
    assert_eq!(status(&r, "zero-stage-3"), Status::Pass);
}
