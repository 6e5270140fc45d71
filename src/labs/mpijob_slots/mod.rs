//! Lab `mpijob-slots`: an MPIJob `nccl-allreduce` whose hosts each run one MPI rank per GPU
//! (`slotsPerWorker` = the GPUs of a worker), whose `mpirun` starts that many ranks on every
//! host, and which the MPI Operator actually runs.
//!
//! The concept, not one layout: the operator writes one hostfile line per host with
//! `slots=<slotsPerWorker>`, the launcher included with `runLauncherAsWorker`
//! (kubeflow/mpi-operator v0.8.0 `pkg/controller/mpi_job_controller.go`, `newConfigMap`), so the
//! ranks are `slotsPerWorker × hosts`. mpirun may say so with `-np`/`-n`/`--np`, with a per-node
//! count (`-N`, `--npernode`, `--map-by ppr:N:node`), or, for Open MPI, not at all: "If no value
//! is provided for the number of copies to execute …, Open MPI will automatically execute a copy
//! of the program on each process slot" (open-mpi/ompi v4.1.8 `orte/tools/orterun/orterun.1in`,
//! `-np`).
//! The right per-host count is the worker's GPUs: when `slotsPerWorker` disagrees with them only
//! the slots check fails, and mpirun's count is judged against the GPUs.
//!
//! `bind-map` takes the policies however Open MPI reads them (options, `--mca`, `OMPI_MCA_*`).
//! State checks follow ownerReferences from the MPIJob's uid, never names or labels (kit
//! `mpi_launcher`).

mod mpi_launcher;

use std::collections::BTreeSet;

use crate::facts::instances::{self, GPU, INSTANCE_TYPE_LABEL};
use crate::observe::kinds::{JOBS, MPIJOBS, PODS};
use crate::observe::InputError;
use crate::verify::kit::cmdline::Mpirun;
use crate::verify::kit::k8s::conditions::{self, Condition};
use crate::verify::kit::k8s::placement::{allowed_values, Allowed};
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::version;
use crate::verify::kit::k8s::workload::{PodTemplate, Workload};
use crate::verify::kit::nodes::capacity;
use crate::verify::kit::nodes::devices;
use crate::verify::kit::training::parallel::flag_written;
use crate::verify::views::kubeflow::{COND_FAILED, COND_RUNNING, COND_SUCCEEDED, COND_SUSPENDED};
use crate::verify::views::mpi::{self, MpiJob};
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Verifier};
use mpi_launcher::{Found, LauncherMpirun, MpiPods};

pub struct MpijobSlots;

static MPIJOBS_READ: Read = Read::lab(&MPIJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static JOBS_READ: Read = Read::lab(&JOBS);
static READS: &[&Read] = &[&MPIJOBS_READ, &PODS_READ, &JOBS_READ];

const JOB_NAME: &str = "nccl-allreduce";
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
const LAUNCHER_CONTAINERS: &str = "spec.mpiReplicaSpecs.Launcher.template.spec.containers";

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
        let state = MpiPods::of(obj, s.as_worker, pods.as_deref().ok(), jobs.as_deref().ok())?;
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
    Some(s)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNSET.into())
}

// ---------------------------------------------------------------------------------------------
// What the MPIJob asks for, computed once for all spec checks.

struct Spec<'a> {
    w: &'a Workload<'a>,
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
    /// What the Launcher runs (`mpi_launcher`); None without a Launcher.
    launch: Option<LauncherMpirun>,
}

impl<'a> Spec<'a> {
    fn of(w: &'a Workload<'a>, job: &'a MpiJob) -> Result<Spec<'a>, InputError> {
        let (slots, slots_set) = job.slots_per_worker();
        let (worker, launcher) = (w.template(mpi::WORKER), w.template(mpi::LAUNCHER));
        // None when the API server refuses the template's resources (its own fail).
        let gpus = |t: Option<&PodTemplate>| match t {
            Some(t) if resources::validate_pod_spec(&t.spec, &t.path).is_empty() => {
                let n = resources::pod_count(&t.spec, GPU);
                n.map(Some)
                    .map_err(|e| w.obj.field_error(t.path.clone(), e))
            }
            _ => Ok(None),
        };
        let worker_gpus = gpus(worker)?;
        let workers = worker.map_or(0, |t| t.replicas);
        let as_worker = job.runs_launcher_as_worker();
        Ok(Spec {
            w,
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
            launch: launcher.map(mpi_launcher::find),
        })
    }

    /// Per-host ranks × hostfile lines: kubeflow/mpi-operator v0.8.0 `mpi_job_controller.go`
    /// `newConfigMap` writes one line per worker, plus the launcher with `runLauncherAsWorker`.
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
        let (np, per_host) = (self.expected_np(), self.per_host);
        format!("-np {np} ({basis} {per_host} × {hosts})")
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

/// The API server's first refusal of a template's container resources (it refuses the pods the
/// operator would make from it), as a fail (kit `devices::refused`).
fn refused(check: &str, s: &Spec, t: &PodTemplate) -> Option<Outcome> {
    let v = resources::validate_pod_spec(&t.spec, &t.path)
        .into_iter()
        .next()?;
    Some(devices::refused(check, s.w, &v).hint("api-rejects"))
}

/// The mpirun the Launcher runs, or the fail of `check` that says why there is none.
fn mpirun<'s>(check: &str, expected: &str, s: &'s Spec) -> Result<&'s Found, Box<Outcome>> {
    let (found, hint) = match &s.launch {
        Some(LauncherMpirun::Found(f)) => return Ok(f),
        None => (s.absent(mpi::LAUNCHER), "no-mpirun"),
        Some(LauncherMpirun::Shell(e)) => (mpi_launcher::shell_error_at(e), "shell"),
        Some(LauncherMpirun::NoContainer) => {
            (format!("{LAUNCHER_CONTAINERS}: {UNSET}"), "no-mpirun")
        }
        Some(LauncherMpirun::NoMpirun(command)) => (or_unset(command.clone()), "no-mpirun"),
    };
    let o = Outcome::fail(check, format!("mpirun {expected}"), found);
    Err(Box::new(o.hint(hint)))
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn check_api(w: &Workload) -> Outcome {
    match version::unserved(API, w.obj, &MPIJOBS.api_version()) {
        None => Outcome::pass(API),
        Some(o) if w.api_version() == mpi::LEGACY_API_VERSION => o.hint("v1"),
        Some(o) => o,
    }
}

fn check_slots(s: &Spec) -> Outcome {
    let Some(worker) = s.worker else {
        let o = Outcome::fail(SLOTS, "spec.mpiReplicaSpecs.Worker", s.absent(mpi::WORKER));
        return o.hint("no-worker");
    };
    if let Some(o) = refused(SLOTS, s, worker) {
        return o;
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
    let m = match mpirun(NP, &s.np_text(), s) {
        Ok(f) => &f.mpirun,
        Err(o) => return facts(*o),
    };
    let (np, per_node) = match (m.np(), m.per_node()) {
        (Ok(np), Ok(pn)) => (np, pn),
        (Err(e), _) | (_, Err(e)) => {
            let written = flag_written(&e);
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
            let per_host = if pn.source.ends_with("map-by") {
                format!("ppr:{}:node", s.per_host)
            } else {
                s.per_host.to_string()
            };
            let o = Outcome::fail(NP, format!("{} {per_host}", pn.source), pn.as_written());
            facts(
                o.hint("per-node")
                    .with("found_per_node", pn.known().unwrap_or(&0)),
            )
        }
        (Some(_), _) | (_, Some(_)) => facts(Outcome::pass(NP)),
        // Open MPI starts one rank per slot: right whenever slotsPerWorker is (its own check).
        // Open MPI finds the hostfile through `OMPI_MCA_orte_default_hostfile`, which
        // mpi-operator v0.8.0 sets (`mpi_job_controller.go`, `ompiEnvVars`).
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

fn check_one_launcher(s: &Spec) -> Outcome {
    let Some(launcher) = s.launcher else {
        let expected = "spec.mpiReplicaSpecs.Launcher";
        let o = Outcome::fail(ONE_LAUNCHER, expected, s.absent(mpi::LAUNCHER));
        return o.hint("no-launcher");
    };
    // Unset defaults to 1 (`setDefaultsTypeLauncher`); the operator's validation requires 1
    // (mpi-operator v0.8.0 `pkg/apis/kubeflow/v2beta1/default.go`;
    // `pkg/apis/kubeflow/validation/validation.go` `validateLauncherReplicaSpec`).
    if launcher.replicas != 1 {
        let (path, n) = (&launcher.replicas_path, launcher.replicas);
        let o = Outcome::fail(ONE_LAUNCHER, format!("{path}: 1"), format!("{path}: {n}"));
        return o.with("found_replicas", n);
    }
    refused(ONE_LAUNCHER, s, launcher).unwrap_or_else(|| Outcome::pass(ONE_LAUNCHER))
}

/// Ranks unpinned and each host's slots filled in order, however written (`mpi_launcher`:
/// options, `--mca` or `OMPI_MCA_*`).
fn check_bind_map(s: &Spec) -> Outcome {
    let expected = "-bind-to none -map-by slot";
    let f = match mpirun(BIND_MAP, expected, s) {
        Ok(f) => f,
        Err(o) => return *o,
    };
    let (bind, map) = (f.binding(), f.mapping());
    let is = |p: &Option<mpi_launcher::Policy>, want| p.as_ref().is_some_and(|p| p.is(want));
    // `slot` (also `slot:PE=1`), or a per-node count (`-N 8`, `--map-by ppr:8:node`): both put
    // consecutive ranks on one host until its share is full (mpirun(1): "-npernode 2 …
    // launches processes 0-1 on node aa and processes 2-3 on node bb"; open-mpi/ompi v4.1.8
    // `orte/tools/orterun/orterun.1in`, "Specifying Number of Processes").
    let map_ok = is(&map, "slot") || matches!(f.mpirun.per_node(), Ok(Some(_)));
    if is(&bind, "none") && map_ok {
        return Outcome::pass(BIND_MAP);
    }
    let written = |p: Option<mpi_launcher::Policy>, option: &str| {
        p.map_or(format!("{option} {UNSET}"), |p| p.written())
    };
    let (found_bind, found_map) = (written(bind, "-bind-to"), written(map, "-map-by"));
    let o = Outcome::fail(BIND_MAP, expected, format!("{found_bind} {found_map}"));
    o.with("found_bind", found_bind)
        .with("found_map", found_map)
}

/// What the worker template's own placement says about its node's GPUs.
enum Pinned {
    /// Every instance type it allows is in trainlab's table, all with this many GPUs.
    Known(u32),
    /// It pins instance types trainlab does not know (or ones that differ in GPUs).
    Unknown,
    /// It does not limit the instance type: the lab's `gpus_per_worker` stands for the node.
    Free,
}

fn pinned_node_gpus(t: &PodTemplate) -> Pinned {
    let Allowed::Only(types) = allowed_values(&t.spec, INSTANCE_TYPE_LABEL) else {
        return Pinned::Free;
    };
    let counts: BTreeSet<Option<u32>> = types
        .iter()
        .map(|n| instances::lookup(n).map(|i| i.gpus))
        .collect();
    match counts.into_iter().collect::<Vec<_>>()[..] {
        [Some(n)] if n > 0 => Pinned::Known(n),
        _ => Pinned::Unknown,
    }
}

/// Non-scoring notes about the spec.
fn advise(j: &mut Judgement, s: &Spec, params: &Params) -> Result<(), InputError> {
    let node_gpus = match s.worker.map(pinned_node_gpus) {
        Some(Pinned::Known(n)) => Some(n),
        // A node trainlab cannot size (a GB200 tray has 4 GPUs, not the lab's 8): say nothing.
        Some(Pinned::Unknown) => None,
        Some(Pinned::Free) | None => {
            Params::number(params.get("gpus_per_worker"), "gpus_per_worker")?
        }
    };
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
    // (`nvidiaDisableEnvVars` in `newLauncherPodTemplate`, mpi-operator v0.8.0
    // `pkg/controller/mpi_job_controller.go`), so GPUs requested there sit idle.
    if let (false, Some(g)) = (s.as_worker, s.launcher_gpus.filter(|g| *g > 0)) {
        j.advise(Advice::new("launcher-gpu").with("gpus", g));
    }
    if let (true, Some(LauncherMpirun::Found(f))) = (s.job.is_open_mpi(), &s.launch) {
        advise_ssh_env(j, f, params);
    }
    // Open MPI's mpirun refuses to run as root unless allowed (`mpi_launcher`).
    let (true, Some(LauncherMpirun::Found(f)), Some(t)) =
        (s.job.is_open_mpi(), &s.launch, s.launcher)
    else {
        return Ok(());
    };
    let id = match f.run_as_user(t) {
        _ if f.root_allowed() => return Ok(()),
        Some(0) => "run-as-root",
        None => "maybe-root",
        Some(_) => return Ok(()),
    };
    j.advise(Advice::new(id).with("container", &f.container.name));
    Ok(())
}

/// Ranks that mpirun starts on the workers over ssh get sshd's environment, not the image's
/// `ENV` (Open MPI mpirun(1), "Remote Execution"): what the profile's image needs there is what
/// the profile's own `mpirun` parameter passes, `-x PATH -x LD_LIBRARY_PATH` and an absolute
/// launcher (= `--prefix`) on EKS, as AWS's nccl-tests MPIJob for EKS does
/// (aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml).
fn advise_ssh_env(j: &mut Judgement, f: &Found, params: &Params) {
    let Some(want) = params.get("mpirun").and_then(profile_mpirun) else {
        return;
    };
    let missing: Vec<String> = ["PATH", "LD_LIBRARY_PATH"]
        .into_iter()
        .filter(|n| want.export(n).is_some() && !f.forwards(n))
        .map(|n| format!("-x {n}"))
        .collect();
    if !missing.is_empty() {
        j.advise(Advice::new("ssh-env").with("missing", missing.join(" ")));
    }
    if let (Some(prefix), None) = (want.prefix(), f.mpirun.prefix()) {
        let a = Advice::new("mpirun-prefix").with("launcher", &f.mpirun.launcher);
        j.advise(a.with("path", &want.launcher).with("prefix", prefix));
    }
}

/// The profile's `mpirun` parameter (`/opt/amazon/openmpi/bin/mpirun --allow-run-as-root -x
/// PATH …`) as an mpirun line.
fn profile_mpirun(line: &str) -> Option<Mpirun> {
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    Mpirun::parse(&words)
}

// ---------------------------------------------------------------------------------------------
// State: what the operator made, found by ownerReferences (`mpi_launcher::MpiPods`).

fn check_spread(s: &Spec, st: &MpiPods, conds: &[Condition]) -> Outcome {
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
    let bound = pods
        .iter()
        .map(|p| (&*p.name, p.node.as_deref().unwrap_or("")));
    let (placement, nodes) = capacity::placement(bound);
    let expected = format!("nodes: {}", pods.len());
    if nodes == pods.len() {
        return Outcome::pass(SPREAD).expected_found(expected, placement);
    }
    let found = format!("nodes: {nodes} ({placement})");
    let o = Outcome::fail(SPREAD, expected, found).with("placement", placement);
    o.with("gpus", s.worker_gpus.unwrap_or(0))
}

fn check_running(conds: &[Condition], s: &Spec, st: &MpiPods) -> Outcome {
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
