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
            "Karpenter EC2NodeClass CRD v1.14.1",
            "JobSet CRD v0.12.0",
            "JobSet (for Kubeflow Trainer) v0.12.0",
            "Kubeflow Trainer TrainJob CRD v2.3.0",
            "Kubeflow Trainer TrainingRuntime CRD v2.3.0",
            "Kubeflow Trainer ClusterTrainingRuntime CRD v2.3.0",
            "Kubeflow Trainer (TrainJob) v2.3.0",
            "Kubeflow Trainer runtimes v2.3.0",
        ]
    );
    let mut built_in = Vec::new();
    for p in &pins {
        match &p.source {
            Source::Download { url, sha256, .. } => {
                assert!(url.starts_with("https://") && sha256.len() == 64, "{p:?}")
            }
            Source::Embedded(m) => built_in.push(m.name),
        }
    }
    assert_eq!(
        built_in,
        [
            "training-operator",
            "jobset",
            "kubeflow-trainer",
            "trainer-runtimes"
        ]
    );
}

/// The default pin of the built-in manifest `name`.
fn built_in_pin(name: &str) -> Pin {
    default_pins()
        .into_iter()
        .find(|p| matches!(p.source, Source::Embedded(m) if m.name == name))
        .unwrap_or_else(|| panic!("no default pin for the built-in {name}"))
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
fn every_embedded_manifest_is_the_repository_file() {
    for m in EMBEDDED {
        let text = std::fs::read_to_string(root().join(m.path)).unwrap();
        assert_eq!(text, m.text, "{}", m.path);
        assert_eq!(embedded(m.name).map(|e| e.path), Some(m.path));
    }
    let names: Vec<&str> = EMBEDDED.iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "training-operator",
            "jobset",
            "kubeflow-trainer",
            "trainer-runtimes"
        ]
    );
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
    let pin = built_in_pin("training-operator");
    let name = deploy["metadata"]["name"].as_str().unwrap();
    assert_eq!(pin.deployments, [format!("{ns}/{name}")]);
    let cap = trainlab::facts::capabilities::CAPABILITIES
        .iter()
        .find(|c| c.name == "training-operator")
        .unwrap();
    assert!(
        cap.controllers.iter().any(|alts| alts.contains(&name)),
        "{:?}",
        cap.controllers
    );
}

#[test]
fn the_pytorchjob_crd_is_installed_before_the_operator_that_watches_it() {
    let pins = default_pins();
    let at = |pred: &dyn Fn(&Pin) -> bool| pins.iter().position(pred).unwrap();
    let crd = at(&|p| p.location().ends_with("/kubeflow.org_pytorchjobs.yaml"));
    let op = at(&|p| matches!(p.source, Source::Embedded(m) if m.name == "training-operator"));
    assert!(crd < op);
    assert_eq!(pins[crd].file_name(), "kubeflow.org_pytorchjobs.yaml");
}

#[test]
fn an_embedded_pin_needs_no_file_in_the_from_folder() {
    let dir = tempfile::tempdir().unwrap();
    let pin = built_in_pin("training-operator");
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

// --- Kubeflow Trainer v2.3.0 and JobSet v0.12.0 --------------------------------------------------

/// The documents of a built-in manifest, as setup parses and applies them.
fn built_in_docs(name: &str) -> Vec<serde_json::Value> {
    let m = embedded(name).expect("built in");
    trainlab::observe::parse_text(m.text, m.path)
        .unwrap()
        .into_iter()
        .map(|o| std::sync::Arc::unwrap_or_clone(o.value))
        .collect()
}

fn named<'a>(docs: &'a [serde_json::Value], kind: &str, name: &str) -> &'a serde_json::Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

const TRAINER_NS: &str = "kubeflow-system";

#[test]
fn the_trainer_and_jobset_crds_are_the_files_at_their_tags() {
    // kubeflow/trainer v2.3.0 and kubernetes-sigs/jobset v0.12.0, size and sha256 of the git
    // blobs (shared/research trainer-v2.md §6, re-computed from the git mirrors).
    let want = [
        (
            "https://raw.githubusercontent.com/kubernetes-sigs/jobset/v0.12.0/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
            823_762,
            "d022b87624512cf0b6741b31b24a2bea9945b5a838b50713af29332c878bb6fe",
        ),
        (
            "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml",
            554_665,
            "a742cafc5b5582640c7e0b7467c024fc237256fbca5ba0a9f0531dfb66d64416",
        ),
        (
            "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml",
            926_556,
            "69b8dbdf60a18e28cddcc2b8dfc4ce72a943e14b531b9389d593118faee4919f",
        ),
        (
            "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml",
            926_571,
            "ec84dc3388fcdbe8c61d3c247a773d14458dd9438e995bea8e50d2a18080eef9",
        ),
    ];
    let pins = default_pins();
    for (url, size, sha) in want {
        let p = pins
            .iter()
            .find(|p| p.location() == url)
            .unwrap_or_else(|| panic!("{url} not pinned"));
        match &p.source {
            Source::Download { bytes, sha256, .. } => {
                assert_eq!((*bytes, sha256.as_str()), (size, sha), "{url}")
            }
            Source::Embedded(m) => panic!("{url} is {}", m.path),
        }
    }
}

#[test]
fn a_trainer_or_jobset_crd_that_differs_from_its_pin_is_refused_naming_both_hashes() {
    // Every pinned download of Trainer and JobSet goes through the one check: a file in --from of
    // the wrong size, or of the right size with other bytes, is refused before anything else.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pins: Vec<Pin> = default_pins()
        .into_iter()
        .filter(|p| {
            p.component.starts_with("Kubeflow Trainer") || p.component.starts_with("JobSet")
        })
        .filter(|p| matches!(p.source, Source::Download { .. }))
        .collect();
    assert_eq!(pins.len(), 4, "the JobSet CRD and the three Trainer CRDs");
    for p in &pins {
        let Source::Download { bytes, sha256, .. } = &p.source else {
            unreachable!()
        };
        for fake in [
            b"apiVersion: v1\n".to_vec(),
            vec![b'#'; usize::try_from(*bytes).unwrap()],
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(p.file_name()), &fake).unwrap();
            let err = rt
                .block_on(fetch(p, Some(dir.path())))
                .unwrap_err()
                .to_string();
            let name = format!("{} {}", p.component, p.version);
            assert!(err.contains(&format!("refusing {name}")), "{err}");
            assert!(err.contains(sha256.as_str()), "{err}");
            assert!(err.contains(&sha256_hex(&fake)), "{err}");
            assert!(err.contains(p.file_name()), "{err}");
        }
    }
}

#[test]
fn jobset_is_installed_before_the_trainer_and_the_trainer_before_its_runtimes() {
    let pins = default_pins();
    let at = |what: &str| {
        pins.iter()
            .position(|p| p.location().ends_with(what))
            .unwrap_or_else(|| panic!("{what} not pinned"))
    };
    let jobset_crd = at("/jobset.x-k8s.io_jobsets.yaml");
    let jobset = at("manifests/kind/jobset.yaml");
    let trainer_crds = [
        at("/trainer.kubeflow.org_trainjobs.yaml"),
        at("/trainer.kubeflow.org_trainingruntimes.yaml"),
        at("/trainer.kubeflow.org_clustertrainingruntimes.yaml"),
    ];
    let trainer = at("manifests/kind/kubeflow-trainer.yaml");
    let runtimes = at("manifests/kind/trainer-runtimes.yaml");
    assert!(jobset_crd < jobset);
    for crd in trainer_crds {
        assert!(jobset < crd && crd < trainer, "{crd}");
    }
    assert!(trainer < runtimes);
    // Trainer comes after the training-operator it is installed beside.
    assert!(at("/kubeflow.org_pytorchjobs.yaml") < jobset_crd);

    // The waits between them: JobSet's controller before the first Trainer CRD, the Trainer's
    // controller before the runtimes; each is a Deployment the earlier pin waits for.
    let jobset_controller = ["kubeflow-system/jobset-controller-manager"];
    let trainer_controller = ["kubeflow-system/kubeflow-trainer-controller-manager"];
    assert_eq!(pins[jobset].deployments, jobset_controller);
    assert_eq!(pins[trainer].deployments, trainer_controller);
    let first_trainer = trainer_crds.into_iter().min().unwrap();
    assert_eq!(pins[first_trainer].after, jobset_controller);
    assert_eq!(pins[runtimes].after, trainer_controller);
    // The other two Trainer CRDs follow the first without another wait.
    for crd in trainer_crds.into_iter().filter(|&c| c != first_trainer) {
        assert!(pins[crd].after.is_empty());
    }
    for (i, p) in pins.iter().enumerate() {
        for d in &p.after {
            assert!(
                pins[..i].iter().any(|q| q.deployments.contains(d)),
                "{}: {d} is no earlier pin's Deployment",
                p.component
            );
        }
    }
}

#[test]
fn the_built_in_trainer_and_jobset_run_the_controllers_the_capability_table_looks_for() {
    let cap = trainlab::facts::capabilities::CAPABILITIES
        .iter()
        .find(|c| c.name == "kubeflow-trainer")
        .unwrap();
    for (manifest, deployment, image) in [
        (
            "jobset",
            "jobset-controller-manager",
            "registry.k8s.io/jobset/jobset:v0.12.0",
        ),
        (
            "kubeflow-trainer",
            "kubeflow-trainer-controller-manager",
            "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0",
        ),
    ] {
        let docs = built_in_docs(manifest);
        let deploys = find(&docs, "Deployment");
        assert_eq!(deploys.len(), 1, "{manifest}");
        let d = deploys[0];
        assert_eq!(d["metadata"]["name"], deployment, "{manifest}");
        assert_eq!(d["metadata"]["namespace"], TRAINER_NS, "{manifest}");
        let containers = d["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap();
        assert_eq!(containers.len(), 1, "{manifest}");
        assert_eq!(containers[0]["name"], "manager");
        assert_eq!(containers[0]["image"], image, "{manifest}");
        // doctor looks for a controller of this name, setup waits for it.
        assert!(
            cap.controllers
                .iter()
                .any(|alts| alts.contains(&deployment)),
            "{deployment} not in {:?}",
            cap.controllers
        );
        assert_eq!(
            built_in_pin(manifest).deployments,
            [format!("{TRAINER_NS}/{deployment}")]
        );
    }
}

#[test]
fn the_built_in_trainer_and_jobset_ship_no_crd_and_nothing_that_clashes_with_the_training_operator()
{
    let v1 = training_operator();
    let v1_names: std::collections::BTreeSet<(String, String)> = v1
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap().to_string(),
                d["metadata"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for manifest in ["jobset", "kubeflow-trainer", "trainer-runtimes"] {
        let docs = built_in_docs(manifest);
        assert!(
            find(&docs, "CustomResourceDefinition").is_empty(),
            "{manifest}: the CRDs are pinned downloads"
        );
        for d in &docs {
            let key = (
                d["kind"].as_str().unwrap().to_string(),
                d["metadata"]["name"].as_str().unwrap().to_string(),
            );
            assert!(!v1_names.contains(&key), "{manifest}: {key:?} clashes");
            // Nothing on the v1 API group kubeflow.org (above all no MPIJob): the text names
            // only trainer.kubeflow.org.
            let text = serde_json::to_string(d).unwrap();
            assert!(
                !text
                    .replace("trainer.kubeflow.org", "")
                    .contains("kubeflow.org"),
                "{manifest}: {key:?} names kubeflow.org"
            );
            assert!(!text.to_ascii_lowercase().contains("mpijob"), "{manifest}");
        }
    }
}

#[test]
fn the_built_in_trainer_and_jobset_objects_fit_together() {
    const CLUSTER_SCOPED: &[&str] = &[
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ];
    for manifest in ["jobset", "kubeflow-trainer"] {
        let docs = built_in_docs(manifest);
        // The Namespace comes with each (JobSet is applied first), and everything namespaced
        // lives in it, as Trainer's overlay moves JobSet there.
        assert_eq!(find(&docs, "Namespace")[0]["metadata"]["name"], TRAINER_NS);
        for d in &docs {
            let kind = d["kind"].as_str().unwrap();
            if CLUSTER_SCOPED.contains(&kind) {
                assert!(d["metadata"]["namespace"].is_null(), "{manifest}: {kind}");
            } else {
                assert_eq!(d["metadata"]["namespace"], TRAINER_NS, "{manifest}: {kind}");
            }
        }
        let deploy = find(&docs, "Deployment")[0];
        let pod = &deploy["spec"]["template"];
        let sa = pod["spec"]["serviceAccountName"].as_str().unwrap();
        named(&docs, "ServiceAccount", sa);
        // Every binding binds that ServiceAccount (or a group) to a role the manifest has.
        for kind in ["ClusterRoleBinding", "RoleBinding"] {
            for b in find(&docs, kind) {
                named(
                    &docs,
                    b["roleRef"]["kind"].as_str().unwrap(),
                    b["roleRef"]["name"].as_str().unwrap(),
                );
                for s in b["subjects"].as_array().unwrap() {
                    if s["kind"] == "ServiceAccount" {
                        assert_eq!(
                            (s["name"].as_str(), s["namespace"].as_str()),
                            (Some(sa), Some(TRAINER_NS)),
                            "{manifest}: {b}"
                        );
                    }
                }
            }
        }
        // The Secrets and ConfigMaps the pod mounts are in the manifest.
        for v in pod["spec"]["volumes"].as_array().unwrap() {
            if let Some(secret) = v["secret"]["secretName"].as_str() {
                named(&docs, "Secret", secret);
            }
            if let Some(cm) = v["configMap"]["name"].as_str() {
                named(&docs, "ConfigMap", cm);
            }
        }
        // Every webhook calls a Service of the manifest that selects the pod and forwards to a
        // port the container listens on.
        let container_ports = pod["spec"]["containers"][0]["ports"].as_array().unwrap();
        let labels = &pod["metadata"]["labels"];
        let mut webhooks = 0;
        for kind in [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ] {
            for c in find(&docs, kind) {
                for w in c["webhooks"].as_array().unwrap() {
                    webhooks += 1;
                    let svc_ref = &w["clientConfig"]["service"];
                    assert_eq!(svc_ref["namespace"], TRAINER_NS, "{manifest}: {w}");
                    let svc = named(&docs, "Service", svc_ref["name"].as_str().unwrap());
                    for (k, v) in svc["spec"]["selector"].as_object().unwrap() {
                        assert_eq!(&labels[k], v, "{manifest}: Service selector {k}");
                    }
                    let port = svc["spec"]["ports"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["port"] == 443)
                        .unwrap_or_else(|| panic!("{manifest}: no port 443"));
                    let target = &port["targetPort"];
                    assert!(
                        container_ports
                            .iter()
                            .any(|p| &p["containerPort"] == target || &p["name"] == target),
                        "{manifest}: targetPort {target}"
                    );
                }
            }
        }
        assert_eq!(webhooks, 4, "{manifest}: JobSet 2+2, Trainer 1+3");
    }
}

#[test]
fn the_built_in_runtimes_are_torch_and_deepspeed_as_the_runtimes_overlay_renders_them() {
    let docs = built_in_docs("trainer-runtimes");
    let names: Vec<&str> = docs
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["torch-distributed", "deepspeed-distributed"]);
    for d in &docs {
        let name = d["metadata"]["name"].as_str().unwrap();
        assert_eq!(d["apiVersion"], "trainer.kubeflow.org/v1alpha1", "{name}");
        assert_eq!(d["kind"], "ClusterTrainingRuntime", "{name}");
        assert_eq!(
            d["metadata"]["labels"]["trainer.kubeflow.org/webhook-validation"], "disabled",
            "{name}"
        );
        // Exactly one replicated Job is the trainer; every image carries a tag, never latest.
        let jobs = d["spec"]["template"]["spec"]["replicatedJobs"]
            .as_array()
            .unwrap();
        let trainers = jobs
            .iter()
            .filter(|j| {
                j["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"]
                    == "trainer"
            })
            .count();
        assert_eq!(trainers, 1, "{name}");
        for j in jobs {
            for c in j["template"]["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
            {
                assert_eq!(c["name"], "node", "{name}");
                let image = c["image"].as_str().unwrap();
                let tag = image.rsplit_once(':').map(|(_, t)| t).unwrap_or("");
                assert!(
                    !tag.is_empty() && !tag.contains('/') && tag != "latest",
                    "{name}: {image}"
                );
                if image.starts_with("ghcr.io/kubeflow/trainer/") {
                    assert_eq!(tag, "v2.3.0", "{name}: {image}");
                }
            }
        }
    }
    let torch = named(&docs, "ClusterTrainingRuntime", "torch-distributed");
    assert_eq!(torch["spec"]["mlPolicy"]["torch"], serde_json::json!({}));
    let ds = named(&docs, "ClusterTrainingRuntime", "deepspeed-distributed");
    assert_eq!(ds["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"], true);
    assert_eq!(
        ds["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
            ["containers"][0]["image"],
        "ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0"
    );
}

#[test]
fn dry_run_lists_the_trainer_pins_in_install_order_in_both_languages() {
    for (lang, waits, built) in [
        ("en", "    first waits for: ", "built into trainlab: "),
        (
            "ja",
            "    適用する前に待機する Deployment: ",
            "trainlab に組み込み: ",
        ),
    ] {
        let out = trainlab()
            .args(["setup", "kind", "--dry-run", "--lang", lang])
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
                .unwrap_or_else(|| panic!("{lang}: {needle:?} missing from:\n{text}"))
        };
        let order = [
            at("  JobSet CRD v0.12.0\n"),
            at(&format!("{built}manifests/kind/jobset.yaml")),
            at("  Kubeflow Trainer TrainJob CRD v2.3.0\n"),
            at(&format!(
                "{waits}kubeflow-system/jobset-controller-manager\n"
            )),
            at("/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml\n"),
            at("/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml\n"),
            at("/v2.3.0/manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml\n"),
            at(&format!("{built}manifests/kind/kubeflow-trainer.yaml")),
            at("ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0"),
            at("  Kubeflow Trainer runtimes v2.3.0\n"),
            at(&format!(
                "{waits}kubeflow-system/kubeflow-trainer-controller-manager\n"
            )),
            at(&format!("{built}manifests/kind/trainer-runtimes.yaml")),
        ];
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "{lang}: {order:?}\n{text}"
        );
        assert!(
            text.contains("registry.k8s.io/jobset/jobset:v0.12.0"),
            "{text}"
        );
        // Beside, not instead of, the training-operator.
        assert!(at("  training-operator (PyTorchJob only) v1.9.4\n") < order[0]);
    }
}
