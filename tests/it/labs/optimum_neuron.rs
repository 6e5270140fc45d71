//! Lab 7 `optimum-neuron`: Job `neuron-finetune` takes a whole Trainium node, is placed on
//! Trainium only, runs the Neuron training container and an optimum-neuron script (from a
//! ConfigMap) with a TP that divides the pod's NeuronCores.

use crate::support;

use std::collections::BTreeMap;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::facts::Profile;
use trainlab::labs::grade_lab;
use trainlab::observe::{parse_text, Obj};
use trainlab::verify::{LabResult, Reason, Status, Target};

const LAB: &str = "optimum-neuron";
const JOB: &str = "neuron-finetune";
const POD: &str = "neuron-finetune-m2x9v";
const SCRIPT_CM: &str = "neuron-finetune-script";
const SPEC_CHECKS: [&str; 5] = [
    "neuron-devices",
    "trn-placement",
    "neuron-image",
    "uses-optimum-neuron",
    "tp-divides-cores",
];
const STATE_CHECKS: [&str; 2] = ["pod-on-trainium", "pods-running"];

fn solved() -> State {
    State::load("optimum-neuron/solution-state").and("kind-nodes")
}

fn files(folder: &str) -> State {
    State::load(&format!("../../labs/07-optimum-neuron/{folder}")).into_files()
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
    let mut s = files("solution");
    s.objects = objects;
    s
}

/// Grades with the EKS profile's parameters, as `check --files --profile eks` does.
fn grade_eks(s: &State) -> LabResult {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    let target = Target::for_lab(LAB);
    grade_lab(
        b,
        &s.observed(),
        &target,
        &BTreeMap::new(),
        Some(Profile::Eks),
    )
    .unwrap()
}

/// The EKS Job's container, as JSON.
fn eks_container() -> Value {
    let s = eks_files();
    let job = s.objects.iter().find(|o| o.kind() == "Job").unwrap();
    job.value["spec"]["template"]["spec"]["containers"][0].clone()
}

fn spec(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]
}

fn container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

fn edit_job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("Job", JOB, f)
}

/// Sets the container's Neuron limits (and the requests the API server defaulted from them).
fn neuron(limits: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let r = &mut container(v)["resources"];
        for res in ["aws.amazon.com/neuron", "aws.amazon.com/neuroncore"] {
            r["limits"].as_object_mut().unwrap().remove(res);
            r["requests"].as_object_mut().unwrap().remove(res);
        }
        for (k, n) in limits.as_object().unwrap() {
            r["limits"][k] = n.clone();
            r["requests"][k] = n.clone();
        }
    }
}

/// Replaces the argument starting with `prefix` (or removes it when `new` is None).
fn set_arg(prefix: &'static str, new: Option<&'static str>) -> impl FnOnce(&mut Value) {
    move |v| {
        let a = container(v)["args"].as_array_mut().unwrap();
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

fn placement(node_selector: Value, affinity: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        let s = spec(v);
        s["nodeSelector"] = node_selector;
        s["affinity"] = affinity;
    }
}

fn required(terms: Value) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": terms}}})
}

fn script(text: &'static str) -> impl FnOnce(&mut Value) {
    move |cm| cm["data"]["finetune.py"] = json!(text)
}

const PLAIN_SCRIPT: &str =
    "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\
    args = TrainingArguments(output_dir='o')\n\
    Trainer(model=AutoModelForCausalLM.from_pretrained('m'), args=args).train()\n";

const EKS_NODE: &str = r#"
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-3-41.us-west-2.compute.internal
  labels:
    node.kubernetes.io/instance-type: trn1.32xlarge
spec:
  providerID: aws:///us-west-2d/i-0fed987cba6543210
status:
  allocatable: {aws.amazon.com/neuron: "16", aws.amazon.com/neuroncore: "32", pods: "247"}
  capacity: {aws.amazon.com/neuron: "16", aws.amazon.com/neuroncore: "32", pods: "247"}
"#;

// ---------------------------------------------------------------------------------------------
// The reference answer.

#[test]
fn the_solved_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    let o = outcome(&r, "neuron-devices");
    assert_eq!(o.found.as_deref(), Some("aws.amazon.com/neuron: 16"));
    assert_eq!(
        o.expected.as_deref(),
        Some("aws.amazon.com/neuron: 16 | aws.amazon.com/neuroncore: 32 (trn1.32xlarge)")
    );
    assert_eq!(
        outcome(&r, "uses-optimum-neuron").found.as_deref(),
        Some("/opt/train/finetune.py (ConfigMap neuron-finetune-script, key finetune.py): NeuronTrainer, NeuronTrainingArguments")
    );
    assert_eq!(
        outcome(&r, "tp-divides-cores").found.as_deref(),
        Some("TP 8 (--tensor_parallel_size 8)")
    );
    assert_eq!(
        outcome(&r, "pod-on-trainium").found.as_deref(),
        Some("neuron-finetune-m2x9v → trainlab-worker4 (trn1.32xlarge)")
    );
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn the_solution_passes_static_mode_and_state_checks_are_skipped() {
    // The instance type the placement pins is enough: no --param needed.
    let r = files("solution").grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

#[test]
fn the_eks_solution_passes_every_spec_check_in_static_mode() {
    let r = grade_eks(&eks_files());
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // The shared script is read from solution/finetune-script.yaml.
    assert_eq!(
        outcome(&r, "uses-optimum-neuron").found.as_deref(),
        Some("/opt/train/finetune.py (ConfigMap neuron-finetune-script, key finetune.py): NeuronTrainer, NeuronTrainingArguments")
    );
}

/// optimum-neuron 0.4.5 needs Python < 3.12 and pins the Neuron SDK 2.26 packages (its wheel's
/// METADATA); the EKS image must be that SDK's DLC, and the command installs optimum-neuron.
#[test]
fn the_eks_image_is_the_sdk_optimum_neuron_0_4_5_pins_and_the_command_installs_it() {
    let catalog = Catalog::embedded().unwrap();
    let params = catalog.get(LAB).unwrap().lab.params("eks");
    let image = params["image"].as_str();
    assert_eq!(
        image,
        "public.ecr.aws/neuron/pytorch-training-neuronx:2.8.0-neuronx-py311-sdk2.26.1-ubuntu22.04"
    );
    let c = eks_container();
    assert_eq!(c["image"], image);
    let script = c["args"][0].as_str().unwrap();
    let install = script
        .find("pip install --no-cache-dir \"optimum-neuron[training]==0.4.5\"")
        .expect("the install step");
    assert!(install < script.find("torchrun").unwrap(), "{script}");
    // Neither the stand-in nor its PATH on EKS; the node's memory and /dev/shm.
    assert!(c
        .get("env")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["name"] != "PATH"));
    assert_eq!(c["resources"]["requests"]["memory"], "400Gi");
    assert!(c["resources"]["limits"].get("memory").is_none());
    // One node: its collectives run over NeuronLink, and no EFA is asked for (issue 30).
    assert!(c["resources"]["limits"]
        .get("vpc.amazonaws.com/efa")
        .is_none());
    assert!(c["resources"]["requests"]
        .get("vpc.amazonaws.com/efa")
        .is_none());
    let mounts: Vec<&str> = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mountPath"].as_str().unwrap())
        .collect();
    assert_eq!(mounts, ["/opt/train", "/dev/shm"]);
}

#[test]
fn the_draft_fails_what_it_leaves_as_todo() {
    let r = files("draft")
        .param("instance_type", "trn1.32xlarge")
        .grade(LAB);
    assert_eq!(
        outcome(&r, "neuron-devices").hint.as_deref(),
        Some("partial")
    );
    let o = outcome(&r, "trn-placement");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, None));
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type: *")
    );
    // The TODO comment names optimum.neuron; only code counts.
    assert_eq!(
        outcome(&r, "uses-optimum-neuron").hint.as_deref(),
        Some("plain-trainer")
    );
    let o = outcome(&r, "tp-divides-cores");
    assert_eq!(o.hint.as_deref(), Some("too-large"));
    assert_eq!(o.evidence["cores"], "2");
    assert_eq!(status(&r, "neuron-image"), Status::Pass);
}

#[test]
fn static_mode_without_a_pinned_type_asks_for_the_instance_type() {
    let r = files("solution")
        .edit("Job", JOB, placement(Value::Null, Value::Null))
        .grade(LAB);
    assert_eq!(
        outcome(&r, "neuron-devices").reason,
        Some(Reason::NeedsParam("instance_type".into()))
    );
    let r = files("solution")
        .edit("Job", JOB, placement(Value::Null, Value::Null))
        .param("instance_type", "trn1.32xlarge")
        .grade(LAB);
    assert_eq!(status(&r, "neuron-devices"), Status::Pass);
    assert_eq!(status(&r, "tp-divides-cores"), Status::Pass);
    // A listed type without Neuron devices says so, as a pinned one does (kit `neuron`).
    let r = files("solution")
        .edit("Job", JOB, placement(Value::Null, Value::Null))
        .param("instance_type", "p5.48xlarge")
        .grade(LAB);
    let o = outcome(&r, "neuron-devices");
    assert_eq!((o.status, message(o)), (Status::Skipped, "no-neuron-node"));
    let r = files("solution")
        .edit("Job", JOB, placement(Value::Null, Value::Null))
        .param("instance_type", "trn9.huge")
        .grade(LAB);
    let o = outcome(&r, "neuron-devices");
    assert_eq!(
        (o.status, message(o)),
        (Status::Skipped, "unknown-instance")
    );
    assert_eq!(o.evidence["types"], "trn9.huge");
}

#[test]
fn a_missing_job_or_another_api_version_fails_every_check_once_with_the_missing_text() {
    let r = solved().remove(|o| o.kind() == "Job").grade(LAB);
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Fail, "{}", o.check);
        assert_eq!(o.hint.as_deref(), Some("missing"));
    }
    let r = files("solution")
        .edit("Job", JOB, |v| v["apiVersion"] = json!("batch/v1beta1"))
        .grade(LAB);
    let o = outcome(&r, "trn-placement");
    assert_eq!(o.hint.as_deref(), Some("missing"));
    assert_eq!(
        o.found.as_deref(),
        Some("batch/v1beta1 Job neuron-finetune")
    );
}

// ---------------------------------------------------------------------------------------------
// neuron-devices

#[test]
fn part_of_the_node_fails_only_neuron_devices() {
    let r = edit_job(solved(), |v| {
        neuron(json!({"aws.amazon.com/neuron": 8}))(v);
        // 8 devices = 16 cores, still divisible by TP 8.
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "neuron-devices", Some("partial"));
    assert_eq!(o.found.as_deref(), Some("aws.amazon.com/neuron: 8"));
    assert_eq!(o.evidence["neuron"], "16");
    assert_eq!(o.evidence["neuroncores"], "32");
}

#[test]
fn more_than_the_node_has_or_nothing_fails_with_its_hint() {
    let r = edit_job(solved(), neuron(json!({"aws.amazon.com/neuron": 32}))).grade(LAB);
    let o = outcome(&r, "neuron-devices");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("too-many"))
    );
    let r = edit_job(solved(), neuron(json!({}))).grade(LAB);
    let o = outcome(&r, "neuron-devices");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, None));
    assert_eq!(
        o.found.as_deref(),
        Some("aws.amazon.com/neuron: —, aws.amazon.com/neuroncore: —")
    );
    // Nothing to divide: the TP check says why it cannot judge.
    assert_eq!(message(outcome(&r, "tp-divides-cores")), "no-cores");
}

#[test]
fn every_core_instead_of_every_device_passes() {
    let r = edit_job(solved(), neuron(json!({"aws.amazon.com/neuroncore": 32}))).grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "tp-divides-cores").expected.as_deref(),
        Some("32 % TP == 0 (aws.amazon.com/neuroncore per pod: 32)")
    );
}

#[test]
fn neuron_in_requests_only_is_refused_by_the_api_server() {
    let r = files("solution")
        .edit("Job", JOB, |v| {
            container(v)["resources"] = json!({"requests": {"aws.amazon.com/neuron": 16}})
        })
        .grade(LAB);
    let o = outcome(&r, "neuron-devices");
    assert_eq!(o.hint.as_deref(), Some("rejected"));
    assert!(
        o.found.as_deref().unwrap().contains("Required value"),
        "{o:?}"
    );
}

#[test]
fn a_fraction_of_a_device_is_refused_not_bad_input() {
    let r = files("solution")
        .edit("Job", JOB, |v| {
            container(v)["resources"]["limits"]["aws.amazon.com/neuron"] = json!("500m")
        })
        .grade(LAB);
    let o = outcome(&r, "neuron-devices");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("rejected"))
    );
    assert!(
        o.evidence["field"].contains("aws.amazon.com/neuron"),
        "{o:?}"
    );
}

#[test]
fn two_trainium_types_with_the_same_device_count_pass() {
    let r = edit_job(
        solved(),
        placement(
            Value::Null,
            required(
                json!([{"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
                "operator": "In", "values": ["trn1.32xlarge", "trn1n.32xlarge"]}]}]),
            ),
        ),
    )
    .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "neuron-devices").expected.as_deref(),
        Some("aws.amazon.com/neuron: 16 | aws.amazon.com/neuroncore: 32 (trn1.32xlarge); aws.amazon.com/neuron: 16 | aws.amazon.com/neuroncore: 32 (trn1n.32xlarge)")
    );
}

// ---------------------------------------------------------------------------------------------
// trn-placement

#[test]
fn no_placement_fails_only_trn_placement() {
    // The live cluster's only Neuron node is the trn1: the devices are still judged against it.
    let r = edit_job(solved(), placement(Value::Null, Value::Null)).grade(LAB);
    let o = assert_only_fails(&r, "trn-placement", None);
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type: *")
    );
    assert_eq!(o.evidence["instance"], "trn1.32xlarge");
    assert_eq!(o.evidence["path"], "spec.template.spec.nodeSelector");
}

#[test]
fn inferentia_or_a_gpu_type_fails_with_not_trainium() {
    let r = edit_job(
        solved(),
        placement(
            json!({"node.kubernetes.io/instance-type": "inf2.48xlarge"}),
            Value::Null,
        ),
    )
    .grade(LAB);
    let o = outcome(&r, "trn-placement");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("not-trainium"))
    );
    assert_eq!(o.evidence["values"], "inf2.48xlarge");
    // One term on Trainium, another anywhere: the scheduler may take the second.
    let r = edit_job(
        solved(),
        placement(
            Value::Null,
            required(json!([
                {"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
                    "operator": "In", "values": ["trn1.32xlarge"]}]},
                {"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
                    "operator": "In", "values": ["p5.48xlarge"]}]}
            ])),
        ),
    )
    .grade(LAB);
    assert_eq!(
        outcome(&r, "trn-placement").hint.as_deref(),
        Some("not-trainium")
    );
}

#[test]
fn contradicting_constraints_fail_with_no_node() {
    let r = edit_job(
        solved(),
        placement(
            json!({"node.kubernetes.io/instance-type": "trn1.32xlarge"}),
            required(
                json!([{"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
                "operator": "In", "values": ["trn2.48xlarge"]}]}]),
            ),
        ),
    )
    .grade(LAB);
    assert_eq!(
        outcome(&r, "trn-placement").hint.as_deref(),
        Some("no-node")
    );
}

#[test]
fn karpenter_family_or_accelerator_labels_limit_to_trainium_too() {
    for (key, value) in [
        ("karpenter.k8s.aws/instance-family", "trn1"),
        ("karpenter.k8s.aws/instance-accelerator-name", "trainium"),
        ("karpenter.k8s.aws/instance-category", "trn"),
    ] {
        let label = |n: &mut Value| n["metadata"]["labels"][key] = json!(value);
        let r = edit_job(
            solved().edit("Node", "trainlab-worker4", label),
            placement(
                Value::Null,
                required(json!([{"matchExpressions": [{"key": key, "operator": "In",
                    "values": [value]}]}])),
            ),
        )
        .grade(LAB);
        assert_all_pass(&r);
        assert_eq!(
            outcome(&r, "trn-placement").found.as_deref(),
            Some(format!("{key}: {value}").as_str())
        );
    }
}

// ---------------------------------------------------------------------------------------------
// neuron-image

#[test]
fn the_neuron_training_containers_pass_on_every_profile() {
    for img in [
        "public.ecr.aws/neuron/pytorch-training-neuronx:2.9.0-neuronx-py312-sdk2.27.1-ubuntu24.04",
        "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.8.0-neuronx-py311-sdk2.26.1-ubuntu22.04",
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training-neuronx:2.1.2-transformers4.43.2-neuronx-py310-sdk2.20.0-ubuntu20.04-v1.0",
    ] {
        let r = edit_job(solved(), move |v| container(v)["image"] = json!(img)).grade(LAB);
        assert_all_pass(&r);
        let r = edit_job(solved().add(EKS_NODE), move |v| container(v)["image"] = json!(img))
            .grade(LAB);
        assert_eq!(r.profile, Some(trainlab::facts::Profile::Eks));
        assert_all_pass(&r);
    }
}

#[test]
fn an_inference_or_gpu_container_fails_only_neuron_image() {
    let r = edit_job(solved(), |v| {
        container(v)["image"] =
            json!("public.ecr.aws/neuron/pytorch-inference-neuronx:2.8.0-neuronx-py311-sdk2.26.1-ubuntu22.04")
    })
    .grade(LAB);
    assert_only_fails(&r, "neuron-image", Some("inference"));
    let r = edit_job(solved(), |v| {
        container(v)["image"] = json!("763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.6.0-gpu-py312-cu126-ubuntu22.04-ec2")
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "neuron-image", Some("standin"));
    assert_eq!(o.evidence["standin"], "python:3.13-slim");
    // On EKS the stand-in image is not a Neuron container.
    let r = solved().add(EKS_NODE).grade(LAB);
    assert_only_fails(&r, "neuron-image", None);
}

// ---------------------------------------------------------------------------------------------
// uses-optimum-neuron

#[test]
fn a_script_with_the_plain_trainer_fails_only_uses_optimum_neuron() {
    let r = solved()
        .edit("ConfigMap", SCRIPT_CM, script(PLAIN_SCRIPT))
        .grade(LAB);
    let o = assert_only_fails(&r, "uses-optimum-neuron", Some("plain-trainer"));
    assert_eq!(
        o.found.as_deref(),
        Some("/opt/train/finetune.py (ConfigMap neuron-finetune-script, key finetune.py)")
    );
    let r = solved()
        .edit(
            "ConfigMap",
            SCRIPT_CM,
            script("import torch\nprint(torch.__version__)\n"),
        )
        .grade(LAB);
    assert_only_fails(&r, "uses-optimum-neuron", None);
    // The plain trainer through its module is the plain trainer too (kit `python`).
    let r = solved()
        .edit(
            "ConfigMap",
            SCRIPT_CM,
            script(
                "import transformers as tf
tf.Trainer(model=m).train()
",
            ),
        )
        .grade(LAB);
    assert_only_fails(&r, "uses-optimum-neuron", Some("plain-trainer"));
}

#[test]
fn a_script_trainlab_cannot_read_is_skipped_not_failed() {
    // The ConfigMap it is mounted from is not among the objects.
    let r = solved().remove(|o| o.kind() == "ConfigMap").grade(LAB);
    let o = outcome(&r, "uses-optimum-neuron");
    assert_eq!(o.status, Status::Skipped, "{o:?}");
    assert_eq!(message(o), "script-unseen");
    assert_eq!(o.evidence["script"], "/opt/train/finetune.py");
    assert!(reason(&r, "uses-optimum-neuron").contains("/opt/train/finetune.py"));
    // TP is on the command line: still judged.
    assert_eq!(status(&r, "tp-divides-cores"), Status::Pass);
    // Baked into the image: not mounted from anywhere.
    let r = edit_job(
        solved(),
        set_arg("/opt/train/", Some("/workspace/train.py")),
    )
    .grade(LAB);
    let o = outcome(&r, "uses-optimum-neuron");
    assert_eq!((o.status, message(o)), (Status::Skipped, "script-unseen"));
    for c in SPEC_CHECKS.iter().chain(&STATE_CHECKS) {
        if *c != "uses-optimum-neuron" {
            assert_eq!(status(&r, c), Status::Pass, "{c}");
        }
    }
    // Without a TP flag the unread script may set TP itself: not judged either.
    let r = edit_job(solved(), |v| {
        set_arg("/opt/train/", Some("/workspace/train.py"))(v);
        set_arg("--tensor_parallel_size", None)(v);
    })
    .grade(LAB);
    let o = outcome(&r, "tp-divides-cores");
    assert_eq!((o.status, message(o)), (Status::Skipped, "tp-unseen"));
}

/// The container runs optimum-neuron's own Qwen3 example from a clone of `repo`.
fn clone_and_run(repo: &'static str) -> impl FnOnce(&mut Value) {
    move |v| {
        container(v)["workingDir"] = json!("/workspace");
        container(v)["command"] = json!(["bash", "-c"]);
        container(v)["args"] = json!([format!(
            "git clone --depth 1 --branch v0.4.5 {repo}\n\
             torchrun --nproc_per_node 32 optimum-neuron/examples/training/qwen3/finetune_qwen3.py \\\n\
             --model_id Qwen/Qwen3-0.6B --tensor_parallel_size 8 --bf16 --output_dir /tmp/o"
        )]);
    }
}

#[test]
fn optimum_neuron_s_own_example_cloned_at_a_release_tag_passes() {
    let r = edit_job(
        solved(),
        clone_and_run("https://github.com/huggingface/optimum-neuron.git"),
    )
    .grade(LAB);
    let o = outcome(&r, "uses-optimum-neuron");
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(
        o.found.as_deref(),
        Some("/workspace/optimum-neuron/examples/training/qwen3/finetune_qwen3.py: huggingface/optimum-neuron@v0.4.5 (git clone)")
    );
    assert_eq!(status(&r, "tp-divides-cores"), Status::Pass);
    // Another repository's script is as unreadable as one baked into the image.
    let r = edit_job(
        solved(),
        clone_and_run("https://github.com/someone/optimum-neuron.git"),
    )
    .grade(LAB);
    let o = outcome(&r, "uses-optimum-neuron");
    assert_eq!((o.status, message(o)), (Status::Skipped, "script-unseen"));
}

#[test]
fn a_command_that_starts_no_script_fails_with_no_command() {
    let r = edit_job(solved(), |v| {
        container(v)["command"] = json!(["sleep"]);
        container(v)["args"] = json!(["3600"]);
    })
    .grade(LAB);
    let o = outcome(&r, "uses-optimum-neuron");
    assert_eq!(o.hint.as_deref(), Some("no-command"));
    assert_eq!(message(outcome(&r, "tp-divides-cores")), "no-command");
}

#[test]
fn other_ways_to_run_optimum_neuron_pass() {
    // The script from a subPath mount, started by a relative path from the working directory.
    let r = edit_job(solved(), |v| {
        container(v)["workingDir"] = json!("/workspace");
        set_arg("/opt/train/", Some("finetune.py"))(v);
        for m in container(v)["volumeMounts"].as_array_mut().unwrap() {
            if m["name"] == "script" {
                *m = json!({"name": "script", "mountPath": "/workspace/finetune.py",
                            "subPath": "finetune.py"});
            }
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
    // A ConfigMap key mapped to another file name with `items`.
    let r = edit_job(solved(), |v| {
        set_arg("/opt/train/", Some("/opt/train/run.py"))(v);
        let vols = spec(v)["volumes"].as_array_mut().unwrap();
        for vol in vols {
            if vol["name"] == "script" {
                vol["configMap"]["items"] = json!([{"key": "finetune.py", "path": "run.py"}]);
            }
        }
    })
    .grade(LAB);
    assert_all_pass(&r);
    // A shell that installs optimum-neuron first, then precompiles and trains.
    let r = edit_job(solved(), |v| {
        let args: Vec<String> = container(v)["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        container(v)["command"] = json!(["/bin/bash", "-c"]);
        container(v)["args"] = json!([format!(
            "pip install optimum-neuron && neuron_parallel_compile torchrun {} && torchrun {}",
            args.join(" "),
            args.join(" ")
        )]);
    })
    .grade(LAB);
    assert_all_pass(&r);
    // optimum-cli neuron in the command.
    let r = solved()
        .edit("ConfigMap", SCRIPT_CM, script(PLAIN_SCRIPT))
        .edit("Job", JOB, |v| {
            let args: Vec<String> = container(v)["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            container(v)["command"] = json!(["sh", "-c"]);
            container(v)["args"] = json!([format!(
                "torchrun {} && optimum-cli neuron consolidate /tmp/neuron-finetune /tmp/merged",
                args.join(" ")
            )]);
        })
        .grade(LAB);
    assert_eq!(status(&r, "uses-optimum-neuron"), Status::Pass);
    assert_eq!(
        outcome(&r, "uses-optimum-neuron").found.as_deref(),
        Some("optimum-cli neuron consolidate /tmp/neuron-finetune /tmp/merged")
    );
}

#[test]
fn inline_python_code_is_read_too() {
    let r = edit_job(solved(), |v| {
        container(v)["command"] = json!(["python3", "-c"]);
        container(v)["args"] = json!([
            "from optimum.neuron import NeuronTrainer, NeuronTrainingArguments\n\
             args = NeuronTrainingArguments(output_dir='/tmp/o', tensor_parallel_size=8, bf16=True)\n\
             NeuronTrainer(model=None, args=args).train()\n"
        ]);
    })
    .grade(LAB);
    let o = outcome(&r, "uses-optimum-neuron");
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(
        o.found.as_deref(),
        Some("python -c: NeuronTrainer, NeuronTrainingArguments")
    );
}

// ---------------------------------------------------------------------------------------------
// tp-divides-cores

#[test]
fn a_tp_that_does_not_divide_the_cores_fails_only_tp_divides_cores() {
    let r = edit_job(
        solved(),
        set_arg("--tensor_parallel_size", Some("--tensor_parallel_size=6")),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "tp-divides-cores", None);
    assert_eq!(o.evidence["tp"], "6");
    assert_eq!(o.evidence["cores"], "32");
    let r = edit_job(
        solved(),
        set_arg("--tensor_parallel_size", Some("--tensor_parallel_size=64")),
    )
    .grade(LAB);
    assert_only_fails(&r, "tp-divides-cores", Some("too-large"));
}

#[test]
fn an_unset_variable_or_unreadable_tp_fails_with_its_hint() {
    let r = edit_job(solved(), set_arg("--tensor_parallel_size", None)).grade(LAB);
    assert_only_fails(&r, "tp-divides-cores", Some("unset"));
    let r = edit_job(
        solved(),
        set_arg(
            "--tensor_parallel_size",
            Some("--tensor_parallel_size=$(TP)"),
        ),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "tp-divides-cores", Some("variable"));
    assert_eq!(o.evidence["tp_written"], "--tensor_parallel_size $(TP)");
    let r = edit_job(
        solved(),
        set_arg(
            "--tensor_parallel_size",
            Some("--tensor_parallel_size=eight"),
        ),
    )
    .grade(LAB);
    let o = assert_only_fails(&r, "tp-divides-cores", Some("bad-flag"));
    assert_eq!(o.evidence["written"], "--tensor_parallel_size eight");
}

#[test]
fn other_divisors_spellings_and_a_tp_in_the_script_pass() {
    for arg in [
        "--tensor_parallel_size=4",
        "--tensor_parallel_size=32",
        "--tensor-parallel-size=8",
    ] {
        let r = edit_job(solved(), set_arg("--tensor_parallel_size", Some(arg))).grade(LAB);
        assert_all_pass(&r);
    }
    // Written in the script's NeuronTrainingArguments(...) instead of on the command line.
    let r = solved()
        .edit("Job", JOB, set_arg("--tensor_parallel_size", None))
        .edit(
            "ConfigMap",
            SCRIPT_CM,
            script(
                "from optimum.neuron import NeuronTrainer, NeuronTrainingArguments\n\
                 args = NeuronTrainingArguments(output_dir='o', tensor_parallel_size=8, bf16=True)\n\
                 NeuronTrainer(model=m, args=args).train()\n",
            ),
        )
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "tp-divides-cores").found.as_deref(),
        Some("TP 8 (script: tensor_parallel_size=8)")
    );
}

#[test]
fn no_bf16_is_advice_not_a_failure() {
    let r = edit_job(solved(), set_arg("--bf16", None)).grade(LAB);
    assert_all_pass(&r);
    assert_eq!(r.advice.len(), 1);
    assert_eq!(r.advice[0].id, "no-bf16");
}

// ---------------------------------------------------------------------------------------------
// State.

#[test]
fn a_pod_on_a_gpu_node_fails_only_pod_on_trainium() {
    let r = solved()
        .edit("Pod", POD, |p| {
            p["spec"]["nodeName"] = json!("trainlab-worker")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pod-on-trainium", None);
    assert_eq!(o.evidence["instance_type"], "p5.48xlarge");
    assert_eq!(
        o.found.as_deref(),
        Some("neuron-finetune-m2x9v → trainlab-worker (node.kubernetes.io/instance-type: p5.48xlarge)")
    );
}

#[test]
fn pods_not_placed_yet_are_pending_and_gone_pods_of_a_finished_job_are_skipped() {
    let r = solved()
        .edit("Pod", POD, |p| {
            p["spec"]["nodeName"] = Value::Null;
            p["status"] = json!({"phase": "Pending"});
        })
        .grade(LAB);
    let o = outcome(&r, "pod-on-trainium");
    assert_eq!((o.status, message(o)), (Status::Pending, "scheduling"));
    assert_eq!(outcome(&r, "pods-running").status, Status::Pending);
    assert_eq!(r.count(Status::Fail), 0);

    let r = solved()
        .remove(|o| o.kind() == "Pod")
        .edit(
            "Job",
            JOB,
            |v| {
                v["status"] =
                    json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
            },
        )
        .grade(LAB);
    let o = outcome(&r, "pod-on-trainium");
    assert_eq!((o.status, message(o)), (Status::Skipped, "pods-gone"));
    assert_eq!(status(&r, "pods-running"), Status::Pass);
}

#[test]
fn a_command_the_stand_in_refused_fails_pods_running_with_its_words() {
    let says = "trainlab stand-in: error: argument --per_device_train_batch_size: invalid int value: 'one'";
    let r = solved()
        .edit("Pod", POD, move |p| {
            p["status"]["phase"] = json!("Failed");
            p["status"]["containerStatuses"][0]["state"] =
                json!({"terminated": {"exitCode": 2, "reason": "Error", "message": says}});
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("crashed"));
    assert_eq!(
        o.found.as_deref(),
        Some(format!("{POD}/neuron: Error (exit 2)").as_str())
    );
    assert_eq!(o.evidence["message"], says);
    let r = solved()
        .edit("Pod", POD, |p| {
            p["status"]["phase"] = json!("Pending");
            p["status"]["containerStatuses"][0]["state"] = json!({"waiting": {
                "reason": "ImagePullBackOff",
                "message": "Back-off pulling image \"public.ecr.aws/neuron/pytorch-training-neuronx:latest\""}});
        })
        .grade(LAB);
    assert_only_fails(&r, "pods-running", Some("stuck"));
}
