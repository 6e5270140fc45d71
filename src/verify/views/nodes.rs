//! Node facts: zone, instance type and allocatable extended resources (core/v1 Node,
//! `status.allocatable`, `status.capacity`, `spec.providerID`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use crate::observe::{InputError, Obj};
use crate::profile::instances::{INSTANCE_TYPE_LABEL, ZONE_LABEL};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFacts {
    pub name: String,
    pub zone: Option<String>,
    pub instance_type: Option<String>,
    pub provider_id: Option<String>,
    /// Whole-number allocatable quantities by resource name (extended resources are integers).
    pub allocatable: BTreeMap<String, i64>,
    pub capacity: BTreeMap<String, i64>,
    pub labels: BTreeMap<String, String>,
    pub unschedulable: bool,
}

impl NodeFacts {
    pub fn from_obj(o: &Obj) -> Result<NodeFacts, InputError> {
        let node: Node = o.parse()?;
        let labels: BTreeMap<String, String> = node.metadata.labels.clone().unwrap_or_default();
        let spec = node.spec.unwrap_or_default();
        let status = node.status.unwrap_or_default();
        let ints = |m: Option<
            BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
        >| {
            m.unwrap_or_default()
                .into_iter()
                .filter_map(|(k, q)| parse_int_quantity(&q.0).map(|v| (k, v)))
                .collect::<BTreeMap<_, _>>()
        };
        Ok(NodeFacts {
            name: node.metadata.name.unwrap_or_default(),
            zone: labels.get(ZONE_LABEL).cloned(),
            instance_type: labels.get(INSTANCE_TYPE_LABEL).cloned(),
            provider_id: spec.provider_id,
            allocatable: ints(status.allocatable),
            capacity: ints(status.capacity),
            labels,
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

/// Integer quantities ("8", "16", "2k"); anything fractional or unparsable is ignored, which is
/// fine for extended resources (always integers) and for counting pods.
pub fn parse_int_quantity(q: &str) -> Option<i64> {
    let q = q.trim();
    let (num, mult) = match q.find(|c: char| !c.is_ascii_digit()) {
        None => (q, 1),
        Some(i) => {
            let m = match &q[i..] {
                "k" => 1_000,
                "M" => 1_000_000,
                "G" => 1_000_000_000,
                "Ki" => 1 << 10,
                "Mi" => 1 << 20,
                "Gi" => 1 << 30,
                _ => return None,
            };
            (&q[..i], m)
        }
    };
    num.parse::<i64>().ok().map(|n| n * mult)
}
