//! Lab 14 `checkpoint-strategy`: a Job `ckpt-llm` whose HF TrainingArguments save every N steps,
//! keep the 3–5 most recent checkpoints, and write them under `--output_dir` on a
//! PersistentVolumeClaim.

mod support;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Lang;
use trainlab::report::LabReport;
use trainlab::verify::{LabResult, Status};

const LAB: &str = "checkpoint-strategy";
const JOB: &str = "ckpt-llm";
const PVC: &str = "ckpt-llm-checkpoints";
const POD: &str = "ckpt-llm-5hxv2";
const SPEC_CHECKS: [&str; 3] = ["save-every-n-steps", "keep-recent", "durable-output"];

fn solved() -> State {
    State::load("checkpoint-strategy/solution-state").and("kind-nodes")
}

fn grade(s: &State) -> LabResult {
    s.grade(LAB)
}

/// The lab's own folder read as the learner's files (static mode).
fn files(folder: &str) -> State {
    State::load(&format!("../../labs/14-checkpoint-strategy/{folder}")).into_files()
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

fn container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

fn pod_spec(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]
}

fn edit_job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("Job", JOB, f)
}

/// The Job's training arguments, the solution's model and batch flags first.
fn args(words: &[&str]) -> State {
    let words: Vec<String> = [
        "--model_name_or_path",
        "EleutherAI/pythia-14m",
        "--per_device_train_batch_size",
        "1",
    ]
    .iter()
    .chain(words)
    .map(|w| w.to_string())
    .collect();
    edit_job(solved(), move |v| container(v)["args"] = json!(words))
}

/// The solution's arguments with `flag` given `value` (removed with None).
fn set(flag: &'static str, value: Option<&'static str>) -> State {
    edit_job(solved(), move |v| {
        let a = container(v)["args"].as_array_mut().unwrap();
        let i = a.iter().position(|w| w == flag).unwrap();
        match value {
            Some(x) => a[i + 1] = json!(x),
            None => {
                a.drain(i..i + 2);
            }
        }
    })
}

/// Adds a volume and its mount to the Job's pod.
fn add_volume(s: State, volume: Value, mount: Value) -> State {
    edit_job(s, move |v| {
        pod_spec(v)["volumes"].as_array_mut().unwrap().push(volume);
        container(v)["volumeMounts"]
            .as_array_mut()
            .unwrap()
            .push(mount);
    })
}

fn edit_pvc(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("PersistentVolumeClaim", PVC, f)
}

/// A claim still waiting for a volume, and the pod waiting for it.
fn pvc_pending(v: &mut Value) {
    v["status"] = json!({"phase": "Pending"});
    v["spec"].as_object_mut().unwrap().remove("volumeName");
}

fn job_active(v: &mut Value) {
    v["status"] = json!({"active": 1, "startTime": "2026-12-03T10:00:00Z"});
}

fn pod_pending(p: &mut Value) {
    p["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/5 nodes are available: pod has unbound immediate PersistentVolumeClaims."}]});
}

// ---------------------------------------------------------------------------------------------
// The reference answer and the variants that are right.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = grade(&solved());
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "durable-output").found.as_deref(),
        Some("/checkpoints/ckpt-llm → persistentVolumeClaim ckpt-llm-checkpoints")
    );
    assert_eq!(
        outcome(&r, "save-every-n-steps").found.as_deref(),
        Some("--save_strategy steps, --save_steps 50")
    );
    assert_eq!(advice_ids(&r), ["resume", "s3-sync"]);
}

#[test]
fn the_solution_passes_static_mode_and_the_draft_fails_it() {
    let r = grade(&files("solution"));
    for o in &r.outcomes {
        let want = if SPEC_CHECKS.contains(&o.check.as_str()) {
            Status::Pass
        } else {
            Status::Skipped
        };
        assert_eq!(o.status, want, "{o:?}");
    }
    let r = grade(&files("draft"));
    for c in SPEC_CHECKS {
        assert_eq!(outcome(&r, c).status, Status::Fail, "{c}");
    }
    assert_eq!(
        outcome(&r, "durable-output").hint.as_deref(),
        Some("emptydir")
    );
}

#[test]
fn every_way_to_save_every_n_steps_passes() {
    for s in [
        // `steps` is the default strategy.
        set("--save_strategy", None),
        // Both spellings of a field, and `=`.
        args(&[
            "--max-steps=200",
            "--output-dir=/checkpoints/run",
            "--save-strategy=steps",
            "--save-steps=50",
            "--save-total-limit=5",
        ]),
        // A ratio of the total steps: ceil(200 × 0.25) = 50.
        set("--save_steps", Some("0.25")),
        // The default 500 steps is every N steps when the run is longer.
        args(&[
            "--max_steps",
            "2000",
            "--output_dir",
            "/checkpoints/run",
            "--save_total_limit",
            "4",
        ]),
        // No --max_steps: N only has to be positive.
        args(&[
            "--num_train_epochs",
            "3",
            "--output_dir",
            "/checkpoints/run",
            "--save_steps",
            "100",
            "--save_total_limit",
            "3",
        ]),
    ] {
        assert_all_pass(&grade(&s));
    }
}

#[test]
fn every_way_to_put_the_output_on_the_claim_passes() {
    for s in [
        // The mount path itself.
        set("--output_dir", Some("/checkpoints")),
        // A relative path from a workingDir on the claim, and the default output_dir there.
        edit_job(set("--output_dir", Some("runs/ckpt-llm")), |v| {
            container(v)["workingDir"] = json!("/checkpoints")
        }),
        edit_job(set("--output_dir", None), |v| {
            container(v)["workingDir"] = json!("/checkpoints")
        }),
        // A subPath of the claim.
        edit_job(solved(), |v| {
            container(v)["volumeMounts"][1]["subPath"] = json!("ckpt-llm")
        }),
        // torchrun, a shell script, and a value from the container's env.
        edit_job(solved(), |v| {
            container(v)["command"] = json!(["bash", "-lc"]);
            container(v)["env"] = json!([{"name": "CKPT", "value": "/checkpoints/ckpt-llm"}]);
            container(v)["args"] = json!(["mkdir -p $(CKPT) && torchrun --nproc_per_node 1 run_clm.py --max_steps 200 --output_dir $(CKPT) --save_steps 50 --save_total_limit 3"]);
        }),
        // A claim without a class takes the default StorageClass.
        edit_pvc(solved(), |v| {
            v["spec"]
                .as_object_mut()
                .unwrap()
                .remove("storageClassName");
        }),
        // Still training: the pod is Running.
        solved().edit("Job", JOB, job_active).edit("Pod", POD, |p| {
            p["status"]["phase"] = json!("Running");
            p["status"]["containerStatuses"][0]["state"] =
                json!({"running": {"startedAt": "2026-12-03T10:00:08Z"}});
        }),
    ] {
        assert_all_pass(&grade(&s));
    }
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn saving_other_than_every_n_steps_fails_only_save_every_n_steps() {
    for (s, hint, found) in [
        (
            set("--save_strategy", Some("epoch")),
            None,
            "--save_strategy epoch, --save_steps 50",
        ),
        (
            set("--save_strategy", Some("no")),
            None,
            "--save_strategy no, --save_steps 50",
        ),
        (
            set("--save_strategy", Some("best")),
            None,
            "--save_strategy best, --save_steps 50",
        ),
        (
            set("--save_steps", Some("0")),
            Some("zero"),
            "--save_strategy steps, --save_steps 0",
        ),
        (
            set("--save_steps", Some("-10")),
            Some("zero"),
            "--save_strategy steps, --save_steps -10",
        ),
        (
            set("--save_steps", Some("0.0")),
            Some("zero"),
            "--save_strategy steps, --save_steps 0.0",
        ),
        (
            set("--save_steps", Some("200")),
            Some("not-below"),
            "--save_strategy steps, --save_steps 200",
        ),
        (
            set("--save_steps", None),
            Some("not-below"),
            "--save_strategy steps, --save_steps — (default 500)",
        ),
        (
            set("--save_steps", Some("$(N)")),
            Some("variable"),
            "--save_strategy steps, --save_steps $(N)",
        ),
    ] {
        let r = grade(&s);
        let o = assert_only_fails(&r, "save-every-n-steps", hint);
        assert_eq!(o.found.as_deref(), Some(found));
        assert_eq!(
            o.expected.as_deref(),
            Some("--save_strategy steps --save_steps N (0 < N < 200)")
        );
    }
    let o = outcome(
        &grade(&set("--save_steps", Some("500"))),
        "save-every-n-steps",
    )
    .clone();
    assert_eq!(
        (o.evidence["n"].as_str(), o.evidence["max"].as_str()),
        ("500", "200")
    );
}

#[test]
fn keeping_too_many_or_too_few_fails_only_keep_recent() {
    for (s, hint, found) in [
        (
            set("--save_total_limit", None),
            Some("unset"),
            "--save_total_limit —",
        ),
        (
            set("--save_total_limit", Some("0")),
            Some("unset"),
            "--save_total_limit 0",
        ),
        (
            set("--save_total_limit", Some("2")),
            Some("few"),
            "--save_total_limit 2",
        ),
        (
            set("--save_total_limit", Some("10")),
            None,
            "--save_total_limit 10",
        ),
        (
            set("--save_total_limit", Some("${KEEP}")),
            Some("variable"),
            "--save_total_limit ${KEEP}",
        ),
    ] {
        let r = grade(&s);
        let o = assert_only_fails(&r, "keep-recent", hint);
        assert_eq!(o.found.as_deref(), Some(found));
    }
}

#[test]
fn an_output_that_does_not_outlive_the_pod_fails_only_durable_output() {
    let scratch = |volume: Value| {
        add_volume(
            set("--output_dir", Some("/scratch/ckpt")),
            volume,
            json!({"name": "scratch", "mountPath": "/scratch"}),
        )
    };
    for (s, hint, found) in [
        (
            set("--output_dir", Some("/tmp/ckpt")),
            None,
            "/tmp/ckpt → container filesystem",
        ),
        (
            scratch(json!({"name": "scratch", "emptyDir": {}})),
            Some("emptydir"),
            "/scratch/ckpt → emptyDir scratch",
        ),
        (
            scratch(json!({"name": "scratch", "hostPath": {"path": "/var/ckpt"}})),
            Some("hostpath"),
            "/scratch/ckpt → hostPath scratch",
        ),
        (
            scratch(
                json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}),
            ),
            Some("ephemeral"),
            "/scratch/ckpt → ephemeral scratch",
        ),
        (
            scratch(json!({"name": "scratch", "nfs": {"server": "10.0.0.2", "path": "/exports"}})),
            Some("other-volume"),
            "/scratch/ckpt → nfs scratch",
        ),
        (
            edit_job(solved(), |v| {
                container(v)["volumeMounts"][1]["readOnly"] = json!(true)
            }),
            Some("read-only"),
            "/checkpoints/ckpt-llm → persistentVolumeClaim ckpt-llm-checkpoints (readOnly)",
        ),
        (
            edit_job(solved(), |v| {
                pod_spec(v)["volumes"][1]["persistentVolumeClaim"]["readOnly"] = json!(true)
            }),
            Some("read-only"),
            "/checkpoints/ckpt-llm → persistentVolumeClaim ckpt-llm-checkpoints (readOnly)",
        ),
        (
            set("--output_dir", Some("ckpt")),
            Some("relative"),
            "--output_dir ckpt",
        ),
        (
            set("--output_dir", Some("$(OUT)")),
            Some("variable"),
            "--output_dir $(OUT)",
        ),
    ] {
        let r = grade(&s);
        let o = assert_only_fails(&r, "durable-output", hint);
        assert_eq!(o.found.as_deref(), Some(found), "{hint:?}");
        assert!(!advice_ids(&r).contains(&"s3-sync"));
    }
}

#[test]
fn what_the_api_server_refuses_fails_durable_output_also_in_static_mode() {
    let r = grade(&files("solution").edit("Job", JOB, |v| {
        container(v)["volumeMounts"][1]["name"] = json!("ckpt")
    }));
    let o = outcome(&r, "durable-output");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("rejected"))
    );
    assert_eq!(
        o.evidence["error"],
        "spec.template.spec.containers[0].volumeMounts[1].name: Not found: \"ckpt\""
    );
    for c in &SPEC_CHECKS[..2] {
        assert_eq!(outcome(&r, c).status, Status::Pass);
    }
}

#[test]
fn a_command_the_tools_cannot_read_fails_every_spec_check() {
    // `--save_steps must be an integer if bigger than 1` (TrainingArguments.__post_init__).
    let r = grade(&set("--save_steps", Some("1.5")));
    for c in SPEC_CHECKS {
        let o = outcome(&r, c);
        assert_eq!(
            (o.status, o.hint.as_deref()),
            (Status::Fail, Some("bad-flag")),
            "{c}"
        );
    }
    let r = grade(&edit_job(solved(), |v| {
        container(v)["args"] = json!(["/etc/train/args.json"])
    }));
    for c in SPEC_CHECKS {
        assert_eq!(outcome(&r, c).hint.as_deref(), Some("config-file"), "{c}");
    }
    let r = grade(&edit_job(solved(), |v| {
        container(v)["command"] = json!(["sleep", "3600"]);
        container(v)["args"] = json!([]);
    }));
    for c in SPEC_CHECKS {
        assert_eq!(outcome(&r, c).hint.as_deref(), Some("no-command"), "{c}");
    }
}

#[test]
fn a_claim_that_cannot_bind_fails_only_pvc_bound() {
    let pending = |s: State| {
        edit_pvc(s, pvc_pending)
            .edit("Job", JOB, job_active)
            .edit("Pod", POD, pod_pending)
    };
    // A StorageClass that does not exist.
    let r = grade(&edit_pvc(pending(solved()), |v| {
        v["spec"]["storageClassName"] = json!("fast")
    }));
    let mut settled = r.clone();
    settled.outcomes.retain(|o| o.status != Status::Pending);
    let o = assert_only_fails(&settled, "pvc-bound", Some("no-class"));
    assert_eq!(o.evidence["classes"], "standard");
    // No class and no default class.
    let s = edit_pvc(pending(solved()), |v| {
        v["spec"]
            .as_object_mut()
            .unwrap()
            .remove("storageClassName");
    })
    .edit("StorageClass", "standard", |v| {
        v["metadata"]["annotations"] = json!({})
    });
    let r = grade(&s);
    let o = outcome(&r, "pvc-bound");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("no-default-class"))
    );
    // Lost, or not there at all.
    let r = grade(&edit_pvc(solved(), |v| {
        v["status"]["phase"] = json!("Lost")
    }));
    assert_only_fails(&r, "pvc-bound", Some("lost"));
    let r = grade(&solved().remove(|o| o.kind() == "PersistentVolumeClaim"));
    let o = assert_only_fails(&r, "pvc-bound", Some("missing-pvc"));
    assert_eq!(o.evidence["claim"], PVC);
}

#[test]
fn a_claim_waiting_for_its_first_pod_is_pending_not_failed() {
    let s = edit_pvc(solved(), pvc_pending)
        .edit("Job", JOB, job_active)
        .edit("Pod", POD, pod_pending);
    let r = grade(&s);
    let o = outcome(&r, "pvc-bound");
    assert_eq!((o.status, message(o)), (Status::Pending, "pvc-pending"));
    assert_eq!(o.evidence["class"], "standard");
    let o = outcome(&r, "pods-running");
    assert_eq!(
        (o.status, message(o)),
        (Status::Pending, "pods-unschedulable")
    );
}

#[test]
fn a_pod_without_any_claim_fails_pvc_bound_with_none() {
    let s = edit_job(solved(), |v| {
        pod_spec(v)["volumes"][1] = json!({"name": "checkpoints", "emptyDir": {}});
    });
    let r = grade(&s);
    assert_eq!(outcome(&r, "pvc-bound").hint.as_deref(), Some("none"));
    assert_eq!(
        outcome(&r, "durable-output").hint.as_deref(),
        Some("emptydir")
    );
}

#[test]
fn a_pod_the_trainer_refused_fails_only_pods_running_quoting_its_message() {
    let message =
        "ValueError: --load_best_model_at_end requires the save and eval strategy to match";
    let s = solved().edit("Job", JOB, job_active).edit("Pod", POD, |p| {
        p["status"]["phase"] = json!("Running");
        p["status"]["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting failed container"}});
        p["status"]["containerStatuses"][0]["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error", "message": message}});
    });
    let o = assert_only_fails(&grade(&s), "pods-running", Some("crashed"));
    assert_eq!(o.evidence["message"], message);
    let s = solved().edit("Job", JOB, |v| {
        v["status"] = json!({"failed": 4, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]});
    });
    let s = s.remove(|o| o.kind() == "Pod");
    assert_only_fails(&grade(&s), "pods-running", Some("job-failed"));
}

#[test]
fn an_evicted_pod_or_a_suspended_job_fails_pods_running() {
    // The kubelet evicted the pod: a crash without a container, in the kubelet's words.
    let s = solved().edit("Job", JOB, job_active).edit("Pod", POD, |p| {
        p["status"] = json!({"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: ephemeral-storage."});
    });
    let o = assert_only_fails(&grade(&s), "pods-running", Some("crashed"));
    assert_eq!(
        o.evidence["message"],
        "The node was low on resource: ephemeral-storage."
    );
    let s = solved()
        .edit("Job", JOB, |v| {
            v["spec"]["suspend"] = json!(true);
            v["status"] = json!({});
        })
        .remove(|o| o.kind() == "Pod");
    let o = assert_only_fails(&grade(&s), "pods-running", Some("suspended"));
    assert_eq!(o.found.as_deref(), Some("spec.suspend: true"));
}

#[test]
fn a_missing_job_fails_every_check_with_the_missing_text() {
    for s in [
        solved().remove(|o| o.kind() == "Job"),
        solved().edit("Job", JOB, |v| v["apiVersion"] = json!("batch/v1beta1")),
    ] {
        let r = grade(&s);
        for o in &r.outcomes {
            assert_eq!(
                (o.status, o.hint.as_deref()),
                (Status::Fail, Some("missing"))
            );
        }
    }
}

#[test]
fn resuming_is_advised_only_when_the_command_does_not() {
    let s = edit_job(solved(), |v| {
        let a = container(v)["args"].as_array_mut().unwrap();
        a.push(json!("--resume_from_checkpoint"));
        a.push(json!("/checkpoints/ckpt-llm/checkpoint-150"));
    });
    let r = grade(&s);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["s3-sync"]);
    assert_eq!(r.advice[0].evidence["output_dir"], "/checkpoints/ckpt-llm");
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
        set("--save_steps", Some("500")),
        set("--save_total_limit", Some("2")),
        set("--save_steps", Some("1.5")),
        set("--output_dir", Some("/tmp/x")),
        edit_job(solved(), |v| {
            container(v)["volumeMounts"][1]["readOnly"] = json!(true)
        }),
        edit_pvc(solved(), |v| {
            pvc_pending(v);
            v["spec"]["storageClassName"] = json!("fast");
        }),
        edit_pvc(solved(), pvc_pending),
        solved().remove(|o| o.kind() == "PersistentVolumeClaim"),
        solved().remove(|o| o.kind() == "Job"),
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
                let unfilled = trainlab::catalog::placeholders(t);
                assert!(
                    unfilled.is_empty(),
                    "{lang:?}: unfilled {unfilled:?} in {t}"
                );
            }
        }
    }
}
