//! The labs: one folder per lab holding its verifier (`mod.rs`: what it reads and how it judges)
//! and the rules only that lab uses. Rules two or more labs use live in the kit
//! ([`crate::verify::kit`]); the text, manifests and parameters live in `labs/<NN>-<id>/`.

use crate::catalog::LabBundle;
use crate::facts::capabilities;
use crate::facts::Profile;
use crate::observe::Observed;
use crate::verify::{offline_gate, queries, run, LabResult, Target, Verifier};

/// Declares each lab's verifier module and registers its verifier: one line per lab.
macro_rules! registry {
    ($($module:ident :: $verifier:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every registered verifier, in lab order.
        pub static VERIFIERS: &[&dyn Verifier] = &[$(&$module::$verifier),*];
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

/// Whether a lab can be graded: it has a task, checks and a registered verifier.
pub fn is_gradable(lab: &crate::catalog::Lab) -> bool {
    lab.is_gradable() && verifier_for(&lab.id).is_some()
}

/// The verifier that grades `lab_id`, if the lab is gradable.
pub fn verifier_for(lab_id: &str) -> Option<&'static dyn crate::verify::Verifier> {
    VERIFIERS.iter().copied().find(|v| v.lab_id() == lab_id)
}

/// The error for a quiz-only lab named where a gradable one is needed: nothing to grade, what
/// to run instead.
pub fn quiz_only(b: &LabBundle) -> crate::Error {
    let (n, id) = (b.lab.number, &b.lab.id);
    crate::Error::usage(
        format!("lab {n}（{id}）はクイズのみで、まだ採点する課題がありません。`trainlab quiz {n}` を試してください。採点できる lab は `trainlab list` で確認できます"),
        format!("lab {n} ({id}) is quiz-only: it has no task to grade yet. Try `trainlab quiz {n}`; `trainlab list` shows the gradable labs"),
    )
}

/// Grades a lab from an offline `Observed` with its registered verifier (tests, `lint`). The
/// observation answers only the verifier's declared reads, as every source does in a real run.
pub fn grade_lab(
    bundle: &LabBundle,
    obs: &Observed,
    target: &Target,
    overrides: &std::collections::BTreeMap<String, String>,
    profile: Option<Profile>,
) -> Result<LabResult, crate::Error> {
    let verifier = verifier_for(&bundle.lab.id).ok_or_else(|| quiz_only(bundle))?;
    let obs = obs.clone().planned(queries(verifier, target));
    // As `plan::run` does offline: a saved kind cluster cannot have run what kind lacks.
    let wanted = capabilities::named(bundle.lab.capability_names());
    let caps = offline_gate(&obs, profile, &wanted);
    run(
        bundle,
        verifier,
        &obs,
        &crate::facts::ClusterNodes::of(&obs),
        target,
        overrides,
        profile,
        caps.as_ref(),
    )
}
