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
//! - PodGroup `minMember` = Job `minAvailable`; pods are created once the PodGroup is `Inqueue`,
//!   and none is bound until `minMember` of them fit (pkg/controllers/job/job_controller_actions.go,
//!   pkg/scheduler/plugins/gang/gang.go);
//! - a `Restarting` Job goes back to `Pending` (or `Running`) once none of its pods is terminating
//!   (pkg/controllers/job/state/restarting.go).

use crate::facts::instances::GPU;
use crate::facts::NodeFacts;
use crate::observe::kinds::{PODGROUPS, PODS, VOLCANO_JOBS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::resources::{self, Rule, Violation};
use crate::verify::kit::workload::Workload;
use crate::verify::kit::{conditions, owned, placement};
use crate::verify::views::volcano::{PodGroup, VolcanoJob};
use crate::verify::{
    Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Status, Verifier,
};

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
        let gang = Gang::new(w, job)?;
        let cap = Capacity::find(ctx, &gang)?;
        let mut j = Judgement::default();
        check_scheduler(&gang, &mut j);
        check_min_available(&gang, &mut j);
        j.push(check_gang_size(&gang, &cap));
        j.push(check_whole_node(&gang, &cap));
        // Static mode: the framework skips the state checks (NeedsLiveCluster).
        if ctx.is_static() {
            return Ok(j);
        }
        let cause = spec_cause(&j);
        let made = match Made::find(ctx, &gang)? {
            Ok(m) => m,
            Err(why) => {
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
    /// GPUs each pod of each task asks the scheduler for (kit: effective pod request).
    gpus: Vec<i64>,
    /// What the API server's rules refuse in the GPU requests of the task templates.
    refused: Vec<Violation>,
}

impl<'w> Gang<'w> {
    fn new(w: &'w Workload<'w>, job: &'w VolcanoJob) -> Result<Gang<'w>, InputError> {
        let mut refused = Vec::new();
        let mut gpus = Vec::new();
        for t in &w.templates {
            // An unreadable quantity is bad input (exit 2), reported by pod_count below.
            let bad: Vec<Violation> = resources::validate_pod_spec(&t.spec, &t.path)
                .into_iter()
                .filter(|v| v.resource == GPU && v.rule != Rule::Unreadable)
                .collect();
            gpus.push(match resources::pod_count(&t.spec, GPU) {
                Ok(n) => n,
                Err(_) if !bad.is_empty() => 0,
                Err(e) => return Err(w.obj.field_error(t.path.clone(), e)),
            });
            refused.extend(bad);
        }
        Ok(Gang {
            w,
            job,
            replicas: w.total_replicas(),
            min_available: job.effective_min_available(),
            gpus,
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

/// Pods asking for `g` GPUs each take a whole node when no node holds two of them and the
/// biggest node (`p` GPUs) holds one: p/2 < g ≤ p. Then the cluster holds one pod per node.
fn takes_whole_node(g: i64, p: i64) -> bool {
    g <= p && 2 * g > p
}

// ---------------------------------------------------------------------------------------------
// The cluster's capacity for this gang.

/// How many pods of the gang the cluster holds at once.
///
/// `per_node` is the most allocatable `nvidia.com/gpu` of a node some task's pods may use (kit
/// placement: cordon, `nodeSelector`, required node affinity, taints). A *whole GPU node* is such a
/// node that holds one pod of a task that may use it: the pod's GPUs when its pods take a whole
/// node, else `per_node` (so `gang-size` is no second blame while the request is wrong). No node
/// holds two whole-node pods, so the cluster holds `gpu_nodes` of them (tasks placed differently
/// count over the union of their nodes, an upper bound). Kind: the two p5.48xlarge and the
/// p4d.24xlarge workers. Static mode has no nodes: `per_node` is the lab parameter and
/// `gpu_nodes` only what `--param gpu_nodes=N` gives, a fact of the learner's cluster.
struct Capacity {
    per_node: Known,
    gpu_nodes: Known,
    /// Whole GPU nodes created after the Job (an autoscaler grew the cluster under it).
    added_after_job: i64,
    /// Names of the whole GPU nodes (or the `--param` that gave their count), for evidence.
    node_names: Vec<String>,
}

/// A figure, or the outcome (check id left blank) of any check that needs it when it is unknown.
type Known = Result<i64, Box<Outcome>>;

fn unknown(why: &Outcome, check: &str) -> Outcome {
    let mut o = why.clone();
    o.check = check.to_string();
    o
}

fn created(o: &Obj) -> Option<&str> {
    o.value["metadata"]["creationTimestamp"].as_str()
}

impl Capacity {
    fn unknown(why: Outcome) -> Capacity {
        let why = Box::new(why);
        let (per_node, gpu_nodes) = (Err(why.clone()), Err(why));
        Capacity {
            per_node,
            gpu_nodes,
            added_after_job: 0,
            node_names: Vec::new(),
        }
    }

    fn find(ctx: &JudgeCtx, gang: &Gang) -> Result<Capacity, InputError> {
        let given = Params::number(ctx.params.given("gpu_nodes"), "gpu_nodes")?;
        let per_node = Params::number(ctx.params.get("gpus_per_node"), "gpus_per_node")?;
        let param = |v: Option<u32>, name: &str| {
            v.map(i64::from)
                .ok_or_else(|| Box::new(Outcome::skipped("", Reason::NeedsParam(name.to_string()))))
        };
        let from_params = || Capacity {
            per_node: param(per_node, "gpus_per_node"),
            gpu_nodes: param(given, "gpu_nodes"),
            added_after_job: 0,
            node_names: given
                .iter()
                .map(|n| format!("--param gpu_nodes={n}"))
                .collect(),
        };
        if ctx.is_static() {
            return Ok(from_params());
        }
        let nodes = match ctx.nodes_read() {
            Ok(nodes) => nodes,
            // A snapshot without nodes can still be graded with --param gpu_nodes=N.
            Err(_) if given.is_some() => return Ok(from_params()),
            Err(why) => return Ok(Capacity::unknown(Outcome::unavailable("", &why))),
        };
        // Each node some task may use, with those tasks.
        let mut usable = Vec::new();
        for o in nodes {
            let n = NodeFacts::from_obj(o)?;
            let tasks: Vec<usize> = (0..gang.w.templates.len())
                .filter(|&i| placement::may_use(&gang.w.templates[i].spec, &n))
                .collect();
            if !tasks.is_empty() {
                usable.push((o, n, tasks));
            }
        }
        let p = usable.iter().map(|(_, n, _)| n.allocatable(GPU)).max();
        let Some(p) = p.filter(|p| *p > 0) else {
            let why = Outcome::error("", Reason::Message("no-gpus".into())).with("resource", GPU);
            return Ok(Capacity::unknown(why));
        };
        let need = |i: usize| {
            Some(gang.gpus[i])
                .filter(|g| takes_whole_node(*g, p))
                .unwrap_or(p)
        };
        let whole: Vec<_> = usable
            .iter()
            .filter(|(_, n, tasks)| tasks.iter().any(|&i| n.allocatable(GPU) >= need(i)))
            .collect();
        // RFC 3339 timestamps in the API's fixed UTC form (`2026-12-01T09:00:00Z`) sort as text.
        let job_created = created(gang.w.obj);
        let added = whole
            .iter()
            .filter(|(o, _, _)| matches!((created(o), job_created), (Some(n), Some(j)) if n > j))
            .count();
        Ok(Capacity {
            per_node: Ok(p),
            gpu_nodes: Ok(whole.len() as i64),
            added_after_job: added as i64,
            node_names: whole.iter().map(|(_, n, _)| n.name.clone()).collect(),
        })
    }

    /// `(added, before)` when the gang is sized right for the whole GPU nodes that existed when
    /// the Job was created, and more joined since: the cluster grew under the held gang.
    fn grew_under(&self, gang: &Gang) -> Option<(i64, i64)> {
        let before = *self.gpu_nodes.as_ref().ok()? - self.added_after_job;
        (self.added_after_job > 0 && gang.replicas == before + 1)
            .then_some((self.added_after_job, before))
    }
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn check_scheduler(gang: &Gang, j: &mut Judgement) {
    let w = gang.w;
    // The CRD serves v1alpha1 only: `kubectl apply` refuses any other version ("no matches").
    if !w.uses_current_version() {
        let served = w.kind.api_version();
        j.push(
            Outcome::fail(
                SCHEDULER_CHECK,
                format!("apiVersion: {served}"),
                format!("apiVersion: {}", w.api_version()),
            )
            .hint("api-version")
            .with("api_version", served)
            .with("found_api_version", w.api_version()),
        );
        return;
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
    for t in &w.templates {
        let own = t.spec.scheduler_name.as_deref();
        if let Some(name) = own.filter(|s| !s.is_empty() && *s != SCHEDULER) {
            let field = t.field("schedulerName");
            j.push(
                Outcome::fail(
                    SCHEDULER_CHECK,
                    format!("{field}: {SCHEDULER}"),
                    format!("{field}: {name}"),
                )
                .hint("task-override")
                .with("task", &t.role)
                .with("scheduler", name)
                .with("field", field),
            );
            return;
        }
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

fn check_min_available(gang: &Gang, j: &mut Judgement) {
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
        let hint = if m < r { "fewer" } else { "more" };
        Outcome::fail(MIN_AVAILABLE, expected, found).hint(hint)
    };
    j.push(o.with("min_available", m).with("replicas", r));
}

fn check_gang_size(gang: &Gang, cap: &Capacity) -> Outcome {
    let n = match &cap.gpu_nodes {
        Ok(n) => *n,
        Err(why) => return unknown(why, GANG_SIZE),
    };
    let (r, field) = (gang.replicas, gang.replicas_field());
    let expected = format!("{field}: {} ({n} GPU nodes + 1)", n + 1);
    let found = match gang.w.templates.is_empty() {
        true => "spec.tasks: []".to_string(),
        false => format!("{field}: {r}"),
    };
    let out = |o: Outcome| {
        o.with("replicas", r)
            .with("gpu_nodes", n)
            .with("expected_replicas", n + 1)
            .with("nodes", cap.node_names.join(", "))
            .with("field", &field)
    };
    if r == n + 1 {
        return out(Outcome::pass(GANG_SIZE).expected_found(expected, found));
    }
    if let Some((added, before)) = cap.grew_under(gang) {
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

fn check_whole_node(gang: &Gang, cap: &Capacity) -> Outcome {
    // What the API server refuses (and Volcano's webhook, for every task template) comes first.
    if let Some(v) = gang.refused.first() {
        let container = v.path.split(".resources.").next().unwrap_or(&v.path);
        let expected = match v.rule {
            Rule::LimitRequired | Rule::MustEqualLimit => format!(
                "{container}.resources.limits[{GPU}] = {container}.resources.requests[{GPU}]"
            ),
            _ => format!("{}: 0, 1, 2, …", v.path),
        };
        let found = format!("{}: {}", v.path, v.value.as_deref().unwrap_or("—"));
        return Outcome::fail(WHOLE_NODE, expected, found)
            .hint("rejected")
            .with("field", &v.path)
            .with("api_error", v.api_server_text());
    }
    let p = match &cap.per_node {
        Ok(p) => *p,
        Err(why) => return unknown(why, WHOLE_NODE),
    };
    let low = p / 2 + 1;
    let expected = match low < p {
        true => format!("{GPU}: {low}–{p}"),
        false => format!("{GPU}: {p}"),
    };
    for (t, &g) in gang.w.templates.iter().zip(&gang.gpus) {
        if takes_whole_node(g, p) {
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
    let mut found: Vec<String> = gang.gpus.iter().map(|g| format!("{GPU}: {g}")).collect();
    found.dedup();
    Outcome::pass(WHOLE_NODE)
        .expected_found(expected, found.join(", "))
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
#[derive(Default)]
struct Made<'a> {
    podgroup: Option<Group<'a>>,
    /// The Job's pods: current, and those whose deletion was asked for (kit `owned`).
    pods: owned::Owned<'a>,
}

struct Group<'a> {
    obj: &'a Obj,
    pg: PodGroup,
    /// The message of the gang plugin's `Unschedulable=True` condition, e.g. `4/0 tasks in gang
    /// unschedulable: pod group is not ready, 4 minAvailable`.
    unschedulable: Option<String>,
}

fn node_of(pod: &Obj) -> Option<&str> {
    pod.value["spec"]["nodeName"]
        .as_str()
        .filter(|n| !n.is_empty())
}

impl<'a> Made<'a> {
    fn find(ctx: &JudgeCtx<'a>, gang: &Gang) -> Result<Result<Made<'a>, Unavailable>, InputError> {
        let (pgs, pods) = match (ctx.list(&PODGROUPS_READ), ctx.list(&PODS_READ)) {
            (Ok(pgs), Ok(pods)) => (pgs, pods),
            (Err(why), _) | (_, Err(why)) => return Ok(Err(why)),
        };
        let job = gang.w.obj;
        // A Job saved without its uid owns nothing that can be shown.
        let (Ok(pgs), Ok(pods)) = (owned::owned_by(job, &pgs), owned::owned_by(job, &pods)) else {
            return Ok(Ok(Made::default()));
        };
        // Prefer the `<job>-<uid>` PodGroup over a legacy `<job>` one from Volcano < 1.5.
        let expected = gang.podgroup_name();
        let Some(obj) = pgs.all().min_by_key(|pg| pg.name() != expected) else {
            return Ok(Ok(Made {
                podgroup: None,
                pods,
            }));
        };
        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        let unschedulable = conds
            .iter()
            .find(|c| c.type_ == "Unschedulable" && c.is_true());
        let podgroup = Some(Group {
            obj,
            pg: obj.parse()?,
            unschedulable: unschedulable.and_then(|c| c.message.clone()),
        });
        Ok(Ok(Made { podgroup, pods }))
    }

    /// How many pods are bound to a node: current ones, or those being deleted.
    fn bound(&self, terminating: bool) -> usize {
        let pods = if terminating {
            &self.pods.terminating
        } else {
            &self.pods.current
        };
        pods.iter().filter(|p| node_of(p).is_some()).count()
    }

    /// `Pods 4/4, spec.nodeName: gang-train-worker-0 → trainlab-worker, …`
    fn describe_pods(&self, replicas: i64) -> String {
        let mut bound: Vec<String> = (self.pods.all())
            .filter_map(|p| {
                let leaving = owned::is_terminating(p).then_some(" (metadata.deletionTimestamp)");
                node_of(p).map(|n| format!("{} → {n}{}", p.name(), leaving.unwrap_or_default()))
            })
            .collect();
        bound.sort();
        let nodes = Some(bound.join(", ")).filter(|b| !b.is_empty());
        let created = self.pods.current.len();
        format!(
            "Pods {created}/{replicas}, spec.nodeName: {}",
            nodes.as_deref().unwrap_or("—")
        )
    }
}

/// What the state checks look at: the Job, what Volcano made of it, the cluster, and the first
/// failing spec check's hint variant (the cause when the gang started).
struct Seen<'s, 'w> {
    gang: &'s Gang<'w>,
    made: &'s Made<'s>,
    cap: &'s Capacity,
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
        match &self.cap.gpu_nodes {
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
        if let Some((added, before)) = self.cap.grew_under(self.gang) {
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
    let Some(g) = &seen.made.podgroup else {
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
    let Some(g) = &seen.made.podgroup else {
        return seen.no_podgroup(GANG_HELD);
    };
    let (phase, pg) = (g.pg.phase(), g.obj.name());
    let expected = format!("PodGroup {pg}: Pending | Inqueue; spec.nodeName: —");
    let pods = seen.made.describe_pods(seen.gang.replicas);
    let found = format!("PodGroup {pg}: {}; {pods}", phase.unwrap_or("—"));
    let leaving = seen.made.bound(true);
    let ran = matches!(phase, Some("Running" | "Unknown" | "Completed"));
    let o = if seen.made.bound(false) > 0 || (ran && leaving == 0) {
        seen.started(GANG_HELD, expected, found)
    } else {
        let o = match phase {
            _ if leaving > 0 => {
                Outcome::pending(GANG_HELD, Reason::Message("pods-terminating".into()))
                    .with("terminating", leaving)
            }
            Some("Pending" | "Inqueue") => Outcome::pass(GANG_HELD),
            _ => Outcome::pending(GANG_HELD, Reason::Message("podgroup-no-phase".into())),
        };
        o.expected_found(expected, found)
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
    let Some(g) = &seen.made.podgroup else {
        return;
    };
    let pg = g.obj.name();
    if let Some(msg) = &g.unschedulable {
        j.advise(
            Advice::new("scheduler-says")
                .with("podgroup", pg)
                .with("message", msg),
        );
    }
    if g.pg.phase() == Some("Inqueue") {
        let created = seen.made.pods.current.len();
        let a = Advice::new("inqueue")
            .with("podgroup", pg)
            .with("created", created);
        j.advise(a.with("min_available", seen.gang.min_available.0));
    }
}

#[cfg(test)]
mod tests {
    use super::takes_whole_node;

    #[test]
    fn a_pod_takes_a_whole_node_when_no_node_holds_two() {
        assert!(takes_whole_node(8, 8));
        assert!(takes_whole_node(5, 8));
        assert!(!takes_whole_node(4, 8), "two fit on an 8-GPU node");
        assert!(!takes_whole_node(9, 8), "no node holds one");
        assert!(!takes_whole_node(0, 8));
        assert!(takes_whole_node(1, 1));
    }
}
