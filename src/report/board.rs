//! The scoreboard: a graded room rendered into one language — learners × labs, each cell with
//! its score, its mark and the learner's outcomes — plus the checks the room fails most. Every
//! room output (table, JSON, JUnit, CSV, HTML) renders this one structure.

use std::collections::HashMap;

use serde::Serialize;

use super::{Counts, LabRef, LabReport, SourceRef};
use crate::results::packed::PackedLabs;
use crate::results::room::{LearnerResult, RoomNote, RoomResult};
use crate::text::Lang;
use crate::verify::{LabResult, Score, Status};

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

    /// The mark of a lab scored `percent` whose checks stand as `states` (each one's status,
    /// and whether it failed only because the lab's object is missing).
    fn of(percent: Option<f64>, states: &[(Status, bool)]) -> Mark {
        let count = |s: Status| states.iter().filter(|(st, _)| *st == s).count();
        let c = Counts {
            pass: count(Status::Pass),
            fail: count(Status::Fail),
            pending: count(Status::Pending),
            skipped: count(Status::Skipped),
            error: count(Status::Error),
        };
        if c.error > 0 {
            Mark::Error
        } else if percent.is_none() {
            Mark::NotGraded
        } else if c.fail > 0
            && c.pass == 0
            && states
                .iter()
                .all(|(status, missing)| *status != Status::Fail || *missing)
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
    /// None in a board's outline ([`Scoreboard::outline`]) and when the lab was not graded.
    /// Boxed: an outline's cell is a fifth of the size (536 bytes inline), and a served board
    /// of a thousand learners keeps fifteen thousand of them.
    pub report: Option<Box<LabReport>>,
    /// Each of the column's checks, in its order: the status, and whether it failed only
    /// because the lab's object is missing (None: no outcome). What the room's summary counts,
    /// kept when the report is not.
    #[serde(skip)]
    pub checks: Vec<Option<(Status, bool)>>,
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
    /// The cells hold no reports: what shows a row reads them back from the room
    /// ([`Scoreboard::full_row`]).
    #[serde(skip)]
    pub outline: bool,
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
        Scoreboard::build(room, room.learners.iter(), lang, false)
    }

    /// [`Scoreboard::new`], dropping each learner's results as soon as their row is made: a
    /// room of a thousand learners never holds its results and its board whole at once.
    pub fn from_room(mut room: RoomResult, lang: Lang) -> Scoreboard {
        let learners = std::mem::take(&mut room.learners);
        Scoreboard::build(&room, learners.into_iter(), lang, false)
    }

    /// The board without its cells' reports: marks, scores and the room's summary. What shows
    /// a row reads its reports back from `room` ([`Scoreboard::full_row`]). A served board of
    /// a thousand learners keeps this: the reports of fifteen thousand cells, rendered, took
    /// about 280 MB (benches/room.rs).
    pub fn outline(room: &RoomResult, lang: Lang) -> Scoreboard {
        Scoreboard::build(room, room.learners.iter(), lang, true)
    }

    /// A learner's row with its reports, read back from `room` (None: no such learner there).
    pub fn full_row(&self, room: &RoomResult, learner: &str) -> Option<Row> {
        let l = room.learners.iter().find(|l| l.name == learner)?;
        Some(row(l, &self.labs, self.lang))
    }

    fn build<L: std::borrow::Borrow<LearnerResult>>(
        room: &RoomResult,
        learners: impl Iterator<Item = L>,
        lang: Lang,
        outline: bool,
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
        let learners: Vec<Row> = learners
            .map(|l| row_of(l.borrow(), &labs, lang, outline))
            .collect();
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
            outline,
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
                _ => row_of(l, &self.labs, self.lang, self.outline),
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

/// A learner's row with its cells' reports.
fn row(l: &LearnerResult, labs: &[Column], lang: Lang) -> Row {
    row_of(l, labs, lang, false)
}

/// A learner's row; `outline`: without the cells' reports, which are then never made and the
/// results never read back (a served board's outline).
fn row_of(l: &LearnerResult, labs: &[Column], lang: Lang, outline: bool) -> Row {
    // Marks, scores and the checks' states come from the glances kept beside the packed
    // results; the reports, when wanted, are read back here, one learner at a time.
    let read: Result<(&PackedLabs, Vec<LabResult>), String> = match &l.results {
        Ok(packed) if outline => Ok((packed, Vec::new())),
        Ok(packed) => packed
            .unpack()
            .map(|results| (packed, results))
            .map_err(|e| e.to_string()),
        Err(why) => Err(why.clone()),
    };
    let cells: Vec<Cell> = labs
        .iter()
        .map(|col| {
            let id = format!("{}/{}", l.name, col.lab.id);
            let judged = read.as_ref().ok().and_then(|(packed, results)| {
                let at = packed.labs().iter().position(|lab| lab.id == col.lab.id)?;
                Some((&packed.labs()[at], packed.glance(at)?, results.get(at)))
            });
            let Some((lab, glance, result)) = judged else {
                return Cell {
                    id,
                    lab: col.lab.id.clone(),
                    mark: Mark::Error,
                    score: None,
                    report: None,
                    checks: Vec::new(),
                };
            };
            let checks = col
                .checks
                .iter()
                .map(|check| {
                    let at = lab.checks.iter().position(|c| c.id == check.id)?;
                    glance.checks.get(at).copied().flatten()
                })
                .collect();
            Cell {
                id,
                lab: col.lab.id.clone(),
                mark: Mark::of(glance.score.percent, glance.outcomes),
                score: Some(glance.score),
                report: result.map(|r| Box::new(LabReport::new(r, lang))),
                checks,
            }
        })
        .collect();
    Row {
        id: l.name.clone(),
        learner: l.name.clone(),
        context: l.context.clone(),
        error: read.err(),
        score: sum(cells.iter().filter_map(|c| c.score)),
        cells,
    }
}

fn most_failed(rows: &[Row], labs: &[Column]) -> Vec<Failing> {
    let mut tally = Tally::new(labs);
    for r in rows {
        tally.add(r);
    }
    tally.most_failed()
}

/// What the room's summary counts, row by row: who fails each check and for whom it counted,
/// and the room's weights (so a board written learner by learner needs no row twice).
struct Tally<'l> {
    labs: &'l [Column],
    /// Per lab, per check: the learners failing it, and how many it was counted for.
    checks: Vec<Vec<(Vec<String>, usize)>>,
    scores: Vec<Score>,
}

impl<'l> Tally<'l> {
    fn new(labs: &'l [Column]) -> Tally<'l> {
        Tally {
            labs,
            checks: labs
                .iter()
                .map(|c| vec![(Vec::new(), 0); c.checks.len()])
                .collect(),
            scores: Vec::new(),
        }
    }

    fn add(&mut self, r: &Row) {
        self.scores.push(r.score);
        for (col, counts) in self.labs.iter().zip(&mut self.checks) {
            let Some(cell) = r.cells.iter().find(|c| c.lab == col.lab.id) else {
                continue;
            };
            for (state, (failed, counted)) in cell.checks.iter().zip(counts.iter_mut()) {
                let Some((status, missing)) = *state else {
                    continue;
                };
                // A learner who has not created the lab's object yet is not started, not
                // wrong: only real mistakes make the room's summary.
                if missing {
                    continue;
                }
                if status.is_counted() {
                    *counted += 1;
                }
                if status == Status::Fail {
                    failed.push(r.learner.clone());
                }
            }
        }
    }

    fn score(&self) -> Score {
        sum(self.scores.iter().copied())
    }

    fn most_failed(self) -> Vec<Failing> {
        let mut out = Vec::new();
        for (col, counts) in self.labs.iter().zip(self.checks) {
            for (check, (failed, counted)) in col.checks.iter().zip(counts) {
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
}

/// The room's JSON document (`grade -o json`) written learner by learner from the results:
/// each row is made, written and dropped with that learner's results, so a room of a thousand
/// learners never holds its board. The same bytes as `room::write_json` of
/// [`Scoreboard::from_room`] (a test holds them equal).
pub fn write_json_streamed(
    mut room: RoomResult,
    lang: Lang,
    mut out: impl std::io::Write,
) -> std::io::Result<()> {
    let learners = std::mem::take(&mut room.learners);
    // The board without its rows: the columns, the source, the time and the notes.
    let head = Scoreboard::build(&room, std::iter::empty::<LearnerResult>(), lang, false);
    let streamed = Streamed {
        tally: std::cell::RefCell::new(Tally::new(&head.labs)),
        head: &head,
        learners: std::cell::RefCell::new(Some(learners.into_iter())),
    };
    serde_json::to_writer_pretty(&mut out, &streamed)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// A [`Scoreboard`] whose rows are made while it is written.
struct Streamed<'h> {
    head: &'h Scoreboard,
    learners: std::cell::RefCell<Option<std::vec::IntoIter<LearnerResult>>>,
    tally: std::cell::RefCell<Tally<'h>>,
}

/// The rows of a [`Streamed`] board, made one at a time as they are written.
struct StreamedRows<'s, 'h>(&'s Streamed<'h>);

impl Serialize for StreamedRows<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let learners = self.0.learners.borrow_mut().take().into_iter().flatten();
        let (labs, lang) = (&self.0.head.labs, self.0.head.lang);
        s.collect_seq(learners.map(|l| {
            let r = row(&l, labs, lang);
            self.0.tally.borrow_mut().add(&r);
            r
        }))
    }
}

// The fields of `Scoreboard`, in its order: `learners` streamed, then what the rows sum to.
impl Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let h = self.head;
        let mut st = s.serialize_struct("Scoreboard", 10)?;
        st.serialize_field("schema_version", &h.schema_version)?;
        st.serialize_field("lang", &h.lang)?;
        st.serialize_field("source", &h.source)?;
        st.serialize_field("graded_at", &h.graded_at)?;
        st.serialize_field("namespace_template", &h.namespace_template)?;
        st.serialize_field("labs", &h.labs)?;
        st.serialize_field("learners", &StreamedRows(self))?;
        let tally = self.tally.replace(Tally::new(&h.labs));
        st.serialize_field("score", &tally.score())?;
        st.serialize_field("most_failed", &tally.most_failed())?;
        st.serialize_field("notes", &h.notes)?;
        st.end()
    }
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
