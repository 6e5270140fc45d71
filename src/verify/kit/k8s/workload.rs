//! Workloads: any object that carries pod templates. Verifiers ask the same questions of all of
//! them (how many GPUs each pod asks for, what command runs, where pods may land), so this view
//! turns each supported kind into its pod templates, each with its role, replica count and the
//! field path a hint can point at.
//!
//! Kinds are recognised by API group and kind, whatever the version (like
//! [`ResourceKind::matches`](crate::observe::ResourceKind::matches)), so a learner's manifest in
//! a removed version is still seen; [`Workload::uses_current_version`] lets a check fail it.
//!
//! | kind | roles | replicas when unset | template spec path |
//! |---|---|---|---|
//! | `batch/v1` Job | `Job` | `parallelism`, 1 | `spec.template.spec` |
//! | `batch.volcano.sh` Job | `tasks[].name` (`default<i>` when unset) | 0 | `spec.tasks[i].template.spec` |
//! | `kubeflow.org` MPIJob | `Launcher`, `Worker` | 1, 0 | `spec.mpiReplicaSpecs.<role>.template.spec` |
//! | `kubeflow.org` PyTorchJob | `Master`, `Worker` | 1, 1 | `spec.pytorchReplicaSpecs.<key>.template.spec` |
//! | `trainer.kubeflow.org` TrainJob | the runtime's replicatedJobs (`node`, `launcher`) | `mlPolicy.numNodes`, 1 | a runtime patch; `spec.trainer` for the `node` container |
//! | `slinky.slurm.net` NodeSet | `NodeSet` | 1 | `spec.template.spec` (+ `spec.slurmd`) |
//! | `apps/v1` Deployment, StatefulSet | `Deployment`, `StatefulSet` | 1 | `spec.template.spec` |
//!
//! Defaults: Kubernetes API reference (JobSpec `parallelism` "Defaults to 1", DeploymentSpec and
//! StatefulSetSpec `replicas` "Defaults to 1"); Volcano `TaskSpec.replicas` is a plain `int32`
//! and the admission webhook names unnamed tasks `default<index>` (volcano-sh/volcano
//! `pkg/webhooks/admission/jobs/mutate/mutate_job.go` `mutateSpec`, `DefaultTaskSpec = "default"`); MPIJob and PyTorchJob as
//! cited in [`views::mpi`](crate::verify::views::mpi) (`default.go`: Launcher 1, Worker 0) and
//! [`views::pytorch`](crate::verify::views::pytorch); NodeSet in
//! [`views::slinky`](crate::verify::views::slinky).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    DeploymentSpec, DeploymentStatus, StatefulSetSpec, StatefulSetStatus,
};
use k8s_openapi::api::batch::v1::{JobSpec, JobStatus};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use serde::Deserialize;

use crate::observe::kinds::{self, ResourceKind};
use crate::observe::{InputError, Obj};
use crate::verify::views::mpi::{self, MpiJob};
use crate::verify::views::pytorch::{self, PyTorchJob};
use crate::verify::views::slinky::{self, NodeSet};
use crate::verify::views::trainer::{self, TrainJob, TrainJobView, NODE};
use crate::verify::views::volcano::VolcanoJob;

/// The workload kinds the labs grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// `batch/v1` Job.
    Job,
    /// `batch.volcano.sh/v1alpha1` Job.
    VolcanoJob,
    /// `kubeflow.org/v2beta1` MPIJob (the legacy `kubeflow.org/v1` one parses the same way).
    MpiJob,
    /// `kubeflow.org/v1` PyTorchJob.
    PyTorchJob,
    /// `trainer.kubeflow.org/v1alpha1` TrainJob (Kubeflow Trainer v2); its pods come from its
    /// runtime (kit `training::trainjob`).
    TrainJob,
    /// `slinky.slurm.net/v1beta1` NodeSet.
    NodeSet,
    /// `apps/v1` Deployment.
    Deployment,
    /// `apps/v1` StatefulSet.
    StatefulSet,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 8] = [
        WorkloadKind::Job,
        WorkloadKind::VolcanoJob,
        WorkloadKind::MpiJob,
        WorkloadKind::PyTorchJob,
        WorkloadKind::TrainJob,
        WorkloadKind::NodeSet,
        WorkloadKind::Deployment,
        WorkloadKind::StatefulSet,
    ];

    /// Its row of the one table of kinds and served versions (`observe::kinds`).
    pub fn resource(self) -> &'static ResourceKind {
        match self {
            WorkloadKind::Job => &kinds::JOBS,
            WorkloadKind::VolcanoJob => &kinds::VOLCANO_JOBS,
            WorkloadKind::MpiJob => &kinds::MPIJOBS,
            WorkloadKind::PyTorchJob => &kinds::PYTORCHJOBS,
            WorkloadKind::TrainJob => &kinds::TRAINJOBS,
            WorkloadKind::NodeSet => &kinds::NODESETS,
            WorkloadKind::Deployment => &kinds::DEPLOYMENTS,
            WorkloadKind::StatefulSet => &kinds::STATEFULSETS,
        }
    }

    pub fn group(self) -> &'static str {
        self.resource().group
    }

    pub fn kind(self) -> &'static str {
        self.resource().kind
    }

    /// The version the labs install and grade against.
    pub fn version(self) -> &'static str {
        self.resource().version
    }

    /// `group/version` of [`WorkloadKind::version`].
    pub fn api_version(self) -> String {
        self.resource().api_version()
    }

    /// The kind of an object by its `apiVersion` group and `kind`, ignoring the version.
    pub fn of(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        WorkloadKind::ALL
            .into_iter()
            .find(|k| k.group() == group && k.kind() == kind)
    }
}

/// `spec` and `status` of a built-in kind. The top-level k8s-openapi types are not used because
/// they insist on one exact `apiVersion`; their spec types tolerate omitted fields.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BuiltIn<S, T> {
    pub spec: Option<S>,
    pub status: Option<T>,
}

/// The typed view of the whole object, for the kind-specific fields (Volcano `minAvailable`,
/// MPIJob `slotsPerWorker`, PyTorchJob `nprocPerNode`, Job `completionMode`, ...).
#[derive(Debug, Clone)]
pub enum KindView {
    Job(Box<BuiltIn<JobSpec, JobStatus>>),
    VolcanoJob(Box<VolcanoJob>),
    MpiJob(Box<MpiJob>),
    PyTorchJob(Box<PyTorchJob>),
    TrainJob(Box<TrainJobView>),
    NodeSet(Box<NodeSet>),
    Deployment(Box<BuiltIn<DeploymentSpec, DeploymentStatus>>),
    StatefulSet(Box<BuiltIn<StatefulSetSpec, StatefulSetStatus>>),
}

/// One group of identical pods of a workload.
#[derive(Debug, Clone)]
pub struct PodTemplate {
    /// `Launcher`, `Worker`, `Master`, a Volcano task name, or the kind for single-template
    /// kinds (`Job`, `NodeSet`, `Deployment`, `StatefulSet`).
    pub role: String,
    /// Pods of this template: as written, or the default the API or operator applies. For a
    /// NodeSet in `DaemonSet` scaling mode this is `spec.replicas`, which the operator ignores.
    pub replicas: i64,
    /// Whether `replicas` was written (false: it is the default).
    pub replicas_set: bool,
    /// Field path of the replica count (`spec.tasks[0].replicas`, `spec.parallelism`).
    pub replicas_path: String,
    /// The pod spec; for a NodeSet, the pod the operator builds (slurmd container first).
    pub spec: PodSpec,
    /// The template's `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// Field path of the template's pod spec, for hints (`spec.tasks[0].template.spec`).
    pub path: String,
    /// For each of `spec.containers`, the field path the learner wrote it at.
    pub container_paths: Vec<String>,
}

impl PodTemplate {
    /// A batch/v1 Job's template around `spec` (unit tests across the kit).
    #[cfg(test)]
    pub(crate) fn job_for_test(spec: PodSpec) -> PodTemplate {
        let n = spec.containers.len();
        PodTemplate {
            role: "Job".into(),
            replicas: 1,
            replicas_set: false,
            replicas_path: "spec.parallelism".into(),
            spec,
            labels: BTreeMap::new(),
            path: "spec.template.spec".into(),
            container_paths: (0..n)
                .map(|i| format!("spec.template.spec.containers[{i}]"))
                .collect(),
        }
    }

    /// The template's containers with their field paths.
    pub fn containers(&self) -> impl Iterator<Item = (&Container, &str)> {
        self.spec
            .containers
            .iter()
            .zip(self.container_paths.iter().map(String::as_str))
    }

    /// `<path>.<rel>`: a field of this template's pod spec (`nodeSelector`, `affinity`).
    pub fn field(&self, rel: &str) -> String {
        format!("{}.{rel}", self.path)
    }
}

/// The field that holds a container's resources: `<container>.resources`, or for the container
/// a TrainJob's `spec.trainer` fills, `spec.trainer.resourcesPerNode`.
pub fn resources_field(container_path: &str) -> String {
    if container_path == TRAINER_FIELD {
        format!("{TRAINER_FIELD}.resourcesPerNode")
    } else {
        format!("{container_path}.resources")
    }
}

/// The container path of a TrainJob's trainer container: its fields are `spec.trainer`'s.
pub const TRAINER_FIELD: &str = "spec.trainer";

/// A workload object and its pod templates.
#[derive(Debug, Clone)]
pub struct Workload<'a> {
    pub obj: &'a Obj,
    pub kind: WorkloadKind,
    pub view: KindView,
    /// In the order the object lists them (MPIJob: Launcher, Worker; PyTorchJob: Master,
    /// Worker). Roles without a replica spec are absent.
    pub templates: Vec<PodTemplate>,
}

/// `metadata` as far as every workload needs it: a mapping with a string `name`. Parsed only for
/// its type errors, hence the unread fields.
#[derive(Deserialize)]
struct Head {
    #[serde(default, rename = "metadata")]
    _metadata: Option<HeadMeta>,
}

#[derive(Deserialize)]
struct HeadMeta {
    #[serde(default, rename = "name")]
    _name: Option<String>,
}

impl<'a> Workload<'a> {
    /// The workload view of `o`; `None` when its kind carries no pod templates this kit knows.
    /// A field of the wrong type, or a negative replica count, is an [`InputError::Field`].
    pub fn from_obj(o: &'a Obj) -> Result<Option<Workload<'a>>, InputError> {
        let Some(kind) = WorkloadKind::of(o.api_version(), o.kind()) else {
            return Ok(None);
        };
        let _: Head = o.parse()?;
        let (view, templates) = match kind {
            WorkloadKind::Job => batch_job(o)?,
            WorkloadKind::VolcanoJob => volcano_job(o)?,
            WorkloadKind::MpiJob => mpi_job(o)?,
            WorkloadKind::PyTorchJob => pytorch_job(o)?,
            WorkloadKind::TrainJob => train_job(o)?,
            WorkloadKind::NodeSet => nodeset(o)?,
            WorkloadKind::Deployment => {
                let v: BuiltIn<DeploymentSpec, DeploymentStatus> = o.parse()?;
                let t = match &v.spec {
                    Some(s) => vec![single(o, kind, s.replicas, "spec.replicas", &s.template)?],
                    None => vec![],
                };
                (KindView::Deployment(Box::new(v)), t)
            }
            WorkloadKind::StatefulSet => {
                let v: BuiltIn<StatefulSetSpec, StatefulSetStatus> = o.parse()?;
                let t = match &v.spec {
                    Some(s) => vec![single(o, kind, s.replicas, "spec.replicas", &s.template)?],
                    None => vec![],
                };
                (KindView::StatefulSet(Box::new(v)), t)
            }
        };
        Ok(Some(Workload {
            obj: o,
            kind,
            view,
            templates,
        }))
    }

    /// The object's `apiVersion` as written.
    pub fn api_version(&self) -> &str {
        self.obj.api_version()
    }

    /// The version part of `apiVersion` (`v1alpha1`).
    pub fn version(&self) -> &str {
        let av = self.obj.api_version();
        av.rsplit_once('/').map_or(av, |(_, v)| v)
    }

    /// Whether the object uses the version the labs grade ([`WorkloadKind::version`]).
    pub fn uses_current_version(&self) -> bool {
        self.version() == self.kind.version()
    }

    /// Σ replicas over all templates: the pods the workload asks for.
    pub fn total_replicas(&self) -> i64 {
        self.templates
            .iter()
            .fold(0i64, |acc, t| acc.saturating_add(t.replicas))
    }

    /// The template of exactly this role.
    pub fn template(&self, role: &str) -> Option<&PodTemplate> {
        self.templates.iter().find(|t| t.role == role)
    }

    /// Every container of every template, with its field path.
    pub fn containers(&self) -> impl Iterator<Item = (&PodTemplate, &Container, &str)> {
        self.templates
            .iter()
            .flat_map(|t| t.containers().map(move |(c, p)| (t, c, p)))
    }

    pub fn batch_job(&self) -> Option<&BuiltIn<JobSpec, JobStatus>> {
        match &self.view {
            KindView::Job(v) => Some(v),
            _ => None,
        }
    }

    pub fn volcano(&self) -> Option<&VolcanoJob> {
        match &self.view {
            KindView::VolcanoJob(v) => Some(v),
            _ => None,
        }
    }

    pub fn mpi(&self) -> Option<&MpiJob> {
        match &self.view {
            KindView::MpiJob(v) => Some(v),
            _ => None,
        }
    }

    pub fn pytorch(&self) -> Option<&PyTorchJob> {
        match &self.view {
            KindView::PyTorchJob(v) => Some(v),
            _ => None,
        }
    }

    pub fn trainjob(&self) -> Option<&TrainJobView> {
        match &self.view {
            KindView::TrainJob(v) => Some(v),
            _ => None,
        }
    }

    /// The container the operator launches training in and injects its environment into:
    /// `pytorch` in a PyTorchJob, `node` in a TrainJob; None for other kinds.
    pub fn launch_container(&self) -> Option<&'static str> {
        match self.kind {
            WorkloadKind::PyTorchJob => Some(pytorch::DEFAULT_CONTAINER),
            WorkloadKind::TrainJob => Some(crate::verify::views::trainer::NODE),
            _ => None,
        }
    }

    pub fn nodeset(&self) -> Option<&NodeSet> {
        match &self.view {
            KindView::NodeSet(v) => Some(v),
            _ => None,
        }
    }
}

type Built = (KindView, Vec<PodTemplate>);

/// A replica count: as written (checked to be a non-negative int32, the upstream type) or
/// `default`. The bool says whether it was written.
fn count(
    o: &Obj,
    field: &str,
    value: Option<i64>,
    default: i64,
) -> Result<(i64, bool), InputError> {
    let Some(n) = value else {
        return Ok((default, false));
    };
    let problem = if n < 0 {
        format!("must not be negative (found {n})")
    } else if n > i64::from(i32::MAX) {
        format!("must fit in a 32-bit integer (found {n})")
    } else {
        return Ok((n, true));
    };
    Err(InputError::Field {
        origin: o.origin.to_string(),
        object: o.display_name(),
        field: field.to_string(),
        message: problem,
    })
}

/// A template from a core/v1 `PodTemplateSpec` at `template_path` (`spec.template`).
fn from_template(
    role: &str,
    (replicas, replicas_set): (i64, bool),
    replicas_path: String,
    template: Option<&PodTemplateSpec>,
    template_path: &str,
) -> PodTemplate {
    let path = format!("{template_path}.spec");
    let spec = template.and_then(|t| t.spec.clone()).unwrap_or_default();
    let labels = template
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let container_paths = (0..spec.containers.len())
        .map(|i| format!("{path}.containers[{i}]"))
        .collect();
    PodTemplate {
        role: role.to_string(),
        replicas,
        replicas_set,
        replicas_path,
        spec,
        labels,
        path,
        container_paths,
    }
}

/// The one template of Deployment / StatefulSet-like specs, role = the kind.
fn single(
    o: &Obj,
    kind: WorkloadKind,
    replicas: Option<i32>,
    replicas_path: &str,
    template: &PodTemplateSpec,
) -> Result<PodTemplate, InputError> {
    let n = count(o, replicas_path, replicas.map(i64::from), 1)?;
    Ok(from_template(
        kind.kind(),
        n,
        replicas_path.to_string(),
        Some(template),
        "spec.template",
    ))
}

/// The TrainJob `o` as written, without its runtime: one `node` template holding what
/// `spec.trainer` says. Grading reads it through kit `training::trainjob::over_runtime`; this is what a check of its
/// status alone needs.
fn train_job(o: &Obj) -> Result<(KindView, Vec<PodTemplate>), InputError> {
    let job: TrainJob = o.parse()?;
    let t = job.spec.trainer.clone().unwrap_or_default();
    let n = t.num_nodes.unwrap_or(trainer::DEFAULT_NUM_NODES);
    let mut container = serde_json::json!({"name": NODE});
    trainer::apply_trainer(&mut container, &t, true);
    let spec: PodSpec = serde_json::from_value(serde_json::json!({"containers": [container]}))
        .map_err(|e| o.field_error("spec.trainer", e))?;
    let view = TrainJobView {
        job,
        runtime: None,
        runtime_source: None,
        ml_policy: None,
        nproc: None,
    };
    let template = PodTemplate {
        role: NODE.to_string(),
        replicas: n,
        replicas_set: t.num_nodes.is_some(),
        replicas_path: "spec.trainer.numNodes".into(),
        spec,
        labels: Default::default(),
        path: trainer::runtime_patch_path(NODE),
        container_paths: vec!["spec.trainer".into()],
    };
    Ok((KindView::TrainJob(Box::new(view)), vec![template]))
}

fn batch_job(o: &Obj) -> Result<Built, InputError> {
    let v: BuiltIn<JobSpec, JobStatus> = o.parse()?;
    let mut templates = vec![];
    if let Some(s) = &v.spec {
        // `completions` is a pod count too; a negative one is as malformed as negative replicas.
        count(o, "spec.completions", s.completions.map(i64::from), 1)?;
        templates.push(single(
            o,
            WorkloadKind::Job,
            s.parallelism,
            "spec.parallelism",
            &s.template,
        )?);
    }
    Ok((KindView::Job(Box::new(v)), templates))
}

fn volcano_job(o: &Obj) -> Result<Built, InputError> {
    let v: VolcanoJob = o.parse()?;
    let mut templates = vec![];
    for (i, t) in v.spec.tasks.iter().enumerate() {
        let role = t
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("default{i}"));
        let replicas_path = format!("spec.tasks[{i}].replicas");
        let n = count(o, &replicas_path, t.replicas.map(i64::from), 0)?;
        templates.push(from_template(
            &role,
            n,
            replicas_path,
            t.template.as_ref(),
            &format!("spec.tasks[{i}].template"),
        ));
    }
    Ok((KindView::VolcanoJob(Box::new(v)), templates))
}

fn mpi_job(o: &Obj) -> Result<Built, InputError> {
    let v: MpiJob = o.parse()?;
    let mut templates = vec![];
    // Only these two keys create pods; `near_miss_key` finds a miscased one for a hint.
    for (role, default) in [(mpi::LAUNCHER, 1), (mpi::WORKER, 0)] {
        let Some(rs) = v.replica(role) else { continue };
        let base = format!("spec.mpiReplicaSpecs.{role}");
        let replicas_path = format!("{base}.replicas");
        let n = count(o, &replicas_path, rs.replicas, default)?;
        templates.push(from_template(
            role,
            n,
            replicas_path,
            rs.template.as_ref(),
            &format!("{base}.template"),
        ));
    }
    Ok((KindView::MpiJob(Box::new(v)), templates))
}

fn pytorch_job(o: &Obj) -> Result<Built, InputError> {
    let v: PyTorchJob = o.parse()?;
    let mut templates = vec![];
    for role in [pytorch::MASTER, pytorch::WORKER] {
        let (Some(key), Some(rs)) = (v.replica_key(role), v.replica(role)) else {
            continue;
        };
        // The path keeps the key as written (`worker`): that is where the learner's field is.
        let base = format!("spec.pytorchReplicaSpecs.{key}");
        let replicas_path = format!("{base}.replicas");
        let n = count(o, &replicas_path, rs.replicas, pytorch::DEFAULT_REPLICAS)?;
        templates.push(from_template(
            role,
            n,
            replicas_path,
            rs.template.as_ref(),
            &format!("{base}.template"),
        ));
    }
    Ok((KindView::PyTorchJob(Box::new(v)), templates))
}

fn nodeset(o: &Obj) -> Result<Built, InputError> {
    let v: NodeSet = o.parse()?;
    let pod = v.pod_spec().map_err(|e| e.into_input(o))?;
    let n = count(
        o,
        "spec.replicas",
        v.spec.replicas.map(i64::from),
        slinky::DEFAULT_REPLICAS,
    )?;
    let t = PodTemplate {
        role: WorkloadKind::NodeSet.kind().to_string(),
        replicas: n.0,
        replicas_set: n.1,
        replicas_path: "spec.replicas".into(),
        spec: pod.spec,
        labels: pod.labels,
        path: "spec.template.spec".into(),
        container_paths: pod.container_paths,
    };
    Ok((KindView::NodeSet(Box::new(v)), vec![t]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use serde_json::{json, Value};

    fn obj(v: Value) -> Obj {
        Obj::new(
            v,
            Origin::File {
                path: "w.yaml".into(),
                doc: 1,
                item: None,
            },
        )
        .unwrap()
    }

    fn pod(containers: Value) -> Value {
        json!({"metadata": {"labels": {"app": "train"}}, "spec": {"containers": containers}})
    }

    fn gpu_container(name: &str, gpus: &str) -> Value {
        json!({"name": name, "image": "trainer:1", "command": ["torchrun", "train.py"],
               "resources": {"limits": {"nvidia.com/gpu": gpus}}})
    }

    fn field_error(o: &Obj) -> (String, String) {
        match Workload::from_obj(o) {
            Err(InputError::Field { field, message, .. }) => (field, message),
            other => panic!("expected a field error, got {other:?}"),
        }
    }

    #[test]
    fn batch_job_parallelism_defaults_to_one() {
        let o = obj(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train"},
            "spec": {"completions": 4, "completionMode": "Indexed",
                     "template": pod(json!([gpu_container("main", "8")]))}}));
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.kind, WorkloadKind::Job);
        let t = w.template("Job").unwrap();
        assert_eq!((t.replicas, t.replicas_set), (1, false));
        assert_eq!(t.replicas_path, "spec.parallelism");
        assert_eq!(t.path, "spec.template.spec");
        assert_eq!(t.labels["app"], "train");
        assert_eq!(t.field("nodeSelector"), "spec.template.spec.nodeSelector");
        let spec = w.batch_job().unwrap().spec.as_ref().unwrap();
        assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!(spec.completions, Some(4));

        let o = obj(
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "t"},
            "spec": {"parallelism": 4, "template": pod(json!([gpu_container("main", "1")]))}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(
            (w.templates[0].replicas, w.templates[0].replicas_set),
            (4, true)
        );
        assert_eq!(w.total_replicas(), 4);
    }

    #[test]
    fn volcano_tasks_are_roles_with_default_names() {
        let o = obj(
            json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "gang"},
            "spec": {"minAvailable": 4, "schedulerName": "volcano", "tasks": [
                {"name": "worker", "replicas": 4, "minAvailable": 4,
                 "template": pod(json!([gpu_container("w", "8")]))},
                {"replicas": 1, "template": pod(json!([gpu_container("ps", "0")]))},
                {"name": "idle"}
            ]}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.kind, WorkloadKind::VolcanoJob);
        let roles: Vec<&str> = w.templates.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["worker", "default1", "idle"]);
        assert_eq!(w.templates[0].path, "spec.tasks[0].template.spec");
        assert_eq!(w.templates[1].replicas_path, "spec.tasks[1].replicas");
        // A task without replicas creates no pods, and without a template has no containers.
        assert_eq!(
            (w.templates[2].replicas, w.templates[2].replicas_set),
            (0, false)
        );
        assert!(w.templates[2].spec.containers.is_empty());
        assert_eq!(w.total_replicas(), 5);
        let v = w.volcano().unwrap();
        assert_eq!(v.spec.min_available, Some(4));
        assert_eq!(v.spec.scheduler_name.as_deref(), Some("volcano"));
        assert_eq!(v.spec.tasks[0].min_available, Some(4));
        assert!(w.uses_current_version());
    }

    #[test]
    fn mpijob_launcher_and_worker_defaults_and_paths() {
        let o = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "nccl"},
            "spec": {"slotsPerWorker": 8, "runLauncherAsWorker": false, "mpiReplicaSpecs": {
                "Launcher": {"template": pod(json!([{"name": "l", "image": "mpi:1",
                                                     "command": ["mpirun", "-np", "16"]}]))},
                "Worker": {"replicas": 2, "template": pod(json!([gpu_container("w", "8")]))}
            }}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.kind, WorkloadKind::MpiJob);
        let l = w.template("Launcher").unwrap();
        assert_eq!((l.replicas, l.replicas_set), (1, false));
        let wk = w.template("Worker").unwrap();
        assert_eq!(wk.path, "spec.mpiReplicaSpecs.Worker.template.spec");
        assert_eq!(wk.replicas_path, "spec.mpiReplicaSpecs.Worker.replicas");
        assert_eq!(w.total_replicas(), 3);
        assert_eq!(w.mpi().unwrap().slots_per_worker(), (8, true));
        let paths: Vec<&str> = w.containers().map(|(_, _, p)| p).collect();
        assert_eq!(
            paths,
            [
                "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]",
                "spec.mpiReplicaSpecs.Worker.template.spec.containers[0]"
            ]
        );

        // Worker replicas default to 0; a miscased key creates no pods.
        let o = obj(json!({"apiVersion": "kubeflow.org/v1", "kind": "MPIJob",
            "metadata": {"name": "old"},
            "spec": {"mpiReplicaSpecs": {"Worker": {"template": pod(json!([]))},
                                         "launcher": {"replicas": 1}}}}));
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.templates.len(), 1);
        assert_eq!(w.template("Worker").unwrap().replicas, 0);
        assert_eq!(w.version(), "v1");
        assert!(!w.uses_current_version());
    }

    #[test]
    fn pytorchjob_master_and_workers_or_workers_only() {
        let o = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "ddp"},
            "spec": {"nprocPerNode": "8", "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": pod(json!([gpu_container("pytorch", "8")]))},
                "Worker": {"replicas": 3, "template": pod(json!([gpu_container("pytorch", "8")]))}
            }}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        let roles: Vec<&str> = w.templates.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["Master", "Worker"]);
        assert_eq!(w.total_replicas(), 4);
        assert_eq!(
            w.template("Master").unwrap().path,
            "spec.pytorchReplicaSpecs.Master.template.spec"
        );
        assert_eq!(
            w.pytorch().unwrap().nproc_per_node().unwrap().as_int(),
            Some(8)
        );

        // Workers only, key written in lower case (the defaulter accepts it), replicas unset.
        let o = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "elastic"},
            "spec": {"elasticPolicy": {"rdzvBackend": "c10d"}, "pytorchReplicaSpecs": {
                "worker": {"template": pod(json!([gpu_container("pytorch", "1")]))}
            }}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert!(w.template("Master").is_none());
        let t = w.template("Worker").unwrap();
        assert_eq!((t.replicas, t.replicas_set), (1, false));
        assert_eq!(t.path, "spec.pytorchReplicaSpecs.worker.template.spec");
        assert_eq!(t.replicas_path, "spec.pytorchReplicaSpecs.worker.replicas");
    }

    #[test]
    fn nodeset_pod_has_slurmd_first_and_template_fields() {
        let o = obj(
            json!({"apiVersion": "slinky.slurm.net/v1beta1", "kind": "NodeSet",
            "metadata": {"name": "gpu"},
            "spec": {"controllerRef": {"name": "slurm"}, "replicas": 2,
                     "partition": {"enabled": true},
                     "slurmd": {"image": "ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04",
                                "resources": {"limits": {"nvidia.com/gpu": "8"}}},
                     "template": {"metadata": {"labels": {"pool": "gpu"}},
                                  "spec": {"nodeSelector": {"topology.kubernetes.io/zone": "a"},
                                           "containers": [{"name": "exporter", "image": "e:1"}]}}}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.kind, WorkloadKind::NodeSet);
        let t = w.template("NodeSet").unwrap();
        assert_eq!((t.replicas, t.replicas_set), (2, true));
        assert_eq!(t.path, "spec.template.spec");
        assert_eq!(t.labels["pool"], "gpu");
        assert!(t.spec.node_selector.is_some());
        let found: Vec<(&str, &str)> = w
            .containers()
            .map(|(_, c, p)| (c.name.as_str(), p))
            .collect();
        assert_eq!(
            found,
            [
                ("slurmd", "spec.slurmd"),
                ("exporter", "spec.template.spec.containers[0]")
            ]
        );
        assert!(w.nodeset().unwrap().partition_enabled());

        let o = obj(
            json!({"apiVersion": "slinky.slurm.net/v1beta1", "kind": "NodeSet",
            "metadata": {"name": "cpu"}, "spec": {"controllerRef": {"name": "slurm"}}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(
            (w.templates[0].replicas, w.templates[0].replicas_set),
            (1, false)
        );
        assert_eq!(w.templates[0].spec.containers[0].name, "slurmd");
    }

    #[test]
    fn deployment_and_statefulset_replicas_default_to_one() {
        let o = obj(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "train"}},
                     "template": pod(json!([gpu_container("c", "0")]))}}));
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.kind, WorkloadKind::Deployment);
        let t = w.template("Deployment").unwrap();
        assert_eq!((t.replicas, t.replicas_set), (1, false));
        assert_eq!(t.replicas_path, "spec.replicas");
        assert_eq!(t.path, "spec.template.spec");

        let o = obj(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {"replicas": 3, "serviceName": "db",
                     "template": pod(json!([gpu_container("c", "0")]))}}));
        let w = Workload::from_obj(&o).unwrap().unwrap();
        assert_eq!(w.template("StatefulSet").unwrap().replicas, 3);
        assert_eq!(w.total_replicas(), 3);
    }

    #[test]
    fn negative_or_non_integer_replicas_are_field_errors() {
        let o = obj(
            json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "g"}, "spec": {"tasks": [{"name": "w", "replicas": -1}]}}),
        );
        let (field, message) = field_error(&o);
        assert_eq!(field, "spec.tasks[0].replicas");
        assert!(message.contains("negative"), "{message}");

        let o = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "m"},
            "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": -2}}}}),
        );
        assert_eq!(field_error(&o).0, "spec.mpiReplicaSpecs.Worker.replicas");

        let o = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "m"},
            "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 4_294_967_296_i64}}}}),
        );
        assert!(field_error(&o).1.contains("32-bit"));

        let o = obj(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"}, "spec": {"replicas": 1.5}}));
        assert_eq!(field_error(&o).0, "spec.replicas");

        let o = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "p"},
            "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": "3"}}}}),
        );
        assert_eq!(
            field_error(&o).0,
            "spec.pytorchReplicaSpecs.Worker.replicas"
        );

        let o = obj(
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"parallelism": -3, "template": {}}}),
        );
        assert_eq!(field_error(&o).0, "spec.parallelism");

        let o = obj(
            json!({"apiVersion": "slinky.slurm.net/v1beta1", "kind": "NodeSet",
            "metadata": {"name": "n"}, "spec": {"replicas": -1}}),
        );
        assert_eq!(field_error(&o).0, "spec.replicas");
    }

    #[test]
    fn bad_metadata_and_mistyped_fields_are_field_errors() {
        // Malformed metadata is refused when the object is read, before any view of it.
        for (meta, field) in [
            (json!("web"), "metadata"),
            (json!({"name": 7}), "metadata.name"),
        ] {
            let v = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta});
            let origin = Origin::File {
                path: "w.yaml".into(),
                doc: 1,
                item: None,
            };
            match Obj::new(v, origin) {
                Err(InputError::Field { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        let o = obj(
            json!({"apiVersion": "slinky.slurm.net/v1beta1", "kind": "NodeSet",
            "metadata": {"name": "n"}, "spec": {"slurmd": {"image": 5}}}),
        );
        assert_eq!(field_error(&o).0, "spec.slurmd.image");
        let o = obj(
            json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "g"},
            "spec": {"tasks": [{"template": {"metadata": {"labels": {"a": 1}}}}]}}),
        );
        assert_eq!(
            field_error(&o).0,
            "spec.tasks[0].template.metadata.labels.a"
        );
    }

    #[test]
    fn other_kinds_are_not_workloads() {
        for (av, kind) in [
            ("v1", "Pod"),
            ("v1", "ConfigMap"),
            ("scheduling.volcano.sh/v1beta1", "PodGroup"),
            ("example.com/v1", "Job"),
            ("slinky.slurm.net/v1beta1", "Controller"),
            ("karpenter.sh/v1", "NodePool"),
        ] {
            let o = obj(json!({"apiVersion": av, "kind": kind, "metadata": {"name": "x"}}));
            assert!(Workload::from_obj(&o).unwrap().is_none(), "{av} {kind}");
        }
    }

    #[test]
    fn kinds_match_by_group_whatever_the_version() {
        assert_eq!(WorkloadKind::of("batch/v1", "Job"), Some(WorkloadKind::Job));
        assert_eq!(
            WorkloadKind::of("batch.volcano.sh/v1beta1", "Job"),
            Some(WorkloadKind::VolcanoJob)
        );
        assert_eq!(
            WorkloadKind::of("slinky.slurm.net/v1alpha1", "NodeSet"),
            Some(WorkloadKind::NodeSet)
        );
        assert_eq!(WorkloadKind::of("apps/v1", "DaemonSet"), None);
        // The served versions the labs grade: the one table, observe::kinds.
        assert_eq!(WorkloadKind::PyTorchJob.api_version(), "kubeflow.org/v1");
        assert_eq!(WorkloadKind::MpiJob.api_version(), "kubeflow.org/v2beta1");
        assert_eq!(
            WorkloadKind::NodeSet.api_version(),
            "slinky.slurm.net/v1beta1"
        );
        assert_eq!(WorkloadKind::Job.api_version(), "batch/v1");
    }
}
