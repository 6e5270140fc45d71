//! `trainlab lint` — validates lab files beyond their schema: the verifier's check ids match,
//! the solution passes static mode, the draft fails it.

use clap::Args;

use super::{print, Global};
use crate::exit::ExitCode;
use crate::verify::{lint_lab, verifier_for};

#[derive(Debug, Args)]
pub struct LintArgs {}

pub fn run_lint(g: &Global) -> Result<Vec<String>, crate::Error> {
    let catalog = g.catalog()?; // schema and field errors stop here, with file and field
    let mut problems = Vec::new();
    for b in &catalog.labs {
        problems.extend(lint_lab(b, verifier_for(&b.lab.id)));
    }
    Ok(problems)
}

pub fn run(g: &Global, _a: &LintArgs) -> Result<ExitCode, crate::Error> {
    let problems = run_lint(g)?;
    if problems.is_empty() {
        let n = g.catalog()?.labs.len();
        print(&format!("lint: {n} labs OK\n"));
        Ok(ExitCode::Ok)
    } else {
        Err(crate::Error::Usage(format!(
            "lint found {} problem(s):\n{}",
            problems.len(),
            problems.join("\n")
        )))
    }
}
