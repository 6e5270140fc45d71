//! Status conditions: `status.conditions[]` entries with `type`, `status`, `reason`, `message`,
//! `lastTransitionTime` (and `observedGeneration` where the type has it).
//!
//! Pods, Jobs, Nodes (core/v1, batch/v1), MPIJobs (kubeflow `JobCondition`), Volcano PodGroups
//! (`PodGroupCondition`) and Karpenter NodePools/NodeClaims (awslabs/operatorpkg
//! `status.Condition`, shaped like `metav1.Condition`) all share these fields. `status` is one of
//! `True`, `False`, `Unknown` (k8s.io/api `core/v1` `ConditionStatus`; `metav1.ConditionStatus`).
//! Read them from JSON ([`from_object`]) or from the typed k8s-openapi conditions
//! ([`AsCondition`]), then look one up by type ([`find`]).

use std::fmt;

use k8s_openapi::api::batch::v1::JobCondition;
use k8s_openapi::api::core::v1::{NodeCondition, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, Time};
use serde_json::Value;
use thiserror::Error;

/// `ConditionStatus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    True,
    False,
    Unknown,
    /// Anything else a controller wrote (kept, so a message can show it).
    Other(String),
}

impl Status {
    pub fn parse(s: &str) -> Status {
        match s {
            "True" => Status::True,
            "False" => Status::False,
            "Unknown" => Status::Unknown,
            other => Status::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Status::True => "True",
            Status::False => "False",
            Status::Unknown => "Unknown",
            Status::Other(s) => s,
        }
    }
}

/// One condition. Empty `reason`/`message` are None (the fields are `omitempty`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    pub status: Status,
    pub reason: Option<String>,
    pub message: Option<String>,
    /// RFC 3339, as the API serves it.
    pub last_transition_time: Option<String>,
    pub observed_generation: Option<i64>,
}

impl Condition {
    pub fn is_true(&self) -> bool {
        self.status == Status::True
    }

    pub fn is_false(&self) -> bool {
        self.status == Status::False
    }

    /// `Type=Status (Reason: message)`, for found texts.
    pub fn describe(&self) -> String {
        let mut s = format!("{}={}", self.type_, self.status.as_str());
        match (self.reason.as_deref(), self.message.as_deref()) {
            (Some(r), Some(m)) => s.push_str(&format!(" ({r}: {m})")),
            (Some(r), None) => s.push_str(&format!(" ({r})")),
            (None, Some(m)) => s.push_str(&format!(" ({m})")),
            (None, None) => {}
        }
        s
    }

    /// Whether the condition was computed for an older `metadata.generation` than `generation`
    /// (its `observedGeneration` is lower). Unknown either way: not stale.
    pub fn is_stale(&self, generation: Option<i64>) -> bool {
        matches!((self.observed_generation, generation), (Some(seen), Some(now)) if seen < now)
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Why `status.conditions` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConditionError {
    #[error("status.conditions is not a list")]
    NotAList,
    #[error("status.conditions[{index}] is not a mapping")]
    NotAMapping { index: usize },
    #[error("status.conditions[{index}].{field} is not a string")]
    NotAString { index: usize, field: &'static str },
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.is_empty()).map(str::to_string)
}

/// The conditions of an object (its `status.conditions`; none when absent or null). A wrong
/// shape is an error naming the entry, never a panic.
pub fn from_object(object: &Value) -> Result<Vec<Condition>, ConditionError> {
    from_list(&object["status"]["conditions"])
}

/// The conditions in a `conditions` list value.
pub fn from_list(list: &Value) -> Result<Vec<Condition>, ConditionError> {
    if list.is_null() {
        return Ok(Vec::new());
    }
    let items = list.as_array().ok_or(ConditionError::NotAList)?;
    items
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let map = c.as_object().ok_or(ConditionError::NotAMapping { index })?;
            let text = |field: &'static str| -> Result<Option<&str>, ConditionError> {
                match map.get(field) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.as_str())),
                    Some(_) => Err(ConditionError::NotAString { index, field }),
                }
            };
            let type_ = text("type")?.ok_or(ConditionError::NotAString {
                index,
                field: "type",
            })?;
            let status = text("status")?.ok_or(ConditionError::NotAString {
                index,
                field: "status",
            })?;
            Ok(Condition {
                type_: type_.to_string(),
                status: Status::parse(status),
                reason: non_empty(text("reason")?),
                message: non_empty(text("message")?),
                last_transition_time: non_empty(text("lastTransitionTime")?),
                observed_generation: map.get("observedGeneration").and_then(Value::as_i64),
            })
        })
        .collect()
}

/// The condition of this type (the first, if a controller wrote several).
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether a condition of this type has status True.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(Condition::is_true)
}

/// The types of the conditions whose status is True, in the order written.
pub fn true_types(conditions: &[Condition]) -> Vec<&str> {
    conditions
        .iter()
        .filter(|c| c.is_true())
        .map(|c| c.type_.as_str())
        .collect()
}

/// Typed conditions that convert to [`Condition`].
pub trait AsCondition {
    fn as_condition(&self) -> Condition;
}

/// Converts a list of typed conditions.
pub fn of_typed<C: AsCondition>(conditions: &[C]) -> Vec<Condition> {
    conditions.iter().map(AsCondition::as_condition).collect()
}

fn time(t: Option<&Time>) -> Option<String> {
    // jiff prints a Timestamp in RFC 3339 (`2026-01-01T00:00:00Z`).
    t.map(|t| t.0.to_string())
}

macro_rules! core_condition {
    ($t:ty, $generation:expr) => {
        impl AsCondition for $t {
            fn as_condition(&self) -> Condition {
                Condition {
                    type_: self.type_.clone(),
                    status: Status::parse(&self.status),
                    reason: non_empty(self.reason.as_deref()),
                    message: non_empty(self.message.as_deref()),
                    last_transition_time: time(self.last_transition_time.as_ref()),
                    observed_generation: $generation(self),
                }
            }
        }
    };
}

// PodCondition gained `observedGeneration` in Kubernetes 1.33; Job and Node conditions have none.
core_condition!(PodCondition, |c: &PodCondition| c.observed_generation);
core_condition!(JobCondition, |_: &JobCondition| None);
core_condition!(NodeCondition, |_: &NodeCondition| None);

impl AsCondition for MetaCondition {
    fn as_condition(&self) -> Condition {
        Condition {
            type_: self.type_.clone(),
            status: Status::parse(&self.status),
            reason: non_empty(Some(&self.reason)),
            message: non_empty(Some(&self.message)),
            last_transition_time: time(Some(&self.last_transition_time)),
            observed_generation: self.observed_generation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_shape_the_labs_meet() {
        // Pod, Job, MPIJob, PodGroup, NodePool: all type/status/reason/message.
        let shapes = [
            json!({"kind": "Pod", "status": {"conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": "0/4 nodes are available", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
            json!({"kind": "Job", "status": {"conditions": [
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastProbeTime": null}]}}),
            json!({"kind": "MPIJob", "status": {"conditions": [
                {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
                {"type": "Running", "status": "True", "reason": "MPIJobRunning"}]}}),
            json!({"kind": "PodGroup", "status": {"conditions": [
                {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                 "message": "4/0 tasks in gang unschedulable", "transitionID": "x"}]}}),
            json!({"kind": "NodePool", "metadata": {"generation": 3}, "status": {"conditions": [
                {"type": "Ready", "status": "Unknown", "reason": "AwaitingReconciliation", "message": "",
                 "observedGeneration": 2}]}}),
        ];
        let all: Vec<Vec<Condition>> = shapes.iter().map(|o| from_object(o).unwrap()).collect();
        let pod = find(&all[0], "PodScheduled").unwrap();
        assert!(pod.is_false());
        assert_eq!(pod.reason.as_deref(), Some("Unschedulable"));
        assert_eq!(
            pod.last_transition_time.as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert!(is_true(&all[1], "Failed"));
        assert_eq!(true_types(&all[2]), ["Created", "Running"]);
        assert_eq!(
            find(&all[3], "Unschedulable").unwrap().describe(),
            "Unschedulable=True (NotEnoughResources: 4/0 tasks in gang unschedulable)"
        );
        let ready = find(&all[4], "Ready").unwrap();
        assert_eq!(ready.status, Status::Unknown);
        assert_eq!(ready.message, None);
        assert_eq!(ready.describe(), "Ready=Unknown (AwaitingReconciliation)");
        assert!(ready.is_stale(Some(3)));
        assert!(!ready.is_stale(Some(2)));
        assert!(!ready.is_stale(None));
    }

    #[test]
    fn absent_conditions_are_none_and_lookups_miss() {
        assert!(from_object(&json!({"status": {}})).unwrap().is_empty());
        assert!(from_object(&json!({})).unwrap().is_empty());
        assert!(from_object(&json!({"status": {"conditions": null}}))
            .unwrap()
            .is_empty());
        let c =
            from_object(&json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
                .unwrap();
        assert!(find(&c, "Complete").is_none());
        assert!(!is_true(&c, "Complete"));
        assert!(is_true(&c, "Ready"));
    }

    #[test]
    fn odd_statuses_are_kept() {
        let c =
            from_object(&json!({"status": {"conditions": [{"type": "Ready", "status": "Maybe"}]}}))
                .unwrap();
        assert_eq!(c[0].status, Status::Other("Maybe".into()));
        assert!(!c[0].is_true() && !c[0].is_false());
        assert_eq!(c[0].describe(), "Ready=Maybe");
    }

    #[test]
    fn wrong_shapes_are_errors() {
        assert_eq!(
            from_object(&json!({"status": {"conditions": {"type": "Ready"}}})),
            Err(ConditionError::NotAList)
        );
        assert_eq!(
            from_object(&json!({"status": {"conditions": ["Ready"]}})),
            Err(ConditionError::NotAMapping { index: 0 })
        );
        assert_eq!(
            from_object(
                &json!({"status": {"conditions": [{"type": "A", "status": "True"}, {"status": "True"}]}})
            ),
            Err(ConditionError::NotAString {
                index: 1,
                field: "type"
            })
        );
        assert_eq!(
            from_object(&json!({"status": {"conditions": [{"type": "A", "status": true}]}})),
            Err(ConditionError::NotAString {
                index: 0,
                field: "status"
            })
        );
        let e = from_object(
            &json!({"status": {"conditions": [{"type": "A", "status": "True", "reason": 3}]}}),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "status.conditions[0].reason is not a string");
    }

    #[test]
    fn typed_conditions_convert() {
        let pod: PodCondition = serde_json::from_value(json!({
            "type": "Ready", "status": "True", "lastTransitionTime": "2026-02-03T04:05:06Z"}))
        .unwrap();
        let c = pod.as_condition();
        assert!(c.is_true());
        assert_eq!(
            c.last_transition_time.as_deref(),
            Some("2026-02-03T04:05:06Z")
        );
        let job: JobCondition = serde_json::from_value(json!({
            "type": "Complete", "status": "True", "reason": ""}))
        .unwrap();
        assert_eq!(job.as_condition().reason, None);
        let meta: MetaCondition = serde_json::from_value(json!({
            "type": "Ready", "status": "False", "reason": "NodeClassNotReady", "message": "m",
            "lastTransitionTime": "2026-02-03T04:05:06Z", "observedGeneration": 4}))
        .unwrap();
        let m = meta.as_condition();
        assert_eq!(m.observed_generation, Some(4));
        assert_eq!(m.describe(), "Ready=False (NodeClassNotReady: m)");
        let list = of_typed(&[pod]);
        assert!(is_true(&list, "Ready"));
    }
}
