//! Pod facts the checks need (core/v1 PodSpec, PodStatus). What a container asks for is the
//! kit's one rule (`kit::k8s::resources`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec};

use crate::observe::{InputError, Obj};

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
