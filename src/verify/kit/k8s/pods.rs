//! Pod status as the checks read it: every container termination (current state and
//! `lastState`, which a restart hides), containers stuck waiting, and the scheduler's message;
//! how a job says it ended ([`JobEnd`]); and the one `pods-running` rule every lab with a
//! training job grades by ([`running`]).

use k8s_openapi::api::core::v1::Pod;

use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::conditions;
use crate::verify::kit::k8s::owned::{self, NoUid};
use crate::verify::kit::k8s::workload::{Workload, WorkloadKind};
use crate::verify::{views, Outcome, Reason};

/// One container's status, as the kubelet reports it.
#[derive(Debug, Clone)]
pub struct ContainerEnd {
    pub container: String,
    pub reason: String,
    pub exit_code: i32,
    pub message: Option<String>,
    /// From `lastState` (a restart followed it).
    pub earlier: bool,
}

impl ContainerEnd {
    /// `pod/container: OOMKilled (exit 137)`, `…: Error (exit 1): ValueError: …`.
    pub fn describe(&self, pod: &str) -> String {
        let base = format!(
            "{pod}/{}: {} (exit {})",
            self.container, self.reason, self.exit_code
        );
        match self
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            Some(m) => format!("{base}: {}", last_line(m)),
            None => base,
        }
    }
}

/// The last non-empty line of a termination message (the tool's exception line).
fn last_line(m: &str) -> &str {
    m.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(m)
}

/// What the checks need of one pod.
#[derive(Debug, Clone)]
pub struct PodState {
    pub name: String,
    pub phase: String,
    pub node: Option<String>,
    /// Every termination of its containers (current state and `lastState`).
    pub ends: Vec<ContainerEnd>,
    /// `(container, reason, message)` of containers waiting to (re)start.
    pub waiting: Vec<(String, String, String)>,
    /// The scheduler's `PodScheduled=False` message.
    pub unschedulable: Option<String>,
    /// `status.reason` / `status.message` of the pod itself (`Evicted`, `DeadlineExceeded`).
    pub status_reason: Option<String>,
    pub status_message: Option<String>,
}

impl PodState {
    /// The first termination with a non-zero exit (a crash, an OOM kill, a refused command).
    pub fn failure(&self) -> Option<&ContainerEnd> {
        self.ends.iter().find(|e| e.exit_code != 0)
    }

    /// The container that crashed: terminated with a non-zero exit now, or waiting to restart
    /// after one (`lastState`, as in `CrashLoopBackOff`). A container that restarted after an
    /// error and runs again is no crash: the kubelet recovered it.
    pub fn crash(&self) -> Option<&ContainerEnd> {
        self.ends.iter().find(|e| {
            e.exit_code != 0
                && (!e.earlier || self.waiting.iter().any(|(c, _, _)| *c == e.container))
        })
    }

    /// `Running` or `Succeeded` (core/v1 `PodPhase`).
    pub fn is_up(&self) -> bool {
        self.phase == "Running" || self.phase == "Succeeded"
    }

    /// A container waiting for a reason that does not clear by itself ([`STUCK`]):
    /// `(container, reason, message)`.
    pub fn stuck(&self) -> Option<&(String, String, String)> {
        self.waiting.iter().find(|w| STUCK.contains(&w.1.as_str()))
    }

    /// Where the pod stands: the one reading of a pod that the pods-running rules start from
    /// (kit [`running`], lab 5's ranks). A container waits for good when [`stuck`](Self::stuck)
    /// or in the kubelet's [`BACK_OFF`] after repeated exits, which only a changed command
    /// ends. `fits_nowhere`: whether the pod's own constraints keep it off every node, asked
    /// only of an unschedulable pod (lab 5 asks kit `spread::fits_nowhere`; kit [`running`]
    /// does not tell the two apart).
    pub fn standing(&self, fits_nowhere: impl FnOnce() -> bool) -> Standing {
        let for_good =
            |w: &&(String, String, String)| STUCK.contains(&w.1.as_str()) || w.1 == BACK_OFF;
        if let Some((container, reason, message)) = self.waiting.iter().find(for_good).cloned() {
            return Standing::Stuck {
                container,
                reason,
                message,
            };
        }
        match (self.phase.as_str(), &self.unschedulable) {
            ("Succeeded" | "Running", _) => Standing::Up,
            // The controller replaces it (backoffLimit, restartPolicy).
            ("Failed", _) => Standing::Retrying,
            (_, Some(m)) if fits_nowhere() => Standing::Unschedulable(m.clone()),
            (_, Some(m)) => Standing::WaitingCapacity(m.clone()),
            (_, None) => Standing::Starting,
        }
    }
}

/// How one pod stands ([`PodState::standing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Running or Succeeded.
    Up,
    /// A container waits for good ([`PodState::stuck`]).
    Stuck {
        container: String,
        reason: String,
        message: String,
    },
    /// Failed: its controller replaces it.
    Retrying,
    /// Unschedulable by its own constraints: the scheduler's message.
    Unschedulable(String),
    /// Unschedulable for now (a node that fits is busy, or one may be added): the scheduler's
    /// message.
    WaitingCapacity(String),
    /// Pending without a scheduling problem.
    Starting,
}

/// Reads pods (core/v1 `PodStatus.containerStatuses[].state` / `.lastState`).
pub fn pod_states(pods: &[&Obj]) -> Result<Vec<PodState>, InputError> {
    let mut out = Vec::new();
    for o in pods {
        let pod: Pod = o.parse()?;
        let status = pod.status.unwrap_or_default();
        let mut ends = Vec::new();
        let mut waiting = Vec::new();
        let statuses = status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(status.container_statuses.iter().flatten());
        for cs in statuses {
            for (st, earlier) in [(cs.state.as_ref(), false), (cs.last_state.as_ref(), true)] {
                let Some(st) = st else { continue };
                if let Some(t) = &st.terminated {
                    ends.push(ContainerEnd {
                        container: cs.name.clone(),
                        reason: t.reason.clone().unwrap_or_else(|| "Terminated".into()),
                        exit_code: t.exit_code,
                        message: t.message.clone(),
                        earlier,
                    });
                }
                if let (Some(w), false) = (&st.waiting, earlier) {
                    waiting.push((
                        cs.name.clone(),
                        w.reason.clone().unwrap_or_default(),
                        w.message.clone().unwrap_or_default(),
                    ));
                }
            }
        }
        let unschedulable = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
            .map(|c| c.message.clone().unwrap_or_default());
        out.push(PodState {
            name: o.name().to_string(),
            phase: status.phase.unwrap_or_else(|| "Pending".into()),
            node: pod.spec.and_then(|s| s.node_name).filter(|n| !n.is_empty()),
            ends,
            waiting,
            unschedulable,
            status_reason: status.reason.filter(|r| !r.is_empty()),
            status_message: status.message.filter(|m| !m.trim().is_empty()),
        });
    }
    Ok(out)
}

/// Waiting reasons that do not clear by themselves: the image, the command or its config is
/// wrong (kubelet `images` and `kuberuntime` reasons).
pub const STUCK: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// The kubelet's waiting reason for a container it restarts after repeated exits, with a
/// growing delay (kubelet `kuberuntime` `CrashLoopBackOff`).
pub const BACK_OFF: &str = "CrashLoopBackOff";

/// The pods `job` owns among `pods` (by ownerReference uid, terminating ones left out), read.
/// A job without a uid was never created by an API server (a manifest, the demo room's
/// "applied" objects): it owns no pod yet.
pub fn directly_owned_states(job: &Obj, pods: &[&Obj]) -> Result<Vec<PodState>, InputError> {
    match owned::owned_by(job, pods) {
        Ok(o) => pod_states(&o.current),
        Err(NoUid::NotFromACluster) => Ok(Vec::new()),
    }
}

/// How a job says it ended, or that it is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    /// Not ended (or a kind without an end, such as a Deployment): its pods tell.
    Open,
    /// `found`: what says so (`Job ckpt-llm Complete=True`).
    Complete { found: String },
    /// `reason`, `message`: the job's own words, as it wrote them (empty when it wrote none);
    /// [`JobEnd::said`] is the one to show.
    Failed {
        found: String,
        reason: String,
        message: String,
    },
    /// Held by `field` (a path) set to `value`.
    Suspended { field: String, value: String },
}

/// The condition type a training workload sets when it succeeded: `Complete` for a batch/v1
/// Job (k8s.io/api `batch/v1/types.go` `JobComplete`) and a TrainJob (kubeflow/trainer v2.3.0
/// `trainjob_types.go` `TrainJobComplete`), `Succeeded` for a PyTorchJob and an MPIJob
/// (training-operator v1.9 `common_types.go` `JobSucceeded`, mpi-operator v0.8 `v2beta1`
/// `JobSucceeded`). None for a kind that does not end by a condition.
pub fn success_condition(kind: WorkloadKind) -> Option<&'static str> {
    match kind {
        WorkloadKind::Job | WorkloadKind::TrainJob => Some("Complete"),
        WorkloadKind::PyTorchJob | WorkloadKind::MpiJob => Some(views::kubeflow::COND_SUCCEEDED),
        _ => None,
    }
}

impl JobEnd {
    /// Read from the object's status and spec:
    /// - batch/v1 Job: conditions `Complete` / `Failed` (k8s.io/api `batch/v1/types.go`
    ///   `JobConditionType`), `spec.suspend` (`JobSpec.suspend`);
    /// - Kubeflow PyTorchJob and MPIJob: conditions `Succeeded` / `Failed`
    ///   (kubeflow/training-operator v1.9 `common_types.go` `JobConditionType`, mpi-operator
    ///   v0.8 `v2beta1/types.go`), `spec.runPolicy.suspend` (`RunPolicy.suspend`);
    /// - Kubeflow Trainer TrainJob: conditions `Complete` / `Failed` (kubeflow/trainer v2.3.0
    ///   `trainjob_types.go`; copied from the JobSet's), `spec.suspend`;
    /// - Volcano Job: `status.state.phase` (volcano-sh/volcano `batch/v1alpha1/job.go`
    ///   `JobPhase`): `Completed`; `Failed`, `Terminating`, `Terminated` (stopped for good);
    ///   `Aborting`, `Aborted` (what `vcctl job suspend` does: `pkg/cli/job/suspend.go` sends
    ///   `AbortJobAction`; `vcctl job resume` resumes it). The message is `status.state.message`.
    ///
    /// A malformed `status.conditions` is bad input naming the field.
    pub fn of(w: &Workload) -> Result<JobEnd, InputError> {
        let obj = w.obj;
        let who = format!("{} {}", w.kind.kind(), obj.name());
        if w.kind == WorkloadKind::VolcanoJob {
            return Ok(volcano_end(w, &who));
        }
        let Some(done) = success_condition(w.kind) else {
            return Ok(JobEnd::Open);
        };
        let suspend_field = match w.kind {
            WorkloadKind::PyTorchJob | WorkloadKind::MpiJob => "spec.runPolicy.suspend",
            _ => "spec.suspend",
        };
        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        if conditions::is_true(&conds, done) {
            return Ok(JobEnd::Complete {
                found: format!("{who} {done}=True"),
            });
        }
        if let Some(c) = conditions::find(&conds, "Failed").filter(|c| c.is_true()) {
            return Ok(JobEnd::Failed {
                found: format!("{who} Failed=True"),
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
            });
        }
        let suspended = match (w.batch_job(), w.pytorch(), w.mpi(), w.trainjob()) {
            (Some(b), _, _, _) => b.spec.as_ref().and_then(|s| s.suspend).unwrap_or(false),
            (_, Some(p), _, _) => p.suspended(),
            (_, _, Some(m), _) => m.suspended(),
            (_, _, _, Some(t)) => t.is_suspended(),
            _ => false,
        };
        Ok(if suspended {
            JobEnd::Suspended {
                field: suspend_field.into(),
                value: "true".into(),
            }
        } else {
            JobEnd::Open
        })
    }

    /// A failed job's own words: its message, else its reason, else `Failed`. None unless
    /// failed.
    pub fn said(&self) -> Option<&str> {
        let JobEnd::Failed {
            reason, message, ..
        } = self
        else {
            return None;
        };
        [message, reason]
            .into_iter()
            .map(|s| s.as_str())
            .find(|s| !s.is_empty())
            .or(Some("Failed"))
    }

    /// Ended for good: complete or failed.
    pub fn is_finished(&self) -> bool {
        matches!(self, JobEnd::Complete { .. } | JobEnd::Failed { .. })
    }
}

fn volcano_end(w: &Workload, who: &str) -> JobEnd {
    let Some(phase) = w.volcano().and_then(|v| v.phase()) else {
        return JobEnd::Open;
    };
    // `status.state.reason` / `.message` are not in the typed view; read them as written.
    let state = &w.obj.value["status"]["state"];
    let said = |k: &str| {
        state[k]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let found = format!("{who} status.state.phase={phase}");
    match phase {
        "Completed" => JobEnd::Complete { found },
        "Failed" | "Terminating" | "Terminated" => JobEnd::Failed {
            found,
            // No reason or message: the phase is all the job said.
            reason: said("reason").unwrap_or_else(|| phase.to_string()),
            message: said("message").unwrap_or_default(),
        },
        "Aborting" | "Aborted" => JobEnd::Suspended {
            field: "status.state.phase".into(),
            value: phase.to_string(),
        },
        _ => JobEnd::Open,
    }
}

/// `pods-running`: every pod of a job Running or Succeeded, or the job complete. One rule for
/// every lab but `efa-nccl` (lab 5), whose rule grades each rank (`src/labs/efa_nccl`
/// `pods_running`, from the same [`PodState::standing`]) with other outcomes that its lab.yaml
/// and tests pin: the job's failure before any pod, a Failed pod being replaced `pending`
/// (`retrying`), a pod that fits no node a fail (`unschedulable`), a waiting container
/// `container-waiting` with the container named. In this order:
///
/// 1. the job says it completed: pass;
/// 2. a container crashed ([`PodState::crash`]) or a pod failed by itself (`Failed` with a
///    `status.reason` such as `Evicted`): fail,
///    hint `crashed` {`pod`, `container`, `exit_code`, `message`: the termination message, the
///    stand-in's or the real tool's own words; `—` for what a pod-level failure lacks};
/// 3. a container waits for good ([`Standing::Stuck`]: a [`STUCK`] reason, or the kubelet's
///    back-off after exits that were no crash): fail, hint `stuck` {`pod`, `reason`,
///    `message`};
/// 4. the job says it failed: fail, hint `job-failed` {`message`};
/// 5. the job is suspended: fail, hint `suspended` {`field`, `value`};
/// 6. `replicas` pods (at least one) are Running or Succeeded: pass;
/// 7. pending: `no-pods`; `pods-unschedulable` {`pod`, `message`: the scheduler's words};
///    `pods-starting` {`up`}.
///
/// Every outcome carries `replicas`.
pub fn running(check: &str, end: &JobEnd, pods: &[PodState], replicas: i64) -> Outcome {
    let expected = format!("pods Running|Succeeded: {replicas}");
    let ev = |o: Outcome| o.with("replicas", replicas);
    if let JobEnd::Complete { found } = end {
        return ev(Outcome::pass(check).expected_found(expected, found.clone()));
    }
    for p in pods {
        if let Some(e) = p.crash() {
            let message = e
                .message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .unwrap_or(&e.reason);
            let found = format!(
                "{}/{}: {} (exit {})",
                p.name, e.container, e.reason, e.exit_code
            );
            return ev(crashed(check, expected, found, p, &e.container)
                .with("exit_code", e.exit_code)
                .with("message", message));
        }
        if let Standing::Stuck {
            container: c,
            reason,
            message,
        } = p.standing(|| false)
        {
            let found = format!("{}/{c}: {reason}", p.name);
            let message = if message.is_empty() {
                found.clone()
            } else {
                message
            };
            return ev(Outcome::fail(check, expected, found)
                .hint("stuck")
                .with("pod", &p.name)
                .with("reason", reason)
                .with("message", message));
        }
        // Failed by itself, with the kubelet's reason (`Evicted`, `DeadlineExceeded`).
        if let (Some(reason), "Failed") = (p.status_reason.as_deref(), p.phase.as_str()) {
            let message = p.status_message.as_deref().unwrap_or(reason);
            let found = format!("{}: Failed ({reason})", p.name);
            return ev(crashed(check, expected, found, p, "—")
                .with("exit_code", "—")
                .with("message", message));
        }
    }
    match end {
        JobEnd::Failed { found, .. } => {
            return ev(Outcome::fail(check, expected, found.clone())
                .hint("job-failed")
                .with("message", end.said().unwrap_or_default()))
        }
        JobEnd::Suspended { field, value } => {
            return ev(Outcome::fail(check, expected, format!("{field}: {value}"))
                .hint("suspended")
                .with("field", field)
                .with("value", value))
        }
        JobEnd::Open | JobEnd::Complete { .. } => {}
    }
    let up: Vec<String> = pods
        .iter()
        .filter(|p| p.is_up())
        .map(|p| format!("{} {}", p.name, p.phase))
        .collect();
    if up.len() as i64 >= replicas.max(1) {
        return ev(Outcome::pass(check).expected_found(expected, up.join(", ")));
    }
    let listing = pods
        .iter()
        .map(|p| format!("{} {}", p.name, p.phase))
        .collect::<Vec<_>>()
        .join(", ");
    let pending = |message: &str| {
        let found = if listing.is_empty() { "—" } else { &listing };
        ev(Outcome::pending(check, Reason::Message(message.into()))
            .expected_found(expected.clone(), found))
    };
    if pods.is_empty() {
        return pending("no-pods");
    }
    if let Some(p) = pods.iter().find(|p| p.unschedulable.is_some()) {
        return pending("pods-unschedulable")
            .with("pod", &p.name)
            .with("message", p.unschedulable.clone().unwrap_or_default());
    }
    pending("pods-starting").with("up", up.len())
}

fn crashed(check: &str, expected: String, found: String, p: &PodState, container: &str) -> Outcome {
    Outcome::fail(check, expected, found)
        .hint("crashed")
        .with("pod", &p.name)
        .with("container", container)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use crate::verify::Status;
    use serde_json::{json, Value as Json};

    fn obj(v: Json) -> Obj {
        let origin = Origin::File {
            path: "x.yaml".into(),
            doc: 1,
            item: None,
        };
        Obj::new(v, origin).unwrap()
    }

    fn pod(name: &str, status: Json) -> Obj {
        obj(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                "name": "j", "uid": "u-1", "controller": true}]},
            "spec": {"containers": [{"name": "trainer", "image": "python:3.13"}]},
            "status": status}))
    }

    fn states(pods: &[Obj]) -> Vec<PodState> {
        pod_states(&pods.iter().collect::<Vec<_>>()).unwrap()
    }

    fn running_pod(name: &str) -> Obj {
        pod(
            name,
            json!({"phase": "Running", "containerStatuses": [{"name": "trainer",
                "state": {"running": {}}}]}),
        )
    }

    fn status(name: &str, state: Json, last: Json) -> Obj {
        pod(
            name,
            json!({"phase": "Running", "containerStatuses": [{"name": "trainer",
                "state": state, "lastState": last}]}),
        )
    }

    fn workload(v: Json) -> (Obj, JobEnd) {
        let o = obj(v);
        let end = JobEnd::of(&Workload::from_obj(&o).unwrap().unwrap()).unwrap();
        (o, end)
    }

    fn batch(extra: Json) -> JobEnd {
        let mut v = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "trainer", "image": "python:3.13"}]}}}});
        for (k, x) in extra.as_object().unwrap() {
            v[k].as_object_mut()
                .map(|m| m.extend(x.as_object().unwrap().clone()))
                .unwrap_or_else(|| v[k] = x.clone());
        }
        workload(v).1
    }

    fn message(o: &Outcome) -> &str {
        match &o.reason {
            Some(Reason::Message(m)) => m,
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn a_crash_is_a_failed_container_now_or_one_waiting_to_restart() {
        let failed = json!({"terminated": {"exitCode": 1, "reason": "Error", "message": "boom"}});
        let back_off = json!({"waiting": {"reason": "CrashLoopBackOff"}});
        let s = states(&[
            status("now", failed.clone(), json!(null)),
            status("looping", back_off, failed.clone()),
            status("recovered", json!({"running": {}}), failed),
        ]);
        assert_eq!(s[0].crash().map(|e| e.exit_code), Some(1));
        assert!(s[1].crash().is_some_and(|e| e.earlier));
        assert!(s[2].crash().is_none());
        // `failure` still sees the recovered one (a lab about OOM kills reads every end).
        assert!(s[2].failure().is_some());
    }

    #[test]
    fn job_ends_come_from_each_kinds_own_fields() {
        let cond =
            |t: &str| json!({"conditions": [{"type": t, "status": "True", "message": "said"}]});
        assert!(matches!(batch(json!({"status": cond("Complete")})),
            JobEnd::Complete { found } if found == "Job j Complete=True"));
        assert_eq!(
            batch(json!({"status": cond("Failed")})),
            JobEnd::Failed {
                found: "Job j Failed=True".into(),
                reason: String::new(),
                message: "said".into()
            }
        );
        assert_eq!(
            batch(json!({"spec": {"suspend": true}})),
            JobEnd::Suspended {
                field: "spec.suspend".into(),
                value: "true".into()
            }
        );
        assert_eq!(batch(json!({})), JobEnd::Open);
        // A Kubeflow job completes with `Succeeded`; `Complete` means nothing to it.
        let pt = |status: Json, run_policy: Json| {
            workload(
                json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                "metadata": {"name": "p"}, "status": status,
                "spec": {"runPolicy": run_policy, "pytorchReplicaSpecs": {"Master": {"replicas": 1,
                    "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}}}}),
            )
            .1
        };
        assert!(matches!(
            pt(cond("Succeeded"), json!({})),
            JobEnd::Complete { .. }
        ));
        assert_eq!(pt(cond("Complete"), json!({})), JobEnd::Open);
        assert!(matches!(pt(json!({}), json!({"suspend": true})),
            JobEnd::Suspended { field, .. } if field == "spec.runPolicy.suspend"));
        let mpi = workload(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "m"}, "status": cond("Failed"), "spec": {"mpiReplicaSpecs": {}}}),
        )
        .1;
        assert!(matches!(mpi, JobEnd::Failed { found, .. } if found == "MPIJob m Failed=True"));
        // Volcano: the phase, and `vcctl job suspend` aborts.
        let vc = |phase: &str| {
            workload(
                json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                "metadata": {"name": "v"}, "spec": {"tasks": []},
                "status": {"state": {"phase": phase, "reason": "PodFailed"}}}),
            )
            .1
        };
        assert!(matches!(vc("Completed"), JobEnd::Complete { .. }));
        // Volcano wrote a reason and no message: the reason is what it said.
        assert_eq!(vc("Terminated").said(), Some("PodFailed"));
        assert_eq!(vc("Running").said(), None);
        assert!(matches!(vc("Aborted"),
            JobEnd::Suspended { field, value } if field == "status.state.phase" && value == "Aborted"));
        assert_eq!(vc("Running"), JobEnd::Open);
        let deploy = workload(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": []}}}}));
        assert_eq!(deploy.1, JobEnd::Open);
    }

    #[test]
    fn a_failure_keeps_the_jobs_reason_and_message_apart() {
        // Moved from lab 5's ranks (its own reading of the Failed condition is gone).
        let (_, end) = workload(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j"}, "spec": {"template": {"spec": {"containers": []}}},
            "status": {"conditions": [{"type": "Failed", "status": "True",
                "reason": "BackoffLimitExceeded"}]}}));
        assert_eq!(
            end,
            JobEnd::Failed {
                found: "Job j Failed=True".into(),
                reason: "BackoffLimitExceeded".into(),
                message: String::new(),
            }
        );
        assert_eq!(end.said(), Some("BackoffLimitExceeded"));
        assert_eq!(success_condition(WorkloadKind::Job), Some("Complete"));
        assert_eq!(success_condition(WorkloadKind::MpiJob), Some("Succeeded"));
        assert_eq!(success_condition(WorkloadKind::Deployment), None);
    }

    #[test]
    fn malformed_conditions_are_bad_input_naming_the_field() {
        // The MPIJob view reads no status, so the conditions are first read here.
        let o = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "m"}, "spec": {}, "status": {"conditions": [1]}}),
        );
        let e = JobEnd::of(&Workload::from_obj(&o).unwrap().unwrap()).unwrap_err();
        assert!(e.to_string().contains("status.conditions"), "{e}");
    }

    #[test]
    fn complete_wins_then_crashes_then_stuck_then_the_jobs_failure() {
        let crashed = status(
            "p-1",
            json!({"terminated": {"exitCode": 2, "reason": "Error", "message": " bad flag \n"}}),
            json!(null),
        );
        let done = JobEnd::Complete {
            found: "Job j Complete=True".into(),
        };
        let o = running("r", &done, &states(std::slice::from_ref(&crashed)), 1);
        assert_eq!(o.status, Status::Pass);
        let failed = JobEnd::Failed {
            found: "Job j Failed=True".into(),
            reason: "BackoffLimitExceeded".into(),
            message: String::new(),
        };
        let o = running("r", &failed, &states(&[crashed]), 1);
        assert_eq!(o.hint.as_deref(), Some("crashed"));
        assert_eq!(o.found.as_deref(), Some("p-1/trainer: Error (exit 2)"));
        assert_eq!(
            (
                o.evidence["container"].as_str(),
                o.evidence["exit_code"].as_str()
            ),
            ("trainer", "2")
        );
        assert_eq!(o.evidence["message"], "bad flag");
        let pull = status(
            "p-1",
            json!({"waiting": {"reason": "ImagePullBackOff", "message": ""}}),
            json!(null),
        );
        let o = running("r", &failed, &states(&[pull]), 1);
        assert_eq!(o.hint.as_deref(), Some("stuck"));
        assert_eq!(o.evidence["message"], "p-1/trainer: ImagePullBackOff");
        let o = running("r", &failed, &[], 1);
        assert_eq!(
            (o.hint.as_deref(), o.evidence["message"].as_str()),
            (Some("job-failed"), "BackoffLimitExceeded")
        );
        let held = JobEnd::Suspended {
            field: "spec.suspend".into(),
            value: "true".into(),
        };
        let o = running("r", &held, &[], 1);
        assert_eq!(o.hint.as_deref(), Some("suspended"));
        assert_eq!(o.found.as_deref(), Some("spec.suspend: true"));
        assert_eq!(o.evidence["replicas"], "1");
    }

    #[test]
    fn an_evicted_pod_is_a_crash_without_a_container() {
        let evicted = pod(
            "p-1",
            json!({"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}),
        );
        let o = running("r", &JobEnd::Open, &states(&[evicted]), 1);
        assert_eq!(o.hint.as_deref(), Some("crashed"));
        assert_eq!(
            (
                o.evidence["container"].as_str(),
                o.evidence["exit_code"].as_str()
            ),
            ("—", "—")
        );
        assert_eq!(
            o.evidence["message"],
            "The node was low on resource: memory."
        );
        // A Failed pod without a reason says nothing the job's own state does not.
        let o = running(
            "r",
            &JobEnd::Open,
            &states(&[pod("p-1", json!({"phase": "Failed"}))]),
            1,
        );
        assert_eq!(o.status, Status::Pending);
    }

    #[test]
    fn a_pod_stands_stuck_up_retrying_unplaced_or_starting() {
        let waiting = |reason: &str, last: Json| {
            status(
                "p",
                json!({"waiting": {"reason": reason, "message": "said"}}),
                last,
            )
        };
        let s = states(&[
            waiting("ImagePullBackOff", json!(null)),
            // Back-off after exits that were no crash (exit 0 under restartPolicy Always).
            waiting(
                BACK_OFF,
                json!({"terminated": {"exitCode": 0, "reason": "Completed"}}),
            ),
            waiting("ContainerCreating", json!(null)),
        ]);
        let stuck = |reason: &str| Standing::Stuck {
            container: "trainer".into(),
            reason: reason.into(),
            message: "said".into(),
        };
        assert_eq!(s[0].standing(|| false), stuck("ImagePullBackOff"));
        assert_eq!(s[1].standing(|| false), stuck(BACK_OFF));
        // `stuck` alone is the STUCK list: the back-off is standing's own addition.
        assert!(s[1].stuck().is_none());
        assert_eq!(s[2].standing(|| false), Standing::Up);
        let placed = |phase: &str, unschedulable: Option<&str>| PodState {
            phase: phase.into(),
            unschedulable: unschedulable.map(str::to_string),
            ..s[2].clone()
        };
        let said = "0/3 nodes are available";
        assert_eq!(
            placed("Failed", None).standing(|| false),
            Standing::Retrying
        );
        assert_eq!(
            placed("Pending", Some(said)).standing(|| true),
            Standing::Unschedulable(said.into())
        );
        assert_eq!(
            placed("Pending", Some(said)).standing(|| false),
            Standing::WaitingCapacity(said.into())
        );
        let waiting_only = PodState {
            waiting: Vec::new(),
            ..placed("Pending", None)
        };
        assert_eq!(waiting_only.standing(|| true), Standing::Starting);
    }

    #[test]
    fn a_container_backing_off_after_clean_exits_fails_as_stuck() {
        // Rule change (one standing for every pods-running rule): it used to wait forever as
        // pods-starting; the kubelet's back-off only ends when the command changes.
        let looping = status(
            "p-1",
            json!({"waiting": {"reason": BACK_OFF, "message": "back-off 5m0s"}}),
            json!({"terminated": {"exitCode": 0, "reason": "Completed"}}),
        );
        let o = running("r", &JobEnd::Open, &states(&[looping]), 1);
        assert_eq!(o.hint.as_deref(), Some("stuck"));
        assert_eq!(o.evidence["reason"], BACK_OFF);
        assert_eq!(o.evidence["message"], "back-off 5m0s");
    }

    #[test]
    fn every_replica_up_passes_and_fewer_are_pending_with_the_reason() {
        let two = states(&[running_pod("a"), running_pod("b")]);
        assert_eq!(running("r", &JobEnd::Open, &two, 2).status, Status::Pass);
        let o = running("r", &JobEnd::Open, &two, 3);
        assert_eq!(
            (o.status, message(&o), o.evidence["up"].as_str()),
            (Status::Pending, "pods-starting", "2")
        );
        let o = running("r", &JobEnd::Open, &[], 1);
        assert_eq!(message(&o), "no-pods");
        assert_eq!(o.found.as_deref(), Some("—"));
        // Zero replicas still needs a pod: a job with nothing up has not run.
        assert_eq!(running("r", &JobEnd::Open, &[], 0).status, Status::Pending);
        let waiting = pod(
            "c",
            json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/3 nodes are available"}]}),
        );
        let o = running("r", &JobEnd::Open, &states(&[running_pod("a"), waiting]), 2);
        assert_eq!(
            (
                message(&o),
                o.evidence["pod"].as_str(),
                o.evidence["message"].as_str()
            ),
            ("pods-unschedulable", "c", "0/3 nodes are available")
        );
    }

    #[test]
    fn only_pods_the_job_owns_by_uid_count() {
        let (job, _) = workload(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "uid": "u-1"},
            "spec": {"template": {"spec": {"containers": []}}}}));
        let mine = running_pod("mine");
        let mut other = running_pod("other");
        other.value_mut()["metadata"]["ownerReferences"][0]["uid"] = json!("u-2");
        let s = directly_owned_states(&job, &[&mine, &other]).unwrap();
        assert_eq!(
            s.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["mine"]
        );
        // A job from a manifest (no uid) owns nothing yet.
        let mut manifest = job.clone();
        manifest.value_mut()["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("uid");
        assert!(directly_owned_states(&manifest, &[&mine])
            .unwrap()
            .is_empty());
    }
}
