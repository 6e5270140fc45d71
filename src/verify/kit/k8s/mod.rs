//! Kubernetes semantics the labs grade against, as the API server and the controllers apply them.

/// Status conditions.
pub mod conditions;
/// Which container of a template a check reads.
pub mod container;
/// Image references.
pub mod image;
/// Which volume a path in a container lies on, ConfigMap files, mount refusals.
pub mod mounts;
/// Objects owned by another, by ownerReference uid.
pub mod owned;
/// Which nodes a pod template may use (selectors, affinity, taints).
pub mod placement;
/// Pod status: terminations, waiting reasons, the scheduler's message, how a job ended, and the
/// one `pods-running` rule.
pub mod pods;
/// Kubernetes quantities with checked arithmetic (an overflow is bad input).
pub mod quantity;
/// What the API server or an operator's webhook refuses in a workload.
pub mod rejection;
/// The effective request of a pod, and the API server's rules for extended resources.
pub mod resources;
/// An operator's StatefulSet pods Ready.
pub mod rollout;
/// Label selectors.
pub mod selector;
/// An apiVersion its CRD does not serve.
pub mod version;
/// The pod templates of every workload kind the labs grade, with field paths.
pub mod workload;
