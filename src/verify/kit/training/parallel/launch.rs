//! What each pod of a training job launches: its roles (`JobLaunch`, `RoleLaunch`), their
//! `PodStart` and script arguments.

use crate::facts::instances::GPU;
use crate::verify::kit::cmdline::{
    command_line, invocations, FlagError, LauncherCommand, Nnodes, Setting, Torchrun,
};
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::{resources_field, PodTemplate, Workload, TRAINER_FIELD};

use super::nproc::{operator_nproc, resolve_nproc, Nproc, Procs};

/// The environment variable Megatron-LM needs at 1 when a layer is split across GPUs.
pub const MAX_CONNECTIONS: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// How the pods of a role start their training script: `torchrun` with its process count,
/// plain `python`, nothing, or a command line they cannot run.
#[derive(Debug, Clone, PartialEq)]
pub enum PodStart {
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
    pub launcher: PodStart,
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
            PodStart::Torchrun { nproc, .. } => match nproc.procs {
                Procs::Count(n) => Some(n),
                _ => None,
            },
            PodStart::Python => Some(1),
            PodStart::Nothing | PodStart::Broken(_) => None,
        }
    }

    /// `--nnodes` written with a value that is not this job's pod count (`N` or `MIN:MAX` with
    /// MIN = MAX = pods is the same): the ranks would not all join one world.
    pub fn nnodes_mismatch(&self, pods: i64) -> Option<String> {
        let PodStart::Torchrun {
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
        launcher: PodStart::Nothing,
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
            out.launcher = PodStart::Broken(out.command.clone());
            return out;
        }
    };
    let found = invs.iter().find_map(|inv| {
        let chain = LauncherCommand::chain(&inv.expanded);
        chain
            .iter()
            .find_map(|l| match l {
                LauncherCommand::Torchrun(t) => Some((inv, Some(t.clone()))),
                _ => None,
            })
            .or_else(|| match chain.last() {
                Some(LauncherCommand::Python(p)) if p.script.is_some() || p.module.is_some() => {
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
    let entry = LauncherCommand::training_entry(&inv.expanded);
    out.megatron = entry
        .as_ref()
        .is_some_and(|e| crate::verify::kit::cmdline::is_megatron_entry(&e.script));
    out.script_args = entry.map(|e| e.args).unwrap_or_default();
    out.launcher = match torchrun {
        None => PodStart::Python,
        Some(tr) => match torchrun_launcher(&tr, w, gpus.unwrap_or(0)) {
            Ok(l) => l,
            Err(e) => PodStart::Broken(flag_written(&e)),
        },
    };
    out
}

fn torchrun_launcher(tr: &Torchrun, w: &Workload, gpus: i64) -> Result<PodStart, FlagError> {
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
    Ok(PodStart::Torchrun {
        nproc,
        nnodes: tr.nnodes()?,
    })
}

/// A flag the tool refuses, as written (`--tensor-model-parallel-size eight`, or the flag alone
/// when its value is missing), for found values and hints.
pub fn flag_written(e: &FlagError) -> String {
    match e {
        FlagError::Invalid { flag, value, .. } => format!("{flag} {value}"),
        FlagError::MissingValue { flag } => flag.clone(),
    }
}
