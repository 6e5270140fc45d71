//! Lab `mpijob-slots`: an MPIJob `nccl-allreduce` whose hosts each run one MPI rank per GPU
//! (`slotsPerWorker` = the GPUs of a worker), whose `mpirun` starts that many ranks on every
//! host, and which the MPI Operator actually runs.
//!
//! The concept, not one layout: the operator writes one hostfile line per host with
//! `slots=<slotsPerWorker>`, the launcher included with `runLauncherAsWorker`
//! (kubeflow/mpi-operator `pkg/controller/mpi_job_controller.go`, `newConfigMap`), so the ranks
//! are `slotsPerWorker × hosts`. mpirun may say so with `-np`/`-n`/`--np`, with a per-node count
//! (`-N`, `--npernode`, `--map-by ppr:N:node`), or, for Open MPI, not at all: "If no value is
//! provided for the number of copies to execute …, Open MPI will automatically execute a copy of
//! the program on each process slot" (open-mpi/ompi v4.x `orte/tools/orterun/orterun.1in`).
//! The right per-host count is the worker's GPUs: when `slotsPerWorker` disagrees with them only
//! the slots check fails, and mpirun's count is judged against the GPUs.
//!
//! State checks follow ownerReferences from the MPIJob's uid (worker pods; launcher Job → its
//! pods), never names or labels.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Container;

use super::kit::cmdline::{self, EnvLookup, FlagError, Invocation, Mpirun, ShellError};
use super::kit::conditions::{self, Condition};
use super::kit::workload::{PodTemplate, Workload};
use super::kit::{owned, resources};
use super::views::mpi::{self, MpiJob, COND_FAILED, COND_RUNNING, COND_SUCCEEDED, COND_SUSPENDED};
use super::views::pods::PodFacts;
use super::{Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Verifier};
use crate::observe::kinds::{JOBS, MPIJOBS, PODS};
use crate::observe::{InputError, Obj};

pub struct MpijobSlots;

static MPIJOBS_READ: Read = Read::lab(&MPIJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static JOBS_READ: Read = Read::lab(&JOBS);
static READS: &[&Read] = &[&MPIJOBS_READ, &PODS_READ, &JOBS_READ];

const JOB_NAME: &str = "nccl-allreduce";
const GPU: &str = "nvidia.com/gpu";
const API: &str = "api-v2beta1";
const SLOTS: &str = "slots-match-gpus";
const NP: &str = "np-matches";
const ONE_LAUNCHER: &str = "one-launcher";
const BIND_MAP: &str = "bind-map";
const SPREAD: &str = "workers-spread";
const RUNNING: &str = "mpijob-running";
const CHECKS: &[&str] = &[API, SLOTS, NP, ONE_LAUNCHER, BIND_MAP, SPREAD, RUNNING];
/// Shown for a field, option or list that is not written or empty.
const UNSET: &str = "—";
const WORKER_REPLICAS: &str = "spec.mpiReplicaSpecs.Worker.replicas";

impl Verifier for MpijobSlots {
    fn lab_id(&self) -> &'static str {
        "mpijob-slots"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let obj = match ctx.named(&MPIJOBS_READ, JOB_NAME, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => return Ok(j),
        };
        let not_mpijob = || obj.field_error("kind", "expected an MPIJob");
        let w = Workload::from_obj(obj)?.ok_or_else(not_mpijob)?;
        let s = Spec::of(&w, w.mpi().ok_or_else(not_mpijob)?)?;
        let ns = ctx.target.namespace.as_str();
        let ev = |o: Outcome| o.with("job", JOB_NAME).with("namespace", ns);
        let mut j = Judgement::default();
        j.push(ev(check_api(&w)));
        j.push(ev(check_slots(&s)));
        let np = check_np(&s, &mut j);
        j.push(ev(np));
        j.push(ev(check_one_launcher(&s)));
        j.push(ev(check_bind_map(&s)).with("per_host", s.per_host));
        advise(&mut j, &s, ctx.params)?;

        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        let (pods, jobs) = (ctx.list(&PODS_READ), ctx.list(&JOBS_READ));
        let state = State::gather(obj, &s, pods.as_deref().ok(), jobs.as_deref().ok())?;
        j.push(ev(match (&pods, &jobs) {
            (Err(why), _) => Outcome::unavailable(SPREAD, why),
            (_, Err(why)) if s.as_worker => Outcome::unavailable(SPREAD, why),
            _ => check_spread(&s, &state, &conds),
        }));
        j.push(ev(check_running(&conds, &s, &state)));
        Ok(j)
    }
}

fn or_unset(s: String) -> String {
    if s.is_empty() {
        UNSET.to_string()
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------------
// What the MPIJob asks for, computed once for all spec checks.

struct Spec<'a> {
    job: &'a MpiJob,
    slots: i64,
    slots_set: bool,
    worker: Option<&'a PodTemplate>,
    launcher: Option<&'a PodTemplate>,
    workers: i64,
    as_worker: bool,
    /// Hostfile lines: the workers, plus the launcher with `runLauncherAsWorker`.
    hosts: i64,
    /// GPUs of one worker / launcher pod (None: its resources break an API server rule).
    worker_gpus: Option<i64>,
    launcher_gpus: Option<i64>,
    /// Ranks each host should run: one per worker GPU (slotsPerWorker when workers ask for none).
    per_host: i64,
    launch: Launch,
}

/// What the Launcher runs.
enum Launch {
    NoTemplate,
    /// No container runs mpirun: the first container's command line as written.
    NoMpirun(String),
    /// A launcher container's shell script cannot be split (the shell would refuse it too).
    Shell(ShellError),
    Found(Box<Found>),
}

struct Found {
    mpirun: Mpirun,
    /// The command it came from (its environment), in this container.
    invocation: Invocation,
    container: Container,
}

impl<'a> Spec<'a> {
    fn of(w: &'a Workload<'a>, job: &'a MpiJob) -> Result<Spec<'a>, InputError> {
        let (slots, slots_set) = job.slots_per_worker();
        let (worker, launcher) = (w.template(mpi::WORKER), w.template(mpi::LAUNCHER));
        let gpus = |t: Option<&PodTemplate>| match t {
            Some(t) if violations(t).is_empty() => resources::pod_count(&t.spec, GPU)
                .map(Some)
                .map_err(|e| w.obj.field_error(t.path.clone(), e)),
            _ => Ok(None),
        };
        let worker_gpus = gpus(worker)?;
        let workers = worker.map_or(0, |t| t.replicas);
        let as_worker = job.runs_launcher_as_worker();
        Ok(Spec {
            job,
            slots,
            slots_set,
            worker,
            launcher,
            workers,
            as_worker,
            hosts: workers + i64::from(as_worker),
            worker_gpus,
            launcher_gpus: gpus(launcher)?,
            per_host: worker_gpus.filter(|g| *g > 0).unwrap_or(slots),
            launch: launcher.map_or(Launch::NoTemplate, find_mpirun),
        })
    }

    fn expected_np(&self) -> i64 {
        self.per_host.saturating_mul(self.hosts)
    }

    /// `-np 16 (nvidia.com/gpu 8 × Worker.replicas 2)`: the count and where it comes from.
    fn np_text(&self) -> String {
        let basis = match self.worker_gpus {
            Some(g) if g > 0 => GPU,
            _ => "slotsPerWorker",
        };
        let w = format!("Worker.replicas {}", self.workers);
        let hosts = if self.as_worker {
            format!("({w} + Launcher 1)")
        } else {
            w
        };
        let np = self.expected_np();
        format!("-np {np} ({basis} {} × {hosts})", self.per_host)
    }

    /// What `spec.mpiReplicaSpecs` has instead of `key`: a miscased key, or the keys written.
    fn absent(&self, key: &str) -> String {
        match self.job.near_miss_key(key) {
            Some(k) => format!("spec.mpiReplicaSpecs.{k}"),
            None => {
                let keys = or_unset(self.job.replica_keys().join(", "));
                format!("spec.mpiReplicaSpecs: {keys}")
            }
        }
    }
}

/// The API server's refusals of a template's container resources (it refuses the pods the
/// operator would make from it).
fn violations(t: &PodTemplate) -> Vec<resources::Violation> {
    resources::validate_pod_spec(&t.spec, &t.path)
}

/// A refusal as a fail: expected/found are field paths and values; the API server's own words
/// go to the hint (`{api_error}`), quoted as `kubectl apply` prints them.
fn rejected(check: &str, v: &resources::Violation) -> Outcome {
    use resources::Rule::*;
    let found = format!("{}: {}", v.path, v.value.as_deref().unwrap_or(UNSET));
    let lim = v.path.replace(".requests[", ".limits[");
    let expected = match v.rule {
        // Extended resources: the limit is required and a request must equal it.
        LimitRequired | MustEqualLimit => {
            format!("{lim} = {}", lim.replace(".limits[", ".requests["))
        }
        AboveLimit => format!("{} ≤ {lim}", v.path),
        NotAContainerResource | NotAnExtendedResourceName => {
            format!("{} → cpu, memory, <domain>/<name>", v.resource)
        }
        Negative | NotInteger | Unreadable => format!("{}: 0, 1, 2, …", v.path),
    };
    let o = Outcome::fail(check, expected, found).hint("api-rejects");
    o.with("api_error", v.api_server_text())
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn check_api(w: &Workload) -> Outcome {
    if w.uses_current_version() {
        return Outcome::pass(API);
    }
    let (want, found) = (mpi::API_VERSION, w.api_version());
    let o = Outcome::fail(
        API,
        format!("apiVersion: {want}"),
        format!("apiVersion: {found}"),
    );
    let o = o.with("found_api", found);
    match found {
        mpi::LEGACY_API_VERSION => o.hint("v1"),
        _ => o,
    }
}

fn check_slots(s: &Spec) -> Outcome {
    let Some(worker) = s.worker else {
        let o = Outcome::fail(SLOTS, "spec.mpiReplicaSpecs.Worker", s.absent(mpi::WORKER));
        return o.hint("no-worker");
    };
    if let Some(v) = violations(worker).first() {
        return rejected(SLOTS, v);
    }
    let limit = |t: &PodTemplate| format!("{}.containers[0].resources.limits[{GPU}]", t.path);
    let gpus = s.worker_gpus.unwrap_or(0);
    if gpus == 0 {
        let o = Outcome::fail(
            SLOTS,
            format!("{}: {}", limit(worker), s.slots),
            format!("{GPU}: 0"),
        );
        return o
            .hint("no-gpu")
            .with("slots", s.slots)
            .with("path", limit(worker));
    }
    let facts = |o: Outcome| o.with("slots", s.slots).with("gpus", gpus);
    if gpus != s.slots {
        let slots = if s.slots_set {
            s.slots.to_string()
        } else {
            UNSET.into()
        };
        let field = "spec.slotsPerWorker";
        let o = Outcome::fail(
            SLOTS,
            format!("{field}: {gpus}"),
            format!("{field}: {slots}"),
        );
        return facts(if s.slots_set { o } else { o.hint("unset") });
    }
    // With runLauncherAsWorker the launcher is a host with `slots` ranks too: it needs the GPUs.
    if let (true, Some(l), Some(lg)) = (s.as_worker, s.launcher, s.launcher_gpus) {
        if lg != gpus {
            let o = Outcome::fail(
                SLOTS,
                format!("{}: {gpus}", limit(l)),
                format!("{GPU}: {lg}"),
            );
            return facts(o.hint("launcher-as-worker").with("launcher_gpus", lg));
        }
    }
    facts(Outcome::pass(SLOTS))
}

fn check_np(s: &Spec, j: &mut Judgement) -> Outcome {
    let expected = s.expected_np();
    let facts = |o: Outcome| {
        let o = o.with("expected_np", expected).with("per_host", s.per_host);
        o.with("hosts", s.hosts).with("slots", s.slots)
    };
    let fail = |found: String, hint: Option<&str>| {
        let o = Outcome::fail(NP, s.np_text(), found);
        facts(match hint {
            Some(h) => o.hint(h),
            None => o,
        })
    };
    if s.worker.is_none() || s.hosts == 0 {
        let found = match s.worker {
            None => s.absent(mpi::WORKER),
            Some(t) if t.replicas_set => format!("{WORKER_REPLICAS}: 0"),
            Some(_) => format!("{WORKER_REPLICAS}: {UNSET}"),
        };
        let o = Outcome::fail(NP, format!("{WORKER_REPLICAS}: ≥ 1"), found);
        return facts(o.hint("no-workers"));
    }
    let m = match &s.launch {
        Launch::Found(f) => &f.mpirun,
        other => return facts(no_mpirun(NP, format!("mpirun {}", s.np_text()), other, s)),
    };
    let (np, per_node) = match (m.np(), m.per_node()) {
        (Ok(np), Ok(pn)) => (np, pn),
        (Err(e), _) | (_, Err(e)) => {
            let written = match &e {
                FlagError::Invalid { flag, value, .. } => format!("{flag} {value}"),
                FlagError::MissingValue { flag } => flag.clone(),
            };
            return fail(written.clone(), Some("invalid")).with("np_raw", written);
        }
    };
    // A count the grader cannot see: a shell variable, or `$(VAR)` without a literal env value.
    if let Some(var) = [&np, &per_node]
        .into_iter()
        .flatten()
        .find(|x| x.known().is_none())
    {
        let raw = var.raw.clone().unwrap_or_default();
        return fail(var.as_written(), Some("not-literal")).with("np_raw", raw);
    }
    match (&np, &per_node) {
        (Some(n), _) if n.known() != Some(&expected) => fail(n.as_written(), None),
        (_, Some(pn)) if pn.known() != Some(&s.per_host) => {
            let per_host = match pn.source.ends_with("map-by") {
                true => format!("ppr:{}:node", s.per_host),
                false => s.per_host.to_string(),
            };
            let o = Outcome::fail(NP, format!("{} {per_host}", pn.source), pn.as_written());
            facts(
                o.hint("per-node")
                    .with("found_per_node", pn.known().unwrap_or(&0)),
            )
        }
        (Some(_), _) | (_, Some(_)) => facts(Outcome::pass(NP)),
        // Open MPI starts one rank per slot: right whenever slotsPerWorker is (its own check).
        (None, None) if s.job.is_open_mpi() => {
            let total = s.slots.saturating_mul(s.hosts);
            let a = Advice::new("implicit-np")
                .with("slots", s.slots)
                .with("hosts", s.hosts);
            j.advise(a.with("total", total));
            facts(Outcome::pass(NP))
        }
        (None, None) => fail(m.launcher.clone(), Some("no-np")),
    }
}

/// No mpirun to judge: no Launcher template, no mpirun in it, or a script the shell refuses.
fn no_mpirun(check: &str, expected: String, launch: &Launch, s: &Spec) -> Outcome {
    use cmdline::ShellProblem::*;
    let (found, hint) = match launch {
        Launch::Shell(e) => {
            let at = match &e.problem {
                UnclosedQuote { quote, line } => format!("{line}: {quote}"),
                UnclosedSubstitution { open, line } => format!("{line}: {open}"),
                RedirectWithoutTarget { op, line } => format!("{line}: {op}"),
                MissingScript { shell } => format!("{shell} -c"),
                TooDeep { limit } => format!("sh -c × {limit}"),
            };
            (format!("{}: {at}", e.container), "shell")
        }
        Launch::NoTemplate if s.launcher.is_none() => (s.absent(mpi::LAUNCHER), "no-mpirun"),
        Launch::NoTemplate => {
            let path = "spec.mpiReplicaSpecs.Launcher.template.spec.containers";
            (format!("{path}: {UNSET}"), "no-mpirun")
        }
        Launch::NoMpirun(command) => (or_unset(command.clone()), "no-mpirun"),
        Launch::Found(f) => (f.mpirun.launcher.clone(), "no-mpirun"),
    };
    Outcome::fail(check, expected, found).hint(hint)
}

fn check_one_launcher(s: &Spec) -> Outcome {
    let Some(launcher) = s.launcher else {
        let expected = "spec.mpiReplicaSpecs.Launcher";
        let o = Outcome::fail(ONE_LAUNCHER, expected, s.absent(mpi::LAUNCHER));
        return o.hint("no-launcher");
    };
    // Unset defaults to 1 (`setDefaultsTypeLauncher`); the operator's validation requires 1.
    if launcher.replicas != 1 {
        let (path, n) = (&launcher.replicas_path, launcher.replicas);
        let o = Outcome::fail(ONE_LAUNCHER, format!("{path}: 1"), format!("{path}: {n}"));
        return o.with("found_replicas", n);
    }
    match violations(launcher).first() {
        Some(v) => rejected(ONE_LAUNCHER, v),
        None => Outcome::pass(ONE_LAUNCHER),
    }
}

fn check_bind_map(s: &Spec) -> Outcome {
    let expected = "-bind-to none -map-by slot";
    let m = match &s.launch {
        Launch::Found(f) => &f.mpirun,
        other => return no_mpirun(BIND_MAP, format!("mpirun {expected}"), other, s),
    };
    let (bind, map) = (m.bind_to(), m.map_by());
    let is = |v: &Option<String>, want: &str| {
        let head = v.as_deref().and_then(|v| v.split(':').next());
        head.is_some_and(|h| h.eq_ignore_ascii_case(want))
    };
    // `slot` (also `slot:PE=1`), or a per-node count (`-N 8`, `--map-by ppr:8:node`): both put
    // consecutive ranks on one host until its share is full (mpirun(1): "-npernode 2 …
    // launches processes 0-1 on node aa and processes 2-3 on node bb").
    let map_ok = is(&map, "slot") || matches!(m.per_node(), Ok(Some(_)));
    if is(&bind, "none") && map_ok {
        return Outcome::pass(BIND_MAP);
    }
    let found_bind = format!("-bind-to {}", bind.as_deref().unwrap_or(UNSET));
    let found_map = format!("-map-by {}", map.as_deref().unwrap_or(UNSET));
    let o = Outcome::fail(BIND_MAP, expected, format!("{found_bind} {found_map}"));
    o.with("found_bind", found_bind)
        .with("found_map", found_map)
}

/// Non-scoring notes about the spec.
fn advise(j: &mut Judgement, s: &Spec, params: &Params) -> Result<(), InputError> {
    let node_gpus = Params::number(params.get("gpus_per_worker"), "gpus_per_worker")?;
    if let (Some(g), Some(n)) = (s.worker_gpus, node_gpus) {
        if g > 0 && g < i64::from(n) {
            j.advise(
                Advice::new("partial-node")
                    .with("gpus", g)
                    .with("node_gpus", n),
            );
        }
    }
    // The operator blanks NVIDIA_VISIBLE_DEVICES in a launcher that is not a worker
    // (`nvidiaDisableEnvVars` in `newLauncherPodTemplate`), so GPUs requested there sit idle.
    if let (false, Some(g)) = (s.as_worker, s.launcher_gpus.filter(|g| *g > 0)) {
        j.advise(Advice::new("launcher-gpu").with("gpus", g));
    }
    // Open MPI's mpirun "will refuse to run as root by default" unless given
    // `--allow-run-as-root` or both OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    // (open-mpi/ompi v4.x `orte/tools/orterun/orterun.1in`, section "Running as root").
    let (true, Launch::Found(f)) = (s.job.is_open_mpi(), &s.launch) else {
        return Ok(());
    };
    let env_ok = |n: &str| f.invocation.env(n) == Some("1") || set_elsewhere(&f.container, n);
    let allowed = f.mpirun.allow_run_as_root()
        || (env_ok("OMPI_ALLOW_RUN_AS_ROOT") && env_ok("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"));
    // The container's runAsUser wins over the pod's; neither: the image decides.
    let pod_user = s
        .launcher
        .and_then(|t| t.spec.security_context.as_ref()?.run_as_user);
    let user = f
        .container
        .security_context
        .as_ref()
        .and_then(|c| c.run_as_user);
    let id = match user.or(pod_user) {
        _ if allowed => return Ok(()),
        Some(0) => "run-as-root",
        None => "maybe-root",
        Some(_) => return Ok(()),
    };
    j.advise(Advice::new(id).with("container", &f.container.name));
    Ok(())
}

/// An environment variable set from a Secret or ConfigMap: present, its value unseen.
fn set_elsewhere(c: &Container, name: &str) -> bool {
    let unread = |_: &str, _: &str| EnvLookup::Unresolved(String::new());
    matches!(
        cmdline::container_env(c, name, &unread),
        EnvLookup::Unresolved(_)
    )
}

/// The mpirun a launcher template runs (read with the kit's shell and mpirun parsers): the
/// first with a process count, else the first one.
fn find_mpirun(t: &PodTemplate) -> Launch {
    let mut found: Vec<Found> = Vec::new();
    for c in &t.spec.containers {
        let invocations = match cmdline::invocations(c) {
            Ok(i) => i,
            Err(e) => return Launch::Shell(e),
        };
        for invocation in invocations {
            if let Some(mpirun) = Mpirun::find(&invocation.expanded) {
                let container = c.clone();
                found.push(Found {
                    mpirun,
                    invocation,
                    container,
                });
            }
        }
    }
    let counted =
        |f: &Found| f.mpirun.np_raw().is_some() || !matches!(f.mpirun.per_node(), Ok(None));
    match found
        .iter()
        .position(counted)
        .or((!found.is_empty()).then_some(0))
    {
        Some(i) => Launch::Found(Box::new(found.swap_remove(i))),
        None => match t.spec.containers.first() {
            Some(c) => Launch::NoMpirun(cmdline::command_line(c, 160)),
            None => Launch::NoTemplate,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// State: what the operator made, found by ownerReferences.

struct State {
    /// The MPIJob has a uid (it was read from a cluster): ownership can be known.
    has_uid: bool,
    /// Host pods not being deleted: the workers, plus the launcher's with
    /// `runLauncherAsWorker`. None when pods could not be read.
    hosts: Option<Vec<PodFacts>>,
    /// The launcher Job and its pods' phases. Outer None: unreadable; inner None: not made yet.
    launcher: Option<Option<(String, Vec<String>)>>,
}

impl State {
    fn gather(
        mpijob: &Obj,
        s: &Spec,
        pods: Option<&[&Obj]>,
        jobs: Option<&[&Obj]>,
    ) -> Result<State, InputError> {
        let facts = |objs: &[&Obj]| -> Result<Vec<PodFacts>, InputError> {
            objs.iter().map(|p| PodFacts::from_obj(p)).collect()
        };
        let has_uid = mpijob.uid().is_some_and(|u| !u.is_empty());
        let (Some(pods), Ok(workers)) = (pods, owned::owned_by(mpijob, pods.unwrap_or_default()))
        else {
            return Ok(State {
                has_uid,
                hosts: None,
                launcher: None,
            });
        };
        // Launcher Job → its pods; a Job being deleted is no longer the launcher.
        let branches = jobs.map(|jobs| owned::owned_two_levels(mpijob, jobs, pods));
        let branches = branches.map(Result::unwrap_or_default);
        let current = branches
            .as_ref()
            .and_then(|b| b.iter().find(|b| !b.terminating));
        let mut hosts = facts(&workers.current)?;
        let mut launcher = branches.as_ref().map(|_| None);
        if let Some(b) = current {
            let pods = facts(&b.children.current)?;
            let unknown = || "Unknown".to_string();
            let phases = pods.iter().map(|p| p.phase.clone().unwrap_or_else(unknown));
            launcher = Some(Some((b.obj.name().to_string(), phases.collect())));
            if s.as_worker {
                hosts.extend(pods);
            }
        }
        Ok(State {
            has_uid,
            hosts: Some(hosts),
            launcher,
        })
    }
}

fn check_spread(s: &Spec, st: &State, conds: &[Condition]) -> Outcome {
    if !st.has_uid {
        return Outcome::skipped(SPREAD, Reason::Message("no-uid".into()));
    }
    if s.workers == 0 {
        let o = Outcome::fail(
            SPREAD,
            format!("{WORKER_REPLICAS}: ≥ 1"),
            format!("{WORKER_REPLICAS}: 0"),
        );
        return o.hint("no-workers");
    }
    let pods = st.hosts.as_deref().unwrap_or_default();
    let finished = [COND_SUCCEEDED, COND_FAILED]
        .iter()
        .any(|c| conditions::is_true(conds, c));
    if pods.is_empty() && finished {
        // cleanPodPolicy Running/All deletes the workers when the job ends.
        return Outcome::skipped(SPREAD, Reason::Message("workers-cleaned".into()));
    }
    let message = |id: &str| Outcome::pending(SPREAD, Reason::Message(id.into()));
    if (pods.len() as i64) < s.hosts {
        let o = message("workers-missing").with("found", pods.len());
        return o.with("expected", s.hosts);
    }
    if let Some(p) = pods.iter().find(|p| p.node.is_none()) {
        let o = match &p.unschedulable_message {
            Some(m) => message("worker-unschedulable").with("scheduler", m),
            None => message("worker-unscheduled"),
        };
        return o.with("pod", &p.name);
    }
    let node = |p: &PodFacts| p.node.clone().unwrap_or_default();
    let placement: Vec<String> = pods
        .iter()
        .map(|p| format!("{} → {}", p.name, node(p)))
        .collect();
    let placement = placement.join(", ");
    let nodes: BTreeSet<String> = pods.iter().map(node).collect();
    let expected = format!("nodes: {}", pods.len());
    if nodes.len() == pods.len() {
        return Outcome::pass(SPREAD).expected_found(expected, placement);
    }
    let found = format!("nodes: {} ({placement})", nodes.len());
    let o = Outcome::fail(SPREAD, expected, found).with("placement", placement);
    o.with("gpus", s.worker_gpus.unwrap_or(0))
}

fn check_running(conds: &[Condition], s: &Spec, st: &State) -> Outcome {
    let expected = "Running=True | Succeeded=True";
    if let Some(c) = conditions::find(conds, COND_FAILED).filter(|c| c.is_true()) {
        let reason = c.reason.clone().unwrap_or_default();
        // The operator's message is the cluster's text: it goes to the hint, quoted.
        let o = Outcome::fail(RUNNING, expected, format!("Failed=True ({reason})"));
        return o
            .with("reason", reason)
            .with("message", c.message.clone().unwrap_or_default());
    }
    for ok in [COND_SUCCEEDED, COND_RUNNING] {
        if conditions::is_true(conds, ok) {
            return Outcome::pass(RUNNING).expected_found(expected, format!("{ok}=True"));
        }
    }
    if conditions::is_true(conds, COND_SUSPENDED) || s.job.suspended() {
        let o = Outcome::fail(RUNNING, expected, "spec.runPolicy.suspend: true");
        return o.hint("suspended");
    }
    // Only Created (or Restarting, or nothing yet): the operator is still bringing it up.
    let message = |id: &str| Outcome::pending(RUNNING, Reason::Message(id.into()));
    let running = st.hosts.as_ref().map(|h| {
        h.iter()
            .filter(|p| p.phase.as_deref() == Some("Running"))
            .count()
    });
    let o = match (&st.launcher, running) {
        (Some(None), Some(r)) => message("waiting-no-launcher").with("running", r),
        (Some(Some((name, phases))), Some(r)) => message("waiting-launcher")
            .with("running", r)
            .with("launcher_job", name)
            .with("launcher_pods", or_unset(phases.join(", "))),
        _ => message("waiting"),
    };
    let conditions = or_unset(conditions::true_types(conds).join(", "));
    o.with("conditions", conditions).with("workers", s.hosts)
}
