//! `trainlab start LAB` — create the lab namespace, apply `starter/`, write the draft manifest.
//!
//! The starter is applied without force: a starter field the learner has changed since (with
//! `kubectl edit`, `kubectl apply`, …) belongs to their field manager, and start reports it and
//! writes nothing instead of overwriting it. Only `solve` forces.

use std::path::PathBuf;

use clap::Args;

use super::output::eprint;
use super::{apply, print, Global};
use crate::exit::ExitCode;
use crate::ops::manifests;
use crate::report::ui;

const AFTER_HELP: &str = "\
Exit codes:
  0  the lab is started (or, with --draft-only, the draft is written)
  1  nothing was written: the starter would overwrite fields you changed since (each is named,
     with its field manager); keep your edits, or `trainlab reset` and start again
  2  usage error (e.g. the draft file exists and --force was not given)
  3  the cluster could not be reached, or the lab namespace is still terminating";

#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct StartArgs {
    /// The lab: number, id or folder
    pub lab: String,
    /// Namespace of the lab [default: trainlab-<lab id>, or <learner>-<lab id> with --learner]
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// In a workshop: start it as this learner, where `trainlab grade --learners NAME` looks
    /// (e.g. --learner alice: namespace alice-<lab id>, NodePool alice-gpu-training)
    #[arg(long, value_name = "NAME")]
    pub learner: Option<String>,
    /// Where to write the draft manifest [default: ./<lab's draft file name>]
    #[arg(long, value_name = "FILE")]
    pub draft: Option<PathBuf>,
    /// Overwrite an existing draft file
    #[arg(long)]
    pub force: bool,
    /// Which starter: `kind` or `eks` (a lab may ship `starter-eks/`) [default: from the kube
    /// context's name: kind-* → kind, EKS ARNs and *.eksctl.io → eks; otherwise kind]
    #[arg(long, value_enum)]
    pub profile: Option<crate::facts::Profile>,
    /// Only write the draft (no cluster needed): to read the starting file, or to work offline
    /// with `check LAB --files`
    #[arg(long)]
    pub draft_only: bool,
    /// A site value the starter names, e.g. --param zone=us-east-1b (over the site file
    /// `trainlab setup eks` wrote for the context)
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = super::parse_param)]
    pub params: Vec<(String, String)>,
    /// Apply without asking when the EKS starter starts GPU or Trainium nodes (needed when not
    /// on a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

pub fn run(g: &Global, a: &StartArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let lang = g.lang();
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let place = manifests::Placement::new(&b.lab.id, a.namespace.as_deref(), a.learner.as_deref())?;
    let profile = apply::profile_for(a.profile, &g.live);
    let place = place.with_site(super::solve::resolve_site(profile, &g.live, &a.params)?);
    let namespace = &place.target.namespace;
    let task = b.lab.task.as_ref();
    // In a workshop the draft names the learner's cluster-scoped objects as `grade` looks them up.
    // Its comments in the user's language (`draft-ja/` beside `draft/`).
    let draft = task
        .and_then(|t| t.draft.as_ref())
        .and_then(|d| b.draft_in(d, lang))
        .map(|(d, text)| {
            let origin = b.path_of(&d);
            let text = manifests::prefixed_draft(text, &origin, &place.target.name_prefix)?;
            // On EKS the image's own torchrun runs: the kind stand-in's mount goes.
            match profile {
                crate::facts::Profile::Eks => {
                    Ok(crate::ops::eks_draft::without_standin(&text, &origin)?.unwrap_or(text))
                }
                crate::facts::Profile::Kind => Ok::<_, crate::Error>(text),
            }
        })
        .transpose()?;
    let draft_path = a
        .draft
        .clone()
        .or_else(|| task.and_then(|t| t.draft_as.clone()).map(PathBuf::from));
    // Refuse before touching the cluster, so nothing is half done.
    if let (Some(_), Some(path)) = (&draft, &draft_path) {
        if path.exists() && !a.force {
            let p = path.display();
            return Err(crate::Error::usage(
                format!("{p} はすでにあります。そのまま編集を続けるか、--force で新しい下書きに上書きしてください"),
                format!("{p} already exists; keep editing it, or pass --force to overwrite it with a fresh draft"),
            ));
        }
    }
    if a.draft_only && draft.is_none() {
        let id = &b.lab.id;
        return Err(crate::Error::usage(
            format!("lab {id} には書き出す下書きファイルがありません"),
            format!("lab {id} has no draft file to write"),
        ));
    }
    if !a.draft_only {
        let capacity = apply::capacity(b, &["starter"], profile, &place.site)?;
        let what = crate::text::say(lang, "この starter", "This starter");
        if !super::confirm::capacity_agreed(&capacity, &what, &b.lab.id, a.yes, lang)? {
            print(&crate::text::say(
                lang,
                "start を取り消しました。何も適用していません\n",
                "start cancelled; nothing applied\n",
            ));
            return Ok(ExitCode::Ok);
        }
        let applied = apply::apply_folders(
            b,
            &["starter"],
            profile,
            &place,
            &g.connect_opts(),
            false,
            lang,
        )?;
        if let manifests::Applied::Conflicts(fields) = applied {
            eprint(&conflict_report(&b.lab.id, &where_flags(a), &fields));
            return Ok(ExitCode::Failed);
        }
    }
    if let (Some(text), Some(path)) = (draft, draft_path) {
        std::fs::write(&path, text).map_err(|e| {
            let p = path.display();
            crate::Error::usage(
                format!("{p} に書き込めません: {e}"),
                format!("cannot write {p}: {e}"),
            )
        })?;
        let id = &b.lab.id;
        let p = path.display();
        let next = if a.draft_only {
            let learner = match &place.target.learner {
                Some(l) => format!(" --learner {l}"),
                None => String::new(),
            };
            let check = format!(
                "  trainlab check {id}{learner} --files {p} --profile {}   ({})\n",
                profile.as_str(),
                ui("static-no-cluster", lang)
            );
            format!(
                "{check}  trainlab start {id}{w}   ({})\n",
                ui("on-a-cluster-starter", lang),
                w = where_flags(a)
            )
        } else {
            let mut check = format!("  trainlab check {id}{w} --wait 2m\n", w = where_flags(a));
            if let Some(grade) = place.grade_command(id) {
                check.push_str(&format!("  {grade}   ({})\n", ui("instructor-runs", lang)));
            }
            format!("  kubectl apply -n {namespace} -f {p}\n{check}")
        };
        let wrote = ui("wrote-complete-todos", lang).replace("{path}", &p.to_string());
        print(&format!("\n{wrote}\n{next}"));
    }
    print(&crate::report::fit::wrap_prose(
        &super::show::render_with_site(b, g.lang(), profile, place.site.values()),
        crate::report::human::terminal_width(),
    ));
    Ok(ExitCode::Ok)
}

/// What start says when the starter would take fields the learner changed: which fields, whose
/// they are now, and the two ways on (keep them, or start over). `start --force` is no way on:
/// it only rewrites the draft file.
fn conflict_report(lab_id: &str, flags: &str, fields: &[String]) -> String {
    format!(
        "error: trainlab start changed nothing: the starter would overwrite fields you changed since it was applied\n  {}\n\
         Your edits are kept. Either keep working with them (nothing to do), or start over from the starter:\n  \
         trainlab reset {lab_id}{flags} --yes && trainlab start {lab_id}{flags}\n\
         (`trainlab start --force` only rewrites the draft file; it never takes your fields.)\n",
        fields.join("\n  ")
    )
}

/// The flags that say where the lab is, as the user gave them (` -n team-a`, ` --learner alice`),
/// for the commands printed next.
fn where_flags(a: &StartArgs) -> String {
    let mut s = String::new();
    if let Some(n) = &a.namespace {
        s.push_str(&format!(" -n {n}"));
    }
    if let Some(l) = &a.learner {
        s.push_str(&format!(" --learner {l}"));
    }
    s
}
