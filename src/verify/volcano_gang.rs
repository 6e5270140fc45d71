//! Lab `volcano-gang`: verifier (being written).

use super::{JudgeCtx, Judgement, Target, Verifier};
use crate::observe::{InputError, Observed, Query};

pub struct VolcanoGang;

impl Verifier for VolcanoGang {
    fn lab_id(&self) -> &'static str {
        "volcano-gang"
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
