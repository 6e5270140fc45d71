//! The types the Kubeflow operators share: the training-operator (PyTorchJob,
//! kubeflow/trainer v1.9.4 `pkg/apis/kubeflow.org/v1/common_types.go`) and the MPI Operator
//! (kubeflow/mpi-operator v0.8.0 `pkg/apis/kubeflow/v2beta1/common_types.go`, the same types
//! copied from kubeflow/common) define `ReplicaSpec` and `JobConditionType` alike.

use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use serde::Deserialize;

/// Condition types (`JobConditionType`; `Suspended` since training-operator v1.7 and
/// mpi-operator v0.4).
pub const COND_CREATED: &str = "Created";
pub const COND_RUNNING: &str = "Running";
pub const COND_RESTARTING: &str = "Restarting";
pub const COND_SUCCEEDED: &str = "Succeeded";
pub const COND_SUSPENDED: &str = "Suspended";
pub const COND_FAILED: &str = "Failed";

/// `ReplicaSpec`: `replicas` (`*int32`), `template`, `restartPolicy`. Each operator's
/// defaulter fills `replicas` its own way (the PyTorchJob's 1, the MPIJob's launcher 1).
/// `replicas` is read wider than int32 so that a count out of its range is refused by the
/// workload view (kit `k8s::workload`), naming the field and the 32-bit bound, rather than as a
/// parse error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaSpec {
    pub replicas: Option<i64>,
    pub restart_policy: Option<String>,
    pub template: Option<PodTemplateSpec>,
}

impl ReplicaSpec {
    /// The pod spec of the template, if any.
    pub fn pod_spec(&self) -> Option<&PodSpec> {
        self.template.as_ref()?.spec.as_ref()
    }
}
