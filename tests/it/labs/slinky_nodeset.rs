//! Lab 4 `slinky-nodeset`: a GPU partition as a Slinky NodeSet (`gpu-h100`), not the quiz's
//! `SlurmNodeSet`.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::emulator::Emulator;
use support::state::*;
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Reason, Status};

const LAB: &str = "slinky-nodeset";
const NODESET: &str = "gpu-h100";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn solved() -> State {
    State::load("slinky-nodeset/solution-state").and("kind-nodes")
}

/// Folders of the lab read as the learner's files.
fn files(folders: &[&str]) -> State {
    let mut s = State::load("slinky-nodeset/solution-state").into_files();
    s.objects.clear();
    for f in folders {
        s = s.and(&format!("../../labs/04-slinky-nodeset/{f}"));
    }
    s
}

/// The kind profile's cluster facts, as `--profile kind` gives them in static mode.
fn with_kind_params(s: State) -> State {
    s.param("nodes", "2").param("gpus_per_node", "8")
}

/// `state` graded as the EKS profile grades it (real GPUs; the eks parameters in static mode).
fn grade_eks(state: &State) -> LabResult {
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    trainlab::labs::grade_lab(
        bundle,
        &state.observed(),
        &trainlab::verify::Target::for_lab(LAB),
        &std::collections::BTreeMap::new(),
        Some(trainlab::facts::Profile::Eks),
    )
    .unwrap()
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

const SPEC_CHECKS: [&str; 6] = [
    "nodeset-kind",
    "controller-ref",
    "partition-enabled",
    "gpu-placement",
    "gpus-per-slurmd",
    "replicas-match",
];

fn edit_spec(s: State, f: impl FnOnce(&mut Value)) -> State {
    s.edit("NodeSet", NODESET, |v| f(&mut v["spec"]))
}

fn slurmd_limits(spec: &mut Value) -> &mut Value {
    &mut spec["slurmd"]["resources"]["limits"]
}

// ---------------------------------------------------------------------------------------------
// GRES: Slurm told about the GPUs (EKS only: kind's GPUs are fake) and the EKS starter.

#[test]
fn the_eks_solution_passes_the_spec_checks_and_declares_its_gpus_to_slurm() {
    let r = grade_eks(&files(&["solution-eks"]));
    for c in SPEC_CHECKS {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    assert!(advice_ids(&r).is_empty(), "{:?}", r.advice);
}

#[test]
fn the_eks_starter_controller_finds_the_gpus_and_keeps_its_state_on_an_eks_storage_class() {
    // Issue 20 §1: EKS clusters created at 1.30+ have no default StorageClass; §3: GRES needs a
    // gres.conf (AutoDetect=nvidia) the Controller mounts.
    let starter = files(&["starter-eks"]);
    let find = |kind: &str, name: &str| {
        starter
            .objects
            .iter()
            .find(|o| o.kind() == kind && o.name() == name)
            .unwrap_or_else(|| panic!("no {kind}/{name} in starter-eks"))
    };
    let c = find("Controller", "slurm");
    let class = c.value["spec"]["persistence"]["storageClassName"]
        .as_str()
        .unwrap();
    let sc = find("StorageClass", class);
    assert_eq!(sc.value["provisioner"], "ebs.csi.aws.com");
    assert_eq!(sc.value["metadata"]["labels"]["trainlab.dev/lab"], LAB);
    let refs = c.value["spec"]["configFileRefs"].as_array().unwrap();
    let cm = find("ConfigMap", refs[0]["name"].as_str().unwrap());
    assert_eq!(
        cm.value["data"]["gres.conf"].as_str().unwrap().trim(),
        "AutoDetect=nvidia"
    );
    assert!(c.value["spec"]["jwtKeyRef"].is_object());
}

#[test]
fn both_starters_name_the_jwt_key_with_jwt_key_ref_and_ship_its_secret() {
    // Issue 20: jwtHs256KeyRef is deprecated since slurm-operator 1.1.0.
    for folder in ["starter", "starter-eks"] {
        let mut s = files(&[folder]);
        if folder == "starter-eks" {
            s = s.and("../../labs/04-slinky-nodeset/starter/slurm-auth.yaml");
        }
        let c = s.objects.iter().find(|o| o.kind() == "Controller").unwrap();
        assert!(c.value["spec"]["jwtHs256KeyRef"].is_null(), "{folder}");
        let r = &c.value["spec"]["jwtKeyRef"];
        let secret = s
            .objects
            .iter()
            .find(|o| o.kind() == "Secret" && o.name() == r["name"].as_str().unwrap())
            .unwrap_or_else(|| panic!("{folder}: no Secret {}", r["name"]));
        let key = r["key"].as_str().unwrap();
        assert!(
            secret.value["stringData"][key].is_string(),
            "{folder}: key {key}"
        );
    }
}

#[test]
fn on_eks_gpus_slurm_is_not_told_about_draw_advice_but_not_on_kind() {
    let r = grade_eks(&files(&["solution"]));
    assert_eq!(advice_ids(&r), ["no-gres"]);
    assert_eq!(r.advice[0].evidence["gpus"], "8");
    // kind's GPUs are fake: the kind answer sets no GRES and draws no advice.
    let kind = with_kind_params(files(&["solution"])).grade(LAB);
    assert!(advice_ids(&kind).is_empty(), "{:?}", kind.advice);
    // A count other than the slurmd's GPUs.
    let four = edit_spec(files(&["solution-eks"]), |s| {
        s["extraConf"] = json!("Gres=gpu:h100:4")
    });
    let r = grade_eks(&four);
    assert_eq!(advice_ids(&r), ["gres-count"]);
    assert_eq!(r.advice[0].evidence["gres"], "4");
}

#[test]
fn on_eks_a_controller_without_a_gres_conf_draws_advice() {
    let gres = |s: State| edit_spec(s, |s| s["extraConf"] = json!("Gres=gpu:8"));
    let r = grade_eks(&gres(solved()));
    assert_eq!(advice_ids(&r), ["no-gres-conf"]);
    assert_eq!(r.advice[0].evidence["controller"], "slurm");
    let mounted = gres(solved())
        .edit("Controller", "slurm", |c| {
            c["spec"]["configFileRefs"] = json!([{"name": "slurm-gres"}])
        })
        .add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slurm-gres\n  namespace: trainlab-slinky-nodeset\ndata:\n  gres.conf: |\n    AutoDetect=nvidia\n");
    let r = grade_eks(&mounted);
    assert!(advice_ids(&r).is_empty(), "{:?}", r.advice);
}

// ---------------------------------------------------------------------------------------------
// The solution and other right arrangements.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    let o = outcome(&r, "gpu-placement");
    assert_eq!(
        o.found.as_deref(),
        Some("nodes: trainlab-worker (p5.48xlarge), trainlab-worker2 (p5.48xlarge)")
    );
    assert_eq!(
        outcome(&r, "replicas-match").evidence["node_names"],
        "trainlab-worker, trainlab-worker2"
    );
    assert_eq!(
        outcome(&r, "slurm-nodes-registered").found.as_deref(),
        Some("status.slurmIdle: 2, status.slurmAllocated: 0, status.slurmDown: 0, status.slurmDrain: 0")
    );
}

#[test]
fn selecting_the_gpu_product_instead_of_the_instance_type_passes() {
    let r = edit_spec(solved(), |s| {
        s["template"]["spec"]["nodeSelector"] =
            json!({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
    })
    .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn node_affinity_on_the_instance_type_passes() {
    let r = edit_spec(solved(), |s| {
        s["template"]["spec"] = json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
                                       "operator": "In", "values": ["p5.48xlarge"]}]}]}}}})
    })
    .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn daemonset_scaling_mode_passes_replicas_match() {
    let r = solved()
        .edit("NodeSet", NODESET, |v| {
            v["spec"]["scalingMode"] = json!("DaemonSet");
            v["spec"].as_object_mut().unwrap().remove("replicas");
        })
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "replicas-match").found.as_deref(),
        Some("spec.scalingMode: DaemonSet")
    );
}

#[test]
fn a_scaling_mode_the_crd_refuses_fails_replicas_match_in_every_mode() {
    let r = solved()
        .edit("NodeSet", NODESET, |v| {
            v["spec"]["scalingMode"] = json!("Daemonset");
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "replicas-match", Some("bad-scaling-mode"));
    assert_eq!(o.found.as_deref(), Some("spec.scalingMode: Daemonset"));
    assert!(hint(&r, "replicas-match", Lang::En)
        .contains("`spec.scalingMode: Daemonset` is not a value the CRD accepts"));
    assert!(hint(&r, "replicas-match", Lang::Ja).contains("CRD が受け付けない値"));
}

#[test]
fn gpus_in_a_template_container_named_slurmd_count_as_slurmds() {
    let r = edit_spec(solved(), |s| {
        s["slurmd"].as_object_mut().unwrap().remove("resources");
        s["template"]["spec"]["containers"] = json!([{"name": "slurmd",
            "resources": {"limits": {"nvidia.com/gpu": 8}}}]);
    })
    .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn a_controller_ref_to_no_controller_fails_controller_ref() {
    let r = edit_spec(solved(), |s| {
        s["controllerRef"]["name"] = json!("slurm-controller")
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "controller-ref", None);
    assert_eq!(o.evidence["controllers"], "slurm");
    let r = edit_spec(solved(), |s| {
        s.as_object_mut().unwrap().remove("controllerRef");
    })
    .grade(LAB);
    assert_only_fails(&r, "controller-ref", Some("no-ref"));
}

#[test]
fn a_nodeset_without_a_partition_fails_partition_enabled() {
    let r = edit_spec(solved(), |s| {
        s.as_object_mut().unwrap().remove("partition");
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "partition-enabled", None);
    assert_eq!(
        o.found.as_deref(),
        Some("spec.partition.enabled: — (false)")
    );
    assert!(hint(&r, "partition-enabled", Lang::En).contains("-p gpu-h100"));
}

#[test]
fn pods_that_may_land_on_other_nodes_fail_gpu_placement() {
    let r = edit_spec(solved(), |s| s["template"]["spec"] = json!({})).grade(LAB);
    let o = assert_only_fails(&r, "gpu-placement", None);
    assert_eq!(
        o.evidence["nodes"],
        "trainlab-worker3 (p4d.24xlarge), trainlab-worker4 (trn1.32xlarge)"
    );
    let r = edit_spec(solved(), |s| {
        s["template"]["spec"]["nodeSelector"] =
            json!({"node.kubernetes.io/instance-type": "p5e.48xlarge"})
    })
    .grade(LAB);
    assert_only_fails(&r, "gpu-placement", Some("no-nodes"));
}

#[test]
fn slurmd_asking_part_of_the_gpus_fails_gpus_per_slurmd() {
    let r = edit_spec(solved(), |s| slurmd_limits(s)["nvidia.com/gpu"] = json!(4)).grade(LAB);
    let o = assert_only_fails(&r, "gpus-per-slurmd", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.slurmd.resources.limits[nvidia.com/gpu]: 8")
    );
    let r = edit_spec(solved(), |s| {
        s["slurmd"].as_object_mut().unwrap().remove("resources");
    })
    .grade(LAB);
    assert_only_fails(&r, "gpus-per-slurmd", Some("none"));
    let r = edit_spec(solved(), |s| slurmd_limits(s)["nvidia.com/gpu"] = json!(16)).grade(LAB);
    assert_only_fails(&r, "gpus-per-slurmd", Some("too-many"));
}

#[test]
fn gpus_on_a_sidecar_instead_of_slurmd_fail_gpus_per_slurmd() {
    let r = edit_spec(solved(), |s| {
        s["slurmd"].as_object_mut().unwrap().remove("resources");
        s["template"]["spec"]["containers"] = json!([{"name": "gpu-holder", "image": "busybox:1.36",
            "resources": {"limits": {"nvidia.com/gpu": 8}}}]);
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "gpus-per-slurmd", Some("other-container"));
    assert_eq!(o.evidence["pod_gpus"], "8");
}

#[test]
fn gpu_requests_unequal_to_limits_are_what_the_api_server_refuses() {
    let r = edit_spec(solved(), |s| {
        s["slurmd"]["resources"]["requests"] = json!({"nvidia.com/gpu": 4})
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "gpus-per-slurmd", Some("rejected"));
    assert!(
        o.evidence["api_error"].contains("must be equal to nvidia.com/gpu limit"),
        "{o:?}"
    );
}

#[test]
fn replicas_other_than_the_gpu_nodes_fail_replicas_match() {
    // A third pod finds no free p5 node: the scheduler's words, pending (the blame is the spec).
    let third = include_str!("../../data/slinky-nodeset/solution-state/pods.yaml")
        .split("\n- apiVersion")
        .last()
        .unwrap()
        .replace("gpu-h100-1", "gpu-h100-2")
        .replace("2b3c4d5e6f01", "2b3c4d5e6f02")
        .replace(
            "nodeName: trainlab-worker2",
            "schedulerName: default-scheduler",
        );
    let third = format!("apiVersion{}", third.replace("\n  ", "\n"));
    let r = edit_spec(solved(), |s| s["replicas"] = json!(3))
        .add(&third)
        .edit("Pod", "gpu-h100-2", |v| {
            v["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
                "status": "False", "reason": "Unschedulable",
                "message": "0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 node(s) didn't match Pod's node affinity/selector."}]})
        })
        .grade(LAB);
    for o in &r.outcomes {
        match o.check.as_str() {
            "replicas-match" => {
                assert_eq!(
                    (o.status, o.hint.as_deref()),
                    (Status::Fail, Some("too-many"))
                )
            }
            "nodeset-ready" => {
                assert_eq!((o.status, message(o)), (Status::Pending, "unschedulable"))
            }
            "slurm-nodes-registered" => assert_eq!(o.status, Status::Pending),
            _ => assert_eq!(o.status, Status::Pass, "{o:?}"),
        }
    }
    assert!(hint(&r, "replicas-match", Lang::En).contains("the extra pods stay Pending"));
    let r = edit_spec(solved(), |s| {
        s.as_object_mut().unwrap().remove("replicas");
    })
    .grade(LAB);
    let o = assert_only_fails(&r, "replicas-match", None);
    assert_eq!(o.found.as_deref(), Some("spec.replicas: — (1)"));
}

fn only_state(r: &LabResult, fails: &str, hint: &str) {
    for o in &r.outcomes {
        match o.check.as_str() {
            c if c == fails => {
                assert_eq!(
                    (o.status, o.hint.as_deref()),
                    (Status::Fail, Some(hint)),
                    "{o:?}"
                )
            }
            "slurm-nodes-registered" => assert_eq!(o.status, Status::Pending, "{o:?}"),
            _ => assert_eq!(o.status, Status::Pass, "{o:?}"),
        }
    }
}

#[test]
fn a_slurmd_image_that_cannot_be_pulled_fails_nodeset_ready() {
    let r = solved()
        .edit("NodeSet", NODESET, |v| {
            v["status"]["readyReplicas"] = json!(1);
            v["status"]["slurmIdle"] = json!(1);
        })
        .edit("Pod", "gpu-h100-1", |v| {
            v["status"]["conditions"][1]["status"] = json!("False");
            v["status"]["containerStatuses"][0]["ready"] = json!(false);
            v["status"]["containerStatuses"][0]["state"] =
                json!({"waiting": {"reason": "ErrImagePull", "message": "manifest unknown"}});
        })
        .grade(LAB);
    only_state(&r, "nodeset-ready", "stuck");
    assert_eq!(
        message(outcome(&r, "slurm-nodes-registered")),
        "pods-not-ready"
    );
    assert!(hint(&r, "nodeset-ready", Lang::En).contains("gpu-h100-1"));
}

#[test]
fn a_nodeset_without_the_slurmd_image_gets_no_pod() {
    let r = solved()
        .edit("NodeSet", NODESET, |v| {
            v["spec"]["slurmd"].as_object_mut().unwrap().remove("image");
            v["status"] = json!({"replicas": 0, "readyReplicas": 0, "desired": 2});
        })
        .remove(|o| o.name().starts_with("gpu-h100-"))
        .grade(LAB);
    only_state(&r, "nodeset-ready", "no-image");
    assert_eq!(
        outcome(&r, "nodeset-ready").evidence["fields"],
        "spec.slurmd.image"
    );
}

#[test]
fn nodes_slurm_marks_down_fail_slurm_nodes_registered() {
    let r = solved()
        .edit("NodeSet", NODESET, |v| {
            v["status"]["slurmIdle"] = json!(0);
            v["status"]["slurmDown"] = json!(2);
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "slurm-nodes-registered", Some("down"));
    assert_eq!(o.evidence["down"], "2");
    assert!(hint(&r, "slurm-nodes-registered", Lang::Ja).contains("DOWN 2 個"));
}

#[test]
fn ready_pods_the_operator_has_not_counted_yet_are_pending() {
    let r = solved()
        .edit("NodeSet", NODESET, |v| {
            v["status"].as_object_mut().unwrap().remove("slurmIdle");
        })
        .grade(LAB);
    let o = outcome(&r, "slurm-nodes-registered");
    assert_eq!((o.status, message(o)), (Status::Pending, "registering"));
}

#[test]
fn pods_of_another_owner_do_not_count() {
    let r = solved()
        .edit_all("Pod", |v| {
            if v["metadata"]["name"] == "gpu-h100-0" {
                v["metadata"]["ownerReferences"][0]["uid"] = json!("someone-else");
                v["status"]["containerStatuses"][0]["state"] =
                    json!({"waiting": {"reason": "ImagePullBackOff"}});
            }
        })
        .edit("NodeSet", NODESET, |v| {
            v["status"]["readyReplicas"] = json!(1)
        })
        .grade(LAB);
    let o = outcome(&r, "nodeset-ready");
    assert_eq!((o.status, message(o)), (Status::Pending, "starting"));
}

// ---------------------------------------------------------------------------------------------
// Static mode (--files).

#[test]
fn the_solution_files_pass_the_spec_checks_with_the_profiles_facts() {
    let r = with_kind_params(files(&["solution"])).grade(LAB);
    for o in &r.outcomes {
        let state = o.check == "nodeset-ready" || o.check == "slurm-nodes-registered";
        let want = if state { Status::Skipped } else { Status::Pass };
        assert_eq!(o.status, want, "{o:?}");
    }
    // Without them the GPU facts are asked for, never guessed.
    let r = files(&["solution"]).grade(LAB);
    for c in ["gpus-per-slurmd", "replicas-match"] {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Skipped, "{o:?}");
        assert!(matches!(&o.reason, Some(Reason::NeedsParam(_))), "{o:?}");
    }
}

#[test]
fn the_draft_fails_the_spec_checks_it_leaves_to_the_learner() {
    let r = with_kind_params(files(&["starter", "draft"])).grade(LAB);
    for c in [
        "partition-enabled",
        "gpu-placement",
        "gpus-per-slurmd",
        "replicas-match",
    ] {
        assert_eq!(status(&r, c), Status::Fail, "{c}");
    }
    assert_eq!(
        outcome(&r, "gpu-placement").hint.as_deref(),
        Some("unrestricted")
    );
    assert_eq!(status(&r, "controller-ref"), Status::Pass);
}

#[test]
fn the_quizs_slurm_nodeset_fails_nodeset_kind_explaining_the_name() {
    let r = with_kind_params(files(&[]))
        .add("apiVersion: slinky.slurm.net/v1alpha1\nkind: SlurmNodeSet\nmetadata:\n  name: gpu-a100-nodes\nspec:\n  partition: gpu-a100\n  nodeCount: 4\n  nodeTemplate:\n    instanceType: p4d.24xlarge\n")
        .grade(LAB);
    let o = outcome(&r, "nodeset-kind");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("quiz-kind"))
    );
    assert_eq!(
        o.found.as_deref(),
        Some("apiVersion: slinky.slurm.net/v1alpha1, kind: SlurmNodeSet")
    );
    let en = hint(&r, "nodeset-kind", Lang::En);
    assert!(
        en.contains("is the quiz's name") && en.contains("`nodeCount` with `replicas`"),
        "{en}"
    );
    let ja = hint(&r, "nodeset-kind", Lang::Ja);
    assert!(
        ja.contains("クイズの名前") && ja.contains("`SlurmNodeSet` という kind はありません"),
        "{ja}"
    );
    assert_eq!(
        outcome(&r, "partition-enabled").hint.as_deref(),
        Some("missing")
    );
}

#[test]
fn a_nodeset_of_the_v0_api_fails_nodeset_kind_by_version() {
    let r = with_kind_params(files(&["solution"]))
        .edit("NodeSet", NODESET, |v| {
            v["apiVersion"] = json!("slinky.slurm.net/v1alpha1")
        })
        .grade(LAB);
    let o = outcome(&r, "nodeset-kind");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("api-version"))
    );
    assert_eq!(status(&r, "gpu-placement"), Status::Pass);
}

#[test]
fn placement_by_other_labels_needs_the_nodes_and_is_skipped_in_static_mode() {
    let r = with_kind_params(files(&["solution"]))
        .edit("NodeSet", NODESET, |v| {
            v["spec"]["template"]["spec"]["nodeSelector"] =
                json!({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
        })
        .grade(LAB);
    let o = outcome(&r, "gpu-placement");
    assert_eq!(
        (o.status, message(o)),
        (Status::Skipped, "placement-needs-nodes")
    );
}

#[test]
fn a_non_number_node_count_is_bad_input_naming_the_parameter() {
    let e = files(&["solution"])
        .param("nodes", "two")
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--param nodes=two"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// The command line and a live (emulated) cluster.

#[test]
fn files_with_the_kind_profile_and_a_snapshot_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let solution = root().join("labs/04-slinky-nodeset/solution");
    let (code, out, err) = trainlab(
        dir.path(),
        None,
        &[
            "check",
            "4",
            "--profile",
            "kind",
            "--files",
            solution.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let quiz = dir.path().join("quiz.yaml");
    std::fs::write(&quiz, "apiVersion: slinky.slurm.net/v1alpha1\nkind: SlurmNodeSet\nmetadata:\n  name: gpu-a100-nodes\n").unwrap();
    let (code, out, _) = trainlab(
        dir.path(),
        None,
        &[
            "check",
            "4",
            "--profile",
            "kind",
            "--files",
            quiz.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("`kind: SlurmNodeSet` (`slinky.slurm.net/v1alpha1`) is the quiz's name"),
        "{out}"
    );

    let snap = dir.path().join("snap");
    std::fs::create_dir(&snap).unwrap();
    for (from, to) in [
        ("slinky-nodeset/solution-state/slinky.yaml", "slinky.yaml"),
        ("slinky-nodeset/solution-state/pods.yaml", "pods.yaml"),
        ("kind-nodes/nodes.yaml", "nodes.yaml"),
    ] {
        std::fs::copy(root().join("tests/data").join(from), snap.join(to)).unwrap();
    }
    let (code, out, err) = trainlab(
        dir.path(),
        None,
        &[
            "check",
            "4",
            "--snapshot",
            snap.to_str().unwrap(),
            "-o",
            "json",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(statuses(&out).iter().all(|(_, s)| s == "pass"), "{out}");
}

/// An emulated kind cluster with the solution applied; `slinky` adds what `setup kind --with
/// slinky` installs (the CRDs, the operator).
fn live(slinky: bool) -> (Emulator, tempfile::TempDir, PathBuf) {
    let data = root().join("tests/data");
    let state = data.join("slinky-nodeset/solution-state");
    let mut paths = vec![data.join("kind-nodes"), data.join("kind-operators")];
    for f in ["namespace", "slinky", "pods"] {
        paths.push(state.join(format!("{f}.yaml")));
    }
    if slinky {
        paths.push(state.join("slinky-install.yaml"));
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let emu = Emulator::start_from(&refs);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
    (emu, dir, kubeconfig)
}

#[test]
fn a_live_cluster_with_slinky_grades_the_solution_read_only() {
    let (emu, dir, kubeconfig) = live(true);
    let (code, out, err) = trainlab(
        dir.path(),
        Some(&kubeconfig),
        &["check", LAB, "--request-timeout", "5s", "-o", "json"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(statuses(&out).iter().all(|(_, s)| s == "pass"), "{out}");
    let reqs = emu.requests();
    assert!(reqs.iter().all(|r| r.method == "GET"));
    assert!(reqs
        .iter()
        .any(|r| r.path
            == "/apis/slinky.slurm.net/v1beta1/namespaces/trainlab-slinky-nodeset/nodesets"));
}

#[test]
fn without_the_slinky_crds_the_checks_are_skipped_with_the_install_command_and_exit_3() {
    let (_emu, dir, kubeconfig) = live(false);
    let (code, out, err) = trainlab(
        dir.path(),
        Some(&kubeconfig),
        &["check", LAB, "--request-timeout", "5s", "-o", "json"],
    );
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(statuses(&out).iter().all(|(_, s)| s == "skipped"), "{out}");
    assert!(out.contains("trainlab setup kind --with slinky"), "{out}");
}

#[test]
fn the_demo_learner_left_out_the_partition() {
    let r = State::load("kind-nodes")
        .add(include_str!(
            "../../../manifests/demo/04-slinky-nodeset.yaml"
        ))
        .grade(LAB);
    assert_only_fails(&r, "partition-enabled", None);
}

#[test]
fn an_instance_type_the_cluster_lacks_is_an_environment_error_not_a_fail() {
    let r = solved().param("instance_type", "p5e.48xlarge").grade(LAB);
    for c in ["gpu-placement", "gpus-per-slurmd", "replicas-match"] {
        let o = outcome(&r, c);
        assert_eq!(
            (o.status, message(o)),
            (Status::Error, "no-type-nodes"),
            "{c}"
        );
    }
    // Another type the cluster has: the solution's placement is then wrong for it.
    let r = solved().param("instance_type", "p4d.24xlarge").grade(LAB);
    assert_eq!(status(&r, "gpu-placement"), Status::Fail);
    assert_eq!(
        outcome(&r, "replicas-match").expected.as_deref(),
        Some("spec.replicas: 1")
    );
}

#[test]
fn an_unreadable_gpu_quantity_is_bad_input_naming_the_field() {
    let e = edit_spec(solved(), |s| {
        slurmd_limits(s)["nvidia.com/gpu"] = json!("eight")
    })
    .try_grade(LAB)
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("NodeSet/gpu-h100") && e.contains("spec.slurmd"),
        "{e}"
    );
}
