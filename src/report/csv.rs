//! `grade -o csv`: one row per learner × lab, for spreadsheets. Percent is empty when the lab
//! was not graded (never 100); `error` holds why a learner's cluster could not be read.

use super::Scoreboard;

/// The header, in column order.
pub const COLUMNS: [&str; 15] = [
    "learner",
    "context",
    "lab",
    "lab_number",
    "cell",
    "mark",
    "percent",
    "passed_weight",
    "counted_weight",
    "pass",
    "fail",
    "pending",
    "skipped",
    "error",
    "error_message",
];

pub fn render(board: &Scoreboard) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for r in &board.learners {
        for (c, col) in r.cells.iter().zip(&board.labs) {
            let counts = c.report.as_ref().map(|rep| &rep.counts);
            let n = |f: fn(&crate::report::Counts) -> usize| {
                counts.map(|c| f(c).to_string()).unwrap_or_default()
            };
            rows.push(vec![
                r.learner.clone(),
                r.context.clone().unwrap_or_default(),
                c.lab.clone(),
                col.lab.number.to_string(),
                c.id.clone(),
                c.mark.as_str().to_string(),
                c.score
                    .and_then(|s| s.percent)
                    .map(|p| format!("{p:.1}"))
                    .unwrap_or_default(),
                c.score
                    .map(|s| s.passed_weight.to_string())
                    .unwrap_or_default(),
                c.score
                    .map(|s| s.counted_weight.to_string())
                    .unwrap_or_default(),
                n(|c| c.pass),
                n(|c| c.fail),
                n(|c| c.pending),
                n(|c| c.skipped),
                n(|c| c.error),
                r.error.clone().unwrap_or_default(),
            ]);
        }
    }
    // Writing strings into memory cannot fail; an error would only lose the table, not panic.
    let _ = w.write_record(COLUMNS);
    for row in &rows {
        let _ = w.write_record(row);
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}
