//! Processes per pod: torchrun's `--nproc-per-node`, else the operator's `PET_NPROC_PER_NODE`,
//! resolved against the pod's GPUs.

use crate::verify::kit::cmdline::{Known, NprocPerNode};
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::views::pytorch::{self, NprocPerNode as SpecNproc, PyTorchJob};

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

/// torchrun's reading of a `--nproc-per-node` value in a pod with `gpus` GPUs.
pub(super) fn resolve_nproc(v: &NprocPerNode, gpus: i64) -> Procs {
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
pub(super) fn operator_nproc(w: &Workload, gpus: i64) -> Nproc {
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
