//! Lab `mpijob-slots`: verifier (being written).

use super::{JudgeCtx, Judgement, Target, Verifier};
use crate::observe::{InputError, Observed, Query};

pub struct MpijobSlots;

impl Verifier for MpijobSlots {
    fn lab_id(&self) -> &'static str {
        "mpijob-slots"
    }
    fn check_ids(&self) -> &'static [&'static str] {
        &[]
    }
    fn reads(&self, _target: &Target) -> Vec<Query> {
        Vec::new()
    }
    fn judge(&self, _obs: &Observed, _ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        Ok(Judgement::default())
    }
}
