//! The pods a training job owns and the kit's state checks on them, for every kind of training
//! job (a TrainJob's pods through its JobSet): `pods-running` (the kit's one rule,
//! [`pods::running`], with what a TrainJob's JobSet says while it has no pods) and
//! `one-pod-per-node`.

use std::collections::BTreeMap;

use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::k8s::owned::{self, Owned};
use crate::verify::kit::k8s::pods::{self, pod_states, running, JobEnd, PodState};
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::kit::training::trainjob;
use crate::verify::{JudgeCtx, Outcome, Read, Reason};

/// The pods a training job owns among `pods`, by uid: directly (a PyTorchJob, a Job) or, for a
/// TrainJob, through its JobSet and the JobSet's Jobs ([`trainjob::owned_pods`]). None when the
/// job has no uid (read from a file); Err when a read between them failed.
pub fn owned_pods<'a>(
    ctx: &JudgeCtx<'a>,
    w: &Workload,
    pods: &[&'a Obj],
) -> Result<Option<Owned<'a>>, Unavailable> {
    if w.trainjob().is_some() {
        let (sets, jobs) = trainjob::chain_lists(ctx)?;
        return Ok(trainjob::owned_pods(w.obj, &sets, &jobs, pods).ok());
    }
    Ok(owned::owned_by(w.obj, pods).ok())
}

/// The pods a training job owns ([`owned_pods`]), terminating ones left out, read; none for a
/// job read from a file (it owns no pod yet). Err when a read between them failed.
pub fn training_job_pod_states(
    ctx: &JudgeCtx,
    w: &Workload,
    pods: &[&Obj],
) -> Result<Result<Vec<PodState>, Unavailable>, InputError> {
    Ok(match owned_pods(ctx, w, pods) {
        Ok(Some(o)) => Ok(pod_states(&o.current)?),
        Ok(None) => Ok(Vec::new()),
        Err(why) => Err(why),
    })
}

/// The kit's `pods-running` rule ([`running`]) for training job `w` with the pods of
/// `pods_read` it owns (a TrainJob's through its JobSet); a read the source cannot answer is
/// skipped or an error ([`Outcome::unavailable`]), never a fail.
pub fn running_of(
    ctx: &JudgeCtx,
    pods_read: &Read,
    check: &str,
    w: &Workload,
) -> Result<Outcome, InputError> {
    let pods = match ctx.list(pods_read) {
        Ok(p) => p,
        Err(why) => return Ok(Outcome::unavailable(check, &why)),
    };
    Ok(match training_job_pod_states(ctx, w, &pods)? {
        Ok(states) => with_jobs_status(
            running(check, &JobEnd::of(w)?, &states, w.total_replicas()),
            w,
        ),
        Err(why) => Outcome::unavailable(check, &why),
    })
}

/// The kit's `pods-running` outcome for a training job `w`, completed: a TrainJob without pods yet says what its JobSet's Jobs are doing (`status.jobsStatus`, or
/// that the controller has written none, so no JobSet was made yet): the pods a learner waits
/// for are the Jobs' (trainer v2.3.0 `trainjob_types.go` `JobStatus`).
pub fn with_jobs_status(o: Outcome, w: &Workload) -> Outcome {
    let Some(tj) = w.trainjob() else { return o };
    let no_pods = matches!(&o.reason, Some(Reason::Message(m)) if m == "no-pods");
    if !no_pods {
        return o;
    }
    let jobs = tj.job.status.jobs_summary();
    let found = match &jobs {
        Some(line) => format!("status.jobsStatus: {line}"),
        None => "status.jobsStatus: — (the controller has not made the JobSet yet)".to_string(),
    };
    let expected = o.expected.clone().unwrap_or_default();
    o.expected_found(expected, found)
        .with("jobs", jobs.as_deref().unwrap_or("—"))
}

/// The pods a job owns (by uid), terminating ones apart.
#[derive(Debug, Clone, Default)]
pub struct JobPods {
    pub current: Vec<PodState>,
    pub terminating: usize,
}

impl JobPods {
    /// The pods `job` owns among `pods`; None when the job has no uid (read from a file).
    pub fn of(job: &Obj, pods: &[&Obj]) -> Result<Option<JobPods>, InputError> {
        match owned::owned_by(job, pods) {
            Ok(owned) => JobPods::of_owned(&owned).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// The pods of an ownership walk ([`owned::owned_by`], or a TrainJob's through its JobSet).
    pub fn of_owned(owned: &owned::Owned) -> Result<JobPods, InputError> {
        let mut current = pods::pod_states(&owned.current)?;
        current.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(JobPods {
            current,
            terminating: owned.terminating.len(),
        })
    }
}

/// `pods-running`: the kit's one rule ([`pods::running`]: hints `crashed`, `stuck`,
/// `job-failed`, `suspended`; messages `no-pods`, `pods-unschedulable`, `pods-starting`), with
/// how the PyTorchJob says it ended ([`JobEnd::of`]). Every outcome also carries `job`.
pub fn check_pods_running(check: &str, job_obj: &Obj, replicas: i64, pods: &JobPods) -> Outcome {
    // The verifier built this workload from the same object before: it reads again.
    let end = match Workload::from_obj(job_obj) {
        Ok(Some(w)) => JobEnd::of(&w).unwrap_or(JobEnd::Open),
        _ => JobEnd::Open,
    };
    pods::running(check, &end, &pods.current, replicas).with("job", job_obj.name())
}

/// The two state checks both parallelism labs grade, from the pods the job owns (a TrainJob's
/// through its JobSet): `pods-running` ([`check_pods_running`]) and `one-pod-per-node`
/// ([`check_one_pod_per_node`]); both unavailable in static mode or when a read failed.
pub fn pod_checks(
    ctx: &JudgeCtx,
    w: &Workload,
    pods_read: &Read,
    replicas: i64,
    [running, spread]: [&str; 2],
) -> Result<[Outcome; 2], InputError> {
    let pods = match (ctx.is_static(), ctx.list(pods_read)) {
        (true, _) => Err(Unavailable::NeedsLiveCluster),
        (false, Err(why)) => Err(why),
        (false, Ok(list)) => match owned_pods(ctx, w, &list) {
            Ok(Some(owned)) => Ok(JobPods::of_owned(&owned)?),
            Ok(None) => Err(Unavailable::NeedsLiveCluster),
            Err(why) => Err(why),
        },
    };
    Ok(match pods {
        Err(why) => [
            Outcome::unavailable(running, &why),
            Outcome::unavailable(spread, &why),
        ],
        Ok(p) => [
            with_jobs_status(check_pods_running(running, w.obj, replicas, &p), w),
            check_one_pod_per_node(spread, JobEnd::of(w)?.is_finished(), replicas, &p),
        ],
    })
}

/// `one-pod-per-node`: the job's pods are bound to distinct nodes.
///
/// Fail (default hint): evidence `node`, `pods` (the pods sharing it). Pending message
/// `pods-unbound` (evidence `bound`, `replicas`) until every pod is bound. Skipped message
/// `pods-gone` when the job finished and its pods were deleted.
pub fn check_one_pod_per_node(
    check: &str,
    finished: bool,
    replicas: i64,
    pods: &JobPods,
) -> Outcome {
    let mut by_node: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in &pods.current {
        if let Some(n) = p.node.as_deref() {
            by_node.entry(n).or_default().push(&p.name);
        }
    }
    let bound: usize = by_node.values().map(Vec::len).sum();
    let placed = pods
        .current
        .iter()
        .filter_map(|p| p.node.as_deref().map(|n| format!("{} → {n}", p.name)))
        .collect::<Vec<_>>()
        .join(", ");
    let expected = format!("{replicas} pods → {replicas} distinct nodes");
    let ev = |o: Outcome| o.with("replicas", replicas).with("bound", bound);
    if let Some((node, names)) = by_node.iter().find(|(_, v)| v.len() > 1) {
        return ev(Outcome::fail(check, expected, placed)
            .with("node", node)
            .with("pods", names.join(", ")));
    }
    if pods.current.is_empty() && finished {
        return ev(Outcome::skipped(check, Reason::Message("pods-gone".into())));
    }
    if (bound as i64) < replicas {
        let found = if placed.is_empty() {
            "spec.nodeName: —".to_string()
        } else {
            placed
        };
        return ev(
            Outcome::pending(check, Reason::Message("pods-unbound".into()))
                .expected_found(expected, found),
        );
    }
    ev(Outcome::pass(check).expected_found(expected, placed))
}
