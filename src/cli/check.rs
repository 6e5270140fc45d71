//! `trainlab check LAB...` — grade the current cluster (default), saved state (`--snapshot`), the learner's manifests
//! (`--files`, static mode) or the embedded demo (`--demo`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;

use super::{list::is_gradable, parse_param, print, Global};
use crate::catalog::{Catalog, LabBundle};
use crate::exit::ExitCode;
use crate::observe::{sources, Observed};
use crate::profile::Profile;
use crate::report::{self, Format, LabReport};
use crate::verify::{grade_lab, LabResult, Status, Target};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  trainlab check 9 --wait 2m                       the current kube context's cluster, re-checking while pending
  trainlab check --all --demo                      grade the embedded demo state
  trainlab check 9 --files volcano-gang.yaml       static mode: your manifest, before applying it
  trainlab check 9 --files gang.yaml --param gpu_nodes=3
  trainlab check 13 --snapshot ./saved -o junit    saved `kubectl get -o yaml` output, JUnit XML

Without --snapshot, --files or --demo, check reads the cluster of the current kube context
(or --context) and never writes to it. In static mode (--files) checks about cluster state are
skipped, never failed.")]
pub struct CheckArgs {
    /// Labs to grade (number, id or folder)
    #[arg(required_unless_present = "all")]
    pub labs: Vec<String>,
    /// Grade every gradable lab
    #[arg(long, conflicts_with = "labs")]
    pub all: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value = "human")]
    pub output: Format,
    /// A lab parameter, e.g. --param gpu_nodes=3 (for facts static mode cannot read)
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Profile whose parameters apply [default: detected from node providerIDs, else kind]
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Namespace of the lab [default: trainlab-<lab id>]; only with one lab
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Live: re-check until nothing is pending or DURATION (e.g. 90s, 5m) runs out (exit 4)
    #[arg(long, value_name = "DURATION", value_parser = super::live::parse_duration, conflicts_with = "watch")]
    pub wait: Option<std::time::Duration>,
    /// Live: keep re-grading as you edit, redrawing the result, until Ctrl-C
    #[arg(long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
#[group(required = false, multiple = false)]
pub struct SourceArgs {
    /// A folder of saved cluster state (`kubectl get ... -o yaml` Lists, multi-document YAML, JSON)
    #[arg(long, value_name = "DIR")]
    pub snapshot: Option<PathBuf>,
    /// Your manifest files or folders (static mode: no cluster state)
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The embedded demo: a learner half-way through the flagship labs
    #[arg(long)]
    pub demo: bool,
}

pub fn run(g: &Global, a: &CheckArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let labs = select(&catalog, &a.labs, a.all)?;
    if a.namespace.is_some() && labs.len() != 1 {
        return Err(crate::Error::Usage(
            "-n/--namespace needs exactly one lab".into(),
        ));
    }
    let live = a.source.snapshot.is_none() && a.source.files.is_empty() && !a.source.demo;
    if !live && (a.wait.is_some() || a.watch) {
        return Err(crate::Error::Usage(
            "--wait and --watch grade a live cluster; drop --snapshot/--files/--demo".into(),
        ));
    }
    if live {
        return super::live::check(g, a, &labs);
    }
    let obs = observe(&a.source)?;
    let overrides: BTreeMap<String, String> = a.params.iter().cloned().collect();
    let mut results = Vec::new();
    for b in labs {
        let mut target = Target::for_lab(&b.lab.id);
        if let Some(ns) = &a.namespace {
            target.namespace = ns.clone();
        }
        results.push(grade_lab(b, &obs, &target, &overrides, a.profile)?);
    }
    let lang = g.lang();
    let reports: Vec<LabReport> = results.iter().map(|r| LabReport::new(r, lang)).collect();
    let color = a.output == Format::Human && report::color_enabled();
    print(&report::render(&reports, a.output, color));
    Ok(exit_code(&results))
}

/// The labs named, or every gradable lab for `--all`. A quiz-only lab named explicitly is an
/// error that says so (nothing to grade), not an empty pass.
pub fn select<'c>(
    catalog: &'c Catalog,
    keys: &[String],
    all: bool,
) -> Result<Vec<&'c LabBundle>, crate::Error> {
    if all {
        return Ok(catalog
            .labs
            .iter()
            .filter(|b| is_gradable(&b.lab))
            .collect());
    }
    let mut out = Vec::new();
    for k in keys {
        let b = catalog.get(k)?;
        if !is_gradable(&b.lab) {
            return Err(crate::Error::Usage(format!(
                "lab {} ({}) is quiz-only: it has no task to grade yet. Try `trainlab quiz {}`; `trainlab list` shows the gradable labs",
                b.lab.number, b.lab.id, b.lab.number
            )));
        }
        out.push(b);
    }
    Ok(out)
}

fn observe(s: &SourceArgs) -> Result<Observed, crate::Error> {
    if let Some(dir) = &s.snapshot {
        return Ok(sources::snapshot(dir)?);
    }
    if !s.files.is_empty() {
        return Ok(sources::files(&s.files)?);
    }
    Ok(sources::demo()?)
}

/// 3 when any check errored (the grade is incomplete), else 1 on a fail, else 4 while pending,
/// else 0.
pub fn exit_code(results: &[LabResult]) -> ExitCode {
    let any = |s: Status| {
        results
            .iter()
            .any(|r| r.outcomes.iter().any(|o| o.status == s))
    };
    if any(Status::Error) {
        ExitCode::Environment
    } else if any(Status::Fail) {
        ExitCode::Failed
    } else if any(Status::Pending) {
        ExitCode::StillPending
    } else {
        ExitCode::Ok
    }
}
