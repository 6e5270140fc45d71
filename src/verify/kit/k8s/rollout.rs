//! Whether the pods an operator runs for a custom resource are up: the workload it created (a
//! StatefulSet, found by ownerReference uid), how many of its pods are Ready, and, while they are
//! not, why — the one "… is ready" rule of the labs whose operators build workloads
//! (Slinky's Controller and Accounting build StatefulSets; its NodeSet runs pods itself).
//!
//! Rules:
//! - ready means `readyReplicas ≥ desired` (apps/v1 `StatefulSetStatus.readyReplicas`: "the
//!   number of pods created for this StatefulSet with a Ready Condition"; `spec.replicas`
//!   defaults to 1);
//! - a container waiting for a reason that does not clear by itself ([`PodState::stuck`]: the
//!   image cannot be pulled, the container cannot be created) or crashing ([`PodState::crash`])
//!   is a fail: waiting longer changes nothing;
//! - a container image the learner left empty never starts: the API server refuses a pod (or a
//!   StatefulSet's template) whose container has no image (`spec.containers[0].image: Required
//!   value`, core/v1 validation), so the operator can create nothing. That is a fail naming the
//!   empty fields, whatever else is seen;
//! - a pod the scheduler cannot place yet, pods still starting, or a workload the operator has
//!   not created yet are pending: the cluster may still converge (a volume binding, an image
//!   being pulled).

use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::owned;
use crate::verify::kit::k8s::pods::{pod_states, PodState};
use crate::verify::{Outcome, Reason};

/// What an operator runs for one object.
#[derive(Debug, Clone, Default)]
pub struct Rollout {
    /// `StatefulSet/slurm-controller`, `NodeSet/gpu-h100`: what counts the pods.
    pub workload: String,
    /// Pods wanted.
    pub desired: i64,
    /// Pods with a Ready condition, as the workload counts them.
    pub ready: i64,
    /// The current (not terminating) pods, read.
    pub pods: Vec<PodState>,
}

/// Why the pods are not all ready (or that they are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ready,
    /// `(pod, container, reason, message)` of a container stuck waiting.
    Stuck(String, String, String, String),
    /// `(pod, what)`: a container crashed (`ContainerEnd::describe`).
    Crashing(String, String),
    /// `(pod, message)`: the scheduler cannot place the pod now.
    Unschedulable(String, String),
    /// Pods are wanted but none exists.
    NoPods,
    /// Pods exist and are on their way.
    Starting,
}

impl Rollout {
    /// The verdict, in the order a learner should look: stuck, crashing, unplaceable, absent.
    pub fn verdict(&self) -> Verdict {
        if self.ready >= self.desired {
            return Verdict::Ready;
        }
        for p in &self.pods {
            if let Some((c, r, m)) = p.stuck() {
                return Verdict::Stuck(p.name.clone(), c.clone(), r.clone(), m.clone());
            }
        }
        if let Some((p, e)) = self.pods.iter().find_map(|p| p.crash().map(|e| (p, e))) {
            return Verdict::Crashing(p.name.clone(), e.describe(&p.name));
        }
        let unplaced = self
            .pods
            .iter()
            .find_map(|p| p.unschedulable.as_ref().map(|m| (p, m)));
        if let Some((p, m)) = unplaced.filter(|(p, _)| p.node.is_none()) {
            return Verdict::Unschedulable(p.name.clone(), m.clone());
        }
        if self.pods.is_empty() {
            return Verdict::NoPods;
        }
        Verdict::Starting
    }
}

/// A whole number at `path` of `o` (absent: `default`); another type is bad input.
fn count(o: &Obj, path: &[&str], default: i64) -> Result<i64, InputError> {
    let mut v: &serde_json::Value = &o.value;
    for p in path {
        v = &v[*p];
    }
    match v {
        serde_json::Value::Null => Ok(default),
        v => v
            .as_i64()
            .filter(|n| *n >= 0)
            .ok_or_else(|| o.field_error(path.join("."), "expected a non-negative integer")),
    }
}

/// The StatefulSet `owner` controls (by ownerReference uid, see [`owned`]) with its current
/// pods. None when the owner has none yet (or was not read from a cluster).
pub fn statefulset_of(
    owner: &Obj,
    sets: &[&Obj],
    pods: &[&Obj],
) -> Result<Option<Rollout>, InputError> {
    let Ok(mine) = owned::owned_by(owner, sets) else {
        return Ok(None);
    };
    let Some(set) = mine.current.first() else {
        return Ok(None);
    };
    let current = owned::owned_by(set, pods).unwrap_or_default().current;
    Ok(Some(Rollout {
        workload: format!("StatefulSet/{}", set.name()),
        desired: count(set, &["spec", "replicas"], 1)?,
        ready: count(set, &["status", "readyReplicas"], 0)?,
        pods: pod_states(&current)?,
    }))
}

/// The outcome of a "… is ready" check for `what` (a field path or name the hints show).
/// `rollout` None: the operator has not created the workload. `missing_images`: the fields
/// naming a container image that the learner left empty.
///
/// Hint keys: `no-image` (evidence `fields`), `stuck` (`pod`, `container`, `reason`,
/// `message`), `crash` (`pod`, `crash`). Messages (pending): `not-created`, `no-pods`,
/// `unschedulable` (`pod`, `message`), `starting`. Every outcome carries `what`, `ready` and
/// `desired` (when known).
pub fn outcome(
    check: &str,
    what: &str,
    rollout: Option<&Rollout>,
    missing_images: &[String],
) -> Outcome {
    let expected = match rollout {
        Some(r) => format!("{}: readyReplicas {}/{}", r.workload, r.desired, r.desired),
        None => format!("{what}: readyReplicas ≥ 1"),
    };
    let found = match rollout {
        Some(r) => format!("{}: readyReplicas {}/{}", r.workload, r.ready, r.desired),
        None => format!("{what}: —"),
    };
    let verdict = rollout.map_or(Verdict::NoPods, Rollout::verdict);
    let o = if verdict == Verdict::Ready {
        Outcome::pass(check)
    } else if !missing_images.is_empty() {
        let fields = missing_images.join(", ");
        let found = format!("{fields}: —");
        Outcome::fail(check, format!("{fields}: <image>"), found)
            .hint("no-image")
            .with("fields", fields)
    } else {
        let pending = |id: &str| Outcome::pending(check, Reason::Message(id.into()));
        match verdict {
            Verdict::Ready => unreachable!("handled above"),
            Verdict::Stuck(pod, c, reason, message) => {
                Outcome::fail(check, &expected, format!("{pod}/{c}: {reason}"))
                    .hint("stuck")
                    .with("pod", pod)
                    .with("container", c)
                    .with("reason", reason)
                    .with("message", message)
            }
            Verdict::Crashing(pod, crash) => Outcome::fail(check, &expected, &crash)
                .hint("crash")
                .with("pod", pod)
                .with("crash", crash),
            Verdict::Unschedulable(pod, message) => pending("unschedulable")
                .with("pod", pod)
                .with("message", message),
            Verdict::NoPods if rollout.is_none() => pending("not-created"),
            Verdict::NoPods => pending("no-pods"),
            Verdict::Starting => pending("starting"),
        }
    };
    let o = match o.expected {
        Some(_) => o,
        None => o.expected_found(expected, found),
    };
    let o = o.with("what", what);
    match rollout {
        Some(r) => o
            .with("workload", &r.workload)
            .with("ready", r.ready)
            .with("desired", r.desired),
        None => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use crate::verify::Status;
    use serde_json::json;

    fn obj(v: serde_json::Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    fn pod(name: &str, owner: &str, status: serde_json::Value) -> Obj {
        obj(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "uid": format!("u-{name}"),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                              "name": "s", "uid": owner, "controller": true}]},
            "spec": {"containers": [{"name": "slurmctld", "image": "x"}]},
            "status": status}))
    }

    fn rollout(ready: i64, pods: &[&Obj]) -> Rollout {
        Rollout {
            workload: "StatefulSet/slurm-controller".into(),
            desired: 1,
            ready,
            pods: pod_states(pods).unwrap(),
        }
    }

    #[test]
    fn the_statefulset_is_found_by_its_owners_uid_with_its_pods() {
        let owner = obj(
            json!({"apiVersion": "slinky.slurm.net/v1beta1", "kind": "Controller",
            "metadata": {"name": "slurm", "uid": "c1"}}),
        );
        let set = obj(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "slurm-controller", "uid": "s1",
                         "ownerReferences": [{"apiVersion": "slinky.slurm.net/v1beta1",
                             "kind": "Controller", "name": "slurm", "uid": "c1", "controller": true}]},
            "spec": {"replicas": 1}, "status": {"readyReplicas": 1}}));
        let lookalike = obj(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "slurm-controller-2", "uid": "s2"}}));
        let p = pod("slurm-controller-0", "s1", json!({"phase": "Running"}));
        let r = statefulset_of(&owner, &[&lookalike, &set], &[&p])
            .unwrap()
            .unwrap();
        assert_eq!(r.workload, "StatefulSet/slurm-controller");
        assert_eq!((r.desired, r.ready, r.pods.len()), (1, 1, 1));
        assert_eq!(r.verdict(), Verdict::Ready);
        // A manifest (no uid) owns nothing.
        let file = obj(
            json!({"apiVersion": "slinky.slurm.net/v1beta1", "kind": "Controller",
            "metadata": {"name": "slurm"}}),
        );
        assert!(statefulset_of(&file, &[&set], &[]).unwrap().is_none());
        let bad = obj(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "x", "uid": "s3", "ownerReferences": [{"uid": "c1", "controller": true}]},
            "status": {"readyReplicas": "one"}}));
        assert!(statefulset_of(&owner, &[&bad], &[]).is_err());
    }

    #[test]
    fn a_stuck_image_pull_and_a_crash_are_fails_starting_pods_are_pending() {
        let stuck = pod(
            "p",
            "s1",
            json!({"phase": "Pending", "containerStatuses": [
            {"name": "slurmctld", "ready": false, "restartCount": 0, "image": "x", "imageID": "",
             "state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}]}),
        );
        let o = outcome(
            "ready",
            "Controller slurm",
            Some(&rollout(0, &[&stuck])),
            &[],
        );
        assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("stuck")));
        assert_eq!(o.evidence["reason"], "ImagePullBackOff");

        let crash = pod(
            "p",
            "s1",
            json!({"phase": "Running", "containerStatuses": [
            {"name": "slurmdbd", "ready": false, "restartCount": 3, "image": "x", "imageID": "",
             "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}),
        );
        let o = outcome("ready", "Accounting a", Some(&rollout(0, &[&crash])), &[]);
        assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("crash")));
        assert_eq!(o.evidence["crash"], "p/slurmdbd: Error (exit 1)");

        let starting = pod("p", "s1", json!({"phase": "Pending"}));
        let o = outcome("ready", "w", Some(&rollout(0, &[&starting])), &[]);
        assert_eq!(o.status, Status::Pending);
        assert_eq!(o.reason, Some(Reason::Message("starting".into())));
        let o = outcome("ready", "w", Some(&rollout(0, &[])), &[]);
        assert_eq!(o.reason, Some(Reason::Message("no-pods".into())));
        let o = outcome("ready", "w", None, &[]);
        assert_eq!(o.reason, Some(Reason::Message("not-created".into())));
    }

    #[test]
    fn an_unplaceable_pod_is_pending_with_the_schedulers_words() {
        let p = pod(
            "p",
            "s1",
            json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]}),
        );
        let o = outcome("ready", "w", Some(&rollout(0, &[&p])), &[]);
        assert_eq!(o.status, Status::Pending);
        assert_eq!(o.reason, Some(Reason::Message("unschedulable".into())));
        assert!(o.evidence["message"].contains("Insufficient"));
    }

    #[test]
    fn an_empty_image_is_a_fail_naming_the_field_unless_the_pods_are_ready() {
        let fields = vec!["spec.logfile.image".to_string()];
        let o = outcome("ready", "w", None, &fields);
        assert_eq!(
            (o.status, o.hint.as_deref()),
            (Status::Fail, Some("no-image"))
        );
        assert_eq!(o.evidence["fields"], "spec.logfile.image");
        let o = outcome("ready", "w", Some(&rollout(1, &[])), &fields);
        assert_eq!(o.status, Status::Pass);
        assert_eq!(
            o.found.as_deref(),
            Some("StatefulSet/slurm-controller: readyReplicas 1/1")
        );
    }
}
