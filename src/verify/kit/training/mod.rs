//! Training concepts the labs share.

/// Training jobs: served version, API-server and webhook refusals, the training command and its
/// DeepSpeed config.
pub mod job;
/// The pods a training job owns (a TrainJob's through its JobSet) and the state checks on them:
/// `pods-running`, `one-pod-per-node`.
pub mod job_pods;
/// TP/PP/DP degrees, world size and GPU nodes of a training job.
pub mod parallel;
/// Slinky's kinds (Controller, NodeSet, Accounting, RestApi).
pub mod slinky;
/// Kubeflow Trainer v2 TrainJobs: the runtime they name, the pods they make, what the webhook
/// refuses, and their pods through the JobSet.
pub mod trainjob;
