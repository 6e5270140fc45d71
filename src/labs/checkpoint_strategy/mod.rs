//! Lab `checkpoint-strategy`: a batch/v1 Job `ckpt-llm` whose Hugging Face `TrainingArguments`
//! save a checkpoint every N steps, keep the 3–5 most recent, and write them under
//! `--output_dir` on a PersistentVolumeClaim, so a restarted pod finds them.
//!
//! Spec checks read the training container's command line with the kit (`HfTrainingArgs`,
//! found through shells and launchers), and follow `--output_dir` through the container's volume
//! mounts to the volume it lies on. State checks read the claim (`status.phase`, and the
//! StorageClasses when it waits) and follow the Job's uid to its pods.
//!
//! Rules (transformers 5.24): `save_strategy` defaults to `steps` and `save_steps` to 500
//! (`training_args.py`); a `save_steps` below 1 is a ratio of the total steps, rounded up
//! (`trainer.py` `_inner_training_loop`: `math.ceil(max_steps * args.save_steps)`); a save
//! happens when `save_steps > 0` and the step is a multiple of it, and once more at
//! `max_steps` (`trainer_callback.py` `DefaultFlowCallback.on_step_end`); `save_total_limit`
//! unset or ≤ 0 keeps every checkpoint (`trainer.py` `_rotate_checkpoints`). Without
//! `--output_dir` transformers 5 writes to `trainer_output` in the working directory.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use crate::observe::kinds::{PODS, PVCS, STORAGECLASSES};
use crate::observe::InputError;
use crate::verify::kit::cmdline::{
    command_line, HfTrainingArgs, Known, SaveSteps, SaveStrategy, Setting,
};
use crate::verify::kit::k8s::mounts::{absolute, claim_names, volume_at, volume_kind};
use crate::verify::kit::k8s::workload::PodTemplate;
use crate::verify::kit::training::job::{
    self, bad_flag, find_training_job, first_rejection, main_container, training_command,
    training_template, TrainingJob,
};
use crate::verify::kit::training::job_pods;
use crate::verify::kit::training::trainjob::{trainjob_reads, JOBS_READ, TRAINJOBS_READ};
use crate::verify::{Advice, JudgeCtx, Judgement, Outcome, Read, Reason, Verifier};

pub struct CheckpointStrategy;

static PODS_READ: Read = Read::lab(&PODS);
static PVCS_READ: Read = Read::lab(&PVCS);
static STORAGECLASSES_READ: Read = Read::cluster(&STORAGECLASSES);
/// A batch/v1 Job or a TrainJob (with the runtimes it may name and the JobSet between it and
/// its Jobs), the claims and their classes.
static READS: &[&Read] = trainjob_reads![jobs first; &PODS_READ, &PVCS_READ, &STORAGECLASSES_READ];

const JOB: &str = "ckpt-llm";
const EVERY_N: &str = "save-every-n-steps";
const KEEP: &str = "keep-recent";
const DURABLE: &str = "durable-output";
const BOUND: &str = "pvc-bound";
const RUNNING: &str = "pods-running";
const CHECKS: &[&str] = &[EVERY_N, KEEP, DURABLE, BOUND, RUNNING];

/// `TrainingArguments.save_steps` default.
const DEFAULT_SAVE_STEPS: i64 = 500;
/// `TrainingArguments.output_dir` default in transformers 5 (relative to the working directory).
const DEFAULT_OUTPUT_DIR: &str = "trainer_output";
/// How many recent checkpoints the lab keeps.
const KEEP_MIN: i64 = 3;
const KEEP_MAX: i64 = 5;
/// The annotation that makes a StorageClass the default for claims without a class
/// (kubernetes.io/docs/concepts/storage/storage-classes, "Default StorageClass").
const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";

impl Verifier for CheckpointStrategy {
    fn lab_id(&self) -> &'static str {
        "checkpoint-strategy"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let jobs = [&JOBS_READ, &TRAINJOBS_READ];
        let w = match find_training_job(ctx, JOB, &jobs, EVERY_N, CHECKS)? {
            TrainingJob::Found(w) => w,
            TrainingJob::Absent(j) => return Ok(j),
        };
        let obj = w.obj;
        let Some(t) = training_template(&w) else {
            return Err(obj.field_error("spec.template", "a Job needs a pod template"));
        };
        let ns = ctx.target.namespace.as_str();
        let kind = w.kind.kind();
        let ev = |o: Outcome| {
            o.with("job", JOB)
                .with("namespace", ns)
                .with("kind", kind)
                .with("resource", kind.to_ascii_lowercase())
        };
        let mut j = Judgement::default();

        let read = read_args(t);
        match &read {
            Ok(a) => {
                j.push(ev(every_n(a)));
                j.push(ev(keep_recent(a)));
            }
            Err(o) => {
                for c in [EVERY_N, KEEP] {
                    j.push(ev(as_check((**o).clone(), c)));
                }
            }
        }
        let output = read.as_ref().ok().and_then(|a| output_on(t, a));
        let durable = match (first_rejection(&w), &read, &output) {
            (Some(r), _, _) => r.outcome(DURABLE),
            (None, Err(o), _) => as_check((**o).clone(), DURABLE),
            (None, Ok(_), Some(on)) => durable(on),
            (None, Ok(_), None) => as_check(no_command("—"), DURABLE),
        };
        let on_pvc = durable.status == crate::verify::Status::Pass;
        j.push(ev(durable));
        if let Some(a) = job::run_clm_advice(&w) {
            j.advise(a);
        }
        if let Ok(a) = &read {
            if a.resume_from_checkpoint.is_none() {
                j.advise(Advice::new("resume"));
            }
            if on_pvc {
                j.advise(Advice::new("s3-sync").with(
                    "output_dir",
                    output.as_ref().map(|o| o.path.clone()).unwrap_or_default(),
                ));
            }
        }

        // State: the claim the checkpoints go to, then the Job's pods (by uid).
        j.push(ev(pvc_bound(ctx, t, output.as_ref())?));
        j.push(ev(job_pods::running_of(ctx, &PODS_READ, RUNNING, &w)?));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// The command line.

/// The training arguments of the Job's main container, or the failure every spec check shares
/// (no training command, a value the parser refuses, arguments in a file).
fn read_args(t: &PodTemplate) -> Result<HfTrainingArgs, Box<Outcome>> {
    let Some((c, _)) = main_container(t) else {
        return Err(Box::new(no_command("—")));
    };
    let Some(training) = training_command(c) else {
        return Err(Box::new(no_command(&command_line(c, 160))));
    };
    let args =
        HfTrainingArgs::parse(&training.args).map_err(|e| Box::new(bad_flag(EVERY_N, &e)))?;
    if let Some(file) = &args.config_file {
        return Err(Box::new(
            Outcome::fail(EVERY_N, "--save_steps …", file.clone())
                .hint("config-file")
                .with("file", file),
        ));
    }
    Ok(args)
}

/// The same failure, reported for another check (every spec check reads the same command).
fn as_check(mut o: Outcome, check: &str) -> Outcome {
    o.check = check.to_string();
    o
}

fn no_command(line: &str) -> Outcome {
    job::no_command(EVERY_N, line)
}

/// The setting as written, or `<flag> — (default <value>)`.
fn written<T>(s: &Option<Setting<T>>, flag: &str, default: Option<&str>) -> String {
    s.as_ref().map_or_else(
        || match default {
            Some(d) => format!("{flag} — (default {d})"),
            None => format!("{flag} —"),
        },
        Setting::as_written,
    )
}

/// Saves every N steps: `--save_strategy steps` (the default) and `--save_steps N` with
/// 0 < N < `--max_steps` when that is given; a ratio only with `--max_steps`, which makes it N.
fn every_n(a: &HfTrainingArgs) -> Outcome {
    let max = a
        .max_steps
        .as_ref()
        .and_then(Setting::known)
        .copied()
        .filter(|m| *m > 0);
    let expected = match max {
        Some(m) => format!("--save_strategy steps --save_steps N (0 < N < {m})"),
        None => "--save_strategy steps --save_steps N (N > 0)".to_string(),
    };
    let strategy = written(&a.save_strategy, "--save_strategy", Some("steps"));
    let steps = written(
        &a.save_steps,
        "--save_steps",
        Some(&DEFAULT_SAVE_STEPS.to_string()),
    );
    let found = format!("{strategy}, {steps}");
    let ev = |o: Outcome| o.with("strategy", &strategy).with("steps", &steps);
    let fail = |hint: Option<&str>| {
        let o = Outcome::fail(EVERY_N, expected.clone(), found.clone());
        ev(match hint {
            Some(h) => o.hint(h),
            None => o,
        })
    };
    match a.save_strategy.as_ref().map(|s| &s.value) {
        None | Some(Known::Value(SaveStrategy::Steps)) => {}
        Some(Known::Variable(_)) => return fail(Some("variable")),
        Some(Known::Value(SaveStrategy::No | SaveStrategy::Epoch | SaveStrategy::Best)) => {
            return fail(None)
        }
    }
    let n = match a.save_steps.as_ref().map(|s| &s.value) {
        None => DEFAULT_SAVE_STEPS,
        Some(Known::Variable(_)) => return fail(Some("variable")),
        Some(Known::Value(SaveSteps::Steps(n))) => *n,
        // A ratio of the total steps, rounded up. Without --max_steps the total is the epochs
        // times the dataset's steps per epoch, which the manifest does not show: the interval
        // is not N steps but grows with the run, so a stop can lose any amount of training.
        Some(Known::Value(SaveSteps::Ratio(r))) => match max {
            _ if *r <= 0.0 => 0,
            Some(m) => (m as f64 * r).ceil() as i64,
            None => return fail(Some("ratio")),
        },
    };
    if n <= 0 {
        return fail(Some("zero"));
    }
    if let Some(m) = max.filter(|m| n >= *m) {
        return fail(Some("not-below")).with("n", n).with("max", m);
    }
    ev(Outcome::pass(EVERY_N).expected_found(expected, found))
}

/// Keeps 3–5 checkpoints: `--save_total_limit` in 3..=5 (unset or ≤ 0 keeps every one).
fn keep_recent(a: &HfTrainingArgs) -> Outcome {
    let expected = format!("--save_total_limit {KEEP_MIN}..{KEEP_MAX}");
    let found = written(&a.save_total_limit, "--save_total_limit", None);
    let fail = |hint: Option<&str>| {
        let o = Outcome::fail(KEEP, expected.clone(), found.clone()).with("found", &found);
        match hint {
            Some(h) => o.hint(h),
            None => o,
        }
    };
    match a.save_total_limit.as_ref().map(|s| &s.value) {
        None => fail(Some("unset")),
        Some(Known::Variable(_)) => fail(Some("variable")),
        Some(Known::Value(n)) if *n <= 0 => fail(Some("unset")),
        Some(Known::Value(n)) if *n < KEEP_MIN => fail(Some("few")),
        Some(Known::Value(n)) if *n > KEEP_MAX => fail(None),
        Some(Known::Value(_)) => Outcome::pass(KEEP).expected_found(expected, found),
    }
}

// ---------------------------------------------------------------------------------------------
// Where the checkpoints go.

/// The volume `--output_dir` lies on.
struct Output {
    /// As written (`--output_dir /ckpt`), or the default.
    written: String,
    /// Absolute, when it can be known.
    path: String,
    container: String,
    on: Where,
}

enum Where {
    Variable,
    /// Relative, and the container has no `workingDir`.
    Relative,
    ContainerFs,
    /// A mount naming no volume of the pod (the API server refuses it; reported there).
    NoVolume,
    Volume {
        volume: String,
        kind: &'static str,
        /// `persistentVolumeClaim.claimName`.
        claim: Option<String>,
        read_only: bool,
        /// The mount's field path, for hints.
        mount: String,
    },
}

fn output_on(t: &PodTemplate, a: &HfTrainingArgs) -> Option<Output> {
    let (c, field) = main_container(t)?;
    let (written, raw) = match &a.output_dir {
        Some(s) => (s.as_written(), s.known().cloned()),
        None => (
            format!("— ({DEFAULT_OUTPUT_DIR})"),
            Some(DEFAULT_OUTPUT_DIR.to_string()),
        ),
    };
    let out = |path: String, on: Where| Output {
        written: written.clone(),
        path,
        container: c.name.clone(),
        on,
    };
    let Some(raw) = raw else {
        return Some(out(String::new(), Where::Variable));
    };
    let Some(path) = absolute(&raw, c) else {
        return Some(out(raw, Where::Relative));
    };
    let Some(v) = volume_at(&path, c, field, &t.spec) else {
        return Some(out(path, Where::ContainerFs));
    };
    let Some(vol) = v.volume else {
        return Some(out(path, Where::NoVolume));
    };
    let pvc = vol.persistent_volume_claim.as_ref();
    let read_only = v.mount.read_only == Some(true) || pvc.and_then(|p| p.read_only) == Some(true);
    Some(out(
        path,
        Where::Volume {
            volume: vol.name.clone(),
            kind: volume_kind(vol),
            claim: pvc.map(|p| p.claim_name.clone()),
            read_only,
            mount: v.mount_field.clone(),
        },
    ))
}

fn durable(o: &Output) -> Outcome {
    let expected = "--output_dir on persistentVolumeClaim";
    let ev = |x: Outcome| {
        x.with("output_dir", &o.written)
            .with("path", &o.path)
            .with("container", &o.container)
    };
    let fail = |found: String| Outcome::fail(DURABLE, expected, found);
    ev(match &o.on {
        Where::Volume {
            claim: Some(claim),
            read_only: false,
            volume,
            ..
        } => {
            return ev(Outcome::pass(DURABLE).expected_found(
                expected,
                format!("{} → persistentVolumeClaim {claim}", o.path),
            ))
            .with("claim", claim)
            .with("volume", volume)
        }
        Where::Volume {
            claim: Some(claim),
            read_only: true,
            volume,
            mount,
            ..
        } => fail(format!(
            "{} → persistentVolumeClaim {claim} (readOnly)",
            o.path
        ))
        .hint("read-only")
        .with("claim", claim)
        .with("volume", volume)
        .with("mount", mount),
        Where::Volume {
            volume,
            kind,
            mount,
            ..
        } => {
            let hint = match *kind {
                "emptyDir" => "emptydir",
                "hostPath" => "hostpath",
                "ephemeral" => "ephemeral",
                _ => "other-volume",
            };
            fail(format!("{} → {kind} {volume}", o.path))
                .hint(hint)
                .with("volume", volume)
                .with("kind", kind)
                .with("mount", mount)
        }
        Where::Variable => fail(o.written.clone()).hint("variable"),
        Where::Relative => fail(o.written.clone()).hint("relative"),
        Where::ContainerFs | Where::NoVolume => fail(format!("{} → container filesystem", o.path)),
    })
}

// ---------------------------------------------------------------------------------------------
// State: the claim.

/// The claims the checkpoints may go to: the one under `--output_dir`, else every claim the pod
/// mounts.
fn claims(t: &PodTemplate, output: Option<&Output>) -> Vec<String> {
    if let Some(Output {
        on: Where::Volume { claim: Some(c), .. },
        ..
    }) = output
    {
        return vec![c.clone()];
    }
    claim_names(&t.spec)
}

fn pvc_bound(
    ctx: &JudgeCtx,
    t: &PodTemplate,
    output: Option<&Output>,
) -> Result<Outcome, InputError> {
    let wanted = claims(t, output);
    let expected = "PersistentVolumeClaim phase: Bound";
    if wanted.is_empty() {
        return Ok(Outcome::fail(BOUND, expected, "—").hint("none"));
    }
    let pvcs = match ctx.list(&PVCS_READ) {
        Ok(p) => p,
        Err(why) => return Ok(Outcome::unavailable(BOUND, &why)),
    };
    let mut bound = Vec::new();
    for name in &wanted {
        let Some(o) = pvcs.iter().find(|o| o.name() == name) else {
            return Ok(
                Outcome::fail(BOUND, expected, format!("PersistentVolumeClaim {name}: —"))
                    .hint("missing-pvc")
                    .with("claim", name),
            );
        };
        let pvc: PersistentVolumeClaim = o.parse()?;
        // The API server always reports a phase (`Pending` at creation); a claim without one
        // was read before the cluster saw it (a manifest, the demo room): still waiting.
        let Some(phase) = pvc.status.as_ref().and_then(|s| s.phase.clone()) else {
            return Ok(
                Outcome::pending(BOUND, Reason::Message("pvc-pending".into()))
                    .with("claim", name)
                    .with("phase", "Pending")
                    .with("class", class_of(&pvc).unwrap_or_else(|| "—".into())),
            );
        };
        let found = format!("{name}: {phase}");
        let ev = |x: Outcome| x.with("claim", name).with("phase", &phase);
        match phase.as_str() {
            "Bound" => bound.push(found),
            "Lost" => return Ok(ev(Outcome::fail(BOUND, expected, found).hint("lost"))),
            _ => return Ok(ev(waiting(ctx, &pvc, expected, found))),
        }
    }
    Ok(Outcome::pass(BOUND).expected_found(expected, bound.join(", ")))
}

fn class_of(pvc: &PersistentVolumeClaim) -> Option<String> {
    pvc.spec.as_ref().and_then(|s| s.storage_class_name.clone())
}

/// A Pending claim: a fail when no StorageClass can ever provision it (the class it names does
/// not exist, or it names none and no class is the default), else pending (a
/// `WaitForFirstConsumer` class binds once the pod is scheduled).
fn waiting(ctx: &JudgeCtx, pvc: &PersistentVolumeClaim, expected: &str, found: String) -> Outcome {
    let class = class_of(pvc);
    let pending = || {
        Outcome::pending(BOUND, Reason::Message("pvc-pending".into()))
            .expected_found(expected, found.clone())
            .with("class", class.clone().unwrap_or_else(|| "—".into()))
    };
    // A claim bound to a named PersistentVolume, or an explicit "" (static volumes only), does
    // not depend on a class.
    if pvc
        .spec
        .as_ref()
        .and_then(|s| s.volume_name.as_ref())
        .is_some()
        || class.as_deref() == Some("")
    {
        return pending();
    }
    let Ok(classes) = ctx.list(&STORAGECLASSES_READ) else {
        return pending();
    };
    match &class {
        Some(c) if !classes.iter().any(|s| s.name() == c) => {
            let known: Vec<&str> = classes.iter().map(|s| s.name()).collect();
            Outcome::fail(BOUND, expected, found.clone())
                .hint("no-class")
                .with("class", c)
                .with(
                    "classes",
                    if known.is_empty() {
                        "—".to_string()
                    } else {
                        known.join(", ")
                    },
                )
        }
        None if !classes
            .iter()
            .any(|s| s.value["metadata"]["annotations"][DEFAULT_CLASS_ANNOTATION] == "true") =>
        {
            Outcome::fail(BOUND, expected, format!("{found} (storageClassName: —)"))
                .hint("no-default-class")
        }
        _ => pending(),
    }
}
