//! The kind profile without a cluster: the config file, the faked capacity table, the pinned
//! manifests' verification and the `setup kind --dry-run` plan.

use std::path::Path;

use assert_cmd::Command;
use trainlab::profile::kind::{capacity_patches, fake_capacity, KindConfig, EMBEDDED_CONFIG};
use trainlab::profile::pins::{default_pins, fetch, load_pins, sha256_hex, verify};

fn trainlab() -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("KUBECONFIG");
    c
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn kind_config_has_a_control_plane_and_four_labelled_workers() {
    let text = std::fs::read_to_string(root().join("kind-config.yaml")).unwrap();
    let c = KindConfig::parse(&text, "kind-config.yaml").unwrap();
    assert_eq!(c.name.as_deref(), Some("trainlab"));
    assert_eq!(
        c.nodes.iter().filter(|n| n.role == "control-plane").count(),
        1
    );
    let workers: Vec<_> = c.workers().collect();
    let shape: Vec<(&str, &str)> = workers
        .iter()
        .map(|w| {
            (
                w.labels["node.kubernetes.io/instance-type"].as_str(),
                w.labels["topology.kubernetes.io/zone"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("p5.48xlarge", "us-west-2a"),
            ("p5.48xlarge", "us-west-2a"),
            ("p4d.24xlarge", "us-west-2b"),
            ("trn1.32xlarge", "us-west-2c"),
        ]
    );
    for w in &workers {
        assert_eq!(w.labels["karpenter.sh/capacity-type"], "on-demand");
    }
    let gpu_products = workers
        .iter()
        .filter(|w| w.labels.contains_key("nvidia.com/gpu.product"))
        .count();
    assert_eq!(
        gpu_products, 3,
        "the three GPU workers carry a GFD product label"
    );
}

#[test]
fn the_embedded_kind_config_is_the_repository_file() {
    let text = std::fs::read_to_string(root().join("kind-config.yaml")).unwrap();
    assert_eq!(text, EMBEDDED_CONFIG);
}

#[test]
fn a_config_of_another_kind_is_rejected_naming_what_was_expected() {
    let err = KindConfig::parse("kind: Pod\napiVersion: v1\n", "x.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("x.yaml") && err.contains("kind.x-k8s.io/v1alpha4"),
        "{err}"
    );
}

#[test]
fn fake_capacity_follows_the_instance_table() {
    assert_eq!(
        fake_capacity("p5.48xlarge"),
        [("nvidia.com/gpu", 8), ("vpc.amazonaws.com/efa", 32)]
    );
    assert_eq!(
        fake_capacity("p4d.24xlarge"),
        [("nvidia.com/gpu", 8), ("vpc.amazonaws.com/efa", 4)]
    );
    assert_eq!(
        fake_capacity("trn1.32xlarge"),
        [
            ("vpc.amazonaws.com/efa", 8),
            ("aws.amazon.com/neuron", 16),
            ("aws.amazon.com/neuroncore", 32)
        ]
    );
    assert!(fake_capacity("m5.large").is_empty());
}

#[test]
fn nodes_that_already_advertise_their_capacity_need_no_patch() {
    let text = std::fs::read_to_string(root().join("tests/data/kind-nodes/nodes.yaml")).unwrap();
    let objs = trainlab::observe::parse_text(&text, "nodes.yaml").unwrap();
    let refs: Vec<_> = objs.iter().collect();
    let facts = trainlab::verify::views::nodes::NodeFacts::all(&refs).unwrap();
    assert!(capacity_patches(&facts).is_empty());

    // A node whose kubelet re-registered and lost the extended resources gets them back.
    let mut lost = facts.clone();
    lost[1].capacity.remove("vpc.amazonaws.com/efa");
    lost[1].capacity.remove("nvidia.com/gpu");
    let patches = capacity_patches(&lost);
    assert_eq!(patches.len(), 1);
    assert_eq!(patches[0].node, "trainlab-worker");
    assert_eq!(
        patches[0].json_patch(),
        serde_json::json!([
            {"op": "add", "path": "/status/capacity/nvidia.com~1gpu", "value": "8"},
            {"op": "add", "path": "/status/capacity/vpc.amazonaws.com~1efa", "value": "32"}
        ])
    );
}

#[test]
fn default_pins_are_the_researched_releases() {
    let pins = default_pins();
    let names: Vec<_> = pins
        .iter()
        .map(|p| format!("{} {}", p.component, p.version))
        .collect();
    assert_eq!(
        names,
        [
            "Volcano v1.15.1",
            "MPI Operator v0.8.0",
            "Karpenter NodePool CRD v1.14.1",
            "Karpenter NodeClaim CRD v1.14.1",
            "Karpenter EC2NodeClass CRD v1.14.1"
        ]
    );
    assert!(pins
        .iter()
        .all(|p| p.url.starts_with("https://") && p.sha256.len() == 64));
}

#[test]
fn a_manifest_whose_hash_differs_from_its_pin_is_refused_showing_both_hashes() {
    let pins = load_pins(&root().join("tests/data/pins/pins.yaml")).unwrap();
    let good = std::fs::read(root().join("tests/data/pins/operator.yaml")).unwrap();
    verify(&pins[0], &good, "operator.yaml").unwrap();
    let mut bad = good.clone();
    bad[10] ^= 1;
    let err = verify(&pins[0], &bad, "operator.yaml")
        .unwrap_err()
        .to_string();
    assert!(err.contains(&pins[0].sha256), "{err}");
    assert!(err.contains(&sha256_hex(&bad)), "{err}");
    assert_eq!(
        trainlab::Error::Environment(String::new())
            .exit_code()
            .code(),
        3
    );
}

#[test]
fn a_file_missing_from_the_from_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let pins = default_pins();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(fetch(&pins[0], Some(dir.path())))
        .unwrap_err()
        .to_string();
    assert!(err.contains("volcano-development.yaml"), "{err}");
    assert!(err.contains("Volcano v1.15.1"), "{err}");
}

#[test]
fn dry_run_prints_the_whole_plan_and_touches_nothing() {
    let out = trainlab()
        .args(["setup", "kind", "--dry-run"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for p in default_pins() {
        assert!(
            text.contains(&p.url) && text.contains(&p.sha256),
            "{} missing from the plan",
            p.url
        );
    }
    insta::assert_snapshot!("setup_kind_dry_run", text);
}

#[test]
fn dry_run_with_from_names_the_folder() {
    let out = trainlab()
        .args([
            "setup",
            "kind",
            "--dry-run",
            "--skip-create",
            "--from",
            "/srv/pins",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("from /srv/pins") && text.contains("use the existing cluster"),
        "{text}"
    );
}

#[test]
fn setup_refuses_a_context_that_is_not_kind_before_any_request() {
    // No kubeconfig exists at all: refusing must happen before connecting.
    let out = trainlab()
        .args([
            "setup",
            "kind",
            "--skip-create",
            "--context",
            "arn:aws:eks:us-west-2:1:cluster/prod",
        ])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("only touches the context kind-trainlab"),
        "{err}"
    );
}
