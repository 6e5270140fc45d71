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
//!
//! One file per job: `find` (the job by name and version), `rejections` (what the API server
//! would refuse), `nproc` (processes per pod), `launch` (what each pod launches), `degrees`
//! (TP, PP, CP and the sizes they divide), `max_connections` (advice on
//! `CUDA_DEVICE_MAX_CONNECTIONS`), `tp_within_node` (against the GPU nodes the pods may use:
//! [`GpuNodes`], kit `capacity`). How the pods ran is kit `job_pods` (`pods-running`, one rule
//! for every lab).

mod degrees;
mod find;
mod launch;
mod max_connections;
mod nproc;
mod rejections;
mod tp_within_node;

pub use crate::verify::kit::k8s::workload::TRAINER_FIELD;
pub use crate::verify::kit::nodes::capacity::{GpuNodes, Unknown, GPU_MEMORY_LABEL};
pub use degrees::{Degrees, Value};
pub use find::find_job;
pub use launch::{flag_written, JobLaunch, PodStart, RoleLaunch, MAX_CONNECTIONS};
pub use max_connections::max_connections_advice;
pub use nproc::{Nproc, Procs};
pub use rejections::{pytorchjob_rejections, rejections};
pub use tp_within_node::check_tp_within_node;

#[cfg(test)]
mod tests;
