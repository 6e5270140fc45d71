//! Training-framework settings read from a script's arguments, one framework per file:
//! `megatron` (Megatron-LM flags), `hydra` (Hydra `key=value` overrides) and `nemo` (NeMo's
//! settings among them), `hf_trainer` (Hugging Face `TrainingArguments`, with optimum-neuron's
//! `NeuronTrainingArguments` additions), `deepspeed_arg` (the DeepSpeed config a script is
//! given), `precision` (the training precision and Lightning's strings for it), and
//! `parallel_plan` ([`ParallelPlan`], which merges them and a DeepSpeed config into one
//! parallelism/precision view that keeps every source).

mod deepspeed_arg;
mod hf_trainer;
mod hydra;
mod megatron;
mod nemo;
mod parallel_plan;
mod precision;

pub use deepspeed_arg::deepspeed_config_arg;
pub use hf_trainer::{HfTrainingArgs, SaveSteps, SaveStrategy};
pub use hydra::{Override, OverrideKind, Overrides};
pub use megatron::{
    is_megatron_entry, MegatronArgs, RecomputeGranularity, RecomputeMethod, RemovedFlag,
};
pub use nemo::{Devices, NemoArgs};
pub use parallel_plan::{Merged, MergedState, ParallelPlan};
pub use precision::Precision;
