//! Lab 13 `mpijob-slots`: every host runs one MPI rank per GPU (`slotsPerWorker` = the worker's
//! GPUs, mpirun's count = slots × hosts), and the MPI Operator runs the job on distinct nodes.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::facts::Profile;
use trainlab::labs::grade_lab;
use trainlab::observe::{manifest_files, parse_file, parse_text, Obj, Observed, SourceKind};
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Status, Target};

const LAB: &str = "mpijob-slots";
const JOB: &str = "nccl-allreduce";
const SPEC_CHECKS: [&str; 5] = [
    "api-v2beta1",
    "slots-match-gpus",
    "np-matches",
    "one-launcher",
    "bind-map",
];
const STATE_CHECKS: [&str; 2] = ["workers-spread", "mpijob-running"];
const TAIL: [&str; 5] = ["-bind-to", "none", "-map-by", "slot", "/home/mpiuser/pi"];

fn solved() -> State {
    State::load("mpijob-slots/solution-state").and("kind-nodes")
}

/// The demo's part for this lab: the learner's MPIJob accepted, the cluster still converging.
fn converging() -> State {
    State::load("kind-nodes").add(include_str!("../../../manifests/demo/13-mpijob-slots.yaml"))
}

fn launcher_container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
}

fn worker_container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
}

/// The solved state with the MPIJob edited.
fn job(f: impl FnOnce(&mut Value)) -> State {
    solved().edit("MPIJob", JOB, f)
}

/// Replaces the launcher's command and args.
fn launcher_runs(command: Value, args: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let c = launcher_container(v);
        c["command"] = command;
        c["args"] = args;
    }
}

/// The launcher runs `mpirun <options> -bind-to none -map-by slot /home/mpiuser/pi`.
fn mpirun_with(options: &[&str]) -> impl FnOnce(&mut Value) {
    let mut args: Vec<Value> = options.iter().map(|w| json!(w)).collect();
    args.extend(TAIL.iter().map(|w| json!(w)));
    launcher_runs(json!(["mpirun"]), Value::Array(args))
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

/// The rendered hint of a check in one language.
fn hint_text(r: &LabResult, check: &str, lang: Lang) -> String {
    let rep = LabReport::new(r, lang);
    let o = rep.outcomes.iter().find(|o| o.check == check).unwrap();
    o.hint.clone().unwrap_or_default()
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

/// The EKS profile's answer as `trainlab solve --profile eks` applies it: `solution/` with
/// `solution-eks/` laid over it, read as the learner's files.
fn eks_files() -> State {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    let objects: Vec<Obj> = b
        .files_for("solution", "eks", &crate::support::state::test_site("eks"))
        .unwrap()
        .into_iter()
        .flat_map(|(rel, text)| parse_text(&text, rel).unwrap())
        .collect();
    let mut s = State::load("../../labs/13-mpijob-slots/solution").into_files();
    s.objects = objects;
    s
}

/// The kind answer read as the learner's files.
fn kind_files() -> State {
    State::load("../../labs/13-mpijob-slots/solution").into_files()
}

/// Grades with the EKS profile's parameters, as `check --files --profile eks` does.
fn grade_eks(s: &State) -> LabResult {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    grade_lab(
        b,
        &s.observed(),
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        Some(Profile::Eks),
    )
    .unwrap()
}

// ---------------------------------------------------------------------------------------------
// The reference answer and the draft.

#[test]
fn the_solved_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "no advice: {:?}", r.advice);
    let spread = outcome(&r, "workers-spread");
    assert_eq!(spread.expected.as_deref(), Some("nodes: 2"));
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
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn the_eks_solution_passes_every_spec_check_without_advice() {
    let s = eks_files();
    let r = grade_eks(&s);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // The real tool of a pinned image: Open MPI by its absolute path, the image's environment
    // passed to the ranks, every EFA interface and /dev/shm on the workers.
    let catalog = Catalog::embedded().unwrap();
    let params = catalog.get(LAB).unwrap().lab.params("eks");
    let image = params["image"].as_str();
    assert!(!image.ends_with(":latest"), "{image}");
    let mut v: Value = (*s.objects[0].value).clone();
    let l = launcher_container(&mut v).clone();
    assert_eq!(l["image"], image);
    assert_eq!(l["command"], json!(["/opt/amazon/openmpi/bin/mpirun"]));
    let args: Vec<&str> = l["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for pair in [["-x", "PATH"], ["-x", "LD_LIBRARY_PATH"]] {
        assert!(args.windows(2).any(|w| w == pair), "{args:?}");
    }
    let w = worker_container(&mut v).clone();
    assert_eq!(w["image"], image);
    assert!(w.get("command").is_none(), "the operator's sshd");
    assert_eq!(w["resources"]["limits"]["vpc.amazonaws.com/efa"], 32);
    assert_eq!(w["volumeMounts"][0]["mountPath"], "/dev/shm");
    assert_eq!(
        params["mpirun"],
        "/opt/amazon/openmpi/bin/mpirun --allow-run-as-root -x PATH -x LD_LIBRARY_PATH"
    );
}

#[test]
fn on_eks_an_mpirun_that_leaves_the_images_environment_behind_gets_advice() {
    // The kind answer on EKS: `mpirun` by its name, nothing passed with -x.
    let r = grade_eks(&kind_files());
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    assert_eq!(advice_ids(&r), ["ssh-env", "mpirun-prefix"]);
    assert_eq!(
        r.advice[0].evidence["missing"],
        "-x PATH -x LD_LIBRARY_PATH"
    );
    let a = &r.advice[1];
    assert_eq!(a.evidence["launcher"], "mpirun");
    assert_eq!(a.evidence["path"], "/opt/amazon/openmpi/bin/mpirun");
    assert_eq!(a.evidence["prefix"], "/opt/amazon/openmpi");
    let on_eks = |options: &[&str]| {
        let s = kind_files().edit("MPIJob", JOB, mpirun_with(options));
        grade_eks(&s)
    };
    // Half of it: the advice names what is left.
    let r = on_eks(&["-np", "16", "-x", "PATH", "--prefix", "/opt/amazon/openmpi"]);
    assert_eq!(advice_ids(&r), ["ssh-env"]);
    assert_eq!(r.advice[0].evidence["missing"], "-x LD_LIBRARY_PATH");
    // Open MPI's env list says the same as -x.
    let r = on_eks(&[
        "-np",
        "16",
        "--prefix",
        "/opt/amazon/openmpi",
        "--mca",
        "mca_base_env_list",
        "PATH;LD_LIBRARY_PATH",
    ]);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // The kind profile's image keeps Open MPI in /usr: nothing to say there.
    let r = kind_files().grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // Both texts render with their values.
    let r = grade_eks(&kind_files());
    for lang in [Lang::Ja, Lang::En] {
        let rep = LabReport::new(&r, lang);
        for a in &rep.advice {
            assert!(!a.text.contains('{'), "{}", a.text);
            assert!(a.text.contains("LD_LIBRARY_PATH") || a.text.contains("/opt/amazon/openmpi"));
        }
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
    assert_eq!(status(&r, "bind-map"), Status::Fail);
    assert_eq!(status(&r, "one-launcher"), Status::Pass);
    // Changed on purpose: an Open MPI mpirun without a count starts one rank per slot, so the
    // draft's bare `mpirun` is right once slotsPerWorker is (advice says to write it down).
    assert_eq!(status(&r, "np-matches"), Status::Pass);
    assert!(advice_ids(&r).contains(&"implicit-np"));
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

// ---------------------------------------------------------------------------------------------
// api-v2beta1

#[test]
fn the_quizs_kubeflow_v1_fails_only_the_api_check_and_its_fields_are_still_judged() {
    let r = job(|v| v["apiVersion"] = json!("kubeflow.org/v1")).grade(LAB);
    let o = assert_only_fails(&r, "api-v2beta1", Some("v1"));
    assert_eq!(
        o.expected.as_deref(),
        Some("apiVersion: kubeflow.org/v2beta1")
    );
    assert_eq!(o.found.as_deref(), Some("apiVersion: kubeflow.org/v1"));
}

#[test]
fn a_v1_manifest_with_a_wrong_np_fails_both_checks_in_static_mode() {
    let r = job(|v| {
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
fn another_removed_version_fails_with_a_hint_naming_the_served_one() {
    for version in ["kubeflow.org/v1alpha2", "kubeflow.org/v1alpha1"] {
        let r = job(|v| v["apiVersion"] = json!(version))
            .into_files()
            .grade(LAB);
        let o = outcome(&r, "api-v2beta1");
        assert_eq!(o.status, Status::Fail, "{version}");
        assert_eq!(o.hint, None);
        assert_eq!(o.evidence["written"], version);
        for lang in [Lang::En, Lang::Ja] {
            let h = hint_text(&r, "api-v2beta1", lang);
            assert!(
                h.contains("kubeflow.org/v2beta1") && h.contains(version),
                "{h}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// slots-match-gpus

#[test]
fn workers_with_fewer_gpus_than_slots_fail_the_slots_check_and_np_follows_the_gpus() {
    // 4 GPUs per worker: slotsPerWorker 8 is the wrong value, and so is -np 16 (4 × 2 = 8).
    let r = job(|v| worker_container(v)["resources"]["limits"]["nvidia.com/gpu"] = json!("4"))
        .grade(LAB);
    let o = outcome(&r, "slots-match-gpus");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.expected.as_deref(), Some("spec.slotsPerWorker: 4"));
    assert_eq!(o.found.as_deref(), Some("spec.slotsPerWorker: 8"));
    let np = outcome(&r, "np-matches");
    assert_eq!(np.status, Status::Fail);
    assert_eq!(
        np.expected.as_deref(),
        Some("-np 8 (nvidia.com/gpu 4 × Worker.replicas 2)")
    );
    assert!(r
        .advice
        .iter()
        .any(|a| a.id == "partial-node" && a.evidence["node_gpus"] == "8"));
}

#[test]
fn an_unset_slots_per_worker_with_the_right_np_fails_only_the_slots_check() {
    // Issue 9 item 10: with slotsPerWorker unset (1) and the correct -np 16, the np check used
    // to say "Set -np 2". The GPUs decide: only slotsPerWorker is wrong.
    let r = job(|v| {
        v["spec"].as_object_mut().unwrap().remove("slotsPerWorker");
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "slots-match-gpus", Some("unset"));
    assert_eq!(o.expected.as_deref(), Some("spec.slotsPerWorker: 8"));
    assert_eq!(o.found.as_deref(), Some("spec.slotsPerWorker: —"));
    let r = job(|v| v["spec"]["slotsPerWorker"] = json!(1)).grade(LAB);
    let o = assert_only_fails(&r, "slots-match-gpus", None);
    assert_eq!(o.found.as_deref(), Some("spec.slotsPerWorker: 1"));
}

#[test]
fn a_wrong_slots_per_worker_and_an_np_that_follows_it_fail_both() {
    // slotsPerWorker 1 with -np 2 agree with each other but not with the 8 GPUs.
    let r = job(|v| {
        v["spec"]["slotsPerWorker"] = json!(1);
        launcher_container(v)["args"][1] = json!("2");
    })
    .grade(LAB);
    assert_eq!(status(&r, "slots-match-gpus"), Status::Fail);
    let np = outcome(&r, "np-matches");
    assert_eq!(np.status, Status::Fail);
    assert_eq!(np.hint, None);
    assert_eq!(np.evidence["expected_np"], "16");
    assert_eq!(np.found.as_deref(), Some("-np 2"));
}

#[test]
fn workers_without_gpus_fail_the_slots_check_with_the_no_gpu_hint() {
    let r = job(|v| {
        worker_container(v)["resources"]["limits"]
            .as_object_mut()
            .unwrap()
            .remove("nvidia.com/gpu");
    })
    .grade(LAB);
    let o = outcome(&r, "slots-match-gpus");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("no-gpu"));
    assert_eq!(o.found.as_deref(), Some("nvidia.com/gpu: 0"));
    // Without GPUs, slotsPerWorker is what mpirun's count follows: -np 16 = 8 × 2 still holds.
    assert_eq!(status(&r, "np-matches"), Status::Pass);
}

#[test]
fn a_lowercase_worker_key_is_reported_as_case_sensitive() {
    let r = job(|v| {
        let specs = v["spec"]["mpiReplicaSpecs"].as_object_mut().unwrap();
        let w = specs.remove("Worker").unwrap();
        specs.insert("worker".into(), w);
    })
    .into_files()
    .grade(LAB);
    let o = outcome(&r, "slots-match-gpus");
    assert_eq!(o.hint.as_deref(), Some("no-worker"));
    assert_eq!(o.expected.as_deref(), Some("spec.mpiReplicaSpecs.Worker"));
    assert_eq!(o.found.as_deref(), Some("spec.mpiReplicaSpecs.worker"));
    assert_eq!(
        outcome(&r, "np-matches").hint.as_deref(),
        Some("no-workers")
    );
}

#[test]
fn gpus_in_requests_without_limits_are_refused_as_the_api_server_would() {
    // Issue 9 item 6: an extended resource in requests only is rejected by the API server.
    let r = job(|v| {
        let c = worker_container(v);
        c["resources"]["limits"]
            .as_object_mut()
            .unwrap()
            .remove("nvidia.com/gpu");
        c["resources"]["requests"] = json!({"nvidia.com/gpu": "8"});
    })
    .into_files()
    .grade(LAB);
    let o = outcome(&r, "slots-match-gpus");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("api-rejects"));
    let path = "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources";
    // The kit's one refusal rule (`devices::refused`): the limits field that is required.
    assert_eq!(
        o.expected.as_deref(),
        Some(format!("{path}.limits[nvidia.com/gpu]").as_str())
    );
    assert_eq!(
        o.evidence["api_error"],
        format!(
            "{path}.limits: Required value: Limit must be set for non overcommitable resources"
        )
    );
    assert!(hint_text(&r, "slots-match-gpus", Lang::Ja).contains("Limit must be set"));
}

#[test]
fn gpu_requests_different_from_limits_are_refused() {
    let r = job(|v| worker_container(v)["resources"]["requests"] = json!({"nvidia.com/gpu": "4"}))
        .grade(LAB);
    let o = assert_only_fails(&r, "slots-match-gpus", Some("api-rejects"));
    assert_eq!(
        (o.expected.as_deref(), o.found.as_deref()),
        (
            Some("nvidia.com/gpu: requests 8, limits 8"),
            Some("nvidia.com/gpu: requests 4, limits 8")
        )
    );
    assert!(o.evidence["api_error"].ends_with("must be equal to nvidia.com/gpu limit of 8"));
}

// ---------------------------------------------------------------------------------------------
// np-matches

#[test]
fn a_wrong_np_fails_with_expected_and_found() {
    let r = job(|v| launcher_container(v)["args"][1] = json!("32")).grade(LAB);
    let o = assert_only_fails(&r, "np-matches", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("-np 16 (nvidia.com/gpu 8 × Worker.replicas 2)")
    );
    assert_eq!(o.found.as_deref(), Some("-np 32"));
}

#[test]
fn every_spelling_of_the_count_in_command_or_args_is_read() {
    let forms: Vec<(Value, Value)> = vec![
        (json!(["mpirun"]), json!(["-n", "16"])),
        (json!(["mpirun"]), json!(["--np", "16"])),
        (json!(["mpirun"]), json!(["-np=16"])),
        (json!(["mpirun"]), json!(["--n=16"])),
        (json!(["mpirun"]), json!(["-c", "16"])),
        // Per-node counts that imply the same total on 2 hosts.
        (json!(["mpirun"]), json!(["-N", "8"])),
        (json!(["mpirun"]), json!(["--npernode", "8"])),
        (json!(["mpirun"]), json!(["-np", "16", "-N", "8"])),
        (
            json!(["/opt/amazon/openmpi/bin/mpirun"]),
            json!(["--allow-run-as-root", "-np", "16"]),
        ),
        (
            json!([]),
            json!(["mpiexec", "-x", "NCCL_DEBUG=INFO", "-np", "16"]),
        ),
        (json!(["env", "NP=1", "mpirun"]), json!(["-np", "16"])),
    ];
    for (command, args) in forms {
        let mut args = args.as_array().unwrap().clone();
        args.extend(TAIL.iter().map(|w| json!(w)));
        let shown = format!("{command} {args:?}");
        let r = job(launcher_runs(command, Value::Array(args))).grade(LAB);
        assert_eq!(status(&r, "np-matches"), Status::Pass, "{shown}");
        assert_eq!(status(&r, "bind-map"), Status::Pass, "{shown}");
    }
}

#[test]
fn a_ppr_mapping_is_a_per_node_count_and_a_slot_order() {
    // `--map-by ppr:8:node` says both how many ranks per node and that they fill a node in turn.
    let r = job(launcher_runs(
        json!(["mpirun"]),
        json!([
            "--bind-to",
            "none",
            "--map-by",
            "ppr:8:node",
            "/home/mpiuser/pi"
        ]),
    ))
    .grade(LAB);
    assert_all_pass(&r);
    // AWS's EKS sample: `-np 16 -N 8 --bind-to none`, no --map-by.
    let r = job(launcher_runs(
        json!([
            "mpirun",
            "--allow-run-as-root",
            "-np",
            "16",
            "-N",
            "8",
            "--bind-to",
            "none"
        ]),
        json!(["/home/mpiuser/pi"]),
    ))
    .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_per_node_count_that_is_not_the_gpus_fails_with_the_per_node_hint() {
    let r = job(mpirun_with(&["-N", "4"])).grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("per-node"));
    assert_eq!(o.expected.as_deref(), Some("-N 8"));
    assert_eq!(o.found.as_deref(), Some("-N 4"));
    // -np right but only 4 per node: Open MPI cannot place 16 ranks on 2 × 4.
    let r = job(launcher_runs(
        json!(["mpirun"]),
        json!([
            "-np",
            "16",
            "--bind-to",
            "none",
            "--map-by",
            "ppr:4:node",
            "./pi"
        ]),
    ))
    .grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("per-node"));
    assert_eq!(o.expected.as_deref(), Some("--map-by ppr:8:node"));
    assert_eq!(o.found.as_deref(), Some("--map-by ppr:4:node"));
}

#[test]
fn a_shell_wrapped_mpirun_is_read() {
    let pass = job(launcher_runs(
        json!([
            "/bin/sh",
            "-c",
            "echo starting; mpirun -np 16 -bind-to none -map-by slot /home/mpiuser/pi"
        ]),
        json!(null),
    ))
    .grade(LAB);
    assert_all_pass(&pass);
    let fail = job(launcher_runs(
        json!(["bash", "-c"]),
        json!(["mpirun --np=32 --bind-to=none --map-by=slot ./pi -n 16"]),
    ))
    .grade(LAB);
    let o = assert_only_fails(&fail, "np-matches", None);
    // As written (`--np`), and the program's own -n 16 is not mpirun's.
    assert_eq!(o.found.as_deref(), Some("--np 32"));
}

#[test]
fn a_script_the_shell_cannot_read_fails_np_and_bind_map_with_the_shell_hint() {
    let r = job(launcher_runs(
        json!(["sh", "-c", "mpirun -np 16 -bind-to none -map-by slot 'pi"]),
        json!(null),
    ))
    .grade(LAB);
    for c in ["np-matches", "bind-map"] {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Fail, "{c}");
        assert_eq!(o.hint.as_deref(), Some("shell"), "{c}");
        assert_eq!(o.found.as_deref(), Some("launcher: 1: '"), "{c}");
    }
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
    let r = job(with_np(None, "$(NP)")).grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("not-literal"));
    assert_eq!(o.evidence["np_raw"], "$(NP)");
    assert_eq!(o.found.as_deref(), Some("-np $(NP)"));

    let r = job(launcher_runs(
        json!(["sh", "-c", "mpirun -np $NP -bind-to none -map-by slot ./pi"]),
        json!(null),
    ))
    .grade(LAB);
    assert_only_fails(&r, "np-matches", Some("not-literal"));

    // A value the script itself sets is known.
    let r = job(launcher_runs(
        json!([
            "sh",
            "-c",
            "NP=16; mpirun -np $NP -bind-to none -map-by slot ./pi"
        ]),
        json!(null),
    ))
    .grade(LAB);
    assert_all_pass(&r);

    // Kubernetes expands $(NP) from a literal env value before the container starts.
    assert_all_pass(&job(with_np(Some("16"), "$(NP)")).grade(LAB));
    let r = job(with_np(Some("32"), "$(NP)")).grade(LAB);
    assert_eq!(
        assert_only_fails(&r, "np-matches", None).found.as_deref(),
        Some("-np 32")
    );
}

#[test]
fn a_count_mpirun_would_reject_fails_with_the_invalid_hint() {
    let r = job(|v| launcher_container(v)["args"][1] = json!("sixteen")).grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("invalid"));
    assert_eq!(o.found.as_deref(), Some("-np sixteen"));
}

#[test]
fn open_mpi_without_a_count_runs_one_rank_per_slot() {
    // Changed on purpose: the old check failed a missing -np. Open MPI's mpirun(1): without -np
    // "Open MPI will automatically execute a copy of the program on each process slot".
    let r = job(mpirun_with(&[])).grade(LAB);
    assert_all_pass(&r);
    let a = r
        .advice
        .iter()
        .find(|a| a.id == "implicit-np")
        .expect("advice");
    assert_eq!(a.evidence["total"], "16");
    // With slotsPerWorker unset the implicit count is 2, and only slotsPerWorker is to blame.
    let r = job(|v| {
        v["spec"].as_object_mut().unwrap().remove("slotsPerWorker");
        mpirun_with(&[])(v);
    })
    .grade(LAB);
    assert_only_fails(&r, "slots-match-gpus", Some("unset"));
}

#[test]
fn other_mpi_implementations_need_the_count_written() {
    let r = job(|v| {
        v["spec"]["mpiImplementation"] = json!("Intel");
        mpirun_with(&[])(v);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "np-matches", Some("no-np"));
    assert_eq!(o.found.as_deref(), Some("mpirun"));
    assert!(advice_ids(&r).is_empty(), "{:?}", r.advice);
}

#[test]
fn a_launcher_that_runs_no_mpirun_fails_np_and_bind_map() {
    let r = job(launcher_runs(json!(["python"]), json!(["train.py"]))).grade(LAB);
    for c in ["np-matches", "bind-map"] {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Fail, "{c}");
        assert_eq!(o.hint.as_deref(), Some("no-mpirun"), "{c}");
        assert_eq!(o.found.as_deref(), Some("python train.py"));
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
fn a_launcher_that_is_also_a_worker_adds_a_host_and_needs_the_gpus() {
    let as_worker = |np: &'static str, launcher_gpus: Option<&'static str>| {
        move |v: &mut Value| {
            v["spec"]["runLauncherAsWorker"] = json!(true);
            let c = launcher_container(v);
            c["args"][1] = json!(np);
            if let Some(g) = launcher_gpus {
                c["resources"]["limits"]["nvidia.com/gpu"] = json!(g);
            }
        }
    };
    // 3 hosts × 8: the launcher pod (trainlab-worker3) is a host on its own node too.
    let r = job(as_worker("24", Some("8"))).grade(LAB);
    assert_all_pass(&r);
    assert!(
        r.advice.is_empty(),
        "no launcher-gpu advice: {:?}",
        r.advice
    );
    assert_eq!(
        outcome(&r, "workers-spread").found.as_deref(),
        Some("nccl-allreduce-worker-0 → trainlab-worker, nccl-allreduce-worker-1 → trainlab-worker2, nccl-allreduce-launcher-7xk2p → trainlab-worker3")
    );

    let r = job(as_worker("16", Some("8"))).grade(LAB);
    let o = assert_only_fails(&r, "np-matches", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("-np 24 (nvidia.com/gpu 8 × (Worker.replicas 2 + Launcher 1))")
    );

    let r = job(as_worker("24", None)).grade(LAB);
    let o = assert_only_fails(&r, "slots-match-gpus", Some("launcher-as-worker"));
    assert_eq!(o.found.as_deref(), Some("nvidia.com/gpu: 0"));
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].resources.limits[nvidia.com/gpu]: 8")
    );
}

// ---------------------------------------------------------------------------------------------
// one-launcher

#[test]
fn two_launchers_fail_the_launcher_check() {
    let r = job(|v| v["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = json!(2)).grade(LAB);
    let o = assert_only_fails(&r, "one-launcher", None);
    assert_eq!(
        o.found.as_deref(),
        Some("spec.mpiReplicaSpecs.Launcher.replicas: 2")
    );
}

#[test]
fn an_unset_launcher_replicas_defaults_to_one() {
    let r = job(|v| {
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
    let r = job(|v| {
        v["spec"]["mpiReplicaSpecs"]
            .as_object_mut()
            .unwrap()
            .remove("Launcher");
    })
    .grade(LAB);
    let o = outcome(&r, "one-launcher");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("no-launcher"));
    assert_eq!(o.found.as_deref(), Some("spec.mpiReplicaSpecs: Worker"));
    assert_eq!(outcome(&r, "np-matches").hint.as_deref(), Some("no-mpirun"));
}

#[test]
fn a_launcher_asking_for_gpus_in_requests_only_is_refused() {
    let r =
        job(|v| launcher_container(v)["resources"]["requests"] = json!({"nvidia.com/gpu": "1"}))
            .into_files()
            .grade(LAB);
    let o = outcome(&r, "one-launcher");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("api-rejects"));
    assert!(o.evidence["api_error"].contains("Limit must be set"));
    assert_eq!(status(&r, "slots-match-gpus"), Status::Pass);
}

// ---------------------------------------------------------------------------------------------
// bind-map

#[test]
fn mpirun_without_bind_to_none_fails_bind_map() {
    let r = job(launcher_runs(
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
    ))
    .grade(LAB);
    let o = assert_only_fails(&r, "bind-map", None);
    assert_eq!(o.expected.as_deref(), Some("-bind-to none -map-by slot"));
    assert_eq!(o.found.as_deref(), Some("-bind-to core -map-by slot"));

    let r = job(launcher_runs(
        json!(["mpirun"]),
        json!(["-np", "16", "/home/mpiuser/pi"]),
    ))
    .grade(LAB);
    assert_eq!(
        assert_only_fails(&r, "bind-map", None).found.as_deref(),
        Some("-bind-to — -map-by —")
    );
}

#[test]
fn mapping_by_node_round_robin_fails_bind_map() {
    let r = job(launcher_runs(
        json!(["mpirun"]),
        json!(["-np", "16", "--bind-to", "none", "--map-by", "node", "./pi"]),
    ))
    .grade(LAB);
    let o = assert_only_fails(&r, "bind-map", None);
    assert_eq!(o.evidence["found_map"], "-map-by node");
}

#[test]
fn bind_map_accepts_long_options_legacy_switches_and_modifiers() {
    for line in [
        &[
            "mpirun",
            "--np",
            "16",
            "--bind-to=none",
            "--map-by",
            "slot:PE=1",
            "./pi",
        ][..],
        &["mpirun", "-np", "16", "--bind-to-none", "--byslot", "./pi"],
    ] {
        let r = job(launcher_runs(json!(line), json!(null))).grade(LAB);
        assert_all_pass(&r);
    }
}

/// `--bind-to` and `--map-by` set Open MPI's MCA parameters `hwloc_base_binding_policy` and
/// `rmaps_base_mapping_policy`: the same policies written as `--mca` or as `OMPI_MCA_*`
/// variables are the same arrangement, and the option wins over the environment.
#[test]
fn bind_map_accepts_the_mca_parameters_on_the_line_or_in_the_environment() {
    let mca = [
        "-np",
        "16",
        "--mca",
        "hwloc_base_binding_policy",
        "none",
        "-mca",
        "rmaps_base_mapping_policy",
        "slot",
        "./pi",
    ];
    let r = job(launcher_runs(json!(["mpirun"]), json!(mca))).grade(LAB);
    assert_all_pass(&r);
    let with_env = |options: Value| {
        move |v: &mut Value| {
            launcher_runs(json!(["mpirun"]), options)(v);
            launcher_container(v)["env"] = json!([
                {"name": "OMPI_MCA_hwloc_base_binding_policy", "value": "none"},
                {"name": "OMPI_MCA_rmaps_base_mapping_policy", "value": "slot"}
            ]);
        }
    };
    let r = job(with_env(json!(["-np", "16", "./pi"]))).grade(LAB);
    assert_all_pass(&r);
    let r = job(with_env(json!(["-np", "16", "--bind-to", "core", "./pi"]))).grade(LAB);
    let o = assert_only_fails(&r, "bind-map", None);
    assert_eq!(
        o.found.as_deref(),
        Some("-bind-to core OMPI_MCA_rmaps_base_mapping_policy=slot")
    );
}

// ---------------------------------------------------------------------------------------------
// Advice: running as root (issue 10 item 9).

#[test]
fn a_root_launcher_without_allow_run_as_root_gets_advice() {
    let root = |v: &mut Value| launcher_container(v)["securityContext"]["runAsUser"] = json!(0);
    let r = job(root).grade(LAB);
    assert_all_pass(&r);
    let a = r
        .advice
        .iter()
        .find(|a| a.id == "run-as-root")
        .expect("advice");
    assert_eq!(a.evidence["container"], "launcher");

    let r = job(|v| {
        root(v);
        launcher_container(v)["args"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!("--allow-run-as-root"));
    })
    .grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);

    let r = job(|v| {
        root(v);
        launcher_container(v)["env"] = json!([
            {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"},
            {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"},
        ]);
    })
    .grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);

    // One of the pair is not enough.
    let r = job(|v| {
        root(v);
        launcher_container(v)["env"] = json!([{"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"}]);
    })
    .grade(LAB);
    assert_eq!(advice_ids(&r), vec!["run-as-root"]);
}

#[test]
fn a_launcher_whose_image_picks_the_user_gets_the_conditional_advice() {
    // The EKS image runs as root and sets no runAsUser in the manifest.
    let r = job(|v| {
        launcher_container(v)
            .as_object_mut()
            .unwrap()
            .remove("securityContext");
    })
    .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), vec!["maybe-root"]);
    // The EKS form: no runAsUser, and mpirun is allowed to run as root.
    let r = job(|v| {
        launcher_container(v)
            .as_object_mut()
            .unwrap()
            .remove("securityContext");
        launcher_runs(
            json!(["/opt/amazon/openmpi/bin/mpirun", "--allow-run-as-root"]),
            json!(["-np", "16", "-bind-to", "none", "-map-by", "slot", "./pi"]),
        )(v);
    })
    .grade(LAB);
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // The pair set from a Secret: present, value unseen, so no advice.
    let r = job(|v| {
        launcher_container(v)
            .as_object_mut()
            .unwrap()
            .remove("securityContext");
        let from_secret =
            |n: &str| json!({"name": n, "valueFrom": {"secretKeyRef": {"name": "mpi", "key": n}}});
        launcher_container(v)["env"] = json!([
            from_secret("OMPI_ALLOW_RUN_AS_ROOT"),
            from_secret("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
        ]);
    })
    .grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // A pod-level runAsUser decides too.
    let r = job(|v| {
        launcher_container(v)
            .as_object_mut()
            .unwrap()
            .remove("securityContext");
        v["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["securityContext"] =
            json!({"runAsUser": 1000});
    })
    .grade(LAB);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
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
    assert_eq!(o.expected.as_deref(), Some("nodes: 2"));
    assert_eq!(
        o.found.as_deref(),
        Some("nodes: 1 (nccl-allreduce-worker-0 → trainlab-worker, nccl-allreduce-worker-1 → trainlab-worker)")
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
    assert_eq!(message(o), "workers-missing");
    assert_eq!(o.evidence["found"], "1");
    assert_eq!(o.evidence["expected"], "2");
}

#[test]
fn a_terminating_worker_is_not_counted() {
    let r = solved()
        .edit("Pod", "nccl-allreduce-worker-1", |v| {
            v["metadata"]["deletionTimestamp"] = json!("2026-12-02T10:10:00Z")
        })
        .grade(LAB);
    let o = outcome(&r, "workers-spread");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message(o), "workers-missing");
}

#[test]
fn worker_pods_cleaned_up_after_success_cannot_be_judged() {
    let r = solved()
        .remove(|o| o.kind() == "Pod" && o.name().starts_with("nccl-allreduce-worker-"))
        .grade(LAB);
    let o = outcome(&r, "workers-spread");
    assert_eq!(o.status, Status::Skipped);
    assert_eq!(message(o), "workers-cleaned");
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
    assert_eq!(message(o), "worker-unscheduled");
    assert_eq!(o.evidence["pod"], "nccl-allreduce-worker-1");
}

// ---------------------------------------------------------------------------------------------
// mpijob-running

#[test]
fn a_failed_mpijob_fails_and_quotes_the_condition_message_in_the_hint() {
    let message = "Job has reached the specified backoff limit: mpirun noticed that process rank 3 exited on signal 9 (Killed).";
    let r = job(|v| {
        v["status"]["conditions"] = json!([
            {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
            {"type": "Running", "status": "False", "reason": "MPIJobRunning"},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded/Error", "message": message},
        ]);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "mpijob-running", None);
    assert_eq!(o.expected.as_deref(), Some("Running=True | Succeeded=True"));
    // Tightened: the cluster's sentence moved from `found` to the hint's {message}.
    assert_eq!(
        o.found.as_deref(),
        Some("Failed=True (BackoffLimitExceeded/Error)")
    );
    assert!(hint_text(&r, "mpijob-running", Lang::Ja).contains(message));
}

#[test]
fn a_suspended_mpijob_fails_with_the_suspended_hint() {
    let r = job(|v| {
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
    let r = job(|v| {
        v["status"]["conditions"] =
            json!([{"type": "Created", "status": "True", "reason": "MPIJobCreated"}]);
    })
    .edit("Pod", "nccl-allreduce-launcher-7xk2p", |v| {
        v["status"]["phase"] = json!("Pending")
    })
    .grade(LAB);
    let o = outcome(&r, "mpijob-running");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message(o), "waiting-launcher");
    assert_eq!(o.evidence["conditions"], "Created");
    assert_eq!(o.evidence["running"], "2");
    assert_eq!(o.evidence["launcher_job"], "nccl-allreduce-launcher");
    assert_eq!(o.evidence["launcher_pods"], "Pending");
}

#[test]
fn a_running_mpijob_passes() {
    let r = job(|v| {
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
    assert_eq!(message(spread), "worker-unschedulable");
    assert!(spread.evidence["scheduler"].contains("Insufficient nvidia.com/gpu"));
    let running = outcome(&r, "mpijob-running");
    assert_eq!(running.status, Status::Pending);
    assert_eq!(message(running), "waiting-no-launcher");
    assert_eq!(running.evidence["running"], "0");
}

#[test]
fn no_mpijob_fails_every_check_once_with_the_labs_missing_text() {
    let r = solved().remove(|o| o.kind() == "MPIJob").grade(LAB);
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Fail, "{}", o.check);
        assert_eq!(o.hint.as_deref(), Some("missing"), "{}", o.check);
        assert_eq!(
            o.expected.as_deref(),
            Some("kubeflow.org/v2beta1 MPIJob nccl-allreduce")
        );
        assert_eq!(o.found.as_deref(), Some("—"));
    }
    let en = hint_text(&r, "np-matches", Lang::En);
    assert!(
        en.contains("There is no MPIJob `nccl-allreduce`") && en.contains("trainlab-mpijob-slots"),
        "{en}"
    );
}

#[test]
fn an_mpijob_with_another_name_is_named_in_the_failure() {
    let r = job(|v| v["metadata"]["name"] = json!("allreduce")).grade(LAB);
    let o = outcome(&r, "np-matches");
    assert_eq!(o.hint.as_deref(), Some("missing"));
    assert_eq!(o.found.as_deref(), Some("allreduce"));
}

#[test]
fn a_wrong_type_in_the_mpijob_is_bad_input_naming_the_field() {
    for (edit, field) in [
        (json!({"slotsPerWorker": "eight"}), "spec.slotsPerWorker"),
        (
            json!({"mpiReplicaSpecs": {"Worker": {"replicas": "two"}}}),
            "spec.mpiReplicaSpecs.Worker.replicas",
        ),
        (
            json!({"mpiReplicaSpecs": {"Worker": {"replicas": -1}}}),
            "spec.mpiReplicaSpecs.Worker.replicas",
        ),
    ] {
        let err = job(|v| merge(&mut v["spec"], &edit))
            .try_grade(LAB)
            .expect_err("bad input");
        assert!(err.to_string().contains(field), "{err}");
    }
    let err = job(|v| v["status"]["conditions"] = json!("Running"))
        .try_grade(LAB)
        .expect_err("bad input");
    assert!(err.to_string().contains("status.conditions"), "{err}");
}

fn merge(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

#[test]
fn a_launcher_that_requests_gpus_gets_advice() {
    let r = job(|v| launcher_container(v)["resources"]["limits"]["nvidia.com/gpu"] = json!(1))
        .grade(LAB);
    assert_all_pass(&r);
    assert!(r
        .advice
        .iter()
        .any(|a| a.id == "launcher-gpu" && a.evidence["gpus"] == "1"));
}

// ---------------------------------------------------------------------------------------------
// One language: in Japanese no English sentence built in Rust reaches expected/found.

/// Three consecutive space-separated all-lowercase ASCII words of 2+ letters (the lead's CLI
/// heuristic for an English sentence).
fn english_run(s: &str) -> Option<String> {
    let words: Vec<&str> = s.split(' ').collect();
    let word = |w: &&str| w.len() >= 2 && w.chars().all(|c| c.is_ascii_lowercase());
    words
        .windows(3)
        .find(|w| w.iter().all(word))
        .map(|w| w.join(" "))
}

#[test]
fn the_heuristic_itself_catches_english_and_spares_values() {
    assert!(english_run("no mpirun in the Launcher command").is_some());
    assert!(english_run("keys are case-sensitive").is_none());
    assert!(english_run("worker pods on 2 nodes").is_some());
    assert!(english_run("-np 16 (nvidia.com/gpu 8 × Worker.replicas 2)").is_none());
}

#[test]
fn japanese_reports_carry_only_values_in_expected_and_found() {
    let states: Vec<(&str, State)> = vec![
        ("solved", solved()),
        ("converging", converging()),
        ("static", solved().into_files()),
        ("missing", solved().remove(|o| o.kind() == "MPIJob")),
        ("v1", job(|v| v["apiVersion"] = json!("kubeflow.org/v1"))),
        (
            "unset-slots",
            job(|v| {
                v["spec"].as_object_mut().unwrap().remove("slotsPerWorker");
            }),
        ),
        (
            "no-gpu",
            job(|v| {
                worker_container(v)["resources"]["limits"]
                    .as_object_mut()
                    .unwrap()
                    .remove("nvidia.com/gpu");
            }),
        ),
        (
            "requests-only",
            job(|v| {
                worker_container(v)["resources"] = json!({"requests": {"nvidia.com/gpu": "8"}})
            }),
        ),
        (
            "no-worker",
            job(|v| {
                v["spec"]["mpiReplicaSpecs"]
                    .as_object_mut()
                    .unwrap()
                    .remove("Worker");
            }),
        ),
        (
            "no-launcher",
            job(|v| {
                v["spec"]["mpiReplicaSpecs"]
                    .as_object_mut()
                    .unwrap()
                    .remove("Launcher");
            }),
        ),
        (
            "two-launchers",
            job(|v| v["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = json!(2)),
        ),
        (
            "np-32",
            job(|v| launcher_container(v)["args"][1] = json!("32")),
        ),
        (
            "np-var",
            job(|v| launcher_container(v)["args"][1] = json!("$(NP)")),
        ),
        (
            "np-word",
            job(|v| launcher_container(v)["args"][1] = json!("sixteen")),
        ),
        ("per-node", job(mpirun_with(&["-N", "4"]))),
        (
            "intel",
            job(|v| {
                v["spec"]["mpiImplementation"] = json!("Intel");
                mpirun_with(&[])(v);
            }),
        ),
        (
            "python",
            job(launcher_runs(json!(["python"]), json!(["train.py"]))),
        ),
        (
            "shell",
            job(launcher_runs(
                json!(["sh", "-c", "mpirun -np 16 'x"]),
                json!(null),
            )),
        ),
        (
            "bind-core",
            job(launcher_runs(
                json!(["mpirun", "-np", "16", "-bind-to", "core", "./pi"]),
                json!(null),
            )),
        ),
        (
            "as-worker",
            job(|v| v["spec"]["runLauncherAsWorker"] = json!(true)),
        ),
        (
            "shared-node",
            solved().edit("Pod", "nccl-allreduce-worker-1", |v| {
                v["spec"]["nodeName"] = json!("trainlab-worker")
            }),
        ),
        (
            "failed",
            job(
                |v| v["status"]["conditions"] = json!([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "the job has failed for a reason"}]),
            ),
        ),
        (
            "suspended",
            job(|v| v["spec"]["runPolicy"]["suspend"] = json!(true)),
        ),
        (
            "root",
            job(|v| launcher_container(v)["securityContext"]["runAsUser"] = json!(0)),
        ),
    ];
    for (name, state) in states {
        let r = state.grade(LAB);
        let json = trainlab::report::json::render_all(&[LabReport::new(&r, Lang::Ja)]);
        let v: Value = serde_json::from_str(&json).expect("json");
        for o in v["outcomes"].as_array().expect("outcomes") {
            for field in ["expected", "found"] {
                if let Some(text) = o[field].as_str() {
                    assert_eq!(
                        english_run(text),
                        None,
                        "{name}: {} {field}: {text}",
                        o["check"]
                    );
                }
            }
        }
    }
}

fn advice_text(r: &LabResult, id: &str, lang: Lang) -> Option<String> {
    LabReport::new(r, lang)
        .advice
        .into_iter()
        .find(|a| a.id == id)
        .map(|a| a.text)
}

/// Workers pinned to `instance_type` by nodeSelector, each asking for `gpus` GPUs.
fn pinned_workers(instance_type: &str, gpus: &str) -> State {
    let (t, g) = (instance_type.to_string(), gpus.to_string());
    job(move |v| {
        v["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] =
            json!({"node.kubernetes.io/instance-type": t});
        worker_container(v)["resources"]["limits"]["nvidia.com/gpu"] = json!(g);
    })
}

#[test]
fn partial_node_advice_never_claims_the_labs_8_gpus_for_a_node_trainlab_cannot_size() {
    // Issue 31 §6: a GB200 tray (p6e-gb200.36xlarge) has 4 GPUs; workers taking all 4 of
    // them were told they use "fewer than a node's 8".
    let r = pinned_workers("p6e-gb200.36xlarge", "4").grade(LAB);
    assert!(!advice_ids(&r).contains(&"partial-node"), "{r:?}");
}

#[test]
fn partial_node_advice_uses_the_pinned_instance_types_gpus_and_reads_well_for_one_gpu() {
    // p5.48xlarge has 8 GPUs (facts::instances); one GPU per worker is a partial node, and
    // the advice must not say "1 GPUs".
    let r = pinned_workers("p5.48xlarge", "1").grade(LAB);
    let a = r
        .advice
        .iter()
        .find(|a| a.id == "partial-node")
        .expect("partial-node advice");
    assert_eq!(a.evidence["node_gpus"], "8");
    let en = advice_text(&r, "partial-node", Lang::En).unwrap();
    assert!(!en.contains("1 GPUs"), "{en}");
    assert!(en.contains("only 1 of a node's 8 GPUs"), "{en}");
    let ja = advice_text(&r, "partial-node", Lang::Ja).unwrap();
    assert!(ja.contains("8 個のうち 1 個"), "{ja}");
}
