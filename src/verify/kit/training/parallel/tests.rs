//! Unit tests of the parallel kit: launches and processes per pod, degrees, rejections,
//! `tp-within-node`, and the pod checks on a PyTorchJob.

use super::*;
use crate::observe::{Obj, Origin};
use crate::verify::kit::cmdline::{MergedState, Precision};
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::kit::training::job_pods::{check_one_pod_per_node, check_pods_running, JobPods};
use crate::verify::views::pytorch::PyTorchJob;
use crate::verify::Reason;
use serde_json::{json, Value as Json};

fn obj(v: Json) -> Obj {
    Obj::new(
        v,
        Origin::File {
            path: "job.yaml".into(),
            doc: 1,
            item: None,
        },
    )
    .unwrap()
}

fn container(command: Json, gpus: &str) -> Json {
    json!({"name": "pytorch", "image": "nvcr.io/nvidia/nemo:25.04", "command": command,
           "resources": {"limits": {"nvidia.com/gpu": gpus}}})
}

/// A PyTorchJob with a Master and `workers` Workers running `command`.
fn job(extra: Json, workers: i64, command: Json, gpus: &str) -> Obj {
    let pod = json!({"spec": {"containers": [container(command, gpus)]}});
    let mut spec = json!({"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": pod.clone()},
        "Worker": {"replicas": workers, "template": pod}
    }});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    obj(
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
               "metadata": {"name": "tp-llm", "uid": "u-1"}, "spec": spec}),
    )
}

fn launch(o: &Obj) -> (JobLaunch, PyTorchJob) {
    let w = Workload::from_obj(o).unwrap().unwrap();
    let p = w.pytorch().unwrap().clone();
    (JobLaunch::of(&w), p)
}

fn words(s: &str) -> Json {
    json!(s.split_whitespace().collect::<Vec<_>>())
}

#[test]
fn nproc_from_the_command_line_wins_over_spec_nproc_per_node() {
    let o = job(
        json!({"nprocPerNode": "4"}),
        1,
        words("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8"),
        "8",
    );
    let (l, _) = launch(&o);
    assert_eq!(l.pods(), 2);
    for r in &l.roles {
        assert_eq!(r.procs(), Some(8));
        let PodStart::Torchrun { nproc, .. } = &r.launcher else {
            panic!("torchrun expected: {:?}", r.launcher)
        };
        assert_eq!(nproc.written, "--nproc_per_node 8");
    }
    assert_eq!(l.world(), Some(16));
    assert_eq!(
        l.roles[1].container_path,
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]"
    );
}

#[test]
fn nproc_from_spec_or_the_auto_default_counts_the_pods_gpus() {
    let run = words("torchrun pretrain_gpt.py --tensor-model-parallel-size 8");
    let o = job(json!({"nprocPerNode": "8"}), 1, run.clone(), "8");
    let (l, _) = launch(&o);
    assert_eq!(l.world(), Some(16));
    let PodStart::Torchrun { nproc, .. } = &l.roles[0].launcher else {
        panic!()
    };
    assert_eq!(nproc.written, "spec.nprocPerNode: \"8\"");

    // Unset: the defaulter's auto = one process per visible GPU.
    let o = job(json!({}), 1, run.clone(), "4");
    let (l, _) = launch(&o);
    assert_eq!(l.roles[0].procs(), Some(4));
    // Without GPUs auto is the node's CPU count: unknown.
    let o = job(json!({}), 1, run.clone(), "0");
    let (l, _) = launch(&o);
    assert_eq!(l.roles[0].procs(), None);
    assert_eq!(l.world(), None);
    // `gpu` without GPUs is torchrun's error.
    let o = job(
        json!({}),
        1,
        words("torchrun --nproc-per-node gpu x.py"),
        "0",
    );
    let (l, _) = launch(&o);
    let PodStart::Torchrun { nproc, .. } = &l.roles[0].launcher else {
        panic!()
    };
    assert_eq!(
        nproc.procs,
        Procs::Refused("ValueError: Cuda is not available.".into())
    );
}

#[test]
fn python_without_torchrun_is_one_process_and_other_commands_launch_nothing() {
    let o = job(
        json!({}),
        1,
        words("python3 train.py --tensor-model-parallel-size 2"),
        "8",
    );
    let (l, _) = launch(&o);
    assert_eq!(l.roles[0].launcher, PodStart::Python);
    assert_eq!(l.world(), Some(2));
    let d = Degrees::of(&l).unwrap();
    assert_eq!(d.tp.degree(), Some(2));

    let o = job(json!({}), 1, words("sleep 3600"), "8");
    let (l, _) = launch(&o);
    assert_eq!(l.roles[0].launcher, PodStart::Nothing);
    assert_eq!(l.roles[0].command, "sleep 3600");

    let o = job(json!({}), 1, json!(["sh", "-c", "torchrun 'x.py"]), "8");
    let (l, _) = launch(&o);
    assert!(matches!(l.roles[0].launcher, PodStart::Broken(_)));
}

#[test]
fn torchrun_inside_a_shell_script_with_variables() {
    let o = job(
        json!({}),
        1,
        json!(["bash", "-c", "NP=8; exec torchrun --nnodes 2 --nproc-per-node $NP train.py model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=2"]),
        "8",
    );
    let (l, _) = launch(&o);
    assert_eq!(l.world(), Some(16));
    assert_eq!(l.roles[0].nnodes_mismatch(2), None);
    assert_eq!(l.roles[0].nnodes_mismatch(3).as_deref(), Some("--nnodes 2"));
    let d = Degrees::of(&l).unwrap();
    assert_eq!((d.tp.degree(), d.pp.degree()), (Some(4), Some(2)));
    assert_eq!(d.model_parallel(), Some(8));
    assert_eq!(d.data_parallel(16), Some(2));
    assert_eq!(d.data_parallel(12), None);
    assert_eq!(d.describe_model_parallel(), "TP 4 × PP 2");

    // A variable the manifest does not define stays unknown.
    let o = job(
        json!({}),
        1,
        json!(["sh", "-c", "torchrun --nproc_per_node $NP x.py"]),
        "8",
    );
    let (l, _) = launch(&o);
    let PodStart::Torchrun { nproc, .. } = &l.roles[0].launcher else {
        panic!()
    };
    assert_eq!(nproc.procs, Procs::Variable);
}

#[test]
fn degrees_default_to_one_and_conflicts_between_roles_show() {
    let o = job(json!({}), 1, words("torchrun x.py --num-layers 96"), "8");
    let (l, _) = launch(&o);
    let d = Degrees::of(&l).unwrap();
    assert_eq!(d.tp, Value::Unset);
    assert_eq!(d.tp.degree(), Some(1));
    assert_eq!(d.num_layers.value(), Some(96));
    assert_eq!(d.micro_batch.value(), None);
    assert!(!d.distributed_optimizer);

    // Master and Worker written with different TP.
    let master = json!({"spec": {"containers": [container(words("torchrun x.py --tensor-model-parallel-size 8 --use-distributed-optimizer"), "8")]}});
    let worker = json!({"spec": {"containers": [container(words("torchrun x.py --tensor-model-parallel-size 4 --use-distributed-optimizer"), "8")]}});
    let o = obj(
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "j"}, "spec": {"pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": master},
            "Worker": {"replicas": 1, "template": worker}}}}),
    );
    let (l, _) = launch(&o);
    let d = Degrees::of(&l).unwrap();
    assert_eq!(
        d.tp,
        Value::Conflict(vec![
            "--tensor-model-parallel-size 8".into(),
            "--tensor-model-parallel-size 4".into()
        ])
    );
    assert_eq!(d.tp.degree(), None);
    assert_eq!(d.model_parallel(), None);
    assert!(d.distributed_optimizer);

    // Zero is no degree; a removed flag is kept with Megatron's message.
    let o = job(
        json!({}),
        1,
        words("torchrun x.py --pipeline-model-parallel-size 0 --model-parallel-size 8 --context-parallel-size 2"),
        "8",
    );
    let (l, _) = launch(&o);
    let d = Degrees::of(&l).unwrap();
    assert!(matches!(d.pp, Value::Invalid(_)));
    assert_eq!(d.removed.len(), 1);
    assert_eq!(d.cp.degree(), Some(2));

    // A value Megatron's parser refuses is the flag error.
    let o = job(
        json!({}),
        1,
        words("torchrun x.py --tensor-model-parallel-size eight"),
        "8",
    );
    let (l, _) = launch(&o);
    assert_eq!(
        Degrees::of(&l).unwrap_err().flag(),
        "--tensor-model-parallel-size"
    );
}

#[test]
fn rejections_follow_the_webhook_the_schema_and_pod_validation() {
    let ok = job(json!({"nprocPerNode": "8"}), 1, words("torchrun x.py"), "8");
    let w = Workload::from_obj(&ok).unwrap().unwrap();
    assert_eq!(pytorchjob_rejections(&w, w.pytorch().unwrap()), vec![]);

    let bad = obj(
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "j"},
        "spec": {"nprocPerNode": 8, "pytorchReplicaSpecs": {
            "Master": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "trainer", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "8"}}}]}}},
            "worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch"}]}}}}}}),
    );
    let w = Workload::from_obj(&bad).unwrap().unwrap();
    let texts: Vec<String> = pytorchjob_rejections(&w, w.pytorch().unwrap())
        .into_iter()
        .map(|r| r.text)
        .collect();
    let has = |needle: &str| texts.iter().any(|t| t.contains(needle));
    assert!(
        has("spec.nprocPerNode in body must be of type string"),
        "{texts:#?}"
    );
    assert!(has(
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"
    ));
    assert!(has("spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must have at least one container with name pytorch"));
    assert!(has(
        "spec.pytorchReplicaSpecs[worker]: Unsupported value: \"worker\""
    ));
    assert!(has(
        "spec.pytorchReplicaSpecs[worker].template.spec.containers[0].image: Required value"
    ));
    // GPUs in requests without a limit: the pod validation's rule.
    assert!(has("resources.limits: Required value"), "{texts:#?}");

    // Master replicas left out is refused too (the webhook checks before any defaulting).
    let o = obj(
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "j"}, "spec": {"pytorchReplicaSpecs": {
            "Master": {"template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}}}}),
    );
    let w = Workload::from_obj(&o).unwrap().unwrap();
    let r = pytorchjob_rejections(&w, w.pytorch().unwrap());
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].field, "spec.pytorchReplicaSpecs[Master].replicas");
}

#[test]
fn degrees_carry_the_precision_every_role_sets() {
    let d = degrees("--bf16");
    assert_eq!(d.precision.value(), Some(&Precision::Bf16));
    let d = degrees("model.num_layers=4 trainer.precision=16-mixed");
    assert_eq!(d.precision.value(), Some(&Precision::Fp16));
    let d = degrees("--num-layers 4");
    assert_eq!(d.precision.state(), MergedState::NotSet);
    let d = degrees("--bf16 --fp16");
    assert!(matches!(d.precision.state(), MergedState::Conflict(_)));
}

fn degrees(tp: &str) -> Degrees {
    let o = job(json!({}), 1, words(&format!("torchrun x.py {tp}")), "8");
    Degrees::of(&launch(&o).0).unwrap()
}

fn nodes(per: i64) -> GpuNodes {
    GpuNodes {
        gpus_per_node: Ok(per),
        nodes: Ok(2),
        names: vec![],
        gpu_memory_mib: None,
    }
}

#[test]
fn tp_within_node_needs_a_divisor_of_the_nodes_gpus() {
    let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 8"), &nodes(8));
    assert_eq!(o.status, crate::verify::Status::Pass);
    let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 16"), &nodes(8));
    assert_eq!(o.hint.as_deref(), Some("spans-nodes"));
    let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 3"), &nodes(8));
    assert_eq!((o.status, o.hint), (crate::verify::Status::Fail, None));
    assert_eq!(
        o.found.as_deref(),
        Some("TP 3 (--tensor-model-parallel-size 3)")
    );
    let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size $TP"), &nodes(8));
    assert_eq!(o.status, crate::verify::Status::Skipped);
    let unknown = GpuNodes {
        gpus_per_node: Err(Unknown::Param("gpus_per_node")),
        ..nodes(8)
    };
    let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 8"), &unknown);
    assert_eq!(o.reason, Some(Reason::NeedsParam("gpus_per_node".into())));
}

fn pod(name: &str, node: Option<&str>, phase: &str, statuses: Json) -> Obj {
    obj(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "ownerReferences": [
            {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "tp-llm",
             "uid": "u-1", "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "pytorch"}]},
        "status": {"phase": phase, "containerStatuses": statuses}}))
}

fn running() -> Json {
    json!([{"name": "pytorch", "ready": true, "restartCount": 0, "image": "x", "imageID": "",
            "state": {"running": {}}}])
}

#[test]
fn pods_running_passes_fails_with_the_termination_message_or_waits() {
    let j = job(json!({}), 1, words("torchrun x.py"), "8");
    let view: PyTorchJob = j.parse().unwrap();
    let a = pod("tp-llm-master-0", Some("n1"), "Running", running());
    let b = pod("tp-llm-worker-0", Some("n2"), "Succeeded", json!([]));
    let other = obj(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}));
    let pods = JobPods::of(&j, &[&a, &b, &other]).unwrap().unwrap();
    assert_eq!(pods.current.len(), 2);
    let o = check_pods_running("c", &j, 2, &pods);
    assert_eq!(o.status, crate::verify::Status::Pass);
    let o = check_one_pod_per_node("c", view.is_finished(), 2, &pods);
    assert_eq!(o.status, crate::verify::Status::Pass);
    assert_eq!(
        o.found.as_deref(),
        Some("tp-llm-master-0 → n1, tp-llm-worker-0 → n2")
    );

    // CrashLoopBackOff after the stand-in refused the command line.
    let crashed = pod(
        "tp-llm-worker-0",
        Some("n1"),
        "Running",
        json!([{"name": "pytorch", "ready": false, "restartCount": 3, "image": "x", "imageID": "",
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                    "message": "AssertionError: world size (16) is not divisible by total_model_size (total_model_size=32)\n"}}}]),
    );
    let pods = JobPods::of(&j, &[&a, &crashed]).unwrap().unwrap();
    let o = check_pods_running("c", &j, 2, &pods);
    assert_eq!(o.hint.as_deref(), Some("crashed"));
    assert_eq!(
        o.evidence["message"],
        "AssertionError: world size (16) is not divisible by total_model_size (total_model_size=32)"
    );
    assert_eq!(o.evidence["exit_code"], "1");
    // Two pods on one node.
    let o = check_one_pod_per_node("c", view.is_finished(), 2, &pods);
    assert_eq!(o.status, crate::verify::Status::Fail);
    assert_eq!(o.evidence["node"], "n1");

    // Waiting on an image that cannot be pulled does not clear: a fail, not pending.
    let stuck = pod(
        "tp-llm-worker-0",
        None,
        "Pending",
        json!([{"name": "pytorch", "ready": false, "restartCount": 0, "image": "x", "imageID": "",
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}]),
    );
    let pods = JobPods::of(&j, &[&a, &stuck]).unwrap().unwrap();
    let o = check_pods_running("c", &j, 2, &pods);
    assert_eq!(
        (o.hint.as_deref(), o.evidence["job"].as_str()),
        (Some("stuck"), "tp-llm")
    );

    // Not scheduled yet: pending with the scheduler's words.
    let waiting = obj(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "tp-llm-worker-0", "ownerReferences": [
            {"kind": "PyTorchJob", "name": "tp-llm", "uid": "u-1", "controller": true}]},
        "spec": {"containers": [{"name": "pytorch"}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/5 nodes are available: 3 Insufficient nvidia.com/gpu."}]}}));
    let pods = JobPods::of(&j, &[&a, &waiting]).unwrap().unwrap();
    let o = check_pods_running("c", &j, 2, &pods);
    assert_eq!(o.status, crate::verify::Status::Pending);
    assert_eq!(o.reason, Some(Reason::Message("pods-unschedulable".into())));
    let o = check_one_pod_per_node("c", view.is_finished(), 2, &pods);
    assert_eq!(o.status, crate::verify::Status::Pending);

    // A job read from a file owns nothing that can be known.
    let file_job = obj(
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "tp-llm"}}),
    );
    assert!(JobPods::of(&file_job, &[&a]).unwrap().is_none());
}

#[test]
fn a_failed_job_or_an_oom_kill_is_a_fail() {
    let j = obj(
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "tp-llm", "uid": "u-1"},
        "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
            "message": "PyTorchJob trainlab/tp-llm is failed because 1 Worker replica(s) failed."}]}}),
    );
    let o = check_pods_running("c", &j, 2, &JobPods::default());
    assert_eq!(o.hint.as_deref(), Some("job-failed"));
    let oom = pod(
        "tp-llm-worker-0",
        Some("n1"),
        "Failed",
        json!([{"name": "pytorch", "ready": false, "restartCount": 0, "image": "x", "imageID": "",
                "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]),
    );
    let pods = JobPods::of(&j, &[&oom]).unwrap().unwrap();
    let o = check_pods_running("c", &j, 1, &pods);
    assert_eq!(o.hint.as_deref(), Some("crashed"));
    assert_eq!(o.evidence["message"], "OOMKilled");
}
