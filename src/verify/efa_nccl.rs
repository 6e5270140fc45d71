//! Lab `efa-nccl`: a 2-pod indexed `batch/v1` Job `nccl-efa` for NCCL over EFA.
//!
//! Spec checks judge the Job's pod template; state checks follow the Job's pods through
//! `metadata.ownerReferences` (the Job's uid), never through labels or names.
//!
//! Decisions worth knowing:
//! - The *training container* is the first container that asks for `nvidia.com/gpu` (limits or
//!   requests), or the first container when none does.
//! - `efa-count` and `gpus-whole-node` compare against the instance type(s) the template restricts
//!   placement to. When the template names none (a failure `efa-instance-type` reports), they use
//!   the instance types of the nodes the Job's pods were bound to (live/snapshot), else the lab's
//!   `instance_type` parameter. So a template without an instance type fails one check, not three.
//! - A pod that cannot be scheduled fails `pods-running` only when its own constraints exclude
//!   every node of the cluster (even empty). When some node would fit, it waits for capacity
//!   (pending). On EKS an autoscaler may still add a node, so there only requests that no allowed
//!   instance type can ever hold (per the instance table) count as the learner's fault.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodAffinityTerm,
    PodSpec, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::views::nodes::parse_int_quantity;
use super::views::pods::{effective_request, limit, request};
use super::{Read, Advice, JudgeCtx, Judgement, Outcome, Reason, Verifier};
use crate::observe::kinds::{CONFIGMAPS, JOBS, PODS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::profile::instances::{self, EFA, GPU, INSTANCES, INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::profile::Profile;

pub struct EfaNccl;

// Declared once: reads() plans them and judge() looks them up by the same declaration.
static JOBS_READ: Read = Read::lab(&JOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
static READS: &[&Read] = &[&JOBS_READ, &PODS_READ, &CONFIGMAPS_READ];

const JOB_NAME: &str = "nccl-efa";
/// The task asks for two pods, one per node.
const PODS_WANTED: i32 = 2;

const CHECKS: &[&str] = &[
    "efa-in-limits",
    "efa-count",
    "gpus-whole-node",
    "fi-provider",
    "efa-instance-type",
    "single-zone",
    "pods-on-efa-nodes",
    "pods-same-zone",
    "pods-running",
];

/// Environment variables (aws/aws-ofi-nccl doc/efa-env-var.md, "EFA Cheatsheet").
const FI_PROVIDER: &str = "FI_PROVIDER";
const RDMAV_FORK_SAFE: &str = "RDMAV_FORK_SAFE";
const FI_EFA_USE_DEVICE_RDMA: &str = "FI_EFA_USE_DEVICE_RDMA";

/// Set by the Job controller on the pods of an Indexed Job (k8s.io/api batch/v1 types.go
/// `JobCompletionIndexAnnotation`).
const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// Labels the API server adds to a Job's pod template unless `manualSelector` is true
/// (kubernetes pkg/registry/batch/job/strategy.go `generateSelector`; pkg/apis/batch/types.go
/// `LegacyJobNameLabel`, `JobNameLabel`). A manifest file does not carry them yet.
const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];

/// Container waiting reasons that no amount of waiting fixes (kubelet `ErrImagePull`,
/// `ImagePullBackOff`, `InvalidImageName`, `CreateContainerConfigError`, `CrashLoopBackOff`).
const STUCK_REASONS: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CrashLoopBackOff",
];

impl Verifier for EfaNccl {
    fn lab_id(&self) -> &'static str {
        "efa-nccl"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let ns = &ctx.target.namespace;
        let mut j = Judgement::default();
        let jobs = match ctx.list(&JOBS_READ) {
            Ok(jobs) => jobs,
            Err(why) => return Ok(Judgement::every(CHECKS, |c| Outcome::unavailable(c, &why))),
        };
        let Some(job_obj) = jobs.iter().copied().find(|o| o.name() == JOB_NAME) else {
            let others: Vec<&str> = jobs.iter().map(|o| o.name()).collect();
            let found = if others.is_empty() {
                format!("no Job in namespace {ns}")
            } else {
                format!("Jobs {} but none named {JOB_NAME}", others.join(", "))
            };
            return Ok(Judgement::every(CHECKS, |c| {
                Outcome::fail(
                    c,
                    format!("Job/{JOB_NAME} (batch/v1) in namespace {ns}"),
                    &found,
                )
                .hint("no-job")
                .with("namespace", ns)
            }));
        };
        let input = Input::read(ctx, job_obj)?;
        let tc = input.training_container();

        j.push(efa_in_limits(&input, tc));
        j.push(efa_count(&input, tc, ctx));
        j.push(gpus_whole_node(&input, tc, ctx)?);
        j.push(fi_provider(&input, tc));
        j.push(efa_instance_type(&input, ctx));
        j.push(single_zone(&input));
        j.push(pods_on_efa_nodes(&input, ns));
        j.push(pods_same_zone(&input, ns));
        j.push(pods_running(&input, ctx, ns));
        advise(&input, &mut j);
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// What the checks read.

struct Input {
    job: Job,
    spec: PodSpec,
    /// The template's labels plus the job-name labels the API server adds.
    pod_labels: BTreeMap<String, String>,
    namespace: String,
    configmaps: Result<Vec<ConfigMap>, Unavailable>,
    /// The Job's pods (by owner uid), or why they cannot be read.
    pods: Result<Vec<PodView>, Unavailable>,
    nodes: Result<Vec<NodeView>, Unavailable>,
}

impl Input {
    fn read(ctx: &JudgeCtx, job_obj: &Obj) -> Result<Input, InputError> {
        let ns = &ctx.target.namespace;
        let job: Job = job_obj.parse()?;
        let js = job.spec.clone().unwrap_or_default();
        let spec = js.template.spec.clone().unwrap_or_default();
        let mut pod_labels = js
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.clone())
            .unwrap_or_default();
        if js.manual_selector != Some(true) {
            for l in JOB_NAME_LABELS {
                pod_labels
                    .entry(l.to_string())
                    .or_insert_with(|| JOB_NAME.to_string());
            }
        }
        let configmaps = match ctx.list(&CONFIGMAPS_READ) {
            Ok(objs) => Ok(objs.iter().map(|o| o.parse()).collect::<Result<_, _>>()?),
            Err(u) => Err(u),
        };
        let pods = match ctx.list(&PODS_READ) {
            Ok(objs) => Ok(objs
                .iter()
                .filter(|o| o.is_owned_by(job_obj))
                .map(|o| PodView::from_obj(o))
                .collect::<Result<_, _>>()?),
            Err(u) => Err(u),
        };
        let nodes = match ctx.nodes_read() {
            Ok(objs) => Ok(objs
                .iter()
                .map(|o| NodeView::from_obj(o))
                .collect::<Result<_, _>>()?),
            Err(u) => Err(u),
        };
        Ok(Input {
            job,
            spec,
            pod_labels,
            namespace: job_obj.namespace().unwrap_or(ns).to_string(),
            configmaps,
            pods,
            nodes,
        })
    }

    /// The container that asks for GPUs, else the first one (None: no containers at all).
    fn training_container(&self) -> Option<&Container> {
        let cs = &self.spec.containers;
        cs.iter()
            .find(|c| limit(c, GPU).is_some() || request(c, GPU).is_some())
            .or_else(|| cs.first())
    }

    fn node(&self, name: &str) -> Option<&NodeView> {
        self.nodes.as_ref().ok()?.iter().find(|n| n.name == name)
    }

    /// The Job's current pods: per completion index, the one that got furthest.
    fn current_pods(&self) -> Vec<&PodView> {
        let Ok(pods) = &self.pods else {
            return Vec::new();
        };
        // Pods without an index (a NonIndexed Job) are each their own slot.
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        enum Slot<'p> {
            Index(u32),
            Unindexed(&'p str),
        }
        let mut best: BTreeMap<Slot, &PodView> = BTreeMap::new();
        for p in pods {
            let slot = match p.index {
                Some(i) => Slot::Index(i),
                None => Slot::Unindexed(&p.name),
            };
            let further = best.get(&slot).is_none_or(|b| p.rank() < b.rank());
            if further {
                best.insert(slot, p);
            }
        }
        best.into_values().collect()
    }

    fn job_condition(&self, kind: &str) -> Option<(String, String)> {
        let conds = self.job.status.as_ref()?.conditions.as_ref()?;
        conds
            .iter()
            .find(|c| c.type_ == kind && c.status == "True")
            .map(|c| {
                (
                    c.reason.clone().unwrap_or_default(),
                    c.message.clone().unwrap_or_default(),
                )
            })
    }

    /// How many pods the Job runs at once (what the state checks wait for).
    fn pods_expected(&self) -> usize {
        let s = self.job.spec.as_ref();
        let completions = s.and_then(|s| s.completions);
        let parallelism = s.and_then(|s| s.parallelism).unwrap_or(1);
        completions.unwrap_or(parallelism).min(parallelism).max(1) as usize
    }
}

#[derive(Debug, Clone)]
struct PodView {
    name: String,
    index: Option<u32>,
    node: Option<String>,
    phase: String,
    deleting: bool,
    spec: PodSpec,
    /// `PodScheduled=False` with reason `Unschedulable`: the scheduler's message.
    unschedulable: Option<String>,
    /// A container stuck for good: (container, reason, message).
    stuck: Option<(String, String, String)>,
}

impl PodView {
    /// core/v1 Pod: `metadata.annotations`, `spec.nodeName`, `status.phase`,
    /// `status.conditions[type=PodScheduled]`, `status.containerStatuses[].state.waiting`.
    fn from_obj(o: &Obj) -> Result<PodView, InputError> {
        let pod: Pod = o.parse()?;
        let meta = pod.metadata;
        let status = pod.status.unwrap_or_default();
        let spec = pod.spec.unwrap_or_default();
        let index = meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(COMPLETION_INDEX))
            .and_then(|v| v.parse().ok());
        let unschedulable = status
            .conditions
            .unwrap_or_default()
            .into_iter()
            .find(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("Unschedulable")
            })
            .map(|c| c.message.unwrap_or_default());
        let stuck = status
            .init_container_statuses
            .unwrap_or_default()
            .into_iter()
            .chain(status.container_statuses.unwrap_or_default())
            .find_map(|cs| {
                let w = cs.state?.waiting?;
                let reason = w.reason.unwrap_or_default();
                STUCK_REASONS
                    .contains(&reason.as_str())
                    .then(|| (cs.name, reason, w.message.unwrap_or_default()))
            });
        Ok(PodView {
            name: meta.name.unwrap_or_default(),
            index,
            node: spec.node_name.clone().filter(|n| !n.is_empty()),
            phase: status.phase.unwrap_or_else(|| "Pending".into()),
            deleting: meta.deletion_timestamp.is_some(),
            spec,
            unschedulable,
            stuck,
        })
    }

    /// Lower is further along; a terminating pod is about to be replaced.
    fn rank(&self) -> u8 {
        let base = match self.phase.as_str() {
            "Succeeded" => 0,
            "Running" => 1,
            "Pending" => 2,
            "Failed" => 3,
            _ => 4,
        };
        base + if self.deleting { 5 } else { 0 }
    }
}

#[derive(Debug, Clone)]
struct NodeView {
    name: String,
    labels: BTreeMap<String, String>,
    taints: Vec<Taint>,
    unschedulable: bool,
    /// `status.allocatable` as written (quantities).
    allocatable: BTreeMap<String, String>,
}

impl NodeView {
    /// core/v1 Node: `metadata.labels`, `spec.taints`, `spec.unschedulable`, `status.allocatable`.
    fn from_obj(o: &Obj) -> Result<NodeView, InputError> {
        let node: Node = o.parse()?;
        let spec = node.spec.unwrap_or_default();
        Ok(NodeView {
            name: node.metadata.name.unwrap_or_default(),
            labels: node.metadata.labels.unwrap_or_default(),
            taints: spec.taints.unwrap_or_default(),
            unschedulable: spec.unschedulable.unwrap_or(false),
            allocatable: node
                .status
                .and_then(|s| s.allocatable)
                .unwrap_or_default()
                .into_iter()
                .map(|(k, q)| (k, q.0))
                .collect(),
        })
    }

    fn efa(&self) -> i64 {
        self.allocatable
            .get(EFA)
            .and_then(|q| parse_int_quantity(q))
            .unwrap_or(0)
    }
}

// ---------------------------------------------------------------------------------------------
// Placement: which values of a node label the pod template allows.

/// Values of one node label a pod may land on.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// Not restricted (any value, or the label may be absent).
    Any,
    /// Only these values (empty: nodeSelector and affinity contradict each other).
    Only(BTreeSet<String>),
}

fn required_terms(spec: &PodSpec) -> &[NodeSelectorTerm] {
    spec.affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|s| s.node_selector_terms.as_slice())
        .unwrap_or(&[])
}

/// nodeSelector ∩ required node affinity, for one label key. Node selector terms are ORed; the
/// expressions of one term are ANDed; only `In` enumerates values.
fn allowed_values(spec: &PodSpec, key: &str) -> Allowed {
    let from_selector = spec
        .node_selector
        .as_ref()
        .and_then(|m| m.get(key))
        .map(|v| BTreeSet::from([v.clone()]));
    let terms = required_terms(spec);
    let mut from_affinity: Option<BTreeSet<String>> = None;
    if !terms.is_empty() {
        let mut union = BTreeSet::new();
        let mut every_term_restricts = true;
        for t in terms {
            match term_values(t, key) {
                Some(vals) => union.extend(vals),
                None => every_term_restricts = false,
            }
        }
        if every_term_restricts {
            from_affinity = Some(union);
        }
    }
    match (from_selector, from_affinity) {
        (None, None) => Allowed::Any,
        (Some(s), None) | (None, Some(s)) => Allowed::Only(s),
        (Some(a), Some(b)) => Allowed::Only(a.intersection(&b).cloned().collect()),
    }
}

/// The values one node selector term allows for `key` (None: the term does not restrict it).
fn term_values(t: &NodeSelectorTerm, key: &str) -> Option<BTreeSet<String>> {
    let mut out: Option<BTreeSet<String>> = None;
    for e in t.match_expressions.iter().flatten() {
        if e.key != key || e.operator != "In" {
            continue;
        }
        let vals: BTreeSet<String> = e.values.iter().flatten().cloned().collect();
        out = Some(match out {
            None => vals,
            Some(prev) => prev.intersection(&vals).cloned().collect(),
        });
    }
    out
}

fn preferred_node_keys(spec: &PodSpec) -> BTreeSet<String> {
    spec.affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .flat_map(|p| p.preference.match_expressions.iter().flatten())
        .map(|e| e.key.clone())
        .collect()
}

fn pod_affinity_terms(spec: &PodSpec) -> (Vec<&PodAffinityTerm>, Vec<&PodAffinityTerm>) {
    let pa = spec.affinity.as_ref().and_then(|a| a.pod_affinity.as_ref());
    let required = pa
        .and_then(|p| {
            p.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .collect();
    let preferred = pa
        .and_then(|p| {
            p.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .map(|w| &w.pod_affinity_term)
        .collect();
    (required, preferred)
}

/// Whether a pod affinity term selects the Job's own pods: its namespaces include the pod's
/// (an empty list means the pod's own namespace) and its label selector matches the pod labels.
/// A null label selector matches no pods (core/v1 PodAffinityTerm.labelSelector).
fn selects_own_pods(t: &PodAffinityTerm, labels: &BTreeMap<String, String>, ns: &str) -> bool {
    let ns_ok = match (&t.namespaces, &t.namespace_selector) {
        (Some(list), _) if list.iter().any(|n| n == ns) => true,
        (_, Some(sel)) if is_empty_selector(sel) => true,
        (Some(list), None) => list.is_empty(),
        (None, None) => true,
        _ => false,
    };
    ns_ok
        && t.label_selector
            .as_ref()
            .is_some_and(|s| selector_matches(s, labels))
}

fn is_empty_selector(s: &LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && s.match_expressions.as_ref().is_none_or(|e| e.is_empty())
}

/// meta/v1 LabelSelector: matchLabels AND matchExpressions (In, NotIn, Exists, DoesNotExist).
fn selector_matches(s: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let by_label = s
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let by_expr = s.match_expressions.iter().flatten().all(|e| {
        let have = labels.get(&e.key);
        let vals = e.values.as_deref().unwrap_or(&[]);
        match e.operator.as_str() {
            "In" => have.is_some_and(|v| vals.contains(v)),
            "NotIn" => have.is_none_or(|v| !vals.contains(v)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            _ => false,
        }
    });
    by_label && by_expr
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

// ---------------------------------------------------------------------------------------------
// Which instance type(s) the EFA and GPU counts are judged against.

#[derive(Debug)]
struct Types {
    names: BTreeSet<String>,
    /// Where they came from, for the expected text.
    from: &'static str,
}

fn judged_types(input: &Input, ctx: &JudgeCtx) -> Option<Types> {
    if let Allowed::Only(set) = allowed_values(&input.spec, INSTANCE_TYPE_LABEL) {
        if !set.is_empty() {
            return Some(Types {
                names: set,
                from: "the pod template's placement",
            });
        }
    }
    let bound: BTreeSet<String> = input
        .current_pods()
        .iter()
        .filter_map(|p| p.node.as_deref())
        .filter_map(|n| input.node(n))
        .filter_map(|n| n.labels.get(INSTANCE_TYPE_LABEL).cloned())
        .collect();
    if !bound.is_empty() {
        return Some(Types {
            names: bound,
            from: "the nodes the pods were bound to",
        });
    }
    ctx.params.get("instance_type").map(|t| Types {
        names: BTreeSet::from([t.to_string()]),
        from: "the task",
    })
}

fn known_types() -> String {
    INSTANCES
        .iter()
        .map(|i| i.name)
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn no_container(check: &str) -> Outcome {
    Outcome::fail(
        check,
        "a container in spec.template.spec.containers",
        "no containers",
    )
    .with("container", "?")
}

fn efa_in_limits(input: &Input, tc: Option<&Container>) -> Outcome {
    const ID: &str = "efa-in-limits";
    let Some(c) = tc else { return no_container(ID) };
    let expected = format!("{EFA} in resources.limits of container {}", c.name);
    match (limit(c, EFA), request(c, EFA)) {
        (Some(l), Some(r)) if l != r => Outcome::fail(
            ID,
            format!("{expected} (requests equal to limits)"),
            format!("requests {r}, limits {l}"),
        )
        .hint("mismatch")
        .with("container", &c.name)
        .with("requests", r)
        .with("limits", l),
        (Some(_), _) => Outcome::pass(ID),
        (None, Some(r)) => Outcome::fail(ID, expected, format!("{EFA}: {r} in requests only"))
            .hint("requests-only")
            .with("container", &c.name),
        (None, None) => {
            let other = input
                .spec
                .containers
                .iter()
                .find(|o| o.name != c.name && effective_request(o, EFA).is_some());
            match other {
                Some(o) => Outcome::fail(ID, expected, format!("{EFA} on container {}", o.name))
                    .hint("other-container")
                    .with("container", &c.name)
                    .with("other", &o.name),
                None => Outcome::fail(ID, expected, format!("no {EFA} in container {}", c.name))
                    .with("container", &c.name),
            }
        }
    }
}

/// The count a container asks for: its limit (what efa-in-limits wants), else its request, so a
/// requests/limits mismatch is reported once, by efa-in-limits.
fn limit_or_request(c: &Container, resource: &str) -> Option<i64> {
    limit(c, resource).or_else(|| request(c, resource))
}

fn efa_count(input: &Input, tc: Option<&Container>, ctx: &JudgeCtx) -> Outcome {
    const ID: &str = "efa-count";
    let Some(c) = tc else { return no_container(ID) };
    let Some(types) = judged_types(input, ctx) else {
        return Outcome::skipped(ID, Reason::NeedsParam("instance_type".into()));
    };
    let unknown: Vec<&str> = types
        .names
        .iter()
        .map(String::as_str)
        .filter(|t| instances::lookup(t).is_none())
        .collect();
    if !unknown.is_empty() {
        return Outcome::fail(
            ID,
            format!("{EFA} equal to the instance type's EFA interface count"),
            format!(
                "instance type {} is not in trainlab's EFA table",
                unknown.join(", ")
            ),
        )
        .hint("unknown-type")
        .with("unknown", unknown.join(", "))
        .with("known_types", known_types());
    }
    let counts: BTreeMap<u32, Vec<&str>> = types.names.iter().fold(BTreeMap::new(), |mut m, t| {
        let efa = instances::efa_interfaces(t).unwrap_or(0);
        m.entry(efa).or_insert_with(Vec::new).push(t.as_str());
        m
    });
    let described: Vec<String> = types
        .names
        .iter()
        .map(|t| format!("{t} {}", instances::efa_interfaces(t).unwrap_or(0)))
        .collect();
    let found = limit_or_request(c, EFA);
    let found_text = match found {
        Some(n) => format!("{EFA}: {n}"),
        None => format!("no {EFA}"),
    };
    if counts.len() > 1 {
        return Outcome::fail(
            ID,
            format!(
                "one EFA count for every allowed instance type ({})",
                described.join(", ")
            ),
            found_text,
        )
        .hint("mixed-types")
        .with("counts", described.join(", "));
    }
    let want = counts.keys().next().copied().unwrap_or(0) as i64;
    let names = join(&types.names);
    if found == Some(want) {
        return Outcome::pass(ID)
            .with("instance_type", &names)
            .with("efa_expected", want);
    }
    Outcome::fail(
        ID,
        format!(
            "{EFA}: {want} ({names} has {want} EFA interfaces; type from {})",
            types.from
        ),
        found_text,
    )
    .with("instance_type", names)
    .with("efa_expected", want)
    .with("container", &c.name)
}

fn gpus_whole_node(
    input: &Input,
    tc: Option<&Container>,
    ctx: &JudgeCtx,
) -> Result<Outcome, InputError> {
    const ID: &str = "gpus-whole-node";
    let Some(c) = tc else {
        return Ok(no_container(ID).with("gpus_expected", gpus_param(ctx)?));
    };
    let types = judged_types(input, ctx);
    let type_names = types.as_ref().map(|t| t.names.clone()).unwrap_or_default();
    let gpu_types = instances::efa_gpu_types().join(", ");
    let gpuless: Vec<&str> = type_names
        .iter()
        .map(String::as_str)
        .filter(|t| instances::lookup(t).is_some_and(|i| i.gpus == 0))
        .collect();
    let found = limit_or_request(c, GPU);
    let found_text = match found {
        Some(n) => format!("{GPU}: {n}"),
        None => format!("no {GPU} in container {}", c.name),
    };
    if !gpuless.is_empty() {
        return Ok(Outcome::fail(
            ID,
            format!("an instance type with NVIDIA GPUs ({gpu_types})"),
            format!("{} has no {GPU}", gpuless.join(", ")),
        )
        .hint("no-gpus-on-type")
        .with("gpuless", gpuless.join(", "))
        .with("gpu_types", gpu_types));
    }
    // A whole node: the table's GPU count when every judged type agrees, else the lab's figure.
    let from_table: BTreeSet<u32> = type_names
        .iter()
        .filter_map(|t| instances::lookup(t).map(|i| i.gpus))
        .collect();
    let want = match (from_table.len(), from_table.iter().next()) {
        (1, Some(&n)) if type_names.iter().all(|t| instances::lookup(t).is_some()) => n,
        _ => gpus_param(ctx)?,
    } as i64;
    if found == Some(want) {
        return Ok(Outcome::pass(ID).with("gpus_expected", want));
    }
    Ok(
        Outcome::fail(ID, format!("{GPU}: {want} (a whole node)"), found_text)
            .with("gpus_expected", want)
            .with("container", &c.name),
    )
}

/// GPUs of a whole node when the instance table cannot say (lab parameter `gpus`).
fn gpus_param(ctx: &JudgeCtx) -> Result<u32, InputError> {
    Ok(super::Params::number(ctx.params.get("gpus"), "gpus")?.unwrap_or(8))
}

/// An environment variable as the container will see it.
#[derive(Debug, PartialEq, Eq)]
enum EnvLookup {
    Absent,
    Value(String),
    /// Set, but from somewhere this grader cannot read (a Secret, a field, a missing ConfigMap).
    Unresolved(String),
}

/// `env` wins over `envFrom`; among `envFrom` sources the last one wins; within `env` the last
/// entry of a name wins (core/v1 Container.env / envFrom docs).
fn env_lookup(c: &Container, name: &str, cms: &Result<Vec<ConfigMap>, Unavailable>) -> EnvLookup {
    if let Some(e) = c.env.iter().flatten().rev().find(|e| e.name == name) {
        let Some(from) = &e.value_from else {
            return EnvLookup::Value(e.value.clone().unwrap_or_default());
        };
        return match &from.config_map_key_ref {
            Some(r) => config_map_value(cms, &r.name, &r.key),
            None => EnvLookup::Unresolved("set from a Secret or a field".into()),
        };
    }
    for src in c.env_from.iter().flatten().rev() {
        let prefix = src.prefix.as_deref().unwrap_or("");
        let Some(key) = name.strip_prefix(prefix) else {
            continue;
        };
        if let Some(r) = &src.config_map_ref {
            match config_map_value(cms, &r.name, key) {
                EnvLookup::Absent => {}
                found => return found,
            }
        }
        if let Some(s) = &src.secret_ref {
            return EnvLookup::Unresolved(format!("may come from Secret {}", s.name));
        }
    }
    EnvLookup::Absent
}

fn config_map_value(cms: &Result<Vec<ConfigMap>, Unavailable>, cm: &str, key: &str) -> EnvLookup {
    let list = match cms {
        Ok(l) => l,
        Err(why) => return EnvLookup::Unresolved(format!("ConfigMap {cm}: {why}")),
    };
    match list.iter().find(|m| m.metadata.name.as_deref() == Some(cm)) {
        None => EnvLookup::Unresolved(format!("ConfigMap {cm} not found")),
        Some(m) => match m.data.as_ref().and_then(|d| d.get(key)) {
            Some(v) => EnvLookup::Value(v.clone()),
            None => EnvLookup::Absent,
        },
    }
}

fn fi_provider(input: &Input, tc: Option<&Container>) -> Outcome {
    const ID: &str = "fi-provider";
    let Some(c) = tc else { return no_container(ID) };
    let expected = format!("{FI_PROVIDER}=efa in container {}", c.name);
    match env_lookup(c, FI_PROVIDER, &input.configmaps) {
        EnvLookup::Value(v) if v.trim() == "efa" => Outcome::pass(ID),
        EnvLookup::Value(v) => Outcome::fail(ID, expected, format!("{FI_PROVIDER}={v}"))
            .hint("wrong-value")
            .with("value", v)
            .with("container", &c.name),
        EnvLookup::Unresolved(why) => Outcome::fail(ID, expected, format!("{FI_PROVIDER}: {why}"))
            .hint("unresolved")
            .with("why", why)
            .with("container", &c.name),
        EnvLookup::Absent => {
            let other = input.spec.containers.iter().find(|o| {
                o.name != c.name
                    && env_lookup(o, FI_PROVIDER, &input.configmaps) != EnvLookup::Absent
            });
            match other {
                Some(o) => Outcome::fail(
                    ID,
                    expected,
                    format!("{FI_PROVIDER} on container {}", o.name),
                )
                .hint("other-container")
                .with("container", &c.name)
                .with("other", &o.name),
                None => Outcome::fail(
                    ID,
                    expected,
                    format!("no {FI_PROVIDER} in container {}", c.name),
                )
                .with("container", &c.name),
            }
        }
    }
}

fn efa_instance_type(input: &Input, ctx: &JudgeCtx) -> Outcome {
    const ID: &str = "efa-instance-type";
    let efa_types = instances::efa_gpu_types().join(", ");
    let example = ctx
        .params
        .get("instance_type")
        .unwrap_or("p5.48xlarge")
        .to_string();
    let expected = format!(
        "{INSTANCE_TYPE_LABEL} restricted to EFA-capable types (EFA GPU types: {efa_types})"
    );
    match allowed_values(&input.spec, INSTANCE_TYPE_LABEL) {
        Allowed::Any => Outcome::fail(
            ID,
            expected,
            format!("no nodeSelector or required node affinity on {INSTANCE_TYPE_LABEL}"),
        )
        .with("efa_types", efa_types)
        .with("instance_type", example),
        Allowed::Only(set) if set.is_empty() => Outcome::fail(
            ID,
            expected,
            format!("nodeSelector and required node affinity on {INSTANCE_TYPE_LABEL} have no value in common"),
        )
        .hint("contradictory"),
        Allowed::Only(set) => {
            let not_efa: Vec<&str> = set
                .iter()
                .map(String::as_str)
                .filter(|t| instances::efa_interfaces(t).unwrap_or(0) == 0)
                .collect();
            if not_efa.is_empty() {
                Outcome::pass(ID).with("instance_type", join(&set))
            } else {
                Outcome::fail(
                    ID,
                    expected,
                    format!("{} allowed, not known to have EFA", not_efa.join(", ")),
                )
                .hint("not-efa")
                .with("not_efa", not_efa.join(", "))
                .with("efa_types", efa_types)
            }
        }
    }
}

fn single_zone(input: &Input) -> Outcome {
    const ID: &str = "single-zone";
    let expected = format!(
        "one {ZONE_LABEL} (nodeSelector, required node affinity, or required pod affinity on the Job's own pods)"
    );
    match allowed_values(&input.spec, ZONE_LABEL) {
        Allowed::Only(set) if set.len() == 1 => return Outcome::pass(ID).with("zone", join(&set)),
        Allowed::Only(set) if set.is_empty() => {
            return Outcome::fail(
                ID,
                expected,
                format!(
                "nodeSelector and required node affinity on {ZONE_LABEL} have no value in common"
            ),
            )
            .hint("contradictory")
        }
        Allowed::Only(set) => {
            return Outcome::fail(ID, expected, format!("{ZONE_LABEL} in [{}]", join(&set)))
                .hint("several-zones")
                .with("zones", join(&set))
        }
        Allowed::Any => {}
    }
    let (required, preferred) = pod_affinity_terms(&input.spec);
    let on_zone: Vec<&PodAffinityTerm> = required
        .into_iter()
        .filter(|t| t.topology_key == ZONE_LABEL)
        .collect();
    if on_zone
        .iter()
        .any(|t| selects_own_pods(t, &input.pod_labels, &input.namespace))
    {
        return Outcome::pass(ID);
    }
    if !on_zone.is_empty() {
        let labels: Vec<String> = input
            .pod_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        return Outcome::fail(
            ID,
            expected,
            format!("a required pod affinity on {ZONE_LABEL} that does not select the Job's pods"),
        )
        .hint("affinity-other-pods")
        .with("labels", labels.join(", "));
    }
    let preferred_zone = preferred.iter().any(|t| t.topology_key == ZONE_LABEL)
        || preferred_node_keys(&input.spec).contains(ZONE_LABEL);
    if preferred_zone {
        return Outcome::fail(
            ID,
            expected,
            format!("{ZONE_LABEL} only in preferred affinity"),
        )
        .hint("preferred-only");
    }
    Outcome::fail(ID, expected, format!("no constraint on {ZONE_LABEL}"))
}

// ---------------------------------------------------------------------------------------------
// State checks.

/// Common gate of the node-based state checks: the pods and nodes are readable, the pods exist
/// and are bound. Returns the bound pods with their nodes, or the outcome to report instead.
fn bound_pods<'a>(
    input: &'a Input,
    check: &str,
) -> Result<Vec<(&'a PodView, &'a NodeView)>, Box<Outcome>> {
    if let Err(why) = &input.pods {
        return Err(Box::new(Outcome::unavailable(check, why)));
    }
    if let Err(why) = &input.nodes {
        return Err(Box::new(Outcome::unavailable(check, why)));
    }
    let pods = input.current_pods();
    let wanted = input.pods_expected();
    if pods.len() < wanted {
        if pods.is_empty() && input.job_condition("Complete").is_some() {
            return Err(Box::new(Outcome::skipped(
                check,
                Reason::Message("pods-gone".into()),
            )));
        }
        return Err(Box::new(
            Outcome::pending(check, Reason::Message("no-pods".into()))
                .with("found", pods.len())
                .with("expected", wanted),
        ));
    }
    let unbound: Vec<&str> = pods
        .iter()
        .filter(|p| p.node.is_none())
        .map(|p| p.name.as_str())
        .collect();
    if !unbound.is_empty() {
        return Err(Box::new(
            Outcome::pending(check, Reason::Message("not-bound".into()))
                .with("pods", unbound.join(", ")),
        ));
    }
    let mut out = Vec::new();
    for p in pods {
        let node = p.node.as_deref().unwrap_or_default();
        match input.node(node) {
            Some(n) => out.push((p, n)),
            None => {
                return Err(Box::new(
                    Outcome::pending(check, Reason::Message("node-missing".into()))
                        .with("pod", &p.name)
                        .with("node", node),
                ))
            }
        }
    }
    Ok(out)
}

fn pods_on_efa_nodes(input: &Input, ns: &str) -> Outcome {
    const ID: &str = "pods-on-efa-nodes";
    let bound = match bound_pods(input, ID) {
        Ok(b) => b,
        Err(o) => return *o,
    };
    let bad: Vec<String> = bound
        .iter()
        .filter_map(|(p, n)| {
            let want = pod_requests(&p.spec)
                .get(EFA)
                .map(|m| m / 1000)
                .unwrap_or(0) as i64;
            let have = n.efa();
            (have < want.max(1)).then(|| {
                format!(
                    "{} on {}: allocatable {EFA} {have}, request {want}",
                    p.name, n.name
                )
            })
        })
        .collect();
    if bad.is_empty() {
        return Outcome::pass(ID);
    }
    Outcome::fail(
        ID,
        format!("every pod on a node with allocatable {EFA} ≥ its request (and > 0)"),
        bad.join("; "),
    )
    .with("bad", bad.join("; "))
    .with("namespace", ns)
}

fn pods_same_zone(input: &Input, ns: &str) -> Outcome {
    const ID: &str = "pods-same-zone";
    let bound = match bound_pods(input, ID) {
        Ok(b) => b,
        Err(o) => return *o,
    };
    let mut zones = BTreeSet::new();
    let mut placed = Vec::new();
    for (p, n) in &bound {
        let Some(z) = n.labels.get(ZONE_LABEL) else {
            return Outcome::skipped(ID, Reason::Message("no-zone-label".into()))
                .with("node", &n.name);
        };
        zones.insert(z.clone());
        placed.push(format!("{} on {} ({z})", p.name, n.name));
    }
    if zones.len() <= 1 {
        return Outcome::pass(ID).with("zone", join(&zones));
    }
    Outcome::fail(ID, "all pods' nodes in one zone", placed.join(", "))
        .with("zones", placed.join(", "))
        .with("namespace", ns)
}

/// completions 2, parallelism 2, Indexed, not suspended (None: right shape).
fn job_shape_problem(job: &Job) -> Option<String> {
    let s = job.spec.as_ref()?;
    let mode = s.completion_mode.as_deref().unwrap_or("NonIndexed");
    let suspended = s.suspend.unwrap_or(false);
    let ok = s.completions == Some(PODS_WANTED)
        && s.parallelism.unwrap_or(1) == PODS_WANTED
        && mode == "Indexed"
        && !suspended;
    let show = |v: Option<i32>| v.map(|n| n.to_string()).unwrap_or_else(|| "unset".into());
    (!ok).then(|| {
        format!(
            "completions {}, parallelism {}, completionMode {mode}{}",
            show(s.completions),
            show(s.parallelism),
            if suspended { ", suspend true" } else { "" }
        )
    })
}

fn pods_running(input: &Input, ctx: &JudgeCtx, ns: &str) -> Outcome {
    const ID: &str = "pods-running";
    let expected = format!("{PODS_WANTED} pods of Job/{JOB_NAME} Running or Succeeded");
    if let Some(shape) = job_shape_problem(&input.job) {
        return Outcome::fail(
            ID,
            "completions 2, parallelism 2, completionMode Indexed",
            &shape,
        )
        .hint("job-shape")
        .with("shape", shape);
    }
    if let Some((reason, message)) = input.job_condition("Failed") {
        return Outcome::fail(ID, expected, format!("Job failed: {reason}: {message}"))
            .hint("job-failed")
            .with("reason", reason)
            .with("message", message)
            .with("namespace", ns);
    }
    // The Job controller writes Complete once every index succeeded; the pods may be gone since.
    if input.job_condition("Complete").is_some() {
        return Outcome::pass(ID);
    }
    if let Err(why) = &input.pods {
        return Outcome::unavailable(ID, why);
    }
    let pods = input.current_pods();
    let by_index: BTreeMap<u32, &PodView> = pods
        .iter()
        .filter_map(|p| p.index.map(|i| (i, *p)))
        .collect();
    let mut pending: Option<Outcome> = None;
    let mut starting = Vec::new();
    let mut missing = 0;
    for i in 0..PODS_WANTED as u32 {
        let Some(p) = by_index.get(&i) else {
            missing += 1;
            continue;
        };
        if let Some((container, reason, message)) = &p.stuck {
            return Outcome::fail(
                ID,
                &expected,
                format!("{}: container {container} {reason}: {message}", p.name),
            )
            .hint("container-waiting")
            .with("pod", &p.name)
            .with("container", container)
            .with("reason", reason)
            .with("message", message);
        }
        match p.phase.as_str() {
            "Succeeded" | "Running" => {}
            "Failed" => {
                let st = input.job.status.clone().unwrap_or_default();
                let backoff = input
                    .job
                    .spec
                    .as_ref()
                    .and_then(|s| s.backoff_limit)
                    .unwrap_or(6);
                pending.get_or_insert(
                    Outcome::pending(ID, Reason::Message("retrying".into()))
                        .with("pod", &p.name)
                        .with("failed", st.failed.unwrap_or(0))
                        .with("backoff_limit", backoff),
                );
            }
            _ => match &p.unschedulable {
                Some(msg) if learner_caused(p, input, ctx) => {
                    return Outcome::fail(
                        ID,
                        &expected,
                        format!("{} unschedulable: {msg}", p.name),
                    )
                    .hint("unschedulable")
                    .with("pod", &p.name)
                    .with("scheduler_message", msg);
                }
                Some(msg) => {
                    pending.get_or_insert(
                        Outcome::pending(ID, Reason::Message("waiting-capacity".into()))
                            .with("pod", &p.name)
                            .with("scheduler_message", msg),
                    );
                }
                None => starting.push(p.name.clone()),
            },
        }
    }
    if let Some(o) = pending {
        return o;
    }
    if missing > 0 {
        return Outcome::pending(ID, Reason::Message("no-pods".into()))
            .with("found", PODS_WANTED as usize - missing)
            .with("expected", PODS_WANTED);
    }
    if !starting.is_empty() {
        return Outcome::pending(ID, Reason::Message("creating".into()))
            .with("pods", starting.join(", "));
    }
    Outcome::pass(ID)
}

/// Whether the pod's own constraints keep it off every node (see the module comment).
fn learner_caused(p: &PodView, input: &Input, ctx: &JudgeCtx) -> bool {
    let Ok(nodes) = &input.nodes else {
        return false;
    };
    if nodes.iter().any(|n| fits_empty_node(&p.spec, n)) {
        return false;
    }
    match ctx.profile {
        Profile::Kind => true,
        Profile::Eks => exceeds_every_allowed_type(&p.spec),
    }
}

/// The pod's requests exceed what each instance type its placement allows can ever offer.
fn exceeds_every_allowed_type(spec: &PodSpec) -> bool {
    let Allowed::Only(types) = allowed_values(spec, INSTANCE_TYPE_LABEL) else {
        return false;
    };
    let req = pod_requests(spec);
    let whole = |r: &str| req.get(r).map(|m| m / 1000).unwrap_or(0);
    types.iter().all(|t| match instances::lookup(t) {
        Some(i) => whole(EFA) > i.efa as i128 || whole(GPU) > i.gpus as i128,
        None => false,
    })
}

/// Could the pod run on this node if the node were empty? Placement (nodeSelector, required node
/// affinity), taints with NoSchedule/NoExecute, cordoning and allocatable resources.
fn fits_empty_node(spec: &PodSpec, n: &NodeView) -> bool {
    if n.unschedulable {
        return false;
    }
    let selector_ok = spec
        .node_selector
        .iter()
        .flatten()
        .all(|(k, v)| n.labels.get(k) == Some(v));
    let terms = required_terms(spec);
    let affinity_ok = terms.is_empty() || terms.iter().any(|t| term_matches(t, n));
    let tolerations = spec.tolerations.as_deref().unwrap_or(&[]);
    let taints_ok = n
        .taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)));
    let resources_ok = pod_requests(spec).iter().all(|(r, want)| {
        let have = n.allocatable.get(r).and_then(|q| milli(q)).unwrap_or(0);
        have >= *want
    });
    selector_ok && affinity_ok && taints_ok && resources_ok
}

/// core/v1 NodeSelectorTerm: every expression holds (In, NotIn, Exists, DoesNotExist, Gt, Lt);
/// `matchFields` supports `metadata.name`.
fn term_matches(t: &NodeSelectorTerm, n: &NodeView) -> bool {
    let exprs = t
        .match_expressions
        .iter()
        .flatten()
        .all(|e| requirement_holds(e, n.labels.get(&e.key)));
    let fields = t.match_fields.iter().flatten().all(|e| {
        let name = n.name.clone();
        requirement_holds(e, (e.key == "metadata.name").then_some(&name))
    });
    exprs && fields
}

fn requirement_holds(e: &NodeSelectorRequirement, have: Option<&String>) -> bool {
    let vals = e.values.as_deref().unwrap_or(&[]);
    let as_int = |s: &str| s.parse::<i64>().ok();
    match e.operator.as_str() {
        "In" => have.is_some_and(|v| vals.contains(v)),
        "NotIn" => have.is_none_or(|v| !vals.contains(v)),
        "Exists" => have.is_some(),
        "DoesNotExist" => have.is_none(),
        "Gt" | "Lt" => {
            let (Some(h), Some(v)) = (
                have.and_then(|h| as_int(h)),
                vals.first().and_then(|v| as_int(v)),
            ) else {
                return false;
            };
            if e.operator == "Gt" {
                h > v
            } else {
                h < v
            }
        }
        _ => false,
    }
}

/// core/v1 Toleration matching a Taint: an empty key with `Exists` tolerates everything; an empty
/// effect matches every effect; `Equal` (the default) compares values.
fn tolerates(tol: &Toleration, t: &Taint) -> bool {
    let effect_ok = tol
        .effect
        .as_deref()
        .is_none_or(|e| e.is_empty() || e == t.effect);
    let op = tol.operator.as_deref().unwrap_or("Equal");
    let key = tol.key.as_deref().unwrap_or("");
    let key_ok = key.is_empty() && op == "Exists" || key == t.key;
    let value_ok =
        op == "Exists" || tol.value.as_deref().unwrap_or("") == t.value.as_deref().unwrap_or("");
    effect_ok && key_ok && value_ok
}

/// What a pod asks the scheduler for, in milli-units per resource: the sum over containers
/// (requests, falling back to limits), or the largest init container if that is more.
fn pod_requests(spec: &PodSpec) -> BTreeMap<String, i128> {
    let of = |c: &Container| -> BTreeMap<String, i128> {
        let r = c.resources.as_ref();
        let mut m: BTreeMap<String, i128> = BTreeMap::new();
        for (k, q) in r.and_then(|r| r.limits.as_ref()).into_iter().flatten() {
            m.insert(k.clone(), milli(&q.0).unwrap_or(0));
        }
        for (k, q) in r.and_then(|r| r.requests.as_ref()).into_iter().flatten() {
            m.insert(k.clone(), milli(&q.0).unwrap_or(0));
        }
        m
    };
    let mut total: BTreeMap<String, i128> = BTreeMap::new();
    for c in &spec.containers {
        for (k, v) in of(c) {
            *total.entry(k).or_insert(0) += v;
        }
    }
    for c in spec.init_containers.iter().flatten() {
        for (k, v) in of(c) {
            let e = total.entry(k).or_insert(0);
            *e = (*e).max(v);
        }
    }
    total
}

/// A resource quantity ("2", "500m", "1.5", "8142364Ki", "2Gi") in milli-units.
fn milli(q: &str) -> Option<i128> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(q.len());
    let (num, suffix) = q.split_at(split);
    let mult: i128 = match suffix {
        "" => 1000,
        "m" => 1,
        "k" => 1_000_000,
        "M" => 1_000_000_000,
        "G" => 1_000_000_000_000,
        "T" => 1_000_000_000_000_000,
        "Ki" => 1000 << 10,
        "Mi" => 1000 << 20,
        "Gi" => 1000 << 30,
        "Ti" => 1000 << 40,
        _ => return None,
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let whole: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut value = whole * mult;
    if !frac.is_empty() {
        let digits: i128 = frac.parse().ok()?;
        value += digits * mult / 10i128.pow(frac.len() as u32);
    }
    Some(value)
}

// ---------------------------------------------------------------------------------------------
// Advice.

fn advise(input: &Input, j: &mut Judgement) {
    for c in &input.spec.containers {
        if env_lookup(c, RDMAV_FORK_SAFE, &input.configmaps) != EnvLookup::Absent {
            j.advise(Advice::new("rdmav-fork-safe").with("container", &c.name));
        }
        if env_lookup(c, FI_EFA_USE_DEVICE_RDMA, &input.configmaps) == EnvLookup::Value("1".into())
        {
            j.advise(Advice::new("fi-efa-use-device-rdma").with("container", &c.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_in_milli_units() {
        assert_eq!(milli("2"), Some(2000));
        assert_eq!(milli("500m"), Some(500));
        assert_eq!(milli("1.5"), Some(1500));
        assert_eq!(milli("1Ki"), Some(1_024_000));
        assert_eq!(milli("32"), Some(32_000));
        assert_eq!(milli("2x"), None);
    }

    #[test]
    fn allowed_values_intersect_selector_and_affinity() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [],
            "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge", "p4d.24xlarge"]}]}
                ]}}}
        }))
        .unwrap();
        assert_eq!(
            allowed_values(&spec, INSTANCE_TYPE_LABEL),
            Allowed::Only(BTreeSet::from(["p5.48xlarge".to_string()]))
        );
        assert_eq!(allowed_values(&spec, ZONE_LABEL), Allowed::Any);
    }

    #[test]
    fn a_term_without_the_key_leaves_it_unrestricted() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]}]},
                    {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}
                ]}}}
        }))
        .unwrap();
        assert_eq!(allowed_values(&spec, ZONE_LABEL), Allowed::Any);
    }

    #[test]
    fn tolerations_match_taints() {
        let taint = Taint {
            key: "node-role.kubernetes.io/control-plane".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        let exists_all = Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        };
        let other = Toleration {
            key: Some("nvidia.com/gpu".into()),
            operator: Some("Exists".into()),
            ..Default::default()
        };
        assert!(tolerates(&exists_all, &taint));
        assert!(!tolerates(&other, &taint));
    }
}
