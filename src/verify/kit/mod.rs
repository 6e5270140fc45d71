//! The lab kit: the rules two or more labs use, each rule once, each cited and unit-tested. A rule
//! only one lab needs lives in that lab's folder (`src/labs/<lab>/`); when a second lab needs it,
//! it moves here, with its tests.
//!
//! - [`k8s`]: Kubernetes semantics (quantities, requests, workloads and their pod templates,
//!   ownership, conditions, selectors, placement, pod status, mounts, images, apiVersions).
//! - [`nodes`]: the nodes a workload may use (accelerators per instance type, how many pods fit,
//!   where pods landed, the one zone left).
//! - [`cmdline`]: launch lines inside containers (shell, mpirun, torchrun and other launchers,
//!   Megatron-LM, NeMo, Hugging Face and DeepSpeed flags and configs).
//! - [`training`]: training concepts (training jobs and their commands, parallel degrees, Slinky's
//!   Slurm clusters).

pub mod cmdline;
pub mod k8s;
pub mod nodes;
pub mod training;
