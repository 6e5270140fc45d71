//! Lab 9 `volcano-gang`: a Volcano Job whose gang is one pod larger than the cluster, held by
//! Volcano with nothing started.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::facts::Profile;
use trainlab::labs::grade_lab;
use trainlab::observe::{manifest_files, parse_file, parse_text, Obj};
use trainlab::report::{Format, LabReport};
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Reason, Status, Target};

const LAB: &str = "volcano-gang";
const PG: &str = "gang-train-5d1c6a52-8f0e-4c3b-9a57-1f2e3d4c5b6a";

fn solved() -> State {
    State::load("volcano-gang/solution-state").and("kind-nodes")
}

/// The objects of a folder of the lab itself (`solution`, `draft`), read as the learner's files.
fn lab_files(folder: &str) -> State {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("labs/09-volcano-gang")
        .join(folder);
    let objects = manifest_files(&dir)
        .unwrap()
        .iter()
        .flat_map(|f| parse_file(f).unwrap())
        .collect();
    let mut s = State::load("volcano-gang/solution-state").into_files();
    s.objects = objects;
    s
}

fn outcome<'a>(r: &'a LabResult, check: &str) -> &'a trainlab::verify::Outcome {
    r.outcomes.iter().find(|o| o.check == check).unwrap()
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

fn message(r: &LabResult, check: &str) -> Option<String> {
    match &outcome(r, check).reason {
        Some(Reason::Message(id)) => Some(id.clone()),
        _ => None,
    }
}

fn english_reason(r: &LabResult, check: &str) -> String {
    let rep = LabReport::new(r, Lang::En);
    rep.outcomes
        .iter()
        .find(|o| o.check == check)
        .unwrap()
        .reason
        .clone()
        .unwrap_or_default()
}

fn english_hint(r: &LabResult, check: &str) -> String {
    let rep = LabReport::new(r, Lang::En);
    rep.outcomes
        .iter()
        .find(|o| o.check == check)
        .unwrap()
        .hint
        .clone()
        .unwrap_or_default()
}

fn job_spec(f: impl FnOnce(&mut Value)) -> impl FnOnce(&mut Value) {
    move |v: &mut Value| f(&mut v["spec"])
}

fn worker_limits(v: &mut Value) -> &mut Value {
    &mut v["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"]["limits"]
}

// ---------------------------------------------------------------------------------------------
// The solution and the states that are right.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    let gang_size = outcome(&r, "gang-size");
    assert_eq!(
        gang_size.expected.as_deref(),
        Some("spec.tasks[0].replicas: 4 (3 GPU nodes + 1)")
    );
    assert_eq!(
        gang_size.evidence["nodes"],
        "trainlab-worker, trainlab-worker2, trainlab-worker3"
    );
    let held = outcome(&r, "gang-held");
    assert_eq!(held.evidence["phase"], "Pending");
    assert_eq!(held.evidence["bound"], "0");
    assert_eq!(
        held.found.as_deref(),
        Some(&*format!(
            "PodGroup {PG}: Pending; Pods 0/4, spec.nodeName: —"
        ))
    );
    // The scheduler's own words are evidence (and advice), never part of `found`.
    assert!(
        held.evidence["message"].starts_with("4/0 tasks in gang unschedulable"),
        "{held:?}"
    );
}

#[test]
fn the_scheduler_message_is_reported_as_advice_while_the_gang_is_held() {
    let r = solved().grade(LAB);
    assert_eq!(advice_ids(&r), ["scheduler-says"]);
    let rep = LabReport::new(&r, Lang::En);
    let text = &rep.advice[0].text;
    assert!(text.contains(PG), "{text}");
    assert!(
        text.contains("pod group is not ready, 4 minAvailable"),
        "{text}"
    );
}

#[test]
fn an_inqueue_podgroup_with_created_but_unbound_pods_is_held_too() {
    let r = State::load("volcano-gang/inqueue")
        .and("kind-nodes")
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(outcome(&r, "gang-held").evidence["created"], "4");
    assert!(advice_ids(&r).contains(&"inqueue"), "{:?}", advice_ids(&r));
}

#[test]
fn scheduler_name_and_min_available_may_be_left_to_the_webhook_with_advice() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            let spec = v["spec"].as_object_mut().unwrap();
            spec.remove("schedulerName");
            spec.remove("minAvailable");
        })
        .grade(LAB);
    assert_all_pass(&r);
    let ids = advice_ids(&r);
    assert!(
        ids.contains(&"scheduler-defaulted") && ids.contains(&"min-available-defaulted"),
        "{ids:?}"
    );
    let rep = LabReport::new(&r, Lang::En);
    let defaulted = rep
        .advice
        .iter()
        .find(|a| a.id == "min-available-defaulted")
        .unwrap();
    assert!(defaulted.text.contains("4 here"), "{}", defaulted.text);
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn another_scheduler_fails_volcano_scheduler_only() {
    let r = solved()
        .edit(
            "Job",
            "gang-train",
            job_spec(|s| s["schedulerName"] = json!("default-scheduler")),
        )
        .grade(LAB);
    let o = assert_only_fails(&r, "volcano-scheduler", None);
    assert_eq!(o.expected.as_deref(), Some("spec.schedulerName: volcano"));
    assert_eq!(
        o.found.as_deref(),
        Some("spec.schedulerName: default-scheduler")
    );
}

#[test]
fn a_task_template_scheduler_overrides_the_jobs_and_fails() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["spec"]["tasks"][0]["template"]["spec"]["schedulerName"] = json!("default-scheduler")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "volcano-scheduler", Some("task-override"));
    assert_eq!(
        o.found.as_deref(),
        Some("spec.tasks[0].template.spec.schedulerName: default-scheduler")
    );
    assert!(english_hint(&r, "volcano-scheduler")
        .contains("Remove `spec.tasks[0].template.spec.schedulerName`"));
}

/// minAvailable 3 of 4 while another tenant's pod holds one GPU node: the enqueue step cannot
/// admit even 3 × 8 GPUs yet, so nothing started, but the spec would start a partial gang.
#[test]
fn min_available_below_the_replicas_fails_min_available_all() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["spec"]["minAvailable"] = json!(3);
            v["status"]["minAvailable"] = json!(3);
        })
        .edit("PodGroup", PG, |v| {
            v["spec"]["minMember"] = json!(3);
            v["status"]["conditions"][0]["message"] =
                json!("3/0 tasks in gang unschedulable: pod group is not ready, 3 minAvailable");
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "min-available-all", Some("fewer"));
    assert_eq!(o.expected.as_deref(), Some("spec.minAvailable: 4"));
    assert_eq!(o.found.as_deref(), Some("spec.minAvailable: 3"));
    assert!(english_hint(&r, "min-available-all").contains("Set `spec.minAvailable: 4`"));
}

/// Issue 10 item 11: a new Job is refused with validateJobCreate's words, an update with
/// validateJobUpdate's (volcano-sh/volcano v1.15.1 pkg/webhooks/admission/jobs/validate/admit_job.go).
#[test]
fn min_available_above_the_replicas_is_what_the_webhook_rejects() {
    let r = lab_files("solution")
        .edit(
            "Job",
            "gang-train",
            job_spec(|s| s["minAvailable"] = json!(5)),
        )
        .grade(LAB);
    let o = outcome(&r, "min-available-all");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("more")));
    let hint = english_hint(&r, "min-available-all");
    assert!(
        hint.contains(
            "on create with \"job 'minAvailable' should not be greater than total replicas in tasks\""
        ),
        "{hint}"
    );
    assert!(
        hint.contains(
            "(on update: \"job 'minAvailable' must not be greater than total replicas\")"
        ),
        "{hint}"
    );
    assert_eq!(o.found.as_deref(), Some("spec.minAvailable: 5"));
}

/// Five whole-node pods on three GPU nodes: still held (40 GPUs > 28.8), but not the lab's size.
#[test]
fn a_gang_more_than_one_pod_too_large_fails_gang_size() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["spec"]["minAvailable"] = json!(5);
            v["spec"]["tasks"][0]["replicas"] = json!(5);
            v["spec"]["tasks"][0]["minAvailable"] = json!(5);
            v["status"]["minAvailable"] = json!(5);
        })
        .edit("PodGroup", PG, |v| v["spec"]["minMember"] = json!(5))
        .grade(LAB);
    let o = assert_only_fails(&r, "gang-size", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.tasks[0].replicas: 4 (3 GPU nodes + 1)")
    );
    assert_eq!(o.found.as_deref(), Some("spec.tasks[0].replicas: 5"));
}

/// Pods asking for 16 GPUs fit on no 8-GPU node: held forever, even with one more node.
#[test]
fn pods_asking_more_gpus_than_a_node_has_fail_whole_node_gpus() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            worker_limits(v)["nvidia.com/gpu"] = json!("16")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "whole-node-gpus", Some("too-many"));
    // 5–8 GPUs keep one pod per 8-GPU node; 8 is what the task asks for.
    assert_eq!(o.expected.as_deref(), Some("nvidia.com/gpu: 5–8"));
    assert_eq!(
        o.found.as_deref(),
        Some("nvidia.com/gpu: 16 (spec.tasks[0].template.spec)")
    );
}

#[test]
fn a_hand_edited_podgroup_fails_podgroup_min_member() {
    let r = solved()
        .edit("PodGroup", PG, |v| v["spec"]["minMember"] = json!(3))
        .grade(LAB);
    let o = assert_only_fails(&r, "podgroup-min-member", None);
    assert_eq!(
        o.expected.as_deref(),
        Some(&*format!("PodGroup {PG} spec.minMember: 4"))
    );
    assert_eq!(
        o.found.as_deref(),
        Some(&*format!("PodGroup {PG} spec.minMember: 3"))
    );
}

/// Applied with minAvailable 3, fixed to 4 seconds later: 3 pods were bound under the old spec.
#[test]
fn pods_bound_under_an_earlier_spec_fail_gang_held_as_stale() {
    let r = State::load("volcano-gang/stale")
        .and("kind-nodes")
        .grade(LAB);
    let o = assert_only_fails(&r, "gang-held", Some("stale"));
    let found = o.found.as_deref().unwrap();
    assert!(
        found.contains("Pods 4/4, spec.nodeName: gang-train-worker-0 → trainlab-worker, "),
        "{found}"
    );
    assert!(english_hint(&r, "gang-held").contains("3 of 4 pods are still bound"));
}

#[test]
fn an_aborted_job_fails_job_pending() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["status"]["state"]["phase"] = json!("Aborted")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "job-pending", Some("stopped"));
    assert!(
        o.found
            .as_deref()
            .unwrap()
            .starts_with("Job gang-train status.state.phase: Aborted; Pods 0/4"),
        "{o:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// A gang that started: which check is to blame.

#[test]
fn the_demo_learner_started_a_partial_gang() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/demo");
    let mut s = solved();
    s.objects = ["00-nodes.yaml", "09-volcano-gang.yaml"]
        .iter()
        .flat_map(|f| parse_file(&root.join(f)).unwrap())
        .collect();
    let r = s.grade(LAB);
    let failed: Vec<(&str, Option<&str>)> = r
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| (o.check.as_str(), o.hint.as_deref()))
        .collect();
    assert_eq!(
        failed,
        [
            ("min-available-all", Some("fewer")),
            ("gang-held", Some("partial-gang")),
            ("job-pending", Some("partial-gang")),
        ]
    );
    assert!(r
        .outcomes
        .iter()
        .all(|o| matches!(o.status, Status::Pass | Status::Fail)));
    assert!(english_hint(&r, "gang-held").contains("minAvailable is 3 of 4"));
    let found = outcome(&r, "job-pending").found.clone().unwrap();
    assert!(
        found.starts_with("Job gang-train status.state.phase: Running; Pods 4/4, spec.nodeName: "),
        "{found}"
    );
    assert_eq!(outcome(&r, "gang-held").evidence["bound"], "3");
}

/// Four GPU nodes from the start and four replicas: the gang fits, so Volcano ran it.
#[test]
fn a_gang_that_fits_blames_the_size_not_volcano() {
    let r = State::load("volcano-gang/cluster-grew")
        .and("kind-nodes")
        .edit("Node", "trainlab-worker5", |v| {
            v["metadata"]["creationTimestamp"] = json!("2026-12-01T09:00:00Z")
        })
        .grade(LAB);
    let bad: Vec<(&str, Status, Option<&str>)> = r
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| (o.check.as_str(), o.status, o.hint.as_deref()))
        .collect();
    assert_eq!(
        bad,
        [
            ("gang-size", Status::Fail, Some("fits")),
            ("gang-held", Status::Fail, Some("gang-fits")),
            ("job-pending", Status::Fail, Some("gang-fits")),
        ]
    );
    assert_eq!(
        outcome(&r, "gang-size").expected.as_deref(),
        Some("spec.tasks[0].replicas: 5 (4 GPU nodes + 1)")
    );
}

#[test]
fn pods_asking_a_fraction_of_a_node_let_the_gang_fit() {
    let r = lab_files("solution")
        .param("gpu_nodes", "3")
        .edit("Job", "gang-train", |v| {
            worker_limits(v)["nvidia.com/gpu"] = json!(4)
        })
        .grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, None));
    assert!(english_hint(&r, "whole-node-gpus").contains("a node with 8 GPUs holds 2 of them"));
}

/// The concept is "no node holds two pods of the gang": a required pod anti-affinity on the
/// hostname that selects the task's own pods does that with fewer GPUs per pod, and the cluster
/// then holds one pod per GPU node (the labels the job controller adds to its pods count).
#[test]
fn a_required_anti_affinity_against_its_own_pods_keeps_one_per_node_too() {
    let apart = |selector: Value| {
        move |v: &mut Value| {
            worker_limits(v)["nvidia.com/gpu"] = json!(1);
            v["spec"]["tasks"][0]["template"]["spec"]["affinity"] = json!({"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}]}});
        }
    };
    let own = json!({"matchLabels": {"volcano.sh/job-name": "gang-train"}});
    let r = solved().edit("Job", "gang-train", apart(own)).grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "whole-node-gpus").found.as_deref(),
        Some("nvidia.com/gpu: 1 (podAntiAffinity: kubernetes.io/hostname)")
    );
    assert_eq!(outcome(&r, "gang-size").evidence["gpu_nodes"], "3");
    // Repelling other pods keeps nothing of the gang apart.
    let others = json!({"matchLabels": {"app": "web"}});
    let r = solved().edit("Job", "gang-train", apart(others)).grade(LAB);
    let o = assert_only_fails(&r, "whole-node-gpus", None);
    assert_eq!(o.evidence["per_node"], "8");
    assert!(english_hint(&r, "whole-node-gpus").contains("podAntiAffinity"));
}

#[test]
fn a_node_that_joined_after_the_job_is_an_environment_error_not_a_fail() {
    let r = State::load("volcano-gang/cluster-grew")
        .and("kind-nodes")
        .grade(LAB);
    let statuses: Vec<(&str, Status)> = r
        .outcomes
        .iter()
        .map(|o| (o.check.as_str(), o.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("volcano-scheduler", Status::Pass),
            ("min-available-all", Status::Pass),
            ("gang-size", Status::Error),
            ("whole-node-gpus", Status::Pass),
            ("podgroup-min-member", Status::Pass),
            ("gang-held", Status::Error),
            ("job-pending", Status::Error),
        ]
    );
    assert_eq!(message(&r, "gang-size").as_deref(), Some("cluster-grew"));
    assert_eq!(message(&r, "gang-held").as_deref(), Some("cluster-grew"));
    assert_eq!(message(&r, "job-pending").as_deref(), Some("cluster-grew"));
    for check in ["gang-size", "gang-held"] {
        let why = english_reason(&r, check);
        assert!(
            why.contains("1 GPU node(s) joined after the Job was created (3 then, 4 now)"),
            "{why}"
        );
        assert!(why.contains("recreate the Job with replicas 5"), "{why}");
    }
}

/// The whole gang bound although trainlab counts only 3 usable GPU nodes (one was cordoned
/// after the pods landed): the cluster held more than the lab assumes.
#[test]
fn a_whole_gang_bound_with_a_right_spec_is_an_environment_error() {
    let r = State::load("volcano-gang/cluster-grew")
        .and("kind-nodes")
        .edit("Node", "trainlab-worker5", |v| {
            v["metadata"]["creationTimestamp"] = json!("2026-12-01T09:00:00Z");
            v["spec"]["unschedulable"] = json!(true);
        })
        .grade(LAB);
    assert_eq!(status(&r, "gang-size"), Status::Pass);
    assert_eq!(status(&r, "gang-held"), Status::Error);
    assert_eq!(
        message(&r, "gang-held").as_deref(),
        Some("cluster-held-gang")
    );
    assert!(english_reason(&r, "gang-held").contains("All 4 pods were bound"));
}

#[test]
fn a_running_job_left_from_an_earlier_spec_fails_job_pending_as_stale() {
    let r = State::load("volcano-gang/stale")
        .and("kind-nodes")
        .edit("Job", "gang-train", |v| {
            v["status"]["state"]["phase"] = json!("Running")
        })
        .grade(LAB);
    assert_eq!(outcome(&r, "job-pending").hint.as_deref(), Some("stale"));
    assert_eq!(status(&r, "job-pending"), Status::Fail);
}

// ---------------------------------------------------------------------------------------------
// Not converged yet: pending, never fail.

#[test]
fn a_job_the_controller_has_not_acted_on_is_pending() {
    let r = solved()
        .remove(|o| o.kind() == "PodGroup")
        .edit("Job", "gang-train", |v| {
            v.as_object_mut().unwrap().remove("status");
        })
        .grade(LAB);
    for check in ["podgroup-min-member", "gang-held", "job-pending"] {
        assert_eq!(status(&r, check), Status::Pending, "{check}");
    }
    assert_eq!(message(&r, "gang-held").as_deref(), Some("no-podgroup"));
    assert!(english_reason(&r, "gang-held").contains(PG));
    for check in [
        "volcano-scheduler",
        "min-available-all",
        "gang-size",
        "whole-node-gpus",
    ] {
        assert_eq!(status(&r, check), Status::Pass, "{check}");
    }
}

#[test]
fn a_podgroup_without_a_phase_yet_is_pending() {
    let r = solved()
        .edit("PodGroup", PG, |v| {
            v.as_object_mut().unwrap().remove("status");
        })
        .grade(LAB);
    assert_eq!(status(&r, "gang-held"), Status::Pending);
    assert_eq!(
        message(&r, "gang-held").as_deref(),
        Some("podgroup-no-phase")
    );
}

#[test]
fn a_podgroup_the_controller_has_not_updated_yet_is_pending() {
    // The learner raised minAvailable from 3; status.minAvailable still shows what the
    // controller acted on.
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["status"]["minAvailable"] = json!(3)
        })
        .edit("PodGroup", PG, |v| v["spec"]["minMember"] = json!(3))
        .grade(LAB);
    assert_eq!(status(&r, "podgroup-min-member"), Status::Pending);
    assert_eq!(
        message(&r, "podgroup-min-member").as_deref(),
        Some("podgroup-syncing")
    );
}

// ---------------------------------------------------------------------------------------------
// Ownership, not names or labels.

#[test]
fn a_podgroup_with_the_right_name_but_no_owner_does_not_count() {
    let forged = format!(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: {PG}\n  namespace: trainlab-volcano-gang\n  uid: 11111111-2222-4333-8444-555555555555\nspec:\n  minMember: 4\nstatus:\n  phase: Pending\n"
    );
    let r = solved()
        .remove(|o| o.kind() == "PodGroup")
        .add(&forged)
        .grade(LAB);
    assert_eq!(status(&r, "podgroup-min-member"), Status::Pending);
    assert_eq!(status(&r, "gang-held"), Status::Pending);
}

#[test]
fn a_podgroup_owned_by_another_uid_does_not_count() {
    let r = solved()
        .edit("PodGroup", PG, |v| {
            v["metadata"]["ownerReferences"][0]["uid"] =
                json!("99999999-8888-4777-8666-555555555555")
        })
        .grade(LAB);
    assert_eq!(status(&r, "podgroup-min-member"), Status::Pending);
}

#[test]
fn a_bound_pod_that_only_looks_like_the_jobs_is_ignored() {
    let forged = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gang-train-worker-0\n  namespace: trainlab-volcano-gang\n  uid: 22222222-3333-4444-8555-666666666666\n  labels:\n    volcano.sh/job-name: gang-train\n    volcano.sh/task-spec: worker\n  annotations:\n    scheduling.k8s.io/group-name: gang-train-5d1c6a52-8f0e-4c3b-9a57-1f2e3d4c5b6a\nspec:\n  nodeName: trainlab-worker\n  containers:\n  - name: worker\n    image: busybox:1.36\nstatus:\n  phase: Running\n";
    let r = solved().add(forged).grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_bound_pod_the_job_owns_breaks_the_hold() {
    let r = State::load("volcano-gang/inqueue")
        .and("kind-nodes")
        .edit("Pod", "gang-train-worker-1", |v| {
            v["spec"]["nodeName"] = json!("trainlab-worker2")
        })
        .grade(LAB);
    assert_only_fails(&r, "gang-held", Some("stale"));
}

// ---------------------------------------------------------------------------------------------
// The cluster side: nodes, taints, GPUs.

#[test]
fn tainted_gpu_nodes_count_only_when_the_pods_tolerate_the_taint() {
    let tainted = || {
        solved().edit_all("Node", |v| {
            if v["status"]["allocatable"]["nvidia.com/gpu"].is_string() {
                v["spec"]["taints"] =
                    json!([{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]);
            }
        })
    };
    let r = tainted().grade(LAB);
    assert_eq!(status(&r, "gang-size"), Status::Error);
    assert_eq!(message(&r, "gang-size").as_deref(), Some("no-gpus"));
    let r = tainted()
        .edit("Job", "gang-train", |v| {
            v["spec"]["tasks"][0]["template"]["spec"]["tolerations"] =
                json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        })
        .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_node_selector_narrows_the_whole_gpu_nodes() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["spec"]["tasks"][0]["template"]["spec"]["nodeSelector"] =
                json!({"node.kubernetes.io/instance-type": "p5.48xlarge"})
        })
        .grade(LAB);
    let o = outcome(&r, "gang-size");
    assert_eq!(o.status, Status::Fail);
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.tasks[0].replicas: 3 (2 GPU nodes + 1)")
    );
}

#[test]
fn a_cluster_without_gpus_is_an_environment_error() {
    let r = solved()
        .edit_all("Node", |v| {
            for side in ["capacity", "allocatable"] {
                if let Some(m) = v["status"][side].as_object_mut() {
                    m.remove("nvidia.com/gpu");
                }
            }
        })
        .grade(LAB);
    for check in ["gang-size", "whole-node-gpus"] {
        assert_eq!(status(&r, check), Status::Error, "{check}");
    }
    assert!(english_reason(&r, "gang-size").contains("nvidia.com/gpu"));
}

#[test]
fn a_snapshot_without_nodes_skips_gang_size_unless_the_count_is_given() {
    let r = State::load("volcano-gang/solution-state").grade(LAB);
    assert_eq!(status(&r, "gang-size"), Status::Skipped);
    let r = State::load("volcano-gang/solution-state")
        .param("gpu_nodes", "3")
        .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// Static mode (`--files`).

#[test]
fn the_solution_files_pass_the_spec_checks_and_skip_the_state_checks() {
    let r = lab_files("solution").grade(LAB);
    for check in ["volcano-scheduler", "min-available-all", "whole-node-gpus"] {
        assert_eq!(status(&r, check), Status::Pass, "{check}");
    }
    // The GPU node count is a fact of the learner's cluster: only --param gives it.
    assert_eq!(status(&r, "gang-size"), Status::Skipped);
    assert_eq!(
        outcome(&r, "gang-size").reason,
        Some(Reason::NeedsParam("gpu_nodes".into()))
    );
    for check in ["podgroup-min-member", "gang-held", "job-pending"] {
        assert_eq!(status(&r, check), Status::Skipped, "{check}");
    }
    let r = lab_files("solution").param("gpu_nodes", "3").grade(LAB);
    assert_eq!(status(&r, "gang-size"), Status::Pass);
}

/// A folder of the lab as the EKS profile applies it (`solution-eks/` over `solution/`), graded
/// as `check --files --profile eks` does: the profile's parameters stand for the cluster.
fn grade_eks(folder: &str) -> LabResult {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    let objects: Vec<Obj> = b
        .files_for(folder, "eks", &crate::support::state::test_site("eks"))
        .unwrap()
        .into_iter()
        .flat_map(|(rel, text)| parse_text(&text, rel).unwrap())
        .collect();
    let mut s = lab_files(folder);
    s.objects = objects;
    let target = Target::for_lab(LAB);
    grade_lab(
        b,
        &s.observed(),
        &target,
        &BTreeMap::new(),
        Some(Profile::Eks),
    )
    .unwrap()
}

#[test]
fn the_eks_solution_passes_every_spec_check_with_the_eks_cluster_s_size() {
    let r = grade_eks("solution");
    for check in [
        "volcano-scheduler",
        "min-available-all",
        "gang-size",
        "whole-node-gpus",
    ] {
        assert_eq!(
            status(&r, check),
            Status::Pass,
            "{check}: {:?}",
            outcome(&r, check)
        );
    }
    assert_eq!(
        outcome(&r, "gang-size").expected.as_deref(),
        Some("spec.tasks[0].replicas: 3 (2 GPU nodes + 1)")
    );
    for check in ["podgroup-min-member", "gang-held", "job-pending"] {
        assert_eq!(status(&r, check), Status::Skipped, "{check}");
    }
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    // The kind answer (4 pods) is sized for kind's 3 GPU nodes, not for EKS's 2.
    let kind = lab_files("solution");
    let catalog = Catalog::embedded().unwrap();
    let target = Target::for_lab(LAB);
    let b = catalog.get(LAB).unwrap();
    let r = grade_lab(
        b,
        &kind.observed(),
        &target,
        &BTreeMap::new(),
        Some(Profile::Eks),
    )
    .unwrap();
    assert_eq!(status(&r, "gang-size"), Status::Fail);
}

#[test]
fn the_draft_fails_the_spec_checks() {
    let r = lab_files("draft").param("gpu_nodes", "3").grade(LAB);
    let hints: Vec<(&str, Option<&str>)> = r
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Fail)
        .map(|o| (o.check.as_str(), o.hint.as_deref()))
        .collect();
    assert_eq!(
        hints,
        [
            // The replicas change too (gang-size): the hint names the gang's size, 4.
            ("min-available-all", Some("resize")),
            ("gang-size", Some("fits")),
            ("whole-node-gpus", None)
        ]
    );
    // schedulerName is left to the webhook in the draft: accepted, with advice.
    assert_eq!(status(&r, "volcano-scheduler"), Status::Pass);
    assert!(advice_ids(&r).contains(&"scheduler-defaulted"));
}

#[test]
fn a_missing_job_fails_every_check_with_a_hint_to_create_it() {
    let r = solved().remove(|o| o.kind() == "Job").grade(LAB);
    for o in &r.outcomes {
        assert_eq!(
            (o.status, o.hint.as_deref()),
            (Status::Fail, Some("missing")),
            "{}",
            o.check
        );
    }
    // One lab-level `missing:` text for every check, naming the served apiVersion.
    let hint = english_hint(&r, "gang-size");
    assert!(
        hint.contains("There is no Volcano Job `gang-train` in namespace `trainlab-volcano-gang`"),
        "{hint}"
    );
    assert!(
        hint.contains(
            "`apiVersion: batch.volcano.sh/v1alpha1`, `kind: Job`, `metadata.name: gang-train`"
        ),
        "{hint}"
    );
    for check in ["volcano-scheduler", "gang-held", "job-pending"] {
        assert_eq!(english_hint(&r, check), hint, "{check}");
    }
    let r = lab_files("solution")
        .remove(|o| o.kind() == "Job")
        .grade(LAB);
    assert_eq!(
        outcome(&r, "volcano-scheduler").hint.as_deref(),
        Some("missing")
    );
    assert_eq!(status(&r, "gang-held"), Status::Skipped);
}

#[test]
fn a_job_of_another_name_is_not_the_lab_job() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["metadata"]["name"] = json!("gang-trian")
        })
        .grade(LAB);
    let o = outcome(&r, "min-available-all");
    assert_eq!(o.hint.as_deref(), Some("missing"));
    assert_eq!(
        o.expected.as_deref(),
        Some("batch.volcano.sh/v1alpha1 Job gang-train")
    );
    assert_eq!(o.found.as_deref(), Some("gang-trian"));
}

// ---------------------------------------------------------------------------------------------
// Bad input is an error naming the field, never a grade.

#[test]
fn a_non_number_min_available_is_bad_input_naming_the_field() {
    let err = lab_files("solution")
        .edit(
            "Job",
            "gang-train",
            job_spec(|s| s["minAvailable"] = json!("four")),
        )
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(err.contains("spec.minAvailable"), "{err}");
}

#[test]
fn a_malformed_podgroup_is_bad_input_naming_the_field() {
    let err = solved()
        .edit("PodGroup", PG, |v| v["spec"]["minMember"] = json!("all"))
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(err.contains("spec.minMember"), "{err}");
}

#[test]
fn a_non_number_gpu_node_count_is_bad_input_naming_the_parameter() {
    let err = lab_files("solution")
        .param("gpu_nodes", "three")
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(err.contains("gpu_nodes"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// The concept, not one layout: other correct arrangements pass.

fn all_spec_checks_pass(r: &LabResult) {
    for check in [
        "volcano-scheduler",
        "min-available-all",
        "gang-size",
        "whole-node-gpus",
    ] {
        let o = outcome(r, check);
        assert_eq!(o.status, Status::Pass, "{check}: {o:?}");
    }
}

#[test]
fn a_task_with_another_name_is_the_same_gang() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["spec"]["tasks"][0]["name"] = json!("trainer")
        })
        .grade(LAB);
    assert_all_pass(&r);
}

/// A launcher task and a worker task, every pod on a whole node: 1 + 3 = 4 pods on 3 GPU nodes.
#[test]
fn two_tasks_of_whole_node_pods_are_one_gang() {
    let two_tasks = |launcher: i64, workers: i64| {
        lab_files("solution")
            .param("gpu_nodes", "3")
            .edit("Job", "gang-train", move |v| {
                let mut launcher_task = v["spec"]["tasks"][0].clone();
                launcher_task["name"] = json!("launcher");
                launcher_task["replicas"] = json!(launcher);
                v["spec"]["tasks"][0]["replicas"] = json!(workers);
                v["spec"]["tasks"]
                    .as_array_mut()
                    .unwrap()
                    .insert(0, launcher_task);
                // Left to the webhook: Σ replicas.
                v["spec"].as_object_mut().unwrap().remove("minAvailable");
            })
            .grade(LAB)
    };
    let r = two_tasks(1, 3);
    all_spec_checks_pass(&r);
    assert_eq!(
        outcome(&r, "gang-size").expected.as_deref(),
        Some("Σ spec.tasks[*].replicas: 4 (3 GPU nodes + 1)")
    );
    let r = two_tasks(1, 4);
    let o = outcome(&r, "gang-size");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, None));
    assert_eq!(o.found.as_deref(), Some("Σ spec.tasks[*].replicas: 5"));
    assert!(english_hint(&r, "gang-size").starts_with("`Σ spec.tasks[*].replicas` is 5"));
}

#[test]
fn gpus_split_over_two_containers_are_one_pods_request() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            let spec = &mut v["spec"]["tasks"][0]["template"]["spec"];
            let mut second = spec["containers"][0].clone();
            second["name"] = json!("sidecar");
            spec["containers"].as_array_mut().unwrap().push(second);
            for c in spec["containers"].as_array_mut().unwrap() {
                c["resources"]["limits"]["nvidia.com/gpu"] = json!("4");
            }
        })
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(
        outcome(&r, "whole-node-gpus").found.as_deref(),
        Some("nvidia.com/gpu: 8")
    );
}

#[test]
fn requests_equal_to_limits_are_fine() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            let res = &mut v["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"];
            res["requests"] = json!({"nvidia.com/gpu": "8"});
        })
        .grade(LAB);
    assert_all_pass(&r);
}

/// The scheduler reserves max(init container, Σ app containers) for a pod (kit `pod_request`):
/// GPUs asked only by an init container still keep the node for that pod.
#[test]
fn an_init_container_that_asks_for_the_node_counts() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            let spec = &mut v["spec"]["tasks"][0]["template"]["spec"];
            let mut init = spec["containers"][0].clone();
            init["name"] = json!("warmup");
            spec["initContainers"] = json!([init]);
            spec["containers"][0]["resources"] = json!({});
        })
        .grade(LAB);
    assert_all_pass(&r);
}

/// Five GPUs of eight: no node holds two such pods, so each still takes a whole node.
#[test]
fn more_than_half_a_node_is_a_whole_node() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            worker_limits(v)["nvidia.com/gpu"] = json!("5")
        })
        .grade(LAB);
    assert_all_pass(&r);
    let r = lab_files("solution")
        .param("gpu_nodes", "3")
        .edit("Job", "gang-train", |v| {
            worker_limits(v)["nvidia.com/gpu"] = json!(4)
        })
        .grade(LAB);
    assert_eq!(status(&r, "whole-node-gpus"), Status::Fail);
}

/// The kit's placement honours required node affinity (the old rule read nodeSelector only):
/// pinned to p5.48xlarge, the gang must be 2 + 1.
#[test]
fn required_node_affinity_narrows_the_whole_gpu_nodes() {
    let affinity = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{
            "key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]
        }]}]
    }}});
    let pinned = |replicas: i64| {
        let affinity = affinity.clone();
        solved()
            .edit("Job", "gang-train", move |v| {
                v["spec"]["tasks"][0]["template"]["spec"]["affinity"] = affinity;
                v["spec"]["tasks"][0]["replicas"] = json!(replicas);
                v["spec"]["tasks"][0]["minAvailable"] = json!(replicas);
                v["spec"]["minAvailable"] = json!(replicas);
                v["status"]["minAvailable"] = json!(replicas);
            })
            .edit("PodGroup", PG, move |v| {
                v["spec"]["minMember"] = json!(replicas)
            })
            .grade(LAB)
    };
    let o = assert_only_fails(&pinned(4), "gang-size", None);
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.tasks[0].replicas: 3 (2 GPU nodes + 1)")
    );
    assert_eq!(o.evidence["nodes"], "trainlab-worker, trainlab-worker2");
    assert_all_pass(&pinned(3));
}

// ---------------------------------------------------------------------------------------------
// Static mode catches what the API server (and Volcano's webhook) would refuse.

fn solution_with_resources(resources: Value) -> LabResult {
    lab_files("solution")
        .param("gpu_nodes", "3")
        .edit("Job", "gang-train", move |v| {
            v["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = resources
        })
        .grade(LAB)
}

#[test]
fn gpus_in_requests_without_limits_are_refused() {
    let r = solution_with_resources(json!({"requests": {"nvidia.com/gpu": "8"}}));
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("rejected"))
    );
    // Expected/found as the kit's one refusal rule (`devices::refused`) shows them in every lab:
    // the limits field that is required, the request as written.
    let c = "spec.tasks[0].template.spec.containers[0]";
    assert_eq!(
        o.expected.as_deref(),
        Some(&*format!("{c}.resources.limits[nvidia.com/gpu]"))
    );
    assert_eq!(
        o.found.as_deref(),
        Some(&*format!("{c}.resources.requests[nvidia.com/gpu]: 8"))
    );
    let hint = english_hint(&r, "whole-node-gpus");
    assert!(
        hint.contains(&format!(
            "{c}.resources.limits: Required value: Limit must be set for non overcommitable resources"
        )),
        "{hint}"
    );
    // Only the check that reads the GPUs fails.
    for check in ["volcano-scheduler", "min-available-all", "gang-size"] {
        assert_eq!(status(&r, check), Status::Pass, "{check}");
    }
}

#[test]
fn gpu_requests_different_from_limits_are_refused() {
    let r = solution_with_resources(json!({
        "requests": {"nvidia.com/gpu": "4"}, "limits": {"nvidia.com/gpu": "8"}
    }));
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("rejected"))
    );
    assert_eq!(
        (o.expected.as_deref(), o.found.as_deref()),
        (
            Some("nvidia.com/gpu: requests 8, limits 8"),
            Some("nvidia.com/gpu: requests 4, limits 8")
        )
    );
    assert!(english_hint(&r, "whole-node-gpus").contains(
        "resources.requests: Invalid value: \"4\": must be equal to nvidia.com/gpu limit of 8"
    ));
}

#[test]
fn a_fraction_of_a_gpu_is_refused_not_bad_input() {
    let r = solution_with_resources(json!({"limits": {"nvidia.com/gpu": "0.5"}}));
    assert_eq!(
        outcome(&r, "whole-node-gpus").hint.as_deref(),
        Some("rejected")
    );
    assert!(english_hint(&r, "whole-node-gpus").contains("must be an integer"));
}

/// batch.volcano.sh serves Job only in v1alpha1 (the CRD's one version).
#[test]
fn a_job_in_a_version_volcano_does_not_serve_fails_naming_the_served_one() {
    let r = lab_files("solution")
        .param("gpu_nodes", "3")
        .edit("Job", "gang-train", |v| {
            v["apiVersion"] = json!("batch.volcano.sh/v1beta1")
        })
        .grade(LAB);
    let o = outcome(&r, "volcano-scheduler");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("api-version"))
    );
    for check in ["min-available-all", "gang-size", "whole-node-gpus"] {
        assert_eq!(status(&r, check), Status::Pass, "{check}");
    }
    assert_eq!(
        o.expected.as_deref(),
        Some("apiVersion: batch.volcano.sh/v1alpha1")
    );
    assert_eq!(
        o.found.as_deref(),
        Some("apiVersion: batch.volcano.sh/v1beta1")
    );
    let hint = english_hint(&r, "volcano-scheduler");
    assert!(
        hint.contains("serves only `batch.volcano.sh/v1alpha1`")
            && hint.contains("no matches for kind \"Job\" in version \"batch.volcano.sh/v1beta1\""),
        "{hint}"
    );
}

#[test]
fn a_job_without_tasks_fails_gang_size() {
    let r = lab_files("solution")
        .param("gpu_nodes", "3")
        .edit("Job", "gang-train", |v| v["spec"]["tasks"] = json!([]))
        .grade(LAB);
    let o = outcome(&r, "gang-size");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("no-task"))
    );
    assert_eq!(o.found.as_deref(), Some("spec.tasks: []"));
    assert!(english_hint(&r, "gang-size").contains("No task specified in job spec"));
}

// ---------------------------------------------------------------------------------------------
// Terminating pods (kit `owned` lists them apart): on their way out, so pending, not a grade.

fn terminating(v: &mut Value) {
    v["metadata"]["deletionTimestamp"] = json!("2026-12-02T10:06:00Z");
}

#[test]
fn bound_pods_that_are_all_terminating_leave_gang_held_pending() {
    let r = State::load("volcano-gang/stale")
        .and("kind-nodes")
        .edit_all("Pod", terminating)
        .grade(LAB);
    let o = outcome(&r, "gang-held");
    assert_eq!(o.status, Status::Pending, "{o:?}");
    assert_eq!(
        message(&r, "gang-held").as_deref(),
        Some("pods-terminating")
    );
    assert_eq!(o.evidence["terminating"], "3");
    assert_eq!(o.evidence["bound"], "0");
    assert!(english_reason(&r, "gang-held").contains("3 pods of the Job are still bound"));
    assert!(
        o.found
            .as_deref()
            .unwrap()
            .contains("gang-train-worker-0 → trainlab-worker (metadata.deletionTimestamp)"),
        "{o:?}"
    );
}

#[test]
fn one_bound_pod_that_stays_still_breaks_the_hold() {
    let r = State::load("volcano-gang/stale")
        .and("kind-nodes")
        .edit("Pod", "gang-train-worker-0", terminating)
        .edit("Pod", "gang-train-worker-1", terminating)
        .grade(LAB);
    let o = assert_only_fails(&r, "gang-held", Some("stale"));
    assert_eq!(o.evidence["bound"], "1");
}

#[test]
fn a_restarting_job_is_pending_not_stopped() {
    let r = solved()
        .edit("Job", "gang-train", |v| {
            v["status"]["state"]["phase"] = json!("Restarting")
        })
        .grade(LAB);
    assert_eq!(status(&r, "job-pending"), Status::Pending);
    assert_eq!(
        message(&r, "job-pending").as_deref(),
        Some("job-restarting")
    );
}

// ---------------------------------------------------------------------------------------------
// One language: no English sentence built in Rust reaches a Japanese report.

/// Three consecutive space-separated all-lowercase ASCII words (2+ letters), punctuation
/// trimmed: the heuristic of the CLI test on `check --all --demo --lang ja`.
fn english_sentence(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let plain = |w: &&str| {
        let w = w.trim_matches(|c: char| matches!(c, ',' | ';' | '.' | ':' | '(' | ')'));
        w.len() >= 2 && w.chars().all(|c| c.is_ascii_lowercase())
    };
    words
        .windows(3)
        .find(|w| w.iter().all(plain))
        .map(|w| w.join(" "))
}

#[test]
fn japanese_reports_carry_only_values_paths_and_names() {
    assert!(english_sentence("each pod requests 8").is_some());
    let demo = {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/demo");
        let mut s = solved();
        s.objects = ["00-nodes.yaml", "09-volcano-gang.yaml"]
            .iter()
            .flat_map(|f| parse_file(&root.join(f)).unwrap())
            .collect();
        s
    };
    let states: Vec<(&str, LabResult)> = vec![
        ("solved", solved().grade(LAB)),
        (
            "inqueue",
            State::load("volcano-gang/inqueue")
                .and("kind-nodes")
                .grade(LAB),
        ),
        (
            "stale",
            State::load("volcano-gang/stale")
                .and("kind-nodes")
                .grade(LAB),
        ),
        (
            "cluster-grew",
            State::load("volcano-gang/cluster-grew")
                .and("kind-nodes")
                .grade(LAB),
        ),
        ("demo", demo.grade(LAB)),
        (
            "draft",
            lab_files("draft").param("gpu_nodes", "3").grade(LAB),
        ),
        ("solution", lab_files("solution").grade(LAB)),
        (
            "defaults",
            solved()
                .edit("Job", "gang-train", |v| {
                    let spec = v["spec"].as_object_mut().unwrap();
                    spec.remove("schedulerName");
                    spec.remove("minAvailable");
                })
                .grade(LAB),
        ),
        (
            "task-override",
            solved()
                .edit("Job", "gang-train", |v| {
                    v["spec"]["tasks"][0]["template"]["spec"]["schedulerName"] = json!("x")
                })
                .grade(LAB),
        ),
        (
            "terminating",
            State::load("volcano-gang/stale")
                .and("kind-nodes")
                .edit_all("Pod", terminating)
                .grade(LAB),
        ),
        (
            "requests-only",
            solution_with_resources(json!({"requests": {"nvidia.com/gpu": "8"}})),
        ),
        (
            "api-version",
            lab_files("solution")
                .edit("Job", "gang-train", |v| {
                    v["apiVersion"] = json!("batch.volcano.sh/v1beta1")
                })
                .grade(LAB),
        ),
        ("missing", solved().remove(|o| o.kind() == "Job").grade(LAB)),
        (
            "aborted",
            solved()
                .edit("Job", "gang-train", |v| {
                    v["status"]["state"]["phase"] = json!("Aborted")
                })
                .grade(LAB),
        ),
    ];
    let mut english = Vec::new();
    for (name, r) in &states {
        let rep = LabReport::new(r, Lang::Ja);
        let json: Value =
            serde_json::from_str(&trainlab::report::render(&[rep], Format::Json, false)).unwrap();
        for o in json["outcomes"].as_array().unwrap() {
            for field in ["expected", "found"] {
                if let Some(text) = o[field].as_str() {
                    if let Some(words) = english_sentence(text) {
                        english.push(format!("{name} {} {field}: {text} («{words}»)", o["check"]));
                    }
                }
            }
        }
    }
    assert!(
        english.is_empty(),
        "English in a ja report:\n{}",
        english.join("\n")
    );
}

#[test]
fn pods_asking_no_gpu_fail_whole_node_gpus() {
    let r = lab_files("solution")
        .param("gpu_nodes", "3")
        .edit("Job", "gang-train", |v| {
            v["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = json!({})
        })
        .grade(LAB);
    let o = outcome(&r, "whole-node-gpus");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("none")));
    assert_eq!(
        o.found.as_deref(),
        Some("nvidia.com/gpu: 0 (spec.tasks[0].template.spec)")
    );
    assert!(english_hint(&r, "whole-node-gpus").contains("Pods of task `worker` request no GPU"));
}

/// Pods bound by kube-scheduler: the gang was never Volcano's, so the state checks blame the
/// scheduler check, not the size.
#[test]
fn pods_placed_by_another_scheduler_blame_the_scheduler() {
    let r = State::load("volcano-gang/stale")
        .and("kind-nodes")
        .edit("Job", "gang-train", |v| {
            v["spec"]["schedulerName"] = json!("default-scheduler");
            v["status"]["state"]["phase"] = json!("Running");
        })
        .grade(LAB);
    let bad: Vec<(&str, Status, Option<&str>)> = r
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| (o.check.as_str(), o.status, o.hint.as_deref()))
        .collect();
    assert_eq!(
        bad,
        [
            ("volcano-scheduler", Status::Fail, None),
            ("gang-held", Status::Fail, Some("scheduler")),
            ("job-pending", Status::Fail, Some("scheduler")),
        ]
    );
    assert!(english_hint(&r, "gang-held")
        .starts_with("3 pods were bound by a scheduler other than Volcano"));
}

/// Kit `owned`: when an object names a controller, only the controller owns it. A PodGroup
/// controlled by something else that merely lists the Job is not the Job's.
#[test]
fn a_podgroup_the_job_only_lists_as_a_non_controller_owner_does_not_count() {
    let r = solved()
        .edit("PodGroup", PG, |v| {
            let refs = v["metadata"]["ownerReferences"].as_array_mut().unwrap();
            refs[0]["controller"] = json!(false);
            refs.push(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "other",
                "uid": "99999999-8888-4777-8666-555555555555", "controller": true}),
            );
        })
        .grade(LAB);
    assert_eq!(status(&r, "podgroup-min-member"), Status::Pending);
    assert_eq!(message(&r, "gang-held").as_deref(), Some("no-podgroup"));
}

/// Kit `placement`: a cordoned node is out unless the pods tolerate
/// `node.kubernetes.io/unschedulable:NoSchedule` (the old rule always left it out).
#[test]
fn a_cordoned_gpu_node_counts_only_for_pods_that_tolerate_the_cordon() {
    let cordoned = || {
        solved().edit("Node", "trainlab-worker3", |v| {
            v["spec"]["unschedulable"] = json!(true)
        })
    };
    let o = outcome(&cordoned().grade(LAB), "gang-size").clone();
    assert_eq!(o.status, Status::Fail);
    assert_eq!(
        o.expected.as_deref(),
        Some("spec.tasks[0].replicas: 3 (2 GPU nodes + 1)")
    );
    let r = cordoned()
        .edit("Job", "gang-train", |v| {
            v["spec"]["tasks"][0]["template"]["spec"]["tolerations"] = json!([{
                "key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"
            }])
        })
        .grade(LAB);
    assert_all_pass(&r);
}
