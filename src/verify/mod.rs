//! Verifiers: each lab's `reads()` (what to fetch) and `judge()` (a pure function of what was
//! observed). The framework fetches, and [`run`] turns a judgement into a graded [`LabResult`].

mod context;
mod evidence;
mod lint;
mod outcome;
mod read;
mod run;

/// Declares each lab's verifier module and registers its verifier: one line per lab.
macro_rules! registry {
    ($($module:ident :: $verifier:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every registered verifier, in lab order.
        pub static VERIFIERS: &[&dyn Verifier] = &[$(&$module::$verifier),*];
    };
}

// The lab registry: a new lab adds one line here (and its module file beside this one).
registry! {
    tensor_parallelism::TensorParallelism,
    parallelism_3d::Parallelism3d,
    slurm_accounting::SlurmAccounting,
    slinky_nodeset::SlinkyNodeset,
    efa_nccl::EfaNccl,
    bionemo::Bionemo,
    optimum_neuron::OptimumNeuron,
    fsx_lustre::FsxLustre,
    volcano_gang::VolcanoGang,
    bf16::Bf16,
    gradient_checkpointing::GradientCheckpointing,
    zero3_offload::Zero3Offload,
    mpijob_slots::MpijobSlots,
    checkpoint_strategy::CheckpointStrategy,
    karpenter_single_az::KarpenterSingleAz,
}

/// The verifier that grades `lab_id`, if the lab is gradable.
pub fn verifier_for(lab_id: &str) -> Option<&'static dyn Verifier> {
    VERIFIERS.iter().copied().find(|v| v.lab_id() == lab_id)
}

pub mod commands;
pub mod kit;
pub mod views;

pub use context::{JudgeCtx, Named, Params, Target, MISSING_HINT};
pub use evidence::Evidence;
pub use lint::lint_lab;
pub use outcome::{Advice, Judgement, Outcome, Reason, Status};
pub use read::{Read, Scope};
pub use run::{grade_lab, queries, run, LabResult, Score};

use crate::observe::InputError;

/// One lab's grading logic. `judge` must not do I/O: everything it needs comes from `reads`.
pub trait Verifier: Sync {
    /// The lab id this verifier grades (matches `lab.yaml`).
    fn lab_id(&self) -> &'static str;
    /// Exactly the check ids in `lab.yaml`, in order (`lint` compares them).
    fn check_ids(&self) -> &'static [&'static str];
    /// What to read, declared once; `judge` looks reads up by the same declaration
    /// ([`JudgeCtx::list`]). Nodes are always read by the framework (profile detection).
    fn reads(&self) -> &'static [&'static Read];
    /// Judges the observed state. An object of the wrong shape is an [`InputError`] (exit 2),
    /// never a learner fail.
    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError>;
}
