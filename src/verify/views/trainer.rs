//! Typed views of Kubeflow Trainer v2's `TrainJob` and its runtimes (`ClusterTrainingRuntime`,
//! `TrainingRuntime`), only the fields the checks need.
//!
//! Follows kubeflow/trainer v2.3.0 `pkg/apis/trainer/v1alpha1/trainjob_types.go` (`TrainJobSpec`,
//! `RuntimeRef`, `Trainer`, `RuntimePatch`, `TrainJobStatus`) and `trainingruntime_types.go`
//! (`TrainingRuntimeSpec`, `MLPolicy`, `MPIMLPolicySource`, `JobSetTemplateSpec`); constants
//! from `pkg/constants/constants.go`. Unknown fields are ignored and everything a learner may
//! omit is optional. A runtime's JobSet template and the runtime patches stay JSON: they are
//! merged as the controller merges them (kit `training::trainjob`) before pod specs are read.

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use serde::Deserialize;
use serde_json::{json, Value};

/// The label on a runtime's replicatedJob (its Job template) that says which step of the
/// TrainJob it runs (`AncestorTrainer` and friends).
pub const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
/// The ancestor value of the job the TrainJob's `spec.trainer` applies to.
pub const ANCESTOR_TRAINER: &str = "trainer";
/// `constants.Node`: the container `spec.trainer` changes, and the trainer job's usual name.
pub const NODE: &str = "node";
/// `constants.Launcher`: the MPI runtimes' launcher job.
pub const LAUNCHER: &str = "launcher";
/// `RuntimeRef.apiGroup` / `kind` defaults (kubebuilder defaults on the fields).
pub const RUNTIME_GROUP: &str = "trainer.kubeflow.org";
pub const CLUSTER_RUNTIME_KIND: &str = "ClusterTrainingRuntime";
pub const NAMESPACED_RUNTIME_KIND: &str = "TrainingRuntime";
/// `MLPolicy.numNodes`: "Defaults to 1" (applied as `ptr.Deref(numNodes, 1)`).
pub const DEFAULT_NUM_NODES: i64 = 1;
/// `constants.TorchRunReservedEnvNames`: the torch plugin sets these on the trainer container;
/// its validating webhook refuses a TrainJob whose `spec.trainer.env` names one
/// (`plugins/torch/torch.go` `Validate`).
pub const TORCH_RESERVED_ENV: [&str; 5] = [
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "PET_NODE_RANK",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
];
/// Condition types (`TrainJobSuspended`, `TrainJobComplete`, `TrainJobFailed`); v2 has no
/// `Created` or `Running` condition.
pub const COND_COMPLETE: &str = "Complete";
pub const COND_FAILED: &str = "Failed";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainJob {
    pub spec: TrainJobSpec,
    pub status: TrainJobStatus,
}

/// `status` (`TrainJobStatus`): only `jobsStatus` is read here; conditions go through the kit's
/// `conditions`. The status is absent until the controller sets something (`MinProperties=1`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainJobStatus {
    pub jobs_status: Vec<JobStatus>,
}

/// One `status.jobsStatus[]` entry (`JobStatus`), copied by the controller from its JobSet's
/// `status.replicatedJobsStatus[]`: the counts are of the replicated job's child Jobs (one Job
/// per replica, which runs `numNodes` pods), not of pods. `ready` counts Jobs whose ready and
/// completed pods reach the expected number; `active` Jobs with a running or pending pod.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobStatus {
    pub name: String,
    pub ready: Option<i64>,
    pub succeeded: Option<i64>,
    pub failed: Option<i64>,
    pub active: Option<i64>,
    pub suspended: Option<i64>,
}

impl TrainJobStatus {
    /// `status.jobsStatus` in one line (`node: 1 active, 0 ready, 0 succeeded, 0 failed`,
    /// `launcher: …`), or None before the controller has written it.
    pub fn jobs_summary(&self) -> Option<String> {
        if self.jobs_status.is_empty() {
            return None;
        }
        let count = |n: Option<i64>| n.unwrap_or(0);
        let jobs = self.jobs_status.iter().map(|j| {
            let mut line = format!(
                "{}: {} active, {} ready, {} succeeded, {} failed",
                j.name,
                count(j.active),
                count(j.ready),
                count(j.succeeded),
                count(j.failed)
            );
            if count(j.suspended) > 0 {
                line.push_str(&format!(", {} suspended", count(j.suspended)));
            }
            line
        });
        Some(jobs.collect::<Vec<_>>().join("; "))
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainJobSpec {
    pub runtime_ref: Option<RuntimeRef>,
    pub trainer: Option<Trainer>,
    pub runtime_patches: Vec<RuntimePatch>,
    pub suspend: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeRef {
    pub name: Option<String>,
    pub api_group: Option<String>,
    pub kind: Option<String>,
}

impl RuntimeRef {
    /// `kind`, defaulted.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or(CLUSTER_RUNTIME_KIND)
    }

    /// `apiGroup`, defaulted.
    pub fn group(&self) -> &str {
        self.api_group.as_deref().unwrap_or(RUNTIME_GROUP)
    }
}

/// `spec.trainer`: what overrides the runtime's trainer job.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Trainer {
    pub image: Option<String>,
    pub command: Option<Vec<String>>,
    pub args: Option<Vec<String>>,
    pub env: Vec<EnvVar>,
    pub num_nodes: Option<i64>,
    /// `*int32` since v2.2.0 (an int-or-string before); kept as written so a string (`"auto"`)
    /// can be failed with the schema's words.
    pub num_proc_per_node: Option<Value>,
    pub resources_per_node: Option<ResourceRequirements>,
}

/// One `spec.runtimePatches[]` entry; its `trainingRuntimeSpec.template` is a JobSet template
/// patch, merged over the runtime's in list order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimePatch {
    pub manager: Option<String>,
    pub training_runtime_spec: Option<Value>,
}

/// A `ClusterTrainingRuntime` or `TrainingRuntime` (the same spec).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainingRuntime {
    pub spec: RuntimeSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeSpec {
    pub ml_policy: Option<MlPolicy>,
    /// `spec.template` (`JobSetTemplateSpec`): `spec.replicatedJobs[]` carries the pod templates.
    pub template: Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MlPolicy {
    pub num_nodes: Option<i64>,
    pub torch: Option<Value>,
    pub mpi: Option<MpiPolicy>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiPolicy {
    /// Default 1 (kubebuilder default).
    pub num_proc_per_node: Option<i64>,
    pub run_launcher_as_node: Option<bool>,
}

// ---------------------------------------------------------------------------------------------
// The TrainJob as the kit keeps it, and what `spec.trainer` does to a container.

/// Where a TrainJob's runtime was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeSource {
    /// Read with the TrainJob (the cluster, a snapshot, or the learner's files).
    Read,
    /// Not among the learner's files: Trainer v2.3.0's own, as `setup kind` installs it.
    BuiltIn,
}

/// What the TrainJob view keeps of its runtime and of the torch plugin's choices.
#[derive(Debug, Clone)]
pub struct TrainJobView {
    pub job: TrainJob,
    /// `ClusterTrainingRuntime torch-distributed`; None when read without a runtime.
    pub runtime: Option<String>,
    pub runtime_source: Option<RuntimeSource>,
    pub ml_policy: Option<MlPolicy>,
    /// `PET_NPROC_PER_NODE` as the torch plugin sets it, and where that comes from.
    pub nproc: Option<(String, String)>,
}

impl TrainJobView {
    pub fn is_suspended(&self) -> bool {
        self.job.spec.suspend.unwrap_or(false)
    }

    pub fn is_torch(&self) -> bool {
        self.ml_policy.as_ref().is_some_and(|m| m.torch.is_some())
    }
}

/// Where a learner changes the pods of the runtime's job `name`: a runtime patch.
pub fn runtime_patch_path(name: &str) -> String {
    format!("spec.runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[{name}].template.spec.template.spec")
}

/// `spec.trainer`'s image, command and args (when `whole`) and env over a container.
pub fn apply_trainer(c: &mut Value, t: &Trainer, whole: bool) {
    if whole {
        if let Some(i) = &t.image {
            c["image"] = json!(i);
        }
        if let Some(cmd) = &t.command {
            c["command"] = json!(cmd);
        }
        if let Some(a) = &t.args {
            c["args"] = json!(a);
        }
    }
    let env: Vec<Value> = t
        .env
        .iter()
        .map(|e| serde_json::to_value(e).unwrap_or_default())
        .collect();
    upsert_env(c, &env);
}

/// Env by name: replaced where the name exists, appended otherwise (`pkg/apply/apply.go`
/// `UpsertEnvVars`).
pub fn upsert_env(c: &mut Value, env: &[Value]) {
    if env.is_empty() {
        return;
    }
    if !c.get("env").is_some_and(Value::is_array) {
        c["env"] = json!([]);
    }
    let Some(list) = c.get_mut("env").and_then(Value::as_array_mut) else {
        return;
    };
    for e in env {
        let name = e.get("name");
        match list.iter_mut().find(|x| x.get("name") == name) {
            Some(slot) => *slot = e.clone(),
            None => list.push(e.clone()),
        }
    }
}
