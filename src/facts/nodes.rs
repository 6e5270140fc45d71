//! Node facts: zone, instance type and allocatable extended resources (core/v1 Node,
//! `status.allocatable`, `status.capacity`, `spec.providerID`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Taint};

use super::instances::{INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::observe::{kinds, InputError, Obj, Observed, Query, Unavailable};
use crate::quantity::Quantity;

#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    pub name: String,
    pub zone: Option<String>,
    pub instance_type: Option<String>,
    pub provider_id: Option<String>,
    /// Whole-number allocatable quantities by resource name (extended resources are integers).
    pub allocatable: BTreeMap<String, i64>,
    /// Every allocatable quantity, fractions too (`cpu: 7910m`), for the scheduler's fit.
    pub allocatable_exact: BTreeMap<String, Quantity>,
    pub capacity: BTreeMap<String, i64>,
    /// `metadata.creationTimestamp` (RFC 3339 in the API's fixed UTC form, which sorts as text).
    pub created: Option<String>,
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
        let mut allocatable_exact = BTreeMap::new();
        for (k, q) in status.allocatable.iter().flatten() {
            let q = Quantity::parse(&q.0)
                .map_err(|e| o.field_error(format!("status.allocatable.{k}"), e))?;
            allocatable_exact.insert(k.clone(), q);
        }
        Ok(NodeFacts {
            name: node.metadata.name.unwrap_or_default(),
            zone: labels.get(ZONE_LABEL).cloned(),
            instance_type: labels.get(INSTANCE_TYPE_LABEL).cloned(),
            provider_id: spec.provider_id,
            allocatable: ints("allocatable", status.allocatable)?,
            allocatable_exact,
            capacity: ints("capacity", status.capacity)?,
            created: o.value["metadata"]["creationTimestamp"]
                .as_str()
                .map(str::to_string),
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

/// The nodes of one observation, decoded at most once however many labs a round judges: the
/// objects as read (or why they could not be), and their facts on first use. A malformed node is
/// bad input for whichever lab asks for the facts, as when each lab decoded them itself.
pub struct ClusterNodes<'a> {
    objs: Result<Vec<&'a Obj>, Unavailable>,
    facts: std::sync::OnceLock<Result<Vec<NodeFacts>, InputError>>,
}

impl<'a> ClusterNodes<'a> {
    /// The nodes `obs` holds (every plan reads them).
    pub fn of(obs: &'a Observed) -> ClusterNodes<'a> {
        ClusterNodes {
            objs: obs.list(&Query::cluster(&kinds::NODES)),
            facts: std::sync::OnceLock::new(),
        }
    }

    /// The node objects, or why they could not be read.
    pub fn objs(&self) -> Result<&[&'a Obj], &Unavailable> {
        self.objs.as_deref()
    }

    /// The node objects, none when they could not be read (profile detection).
    pub fn objs_or_none(&self) -> &[&'a Obj] {
        self.objs.as_deref().unwrap_or_default()
    }

    /// The nodes' facts (decoded on the first call), or why the nodes could not be read; a
    /// node that does not decode is bad input.
    pub fn facts(&self) -> Result<Result<&[NodeFacts], &Unavailable>, InputError> {
        let objs = match &self.objs {
            Ok(o) => o,
            Err(why) => return Ok(Err(why)),
        };
        match self.facts.get_or_init(|| NodeFacts::all(objs)) {
            Ok(f) => Ok(Ok(f)),
            Err(e) => Err(e.clone()),
        }
    }

    /// The profile the nodes' providerIDs say.
    pub fn profile(&self) -> Option<super::Profile> {
        super::Profile::detect(self.objs_or_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Origin, SourceKind};
    use serde_json::json;

    fn node(name: &str, allocatable: serde_json::Value) -> Obj {
        Obj::new(
            json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "creationTimestamp": "2026-12-01T09:00:00Z"},
                "spec": {"providerID": "kind://docker/trainlab/worker"},
                "status": {"allocatable": allocatable}}),
            Origin::Live,
        )
        .unwrap()
    }

    #[test]
    fn a_node_keeps_whole_counts_exact_quantities_and_its_creation_time() {
        let f = NodeFacts::from_obj(&node(
            "gpu-1",
            json!({"nvidia.com/gpu": "8", "cpu": "7910m"}),
        ))
        .unwrap();
        assert_eq!(f.allocatable("nvidia.com/gpu"), 8);
        assert!(
            !f.allocatable.contains_key("cpu"),
            "a fraction is not a count"
        );
        assert_eq!(
            f.allocatable_exact["cpu"],
            Quantity::parse("7910m").unwrap()
        );
        assert_eq!(f.created.as_deref(), Some("2026-12-01T09:00:00Z"));
    }

    #[test]
    fn a_malformed_allocatable_quantity_is_bad_input_naming_its_field() {
        let e = NodeFacts::from_obj(&node("n", json!({"nvidia.com/gpu": "eight"}))).unwrap_err();
        assert!(
            e.to_string().contains("status.allocatable.nvidia.com/gpu"),
            "{e}"
        );
    }

    #[test]
    fn the_nodes_of_an_observation_decode_once_and_say_their_profile() {
        let obs = Observed::offline(
            SourceKind::Snapshot,
            "test",
            vec![node("a", json!({"nvidia.com/gpu": "8"}))],
        )
        .planned(vec![Query::cluster(&kinds::NODES)]);
        let nodes = ClusterNodes::of(&obs);
        let first = nodes.facts().unwrap().unwrap().as_ptr();
        let again = nodes.facts().unwrap().unwrap().as_ptr();
        assert_eq!(first, again, "decoded once, the same facts every time");
        assert_eq!(nodes.profile(), Some(crate::facts::Profile::Kind));

        let bad = Observed::offline(
            SourceKind::Snapshot,
            "test",
            vec![node("b", json!({"nvidia.com/gpu": "eight"}))],
        )
        .planned(vec![Query::cluster(&kinds::NODES)]);
        assert!(
            ClusterNodes::of(&bad).facts().is_err(),
            "bad input, for whoever asks"
        );
    }
}
