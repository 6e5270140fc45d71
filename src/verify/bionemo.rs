//! Lab `bionemo` (quiz question 6): a batch/v1 Job `bionemo-esm2` that fine-tunes ESM-2 with the
//! BioNeMo Framework 2.x container, set up the way NVIDIA's container needs it on Kubernetes:
//! a pinned image, GPUs in limits, a memory-backed `/dev/shm` for the data loader workers, and
//! the NGC API key from a Secret.
//!
//! Spec checks read the Job's pod template (also with `--files`). State checks follow the Job's
//! uid to its pods, and look the referenced Secret up by name in a metadata-only list
//! (`kinds::SECRETS` is only ever read as `PartialObjectMetadata`): Secret data is never read.
//! Texts live in lab.yaml; this file decides and reports values.
//!
//! The image reference and the Job's pods-running rule are shared with lab `optimum-neuron`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Volume};

use crate::verify::kit::pods::{pod_states, PodState, STUCK};
use crate::verify::kit::training::{rejections, wrong_version, Rejection};
use crate::facts::instances::GPU;
use crate::observe::kinds::{JOBS, PODS, SECRETS};
use crate::observe::{InputError, Obj};
use crate::verify::kit::conditions;
use crate::verify::kit::owned::{self, NoUid};
use crate::verify::kit::parallel::{GpuNodes, Unknown};
use crate::verify::kit::quantity::Quantity;
use crate::verify::kit::resources;
use crate::verify::kit::workload::{PodTemplate, Workload};
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Verifier};

pub struct Bionemo;

static JOBS_READ: Read = Read::lab(&JOBS);
static PODS_READ: Read = Read::lab(&PODS);
// Listed as metadata only by every live source (src/cluster/gather.rs `list_values`).
static SECRETS_READ: Read = Read::lab(&SECRETS);
static READS: &[&Read] = &[&JOBS_READ, &PODS_READ, &SECRETS_READ];

const JOB: &str = "bionemo-esm2";
const IMAGE: &str = "bionemo-image";
const GPU_REQUEST: &str = "gpu-request";
const SHM: &str = "shm-memory";
const NGC_KEY: &str = "ngc-key-from-secret";
const SECRET_EXISTS: &str = "secret-exists";
const RUNNING: &str = "pods-running";
const CHECKS: &[&str] = &[IMAGE, GPU_REQUEST, SHM, NGC_KEY, SECRET_EXISTS, RUNNING];

/// The BioNeMo Framework 2.x container (NVIDIA/bionemo-framework `docs/mkdocs.yml`
/// `docker_url`).
pub const BIONEMO_REPOSITORY: &str = "nvcr.io/nvidia/clara/bionemo-framework";
/// Tags the BioNeMo docs use that are rebuilt over time (`docker_tag: nightly` from v2.6.3 on).
const FLOATING_TAGS: &[&str] = &["nightly"];
/// The variables NGC tools read the API key from: `NGC_CLI_API_KEY` (BioNeMo
/// `docs/docs/main/getting-started/initialization-guide.md`, the NGC CLI) and `NGC_API_KEY`
/// (NVIDIA NIM containers).
const KEY_VARIABLES: &[&str] = &["NGC_CLI_API_KEY", "NGC_API_KEY"];
/// The org variable BioNeMo's docs require next to the key ("You _must_ define both
/// NGC_CLI_API_KEY and NGC_CLI_ORG").
const ORG_VARIABLE: &str = "NGC_CLI_ORG";
const DEV_SHM: &str = "/dev/shm";
/// A container's `/dev/shm` without a volume: containerd CRI `defaultShmSize`, 64 MiB.
const DEFAULT_SHM_BYTES: i64 = 64 * 1024 * 1024;

impl Verifier for Bionemo {
    fn lab_id(&self) -> &'static str {
        "bionemo"
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
        if let Some(j) = wrong_version(ctx, obj, "batch/v1", CHECKS) {
            return Ok(j);
        }
        let Some(w) = Workload::from_obj(obj)? else {
            return Err(obj.field_error("kind", "expected a batch/v1 Job"));
        };
        let Some(t) = w.templates.first() else {
            return Err(obj.field_error("spec.template", "a Job needs a pod template"));
        };
        let ns = ctx.target.namespace.as_str();
        let ev = |o: Outcome| o.with("job", JOB).with("namespace", ns);
        let mut j = Judgement::default();
        let rejected = rejections(&w);
        let main = main_container(t);

        // Spec.
        let standin = ctx.params.get("standin_image");
        let image = match (&rejected, main) {
            (Some(r), _) if !is_resources(r) => r.outcome(IMAGE),
            (_, Some((c, path))) => image_outcome(c, path, standin, &mut j),
            (_, None) => no_container(IMAGE, t),
        };
        j.push(ev(image));
        j.push(ev(match (&rejected, main) {
            (Some(r), _) if is_resources(r) => r.outcome(GPU_REQUEST),
            (_, Some((c, path))) => match (gpu_request(ctx, obj, t, c, path), &rejected) {
                (Ok(o), _) => o,
                // A quantity the API server refuses is its rejection, whatever it names first.
                (Err(_), Some(r)) => r.outcome(GPU_REQUEST),
                (Err(e), None) => return Err(e),
            },
            (_, None) => no_container(GPU_REQUEST, t),
        }));
        j.push(ev(match main {
            Some((c, path)) => shm_memory(obj, t, c, path)?,
            None => no_container(SHM, t),
        }));
        let key = ngc_key(t);
        let secret_name = ctx.params.get("secret").unwrap_or("ngc-api-key");
        j.push(ev(key.outcome(secret_name)));
        let from_secret = key.settings.iter().all(|s| s.source == Source::Secret);
        if !key.secrets.is_empty() && from_secret && !key.sets_org {
            j.advise(Advice::new("no-ngc-org"));
        }

        // State: the Secret by name (metadata only), then the Job's pods by uid.
        j.push(ev(secret_exists(ctx, &key.secrets)));
        let pods = match ctx.list(&PODS_READ) {
            Ok(p) => p,
            Err(why) => {
                j.push(ev(Outcome::unavailable(RUNNING, &why)));
                return Ok(j);
            }
        };
        let states = match owned::owned_by(obj, &pods) {
            Ok(o) => pod_states(&o.current)?,
            Err(NoUid::NotFromACluster) => Vec::new(),
        };
        j.push(ev(job_pods_running(RUNNING, &w, &states)?));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// Shared with lab `optimum-neuron`.

/// An image reference split the way the distribution reference grammar does
/// (distribution/reference `reference.go`: `name[:tag][@digest]`, the tag after the last `:`
/// that follows the last `/`, so a registry port is not a tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ImageRef {
    /// Everything before the tag and digest (`nvcr.io/nvidia/clara/bionemo-framework`).
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    pub fn parse(image: &str) -> ImageRef {
        let image = image.trim();
        let (name, digest) = match image.split_once('@') {
            Some((n, d)) => (n, Some(d.to_string())),
            None => (image, None),
        };
        let slash = name.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match name[slash..].rfind(':') {
            Some(i) => (&name[..slash + i], Some(name[slash + i + 1..].to_string())),
            None => (name, None),
        };
        ImageRef {
            repository: repository.to_string(),
            tag: tag.filter(|t| !t.is_empty()),
            digest,
        }
    }

    /// The last path component (`bionemo-framework`, `pytorch-training-neuronx`).
    pub fn name(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// Pinned to a version: a digest, or a tag other than `latest` (no tag means `latest`:
    /// distribution/reference `normalize.go` `TagNameOnly`).
    pub fn is_pinned(&self) -> bool {
        self.digest.is_some() || self.tag.as_deref().is_some_and(|t| t != "latest")
    }
}

/// `pods-running` for a batch/v1 Job: its pods (by uid) Running or Succeeded, or the Job
/// `Complete`. Fail hints: `crashed` (a container exited non-zero; found quotes its termination
/// message, the stand-in's or the real tool's words), `stuck` (a waiting reason that does not
/// clear by itself, evidence `message`), `job-failed` (`Failed=True`, evidence `reason`,
/// `message`), `suspended` (`spec.suspend`). Pending messages: `pods-unschedulable` (evidence
/// `pod`, `message`), `no-pods`, `starting` (evidence `found`).
pub(super) fn job_pods_running(
    check: &str,
    w: &Workload,
    pods: &[PodState],
) -> Result<Outcome, InputError> {
    let conds = conditions::from_object(&w.obj.value)
        .map_err(|e| w.obj.field_error("status.conditions", e))?;
    let expected = "Running|Succeeded";
    // batch/v1 JobConditionType `Complete` (SuccessCriteriaMet comes just before it).
    if conditions::is_true(&conds, "Complete") {
        return Ok(Outcome::pass(check).expected_found(expected, "Complete=True"));
    }
    for p in pods {
        if let Some(e) = p.failure() {
            let found = e.describe(&p.name);
            return Ok(Outcome::fail(check, expected, found.clone())
                .hint("crashed")
                .with("pod", &p.name)
                .with("found", found));
        }
        if let Some((c, reason, message)) = p
            .waiting
            .iter()
            .find(|(_, r, _)| STUCK.contains(&r.as_str()))
        {
            let found = format!("{}/{c}: {reason}", p.name);
            return Ok(Outcome::fail(check, expected, found.clone())
                .hint("stuck")
                .with("pod", &p.name)
                .with("found", found)
                .with("message", message));
        }
    }
    if let Some(c) = conditions::find(&conds, "Failed").filter(|c| c.is_true()) {
        let reason = c.reason.clone().unwrap_or_default();
        return Ok(
            Outcome::fail(check, expected, format!("Failed=True ({reason})"))
                .hint("job-failed")
                .with("reason", reason)
                .with("message", c.message.clone().unwrap_or_default()),
        );
    }
    let suspended = w
        .batch_job()
        .and_then(|b| b.spec.as_ref())
        .and_then(|s| s.suspend)
        .unwrap_or(false);
    if suspended {
        return Ok(Outcome::fail(check, expected, "spec.suspend: true").hint("suspended"));
    }
    let shown = |ps: &[&PodState]| {
        ps.iter()
            .map(|p| format!("{} {}", p.name, p.phase))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let up: Vec<&PodState> = pods
        .iter()
        .filter(|p| p.phase == "Running" || p.phase == "Succeeded")
        .collect();
    if !up.is_empty() {
        return Ok(Outcome::pass(check).expected_found(expected, shown(&up)));
    }
    if let Some(p) = pods.iter().find(|p| p.unschedulable.is_some()) {
        return Ok(
            Outcome::pending(check, Reason::Message("pods-unschedulable".into()))
                .with("pod", &p.name)
                .with("message", p.unschedulable.clone().unwrap_or_default()),
        );
    }
    if pods.is_empty() {
        return Ok(Outcome::pending(check, Reason::Message("no-pods".into())));
    }
    let all: Vec<&PodState> = pods.iter().collect();
    Ok(Outcome::pending(check, Reason::Message("starting".into())).with("found", shown(&all)))
}

/// Whether a rejection is about container resources (it then belongs to the resource check).
pub(super) fn is_resources(r: &Rejection) -> bool {
    r.field.contains(".resources")
}

/// The one template of the Job has no container: the API server refuses it
/// (`spec.template.spec.containers: Required value`).
pub(super) fn no_container(check: &str, t: &PodTemplate) -> Outcome {
    let field = t.field("containers");
    Outcome::fail(check, "—", format!("{field}: Required value"))
        .hint("rejected")
        .with("error", format!("{field}: Required value"))
        .with("field", field)
}

// ---------------------------------------------------------------------------------------------
// Spec.

/// The training container: the one asking for GPUs, else the one running BioNeMo, else the
/// first.
fn main_container(t: &PodTemplate) -> Option<(&Container, &str)> {
    let gpus = |c: &Container| {
        resources::limit(c, GPU)
            .ok()
            .flatten()
            .is_some_and(|q| !q.is_zero())
    };
    let bionemo = |c: &Container| {
        ImageRef::parse(c.image.as_deref().unwrap_or_default()).repository == BIONEMO_REPOSITORY
    };
    t.containers()
        .find(|(c, _)| gpus(c))
        .or_else(|| t.containers().find(|(c, _)| bionemo(c)))
        .or_else(|| t.containers().next())
}

/// `bionemo-image`: the BioNeMo Framework repository with a tag other than `latest` (or a
/// digest); on kind, the stand-in image the profile names passes too.
fn image_outcome(c: &Container, path: &str, standin: Option<&str>, j: &mut Judgement) -> Outcome {
    let image = c.image.clone().unwrap_or_default();
    let r = ImageRef::parse(&image);
    let mut expected = format!("{BIONEMO_REPOSITORY}:<tag ≠ latest>");
    if let Some(s) = standin {
        expected = format!("{expected} | {s}");
    }
    let ev = |o: Outcome| {
        o.with("container", &c.name)
            .with("image", &image)
            .with("repository", BIONEMO_REPOSITORY)
            .with("standin", standin.unwrap_or("—"))
            .with("path", format!("{path}.image"))
    };
    if standin.is_some_and(|s| s == image.trim()) {
        return ev(Outcome::pass(IMAGE).expected_found(expected, image.clone()));
    }
    if r.repository != BIONEMO_REPOSITORY {
        let o = Outcome::fail(IMAGE, expected, image.clone());
        return ev(if standin.is_some() {
            o.hint("standin")
        } else {
            o
        });
    }
    if !r.is_pinned() {
        return ev(Outcome::fail(IMAGE, expected, image.clone()).hint("latest"));
    }
    if let Some(tag) = r.tag.as_deref().filter(|t| FLOATING_TAGS.contains(t)) {
        j.advise(
            Advice::new("floating-tag")
                .with("image", &image)
                .with("tag", tag),
        );
    }
    ev(Outcome::pass(IMAGE).expected_found(expected, image.clone()))
}

/// `gpu-request`: `nvidia.com/gpu` in the training container's limits, no more than a node the
/// pod may use has. What the API server refuses (requests without limits, a fraction) is a
/// rejection, reported before this.
fn gpu_request(
    ctx: &JudgeCtx,
    obj: &Obj,
    t: &PodTemplate,
    c: &Container,
    path: &str,
) -> Result<Outcome, InputError> {
    let limits = format!("{path}.resources.limits");
    let gpus = resources::limit_count(c, GPU)
        .map_err(|e| obj.field_error(format!("{limits}[{GPU}]"), e))?
        .unwrap_or(0);
    let nodes = GpuNodes::find(ctx, &t.spec)?;
    let per_node = nodes.gpus_per_node.as_ref().ok().copied();
    let suggested = per_node
        .map(|g| g.to_string())
        .or_else(|| ctx.params.get("gpus").map(str::to_string))
        .unwrap_or_else(|| "8".into());
    let expected = match per_node {
        Some(g) => format!("{GPU}: 1–{g}"),
        None => format!("{GPU} ≥ 1"),
    };
    let found = if gpus > 0 {
        format!("{GPU}: {gpus}")
    } else {
        format!("{GPU}: —")
    };
    let ev = |o: Outcome| {
        o.with("container", &c.name)
            .with("path", &limits)
            .with("gpus", gpus)
            .with("gpus_per_node", &suggested)
    };
    if gpus <= 0 {
        return Ok(ev(Outcome::fail(GPU_REQUEST, expected, found)));
    }
    Ok(match &nodes.gpus_per_node {
        Ok(g) if gpus > *g => ev(Outcome::fail(GPU_REQUEST, expected, found).hint("too-many")),
        Err(u @ Unknown::NoGpus) => ev(u.outcome(GPU_REQUEST)),
        _ => ev(Outcome::pass(GPU_REQUEST).expected_found(expected, found)),
    })
}

/// `shm-memory`: an `emptyDir` with `medium: Memory` mounted at `/dev/shm` in the training
/// container (core/v1 `EmptyDirVolumeSource.medium`: "Memory" is tmpfs), larger than the 64 MiB
/// a container gets without it when `sizeLimit` is set.
fn shm_memory(
    obj: &Obj,
    t: &PodTemplate,
    c: &Container,
    path: &str,
) -> Result<Outcome, InputError> {
    let volumes = t.spec.volumes.as_deref().unwrap_or(&[]);
    let expected = format!("{DEV_SHM} ← emptyDir.medium: Memory");
    let mounts = c.volume_mounts.as_deref().unwrap_or(&[]);
    let ev = |o: Outcome| o.with("container", &c.name).with("path", path);
    let Some((i, m)) = mounts
        .iter()
        .enumerate()
        .find(|(_, m)| m.mount_path.trim_end_matches('/') == DEV_SHM)
    else {
        let listed = mounts
            .iter()
            .map(|m| format!("{} → {}", m.name, m.mount_path))
            .collect::<Vec<_>>();
        let listed = if listed.is_empty() {
            "volumeMounts: —".to_string()
        } else {
            listed.join(", ")
        };
        let found = format!("{DEV_SHM}: —");
        return Ok(ev(match volumes.iter().find(|v| is_memory(v)) {
            Some(v) => Outcome::fail(SHM, expected, found)
                .hint("not-mounted")
                .with("volume", &v.name)
                .with("mounts", listed),
            None => Outcome::fail(SHM, expected, found),
        }));
    };
    let mount_field = format!("{path}.volumeMounts[{i}]");
    let Some(v) = volumes.iter().find(|v| v.name == m.name) else {
        return Ok(ev(Outcome::fail(
            SHM,
            expected,
            format!("{mount_field}.name: {} (volumes: —)", m.name),
        )
        .hint("no-volume")
        .with("volume", &m.name)));
    };
    let ev = |o: Outcome| ev(o).with("volume", &v.name);
    let Some(dir) = &v.empty_dir else {
        let kind = volume_type(v);
        let found = format!("{}: {kind} → {DEV_SHM}", v.name);
        let o = Outcome::fail(SHM, expected, found).with("type", &kind);
        return Ok(ev(if v.host_path.is_some() {
            o.hint("host-path")
        } else {
            o.hint("other-volume")
        }));
    };
    let medium = dir.medium.clone().unwrap_or_default();
    if medium != "Memory" {
        let shown = if medium.is_empty() {
            "—"
        } else {
            medium.as_str()
        };
        return Ok(ev(Outcome::fail(
            SHM,
            expected,
            format!("{}: emptyDir.medium: {shown} → {DEV_SHM}", v.name),
        )
        .hint("not-memory")));
    }
    let size = match &dir.size_limit {
        Some(q) => Some(Quantity::parse(&q.0).map_err(|e| {
            obj.field_error(
                format!("{}.volumes[{}].emptyDir.sizeLimit", t.path, v.name),
                e,
            )
        })?),
        None => None,
    };
    let found = match &size {
        Some(s) => format!(
            "{}: emptyDir.medium: Memory, sizeLimit: {s} → {DEV_SHM}",
            v.name
        ),
        None => format!("{}: emptyDir.medium: Memory → {DEV_SHM}", v.name),
    };
    if let Some(s) = size.filter(|s| s.bytes() <= DEFAULT_SHM_BYTES) {
        return Ok(ev(Outcome::fail(
            SHM,
            format!("{expected}, sizeLimit > 64Mi"),
            found,
        )
        .hint("too-small")
        .with("size", s)));
    }
    Ok(ev(Outcome::pass(SHM).expected_found(expected, found)))
}

fn is_memory(v: &Volume) -> bool {
    v.empty_dir
        .as_ref()
        .is_some_and(|d| d.medium.as_deref() == Some("Memory"))
}

/// The volume source's field name (`hostPath`, `persistentVolumeClaim`, …).
fn volume_type(v: &Volume) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|j| {
            j.as_object()
                .and_then(|m| m.keys().find(|k| *k != "name").cloned())
        })
        .unwrap_or_else(|| "—".into())
}

/// Where a container gets the NGC API key from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Literal,
    Secret,
    ConfigMap,
    Other,
}

/// One place the key is set.
#[derive(Debug, Clone)]
struct KeySetting {
    container: String,
    variable: String,
    /// The field path (`spec.template.spec.containers[0].env[0].value`), never the value.
    field: String,
    source: Source,
}

/// What the pod template says about the NGC API key.
#[derive(Debug, Default)]
struct NgcKey {
    settings: Vec<KeySetting>,
    /// Secrets the key is read from: (name, key), the key `—` for a whole-Secret `envFrom`.
    secrets: Vec<(String, String)>,
    sets_org: bool,
}

/// Every container and init container's `env` and `envFrom` (an explicit `env` entry wins over
/// `envFrom` for the same name: core/v1 `Container.envFrom` docs).
fn ngc_key(t: &PodTemplate) -> NgcKey {
    let mut k = NgcKey::default();
    let init = t
        .spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (c, format!("{}.initContainers[{i}]", t.path)));
    let app = t.containers().map(|(c, p)| (c, p.to_string()));
    let mut from_env_from = Vec::new();
    for (c, path) in init.chain(app) {
        let mut named = false;
        for (i, e) in c.env.iter().flatten().enumerate() {
            if e.name == ORG_VARIABLE {
                k.sets_org = true;
            }
            if !KEY_VARIABLES.contains(&e.name.as_str()) {
                continue;
            }
            let field = format!("{path}.env[{i}]");
            let setting = |source: Source, field: String| KeySetting {
                container: c.name.clone(),
                variable: e.name.clone(),
                field,
                source,
            };
            match &e.value_from {
                None if e.value.as_deref().unwrap_or_default().is_empty() => continue,
                None => k
                    .settings
                    .push(setting(Source::Literal, format!("{field}.value"))),
                Some(vf) => {
                    if let Some(s) = &vf.secret_key_ref {
                        k.secrets.push((s.name.clone(), s.key.clone()));
                        k.settings.push(setting(
                            Source::Secret,
                            format!("{field}.valueFrom.secretKeyRef"),
                        ));
                    } else if vf.config_map_key_ref.is_some() {
                        k.settings.push(setting(
                            Source::ConfigMap,
                            format!("{field}.valueFrom.configMapKeyRef"),
                        ));
                    } else {
                        k.settings
                            .push(setting(Source::Other, format!("{field}.valueFrom")));
                    }
                }
            }
            named = true;
        }
        if named {
            continue;
        }
        for (i, ef) in c.env_from.iter().flatten().enumerate() {
            // A prefix renames every variable, so the key is not NGC_CLI_API_KEY any more.
            if ef.prefix.as_deref().is_some_and(|p| !p.is_empty()) {
                continue;
            }
            if let Some(s) = &ef.secret_ref {
                from_env_from.push((
                    (s.name.clone(), "—".to_string()),
                    KeySetting {
                        container: c.name.clone(),
                        variable: KEY_VARIABLES[0].into(),
                        field: format!("{path}.envFrom[{i}].secretRef"),
                        source: Source::Secret,
                    },
                ));
            }
        }
    }
    // A whole Secret in envFrom counts only when no container names the key itself.
    if k.settings.is_empty() {
        for (secret, setting) in from_env_from {
            k.secrets.push(secret);
            k.settings.push(setting);
        }
        if !k.settings.is_empty() {
            // envFrom may carry NGC_CLI_ORG too; its keys cannot be seen (metadata only).
            k.sets_org = true;
        }
    }
    k.secrets.sort();
    k.secrets.dedup();
    k
}

impl NgcKey {
    /// `ngc-key-from-secret`: every place that sets the key reads a Secret, and one does.
    fn outcome(&self, secret_name: &str) -> Outcome {
        let expected = format!("{}: valueFrom.secretKeyRef", KEY_VARIABLES[0]);
        let ev = |o: Outcome| o.with("secret", secret_name);
        for (source, hint) in [
            (Source::Literal, "literal"),
            (Source::ConfigMap, "configmap"),
            (Source::Other, "other-source"),
        ] {
            if let Some(s) = self.settings.iter().find(|s| s.source == source) {
                return ev(Outcome::fail(NGC_KEY, expected, s.field.clone())
                    .hint(hint)
                    .with("container", &s.container)
                    .with("variable", &s.variable)
                    .with("field", &s.field));
            }
        }
        if self.settings.is_empty() {
            return ev(Outcome::fail(
                NGC_KEY,
                expected,
                format!("{}: —", KEY_VARIABLES[0]),
            ));
        }
        let found = self
            .settings
            .iter()
            .map(|s| s.field.clone())
            .collect::<Vec<_>>()
            .join(", ");
        ev(Outcome::pass(NGC_KEY).expected_found(expected, found))
    }
}

// ---------------------------------------------------------------------------------------------
// State.

/// `secret-exists`: every Secret the key is read from is in the namespace. Looked up by name in
/// a metadata-only list: the data is never read.
fn secret_exists(ctx: &JudgeCtx, refs: &[(String, String)]) -> Outcome {
    if refs.is_empty() {
        return Outcome::skipped(SECRET_EXISTS, Reason::Message("no-secret-ref".into()));
    }
    let secrets = match ctx.list(&SECRETS_READ) {
        Ok(s) => s,
        Err(why) => return Outcome::unavailable(SECRET_EXISTS, &why),
    };
    let present: BTreeMap<&str, &Obj> = secrets.iter().map(|o| (o.name(), *o)).collect();
    let expected = refs
        .iter()
        .map(|(n, _)| format!("Secret {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some((name, key)) = refs.iter().find(|(n, _)| !present.contains_key(n.as_str())) {
        let key = if key == "—" { KEY_VARIABLES[0] } else { key };
        return Outcome::fail(SECRET_EXISTS, expected, format!("Secret {name}: —"))
            .with("secret", name)
            .with("key", key);
    }
    Outcome::pass(SECRET_EXISTS).expected_found(expected.clone(), expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_split_into_repository_tag_and_digest() {
        let r = ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework:2.6");
        assert_eq!(r.repository, BIONEMO_REPOSITORY);
        assert_eq!(r.tag.as_deref(), Some("2.6"));
        assert!(r.is_pinned());
        assert_eq!(r.name(), "bionemo-framework");

        let r = ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework");
        assert_eq!((r.tag.as_deref(), r.is_pinned()), (None, false));
        assert!(!ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework:latest").is_pinned());

        let r = ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework@sha256:0123abcd");
        assert_eq!(r.repository, BIONEMO_REPOSITORY);
        assert_eq!(r.digest.as_deref(), Some("sha256:0123abcd"));
        assert!(r.is_pinned());

        // A registry port is not a tag.
        let r = ImageRef::parse("registry.local:5000/team/trainer");
        assert_eq!(r.repository, "registry.local:5000/team/trainer");
        assert_eq!(r.tag, None);
        let r = ImageRef::parse("registry.local:5000/team/trainer:1.2@sha256:ff");
        assert_eq!(
            (r.repository.as_str(), r.tag.as_deref(), r.digest.as_deref()),
            (
                "registry.local:5000/team/trainer",
                Some("1.2"),
                Some("sha256:ff")
            )
        );
        assert_eq!(ImageRef::parse("python:3.13-slim").name(), "python");
    }
}
