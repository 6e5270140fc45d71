//! Where a workload's pods land: the nodes they were bound to (waiting until every pod is
//! bound), whether those nodes have what the pods ask for and share one zone, whether an
//! unschedulable pod's own constraints keep it off every node, and, before any pod exists,
//! whether a template keeps its pods in one zone at all.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{PodAffinityTerm, PodSpec};

use crate::facts::instances::{self, EFA, GPU, NEURON, NEURONCORE};
use crate::facts::{NodeFacts, Profile};
use crate::verify::kit::k8s::placement::{self, Allowed};
use crate::verify::kit::k8s::pods::PodState;
use crate::verify::kit::k8s::quantity::Quantity;
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::selector::{Selector, SelectorError};
use crate::verify::kit::nodes::zones::ZONE_KEYS;
use crate::verify::{Outcome, Reason};

/// What the placement rules read of a pod: its name and the node it was bound to.
pub trait Placed {
    fn pod_name(&self) -> &str;
    fn bound_to(&self) -> Option<&str>;
}

impl Placed for PodState {
    fn pod_name(&self) -> &str {
        &self.name
    }
    fn bound_to(&self) -> Option<&str> {
        self.node.as_deref()
    }
}

/// Why the pods' nodes cannot be judged yet (or any more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// The workload finished and its pods were deleted.
    Gone,
    /// Fewer pods than run at once.
    Waiting { found: usize, expected: usize },
    /// Pods not bound to a node yet.
    NotBound(Vec<String>),
    /// A pod bound to a node the cluster does not list.
    NodeMissing { pod: String, node: String },
}

impl Gate {
    /// Skipped message `pods-gone`; pending messages `no-pods` (evidence `found`, `expected`),
    /// `not-bound` (`pods`), `node-missing` (`pod`, `node`).
    pub fn outcome(&self, check: &str) -> Outcome {
        let msg = |id: &str| Reason::Message(id.into());
        match self {
            Gate::Gone => Outcome::skipped(check, msg("pods-gone")),
            Gate::Waiting { found, expected } => Outcome::pending(check, msg("no-pods"))
                .with("found", found)
                .with("expected", expected),
            Gate::NotBound(pods) => {
                Outcome::pending(check, msg("not-bound")).with("pods", pods.join(", "))
            }
            Gate::NodeMissing { pod, node } => Outcome::pending(check, msg("node-missing"))
                .with("pod", pod)
                .with("node", node),
        }
    }
}

/// The pods bound to a node the cluster lists, with that node.
pub fn on_nodes<'p, 'n, P: Placed>(
    pods: &'p [P],
    nodes: &'n [NodeFacts],
) -> Vec<(&'p P, &'n NodeFacts)> {
    let node = |p: &P| {
        let name = p.bound_to();
        nodes.iter().find(|n| name == Some(n.name.as_str()))
    };
    pods.iter().filter_map(|p| Some((p, node(p)?))).collect()
}

/// Every pod that runs at once (`expected`) exists and is bound to a listed node: the pairs,
/// else why not. `finished`: the workload completed, so missing pods were cleaned up.
pub fn bound<'p, 'n, P: Placed>(
    pods: &'p [P],
    nodes: &'n [NodeFacts],
    expected: usize,
    finished: bool,
) -> Result<Vec<(&'p P, &'n NodeFacts)>, Gate> {
    let unbound: Vec<String> = pods
        .iter()
        .filter(|p| p.bound_to().is_none())
        .map(|p| p.pod_name().to_string())
        .collect();
    let pairs = on_nodes(pods, nodes);
    if pods.is_empty() && finished {
        return Err(Gate::Gone);
    }
    if pods.len() < expected {
        let found = pods.len();
        return Err(Gate::Waiting { found, expected });
    }
    if !unbound.is_empty() {
        return Err(Gate::NotBound(unbound));
    }
    let placed = |p: &P| pairs.iter().any(|(b, _)| b.pod_name() == p.pod_name());
    if let Some(p) = pods.iter().find(|p| !placed(p)) {
        let node = p.bound_to().unwrap_or_default().to_string();
        let pod = p.pod_name().to_string();
        return Err(Gate::NodeMissing { pod, node });
    }
    Ok(pairs)
}

/// Pods whose node's allocatable `resource` is below what they ask (at least 1), as
/// `pod → node: resource have < want`, and the largest count asked (at least 1).
pub fn short_of<P: Placed>(
    bound: &[(&P, &NodeFacts)],
    resource: &str,
    asks: impl Fn(&P) -> i64,
) -> (i64, Vec<String>) {
    let mut bad = Vec::new();
    let mut most = 1;
    for (p, n) in bound {
        let (have, want) = (n.allocatable(resource), asks(p).max(1));
        most = most.max(want);
        if have < want {
            let (pod, node) = (p.pod_name(), &n.name);
            bad.push(format!("{pod} → {node}: {resource} {have} < {want}"));
        }
    }
    (most, bad)
}

/// The zones of the bound pods' nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Zones {
    /// One zone (empty: no pod bound).
    One(String),
    /// Several: `pod → node (zone), …`.
    Apart(String),
    /// A node without the zone label: zones cannot be compared.
    Unlabelled(String),
}

pub fn zones<P: Placed>(bound: &[(&P, &NodeFacts)]) -> Zones {
    let mut seen = BTreeSet::new();
    let mut placed = Vec::new();
    for (p, n) in bound {
        let Some(z) = &n.zone else {
            return Zones::Unlabelled(n.name.clone());
        };
        placed.push(format!("{} → {} ({z})", p.pod_name(), n.name));
        seen.insert(z.clone());
    }
    match seen.len() {
        0 | 1 => Zones::One(seen.into_iter().collect()),
        _ => Zones::Apart(placed.join(", ")),
    }
}

/// Whether a pod's own constraints keep it off every node: no listed node, even empty, may
/// take it (placement, then resources). On EKS an autoscaler may add nodes, so there only
/// requests that no allowed instance type can hold (per the facts table) count.
pub fn fits_nowhere(
    spec: &PodSpec,
    requests: &BTreeMap<String, Quantity>,
    nodes: &[NodeFacts],
    profile: Profile,
) -> bool {
    let fits = |n: &NodeFacts| {
        placement::may_use(spec, n)
            && resources::shortfalls(requests, &n.allocatable_exact).is_empty()
    };
    if nodes.iter().any(fits) {
        return false;
    }
    if profile == Profile::Kind {
        return true;
    }
    let Allowed::Only(types) = placement::allowed_values(spec, instances::INSTANCE_TYPE_LABEL)
    else {
        return false;
    };
    let want = |r: &str| requests.get(r).and_then(|q| q.count().ok()).unwrap_or(0);
    let too_big = |i: &instances::Instance| {
        let table = [
            (GPU, i.gpus),
            (EFA, i.efa),
            (NEURON, i.neuron),
            (NEURONCORE, i.neuroncores),
        ];
        table.iter().any(|(r, has)| want(r) > i64::from(*has))
    };
    types
        .iter()
        .all(|t| instances::lookup(t).is_some_and(too_big))
}

/// How a pod template keeps its pods in one zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OneZone {
    /// `nodeSelector` or required node affinity allows one value of a zone key.
    Pinned(String),
    /// A required pod affinity on a zone key that selects the pods themselves.
    PodAffinity,
    /// Several zones allowed.
    Several(BTreeSet<String>),
    /// `nodeSelector` and required node affinity leave no zone.
    Contradictory,
    /// Required pod affinities on a zone key select other pods (their selectors).
    AffinityOnOthers(Vec<String>),
    /// Only preferred terms mention a zone key.
    PreferredOnly,
    Unconstrained,
}

/// The template's answer to "are both pods in one zone?" before any pod exists. `own`: the
/// labels its pods will carry; `namespace`: theirs. Either zone key counts (kit
/// `zones::ZONE_KEYS`: the zone name or the AZ ID).
pub fn template_keeps_one_zone(
    spec: &PodSpec,
    own: &BTreeMap<String, String>,
    namespace: &str,
) -> Result<OneZone, SelectorError> {
    let allowed: Vec<Allowed> = ZONE_KEYS
        .iter()
        .map(|k| placement::allowed_values(spec, k))
        .collect();
    for a in &allowed {
        if let Allowed::Only(set) = a {
            if set.len() == 1 {
                return Ok(OneZone::Pinned(set.iter().cloned().collect()));
            }
        }
    }
    if allowed.contains(&Allowed::None) {
        return Ok(OneZone::Contradictory);
    }
    if let Some(Allowed::Only(set)) = allowed.into_iter().find(|a| *a != Allowed::Any) {
        return Ok(OneZone::Several(set));
    }
    let zone_key = |k: &str| ZONE_KEYS.contains(&k);
    let pa = spec.affinity.as_ref().and_then(|a| a.pod_affinity.as_ref());
    let required = pa.and_then(|p| {
        p.required_during_scheduling_ignored_during_execution
            .as_ref()
    });
    let mut others = Vec::new();
    for t in required
        .into_iter()
        .flatten()
        .filter(|t| zone_key(&t.topology_key))
    {
        let sel = Selector::from_label_selector(t.label_selector.as_ref())?;
        if sel.matches(own) && in_namespace(t, namespace)? {
            return Ok(OneZone::PodAffinity);
        }
        others.push(sel.to_string());
    }
    if !others.is_empty() {
        return Ok(OneZone::AffinityOnOthers(others));
    }
    let preferred_pod = pa
        .and_then(|p| {
            p.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .any(|w| zone_key(&w.pod_affinity_term.topology_key));
    let na = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref());
    let preferred_node = na
        .and_then(|n| {
            n.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .flat_map(|p| p.preference.match_expressions.iter().flatten())
        .any(|e| zone_key(&e.key));
    Ok(if preferred_pod || preferred_node {
        OneZone::PreferredOnly
    } else {
        OneZone::Unconstrained
    })
}

/// core/v1 PodAffinityTerm: no namespaces and no namespaceSelector mean the pod's own
/// namespace; a namespaceSelector is matched against the namespace's
/// `kubernetes.io/metadata.name` label, which the API server sets on every namespace.
pub fn in_namespace(t: &PodAffinityTerm, namespace: &str) -> Result<bool, SelectorError> {
    let listed = t.namespaces.as_deref().unwrap_or_default();
    let Some(ns_sel) = &t.namespace_selector else {
        return Ok(listed.is_empty() || listed.iter().any(|n| n == namespace));
    };
    let sel = Selector::from_label_selector(Some(ns_sel))?;
    let ns = BTreeMap::from([(
        "kubernetes.io/metadata.name".to_string(),
        namespace.to_string(),
    )]);
    Ok(listed.iter().any(|n| n == namespace) || sel.matches(&ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::instances::ZONE_LABEL;
    use crate::observe::Obj;
    use crate::verify::kit::k8s::pods::pod_states;
    use crate::verify::kit::nodes::zones::ZONE_ID_LABEL;
    use serde_json::{json, Value};

    fn obj(v: Value) -> Obj {
        Obj::test(v)
    }

    fn node(name: &str, zone: Option<&str>, efa: &str) -> Obj {
        let mut labels = json!({"node.kubernetes.io/instance-type": "p5.48xlarge"});
        if let Some(z) = zone {
            labels[ZONE_LABEL] = json!(z);
        }
        obj(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "191450m", EFA: efa, GPU: "8"}}}))
    }

    fn pod(name: &str, node: Option<&str>) -> PodState {
        let p = obj(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c"}]},
            "status": {"phase": "Running"}}),
        );
        pod_states(&[&p]).unwrap().remove(0)
    }

    fn spec(v: Value) -> PodSpec {
        serde_json::from_value(v).unwrap()
    }

    fn nodes(objs: &[Obj]) -> Vec<NodeFacts> {
        NodeFacts::all(&objs.iter().collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn every_pod_must_be_bound_to_a_listed_node_before_nodes_are_judged() {
        let ns = nodes(&[node("a", Some("z1"), "32"), node("b", Some("z2"), "0")]);
        assert_eq!(
            bound::<PodState>(&[], &ns, 2, true).unwrap_err(),
            Gate::Gone
        );
        let one = [pod("p0", Some("a"))];
        let want = Gate::Waiting {
            found: 1,
            expected: 2,
        };
        assert_eq!(bound(&one, &ns, 2, false).unwrap_err(), want);
        let ps = [pod("p0", Some("a")), pod("p1", None)];
        assert_eq!(
            bound(&ps, &ns, 2, false).unwrap_err(),
            Gate::NotBound(vec!["p1".into()])
        );
        let ps = [pod("p0", Some("a")), pod("p1", Some("gone"))];
        let gate = bound(&ps, &ns, 2, false).unwrap_err();
        assert_eq!(
            gate,
            Gate::NodeMissing {
                pod: "p1".into(),
                node: "gone".into()
            }
        );
        assert_eq!(gate.outcome("c").evidence["node"], "gone");
        let ps = [pod("p0", Some("a")), pod("p1", Some("b"))];
        let b = bound(&ps, &ns, 2, false).unwrap();
        assert_eq!(
            short_of(&b, EFA, |_| 32),
            (32, vec!["p1 → b: vpc.amazonaws.com/efa 0 < 32".into()])
        );
        assert_eq!(zones(&b), Zones::Apart("p0 → a (z1), p1 → b (z2)".into()));
        let ps = [pod("p0", Some("a")), pod("p1", Some("a"))];
        assert_eq!(
            zones(&bound(&ps, &ns, 2, false).unwrap()),
            Zones::One("z1".into())
        );
        let ns = nodes(&[node("a", None, "32")]);
        assert_eq!(
            zones(&bound(&ps, &ns, 2, false).unwrap()),
            Zones::Unlabelled("a".into())
        );
    }

    #[test]
    fn a_pod_fits_nowhere_only_by_its_own_constraints() {
        let ns = nodes(&[node("a", Some("z1"), "32")]);
        let s = spec(
            json!({"nodeSelector": {ZONE_LABEL: "z9", "node.kubernetes.io/instance-type": "p5.48xlarge"},
            "containers": [{"name": "c", "resources": {"limits": {EFA: "32"}}}]}),
        );
        let req = resources::pod_requests(&s).unwrap();
        assert!(fits_nowhere(&s, &req, &ns, Profile::Kind));
        // An autoscaler may add a p5 in z9.
        assert!(!fits_nowhere(&s, &req, &ns, Profile::Eks));
        let big = spec(
            json!({"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
            "containers": [{"name": "c", "resources": {"limits": {EFA: "64"}}}]}),
        );
        let req = resources::pod_requests(&big).unwrap();
        assert!(fits_nowhere(&big, &req, &ns, Profile::Eks));
        let ok = spec(json!({"containers": [{"name": "c", "resources": {"limits": {EFA: "32"}}}]}));
        let req = resources::pod_requests(&ok).unwrap();
        assert!(!fits_nowhere(&ok, &req, &ns, Profile::Kind));
    }

    #[test]
    fn one_zone_by_selector_zone_id_or_own_pod_affinity() {
        let own = BTreeMap::from([("app".to_string(), "nccl".to_string())]);
        let one = |v: Value| template_keeps_one_zone(&spec(v), &own, "ns").unwrap();
        assert_eq!(
            one(json!({"containers": [], "nodeSelector": {ZONE_LABEL: "a"}})),
            OneZone::Pinned("a".into())
        );
        assert_eq!(
            one(json!({"containers": [], "nodeSelector": {ZONE_ID_LABEL: "usw2-az1"}})),
            OneZone::Pinned("usw2-az1".into())
        );
        let two = json!({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["a", "b"]}]}]}}}});
        assert!(matches!(one(two), OneZone::Several(s) if s.len() == 2));
        let pa = |sel: Value, ns: Value| {
            json!({"containers": [], "affinity": {"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": ZONE_ID_LABEL,
                "labelSelector": {"matchLabels": sel}, "namespaces": ns}]}}})
        };
        assert_eq!(
            one(pa(json!({"app": "nccl"}), json!([]))),
            OneZone::PodAffinity
        );
        assert!(matches!(
            one(pa(json!({"app": "db"}), json!([]))),
            OneZone::AffinityOnOthers(_)
        ));
        assert!(matches!(
            one(pa(json!({"app": "nccl"}), json!(["other"]))),
            OneZone::AffinityOnOthers(_)
        ));
        let preferred = json!({"containers": [], "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 1, "preference": {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["a"]}]}}]}}});
        assert_eq!(one(preferred), OneZone::PreferredOnly);
        assert_eq!(one(json!({"containers": []})), OneZone::Unconstrained);
        let clash = json!({"containers": [], "nodeSelector": {ZONE_LABEL: "a"}, "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": ZONE_LABEL, "operator": "In", "values": ["b"]}]}]}}}});
        assert_eq!(one(clash), OneZone::Contradictory);
    }
}
