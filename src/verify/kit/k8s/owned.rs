//! Objects owned by another object, found through `metadata.ownerReferences` by uid.
//!
//! Rules (k8s.io/apimachinery `pkg/apis/meta/v1`):
//! - an object's owners are its `ownerReferences`; the one with `controller: true` is its managing
//!   controller (`GetControllerOf` in controller_ref.go returns it), and the API server allows at
//!   most one such reference ("Only one reference can have Controller set to true",
//!   `ValidateOwnerReferences`, apimachinery `pkg/api/validation/objectmeta.go`);
//! - owners are matched by `uid`, never by name or labels: a learner can create an object with
//!   any name or label, but only the controller writes the uid of the object it acts for;
//! - when a reference with `controller: true` exists, only it counts: the object is "owned by"
//!   its controller, not by objects it merely lists (as garbage-collection dependents do). Without
//!   one, any reference counts;
//! - an owner without a uid (a manifest file in static mode) owns nothing.
//!
//! Terminating objects: `metadata.deletionTimestamp` is set once a graceful deletion was asked
//! for ("set by the server when a graceful deletion is requested by the user", ObjectMeta docs);
//! such an object is on its way out and its controller may already have created its replacement.
//! They are never "current": [`Owned`] lists them apart, so a check can say "pods are terminating"
//! (and wait) instead of judging a pod that is about to disappear.

use serde_json::Value;

use crate::observe::Obj;

/// One entry of `metadata.ownerReferences`, only the fields these rules read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub controller: bool,
}

/// The owner references of an object, skipping entries without a string `uid` (they cannot
/// name an owner).
pub fn owner_refs(o: &Obj) -> Vec<OwnerRef> {
    owner_refs_of(&o.value)
}

fn owner_refs_of(v: &Value) -> Vec<OwnerRef> {
    let text = |r: &Value, k: &str| r[k].as_str().unwrap_or_default().to_string();
    v["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["uid"].as_str().is_some_and(|u| !u.is_empty()))
        .map(|r| OwnerRef {
            api_version: text(r, "apiVersion"),
            kind: text(r, "kind"),
            name: text(r, "name"),
            uid: text(r, "uid"),
            controller: r["controller"].as_bool().unwrap_or(false),
        })
        .collect()
}

/// The managing controller's reference (`GetControllerOf`), if any.
pub fn controller_of(o: &Obj) -> Option<OwnerRef> {
    owner_refs(o).into_iter().find(|r| r.controller)
}

/// The uids that count as this object's owners: the controller's, else every reference's.
pub fn owner_uids(o: &Obj) -> Vec<String> {
    let refs = owner_refs(o);
    match refs.iter().find(|r| r.controller) {
        Some(c) => vec![c.uid.clone()],
        None => refs.into_iter().map(|r| r.uid).collect(),
    }
}

/// Whether `owner` owns `child` (see the module rules). False when the owner has no uid.
pub fn is_owned_by(child: &Obj, owner: &Obj) -> bool {
    let Some(uid) = owner.uid().filter(|u| !u.is_empty()) else {
        return false;
    };
    owner_uids(child).iter().any(|u| u == uid)
}

/// Whether deletion was requested (`metadata.deletionTimestamp` set).
pub fn is_terminating(o: &Obj) -> bool {
    !o.value["metadata"]["deletionTimestamp"].is_null()
}

/// The objects an owner owns, split by whether they are terminating.
#[derive(Debug, Clone, Default)]
pub struct Owned<'a> {
    /// Not terminating: what the owner runs now.
    pub current: Vec<&'a Obj>,
    /// Deletion requested: leaving, maybe already replaced.
    pub terminating: Vec<&'a Obj>,
}

impl<'a> Owned<'a> {
    /// Current first, then terminating.
    pub fn all(&self) -> impl Iterator<Item = &'a Obj> + '_ {
        self.current.iter().chain(self.terminating.iter()).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.current.is_empty() && self.terminating.is_empty()
    }
}

/// Why an owner can own nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoUid {
    /// The owner has no `metadata.uid`: it was read from a file, not from a cluster.
    NotFromACluster,
}

/// The objects among `candidates` that `owner` owns, one level down, in the candidates' order.
/// Err when the owner has no uid (static mode): ownership cannot be known, which is different
/// from owning nothing.
pub fn owned_by<'a>(owner: &Obj, candidates: &[&'a Obj]) -> Result<Owned<'a>, NoUid> {
    if owner.uid().is_none_or(str::is_empty) {
        return Err(NoUid::NotFromACluster);
    }
    let mut out = Owned::default();
    for c in candidates.iter().copied().filter(|c| is_owned_by(c, owner)) {
        if is_terminating(c) {
            out.terminating.push(c);
        } else {
            out.current.push(c);
        }
    }
    Ok(out)
}

/// One object owned by the top owner, with what it owns in turn.
#[derive(Debug, Clone)]
pub struct Branch<'a> {
    pub obj: &'a Obj,
    /// Whether this middle object itself is terminating.
    pub terminating: bool,
    pub children: Owned<'a>,
}

/// Two levels: the `middles` owned by `owner` (MPIJob → launcher Job), each with the `leaves` it
/// owns (Job → Pod). Terminating middles are included and flagged: their pods may still run.
pub fn owned_two_levels<'a>(
    owner: &Obj,
    middles: &[&'a Obj],
    leaves: &[&'a Obj],
) -> Result<Vec<Branch<'a>>, NoUid> {
    let mids = owned_by(owner, middles)?;
    let mut out = Vec::new();
    for m in mids.all() {
        // A middle object read from a cluster has a uid; one without owns nothing.
        let children = owned_by(m, leaves).unwrap_or_default();
        out.push(Branch {
            obj: m,
            terminating: is_terminating(m),
            children,
        });
    }
    Ok(out)
}

/// Every leaf under `owner`, either directly owned or owned through one of `middles`
/// (an MPIJob's worker pods and its launcher Job's pods).
pub fn owned_directly_or_through<'a>(
    owner: &Obj,
    middles: &[&'a Obj],
    leaves: &[&'a Obj],
) -> Result<Owned<'a>, NoUid> {
    let mut out = owned_by(owner, leaves)?;
    for b in owned_two_levels(owner, middles, leaves)? {
        out.current.extend(b.children.current);
        out.terminating.extend(b.children.terminating);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;

    fn obj(v: serde_json::Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    fn owner(kind: &str, name: &str, uid: Option<&str>) -> Obj {
        let mut meta = serde_json::json!({"name": name});
        if let Some(u) = uid {
            meta["uid"] = u.into();
        }
        obj(serde_json::json!({"apiVersion": "v1", "kind": kind, "metadata": meta}))
    }

    fn child(name: &str, refs: serde_json::Value, terminating: bool) -> Obj {
        let mut meta = serde_json::json!({"name": name, "uid": format!("uid-{name}"), "ownerReferences": refs});
        if terminating {
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z".into();
        }
        obj(serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta}))
    }

    fn names<'a>(v: &[&'a Obj]) -> Vec<&'a str> {
        v.iter().map(|o| o.name()).collect()
    }

    #[test]
    fn ownership_is_by_uid_not_by_name() {
        let job = owner("Job", "train", Some("u-1"));
        let real = child(
            "p0",
            serde_json::json!([{"kind": "Job", "name": "other-name", "uid": "u-1", "controller": true}]),
            false,
        );
        let forged = child(
            "p1",
            serde_json::json!([{"kind": "Job", "name": "train", "uid": "u-2", "controller": true}]),
            false,
        );
        let orphan = child("p2", serde_json::json!(null), false);
        let all = [&real, &forged, &orphan];
        let owned = owned_by(&job, &all).unwrap();
        assert_eq!(names(&owned.current), ["p0"]);
        assert!(owned.terminating.is_empty());
    }

    #[test]
    fn the_controller_reference_wins_over_other_owners() {
        let job = owner("Job", "train", Some("u-job"));
        let other = owner("ConfigMap", "keep", Some("u-cm"));
        let pod = child(
            "p",
            serde_json::json!([
                {"kind": "ConfigMap", "name": "keep", "uid": "u-cm"},
                {"kind": "Job", "name": "train", "uid": "u-job", "controller": true}
            ]),
            false,
        );
        assert!(is_owned_by(&pod, &job));
        assert!(!is_owned_by(&pod, &other));
        assert_eq!(controller_of(&pod).map(|r| r.kind), Some("Job".into()));
        // Without a controller reference every owner counts.
        let shared = child(
            "s",
            serde_json::json!([{"uid": "u-cm"}, {"uid": "u-job", "controller": false}]),
            false,
        );
        assert!(is_owned_by(&shared, &job));
        assert!(is_owned_by(&shared, &other));
        assert_eq!(controller_of(&shared), None);
    }

    #[test]
    fn terminating_pods_are_kept_apart() {
        let job = owner("Job", "train", Some("u-1"));
        let refs = serde_json::json!([{"uid": "u-1", "controller": true}]);
        let old = child("p-old", refs.clone(), true);
        let new = child("p-new", refs, false);
        let owned = owned_by(&job, &[&old, &new]).unwrap();
        assert_eq!(names(&owned.current), ["p-new"]);
        assert_eq!(names(&owned.terminating), ["p-old"]);
        assert_eq!(
            owned.all().map(|o| o.name()).collect::<Vec<_>>(),
            ["p-new", "p-old"]
        );
        assert!(is_terminating(&old));
        assert!(!is_terminating(&new));
    }

    #[test]
    fn an_owner_without_uid_cannot_own() {
        let from_file = owner("Job", "train", None);
        let pod = child("p", serde_json::json!([{"uid": "u-1"}]), false);
        assert_eq!(
            owned_by(&from_file, &[&pod]).unwrap_err(),
            NoUid::NotFromACluster
        );
        assert!(!is_owned_by(&pod, &from_file));
        // A reference with an empty uid names nobody.
        let empty_uid_owner = owner("Job", "x", Some(""));
        let empty_ref = child("q", serde_json::json!([{"uid": ""}]), false);
        assert!(!is_owned_by(&empty_ref, &empty_uid_owner));
        assert!(owner_refs(&empty_ref).is_empty());
    }

    #[test]
    fn malformed_owner_references_are_ignored_not_fatal() {
        let job = owner("Job", "train", Some("u-1"));
        for refs in [
            serde_json::json!("not a list"),
            serde_json::json!([1, "x", {"uid": 7}]),
            serde_json::json!({"uid": "u-1"}),
        ] {
            let p = child("p", refs, false);
            assert!(!is_owned_by(&p, &job));
        }
    }

    #[test]
    fn two_levels_mpijob_to_job_to_pod() {
        let mpijob = owner("MPIJob", "nccl", Some("u-mpi"));
        let launcher = child(
            "launcher",
            serde_json::json!([{"uid": "u-mpi", "controller": true}]),
            false,
        );
        let stray_job = child(
            "stray",
            serde_json::json!([{"uid": "u-other", "controller": true}]),
            false,
        );
        let launcher_pod = child(
            "launcher-pod",
            serde_json::json!([{"uid": "uid-launcher", "controller": true}]),
            false,
        );
        let old_launcher_pod = child(
            "launcher-pod-old",
            serde_json::json!([{"uid": "uid-launcher", "controller": true}]),
            true,
        );
        let worker = child(
            "worker-0",
            serde_json::json!([{"uid": "u-mpi", "controller": true}]),
            false,
        );
        let stray_pod = child(
            "stray-pod",
            serde_json::json!([{"uid": "uid-stray", "controller": true}]),
            false,
        );
        let jobs = [&launcher, &stray_job];
        let pods = [&launcher_pod, &old_launcher_pod, &worker, &stray_pod];

        let branches = owned_two_levels(&mpijob, &jobs, &pods).unwrap();
        assert_eq!(branches.len(), 1);
        assert_eq!(branches[0].obj.name(), "launcher");
        assert!(!branches[0].terminating);
        assert_eq!(names(&branches[0].children.current), ["launcher-pod"]);
        assert_eq!(
            names(&branches[0].children.terminating),
            ["launcher-pod-old"]
        );

        let everything = owned_directly_or_through(&mpijob, &jobs, &pods).unwrap();
        assert_eq!(names(&everything.current), ["worker-0", "launcher-pod"]);
        assert_eq!(names(&everything.terminating), ["launcher-pod-old"]);
    }
}
