//! The kind profile without a cluster: the config file, the faked capacity table, the pinned
//! manifests' verification and the `setup kind --dry-run` plan.

use std::path::Path;

use assert_cmd::Command;
use trainlab::profile::kind::{capacity_patches, fake_capacity, KindConfig, EMBEDDED_CONFIG};
use trainlab::profile::pins::{
    default_pins, embedded, fetch, load_pins, sha256_hex, verify, Pin, Source, EMBEDDED,
};

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
    let facts = trainlab::facts::NodeFacts::all(&refs).unwrap();
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
            "training-operator PyTorchJob CRD v1.9.4",
            "training-operator (PyTorchJob only) v1.9.4",
            "Karpenter NodePool CRD v1.14.1",
            "Karpenter NodeClaim CRD v1.14.1",
            "Karpenter EC2NodeClass CRD v1.14.1"
        ]
    );
    for p in &pins {
        match &p.source {
            Source::Download { url, sha256, .. } => {
                assert!(url.starts_with("https://") && sha256.len() == 64, "{p:?}")
            }
            Source::Embedded(m) => assert_eq!(m.name, "training-operator", "{p:?}"),
        }
    }
}

/// The URL and hash of a download pin.
fn download(p: &Pin) -> (&str, &str) {
    match &p.source {
        Source::Download { url, sha256, .. } => (url, sha256),
        Source::Embedded(m) => panic!("{} is embedded", m.name),
    }
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
    assert!(err.contains(download(&pins[0]).1), "{err}");
    assert!(err.contains(&sha256_hex(&bad)), "{err}");
    assert_eq!(trainlab::Error::environment("", "").exit_code().code(), 3);
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
        let shown = match &p.source {
            Source::Download { url, sha256, .. } => text.contains(url) && text.contains(sha256),
            Source::Embedded(m) => text.contains(&format!("built into trainlab: {}", m.path)),
        };
        assert!(shown, "{} missing from the plan", p.location());
    }
    insta::assert_snapshot!("setup_kind_dry_run", text);
}

#[test]
fn dry_run_with_from_checks_the_folder_holds_every_pinned_file() {
    let out = trainlab()
        .args([
            "setup",
            "kind",
            "--dry-run",
            "--skip-create",
            "--from",
            "/nonexistent/pins",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--from /nonexistent/pins: not a folder"),
        "{err}"
    );

    let pins = root().join("tests/data/setup/pins-wait.yaml");
    let from = root().join("tests/data/pins");
    let out = trainlab()
        .args(["setup", "kind", "--dry-run", "--skip-create", "--pins"])
        .arg(&pins)
        .arg("--from")
        .arg(&from)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("from {}", from.display()))
            && text.contains("use the existing cluster")
            && text.contains("2 pinned file(s) found, sizes and sha256 match"),
        "{text}"
    );

    // The default pins are not in that folder: the first missing one is named.
    let out = trainlab()
        .args(["setup", "kind", "--dry-run", "--skip-create", "--from"])
        .arg(&from)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("volcano-development.yaml"), "{err}");
}

#[test]
fn dry_run_with_slinky_names_every_chart_and_version_in_install_order() {
    let out = trainlab()
        .args(["setup", "kind", "--dry-run", "--with", "slinky"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from:\n{text}"))
    };
    let cert = at("helm upgrade --install cert-manager oci://quay.io/jetstack/charts/cert-manager --kube-context kind-trainlab");
    let crds = at("slurm-operator-crds oci://ghcr.io/slinkyproject/charts/slurm-operator-crds");
    let op = at("--install slurm-operator oci://ghcr.io/slinkyproject/charts/slurm-operator ");
    assert!(cert < crds && crds < op, "{text}");
    for c in trainlab::profile::charts::SLINKY {
        assert!(
            text.contains(&format!("{} {}", c.component, c.version)),
            "{text}"
        );
        assert!(text.contains(&format!("--version {}", c.version)), "{text}");
    }
}

#[test]
fn slinky_from_a_folder_without_the_chart_archives_names_the_missing_one() {
    let pins = root().join("tests/data/setup/pins-wait.yaml");
    let from = root().join("tests/data/pins");
    let out = trainlab()
        .args(["setup", "kind", "--dry-run", "--with", "slinky", "--pins"])
        .arg(&pins)
        .arg("--from")
        .arg(&from)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cert-manager-1.19.4.tgz") && err.contains("helm pull"),
        "{err}"
    );
}

#[test]
fn slinky_without_helm_is_an_environment_error_with_the_install_link_before_any_change() {
    let empty = tempfile::tempdir().unwrap();
    let out = trainlab()
        .args(["setup", "kind", "--skip-create", "--with", "slinky"])
        .env("PATH", empty.path())
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("needs helm") && err.contains("https://helm.sh/docs/intro/install/"),
        "{err}"
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

// --- the training-operator (PyTorchJob only) ----------------------------------------------------

fn training_operator() -> Vec<serde_json::Value> {
    let m = embedded("training-operator").expect("built in");
    trainlab::observe::parse_text(m.text, m.path)
        .unwrap()
        .into_iter()
        .map(|o| std::sync::Arc::unwrap_or_clone(o.value))
        .collect()
}

fn find<'a>(docs: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

#[test]
fn the_embedded_training_operator_is_the_repository_file() {
    let m = embedded("training-operator").unwrap();
    let text = std::fs::read_to_string(root().join(m.path)).unwrap();
    assert_eq!(text, m.text);
    assert_eq!(EMBEDDED.len(), 1);
}

#[test]
fn the_training_operator_serves_pytorchjob_only_and_ships_no_crd() {
    let docs = training_operator();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Secret",
            "Service",
            "ValidatingWebhookConfiguration",
            "Deployment"
        ],
        "no CustomResourceDefinition: above all not the v1 mpijobs.kubeflow.org"
    );
    let deploy = find(&docs, "Deployment")[0];
    let c = &deploy["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["args"], serde_json::json!(["--enable-scheme=pytorchjob"]));
    let image = c["image"].as_str().unwrap();
    let (repo, tag) = image.rsplit_once(':').expect("a pinned tag");
    assert_eq!(repo, "ghcr.io/kubeflow/training-v1/training-operator");
    assert!(tag != "latest" && !tag.is_empty(), "{image}");

    // Nothing on other job kinds: the ClusterRole's kubeflow.org rules name pytorchjobs only.
    let role = find(&docs, "ClusterRole")[0];
    for rule in role["rules"].as_array().unwrap() {
        if rule["apiGroups"]
            .as_array()
            .unwrap()
            .contains(&"kubeflow.org".into())
        {
            for r in rule["resources"].as_array().unwrap() {
                assert!(r.as_str().unwrap().starts_with("pytorchjobs"), "{rule}");
            }
        }
    }
    let vwc = find(&docs, "ValidatingWebhookConfiguration")[0];
    assert_eq!(
        vwc["metadata"]["name"],
        "validator.training-operator.kubeflow.org"
    );
    for w in vwc["webhooks"].as_array().unwrap() {
        assert_eq!(
            w["rules"][0]["resources"],
            serde_json::json!(["pytorchjobs"])
        );
        assert_eq!(w["clientConfig"]["service"]["name"], "training-operator");
    }
}

#[test]
fn the_training_operator_objects_fit_together() {
    let docs = training_operator();
    // Everything namespaced lives in the Namespace the manifest creates.
    let ns = find(&docs, "Namespace")[0]["metadata"]["name"]
        .as_str()
        .unwrap();
    for d in &docs {
        let namespaced = !matches!(
            d["kind"].as_str().unwrap(),
            "Namespace" | "ClusterRole" | "ClusterRoleBinding" | "ValidatingWebhookConfiguration"
        );
        if namespaced {
            assert_eq!(d["metadata"]["namespace"], ns, "{}", d["kind"]);
        }
    }
    let deploy = find(&docs, "Deployment")[0];
    let pod = &deploy["spec"]["template"];
    let sa = find(&docs, "ServiceAccount")[0];
    assert_eq!(pod["spec"]["serviceAccountName"], sa["metadata"]["name"]);
    let binding = find(&docs, "ClusterRoleBinding")[0];
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["namespace"], ns);
    assert_eq!(
        binding["roleRef"]["name"],
        find(&docs, "ClusterRole")[0]["metadata"]["name"]
    );
    // The Service selects the pods and forwards 443 to the webhook server's port.
    let svc = find(&docs, "Service")[0];
    for (k, v) in svc["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&pod["metadata"]["labels"][k], v);
    }
    let webhook_port = svc["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["port"] == 443)
        .unwrap();
    let container_ports = &pod["spec"]["containers"][0]["ports"];
    assert!(container_ports
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["containerPort"] == webhook_port["targetPort"]));
    // The certificate Secret the pod mounts is the one the manifest creates.
    let secret = find(&docs, "Secret")[0];
    assert_eq!(
        pod["spec"]["volumes"][0]["secret"]["secretName"],
        secret["metadata"]["name"]
    );
    // setup waits for this Deployment, and doctor looks for a controller of this name.
    let pin = default_pins()
        .into_iter()
        .find(|p| matches!(p.source, Source::Embedded(_)))
        .unwrap();
    let name = deploy["metadata"]["name"].as_str().unwrap();
    assert_eq!(pin.deployments, [format!("{ns}/{name}")]);
    let cap = trainlab::facts::capabilities::CAPABILITIES
        .iter()
        .find(|c| c.name == "training-operator")
        .unwrap();
    assert!(
        cap.controllers.iter().any(|names| names.contains(&name)),
        "{:?}",
        cap.controllers
    );
}

#[test]
fn the_pytorchjob_crd_is_installed_before_the_operator_that_watches_it() {
    let pins = default_pins();
    let at = |pred: &dyn Fn(&Pin) -> bool| pins.iter().position(pred).unwrap();
    let crd = at(&|p| p.location().ends_with("/kubeflow.org_pytorchjobs.yaml"));
    let op = at(&|p| matches!(p.source, Source::Embedded(_)));
    assert!(crd < op);
    assert_eq!(pins[crd].file_name(), "kubeflow.org_pytorchjobs.yaml");
}

#[test]
fn an_embedded_pin_needs_no_file_in_the_from_folder() {
    let dir = tempfile::tempdir().unwrap();
    let pin = default_pins()
        .into_iter()
        .find(|p| matches!(p.source, Source::Embedded(_)))
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let data = rt.block_on(fetch(&pin, Some(dir.path()))).unwrap();
    assert_eq!(data, embedded("training-operator").unwrap().text.as_bytes());
    verify(&pin, &data, "built in").unwrap();
}

#[test]
fn a_pins_file_names_a_download_or_an_embedded_manifest_never_both() {
    let dir = tempfile::tempdir().unwrap();
    let write = |text: &str| {
        let p = dir.path().join("pins.yaml");
        std::fs::write(&p, text).unwrap();
        p
    };
    let ok = load_pins(&write(
        "- {component: op, version: v1, embedded: training-operator, deployments: [kubeflow/training-operator]}\n",
    ))
    .unwrap();
    assert!(matches!(ok[0].source, Source::Embedded(m) if m.name == "training-operator"));

    let unknown = load_pins(&write("- {component: op, version: v1, embedded: nope}\n"))
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("no embedded manifest `nope`") && unknown.contains("training-operator"),
        "{unknown}"
    );
    let both = load_pins(&write(
        "- {component: op, version: v1, embedded: training-operator, url: https://x/y.yaml, bytes: 1, sha256: 9c8d28fded3094a528b06f34734a847f92c4cc0c515d83bee433a14358f9d4d9}\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(both.contains("either url, bytes and sha256"), "{both}");
    let no_hash = load_pins(&write(
        "- {component: op, version: v1, url: https://x/y.yaml, bytes: 1}\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        no_hash.contains("either url, bytes and sha256"),
        "{no_hash}"
    );
    let short = load_pins(&write(
        "- {component: op, version: v1, url: https://x/y.yaml, bytes: 1, sha256: abc}\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(short.contains("not 64 hex digits"), "{short}");
}
