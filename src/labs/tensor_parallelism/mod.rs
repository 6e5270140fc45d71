//! Lab `tensor-parallelism` (quiz question 1): a PyTorchJob or a TrainJob (Kubeflow Trainer v2)
//! `tp-llm` whose pods each take every
//! GPU of a node, start one process per GPU with torchrun, and split each layer across the GPUs
//! of one node (tensor parallelism, TP > 1 inside the NVLink domain), data parallel across nodes.
//!
//! Spec checks judge the PyTorchJob as written (also with `--files`); the command line is read
//! the way torchrun and Megatron-LM/NeMo read it ([`kit::training::parallel`], [`kit::cmdline`]). State
//! checks judge the pods the operator made, found by the job's uid (a TrainJob's through its
//! JobSet and Jobs). Texts live in
//! lab.yaml; this file decides and reports values.

use crate::facts::instances::GPU;
use crate::observe::kinds::{PODS, PYTORCHJOBS};
use crate::observe::InputError;
use crate::verify::kit::k8s::rejection::Rejection;
use crate::verify::kit::training::job::{find_training_job, TrainingJob};
use crate::verify::kit::training::job_pods;
use crate::verify::kit::training::parallel::{
    self, check_tp_within_node, Degrees, GpuNodes, JobLaunch, PodStart, Procs, RoleLaunch, Value,
};
use crate::verify::kit::training::trainjob::{trainjob_reads, TRAINJOBS_READ};
use crate::verify::{JudgeCtx, Judgement, Outcome, Read, Reason, Verifier};

pub struct TensorParallelism;

static PYTORCHJOBS_READ: Read = Read::lab(&PYTORCHJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static READS: &[&Read] = trainjob_reads![&PYTORCHJOBS_READ; &PODS_READ];

const JOB: &str = "tp-llm";
const WHOLE_NODE: &str = "whole-node-gpus";
const NPROC: &str = "nproc-matches-gpus";
const TP_SET: &str = "tp-set";
const TP_WITHIN: &str = "tp-within-node";
const WORLD: &str = "world-divisible";
const PODS_RUNNING: &str = "pods-running";
const ONE_PER_NODE: &str = "one-pod-per-node";
const CHECKS: &[&str] = &[
    WHOLE_NODE,
    NPROC,
    TP_SET,
    TP_WITHIN,
    WORLD,
    PODS_RUNNING,
    ONE_PER_NODE,
];

impl Verifier for TensorParallelism {
    fn lab_id(&self) -> &'static str {
        "tensor-parallelism"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let jobs = [&PYTORCHJOBS_READ, &TRAINJOBS_READ];
        let w = match find_training_job(ctx, JOB, &jobs, WHOLE_NODE, CHECKS)? {
            TrainingJob::Found(w) => w,
            TrainingJob::Absent(j) => return Ok(j),
        };
        let launch = JobLaunch::of(&w);
        let main = launch.main_role();
        let spec = main
            .and_then(|r| w.template(&r.role))
            .map(|t| t.spec.clone())
            .unwrap_or_default();
        let nodes = GpuNodes::find(ctx, &spec)?;
        let degrees = Degrees::of(&launch);
        let kind = w.kind.kind();
        let ev = |o: Outcome| {
            o.with("job", JOB)
                .with("namespace", &ctx.target.namespace)
                .with("kind", kind)
                .with("job_resource", kind.to_ascii_lowercase())
        };

        let mut j = Judgement::default();
        let rejected = parallel::rejections(&w);
        j.push(ev(check_whole_node(&launch, &nodes, &rejected)));
        j.push(ev(check_nproc(&launch)));
        match &degrees {
            Ok(d) => {
                j.push(ev(check_tp_set(d)));
                j.push(ev(check_tp_within_node(TP_WITHIN, d, &nodes)));
                j.push(ev(check_world(&launch, d)));
                if let Some(a) = parallel::max_connections_advice(&launch, d) {
                    j.advise(a);
                }
            }
            Err(e) => {
                let written = parallel::flag_written(e);
                j.push(ev(Outcome::fail(TP_SET, "TP > 1", written.clone())
                    .hint("bad-flag")
                    .with("flag", e.flag())
                    .with("written", written)));
                for c in [TP_WITHIN, WORLD] {
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

/// `<role>: <gpus>` for every role, for found values.
fn per_role(launch: &JobLaunch, f: impl Fn(&RoleLaunch) -> String) -> String {
    launch
        .roles
        .iter()
        .map(|r| format!("{}: {}", r.role, f(r)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn gpus_text(r: &RoleLaunch) -> String {
    r.gpus
        .map_or_else(|| "unreadable".to_string(), |g| format!("{GPU} {g}"))
}

/// Each pod asks for every GPU of a node: the node is the TP group's NVLink domain, and a pod
/// with fewer GPUs shares its node. What the API server would refuse fails here first.
fn check_whole_node(launch: &JobLaunch, nodes: &GpuNodes, rejected: &[Rejection]) -> Outcome {
    if let Some(first) = rejected.first() {
        let all: Vec<&str> = rejected.iter().map(|r| r.text.as_str()).collect();
        return Outcome::fail(WHOLE_NODE, "API server rejections: 0", all.join("; "))
            .hint("rejected")
            .with("field", &first.field)
            .with("rejection", &first.text);
    }
    let g = match &nodes.gpus_per_node {
        Ok(g) => *g,
        Err(u) => return u.outcome(WHOLE_NODE),
    };
    let expected = format!("{GPU} per pod: {g} (= node allocatable)");
    let found = per_role(launch, gpus_text);
    for r in &launch.roles {
        let Some(gpus) = r.gpus else { continue };
        if gpus == g {
            continue;
        }
        let o = Outcome::fail(WHOLE_NODE, expected, found)
            .with("role", &r.role)
            .with("gpus", gpus)
            .with("gpus_per_node", g)
            .with("path", r.limits_path());
        return match gpus {
            0 => o.hint("none"),
            n if n > g => o.hint("too-many"),
            _ => o,
        };
    }
    Outcome::pass(WHOLE_NODE)
        .expected_found(expected, found)
        .with("gpus_per_node", g)
}

/// One process per GPU: torchrun's processes per pod equal the pod's GPUs.
fn check_nproc(launch: &JobLaunch) -> Outcome {
    let expected = format!("nproc_per_node == {GPU} per pod");
    for r in &launch.roles {
        let fail = |found: String, hint: Option<&str>| {
            let o = Outcome::fail(NPROC, expected.clone(), found)
                .with("role", &r.role)
                .with("command", &r.command)
                .with("container", &r.container_path)
                .with("gpus", r.gpus.unwrap_or(0));
            match hint {
                Some(h) => o.hint(h),
                None => o,
            }
        };
        let gpus = r.gpus.unwrap_or(0);
        match &r.launcher {
            PodStart::Nothing => {
                return fail(format!("{}: {}", r.role, r.command), Some("no-launcher"))
            }
            PodStart::Broken(written) => {
                return fail(format!("{}: {written}", r.role), Some("broken"))
                    .with("written", written)
            }
            PodStart::Python if gpus != 1 => {
                return fail(
                    format!("{}: python, nproc 1, {}", r.role, gpus_text(r)),
                    Some("no-torchrun"),
                )
            }
            PodStart::Python => {}
            PodStart::Torchrun { nproc, .. } => {
                let o = |found: String, hint: Option<&str>| {
                    fail(found, hint).with("nproc_written", &nproc.written)
                };
                match &nproc.procs {
                    Procs::Count(n) if *n == gpus => {}
                    Procs::Count(n) => {
                        return o(
                            format!(
                                "{}: nproc {n} ({}), {}",
                                r.role,
                                nproc.written,
                                gpus_text(r)
                            ),
                            None,
                        )
                        .with("nproc", n)
                    }
                    Procs::NodeCpus => {
                        return o(
                            format!("{}: nproc = node CPUs ({})", r.role, nproc.written),
                            Some("cpus"),
                        )
                    }
                    Procs::Variable => {
                        return o(format!("{}: {}", r.role, nproc.written), Some("variable"))
                    }
                    Procs::Refused(msg) => {
                        return o(
                            format!("{}: {} → {msg}", r.role, nproc.written),
                            Some("refused"),
                        )
                        .with("message", msg)
                    }
                }
            }
        }
    }
    let found = per_role(launch, |r| {
        let how = match &r.launcher {
            PodStart::Torchrun { nproc, .. } => nproc.written.clone(),
            _ => "python".to_string(),
        };
        format!("nproc {} ({how}), {}", r.procs().unwrap_or(0), gpus_text(r))
    });
    Outcome::pass(NPROC).expected_found(expected, found)
}

/// Tensor parallelism is on: TP > 1 (Megatron-LM/NeMo default 1).
fn check_tp_set(d: &Degrees) -> Outcome {
    let expected = "TP > 1";
    let found = format!("TP {}", d.tp.written());
    let o = match &d.tp {
        Value::Set { value, .. } if *value > 1 => {
            return Outcome::pass(TP_SET)
                .expected_found(expected, found)
                .with("tp", value)
        }
        Value::Unset => match d.removed.first() {
            // `--model-parallel-size` is the old spelling: Megatron-LM stops with its message.
            Some(f) => Outcome::fail(TP_SET, expected, format!("{} (removed)", f.spelling))
                .hint("removed")
                .with("flag", &f.spelling)
                .with("message", f.message),
            None => Outcome::fail(TP_SET, expected, "TP unset (default 1)").hint("unset"),
        },
        Value::Variable(_) => Outcome::fail(TP_SET, expected, found).hint("variable"),
        Value::Conflict(_) => Outcome::fail(TP_SET, expected, found).hint("conflict"),
        Value::Set { .. } | Value::Invalid(_) => Outcome::fail(TP_SET, expected, found),
    };
    o.with("tp_written", d.tp.written())
}

/// The world (pods × processes) splits into whole model-parallel groups of TP × PP (× CP).
fn check_world(launch: &JobLaunch, d: &Degrees) -> Outcome {
    let pods = launch.pods();
    if let Some((r, written)) = launch
        .roles
        .iter()
        .find_map(|r| r.nnodes_mismatch(pods).map(|w| (r, w)))
    {
        return Outcome::fail(
            WORLD,
            format!("--nnodes {pods} | unset"),
            format!("{}: {written}", r.role),
        )
        .hint("nnodes")
        .with("nnodes_written", written)
        .with("pods", pods);
    }
    let Some(world) = launch.world() else {
        return Outcome::skipped(WORLD, Reason::Message("world-unknown".into()));
    };
    let Some(mp) = d.model_parallel() else {
        return Outcome::skipped(WORLD, Reason::Message("tp-unknown".into()))
            .with("tp_written", d.tp.written());
    };
    let model = d.describe_model_parallel();
    let expected = format!("world % ({model} = {mp}) == 0");
    let procs = per_role(launch, |r| {
        format!("{} × {}", r.replicas, r.procs().unwrap_or(0))
    });
    let found = format!("world {world} ({procs})");
    let o = if world % mp == 0 {
        Outcome::pass(WORLD).expected_found(expected, format!("{found}; DP {}", world / mp))
    } else {
        Outcome::fail(WORLD, expected, found)
    };
    o.with("world", world)
        .with("pods", pods)
        .with("model_parallel", mp)
        .with("model", model)
}
