//! Lab `karpenter-single-az` (quiz 15): a Karpenter NodePool `gpu-training` that launches only
//! on-demand, EFA-capable GPU instances in exactly one Availability Zone.
//!
//! Spec checks read the NodePool as written; `zone-exists` also reads the nodes (their zone and
//! region labels), so it is skipped in static mode. State checks read what the Karpenter
//! controller wrote (NodePool conditions, NodeClaims). kind has only the CRDs, so there they are
//! skipped with a lab message instead of waiting for a controller that will never come.
//!
//! Decisions worth knowing:
//! - `zone-exists` and `nodeclaims-in-zone` need the one zone `zone-single` found. When there is
//!   none they are skipped ("no single zone to look up") rather than failing a second time for
//!   the same mistake.
//! - On EKS a NodePool may rightly name a zone where no node runs yet, so `zone-exists` accepts
//!   any zone of the nodes' region; on kind the zone must be one of the nodes' zones (the labels
//!   `trainlab setup kind` gives them).
//! - `node-class-ref` checks the reference's fields everywhere, and that the EC2NodeClass exists
//!   only where the source can show cluster objects (not in static mode: the class comes from
//!   the lab's starter, not from the learner's file).
//! - NodeClaims belong to the pool by ownerReference uid, never by the `karpenter.sh/nodepool`
//!   label alone, which anyone can set.

use std::collections::BTreeSet;

use super::views::karpenter::{Budget, NodeClaim, NodePool, Requirement};
use super::{Read, Advice, JudgeCtx, Judgement, Outcome, Reason, Verifier};
use crate::observe::kinds::{EC2NODECLASSES, NODECLAIMS, NODEPOOLS, NODES};
use crate::observe::{InputError, Obj};
use crate::profile::instances::{self, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::profile::Profile;

pub struct KarpenterSingleAz;

// Declared once: reads() plans them and judge() looks them up by the same declaration.
static NODEPOOLS_READ: Read = Read::cluster(&NODEPOOLS);
static EC2NODECLASSES_READ: Read = Read::cluster(&EC2NODECLASSES);
static NODECLAIMS_READ: Read = Read::cluster(&NODECLAIMS);
static NODES_READ: Read = Read::cluster(&NODES);
static READS: &[&Read] = &[&NODEPOOLS_READ, &EC2NODECLASSES_READ, &NODECLAIMS_READ, &NODES_READ];

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

/// Well-known region label (k8s.io/api/core/v1 well_known_labels.go `LabelTopologyRegion`).
const REGION_LABEL: &str = "topology.kubernetes.io/region";

/// AWS node-class reference (aws/karpenter-provider-aws v1.14.1 pkg/apis/v1: group
/// `karpenter.k8s.aws`, kind `EC2NodeClass`).
const NODE_CLASS_GROUP: &str = "karpenter.k8s.aws";
const NODE_CLASS_KIND: &str = "EC2NodeClass";

/// Labels that narrow instance types without naming them (aws/karpenter-provider-aws
/// pkg/apis/v1/labels.go: instance-family, -category, -generation, -size, -gpu-name, …). The
/// EFA table in `profile::instances` is per instance type, so such a requirement cannot be mapped
/// to an exact set of types.
const AWS_INSTANCE_LABEL_PREFIX: &str = "karpenter.k8s.aws/instance-";

/// Capacity types Karpenter knows (kubernetes-sigs/karpenter pkg/apis/v1/labels.go:
/// `CapacityTypeSpot`, `CapacityTypeOnDemand`, `CapacityTypeReserved`). Without a requirement any
/// of them the provider offers may be chosen (karpenter.sh docs, NodePools: "If a requirement is
/// not defined for a well known label, any value available to the cloud provider may be chosen").
const CAPACITY_TYPES: &[&str] = &["spot", "on-demand", "reserved"];
const ON_DEMAND_VALUE: &str = "on-demand";

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
        let pools = match ctx.list(&NODEPOOLS_READ) {
            Ok(p) => p,
            Err(why) => return Ok(Judgement::every(CHECKS, |c| Outcome::unavailable(c, &why))),
        };
        let Some(pool_obj) = pools.iter().copied().find(|o| o.name() == name) else {
            return Ok(missing_pool(&name, &pools));
        };
        let pool = NodePool::from_obj(pool_obj)?;
        let zone = single_zone(&pool);

        let mut j = Judgement::default();
        j.push(zone_single(&name, &zone));
        j.push(zone_exists(&zone, ctx));
        j.push(efa_instance_types(&pool));
        j.push(on_demand(&pool));
        j.push(node_class_ref(&pool, ctx));
        j.push(nodepool_ready(&name, &pool, ctx));
        j.push(nodeclaims_in_zone(&name, pool_obj, &pool, &zone, ctx)?);
        if let Some(a) = keep_training_alive(&pool) {
            j.advise(a);
        }
        Ok(j)
    }
}

/// No NodePool of the expected name: every check fails and says what to create.
fn missing_pool(name: &str, pools: &[&Obj]) -> Judgement {
    let seen: Vec<&str> = pools.iter().map(|o| o.name()).collect();
    let found = if seen.is_empty() {
        "no NodePool".to_string()
    } else {
        format!("no NodePool named {name}; NodePools: {}", seen.join(", "))
    };
    Judgement::every(CHECKS, |c| {
        Outcome::fail(
            c,
            format!("NodePool {name} (karpenter.sh/v1)"),
            found.clone(),
        )
        .hint("no-nodepool")
        .with("pool", name)
    })
}

fn fmt_values(values: &[String]) -> String {
    format!("[{}]", values.join(", "))
}

fn fmt_requirement(r: &Requirement) -> String {
    if r.values.is_empty() {
        format!("{} {}", r.key, r.operator)
    } else {
        format!("{} {} {}", r.key, r.operator, fmt_values(&r.values))
    }
}

// ---------------------------------------------------------------------------------------------
// zone-single

/// Why the NodePool does not pin exactly one zone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ZoneProblem {
    Missing,
    /// More than one requirement on the zone key (Karpenter intersects them; one is clearer).
    Duplicate(Vec<Requirement>),
    /// `NotIn` excludes zones, so every other zone stays allowed.
    NotIn(Requirement),
    /// Exists, DoesNotExist, Gt, Lt, Gte, Lte: none of them names a zone.
    Operator(Requirement),
    /// `In` with zero or several values.
    SeveralValues(Requirement),
}

fn single_zone(pool: &NodePool) -> Result<String, ZoneProblem> {
    let reqs = pool.requirements_on(ZONE_LABEL);
    match reqs.as_slice() {
        [] => Err(ZoneProblem::Missing),
        [r] if r.operator == "NotIn" => Err(ZoneProblem::NotIn((*r).clone())),
        [r] if r.operator != "In" => Err(ZoneProblem::Operator((*r).clone())),
        [r] if r.values.len() != 1 => Err(ZoneProblem::SeveralValues((*r).clone())),
        [r] => Ok(r.values[0].clone()),
        many => Err(ZoneProblem::Duplicate(
            many.iter().map(|r| (*r).clone()).collect(),
        )),
    }
}

fn zone_single(pool: &str, zone: &Result<String, ZoneProblem>) -> Outcome {
    let expected = format!("exactly one requirement `{ZONE_LABEL} In [<one zone>]`");
    let problem = match zone {
        Ok(z) => {
            return Outcome::pass(ZONE_SINGLE)
                .with("zone", z)
                .expected_found(expected, format!("{ZONE_LABEL} In [{z}]"))
        }
        Err(p) => p,
    };
    let (found, hint, o) = match problem {
        ZoneProblem::Missing => (format!("no requirement on {ZONE_LABEL}"), "missing", None),
        ZoneProblem::Duplicate(reqs) => {
            let all: Vec<String> = reqs.iter().map(fmt_requirement).collect();
            (
                format!(
                    "{} requirements on {ZONE_LABEL}: {}",
                    reqs.len(),
                    all.join("; ")
                ),
                "duplicate",
                Some(("count", reqs.len().to_string())),
            )
        }
        ZoneProblem::NotIn(r) => (
            fmt_requirement(r),
            "not-in",
            Some(("values", r.values.join(", "))),
        ),
        ZoneProblem::Operator(r) => (
            fmt_requirement(r),
            "operator",
            Some(("operator", r.operator.clone())),
        ),
        ZoneProblem::SeveralValues(r) => (
            format!("{} ({} values)", fmt_requirement(r), r.values.len()),
            "several-values",
            Some(("values", r.values.join(", "))),
        ),
    };
    let mut out = Outcome::fail(ZONE_SINGLE, expected, found)
        .hint(hint)
        .with("pool", pool);
    if let Some((k, v)) = o {
        out = out.with(k, v);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// zone-exists

fn zone_exists(zone: &Result<String, ZoneProblem>, ctx: &JudgeCtx) -> Outcome {
    let Ok(zone) = zone else {
        return Outcome::skipped(ZONE_EXISTS, Reason::Message("no-single-zone".into()));
    };
    let nodes = match ctx.nodes_read() {
        Ok(n) => n,
        Err(why) => return Outcome::unavailable(ZONE_EXISTS, &why),
    };
    let zones: BTreeSet<&str> = nodes.iter().filter_map(|n| n.label(ZONE_LABEL)).collect();
    if zones.is_empty() {
        return Outcome::skipped(ZONE_EXISTS, Reason::Message("no-node-zones".into()));
    }
    let node_zones = zones.iter().copied().collect::<Vec<_>>().join(", ");
    if zones.contains(zone.as_str()) {
        return Outcome::pass(ZONE_EXISTS)
            .with("zone", zone)
            .expected_found(format!("a zone of the nodes ({node_zones})"), zone.clone());
    }
    if ctx.profile == Profile::Eks {
        // A NodePool may target a zone where nothing runs yet: any zone of the cluster's region
        // is fine. The region comes from the nodes' region label, or from their zone names.
        let regions = node_regions(&nodes, &zones);
        let region_list = regions.iter().cloned().collect::<Vec<_>>().join(", ");
        if regions.iter().any(|r| zone_in_region(zone, r)) {
            return Outcome::pass(ZONE_EXISTS)
                .with("zone", zone)
                .expected_found(
                    format!("a zone of region {region_list}"),
                    format!("{zone} (no node there yet; nodes run in {node_zones})"),
                );
        }
        return Outcome::fail(
            ZONE_EXISTS,
            format!("a zone of the cluster's region {region_list} (nodes run in {node_zones})"),
            zone.clone(),
        )
        .hint("other-region")
        .with("zone", zone)
        .with("regions", region_list)
        .with("zones", node_zones);
    }
    Outcome::fail(
        ZONE_EXISTS,
        format!("one of the nodes' zones: {node_zones}"),
        zone.clone(),
    )
    .with("zone", zone)
    .with("zones", node_zones)
}

fn node_regions(nodes: &[&Obj], zones: &BTreeSet<&str>) -> BTreeSet<String> {
    let labelled: BTreeSet<String> = nodes
        .iter()
        .filter_map(|n| n.label(REGION_LABEL))
        .map(str::to_string)
        .collect();
    if !labelled.is_empty() {
        return labelled;
    }
    // `us-west-2a` → `us-west-2`: AWS zone names are the region plus a letter.
    zones
        .iter()
        .map(|z| {
            z.trim_end_matches(|c: char| c.is_ascii_lowercase())
                .to_string()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// `us-west-2a` is in `us-west-2`; so are Local Zones such as `us-west-2-lax-1a`.
fn zone_in_region(zone: &str, region: &str) -> bool {
    let Some(suffix) = zone.strip_prefix(region) else {
        return false;
    };
    let letter = suffix.len() == 1 && suffix.chars().all(|c| c.is_ascii_lowercase());
    let local = suffix.len() > 1
        && suffix.starts_with('-')
        && suffix[1..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    letter || local
}

// ---------------------------------------------------------------------------------------------
// efa-instance-types

fn efa_instance_types(pool: &NodePool) -> Outcome {
    let efa_types = instances::efa_gpu_types().join(", ");
    let expected =
        format!("{INSTANCE_TYPE_LABEL} In a list of EFA-capable GPU types ({efa_types})");
    let reqs = pool.requirements_on(INSTANCE_TYPE_LABEL);
    let Some(allowed) = allowed_instance_types(&reqs) else {
        return unrestricted_types(pool, &reqs, expected, efa_types);
    };
    if allowed.is_empty() {
        let written: Vec<String> = reqs.iter().map(|r| fmt_requirement(r)).collect();
        let found = format!("{}: no instance type is left", written.join("; "));
        return Outcome::fail(EFA_TYPES, expected, found).with("efa_types", efa_types);
    }
    let not_efa_gpu: Vec<&str> = allowed
        .iter()
        .copied()
        .filter(|t| instances::lookup(t).is_some_and(|i| i.efa == 0 || i.gpus == 0))
        .collect();
    let unknown: Vec<&str> = allowed
        .iter()
        .copied()
        .filter(|t| instances::lookup(t).is_none())
        .collect();
    let found = format!("allowed: {}", allowed.join(", "));
    // A known type without EFA or GPUs is the clearer mistake; report it before unknown ones.
    let (hint, types) = match (not_efa_gpu.is_empty(), unknown.is_empty()) {
        (false, _) => ("not-efa-gpu", not_efa_gpu),
        (true, false) => ("unknown-type", unknown),
        (true, true) => {
            return Outcome::pass(EFA_TYPES)
                .with("types", allowed.join(", "))
                .expected_found(expected, found)
        }
    };
    Outcome::fail(EFA_TYPES, expected, found)
        .hint(hint)
        .with("types", types.join(", "))
        .with("efa_types", efa_types)
}

/// The instance types the requirements allow, or None when no `In` list names them (any type
/// stays allowed). Karpenter ANDs requirements: the intersection of the `In` lists minus the
/// `NotIn` values, in the order of the first list.
fn allowed_instance_types<'a>(reqs: &[&'a Requirement]) -> Option<Vec<&'a str>> {
    let ins: Vec<&Requirement> = reqs
        .iter()
        .copied()
        .filter(|r| r.operator == "In")
        .collect();
    let (first, rest) = ins.split_first()?;
    let excluded: BTreeSet<&str> = reqs
        .iter()
        .filter(|r| r.operator == "NotIn")
        .flat_map(|r| r.values.iter().map(String::as_str))
        .collect();
    let allowed = first
        .values
        .iter()
        .map(String::as_str)
        .filter(|t| rest.iter().all(|r| r.values.iter().any(|v| v == t)))
        .filter(|t| !excluded.contains(t))
        .collect();
    Some(allowed)
}

/// No `In` list of instance types: either a family/size requirement we cannot map to EFA
/// figures, or nothing that keeps non-EFA types out.
fn unrestricted_types(
    pool: &NodePool,
    reqs: &[&Requirement],
    expected: String,
    efa_types: String,
) -> Outcome {
    let narrowing = pool
        .requirements()
        .iter()
        .find(|r| r.key.starts_with(AWS_INSTANCE_LABEL_PREFIX));
    if let (Some(r), true) = (narrowing, reqs.is_empty()) {
        return Outcome::fail(EFA_TYPES, expected, fmt_requirement(r))
            .hint("family-only")
            .with("key", &r.key)
            .with("efa_types", efa_types);
    }
    let found = if reqs.is_empty() {
        format!("no requirement on {INSTANCE_TYPE_LABEL}: any instance type may launch")
    } else {
        let all: Vec<String> = reqs.iter().map(|r| fmt_requirement(r)).collect();
        format!(
            "{}: no `In` list, so other types stay allowed",
            all.join("; ")
        )
    };
    Outcome::fail(EFA_TYPES, expected, found)
        .hint("unrestricted")
        .with("efa_types", efa_types)
}

// ---------------------------------------------------------------------------------------------
// on-demand

fn on_demand(pool: &NodePool) -> Outcome {
    let expected = format!("{CAPACITY_TYPE_LABEL} In [{ON_DEMAND_VALUE}]");
    let reqs = pool.requirements_on(CAPACITY_TYPE_LABEL);
    if reqs.is_empty() {
        return Outcome::fail(
            ON_DEMAND,
            expected,
            format!("no requirement on {CAPACITY_TYPE_LABEL}: spot (and reserved) capacity may be chosen"),
        )
        .hint("missing");
    }
    let allowed = allowed_capacity_types(&reqs);
    let written: Vec<String> = reqs.iter().map(|r| fmt_requirement(r)).collect();
    let allowed_text = if allowed.is_empty() {
        "none".to_string()
    } else {
        allowed.iter().cloned().collect::<Vec<_>>().join(", ")
    };
    let found = format!("{} (allowed: {allowed_text})", written.join("; "));
    if allowed.len() == 1 && allowed.contains(ON_DEMAND_VALUE) {
        return Outcome::pass(ON_DEMAND).expected_found(expected, found);
    }
    Outcome::fail(ON_DEMAND, expected, found).with("allowed", allowed_text)
}

/// The capacity types the requirements leave, starting from the well-known ones: `In` narrows
/// (and may name values outside the well-known set, which then count too), `NotIn` removes,
/// `DoesNotExist` leaves nothing.
fn allowed_capacity_types(reqs: &[&Requirement]) -> BTreeSet<String> {
    let mut allowed: Option<BTreeSet<String>> = None;
    let mut excluded: BTreeSet<String> = BTreeSet::new();
    for r in reqs {
        match r.operator.as_str() {
            "In" => {
                let vals: BTreeSet<String> = r.values.iter().cloned().collect();
                allowed = Some(match allowed {
                    None => vals,
                    Some(a) => a.intersection(&vals).cloned().collect(),
                });
            }
            "NotIn" => excluded.extend(r.values.iter().cloned()),
            "DoesNotExist" => allowed = Some(BTreeSet::new()),
            _ => {}
        }
    }
    let base = allowed.unwrap_or_else(|| CAPACITY_TYPES.iter().map(|s| s.to_string()).collect());
    base.difference(&excluded).cloned().collect()
}

// ---------------------------------------------------------------------------------------------
// node-class-ref

fn node_class_ref(pool: &NodePool, ctx: &JudgeCtx) -> Outcome {
    let expected = format!("nodeClassRef {{group: {NODE_CLASS_GROUP}, kind: {NODE_CLASS_KIND}, name: <an EC2NodeClass>}}");
    let Some(r) = pool.spec.template.spec.node_class_ref.as_ref() else {
        return Outcome::fail(
            NODE_CLASS_REF,
            expected,
            "no spec.template.spec.nodeClassRef",
        )
        .hint("missing");
    };
    let found = format!(
        "nodeClassRef {{group: {}, kind: {}, name: {}}}",
        r.group, r.kind, r.name
    );
    let empty: Vec<&str> = [("group", &r.group), ("kind", &r.kind), ("name", &r.name)]
        .iter()
        .filter(|(_, v)| v.trim().is_empty())
        .map(|(k, _)| *k)
        .collect();
    if !empty.is_empty() {
        return Outcome::fail(NODE_CLASS_REF, expected, found)
            .hint("missing")
            .with("fields", empty.join(", "));
    }
    if r.group != NODE_CLASS_GROUP || r.kind != NODE_CLASS_KIND {
        return Outcome::fail(NODE_CLASS_REF, expected, found)
            .hint("wrong-class")
            .with("group", &r.group)
            .with("kind", &r.kind);
    }
    if ctx.is_static() {
        // The EC2NodeClass comes from the lab's starter, not from the learner's file.
        return Outcome::pass(NODE_CLASS_REF)
            .with("name", &r.name)
            .expected_found(expected, found);
    }
    let classes = match ctx.list(&EC2NODECLASSES_READ) {
        Ok(c) => c,
        Err(why) => return Outcome::unavailable(NODE_CLASS_REF, &why),
    };
    if classes.iter().any(|c| c.name() == r.name) {
        return Outcome::pass(NODE_CLASS_REF)
            .with("name", &r.name)
            .expected_found(expected, found);
    }
    let names: Vec<&str> = classes.iter().map(|c| c.name()).collect();
    let seen = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    Outcome::fail(
        NODE_CLASS_REF,
        format!("an EC2NodeClass named {}", r.name),
        format!("no EC2NodeClass {}; EC2NodeClasses: {seen}", r.name),
    )
    .hint("class-missing")
    .with("name", &r.name)
    .with("classes", seen)
}

// ---------------------------------------------------------------------------------------------
// nodepool-ready

/// kind serves the Karpenter CRDs without a controller: nothing will ever write status.
fn no_controller_on_kind(pool: &NodePool, ctx: &JudgeCtx) -> bool {
    pool.status.conditions.is_empty() && ctx.profile == Profile::Kind
}

fn nodepool_ready(name: &str, pool: &NodePool, ctx: &JudgeCtx) -> Outcome {
    if no_controller_on_kind(pool, ctx) {
        return Outcome::skipped(NODEPOOL_READY, Reason::Message("kind-no-controller".into()));
    }
    let Some(ready) = pool.condition("Ready") else {
        return Outcome::pending(NODEPOOL_READY, Reason::Message("not-reconciled".into()))
            .with("pool", name);
    };
    // A condition computed for an older generation says nothing about the spec as it is now.
    if let (Some(seen), Some(current)) = (ready.observed_generation, pool.metadata.generation) {
        if seen < current {
            return Outcome::pending(NODEPOOL_READY, Reason::Message("stale".into()))
                .with("observed", seen)
                .with("generation", current);
        }
    }
    match ready.status.as_str() {
        "True" => Outcome::pass(NODEPOOL_READY).expected_found("Ready=True", ready.describe()),
        "False" => {
            // Ready is the root condition: the dependents that are False say why.
            let causes: Vec<String> = pool
                .status
                .conditions
                .iter()
                .filter(|c| c.type_ != "Ready" && c.status == "False")
                .map(|c| c.describe())
                .collect();
            let details = if causes.is_empty() {
                ready.describe()
            } else {
                causes.join("; ")
            };
            let node_class = pool
                .spec
                .template
                .spec
                .node_class_ref
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_default();
            Outcome::fail(
                NODEPOOL_READY,
                "Ready=True",
                format!("{}; {details}", ready.describe()),
            )
            .with("details", details)
            .with("node_class", node_class)
        }
        _ => Outcome::pending(NODEPOOL_READY, Reason::Cluster(ready.describe())),
    }
}

// ---------------------------------------------------------------------------------------------
// nodeclaims-in-zone

fn nodeclaims_in_zone(
    name: &str,
    pool_obj: &Obj,
    pool: &NodePool,
    zone: &Result<String, ZoneProblem>,
    ctx: &JudgeCtx,
) -> Result<Outcome, InputError> {
    if no_controller_on_kind(pool, ctx) {
        return Ok(Outcome::skipped(
            CLAIMS_IN_ZONE,
            Reason::Message("kind-no-controller".into()),
        ));
    }
    let Ok(zone) = zone else {
        return Ok(Outcome::skipped(
            CLAIMS_IN_ZONE,
            Reason::Message("no-single-zone".into()),
        ));
    };
    let claims = match ctx.list(&NODECLAIMS_READ) {
        Ok(c) => c,
        Err(why) => return Ok(Outcome::unavailable(CLAIMS_IN_ZONE, &why)),
    };
    // Karpenter sets an ownerReference to the NodePool's uid on every NodeClaim it creates; the
    // `karpenter.sh/nodepool` label alone can be forged.
    let owned: Vec<&Obj> = claims
        .iter()
        .copied()
        .filter(|c| c.is_owned_by(pool_obj))
        .collect();
    let expected = format!("every NodeClaim of NodePool {name} in {zone}");
    if owned.is_empty() {
        if pool.status.conditions.is_empty() {
            return Ok(
                Outcome::pending(CLAIMS_IN_ZONE, Reason::Message("not-reconciled".into()))
                    .with("pool", name),
            );
        }
        return Ok(Outcome::pass(CLAIMS_IN_ZONE).expected_found(expected, "no NodeClaims yet"));
    }
    let mut elsewhere = Vec::new();
    let mut launching = Vec::new();
    let mut placed = Vec::new();
    for c in &owned {
        // Parsing checks the claim's shape (a malformed object is bad input, not a fail).
        NodeClaim::from_obj(c)?;
        // The zone label appears once the instance is launched (PopulateNodeClaimDetails).
        match c.label(ZONE_LABEL) {
            Some(z) if z == zone => placed.push(format!("{} in {z}", c.name())),
            Some(z) => elsewhere.push(format!("{} in {z}", c.name())),
            None => launching.push(c.name().to_string()),
        }
    }
    if !elsewhere.is_empty() {
        return Ok(
            Outcome::fail(CLAIMS_IN_ZONE, expected, elsewhere.join(", "))
                .with("zone", zone)
                .with("claims", elsewhere.join(", ")),
        );
    }
    if !launching.is_empty() {
        return Ok(
            Outcome::pending(CLAIMS_IN_ZONE, Reason::Message("claims-launching".into()))
                .with("claims", launching.join(", ")),
        );
    }
    Ok(Outcome::pass(CLAIMS_IN_ZONE)
        .with("count", placed.len())
        .expected_found(expected, placed.join(", ")))
}

// ---------------------------------------------------------------------------------------------
// advice

/// A budget of zero nodes that is always active (no schedule) and covers drift, the disruption
/// that would still replace a busy node under `WhenEmpty`.
fn blocks_disruption(b: &Budget) -> bool {
    let zero = matches!(b.nodes.trim(), "0" | "0%");
    let always = b.schedule.is_none();
    let covers_drift = b.reasons.is_empty() || b.reasons.iter().any(|r| r == "Drifted");
    zero && always && covers_drift
}

fn keep_training_alive(pool: &NodePool) -> Option<Advice> {
    let d = &pool.spec.disruption;
    // An absent policy is the CRD default, WhenEmptyOrUnderutilized.
    let policy = d
        .consolidation_policy
        .clone()
        .unwrap_or_else(|| "WhenEmptyOrUnderutilized".into());
    let budgets = d.budgets.clone().unwrap_or_default();
    let zero_budget = budgets.iter().any(blocks_disruption);
    if policy == "WhenEmpty" && zero_budget {
        return None;
    }
    let shown: Vec<String> = budgets
        .iter()
        .map(|b| format!("nodes: \"{}\"", b.nodes))
        .collect();
    let budgets_text = if shown.is_empty() {
        "default (nodes: \"10%\")".to_string()
    } else {
        shown.join(", ")
    };
    Some(
        Advice::new("keep-training-alive")
            .with("policy", policy)
            .with("budgets", budgets_text),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
            min_values: None,
        }
    }

    #[test]
    fn zones_belong_to_their_region() {
        assert!(zone_in_region("us-west-2a", "us-west-2"));
        assert!(zone_in_region("us-west-2-lax-1a", "us-west-2"));
        assert!(!zone_in_region("us-west-2", "us-west-2"));
        assert!(!zone_in_region("us-west-21a", "us-west-2"));
        assert!(!zone_in_region("eu-west-1a", "us-west-2"));
        assert!(!zone_in_region("usw2-az1", "us-west-2"));
    }

    #[test]
    fn capacity_types_follow_in_and_not_in() {
        let on = req(CAPACITY_TYPE_LABEL, "In", &["on-demand"]);
        assert_eq!(
            allowed_capacity_types(&[&on]),
            BTreeSet::from(["on-demand".to_string()])
        );
        let not_spot = req(CAPACITY_TYPE_LABEL, "NotIn", &["spot", "reserved"]);
        assert_eq!(
            allowed_capacity_types(&[&not_spot]),
            BTreeSet::from(["on-demand".to_string()])
        );
        let both = req(CAPACITY_TYPE_LABEL, "In", &["spot", "on-demand"]);
        assert_eq!(allowed_capacity_types(&[&both]).len(), 2);
        let exists = req(CAPACITY_TYPE_LABEL, "Exists", &[]);
        assert_eq!(allowed_capacity_types(&[&exists]).len(), 3);
    }

    #[test]
    fn only_an_unscheduled_zero_budget_covering_drift_blocks_disruption() {
        let b = |nodes: &str, schedule: Option<&str>, reasons: &[&str]| Budget {
            nodes: nodes.into(),
            schedule: schedule.map(str::to_string),
            duration: schedule.map(|_| "8h".to_string()),
            reasons: reasons.iter().map(|s| s.to_string()).collect(),
        };
        assert!(blocks_disruption(&b("0", None, &[])));
        assert!(blocks_disruption(&b("0%", None, &["Drifted"])));
        assert!(!blocks_disruption(&b("10%", None, &[])));
        assert!(!blocks_disruption(&b("0", Some("0 9 * * 1-5"), &[])));
        assert!(!blocks_disruption(&b("0", None, &["Underutilized"])));
    }
}
