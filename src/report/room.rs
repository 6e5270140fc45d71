//! A graded room ([`Scoreboard`]) as a table for people, one JSON document, or JUnit XML (a
//! testsuite per learner × lab). CSV and the HTML scoreboard are `csv.rs` and `html.rs`.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::cells::{percent, t};
use super::{Mark, Scoreboard};
use crate::text::Lang;
use crate::verify::Score;

/// Output formats of `grade`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoomFormat {
    /// Learners × labs, with a mark and a percent per cell.
    Table,
    /// One JSON document: every learner's outcomes, stable ids (`learner/lab`).
    Json,
    /// JUnit XML: a testsuite per learner × lab, a testcase per check.
    Junit,
    /// One row per learner × lab.
    Csv,
}

impl RoomFormat {
    /// Whether the format shows each cell's checks. A table shows marks and scores only, so it
    /// is rendered from a board's outline ([`Scoreboard::outline`]), which reads no learner's
    /// results back: a watched room of a thousand learners redraws it without making fifteen
    /// thousand reports.
    pub fn shows_checks(self) -> bool {
        !matches!(self, RoomFormat::Table)
    }
}

/// Renders a room in the chosen format (`width`: the table's, None for a pipe).
pub fn render(board: &Scoreboard, format: RoomFormat, width: Option<usize>) -> String {
    match format {
        RoomFormat::Table => table(board, width),
        RoomFormat::Json => json(board),
        RoomFormat::Junit => junit(board),
        RoomFormat::Csv => super::csv::render(board),
    }
}

/// `1 learner`, `8 learners`; `受講者 8 人`, `lab 15 個`.
fn counted(n: usize, what: &str, lang: Lang) -> String {
    match (lang, what) {
        (Lang::Ja, "learner") => format!("受講者 {n} 人"),
        (Lang::Ja, _) => format!("lab {n} 個"),
        (Lang::En, _) if n == 1 => format!("1 {what}"),
        (Lang::En, _) => format!("{n} {what}s"),
    }
}

fn score_text(s: &Score) -> String {
    match s.percent {
        Some(p) => format!("{}/{} ({}%)", s.passed_weight, s.counted_weight, percent(p)),
        None => "–".to_string(),
    }
}

pub fn table(board: &Scoreboard, width: Option<usize>) -> String {
    let lang = board.lang;
    let mut heatmap = super::heatmap::render(board, width);
    // The legend's entries stay whole (`· not started`), packed into the width.
    let mut legend: Vec<String> = Mark::ALL
        .iter()
        .map(|m| format!("{} {}", m.symbol(), m.label(lang)))
        .collect();
    legend[0] = format!("{}: {}", t("legend", lang), legend[0]);
    heatmap.push_str(&super::fit::pack(
        &legend,
        "  ",
        width.unwrap_or(usize::MAX),
    ));
    let mut out = String::new();
    for r in &board.learners {
        if let Some(e) = &r.error {
            let line = format!(
                "! {} {}: {}",
                r.learner,
                t("not-graded-row", lang),
                e.lines().next().unwrap_or_default()
            );
            out.push_str(&super::fit::wrap_hanging(&line, width, "  "));
            out.push('\n');
        }
    }
    if !board.most_failed.is_empty() {
        out.push_str(&format!("\n{}:\n", t("most-failed", lang)));
        for f in board.most_failed.iter().take(5) {
            let entry = format!(
                "  {}/{}  {}  {} ({})",
                f.failed,
                f.counted,
                f.id,
                f.title,
                f.learners.join(", ")
            );
            out.push_str(&super::fit::wrap_hanging(&entry, width, "       "));
            out.push('\n');
        }
    }
    for n in &board.notes {
        let note = format!("※ {}: {n}", t("notes", lang));
        out.push_str(&format!("\n{}\n", super::fit::wrap(&note, width)));
    }
    let learners = counted(board.learners.len(), "learner", lang);
    let detail = if board.source.kind == "demo" {
        format!("{} ({learners})", super::ui("demo-room", lang))
    } else {
        board.source.detail.clone()
    };
    let summary = format!(
        "{}: {} · {learners} × {} · {} ({detail})",
        t("room", lang),
        score_text(&board.score),
        counted(board.labs.len(), "lab", lang),
        board.source.kind,
    );
    // Everything under the heatmap wraps at word boundaries, never inside an id.
    out.push_str(&format!("\n{}\n", super::fit::wrap(&summary, width)));
    heatmap + &out
}

/// The room as one JSON document: [`Scoreboard`] (`schema_version` 1), each cell holding the
/// learner's lab report in the schema of `check -o json`.
pub fn json(board: &Scoreboard) -> String {
    let mut out = Vec::new();
    // Writing to memory fails only if serialising fails, and a Scoreboard always serialises.
    let _ = write_json(board, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`json`], written to `out` as it is serialised (a room's document is megabytes).
pub fn write_json(board: &Scoreboard, mut out: impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, board)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// JUnit XML: a testsuite per learner × lab (`learner/lab`), a testcase per check (classname
/// `learner.lab`). A learner whose cluster could not be read gets one errored testcase per lab.
pub fn junit(board: &Scoreboard) -> String {
    let mut report = Report::new("trainlab-room");
    for r in &board.learners {
        for c in &r.cells {
            let mut suite = TestSuite::new(c.id.as_str());
            suite.add_property(("learner", r.learner.as_str()));
            suite.add_property(("lab", c.lab.as_str()));
            suite.add_property(("mark", c.mark.as_str()));
            let classname = format!("{}.{}", r.learner, c.lab);
            let Some(rep) = &c.report else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(r.error.clone().unwrap_or_else(|| "not graded".into()));
                s.set_type("error");
                let mut case = TestCase::new("grading", s);
                case.set_classname(classname.as_str());
                suite.add_test_case(case);
                report.add_test_suite(suite);
                continue;
            };
            suite.add_property(("namespace", rep.target.namespace.as_str()));
            let score = match rep.score.percent {
                Some(p) => format!("{p:.1}"),
                None => "not graded".to_string(),
            };
            suite.add_property(("score", score.as_str()));
            for o in &rep.outcomes {
                let status = super::junit::case_status(o);
                let mut case = TestCase::new(o.check.as_str(), status);
                case.set_classname(classname.as_str());
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialize JUnit: {e} -->\n"))
}

#[cfg(test)]
mod counted_tests {
    use super::*;

    #[test]
    fn the_room_size_reads_in_each_language() {
        assert_eq!(counted(1, "learner", Lang::En), "1 learner");
        assert_eq!(counted(8, "learner", Lang::En), "8 learners");
        assert_eq!(counted(1, "lab", Lang::En), "1 lab");
        assert_eq!(counted(15, "lab", Lang::En), "15 labs");
        assert_eq!(counted(8, "learner", Lang::Ja), "受講者 8 人");
        assert_eq!(counted(15, "lab", Lang::Ja), "lab 15 個");
    }
}

#[cfg(test)]
mod words_tests {
    use super::*;

    #[test]
    fn every_word_this_module_asks_for_exists_in_both_languages() {
        crate::report::messages::assert_every_word_exists(include_str!("room.rs"), t);
    }
}
