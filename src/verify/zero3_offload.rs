//! Lab `zero3-offload`: a ConfigMap `ds-config` holding a DeepSpeed config with ZeRO stage 3 and
//! both the optimizer state and the parameters offloaded to CPU, mounted into the training job
//! `zero3-train` (a PyTorchJob or a batch/v1 Job: both run the same pods) whose command passes
//! `--deepspeed <the mounted file>`.
//!
//! Spec checks read the JSON inside the ConfigMap with the kit (`DsConfig`): the JSON is the
//! lab's subject, so a syntax error is a learner fail that shows line and column (a malformed
//! ConfigMap object is still bad input). `config-mounted` follows the training command's config
//! path (HF `--deepspeed PATH`, DeepSpeed's `--deepspeed_config PATH`, `accelerate launch
//! --deepspeed_config_file PATH`) through the container's volume mounts to a ConfigMap key. The
//! state check follows the job's uid to its pods.
//!
//! Shared with lab `checkpoint-strategy`: which volume a path in a container lies on, the
//! API server's volume-mount rules, and `pods-running` for either job kind.

use k8s_openapi::api::core::v1::{ConfigMap, Container, KeyToPath, Volume};
use serde_json::Value;

use crate::verify::kit::mounts::{absolute, clean, volume_at, volume_kind};
use crate::verify::kit::pods::{pod_states, ContainerEnd, PodState, STUCK};
use crate::verify::kit::training::{self, main_container, training_command, Training};
use crate::observe::kinds::{CONFIGMAPS, JOBS, PODS, PYTORCHJOBS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::{
    command_line, deepspeed_config_arg, is_var_ref, DsConfig, DsConfigError, Launch, Offload,
    OffloadDevice, ZeroStage,
};
use crate::verify::kit::conditions;
use crate::verify::kit::owned::{self, NoUid};
use crate::verify::kit::parallel;
use crate::verify::kit::resources;
use crate::verify::kit::workload::{PodTemplate, Workload};
use crate::verify::views::pytorch;
use crate::verify::{
    Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Verifier, MISSING_HINT,
};

pub struct Zero3Offload;

static PYTORCHJOBS_READ: Read = Read::lab(&PYTORCHJOBS);
static JOBS_READ: Read = Read::lab(&JOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
static READS: &[&Read] = &[&PYTORCHJOBS_READ, &JOBS_READ, &PODS_READ, &CONFIGMAPS_READ];

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

/// Host memory per parameter with ZeRO-3 and `zero.Init` (the HF Trainer uses it under ZeRO-3):
/// 18 bytes with both offloads (fp32 params, grads, momentum, variance + fp16 params), 16 with
/// the optimizer only, times DeepSpeed's buffer factor 1.5, split across the nodes
/// (deepspeedai/DeepSpeed `docs/code-docs/source/memory.rst`, "General RAM", ZeRO-3 cases 2/3).
const BYTES_BOTH_OFFLOADED: f64 = 18.0;
const BYTES_OPTIMIZER_OFFLOADED: f64 = 16.0;
const BUFFER_FACTOR: f64 = 1.5;

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
        let job = find_job(ctx, JOB, &PYTORCHJOBS_READ, &JOBS_READ, JOB_CHECKS);
        let found = match &job {
            Named::Found(o) => Some((
                *o,
                Workload::from_obj(o)?.ok_or_else(|| {
                    o.field_error(
                        "kind",
                        "expected a kubeflow.org/v1 PyTorchJob or a batch/v1 Job",
                    )
                })?,
            )),
            Named::Absent(_) => None,
        };
        let traced: Vec<(&PodTemplate, Traced)> = found
            .iter()
            .flat_map(|(_, w)| w.templates.iter())
            .map(|t| (t, trace(t, data.as_ref())))
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
        let Some((obj, w)) = &found else {
            if let Named::Absent(absent) = &job {
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
        j.push(ev(pods_running_of(ctx, &PODS_READ, RUNNING, obj, w)?));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// The objects.

/// `data` of a ConfigMap (core/v1: string values); `binaryData` is not a config file the tools
/// read as text.
type Data = std::collections::BTreeMap<String, String>;

fn config_map_data(o: &Obj) -> Result<Data, InputError> {
    let cm: ConfigMap = o.parse()?;
    Ok(cm.data.unwrap_or_default())
}

/// The job named `name`: a PyTorchJob or a batch/v1 Job, whichever exists (a PyTorchJob first).
/// A PyTorchJob read that fails because its CRD is not served leaves the Jobs: a lab that
/// accepts either kind must not be skipped for a missing training-operator. Another version of
/// either kind is absent ([`parallel::find_job`]); neither kind is the lab's `missing` text.
fn find_job<'a>(
    ctx: &JudgeCtx<'a>,
    name: &str,
    pytorchjobs: &Read,
    jobs: &Read,
    checks: &[&str],
) -> Named<'a> {
    let pt = ctx.list(pytorchjobs);
    let js = ctx.list(jobs);
    let has = |l: &Result<Vec<&Obj>, Unavailable>| {
        l.as_ref().is_ok_and(|l| l.iter().any(|o| o.name() == name))
    };
    if has(&pt) {
        return parallel::find_job(ctx, pytorchjobs, name, checks);
    }
    if has(&js) {
        return parallel::find_job(ctx, jobs, name, checks);
    }
    for r in [&js, &pt] {
        match r {
            Err(Unavailable::NotServed { .. }) | Ok(_) => {}
            Err(why) => {
                return Named::Absent(Judgement::every(checks, |c| Outcome::unavailable(c, why)))
            }
        }
    }
    let mut others: Vec<&str> = [&pt, &js]
        .into_iter()
        .flat_map(|l| l.iter().flatten().map(|o| o.name()))
        .collect();
    others.sort_unstable();
    let found = if others.is_empty() {
        "—".to_string()
    } else {
        others.join(", ")
    };
    let (p, b) = (pytorchjobs.kind, jobs.kind);
    let expected = format!(
        "{} {} {name} | {} {} {name}",
        p.api_version(),
        p.kind,
        b.api_version(),
        b.kind
    );
    let ns = ctx.target.namespace.clone();
    Named::Absent(Judgement::every(checks, |c| {
        Outcome::fail(c, expected.clone(), found.clone())
            .hint(MISSING_HINT)
            .with("name", name)
            .with("kind", format!("{} / {}", p.kind, b.kind))
            .with(
                "api_version",
                format!("{} / {}", p.api_version(), b.api_version()),
            )
            .with("namespace", &ns)
    }))
}

/// The ConfigMap the job mounts does not exist: the lab's `missing` text.
fn missing_config_map(check: &str) -> Outcome {
    Outcome::fail(check, format!("v1 ConfigMap {CONFIG_MAP}"), "—")
        .hint(MISSING_HINT)
        .with("name", CONFIG_MAP)
        .with("kind", "ConfigMap")
        .with("api_version", "v1")
}

/// The ConfigMap file at `inner` of a `configMap` or `projected` volume: the ConfigMap and the
/// key it comes from. With `items` only the listed paths exist, each from its key; without, every
/// key is a file of its name (core/v1 `ConfigMapVolumeSource.items`, `ConfigMapProjection`). The
/// key is None when the volume holds no file at that path; a key may also be missing from the
/// ConfigMap's data, which the caller checks. None: the volume shows no ConfigMap.
fn config_map_file(
    v: &Volume,
    inner: &str,
    ds_data: Option<&Data>,
) -> Option<(String, Option<String>)> {
    let mut sources: Vec<(&str, Option<&Vec<KeyToPath>>)> = Vec::new();
    if let Some(cm) = &v.config_map {
        sources.push((&cm.name, cm.items.as_ref()));
    }
    for p in v.projected.iter().flat_map(|p| p.sources.iter().flatten()) {
        if let Some(cm) = &p.config_map {
            sources.push((&cm.name, cm.items.as_ref()));
        }
    }
    let mut fallback = None;
    for (name, items) in &sources {
        match items {
            Some(items) => {
                if let Some(i) = items.iter().find(|i| clean(&i.path) == clean(inner)) {
                    return Some((name.to_string(), Some(i.key.clone())));
                }
            }
            None if *name == CONFIG_MAP && ds_data.is_some_and(|d| d.contains_key(inner)) => {
                return Some((name.to_string(), Some(inner.to_string())))
            }
            None => {
                fallback.get_or_insert((name.to_string(), Some(inner.to_string())));
            }
        }
    }
    fallback.or_else(|| sources.first().map(|(n, _)| (n.to_string(), None)))
}

/// What the API server refuses in the volume mounts of every container of every template
/// (kubernetes `pkg/apis/core/validation/validation.go` `ValidateVolumeMounts`: a mount names a
/// volume of the pod, has a `mountPath`, and no two mounts of a container share one), as
/// `(field, kubectl's text)`.
pub(super) fn volume_mount_rejections(w: &Workload) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in &w.templates {
        let init = t.spec.init_containers.iter().flatten().enumerate();
        let fields: Vec<(String, &Container)> = t
            .containers()
            .map(|(c, p)| (p.to_string(), c))
            .chain(init.map(|(i, c)| (t.field(&format!("initContainers[{i}]")), c)))
            .collect();
        for (field, c) in fields {
            let mut seen: Vec<&str> = Vec::new();
            for (i, m) in c.volume_mounts.iter().flatten().enumerate() {
                let at = format!("{field}.volumeMounts[{i}]");
                if m.name.is_empty() {
                    out.push((format!("{at}.name"), format!("{at}.name: Required value")));
                } else if !t.spec.volumes.iter().flatten().any(|v| v.name == m.name) {
                    out.push((
                        format!("{at}.name"),
                        format!("{at}.name: Not found: \"{}\"", m.name),
                    ));
                }
                if m.mount_path.is_empty() {
                    out.push((
                        format!("{at}.mountPath"),
                        format!("{at}.mountPath: Required value"),
                    ));
                } else if seen.contains(&m.mount_path.as_str()) {
                    out.push((
                        format!("{at}.mountPath"),
                        format!(
                            "{at}.mountPath: Invalid value: \"{}\": must be unique",
                            m.mount_path
                        ),
                    ));
                }
                seen.push(&m.mount_path);
            }
        }
    }
    out
}

/// The first thing the API server (or the training-operator's webhook) refuses in the job:
/// the PyTorchJob rules ([`parallel::pytorchjob_rejections`]) or a Job's (`restartPolicy`, pod
/// validation: [`training::rejections`]), then the volume mounts.
pub(super) fn first_rejection(w: &Workload) -> Option<(String, String)> {
    let kind = match w.pytorch() {
        Some(job) => parallel::pytorchjob_rejections(w, job)
            .into_iter()
            .next()
            .map(|r| (r.field, r.text)),
        None => training::rejections(w).map(|r| (r.field, r.text)),
    };
    kind.or_else(|| volume_mount_rejections(w).into_iter().next())
}

pub(super) fn rejected(check: &str, (field, text): &(String, String)) -> Outcome {
    Outcome::fail(check, "—", text.clone())
        .hint("rejected")
        .with("error", text)
        .with("field", field)
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

/// The config path the training command gives: HF `--deepspeed PATH` or DeepSpeed's
/// `--deepspeed_config PATH` ([`deepspeed_config_arg`]), else `accelerate launch
/// --deepspeed_config_file PATH`.
fn config_flag(t: &Training) -> Option<(String, String)> {
    if let Some(s) = deepspeed_config_arg(&t.args) {
        return Some((s.source.clone(), s.raw.clone().unwrap_or_default()));
    }
    t.launchers.iter().find_map(|l| match l {
        Launch::Accelerate(a) => a
            .deepspeed_config_file()
            .map(|p| ("--deepspeed_config_file".to_string(), p.to_string())),
        _ => None,
    })
}

fn trace(t: &PodTemplate, data: Option<&Data>) -> Traced {
    let Some((c, field)) = main_container(t) else {
        return Traced::NoCommand("—".into());
    };
    let Some(training) = training_command(c) else {
        return Traced::NoCommand(command_line(c, 160));
    };
    let Some((flag, value)) = config_flag(&training) else {
        return Traced::NoFlag;
    };
    if is_var_ref(&value) {
        return Traced::Variable(format!("{flag} {value}"));
    }
    if value.trim_start().starts_with('{') {
        return Traced::Inline(flag);
    }
    let Some(path) = absolute(&value, c) else {
        return Traced::Relative(flag, value);
    };
    let Some(on) = volume_at(&path, c, field, &t.spec) else {
        return Traced::NotMounted(flag, path);
    };
    let Some(v) = on.volume else {
        return Traced::OtherVolume(flag, path, on.mount.name.clone(), "—".into());
    };
    match config_map_file(v, &on.inner, data) {
        Some((cm, Some(key))) if cm == CONFIG_MAP => {
            let exists = data.is_some_and(|d| d.contains_key(&key));
            Traced::ConfigMap(flag, path, key, exists)
        }
        // `items` list no file at that path.
        Some((cm, None)) if cm == CONFIG_MAP => Traced::ConfigMap(flag, path, on.inner, false),
        Some((cm, _)) => Traced::OtherVolume(flag, path, v.name.clone(), format!("configMap {cm}")),
        None => Traced::OtherVolume(flag, path, v.name.clone(), volume_kind(v).to_string()),
    }
}

fn mounted(w: &Workload, traced: &[(&PodTemplate, Traced)], config_map_exists: bool) -> Outcome {
    if let Some(r) = first_rejection(w) {
        return rejected(MOUNTED, &r);
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

/// `offload_optimizer` / `offload_param` inside `zero_optimization`: device `cpu`, pinned
/// (`pin_memory` unset is pinned since DeepSpeed v0.19.5). The deprecated booleans
/// `cpu_offload` / `cpu_offload_param` still become a CPU offload (DeepSpeed
/// `runtime/zero/config.py` `new_param_fn`), so they pass too.
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
    let Some(Offload {
        device, pin_memory, ..
    }) = set
    else {
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
    ev(match (device, pin_memory) {
        (Some(OffloadDevice::Cpu), Some(false)) => Outcome::fail(
            check,
            format!("{path}.pin_memory: true"),
            format!("{path}.pin_memory: false"),
        )
        .hint("unpinned"),
        (Some(OffloadDevice::Cpu), _) => {
            return Outcome::pass(check).expected_found(expected, device_found("cpu"))
        }
        (Some(OffloadDevice::Nvme), _) => {
            Outcome::fail(check, expected, device_found("nvme")).hint("nvme")
        }
        (Some(OffloadDevice::None), _) => Outcome::fail(check, expected, device_found("none")),
        // DeepSpeed's pydantic default for `device` is `none` (`offload_config.py`).
        (None, _) => Outcome::fail(check, expected, device_found("— (none)")),
    })
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
/// parameters, against each training container's memory request.
fn advise_host_memory(
    ctx: &JudgeCtx,
    j: &mut Judgement,
    w: &Workload,
    config: &DsConfig,
) -> Result<(), InputError> {
    let cpu = |o: &Option<Offload>| {
        o.as_ref()
            .is_some_and(|o| o.device == Some(OffloadDevice::Cpu))
    };
    let per_param = match (cpu(&config.offload_optimizer), cpu(&config.offload_param)) {
        _ if config.effective_stage() != 3 => return Ok(()),
        (true, true) => BYTES_BOTH_OFFLOADED,
        (true, false) => BYTES_OPTIMIZER_OFFLOADED,
        _ => return Ok(()),
    };
    let Some(raw) = ctx.params.get("model_params") else {
        return Ok(());
    };
    let params = parse_count(raw).ok_or_else(|| InputError::Param {
        name: "model_params".into(),
        value: raw.into(),
        expected: "a parameter count such as 14M or 7.6B".into(),
    })?;
    let pods = w.total_replicas().max(1) as f64;
    let need = params * per_param * BUFFER_FACTOR / pods;
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
                .with("estimate", show_bytes(need))
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

/// `14M`, `7.6B`, `70B`, `125000000`: a parameter count.
fn parse_count(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1e3),
        (i, 'M' | 'm') => (&s[..i], 1e6),
        (i, 'B' | 'b') => (&s[..i], 1e9),
        (i, 'T' | 't') => (&s[..i], 1e12),
        _ => (s, 1.0),
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * mult)
}

/// Bytes as a memory quantity, rounded up: `361Mi`, `206Gi`.
fn show_bytes(b: f64) -> String {
    const MI: f64 = 1024.0 * 1024.0;
    const GI: f64 = MI * 1024.0;
    if b >= GI {
        format!("{}Gi", (b / GI).ceil())
    } else {
        format!("{}Mi", (b / MI).ceil())
    }
}

// ---------------------------------------------------------------------------------------------
// State: `pods-running` for a PyTorchJob or a batch/v1 Job.

/// How the job itself says it ended.
struct JobEnd {
    succeeded: bool,
    failed: Option<String>,
    suspended: bool,
}

fn job_end(obj: &Obj, w: &Workload) -> Result<JobEnd, InputError> {
    if let Some(v) = w.pytorch() {
        let failed = v
            .condition(pytorch::COND_FAILED)
            .filter(|c| c.status == "True")
            .map(|c| c.message.clone().or(c.reason.clone()).unwrap_or_default());
        return Ok(JobEnd {
            succeeded: v.is_true(pytorch::COND_SUCCEEDED),
            failed,
            suspended: v.suspended(),
        });
    }
    // batch/v1 JobConditionType `Complete`, `Failed`; `spec.suspend`.
    let conds =
        conditions::from_object(&obj.value).map_err(|e| obj.field_error("status.conditions", e))?;
    let failed = conditions::find(&conds, "Failed")
        .filter(|c| c.is_true())
        .map(|c| c.message.clone().or(c.reason.clone()).unwrap_or_default());
    let suspended = w
        .batch_job()
        .and_then(|b| b.spec.as_ref())
        .and_then(|s| s.suspend)
        .unwrap_or(false);
    Ok(JobEnd {
        succeeded: conditions::is_true(&conds, "Complete"),
        failed,
        suspended,
    })
}

/// The container that failed: terminated with a non-zero exit now, or waiting to restart after
/// one (`lastState`, as in `CrashLoopBackOff`).
fn crash(p: &PodState) -> Option<&ContainerEnd> {
    p.ends.iter().find(|e| {
        e.exit_code != 0 && (!e.earlier || p.waiting.iter().any(|(c, _, _)| *c == e.container))
    })
}

/// `pods-running`: every pod of the job Running or Succeeded (or the job completed).
///
/// Fail hints: `crashed` (evidence `pod`, `container`, `exit_code`, `message`: the container's
/// termination message, the stand-in's or the real tool's own words), `stuck` (a waiting reason
/// that does not clear: `pod`, `reason`, `message`), `job-failed` (`message`), `suspended`.
/// Pending messages: `no-pods`, `pods-unschedulable` (`pod`, `message`), `pods-starting` (`up`,
/// `replicas`).
pub(super) fn pods_running_of(
    ctx: &JudgeCtx,
    pods_read: &Read,
    check: &str,
    obj: &Obj,
    w: &Workload,
) -> Result<Outcome, InputError> {
    let pods = match ctx.list(pods_read) {
        Ok(p) => p,
        Err(why) => return Ok(Outcome::unavailable(check, &why)),
    };
    // A job without a uid was never created by an API server (the demo room's "applied"
    // manifests): it owns no pod yet.
    let states = match owned::owned_by(obj, &pods) {
        Ok(o) => pod_states(&o.current)?,
        Err(NoUid::NotFromACluster) => Vec::new(),
    };
    let end = job_end(obj, w)?;
    let replicas = w.total_replicas();
    let expected = format!("pods Running|Succeeded: {replicas}");
    let ev = |o: Outcome| o.with("replicas", replicas);
    if end.succeeded {
        return Ok(ev(Outcome::pass(check).expected_found(
            expected,
            format!("{} {} Complete", w.kind.kind(), obj.name()),
        )));
    }
    for p in &states {
        if let Some(e) = crash(p) {
            let message = e
                .message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .unwrap_or(&e.reason)
                .to_string();
            return Ok(ev(Outcome::fail(
                check,
                expected,
                format!(
                    "{}/{}: {} (exit {})",
                    p.name, e.container, e.reason, e.exit_code
                ),
            )
            .hint("crashed")
            .with("pod", &p.name)
            .with("container", &e.container)
            .with("exit_code", e.exit_code)
            .with("message", message)));
        }
        if let Some((c, reason, message)) = p
            .waiting
            .iter()
            .find(|(_, r, _)| STUCK.contains(&r.as_str()))
        {
            let found = format!("{}/{c}: {reason}", p.name);
            return Ok(ev(Outcome::fail(check, expected, found.clone())
                .hint("stuck")
                .with("pod", &p.name)
                .with("reason", reason)
                .with(
                    "message",
                    if message.is_empty() {
                        found
                    } else {
                        message.clone()
                    },
                )));
        }
    }
    if let Some(message) = end.failed {
        return Ok(ev(Outcome::fail(
            check,
            expected,
            format!("{} {} Failed=True", w.kind.kind(), obj.name()),
        )
        .hint("job-failed")
        .with("message", message)));
    }
    if end.suspended {
        let field = if w.pytorch().is_some() {
            "spec.runPolicy.suspend"
        } else {
            "spec.suspend"
        };
        return Ok(ev(Outcome::fail(check, expected, format!("{field}: true"))
            .hint("suspended")
            .with("field", field)));
    }
    let up: Vec<String> = states
        .iter()
        .filter(|p| p.phase == "Running" || p.phase == "Succeeded")
        .map(|p| format!("{} {}", p.name, p.phase))
        .collect();
    if up.len() as i64 >= replicas && replicas > 0 {
        return Ok(ev(
            Outcome::pass(check).expected_found(expected, up.join(", "))
        ));
    }
    if states.is_empty() {
        return Ok(ev(Outcome::pending(
            check,
            Reason::Message("no-pods".into()),
        )));
    }
    if let Some(p) = states.iter().find(|p| p.unschedulable.is_some()) {
        return Ok(ev(Outcome::pending(
            check,
            Reason::Message("pods-unschedulable".into()),
        )
        .with("pod", &p.name)
        .with("message", p.unschedulable.clone().unwrap_or_default())));
    }
    Ok(ev(Outcome::pending(
        check,
        Reason::Message("pods-starting".into()),
    )
    .with("up", up.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMapVolumeSource, PodSpec, VolumeMount};

    fn container(mounts: &[(&str, &str, Option<&str>)], wd: Option<&str>) -> Container {
        Container {
            name: "trainer".into(),
            working_dir: wd.map(str::to_string),
            volume_mounts: Some(
                mounts
                    .iter()
                    .map(|(n, p, s)| VolumeMount {
                        name: n.to_string(),
                        mount_path: p.to_string(),
                        sub_path: s.map(str::to_string),
                        ..VolumeMount::default()
                    })
                    .collect(),
            ),
            ..Container::default()
        }
    }

    fn cm_volume(name: &str, cm: &str, items: &[(&str, &str)]) -> Volume {
        Volume {
            name: name.into(),
            config_map: Some(ConfigMapVolumeSource {
                name: cm.into(),
                items: (!items.is_empty()).then(|| {
                    items
                        .iter()
                        .map(|(k, p)| KeyToPath {
                            key: k.to_string(),
                            path: p.to_string(),
                            mode: None,
                        })
                        .collect()
                }),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        }
    }

    #[test]
    fn paths_are_made_absolute_from_the_working_dir() {
        let c = container(&[], Some("/work"));
        assert_eq!(absolute("ds.json", &c).as_deref(), Some("/work/ds.json"));
        assert_eq!(absolute("/a/./b/../c//d", &c).as_deref(), Some("/a/c/d"));
        assert_eq!(absolute("ds.json", &container(&[], None)), None);
    }

    #[test]
    fn the_deepest_mount_holds_a_path_with_its_sub_path() {
        let c = container(
            &[("data", "/mnt", None), ("ckpt", "/mnt/ckpt/", Some("run1"))],
            None,
        );
        let spec = PodSpec::default();
        let on = volume_at("/mnt/ckpt/x/y", &c, "c", &spec).unwrap();
        assert_eq!(on.mount.name, "ckpt");
        assert_eq!(on.inner, "run1/x/y");
        assert_eq!(on.mount_field, "c.volumeMounts[1]");
        assert!(on.volume.is_none());
        assert_eq!(
            volume_at("/mnt", &c, "c", &spec).unwrap().mount.name,
            "data"
        );
        // A sibling with a common prefix is not under the mount.
        assert!(volume_at("/mntx/a", &c, "c", &spec).is_none());
        let root = container(&[("all", "/", None)], None);
        assert_eq!(volume_at("/a/b", &root, "c", &spec).unwrap().inner, "a/b");
    }

    #[test]
    fn config_map_files_come_from_their_key() {
        let mut data = Data::new();
        data.insert("ds_config.json".into(), "{}".into());
        let plain = cm_volume("v", CONFIG_MAP, &[]);
        let file = |key: &str| Some((CONFIG_MAP.to_string(), Some(key.to_string())));
        assert_eq!(
            config_map_file(&plain, "ds_config.json", Some(&data)),
            file("ds_config.json")
        );
        // Without items every key is a file: a name that is no key is returned for the caller
        // to find missing.
        assert_eq!(
            config_map_file(&plain, "ds.json", Some(&data)),
            file("ds.json")
        );
        let items = cm_volume("v", CONFIG_MAP, &[("ds_config.json", "zero3/ds.json")]);
        assert_eq!(
            config_map_file(&items, "zero3/ds.json", Some(&data)),
            file("ds_config.json")
        );
        // With items, a path not listed is no file at all, even when a key has that name.
        assert_eq!(
            config_map_file(&items, "ds_config.json", Some(&data)),
            Some((CONFIG_MAP.to_string(), None))
        );
        let empty = Volume {
            name: "e".into(),
            ..Volume::default()
        };
        assert_eq!(config_map_file(&empty, "x", Some(&data)), None);
    }

    #[test]
    fn parameter_counts_and_byte_sizes() {
        assert_eq!(parse_count("14M"), Some(14e6));
        assert_eq!(parse_count("7.6B"), Some(7.6e9));
        assert_eq!(parse_count("125000000"), Some(125e6));
        assert_eq!(parse_count("many"), None);
        assert_eq!(parse_count("-1B"), None);
        // 14M × 18 × 1.5 bytes.
        assert_eq!(show_bytes(14e6 * 27.0), "361Mi");
        assert_eq!(show_bytes(7.6e9 * 27.0), "192Gi");
    }
}
