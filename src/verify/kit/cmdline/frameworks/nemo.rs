//! NeMo's settings (NeMo 1 and NeMo 2 names) from a script's Hydra overrides.

use super::super::args::parse_int;
use super::super::{FlagError, Setting};
use super::hydra::Overrides;
use super::megatron::{RecomputeGranularity, RecomputeMethod};
use super::precision::Precision;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::kit::cmdline::ParallelPlan;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
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
        let entry = crate::verify::kit::cmdline::LauncherCommand::training_entry(&argv).unwrap();
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
}
