//! Availability Zones: the one zone a set of node requirements leaves, by zone name or by AZ ID,
//! and where a zone stands among the cluster's nodes and their Regions.
//!
//! - Requirements are intersected key by key ([`allowed_by_requirements`]), so every arrangement
//!   that leaves one zone counts: `In [a]`, `In [a, b]` with `NotIn [b]`, two `In` lists meeting
//!   in one zone.
//! - The AZ ID label `topology.k8s.aws/zone-id` is well known to Karpenter's AWS provider
//!   (aws/karpenter-provider-aws `pkg/apis/v1/labels.go` `LabelTopologyZoneID`): its offerings
//!   carry it and it labels the NodeClaims it launches (`pkg/cloudprovider/cloudprovider.go`).
//! - A zone name is its Region code and a letter (`us-west-2a`); an AZ ID is a Region code part,
//!   `-az` and a number (`usw2-az1`), the same physical zone in every account; a Local Zone's
//!   Region part extends its parent's (`us-west-2-lax-1a`, `usw2-lax1-az1`) (AWS docs, "AZ IDs").
//! - Pods may also be kept in one zone by where they are allowed to run ([`confined`]): a
//!   NodePool whose requirements leave one zone (lab 15's arrangement), selected by the label
//!   Karpenter puts on its nodes (`karpenter.sh/nodepool`: kubernetes-sigs/karpenter v1.14.1
//!   `pkg/apis/v1/labels.go` `NodePoolLabelKey`), or a node group whose nodes all sit in one zone,
//!   selected by its node label (`eks.amazonaws.com/nodegroup` on EKS managed node groups, EKS
//!   user guide "Managed node groups"; `alpha.eksctl.io/nodegroup-name` on eksctl's).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, PodSpec};

use crate::facts::instances::ZONE_LABEL;
use crate::facts::NodeFacts;
use crate::observe::Obj;
use crate::verify::kit::k8s::placement::{allowed_by_requirements, allowed_values, Allowed};
use crate::verify::views::karpenter::NodePool;

/// The AZ ID node label (see the module docs).
pub const ZONE_ID_LABEL: &str = "topology.k8s.aws/zone-id";
/// The labels that name a zone: its name, its AZ ID.
pub const ZONE_KEYS: [&str; 2] = [ZONE_LABEL, ZONE_ID_LABEL];

/// The node label naming a node's Karpenter NodePool.
pub const NODEPOOL_LABEL: &str = "karpenter.sh/nodepool";
/// Node labels naming a node group (see the module docs).
pub const NODE_GROUP_LABELS: [&str; 2] = [
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
];

/// The one zone requirements leave on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub key: &'static str,
    pub value: String,
}

impl Pin {
    /// `topology.kubernetes.io/zone: us-west-2a`
    pub fn text(&self) -> String {
        format!("{}: {}", self.key, self.value)
    }
}

/// Why requirements leave no single zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneProblem {
    /// No requirement on a zone key.
    NoRequirement,
    /// The requirements on this key leave no zone (contradicting lists, `DoesNotExist`).
    NoZone(&'static str),
    /// Several zones are left.
    Several(Vec<String>),
    /// Only `NotIn`: every other zone stays allowed.
    NotIn(Vec<String>),
    /// `Exists`, `Gt`, …: names no zone.
    Operator(String),
}

/// The one zone `reqs` (ANDed, as Karpenter and a node selector term combine them) leave: one
/// pin per zone key that is left with one value (both when both are pinned).
pub fn pinned_zone(reqs: &[NodeSelectorRequirement]) -> Result<Vec<Pin>, ZoneProblem> {
    let (mut pins, mut several) = (Vec::new(), None);
    for key in ZONE_KEYS {
        match allowed_by_requirements(reqs, key) {
            Allowed::None => return Err(ZoneProblem::NoZone(key)),
            Allowed::Only(s) if s.len() == 1 => {
                pins.extend(s.into_iter().map(|value| Pin { key, value }))
            }
            Allowed::Only(s) => several = several.or(Some(s.into_iter().collect())),
            Allowed::Any => {}
        }
    }
    if !pins.is_empty() {
        return Ok(pins);
    }
    if let Some(values) = several {
        return Err(ZoneProblem::Several(values));
    }
    let on_zone: Vec<&NodeSelectorRequirement> = reqs
        .iter()
        .filter(|r| ZONE_KEYS.contains(&r.key.as_str()))
        .collect();
    match on_zone.iter().find(|r| r.operator != "NotIn") {
        Some(r) => Err(ZoneProblem::Operator(r.operator.clone())),
        None if on_zone.is_empty() => Err(ZoneProblem::NoRequirement),
        None => Err(ZoneProblem::NotIn(
            on_zone
                .iter()
                .flat_map(|r| r.values.iter().flatten().cloned())
                .collect(),
        )),
    }
}

/// The Region part of a zone name (`us-west-2a` → `us-west-2`) or of an AZ ID (`usw2-az1` →
/// `usw2`), by the label `key` it is the value of. None when the value has neither shape.
pub fn region_of<'a>(key: &str, zone: &'a str) -> Option<&'a str> {
    if key == ZONE_LABEL {
        let stem = zone.strip_suffix(|c: char| c.is_ascii_lowercase())?;
        return stem.ends_with(|c: char| c.is_ascii_digit()).then_some(stem);
    }
    let (stem, n) = zone.rsplit_once("-az")?;
    (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).then_some(stem)
}

/// Where a pinned zone stands among the nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnNodes {
    /// No node carries the pin's key (kind nodes have no AZ ID): nothing to compare with.
    Unlabelled,
    /// A node runs in the zone.
    Present,
    /// No node runs there, but it lies in a Region some node runs in (or one of its Local
    /// Zones): on EKS a pool may open a zone where no node runs yet.
    InRegion,
    /// Neither: the zone is of another Region, or no zone at all.
    Elsewhere,
}

/// The zones the nodes are in (`zones`, values of the pin's key) and their Regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneSeen {
    pub on_nodes: OnNodes,
    pub zones: BTreeSet<String>,
    pub regions: BTreeSet<String>,
}

/// Where `pin` stands among `nodes`.
pub fn on_nodes(pin: &Pin, nodes: &[&Obj]) -> ZoneSeen {
    let zones: BTreeSet<String> = nodes
        .iter()
        .filter_map(|n| n.label(pin.key))
        .map(str::to_string)
        .collect();
    let regions: BTreeSet<String> = zones
        .iter()
        .filter_map(|z| region_of(pin.key, z))
        .map(str::to_string)
        .collect();
    let in_region = region_of(pin.key, &pin.value).is_some_and(|r| {
        regions
            .iter()
            .any(|n| r == n || r.starts_with(&format!("{n}-")))
    });
    let on_nodes = match () {
        _ if zones.is_empty() => OnNodes::Unlabelled,
        _ if zones.contains(&pin.value) => OnNodes::Present,
        _ if in_region => OnNodes::InRegion,
        _ => OnNodes::Elsewhere,
    };
    ZoneSeen {
        on_nodes,
        zones,
        regions,
    }
}

/// With a zone name and an AZ ID both pinned: the AZ IDs of the nodes in the named zone, when
/// they show the ID is not that zone's (the two pins then leave no zone at all).
pub fn name_and_id_disagree(pins: &[Pin], nodes: &[&Obj]) -> Option<BTreeSet<String>> {
    let [name, id] = pins else {
        return None;
    };
    let ids: BTreeSet<String> = nodes
        .iter()
        .filter(|n| n.label(name.key) == Some(name.value.as_str()))
        .filter_map(|n| n.label(id.key))
        .map(str::to_string)
        .collect();
    (!ids.is_empty() && !ids.contains(&id.value)).then_some(ids)
}

/// Whether the pools or node groups a pod spec selects keep its pods in one zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confined {
    /// The spec selects no NodePool or node group by name.
    NotSelected,
    /// One zone (`us-west-2a`, or an AZ ID a pool pins), and the selection that keeps the pods
    /// there (`karpenter.sh/nodepool: gpu-training`).
    OneZone { zone: String, by: String },
    /// The selection allows several zones (`zones`; empty: a NodePool that pins none).
    Several { by: String, zones: Vec<String> },
    /// What the selection leads to cannot be seen: a NodePool that was not read (static mode
    /// without its manifest) and no node of the selection.
    Unseen { by: String },
}

/// Whether `spec`'s node selection on [`NODEPOOL_LABEL`] or a [`NODE_GROUP_LABELS`] key keeps
/// its pods in one zone: every selected NodePool's requirements pin the same one zone (kit
/// [`pinned_zone`]); else (a pool not among `pools`, a node group) every node carrying the
/// selection sits in one zone. `pools` are the NodePools read, parsed only when selected (a
/// room's cluster-wide list holds every learner's pools: parsing them all for each learner cost
/// a second per thousand learners); one that does not parse counts as not read. `nodes` are the
/// cluster's nodes (empty in static mode).
pub fn confined(spec: &PodSpec, pools: &[&Obj], nodes: &[&NodeFacts]) -> Confined {
    let keys = std::iter::once(NODEPOOL_LABEL).chain(NODE_GROUP_LABELS);
    let Some((key, names)) = keys
        .into_iter()
        .find_map(|k| match allowed_values(spec, k) {
            Allowed::Only(set) => Some((k, set)),
            _ => None,
        })
    else {
        return Confined::NotSelected;
    };
    let listed: Vec<&str> = names.iter().map(String::as_str).collect();
    let by = format!("{key}: {}", listed.join(", "));
    if key == NODEPOOL_LABEL {
        let found: Vec<NodePool> = names
            .iter()
            .filter_map(|n| pools.iter().find(|o| o.name() == n))
            .filter_map(|o| NodePool::from_obj(o).ok())
            .collect();
        if found.len() == names.len() {
            return pools_zone(&found.iter().collect::<Vec<_>>(), by);
        }
    }
    nodes_zone(key, &names, nodes, by)
}

/// The one zone all these pools pin, by zone name (else AZ ID).
fn pools_zone(pools: &[&NodePool], by: String) -> Confined {
    let mut zones: BTreeSet<String> = BTreeSet::new();
    for pool in pools {
        match pinned_zone(&pool.selector_requirements()) {
            Ok(pins) => {
                let pin = pins
                    .iter()
                    .find(|p| p.key == ZONE_LABEL)
                    .unwrap_or(&pins[0]);
                zones.insert(pin.value.clone());
            }
            Err(ZoneProblem::Several(values)) => zones.extend(values),
            Err(_) => {
                return Confined::Several {
                    by,
                    zones: Vec::new(),
                }
            }
        }
    }
    match zones.len() {
        1 => Confined::OneZone {
            zone: zones.into_iter().next().unwrap_or_default(),
            by,
        },
        _ => Confined::Several {
            by,
            zones: zones.into_iter().collect(),
        },
    }
}

/// The one zone every node carrying one of `names` on `key` sits in.
fn nodes_zone(key: &str, names: &BTreeSet<String>, nodes: &[&NodeFacts], by: String) -> Confined {
    let selected: Vec<&&NodeFacts> = nodes
        .iter()
        .filter(|n| n.labels.get(key).is_some_and(|v| names.contains(v)))
        .collect();
    let zones: Option<BTreeSet<&str>> = selected.iter().map(|n| n.zone.as_deref()).collect();
    match zones {
        Some(z) if z.len() == 1 => Confined::OneZone {
            zone: z.iter().next().copied().unwrap_or_default().to_string(),
            by,
        },
        Some(z) if z.len() > 1 => Confined::Several {
            by,
            zones: z.into_iter().map(str::to_string).collect(),
        },
        // No node of the selection (static mode, a group scaled to zero) or one without a zone.
        _ => Confined::Unseen { by },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn node(zone: &str, id: Option<&str>) -> Obj {
        let mut labels = serde_json::json!({ ZONE_LABEL: zone });
        if let Some(id) = id {
            labels[ZONE_ID_LABEL] = id.into();
        }
        Obj::new(
            serde_json::json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": zone, "labels": labels}}),
            Origin::Live,
        )
        .unwrap()
    }

    fn pin(key: &'static str, value: &str) -> Pin {
        Pin {
            key,
            value: value.into(),
        }
    }

    #[test]
    fn any_arrangement_that_leaves_one_zone_pins_it() {
        let a = "us-west-2a";
        let cases = [
            vec![req(ZONE_LABEL, "In", &[a])],
            vec![
                req(ZONE_LABEL, "In", &[a, "us-west-2b"]),
                req(ZONE_LABEL, "NotIn", &["us-west-2b"]),
            ],
            vec![
                req(ZONE_LABEL, "In", &[a, "us-west-2b"]),
                req(ZONE_LABEL, "In", &[a, "us-west-2c"]),
            ],
        ];
        for reqs in cases {
            assert_eq!(pinned_zone(&reqs), Ok(vec![pin(ZONE_LABEL, a)]), "{reqs:?}");
        }
        let by_id = [req(ZONE_ID_LABEL, "In", &["usw2-az1"])];
        assert_eq!(
            pinned_zone(&by_id),
            Ok(vec![pin(ZONE_ID_LABEL, "usw2-az1")])
        );
        let both = [req(ZONE_LABEL, "In", &[a]), by_id[0].clone()];
        assert_eq!(pinned_zone(&both).unwrap().len(), 2);
    }

    #[test]
    fn requirements_that_leave_no_single_zone_say_why() {
        use ZoneProblem::*;
        assert_eq!(pinned_zone(&[]), Err(NoRequirement));
        let other = [req("kubernetes.io/arch", "In", &["amd64"])];
        assert_eq!(pinned_zone(&other), Err(NoRequirement));
        let contradict = [req(ZONE_LABEL, "In", &["a"]), req(ZONE_LABEL, "In", &["b"])];
        assert_eq!(pinned_zone(&contradict), Err(NoZone(ZONE_LABEL)));
        let two = [req(ZONE_LABEL, "In", &["a", "b"])];
        assert_eq!(
            pinned_zone(&two),
            Err(Several(vec!["a".into(), "b".into()]))
        );
        let not_in = [req(ZONE_LABEL, "NotIn", &["b", "c"])];
        assert_eq!(
            pinned_zone(&not_in),
            Err(NotIn(vec!["b".into(), "c".into()]))
        );
        let exists = [req(ZONE_LABEL, "Exists", &[])];
        assert_eq!(pinned_zone(&exists), Err(Operator("Exists".into())));
    }

    #[test]
    fn the_region_part_of_zone_names_and_az_ids() {
        assert_eq!(region_of(ZONE_LABEL, "us-west-2a"), Some("us-west-2"));
        assert_eq!(
            region_of(ZONE_LABEL, "us-west-2-lax-1a"),
            Some("us-west-2-lax-1")
        );
        assert_eq!(region_of(ZONE_LABEL, "us-west-2"), None);
        assert_eq!(region_of(ZONE_LABEL, "usw2-az1"), None);
        assert_eq!(region_of(ZONE_ID_LABEL, "usw2-az4"), Some("usw2"));
        assert_eq!(region_of(ZONE_ID_LABEL, "usw2-lax1-az1"), Some("usw2-lax1"));
        assert_eq!(region_of(ZONE_ID_LABEL, "usw2-az"), None);
        assert_eq!(region_of(ZONE_ID_LABEL, "us-west-2a"), None);
    }

    #[test]
    fn a_zone_is_on_the_nodes_in_their_region_or_elsewhere() {
        let (a, b) = (
            node("us-west-2a", Some("usw2-az1")),
            node("us-west-2b", None),
        );
        let nodes = [&a, &b];
        let seen = |key, value| on_nodes(&pin(key, value), &nodes).on_nodes;
        assert_eq!(seen(ZONE_LABEL, "us-west-2a"), OnNodes::Present);
        assert_eq!(seen(ZONE_LABEL, "us-west-2c"), OnNodes::InRegion);
        assert_eq!(seen(ZONE_LABEL, "us-west-2-lax-1a"), OnNodes::InRegion);
        assert_eq!(seen(ZONE_LABEL, "us-east-1a"), OnNodes::Elsewhere);
        assert_eq!(seen(ZONE_ID_LABEL, "usw2-az2"), OnNodes::InRegion);
        let kind = node("kind-zone-a", None);
        let s = on_nodes(&pin(ZONE_ID_LABEL, "usw2-az1"), &[&kind]);
        assert_eq!(s.on_nodes, OnNodes::Unlabelled);
        let s = on_nodes(&pin(ZONE_LABEL, "us-west-2c"), &nodes);
        assert_eq!(s.regions, BTreeSet::from(["us-west-2".to_string()]));
    }

    #[test]
    fn a_zone_name_and_an_az_id_of_different_zones_disagree() {
        let a = node("us-west-2a", Some("usw2-az1"));
        let pins = [
            pin(ZONE_LABEL, "us-west-2a"),
            pin(ZONE_ID_LABEL, "usw2-az2"),
        ];
        assert_eq!(
            name_and_id_disagree(&pins, &[&a]),
            Some(BTreeSet::from(["usw2-az1".to_string()]))
        );
        let same = [
            pin(ZONE_LABEL, "us-west-2a"),
            pin(ZONE_ID_LABEL, "usw2-az1"),
        ];
        assert_eq!(name_and_id_disagree(&same, &[&a]), None);
        assert_eq!(name_and_id_disagree(&pins[..1], &[&a]), None);
    }

    fn pool(name: &str, reqs: serde_json::Value) -> Obj {
        Obj::new(
            serde_json::json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                "metadata": {"name": name},
                "spec": {"template": {"spec": {"requirements": reqs}}}}),
            Origin::Live,
        )
        .unwrap()
    }

    fn selecting(key: &str, value: &str) -> PodSpec {
        serde_json::from_value(serde_json::json!({"containers": [],
            "nodeSelector": {key: value}}))
        .unwrap()
    }

    fn facts(name: &str, zone: &str, label: (&str, &str)) -> NodeFacts {
        let o = Obj::new(
            serde_json::json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {ZONE_LABEL: zone, label.0: label.1}}}),
            Origin::Live,
        )
        .unwrap();
        NodeFacts::from_obj(&o).unwrap()
    }

    #[test]
    fn a_pod_on_a_one_zone_node_pool_is_confined_to_that_zone() {
        let one = pool(
            "gpu-training",
            serde_json::json!([{"key": ZONE_LABEL, "operator": "In", "values": ["us-west-2a"]}]),
        );
        let spec = selecting(NODEPOOL_LABEL, "gpu-training");
        let pools = [&one];
        assert_eq!(
            confined(&spec, &pools, &[]),
            Confined::OneZone {
                zone: "us-west-2a".into(),
                by: "karpenter.sh/nodepool: gpu-training".into()
            }
        );
        let two = pool(
            "gpu-training",
            serde_json::json!([{"key": ZONE_LABEL, "operator": "In",
                "values": ["us-west-2a", "us-west-2b"]}]),
        );
        let spread = [&two];
        assert!(matches!(
            confined(&spec, &spread, &[]),
            Confined::Several { zones, .. } if zones == ["us-west-2a", "us-west-2b"]
        ));
        let any_zone = pool("gpu-training", serde_json::json!([]));
        let any = [&any_zone];
        assert!(
            matches!(confined(&spec, &any, &[]), Confined::Several { zones, .. } if zones.is_empty())
        );
        // Two pools pinning different zones allow both.
        let (a, b) = (
            pool(
                "a",
                serde_json::json!([{"key": ZONE_LABEL, "operator": "In", "values": ["us-west-2a"]}]),
            ),
            pool(
                "b",
                serde_json::json!([{"key": ZONE_LABEL, "operator": "In", "values": ["us-west-2c"]}]),
            ),
        );
        let spec2: PodSpec = serde_json::from_value(serde_json::json!({"containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": NODEPOOL_LABEL,
                    "operator": "In", "values": ["a", "b"]}]}]}}}}))
        .unwrap();
        let both = [&a, &b];
        assert!(matches!(
            confined(&spec2, &both, &[]),
            Confined::Several { .. }
        ));
    }

    #[test]
    fn an_unread_pool_or_a_node_group_is_judged_by_its_nodes() {
        let spec = selecting(NODEPOOL_LABEL, "gpu-training");
        assert_eq!(
            confined(&spec, &[], &[]),
            Confined::Unseen {
                by: "karpenter.sh/nodepool: gpu-training".into()
            }
        );
        let ng = NODE_GROUP_LABELS[0];
        let (a, b) = (
            facts("a", "us-west-2a", (ng, "p5")),
            facts("b", "us-west-2a", (ng, "p5")),
        );
        let other = facts("c", "us-west-2b", (ng, "cpu"));
        let spec = selecting(ng, "p5");
        assert_eq!(
            confined(&spec, &[], &[&a, &b, &other]),
            Confined::OneZone {
                zone: "us-west-2a".into(),
                by: format!("{ng}: p5")
            }
        );
        let c = facts("c", "us-west-2b", (ng, "p5"));
        assert!(matches!(
            confined(&spec, &[], &[&a, &c]),
            Confined::Several { zones, .. } if zones == ["us-west-2a", "us-west-2b"]
        ));
        assert_eq!(
            confined(&selecting("x", "y"), &[], &[&a]),
            Confined::NotSelected
        );
    }
}
