//! Lab `volcano-gang` (quiz question 9): a Volcano Job `gang-train` whose gang is one pod larger
//! than the cluster can hold, so Volcano holds the whole gang and starts nothing.
//!
//! Spec checks judge the Job as written (also on `--files`) through the kit's workload view; any
//! task layout whose pods each take a whole GPU node passes. State checks judge what Volcano made
//! of it: the PodGroup and the pods the Job owns, matched by ownerReference uid (kit `owned`),
//! never by names or labels, which a learner can forge.
//!
//! Facts (volcano-sh/volcano v1.15.1; types in views/volcano.rs):
//! - the Job CRD serves one version, `v1alpha1` (config/crd/volcano/bases/batch.volcano.sh_jobs.yaml);
//! - on create the mutating webhook fills `spec.schedulerName` (`volcano`) and `spec.minAvailable`
//!   (Σ tasks' minAvailable, else replicas) (pkg/webhooks/admission/jobs/mutate/mutate_job.go);
//! - the validating webhook runs the API server's pod-template validation on every task template
//!   (`validateTaskTemplate` → `ValidatePodTemplate`), so a GPU request the API server refuses
//!   refuses the Job (pkg/webhooks/admission/jobs/validate/admit_job.go);
//! - a task template's own `schedulerName` wins over the Job's (pkg/controllers/job/job_controller_util.go);
//! - PodGroup `minMember` = Job `minAvailable` (pkg/controllers/job/job_controller_actions.go);
//!   the gang itself: `gang`;
//! - a `Restarting` Job goes back to `Pending` (or `Running`) once none of its pods is terminating
//!   (pkg/controllers/job/state/restarting.go).

mod gang;

use crate::facts::instances::GPU;
use crate::observe::kinds::{PODGROUPS, PODS, VOLCANO_JOBS};
use crate::observe::InputError;
use crate::verify::kit::k8s::resources::Violation;
use crate::verify::kit::k8s::version;
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::kit::nodes::capacity::{self, Member, ParamFact, WholeNodes};
use crate::verify::kit::nodes::devices;
use crate::verify::views::volcano::VolcanoJob;
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Status, Verifier};
use gang::{GangState, Hold};

pub struct VolcanoGang;

static JOBS_READ: Read = Read::lab(&VOLCANO_JOBS);
static PODGROUPS_READ: Read = Read::lab(&PODGROUPS);
static PODS_READ: Read = Read::lab(&PODS);
static READS: &[&Read] = &[&JOBS_READ, &PODGROUPS_READ, &PODS_READ];

const JOB: &str = "gang-train";
/// The name Volcano's scheduler registers and the webhook's default (`defaultSchedulerName`).
const SCHEDULER: &str = "volcano";

const SCHEDULER_CHECK: &str = "volcano-scheduler";
const MIN_AVAILABLE: &str = "min-available-all";
const GANG_SIZE: &str = "gang-size";
const WHOLE_NODE: &str = "whole-node-gpus";
const PG_MIN_MEMBER: &str = "podgroup-min-member";
const GANG_HELD: &str = "gang-held";
const JOB_PENDING: &str = "job-pending";
const CHECKS: &[&str] = &[
    SCHEDULER_CHECK,
    MIN_AVAILABLE,
    GANG_SIZE,
    WHOLE_NODE,
    PG_MIN_MEMBER,
    GANG_HELD,
    JOB_PENDING,
];
const STATE_CHECKS: [&str; 3] = [PG_MIN_MEMBER, GANG_HELD, JOB_PENDING];

impl Verifier for VolcanoGang {
    fn lab_id(&self) -> &'static str {
        "volcano-gang"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let obj = match ctx.named(&JOBS_READ, JOB, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => return Ok(j),
        };
        let w = Workload::from_obj(obj)?;
        let Some((w, job)) = w.as_ref().and_then(|w| Some((w, w.volcano()?))) else {
            return Err(obj.field_error("kind", "expected a batch.volcano.sh Job"));
        };
        let gang = Gang::new(w, job, &ctx.target.namespace)?;
        let cap = capacity_for(ctx, &gang)?;
        let mut j = Judgement::default();
        check_scheduler(&gang, &mut j);
        check_min_available(&gang, cap.count.as_ref().ok().map(|n| n + 1), &mut j);
        j.push(check_gang_size(&gang, &cap));
        j.push(check_whole_node(&gang, &cap));
        // Static mode: the framework skips the state checks (NeedsLiveCluster).
        if ctx.is_static() {
            return Ok(j);
        }
        let cause = spec_cause(&j);
        let made = match (ctx.list(&PODGROUPS_READ), ctx.list(&PODS_READ)) {
            (Ok(pgs), Ok(pods)) => GangState::find(obj, &pgs, &pods, &gang.podgroup_name())?,
            (Err(why), _) | (_, Err(why)) => {
                for check in STATE_CHECKS {
                    j.push(Outcome::unavailable(check, &why));
                }
                return Ok(j);
            }
        };
        let seen = Seen {
            gang: &gang,
            made: &made,
            cap: &cap,
            cause,
        };
        j.push(check_pg_min_member(&seen));
        let held = check_gang_held(&seen);
        if held.status == Status::Pass {
            advise_from_podgroup(&mut j, &seen);
        }
        j.push(held);
        j.push(check_job_pending(&seen));
        Ok(j)
    }
}

/// The learner's Job, with the figures every check needs.
struct Gang<'w> {
    w: &'w Workload<'w>,
    job: &'w VolcanoJob,
    /// Σ tasks[].replicas: the pods the controller creates.
    replicas: i64,
    /// `spec.minAvailable` after the webhook's default, and whether it was written.
    min_available: (i64, bool),
    /// Per task: the GPUs each pod asks the scheduler for (kit: effective pod request) and
    /// whether a required pod anti-affinity keeps its pods one per node.
    members: Vec<Member<'w>>,
    /// What the API server's rules refuse in the GPU requests of the task templates.
    refused: Vec<Violation>,
}

impl<'w> Gang<'w> {
    fn new(w: &'w Workload<'w>, job: &'w VolcanoJob, ns: &str) -> Result<Gang<'w>, InputError> {
        let (mut refused, mut members) = (Vec::new(), Vec::new());
        for t in &w.templates {
            // The job controller adds these labels to every pod (volcano-sh/volcano
            // pkg/controllers/job/job_controller_util.go `createJobPod`): an anti-affinity may
            // select them.
            let mut labels = t.labels.clone();
            labels.insert("volcano.sh/job-name".into(), w.obj.name().into());
            labels.insert("volcano.sh/job-namespace".into(), ns.into());
            labels.insert("volcano.sh/task-spec".into(), t.role.clone());
            let (m, bad) = Member::of(w.obj, t, &labels, ns)?;
            members.push(m);
            refused.extend(bad);
        }
        Ok(Gang {
            w,
            job,
            replicas: w.total_replicas(),
            min_available: job.effective_min_available(),
            members,
            refused,
        })
    }

    fn name(&self) -> &str {
        self.w.obj.name()
    }

    /// Where the gang's size is written: the one task's replicas, or their sum.
    fn replicas_field(&self) -> String {
        match self.w.templates.as_slice() {
            [t] => t.replicas_path.clone(),
            _ => "Σ spec.tasks[*].replicas".to_string(),
        }
    }

    /// `<job name>-<job uid>`: how the job controller names the PodGroup (Volcano ≥ 1.5).
    fn podgroup_name(&self) -> String {
        format!("{}-{}", self.name(), self.w.obj.uid().unwrap_or("<uid>"))
    }
}

/// How many pods of the gang the cluster holds at once (kit `capacity`): live, the whole GPU
/// nodes some task may use (kind: the two p5.48xlarge and the p4d.24xlarge workers); static,
/// `gpus_per_node` from the lab parameters and the node count only from `--param gpu_nodes=N`,
/// a fact of the learner's cluster.
fn capacity_for(ctx: &JudgeCtx, gang: &Gang) -> Result<WholeNodes, InputError> {
    let per_node = ParamFact::read("gpus_per_node", ctx.params.get("gpus_per_node"))?;
    let count = ParamFact::read("gpu_nodes", ctx.params.given("gpu_nodes"))?;
    let created = gang.w.obj.value["metadata"]["creationTimestamp"].as_str();
    WholeNodes::find(ctx, &gang.members, created, per_node, count)
}

/// `(added, before)` when the gang is sized right for the whole GPU nodes that existed when the
/// Job was created, and more joined since: the cluster grew under the held gang.
fn grew_under(cap: &WholeNodes, gang: &Gang) -> Option<(i64, i64)> {
    let before = *cap.count.as_ref().ok()? - cap.added_after;
    (cap.added_after > 0 && gang.replicas == before + 1).then_some((cap.added_after, before))
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn check_scheduler(gang: &Gang, j: &mut Judgement) {
    let w = gang.w;
    // The CRD serves v1alpha1 only: `kubectl apply` refuses any other version ("no matches").
    if let Some(o) = version::unserved(SCHEDULER_CHECK, w.obj, &w.kind.api_version()) {
        return j.push(o.hint("api-version"));
    }
    let expected = format!("spec.schedulerName: {SCHEDULER}");
    let written = gang.job.spec.scheduler_name.as_deref();
    let written = written.filter(|s| !s.is_empty());
    if let Some(name) = written.filter(|s| *s != SCHEDULER) {
        let found = format!("spec.schedulerName: {name}");
        j.push(Outcome::fail(SCHEDULER_CHECK, expected, found).with("scheduler", name));
        return;
    }
    // A task template's schedulerName overrides the Job's: its pods bypass Volcano and the gang.
    if let Some((t, name)) = gang::bypassing(&w.templates, SCHEDULER) {
        let field = t.field("schedulerName");
        let (expected, found) = (format!("{field}: {SCHEDULER}"), format!("{field}: {name}"));
        let o = Outcome::fail(SCHEDULER_CHECK, expected, found).hint("task-override");
        let o = o.with("task", &t.role).with("scheduler", name);
        return j.push(o.with("field", field));
    }
    let found = match written {
        Some(_) => expected.clone(),
        None => {
            j.advise(Advice::new("scheduler-defaulted"));
            format!("spec.schedulerName: — (webhook: {SCHEDULER})")
        }
    };
    j.push(Outcome::pass(SCHEDULER_CHECK).expected_found(expected, found));
}

/// `gang_size`: the replicas gang-size wants, when the number of GPU nodes is known. When the
/// replicas are about to change too, the hint names that size, not the replicas of today, so
/// the two hints agree on one number.
fn check_min_available(gang: &Gang, gang_size: Option<i64>, j: &mut Judgement) {
    let ((m, written), r) = (gang.min_available, gang.replicas);
    let expected = format!("spec.minAvailable: {r}");
    let found = if written {
        format!("spec.minAvailable: {m}")
    } else {
        format!("spec.minAvailable: — (webhook: {m})")
    };
    let o = if m == r {
        if !written {
            j.advise(Advice::new("min-available-defaulted").with("min_available", m));
        }
        Outcome::pass(MIN_AVAILABLE).expected_found(expected, found)
    } else {
        let o = Outcome::fail(MIN_AVAILABLE, expected, found);
        match gang_size {
            Some(size) if size != r && !gang.w.templates.is_empty() => {
                o.hint("resize").with("expected_replicas", size)
            }
            // The size is not known (static mode without --profile or --param): no number
            // that gang-size may soon change.
            None if m < r => o.hint("unsized"),
            _ if m < r => o.hint("fewer"),
            _ => o.hint("more"),
        }
    };
    j.push(o.with("min_available", m).with("replicas", r));
}

fn check_gang_size(gang: &Gang, cap: &WholeNodes) -> Outcome {
    let n = match &cap.count {
        Ok(n) => *n,
        Err(why) => return why.outcome(GANG_SIZE),
    };
    let (r, field) = (gang.replicas, gang.replicas_field());
    let expected = format!("{field}: {} ({n} GPU nodes + 1)", n + 1);
    let found = if gang.w.templates.is_empty() {
        "spec.tasks: []".to_string()
    } else {
        format!("{field}: {r}")
    };
    let out = |o: Outcome| {
        o.with("replicas", r)
            .with("gpu_nodes", n)
            .with("expected_replicas", n + 1)
            .with("nodes", cap.names.join(", "))
            .with("field", &field)
    };
    if r == n + 1 {
        return out(Outcome::pass(GANG_SIZE).expected_found(expected, found));
    }
    if let Some((added, before)) = grew_under(cap, gang) {
        let o = Outcome::error(GANG_SIZE, Reason::Message("cluster-grew".into()));
        return out(o.with("added", added).with("before", before));
    }
    let o = Outcome::fail(GANG_SIZE, expected, found);
    out(match r {
        _ if gang.w.templates.is_empty() => o.hint("no-task"),
        r if r <= n => o.hint("fits"),
        _ => o,
    })
}

/// No node holds two pods of a task: each asks for more than half of the biggest usable node's
/// GPUs, or a required pod anti-affinity on the hostname keeps its pods apart (kit `capacity`).
fn check_whole_node(gang: &Gang, cap: &WholeNodes) -> Outcome {
    // What the API server refuses (and Volcano's webhook, for every task template) comes first.
    if let Some(v) = gang.refused.first() {
        return devices::refused(WHOLE_NODE, gang.w, v)
            .hint("rejected")
            .with("field", &v.path);
    }
    let p = match &cap.per_node {
        Ok(p) => *p,
        Err(why) => return why.outcome(WHOLE_NODE),
    };
    let low = p / 2 + 1;
    let expected = if low < p {
        format!("{GPU}: {low}–{p}")
    } else {
        format!("{GPU}: {p}")
    };
    let mut found = Vec::new();
    for (t, m) in gang.w.templates.iter().zip(&gang.members) {
        let g = m.gpus;
        if m.whole_node_need(p).is_some() {
            let apart = !capacity::takes_whole_node(g, p);
            found.push(if apart {
                format!("{GPU}: {g} (podAntiAffinity: {})", capacity::HOSTNAME_LABEL)
            } else {
                format!("{GPU}: {g}")
            });
            continue;
        }
        let o = Outcome::fail(WHOLE_NODE, expected, format!("{GPU}: {g} ({})", t.path))
            .with("task", &t.role)
            .with("gpus", g)
            .with("gpus_per_node", p)
            .with("path", &t.path);
        return match g {
            0 => o.hint("none"),
            g if g > p => o.hint("too-many"),
            g => o.with("per_node", p / g),
        };
    }
    found.dedup();
    Outcome::pass(WHOLE_NODE)
        .expected_found(expected, found.join(", "))
        .with("gpus_per_node", p)
}

/// The hint variant state checks use when the gang started because the spec lets it fit:
/// the first failing spec check decides.
fn spec_cause(j: &Judgement) -> Option<&'static str> {
    let failed = |c: &&str| j.get(c).is_some_and(|o| o.status == Status::Fail);
    let causes = [
        (SCHEDULER_CHECK, "scheduler"),
        (MIN_AVAILABLE, "partial-gang"),
        (GANG_SIZE, "gang-fits"),
        (WHOLE_NODE, "gang-fits"),
    ];
    causes.into_iter().find(|(c, _)| failed(c)).map(|(_, h)| h)
}

// ---------------------------------------------------------------------------------------------
// State checks.

/// What the state checks look at: the Job, what Volcano made of it, the cluster, and the first
/// failing spec check's hint variant (the cause when the gang started).
struct Seen<'s, 'w> {
    gang: &'s Gang<'w>,
    made: &'s GangState<'s>,
    cap: &'s WholeNodes,
    cause: Option<&'static str>,
}

impl Seen<'_, '_> {
    /// Evidence every state outcome carries, so hints and messages can name what was seen.
    fn evidence(&self, o: Outcome) -> Outcome {
        let (gang, made) = (self.gang, self.made);
        let o = o
            .with("job", gang.name())
            .with("podgroup", gang.podgroup_name())
            .with("replicas", gang.replicas)
            .with("min_available", gang.min_available.0)
            .with("bound", made.bound(false))
            .with("created", made.pods.current.len());
        match &self.cap.count {
            Ok(n) => o.with("gpu_nodes", n),
            Err(_) => o,
        }
    }

    /// Something of the Job started: blame follows the cause (see `check_gang_held`).
    fn started(&self, check: &str, expected: String, found: String) -> Outcome {
        if let Some(hint) = self.cause {
            return Outcome::fail(check, expected, found).hint(hint);
        }
        let env = |id: &str| {
            Outcome::error(check, Reason::Message(id.into())).expected_found(&expected, &found)
        };
        if let Some((added, before)) = grew_under(self.cap, self.gang) {
            let o = env("cluster-grew")
                .with("added", added)
                .with("before", before);
            return o.with("expected_replicas", before + added + 1);
        }
        if self.made.bound(false) as i64 >= self.gang.replicas {
            return env("cluster-held-gang");
        }
        Outcome::fail(check, expected, found).hint("stale")
    }

    fn no_podgroup(&self, check: &str) -> Outcome {
        Outcome::pending(check, Reason::Message("no-podgroup".into()))
            .with("podgroup", self.gang.podgroup_name())
    }
}

fn check_pg_min_member(seen: &Seen) -> Outcome {
    let Some(g) = &seen.made.group else {
        return seen.no_podgroup(PG_MIN_MEMBER);
    };
    let (m, min_member) = (seen.gang.min_available.0, g.pg.spec.min_member.unwrap_or(0));
    let expected = format!("PodGroup {} spec.minMember: {m}", g.obj.name());
    let found = format!("PodGroup {} spec.minMember: {min_member}", g.obj.name());
    // The controller records the minAvailable it has acted on in status.minAvailable; until it
    // equals the spec, the PodGroup is simply not updated yet.
    let acted_on = seen.gang.job.status.as_ref().and_then(|s| s.min_available);
    let o = if i64::from(min_member) == m {
        Outcome::pass(PG_MIN_MEMBER)
    } else if acted_on.map(i64::from) != Some(m) {
        Outcome::pending(PG_MIN_MEMBER, Reason::Message("podgroup-syncing".into()))
    } else {
        Outcome::fail(PG_MIN_MEMBER, &expected, &found)
    };
    o.expected_found(expected, found)
        .with("podgroup", g.obj.name())
        .with("min_member", min_member)
        .with("min_available", m)
}

/// All or nothing: while the PodGroup is Pending or Inqueue and no pod of the Job is bound, the
/// gang is held. Once something started, blame follows the cause: a failing spec check (the gang
/// was allowed to fit) makes this a fail whose hint points at that check; a right spec with only
/// part of the gang bound means pods left from an earlier spec (fail, `stale`); a right spec with
/// the whole gang bound means the cluster holds more than the lab assumes, which is an
/// environment error, not the learner's fault (as is a cluster that grew under the Job). Bound
/// pods that are all terminating are on their way out (the Job restarts, or was changed): pending.
fn check_gang_held(seen: &Seen) -> Outcome {
    let Some(g) = &seen.made.group else {
        return seen.no_podgroup(GANG_HELD);
    };
    let (phase, pg) = (g.pg.phase(), g.obj.name());
    let expected = format!("PodGroup {pg}: Pending | Inqueue; spec.nodeName: —");
    let pods = seen.made.describe_pods(seen.gang.replicas);
    let found = format!("PodGroup {pg}: {}; {pods}", phase.unwrap_or("—"));
    let message = |id: &str| Outcome::pending(GANG_HELD, Reason::Message(id.into()));
    let o = match seen.made.hold() {
        Hold::Started => seen.started(GANG_HELD, expected, found),
        Hold::Leaving(n) => message("pods-terminating")
            .with("terminating", n)
            .expected_found(expected, found),
        Hold::Held => Outcome::pass(GANG_HELD).expected_found(expected, found),
        Hold::NoPhase | Hold::NoGroup => {
            message("podgroup-no-phase").expected_found(expected, found)
        }
    };
    let o = seen.evidence(o).with("phase", phase.unwrap_or(""));
    match &g.unschedulable {
        Some(msg) => o.with("message", msg),
        None => o,
    }
}

fn check_job_pending(seen: &Seen) -> Outcome {
    let (phase, job) = (seen.gang.job.phase(), seen.gang.name());
    let expected = format!("Job {job} status.state.phase: Pending");
    let pods = seen.made.describe_pods(seen.gang.replicas);
    let found = format!(
        "Job {job} status.state.phase: {}; {pods}",
        phase.unwrap_or("—")
    );
    let message = |id: &str| Outcome::pending(JOB_PENDING, Reason::Message(id.into()));
    let o = match phase {
        None => message("job-not-synced"),
        Some("Pending") => Outcome::pass(JOB_PENDING),
        // Back to Pending once its pods are gone (restarting.go).
        Some("Restarting") => message("job-restarting"),
        // The gang (or part of it) ran: the same cause as gang-held.
        Some("Running" | "Completing" | "Completed") => {
            seen.started(JOB_PENDING, expected.clone(), found.clone())
        }
        // Aborting, Aborted, Terminating, Terminated, Failed: the job was stopped.
        Some(_) => Outcome::fail(JOB_PENDING, &expected, &found).hint("stopped"),
    };
    seen.evidence(o.expected_found(expected, found))
        .with("phase", phase.unwrap_or(""))
}

/// Non-scoring notes that show the learner what Volcano says while it holds the gang.
fn advise_from_podgroup(j: &mut Judgement, seen: &Seen) {
    let Some(g) = &seen.made.group else {
        return;
    };
    let advice = |id: &str| Advice::new(id).with("podgroup", g.obj.name());
    if let Some(msg) = &g.unschedulable {
        j.advise(advice("scheduler-says").with("message", msg));
    }
    if g.pg.phase() == Some("Inqueue") {
        let a = advice("inqueue").with("created", seen.made.pods.current.len());
        j.advise(a.with("min_available", seen.gang.min_available.0));
    }
}
