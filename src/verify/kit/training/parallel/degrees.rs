//! Parallel degrees (TP, PP, CP and the sizes they must divide) as the job's roles set them.

use std::collections::BTreeSet;

use crate::verify::kit::cmdline::{
    FlagError, MegatronArgs, Merged, MergedState, Overrides, ParallelPlan, Precision, RemovedFlag,
    Setting,
};

use super::launch::JobLaunch;

/// One number the training script is given, merged over every place that can set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Not on the command line.
    Unset,
    /// One literal value ≥ 1, as written.
    Set { value: i64, written: String },
    /// Only variable references: unknown.
    Variable(String),
    /// Zero or negative: no training tool accepts it.
    Invalid(String),
    /// Different literal values (two flags, two roles), as written.
    Conflict(Vec<String>),
}

impl Value {
    fn of(m: &Merged<i64>) -> Value {
        match m.state() {
            MergedState::NotSet => Value::Unset,
            MergedState::Unknown(s) => Value::Variable(s.as_written()),
            MergedState::One(s) => match s.known() {
                Some(v) if *v >= 1 => Value::Set {
                    value: *v,
                    written: s.as_written(),
                },
                _ => Value::Invalid(s.as_written()),
            },
            MergedState::Conflict(all) => {
                let mut seen = BTreeSet::new();
                Value::Conflict(
                    all.iter()
                        .map(|s| s.as_written())
                        .filter(|w| seen.insert(w.clone()))
                        .collect(),
                )
            }
        }
    }

    /// The value when one literal is set.
    pub fn value(&self) -> Option<i64> {
        match self {
            Value::Set { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// A parallel degree: unset is 1. Megatron-LM core_v0.19.0 `ModelParallelConfig` defaults;
    /// NeMo v2.4.0 `megatron_base_model.py` `MegatronBaseModel.__init__` (`cfg.get(…, 1)`,
    /// l.199-207) and `megatron_strategy.py` `MegatronStrategy.__init__` (l.237-244).
    pub fn degree(&self) -> Option<i64> {
        match self {
            Value::Unset => Some(1),
            other => other.value(),
        }
    }

    /// As written, for found values (`--tensor-model-parallel-size 8`; `unset`).
    pub fn written(&self) -> String {
        match self {
            Value::Unset => "unset".into(),
            Value::Set { written, .. } | Value::Variable(written) | Value::Invalid(written) => {
                written.clone()
            }
            Value::Conflict(all) => all.join(" vs "),
        }
    }
}

/// NeMo keys of the context-parallel size: NeMo 1 `model.context_parallel_size` (NVIDIA/NeMo
/// v2.4.0 `nemo/collections/nlp/models/language_modeling/megatron_base_model.py` l.207, default
/// 1); NeMo 2 `trainer.strategy.context_parallel_size` (`nemo/lightning/pytorch/strategies/
/// megatron_strategy.py` `MegatronStrategy.__init__` l.244; `llm/recipes/llama3_8b.py` l.110).
const CP_KEYS: &[&str] = &[
    "model.context_parallel_size",
    "trainer.strategy.context_parallel_size",
];

/// Parallel degrees and the model/batch sizes they must divide, as the job's roles set them
/// (Megatron-LM flags, NeMo overrides, optimum-neuron flags: [`ParallelPlan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Degrees {
    pub tp: Value,
    pub pp: Value,
    /// Megatron `--context-parallel-size` (also part of the model-parallel size).
    pub cp: Value,
    pub num_layers: Value,
    pub num_attention_heads: Value,
    pub micro_batch: Value,
    pub global_batch: Value,
    /// `--use-distributed-optimizer` in every role.
    pub distributed_optimizer: bool,
    /// `--bf16`/`--fp16`, `trainer.precision`, as every role sets it (unset: Megatron-LM's fp32).
    pub precision: Merged<Precision>,
    /// Flags Megatron-LM refuses at startup (`--model-parallel-size`), with its message.
    pub removed: Vec<RemovedFlag>,
}

impl Degrees {
    /// Reads every role's script arguments; the same quantity set differently by two roles is a
    /// [`Value::Conflict`]. A value the tool's parser refuses is the [`FlagError`].
    pub fn of(job: &JobLaunch) -> Result<Degrees, FlagError> {
        let mut plan = ParallelPlan::default();
        let mut cp = Merged::<i64>::default();
        let mut removed = Vec::new();
        let mut distributed = !job.roles.is_empty();
        for r in &job.roles {
            if r.megatron {
                MegatronArgs::strict(&crate::verify::kit::cmdline::Args::new(
                    r.script_args.iter().cloned(),
                ))?;
            }
            let p = ParallelPlan::from_argv(&r.script_args)?;
            let m = MegatronArgs::from_argv(&r.script_args)?;
            let o = Overrides::parse(&r.script_args);
            for (all, more) in [
                (&mut plan.tensor_parallel, p.tensor_parallel),
                (&mut plan.pipeline_parallel, p.pipeline_parallel),
                (&mut plan.num_layers, p.num_layers),
                (&mut plan.num_attention_heads, p.num_attention_heads),
                (&mut plan.micro_batch_size, p.micro_batch_size),
                (&mut plan.global_batch_size, p.global_batch_size),
            ] {
                all.settings.extend(more.settings);
            }
            plan.precision.settings.extend(p.precision.settings);
            cp.settings.extend(m.context_parallel_size.clone());
            cp.settings.extend(o.int(CP_KEYS)?);
            distributed &= m
                .use_distributed_optimizer
                .as_ref()
                .and_then(Setting::known)
                == Some(&true);
            for f in m.removed {
                if !removed.contains(&f) {
                    removed.push(f);
                }
            }
        }
        Ok(Degrees {
            tp: Value::of(&plan.tensor_parallel),
            pp: Value::of(&plan.pipeline_parallel),
            cp: Value::of(&cp),
            num_layers: Value::of(&plan.num_layers),
            num_attention_heads: Value::of(&plan.num_attention_heads),
            micro_batch: Value::of(&plan.micro_batch_size),
            global_batch: Value::of(&plan.global_batch_size),
            distributed_optimizer: distributed,
            precision: plan.precision,
            removed,
        })
    }

    /// TP × PP × CP, Megatron's `total_model_size`, when every degree is known.
    pub fn model_parallel(&self) -> Option<i64> {
        self.tp
            .degree()?
            .checked_mul(self.pp.degree()?)?
            .checked_mul(self.cp.degree()?)
    }

    /// DP = world / (TP × PP × CP), when it divides.
    pub fn data_parallel(&self, world: i64) -> Option<i64> {
        let mp = self.model_parallel()?;
        (world > 0 && world % mp == 0).then(|| world / mp)
    }

    /// `TP 8 × PP 1` (with `× CP n` only when context parallelism is on), for found values.
    pub fn describe_model_parallel(&self) -> String {
        let d = |v: &Value| v.degree().map_or_else(|| v.written(), |n| n.to_string());
        let mut s = format!("TP {} × PP {}", d(&self.tp), d(&self.pp));
        if self.cp != Value::Unset && self.cp.degree() != Some(1) {
            s.push_str(&format!(" × CP {}", d(&self.cp)));
        }
        s
    }
}
