//! Lab `efa-nccl`: two pods that run NCCL over EFA, one per EFA node. The object `nccl-efa` is
//! either a `batch/v1` Indexed Job (kind: each pod is a rank) or a `kubeflow.org/v2beta1` MPIJob
//! whose Launcher starts the ranks on its two Workers with mpirun (EKS: a real two-node
//! all-reduce, as aws-samples/awsome-distributed-training
//! `micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml` runs nccl-tests).
//!
//! - Spec checks judge the template whose pods run NCCL (the Job's; the MPIJob's Worker) and its
//!   training container: the first container asking for nvidia.com/gpu, else the first.
//! - `efa-count` and `gpus-whole-node` compare against the instance types that template allows;
//!   when it names none (`efa-instance-type` fails), the types of the nodes its pods were bound
//!   to, else the `instance_type` parameter: a missing type fails one check, not three.
//! - State checks follow the pods by ownerReference uid (kit `owned`): the Job's pods, or the
//!   MPIJob's Workers (the operator owns them directly; the Launcher's pod belongs to its Job).
//! - An unschedulable pod fails `pods-running` only when no node, even empty, could hold it; on
//!   EKS an autoscaler may add one, so there only requests no allowed instance type can hold
//!   (per the instance table) are the learner's fault.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Node, Pod, PodSpec};

use super::{Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Status, Verifier};
use crate::facts::instances::{self, EFA, GPU, INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::facts::Profile;
use crate::observe::kinds::{CONFIGMAPS, JOBS, MPIJOBS, PODS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::{self, EnvLookup, Mpirun};
use crate::verify::kit::placement::{self, Allowed};
use crate::verify::kit::quantity::Quantity;
use crate::verify::kit::resources::{self, Rule, Violation};
use crate::verify::kit::selector::Selector;
use crate::verify::kit::workload::{PodTemplate, Workload, WorkloadKind};
use crate::verify::kit::{conditions, owned};
use crate::verify::views::mpi;

pub struct EfaNccl;

static JOBS_READ: Read = Read::lab(&JOBS);
static MPIJOBS_READ: Read = Read::lab(&MPIJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
static READS: &[&Read] = &[&JOBS_READ, &MPIJOBS_READ, &PODS_READ, &CONFIGMAPS_READ];

const NAME: &str = "nccl-efa";
/// Two pods, one per node.
const PODS_WANTED: i64 = 2;
const FI_PROVIDER: &str = "FI_PROVIDER";
const CHECKS: &[&str] = &[
    "efa-in-limits",
    "efa-count",
    "gpus-whole-node",
    "fi-provider",
    "efa-instance-type",
    "single-zone",
    "pods-on-efa-nodes",
    "pods-same-zone",
    "pods-running",
];

/// Set by the Job controller on an Indexed Job's pods (k8s.io/api batch/v1 types.go
/// `JobCompletionIndexAnnotation`).
const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// Labels the API server adds to a Job's template unless `manualSelector` (kubernetes
/// pkg/registry/batch/job/strategy.go `generateSelector`; batch/v1 `JobNameLabel`).
const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
/// Labels the MPI Operator puts on a Worker pod (kubeflow/mpi-operator v0.8.0
/// pkg/controller/mpi_job_controller.go `newWorker`, `defaultLabels`; v2beta1 constants.go).
const MPI_JOB_NAME: &str = "training.kubeflow.org/job-name";
const MPI_ROLE: &str = "training.kubeflow.org/job-role";
const MPI_OPERATOR: (&str, &str) = ("training.kubeflow.org/operator-name", "mpi-operator");
const MPI_REPLICA_INDEX: &str = "training.kubeflow.org/replica-index";
/// Container waiting reasons no amount of waiting fixes (kubelet `ErrImagePull`,
/// `ImagePullBackOff`, `InvalidImageName`, `CreateContainerConfigError`, `CrashLoopBackOff`).
const STUCK: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CrashLoopBackOff",
];

impl Verifier for EfaNccl {
    fn lab_id(&self) -> &'static str {
        "efa-nccl"
    }
    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }
    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        // The Job, else an MPIJob of that name. A cluster without the MPI Operator serves no
        // MPIJobs: then only the Job counts; any other failed read leaves the lab ungraded.
        let obj = match ctx.named(&JOBS_READ, NAME, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(missing) => match ctx.list(&MPIJOBS_READ) {
                Ok(objs) => match objs.into_iter().find(|o| o.name() == NAME) {
                    Some(o) => o,
                    None => return Ok(missing),
                },
                Err(Unavailable::NotServed { .. }) => return Ok(missing),
                Err(why) if missing.outcomes.iter().all(|o| o.status == Status::Fail) => {
                    return Ok(Judgement::every(CHECKS, |c| Outcome::unavailable(c, &why)));
                }
                Err(_) => return Ok(missing),
            },
        };
        let lab = Lab::read(ctx, obj)?;
        let mut j = Judgement::default();
        j.push(lab.efa_in_limits());
        j.push(lab.efa_count(ctx));
        j.push(lab.gpus_whole_node(ctx)?);
        j.push(lab.fi_provider()?);
        j.push(lab.efa_instance_type(ctx));
        j.push(lab.single_zone()?);
        j.push(lab.pods_on_efa_nodes());
        j.push(lab.pods_same_zone());
        j.push(lab.pods_running(ctx)?);
        lab.advise(&mut j)?;
        Ok(j)
    }
}

/// One of the pods that run NCCL.
struct PodView {
    name: String,
    /// The Job's completion index or the Worker's replica index.
    slot: Option<u32>,
    node: Option<String>,
    phase: String,
    spec: PodSpec,
    /// What the pod asks for of `vpc.amazonaws.com/efa`.
    efa: i64,
    /// `PodScheduled=False` with reason `Unschedulable`: the scheduler's message.
    unschedulable: Option<String>,
    /// A container stuck for good: (container, reason, message).
    stuck: Option<(String, String, String)>,
}

struct Lab<'a> {
    obj: &'a Obj,
    wl: Workload<'a>,
    /// Index of the template whose pods run NCCL.
    nccl: usize,
    namespace: String,
    configmaps: Result<Vec<&'a Obj>, Unavailable>,
    /// The NCCL pods that are not terminating, one per slot (the furthest along).
    pods: Result<Vec<PodView>, Unavailable>,
    nodes: Result<Vec<NodeView>, Unavailable>,
}

/// A node with its allocatable resources read.
struct NodeView {
    name: String,
    node: Node,
    allocatable: BTreeMap<String, Quantity>,
}

impl<'a> Lab<'a> {
    fn read(ctx: &JudgeCtx<'a>, obj: &'a Obj) -> Result<Lab<'a>, InputError> {
        let wl = Workload::from_obj(obj)?
            .ok_or_else(|| obj.field_error("kind", "expected a batch/v1 Job or an MPIJob"))?;
        let nccl = match wl.kind {
            WorkloadKind::MpiJob => wl.templates.iter().position(|t| t.role == mpi::WORKER),
            _ => Some(0),
        };
        let Some(nccl) = nccl.filter(|i| *i < wl.templates.len()) else {
            return Err(obj.field_error("spec", "no pod template that runs NCCL"));
        };
        // A pod needs a container ("Required value", core/v1 PodSpec validation).
        if wl.templates[nccl].spec.containers.is_empty() {
            let path = wl.templates[nccl].field("containers");
            return Err(obj.field_error(path, "must have at least one container"));
        }
        let pods = match ctx.list(&PODS_READ) {
            Err(u) => Err(u),
            Ok(all) => {
                // An owner read from a file has no uid and owns nothing.
                let current = owned::owned_by(obj, &all)
                    .map(|o| o.current)
                    .unwrap_or_default();
                let mut best: BTreeMap<String, PodView> = BTreeMap::new();
                for o in current {
                    let p = pod_view(o, wl.kind)?;
                    let key = p
                        .slot
                        .map_or_else(|| p.name.clone(), |s| format!("{s:010}"));
                    if best
                        .get(&key)
                        .is_none_or(|b| rank(&p.phase) < rank(&b.phase))
                    {
                        best.insert(key, p);
                    }
                }
                Ok(best.into_values().collect())
            }
        };
        let nodes = match ctx.nodes_read() {
            Err(u) => Err(u),
            Ok(objs) => Ok(objs
                .iter()
                .map(|o| node_view(o))
                .collect::<Result<_, _>>()?),
        };
        Ok(Lab {
            obj,
            wl,
            nccl,
            namespace: ctx.target.namespace.clone(),
            configmaps: ctx.list(&CONFIGMAPS_READ),
            pods,
            nodes,
        })
    }

    fn tpl(&self) -> &PodTemplate {
        &self.wl.templates[self.nccl]
    }

    fn is_mpi(&self) -> bool {
        self.wl.kind == WorkloadKind::MpiJob
    }

    /// The training container and its field path (`read` made sure there is one).
    fn container(&self) -> (&Container, &str) {
        let t = self.tpl();
        let first = t
            .containers()
            .next()
            .unwrap_or((&t.spec.containers[0], &t.path));
        t.containers()
            .find(|(c, _)| mentions(c, GPU))
            .unwrap_or(first)
    }

    /// `job/nccl-efa` or `mpijob/nccl-efa`, as kubectl names it.
    fn object(&self) -> String {
        format!("{}/{NAME}", self.wl.kind.kind().to_lowercase())
    }

    /// The label selector of the NCCL pods, for kubectl in hints.
    fn selector(&self) -> String {
        if self.is_mpi() {
            format!("{MPI_JOB_NAME}={NAME},{MPI_ROLE}=worker")
        } else {
            format!("{}={NAME}", JOB_NAME_LABELS[1])
        }
    }

    /// The labels the NCCL pods will carry: the template's and the controller's.
    fn pod_labels(&self) -> BTreeMap<String, String> {
        let mut l = self.tpl().labels.clone();
        let mut add = |k: &str, v: &str| {
            l.entry(k.to_string()).or_insert_with(|| v.to_string());
        };
        if self.is_mpi() {
            add(MPI_OPERATOR.0, MPI_OPERATOR.1);
            add(MPI_JOB_NAME, NAME);
            add(MPI_ROLE, "worker");
        } else {
            let manual = self
                .wl
                .batch_job()
                .and_then(|j| j.spec.as_ref()?.manual_selector);
            if manual != Some(true) {
                JOB_NAME_LABELS.iter().for_each(|k| add(k, NAME));
            }
        }
        l
    }

    fn fail(&self, check: &str, expected: impl Into<String>, found: impl Into<String>) -> Outcome {
        Outcome::fail(check, expected, found)
            .with("namespace", &self.namespace)
            .with("object", self.object())
            .with("selector", self.selector())
            .with("placement", &self.tpl().path)
    }

    /// The container's problems with `resource` that the API server refuses, in any template.
    fn violations(&self, resource: &str) -> Vec<Violation> {
        self.wl
            .templates
            .iter()
            .flat_map(|t| resources::validate_pod_spec(&t.spec, &t.path))
            .filter(|v| v.resource == resource)
            .collect()
    }

    /// A refusal of the API server as a failure of `check`, quoting its text.
    fn refused(&self, check: &str, v: &Violation) -> Outcome {
        let cpath = v.path.split(".resources.").next().unwrap_or(&v.path);
        let written = |list: &str| {
            let c = self.wl.containers().find(|(_, c, _)| c.name == v.container);
            let q = c.and_then(|(_, c, _)| {
                let r = c.resources.as_ref()?;
                let m = if list == "limits" {
                    &r.limits
                } else {
                    &r.requests
                };
                m.as_ref()?.get(&v.resource).map(|q| q.0.clone())
            });
            q.unwrap_or_else(|| "—".into())
        };
        let res = &v.resource;
        let (hint, expected, found) = match v.rule {
            Rule::LimitRequired => (
                "requests-only",
                v.path.clone(),
                format!("{cpath}.resources.requests[{res}]: {}", written("requests")),
            ),
            Rule::MustEqualLimit => {
                let lim = written("limits");
                (
                    "mismatch",
                    format!("{res}: requests {lim}, limits {lim}"),
                    format!("{res}: requests {}, limits {lim}", written("requests")),
                )
            }
            _ => (
                "api-rule",
                v.path.clone(),
                v.value.clone().unwrap_or_default(),
            ),
        };
        self.fail(check, expected, found)
            .hint(hint)
            .with("path", cpath)
            .with("api_error", v.api_server_text())
    }

    // --- spec checks ---------------------------------------------------------------------------

    fn efa_in_limits(&self) -> Outcome {
        const ID: &str = "efa-in-limits";
        // The object's version is judged here, the first check that reads it.
        if !self.wl.uses_current_version() {
            let served = self.wl.kind.api_version();
            return self
                .fail(ID, &served, self.wl.api_version())
                .hint("api-version")
                .with("kind", self.wl.kind.kind())
                .with("served", served)
                .with("found", self.wl.api_version());
        }
        if let Some(v) = self.violations(EFA).first() {
            return self.refused(ID, v);
        }
        let (c, path) = self.container();
        let expected = format!("{path}.resources.limits[{EFA}]");
        if limits_has(c, EFA) {
            return Outcome::pass(ID);
        }
        let other = self
            .wl
            .containers()
            .find(|(_, o, p)| *p != path && mentions(o, EFA));
        match other {
            Some((_, _, op)) => self
                .fail(ID, expected, format!("{op}.resources.limits[{EFA}]"))
                .hint("other-container")
                .with("path", path)
                .with("other", op),
            None => self.fail(ID, expected, "—").with("path", path),
        }
    }

    /// The instance types EFA and GPU counts are judged against, and where they came from.
    fn judged_types(&self, ctx: &JudgeCtx) -> Option<(BTreeSet<String>, String)> {
        if let Allowed::Only(set) = placement::allowed_values(&self.tpl().spec, INSTANCE_TYPE_LABEL)
        {
            return Some((set, self.tpl().path.clone()));
        }
        let bound = self.bound_nodes();
        let types: BTreeSet<String> = bound
            .iter()
            .filter_map(|(_, n)| label(&n.node, INSTANCE_TYPE_LABEL))
            .collect();
        if !types.is_empty() {
            let names: Vec<&str> = bound.iter().map(|(_, n)| n.name.as_str()).collect();
            return Some((types, format!("spec.nodeName: {}", names.join(", "))));
        }
        let t = ctx.params.get("instance_type")?;
        Some((
            BTreeSet::from([t.to_string()]),
            "--param instance_type".into(),
        ))
    }

    fn efa_count(&self, ctx: &JudgeCtx) -> Outcome {
        const ID: &str = "efa-count";
        let (c, path) = self.container();
        let Some((types, from)) = self.judged_types(ctx) else {
            return Outcome::skipped(ID, Reason::NeedsParam("instance_type".into()));
        };
        let unknown: Vec<&str> = types
            .iter()
            .map(String::as_str)
            .filter(|t| instances::lookup(t).is_none())
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = instances::INSTANCES.iter().map(|i| i.name).collect();
            return self
                .fail(
                    ID,
                    format!("{INSTANCE_TYPE_LABEL}: {}", known.join(", ")),
                    format!("{INSTANCE_TYPE_LABEL}: {}", unknown.join(", ")),
                )
                .hint("unknown-type")
                .with("unknown", unknown.join(", "))
                .with("known_types", known.join(", "));
        }
        let counts: BTreeSet<u32> = types
            .iter()
            .filter_map(|t| instances::efa_interfaces(t))
            .collect();
        let found = format!("{EFA}: {}", count_text(c, EFA));
        if counts.len() > 1 {
            let each: Vec<String> = types
                .iter()
                .map(|t| format!("{t} {}", instances::efa_interfaces(t).unwrap_or(0)))
                .collect();
            return self
                .fail(ID, format!("{EFA}: {}", each.join(", ")), found)
                .hint("mixed-types")
                .with("counts", each.join(", "));
        }
        let want = counts.first().copied().unwrap_or(0);
        let names = join(&types);
        let o = if count_of(c, EFA) == Some(i64::from(want)) {
            Outcome::pass(ID)
        } else {
            self.fail(ID, format!("{EFA}: {want} ({names})"), found)
        };
        o.with("instance_type", names)
            .with("efa_expected", want)
            .with("path", path)
            .with("type_from", from)
    }

    fn gpus_whole_node(&self, ctx: &JudgeCtx) -> Result<Outcome, InputError> {
        const ID: &str = "gpus-whole-node";
        let param = Params::number(ctx.params.get("gpus"), "gpus")?.unwrap_or(8);
        if let Some(v) = self.violations(GPU).first() {
            return Ok(self.refused(ID, v).with("gpus_expected", param));
        }
        let (c, path) = self.container();
        let types = self.judged_types(ctx).map(|(t, _)| t).unwrap_or_default();
        let known: Vec<&instances::Instance> =
            types.iter().filter_map(|t| instances::lookup(t)).collect();
        let gpuless: Vec<&str> = known
            .iter()
            .filter(|i| i.gpus == 0)
            .map(|i| i.name)
            .collect();
        if !gpuless.is_empty() {
            let gpu_types = instances::efa_gpu_types().join(", ");
            return Ok(self
                .fail(
                    ID,
                    format!("{INSTANCE_TYPE_LABEL}: {gpu_types}"),
                    format!("{INSTANCE_TYPE_LABEL}: {}", gpuless.join(", ")),
                )
                .hint("no-gpus-on-type")
                .with("gpuless", gpuless.join(", "))
                .with("gpu_types", gpu_types));
        }
        // A whole node: the table's GPU count when every judged type is known and agrees.
        let table: BTreeSet<u32> = known.iter().map(|i| i.gpus).collect();
        let want = match table.first() {
            Some(&n) if table.len() == 1 && known.len() == types.len() => n,
            _ => param,
        };
        let o = if count_of(c, GPU) == Some(i64::from(want)) {
            Outcome::pass(ID)
        } else {
            self.fail(
                ID,
                format!("{GPU}: {want}"),
                format!("{GPU}: {}", count_text(c, GPU)),
            )
        };
        Ok(o.with("gpus_expected", want).with("path", path))
    }

    fn env(&self, c: &Container, name: &str) -> EnvLookup {
        let cm = |map: &str, key: &str| match &self.configmaps {
            Err(_) => EnvLookup::Unresolved(format!("ConfigMap/{map}")),
            Ok(list) => match list.iter().find(|o| o.name() == map) {
                None => EnvLookup::Unresolved(format!("ConfigMap/{map}")),
                Some(o) => match o.value["data"][key].as_str() {
                    Some(v) => EnvLookup::Value(v.to_string()),
                    None => EnvLookup::Absent,
                },
            },
        };
        cmdline::container_env(c, name, &cm)
    }

    fn fi_provider(&self) -> Result<Outcome, InputError> {
        const ID: &str = "fi-provider";
        let (c, path) = self.container();
        let worker_env = self.env(c, FI_PROVIDER);
        if self.is_mpi() {
            return self.fi_provider_exported(path, &worker_env);
        }
        let expected = format!("{path}.env: {FI_PROVIDER}=efa");
        Ok(match worker_env {
            EnvLookup::Value(v) if v.trim() == "efa" => Outcome::pass(ID),
            EnvLookup::Value(v) => self.wrong_value(&expected, &v),
            EnvLookup::Unresolved(_) => self.unresolved(&expected, c, path),
            EnvLookup::Absent => {
                let other = self
                    .wl
                    .containers()
                    .find(|(_, o, p)| *p != path && self.env(o, FI_PROVIDER) != EnvLookup::Absent);
                match other {
                    Some((_, _, op)) => self
                        .fail(ID, expected, format!("{op}.env: {FI_PROVIDER}"))
                        .hint("other-container")
                        .with("path", path)
                        .with("other", op),
                    None => self
                        .fail(ID, expected, format!("{path}.env: —"))
                        .with("path", path),
                }
            }
        })
    }

    fn wrong_value(&self, expected: &str, v: &str) -> Outcome {
        self.fail("fi-provider", expected, format!("{FI_PROVIDER}={v}"))
            .hint("wrong-value")
            .with("value", v)
    }

    fn unresolved(&self, expected: &str, c: &Container, path: &str) -> Outcome {
        let source = env_source(c, FI_PROVIDER);
        self.fail("fi-provider", expected, format!("{FI_PROVIDER} ← {source}"))
            .hint("unresolved")
            .with("source", source)
            .with("path", path)
    }

    /// MPIJob: the ranks are started by the Launcher's mpirun over ssh, so they see only what
    /// mpirun exports (Open MPI mpirun(1) `-x`: "Export the specified environment variables to
    /// the remote nodes before executing the program"); the Workers' own `env` is not theirs.
    fn fi_provider_exported(
        &self,
        worker: &str,
        worker_env: &EnvLookup,
    ) -> Result<Outcome, InputError> {
        const ID: &str = "fi-provider";
        let expected = format!("mpirun -x {FI_PROVIDER}=efa");
        let launcher = self
            .wl
            .template(mpi::LAUNCHER)
            .and_then(|t| t.containers().next());
        let Some((lc, lpath)) = launcher else {
            let path = format!("spec.mpiReplicaSpecs.{}", mpi::LAUNCHER);
            return Ok(self
                .fail(ID, expected, format!("{path}: —"))
                .hint("no-mpirun")
                .with("path", path)
                .with("command", "—"));
        };
        let command = cmdline::command_line(lc, 160);
        let invs = cmdline::invocations(lc)
            .map_err(|e| self.obj.field_error(format!("{lpath}.command"), e.problem))?;
        let Some(run) = invs.iter().find_map(|i| Mpirun::find(&i.expanded)) else {
            return Ok(self
                .fail(ID, expected, &command)
                .hint("no-mpirun")
                .with("path", lpath)
                .with("command", command));
        };
        let value = match run.export(FI_PROVIDER) {
            Some(x) => match x.value {
                Some(v) => EnvLookup::Value(v),
                // `-x NAME` forwards the Launcher's own value.
                None => self.env(lc, FI_PROVIDER),
            },
            None => EnvLookup::Absent,
        };
        Ok(match value {
            EnvLookup::Value(v) if v.trim() == "efa" => Outcome::pass(ID),
            EnvLookup::Value(v) => self.wrong_value(&expected, &v),
            EnvLookup::Unresolved(_) => self.unresolved(&expected, lc, lpath),
            EnvLookup::Absent => {
                let found = match worker_env {
                    EnvLookup::Absent => command.clone(),
                    _ => format!("{worker}.env: {FI_PROVIDER}"),
                };
                self.fail(ID, expected, found)
                    .hint("mpi-export")
                    .with("command", command)
            }
        })
    }

    fn efa_instance_type(&self, ctx: &JudgeCtx) -> Outcome {
        const ID: &str = "efa-instance-type";
        let efa_types = instances::efa_gpu_types().join(", ");
        let expected = format!("{INSTANCE_TYPE_LABEL}: {efa_types}");
        let found = |v: &str| format!("{INSTANCE_TYPE_LABEL}: {v}");
        let example = ctx.params.get("instance_type").unwrap_or("p5.48xlarge");
        match placement::allowed_values(&self.tpl().spec, INSTANCE_TYPE_LABEL) {
            Allowed::Any => self
                .fail(ID, expected, found("—"))
                .with("efa_types", efa_types)
                .with("instance_type", example),
            Allowed::None => self.fail(ID, expected, found("∅")).hint("contradictory"),
            Allowed::Only(set) => {
                let not_efa: Vec<&str> = set
                    .iter()
                    .map(String::as_str)
                    .filter(|t| instances::efa_interfaces(t).unwrap_or(0) == 0)
                    .collect();
                if not_efa.is_empty() {
                    return Outcome::pass(ID).with("instance_type", join(&set));
                }
                self.fail(ID, expected, found(&not_efa.join(", ")))
                    .hint("not-efa")
                    .with("not_efa", not_efa.join(", "))
                    .with("efa_types", efa_types)
            }
        }
    }

    fn single_zone(&self) -> Result<Outcome, InputError> {
        const ID: &str = "single-zone";
        let expected = format!("{ZONE_LABEL}: <zone>");
        let found = |v: &str| format!("{ZONE_LABEL}: {v}");
        let spec = &self.tpl().spec;
        match placement::allowed_values(spec, ZONE_LABEL) {
            Allowed::Only(set) if set.len() == 1 => {
                return Ok(Outcome::pass(ID).with("zone", join(&set)))
            }
            Allowed::Only(set) => {
                return Ok(self
                    .fail(ID, expected, found(&join(&set)))
                    .hint("several-zones")
                    .with("zones", join(&set)))
            }
            Allowed::None => return Ok(self.fail(ID, expected, found("∅")).hint("contradictory")),
            Allowed::Any => {}
        }
        // A required pod affinity on the zone that selects the pods themselves keeps them together.
        let pa = spec.affinity.as_ref().and_then(|a| a.pod_affinity.as_ref());
        let required: Vec<_> = pa
            .and_then(|p| {
                p.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .into_iter()
            .flatten()
            .filter(|t| t.topology_key == ZONE_LABEL)
            .collect();
        let labels = self.pod_labels();
        let affinity_path = self.tpl().field("affinity.podAffinity");
        let mut on_zone = Vec::new();
        for t in &required {
            let sel = Selector::from_label_selector(t.label_selector.as_ref())
                .map_err(|e| self.obj.field_error(&affinity_path, e))?;
            if sel.matches(&labels) && self.in_own_namespace(t)? {
                return Ok(Outcome::pass(ID));
            }
            on_zone.push(sel.to_string());
        }
        if !on_zone.is_empty() {
            let own: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            return Ok(self
                .fail(
                    ID,
                    expected,
                    format!("{affinity_path}: {}", on_zone.join("; ")),
                )
                .hint("affinity-other-pods")
                .with("labels", own.join(", "))
                .with("own_label", self.selector()));
        }
        let preferred_pod = pa
            .and_then(|p| {
                p.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .into_iter()
            .flatten()
            .any(|w| w.pod_affinity_term.topology_key == ZONE_LABEL);
        let preferred_node = spec
            .affinity
            .as_ref()
            .and_then(|a| {
                a.node_affinity
                    .as_ref()?
                    .preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .into_iter()
            .flatten()
            .flat_map(|p| p.preference.match_expressions.iter().flatten())
            .any(|e| e.key == ZONE_LABEL);
        if preferred_pod || preferred_node {
            return Ok(self
                .fail(
                    ID,
                    expected,
                    "preferredDuringSchedulingIgnoredDuringExecution",
                )
                .hint("preferred-only"));
        }
        Ok(self.fail(ID, expected, found("—")))
    }

    /// core/v1 PodAffinityTerm: no namespaces and no namespaceSelector mean the pod's own
    /// namespace; a namespaceSelector is matched against the namespace's
    /// `kubernetes.io/metadata.name` label, which the API server sets on every namespace.
    fn in_own_namespace(
        &self,
        t: &k8s_openapi::api::core::v1::PodAffinityTerm,
    ) -> Result<bool, InputError> {
        let listed = t.namespaces.as_deref().unwrap_or_default();
        let Some(ns_sel) = &t.namespace_selector else {
            return Ok(listed.is_empty() || listed.contains(&self.namespace));
        };
        let sel = Selector::from_label_selector(Some(ns_sel)).map_err(|e| {
            self.obj
                .field_error(self.tpl().field("affinity.podAffinity"), e)
        })?;
        let ns = BTreeMap::from([(
            "kubernetes.io/metadata.name".to_string(),
            self.namespace.clone(),
        )]);
        Ok(listed.contains(&self.namespace) || sel.matches(&ns))
    }

    // --- state checks --------------------------------------------------------------------------

    /// The job's terminal state: (succeeded, failed condition).
    fn finished(&self) -> Result<(bool, Option<conditions::Condition>), InputError> {
        let conds = conditions::from_object(&self.obj.value)
            .map_err(|e| self.obj.field_error("status.conditions", e))?;
        let done = if self.is_mpi() {
            mpi::COND_SUCCEEDED
        } else {
            "Complete"
        };
        let failed = conditions::find(&conds, "Failed")
            .filter(|c| c.is_true())
            .cloned();
        Ok((conditions::is_true(&conds, done), failed))
    }

    /// How many NCCL pods run at once: the Workers, or min(completions, parallelism).
    fn pods_expected(&self) -> usize {
        let t = self.tpl();
        let completions = self
            .wl
            .batch_job()
            .and_then(|j| j.spec.as_ref()?.completions);
        let n = completions.map_or(t.replicas, |c| t.replicas.min(i64::from(c)));
        n.max(1) as usize
    }

    /// The pods bound to a node the cluster lists, with that node.
    fn bound_nodes(&self) -> Vec<(&PodView, &NodeView)> {
        let (Ok(pods), Ok(nodes)) = (&self.pods, &self.nodes) else {
            return Vec::new();
        };
        let node = |p: &PodView| nodes.iter().find(|n| p.node.as_deref() == Some(&n.name));
        pods.iter().filter_map(|p| Some((p, node(p)?))).collect()
    }

    /// Gate of the node-based checks: every expected pod exists and is bound to a known node.
    fn bound(&self, check: &str) -> Result<Vec<(&PodView, &NodeView)>, Box<Outcome>> {
        let pods = match (&self.pods, &self.nodes) {
            (Err(why), _) | (_, Err(why)) => {
                return Err(Box::new(Outcome::unavailable(check, why)))
            }
            (Ok(p), Ok(_)) => p,
        };
        let wanted = self.pods_expected();
        let done = self.finished().is_ok_and(|(d, _)| d);
        let unbound: Vec<&str> = pods
            .iter()
            .filter(|p| p.node.is_none())
            .map(|p| p.name.as_str())
            .collect();
        let bound = self.bound_nodes();
        let o = if pods.is_empty() && done {
            Outcome::skipped(check, Reason::Message("pods-gone".into()))
        } else if pods.len() < wanted {
            let o = Outcome::pending(check, Reason::Message("no-pods".into()));
            o.with("found", pods.len())
                .with("expected", wanted)
                .with("object", self.object())
        } else if !unbound.is_empty() {
            Outcome::pending(check, Reason::Message("not-bound".into()))
                .with("pods", unbound.join(", "))
        } else if let Some(p) = pods
            .iter()
            .find(|p| !bound.iter().any(|(b, _)| b.name == p.name))
        {
            let o = Outcome::pending(check, Reason::Message("node-missing".into()));
            o.with("pod", &p.name)
                .with("node", p.node.as_deref().unwrap_or_default())
        } else {
            return Ok(bound);
        };
        Err(Box::new(o))
    }

    fn pods_on_efa_nodes(&self) -> Outcome {
        const ID: &str = "pods-on-efa-nodes";
        let bound = match self.bound(ID) {
            Ok(b) => b,
            Err(o) => return *o,
        };
        let mut bad = Vec::new();
        let mut want_max = 1;
        for (p, n) in bound {
            let have = n
                .allocatable
                .get(EFA)
                .and_then(|q| q.count().ok())
                .unwrap_or(0);
            want_max = want_max.max(p.efa);
            if have < p.efa.max(1) {
                bad.push(format!(
                    "{} → {}: {EFA} {have} < {}",
                    p.name,
                    n.name,
                    p.efa.max(1)
                ));
            }
        }
        if bad.is_empty() {
            return Outcome::pass(ID);
        }
        self.fail(ID, format!("{EFA} ≥ {want_max}"), bad.join("; "))
            .with("bad", bad.join("; "))
    }

    fn pods_same_zone(&self) -> Outcome {
        const ID: &str = "pods-same-zone";
        let bound = match self.bound(ID) {
            Ok(b) => b,
            Err(o) => return *o,
        };
        let mut zones = BTreeSet::new();
        let mut placed = Vec::new();
        for (p, n) in &bound {
            let name = &n.name;
            let Some(z) = label(&n.node, ZONE_LABEL) else {
                return Outcome::skipped(ID, Reason::Message("no-zone-label".into()))
                    .with("node", name);
            };
            placed.push(format!("{} → {name} ({z})", p.name));
            zones.insert(z);
        }
        if zones.len() <= 1 {
            return Outcome::pass(ID).with("zone", join(&zones));
        }
        self.fail(ID, format!("{ZONE_LABEL}: <zone>"), placed.join(", "))
            .with("zones", placed.join(", "))
    }

    /// The shape that runs two NCCL pods at once, or what was found instead.
    fn shape_problem(&self) -> Option<(String, String, &'static str)> {
        let replicas = self.tpl().replicas;
        if let Some(m) = self.wl.mpi() {
            let launchers = self.wl.template(mpi::LAUNCHER).map_or(0, |t| t.replicas);
            let ok = replicas == PODS_WANTED && launchers == 1 && !m.suspended();
            let show = |w: i64, l: i64, s: bool| {
                format!("Worker.replicas: {w}, Launcher.replicas: {l}, suspend: {s}")
            };
            return (!ok).then(|| {
                (
                    show(PODS_WANTED, 1, false),
                    show(replicas, launchers, m.suspended()),
                    "mpi-shape",
                )
            });
        }
        let s = self.wl.batch_job()?.spec.as_ref()?;
        let mode = s.completion_mode.as_deref().unwrap_or("NonIndexed");
        let suspend = s.suspend.unwrap_or(false);
        let completions = s.completions.map_or("—".to_string(), |c| c.to_string());
        let ok =
            s.completions == Some(2) && replicas == PODS_WANTED && mode == "Indexed" && !suspend;
        let show = |c: &str, p: i64, m: &str, s: bool| {
            format!("completions: {c}, parallelism: {p}, completionMode: {m}, suspend: {s}")
        };
        (!ok).then(|| {
            (
                show("2", PODS_WANTED, "Indexed", false),
                show(&completions, replicas, mode, suspend),
                "job-shape",
            )
        })
    }

    fn pods_running(&self, ctx: &JudgeCtx) -> Result<Outcome, InputError> {
        const ID: &str = "pods-running";
        if let Some((expected, found, hint)) = self.shape_problem() {
            return Ok(self.fail(ID, expected, found).hint(hint));
        }
        let (done, failed) = self.finished()?;
        if let Some(c) = failed {
            let reason = c.reason.clone().unwrap_or_default();
            return Ok(self
                .fail(
                    ID,
                    if self.is_mpi() {
                        "Succeeded=True"
                    } else {
                        "Complete=True"
                    },
                    format!("Failed=True ({reason})"),
                )
                .hint("job-failed")
                .with("reason", reason)
                .with("message", c.message.unwrap_or_default()));
        }
        // The controller writes the success condition once every pod succeeded; they may be gone.
        if done {
            return Ok(Outcome::pass(ID));
        }
        let pods = match &self.pods {
            Err(why) => return Ok(Outcome::unavailable(ID, why)),
            Ok(p) => p,
        };
        let mut pending: Option<Outcome> = None;
        let mut starting = Vec::new();
        let mut present = 0;
        for slot in 0..PODS_WANTED as u32 {
            let Some(p) = pods.iter().find(|p| p.slot == Some(slot)) else {
                continue;
            };
            present += 1;
            if let Some((container, reason, message)) = &p.stuck {
                return Ok(self
                    .fail(ID, "Running", format!("{}/{container}: {reason}", p.name))
                    .hint("container-waiting")
                    .with("pod", &p.name)
                    .with("container", container)
                    .with("reason", reason)
                    .with("message", message));
            }
            match (p.phase.as_str(), &p.unschedulable) {
                ("Succeeded" | "Running", _) => {}
                ("Failed", _) => {
                    let failed = self.obj.value["status"]["failed"].as_i64().unwrap_or(1);
                    let o = Outcome::pending(ID, Reason::Message("retrying".into()));
                    pending.get_or_insert(o.with("pod", &p.name).with("failed", failed));
                }
                (_, Some(msg)) if self.learner_caused(&p.spec, ctx) => {
                    return Ok(self
                        .fail(
                            ID,
                            "PodScheduled=True",
                            format!("{}: PodScheduled=False (Unschedulable)", p.name),
                        )
                        .hint("unschedulable")
                        .with("pod", &p.name)
                        .with("scheduler_message", msg));
                }
                (_, Some(msg)) => {
                    let o = Outcome::pending(ID, Reason::Message("waiting-capacity".into()));
                    pending.get_or_insert(o.with("pod", &p.name).with("scheduler_message", msg));
                }
                (_, None) => starting.push(p.name.clone()),
            }
        }
        if let Some(o) = pending {
            return Ok(o);
        }
        if present < PODS_WANTED as usize {
            let o = Outcome::pending(ID, Reason::Message("no-pods".into()));
            return Ok(o
                .with("found", present)
                .with("expected", PODS_WANTED)
                .with("object", self.object()));
        }
        if !starting.is_empty() {
            return Ok(Outcome::pending(ID, Reason::Message("creating".into()))
                .with("pods", starting.join(", ")));
        }
        Ok(Outcome::pass(ID))
    }

    /// Whether the pod's own constraints keep it off every node (see the module comment).
    fn learner_caused(&self, spec: &PodSpec, ctx: &JudgeCtx) -> bool {
        let Ok(nodes) = &self.nodes else { return false };
        let Ok(requests) = resources::pod_requests(spec) else {
            return false;
        };
        let fits = |n: &NodeView| {
            placement::may_use(spec, &n.node)
                && resources::shortfalls(&requests, &n.allocatable).is_empty()
        };
        if nodes.iter().any(fits) {
            return false;
        }
        match ctx.profile {
            Profile::Kind => true,
            Profile::Eks => {
                let Allowed::Only(types) = placement::allowed_values(spec, INSTANCE_TYPE_LABEL)
                else {
                    return false;
                };
                let want = |r: &str| resources::pod_count(spec, r).unwrap_or(0);
                types.iter().all(|t| {
                    instances::lookup(t).is_some_and(|i| {
                        want(EFA) > i64::from(i.efa) || want(GPU) > i64::from(i.gpus)
                    })
                })
            }
        }
    }

    // --- advice ---------------------------------------------------------------------------------

    /// Variables the aws-ofi-nccl EFA Cheatsheet discourages or no longer needs, in any container's
    /// env or exported by mpirun.
    fn advise(&self, j: &mut Judgement) -> Result<(), InputError> {
        for (_, c, path) in self.wl.containers() {
            let mut exported = Vec::new();
            if self.is_mpi() {
                let invs = cmdline::invocations(c)
                    .map_err(|e| self.obj.field_error(format!("{path}.command"), e.problem))?;
                exported = invs
                    .iter()
                    .filter_map(|i| Mpirun::find(&i.expanded))
                    .flat_map(|m| m.exports())
                    .collect();
            }
            let value = |name: &str| match exported.iter().rev().find(|x| x.name == name) {
                Some(x) => x.value.clone().map_or(self.env(c, name), EnvLookup::Value),
                None => self.env(c, name),
            };
            if value("RDMAV_FORK_SAFE") != EnvLookup::Absent {
                j.advise(Advice::new("rdmav-fork-safe").with("container", &c.name));
            }
            if value("FI_EFA_USE_DEVICE_RDMA") == EnvLookup::Value("1".into()) {
                j.advise(Advice::new("fi-efa-use-device-rdma").with("container", &c.name));
            }
        }
        Ok(())
    }
}

fn pod_view(o: &Obj, kind: WorkloadKind) -> Result<PodView, InputError> {
    let pod: Pod = o.parse()?;
    let meta = pod.metadata;
    let slot = match kind {
        WorkloadKind::MpiJob => meta.labels.as_ref().and_then(|l| l.get(MPI_REPLICA_INDEX)),
        _ => meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(COMPLETION_INDEX)),
    };
    let conds =
        conditions::from_object(&o.value).map_err(|e| o.field_error("status.conditions", e))?;
    let unschedulable = conditions::find(&conds, "PodScheduled")
        .filter(|c| c.is_false() && c.reason.as_deref() == Some("Unschedulable"))
        .map(|c| c.message.clone().unwrap_or_default());
    let status = pod.status.unwrap_or_default();
    let stuck = status
        .init_container_statuses
        .unwrap_or_default()
        .into_iter()
        .chain(status.container_statuses.unwrap_or_default())
        .find_map(|cs| {
            let w = cs.state?.waiting?;
            let reason = w.reason.unwrap_or_default();
            STUCK
                .contains(&reason.as_str())
                .then(|| (cs.name, reason, w.message.unwrap_or_default()))
        });
    let spec = pod.spec.unwrap_or_default();
    let efa = resources::pod_count(&spec, EFA).map_err(|e| o.field_error("spec.containers", e))?;
    Ok(PodView {
        name: meta.name.unwrap_or_default(),
        slot: slot.and_then(|s| s.parse().ok()),
        node: spec.node_name.clone().filter(|n| !n.is_empty()),
        phase: status.phase.unwrap_or_else(|| "Pending".into()),
        spec,
        efa,
        unschedulable,
        stuck,
    })
}

fn node_view(o: &Obj) -> Result<NodeView, InputError> {
    let node: Node = o.parse()?;
    let allocatable =
        resources::node_allocatable(&node).map_err(|e| o.field_error("status.allocatable", e))?;
    Ok(NodeView {
        name: o.name().to_string(),
        node,
        allocatable,
    })
}

/// Lower is further along (the pod that stands for its slot).
fn rank(phase: &str) -> u8 {
    match phase {
        "Succeeded" => 0,
        "Running" => 1,
        "Pending" => 2,
        "Failed" => 3,
        _ => 4,
    }
}

/// Whether a container names `resource` in its limits or requests.
fn mentions(c: &Container, resource: &str) -> bool {
    let r = c.resources.as_ref();
    let has = |m: Option<&BTreeMap<String, _>>| m.is_some_and(|m| m.contains_key(resource));
    has(r.and_then(|r| r.limits.as_ref())) || has(r.and_then(|r| r.requests.as_ref()))
}

fn limits_has(c: &Container, resource: &str) -> bool {
    c.resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .is_some_and(|m| m.contains_key(resource))
}

/// The whole count a container asks for: its limit (what `efa-in-limits` wants), else its
/// request, so a requests/limits mismatch is reported once, by the API server's rule.
fn count_of(c: &Container, resource: &str) -> Option<i64> {
    let limit = resources::limit_count(c, resource).ok().flatten();
    limit.or_else(|| resources::effective_count(c, resource).ok().flatten())
}

/// The count as written (limit, else request), `—` when absent.
fn count_text(c: &Container, resource: &str) -> String {
    let q = resources::limit(c, resource).ok().flatten();
    let q = q.or_else(|| resources::request(c, resource).ok().flatten());
    q.map_or_else(|| "—".to_string(), |q| q.as_str().to_string())
}

/// Where a variable the grader cannot read comes from: `Secret/name`, `ConfigMap/name`, or the
/// `valueFrom` kind.
fn env_source(c: &Container, name: &str) -> String {
    if let Some(from) = c
        .env
        .iter()
        .flatten()
        .rev()
        .find(|e| e.name == name)
        .and_then(|e| e.value_from.as_ref())
    {
        return match (&from.config_map_key_ref, &from.secret_key_ref) {
            (Some(r), _) => format!("ConfigMap/{}", r.name),
            (_, Some(r)) => format!("Secret/{}", r.name),
            _ if from.field_ref.is_some() => "fieldRef".into(),
            _ => "resourceFieldRef".into(),
        };
    }
    let from = c.env_from.iter().flatten().rev().find_map(|s| {
        s.secret_ref
            .as_ref()
            .map(|r| format!("Secret/{}", r.name))
            .or_else(|| {
                s.config_map_ref
                    .as_ref()
                    .map(|r| format!("ConfigMap/{}", r.name))
            })
    });
    from.unwrap_or_else(|| "envFrom".into())
}

fn label(n: &Node, key: &str) -> Option<String> {
    n.metadata.labels.as_ref()?.get(key).cloned()
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}
