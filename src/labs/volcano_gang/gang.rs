//! Gang scheduling as Volcano does it: the PodGroup of a job and its pods, found by the job's
//! uid (kit `owned`), and whether the gang is held: all or nothing.
//!
//! - The job controller creates one PodGroup per Job, named `<job>-<uid>` since Volcano 1.5
//!   (`<job>` before), owned by the Job; the scheduler's gang plugin binds none of the pods until
//!   `minMember` of them fit, and says why in an `Unschedulable=True` condition (volcano-sh/volcano
//!   v1.15.1 pkg/controllers/job/job_controller_actions.go, pkg/scheduler/plugins/gang/gang.go).
//! - PodGroup phases: `Pending`, `Inqueue` (admitted by the enqueue action: pods are created but
//!   not bound), `Running`, `Unknown`, `Completed` (staging/src/volcano.sh/apis/pkg/apis/
//!   scheduling/v1beta1/types.go).
//! - A pod is bound once `spec.nodeName` is set; a pod with `metadata.deletionTimestamp` is on
//!   its way out (kit `owned`).

use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::workload::PodTemplate;
use crate::verify::kit::k8s::{conditions, owned};
use crate::verify::views::volcano::PodGroup;

/// A job's PodGroup.
pub struct Group<'a> {
    pub obj: &'a Obj,
    pub pg: PodGroup,
    /// The message of the gang plugin's `Unschedulable=True` condition, e.g. `4/0 tasks in gang
    /// unschedulable: pod group is not ready, 4 minAvailable`.
    pub unschedulable: Option<String>,
}

/// What the controllers made of a job: its PodGroup and its pods.
#[derive(Default)]
pub struct GangState<'a> {
    pub group: Option<Group<'a>>,
    /// The job's pods: current, and those whose deletion was asked for.
    pub pods: owned::Owned<'a>,
}

/// Whether the gang is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// No PodGroup (yet).
    NoGroup,
    /// The PodGroup is `Pending` or `Inqueue` and no pod is bound.
    Held,
    /// A current pod is bound, or the group ran and nothing is leaving: the gang (or part) started.
    Started,
    /// Only pods being deleted are bound (the job restarts, or was changed): wait for them.
    Leaving(usize),
    /// The scheduler has not given the PodGroup a phase yet.
    NoPhase,
}

/// The node a pod is bound to (`spec.nodeName`).
pub fn node_of(pod: &Obj) -> Option<&str> {
    pod.value["spec"]["nodeName"]
        .as_str()
        .filter(|n| !n.is_empty())
}

/// The first template whose pods another scheduler than `scheduler` places, with that scheduler:
/// a template's own `schedulerName` wins over the job's (volcano-sh/volcano
/// pkg/controllers/job/job_controller_util.go `createJobPod`), and such pods bypass the gang.
pub fn bypassing<'t>(
    templates: &'t [PodTemplate],
    scheduler: &str,
) -> Option<(&'t PodTemplate, &'t str)> {
    templates.iter().find_map(|t| {
        let own = t.spec.scheduler_name.as_deref();
        own.filter(|s| !s.is_empty() && *s != scheduler)
            .map(|s| (t, s))
    })
}

impl<'a> GangState<'a> {
    /// The PodGroup and pods `job` owns among `pgs` and `pods`, preferring the PodGroup named
    /// `name` (`<job>-<uid>`) over a legacy one. A job without a uid (read from a file) owns
    /// nothing.
    pub fn find(
        job: &Obj,
        pgs: &[&'a Obj],
        pods: &[&'a Obj],
        name: &str,
    ) -> Result<GangState<'a>, InputError> {
        let (Ok(pgs), Ok(pods)) = (owned::owned_by(job, pgs), owned::owned_by(job, pods)) else {
            return Ok(GangState::default());
        };
        let Some(obj) = pgs.all().min_by_key(|pg| pg.name() != name) else {
            return Ok(GangState { group: None, pods });
        };
        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        let unschedulable = conds
            .iter()
            .find(|c| c.type_ == "Unschedulable" && c.is_true());
        let group = Some(Group {
            obj,
            pg: obj.parse()?,
            unschedulable: unschedulable.and_then(|c| c.message.clone()),
        });
        Ok(GangState { group, pods })
    }

    /// How many pods are bound to a node: current ones, or those being deleted.
    pub fn bound(&self, leaving: bool) -> usize {
        let pods = if leaving {
            &self.pods.terminating
        } else {
            &self.pods.current
        };
        pods.iter().filter(|p| node_of(p).is_some()).count()
    }

    /// `Pods 4/4, spec.nodeName: gang-train-worker-0 → trainlab-worker, …` (pods being deleted
    /// marked `(metadata.deletionTimestamp)`).
    pub fn describe_pods(&self, replicas: i64) -> String {
        let mut bound: Vec<String> = (self.pods.all())
            .filter_map(|p| {
                let leaving = owned::is_terminating(p).then_some(" (metadata.deletionTimestamp)");
                node_of(p).map(|n| format!("{} → {n}{}", p.name(), leaving.unwrap_or_default()))
            })
            .collect();
        bound.sort();
        let nodes = Some(bound.join(", ")).filter(|b| !b.is_empty());
        let created = self.pods.current.len();
        format!(
            "Pods {created}/{replicas}, spec.nodeName: {}",
            nodes.as_deref().unwrap_or("—")
        )
    }

    /// All or nothing: held while the PodGroup waits and no pod of the job is bound.
    pub fn hold(&self) -> Hold {
        let Some(g) = &self.group else {
            return Hold::NoGroup;
        };
        let phase = g.pg.phase();
        let leaving = self.bound(true);
        let ran = matches!(phase, Some("Running" | "Unknown" | "Completed"));
        match phase {
            _ if self.bound(false) > 0 || (ran && leaving == 0) => Hold::Started,
            _ if leaving > 0 => Hold::Leaving(leaving),
            Some("Pending" | "Inqueue") => Hold::Held,
            _ => Hold::NoPhase,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use serde_json::{json, Value};

    fn obj(v: Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    fn owner_ref() -> Value {
        json!([{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "g",
                "uid": "u-1", "controller": true}])
    }

    fn pg(name: &str, phase: &str) -> Obj {
        obj(
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "ownerReferences": owner_ref()},
            "spec": {"minMember": 2},
            "status": {"phase": phase, "conditions": [{"type": "Unschedulable", "status": "True",
                "message": "2/0 tasks in gang unschedulable"}]}}),
        )
    }

    fn pod(name: &str, node: Option<&str>, leaving: bool) -> Obj {
        let mut meta = json!({"name": name, "ownerReferences": owner_ref()});
        if leaving {
            meta["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        obj(json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                   "spec": {"nodeName": node, "containers": []}}))
    }

    #[test]
    fn the_gang_is_held_until_a_pod_is_bound() {
        let job = obj(
            json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                             "metadata": {"name": "g", "uid": "u-1"}}),
        );
        let (legacy, current) = (pg("g", "Running"), pg("g-u-1", "Inqueue"));
        let (a, b) = (pod("g-w-0", None, false), pod("g-w-1", None, false));
        let s = GangState::find(&job, &[&legacy, &current], &[&a, &b], "g-u-1").unwrap();
        let g = s.group.as_ref().unwrap();
        assert_eq!(g.obj.name(), "g-u-1");
        assert_eq!(
            g.unschedulable.as_deref(),
            Some("2/0 tasks in gang unschedulable")
        );
        assert_eq!(s.hold(), Hold::Held);
        assert_eq!(s.describe_pods(2), "Pods 2/2, spec.nodeName: —");

        let bound = pod("g-w-1", Some("n1"), false);
        let s = GangState::find(&job, &[&current], &[&a, &bound], "g-u-1").unwrap();
        assert_eq!(s.hold(), Hold::Started);
        assert_eq!(s.describe_pods(2), "Pods 2/2, spec.nodeName: g-w-1 → n1");

        let going = pod("g-w-1", Some("n1"), true);
        let s = GangState::find(&job, &[&current], &[&a, &going], "g-u-1").unwrap();
        assert_eq!((s.hold(), s.bound(false)), (Hold::Leaving(1), 0));

        let (no_phase, ran) = (pg("g-u-1", ""), pg("g-u-1", "Running"));
        let s = GangState::find(&job, &[&no_phase], &[], "g-u-1").unwrap();
        assert_eq!(s.hold(), Hold::NoPhase);
        let s = GangState::find(&job, &[&ran], &[], "g-u-1").unwrap();
        assert_eq!(s.hold(), Hold::Started);
    }

    #[test]
    fn a_template_of_its_own_scheduler_bypasses_the_gang() {
        let t = |name: Option<&str>| PodTemplate {
            role: "w".into(),
            replicas: 1,
            replicas_set: true,
            replicas_path: "spec.tasks[0].replicas".into(),
            spec: serde_json::from_value(json!({"schedulerName": name, "containers": []})).unwrap(),
            labels: Default::default(),
            path: "spec.tasks[0].template.spec".into(),
            container_paths: Vec::new(),
        };
        let ts = [t(None), t(Some("")), t(Some("volcano"))];
        assert!(bypassing(&ts, "volcano").is_none());
        let ts = [t(None), t(Some("default-scheduler"))];
        let (found, name) = bypassing(&ts, "volcano").unwrap();
        assert_eq!(
            (found.path.as_str(), name),
            ("spec.tasks[0].template.spec", "default-scheduler")
        );
    }

    #[test]
    fn a_job_without_a_uid_owns_no_podgroup() {
        let file_job = obj(
            json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                  "metadata": {"name": "g"}}),
        );
        let group = pg("g-u-1", "Pending");
        let s = GangState::find(&file_job, &[&group], &[], "g-u-1").unwrap();
        assert_eq!(s.hold(), Hold::NoGroup);
    }
}
