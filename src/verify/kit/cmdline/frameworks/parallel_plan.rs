//! [`ParallelPlan`]: parallelism, batch and precision as every framework on a command line (and
//! a DeepSpeed config) sets them, merged so that every source and every conflict stays visible.

use super::super::args::Args;
use super::super::ds_config::{DsConfig, DsValue};
use super::super::{FlagError, Known, Setting};
use super::hydra::Overrides;
use super::nemo::{GBS_KEYS, MBS_KEYS, PP_KEYS, TP_KEYS};
use super::precision::Precision;

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
}
