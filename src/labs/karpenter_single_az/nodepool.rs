//! Karpenter NodePools: what a pool lets Karpenter launch, whether it keeps a long training
//! running, and why it is not Ready.
//!
//! - Requirements are intersected key by key (kit `placement::allowed_by_requirements`). "If a
//!   requirement is not defined for a well known label, any value available to the cloud
//!   provider may be chosen" (karpenter.sh docs, NodePools): for `karpenter.sh/capacity-type`
//!   those are `spot`, `on-demand` and `reserved` (kubernetes-sigs/karpenter v1
//!   `pkg/apis/v1/labels.go`).
//! - Disruption: a budget without `reasons` applies to every reason (`pkg/apis/v1/nodepool.go`,
//!   `Budget.Reasons`); an absent `consolidationPolicy` is the CRD default
//!   `WhenEmptyOrUnderutilized`, and absent budgets the default `nodes: 10%`.
//! - Status: `Ready` is the root condition, True only when every dependent condition is
//!   (awslabs/operatorpkg `status/condition_set.go`): the dependents that are False say why.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::NodeSelectorRequirement;

use crate::facts::instances::CAPACITY_TYPE_LABEL;
use crate::verify::kit::k8s::conditions::Condition;
use crate::verify::kit::k8s::placement::{allowed_by_requirements, Allowed};
use crate::verify::views::karpenter::NodePool;

/// The capacity types Karpenter offers.
pub const CAPACITY_TYPES: &[&str] = &["spot", "on-demand", "reserved"];

/// The capacity types a pool lets Karpenter launch (empty: none).
pub fn capacity_types(pool: &NodePool) -> BTreeSet<String> {
    let mut reqs = pool.selector_requirements();
    reqs.push(NodeSelectorRequirement {
        key: CAPACITY_TYPE_LABEL.into(),
        operator: "In".into(),
        values: Some(CAPACITY_TYPES.iter().map(|s| s.to_string()).collect()),
    });
    match allowed_by_requirements(&reqs, CAPACITY_TYPE_LABEL) {
        Allowed::Only(s) => s,
        _ => BTreeSet::new(),
    }
}

/// The capacity types that are not reclaimed with a two-minute notice: on-demand, and capacity
/// reservations (`reserved`: On-Demand Capacity Reservations and Capacity Blocks,
/// aws/karpenter-provider-aws v1.14.1 `website/content/en/docs/concepts/nodepools.md`,
/// "Capacity Type"; `docs/tasks/odcrs.md`). Spot is.
pub const NOT_RECLAIMED: &[&str] = &["on-demand", "reserved"];

/// The label Karpenter puts on nodes of an interruptible capacity reservation, which EC2 may
/// reclaim with a two-minute warning (aws/karpenter-provider-aws v1.14.1 `pkg/apis/v1/labels.go`,
/// `docs/tasks/odcrs.md` "Interruptible Capacity Reservations").
pub const RESERVATION_INTERRUPTIBLE_LABEL: &str =
    "karpenter.k8s.aws/capacity-reservation-interruptible";

/// Whether a pool only launches capacity that is not reclaimed: some capacity type, all of them
/// [`NOT_RECLAIMED`].
pub fn only_unreclaimed(pool: &NodePool) -> bool {
    let types = capacity_types(pool);
    !types.is_empty() && types.iter().all(|t| NOT_RECLAIMED.contains(&t.as_str()))
}

/// Whether a pool may launch into interruptible capacity reservations: it allows `reserved` and
/// its requirements do not keep `capacity-reservation-interruptible` away from `true` (the label
/// is `true` or `false` on reserved nodes only, so `NotIn ["true"]` keeps them out).
pub fn may_use_interruptible_reservations(pool: &NodePool) -> bool {
    if !capacity_types(pool).contains("reserved") {
        return false;
    }
    let mut reqs = pool.selector_requirements();
    reqs.push(NodeSelectorRequirement {
        key: RESERVATION_INTERRUPTIBLE_LABEL.into(),
        operator: "In".into(),
        values: Some(vec!["true".into(), "false".into()]),
    });
    match allowed_by_requirements(&reqs, RESERVATION_INTERRUPTIBLE_LABEL) {
        Allowed::Only(s) => s.contains("true"),
        _ => false,
    }
}

/// How a pool disrupts its nodes, when that can stop a long training: `(policy, budgets)` as
/// written (defaults filled in). None when it keeps training alive without keeping idle GPU
/// nodes: `WhenEmpty` (busy nodes are never consolidated), an always-active zero budget for
/// `Drifted` (drift would replace a busy node), and none that also covers `Empty` (empty nodes
/// would never be removed).
pub fn disrupts_training(pool: &NodePool) -> Option<(String, String)> {
    let d = &pool.spec.disruption;
    let policy = d.consolidation_policy.as_deref();
    let policy = policy.unwrap_or("WhenEmptyOrUnderutilized");
    let budgets = d.budgets.as_deref().unwrap_or_default();
    let zero = |reason: &str| {
        budgets
            .iter()
            .any(|b| b.always_zero() && b.applies_to(reason))
    };
    if policy == "WhenEmpty" && zero("Drifted") && !zero("Empty") {
        return None;
    }
    let shown: Vec<String> = budgets.iter().map(|b| b.describe()).collect();
    let budgets = if shown.is_empty() {
        "{nodes: \"10%\"}".to_string()
    } else {
        shown.join(", ")
    };
    Some((policy.to_string(), budgets))
}

/// Why a root `Ready` condition is False: the dependents that are False, else `Ready` itself.
pub fn not_ready_causes<'c>(ready: &'c Condition, conds: &'c [Condition]) -> Vec<&'c Condition> {
    let causes: Vec<&Condition> = conds
        .iter()
        .filter(|c| c.type_ != ready.type_ && c.is_false())
        .collect();
    if causes.is_empty() {
        vec![ready]
    } else {
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Obj, Origin};
    use crate::verify::kit::k8s::conditions;
    use serde_json::{json, Value};

    fn pool(spec: Value) -> NodePool {
        let o = Obj::new(
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                   "metadata": {"name": "p"}, "spec": spec}),
            Origin::Live,
        )
        .unwrap();
        NodePool::from_obj(&o).unwrap()
    }

    fn reqs(r: Value) -> Value {
        json!({"template": {"spec": {"requirements": r}}})
    }

    #[test]
    fn without_a_requirement_every_capacity_type_may_be_chosen() {
        let all: BTreeSet<String> = CAPACITY_TYPES.iter().map(|s| s.to_string()).collect();
        assert_eq!(capacity_types(&pool(reqs(json!([])))), all);
        let od = pool(reqs(
            json!([{"key": CAPACITY_TYPE_LABEL, "operator": "NotIn",
                                   "values": ["spot", "reserved"]}]),
        ));
        assert_eq!(
            capacity_types(&od),
            BTreeSet::from(["on-demand".to_string()])
        );
        let none = pool(reqs(json!([{"key": CAPACITY_TYPE_LABEL, "operator": "In",
                                     "values": ["preemptible"]}])));
        assert!(capacity_types(&none).is_empty());
    }

    #[test]
    fn on_demand_and_reserved_are_not_reclaimed_spot_and_interruptible_reservations_are() {
        let ct =
            |values: Value| json!({"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": values});
        assert!(only_unreclaimed(&pool(reqs(json!([ct(json!([
            "on-demand"
        ]))])))));
        assert!(only_unreclaimed(&pool(reqs(json!([ct(json!([
            "reserved"
        ]))])))));
        assert!(only_unreclaimed(&pool(reqs(json!([ct(json!([
            "reserved",
            "on-demand"
        ]))])))));
        assert!(!only_unreclaimed(&pool(reqs(json!([ct(json!([
            "spot",
            "on-demand"
        ]))])))));
        assert!(!only_unreclaimed(&pool(reqs(json!([])))));
        assert!(!only_unreclaimed(&pool(reqs(json!([ct(json!([
            "preemptible"
        ]))])))));
        // Reserved capacity may be an interruptible reservation unless the pool keeps it out.
        let reserved = ct(json!(["reserved", "on-demand"]));
        assert!(may_use_interruptible_reservations(&pool(reqs(json!([
            reserved.clone()
        ])))));
        for keep_out in [
            json!({"key": RESERVATION_INTERRUPTIBLE_LABEL, "operator": "NotIn", "values": ["true"]}),
            json!({"key": RESERVATION_INTERRUPTIBLE_LABEL, "operator": "In", "values": ["false"]}),
        ] {
            let p = pool(reqs(json!([reserved.clone(), keep_out])));
            assert!(!may_use_interruptible_reservations(&p));
        }
        assert!(!may_use_interruptible_reservations(&pool(reqs(json!([
            ct(json!(["on-demand"]))
        ])))));
    }

    #[test]
    fn a_pool_keeps_training_alive_with_when_empty_and_a_zero_drift_budget() {
        let mut spec = reqs(json!([]));
        spec["disruption"] = json!({"consolidationPolicy": "WhenEmpty",
            "budgets": [{"nodes": "0", "reasons": ["Drifted"]}]});
        assert_eq!(disrupts_training(&pool(spec.clone())), None);
        // A zero budget without reasons covers Empty too: idle nodes would stay.
        spec["disruption"]["budgets"] = json!([{"nodes": "0"}]);
        assert!(disrupts_training(&pool(spec)).is_some());
        let (policy, budgets) = disrupts_training(&pool(reqs(json!([])))).unwrap();
        assert_eq!(policy, "WhenEmptyOrUnderutilized");
        assert_eq!(budgets, "{nodes: \"10%\"}");
    }

    #[test]
    fn the_false_dependents_say_why_ready_is_false() {
        let conds = conditions::from_list(&json!([
            {"type": "Ready", "status": "False", "reason": "NodeClassNotReady"},
            {"type": "NodeClassReady", "status": "False", "reason": "NotFound"},
            {"type": "ValidationSucceeded", "status": "True"}
        ]))
        .unwrap();
        let ready = conditions::find(&conds, "Ready").unwrap();
        let why: Vec<&str> = not_ready_causes(ready, &conds)
            .iter()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(why, ["NodeClassReady"]);
        let alone = &conds[..1];
        assert_eq!(not_ready_causes(&alone[0], alone)[0].type_, "Ready");
    }
}
