//! Lab 5 `efa-nccl`: the verifier judged on saved cluster states and on manifest files.

use crate::support;
use support::state::*;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use trainlab::catalog::Catalog;
use trainlab::labs::grade_lab;
use trainlab::observe::{manifest_files, parse_file, Obj, Observed, SourceKind, Unavailable};
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Outcome, Reason, Status, Target};

const LAB: &str = "efa-nccl";

fn solved() -> State {
    State::load("efa-nccl/solution-state").and("kind-nodes")
}

/// The Job's pod template spec.
fn tpl(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]
}

/// The Job's (only) container.
fn ctr(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

fn edit_job(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("Job", "nccl-efa", f)
}

fn message_id(o: &Outcome) -> Option<&str> {
    match &o.reason {
        Some(Reason::Message(id)) => Some(id.as_str()),
        _ => None,
    }
}

/// Objects of lab files (solution, draft) read as the learner's manifests: static mode.
fn grade_files(rel: &str, params: &[(&str, &str)]) -> LabResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let objects: Vec<Obj> = manifest_files(&root)
        .expect("lab files")
        .iter()
        .flat_map(|f| parse_file(f).expect("valid manifest"))
        .collect();
    let obs = Observed::offline(SourceKind::Files, rel, objects);
    let catalog = Catalog::embedded().expect("embedded labs load");
    let bundle = catalog.get(LAB).expect("lab exists");
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    grade_lab(bundle, &obs, &Target::for_lab(LAB), &params, None).expect("grading succeeds")
}

/// The EKS solution as `solve --profile eks` applies it: `solution/` with `solution-eks/` laid
/// over it (a file of the same name replaces), graded in static mode with the eks parameters.
fn grade_eks_solution(lab_dir: &str) -> LabResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(lab_dir);
    let mut files: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    for folder in ["solution", "solution-eks"] {
        for f in manifest_files(&root.join(folder)).expect("lab files") {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            files.insert(name, f);
        }
    }
    let objects: Vec<Obj> = files
        .values()
        .flat_map(|f| parse_file(f).expect("valid manifest"))
        .collect();
    let obs = Observed::offline(SourceKind::Files, lab_dir, objects);
    let catalog = Catalog::embedded().expect("embedded labs load");
    let bundle = catalog.get(LAB).expect("lab exists");
    grade_lab(
        bundle,
        &obs,
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        Some(trainlab::facts::Profile::Eks),
    )
    .expect("grading succeeds")
}

const SPEC_CHECKS: [&str; 6] = [
    "efa-in-limits",
    "efa-count",
    "gpus-whole-node",
    "fi-provider",
    "efa-instance-type",
    "single-zone",
];
const STATE_CHECKS: [&str; 3] = ["pods-on-efa-nodes", "pods-same-zone", "pods-running"];

// --- the reference answer ---------------------------------------------------------------------

#[test]
fn solution_state_passes_every_check_without_advice() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn check_ids_match_the_lab_file() {
    let catalog = Catalog::embedded().unwrap();
    let lab = &catalog.get(LAB).unwrap().lab;
    let ids: Vec<&str> = lab.checks.iter().map(|c| c.id.as_str()).collect();
    let v = trainlab::labs::verifier_for(LAB).unwrap();
    assert_eq!(ids, v.check_ids());
    assert_eq!(ids, [&SPEC_CHECKS[..], &STATE_CHECKS[..]].concat());
}

#[test]
fn solution_manifests_pass_the_spec_checks_in_static_mode() {
    let r = grade_files("labs/05-efa-nccl/solution", &[]);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

#[test]
fn the_eks_solution_passes_every_spec_check_in_static_mode() {
    // Issue 20 §1: the EKS answer is a real nccl-tests MPIJob, checked with the eks parameters.
    let r = grade_eks_solution("labs/05-efa-nccl");
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn the_draft_fails_every_spec_check_in_static_mode() {
    let r = grade_files("labs/05-efa-nccl/draft", &[]);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Fail, "{c}: {:?}", outcome(&r, c));
    }
    assert_eq!(
        outcome(&r, "gpus-whole-node").found.as_deref(),
        Some("nvidia.com/gpu: 1")
    );
}

#[test]
fn the_demo_learner_got_it_right_but_set_rdmav_fork_safe() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/demo");
    let objects: Vec<Obj> = ["00-nodes.yaml", "05-efa-nccl.yaml"]
        .iter()
        .flat_map(|f| parse_file(&root.join(f)).expect("valid demo file"))
        .collect();
    let obs = Observed::offline(SourceKind::Demo, "demo", objects);
    let catalog = Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    let r = grade_lab(bundle, &obs, &Target::for_lab(LAB), &BTreeMap::new(), None).unwrap();
    assert_all_pass(&r);
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["rdmav-fork-safe"]);
}

// --- efa-in-limits ----------------------------------------------------------------------------

#[test]
fn efa_only_in_requests_fails_efa_in_limits() {
    let s = edit_job(solved(), |j| {
        let res = &mut ctr(j)["resources"];
        res["limits"]
            .as_object_mut()
            .unwrap()
            .remove("vpc.amazonaws.com/efa");
        res["requests"] = json!({"vpc.amazonaws.com/efa": "32"});
    });
    // Rule change: the API server's own refusal (kit `resources::validate_*`) decides, and the
    // hint quotes it.
    let o = assert_only_fails(&s.grade(LAB), "efa-in-limits", Some("requests-only"));
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.template.spec.containers[0].resources.limits[vpc.amazonaws.com/efa]")
    );
    assert_eq!(
        o.evidence["api_error"],
        "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
    );
}

#[test]
fn efa_requests_different_from_limits_fail_efa_in_limits() {
    let s = edit_job(solved(), |j| {
        ctr(j)["resources"]["requests"] = json!({"vpc.amazonaws.com/efa": "16"});
    });
    let o = assert_only_fails(&s.grade(LAB), "efa-in-limits", Some("mismatch"));
    assert_eq!(
        o.found.as_deref(),
        Some("vpc.amazonaws.com/efa: requests 16, limits 32")
    );
    assert!(o.evidence["api_error"].ends_with("must be equal to vpc.amazonaws.com/efa limit of 32"));
}

#[test]
fn efa_on_a_sidecar_instead_of_the_gpu_container_is_named() {
    let s = edit_job(solved(), |j| {
        ctr(j)["resources"]["limits"]
            .as_object_mut()
            .unwrap()
            .remove("vpc.amazonaws.com/efa");
        tpl(j)["containers"].as_array_mut().unwrap().push(json!({
            "name": "sidecar", "image": "busybox:1.37",
            "resources": {"limits": {"vpc.amazonaws.com/efa": "32"}}
        }));
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "efa-in-limits");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("other-container"))
    );
    assert_eq!(o.evidence["other"], "spec.template.spec.containers[1]");
    assert_eq!(o.evidence["path"], "spec.template.spec.containers[0]");
    // The training container has no EFA, so its count is wrong too.
    assert_eq!(status(&r, "efa-count"), Status::Fail);
}

#[test]
fn no_efa_at_all_fails_efa_in_limits_and_efa_count() {
    let s = edit_job(solved(), |j| {
        ctr(j)["resources"]["limits"]
            .as_object_mut()
            .unwrap()
            .remove("vpc.amazonaws.com/efa");
    });
    let r = s.grade(LAB);
    let failed: Vec<&str> = r
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| o.check.as_str())
        .collect();
    assert_eq!(failed, ["efa-in-limits", "efa-count"]);
    assert_eq!(outcome(&r, "efa-in-limits").hint, None);
    assert_eq!(
        outcome(&r, "efa-count").found.as_deref(),
        Some("vpc.amazonaws.com/efa: —")
    );
}

// --- efa-count ----------------------------------------------------------------------------------

#[test]
fn the_quiz_s_four_efa_on_p5_fails_efa_count_with_the_real_count() {
    let s = edit_job(solved(), |j| {
        ctr(j)["resources"]["limits"]["vpc.amazonaws.com/efa"] = json!("4");
    });
    let o = assert_only_fails(&s.grade(LAB), "efa-count", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("vpc.amazonaws.com/efa: 32 (p5.48xlarge)")
    );
    assert_eq!(o.evidence["type_from"], "spec.template.spec");
    assert_eq!(o.found.as_deref(), Some("vpc.amazonaws.com/efa: 4"));
}

#[test]
fn placement_allowing_p4d_and_p5_fails_efa_count_because_one_count_cannot_fit_both() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("node.kubernetes.io/instance-type");
        tpl(j)["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "node.kubernetes.io/instance-type", "operator": "In",
                "values": ["p5.48xlarge", "p4d.24xlarge"]}]}]}}});
    });
    let o = assert_only_fails(&s.grade(LAB), "efa-count", Some("mixed-types"));
    assert_eq!(o.evidence["counts"], "p4d.24xlarge 4, p5.48xlarge 32");
}

#[test]
fn p5_and_p5e_share_a_count_so_allowing_both_is_fine() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("node.kubernetes.io/instance-type");
        tpl(j)["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "node.kubernetes.io/instance-type", "operator": "In",
                "values": ["p5.48xlarge", "p5e.48xlarge"]}]}]}}});
    });
    assert_all_pass(&s.grade(LAB));
}

#[test]
fn an_unknown_instance_type_fails_efa_count_saying_so() {
    let s = edit_job(solved().into_files(), |j| {
        tpl(j)["nodeSelector"]["node.kubernetes.io/instance-type"] = json!("g5.48xlarge");
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "efa-count");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("unknown-type"))
    );
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type: g5.48xlarge")
    );
    // The same unknown type cannot be confirmed EFA-capable either.
    let t = outcome(&r, "efa-instance-type");
    assert_eq!(
        (t.status, t.hint.as_deref()),
        (Status::Fail, Some("not-efa"))
    );
    for c in [
        "efa-in-limits",
        "gpus-whole-node",
        "fi-provider",
        "single-zone",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    let hint = trainlab::report::LabReport::new(&r, Lang::En)
        .outcomes
        .into_iter()
        .find(|x| x.check == "efa-count")
        .and_then(|x| x.hint)
        .unwrap();
    assert!(
        hint.contains("`g5.48xlarge`") && hint.contains("p5.48xlarge"),
        "{hint}"
    );
}

#[test]
fn without_a_pinned_type_efa_count_uses_the_nodes_the_pods_ran_on() {
    // Pods ran on the p5 nodes (32 EFA), so 4 is wrong even though the template names no type.
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("node.kubernetes.io/instance-type");
        ctr(j)["resources"]["limits"]["vpc.amazonaws.com/efa"] = json!("4");
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "efa-count");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(
        o.evidence["type_from"],
        "spec.nodeName: trainlab-worker, trainlab-worker2"
    );
}

#[test]
fn in_static_mode_an_unpinned_type_is_judged_against_the_task_s_type() {
    let s = edit_job(solved().into_files(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("node.kubernetes.io/instance-type");
    });
    let r = s.grade(LAB);
    assert_eq!(status(&r, "efa-count"), Status::Pass);
    assert_eq!(status(&r, "efa-instance-type"), Status::Fail);
    // `--param instance_type=p4d.24xlarge` changes what a whole node's EFA is.
    let r = s.param("instance_type", "p4d.24xlarge").grade(LAB);
    let o = outcome(&r, "efa-count");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(
        o.expected.as_deref(),
        Some("vpc.amazonaws.com/efa: 4 (p4d.24xlarge)")
    );
    assert_eq!(o.evidence["type_from"], "--param instance_type");
}

// --- gpus-whole-node ----------------------------------------------------------------------------

#[test]
fn half_a_node_of_gpus_fails_gpus_whole_node() {
    let s = edit_job(solved(), |j| {
        ctr(j)["resources"]["limits"]["nvidia.com/gpu"] = json!("4");
    });
    let o = assert_only_fails(&s.grade(LAB), "gpus-whole-node", None);
    assert_eq!(o.expected.as_deref(), Some("nvidia.com/gpu: 8"));
    assert_eq!(o.found.as_deref(), Some("nvidia.com/gpu: 4"));
}

#[test]
fn pinning_trainium_fails_gpus_whole_node_not_the_efa_checks() {
    let s = edit_job(solved().into_files(), |j| {
        tpl(j)["nodeSelector"] = json!({
            "node.kubernetes.io/instance-type": "trn1.32xlarge",
            "topology.kubernetes.io/zone": "us-west-2c"});
        ctr(j)["resources"]["limits"]["vpc.amazonaws.com/efa"] = json!("8");
    });
    let r = s.grade(LAB);
    for c in [
        "efa-in-limits",
        "efa-count",
        "fi-provider",
        "efa-instance-type",
        "single-zone",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    let o = outcome(&r, "gpus-whole-node");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("no-gpus-on-type"))
    );
    assert_eq!(o.evidence["gpuless"], "trn1.32xlarge");
}

// --- fi-provider --------------------------------------------------------------------------------

#[test]
fn an_unset_fi_provider_passes_with_the_aws_ofi_nccl_1_5_advice() {
    // Issue 20: aws-ofi-nccl newer than 1.5.0 picks the efa provider itself; FI_PROVIDER=efa is
    // what 1.5.0 and older need, so its absence is advice, not a fail.
    let s = edit_job(solved(), |j| {
        ctr(j).as_object_mut().unwrap().remove("env");
    });
    let r = s.grade(LAB);
    assert_all_pass(&r);
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["fi-provider-legacy"]);
    assert_eq!(
        outcome(&r, "fi-provider").found.as_deref(),
        Some("FI_PROVIDER=—")
    );
}

#[test]
fn a_provider_filter_without_efa_fails_fi_provider_quoting_it() {
    for (value, quoted) in [("tcp", "tcp"), ("sockets", "sockets"), (" ^efa", "^efa")] {
        let s = edit_job(solved(), |j| {
            ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "value": value}]);
        });
        let o = assert_only_fails(&s.grade(LAB), "fi-provider", Some("wrong-value"));
        assert_eq!(o.evidence["value"], quoted);
        assert_eq!(o.evidence["path"], "spec.template.spec.containers[0]");
    }
    let tcp = edit_job(solved(), |j| {
        ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "value": "tcp"}]);
    });
    let o = outcome(&tcp.grade(LAB), "fi-provider").clone();
    assert_eq!(o.found.as_deref(), Some("FI_PROVIDER=tcp"));
    // A list that still admits efa steers nothing off it.
    let listed = edit_job(solved(), |j| {
        ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "value": "efa,shm"}]);
    });
    assert_all_pass(&listed.grade(LAB));
}

#[test]
fn nccl_net_forcing_nccl_s_own_sockets_fails_fi_provider() {
    let s = edit_job(solved(), |j| {
        ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "value": "efa"},
                               {"name": "NCCL_NET", "value": "Socket"}]);
    });
    let o = assert_only_fails(&s.grade(LAB), "fi-provider", Some("nccl-net"));
    assert_eq!(o.evidence["value"], "Socket");
    assert_eq!(o.found.as_deref(), Some("FI_PROVIDER=efa; NCCL_NET=Socket"));
    // Naming the aws-ofi-nccl plugin keeps NCCL on EFA.
    let plugin = edit_job(solved(), |j| {
        ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "value": "efa"},
                               {"name": "NCCL_NET", "value": "AWS Libfabric"}]);
    });
    assert_all_pass(&plugin.grade(LAB));
}

#[test]
fn fi_provider_from_a_config_map_counts() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: efa-env\n  namespace: trainlab-efa-nccl\ndata:\n  FI_PROVIDER: efa\n";
    let by_key = edit_job(solved().add(cm), |j| {
        ctr(j)["env"] = json!([{"name": "FI_PROVIDER",
            "valueFrom": {"configMapKeyRef": {"name": "efa-env", "key": "FI_PROVIDER"}}}]);
    });
    assert_all_pass(&by_key.grade(LAB));
    let env_from = edit_job(solved().add(cm), |j| {
        ctr(j).as_object_mut().unwrap().remove("env");
        ctr(j)["envFrom"] = json!([{"configMapRef": {"name": "efa-env"}}]);
    });
    assert_all_pass(&env_from.grade(LAB));
}

#[test]
fn fi_provider_from_a_missing_config_map_cannot_be_checked() {
    // What trainlab cannot read is never the learner's fail: skipped, saying where it comes from.
    let s = edit_job(solved(), |j| {
        ctr(j)["env"] = json!([{"name": "FI_PROVIDER",
            "valueFrom": {"configMapKeyRef": {"name": "efa-env", "key": "FI_PROVIDER"}}}]);
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "fi-provider");
    assert_eq!(o.status, Status::Skipped);
    assert_eq!(message_id(o), Some("env-unresolved"));
    assert_eq!(o.evidence["source"], "ConfigMap/efa-env");
    assert_eq!(o.evidence["variable"], "FI_PROVIDER");
}

#[test]
fn fi_provider_exported_in_the_command_line_counts() {
    // The quiz writes `export FI_PROVIDER=efa`: a command line that sets it reaches NCCL too.
    let s = edit_job(solved(), |j| {
        ctr(j).as_object_mut().unwrap().remove("env");
        ctr(j)["command"] = json!([
            "sh",
            "-c",
            "export FI_PROVIDER=efa; echo rank $JOB_COMPLETION_INDEX; sleep 5"
        ]);
    });
    assert_all_pass(&s.grade(LAB));
    // ...and a command line that overrides the env with another provider is wrong.
    let s = edit_job(solved(), |j| {
        ctr(j)["command"] = json!(["sh", "-c", "FI_PROVIDER=tcp exec sleep 5"]);
    });
    let o = assert_only_fails(&s.grade(LAB), "fi-provider", Some("wrong-value"));
    assert_eq!(o.found.as_deref(), Some("FI_PROVIDER=tcp"));
}

// --- efa-instance-type ----------------------------------------------------------------------------

#[test]
fn no_instance_type_in_the_placement_fails_only_efa_instance_type() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("node.kubernetes.io/instance-type");
    });
    let o = assert_only_fails(&s.grade(LAB), "efa-instance-type", None);
    assert_eq!(
        o.found.as_deref(),
        Some("node.kubernetes.io/instance-type: —")
    );
}

#[test]
fn contradicting_node_selector_and_affinity_on_the_instance_type_is_explained() {
    let s = edit_job(solved().into_files(), |j| {
        tpl(j)["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]}]}]}}});
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "efa-instance-type");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("contradictory"))
    );
}

// --- single-zone ------------------------------------------------------------------------------------

#[test]
fn no_zone_constraint_fails_single_zone() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
    });
    let o = assert_only_fails(&s.grade(LAB), "single-zone", None);
    assert_eq!(o.found.as_deref(), Some("topology.kubernetes.io/zone: —"));
}

#[test]
fn two_allowed_zones_fail_single_zone() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
        tpl(j)["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "topology.kubernetes.io/zone", "operator": "In",
                "values": ["us-west-2a", "us-west-2b"]}]}]}}});
    });
    let o = assert_only_fails(&s.grade(LAB), "single-zone", Some("several-zones"));
    assert_eq!(o.evidence["zones"], "us-west-2a, us-west-2b");
}

#[test]
fn a_preferred_zone_does_not_count() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
        tpl(j)["affinity"] = json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "preference": {"matchExpressions": [{
                "key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]}]}}]}});
    });
    assert_only_fails(&s.grade(LAB), "single-zone", Some("preferred-only"));
}

#[test]
fn a_required_zone_pod_affinity_on_the_job_s_own_pods_counts() {
    let affinity = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "topology.kubernetes.io/zone",
        "labelSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "nccl-efa"}}}]}});
    let drop_zone = |j: &mut Value| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
    };
    let s = edit_job(solved(), |j| {
        drop_zone(j);
        tpl(j)["affinity"] = affinity.clone();
    });
    assert_all_pass(&s.grade(LAB));
    // A manifest does not carry the job-name label yet; the API server adds it.
    let files = State::load("efa-nccl/solution-state")
        .into_files()
        .edit("Job", "nccl-efa", |j| {
            drop_zone(j);
            tpl(j)["affinity"] = affinity.clone();
            j["spec"]["template"]["metadata"] = json!({});
        });
    assert_eq!(status(&files.grade(LAB), "single-zone"), Status::Pass);
}

#[test]
fn a_zone_pod_affinity_on_other_pods_fails_single_zone() {
    let s = edit_job(solved(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
        tpl(j)["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "topology.kubernetes.io/zone",
            "labelSelector": {"matchLabels": {"app": "database"}}}]}});
    });
    let o = assert_only_fails(&s.grade(LAB), "single-zone", Some("affinity-other-pods"));
    assert!(o.evidence["labels"].contains("job-name=nccl-efa"));
}

#[test]
fn an_az_id_keeps_the_pods_in_one_zone_too() {
    // `topology.k8s.aws/zone-id` names one physical zone as well as the zone name does.
    let s = edit_job(solved().into_files(), |j| {
        let sel = tpl(j)["nodeSelector"].as_object_mut().unwrap();
        sel.remove("topology.kubernetes.io/zone");
        sel.insert("topology.k8s.aws/zone-id".into(), json!("usw2-az1"));
    });
    assert_eq!(status(&s.grade(LAB), "single-zone"), Status::Pass);
    let s = edit_job(solved().into_files(), |j| {
        tpl(j)["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("topology.kubernetes.io/zone");
        tpl(j)["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "topology.k8s.aws/zone-id",
            "labelSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "nccl-efa"}}}]}});
    });
    assert_eq!(status(&s.grade(LAB), "single-zone"), Status::Pass);
}

/// A NodePool `gpu-training` whose requirements leave these zones (lab 15's arrangement).
fn node_pool(zones: &[&str]) -> String {
    pool_of_class("group: karpenter.k8s.aws, kind: EC2NodeClass", zones)
}

/// The same pool written for EKS Auto Mode (its own NodeClass).
fn auto_mode_pool(zones: &[&str]) -> String {
    pool_of_class("group: eks.amazonaws.com, kind: NodeClass", zones)
}

fn pool_of_class(class: &str, zones: &[&str]) -> String {
    let values: Vec<String> = zones.iter().map(|z| format!("\"{z}\"")).collect();
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu-training\nspec:\n  template:\n    spec:\n      nodeClassRef: {{{class}, name: default}}\n      requirements:\n      - {{key: topology.kubernetes.io/zone, operator: In, values: [{}]}}\n",
        values.join(", ")
    )
}

/// The Job's pods select a node label instead of naming a zone.
fn selecting(s: State, key: &str, value: &str) -> State {
    edit_job(s, |j| {
        let sel = tpl(j)["nodeSelector"].as_object_mut().unwrap();
        sel.remove("topology.kubernetes.io/zone");
        sel.insert(key.into(), json!(value));
    })
}

#[test]
fn a_node_pool_kept_to_one_zone_keeps_the_pods_in_one_zone() {
    // Issue 20: lab 15's arrangement, a single-AZ NodePool, is a zone constraint too.
    let s = selecting(
        solved().add(&node_pool(&["us-west-2a"])),
        "karpenter.sh/nodepool",
        "gpu-training",
    );
    let r = s.grade(LAB);
    assert_all_pass(&r);
    let o = outcome(&r, "single-zone");
    assert_eq!(o.evidence["zone"], "us-west-2a");
    assert_eq!(o.evidence["by"], "karpenter.sh/nodepool: gpu-training");
    // In static mode too, when the NodePool's manifest is among the files.
    let files = selecting(
        solved().add(&node_pool(&["us-west-2a"])).into_files(),
        "karpenter.sh/nodepool",
        "gpu-training",
    );
    assert_eq!(status(&files.grade(LAB), "single-zone"), Status::Pass);
}

#[test]
fn a_node_pool_spanning_zones_fails_single_zone_naming_it() {
    let s = selecting(
        solved().add(&node_pool(&["us-west-2a", "us-west-2b"])),
        "karpenter.sh/nodepool",
        "gpu-training",
    );
    let o = assert_only_fails(&s.grade(LAB), "single-zone", Some("pool-zones"));
    assert_eq!(o.evidence["zones"], "us-west-2a, us-west-2b");
    assert_eq!(
        o.found.as_deref(),
        Some("karpenter.sh/nodepool: gpu-training → topology.kubernetes.io/zone: us-west-2a, us-west-2b")
    );
}

#[test]
fn a_node_pool_static_mode_cannot_see_is_skipped_not_failed() {
    let s = selecting(
        solved().into_files(),
        "karpenter.sh/nodepool",
        "gpu-training",
    );
    let r = s.grade(LAB);
    let o = outcome(&r, "single-zone");
    assert_eq!(o.status, Status::Skipped, "{o:?}");
    assert_eq!(message_id(o), Some("zone-pool-unseen"));
    assert_eq!(o.evidence["by"], "karpenter.sh/nodepool: gpu-training");
}

#[test]
fn a_node_group_whose_nodes_sit_in_one_zone_keeps_the_pods_there() {
    let group = |name: &str| {
        let name = name.to_string();
        move |n: &mut Value| {
            let node = n["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if ["trainlab-worker", "trainlab-worker2"].contains(&node.as_str())
                || (name == "spread" && node == "trainlab-worker3")
            {
                n["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] = json!("p5");
            }
        }
    };
    let s = selecting(solved(), "eks.amazonaws.com/nodegroup", "p5").edit_all("Node", group("one"));
    let r = s.grade(LAB);
    assert_all_pass(&r);
    assert_eq!(outcome(&r, "single-zone").evidence["zone"], "us-west-2a");
    // A group with a node in another zone lets the pods split.
    let s =
        selecting(solved(), "eks.amazonaws.com/nodegroup", "p5").edit_all("Node", group("spread"));
    let o = assert_only_fails(&s.grade(LAB), "single-zone", Some("pool-zones"));
    assert_eq!(o.evidence["zones"], "us-west-2a, us-west-2b");
}

// --- pods-on-efa-nodes ------------------------------------------------------------------------------

#[test]
fn a_node_that_lost_its_efa_capacity_fails_pods_on_efa_nodes() {
    // kubelet re-registration can zero extended resources (facts §9.1).
    let s = solved().edit("Node", "trainlab-worker2", |n| {
        n["status"]["allocatable"]["vpc.amazonaws.com/efa"] = json!("0");
    });
    let o = assert_only_fails(&s.grade(LAB), "pods-on-efa-nodes", None);
    assert_eq!(
        o.found.as_deref(),
        Some("nccl-efa-1-m9q4d → trainlab-worker2: vpc.amazonaws.com/efa 0 < 32")
    );
}

#[test]
fn a_pod_on_the_p4d_node_fails_both_node_checks() {
    let s = solved().edit("Pod", "nccl-efa-1-m9q4d", |p| {
        p["spec"]["nodeName"] = json!("trainlab-worker3");
    });
    let r = s.grade(LAB);
    assert_eq!(status(&r, "pods-on-efa-nodes"), Status::Fail);
    assert_eq!(status(&r, "pods-same-zone"), Status::Fail);
    assert!(outcome(&r, "pods-on-efa-nodes")
        .found
        .as_deref()
        .unwrap()
        .contains("trainlab-worker3: vpc.amazonaws.com/efa 4 < 32"));
}

// --- pods-same-zone ---------------------------------------------------------------------------------

#[test]
fn pods_whose_nodes_are_in_two_zones_fail_pods_same_zone() {
    // A node relabelled after binding: the scheduler's constraint was met, the result is not.
    let s = solved().edit("Node", "trainlab-worker2", |n| {
        n["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("us-west-2b");
    });
    let o = assert_only_fails(&s.grade(LAB), "pods-same-zone", None);
    assert_eq!(
        o.found.as_deref(),
        Some("nccl-efa-0-7xk2p → trainlab-worker (us-west-2a), nccl-efa-1-m9q4d → trainlab-worker2 (us-west-2b)")
    );
}

// --- pods-running -----------------------------------------------------------------------------------

#[test]
fn a_non_indexed_job_fails_pods_running_with_the_shape() {
    let s = edit_job(solved(), |j| {
        j["spec"]["completionMode"] = json!("NonIndexed");
        j["spec"]["parallelism"] = json!(1);
    });
    let o = assert_only_fails(&s.grade(LAB), "pods-running", Some("job-shape"));
    assert_eq!(
        o.found.as_deref(),
        Some("completions: 2, parallelism: 1, completionMode: NonIndexed, suspend: false")
    );
}

#[test]
fn pinning_a_zone_without_p5_nodes_fails_pods_running_quoting_the_scheduler() {
    let r = State::load("efa-nccl/unschedulable")
        .and("kind-nodes")
        .grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
    let o = outcome(&r, "pods-running");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("unschedulable"))
    );
    let msg = &o.evidence["scheduler_message"];
    assert!(
        msg.starts_with("0/5 nodes are available:")
            && msg.contains("didn't match Pod's node affinity/selector")
    );
    assert_eq!(
        o.found.as_deref(),
        Some("nccl-efa-0-7xk2p: PodScheduled=False (Unschedulable)")
    );
    // Not bound yet: the node checks wait rather than fail.
    for c in ["pods-on-efa-nodes", "pods-same-zone"] {
        assert_eq!(status(&r, c), Status::Pending, "{c}");
        assert_eq!(message_id(outcome(&r, c)), Some("not-bound"));
    }
    let hint = trainlab::report::LabReport::new(&r, Lang::Ja)
        .outcomes
        .into_iter()
        .find(|x| x.check == "pods-running")
        .and_then(|x| x.hint)
        .unwrap();
    assert!(hint.contains(msg.as_str()), "{hint}");
}

#[test]
fn waiting_for_gpus_that_other_pods_hold_is_pending_not_fail() {
    // Same message shape, but the p5 nodes in us-west-2a would fit the pod if they were free.
    let msg = "0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.";
    let s = State::load("efa-nccl/unschedulable").and("kind-nodes");
    let s = edit_job(s, |j| {
        tpl(j)["nodeSelector"]["topology.kubernetes.io/zone"] = json!("us-west-2a");
    })
    .edit_all("Pod", |p| {
        p["spec"]["nodeSelector"]["topology.kubernetes.io/zone"] = json!("us-west-2a");
        p["status"]["conditions"][0]["message"] = json!(msg);
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!(o.status, Status::Pending, "{o:?}");
    assert_eq!(message_id(o), Some("waiting-capacity"));
    assert_eq!(o.evidence["scheduler_message"], msg);
}

#[test]
fn on_eks_a_missing_node_may_still_come_from_an_autoscaler() {
    let eks = |s: State| {
        s.edit_all("Node", |n| {
            let name = n["metadata"]["name"].as_str().unwrap().to_string();
            n["spec"]["providerID"] = json!(format!("aws:///us-west-2a/i-0{name}"));
        })
    };
    let r = eks(State::load("efa-nccl/unschedulable").and("kind-nodes")).grade(LAB);
    assert_eq!(status(&r, "pods-running"), Status::Pending);
    // 64 EFA is more than any p5.48xlarge has: no new node can help.
    let s = edit_job(
        State::load("efa-nccl/unschedulable").and("kind-nodes"),
        |j| {
            ctr(j)["resources"]["limits"]["vpc.amazonaws.com/efa"] = json!("64");
        },
    )
    .edit_all("Pod", |p| {
        p["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] = json!("64");
        p["spec"]["containers"][0]["resources"]["requests"]["vpc.amazonaws.com/efa"] = json!("64");
    });
    let r = eks(s).grade(LAB);
    assert_eq!(
        outcome(&r, "pods-running").hint.as_deref(),
        Some("unschedulable")
    );
}

#[test]
fn a_converging_cluster_is_pending_not_failing() {
    let r = State::load("efa-nccl/converging")
        .and("kind-nodes")
        .grade(LAB);
    for c in SPEC_CHECKS
        .iter()
        .chain(&["pods-on-efa-nodes", "pods-same-zone"])
    {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    let o = outcome(&r, "pods-running");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message_id(o), Some("creating"));
    assert_eq!(o.evidence["pods"], "nccl-efa-1-m9q4d");
}

#[test]
fn a_job_without_pods_yet_is_pending_everywhere_in_state() {
    let s = State::load("efa-nccl/converging")
        .and("kind-nodes")
        .remove(|o| o.kind() == "Pod");
    let r = s.grade(LAB);
    for c in STATE_CHECKS {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Pending, "{c}");
        assert_eq!(message_id(o), Some("no-pods"), "{c}");
    }
}

#[test]
fn a_completed_job_whose_pods_were_deleted_cannot_show_their_nodes() {
    let r = solved().remove(|o| o.kind() == "Pod").grade(LAB);
    for c in ["pods-on-efa-nodes", "pods-same-zone"] {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
        assert_eq!(message_id(outcome(&r, c)), Some("pods-gone"));
    }
    // The Job controller's Complete condition still says both indexes succeeded.
    assert_eq!(status(&r, "pods-running"), Status::Pass);
}

#[test]
fn a_failed_job_fails_pods_running_with_its_reason() {
    let s = edit_job(State::load("efa-nccl/converging").and("kind-nodes"), |j| {
        j["status"] = json!({"failed": 3, "conditions": [{
            "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
            "message": "Job has reached the specified backoff limit"}]});
    });
    let o = assert_only_fails(&s.grade(LAB), "pods-running", Some("job-failed"));
    assert_eq!(o.evidence["reason"], "BackoffLimitExceeded");
}

#[test]
fn a_failed_pod_being_retried_is_pending() {
    let s =
        State::load("efa-nccl/converging")
            .and("kind-nodes")
            .edit("Pod", "nccl-efa-1-m9q4d", |p| {
                p["status"]["phase"] = json!("Failed");
            });
    let o = outcome(&s.grade(LAB), "pods-running").clone();
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message_id(&o), Some("retrying"));
}

#[test]
fn an_image_that_cannot_be_pulled_fails_pods_running() {
    let s =
        State::load("efa-nccl/converging")
            .and("kind-nodes")
            .edit("Pod", "nccl-efa-1-m9q4d", |p| {
                p["status"]["containerStatuses"][0]["state"] = json!({"waiting": {
            "reason": "ImagePullBackOff",
            "message": "Back-off pulling image \"busybox:1.377\""}});
            });
    let o = assert_only_fails(&s.grade(LAB), "pods-running", Some("container-waiting"));
    assert_eq!(o.evidence["reason"], "ImagePullBackOff");
}

#[test]
fn a_container_that_cannot_be_created_fails_pods_running() {
    // Rule change (kit `pods::STUCK`): CreateContainerError and RunContainerError do not clear
    // by themselves either, so they fail like an image that cannot be pulled.
    let s =
        State::load("efa-nccl/converging")
            .and("kind-nodes")
            .edit("Pod", "nccl-efa-1-m9q4d", |p| {
                p["status"]["containerStatuses"][0]["state"] = json!({"waiting": {
            "reason": "CreateContainerError",
            "message": "failed to create containerd container"}});
            });
    let o = assert_only_fails(&s.grade(LAB), "pods-running", Some("container-waiting"));
    assert_eq!(o.evidence["reason"], "CreateContainerError");
}

// --- ownership, missing objects, bad input ---------------------------------------------------------

const FORGED: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: nccl-efa-1-forged
  namespace: trainlab-efa-nccl
  annotations: {batch.kubernetes.io/job-completion-index: '1'}
  labels: {batch.kubernetes.io/job-name: nccl-efa, job-name: nccl-efa, batch.kubernetes.io/job-completion-index: '1'}
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: nccl-efa, uid: 00000000-0000-4000-8000-000000000000, controller: true}
spec:
  nodeName: trainlab-worker3
  containers:
  - {name: nccl, image: busybox:1.37, resources: {limits: {vpc.amazonaws.com/efa: '32'}}}
status:
  phase: Succeeded
"#;

#[test]
fn pods_with_the_job_s_labels_but_not_its_uid_are_ignored() {
    // A forged pod in another zone on a 4-EFA node does not spoil the real pods' result...
    assert_all_pass(&solved().add(FORGED).grade(LAB));
    // ...and cannot stand in for them either.
    let r = solved()
        .remove(|o| o.kind() == "Pod")
        .edit("Job", "nccl-efa", |j| j["status"] = json!({"active": 2}))
        .add(FORGED)
        .grade(LAB);
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Pending, "{c}");
    }
}

#[test]
fn a_missing_job_fails_every_check_once_with_the_lab_s_missing_text() {
    // Rule change: the framework's `ctx.named` reports a missing object (hint `missing`, the
    // lab-level text), replacing the per-check `no-job` hints.
    let s = solved().remove(|o| o.kind() == "Job");
    let r = s.grade(LAB);
    for o in &r.outcomes {
        assert_eq!(
            (o.status, o.hint.as_deref()),
            (Status::Fail, Some("missing")),
            "{}",
            o.check
        );
        assert_eq!(o.expected.as_deref(), Some("batch/v1 Job nccl-efa"));
        assert_eq!(o.found.as_deref(), Some("—"));
    }
    for lang in [Lang::En, Lang::Ja] {
        let hint = trainlab::report::LabReport::new(&r, lang).outcomes[0]
            .hint
            .clone()
            .unwrap();
        assert!(
            hint.contains("kubectl apply -n trainlab-efa-nccl -f nccl-efa.yaml")
                && hint.contains("MPIJob"),
            "{hint}"
        );
    }
    let renamed = edit_job(solved(), |j| j["metadata"]["name"] = json!("nccl"));
    let r = renamed.grade(LAB);
    assert_eq!(outcome(&r, "efa-count").found.as_deref(), Some("nccl"));
}

#[test]
fn a_wrongly_typed_field_is_bad_input_naming_the_field() {
    let s = edit_job(solved(), |j| j["spec"]["parallelism"] = json!("two"));
    let err = s.try_grade(LAB).expect_err("bad input").to_string();
    assert!(err.contains("spec.parallelism"), "{err}");
}

// --- advice ------------------------------------------------------------------------------------------

#[test]
fn discouraged_efa_variables_are_advice_not_failures() {
    let s = edit_job(solved(), |j| {
        ctr(j)["env"].as_array_mut().unwrap().extend([
            json!({"name": "RDMAV_FORK_SAFE", "value": "1"}),
            json!({"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"}),
        ]);
    });
    let r = s.grade(LAB);
    assert_all_pass(&r);
    let rep = trainlab::report::LabReport::new(&r, Lang::En);
    let ids: Vec<&str> = rep.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["rdmav-fork-safe", "fi-efa-use-device-rdma"]);
    assert!(
        rep.advice[0].text.contains("`nccl` sets `RDMAV_FORK_SAFE`"),
        "{}",
        rep.advice[0].text
    );
}

// --- the EKS arrangement: an MPIJob whose Launcher runs nccl-tests across its two Workers -----------

fn mpijob() -> State {
    State::load("efa-nccl/mpijob-running").and("kind-nodes")
}

fn edit_mpijob(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("MPIJob", "nccl-efa", f)
}

fn launcher(v: &mut Value) -> &mut Value {
    &mut v["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
}

fn worker(v: &mut Value) -> &mut Value {
    &mut v["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
}

#[test]
fn an_mpijob_running_nccl_tests_across_two_workers_passes_every_check() {
    // The launcher pod sits on the control plane, which has no EFA: it is owned by the launcher
    // Job, not by the MPIJob, so the node checks judge the two Workers only.
    let r = mpijob().grade(LAB);
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn the_mpijob_manifest_passes_the_spec_checks_in_static_mode() {
    let r = mpijob()
        .remove(|o| o.kind() != "MPIJob")
        .into_files()
        .grade(LAB);
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    for c in STATE_CHECKS {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

#[test]
fn the_workers_env_does_not_reach_the_ranks_mpirun_exports_does() {
    // A Worker's `FI_PROVIDER=tcp` never reaches ranks started over ssh: they see none (advice).
    let s = edit_mpijob(mpijob(), |m| {
        let cmd = launcher(m)["command"].as_array_mut().unwrap();
        let at = cmd.iter().position(|w| w == "FI_PROVIDER=efa").unwrap();
        cmd.drain(at - 1..=at);
        worker(m)["env"] = json!([{"name": "FI_PROVIDER", "value": "tcp"}]);
    });
    let r = s.grade(LAB);
    assert_all_pass(&r);
    let ids: Vec<&str> = r.advice.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["fi-provider-legacy"]);
    // What mpirun exports does reach them.
    let s = edit_mpijob(mpijob(), |m| {
        let cmd = launcher(m)["command"].as_array_mut().unwrap();
        let at = cmd.iter().position(|w| w == "FI_PROVIDER=efa").unwrap();
        cmd.insert(at + 1, json!("NCCL_NET=Socket"));
        cmd.insert(at + 1, json!("-x"));
    });
    let o = assert_only_fails(&s.grade(LAB), "fi-provider", Some("nccl-net"));
    assert_eq!(
        o.found.as_deref(),
        Some("mpirun -x FI_PROVIDER=efa; mpirun -x NCCL_NET=Socket")
    );
    assert_eq!(
        o.evidence["path"],
        "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]"
    );
}

#[test]
fn mpirun_forwarding_the_launcher_s_fi_provider_counts() {
    let s = edit_mpijob(mpijob(), |m| {
        let cmd = launcher(m)["command"].as_array_mut().unwrap();
        let at = cmd.iter().position(|w| w == "FI_PROVIDER=efa").unwrap();
        cmd[at] = json!("FI_PROVIDER");
        launcher(m)["env"] = json!([{"name": "FI_PROVIDER", "value": "efa"}]);
    });
    assert_all_pass(&s.grade(LAB));
    // The same inside `sh -c`, as a script.
    let s = edit_mpijob(mpijob(), |m| {
        launcher(m)["command"] = json!(["sh", "-c",
            "mpirun --allow-run-as-root -np 16 -x FI_PROVIDER=tcp /opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G"]);
    });
    let o = assert_only_fails(&s.grade(LAB), "fi-provider", Some("wrong-value"));
    assert_eq!(o.found.as_deref(), Some("mpirun -x FI_PROVIDER=tcp"));
}

#[test]
fn a_launcher_running_all_reduce_perf_without_mpirun_fails_fi_provider() {
    // Issue 10 item 8: bare `all_reduce_perf` tests one pod's GPUs and starts no rank elsewhere.
    let s = edit_mpijob(mpijob(), |m| {
        launcher(m)["command"] = json!([
            "/opt/nccl-tests/build/all_reduce_perf",
            "-b",
            "8",
            "-e",
            "1G",
            "-f",
            "2",
            "-g",
            "8"
        ]);
    });
    let o = assert_only_fails(&s.grade(LAB), "fi-provider", Some("no-mpirun"));
    assert_eq!(
        o.found.as_deref(),
        Some("/opt/nccl-tests/build/all_reduce_perf -b 8 -e 1G -f 2 -g 8")
    );
}

#[test]
fn a_removed_mpijob_version_fails_efa_in_limits_naming_the_served_one() {
    let s = edit_mpijob(mpijob(), |m| m["apiVersion"] = json!("kubeflow.org/v1"));
    let o = assert_only_fails(&s.grade(LAB), "efa-in-limits", Some("api-version"));
    assert_eq!(o.expected.as_deref(), Some("kubeflow.org/v2beta1"));
    assert_eq!(o.found.as_deref(), Some("kubeflow.org/v1"));
    let hint = trainlab::report::LabReport::new(&s.grade(LAB), Lang::En)
        .outcomes
        .into_iter()
        .find(|x| x.check == "efa-in-limits")
        .and_then(|x| x.hint)
        .unwrap();
    assert!(
        hint.contains("`apiVersion: kubeflow.org/v2beta1`"),
        "{hint}"
    );
}

#[test]
fn an_mpijob_with_one_worker_fails_pods_running_with_its_shape() {
    let s = edit_mpijob(mpijob(), |m| {
        m["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!(1);
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "pods-running");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("mpi-shape"))
    );
    assert_eq!(
        o.found.as_deref(),
        Some("Worker.replicas: 1, Launcher.replicas: 1, suspend: false")
    );
}

#[test]
fn a_succeeded_mpijob_whose_workers_were_cleaned_up_passes_pods_running() {
    let s = edit_mpijob(mpijob(), |m| {
        m["status"]["conditions"] = json!([
            {"type": "Created", "status": "True"},
            {"type": "Running", "status": "False"},
            {"type": "Succeeded", "status": "True", "reason": "MPIJobSucceeded"}]);
    })
    .remove(|o| o.kind() == "Pod");
    let r = s.grade(LAB);
    assert_eq!(status(&r, "pods-running"), Status::Pass);
    for c in ["pods-on-efa-nodes", "pods-same-zone"] {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
        assert_eq!(message_id(outcome(&r, c)), Some("pods-gone"));
    }
}

// --- what the API server refuses fails in static mode too -----------------------------------------

#[test]
fn gpus_in_requests_only_fail_gpus_whole_node_quoting_the_api_server() {
    let s = edit_job(solved().into_files(), |j| {
        let res = &mut ctr(j)["resources"];
        res["limits"]
            .as_object_mut()
            .unwrap()
            .remove("nvidia.com/gpu");
        res["requests"] = json!({"nvidia.com/gpu": "8"});
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "gpus-whole-node");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("requests-only"))
    );
    assert_eq!(
        o.found.as_deref(),
        Some("spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]: 8")
    );
    let hint = trainlab::report::LabReport::new(&r, Lang::Ja)
        .outcomes
        .into_iter()
        .find(|x| x.check == "gpus-whole-node")
        .and_then(|x| x.hint)
        .unwrap();
    assert!(
        hint.contains("Limit must be set for non overcommitable resources"),
        "{hint}"
    );
    for c in [
        "efa-in-limits",
        "efa-count",
        "fi-provider",
        "efa-instance-type",
        "single-zone",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}");
    }
}

#[test]
fn gpu_requests_unequal_to_limits_fail_gpus_whole_node() {
    let s = edit_job(solved(), |j| {
        ctr(j)["resources"]["requests"] = json!({"nvidia.com/gpu": "4"});
    });
    let o = assert_only_fails(&s.grade(LAB), "gpus-whole-node", Some("mismatch"));
    assert_eq!(
        o.found.as_deref(),
        Some("nvidia.com/gpu: requests 4, limits 8")
    );
}

#[test]
fn a_fractional_efa_count_is_a_fail_not_bad_input() {
    let s = edit_job(solved().into_files(), |j| {
        ctr(j)["resources"]["limits"]["vpc.amazonaws.com/efa"] = json!("1.5");
    });
    let r = s.grade(LAB);
    let o = outcome(&r, "efa-in-limits");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("api-rule"))
    );
    assert!(
        o.evidence["api_error"].ends_with("must be an integer"),
        "{o:?}"
    );
    assert_eq!(status(&r, "efa-count"), Status::Fail);
}

// --- one language ---------------------------------------------------------------------------------

/// Three consecutive space-separated all-lowercase ASCII words of 2+ letters: an English
/// sentence built in Rust (the heuristic of the lead's `check --all --demo --lang ja` test).
fn english_run(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split(' ').collect();
    words.windows(3).find_map(|w| {
        w.iter()
            .all(|x| x.len() >= 2 && x.bytes().all(|b| b.is_ascii_lowercase()))
            .then(|| w.join(" "))
    })
}

#[test]
fn no_english_sentence_reaches_expected_or_found_in_japanese() {
    let states = [
        solved(),
        solved().remove(|o| o.kind() == "Job"),
        edit_job(solved(), |j| {
            ctr(j)["resources"]["requests"] =
                json!({"vpc.amazonaws.com/efa": "16", "nvidia.com/gpu": "4"})
        }),
        edit_job(solved(), |j| {
            ctr(j)["resources"]["limits"] = json!({"nvidia.com/gpu": "4"});
            ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]);
            tpl(j)["nodeSelector"] = json!({});
            tpl(j)["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "topology.kubernetes.io/zone",
                "labelSelector": {"matchLabels": {"app": "database"}}}]}});
            j["spec"]["completionMode"] = json!("NonIndexed");
        }),
        edit_job(solved().into_files(), |j| {
            tpl(j)["nodeSelector"]["node.kubernetes.io/instance-type"] = json!("g5.48xlarge");
            ctr(j)["env"] = json!([{"name": "FI_PROVIDER", "value": "tcp"}]);
        }),
        edit_job(State::load("efa-nccl/converging").and("kind-nodes"), |j| {
            j["status"] = json!({"failed": 3, "conditions": [{
                "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit"}]});
        }),
        State::load("efa-nccl/unschedulable").and("kind-nodes"),
        solved().edit("Node", "trainlab-worker2", |n| {
            n["status"]["allocatable"]["vpc.amazonaws.com/efa"] = json!("0");
            n["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("us-west-2b");
        }),
        mpijob(),
        edit_mpijob(mpijob(), |m| {
            m["apiVersion"] = json!("kubeflow.org/v1");
            launcher(m)["command"] = json!(["all_reduce_perf", "-b", "8"]);
            m["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!(3);
        }),
    ];
    let mut failures = 0;
    for s in &states {
        let rep = trainlab::report::LabReport::new(&s.grade(LAB), Lang::Ja);
        let json: Value = serde_json::from_str(&trainlab::report::render(
            &[rep],
            trainlab::report::Format::Json,
            false,
        ))
        .unwrap();
        for o in json["outcomes"].as_array().unwrap() {
            failures += usize::from(o["status"] == "fail");
            for field in ["expected", "found"] {
                if let Some(text) = o[field].as_str() {
                    assert_eq!(english_run(text), None, "{} {field}: {text}", o["check"]);
                }
            }
        }
    }
    // The states above do fail checks: the heuristic looked at real failure texts.
    assert!(failures >= 15, "{failures}");
    assert_eq!(
        english_run("no constraint on topology.kubernetes.io/zone"),
        Some("no constraint on".into())
    );
}

// --- reading MPIJobs where they are not served or not allowed ----------------------------------------

/// Grades `objects` as a live cluster would answer each of the lab's reads, with the MPIJob read
/// answered by `mpijobs` instead.
fn grade_live(objects: &[Obj], mpijobs: trainlab::observe::ReadResult) -> LabResult {
    use trainlab::observe::{kinds, Query};
    let catalog = Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    let verifier = trainlab::labs::verifier_for(LAB).unwrap();
    let target = Target::for_lab(LAB);
    let offline = Observed::offline(SourceKind::Snapshot, "test", objects.to_vec());
    let mut reads: std::collections::HashMap<Query, trainlab::observe::ReadResult> =
        trainlab::verify::queries(verifier, &target)
            .into_iter()
            .map(|q| {
                let answer = offline
                    .list(&q)
                    .map(|objs| objs.into_iter().cloned().collect());
                (q, answer)
            })
            .collect();
    reads.insert(Query::new(&kinds::MPIJOBS, &target.namespace), mpijobs);
    let obs = Observed::live("test", reads);
    trainlab::verify::run(
        bundle,
        verifier,
        &obs,
        &trainlab::facts::ClusterNodes::of(&obs),
        &target,
        &BTreeMap::new(),
        None,
        None,
    )
    .unwrap()
}

#[test]
fn a_cluster_without_the_mpi_operator_grades_the_job_as_usual() {
    let not_served = Err(Unavailable::NotServed {
        resource: "mpijobs.kubeflow.org".into(),
        crd: "mpijobs.kubeflow.org".into(),
        capability: Some("mpi-operator".into()),
    });
    assert_all_pass(&grade_live(&solved().objects, not_served.clone()));
    // Without the Job either, the object is simply missing.
    let r = grade_live(&solved().remove(|o| o.kind() == "Job").objects, not_served);
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.hint.as_deref() == Some("missing")));
}

#[test]
fn a_forbidden_mpijob_read_without_a_job_leaves_the_lab_ungraded_not_missing() {
    let forbidden = Err(Unavailable::Forbidden {
        verb: "list".into(),
        resource: "mpijobs.kubeflow.org".into(),
        namespace: Some("trainlab-efa-nccl".into()),
        message: "forbidden".into(),
    });
    let r = grade_live(
        &solved().remove(|o| o.kind() == "Job").objects,
        forbidden.clone(),
    );
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Error, "{}", o.check);
    }
    // With the Job there, the MPIJob read does not matter.
    assert_all_pass(&grade_live(&solved().objects, forbidden));
}

/// EKS Auto Mode (issue 23): a NodePool naming Auto Mode's NodeClass keeps the pods in one zone
/// the same way, and the cluster's built-in pools (`system`, `general-purpose`, all zones) do
/// not count, since the pods do not select them.
#[test]
fn an_auto_mode_node_pool_kept_to_one_zone_keeps_the_pods_in_one_zone() {
    let s = selecting(
        solved()
            .add(&auto_mode_pool(&["us-west-2a"]))
            .add(&auto_mode_built_in_pool("system"))
            .add(&auto_mode_built_in_pool("general-purpose")),
        "karpenter.sh/nodepool",
        "gpu-training",
    );
    let r = s.grade(LAB);
    assert_all_pass(&r);
    assert_eq!(outcome(&r, "single-zone").evidence["zone"], "us-west-2a");
    // Spanning zones fails the same way as a Karpenter pool does.
    let s = selecting(
        solved().add(&auto_mode_pool(&["us-west-2a", "us-west-2b"])),
        "karpenter.sh/nodepool",
        "gpu-training",
    );
    assert_only_fails(&s.grade(LAB), "single-zone", Some("pool-zones"));
}
