//! `trainlab solve LAB` — apply the reference solution (instructors, self-tests), taking over
//! every field it sets (server-side apply with force).

use clap::Args;

use super::live::LiveArgs;
use super::{manifests, print, Global};
use crate::exit::ExitCode;

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// The lab: number, id or folder
    pub lab: String,
    /// Namespace of the lab [default: trainlab-<lab id>, or <learner>-<lab id> with --learner]
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// In a workshop: solve it as this learner, where `trainlab grade --learners NAME` looks
    /// (e.g. --learner alice: namespace alice-<lab id>, NodePool alice-gpu-training)
    #[arg(long, value_name = "NAME")]
    pub learner: Option<String>,
    /// Print what would be applied; contact no cluster
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(g: &Global, a: &SolveArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let place = manifests::Placement::new(&b.lab.id, a.namespace.as_deref(), a.learner.as_deref())?;
    if a.dry_run {
        print(&manifests::render_plan(b, "starter", &place)?);
        print(&manifests::render_plan(b, "solution", &place)?);
        return Ok(ExitCode::Ok);
    }
    // The reference solution takes every field it sets, whoever set it before: the one write
    // that forces (`start` never does).
    if let manifests::Applied::Conflicts(_) =
        manifests::apply_folders(b, &["starter", "solution"], &place, &a.live, true)?
    {
        return Err(crate::Error::Environment(
            "the API server reported field conflicts on a forced apply".into(),
        ));
    }
    let id = &b.lab.id;
    let grade = match (&place.learner, place.grade_command(id), &a.namespace) {
        (_, Some(command), _) => format!("; grade it with `{command}`"),
        (None, None, None) => format!("; grade it with `trainlab check {id} --wait 5m`"),
        (None, None, Some(n)) => format!("; grade it with `trainlab check {id} -n {n} --wait 5m`"),
        (Some(_), None, _) => String::new(),
    };
    print(&format!("\nsolution applied{grade}\n"));
    Ok(ExitCode::Ok)
}
