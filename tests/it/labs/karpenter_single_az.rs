//! Lab 15 `karpenter-single-az`: a NodePool that launches only on-demand, EFA-capable GPU
//! instances in exactly one zone. Saved states: `solution-state` (kind: CRDs only, no controller)
//! and `eks-state` + `eks-nodes` (EKS with Karpenter, two NodeClaims launched).

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::facts::capabilities::{self, Capabilities, Detected};
use trainlab::facts::Profile;
use trainlab::labs::grade_lab;
use trainlab::labs::verifier_for;
use trainlab::observe::{manifest_files, parse_file, Observed, SourceKind, Unavailable};
use trainlab::text::Lang;
use trainlab::verify::{queries, run, LabResult, Outcome, Reason, Status, Target};

const LAB: &str = "karpenter-single-az";
const SPEC: &[&str] = &[
    "zone-single",
    "zone-exists",
    "efa-instance-types",
    "on-demand",
    "node-class-ref",
];
const STATE: &[&str] = &["nodepool-ready", "nodeclaims-in-zone"];
const ZONE: &str = "topology.kubernetes.io/zone";
const ZONE_ID: &str = "topology.k8s.aws/zone-id";
const TYPE: &str = "node.kubernetes.io/instance-type";
const CAPACITY: &str = "karpenter.sh/capacity-type";

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
    set_requirement(state, ZONE, &[req(ZONE, "In", &[z])])
}

/// The pool pins its AZ by ID only.
fn zone_id(state: State, id: &str) -> State {
    set_requirement(state, ZONE, &[]).edit("NodePool", "gpu-training", |v| {
        requirements(v).push(req(ZONE_ID, "In", &[id]))
    })
}

fn set_conditions(state: State, conditions: Value) -> State {
    state.edit("NodePool", "gpu-training", move |v| {
        v["status"]["conditions"] = conditions
    })
}

fn set_budgets(state: State, disruption: Value) -> State {
    state.edit("NodePool", "gpu-training", move |v| {
        v["spec"]["disruption"] = disruption
    })
}

fn without_gpu_claims(state: State) -> State {
    state.remove(|o| o.kind() == "NodeClaim" && o.name().starts_with("gpu-training-"))
}

/// The result minus checks that must be skipped (asserted here, with their lab message), so
/// `assert_only_fails` can check that everything else passes.
fn minus_skipped(r: &LabResult, skipped: &[&str], message: &str) -> LabResult {
    minus(r, skipped, |o| {
        o.reason == Some(Reason::Message(message.into()))
    })
}

/// Grades a saved state as `check --snapshot` does: on kind, the capabilities the kind profile
/// cannot provide (the Karpenter controller) are absent, everything else present.
fn grade(state: &State) -> LabResult {
    grade_observed(state.observed())
}

fn grade_observed(obs: Observed) -> LabResult {
    let catalog = Catalog::embedded().unwrap();
    let verifier = verifier_for(LAB).unwrap();
    let target = Target::for_lab(LAB);
    let nodes = trainlab::verify::JudgeCtx::nodes_of(&obs).unwrap_or_default();
    let kind = Profile::detect(&nodes) == Some(Profile::Kind);
    let caps: Capabilities = ["karpenter-crds", "karpenter"]
        .iter()
        .map(|n| {
            let c = capabilities::get(n).unwrap();
            let d = Detected {
                name: c.name,
                api: true,
                running: c.on_kind || !kind,
                detail: "not on the kind profile".into(),
                seen: vec![capabilities::Seen::NotOnKind],
                profile: Some(trainlab::facts::Profile::Kind),
                install: Some(c.install_kind.en.into()),
                installable: false,
            };
            (c.name, d)
        })
        .collect();
    let obs = obs.planned(queries(verifier, &target));
    let bundle = catalog.get(LAB).unwrap();
    run(
        bundle,
        verifier,
        &obs,
        &trainlab::facts::ClusterNodes::of(&obs),
        &target,
        &BTreeMap::new(),
        None,
        Some(&caps),
    )
    .unwrap()
}

trait Graded {
    fn graded(&self) -> LabResult;
}

impl Graded for State {
    fn graded(&self) -> LabResult {
        grade(self)
    }
}

/// The state checks skipped on kind because the Karpenter controller never runs there (the
/// framework's `karpenter` capability gate), without blaming the environment.
fn minus_no_controller(r: &LabResult) -> LabResult {
    assert!(!r.environment_incomplete());
    minus(r, STATE, |o| {
        matches!(&o.reason, Some(Reason::MissingCapability { capability, installable: false, .. })
            if capability == "karpenter")
    })
}

fn minus(r: &LabResult, skipped: &[&str], why: impl Fn(&Outcome) -> bool) -> LabResult {
    for s in skipped {
        let o = outcome(r, s);
        assert_eq!(o.status, Status::Skipped, "{s} should be skipped: {o:?}");
        assert!(why(o), "{s} reason: {:?}", o.reason);
    }
    let mut r = r.clone();
    r.outcomes.retain(|o| !skipped.contains(&o.check.as_str()));
    r
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
    let verifier = trainlab::labs::verifier_for(LAB).unwrap();
    assert_eq!(verifier.check_ids(), ids.as_slice());
    assert_eq!(ids, [SPEC, STATE].concat());
}

#[test]
fn on_kind_the_solution_passes_the_spec_and_state_checks_are_skipped() {
    let r = kind_solved().graded();
    for c in SPEC {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    // kind serves the CRDs but runs no Karpenter controller: no status, no NodeClaims.
    let r = minus_no_controller(&r);
    assert_all_pass(&r);
    assert!(
        r.advice.is_empty(),
        "the solution needs no advice: {:?}",
        r.advice
    );
    assert_eq!(r.score().percent, Some(100.0));
    // Skipped for a capability the profile cannot have: the grade is complete.
    assert!(!r.environment_incomplete());
}

#[test]
fn the_verifier_itself_does_not_guess_the_controller_is_missing() {
    // Ungated (no capabilities known), a pool without status waits for a controller: skipping
    // on kind is the framework's `karpenter` capability gate, for every source.
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    let verifier = trainlab::labs::verifier_for(LAB).unwrap();
    let target = trainlab::verify::Target::for_lab(LAB);
    let obs = kind_solved()
        .observed()
        .planned(trainlab::verify::queries(verifier, &target));
    let r = trainlab::verify::run(
        bundle,
        verifier,
        &obs,
        &trainlab::facts::ClusterNodes::of(&obs),
        &target,
        &Default::default(),
        None,
        None,
    )
    .unwrap();
    for c in STATE {
        assert_eq!(status(&r, c), Status::Pending, "{c}");
        assert_eq!(
            outcome(&r, c).reason,
            Some(Reason::Message("not-reconciled".into()))
        );
    }
}

#[test]
fn on_eks_the_solution_passes_every_check() {
    let r = eks_solved().graded();
    assert_eq!(r.profile, Some(trainlab::facts::Profile::Eks));
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    let claims = outcome(&r, "nodeclaims-in-zone");
    assert_eq!(
        claims.found.as_deref(),
        Some("gpu-training-7xk2p: us-west-2a, gpu-training-q9m4t: us-west-2a")
    );
    assert_eq!(
        claims.expected.as_deref(),
        Some("topology.kubernetes.io/zone: us-west-2a")
    );
}

#[test]
fn a_missing_nodepool_fails_every_check_once_with_the_lab_missing_text() {
    for (state, others) in [(kind_solved(), "—"), (eks_solved(), "default")] {
        let r = state
            .remove(|o| o.kind() == "NodePool" && o.name() == "gpu-training")
            .graded();
        // On kind the state checks stay skipped for the missing controller.
        let r = if others == "—" {
            minus_no_controller(&r)
        } else {
            r
        };
        for o in &r.outcomes {
            assert_eq!(o.status, Status::Fail, "{}: {o:?}", o.check);
            assert_eq!(o.hint.as_deref(), Some("missing"), "{}", o.check);
            assert_eq!(
                o.expected.as_deref(),
                Some("karpenter.sh/v1 NodePool gpu-training")
            );
            // Another pool's name is not accepted; found lists what is there.
            assert_eq!(o.found.as_deref(), Some(others));
        }
        // The lab-level text, not zone-single's own hints.
        let rep = trainlab::report::LabReport::new(&r, Lang::En);
        let hint = rep.outcomes[0].hint.clone().unwrap();
        assert!(
            hint.starts_with("There is no NodePool `gpu-training` (`apiVersion: karpenter.sh/v1`"),
            "{hint}"
        );
        assert!(rep.outcomes.iter().all(|o| o.missing));
    }
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
    let r = grade(&state);
    assert_eq!(outcome(&r, "zone-single").hint.as_deref(), Some("missing"));
}

// ---------------------------------------------------------------------------------------------
// zone-single: the apiVersion

#[test]
fn a_v1beta1_nodepool_fails_zone_single_naming_the_served_version() {
    // Karpenter v1.1 stopped serving karpenter.sh/v1beta1.
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["apiVersion"] = json!("karpenter.sh/v1beta1")
    });
    let o = assert_only_fails(&grade(&state), "zone-single", Some("api-version"));
    assert_eq!(o.expected.as_deref(), Some("apiVersion: karpenter.sh/v1"));
    assert_eq!(o.found.as_deref(), Some("apiVersion: karpenter.sh/v1beta1"));
    assert_eq!(o.evidence["served"], "karpenter.sh/v1");
    let hint = trainlab::report::LabReport::new(&grade(&state), Lang::En).outcomes[0]
        .hint
        .clone()
        .unwrap();
    assert!(hint.contains("Use `apiVersion: karpenter.sh/v1`"), "{hint}");
}

#[test]
fn static_mode_fails_a_v1beta1_file_too() {
    // The v1beta1 shape: nodeClassRef had apiVersion instead of group.
    let state = State::load("karpenter-single-az/solution-state")
        .into_files()
        .remove(|o| o.kind() != "NodePool")
        .edit("NodePool", "gpu-training", |v| {
            v["apiVersion"] = json!("karpenter.sh/v1beta1");
            v["spec"]["template"]["spec"]["nodeClassRef"] =
                json!({"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "default"});
        });
    let r = grade(&state);
    let o = outcome(&r, "zone-single");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("api-version"))
    );
    let o = outcome(&r, "node-class-ref");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("no-ref"))
    );
    assert_eq!(o.evidence["fields"], "group");
}

// ---------------------------------------------------------------------------------------------
// zone-single: the concept, one AZ left

#[test]
fn no_zone_requirement_fails_zone_single_and_skips_the_zone_lookups() {
    let r = set_requirement(eks_solved(), ZONE, &[]).graded();
    let r = minus_skipped(&r, &["zone-exists", "nodeclaims-in-zone"], "no-single-zone");
    let o = assert_only_fails(&r, "zone-single", Some("no-requirement"));
    assert_eq!(o.found.as_deref(), Some("—"));
    assert_eq!(
        o.expected.as_deref(),
        Some("topology.kubernetes.io/zone In [<zone>] | topology.k8s.aws/zone-id In [<zone-id>]")
    );
}

#[test]
fn not_in_fails_zone_single_with_its_own_hint() {
    let state = set_requirement(
        eks_solved(),
        ZONE,
        &[req(ZONE, "NotIn", &["us-west-2b", "us-west-2c"])],
    );
    let r = minus_skipped(
        &grade(&state),
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
        ZONE,
        &[req(ZONE, "In", &["us-west-2a", "us-west-2b"])],
    );
    let r = grade(&state);
    let r = minus_skipped(&r, &["zone-exists"], "no-single-zone");
    let r = minus_no_controller(&r);
    let o = assert_only_fails(&r, "zone-single", Some("several-values"));
    assert_eq!(
        o.found.as_deref(),
        Some("topology.kubernetes.io/zone In [us-west-2a, us-west-2b]")
    );
    assert_eq!(o.evidence["values"], "us-west-2a, us-west-2b");
}

#[test]
fn requirements_that_narrow_to_one_zone_together_pass() {
    // Karpenter intersects requirements on a key: In [a, b] ∩ In [a, c] and In [a, b] minus
    // NotIn [b] both leave us-west-2a only.
    for reqs in [
        vec![
            req(ZONE, "In", &["us-west-2a", "us-west-2b"]),
            req(ZONE, "In", &["us-west-2a", "us-west-2c"]),
        ],
        vec![
            req(ZONE, "In", &["us-west-2a", "us-west-2b"]),
            req(ZONE, "NotIn", &["us-west-2b"]),
        ],
    ] {
        let r = set_requirement(eks_solved(), ZONE, &reqs).graded();
        assert_all_pass(&r);
        assert_eq!(outcome(&r, "zone-single").evidence["zone"], "us-west-2a");
    }
}

#[test]
fn requirements_that_leave_no_zone_fail_zone_single() {
    let state = set_requirement(
        eks_solved(),
        ZONE,
        &[
            req(ZONE, "In", &["us-west-2a"]),
            req(ZONE, "In", &["us-west-2b"]),
        ],
    );
    let r = minus_skipped(
        &grade(&state),
        &["zone-exists", "nodeclaims-in-zone"],
        "no-single-zone",
    );
    let o = assert_only_fails(&r, "zone-single", Some("no-zone"));
    assert_eq!(o.evidence["key"], ZONE);
    assert_eq!(
        o.found.as_deref(),
        Some("topology.kubernetes.io/zone In [us-west-2a]; topology.kubernetes.io/zone In [us-west-2b]")
    );
}

#[test]
fn an_operator_that_names_no_zone_fails_zone_single() {
    let state = set_requirement(
        eks_solved(),
        ZONE,
        &[json!({"key": ZONE, "operator": "Exists"})],
    );
    let r = minus_skipped(
        &grade(&state),
        &["zone-exists", "nodeclaims-in-zone"],
        "no-single-zone",
    );
    let o = assert_only_fails(&r, "zone-single", Some("operator"));
    assert_eq!(o.evidence["operator"], "Exists");
}

// ---------------------------------------------------------------------------------------------
// The AZ ID: topology.k8s.aws/zone-id

#[test]
fn on_eks_one_az_id_pins_the_pool_as_well_as_a_zone_name() {
    let r = zone_id(eks_solved(), "usw2-az1").graded();
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "zone-single").found.as_deref(),
        Some("topology.k8s.aws/zone-id In [usw2-az1]")
    );
    assert_eq!(
        outcome(&r, "zone-exists").expected.as_deref(),
        Some("topology.k8s.aws/zone-id: usw2-az1, usw2-az2")
    );
    // The NodeClaims are judged by their AZ ID label.
    assert_eq!(
        outcome(&r, "nodeclaims-in-zone").found.as_deref(),
        Some("gpu-training-7xk2p: usw2-az1, gpu-training-q9m4t: usw2-az1")
    );
}

#[test]
fn on_eks_an_az_id_of_the_region_without_nodes_is_fine_and_another_region_fails() {
    let r = without_gpu_claims(zone_id(eks_solved(), "usw2-az3")).graded();
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "zone-exists").expected.as_deref(),
        Some("topology.k8s.aws/zone-id: usw2-az<n>")
    );
    let r = without_gpu_claims(zone_id(eks_solved(), "euw1-az1")).graded();
    let o = assert_only_fails(&r, "zone-exists", Some("other-region"));
    assert_eq!(o.evidence["regions"], "usw2");
}

#[test]
fn a_zone_name_and_az_id_of_the_same_az_pass_and_of_different_azs_fail() {
    let both = |id: &str| {
        let id = id.to_string();
        eks_solved().edit("NodePool", "gpu-training", move |v| {
            requirements(v).push(req(ZONE_ID, "In", &[&id]))
        })
    };
    assert_all_pass(&both("usw2-az1").graded());
    let o = assert_only_fails(&both("usw2-az2").graded(), "zone-exists", Some("mismatch"));
    assert_eq!(o.evidence["zone_ids"], "usw2-az1");
    assert_eq!(
        o.found.as_deref(),
        Some("topology.k8s.aws/zone-id: usw2-az2")
    );
}

#[test]
fn on_kind_an_az_id_cannot_be_looked_up() {
    // kind nodes carry zone names only.
    let r = zone_id(kind_solved(), "usw2-az1").graded();
    let r = minus_skipped(&r, &["zone-exists"], "no-node-zones");
    assert_all_pass(&minus_no_controller(&r));
}

// ---------------------------------------------------------------------------------------------
// zone-exists

#[test]
fn on_kind_the_zone_must_be_one_of_the_nodes_zones() {
    let r = zone(kind_solved(), "us-west-2d").graded();
    let r = minus_no_controller(&r);
    let o = assert_only_fails(&r, "zone-exists", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("topology.kubernetes.io/zone: us-west-2a, us-west-2b, us-west-2c")
    );
    assert_eq!(o.found.as_deref(), Some("us-west-2d"));
}

#[test]
fn on_eks_a_zone_of_the_region_without_nodes_is_fine() {
    let r = without_gpu_claims(zone(eks_solved(), "us-west-2d")).graded();
    assert_all_pass(&r);
    let o = outcome(&r, "zone-exists");
    assert_eq!(
        o.expected.as_deref(),
        Some("topology.kubernetes.io/zone: us-west-2<letter>")
    );
    assert_eq!(o.found.as_deref(), Some("us-west-2d"));
}

#[test]
fn on_eks_a_zone_of_another_region_fails() {
    let r = without_gpu_claims(zone(eks_solved(), "eu-west-1a")).graded();
    let o = assert_only_fails(&r, "zone-exists", Some("other-region"));
    assert_eq!(o.evidence["regions"], "us-west-2");
    // An AZ ID on the zone name key is not a zone name.
    let r = without_gpu_claims(zone(eks_solved(), "usw2-az1")).graded();
    assert_only_fails(&r, "zone-exists", Some("other-region"));
}

#[test]
fn on_eks_the_region_comes_from_zone_names_not_the_region_label() {
    let state = without_gpu_claims(zone(eks_solved(), "us-west-2c")).edit_all("Node", |v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/region");
    });
    assert_all_pass(&grade(&state));
}

#[test]
fn nodes_without_zone_labels_skip_zone_exists() {
    let state = eks_solved().edit_all("Node", |v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove(ZONE);
    });
    let r = grade(&state);
    assert_eq!(outcome(&r, "zone-exists").evidence["key"], ZONE);
    assert_all_pass(&minus_skipped(&r, &["zone-exists"], "no-node-zones"));
}

// ---------------------------------------------------------------------------------------------
// efa-instance-types

#[test]
fn no_instance_type_requirement_is_unrestricted() {
    let r = set_requirement(eks_solved(), TYPE, &[]).graded();
    let o = assert_only_fails(&r, "efa-instance-types", Some("unrestricted"));
    assert_eq!(o.found.as_deref(), Some("—"));
    // NotIn alone leaves every other type allowed.
    let state = set_requirement(eks_solved(), TYPE, &[req(TYPE, "NotIn", &["t3.micro"])]);
    let o = assert_only_fails(&grade(&state), "efa-instance-types", Some("unrestricted"));
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type NotIn [t3.micro]")
    );
}

#[test]
fn types_outside_the_efa_gpu_table_fail_naming_them() {
    for (bad, hint, found) in [
        ("m5.large", "unknown-type", "{m5.large, p5.48xlarge}"),
        (
            "trn1.32xlarge",
            "not-efa-gpu",
            "{p5.48xlarge, trn1.32xlarge}",
        ),
        ("g5.48xlarge", "unknown-type", "{g5.48xlarge, p5.48xlarge}"),
    ] {
        let state = set_requirement(
            eks_solved(),
            TYPE,
            &[req(TYPE, "In", &["p5.48xlarge", bad])],
        );
        let o = assert_only_fails(&grade(&state), "efa-instance-types", Some(hint));
        assert_eq!(o.evidence["types"], bad);
        assert_eq!(
            o.found.as_deref(),
            Some(format!("node.kubernetes.io/instance-type ∈ {found}").as_str())
        );
    }
}

#[test]
fn a_family_requirement_cannot_be_mapped_to_efa_types() {
    let state = set_requirement(
        eks_solved(),
        TYPE,
        &[req("karpenter.k8s.aws/instance-family", "In", &["p5"])],
    );
    let o = assert_only_fails(&grade(&state), "efa-instance-types", Some("family-only"));
    assert_eq!(o.evidence["key"], "karpenter.k8s.aws/instance-family");
}

#[test]
fn instance_type_lists_are_intersected_like_karpenter_does() {
    // In [p5, m5] ∩ In [p5, p4d] = [p5]: only EFA GPU types remain.
    let state = set_requirement(
        eks_solved(),
        TYPE,
        &[
            req(TYPE, "In", &["p5.48xlarge", "m5.large"]),
            req(TYPE, "In", &["p5.48xlarge", "p4d.24xlarge"]),
        ],
    );
    assert_all_pass(&grade(&state));
    // Lists without a common type leave nothing: the default hint.
    let state = set_requirement(
        eks_solved(),
        TYPE,
        &[
            req(TYPE, "In", &["p5.48xlarge"]),
            req(TYPE, "In", &["p4d.24xlarge"]),
        ],
    );
    let o = assert_only_fails(&grade(&state), "efa-instance-types", None);
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type ∈ {}")
    );
}

// ---------------------------------------------------------------------------------------------
// on-demand

#[test]
fn no_capacity_type_requirement_fails_on_demand() {
    let r = set_requirement(eks_solved(), CAPACITY, &[]).graded();
    let o = assert_only_fails(&r, "on-demand", Some("no-requirement"));
    assert_eq!(
        o.found.as_deref(),
        Some("karpenter.sh/capacity-type ∈ {on-demand, reserved, spot}")
    );
}

#[test]
fn allowing_spot_fails_on_demand() {
    let state = set_requirement(
        eks_solved(),
        CAPACITY,
        &[req(CAPACITY, "In", &["spot", "on-demand"])],
    );
    let o = assert_only_fails(&grade(&state), "on-demand", None);
    assert_eq!(o.evidence["allowed"], "on-demand, spot");
    assert_eq!(
        o.expected.as_deref(),
        Some("karpenter.sh/capacity-type ⊆ {on-demand, reserved}")
    );
    // Spot beside reserved capacity is still spot.
    let state = set_requirement(
        eks_solved(),
        CAPACITY,
        &[req(CAPACITY, "In", &["reserved", "spot"])],
    );
    let o = assert_only_fails(&grade(&state), "on-demand", None);
    assert_eq!(o.evidence["allowed"], "reserved, spot");
}

/// Capacity reservations (ODCRs, Capacity Blocks: the usual way to get p5) are not reclaimed
/// with a two-minute notice either (Karpenter's `reserved` capacity type).
#[test]
fn reserved_capacity_passes_on_demand_with_advice_on_interruptible_reservations() {
    for values in [&["reserved"][..], &["reserved", "on-demand"][..]] {
        let state = set_requirement(eks_solved(), CAPACITY, &[req(CAPACITY, "In", values)]);
        let r = grade(&state);
        assert_all_pass(&r);
        let a = r
            .advice
            .iter()
            .find(|a| a.id == "interruptible-reservations")
            .expect("advice");
        assert_eq!(
            a.evidence["label"],
            "karpenter.k8s.aws/capacity-reservation-interruptible"
        );
    }
    // Interruptible reservations kept out: nothing to advise.
    let state = set_requirement(
        eks_solved(),
        CAPACITY,
        &[
            req(CAPACITY, "In", &["reserved", "on-demand"]),
            req(
                "karpenter.k8s.aws/capacity-reservation-interruptible",
                "NotIn",
                &["true"],
            ),
        ],
    );
    let r = grade(&state);
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn excluding_spot_and_reserved_leaves_on_demand() {
    let state = set_requirement(
        eks_solved(),
        CAPACITY,
        &[req(CAPACITY, "NotIn", &["spot", "reserved"])],
    );
    assert_all_pass(&grade(&state));
    // NotIn [spot] alone leaves on-demand and reserved capacity: neither is reclaimed.
    let state = set_requirement(eks_solved(), CAPACITY, &[req(CAPACITY, "NotIn", &["spot"])]);
    let r = grade(&state);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "on-demand").found.as_deref(),
        Some("karpenter.sh/capacity-type ∈ {on-demand, reserved}")
    );
    // DoesNotExist leaves no capacity type at all.
    let state = set_requirement(
        eks_solved(),
        CAPACITY,
        &[json!({"key": CAPACITY, "operator": "DoesNotExist"})],
    );
    let o = assert_only_fails(&grade(&state), "on-demand", None);
    assert_eq!(o.evidence["allowed"], "—");
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
    let o = assert_only_fails(&grade(&state), "node-class-ref", Some("no-ref"));
    assert_eq!(o.found.as_deref(), Some("—"));
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("");
    });
    let o = assert_only_fails(&grade(&state), "node-class-ref", Some("no-ref"));
    assert_eq!(o.evidence["fields"], "name");
}

#[test]
fn a_non_aws_node_class_fails() {
    let state = kind_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"] =
            json!({"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"});
    });
    let r = minus_no_controller(&grade(&state));
    let o = assert_only_fails(&r, "node-class-ref", Some("wrong-class"));
    assert_eq!(o.evidence["kind"], "KWOKNodeClass");
}

#[test]
fn a_reference_to_a_missing_ec2nodeclass_fails() {
    let state = kind_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("gpu");
    });
    let r = minus_no_controller(&grade(&state));
    let o = assert_only_fails(&r, "node-class-ref", Some("class-missing"));
    assert_eq!(o.expected.as_deref(), Some("EC2NodeClass: gpu"));
    assert_eq!(o.found.as_deref(), Some("EC2NodeClass: default"));
}

/// The solution file in static mode, its NodePool edited.
fn solution_files_with(edit: impl FnOnce(&mut Value)) -> State {
    solution_files("kind").edit("NodePool", "gpu-training", edit)
}

/// The solution folder as the learner's files, rendered for `profile` (kind's zone, or the
/// test site's on EKS).
fn solution_files(profile: &str) -> State {
    let mut s = State::load("../../labs/15-karpenter-single-az/solution").into_files();
    s.objects = files_of(LAB, "solution", profile)
        .into_iter()
        .flat_map(|(path, text)| trainlab::observe::parse_text(&text, &path).unwrap())
        .collect();
    s
}

fn node_class(name: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: {name}\nspec:\n  \
         role: R\n  amiSelectorTerms: [{{alias: al2023@latest}}]\n  \
         subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n"
    )
}

/// Static mode sees only the files: the starter's `default` (which `trainlab start` creates) and
/// classes in the files pass; any other name cannot be told from files and is not passed.
#[test]
fn static_mode_passes_only_a_node_class_it_can_see_or_the_starter_creates() {
    let gpu = |v: &mut Value| v["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("gpu");
    let r = solution_files_with(gpu).grade(LAB);
    let o = outcome(&r, "node-class-ref");
    assert_eq!(o.status, Status::Skipped, "{o:?}");
    assert_eq!(message(o), "class-unseen");
    assert_eq!(o.evidence["name"], "gpu");
    assert_eq!(o.evidence["classes"], "—");
    assert!(reason(&r, "node-class-ref").contains("EC2NodeClass `gpu`"));
    // Given with the files: seen, so it passes.
    let r = solution_files_with(gpu).add(&node_class("gpu")).grade(LAB);
    assert_eq!(status(&r, "node-class-ref"), Status::Pass);
    // Other classes in the files do not make `gpu` exist.
    let r = solution_files_with(gpu)
        .add(&node_class("default"))
        .grade(LAB);
    let o = outcome(&r, "node-class-ref");
    assert_eq!((o.status, message(o)), (Status::Skipped, "class-unseen"));
    assert_eq!(o.evidence["classes"], "default");
    // The starter's class, with or without its file.
    let r = solution_files_with(|_| {}).grade(LAB);
    assert_eq!(status(&r, "node-class-ref"), Status::Pass);
}

/// The verifier trusts `default` in static mode because the lab's starter creates it.
#[test]
fn the_starter_creates_the_node_class_static_mode_trusts() {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    let classes: Vec<String> = b
        .files_for("starter", "eks", &crate::support::state::test_site("eks"))
        .unwrap()
        .into_iter()
        .flat_map(|(rel, text)| trainlab::observe::parse_text(&text, rel).unwrap())
        .filter(|o| o.kind() == "EC2NodeClass")
        .map(|o| o.name().to_string())
        .collect();
    assert_eq!(classes, ["default"]);
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
    let o = assert_only_fails(&grade(&state), "nodepool-ready", None);
    assert_eq!(
        o.evidence["details"],
        "NodeClassReady=False (NodeClassNotFound: NodeClass not found on cluster)"
    );
    assert_eq!(o.evidence["node_class"], "default");
    // found holds condition types and reasons; the cluster's messages go to the hint.
    assert_eq!(
        o.found.as_deref(),
        Some("Ready=False (UnhealthyDependents); NodeClassReady=False (NodeClassNotFound)")
    );
}

#[test]
fn a_pool_still_reconciling_is_pending() {
    let state = set_conditions(
        eks_solved(),
        json!([{"type": "Ready", "status": "Unknown", "reason": "ReconcilingDependents",
                "message": "NodeClassReady=Unknown", "observedGeneration": 1}]),
    );
    let r = grade(&state);
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
    let r = grade(&state);
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
    let r = grade(&state);
    let o = outcome(&r, "nodepool-ready");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(o.reason, Some(Reason::Message("stale".into())));
    assert_eq!(o.evidence["observed"], "1");
}

#[test]
fn malformed_pool_conditions_are_bad_input() {
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["status"]["conditions"] = json!("Ready");
    });
    let err = state.try_grade(LAB).unwrap_err().to_string();
    assert!(
        err.contains("NodePool/gpu-training") && err.contains("status.conditions"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// nodeclaims-in-zone

#[test]
fn a_claim_left_in_the_old_zone_fails() {
    // The learner moved the pool from us-west-2b to us-west-2a after one claim launched.
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        v["metadata"]["labels"][ZONE] = json!("us-west-2b");
    });
    let o = assert_only_fails(&grade(&state), "nodeclaims-in-zone", None);
    assert_eq!(o.found.as_deref(), Some("gpu-training-q9m4t: us-west-2b"));
    assert_eq!(o.evidence["zone"], "us-west-2a");
}

#[test]
fn a_claim_being_deleted_in_the_old_zone_is_pending() {
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        v["metadata"]["labels"][ZONE] = json!("us-west-2b");
        v["metadata"]["deletionTimestamp"] = json!("2026-12-02T11:00:00Z");
    });
    let r = grade(&state);
    let o = outcome(&r, "nodeclaims-in-zone");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(o.reason, Some(Reason::Message("claims-leaving".into())));
    assert_eq!(o.evidence["claims"], "gpu-training-q9m4t: us-west-2b");
}

#[test]
fn a_claim_found_by_its_owner_counts_even_without_the_pool_label() {
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        let labels = v["metadata"]["labels"].as_object_mut().unwrap();
        labels.remove("karpenter.sh/nodepool");
        labels.insert(ZONE.into(), json!("us-west-2c"));
    });
    let o = assert_only_fails(&grade(&state), "nodeclaims-in-zone", None);
    assert_eq!(o.evidence["claims"], "gpu-training-q9m4t: us-west-2c");
}

#[test]
fn a_claim_that_has_not_launched_yet_is_pending() {
    let state = eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove(ZONE);
    });
    let r = grade(&state);
    let o = outcome(&r, "nodeclaims-in-zone");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(o.reason, Some(Reason::Message("claims-launching".into())));
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
    let r = grade(&state);
    assert_all_pass(&r);
    assert_eq!(outcome(&r, "nodeclaims-in-zone").evidence["count"], "2");
}

#[test]
fn a_ready_pool_without_claims_passes() {
    let r = without_gpu_claims(eks_solved()).graded();
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "nodeclaims-in-zone").found.as_deref(),
        Some("—")
    );
}

// ---------------------------------------------------------------------------------------------
// Advice

fn advice_budgets(state: State) -> Option<String> {
    let r = grade(&state);
    assert_all_pass(&r);
    r.advice
        .iter()
        .find(|a| a.id == "keep-training-alive")
        .map(|a| a.evidence["budgets"].clone())
}

#[test]
fn default_disruption_settings_get_the_keep_training_alive_advice() {
    let state = set_budgets(
        eks_solved(),
        json!({"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
               "budgets": [{"nodes": "10%"}]}),
    );
    let r = grade(&state);
    assert_eq!(r.advice.len(), 1);
    assert_eq!(r.advice[0].evidence["policy"], "WhenEmptyOrUnderutilized");
    assert_eq!(advice_budgets(state).as_deref(), Some("{nodes: \"10%\"}"));
    // A zero budget only during office hours does not protect a training at night.
    let state = eks_solved().edit("NodePool", "gpu-training", |v| {
        v["spec"]["disruption"]["budgets"] =
            json!([{"nodes": "0", "reasons": ["Drifted"], "schedule": "0 9 * * mon-fri", "duration": "8h"}]);
    });
    assert_eq!(
        advice_budgets(state).as_deref(),
        Some("{nodes: \"0\", reasons: [Drifted], schedule: \"0 9 * * mon-fri\"}")
    );
}

#[test]
fn a_zero_budget_without_reasons_is_advised_against_because_it_keeps_empty_nodes() {
    // Budget.reasons unset applies to every reason, Empty included (kubernetes-sigs/karpenter
    // pkg/apis/v1/nodepool.go): WhenEmpty would never remove an empty GPU node.
    for budgets in [
        json!([{"nodes": "0"}]),
        json!([{"nodes": "0", "reasons": ["Drifted", "Empty"]}]),
    ] {
        let state = set_budgets(
            eks_solved(),
            json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m", "budgets": budgets}),
        );
        assert!(advice_budgets(state).is_some(), "{budgets}");
    }
    // A zero budget for Drifted next to a permissive default keeps empty nodes removable.
    let state = set_budgets(
        eks_solved(),
        json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m",
               "budgets": [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "10%"}]}),
    );
    assert_eq!(advice_budgets(state), None);
}

#[test]
fn the_solution_file_follows_its_own_advice() {
    let r = grade_files("labs/15-karpenter-single-az/solution");
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

// ---------------------------------------------------------------------------------------------
// Static mode, demo, language

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
            Some(Reason::Unavailable(Unavailable::NeedsLiveCluster))
        );
    }
}

/// The EKS answer is kind's NodePool in the site's zone (`solution-eks/`: `${site.zone}`), and
/// passes with the EKS profile's parameters, as `trainlab lint` grades it.
#[test]
fn the_eks_answer_is_kinds_in_the_sites_zone() {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    assert!(b.has_overlay("solution", "eks"));
    let spec = |profile: &str| {
        let s = solution_files(profile);
        let pool = s.objects.iter().find(|o| o.kind() == "NodePool").unwrap();
        let mut v = pool.value["spec"].clone();
        for r in v["template"]["spec"]["requirements"]
            .as_array_mut()
            .unwrap()
        {
            if r["key"] == "topology.kubernetes.io/zone" {
                r["values"] = json!(["<zone>"]);
            }
        }
        (v, pool.value["spec"].to_string())
    };
    let ((kind, kind_text), (eks, eks_text)) = (spec("kind"), spec("eks"));
    assert_eq!(kind, eks);
    assert!(kind_text.contains("us-west-2a") && eks_text.contains("eu-north-1b"));
    let s = solution_files("eks");
    let r = grade_lab(
        b,
        &s.observed(),
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        Some(Profile::Eks),
    )
    .unwrap();
    for c in [
        "zone-single",
        "efa-instance-types",
        "on-demand",
        "node-class-ref",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in ["zone-exists", "nodepool-ready", "nodeclaims-in-zone"] {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn static_mode_fails_the_draft() {
    let r = grade_files("labs/15-karpenter-single-az/draft");
    assert_eq!(
        outcome(&r, "zone-single").hint.as_deref(),
        Some("no-requirement")
    );
    assert_eq!(
        outcome(&r, "efa-instance-types").hint.as_deref(),
        Some("unrestricted")
    );
    assert_eq!(
        outcome(&r, "on-demand").hint.as_deref(),
        Some("no-requirement")
    );
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
fn the_demo_learner_listed_two_zones() {
    let r = grade_observed(trainlab::observe::sources::demo().unwrap());
    let o = outcome(&r, "zone-single");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.hint.as_deref(), Some("several-values"));
    assert_eq!(o.evidence["values"], "us-west-2a, us-west-2b");
    for c in ["efa-instance-types", "on-demand", "node-class-ref"] {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    let r = minus_skipped(&r, &["zone-exists"], "no-single-zone");
    minus_no_controller(&r);
    assert_eq!(r.advice.len(), 1);
}

/// Three consecutive space-separated all-lowercase ASCII words (2+ letters): an English sentence
/// built in Rust (the heuristic of the CLI's ja test).
fn english_sentence(text: &str) -> Option<String> {
    let plain = |w: &&str| {
        let w = w.trim_matches(|c: char| matches!(c, ',' | ';' | '.' | ':' | '(' | ')'));
        w.len() >= 2 && w.chars().all(|c| c.is_ascii_lowercase())
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(3)
        .find(|w| w.iter().all(plain))
        .map(|w| w.join(" "))
}

#[test]
fn a_japanese_report_of_any_state_has_no_english_sentence_in_expected_or_found() {
    assert!(english_sentence("no requirement on zone").is_some());
    let states = [
        kind_solved(),
        eks_solved(),
        eks_solved().remove(|o| o.kind() == "NodePool" && o.name() == "gpu-training"),
        eks_solved().edit("NodePool", "gpu-training", |v| {
            v["apiVersion"] = json!("karpenter.sh/v1beta1")
        }),
        set_requirement(eks_solved(), ZONE, &[]),
        set_requirement(eks_solved(), ZONE, &[req(ZONE, "NotIn", &["us-west-2b"])]),
        set_requirement(
            eks_solved(),
            ZONE,
            &[
                req(ZONE, "In", &["us-west-2a"]),
                req(ZONE, "In", &["us-west-2b"]),
            ],
        ),
        zone(kind_solved(), "us-west-2d"),
        without_gpu_claims(zone(eks_solved(), "us-west-2d")),
        without_gpu_claims(zone(eks_solved(), "eu-west-1a")),
        zone_id(eks_solved(), "usw2-az1"),
        eks_solved().edit("NodePool", "gpu-training", |v| {
            requirements(v).push(req(ZONE_ID, "In", &["usw2-az2"]))
        }),
        set_requirement(eks_solved(), TYPE, &[]),
        set_requirement(
            eks_solved(),
            TYPE,
            &[req("karpenter.k8s.aws/instance-family", "In", &["p5"])],
        ),
        set_requirement(
            eks_solved(),
            TYPE,
            &[req(TYPE, "In", &["p5.48xlarge", "m5.large"])],
        ),
        set_requirement(eks_solved(), CAPACITY, &[]),
        eks_solved().edit("NodePool", "gpu-training", |v| {
            v["spec"]["template"]["spec"]
                .as_object_mut()
                .unwrap()
                .remove("nodeClassRef");
        }),
        kind_solved().edit("NodePool", "gpu-training", |v| {
            v["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("gpu")
        }),
        set_conditions(
            eks_solved(),
            json!([{"type": "NodeClassReady", "status": "False", "reason": "NodeClassNotFound",
                    "message": "NodeClass not found on cluster"},
                   {"type": "Ready", "status": "False", "reason": "UnhealthyDependents",
                    "message": "NodeClassReady=False"}]),
        ),
        eks_solved().edit("NodeClaim", "gpu-training-q9m4t", |v| {
            v["metadata"]["labels"][ZONE] = json!("us-west-2b");
        }),
    ];
    let mut found = Vec::new();
    for (i, state) in states.iter().enumerate() {
        let rep = trainlab::report::LabReport::new(&grade(state), Lang::Ja);
        let json: Value =
            serde_json::from_str(&trainlab::report::json::render_all(&[rep])).unwrap();
        for o in json["outcomes"].as_array().unwrap() {
            for field in ["expected", "found"] {
                if let Some(words) = o[field].as_str().and_then(english_sentence) {
                    found.push(format!(
                        "state {i} {}: {field}: {} («{words}»)",
                        o["check"], o[field]
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "English in a ja report:\n{}",
        found.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// EKS Auto Mode (issue 23): a NodePool on an Auto Mode cluster names Auto Mode's NodeClass

fn auto_mode_ref(name: &'static str) -> impl FnOnce(&mut Value) {
    move |v| {
        v["spec"]["template"]["spec"]["nodeClassRef"] =
            json!({"group": "eks.amazonaws.com", "kind": "NodeClass", "name": name})
    }
}

const AUTO_MODE_DEFAULT_CLASS: &str =
    "apiVersion: eks.amazonaws.com/v1\nkind: NodeClass\nmetadata:\n  name: default\nspec:\n  role: R\n";

/// `state` read live from a cluster that does not serve `not_served` (an Auto Mode cluster has
/// no EC2NodeClass CRD; another cluster has no Auto Mode NodeClass).
fn live_without(state: &State, not_served: &'static trainlab::observe::ResourceKind) -> Observed {
    let verifier = verifier_for(LAB).unwrap();
    let objects = state.observed();
    let reads = queries(verifier, &Target::for_lab(LAB))
        .into_iter()
        .chain([trainlab::observe::Query::cluster(
            &trainlab::observe::kinds::NODES,
        )])
        .map(|q| {
            let answer = if std::ptr::eq(q.kind, not_served) {
                Err(Unavailable::NotServed {
                    resource: q.kind.resource_name(),
                    crd: q.kind.crd.unwrap_or_default().to_string(),
                    capability: q.kind.capability.map(str::to_string),
                })
            } else {
                Ok(objects
                    .objects()
                    .into_iter()
                    .filter(|o| q.kind.matches(o.api_version(), o.kind()))
                    .cloned()
                    .collect())
            };
            (q, answer)
        })
        .collect();
    Observed::live("test cluster", reads)
}

#[test]
fn an_auto_mode_pool_naming_the_clusters_node_class_passes() {
    use trainlab::observe::kinds::EC2NODECLASSES;
    // Static mode: the files show an Auto Mode pool; its `default` class is the cluster's own.
    let r = solution_files_with(auto_mode_ref("default")).grade(LAB);
    assert_eq!(
        status(&r, "node-class-ref"),
        Status::Pass,
        "{:?}",
        outcome(&r, "node-class-ref")
    );
    // Every other check grades it as it grades the Karpenter pool of the solution.
    let karpenter = solution_files_with(|_| {}).grade(LAB);
    for c in SPEC {
        assert_eq!(
            status(&r, c),
            status(&karpenter, c),
            "{c}: {:?}",
            outcome(&r, c)
        );
    }
    // Another name cannot be told from files: not passed, and the message names NodeClass.
    let r = solution_files_with(auto_mode_ref("gpu")).grade(LAB);
    let o = outcome(&r, "node-class-ref");
    assert_eq!((o.status, message(o)), (Status::Skipped, "class-unseen"));
    assert_eq!(o.evidence["kind"], "NodeClass");
    assert!(reason(&r, "node-class-ref").contains("NodeClass `gpu`"));

    // Live on an Auto Mode cluster (no EC2NodeClass CRD), the class present: passes.
    let auto = eks_solved()
        .edit("NodePool", "gpu-training", auto_mode_ref("default"))
        .add(AUTO_MODE_DEFAULT_CLASS);
    let r = grade_observed(live_without(&auto, &EC2NODECLASSES));
    assert_eq!(
        status(&r, "node-class-ref"),
        Status::Pass,
        "{:?}",
        outcome(&r, "node-class-ref")
    );
    // A class the cluster does not have fails with the hint naming NodeClass.
    let missing = eks_solved()
        .edit("NodePool", "gpu-training", auto_mode_ref("gpu"))
        .add(AUTO_MODE_DEFAULT_CLASS);
    let o = assert_only_fails(
        &grade_observed(live_without(&missing, &EC2NODECLASSES)),
        "node-class-ref",
        Some("class-missing"),
    );
    assert_eq!(o.expected.as_deref(), Some("NodeClass: gpu"));
    assert_eq!(o.evidence["classes"], "default");
}

#[test]
fn a_pool_naming_the_node_class_the_cluster_lacks_fails_with_the_one_it_has() {
    use trainlab::observe::kinds::{EC2NODECLASSES, EKS_NODECLASSES};
    // An Auto Mode cluster, a pool written for Karpenter's EC2NodeClass.
    let karpenter_pool = eks_solved().add(AUTO_MODE_DEFAULT_CLASS);
    let o = assert_only_fails(
        &grade_observed(live_without(&karpenter_pool, &EC2NODECLASSES)),
        "node-class-ref",
        Some("auto-mode-cluster"),
    );
    assert_eq!(
        o.expected.as_deref(),
        Some("nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: <name>}")
    );
    // A cluster without Auto Mode, a pool written for Auto Mode.
    let auto_pool = eks_solved().edit("NodePool", "gpu-training", auto_mode_ref("default"));
    let o = assert_only_fails(
        &grade_observed(live_without(&auto_pool, &EKS_NODECLASSES)),
        "node-class-ref",
        Some("auto-mode-off"),
    );
    assert_eq!(o.evidence["kind"], "EC2NodeClass");
    // The hints say it in both languages.
    let r = grade_observed(live_without(&auto_pool, &EKS_NODECLASSES));
    let ja = trainlab::report::LabReport::new(&r, Lang::Ja);
    let hint = ja
        .outcomes
        .iter()
        .find(|o| o.check == "node-class-ref")
        .and_then(|o| o.hint.clone())
        .unwrap();
    assert!(
        hint.contains("EKS Auto Mode") && hint.contains("karpenter.k8s.aws"),
        "{hint}"
    );
}

#[test]
fn an_auto_mode_family_label_alone_does_not_name_the_efa_instance_types() {
    // `eks.amazonaws.com/instance-family` is Auto Mode's spelling of the family label.
    let s = set_requirement(eks_solved(), "node.kubernetes.io/instance-type", &[]);
    let s = set_requirement(
        s,
        "eks.amazonaws.com/instance-family",
        &[json!({"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["p5"]})],
    );
    let o = assert_only_fails(&grade(&s), "efa-instance-types", Some("family-only"));
    assert_eq!(o.evidence["key"], "eks.amazonaws.com/instance-family");
}

#[test]
fn the_auto_mode_built_in_pools_are_left_alone() {
    // EKS Auto Mode's own pools (`system`, `general-purpose`: every zone, its NodeClass) are not
    // the learner's pool: the lab grades `gpu-training` exactly as without them.
    let with_pools = eks_solved()
        .add(&auto_mode_built_in_pool("system"))
        .add(&auto_mode_built_in_pool("general-purpose"));
    let without = eks_solved().graded();
    let with = with_pools.graded();
    let statuses = |r: &LabResult| -> Vec<(String, Status)> {
        r.outcomes
            .iter()
            .map(|o| (o.check.clone(), o.status))
            .collect()
    };
    assert_eq!(statuses(&with), statuses(&without));
    assert_all_pass(&with);
}
