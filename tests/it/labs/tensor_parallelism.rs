//! Lab 1 `tensor-parallelism`: PyTorchJob `tp-llm`, one pod per node taking all its GPUs, one
//! process per GPU, TP > 1 inside a node, and the pods running on distinct nodes.

use crate::support;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::placeholders;
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{Reason, Status};

const LAB: &str = "tensor-parallelism";
const JOB: &str = "tp-llm";
const SPEC_CHECKS: [&str; 5] = [
    "whole-node-gpus",
    "nproc-matches-gpus",
    "tp-set",
    "tp-within-node",
    "world-divisible",
];
const STATE_CHECKS: [&str; 2] = ["pods-running", "one-pod-per-node"];
const ROLES: [&str; 2] = ["Master", "Worker"];

fn solved() -> State {
    State::load("tensor-parallelism/solution-state").and("kind-nodes")
}

/// The lab's own folder read as the learner's files (static mode), with the kind facts.
fn files(folder: &str) -> State {
    State::load(&format!("../../labs/01-tensor-parallelism/{folder}"))
        .into_files()
        .param("gpus_per_node", "8")
        .param("nodes", "2")
}

fn container<'a>(v: &'a mut Value, role: &str) -> &'a mut Value {
    &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0]
}

/// Rewrites the `args` of both roles' containers.
fn args(f: impl Fn(&mut Vec<Value>)) -> impl FnOnce(&mut Value) {
    move |v| {
        for role in ROLES {
            let a = container(v, role)["args"].as_array_mut().expect("args");
            f(a);
        }
    }
}

/// Replaces the argument starting with `prefix` (or removes it when `new` is None).
fn set_arg(prefix: &'static str, new: Option<&'static str>) -> impl Fn(&mut Vec<Value>) {
    move |a| {
        let i = a
            .iter()
            .position(|w| w.as_str().is_some_and(|s| s.starts_with(prefix)))
            .unwrap_or_else(|| panic!("no argument {prefix}"));
        match new {
            Some(n) => a[i] = json!(n),
            None => {
                a.remove(i);
            }
        }
    }
}

fn gpus(n: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        for role in ROLES {
            container(v, role)["resources"]["limits"]["nvidia.com/gpu"] = n.clone();
        }
    }
}

fn edit_job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("PyTorchJob", JOB, f)
}

// ---------------------------------------------------------------------------------------------
// The reference answer.

#[test]
fn the_solved_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "one-pod-per-node").found.as_deref(),
        Some("tp-llm-master-0 → trainlab-worker, tp-llm-worker-0 → trainlab-worker2")
    );
    assert_eq!(
        outcome(&r, "world-divisible").found.as_deref(),
        Some("world 16 (Master: 1 × 8, Worker: 1 × 8); DP 2")
    );
    assert_eq!(
        outcome(&r, "tp-set").found.as_deref(),
        Some("TP --tensor-model-parallel-size 8")
    );
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
}

#[test]
fn the_draft_fails_what_it_leaves_as_todo() {
    let r = files("draft").grade(LAB);
    assert_eq!(status(&r, "whole-node-gpus"), Status::Fail);
    assert_eq!(outcome(&r, "tp-set").hint.as_deref(), Some("unset"));
    // No --nproc_per_node: the operator's default `auto` starts one process per GPU of the pod.
    assert_eq!(status(&r, "nproc-matches-gpus"), Status::Pass);
}

#[test]
fn static_mode_without_the_node_facts_asks_for_them() {
    // The answer pins its pods to p5.48xlarge, whose 8 GPUs static mode then knows (issue 31
    // §6); without that pin the figure is the learner's cluster's, asked for as a parameter.
    let pinned = State::load("../../labs/01-tensor-parallelism/solution").into_files();
    let r = pinned.grade(LAB);
    for c in ["whole-node-gpus", "tp-within-node"] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    let r = State::load("../../labs/01-tensor-parallelism/solution")
        .into_files()
        .edit_all("PyTorchJob", |v| {
            for role in ["Master", "Worker"] {
                let spec = &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"];
                if let Some(m) = spec.as_object_mut() {
                    m.remove("nodeSelector");
                    m.remove("affinity");
                }
            }
        })
        .grade(LAB);
    for c in ["whole-node-gpus", "tp-within-node"] {
        assert_eq!(
            outcome(&r, c).reason,
            Some(Reason::NeedsParam("gpus_per_node".into())),
            "{c}"
        );
    }
    assert_eq!(status(&r, "tp-set"), Status::Pass);
}

#[test]
fn a_missing_job_or_another_api_version_fails_every_check_once_with_the_missing_text() {
    let r = solved().remove(|o| o.kind() == "PyTorchJob").grade(LAB);
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Fail, "{}", o.check);
        assert_eq!(o.hint.as_deref(), Some("missing"));
    }
    let r = files("solution")
        .edit("PyTorchJob", JOB, |v| {
            v["apiVersion"] = json!("kubeflow.org/v2")
        })
        .grade(LAB);
    let o = outcome(&r, "tp-set");
    assert_eq!(o.hint.as_deref(), Some("missing"));
    assert_eq!(
        o.expected.as_deref(),
        Some("kubeflow.org/v1 PyTorchJob tp-llm")
    );
    assert_eq!(
        o.found.as_deref(),
        Some("kubeflow.org/v2 PyTorchJob tp-llm")
    );
    assert!(SPEC_CHECKS.iter().all(|c| status(&r, c) == Status::Fail));
}

// ---------------------------------------------------------------------------------------------
// whole-node-gpus

#[test]
fn half_a_node_per_pod_fails_only_whole_node_gpus() {
    let r = edit_job(solved(), |v| {
        gpus(json!(4))(v);
        args(set_arg("--nproc_per_node", Some("--nproc_per_node=4")))(v);
        args(set_arg(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=4"),
        ))(v);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "whole-node-gpus", None);
    assert_eq!(o.evidence["gpus"], "4");
    assert_eq!(o.evidence["gpus_per_node"], "8");
    assert_eq!(
        o.evidence["path"],
        "spec.pytorchReplicaSpecs.Master.template.spec.containers[].resources.limits"
    );
}

#[test]
fn more_gpus_than_a_node_has_fails_with_too_many_and_none_with_none() {
    let r = edit_job(solved(), |v| {
        gpus(json!(16))(v);
        args(set_arg("--nproc_per_node", Some("--nproc_per_node=16")))(v);
    })
    .grade(LAB);
    assert_only_fails(&r, "whole-node-gpus", Some("too-many"));

    let r = edit_job(solved(), |v| {
        for role in ROLES {
            container(v, role)["resources"] = json!({});
        }
    })
    .grade(LAB);
    assert_eq!(outcome(&r, "whole-node-gpus").hint.as_deref(), Some("none"));
}

#[test]
fn what_the_api_server_refuses_fails_whole_node_gpus_in_static_mode() {
    // The webhook needs a container named `pytorch`.
    let r = files("solution")
        .edit("PyTorchJob", JOB, |v| {
            container(v, "Worker")["name"] = json!("trainer")
        })
        .grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert_eq!(
        o.evidence["rejection"],
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name pytorch"
    );
    // GPUs in requests alone: the pods would be refused.
    let r = solved()
        .edit("PyTorchJob", JOB, |v| {
            for role in ROLES {
                container(v, role)["resources"] = json!({"requests": {"nvidia.com/gpu": 8}});
            }
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "whole-node-gpus", Some("rejected"));
    assert!(o.found.unwrap().contains("Required value"));
}

// ---------------------------------------------------------------------------------------------
// nproc-matches-gpus

#[test]
fn fewer_processes_than_gpus_fails_only_nproc() {
    let r = edit_job(
        solved(),
        args(set_arg("--nproc_per_node", Some("--nproc_per_node=4"))),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "nproc-matches-gpus", None);
    assert_eq!(o.evidence["nproc"], "4");
    assert_eq!(o.evidence["nproc_written"], "--nproc_per_node 4");
}

#[test]
fn nproc_written_any_accepted_way_passes() {
    // Without the flag: spec.nprocPerNode, or the defaulter's `auto` (one per visible GPU).
    for spec in [json!("8"), json!("auto"), json!("gpu"), Value::Null] {
        let r = edit_job(solved(), |v| {
            args(set_arg("--nproc_per_node", None))(v);
            if !spec.is_null() {
                v["spec"]["nprocPerNode"] = spec.clone();
            }
        })
        .grade(LAB);
        assert_all_pass(&r);
    }
    // Both spellings, value in the next word; python -m torch.distributed.run; a shell script.
    let r = edit_job(solved(), |v| {
        for role in ROLES {
            let c = container(v, role);
            c["command"] = json!(["python3", "-m", "torch.distributed.run"]);
            let a = c["args"].as_array_mut().unwrap();
            a[0] = json!("--nproc-per-node");
            a.insert(1, json!("8"));
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
    let r = edit_job(solved(), |v| {
        for role in ROLES {
            let c = container(v, role);
            c["command"] = json!(["bash", "-c"]);
            c["args"] = json!(["set -e; NPROC=8; exec torchrun --nproc_per_node $NPROC pretrain_gpt.py --tensor-model-parallel-size 8 --micro-batch-size 1"]);
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn nproc_that_cannot_be_known_or_is_refused_fails_with_its_hint() {
    let r = edit_job(
        solved(),
        args(set_arg(
            "--nproc_per_node",
            Some("--nproc_per_node=$(NPROC)"),
        )),
    )
    .grade(LAB);
    assert_eq!(
        outcome(&r, "nproc-matches-gpus").hint.as_deref(),
        Some("variable")
    );
    assert_eq!(message(outcome(&r, "world-divisible")), "world-unknown");

    let r = edit_job(
        solved(),
        args(set_arg("--nproc_per_node", Some("--nproc_per_node=cpu"))),
    )
    .grade(LAB);
    assert_eq!(
        outcome(&r, "nproc-matches-gpus").hint.as_deref(),
        Some("cpus")
    );

    let r = edit_job(
        solved(),
        args(set_arg("--nproc_per_node", Some("--nproc_per_node=many"))),
    )
    .grade(LAB);
    let o = outcome(&r, "nproc-matches-gpus");
    assert_eq!(o.hint.as_deref(), Some("refused"));
    assert_eq!(
        o.evidence["message"],
        "ValueError: Unsupported nproc_per_node value: many"
    );

    // No torchrun at all.
    let r = edit_job(solved(), |v| {
        for role in ROLES {
            let c = container(v, role);
            c["command"] = json!(["sleep", "3600"]);
            c["args"] = json!([]);
        }
    })
    .grade(LAB);
    assert_eq!(
        outcome(&r, "nproc-matches-gpus").hint.as_deref(),
        Some("no-launcher")
    );
    let r = edit_job(solved(), |v| {
        for role in ROLES {
            container(v, role)["command"] = json!(["python3"]);
        }
        args(set_arg("--nproc_per_node", None))(v);
    })
    .grade(LAB);
    assert_eq!(
        outcome(&r, "nproc-matches-gpus").hint.as_deref(),
        Some("no-torchrun")
    );
}

// ---------------------------------------------------------------------------------------------
// tp-set

#[test]
fn tp_one_or_unset_fails_only_tp_set() {
    let r = edit_job(
        solved(),
        args(set_arg(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=1"),
        )),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "tp-set", None);
    assert_eq!(
        o.found.as_deref(),
        Some("TP --tensor-model-parallel-size 1")
    );

    let r = edit_job(
        solved(),
        args(set_arg("--tensor-model-parallel-size", None)),
    )
    .grade(LAB);
    assert_only_fails(&r, "tp-set", Some("unset"));

    let r = edit_job(
        solved(),
        args(set_arg(
            "--tensor-model-parallel-size",
            Some("--model-parallel-size=8"),
        )),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "tp-set", Some("removed"));
    assert_eq!(
        o.evidence["message"],
        "--model-parallel-size is no longer valid, use --tensor-model-parallel-size instead"
    );
}

#[test]
fn tp_that_differs_between_roles_or_is_not_a_number_fails_tp_set() {
    let r = edit_job(solved(), |v| {
        let a = container(v, "Worker")["args"].as_array_mut().unwrap();
        set_arg(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=4"),
        )(a);
    })
    .grade(LAB);
    assert_eq!(outcome(&r, "tp-set").hint.as_deref(), Some("conflict"));
    assert_eq!(message(outcome(&r, "tp-within-node")), "tp-unknown");
    assert_eq!(status(&r, "world-divisible"), Status::Skipped);

    let r = edit_job(
        solved(),
        args(set_arg(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=eight"),
        )),
    )
    .grade(LAB);
    let o = outcome(&r, "tp-set");
    assert_eq!(o.hint.as_deref(), Some("bad-flag"));
    assert_eq!(o.evidence["flag"], "--tensor-model-parallel-size");
    assert_eq!(message(outcome(&r, "world-divisible")), "plan-unreadable");
}

#[test]
fn nemo_overrides_set_tp_too() {
    let r = edit_job(solved(), |v| {
        for role in ROLES {
            container(v, role)["args"] = json!([
                "--nproc_per_node=8",
                "megatron_gpt_pretraining.py",
                "trainer.num_nodes=2",
                "trainer.devices=8",
                "model.tensor_model_parallel_size=8",
                "model.micro_batch_size=1",
                "model.global_batch_size=16"
            ]);
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// tp-within-node, world-divisible

#[test]
fn tp_larger_than_a_node_fails_only_tp_within_node() {
    let r = edit_job(
        solved(),
        args(set_arg(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=16"),
        )),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "tp-within-node", Some("spans-nodes"));
    assert_eq!(o.evidence["tp"], "16");
}

#[test]
fn tp_that_does_not_divide_the_node_fails_tp_within_node() {
    let r = edit_job(
        solved(),
        args(set_arg(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=3"),
        )),
    )
    .grade(LAB);
    let o = outcome(&r, "tp-within-node");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, None));
    // 16 ranks do not split into groups of 3 either.
    assert_eq!(status(&r, "world-divisible"), Status::Fail);
}

#[test]
fn a_pipeline_that_does_not_divide_the_world_fails_only_world_divisible() {
    let r = edit_job(
        solved(),
        args(set_arg(
            "--pipeline-model-parallel-size",
            Some("--pipeline-model-parallel-size=3"),
        )),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "world-divisible", None);
    assert_eq!(o.evidence["model"], "TP 8 × PP 3");
    assert_eq!(o.evidence["world"], "16");
}

#[test]
fn an_nnodes_that_is_not_the_pod_count_fails_only_world_divisible() {
    let r = edit_job(
        solved(),
        args(|a: &mut Vec<Value>| a.insert(0, json!("--nnodes=1"))),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "world-divisible", Some("nnodes"));
    assert_eq!(o.evidence["nnodes_written"], "--nnodes 1");
}

#[test]
fn workers_only_with_an_elastic_rendezvous_is_accepted() {
    let r = files("solution")
        .edit("PyTorchJob", JOB, |v| {
            let specs = v["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap();
            specs.remove("Master");
            specs["Worker"]["replicas"] = json!(2);
            v["spec"]["elasticPolicy"] =
                json!({"rdzvBackend": "c10d", "minReplicas": 2, "maxReplicas": 2});
        })
        .grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
}

// ---------------------------------------------------------------------------------------------
// pods-running, one-pod-per-node

fn pod_status(name: &'static str, f: impl FnOnce(&mut Value)) -> impl FnOnce(State) -> State {
    move |s: State| s.edit("Pod", name, |v| f(&mut v["status"]))
}

#[test]
fn a_pod_the_stand_in_failed_fails_only_pods_running_quoting_its_message() {
    let msg = "AssertionError: world size (16) is not divisible by total_model_size (total_model_size=24)\n";
    let r = pod_status("tp-llm-worker-0", |st| {
        st["containerStatuses"][0]["ready"] = json!(false);
        st["containerStatuses"][0]["restartCount"] = json!(4);
        st["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 1m20s"}});
        st["containerStatuses"][0]["lastState"] =
            json!({"terminated": {"exitCode": 1, "reason": "Error", "message": msg}});
    })(solved())
    .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("crashed"));
    assert_eq!(o.evidence["message"], msg.trim());
    assert_eq!(o.evidence["pod"], "tp-llm-worker-0");
    assert_eq!(o.evidence["exit_code"], "1");
    // Found is the pod, container, reason and exit code (kit `pods::running`); the tool's own
    // words go to the hint through `{message}`.
    assert_eq!(
        o.found.as_deref(),
        Some("tp-llm-worker-0/pytorch: Error (exit 1)")
    );
}

#[test]
fn a_failed_pytorchjob_fails_only_pods_running() {
    let r = solved()
        .edit("PyTorchJob", JOB, |v| {
            v["status"]["conditions"].as_array_mut().unwrap().push(json!({
                "type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                "message": "PyTorchJob trainlab-tensor-parallelism/tp-llm is failed because 1 Worker replica(s) failed."}));
        })
        .grade(LAB);
    assert_only_fails(&r, "pods-running", Some("job-failed"));
}

#[test]
fn pods_still_scheduling_are_pending_not_failed() {
    let r = solved()
        .edit("Pod", "tp-llm-worker-0", |v| {
            v["spec"]["nodeName"] = Value::Null;
            v["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
                "status": "False", "reason": "Unschedulable",
                "message": "0/5 nodes are available: 1 Insufficient nvidia.com/gpu."}]});
        })
        .grade(LAB);
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Pending, "{c}");
    }
    let o = outcome(&r, "pods-running");
    assert_eq!(message(o), "pods-unschedulable");
    assert_eq!(
        o.evidence["message"],
        "0/5 nodes are available: 1 Insufficient nvidia.com/gpu."
    );
    assert_eq!(message(outcome(&r, "one-pod-per-node")), "pods-unbound");

    // The operator has not created the pods yet.
    let r = solved().remove(|o| o.kind() == "Pod").grade(LAB);
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Pending, "{c}");
    }
    assert_eq!(message(outcome(&r, "pods-running")), "no-pods");
}

#[test]
fn two_pods_on_one_node_fail_only_one_pod_per_node() {
    let r = solved()
        .edit("Pod", "tp-llm-worker-0", |v| {
            v["spec"]["nodeName"] = json!("trainlab-worker")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "one-pod-per-node", None);
    assert_eq!(o.evidence["node"], "trainlab-worker");
    assert_eq!(o.evidence["pods"], "tp-llm-master-0, tp-llm-worker-0");
}

#[test]
fn pods_of_another_job_with_the_same_names_do_not_count() {
    // Owned by uid: a pod whose owner reference names tp-llm with another uid is not this job's.
    let r = solved()
        .edit_all("Pod", |v| {
            v["metadata"]["ownerReferences"][0]["uid"] =
                json!("00000000-0000-0000-0000-000000000000")
        })
        .grade(LAB);
    assert_eq!(message(outcome(&r, "pods-running")), "no-pods");
}

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
fn hints_are_filled_and_expected_found_are_values() {
    let broken: Vec<State> = vec![
        solved(),
        edit_job(solved(), gpus(json!(4))),
        edit_job(solved(), gpus(json!(0))),
        edit_job(
            solved(),
            args(set_arg("--nproc_per_node", Some("--nproc_per_node=cpu"))),
        ),
        edit_job(
            solved(),
            args(set_arg("--nproc_per_node", Some("--nproc_per_node=$(N)"))),
        ),
        edit_job(solved(), |v| {
            for role in ROLES {
                container(v, role)["command"] = json!(["python3"]);
            }
            args(set_arg("--nproc_per_node", None))(v);
        }),
        edit_job(solved(), |v| {
            for role in ROLES {
                container(v, role)["command"] = json!(["sh", "-c", "torchrun 'x"]);
            }
        }),
        edit_job(
            solved(),
            args(set_arg("--tensor-model-parallel-size", None)),
        ),
        edit_job(
            solved(),
            args(set_arg(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=x"),
            )),
        ),
        edit_job(
            solved(),
            args(set_arg(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=3"),
            )),
        ),
        edit_job(solved(), |v| container(v, "Worker")["name"] = json!("x")),
        edit_job(
            solved(),
            args(|a: &mut Vec<Value>| a.insert(0, json!("--nnodes=1"))),
        ),
        solved().remove(|o| o.kind() == "Pod"),
        solved().edit("Pod", "tp-llm-worker-0", |v| {
            v["spec"]["nodeName"] = json!("trainlab-worker")
        }),
        solved().remove(|o| o.kind() == "PyTorchJob"),
        edit_job(
            solved(),
            args(set_arg("--nproc_per_node", Some("--nproc_per_node=many"))),
        ),
        edit_job(solved(), |v| {
            for role in ROLES {
                let c = container(v, role);
                c["command"] = json!(["sleep", "3600"]);
                c["args"] = json!([]);
            }
        }),
        edit_job(solved(), |v| {
            let a = container(v, "Worker")["args"].as_array_mut().unwrap();
            set_arg(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=4"),
            )(a);
        }),
        edit_job(
            solved(),
            args(set_arg(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=$(TP)"),
            )),
        ),
        edit_job(
            solved(),
            args(set_arg(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=3"),
            )),
        ),
        edit_job(solved(), |v| {
            v["spec"]["runPolicy"]["suspend"] = json!(true)
        }),
        edit_job(solved(), |v| {
            v["status"]["conditions"].as_array_mut().unwrap().push(
                json!({"type": "Failed", "status": "True", "message": "1 Worker replica(s) failed."}),
            );
        }),
        solved().remove(|o| o.kind() == "Node"),
    ];
    for s in broken {
        let r = s.grade(LAB);
        // Every hint and reason renders with all its placeholders filled, in both languages.
        for lang in [Lang::Ja, Lang::En] {
            for o in LabReport::new(&r, lang).outcomes {
                for text in [&o.hint, &o.reason].into_iter().flatten() {
                    assert!(placeholders(text).is_empty(), "{}: {text}", o.check);
                }
            }
        }
        for o in &r.outcomes {
            // The API server's and the cluster's own words are quoted as they are.
            let quoted = matches!(
                o.hint.as_deref(),
                Some("rejected" | "crashed" | "job-failed")
            );
            let found = if quoted { &None } else { &o.found };
            for text in [&o.expected, found].into_iter().flatten() {
                assert!(!english(text), "{}: {text}", o.check);
            }
        }
    }
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
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

#[test]
fn the_eks_solution_is_what_the_task_text_says_for_eks() {
    assert_eks_megatron_job_matches_the_task_text(LAB);
}

// ---------------------------------------------------------------------------------------------
// CUDA_DEVICE_MAX_CONNECTIONS (advice)

#[test]
fn tp_above_one_without_cuda_device_max_connections_1_is_advised_not_failed() {
    support::state::assert_max_connections_is_advice_when_layers_split(LAB, solved());
}

// ---------------------------------------------------------------------------------------------
// The same lab as a TrainJob (Kubeflow Trainer v2) over the `torch-distributed` runtime.

/// A TrainJob `tp-llm` over `torch-distributed`, its JobSet, Job and pods, on the kind nodes.
fn trainjob() -> State {
    State::load("tensor-parallelism/trainjob-state").and("kind-nodes")
}

fn edit_trainjob(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("TrainJob", JOB, f)
}

fn trainer(v: &mut Value) -> &mut Value {
    &mut v["spec"]["trainer"]
}

/// Replaces the argument of `spec.trainer.args` starting with `prefix`.
fn trainer_arg(prefix: &'static str, new: &'static str) -> impl FnOnce(&mut Value) {
    move |v| set_arg(prefix, Some(new))(trainer(v)["args"].as_array_mut().expect("args"))
}

#[test]
fn a_trainjob_over_torch_distributed_passes_every_check() {
    let r = trainjob().grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "one-pod-per-node").found.as_deref(),
        Some("tp-llm-node-0-0-x0k9z → trainlab-worker, tp-llm-node-0-1-x1k9z → trainlab-worker2")
    );
    assert_eq!(
        outcome(&r, "world-divisible").found.as_deref(),
        Some("world 16 (node: 2 × 8); DP 2")
    );
}

#[test]
fn a_trainjob_without_pods_yet_says_what_its_jobset_jobs_are_doing() {
    let no_pods = || trainjob().remove(|o| o.kind() == "Pod");
    let o = outcome(&no_pods().grade(LAB), "pods-running").clone();
    assert_eq!(o.status, Status::Pending);
    assert_eq!(o.reason, Some(Reason::Message("no-pods".into())));
    assert_eq!(
        o.found.as_deref(),
        Some("status.jobsStatus: node: 1 active, 1 ready, 0 succeeded, 0 failed")
    );

    let r = edit_trainjob(no_pods(), |v| {
        v.as_object_mut().unwrap().remove("status");
    })
    .grade(LAB);
    assert_eq!(
        outcome(&r, "pods-running").found.as_deref(),
        Some("status.jobsStatus: — (the controller has not made the JobSet yet)")
    );
}

#[test]
fn a_trainjob_from_files_passes_with_its_runtime_in_the_files_or_the_built_in_one() {
    let only_the_job = |s: State| {
        s.remove(|o| !matches!(o.kind(), "TrainJob" | "ClusterTrainingRuntime"))
            .into_files()
            .param("gpus_per_node", "8")
            .param("nodes", "2")
    };
    for s in [
        only_the_job(trainjob()),
        only_the_job(trainjob()).remove(|o| o.kind() == "ClusterTrainingRuntime"),
    ] {
        let r = s.grade(LAB);
        for c in SPEC_CHECKS {
            assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
        }
        for c in STATE_CHECKS {
            assert_eq!(status(&r, c), Status::Skipped, "{c}");
        }
    }
}

#[test]
fn a_trainjob_whose_runtime_does_not_exist_fails_naming_the_runtimes_the_cluster_has() {
    let r = edit_trainjob(trainjob(), |v| {
        v["spec"]["runtimeRef"]["name"] = json!("torch-distributed-v9")
    })
    .grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("runtime-missing"));
    assert_eq!(o.evidence["runtime"], "torch-distributed-v9");
    assert_eq!(o.evidence["runtimes"], "torch-distributed");
    for c in SPEC_CHECKS.iter().skip(1).chain(&STATE_CHECKS) {
        assert_eq!(
            outcome(&r, c).reason,
            Some(Reason::Message("runtime-unknown".into())),
            "{c}"
        );
    }
    let report = LabReport::new(&r, Lang::En);
    let hint = report.outcomes[0].hint.clone().unwrap();
    assert!(hint.contains("`torch-distributed-v9`"), "{hint}");
    assert!(
        hint.contains("this cluster has: torch-distributed"),
        "{hint}"
    );
}

#[test]
fn a_trainjob_asking_for_half_a_node_fails_whole_node_gpus_at_resources_per_node() {
    let r = edit_trainjob(trainjob(), |v| {
        trainer(v)["resourcesPerNode"]["limits"]["nvidia.com/gpu"] = json!(4);
        trainer_arg("--nproc_per_node", "--nproc_per_node=4")(v);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "whole-node-gpus", None);
    assert_eq!(o.evidence["role"], "node");
    assert_eq!(o.evidence["gpus"], "4");
    assert_eq!(o.evidence["path"], "spec.trainer.resourcesPerNode.limits");
}

#[test]
fn a_trainjob_without_nproc_on_the_command_line_runs_what_num_proc_per_node_says() {
    // numProcPerNode unset: the torch plugin's `auto`, one process per GPU of the pod.
    let unset = edit_trainjob(trainjob(), |v| {
        let a = trainer(v)["args"].as_array_mut().unwrap();
        a.retain(|w| !w.as_str().unwrap().starts_with("--nproc_per_node"));
    });
    assert_all_pass(&unset.clone().grade(LAB));
    let r = edit_trainjob(unset, |v| trainer(v)["numProcPerNode"] = json!(4)).grade(LAB);
    let o = outcome(&r, "nproc-matches-gpus");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(
        o.evidence["nproc_written"],
        "spec.trainer.numProcPerNode: 4"
    );
}

#[test]
fn what_trainers_webhook_and_schema_refuse_fails_whole_node_gpus_with_their_words() {
    let r = edit_trainjob(trainjob(), |v| trainer(v)["numProcPerNode"] = json!("auto")).grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert!(o.evidence["rejection"]
        .starts_with("spec.trainer.numProcPerNode: Invalid value: \"string\""));

    let r = edit_trainjob(trainjob(), |v| {
        trainer(v)["env"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "PET_NNODES", "value": "2"}))
    })
    .grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert_eq!(o.evidence["field"], "spec.trainer.env");
    assert!(o.evidence["rejection"]
        .ends_with("must not have reserved envs, invalid envs configured: [PET_NNODES]"));

    // A runtime patch may not set env on the `node` container.
    let r = edit_trainjob(trainjob(), |v| {
        v["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
            ["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"] =
            json!([{"name": "X", "value": "1"}]);
    })
    .grade(LAB);
    assert_eq!(
        outcome(&r, "whole-node-gpus").evidence["rejection"],
        "spec.runtimePatches: Invalid value: …: must not have envs for the dataset-initializer, model-initializer, node containers"
    );
}

#[test]
fn a_trainjobs_pods_are_found_through_its_jobset_and_job_by_uid() {
    // A JobSet owned by another TrainJob (same name, another uid) hides the pods.
    let r = trainjob()
        .edit("JobSet", JOB, |v| {
            v["metadata"]["ownerReferences"][0]["uid"] = json!("someone-else")
        })
        .grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!(o.status, Status::Pending, "{o:?}");
    assert_eq!(o.reason, Some(Reason::Message("no-pods".into())));
    // Two pods on one node: the spread check sees them through the chain.
    let r = trainjob()
        .edit_all("Pod", |v| v["spec"]["nodeName"] = json!("trainlab-worker"))
        .grade(LAB);
    let o = assert_only_fails(&r, "one-pod-per-node", None);
    assert_eq!(o.evidence["node"], "trainlab-worker");
}

#[test]
fn a_trainjob_with_tp_across_nodes_fails_tp_within_node() {
    let r = edit_trainjob(trainjob(), |v| {
        trainer_arg(
            "--tensor-model-parallel-size",
            "--tensor-model-parallel-size=16",
        )(v)
    })
    .grade(LAB);
    assert_eq!(
        outcome(&r, "tp-within-node").hint.as_deref(),
        Some("spans-nodes")
    );
}

#[test]
fn a_trainjob_placed_by_a_runtime_patch_is_read_after_the_merge() {
    // The patch's nodeSelector names an instance type no node has: no GPU node is usable.
    let r = edit_trainjob(trainjob(), |v| {
        v["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
            ["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] =
            json!({"node.kubernetes.io/instance-type": "m5.large"});
    })
    .grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_ne!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.reason, Some(Reason::Message("no-gpus".into())), "{o:?}");
    // The message names the GPU resource, not the job's kind.
    let report = LabReport::new(&r, Lang::En);
    let reason = report.outcomes[0].reason.clone().unwrap();
    assert!(reason.contains("`nvidia.com/gpu`"), "{reason}");
}

#[test]
fn a_trainjob_over_a_namespaced_training_runtime_reads_that_one() {
    let to_namespaced = |s: State| {
        s.edit("ClusterTrainingRuntime", "torch-distributed", |v| {
            v["kind"] = json!("TrainingRuntime");
            v["metadata"]["namespace"] = json!("trainlab-tensor-parallelism");
        })
    };
    let names_namespaced = |s: State| {
        s.edit("TrainJob", JOB, |v| {
            v["spec"]["runtimeRef"]["kind"] = json!("TrainingRuntime")
        })
    };
    assert_all_pass(&names_namespaced(to_namespaced(trainjob())).grade(LAB));
    // A TrainingRuntime named but only a ClusterTrainingRuntime of that name exists.
    let r = names_namespaced(trainjob()).grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(o.hint.as_deref(), Some("runtime-missing"));
    assert_eq!(o.evidence["runtime_kind"], "TrainingRuntime");
}

#[test]
fn the_demo_learners_trainjob_passes_the_spec_and_waits_for_the_scheduler() {
    // manifests/demo/01-tensor-parallelism.yaml: lab 9's gang holds the p5.48xlarge nodes.
    let r = State::demo().grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Pending, "{c}: {o:?}");
        assert_eq!(o.evidence["kind"], "TrainJob", "{c}");
    }
    let running = outcome(&r, "pods-running");
    assert_eq!(message(running), "pods-unschedulable");
    assert!(running.evidence["message"].contains("Insufficient nvidia.com/gpu"));
    assert_eq!(message(outcome(&r, "one-pod-per-node")), "pods-unbound");
}
