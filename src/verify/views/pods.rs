//! Pod and pod-template facts the checks need (core/v1 PodSpec, PodStatus).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};

use super::nodes::parse_int_quantity;
use crate::observe::{InputError, Obj};

/// A container's limit and request for one resource, as integers (None: not set).
pub fn limit(c: &Container, resource: &str) -> Option<i64> {
    c.resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.get(resource))
        .and_then(|q| parse_int_quantity(&q.0))
}

pub fn request(c: &Container, resource: &str) -> Option<i64> {
    c.resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|l| l.get(resource))
        .and_then(|q| parse_int_quantity(&q.0))
}

/// What a pod asks the scheduler for: requests, falling back to limits (the API server copies
/// limits into requests for extended resources when requests are omitted).
pub fn effective_request(c: &Container, resource: &str) -> Option<i64> {
    request(c, resource).or_else(|| limit(c, resource))
}

/// The sum over a pod spec's containers of a resource's effective request.
pub fn pod_request(spec: &PodSpec, resource: &str) -> i64 {
    spec.containers
        .iter()
        .filter_map(|c| effective_request(c, resource))
        .sum()
}

/// An environment variable's literal value in a container.
pub fn env_value<'a>(c: &'a Container, name: &str) -> Option<&'a str> {
    c.env
        .as_ref()?
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
}

#[derive(Debug, Clone)]
pub struct PodFacts {
    pub name: String,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub spec: PodSpec,
    /// `PodScheduled=False` message, if any (why the scheduler could not place it).
    pub unschedulable_message: Option<String>,
    pub labels: BTreeMap<String, String>,
}

impl PodFacts {
    pub fn from_obj(o: &Obj) -> Result<PodFacts, InputError> {
        let pod: Pod = o.parse()?;
        let status = pod.status.unwrap_or_default();
        let spec = pod.spec.unwrap_or_default();
        let unschedulable_message = status
            .conditions
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
            .and_then(|c| c.message);
        Ok(PodFacts {
            name: pod.metadata.name.unwrap_or_default(),
            node: spec.node_name.clone().filter(|n| !n.is_empty()),
            phase: status.phase,
            spec,
            unschedulable_message,
            labels: pod.metadata.labels.unwrap_or_default(),
        })
    }
}
