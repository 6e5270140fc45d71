//! `trainlab setup kind --skip-create` end to end without Docker: the real binary against the
//! Kubernetes API emulator (tests/support/emulator/) seeded with kind-shaped nodes
//! (`kind://` providerIDs, the kind-config.yaml labels) behind a kubeconfig context
//! `kind-trainlab`. Pins what setup sends (asserted from the recorded requests): one JSON patch
//! of node status per worker with exactly the instance table's capacities, server-side apply of
//! every document of the pinned manifests, nothing on a second run; and what it refuses before
//! writing anything: a context that is not `kind-<name>`, a cluster that is not kind, a manifest
//! whose hash differs from its pin, a file missing from `--from`.

use crate::support::emulator;
use crate::support::live::{self, CONTEXT};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use emulator::{Emulator, Recorded};
use serde_json::{json, Value};

const WORKERS: [&str; 4] = [
    "trainlab-worker",
    "trainlab-worker2",
    "trainlab-worker3",
    "trainlab-worker4",
];

// --- helpers ----------------------------------------------------------------------------------

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
}

fn pins_dir() -> PathBuf {
    data("pins")
}

/// The documents of one YAML file, `kind: List` flattened.
fn load(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for v in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
        match v {
            Value::Null => {}
            v if v["kind"] == "List" => out.extend(v["items"].as_array().unwrap().iter().cloned()),
            v => out.push(v),
        }
    }
    out
}

/// Kind nodes as kind creates them: no faked capacity yet.
fn bare_nodes() -> Vec<Value> {
    load(&data("setup/bare-nodes.yaml"))
}

/// The same nodes after a setup (tests/data/kind-nodes: capacity already advertised).
fn ready_nodes() -> Vec<Value> {
    load(&data("kind-nodes/nodes.yaml"))
}

/// What the instance table says each worker of kind-config.yaml advertises, as
/// JSON-patch paths (`~1` escapes `/`) and quantity strings. Written out independently of
/// `trainlab::profile::kind` so the test is an oracle, not a copy.
fn expected_capacity(node: &str) -> BTreeMap<String, String> {
    let table: &[(&str, &str)] = match node {
        "trainlab-worker" | "trainlab-worker2" => {
            &[("nvidia.com/gpu", "8"), ("vpc.amazonaws.com/efa", "32")]
        }
        "trainlab-worker3" => &[("nvidia.com/gpu", "8"), ("vpc.amazonaws.com/efa", "4")],
        "trainlab-worker4" => &[
            ("vpc.amazonaws.com/efa", "8"),
            ("aws.amazon.com/neuron", "16"),
            ("aws.amazon.com/neuroncore", "32"),
        ],
        other => panic!("no capacity expected for {other}"),
    };
    table
        .iter()
        .map(|(r, n)| (r.to_string(), n.to_string()))
        .collect()
}

/// The API path server-side apply targets for one manifest document (the kinds the fixture
/// manifests use).
fn object_path(doc: &Value) -> String {
    let name = doc["metadata"]["name"].as_str().unwrap();
    match (
        doc["apiVersion"].as_str().unwrap(),
        doc["kind"].as_str().unwrap(),
    ) {
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        }
        ("v1", "Namespace") => format!("/api/v1/namespaces/{name}"),
        ("v1", "ConfigMap") => {
            format!(
                "/api/v1/namespaces/{}/configmaps/{name}",
                doc["metadata"]["namespace"].as_str().unwrap()
            )
        }
        (v, k) => panic!("object_path: add {v} {k}"),
    }
}

/// Every document of every fixture manifest in tests/data/pins (the files pins.yaml pins).
fn fixture_documents() -> Vec<Value> {
    let mut docs = load(&pins_dir().join("operator.yaml"));
    docs.extend(load(&pins_dir().join("crds.yaml")));
    assert_eq!(
        docs.len(),
        4,
        "the fixture manifests changed; this test assumes 4 documents"
    );
    docs
}

fn query_pairs(r: &Recorded) -> BTreeMap<String, String> {
    r.query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect()
}

fn is_write(r: &Recorded) -> bool {
    matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")
}

fn writes(requests: &[Recorded]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| is_write(r))
        .map(|r| format!("{} {}?{}", r.method, r.path, r.query))
        .collect()
}

fn node_status_patches(requests: &[Recorded]) -> Vec<&Recorded> {
    requests
        .iter()
        .filter(|r| {
            r.method == "PATCH"
                && r.path.starts_with("/api/v1/nodes/")
                && r.path.ends_with("/status")
        })
        .collect()
}

fn apply_patches(requests: &[Recorded]) -> Vec<&Recorded> {
    requests
        .iter()
        .filter(|r| {
            r.method == "PATCH"
                && r.content_type
                    .as_deref()
                    .is_some_and(|c| c.starts_with("application/apply-patch+yaml"))
        })
        .collect()
}

fn stored<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

/// The tests' emulator and kubeconfig (support `live::Cluster`), with setup's own commands.
struct Cluster {
    live: live::Cluster,
}

impl std::ops::Deref for Cluster {
    type Target = live::Cluster;
    fn deref(&self) -> &live::Cluster {
        &self.live
    }
}

impl Cluster {
    fn new(seed: Vec<Value>) -> Cluster {
        Cluster::with_context(seed, CONTEXT)
    }

    /// The kubeconfig's only (and current) context is `context`.
    fn with_context(seed: Vec<Value>, context: &str) -> Cluster {
        let live = live::Cluster::on_context(Emulator::start(seed), context);
        Cluster { live }
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::of(self.live.cmd(args))
    }

    /// `setup kind --skip-create` with the fixture pins from `from`.
    fn setup_from(&self, from: &Path, extra: &[&str]) -> Run {
        let pins = data("pins/pins.yaml");
        let mut args = vec![
            "setup",
            "kind",
            "--skip-create",
            "--pins",
            pins.to_str().unwrap(),
            "--from",
            from.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--request-timeout", "5s"]);
        self.run(&args)
    }

    fn setup(&self) -> Run {
        self.setup_from(&pins_dir(), &[])
    }

    fn doctor(&self) -> Value {
        let out = self.run(&["doctor", "-o", "json", "--request-timeout", "5s"]);
        assert_eq!(out.code, 0, "doctor failed:\n{}", out.stderr);
        live::json_of(&out.stdout)
    }
}

/// One run of the binary, and how long it took (for lower bounds only: a deadline honoured).
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    fn of(c: Command) -> Run {
        let start = Instant::now();
        let (code, stdout, stderr) = live::output(c);
        Run {
            code,
            stdout,
            stderr,
            took: start.elapsed(),
        }
    }
}

/// A copy of tests/data/pins with one byte of `file` flipped (same size, other hash).
fn tampered_pins(file: &str) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    for f in ["operator.yaml", "crds.yaml", "pins.yaml"] {
        std::fs::copy(pins_dir().join(f), dir.path().join(f)).unwrap();
    }
    let path = dir.path().join(file);
    let mut bytes = std::fs::read(&path).unwrap();
    // A byte inside a comment line, so the file still parses: only the hash can refuse it.
    assert_eq!(bytes[0], b'#');
    bytes[2] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    (dir, bytes)
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The simulated kubelet: on its next status sync a real kubelet sets allocatable from
/// capacity (extended resources have no reservation). The emulator has no kubelet, so a test
/// that reads allocatable after setup does this step itself, as a JSON patch over HTTP.
fn kubelet_status_sync(emu: &Emulator) {
    for node in emu.objects().into_iter().filter(|o| o["kind"] == "Node") {
        let name = node["metadata"]["name"].as_str().unwrap().to_string();
        let ops = json!([{"op": "replace", "path": "/status/allocatable", "value": node["status"]["capacity"]}]);
        let body = ops.to_string();
        let addr = emu.url().trim_start_matches("http://").to_string();
        let request = format!(
            "PATCH /api/v1/nodes/{name}/status HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json-patch+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(
            response.starts_with("HTTP/1.1 200"),
            "kubelet sync of {name}: {response}"
        );
    }
}

// --- the first run: patches and applies -------------------------------------------------------

#[test]
fn setup_patches_exactly_the_table_capacities_and_applies_every_document_server_side() {
    let c = Cluster::new(bare_nodes());
    let out = c.setup();
    assert_eq!(
        out.code, 0,
        "setup failed:\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let requests = c.requests();

    // One JSON patch of node status per worker, adding exactly the table's capacities.
    let patches = node_status_patches(&requests);
    let patched: Vec<&str> = patches
        .iter()
        .map(|r| {
            r.path
                .trim_start_matches("/api/v1/nodes/")
                .trim_end_matches("/status")
        })
        .collect();
    assert_eq!(
        patched.iter().copied().collect::<BTreeSet<_>>(),
        WORKERS.into_iter().collect::<BTreeSet<_>>(),
        "one status patch per worker, none for the control plane"
    );
    assert_eq!(
        patched.len(),
        WORKERS.len(),
        "exactly one patch per worker: {patched:?}"
    );
    for r in &patches {
        let node = r
            .path
            .trim_start_matches("/api/v1/nodes/")
            .trim_end_matches("/status");
        assert_eq!(
            r.content_type.as_deref(),
            Some("application/json-patch+json"),
            "{node}"
        );
        let ops: Value = serde_json::from_str(&r.body)
            .unwrap_or_else(|e| panic!("{node}: body is not JSON ({e}): {}", r.body));
        let mut added = BTreeMap::new();
        for op in ops.as_array().unwrap() {
            assert_eq!(op["op"], "add", "{node}: {op}");
            let path = op["path"].as_str().unwrap();
            let res = path
                .strip_prefix("/status/capacity/")
                .unwrap_or_else(|| panic!("{node}: patches outside status.capacity: {path}"));
            let value = op["value"]
                .as_str()
                .unwrap_or_else(|| panic!("{node}: quantity must be a string: {op}"));
            assert!(
                added
                    .insert(res.replace("~1", "/"), value.to_string())
                    .is_none(),
                "{node}: {res} twice"
            );
        }
        assert_eq!(added, expected_capacity(node), "{node}: {}", r.body);
    }

    // Every document of the fixture manifests, applied server-side by field manager trainlab.
    let applies = apply_patches(&requests);
    for r in &applies {
        let q = query_pairs(r);
        assert_eq!(
            q.get("fieldManager").map(String::as_str),
            Some("trainlab"),
            "{} {}",
            r.path,
            r.query
        );
        assert_eq!(
            q.get("force").map(String::as_str),
            Some("true"),
            "{} {}",
            r.path,
            r.query
        );
        assert!(
            !q.contains_key("dryRun"),
            "setup applies for real: {} {}",
            r.path,
            r.query
        );
    }
    let applied: Vec<&str> = applies.iter().map(|r| r.path.as_str()).collect();
    let docs = fixture_documents();
    let expected: BTreeSet<String> = docs.iter().map(object_path).collect();
    assert_eq!(
        applied
            .iter()
            .map(|p| p.to_string())
            .collect::<BTreeSet<_>>(),
        expected
    );
    assert_eq!(
        applied.len(),
        docs.len(),
        "each document applied once: {applied:?}"
    );

    // CRDs and the Namespace before what lives in it.
    let at = |p: &str| applied.iter().position(|a| *a == p).unwrap();
    assert!(
        at("/api/v1/namespaces/widget-system")
            < at("/api/v1/namespaces/widget-system/configmaps/widget-config")
    );

    // Nothing else was written.
    let other: Vec<String> = requests
        .iter()
        .filter(|r| is_write(r))
        .filter(|r| node_status_patches(std::slice::from_ref(r)).is_empty())
        .filter(|r| apply_patches(std::slice::from_ref(r)).is_empty())
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(other.is_empty(), "unexpected writes: {other:?}");

    // The emulator stores them.
    let objects = c.emu.objects();
    for d in &docs {
        let kind = d["kind"].as_str().unwrap();
        let name = d["metadata"]["name"].as_str().unwrap();
        assert!(
            stored(&objects, kind, name).is_some(),
            "{kind}/{name} not stored"
        );
    }
    let cm = stored(&objects, "ConfigMap", "widget-config").unwrap();
    assert_eq!(cm["metadata"]["namespace"], "widget-system");
    assert_eq!(cm["data"]["mode"], "test");

    // What it did is printed.
    assert!(out.stdout.contains("kind profile ready"), "{}", out.stdout);
    assert!(out.stdout.contains("patched trainlab-worker4: vpc.amazonaws.com/efa=8, aws.amazon.com/neuron=16, aws.amazon.com/neuroncore=32"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("applied Widget operator v0.0.1 (3 documents, server-side)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("applied Gadget CRD v0.0.1 (1 documents, server-side)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("trainlab: using context kind-trainlab"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_capacity_patch_lands_on_the_stored_nodes() {
    let c = Cluster::new(bare_nodes());
    let out = c.setup();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let objects = c.emu.objects();
    let before = bare_nodes();
    for worker in WORKERS {
        let node = stored(&objects, "Node", worker).unwrap();
        let capacity = node["status"]["capacity"].as_object().unwrap();
        for (res, want) in expected_capacity(worker) {
            assert_eq!(
                capacity.get(&res).and_then(Value::as_str),
                Some(want.as_str()),
                "{worker} {res}: {capacity:?}"
            );
        }
        // The rest of the node is as it was: cpu, memory, pods, labels, providerID.
        let was = before
            .iter()
            .find(|n| n["metadata"]["name"] == worker)
            .unwrap();
        for (k, v) in was["status"]["capacity"].as_object().unwrap() {
            assert_eq!(capacity.get(k), Some(v), "{worker} {k}");
        }
        assert_eq!(
            node["metadata"]["labels"], was["metadata"]["labels"],
            "{worker}"
        );
        assert_eq!(node["spec"], was["spec"], "{worker}");
    }
    // The control plane is untouched.
    let cp = stored(&objects, "Node", "trainlab-control-plane").unwrap();
    let was = before
        .iter()
        .find(|n| n["metadata"]["name"] == "trainlab-control-plane")
        .unwrap();
    assert_eq!(cp["status"], was["status"]);
    assert_eq!(
        cp["metadata"]["resourceVersion"],
        was["metadata"]["resourceVersion"]
    );

    // The patched nodes are what tests/data/kind-nodes (the "after setup" fixture) says.
    let after = ready_nodes();
    for worker in WORKERS {
        let node = stored(&objects, "Node", worker).unwrap();
        let want = after
            .iter()
            .find(|n| n["metadata"]["name"] == worker)
            .unwrap();
        assert_eq!(
            node["status"]["capacity"], want["status"]["capacity"],
            "{worker}"
        );
    }
}

// --- the second run: nothing to change --------------------------------------------------------

#[test]
fn a_second_setup_sends_no_node_patch_and_changes_no_applied_object() {
    let c = Cluster::new(bare_nodes());
    let first = c.setup();
    assert_eq!(first.code, 0, "{}", first.stderr);
    let versions = |objects: &[Value]| -> BTreeMap<String, Value> {
        objects
            .iter()
            .map(|o| {
                (
                    format!(
                        "{}/{}/{}",
                        o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]
                    ),
                    o["metadata"]["resourceVersion"].clone(),
                )
            })
            .collect()
    };
    let objects_before = c.emu.objects();
    let before = versions(&objects_before);
    c.emu.clear_requests();

    let second = c.setup();
    assert_eq!(second.code, 0, "{}", second.stderr);
    let requests = c.requests();
    assert!(
        node_status_patches(&requests).is_empty(),
        "second run patched nodes: {:?}",
        writes(&requests)
    );
    assert!(
        second
            .stdout
            .contains("node capacity already right on every node"),
        "{}",
        second.stdout
    );
    // The manifests are applied again (server-side apply is the idempotent way), and change nothing.
    assert_eq!(apply_patches(&requests).len(), fixture_documents().len());
    let objects_after = c.emu.objects();
    assert_eq!(
        versions(&objects_after),
        before,
        "a second setup changed stored objects"
    );
    assert_eq!(objects_after, objects_before);
}

#[test]
fn setup_on_nodes_that_already_advertise_capacity_sends_no_node_patch() {
    let c = Cluster::new(ready_nodes());
    let out = c.setup();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        node_status_patches(&c.requests()).is_empty(),
        "{:?}",
        writes(&c.requests())
    );
}

#[test]
fn a_worker_that_lost_part_of_its_capacity_gets_only_that_back() {
    // A kubelet re-registration zeroes extended resources: efa 0 on one p5 worker.
    let mut nodes = ready_nodes();
    let w2 = nodes
        .iter_mut()
        .find(|n| n["metadata"]["name"] == "trainlab-worker2")
        .unwrap();
    w2["status"]["capacity"]["vpc.amazonaws.com/efa"] = json!("0");
    let c = Cluster::new(nodes);
    let out = c.setup();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = c.requests();
    let patches = node_status_patches(&requests);
    assert_eq!(patches.len(), 1, "{:?}", writes(&requests));
    assert_eq!(patches[0].path, "/api/v1/nodes/trainlab-worker2/status");
    let ops: Value = serde_json::from_str(&patches[0].body).unwrap();
    assert_eq!(
        ops,
        json!([{"op": "add", "path": "/status/capacity/vpc.amazonaws.com~1efa", "value": "32"}])
    );
    let node = stored(&c.emu.objects(), "Node", "trainlab-worker2")
        .cloned()
        .unwrap();
    assert_eq!(node["status"]["capacity"]["vpc.amazonaws.com/efa"], "32");
}

// --- refusals before any request or any write -------------------------------------------------

#[test]
fn a_context_that_is_not_kind_trainlab_is_refused_before_any_request() {
    let c = Cluster::new(bare_nodes());
    for context in [
        "prod",
        "arn:aws:eks:us-west-2:111122223333:cluster/prod",
        "kind-other",
    ] {
        let out = c.run(&[
            "setup",
            "kind",
            "--skip-create",
            "--from",
            pins_dir().to_str().unwrap(),
            "--pins",
            data("pins/pins.yaml").to_str().unwrap(),
            "--context",
            context,
        ]);
        assert_eq!(out.code, 2, "--context {context}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!(
                "only touches the context kind-trainlab; refusing --context {context}"
            )),
            "{}",
            out.stderr
        );
    }
    assert!(
        c.requests().is_empty(),
        "refused contexts still reached the API: {:?}",
        c.requests()
    );
}

#[test]
fn a_kubeconfig_whose_current_context_is_not_kind_is_refused_before_any_request() {
    // The kubeconfig knows only `prod` (its current context): setup looks for kind-trainlab,
    // does not fall back to the current context, and never connects.
    let prod = Cluster::with_context(bare_nodes(), "prod");
    let out = prod.setup();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("context `kind-trainlab` not found"),
        "{}",
        out.stderr
    );
    assert!(prod.requests().is_empty(), "{:?}", prod.requests());
}

#[test]
fn with_prod_current_and_kind_trainlab_present_setup_talks_only_to_kind_trainlab() {
    // Two clusters in one kubeconfig, the current context a production one: setup ignores the
    // current context and writes only through kind-trainlab.
    let prod = Emulator::start(bare_nodes());
    let kind = Emulator::start(bare_nodes());
    let dir = tempfile::tempdir().unwrap();
    let entry = |name: &str, emu: &Emulator| {
        (
            json!({"name": name, "cluster": {"server": emu.url()}}),
            json!({"name": name, "user": {}}),
            json!({"name": name, "context": {"cluster": name, "user": name}}),
        )
    };
    let (pc, pu, px) = entry("prod", &prod);
    let (kc, ku, kx) = entry(CONTEXT, &kind);
    let config = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [pc, kc], "users": [pu, ku], "contexts": [px, kx],
        "current-context": "prod", "preferences": {},
    });
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, serde_saphyr::to_string(&config).unwrap()).unwrap();
    let pins = data("pins/pins.yaml");
    let out = Run::of(live::trainlab(
        &kubeconfig,
        dir.path(),
        &[
            "setup",
            "kind",
            "--skip-create",
            "--pins",
            pins.to_str().unwrap(),
            "--from",
            pins_dir().to_str().unwrap(),
            "--request-timeout",
            "5s",
        ],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        prod.requests().is_empty(),
        "setup reached the current (prod) context: {:?}",
        writes(&prod.requests())
    );
    assert_eq!(node_status_patches(&kind.requests()).len(), 4);
    assert!(
        out.stderr.contains("using context kind-trainlab"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_cluster_whose_nodes_are_not_kind_is_refused_before_any_write() {
    // EKS-shaped nodes behind a context that happens to be called kind-trainlab.
    let mut nodes = bare_nodes();
    for (i, n) in nodes.iter_mut().enumerate() {
        n["spec"]["providerID"] = json!(format!("aws:///us-west-2a/i-0{i:016x}"));
    }
    let c = Cluster::new(nodes);
    let out = c.setup();
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("kind-trainlab does not look like a kind cluster"),
        "{}",
        out.stderr
    );
    let requests = c.requests();
    assert!(writes(&requests).is_empty(), "{:?}", writes(&requests));
    // It did look: the refusal comes from the nodes it listed.
    assert!(
        requests
            .iter()
            .any(|r| r.method == "GET" && r.path == "/api/v1/nodes"),
        "{requests:?}"
    );
}

#[test]
fn a_hash_mismatch_in_any_pinned_file_installs_nothing_and_shows_both_hashes() {
    // The first pinned file (operator.yaml) and the second (crds.yaml): a bad second file must
    // not leave the first one's operator installed, nor nodes patched.
    for file in ["operator.yaml", "crds.yaml"] {
        let (dir, bytes) = tampered_pins(file);
        let c = Cluster::new(bare_nodes());
        let out = c.setup_from(dir.path(), &[]);
        assert_eq!(out.code, 3, "{file}: {}", out.stderr);
        let pinned: Vec<Value> =
            serde_saphyr::from_str(&std::fs::read_to_string(data("pins/pins.yaml")).unwrap())
                .unwrap();
        let pin = pinned
            .iter()
            .find(|p| p["url"].as_str().unwrap().ends_with(file))
            .unwrap();
        let want = pin["sha256"].as_str().unwrap();
        let got = sha256_hex(&bytes);
        assert_ne!(want, got);
        assert!(
            out.stderr.contains(want),
            "{file}: expected hash missing:\n{}",
            out.stderr
        );
        assert!(
            out.stderr.contains(&got),
            "{file}: actual hash missing:\n{}",
            out.stderr
        );
        assert!(
            out.stderr.contains(file),
            "{file}: file not named:\n{}",
            out.stderr
        );
        let requests = c.requests();
        assert!(
            apply_patches(&requests).is_empty(),
            "{file}: applied despite the mismatch: {:?}",
            writes(&requests)
        );
        assert!(
            writes(&requests).is_empty(),
            "{file}: wrote despite the mismatch: {:?}",
            writes(&requests)
        );
        assert!(
            c.emu.objects().iter().all(|o| o["kind"] == "Node"),
            "{file}: objects created"
        );
    }
}

#[test]
fn a_file_missing_from_the_from_folder_is_named_and_nothing_is_installed() {
    // operator.yaml is there and fine; crds.yaml (the second pin) is not.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        pins_dir().join("operator.yaml"),
        dir.path().join("operator.yaml"),
    )
    .unwrap();
    let c = Cluster::new(bare_nodes());
    let out = c.setup_from(dir.path(), &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let missing = dir.path().join("crds.yaml");
    assert!(
        out.stderr.contains(missing.to_str().unwrap()),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Gadget CRD v0.0.1"), "{}", out.stderr);
    let requests = c.requests();
    assert!(
        writes(&requests).is_empty(),
        "wrote with a file missing: {:?}",
        writes(&requests)
    );
}

// --- doctor sees the result -------------------------------------------------------------------

fn missing_fake_capacity(report: &Value) -> BTreeMap<String, Vec<String>> {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let missing = n["missing_fake_capacity"].as_array().unwrap();
            (
                n["name"].as_str().unwrap().to_string(),
                missing
                    .iter()
                    .map(|m| m.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn doctor_reports_missing_fake_capacity_before_setup_and_none_after() {
    let c = Cluster::new(bare_nodes());
    let before = c.doctor();
    assert_eq!(before["profile"], "kind");
    let missing = missing_fake_capacity(&before);
    assert_eq!(missing["trainlab-control-plane"], Vec::<String>::new());
    for worker in WORKERS {
        let want: Vec<String> = expected_capacity(worker)
            .into_iter()
            .map(|(r, n)| format!("{r}: {n}"))
            .collect();
        let mut got = missing[worker].clone();
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want, "{worker}");
    }

    let out = c.setup();
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Right after setup, before the kubelet's next sync, nothing is "lost": doctor says the
    // capacity is there and allocatable is still catching up.
    let between = c.doctor();
    for (node, m) in missing_fake_capacity(&between) {
        assert!(
            m.is_empty(),
            "{node} reported lost right after setup: {m:?}"
        );
    }
    let syncing = between["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| !n["allocatable_pending"].as_array().unwrap().is_empty())
        .count();
    assert_eq!(
        syncing,
        WORKERS.len(),
        "every patched worker waits for its kubelet: {between}"
    );
    // Setup writes status.capacity; the kubelet derives status.allocatable (what doctor and the
    // scheduler read) on its next status sync. The emulator has no kubelet: do that sync here.
    kubelet_status_sync(&c.emu);
    let after = c.doctor();
    for (node, m) in missing_fake_capacity(&after) {
        assert!(m.is_empty(), "{node} still misses {m:?} after setup");
    }
    assert!(after["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n["allocatable_pending"].as_array().unwrap().is_empty()));
    let rows = after["nodes"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|n| n["name"] == name).unwrap();
    assert_eq!(
        (
            row("trainlab-worker")["gpu"].as_i64(),
            row("trainlab-worker")["efa"].as_i64()
        ),
        (Some(8), Some(32))
    );
    assert_eq!(
        (
            row("trainlab-worker3")["gpu"].as_i64(),
            row("trainlab-worker3")["efa"].as_i64()
        ),
        (Some(8), Some(4))
    );
    assert_eq!(
        (
            row("trainlab-worker4")["efa"].as_i64(),
            row("trainlab-worker4")["neuron"].as_i64(),
            row("trainlab-worker4")["neuroncore"].as_i64()
        ),
        (Some(8), Some(16), Some(32))
    );
}

// --- waiting for the pinned Deployments ------------------------------------------------------

fn widget_controller(available: i64) -> Vec<Value> {
    let mut seed = load(&data("setup/widget-controller.yaml"));
    for o in &mut seed {
        if o["kind"] == "Deployment" {
            o["status"]["availableReplicas"] = json!(available);
        }
    }
    seed
}

fn setup_waiting(c: &Cluster, wait: &str) -> Run {
    let pins = data("setup/pins-wait.yaml");
    c.run(&[
        "setup",
        "kind",
        "--skip-create",
        "--pins",
        pins.to_str().unwrap(),
        "--from",
        pins_dir().to_str().unwrap(),
        "--wait-timeout",
        wait,
        "--request-timeout",
        "5s",
    ])
}

#[test]
fn setup_waits_for_a_pinned_deployment_that_is_available() {
    let mut seed = bare_nodes();
    seed.extend(widget_controller(1));
    let c = Cluster::new(seed);
    let out = setup_waiting(&c, "30s");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("operator Deployments available"),
        "{}",
        out.stderr
    );
    let requests = c.requests();
    assert!(
        requests.iter().any(|r| r.method == "GET"
            && r.path == "/apis/apps/v1/namespaces/widget-system/deployments/widget-controller"),
        "{:?}",
        requests
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>()
    );
}

#[test]
fn setup_names_a_pinned_deployment_that_is_not_available_within_wait_timeout() {
    // Absent, then present with no available replica: both time out naming it.
    let mut with_zero = bare_nodes();
    with_zero.extend(widget_controller(0));
    for (what, seed) in [("absent", bare_nodes()), ("0 available", with_zero)] {
        let c = Cluster::new(seed);
        let out = setup_waiting(&c, "2s");
        assert_eq!(out.code, 3, "{what}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("not available after 2s: widget-system/widget-controller"),
            "{what}: {}",
            out.stderr
        );
        // Waited for the deadline (how much longer it took depends on the machine).
        assert!(
            out.took >= Duration::from_secs(2),
            "{what}: took {:?}",
            out.took
        );
        // Capacity and manifests are in place before the wait: re-running continues from there.
        assert_eq!(node_status_patches(&c.requests()).len(), 4, "{what}");
        assert_eq!(
            apply_patches(&c.requests()).len(),
            fixture_documents().len(),
            "{what}"
        );
    }
}

// --- the built-in training-operator manifest -------------------------------------------------

/// Serves the kinds of manifests/kind/training-operator.yaml the emulator does not serve on its
/// own (RBAC and admission registration), as a real API server does.
fn serve_operator_kinds(emu: &Emulator) {
    emu.serve_crd(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
    );
    emu.serve_crd(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    );
    emu.serve_crd(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    );
}

fn setup_embedded(c: &Cluster, from: &Path, wait: &str) -> Run {
    let pins = data("setup/pins-embedded.yaml");
    c.run(&[
        "setup",
        "kind",
        "--skip-create",
        "--pins",
        pins.to_str().unwrap(),
        "--from",
        from.to_str().unwrap(),
        "--wait-timeout",
        wait,
        "--request-timeout",
        "5s",
    ])
}

#[test]
fn the_built_in_training_operator_is_applied_and_waited_for_without_any_file_in_from() {
    let mut seed = bare_nodes();
    seed.extend(load(&data("setup/training-operator-available.yaml")));
    let c = Cluster::new(seed);
    serve_operator_kinds(&c.emu);
    let empty = tempfile::tempdir().unwrap();
    let out = setup_embedded(&c, empty.path(), "30s");
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let docs = load(&root().join("manifests/kind/training-operator.yaml"));
    assert_eq!(docs.len(), 8);
    let requests = c.requests();
    let applied: BTreeSet<(String, String)> = apply_patches(&requests)
        .iter()
        .map(|r| {
            let name = r.path.rsplit('/').next().unwrap().to_string();
            let plural = r.path.rsplit('/').nth(1).unwrap().to_string();
            (plural, name)
        })
        .collect();
    let want: BTreeSet<(String, String)> = docs
        .iter()
        .map(|d| {
            let plural = match d["kind"].as_str().unwrap() {
                "ValidatingWebhookConfiguration" => "validatingwebhookconfigurations".to_string(),
                k => format!("{}s", k.to_ascii_lowercase()),
            };
            (plural, d["metadata"]["name"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(applied, want);
    assert_eq!(apply_patches(&requests).len(), docs.len());
    // No CRD at all, above all not the training-operator's v1 mpijobs.kubeflow.org.
    assert!(
        !requests
            .iter()
            .any(|r| is_write(r) && r.path.contains("customresourcedefinitions")),
        "{:?}",
        writes(&requests)
    );
    // The Namespace first; then the operator's Deployment is waited for.
    let first = apply_patches(&requests)[0].path.clone();
    assert_eq!(first, "/api/v1/namespaces/kubeflow");
    assert!(requests.iter().any(|r| r.method == "GET"
        && r.path == "/apis/apps/v1/namespaces/kubeflow/deployments/training-operator"));
    assert!(
        out.stdout.contains(
            "applied training-operator (PyTorchJob only) v1.9.4 (8 documents, server-side)"
        ),
        "{}",
        out.stdout
    );
    let objects = c.emu.objects();
    let deploy = stored(&objects, "Deployment", "training-operator").unwrap();
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["--enable-scheme=pytorchjob"])
    );
    assert!(stored(
        &objects,
        "ValidatingWebhookConfiguration",
        "validator.training-operator.kubeflow.org"
    )
    .is_some());
}

#[test]
fn setup_names_the_training_operator_when_it_does_not_become_available() {
    let c = Cluster::new(bare_nodes());
    serve_operator_kinds(&c.emu);
    let out = setup_embedded(&c, &pins_dir(), "2s");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not available after 2s: kubeflow/training-operator"),
        "{}",
        out.stderr
    );
}

// --- Kubeflow Trainer and JobSet: each waited for before what needs it --------------------------

/// Serves what the built-in JobSet, Trainer and runtimes manifests apply and the emulator does
/// not serve on its own: RBAC, admission registration, and ClusterTrainingRuntime (whose CRD the
/// default pins download before the Trainer).
fn serve_trainer_kinds(emu: &Emulator) {
    serve_operator_kinds(emu);
    emu.serve_crd("rbac.authorization.k8s.io", "v1", "Role", "roles", true);
    emu.serve_crd(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
    );
    emu.serve_crd(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
    );
    emu.serve_crd(
        "trainer.kubeflow.org",
        "v1alpha1",
        "ClusterTrainingRuntime",
        "clustertrainingruntimes",
        false,
    );
}

/// The JobSet and Trainer controllers, each available (1) or not (0).
fn trainer_controllers(jobset: i64, trainer: i64) -> Vec<Value> {
    let mut seed = load(&data("setup/kubeflow-trainer-available.yaml"));
    for o in &mut seed {
        match o["metadata"]["name"].as_str() {
            Some("jobset-controller-manager") => o["status"]["availableReplicas"] = json!(jobset),
            Some("kubeflow-trainer-controller-manager") => {
                o["status"]["availableReplicas"] = json!(trainer)
            }
            _ => {}
        }
    }
    seed
}

fn setup_trainer(c: &Cluster, wait: &str) -> Run {
    let pins = data("setup/pins-trainer.yaml");
    let empty = tempfile::tempdir().unwrap();
    c.run(&[
        "setup",
        "kind",
        "--skip-create",
        "--pins",
        pins.to_str().unwrap(),
        "--from",
        empty.path().to_str().unwrap(),
        "--wait-timeout",
        wait,
        "--request-timeout",
        "5s",
    ])
}

/// Where, in the recorded requests, each document of a built-in manifest was applied.
fn applied_at(requests: &[Recorded], manifest: &str) -> Vec<usize> {
    let docs = load(&root().join("manifests/kind").join(manifest));
    let names: BTreeSet<String> = docs
        .iter()
        .filter(|d| d["kind"] != "Namespace")
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    let at: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| apply_patches(std::slice::from_ref(r)).len() == 1)
        .filter(|(_, r)| names.contains(r.path.rsplit('/').next().unwrap()))
        .map(|(i, _)| i)
        .collect();
    at
}

/// Where the Deployment `name` in kubeflow-system was read (setup waiting for it).
fn read_at(requests: &[Recorded], name: &str) -> Vec<usize> {
    let path = format!("/apis/apps/v1/namespaces/kubeflow-system/deployments/{name}");
    requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.method == "GET" && r.path == path)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn the_trainer_is_applied_once_jobset_is_available_and_its_runtimes_once_the_trainer_is() {
    let mut seed = bare_nodes();
    seed.extend(trainer_controllers(1, 1));
    let c = Cluster::new(seed);
    serve_trainer_kinds(&c.emu);
    let out = setup_trainer(&c, "30s");
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let requests = c.requests();
    let jobset = applied_at(&requests, "jobset.yaml");
    let trainer = applied_at(&requests, "kubeflow-trainer.yaml");
    let runtimes = applied_at(&requests, "trainer-runtimes.yaml");
    // Every document of each (the shared Namespace aside), once.
    assert_eq!(jobset.len(), 18, "{:?}", writes(&requests));
    assert_eq!(trainer.len(), 12, "{:?}", writes(&requests));
    assert_eq!(runtimes.len(), 2, "{:?}", writes(&requests));
    // JobSet's controller is read after the last JobSet document and before the first Trainer
    // one; the Trainer's after its last document and before the first runtime.
    let jobset_read = read_at(&requests, "jobset-controller-manager");
    let trainer_read = read_at(&requests, "kubeflow-trainer-controller-manager");
    let (last, first) = (
        *jobset.iter().max().unwrap(),
        *trainer.iter().min().unwrap(),
    );
    assert!(
        jobset_read.iter().any(|&r| last < r && r < first),
        "JobSet read at {jobset_read:?}, applied up to {last}, Trainer from {first}"
    );
    let (last, first) = (
        *trainer.iter().max().unwrap(),
        *runtimes.iter().min().unwrap(),
    );
    assert!(
        trainer_read.iter().any(|&r| last < r && r < first),
        "Trainer read at {trainer_read:?}, applied up to {last}, runtimes from {first}"
    );
    for what in [
        "waited for kubeflow-system/jobset-controller-manager before Kubeflow Trainer (TrainJob) v2.3.0",
        "applied Kubeflow Trainer (TrainJob) v2.3.0 (13 documents, server-side)",
        "waited for kubeflow-system/kubeflow-trainer-controller-manager before Kubeflow Trainer runtimes v2.3.0",
        "applied Kubeflow Trainer runtimes v2.3.0 (2 documents, server-side)",
    ] {
        assert!(out.stdout.contains(what), "{what:?} missing from\n{}", out.stdout);
    }
    let objects = c.emu.objects();
    for name in ["torch-distributed", "deepspeed-distributed"] {
        let rt = stored(&objects, "ClusterTrainingRuntime", name).unwrap();
        assert_eq!(
            rt["metadata"]["labels"]["trainer.kubeflow.org/webhook-validation"],
            "disabled"
        );
    }
    for (name, image) in [
        (
            "jobset-controller-manager",
            "registry.k8s.io/jobset/jobset:v0.12.0",
        ),
        (
            "kubeflow-trainer-controller-manager",
            "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0",
        ),
    ] {
        let d = stored(&objects, "Deployment", name).unwrap();
        assert_eq!(d["metadata"]["namespace"], "kubeflow-system");
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["image"],
            image
        );
    }
}

#[test]
fn nothing_of_the_trainer_is_applied_while_jobset_is_not_available() {
    for (what, seed) in [
        ("absent", Vec::new()),
        ("0 available", trainer_controllers(0, 1)),
    ] {
        let mut nodes = bare_nodes();
        nodes.extend(seed);
        let c = Cluster::new(nodes);
        serve_trainer_kinds(&c.emu);
        let out = setup_trainer(&c, "2s");
        assert_eq!(out.code, 3, "{what}: {}", out.stderr);
        assert!(
            out.stderr.contains(
                "not available after 2s: kubeflow-system/jobset-controller-manager, needed before Kubeflow Trainer (TrainJob) v2.3.0"
            ),
            "{what}: {}",
            out.stderr
        );
        let requests = c.requests();
        assert_eq!(applied_at(&requests, "jobset.yaml").len(), 18, "{what}");
        assert!(
            applied_at(&requests, "kubeflow-trainer.yaml").is_empty()
                && applied_at(&requests, "trainer-runtimes.yaml").is_empty(),
            "{what}: {:?}",
            writes(&requests)
        );
    }
}

#[test]
fn the_runtimes_are_not_applied_while_the_trainer_is_not_available() {
    let mut seed = bare_nodes();
    seed.extend(trainer_controllers(1, 0));
    let c = Cluster::new(seed);
    serve_trainer_kinds(&c.emu);
    let out = setup_trainer(&c, "2s");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "not available after 2s: kubeflow-system/kubeflow-trainer-controller-manager, needed before Kubeflow Trainer runtimes v2.3.0"
        ),
        "{}",
        out.stderr
    );
    let requests = c.requests();
    assert_eq!(applied_at(&requests, "kubeflow-trainer.yaml").len(), 12);
    assert!(applied_at(&requests, "trainer-runtimes.yaml").is_empty());
    assert!(!c
        .emu
        .objects()
        .iter()
        .any(|o| o["kind"] == "ClusterTrainingRuntime"));
}
