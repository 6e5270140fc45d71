//! Lab `optimum-neuron` (quiz question 7): a batch/v1 Job `neuron-finetune` that fine-tunes a
//! Hugging Face model on a Trainium node with optimum-neuron (`NeuronTrainer` /
//! `NeuronTrainingArguments`) in the AWS Neuron PyTorch training container, with tensor
//! parallelism that splits the pod's NeuronCores evenly.
//!
//! Spec checks read the Job's pod template (also with `--files`): the Neuron device resources
//! against the instance table, the placement, the image, the training command and the script it
//! runs when the script sits in a mounted ConfigMap. State checks follow the Job's uid to its
//! pods and their nodes. Texts live in lab.yaml; this file decides and reports values.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Affinity, Container, NodeAffinity, NodeSelector, PodSpec,
};

use crate::verify::kit::mounts::{config_map_at, config_map_file};
use crate::verify::kit::pods::{pod_states, PodState};
use crate::verify::kit::training::{rejections, training_command, wrong_version};
use super::bionemo::{job_pods_running, no_container, ImageRef};
use crate::facts::instances::{self, INSTANCE_TYPE_LABEL, NEURON, NEURONCORE};
use crate::facts::NodeFacts;
use crate::observe::kinds::{CONFIGMAPS, JOBS, PODS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::{invocations, HfTrainingArgs, Known, Launch};
use crate::verify::kit::conditions;
use crate::verify::kit::owned::{self, NoUid};
use crate::verify::kit::parallel::flag_written;
use crate::verify::kit::placement::{self, Allowed};
use crate::verify::kit::resources;
use crate::verify::kit::workload::{PodTemplate, Workload};
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Verifier};

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

/// The AWS Neuron PyTorch training containers: the Neuron DLC (`public.ecr.aws/neuron/` and
/// the DLC account's ECR, aws-neuron/deep-learning-containers README, aws/deep-learning-containers
/// `available_images.md`) and its Hugging Face variant (optimum-neuron's EKS tutorial image).
const TRAINING_IMAGES: &[&str] = &[
    "pytorch-training-neuronx",
    "huggingface-pytorch-training-neuronx",
];
/// Their inference siblings, which lack the training stack.
const INFERENCE_IMAGES: &[&str] = &[
    "pytorch-inference-neuronx",
    "huggingface-pytorch-inference-neuronx",
];
/// The public registry of the Neuron containers.
const PUBLIC_NEURON: &str = "public.ecr.aws/neuron/";
/// optimum-neuron's training API (`optimum/neuron/__init__.py` exports, v0.4.5).
const NEURON_TRAINER_NAMES: &[&str] = &[
    "NeuronTrainer",
    "NeuronTrainingArguments",
    "NeuronSFTTrainer",
    "NeuronSFTConfig",
];
/// The plain Hugging Face trainers, which do not shard a model over NeuronCores.
const PLAIN_TRAINER_NAMES: &[&str] = &[
    "Trainer",
    "TrainingArguments",
    "Seq2SeqTrainer",
    "Seq2SeqTrainingArguments",
    "SFTTrainer",
    "SFTConfig",
];

/// Node labels that name the instance type or its family, and when a value is Trainium:
/// `node.kubernetes.io/instance-type` (k8s well-known label; Trainium types are `trn1.*`,
/// `trn1n.*`, `trn2.*`) and Karpenter's `karpenter.k8s.aws/instance-family` (`trn1`, `trn1n`,
/// `trn2`), `instance-category` (`trn`) and `instance-accelerator-name` (`trainium`,
/// `trainium2`) (aws/karpenter-provider-aws `website/content/en/docs/reference/
/// instance-types.md`). Inferentia nodes (`inf1`, `inf2`) also carry `aws.amazon.com/neuron`.
const TRAINIUM_LABELS: &[(&str, IsTrainium)] = &[
    (INSTANCE_TYPE_LABEL, is_trainium_type),
    ("beta.kubernetes.io/instance-type", is_trainium_type),
    ("karpenter.k8s.aws/instance-family", is_trainium_family),
    ("karpenter.k8s.aws/instance-category", is_trainium_category),
    (
        "karpenter.k8s.aws/instance-accelerator-name",
        is_trainium_accelerator,
    ),
];

/// Whether a label value names Trainium.
type IsTrainium = fn(&str) -> bool;

fn is_trainium_family(f: &str) -> bool {
    f.starts_with("trn")
}

fn is_trainium_type(t: &str) -> bool {
    t.split('.').next().is_some_and(is_trainium_family)
}

fn is_trainium_category(c: &str) -> bool {
    c == "trn"
}

fn is_trainium_accelerator(a: &str) -> bool {
    a.starts_with("trainium")
}

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
        let main = main_container(t);

        // Spec.
        let rejected = rejections(&w);
        // A quantity the API server refuses (a fraction of a device) is its rejection, below.
        let requested = match (Requested::of(obj, t), &rejected) {
            (Ok(r), _) => r,
            (Err(_), Some(_)) => Requested {
                neuron: 0,
                cores: 0,
            },
            (Err(e), None) => return Err(e),
        };
        let nodes = NeuronNodes::find(ctx, &t.spec)?;
        j.push(ev(match (rejected, main) {
            (Some(r), _) => r.outcome(DEVICES),
            (None, Some((c, path))) => devices(ctx, &requested, &nodes, c, path),
            (None, None) => no_container(DEVICES, t),
        }));
        let instance = ctx.params.get("instance_type").unwrap_or("trn1.32xlarge");
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
        let states = match owned::owned_by(obj, &pods) {
            Ok(o) => pod_states(&o.current)?,
            Err(NoUid::NotFromACluster) => Vec::new(),
        };
        j.push(ev(on_trainium(ctx, &w, &states)?));
        j.push(ev(job_pods_running(RUNNING, &w, &states)?));
        Ok(j)
    }
}

/// The training container: the one asking for Neuron devices or cores, else the first.
fn main_container(t: &PodTemplate) -> Option<(&Container, &str)> {
    let neuron = |c: &Container| {
        [NEURON, NEURONCORE].iter().any(|r| {
            resources::limit(c, r)
                .ok()
                .flatten()
                .is_some_and(|q| !q.is_zero())
        })
    };
    t.containers()
        .find(|(c, _)| neuron(c))
        .or_else(|| t.containers().next())
}

// ---------------------------------------------------------------------------------------------
// Neuron devices.

/// What the pod asks for (effective requests over its containers: kit `resources::pod_count`).
struct Requested {
    neuron: i64,
    cores: i64,
}

impl Requested {
    fn of(obj: &Obj, t: &PodTemplate) -> Result<Requested, InputError> {
        let count = |r: &str| {
            resources::pod_count(&t.spec, r).map_err(|e| obj.field_error(t.path.clone(), e))
        };
        Ok(Requested {
            neuron: count(NEURON)?,
            cores: count(NEURONCORE)?,
        })
    }

    fn found(&self) -> String {
        let mut parts = Vec::new();
        if self.neuron > 0 {
            parts.push(format!("{NEURON}: {}", self.neuron));
        }
        if self.cores > 0 {
            parts.push(format!("{NEURONCORE}: {}", self.cores));
        }
        if parts.is_empty() {
            format!("{NEURON}: —, {NEURONCORE}: —")
        } else {
            parts.join(", ")
        }
    }
}

/// A whole Neuron node the pod may land on: its devices and cores.
#[derive(Debug, Clone, PartialEq)]
struct NeuronNode {
    /// The instance type, or the node's name when its type is not in the table.
    name: String,
    neuron: i64,
    cores: i64,
}

impl NeuronNode {
    fn describe(&self) -> String {
        format!(
            "{NEURON}: {} | {NEURONCORE}: {} ({})",
            self.neuron, self.cores, self.name
        )
    }
}

/// Why the whole-node figures are unknown.
#[derive(Debug, Clone, PartialEq)]
enum NodesUnknown {
    /// Static mode without a pinned instance type: `--param instance_type`.
    Param,
    Unavailable(Unavailable),
    /// No node (or listed instance type) the pod may use has Neuron devices.
    NoNeuron,
    /// Instance types the table does not list.
    Types(Vec<String>),
}

impl NodesUnknown {
    fn outcome(&self, check: &str) -> Outcome {
        match self {
            NodesUnknown::Param => {
                Outcome::skipped(check, Reason::NeedsParam("instance_type".into()))
            }
            NodesUnknown::Unavailable(why) => Outcome::unavailable(check, why),
            NodesUnknown::NoNeuron => {
                Outcome::skipped(check, Reason::Message("no-neuron-node".into()))
            }
            NodesUnknown::Types(t) => {
                Outcome::skipped(check, Reason::Message("unknown-instance".into()))
                    .with("types", t.join(", "))
            }
        }
    }
}

/// The whole-node figures for the pod, per the instance table ([`instances::lookup`]).
struct NeuronNodes(Result<Vec<NeuronNode>, NodesUnknown>);

impl NeuronNodes {
    /// The instance types the placement pins (`nodeSelector`, required node affinity), looked
    /// up in the table; otherwise, live, the nodes the pod may use that have Neuron devices
    /// (their type's row, else their allocatable); static, `--param instance_type`.
    fn find(ctx: &JudgeCtx, spec: &PodSpec) -> Result<NeuronNodes, InputError> {
        let row = |t: &str| {
            instances::lookup(t)
                .filter(|i| i.neuron > 0)
                .map(|i| NeuronNode {
                    name: i.name.to_string(),
                    neuron: i64::from(i.neuron),
                    cores: i64::from(i.neuroncores),
                })
        };
        if let Allowed::Only(types) = placement::allowed_values(spec, INSTANCE_TYPE_LABEL) {
            let unknown: Vec<String> = types
                .iter()
                .filter(|t| instances::lookup(t).is_none())
                .cloned()
                .collect();
            if unknown.is_empty() {
                let rows: Vec<NeuronNode> = types.iter().filter_map(|t| row(t)).collect();
                return Ok(NeuronNodes(if rows.is_empty() {
                    Err(NodesUnknown::NoNeuron)
                } else {
                    Ok(rows)
                }));
            }
            if ctx.is_static() {
                return Ok(NeuronNodes(Err(NodesUnknown::Types(unknown))));
            }
        }
        if ctx.is_static() {
            return Ok(NeuronNodes(
                match ctx.params.given("instance_type").map(|t| (t, row(t))) {
                    Some((_, Some(r))) => Ok(vec![r]),
                    Some((t, None)) => Err(NodesUnknown::Types(vec![t.to_string()])),
                    None => Err(NodesUnknown::Param),
                },
            ));
        }
        let nodes = match ctx.nodes_read() {
            Ok(n) => n,
            Err(why) => return Ok(NeuronNodes(Err(NodesUnknown::Unavailable(why)))),
        };
        let mut rows = Vec::new();
        for o in nodes {
            let n = NodeFacts::from_obj(o)?;
            if n.allocatable(NEURON) <= 0 || !placement::may_use(spec, &n) {
                continue;
            }
            let r = n
                .instance_type
                .as_deref()
                .and_then(row)
                .unwrap_or(NeuronNode {
                    name: n.name.clone(),
                    neuron: n.allocatable(NEURON),
                    cores: n.allocatable(NEURONCORE),
                });
            if !rows.contains(&r) {
                rows.push(r);
            }
        }
        Ok(NeuronNodes(if rows.is_empty() {
            Err(NodesUnknown::NoNeuron)
        } else {
            Ok(rows)
        }))
    }

    /// NeuronCores per device, when every node agrees (trn1: 2, trn2: 8).
    fn cores_per_device(&self) -> Result<Option<i64>, &NodesUnknown> {
        let rows = self.0.as_ref()?;
        if rows
            .iter()
            .any(|n| n.neuron <= 0 || n.cores % n.neuron != 0)
        {
            return Ok(None);
        }
        let ratios: BTreeSet<i64> = rows.iter().map(|n| n.cores / n.neuron).collect();
        Ok(match ratios.len() {
            1 => ratios.first().copied(),
            _ => None,
        })
    }
}

/// `neuron-devices`: the pod takes a whole Trainium node, in devices or in cores, for every
/// node it may land on. The Neuron device plugin registers `aws.amazon.com/neuron` (whole
/// devices, with all their cores) and `aws.amazon.com/neuroncore` (single cores) (Neuron docs,
/// k8s-neuron-device-plugin).
fn devices(
    ctx: &JudgeCtx,
    r: &Requested,
    nodes: &NeuronNodes,
    c: &Container,
    path: &str,
) -> Outcome {
    let suggested = |name: &str, fallback: &str| {
        nodes
            .0
            .as_ref()
            .ok()
            .and_then(|n| n.first())
            .map(|n| {
                if name == "neuron" {
                    n.neuron.to_string()
                } else {
                    n.cores.to_string()
                }
            })
            .or_else(|| ctx.params.get(fallback).map(str::to_string))
            .unwrap_or_else(|| "—".into())
    };
    let ev = |o: Outcome| {
        o.with("container", &c.name)
            .with("path", format!("{path}.resources.limits"))
            .with("neuron", suggested("neuron", "neuron"))
            .with("neuroncores", suggested("cores", "neuroncores"))
    };
    let rows = match &nodes.0 {
        Ok(rows) => rows,
        Err(_) if r.neuron == 0 && r.cores == 0 => {
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
    if r.neuron == 0 && r.cores == 0 {
        return ev(Outcome::fail(DEVICES, expected, r.found()));
    }
    let whole = |n: &NeuronNode| {
        (r.neuron > 0 && r.neuron == n.neuron) || (r.cores > 0 && r.cores == n.cores)
    };
    if rows.iter().all(whole) {
        return ev(Outcome::pass(DEVICES).expected_found(expected, r.found()));
    }
    let too_many = rows
        .iter()
        .any(|n| r.neuron > n.neuron || r.cores > n.cores);
    let o = Outcome::fail(DEVICES, expected, r.found()).with("found", r.found());
    ev(if too_many {
        o.hint("too-many")
    } else {
        o.hint("partial")
    })
}

// ---------------------------------------------------------------------------------------------
// Placement.

/// The pod spec once per required node-affinity term (terms are ORed: each must hold on its
/// own), or as it is when it has none.
fn per_term(spec: &PodSpec) -> Vec<PodSpec> {
    let Some(terms) = placement::required_terms(spec).filter(|t| !t.is_empty()) else {
        return vec![spec.clone()];
    };
    terms
        .iter()
        .map(|term| {
            let mut s = spec.clone();
            let only = NodeSelector {
                node_selector_terms: vec![term.clone()],
            };
            let affinity = s.affinity.get_or_insert_with(Affinity::default);
            let node = affinity
                .node_affinity
                .get_or_insert_with(NodeAffinity::default);
            node.required_during_scheduling_ignored_during_execution = Some(only);
            s
        })
        .collect()
}

/// How the placement limits one Trainium label, for found values.
fn describe_allowed(spec: &PodSpec) -> String {
    let mut parts = Vec::new();
    for (key, _) in TRAINIUM_LABELS {
        match placement::allowed_values(spec, key) {
            Allowed::Only(v) => parts.push(format!(
                "{key}: {}",
                v.into_iter().collect::<Vec<_>>().join(", ")
            )),
            Allowed::None => parts.push(format!("{key}: ∅")),
            Allowed::Any => {}
        }
    }
    if parts.is_empty() {
        format!("{INSTANCE_TYPE_LABEL}: *")
    } else {
        parts.join("; ")
    }
}

/// `trn-placement`: on every path the scheduler may take (each required term), some Trainium
/// label is limited to Trainium values only. A Neuron resource request alone is not enough:
/// Inferentia nodes advertise `aws.amazon.com/neuron` too.
fn trn_placement(spec: &PodSpec, t: &PodTemplate, instance: &str) -> Outcome {
    let expected = format!("{INSTANCE_TYPE_LABEL} ∈ trn*");
    let found = describe_allowed(spec);
    let ev = |o: Outcome| {
        o.with("path", t.field("nodeSelector"))
            .with("affinity", t.field("affinity.nodeAffinity"))
            .with("allowed", &found)
            .with("instance", instance)
    };
    let mut not_trainium = Vec::new();
    for s in per_term(spec) {
        let mut limited = false;
        for (key, is_trn) in TRAINIUM_LABELS {
            match placement::allowed_values(&s, key) {
                Allowed::Only(v) if v.iter().all(|x| is_trn(x)) => limited = true,
                Allowed::Only(v) => {
                    not_trainium.extend(v.into_iter().filter(|x| !is_trn(x)));
                }
                Allowed::None => {
                    return ev(Outcome::fail(PLACEMENT, expected, found.clone()).hint("no-node"))
                }
                Allowed::Any => {}
            }
        }
        if !limited {
            let o = Outcome::fail(PLACEMENT, expected, found.clone());
            return ev(if not_trainium.is_empty() {
                o
            } else {
                o.hint("not-trainium")
                    .with("values", not_trainium.join(", "))
            });
        }
    }
    ev(Outcome::pass(PLACEMENT).expected_found(expected, found.clone()))
}

// ---------------------------------------------------------------------------------------------
// Image.

/// `neuron-image`: a Neuron PyTorch training container (public ECR `neuron/` or a DLC account's
/// ECR); on kind, the stand-in image the profile names passes too.
fn image_outcome(c: &Container, path: &str, standin: Option<&str>) -> Outcome {
    let image = c.image.clone().unwrap_or_default();
    let r = ImageRef::parse(&image);
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
    if standin.is_some_and(|s| s == image.trim()) {
        return ev(Outcome::pass(IMAGE).expected_found(expected, image.clone()));
    }
    let from_aws = r.repository.starts_with(PUBLIC_NEURON)
        || r.repository
            .split('/')
            .next()
            .is_some_and(|host| host.contains(".dkr.ecr.") && host.contains(".amazonaws.com"));
    if from_aws && TRAINING_IMAGES.contains(&r.name()) {
        return ev(Outcome::pass(IMAGE).expected_found(expected, image.clone()));
    }
    let o = Outcome::fail(IMAGE, expected, image.clone());
    ev(if INFERENCE_IMAGES.contains(&r.name()) {
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
    /// A script was read and does not use it (`plain`: it uses the plain HF Trainer).
    No {
        script: String,
        origin: String,
        text: String,
        plain: bool,
    },
    /// The script the command runs is not in the manifests (baked into the image, or a
    /// ConfigMap that is not there).
    Unseen { script: String },
    /// A ConfigMap the script is in could not be read.
    Unavailable(Unavailable),
    /// No command reaches a script (or the shell script cannot be split).
    NoCommand(String),
}

impl Uses {
    fn of(spec: &PodSpec, c: &Container, config_maps: &Result<Vec<&Obj>, Unavailable>) -> Uses {
        let line = crate::verify::kit::cmdline::command_line(c, 160);
        let Ok(invs) = invocations(c) else {
            return Uses::NoCommand(line);
        };
        let mut verdict: Option<Uses> = None;
        for inv in &invs {
            let chain = Launch::chain(&inv.expanded);
            if let Some(o) = chain.iter().find_map(|l| match l {
                Launch::OptimumCli(o) if o.is_neuron() => Some(o),
                _ => None,
            }) {
                let how = format!("optimum-cli {}", o.subcommand.join(" "));
                return Uses::Yes { how, script: None };
            }
            let Some(last) = chain.last() else { continue };
            let (script, text) = match (last, last.entry()) {
                (Launch::Python(p), _) if p.code.is_some() => {
                    ("python -c".to_string(), p.code.clone())
                }
                (_, Some(e)) if e.script == "-" => ("-".to_string(), inv.heredoc.clone()),
                (_, Some(e)) if !e.module => {
                    let path = resolve(&e.script, c);
                    let text = match config_maps {
                        Ok(cms) => config_map_file(&path, spec, c, cms),
                        Err(why) if config_map_at(&path, spec, c).is_some() => {
                            verdict.get_or_insert(Uses::Unavailable(why.clone()));
                            continue;
                        }
                        Err(_) => None,
                    };
                    match text {
                        Some((cm, key, text)) => {
                            let scan = PyScan::of(&text);
                            let origin = format!("{path} (ConfigMap {cm}, key {key})");
                            if scan.uses_neuron_trainer() {
                                return Uses::Yes {
                                    how: format!("{origin}: {}", scan.neuron_names().join(", ")),
                                    script: Some(text),
                                };
                            }
                            verdict = Some(Uses::No {
                                script: path,
                                origin,
                                text,
                                plain: scan.uses_plain_trainer(),
                            });
                        }
                        None => {
                            if verdict.is_none() {
                                verdict = Some(Uses::Unseen { script: path });
                            }
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            let text = text.unwrap_or_default();
            let scan = PyScan::of(&text);
            if scan.uses_neuron_trainer() {
                return Uses::Yes {
                    how: format!("{script}: {}", scan.neuron_names().join(", ")),
                    script: Some(text),
                };
            }
            verdict = Some(Uses::No {
                script: script.clone(),
                origin: script,
                text,
                plain: scan.uses_plain_trainer(),
            });
        }
        verdict.unwrap_or(Uses::NoCommand(line))
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
            Uses::Yes { how, .. } => Outcome::pass(USES).expected_found(expected, how.clone()),
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
            Uses::Unseen { script } => Outcome::fail(USES, expected, format!("{script}: —"))
                .hint("unseen")
                .with("script", script),
            Uses::Unavailable(why) => Outcome::unavailable(USES, why),
            Uses::NoCommand(line) => Outcome::fail(USES, expected, line.clone())
                .hint("no-command")
                .with("line", line),
        }
    }
}

/// A relative script path is relative to the container's `workingDir` (else the image's, which
/// the manifest does not show; `/` is assumed).
fn resolve(script: &str, c: &Container) -> String {
    if script.starts_with('/') {
        return script.to_string();
    }
    let dir = c.working_dir.as_deref().unwrap_or("/");
    let rel = script.trim_start_matches("./");
    format!("{}/{rel}", dir.trim_end_matches('/'))
}

/// One token of Python source: names (dotted names kept whole), numbers, operators, and the end
/// of a logical line. Strings and comments are skipped (Python reference, "Lexical analysis":
/// string prefixes r/b/f/u, triple quotes, implicit line joining inside brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Name(String),
    Num(String),
    Op(String),
    Newline,
}

fn py_tokens(src: &str) -> Vec<Tok> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let skip_string = |start: usize| -> usize {
        let q = chars[start];
        let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
        let mut k = start + if triple { 3 } else { 1 };
        while k < chars.len() {
            match chars[k] {
                '\\' => k += 2,
                ch if ch == q && !triple => return k + 1,
                '\n' if !triple => return k,
                ch if ch == q && chars.get(k + 1) == Some(&q) && chars.get(k + 2) == Some(&q) => {
                    return k + 3
                }
                _ => k += 1,
            }
        }
        chars.len()
    };
    while i < chars.len() {
        let ch = chars[i];
        match ch {
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' => {
                if depth == 0 && out.last().is_some_and(|t| *t != Tok::Newline) {
                    out.push(Tok::Newline);
                }
                i += 1;
            }
            '\'' | '"' => i = skip_string(i),
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let prefix = ["r", "b", "f", "u", "rb", "br", "fr", "rf"]
                    .contains(&word.to_ascii_lowercase().as_str());
                if prefix && matches!(chars.get(i), Some('\'' | '"')) {
                    i = skip_string(i);
                    continue;
                }
                let mut name = word;
                while chars.get(i) == Some(&'.')
                    && chars
                        .get(i + 1)
                        .is_some_and(|c| c.is_alphabetic() || *c == '_')
                {
                    let s = i + 1;
                    i = s;
                    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                        i += 1;
                    }
                    name.push('.');
                    name.extend(&chars[s..i]);
                }
                out.push(Tok::Name(name));
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
                {
                    i += 1;
                }
                out.push(Tok::Num(chars[start..i].iter().collect()));
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
                if ["==", "!=", "<=", ">=", "->", ":=", "**", "//"].contains(&two.as_str()) {
                    out.push(Tok::Op(two));
                    i += 2;
                } else {
                    match ch {
                        '(' | '[' | '{' => depth += 1,
                        ')' | ']' | '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    out.push(Tok::Op(ch.to_string()));
                    i += 1;
                }
            }
        }
    }
    out
}

/// What a Python script imports from optimum-neuron (and from the plain HF trainers) and uses.
#[derive(Debug, Default)]
struct PyScan {
    /// Local name → the name imported, for `from optimum.neuron[.x] import …`.
    neuron_imports: BTreeMap<String, String>,
    /// Local names bound to an `optimum.neuron` module (`import optimum.neuron as on`).
    neuron_modules: Vec<String>,
    plain_imports: BTreeSet<String>,
    /// Names used outside import statements.
    used: Vec<String>,
    /// `tensor_parallel_size=<int>` written as a keyword argument.
    tp_literal: Option<i64>,
}

fn is_neuron_module(m: &str) -> bool {
    m == "optimum.neuron" || m.starts_with("optimum.neuron.")
}

impl PyScan {
    fn of(src: &str) -> PyScan {
        let toks = py_tokens(src);
        let mut scan = PyScan::default();
        for stmt in toks.split(|t| *t == Tok::Newline) {
            match stmt {
                [Tok::Name(from), Tok::Name(module), Tok::Name(import), rest @ ..]
                    if from == "from" && import == "import" =>
                {
                    for (name, alias) in imported_names(rest) {
                        if is_neuron_module(module) {
                            scan.neuron_imports.insert(alias, name);
                        } else if (module == "transformers" || module == "trl")
                            && PLAIN_TRAINER_NAMES.contains(&name.as_str())
                        {
                            scan.plain_imports.insert(alias);
                        }
                    }
                }
                [Tok::Name(import), rest @ ..] if import == "import" => {
                    for (module, alias) in imported_names(rest) {
                        if is_neuron_module(&module) {
                            scan.neuron_modules.push(alias);
                        }
                    }
                }
                _ => {
                    for (k, t) in stmt.iter().enumerate() {
                        let Tok::Name(n) = t else { continue };
                        scan.used.push(n.clone());
                        let assign = stmt.get(k + 1) == Some(&Tok::Op("=".into()));
                        if n == "tensor_parallel_size" && assign {
                            if let Some(Tok::Num(v)) = stmt.get(k + 2) {
                                scan.tp_literal = v.parse().ok();
                            }
                        }
                    }
                }
            }
        }
        scan
    }

    /// optimum-neuron trainer names the script imports and uses.
    fn neuron_names(&self) -> Vec<String> {
        let mut names = BTreeSet::new();
        for u in &self.used {
            if let Some(orig) = self.neuron_imports.get(u) {
                if NEURON_TRAINER_NAMES.contains(&orig.as_str()) {
                    names.insert(orig.clone());
                }
            }
            for m in &self.neuron_modules {
                if let Some(last) = u.strip_prefix(m.as_str()).and_then(|r| r.strip_prefix('.')) {
                    let last = last.rsplit('.').next().unwrap_or(last);
                    if NEURON_TRAINER_NAMES.contains(&last) {
                        names.insert(last.to_string());
                    }
                }
            }
        }
        names.into_iter().collect()
    }

    fn uses_neuron_trainer(&self) -> bool {
        !self.neuron_names().is_empty()
    }

    fn uses_plain_trainer(&self) -> bool {
        self.used.iter().any(|u| self.plain_imports.contains(u))
    }
}

/// `a, b as c, (d, e)` after `import`: (name, local alias).
fn imported_names(toks: &[Tok]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        match &toks[k] {
            Tok::Name(n) if n == "as" => {
                if let (Some(last), Some(Tok::Name(alias))) = (out.last_mut(), toks.get(k + 1)) {
                    last.1 = alias.clone();
                }
                k += 2;
                continue;
            }
            Tok::Name(n) => out.push((n.clone(), n.clone())),
            _ => {}
        }
        k += 1;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Tensor parallelism.

/// `tp-divides-cores`: optimum-neuron's `--tensor_parallel_size` (`NeuronTrainingArguments`,
/// default 1) divides the pod's NeuronCores, so every tensor-parallel group fits inside the pod
/// (Neuron training best practices: keep TP inside a node). Read from the command line
/// (`HfArgumentParser` spellings), else a literal `tensor_parallel_size=<n>` in the script.
fn tp_divides_cores(
    c: &Container,
    r: &Requested,
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
        None => match uses.script_text().and_then(|t| PyScan::of(t).tp_literal) {
            Some(v) => (v, format!("script: tensor_parallel_size={v}")),
            None => {
                return Outcome::fail(
                    TP,
                    "--tensor_parallel_size <int ≥ 1>",
                    "tensor_parallel_size: — (1)",
                )
                .hint("unset")
            }
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

// ---------------------------------------------------------------------------------------------
// State.

/// `pod-on-trainium`: the Job's pods are bound to Trainium nodes (by the node's labels).
fn on_trainium(ctx: &JudgeCtx, w: &Workload, pods: &[PodState]) -> Result<Outcome, InputError> {
    let nodes = match ctx.nodes_read() {
        Ok(n) => n,
        Err(why) => return Ok(Outcome::unavailable(ON_TRAINIUM, &why)),
    };
    let expected = format!("{INSTANCE_TYPE_LABEL}: trn*");
    if pods.is_empty() {
        let conds = conditions::from_object(&w.obj.value)
            .map_err(|e| w.obj.field_error("status.conditions", e))?;
        let finished =
            conditions::is_true(&conds, "Complete") || conditions::is_true(&conds, "Failed");
        return Ok(if finished {
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
        let labels: BTreeMap<String, String> = nodes
            .iter()
            .find(|n| n.name() == node)
            .map(|n| NodeFacts::from_obj(n).map(|f| f.labels))
            .transpose()?
            .unwrap_or_default();
        let trn = TRAINIUM_LABELS
            .iter()
            .any(|(k, is_trn)| labels.get(*k).is_some_and(|v| is_trn(v)));
        let kind = labels
            .get(INSTANCE_TYPE_LABEL)
            .cloned()
            .unwrap_or_else(|| "—".into());
        if !trn {
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

/// The instance table's whole-node figures of a type, for tests and hints.
#[cfg(test)]
fn table(t: &str) -> Option<(i64, i64)> {
    instances::lookup(t).map(|i| (i64::from(i.neuron), i64::from(i.neuroncores)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trainium_values_by_label() {
        assert!(is_trainium_type("trn1.32xlarge"));
        assert!(is_trainium_type("trn1n.32xlarge"));
        assert!(is_trainium_type("trn2.48xlarge"));
        assert!(!is_trainium_type("inf2.48xlarge"));
        assert!(!is_trainium_type("p5.48xlarge"));
        assert!(is_trainium_accelerator("trainium2"));
        assert!(!is_trainium_accelerator("inferentia2"));
        assert!(is_trainium_category("trn") && !is_trainium_category("inf"));
        assert_eq!(table("trn1.32xlarge"), Some((16, 32)));
    }

    #[test]
    fn python_tokens_skip_strings_and_comments() {
        let toks = py_tokens(
            "from optimum.neuron import (NeuronTrainer,\n    NeuronTrainingArguments)  # x\n\
             s = 'from optimum.neuron import NeuronTrainer'\nt = r\"NeuronTrainer\"\n\
             doc = \"\"\"NeuronTrainer\nmore\"\"\"\nargs = f(tensor_parallel_size=8, x == 2)\n",
        );
        let names: Vec<&str> = toks
            .iter()
            .filter_map(|t| match t {
                Tok::Name(n) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                "from",
                "optimum.neuron",
                "import",
                "NeuronTrainer",
                "NeuronTrainingArguments",
                "s",
                "t",
                "doc",
                "args",
                "f",
                "tensor_parallel_size",
                "x"
            ]
        );
        // The bracketed import is one logical line.
        assert_eq!(toks.iter().filter(|t| **t == Tok::Newline).count(), 5);
        assert!(toks.contains(&Tok::Op("==".into())));
    }

    #[test]
    fn a_script_uses_optimum_neuron_when_it_imports_and_calls_its_trainer() {
        let uses = PyScan::of(
            "from transformers import AutoTokenizer\n\
             from optimum.neuron import NeuronTrainer as NT, NeuronTrainingArguments\n\
             args = NeuronTrainingArguments(output_dir='o', tensor_parallel_size=8)\n\
             NT(model=m, args=args).train()\n",
        );
        assert_eq!(
            uses.neuron_names(),
            ["NeuronTrainer", "NeuronTrainingArguments"]
        );
        assert_eq!(uses.tp_literal, Some(8));

        let module = PyScan::of("import optimum.neuron as on\ntrainer = on.NeuronTrainer(m)\n");
        assert_eq!(module.neuron_names(), ["NeuronTrainer"]);

        // Imported but never used, named only in a comment or a string: no.
        let idle = PyScan::of(
            "from optimum.neuron import NeuronTrainer\n# NeuronTrainer(m)\nprint('NeuronTrainer')\n",
        );
        assert!(!idle.uses_neuron_trainer());

        let plain = PyScan::of(
            "from transformers import Trainer, TrainingArguments\nTrainer(m, TrainingArguments('o')).train()\n",
        );
        assert!(!plain.uses_neuron_trainer());
        assert!(plain.uses_plain_trainer());
        assert_eq!(plain.tp_literal, None);
    }

    #[test]
    fn relative_scripts_resolve_against_the_working_dir() {
        let mut c = Container {
            name: "c".into(),
            ..Default::default()
        };
        assert_eq!(resolve("train.py", &c), "/train.py");
        c.working_dir = Some("/opt/train/".into());
        assert_eq!(resolve("./train.py", &c), "/opt/train/train.py");
        assert_eq!(resolve("/x/train.py", &c), "/x/train.py");
    }

    #[test]
    fn a_placement_term_per_path() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": INSTANCE_TYPE_LABEL, "operator": "In",
                                           "values": ["trn1.32xlarge"]}]},
                    {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-family",
                                           "operator": "In", "values": ["trn2"]}]}
                ]}}}
        }))
        .unwrap();
        assert_eq!(per_term(&spec).len(), 2);
        let t = PodTemplate {
            role: "Job".into(),
            replicas: 1,
            replicas_set: false,
            replicas_path: "spec.parallelism".into(),
            spec: spec.clone(),
            labels: BTreeMap::new(),
            path: "spec.template.spec".into(),
            container_paths: vec![],
        };
        // Each term limits a different Trainium label: both paths lead to Trainium.
        assert_eq!(
            trn_placement(&spec, &t, "trn1.32xlarge").status,
            crate::verify::Status::Pass
        );
    }
}
