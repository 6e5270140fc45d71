//! Lab `zero3-offload`: a ConfigMap `ds-config` holding a DeepSpeed config with ZeRO stage 3 and
//! both the optimizer state and the parameters offloaded to CPU, mounted into the training job
//! `zero3-train` (a PyTorchJob or a batch/v1 Job: both run the same pods) whose command passes
//! `--deepspeed <the mounted file>`.
//!
//! Spec checks read the JSON inside the ConfigMap with the kit (`DsConfig`): the JSON is the
//! lab's subject, so a syntax error is a learner fail that shows line and column (a malformed
//! ConfigMap object is still bad input). `config-mounted` follows the training command's config
//! path (HF `--deepspeed PATH`, DeepSpeed's `--deepspeed_config PATH`, `accelerate launch
//! --deepspeed_config_file PATH`) through the container's volume mounts to a ConfigMap key
//! (kit `job::deepspeed_config_path`), after what the API server refuses (kit
//! `job::first_rejection`). The state check is the kit's `pods-running` rule (`pods::running`).

use serde_json::Value;

use crate::observe::kinds::{CONFIGMAPS, PODS, PYTORCHJOBS};
use crate::observe::InputError;
use crate::verify::kit::cmdline::{
    command_line, DsConfig, DsConfigError, Offload, OffloadDevice, ZeroStage,
};
use crate::verify::kit::k8s::mounts::{config_map_data, Data};
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::{PodTemplate, Workload};
use crate::verify::kit::training::job::{
    self, find_training_job, main_container, training_command, DsConfigPath, DsLeads, TrainingJob,
};
use crate::verify::kit::training::job_pods;
use crate::verify::kit::training::trainjob::{trainjob_reads, JOBS_READ, TRAINJOBS_READ};
use crate::verify::{
    Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Verifier, MISSING_HINT,
};

pub struct Zero3Offload;

static PYTORCHJOBS_READ: Read = Read::lab(&PYTORCHJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
/// A PyTorchJob, a batch/v1 Job or a TrainJob (with the runtimes it may name and the JobSet
/// between it and its Jobs).
static READS: &[&Read] =
    trainjob_reads![jobs first, &PYTORCHJOBS_READ; &PODS_READ, &CONFIGMAPS_READ];

const JOB: &str = "zero3-train";
const CONFIG_MAP: &str = "ds-config";
const PARSES: &str = "config-parses";
const STAGE3: &str = "zero-stage-3";
const OPTIMIZER_CPU: &str = "offload-optimizer-cpu";
const PARAM_CPU: &str = "offload-param-cpu";
const MOUNTED: &str = "config-mounted";
const RUNNING: &str = "pods-running";
const CHECKS: &[&str] = &[PARSES, STAGE3, OPTIMIZER_CPU, PARAM_CPU, MOUNTED, RUNNING];
/// The checks judged from the JSON in the ConfigMap.
const CONFIG_CHECKS: &[&str] = &[PARSES, STAGE3, OPTIMIZER_CPU, PARAM_CPU];
/// The checks judged from the job.
const JOB_CHECKS: &[&str] = &[MOUNTED, RUNNING];

impl Verifier for Zero3Offload {
    fn lab_id(&self) -> &'static str {
        "zero3-offload"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let ns = ctx.target.namespace.as_str();
        let ev = |o: Outcome| {
            o.with("job", JOB)
                .with("namespace", ns)
                .with("configmap", CONFIG_MAP)
        };
        let mut j = Judgement::default();

        // The ConfigMap's keys, read as core/v1 (a malformed object is bad input); when it is
        // missing or unreadable, what `named` says for the config checks.
        let (data, cm_absent) = match ctx.named(&CONFIGMAPS_READ, CONFIG_MAP, CONFIG_CHECKS) {
            Named::Found(o) => (Some(config_map_data(o)?), None),
            Named::Absent(a) => (None, Some(a)),
        };

        // The job, and where each of its templates' config path leads.
        let jobs = [&PYTORCHJOBS_READ, &JOBS_READ, &TRAINJOBS_READ];
        let job = find_training_job(ctx, JOB, &jobs, MOUNTED, JOB_CHECKS)?;
        let found = match &job {
            TrainingJob::Found(w) => Some(w),
            TrainingJob::Absent(_) => None,
        };
        if let Some(a) = found.and_then(job::run_clm_advice) {
            j.advise(a);
        }
        let launch = found.and_then(mpi_launch);
        let traced: Vec<(&PodTemplate, Traced)> = found
            .iter()
            .flat_map(|w| w.templates.iter())
            .map(|t| (t, trace(t, launch, data.as_ref())))
            .collect();

        // Spec: the config, from the key the job reads (else the only key).
        let mut config = None;
        match (&data, &cm_absent) {
            (Some(data), _) => match read_config(data, &traced) {
                Ok((key, text, c)) => {
                    let raw: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    let ev = |o: Outcome| ev(o).with("key", &key);
                    j.push(ev(Outcome::pass(PARSES)
                        .expected_found("JSON", format!("{CONFIG_MAP}[{key}]"))));
                    j.push(ev(stage3(&c)));
                    j.push(ev(offload(OPTIMIZER_CPU, "offload_optimizer", &c, &raw)));
                    j.push(ev(offload(PARAM_CPU, "offload_param", &c, &raw)));
                    advise_nvme(&mut j, &c);
                    advise_unpinned(&mut j, &c);
                    config = Some(c);
                }
                Err(o) => {
                    j.push(ev(*o));
                    for c in [STAGE3, OPTIMIZER_CPU, PARAM_CPU] {
                        j.push(ev(Outcome::skipped(
                            c,
                            Reason::Message("config-unread".into()),
                        )));
                    }
                }
            },
            (None, Some(absent)) => {
                for c in CONFIG_CHECKS {
                    if let Some(o) = absent.get(c) {
                        j.push(ev(o.clone()));
                    }
                }
            }
            (None, None) => {}
        }

        // Spec: the job mounts the ConfigMap and points its config flag at that key.
        let Some(w) = found else {
            if let TrainingJob::Absent(absent) = &job {
                for c in JOB_CHECKS {
                    if let Some(o) = absent.get(c) {
                        j.push(o.clone());
                    }
                }
            }
            return Ok(j);
        };
        let ev = |o: Outcome| ev(o).with("resource", w.kind.kind().to_ascii_lowercase());
        j.push(ev(mounted(w, &traced, data.is_some())));
        if let Some(config) = &config {
            advise_host_memory(ctx, &mut j, w, config)?;
        }

        // State: the pods of this job, by uid.
        j.push(ev(job_pods::running_of(ctx, &PODS_READ, RUNNING, w)?));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// The objects.

/// The ConfigMap the job mounts does not exist: the lab's `missing` text.
fn missing_config_map(check: &str) -> Outcome {
    Outcome::fail(check, format!("v1 ConfigMap {CONFIG_MAP}"), "—")
        .hint(MISSING_HINT)
        .with("name", CONFIG_MAP)
        .with("kind", "ConfigMap")
        .with("api_version", "v1")
        .with("accepted", "`v1` ConfigMap")
}

// ---------------------------------------------------------------------------------------------
// The config path of each template.

/// Where one template's DeepSpeed config path leads.
enum Traced {
    NoCommand(String),
    NoFlag,
    Variable(String),
    Inline(String),
    /// A relative path and no `workingDir`: (flag, path).
    Relative(String, String),
    /// On the container's own filesystem: (flag, path).
    NotMounted(String, String),
    /// On a volume that is not a ConfigMap, or another ConfigMap: (flag, path, volume, what).
    OtherVolume(String, String, String, String),
    /// A file of ConfigMap `ds-config`: (flag, path, key, whether the key exists).
    ConfigMap(String, String, String, bool),
}

/// The container that launches training for a TrainJob over an MPI runtime
/// (`deepspeed-distributed`: kubeflow/trainer v2.3.0 manifests/base/runtimes): its `mpirun`
/// starts the ranks over SSH in the worker pods, which themselves only run `sshd`.
fn mpi_launch<'a>(w: &'a Workload) -> Option<&'a k8s_openapi::api::core::v1::Container> {
    let v = w.trainjob()?;
    v.ml_policy.as_ref()?.mpi.as_ref()?;
    w.templates
        .iter()
        .find_map(|t| main_container(t).filter(|(_, p)| *p == job::TRAINER_FIELD))
        .map(|(c, _)| c)
}

/// Where one template's config path leads. A template whose container starts no training of
/// its own (an MPI runtime's `sshd` workers) runs the ranks `launch` starts: its config path is
/// read from `launch`'s command and looked up in this template's mounts.
fn trace(
    t: &PodTemplate,
    launch: Option<&k8s_openapi::api::core::v1::Container>,
    data: Option<&Data>,
) -> Traced {
    let Some((c, _)) = main_container(t) else {
        return Traced::NoCommand("—".into());
    };
    let Some(training) = training_command(c).or_else(|| launch.and_then(training_command)) else {
        return Traced::NoCommand(command_line(c, 160));
    };
    // Only a key of `ds-config` counts as there; the kit follows the path.
    let exists =
        |cm: &str, key: &str| cm == CONFIG_MAP && data.is_some_and(|d| d.contains_key(key));
    let Some(DsConfigPath { flag, value, leads }) =
        job::deepspeed_config_path(&training, c, &t.spec, exists)
    else {
        return Traced::NoFlag;
    };
    match leads {
        DsLeads::Variable => Traced::Variable(format!("{flag} {value}")),
        DsLeads::Inline => Traced::Inline(flag),
        DsLeads::Relative => Traced::Relative(flag, value),
        DsLeads::NotMounted { path } => Traced::NotMounted(flag, path),
        DsLeads::NoVolume { path, mount } => Traced::OtherVolume(flag, path, mount, "—".into()),
        DsLeads::OtherVolume { path, volume, kind } => {
            Traced::OtherVolume(flag, path, volume, kind.to_string())
        }
        DsLeads::ConfigMap {
            path,
            config_map,
            key,
            inner,
            ..
        } if config_map == CONFIG_MAP => match key {
            Some(key) => {
                let exists = data.is_some_and(|d| d.contains_key(&key));
                Traced::ConfigMap(flag, path, key, exists)
            }
            // `items` list no file at that path.
            None => Traced::ConfigMap(flag, path, inner, false),
        },
        DsLeads::ConfigMap {
            path,
            volume,
            config_map,
            ..
        } => Traced::OtherVolume(flag, path, volume, format!("configMap {config_map}")),
    }
}

fn mounted(w: &Workload, traced: &[(&PodTemplate, Traced)], config_map_exists: bool) -> Outcome {
    if let Some(r) = job::first_rejection(w) {
        return r.outcome(MOUNTED);
    }
    let expected = format!("--deepspeed <mountPath>/<key> (ConfigMap {CONFIG_MAP})");
    let mut ok = Vec::new();
    for (t, tr) in traced {
        let container = main_container(t)
            .map(|(c, _)| c.name.clone())
            .unwrap_or_default();
        let ev = |o: Outcome| o.with("role", &t.role).with("container", &container);
        let fail = |found: String| Outcome::fail(MOUNTED, expected.clone(), found.clone());
        let o = match tr {
            Traced::ConfigMap(flag, path, key, true) => {
                ok.push(format!("{}: {flag} {path} → {CONFIG_MAP}[{key}]", t.role));
                continue;
            }
            Traced::ConfigMap(..) if !config_map_exists => missing_config_map(MOUNTED),
            Traced::ConfigMap(flag, path, key, false) => {
                fail(format!("{flag} {path} → {CONFIG_MAP}[{key}]"))
                    .hint("no-key")
                    .with("path", path)
                    .with("key", key)
            }
            Traced::NoCommand(line) => fail(line.clone()).hint("no-command").with("line", line),
            Traced::NoFlag => fail("—".into()).hint("no-flag"),
            Traced::Variable(written) => fail(written.clone())
                .hint("variable")
                .with("found", written),
            Traced::Inline(flag) => fail(format!("{flag} {{…}}"))
                .hint("inline")
                .with("flag", flag),
            Traced::Relative(flag, path) => fail(format!("{flag} {path}"))
                .hint("relative")
                .with("path", path),
            Traced::NotMounted(flag, path) => fail(format!("{flag} {path}")).with("path", path),
            Traced::OtherVolume(flag, path, volume, what) => {
                fail(format!("{flag} {path} → {what}"))
                    .hint("other-volume")
                    .with("path", path)
                    .with("volume", volume)
                    .with("what", what)
            }
        };
        return ev(o);
    }
    if traced.is_empty() {
        return Outcome::fail(MOUNTED, expected, "—")
            .hint("no-command")
            .with("line", "—");
    }
    Outcome::pass(MOUNTED).expected_found(expected, ok.join("; "))
}

// ---------------------------------------------------------------------------------------------
// The config.

/// The key the job reads (else the only key, else the only `.json` key), its text and the
/// config; or the `config-parses` failure.
fn read_config(
    data: &Data,
    traced: &[(&PodTemplate, Traced)],
) -> Result<(String, String, DsConfig), Box<Outcome>> {
    let by_job = traced.iter().find_map(|(_, t)| match t {
        Traced::ConfigMap(_, _, key, true) => Some(key.clone()),
        _ => None,
    });
    let keys: Vec<&String> = data.keys().collect();
    let json: Vec<&&String> = keys.iter().filter(|k| k.ends_with(".json")).collect();
    let key = match (by_job, keys.as_slice(), json.as_slice()) {
        (Some(k), _, _) => k,
        (None, [], _) => {
            return Err(Box::new(
                Outcome::fail(PARSES, "JSON", format!("{CONFIG_MAP}: data —")).hint("empty"),
            ))
        }
        (None, [only], _) => (*only).clone(),
        (None, _, [only]) => (**only).clone(),
        (None, all, _) => {
            let keys = all
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Box::new(
                Outcome::fail(PARSES, "JSON", format!("{CONFIG_MAP}[{keys}]"))
                    .hint("which-key")
                    .with("keys", keys),
            ));
        }
    };
    let text = data.get(&key).cloned().unwrap_or_default();
    let o = match DsConfig::parse(&text) {
        Ok(c) => return Ok((key, text, c)),
        Err(DsConfigError::Syntax {
            line,
            column,
            message,
        }) => Outcome::fail(
            PARSES,
            "JSON",
            format!("{CONFIG_MAP}[{key}]:{line}:{column}"),
        )
        .with("key", &key)
        .with("line", line)
        .with("column", column)
        .with("message", message),
        Err(DsConfigError::Field { path, message }) => Outcome::fail(
            PARSES,
            "DeepSpeed config",
            format!("{CONFIG_MAP}[{key}]: {path}"),
        )
        .hint("field")
        .with("key", &key)
        .with("field", path)
        .with("message", message),
    };
    Err(Box::new(o))
}

fn stage3(config: &DsConfig) -> Outcome {
    let expected = "zero_optimization.stage: 3";
    let stage = config.effective_stage();
    if stage == 3 {
        return Outcome::pass(STAGE3).expected_found(expected, expected);
    }
    let found = match config.zero_stage {
        None => "zero_optimization.stage: —".to_string(),
        Some(ZeroStage::Legacy(b)) => format!("zero_optimization: {b}"),
        Some(ZeroStage::Stage(s)) => format!("zero_optimization.stage: {s}"),
    };
    let o = Outcome::fail(STAGE3, expected, found.clone())
        .with("found", found)
        .with("stage", stage);
    // `offload_param` is passed only to the stage-3 optimizer (DeepSpeed `runtime/engine.py`):
    // below stage 3 it is silently ignored.
    let param_offloaded = config
        .offload_param
        .as_ref()
        .is_some_and(|o| o.device.is_some_and(|d| d != OffloadDevice::None));
    match config.zero_stage {
        Some(ZeroStage::Legacy(_)) => o.hint("legacy"),
        _ if param_offloaded => o.hint("param-ignored"),
        _ => o,
    }
}

/// `offload_optimizer` / `offload_param` inside `zero_optimization`: device `cpu` (pinned or
/// not: [`advise_unpinned`]). The deprecated booleans `cpu_offload` / `cpu_offload_param` still
/// become a CPU offload (DeepSpeed `runtime/zero/config.py` `new_param_fn`), so they pass too.
fn offload(check: &str, section: &str, config: &DsConfig, raw: &Value) -> Outcome {
    let path = format!("zero_optimization.{section}");
    let expected = format!("{path}.device: cpu");
    let set = match section {
        "offload_optimizer" => config.offload_optimizer.as_ref(),
        _ => config.offload_param.as_ref(),
    };
    let deprecated = if section == "offload_optimizer" {
        "cpu_offload"
    } else {
        "cpu_offload_param"
    };
    let ev = |o: Outcome| o.with("path", &path).with("section", section);
    let Some(Offload { device, .. }) = set else {
        if raw["zero_optimization"][deprecated] == Value::Bool(true) {
            return Outcome::pass(check)
                .expected_found(expected, format!("zero_optimization.{deprecated}: true"));
        }
        let o = Outcome::fail(check, expected, format!("{path}: —"));
        return ev(if raw.get(section).is_some() {
            o.hint("misplaced")
        } else {
            o
        });
    };
    let device_found = |d: &str| format!("{path}.device: {d}");
    ev(match device {
        Some(OffloadDevice::Cpu) => {
            return Outcome::pass(check).expected_found(expected, device_found("cpu"))
        }
        Some(OffloadDevice::Nvme) => {
            Outcome::fail(check, expected, device_found("nvme")).hint("nvme")
        }
        Some(OffloadDevice::None) => Outcome::fail(check, expected, device_found("none")),
        // DeepSpeed's pydantic default for `device` is `none` (`offload_config.py`).
        None => Outcome::fail(check, expected, device_found("— (none)")),
    })
}

/// A CPU offload with `pin_memory: false` still offloads: unpinned host memory only makes each
/// transfer slower, and it is what the lab itself recommends on hosts with a low `ulimit -l`
/// (page-locked memory counts against it: DeepSpeed `docs/code-docs/source/memory.rst`, "Pinned
/// Memory"). So it is advice, naming every such `pin_memory`, not a fail. Unset is pinned
/// (`offload_config.py`: `pin_memory: bool = True` since v0.19.5).
fn advise_unpinned(j: &mut Judgement, config: &DsConfig) {
    let unpinned: Vec<String> = [
        ("offload_optimizer", &config.offload_optimizer),
        ("offload_param", &config.offload_param),
    ]
    .into_iter()
    .filter(|(_, o)| {
        o.as_ref()
            .is_some_and(|o| o.device == Some(OffloadDevice::Cpu) && o.pin_memory == Some(false))
    })
    .map(|(section, _)| format!("zero_optimization.{section}.pin_memory"))
    .collect();
    if !unpinned.is_empty() {
        j.advise(Advice::new("unpinned").with("paths", unpinned.join(", ")));
    }
}

/// NVMe offload works only with ZeRO stage 3 (DeepSpeed `docs/_pages/config-json.md`: "NVMe
/// offloading is available only with ZeRO stage 3", for the optimizer too) and writes to
/// `nvme_path`.
fn advise_nvme(j: &mut Judgement, config: &DsConfig) {
    for (section, o) in [
        ("offload_optimizer", &config.offload_optimizer),
        ("offload_param", &config.offload_param),
    ] {
        let Some(o) = o.as_ref().filter(|o| o.device == Some(OffloadDevice::Nvme)) else {
            continue;
        };
        if config.effective_stage() != 3 || o.nvme_path.as_deref().is_none_or(str::is_empty) {
            j.advise(
                Advice::new("nvme")
                    .with("section", section)
                    .with("stage", config.effective_stage())
                    .with(
                        "nvme_path",
                        o.nvme_path.clone().unwrap_or_else(|| "—".into()),
                    ),
            );
        }
    }
}

/// The host memory ZeRO-3 with CPU offload keeps per pod for a model of `model_params`
/// parameters (kit `job::zero3_host_bytes_per_param`), against each training container's
/// memory request.
fn advise_host_memory(
    ctx: &JudgeCtx,
    j: &mut Judgement,
    w: &Workload,
    config: &DsConfig,
) -> Result<(), InputError> {
    let Some(per_param) = job::zero3_host_bytes_per_param(config) else {
        return Ok(());
    };
    let Some(raw) = ctx.params.get("model_params") else {
        return Ok(());
    };
    let params = job::parameter_count(raw).ok_or_else(|| InputError::Param {
        name: "model_params".into(),
        value: raw.into(),
        expected: "a parameter count such as 14M or 7.6B".into(),
        expected_ja: "14M や 7.6B のようなパラメーター数".into(),
    })?;
    let pods = w.total_replicas().max(1) as f64;
    let need = params as f64 * per_param * job::ZERO_BUFFER_FACTOR / pods;
    for t in &w.templates {
        let Some((c, field)) = main_container(t) else {
            continue;
        };
        let path = format!("{field}.resources.requests.memory");
        let have =
            resources::effective_request(c, "memory").map_err(|e| w.obj.field_error(&path, e))?;
        if have.as_ref().is_some_and(|q| q.bytes() as f64 >= need) {
            continue;
        }
        j.advise(
            Advice::new("host-memory")
                .with("params", raw)
                .with("bytes", per_param)
                .with("estimate", job::memory_text(need))
                .with("pods", pods)
                .with(
                    "request",
                    have.map_or("—".to_string(), |q| q.as_str().to_string()),
                )
                .with("field", path)
                .with("role", &t.role),
        );
        break;
    }
    Ok(())
}
