//! Typed views of the Slinky slurm-operator's `NodeSet`, `Controller` and `Accounting`: only the
//! fields the checks read. Unknown fields are ignored and everything a learner may omit is
//! optional.
//!
//! Upstream types (SlinkyProject/slurm-operator v1.2.1, `slinky.slurm.net/v1beta1`):
//! - NodeSet: `api/v1beta1/nodeset_types.go` (`NodeSetSpec`, `NodeSetPartition`,
//!   `NodeSetStatus`);
//! - Controller: `api/v1beta1/controller_types.go` (`ControllerSpec`, `ControllerPersistence`);
//! - Accounting: `api/v1beta1/accounting_types.go` (`AccountingSpec`, `StorageConfig`);
//! - shared: `api/v1beta1/base_types.go` (`PodTemplate`, `Metadata`, `ContainerWrapper`).
//!
//! A NodeSet's pods are not described by one pod template: the operator builds the `slurmd`
//! container from `spec.slurmd` (a bare `corev1.Container`, usually without a name) and merges
//! `spec.template.spec` (a full PodSpec) over a base pod holding that container
//! (`internal/builder/workerbuilder/worker_app.go`: `BuildWorkerPodTemplate`, `slurmdContainer`;
//! `internal/builder/common`: `BuildPodTemplate`). [`NodeSet::pod_spec`] rebuilds that shape.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use serde::Deserialize;
use serde_json::Value;

use crate::observe::{InputError, Obj};

// The group and the one version the v1.x CRDs serve (v0.x served `v1alpha1` with other
// shapes) are `observe::kinds::NODESETS`, the one table of served versions.

/// The slurmd container's name (`labels.WorkerApp`, which is also the pods'
/// `app.kubernetes.io/name` label); the operator always puts it first in the pod.
pub const SLURMD_CONTAINER: &str = "slurmd";
/// `spec.replicas` when unset (`+default:=1`).
pub const DEFAULT_REPLICAS: i64 = 1;
/// `spec.scalingMode` values (`ScalingModeType`); `StatefulSet` is the default. In `DaemonSet`
/// mode `replicas` is ignored and one pod runs per matching node.
pub const SCALING_STATEFULSET: &str = "StatefulSet";
pub const SCALING_DAEMONSET: &str = "DaemonSet";
/// `StorageConfig` defaults (`+default:=3306`, `+default:="slurm_acct_db"`).
pub const DEFAULT_DB_PORT: i64 = 3306;
pub const DEFAULT_DB_NAME: &str = "slurm_acct_db";

/// `slinky.slurm.net/v1beta1` NodeSet.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSet {
    pub spec: NodeSetSpec,
    pub status: Option<NodeSetStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSetSpec {
    /// The Controller this NodeSet's slurmd pods register with (required upstream).
    pub controller_ref: Option<LocalRef>,
    pub replicas: Option<i32>,
    pub scaling_mode: Option<String>,
    /// The slurmd container (`ContainerWrapper`); learners usually omit its `name`. See
    /// [`NodeSet::pod_spec`].
    pub slurmd: Option<Container>,
    pub template: Option<PodTemplate>,
    pub partition: Option<Partition>,
    /// Appended to slurmd's `--conf` (e.g. `Features=a100 Weight=10`).
    pub extra_conf: Option<String>,
}

/// `corev1.LocalObjectReference`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocalRef {
    pub name: Option<String>,
}

/// `PodTemplate` (base_types.go): `metadata{labels, annotations}` and a full `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodTemplate {
    pub metadata: Option<Metadata>,
    pub spec: Option<PodSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Metadata {
    pub labels: Option<BTreeMap<String, String>>,
    pub annotations: Option<BTreeMap<String, String>>,
}

/// `NodeSetPartition`: when enabled the controller writes `PartitionName=<nodeset> Nodes=<nodeset>
/// <config>` into slurm.conf (`controller_config.go: buildNodeSetConf`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Partition {
    /// `+default:=false`.
    pub enabled: Option<bool>,
    pub config: Option<String>,
}

/// `NodeSetStatus`: pod counts, and the Slurm node states the operator reads back from slurmctld.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSetStatus {
    pub replicas: Option<i32>,
    pub updated_replicas: Option<i32>,
    pub ready_replicas: Option<i32>,
    pub available_replicas: Option<i32>,
    pub unavailable_replicas: Option<i32>,
    /// Nodes that should run a pod (the replica count in StatefulSet mode).
    pub desired: Option<i32>,
    pub slurm_idle: Option<i32>,
    /// Slurm nodes in ALLOCATED or MIXED state.
    pub slurm_allocated: Option<i32>,
    pub slurm_down: Option<i32>,
    pub slurm_drain: Option<i32>,
    pub conditions: Option<Vec<Condition>>,
    pub selector: Option<String>,
}

/// `metav1.Condition`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// The pod a NodeSet creates, rebuilt from its spec.
#[derive(Debug, Clone, Default)]
pub struct NodeSetPod {
    pub spec: PodSpec,
    /// For each of `spec.containers`, the field path of what the learner wrote for it
    /// (`spec.slurmd`, `spec.template.spec.containers[1]`).
    pub container_paths: Vec<String>,
    pub labels: BTreeMap<String, String>,
}

/// A field of the learner's object that could not be turned into the pod the operator builds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn into_input(self, o: &Obj) -> InputError {
        InputError::Field {
            origin: o.origin.to_string(),
            object: o.display_name(),
            field: self.field,
            message: self.message,
        }
    }
}

impl NodeSet {
    pub fn from_obj(o: &Obj) -> Result<NodeSet, InputError> {
        o.parse()
    }

    /// `spec.replicas` and whether it was written (false: the default 1 applies).
    pub fn replicas(&self) -> (i64, bool) {
        match self.spec.replicas {
            Some(n) => (i64::from(n), true),
            None => (DEFAULT_REPLICAS, false),
        }
    }

    /// True in `DaemonSet` scaling mode, where `replicas` is ignored.
    pub fn is_daemonset_mode(&self) -> bool {
        self.spec.scaling_mode.as_deref() == Some(SCALING_DAEMONSET)
    }

    pub fn controller_name(&self) -> Option<&str> {
        self.spec.controller_ref.as_ref()?.name.as_deref()
    }

    pub fn partition_enabled(&self) -> bool {
        self.spec
            .partition
            .as_ref()
            .and_then(|p| p.enabled)
            .unwrap_or(false)
    }

    /// The pod this NodeSet creates: the slurmd container first (from `spec.slurmd`, named
    /// `slurmd` unless it names itself), then `spec.template.spec` with its containers. A
    /// template container with the slurmd container's name is merged into it: the operator
    /// combines the two lists with `structutils.MergeList` before a strategic merge
    /// (`BuildPodTemplate`), which keeps one container per name. Here mappings merge key by key
    /// and the template's scalars and lists win; a strategic merge would merge lists such as
    /// `env` by key, which matters only if one container is split across both places.
    pub fn pod_spec(&self) -> Result<NodeSetPod, FieldError> {
        let template = self.spec.template.clone().unwrap_or_default();
        let mut spec = template.spec.unwrap_or_default();
        let labels = template.metadata.and_then(|m| m.labels).unwrap_or_default();

        let mut slurmd = self.spec.slurmd.clone().unwrap_or_default();
        if slurmd.name.is_empty() {
            slurmd.name = SLURMD_CONTAINER.to_string();
        }
        let template_containers = std::mem::take(&mut spec.containers);
        let mut containers = vec![];
        let mut paths = vec!["spec.slurmd".to_string()];
        for (i, c) in template_containers.into_iter().enumerate() {
            let path = format!("spec.template.spec.containers[{i}]");
            if c.name == slurmd.name {
                slurmd = merge_containers(&slurmd, &c).map_err(|message| FieldError {
                    field: path,
                    message,
                })?;
            } else {
                containers.push(c);
                paths.push(path);
            }
        }
        containers.insert(0, slurmd);
        spec.containers = containers;
        Ok(NodeSetPod {
            spec,
            container_paths: paths,
            labels,
        })
    }

    pub fn ready_replicas(&self) -> i64 {
        self.status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .map_or(0, i64::from)
    }
}

/// `overlay` merged over `base` through their JSON form.
fn merge_containers(base: &Container, overlay: &Container) -> Result<Container, String> {
    let mut merged = serde_json::to_value(base).map_err(|e| e.to_string())?;
    let overlay = serde_json::to_value(overlay).map_err(|e| e.to_string())?;
    merge(&mut merged, overlay);
    serde_json::from_value(merged).map_err(|e| e.to_string())
}

/// Merges `overlay` into `base`: mappings key by key, anything else replaced.
fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// A `ContainerWrapper` of which only the image is judged.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerImage {
    pub image: Option<String>,
}

/// `slinky.slurm.net/v1beta1` Controller: runs slurmctld (as a StatefulSet).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Controller {
    pub spec: ControllerSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerSpec {
    pub cluster_name: Option<String>,
    /// The Accounting (slurmdbd) this cluster reports to; absent: no accounting.
    pub accounting_ref: Option<LocalRef>,
    /// True: slurmctld runs outside Kubernetes and most other fields are ignored.
    pub external: Option<bool>,
    pub slurmctld: Option<ContainerImage>,
    pub persistence: Option<ControllerPersistence>,
}

/// `ControllerPersistence`: the volume holding slurmctld's StateSaveLocation. Its inline
/// PersistentVolumeClaimSpec fields are kept only as far as checks read them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerPersistence {
    /// `*bool`, `+default:=true`.
    pub enabled: Option<bool>,
    pub existing_claim: Option<String>,
    pub storage_class_name: Option<String>,
}

impl Controller {
    pub fn from_obj(o: &Obj) -> Result<Controller, InputError> {
        o.parse()
    }

    pub fn accounting_name(&self) -> Option<&str> {
        self.spec.accounting_ref.as_ref()?.name.as_deref()
    }

    /// Persistence is on unless `persistence.enabled: false` is written.
    pub fn persistence_enabled(&self) -> bool {
        self.spec
            .persistence
            .as_ref()
            .and_then(|p| p.enabled)
            .unwrap_or(true)
    }

    pub fn image(&self) -> Option<&str> {
        self.spec.slurmctld.as_ref()?.image.as_deref()
    }
}

/// `slinky.slurm.net/v1beta1` Accounting: runs slurmdbd (as a StatefulSet) against an external
/// MySQL/MariaDB.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Accounting {
    pub spec: AccountingSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AccountingSpec {
    pub external: Option<bool>,
    pub slurmdbd: Option<ContainerImage>,
    pub storage_config: Option<StorageConfig>,
}

/// `StorageConfig`: where slurmdbd stores accounting records.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StorageConfig {
    pub host: Option<String>,
    pub port: Option<i64>,
    pub database: Option<String>,
    pub username: Option<String>,
    pub password_key_ref: Option<SecretKeyRef>,
}

/// `corev1.SecretKeySelector`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SecretKeyRef {
    pub name: Option<String>,
    pub key: Option<String>,
}

impl Accounting {
    pub fn from_obj(o: &Obj) -> Result<Accounting, InputError> {
        o.parse()
    }

    pub fn image(&self) -> Option<&str> {
        self.spec.slurmdbd.as_ref()?.image.as_deref()
    }

    pub fn storage(&self) -> Option<&StorageConfig> {
        self.spec.storage_config.as_ref()
    }

    /// `storageConfig.port`, or the default 3306.
    pub fn db_port(&self) -> i64 {
        self.storage()
            .and_then(|s| s.port)
            .unwrap_or(DEFAULT_DB_PORT)
    }

    /// `storageConfig.database`, or the default `slurm_acct_db`.
    pub fn db_name(&self) -> &str {
        self.storage()
            .and_then(|s| s.database.as_deref())
            .unwrap_or(DEFAULT_DB_NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nodeset(v: Value) -> NodeSet {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn slurmd_container_comes_first_and_is_named() {
        let ns = nodeset(json!({"spec": {
            "controllerRef": {"name": "slurm"},
            "slurmd": {"image": "ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04",
                       "resources": {"limits": {"nvidia.com/gpu": "8"}}},
            "template": {"metadata": {"labels": {"team": "a"}},
                         "spec": {"nodeSelector": {"topology.kubernetes.io/zone": "us-west-2a"},
                                  "containers": [{"name": "sidecar", "image": "busybox"}]}},
            "partition": {"enabled": true}
        }}));
        let pod = ns.pod_spec().unwrap();
        let names: Vec<&str> = pod
            .spec
            .containers
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["slurmd", "sidecar"]);
        assert_eq!(
            pod.container_paths,
            ["spec.slurmd", "spec.template.spec.containers[0]"]
        );
        assert_eq!(pod.labels["team"], "a");
        assert!(pod.spec.node_selector.is_some());
        assert_eq!(ns.controller_name(), Some("slurm"));
        assert!(ns.partition_enabled());
        assert_eq!(ns.replicas(), (1, false));
    }

    #[test]
    fn template_container_named_slurmd_merges_into_it() {
        let ns = nodeset(json!({"spec": {
            "slurmd": {"image": "slurmd:1", "resources": {"limits": {"cpu": "4"}}},
            "template": {"spec": {"containers": [
                {"name": "slurmd", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
            ]}}
        }}));
        let pod = ns.pod_spec().unwrap();
        assert_eq!(pod.spec.containers.len(), 1);
        let c = &pod.spec.containers[0];
        assert_eq!(c.image.as_deref(), Some("slurmd:1"));
        let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
        assert_eq!(limits["cpu"].0, "4");
        assert_eq!(limits["nvidia.com/gpu"].0, "8");
    }

    #[test]
    fn without_slurmd_or_template_the_pod_still_has_slurmd() {
        let pod = nodeset(json!({"spec": {}})).pod_spec().unwrap();
        assert_eq!(pod.spec.containers.len(), 1);
        assert_eq!(pod.spec.containers[0].name, SLURMD_CONTAINER);
        assert_eq!(pod.container_paths, ["spec.slurmd"]);
    }

    #[test]
    fn status_counters_and_daemonset_mode() {
        let ns = nodeset(json!({
            "spec": {"replicas": 4, "scalingMode": "DaemonSet"},
            "status": {"replicas": 4, "readyReplicas": 3, "slurmIdle": 2, "slurmAllocated": 1,
                       "slurmDown": 1, "slurmDrain": 0, "nodeSetHash": "abc", "selector": "x=y"}
        }));
        assert_eq!(ns.replicas(), (4, true));
        assert!(ns.is_daemonset_mode());
        assert_eq!(ns.ready_replicas(), 3);
        let st = ns.status.as_ref().unwrap();
        assert_eq!(
            (st.slurm_idle, st.slurm_allocated, st.slurm_down),
            (Some(2), Some(1), Some(1))
        );
    }

    #[test]
    fn controller_and_accounting_defaults() {
        let c: Controller = serde_json::from_value(json!({"spec": {
            "accountingRef": {"name": "slurm"},
            "slurmctld": {"image": "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"},
            "slurmKeyRef": {"name": "slurm-auth-slurm", "key": "slurm.key"}
        }}))
        .unwrap();
        assert_eq!(c.accounting_name(), Some("slurm"));
        assert!(c.persistence_enabled());
        assert!(c.image().unwrap().contains("slurmctld"));
        let c: Controller =
            serde_json::from_value(json!({"spec": {"persistence": {"enabled": false}}})).unwrap();
        assert!(!c.persistence_enabled());
        assert!(c.accounting_name().is_none());

        let a: Accounting = serde_json::from_value(json!({"spec": {
            "slurmdbd": {"image": "ghcr.io/slinkyproject/slurmdbd:26.05-ubuntu26.04"},
            "storageConfig": {"host": "mariadb", "username": "slurm",
                              "passwordKeyRef": {"name": "mariadb-password", "key": "password"}}
        }}))
        .unwrap();
        assert_eq!(a.db_port(), 3306);
        assert_eq!(a.db_name(), "slurm_acct_db");
        let s = a.storage().unwrap();
        assert_eq!(s.host.as_deref(), Some("mariadb"));
        assert_eq!(
            s.password_key_ref.as_ref().unwrap().key.as_deref(),
            Some("password")
        );
    }
}
