//! Static mode uses the facts a manifest states (issue 31 §6): a pod pinned to an instance type
//! trainlab knows has that type's GPUs, and SageMaker HyperPod's `ml.<type>` names are that type.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Lab 6's EKS answer pinned to `instance_type`, with `gpus` GPUs, in a scratch folder.
fn bionemo_pinned(dir: &Path, instance_type: &str, gpus: u32) -> Vec<PathBuf> {
    let answer = root().join("labs/06-bionemo/solution-eks");
    let job = std::fs::read_to_string(answer.join("bionemo-esm2.yaml")).unwrap();
    let pinned = job.replacen(
        "      tolerations:\n",
        &format!(
            "      nodeSelector:\n        node.kubernetes.io/instance-type: {instance_type}\n      tolerations:\n"
        ),
        1,
    );
    assert_ne!(pinned, job, "the answer has a pod spec to pin");
    let pinned = pinned.replace("nvidia.com/gpu: 8", &format!("nvidia.com/gpu: {gpus}"));
    let out = vec![dir.join("job.yaml"), dir.join("ngc-api-key.yaml")];
    std::fs::write(&out[0], pinned).unwrap();
    std::fs::copy(answer.join("ngc-api-key.yaml"), &out[1]).unwrap();
    out
}

fn gpu_request(files: &[PathBuf]) -> String {
    let out = Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .args(["check", "6", "-o", "json", "--files"])
        .args(files)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let checks = report["outcomes"]
        .as_array()
        .unwrap_or_else(|| panic!("no outcomes: {report}"));
    let c = checks
        .iter()
        .find(|c| c["check"] == "gpu-request")
        .unwrap_or_else(|| panic!("no gpu-request: {report}"));
    format!("{} {}", c["status"].as_str().unwrap_or_default(), c)
}

#[test]
fn a_pod_pinned_to_a_known_gpu_instance_needs_no_gpus_per_node_param() {
    for instance_type in ["p5.48xlarge", "ml.p5.48xlarge"] {
        let dir = tempfile::tempdir().unwrap();
        let graded = gpu_request(&bionemo_pinned(dir.path(), instance_type, 8));
        assert!(graded.starts_with("pass"), "{instance_type}: {graded}");
    }
}

#[test]
fn more_gpus_than_the_pinned_instance_has_fails_naming_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let graded = gpu_request(&bionemo_pinned(dir.path(), "ml.p5.48xlarge", 16));
    assert!(graded.starts_with("fail"), "{graded}");
    assert!(graded.contains("at most 8"), "{graded}");
}

#[test]
fn an_unpinned_pod_still_asks_for_the_param() {
    let dir = tempfile::tempdir().unwrap();
    let files = bionemo_pinned(dir.path(), "p5.48xlarge", 8);
    let text = std::fs::read_to_string(&files[0]).unwrap().replace(
        "      nodeSelector:\n        node.kubernetes.io/instance-type: p5.48xlarge\n",
        "",
    );
    std::fs::write(&files[0], text).unwrap();
    let graded = gpu_request(&files);
    assert!(graded.starts_with("skipped"), "{graded}");
    assert!(graded.contains("gpus_per_node"), "{graded}");
}

/// Lab 7's EKS answer running optimum-neuron's own example from a clone, through a `cd`.
fn neuron_example(dir: &Path, script: &str) -> PathBuf {
    let answer = root().join("labs/07-optimum-neuron/solution-eks/neuron-finetune.yaml");
    let text = std::fs::read_to_string(answer).unwrap();
    let cloned = text.replacen(
        "              torchrun --nproc_per_node=32 /opt/train/finetune.py \\\n",
        &format!("              git clone --branch v0.4.5 https://github.com/huggingface/optimum-neuron.git\n              cd optimum-neuron\n              torchrun --nproc_per_node=32 {script} \\\n"),
        1,
    );
    assert_ne!(cloned, text, "the answer runs torchrun on a script");
    let path = dir.join("neuron-finetune.yaml");
    std::fs::write(&path, cloned).unwrap();
    path
}

fn uses_optimum_neuron(file: &Path) -> serde_json::Value {
    let out = Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .args(["check", "7", "--profile", "eks", "-o", "json", "--files"])
        .arg(file)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "uses-optimum-neuron")
        .cloned()
        .unwrap_or_else(|| panic!("{report}"))
}

#[test]
fn a_relative_script_after_cd_into_a_clone_is_the_clones_example() {
    let dir = tempfile::tempdir().unwrap();
    let file = neuron_example(dir.path(), "examples/training/qwen3/finetune_qwen3.py");
    let c = uses_optimum_neuron(&file);
    assert_eq!(c["status"], "pass", "{c}");
    let found = c["found"].as_str().unwrap_or_default();
    assert!(
        found.contains("/optimum-neuron/examples/training/qwen3/finetune_qwen3.py")
            && found.contains("huggingface/optimum-neuron@v0.4.5"),
        "{c}"
    );
}

#[test]
fn a_script_outside_the_clone_after_cd_is_still_unseen() {
    let dir = tempfile::tempdir().unwrap();
    let file = neuron_example(dir.path(), "../train/finetune.py");
    let c = uses_optimum_neuron(&file);
    assert_eq!(c["status"], "skipped", "{c}");
    assert!(
        c["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("/train/finetune.py"),
        "{c}"
    );
}
