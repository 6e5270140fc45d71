//! Megatron-LM's command-line flags: the parallelism, batch, precision and recompute flags the
//! labs read, the flags it no longer accepts, and what its own strict parser refuses.

use super::super::args::Args;
use super::super::{FlagError, Setting};

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
    pub(super) fn parse(s: &str) -> Option<Self> {
        match s {
            "full" => Some(Self::Full),
            "selective" => Some(Self::Selective),
            _ => None,
        }
    }
}

impl RecomputeMethod {
    pub(super) fn parse(s: &str) -> Option<Self> {
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
}
