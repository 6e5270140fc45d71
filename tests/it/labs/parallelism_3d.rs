//! Lab 2 `parallelism-3d`: PyTorchJob `llm-200b` with TP, PP and DP all > 1, TP inside a node,
//! TP × PP × DP = nodes × GPUs per node, a model and batch that split evenly, and its pods
//! running one per node.

use crate::support;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::placeholders;
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Status};

const LAB: &str = "parallelism-3d";
const JOB: &str = "llm-200b";
const SPEC_CHECKS: [&str; 5] = [
    "three-degrees",
    "tp-within-node",
    "degrees-match-world",
    "layers-divisible",
    "global-batch",
];
const STATE_CHECKS: [&str; 2] = ["pods-running", "one-pod-per-node"];
const ROLES: [&str; 2] = ["Master", "Worker"];

fn solved() -> State {
    State::load("parallelism-3d/solution-state").and("kind-nodes")
}

/// The lab's own folder read as the learner's files (static mode), with the kind facts.
fn files(folder: &str) -> State {
    State::load(&format!("../../labs/02-parallelism-3d/{folder}"))
        .into_files()
        .param("gpus_per_node", "8")
        .param("nodes", "2")
}

/// Static mode: exactly `check` fails among the spec checks, with `hint`.
fn spec_only_fails(r: &LabResult, check: &str, hint: Option<&str>) {
    for c in SPEC_CHECKS {
        let o = outcome(r, c);
        if c == check {
            assert_eq!(o.status, Status::Fail, "{c}: {o:?}");
            assert_eq!(o.hint.as_deref(), hint, "{c}: {o:?}");
        } else {
            assert_eq!(o.status, Status::Pass, "{c}: {o:?}");
        }
    }
}

fn container<'a>(v: &'a mut Value, role: &str) -> &'a mut Value {
    &mut v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0]
}

/// Replaces (or, with None, removes) the argument starting with `prefix` in both roles.
fn set(prefix: &'static str, new: Option<&'static str>) -> impl Fn(&mut Value) {
    move |v| {
        for role in ROLES {
            let a = container(v, role)["args"].as_array_mut().expect("args");
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
}

fn job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("PyTorchJob", JOB, f)
}

// ---------------------------------------------------------------------------------------------
// The reference answer.

#[test]
fn the_solved_cluster_passes_every_check_and_says_what_200b_needs() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "degrees-match-world").found.as_deref(),
        Some("TP 4 × PP 2 × DP 2 = 16 (2 pods × nproc 8)")
    );
    assert_eq!(
        outcome(&r, "three-degrees").found.as_deref(),
        Some(
            "TP 4 (--tensor-model-parallel-size 4), PP 2 (--pipeline-model-parallel-size 2), DP 2"
        )
    );
    // --bf16: 18 B per parameter (fp32 gradients). 200B × 18 B / 8 = 450 GB per GPU; even
    // sharded over DP 2, (6 + 12 / 2) × 25 = 300 GB: more than an H100.
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["memory-per-gpu", "too-big"]);
    assert_eq!(r.advice[0].evidence["precision"], "bf16");
    assert_eq!(r.advice[0].evidence["bytes"], "18");
    assert_eq!(r.advice[0].evidence["per_gpu_gb"], "450.0");
    assert_eq!(r.advice[1].evidence["sharded_bytes"], "12");
    assert_eq!(r.advice[1].evidence["sharded_gb"], "300.0");
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
fn the_draft_has_no_pipeline_and_fails_three_degrees() {
    let r = files("draft").grade(LAB);
    spec_only_fails(&r, "three-degrees", None);
    assert_eq!(outcome(&r, "three-degrees").evidence["missing"], "PP");
}

#[test]
fn the_eks_shape_passes_and_the_distributed_optimizer_brings_it_under_80_gb() {
    let eks = |s: State| {
        job(s, |v| {
            v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(7);
            set(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=8"),
            )(v);
            set(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=4"),
            )(v);
            set("--use-distributed-optimizer", None)(v);
        })
    };
    let r = eks(files("solution").param("nodes", "8")).grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    // --bf16: 200B × 18 B / 32 = 112.5 GB per GPU; ZeRO-1 over DP 2: (6 + 12 / 2) × 6.25 = 75 GB.
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        ["memory-per-gpu", "distributed-optimizer", "activations"]
    );
    assert_eq!(r.advice[0].evidence["per_gpu_gb"], "112.5");
    assert_eq!(sharded(&r.advice[1]), ["6", "12", "12", "75.0"]);
    // ...and the first stage's activations do not fit beside those 75 GB (issue 30): 24 layers
    // × 4 micro-batches in flight; with neither sequence parallelism nor recompute (the kind
    // answer's flags) s·b·h·(10 + 24/t + 5·a·s/(h·t)) = 627 MB each (Korthikanti et al. 2022).
    let a = &r.advice[2].evidence;
    assert_eq!((a["layers"].as_str(), a["in_flight"].as_str()), ("24", "4"));
    assert_eq!(a["per_layer_mb"], "627");
    assert_eq!(a["states_gb"], "75.0");
    let total: f64 = a["total_gb"].parse().unwrap();
    assert!(total > 80.0, "{a:?}");
}

/// `kept + shardable / DP = sharded_bytes` and the GB per GPU of a distributed-optimizer advice.
fn sharded(a: &trainlab::verify::Advice) -> [&str; 4] {
    ["kept", "shardable", "sharded_bytes", "sharded_gb"].map(|k| a.evidence[k].as_str())
}

/// The kind solution reshaped to the EKS layout (8 nodes, TP 8 × PP 4 × DP 2) without the
/// distributed optimizer, its `--bf16` replaced by `precision` (none: removed).
fn eks_shape_in(precision: Option<&'static str>) -> State {
    job(files("solution").param("nodes", "8"), move |v| {
        v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(7);
        set(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=8"),
        )(v);
        set(
            "--pipeline-model-parallel-size",
            Some("--pipeline-model-parallel-size=4"),
        )(v);
        set("--use-distributed-optimizer", None)(v);
        set("--bf16", precision)(v);
    })
}

#[test]
fn the_memory_advice_counts_megatrons_bytes_for_the_precision() {
    // Megatron-LM's dist_optimizer table: fp16 20 = 4 + 16/d, fp32 16 = 8 + 8/d (bf16: above).
    let r = eks_shape_in(Some("--fp16")).grade(LAB);
    assert_eq!(r.advice[0].evidence["precision"], "fp16");
    assert_eq!(r.advice[0].evidence["bytes"], "20");
    assert_eq!(r.advice[0].evidence["per_gpu_gb"], "125.0");
    assert_eq!(r.advice[1].id, "distributed-optimizer");
    assert_eq!(sharded(&r.advice[1]), ["4", "16", "12", "75.0"]);
    let r = eks_shape_in(None).grade(LAB);
    assert_eq!(r.advice[0].evidence["precision"], "fp32");
    assert_eq!(r.advice[0].evidence["bytes"], "16");
    assert_eq!(sharded(&r.advice[1]), ["8", "8", "12", "75.0"]);
    // Both precisions: Megatron-LM refuses the run, so there is no estimate.
    let r = job(eks_shape_in(Some("--bf16")), |v| {
        for role in ROLES {
            container(v, role)["args"]
                .as_array_mut()
                .unwrap()
                .push(json!("--fp16"));
        }
    })
    .grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

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
    assert_eq!(
        outcome(&r, "degrees-match-world").found.as_deref(),
        Some("TP 8 × PP 8 × DP 2 = 128 (16 pods × nproc 8)")
    );
    // It already has the distributed optimizer: only the estimate, 56.2 GB without it
    // (200B × 18 bytes / 64).
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["memory-per-gpu"]);
    assert_eq!(r.advice[0].evidence["per_gpu_gb"], "56.2");
}

#[test]
fn a_missing_job_fails_every_check_with_the_missing_text() {
    let r = solved().remove(|o| o.kind() == "PyTorchJob").grade(LAB);
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.status == Status::Fail && o.hint.as_deref() == Some("missing")));
    let r = files("solution")
        .edit("PyTorchJob", JOB, |v| {
            v["apiVersion"] = json!("kubeflow.org/v1beta1")
        })
        .grade(LAB);
    assert_eq!(
        outcome(&r, "global-batch").found.as_deref(),
        Some("kubeflow.org/v1beta1 PyTorchJob llm-200b")
    );
}

// ---------------------------------------------------------------------------------------------
// three-degrees

#[test]
fn tensor_parallelism_alone_fails_only_three_degrees() {
    let r = job(solved(), |v| {
        set(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=8"),
        )(v);
        set("--pipeline-model-parallel-size", None)(v);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "three-degrees", None);
    assert_eq!(o.evidence["missing"], "PP");
    assert_eq!(o.evidence["dp"], "2");
}

#[test]
fn tp_times_pp_taking_every_gpu_leaves_no_data_parallelism() {
    let r = job(
        solved(),
        set(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=8"),
        ),
    )
    .grade(LAB);
    assert_only_fails(&r, "three-degrees", Some("no-dp"));
}

#[test]
fn degrees_that_cannot_be_read_fail_three_degrees_and_skip_what_needs_them() {
    let r = job(
        solved(),
        set(
            "--pipeline-model-parallel-size",
            Some("--pipeline-model-parallel-size=$(PP)"),
        ),
    )
    .grade(LAB);
    let o = outcome(&r, "three-degrees");
    assert_eq!(o.hint.as_deref(), Some("variable"));
    assert_eq!(o.evidence["degree"], "PP");
    for c in ["degrees-match-world", "layers-divisible"] {
        assert_eq!(message(outcome(&r, c)), "degrees-unknown", "{c}");
    }
    assert_eq!(message(outcome(&r, "global-batch")), "dp-unknown");

    let r = job(
        solved(),
        set(
            "--pipeline-model-parallel-size",
            Some("--pipeline-model-parallel-size=two"),
        ),
    )
    .grade(LAB);
    assert_eq!(
        outcome(&r, "three-degrees").hint.as_deref(),
        Some("bad-flag")
    );
    assert_eq!(message(outcome(&r, "layers-divisible")), "plan-unreadable");
}

#[test]
fn nemo_overrides_are_read_like_megatron_flags() {
    let r = job(solved(), |v| {
        for role in ROLES {
            container(v, role)["args"] = json!([
                "--nproc_per_node=8",
                "megatron_gpt_pretraining.py",
                "trainer.num_nodes=2",
                "trainer.devices=8",
                "model.tensor_model_parallel_size=4",
                "model.pipeline_model_parallel_size=2",
                "model.num_layers=96",
                "model.num_attention_heads=104",
                "model.micro_batch_size=1",
                "model.global_batch_size=512"
            ]);
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// tp-within-node

#[test]
fn tp_larger_than_a_node_fails_only_tp_within_node() {
    // 8 nodes × 8 GPUs: TP 16 × PP 2 × DP 2 = 64 would fit the world, but not a node.
    let r = files("solution")
        .param("nodes", "8")
        .edit("PyTorchJob", JOB, |v| {
            v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(7);
            set(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=16"),
            )(v);
            set("--num-attention-heads", Some("--num-attention-heads=128"))(v);
        })
        .grade(LAB);
    spec_only_fails(&r, "tp-within-node", Some("spans-nodes"));
}

// ---------------------------------------------------------------------------------------------
// degrees-match-world

#[test]
fn half_a_node_per_pod_fails_only_degrees_match_world() {
    let r = job(solved(), |v| {
        for role in ROLES {
            container(v, role)["resources"]["limits"]["nvidia.com/gpu"] = json!(4);
        }
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "degrees-match-world", Some("gpus"));
    assert_eq!(o.evidence["gpus"], "4");
}

#[test]
fn fewer_processes_than_gpus_fails_only_degrees_match_world() {
    let r = job(solved(), |v| {
        set("--nproc_per_node", Some("--nproc_per_node=4"))(v);
        set(
            "--tensor-model-parallel-size",
            Some("--tensor-model-parallel-size=2"),
        )(v);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "degrees-match-world", Some("nproc"));
    assert_eq!(o.evidence["nproc_written"], "--nproc_per_node 4");
}

#[test]
fn a_job_with_another_node_count_fails_degrees_match_world() {
    let r = files("solution")
        .edit("PyTorchJob", JOB, |v| {
            v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(2);
            set("--global-batch-size", Some("--global-batch-size=510"))(v);
        })
        .grade(LAB);
    spec_only_fails(&r, "degrees-match-world", Some("nodes"));
    assert_eq!(outcome(&r, "degrees-match-world").evidence["pods"], "3");
}

#[test]
fn degrees_that_do_not_divide_the_world_fail_degrees_match_world() {
    let r = job(
        solved(),
        set(
            "--pipeline-model-parallel-size",
            Some("--pipeline-model-parallel-size=3"),
        ),
    )
    .grade(LAB);
    let o = outcome(&r, "degrees-match-world");
    assert_eq!(o.hint.as_deref(), Some("not-divisible"));
    assert_eq!(o.evidence["model"], "TP 4 × PP 3");
    // DP is not a whole number: the checks that need it wait for this one.
    assert_eq!(message(outcome(&r, "three-degrees")), "dp-unknown");
}

#[test]
fn an_nnodes_or_a_refused_manifest_fails_degrees_match_world() {
    let r = job(solved(), |v| {
        for role in ROLES {
            container(v, role)["args"]
                .as_array_mut()
                .unwrap()
                .insert(0, json!("--nnodes=3"));
        }
    })
    .grade(LAB);
    assert_only_fails(&r, "degrees-match-world", Some("nnodes"));

    let r = files("solution")
        .edit("PyTorchJob", JOB, |v| {
            v["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!(2)
        })
        .grade(LAB);
    let o = outcome(&r, "degrees-match-world");
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert_eq!(
        o.evidence["rejection"],
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"
    );
}

#[test]
fn spare_capacity_does_not_ask_for_a_bigger_job() {
    // Without the nodeSelector the pods may also use the p4d node (3 whole 8-GPU nodes): the
    // task's 2 nodes still decide.
    let r = job(solved(), |v| {
        for role in ROLES {
            v["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
                .as_object_mut()
                .unwrap()
                .remove("nodeSelector");
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// layers-divisible, global-batch

#[test]
fn layers_or_heads_that_do_not_split_fail_only_layers_divisible() {
    let r = job(solved(), set("--num-layers", Some("--num-layers=95"))).grade(LAB);
    let o = assert_only_fails(&r, "layers-divisible", Some("layers"));
    assert_eq!(o.evidence["layers"], "95");

    let r = job(
        solved(),
        set("--num-attention-heads", Some("--num-attention-heads=102")),
    )
    .grade(LAB);
    assert_only_fails(&r, "layers-divisible", Some("heads"));

    let r = job(solved(), set("--num-layers", None)).grade(LAB);
    let o = assert_only_fails(&r, "layers-divisible", Some("unset"));
    assert_eq!(o.evidence["what"], "num-layers");
}

#[test]
fn a_global_batch_that_does_not_split_fails_only_global_batch() {
    let r = job(
        solved(),
        set("--global-batch-size", Some("--global-batch-size=511")),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "global-batch", None);
    assert_eq!(o.evidence["unit"], "2");

    let r = job(solved(), set("--micro-batch-size", None)).grade(LAB);
    assert_only_fails(&r, "global-batch", Some("no-micro-batch"));

    // Unset, Megatron-LM uses micro batch × DP.
    let r = job(solved(), set("--global-batch-size", None)).grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// pods-running, one-pod-per-node

#[test]
fn a_pod_the_stand_in_failed_fails_only_pods_running_quoting_its_message() {
    let msg = "ValueError: num_attention_heads (104) must be a multiple of tensor_model_parallel_size (16).";
    // The job has not completed (its `Succeeded` condition removed): a job that says it
    // completed passes whatever a pod did on the way (kit `pods::running`, the one rule).
    let r = solved()
        .edit("PyTorchJob", JOB, |v| {
            v["status"]["conditions"].as_array_mut().unwrap().pop();
        })
        .edit("Pod", "llm-200b-worker-0", |v| {
            v["status"]["phase"] = json!("Failed");
            v["status"]["containerStatuses"][0]["state"] =
                json!({"terminated": {"exitCode": 1, "reason": "Error", "message": msg}});
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("crashed"));
    assert_eq!(o.evidence["message"], msg);
}

#[test]
fn pods_not_created_yet_are_pending_and_sharing_a_node_fails_one_pod_per_node() {
    let r = solved().remove(|o| o.kind() == "Pod").grade(LAB);
    // Succeeded with its pods deleted: nothing left to place.
    assert_eq!(status(&r, "pods-running"), Status::Pass);
    assert_eq!(message(outcome(&r, "one-pod-per-node")), "pods-gone");

    let r = solved()
        .edit("PyTorchJob", JOB, |v| {
            v["status"]["conditions"].as_array_mut().unwrap().pop();
        })
        .remove(|o| o.kind() == "Pod")
        .grade(LAB);
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Pending, "{c}");
    }

    let r = solved()
        .edit("Pod", "llm-200b-worker-0", |v| {
            v["spec"]["nodeName"] = json!("trainlab-worker")
        })
        .grade(LAB);
    assert_only_fails(&r, "one-pod-per-node", None);
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
        job(solved(), set("--pipeline-model-parallel-size", None)),
        job(
            solved(),
            set(
                "--tensor-model-parallel-size",
                Some("--tensor-model-parallel-size=8"),
            ),
        ),
        job(
            solved(),
            set(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=3"),
            ),
        ),
        job(
            solved(),
            set(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=x"),
            ),
        ),
        job(
            solved(),
            set("--nproc_per_node", Some("--nproc_per_node=cpu")),
        ),
        job(solved(), set("--num-layers", None)),
        job(solved(), set("--num-layers", Some("--num-layers=95"))),
        job(solved(), set("--micro-batch-size", None)),
        job(solved(), set("--global-batch-size", None)),
        job(
            solved(),
            set("--global-batch-size", Some("--global-batch-size=511")),
        ),
        job(solved(), |v| {
            v["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = json!(2)
        }),
        job(solved(), |v| {
            v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(2)
        }),
        job(
            solved(),
            set(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=$(PP)"),
            ),
        ),
        job(
            solved(),
            set(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=0"),
            ),
        ),
        job(solved(), |v| {
            let a = container(v, "Worker")["args"].as_array_mut().unwrap();
            a[2] = json!("--tensor-model-parallel-size=2");
        }),
        job(
            solved(),
            set(
                "--tensor-model-parallel-size",
                Some("--model-parallel-size=4"),
            ),
        ),
        job(
            solved(),
            set("--num-attention-heads", Some("--num-attention-heads=$(H)")),
        ),
        job(
            solved(),
            set("--micro-batch-size", Some("--micro-batch-size=$(M)")),
        ),
        job(
            solved(),
            set("--global-batch-size", Some("--global-batch-size=$(G)")),
        ),
        job(
            solved(),
            set("--nproc_per_node", Some("--nproc_per_node=4")),
        ),
        job(solved(), |v| {
            for role in ROLES {
                container(v, role)["resources"]["limits"]["nvidia.com/gpu"] = json!(4);
                container(v, role)["args"]
                    .as_array_mut()
                    .unwrap()
                    .insert(0, json!("--nnodes=3"));
            }
        }),
        solved().remove(|o| o.kind() == "Pod"),
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

#[test]
fn the_eks_solution_is_what_the_task_text_says_for_eks() {
    assert_eks_megatron_job_matches_the_task_text(LAB);
}

#[test]
fn tp_above_one_without_cuda_device_max_connections_1_is_advised_not_failed() {
    support::state::assert_max_connections_is_advice_when_layers_split(LAB, solved());
}

// ---------------------------------------------------------------------------------------------
// The same lab as a TrainJob (Kubeflow Trainer v2) over `torch-distributed`.

fn trainjob() -> State {
    State::load("parallelism-3d/trainjob-state").and("kind-nodes")
}

fn trainjob_arg(prefix: &'static str, new: &'static str) -> State {
    trainjob().edit("TrainJob", "llm-200b", move |v| {
        let a = v["spec"]["trainer"]["args"].as_array_mut().unwrap();
        let i = a
            .iter()
            .position(|w| w.as_str().unwrap().starts_with(prefix))
            .unwrap();
        a[i] = json!(new);
    })
}

#[test]
fn a_trainjob_with_tp_pp_and_dp_passes_every_check() {
    let r = trainjob().grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_trainjob_without_pipeline_parallelism_fails_three_degrees() {
    let r = trainjob_arg(
        "--pipeline-model-parallel-size",
        "--pipeline-model-parallel-size=1",
    )
    .grade(LAB);
    assert_eq!(status(&r, "three-degrees"), Status::Fail, "{r:?}");
}

#[test]
fn a_trainjob_on_one_node_fails_degrees_match_world() {
    let r = trainjob()
        .edit("TrainJob", "llm-200b", |v| {
            v["spec"]["trainer"]["numNodes"] = json!(1)
        })
        .grade(LAB);
    assert_ne!(status(&r, "degrees-match-world"), Status::Pass, "{r:?}");
}

#[test]
fn a_trainjob_from_files_passes_its_spec_checks_over_the_built_in_runtime() {
    let r = trainjob()
        .remove(|o| o.kind() != "TrainJob")
        .into_files()
        .param("gpus_per_node", "8")
        .param("nodes", "2")
        .grade(LAB);
    for c in [
        "three-degrees",
        "tp-within-node",
        "degrees-match-world",
        "layers-divisible",
        "global-batch",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
}

#[test]
fn the_demo_learners_trainjob_passes_the_spec_and_waits_for_the_p5_nodes() {
    // manifests/demo/02-parallelism-3d.yaml: lab 9's gang holds both p5.48xlarge nodes and lab
    // 1's pods wait for them too, so the scheduler has nowhere to put llm-200b's pods.
    let r = State::demo().grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    let running = outcome(&r, "pods-running");
    assert_eq!(running.status, Status::Pending);
    assert_eq!(message(running), "pods-unschedulable");
    assert_eq!(running.evidence["kind"], "TrainJob");
    assert_eq!(running.evidence["pod"], "llm-200b-node-0-0-k7p2d");
    assert!(
        running.evidence["message"].contains("2 Insufficient nvidia.com/gpu"),
        "{running:?}"
    );
    let spread = outcome(&r, "one-pod-per-node");
    assert_eq!(spread.status, Status::Pending);
    assert_eq!(message(spread), "pods-unbound");
    assert_eq!(spread.evidence["bound"], "0");
}

/// The quiz's 8-node layout with the EKS answer's own flags (sequence parallelism, selective
/// recompute, the distributed optimizer): its 75 GB of states fit, its first stage's 11.1 GB of
/// activations do not (issue 30); the EKS answer itself (PP 8 on 16 nodes) draws no such advice.
#[test]
fn the_activations_of_the_quiz_layout_are_advised_and_the_eks_answer_fits() {
    let r = eks_solution().grade(LAB);
    assert!(
        r.advice.iter().all(|a| a.id != "activations"),
        "{:?}",
        r.advice
    );
    let eight = eks_solution()
        .param("nodes", "8")
        .edit("PyTorchJob", JOB, |v| {
            v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = json!(7);
            set(
                "--pipeline-model-parallel-size",
                Some("--pipeline-model-parallel-size=4"),
            )(v);
        });
    let r = eight.grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    let a = r
        .advice
        .iter()
        .find(|a| a.id == "activations")
        .unwrap_or_else(|| panic!("{:?}", r.advice));
    assert_eq!(a.evidence["per_layer_mb"], "116");
    assert_eq!(a.evidence["act_gb"], "11.1");
    assert_eq!(a.evidence["states_gb"], "75.0");
    assert_eq!(a.evidence["total_gb"], "86.1");
    for lang in [Lang::En, Lang::Ja] {
        let report = LabReport::new(&r, lang);
        let shown = report
            .advice
            .iter()
            .find(|x| x.id == "activations")
            .unwrap();
        assert!(shown.text.contains("86.1 GB"), "{}", shown.text);
        assert!(!shown.text.contains('{'), "{}", shown.text);
    }
}
