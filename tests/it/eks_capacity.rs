//! What an EKS answer starts, said before it starts (issue 30 §4): `solve` and `start` name the
//! accelerated capacity their objects ask for and go on only with `--yes` or a `y` typed on a
//! terminal; `--dry-run` shows it; `reset` says what it frees. The kind profile's faked
//! accelerators cost nothing and are never asked about.

use crate::support::emulator::Recorded;
use crate::support::live::{Cluster, CONTEXT, LAB_CRDS};

use crate::support::pty::on_terminal;

use serde_json::{json, Value};

fn node(name: &str, instance_type: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": instance_type}},
        "spec": {"providerID": format!("aws:///us-west-2a/i-{name}")},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}
    })
}

fn eks_cluster(seed: Vec<Value>) -> Cluster {
    Cluster::start(seed, &LAB_CRDS)
}

fn writes(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn a_dry_run_of_an_eks_answer_names_the_machines_it_starts() {
    let c = eks_cluster(vec![]);
    let (code, stdout, stderr) = c.run(&["solve", "1", "--dry-run", "--profile", "eks"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("#   2 × p5.48xlarge (16 GPUs, 64 EFA)"),
        "{stdout}"
    );
    assert!(c.requests().is_empty(), "a dry run contacts no cluster");
}

#[test]
fn an_eks_solve_without_yes_off_a_terminal_refuses_before_contacting_the_cluster() {
    let c = eks_cluster(vec![node("a", "p5.48xlarge")]);
    let (code, stdout, stderr) = c.run(&["solve", "1", "--profile", "eks"]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("2 × p5.48xlarge (16 GPUs, 64 EFA)"),
        "{stderr}"
    );
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(c.requests().is_empty(), "{:?}", c.requests());
}

#[test]
fn an_eks_solve_with_yes_says_what_it_starts_and_applies() {
    let c = eks_cluster(vec![node("a", "p5.48xlarge")]);
    let (code, stdout, stderr) = c.run(&["solve", "1", "--profile", "eks", "--yes"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("2 × p5.48xlarge (16 GPUs, 64 EFA)"),
        "{stderr}"
    );
    assert!(!writes(&c.requests()).is_empty(), "applied");
}

#[test]
fn a_kind_solve_is_not_asked_about_faked_accelerators() {
    let c = eks_cluster(vec![]);
    let (code, stdout, stderr) = c.run(&["solve", "1", "--profile", "kind"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("accelerated capacity"), "{stderr}");
}

/// A pod of the lab holding two p5 nodes' worth of GPUs, and one that has finished.
fn lab_pods(ns: &str) -> Vec<Value> {
    let pod = |name: &str, phase: &str| {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
                "containers": [{"name": "w", "image": "x", "resources": {
                    "limits": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}}}]
            },
            "status": {"phase": phase}
        })
    };
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": ns, "labels": {"trainlab.dev/lab": "tensor-parallelism"}}}),
        pod("worker-0", "Running"),
        pod("worker-1", "Pending"),
        pod("done", "Succeeded"),
    ]
}

#[test]
fn reset_says_what_accelerated_capacity_it_frees() {
    let c = eks_cluster(lab_pods("trainlab-tensor-parallelism"));
    let (code, stdout, stderr) = c.run(&["reset", "1", "--yes", "--wait", "0s"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "frees the accelerated capacity its pods hold:\n  2 × p5.48xlarge (16 GPUs, 64 EFA)"
        ),
        "the finished pod holds nothing: {stdout}"
    );
}

#[test]
fn on_a_terminal_an_eks_solve_asks_and_a_no_applies_nothing() {
    let c = eks_cluster(vec![node("a", "p5.48xlarge")]);
    assert!(c.kubeconfig.exists(), "{CONTEXT}");
    // `trainlab solve 1 --profile eks` on a pseudo-terminal, answered `n`.
    let kubeconfig = c.kubeconfig.to_str().unwrap();
    let out = on_terminal(
        &[
            env!("CARGO_BIN_EXE_trainlab"),
            "solve",
            "1",
            "--profile",
            "eks",
            "--kubeconfig",
            kubeconfig,
        ],
        &[("[y/N]", "n\n")],
        "cancelled",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("2 × p5.48xlarge (16 GPUs, 64 EFA)"), "{text}");
    assert!(text.contains("solve cancelled; nothing applied"), "{text}");
    assert!(text.contains("EXIT 0"), "{text}");
    assert!(writes(&c.requests()).is_empty(), "{:?}", c.requests());
}
