//! AWS Neuron (Trainium) as the labs grade it: the Neuron devices and cores a pod asks for, the
//! whole Trainium nodes it may land on, whether its placement is limited to Trainium, and which
//! AWS containers carry the Neuron training stack.
//!
//! The Neuron device plugin registers `aws.amazon.com/neuron` (whole devices, with all their
//! cores) and `aws.amazon.com/neuroncore` (single cores) (Neuron docs, k8s-neuron-device-plugin).
//! Inferentia nodes (`inf1`, `inf2`) advertise `aws.amazon.com/neuron` too, so a Neuron request
//! alone does not put a pod on Trainium.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector, PodSpec};

use crate::facts::instances::{self, INSTANCE_TYPE_LABEL, NEURON, NEURONCORE};
use crate::facts::NodeFacts;
use crate::observe::{InputError, Unavailable};
use crate::verify::kit::k8s::image::ImageRef;
use crate::verify::kit::k8s::placement::{self, Allowed};
use crate::verify::kit::k8s::quantity::QuantityError;
use crate::verify::kit::k8s::resources;
use crate::verify::{JudgeCtx, Outcome, Reason};

// ---------------------------------------------------------------------------------------------
// Trainium nodes.

/// Whether a label value names Trainium.
pub type IsTrainium = fn(&str) -> bool;

/// Node labels that name the instance type or its family, and when a value is Trainium:
/// `node.kubernetes.io/instance-type` (k8s well-known label; Trainium types are `trn1.*`,
/// `trn1n.*`, `trn2.*`) and Karpenter's `karpenter.k8s.aws/instance-family` (`trn1`, `trn1n`,
/// `trn2`), `instance-category` (`trn`) and `instance-accelerator-name` (`trainium`,
/// `trainium2`) (aws/karpenter-provider-aws `website/content/en/docs/reference/
/// instance-types.md`).
pub const TRAINIUM_LABELS: &[(&str, IsTrainium)] = &[
    (INSTANCE_TYPE_LABEL, is_trainium_type),
    ("beta.kubernetes.io/instance-type", is_trainium_type),
    ("karpenter.k8s.aws/instance-family", is_trainium_family),
    ("karpenter.k8s.aws/instance-category", is_trainium_category),
    (
        "karpenter.k8s.aws/instance-accelerator-name",
        is_trainium_accelerator,
    ),
];

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

/// A node is Trainium when any of [`TRAINIUM_LABELS`] says so.
pub fn is_trainium_node(labels: &BTreeMap<String, String>) -> bool {
    TRAINIUM_LABELS
        .iter()
        .any(|(k, is_trn)| labels.get(*k).is_some_and(|v| is_trn(v)))
}

// ---------------------------------------------------------------------------------------------
// What a pod asks for.

/// Neuron devices and cores a pod asks for (effective requests over its containers: kit
/// `resources::pod_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NeuronRequest {
    pub neuron: i64,
    pub cores: i64,
}

impl NeuronRequest {
    pub fn of(spec: &PodSpec) -> Result<NeuronRequest, QuantityError> {
        Ok(NeuronRequest {
            neuron: resources::pod_count(spec, NEURON)?,
            cores: resources::pod_count(spec, NEURONCORE)?,
        })
    }

    pub fn is_none(&self) -> bool {
        self.neuron <= 0 && self.cores <= 0
    }

    /// `aws.amazon.com/neuron: 16`, both when both are asked for, `—` for each when neither.
    pub fn found(&self) -> String {
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

    /// Whether it takes all of `node`, counted in devices or in cores.
    pub fn takes_whole(&self, node: &NeuronNode) -> bool {
        (self.neuron > 0 && self.neuron == node.neuron)
            || (self.cores > 0 && self.cores == node.cores)
    }

    /// Whether it asks for more than `node` has.
    pub fn exceeds(&self, node: &NeuronNode) -> bool {
        self.neuron > node.neuron || self.cores > node.cores
    }
}

// ---------------------------------------------------------------------------------------------
// Whole Neuron nodes a pod may land on.

/// A whole Neuron node: its devices and cores.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuronNode {
    /// The instance type, or the node's name when its type is not in the table.
    pub name: String,
    pub neuron: i64,
    pub cores: i64,
}

impl NeuronNode {
    /// The instance table's row of a type with Neuron devices ([`instances::lookup`]).
    pub fn of_type(t: &str) -> Option<NeuronNode> {
        instances::lookup(t)
            .filter(|i| i.neuron > 0)
            .map(|i| NeuronNode {
                name: i.name.to_string(),
                neuron: i64::from(i.neuron),
                cores: i64::from(i.neuroncores),
            })
    }

    /// `aws.amazon.com/neuron: 16 | aws.amazon.com/neuroncore: 32 (trn1.32xlarge)`.
    pub fn describe(&self) -> String {
        format!(
            "{NEURON}: {} | {NEURONCORE}: {} ({})",
            self.neuron, self.cores, self.name
        )
    }
}

/// Why the whole-node figures are unknown.
#[derive(Debug, Clone, PartialEq)]
pub enum NodesUnknown {
    /// Static mode without a pinned instance type: `--param instance_type`.
    Param,
    Unavailable(Unavailable),
    /// No node (or listed instance type) the pod may use has Neuron devices (message
    /// `no-neuron-node`).
    NoNeuron,
    /// Instance types the table does not list (message `unknown-instance`, evidence `types`).
    Types(Vec<String>),
}

impl NodesUnknown {
    /// The outcome of a check that needs the figures.
    pub fn outcome(&self, check: &str) -> Outcome {
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

/// The whole-node figures for a pod: one row per distinct kind of node it may use.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuronNodes(pub Result<Vec<NeuronNode>, NodesUnknown>);

impl NeuronNodes {
    /// The instance types the placement pins (`nodeSelector`, required node affinity), looked
    /// up in the table; otherwise, live, the nodes the pod may use that have Neuron devices
    /// (their type's row, else their allocatable); static, `--param instance_type`.
    pub fn find(ctx: &JudgeCtx, spec: &PodSpec) -> Result<NeuronNodes, InputError> {
        if let Allowed::Only(types) = placement::allowed_values(spec, INSTANCE_TYPE_LABEL) {
            let found = NeuronNodes::of_types(&types);
            // Live, types off the table are read from the nodes themselves.
            if ctx.is_static() || !matches!(found.0, Err(NodesUnknown::Types(_))) {
                return Ok(found);
            }
        }
        if ctx.is_static() {
            return Ok(NeuronNodes(match ctx.params.given("instance_type") {
                Some(t) => NeuronNodes::of_types(&BTreeSet::from([t.to_string()])).0,
                None => Err(NodesUnknown::Param),
            }));
        }
        let nodes = match ctx.node_facts()? {
            Ok(n) => n,
            Err(why) => {
                return Ok(NeuronNodes(Err(NodesUnknown::Unavailable(why.clone()))));
            }
        };
        Ok(NeuronNodes::from_usable(&placement::usable_nodes(
            spec, nodes,
        )))
    }

    /// From instance types: every type is in the table (those without Neuron devices drop
    /// out), else the unknown ones.
    pub fn of_types(types: &BTreeSet<String>) -> NeuronNodes {
        let unknown: Vec<String> = types
            .iter()
            .filter(|t| instances::lookup(t).is_none())
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return NeuronNodes(Err(NodesUnknown::Types(unknown)));
        }
        let rows: Vec<NeuronNode> = types
            .iter()
            .filter_map(|t| NeuronNode::of_type(t))
            .collect();
        NeuronNodes(if rows.is_empty() {
            Err(NodesUnknown::NoNeuron)
        } else {
            Ok(rows)
        })
    }

    /// From the nodes a pod may use: those with Neuron devices, by their type's row, else by
    /// their allocatable.
    pub fn from_usable(usable: &[NodeFacts]) -> NeuronNodes {
        let mut rows = Vec::new();
        for n in usable.iter().filter(|n| n.allocatable(NEURON) > 0) {
            let r = n
                .instance_type
                .as_deref()
                .and_then(NeuronNode::of_type)
                .unwrap_or_else(|| NeuronNode {
                    name: n.name.clone(),
                    neuron: n.allocatable(NEURON),
                    cores: n.allocatable(NEURONCORE),
                });
            if !rows.contains(&r) {
                rows.push(r);
            }
        }
        NeuronNodes(if rows.is_empty() {
            Err(NodesUnknown::NoNeuron)
        } else {
            Ok(rows)
        })
    }

    /// NeuronCores per device, when every node agrees (trn1: 2, trn2: 8).
    pub fn cores_per_device(&self) -> Result<Option<i64>, &NodesUnknown> {
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

// ---------------------------------------------------------------------------------------------
// Placement on Trainium.

/// Whether a pod's placement keeps it on Trainium.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrnPlacement {
    /// On every path the scheduler may take, some Trainium label allows Trainium values only.
    Trainium,
    /// Some path lets the pod land elsewhere; `others` are non-Trainium values it names.
    NotLimited { others: Vec<String> },
    /// Contradicting constraints: no node matches at all.
    NoNode,
}

/// Required node-affinity terms are ORed (core/v1 `NodeSelector`): each must keep the pod on
/// Trainium on its own, together with the `nodeSelector`, which every term shares.
pub fn trainium_placement(spec: &PodSpec) -> TrnPlacement {
    let mut others = Vec::new();
    for s in per_term(spec) {
        let mut limited = false;
        for (key, is_trn) in TRAINIUM_LABELS {
            match placement::allowed_values(&s, key) {
                Allowed::Only(v) if v.iter().all(|x| is_trn(x)) => limited = true,
                Allowed::Only(v) => others.extend(v.into_iter().filter(|x| !is_trn(x))),
                Allowed::None => return TrnPlacement::NoNode,
                Allowed::Any => {}
            }
        }
        if !limited {
            return TrnPlacement::NotLimited { others };
        }
    }
    TrnPlacement::Trainium
}

/// The pod spec once per required node-affinity term, or as it is when it has none.
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

/// How the placement limits each Trainium label, for found values
/// (`node.kubernetes.io/instance-type: trn1.32xlarge`; `…: *` when nothing is limited).
pub fn describe_trainium_allowed(spec: &PodSpec) -> String {
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

// ---------------------------------------------------------------------------------------------
// Containers.

/// The public registry of the Neuron containers.
pub const PUBLIC_NEURON: &str = "public.ecr.aws/neuron/";
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

/// What an image is, as far as Neuron training goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeuronImage {
    /// A Neuron PyTorch training container from AWS (public ECR `neuron/` or an ECR registry).
    Training,
    /// A Neuron inference container (from anywhere).
    Inference,
    Other,
}

impl NeuronImage {
    pub fn of(r: &ImageRef) -> NeuronImage {
        // ECR private registries: `<account>.dkr.ecr.<region>.amazonaws.com` (ECR user guide).
        let from_aws = r.repository.starts_with(PUBLIC_NEURON)
            || r.domain()
                .is_some_and(|h| h.contains(".dkr.ecr.") && h.contains(".amazonaws.com"));
        if from_aws && TRAINING_IMAGES.contains(&r.name()) {
            NeuronImage::Training
        } else if INFERENCE_IMAGES.contains(&r.name()) {
            NeuronImage::Inference
        } else {
            NeuronImage::Other
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Trainer APIs.

/// optimum-neuron's training API (`optimum/neuron/__init__.py` exports, v0.4.5).
pub const NEURON_TRAINER_NAMES: &[&str] = &[
    "NeuronTrainer",
    "NeuronTrainingArguments",
    "NeuronSFTTrainer",
    "NeuronSFTConfig",
];
/// The plain Hugging Face trainers (`transformers`, `trl`), which do not shard a model over
/// NeuronCores. In optimum-neuron v0.4.5 `NeuronTrainer` is its own class, not a `Trainer`
/// subclass, and takes TP/PP from `args.trn_config` (`optimum/neuron/trainers/transformers.py`
/// `NeuronTrainer.__init__`); `NeuronSFTTrainer` puts it in place of the transformers `Trainer`
/// under trl's `SFTTrainer` (`trainers/sft_trainer.py` l.73-80); `docs/source/quickstart.mdx`
/// calls them drop-in replacements.
pub const PLAIN_TRAINER_NAMES: &[&str] = &[
    "Trainer",
    "TrainingArguments",
    "Seq2SeqTrainer",
    "Seq2SeqTrainingArguments",
    "SFTTrainer",
    "SFTConfig",
];

/// `optimum.neuron` and its submodules.
pub fn is_optimum_neuron(module: &str) -> bool {
    module == "optimum.neuron" || module.starts_with("optimum.neuron.")
}

/// optimum-neuron's own repository (its training examples live under `examples/training/`, each
/// a `NeuronTrainer`/`NeuronSFTTrainer` script, huggingface/optimum-neuron@v0.4.5), in any
/// spelling git takes: `https://github.com/huggingface/optimum-neuron(.git)`,
/// `git@github.com:huggingface/optimum-neuron.git`.
pub fn is_optimum_neuron_repo(url: &str) -> bool {
    let u = url.trim_end_matches('/');
    let u = u.strip_suffix(".git").unwrap_or(u);
    u.ends_with("github.com/huggingface/optimum-neuron")
        || u.ends_with("github.com:huggingface/optimum-neuron")
}

/// The modules the plain trainers come from (`transformers.Trainer`, `trl.SFTTrainer`: the
/// classes optimum-neuron v0.4.5 replaces, see [`PLAIN_TRAINER_NAMES`]).
pub fn is_plain_trainer_module(module: &str) -> bool {
    module == "transformers" || module == "trl"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn spec(v: serde_json::Value) -> PodSpec {
        let mut v = v;
        v["containers"] = serde_json::json!([]);
        serde_json::from_value(v).unwrap()
    }

    fn required(terms: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": terms}}})
    }

    #[test]
    fn optimum_neuron_s_repository_in_the_spellings_git_takes() {
        for url in [
            "https://github.com/huggingface/optimum-neuron.git",
            "https://github.com/huggingface/optimum-neuron",
            "https://github.com/huggingface/optimum-neuron/",
            "git@github.com:huggingface/optimum-neuron.git",
        ] {
            assert!(is_optimum_neuron_repo(url), "{url}");
        }
        for url in [
            "https://github.com/someone/optimum-neuron.git",
            "https://github.com/huggingface/optimum-neuron-fork.git",
            "https://github.com/huggingface/optimum.git",
        ] {
            assert!(!is_optimum_neuron_repo(url), "{url}");
        }
    }

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
        assert!(is_trainium_node(&labels(&[(
            INSTANCE_TYPE_LABEL,
            "trn1.32xlarge"
        )])));
        assert!(is_trainium_node(&labels(&[(
            "karpenter.k8s.aws/instance-family",
            "trn2"
        )])));
        assert!(!is_trainium_node(&labels(&[(
            INSTANCE_TYPE_LABEL,
            "inf2.48xlarge"
        )])));
        assert!(!is_trainium_node(&labels(&[])));
    }

    #[test]
    fn the_table_gives_whole_trainium_nodes() {
        let trn1 = NeuronNode::of_type("trn1.32xlarge").unwrap();
        assert_eq!((trn1.neuron, trn1.cores), (16, 32));
        // A GPU type is in the table but has no Neuron row.
        assert_eq!(NeuronNode::of_type("p5.48xlarge"), None);

        let types = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let both = NeuronNodes::of_types(&types(&["trn1.32xlarge", "trn1n.32xlarge"]));
        assert_eq!(both.0.as_ref().map(Vec::len), Ok(2));
        assert_eq!(both.cores_per_device(), Ok(Some(2)));
        assert_eq!(
            NeuronNodes::of_types(&types(&["p5.48xlarge"])).0,
            Err(NodesUnknown::NoNeuron)
        );
        assert_eq!(
            NeuronNodes::of_types(&types(&["trn1.32xlarge", "trn9.huge"])).0,
            Err(NodesUnknown::Types(vec!["trn9.huge".into()]))
        );
    }

    #[test]
    fn nodes_off_the_table_count_by_their_allocatable() {
        let node = |name: &str, t: Option<&str>, neuron: i64, cores: i64| NodeFacts {
            name: name.into(),
            zone: None,
            instance_type: t.map(str::to_string),
            provider_id: None,
            allocatable: BTreeMap::from([(NEURON.into(), neuron), (NEURONCORE.into(), cores)]),
            capacity: BTreeMap::new(),
            allocatable_exact: BTreeMap::new(),
            created: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            unschedulable: false,
        };
        let found = NeuronNodes::from_usable(&[
            node("a", Some("trn1.32xlarge"), 16, 32),
            node("b", Some("trn1.32xlarge"), 16, 32),
            node("kind-worker", None, 4, 32),
            node("cpu", None, 0, 0),
        ]);
        let rows = found.0.as_ref().unwrap();
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["trn1.32xlarge", "kind-worker"]
        );
        // 2 and 8 cores per device: no one ratio.
        assert_eq!(found.cores_per_device(), Ok(None));
        assert_eq!(
            NeuronNodes::from_usable(&[node("cpu", None, 0, 0)]).0,
            Err(NodesUnknown::NoNeuron)
        );
        assert_eq!(
            NeuronNodes(Err(NodesUnknown::Param)).cores_per_device(),
            Err(&NodesUnknown::Param)
        );
    }

    #[test]
    fn a_request_takes_a_whole_node_in_devices_or_cores() {
        let trn1 = NeuronNode::of_type("trn1.32xlarge").unwrap();
        let r = |neuron, cores| NeuronRequest { neuron, cores };
        assert!(r(16, 0).takes_whole(&trn1) && r(0, 32).takes_whole(&trn1));
        assert!(!r(8, 0).takes_whole(&trn1) && !r(8, 0).exceeds(&trn1));
        assert!(r(0, 64).exceeds(&trn1));
        assert!(r(0, 0).is_none());
        assert_eq!(r(16, 0).found(), format!("{NEURON}: 16"));
        assert_eq!(r(0, 0).found(), format!("{NEURON}: —, {NEURONCORE}: —"));
    }

    #[test]
    fn every_placement_term_must_keep_the_pod_on_trainium() {
        let trn = |t: &str| {
            serde_json::json!({"matchExpressions": [
                {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": [t]}]})
        };
        let family = serde_json::json!({"matchExpressions": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["trn2"]}]});
        // Each term limits a different Trainium label: both paths lead to Trainium.
        let s = spec(serde_json::json!({
            "affinity": required(serde_json::json!([trn("trn1.32xlarge"), family]))
        }));
        assert_eq!(trainium_placement(&s), TrnPlacement::Trainium);
        // One term lets the pod land on Inferentia.
        let s = spec(serde_json::json!({
            "affinity": required(serde_json::json!([trn("trn1.32xlarge"), trn("inf2.48xlarge")]))
        }));
        assert_eq!(
            trainium_placement(&s),
            TrnPlacement::NotLimited {
                others: vec!["inf2.48xlarge".into()]
            }
        );
        // The nodeSelector holds on every term.
        let s = spec(serde_json::json!({
            "nodeSelector": {INSTANCE_TYPE_LABEL: "trn1.32xlarge"},
            "affinity": required(serde_json::json!([family]))
        }));
        assert_eq!(trainium_placement(&s), TrnPlacement::Trainium);
        assert_eq!(
            describe_trainium_allowed(&s),
            format!(
                "{INSTANCE_TYPE_LABEL}: trn1.32xlarge; karpenter.k8s.aws/instance-family: trn2"
            )
        );
        let s = spec(serde_json::json!({
            "nodeSelector": {INSTANCE_TYPE_LABEL: "trn1.32xlarge"},
            "affinity": required(serde_json::json!([trn("trn2.48xlarge")]))
        }));
        assert_eq!(trainium_placement(&s), TrnPlacement::NoNode);
        let none = spec(serde_json::json!({}));
        assert_eq!(
            trainium_placement(&none),
            TrnPlacement::NotLimited { others: vec![] }
        );
        assert_eq!(
            describe_trainium_allowed(&none),
            format!("{INSTANCE_TYPE_LABEL}: *")
        );
    }

    #[test]
    fn training_containers_come_from_aws() {
        let of = |i: &str| NeuronImage::of(&ImageRef::parse(i));
        assert_eq!(
            of("public.ecr.aws/neuron/pytorch-training-neuronx:2.7.0-neuronx-py310-sdk2.24.1-ubuntu22.04"),
            NeuronImage::Training
        );
        assert_eq!(
            of("763104351884.dkr.ecr.us-west-2.amazonaws.com/huggingface-pytorch-training-neuronx:2.1.2"),
            NeuronImage::Training
        );
        // The same name on another registry is not AWS's container.
        assert_eq!(
            of("docker.io/someone/pytorch-training-neuronx:1"),
            NeuronImage::Other
        );
        assert_eq!(
            of("public.ecr.aws/neuron/pytorch-inference-neuronx:2.7.0"),
            NeuronImage::Inference
        );
        assert_eq!(of("nvcr.io/nvidia/pytorch:25.01-py3"), NeuronImage::Other);
        assert!(is_optimum_neuron("optimum.neuron.trainers") && !is_optimum_neuron("optimum"));
        assert!(is_plain_trainer_module("trl") && !is_plain_trainer_module("optimum.neuron"));
    }
}
