//! Lab 15 `karpenter-single-az`: a NodePool that launches only on-demand, EFA-capable GPU
//! instances in exactly one zone. Saved states: `solution-state` (kind: CRDs only, no controller)
//! and `eks-state` + `eks-nodes` (EKS with Karpenter, two NodeClaims launched).

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::observe::{manifest_files, parse_file, Observed, SourceKind};
use trainlab::verify::{grade_lab, LabResult, Reason, Status, Target};

const LAB: &str = "karpenter-single-az";
const SPEC: &[&str] = &[
    "zone-single",
    "zone-exists",
    "efa-instance-types",
    "on-demand",
    "node-class-ref",
];
const STATE: &[&str] = &["nodepool-ready", "nodeclaims-in-zone"];

/// After `solve` on kind (the Karpenter CRDs, no controller).
fn kind_solved() -> State {
    State::load("karpenter-single-az/solution-state").and("kind-nodes")
}

/// After `solve` on EKS with Karpenter running: the pool is Ready, two NodeClaims in us-west-2a.
fn eks_solved() -> State {
    State::load("karpenter-single-az/eks-state").and("karpenter-single-az/eks-nodes")
}

fn requirements(v: &mut Value) -> &mut Vec<Value> {
    v["spec"]["template"]["spec"]["requirements"]
        .as_array_mut()
        .expect("requirements")
}

/// Replaces the NodePool's requirements on `key` (all of them) with `new` (none: removed).
fn set_requirement(state: State, key: &str, new: &[Value]) -> State {
    let key = key.to_string();
    let new = new.to_vec();
    state.edit("NodePool", "gpu-training", move |v| {
        let reqs = requirements(v);
        let at = reqs
            .iter()
            .position(|r| r["key"] == key.as_str())
            .unwrap_or(reqs.len());
        reqs.retain(|r| r["key"] != key.as_str());
        for (i, r) in new.into_iter().enumerate() {
            reqs.insert(at + i, r);
        }
    })
}

fn req(key: &str, op: &str, values: &[&str]) -> Value {
    json!({"key": key, "operator": op, "values": values})
}

fn zone(state: State, z: &str) -> State {
    set_requirement(
        state,
        "topology.kubernetes.io/zone",
        &[req("topology.kubernetes.io/zone", "In", &[z])],
    )
}

fn set_conditions(state: State, conditions: Value) -> State {
    state.edit("NodePool", "gpu-training", move |v| {
        v["status"]["conditions"] = conditions
    })
}

fn without_gpu_claims(state: State) -> State {
    state.remove(|o| o.kind() == "NodeClaim" && o.name().starts_with("gpu-training-"))
}

/// The result minus checks that must be skipped (asserted here, with their lab message), so
/// `assert_only_fails` can check that everything else passes.
fn minus_skipped(r: &LabResult, skipped: &[&str], message: &str) -> LabResult {
    for s in skipped {
        let o = r.outcomes.iter().find(|o| o.check == *s).unwrap();
        assert_eq!(o.status, Status::Skipped, "{s} should be skipped: {o:?}");
        assert_eq!(
            o.reason,
            Some(Reason::Message(message.into())),
            "{s} reason"
        );
    }
    let mut r = r.clone();
    r.outcomes.retain(|o| !skipped.contains(&o.check.as_str()));
    r
}

fn outcome<'a>(r: &'a LabResult, check: &str) -> &'a trainlab::verify::Outcome {
    r.outcomes.iter().find(|o| o.check == check).unwrap()
}

/// Grades the learner's files in static mode (`check --files`).
fn grade_files(rel: &str) -> LabResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let objects = manifest_files(&root)
        .unwrap()
        .iter()
        .flat_map(|f| parse_file(f).unwrap())
        .collect();
    let obs = Observed::offline(SourceKind::Files, rel, objects);
    let catalog = Catalog::embedded().unwrap();
    grade_lab(
        catalog.get(LAB).unwrap(),
        &obs,
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        None,
    )
    .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Reference states

#[test]
fn check_ids_match_the_lab_file() {
    let catalog = Catalog::embedded().unwrap();
    let lab = &catalog.get(LAB).unwrap().lab;
    let ids: Vec<&str> = lab.checks.iter().map(|c| c.id.as_str()).collect();
    let verifier = trainlab::verify::verifier_for(LAB).unwrap();
    assert_eq!(verifier.check_ids(), ids.as_slice());
    assert_eq!(ids, [SPEC, STATE].concat());
}

#[test]
fn on_kind_the_solution_passes_the_spec_and_state_checks_are_skipped() {
    let r = kind_solved().grade(LAB);
    for c in SPEC {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    // kind serves the CRDs but runs no Karpenter controller: no status, no NodeClaims.
    let r = minus_skipped(&r, STATE, "kind-no-controller");
    assert_all_pass(&r);
    assert!(
        r.advice.is_empty(),
        "the solution needs no advice: {:?}",
        r.advice
    );
    assert_eq!(r.score().percent, Some(100.0));
}

#[test]
fn on_eks_the_solution_passes_every_check() {
    let r = eks_solved().grade(LAB);
    assert_eq!(r.profile, Some(trainlab::profile::Profile::Eks));
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    let claims = outcome(&r, "nodeclaims-in-zone");
    assert_eq!(
        claims.found.as_deref(),
        Some("gpu-training-7xk2p in us-west-2a, gpu-training-q9m4t in us-west-2a")
    );
}

#[test]
fn a_missing_nodepool_fails_every_check_with_what_to_create() {
    for state in [kind_solved(), eks_solved()] {
        let r = state
            .remove(|o| o.kind() == "NodePool" && o.name() == "gpu-training")
            .grade(LAB);
        for c in [SPEC, STATE].concat() {
            let o = outcome(&r, c);
            assert_eq!(o.status, Status::Fail, "{c}: {o:?}");
            assert_eq!(o.hint.as_deref(), Some("no-nodepool"), "{c}");
        }
    }
    // Another pool's name is not accepted, and the found text lists what is there.
    let r = eks_solved()
        .remove(|o| o.kind() == "NodePool" && o.name() == "gpu-training")
        .grade(LAB);
    assert_eq!(
        outcome(&r, "zone-single").found.as_deref(),
        Some("no NodePool named gpu-training; NodePools: default")
    );
}

#[test]
fn a_workshop_learner_grades_their_prefixed_pool() {
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["metadata"]["name"] = json!("alice-gpu-training")
    });
    let catalog = Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    let mut target = Target::for_lab(LAB);
    target.name_prefix = "alice-".into();
    let r = grade_lab(bundle, &state.observed(), &target, &BTreeMap::new(), None).unwrap();
    assert_all_pass(&r);
    // Without the prefix the same state has no pool for the default target.
    let r = state.grade(LAB);
    assert_eq!(
        outcome(&r, "zone-single").hint.as_deref(),
        Some("no-nodepool")
    );
}

// ---------------------------------------------------------------------------------------------
// zone-single

#[test]
fn no_zone_requirement_fails_zone_single_and_skips_the_zone_lookups() {
    let r = set_requirement(eks_solved(), "topology.kubernetes.io/zone", &[]).grade(LAB);
    let r = minus_skipped(&r, &["zone-exists", "nodeclaims-in-zone"], "no-single-zone");
    let o = assert_only_fails(&r, "zone-single", Some("missing"));
    assert_eq!(
        o.found.as_deref(),
        Some("no requirement on topology.kubernetes.io/zone")
    );
}

#[test]
fn not_in_fails_zone_single_with_its_own_hint() {
    let state = set_requirement(
        eks_solved(),
        "topology.kubernetes.io/zone",
        &[req(
            "topology.kubernetes.io/zone",
            "NotIn",
            &["us-west-2b", "us-west-2c"],
        )],
    );
    let r = minus_skipped(
        &state.grade(LAB),
        &["zone-exists", "nodeclaims-in-zone"],
        "no-single-zone",
    );
    let o = assert_only_fails(&r, "zone-single", Some("not-in"));
    assert_eq!(o.evidence["values"], "us-west-2b, us-west-2c");
}

#[test]
fn two_zones_fail_zone_single_with_the_several_values_hint() {
    let state = set_requirement(
        kind_solved(),
        "topology.kubernetes.io/zone",
        &[req(
            "topology.kubernetes.io/zone",
            "In",
            &["us-west-2a", "us-west-2b"],
        )],
    );
    let r = state.grade(LAB);
    let r = minus_skipped(&r, &["zone-exists"], "no-single-zone");
    let r = minus_skipped(&r, STATE, "kind-no-controller");
    let o = assert_only_fails(&r, "zone-single", Some("several-values"));
    assert_eq!(
        o.expected.as_deref(),
        Some("exactly one requirement `topology.kubernetes.io/zone In [<one zone>]`")
    );
    assert_eq!(
        o.found.as_deref(),
        Some("topology.kubernetes.io/zone In [us-west-2a, us-west-2b] (2 values)")
    );
}

#[test]
fn two_zone_requirements_fail_zone_single_as_duplicates() {
    let state = set_requirement(
        eks_solved(),
        "topology.kubernetes.io/zone",
        &[
            req("topology.kubernetes.io/zone", "In", &["us-west-2a"]),
            req(
                "topology.kubernetes.io/zone",
                "In",
                &["us-west-2a", "us-west-2b"],
            ),
        ],
    );
    let r = minus_skipped(
        &state.grade(LAB),
        &["zone-exists", "nodeclaims-in-zone"],
        "no-single-zone",
    );
    let o = assert_only_fails(&r, "zone-single", Some("duplicate"));
    assert_eq!(o.evidence["count"], "2");
}

#[test]
fn an_operator_that_names_no_zone_fails_zone_single() {
    let state = set_requirement(
        eks_solved(),
        "topology.kubernetes.io/zone",
        &[json!({"key": "topology.kubernetes.io/zone", "operator": "Exists"})],
    );
    let r = minus_skipped(
        &state.grade(LAB),
        &["zone-exists", "nodeclaims-in-zone"],
        "no-single-zone",
    );
    let o = assert_only_fails(&r, "zone-single", Some("operator"));
    assert_eq!(o.evidence["operator"], "Exists");
}

// ---------------------------------------------------------------------------------------------
// zone-exists

#[test]
fn on_kind_the_zone_must_be_one_of_the_nodes_zones() {
    let r = zone(kind_solved(), "us-west-2d").grade(LAB);
    let r = minus_skipped(&r, STATE, "kind-no-controller");
    let o = assert_only_fails(&r, "zone-exists", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("one of the nodes' zones: us-west-2a, us-west-2b, us-west-2c")
    );
    assert_eq!(o.found.as_deref(), Some("us-west-2d"));
}

#[test]
fn on_eks_a_zone_of_the_region_without_nodes_is_fine() {
    let r = without_gpu_claims(zone(eks_solved(), "us-west-2d")).grade(LAB);
    assert_all_pass(&r);
    let o = outcome(&r, "zone-exists");
    assert_eq!(
        o.found.as_deref(),
        Some("us-west-2d (no node there yet; nodes run in us-west-2a, us-west-2b)")
    );
}

#[test]
fn on_eks_a_zone_of_another_region_fails() {
    let r = without_gpu_claims(zone(eks_solved(), "eu-west-1a")).grade(LAB);
    let o = assert_only_fails(&r, "zone-exists", Some("other-region"));
    assert_eq!(o.evidence["regions"], "us-west-2");
    // A zone ID is not a zone name.
    let r = without_gpu_claims(zone(eks_solved(), "usw2-az1")).grade(LAB);
    assert_only_fails(&r, "zone-exists", Some("other-region"));
}

#[test]
fn on_eks_the_region_comes_from_zone_names_when_nodes_have_no_region_label() {
    let state = without_gpu_claims(zone(eks_solved(), "us-west-2c")).edit_all("Node", |v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/region");
    });
    assert_all_pass(&state.grade(LAB));
}

#[test]
fn nodes_without_zone_labels_skip_zone_exists() {
    let state = eks_solved().edit_all("Node", |v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
    });
    let r = minus_skipped(&state.grade(LAB), &["zone-exists"], "no-node-zones");
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// efa-instance-types

#[test]
fn no_instance_type_requirement_is_unrestricted() {
    let r = set_requirement(eks_solved(), "node.kubernetes.io/instance-type", &[]).grade(LAB);
    let o = assert_only_fails(&r, "efa-instance-types", Some("unrestricted"));
    assert!(o
        .found
        .unwrap()
        .starts_with("no requirement on node.kubernetes.io/instance-type"));
    // NotIn alone leaves every other type allowed.
    let state = set_requirement(
        eks_solved(),
        "node.kubernetes.io/instance-type",
        &[req(
            "node.kubernetes.io/instance-type",
            "NotIn",
            &["t3.micro"],
        )],
    );
    assert_only_fails(
        &state.grade(LAB),
        "efa-instance-types",
        Some("unrestricted"),
    );
}

#[test]
fn types_outside_the_efa_gpu_table_fail_naming_them() {
    for (bad, kind) in [
        ("m5.large", "unknown-type"),
        ("trn1.32xlarge", "not-efa-gpu"),
    ] {
        let state = set_requirement(
            eks_solved(),
            "node.kubernetes.io/instance-type",
            &[req(
                "node.kubernetes.io/instance-type",
                "In",
                &["p5.48xlarge", bad],
            )],
        );
        let o = assert_only_fails(&state.grade(LAB), "efa-instance-types", Some(kind));
        assert_eq!(o.evidence["types"], bad);
        assert_eq!(
            o.found.as_deref(),
            Some(format!("allowed: p5.48xlarge, {bad}").as_str())
        );
    }
}

#[test]
fn a_type_missing_from_the_instance_table_is_named() {
    let state = set_requirement(
        eks_solved(),
        "node.kubernetes.io/instance-type",
        &[req(
            "node.kubernetes.io/instance-type",
            "In",
            &["p5.48xlarge", "g5.48xlarge"],
        )],
    );
    let o = assert_only_fails(
        &state.grade(LAB),
        "efa-instance-types",
        Some("unknown-type"),
    );
    assert_eq!(o.evidence["types"], "g5.48xlarge");
}

#[test]
fn a_family_requirement_cannot_be_mapped_to_efa_types() {
    let state = set_requirement(
        eks_solved(),
        "node.kubernetes.io/instance-type",
        &[req("karpenter.k8s.aws/instance-family", "In", &["p5"])],
    );
    let o = assert_only_fails(&state.grade(LAB), "efa-instance-types", Some("family-only"));
    assert_eq!(o.evidence["key"], "karpenter.k8s.aws/instance-family");
}

#[test]
fn instance_type_lists_are_intersected_like_karpenter_does() {
    // In [p5, m5] ∩ In [p5, p4d] = [p5]: only EFA GPU types remain.
    let state = set_requirement(
        eks_solved(),
        "node.kubernetes.io/instance-type",
        &[
            req(
                "node.kubernetes.io/instance-type",
                "In",
                &["p5.48xlarge", "m5.large"],
            ),
            req(
                "node.kubernetes.io/instance-type",
                "In",
                &["p5.48xlarge", "p4d.24xlarge"],
            ),
        ],
    );
    assert_all_pass(&state.grade(LAB));
}

// ---------------------------------------------------------------------------------------------
// on-demand

#[test]
fn no_capacity_type_requirement_fails_on_demand() {
    let r = set_requirement(eks_solved(), "karpenter.sh/capacity-type", &[]).grade(LAB);
    assert_only_fails(&r, "on-demand", Some("missing"));
}

#[test]
fn allowing_spot_fails_on_demand() {
    let state = set_requirement(
        eks_solved(),
        "karpenter.sh/capacity-type",
        &[req(
            "karpenter.sh/capacity-type",
            "In",
            &["spot", "on-demand"],
        )],
    );
    let o = assert_only_fails(&state.grade(LAB), "on-demand", None);
    assert_eq!(o.evidence["allowed"], "on-demand, spot");
    assert_eq!(
        o.expected.as_deref(),
        Some("karpenter.sh/capacity-type In [on-demand]")
    );
}

#[test]
fn excluding_spot_and_reserved_leaves_on_demand() {
    let state = set_requirement(
        eks_solved(),
        "karpenter.sh/capacity-type",
        &[req(
            "karpenter.sh/capacity-type",
            "NotIn",
            &["spot", "reserved"],
        )],
    );
    assert_all_pass(&state.grade(LAB));
    // NotIn [spot] alone still allows reserved capacity.
    let state = set_requirement(
        eks_solved(),
        "karpenter.sh/capacity-type",
        &[req("karpenter.sh/capacity-type", "NotIn", &["spot"])],
    );
    let o = assert_only_fails(&state.grade(LAB), "on-demand", None);
    assert_eq!(o.evidence["allowed"], "on-demand, reserved");
}

// ---------------------------------------------------------------------------------------------
// node-class-ref

#[test]
fn a_missing_or_empty_node_class_ref_fails() {
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("nodeClassRef");
    });
    assert_only_fails(&state.grade(LAB), "node-class-ref", Some("missing"));
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("");
    });
    let o = assert_only_fails(&state.grade(LAB), "node-class-ref", Some("missing"));
    assert_eq!(o.evidence["fields"], "name");
}

#[test]
fn a_non_aws_node_class_fails() {
    let state = kind_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"] =
            json!({"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"});
    });
    let r = minus_skipped(&state.grade(LAB), STATE, "kind-no-controller");
    let o = assert_only_fails(&r, "node-class-ref", Some("wrong-class"));
    assert_eq!(o.evidence["kind"], "KWOKNodeClass");
}

#[test]
fn a_reference_to_a_missing_ec2nodeclass_fails() {
    let state = kind_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("gpu");
    });
    let r = minus_skipped(&state.grade(LAB), STATE, "kind-no-controller");
    let o = assert_only_fails(&r, "node-class-ref", Some("class-missing"));
    assert_eq!(
        o.found.as_deref(),
        Some("no EC2NodeClass gpu; EC2NodeClasses: default")
    );
}

// ---------------------------------------------------------------------------------------------
// nodepool-ready

#[test]
fn a_pool_whose_node_class_is_missing_is_not_ready() {
    // What Karpenter writes when the EC2NodeClass is gone (nodepool/readiness controller, and
    // operatorpkg recomputing the root condition).
    let state = set_conditions(
        eks_solved(),
        json!([
            {"type": "NodeClassReady", "status": "False", "reason": "NodeClassNotFound",
             "message": "NodeClass not found on cluster", "observedGeneration": 1},
            {"type": "Ready", "status": "False", "reason": "UnhealthyDependents",
             "message": "NodeClassReady=False", "observedGeneration": 1},
            {"type": "ValidationSucceeded", "status": "True", "reason": "ValidationSucceeded",
             "message": "", "observedGeneration": 1}
        ]),
    );
    let o = assert_only_fails(&state.grade(LAB), "nodepool-ready", None);
    assert_eq!(
        o.evidence["details"],
        "NodeClassReady=False (NodeClassNotFound: NodeClass not found on cluster)"
    );
    assert_eq!(o.evidence["node_class"], "default");
    assert!(o
        .found
        .unwrap()
        .starts_with("Ready=False (UnhealthyDependents: NodeClassReady=False)"));
}

#[test]
fn a_pool_still_reconciling_is_pending() {
    let state = set_conditions(
        eks_solved(),
        json!([{"type": "Ready", "status": "Unknown", "reason": "ReconcilingDependents",
                "message": "NodeClassReady=Unknown", "observedGeneration": 1}]),
    );
    let r = state.grade(LAB);
    assert_eq!(status(&r, "nodepool-ready"), Status::Pending);
    assert_eq!(
        outcome(&r, "nodepool-ready").reason,
        Some(Reason::Cluster(
            "Ready=Unknown (ReconcilingDependents: NodeClassReady=Unknown)".into()
        ))
    );
}

#[test]
fn on_eks_a_pool_without_status_waits_for_the_controller() {
    let state = without_gpu_claims(eks_solved()).edit("NodePool", "gpu-training", |v| {
        v.as_object_mut().unwrap().remove("status");
    });
    let r = state.grade(LAB);
    for c in STATE {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Pending, "{c}: {o:?}");
        assert_eq!(o.reason, Some(Reason::Message("not-reconciled".into())));
    }
}

#[test]
fn a_ready_condition_for_an_older_generation_is_pending() {
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["metadata"]["generation"] = json!(2)
    });
    let r = state.grade(LAB);
    let o = outcome(&r, "nodepool-ready");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(o.reason, Some(Reason::Message("stale".into())));
    assert_eq!(o.evidence["observed"], "1");
}

// ---------------------------------------------------------------------------------------------
// nodeclaims-in-zone

#[test]
fn a_claim_left_in_the_old_zone_fails() {
    // The learner moved the pool from us-west-2b to us-west-2a after one claim launched.
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        v["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("us-west-2b");
    });
    let o = assert_only_fails(&state.grade(LAB), "nodeclaims-in-zone", None);
    assert_eq!(o.found.as_deref(), Some("gpu-training-q9m4t in us-west-2b"));
    assert_eq!(
        o.expected.as_deref(),
        Some("every NodeClaim of NodePool gpu-training in us-west-2a")
    );
}

#[test]
fn a_claim_found_by_its_owner_counts_even_without_the_pool_label() {
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        let labels = v["metadata"]["labels"].as_object_mut().unwrap();
        labels.remove("karpenter.sh/nodepool");
        labels.insert("topology.kubernetes.io/zone".into(), json!("us-west-2c"));
    });
    let o = assert_only_fails(&state.grade(LAB), "nodeclaims-in-zone", None);
    assert_eq!(o.evidence["claims"], "gpu-training-q9m4t in us-west-2c");
}

#[test]
fn a_claim_that_has_not_launched_yet_is_pending() {
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
        v["status"] = json!({"conditions": [
            {"type": "Launched", "status": "Unknown", "reason": "AwaitingReconciliation",
             "message": "object is awaiting reconciliation", "observedGeneration": 1}]});
    });
    let r = state.grade(LAB);
    let o = outcome(&r, "nodeclaims-in-zone");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(o.evidence["claims"], "gpu-training-q9m4t");
}

#[test]
fn forged_claims_do_not_count() {
    // A claim that only carries the pool label (no ownerReference to the pool's uid), and one
    // owned by the `default` pool with the label forged: neither is the pool's.
    let state = eks_solved()
        .add(
            r#"
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: gpu-training-forged
  uid: 11111111-2222-4333-8444-555555555555
  labels:
    karpenter.sh/nodepool: gpu-training
    topology.kubernetes.io/zone: us-west-2c
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: []
"#,
        )
        .edit("NodeClaim", "default-h2v8c", |v| {
            v["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("gpu-training");
        });
    let r = state.grade(LAB);
    assert_all_pass(&r);
    assert_eq!(outcome(&r, "nodeclaims-in-zone").evidence["count"], "2");
}

#[test]
fn a_ready_pool_without_claims_passes() {
    let r = without_gpu_claims(eks_solved()).grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "nodeclaims-in-zone").found.as_deref(),
        Some("no NodeClaims yet")
    );
}

// ---------------------------------------------------------------------------------------------
// Advice

#[test]
fn default_disruption_settings_get_the_keep_training_alive_advice() {
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["disruption"] = json!({"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
                                         "budgets": [{"nodes": "10%"}]});
    });
    let r = state.grade(LAB);
    assert_all_pass(&r);
    assert_eq!(r.advice.len(), 1);
    assert_eq!(r.advice[0].id, "keep-training-alive");
    assert_eq!(r.advice[0].evidence["policy"], "WhenEmptyOrUnderutilized");
    assert_eq!(r.advice[0].evidence["budgets"], "nodes: \"10%\"");
    // A zero budget only during office hours does not protect a training at night.
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["disruption"]["budgets"] =
            json!([{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}]);
    });
    assert_eq!(state.grade(LAB).advice.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Static mode, bad input, demo

#[test]
fn static_mode_passes_the_solution_spec_and_skips_what_needs_a_cluster() {
    let r = grade_files("labs/15-karpenter-single-az/solution");
    for c in [
        "zone-single",
        "efa-instance-types",
        "on-demand",
        "node-class-ref",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in ["zone-exists", "nodepool-ready", "nodeclaims-in-zone"] {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Skipped, "{c}: {o:?}");
        assert_eq!(
            o.reason,
            Some(Reason::Unavailable(
                trainlab::observe::Unavailable::NeedsLiveCluster
            ))
        );
    }
}

#[test]
fn static_mode_fails_the_draft() {
    let r = grade_files("labs/15-karpenter-single-az/draft");
    assert_eq!(outcome(&r, "zone-single").hint.as_deref(), Some("missing"));
    assert_eq!(
        outcome(&r, "efa-instance-types").hint.as_deref(),
        Some("unrestricted")
    );
    assert_eq!(outcome(&r, "on-demand").hint.as_deref(), Some("missing"));
    assert_eq!(status(&r, "node-class-ref"), Status::Pass);
    assert_eq!(status(&r, "zone-exists"), Status::Skipped);
    assert!(r.score().percent.unwrap() < 50.0, "{:?}", r.score());
}

#[test]
fn a_zone_list_written_as_a_string_is_bad_input_naming_the_field() {
    let state = kind_solved().edit("NodePool", "gpu-training", |v| {
        requirements(v)[0]["values"] = json!("us-west-2a");
    });
    let err = state.try_grade(LAB).unwrap_err().to_string();
    assert!(
        err.contains("spec.template.spec.requirements[0].values"),
        "{err}"
    );
    assert!(err.contains("NodePool/gpu-training"), "{err}");
}

#[test]
fn a_malformed_nodeclaim_is_bad_input() {
    let state = eks_solved().edit("NodeClaim", "gpu-training-7xk2p", |v| {
        v["status"]["conditions"] = json!("Ready");
    });
    let err = state.try_grade(LAB).unwrap_err().to_string();
    assert!(
        err.contains("NodeClaim/gpu-training-7xk2p") && err.contains("status.conditions"),
        "{err}"
    );
}

#[test]
fn the_demo_learner_listed_two_zones() {
    let obs = trainlab::observe::sources::demo().unwrap();
    let catalog = Catalog::embedded().unwrap();
    let r = grade_lab(
        catalog.get(LAB).unwrap(),
        &obs,
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        None,
    )
    .unwrap();
    let o = outcome(&r, "zone-single");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("several-values"));
    assert_eq!(o.evidence["values"], "us-west-2a, us-west-2b");
    for c in ["efa-instance-types", "on-demand", "node-class-ref"] {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    let r = minus_skipped(&r, &["zone-exists"], "no-single-zone");
    minus_skipped(&r, STATE, "kind-no-controller");
    assert_eq!(r.advice.len(), 1);
}
