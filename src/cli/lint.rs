//! `trainlab lint` — validates lab files beyond their schema: the verifier's check ids match,
//! the solution passes static mode, the draft fails it.

use clap::Args;

use super::{print, Global};
use crate::catalog::{LabBundle, Stage};
use crate::exit::ExitCode;
use crate::observe::{parse_text, Observed, SourceKind};
use crate::verify::{self, verifier_for, MissingCapabilities, Status, Target};

#[derive(Debug, Args)]
pub struct LintArgs {}

pub fn run_lint(g: &Global) -> Result<Vec<String>, crate::Error> {
    let catalog = g.catalog()?; // schema and field errors stop here, with file and field
    let mut problems = Vec::new();
    for b in &catalog.labs {
        problems.extend(lint_lab(b));
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

/// Problems with one lab, each naming the file and what was expected.
pub fn lint_lab(b: &LabBundle) -> Vec<String> {
    let lab = &b.lab;
    let file = b.path_of("lab.yaml");
    let mut problems = Vec::new();
    let verifier = verifier_for(&lab.id);
    if !lab.is_gradable() {
        if verifier.is_some() {
            problems.push(format!(
                "{file}: field `status`: a verifier exists for `{}`; expected `status: gradable`",
                lab.id
            ));
        }
        return problems;
    }
    let Some(v) = verifier else {
        problems.push(format!("{file}: field `status`: gradable, but no verifier is registered for `{}` (src/verify/registry.rs)", lab.id));
        return problems;
    };
    let ids: Vec<&str> = lab.checks.iter().map(|c| c.id.as_str()).collect();
    if ids != v.check_ids() {
        problems.push(format!(
            "{file}: field `checks`: ids {ids:?} do not match the verifier's {:?}",
            v.check_ids()
        ));
        return problems;
    }
    for (folder, should_pass) in [("solution", true), ("draft", false)] {
        let files = b.files_under(folder);
        if files.is_empty() {
            continue;
        }
        let mut objects = Vec::new();
        for (rel, text) in files {
            match parse_text(text, &b.path_of(rel)) {
                Ok(o) => objects.extend(o),
                Err(e) => problems.push(e.to_string()),
            }
        }
        let obs = Observed::offline(SourceKind::Files, folder, objects);
        let target = Target::for_lab(&lab.id);
        let params = lab.params("kind").into_iter().collect();
        match verify::run(
            b,
            v,
            &obs,
            &target,
            &params,
            None,
            &MissingCapabilities::new(),
        ) {
            Err(e) => problems.push(format!("{}/{folder}: {e}", b.origin)),
            Ok(r) => {
                let spec: Vec<_> = r
                    .outcomes
                    .iter()
                    .filter(|o| lab.check(&o.check).is_some_and(|c| c.stage == Stage::Spec))
                    .collect();
                let failing: Vec<&str> = spec
                    .iter()
                    .filter(|o| !matches!(o.status, Status::Pass | Status::Skipped))
                    .map(|o| o.check.as_str())
                    .collect();
                if should_pass && !failing.is_empty() {
                    problems.push(format!(
                        "{}/solution: spec checks do not pass in static mode: {failing:?}",
                        b.origin
                    ));
                }
                if !should_pass && !spec.iter().any(|o| o.status == Status::Fail) {
                    problems.push(format!("{}/draft: applied as is, the draft must fail the lab, but no spec check fails", b.origin));
                }
            }
        }
    }
    problems
}
