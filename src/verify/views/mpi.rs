//! Typed view of the MPI Operator's `MPIJob` spec, only the fields the checks need. Status
//! conditions are read with the kit ([`crate::verify::kit::k8s::conditions`]); pod templates with
//! [`crate::verify::kit::k8s::workload`].
//!
//! Follows kubeflow/mpi-operator v0.8.0 `pkg/apis/kubeflow/v2beta1/types.go` (`MPIJob`,
//! `MPIJobSpec`, `RunPolicy`, `JobConditionType`) and `common_types.go` (`ReplicaSpec`).
//! The legacy `kubeflow.org/v1` MPIJob of the training-operator (kubeflow/trainer v1.9.4,
//! `pkg/apis/kubeflow.org/v1/mpi_types.go`) has the same `slotsPerWorker` and `mpiReplicaSpecs`,
//! so a v1 manifest deserializes into this view as well and its fields can still be judged.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::kubeflow::ReplicaSpec;

// The served version is `observe::kinds` (`MPIJOBS`, `PYTORCHJOBS`), the one table.
/// Removed from the MPI Operator in v0.4.0 ("Remove MPI Operator V1 (#492)"); still served only
/// by the legacy training-operator v1.9.
pub const LEGACY_API_VERSION: &str = "kubeflow.org/v1";

/// `MPIReplicaTypeLauncher` / `MPIReplicaTypeWorker` (types.go). Map keys are case-sensitive.
pub const LAUNCHER: &str = "Launcher";
pub const WORKER: &str = "Worker";

/// `slotsPerWorker` when unset (`+kubebuilder:default:=1`, types.go; `default.go`).
pub const DEFAULT_SLOTS_PER_WORKER: i64 = 1;

/// `mpiImplementation` when unset (`+kubebuilder:default:=OpenMPI`, types.go); the others are
/// `Intel` and `MPICH`.
pub const OPEN_MPI: &str = "OpenMPI";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiJob {
    pub spec: MpiJobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiJobSpec {
    pub slots_per_worker: Option<i64>,
    /// v0.5.0+: the launcher is also listed in the hostfile as a worker (default false).
    pub run_launcher_as_worker: Option<bool>,
    pub mpi_implementation: Option<String>,
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

impl MpiJob {
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

    /// The keys of `mpiReplicaSpecs` as written, sorted.
    pub fn replica_keys(&self) -> Vec<&str> {
        self.spec
            .mpi_replica_specs
            .iter()
            .flat_map(|m| m.keys())
            .map(String::as_str)
            .collect()
    }

    /// A key that differs from `key` only in case (`launcher`), for a precise message.
    pub fn near_miss_key(&self, key: &str) -> Option<&str> {
        self.replica_keys()
            .into_iter()
            .find(|k| *k != key && k.eq_ignore_ascii_case(key))
    }

    pub fn runs_launcher_as_worker(&self) -> bool {
        self.spec.run_launcher_as_worker.unwrap_or(false)
    }

    /// Whether the launcher runs Open MPI's `mpirun` (the default implementation).
    pub fn is_open_mpi(&self) -> bool {
        self.spec.mpi_implementation.as_deref().unwrap_or(OPEN_MPI) == OPEN_MPI
    }

    pub fn suspended(&self) -> bool {
        self.spec
            .run_policy
            .as_ref()
            .and_then(|p| p.suspend)
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(v: serde_json::Value) -> MpiJob {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn defaults_apply_when_fields_are_unset() {
        let j = job(serde_json::json!({"spec": {}}));
        assert_eq!(j.slots_per_worker(), (1, false));
        assert!(!j.runs_launcher_as_worker());
        assert!(j.is_open_mpi());
        assert!(!j.suspended());
        let j =
            job(serde_json::json!({"spec": {"slotsPerWorker": 8, "mpiImplementation": "Intel"}}));
        assert_eq!(j.slots_per_worker(), (8, true));
        assert!(!j.is_open_mpi());
    }

    #[test]
    fn replica_keys_are_case_sensitive_and_near_misses_are_found() {
        let j = job(serde_json::json!({"spec": {"mpiReplicaSpecs": {
            "Launcher": {"replicas": 1}, "worker": {"replicas": 2}, "Other": null}}}));
        assert!(j.replica(LAUNCHER).is_some());
        assert!(j.replica(WORKER).is_none());
        assert!(j.replica("Other").is_none());
        assert_eq!(j.near_miss_key(WORKER), Some("worker"));
        assert_eq!(j.near_miss_key(LAUNCHER), None);
        assert_eq!(j.replica_keys(), vec!["Launcher", "Other", "worker"]);
    }
}
