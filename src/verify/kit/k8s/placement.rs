//! Which nodes a pod spec may be placed on, resources aside: `nodeSelector`, required node
//! affinity, taints and tolerations, and cordoned nodes. Also, without any node at hand (static
//! mode), which values a node label may take for the pod ([`allowed_values`]).
//!
//! Rules, after kube-scheduler's filters and the helpers they call:
//! - `nodeSelector`: every pair must be a node label (`RequiredNodeAffinity`,
//!   k8s.io/component-helpers `scheduling/corev1/nodeaffinity/nodeaffinity.go`).
//! - required node affinity: the `nodeSelectorTerms` are ORed; a term's `matchExpressions` and
//!   `matchFields` are ANDed; an empty term matches no node; a term whose requirements are invalid
//!   (unknown operator, `In` without values, `Gt` with a non-integer, …) matches no node, as the
//!   lazy parse errors of `LazyErrorNodeSelector` do; `matchFields` supports In/NotIn with one
//!   value, on the node field `metadata.name`. Operators In, NotIn, Exists, DoesNotExist, Gt, Lt
//!   reuse [`crate::verify::kit::k8s::selector::Requirement`] (the same `labels.NewRequirement` rules).
//! - taints: a node's `NoSchedule` and `NoExecute` taints must each be tolerated;
//!   `PreferNoSchedule` never blocks (`TaintToleration` filter,
//!   kubernetes `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`).
//!   Matching is `Toleration.ToleratesTaint` (k8s.io/api `core/v1/toleration.go`): an empty
//!   effect matches every effect, an empty key matches every key, `Exists` matches every value,
//!   `Equal` (or no operator) compares values. The alpha `Gt`/`Lt` toleration operators
//!   (TaintTolerationComparisonOperators, off by default) never match.
//! - cordoned (`spec.unschedulable: true`): refused unless the pod tolerates
//!   `node.kubernetes.io/unschedulable:NoSchedule` (`NodeUnschedulable` filter,
//!   `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`).
//!
//! `spec.nodeName` (a pod bound by hand) and pod (anti-)affinity are not evaluated here.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Node, NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Taint, Toleration,
};

use crate::verify::kit::k8s::selector::{Operator, Requirement};

/// `node.kubernetes.io/unschedulable` (k8s.io/api `core/v1/well_known_taints.go`).
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// The node field `matchFields` can select on (`extractNodeFields`).
pub const FIELD_NODE_NAME: &str = "metadata.name";

/// What placement reads from a node. Implemented for `core/v1` [`Node`].
pub trait NodeInfo {
    fn node_name(&self) -> &str;
    fn node_labels(&self) -> &BTreeMap<String, String>;
    fn node_taints(&self) -> &[Taint];
    /// `spec.unschedulable` (cordoned).
    fn is_cordoned(&self) -> bool;
}

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

impl NodeInfo for Node {
    fn node_name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn node_labels(&self) -> &BTreeMap<String, String> {
        self.metadata.labels.as_ref().unwrap_or(&NO_LABELS)
    }
    fn node_taints(&self) -> &[Taint] {
        self.spec
            .as_ref()
            .and_then(|s| s.taints.as_deref())
            .unwrap_or(&[])
    }
    fn is_cordoned(&self) -> bool {
        self.spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false)
    }
}

impl NodeInfo for crate::facts::NodeFacts {
    fn node_name(&self) -> &str {
        &self.name
    }
    fn node_labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }
    fn node_taints(&self) -> &[Taint] {
        &self.taints
    }
    fn is_cordoned(&self) -> bool {
        self.unschedulable
    }
}

/// Why a node is refused, in the scheduler's filter order.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// `spec.unschedulable` and no toleration for it.
    Cordoned,
    /// A `nodeSelector` pair the node lacks (`found`: the node's value, if any).
    NodeSelector {
        key: String,
        wanted: String,
        found: Option<String>,
    },
    /// No required node affinity term matches.
    NodeAffinity,
    /// A `NoSchedule`/`NoExecute` taint no toleration tolerates.
    Taint(Taint),
}

/// Every reason the node is refused; empty when the pod may be placed there (resources aside).
pub fn refusals(spec: &PodSpec, node: &impl NodeInfo) -> Vec<Refusal> {
    let mut out = Vec::new();
    let tolerations = spec.tolerations.as_deref().unwrap_or(&[]);
    if node.is_cordoned() && !tolerates_unschedulable(tolerations) {
        out.push(Refusal::Cordoned);
    }
    let labels = node.node_labels();
    for (k, v) in spec.node_selector.iter().flatten() {
        if labels.get(k) != Some(v) {
            out.push(Refusal::NodeSelector {
                key: k.clone(),
                wanted: v.clone(),
                found: labels.get(k).cloned(),
            });
        }
    }
    if !required_affinity_matches(spec, node) {
        out.push(Refusal::NodeAffinity);
    }
    out.extend(
        untolerated_taints(tolerations, node.node_taints())
            .into_iter()
            .cloned()
            .map(Refusal::Taint),
    );
    out
}

/// The nodes a pod template may use (resources aside), read from the cluster's node objects:
/// the one rule behind "the accelerator nodes a pod may use" (GPU nodes, Trainium nodes).
pub fn usable_nodes(
    spec: &PodSpec,
    nodes: &[crate::facts::NodeFacts],
) -> Vec<crate::facts::NodeFacts> {
    nodes
        .iter()
        .filter(|n| may_use(spec, *n))
        .cloned()
        .collect()
}

/// Whether the pod may be placed on the node (resources aside).
pub fn may_use(spec: &PodSpec, node: &impl NodeInfo) -> bool {
    refusals(spec, node).is_empty()
}

/// `tolerations` tolerating the taint a cordoned node carries.
fn tolerates_unschedulable(tolerations: &[Toleration]) -> bool {
    let taint = Taint {
        key: TAINT_UNSCHEDULABLE.into(),
        effect: "NoSchedule".into(),
        ..Default::default()
    };
    tolerations.iter().any(|t| tolerates(t, &taint))
}

/// `Toleration.ToleratesTaint`.
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    let effect = t.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = t.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match t.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            t.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// Whether a taint keeps pods off (NoSchedule, NoExecute), as the TaintToleration filter asks.
pub fn taint_blocks_scheduling(taint: &Taint) -> bool {
    taint.effect == "NoSchedule" || taint.effect == "NoExecute"
}

/// The blocking taints no toleration tolerates.
pub fn untolerated_taints<'a>(tolerations: &[Toleration], taints: &'a [Taint]) -> Vec<&'a Taint> {
    taints
        .iter()
        .filter(|t| taint_blocks_scheduling(t))
        .filter(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
        .collect()
}

/// `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`, or
/// None when no required node affinity is set.
pub fn required_terms(spec: &PodSpec) -> Option<&[NodeSelectorTerm]> {
    spec.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .map(|s| s.node_selector_terms.as_slice())
}

/// Required node affinity holds: none is set, or some term matches (an empty term list, which
/// the API server refuses anyway, matches nothing).
pub fn required_affinity_matches(spec: &PodSpec, node: &impl NodeInfo) -> bool {
    match required_terms(spec) {
        None => true,
        Some(terms) => terms.iter().any(|t| term_matches(t, node)),
    }
}

/// A parsed node selector term, or None when it matches nothing (empty or invalid).
struct ParsedTerm {
    labels: Vec<Requirement>,
    fields: Vec<(String, bool, String)>,
}

fn label_requirement(e: &NodeSelectorRequirement) -> Option<Requirement> {
    let op = Operator::from_node_selector(&e.operator)?;
    Requirement::new(&e.key, op, e.values.clone().unwrap_or_default()).ok()
}

/// `nodeSelectorRequirementsAsFieldSelector`: In/NotIn with exactly one value. `(key, equal, value)`.
fn field_requirement(e: &NodeSelectorRequirement) -> Option<(String, bool, String)> {
    let values = e.values.as_deref().unwrap_or(&[]);
    let [value] = values else { return None };
    match e.operator.as_str() {
        "In" => Some((e.key.clone(), true, value.clone())),
        "NotIn" => Some((e.key.clone(), false, value.clone())),
        _ => None,
    }
}

fn parse_term(t: &NodeSelectorTerm) -> Option<ParsedTerm> {
    let exprs = t.match_expressions.as_deref().unwrap_or(&[]);
    let fields = t.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return None;
    }
    Some(ParsedTerm {
        labels: exprs.iter().map(label_requirement).collect::<Option<_>>()?,
        fields: fields
            .iter()
            .map(field_requirement)
            .collect::<Option<_>>()?,
    })
}

/// One node selector term against a node.
pub fn term_matches(t: &NodeSelectorTerm, node: &impl NodeInfo) -> bool {
    let Some(parsed) = parse_term(t) else {
        return false;
    };
    let labels = node.node_labels();
    let labels_ok = parsed.labels.iter().all(|r| r.matches(labels));
    // Upstream only applies field selectors when the node has a name (`len(nodeFields) > 0`).
    let name = node.node_name();
    let fields_ok = name.is_empty()
        || parsed.fields.iter().all(|(key, equal, value)| {
            let have = if key == FIELD_NODE_NAME { name } else { "" };
            (have == value) == *equal
        });
    labels_ok && fields_ok
}

// ---------------------------------------------------------------------------------------------
// Allowed values of one label, without nodes.

/// The values a node label may take on the nodes a pod spec may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// Not limited to a list of values (unconstrained, only `NotIn`/`Exists`/`Gt`/`Lt`, or a term
    /// that does not mention the label). The label may also be absent unless `Exists` requires it.
    Any,
    /// Only these values (never empty).
    Only(BTreeSet<String>),
    /// No value: the constraints contradict each other (no node can satisfy them) or they
    /// require the label to be absent.
    None,
}

/// A set of values: finite, or everything except some values.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Values {
    Finite(BTreeSet<String>),
    AllBut(BTreeSet<String>),
}

impl Values {
    fn intersect(self, keep: &BTreeSet<String>) -> Values {
        match self {
            Values::Finite(s) => Values::Finite(s.intersection(keep).cloned().collect()),
            Values::AllBut(ex) => Values::Finite(keep.difference(&ex).cloned().collect()),
        }
    }

    fn remove(self, drop: &BTreeSet<String>) -> Values {
        match self {
            Values::Finite(s) => Values::Finite(s.difference(drop).cloned().collect()),
            Values::AllBut(ex) => Values::AllBut(ex.union(drop).cloned().collect()),
        }
    }

    fn union(self, other: Values) -> Values {
        match (self, other) {
            (Values::Finite(a), Values::Finite(b)) => {
                Values::Finite(a.union(&b).cloned().collect())
            }
            (Values::AllBut(ex), Values::Finite(b)) | (Values::Finite(b), Values::AllBut(ex)) => {
                Values::AllBut(ex.difference(&b).cloned().collect())
            }
            (Values::AllBut(a), Values::AllBut(b)) => {
                Values::AllBut(a.intersection(&b).cloned().collect())
            }
        }
    }
}

/// The values one valid term allows for `key`. Requirements on other keys are assumed
/// satisfiable; only this key's are combined (ANDed).
fn term_values(t: &ParsedTerm, key: &str) -> Values {
    let mut v = Values::AllBut(BTreeSet::new());
    for r in t.labels.iter().filter(|r| r.key() == key) {
        v = match r.operator() {
            Operator::In | Operator::Equals | Operator::DoubleEquals => v.intersect(r.values()),
            Operator::NotIn | Operator::NotEquals => v.remove(r.values()),
            Operator::Exists => v,
            Operator::DoesNotExist => Values::Finite(BTreeSet::new()),
            Operator::GreaterThan | Operator::LessThan => match v {
                // Keep the listed values the comparison accepts; an open set stays open.
                Values::Finite(s) => Values::Finite(
                    s.into_iter()
                        .filter(|val| {
                            let probe = BTreeMap::from([(key.to_string(), val.clone())]);
                            r.matches(&probe)
                        })
                        .collect(),
                ),
                open => open,
            },
        };
    }
    v
}

/// The values `key` may take on a node this pod spec may use, from its `nodeSelector` and
/// required node affinity (taints aside): the union over the valid terms of what each allows,
/// intersected with the `nodeSelector` value. E.g. "is placement limited to one zone?" is
/// `allowed_values(spec, "topology.kubernetes.io/zone")` being `Only` of one value.
pub fn allowed_values(spec: &PodSpec, key: &str) -> Allowed {
    let mut values = Values::AllBut(BTreeSet::new());
    if let Some(terms) = required_terms(spec) {
        let parsed: Vec<ParsedTerm> = terms.iter().filter_map(parse_term).collect();
        if parsed.is_empty() {
            // Every term matches nothing: no node at all.
            return Allowed::None;
        }
        values = parsed
            .iter()
            .map(|t| term_values(t, key))
            .reduce(Values::union)
            .unwrap_or(Values::AllBut(BTreeSet::new()));
    }
    if let Some(v) = spec.node_selector.as_ref().and_then(|m| m.get(key)) {
        values = values.intersect(&BTreeSet::from([v.clone()]));
    }
    allowed_of(values)
}

fn allowed_of(values: Values) -> Allowed {
    match values {
        Values::AllBut(_) => Allowed::Any,
        Values::Finite(s) if s.is_empty() => Allowed::None,
        Values::Finite(s) => Allowed::Only(s),
    }
}

/// The values `key` may take under node selector requirements that must all hold at once: one
/// term's `matchExpressions`, or a Karpenter NodePool's `spec.template.spec.requirements`, which
/// Karpenter intersects key by key (kubernetes-sigs/karpenter `pkg/scheduling/requirements.go`,
/// `Requirements.Add`). Requirements on other keys are ignored; an invalid one on `key` (unknown
/// operator, `In` without values) allows nothing, as it matches no node.
pub fn allowed_by_requirements(reqs: &[NodeSelectorRequirement], key: &str) -> Allowed {
    let labels: Option<Vec<Requirement>> = reqs
        .iter()
        .filter(|r| r.key == key)
        .map(label_requirement)
        .collect();
    let Some(labels) = labels else {
        return Allowed::None;
    };
    allowed_of(term_values(
        &ParsedTerm {
            labels,
            fields: Vec::new(),
        },
        key,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZONE: &str = "topology.kubernetes.io/zone";
    const TYPE: &str = "node.kubernetes.io/instance-type";

    fn spec(v: serde_json::Value) -> PodSpec {
        let mut v = v;
        v["containers"] = serde_json::json!([]);
        serde_json::from_value(v).unwrap()
    }

    fn node(
        name: &str,
        labels: &[(&str, &str)],
        taints: serde_json::Value,
        cordoned: bool,
    ) -> Node {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints, "unschedulable": cordoned}
        }))
        .unwrap()
    }

    fn plain(name: &str, labels: &[(&str, &str)]) -> Node {
        node(name, labels, serde_json::json!([]), false)
    }

    fn affinity(terms: serde_json::Value) -> PodSpec {
        spec(serde_json::json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}))
    }

    fn set(vals: &[&str]) -> BTreeSet<String> {
        vals.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn node_selector_needs_every_pair() {
        let s = spec(serde_json::json!({"nodeSelector": {ZONE: "a", TYPE: "p5.48xlarge"}}));
        assert!(may_use(
            &s,
            &plain("n", &[(ZONE, "a"), (TYPE, "p5.48xlarge")])
        ));
        let r = refusals(&s, &plain("n", &[(ZONE, "b"), (TYPE, "p5.48xlarge")]));
        assert_eq!(
            r,
            vec![Refusal::NodeSelector {
                key: ZONE.into(),
                wanted: "a".into(),
                found: Some("b".into())
            }]
        );
        assert!(!may_use(&s, &plain("n", &[(TYPE, "p5.48xlarge")])));
    }

    #[test]
    fn terms_are_ored_and_expressions_anded() {
        let s = affinity(serde_json::json!([
            {"matchExpressions": [
                {"key": ZONE, "operator": "In", "values": ["a"]},
                {"key": TYPE, "operator": "In", "values": ["p5.48xlarge"]}]},
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["c"]}]}
        ]));
        assert!(may_use(
            &s,
            &plain("n", &[(ZONE, "a"), (TYPE, "p5.48xlarge")])
        ));
        assert!(!may_use(
            &s,
            &plain("n", &[(ZONE, "a"), (TYPE, "trn1.32xlarge")])
        ));
        assert!(may_use(&s, &plain("n", &[(ZONE, "c")])));
        assert_eq!(
            refusals(&s, &plain("n", &[(ZONE, "b")])),
            vec![Refusal::NodeAffinity]
        );
    }

    #[test]
    fn every_operator() {
        let n = plain("n", &[(ZONE, "a"), ("gpus", "8")]);
        let one = |op: &str, key: &str, values: &[&str]| {
            affinity(
                serde_json::json!([{"matchExpressions": [{"key": key, "operator": op, "values": values}]}]),
            )
        };
        assert!(may_use(&one("In", ZONE, &["a", "b"]), &n));
        assert!(!may_use(&one("NotIn", ZONE, &["a"]), &n));
        assert!(may_use(&one("NotIn", "missing", &["a"]), &n));
        assert!(may_use(&one("Exists", ZONE, &[]), &n));
        assert!(!may_use(&one("DoesNotExist", ZONE, &[]), &n));
        assert!(may_use(&one("DoesNotExist", "missing", &[]), &n));
        assert!(may_use(&one("Gt", "gpus", &["4"]), &n));
        assert!(!may_use(&one("Lt", "gpus", &["4"]), &n));
        // A non-integer label value never satisfies Gt/Lt.
        assert!(!may_use(&one("Gt", ZONE, &["1"]), &n));
    }

    #[test]
    fn invalid_and_empty_terms_match_nothing() {
        let n = plain("n", &[(ZONE, "a")]);
        // Gt with a non-integer value, In without values, an unknown operator.
        for bad in [
            serde_json::json!({"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["eight"]}]}),
            serde_json::json!({"matchExpressions": [{"key": ZONE, "operator": "In", "values": []}]}),
            serde_json::json!({"matchExpressions": [{"key": ZONE, "operator": "Equals", "values": ["a"]}]}),
            serde_json::json!({}),
            serde_json::json!({"matchExpressions": []}),
        ] {
            let s = affinity(serde_json::json!([bad.clone()]));
            assert!(!may_use(&s, &n), "{bad}");
            assert_eq!(allowed_values(&s, ZONE), Allowed::None, "{bad}");
        }
        // A bad term does not spoil a good one next to it.
        let mixed = affinity(serde_json::json!([
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": []}]},
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]}
        ]));
        assert!(may_use(&mixed, &n));
        assert!(!may_use(&affinity(serde_json::json!([])), &n));
    }

    #[test]
    fn match_fields_select_the_node_name() {
        let s = affinity(serde_json::json!([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}]));
        assert!(may_use(&s, &plain("gpu-1", &[])));
        assert!(!may_use(&s, &plain("gpu-2", &[])));
        let not = affinity(serde_json::json!([{"matchFields": [
            {"key": "metadata.name", "operator": "NotIn", "values": ["gpu-1"]}]}]));
        assert!(!may_use(&not, &plain("gpu-1", &[])));
        assert!(may_use(&not, &plain("gpu-2", &[])));
        // matchFields takes exactly one value.
        let two = affinity(serde_json::json!([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]));
        assert!(!may_use(&two, &plain("a", &[])));
    }

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn tol(
        key: Option<&str>,
        op: Option<&str>,
        value: Option<&str>,
        effect: Option<&str>,
    ) -> Toleration {
        Toleration {
            key: key.map(Into::into),
            operator: op.map(Into::into),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            toleration_seconds: None,
        }
    }

    #[test]
    fn toleration_matching() {
        let gpu = taint("nvidia.com/gpu", Some("true"), "NoSchedule");
        assert!(tolerates(
            &tol(Some("nvidia.com/gpu"), Some("Exists"), None, None),
            &gpu
        ));
        assert!(tolerates(
            &tol(
                Some("nvidia.com/gpu"),
                None,
                Some("true"),
                Some("NoSchedule")
            ),
            &gpu
        ));
        assert!(tolerates(
            &tol(Some("nvidia.com/gpu"), Some("Equal"), Some("true"), None),
            &gpu
        ));
        assert!(!tolerates(
            &tol(Some("nvidia.com/gpu"), None, Some("false"), None),
            &gpu
        ));
        assert!(!tolerates(
            &tol(Some("nvidia.com/gpu"), None, None, None),
            &gpu
        ));
        assert!(!tolerates(
            &tol(
                Some("nvidia.com/gpu"),
                Some("Exists"),
                None,
                Some("NoExecute")
            ),
            &gpu
        ));
        // Empty key with Exists tolerates everything; empty effect matches every effect.
        assert!(tolerates(&tol(None, Some("Exists"), None, None), &gpu));
        assert!(tolerates(
            &tol(Some(""), Some("Exists"), None, Some("")),
            &gpu
        ));
        assert!(!tolerates(
            &tol(Some("other"), Some("Exists"), None, None),
            &gpu
        ));
        // Alpha comparison operators do not match.
        assert!(!tolerates(
            &tol(Some("nvidia.com/gpu"), Some("Gt"), Some("0"), None),
            &gpu
        ));
        let valueless = taint("dedicated", None, "NoSchedule");
        assert!(tolerates(
            &tol(Some("dedicated"), None, None, None),
            &valueless
        ));
    }

    #[test]
    fn only_noschedule_and_noexecute_taints_block() {
        let n = node(
            "n",
            &[],
            serde_json::json!([
                {"key": "a", "effect": "PreferNoSchedule"},
                {"key": "b", "effect": "NoExecute"},
                {"key": "c", "value": "x", "effect": "NoSchedule"}
            ]),
            false,
        );
        let none = spec(serde_json::json!({}));
        assert_eq!(
            refusals(&none, &n),
            vec![
                Refusal::Taint(taint("b", None, "NoExecute")),
                Refusal::Taint(taint("c", Some("x"), "NoSchedule"))
            ]
        );
        let tolerating = spec(serde_json::json!({"tolerations": [
            {"key": "b", "operator": "Exists"}, {"key": "c", "value": "x"}]}));
        assert!(may_use(&tolerating, &n));
    }

    #[test]
    fn cordoned_nodes_refuse_unless_tolerated() {
        let n = node("n", &[], serde_json::json!(null), true);
        assert_eq!(
            refusals(&spec(serde_json::json!({})), &n),
            vec![Refusal::Cordoned]
        );
        let daemon = spec(serde_json::json!({"tolerations": [
            {"key": TAINT_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}]}));
        assert!(may_use(&daemon, &n));
        assert!(may_use(
            &spec(serde_json::json!({"tolerations": [{"operator": "Exists"}]})),
            &n
        ));
    }

    #[test]
    fn allowed_values_from_node_selector_and_affinity() {
        let none = spec(serde_json::json!({}));
        assert_eq!(allowed_values(&none, ZONE), Allowed::Any);

        let sel = spec(serde_json::json!({"nodeSelector": {ZONE: "a"}}));
        assert_eq!(allowed_values(&sel, ZONE), Allowed::Only(set(&["a"])));
        assert_eq!(allowed_values(&sel, TYPE), Allowed::Any);

        let both = spec(serde_json::json!({
            "nodeSelector": {TYPE: "p5.48xlarge"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": TYPE, "operator": "In", "values": ["p5.48xlarge", "p4d.24xlarge"]}]}]}}}}));
        assert_eq!(
            allowed_values(&both, TYPE),
            Allowed::Only(set(&["p5.48xlarge"]))
        );

        let contradict = spec(serde_json::json!({
            "nodeSelector": {ZONE: "a"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": ZONE, "operator": "In", "values": ["b"]}]}]}}}}));
        assert_eq!(allowed_values(&contradict, ZONE), Allowed::None);
    }

    #[test]
    fn allowed_values_union_over_terms() {
        let two = affinity(serde_json::json!([
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}
        ]));
        assert_eq!(allowed_values(&two, ZONE), Allowed::Only(set(&["a", "b"])));
        // A term that does not restrict the key leaves it open.
        let open = affinity(serde_json::json!([
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}
        ]));
        assert_eq!(allowed_values(&open, ZONE), Allowed::Any);
    }

    #[test]
    fn allowed_by_requirements_intersects_one_key_and_ignores_the_others() {
        let r = |key: &str, op: &str, values: &[&str]| NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        };
        let reqs = [
            r(ZONE, "In", &["a", "b"]),
            r(ZONE, "NotIn", &["b"]),
            // Karpenter's Gte on another key does not matter for the zone.
            r("gen", "Gte", &["5"]),
        ];
        assert_eq!(
            allowed_by_requirements(&reqs, ZONE),
            Allowed::Only(set(&["a"]))
        );
        assert_eq!(allowed_by_requirements(&reqs, TYPE), Allowed::Any);
        assert_eq!(allowed_by_requirements(&reqs, "gen"), Allowed::None);
        let not_in = [r(ZONE, "NotIn", &["a"])];
        assert_eq!(allowed_by_requirements(&not_in, ZONE), Allowed::Any);
        let contradict = [r(ZONE, "In", &["a"]), r(ZONE, "In", &["b"])];
        assert_eq!(allowed_by_requirements(&contradict, ZONE), Allowed::None);
        let empty_in = [r(ZONE, "In", &[])];
        assert_eq!(allowed_by_requirements(&empty_in, ZONE), Allowed::None);
    }

    #[test]
    fn allowed_values_within_one_term() {
        let t =
            |exprs: serde_json::Value| affinity(serde_json::json!([{"matchExpressions": exprs}]));
        let in_not_in = t(serde_json::json!([
            {"key": ZONE, "operator": "In", "values": ["a", "b"]},
            {"key": ZONE, "operator": "NotIn", "values": ["b"]}]));
        assert_eq!(allowed_values(&in_not_in, ZONE), Allowed::Only(set(&["a"])));
        let two_ins = t(serde_json::json!([
            {"key": ZONE, "operator": "In", "values": ["a", "b"]},
            {"key": ZONE, "operator": "In", "values": ["b", "c"]}]));
        assert_eq!(allowed_values(&two_ins, ZONE), Allowed::Only(set(&["b"])));
        for open in ["NotIn", "Exists"] {
            let values: &[&str] = if open == "NotIn" { &["a"] } else { &[] };
            let s = t(serde_json::json!([{"key": ZONE, "operator": open, "values": values}]));
            assert_eq!(allowed_values(&s, ZONE), Allowed::Any, "{open}");
        }
        let absent = t(serde_json::json!([{"key": ZONE, "operator": "DoesNotExist"}]));
        assert_eq!(allowed_values(&absent, ZONE), Allowed::None);
        // Gt/Lt narrow a listed set; alone they leave it open.
        let gt = t(serde_json::json!([
            {"key": "gen", "operator": "In", "values": ["4", "5", "x"]},
            {"key": "gen", "operator": "Gt", "values": ["4"]}]));
        assert_eq!(allowed_values(&gt, "gen"), Allowed::Only(set(&["5"])));
        let lt_only = t(serde_json::json!([{"key": "gen", "operator": "Lt", "values": ["4"]}]));
        assert_eq!(allowed_values(&lt_only, "gen"), Allowed::Any);
    }
}
