//! `trainlab solve LAB` — apply the reference solution (instructors, self-tests), taking over
//! every field it sets (server-side apply with force).

use clap::Args;

use super::live::LiveArgs;
use super::output::eprint;
use super::{apply, confirm, print, Global};
use crate::exit::ExitCode;
use crate::facts::Profile;
use crate::ops::manifests;
use crate::profile::site::SiteValues;
use crate::text::say;

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
    /// Which reference solution: `kind` runs trainlab's trainer stand-in on faked accelerators,
    /// `eks` is what an expert runs on real GPU/Trainium nodes (real images, EFA, memory)
    /// [default: from the kube context's name: kind-* → kind, EKS ARNs and *.eksctl.io → eks;
    /// otherwise kind]
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// A site value the answer names, e.g. --param subnet_id=subnet-0abc… (over the site file
    /// `trainlab setup eks` wrote for the context)
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = super::parse_param)]
    pub params: Vec<(String, String)>,
    /// Apply without asking when the EKS answer starts GPU or Trainium nodes (needed when not
    /// on a terminal; `--dry-run` shows what it would start)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// The site values `start`/`solve` fill `${site.KEY}` with: kind's stand-ins, or on EKS the
/// site file of the kube context (`--context`, else the kubeconfig's current one), each under
/// `--param`. A `--param` that is no site key is bad input listing the keys.
pub fn resolve_site(
    profile: Profile,
    live: &LiveArgs,
    params: &[(String, String)],
) -> Result<SiteValues, crate::Error> {
    use crate::profile::site::KEYS;
    if let Some((k, _)) = params
        .iter()
        .find(|(k, _)| !KEYS.iter().any(|(key, _)| key == k))
    {
        let keys = KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ");
        return Err(crate::Error::usage(
            format!("--param {k}: サイトの値ではありません。使えるキー: {keys}"),
            format!("--param {k}: not a site value; known keys: {keys}"),
        ));
    }
    let context = super::show::context_named(live.kubeconfig.as_deref(), live.context.as_deref());
    SiteValues::resolve(profile, context.as_deref(), params)
}

pub fn run(g: &Global, a: &SolveArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let place = manifests::Placement::new(&b.lab.id, a.namespace.as_deref(), a.learner.as_deref())?;
    let profile = apply::profile_for(a.profile, &g.live);
    let place = place.with_site(resolve_site(profile, &g.live, &a.params)?);
    let lang = g.lang();
    let capacity = apply::capacity(b, &["starter", "solution"], profile, &place.site)?;
    let what = say(lang, "この解答", "This answer");
    if a.dry_run {
        print(&format!(
            "# the {} profile's reference solution of lab {}\n",
            profile.as_str(),
            b.lab.id
        ));
        if !capacity.is_empty() {
            let text = confirm::capacity_text(&capacity, &what, &b.lab.id, lang);
            for line in text.lines() {
                print(&format!("# {line}\n"));
            }
        }
        print(&manifests::render_plan(b, "starter", profile, &place)?);
        print(&manifests::render_plan(b, "solution", profile, &place)?);
        return Ok(ExitCode::Ok);
    }
    if !confirm::capacity_agreed(&capacity, &what, &b.lab.id, a.yes, lang)? {
        print(&say(
            lang,
            "solve を取り消しました。何も適用していません\n",
            "solve cancelled; nothing applied\n",
        ));
        return Ok(ExitCode::Ok);
    }
    eprint(&format!(
        "applying the {} profile's reference solution (--profile to choose)\n",
        profile.as_str()
    ));
    // The reference solution takes every field it sets, whoever set it before: the one write
    // that forces (`start` never does).
    if let manifests::Applied::Conflicts(_) = apply::apply_folders(
        b,
        &["starter", "solution"],
        profile,
        &place,
        &g.connect_opts(),
        true,
        g.lang(),
    )? {
        return Err(crate::Error::environment(
            "強制の適用（force apply）で API サーバーがフィールドの競合を報告しました",
            "the API server reported field conflicts on a forced apply",
        ));
    }
    let id = &b.lab.id;
    let grade = match (&place.target.learner, place.grade_command(id), &a.namespace) {
        (_, Some(command), _) => format!("; grade it with `{command}`"),
        (None, None, None) => format!("; grade it with `trainlab check {id} --wait 5m`"),
        (None, None, Some(n)) => format!("; grade it with `trainlab check {id} -n {n} --wait 5m`"),
        (Some(_), None, _) => String::new(),
    };
    print(&format!("\nsolution applied{grade}\n"));
    Ok(ExitCode::Ok)
}
