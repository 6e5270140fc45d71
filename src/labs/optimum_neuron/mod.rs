//! Lab `optimum-neuron` (quiz question 7): a batch/v1 Job `neuron-finetune` that fine-tunes a
//! Hugging Face model on a Trainium node with optimum-neuron (`NeuronTrainer` /
//! `NeuronTrainingArguments`) in the AWS Neuron PyTorch training container, with tensor
//! parallelism that splits the pod's NeuronCores evenly.
//!
//! Spec checks read the Job's pod template (also with `--files`): the Neuron device resources
//! against the instance table, the placement, the image, the training command and the script it
//! runs when the script sits in a mounted ConfigMap. A script trainlab cannot read (baked into
//! the image, or in a ConfigMap that is not among the objects) is not the learner's fail: its
//! checks are skipped, and one cloned from optimum-neuron's own repository passes as its example.
//! State checks follow the Job's uid to its pods and their nodes. The Neuron rules are kit
//! `neuron`, the script reading `script` and `python`. Texts live in lab.yaml; this file
//! decides and reports values.

mod neuron;
mod python;
mod script;

use crate::facts::instances::{INSTANCE_TYPE_LABEL, NEURON, NEURONCORE};
use crate::observe::kinds::{CONFIGMAPS, JOBS, PODS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::{command_line, HfTrainingArgs, Known, LauncherCommand};
use crate::verify::kit::k8s::container::{asks_for, no_container, pick};
use crate::verify::kit::k8s::image::ImageRef;
use crate::verify::kit::k8s::pods::{directly_owned_states, running, JobEnd, PodState};
use crate::verify::kit::k8s::workload::{PodTemplate, Workload};
use crate::verify::kit::training::job::{rejections, training_command};
use crate::verify::kit::training::parallel::find_job;
use crate::verify::kit::training::parallel::flag_written;
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Verifier};
use k8s_openapi::api::core::v1::{Container, PodSpec};
use neuron::{
    describe_trainium_allowed, is_optimum_neuron, is_optimum_neuron_repo, is_plain_trainer_module,
    is_trainium_node, trainium_placement, NeuronImage, NeuronNode, NeuronNodes, NeuronRequest,
    TrnPlacement, NEURON_TRAINER_NAMES, PLAIN_TRAINER_NAMES, PUBLIC_NEURON,
};
use python::PyScan;
use script::{git_clones, runs, Script};

pub struct OptimumNeuron;

static JOBS_READ: Read = Read::lab(&JOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
static READS: &[&Read] = &[&JOBS_READ, &PODS_READ, &CONFIGMAPS_READ];

const JOB: &str = "neuron-finetune";
const DEVICES: &str = "neuron-devices";
const PLACEMENT: &str = "trn-placement";
const IMAGE: &str = "neuron-image";
const USES: &str = "uses-optimum-neuron";
const TP: &str = "tp-divides-cores";
const ON_TRAINIUM: &str = "pod-on-trainium";
const RUNNING: &str = "pods-running";
const CHECKS: &[&str] = &[DEVICES, PLACEMENT, IMAGE, USES, TP, ON_TRAINIUM, RUNNING];

impl Verifier for OptimumNeuron {
    fn lab_id(&self) -> &'static str {
        "optimum-neuron"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let obj = match find_job(ctx, &JOBS_READ, JOB, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => return Ok(j),
        };
        let Some(w) = Workload::from_obj(obj)? else {
            return Err(obj.field_error("kind", "expected a batch/v1 Job"));
        };
        let Some(t) = w.templates.first() else {
            return Err(obj.field_error("spec.template", "a Job needs a pod template"));
        };
        let ns = ctx.target.namespace.as_str();
        let ev = |o: Outcome| o.with("job", JOB).with("namespace", ns);
        let mut j = Judgement::default();
        // The training container: the one asking for Neuron devices or cores, else the first.
        let neuron = |c: &Container| asks_for(c, NEURON) || asks_for(c, NEURONCORE);
        let main = pick(t, &[&neuron]);

        // Spec.
        let rejected = rejections(&w);
        // A quantity the API server refuses (a fraction of a device) is its rejection, below.
        let requested = match (NeuronRequest::of(&t.spec), &rejected) {
            (Ok(r), _) => r,
            (Err(_), Some(_)) => NeuronRequest::default(),
            (Err(e), None) => return Err(obj.field_error(t.path.clone(), e)),
        };
        let nodes = NeuronNodes::find(ctx, &t.spec)?;
        j.push(ev(match (rejected, main) {
            (Some(r), _) => r.outcome(DEVICES),
            (None, Some((c, path))) => devices(ctx, &requested, &nodes, c, path),
            (None, None) => no_container(DEVICES, t),
        }));
        let instance = ctx.params.require("instance_type")?;
        j.push(ev(trn_placement(&t.spec, t, instance)));
        let standin = ctx.params.get("standin_image");
        j.push(ev(match main {
            Some((c, path)) => image_outcome(c, path, standin),
            None => no_container(IMAGE, t),
        }));
        let config_maps = ctx.list(&CONFIGMAPS_READ);
        let uses = match main {
            Some((c, _)) => Uses::of(&t.spec, c, &config_maps),
            None => Uses::NoCommand("—".into()),
        };
        j.push(ev(uses.outcome()));
        let tp = match main {
            Some((c, _)) => tp_divides_cores(c, &requested, &nodes, &uses, &mut j),
            None => no_container(TP, t),
        };
        j.push(ev(tp));

        // State: the Job's pods (by uid) and where they run.
        let pods = match ctx.list(&PODS_READ) {
            Ok(p) => p,
            Err(why) => {
                j.push(ev(Outcome::unavailable(ON_TRAINIUM, &why)));
                j.push(ev(Outcome::unavailable(RUNNING, &why)));
                return Ok(j);
            }
        };
        let states = directly_owned_states(obj, &pods)?;
        let end = JobEnd::of(&w)?;
        j.push(ev(on_trainium(ctx, &end, &states)?));
        j.push(ev(running(RUNNING, &end, &states, w.total_replicas())));
        Ok(j)
    }
}

// ---------------------------------------------------------------------------------------------
// Neuron devices.

/// `neuron-devices`: the pod takes a whole Trainium node, in devices or in cores, for every
/// node it may land on. The Neuron device plugin registers `aws.amazon.com/neuron` (whole
/// devices, with all their cores) and `aws.amazon.com/neuroncore` (single cores) (Neuron docs,
/// k8s-neuron-device-plugin).
fn devices(
    ctx: &JudgeCtx,
    r: &NeuronRequest,
    nodes: &NeuronNodes,
    c: &Container,
    path: &str,
) -> Outcome {
    // What to ask for: the first whole node's figures, else the profile's.
    let first = nodes.0.as_ref().ok().and_then(|n| n.first());
    let suggested = |v: Option<i64>, param: &str| {
        v.map(|n| n.to_string())
            .or_else(|| ctx.params.get(param).map(str::to_string))
            .unwrap_or_else(|| "—".into())
    };
    let ev = |o: Outcome| {
        o.with("container", &c.name)
            .with("path", format!("{path}.resources.limits"))
            .with("neuron", suggested(first.map(|n| n.neuron), "neuron"))
            .with(
                "neuroncores",
                suggested(first.map(|n| n.cores), "neuroncores"),
            )
    };
    let rows = match &nodes.0 {
        Ok(rows) => rows,
        Err(_) if r.is_none() => {
            return ev(Outcome::fail(
                DEVICES,
                format!("{NEURON} | {NEURONCORE}"),
                r.found(),
            ))
        }
        Err(u) => return ev(u.outcome(DEVICES)),
    };
    let expected = rows
        .iter()
        .map(NeuronNode::describe)
        .collect::<Vec<_>>()
        .join("; ");
    if r.is_none() {
        return ev(Outcome::fail(DEVICES, expected, r.found()));
    }
    if rows.iter().all(|n| r.takes_whole(n)) {
        return ev(Outcome::pass(DEVICES).expected_found(expected, r.found()));
    }
    let too_many = rows.iter().any(|n| r.exceeds(n));
    let o = Outcome::fail(DEVICES, expected, r.found()).with("found", r.found());
    ev(if too_many {
        o.hint("too-many")
    } else {
        o.hint("partial")
    })
}

// ---------------------------------------------------------------------------------------------
// Placement.

/// `trn-placement`: on every path the scheduler may take (each required term), some Trainium
/// label is limited to Trainium values only (`neuron::trainium_placement`). A Neuron
/// resource request alone is not enough: Inferentia nodes advertise `aws.amazon.com/neuron` too.
fn trn_placement(spec: &PodSpec, t: &PodTemplate, instance: &str) -> Outcome {
    let expected = format!("{INSTANCE_TYPE_LABEL} ∈ trn*");
    let found = describe_trainium_allowed(spec);
    let ev = |o: Outcome| {
        o.with("path", t.field("nodeSelector"))
            .with("affinity", t.field("affinity.nodeAffinity"))
            .with("allowed", &found)
            .with("instance", instance)
    };
    let fail = Outcome::fail(PLACEMENT, expected.clone(), found.clone());
    ev(match trainium_placement(spec) {
        TrnPlacement::Trainium => Outcome::pass(PLACEMENT).expected_found(expected, found.clone()),
        TrnPlacement::NoNode => fail.hint("no-node"),
        TrnPlacement::NotLimited { others } if others.is_empty() => fail,
        TrnPlacement::NotLimited { others } => {
            fail.hint("not-trainium").with("values", others.join(", "))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Image.

/// `neuron-image`: a Neuron PyTorch training container (public ECR `neuron/` or a DLC account's
/// ECR: `neuron::NeuronImage`); on kind, the stand-in image the profile names passes too.
fn image_outcome(c: &Container, path: &str, standin: Option<&str>) -> Outcome {
    let image = c.image.clone().unwrap_or_default();
    let mut expected = format!("{PUBLIC_NEURON}pytorch-training-neuronx:<tag>");
    if let Some(s) = standin {
        expected = format!("{expected} | {s}");
    }
    let ev = |o: Outcome| {
        o.with("container", &c.name)
            .with("image", &image)
            .with("standin", standin.unwrap_or("—"))
            .with("path", format!("{path}.image"))
    };
    let kind = NeuronImage::of(&ImageRef::parse(&image));
    if standin.is_some_and(|s| s == image.trim()) || kind == NeuronImage::Training {
        return ev(Outcome::pass(IMAGE).expected_found(expected, image.clone()));
    }
    let o = Outcome::fail(IMAGE, expected, image.clone());
    ev(if kind == NeuronImage::Inference {
        o.hint("inference")
    } else if standin.is_some() {
        o.hint("standin")
    } else {
        o
    })
}

// ---------------------------------------------------------------------------------------------
// optimum-neuron in the command or the script.

/// What the container's command shows of optimum-neuron.
enum Uses {
    /// `optimum-cli neuron …`, or a script that imports optimum-neuron's trainer API.
    Yes { how: String, script: Option<String> },
    /// A script of optimum-neuron's own repository, which the command clones: unread, but
    /// optimum-neuron's example.
    Example { how: String },
    /// A script was read and does not use it (`plain`: it uses the plain HF Trainer).
    No {
        script: String,
        origin: String,
        text: String,
        plain: bool,
    },
    /// The script the command runs is not in the manifests (baked into the image, or a
    /// ConfigMap that is not there): not graded.
    Unseen { script: String },
    /// A ConfigMap the script is in could not be read.
    Unavailable(Unavailable),
    /// No command reaches a script (or the shell script cannot be split).
    NoCommand(String),
}

impl Uses {
    /// The first command that runs optimum-neuron wins; otherwise what the last script read
    /// says, else the first script not seen (or not readable).
    fn of(spec: &PodSpec, c: &Container, config_maps: &Result<Vec<&Obj>, Unavailable>) -> Uses {
        let Ok(runs) = runs(spec, c, config_maps) else {
            return Uses::NoCommand(command_line(c, 160));
        };
        let clones = git_clones(c);
        let mut verdict: Option<Uses> = None;
        for run in runs {
            let cli = run.launchers.iter().find_map(|l| match l {
                LauncherCommand::OptimumCli(o) if o.is_neuron() => Some(o),
                _ => None,
            });
            if let Some(o) = cli {
                let how = format!("optimum-cli {}", o.subcommand.join(" "));
                return Uses::Yes { how, script: None };
            }
            match run.script {
                Some(Script::Read {
                    script,
                    origin,
                    text,
                }) => {
                    let scan = PyScan::of(&text);
                    let names = scan.used_from(is_optimum_neuron, NEURON_TRAINER_NAMES);
                    if !names.is_empty() {
                        return Uses::Yes {
                            how: format!("{origin}: {}", names.join(", ")),
                            script: Some(text),
                        };
                    }
                    let plain = !scan
                        .used_from(is_plain_trainer_module, PLAIN_TRAINER_NAMES)
                        .is_empty();
                    verdict = Some(Uses::No {
                        script,
                        origin,
                        text,
                        plain,
                    });
                }
                Some(Script::Unseen { script }) => {
                    // optimum-neuron's own example, cloned by the command: its trainer is theirs.
                    let example = clones
                        .iter()
                        .find(|g| is_optimum_neuron_repo(&g.url) && g.holds(&script));
                    if let Some(g) = example {
                        let at = g
                            .branch
                            .as_deref()
                            .map(|b| format!("@{b}"))
                            .unwrap_or_default();
                        let how = format!("{script}: huggingface/optimum-neuron{at} (git clone)");
                        return Uses::Example { how };
                    }
                    verdict.get_or_insert(Uses::Unseen { script });
                }
                Some(Script::Unavailable(why)) => {
                    verdict.get_or_insert(Uses::Unavailable(why));
                }
                None => {}
            }
        }
        verdict.unwrap_or_else(|| Uses::NoCommand(command_line(c, 160)))
    }

    /// The script's text, when it was read.
    fn script_text(&self) -> Option<&str> {
        match self {
            Uses::Yes { script, .. } => script.as_deref(),
            Uses::No { text, .. } => Some(text),
            _ => None,
        }
    }

    /// `uses-optimum-neuron`.
    fn outcome(&self) -> Outcome {
        let expected =
            "optimum.neuron: NeuronTrainer | NeuronTrainingArguments | optimum-cli neuron";
        match self {
            Uses::Yes { how, .. } | Uses::Example { how } => {
                Outcome::pass(USES).expected_found(expected, how.clone())
            }
            Uses::No {
                script,
                origin,
                plain,
                ..
            } => {
                let o = Outcome::fail(USES, expected, origin.clone())
                    .with("script", script)
                    .with("found", origin);
                if *plain {
                    o.hint("plain-trainer")
                } else {
                    o
                }
            }
            // What trainlab cannot read is not the learner's fail.
            Uses::Unseen { script } => {
                Outcome::skipped(USES, Reason::Message("script-unseen".into()))
                    .with("script", script)
            }
            Uses::Unavailable(why) => Outcome::unavailable(USES, why),
            Uses::NoCommand(line) => Outcome::fail(USES, expected, line.clone())
                .hint("no-command")
                .with("line", line),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tensor parallelism.

/// `tp-divides-cores`: optimum-neuron's `--tensor_parallel_size` (`NeuronTrainingArguments`,
/// default 1: huggingface/optimum-neuron v0.4.5 `optimum/neuron/trainers/training_args.py`
/// l.361) divides the pod's NeuronCores, so every tensor-parallel group fits inside the pod
/// (Neuron training best practices: keep TP inside a node). Read from the command line
/// (`HfArgumentParser` spellings), else a literal `tensor_parallel_size=<n>` in the script.
fn tp_divides_cores(
    c: &Container,
    r: &NeuronRequest,
    nodes: &NeuronNodes,
    uses: &Uses,
    j: &mut Judgement,
) -> Outcome {
    let Some(training) = training_command(c) else {
        return Outcome::skipped(TP, Reason::Message("no-command".into()));
    };
    let args = match HfTrainingArgs::parse(&training.args) {
        Ok(a) => a,
        Err(e) => {
            let written = flag_written(&e);
            return Outcome::fail(TP, "--tensor_parallel_size <int ≥ 1>", written.clone())
                .hint("bad-flag")
                .with("flag", e.flag())
                .with("written", written);
        }
    };
    // Advice only: optimum-neuron v0.4.5's examples train with `--bf16`
    // (`examples/training/qwen3/finetune_qwen3.sh` l.35; `finetune_qwen3.py` l.65 loads the model
    // in float32 without it), and BF16 runs much faster than FP32 on Neuron (aws-neuron-sdk
    // v2.26.1 `about-neuron/appnotes/neuronx-cc/neuronx-cc-training-mixed-precision.rst`).
    if !matches!(
        args.bf16.as_ref().map(|s| &s.value),
        Some(Known::Value(true)) | Some(Known::Variable(_))
    ) {
        j.advise(Advice::new("no-bf16"));
    }
    let (tp, written) = match &args.tensor_parallel_size {
        Some(s) => match s.known() {
            Some(v) => (*v, s.as_written()),
            None => {
                return Outcome::fail(TP, "--tensor_parallel_size <int ≥ 1>", s.as_written())
                    .hint("variable")
                    .with("tp_written", s.as_written())
            }
        },
        // Not on the command line: a script may build `NeuronTrainingArguments(...,
        // tensor_parallel_size=8)` itself, as optimum-neuron v0.4.5's `docs/source/quickstart.mdx`
        // l.71 and `docs/source/guides/distributed_training.mdx` l.174 do.
        None => match uses
            .script_text()
            .and_then(|t| PyScan::of(t).int_literal("tensor_parallel_size"))
        {
            Some(v) => (v, format!("script: tensor_parallel_size={v}")),
            None => return tp_unset(uses),
        },
    };
    let cores = if r.cores > 0 {
        r.cores
    } else if r.neuron > 0 {
        match nodes.cores_per_device() {
            Ok(Some(per)) => r.neuron * per,
            Ok(None) => return Outcome::skipped(TP, Reason::Message("cores-unknown".into())),
            Err(u) => return u.outcome(TP),
        }
    } else {
        return Outcome::skipped(TP, Reason::Message("no-cores".into()));
    };
    let expected = format!("{cores} % TP == 0 ({NEURONCORE} per pod: {cores})");
    let found = format!("TP {tp} ({written})");
    let o = if tp >= 1 && tp <= cores && cores % tp == 0 {
        Outcome::pass(TP).expected_found(expected, found)
    } else if tp > cores {
        Outcome::fail(TP, expected, found).hint("too-large")
    } else {
        Outcome::fail(TP, expected, found)
    };
    o.with("tp", tp)
        .with("tp_written", written)
        .with("cores", cores)
}

/// No TP on the command line nor in the script: the default 1 fails, unless the script could
/// not be read (it may set TP itself).
fn tp_unset(uses: &Uses) -> Outcome {
    match uses {
        Uses::Unseen { .. } | Uses::Example { .. } => {
            Outcome::skipped(TP, Reason::Message("tp-unseen".into()))
        }
        Uses::Unavailable(why) => Outcome::unavailable(TP, why),
        _ => Outcome::fail(
            TP,
            "--tensor_parallel_size <int ≥ 1>",
            "tensor_parallel_size: — (1)",
        )
        .hint("unset"),
    }
}

// ---------------------------------------------------------------------------------------------
// State.

/// `pod-on-trainium`: the Job's pods are bound to Trainium nodes (by the node's labels: kit
/// `neuron::is_trainium_node`).
fn on_trainium(ctx: &JudgeCtx, end: &JobEnd, pods: &[PodState]) -> Result<Outcome, InputError> {
    let nodes = match ctx.node_facts()? {
        Ok(n) => n,
        Err(why) => return Ok(Outcome::unavailable(ON_TRAINIUM, why)),
    };
    let expected = format!("{INSTANCE_TYPE_LABEL}: trn*");
    if pods.is_empty() {
        return Ok(if end.is_finished() {
            Outcome::skipped(ON_TRAINIUM, Reason::Message("pods-gone".into()))
        } else {
            Outcome::pending(ON_TRAINIUM, Reason::Message("no-pods".into()))
        });
    }
    let mut placed = Vec::new();
    for p in pods {
        let Some(node) = &p.node else {
            return Ok(
                Outcome::pending(ON_TRAINIUM, Reason::Message("scheduling".into()))
                    .with("pod", &p.name),
            );
        };
        let labels = nodes
            .iter()
            .find(|n| &n.name == node)
            .map(|n| n.labels.clone())
            .unwrap_or_default();
        let kind = labels
            .get(INSTANCE_TYPE_LABEL)
            .cloned()
            .unwrap_or_else(|| "—".into());
        if !is_trainium_node(&labels) {
            return Ok(Outcome::fail(
                ON_TRAINIUM,
                expected,
                format!("{} → {node} ({INSTANCE_TYPE_LABEL}: {kind})", p.name),
            )
            .with("pod", &p.name)
            .with("node", node)
            .with("instance_type", kind));
        }
        placed.push(format!("{} → {node} ({kind})", p.name));
    }
    Ok(Outcome::pass(ON_TRAINIUM).expected_found(expected, placed.join(", ")))
}
