//! Lab `parallelism-3d` (quiz question 2): a PyTorchJob or a TrainJob `llm-200b` that trains with tensor,
//! pipeline and data parallelism together (all three > 1), TP inside a node, TP × PP × DP using
//! every GPU of the job's nodes, a model and a batch that split evenly.
//!
//! Degrees come from the command line as Megatron-LM or NeMo read it; DP is derived as Megatron
//! does (world / (TP × PP × CP)), never written. The rules and their messages are Megatron-LM's
//! (core_v0.19.0 `megatron/training/arguments.py`): `--num-layers` divisible by PP
//! (`validate_args`, without virtual or uneven pipeline stages), `--num-attention-heads` by TP
//! (`TransformerConfig.__post_init__`), global batch by micro batch × DP
//! (`num_microbatches_calculator.py`); `--micro-batch-size` is required and the global batch
//! defaults to micro batch × DP.
//!
//! "Nodes" is the task's node count (`nodes`), capped live by the whole GPU nodes the pods may
//! use, so a cluster with spare nodes does not ask for a bigger job and a smaller one asks for
//! what fits; static mode takes `--param nodes` (or the profile's with `--profile`).

mod activations;

use crate::facts::instances::GPU;
use crate::observe::kinds::{PODS, PYTORCHJOBS};
use crate::observe::InputError;
use crate::verify::kit::cmdline::{Merged, MergedState, Precision};
use crate::verify::kit::k8s::rejection::Rejection;
use crate::verify::kit::training::job::{find_training_job, TrainingJob};
use crate::verify::kit::training::job_pods;
use crate::verify::kit::training::parallel::{
    self, check_tp_within_node, Degrees, GpuNodes, JobLaunch, PodStart, Procs, Unknown, Value,
};
use crate::verify::kit::training::trainjob::{trainjob_reads, TRAINJOBS_READ};
use crate::verify::{Advice, JudgeCtx, Judgement, Outcome, Params, Read, Reason, Verifier};

pub struct Parallelism3d;

static PYTORCHJOBS_READ: Read = Read::lab(&PYTORCHJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static READS: &[&Read] = trainjob_reads![&PYTORCHJOBS_READ; &PODS_READ];

const JOB: &str = "llm-200b";
const THREE: &str = "three-degrees";
const TP_WITHIN: &str = "tp-within-node";
const MATCH_WORLD: &str = "degrees-match-world";
const LAYERS: &str = "layers-divisible";
const BATCH: &str = "global-batch";
const PODS_RUNNING: &str = "pods-running";
const ONE_PER_NODE: &str = "one-pod-per-node";
const CHECKS: &[&str] = &[
    THREE,
    TP_WITHIN,
    MATCH_WORLD,
    LAYERS,
    BATCH,
    PODS_RUNNING,
    ONE_PER_NODE,
];

/// Bytes per parameter Megatron-LM keeps for weights, gradients and Adam states, by precision:
/// (on every DP rank, sharded over DP by `--use-distributed-optimizer`). NVIDIA/Megatron-LM
/// core_v0.19.0 `docs/user-guide/features/dist_optimizer.md`: fp16 parameters and gradients
/// 20 = 4 + 16/d; bf16 parameters with fp32 gradients 18 = 6 + 12/d (`--bf16` accumulates and
/// all-reduces gradients in fp32: `validate_args` sets `accumulate_allreduce_grads_in_fp32`);
/// fp32 16 = 8 + 8/d. None for a precision Megatron-LM would refuse or this kit cannot read.
fn state_bytes(precision: &Merged<Precision>) -> Option<(Precision, f64, f64)> {
    let p = match precision.state() {
        // No precision flag: Megatron-LM's params_dtype stays torch.float.
        MergedState::NotSet => Precision::Fp32,
        MergedState::One(s) => s.known()?.clone(),
        MergedState::Unknown(_) | MergedState::Conflict(_) => return None,
    };
    let (kept, sharded) = match p {
        Precision::Bf16 => (6.0, 12.0),
        Precision::Fp16 => (4.0, 16.0),
        Precision::Fp32 => (8.0, 8.0),
        Precision::Unknown(_) => return None,
    };
    Some((p, kept, sharded))
}

fn precision_name(p: &Precision) -> &'static str {
    match p {
        Precision::Bf16 => "bf16",
        Precision::Fp16 => "fp16",
        Precision::Fp32 | Precision::Unknown(_) => "fp32",
    }
}

impl Verifier for Parallelism3d {
    fn lab_id(&self) -> &'static str {
        "parallelism-3d"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let jobs = [&PYTORCHJOBS_READ, &TRAINJOBS_READ];
        let w = match find_training_job(ctx, JOB, &jobs, THREE, CHECKS)? {
            TrainingJob::Found(w) => w,
            TrainingJob::Absent(j) => return Ok(j),
        };
        let launch = JobLaunch::of(&w);
        let spec = launch
            .main_role()
            .and_then(|r| w.template(&r.role))
            .map(|t| t.spec.clone())
            .unwrap_or_default();
        let gpu_nodes = GpuNodes::find(ctx, &spec)?;
        let nodes = job_nodes(ctx, &gpu_nodes)?;
        let kind = w.kind.kind();
        let ev = |o: Outcome| {
            o.with("job", JOB)
                .with("namespace", &ctx.target.namespace)
                .with("kind", kind)
                .with("job_resource", kind.to_ascii_lowercase())
        };
        let mut j = Judgement::default();

        match Degrees::of(&launch) {
            Ok(d) => {
                let dp = launch.world().and_then(|w| d.data_parallel(w));
                j.push(ev(check_three(&d, dp)));
                j.push(ev(check_tp_within_node(TP_WITHIN, &d, &gpu_nodes)));
                let rejected = parallel::rejections(&w);
                j.push(ev(check_match_world(
                    &launch, &d, &gpu_nodes, &nodes, &rejected,
                )));
                j.push(ev(check_layers(&d)));
                j.push(ev(check_batch(&d, dp)));
                advise_memory(&mut j, ctx, &launch, &d, dp, &gpu_nodes)?;
                if let Some(a) = parallel::max_connections_advice(&launch, &d) {
                    j.advise(a);
                }
            }
            Err(e) => {
                let written = parallel::flag_written(&e);
                j.push(ev(Outcome::fail(
                    THREE,
                    "TP > 1, PP > 1, DP = world / (TP × PP) > 1",
                    written.clone(),
                )
                .hint("bad-flag")
                .with("flag", e.flag())
                .with("written", written)));
                for c in [TP_WITHIN, MATCH_WORLD, LAYERS, BATCH] {
                    j.push(ev(Outcome::skipped(
                        c,
                        Reason::Message("plan-unreadable".into()),
                    )));
                }
            }
        }

        for o in job_pods::pod_checks(
            ctx,
            &w,
            &PODS_READ,
            launch.pods(),
            [PODS_RUNNING, ONE_PER_NODE],
        )? {
            j.push(ev(o));
        }
        Ok(j)
    }
}

/// The nodes the job must span: the task's `nodes`, at most the whole GPU nodes the pods may use.
fn job_nodes(ctx: &JudgeCtx, g: &GpuNodes) -> Result<Result<i64, Unknown>, InputError> {
    if ctx.is_static() {
        return Ok(g.nodes.clone());
    }
    let task = Params::number(ctx.params.get("nodes"), "nodes")?.map(i64::from);
    Ok(match (&g.nodes, task) {
        (Ok(have), Some(want)) => Ok((*have).min(want)),
        (Ok(have), None) => Ok(*have),
        (Err(u), _) => Err(u.clone()),
    })
}

fn degree_text(v: &Value) -> String {
    v.degree().map_or_else(|| v.written(), |n| n.to_string())
}

/// TP > 1, PP > 1 and the derived DP > 1.
fn check_three(d: &Degrees, dp: Option<i64>) -> Outcome {
    let expected = "TP > 1, PP > 1, DP = world / (TP × PP) > 1";
    let dp_text = dp.map_or_else(|| "?".to_string(), |n| n.to_string());
    let found = format!(
        "TP {} ({}), PP {} ({}), DP {dp_text}",
        degree_text(&d.tp),
        d.tp.written(),
        degree_text(&d.pp),
        d.pp.written()
    );
    let ev = |o: Outcome| {
        o.with("tp", degree_text(&d.tp))
            .with("pp", degree_text(&d.pp))
            .with("dp", &dp_text)
    };
    for (name, v) in [("TP", &d.tp), ("PP", &d.pp)] {
        let hint = match v {
            Value::Variable(_) => Some("variable"),
            Value::Conflict(_) => Some("conflict"),
            Value::Invalid(_) => Some("invalid"),
            _ => None,
        };
        if let Some(h) = hint {
            return ev(Outcome::fail(THREE, expected, found)
                .hint(h)
                .with("degree", name)
                .with("written", v.written()));
        }
    }
    let (tp, pp) = (d.tp.degree().unwrap_or(1), d.pp.degree().unwrap_or(1));
    if let Some(f) = d.removed.first().filter(|_| d.tp == Value::Unset) {
        return ev(
            Outcome::fail(THREE, expected, format!("{} (removed)", f.spelling))
                .hint("removed")
                .with("flag", &f.spelling)
                .with("message", f.message),
        );
    }
    if tp <= 1 || pp <= 1 {
        let missing: Vec<&str> = [("TP", tp), ("PP", pp)]
            .into_iter()
            .filter(|(_, n)| *n <= 1)
            .map(|(name, _)| name)
            .collect();
        return ev(Outcome::fail(THREE, expected, found).with("missing", missing.join(", ")));
    }
    match dp {
        None => ev(Outcome::skipped(
            THREE,
            Reason::Message("dp-unknown".into()),
        )),
        Some(1) => ev(Outcome::fail(THREE, expected, found).hint("no-dp")),
        Some(_) => ev(Outcome::pass(THREE).expected_found(expected, found)),
    }
}

/// TP × PP × DP = nodes × GPUs per node: every GPU of the job's nodes runs one rank, and the
/// degrees split that world exactly. What the API server would refuse fails here first.
fn check_match_world(
    launch: &JobLaunch,
    d: &Degrees,
    g: &GpuNodes,
    nodes: &Result<i64, Unknown>,
    rejected: &[Rejection],
) -> Outcome {
    if let Some(first) = rejected.first() {
        let all: Vec<&str> = rejected.iter().map(|r| r.text.as_str()).collect();
        return Outcome::fail(MATCH_WORLD, "API server rejections: 0", all.join("; "))
            .hint("rejected")
            .with("field", &first.field)
            .with("rejection", &first.text);
    }
    let per = match &g.gpus_per_node {
        Ok(p) => *p,
        Err(u) => return u.outcome(MATCH_WORLD),
    };
    let n = match nodes {
        Ok(n) => *n,
        Err(u) => return u.outcome(MATCH_WORLD),
    };
    let want = n.saturating_mul(per);
    let pods = launch.pods();
    let expected = format!("TP × PP × DP = {n} nodes × {per} GPUs = {want}");
    let ev = |o: Outcome| {
        o.with("nodes", n)
            .with("gpus_per_node", per)
            .with("world_expected", want)
            .with("pods", pods)
    };
    if pods != n {
        let found = format!("{pods} pods");
        return ev(Outcome::fail(MATCH_WORLD, expected, found).hint("nodes"));
    }
    for r in &launch.roles {
        let gpus = r.gpus.unwrap_or(0);
        if gpus != per {
            let found = format!("{}: {GPU} {gpus} per pod", r.role);
            return ev(Outcome::fail(MATCH_WORLD, expected, found)
                .hint("gpus")
                .with("role", &r.role)
                .with("gpus", gpus));
        }
        let (procs, written) = match &r.launcher {
            PodStart::Torchrun { nproc, .. } => (
                match nproc.procs {
                    Procs::Count(c) => Some(c),
                    _ => None,
                },
                nproc.written.clone(),
            ),
            PodStart::Python => (Some(1), "python".to_string()),
            PodStart::Nothing => (None, r.command.clone()),
            PodStart::Broken(written) => (None, written.clone()),
        };
        if procs != Some(per) {
            let found = format!("{}: {written}", r.role);
            return ev(Outcome::fail(MATCH_WORLD, expected, found)
                .hint("nproc")
                .with("role", &r.role)
                .with("nproc_written", written));
        }
        if let Some(nn) = r.nnodes_mismatch(pods) {
            return ev(
                Outcome::fail(MATCH_WORLD, expected, format!("{}: {nn}", r.role))
                    .hint("nnodes")
                    .with("nnodes_written", nn),
            );
        }
    }
    let world = launch.world().unwrap_or(want);
    let Some(mp) = d.model_parallel() else {
        return ev(Outcome::skipped(
            MATCH_WORLD,
            Reason::Message("degrees-unknown".into()),
        ));
    };
    let model = d.describe_model_parallel();
    if world % mp != 0 {
        let found = format!("world {world} % ({model} = {mp}) = {}", world % mp);
        return ev(Outcome::fail(MATCH_WORLD, expected, found)
            .hint("not-divisible")
            .with("model", model)
            .with("model_parallel", mp)
            .with("world", world));
    }
    let found = format!(
        "{model} × DP {} = {world} ({pods} pods × nproc {per})",
        world / mp
    );
    ev(Outcome::pass(MATCH_WORLD).expected_found(expected, found))
}

/// Layers split evenly into pipeline stages, attention heads into tensor-parallel ranks.
fn check_layers(d: &Degrees) -> Outcome {
    let (Some(tp), Some(pp)) = (d.tp.degree(), d.pp.degree()) else {
        return Outcome::skipped(LAYERS, Reason::Message("degrees-unknown".into()));
    };
    let expected = format!("num-layers % PP {pp} == 0, num-attention-heads % TP {tp} == 0");
    let ev = |o: Outcome| o.with("tp", tp).with("pp", pp);
    for (what, v) in [
        ("num-layers", &d.num_layers),
        ("num-attention-heads", &d.num_attention_heads),
    ] {
        let hint = match v {
            Value::Set { .. } => continue,
            Value::Unset => "unset",
            _ => "unreadable",
        };
        return ev(
            Outcome::fail(LAYERS, expected, format!("{what}: {}", v.written()))
                .hint(hint)
                .with("what", what)
                .with("written", v.written()),
        );
    }
    let (Some(layers), Some(heads)) = (d.num_layers.value(), d.num_attention_heads.value()) else {
        return Outcome::skipped(LAYERS, Reason::Message("degrees-unknown".into()));
    };
    let found = format!(
        "{} ({layers} % {pp} = {}), {} ({heads} % {tp} = {})",
        d.num_layers.written(),
        layers % pp,
        d.num_attention_heads.written(),
        heads % tp
    );
    let o = if layers % pp != 0 {
        Outcome::fail(LAYERS, expected, found).hint("layers")
    } else if heads % tp != 0 {
        Outcome::fail(LAYERS, expected, found).hint("heads")
    } else {
        Outcome::pass(LAYERS).expected_found(expected, found)
    };
    ev(o).with("layers", layers).with("heads", heads)
}

/// The global batch is a whole number of micro batches on every data-parallel replica.
fn check_batch(d: &Degrees, dp: Option<i64>) -> Outcome {
    let mbs = match &d.micro_batch {
        Value::Set { value, .. } => *value,
        other => {
            let hint = if *other == Value::Unset {
                "no-micro-batch"
            } else {
                "unreadable"
            };
            return Outcome::fail(
                BATCH,
                "--micro-batch-size ≥ 1",
                format!("micro_batch_size: {}", other.written()),
            )
            .hint(hint)
            .with("written", other.written());
        }
    };
    let Some(dp) = dp else {
        return Outcome::skipped(BATCH, Reason::Message("dp-unknown".into()));
    };
    let unit = mbs.saturating_mul(dp);
    let expected = format!("global_batch_size % (micro_batch_size {mbs} × DP {dp} = {unit}) == 0");
    let ev = |o: Outcome| o.with("mbs", mbs).with("dp", dp).with("unit", unit);
    match &d.global_batch {
        Value::Unset => ev(Outcome::pass(BATCH).expected_found(
            expected,
            format!("global_batch_size: unset → micro_batch_size × DP = {unit}"),
        )),
        Value::Set { value, written } => {
            let found = format!("{written} ({value} % {unit} = {})", value % unit);
            let o = if value % unit == 0 {
                Outcome::pass(BATCH).expected_found(expected, found)
            } else {
                Outcome::fail(BATCH, expected, found)
            };
            ev(o).with("gbs", value)
        }
        other => ev(Outcome::fail(
            BATCH,
            expected,
            format!("global_batch_size: {}", other.written()),
        )
        .hint("unreadable")
        .with("written", other.written())),
    }
}

/// Non-scoring: the memory the model's weights, gradients and Adam states take per GPU, against
/// the GPU's memory, and what the distributed optimizer (ZeRO-1 over DP) brings it to.
fn advise_memory(
    j: &mut Judgement,
    ctx: &JudgeCtx,
    launch: &JobLaunch,
    d: &Degrees,
    dp: Option<i64>,
    g: &GpuNodes,
) -> Result<(), InputError> {
    let params_b = Params::number(
        ctx.params.get("model_params_billion"),
        "model_params_billion",
    )?;
    let param_mem = Params::number(ctx.params.get("gpu_memory_gb"), "gpu_memory_gb")?;
    let (Some(params_b), Some(mp), Some(dp), Some((precision, kept, shardable))) =
        (params_b, d.model_parallel(), dp, state_bytes(&d.precision))
    else {
        return Ok(());
    };
    // GPU feature discovery's label (MiB) when every node has it, else the lab's figure.
    let gpu_gb = match g.gpu_memory_mib {
        Some(mib) => mib as f64 * 1_048_576.0 / 1e9,
        None => match param_mem {
            Some(gb) => f64::from(gb),
            None => return Ok(()),
        },
    };
    let per_shard = f64::from(params_b) / mp as f64; // billions of parameters on one GPU
    let sharded_bytes = kept + shardable / dp as f64;
    let plain = per_shard * (kept + shardable);
    let sharded = per_shard * sharded_bytes;
    let gb = |x: f64| format!("{x:.1}");
    // 12, 7.5, 7.71: bytes per parameter without trailing zeros.
    let bytes = |x: f64| {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    j.advise(
        Advice::new("memory-per-gpu")
            .with("params_b", params_b)
            .with("precision", precision_name(&precision))
            .with("bytes", bytes(kept + shardable))
            .with("model", d.describe_model_parallel())
            .with("per_gpu_gb", gb(plain))
            .with("gpu_gb", gb(gpu_gb)),
    );
    let sharded_advice = |id: &str| {
        Advice::new(id)
            .with("kept", bytes(kept))
            .with("shardable", bytes(shardable))
            .with("sharded_bytes", bytes(sharded_bytes))
            .with("sharded_gb", gb(sharded))
            .with("dp", dp)
            .with("gpu_gb", gb(gpu_gb))
    };
    if sharded > gpu_gb {
        j.advise(sharded_advice("too-big"));
    } else if plain > gpu_gb && !d.distributed_optimizer {
        j.advise(sharded_advice("distributed-optimizer"));
    }
    // The states fit (as written, or with the distributed optimizer advised above): the first
    // pipeline stage's activations come on top of them.
    let states = if d.distributed_optimizer || plain > gpu_gb {
        sharded
    } else {
        plain
    };
    let acts = launch
        .main_role()
        .filter(|r| r.megatron)
        .and_then(|r| activations::StageActivations::of(&r.script_args, dp));
    if let Some(a) = acts.filter(|_| states <= gpu_gb) {
        let act_gb = a.bytes() / 1e9;
        if states + act_gb > gpu_gb {
            j.advise(
                Advice::new("activations")
                    .with("layers", a.layers)
                    .with("in_flight", a.in_flight)
                    .with("per_layer_mb", format!("{:.0}", a.per_layer / 1e6))
                    .with("act_gb", gb(act_gb))
                    .with("states_gb", gb(states))
                    .with("total_gb", gb(states + act_gb))
                    .with("gpu_gb", gb(gpu_gb)),
            );
        }
    }
    Ok(())
}
