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
//! - [`cmdline`]: command lines inside containers (shell, mpirun, torchrun, Megatron-LM,
//!   Hugging Face, DeepSpeed).

pub mod cmdline;
pub mod conditions;
pub mod owned;
pub mod parallel;
pub mod placement;
pub mod quantity;
pub mod resources;
pub mod selector;
pub mod workload;
