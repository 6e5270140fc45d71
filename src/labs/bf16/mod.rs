//! Lab `bf16`: a PyTorchJob `bf16-train` that trains in BF16 mixed precision, without FP16 or
//! its loss scaling, placed only on accelerators with native BF16.
//!
//! Spec checks read the command line of each replica's `pytorch` container the way the tools
//! read it (kit `cmdline`): Megatron-LM `--bf16`/`--fp16`, Hugging Face `--bf16 [true]`, NeMo
//! `trainer.precision`/`trainer.plugins`, `accelerate launch --mixed_precision`, and a DeepSpeed
//! config given inline or as a file from a ConfigMap volume. Placement is read from each pod
//! template's `nodeSelector` and required node affinity against the BF16 table
//! ([`crate::facts::precision`]). State checks follow the PyTorchJob's uid to its pods.
//!
//! The precision a command asks for is the kit's (`training::job::precision`); `pods-running` is the
//! kit's rule (`pods::running`).

use k8s_openapi::api::core::v1::{NodeSelectorTerm, PodSpec};

use crate::facts::instances::INSTANCE_TYPE_LABEL;
use crate::facts::precision::{self, BF16_LABELS, GPU_COMPUTE_MAJOR_LABEL};
use crate::observe::kinds::{CONFIGMAPS, PODS, PYTORCHJOBS};
use crate::observe::{InputError, Obj};
use crate::verify::kit::cmdline::{command_line, FlagError};
use crate::verify::kit::k8s::placement::{self, Allowed};
use crate::verify::kit::k8s::pods::{self, JobEnd, PodState};
use crate::verify::kit::k8s::workload::{PodTemplate, Workload};
use crate::verify::kit::training::job::{
    self, bad_flag, find_training_job, first_rejection, main_container, no_command, precision,
    training_command, PrecisionFacts, TrainingJob,
};
use crate::verify::kit::training::job_pods;
use crate::verify::kit::training::trainjob::{trainjob_reads, TRAINJOBS_READ};
use crate::verify::{Advice, JudgeCtx, Judgement, Outcome, Read, Reason, Verifier};

pub struct Bf16;

static PYTORCHJOBS_READ: Read = Read::lab(&PYTORCHJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
static READS: &[&Read] = trainjob_reads![&PYTORCHJOBS_READ; &PODS_READ, &CONFIGMAPS_READ];

const JOB: &str = "bf16-train";
const BF16_ON: &str = "bf16-on";
const FP16_OFF: &str = "fp16-off";
const NO_LOSS_SCALING: &str = "no-loss-scaling";
const PLACEMENT: &str = "bf16-capable-placement";
const ON_BF16_NODES: &str = "pods-on-bf16-nodes";
const RUNNING: &str = "pods-running";
const CHECKS: &[&str] = &[
    BF16_ON,
    FP16_OFF,
    NO_LOSS_SCALING,
    PLACEMENT,
    ON_BF16_NODES,
    RUNNING,
];
/// The checks judged from the command line.
const COMMAND_CHECKS: &[&str] = &[BF16_ON, FP16_OFF, NO_LOSS_SCALING];

impl Verifier for Bf16 {
    fn lab_id(&self) -> &'static str {
        "bf16"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let jobs = [&PYTORCHJOBS_READ, &TRAINJOBS_READ];
        let job = match find_training_job(ctx, JOB, &jobs, BF16_ON, CHECKS)? {
            TrainingJob::Found(w) => w,
            TrainingJob::Absent(j) => return Ok(j),
        };
        let ns = ctx.target.namespace.as_str();
        let config_maps = ctx.list(&CONFIGMAPS_READ).unwrap_or_default();
        let mut j = Judgement::default();

        // Spec: what the API server or the operator refuses first, then each command line.
        let rejected = first_rejection(&job);
        let commands: Vec<(&PodTemplate, Judged)> = job
            .templates
            .iter()
            .map(|t| (t, judge_template(t, &config_maps)))
            .collect();
        for check in COMMAND_CHECKS {
            let o = match &rejected {
                Some(r) if *check == BF16_ON => r.outcome(check),
                _ => command_outcome(check, &commands),
            };
            j.push(o.with("job", JOB).with("namespace", ns));
        }
        for (_, judged) in &commands {
            if let Judged::Read { facts, .. } = judged {
                if let Some(origin) = &facts.ds_unseen {
                    j.advise(Advice::new("ds-config-unseen").with("path", origin));
                }
            }
        }
        if let Some(a) = job::run_clm_advice(&job) {
            j.advise(a);
        }
        j.push(placement_outcome(&job).with("job", JOB));

        // State: the pods the operator made for this PyTorchJob (by uid).
        let kind = job.kind.kind();
        let ev = |o: Outcome| {
            o.with("job", JOB)
                .with("namespace", ns)
                .with("kind", kind)
                .with("job_resource", kind.to_ascii_lowercase())
        };
        let pods = match ctx.list(&PODS_READ) {
            Ok(p) => p,
            Err(why) => {
                j.push(ev(Outcome::unavailable(ON_BF16_NODES, &why)));
                j.push(ev(Outcome::unavailable(RUNNING, &why)));
                return Ok(j);
            }
        };
        let states = match job_pods::training_job_pod_states(ctx, &job, &pods)? {
            Ok(states) => states,
            Err(why) => {
                j.push(ev(Outcome::unavailable(ON_BF16_NODES, &why)));
                j.push(ev(Outcome::unavailable(RUNNING, &why)));
                return Ok(j);
            }
        };
        let end = JobEnd::of(&job)?;
        j.push(ev(on_bf16_nodes(ctx, &states, end.is_finished())));
        let running = pods::running(RUNNING, &end, &states, job.total_replicas());
        j.push(ev(job_pods::with_jobs_status(running, &job)));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// Command-line checks.

/// What one template's command line says about precision.
enum Judged {
    Read {
        role: String,
        container: String,
        command: String,
        facts: PrecisionFacts,
    },
    /// No container, or no command that reaches a training script: (role, the command).
    NoCommand(String, String),
    /// A value the tool refuses at startup.
    BadFlag(String, FlagError),
}

fn judge_template(t: &PodTemplate, config_maps: &[&Obj]) -> Judged {
    let role = t.role.clone();
    let Some((c, _)) = main_container(t) else {
        return Judged::NoCommand(role, "—".into());
    };
    let Some(training) = training_command(c) else {
        return Judged::NoCommand(role, command_line(c, 160));
    };
    match precision(&training, &t.spec, c, config_maps) {
        Ok(facts) => Judged::Read {
            role,
            container: c.name.clone(),
            command: training.display,
            facts,
        },
        Err(e) => Judged::BadFlag(role, e),
    }
}

/// One outcome for a command-line check over every template: the first template that fails it.
fn command_outcome(check: &str, commands: &[(&PodTemplate, Judged)]) -> Outcome {
    for (_, judged) in commands {
        let (role, container, command, f) = match judged {
            Judged::NoCommand(role, line) => return no_command(check, line).with("role", role),
            Judged::BadFlag(role, e) => return bad_flag(check, e).with("role", role),
            Judged::Read {
                role,
                container,
                command,
                facts,
            } => (role, container, command, facts),
        };
        let ev = |o: Outcome| {
            o.with("role", role)
                .with("container", container)
                .with("command", command)
        };
        let fail = match check {
            BF16_ON if f.bf16.is_empty() && !f.unknown.is_empty() => Some(
                Outcome::fail(check, "--bf16", f.unknown.join(", "))
                    .hint("variable")
                    .with("found", f.unknown.join(", ")),
            ),
            BF16_ON if f.bf16.is_empty() => {
                let written: Vec<&str> =
                    f.fp16.iter().chain(&f.other).map(String::as_str).collect();
                let found = if written.is_empty() {
                    "—".to_string()
                } else {
                    written.join(", ")
                };
                Some(Outcome::fail(check, "--bf16", found.clone()).with("found", found))
            }
            FP16_OFF if !f.fp16.is_empty() => {
                let o =
                    Outcome::fail(check, "—", f.fp16.join(", ")).with("found", f.fp16.join(", "));
                Some(if f.bf16.is_empty() {
                    o
                } else {
                    o.hint("both").with("bf16", f.bf16.join(", "))
                })
            }
            NO_LOSS_SCALING if !f.loss_scaling.is_empty() => Some(
                Outcome::fail(check, "—", f.loss_scaling.join(", "))
                    .with("found", f.loss_scaling.join(", ")),
            ),
            _ => None,
        };
        if let Some(o) = fail {
            return ev(o);
        }
    }
    if commands.is_empty() {
        return no_command(check, "—").with("role", "—");
    }
    let o = Outcome::pass(check);
    match check {
        BF16_ON => {
            let on: Vec<String> = commands
                .iter()
                .filter_map(|(_, j)| match j {
                    Judged::Read { role, facts, .. } => {
                        Some(format!("{role}: {}", facts.bf16.join(", ")))
                    }
                    _ => None,
                })
                .collect();
            o.expected_found("--bf16", on.join("; "))
        }
        _ => o,
    }
}

// ---------------------------------------------------------------------------------------------
// Placement.

/// What one set of placement constraints (a required node-affinity term with the
/// `nodeSelector`) allows.
enum Limit {
    /// Only nodes with BF16, by this label: (label, allowed values).
    Bf16(String, String),
    /// A value the table knows lacks BF16: (label, value, accelerator).
    Lacks(String, String, String),
    /// Values the table does not know: (label, values).
    Unknown(String, String),
    /// Not limited to known accelerators.
    Open,
    /// No node can match.
    Nothing,
}

fn placement_outcome(job: &Workload) -> Outcome {
    for t in &job.templates {
        let found = limits(&t.spec);
        let path = t.field("affinity.nodeAffinity");
        let ev = |o: Outcome| o.with("role", &t.role).with("path", &path);
        let expected = "node.kubernetes.io/instance-type|nvidia.com/gpu.product|nvidia.com/gpu.compute.major>=8";
        for limit in &found {
            let o = match limit {
                Limit::Bf16(..) => continue,
                Limit::Lacks(label, value, model) => {
                    Outcome::fail(PLACEMENT, expected, format!("{label}={value} ({model})"))
                        .hint("lacks")
                        .with("label", label)
                        .with("value", value)
                        .with("model", model)
                }
                Limit::Unknown(label, values) => {
                    Outcome::fail(PLACEMENT, expected, format!("{label} in [{values}]"))
                        .hint("unknown")
                        .with("label", label)
                        .with("value", values)
                        .with("families", precision::bf16_families().join(", "))
                }
                Limit::Open => Outcome::fail(PLACEMENT, expected, "—")
                    .with("families", precision::bf16_families().join(", ")),
                Limit::Nothing => Outcome::fail(PLACEMENT, expected, "∅").hint("nothing"),
            };
            return ev(o);
        }
    }
    let by: Vec<String> = job
        .templates
        .iter()
        .flat_map(|t| limits(&t.spec))
        .filter_map(|l| match l {
            Limit::Bf16(label, values) => Some(format!("{label}: {values}")),
            _ => None,
        })
        .collect();
    Outcome::pass(PLACEMENT).expected_found("BF16", by.join("; "))
}

/// One [`Limit`] per required node-affinity term (each ANDed with the `nodeSelector`), or one for
/// the `nodeSelector` alone. Every one must be limited to BF16 nodes.
fn limits(spec: &PodSpec) -> Vec<Limit> {
    match placement::required_terms(spec) {
        None => vec![limit_of(spec, None)],
        Some(terms) => terms
            .iter()
            .map(|term| {
                let mut one = spec.clone();
                if let Some(na) = one
                    .affinity
                    .as_mut()
                    .and_then(|a| a.node_affinity.as_mut())
                    .and_then(|na| {
                        na.required_during_scheduling_ignored_during_execution
                            .as_mut()
                    })
                {
                    na.node_selector_terms = vec![term.clone()];
                }
                limit_of(&one, Some(term))
            })
            .collect(),
    }
}

fn limit_of(spec: &PodSpec, term: Option<&NodeSelectorTerm>) -> Limit {
    let mut result = Limit::Open;
    for label in BF16_LABELS {
        let values = match placement::allowed_values(spec, label) {
            Allowed::None => return Limit::Nothing,
            Allowed::Any => continue,
            Allowed::Only(v) => v,
        };
        let shown = values.iter().cloned().collect::<Vec<_>>().join(", ");
        let mut unknown = false;
        for v in &values {
            match precision::label_says(label, v) {
                Some(true) => {}
                Some(false) => {
                    let model = model_of(label, v);
                    return Limit::Lacks(label.to_string(), v.clone(), model);
                }
                None => unknown = true,
            }
        }
        if unknown {
            // Another label may still limit the placement; remember the unknown values.
            if matches!(result, Limit::Open) {
                result = Limit::Unknown(label.to_string(), shown);
            }
            continue;
        }
        return Limit::Bf16(label.to_string(), shown);
    }
    // `nvidia.com/gpu.compute.major Gt 7` (or more) admits only CC ≥ 8.
    let gt = term
        .into_iter()
        .flat_map(|t| t.match_expressions.iter().flatten())
        .find(|r| {
            r.key == GPU_COMPUTE_MAJOR_LABEL
                && r.operator == "Gt"
                && r.values.as_deref().unwrap_or_default().len() == 1
                && r.values.as_deref().unwrap_or_default()[0]
                    .trim()
                    .parse::<i64>()
                    .is_ok_and(|v| v >= i64::from(precision::BF16_MIN_COMPUTE_MAJOR) - 1)
        });
    if let Some(r) = gt {
        let v = r.values.as_deref().unwrap_or_default().join("");
        return Limit::Bf16(GPU_COMPUTE_MAJOR_LABEL.to_string(), format!("> {v}"));
    }
    result
}

/// The accelerator a label value names, for messages (`V100`).
fn model_of(label: &str, value: &str) -> String {
    let a = match label {
        INSTANCE_TYPE_LABEL | precision::BETA_INSTANCE_TYPE_LABEL => {
            precision::by_instance_type(value)
        }
        precision::KARPENTER_FAMILY_LABEL => precision::by_family(value),
        precision::GPU_PRODUCT_LABEL => precision::by_gpu_product(value),
        precision::KARPENTER_GPU_NAME_LABEL | precision::KARPENTER_ACCELERATOR_LABEL => {
            precision::by_karpenter_name(value)
        }
        _ => None,
    };
    match a {
        Some(a) => match a.compute {
            Some((major, minor)) => format!("{} CC {major}.{minor}", a.model),
            None => a.model.to_string(),
        },
        None => format!("{label}={value}"),
    }
}

// ---------------------------------------------------------------------------------------------
// State.

fn on_bf16_nodes(ctx: &JudgeCtx, pods: &[PodState], finished: bool) -> Outcome {
    let nodes = match ctx.nodes_read() {
        Ok(n) => n,
        Err(why) => return Outcome::unavailable(ON_BF16_NODES, &why),
    };
    if pods.is_empty() {
        return if finished {
            Outcome::skipped(ON_BF16_NODES, Reason::Message("pods-gone".into()))
        } else {
            Outcome::pending(ON_BF16_NODES, Reason::Message("no-pods".into()))
        };
    }
    let mut placed = Vec::new();
    for p in pods {
        let Some(node) = &p.node else { continue };
        let labels = nodes
            .iter()
            .find(|n| n.name() == node)
            .map(|n| n.value["metadata"]["labels"].clone())
            .unwrap_or_default();
        let says = BF16_LABELS.iter().find_map(|l| {
            let v = labels[*l].as_str()?;
            precision::label_says(l, v).map(|b| (l, v, b))
        });
        let ev = |o: Outcome| o.with("pod", &p.name).with("node", node);
        match says {
            Some((_, _, true)) => placed.push(format!("{} → {node}", p.name)),
            Some((label, value, false)) => {
                return ev(Outcome::fail(
                    ON_BF16_NODES,
                    "BF16",
                    format!("{} → {node} ({label}={value})", p.name),
                ))
                .with("label", label)
                .with("value", value)
                .with("model", model_of(label, value))
            }
            None => {
                return ev(Outcome::fail(
                    ON_BF16_NODES,
                    "BF16",
                    format!("{} → {node}", p.name),
                ))
                .hint("unknown-node")
            }
        }
    }
    if placed.len() < pods.len() {
        return Outcome::pending(ON_BF16_NODES, Reason::Message("scheduling".into()))
            .with("bound", placed.len())
            .with("pods", pods.len());
    }
    Outcome::pass(ON_BF16_NODES).expected_found("BF16", placed.join(", "))
}
