//! Lab `karpenter-single-az`: verifier (being written).

use super::{JudgeCtx, Judgement, Target, Verifier};
use crate::observe::{InputError, Observed, Query};

pub struct KarpenterSingleAz;

impl Verifier for KarpenterSingleAz {
    fn lab_id(&self) -> &'static str {
        "karpenter-single-az"
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
