//! Lab 14 `checkpoint-strategy`: a Job `ckpt-llm` whose HF TrainingArguments save every N steps,
//! keep the 3–5 most recent checkpoints, and write them under `--output_dir` on a
//! PersistentVolumeClaim.

use crate::support;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::observe::Obj;
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::kit::cmdline::Args;
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

/// The EKS profile's answer as the learner's files: `solution/` with each file of
/// `solution-eks/` in place of the same-named one, graded with the lab's EKS parameters.
fn eks_solution() -> State {
    State::solution_of(LAB, "eks")
}

/// The training command's arguments of Job `ckpt-llm` among these objects.
fn job_training_args(objects: &[Obj]) -> Args {
    support::run_clm::job_training_args(objects, JOB)
}

/// The kind solution's shell script (`bash -c SCRIPT`).
fn solution_script() -> String {
    let s = files("solution");
    let job = s.objects.iter().find(|o| o.kind() == "Job").unwrap();
    let c = &job.value["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"], json!(["bash", "-c"]));
    c["args"][0].as_str().unwrap().to_string()
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

/// The solution's run_clm.py flags, without the script around them that finds a checkpoint to
/// resume from.
const FLAGS: &[&str] = &[
    "--model_name_or_path",
    "EleutherAI/pythia-14m",
    "--dataset_name",
    "Salesforce/wikitext",
    "--dataset_config_name",
    "wikitext-2-raw-v1",
    "--do_train",
    "--per_device_train_batch_size",
    "1",
    "--max_steps",
    "200",
    "--output_dir",
    "/checkpoints/ckpt-llm",
    "--save_strategy",
    "steps",
    "--save_steps",
    "50",
    "--save_total_limit",
    "3",
];

/// The Job running the stand-in directly with these words (no shell, no resume step).
fn plain(words: Vec<String>) -> State {
    edit_job(solved(), move |v| {
        container(v)["command"] = json!(["python3", "/opt/trainlab/bin/trainer.py"]);
        container(v)["args"] = json!(words);
    })
}

/// The Job's training arguments, the solution's model, data and batch flags first.
fn args(words: &[&str]) -> State {
    plain(
        FLAGS[..9]
            .iter()
            .chain(words)
            .map(|w| w.to_string())
            .collect(),
    )
}

/// The solution's flags with `flag` given `value` (removed with None).
fn set(flag: &'static str, value: Option<&'static str>) -> State {
    let mut a: Vec<String> = FLAGS.iter().map(|w| w.to_string()).collect();
    let i = a.iter().position(|w| w == flag).unwrap();
    match value {
        Some(x) => a[i + 1] = x.to_string(),
        None => {
            a.drain(i..i + 2);
        }
    }
    plain(a)
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
    // The reference answer resumes from the newest checkpoint: only the S3 advice.
    assert_eq!(advice_ids(&r), ["s3-sync"]);
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
fn the_eks_solution_passes_every_spec_check_with_the_eks_params() {
    let s = eks_solution();
    let r = grade(&s);
    for o in &r.outcomes {
        let want = if SPEC_CHECKS.contains(&o.check.as_str()) {
            Status::Pass
        } else {
            Status::Skipped
        };
        assert_eq!(o.status, want, "{o:?}");
    }
    assert_eq!(
        outcome(&r, "save-every-n-steps").found.as_deref(),
        Some("--save_strategy steps, --save_steps 500")
    );
    assert_eq!(advice_ids(&r), ["s3-sync"]);
    // The claim's StorageClass ships with the answer (EKS 1.30+ has no default class), on the
    // EBS CSI driver.
    let catalog = Catalog::embedded().unwrap();
    let class = catalog.get(LAB).unwrap().lab.params("eks")["storage_class"].clone();
    let pvc = s
        .objects
        .iter()
        .find(|o| o.kind() == "PersistentVolumeClaim")
        .unwrap();
    assert_eq!(pvc.value["spec"]["storageClassName"], class.as_str());
    assert_eq!(
        pvc.value["spec"]["resources"]["requests"]["storage"],
        "200Gi"
    );
    let sc = s
        .objects
        .iter()
        .find(|o| o.kind() == "StorageClass" && o.name() == class)
        .expect("the StorageClass the claim names");
    assert_eq!(sc.value["provisioner"], "ebs.csi.aws.com");
    assert_eq!(sc.value["volumeBindingMode"], "WaitForFirstConsumer");
    // A real image with the install step, 8 GPUs on one node with a memory-backed /dev/shm.
    let job = s.objects.iter().find(|o| o.kind() == "Job").unwrap();
    let spec = &job.value["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    assert_eq!(c["image"], "nvcr.io/nvidia/pytorch:25.04-py3");
    let script = c["args"][0].as_str().unwrap();
    assert!(script.contains("pip install --no-cache-dir transformers==5.24.0"));
    assert!(script.contains("/transformers/v5.24.0/examples/pytorch/language-modeling/run_clm.py"));
    assert!(script.contains("torchrun --nproc-per-node 8 "));
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], 8);
    assert!(spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["emptyDir"]["medium"] == "Memory"));
}

#[test]
fn every_answer_and_the_draft_run_with_run_clms_own_arguments() {
    support::run_clm::assert_every_answer_and_the_draft_start(LAB, JOB);
    // The command line the lab had before: no dataset, no --do_train.
    let old = Args::new([
        "--model_name_or_path",
        "EleutherAI/pythia-14m",
        "--max_steps",
        "200",
        "--output_dir",
        "/checkpoints/ckpt-llm",
    ]);
    assert_eq!(
        support::run_clm::refusal(&old).as_deref(),
        Some("Need either a dataset name or a training/validation file.")
    );
}

#[test]
fn a_note_corrects_save_safetensors_and_says_how_run_clm_resumes_in_both_languages() {
    let catalog = Catalog::embedded().unwrap();
    let notes = &catalog.get(LAB).unwrap().lab.notes;
    let about = |word: &str| {
        notes
            .iter()
            .find(|n| n.text.get(Lang::En).contains(word))
            .unwrap_or_else(|| panic!("no note on {word}"))
    };
    // transformers 5.24 TrainingArguments has no such field: the explanation's call raises.
    let n = about("save_safetensors");
    for lang in [Lang::Ja, Lang::En] {
        let t = n.text.get(lang);
        assert!(
            t.contains("TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'save_safetensors'"),
            "{lang:?}: {t}"
        );
    }
    assert!(n.source.contains("training_args.py"), "{}", n.source);
    let n = about("overwrite_output_dir");
    for lang in [Lang::Ja, Lang::En] {
        assert!(n.text.get(lang).contains("--resume_from_checkpoint"));
    }
    assert!(n.source.contains("run_clm.py"), "{}", n.source);
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
fn a_ratio_save_steps_without_max_steps_fails_save_every_n_steps() {
    // A ratio of a total the manifest does not show (epochs × the dataset's steps).
    let no_max = |steps: &'static str| {
        args(&[
            "--num_train_epochs",
            "3",
            "--output_dir",
            "/checkpoints/run",
            "--save_steps",
            steps,
            "--save_total_limit",
            "3",
        ])
    };
    let r = grade(&no_max("0.25"));
    let o = assert_only_fails(&r, "save-every-n-steps", Some("ratio"));
    assert_eq!(
        o.found.as_deref(),
        Some("--save_strategy — (default steps), --save_steps 0.25")
    );
    for lang in [Lang::Ja, Lang::En] {
        let h = hint(&r, "save-every-n-steps", lang);
        assert!(
            h.contains("--save_steps 0.25") && h.contains("--max_steps"),
            "{h}"
        );
    }
    // The same ratio with --max_steps is every ceil(200 × 0.25) = 50 steps; an integer needs
    // no --max_steps.
    assert_all_pass(&grade(&set("--save_steps", Some("0.25"))));
    assert_all_pass(&grade(&no_max("100")));
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
    let r = grade(&plain(vec!["/etc/train/args.json".into()]));
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
    let r = grade(&set("--save_total_limit", Some("3")));
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["resume", "s3-sync"]);
    let with = |extra: &[&str]| {
        let words = FLAGS.iter().chain(extra).map(|w| w.to_string()).collect();
        grade(&plain(words))
    };
    let r = with(&[
        "--resume_from_checkpoint",
        "/checkpoints/ckpt-llm/checkpoint-150",
    ]);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["s3-sync"]);
    assert_eq!(r.advice[0].evidence["output_dir"], "/checkpoints/ckpt-llm");
}

#[test]
fn the_solutions_resume_from_the_newest_checkpoint_only_when_there_is_one() {
    // Read by the kit: the branch that sets the flag counts, its value is the script's.
    for s in [files("solution"), eks_solution()] {
        let r = grade(&s);
        assert!(!advice_ids(&r).contains(&"resume"), "{:?}", r.advice);
        let a = job_training_args(&s.objects);
        let resume = a.value(&["resume_from_checkpoint"]).unwrap();
        assert_eq!(resume, "${LAST%/trainer_state.json}");
    }
    // Run by bash: no checkpoint, no flag (run_clm.py stops on a path without one); then the
    // newest checkpoint whose trainer_state.json, the Trainer's last file, was written.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ckpt-llm");
    let resumed = || {
        let s = solution_script().replace("/checkpoints/ckpt-llm", out.to_str().unwrap());
        // `exec python3 …`: print the arguments instead of running the stand-in.
        let s = s.replace(
            "exec python3 /opt/trainlab/bin/trainer.py",
            "printf '%s\\n'",
        );
        let o = std::process::Command::new("bash")
            .args(["-c", &s])
            .output()
            .expect("bash runs the solution's script");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let words: Vec<String> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let i = words.iter().position(|w| w == "--resume_from_checkpoint")?;
        Some(words[i + 1].clone())
    };
    assert_eq!(resumed(), None);
    for (step, complete) in [(50, true), (100, true), (150, false)] {
        let c = out.join(format!("checkpoint-{step}"));
        std::fs::create_dir_all(&c).unwrap();
        if complete {
            std::fs::write(c.join("trainer_state.json"), "{}").unwrap();
        }
    }
    let expected = out.join("checkpoint-100");
    assert_eq!(resumed().as_deref(), expected.to_str());
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

#[test]
fn a_run_clm_line_without_a_dataset_is_advised_not_failed() {
    support::run_clm::assert_a_line_run_clm_refuses_is_advised_not_failed(
        LAB,
        "Job",
        State::solution_of(LAB, "eks"),
    );
}

// ---------------------------------------------------------------------------------------------
// The same lab as a TrainJob (Kubeflow Trainer v2) over `torch-distributed`.

fn trainjob() -> State {
    State::load("checkpoint-strategy/trainjob-state").and("kind-nodes")
}

#[test]
fn a_completed_trainjob_checkpointing_to_a_bound_claim_passes_every_check() {
    let r = trainjob().grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_suspended_trainjob_without_pods_shows_its_jobs_status_beside_the_hint() {
    // Suspending a TrainJob suspends its JobSet: the Jobs' pods go, jobsStatus counts them.
    let r = trainjob()
        .remove(|o| o.kind() == "Pod")
        .edit("TrainJob", "ckpt-llm", |v| {
            v["spec"]["suspend"] = json!(true);
            v["status"]["conditions"] = json!([]);
            v["status"]["jobsStatus"] = json!([{"name": "node", "active": 0, "ready": 0,
                "succeeded": 0, "failed": 0, "suspended": 1}]);
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("suspended"));
    assert_eq!(o.found.as_deref(), Some("spec.suspend: true"));

    let r = trainjob()
        .remove(|o| o.kind() == "Pod")
        .edit("TrainJob", "ckpt-llm", |v| {
            v["status"]["conditions"] = json!([]);
            v["status"]["jobsStatus"] = json!([{"name": "node", "active": 1, "ready": 0,
                "succeeded": 0, "failed": 0, "suspended": 0}]);
        })
        .grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(
        o.found.as_deref(),
        Some("status.jobsStatus: node: 1 active, 0 ready, 0 succeeded, 0 failed")
    );
    assert_eq!(
        o.evidence["jobs"],
        "node: 1 active, 0 ready, 0 succeeded, 0 failed"
    );
}

#[test]
fn a_trainjob_writing_checkpoints_to_an_empty_dir_fails_durable_output() {
    let r = trainjob()
        .edit("TrainJob", "ckpt-llm", |v| {
            let spec = &mut v["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]
                ["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
            for vol in spec["volumes"].as_array_mut().unwrap() {
                if vol.get("persistentVolumeClaim").is_some() {
                    vol.as_object_mut().unwrap().remove("persistentVolumeClaim");
                    vol["emptyDir"] = json!({});
                }
            }
        })
        .grade(LAB);
    assert_eq!(status(&r, "durable-output"), Status::Fail, "{r:?}");
}

#[test]
fn a_trainjob_over_a_missing_runtime_fails_the_first_check_naming_the_runtimes() {
    let r = trainjob()
        .edit("TrainJob", "ckpt-llm", |v| {
            v["spec"]["runtimeRef"]["name"] = json!("torch")
        })
        .grade(LAB);
    let o = outcome(&r, "save-every-n-steps");
    assert_eq!(o.hint.as_deref(), Some("runtime-missing"));
    assert_eq!(o.evidence["runtimes"], "torch-distributed");
}
