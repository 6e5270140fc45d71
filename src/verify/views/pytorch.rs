//! Typed view of the Kubeflow training-operator's `PyTorchJob`, only the fields the checks need.
//!
//! Follows kubeflow/training-operator v1.9.4 (now kubeflow/trainer, tag v1.9.4)
//! `pkg/apis/kubeflow.org/v1/pytorch_types.go` (`PyTorchJob`, `PyTorchJobSpec`, `ElasticPolicy`,
//! `RDZVConf`), `common_types.go` (`ReplicaSpec`, `RunPolicy`, `SchedulingPolicy`, `JobStatus`,
//! `ReplicaStatus`, `JobCondition`) and `pytorch_defaults.go` (defaults). Unknown fields are
//! ignored and everything a learner may omit is optional, so a manifest as written and the object
//! the API server returns (after the defaulter ran) both parse.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::kubeflow::ReplicaSpec;
use super::kubeflow::{COND_FAILED, COND_SUCCEEDED};

use crate::observe::{InputError, Obj};

// The served version is `observe::kinds` (`MPIJOBS`, `PYTORCHJOBS`), the one table.

/// `PyTorchJobReplicaTypeMaster` / `PyTorchJobReplicaTypeWorker` (pytorch_types.go).
pub const MASTER: &str = "Master";
pub const WORKER: &str = "Worker";

/// `PytorchJobDefaultContainerName`: the container the operator injects env and the port into.
pub const DEFAULT_CONTAINER: &str = "pytorch";
/// `PytorchJobDefaultPortName` / `PytorchJobDefaultPort`: added to the `pytorch` container when
/// no port of that name exists (`setPytorchDefaultPort`).
pub const DEFAULT_PORT_NAME: &str = "pytorchjob-port";
pub const DEFAULT_PORT: i32 = 23456;
/// `DefaultNprocPerNode` (pytorch_defaults.go): set unless the deprecated
/// `elasticPolicy.nProcPerNode` is used.
pub const DEFAULT_NPROC_PER_NODE: &str = "auto";
/// `setDefaultReplicas(spec, 1)` for every replica spec (pytorch_defaults.go).
pub const DEFAULT_REPLICAS: i64 = 1;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PyTorchJob {
    pub spec: PyTorchJobSpec,
    pub status: Option<JobStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PyTorchJobSpec {
    pub run_policy: Option<RunPolicy>,
    pub elastic_policy: Option<ElasticPolicy>,
    /// `Master` / `Worker` → replica spec. The defaulter rewrites keys to this case
    /// (`setPytorchTypeNamesToCamelCase`); a key with a null value counts as absent.
    #[serde(rename = "pytorchReplicaSpecs")]
    pub pytorch_replica_specs: Option<BTreeMap<String, Option<ReplicaSpec>>>,
    /// `*string` upstream: `auto`, `cpu`, `gpu` or an integer *as a string*. An unquoted
    /// number is kept (as [`NprocPerNode::Unquoted`]) so a check can fail it with a hint; the
    /// CRD schema would reject it.
    pub nproc_per_node: Option<NprocPerNode>,
}

/// `spec.nprocPerNode` as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum NprocPerNode {
    /// A string, as the API requires (`"auto"`, `"gpu"`, `"8"`).
    Text(String),
    /// An unquoted YAML/JSON integer: not of the API's type.
    Unquoted(i64),
}

impl NprocPerNode {
    /// The value as the operator passes it on in `PET_NPROC_PER_NODE` (verbatim).
    pub fn as_text(&self) -> String {
        match self {
            NprocPerNode::Text(s) => s.clone(),
            NprocPerNode::Unquoted(n) => n.to_string(),
        }
    }

    /// The integer, when the value is one (`"8"` or `8`); `None` for `auto`, `cpu`, `gpu`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            NprocPerNode::Text(s) => s.trim().parse().ok(),
            NprocPerNode::Unquoted(n) => Some(*n),
        }
    }
}

/// `ElasticPolicy`: torchrun's elastic rendezvous settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ElasticPolicy {
    /// When only one of min/max is set the defaulter copies it to the other; when neither is set
    /// both become the Worker replica count (`setElasticPolicy`).
    pub min_replicas: Option<i32>,
    pub max_replicas: Option<i32>,
    /// `c10d`, `etcd` or `etcd-v2`.
    pub rdzv_backend: Option<String>,
    pub rdzv_port: Option<i32>,
    pub rdzv_host: Option<String>,
    pub rdzv_id: Option<String>,
    pub rdzv_conf: Option<Vec<RdzvConf>>,
    pub standalone: Option<bool>,
    /// Deprecated since v1.7 in favour of `spec.nprocPerNode`.
    pub n_proc_per_node: Option<i32>,
    pub max_restarts: Option<i32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RdzvConf {
    pub key: Option<String>,
    pub value: Option<String>,
}

/// `RunPolicy` (common_types.go).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunPolicy {
    /// `None` (the default), `Running` or `All`.
    pub clean_pod_policy: Option<String>,
    pub ttl_seconds_after_finished: Option<i32>,
    pub active_deadline_seconds: Option<i64>,
    pub backoff_limit: Option<i32>,
    pub scheduling_policy: Option<SchedulingPolicy>,
    pub suspend: Option<bool>,
    pub managed_by: Option<String>,
}

/// `SchedulingPolicy`: gang-scheduling settings handed to Volcano or scheduler-plugins.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulingPolicy {
    pub min_available: Option<i32>,
    pub queue: Option<String>,
    pub priority_class: Option<String>,
    pub schedule_timeout_seconds: Option<i32>,
}

/// `JobStatus` (common_types.go).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobStatus {
    pub conditions: Option<Vec<JobCondition>>,
    pub replica_statuses: Option<BTreeMap<String, Option<ReplicaStatus>>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaStatus {
    pub active: Option<i32>,
    pub succeeded: Option<i32>,
    pub failed: Option<i32>,
    pub selector: Option<String>,
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

impl PyTorchJob {
    pub fn from_obj(o: &Obj) -> Result<PyTorchJob, InputError> {
        o.parse()
    }

    /// The replica specs as written, in key order, nulls dropped.
    pub fn replica_specs(&self) -> impl Iterator<Item = (&str, &ReplicaSpec)> {
        self.spec
            .pytorch_replica_specs
            .iter()
            .flatten()
            .filter_map(|(k, v)| v.as_ref().map(|v| (k.as_str(), v)))
    }

    /// The key under which `role` (`Master`, `Worker`) is written: exactly, or else differing
    /// only in case, which the defaulter accepts and rewrites.
    pub fn replica_key(&self, role: &str) -> Option<&str> {
        let keys = || self.replica_specs().map(|(k, _)| k);
        keys()
            .find(|k| *k == role)
            .or_else(|| keys().find(|k| k.eq_ignore_ascii_case(role)))
    }

    /// The replica spec for `role`, matched like [`PyTorchJob::replica_key`].
    pub fn replica(&self, role: &str) -> Option<&ReplicaSpec> {
        let key = self.replica_key(role)?;
        self.replica_specs()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// `spec.nprocPerNode` as written (None: the defaulter's `auto` applies, unless the
    /// deprecated `elasticPolicy.nProcPerNode` is set).
    pub fn nproc_per_node(&self) -> Option<&NprocPerNode> {
        self.spec.nproc_per_node.as_ref()
    }

    pub fn elastic(&self) -> Option<&ElasticPolicy> {
        self.spec.elastic_policy.as_ref()
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
            .as_ref()?
            .conditions
            .as_deref()?
            .iter()
            .find(|c| c.type_ == type_)
    }

    /// Whether a condition of this type has status `True`.
    pub fn is_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.status == "True")
    }

    /// Finished: `Succeeded` or `Failed` is true.
    pub fn is_finished(&self) -> bool {
        self.is_true(COND_SUCCEEDED) || self.is_true(COND_FAILED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(v: serde_json::Value) -> PyTorchJob {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn nproc_per_node_keeps_strings_and_flags_unquoted_numbers() {
        let j = job(serde_json::json!({"spec": {"nprocPerNode": "8"}}));
        assert_eq!(j.nproc_per_node().unwrap().as_int(), Some(8));
        assert!(matches!(j.nproc_per_node(), Some(NprocPerNode::Text(_))));
        let j = job(serde_json::json!({"spec": {"nprocPerNode": "auto"}}));
        assert_eq!(j.nproc_per_node().unwrap().as_int(), None);
        assert_eq!(j.nproc_per_node().unwrap().as_text(), "auto");
        let j = job(serde_json::json!({"spec": {"nprocPerNode": 4}}));
        assert_eq!(j.nproc_per_node(), Some(&NprocPerNode::Unquoted(4)));
        assert!(job(serde_json::json!({"spec": {}}))
            .nproc_per_node()
            .is_none());
    }

    #[test]
    fn replica_keys_match_case_insensitively_preferring_exact() {
        let j = job(serde_json::json!({"spec": {"pytorchReplicaSpecs": {
            "master": {"replicas": 1},
            "Worker": {"replicas": 3},
            "Extra": null
        }}}));
        assert_eq!(j.replica_key(MASTER), Some("master"));
        assert_eq!(j.replica(WORKER).unwrap().replicas, Some(3));
        assert!(j.replica("Extra").is_none());
        assert_eq!(j.replica_specs().count(), 2);
    }

    #[test]
    fn conditions_and_elastic_policy() {
        let j = job(serde_json::json!({
            "spec": {"elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 4,
                                       "metrics": [{"type": "Resource"}]},
                     "runPolicy": {"suspend": true}},
            "status": {"conditions": [
                {"type": "Created", "status": "True"},
                {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded"}
            ]}
        }));
        assert_eq!(j.elastic().unwrap().rdzv_backend.as_deref(), Some("c10d"));
        assert!(j.suspended());
        assert!(j.is_finished());
        assert!(!j.is_true(crate::verify::views::kubeflow::COND_RUNNING));
    }
}
