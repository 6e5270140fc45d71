//! The embedded demo room (`grade --demo`): eight learners at different stages of every
//! gradable lab, built from what the binary already carries, so a new lab joins the demo by
//! itself:
//! - *not started*: nothing; *started*: the lab's `starter/`; *draft*: the starter plus the
//!   draft `start` writes; *solution*: the starter plus `solution/` as applied, before the
//!   cluster has done anything with it;
//! - *demo*: the embedded single-learner demo state (`check --demo`), status and pods included,
//!   where it covers the lab (else *solution*).
//!
//! Each learner's objects move to the learner's namespace (`{learner}-{lab}`); cluster-scoped
//! objects the lab asks for (those of `solution/`, e.g. the NodePool) get the learner prefix,
//! shared fixtures (the EC2NodeClass) stay once; uids are made unique per learner.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::catalog::LabBundle;
use crate::observe::{kinds, parse_text, sources, Obj, Observed, Origin, SourceKind};
use crate::plan::learners::{shared_target, Template};
use crate::verify::views::trainer::{self, TrainJob};
use crate::Error;

/// The demo room's learners, in row order.
pub const LEARNERS: [&str; 8] = ["aiko", "ben", "chloe", "dev", "emi", "femi", "gus", "hana"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Stage {
    NotStarted,
    Started,
    Draft,
    Solution,
    Demo,
}

/// Labs numbered up to this one are the first half of the course (learner `emi` has solved
/// them and drafted the rest).
const FIRST_HALF: u32 = 8;

/// Where each demo learner is in the lab numbered `number`. It depends on the lab alone, never on
/// which other labs are graded with it, so the demo room is the same learners in the same states
/// whatever labs are chosen.
fn stage(learner: usize, number: u32) -> Stage {
    use Stage::*;
    let odd = number % 2 == 1;
    match learner {
        0 => Demo,
        1 => Solution,
        2 if odd => Demo,
        2 => Solution,
        3 => Draft,
        4 if number <= FIRST_HALF => Solution,
        4 => Draft,
        5 => Started,
        6 if odd => Draft,
        6 => Started,
        _ => NotStarted,
    }
}

/// The demo room's objects for `labs`: nodes, then each learner's labs.
pub fn observed(labs: &[&LabBundle]) -> Result<Observed, Error> {
    let demo = sources::demo()?;
    let demo_objs: Vec<&Obj> = demo.objects();
    let template = Template::default();
    let mut out: Vec<Obj> = demo_objs
        .iter()
        .filter(|o| o.kind() == "Node")
        .map(|o| (*o).clone())
        .collect();
    let mut shared: HashSet<(String, String)> = HashSet::new();
    for (i, learner) in LEARNERS.iter().enumerate() {
        for b in labs {
            let lab = &b.lab.id;
            let from_demo = demo_state(&demo_objs, lab);
            let stage = match stage(i, b.lab.number) {
                Stage::Demo if from_demo.is_empty() => Stage::Solution,
                s => s,
            };
            let mut objs = match stage {
                Stage::NotStarted => Vec::new(),
                Stage::Started => files(b, "starter")?,
                Stage::Draft => {
                    let mut v = files(b, "starter")?;
                    if let Some(d) = b.lab.task.as_ref().and_then(|t| t.draft.as_deref()) {
                        if let Some(text) = b.files.get(d) {
                            v.extend(parse_text(text, &b.path_of(d))?);
                        }
                    }
                    v
                }
                Stage::Solution => {
                    let mut v = files(b, "starter")?;
                    v.extend(files(b, "solution")?);
                    v
                }
                Stage::Demo => from_demo,
            };
            let asked = asked_for(b)?;
            let target = shared_target(&template, learner, lab);
            for o in move_to(
                &mut objs,
                learner,
                lab,
                &target.namespace,
                &target.name_prefix,
                &asked,
            ) {
                // A shared fixture (cluster-scoped, not asked for) exists once in the room.
                if o.namespace().is_none()
                    && o.kind() != "Namespace"
                    && !shared.insert((o.kind().to_string(), o.name().to_string()))
                {
                    continue;
                }
                out.push(o);
            }
        }
    }
    Ok(Observed::offline(
        SourceKind::Demo,
        format!("embedded demo room ({} learners)", LEARNERS.len()),
        out,
    ))
}

/// The objects of the lab's files under `folder`.
fn files(b: &LabBundle, folder: &str) -> Result<Vec<Obj>, Error> {
    let mut v = Vec::new();
    for (path, text) in b.files_under(folder) {
        v.extend(parse_text(text, &b.path_of(path))?);
    }
    Ok(v)
}

/// The single-learner demo state of a lab: objects in its namespace, the cluster-scoped
/// objects of its demo file (`demo/NN-<lab>.yaml`), and the ClusterTrainingRuntimes its
/// TrainJobs name, from whichever demo file holds them: the demo keeps one `torch-distributed`
/// (in lab 1's file) for the TrainJobs of labs 1, 2, 10 and 11, so a lab graded without lab 1
/// still finds its runtime, as on the cluster.
fn demo_state(objs: &[&Obj], lab: &str) -> Vec<Obj> {
    let ns = crate::catalog::lab_namespace(lab);
    let file = format!("-{lab}.");
    let mut state: Vec<Obj> = objs
        .iter()
        .filter(|o| o.kind() != "Node")
        .filter(|o| {
            o.namespace() == Some(ns.as_str())
                || (o.kind() == "Namespace" && o.name() == ns)
                || (o.namespace().is_none()
                    && matches!(&o.origin, Origin::File { path, .. } if path.contains(&file)))
        })
        .map(|o| (*o).clone())
        .collect();
    let named: BTreeSet<String> = state.iter().filter_map(cluster_runtime_named).collect();
    let runtimes: Vec<Obj> = objs
        .iter()
        .filter(|o| o.kind() == trainer::CLUSTER_RUNTIME_KIND && named.contains(o.name()))
        .filter(|o| {
            !state
                .iter()
                .any(|s| s.kind() == o.kind() && s.name() == o.name())
        })
        .map(|o| (*o).clone())
        .collect();
    state.extend(runtimes);
    state
}

/// The ClusterTrainingRuntime a TrainJob names (`spec.runtimeRef`, defaults applied).
fn cluster_runtime_named(o: &Obj) -> Option<String> {
    if o.kind() != "TrainJob" {
        return None;
    }
    let r = o.parse::<TrainJob>().ok()?.spec.runtime_ref?;
    let cluster_scoped =
        r.kind() == trainer::CLUSTER_RUNTIME_KIND && r.group() == trainer::RUNTIME_GROUP;
    r.name.filter(|_| cluster_scoped)
}

/// (kind, name) of the cluster-scoped objects the lab's solution creates: those a workshop
/// prefixes with the learner's name.
fn asked_for(b: &LabBundle) -> Result<BTreeSet<(String, String)>, Error> {
    Ok(files(b, "solution")?
        .iter()
        .filter(|o| o.kind() != "Namespace" && !is_namespaced(o))
        .map(|o| (o.kind().to_string(), o.name().to_string()))
        .collect())
}

fn is_namespaced(o: &Obj) -> bool {
    if o.namespace().is_some() {
        return true;
    }
    kinds::ALL
        .iter()
        .find(|k| k.matches(o.api_version(), o.kind()))
        .is_some_and(|k| k.namespaced)
}

/// Moves one learner's lab objects from the lab's own namespace into the learner's: namespace
/// strings, the names of the cluster-scoped objects the lab asks for (and references to them),
/// and uids (so owner references stay within the learner).
fn move_to(
    objs: &mut [Obj],
    learner: &str,
    lab: &str,
    namespace: &str,
    prefix: &str,
    asked: &BTreeSet<(String, String)>,
) -> Vec<Obj> {
    let default_ns = crate::catalog::lab_namespace(lab);
    let mut renames: HashMap<String, String> = HashMap::new();
    for o in objs.iter() {
        if let Some(uid) = o.uid() {
            renames.insert(uid.to_string(), derived_uid(learner, uid));
        }
        if asked.contains(&(o.kind().to_string(), o.name().to_string())) {
            renames.insert(o.name().to_string(), format!("{prefix}{}", o.name()));
        }
    }
    objs.iter_mut()
        .map(|o| {
            if is_namespaced(o) && o.namespace().is_none() {
                o.value_mut()["metadata"]["namespace"] = Value::String(default_ns.clone());
            }
            rewrite(o.value_mut(), &default_ns, namespace, &renames);
            let origin = match &o.origin {
                Origin::File { path, doc, item } => Origin::File {
                    path: format!("demo room: {learner}, {path}"),
                    doc: *doc,
                    item: *item,
                },
                Origin::Live => Origin::Live,
            };
            Obj {
                value: o.value.clone(),
                origin,
            }
        })
        .collect()
}

fn rewrite(v: &mut Value, from_ns: &str, to_ns: &str, renames: &HashMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(new) = renames.get(s.as_str()) {
                *s = new.clone();
            } else if s.contains(from_ns) {
                *s = s.replace(from_ns, to_ns);
            }
        }
        Value::Array(items) => {
            for i in items {
                rewrite(i, from_ns, to_ns, renames);
            }
        }
        Value::Object(map) => {
            // Label and annotation keys stay; only values move.
            for (_, val) in map.iter_mut() {
                rewrite(val, from_ns, to_ns, renames);
            }
        }
        _ => {}
    }
}

/// A uid unique to the learner, stable across runs, in the UUID text form.
fn derived_uid(learner: &str, uid: &str) -> String {
    let h = Sha256::digest(format!("{learner}/{uid}").as_bytes());
    let x: String = h.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &x[0..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learners_are_at_different_stages() {
        // Over the whole course (labs 1-15), each learner has a course of their own.
        let rows: Vec<Vec<Stage>> = (0..LEARNERS.len())
            .map(|i| (1..=15).map(|number| stage(i, number)).collect())
            .collect();
        let distinct: HashSet<&Vec<Stage>> = rows.iter().collect();
        assert_eq!(distinct.len(), LEARNERS.len(), "{rows:?}");
    }

    #[test]
    fn a_labs_demo_state_carries_the_cluster_runtime_its_trainjob_names() {
        // One torch-distributed, in lab 1's file, serves the TrainJobs of labs 1, 2, 10 and 11:
        // each lab's state has it once, whichever labs are graded with it.
        let demo = sources::demo().unwrap();
        let objs = demo.objects();
        for lab in [
            "tensor-parallelism",
            "parallelism-3d",
            "bf16",
            "gradient-checkpointing",
        ] {
            let state = demo_state(&objs, lab);
            assert!(state.iter().any(|o| o.kind() == "TrainJob"), "{lab}");
            let runtimes: Vec<&str> = state
                .iter()
                .filter(|o| o.kind() == trainer::CLUSTER_RUNTIME_KIND)
                .map(|o| o.name())
                .collect();
            assert_eq!(runtimes, ["torch-distributed"], "{lab}");
        }
        let gang = demo_state(&objs, "volcano-gang");
        assert!(!gang.is_empty());
        assert!(gang
            .iter()
            .all(|o| o.kind() != trainer::CLUSTER_RUNTIME_KIND));
    }

    #[test]
    fn derived_uids_differ_per_learner_and_keep_the_uuid_form() {
        let a = derived_uid("aiko", "u-1");
        assert_ne!(a, derived_uid("ben", "u-1"));
        assert_eq!(a, derived_uid("aiko", "u-1"));
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
    }
}
