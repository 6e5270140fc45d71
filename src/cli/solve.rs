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
    /// Namespace of the lab [default: trainlab-<lab id>]
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Print what would be applied; contact no cluster
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(g: &Global, a: &SolveArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let namespace = a
        .namespace
        .clone()
        .unwrap_or_else(|| format!("trainlab-{}", b.lab.id));
    if a.dry_run {
        print(&manifests::render_plan(b, "starter", &namespace)?);
        print(&manifests::render_plan(b, "solution", &namespace)?);
        return Ok(ExitCode::Ok);
    }
    // The reference solution takes every field it sets, whoever set it before: the one write
    // that forces (`start` never does).
    if let manifests::Applied::Conflicts(_) =
        manifests::apply_folders(b, &["starter", "solution"], &namespace, &a.live, true)?
    {
        return Err(crate::Error::Environment(
            "the API server reported field conflicts on a forced apply".into(),
        ));
    }
    print(&format!(
        "\nsolution applied; grade it with `trainlab check {} --wait 5m`\n",
        b.lab.id
    ));
    Ok(ExitCode::Ok)
}
