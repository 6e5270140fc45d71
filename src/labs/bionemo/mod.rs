//! Lab `bionemo` (quiz question 6): a batch/v1 Job `bionemo-esm2` that fine-tunes ESM-2 with the
//! BioNeMo Framework 2.x container, set up the way NVIDIA's container needs it on Kubernetes:
//! a pinned image, GPUs in limits, a memory-backed `/dev/shm` for the data loader workers, and
//! the NGC API key, when one is given, from a Secret. The key is optional: without one NGC's
//! client works as a guest, and BioNeMo's downloader signs in as a guest when the client refuses
//! its configuration (an invalid key, a missing org: bionemo-core v2.6 `data/load.py`
//! `default_ngc_client`); a guest downloads public resources such as the lab's `esm2/8m:2.0`.
//!
//! Spec checks read the Job's pod template (also with `--files`). State checks follow the Job's
//! uid to its pods, and look the referenced Secret up by name in a metadata-only list
//! (`kinds::SECRETS` is only ever read as `PartialObjectMetadata`): Secret data is never read.
//! Texts live in lab.yaml; this file decides and reports values.

mod env;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Volume};

use crate::facts::instances::GPU;
use crate::observe::kinds::{PODS, SECRETS};
use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::container::{asks_for, is_about_resources, no_container, pick};
use crate::verify::kit::k8s::image::ImageRef;
use crate::verify::kit::k8s::mounts::volume_kind;
use crate::verify::kit::k8s::quantity::Quantity;
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::{resources_field, PodTemplate, Workload};
use crate::verify::kit::training::job::{
    find_training_job, rejections, training_template, TrainingJob,
};
use crate::verify::kit::training::job_pods::running_of;
use crate::verify::kit::training::parallel::GpuNodes;
use crate::verify::kit::training::trainjob::{trainjob_reads, JOBS_READ, TRAINJOBS_READ};
use crate::verify::{Advice, JudgeCtx, Judgement, Outcome, Read, Reason, Verifier};
use env::{env_settings, EnvSetting, EnvSource};

pub struct Bionemo;

static PODS_READ: Read = Read::lab(&PODS);
// Listed as metadata only by every live source (src/cluster/gather.rs `list_one`).
static SECRETS_READ: Read = Read::lab(&SECRETS);
/// A batch/v1 Job or a TrainJob (with the runtimes it may name and the JobSet between it and
/// its Jobs).
static READS: &[&Read] = trainjob_reads![jobs first; &PODS_READ, &SECRETS_READ];

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
/// The org variable BioNeMo's docs ask for next to the key ("You _must_ define both
/// NGC_CLI_API_KEY and NGC_CLI_ORG"); without it NGC's SDK may refuse the key ("Missing org -
/// If Authenticated, org is also required.", ngcsdk `validate_configuration`), and BioNeMo then
/// signs in as a guest.
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
        let jobs = [&JOBS_READ, &TRAINJOBS_READ];
        let w: Workload = match find_training_job(ctx, JOB, &jobs, IMAGE, CHECKS)? {
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
        let rejected = rejections(&w);
        // The training container: the one asking for GPUs, else the one running BioNeMo, else
        // the first.
        let gpus = |c: &Container| asks_for(c, GPU);
        let bionemo = |c: &Container| {
            ImageRef::parse(c.image.as_deref().unwrap_or_default()).repository == BIONEMO_REPOSITORY
        };
        let main = pick(t, &[&gpus, &bionemo]);

        // Spec.
        let standin = ctx.params.get("standin_image");
        let image = match (&rejected, main) {
            (Some(r), _) if !is_about_resources(r) => r.outcome(IMAGE),
            (_, Some((c, path))) => image_outcome(c, path, standin, &mut j),
            (_, None) => no_container(IMAGE, t),
        };
        j.push(ev(image));
        j.push(ev(match (&rejected, main) {
            (Some(r), _) if is_about_resources(r) => r.outcome(GPU_REQUEST),
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
        let key = env_settings(t, KEY_VARIABLES);
        let secrets = secret_refs(&key);
        let secret_name = ctx.params.require("secret")?;
        j.push(ev(ngc_key(&key, secret_name)));
        let from_secret = key
            .iter()
            .all(|s| matches!(s.source, EnvSource::Secret { .. }));
        // A whole Secret in envFrom may carry NGC_CLI_ORG too (`env`): its keys cannot be
        // seen.
        let sets_org = !env_settings(t, &[ORG_VARIABLE]).is_empty();
        if !secrets.is_empty() && from_secret && !sets_org {
            j.advise(Advice::new("no-ngc-org"));
        }
        if key.is_empty() {
            j.advise(Advice::new("no-ngc-key"));
        }

        // State: the Secret by name (metadata only), then the Job's pods by uid.
        j.push(ev(secret_exists(ctx, &secrets)));
        j.push(ev(running_of(ctx, &PODS_READ, RUNNING, &w)?));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// Spec.

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
    let limits = format!("{}.limits", resources_field(path));
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
    // The bound is half the check: without the nodes (or `--param gpus_per_node`) the check
    // says why it cannot judge, never passes on the half it saw.
    Ok(match &nodes.gpus_per_node {
        Ok(g) if gpus > *g => ev(Outcome::fail(GPU_REQUEST, expected, found).hint("too-many")),
        Ok(_) => ev(Outcome::pass(GPU_REQUEST).expected_found(expected, found)),
        Err(u) => ev(u.outcome(GPU_REQUEST)),
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
        let kind = volume_kind(v);
        let found = format!("{}: {kind} → {DEV_SHM}", v.name);
        let o = Outcome::fail(SHM, expected, found).with("type", kind);
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

/// The Secrets the key is read from: (name, key), the key `—` for a whole-Secret `envFrom`.
fn secret_refs(key: &[EnvSetting]) -> Vec<(String, String)> {
    let mut refs: Vec<(String, String)> = key
        .iter()
        .filter_map(|s| match &s.source {
            EnvSource::Secret { name, key } => {
                Some((name.clone(), key.clone().unwrap_or_else(|| "—".into())))
            }
            _ => None,
        })
        .collect();
    refs.sort();
    refs.dedup();
    refs
}

/// `ngc-key-from-secret`: every place that sets the key (`env::env_settings`) reads a
/// Secret. No key at all passes: the key is optional (guest access, see the module docs).
fn ngc_key(key: &[EnvSetting], secret_name: &str) -> Outcome {
    let expected = format!("{0}: — | {0}: valueFrom.secretKeyRef", KEY_VARIABLES[0]);
    let ev = |o: Outcome| o.with("secret", secret_name);
    let hint = |s: &EnvSource| match s {
        EnvSource::Literal => Some("literal"),
        EnvSource::ConfigMap { .. } => Some("configmap"),
        EnvSource::Other => Some("other-source"),
        EnvSource::Secret { .. } => None,
    };
    // The worst source is reported: a literal key first, it is leaked.
    for want in ["literal", "configmap", "other-source"] {
        if let Some(s) = key.iter().find(|s| hint(&s.source) == Some(want)) {
            return ev(Outcome::fail(NGC_KEY, expected, s.field.clone())
                .hint(want)
                .with("container", &s.container)
                .with("variable", &s.variable)
                .with("field", &s.field));
        }
    }
    if key.is_empty() {
        let found = format!("{}: —", KEY_VARIABLES[0]);
        return ev(Outcome::pass(NGC_KEY).expected_found(expected, found));
    }
    let found = key
        .iter()
        .map(|s| s.field.clone())
        .collect::<Vec<_>>()
        .join(", ");
    ev(Outcome::pass(NGC_KEY).expected_found(expected, found))
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
