//! Grading one lab for one target: run the verifier's `judge()` and make the result complete and
//! honest — one outcome per check in lab.yaml, state checks skipped in static mode, checks whose
//! capability is missing skipped with the install command, and a lab with nothing counted
//! reported as not graded (never 100 %).

use crate::catalog::{LabBundle, Stage, SITE_TOKEN};
use crate::facts::capabilities::{self, Capabilities, Capability};
use crate::facts::{ClusterNodes, Profile};
use crate::observe::{Observed, Query, SourceKind, Unavailable};

use super::{Advice, JudgeCtx, Outcome, Params, Reason, Status, Target, Verifier};

/// What an offline observation gates, as a live run gates by discovery: a saved cluster holds no
/// discovery, but a kind cluster (the profile given, or detected from the saved nodes) can never
/// have run what the kind profile cannot provide (the Karpenter controller, FSx). Nothing is
/// gated in static mode or on other profiles.
pub fn offline_gate(
    obs: &Observed,
    profile: Option<Profile>,
    wanted: &[&'static Capability],
) -> Option<Capabilities> {
    if obs.source.is_static() {
        return None;
    }
    let nodes = JudgeCtx::nodes_of(obs).unwrap_or_default();
    (profile.or_else(|| Profile::detect(&nodes)) == Some(Profile::Kind))
        .then(|| capabilities::absent_on_kind(wanted))
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Score {
    pub passed_weight: u32,
    pub counted_weight: u32,
    /// passed / counted × 100, one decimal; None (JSON `null`) when nothing was counted: the lab
    /// was not graded, which is not 100 %.
    pub percent: Option<f64>,
}

impl Score {
    /// Whether any check was counted.
    pub fn graded(&self) -> bool {
        self.counted_weight > 0
    }
}

/// A graded lab: outcomes in lab.yaml order. Texts are rendered by `report`.
#[derive(Debug, Clone)]
pub struct LabResult {
    /// The catalog's lab, shared (a room holds hundreds of results of the same lab).
    pub lab: std::sync::Arc<crate::catalog::Lab>,
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
        // A snapshot that lacks a kind the lab reads leaves its checks unjudged: whatever the
        // others scored, the lab is not graded, never 100 %.
        let percent = (counted > 0 && self.missing_from_snapshot().is_empty())
            .then(|| (passed as f64 * 1000.0 / counted as f64).round() / 10.0);
        Score {
            passed_weight: passed,
            counted_weight: counted,
            percent,
        }
    }

    /// The resources a snapshot did not save although a check of this lab needed them.
    pub fn missing_from_snapshot(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .outcomes
            .iter()
            .filter_map(|o| match &o.reason {
                Some(Reason::Unavailable(Unavailable::NotCaptured { resource })) => {
                    Some(resource.as_str())
                }
                _ => None,
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn count(&self, status: Status) -> usize {
        self.outcomes.iter().filter(|o| o.status == status).count()
    }

    /// The environment kept part of this lab from being graded: a check errored, or was skipped
    /// for a capability the cluster could have but lacks.
    pub fn environment_incomplete(&self) -> bool {
        !self.missing_from_snapshot().is_empty()
            || self.outcomes.iter().any(|o| {
                o.status == Status::Error
                    || matches!(
                        &o.reason,
                        Some(Reason::MissingCapability {
                            installable: true,
                            ..
                        })
                    )
            })
    }
}

/// The queries grading `verifier` for `target` needs: its declared reads plus the nodes the
/// framework always reads (profile detection, placement).
pub fn queries(verifier: &dyn Verifier, target: &Target) -> Vec<Query> {
    let mut out = vec![Query::cluster(&crate::observe::kinds::NODES)];
    out.extend(verifier.reads().iter().map(|r| r.query(target)));
    out
}

/// The lab's parameters for one run: the profile's values from lab.yaml under `overrides`
/// (`--param`, and on a cluster `setup eks` prepared, the site file's values beneath them: the
/// caller merges those, `plan::params_with_site`). A lab.yaml value written `${site.KEY}` stands
/// for the site's value, which `overrides` carries when it is known; it is never a value itself,
/// so it is left out (a check then grades without it, as without a `--param`).
fn params_for(
    bundle: &LabBundle,
    profile: Option<Profile>,
    overrides: &std::collections::BTreeMap<String, String>,
    is_static: bool,
) -> Params {
    let mut defaults = bundle.lab.params(profile.unwrap_or(Profile::Kind).as_str());
    defaults.retain(|_, v| !v.contains(SITE_TOKEN));
    Params {
        profile: defaults,
        overrides: overrides.clone(),
        profile_stands_for_cluster: is_static && profile.is_some(),
    }
}

/// Grades one lab. `profile` overrides detection from the nodes; `nodes` are `obs`'s, decoded
/// once for every lab the round judges (`ClusterNodes::of(obs)`).
#[allow(clippy::too_many_arguments)]
pub fn run(
    bundle: &LabBundle,
    verifier: &dyn Verifier,
    obs: &Observed,
    nodes: &ClusterNodes<'_>,
    target: &Target,
    overrides: &std::collections::BTreeMap<String, String>,
    profile: Option<Profile>,
    capabilities: Option<&Capabilities>,
) -> Result<LabResult, crate::Error> {
    let lab = &bundle.lab;
    let profile = profile.or_else(|| nodes.profile());
    let params = params_for(bundle, profile, overrides, obs.source.is_static());
    let ctx = JudgeCtx {
        lab,
        target,
        params: &params,
        source: obs.source,
        profile: profile.unwrap_or(Profile::Kind),
        nodes,
        obs,
        declared: verifier.reads(),
    };
    let judgement = verifier.judge(&ctx)?;
    // Moved, not copied, into the result: a room keeps thousands of them.
    let mut judged: Vec<Option<Outcome>> = judgement.outcomes.into_iter().map(Some).collect();

    let mut outcomes = Vec::with_capacity(lab.checks.len());
    for check in &lab.checks {
        let from_verifier = judged
            .iter_mut()
            .find(|o| o.as_ref().is_some_and(|o| o.check == check.id))
            .and_then(Option::take);
        // A spec check needs the capability's API; a state check needs its controller too.
        let missing_cap = capabilities.and_then(|caps| {
            check.capabilities.iter().find_map(|c| {
                let d = caps.get(c.as_str())?;
                let ok = match check.stage {
                    Stage::Spec => d.api,
                    Stage::State => d.present(),
                };
                (!ok).then_some(d)
            })
        });
        let outcome = if check.stage == Stage::State && obs.source.is_static() {
            Outcome::skipped(
                &check.id,
                Reason::Unavailable(Unavailable::NeedsLiveCluster),
            )
        } else if let Some(d) = missing_cap {
            // A verifier's own environment error is more precise than "capability missing".
            match from_verifier {
                Some(o) if o.status == Status::Error => o,
                _ => Outcome::skipped(
                    &check.id,
                    Reason::MissingCapability {
                        capability: d.name.to_string(),
                        seen: d.seen.clone(),
                        profile: d.profile,
                        installable: d.installable,
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
        lab: std::sync::Arc::clone(lab),
        source: obs.source,
        source_detail: obs.detail.clone(),
        target: target.clone(),
        profile,
        outcomes,
        advice: judgement.advice,
    })
}
