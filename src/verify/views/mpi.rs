//! Typed view of the MPI Operator's `MPIJob`, only the fields the checks need.
//!
//! Follows kubeflow/mpi-operator v0.8.0 `pkg/apis/kubeflow/v2beta1/types.go` (`MPIJob`,
//! `MPIJobSpec`, `RunPolicy`, `JobStatus`, `JobCondition`) and `common_types.go` (`ReplicaSpec`).
//! The legacy `kubeflow.org/v1` MPIJob of the training-operator (kubeflow/trainer v1.9.4,
//! `pkg/apis/kubeflow.org/v1/mpi_types.go`) has the same `slotsPerWorker` and `mpiReplicaSpecs`,
//! so a v1 manifest deserializes into this view as well and its fields can still be judged.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde::Deserialize;

use crate::observe::{InputError, Obj};

/// The API version the MPI Operator serves (`deploy/v2beta1/mpi-operator.yaml` declares only it).
pub const API_VERSION: &str = "kubeflow.org/v2beta1";
/// Removed from the MPI Operator in v0.4.0 ("Remove MPI Operator V1 (#492)"); still served only
/// by the legacy training-operator v1.9.
pub const LEGACY_API_VERSION: &str = "kubeflow.org/v1";

/// `MPIReplicaTypeLauncher` / `MPIReplicaTypeWorker` (types.go). Map keys are case-sensitive.
pub const LAUNCHER: &str = "Launcher";
pub const WORKER: &str = "Worker";

/// `slotsPerWorker` when unset (`+kubebuilder:default:=1`, types.go; `default.go`).
pub const DEFAULT_SLOTS_PER_WORKER: i64 = 1;

/// Condition types (types.go `JobConditionType`).
pub const COND_CREATED: &str = "Created";
pub const COND_RUNNING: &str = "Running";
pub const COND_RESTARTING: &str = "Restarting";
pub const COND_SUCCEEDED: &str = "Succeeded";
pub const COND_SUSPENDED: &str = "Suspended";
pub const COND_FAILED: &str = "Failed";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiJob {
    pub spec: MpiJobSpec,
    pub status: MpiJobStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiJobSpec {
    pub slots_per_worker: Option<i64>,
    /// v0.5.0+: the launcher is also listed in the hostfile as a worker (default false).
    pub run_launcher_as_worker: Option<bool>,
    pub run_policy: Option<RunPolicy>,
    /// `Launcher` / `Worker` → replica spec. A key with a null value counts as absent.
    pub mpi_replica_specs: Option<BTreeMap<String, Option<ReplicaSpec>>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunPolicy {
    pub clean_pod_policy: Option<String>,
    pub suspend: Option<bool>,
}

/// `ReplicaSpec` (common_types.go): `replicas`, `restartPolicy`, `template`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaSpec {
    pub replicas: Option<i64>,
    pub restart_policy: Option<String>,
    pub template: Option<PodTemplateSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiJobStatus {
    pub conditions: Option<Vec<JobCondition>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

impl MpiJob {
    pub fn from_obj(o: &Obj) -> Result<MpiJob, InputError> {
        o.parse()
    }

    /// `slotsPerWorker` and whether the learner set it (false: the default 1 applies).
    pub fn slots_per_worker(&self) -> (i64, bool) {
        match self.spec.slots_per_worker {
            Some(n) => (n, true),
            None => (DEFAULT_SLOTS_PER_WORKER, false),
        }
    }

    /// The replica spec under exactly this key (`Launcher`, `Worker`).
    pub fn replica(&self, key: &str) -> Option<&ReplicaSpec> {
        self.spec
            .mpi_replica_specs
            .as_ref()?
            .get(key)
            .and_then(Option::as_ref)
    }

    /// A key that differs from `key` only in case (`launcher`), for a precise message.
    pub fn near_miss_key(&self, key: &str) -> Option<&str> {
        self.spec
            .mpi_replica_specs
            .as_ref()?
            .keys()
            .find(|k| k.as_str() != key && k.eq_ignore_ascii_case(key))
            .map(String::as_str)
    }

    pub fn runs_launcher_as_worker(&self) -> bool {
        self.spec.run_launcher_as_worker.unwrap_or(false)
    }

    pub fn suspended(&self) -> bool {
        self.spec
            .run_policy
            .as_ref()
            .and_then(|p| p.suspend)
            .unwrap_or(false)
    }

    pub fn condition(&self, type_: &str) -> Option<&JobCondition> {
        self.status
            .conditions
            .as_deref()
            .unwrap_or_default()
            .iter()
            .find(|c| c.type_ == type_)
    }

    /// Whether a condition of this type has status `True`.
    pub fn is_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.status == "True")
    }

    /// Types of the conditions whose status is `True`, in the order the operator wrote them.
    pub fn true_conditions(&self) -> Vec<&str> {
        self.status
            .conditions
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.as_str())
            .collect()
    }

    /// Finished: `Succeeded` or `Failed` is true (the operator's `isFinished`).
    pub fn is_finished(&self) -> bool {
        self.is_true(COND_SUCCEEDED) || self.is_true(COND_FAILED)
    }
}

impl ReplicaSpec {
    /// The pod spec of the template, if any.
    pub fn pod_spec(&self) -> Option<&k8s_openapi::api::core::v1::PodSpec> {
        self.template.as_ref()?.spec.as_ref()
    }
}
