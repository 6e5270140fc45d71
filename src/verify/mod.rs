//! Verifiers: each lab's `reads()` (what to fetch) and `judge()` (a pure function of what was
//! observed). The framework fetches, and [`run`] turns a judgement into a graded [`LabResult`].

mod context;
mod efa_nccl;
mod karpenter_single_az;
mod mpijob_slots;
mod outcome;
mod registry;
mod run;
mod volcano_gang;

pub mod views;

pub use context::{JudgeCtx, Params, Target};
pub use outcome::{Advice, Judgement, Outcome, Reason, Status};
pub use registry::{verifier_for, VERIFIERS};
pub use run::{grade_lab, run, LabResult, MissingCapabilities, Score};

use crate::observe::{InputError, Observed, Query};

/// One lab's grading logic. `judge` must not do I/O: everything it needs comes from `reads`.
pub trait Verifier: Sync {
    /// The lab id this verifier grades (matches `lab.yaml`).
    fn lab_id(&self) -> &'static str;
    /// Exactly the check ids in `lab.yaml`, in order (`lint` compares them).
    fn check_ids(&self) -> &'static [&'static str];
    /// What to read for one target. Nodes are always read by the framework (profile detection).
    fn reads(&self, target: &Target) -> Vec<Query>;
    /// Judges the observed state. An object of the wrong shape is an [`InputError`] (exit 2),
    /// never a learner fail.
    fn judge(&self, obs: &Observed, ctx: &JudgeCtx) -> Result<Judgement, InputError>;
}
