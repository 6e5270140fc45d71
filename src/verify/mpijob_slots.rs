//! Lab `mpijob-slots`: an MPIJob `nccl-allreduce` whose `slotsPerWorker`, per-worker GPUs and
//! `mpirun -np` agree, and which the MPI Operator actually runs.
//!
//! Spec checks judge the MPIJob as written (they also run on `--files`). A `kubeflow.org/v1`
//! MPIJob (the quiz's version) is still read: v1 and v2beta1 share `slotsPerWorker` and
//! `mpiReplicaSpecs`, so only `api-v2beta1` fails it and the other checks judge its fields as
//! usual. State checks follow `metadata.ownerReferences` from the MPIJob's uid: worker pods are
//! owned by the MPIJob, the launcher Job by the MPIJob, and the launcher pod by that Job
//! (kubeflow/mpi-operator v0.8.0 `pkg/controller/mpi_job_controller.go`, `newWorker`,
//! `newLauncherJob`). Names and labels are never trusted.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};

use super::views::mpi::{
    MpiJob, ReplicaSpec, API_VERSION, COND_FAILED, COND_RUNNING, COND_SUCCEEDED, COND_SUSPENDED,
    LAUNCHER, LEGACY_API_VERSION, WORKER,
};
use super::views::pods::{limit, request, PodFacts};
use super::{Read, Advice, JudgeCtx, Judgement, Outcome, Params, Reason, Verifier};
use crate::observe::kinds::{JOBS, MPIJOBS, PODS};
use crate::observe::{InputError, Obj};
use crate::profile::instances::GPU;

pub struct MpijobSlots;

// Declared once: reads() plans them and judge() looks them up by the same declaration.
static MPIJOBS_READ: Read = Read::lab(&MPIJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static JOBS_READ: Read = Read::lab(&JOBS);
static READS: &[&Read] = &[&MPIJOBS_READ, &PODS_READ, &JOBS_READ];

/// The MPIJob the task asks for.
const JOB_NAME: &str = "nccl-allreduce";

const API: &str = "api-v2beta1";
const SLOTS: &str = "slots-match-gpus";
const NP: &str = "np-matches";
const ONE_LAUNCHER: &str = "one-launcher";
const BIND_MAP: &str = "bind-map";
const SPREAD: &str = "workers-spread";
const RUNNING: &str = "mpijob-running";
const CHECKS: &[&str] = &[API, SLOTS, NP, ONE_LAUNCHER, BIND_MAP, SPREAD, RUNNING];

/// Worker replicas when unset (`setDefaultsTypeWorker`, v2beta1 `default.go`); the Launcher's is 1.
const DEFAULT_WORKER_REPLICAS: i64 = 0;

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
        let ns = ctx.target.namespace.as_str();
        let mut j = Judgement::default();
        let jobs = match ctx.list(&MPIJOBS_READ) {
            Ok(jobs) => jobs,
            Err(why) => return Ok(Judgement::every(CHECKS, |c| Outcome::unavailable(c, &why))),
        };
        let Some(obj) = jobs.iter().copied().find(|o| o.name() == JOB_NAME) else {
            let others: Vec<&str> = jobs.iter().map(|o| o.name()).collect();
            return Ok(Judgement::every(CHECKS, |c| missing(c, ns, &others)));
        };
        let job = MpiJob::from_obj(obj)?;
        let spec = SpecFacts::of(&job);
        let ev = |o: Outcome| o.with("job", JOB_NAME).with("namespace", ns);

        j.push(ev(check_api(obj)));
        j.push(ev(check_slots(&spec)));
        j.push(ev(check_np(&spec)));
        j.push(ev(check_one_launcher(&spec)));
        j.push(ev(check_bind_map(&spec)));
        advise(&mut j, &spec, ctx.params)?;

        let pods = ctx.list(&PODS_READ);
        let launcher_jobs = ctx.list(&JOBS_READ);
        let state = StateFacts::gather(obj, pods.as_deref().ok(), launcher_jobs.as_deref().ok())?;
        j.push(ev(match &pods {
            Err(why) => Outcome::unavailable(SPREAD, why),
            Ok(_) => check_spread(&job, &spec, &state),
        }));
        j.push(ev(check_running(&job, &spec, &state)));
        Ok(j)
    }
}

/// The MPIJob is not there: every check fails and says what to create.
fn missing(check: &str, ns: &str, others: &[&str]) -> Outcome {
    let found = if others.is_empty() {
        format!("no MPIJob in namespace {ns}")
    } else {
        format!("only MPIJob {}", others.join(", "))
    };
    Outcome::fail(
        check,
        format!("MPIJob {JOB_NAME} ({API_VERSION}) in namespace {ns}"),
        found,
    )
    .hint("missing")
    .with("job", JOB_NAME)
    .with("namespace", ns)
    .with(
        "others",
        if others.is_empty() {
            "-".to_string()
        } else {
            others.join(", ")
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Spec facts: what the MPIJob asks for, computed once for all spec checks.

struct SpecFacts<'a> {
    job: &'a MpiJob,
    slots: i64,
    slots_set: bool,
    worker: Option<&'a ReplicaSpec>,
    /// `Worker.replicas` (unset: 0, as the operator defaults it).
    worker_replicas: i64,
    /// Hosts in the hostfile: the workers, plus the launcher with `runLauncherAsWorker`.
    hosts: i64,
    /// Sum over the Worker template's containers of their `nvidia.com/gpu` limit (None: unset).
    worker_gpus: Option<i64>,
    launcher: Option<&'a ReplicaSpec>,
    launch: Launch,
}

impl<'a> SpecFacts<'a> {
    fn of(job: &'a MpiJob) -> SpecFacts<'a> {
        let (slots, slots_set) = job.slots_per_worker();
        let worker = job.replica(WORKER);
        let worker_replicas = worker
            .map(|w| w.replicas.unwrap_or(DEFAULT_WORKER_REPLICAS))
            .unwrap_or(0);
        let hosts = worker_replicas + i64::from(job.runs_launcher_as_worker());
        let worker_gpus = worker.and_then(ReplicaSpec::pod_spec).and_then(gpu_limit);
        let launcher = job.replica(LAUNCHER);
        let launch = match launcher.and_then(ReplicaSpec::pod_spec) {
            None => Launch::NoLauncher,
            Some(pod) => find_mpirun(pod),
        };
        SpecFacts {
            job,
            slots,
            slots_set,
            worker,
            worker_replicas,
            hosts,
            worker_gpus,
            launcher,
            launch,
        }
    }

    fn expected_np(&self) -> i64 {
        self.slots * self.hosts
    }

    /// `slotsPerWorker 8 × 2 workers`, naming the launcher when it also hosts ranks.
    fn np_formula(&self) -> String {
        let workers = plural(self.worker_replicas, "worker", "workers");
        if self.job.runs_launcher_as_worker() {
            format!("slotsPerWorker {} × ({workers} + the launcher)", self.slots)
        } else {
            format!("slotsPerWorker {} × {workers}", self.slots)
        }
    }

    /// What a missing `Launcher`/`Worker` key looks like, noting a key with the wrong case.
    fn absent(&self, key: &str) -> String {
        match self.job.near_miss_key(key) {
            Some(k) => format!("mpiReplicaSpecs.{k} (keys are case-sensitive: {key})"),
            None => format!("no mpiReplicaSpecs.{key}"),
        }
    }
}

fn plural(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The GPUs one pod of this template gets: the containers' `nvidia.com/gpu` limits (or requests,
/// which must equal them for extended resources). None when no container sets one.
fn gpu_limit(pod: &PodSpec) -> Option<i64> {
    let per: Vec<i64> = pod
        .containers
        .iter()
        .filter_map(|c| limit(c, GPU).or_else(|| request(c, GPU)))
        .collect();
    (!per.is_empty()).then(|| per.iter().sum())
}

// ---------------------------------------------------------------------------------------------
// Spec checks.

fn check_api(obj: &Obj) -> Outcome {
    let found = obj.api_version();
    if found == API_VERSION {
        return Outcome::pass(API);
    }
    let o = Outcome::fail(
        API,
        format!("apiVersion: {API_VERSION}"),
        format!("apiVersion: {found}"),
    )
    .with("found_api", found);
    if found == LEGACY_API_VERSION {
        o.hint("v1")
    } else {
        o
    }
}

fn check_slots(s: &SpecFacts) -> Outcome {
    if s.worker.is_none() {
        return Outcome::fail(
            SLOTS,
            "mpiReplicaSpecs.Worker whose container sets an nvidia.com/gpu limit equal to slotsPerWorker",
            s.absent(WORKER),
        )
        .hint("no-worker");
    }
    let slots_text = if s.slots_set {
        format!("slotsPerWorker {}", s.slots)
    } else {
        format!("slotsPerWorker unset (defaults to {})", s.slots)
    };
    let gpus = match s.worker_gpus {
        Some(g) if g > 0 => g,
        _ => {
            return Outcome::fail(
                SLOTS,
                format!(
                    "an {GPU} limit on the Worker container equal to slotsPerWorker ({})",
                    s.slots
                ),
                format!("{slots_text}, no {GPU} limit on the Worker containers"),
            )
            .hint("no-gpu")
            .with("slots", s.slots)
        }
    };
    if gpus == s.slots {
        return Outcome::pass(SLOTS)
            .with("slots", s.slots)
            .with("gpus", gpus);
    }
    let o = Outcome::fail(
        SLOTS,
        format!("slotsPerWorker {gpus} (= the Worker's {GPU} limit)"),
        format!("{slots_text}, {GPU} {gpus}"),
    )
    .with("slots", s.slots)
    .with("gpus", gpus);
    if s.slots_set {
        o
    } else {
        o.hint("unset")
    }
}

fn check_np(s: &SpecFacts) -> Outcome {
    let expected = s.expected_np();
    let expected_text = format!("-np {expected} ({})", s.np_formula());
    let with_facts = |o: Outcome| {
        o.with("expected_np", expected)
            .with("slots", s.slots)
            .with("workers", s.worker_replicas)
    };
    if s.worker.is_none() || s.hosts == 0 {
        let found = if s.worker.is_none() {
            s.absent(WORKER)
        } else {
            "Worker.replicas 0 (unset defaults to 0)".to_string()
        };
        return with_facts(
            Outcome::fail(NP, "mpiReplicaSpecs.Worker with replicas ≥ 1", found).hint("no-workers"),
        );
    }
    let inv = match &s.launch {
        Launch::Found(inv) => inv,
        other => {
            let expected = format!("mpirun {expected_text} in the Launcher's command or args");
            return with_facts(no_mpirun(NP, expected, other, s));
        }
    };
    let Some(raw) = inv.np() else {
        return with_facts(
            Outcome::fail(NP, expected_text, format!("{} without -np", inv.launcher)).hint("no-np"),
        );
    };
    let Ok(np) = raw.parse::<i64>() else {
        return with_facts(
            Outcome::fail(
                NP,
                expected_text,
                format!("-np {raw} (not a literal number)"),
            )
            .hint("not-literal")
            .with("np_raw", if raw.is_empty() { "(empty)" } else { raw }),
        );
    };
    if np == expected {
        return with_facts(Outcome::pass(NP));
    }
    with_facts(Outcome::fail(NP, expected_text, format!("-np {np}")).with("found_np", np))
}

/// No mpirun to judge: no Launcher, or its command does not run mpirun.
fn no_mpirun(check: &str, expected: String, launch: &Launch, s: &SpecFacts) -> Outcome {
    let found = match launch {
        Launch::NoLauncher if s.launcher.is_none() => s.absent(LAUNCHER),
        Launch::NoLauncher => "mpiReplicaSpecs.Launcher has no pod template".to_string(),
        Launch::NoMpirun { command } if command.is_empty() => {
            "the Launcher container sets no command or args".to_string()
        }
        Launch::NoMpirun { command } => format!("no mpirun in the Launcher command: {command}"),
        Launch::Found(inv) => format!("{} found", inv.launcher),
    };
    Outcome::fail(check, expected, found).hint("no-mpirun")
}

fn check_one_launcher(s: &SpecFacts) -> Outcome {
    let Some(launcher) = s.launcher else {
        return Outcome::fail(
            ONE_LAUNCHER,
            "mpiReplicaSpecs.Launcher with replicas 1",
            s.absent(LAUNCHER),
        )
        .hint("no-launcher");
    };
    // Unset defaults to 1 (`setDefaultsTypeLauncher`); the operator's validation requires 1.
    match launcher.replicas {
        None | Some(1) => Outcome::pass(ONE_LAUNCHER),
        Some(n) => Outcome::fail(
            ONE_LAUNCHER,
            "Launcher.replicas 1",
            format!("Launcher.replicas {n}"),
        )
        .with("found_replicas", n),
    }
}

fn check_bind_map(s: &SpecFacts) -> Outcome {
    let expected = "-bind-to none -map-by slot";
    let inv = match &s.launch {
        Launch::Found(inv) => inv,
        other => return no_mpirun(BIND_MAP, format!("mpirun {expected}"), other, s),
    };
    let bind = inv.bind_to();
    let map = inv.map_by();
    let bind_ok = bind
        .as_deref()
        .is_some_and(|b| b.eq_ignore_ascii_case("none"));
    // `slot`, optionally with modifiers (`slot:PE=2`, `slot:OVERSUBSCRIBE`).
    let map_ok = map.as_deref().is_some_and(|m| {
        m.split(':')
            .next()
            .is_some_and(|p| p.eq_ignore_ascii_case("slot"))
    });
    if bind_ok && map_ok {
        return Outcome::pass(BIND_MAP);
    }
    let bind_text = bind
        .map(|b| format!("-bind-to {b}"))
        .unwrap_or_else(|| "no -bind-to".into());
    let map_text = map
        .map(|m| format!("-map-by {m}"))
        .unwrap_or_else(|| "no -map-by".into());
    Outcome::fail(BIND_MAP, expected, format!("{bind_text}, {map_text}"))
        .with("found_bind", bind_text)
        .with("found_map", map_text)
}

/// Non-scoring notes about the spec.
fn advise(j: &mut Judgement, s: &SpecFacts, params: &Params) -> Result<(), InputError> {
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
    // The operator blanks NVIDIA_VISIBLE_DEVICES in the launcher (`nvidiaDisableEnvVars`), so
    // GPUs requested there are held but never used.
    if let Some(g) = s
        .launcher
        .and_then(ReplicaSpec::pod_spec)
        .and_then(gpu_limit)
    {
        if g > 0 {
            j.advise(Advice::new("launcher-gpu").with("gpus", g));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// State facts: what the operator made, found by ownerReferences.

struct StateFacts {
    /// Worker pods owned by the MPIJob (not being deleted); None when pods could not be read.
    workers: Option<Vec<PodFacts>>,
    /// The launcher Job owned by the MPIJob, with the phases of the pods it owns.
    /// Outer None: Jobs or pods could not be read; inner None: no launcher Job yet.
    launcher: Option<Option<(String, Vec<String>)>>,
    has_uid: bool,
}

impl StateFacts {
    fn gather(
        mpijob: &Obj,
        pods: Option<&[&Obj]>,
        jobs: Option<&[&Obj]>,
    ) -> Result<StateFacts, InputError> {
        let live = |o: &&&Obj| o.value["metadata"]["deletionTimestamp"].is_null();
        let workers = match pods {
            None => None,
            Some(pods) => Some(
                pods.iter()
                    .filter(live)
                    .filter(|p| p.is_owned_by(mpijob))
                    .map(|p| PodFacts::from_obj(p))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let launcher = match (pods, jobs) {
            (Some(pods), Some(jobs)) => match jobs.iter().find(|jb| jb.is_owned_by(mpijob)) {
                None => Some(None),
                Some(jb) => {
                    let phases = pods
                        .iter()
                        .filter(live)
                        .filter(|p| p.is_owned_by(jb))
                        .map(|p| {
                            PodFacts::from_obj(p)
                                .map(|f| f.phase.unwrap_or_else(|| "Unknown".into()))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Some(Some((jb.name().to_string(), phases)))
                }
            },
            _ => None,
        };
        Ok(StateFacts {
            workers,
            launcher,
            has_uid: mpijob.uid().is_some(),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// State checks.

fn check_spread(job: &MpiJob, s: &SpecFacts, st: &StateFacts) -> Outcome {
    if !st.has_uid {
        return Outcome::skipped(SPREAD, Reason::Message("no-uid".into()));
    }
    if s.worker_replicas == 0 {
        return Outcome::fail(
            SPREAD,
            "worker pods on distinct nodes",
            "Worker.replicas 0: no worker pods",
        )
        .hint("no-workers");
    }
    let workers = st.workers.as_deref().unwrap_or_default();
    if workers.is_empty() && job.is_finished() {
        // cleanPodPolicy Running/All deletes the workers when the job ends.
        return Outcome::skipped(SPREAD, Reason::Message("workers-cleaned".into()));
    }
    if (workers.len() as i64) < s.worker_replicas {
        return Outcome::pending(SPREAD, Reason::Message("workers-missing".into()))
            .with("found", workers.len())
            .with("expected", s.worker_replicas);
    }
    if let Some(p) = workers.iter().find(|p| p.node.is_none()) {
        return match &p.unschedulable_message {
            Some(m) => Outcome::pending(SPREAD, Reason::Message("worker-unschedulable".into()))
                .with("pod", &p.name)
                .with("scheduler", m),
            None => Outcome::pending(SPREAD, Reason::Message("worker-unscheduled".into()))
                .with("pod", &p.name),
        };
    }
    let mut by_node: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in workers {
        by_node
            .entry(p.node.as_deref().unwrap_or_default())
            .or_default()
            .push(&p.name);
    }
    let placement = workers
        .iter()
        .map(|p| format!("{} → {}", p.name, p.node.as_deref().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(", ");
    let shared: Vec<String> = by_node
        .iter()
        .filter(|(_, pods)| pods.len() > 1)
        .map(|(node, pods)| format!("{} share {node}", pods.join(" and ")))
        .collect();
    let n = workers.len();
    if shared.is_empty() {
        return Outcome::pass(SPREAD)
            .expected_found(format!("{n} worker pods on {n} nodes"), placement);
    }
    Outcome::fail(
        SPREAD,
        format!("{n} worker pods on {n} different nodes"),
        format!(
            "{} worker pods on {} nodes: {}",
            n,
            by_node.len(),
            shared.join("; ")
        ),
    )
    .with("placement", placement)
    .with("gpus", s.worker_gpus.unwrap_or(0))
}

fn check_running(job: &MpiJob, s: &SpecFacts, st: &StateFacts) -> Outcome {
    let expected = "condition Running or Succeeded = True";
    if let Some(c) = job.condition(COND_FAILED).filter(|c| c.status == "True") {
        let reason = c.reason.clone().unwrap_or_default();
        let message = c.message.clone().unwrap_or_default();
        return Outcome::fail(RUNNING, expected, format!("Failed ({reason}): {message}"))
            .with("reason", reason)
            .with("message", message);
    }
    for ok in [COND_SUCCEEDED, COND_RUNNING] {
        if job.is_true(ok) {
            return Outcome::pass(RUNNING).expected_found(expected, ok);
        }
    }
    if job.is_true(COND_SUSPENDED) || job.suspended() {
        return Outcome::fail(
            RUNNING,
            expected,
            "Suspended (spec.runPolicy.suspend: true)",
        )
        .hint("suspended");
    }
    // Only Created (or Restarting, or nothing yet): the operator is still bringing it up.
    let conditions = job.true_conditions();
    let conditions = if conditions.is_empty() {
        "none yet".to_string()
    } else {
        conditions.join(", ")
    };
    let running = st.workers.as_ref().map(|w| {
        w.iter()
            .filter(|p| p.phase.as_deref() == Some("Running"))
            .count()
    });
    let o = match (&st.launcher, running) {
        (Some(None), Some(r)) => {
            Outcome::pending(RUNNING, Reason::Message("waiting-no-launcher".into()))
                .with("running", r)
        }
        (Some(Some((name, phases))), Some(r)) => {
            let phases = if phases.is_empty() {
                "none yet".to_string()
            } else {
                phases.join(", ")
            };
            Outcome::pending(RUNNING, Reason::Message("waiting-launcher".into()))
                .with("running", r)
                .with("launcher_job", name)
                .with("launcher_pods", phases)
        }
        _ => Outcome::pending(RUNNING, Reason::Message("waiting".into())),
    };
    o.with("conditions", conditions)
        .with("workers", s.worker_replicas)
}

// ---------------------------------------------------------------------------------------------
// Reading the launcher's command line.

/// What the Launcher runs.
enum Launch {
    /// No Launcher spec, or it has no pod template.
    NoLauncher,
    /// No container runs mpirun; the first container's command line as written.
    NoMpirun {
        command: String,
    },
    Found(Invocation),
}

/// One `mpirun` (or `mpiexec`) call and its options, up to the application.
struct Invocation {
    launcher: String,
    options: Vec<MpiOption>,
}

struct MpiOption {
    /// Without leading dashes: `np`, `bind-to`, `mca`.
    name: String,
    values: Vec<String>,
}

/// Program names that start MPI jobs (Open MPI `mpirun`/`mpiexec`/`orterun`/`prterun`, MPICH and
/// Intel MPI Hydra `mpiexec`/`mpiexec.hydra`).
const MPI_LAUNCHERS: &[&str] = &["mpirun", "mpiexec", "mpiexec.hydra", "orterun", "prterun"];
const SHELLS: &[&str] = &["sh", "bash", "dash", "ash", "zsh", "ksh"];
/// Options taking two values (`--mca NAME VALUE`; Hydra `-genv NAME VALUE`).
const TWO_VALUES: &[&str] = &["mca", "gmca", "prtemca", "pmixmca", "genv", "env"];
/// Options taking one value (Open MPI 4/5 mpirun(1), MPICH Hydra `mpiexec -h`). Unknown options
/// are read as flags; the first word that is not an option or a value is the application.
const ONE_VALUE: &[&str] = &[
    "np",
    "n",
    "c",
    "N",
    "npernode",
    "npersocket",
    "ppn",
    "x",
    "bind-to",
    "map-by",
    "rank-by",
    "hostfile",
    "machinefile",
    "default-hostfile",
    "f",
    "H",
    "host",
    "hosts",
    "wdir",
    "wd",
    "prefix",
    "path",
    "output-filename",
    "report-uri",
    "rankfile",
    "rf",
    "am",
    "tune",
    "app",
    "cpus-per-proc",
    "cpus-per-rank",
    "cpu-set",
    "timeout",
    "launcher",
    "bootstrap",
    "iface",
    "genvlist",
    "envlist",
    "configfile",
    "stdin",
    "preload-files",
    "personality",
    "output",
];

impl Invocation {
    fn parse(launcher: &str, after: &[String]) -> Invocation {
        let mut options = Vec::new();
        let mut i = 0;
        while i < after.len() {
            let word = &after[i];
            if word == "--" {
                break;
            }
            let Some((name, inline)) = split_flag(word) else {
                break;
            };
            let takes = if inline.is_some() {
                0
            } else if TWO_VALUES.contains(&name) {
                2
            } else if ONE_VALUE.contains(&name) {
                1
            } else {
                0
            };
            let end = (i + 1 + takes).min(after.len());
            let mut values: Vec<String> = inline.map(str::to_string).into_iter().collect();
            values.extend(after[i + 1..end].iter().cloned());
            options.push(MpiOption {
                name: name.to_string(),
                values,
            });
            i = end;
        }
        Invocation {
            launcher: launcher.to_string(),
            options,
        }
    }

    /// The first value of the first option with one of these names.
    fn value(&self, names: &[&str]) -> Option<&str> {
        self.options
            .iter()
            .find(|o| names.contains(&o.name.as_str()))
            .map(|o| o.values.first().map(String::as_str).unwrap_or_default())
    }

    /// `-np N`, `-n N`, `--np N`, `--n N`, `-c N` and the `=N` forms (Open MPI synonyms).
    fn np(&self) -> Option<&str> {
        self.value(&["np", "n", "c"])
    }

    fn bind_to(&self) -> Option<String> {
        if let Some(v) = self.value(&["bind-to"]) {
            return Some(v.to_string());
        }
        self.options
            .iter()
            .any(|o| o.name == "bind-to-none")
            .then(|| "none".to_string())
    }

    fn map_by(&self) -> Option<String> {
        if let Some(v) = self.value(&["map-by"]) {
            return Some(v.to_string());
        }
        // Open MPI 4's `--byslot` is `--map-by slot`.
        self.options
            .iter()
            .any(|o| o.name == "byslot")
            .then(|| "slot".to_string())
    }
}

/// `-np=16` → (`np`, Some(`16`)); `--bind-to` → (`bind-to`, None); `foo` → None.
fn split_flag(word: &str) -> Option<(&str, Option<&str>)> {
    let name = word.strip_prefix("--").or_else(|| word.strip_prefix('-'))?;
    if name.is_empty() {
        return None;
    }
    Some(match name.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (name, None),
    })
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Finds the mpirun a launcher pod runs: the first invocation with `-np`, else the first one.
fn find_mpirun(pod: &PodSpec) -> Launch {
    let mut found: Vec<Invocation> = Vec::new();
    for c in &pod.containers {
        for command in commands_of(c) {
            if let Some(i) = command
                .iter()
                .position(|w| MPI_LAUNCHERS.contains(&basename(w)))
            {
                found.push(Invocation::parse(&command[i], &command[i + 1..]));
            }
        }
    }
    if found.is_empty() {
        let command = pod
            .containers
            .first()
            .map(raw_command_line)
            .unwrap_or_default();
        return Launch::NoMpirun { command };
    }
    let pick = found.iter().position(|inv| inv.np().is_some()).unwrap_or(0);
    Launch::Found(found.swap_remove(pick))
}

/// `command` + `args` as written, for messages (shortened).
fn raw_command_line(c: &Container) -> String {
    let words: Vec<&str> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(String::as_str)
        .collect();
    let line = words.join(" ");
    if line.chars().count() > 160 {
        format!("{}…", line.chars().take(160).collect::<String>())
    } else {
        line
    }
}

/// The commands a container runs: `command` + `args` after Kubernetes' `$(VAR)` expansion, split
/// into the commands of a `sh -c '…'` script when the container runs a shell.
fn commands_of(c: &Container) -> Vec<Vec<String>> {
    let env: BTreeMap<&str, &str> = c
        .env
        .iter()
        .flatten()
        .filter_map(|e| e.value.as_deref().map(|v| (e.name.as_str(), v)))
        .collect();
    let mut words: Vec<String> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(|w| expand(w, &env))
        .collect();
    // `env [-i] [NAME=value…] cmd …` runs cmd.
    if words.first().is_some_and(|w| basename(w) == "env") {
        let skip = 1 + words[1..]
            .iter()
            .take_while(|w| w.starts_with('-') || w.contains('='))
            .count();
        words.drain(..skip.min(words.len()));
    }
    if words.first().is_some_and(|w| SHELLS.contains(&basename(w))) {
        // `sh -c SCRIPT`, also combined flags such as `bash -lc` or `sh -ec`.
        let flag = words[1..]
            .iter()
            .position(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'));
        if let Some(script) = flag.and_then(|f| words.get(f + 2)) {
            return shell_commands(script);
        }
    }
    vec![words]
}

/// Kubernetes' expansion of `command`/`args` (kubelet `third_party/forked/golang/expansion`):
/// `$$` is a literal `$`, `$(NAME)` becomes NAME's value when the container defines it, and
/// anything else stays as written. Only literal `env[].value`s are known here; a `valueFrom`
/// variable stays unexpanded (and so cannot be verified).
fn expand(s: &str, env: &BTreeMap<&str, &str>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
        } else if let Some((name, r)) = after.strip_prefix('(').and_then(|a| a.split_once(')')) {
            match env.get(name) {
                Some(v) => out.push_str(v),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = r;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The simple commands of a shell script: words with quotes and backslashes resolved, split at
/// `;`, `&`, `|` and newlines, comments dropped. Enough to find mpirun in `sh -c '…'`; it does
/// no expansion (a `$NP` stays `$NP`).
fn shell_commands(script: &str) -> Vec<Vec<String>> {
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut command: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, command: &mut Vec<String>| {
        if *in_word {
            command.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => match chars.peek().copied() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => {
                                word.push(n);
                                chars.next();
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => word.push('\\'),
                        },
                        _ => word.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    in_word = true;
                    word.push(n);
                }
            },
            '#' if !in_word => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            ';' | '&' | '|' | '\n' => {
                end_word(&mut word, &mut in_word, &mut command);
                if !command.is_empty() {
                    commands.push(std::mem::take(&mut command));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut command),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut command);
    if !command.is_empty() {
        commands.push(command);
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<String> {
        ws.iter().map(|w| w.to_string()).collect()
    }

    fn container(command: &[&str], args: &[&str], env: &[(&str, &str)]) -> Container {
        let v = serde_json::json!({
            "name": "launcher",
            "command": command,
            "args": args,
            "env": env.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
        });
        serde_json::from_value(v).unwrap()
    }

    fn launch_of(c: Container) -> Invocation {
        let pod = PodSpec {
            containers: vec![c],
            ..Default::default()
        };
        match find_mpirun(&pod) {
            Launch::Found(inv) => inv,
            _ => panic!("no mpirun found"),
        }
    }

    #[test]
    fn reads_np_in_every_spelling() {
        for form in [
            &["-np", "16"][..],
            &["-n", "16"],
            &["--np", "16"],
            &["--n", "16"],
            &["-np=16"],
            &["--np=16"],
            &["--n=16"],
            &["-c", "16"],
        ] {
            let mut args = words(&["--allow-run-as-root"]);
            args.extend(words(form));
            args.extend(words(&["/app", "-n", "99"]));
            let inv = Invocation::parse("mpirun", &args);
            assert_eq!(inv.np(), Some("16"), "{form:?}");
        }
    }

    #[test]
    fn stops_at_the_application_so_its_flags_are_not_read() {
        // all_reduce_perf's own `-n 20` (iterations) must not be taken for -np.
        let inv = Invocation::parse(
            "mpirun",
            &words(&[
                "-x",
                "NCCL_DEBUG=INFO",
                "--mca",
                "pml",
                "ob1",
                "/opt/nccl-tests/build/all_reduce_perf",
                "-n",
                "20",
            ]),
        );
        assert_eq!(inv.np(), None);
        assert_eq!(inv.options.len(), 2);
    }

    #[test]
    fn finds_mpirun_in_a_shell_script() {
        let c = container(
            &["/bin/sh", "-c"],
            &["set -e; echo start && /opt/amazon/openmpi/bin/mpirun --np 16 -bind-to none -map-by slot:PE=1 'python' train.py # done"],
            &[],
        );
        let inv = launch_of(c);
        assert_eq!(inv.launcher, "/opt/amazon/openmpi/bin/mpirun");
        assert_eq!(inv.np(), Some("16"));
        assert_eq!(inv.bind_to().as_deref(), Some("none"));
        assert_eq!(inv.map_by().as_deref(), Some("slot:PE=1"));
    }

    #[test]
    fn finds_mpirun_in_bash_lc_with_quotes_and_continuations() {
        let c = container(
            &[
                "bash",
                "-lc",
                "mpirun \\\n  -np \"16\" \\\n  --bind-to=none --map-by=slot ./pi",
            ],
            &[],
            &[],
        );
        let inv = launch_of(c);
        assert_eq!(inv.np(), Some("16"));
        assert_eq!(inv.bind_to().as_deref(), Some("none"));
        assert_eq!(inv.map_by().as_deref(), Some("slot"));
    }

    #[test]
    fn expands_kubernetes_variables_from_literal_env_only() {
        let env: BTreeMap<&str, &str> = [("NP", "16")].into_iter().collect();
        assert_eq!(expand("$(NP)", &env), "16");
        assert_eq!(expand("$$(NP)", &env), "$(NP)");
        assert_eq!(expand("$(OTHER)", &env), "$(OTHER)");
        assert_eq!(expand("a$b", &env), "a$b");
        let inv = launch_of(container(
            &["mpirun"],
            &["-np", "$(NP)", "/app"],
            &[("NP", "16")],
        ));
        assert_eq!(inv.np(), Some("16"));
        let inv = launch_of(container(&["mpirun"], &["-np", "$(NP)", "/app"], &[]));
        assert_eq!(inv.np(), Some("$(NP)"));
    }

    #[test]
    fn prefers_the_invocation_with_np() {
        let inv = launch_of(container(
            &["sh", "-c", "mpirun --version; mpirun -n 8 ./app"],
            &[],
            &[],
        ));
        assert_eq!(inv.np(), Some("8"));
    }

    #[test]
    fn no_mpirun_reports_the_command() {
        let pod = PodSpec {
            containers: vec![container(&["python"], &["train.py"], &[])],
            ..Default::default()
        };
        match find_mpirun(&pod) {
            Launch::NoMpirun { command } => assert_eq!(command, "python train.py"),
            _ => panic!("expected no mpirun"),
        }
    }
}
