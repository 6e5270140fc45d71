//! Which verifier grades which lab. A new lab adds one module and one line here.

use super::Verifier;

pub static VERIFIERS: &[&dyn Verifier] = &[
    &super::efa_nccl::EfaNccl,
    &super::volcano_gang::VolcanoGang,
    &super::mpijob_slots::MpijobSlots,
    &super::karpenter_single_az::KarpenterSingleAz,
];

pub fn verifier_for(lab_id: &str) -> Option<&'static dyn Verifier> {
    VERIFIERS.iter().copied().find(|v| v.lab_id() == lab_id)
}
