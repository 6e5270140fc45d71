//! Lab `karpenter-single-az` (quiz 15): a Karpenter NodePool `gpu-training` that launches only
//! on-demand, EFA-capable GPU instances in exactly one Availability Zone.
//!
//! The concept graded is "the pool's requirements leave exactly one AZ". Karpenter intersects
//! requirements key by key, as the kit's `zones::pinned_zone` does, so every arrangement that
//! leaves one zone passes: `In [a]`, `In [a, b]` with `NotIn [b]`, two `In` lists meeting in one
//! zone, or the AZ ID on `topology.k8s.aws/zone-id` (kit `zones`, with its upstream).
//!
//! Spec checks read the NodePool as written; `zone-exists` also reads the nodes, so static mode
//! skips it. State checks read what the controller wrote; where the controller is absent (kind,
//! by design) the framework skips them for the `karpenter` capability.

mod nodepool;

use std::collections::BTreeSet;

use crate::facts::instances::{self, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::facts::Profile;
use crate::observe::kinds::{EC2NODECLASSES, EKS_NODECLASSES, NODECLAIMS, NODEPOOLS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::k8s::conditions::{self, Condition, Status as CondStatus};
use crate::verify::kit::k8s::owned;
use crate::verify::kit::k8s::placement::{allowed_by_requirements, Allowed};
use crate::verify::kit::k8s::version;
use crate::verify::kit::nodes::zones::{self, OnNodes, Pin, ZoneProblem, ZONE_ID_LABEL, ZONE_KEYS};
use crate::verify::views::karpenter::NodePool;
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Status, Verifier};

pub struct KarpenterSingleAz;

// Nodes are always read by the framework (`ctx.nodes_read()`).
static NODEPOOLS_READ: Read = Read::cluster(&NODEPOOLS);
static EC2NODECLASSES_READ: Read = Read::cluster(&EC2NODECLASSES);
static NODECLAIMS_READ: Read = Read::cluster(&NODECLAIMS);
// EKS Auto Mode's own node classes: served only on an Auto Mode cluster.
static EKS_NODECLASSES_READ: Read = Read::cluster(&EKS_NODECLASSES);
static READS: &[&Read] = &[
    &NODEPOOLS_READ,
    &EC2NODECLASSES_READ,
    &NODECLAIMS_READ,
    &EKS_NODECLASSES_READ,
];

const ZONE_SINGLE: &str = "zone-single";
const ZONE_EXISTS: &str = "zone-exists";
const EFA_TYPES: &str = "efa-instance-types";
const ON_DEMAND: &str = "on-demand";
const NODE_CLASS_REF: &str = "node-class-ref";
const NODEPOOL_READY: &str = "nodepool-ready";
const CLAIMS_IN_ZONE: &str = "nodeclaims-in-zone";
const CHECKS: &[&str] = &[
    ZONE_SINGLE,
    ZONE_EXISTS,
    EFA_TYPES,
    ON_DEMAND,
    NODE_CLASS_REF,
    NODEPOOL_READY,
    CLAIMS_IN_ZONE,
];

/// The NodePool the task asks for; workshops prefix cluster-scoped names.
const POOL_BASE: &str = "gpu-training";

/// The EC2NodeClass `trainlab start` creates (labs/15-karpenter-single-az/starter/ec2nodeclass.yaml).
const STARTER_NODE_CLASS: &str = "default";

/// A node class a NodePool may reference on AWS, the read that lists those classes, and the one
/// present without the learner (static mode trusts it).
struct NodeClassKind {
    group: &'static str,
    kind: &'static str,
    read: &'static Read,
    given: &'static str,
}

/// Karpenter's own (aws/karpenter-provider-aws v1.14.1 pkg/apis/v1), whose `default` the
/// lab's starter creates.
static EC2_NODE_CLASS: NodeClassKind = NodeClassKind {
    group: "karpenter.k8s.aws",
    kind: "EC2NodeClass",
    read: &EC2NODECLASSES_READ,
    given: STARTER_NODE_CLASS,
};

/// EKS Auto Mode's (Amazon EKS User Guide, "Create a Node Pool for EKS Auto Mode": an Auto Mode
/// NodePool's `nodeClassRef` is `group: eks.amazonaws.com`, `kind: NodeClass`; the cluster's
/// own class is `default`).
static AUTO_MODE_NODE_CLASS: NodeClassKind = NodeClassKind {
    group: "eks.amazonaws.com",
    kind: "NodeClass",
    read: &EKS_NODECLASSES_READ,
    given: "default",
};

static NODE_CLASS_KINDS: [&NodeClassKind; 2] = [&EC2_NODE_CLASS, &AUTO_MODE_NODE_CLASS];

/// Labels that narrow instance types without naming them (aws/karpenter-provider-aws
/// pkg/apis/v1/labels.go: instance-family, -category, -size, -gpu-name, …): the EFA table is per
/// instance type, so such a requirement cannot be mapped to an exact set of types. EKS Auto
/// Mode's own labels are the same attributes under `eks.amazonaws.com/instance-` (Amazon EKS
/// User Guide, "Create a Node Pool for EKS Auto Mode", supported labels).
const AWS_INSTANCE_LABEL_PREFIXES: [&str; 2] =
    ["karpenter.k8s.aws/instance-", "eks.amazonaws.com/instance-"];

impl Verifier for KarpenterSingleAz {
    fn lab_id(&self) -> &'static str {
        "karpenter-single-az"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let name = ctx.target.cluster_name(POOL_BASE);
        let obj = match ctx.named(&NODEPOOLS_READ, &name, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => return Ok(j),
        };
        let pool = NodePool::from_obj(obj)?;
        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        let zone = zones::pinned_zone(&pool.selector_requirements());

        let mut j = Judgement::default();
        j.push(zone_single(obj, &pool, &zone));
        j.push(zone_exists(&zone, ctx));
        j.push(efa_instance_types(&pool));
        j.push(on_demand(&pool));
        j.push(node_class_ref(&pool, ctx));
        // Without the Karpenter controller (kind, by design) nothing writes status: the
        // framework skips these for the `karpenter` capability, on every source.
        j.push(nodepool_ready(&name, &pool, &conds));
        j.push(nodeclaims_in_zone(&name, obj, &conds, &zone, ctx));
        if let Some(a) = keep_training_alive(&pool) {
            j.advise(a);
        }
        if nodepool::may_use_interruptible_reservations(&pool) {
            let a = Advice::new("interruptible-reservations");
            j.advise(a.with("label", nodepool::RESERVATION_INTERRUPTIBLE_LABEL));
        }
        Ok(j)
    }
}

/// Values joined with `, `, or `—` when there are none.
fn list<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let v: Vec<&str> = values.into_iter().collect();
    if v.is_empty() {
        "—".into()
    } else {
        v.join(", ")
    }
}

/// `key ∈ {a, b}`: the values a key is left with.
fn set_text<'a>(key: &str, values: impl IntoIterator<Item = &'a String>) -> String {
    let v: Vec<&str> = values.into_iter().map(String::as_str).collect();
    format!("{key} ∈ {{{}}}", v.join(", "))
}

// ---------------------------------------------------------------------------------------------
// zone-single (also the apiVersion: the first spec check that reads the pool)

fn zone_single(obj: &Obj, pool: &NodePool, zone: &Result<Vec<Pin>, ZoneProblem>) -> Outcome {
    // Karpenter v1.1 stopped serving v1beta1 (karpenter.sh docs, "v1 Migration"): an object of
    // another version is refused by the API server.
    if let Some(o) = version::unserved(ZONE_SINGLE, obj, &NODEPOOLS.api_version()) {
        return o.hint("api-version");
    }
    let expected = format!("{ZONE_LABEL} In [<zone>] | {ZONE_ID_LABEL} In [<zone-id>]");
    let found = pool.written(&ZONE_KEYS);
    let (hint, key, value) = match zone {
        Ok(pins) => {
            let zones: Vec<&str> = pins.iter().map(|p| p.value.as_str()).collect();
            return Outcome::pass(ZONE_SINGLE)
                .with("zone", zones.join(", "))
                .expected_found(expected, found);
        }
        Err(ZoneProblem::NoRequirement) => ("no-requirement", "key", ZONE_LABEL.to_string()),
        Err(ZoneProblem::NoZone(k)) => ("no-zone", "key", k.to_string()),
        Err(ZoneProblem::Several(v)) => ("several-values", "values", v.join(", ")),
        Err(ZoneProblem::NotIn(v)) => ("not-in", "values", v.join(", ")),
        Err(ZoneProblem::Operator(op)) => ("operator", "operator", op.clone()),
    };
    Outcome::fail(ZONE_SINGLE, expected, found)
        .hint(hint)
        .with(key, value)
        .with("pool", obj.name())
}

// ---------------------------------------------------------------------------------------------
// zone-exists

fn zone_exists(zone: &Result<Vec<Pin>, ZoneProblem>, ctx: &JudgeCtx) -> Outcome {
    let no_zone = || Outcome::skipped(ZONE_EXISTS, Reason::Message("no-single-zone".into()));
    let Ok(pins) = zone else {
        return no_zone();
    };
    let nodes = match ctx.nodes_read() {
        Ok(n) => n,
        Err(why) => return Outcome::unavailable(ZONE_EXISTS, &why),
    };
    // Both a zone name and an AZ ID pinned: the nodes show whether they are the same AZ.
    if let (Some(ids), [name, id]) = (zones::name_and_id_disagree(pins, nodes), &pins[..]) {
        let node_ids = list(ids.iter().map(String::as_str));
        return Outcome::fail(ZONE_EXISTS, format!("{}: {node_ids}", id.key), id.text())
            .hint("mismatch")
            .with("zone", &name.value)
            .with("zone_id", &id.value)
            .with("zone_ids", node_ids);
    }
    // A fail decides, then a pass (an AZ ID kind nodes lack does not hide a checked name).
    let all: Vec<Outcome> = pins
        .iter()
        .map(|p| pin_exists(p, nodes, ctx.profile))
        .collect();
    let by = |s: Status| all.iter().find(|o| o.status == s);
    let o = by(Status::Fail).or(by(Status::Pass)).or(all.first());
    o.cloned().unwrap_or_else(no_zone)
}

fn pin_exists(pin: &Pin, nodes: &[&Obj], profile: Profile) -> Outcome {
    let seen = zones::on_nodes(pin, nodes);
    let listed = list(seen.zones.iter().map(String::as_str));
    let fail = |expected: String| {
        Outcome::fail(ZONE_EXISTS, expected, pin.value.clone())
            .with("zone", &pin.value)
            .with("zones", &listed)
            .with("key", pin.key)
    };
    // On EKS a pool may name a zone of the cluster's Region where no node runs yet.
    let tail = if pin.key == ZONE_LABEL {
        "<letter>"
    } else {
        "-az<n>"
    };
    let regions = list(seen.regions.iter().map(String::as_str));
    let in_region = format!("{}: {regions}{tail}", pin.key);
    match (seen.on_nodes, profile) {
        (OnNodes::Unlabelled, _) => {
            Outcome::skipped(ZONE_EXISTS, Reason::Message("no-node-zones".into()))
                .with("key", pin.key)
        }
        (OnNodes::Present, _) => Outcome::pass(ZONE_EXISTS)
            .expected_found(format!("{}: {listed}", pin.key), pin.value.clone()),
        (_, p) if p != Profile::Eks => fail(format!("{}: {listed}", pin.key)),
        (OnNodes::InRegion, _) => {
            Outcome::pass(ZONE_EXISTS).expected_found(in_region, pin.value.clone())
        }
        (OnNodes::Elsewhere, _) => fail(in_region)
            .hint("other-region")
            .with("regions", regions),
    }
}

// ---------------------------------------------------------------------------------------------
// efa-instance-types

fn efa_instance_types(pool: &NodePool) -> Outcome {
    let efa_types = instances::efa_gpu_types().join(", ");
    let expected = format!("{INSTANCE_TYPE_LABEL} ⊆ {{{efa_types}}}");
    let allowed = match allowed_by_requirements(&pool.selector_requirements(), INSTANCE_TYPE_LABEL)
    {
        Allowed::Only(s) => s,
        Allowed::None => {
            return Outcome::fail(EFA_TYPES, expected, set_text(INSTANCE_TYPE_LABEL, &[]))
                .with("efa_types", efa_types)
        }
        Allowed::Any => {
            // A family or size requirement narrows types without naming them.
            let narrowing = pool.requirements().iter().find(|r| {
                AWS_INSTANCE_LABEL_PREFIXES
                    .iter()
                    .any(|p| r.key.starts_with(p))
            });
            let o = match narrowing {
                Some(r) if pool.requirements_on(INSTANCE_TYPE_LABEL).is_empty() => {
                    Outcome::fail(EFA_TYPES, expected, r.describe())
                        .hint("family-only")
                        .with("key", &r.key)
                }
                _ => Outcome::fail(EFA_TYPES, expected, pool.written(&[INSTANCE_TYPE_LABEL]))
                    .hint("unrestricted"),
            };
            return o.with("efa_types", efa_types);
        }
    };
    let found = set_text(INSTANCE_TYPE_LABEL, &allowed);
    let pick = |bad: fn(Option<&instances::Instance>) -> bool| -> Vec<&str> {
        allowed
            .iter()
            .map(String::as_str)
            .filter(|t| bad(instances::lookup(t)))
            .collect()
    };
    let not_efa_gpu = pick(|i| i.is_some_and(|i| i.efa == 0 || i.gpus == 0));
    let unknown = pick(|i| i.is_none());
    // A known type without EFA or GPUs is the clearer mistake; report it before unknown ones.
    let (hint, types) = match (not_efa_gpu.is_empty(), unknown.is_empty()) {
        (false, _) => ("not-efa-gpu", not_efa_gpu),
        (true, false) => ("unknown-type", unknown),
        (true, true) => return Outcome::pass(EFA_TYPES).expected_found(expected, found),
    };
    Outcome::fail(EFA_TYPES, expected, found)
        .hint(hint)
        .with("types", types.join(", "))
        .with("efa_types", efa_types)
}

// ---------------------------------------------------------------------------------------------
// on-demand

/// `on-demand`: nothing the pool launches is reclaimed with a two-minute notice: on-demand, or
/// capacity reservations (`reserved`, the usual way to get p5: ODCRs and Capacity Blocks), never
/// spot (`nodepool::only_unreclaimed`).
fn on_demand(pool: &NodePool) -> Outcome {
    let expected = format!(
        "{CAPACITY_TYPE_LABEL} ⊆ {{{}}}",
        nodepool::NOT_RECLAIMED.join(", ")
    );
    // The capacity types on offer are what the pool's requirements narrow (`nodepool`).
    let allowed = nodepool::capacity_types(pool);
    let found = set_text(CAPACITY_TYPE_LABEL, &allowed);
    if nodepool::only_unreclaimed(pool) {
        return Outcome::pass(ON_DEMAND).expected_found(expected, found);
    }
    let o = Outcome::fail(ON_DEMAND, expected, found)
        .with("allowed", list(allowed.iter().map(String::as_str)));
    if pool.requirements_on(CAPACITY_TYPE_LABEL).is_empty() {
        o.hint("no-requirement")
    } else {
        o
    }
}

// ---------------------------------------------------------------------------------------------
// node-class-ref

fn node_class_ref(pool: &NodePool, ctx: &JudgeCtx) -> Outcome {
    let want = |class: &NodeClassKind, name: &str| {
        let (group, kind) = (class.group, class.kind);
        format!("nodeClassRef: {{group: {group}, kind: {kind}, name: {name}}}")
    };
    let expected = want(&EC2_NODE_CLASS, "<name>");
    let Some(r) = pool.spec.template.spec.node_class_ref.as_ref() else {
        return Outcome::fail(NODE_CLASS_REF, expected, "—")
            .hint("no-ref")
            .with("fields", "group, kind, name");
    };
    let found = format!(
        "nodeClassRef: {{group: {}, kind: {}, name: {}}}",
        r.group, r.kind, r.name
    );
    let empty: Vec<&str> = [("group", &r.group), ("kind", &r.kind), ("name", &r.name)]
        .iter()
        .filter(|(_, v)| v.trim().is_empty())
        .map(|(k, _)| *k)
        .collect();
    if !empty.is_empty() {
        return Outcome::fail(NODE_CLASS_REF, expected, found)
            .hint("no-ref")
            .with("fields", empty.join(", "));
    }
    let Some(class) = NODE_CLASS_KINDS
        .into_iter()
        .find(|c| r.group == c.group && r.kind == c.kind)
    else {
        return Outcome::fail(NODE_CLASS_REF, expected, found)
            .hint("wrong-class")
            .with("group", &r.group)
            .with("kind", &r.kind);
    };
    let pass = Outcome::pass(NODE_CLASS_REF).expected_found(want(class, &r.name), found.clone());
    let classes = match ctx.list(class.read) {
        Ok(c) => c,
        // The cluster does not serve this kind of class, but serves the other: the pool must
        // name the kind this cluster has (an Auto Mode cluster has no EC2NodeClass CRD; another
        // cluster has no Auto Mode NodeClass).
        Err(why @ Unavailable::NotServed { .. }) => {
            let other = NODE_CLASS_KINDS
                .into_iter()
                .find(|c| c.kind != class.kind && ctx.list(c.read).is_ok());
            return match other {
                Some(other) => Outcome::fail(NODE_CLASS_REF, want(other, "<name>"), found)
                    .hint(if other.kind == AUTO_MODE_NODE_CLASS.kind {
                        "auto-mode-cluster"
                    } else {
                        "auto-mode-off"
                    })
                    .with("kind", other.kind)
                    .with("group", other.group),
                None => Outcome::unavailable(NODE_CLASS_REF, &why),
            };
        }
        Err(why) => return Outcome::unavailable(NODE_CLASS_REF, &why),
    };
    if classes.iter().any(|c| c.name() == r.name) {
        return pass;
    }
    let seen = list(classes.iter().map(|c| c.name()).collect::<BTreeSet<_>>());
    if ctx.is_static() {
        // The files are not the cluster: `trainlab start` creates the starter's class (and an
        // Auto Mode cluster has its own `default`); any other one may exist there, but the
        // files cannot show it.
        if r.name == class.given {
            return pass;
        }
        return Outcome::skipped(NODE_CLASS_REF, Reason::Message("class-unseen".into()))
            .with("name", &r.name)
            .with("kind", class.kind)
            .with("classes", seen);
    }
    Outcome::fail(
        NODE_CLASS_REF,
        format!("{}: {}", class.kind, r.name),
        format!("{}: {seen}", class.kind),
    )
    .hint("class-missing")
    .with("name", &r.name)
    .with("kind", class.kind)
    .with("classes", seen)
}

// ---------------------------------------------------------------------------------------------
// State checks

/// `Type=Status (Reason)`: the condition without its free-text message.
fn short(c: &Condition) -> String {
    match &c.reason {
        Some(r) => format!("{}={} ({r})", c.type_, c.status.as_str()),
        None => format!("{}={}", c.type_, c.status.as_str()),
    }
}

fn nodepool_ready(name: &str, pool: &NodePool, conds: &[Condition]) -> Outcome {
    let Some(ready) = conditions::find(conds, "Ready") else {
        return Outcome::pending(NODEPOOL_READY, Reason::Message("not-reconciled".into()))
            .with("pool", name);
    };
    // A condition computed for an older generation says nothing about the spec as it is now.
    if ready.is_stale(pool.metadata.generation) {
        return Outcome::pending(NODEPOOL_READY, Reason::Message("stale".into()))
            .with("observed", ready.observed_generation.unwrap_or_default())
            .with("generation", pool.metadata.generation.unwrap_or_default());
    }
    match ready.status {
        CondStatus::True => {
            Outcome::pass(NODEPOOL_READY).expected_found("Ready=True", short(ready))
        }
        CondStatus::False => {
            // Ready is the root condition: the dependents that are False say why (kit
            // `nodepool`).
            let why = nodepool::not_ready_causes(ready, conds);
            let causes = why.iter().copied().filter(|c| c.type_ != ready.type_);
            let found: Vec<String> = std::iter::once(ready).chain(causes).map(short).collect();
            let details: Vec<String> = why.iter().map(|c| c.describe()).collect();
            let node_class = pool.spec.template.spec.node_class_ref.as_ref();
            Outcome::fail(NODEPOOL_READY, "Ready=True", found.join("; "))
                .with("details", details.join("; "))
                .with(
                    "node_class",
                    node_class.map(|r| r.name.as_str()).unwrap_or("—"),
                )
        }
        _ => Outcome::pending(NODEPOOL_READY, Reason::Cluster(ready.describe())),
    }
}

fn nodeclaims_in_zone(
    name: &str,
    pool_obj: &Obj,
    conds: &[Condition],
    zone: &Result<Vec<Pin>, ZoneProblem>,
    ctx: &JudgeCtx,
) -> Outcome {
    let Some(pin) = zone.as_ref().ok().and_then(|p| p.first()) else {
        return Outcome::skipped(CLAIMS_IN_ZONE, Reason::Message("no-single-zone".into()));
    };
    let claims = match ctx.list(&NODECLAIMS_READ) {
        Ok(c) => c,
        Err(why) => return Outcome::unavailable(CLAIMS_IN_ZONE, &why),
    };
    // Karpenter sets an ownerReference to the pool's uid on every NodeClaim it creates; the
    // `karpenter.sh/nodepool` label alone can be forged.
    let Ok(owned) = owned::owned_by(pool_obj, &claims) else {
        return Outcome::unavailable(CLAIMS_IN_ZONE, &Unavailable::NeedsLiveCluster);
    };
    let expected = pin.text();
    if owned.is_empty() {
        if conds.is_empty() {
            return Outcome::pending(CLAIMS_IN_ZONE, Reason::Message("not-reconciled".into()))
                .with("pool", name);
        }
        return Outcome::pass(CLAIMS_IN_ZONE).expected_found(expected, "—");
    }
    // The zone labels appear once the instance is launched (core `PopulateNodeClaimDetails`).
    let at = |c: &Obj| c.label(pin.key).map(|z| format!("{}: {z}", c.name()));
    let away = |c: &&Obj| c.label(pin.key).is_some_and(|z| z != pin.value);
    let (current, terminating) = (
        owned.current.iter().copied(),
        owned.terminating.iter().copied(),
    );
    let elsewhere: Vec<String> = current.clone().filter(away).filter_map(at).collect();
    let leaving: Vec<String> = terminating.filter(away).filter_map(at).collect();
    let launching: Vec<&str> = current
        .clone()
        .filter(|c| c.label(pin.key).is_none())
        .map(|c| c.name())
        .collect();
    if !elsewhere.is_empty() {
        return Outcome::fail(CLAIMS_IN_ZONE, expected, elsewhere.join(", "))
            .with("zone", &pin.value)
            .with("claims", elsewhere.join(", "));
    }
    if !leaving.is_empty() {
        return Outcome::pending(CLAIMS_IN_ZONE, Reason::Message("claims-leaving".into()))
            .with("claims", leaving.join(", "));
    }
    if !launching.is_empty() {
        return Outcome::pending(CLAIMS_IN_ZONE, Reason::Message("claims-launching".into()))
            .with("claims", launching.join(", "));
    }
    let placed: Vec<String> = current.filter_map(at).collect();
    Outcome::pass(CLAIMS_IN_ZONE)
        .with("count", placed.len())
        .expected_found(expected, placed.join(", "))
}

// ---------------------------------------------------------------------------------------------
// Advice

/// Advice when the pool's disruption settings can stop a long training (`nodepool`).
fn keep_training_alive(pool: &NodePool) -> Option<Advice> {
    let (policy, budgets) = nodepool::disrupts_training(pool)?;
    let a = Advice::new("keep-training-alive").with("policy", policy);
    Some(a.with("budgets", budgets))
}
