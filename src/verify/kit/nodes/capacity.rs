//! The GPU nodes a workload's pods may use, and how many of its pods the cluster holds at once.
//!
//! - [`GpuNodes`]: the usable nodes with the most GPUs ("whole GPU nodes"), for labs that size a
//!   job by the node (tensor parallelism within a node, one pod per node).
//! - [`WholeNodes`]: for a gang whose pods each take a whole node: the nodes that hold one of
//!   them. A pod takes a whole node when no node holds two: it asks for more than half of the
//!   biggest node's GPUs ([`takes_whole_node`]), or a required pod anti-affinity on
//!   `kubernetes.io/hostname` that selects its own pods keeps a second one off
//!   ([`repels_itself_per_node`], core/v1 `PodAffinityTerm`; the kube-scheduler's and
//!   Volcano's `predicates` plugin's InterPodAffinity filter enforce it).
//!
//! Which nodes a pod may use follows the kit's [`placement::may_use`] (cordon, `nodeSelector`,
//! required node affinity, taints). Static mode has no nodes: the figures come from `--param`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;

use crate::facts::instances::GPU;
use crate::facts::NodeFacts;
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::k8s::placement;
use crate::verify::kit::k8s::resources::{self, Rule, Violation};
use crate::verify::kit::k8s::selector::{Selector, SelectorError};
use crate::verify::kit::k8s::workload::PodTemplate;
use crate::verify::{JudgeCtx, Outcome, Params, Reason};

/// The label GPU feature discovery puts on a node: the memory of one GPU in MiB
/// (NVIDIA/k8s-device-plugin `docs/gpu-feature-discovery/README.md`).
pub const GPU_MEMORY_LABEL: &str = "nvidia.com/gpu.memory";

/// Why a cluster fact is unknown.
#[derive(Debug, Clone, PartialEq)]
pub enum Unknown {
    /// Static mode: the fact is this `--param` (or the profile's value with `--profile`).
    Param(&'static str),
    /// The nodes could not be read.
    Unavailable(Unavailable),
    /// No node the pods may use has a GPU (message `no-gpus`, evidence `resource`).
    NoGpus,
}

impl Unknown {
    /// The outcome of a check that needs this fact.
    pub fn outcome(&self, check: &str) -> Outcome {
        match self {
            Unknown::Param(name) => Outcome::skipped(check, Reason::NeedsParam(name.to_string())),
            Unknown::Unavailable(why) => Outcome::unavailable(check, why),
            Unknown::NoGpus => {
                Outcome::error(check, Reason::Message("no-gpus".into())).with("resource", GPU)
            }
        }
    }
}

/// The nodes a pod template may be placed on that have the most GPUs ("whole GPU nodes").
#[derive(Debug, Clone, PartialEq)]
pub struct GpuNodes {
    /// The largest allocatable `nvidia.com/gpu` among the nodes the pods may use; static mode:
    /// `--param gpus_per_node`.
    pub gpus_per_node: Result<i64, Unknown>,
    /// How many of those nodes have that many GPUs; static mode: `--param nodes`.
    pub nodes: Result<i64, Unknown>,
    /// Their names (or the `--param` that gave the facts), for evidence.
    pub names: Vec<String>,
    /// The smallest [`GPU_MEMORY_LABEL`] among them, when every one has it.
    pub gpu_memory_mib: Option<i64>,
}

impl GpuNodes {
    /// Live: from the cluster's nodes that `spec` may use (nodeSelector, required affinity,
    /// taints, cordons: [`placement::may_use`]). Static, or a snapshot without nodes: from
    /// `--param gpus_per_node` and `--param nodes` (or the profile's, with `--profile`).
    pub fn find(ctx: &JudgeCtx, spec: &PodSpec) -> Result<GpuNodes, InputError> {
        let per = Params::number(ctx.params.given("gpus_per_node"), "gpus_per_node")?;
        let count = Params::number(ctx.params.given("nodes"), "nodes")?;
        let from_params = || GpuNodes {
            gpus_per_node: per.map(i64::from).ok_or(Unknown::Param("gpus_per_node")),
            nodes: count.map(i64::from).ok_or(Unknown::Param("nodes")),
            names: per
                .map(|p| format!("--param gpus_per_node={p}"))
                .into_iter()
                .chain(count.map(|n| format!("--param nodes={n}")))
                .collect(),
            gpu_memory_mib: None,
        };
        if ctx.is_static() {
            // A pod pinned to an instance type trainlab knows carries its GPU count: the
            // manifest states the fact static mode would otherwise ask for.
            if per.is_none() {
                if let Some((gpus, named)) = named_instance_gpus(spec) {
                    return Ok(GpuNodes {
                        gpus_per_node: Ok(gpus),
                        nodes: count.map(i64::from).ok_or(Unknown::Param("nodes")),
                        names: std::iter::once(named)
                            .chain(count.map(|n| format!("--param nodes={n}")))
                            .collect(),
                        gpu_memory_mib: None,
                    });
                }
            }
            return Ok(from_params());
        }
        let nodes = match ctx.node_facts()? {
            Ok(n) => n,
            Err(_) if per.is_some() => return Ok(from_params()),
            Err(why) => {
                return Ok(GpuNodes {
                    gpus_per_node: Err(Unknown::Unavailable(why.clone())),
                    nodes: Err(Unknown::Unavailable(why.clone())),
                    names: Vec::new(),
                    gpu_memory_mib: None,
                })
            }
        };
        Ok(GpuNodes::from_usable(&placement::usable_nodes(spec, nodes)))
    }

    /// The facts from the nodes a template may use.
    pub fn from_usable(usable: &[NodeFacts]) -> GpuNodes {
        let per = usable.iter().map(|n| n.allocatable(GPU)).max().unwrap_or(0);
        if per <= 0 {
            return GpuNodes {
                gpus_per_node: Err(Unknown::NoGpus),
                nodes: Err(Unknown::NoGpus),
                names: Vec::new(),
                gpu_memory_mib: None,
            };
        }
        let whole: Vec<&NodeFacts> = usable
            .iter()
            .filter(|n| n.allocatable(GPU) == per)
            .collect();
        let memory: Option<Vec<i64>> = whole
            .iter()
            .map(|n| n.labels.get(GPU_MEMORY_LABEL)?.trim().parse::<i64>().ok())
            .collect();
        GpuNodes {
            gpus_per_node: Ok(per),
            nodes: Ok(whole.len() as i64),
            names: whole.iter().map(|n| n.name.clone()).collect(),
            gpu_memory_mib: memory.and_then(|m| m.into_iter().min()),
        }
    }
}

/// The GPUs per node of the instance type(s) a pod spec's placement allows, when every one of
/// them is a GPU type trainlab knows and they agree (`nodeSelector` of `p5.48xlarge`, or
/// `In [p5.48xlarge, p5e.48xlarge]`): the count, and the placement as evidence.
pub fn named_instance_gpus(spec: &PodSpec) -> Option<(i64, String)> {
    let label = crate::facts::instances::INSTANCE_TYPE_LABEL;
    let placement::Allowed::Only(types) = placement::allowed_values(spec, label) else {
        return None;
    };
    let gpus: Option<Vec<u32>> = types
        .iter()
        .map(|t| crate::facts::instances::lookup(t).map(|i| i.gpus))
        .collect();
    let gpus = gpus?;
    let first = *gpus.first()?;
    if first == 0 || gpus.iter().any(|g| *g != first) {
        return None;
    }
    let names: Vec<&str> = types.iter().map(String::as_str).collect();
    Some((
        i64::from(first),
        format!("{label}: {} ({first} GPUs)", names.join(", ")),
    ))
}

// ---------------------------------------------------------------------------------------------
// A gang of whole-node pods.

/// The node label that names one node (k8s.io/api/core/v1 well_known_labels.go `LabelHostname`).
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Pods asking for `g` GPUs each take a whole node when no node holds two of them and the
/// biggest node (`p` GPUs) holds one: p/2 < g ≤ p.
pub fn takes_whole_node(g: i64, p: i64) -> bool {
    g <= p && 2 * g > p
}

/// Whether a pod template's required pod anti-affinity keeps two of its own pods off one node:
/// a term on `kubernetes.io/hostname` whose selector matches the pods' own `labels` in their own
/// `namespace` (no `namespaces` and no `namespaceSelector` mean the pod's namespace; a
/// `namespaceSelector` is matched against the `kubernetes.io/metadata.name` label the API server
/// sets on every namespace).
pub fn repels_itself_per_node(
    spec: &PodSpec,
    labels: &BTreeMap<String, String>,
    namespace: &str,
) -> Result<bool, SelectorError> {
    let anti = spec
        .affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref());
    let terms = anti.and_then(|a| {
        a.required_during_scheduling_ignored_during_execution
            .as_ref()
    });
    for t in terms.into_iter().flatten() {
        if t.topology_key != HOSTNAME_LABEL
            || !Selector::from_label_selector(t.label_selector.as_ref())?.matches(labels)
        {
            continue;
        }
        if crate::verify::kit::nodes::spread::in_namespace(t, namespace)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Where bound pods are: `a → n1, b → n2` (in the order given), and how many distinct nodes
/// they use. Pods each on their own node use as many nodes as there are pods.
pub fn placement<'p>(pods: impl IntoIterator<Item = (&'p str, &'p str)>) -> (String, usize) {
    let pods: Vec<(&str, &str)> = pods.into_iter().collect();
    let nodes: std::collections::BTreeSet<&str> = pods.iter().map(|(_, n)| *n).collect();
    let text: Vec<String> = pods.iter().map(|(p, n)| format!("{p} → {n}")).collect();
    (text.join(", "), nodes.len())
}

/// One group of identical pods in a gang (a Volcano task, a replica type).
#[derive(Debug, Clone)]
pub struct Member<'a> {
    pub spec: &'a PodSpec,
    /// The GPUs one pod asks for (the effective request).
    pub gpus: i64,
    /// Its pods repel each other per node ([`repels_itself_per_node`]).
    pub one_per_node: bool,
}

impl Member<'_> {
    /// The GPUs a node needs to hold one pod of this member when no node of `p` GPUs holds two;
    /// None when one node may hold several of them (or none, or the pod asks for no GPU).
    pub fn whole_node_need(&self, p: i64) -> Option<i64> {
        let g = self.gpus;
        let alone = takes_whole_node(g, p) || (self.one_per_node && g >= 1 && g <= p);
        alone.then_some(g)
    }
}

impl<'a> Member<'a> {
    /// The member a pod template makes: its pods' GPUs (kit `resources`: the effective pod
    /// request) and whether they repel each other per node, given the `labels` its pods carry
    /// and their `namespace`. Also returns what the API server refuses in the template's GPU
    /// requests; an unreadable quantity is bad input, unless a refusal already covers it.
    pub fn of(
        obj: &Obj,
        t: &'a PodTemplate,
        labels: &BTreeMap<String, String>,
        namespace: &str,
    ) -> Result<(Member<'a>, Vec<Violation>), InputError> {
        let refused: Vec<Violation> = resources::validate_pod_spec(&t.spec, &t.path)
            .into_iter()
            .filter(|v| v.resource == GPU && v.rule != Rule::Unreadable)
            .collect();
        let gpus = match resources::pod_count(&t.spec, GPU) {
            Ok(n) => n,
            Err(_) if !refused.is_empty() => 0,
            Err(e) => return Err(obj.field_error(t.path.clone(), e)),
        };
        let one_per_node = repels_itself_per_node(&t.spec, labels, namespace)
            .map_err(|e| obj.field_error(t.field("affinity.podAntiAffinity"), e))?;
        let m = Member {
            spec: &t.spec,
            gpus,
            one_per_node,
        };
        Ok((m, refused))
    }
}

/// A figure static mode takes from `--param`, and its name.
#[derive(Debug, Clone, Copy)]
pub struct ParamFact {
    pub name: &'static str,
    pub value: Option<u32>,
}

impl ParamFact {
    /// `value` (a lab parameter or `--param`) read as a whole number; anything else is bad
    /// input naming the parameter.
    pub fn read(name: &'static str, value: Option<&str>) -> Result<ParamFact, InputError> {
        let value = Params::number(value, name)?;
        Ok(ParamFact { name, value })
    }

    fn known(self) -> Result<i64, Unknown> {
        self.value.map(i64::from).ok_or(Unknown::Param(self.name))
    }
}

/// The nodes that hold one pod of a gang each.
///
/// `per_node` is the most allocatable `nvidia.com/gpu` of a node some member may use. A *whole
/// GPU node* is such a node that holds one pod of a member that may use it: the pod's GPUs when
/// its pods take a whole node, else `per_node` (so a wrong request is blamed once, on the request,
/// not again on the count). No node holds two whole-node pods, so the cluster holds `count` of
/// them (members placed differently count over the union of their nodes, an upper bound).
#[derive(Debug, Clone, PartialEq)]
pub struct WholeNodes {
    pub per_node: Result<i64, Unknown>,
    pub count: Result<i64, Unknown>,
    /// Whole GPU nodes created after `since` (an autoscaler grew the cluster under the gang).
    pub added_after: i64,
    /// Their names (or the `--param` that gave their count), for evidence.
    pub names: Vec<String>,
}

impl WholeNodes {
    fn unknown(why: Unknown) -> WholeNodes {
        WholeNodes {
            per_node: Err(why.clone()),
            count: Err(why),
            added_after: 0,
            names: Vec::new(),
        }
    }

    /// Live: from the cluster's nodes ([`WholeNodes::of`]). Static, or a snapshot without nodes
    /// but with `count` given: from the params.
    pub fn find(
        ctx: &JudgeCtx,
        members: &[Member],
        since: Option<&str>,
        per_node: ParamFact,
        count: ParamFact,
    ) -> Result<WholeNodes, InputError> {
        let from_params = || WholeNodes {
            per_node: per_node.known(),
            count: count.known(),
            added_after: 0,
            names: (count.value.iter())
                .map(|n| format!("--param {}={n}", count.name))
                .collect(),
        };
        if ctx.is_static() {
            return Ok(from_params());
        }
        match ctx.node_facts()? {
            Ok(nodes) => Ok(WholeNodes::of(nodes, members, since)),
            Err(_) if count.value.is_some() => Ok(from_params()),
            Err(why) => Ok(WholeNodes::unknown(Unknown::Unavailable(why.clone()))),
        }
    }

    /// From the nodes. `since`: when the gang was created (RFC 3339 in the API's fixed UTC form,
    /// `2026-12-01T09:00:00Z`, which sorts as text).
    pub fn of(nodes: &[NodeFacts], members: &[Member], since: Option<&str>) -> WholeNodes {
        // Each node some member may use, with those members.
        let mut usable = Vec::new();
        for n in nodes {
            let who: Vec<&Member> = members
                .iter()
                .filter(|m| placement::may_use(m.spec, n))
                .collect();
            if !who.is_empty() {
                usable.push((n.created.as_deref(), n, who));
            }
        }
        let p = usable.iter().map(|(_, n, _)| n.allocatable(GPU)).max();
        let Some(p) = p.filter(|p| *p > 0) else {
            return WholeNodes::unknown(Unknown::NoGpus);
        };
        let whole: Vec<_> = usable
            .iter()
            .filter(|(_, n, who)| {
                who.iter()
                    .any(|m| n.allocatable(GPU) >= m.whole_node_need(p).unwrap_or(p))
            })
            .collect();
        let added = whole
            .iter()
            .filter(|(at, _, _)| matches!((*at, since), (Some(n), Some(j)) if n > j))
            .count();
        WholeNodes {
            per_node: Ok(p),
            count: Ok(whole.len() as i64),
            added_after: added as i64,
            names: whole.iter().map(|(_, n, _)| n.name.clone()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use serde_json::json;

    fn node(name: &str, gpus: i64, labels: &[(&str, &str)]) -> NodeFacts {
        NodeFacts {
            name: name.into(),
            zone: None,
            instance_type: None,
            provider_id: None,
            allocatable: [(GPU.to_string(), gpus)].into_iter().collect(),
            capacity: BTreeMap::new(),
            allocatable_exact: BTreeMap::new(),
            created: None,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: Vec::new(),
            unschedulable: false,
        }
    }

    #[test]
    fn whole_gpu_nodes_are_the_usable_nodes_with_the_most_gpus() {
        let g = GpuNodes::from_usable(&[
            node("p5-a", 8, &[(GPU_MEMORY_LABEL, "81559")]),
            node("p5-b", 8, &[(GPU_MEMORY_LABEL, "81559")]),
            node("g5", 4, &[]),
            node("cpu", 0, &[]),
        ]);
        assert_eq!(g.gpus_per_node, Ok(8));
        assert_eq!(g.nodes, Ok(2));
        assert_eq!(g.names, vec!["p5-a", "p5-b"]);
        assert_eq!(g.gpu_memory_mib, Some(81559));
        let g = GpuNodes::from_usable(&[
            node("a", 8, &[(GPU_MEMORY_LABEL, "40960")]),
            node("b", 8, &[]),
        ]);
        assert_eq!(g.gpu_memory_mib, None);
        let g = GpuNodes::from_usable(&[node("cpu", 0, &[])]);
        assert_eq!(g.gpus_per_node, Err(Unknown::NoGpus));
    }

    fn spec(v: serde_json::Value) -> PodSpec {
        let mut v = v;
        v["containers"] = json!([]);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_pod_takes_a_whole_node_when_no_node_holds_two() {
        assert!(takes_whole_node(8, 8));
        assert!(takes_whole_node(5, 8));
        assert!(!takes_whole_node(4, 8), "two fit on an 8-GPU node");
        assert!(!takes_whole_node(9, 8), "no node holds one");
        assert!(!takes_whole_node(0, 8));
        assert!(takes_whole_node(1, 1));
    }

    #[test]
    fn a_required_anti_affinity_on_the_hostname_against_its_own_pods_keeps_one_per_node() {
        let own = BTreeMap::from([("app".to_string(), "gang".to_string())]);
        let anti = |term: serde_json::Value| {
            spec(json!({"affinity": {"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}))
        };
        let on_self = json!({"topologyKey": HOSTNAME_LABEL,
                             "labelSelector": {"matchLabels": {"app": "gang"}}});
        assert_eq!(
            repels_itself_per_node(&anti(on_self.clone()), &own, "ns"),
            Ok(true)
        );
        let mut zone = on_self.clone();
        zone["topologyKey"] = json!("topology.kubernetes.io/zone");
        assert_eq!(repels_itself_per_node(&anti(zone), &own, "ns"), Ok(false));
        let mut others = on_self.clone();
        others["labelSelector"] = json!({"matchLabels": {"app": "web"}});
        assert_eq!(repels_itself_per_node(&anti(others), &own, "ns"), Ok(false));
        let mut elsewhere = on_self.clone();
        elsewhere["namespaces"] = json!(["other"]);
        assert_eq!(
            repels_itself_per_node(&anti(elsewhere), &own, "ns"),
            Ok(false)
        );
        let mut every_ns = on_self.clone();
        every_ns["namespaceSelector"] = json!({});
        assert_eq!(
            repels_itself_per_node(&anti(every_ns), &own, "ns"),
            Ok(true)
        );
        let preferred = spec(json!({"affinity": {"podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": on_self}]}}}));
        assert_eq!(repels_itself_per_node(&preferred, &own, "ns"), Ok(false));
        let mut bad = json!({"topologyKey": HOSTNAME_LABEL});
        bad["labelSelector"] = json!({"matchExpressions": [{"key": "app", "operator": "Near"}]});
        assert!(repels_itself_per_node(&anti(bad), &own, "ns").is_err());
    }

    #[test]
    fn placement_lists_the_pods_and_counts_distinct_nodes() {
        let (text, nodes) = placement([("w-0", "n1"), ("w-1", "n2"), ("w-2", "n1")]);
        assert_eq!(text, "w-0 → n1, w-1 → n2, w-2 → n1");
        assert_eq!(nodes, 2);
        assert_eq!(placement([]), (String::new(), 0));
    }

    fn node_obj(name: &str, gpus: i64, created: &str) -> Obj {
        Obj::new(
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": name, "creationTimestamp": created},
                   "status": {"allocatable": {"nvidia.com/gpu": gpus.to_string()}}}),
            Origin::Live,
        )
        .unwrap()
    }

    #[test]
    fn whole_nodes_hold_one_pod_of_the_gang_each() {
        let (a, b) = (
            node_obj("p5-a", 8, "2026-01-01T00:00:00Z"),
            node_obj("p5-b", 8, "2026-01-01T00:00:00Z"),
        );
        let (small, late) = (
            node_obj("g6", 4, "2026-01-01T00:00:00Z"),
            node_obj("p5-c", 8, "2026-03-01T00:00:00Z"),
        );
        let nodes = NodeFacts::all(&[&a, &b, &small, &late]).unwrap();
        let empty = spec(json!({}));
        let m = |gpus, one_per_node| Member {
            spec: &empty,
            gpus,
            one_per_node,
        };
        let since = Some("2026-02-01T00:00:00Z");
        let w = WholeNodes::of(&nodes, &[m(8, false)], since);
        assert_eq!((w.per_node, w.count, w.added_after), (Ok(8), Ok(3), 1));
        assert_eq!(w.names, ["p5-a", "p5-b", "p5-c"]);
        // One GPU each, one pod per node: every GPU node holds one, the 4-GPU node too.
        let w = WholeNodes::of(&nodes, &[m(1, true)], None);
        assert_eq!(w.count, Ok(4));
        // Half a node: not whole-node pods, so the count is of the biggest nodes only.
        assert_eq!(m(4, false).whole_node_need(8), None);
        let w = WholeNodes::of(&nodes, &[m(4, false)], None);
        assert_eq!(w.count, Ok(3));
        let cpu = node_obj("cpu", 0, "2026-01-01T00:00:00Z");
        let cpu = NodeFacts::from_obj(&cpu).unwrap();
        let w = WholeNodes::of(&[cpu], &[m(8, false)], None);
        assert_eq!(w.count, Err(Unknown::NoGpus));
    }
}
