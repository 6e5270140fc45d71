//! Lab 2's activation memory: what the first pipeline stage keeps for the backward pass, on top
//! of the weights, gradients and optimizer states `advise_memory` counts.
//!
//! Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
//! (arXiv:2205.05198), give the bytes one transformer layer keeps per micro-batch (s sequence
//! length, b micro-batch size, h hidden size, a attention heads, t tensor-parallel size):
//! - no recomputation: s·b·h·(10 + 24/t + 5·a·s/(h·t)); with sequence parallelism
//!   s·b·h/t·(34 + 5·a·s/h);
//! - selective recomputation (Megatron-LM `--recompute-activations`, the attention core):
//!   s·b·h·(10 + 24/t); with sequence parallelism 34·s·b·h/t;
//! - full recomputation (`--recompute-granularity full`): only each layer's input, 2·s·b·h
//!   (2·s·b·h/t with sequence parallelism).
//!
//! With the 1F1B schedule the first stage holds the activations of PP micro-batches at once
//! (of all of them when a step has fewer).

use crate::verify::kit::cmdline::{MegatronArgs, RecomputeGranularity, Setting};

/// The activation memory of the first pipeline stage, with what it is made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageActivations {
    /// Layers of one stage (num_layers / PP).
    pub layers: i64,
    /// Micro-batches the first stage holds at once.
    pub in_flight: i64,
    /// Bytes one layer keeps per micro-batch.
    pub per_layer: f64,
}

impl StageActivations {
    pub fn bytes(&self) -> f64 {
        self.per_layer * self.layers as f64 * self.in_flight as f64
    }

    /// From a Megatron-LM command line (`pretrain_gpt.py`'s arguments) and the data-parallel
    /// size; None when a size it needs is not written as a number.
    pub fn of(script_args: &[String], dp: i64) -> Option<StageActivations> {
        let m = MegatronArgs::from_argv(script_args).ok()?;
        let int = |s: &Option<Setting<i64>>| s.as_ref().and_then(|s| s.known().copied());
        let on = |s: &Option<Setting<bool>>| s.as_ref().and_then(|s| s.known().copied());
        let (l, h, a, s) = (
            int(&m.num_layers)?,
            int(&m.hidden_size)?,
            int(&m.num_attention_heads)?,
            int(&m.seq_length)?,
        );
        // Megatron-LM's defaults: micro-batch 1, TP 1, PP 1.
        let b = int(&m.micro_batch_size).unwrap_or(1);
        let t = int(&m.tensor_model_parallel_size).unwrap_or(1);
        let p = int(&m.pipeline_model_parallel_size).unwrap_or(1);
        if [l, h, a, s, b, t, p, dp].iter().any(|&x| x <= 0) || l % p != 0 {
            return None;
        }
        let micro_batches = match int(&m.global_batch_size) {
            Some(g) if g % (b * dp) == 0 => g / (b * dp),
            Some(_) => return None,
            // No global batch: one micro-batch per data-parallel rank and step.
            None => 1,
        };
        let sp = on(&m.sequence_parallel) == Some(true) && t > 1;
        let recompute = if on(&m.recompute_activations) == Some(true) {
            Some(RecomputeGranularity::Selective)
        } else {
            m.recompute_granularity
                .as_ref()
                .and_then(|g| g.known().cloned())
        };
        let (s, b, h, a, tf) = (s as f64, b as f64, h as f64, a as f64, t as f64);
        let per_layer = match (recompute, sp) {
            (Some(RecomputeGranularity::Full), true) => 2.0 * s * b * h / tf,
            (Some(RecomputeGranularity::Full), false) => 2.0 * s * b * h,
            (Some(RecomputeGranularity::Selective), true) => 34.0 * s * b * h / tf,
            (Some(RecomputeGranularity::Selective), false) => s * b * h * (10.0 + 24.0 / tf),
            (None, true) => s * b * h / tf * (34.0 + 5.0 * a * s / h),
            (None, false) => s * b * h * (10.0 + 24.0 / tf + 5.0 * a * s / (h * tf)),
        };
        Some(StageActivations {
            layers: l / p,
            in_flight: p.min(micro_batches),
            per_layer,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = [
            "--num-layers=96",
            "--hidden-size=13312",
            "--num-attention-heads=104",
            "--seq-length=2048",
            "--micro-batch-size=1",
            "--global-batch-size=512",
            "--tensor-model-parallel-size=8",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }

    #[test]
    fn the_quiz_layout_keeps_11_gb_on_its_first_stage() {
        // Sequence parallelism and selective recompute: 34·s·b·h/t = 115,867,648 bytes a layer.
        let a = StageActivations::of(
            &args(&[
                "--pipeline-model-parallel-size=4",
                "--sequence-parallel",
                "--recompute-activations",
            ]),
            2,
        )
        .unwrap();
        assert_eq!((a.layers, a.in_flight), (24, 4));
        assert_eq!(a.per_layer, 115_867_648.0);
        assert_eq!((a.bytes() / 1e8).round() / 10.0, 11.1);
    }

    #[test]
    fn full_recompute_keeps_only_each_layers_input() {
        let a = StageActivations::of(
            &args(&[
                "--pipeline-model-parallel-size=4",
                "--sequence-parallel",
                "--recompute-granularity=full",
            ]),
            2,
        )
        .unwrap();
        assert_eq!(a.per_layer, 2.0 * 2048.0 * 13312.0 / 8.0);
    }

    #[test]
    fn a_step_of_fewer_micro_batches_than_stages_holds_them_all() {
        let mut v = args(&["--pipeline-model-parallel-size=8"]);
        v.retain(|a| !a.starts_with("--global-batch-size"));
        v.push("--global-batch-size=4".into());
        let a = StageActivations::of(&v, 2).unwrap();
        assert_eq!(a.in_flight, 2);
    }

    #[test]
    fn a_size_not_written_as_a_number_gives_nothing() {
        let mut v = args(&["--pipeline-model-parallel-size=4"]);
        v.retain(|a| !a.starts_with("--hidden-size"));
        v.push("--hidden-size=$HIDDEN".into());
        assert_eq!(StageActivations::of(&v, 2), None);
    }
}
