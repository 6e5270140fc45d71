//! The in-cluster grader (manifests/grader): its RBAC is what `trainlab rbac` generates from the
//! kinds table and the labs' reads — get/list only, nothing on Secrets — and it is enough: every
//! request the grader Job's own command sends to a room is allowed by it, every rule is used,
//! and with `--namespace-scoped` RBAC (cluster-wide reads of namespaced kinds refused) grading
//! falls back per namespace and grades the same.

use crate::room;
use crate::support::emulator;
use crate::support::live::{self, is_version_or_discovery as is_discovery, LAB_CRDS};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use emulator::{Emulator, Fault, Recorded};
use serde_json::{json, Value};
use trainlab::observe::kinds;

fn manifest(rel: &str) -> PathBuf {
    room::root().join("manifests/grader").join(rel)
}

fn docs(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap()
        .into_iter()
        .filter(|v| !v.is_null())
        .collect()
}

fn trainlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("KUBECONFIG", "/nonexistent")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// (API group, resource) pairs a ClusterRole's rules grant, with their verbs.
fn grants(role: &Value) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for rule in role["rules"].as_array().unwrap() {
        let verbs: BTreeSet<String> = rule["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        for g in rule["apiGroups"].as_array().unwrap() {
            for r in rule["resources"].as_array().unwrap() {
                out.insert(
                    (
                        g.as_str().unwrap().to_string(),
                        r.as_str().unwrap().to_string(),
                    ),
                    verbs.clone(),
                );
            }
        }
    }
    out
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// What grading reads, from the kinds table and the registry, independently of the generator:
/// every gradable lab's reads, Nodes, Namespaces (--learners-from-namespaces) and Deployments
/// (controllers), never Secrets.
fn expected() -> BTreeSet<(String, String)> {
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let mut out = BTreeSet::new();
    for k in [&kinds::NODES, &kinds::NAMESPACES, &kinds::DEPLOYMENTS] {
        out.insert((k.group.to_string(), k.plural.to_string()));
    }
    for v in trainlab::labs::VERIFIERS {
        if !catalog
            .find(v.lab_id())
            .is_some_and(|b| trainlab::plan::is_gradable(&b.lab))
        {
            continue;
        }
        for r in v.reads() {
            if *r.kind != kinds::SECRETS {
                out.insert((r.kind.group.to_string(), r.kind.plural.to_string()));
            }
        }
    }
    out
}

#[test]
fn the_committed_rbac_is_what_trainlab_rbac_generates() {
    let (code, stdout, stderr) = trainlab(&["rbac"]);
    assert_eq!(code, 0, "{stderr}");
    let committed = std::fs::read_to_string(manifest("rbac.yaml")).unwrap();
    assert_eq!(
        committed, stdout,
        "manifests/grader/rbac.yaml is stale: regenerate it with `trainlab rbac > manifests/grader/rbac.yaml`"
    );
}

#[test]
fn the_role_is_get_list_watch_on_exactly_the_kinds_grading_reads_and_nothing_on_secrets() {
    let (_, stdout, _) = trainlab(&["rbac"]);
    let docs = docs(&stdout);
    let role = find(&docs, "ClusterRole", "trainlab-grader");
    let g = grants(role);
    let granted: BTreeSet<(String, String)> = g.keys().cloned().collect();
    assert_eq!(granted, expected());
    for (res, verbs) in &g {
        assert_eq!(
            verbs,
            // watch: `grade --watch` and `--serve` follow a shared cluster through watches.
            &BTreeSet::from(["get".to_string(), "list".to_string(), "watch".to_string()]),
            "{res:?}"
        );
    }
    assert!(!stdout.contains("secrets"), "nothing at all on Secrets");
    assert!(!stdout.contains('*'), "no wildcards");
    assert!(role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r.get("nonResourceURLs").is_none() && r.get("resourceNames").is_none()));

    let sa = find(&docs, "ServiceAccount", "trainlab-grader");
    let binding = find(&docs, "ClusterRoleBinding", "trainlab-grader");
    assert_eq!(binding["roleRef"]["name"], "trainlab-grader");
    assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
    assert_eq!(binding["subjects"][0]["kind"], "ServiceAccount");
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);
    assert_eq!(
        binding["subjects"][0]["namespace"],
        sa["metadata"]["namespace"]
    );
}

#[test]
fn the_job_runs_trainlab_grade_all_as_the_grader() {
    let job = &docs(&std::fs::read_to_string(manifest("job.yaml")).unwrap())[0];
    let (_, rbac, _) = trainlab(&["rbac"]);
    let sa = find(&docs(&rbac), "ServiceAccount", "trainlab-grader").clone();
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["metadata"]["namespace"], sa["metadata"]["namespace"]);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], sa["metadata"]["name"]);
    let c = &pod["containers"][0];
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&args[..4], ["grade", "--all", "-o", "json"]);
    assert!(
        c.get("command").is_none(),
        "the image's entrypoint is trainlab"
    );
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    // The image the Job names is what the Containerfile builds.
    let containerfile = std::fs::read_to_string(room::root().join("Containerfile")).unwrap();
    assert!(containerfile.contains("ENTRYPOINT [\"/usr/local/bin/trainlab\"]"));
    assert!(containerfile.contains("-t trainlab:0.1.0"));
    assert_eq!(c["image"], "trainlab:0.1.0");
}

// --- the role against real requests ---------------------------------------------------------

fn serve_crds(emu: &Emulator) {
    live::serve(emu, &LAB_CRDS);
}

/// A room of alice (every lab solved) and bob (one lab), their namespaces labelled as the Job
/// selects them.
fn workshop() -> Vec<Value> {
    let labs = room::gradable();
    let mut seed = room::room(&[("alice", &labs), ("bob", &labs[..1])]);
    for o in seed.iter_mut() {
        let name = o["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if o["kind"] == "Namespace" && (name.starts_with("alice-") || name.starts_with("bob-")) {
            o["metadata"]["labels"]["trainlab.dev/workshop"] = json!("main");
        }
    }
    seed
}

/// What RBAC sees in a resource request: verb, API group, resource, namespace.
fn attributes(r: &Recorded) -> (String, String, String, Option<String>) {
    let segs: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segs.as_slice() {
        ["api", _, rest @ ..] => ("", rest),
        ["apis", g, _, rest @ ..] => (*g, rest),
        _ => panic!("not a resource request: {}", r.path),
    };
    let (ns, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(ns.to_string()), tail),
        other => (None, other),
    };
    let (resource, named) = match rest {
        [res] => (*res, false),
        [res, _name] => (*res, true),
        _ => panic!("unexpected path {}", r.path),
    };
    let verb = match (r.method.as_str(), named) {
        ("GET", false) if r.query.contains("watch=") => "watch",
        ("GET", false) => "list",
        ("GET", true) => "get",
        (m, _) => panic!("grading sent {m} {}", r.path),
    };
    (verb.into(), group.into(), resource.into(), ns)
}

fn run_job(kubeconfig: &Path) -> (i32, String, String) {
    let job = &docs(&std::fs::read_to_string(manifest("job.yaml")).unwrap())[0];
    let args: Vec<String> = job["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let out = Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("KUBECONFIG", kubeconfig)
        .env(
            "TRAINLAB_CACHE_DIR",
            crate::support::cache_beside(kubeconfig),
        )
        .timeout(Duration::from_secs(120))
        .args(&args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn every_request_of_the_grader_job_is_allowed_by_its_role_and_every_rule_is_used() {
    let (_, rbac, _) = trainlab(&["rbac"]);
    let g = grants(find(&docs(&rbac), "ClusterRole", "trainlab-grader"));
    let emu = Emulator::start(workshop());
    serve_crds(&emu);
    let dir = tempfile::tempdir().unwrap();
    let kc = emu.kubeconfig(dir.path(), "in-cluster");
    let (code, stdout, stderr) = run_job(&kc);
    assert_eq!(code, 0, "{stderr}");
    // The log of the Job is one JSON document (nothing else on either stream).
    let board: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(board["learners"].as_array().unwrap().len(), 2);
    assert!(stderr.is_empty(), "{stderr}");
    let mut used = BTreeSet::new();
    for r in emu.requests() {
        if is_discovery(&r.path) {
            continue; // system:discovery / system:public-info-viewer
        }
        assert!(!r.path.contains("/secrets"), "read Secrets: {}", r.path);
        let (verb, group, resource, _) = attributes(&r);
        let allowed = g
            .get(&(group.clone(), resource.clone()))
            .is_some_and(|verbs| verbs.contains(&verb));
        assert!(
            allowed,
            "the role does not allow {verb} {resource}.{group} ({})",
            r.path
        );
        used.insert((group, resource));
    }
    let mut granted: BTreeSet<(String, String)> = g.keys().cloned().collect();
    // Granted for EKS Auto Mode clusters; the emulated cluster does not serve the kind, so
    // grading here never lists it.
    assert!(granted.remove(&("eks.amazonaws.com".to_string(), "nodeclasses".to_string())));
    // Granted for clusters with Kubeflow Trainer v2 (TrainJobs, their runtimes and JobSets); the
    // emulated cluster here serves the training-operator's PyTorchJob only.
    for (group, resource) in [
        ("trainer.kubeflow.org", "trainjobs"),
        ("trainer.kubeflow.org", "trainingruntimes"),
        ("trainer.kubeflow.org", "clustertrainingruntimes"),
        ("jobset.x-k8s.io", "jobsets"),
    ] {
        assert!(
            granted.remove(&(group.to_string(), resource.to_string())),
            "{resource}.{group} granted"
        );
    }
    assert_eq!(used, granted, "every rule is used by grading");
}

#[test]
fn with_namespace_scoped_rbac_the_room_reads_per_namespace_and_grades_the_same() {
    let labs = room::gradable();
    let (code, rbac, stderr) = trainlab(&["rbac", "--namespace-scoped", "--learners", "alice,bob"]);
    assert_eq!(code, 0, "{stderr}");
    let d = docs(&rbac);
    let cluster = grants(find(&d, "ClusterRole", "trainlab-grader-cluster"));
    let namespaced = grants(find(&d, "ClusterRole", "trainlab-grader-namespaced"));
    let bound: BTreeSet<String> = d
        .iter()
        .filter(|x| x["kind"] == "RoleBinding")
        .map(|x| {
            assert_eq!(x["roleRef"]["name"], "trainlab-grader-namespaced");
            x["metadata"]["namespace"].as_str().unwrap().to_string()
        })
        .collect();
    let want_ns: BTreeSet<String> = ["alice", "bob"]
        .iter()
        .flat_map(|l| labs.iter().map(move |lab| format!("{l}-{lab}")))
        .collect();
    assert_eq!(bound, want_ns);
    assert!(!rbac.contains("secrets"));
    // Together they grant what the cluster-wide role does, no more.
    let all: BTreeSet<(String, String)> =
        cluster.keys().chain(namespaced.keys()).cloned().collect();
    assert_eq!(all, expected());

    // The API server enforces it: cluster-wide LISTs of the namespaced-only kinds are refused.
    let emu = Emulator::start(workshop());
    serve_crds(&emu);
    for (group, resource) in namespaced.keys() {
        if cluster.contains_key(&(group.clone(), resource.clone())) {
            continue;
        }
        let k = kinds::ALL
            .iter()
            .find(|k| k.group == group && k.plural == resource)
            .unwrap();
        let path = if group.is_empty() {
            format!("/api/{}/{resource}", k.version)
        } else {
            format!("/apis/{group}/{}/{resource}", k.version)
        };
        emu.fault(
            Some("GET"),
            &path,
            false,
            Fault::Status(
                403,
                format!("{resource} is forbidden: User \"system:serviceaccount:trainlab-grader:trainlab-grader\" cannot list resource \"{resource}\" in API group \"{group}\" at the cluster scope"),
            ),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let kc = emu.kubeconfig(dir.path(), "in-cluster");
    let out = Command::cargo_bin("trainlab")
        .unwrap()
        .env("KUBECONFIG", &kc)
        .env("TRAINLAB_CACHE_DIR", crate::support::cache_beside(&kc))
        .timeout(Duration::from_secs(120))
        .args(["grade", "--learners", "alice,bob", "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let board: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = board["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("namespace by namespace")),
        "{notes:?}"
    );
    // Every request that was not refused is allowed by the namespace-scoped RBAC.
    for r in emu.requests() {
        if is_discovery(&r.path) {
            continue;
        }
        let (verb, group, resource, ns) = attributes(&r);
        let key = (group.clone(), resource.clone());
        let by_cluster = cluster.get(&key).is_some_and(|v| v.contains(&verb));
        let by_ns = ns.as_ref().is_some_and(|n| bound.contains(n))
            && namespaced.get(&key).is_some_and(|v| v.contains(&verb));
        let refused_cluster_wide = ns.is_none() && namespaced.contains_key(&key) && !by_cluster;
        assert!(
            by_cluster || by_ns || refused_cluster_wide,
            "not allowed: {verb} {resource}.{group} in {ns:?}"
        );
    }
    // alice solved everything: the same as with the cluster-wide role.
    for cell in board["learners"][0]["cells"].as_array().unwrap() {
        assert_eq!(cell["mark"], "done", "{}", cell["id"]);
    }
}
