//! TrainJobs (Kubeflow Trainer v2) as the labs grade them: the runtime a TrainJob names, the
//! pods it makes once laid over that runtime, what the admission webhooks refuse, and its pods
//! found through TrainJob → JobSet → Job → Pod by uid.
//!
//! How the controller builds the pods (kubeflow/trainer v2.3.0; each step cited where it is
//! modelled):
//! 1. The runtime's `spec.template.spec` (a JobSet spec) with every
//!    `spec.runtimePatches[].trainingRuntimeSpec.template.spec` strategic-merged over it in list
//!    order (`pkg/runtime/core/trainingruntime.go` `mergeRuntimePatches`) — [`merge_patch`].
//! 2. The job labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer` is the trainer
//!    job. Pods: `mlPolicy.numNodes` (default 1), replaced by `spec.trainer.numNodes` (torch and
//!    plain policies: `plugins/torch/torch.go` `EnforceMLPolicy`, `plugins/plainml`); for MPI
//!    runtimes `spec.trainer.numNodes` sizes the job named `node` instead, one less when the
//!    launcher runs as a node (`plugins/mpi/mpi.go` l.117-124). Other jobs: `parallelism`,
//!    default 1.
//! 3. On the trainer job's container named `node` (`plugins/jobset/builder.go` `Trainer`):
//!    `image`, `command`, `args` replaced when set; `env` upserted by name; `resourcesPerNode`
//!    merged per resource key over the runtime's (v2.3.0 `MergeResourceRequirements`), only
//!    when the runtime has an `mlPolicy`.
//! 4. Torch runtimes add `PET_NNODES` (the trainer job's pods), `PET_NPROC_PER_NODE`
//!    (`spec.trainer.numProcPerNode`, else `auto`; `auto` without a GPU becomes
//!    `max(1, CPUs requested)`), `PET_NODE_RANK`, `PET_MASTER_ADDR` and `PET_MASTER_PORT` to
//!    that container when `spec.trainer` is set (`torch.go` `EnforceMLPolicy`).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::PodSpec;
use serde_json::{json, Map, Value};

use crate::observe::kinds::{
    CLUSTER_TRAINING_RUNTIMES, JOBS, JOBSETS, TRAINING_RUNTIMES, TRAINJOBS,
};
use crate::observe::{parse_text, InputError, Obj, Unavailable};
use crate::quantity::Quantity;
use crate::verify::kit::k8s::owned::{self, NoUid, Owned};
use crate::verify::kit::k8s::rejection::Rejection;
use crate::verify::kit::k8s::workload::{KindView, PodTemplate, Workload, WorkloadKind};
use crate::verify::views::trainer::{
    self, RuntimeRef, RuntimeSource, TrainJob, TrainJobView, TrainingRuntime, ANCESTOR_LABEL,
    ANCESTOR_TRAINER, NODE,
};
use crate::verify::{JudgeCtx, Judgement, Outcome, Read, Reason};

/// The reads of a lab that accepts a TrainJob (`trainjob_reads!`): the TrainJob, the runtimes it
/// may name and the objects between a TrainJob and its pods.
pub static TRAINJOBS_READ: Read = Read::lab(&TRAINJOBS);
pub static CLUSTER_RUNTIMES_READ: Read = Read::lab(&CLUSTER_TRAINING_RUNTIMES);
pub static RUNTIMES_READ: Read = Read::lab(&TRAINING_RUNTIMES);
pub static JOBSETS_READ: Read = Read::lab(&JOBSETS);
pub static JOBS_READ: Read = Read::lab(&JOBS);

/// A lab's `READS` when it accepts a TrainJob, with the TrainJob read set declared once, here:
/// the lab's own reads before the `;`, then [`TRAINJOBS_READ`], [`CLUSTER_RUNTIMES_READ`],
/// [`RUNTIMES_READ`], [`JOBSETS_READ`] and [`JOBS_READ`], then the lab's reads after the `;`.
/// A lab that grades a batch/v1 Job of its own writes `jobs first`, which puts [`JOBS_READ`]
/// right after its reads before the `;` instead (READS is the order the lab's queries are made
/// in):
///
/// ```ignore
/// static READS: &[&Read] = trainjob_reads![&PYTORCHJOBS_READ; &PODS_READ];
/// static READS: &[&Read] = trainjob_reads![jobs first, &PYTORCHJOBS_READ; &PODS_READ];
/// ```
macro_rules! trainjob_reads {
    (@set [$($before:expr),*] [$($jobs:expr)?] [$($after:expr),*]) => {
        &[
            $($before,)*
            $($jobs,)?
            &$crate::verify::kit::training::trainjob::TRAINJOBS_READ,
            &$crate::verify::kit::training::trainjob::CLUSTER_RUNTIMES_READ,
            &$crate::verify::kit::training::trainjob::RUNTIMES_READ,
            &$crate::verify::kit::training::trainjob::JOBSETS_READ,
            $($after),*
        ]
    };
    (jobs first $(, $before:expr)* ; $($after:expr),* $(,)?) => {
        $crate::verify::kit::training::trainjob::trainjob_reads!(@set
            [$($before),*]
            [&$crate::verify::kit::training::trainjob::JOBS_READ]
            [$($after),*])
    };
    ($($before:expr),* ; $($after:expr),* $(,)?) => {
        $crate::verify::kit::training::trainjob::trainjob_reads!(@set
            [$($before),*]
            []
            [&$crate::verify::kit::training::trainjob::JOBS_READ $(, $after)*])
    };
}
pub(crate) use trainjob_reads;

/// The runtimes `setup kind` installs (Trainer v2.3.0's `torch-distributed` and
/// `deepspeed-distributed`): a TrainJob read from files whose ClusterTrainingRuntime is not among
/// them is laid over the one of that name here.
const BUILT_IN_RUNTIMES: &str = include_str!("../../../../manifests/kind/trainer-runtimes.yaml");

/// The runtime a TrainJob is laid over.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub obj: Obj,
    pub source: RuntimeSource,
}

/// A TrainJob's runtime, or the judgement when it names none the cluster (or the files) has.
pub enum RuntimeFound {
    Found(Runtime),
    Missing(Judgement),
}

/// The runtime `job` names: a ClusterTrainingRuntime (the default kind) or a TrainingRuntime in
/// its namespace, among what was read; from files, the built-in runtime of that name as a last
/// resort. When there is none: `check` fails with hint `runtime-missing` (evidence `runtime`,
/// `runtimes`: the names that were seen), the other `checks` are skipped with message
/// `runtime-unknown` — the admission webhook refuses such a TrainJob (`pkg/runtime/core/
/// clustertrainingruntime.go` `ValidateObjects`: "specified clusterTrainingRuntime must be
/// created before the TrainJob is created").
pub fn find_runtime(ctx: &JudgeCtx, job: &Obj, check: &str, checks: &[&str]) -> RuntimeFound {
    // A TrainJob that does not parse is reported by `over_runtime`, which parses it again.
    let tj: TrainJob = job.parse().unwrap_or_default();
    let r = tj.spec.runtime_ref.clone().unwrap_or_default();
    let name = r.name.clone().unwrap_or_default();
    let read = match r.kind() {
        trainer::NAMESPACED_RUNTIME_KIND => &RUNTIMES_READ,
        _ => &CLUSTER_RUNTIMES_READ,
    };
    let listed = ctx.list(read);
    if let Err(why) = &listed {
        if !matches!(why, Unavailable::NotServed { .. }) {
            return RuntimeFound::Missing(Judgement::every(checks, |c| {
                Outcome::unavailable(c, why)
            }));
        }
    }
    let listed = listed.unwrap_or_default();
    if r.group() == trainer::RUNTIME_GROUP {
        if let Some(o) = listed.iter().find(|o| o.name() == name) {
            return RuntimeFound::Found(Runtime {
                obj: (*o).clone(),
                source: RuntimeSource::Read,
            });
        }
        if ctx.is_static() && read == &CLUSTER_RUNTIMES_READ {
            if let Some(o) = built_in_runtimes().into_iter().find(|o| o.name() == name) {
                return RuntimeFound::Found(Runtime {
                    obj: o,
                    source: RuntimeSource::BuiltIn,
                });
            }
        }
    }
    let mut seen: BTreeSet<String> = listed.iter().map(|o| o.name().to_string()).collect();
    if ctx.is_static() {
        seen.extend(built_in_runtimes().iter().map(|o| o.name().to_string()));
    }
    let seen = if seen.is_empty() {
        "—".to_string()
    } else {
        seen.into_iter().collect::<Vec<_>>().join(", ")
    };
    let wanted = format!("{} {name}", r.kind());
    let mut j = Judgement::default();
    for c in checks {
        let o = if *c == check {
            Outcome::fail(
                c,
                format!("{wanted} exists"),
                format!("{}: {seen}", r.kind()),
            )
            .hint("runtime-missing")
        } else {
            Outcome::skipped(c, Reason::Message("runtime-unknown".into()))
        };
        j.push(
            o.with("job", job.name())
                .with("runtime", &name)
                .with("runtime_kind", r.kind())
                .with("runtimes", &seen),
        );
    }
    RuntimeFound::Missing(j)
}

/// Trainer v2.3.0's runtimes as `setup kind` installs them.
pub fn built_in_runtimes() -> Vec<Obj> {
    // The file is part of trainlab and parsed by a test; it cannot fail here.
    parse_text(BUILT_IN_RUNTIMES, "manifests/kind/trainer-runtimes.yaml").unwrap_or_default()
}

/// The TrainJob `o` laid over `runtime` as the controller lays it: the pods it makes.
pub fn over_runtime<'a>(o: &'a Obj, runtime: &Runtime) -> Result<Workload<'a>, InputError> {
    let job: TrainJob = o.parse()?;
    let rt: TrainingRuntime = runtime.obj.parse()?;
    let rname = format!("{} {}", runtime.obj.kind(), runtime.obj.name());
    let mut jobset = rt.spec.template.get("spec").cloned().unwrap_or(json!({}));
    for (i, p) in job.spec.runtime_patches.iter().enumerate() {
        let Some(patch) = p
            .training_runtime_spec
            .as_ref()
            .and_then(|s| s.pointer("/template/spec"))
        else {
            continue;
        };
        if !patch.is_object() {
            return Err(o.field_error(
                format!("spec.runtimePatches[{i}].trainingRuntimeSpec.template.spec"),
                "expected a mapping (a JobSet spec patch)",
            ));
        }
        merge_patch(&mut jobset, patch);
    }
    let trainer = job.spec.trainer.clone();
    let ml = rt.spec.ml_policy.clone();
    let mpi = ml.as_ref().and_then(|m| m.mpi.as_ref());
    let torch = ml.as_ref().is_some_and(|m| m.torch.is_some());
    let num_nodes = trainer.as_ref().and_then(|t| t.num_nodes);

    let jobs = jobset
        .get("replicatedJobs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let trainer_index = jobs.iter().position(is_trainer_job);
    // First pass: the pod counts, the trainer job's decided first (PET_NNODES needs it).
    let counts: Vec<(i64, bool, String)> = jobs
        .iter()
        .enumerate()
        .map(|(i, rj)| {
            let name = job_name(rj, i);
            let parallelism = rj
                .pointer("/template/spec/parallelism")
                .and_then(Value::as_i64)
                .unwrap_or(1)
                .max(1);
            let is_trainer = Some(i) == trainer_index;
            match (is_trainer, &ml, mpi) {
                (true, Some(m), None) => {
                    let base = m.num_nodes.unwrap_or(trainer::DEFAULT_NUM_NODES);
                    match num_nodes {
                        Some(n) => (n, true, "spec.trainer.numNodes".to_string()),
                        None => (base, false, "spec.trainer.numNodes".to_string()),
                    }
                }
                (true, Some(m), Some(_)) => (
                    m.num_nodes.unwrap_or(trainer::DEFAULT_NUM_NODES),
                    false,
                    format!("{rname}: spec.mlPolicy.numNodes"),
                ),
                (false, _, Some(p)) if name == NODE && num_nodes.is_some() => {
                    let n = num_nodes.unwrap_or(1);
                    let n = if p.run_launcher_as_node.unwrap_or(false) {
                        (n - 1).max(1)
                    } else {
                        n
                    };
                    (n, true, "spec.trainer.numNodes".to_string())
                }
                _ => (
                    parallelism,
                    false,
                    format!(
                        "{rname}: spec.template.spec.replicatedJobs[{i}].template.spec.parallelism"
                    ),
                ),
            }
        })
        .collect();
    let trainer_pods = trainer_index.map_or(1, |i| counts[i].0);

    let gpus_written = |res: &Value| -> i64 {
        // `runtime.GetNumGPUPerNode`: the first resource whose name holds "gpu", requests first.
        let count = |list: Option<&Value>| -> i64 {
            list.and_then(Value::as_object)
                .and_then(|m| {
                    m.iter()
                        .find(|(k, _)| k.to_ascii_lowercase().contains("gpu"))
                        .map(|(_, v)| quantity_value(v))
                })
                .unwrap_or(0)
        };
        let r = count(res.get("requests"));
        if r > 0 {
            r
        } else {
            count(res.get("limits"))
        }
    };

    let mut nproc = None;
    let mut templates = Vec::new();
    for (i, rj) in jobs.iter().enumerate() {
        let name = job_name(rj, i);
        let mut pod = rj
            .pointer("/template/spec/template/spec")
            .cloned()
            .unwrap_or(json!({}));
        let is_trainer = Some(i) == trainer_index;
        let mut container_paths = Vec::new();
        let base =
            format!("{rname}: spec.template.spec.replicatedJobs[{i}].template.spec.template.spec");
        if let Some(list) = pod.get_mut("containers").and_then(Value::as_array_mut) {
            for (ci, c) in list.iter_mut().enumerate() {
                let is_node = c.get("name").and_then(Value::as_str) == Some(NODE);
                let launcher_node =
                    mpi.is_some_and(|p| p.run_launcher_as_node.unwrap_or(false)) && name == NODE;
                if is_node && (is_trainer || launcher_node) {
                    if let Some(t) = &trainer {
                        // MPI workers take the env only (`builder.go` `Trainer`).
                        trainer::apply_trainer(c, t, is_trainer);
                        if ml.is_some() {
                            merge_resources(c, t.resources_per_node.as_ref())?;
                        }
                    }
                    if is_trainer && torch && trainer.is_some() {
                        let per_node = trainer
                            .as_ref()
                            .and_then(|t| t.resources_per_node.as_ref())
                            .map(|r| serde_json::to_value(r).unwrap_or_default())
                            .or_else(|| c.get("resources").cloned())
                            .unwrap_or(json!({}));
                        let value = torch_nproc(trainer.as_ref(), &per_node, gpus_written);
                        trainer::upsert_env(c, &pet_env(o.name(), trainer_pods, &value.0));
                        nproc = Some(value);
                    }
                    container_paths.push(if is_trainer {
                        "spec.trainer".to_string()
                    } else {
                        format!("{base}.containers[{ci}]")
                    });
                } else {
                    container_paths.push(format!("{base}.containers[{ci}]"));
                }
            }
        }
        let spec: PodSpec = serde_json::from_value(pod).map_err(|e| {
            o.field_error(
                format!("{base} (with spec.runtimePatches and spec.trainer)"),
                e,
            )
        })?;
        let labels = rj
            .pointer("/template/spec/template/metadata/labels")
            .and_then(|l| serde_json::from_value(l.clone()).ok())
            .unwrap_or_default();
        let (replicas, replicas_set, replicas_path) = counts[i].clone();
        templates.push(PodTemplate {
            role: name.clone(),
            replicas,
            replicas_set,
            replicas_path,
            spec,
            labels,
            path: trainer::runtime_patch_path(&name),
            container_paths,
        });
    }
    let view = TrainJobView {
        job,
        runtime: Some(rname),
        runtime_source: Some(runtime.source),
        ml_policy: ml,
        nproc,
    };
    Ok(Workload {
        obj: o,
        kind: WorkloadKind::TrainJob,
        view: KindView::TrainJob(Box::new(view)),
        templates,
    })
}

fn job_name(rj: &Value, i: usize) -> String {
    rj.get("name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("replicatedJobs[{i}]"), str::to_string)
}

fn is_trainer_job(rj: &Value) -> bool {
    rj.pointer("/template/metadata/labels")
        .and_then(|l| l.get(ANCESTOR_LABEL))
        .and_then(Value::as_str)
        == Some(ANCESTOR_TRAINER)
}

/// A quantity's whole value (`resQ.Value()`, rounded up), 0 when unreadable.
fn quantity_value(v: &Value) -> i64 {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return 0,
    };
    Quantity::parse(&text).map_or(0, |q| q.value().max(0))
}

/// `PET_NPROC_PER_NODE` and where it comes from: `spec.trainer.numProcPerNode`, else `auto`,
/// which without a GPU the plugin turns into `max(1, CPUs)` (`torch.go` `getNumCPUPerNode`:
/// the CPU request, else the limit).
fn torch_nproc(
    t: Option<&trainer::Trainer>,
    per_node: &Value,
    gpus: impl Fn(&Value) -> i64,
) -> (String, String) {
    if let Some(v) = t.and_then(|t| t.num_proc_per_node.as_ref()) {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return (text.clone(), format!("spec.trainer.numProcPerNode: {v}"));
    }
    if gpus(per_node) > 0 {
        return (
            "auto".into(),
            "spec.trainer.numProcPerNode (unset: auto)".into(),
        );
    }
    let cpu = |list: &str| {
        per_node
            .pointer(&format!("/{list}/cpu"))
            .map(quantity_value)
            .filter(|n| *n > 0)
    };
    let n = cpu("requests")
        .or_else(|| cpu("limits"))
        .unwrap_or(0)
        .max(1);
    (
        n.to_string(),
        format!("spec.trainer.numProcPerNode (unset: auto, no GPU: {n} CPU)"),
    )
}

fn pet_env(job: &str, nodes: i64, nproc: &str) -> Vec<Value> {
    vec![
        json!({"name": "PET_NNODES", "value": nodes.to_string()}),
        json!({"name": "PET_NPROC_PER_NODE", "value": nproc}),
        json!({"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}),
        json!({"name": "PET_MASTER_ADDR", "value": format!("{job}-{NODE}-0-0.{job}")}),
        json!({"name": "PET_MASTER_PORT", "value": "29500"}),
    ]
}

/// `resourcesPerNode` merged per resource key over the container's (TrainJob wins).
fn merge_resources(
    c: &mut Value,
    per_node: Option<&k8s_openapi::api::core::v1::ResourceRequirements>,
) -> Result<(), InputError> {
    let Some(r) = per_node else { return Ok(()) };
    let patch = serde_json::to_value(r).unwrap_or_default();
    if !c.get("resources").is_some_and(Value::is_object) {
        c["resources"] = json!({});
    }
    if let Some(res) = c.get_mut("resources") {
        merge_patch(res, &patch);
    }
    Ok(())
}

/// The list fields a strategic merge patch merges by key instead of replacing, with their key
/// (the `patchMergeKey`s of k8s.io/api core/v1 `PodSpec`, `Container` and jobset v0.12.0
/// `JobSetSpec.replicatedJobs` (`listType=map`, key `name`)). Lists not named here, such as
/// `tolerations` and `nodeSelectorTerms`, are replaced whole; mappings merge key by key.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "replicatedJobs" | "containers" | "initContainers" | "volumes" | "env"
        | "imagePullSecrets" | "schedulingGates" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "ports" => Some("containerPort"),
        _ => None,
    }
}

/// Strategic merge of `patch` over `base` (Kubernetes "Update API Objects in Place Using
/// kubectl patch": mappings merge, keyed lists merge by key, other lists and scalars are
/// replaced, `null` deletes).
pub fn merge_patch(base: &mut Value, patch: &Value) {
    let (Some(b), Some(p)) = (base.as_object_mut(), patch.as_object()) else {
        *base = patch.clone();
        return;
    };
    merge_map(b, p);
}

fn merge_map(b: &mut Map<String, Value>, p: &Map<String, Value>) {
    for (k, pv) in p {
        if pv.is_null() {
            b.remove(k);
            continue;
        }
        match (b.get_mut(k), merge_key(k), pv) {
            (Some(Value::Array(items)), Some(key), Value::Array(patches)) => {
                for patch in patches {
                    let id = patch.get(key);
                    match items.iter_mut().find(|x| id.is_some() && x.get(key) == id) {
                        Some(slot) => merge_patch(slot, patch),
                        None => items.push(patch.clone()),
                    }
                }
            }
            (Some(bv @ Value::Object(_)), _, Value::Object(_)) => merge_patch(bv, pv),
            _ => {
                b.insert(k.clone(), pv.clone());
            }
        }
    }
}

/// What the API server and Trainer's validating webhook refuse in a TrainJob laid over its
/// runtime, before any pod: the CRD schema for `spec.trainer.numProcPerNode` (an integer since
/// v2.2.0) and `numNodes`, the torch plugin's reserved env (`torch.go` `Validate`), a runtime
/// patch that sets env on a `node` container or names a job or container the runtime lacks
/// (`plugins/jobset/jobset.go` `Validate`), and pod validation of each template.
pub fn rejections(w: &Workload) -> Vec<Rejection> {
    let mut out = Vec::new();
    let KindView::TrainJob(v) = &w.view else {
        return out;
    };
    let mut add = |field: &str, text: String| {
        out.push(Rejection {
            field: field.to_string(),
            text,
        })
    };
    if let Some(t) = &v.job.spec.trainer {
        if let Some(Value::String(s)) = &t.num_proc_per_node {
            let f = "spec.trainer.numProcPerNode";
            add(
                f,
                format!("{f}: Invalid value: \"string\": {f} in body must be of type integer: \"string\" (found \"{s}\")"),
            );
        }
        if let Some(n) = t.num_nodes.filter(|n| *n > i64::from(i32::MAX) || *n < 0) {
            let f = "spec.trainer.numNodes";
            add(
                f,
                format!("{f}: Invalid value: {n}: {f} in body must be a 32-bit integer"),
            );
        }
        let reserved: BTreeSet<&str> = t
            .env
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| trainer::TORCH_RESERVED_ENV.contains(n))
            .collect();
        if v.is_torch() && !reserved.is_empty() {
            let names = reserved.into_iter().collect::<Vec<_>>().join(" ");
            add(
                "spec.trainer.env",
                format!("spec.trainer.env: Invalid value: …: must not have reserved envs, invalid envs configured: [{names}]"),
            );
        }
    }
    for p in &v.job.spec.runtime_patches {
        let jobs = p
            .training_runtime_spec
            .as_ref()
            .and_then(|s| s.pointer("/template/spec/replicatedJobs"))
            .and_then(Value::as_array);
        for rj in jobs.into_iter().flatten() {
            let name = rj.get("name").and_then(Value::as_str).unwrap_or_default();
            let Some(t) = w.templates.iter().find(|t| t.role == name) else {
                add(
                    "spec.runtimePatches",
                    "spec.runtimePatches: Invalid value: …: must not have replicated job that doesn't exist in the runtime job template".into(),
                );
                continue;
            };
            let containers = rj
                .pointer("/template/spec/template/spec/containers")
                .and_then(Value::as_array);
            for c in containers.into_iter().flatten() {
                let cname = c.get("name").and_then(Value::as_str).unwrap_or_default();
                if !t.spec.containers.iter().any(|x| x.name == cname) {
                    add(
                        "spec.runtimePatches",
                        format!("spec.runtimePatches: Invalid value: …: must not have container that doesn't exist in the runtime job {name}"),
                    );
                } else if cname == NODE && c.get("env").is_some() {
                    add(
                        "spec.runtimePatches",
                        "spec.runtimePatches: Invalid value: …: must not have envs for the dataset-initializer, model-initializer, node containers".into(),
                    );
                }
            }
        }
    }
    for t in &w.templates {
        for e in crate::verify::kit::k8s::resources::validate_pod_spec(&t.spec, &t.path) {
            add(&e.path.clone(), e.api_server_text());
        }
    }
    out
}

/// The pods a TrainJob owns through its JobSet and the JobSet's Jobs, by uid
/// (`plugins/jobset/jobset.go` `Build`: the JobSet's controller reference is the TrainJob; jobset
/// v0.12.0 `constructJob`: each Job's is the JobSet; the Job controller owns the pods).
pub fn owned_pods<'a>(
    job: &Obj,
    jobsets: &[&'a Obj],
    jobs: &[&'a Obj],
    pods: &[&'a Obj],
) -> Result<Owned<'a>, NoUid> {
    let sets = owned::owned_by(job, jobsets)?;
    let mut out = Owned::default();
    for s in sets.all() {
        for b in owned::owned_two_levels(s, jobs, pods).unwrap_or_default() {
            out.current.extend(b.children.current);
            out.terminating.extend(b.children.terminating);
        }
    }
    Ok(out)
}

/// The JobSets and Jobs a TrainJob's pods hang from, as declared reads (`[]` when not served:
/// then there are no such objects).
pub fn chain_lists<'a>(ctx: &JudgeCtx<'a>) -> Result<(Vec<&'a Obj>, Vec<&'a Obj>), Unavailable> {
    let list = |r: &Read| match ctx.list(r) {
        Err(Unavailable::NotServed { .. }) => Ok(Vec::new()),
        other => other,
    };
    Ok((list(&JOBSETS_READ)?, list(&JOBS_READ)?))
}

/// The runtime a TrainJob names, as written (for found values).
pub fn runtime_ref(job: &TrainJob) -> RuntimeRef {
    job.spec.runtime_ref.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;

    fn obj(v: Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    fn torch() -> Runtime {
        let rt = built_in_runtimes()
            .into_iter()
            .find(|o| o.name() == "torch-distributed")
            .expect("the built-in torch runtime");
        Runtime {
            obj: rt,
            source: RuntimeSource::BuiltIn,
        }
    }

    fn job(spec: Value) -> Obj {
        obj(
            json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                   "metadata": {"name": "tj", "namespace": "ns", "uid": "u"}, "spec": spec}),
        )
    }

    #[test]
    fn a_lab_declares_the_trainjob_reads_around_its_own() {
        static PODS_READ: Read = Read::lab(&crate::observe::kinds::PODS);
        static NODES_READ: Read = Read::cluster(&crate::observe::kinds::NODES);
        let kinds = |reads: &[&Read]| reads.iter().map(|r| r.kind.kind).collect::<Vec<_>>();
        let set = [
            "TrainJob",
            "ClusterTrainingRuntime",
            "TrainingRuntime",
            "JobSet",
        ];
        let after: &[&Read] = trainjob_reads![&PODS_READ; &NODES_READ];
        assert_eq!(
            kinds(after),
            [&["Pod"][..], &set, &["Job", "Node"]].concat()
        );
        let first: &[&Read] = trainjob_reads![jobs first, &PODS_READ; &NODES_READ];
        assert_eq!(
            kinds(first),
            [&["Pod", "Job"][..], &set, &["Node"]].concat()
        );
        let alone: &[&Read] = trainjob_reads![jobs first;];
        assert_eq!(kinds(alone), [&["Job"][..], &set].concat());
        // The same statics the kit's own lookups use.
        assert!(std::ptr::eq(first[1], &JOBS_READ));
    }

    #[test]
    fn the_trainer_fields_and_a_runtime_patch_land_on_the_node_container() {
        let o = job(json!({
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": 3, "command": ["torchrun"], "args": ["train.py"],
                        "env": [{"name": "A", "value": "1"}],
                        "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}},
            "runtimePatches": [{"manager": "example.io/me", "trainingRuntimeSpec": {"template":
                {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template":
                    {"spec": {"nodeSelector": {"zone": "a"},
                              "containers": [{"name": "node", "volumeMounts":
                                  [{"name": "v", "mountPath": "/v"}]}]}}}}}]}}}}]
        }));
        let w = over_runtime(&o, &torch()).unwrap();
        assert_eq!(w.templates.len(), 1);
        let t = &w.templates[0];
        assert_eq!(
            (t.role.as_str(), t.replicas, t.replicas_set),
            ("node", 3, true)
        );
        assert_eq!(
            t.spec.node_selector.as_ref().unwrap()["zone"],
            "a",
            "the patch's nodeSelector"
        );
        let c = &t.spec.containers[0];
        assert_eq!(
            c.image.as_deref(),
            Some("pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime")
        );
        assert_eq!(c.command.as_deref(), Some(&["torchrun".to_string()][..]));
        assert_eq!(c.volume_mounts.as_ref().unwrap()[0].mount_path, "/v");
        let env: Vec<(&str, Option<&str>)> = c
            .env
            .iter()
            .flatten()
            .map(|e| (e.name.as_str(), e.value.as_deref()))
            .collect();
        assert_eq!(env[0], ("A", Some("1")));
        assert!(env.contains(&("PET_NNODES", Some("3"))));
        assert!(env.contains(&("PET_NPROC_PER_NODE", Some("auto"))));
        assert!(env.contains(&("PET_MASTER_ADDR", Some("tj-node-0-0.tj"))));
        assert_eq!(t.container_paths, ["spec.trainer"]);
        let v = w.trainjob().unwrap();
        assert_eq!(
            v.runtime.as_deref(),
            Some("ClusterTrainingRuntime torch-distributed")
        );
    }

    #[test]
    fn auto_without_a_gpu_is_the_cpus_asked_for() {
        let o = job(json!({"runtimeRef": {"name": "torch-distributed"},
            "trainer": {"resourcesPerNode": {"requests": {"cpu": "3500m"}}}}));
        let w = over_runtime(&o, &torch()).unwrap();
        let v = w.trainjob().unwrap();
        assert_eq!(v.nproc.as_ref().unwrap().0, "4");
        assert_eq!(w.templates[0].replicas, 1, "mlPolicy.numNodes");
    }

    #[test]
    fn keyed_lists_merge_by_key_and_others_are_replaced() {
        let mut base = json!({"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}],
                              "tolerations": [{"key": "t1"}], "nodeSelector": {"k": "1"}});
        merge_patch(
            &mut base,
            &json!({"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]},
                                   {"name": "b"}],
                    "tolerations": [{"key": "t2"}], "nodeSelector": {"j": "2"}}),
        );
        assert_eq!(base["containers"][0]["env"].as_array().unwrap().len(), 2);
        assert_eq!(base["containers"][1]["name"], "b");
        assert_eq!(base["tolerations"], json!([{"key": "t2"}]));
        assert_eq!(base["nodeSelector"], json!({"k": "1", "j": "2"}));
    }

    #[test]
    fn deepspeed_sizes_the_workers_and_gives_them_only_the_env() {
        let rt = built_in_runtimes()
            .into_iter()
            .find(|o| o.name() == "deepspeed-distributed")
            .unwrap();
        let rt = Runtime {
            obj: rt,
            source: RuntimeSource::BuiltIn,
        };
        let o = job(json!({"runtimeRef": {"name": "deepspeed-distributed"},
            "trainer": {"numNodes": 3, "command": ["mpirun", "python", "t.py"],
                        "env": [{"name": "A", "value": "1"}]}}));
        let w = over_runtime(&o, &rt).unwrap();
        let node = w.template("node").unwrap();
        let launcher = w.template("launcher").unwrap();
        assert_eq!((node.replicas, launcher.replicas), (2, 1));
        assert_eq!(
            node.spec.containers[0].command.as_deref().unwrap()[0],
            "/usr/sbin/sshd"
        );
        assert_eq!(
            launcher.spec.containers[0].command.as_deref().unwrap()[0],
            "mpirun"
        );
        assert!(node.spec.containers[0]
            .env
            .iter()
            .flatten()
            .any(|e| e.name == "A"));
    }
}
