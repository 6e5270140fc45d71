//! Lab 11 `gradient-checkpointing`: a Job OOM-killed at batch 16 under its memory limit, fixed by
//! turning activation checkpointing on with the same batch size and limit.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::observe::{manifest_files, parse_file, Obj};
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::kit::cmdline::Args;
use trainlab::verify::kit::k8s::workload::Workload;
use trainlab::verify::kit::training::job::{main_container, training_command};
use trainlab::verify::{LabResult, Outcome, Reason, Status};

const LAB: &str = "gradient-checkpointing";
const POD: &str = "ckpt-train-x7k2p";

fn solved() -> State {
    State::load("gradient-checkpointing/solution-state").and("kind-nodes")
}

fn grade_with(s: &State, params: &[(&str, &str)]) -> LabResult {
    params
        .iter()
        .fold(s.clone(), |s, (k, v)| s.param(k, v))
        .grade(LAB)
}

fn grade(s: &State) -> LabResult {
    grade_with(s, &[])
}

/// The objects of folders of the lab itself, as the learner's files.
fn lab_files(folders: &[&str]) -> State {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/11-gradient-checkpointing");
    let mut s = State::load("gradient-checkpointing/solution-state").into_files();
    s.objects = folders
        .iter()
        .flat_map(|f| manifest_files(&dir.join(f)).unwrap())
        .flat_map(|f| parse_file(&f).unwrap())
        .collect();
    s
}

/// The EKS profile's answer as the learner's files: `solution/` with each file of
/// `solution-eks/` in place of the same-named one, graded with the lab's EKS parameters.
fn eks_solution() -> State {
    State::solution_of(LAB, "eks")
}

/// The training command's arguments of Job `ckpt-train` among these objects.
fn job_training_args(objects: &[Obj]) -> Args {
    let obj = objects
        .iter()
        .find(|o| o.kind() == "Job" && o.name() == "ckpt-train")
        .expect("the Job");
    let job = Workload::from_obj(obj).unwrap().unwrap();
    let (c, _) = main_container(&job.templates[0]).unwrap();
    training_command(c).expect("a training command").args
}

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

/// Like `assert_only_fails`, with the other checks passing or still pending (a Job that retries
/// after an OOM kill has not failed yet).
fn assert_only_fails_while_pending(r: &LabResult, check: &str, hint: Option<&str>) -> Outcome {
    let mut settled = r.clone();
    settled.outcomes.retain(|o| o.status != Status::Pending);
    assert_only_fails(&settled, check, hint)
}

fn container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

/// The Job with these training arguments.
fn job_args(words: &[&str]) -> State {
    let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    solved().edit("Job", "ckpt-train", move |v| {
        container(v)["args"] = json!(words)
    })
}

/// The draft's run_clm.py arguments (without checkpointing).
const HF: &[&str] = &[
    "--model_type",
    "gpt2",
    "--config_overrides",
    "n_layer=24",
    "--tokenizer_name",
    "openai-community/gpt2",
    "--dataset_name",
    "Salesforce/wikitext",
    "--dataset_config_name",
    "wikitext-2-raw-v1",
    "--do_train",
    "--output_dir",
    "/tmp/ckpt-train",
    "--per_device_train_batch_size",
    "16",
    "--max_steps",
    "20",
];

fn hf(extra: &[&str]) -> State {
    let words: Vec<&str> = HF.iter().chain(extra).copied().collect();
    job_args(&words)
}

/// The Job's pod, OOM-killed (restartPolicy Never: the pod failed).
fn oom_killed(p: &mut Value) {
    p["status"]["phase"] = json!("Failed");
    p["status"]["containerStatuses"][0]["state"] = json!({"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-12-02T12:00:07Z", "finishedAt": "2026-12-02T12:00:09Z"}});
}

/// The Job still running: no Complete condition, one active pod.
fn job_active(v: &mut Value) {
    v["status"] = json!({"active": 1, "failed": 1, "startTime": "2026-12-02T12:00:00Z"});
}

// ---------------------------------------------------------------------------------------------
// The solution and the variants that are right.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = grade(&solved());
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "checkpointing-on").found.as_deref(),
        Some("--gradient_checkpointing")
    );
    assert_eq!(
        outcome(&r, "memory-unchanged").found.as_deref(),
        Some("spec.template.spec.containers[0].resources.limits.memory: 512Mi")
    );
}

#[test]
fn every_way_to_turn_checkpointing_on_passes() {
    for extra in [
        &["--gradient_checkpointing", "true"][..],
        &["--gradient-checkpointing=True"],
        &["--activation_checkpointing"],
        &[
            "--activation_checkpointing",
            "false",
            "--gradient_checkpointing",
        ],
    ] {
        let r = grade(&hf(extra));
        assert_all_pass(&r);
    }
    for words in [
        &[
            "pretrain_gpt.py",
            "--num-layers",
            "24",
            "--micro-batch-size",
            "16",
            "--recompute-activations",
        ][..],
        &[
            "pretrain_gpt.py",
            "--num-layers",
            "24",
            "--micro-batch-size",
            "16",
            "--recompute-granularity",
            "full",
            "--recompute-method",
            "uniform",
            "--recompute-num-layers",
            "1",
        ],
        &[
            "megatron_gpt_pretraining.py",
            "model.micro_batch_size=16",
            "model.activations_checkpoint_granularity=full",
        ],
    ] {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let r = grade(&solved().edit("Job", "ckpt-train", move |v| {
            container(v)["command"] = json!(["torchrun", "--nproc-per-node", "1"]);
            container(v)["args"] = json!(words);
        }));
        assert_all_pass(&r);
    }
}

#[test]
fn a_lower_limit_passes() {
    let r = grade(&solved().edit("Job", "ckpt-train", |v| {
        container(v)["resources"]["limits"]["memory"] = json!("384Mi");
        container(v)["resources"]["requests"]["memory"] = json!("384Mi");
    }));
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn no_checkpointing_fails_checkpointing_on() {
    let r = grade(&hf(&[]));
    assert_only_fails(&r, "checkpointing-on", None);
    assert!(english_hint(&r, "checkpointing-on").contains("`trainer`"));
    let r = grade(&hf(&["--gradient_checkpointing", "false"]));
    let o = assert_only_fails(&r, "checkpointing-on", Some("off"));
    assert_eq!(o.found.as_deref(), Some("--gradient_checkpointing false"));
    let r = grade(&hf(&["--gradient_checkpointing", "$(CKPT)"]));
    assert_only_fails(&r, "checkpointing-on", Some("variable"));
}

#[test]
fn megatron_mistakes_fail_checkpointing_on_with_megatrons_message() {
    let r = grade(&job_args(&[
        "pretrain_gpt.py",
        "--micro-batch-size",
        "16",
        "--checkpoint-activations",
    ]));
    let o = assert_only_fails(&r, "checkpointing-on", Some("removed"));
    assert!(o.evidence["message"].starts_with("--checkpoint-activations is no longer valid"));
    let r = grade(&job_args(&[
        "pretrain_gpt.py",
        "--micro-batch-size",
        "16",
        "--recompute-activations",
        "--recompute-method",
        "uniform",
    ]));
    assert_only_fails(&r, "checkpointing-on", Some("selective-method"));
    let r = grade(&job_args(&[
        "pretrain_gpt.py",
        "--micro-batch-size",
        "16",
        "--recompute-granularity",
        "partial",
    ]));
    assert_only_fails(&r, "checkpointing-on", Some("bad-flag"));
}

#[test]
fn a_smaller_batch_fails_batch_kept() {
    let words: Vec<&str> = HF
        .iter()
        .map(|w| if *w == "16" { "8" } else { w })
        .chain(["--gradient_checkpointing"])
        .collect();
    let r = grade(&job_args(&words));
    let o = assert_only_fails(&r, "batch-kept", None);
    assert_eq!(o.found.as_deref(), Some("--per_device_train_batch_size 8"));
    let with_gas: Vec<&str> = words
        .iter()
        .copied()
        .chain(["--gradient_accumulation_steps", "2"])
        .collect();
    let r = grade(&job_args(&with_gas));
    let o = assert_only_fails(&r, "batch-kept", Some("accumulation"));
    assert_eq!(
        o.found.as_deref(),
        Some("--per_device_train_batch_size 8 × --gradient_accumulation_steps 2")
    );
    let r = grade(&job_args(&[
        "--output_dir",
        "/tmp/x",
        "--gradient_checkpointing",
    ]));
    assert_only_fails(&r, "batch-kept", Some("unset"));
}

#[test]
fn a_raised_or_removed_limit_fails_memory_unchanged() {
    let r = grade(&solved().edit("Job", "ckpt-train", |v| {
        container(v)["resources"]["limits"]["memory"] = json!("1Gi");
    }));
    let o = assert_only_fails(&r, "memory-unchanged", None);
    assert_eq!(
        o.found.as_deref(),
        Some("spec.template.spec.containers[0].resources.limits.memory: 1Gi")
    );
    let r = grade(&solved().edit("Job", "ckpt-train", |v| {
        container(v)["resources"]["limits"]
            .as_object_mut()
            .unwrap()
            .remove("memory");
    }));
    assert_only_fails(&r, "memory-unchanged", Some("unlimited"));
}

#[test]
fn an_oom_killed_pod_fails_not_oom_killed_while_the_job_retries() {
    let r = grade(
        &solved()
            .edit("Pod", POD, oom_killed)
            .edit("Job", "ckpt-train", job_active),
    );
    let o = assert_only_fails_while_pending(&r, "not-oom-killed", None);
    assert_eq!(
        o.found.as_deref(),
        Some("ckpt-train-x7k2p/trainer: OOMKilled (exit 137)")
    );
    assert_eq!(outcome(&r, "job-succeeded").status, Status::Pending);
}

#[test]
fn an_oom_kill_hidden_in_last_state_is_found() {
    let r = grade(
        &solved()
            .edit("Pod", POD, |p| {
                p["spec"]["restartPolicy"] = json!("OnFailure");
                p["status"]["phase"] = json!("Running");
                let cs = &mut p["status"]["containerStatuses"][0];
                cs["restartCount"] = json!(1);
                cs["state"] = json!({"running": {"startedAt": "2026-12-02T12:00:20Z"}});
                cs["lastState"] = json!({"terminated": {"exitCode": 137, "reason": "OOMKilled"}});
            })
            .edit("Job", "ckpt-train", job_active),
    );
    let o = assert_only_fails_while_pending(&r, "not-oom-killed", None);
    assert_eq!(o.evidence["where"], "lastState");
}

#[test]
fn a_cuda_oom_in_the_termination_message_fails_not_oom_killed() {
    let r = grade(
        &solved()
            .edit("Pod", POD, |p| {
                p["status"]["phase"] = json!("Failed");
                p["status"]["containerStatuses"][0]["state"] = json!({"terminated": {
                    "exitCode": 1, "reason": "Error",
                    "message": "Traceback (most recent call last):\n...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 22.06 GiB\n"}});
            })
            .edit("Job", "ckpt-train", job_active),
    );
    let o = assert_only_fails_while_pending(&r, "not-oom-killed", Some("cuda"));
    assert!(o.found.as_deref().unwrap().ends_with("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 22.06 GiB"));
}

#[test]
fn a_failed_job_and_a_refused_command_fail_job_succeeded() {
    let r = grade(&solved().edit("Job", "ckpt-train", |v| {
        v["status"] = json!({"failed": 2, "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded"},
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "Job was active longer than specified deadline"}]});
    }));
    let o = assert_only_fails(&r, "job-succeeded", Some("failed"));
    assert_eq!(o.found.as_deref(), Some("Failed=True (DeadlineExceeded)"));
    let r = grade(
        &solved()
            .edit("Pod", POD, |p| {
                p["status"]["phase"] = json!("Failed");
                p["status"]["containerStatuses"][0]["state"] = json!({"terminated": {
                    "exitCode": 2, "reason": "Error",
                    "message": "trainlab stand-in: error: argument --per_device_train_batch_size: invalid int value: 'sixteen'\n"}});
            })
            .edit("Job", "ckpt-train", job_active),
    );
    let o = assert_only_fails(&r, "job-succeeded", Some("crashed"));
    assert_eq!(
        o.found.as_deref(),
        Some("ckpt-train-x7k2p/trainer: Error (exit 2): trainlab stand-in: error: argument --per_device_train_batch_size: invalid int value: 'sixteen'")
    );
}

// ---------------------------------------------------------------------------------------------
// Pending, missing, rejected, static mode.

#[test]
fn a_running_pod_is_pending_not_failed() {
    let r = grade(
        &solved()
            .edit("Pod", POD, |p| {
                p["status"]["phase"] = json!("Running");
                p["status"]["containerStatuses"][0]["state"] =
                    json!({"running": {"startedAt": "2026-12-02T12:00:07Z"}});
            })
            .edit("Job", "ckpt-train", |v| v["status"] = json!({"active": 1})),
    );
    assert_eq!(outcome(&r, "not-oom-killed").status, Status::Pending);
    assert_eq!(outcome(&r, "job-succeeded").status, Status::Pending);
    assert!(
        matches!(&outcome(&r, "job-succeeded").reason, Some(Reason::Message(m)) if m == "running")
    );
    assert_eq!(r.count(Status::Fail), 0);
    let r = grade(
        &solved()
            .remove(|o| o.kind() == "Pod")
            .edit("Job", "ckpt-train", job_active),
    );
    assert_eq!(outcome(&r, "not-oom-killed").status, Status::Pending);
    assert_eq!(outcome(&r, "job-succeeded").status, Status::Pending);
}

#[test]
fn pods_of_an_earlier_job_do_not_count() {
    let r = grade(&solved().edit("Pod", POD, |p| {
        oom_killed(p);
        p["metadata"]["ownerReferences"][0]["uid"] = json!("an-earlier-ckpt-train");
    }));
    assert_all_pass(&r);
}

#[test]
fn a_missing_job_or_another_version_fails_every_check_once() {
    let r = grade(&solved().remove(|o| o.kind() == "Job"));
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.status == Status::Fail && o.hint.as_deref() == Some("missing")));
    let r = grade(&solved().edit("Job", "ckpt-train", |v| v["apiVersion"] = json!("batch/v2")));
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.hint.as_deref() == Some("missing")));
}

#[test]
fn what_the_api_server_refuses_fails_checkpointing_on() {
    let r = grade(&solved().edit("Job", "ckpt-train", |v| {
        v["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    }));
    let o = assert_only_fails(&r, "checkpointing-on", Some("rejected"));
    assert_eq!(
        o.found.as_deref(),
        Some("spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"")
    );
    let r = grade(&solved().edit("Job", "ckpt-train", |v| {
        container(v)["resources"]["requests"]["memory"] = json!("1Gi");
    }));
    let o = assert_only_fails(&r, "checkpointing-on", Some("rejected"));
    assert!(
        o.found
            .as_deref()
            .unwrap()
            .contains("must be less than or equal to memory limit"),
        "{o:?}"
    );
}

#[test]
fn the_eks_solution_passes_every_spec_check_with_the_eks_params() {
    let s = eks_solution();
    let r = s.grade(LAB);
    for o in &r.outcomes {
        let state = matches!(o.check.as_str(), "not-oom-killed" | "job-succeeded");
        let want = if state { Status::Skipped } else { Status::Pass };
        assert_eq!(o.status, want, "{o:?}");
    }
    assert_eq!(
        outcome(&r, "memory-unchanged").found.as_deref(),
        Some("spec.template.spec.containers[0].resources.limits.memory: 64Gi")
    );
    // A real image, run_clm.py fetched at the release tag of the pinned transformers.
    let job = s.objects.iter().find(|o| o.kind() == "Job").unwrap();
    let c = &job.value["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "nvcr.io/nvidia/pytorch:25.04-py3");
    let script = c["args"][0].as_str().unwrap();
    assert!(script.contains("pip install --no-cache-dir transformers==5.24.0"));
    assert!(script.contains("/transformers/v5.24.0/examples/pytorch/language-modeling/run_clm.py"));
    assert_eq!(c["terminationMessagePolicy"], "FallbackToLogsOnError");
}

#[test]
fn every_answer_and_the_draft_run_with_run_clms_own_arguments() {
    let kind = lab_files(&["solution"]);
    let draft = lab_files(&["draft"]);
    for (name, objects) in [
        ("solution", &kind.objects),
        ("draft", &draft.objects),
        ("solution-eks", &eks_solution().objects),
    ] {
        let a = job_training_args(objects);
        assert_eq!(
            support::run_clm::refusal(&a).as_deref(),
            None,
            "{name}: {:?}",
            a.words()
        );
        // The depth comes from the model config run_clm.py builds, not from a flag.
        let overrides = a.value(&["config_overrides"]).unwrap_or_default();
        assert!(overrides.contains("n_layer="), "{name}: {overrides}");
    }
    // The command line the lab had before: run_clm.py refuses it.
    let old = Args::new(["--output_dir", "/tmp/x", "--num_hidden_layers", "24"]);
    assert!(support::run_clm::refusal(&old)
        .unwrap()
        .starts_with("Some specified arguments are not used by the HfArgumentParser"));
    let pretrained_and_overrides = Args::new([
        "--model_name_or_path",
        "openai-community/gpt2",
        "--config_overrides",
        "n_layer=24",
        "--dataset_name",
        "Salesforce/wikitext",
        "--do_train",
    ]);
    assert!(support::run_clm::refusal(&pretrained_and_overrides)
        .unwrap()
        .starts_with("--config_overrides can't"));
}

#[test]
fn the_stand_in_holds_every_layers_input_with_checkpointing_and_only_the_draft_exceeds_512mi() {
    // The kind answer and the draft, run through the stand-in the pods run (python3 on PATH).
    let planned = |folder: &str| {
        let a = job_training_args(&lab_files(&[folder]).objects);
        let out = std::process::Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/trainer-standin/trainer.py"))
            .args(a.words())
            .env("TRAINLAB_STANDIN_SECONDS", "0")
            .env("TRAINLAB_STANDIN_ALLOCATE", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("WORLD_SIZE")
            .env_remove("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER")
            .env_remove("TRAINLAB_STANDIN_MAX_MB")
            .output()
            .expect("python3 runs the stand-in");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let field = |k: &str| {
            stdout
                .split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{k}=")).map(str::to_string))
                .unwrap_or_else(|| panic!("{folder}: no {k}= in {stdout}"))
        };
        let mib: f64 = field("activations")
            .trim_end_matches("MiB")
            .parse()
            .unwrap();
        (field("layers"), field("checkpointing"), mib)
    };
    let (layers, mode, none) = planned("draft");
    assert_eq!(
        (layers.as_str(), mode.as_str(), none),
        ("24", "none", 768.0)
    );
    assert!(none > 512.0, "the draft is OOM-killed at 512Mi");
    // Per-layer checkpointing: each of the 24 layers keeps its input (2/34 of its activations)
    // and one layer is recomputed at a time, so the memory is still linear in the layers.
    let (layers, mode, full) = planned("solution");
    assert_eq!((layers.as_str(), mode.as_str()), ("24", "full"));
    let expected = 16.0 * (24.0 * 2.0 / 34.0 + 1.0) * 2.0;
    assert!((full - expected).abs() < 0.05, "{full} vs {expected}");
    assert!(full < 512.0 / 4.0, "the solution fits with room to spare");
}

#[test]
fn static_mode_needs_the_limit_and_passes_the_solution() {
    let r = grade_with(
        &lab_files(&["solution", "starter"]),
        &[("memory_limit", "512Mi")],
    );
    for o in &r.outcomes {
        let state = matches!(o.check.as_str(), "not-oom-killed" | "job-succeeded");
        let want = if state { Status::Skipped } else { Status::Pass };
        assert_eq!(o.status, want, "{o:?}");
    }
    let r = grade(&lab_files(&["solution", "starter"]));
    assert_eq!(outcome(&r, "memory-unchanged").status, Status::Skipped);
    assert!(
        matches!(&outcome(&r, "memory-unchanged").reason, Some(Reason::NeedsParam(p)) if p == "memory_limit")
    );
    let r = grade_with(&lab_files(&["draft"]), &[("memory_limit", "512Mi")]);
    assert_eq!(outcome(&r, "checkpointing-on").status, Status::Fail);
    assert_eq!(outcome(&r, "batch-kept").status, Status::Pass);
    assert_eq!(outcome(&r, "memory-unchanged").status, Status::Pass);
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
    State::load("gradient-checkpointing/trainjob-state").and("kind-nodes")
}

fn trainer_args(s: State, f: impl FnOnce(&mut Vec<Value>)) -> State {
    s.edit("TrainJob", "ckpt-train", |v| {
        f(v["spec"]["trainer"]["args"].as_array_mut().unwrap())
    })
}

#[test]
fn a_completed_trainjob_with_checkpointing_passes_every_check() {
    let r = grade(&trainjob());
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "memory-unchanged").found.as_deref(),
        Some("spec.trainer.resourcesPerNode.limits.memory: 512Mi")
    );
}

#[test]
fn a_trainjob_from_files_passes_its_spec_checks() {
    let s = trainjob()
        .remove(|o| o.kind() != "TrainJob")
        .into_files()
        .param("memory_limit", "512Mi");
    let r = grade(&s);
    for c in ["checkpointing-on", "batch-kept", "memory-unchanged"] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
}

#[test]
fn a_trainjob_without_checkpointing_or_with_more_memory_fails_the_check_it_breaks() {
    let r = grade(&trainer_args(trainjob(), |a| {
        a.retain(|w| w != "--gradient_checkpointing")
    }));
    assert_eq!(status(&r, "checkpointing-on"), Status::Fail);
    let r = grade(&trainjob().edit("TrainJob", "ckpt-train", |v| {
        v["spec"]["trainer"]["resourcesPerNode"]["limits"]["memory"] = json!("2Gi")
    }));
    let o = assert_only_fails(&r, "memory-unchanged", None);
    assert_eq!(
        o.found.as_deref(),
        Some("spec.trainer.resourcesPerNode.limits.memory: 2Gi")
    );
}

#[test]
fn an_oom_killed_trainjob_pod_is_found_through_the_jobset_and_fails_not_oom_killed() {
    let r = grade(
        &trainjob()
            .edit_all("Pod", oom_killed)
            .edit("TrainJob", "ckpt-train", |v| {
                v["status"]["conditions"] = json!([{"type": "Failed", "status": "True",
                    "reason": "FailedJobs", "message": "jobset failed due to one or more job failures (first failed job: ckpt-train-node-0)"}]);
            }),
    );
    assert_eq!(status(&r, "not-oom-killed"), Status::Fail, "{r:?}");
    assert_eq!(status(&r, "job-succeeded"), Status::Fail);
}

#[test]
fn a_trainjob_over_a_missing_runtime_fails_checkpointing_on_naming_the_runtime() {
    let r = grade(&trainjob().edit("TrainJob", "ckpt-train", |v| {
        v["spec"]["runtimeRef"]["name"] = json!("torch-tuned")
    }));
    let o = outcome(&r, "checkpointing-on");
    assert_eq!(o.hint.as_deref(), Some("runtime-missing"));
    assert_eq!(o.evidence["runtimes"], "torch-distributed");
}

#[test]
fn the_demo_learner_kept_batch_and_limit_turned_checkpointing_on_and_completed() {
    // manifests/demo/11-gradient-checkpointing.yaml: a completed TrainJob over the demo's
    // torch-distributed, its one pod on the trn1 node (it asks for no GPU on kind).
    let r = grade(&State::demo());
    assert_all_pass(&r);
    for c in ["checkpointing-on", "not-oom-killed", "job-succeeded"] {
        assert_eq!(outcome(&r, c).evidence["kind"], "TrainJob", "{c}");
    }
    assert_eq!(
        outcome(&r, "memory-unchanged").found.as_deref(),
        Some("spec.trainer.resourcesPerNode.limits.memory: 512Mi")
    );
    assert_eq!(
        outcome(&r, "job-succeeded").found.as_deref(),
        Some("Complete=True")
    );
}

#[test]
fn an_oom_killed_trainjobs_hint_says_to_delete_the_trainjob_not_a_job() {
    // Issue 31 §6: the not-oom-killed hint said "delete the Job" for a TrainJob too.
    let r = grade(
        &trainjob()
            .edit_all("Pod", oom_killed)
            .edit("TrainJob", "ckpt-train", |v| {
                v["status"]["conditions"] = json!([{"type": "Failed", "status": "True",
                    "reason": "FailedJobs", "message": "jobset failed due to one or more job failures (first failed job: ckpt-train-node-0)"}]);
            }),
    );
    assert_eq!(status(&r, "not-oom-killed"), Status::Fail, "{r:?}");
    let en = english_hint(&r, "not-oom-killed");
    assert!(en.contains("delete the TrainJob"), "{en}");
    assert!(!en.contains("delete the Job"), "{en}");
    let ja = LabReport::new(&r, Lang::Ja)
        .outcomes
        .iter()
        .find(|o| o.check == "not-oom-killed")
        .and_then(|o| o.hint.clone())
        .unwrap_or_default();
    assert!(ja.contains("TrainJob を削除"), "{ja}");
}
