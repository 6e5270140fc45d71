//! Lab 13 `mpijob-slots`: the MPIJob's slots, GPUs and `mpirun -np` agree, and the MPI Operator
//! runs it on distinct nodes.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::observe::{manifest_files, parse_file, Observed, SourceKind};
use trainlab::verify::{grade_lab, LabResult, Outcome, Reason, Status, Target};

const LAB: &str = "mpijob-slots";
const SPEC_CHECKS: [&str; 5] = [
    "api-v2beta1",
    "slots-match-gpus",
    "np-matches",
    "one-launcher",
    "bind-map",
];
const STATE_CHECKS: [&str; 2] = ["workers-spread", "mpijob-running"];

fn solved() -> State {
    State::load("mpijob-slots/solution-state").and("kind-nodes")
}

/// The demo's part for this lab: the learner's MPIJob accepted, the cluster still converging.
fn converging() -> State {
    State::load("kind-nodes").add(include_str!("../manifests/demo/13-mpijob-slots.yaml"))
}

fn spec(v: &mut Value) -> &mut Value {
    &mut v["spec"]
}

fn launcher_container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
}

fn worker_container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
}

/// Replaces the launcher's command and args.
fn launcher_runs(command: Value, args: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let c = launcher_container(v);
        c["command"] = command;
        c["args"] = args;
    }
}

fn outcome<'a>(r: &'a LabResult, check: &str) -> &'a Outcome {
    r.outcomes
        .iter()
        .find(|o| o.check == check)
        .expect("outcome present")
}

fn message_id(o: &Outcome) -> &str {
    match &o.reason {
        Some(Reason::Message(id)) => id,
        other => panic!("{}: expected a lab message, found {other:?}", o.check),
    }
}

/// Grades files the way `check --files` does (static mode).
fn grade_files(dir: &str) -> LabResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let objects = manifest_files(&path)
        .expect("files")
        .iter()
        .flat_map(|f| parse_file(f).expect("valid yaml"))
        .collect();
    let obs = Observed::offline(SourceKind::Files, dir, objects);
    let catalog = Catalog::embedded().expect("embedded labs load");
    let bundle = catalog.get(LAB).expect("lab exists");
    grade_lab(bundle, &obs, &Target::for_lab(LAB), &BTreeMap::new(), None)
        .expect("grading succeeds")
}

// ---------------------------------------------------------------------------------------------
// The reference answer.

#[test]
fn the_solved_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert!(
        r.advice.is_empty(),
        "no advice for the reference answer: {:?}",
        r.advice
    );
    let spread = outcome(&r, "workers-spread");
    assert_eq!(
        spread.found.as_deref(),
        Some(
            "nccl-allreduce-worker-0 → trainlab-worker, nccl-allreduce-worker-1 → trainlab-worker2"
        )
    );
}

#[test]
fn the_solution_manifests_pass_static_mode_and_state_checks_are_skipped() {
    let r = grade_files("labs/13-mpijob-slots/solution");
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

#[test]
fn the_draft_fails_the_spec_checks_it_leaves_as_todo() {
    let r = grade_files("labs/13-mpijob-slots/draft");
    assert_eq!(outcome(&r, "api-v2beta1").hint.as_deref(), Some("v1"));
    assert_eq!(
        outcome(&r, "slots-match-gpus").hint.as_deref(),
        Some("unset")
    );
    assert_eq!(outcome(&r, "np-matches").hint.as_deref(), Some("no-np"));
    assert_eq!(status(&r, "bind-map"), Status::Fail);
    assert_eq!(status(&r, "one-launcher"), Status::Pass);
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

// ---------------------------------------------------------------------------------------------
// api-v2beta1

#[test]
fn the_quizs_kubeflow_v1_fails_only_the_api_check_and_its_fields_are_still_judged() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["apiVersion"] = json!("kubeflow.org/v1")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "api-v2beta1", Some("v1"));
    assert_eq!(
        o.expected.as_deref(),
        Some("apiVersion: kubeflow.org/v2beta1")
    );
    assert_eq!(o.found.as_deref(), Some("apiVersion: kubeflow.org/v1"));
}

#[test]
fn a_v1_manifest_with_a_wrong_np_fails_both_checks() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["apiVersion"] = json!("kubeflow.org/v1");
            launcher_container(v)["args"][1] = json!("32");
        })
        .into_files()
        .grade(LAB);
    assert_eq!(status(&r, "api-v2beta1"), Status::Fail);
    assert_eq!(outcome(&r, "np-matches").found.as_deref(), Some("-np 32"));
    assert_eq!(status(&r, "slots-match-gpus"), Status::Pass);
}

#[test]
fn another_api_version_uses_the_default_api_hint() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["apiVersion"] = json!("kubeflow.org/v1alpha2")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "api-v2beta1", None);
    assert_eq!(o.evidence["found_api"], "kubeflow.org/v1alpha2");
}

// ---------------------------------------------------------------------------------------------
// slots-match-gpus

#[test]
fn workers_with_fewer_gpus_than_slots_fail_the_slots_check() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            worker_container(v)["resources"]["limits"]["nvidia.com/gpu"] = json!("4")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "slots-match-gpus", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("slotsPerWorker 4 (= the Worker's nvidia.com/gpu limit)")
    );
    assert_eq!(
        o.found.as_deref(),
        Some("slotsPerWorker 8, nvidia.com/gpu 4")
    );
    assert!(r
        .advice
        .iter()
        .any(|a| a.id == "partial-node" && a.evidence["node_gpus"] == "8"));
}

#[test]
fn an_unset_slots_per_worker_is_the_default_one() {
    // -np 2 = 1 × 2 workers, so only the slots check fails.
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            spec(v).as_object_mut().unwrap().remove("slotsPerWorker");
            launcher_container(v)["args"][1] = json!("2");
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "slots-match-gpus", Some("unset"));
    assert_eq!(
        o.found.as_deref(),
        Some("slotsPerWorker unset (defaults to 1), nvidia.com/gpu 8")
    );
}

#[test]
fn workers_without_gpus_fail_the_slots_check_with_the_no_gpu_hint() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            worker_container(v)["resources"]["limits"]
                .as_object_mut()
                .unwrap()
                .remove("nvidia.com/gpu");
        })
        .grade(LAB);
    assert_only_fails(&r, "slots-match-gpus", Some("no-gpu"));
}

#[test]
fn a_lowercase_worker_key_is_reported_as_case_sensitive() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            let specs = v["spec"]["mpiReplicaSpecs"].as_object_mut().unwrap();
            let w = specs.remove("Worker").unwrap();
            specs.insert("worker".into(), w);
        })
        .into_files()
        .grade(LAB);
    let o = outcome(&r, "slots-match-gpus");
    assert_eq!(o.hint.as_deref(), Some("no-worker"));
    assert_eq!(
        o.found.as_deref(),
        Some("mpiReplicaSpecs.worker (keys are case-sensitive: Worker)")
    );
    assert_eq!(
        outcome(&r, "np-matches").hint.as_deref(),
        Some("no-workers")
    );
}

// ---------------------------------------------------------------------------------------------
// np-matches

#[test]
fn a_wrong_np_fails_with_expected_and_found() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            launcher_container(v)["args"][1] = json!("32")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "np-matches", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("-np 16 (slotsPerWorker 8 × 2 workers)")
    );
    assert_eq!(o.found.as_deref(), Some("-np 32"));
}

#[test]
fn every_spelling_of_np_in_command_or_args_is_read() {
    let tail = ["-bind-to", "none", "-map-by", "slot", "/home/mpiuser/pi"];
    let forms: Vec<(Value, Value)> = vec![
        (json!(["mpirun"]), json!(["-n", "16"])),
        (json!(["mpirun"]), json!(["--np", "16"])),
        (json!(["mpirun"]), json!(["-np=16"])),
        (json!(["mpirun"]), json!(["--n=16"])),
        (
            json!(["mpirun", "--allow-run-as-root", "-np", "16"]),
            json!([]),
        ),
        (
            json!([]),
            json!(["mpirun", "-x", "NCCL_DEBUG=INFO", "-np", "16"]),
        ),
    ];
    for (command, args) in forms {
        let mut args = args.as_array().unwrap().clone();
        args.extend(tail.iter().map(|w| json!(w)));
        let shown = format!("{command} {args:?}");
        let r = solved()
            .edit(
                "MPIJob",
                "nccl-allreduce",
                launcher_runs(command, Value::Array(args)),
            )
            .grade(LAB);
        assert_eq!(status(&r, "np-matches"), Status::Pass, "{shown}");
        assert_eq!(status(&r, "bind-map"), Status::Pass, "{shown}");
    }
}

#[test]
fn a_shell_wrapped_mpirun_is_read() {
    let pass = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(
                json!([
                    "/bin/sh",
                    "-c",
                    "echo starting; mpirun -np 16 -bind-to none -map-by slot /home/mpiuser/pi"
                ]),
                json!(null),
            ),
        )
        .grade(LAB);
    assert_all_pass(&pass);
    let fail = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(
                json!(["bash", "-c"]),
                json!(["mpirun --np=32 --bind-to=none --map-by=slot ./pi -n 16"]),
            ),
        )
        .grade(LAB);
    let o = assert_only_fails(&fail, "np-matches", None);
    assert_eq!(
        o.found.as_deref(),
        Some("-np 32"),
        "the program's own -n 16 is not mpirun's"
    );
}

#[test]
fn an_np_from_a_variable_cannot_be_verified_unless_env_gives_its_value() {
    let with_np = |value: Option<&'static str>, np: &'static str| {
        move |v: &mut Value| {
            let c = launcher_container(v);
            c["args"][1] = json!(np);
            if let Some(value) = value {
                c["env"] = json!([{"name": "NP", "value": value}]);
            }
        }
    };
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", with_np(None, "$(NP)"))
        .grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("not-literal"));
    assert_eq!(o.evidence["np_raw"], "$(NP)");

    let r = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(
                json!(["sh", "-c", "mpirun -np $NP -bind-to none -map-by slot ./pi"]),
                json!(null),
            ),
        )
        .grade(LAB);
    assert_only_fails(&r, "np-matches", Some("not-literal"));

    // Kubernetes expands $(NP) from a literal env value before the container starts.
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", with_np(Some("16"), "$(NP)"))
        .grade(LAB);
    assert_all_pass(&r);
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", with_np(Some("32"), "$(NP)"))
        .grade(LAB);
    assert_eq!(
        assert_only_fails(&r, "np-matches", None).found.as_deref(),
        Some("-np 32")
    );
}

#[test]
fn mpirun_without_np_fails_with_the_no_np_hint() {
    let r = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(
                json!(["mpirun"]),
                json!(["-bind-to", "none", "-map-by", "slot", "/home/mpiuser/pi"]),
            ),
        )
        .grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("no-np"));
    assert_eq!(o.found.as_deref(), Some("mpirun without -np"));
}

#[test]
fn a_launcher_that_runs_no_mpirun_fails_np_and_bind_map() {
    let r = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(json!(["python"]), json!(["train.py"])),
        )
        .grade(LAB);
    for c in ["np-matches", "bind-map"] {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Fail, "{c}");
        assert_eq!(o.hint.as_deref(), Some("no-mpirun"), "{c}");
        assert_eq!(
            o.found.as_deref(),
            Some("no mpirun in the Launcher command: python train.py")
        );
    }
    for c in [
        "api-v2beta1",
        "slots-match-gpus",
        "one-launcher",
        "workers-spread",
        "mpijob-running",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
}

#[test]
fn run_launcher_as_worker_adds_the_launchers_slots() {
    let as_worker = |np: &'static str| {
        move |v: &mut Value| {
            v["spec"]["runLauncherAsWorker"] = json!(true);
            launcher_container(v)["args"][1] = json!(np);
        }
    };
    assert_all_pass(
        &solved()
            .edit("MPIJob", "nccl-allreduce", as_worker("24"))
            .grade(LAB),
    );
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", as_worker("16"))
        .grade(LAB);
    let o = assert_only_fails(&r, "np-matches", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("-np 24 (slotsPerWorker 8 × (2 workers + the launcher))")
    );
}

// ---------------------------------------------------------------------------------------------
// one-launcher

#[test]
fn two_launchers_fail_the_launcher_check() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = json!(2)
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "one-launcher", None);
    assert_eq!(o.found.as_deref(), Some("Launcher.replicas 2"));
}

#[test]
fn an_unset_launcher_replicas_defaults_to_one() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["spec"]["mpiReplicaSpecs"]["Launcher"]
                .as_object_mut()
                .unwrap()
                .remove("replicas");
        })
        .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_missing_launcher_fails_with_the_no_launcher_hint() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["spec"]["mpiReplicaSpecs"]
                .as_object_mut()
                .unwrap()
                .remove("Launcher");
        })
        .grade(LAB);
    let o = outcome(&r, "one-launcher");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("no-launcher"));
    assert_eq!(o.found.as_deref(), Some("no mpiReplicaSpecs.Launcher"));
    assert_eq!(outcome(&r, "np-matches").hint.as_deref(), Some("no-mpirun"));
}

// ---------------------------------------------------------------------------------------------
// bind-map

#[test]
fn mpirun_without_bind_to_none_fails_bind_map() {
    let r = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(
                json!(["mpirun"]),
                json!([
                    "-np",
                    "16",
                    "-bind-to",
                    "core",
                    "-map-by",
                    "slot",
                    "/home/mpiuser/pi"
                ]),
            ),
        )
        .grade(LAB);
    let o = assert_only_fails(&r, "bind-map", None);
    assert_eq!(o.expected.as_deref(), Some("-bind-to none -map-by slot"));
    assert_eq!(o.found.as_deref(), Some("-bind-to core, -map-by slot"));

    let r = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(json!(["mpirun"]), json!(["-np", "16", "/home/mpiuser/pi"])),
        )
        .grade(LAB);
    assert_eq!(
        assert_only_fails(&r, "bind-map", None).found.as_deref(),
        Some("no -bind-to, no -map-by")
    );
}

#[test]
fn bind_map_accepts_long_options_and_map_by_modifiers() {
    let r = solved()
        .edit(
            "MPIJob",
            "nccl-allreduce",
            launcher_runs(
                json!([
                    "mpirun",
                    "--np",
                    "16",
                    "--bind-to=none",
                    "--map-by",
                    "slot:PE=1",
                    "/home/mpiuser/pi"
                ]),
                json!(null),
            ),
        )
        .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// workers-spread

#[test]
fn two_workers_on_one_node_fail_the_spread_check() {
    let r = solved()
        .edit("Pod", "nccl-allreduce-worker-1", |v| {
            v["spec"]["nodeName"] = json!("trainlab-worker")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "workers-spread", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("2 worker pods on 2 different nodes")
    );
    assert_eq!(
        o.found.as_deref(),
        Some("2 worker pods on 1 nodes: nccl-allreduce-worker-0 and nccl-allreduce-worker-1 share trainlab-worker")
    );
}

#[test]
fn a_forged_worker_pod_without_owner_references_is_ignored() {
    // Same name pattern and labels as the operator's pods, on worker-0's node, but not owned.
    let forged = r#"
apiVersion: v1
kind: Pod
metadata:
  name: nccl-allreduce-worker-2
  namespace: trainlab-mpijob-slots
  uid: 00000000-dead-4bee-8f00-000000000002
  labels:
    training.kubeflow.org/job-name: nccl-allreduce
    training.kubeflow.org/job-role: worker
    training.kubeflow.org/operator-name: mpi-operator
spec:
  nodeName: trainlab-worker
  containers:
  - name: worker
    image: busybox
status:
  phase: Running
"#;
    assert_all_pass(&solved().add(forged).grade(LAB));
}

#[test]
fn a_worker_replaced_by_a_forged_pod_leaves_the_spread_pending() {
    let r = solved()
        .edit("Pod", "nccl-allreduce-worker-1", |v| {
            v["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("ownerReferences");
        })
        .grade(LAB);
    let o = outcome(&r, "workers-spread");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message_id(o), "workers-missing");
    assert_eq!(o.evidence["found"], "1");
    assert_eq!(o.evidence["expected"], "2");
}

#[test]
fn worker_pods_cleaned_up_after_success_cannot_be_judged() {
    let r = solved()
        .remove(|o| o.kind() == "Pod" && o.name().starts_with("nccl-allreduce-worker-"))
        .grade(LAB);
    let o = outcome(&r, "workers-spread");
    assert_eq!(o.status, Status::Skipped);
    assert_eq!(message_id(o), "workers-cleaned");
    assert_eq!(status(&r, "mpijob-running"), Status::Pass);
}

#[test]
fn a_worker_the_scheduler_has_not_seen_yet_is_pending() {
    let r = solved()
        .edit("Pod", "nccl-allreduce-worker-1", |v| {
            v["spec"].as_object_mut().unwrap().remove("nodeName");
            v["status"] = json!({"phase": "Pending"});
        })
        .grade(LAB);
    let o = outcome(&r, "workers-spread");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message_id(o), "worker-unscheduled");
    assert_eq!(o.evidence["pod"], "nccl-allreduce-worker-1");
}

// ---------------------------------------------------------------------------------------------
// mpijob-running

#[test]
fn a_failed_mpijob_fails_and_quotes_the_condition_message() {
    let message = "Job has reached the specified backoff limit: mpirun noticed that process rank 3 exited on signal 9 (Killed).";
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["status"]["conditions"] = json!([
                {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
                {"type": "Running", "status": "False", "reason": "MPIJobRunning"},
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded/Error", "message": message},
            ]);
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "mpijob-running", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("condition Running or Succeeded = True")
    );
    assert_eq!(
        o.found.as_deref(),
        Some(format!("Failed (BackoffLimitExceeded/Error): {message}").as_str())
    );
}

#[test]
fn a_suspended_mpijob_fails_with_the_suspended_hint() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["spec"]["runPolicy"]["suspend"] = json!(true);
            v["status"]["conditions"] = json!([
                {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
                {"type": "Suspended", "status": "True", "reason": "MPIJobSuspended"},
            ]);
        })
        .grade(LAB);
    assert_only_fails(&r, "mpijob-running", Some("suspended"));
}

#[test]
fn an_mpijob_that_is_only_created_is_pending_and_says_what_it_waits_for() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["status"]["conditions"] =
                json!([{"type": "Created", "status": "True", "reason": "MPIJobCreated"}]);
        })
        .edit("Pod", "nccl-allreduce-launcher-7xk2p", |v| {
            v["status"]["phase"] = json!("Pending")
        })
        .grade(LAB);
    let o = outcome(&r, "mpijob-running");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message_id(o), "waiting-launcher");
    assert_eq!(o.evidence["conditions"], "Created");
    assert_eq!(o.evidence["running"], "2");
    assert_eq!(o.evidence["launcher_job"], "nccl-allreduce-launcher");
    assert_eq!(o.evidence["launcher_pods"], "Pending");
}

#[test]
fn a_running_mpijob_passes() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["status"]["conditions"] = json!([
                {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
                {"type": "Running", "status": "True", "reason": "MPIJobRunning"},
            ]);
        })
        .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// A converging cluster, a missing MPIJob, bad input.

#[test]
fn the_converging_demo_passes_the_spec_and_is_pending_on_the_state() {
    let r = converging().grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    let spread = outcome(&r, "workers-spread");
    assert_eq!(spread.status, Status::Pending);
    assert_eq!(message_id(spread), "worker-unschedulable");
    assert!(spread.evidence["scheduler"].contains("Insufficient nvidia.com/gpu"));
    let running = outcome(&r, "mpijob-running");
    assert_eq!(running.status, Status::Pending);
    assert_eq!(message_id(running), "waiting-no-launcher");
    assert_eq!(running.evidence["running"], "0");
}

#[test]
fn no_mpijob_fails_every_check_with_what_to_create() {
    let r = solved().remove(|o| o.kind() == "MPIJob").grade(LAB);
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Fail, "{}", o.check);
        assert_eq!(o.hint.as_deref(), Some("missing"), "{}", o.check);
        assert_eq!(
            o.found.as_deref(),
            Some("no MPIJob in namespace trainlab-mpijob-slots")
        );
    }
}

#[test]
fn an_mpijob_with_another_name_is_named_in_the_failure() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["metadata"]["name"] = json!("allreduce")
        })
        .grade(LAB);
    let o = outcome(&r, "np-matches");
    assert_eq!(o.hint.as_deref(), Some("missing"));
    assert_eq!(o.found.as_deref(), Some("only MPIJob allreduce"));
}

#[test]
fn a_wrong_type_in_the_mpijob_is_bad_input_naming_the_field() {
    let err = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["spec"]["slotsPerWorker"] = json!("eight")
        })
        .try_grade(LAB)
        .expect_err("bad input");
    assert!(err.to_string().contains("spec.slotsPerWorker"), "{err}");

    let err = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            v["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!("two")
        })
        .try_grade(LAB)
        .expect_err("bad input");
    assert!(
        err.to_string()
            .contains("spec.mpiReplicaSpecs.Worker.replicas"),
        "{err}"
    );
}

#[test]
fn a_launcher_that_requests_gpus_gets_advice() {
    let r = solved()
        .edit("MPIJob", "nccl-allreduce", |v| {
            launcher_container(v)["resources"]["limits"]["nvidia.com/gpu"] = json!(1)
        })
        .grade(LAB);
    assert_all_pass(&r);
    assert!(r
        .advice
        .iter()
        .any(|a| a.id == "launcher-gpu" && a.evidence["gpus"] == "1"));
}
