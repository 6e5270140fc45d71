//! Parallelism of a distributed training job (the labs on tensor, pipeline and data
//! parallelism): what each pod of a PyTorchJob launches and how many processes, the degrees its
//! command line sets, the GPU nodes its pods may use, what the API server would refuse, and how
//! its pods ran. The checks both parallelism labs share (`tp-within-node`, `pods-running`,
//! `one-pod-per-node`) are built here, so their hint keys and message ids are the same in both
//! lab.yaml files (listed on each function).
//!
//! Rules, with their upstream:
//! - Processes per pod: torchrun's `--nproc-per-node` wins over its `PET_NPROC_PER_NODE`
//!   fallback (pytorch `torch/distributed/argparse_util.py` `env`). The training-operator sets
//!   `PET_NPROC_PER_NODE` to `spec.nprocPerNode` verbatim (default `auto`; the deprecated
//!   `elasticPolicy.nProcPerNode` instead when only it is set) on every container, appended after
//!   the container's own `env`, so it wins over a `PET_NPROC_PER_NODE` the learner wrote
//!   (kubeflow/trainer v1.9.4 `pkg/controller.v1/pytorch/envvar.go` `setPodEnv` l.99-104; default
//!   `auto`: `pkg/apis/kubeflow.org/v1/pytorch_defaults.go` `setDefaultNprocPerNode`). `gpu` is the CUDA device count and fails without one (`Cuda is
//!   not available.`), `auto` the accelerator count else the node's CPU count, `cpu` the CPU
//!   count (torch `run.py` `determine_local_world_size`). A pod sees exactly the GPUs it was
//!   given, so `gpu`/`auto` count the pod's `nvidia.com/gpu`. A plain `python script.py` is one
//!   process per pod (the operator's `WORLD_SIZE` counts pods).
//! - World size = Σ over pods of their processes. Megatron-LM: `world % (TP × PP × CP) == 0` and
//!   DP = world / (TP × PP × CP) (`megatron/training/arguments.py` `validate_args` l.422-446,
//!   core_v0.19.0); unset degrees are 1 (`megatron/core/model_parallel_config.py`
//!   `ModelParallelConfig` defaults l.55/83/100, made flags by `ArgumentGroupFactory`).
//! - A tensor-parallel group is TP consecutive global ranks (Megatron `parallel_state.
//!   initialize_model_parallel`, default order `tp-cp-ep-dp-pp`: "8 tensor model-parallel
//!   groups: [g0, g1], [g2, g3], …"), and torchrun numbers ranks node by node (node rank × nproc +
//!   local rank, `LOCAL_WORLD_SIZE` = nproc). So with one process per GPU, every TP group stays
//!   inside one node exactly when TP ≤ GPUs per node and TP divides it.

use std::collections::BTreeSet;

use crate::facts::instances::GPU;
use crate::verify::kit::cmdline::{
    command_line, invocations, FlagError, Known, Launch, MegatronArgs, Merged, MergedState, Nnodes,
    NprocPerNode, Overrides, ParallelPlan, Precision, RemovedFlag, Setting, Torchrun,
};
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::{resources_field, PodTemplate, Workload};
use crate::verify::views::pytorch::{self, NprocPerNode as SpecNproc, PyTorchJob};
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, MISSING_HINT};

pub use crate::verify::kit::nodes::capacity::{GpuNodes, Unknown, GPU_MEMORY_LABEL};

// ---------------------------------------------------------------------------------------------
// The object.

/// The object named `name` of `read`, as [`JudgeCtx::named`] finds it; an object of the read's
/// group and kind in another `apiVersion` is absent too: the API server serves only the version
/// it knows (a PyTorchJob is `kubeflow.org/v1`), so it would refuse the manifest. Then every
/// check fails once with the lab's `missing` text, found naming the version written.
pub fn find_job<'a>(ctx: &JudgeCtx<'a>, read: &Read, name: &str, checks: &[&str]) -> Named<'a> {
    let found = ctx.named(read, name, checks);
    let kind = read.kind;
    let Named::Found(o) = found else {
        return found;
    };
    if o.api_version() == kind.api_version() {
        return Named::Found(o);
    }
    let expected = format!("{} {} {name}", kind.api_version(), kind.kind);
    let written = format!("{} {} {name}", o.api_version(), o.kind());
    let ns = ctx.target.namespace.clone();
    Named::Absent(Judgement::every(checks, |c| {
        Outcome::fail(c, expected.clone(), written.clone())
            .hint(MISSING_HINT)
            .with("name", name)
            .with("kind", kind.kind)
            .with("api_version", kind.api_version())
            .with(
                "accepted",
                format!("`{}` {}", kind.api_version(), kind.kind),
            )
            .with("namespace", &ns)
    }))
}

// ---------------------------------------------------------------------------------------------
// What the API server (and the training-operator's validating webhook) refuses.

use crate::verify::kit::k8s::rejection::Rejection;

/// Everything the API server and the operator's webhook would refuse in a training job: a
/// PyTorchJob's ([`pytorchjob_rejections`]) or a TrainJob's (kit `trainjob::rejections`).
pub fn rejections(w: &Workload) -> Vec<Rejection> {
    match w.pytorch() {
        Some(job) => pytorchjob_rejections(w, job),
        None => super::trainjob::rejections(w),
    }
}

/// Everything the API server would refuse in a PyTorchJob: the CRD's schema for
/// `spec.nprocPerNode` (a string), the training-operator's validating webhook
/// (kubeflow/training-operator `pkg/webhooks/pytorch/pytorchjob_webhook.go` and
/// `pkg/webhooks/utils/utils.go` `ValidateReplicaSpecs`: replica types exactly `Master` and
/// `Worker`, containers with images, one container named `pytorch`, `Master.replicas` written
/// and 1, `Worker.replicas` at least 1, a Worker with `elasticPolicy`, not both nproc fields)
/// and the pod validation each template's pods go through ([`resources::validate_pod_spec`]).
pub fn pytorchjob_rejections(w: &Workload, job: &PyTorchJob) -> Vec<Rejection> {
    let mut out = Vec::new();
    let mut add = |field: String, text: String| out.push(Rejection { field, text });
    let root = "spec.pytorchReplicaSpecs";
    if let Some(SpecNproc::Unquoted(n)) = job.nproc_per_node() {
        // The CRD declares `nprocPerNode` a string; the API server's schema validation says so.
        add(
            "spec.nprocPerNode".into(),
            format!(
                "spec.nprocPerNode: Invalid value: \"integer\": spec.nprocPerNode in body must be of type string: \"integer\" (found {n})"
            ),
        );
    }
    if job.replica_specs().next().is_none() {
        add(
            root.into(),
            format!("{root}: Required value: must be required"),
        );
    }
    if let Some(elastic) = job.elastic() {
        if !job.replica_specs().any(|(k, _)| k == pytorch::WORKER) {
            let f = format!("{root}[{}]", pytorch::WORKER);
            add(
                f.clone(),
                format!("{f}: Required value: must be configured if elastic policy is used"),
            );
        }
        if elastic.n_proc_per_node.is_some() && job.nproc_per_node().is_some() {
            let f = "spec.elasticPolicy.nProcPerNode".to_string();
            add(
                f.clone(),
                format!("{f}: Forbidden: must not be used with spec.nprocPerNode"),
            );
        }
    }
    for (key, spec) in job.replica_specs() {
        let role = format!("{root}[{key}]");
        if key != pytorch::MASTER && key != pytorch::WORKER {
            add(
                role.clone(),
                format!("{role}: Unsupported value: \"{key}\": supported values: \"Master\", \"Worker\""),
            );
        }
        let containers = format!("{role}.template.spec.containers");
        let pod = spec.pod_spec();
        let list = pod.map(|p| p.containers.as_slice()).unwrap_or_default();
        if list.is_empty() {
            add(
                containers.clone(),
                format!("{containers}: Required value: must be specified"),
            );
        }
        for (i, c) in list.iter().enumerate() {
            if c.image.as_deref().unwrap_or_default().is_empty() {
                let f = format!("{containers}[{i}].image");
                add(f.clone(), format!("{f}: Required value: must be required"));
            }
        }
        if !list.iter().any(|c| c.name == pytorch::DEFAULT_CONTAINER) {
            add(
                containers.clone(),
                format!(
                    "{containers}: Required value: must have at least one container with name {}",
                    pytorch::DEFAULT_CONTAINER
                ),
            );
        }
        let replicas = format!("{role}.replicas");
        if key == pytorch::MASTER && spec.replicas != Some(1) {
            add(
                replicas.clone(),
                format!("{replicas}: Forbidden: must be 1"),
            );
        } else if key == pytorch::WORKER && spec.replicas.is_some_and(|r| r < 1) {
            add(
                replicas.clone(),
                format!("{replicas}: Forbidden: must be at least 1"),
            );
        }
    }
    for t in &w.templates {
        for v in resources::validate_pod_spec(&t.spec, &t.path) {
            add(v.path.clone(), v.api_server_text());
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// What each pod launches.

/// Processes one pod starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Procs {
    /// A literal count, or `gpu`/`auto` counted as the pod's GPUs.
    Count(i64),
    /// `cpu`, or `auto` in a pod without GPUs: the node's CPU count, which no manifest says.
    NodeCpus,
    /// A variable the manifest does not give a value (`$NPROC`).
    Variable,
    /// A value torchrun refuses, with its message.
    Refused(String),
}

/// Processes per pod and where that number comes from, as written
/// (`--nproc_per_node 8`, `spec.nprocPerNode: "8"`, `spec.nprocPerNode (unset: auto)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nproc {
    pub procs: Procs,
    pub written: String,
}

/// How a pod starts its training script.
#[derive(Debug, Clone, PartialEq)]
pub enum Launcher {
    /// `torchrun` (or `python -m torch.distributed.run|launch`).
    Torchrun {
        nproc: Nproc,
        /// `--nnodes` as written on the command line (the operator's `PET_NNODES` otherwise: the
        /// pod count).
        nnodes: Option<Setting<Nnodes>>,
    },
    /// `python script.py` without a launcher: one process per pod.
    Python,
    /// No command that starts a training script.
    Nothing,
    /// A command line the pod cannot run, as written: a shell script that does not split into
    /// commands (the container's command line), or a torchrun option torchrun refuses
    /// ([`flag_written`]).
    Broken(String),
}

/// One replica type (`Master`, `Worker`) of the job and what its pods run.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleLaunch {
    pub role: String,
    pub replicas: i64,
    /// `nvidia.com/gpu` one pod asks for; None when a quantity is unreadable (a [`Rejection`]
    /// says which).
    pub gpus: Option<i64>,
    /// The pod spec's field path (`spec.pytorchReplicaSpecs.Worker.template.spec`).
    pub template_path: String,
    /// The launching container's field path, or the template's when it has none.
    pub container_path: String,
    /// The command that launches training as written, else the container's command line.
    pub command: String,
    pub launcher: Launcher,
    /// The training script's arguments (what Megatron-LM or NeMo parse).
    pub script_args: Vec<String>,
    /// Whether the script is a Megatron-LM entry point (`pretrain_gpt.py`).
    pub megatron: bool,
    /// `CUDA_DEVICE_MAX_CONNECTIONS` as the launching command starts with it (the container's
    /// literal `env`, an `export`, or a `VAR=value` prefix); None when nothing sets it.
    pub max_connections: Option<String>,
}

impl RoleLaunch {
    /// Where this role's GPUs are asked for: the pod template's containers, or a TrainJob's
    /// `spec.trainer.resourcesPerNode` for the container it fills.
    pub fn limits_path(&self) -> String {
        if self.container_path == TRAINER_FIELD {
            format!("{}.limits", resources_field(TRAINER_FIELD))
        } else {
            format!("{}.containers[].resources.limits", self.template_path)
        }
    }

    /// Processes per pod, when the manifest says.
    pub fn procs(&self) -> Option<i64> {
        match &self.launcher {
            Launcher::Torchrun { nproc, .. } => match nproc.procs {
                Procs::Count(n) => Some(n),
                _ => None,
            },
            Launcher::Python => Some(1),
            Launcher::Nothing | Launcher::Broken(_) => None,
        }
    }

    /// `--nnodes` written with a value that is not this job's pod count (`N` or `MIN:MAX` with
    /// MIN = MAX = pods is the same): the ranks would not all join one world.
    pub fn nnodes_mismatch(&self, pods: i64) -> Option<String> {
        let Launcher::Torchrun {
            nnodes: Some(n), ..
        } = &self.launcher
        else {
            return None;
        };
        match n.known() {
            Some(v) if v.min == pods && v.max == pods => None,
            Some(_) => Some(n.as_written()),
            None => None,
        }
    }
}

pub use crate::verify::kit::k8s::workload::TRAINER_FIELD;

/// The roles of a PyTorchJob with pods, in the order the job lists them (Master, Worker).
#[derive(Debug, Clone, PartialEq)]
pub struct JobLaunch {
    pub roles: Vec<RoleLaunch>,
}

impl JobLaunch {
    /// Reads every template that makes pods. The launching container is the one named `pytorch`
    /// (the operator's default container), else the first; its first command that runs torchrun
    /// (else a `python` script) is the launch.
    pub fn of(w: &Workload) -> JobLaunch {
        let roles = w
            .templates
            .iter()
            .filter(|t| t.replicas > 0)
            .map(|t| role_launch(t, w))
            .collect();
        JobLaunch { roles }
    }

    /// Pods of the job.
    pub fn pods(&self) -> i64 {
        self.roles.iter().map(|r| r.replicas).sum()
    }

    /// World size: Σ pods × processes per pod; None when some role's count is unknown.
    pub fn world(&self) -> Option<i64> {
        self.roles.iter().try_fold(0i64, |acc, r| {
            Some(acc.saturating_add(r.procs()?.saturating_mul(r.replicas)))
        })
    }

    /// The role whose pods the job is mostly made of (Worker when present), for placement.
    pub fn main_role(&self) -> Option<&RoleLaunch> {
        // `max_by_key` keeps the last of equals: Worker over a Master of the same size.
        self.roles.iter().max_by_key(|r| r.replicas)
    }
}

fn role_launch(t: &PodTemplate, w: &Workload) -> RoleLaunch {
    let gpus = resources::pod_count(&t.spec, GPU).ok();
    let chosen = t
        .containers()
        .find(|(c, _)| Some(c.name.as_str()) == w.launch_container())
        .or_else(|| t.containers().next());
    let mut out = RoleLaunch {
        role: t.role.clone(),
        replicas: t.replicas,
        gpus,
        template_path: t.path.clone(),
        container_path: t.path.clone(),
        command: String::new(),
        launcher: Launcher::Nothing,
        script_args: Vec::new(),
        megatron: false,
        max_connections: None,
    };
    let Some((c, path)) = chosen else {
        return out;
    };
    out.container_path = path.to_string();
    out.command = command_line(c, 200);
    let invs = match invocations(c) {
        Ok(i) => i,
        Err(_) => {
            out.launcher = Launcher::Broken(out.command.clone());
            return out;
        }
    };
    let found = invs.iter().find_map(|inv| {
        let chain = Launch::chain(&inv.expanded);
        chain
            .iter()
            .find_map(|l| match l {
                Launch::Torchrun(t) => Some((inv, Some(t.clone()))),
                _ => None,
            })
            .or_else(|| match chain.last() {
                Some(Launch::Python(p)) if p.script.is_some() || p.module.is_some() => {
                    Some((inv, None))
                }
                _ => None,
            })
    });
    let Some((inv, torchrun)) = found else {
        return out;
    };
    out.command = inv.display();
    out.max_connections = inv.env(MAX_CONNECTIONS).map(str::to_string);
    let entry = Launch::training_entry(&inv.expanded);
    out.megatron = entry
        .as_ref()
        .is_some_and(|e| crate::verify::kit::cmdline::is_megatron_entry(&e.script));
    out.script_args = entry.map(|e| e.args).unwrap_or_default();
    out.launcher = match torchrun {
        None => Launcher::Python,
        Some(tr) => match torchrun_launcher(&tr, w, gpus.unwrap_or(0)) {
            Ok(l) => l,
            Err(e) => Launcher::Broken(flag_written(&e)),
        },
    };
    out
}

fn torchrun_launcher(tr: &Torchrun, w: &Workload, gpus: i64) -> Result<Launcher, FlagError> {
    let nproc = match tr.nproc_per_node()? {
        Some(s) => Nproc {
            procs: match s.known() {
                Some(v) => resolve_nproc(v, gpus),
                None => Procs::Variable,
            },
            written: s.as_written(),
        },
        None => operator_nproc(w, gpus),
    };
    Ok(Launcher::Torchrun {
        nproc,
        nnodes: tr.nnodes()?,
    })
}

/// torchrun's reading of a `--nproc-per-node` value in a pod with `gpus` GPUs.
fn resolve_nproc(v: &NprocPerNode, gpus: i64) -> Procs {
    match v {
        NprocPerNode::Count(n) if *n >= 1 => Procs::Count(*n),
        NprocPerNode::Count(n) => Procs::Refused(format!("nproc_per_node={n}")),
        NprocPerNode::Gpu | NprocPerNode::Auto if gpus > 0 => Procs::Count(gpus),
        NprocPerNode::Gpu => Procs::Refused("ValueError: Cuda is not available.".into()),
        NprocPerNode::Auto | NprocPerNode::Cpu => Procs::NodeCpus,
        NprocPerNode::Xpu => Procs::Refused("nproc_per_node=xpu".into()),
        NprocPerNode::Other(s) => {
            Procs::Refused(format!("ValueError: Unsupported nproc_per_node value: {s}"))
        }
    }
}

/// torchrun's reading of `PET_NPROC_PER_NODE`'s text.
fn text_value(s: &str) -> NprocPerNode {
    match s.trim() {
        "gpu" => NprocPerNode::Gpu,
        "auto" => NprocPerNode::Auto,
        "cpu" => NprocPerNode::Cpu,
        "xpu" => NprocPerNode::Xpu,
        other => match other.parse::<i64>() {
            Ok(n) => NprocPerNode::Count(n),
            Err(_) => NprocPerNode::Other(other.to_string()),
        },
    }
}

/// What the operator's `PET_NPROC_PER_NODE` says when the command line does not: a
/// PyTorchJob's ([`pytorch_nproc`]) or the torch plugin's for a TrainJob (kit `trainjob`);
/// torchrun's default `1` for any other kind (`torch/distributed/run.py`: `--nproc-per-node`
/// default `1`).
fn operator_nproc(w: &Workload, gpus: i64) -> Nproc {
    if let Some(job) = w.pytorch() {
        return pytorch_nproc(job, gpus);
    }
    match w.trainjob().and_then(|t| t.nproc.clone()) {
        Some((value, written)) => Nproc {
            procs: resolve_nproc(&text_value(&value), gpus),
            written,
        },
        None => Nproc {
            procs: Procs::Count(1),
            written: "--nproc-per-node (unset: 1)".into(),
        },
    }
}

/// A PyTorchJob's `PET_NPROC_PER_NODE`: `spec.nprocPerNode`, the deprecated
/// `elasticPolicy.nProcPerNode`, else the defaulter's `auto`.
fn pytorch_nproc(job: &PyTorchJob, gpus: i64) -> Nproc {
    match job.nproc_per_node() {
        Some(SpecNproc::Text(s)) => Nproc {
            procs: match Known::read(s, |t| Some(text_value(t))) {
                Some(Known::Value(v)) => resolve_nproc(&v, gpus),
                _ => Procs::Variable,
            },
            written: format!("spec.nprocPerNode: \"{s}\""),
        },
        Some(SpecNproc::Unquoted(n)) => Nproc {
            procs: resolve_nproc(&NprocPerNode::Count(*n), gpus),
            written: format!("spec.nprocPerNode: {n}"),
        },
        None => match job.elastic().and_then(|e| e.n_proc_per_node) {
            Some(n) => Nproc {
                procs: resolve_nproc(&NprocPerNode::Count(i64::from(n)), gpus),
                written: format!("spec.elasticPolicy.nProcPerNode: {n}"),
            },
            None => Nproc {
                procs: resolve_nproc(&NprocPerNode::Auto, gpus),
                written: format!(
                    "spec.nprocPerNode (unset: {})",
                    pytorch::DEFAULT_NPROC_PER_NODE
                ),
            },
        },
    }
}

/// A flag the tool refuses, as written (`--tensor-model-parallel-size eight`, or the flag alone
/// when its value is missing), for found values and hints.
pub fn flag_written(e: &FlagError) -> String {
    match e {
        FlagError::Invalid { flag, value, .. } => format!("{flag} {value}"),
        FlagError::MissingValue { flag } => flag.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Degrees.

/// One number the training script is given, merged over every place that can set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Not on the command line.
    Unset,
    /// One literal value ≥ 1, as written.
    Set { value: i64, written: String },
    /// Only variable references: unknown.
    Variable(String),
    /// Zero or negative: no training tool accepts it.
    Invalid(String),
    /// Different literal values (two flags, two roles), as written.
    Conflict(Vec<String>),
}

impl Value {
    fn of(m: &Merged<i64>) -> Value {
        match m.state() {
            MergedState::NotSet => Value::Unset,
            MergedState::Unknown(s) => Value::Variable(s.as_written()),
            MergedState::One(s) => match s.known() {
                Some(v) if *v >= 1 => Value::Set {
                    value: *v,
                    written: s.as_written(),
                },
                _ => Value::Invalid(s.as_written()),
            },
            MergedState::Conflict(all) => {
                let mut seen = BTreeSet::new();
                Value::Conflict(
                    all.iter()
                        .map(|s| s.as_written())
                        .filter(|w| seen.insert(w.clone()))
                        .collect(),
                )
            }
        }
    }

    /// The value when one literal is set.
    pub fn value(&self) -> Option<i64> {
        match self {
            Value::Set { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// A parallel degree: unset is 1. Megatron-LM core_v0.19.0 `ModelParallelConfig` defaults;
    /// NeMo v2.4.0 `megatron_base_model.py` `MegatronBaseModel.__init__` (`cfg.get(…, 1)`,
    /// l.199-207) and `megatron_strategy.py` `MegatronStrategy.__init__` (l.237-244).
    pub fn degree(&self) -> Option<i64> {
        match self {
            Value::Unset => Some(1),
            other => other.value(),
        }
    }

    /// As written, for found values (`--tensor-model-parallel-size 8`; `unset`).
    pub fn written(&self) -> String {
        match self {
            Value::Unset => "unset".into(),
            Value::Set { written, .. } | Value::Variable(written) | Value::Invalid(written) => {
                written.clone()
            }
            Value::Conflict(all) => all.join(" vs "),
        }
    }
}

/// NeMo keys of the context-parallel size: NeMo 1 `model.context_parallel_size` (NVIDIA/NeMo
/// v2.4.0 `nemo/collections/nlp/models/language_modeling/megatron_base_model.py` l.207, default
/// 1); NeMo 2 `trainer.strategy.context_parallel_size` (`nemo/lightning/pytorch/strategies/
/// megatron_strategy.py` `MegatronStrategy.__init__` l.244; `llm/recipes/llama3_8b.py` l.110).
const CP_KEYS: &[&str] = &[
    "model.context_parallel_size",
    "trainer.strategy.context_parallel_size",
];

/// Parallel degrees and the model/batch sizes they must divide, as the job's roles set them
/// (Megatron-LM flags, NeMo overrides, optimum-neuron flags: [`ParallelPlan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Degrees {
    pub tp: Value,
    pub pp: Value,
    /// Megatron `--context-parallel-size` (also part of the model-parallel size).
    pub cp: Value,
    pub num_layers: Value,
    pub num_attention_heads: Value,
    pub micro_batch: Value,
    pub global_batch: Value,
    /// `--use-distributed-optimizer` in every role.
    pub distributed_optimizer: bool,
    /// `--bf16`/`--fp16`, `trainer.precision`, as every role sets it (unset: Megatron-LM's fp32).
    pub precision: Merged<Precision>,
    /// Flags Megatron-LM refuses at startup (`--model-parallel-size`), with its message.
    pub removed: Vec<RemovedFlag>,
}

impl Degrees {
    /// Reads every role's script arguments; the same quantity set differently by two roles is a
    /// [`Value::Conflict`]. A value the tool's parser refuses is the [`FlagError`].
    pub fn of(job: &JobLaunch) -> Result<Degrees, FlagError> {
        let mut plan = ParallelPlan::default();
        let mut cp = Merged::<i64>::default();
        let mut removed = Vec::new();
        let mut distributed = !job.roles.is_empty();
        for r in &job.roles {
            if r.megatron {
                MegatronArgs::strict(&crate::verify::kit::cmdline::Args::new(
                    r.script_args.iter().cloned(),
                ))?;
            }
            let p = ParallelPlan::from_argv(&r.script_args)?;
            let m = MegatronArgs::from_argv(&r.script_args)?;
            let o = Overrides::parse(&r.script_args);
            for (all, more) in [
                (&mut plan.tensor_parallel, p.tensor_parallel),
                (&mut plan.pipeline_parallel, p.pipeline_parallel),
                (&mut plan.num_layers, p.num_layers),
                (&mut plan.num_attention_heads, p.num_attention_heads),
                (&mut plan.micro_batch_size, p.micro_batch_size),
                (&mut plan.global_batch_size, p.global_batch_size),
            ] {
                all.settings.extend(more.settings);
            }
            plan.precision.settings.extend(p.precision.settings);
            cp.settings.extend(m.context_parallel_size.clone());
            cp.settings.extend(o.int(CP_KEYS)?);
            distributed &= m
                .use_distributed_optimizer
                .as_ref()
                .and_then(Setting::known)
                == Some(&true);
            for f in m.removed {
                if !removed.contains(&f) {
                    removed.push(f);
                }
            }
        }
        Ok(Degrees {
            tp: Value::of(&plan.tensor_parallel),
            pp: Value::of(&plan.pipeline_parallel),
            cp: Value::of(&cp),
            num_layers: Value::of(&plan.num_layers),
            num_attention_heads: Value::of(&plan.num_attention_heads),
            micro_batch: Value::of(&plan.micro_batch_size),
            global_batch: Value::of(&plan.global_batch_size),
            distributed_optimizer: distributed,
            precision: plan.precision,
            removed,
        })
    }

    /// TP × PP × CP, Megatron's `total_model_size`, when every degree is known.
    pub fn model_parallel(&self) -> Option<i64> {
        self.tp
            .degree()?
            .checked_mul(self.pp.degree()?)?
            .checked_mul(self.cp.degree()?)
    }

    /// DP = world / (TP × PP × CP), when it divides.
    pub fn data_parallel(&self, world: i64) -> Option<i64> {
        let mp = self.model_parallel()?;
        (world > 0 && world % mp == 0).then(|| world / mp)
    }

    /// `TP 8 × PP 1` (with `× CP n` only when context parallelism is on), for found values.
    pub fn describe_model_parallel(&self) -> String {
        let d = |v: &Value| v.degree().map_or_else(|| v.written(), |n| n.to_string());
        let mut s = format!("TP {} × PP {}", d(&self.tp), d(&self.pp));
        if self.cp != Value::Unset && self.cp.degree() != Some(1) {
            s.push_str(&format!(" × CP {}", d(&self.cp)));
        }
        s
    }
}

/// The environment variable Megatron-LM needs at 1 when a layer is split across GPUs.
pub const MAX_CONNECTIONS: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// Advice `max-connections` (`max-connections-unset` when nothing sets it) when a Megatron-LM role splits layers (TP or CP > 1) and starts
/// without `CUDA_DEVICE_MAX_CONNECTIONS=1`. Megatron-LM's `validate_args` stops on it only on GPUs
/// before Blackwell (megatron-core 0.19.0 wheel, `megatron/training/arguments.py` lines
/// 1412-1439: with `tensor_model_parallel_size > 1` or `context_parallel_size > 1` and
/// `get_device_arch_version() < 10`, it asserts the variable is `1`, so the communication
/// kernels queue in order with compute; with `--use-torch-fsdp2`, `--use-megatron-fsdp` or
/// `--overlap-moe-expert-parallel-comm` it only warns, and from compute capability 10 on the
/// requirement is gone). A
/// manifest does not say which GPU the pods get, so this is advice, not a fail; the kind profile's
/// stand-in trainer behaves as an H100 and refuses to start, which `pods-running` reports.
/// Evidence: `role`, `found` (the value written), `model` (TP × PP × CP as written).
pub fn max_connections_advice(job: &JobLaunch, d: &Degrees) -> Option<Advice> {
    let splits_layers = |v: &Value| v.degree().is_some_and(|n| n > 1);
    if !splits_layers(&d.tp) && !splits_layers(&d.cp) {
        return None;
    }
    // The three options under which validate_args warns instead of asserting.
    const ONLY_WARNS: [&str; 3] = [
        "--use-torch-fsdp2",
        "--use-megatron-fsdp",
        "--overlap-moe-expert-parallel-comm",
    ];
    let asserts = |r: &RoleLaunch| {
        !r.script_args
            .iter()
            .any(|a| ONLY_WARNS.contains(&a.as_str()))
    };
    let role = job
        .roles
        .iter()
        .find(|r| r.megatron && asserts(r) && r.max_connections.as_deref() != Some("1"))?;
    let advice = match &role.max_connections {
        Some(found) => Advice::new("max-connections").with("found", found),
        None => Advice::new("max-connections-unset"),
    };
    Some(
        advice
            .with("role", &role.role)
            .with("model", d.describe_model_parallel()),
    )
}

// ---------------------------------------------------------------------------------------------
// The GPU nodes the pods may use: [`GpuNodes`] (kit `capacity`).

/// `tp-within-node`: TP ≤ GPUs per node and TP divides it, so no tensor-parallel group spans
/// two nodes. Hints: default (TP does not divide the node's GPUs), `spans-nodes` (TP larger than
/// a node). Message `tp-unknown` (skipped) while TP itself is not a literal (the check that
/// sets TP says why). Evidence: `tp`, `tp_written`, `gpus_per_node`.
pub fn check_tp_within_node(check: &str, d: &Degrees, nodes: &GpuNodes) -> Outcome {
    let Some(tp) = d.tp.degree() else {
        return Outcome::skipped(check, Reason::Message("tp-unknown".into()))
            .with("tp_written", d.tp.written());
    };
    let g = match &nodes.gpus_per_node {
        Ok(g) => *g,
        Err(u) => return u.outcome(check),
    };
    let expected = format!("TP ≤ {g}, {g} % TP == 0 (nvidia.com/gpu per node: {g})");
    let found = format!("TP {tp} ({})", d.tp.written());
    let o = if tp <= g && g % tp == 0 {
        Outcome::pass(check).expected_found(expected, found)
    } else if tp > g {
        Outcome::fail(check, expected, found).hint("spans-nodes")
    } else {
        Outcome::fail(check, expected, found)
    };
    o.with("tp", tp)
        .with("tp_written", d.tp.written())
        .with("gpus_per_node", g)
}

// ---------------------------------------------------------------------------------------------
// How the pods ran: kit `pods` reads them and judges `pods-running` (one rule for every lab).

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Obj, Origin};
    use crate::verify::kit::training::job_pods::{
        check_one_pod_per_node, check_pods_running, JobPods,
    };
    use serde_json::{json, Value as Json};

    fn obj(v: Json) -> Obj {
        Obj::new(
            v,
            Origin::File {
                path: "job.yaml".into(),
                doc: 1,
                item: None,
            },
        )
        .unwrap()
    }

    fn container(command: Json, gpus: &str) -> Json {
        json!({"name": "pytorch", "image": "nvcr.io/nvidia/nemo:25.04", "command": command,
               "resources": {"limits": {"nvidia.com/gpu": gpus}}})
    }

    /// A PyTorchJob with a Master and `workers` Workers running `command`.
    fn job(extra: Json, workers: i64, command: Json, gpus: &str) -> Obj {
        let pod = json!({"spec": {"containers": [container(command, gpus)]}});
        let mut spec = json!({"pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": pod.clone()},
            "Worker": {"replicas": workers, "template": pod}
        }});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                s.insert(k.clone(), v.clone());
            }
        }
        obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                   "metadata": {"name": "tp-llm", "uid": "u-1"}, "spec": spec}),
        )
    }

    fn launch(o: &Obj) -> (JobLaunch, PyTorchJob) {
        let w = Workload::from_obj(o).unwrap().unwrap();
        let p = w.pytorch().unwrap().clone();
        (JobLaunch::of(&w), p)
    }

    fn words(s: &str) -> Json {
        json!(s.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn nproc_from_the_command_line_wins_over_spec_nproc_per_node() {
        let o = job(
            json!({"nprocPerNode": "4"}),
            1,
            words("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8"),
            "8",
        );
        let (l, _) = launch(&o);
        assert_eq!(l.pods(), 2);
        for r in &l.roles {
            assert_eq!(r.procs(), Some(8));
            let Launcher::Torchrun { nproc, .. } = &r.launcher else {
                panic!("torchrun expected: {:?}", r.launcher)
            };
            assert_eq!(nproc.written, "--nproc_per_node 8");
        }
        assert_eq!(l.world(), Some(16));
        assert_eq!(
            l.roles[1].container_path,
            "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]"
        );
    }

    #[test]
    fn nproc_from_spec_or_the_auto_default_counts_the_pods_gpus() {
        let run = words("torchrun pretrain_gpt.py --tensor-model-parallel-size 8");
        let o = job(json!({"nprocPerNode": "8"}), 1, run.clone(), "8");
        let (l, _) = launch(&o);
        assert_eq!(l.world(), Some(16));
        let Launcher::Torchrun { nproc, .. } = &l.roles[0].launcher else {
            panic!()
        };
        assert_eq!(nproc.written, "spec.nprocPerNode: \"8\"");

        // Unset: the defaulter's auto = one process per visible GPU.
        let o = job(json!({}), 1, run.clone(), "4");
        let (l, _) = launch(&o);
        assert_eq!(l.roles[0].procs(), Some(4));
        // Without GPUs auto is the node's CPU count: unknown.
        let o = job(json!({}), 1, run.clone(), "0");
        let (l, _) = launch(&o);
        assert_eq!(l.roles[0].procs(), None);
        assert_eq!(l.world(), None);
        // `gpu` without GPUs is torchrun's error.
        let o = job(
            json!({}),
            1,
            words("torchrun --nproc-per-node gpu x.py"),
            "0",
        );
        let (l, _) = launch(&o);
        let Launcher::Torchrun { nproc, .. } = &l.roles[0].launcher else {
            panic!()
        };
        assert_eq!(
            nproc.procs,
            Procs::Refused("ValueError: Cuda is not available.".into())
        );
    }

    #[test]
    fn python_without_torchrun_is_one_process_and_other_commands_launch_nothing() {
        let o = job(
            json!({}),
            1,
            words("python3 train.py --tensor-model-parallel-size 2"),
            "8",
        );
        let (l, _) = launch(&o);
        assert_eq!(l.roles[0].launcher, Launcher::Python);
        assert_eq!(l.world(), Some(2));
        let d = Degrees::of(&l).unwrap();
        assert_eq!(d.tp.degree(), Some(2));

        let o = job(json!({}), 1, words("sleep 3600"), "8");
        let (l, _) = launch(&o);
        assert_eq!(l.roles[0].launcher, Launcher::Nothing);
        assert_eq!(l.roles[0].command, "sleep 3600");

        let o = job(json!({}), 1, json!(["sh", "-c", "torchrun 'x.py"]), "8");
        let (l, _) = launch(&o);
        assert!(matches!(l.roles[0].launcher, Launcher::Broken(_)));
    }

    #[test]
    fn torchrun_inside_a_shell_script_with_variables() {
        let o = job(
            json!({}),
            1,
            json!(["bash", "-c", "NP=8; exec torchrun --nnodes 2 --nproc-per-node $NP train.py model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=2"]),
            "8",
        );
        let (l, _) = launch(&o);
        assert_eq!(l.world(), Some(16));
        assert_eq!(l.roles[0].nnodes_mismatch(2), None);
        assert_eq!(l.roles[0].nnodes_mismatch(3).as_deref(), Some("--nnodes 2"));
        let d = Degrees::of(&l).unwrap();
        assert_eq!((d.tp.degree(), d.pp.degree()), (Some(4), Some(2)));
        assert_eq!(d.model_parallel(), Some(8));
        assert_eq!(d.data_parallel(16), Some(2));
        assert_eq!(d.data_parallel(12), None);
        assert_eq!(d.describe_model_parallel(), "TP 4 × PP 2");

        // A variable the manifest does not define stays unknown.
        let o = job(
            json!({}),
            1,
            json!(["sh", "-c", "torchrun --nproc_per_node $NP x.py"]),
            "8",
        );
        let (l, _) = launch(&o);
        let Launcher::Torchrun { nproc, .. } = &l.roles[0].launcher else {
            panic!()
        };
        assert_eq!(nproc.procs, Procs::Variable);
    }

    #[test]
    fn degrees_default_to_one_and_conflicts_between_roles_show() {
        let o = job(json!({}), 1, words("torchrun x.py --num-layers 96"), "8");
        let (l, _) = launch(&o);
        let d = Degrees::of(&l).unwrap();
        assert_eq!(d.tp, Value::Unset);
        assert_eq!(d.tp.degree(), Some(1));
        assert_eq!(d.num_layers.value(), Some(96));
        assert_eq!(d.micro_batch.value(), None);
        assert!(!d.distributed_optimizer);

        // Master and Worker written with different TP.
        let master = json!({"spec": {"containers": [container(words("torchrun x.py --tensor-model-parallel-size 8 --use-distributed-optimizer"), "8")]}});
        let worker = json!({"spec": {"containers": [container(words("torchrun x.py --tensor-model-parallel-size 4 --use-distributed-optimizer"), "8")]}});
        let o = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "j"}, "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": master},
                "Worker": {"replicas": 1, "template": worker}}}}),
        );
        let (l, _) = launch(&o);
        let d = Degrees::of(&l).unwrap();
        assert_eq!(
            d.tp,
            Value::Conflict(vec![
                "--tensor-model-parallel-size 8".into(),
                "--tensor-model-parallel-size 4".into()
            ])
        );
        assert_eq!(d.tp.degree(), None);
        assert_eq!(d.model_parallel(), None);
        assert!(d.distributed_optimizer);

        // Zero is no degree; a removed flag is kept with Megatron's message.
        let o = job(
            json!({}),
            1,
            words("torchrun x.py --pipeline-model-parallel-size 0 --model-parallel-size 8 --context-parallel-size 2"),
            "8",
        );
        let (l, _) = launch(&o);
        let d = Degrees::of(&l).unwrap();
        assert!(matches!(d.pp, Value::Invalid(_)));
        assert_eq!(d.removed.len(), 1);
        assert_eq!(d.cp.degree(), Some(2));

        // A value Megatron's parser refuses is the flag error.
        let o = job(
            json!({}),
            1,
            words("torchrun x.py --tensor-model-parallel-size eight"),
            "8",
        );
        let (l, _) = launch(&o);
        assert_eq!(
            Degrees::of(&l).unwrap_err().flag(),
            "--tensor-model-parallel-size"
        );
    }

    #[test]
    fn rejections_follow_the_webhook_the_schema_and_pod_validation() {
        let ok = job(json!({"nprocPerNode": "8"}), 1, words("torchrun x.py"), "8");
        let w = Workload::from_obj(&ok).unwrap().unwrap();
        assert_eq!(pytorchjob_rejections(&w, w.pytorch().unwrap()), vec![]);

        let bad = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "j"},
            "spec": {"nprocPerNode": 8, "pytorchReplicaSpecs": {
                "Master": {"replicas": 2, "template": {"spec": {"containers": [
                    {"name": "trainer", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "8"}}}]}}},
                "worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch"}]}}}}}}),
        );
        let w = Workload::from_obj(&bad).unwrap().unwrap();
        let texts: Vec<String> = pytorchjob_rejections(&w, w.pytorch().unwrap())
            .into_iter()
            .map(|r| r.text)
            .collect();
        let has = |needle: &str| texts.iter().any(|t| t.contains(needle));
        assert!(
            has("spec.nprocPerNode in body must be of type string"),
            "{texts:#?}"
        );
        assert!(has(
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"
        ));
        assert!(has("spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must have at least one container with name pytorch"));
        assert!(has(
            "spec.pytorchReplicaSpecs[worker]: Unsupported value: \"worker\""
        ));
        assert!(has(
            "spec.pytorchReplicaSpecs[worker].template.spec.containers[0].image: Required value"
        ));
        // GPUs in requests without a limit: the pod validation's rule.
        assert!(has("resources.limits: Required value"), "{texts:#?}");

        // Master replicas left out is refused too (the webhook checks before any defaulting).
        let o = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "j"}, "spec": {"pytorchReplicaSpecs": {
                "Master": {"template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}}}}),
        );
        let w = Workload::from_obj(&o).unwrap().unwrap();
        let r = pytorchjob_rejections(&w, w.pytorch().unwrap());
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].field, "spec.pytorchReplicaSpecs[Master].replicas");
    }

    #[test]
    fn degrees_carry_the_precision_every_role_sets() {
        let d = degrees("--bf16");
        assert_eq!(d.precision.value(), Some(&Precision::Bf16));
        let d = degrees("model.num_layers=4 trainer.precision=16-mixed");
        assert_eq!(d.precision.value(), Some(&Precision::Fp16));
        let d = degrees("--num-layers 4");
        assert_eq!(d.precision.state(), MergedState::NotSet);
        let d = degrees("--bf16 --fp16");
        assert!(matches!(d.precision.state(), MergedState::Conflict(_)));
    }

    fn degrees(tp: &str) -> Degrees {
        let o = job(json!({}), 1, words(&format!("torchrun x.py {tp}")), "8");
        Degrees::of(&launch(&o).0).unwrap()
    }

    fn nodes(per: i64) -> GpuNodes {
        GpuNodes {
            gpus_per_node: Ok(per),
            nodes: Ok(2),
            names: vec![],
            gpu_memory_mib: None,
        }
    }

    #[test]
    fn tp_within_node_needs_a_divisor_of_the_nodes_gpus() {
        let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 8"), &nodes(8));
        assert_eq!(o.status, crate::verify::Status::Pass);
        let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 16"), &nodes(8));
        assert_eq!(o.hint.as_deref(), Some("spans-nodes"));
        let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 3"), &nodes(8));
        assert_eq!((o.status, o.hint), (crate::verify::Status::Fail, None));
        assert_eq!(
            o.found.as_deref(),
            Some("TP 3 (--tensor-model-parallel-size 3)")
        );
        let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size $TP"), &nodes(8));
        assert_eq!(o.status, crate::verify::Status::Skipped);
        let unknown = GpuNodes {
            gpus_per_node: Err(Unknown::Param("gpus_per_node")),
            ..nodes(8)
        };
        let o = check_tp_within_node("c", &degrees("--tensor-model-parallel-size 8"), &unknown);
        assert_eq!(o.reason, Some(Reason::NeedsParam("gpus_per_node".into())));
    }

    fn pod(name: &str, node: Option<&str>, phase: &str, statuses: Json) -> Obj {
        obj(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "ownerReferences": [
                {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "tp-llm",
                 "uid": "u-1", "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": "pytorch"}]},
            "status": {"phase": phase, "containerStatuses": statuses}}))
    }

    fn running() -> Json {
        json!([{"name": "pytorch", "ready": true, "restartCount": 0, "image": "x", "imageID": "",
                "state": {"running": {}}}])
    }

    #[test]
    fn pods_running_passes_fails_with_the_termination_message_or_waits() {
        let j = job(json!({}), 1, words("torchrun x.py"), "8");
        let view: PyTorchJob = j.parse().unwrap();
        let a = pod("tp-llm-master-0", Some("n1"), "Running", running());
        let b = pod("tp-llm-worker-0", Some("n2"), "Succeeded", json!([]));
        let other = obj(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}));
        let pods = JobPods::of(&j, &[&a, &b, &other]).unwrap().unwrap();
        assert_eq!(pods.current.len(), 2);
        let o = check_pods_running("c", &j, 2, &pods);
        assert_eq!(o.status, crate::verify::Status::Pass);
        let o = check_one_pod_per_node("c", view.is_finished(), 2, &pods);
        assert_eq!(o.status, crate::verify::Status::Pass);
        assert_eq!(
            o.found.as_deref(),
            Some("tp-llm-master-0 → n1, tp-llm-worker-0 → n2")
        );

        // CrashLoopBackOff after the stand-in refused the command line.
        let crashed = pod(
            "tp-llm-worker-0",
            Some("n1"),
            "Running",
            json!([{"name": "pytorch", "ready": false, "restartCount": 3, "image": "x", "imageID": "",
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                        "message": "AssertionError: world size (16) is not divisible by total_model_size (total_model_size=32)\n"}}}]),
        );
        let pods = JobPods::of(&j, &[&a, &crashed]).unwrap().unwrap();
        let o = check_pods_running("c", &j, 2, &pods);
        assert_eq!(o.hint.as_deref(), Some("crashed"));
        assert_eq!(
            o.evidence["message"],
            "AssertionError: world size (16) is not divisible by total_model_size (total_model_size=32)"
        );
        assert_eq!(o.evidence["exit_code"], "1");
        // Two pods on one node.
        let o = check_one_pod_per_node("c", view.is_finished(), 2, &pods);
        assert_eq!(o.status, crate::verify::Status::Fail);
        assert_eq!(o.evidence["node"], "n1");

        // Waiting on an image that cannot be pulled does not clear: a fail, not pending.
        let stuck = pod(
            "tp-llm-worker-0",
            None,
            "Pending",
            json!([{"name": "pytorch", "ready": false, "restartCount": 0, "image": "x", "imageID": "",
                    "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}]),
        );
        let pods = JobPods::of(&j, &[&a, &stuck]).unwrap().unwrap();
        let o = check_pods_running("c", &j, 2, &pods);
        assert_eq!(
            (o.hint.as_deref(), o.evidence["job"].as_str()),
            (Some("stuck"), "tp-llm")
        );

        // Not scheduled yet: pending with the scheduler's words.
        let waiting = obj(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "tp-llm-worker-0", "ownerReferences": [
                {"kind": "PyTorchJob", "name": "tp-llm", "uid": "u-1", "controller": true}]},
            "spec": {"containers": [{"name": "pytorch"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/5 nodes are available: 3 Insufficient nvidia.com/gpu."}]}}));
        let pods = JobPods::of(&j, &[&a, &waiting]).unwrap().unwrap();
        let o = check_pods_running("c", &j, 2, &pods);
        assert_eq!(o.status, crate::verify::Status::Pending);
        assert_eq!(o.reason, Some(Reason::Message("pods-unschedulable".into())));
        let o = check_one_pod_per_node("c", view.is_finished(), 2, &pods);
        assert_eq!(o.status, crate::verify::Status::Pending);

        // A job read from a file owns nothing that can be known.
        let file_job = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "tp-llm"}}),
        );
        assert!(JobPods::of(&file_job, &[&a]).unwrap().is_none());
    }

    #[test]
    fn a_failed_job_or_an_oom_kill_is_a_fail() {
        let j = obj(
            json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "tp-llm", "uid": "u-1"},
            "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                "message": "PyTorchJob trainlab/tp-llm is failed because 1 Worker replica(s) failed."}]}}),
        );
        let o = check_pods_running("c", &j, 2, &JobPods::default());
        assert_eq!(o.hint.as_deref(), Some("job-failed"));
        let oom = pod(
            "tp-llm-worker-0",
            Some("n1"),
            "Failed",
            json!([{"name": "pytorch", "ready": false, "restartCount": 0, "image": "x", "imageID": "",
                    "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]),
        );
        let pods = JobPods::of(&j, &[&oom]).unwrap().unwrap();
        let o = check_pods_running("c", &j, 1, &pods);
        assert_eq!(o.hint.as_deref(), Some("crashed"));
        assert_eq!(o.evidence["message"], "OOMKilled");
    }
}
