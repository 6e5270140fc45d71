//! The scoreboard: a graded room rendered into one language — learners × labs, each cell with
//! its score, its mark and the learner's outcomes — plus the checks the room fails most. Every
//! room output (table, JSON, JUnit, CSV, HTML) renders this one structure.

use std::collections::HashMap;

use serde::Serialize;

use super::{LabRef, LabReport, SourceRef};
use crate::results::room::{LearnerResult, RoomNote, RoomResult};
use crate::text::Lang;
use crate::verify::{Score, Status};

/// Bumped on any incompatible change to the room's JSON (`grade -o json`).
pub const ROOM_SCHEMA_VERSION: u32 = 1;

/// How a cell reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    /// Every counted check passed.
    Done,
    /// Nothing failed, some checks wait for the cluster.
    Pending,
    /// Some passed, some failed.
    Partial,
    /// Counted checks, none passed.
    Failing,
    /// The object the lab is about does not exist yet: every failure is "missing".
    NotStarted,
    /// Nothing could be counted (every check skipped).
    NotGraded,
    /// The environment failed (a check errored, or the learner's cluster could not be read).
    Error,
}

impl Mark {
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Done => "done",
            Mark::Pending => "pending",
            Mark::Partial => "partial",
            Mark::Failing => "failing",
            Mark::NotStarted => "not-started",
            Mark::NotGraded => "not-graded",
            Mark::Error => "error",
        }
    }

    /// One character for tables.
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Done => "✔",
            Mark::Pending => "…",
            Mark::Partial => "◐",
            Mark::Failing => "✘",
            Mark::NotStarted => "·",
            Mark::NotGraded => "–",
            Mark::Error => "!",
        }
    }

    /// The legend, in order.
    pub const ALL: [Mark; 7] = [
        Mark::Done,
        Mark::Pending,
        Mark::Partial,
        Mark::Failing,
        Mark::NotStarted,
        Mark::NotGraded,
        Mark::Error,
    ];

    pub fn label(self, lang: Lang) -> &'static str {
        let (ja, en) = match self {
            Mark::Done => ("完了", "done"),
            Mark::Pending => ("待機中", "pending"),
            Mark::Partial => ("一部合格", "partial"),
            Mark::Failing => ("不合格", "failing"),
            Mark::NotStarted => ("未着手", "not started"),
            Mark::NotGraded => ("採点なし", "not graded"),
            Mark::Error => ("エラー", "error"),
        };
        match lang {
            Lang::Ja => ja,
            Lang::En => en,
        }
    }

    fn of(r: &LabReport) -> Mark {
        let c = &r.counts;
        if c.error > 0 {
            Mark::Error
        } else if r.score.percent.is_none() {
            Mark::NotGraded
        } else if c.fail > 0
            && c.pass == 0
            && r.outcomes
                .iter()
                .all(|o| o.status != Status::Fail || o.missing)
        {
            Mark::NotStarted
        } else if c.fail == 0 && c.pending == 0 {
            Mark::Done
        } else if c.fail == 0 {
            Mark::Pending
        } else if c.pass > 0 {
            Mark::Partial
        } else {
            Mark::Failing
        }
    }
}

/// One learner's lab.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// `learner/lab`: stable across runs.
    pub id: String,
    pub lab: String,
    pub mark: Mark,
    /// None when the learner's cluster could not be read at all.
    pub score: Option<Score>,
    pub report: Option<LabReport>,
}

/// One learner: a row of the board.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The learner's name (or kube context): stable across runs.
    pub id: String,
    pub learner: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Why this learner could not be graded at all (their cluster did not answer).
    pub error: Option<String>,
    /// Weights over every lab: passed / counted.
    pub score: Score,
    pub cells: Vec<Cell>,
}

/// A check of a lab (the board's column detail).
#[derive(Debug, Clone, Serialize)]
pub struct CheckRef {
    pub id: String,
    pub title: String,
    pub weight: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Column {
    #[serde(flatten)]
    pub lab: LabRef,
    pub checks: Vec<CheckRef>,
}

/// A check the room fails, with who fails it.
#[derive(Debug, Clone, Serialize)]
pub struct Failing {
    /// `lab/check`.
    pub id: String,
    pub lab: String,
    pub check: String,
    pub title: String,
    /// Learners failing it, and learners for whom it was counted.
    pub failed: usize,
    pub counted: usize,
    pub learners: Vec<String>,
}

/// The whole room in one language.
#[derive(Debug, Clone, Serialize)]
pub struct Scoreboard {
    pub schema_version: u32,
    pub lang: Lang,
    pub source: SourceRef,
    /// When the room was read (RFC 3339, UTC).
    pub graded_at: String,
    pub namespace_template: Option<String>,
    pub labs: Vec<Column>,
    pub learners: Vec<Row>,
    /// The room's passed / counted weights and percent.
    pub score: Score,
    /// Checks failed by at least one learner, most failed first.
    pub most_failed: Vec<Failing>,
    /// What the room should know about how it was read (per-namespace fallbacks, …).
    pub notes: Vec<String>,
}

fn sum(scores: impl Iterator<Item = Score>) -> Score {
    let (mut passed, mut counted) = (0, 0);
    for s in scores {
        passed += s.passed_weight;
        counted += s.counted_weight;
    }
    Score {
        passed_weight: passed,
        counted_weight: counted,
        percent: (counted > 0).then(|| (passed as f64 * 1000.0 / counted as f64).round() / 10.0),
    }
}

impl Scoreboard {
    pub fn new(room: &RoomResult, lang: Lang) -> Scoreboard {
        Scoreboard::build(room, room.learners.iter(), lang)
    }

    /// [`Scoreboard::new`], dropping each learner's results as soon as their row is made: a
    /// room of a thousand learners never holds its results and its board whole at once.
    pub fn from_room(mut room: RoomResult, lang: Lang) -> Scoreboard {
        let learners = std::mem::take(&mut room.learners);
        Scoreboard::build(&room, learners.into_iter(), lang)
    }

    fn build<L: std::borrow::Borrow<LearnerResult>>(
        room: &RoomResult,
        learners: impl Iterator<Item = L>,
        lang: Lang,
    ) -> Scoreboard {
        let labs: Vec<Column> = room
            .labs
            .iter()
            .map(|l| Column {
                lab: LabRef {
                    id: l.id.clone(),
                    number: l.number,
                    title: l.title.get(lang).to_string(),
                },
                checks: l
                    .checks
                    .iter()
                    .map(|c| CheckRef {
                        id: c.id.clone(),
                        title: c.title.get(lang).to_string(),
                        weight: c.weight,
                    })
                    .collect(),
            })
            .collect();
        let learners: Vec<Row> = learners.map(|l| row(l.borrow(), &labs, lang)).collect();
        let score = sum(learners.iter().map(|r| r.score));
        let most_failed = most_failed(&learners, &labs);
        Scoreboard {
            schema_version: ROOM_SCHEMA_VERSION,
            lang,
            source: SourceRef {
                kind: room.source.as_str(),
                detail: room.source_detail.clone(),
            },
            graded_at: humantime::format_rfc3339_seconds(room.graded_at).to_string(),
            namespace_template: room.template.clone(),
            labs,
            learners,
            score,
            most_failed,
            notes: room.notes.iter().map(|n| n.text(lang)).collect(),
        }
    }

    /// The board after some learners were judged again (a live room's change): the rows of
    /// `learners` are made anew from `room`, a learner new to the room gets a row, one no
    /// longer in it loses theirs, every other row is kept as it is; then the room's score,
    /// summary, time and notes are those of `room`.
    pub fn update(&mut self, room: &RoomResult, learners: &[&str]) {
        let mut kept: HashMap<String, Row> = std::mem::take(&mut self.learners)
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect();
        self.learners = room
            .learners
            .iter()
            .map(|l| match kept.remove(&l.name) {
                Some(row) if !learners.contains(&l.name.as_str()) => row,
                _ => row(l, &self.labs, self.lang),
            })
            .collect();
        self.score = sum(self.learners.iter().map(|r| r.score));
        self.most_failed = most_failed(&self.learners, &self.labs);
        self.graded_at = humantime::format_rfc3339_seconds(room.graded_at).to_string();
        self.notes = room.notes.iter().map(|n| n.text(self.lang)).collect();
    }

    /// The cell of a learner and lab.
    pub fn cell(&self, learner: &str, lab: &str) -> Option<&Cell> {
        self.learners
            .iter()
            .find(|r| r.id == learner)?
            .cells
            .iter()
            .find(|c| c.lab == lab)
    }
}

fn row(l: &LearnerResult, labs: &[Column], lang: Lang) -> Row {
    let cells: Vec<Cell> = match &l.results {
        Ok(results) => labs
            .iter()
            .map(|col| {
                let r = results.iter().find(|r| r.lab.id == col.lab.id);
                let report = r.map(|r| LabReport::new(r, lang));
                Cell {
                    id: format!("{}/{}", l.name, col.lab.id),
                    lab: col.lab.id.clone(),
                    mark: report.as_ref().map(Mark::of).unwrap_or(Mark::Error),
                    score: report.as_ref().map(|r| r.score),
                    report,
                }
            })
            .collect(),
        Err(_) => labs
            .iter()
            .map(|col| Cell {
                id: format!("{}/{}", l.name, col.lab.id),
                lab: col.lab.id.clone(),
                mark: Mark::Error,
                score: None,
                report: None,
            })
            .collect(),
    };
    Row {
        id: l.name.clone(),
        learner: l.name.clone(),
        context: l.context.clone(),
        error: l.results.as_ref().err().cloned(),
        score: sum(cells.iter().filter_map(|c| c.score)),
        cells,
    }
}

fn most_failed(rows: &[Row], labs: &[Column]) -> Vec<Failing> {
    let mut out = Vec::new();
    for col in labs {
        for check in &col.checks {
            let mut failed = Vec::new();
            let mut counted = 0;
            for r in rows {
                let Some(rep) = r
                    .cells
                    .iter()
                    .find(|c| c.lab == col.lab.id)
                    .and_then(|c| c.report.as_ref())
                else {
                    continue;
                };
                let Some(o) = rep.outcomes.iter().find(|o| o.check == check.id) else {
                    continue;
                };
                // A learner who has not created the lab's object yet is not started, not
                // wrong: only real mistakes make the room's summary.
                if o.missing {
                    continue;
                }
                if o.status.is_counted() {
                    counted += 1;
                }
                if o.status == Status::Fail {
                    failed.push(r.learner.clone());
                }
            }
            if !failed.is_empty() {
                out.push(Failing {
                    id: format!("{}/{}", col.lab.id, check.id),
                    lab: col.lab.id.clone(),
                    check: check.id.clone(),
                    title: check.title.clone(),
                    failed: failed.len(),
                    counted,
                    learners: failed,
                });
            }
        }
    }
    // Most failed first; ties keep lab and check order (a stable sort).
    out.sort_by_key(|f| std::cmp::Reverse(f.failed));
    out
}

impl RoomNote {
    pub fn text(&self, lang: Lang) -> String {
        let ja = lang == Lang::Ja;
        match self {
            RoomNote::PerNamespace(p) if ja => format!(
                "{}: クラスター全体の list が RBAC で拒否されたため、namespace ごとに読みました（{} 個）。拒否の内容: {}",
                p.resource, p.namespaces, p.message
            ),
            RoomNote::PerNamespace(p) => format!(
                "{}: listing them cluster-wide is forbidden by RBAC, so they were read namespace by namespace ({} namespaces). The refusal: {}",
                p.resource, p.namespaces, p.message
            ),
            RoomNote::SecretsWithheld { checks } if ja => format!(
                "Secret は読みません（RBAC ではメタデータだけの読み取りを許可できないため、採点用のロールは Secret に権限を持ちません）。スキップしたチェック: {}",
                checks.join(", ")
            ),
            RoomNote::SecretsWithheld { checks } => format!(
                "Secrets are not read (RBAC cannot grant metadata-only reads, so the grader's role has no permission on Secrets); skipped: {}",
                checks.join(", ")
            ),
            RoomNote::NoLearners { selector, template } if ja => format!(
                "ラベル {selector} の namespace のうち、テンプレート {template} に合うものがありません"
            ),
            RoomNote::NoLearners { selector, template } => format!(
                "no namespace labelled {selector} matches the template {template} for the labs graded"
            ),
        }
    }
}
