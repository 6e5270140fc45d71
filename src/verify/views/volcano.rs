//! Typed views of Volcano's Job and PodGroup: only the fields the `volcano-gang` checks read.
//! Unknown fields are ignored, every field is optional, so a Job as the learner wrote it (before
//! the admission webhook filled the defaults) and as the API server returns it both parse.
//!
//! Upstream types (volcano-sh/volcano v1.15.1):
//! - Job: `staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/job.go` (`Job`, `JobSpec`,
//!   `TaskSpec`, `JobStatus`, `JobState`);
//! - PodGroup: `staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go` (`PodGroup`,
//!   `PodGroupSpec`, `PodGroupStatus`).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde::Deserialize;

/// `batch.volcano.sh/v1alpha1` Job.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoJob {
    pub spec: JobSpec,
    pub status: Option<JobStatus>,
}

/// `JobSpec`. `minAvailable` is `int32` with `omitempty`: 0 and absent both mean "unset", and the
/// mutating webhook then fills it with the sum of the tasks' `minAvailable` (or `replicas`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSpec {
    /// The default of `tasks[].template.spec.schedulerName`; the webhook sets `volcano` if empty.
    pub scheduler_name: Option<String>,
    pub min_available: Option<i32>,
    pub tasks: Vec<TaskSpec>,
}

/// `TaskSpec`: one group of identical pods.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TaskSpec {
    pub name: Option<String>,
    pub replicas: Option<i32>,
    /// `*int32`; the webhook sets it to `replicas` when absent.
    pub min_available: Option<i32>,
    pub template: Option<PodTemplateSpec>,
}

/// `JobStatus`: only the phase and the controller's copy of `minAvailable`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobStatus {
    pub state: JobState,
    pub min_available: Option<i32>,
    pub running: Option<i32>,
    pub pending: Option<i32>,
}

/// `JobState.phase`: `Pending`, `Aborting`, `Aborted`, `Running`, `Restarting`, `Completing`,
/// `Completed`, `Terminating`, `Terminated`, `Failed` (empty until the controller syncs the job).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobState {
    pub phase: Option<String>,
}

/// `scheduling.volcano.sh/v1beta1` PodGroup.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroup {
    pub spec: PodGroupSpec,
    pub status: Option<PodGroupStatus>,
}

/// `PodGroupSpec.minMember`: "if there's not enough resources to start all tasks, the scheduler
/// will not start anyone". The job controller copies the Job's `minAvailable` into it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupSpec {
    pub min_member: Option<i32>,
}

/// `PodGroupStatus`. `phase` is one of `Pending`, `Running`, `Unknown`, `Inqueue`, `Completed`.
/// Its `conditions` (`Unschedulable`, `Scheduled`) are read with the kit's `conditions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupStatus {
    pub phase: Option<String>,
    pub running: Option<i32>,
}

impl VolcanoJob {
    /// The `spec.minAvailable` the admission webhook leaves on the stored Job: the value as
    /// written when non-zero, else Σ(`tasks[].minAvailable`, or `replicas` when unset)
    /// (`patchDefaultMinAvailable` in pkg/webhooks/admission/jobs/mutate/mutate_job.go).
    /// The bool says whether the value was written (false: it is the webhook's default).
    pub fn effective_min_available(&self) -> (i64, bool) {
        match self.spec.min_available {
            Some(m) if m != 0 => (i64::from(m), true),
            _ => {
                let sum = self
                    .spec
                    .tasks
                    .iter()
                    .map(|t| i64::from(t.min_available.or(t.replicas).unwrap_or(0)))
                    .sum();
                (sum, false)
            }
        }
    }

    pub fn phase(&self) -> Option<&str> {
        self.status
            .as_ref()
            .and_then(|s| s.state.phase.as_deref())
            .filter(|p| !p.is_empty())
    }
}

impl PodGroup {
    pub fn phase(&self) -> Option<&str> {
        self.status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .filter(|p| !p.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(v: serde_json::Value) -> VolcanoJob {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn min_available_defaults_like_the_webhook() {
        let j = job(serde_json::json!({"spec": {"tasks": [
            {"name": "a", "replicas": 4},
            {"name": "b", "replicas": 2, "minAvailable": 1}
        ]}}));
        assert_eq!(j.effective_min_available(), (5, false));
        let j = job(serde_json::json!({"spec": {"minAvailable": 3, "tasks": [{"replicas": 4}]}}));
        assert_eq!(j.effective_min_available(), (3, true));
    }

    #[test]
    fn unknown_fields_are_ignored_and_status_is_optional() {
        let j = job(serde_json::json!({"spec": {"queue": "default", "plugins": {"ssh": []}}}));
        assert!(j.phase().is_none());
        let pg: PodGroup = serde_json::from_value(serde_json::json!({
            "spec": {"minMember": 4, "minResources": {"nvidia.com/gpu": "32"}},
            "status": {"phase": "Pending", "conditions": [
                {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                 "message": "4/0 tasks in gang unschedulable: pod group is not ready, 4 minAvailable",
                 "transitionID": "x"}
            ]}
        }))
        .unwrap();
        assert_eq!(pg.phase(), Some("Pending"));
        assert_eq!(pg.spec.min_member, Some(4));
    }
}
