//! Node facts: zone, instance type and allocatable extended resources (core/v1 Node,
//! `status.allocatable`, `status.capacity`, `spec.providerID`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Taint};

use super::instances::{INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::observe::{InputError, Obj};
use crate::quantity::Quantity;

#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    pub name: String,
    pub zone: Option<String>,
    pub instance_type: Option<String>,
    pub provider_id: Option<String>,
    /// Whole-number allocatable quantities by resource name (extended resources are integers).
    pub allocatable: BTreeMap<String, i64>,
    pub capacity: BTreeMap<String, i64>,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
}

impl NodeFacts {
    pub fn from_obj(o: &Obj) -> Result<NodeFacts, InputError> {
        let node: Node = o.parse()?;
        let labels: BTreeMap<String, String> = node.metadata.labels.clone().unwrap_or_default();
        let spec = node.spec.unwrap_or_default();
        let status = node.status.unwrap_or_default();
        // Whole-number resources (extended resources, pods, memory bytes); fractional ones
        // (cpu `7910m`) are not needed. A malformed or uncountable value is bad input.
        let ints = |field: &str,
                    m: Option<
            BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
        >|
         -> Result<BTreeMap<String, i64>, InputError> {
            let mut out = BTreeMap::new();
            for (k, q) in m.unwrap_or_default() {
                let q = Quantity::parse(&q.0)
                    .map_err(|e| o.field_error(format!("status.{field}.{k}"), e))?;
                if q.is_whole() {
                    let n = q
                        .count()
                        .map_err(|e| o.field_error(format!("status.{field}.{k}"), e))?;
                    out.insert(k, n);
                }
            }
            Ok(out)
        };
        Ok(NodeFacts {
            name: node.metadata.name.unwrap_or_default(),
            zone: labels.get(ZONE_LABEL).cloned(),
            instance_type: labels.get(INSTANCE_TYPE_LABEL).cloned(),
            provider_id: spec.provider_id,
            allocatable: ints("allocatable", status.allocatable)?,
            capacity: ints("capacity", status.capacity)?,
            labels,
            taints: spec.taints.unwrap_or_default(),
            unschedulable: spec.unschedulable.unwrap_or(false),
        })
    }

    pub fn allocatable(&self, resource: &str) -> i64 {
        self.allocatable.get(resource).copied().unwrap_or(0)
    }

    pub fn all(nodes: &[&Obj]) -> Result<Vec<NodeFacts>, InputError> {
        nodes.iter().map(|o| NodeFacts::from_obj(o)).collect()
    }
}
