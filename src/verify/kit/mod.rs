//! The lab kit: shared views and rules every verifier builds on, one rule each, each cited and
//! unit-tested. A verifier that needs a rule the kit lacks adds it here, with a test.
//!
//! - [`quantity`]: Kubernetes quantities with checked arithmetic (an overflow is bad input).
//! - [`resources`]: the effective request of a pod, and the API server's rules for extended
//!   resources.
//! - [`workload`]: the pod templates of every workload kind the labs grade, with field paths.
//! - [`owned`]: objects owned by another, by ownerReference uid.
//! - [`placement`]: which nodes a pod template may use.
//! - [`conditions`]: status conditions.
//! - [`selector`]: label selectors.
//! - [`pods`]: pod status (terminations, waiting reasons, the scheduler's message).
//! - [`mounts`]: which volume a path in a container lies on.
//! - [`training`]: training jobs: served version, API-server and webhook refusals, the training
//!   command and its DeepSpeed config.
//! - [`parallel`]: TP/PP/DP degrees, world size and GPU nodes of a PyTorchJob.
//! - [`cmdline`]: command lines inside containers (shell, mpirun, torchrun, Megatron-LM,
//!   Hugging Face, DeepSpeed).

pub mod cmdline;
pub mod conditions;
pub mod mounts;
pub mod owned;
pub mod parallel;
pub mod placement;
pub mod pods;
pub mod quantity;
pub mod resources;
pub mod selector;
pub mod training;
pub mod workload;
