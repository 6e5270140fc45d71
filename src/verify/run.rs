//! Grading one lab for one target: run the verifier's `judge()` and make the result complete and
//! honest — one outcome per check in lab.yaml, state checks skipped in static mode, missing
//! capabilities skipped with their install hint.

use crate::catalog::{LabBundle, Stage};
use crate::observe::{Observed, SourceKind, Unavailable};
use crate::profile::Profile;

use super::{Advice, JudgeCtx, Outcome, Params, Reason, Status, Target, Verifier};

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Score {
    pub passed_weight: u32,
    pub counted_weight: u32,
    /// passed / counted × 100, one decimal; 100 when nothing was counted.
    pub percent: f64,
}

/// A graded lab: outcomes in lab.yaml order. Texts are rendered by `report`.
#[derive(Debug, Clone)]
pub struct LabResult {
    pub lab: crate::catalog::Lab,
    pub source: SourceKind,
    pub source_detail: String,
    pub target: Target,
    pub profile: Option<Profile>,
    pub outcomes: Vec<Outcome>,
    pub advice: Vec<Advice>,
}

impl LabResult {
    pub fn score(&self) -> Score {
        let mut passed = 0;
        let mut counted = 0;
        for o in &self.outcomes {
            let w = self.lab.check(&o.check).map(|c| c.weight).unwrap_or(0);
            if o.status.is_counted() {
                counted += w;
            }
            if o.status == Status::Pass {
                passed += w;
            }
        }
        let percent = if counted == 0 {
            100.0
        } else {
            (passed as f64 * 1000.0 / counted as f64).round() / 10.0
        };
        Score {
            passed_weight: passed,
            counted_weight: counted,
            percent,
        }
    }

    pub fn count(&self, status: Status) -> usize {
        self.outcomes.iter().filter(|o| o.status == status).count()
    }
}

/// Capability detection results (live only): capability → why it is missing.
pub type MissingCapabilities = std::collections::BTreeMap<String, String>;

/// Grades one lab. `profile` overrides detection from the nodes.
pub fn run(
    bundle: &LabBundle,
    verifier: &dyn Verifier,
    obs: &Observed,
    target: &Target,
    overrides: &std::collections::BTreeMap<String, String>,
    profile: Option<Profile>,
    missing: &MissingCapabilities,
) -> Result<LabResult, crate::Error> {
    let lab = &bundle.lab;
    let nodes = JudgeCtx::nodes_of(obs).unwrap_or_default();
    let profile = profile.or_else(|| Profile::detect(&nodes));
    let params = Params {
        profile: lab.params(profile.unwrap_or(Profile::Kind).as_str()),
        overrides: overrides.clone(),
    };
    let ctx = JudgeCtx {
        lab,
        target,
        params: &params,
        source: obs.source,
        profile: profile.unwrap_or(Profile::Kind),
        nodes,
    };
    let judgement = verifier.judge(obs, &ctx)?;

    let mut outcomes = Vec::with_capacity(lab.checks.len());
    for check in &lab.checks {
        let from_verifier = judgement
            .outcomes
            .iter()
            .find(|o| o.check == check.id)
            .cloned();
        let missing_cap = check
            .capabilities
            .iter()
            .find_map(|c| missing.get(c).map(|why| (c, why)));
        let outcome = if check.stage == Stage::State && obs.source.is_static() {
            Outcome::skipped(
                &check.id,
                Reason::Unavailable(Unavailable::NeedsLiveCluster),
            )
        } else if let Some((cap, why)) = missing_cap {
            // A verifier's own environment error is more precise than "capability missing".
            match from_verifier {
                Some(o) if o.status == Status::Error => o,
                _ => Outcome::skipped(
                    &check.id,
                    Reason::MissingCapability {
                        capability: cap.clone(),
                        detail: why.clone(),
                    },
                ),
            }
        } else {
            from_verifier.unwrap_or_else(|| {
                Outcome::error(
                    &check.id,
                    Reason::Unavailable(Unavailable::Failed {
                        message: format!(
                            "internal: the {} verifier gave no outcome for this check",
                            lab.id
                        ),
                    }),
                )
            })
        };
        outcomes.push(outcome);
    }
    Ok(LabResult {
        lab: lab.clone(),
        source: obs.source,
        source_detail: obs.detail.clone(),
        target: target.clone(),
        profile,
        outcomes,
        advice: judgement.advice,
    })
}

/// Grades a lab from any `Observed` with its registered verifier (offline sources, tests).
pub fn grade_lab(
    bundle: &LabBundle,
    obs: &Observed,
    target: &Target,
    overrides: &std::collections::BTreeMap<String, String>,
    profile: Option<Profile>,
) -> Result<LabResult, crate::Error> {
    let verifier = super::verifier_for(&bundle.lab.id).ok_or_else(|| {
        crate::Error::Usage(format!(
            "lab {} ({}) is quiz-only: there is nothing to grade yet; try `trainlab quiz {}`",
            bundle.lab.number, bundle.lab.id, bundle.lab.number
        ))
    })?;
    run(
        bundle,
        verifier,
        obs,
        target,
        overrides,
        profile,
        &MissingCapabilities::new(),
    )
}
