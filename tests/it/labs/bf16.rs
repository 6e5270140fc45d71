//! Lab 10 `bf16`: a PyTorchJob in BF16 mixed precision, without FP16 or loss scaling, placed only
//! on accelerators with native BF16.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::observe::{manifest_files, parse_file};
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Reason, Status};

const LAB: &str = "bf16";

fn solved() -> State {
    State::load("bf16/solution-state").and("kind-nodes")
}

fn grade(s: &State) -> LabResult {
    s.grade(LAB)
}

/// The objects of a folder of the lab itself (`solution`, `draft`, `starter`), as files.
fn lab_files(folders: &[&str]) -> State {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/10-bf16");
    let mut s = State::load("bf16/solution-state").into_files();
    s.objects = folders
        .iter()
        .flat_map(|f| manifest_files(&dir.join(f)).unwrap())
        .flat_map(|f| parse_file(&f).unwrap())
        .collect();
    s
}

fn english_hint(r: &LabResult, check: &str) -> String {
    let rep = LabReport::new(r, Lang::En);
    rep.outcomes
        .iter()
        .find(|o| o.check == check)
        .unwrap()
        .hint
        .clone()
        .unwrap_or_default()
}

/// Replaces the `pytorch` container's args in both replicas.
fn args<'a>(words: &'a [&'a str]) -> impl Fn(&mut Value) + 'a {
    move |v: &mut Value| {
        for role in ["Master", "Worker"] {
            v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0]["args"] =
                json!(words);
        }
    }
}

const BASE: &[&str] = &[
    "pretrain_gpt.py",
    "--num-layers",
    "24",
    "--num-attention-heads",
    "16",
    "--micro-batch-size",
    "2",
    "--global-batch-size",
    "4",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    BASE.iter().chain(extra).copied().collect()
}

fn job_args(extra: &[&'static str]) -> State {
    let words = with(extra);
    solved().edit("PyTorchJob", "bf16-train", move |v| args(&words)(v))
}

/// The job running an HF Trainer script instead: HF's spellings (`--bf16 True`, `--bf16 false`)
/// belong to its parser, not to Megatron-LM's.
fn hf_job_args(extra: &[&'static str]) -> State {
    let words: Vec<&str> = ["train.py", "--output_dir", "/tmp/o"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    solved().edit("PyTorchJob", "bf16-train", move |v| args(&words)(v))
}

/// Sets the node affinity of both replicas.
fn placement(affinity: Value) -> impl Fn(&mut Value) {
    move |v: &mut Value| {
        for role in ["Master", "Worker"] {
            v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["affinity"] =
                affinity.clone();
        }
    }
}

fn required(terms: Value) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}})
}

// ---------------------------------------------------------------------------------------------
// The solution and the variants that are right.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = grade(&solved());
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "bf16-on").found.as_deref(),
        Some("Master: --bf16; Worker: --bf16")
    );
    assert_eq!(
        outcome(&r, "pods-on-bf16-nodes").found.as_deref(),
        Some("bf16-train-master-0 → trainlab-worker, bf16-train-worker-0 → trainlab-worker3")
    );
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn finished_pods_still_pass() {
    let r = grade(
        &solved()
            .edit_all("Pod", |p| {
                p["status"]["phase"] = json!("Succeeded");
                p["status"]["containerStatuses"][0]["state"] = json!({"terminated": {
                    "exitCode": 0, "reason": "Completed",
                    "message": "trainlab stand-in (not a real trainer): megatron world=2 precision=bf16"}});
            })
            .edit("PyTorchJob", "bf16-train", |v| {
                v["status"]["conditions"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded"}));
            }),
    );
    assert_all_pass(&r);
}

#[test]
fn other_ways_to_say_bf16_pass() {
    for state in [
        hf_job_args(&["--bf16", "True"]),
        hf_job_args(&["--bf16=true"]),
        job_args(&["trainer.precision=bf16-mixed"]),
        job_args(&["trainer.precision=bf16"]),
        job_args(&["trainer.plugins=bf16_mixed"]),
    ] {
        let extra = &state.objects[0].value["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
            ["spec"]["containers"][0]["args"];
        let r = grade(&state);
        assert_eq!(
            (
                outcome(&r, "bf16-on").status,
                outcome(&r, "fp16-off").status,
                outcome(&r, "no-loss-scaling").status
            ),
            (Status::Pass, Status::Pass, Status::Pass),
            "{extra:?}: {:?}",
            r.outcomes
        );
    }
}

#[test]
fn workers_only_pass_too() {
    let r = grade(
        &solved()
            .edit("PyTorchJob", "bf16-train", |v| {
                let specs = v["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap();
                specs.remove("Master");
                specs["Worker"]["replicas"] = json!(2);
                v["spec"]["elasticPolicy"] = json!({"rdzvBackend": "c10d"});
            })
            .edit("Pod", "bf16-train-master-0", |p| {
                p["metadata"]["name"] = json!("bf16-train-worker-1");
                p["metadata"]["labels"]["training.kubeflow.org/replica-type"] = json!("worker");
            }),
    );
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "bf16-on").found.as_deref(),
        Some("Worker: --bf16")
    );
}

#[test]
fn a_shell_script_and_an_hf_script_are_read_too() {
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        for role in ["Master", "Worker"] {
            let c = &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0];
            c["command"] = json!(["/bin/sh", "-c"]);
            c["args"] = json!([
                "pip install -q transformers && exec torchrun --nproc_per_node=1 run_clm.py --model_name_or_path EleutherAI/pythia-14m --dataset_name Salesforce/wikitext --dataset_config_name wikitext-2-raw-v1 --do_train --output_dir /tmp/out --per_device_train_batch_size 4 --bf16 true"
            ]);
        }
    }));
    assert_all_pass(&r);
}

#[test]
fn a_deepspeed_config_in_a_configmap_counts() {
    let cm = |json: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: ds, namespace: trainlab-bf16}}\ndata:\n  ds.json: '{json}'\n"
        )
    };
    let mount = |v: &mut Value| {
        for role in ["Master", "Worker"] {
            let spec = &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"];
            spec["volumes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "ds", "configMap": {"name": "ds"}}));
            let c = &mut spec["containers"][0];
            c["volumeMounts"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "ds", "mountPath": "/config"}));
            c["args"] = json!([
                "run_clm.py",
                "--output_dir",
                "/tmp/out",
                "--deepspeed",
                "/config/ds.json"
            ]);
        }
    };
    // bf16 from the config alone.
    let r = grade(
        &solved()
            .add(&cm(
                r#"{"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}"#,
            ))
            .edit("PyTorchJob", "bf16-train", mount),
    );
    assert_all_pass(&r);
    // fp16 with a loss scale in the config: both the precision and the loss scaling are seen.
    let r = grade(
        &solved()
            .add(&cm(
                r#"{"fp16": {"enabled": true, "loss_scale": 0, "initial_scale_power": 16}}"#,
            ))
            .edit("PyTorchJob", "bf16-train", mount),
    );
    assert_eq!(outcome(&r, "fp16-off").status, Status::Fail);
    assert_eq!(
        outcome(&r, "no-loss-scaling").found.as_deref(),
        Some("/config/ds.json (ConfigMap ds, key ds.json):fp16.loss_scale=0, /config/ds.json (ConfigMap ds, key ds.json):fp16.initial_scale_power=16")
    );
    // An HF-style template with `auto` and a dormant fp16 section: bf16 from --bf16, no fp16.
    let r = grade(
        &solved()
            .add(&cm(
                r#"{"fp16": {"enabled": "auto", "loss_scale": 0}, "bf16": {"enabled": "auto"}}"#,
            ))
            .edit("PyTorchJob", "bf16-train", mount)
            .edit("PyTorchJob", "bf16-train", |v| {
                for role in ["Master", "Worker"] {
                    v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0]
                        ["args"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!("--bf16"));
                }
            }),
    );
    assert_all_pass(&r);
    // A config the manifests do not show: advice, and the command line decides.
    let r = grade(&job_args(&["--bf16", "--deepspeed_config", "/etc/ds.json"]));
    assert_all_pass(&r);
    assert_eq!(r.advice[0].id, "ds-config-unseen");
}

#[test]
fn other_placements_that_only_allow_bf16_pass() {
    let cases = [
        required(
            json!([{"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-40GB"]}]}]),
        ),
        required(
            json!([{"matchExpressions": [{"key": "nvidia.com/gpu.compute.major", "operator": "Gt", "values": ["7"]}]}]),
        ),
        required(
            json!([{"matchExpressions": [{"key": "nvidia.com/gpu.compute.major", "operator": "In", "values": ["8", "9"]}]}]),
        ),
        required(json!([
            {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}]},
            {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100"]}]}
        ])),
    ];
    for affinity in cases {
        let r = grade(&solved().edit("PyTorchJob", "bf16-train", placement(affinity.clone())));
        assert_all_pass(&r);
    }
    // A nodeSelector alone.
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        for role in ["Master", "Worker"] {
            let spec = &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"];
            spec.as_object_mut().unwrap().remove("affinity");
            spec["nodeSelector"] = json!({"node.kubernetes.io/instance-type": "p5.48xlarge"});
        }
    }));
    assert_eq!(outcome(&r, "bf16-capable-placement").status, Status::Pass);
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn no_precision_flag_fails_bf16_on() {
    let r = grade(&job_args(&[]));
    let o = assert_only_fails(&r, "bf16-on", None);
    assert_eq!(o.found.as_deref(), Some("—"));
    assert!(english_hint(&r, "bf16-on").contains("(`torchrun pretrain_gpt.py --num-layers 24"));
}

#[test]
fn a_megatron_switch_given_a_value_is_refused_as_megatron_refuses_it() {
    // Megatron-LM's --bf16 is a store_true switch: argparse refuses "True" as an unrecognized
    // argument and `=true` as an ignored explicit argument (tests/conformance/variants.yaml).
    for extra in [&["--bf16", "True"][..], &["--bf16=true"]] {
        let r = grade(&job_args(extra));
        let o = outcome(&r, "bf16-on");
        assert_eq!(o.status, Status::Fail, "{extra:?}: {o:?}");
        assert_eq!(o.hint.as_deref(), Some("bad-flag"), "{extra:?}: {o:?}");
    }
    // The underscore spelling is no flag of Megatron-LM's parser either.
    let r = grade(&job_args(&["--bf16", "--tensor_model_parallel_size", "1"]));
    assert_eq!(outcome(&r, "bf16-on").hint.as_deref(), Some("bad-flag"));
}

#[test]
fn hf_bf16_false_and_fp32_are_not_bf16() {
    let r = grade(&hf_job_args(&["--bf16", "false"]));
    assert_only_fails(&r, "bf16-on", None);
    let r = grade(&job_args(&["trainer.precision=32"]));
    let o = assert_only_fails(&r, "bf16-on", None);
    assert_eq!(o.found.as_deref(), Some("trainer.precision=32"));
}

#[test]
fn a_removed_megatron_flag_fails_bf16_on_as_megatron_stops_on_it() {
    // validate_args: "--batch-size argument is no longer valid, use --micro-batch-size instead"
    // (tests/conformance variants.yaml mg-batch-size-removed, mg-warmup-removed).
    for extra in [
        &["--bf16", "--batch-size", "8"][..],
        &["--bf16", "--warmup", "100"],
    ] {
        let r = grade(&job_args(extra));
        let o = outcome(&r, "bf16-on");
        assert_eq!(o.status, Status::Fail, "{extra:?}: {o:?}");
        assert_eq!(o.hint.as_deref(), Some("bad-flag"), "{extra:?}: {o:?}");
        assert!(
            o.found.as_deref().unwrap_or_default().contains(extra[1]),
            "{extra:?}: {o:?}"
        );
    }
}

#[test]
fn an_hf_bf16_that_is_no_boolean_fails_bf16_on_as_hf_refuses_it() {
    // HfArgumentParser's string_to_bool: "Truthy value expected" (tests/conformance
    // variants.yaml hf-bf16-maybe: the real parser refuses it too).
    let r = grade(&hf_job_args(&["--bf16", "maybe"]));
    let o = outcome(&r, "bf16-on");
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.hint.as_deref(), Some("bad-flag"), "{o:?}");
    assert!(
        o.found.as_deref().unwrap_or_default().contains("maybe"),
        "{o:?}"
    );
    // `false` is a value HF reads, not a stray word.
    assert_eq!(
        outcome(&grade(&hf_job_args(&["--bf16", "false"])), "fp16-off").status,
        Status::Pass
    );
}

#[test]
fn an_unresolved_variable_fails_bf16_on_with_its_hint() {
    let r = grade(&hf_job_args(&["--bf16", "$(USE_BF16)"]));
    let o = assert_only_fails(&r, "bf16-on", Some("variable"));
    assert_eq!(o.found.as_deref(), Some("--bf16 $(USE_BF16)"));
}

#[test]
fn fp16_instead_of_bf16_fails_fp16_off_and_bf16_on() {
    let r = grade(&job_args(&["--fp16"]));
    assert_eq!(outcome(&r, "bf16-on").status, Status::Fail);
    assert_eq!(outcome(&r, "bf16-on").found.as_deref(), Some("--fp16"));
    assert_eq!(outcome(&r, "fp16-off").status, Status::Fail);
    assert_eq!(outcome(&r, "fp16-off").hint, None);
}

#[test]
fn both_precisions_fail_fp16_off_only_with_the_hf_error() {
    let r = grade(&job_args(&["--bf16", "--fp16"]));
    let o = assert_only_fails(&r, "fp16-off", Some("both"));
    assert_eq!(o.found.as_deref(), Some("--fp16"));
    assert!(english_hint(&r, "fp16-off").contains("At most one of fp16 and bf16 can be True"));
    let r = grade(&job_args(&["trainer.precision=16-mixed", "--bf16"]));
    assert_only_fails(&r, "fp16-off", Some("both"));
}

#[test]
fn a_loss_scale_under_bf16_fails_no_loss_scaling() {
    let r = grade(&job_args(&["--bf16", "--loss-scale", "1024"]));
    let o = assert_only_fails(&r, "no-loss-scaling", None);
    assert_eq!(o.found.as_deref(), Some("--loss-scale 1024"));
    let r = grade(&job_args(&["--bf16", "--initial-loss-scale=65536"]));
    let o = assert_only_fails(&r, "no-loss-scaling", None);
    assert_eq!(o.found.as_deref(), Some("--initial-loss-scale 65536"));
}

#[test]
fn no_placement_fails_bf16_capable_placement() {
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        for role in ["Master", "Worker"] {
            v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
                .as_object_mut()
                .unwrap()
                .remove("affinity");
        }
    }));
    let o = assert_only_fails(&r, "bf16-capable-placement", None);
    assert_eq!(o.evidence["role"], "Master");
}

#[test]
fn a_v100_or_t4_in_the_placement_fails_it_naming_the_gpu() {
    let r = grade(&solved().edit(
        "PyTorchJob",
        "bf16-train",
        placement(required(json!([{"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge", "p3.16xlarge"]}]}]))),
    ));
    let o = assert_only_fails(&r, "bf16-capable-placement", Some("lacks"));
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type=p3.16xlarge (V100 CC 7.0)")
    );
    // A second term that allows any GPU opens the placement again.
    let r = grade(&solved().edit(
        "PyTorchJob",
        "bf16-train",
        placement(required(json!([
            {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}]},
            {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["Tesla-T4"]}]}
        ]))),
    ));
    let o = assert_only_fails(&r, "bf16-capable-placement", Some("lacks"));
    assert_eq!(o.evidence["model"], "T4 CC 7.5");
    // `Gt 6` still admits compute capability 7.
    let r = grade(&solved().edit(
        "PyTorchJob",
        "bf16-train",
        placement(required(json!([{"matchExpressions": [{"key": "nvidia.com/gpu.compute.major", "operator": "Gt", "values": ["6"]}]}]))),
    ));
    assert_only_fails(&r, "bf16-capable-placement", None);
}

#[test]
fn an_unknown_instance_type_fails_bf16_capable_placement() {
    let r = grade(&solved().edit(
        "PyTorchJob",
        "bf16-train",
        placement(required(json!([{"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]}]))),
    ));
    assert_only_fails(&r, "bf16-capable-placement", Some("unknown"));
}

#[test]
fn a_pod_on_a_node_without_bf16_fails_pods_on_bf16_nodes() {
    let r = grade(&solved().edit_all("Node", |n| {
        if n["metadata"]["name"] == "trainlab-worker3" {
            n["metadata"]["labels"]["node.kubernetes.io/instance-type"] = json!("p3dn.24xlarge");
        }
    }));
    let o = assert_only_fails(&r, "pods-on-bf16-nodes", None);
    assert_eq!(
        o.found.as_deref(),
        Some("bf16-train-worker-0 → trainlab-worker3 (node.kubernetes.io/instance-type=p3dn.24xlarge)")
    );
    assert_eq!(o.evidence["model"], "V100 CC 7.0");
    // A node no label of the table describes.
    let r = grade(&solved().edit_all("Node", |n| {
        if n["metadata"]["name"] == "trainlab-worker3" {
            let l = n["metadata"]["labels"].as_object_mut().unwrap();
            l.remove("node.kubernetes.io/instance-type");
            l.remove("nvidia.com/gpu.product");
        }
    }));
    assert_only_fails(&r, "pods-on-bf16-nodes", Some("unknown-node"));
}

#[test]
fn a_pod_the_stand_in_refused_fails_pods_running_quoting_it() {
    let r = grade(&solved().edit("Pod", "bf16-train-worker-0", |p| {
        p["status"]["containerStatuses"][0]["restartCount"] = json!(2);
        p["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting failed container=pytorch"}});
        p["status"]["containerStatuses"][0]["lastState"] = json!({"terminated": {
            "exitCode": 1, "reason": "Error",
            "message": "ValueError: num_attention_heads (16) must be a multiple of tensor_model_parallel_size (3).\n"}});
    }));
    let o = assert_only_fails(&r, "pods-running", Some("crashed"));
    // The kit's one rule (`kit::k8s::pods::running`): found names the container and its exit; the
    // tool's own words are the `message` the hint quotes.
    assert_eq!(
        o.found.as_deref(),
        Some("bf16-train-worker-0/pytorch: Error (exit 1)")
    );
    assert_eq!(
        o.evidence["message"],
        "ValueError: num_attention_heads (16) must be a multiple of tensor_model_parallel_size (3)."
    );
    assert_eq!(
        (
            o.evidence["container"].as_str(),
            o.evidence["exit_code"].as_str()
        ),
        ("pytorch", "1")
    );
}

#[test]
fn a_failed_job_and_a_missing_image_fail_pods_running() {
    let r = grade(&solved().edit("Pod", "bf16-train-master-0", |p| {
        p["status"]["phase"] = json!("Pending");
        p["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"python:3.99\""}});
    }));
    assert_only_fails(&r, "pods-running", Some("stuck"));
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        v["status"]["conditions"].as_array_mut().unwrap().push(
            json!({"type": "Failed", "status": "True", "reason": "PyTorchJobFailed", "message": "PyTorchJob bf16-train is failed because 1 Worker replica(s) failed."}),
        );
    }));
    assert_only_fails(&r, "pods-running", Some("job-failed"));
    // Suspended by `runPolicy.suspend` (its pods are being deleted): not running, whatever
    // the pods still show.
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        v["spec"]["runPolicy"] = json!({"suspend": true});
        v["status"] = json!({});
    }));
    let o = assert_only_fails(&r, "pods-running", Some("suspended"));
    assert_eq!(o.evidence["field"], "spec.runPolicy.suspend");
}

// ---------------------------------------------------------------------------------------------
// Pending, missing, rejected.

#[test]
fn pods_still_starting_are_pending_not_failed() {
    let r = grade(&solved().edit("Pod", "bf16-train-worker-0", |p| {
        p["status"]["phase"] = json!("Pending");
        p["spec"].as_object_mut().unwrap().remove("nodeName");
        p["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "ContainerCreating"}});
    }));
    assert_eq!(outcome(&r, "pods-running").status, Status::Pending);
    assert!(
        matches!(&outcome(&r, "pods-running").reason, Some(Reason::Message(m)) if m == "pods-starting")
    );
    assert_eq!(outcome(&r, "pods-on-bf16-nodes").status, Status::Pending);
    assert_eq!(r.count(Status::Fail), 0);
    let r = grade(&solved().remove(|o| o.kind() == "Pod"));
    assert_eq!(outcome(&r, "pods-running").status, Status::Pending);
    assert!(
        matches!(&outcome(&r, "pods-running").reason, Some(Reason::Message(m)) if m == "no-pods")
    );
    assert_eq!(outcome(&r, "pods-on-bf16-nodes").status, Status::Pending);
}

#[test]
fn pods_of_another_job_with_the_same_name_do_not_count() {
    let r = grade(&solved().edit_all("Pod", |p| {
        p["metadata"]["ownerReferences"][0]["uid"] = json!("0000-another-job");
    }));
    assert_eq!(outcome(&r, "pods-running").status, Status::Pending);
}

#[test]
fn a_missing_job_or_a_wrong_version_fails_every_check_once() {
    let r = grade(&solved().remove(|o| o.kind() == "PyTorchJob"));
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.status == Status::Fail && o.hint.as_deref() == Some("missing")));
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        v["apiVersion"] = json!("kubeflow.org/v2beta1");
    }));
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.status == Status::Fail && o.hint.as_deref() == Some("missing")));
    assert_eq!(
        outcome(&r, "bf16-on").found.as_deref(),
        Some("kubeflow.org/v2beta1 PyTorchJob bf16-train")
    );
}

#[test]
fn what_the_webhook_or_the_api_server_refuses_fails_bf16_on() {
    // No container named pytorch.
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        v["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] =
            json!("trainer");
    }));
    let o = assert_only_fails(&r, "bf16-on", Some("rejected"));
    assert_eq!(
        o.found.as_deref(),
        Some("spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name pytorch")
    );
    // Master replicas unset.
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        v["spec"]["pytorchReplicaSpecs"]["Master"]
            .as_object_mut()
            .unwrap()
            .remove("replicas");
    }));
    let o = assert_only_fails(&r, "bf16-on", Some("rejected"));
    assert_eq!(
        o.found.as_deref(),
        Some("spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1")
    );
    // A GPU request without the limit.
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        let res = &mut v["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
            [0]["resources"];
        res["limits"]
            .as_object_mut()
            .unwrap()
            .remove("nvidia.com/gpu");
        res["requests"]["nvidia.com/gpu"] = json!(1);
    }));
    let o = assert_only_fails(&r, "bf16-on", Some("rejected"));
    assert_eq!(
        o.found.as_deref(),
        Some("spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources")
    );
    assert!(
        o.evidence["field"].ends_with("limits[nvidia.com/gpu]"),
        "{o:?}"
    );
}

#[test]
fn a_command_without_a_training_script_fails_the_command_checks() {
    let r = grade(&solved().edit("PyTorchJob", "bf16-train", |v| {
        for role in ["Master", "Worker"] {
            let c =
                &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0];
            c["command"] = json!(["/workspace/train.sh"]);
            c["args"] = json!([]);
        }
    }));
    for check in ["bf16-on", "fp16-off", "no-loss-scaling"] {
        assert_eq!(outcome(&r, check).status, Status::Fail, "{check}");
        assert_eq!(
            outcome(&r, check).hint.as_deref(),
            Some("no-command"),
            "{check}"
        );
    }
    let r = grade(&job_args(&["--bf16", "--loss-scale", "big"]));
    assert_eq!(
        outcome(&r, "no-loss-scaling").hint.as_deref(),
        Some("bad-flag")
    );
}

// ---------------------------------------------------------------------------------------------
// Static mode.

#[test]
fn static_mode_passes_the_solution_and_fails_the_draft() {
    let r = grade(&lab_files(&["solution", "starter"]).param("nodes", "2"));
    for o in &r.outcomes {
        let stage_state = matches!(o.check.as_str(), "pods-on-bf16-nodes" | "pods-running");
        let want = if stage_state {
            Status::Skipped
        } else {
            Status::Pass
        };
        assert_eq!(o.status, want, "{o:?}");
    }
    let r = grade(&lab_files(&["draft"]));
    for check in [
        "bf16-on",
        "fp16-off",
        "no-loss-scaling",
        "bf16-capable-placement",
    ] {
        assert_eq!(outcome(&r, check).status, Status::Fail, "{check}");
    }
    assert_eq!(
        outcome(&r, "no-loss-scaling").found.as_deref(),
        Some("--initial-loss-scale 65536")
    );
}
// ---------------------------------------------------------------------------------------------
// The EKS reference answer.

/// The EKS reference answer as the learner's files: each file of `solution-eks/` replaces the
/// same-named file of `solution/`, graded with the lab's `eks` parameters.
fn eks_solution() -> State {
    State::solution_of(LAB, "eks")
}

#[test]
fn the_eks_solution_passes_every_spec_check_with_the_eks_params() {
    let r = eks_solution().grade(LAB);
    for c in [
        "bf16-on",
        "fp16-off",
        "no-loss-scaling",
        "bf16-capable-placement",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in ["pods-on-bf16-nodes", "pods-running"] {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

#[test]
fn the_eks_solution_is_what_the_task_text_says_for_eks() {
    assert_eks_megatron_job_matches_the_task_text(LAB);
}

#[test]
fn a_run_clm_line_without_a_dataset_is_advised_not_failed() {
    let answer = solved().edit("PyTorchJob", "bf16-train", |v| {
        for role in ["Master", "Worker"] {
            let c =
                &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0];
            c["command"] = json!(["torchrun", "--nproc_per_node=1", "run_clm.py"]);
            c["args"] = json!([
                "--model_name_or_path",
                "EleutherAI/pythia-14m",
                "--dataset_name",
                "Salesforce/wikitext",
                "--do_train",
                "--output_dir",
                "/tmp/out",
                "--bf16"
            ]);
        }
    });
    support::run_clm::assert_a_line_run_clm_refuses_is_advised_not_failed(
        LAB,
        "PyTorchJob",
        answer,
    );
}

// ---------------------------------------------------------------------------------------------
// The same lab as a TrainJob (Kubeflow Trainer v2) over `torch-distributed`.

fn trainjob() -> State {
    State::load("bf16/trainjob-state").and("kind-nodes")
}

fn edit_trainjob(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("TrainJob", "bf16-train", f)
}

#[test]
fn a_trainjob_training_in_bf16_on_bf16_nodes_passes_every_check() {
    assert_all_pass(&trainjob().grade("bf16"));
}

#[test]
fn a_trainjob_in_fp16_or_placed_anywhere_fails_the_check_it_breaks() {
    let r = edit_trainjob(trainjob(), |v| {
        let a = v["spec"]["trainer"]["args"].as_array_mut().unwrap();
        let i = a.iter().position(|w| w == "--bf16").unwrap();
        a[i] = json!("--fp16");
    })
    .grade("bf16");
    assert_eq!(status(&r, "bf16-on"), Status::Fail);
    assert_eq!(status(&r, "fp16-off"), Status::Fail);
    // Without the runtime patch's affinity the pods may land on any GPU node.
    let r = edit_trainjob(trainjob(), |v| {
        v["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
            [0]["template"]["spec"]["template"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("affinity");
    })
    .grade("bf16");
    assert_eq!(status(&r, "bf16-capable-placement"), Status::Fail, "{r:?}");
}

#[test]
fn a_trainjobs_pods_on_a_node_without_bf16_fail_pods_on_bf16_nodes() {
    let r = trainjob()
        .edit_all("Pod", |p| p["spec"]["nodeName"] = json!("trainlab-worker4"))
        .edit("Node", "trainlab-worker4", |n| {
            n["metadata"]["labels"]["node.kubernetes.io/instance-type"] = json!("p3.16xlarge")
        })
        .grade("bf16");
    assert_eq!(status(&r, "pods-on-bf16-nodes"), Status::Fail, "{r:?}");
}

#[test]
fn a_trainjob_from_files_passes_its_spec_checks_over_the_built_in_runtime() {
    let r = trainjob()
        .remove(|o| o.kind() != "TrainJob")
        .into_files()
        .grade("bf16");
    for c in [
        "bf16-on",
        "fp16-off",
        "no-loss-scaling",
        "bf16-capable-placement",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
}

#[test]
fn the_demo_learner_swapped_fp16_for_bf16_but_kept_the_drafts_initial_loss_scale() {
    // manifests/demo/10-bf16.yaml: a completed TrainJob over the demo's torch-distributed.
    let r = State::demo().grade(LAB);
    let o = assert_only_fails(&r, "no-loss-scaling", None);
    assert_eq!(o.found.as_deref(), Some("--initial-loss-scale 65536"));
    assert_eq!(o.evidence["role"], "node");
    let en = hint(&r, "no-loss-scaling", Lang::En);
    assert!(
        en.starts_with("The node command configures loss scaling: --initial-loss-scale 65536."),
        "{en}"
    );
    // Ran on an H100 and an A100 node, both with BF16, and completed.
    assert_eq!(
        outcome(&r, "pods-on-bf16-nodes").found.as_deref(),
        Some("bf16-train-node-0-0-r4t8w → trainlab-worker, bf16-train-node-0-1-r5t8w → trainlab-worker3")
    );
    let running = outcome(&r, "pods-running");
    assert_eq!(running.evidence["kind"], "TrainJob");
    assert_eq!(
        running.found.as_deref(),
        Some("TrainJob bf16-train Complete=True")
    );
}
