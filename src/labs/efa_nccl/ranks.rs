//! The pods a `batch/v1` Indexed Job or an MPIJob runs one per rank: the template they come
//! from, the labels their controller adds, the rank each pod stands for (the furthest-along
//! pod of each), how many run at once, and whether its shape runs N ranks at once. How the
//! workload ended is kit `pods::JobEnd`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;

use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::owned;
use crate::verify::kit::k8s::pods::{self, PodState, Standing};
use crate::verify::kit::k8s::quantity::Quantity;
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::{PodTemplate, Workload, WorkloadKind};
use crate::verify::kit::nodes::spread::Placed;
use crate::verify::views::mpi;

/// Set by the Job controller on an Indexed Job's pods (k8s.io/api batch/v1 types.go
/// `JobCompletionIndexAnnotation`).
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// Labels the API server adds to a Job's template unless `manualSelector` (kubernetes
/// pkg/registry/batch/job/strategy.go `generateSelector`; batch/v1 `JobNameLabel`).
pub const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
/// Labels the MPI Operator puts on a Worker pod (kubeflow/mpi-operator v0.8.0
/// pkg/controller/mpi_job_controller.go `newWorker`, `defaultLabels`; v2beta1 constants.go).
pub const MPI_JOB_NAME: &str = "training.kubeflow.org/job-name";
pub const MPI_ROLE: &str = "training.kubeflow.org/job-role";
pub const MPI_OPERATOR: (&str, &str) = ("training.kubeflow.org/operator-name", "mpi-operator");
pub const MPI_REPLICA_INDEX: &str = "training.kubeflow.org/replica-index";

/// Index of the template whose pods are the ranks: an MPIJob's Worker (the Launcher only
/// starts them), else the first (a Job's only one).
pub fn rank_template(wl: &Workload) -> Option<usize> {
    let i = match wl.kind {
        WorkloadKind::MpiJob => wl.templates.iter().position(|t| t.role == mpi::WORKER),
        _ => Some(0),
    };
    i.filter(|i| *i < wl.templates.len())
}

/// The labels the template's pods will carry: its own, plus the controller's.
pub fn pod_labels(wl: &Workload, t: &PodTemplate) -> BTreeMap<String, String> {
    let mut l = t.labels.clone();
    let mut add = |k: &str, v: &str| {
        l.entry(k.to_string()).or_insert_with(|| v.to_string());
    };
    let name = wl.obj.name();
    if wl.kind == WorkloadKind::MpiJob {
        add(MPI_OPERATOR.0, MPI_OPERATOR.1);
        add(MPI_JOB_NAME, name);
        add(MPI_ROLE, &t.role.to_lowercase());
    } else {
        let manual = wl
            .batch_job()
            .and_then(|j| j.spec.as_ref()?.manual_selector);
        if manual != Some(true) {
            JOB_NAME_LABELS.iter().for_each(|k| add(k, name));
        }
    }
    l
}

/// The rank pods' label selector, for `kubectl -l` in hints.
pub fn selector(wl: &Workload) -> String {
    let name = wl.obj.name();
    match wl.kind {
        WorkloadKind::MpiJob => format!("{MPI_JOB_NAME}={name},{MPI_ROLE}=worker"),
        _ => format!("{}={name}", JOB_NAME_LABELS[1]),
    }
}

/// One pod that runs a rank.
#[derive(Debug, Clone)]
pub struct RankPod {
    pub state: PodState,
    /// The Job's completion index or the Worker's replica index.
    pub rank: Option<u32>,
    pub spec: PodSpec,
    /// Its effective requests (kit `resources::pod_requests`).
    pub requests: BTreeMap<String, Quantity>,
}

impl Placed for RankPod {
    fn pod_name(&self) -> &str {
        &self.state.name
    }
    fn bound_to(&self) -> Option<&str> {
        self.state.node.as_deref()
    }
}

impl RankPod {
    /// Where the pod stands (kit `PodState::standing`). `fits_nowhere`: whether its own
    /// constraints keep it off every node (kit `spread::fits_nowhere`), asked only of an
    /// unschedulable pod.
    pub fn standing(&self, fits_nowhere: impl FnOnce(&RankPod) -> bool) -> Standing {
        self.state.standing(|| fits_nowhere(self))
    }

    /// The whole count of `resource` it asks for (0 when none, or not whole).
    pub fn count(&self, resource: &str) -> i64 {
        let q = self.requests.get(resource);
        q.and_then(|q| q.count().ok()).unwrap_or(0)
    }
}

/// Lower is further along: the pod that stands for its rank when a retry left two.
fn progress(phase: &str) -> u8 {
    match phase {
        "Succeeded" => 0,
        "Running" => 1,
        "Pending" => 2,
        "Failed" => 3,
        _ => 4,
    }
}

/// The workload's rank pods among `pods`: owned by uid (kit `owned`), not terminating, the
/// furthest along of each rank, by rank. Empty for an object without a uid (read from a file).
pub fn rank_pods(wl: &Workload, pods: &[&Obj]) -> Result<Vec<RankPod>, InputError> {
    let current = owned::owned_by(wl.obj, pods).map(|o| o.current);
    let mut best: BTreeMap<String, RankPod> = BTreeMap::new();
    for o in current.unwrap_or_default() {
        let p = rank_pod(o, wl.kind)?;
        let key = p
            .rank
            .map_or_else(|| p.state.name.clone(), |s| format!("{s:010}"));
        let further = |b: &RankPod| progress(&p.state.phase) < progress(&b.state.phase);
        if best.get(&key).is_none_or(further) {
            best.insert(key, p);
        }
    }
    Ok(best.into_values().collect())
}

fn rank_pod(o: &Obj, kind: WorkloadKind) -> Result<RankPod, InputError> {
    let meta = &o.value["metadata"];
    let rank = match kind {
        WorkloadKind::MpiJob => meta["labels"][MPI_REPLICA_INDEX].as_str(),
        _ => meta["annotations"][COMPLETION_INDEX].as_str(),
    };
    // One state per pod read (kit `pods::pod_states`).
    let Some(state) = pods::pod_states(&[o])?.pop() else {
        return Err(o.field_error("status", "no pod state"));
    };
    let spec: PodSpec = match o.value.get("spec") {
        Some(s) => serde_json::from_value(s.clone()).map_err(|e| o.field_error("spec", e))?,
        None => PodSpec::default(),
    };
    let requests =
        resources::pod_requests(&spec).map_err(|e| o.field_error("spec.containers", e))?;
    Ok(RankPod {
        state,
        rank: rank.and_then(|s| s.parse().ok()),
        spec,
        requests,
    })
}

/// How many rank pods run at once: the template's replicas, for a Job capped by completions.
pub fn at_once(wl: &Workload, t: &PodTemplate) -> usize {
    let completions = wl.batch_job().and_then(|j| j.spec.as_ref()?.completions);
    let n = completions.map_or(t.replicas, |c| t.replicas.min(i64::from(c)));
    n.max(1) as usize
}

/// What keeps a workload from running `ranks` pods at once, each with its rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeProblem {
    pub expected: String,
    pub found: String,
    /// `job-shape` or `mpi-shape`.
    pub hint: &'static str,
}

/// A Job needs `completions` = `parallelism` = ranks, `completionMode: Indexed` (the index is
/// the rank) and no suspend; an MPIJob needs `ranks` Workers, one Launcher and no suspend.
pub fn shape_problem(wl: &Workload, ranks: i64) -> Option<ShapeProblem> {
    let replicas = wl.templates.get(rank_template(wl)?)?.replicas;
    if let Some(m) = wl.mpi() {
        let launchers = wl.template(mpi::LAUNCHER).map_or(0, |t| t.replicas);
        let show = |w: i64, l: i64, s: bool| {
            format!("Worker.replicas: {w}, Launcher.replicas: {l}, suspend: {s}")
        };
        let ok = replicas == ranks && launchers == 1 && !m.suspended();
        return (!ok).then(|| ShapeProblem {
            expected: show(ranks, 1, false),
            found: show(replicas, launchers, m.suspended()),
            hint: "mpi-shape",
        });
    }
    let s = wl.batch_job()?.spec.as_ref()?;
    let mode = s.completion_mode.as_deref().unwrap_or("NonIndexed");
    let suspend = s.suspend.unwrap_or(false);
    let completions = s.completions.map_or("—".to_string(), |c| c.to_string());
    let ok = s.completions.map(i64::from) == Some(ranks)
        && replicas == ranks
        && mode == "Indexed"
        && !suspend;
    let show = |c: &str, p: i64, m: &str, s: bool| {
        format!("completions: {c}, parallelism: {p}, completionMode: {m}, suspend: {s}")
    };
    (!ok).then(|| ShapeProblem {
        expected: show(&ranks.to_string(), ranks, "Indexed", false),
        found: show(&completions, replicas, mode, suspend),
        hint: "job-shape",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn obj(v: Value) -> Obj {
        Obj::test(v)
    }

    fn job(spec: Value) -> Obj {
        let mut s = json!({"template": {"spec": {"containers": [{"name": "c"}]}}});
        for (k, v) in spec.as_object().unwrap() {
            s[k] = v.clone();
        }
        obj(json!({"apiVersion": "batch/v1", "kind": "Job",
                   "metadata": {"name": "j", "uid": "u-1"}, "spec": s}))
    }

    fn pod(name: &str, index: &str, phase: &str, owner: &str) -> Obj {
        obj(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name,
            "annotations": {COMPLETION_INDEX: index},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j",
                                 "uid": owner, "controller": true}]},
            "spec": {"containers": [{"name": "c",
                "resources": {"limits": {"vpc.amazonaws.com/efa": "4"}}}]},
            "status": {"phase": phase}}),
        )
    }

    #[test]
    fn one_pod_per_rank_the_furthest_along_owned_by_uid() {
        let j = job(json!({"completions": 2, "parallelism": 2, "completionMode": "Indexed"}));
        let wl = Workload::from_obj(&j).unwrap().unwrap();
        let ps = [
            pod("j-1-a", "1", "Failed", "u-1"),
            pod("j-1-b", "1", "Running", "u-1"),
            pod("j-0-a", "0", "Succeeded", "u-1"),
            pod("j-0-x", "0", "Succeeded", "other"),
        ];
        let refs: Vec<&Obj> = ps.iter().collect();
        let got = rank_pods(&wl, &refs).unwrap();
        let names: Vec<(&str, Option<u32>)> = got
            .iter()
            .map(|p| (p.state.name.as_str(), p.rank))
            .collect();
        assert_eq!(names, [("j-0-a", Some(0)), ("j-1-b", Some(1))]);
        assert_eq!(got[0].count("vpc.amazonaws.com/efa"), 4);
        assert_eq!(shape_problem(&wl, 2), None);
        assert_eq!(at_once(&wl, &wl.templates[0]), 2);
    }

    #[test]
    fn a_non_indexed_job_has_no_ranks() {
        let j = job(json!({"completions": 2, "parallelism": 1}));
        let wl = Workload::from_obj(&j).unwrap().unwrap();
        let p = shape_problem(&wl, 2).unwrap();
        assert_eq!(p.hint, "job-shape");
        assert_eq!(
            p.found,
            "completions: 2, parallelism: 1, completionMode: NonIndexed, suspend: false"
        );
        assert_eq!(at_once(&wl, &wl.templates[0]), 1);
    }

    #[test]
    fn controller_labels_and_selector() {
        let j = job(json!({}));
        let wl = Workload::from_obj(&j).unwrap().unwrap();
        let l = pod_labels(&wl, &wl.templates[0]);
        assert_eq!(l["batch.kubernetes.io/job-name"], "j");
        assert_eq!(selector(&wl), "batch.kubernetes.io/job-name=j");
        let manual = job(json!({"manualSelector": true}));
        let wl = Workload::from_obj(&manual).unwrap().unwrap();
        assert!(pod_labels(&wl, &wl.templates[0]).is_empty());
        let m = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "m"}, "spec": {"mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "l"}]}}},
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w"}]}}}}}}),
        );
        let wl = Workload::from_obj(&m).unwrap().unwrap();
        let t = &wl.templates[rank_template(&wl).unwrap()];
        assert_eq!(pod_labels(&wl, t)[MPI_ROLE], "worker");
        assert_eq!(shape_problem(&wl, 2), None);
        assert_eq!(shape_problem(&wl, 3).unwrap().hint, "mpi-shape");
    }

    #[test]
    fn a_rank_pod_s_standing() {
        let j = job(json!({}));
        let wl = Workload::from_obj(&j).unwrap().unwrap();
        let mut p = pod("j-0-a", "0", "Pending", "u-1");
        p.value_mut()["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/3 nodes are available"}]);
        let refs = [&p];
        let rp = &rank_pods(&wl, &refs).unwrap()[0];
        let said = "0/3 nodes are available".to_string();
        assert_eq!(rp.standing(|_| true), Standing::Unschedulable(said.clone()));
        assert_eq!(rp.standing(|_| false), Standing::WaitingCapacity(said));
        p.value_mut()["status"] = json!({"phase": "Pending", "containerStatuses": [{"name": "c",
            "ready": false, "restartCount": 3, "image": "i", "imageID": "",
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}}]});
        let refs = [&p];
        let rp = &rank_pods(&wl, &refs).unwrap()[0];
        assert!(
            matches!(rp.standing(|_| true), Standing::Stuck { reason, .. } if reason == "CrashLoopBackOff")
        );
    }
}
