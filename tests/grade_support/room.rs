//! Rooms of learners for the emulator (tests/it/grade.rs, tests/it/grader_rbac.rs, benches/room.rs):
//! a lab's saved state moved into a learner's namespace (`{learner}-{lab}`), cluster-scoped
//! objects the lab asks for (those its `solution/` creates, e.g. the NodePool) renamed with the
//! learner prefix, shared fixtures (the EC2NodeClass) kept once, uids made unique per learner.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
}

/// The objects of every .yaml/.json file under `tests/data/<rel>` (sorted), lists flattened.
pub fn load(rel: &str) -> Vec<Value> {
    let mut files = Vec::new();
    collect_files(&data(rel), &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for v in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
            flatten(v, &mut out);
        }
    }
    out
}

fn collect_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            collect_files(&e.unwrap().path(), out);
        }
    } else if path
        .extension()
        .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
    {
        out.push(path.to_path_buf());
    }
}

fn flatten(v: Value, out: &mut Vec<Value>) {
    if v.is_null() {
        return;
    }
    let is_list = v["kind"].as_str().is_some_and(|k| k.ends_with("List")) && v["items"].is_array();
    if is_list {
        for item in v["items"].as_array().unwrap().clone() {
            flatten(item, out);
        }
    } else {
        out.push(v);
    }
}

/// The gradable labs, from the registry (a new lab joins by its registry line), that have a
/// saved solution state.
pub fn gradable() -> Vec<&'static str> {
    trainlab::labs::VERIFIERS
        .iter()
        .map(|v| v.lab_id())
        .filter(|id| data(&format!("{id}/solution-state")).is_dir())
        .collect()
}

/// Kind nodes and the operator Deployments `setup kind` installs.
pub fn cluster_base() -> Vec<Value> {
    let mut seed = load("kind-nodes");
    seed.extend(load("kind-operators"));
    seed
}

fn is_namespaced(v: &Value) -> bool {
    let api = v["apiVersion"].as_str().unwrap_or_default();
    let kind = v["kind"].as_str().unwrap_or_default();
    trainlab::observe::kinds::ALL
        .iter()
        .find(|k| k.matches(api, kind))
        .map(|k| k.namespaced)
        .unwrap_or(v["metadata"]["namespace"].is_string())
}

/// (kind, name) of the cluster-scoped objects a lab's solution creates.
pub fn asked_for(lab: &str) -> BTreeSet<(String, String)> {
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let b = catalog.find(lab).unwrap();
    let mut out = BTreeSet::new();
    for (path, text) in b.files_under("solution") {
        for o in trainlab::observe::parse_text(text, path).unwrap() {
            if o.kind() != "Namespace" && !is_namespaced(&o.value) {
                out.insert((o.kind().to_string(), o.name().to_string()));
            }
        }
    }
    out
}

/// A learner's copy of a lab's saved state (`tests/data/<lab>/<state>`), and the shared
/// cluster-scoped fixtures of that state.
pub fn learner_state(learner: &str, lab: &str, state: &str) -> (Vec<Value>, Vec<Value>) {
    move_to(
        learner,
        lab,
        load(&format!("{lab}/{state}")),
        &asked_for(lab),
    )
}

pub fn move_to(
    learner: &str,
    lab: &str,
    objs: Vec<Value>,
    asked: &BTreeSet<(String, String)>,
) -> (Vec<Value>, Vec<Value>) {
    let from = format!("trainlab-{lab}");
    let to = format!("{learner}-{lab}");
    let mut renames: HashMap<String, String> = HashMap::new();
    for o in &objs {
        if let Some(uid) = o["metadata"]["uid"].as_str() {
            renames.insert(uid.to_string(), format!("{uid}-{learner}"));
        }
        let key = (
            o["kind"].as_str().unwrap_or_default().to_string(),
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        if asked.contains(&key) {
            renames.insert(key.1.clone(), format!("{learner}-{}", key.1));
        }
    }
    let (mut mine, mut shared) = (Vec::new(), Vec::new());
    for mut o in objs {
        let fixture = !is_namespaced(&o)
            && o["kind"] != "Namespace"
            && !asked.contains(&(
                o["kind"].as_str().unwrap_or_default().to_string(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ));
        if fixture {
            shared.push(o);
            continue;
        }
        rewrite(&mut o, &from, &to, &renames);
        mine.push(o);
    }
    (mine, shared)
}

fn rewrite(v: &mut Value, from: &str, to: &str, renames: &HashMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(n) = renames.get(s.as_str()) {
                *s = n.clone();
            } else if s.contains(from) {
                *s = s.replace(from, to);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rewrite(x, from, to, renames)),
        Value::Object(m) => m.values_mut().for_each(|x| rewrite(x, from, to, renames)),
        _ => {}
    }
}

/// The cluster-scoped objects a lab asks for, as (kind, name).
type Asked = BTreeSet<(String, String)>;

/// A shared cluster: nodes and operators, then for each (learner, labs solved) the solution
/// state of those labs in the learner's namespaces. Shared fixtures appear once.
/// Each lab's solution state and the cluster-scoped objects it asks for are loaded once, however
/// many learners solved it (a bench room has a thousand).
pub fn room(learners: &[(&str, &[&str])]) -> Vec<Value> {
    let mut seed = cluster_base();
    let mut fixtures: HashSet<(String, String)> = HashSet::new();
    let mut loaded: HashMap<&str, (Vec<Value>, Asked)> = HashMap::new();
    for (learner, labs) in learners {
        for lab in *labs {
            let (state, asked) = loaded
                .entry(lab)
                .or_insert_with(|| (load(&format!("{lab}/solution-state")), asked_for(lab)));
            let (mine, shared) = move_to(learner, lab, state.clone(), asked);
            seed.extend(mine);
            for f in shared {
                let key = (
                    f["kind"].as_str().unwrap_or_default().to_string(),
                    f["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                );
                if fixtures.insert(key) {
                    seed.push(f);
                }
            }
        }
    }
    seed
}

/// The object of `kind` in a learner's copy of a lab's saved state, as the learner would create
/// it: without the fields the API server sets (uid, resourceVersion, creation time, generation,
/// status).
pub fn as_created(learner: &str, lab: &str, state: &str, kind: &str) -> Value {
    let mut obj = learner_state(learner, lab, state)
        .0
        .into_iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {lab}'s {state}"));
    if let Some(meta) = obj["metadata"].as_object_mut() {
        for f in ["uid", "resourceVersion", "creationTimestamp", "generation"] {
            meta.remove(f);
        }
    }
    if let Some(o) = obj.as_object_mut() {
        o.remove("status");
    }
    obj
}
