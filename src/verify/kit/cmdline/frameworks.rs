//! Training-framework settings read from a script's arguments: Megatron-LM flags, NeMo (Hydra)
//! `key=value` overrides, Hugging Face `TrainingArguments` (with optimum-neuron's
//! `NeuronTrainingArguments` additions), and [`ParallelPlan`], which merges them (and a
//! DeepSpeed config) into one parallelism/precision view that keeps every source.

use super::args::{parse_float, parse_int, Args};
use super::ds_config::{DsConfig, DsValue};
use super::{last_wins, FlagError, Known, Setting};

// ---------------------------------------------------------------------------------------------
// Megatron-LM

/// `--recompute-granularity` (`full`, `selective`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecomputeGranularity {
    Full,
    Selective,
}

/// `--recompute-method` (`uniform`, `block`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecomputeMethod {
    Uniform,
    Block,
}

impl RecomputeGranularity {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "full" => Some(Self::Full),
            "selective" => Some(Self::Selective),
            _ => None,
        }
    }
}

impl RecomputeMethod {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "uniform" => Some(Self::Uniform),
            "block" => Some(Self::Block),
            _ => None,
        }
    }
}

/// A flag Megatron-LM no longer accepts, with the message it stops with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedFlag {
    pub spelling: String,
    pub message: &'static str,
}

/// Removed flags and their messages (NVIDIA/Megatron-LM `megatron/training/arguments.py`
/// `validate_args`, core_v0.19.0).
const MEGATRON_REMOVED: &[(&str, &str)] = &[
    (
        "batch-size",
        "--batch-size argument is no longer valid, use --micro-batch-size instead",
    ),
    (
        "model-parallel-size",
        "--model-parallel-size is no longer valid, use --tensor-model-parallel-size instead",
    ),
    (
        "checkpoint-activations",
        "--checkpoint-activations is no longer valid, use --recompute-activations, or, for more control, --recompute-granularity and --recompute-method.",
    ),
    (
        "warmup",
        "--warmup argument is no longer valid, use --lr-warmup-fraction instead",
    ),
];

/// Megatron-LM's `store_true` switches the kit reads (megatron/training/arguments.py).
const MEGATRON_SWITCHES: &[&str] = &[
    "bf16",
    "fp16",
    "recompute-activations",
    "use-distributed-optimizer",
    "sequence-parallel",
];

/// Megatron-LM's flags with a value that the kit reads.
const MEGATRON_VALUED: &[&str] = &[
    "tensor-model-parallel-size",
    "pipeline-model-parallel-size",
    "context-parallel-size",
    "num-layers",
    "hidden-size",
    "num-attention-heads",
    "seq-length",
    "micro-batch-size",
    "global-batch-size",
    "loss-scale",
    "initial-loss-scale",
    "recompute-granularity",
    "recompute-method",
    "recompute-num-layers",
];

/// Whether a training script is one of Megatron-LM's entry points (`pretrain_gpt.py`,
/// `/opt/Megatron-LM/pretrain_bert.py`): then its arguments are Megatron-LM's parser's alone.
pub fn is_megatron_entry(script: &str) -> bool {
    let name = script.rsplit('/').next().unwrap_or(script);
    name.starts_with("pretrain_") && name.ends_with(".py")
}

/// Megatron-LM's parallelism, batch, precision and recompute flags (NVIDIA/Megatron-LM
/// `megatron/training/arguments.py`, core_v0.19.0). Switches are argparse `store_true`. Both
/// `-` and `_` spellings are read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MegatronArgs {
    pub tensor_model_parallel_size: Option<Setting<i64>>,
    pub pipeline_model_parallel_size: Option<Setting<i64>>,
    pub context_parallel_size: Option<Setting<i64>>,
    pub num_layers: Option<Setting<i64>>,
    pub hidden_size: Option<Setting<i64>>,
    pub num_attention_heads: Option<Setting<i64>>,
    pub seq_length: Option<Setting<i64>>,
    pub micro_batch_size: Option<Setting<i64>>,
    pub global_batch_size: Option<Setting<i64>>,
    pub bf16: Option<Setting<bool>>,
    pub fp16: Option<Setting<bool>>,
    /// `--loss-scale` (unset: dynamic loss scaling).
    pub loss_scale: Option<Setting<f64>>,
    /// `--initial-loss-scale` (default 2**32).
    pub initial_loss_scale: Option<Setting<f64>>,
    pub recompute_activations: Option<Setting<bool>>,
    pub recompute_granularity: Option<Setting<RecomputeGranularity>>,
    pub recompute_method: Option<Setting<RecomputeMethod>>,
    pub recompute_num_layers: Option<Setting<i64>>,
    pub use_distributed_optimizer: Option<Setting<bool>>,
    pub sequence_parallel: Option<Setting<bool>>,
    /// Flags Megatron-LM rejects at startup, with its message.
    pub removed: Vec<RemovedFlag>,
}

impl MegatronArgs {
    pub fn parse(a: &Args) -> Result<MegatronArgs, FlagError> {
        let removed = MEGATRON_REMOVED
            .iter()
            .flat_map(|(name, message)| {
                a.flags(&[name]).into_iter().map(move |f| RemovedFlag {
                    spelling: f.spelling.to_string(),
                    message,
                })
            })
            .collect();
        Ok(MegatronArgs {
            tensor_model_parallel_size: a.int(&["tensor-model-parallel-size"])?,
            pipeline_model_parallel_size: a.int(&["pipeline-model-parallel-size"])?,
            context_parallel_size: a.int(&["context-parallel-size"])?,
            num_layers: a.int(&["num-layers"])?,
            hidden_size: a.int(&["hidden-size"])?,
            num_attention_heads: a.int(&["num-attention-heads"])?,
            seq_length: a.int(&["seq-length"])?,
            micro_batch_size: a.int(&["micro-batch-size"])?,
            global_batch_size: a.int(&["global-batch-size"])?,
            bf16: a.switch(&["bf16"])?,
            fp16: a.switch(&["fp16"])?,
            loss_scale: a.float(&["loss-scale"])?,
            initial_loss_scale: a.float(&["initial-loss-scale"])?,
            recompute_activations: a.switch(&["recompute-activations"])?,
            recompute_granularity: a.parse_with(
                &["recompute-granularity"],
                "one of full, selective",
                RecomputeGranularity::parse,
            )?,
            recompute_method: a.parse_with(
                &["recompute-method"],
                "one of uniform, block",
                RecomputeMethod::parse,
            )?,
            recompute_num_layers: a.int(&["recompute-num-layers"])?,
            use_distributed_optimizer: a.switch(&["use-distributed-optimizer"])?,
            sequence_parallel: a.switch(&["sequence-parallel"])?,
            removed,
        })
    }

    /// What Megatron-LM's own parser refuses that this lenient reading takes, for a line known
    /// to be Megatron-LM's ([`is_megatron_entry`]): a switch given a value (`--bf16 True`:
    /// "unrecognized arguments: True"; `--bf16=true`: "ignored explicit argument 'true'"), and
    /// the underscore spelling of a flag (`--tensor_model_parallel_size`: "unrecognized
    /// arguments"). megatron/training/arguments.py (core_v0.19.0) declares every flag with
    /// dashes and its switches with `action='store_true'`; the conformance suite shows the
    /// real parser refusing each (tests/conformance/variants.yaml).
    pub fn strict(a: &Args) -> Result<(), FlagError> {
        for name in MEGATRON_SWITCHES {
            for f in a.flags(&[name]) {
                if let Some(value) = f.inline.or(f.next) {
                    return Err(FlagError::invalid(
                        f.spelling,
                        value,
                        "no value: Megatron-LM's switches take none",
                    ));
                }
            }
        }
        for name in MEGATRON_VALUED.iter().chain(MEGATRON_SWITCHES) {
            if let Some(f) = a
                .flags(&[name])
                .into_iter()
                .find(|f| f.spelling.contains('_'))
            {
                return Err(FlagError::invalid(
                    f.spelling,
                    f.inline.or(f.next).unwrap_or(""),
                    format!("the spelling --{name}: Megatron-LM's parser knows only dashes"),
                ));
            }
        }
        Ok(())
    }

    pub fn from_argv(argv: &[String]) -> Result<MegatronArgs, FlagError> {
        MegatronArgs::parse(&Args::new(argv.iter().cloned()))
    }

    /// No Megatron-LM flag at all.
    pub fn is_empty(&self) -> bool {
        *self == MegatronArgs::default()
    }

    /// The recompute granularity in effect: `--recompute-activations` is shorthand for
    /// `selective` (it overrides `--recompute-granularity` in `validate_args`).
    pub fn effective_recompute(&self) -> Option<RecomputeGranularity> {
        if self
            .recompute_activations
            .as_ref()
            .and_then(Setting::known)
            .copied()
            == Some(true)
        {
            return Some(RecomputeGranularity::Selective);
        }
        self.recompute_granularity
            .as_ref()
            .and_then(Setting::known)
            .copied()
    }
}

// ---------------------------------------------------------------------------------------------
// NeMo / Hydra overrides

/// The prefix of a Hydra override (Hydra "Basic Override syntax": `key=value` changes,
/// `+key=value` appends, `++key=value` appends or overrides, `~key` deletes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideKind {
    Set,
    Add,
    ForceAdd,
    Delete,
}

/// One `key=value` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub kind: OverrideKind,
    /// `model.tensor_model_parallel_size`
    pub key: String,
    /// The value with one pair of surrounding quotes removed; None for `~key`.
    pub value: Option<String>,
    /// Position in the argv.
    pub index: usize,
    /// The word as written.
    pub written: String,
}

/// The Hydra overrides among a script's arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    pub entries: Vec<Override>,
}

impl Overrides {
    pub fn parse(words: &[String]) -> Overrides {
        let entries = words
            .iter()
            .enumerate()
            .filter_map(|(index, w)| parse_override(w, index))
            .collect();
        Overrides { entries }
    }

    /// The last override of `key` (a later `~key` deletes it). Hydra applies command-line
    /// overrides in order, each replacing the value before (hydra v1.3.2, which NeMo v2.4.0 pins
    /// as its newest: `hydra/_internal/config_loader_impl.py` `_apply_overrides_to_config`).
    pub fn get(&self, key: &str) -> Option<&Override> {
        match self.entries.iter().rev().find(|o| o.key == key) {
            Some(o) if o.kind == OverrideKind::Delete => None,
            found => found,
        }
    }

    /// Every override of `key`, in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Override> {
        self.entries.iter().filter(move |o| o.key == key)
    }

    /// The value of any of `keys` (the last written wins, as Hydra applies them in order: see
    /// [`Overrides::get`]), parsed; `expected` describes a good value for the error. Lenient:
    /// Hydra v1.3.2 refuses a second `+key=` once the key exists ("Could not append to config").
    pub fn parse_with<T>(
        &self,
        keys: &[&str],
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<Setting<T>>, FlagError> {
        let mut setting: Option<Setting<T>> = None;
        for o in self
            .entries
            .iter()
            .filter(|o| keys.contains(&o.key.as_str()))
        {
            let source = match o.kind {
                // `~key` and `~key=value` delete the key (Hydra v1.3.2 `config_loader_impl.py`
                // `_apply_overrides_to_config`: the value only has to match the one deleted), so
                // nothing is set, whatever the value says.
                OverrideKind::Delete => {
                    setting = None;
                    continue;
                }
                OverrideKind::Set => o.key.clone(),
                OverrideKind::Add => format!("+{}", o.key),
                OverrideKind::ForceAdd => format!("++{}", o.key),
            };
            let Some(raw) = &o.value else {
                setting = None;
                continue;
            };
            last_wins(&mut setting, Setting::read(&source, raw, expected, &parse)?);
        }
        Ok(setting)
    }

    pub fn int(&self, keys: &[&str]) -> Result<Option<Setting<i64>>, FlagError> {
        self.parse_with(keys, "an integer", parse_int)
    }
}

/// `+model.x=1` → Override; words that are not `key=value` → None.
fn parse_override(word: &str, index: usize) -> Option<Override> {
    let (kind, rest) = if let Some(r) = word.strip_prefix("++") {
        (OverrideKind::ForceAdd, r)
    } else if let Some(r) = word.strip_prefix('+') {
        (OverrideKind::Add, r)
    } else if let Some(r) = word.strip_prefix('~') {
        (OverrideKind::Delete, r)
    } else {
        (OverrideKind::Set, word)
    };
    let (key, value) = match rest.split_once('=') {
        Some((k, v)) => (k, Some(unquote(v).to_string())),
        None if kind == OverrideKind::Delete => (rest, None),
        None => return None,
    };
    if !is_override_key(key) {
        return None;
    }
    Some(Override {
        kind,
        key: key.to_string(),
        value,
        index,
        written: word.to_string(),
    })
}

/// Hydra keys: dotted (`model.optim.lr`) or group paths (`model/optim`), each part starting
/// with a letter or `_` (Hydra's override grammar `ID`, `DOT_PATH`), optionally `@package`.
fn is_override_key(key: &str) -> bool {
    let path = key.split_once('@').map(|(p, _)| p).unwrap_or(key);
    !path.is_empty()
        && path.split(['.', '/']).all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
                && chars.all(|c| c == '_' || c == '-' || c.is_ascii_alphanumeric())
        })
        && path
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
}

/// `'bf16-mixed'` → `bf16-mixed` (Hydra quoted strings).
fn unquote(v: &str) -> &str {
    for q in ['\'', '"'] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v.get(1..v.len() - 1).unwrap_or(v);
        }
    }
    v
}

/// Training precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precision {
    Bf16,
    Fp16,
    Fp32,
    /// A value this kit does not map (e.g. `64-true`, `transformer-engine`), as written.
    Unknown(String),
}

impl Precision {
    /// Lightning precision strings (`trainer.precision`): `bf16-mixed`, `bf16-true` and the
    /// legacy `bf16`; `16-mixed`, `16-true` and the legacy `16`; `32-true`, `32`. Lightning 2.6.5
    /// `src/lightning/fabric/plugins/precision/precision.py` `_PRECISION_INPUT_STR` and its alias
    /// map (`bf16`→`bf16-mixed`, `16`→`16-mixed`, `32`→`32-true`), applied by
    /// `fabric/connector.py` `_convert_precision_to_unified_args`; NeMo v2.4.0
    /// `nemo/collections/nlp/parts/megatron_trainer_builder.py` `MegatronTrainerBuilder._plugins`
    /// takes `16`, `bf16`, `16-mixed`, `bf16-mixed` as mixed precision.
    pub fn from_lightning(s: &str) -> Precision {
        match s.trim() {
            "bf16" | "bf16-mixed" | "bf16-true" => Precision::Bf16,
            "16" | "16-mixed" | "16-true" => Precision::Fp16,
            "32" | "32-true" => Precision::Fp32,
            other => Precision::Unknown(other.to_string()),
        }
    }
}

/// `trainer.devices`: a count (`-1`: all) or a name Lightning resolves (`auto`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    Count(i64),
    Named(String),
}

/// NeMo settings from Hydra overrides. NeMo 1 names: NVIDIA/NeMo v2.4.0
/// `examples/nlp/language_modeling/conf/megatron_gpt_config.yaml` (`trainer.devices`,
/// `num_nodes`, `precision` l.8-11; `model.micro_batch_size`, `global_batch_size` l.81-82,
/// `tensor_`/`pipeline_model_parallel_size` l.84-85, `num_layers` l.92, `num_attention_heads`
/// l.95, `activations_checkpoint_*` l.198-203, `sequence_parallel` l.224). NeMo 2 paths: v2.4.0
/// `nemo/collections/llm/recipes/llama3_8b.py`, `trainer()` (a `MegatronStrategy` with the
/// parallel sizes and `sequence_parallel`: `trainer.strategy.*`) and `pretrain_recipe` (`data`
/// with `micro_batch_size`, `global_batch_size`: `data.*`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NemoArgs {
    pub tensor_model_parallel_size: Option<Setting<i64>>,
    pub pipeline_model_parallel_size: Option<Setting<i64>>,
    pub num_nodes: Option<Setting<i64>>,
    pub devices: Option<Setting<Devices>>,
    pub precision: Option<Setting<Precision>>,
    pub micro_batch_size: Option<Setting<i64>>,
    pub global_batch_size: Option<Setting<i64>>,
    pub num_layers: Option<Setting<i64>>,
    pub num_attention_heads: Option<Setting<i64>>,
    /// `model.activations_checkpoint_granularity`; inner None for `null`, the yaml default, which
    /// is no recompute (NeMo v2.4.0 `megatron_base_model.py` `build_transformer_config` passes it
    /// on as `recompute_granularity`; Megatron-LM core_v0.19.0 `megatron/core/transformer/
    /// transformer_config.py` l.518: "If None, no recompute is performed").
    pub activations_checkpoint_granularity: Option<Setting<Option<RecomputeGranularity>>>,
    /// `model.activations_checkpoint_method`; inner None for `null`.
    pub activations_checkpoint_method: Option<Setting<Option<RecomputeMethod>>>,
    pub activations_checkpoint_num_layers: Option<Setting<i64>>,
    pub sequence_parallel: Option<Setting<bool>>,
}

pub(crate) const TP_KEYS: &[&str] = &[
    "model.tensor_model_parallel_size",
    "trainer.strategy.tensor_model_parallel_size",
];
pub(crate) const PP_KEYS: &[&str] = &[
    "model.pipeline_model_parallel_size",
    "trainer.strategy.pipeline_model_parallel_size",
];
pub(crate) const MBS_KEYS: &[&str] = &["model.micro_batch_size", "data.micro_batch_size"];
/// Megatron-Bridge uses `train.global_batch_size` (NVIDIA-NeMo/Megatron-Bridge v0.6.0
/// `docs/megatron-lm-to-megatron-bridge.md`: `--global-batch-size N` becomes
/// `train.global_batch_size=N`).
pub(crate) const GBS_KEYS: &[&str] = &[
    "model.global_batch_size",
    "data.global_batch_size",
    "train.global_batch_size",
];

impl NemoArgs {
    pub fn parse(o: &Overrides) -> Result<NemoArgs, FlagError> {
        // Hydra v1.3.2 reads only `null` (any case) as null (`hydra/grammar/OverrideLexer.g4`
        // NULL); by that grammar `None` is the string "None" and `~` is no value token (it is
        // null only in a YAML file: PyYAML 6.0.3 `resolver.py`). Both are taken as null here,
        // leniently; `NULL`/`Null` are refused.
        let nullable = |s: &str| matches!(s, "null" | "None" | "~");
        Ok(NemoArgs {
            tensor_model_parallel_size: o.int(TP_KEYS)?,
            pipeline_model_parallel_size: o.int(PP_KEYS)?,
            num_nodes: o.int(&["trainer.num_nodes"])?,
            devices: o.parse_with(&["trainer.devices"], "a count or auto", |s| {
                Some(match parse_int(s) {
                    Some(n) => Devices::Count(n),
                    None => Devices::Named(s.to_string()),
                })
            })?,
            precision: o.parse_with(&["trainer.precision"], "a precision", |s| {
                Some(Precision::from_lightning(s))
            })?,
            micro_batch_size: o.int(MBS_KEYS)?,
            global_batch_size: o.int(GBS_KEYS)?,
            num_layers: o.int(&["model.num_layers"])?,
            num_attention_heads: o.int(&["model.num_attention_heads"])?,
            activations_checkpoint_granularity: o.parse_with(
                &["model.activations_checkpoint_granularity"],
                "one of selective, full, null",
                |s| {
                    if nullable(s) {
                        Some(None)
                    } else {
                        RecomputeGranularity::parse(s).map(Some)
                    }
                },
            )?,
            activations_checkpoint_method: o.parse_with(
                &["model.activations_checkpoint_method"],
                "one of uniform, block, null",
                |s| {
                    if nullable(s) {
                        Some(None)
                    } else {
                        RecomputeMethod::parse(s).map(Some)
                    }
                },
            )?,
            activations_checkpoint_num_layers: o
                .int(&["model.activations_checkpoint_num_layers"])?,
            sequence_parallel: o.parse_with(
                &[
                    "model.sequence_parallel",
                    "trainer.strategy.sequence_parallel",
                ],
                "true or false",
                yaml_bool,
            )?,
        })
    }

    pub fn from_argv(argv: &[String]) -> Result<NemoArgs, FlagError> {
        NemoArgs::parse(&Overrides::parse(argv))
    }

    pub fn is_empty(&self) -> bool {
        *self == NemoArgs::default()
    }
}

/// Hydra override booleans: `true`/`false` in any case (hydra v1.3.2
/// `hydra/grammar/OverrideLexer.g4` BOOL; YAML 1.1's yes/no/on/off are strings there).
fn yaml_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Hugging Face TrainingArguments

/// `--save_strategy` choices (transformers `SaveStrategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveStrategy {
    No,
    Steps,
    Epoch,
    Best,
}

/// `--save_steps`: an integer step count, or a ratio of the total steps when below 1
/// (TrainingArguments docs: "Should be an integer or a float in range `[0,1)`. If smaller than
/// 1, will be interpreted as ratio of total training steps.").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SaveSteps {
    Steps(i64),
    Ratio(f64),
}

/// The `TrainingArguments` fields the labs grade (transformers 5.24 `training_args.py`, read
/// through `HfArgumentParser`: both spellings, `string_to_bool` booleans), plus optimum-neuron's
/// `NeuronTrainingArguments` (huggingface/optimum-neuron v0.4.5
/// `optimum/neuron/trainers/training_args.py`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HfTrainingArgs {
    /// The single `.json`/`.yaml`/`.yml` argument example scripts read their arguments from
    /// instead (transformers examples `run_clm.py`: `len(sys.argv) == 2 and
    /// sys.argv[1].endswith(".json")`); every other field is then None.
    pub config_file: Option<String>,
    pub output_dir: Option<Setting<String>>,
    pub logging_dir: Option<Setting<String>>,
    /// `--deepspeed`: a config path, or inline JSON when it starts with `{`.
    pub deepspeed: Option<Setting<String>>,
    pub resume_from_checkpoint: Option<Setting<String>>,
    pub bf16: Option<Setting<bool>>,
    pub fp16: Option<Setting<bool>>,
    /// Deprecated in transformers 5.24 in favour of `activation_checkpointing`; both work.
    pub gradient_checkpointing: Option<Setting<bool>>,
    pub activation_checkpointing: Option<Setting<bool>>,
    pub per_device_train_batch_size: Option<Setting<i64>>,
    pub gradient_accumulation_steps: Option<Setting<i64>>,
    pub max_steps: Option<Setting<i64>>,
    pub save_strategy: Option<Setting<SaveStrategy>>,
    pub save_steps: Option<Setting<SaveSteps>>,
    pub save_total_limit: Option<Setting<i64>>,
    /// optimum-neuron `--tensor_parallel_size` (default 1; v0.4.5 `training_args.py` l.361).
    pub tensor_parallel_size: Option<Setting<i64>>,
    /// optimum-neuron `--pipeline_parallel_size` (default 1; v0.4.5 `training_args.py` l.368).
    pub pipeline_parallel_size: Option<Setting<i64>>,
    /// optimum-neuron `--zero_1` (default True, v0.4.5 `training_args.py` l.325, so `--no_zero_1`
    /// turns it off).
    pub zero_1: Option<Setting<bool>>,
}

impl HfTrainingArgs {
    pub fn parse(a: &Args) -> Result<HfTrainingArgs, FlagError> {
        if let [only] = a.words() {
            if [".json", ".yaml", ".yml"]
                .iter()
                .any(|ext| only.ends_with(ext))
            {
                return Ok(HfTrainingArgs {
                    config_file: Some(only.clone()),
                    ..HfTrainingArgs::default()
                });
            }
        }
        Ok(HfTrainingArgs {
            config_file: None,
            output_dir: a.string(&["output_dir"])?,
            logging_dir: a.string(&["logging_dir"])?,
            deepspeed: a.string(&["deepspeed"])?,
            resume_from_checkpoint: a.string(&["resume_from_checkpoint"])?,
            bf16: a.hf_bool(&["bf16"], false)?,
            fp16: a.hf_bool(&["fp16"], false)?,
            gradient_checkpointing: a.hf_bool(&["gradient_checkpointing"], false)?,
            activation_checkpointing: a.hf_bool(&["activation_checkpointing"], false)?,
            per_device_train_batch_size: a.int(&["per_device_train_batch_size"])?,
            gradient_accumulation_steps: a.int(&["gradient_accumulation_steps"])?,
            max_steps: a.int(&["max_steps"])?,
            save_strategy: a.parse_with(
                &["save_strategy"],
                "one of no, steps, epoch, best",
                |s| match s {
                    "no" => Some(SaveStrategy::No),
                    "steps" => Some(SaveStrategy::Steps),
                    "epoch" => Some(SaveStrategy::Epoch),
                    "best" => Some(SaveStrategy::Best),
                    _ => None,
                },
            )?,
            // `--save_steps must be an integer if bigger than 1: 1.5` (TrainingArguments
            // `__post_init__`).
            save_steps: a.parse_with(&["save_steps"], "an integer, or a ratio below 1", |s| {
                let v = parse_float(s)?;
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Some(SaveSteps::Steps(v as i64))
                } else if v < 1.0 {
                    Some(SaveSteps::Ratio(v))
                } else {
                    None
                }
            })?,
            save_total_limit: a.int(&["save_total_limit"])?,
            tensor_parallel_size: a.int(&["tensor_parallel_size"])?,
            pipeline_parallel_size: a.int(&["pipeline_parallel_size"])?,
            zero_1: a.hf_bool(&["zero_1"], true)?,
        })
    }

    pub fn from_argv(argv: &[String]) -> Result<HfTrainingArgs, FlagError> {
        HfTrainingArgs::parse(&Args::new(argv.iter().cloned()))
    }

    /// Activation checkpointing as asked: `--activation_checkpointing` (newer name) else
    /// `--gradient_checkpointing`; whichever is written true wins.
    pub fn checkpointing(&self) -> Option<&Setting<bool>> {
        let on = |s: &&Setting<bool>| s.known() == Some(&true);
        self.activation_checkpointing
            .as_ref()
            .filter(on)
            .or_else(|| self.gradient_checkpointing.as_ref().filter(on))
            .or(self.activation_checkpointing.as_ref())
            .or(self.gradient_checkpointing.as_ref())
    }

    /// The `--deepspeed` value when it is inline JSON (transformers accepts a dict or a string
    /// starting with `{`).
    pub fn deepspeed_inline_json(&self) -> Option<&str> {
        self.deepspeed
            .as_ref()
            .and_then(Setting::known)
            .map(String::as_str)
            .filter(|v| v.trim_start().starts_with('{'))
    }
}

/// The DeepSpeed config a script is given: HF `--deepspeed PATH`, or DeepSpeed's own
/// `--deepspeed_config PATH` (`deepspeed.add_config_arguments`, where `--deepspeed` is a bare
/// switch). The last written wins.
pub fn deepspeed_config_arg(a: &Args) -> Option<Setting<String>> {
    let flag = a
        .flags(&["deepspeed", "deepspeed_config"])
        .into_iter()
        .rfind(|f| f.value().is_some())?;
    Setting::read(flag.spelling, flag.value()?, "a path", |s| {
        Some(s.to_string())
    })
    .ok()
}

// ---------------------------------------------------------------------------------------------
// Merged view

/// Every place a quantity was set, so conflicts are visible rather than resolved silently.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged<T> {
    pub settings: Vec<Setting<T>>,
}

impl<T> Default for Merged<T> {
    fn default() -> Self {
        Merged {
            settings: Vec::new(),
        }
    }
}

/// What a [`Merged`] amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum MergedState<'a, T> {
    NotSet,
    /// Only variable references: the value is unknown.
    Unknown(&'a Setting<T>),
    /// One literal value (possibly written in several places, or beside variables).
    One(&'a Setting<T>),
    /// Different literal values.
    Conflict(Vec<&'a Setting<T>>),
}

impl<T: PartialEq> Merged<T> {
    pub fn state(&self) -> MergedState<'_, T> {
        let known: Vec<&Setting<T>> = self
            .settings
            .iter()
            .filter(|s| s.known().is_some())
            .collect();
        let Some(first) = known.first() else {
            return match self.settings.first() {
                Some(s) => MergedState::Unknown(s),
                None => MergedState::NotSet,
            };
        };
        if known.iter().any(|s| s.known() != first.known()) {
            return MergedState::Conflict(known);
        }
        MergedState::One(first)
    }

    /// The literal value when exactly one is set.
    pub fn value(&self) -> Option<&T> {
        match self.state() {
            MergedState::One(s) => s.known(),
            _ => None,
        }
    }

    pub fn is_set(&self) -> bool {
        !self.settings.is_empty()
    }

    fn push(&mut self, s: Option<Setting<T>>) {
        self.settings.extend(s);
    }
}

/// Parallelism, batch and precision as every framework on the command line (and a DeepSpeed
/// config, via [`ParallelPlan::add_deepspeed`]) sets them. Nothing is defaulted: unset is
/// [`MergedState::NotSet`], and the verifier applies the framework's default if it wants one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParallelPlan {
    /// Megatron `--tensor-model-parallel-size`, NeMo `model.`/`trainer.strategy.`
    /// `tensor_model_parallel_size`, optimum-neuron `--tensor_parallel_size`.
    pub tensor_parallel: Merged<i64>,
    pub pipeline_parallel: Merged<i64>,
    pub num_layers: Merged<i64>,
    pub num_attention_heads: Merged<i64>,
    /// Megatron `--micro-batch-size`, NeMo `*.micro_batch_size`, HF
    /// `--per_device_train_batch_size`, DeepSpeed `train_micro_batch_size_per_gpu`.
    pub micro_batch_size: Merged<i64>,
    /// Megatron `--global-batch-size`, NeMo `*.global_batch_size`, DeepSpeed `train_batch_size`.
    pub global_batch_size: Merged<i64>,
    /// `--bf16`/`--fp16` (true), `trainer.precision`, DeepSpeed `bf16.enabled`/`fp16.enabled`.
    pub precision: Merged<Precision>,
}

impl ParallelPlan {
    /// Reads the script arguments. `--bf16`/`--fp16` are read so that both Megatron-LM's
    /// `store_true` and HF's `--bf16 true|false` forms count (`--bf16 false` sets nothing).
    pub fn from_args(a: &Args) -> Result<ParallelPlan, FlagError> {
        let o = Overrides::parse(a.words());
        let mut p = ParallelPlan::default();
        p.tensor_parallel
            .push(a.int(&["tensor-model-parallel-size"])?);
        p.tensor_parallel.push(o.int(TP_KEYS)?);
        p.tensor_parallel.push(a.int(&["tensor_parallel_size"])?);
        p.pipeline_parallel
            .push(a.int(&["pipeline-model-parallel-size"])?);
        p.pipeline_parallel.push(o.int(PP_KEYS)?);
        p.pipeline_parallel
            .push(a.int(&["pipeline_parallel_size"])?);
        p.num_layers.push(a.int(&["num-layers"])?);
        p.num_layers.push(o.int(&["model.num_layers"])?);
        p.num_attention_heads.push(a.int(&["num-attention-heads"])?);
        p.num_attention_heads
            .push(o.int(&["model.num_attention_heads"])?);
        p.micro_batch_size.push(a.int(&["micro-batch-size"])?);
        p.micro_batch_size.push(o.int(MBS_KEYS)?);
        p.micro_batch_size
            .push(a.int(&["per_device_train_batch_size"])?);
        p.global_batch_size.push(a.int(&["global-batch-size"])?);
        p.global_batch_size.push(o.int(GBS_KEYS)?);
        for (flag, precision) in [("bf16", Precision::Bf16), ("fp16", Precision::Fp16)] {
            if let Some(s) = a.lenient_bool(&[flag])? {
                match &s.value {
                    Known::Value(false) => {}
                    _ => p.precision.push(Some(s.map(|_| precision.clone()))),
                }
            }
        }
        p.precision
            .push(o.parse_with(&["trainer.precision"], "a precision", |s| {
                Some(Precision::from_lightning(s))
            })?);
        Ok(p)
    }

    pub fn from_argv(argv: &[String]) -> Result<ParallelPlan, FlagError> {
        ParallelPlan::from_args(&Args::new(argv.iter().cloned()))
    }

    /// Adds what a DeepSpeed config sets; sources read `<origin>:<json path>`. `"auto"` values
    /// are filled by the HF Trainer from its own arguments, so they add nothing here.
    pub fn add_deepspeed(&mut self, ds: &DsConfig, origin: &str) {
        let setting = |value: i64, path: &str| Setting {
            value: Known::Value(value),
            source: format!("{origin}:{path}"),
            raw: Some(value.to_string()),
            earlier: Vec::new(),
        };
        if let Some(DsValue::Value(v)) = ds.train_micro_batch_size_per_gpu {
            self.micro_batch_size
                .push(Some(setting(v, "train_micro_batch_size_per_gpu")));
        }
        if let Some(DsValue::Value(v)) = ds.train_batch_size {
            self.global_batch_size
                .push(Some(setting(v, "train_batch_size")));
        }
        for (enabled, precision, path) in [
            (ds.bf16_enabled(), Precision::Bf16, ds.bf16_path()),
            (ds.fp16_enabled(), Precision::Fp16, "fp16.enabled"),
        ] {
            if enabled == Some(DsValue::Value(true)) {
                self.precision.push(Some(Setting {
                    value: Known::Value(precision),
                    source: format!("{origin}:{path}"),
                    raw: Some("true".into()),
                    earlier: Vec::new(),
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn megatron_flags_in_both_spellings() {
        for line in [
            "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --num-layers 96 --num-attention-heads 96 --micro-batch-size 1 --global-batch-size 1536 --seq-length 2048 --bf16 --use-distributed-optimizer",
            "--tensor_model_parallel_size=8 --pipeline_model_parallel_size=2 --num_layers=96 --num_attention_heads=96 --micro_batch_size=1 --global_batch_size=1536 --seq_length=2048 --bf16 --use_distributed_optimizer",
        ] {
            let m = MegatronArgs::from_argv(&words(line)).unwrap();
            assert_eq!(m.tensor_model_parallel_size.as_ref().unwrap().known(), Some(&8));
            assert_eq!(m.pipeline_model_parallel_size.as_ref().unwrap().known(), Some(&2));
            assert_eq!(m.num_layers.as_ref().unwrap().known(), Some(&96));
            assert_eq!(m.num_attention_heads.as_ref().unwrap().known(), Some(&96));
            assert_eq!(m.micro_batch_size.as_ref().unwrap().known(), Some(&1));
            assert_eq!(m.global_batch_size.as_ref().unwrap().known(), Some(&1536));
            assert_eq!(m.seq_length.as_ref().unwrap().known(), Some(&2048));
            assert_eq!(m.bf16.as_ref().unwrap().known(), Some(&true));
            assert_eq!(m.fp16, None);
            assert_eq!(m.use_distributed_optimizer.as_ref().unwrap().known(), Some(&true));
            assert!(!m.is_empty());
        }
        assert!(MegatronArgs::from_argv(&words("--lr 1e-4"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn megatron_loss_scale_and_recompute() {
        let m = MegatronArgs::from_argv(&words(
            "--fp16 --loss-scale 1024 --initial-loss-scale 65536 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1",
        ))
        .unwrap();
        assert_eq!(m.loss_scale.as_ref().unwrap().known(), Some(&1024.0));
        assert_eq!(
            m.initial_loss_scale.as_ref().unwrap().known(),
            Some(&65536.0)
        );
        assert_eq!(
            m.recompute_granularity.as_ref().unwrap().known(),
            Some(&RecomputeGranularity::Full)
        );
        assert_eq!(
            m.recompute_method.as_ref().unwrap().known(),
            Some(&RecomputeMethod::Uniform)
        );
        assert_eq!(m.recompute_num_layers.as_ref().unwrap().known(), Some(&1));
        assert_eq!(m.effective_recompute(), Some(RecomputeGranularity::Full));
        let m = MegatronArgs::from_argv(&words(
            "--recompute-activations --recompute-granularity full",
        ))
        .unwrap();
        assert_eq!(
            m.effective_recompute(),
            Some(RecomputeGranularity::Selective)
        );
        let e = MegatronArgs::from_argv(&words("--recompute-granularity partial")).unwrap_err();
        assert_eq!(e.flag(), "--recompute-granularity");
        let e = MegatronArgs::from_argv(&words("--tensor-model-parallel-size=eight")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--tensor-model-parallel-size=eight: expected an integer"
        );
        // Megatron's switches take no value.
        assert!(MegatronArgs::from_argv(&words("--bf16=true")).is_err());
    }

    #[test]
    fn megatron_removed_flags_carry_its_message() {
        let m = MegatronArgs::from_argv(&words("--batch-size 8 --checkpoint-activations")).unwrap();
        assert_eq!(m.removed.len(), 2);
        assert_eq!(m.removed[0].spelling, "--batch-size");
        assert_eq!(
            m.removed[0].message,
            "--batch-size argument is no longer valid, use --micro-batch-size instead"
        );
        assert!(m.removed[1]
            .message
            .starts_with("--checkpoint-activations is no longer valid"));
    }

    #[test]
    fn hydra_overrides_and_prefixes() {
        let o = Overrides::parse(&words(
            "train.py model.tensor_model_parallel_size=8 +trainer.foo=1 ++model.x='a-b' ~model.y --flag=1 trainer.precision=\"bf16-mixed\" exp_manager.name=run",
        ));
        let kinds: Vec<(OverrideKind, &str)> =
            o.entries.iter().map(|e| (e.kind, e.key.as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                (OverrideKind::Set, "model.tensor_model_parallel_size"),
                (OverrideKind::Add, "trainer.foo"),
                (OverrideKind::ForceAdd, "model.x"),
                (OverrideKind::Delete, "model.y"),
                (OverrideKind::Set, "trainer.precision"),
                (OverrideKind::Set, "exp_manager.name"),
            ]
        );
        assert_eq!(
            o.get("model.x").and_then(|e| e.value.as_deref()),
            Some("a-b")
        );
        assert_eq!(
            o.get("trainer.precision").and_then(|e| e.value.as_deref()),
            Some("bf16-mixed")
        );
        assert_eq!(o.get("model.y"), None);
        let s = o.int(&["trainer.foo"]).unwrap().unwrap();
        assert_eq!((s.source.as_str(), s.known()), ("+trainer.foo", Some(&1)));
        // Not overrides: flags, paths, `=` at the start.
        assert!(Overrides::parse(&words("--a=1 /x=y =v 9x=1"))
            .entries
            .is_empty());
        // A later delete removes the value.
        let o = Overrides::parse(&words("model.a=1 ~model.a"));
        assert_eq!(o.int(&["model.a"]).unwrap(), None);
        assert_eq!(o.all("model.a").count(), 2);
        // `~key=value` deletes too: it never sets the value it names.
        let o = Overrides::parse(&words("~model.tensor_model_parallel_size=4"));
        assert_eq!(o.int(&["model.tensor_model_parallel_size"]).unwrap(), None);
        let o = Overrides::parse(&words("model.a=2 ~model.a=2 model.a=3"));
        assert_eq!(o.int(&["model.a"]).unwrap().unwrap().known(), Some(&3));
    }

    #[test]
    fn nemo_settings_from_overrides() {
        let n = NemoArgs::from_argv(&words(
            "trainer.devices=8 trainer.num_nodes=2 trainer.precision=bf16 model.micro_batch_size=1 \
             model.global_batch_size=256 model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=2 \
             model.num_layers=32 model.num_attention_heads=32 model.activations_checkpoint_granularity=selective \
             model.activations_checkpoint_method=null model.sequence_parallel=True",
        ))
        .unwrap();
        assert_eq!(
            n.devices.as_ref().unwrap().known(),
            Some(&Devices::Count(8))
        );
        assert_eq!(n.num_nodes.as_ref().unwrap().known(), Some(&2));
        assert_eq!(
            n.precision.as_ref().unwrap().known(),
            Some(&Precision::Bf16)
        );
        assert_eq!(n.micro_batch_size.as_ref().unwrap().known(), Some(&1));
        assert_eq!(n.global_batch_size.as_ref().unwrap().known(), Some(&256));
        assert_eq!(
            n.tensor_model_parallel_size.as_ref().unwrap().known(),
            Some(&4)
        );
        assert_eq!(
            n.pipeline_model_parallel_size.as_ref().unwrap().known(),
            Some(&2)
        );
        assert_eq!(n.num_layers.as_ref().unwrap().known(), Some(&32));
        assert_eq!(n.num_attention_heads.as_ref().unwrap().known(), Some(&32));
        assert_eq!(
            n.activations_checkpoint_granularity
                .as_ref()
                .unwrap()
                .known(),
            Some(&Some(RecomputeGranularity::Selective))
        );
        assert_eq!(
            n.activations_checkpoint_method.as_ref().unwrap().known(),
            Some(&None)
        );
        assert_eq!(n.sequence_parallel.as_ref().unwrap().known(), Some(&true));
        // NeMo 2 recipe paths.
        let n = NemoArgs::from_argv(&words("trainer.strategy.tensor_model_parallel_size=2 data.micro_batch_size=4 trainer.devices=auto")).unwrap();
        assert_eq!(
            n.tensor_model_parallel_size.as_ref().unwrap().known(),
            Some(&2)
        );
        assert_eq!(
            n.micro_batch_size.as_ref().unwrap().source,
            "data.micro_batch_size"
        );
        assert_eq!(
            n.devices.as_ref().unwrap().known(),
            Some(&Devices::Named("auto".into()))
        );
        let e = NemoArgs::from_argv(&words("model.tensor_model_parallel_size=eight")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "model.tensor_model_parallel_size=eight: expected an integer"
        );
        let n = NemoArgs::from_argv(&words("model.tensor_model_parallel_size=${TP}")).unwrap();
        assert!(n.tensor_model_parallel_size.unwrap().value.is_variable());
        assert!(NemoArgs::from_argv(&words("--x 1")).unwrap().is_empty());
    }

    #[test]
    fn lightning_precision_strings() {
        for (s, p) in [
            ("bf16", Precision::Bf16),
            ("bf16-mixed", Precision::Bf16),
            ("bf16-true", Precision::Bf16),
            ("16", Precision::Fp16),
            ("16-mixed", Precision::Fp16),
            ("16-true", Precision::Fp16),
            ("32", Precision::Fp32),
            ("32-true", Precision::Fp32),
            ("64-true", Precision::Unknown("64-true".into())),
        ] {
            assert_eq!(Precision::from_lightning(s), p, "{s}");
        }
    }

    #[test]
    fn hf_training_arguments() {
        let h = HfTrainingArgs::from_argv(&words(
            "--output_dir /fsx/out --logging-dir /fsx/logs --bf16 True --gradient_checkpointing \
             --per-device-train-batch-size 4 --gradient_accumulation_steps 8 --max_steps 1000 \
             --save_strategy steps --save_steps 0.25 --save_total_limit 2 --deepspeed ds.json \
             --resume_from_checkpoint /fsx/out/checkpoint-500",
        ))
        .unwrap();
        assert_eq!(
            h.output_dir.as_ref().unwrap().known().map(String::as_str),
            Some("/fsx/out")
        );
        assert_eq!(
            h.logging_dir.as_ref().unwrap().known().map(String::as_str),
            Some("/fsx/logs")
        );
        assert_eq!(h.bf16.as_ref().unwrap().known(), Some(&true));
        assert_eq!(h.fp16, None);
        assert_eq!(
            h.checkpointing().unwrap().source,
            "--gradient_checkpointing"
        );
        assert_eq!(
            h.per_device_train_batch_size.as_ref().unwrap().known(),
            Some(&4)
        );
        assert_eq!(
            h.gradient_accumulation_steps.as_ref().unwrap().known(),
            Some(&8)
        );
        assert_eq!(h.max_steps.as_ref().unwrap().known(), Some(&1000));
        assert_eq!(
            h.save_strategy.as_ref().unwrap().known(),
            Some(&SaveStrategy::Steps)
        );
        assert_eq!(
            h.save_steps.as_ref().unwrap().known(),
            Some(&SaveSteps::Ratio(0.25))
        );
        assert_eq!(h.save_total_limit.as_ref().unwrap().known(), Some(&2));
        assert_eq!(
            h.deepspeed.as_ref().unwrap().known().map(String::as_str),
            Some("ds.json")
        );
        assert_eq!(h.deepspeed_inline_json(), None);
        assert!(h.resume_from_checkpoint.is_some());
    }

    #[test]
    fn hf_save_steps_and_strategy_rules() {
        let steps = |v: &str| HfTrainingArgs::from_argv(&words(&format!("--save_steps {v}")));
        assert_eq!(
            steps("500").unwrap().save_steps.unwrap().known(),
            Some(&SaveSteps::Steps(500))
        );
        assert_eq!(
            steps("500.0").unwrap().save_steps.unwrap().known(),
            Some(&SaveSteps::Steps(500))
        );
        assert_eq!(
            steps("0.1").unwrap().save_steps.unwrap().known(),
            Some(&SaveSteps::Ratio(0.1))
        );
        assert_eq!(steps("1.5").unwrap_err().flag(), "--save_steps");
        let e = HfTrainingArgs::from_argv(&words("--save_strategy sometimes")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--save_strategy=sometimes: expected one of no, steps, epoch, best"
        );
        for s in ["no", "epoch", "best"] {
            assert!(HfTrainingArgs::from_argv(&words(&format!("--save_strategy={s}"))).is_ok());
        }
    }

    #[test]
    fn hf_checkpointing_names() {
        let h = HfTrainingArgs::from_argv(&words("--activation_checkpointing")).unwrap();
        assert_eq!(
            h.checkpointing().unwrap().source,
            "--activation_checkpointing"
        );
        let h = HfTrainingArgs::from_argv(&words(
            "--activation_checkpointing false --gradient_checkpointing true",
        ))
        .unwrap();
        assert_eq!(
            h.checkpointing().unwrap().source,
            "--gradient_checkpointing"
        );
        let h = HfTrainingArgs::from_argv(&words("--gradient-checkpointing=False")).unwrap();
        assert_eq!(h.checkpointing().unwrap().known(), Some(&false));
        assert_eq!(
            HfTrainingArgs::from_argv(&words("--bf16"))
                .unwrap()
                .checkpointing(),
            None
        );
    }

    #[test]
    fn hf_config_file_instead_of_flags() {
        for f in ["args.json", "conf/train.yaml", "x.yml"] {
            let h = HfTrainingArgs::from_argv(&words(f)).unwrap();
            assert_eq!(h.config_file.as_deref(), Some(f));
            assert_eq!(h.bf16, None);
        }
        assert_eq!(
            HfTrainingArgs::from_argv(&words("--bf16"))
                .unwrap()
                .config_file,
            None
        );
    }

    #[test]
    fn optimum_neuron_arguments() {
        let h = HfTrainingArgs::from_argv(&words(
            "--bf16 --tensor_parallel_size=8 --pipeline_parallel_size 1 --no_zero_1",
        ))
        .unwrap();
        assert_eq!(h.tensor_parallel_size.as_ref().unwrap().known(), Some(&8));
        assert_eq!(h.pipeline_parallel_size.as_ref().unwrap().known(), Some(&1));
        assert_eq!(h.zero_1.as_ref().unwrap().known(), Some(&false));
        let h = HfTrainingArgs::from_argv(&words("--zero_1 true")).unwrap();
        assert_eq!(h.zero_1.as_ref().unwrap().known(), Some(&true));
    }

    #[test]
    fn hf_inline_deepspeed_json() {
        let h = HfTrainingArgs::from_argv(&[
            "--deepspeed".to_string(),
            "{\"zero_optimization\": {\"stage\": 2}}".to_string(),
        ])
        .unwrap();
        assert_eq!(
            h.deepspeed_inline_json(),
            Some("{\"zero_optimization\": {\"stage\": 2}}")
        );
    }

    #[test]
    fn deepspeed_config_argument_in_both_conventions() {
        let a = Args::new(words("--deepspeed --deepspeed_config ds_z3.json"));
        let s = deepspeed_config_arg(&a).unwrap();
        assert_eq!(
            (s.source.as_str(), s.known().map(String::as_str)),
            ("--deepspeed_config", Some("ds_z3.json"))
        );
        let a = Args::new(words("--deepspeed ds.json"));
        assert_eq!(deepspeed_config_arg(&a).unwrap().source, "--deepspeed");
        assert_eq!(deepspeed_config_arg(&Args::new(words("--deepspeed"))), None);
    }

    #[test]
    fn merged_plan_keeps_sources_and_shows_conflicts() {
        let p = ParallelPlan::from_argv(&words("--tensor-model-parallel-size 8 model.tensor_model_parallel_size=8 --bf16 --fp16 --micro-batch-size 2 --per_device_train_batch_size 4")).unwrap();
        match p.tensor_parallel.state() {
            MergedState::One(s) => assert_eq!(
                (s.source.as_str(), s.known()),
                ("--tensor-model-parallel-size", Some(&8))
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(p.tensor_parallel.settings.len(), 2);
        match p.precision.state() {
            MergedState::Conflict(s) => {
                let srcs: Vec<&str> = s.iter().map(|x| x.source.as_str()).collect();
                assert_eq!(srcs, vec!["--bf16", "--fp16"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.precision.value(), None);
        assert!(matches!(
            p.micro_batch_size.state(),
            MergedState::Conflict(_)
        ));
        assert_eq!(p.pipeline_parallel.state(), MergedState::NotSet);
        assert!(!p.pipeline_parallel.is_set());
    }

    #[test]
    fn merged_precision_forms() {
        let value = |line: &str| {
            ParallelPlan::from_argv(&words(line))
                .unwrap()
                .precision
                .value()
                .cloned()
        };
        assert_eq!(value("--bf16"), Some(Precision::Bf16));
        assert_eq!(value("--bf16 True"), Some(Precision::Bf16));
        assert_eq!(value("--bf16 false"), None);
        assert_eq!(value("--fp16 pretrain.py"), Some(Precision::Fp16));
        assert_eq!(value("trainer.precision=16-mixed"), Some(Precision::Fp16));
        assert_eq!(
            value("--bf16 trainer.precision=bf16-mixed"),
            Some(Precision::Bf16)
        );
        let p = ParallelPlan::from_argv(&words("--bf16 $BF16")).unwrap();
        assert!(matches!(p.precision.state(), MergedState::Unknown(_)));
        let p = ParallelPlan::from_argv(&words(
            "--tensor_parallel_size 8 --tensor-model-parallel-size $TP",
        ))
        .unwrap();
        assert_eq!(p.tensor_parallel.value(), Some(&8));
    }

    #[test]
    fn nemo_megatron_gpt_pretraining_line() {
        // The shape of a NeMo 1 Megatron GPT pretraining launch (examples/nlp/language_modeling).
        let argv = words(
            "torchrun --nproc_per_node=8 --nnodes=2 /opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py \
             --config-path=/config --config-name=megatron_gpt_config trainer.devices=8 trainer.num_nodes=2 \
             trainer.max_steps=1000 trainer.precision=bf16 model.micro_batch_size=1 model.global_batch_size=128 \
             model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=1 model.num_layers=24 \
             model.num_attention_heads=16 model.activations_checkpoint_granularity=selective \
             +model.data.data_prefix=[1.0,/fsx/data/gpt_text_document] exp_manager.exp_dir=/fsx/results",
        );
        let entry = super::super::Launch::training_entry(&argv).unwrap();
        assert!(entry.script.ends_with("megatron_gpt_pretraining.py"));
        let n = NemoArgs::from_argv(&entry.args).unwrap();
        assert_eq!(
            n.tensor_model_parallel_size.as_ref().unwrap().known(),
            Some(&4)
        );
        assert_eq!(
            n.precision.as_ref().unwrap().known(),
            Some(&Precision::Bf16)
        );
        let plan = ParallelPlan::from_argv(&entry.args).unwrap();
        assert_eq!(plan.global_batch_size.value(), Some(&128));
        assert_eq!(plan.num_layers.value(), Some(&24));
        assert_eq!(plan.precision.value(), Some(&Precision::Bf16));
        assert_eq!(plan.precision.settings[0].source, "trainer.precision");
    }

    #[test]
    fn hf_run_clm_with_deepspeed_line() {
        let argv = words(
            "deepspeed --num_gpus 8 examples/pytorch/language-modeling/run_clm.py --model_name_or_path gpt2 \
             --dataset_name wikitext --do_train --per_device_train_batch_size 4 --gradient_accumulation_steps 2 \
             --bf16 --gradient_checkpointing --deepspeed /config/ds_zero3.json --output_dir /fsx/out \
             --save_strategy steps --save_steps 500 --save_total_limit 3",
        );
        let entry = super::super::Launch::training_entry(&argv).unwrap();
        assert!(entry.script.ends_with("run_clm.py"));
        let h = HfTrainingArgs::from_argv(&entry.args).unwrap();
        assert_eq!(
            h.deepspeed.as_ref().unwrap().known().map(String::as_str),
            Some("/config/ds_zero3.json")
        );
        assert_eq!(h.bf16.as_ref().unwrap().known(), Some(&true));
        assert_eq!(
            h.save_steps.as_ref().unwrap().known(),
            Some(&SaveSteps::Steps(500))
        );
        let ds = DsConfig::parse(
            r#"{"bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto",
                "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}"#,
        )
        .unwrap();
        let mut plan = ParallelPlan::from_argv(&entry.args).unwrap();
        plan.add_deepspeed(&ds, "/config/ds_zero3.json");
        // `auto` adds nothing: the HF flags stand.
        assert_eq!(plan.micro_batch_size.settings.len(), 1);
        assert_eq!(plan.precision.value(), Some(&Precision::Bf16));
        let ds =
            DsConfig::parse(r#"{"fp16": {"enabled": true}, "train_micro_batch_size_per_gpu": 8}"#)
                .unwrap();
        plan.add_deepspeed(&ds, "ds.json");
        assert!(matches!(plan.precision.state(), MergedState::Conflict(_)));
        assert!(matches!(
            plan.micro_batch_size.state(),
            MergedState::Conflict(_)
        ));
        assert_eq!(
            plan.micro_batch_size.settings[1].source,
            "ds.json:train_micro_batch_size_per_gpu"
        );
    }
}
