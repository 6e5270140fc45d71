//! `trainlab lint` — validates lab files beyond their schema: the verifier's check ids match,
//! the solution passes static mode, the draft fails it.

use clap::Args;

use super::{print, Global};
use crate::exit::ExitCode;
use crate::labs::verifier_for;
use crate::verify::lint_lab;

#[derive(Debug, Args)]
pub struct LintArgs {}

/// Every problem of every lab (a lab that does not load is one problem; the others are still
/// linted), and the folders passed over. Only a labs folder that cannot be read stops it.
pub fn run_lint(g: &Global) -> Result<(Vec<String>, Vec<String>, usize), crate::Error> {
    let survey = match &g.labs_dir {
        Some(dir) => crate::catalog::Catalog::survey_dir(dir)?,
        None => crate::catalog::Survey {
            catalog: g.catalog()?,
            errors: Vec::new(),
            skipped: Vec::new(),
        },
    };
    let mut problems: Vec<String> = survey.errors.iter().map(ToString::to_string).collect();
    for b in &survey.catalog.labs {
        problems.extend(lint_lab(b, verifier_for(&b.lab.id)));
    }
    Ok((problems, survey.skipped, survey.catalog.labs.len()))
}

pub fn run(g: &Global, _a: &LintArgs) -> Result<ExitCode, crate::Error> {
    let (problems, skipped, n) = run_lint(g)?;
    for line in &skipped {
        super::output::eprint(&format!("note: {line}\n"));
    }
    if problems.is_empty() {
        print(&format!("lint: {n} labs OK\n"));
        Ok(ExitCode::Ok)
    } else {
        let (n, list) = (problems.len(), problems.join("\n"));
        Err(crate::Error::usage(
            format!("lint で問題が {n} 件見つかりました:\n{list}"),
            format!("lint found {n} problem(s):\n{list}"),
        ))
    }
}
