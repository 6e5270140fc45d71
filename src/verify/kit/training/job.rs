//! Training jobs as the labs grade them: the object's served version, what the API server and the
//! training-operator's webhook refuse before a pod exists, the training command a container runs
//! (through shells and launchers), and the DeepSpeed config it is given.

use k8s_openapi::api::core::v1::{Container, PodSpec};

use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::run_clm;
use crate::verify::kit::cmdline::{
    deepspeed_config_arg, invocations, is_var_ref, Args, DsConfig, DsValue, FlagError, Known,
    LauncherCommand, Offload, OffloadDevice, Overrides, ParallelPlan, Precision, Setting,
};
use crate::verify::kit::cmdline::{is_megatron_entry, MegatronArgs};
use crate::verify::kit::k8s::mounts::{
    absolute, config_map_key, mount_rejections, volume_at, volume_kind,
};
use crate::verify::kit::k8s::quantity::Quantity;
use crate::verify::kit::k8s::rejection::Rejection;
use crate::verify::kit::k8s::resources::validate_pod_spec;
pub use crate::verify::kit::k8s::workload::TRAINER_FIELD;
use crate::verify::kit::k8s::workload::{PodTemplate, Workload, WorkloadKind};
use crate::verify::kit::training::{parallel, trainjob};
use crate::verify::views::pytorch;
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, MISSING_HINT};

/// The object named `name` in the first of `reads` that lists one (a lab that accepts a
/// PyTorchJob or a batch/v1 Job), as [`parallel::find_job`] finds it: another version is absent.
/// A read refused because its CRD is not served leaves the others (a lab that accepts a Job must
/// not be skipped for a missing training-operator); another failed read makes every check
/// unavailable. In none: every check fails once with the lab's `missing` text naming each kind.
pub fn find_one_of<'a>(
    ctx: &JudgeCtx<'a>,
    name: &str,
    reads: &[&Read],
    checks: &[&str],
) -> Named<'a> {
    let lists: Vec<_> = reads.iter().map(|r| ctx.list(r)).collect();
    for (r, l) in reads.iter().zip(&lists) {
        if l.as_ref().is_ok_and(|l| l.iter().any(|o| o.name() == name)) {
            return parallel::find_job(ctx, r, name, checks);
        }
    }
    for l in &lists {
        match l {
            Err(Unavailable::NotServed { .. }) | Ok(_) => {}
            Err(why) => {
                return Named::Absent(Judgement::every(checks, |c| Outcome::unavailable(c, why)))
            }
        }
    }
    let mut others: Vec<&str> = lists.iter().flatten().flatten().map(|o| o.name()).collect();
    others.sort_unstable();
    let found = if others.is_empty() {
        "—".to_string()
    } else {
        others.join(", ")
    };
    let each = |f: &dyn Fn(&Read) -> String, sep: &str| {
        reads.iter().map(|r| f(r)).collect::<Vec<_>>().join(sep)
    };
    let expected = each(
        &|r| format!("{} {} {name}", r.kind.api_version(), r.kind.kind),
        " | ",
    );
    let kind = each(&|r| r.kind.kind.to_string(), " / ");
    let api_version = each(&|r| r.kind.api_version(), " / ");
    // The kinds accepted, each with its apiVersion, as the `missing` texts name them: a list
    // that reads the same in both languages ("`batch/v1` Job, `trainer.kubeflow.org/v1alpha1`
    // TrainJob"), where "Job / TrainJob with `apiVersion: batch/v1 / …`" did not read.
    let accepted = each(
        &|r| format!("`{}` {}", r.kind.api_version(), r.kind.kind),
        ", ",
    );
    let ns = ctx.target.namespace.clone();
    Named::Absent(Judgement::every(checks, |c| {
        Outcome::fail(c, expected.clone(), found.clone())
            .hint(MISSING_HINT)
            .with("name", name)
            .with("kind", &kind)
            .with("api_version", &api_version)
            .with("accepted", &accepted)
            .with("namespace", &ns)
    }))
}

/// A training job as a lab grades it: any kind `Workload` reads, a TrainJob laid over its
/// runtime.
pub enum TrainingJob<'a> {
    Found(Workload<'a>),
    /// Missing, in a version that is not served, or a TrainJob whose runtime does not exist:
    /// the judgement to return.
    Absent(Judgement),
}

/// The job named `name` in the first of `reads` that lists one ([`find_one_of`]); a TrainJob is
/// laid over the runtime it names ([`trainjob::find_runtime`]: a missing runtime fails
/// `runtime_check` with hint `runtime-missing` and skips the others with `runtime-unknown`).
pub fn find_training_job<'a>(
    ctx: &JudgeCtx<'a>,
    name: &str,
    reads: &[&Read],
    runtime_check: &str,
    checks: &[&str],
) -> Result<TrainingJob<'a>, InputError> {
    let obj = match find_one_of(ctx, name, reads, checks) {
        Named::Found(o) => o,
        Named::Absent(j) => return Ok(TrainingJob::Absent(j)),
    };
    if WorkloadKind::of(obj.api_version(), obj.kind()) == Some(WorkloadKind::TrainJob) {
        return Ok(
            match trainjob::find_runtime(ctx, obj, runtime_check, checks) {
                trainjob::RuntimeFound::Found(rt) => {
                    TrainingJob::Found(trainjob::over_runtime(obj, &rt)?)
                }
                trainjob::RuntimeFound::Missing(j) => TrainingJob::Absent(j),
            },
        );
    }
    match Workload::from_obj(obj)? {
        Some(w) => Ok(TrainingJob::Found(w)),
        None => Err(obj.field_error("kind", "expected a training job")),
    }
}

/// The pod template that trains in a single-template job: a Job's template, or a TrainJob's
/// trainer job (the one whose container `spec.trainer` fills).
pub fn training_template<'w>(w: &'w Workload) -> Option<&'w PodTemplate> {
    w.templates
        .iter()
        .find(|t| t.container_paths.iter().any(|p| p == TRAINER_FIELD))
        .or_else(|| w.templates.first())
}

/// The first thing the API server or an operator's webhook refuses in the job, in the order
/// they would: for a PyTorchJob the training-operator webhook's rules and pod validation
/// ([`parallel::pytorchjob_rejections`]); for a Job its `restartPolicy` (kubernetes
/// `pkg/apis/batch/validation/validation.go` `validateJobSpec`: not `Always`, the default of a
/// pod template); for every kind pod validation of each template (kit
/// `resources::validate_pod_spec`). Volume mounts are [`first_rejection`]'s.
pub fn rejections(job: &Workload) -> Option<Rejection> {
    let found = |(field, text): (String, String)| Rejection { text, field };
    if job.pytorch().is_some() || job.trainjob().is_some() {
        if let Some(r) = parallel::rejections(job).into_iter().next() {
            return Some(found((r.field, r.text)));
        }
    }
    if job.batch_job().is_some() {
        for t in &job.templates {
            let field = t.field("restartPolicy");
            let text = match t.spec.restart_policy.as_deref() {
                Some("OnFailure") | Some("Never") => continue,
                None | Some("") | Some("Always") => {
                    format!("{field}: Required value: valid values: \"OnFailure\", \"Never\"")
                }
                Some(other) => format!(
                    "{field}: Unsupported value: \"{other}\": supported values: \"OnFailure\", \"Never\""
                ),
            };
            return Some(Rejection { text, field });
        }
    }
    job.templates.iter().find_map(|t| {
        let v = validate_pod_spec(&t.spec, &t.path).into_iter().next()?;
        Some(found((v.path.clone(), v.api_server_text())))
    })
}

/// [`rejections`], then the volume mounts of every template ([`mount_rejections`]): for a lab
/// whose checks do not grade the mounts themselves.
pub fn first_rejection(job: &Workload) -> Option<Rejection> {
    rejections(job).or_else(|| {
        let (field, text) = job
            .templates
            .iter()
            .find_map(|t| mount_rejections(t).into_iter().next())?;
        Some(Rejection { text, field })
    })
}

/// The training command a container runs, found through shells and launchers.
pub struct Training {
    /// The launchers, outermost first (`torchrun`, `accelerate`, `deepspeed`, …).
    pub launchers: Vec<LauncherCommand>,
    pub args: Args,
    /// The command as written, for messages.
    pub display: String,
}

impl Training {
    /// Whether the script is one of Megatron-LM's entry points (its arguments are then read
    /// as strictly as Megatron-LM's parser reads them).
    pub fn is_megatron(&self) -> bool {
        self.launchers
            .last()
            .and_then(LauncherCommand::entry)
            .is_some_and(|e| is_megatron_entry(&e.script))
    }
}

/// Advice `run-clm-refuses` {`role`, `message`} for the first pod template whose training
/// command runs transformers' run_clm.py with arguments it stops on, or trains nothing with
/// ([`run_clm::refusal`]). Advice, not a fail: the labs that run it grade a training concept
/// (BF16, checkpointing, ZeRO, checkpoints), not run_clm's data and model arguments, and a copy
/// of the script in the learner's image may differ; live, the pod that stops fails the lab's
/// pod check with the script's own message.
pub fn run_clm_advice(w: &Workload) -> Option<Advice> {
    w.templates.iter().find_map(|t| {
        let (c, _) = main_container(t)?;
        let training = training_command(c)?;
        let entry = training.launchers.last().and_then(LauncherCommand::entry)?;
        if !run_clm::runs_run_clm(&entry.script, &training.args) {
            return None;
        }
        let why = run_clm::refusal(&training.args)?;
        Some(
            Advice::new("run-clm-refuses")
                .with("role", &t.role)
                .with("message", why),
        )
    })
}

/// Python modules that are not a training script (`python -m pip install …`).
const NOT_TRAINING: &[&str] = &["pip", "ensurepip", "venv", "http.server"];

/// The last command of the container that reaches a training script (a setup step such as
/// `pip install … &&` comes before it). None when no command does, or the shell script cannot be
/// split (the pod would not start it either).
pub fn training_command(c: &Container) -> Option<Training> {
    let invs = invocations(c).ok()?;
    invs.iter().rev().find_map(|inv| {
        let launchers = LauncherCommand::chain(&inv.expanded);
        let entry = launchers.last().and_then(LauncherCommand::entry)?;
        if entry.module && NOT_TRAINING.contains(&entry.script.as_str()) {
            return None;
        }
        Some(Training {
            args: Args::new(entry.args.iter().cloned()),
            launchers,
            display: inv.display(),
        })
    })
}

/// No command of the container reaches a training script: hint `no-command` {`line`: the
/// command as written}.
pub fn no_command(check: &str, line: &str) -> Outcome {
    Outcome::fail(check, "python|torchrun|deepspeed|accelerate …", line)
        .hint("no-command")
        .with("line", line)
}

/// A flag value the tool refuses at startup: hint `bad-flag` {`flag`, `value`}.
pub fn bad_flag(check: &str, e: &FlagError) -> Outcome {
    let (flag, value) = match e {
        FlagError::Invalid { flag, value, .. } => (flag.as_str(), value.as_str()),
        FlagError::MissingValue { flag } => (flag.as_str(), ""),
    };
    Outcome::fail(check, flag, format!("{flag}={value}"))
        .hint("bad-flag")
        .with("flag", flag)
        .with("value", value)
}

/// The container a training job runs its training in: a PyTorchJob's `pytorch`, the one a
/// TrainJob's `spec.trainer` fills, else the first.
pub fn main_container(t: &PodTemplate) -> Option<(&Container, &str)> {
    t.containers()
        .find(|(c, _)| c.name == pytorch::DEFAULT_CONTAINER)
        .or_else(|| t.containers().find(|(_, p)| *p == TRAINER_FIELD))
        .or_else(|| t.containers().next())
}

/// The DeepSpeed config the training command names, as written: (flag, value). HF `--deepspeed
/// PATH` or DeepSpeed's `--deepspeed_config PATH` ([`deepspeed_config_arg`]), else `accelerate
/// launch --deepspeed_config_file PATH`. The value is a path, inline JSON or a variable.
pub fn deepspeed_config_flag(t: &Training) -> Option<(String, String)> {
    if let Some(s) = deepspeed_config_arg(&t.args) {
        return Some((s.source.clone(), s.raw.clone().unwrap_or_default()));
    }
    t.launchers.iter().find_map(|l| match l {
        LauncherCommand::Accelerate(a) => a
            .deepspeed_config_file()
            .map(|p| ("--deepspeed_config_file".to_string(), p.to_string())),
        _ => None,
    })
}

/// Where a training command's DeepSpeed config path leads ([`deepspeed_config_path`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DsConfigPath {
    /// The flag as written: `--deepspeed`, `--deepspeed_config`, `--deepspeed_config_file`.
    pub flag: String,
    /// Its value as written.
    pub value: String,
    pub leads: DsLeads,
}

/// What a DeepSpeed config path leads to in the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DsLeads {
    /// A variable reference ([`is_var_ref`]): the manifests do not show the file.
    Variable,
    /// Inline JSON (`--deepspeed '{…}'`).
    Inline,
    /// A relative path and no `workingDir` (the image's working directory is not in the
    /// manifest).
    Relative,
    /// An absolute path on no mount: the container's own filesystem.
    NotMounted { path: String },
    /// Under a mount that names no volume of the pod (the API server refuses it).
    NoVolume { path: String, mount: String },
    /// On a volume that shows no ConfigMap: its name and source kind (`emptyDir`).
    OtherVolume {
        path: String,
        volume: String,
        kind: &'static str,
    },
    /// On a `configMap` or `projected` volume: the ConfigMap and the key the file comes from;
    /// `key` is None when the volume's `items` list no file at `inner`, the path inside the
    /// volume. The key may still be missing from the ConfigMap: the caller's `exists` decides.
    ConfigMap {
        path: String,
        volume: String,
        config_map: String,
        key: Option<String>,
        inner: String,
    },
}

/// The one rule for where the DeepSpeed config a training command names comes from: the flag
/// ([`deepspeed_config_flag`]), then a variable, inline JSON, or a path (relative ones from the
/// container's `workingDir`) followed through the container's volume mounts (kit `mounts`: the
/// deepest mount, its `subPath`) to the ConfigMap key it shows (core/v1
/// `ConfigMapVolumeSource.items`, `ConfigMapProjection`; of several sources, one where
/// `exists(config_map, key)` wins). None: the command names no config.
pub fn deepspeed_config_path(
    t: &Training,
    c: &Container,
    spec: &PodSpec,
    exists: impl Fn(&str, &str) -> bool,
) -> Option<DsConfigPath> {
    let (flag, value) = deepspeed_config_flag(t)?;
    let leads = if is_var_ref(&value) {
        DsLeads::Variable
    } else if value.trim_start().starts_with('{') {
        DsLeads::Inline
    } else {
        match absolute(&value, c) {
            None => DsLeads::Relative,
            Some(path) => config_path_leads(path, c, spec, exists),
        }
    };
    Some(DsConfigPath { flag, value, leads })
}

fn config_path_leads(
    path: String,
    c: &Container,
    spec: &PodSpec,
    exists: impl Fn(&str, &str) -> bool,
) -> DsLeads {
    let Some(on) = volume_at(&path, c, "", spec) else {
        return DsLeads::NotMounted { path };
    };
    let Some(v) = on.volume else {
        let mount = on.mount.name.clone();
        return DsLeads::NoVolume { path, mount };
    };
    match config_map_key(v, &on.inner, exists) {
        Some((config_map, key)) => DsLeads::ConfigMap {
            path,
            volume: v.name.clone(),
            config_map,
            key,
            inner: on.inner,
        },
        None => DsLeads::OtherVolume {
            path,
            volume: v.name.clone(),
            kind: volume_kind(v),
        },
    }
}

/// Where a DeepSpeed config came from, read.
pub enum DsFound {
    None,
    Read {
        origin: String,
        config: DsConfig,
    },
    /// A path the manifests do not show (baked into the image, or a ConfigMap not applied).
    Unseen {
        origin: String,
    },
}

/// The DeepSpeed config the training command is given ([`deepspeed_config_path`]), read: inline
/// JSON (`--deepspeed '{…}'`), or a file of one of `config_maps` under a ConfigMap volume of the
/// pod. A config the tool cannot parse is a [`FlagError`] on its flag.
pub fn deepspeed_config(
    t: &Training,
    spec: &PodSpec,
    c: &Container,
    config_maps: &[&Obj],
) -> Result<DsFound, FlagError> {
    let text = |cm: &str, key: &str| {
        let o = config_maps.iter().find(|o| o.name() == cm)?;
        o.value["data"][key].as_str().map(str::to_string)
    };
    let Some(DsConfigPath { flag, value, leads }) =
        deepspeed_config_path(t, c, spec, |cm, key| text(cm, key).is_some())
    else {
        return Ok(DsFound::None);
    };
    let parse = |text: &str, origin: String| {
        DsConfig::parse(text)
            .map(|config| DsFound::Read { origin, config })
            .map_err(|e| FlagError::Invalid {
                flag: flag.clone(),
                value: value.clone(),
                expected: e.to_string(),
            })
    };
    let file = match &leads {
        DsLeads::Variable => {
            return Ok(DsFound::Unseen {
                origin: format!("{flag} {value}"),
            })
        }
        DsLeads::Inline => return parse(&value, flag.clone()),
        DsLeads::ConfigMap {
            config_map,
            key: Some(key),
            ..
        } => text(config_map, key).map(|t| (config_map, key, t)),
        _ => None,
    };
    match file {
        Some((cm, key, text)) => parse(&text, format!("{value} (ConfigMap {cm}, key {key})")),
        None => Ok(DsFound::Unseen {
            origin: value.clone(),
        }),
    }
}

/// A model's parameter count given as a lab parameter: a Kubernetes decimal quantity (`14M`,
/// `125000000`, `1.5e9`: [`crate::quantity`]) or with `B`/`T` for billions and trillions as model
/// cards write it (`7.6B`, `70B`). None unless it is a positive whole number.
pub fn parameter_count(s: &str) -> Option<i64> {
    let s = s.trim();
    let q = match s.strip_suffix(['B', 'b']) {
        Some(n) => format!("{n}G"),
        None => match s.strip_suffix('t') {
            Some(n) => format!("{n}T"),
            None => s.to_string(),
        },
    };
    Quantity::parse(&q).ok()?.count().ok().filter(|n| *n > 0)
}

/// DeepSpeed's buffer factor on its host-memory estimates (`memory.rst`, below).
pub const ZERO_BUFFER_FACTOR: f64 = 1.5;

/// Host memory per parameter ZeRO-3 with `zero.Init` (the HF Trainer uses it under ZeRO-3)
/// keeps in CPU memory: 18 bytes with the parameters and the optimizer offloaded (fp32 params,
/// grads, momentum, variance + fp16 params), 16 with the optimizer only; before
/// [`ZERO_BUFFER_FACTOR`], for the whole model (deepspeedai/DeepSpeed
/// `docs/code-docs/source/memory.rst`, "General RAM", ZeRO-3 cases 2 and 3). None below stage 3 or
/// without the optimizer offloaded to `cpu`.
pub fn zero3_host_bytes_per_param(config: &DsConfig) -> Option<f64> {
    let cpu = |o: &Option<Offload>| {
        o.as_ref()
            .is_some_and(|o| o.device == Some(OffloadDevice::Cpu))
    };
    match (cpu(&config.offload_optimizer), cpu(&config.offload_param)) {
        _ if config.effective_stage() != 3 => None,
        (true, true) => Some(18.0),
        (true, false) => Some(16.0),
        _ => None,
    }
}

/// Bytes as a binary memory quantity, rounded up, for messages: `361Mi`, `192Gi`.
pub fn memory_text(bytes: f64) -> String {
    const MI: f64 = 1024.0 * 1024.0;
    const GI: f64 = MI * 1024.0;
    if bytes >= GI {
        format!("{}Gi", (bytes / GI).ceil())
    } else {
        format!("{}Mi", (bytes / MI).ceil())
    }
}

/// What a training command says about numeric precision, each setting as written.
#[derive(Debug, Clone, Default)]
pub struct PrecisionFacts {
    /// Settings that turn BF16 on / FP16 on.
    pub bf16: Vec<String>,
    pub fp16: Vec<String>,
    /// Precision settings given as variables the manifest does not resolve.
    pub unknown: Vec<String>,
    /// Other precisions (`trainer.precision=32`).
    pub other: Vec<String>,
    /// Loss-scaling settings in effect.
    pub loss_scaling: Vec<String>,
    /// A DeepSpeed config the manifests do not show (its settings are not read).
    pub ds_unseen: Option<String>,
}

/// The precision a training command asks for, the way each tool reads it: Megatron-LM, Hugging
/// Face and NeMo flags ([`ParallelPlan`]), NeMo 2 `trainer.plugins`, `accelerate launch
/// --mixed_precision`, and the DeepSpeed config ([`deepspeed_config`]); and the loss scaling in
/// effect. A value the tool refuses at startup is a [`FlagError`].
pub fn precision(
    t: &Training,
    spec: &PodSpec,
    c: &Container,
    config_maps: &[&Obj],
) -> Result<PrecisionFacts, FlagError> {
    if t.is_megatron() {
        MegatronArgs::strict(&t.args)?;
        // A removed flag (`--batch-size`, `--warmup`, …) stops Megatron-LM at startup whatever
        // the precision (megatron/training/arguments.py `validate_args`, core_v0.19.0; the
        // conformance suite's `mg-batch-size-removed` and `mg-warmup-removed`).
        if let Some(r) = MegatronArgs::parse(&t.args)?.removed.first() {
            let name = r.spelling.trim_start_matches('-');
            let value = t
                .args
                .flags(&[name])
                .first()
                .and_then(|f| f.value())
                .unwrap_or_default()
                .to_string();
            return Err(FlagError::invalid(
                &r.spelling,
                &value,
                format!("no such flag: Megatron-LM stops on it ({})", r.message),
            ));
        }
    } else {
        // Any other script reads `--bf16`/`--fp16` as HfArgumentParser does (bool fields get
        // `type=string_to_bool`, `nargs="?"`: transformers `src/transformers/hf_argparser.py`),
        // so a next word that is no boolean stops it at startup ("Truthy value expected"), as a
        // stray positional stops an argparse `store_true` script. The conformance suite's
        // `hf-bf16-maybe` pins it against the real parser.
        for flag in ["bf16", "fp16"] {
            t.args.hf_bool(&[flag], false)?;
        }
    }
    let mut plan = ParallelPlan::from_args(&t.args)?;
    let ds = deepspeed_config(t, spec, c, config_maps)?;
    let mut facts = PrecisionFacts::default();
    match &ds {
        DsFound::Read { origin, config } => plan.add_deepspeed(config, origin),
        DsFound::Unseen { origin } => facts.ds_unseen = Some(origin.clone()),
        DsFound::None => {}
    }
    let mut push = |p: &Known<Precision>, written: String| match p {
        Known::Value(Precision::Bf16) => facts.bf16.push(written),
        Known::Value(Precision::Fp16) => facts.fp16.push(written),
        Known::Variable(_) => facts.unknown.push(written),
        Known::Value(_) => facts.other.push(written),
    };
    for s in &plan.precision.settings {
        push(&s.value, s.as_written());
    }
    // NeMo 2 recipes set precision with `trainer.plugins=bf16_mixed()` / `fp16_mixed()`
    // (NVIDIA/NeMo `nemo/collections/llm/recipes/precision/mixed_precision.py`).
    if let Some(o) = Overrides::parse(t.args.words()).get("trainer.plugins") {
        let v = o.value.clone().unwrap_or_default();
        if v.contains("bf16_mixed") {
            push(&Known::Value(Precision::Bf16), o.written.clone());
        } else if v.contains("fp16_mixed") {
            push(&Known::Value(Precision::Fp16), o.written.clone());
        }
    }
    // `accelerate launch --mixed_precision {no,fp16,bf16,fp8}` (accelerate `commands/launch.py`).
    for l in &t.launchers {
        if let LauncherCommand::Accelerate(a) = l {
            if let Some(s) = a.mixed_precision()? {
                let p = match s.known().map(String::as_str) {
                    Some("bf16") => Known::Value(Precision::Bf16),
                    Some("fp16") => Known::Value(Precision::Fp16),
                    Some(_) => continue,
                    None => Known::Variable(s.as_written()),
                };
                push(&p, s.as_written());
            }
        }
    }
    // Megatron-LM: `--loss-scale` makes a constant grad scaler under fp16 *and* bf16;
    // `--initial-loss-scale` starts fp16's dynamic scaler (megatron/core/optimizer/__init__.py
    // `get_megatron_optimizer`: "if loss-scale is provided, instantiate the constant scaler").
    for names in [["loss-scale"], ["initial-loss-scale"]] {
        if let Some(s) = t.args.float(&names)? {
            facts.loss_scaling.push(s.as_written());
        }
    }
    // DeepSpeed scales the loss only in fp16 mode (`fp16.loss_scale`: 0 dynamic, else static;
    // `initial_scale_power`). `"auto"` takes the HF Trainer's `--fp16`.
    if let DsFound::Read { origin, config } = &ds {
        let Some(fp16) = &config.fp16 else {
            return Ok(facts);
        };
        let hf_fp16 = t.args.lenient_bool(&["fp16"])?;
        let on = match fp16.enabled {
            Some(DsValue::Value(b)) => b,
            Some(DsValue::Auto) => hf_fp16.as_ref().and_then(Setting::known) == Some(&true),
            None => false,
        };
        if on {
            if let Some(v) = fp16.loss_scale {
                facts
                    .loss_scaling
                    .push(format!("{origin}:fp16.loss_scale={v}"));
            }
            if let Some(v) = fp16.initial_scale_power {
                let s = format!("{origin}:fp16.initial_scale_power={v}");
                facts.loss_scaling.push(s);
            }
        }
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn obj(v: Value) -> Obj {
        Obj::test(v)
    }

    fn first(v: Value) -> Option<String> {
        let o = obj(v);
        let w = Workload::from_obj(&o).unwrap().unwrap();
        first_rejection(&w).map(|r| r.text)
    }

    fn command(words: &str) -> Container {
        Container {
            name: "pytorch".into(),
            command: Some(words.split_whitespace().map(str::to_string).collect()),
            ..Container::default()
        }
    }

    #[test]
    fn rejections_follow_each_kinds_validation_then_the_mounts() {
        let bad_mount = json!([{"name": "nothing", "mountPath": "/x"}]);
        let job = |restart: Value| {
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"template": {"spec": {"restartPolicy": restart, "containers": [
                    {"name": "c", "image": "x", "volumeMounts": bad_mount}]}}}})
        };
        assert_eq!(
            first(job(Value::Null)).as_deref(),
            Some("spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"")
        );
        assert_eq!(
            first(job(json!("Never"))).as_deref(),
            Some("spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"nothing\"")
        );
        // The same object without its mount error passes `rejections` alone.
        let o = obj(job(json!("Never")));
        assert!(rejections(&Workload::from_obj(&o).unwrap().unwrap()).is_none());
        // A PyTorchJob: the training-operator webhook's rules (kit `parallel`).
        let pt = json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "pytorch", "image": "x"}]}}},
                "Worker": {"replicas": 0, "template": {"spec": {"containers": [
                    {"name": "pytorch", "image": "x"}]}}}}}});
        assert_eq!(
            first(pt).as_deref(),
            Some("spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1")
        );
    }

    #[test]
    fn the_deepspeed_config_flag_of_each_tool() {
        let flag = |words: &str| {
            let t = training_command(&command(words)).unwrap();
            deepspeed_config_flag(&t)
        };
        let pair = |f: &str, v: &str| Some((f.to_string(), v.to_string()));
        assert_eq!(
            flag("python train.py --deepspeed /cfg/ds.json"),
            pair("--deepspeed", "/cfg/ds.json")
        );
        assert_eq!(
            flag("deepspeed train.py --deepspeed --deepspeed_config ds.json"),
            pair("--deepspeed_config", "ds.json")
        );
        assert_eq!(
            flag("accelerate launch --deepspeed_config_file /c/ds.json train.py"),
            pair("--deepspeed_config_file", "/c/ds.json")
        );
        assert_eq!(flag("python train.py --bf16"), None);
        // A variable is a config the manifests do not show.
        let t = training_command(&command("python train.py --deepspeed $DS")).unwrap();
        let c = command("python");
        match deepspeed_config(&t, &PodSpec::default(), &c, &[]).unwrap() {
            DsFound::Unseen { origin } => assert_eq!(origin, "--deepspeed $DS"),
            _ => panic!("expected unseen"),
        }
    }

    #[test]
    fn a_deepspeed_config_path_is_followed_through_the_mounts_to_a_config_map_key() {
        let spec: PodSpec = serde_json::from_value(json!({"containers": [], "volumes": [
            {"name": "ds", "configMap": {"name": "ds-config"}},
            {"name": "listed", "configMap": {"name": "ds-config",
                "items": [{"key": "zero3.json", "path": "renamed.json"}]}},
            {"name": "scratch", "emptyDir": {}}]}))
        .unwrap();
        let leads = |words: &str, working_dir: Option<&str>| {
            let mut c = command(words);
            c.working_dir = working_dir.map(str::to_string);
            c.volume_mounts = serde_json::from_value(json!([
                {"name": "ds", "mountPath": "/cfg"},
                {"name": "listed", "mountPath": "/listed"},
                {"name": "scratch", "mountPath": "/scratch"},
                {"name": "gone", "mountPath": "/gone"}]))
            .unwrap();
            let t = training_command(&c).unwrap();
            deepspeed_config_path(&t, &c, &spec, |cm, k| {
                cm == "ds-config" && k == "zero3.json"
            })
            .map(|p| p.leads)
        };
        let cm = |key: Option<&str>, volume: &str, inner: &str| {
            Some(DsLeads::ConfigMap {
                path: format!("/{}/{inner}", if volume == "ds" { "cfg" } else { volume }),
                volume: volume.into(),
                config_map: "ds-config".into(),
                key: key.map(str::to_string),
                inner: inner.into(),
            })
        };
        let run = |rest: &str| format!("python train.py --deepspeed {rest}");
        assert_eq!(leads("python train.py", None), None);
        assert_eq!(leads(&run("$DS"), None), Some(DsLeads::Variable));
        assert_eq!(
            leads(&run("{\"zero_optimization\":{}}"), None),
            Some(DsLeads::Inline)
        );
        assert_eq!(leads(&run("ds.json"), None), Some(DsLeads::Relative));
        let path = |p: &str| p.to_string();
        assert_eq!(
            leads(&run("/etc/ds.json"), None),
            Some(DsLeads::NotMounted {
                path: path("/etc/ds.json")
            })
        );
        assert_eq!(
            leads(&run("/gone/ds.json"), None),
            Some(DsLeads::NoVolume {
                path: path("/gone/ds.json"),
                mount: "gone".into()
            })
        );
        assert_eq!(
            leads(&run("/scratch/ds.json"), None),
            Some(DsLeads::OtherVolume {
                path: path("/scratch/ds.json"),
                volume: "scratch".into(),
                kind: "emptyDir"
            })
        );
        // A relative path from the working directory; `items` rename a key's file.
        assert_eq!(
            leads(&run("zero3.json"), Some("/cfg")),
            cm(Some("zero3.json"), "ds", "zero3.json")
        );
        assert_eq!(
            leads(&run("/listed/renamed.json"), None),
            cm(Some("zero3.json"), "listed", "renamed.json")
        );
        assert_eq!(
            leads(&run("/listed/zero3.json"), None),
            cm(None, "listed", "zero3.json")
        );
    }

    #[test]
    fn precision_and_loss_scaling_as_each_tool_reads_them() {
        let facts = |words: &str| {
            let c = command(words);
            let t = training_command(&c).unwrap();
            precision(&t, &PodSpec::default(), &c, &[]).unwrap()
        };
        let f = facts("torchrun pretrain_gpt.py --bf16 --loss-scale 1024");
        assert_eq!(f.bf16.len(), 1);
        assert_eq!(f.loss_scaling, ["--loss-scale 1024"]);
        let f = facts("accelerate launch --mixed_precision fp16 train.py");
        assert_eq!(f.fp16.len(), 1);
        let inline =
            r#"python train.py --fp16 --deepspeed {"fp16":{"enabled":"auto","loss_scale":0}}"#;
        let f = facts(inline);
        assert_eq!(f.loss_scaling, ["--deepspeed:fp16.loss_scale=0"]);
        let c = command("accelerate launch --mixed_precision bf17 train.py");
        let t = training_command(&c).unwrap();
        assert!(precision(&t, &PodSpec::default(), &c, &[]).is_err());
        // A removed Megatron-LM flag stops the line too.
        let c = command("torchrun pretrain_gpt.py --bf16 --batch-size 8");
        let t = training_command(&c).unwrap();
        let e = precision(&t, &PodSpec::default(), &c, &[]).unwrap_err();
        assert_eq!(e.flag(), "--batch-size");
        assert!(e.to_string().contains("--micro-batch-size"), "{e}");
        // A script other than Megatron-LM's reads --bf16 as HfArgumentParser does: `false` is a
        // value, a word that is no boolean stops it.
        assert!(facts("python train.py --output_dir o --bf16 false")
            .bf16
            .is_empty());
        for line in [
            "python train.py --output_dir o --bf16 maybe",
            "torchrun --nproc_per_node=1 run_clm.py --fp16 sometimes",
        ] {
            let c = command(line);
            let t = training_command(&c).unwrap();
            let e = precision(&t, &PodSpec::default(), &c, &[]).unwrap_err();
            assert!(e.to_string().contains("a boolean"), "{line}: {e}");
        }
    }

    #[test]
    fn parameter_counts_memory_texts_and_the_zero3_estimate() {
        assert_eq!(parameter_count("14M"), Some(14_000_000));
        assert_eq!(parameter_count("7.6B"), Some(7_600_000_000));
        assert_eq!(parameter_count("1t"), Some(1_000_000_000_000));
        assert_eq!(parameter_count("125000000"), Some(125_000_000));
        assert_eq!(parameter_count("1.5e9"), Some(1_500_000_000));
        for bad in ["many", "-1B", "0", "14m", ""] {
            assert_eq!(parameter_count(bad), None, "{bad}");
        }
        // 14M × 18 × 1.5 bytes; 7.6B × 18 × 1.5.
        assert_eq!(memory_text(14e6 * 27.0), "361Mi");
        assert_eq!(memory_text(7.6e9 * 27.0), "192Gi");
        let ds = |s: &str| DsConfig::parse(s).unwrap();
        let both = r#"{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"},
            "offload_param": {"device": "cpu"}}}"#;
        assert_eq!(zero3_host_bytes_per_param(&ds(both)), Some(18.0));
        let opt = r#"{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}"#;
        assert_eq!(zero3_host_bytes_per_param(&ds(opt)), Some(16.0));
        let stage2 =
            r#"{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}"#;
        assert_eq!(zero3_host_bytes_per_param(&ds(stage2)), None);
    }

    #[test]
    fn refused_flags_and_missing_commands_share_their_hints() {
        let e = FlagError::MissingValue {
            flag: "--save_steps".into(),
        };
        let o = bad_flag("c", &e);
        assert_eq!(o.hint.as_deref(), Some("bad-flag"));
        assert_eq!(o.found.as_deref(), Some("--save_steps="));
        assert_eq!(no_command("c", "sleep 1").evidence["line"], "sleep 1");
    }
}
