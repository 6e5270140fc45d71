//! Reports: a graded [`LabResult`](crate::verify::LabResult) rendered into one language, then
//! printed as human text, JSON (schema in `docs/report-schema.md`) or JUnit XML.

pub mod human;
pub mod json;
pub mod junit;
pub(crate) mod messages;
// The room's outputs (`grade`): table, JSON and JUnit; CSV; the HTML scoreboard.
mod board;
pub mod cells;
pub mod csv;
mod escape;
pub mod fit;
pub mod heatmap;
pub mod html;
mod live_page;
pub mod room;
pub mod server;

use serde::Serialize;

use crate::catalog::Stage;
use crate::text::Lang;
use crate::verify::{LabResult, Score, Status, Target};

pub use board::{
    write_json_streamed, Cell, CheckRef, Column, Failing, Mark, Row, Scoreboard,
    ROOM_SCHEMA_VERSION,
};
pub use messages::{reason_text, ui};

/// Bumped on any incompatible change to the JSON output.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize)]
pub struct LabRef {
    pub id: String,
    pub number: u32,
    pub title: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceRef {
    pub kind: &'static str,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutcomeReport {
    pub check: String,
    pub status: Status,
    pub stage: Stage,
    pub weight: u32,
    pub title: String,
    /// What to change; present on failures only.
    pub hint: Option<String>,
    pub expected: Option<String>,
    pub found: Option<String>,
    /// Why a check was skipped, errored or is pending.
    pub reason: Option<String>,
    pub evidence: crate::verify::Evidence,
    /// The failure is "the object the lab is about is missing": human output says it once.
    #[serde(skip)]
    pub missing: bool,
    /// What human output says instead of `reason`, when it says the reason once above the
    /// checks (a refusal of `--dry-run=server` attached to several checks).
    #[serde(skip)]
    pub human_reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AdviceReport {
    pub id: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Counts {
    pub pass: usize,
    pub fail: usize,
    pub pending: usize,
    pub skipped: usize,
    pub error: usize,
}

/// One lab's report, rendered in one language: the JSON object of [`SCHEMA_VERSION`].
#[derive(Debug, Clone, Serialize)]
pub struct LabReport {
    pub schema_version: u32,
    pub lab: LabRef,
    pub lang: Lang,
    pub source: SourceRef,
    pub target: Target,
    pub profile: Option<&'static str>,
    pub score: Score,
    /// What a snapshot lacked of what this lab reads (then the lab is not graded).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_saved: Vec<String>,
    pub counts: Counts,
    pub outcomes: Vec<OutcomeReport>,
    pub advice: Vec<AdviceReport>,
    /// `--dry-run=server`: what the API server said of the files (see [`server`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_dry_run: Option<server::ServerReport>,
}

impl LabReport {
    pub fn new(r: &LabResult, lang: Lang) -> LabReport {
        let lab = &r.lab;
        let outcomes = r
            .outcomes
            .iter()
            .map(|o| {
                let check = lab
                    .check(&o.check)
                    .expect("run() yields lab.yaml checks only");
                let hint = (o.status == Status::Fail).then(|| {
                    lab.hint_text(check, o.hint.as_deref())
                        .render(lang, &o.evidence)
                });
                OutcomeReport {
                    check: o.check.clone(),
                    status: o.status,
                    stage: check.stage,
                    weight: check.weight,
                    title: check.title.render(lang, &o.evidence),
                    hint,
                    expected: o
                        .expected
                        .as_deref()
                        .map(|v| messages::value_words(v, lang)),
                    found: o.found.as_deref().map(|v| messages::value_words(v, lang)),
                    reason: o
                        .reason
                        .as_ref()
                        .map(|why| reason_text(why, lab, &o.evidence, lang)),
                    evidence: o.evidence.clone(),
                    missing: o.is_missing_object(),
                    human_reason: None,
                }
            })
            .collect();
        let advice = r
            .advice
            .iter()
            .map(|a| AdviceReport {
                id: a.id.clone(),
                text: lab
                    .advice
                    .get(&a.id)
                    .map(|t| t.render(lang, &a.evidence))
                    .unwrap_or_else(|| a.id.clone()),
            })
            .collect();
        LabReport {
            schema_version: SCHEMA_VERSION,
            lab: LabRef {
                id: lab.id.clone(),
                number: lab.number,
                title: lab.title.get(lang).to_string(),
            },
            lang,
            source: SourceRef {
                kind: r.source.as_str(),
                detail: r.source_detail.clone(),
            },
            target: r.target.clone(),
            profile: r.profile.map(|p| p.as_str()),
            score: r.score(),
            not_saved: r
                .missing_from_snapshot()
                .into_iter()
                .map(str::to_string)
                .collect(),
            counts: Counts {
                pass: r.count(Status::Pass),
                fail: r.count(Status::Fail),
                pending: r.count(Status::Pending),
                skipped: r.count(Status::Skipped),
                error: r.count(Status::Error),
            },
            outcomes,
            advice,
            server_dry_run: None,
        }
    }
}

/// Output formats of `check` and `grade`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Coloured text for people.
    Human,
    /// JSON, schema version 2 (docs/report-schema.md).
    Json,
    /// JUnit XML: a testsuite per lab, a testcase per check.
    Junit,
}

/// Renders reports in the chosen format.
pub fn render(reports: &[LabReport], format: Format, color: bool) -> String {
    match format {
        Format::Human => human::render_all(reports, color),
        Format::Json => json::render_all(reports),
        Format::Junit => junit::render_all(reports),
    }
}

/// Whether to colour human output: a terminal that is not `TERM=dumb`, and `NO_COLOR` unset or
/// empty (no-color.org).
pub fn color_enabled() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    // A terminal that declares it cannot show escapes gets none.
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    !no_color && !dumb && std::io::stdout().is_terminal()
}
