//! Lab `volcano-gang` (quiz question 9): a Volcano Job `gang-train` whose gang is one pod larger
//! than the cluster can hold, so Volcano holds the whole gang and starts nothing.
//!
//! Spec checks judge the Job as written (also on `--files`); state checks judge what Volcano made
//! of it: the PodGroup the job controller created (`<job>-<uid>`, controller ownerReference to
//! the Job) and the Job's pods (ownerReference to the Job). Both are matched by the Job's uid,
//! never by names or labels, which a learner can forge.
//!
//! Facts (volcano-sh/volcano v1.15.1, see views/volcano.rs for the types):
//! - the admission webhook fills `spec.schedulerName` (`volcano`) and `spec.minAvailable`
//!   (Σ tasks' minAvailable or replicas) on create (pkg/webhooks/admission/jobs/mutate/mutate_job.go);
//! - a task template's own `schedulerName` wins over the Job's (pkg/controllers/job/job_controller_util.go);
//! - PodGroup `minMember` = Job `minAvailable`; pods are created only once the PodGroup is
//!   `Inqueue`, and none is bound until `minMember` of them fit (pkg/controllers/job/
//!   job_controller_actions.go, pkg/scheduler/plugins/gang/gang.go).

use k8s_openapi::api::core::v1::{Node, PodSpec, Taint, Toleration};

use super::views::nodes::NodeFacts;
use super::views::pods::pod_request;
use super::views::volcano::{PodGroup, TaskSpec, VolcanoJob};
use super::{Read, Advice, JudgeCtx, Judgement, Outcome, Params, Reason, Status, Verifier};
use crate::observe::kinds::{PODGROUPS, PODS, VOLCANO_JOBS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::profile::instances::GPU;

pub struct VolcanoGang;

// Declared once: reads() plans them and judge() looks them up by the same declaration.
static VOLCANO_JOBS_READ: Read = Read::lab(&VOLCANO_JOBS);
static PODGROUPS_READ: Read = Read::lab(&PODGROUPS);
static PODS_READ: Read = Read::lab(&PODS);
static READS: &[&Read] = &[&VOLCANO_JOBS_READ, &PODGROUPS_READ, &PODS_READ];

const JOB: &str = "gang-train";
const TASK: &str = "worker";
/// The name Volcano's scheduler registers and the webhook's default (`defaultSchedulerName`).
const SCHEDULER: &str = "volcano";

const SCHEDULER_CHECK: &str = "volcano-scheduler";
const MIN_AVAILABLE: &str = "min-available-all";
const GANG_SIZE: &str = "gang-size";
const WHOLE_NODE: &str = "whole-node-gpus";
const PG_MIN_MEMBER: &str = "podgroup-min-member";
const GANG_HELD: &str = "gang-held";
const JOB_PENDING: &str = "job-pending";

const STATE_CHECKS: [&str; 3] = [PG_MIN_MEMBER, GANG_HELD, JOB_PENDING];

impl Verifier for VolcanoGang {
    fn lab_id(&self) -> &'static str {
        "volcano-gang"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        &[
            SCHEDULER_CHECK,
            MIN_AVAILABLE,
            GANG_SIZE,
            WHOLE_NODE,
            PG_MIN_MEMBER,
            GANG_HELD,
            JOB_PENDING,
        ]
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let mut j = Judgement::default();
        let ns = &ctx.target.namespace;
        let jobs = match ctx.list(&VOLCANO_JOBS_READ) {
            Ok(jobs) => jobs,
            Err(why) => {
                for check in self.check_ids() {
                    j.push(Outcome::unavailable(check, &why));
                }
                return Ok(j);
            }
        };
        let Some(obj) = jobs.iter().copied().find(|o| o.name() == JOB) else {
            let others: Vec<&str> = jobs.iter().map(|o| o.name()).collect();
            for check in self.check_ids() {
                j.push(missing_job(check, ns, &others));
            }
            return Ok(j);
        };
        let job: VolcanoJob = obj.parse()?;
        let gang = Gang::new(obj, &job);
        let capacity = Capacity::find(ctx, &gang)?;

        let mut advice = Vec::new();
        j.push(check_scheduler(&gang, &mut advice));
        j.push(check_min_available(&gang, &mut advice));
        j.push(check_gang_size(&gang, &capacity));
        j.push(check_whole_node(&gang, &capacity));
        for a in advice {
            j.advise(a);
        }

        if ctx.is_static() {
            for check in STATE_CHECKS {
                j.push(Outcome::unavailable(check, &Unavailable::NeedsLiveCluster));
            }
            return Ok(j);
        }
        let cause = spec_cause(&j);
        match Made::find(ctx, &gang)? {
            Err(why) => {
                for check in STATE_CHECKS {
                    j.push(Outcome::unavailable(check, &why));
                }
            }
            Ok(made) => {
                j.push(check_pg_min_member(&gang, &made));
                let held = check_gang_held(&gang, &made, &capacity, cause);
                if held.status == Status::Pass {
                    advise_from_podgroup(&mut j, &gang, &made);
                }
                j.push(held);
                j.push(check_job_pending(&gang, &made, &capacity, cause));
            }
        }
        Ok(j)
    }
}

/// The learner's Job, with the figures every check needs.
struct Gang<'a> {
    obj: &'a Obj,
    job: &'a VolcanoJob,
    /// Σ tasks[].replicas: the pods the controller creates.
    replicas: i64,
    /// `spec.minAvailable` after the webhook's default.
    min_available: i64,
    min_available_written: bool,
}

impl<'a> Gang<'a> {
    fn new(obj: &'a Obj, job: &'a VolcanoJob) -> Gang<'a> {
        let (min_available, min_available_written) = job.effective_min_available();
        Gang {
            obj,
            job,
            replicas: job.total_replicas(),
            min_available,
            min_available_written,
        }
    }

    fn tasks(&self) -> &[TaskSpec] {
        &self.job.spec.tasks
    }

    /// The pod spec of the `worker` task, or of the only task (placement questions use it).
    fn worker_pod(&self) -> Option<&PodSpec> {
        let tasks = self.tasks();
        let task = tasks
            .iter()
            .find(|t| t.name.as_deref() == Some(TASK))
            .or_else(|| (tasks.len() == 1).then(|| &tasks[0]))?;
        pod_spec(task)
    }

    /// `<job name>-<job uid>`: how the job controller names the PodGroup (Volcano ≥ 1.5).
    fn podgroup_name(&self) -> String {
        match self.obj.uid() {
            Some(uid) => format!("{}-{uid}", self.obj.name()),
            None => format!("{}-<uid>", self.obj.name()),
        }
    }
}

fn pod_spec(task: &TaskSpec) -> Option<&PodSpec> {
    task.template.as_ref().and_then(|t| t.spec.as_ref())
}

fn task_name(t: &TaskSpec) -> &str {
    t.name.as_deref().unwrap_or("(unnamed)")
}

fn missing_job(check: &str, ns: &str, others: &[&str]) -> Outcome {
    let found = if others.is_empty() {
        format!("no Volcano Job in namespace {ns}")
    } else {
        format!("Volcano Jobs in namespace {ns}: {}", others.join(", "))
    };
    Outcome::fail(
        check,
        format!("Volcano Job {JOB} (batch.volcano.sh/v1alpha1)"),
        found,
    )
    .hint("missing")
    .with("job", JOB)
    .with("namespace", ns)
}

// ---------------------------------------------------------------------------------------------
// The cluster's capacity for this gang.

/// How many of the job's pods the cluster can hold.
///
/// A *whole GPU node* is a node the worker pods may be placed on (not cordoned; every
/// NoSchedule/NoExecute taint tolerated by the pod template; every `nodeSelector` label
/// present — node affinity is not evaluated) whose allocatable `nvidia.com/gpu` equals the
/// largest allocatable `nvidia.com/gpu` among those nodes, `gpus_per_node`. `whole-node-gpus`
/// requires each pod to request exactly `gpus_per_node`: then a pod fills one such node, no node
/// holds two, nodes with fewer GPUs hold none, and the cluster holds exactly `gpu_nodes` pods.
/// When the pods do request `gpus_per_node`, these are exactly "the nodes whose allocatable GPUs
/// equal the GPUs each pod requests"; defining them from the nodes alone keeps `gang-size`
/// meaningful (and not a second blame) when the request is wrong. On the kind profile: the two
/// p5.48xlarge and the p4d.24xlarge workers, 8 GPUs each; the trn1 worker and the tainted control
/// plane have none.
///
/// Static mode has no nodes: `gpus_per_node` is the lab parameter (the task asks for it) and
/// `gpu_nodes` only what `--param gpu_nodes=N` gives, since it is a fact of the learner's cluster.
struct Capacity {
    gpus_per_node: Result<i64, Missing>,
    gpu_nodes: Result<i64, Missing>,
    /// Whole GPU nodes created after the Job (an autoscaler grew the cluster under it).
    added_after_job: i64,
    /// Names of the whole GPU nodes (or the `--param` that gave their count), for evidence.
    node_names: Vec<String>,
}

/// Why a capacity figure is unknown.
#[derive(Debug, Clone)]
enum Missing {
    Param(&'static str),
    Unavailable(Unavailable),
    NoGpus,
}

impl Missing {
    fn outcome(&self, check: &str) -> Outcome {
        match self {
            Missing::Param(name) => Outcome::skipped(check, Reason::NeedsParam(name.to_string())),
            Missing::Unavailable(why) => Outcome::unavailable(check, why),
            Missing::NoGpus => {
                Outcome::error(check, Reason::Message("no-gpus".into())).with("resource", GPU)
            }
        }
    }
}

impl Capacity {
    /// `(added, before)` when the gang is sized right for the whole GPU nodes that existed when
    /// the Job was created, and more joined since: the cluster grew under the held gang.
    fn grew_under(&self, gang: &Gang) -> Option<(i64, i64)> {
        let n = *self.gpu_nodes.as_ref().ok()?;
        let before = n - self.added_after_job;
        (self.added_after_job > 0 && gang.replicas == before + 1)
            .then_some((self.added_after_job, before))
    }

    fn find(ctx: &JudgeCtx, gang: &Gang) -> Result<Capacity, InputError> {
        let given_nodes = Params::number(ctx.params.given("gpu_nodes"), "gpu_nodes")?;
        let param_per_node = Params::number(ctx.params.get("gpus_per_node"), "gpus_per_node")?;
        let from_params = || Capacity {
            gpus_per_node: param_per_node
                .map(i64::from)
                .ok_or(Missing::Param("gpus_per_node")),
            gpu_nodes: given_nodes
                .map(i64::from)
                .ok_or(Missing::Param("gpu_nodes")),
            added_after_job: 0,
            node_names: given_nodes
                .map(|n| vec![format!("--param gpu_nodes={n}")])
                .unwrap_or_default(),
        };
        if ctx.is_static() {
            return Ok(from_params());
        }
        let nodes = match ctx.nodes_read() {
            Ok(nodes) => nodes,
            // A snapshot without nodes can still be graded with --param gpu_nodes=N.
            Err(_) if given_nodes.is_some() => return Ok(from_params()),
            Err(why) => {
                return Ok(Capacity {
                    gpus_per_node: Err(Missing::Unavailable(why.clone())),
                    gpu_nodes: Err(Missing::Unavailable(why)),
                    added_after_job: 0,
                    node_names: Vec::new(),
                })
            }
        };
        let pod = gang.worker_pod();
        let mut usable = Vec::new();
        for o in nodes {
            let facts = NodeFacts::from_obj(o)?;
            let taints = o
                .parse::<Node>()?
                .spec
                .and_then(|s| s.taints)
                .unwrap_or_default();
            if can_place(pod, &facts, &taints) {
                let created = o.value["metadata"]["creationTimestamp"]
                    .as_str()
                    .map(str::to_string);
                usable.push((facts.name.clone(), facts.allocatable(GPU), created));
            }
        }
        let per_node = usable.iter().map(|(_, gpus, _)| *gpus).max().unwrap_or(0);
        if per_node <= 0 {
            return Ok(Capacity {
                gpus_per_node: Err(Missing::NoGpus),
                gpu_nodes: Err(Missing::NoGpus),
                added_after_job: 0,
                node_names: Vec::new(),
            });
        }
        let whole: Vec<_> = usable
            .into_iter()
            .filter(|(_, gpus, _)| *gpus == per_node)
            .collect();
        // RFC 3339 timestamps in the API's fixed UTC form (`2026-12-01T09:00:00Z`) sort as text.
        let job_created = gang.obj.value["metadata"]["creationTimestamp"].as_str();
        let added = whole
            .iter()
            .filter(|(_, _, c)| matches!((c.as_deref(), job_created), (Some(n), Some(j)) if n > j))
            .count();
        Ok(Capacity {
            gpus_per_node: Ok(per_node),
            gpu_nodes: Ok(whole.len() as i64),
            added_after_job: added as i64,
            node_names: whole.into_iter().map(|(name, _, _)| name).collect(),
        })
    }
}

/// Whether the scheduler may place a worker pod on a node at all (resources aside).
fn can_place(pod: Option<&PodSpec>, node: &NodeFacts, taints: &[Taint]) -> bool {
    if node.unschedulable {
        return false;
    }
    let tolerations: &[Toleration] = pod.and_then(|p| p.tolerations.as_deref()).unwrap_or(&[]);
    let blocking = taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute");
    if !blocking.into_iter().all(|t| tolerates(tolerations, t)) {
        return false;
    }
    let selector = pod.and_then(|p| p.node_selector.as_ref());
    selector.is_none_or(|sel| sel.iter().all(|(k, v)| node.labels.get(k) == Some(v)))
}

/// Kubernetes toleration matching: an empty effect matches every effect; `Exists` with an empty
/// key tolerates everything; `Equal` (the default operator) also compares the value.
fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| {
        let effect_ok = t
            .effect
            .as_deref()
            .is_none_or(|e| e.is_empty() || e == taint.effect);
        let exists = t.operator.as_deref() == Some("Exists");
        let key_ok = match t.key.as_deref() {
            None | Some("") => exists,
            Some(k) => k == taint.key,
        };
        let value_ok =
            exists || t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("");
        effect_ok && key_ok && value_ok
    })
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn check_scheduler(gang: &Gang, advice: &mut Vec<Advice>) -> Outcome {
    let written = gang
        .job
        .spec
        .scheduler_name
        .as_deref()
        .filter(|s| !s.is_empty());
    if let Some(name) = written.filter(|s| *s != SCHEDULER) {
        return Outcome::fail(
            SCHEDULER_CHECK,
            format!("spec.schedulerName {SCHEDULER}"),
            format!("spec.schedulerName {name}"),
        )
        .with("scheduler", name);
    }
    // A task template's schedulerName overrides the Job's: its pods bypass Volcano and the gang.
    for t in gang.tasks() {
        let own = pod_spec(t)
            .and_then(|p| p.scheduler_name.as_deref())
            .filter(|s| !s.is_empty());
        if let Some(name) = own.filter(|s| *s != SCHEDULER) {
            return Outcome::fail(
                SCHEDULER_CHECK,
                format!("task {} pods scheduled by {SCHEDULER}", task_name(t)),
                format!("tasks[{}].template.spec.schedulerName {name}", task_name(t)),
            )
            .hint("task-override")
            .with("task", task_name(t))
            .with("scheduler", name);
        }
    }
    if written.is_none() {
        advice.push(Advice::new("scheduler-defaulted"));
        return Outcome::pass(SCHEDULER_CHECK).expected_found(
            format!("spec.schedulerName {SCHEDULER}"),
            format!("unset (the webhook sets {SCHEDULER})"),
        );
    }
    Outcome::pass(SCHEDULER_CHECK).expected_found(
        format!("spec.schedulerName {SCHEDULER}"),
        format!("spec.schedulerName {SCHEDULER}"),
    )
}

fn check_min_available(gang: &Gang, advice: &mut Vec<Advice>) -> Outcome {
    let (m, r) = (gang.min_available, gang.replicas);
    let expected = format!("minAvailable {r} (= total replicas {r})");
    let found = if gang.min_available_written {
        format!("minAvailable {m}")
    } else {
        format!("minAvailable unset: the webhook sets {m}")
    };
    let out = |o: Outcome| o.with("min_available", m).with("replicas", r);
    if m == r {
        if !gang.min_available_written {
            advice.push(Advice::new("min-available-defaulted").with("min_available", m));
        }
        return out(Outcome::pass(MIN_AVAILABLE).expected_found(expected, found));
    }
    let hint = if m < r { "fewer" } else { "more" };
    out(Outcome::fail(MIN_AVAILABLE, expected, found).hint(hint))
}

fn check_gang_size(gang: &Gang, cap: &Capacity) -> Outcome {
    let tasks = gang.tasks();
    let one_worker = tasks.len() == 1 && tasks[0].name.as_deref() == Some(TASK);
    if !one_worker {
        let names: Vec<&str> = tasks.iter().map(task_name).collect();
        return Outcome::fail(
            GANG_SIZE,
            format!("one task named {TASK}"),
            format!("tasks: [{}]", names.join(", ")),
        )
        .hint("one-task")
        .with("task", TASK);
    }
    let n = match &cap.gpu_nodes {
        Ok(n) => *n,
        Err(m) => return m.outcome(GANG_SIZE),
    };
    let r = gang.replicas;
    let expected = format!("replicas {} (whole GPU nodes {n} + 1)", n + 1);
    let found = format!("replicas {r}");
    let out = |o: Outcome| {
        o.with("replicas", r)
            .with("gpu_nodes", n)
            .with("expected_replicas", n + 1)
            .with("nodes", cap.node_names.join(", "))
    };
    if r == n + 1 {
        return out(Outcome::pass(GANG_SIZE).expected_found(expected, found));
    }
    if let Some((added, before)) = cap.grew_under(gang) {
        return out(Outcome::error(
            GANG_SIZE,
            Reason::Message("cluster-grew".into()),
        ))
        .with("added", added)
        .with("before", before);
    }
    let o = Outcome::fail(GANG_SIZE, expected, found);
    out(if r <= n { o.hint("fits") } else { o })
}

fn check_whole_node(gang: &Gang, cap: &Capacity) -> Outcome {
    let p = match &cap.gpus_per_node {
        Ok(p) => *p,
        Err(m) => return m.outcome(WHOLE_NODE),
    };
    let expected = format!("each pod requests {p} {GPU} (all GPUs of a node)");
    for t in gang.tasks() {
        let g = pod_spec(t).map(|s| pod_request(s, GPU)).unwrap_or(0);
        if g == p {
            continue;
        }
        let found = format!("task {} pods request {g} {GPU}", task_name(t));
        let o = Outcome::fail(WHOLE_NODE, expected, found)
            .with("task", task_name(t))
            .with("gpus", g)
            .with("gpus_per_node", p);
        return match g {
            0 => o.hint("none"),
            g if g > p => o.hint("too-many"),
            g => o.with("per_node", p / g),
        };
    }
    Outcome::pass(WHOLE_NODE)
        .expected_found(expected, format!("each pod requests {p} {GPU}"))
        .with("gpus_per_node", p)
}

/// The hint variant state checks use when the gang started because the spec lets it fit:
/// the first failing spec check decides.
fn spec_cause(j: &Judgement) -> Option<&'static str> {
    let failed = |c: &str| j.get(c).is_some_and(|o| o.status == Status::Fail);
    if failed(SCHEDULER_CHECK) {
        Some("scheduler")
    } else if failed(MIN_AVAILABLE) {
        Some("partial-gang")
    } else if failed(GANG_SIZE) || failed(WHOLE_NODE) {
        Some("gang-fits")
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// State checks.

/// What Volcano made of the Job, found by the Job's uid.
struct Made<'a> {
    podgroup: Option<(&'a Obj, PodGroup)>,
    /// Pods owned by the Job, with the node each is bound to.
    pods: Vec<(&'a str, Option<String>)>,
}

impl<'a> Made<'a> {
    fn find(
        ctx: &JudgeCtx<'a>,
        gang: &Gang,
    ) -> Result<Result<Made<'a>, Unavailable>, InputError> {
        let pgs = match ctx.list(&PODGROUPS_READ) {
            Ok(v) => v,
            Err(why) => return Ok(Err(why)),
        };
        let pods = match ctx.list(&PODS_READ) {
            Ok(v) => v,
            Err(why) => return Ok(Err(why)),
        };
        // Only a PodGroup the Job controls counts; prefer the `<job>-<uid>` one over a legacy
        // `<job>` PodGroup from Volcano < 1.5.
        let expected = gang.podgroup_name();
        let mut owned: Vec<&Obj> = pgs
            .into_iter()
            .filter(|pg| pg.is_owned_by(gang.obj))
            .collect();
        owned.sort_by_key(|pg| pg.name() != expected);
        let podgroup = match owned.first() {
            Some(pg) => Some((*pg, pg.parse::<PodGroup>()?)),
            None => None,
        };
        let mut mine = Vec::new();
        for p in pods.into_iter().filter(|p| p.is_owned_by(gang.obj)) {
            let node = p.value["spec"]["nodeName"]
                .as_str()
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            mine.push((p.name(), node));
        }
        mine.sort();
        Ok(Ok(Made {
            podgroup,
            pods: mine,
        }))
    }

    fn bound(&self) -> Vec<(&str, &str)> {
        self.pods
            .iter()
            .filter_map(|(p, n)| n.as_deref().map(|n| (*p, n)))
            .collect()
    }

    /// `3 of 4 pods bound (gang-train-worker-0 → trainlab-worker, …)`
    fn describe_pods(&self, replicas: i64) -> String {
        let bound = self.bound();
        let mut s = format!(
            "{} pods created of {replicas}, {} bound to a node",
            self.pods.len(),
            bound.len()
        );
        if !bound.is_empty() {
            let list: Vec<String> = bound.iter().map(|(p, n)| format!("{p} → {n}")).collect();
            s.push_str(&format!(" ({})", list.join(", ")));
        }
        s
    }
}

fn no_podgroup(check: &str, gang: &Gang) -> Outcome {
    Outcome::pending(check, Reason::Message("no-podgroup".into()))
        .with("podgroup", gang.podgroup_name())
}

fn check_pg_min_member(gang: &Gang, made: &Made) -> Outcome {
    let Some((pg_obj, pg)) = &made.podgroup else {
        return no_podgroup(PG_MIN_MEMBER, gang);
    };
    let m = gang.min_available;
    let expected = format!("PodGroup minMember {m} (= Job minAvailable)");
    let min_member = pg.spec.min_member.unwrap_or(0);
    let found = format!("PodGroup {} minMember {min_member}", pg_obj.name());
    let out = |o: Outcome| {
        o.with("podgroup", pg_obj.name())
            .with("min_member", min_member)
            .with("min_available", m)
    };
    if i64::from(min_member) == m {
        return out(Outcome::pass(PG_MIN_MEMBER).expected_found(expected, found));
    }
    // The controller records the minAvailable it has acted on in status.minAvailable; until it
    // equals the spec, the PodGroup is simply not updated yet.
    let synced = gang
        .job
        .status
        .as_ref()
        .and_then(|s| s.min_available)
        .map(i64::from)
        == Some(m);
    if !synced {
        return out(
            Outcome::pending(PG_MIN_MEMBER, Reason::Message("podgroup-syncing".into()))
                .expected_found(expected, found),
        );
    }
    out(Outcome::fail(PG_MIN_MEMBER, expected, found))
}

/// Why the gang is not held, once something started.
enum Started {
    /// The spec lets the gang start (a spec check fails): the variant names which.
    SpecCause(&'static str),
    /// GPU nodes joined after the Job was created, and the gang fit on them.
    ClusterGrew { added: i64, before: i64 },
    /// The spec is right and the whole gang was placed: the cluster is bigger than assumed.
    ClusterHeldGang,
    /// The spec is right but only part of the gang is bound: left over from an earlier spec.
    Stale,
}

fn classify(gang: &Gang, made: &Made, cap: &Capacity, cause: Option<&'static str>) -> Started {
    if let Some(c) = cause {
        return Started::SpecCause(c);
    }
    match cap.grew_under(gang) {
        Some((added, before)) => Started::ClusterGrew { added, before },
        None if made.bound().len() as i64 >= gang.replicas => Started::ClusterHeldGang,
        None => Started::Stale,
    }
}

/// Evidence every state outcome carries, so hints and messages can name what was seen.
fn state_evidence(o: Outcome, gang: &Gang, made: &Made, cap: &Capacity) -> Outcome {
    let mut o = o
        .with("job", gang.obj.name())
        .with("podgroup", gang.podgroup_name())
        .with("replicas", gang.replicas)
        .with("min_available", gang.min_available)
        .with("bound", made.bound().len())
        .with("created", made.pods.len());
    if let Ok(n) = &cap.gpu_nodes {
        o = o.with("gpu_nodes", n);
    }
    o
}

fn started_outcome(check: &str, kind: Started, expected: String, found: String) -> Outcome {
    match kind {
        Started::SpecCause(hint) => Outcome::fail(check, expected, found).hint(hint),
        Started::ClusterGrew { added, before } => {
            Outcome::error(check, Reason::Message("cluster-grew".into()))
                .expected_found(expected, found)
                .with("added", added)
                .with("before", before)
                .with("expected_replicas", before + added + 1)
        }
        Started::ClusterHeldGang => {
            Outcome::error(check, Reason::Message("cluster-held-gang".into()))
                .expected_found(expected, found)
        }
        Started::Stale => Outcome::fail(check, expected, found).hint("stale"),
    }
}

/// All or nothing: while the PodGroup is Pending or Inqueue and no pod of the Job is bound, the
/// gang is held. Once something started, blame follows the cause: a failing spec check (the gang
/// was allowed to fit) makes this a fail whose hint points at that check; a right spec with only
/// part of the gang bound means pods left from an earlier spec (fail, `stale`); a right spec with
/// the whole gang bound means the cluster holds more than the lab assumes, which is an
/// environment error, not the learner's fault (as is a cluster that grew under the Job).
fn check_gang_held(
    gang: &Gang,
    made: &Made,
    cap: &Capacity,
    cause: Option<&'static str>,
) -> Outcome {
    let Some((pg_obj, pg)) = &made.podgroup else {
        return no_podgroup(GANG_HELD, gang);
    };
    let phase = pg.phase();
    let expected = "no pod of the job bound to a node; PodGroup Pending or Inqueue".to_string();
    let mut found = format!(
        "PodGroup {} {}; {}",
        pg_obj.name(),
        phase.unwrap_or("(no phase)"),
        made.describe_pods(gang.replicas)
    );
    if let Some(msg) = pg.unschedulable_message() {
        found.push_str(&format!("; Unschedulable: {msg}"));
    }
    let with = |o: Outcome| {
        let o = state_evidence(o, gang, made, cap).with("phase", phase.unwrap_or(""));
        match pg.unschedulable_message() {
            Some(msg) => o.with("message", msg),
            None => o,
        }
    };
    let started =
        !made.bound().is_empty() || matches!(phase, Some("Running" | "Unknown" | "Completed"));
    if started {
        return with(started_outcome(
            GANG_HELD,
            classify(gang, made, cap, cause),
            expected,
            found,
        ));
    }
    match phase {
        Some("Pending" | "Inqueue") => {
            with(Outcome::pass(GANG_HELD).expected_found(expected, found))
        }
        _ => with(
            Outcome::pending(GANG_HELD, Reason::Message("podgroup-no-phase".into()))
                .expected_found(expected, found),
        ),
    }
}

fn check_job_pending(
    gang: &Gang,
    made: &Made,
    cap: &Capacity,
    cause: Option<&'static str>,
) -> Outcome {
    let phase = gang.job.phase();
    let expected = format!("Job {} phase Pending", gang.obj.name());
    let found = format!(
        "Job {} phase {}; {}",
        gang.obj.name(),
        phase.unwrap_or("(none yet)"),
        made.describe_pods(gang.replicas)
    );
    let with = |o: Outcome| state_evidence(o, gang, made, cap).with("phase", phase.unwrap_or(""));
    match phase {
        None => with(
            Outcome::pending(JOB_PENDING, Reason::Message("job-not-synced".into()))
                .expected_found(expected, found),
        ),
        Some("Pending") => with(Outcome::pass(JOB_PENDING).expected_found(expected, found)),
        // The gang (or part of it) ran: the same cause as gang-held.
        Some("Running" | "Completing" | "Completed") => with(started_outcome(
            JOB_PENDING,
            classify(gang, made, cap, cause),
            expected,
            found,
        )),
        // Aborting, Aborted, Restarting, Terminating, Terminated, Failed: the job was stopped.
        Some(_) => with(Outcome::fail(JOB_PENDING, expected, found).hint("stopped")),
    }
}

/// Non-scoring notes that show the learner what Volcano says while it holds the gang.
fn advise_from_podgroup(j: &mut Judgement, gang: &Gang, made: &Made) {
    let Some((pg_obj, pg)) = &made.podgroup else {
        return;
    };
    if let Some(msg) = pg.unschedulable_message() {
        j.advise(
            Advice::new("scheduler-says")
                .with("podgroup", pg_obj.name())
                .with("message", msg),
        );
    }
    if pg.phase() == Some("Inqueue") {
        j.advise(
            Advice::new("inqueue")
                .with("podgroup", pg_obj.name())
                .with("created", made.pods.len())
                .with("min_available", gang.min_available),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn tol(
        key: Option<&str>,
        op: Option<&str>,
        value: Option<&str>,
        effect: Option<&str>,
    ) -> Toleration {
        Toleration {
            key: key.map(Into::into),
            operator: op.map(Into::into),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            toleration_seconds: None,
        }
    }

    #[test]
    fn tolerations_match_like_kubernetes() {
        let gpu = taint("nvidia.com/gpu", Some("true"), "NoSchedule");
        assert!(tolerates(
            &[tol(Some("nvidia.com/gpu"), Some("Exists"), None, None)],
            &gpu
        ));
        assert!(tolerates(
            &[tol(
                Some("nvidia.com/gpu"),
                None,
                Some("true"),
                Some("NoSchedule")
            )],
            &gpu
        ));
        assert!(!tolerates(
            &[tol(Some("nvidia.com/gpu"), None, Some("false"), None)],
            &gpu
        ));
        assert!(!tolerates(
            &[tol(
                Some("nvidia.com/gpu"),
                Some("Exists"),
                None,
                Some("NoExecute")
            )],
            &gpu
        ));
        assert!(tolerates(&[tol(None, Some("Exists"), None, None)], &gpu));
        assert!(!tolerates(&[], &gpu));
    }
}
