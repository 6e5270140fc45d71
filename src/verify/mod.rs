//! Verifiers: each lab's `reads()` (what to fetch) and `judge()` (a pure function of what was
//! observed). The framework fetches, and [`run`] turns a judgement into a graded [`LabResult`].

mod context;
mod evidence;
mod lint;
mod outcome;
mod read;
mod run;

pub mod commands;
pub mod kit;
pub mod views;

pub use context::{JudgeCtx, Named, Params, Target, MISSING_HINT};
pub use evidence::Evidence;
pub use lint::lint_lab;
pub use outcome::{Advice, Judgement, Outcome, Reason, Status};
pub use read::{Read, Scope};
pub use run::{offline_gate, queries, run, LabResult, Score};

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
