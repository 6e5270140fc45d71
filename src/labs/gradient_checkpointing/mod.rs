//! Lab `gradient-checkpointing`: a batch/v1 Job (or a TrainJob) `ckpt-train` (one pod) that is
//! OOM-killed at
//! `--per_device_train_batch_size 16` under its memory limit. The learner keeps the batch size
//! and the limit and turns activation checkpointing on, trading compute for memory.
//!
//! Spec checks read the training container's command line with the kit (`cmdline`): Hugging
//! Face `--gradient_checkpointing`/`--activation_checkpointing`, Megatron-LM
//! `--recompute-activations`/`--recompute-granularity`, NeMo
//! `model.activations_checkpoint_granularity`; the batch from every framework's micro-batch
//! setting (kit `ParallelPlan`); the memory limit of the training container. State checks follow
//! the Job's uid to its pods and read each container's `state` and `lastState`: a restart in
//! place (`restartPolicy: OnFailure`) hides an OOM kill in `lastState`.

use crate::observe::kinds::PODS;
use crate::observe::{InputError, Obj};
use crate::verify::kit::cmdline::{
    command_line, Args, HfTrainingArgs, Known, MegatronArgs, MergedState, NemoArgs, ParallelPlan,
    Setting,
};
use crate::verify::kit::k8s::conditions;
use crate::verify::kit::k8s::pods::{pod_states, ContainerEnd, PodState};
use crate::verify::kit::k8s::quantity::Quantity;
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::{resources_field, PodTemplate};
use crate::verify::kit::training::job::{
    self, bad_flag, find_training_job, main_container, no_command, rejections, training_command,
    training_template, TrainingJob,
};
use crate::verify::kit::training::job_pods::owned_pods;
use crate::verify::kit::training::trainjob::{trainjob_reads, JOBS_READ, TRAINJOBS_READ};
use crate::verify::{JudgeCtx, Judgement, Outcome, Params, Read, Reason, Verifier};

pub struct GradientCheckpointing;

static PODS_READ: Read = Read::lab(&PODS);
/// A batch/v1 Job or a TrainJob (with the runtimes it may name and the JobSet between it and
/// its Jobs).
static READS: &[&Read] = trainjob_reads![jobs first; &PODS_READ];

const JOB: &str = "ckpt-train";
const CHECKPOINTING_ON: &str = "checkpointing-on";
const BATCH_KEPT: &str = "batch-kept";
const MEMORY_UNCHANGED: &str = "memory-unchanged";
const NOT_OOM_KILLED: &str = "not-oom-killed";
const JOB_SUCCEEDED: &str = "job-succeeded";
const CHECKS: &[&str] = &[
    CHECKPOINTING_ON,
    BATCH_KEPT,
    MEMORY_UNCHANGED,
    NOT_OOM_KILLED,
    JOB_SUCCEEDED,
];

/// `TrainingArguments.per_device_train_batch_size` default (transformers 5.24).
const HF_DEFAULT_BATCH: i64 = 8;
/// The container status reason for a kernel OOM kill (containerd CRI
/// `internal/cri/server/helpers.go` `oomExitReason`).
const OOM_KILLED: &str = "OOMKilled";
/// What PyTorch's CUDA caching allocator raises when the GPU is full
/// (`c10/cuda/CUDACachingAllocator.cpp`: "CUDA out of memory. Tried to allocate …").
const CUDA_OOM: &str = "CUDA out of memory";

impl Verifier for GradientCheckpointing {
    fn lab_id(&self) -> &'static str {
        "gradient-checkpointing"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let jobs = [&JOBS_READ, &TRAINJOBS_READ];
        let job = match find_training_job(ctx, JOB, &jobs, CHECKPOINTING_ON, CHECKS)? {
            TrainingJob::Found(w) => w,
            TrainingJob::Absent(j) => return Ok(j),
        };
        let obj = job.obj;
        let ns = ctx.target.namespace.as_str();
        let kind = job.kind.kind();
        let ev = |o: Outcome| {
            o.with("job", JOB)
                .with("namespace", ns)
                .with("kind", kind)
                .with("job_resource", kind.to_ascii_lowercase())
        };
        let mut j = Judgement::default();
        let Some(t) = training_template(&job) else {
            return Err(obj.field_error("spec.template", "a Job needs a pod template"));
        };
        let batch = Params::number(Some(ctx.params.require("batch_size")?), "batch_size")?
            .unwrap_or_default();
        if let Some(a) = job::run_clm_advice(&job) {
            j.advise(a);
        }

        // Spec: the API server refuses the Job outright; otherwise read the training command.
        match rejections(&job) {
            Some(r) => j.push(ev(r.outcome(CHECKPOINTING_ON))),
            None => j.push(ev(checkpointing(t))),
        }
        j.push(ev(batch_kept(t, i64::from(batch))));
        j.push(ev(memory_unchanged(ctx, obj, t)?));

        // State: the pods of this Job, by uid.
        let pods = match ctx.list(&PODS_READ) {
            Ok(p) => p,
            Err(why) => {
                j.push(ev(Outcome::unavailable(NOT_OOM_KILLED, &why)));
                j.push(ev(Outcome::unavailable(JOB_SUCCEEDED, &why)));
                return Ok(j);
            }
        };
        let states = match owned_pods(ctx, &job, &pods) {
            Ok(Some(o)) => pod_states(&o.all().collect::<Vec<_>>())?,
            Ok(None) => Vec::new(),
            Err(why) => {
                j.push(ev(Outcome::unavailable(NOT_OOM_KILLED, &why)));
                j.push(ev(Outcome::unavailable(JOB_SUCCEEDED, &why)));
                return Ok(j);
            }
        };
        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        j.push(ev(not_oom_killed(&states, &conds)));
        j.push(ev(job_succeeded(&states, &conds)));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// Spec.

/// What the training command says, or why it cannot be read.
enum Command {
    Args(Args, String),
    NoCommand(String),
}

fn training(t: &PodTemplate) -> (Command, String) {
    let Some((c, _)) = main_container(t) else {
        return (Command::NoCommand("—".into()), "—".into());
    };
    match training_command(c) {
        Some(tr) => (Command::Args(tr.args, tr.display), c.name.clone()),
        None => (Command::NoCommand(command_line(c, 160)), c.name.clone()),
    }
}

fn checkpointing(t: &PodTemplate) -> Outcome {
    let (read, container) = training(t);
    let (args, command) = match read {
        Command::NoCommand(line) => return no_command(CHECKPOINTING_ON, &line),
        Command::Args(a, d) => (a, d),
    };
    let ev = |o: Outcome| o.with("container", &container).with("command", &command);
    // Each tool reads only its own flags: a value one of them refuses is judged only for the
    // flags this check reads (an HF `--bf16=true` is no Megatron error here).
    let hf = match HfTrainingArgs::parse(&args) {
        Ok(h) => h,
        Err(e) => return ev(bad_flag(CHECKPOINTING_ON, &e)),
    };
    // NeMo 1's switch is `model.activations_checkpoint_granularity` (NVIDIA/NeMo v2.4.0
    // `examples/nlp/language_modeling/conf/megatron_gpt_config.yaml` l.198).
    let nemo = match NemoArgs::from_argv(args.words()) {
        Ok(n) => n,
        Err(e) => return ev(bad_flag(CHECKPOINTING_ON, &e)),
    };
    let recompute = args.switch(&["recompute-activations"]).and_then(|a| {
        let g = args.choice(&["recompute-granularity"], &["full", "selective"])?;
        let m = args.choice(&["recompute-method"], &["uniform", "block"])?;
        Ok((a, g, m))
    });
    let (activations, granularity, method) = match recompute {
        Ok(r) => r,
        Err(e) => return ev(bad_flag(CHECKPOINTING_ON, &e)),
    };
    // Megatron-LM stops at startup on a removed flag (`validate_args`); for
    // `--checkpoint-activations` it prints its message and exits 0, so the Job "succeeds"
    // without training.
    let removed = MegatronArgs::parse(&args)
        .map(|m| m.removed)
        .unwrap_or_default();
    if let Some(r) = removed.first() {
        return ev(Outcome::fail(
            CHECKPOINTING_ON,
            "--recompute-activations",
            r.spelling.clone(),
        )
        .hint("removed")
        .with("flag", &r.spelling)
        .with("message", r.message));
    }
    // `--recompute-activations` is shorthand for selective granularity (validate_args).
    let selective = activations.is_some()
        || granularity
            .as_ref()
            .and_then(Setting::known)
            .map(String::as_str)
            == Some("selective");
    // A recompute method with selective granularity is refused: "recompute method is not yet
    // supported for selective recomputing granularity" (megatron/training/arguments.py,
    // core_v0.19.0).
    if let (true, Some(m)) = (selective, method.as_ref().filter(|m| m.known().is_some())) {
        return ev(Outcome::fail(
            CHECKPOINTING_ON,
            "--recompute-granularity full",
            m.as_written(),
        )
        .hint("selective-method")
        .with("found", m.as_written()));
    }
    let mut on: Vec<String> = Vec::new();
    let mut off: Vec<String> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let mut note = |s: &Setting<bool>| match s.value {
        Known::Value(true) => on.push(s.as_written()),
        Known::Value(false) => off.push(s.as_written()),
        Known::Variable(_) => unknown.push(s.as_written()),
    };
    if let Some(s) = hf.checkpointing() {
        note(s);
    }
    if let Some(s) = &activations {
        note(s);
    }
    if let Some(g) = &granularity {
        match g.value {
            Known::Value(_) => on.push(g.as_written()),
            Known::Variable(_) => unknown.push(g.as_written()),
        }
    }
    // `selective`/`full` turn recompute on; `null`, the yaml default, leaves it off: NeMo v2.4.0
    // `megatron_base_model.py` `build_transformer_config` hands it to Megatron-core as
    // `recompute_granularity` ("If None, no recompute is performed": core_v0.19.0
    // `megatron/core/transformer/transformer_config.py` l.518).
    if let Some(s) = &nemo.activations_checkpoint_granularity {
        match &s.value {
            Known::Value(Some(_)) => on.push(s.as_written()),
            Known::Value(None) => off.push(s.as_written()),
            Known::Variable(_) => unknown.push(s.as_written()),
        }
    }
    if !on.is_empty() {
        return Outcome::pass(CHECKPOINTING_ON)
            .expected_found("--gradient_checkpointing", on.join(", "));
    }
    let expected = "--gradient_checkpointing";
    ev(if !unknown.is_empty() {
        Outcome::fail(CHECKPOINTING_ON, expected, unknown.join(", "))
            .hint("variable")
            .with("found", unknown.join(", "))
    } else if !off.is_empty() {
        Outcome::fail(CHECKPOINTING_ON, expected, off.join(", "))
            .hint("off")
            .with("found", off.join(", "))
    } else {
        Outcome::fail(CHECKPOINTING_ON, expected, "—")
    })
}

fn batch_kept(t: &PodTemplate, want: i64) -> Outcome {
    let (read, container) = training(t);
    let (args, command) = match read {
        Command::NoCommand(line) => return no_command(BATCH_KEPT, &line),
        Command::Args(a, d) => (a, d),
    };
    let plan = match ParallelPlan::from_args(&args) {
        Ok(p) => p,
        Err(e) => return bad_flag(BATCH_KEPT, &e),
    };
    let expected = format!("--per_device_train_batch_size {want}");
    let ev = |o: Outcome| {
        o.with("container", &container)
            .with("command", &command)
            .with("batch", want)
    };
    let accumulation = match args.int(&["gradient_accumulation_steps"]) {
        Ok(s) => s.and_then(|s| s.known().copied()).filter(|n| *n > 1),
        Err(e) => return ev(bad_flag(BATCH_KEPT, &e)),
    };
    let fail = |found: String| {
        Outcome::fail(BATCH_KEPT, expected.clone(), found.clone()).with("found", found)
    };
    ev(match plan.micro_batch_size.state() {
        MergedState::One(s) if s.known() == Some(&want) => {
            return Outcome::pass(BATCH_KEPT).expected_found(expected.clone(), s.as_written())
        }
        MergedState::One(s) => match accumulation {
            Some(n) => fail(format!(
                "{} × --gradient_accumulation_steps {n}",
                s.as_written()
            ))
            .hint("accumulation"),
            None => fail(s.as_written()),
        },
        MergedState::Unknown(s) => fail(s.as_written()).hint("variable"),
        MergedState::Conflict(all) => fail(
            all.iter()
                .map(|s| s.as_written())
                .collect::<Vec<_>>()
                .join(", "),
        ),
        MergedState::NotSet => fail(format!("— (default {HF_DEFAULT_BATCH})")).hint("unset"),
    })
}

fn memory_unchanged(ctx: &JudgeCtx, obj: &Obj, t: &PodTemplate) -> Result<Outcome, InputError> {
    // In static mode the limit the lab set is a fact of the profile, given with `--param` (or
    // `--profile`); on a cluster the detected profile's value applies.
    let param = if ctx.is_static() {
        ctx.params.given("memory_limit")
    } else {
        ctx.params.get("memory_limit")
    };
    let Some(raw) = param else {
        return Ok(Outcome::skipped(
            MEMORY_UNCHANGED,
            Reason::NeedsParam("memory_limit".into()),
        ));
    };
    let want = Quantity::parse(raw).map_err(|_| InputError::Param {
        name: "memory_limit".into(),
        value: raw.into(),
        expected: "a memory quantity such as 512Mi".into(),
        expected_ja: "512Mi のようなメモリー量".into(),
    })?;
    let Some((c, path)) = main_container(t) else {
        return Ok(
            Outcome::fail(MEMORY_UNCHANGED, format!("memory: {raw}"), "—")
                .hint("unlimited")
                .with("field", t.field("containers"))
                .with("limit", raw),
        );
    };
    let field = format!("{}.limits.memory", resources_field(path));
    let limit = resources::limit(c, "memory").map_err(|e| obj.field_error(&field, e))?;
    let expected = format!("{field}: {raw}");
    let o = match limit {
        None => Outcome::fail(MEMORY_UNCHANGED, expected, format!("{field}: —")).hint("unlimited"),
        Some(q) if q.nanos() > want.nanos() => Outcome::fail(
            MEMORY_UNCHANGED,
            expected,
            format!("{field}: {}", q.as_str()),
        )
        .with("found", q.as_str()),
        Some(q) => Outcome::pass(MEMORY_UNCHANGED)
            .expected_found(expected, format!("{field}: {}", q.as_str())),
    };
    Ok(o.with("limit", raw)
        .with("field", field)
        .with("container", &c.name))
}

// ---------------------------------------------------------------------------------------------
// State.

/// The first OOM kill among the pods: the kernel's (`OOMKilled`), or CUDA's in a termination
/// message (`terminationMessagePolicy: FallbackToLogsOnError` puts the log tail there).
fn oom(pods: &[PodState]) -> Option<(&PodState, &ContainerEnd, bool)> {
    pods.iter().find_map(|p| {
        p.ends
            .iter()
            .find(|e| is_oom(e))
            .map(|e| (p, e, e.reason != OOM_KILLED))
    })
}

fn is_oom(e: &ContainerEnd) -> bool {
    e.reason == OOM_KILLED || e.message.as_deref().is_some_and(|m| m.contains(CUDA_OOM))
}

fn not_oom_killed(pods: &[PodState], conds: &[conditions::Condition]) -> Outcome {
    if let Some((p, e, cuda)) = oom(pods) {
        let found = e.describe(&p.name);
        let o = Outcome::fail(NOT_OOM_KILLED, "—", found.clone())
            .with("pod", &p.name)
            .with("container", &e.container)
            .with("found", found)
            .with("where", if e.earlier { "lastState" } else { "state" });
        return if cuda { o.hint("cuda") } else { o };
    }
    if conditions::is_true(conds, "Complete") || pods.iter().any(|p| p.phase == "Succeeded") {
        return Outcome::pass(NOT_OOM_KILLED).expected_found("—", "—");
    }
    if pods.is_empty() {
        return Outcome::pending(NOT_OOM_KILLED, Reason::Message("no-pods".into()));
    }
    if pods.iter().all(|p| p.phase == "Failed") || conditions::is_true(conds, "Failed") {
        // Ended for another reason (job-succeeded says which): no OOM kill.
        return Outcome::pass(NOT_OOM_KILLED).expected_found("—", "—");
    }
    Outcome::pending(NOT_OOM_KILLED, Reason::Message("running".into()))
}

fn job_succeeded(pods: &[PodState], conds: &[conditions::Condition]) -> Outcome {
    // `Complete` (batch/v1 JobConditionType); `SuccessCriteriaMet` comes just before it.
    if conditions::is_true(conds, "Complete") {
        return Outcome::pass(JOB_SUCCEEDED).expected_found("Complete=True", "Complete=True");
    }
    let last_failure = pods
        .iter()
        .find_map(|p| p.failure().map(|e| e.describe(&p.name)));
    if let Some(c) = conditions::find(conds, "Failed").filter(|c| c.is_true()) {
        let reason = c.reason.clone().unwrap_or_default();
        let found = format!("Failed=True ({reason})");
        return Outcome::fail(JOB_SUCCEEDED, "Complete=True", found)
            .hint("failed")
            .with("reason", reason)
            .with("pod", last_failure.unwrap_or_else(|| "—".into()));
    }
    // A command the tool refused fails the same way on every retry: no need to wait. An OOM
    // kill is not-oom-killed's to report; the Job may still retry until its backoffLimit.
    for p in pods {
        if let Some(e) = p.failure().filter(|e| !is_oom(e)) {
            let found = e.describe(&p.name);
            return Outcome::fail(JOB_SUCCEEDED, "Complete=True", found.clone())
                .hint("crashed")
                .with("pod", &p.name)
                .with("found", found);
        }
        if let Some((c, reason, message)) = p.stuck() {
            let found = format!("{}/{c}: {reason}", p.name);
            return Outcome::fail(JOB_SUCCEEDED, "Complete=True", found.clone())
                .hint("stuck")
                .with("pod", &p.name)
                .with("found", found)
                .with("message", message);
        }
    }
    if pods.is_empty() {
        return Outcome::pending(JOB_SUCCEEDED, Reason::Message("no-pods".into()));
    }
    Outcome::pending(JOB_SUCCEEDED, Reason::Message("running".into()))
}
