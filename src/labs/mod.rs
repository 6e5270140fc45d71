//! The labs: one folder per lab holding its verifier (`mod.rs`: what it reads and how it judges)
//! and the rules only that lab uses. Rules two or more labs use live in the kit
//! ([`crate::verify::kit`]); the text, manifests and parameters live in `labs/<NN>-<id>/`.

/// Declares each lab's verifier module and registers its verifier: one line per lab.
macro_rules! registry {
    ($($module:ident :: $verifier:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every registered verifier, in lab order.
        pub static VERIFIERS: &[&dyn crate::verify::Verifier] = &[$(&$module::$verifier),*];
    };
}

// The lab registry: a new lab adds one line here (and its folder beside this file).
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
pub fn verifier_for(lab_id: &str) -> Option<&'static dyn crate::verify::Verifier> {
    VERIFIERS.iter().copied().find(|v| v.lab_id() == lab_id)
}
