//! `trainlab show LAB`

use std::fmt::Write;

use clap::Args;

use super::{ok, print, Global};
use crate::catalog::{Choice, LabBundle, Stage};
use crate::exit::ExitCode;
use crate::facts::Profile;
use crate::report::ui;
use crate::text::Lang;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The lab: number (9), id (volcano-gang) or folder (09-volcano-gang)
    pub lab: String,
    /// Fill the task with this profile's parameters [default: from the current kube context's
    /// name: kind-* → kind, EKS ARNs → eks; otherwise kind]
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
}

pub fn run(g: &Global, a: &ShowArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let bundle = catalog.get(&a.lab)?;
    let (kubeconfig, context) = (g.live.kubeconfig.as_deref(), g.live.context.as_deref());
    let profile = a
        .profile
        .or_else(|| context_profile(kubeconfig, context))
        .unwrap_or(Profile::Kind);
    // The context's site file, when it has one (show never fails for want of it).
    let site = (profile == Profile::Eks)
        .then(|| context_named(kubeconfig, context))
        .flatten()
        .and_then(|ctx| crate::profile::site::Site::load(&ctx).ok().flatten())
        .map(|s| s.values)
        .unwrap_or_default();
    let width = crate::report::human::terminal_width();
    print(&crate::report::fit::wrap_prose(
        &render_with_site(bundle, g.lang(), profile, &site),
        width,
    ));
    ok()
}

/// The profile suggested by a context's name: `context` if given, else the current context of
/// `kubeconfig` (or the default kubeconfig). Reads the file only, never the cluster.
pub fn context_profile(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> Option<Profile> {
    Profile::from_context_name(&context_named(kubeconfig, context)?)
}

/// The context a command uses: `context` if given, else the current context of `kubeconfig`
/// (or the default kubeconfig). Reads the file only, never the cluster.
pub fn context_named(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> Option<String> {
    if let Some(c) = context {
        return Some(c.to_string());
    }
    let kc = match kubeconfig {
        Some(p) => kube::config::Kubeconfig::read_from(p).ok()?,
        None => kube::config::Kubeconfig::read().ok()?,
    };
    kc.current_context.filter(|c| !c.is_empty())
}

/// The task's parameters for `profile`, each `${site.KEY}` filled from `site` when it has the
/// value, else shown as where the value comes from (`<zone: trainlab setup eks>`): the text
/// a learner reads never holds a bare token.
fn task_params(
    lab: &crate::catalog::Lab,
    profile: Profile,
    site: &std::collections::BTreeMap<String, String>,
    lang: Lang,
) -> std::collections::BTreeMap<String, String> {
    let mut params = lab.params(profile.as_str());
    for v in params.values_mut() {
        let shown = |key: &str| {
            Some(site.get(key).cloned().unwrap_or_else(|| {
                crate::text::say(
                    lang,
                    format!("<{key}: `trainlab setup eks` か --param {key}=…>"),
                    format!("<{key}: from `trainlab setup eks` or --param {key}=…>"),
                )
            }))
        };
        if let Ok(filled) = crate::facts::site::fill(v, &shown) {
            *v = filled;
        }
    }
    params
}

/// The lab as `show` prints it, the task filled with `site`'s values where it names them.
pub fn render_with_site(
    b: &LabBundle,
    lang: Lang,
    profile: Profile,
    site: &std::collections::BTreeMap<String, String>,
) -> String {
    let lab = &b.lab;
    let mut s = String::new();
    let _ = writeln!(s, "# {} {} — {}\n", lab.number, lab.id, lab.title.get(lang));
    let _ = writeln!(s, "{}\n", lab.quiz.question.get(lang).trim());
    for c in Choice::ALL {
        let _ = writeln!(s, "  {}) {}", c.letter(), lab.quiz.choices.get(c).get(lang));
    }
    s.push('\n');
    match &lab.task {
        Some(task) if lab.is_gradable() => {
            let params = task_params(lab, profile, site, lang);
            let _ = writeln!(s, "## {} ({})\n", ui("task", lang), profile.as_str());
            let _ = writeln!(s, "{}\n", task.text.render(lang, &params).trim_end());
            let _ = writeln!(s, "## {}\n", ui("checks", lang));
            for c in &lab.checks {
                let stage = match c.stage {
                    Stage::Spec => "spec",
                    Stage::State => "state",
                };
                let _ = writeln!(
                    s,
                    "  - {} [{stage}, {} {}] {}",
                    c.id,
                    ui("weight", lang),
                    c.weight,
                    c.title.render(lang, &params)
                );
            }
            render_solution(&mut s, b, lang, profile);
            render_params(&mut s, lab, lang, site);
            render_reads(&mut s, lab, lang);
        }
        _ => {
            let _ = writeln!(s, "{}", ui("quiz-only", lang));
            let _ = writeln!(s, "  trainlab quiz {}", lab.number);
        }
    }
    s
}

/// The command lines of the profile's reference solution (`solution/` with its overlay), each
/// with where it is written and the image it runs in: on EKS, what an expert runs.
fn render_solution(s: &mut String, b: &LabBundle, lang: Lang, profile: Profile) {
    // Shown as written: each `${site.KEY}` stays a token (show reads no site file).
    let site = crate::catalog::AsWritten;
    let Ok(lines) = crate::verify::commands::command_lines(b, "solution", profile.as_str(), &site)
    else {
        return;
    };
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## {} ({}: trainlab solve {} --profile {})\n",
        ui("solution-commands", lang),
        profile.as_str(),
        b.lab.id,
        profile.as_str()
    );
    for l in lines {
        let _ = writeln!(
            s,
            "  {} {}/{} ({})\n    {}",
            l.object,
            l.role,
            l.container,
            l.image,
            l.shell_line()
        );
    }
}

/// The parameters `--param NAME=VALUE` accepts, with each profile's value.
fn render_params(
    s: &mut String,
    lab: &crate::catalog::Lab,
    lang: Lang,
    site: &std::collections::BTreeMap<String, String>,
) {
    let Some(task) = &lab.task else { return };
    let filled: std::collections::BTreeMap<&String, std::collections::BTreeMap<String, String>> =
        task.params
            .keys()
            .filter_map(|p| Some((p, task_params(lab, Profile::parse(p)?, site, lang))))
            .collect();
    let mut names: Vec<&String> = task.params.values().flat_map(|p| p.keys()).collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## {} (--param NAME=VALUE)\n", ui("params", lang));
    for n in names {
        let values: Vec<String> = task
            .params
            .iter()
            .filter_map(|(profile, p)| {
                let v = filled.get(profile).and_then(|f| f.get(n)).or(p.get(n))?;
                Some(format!("{profile}: {v}"))
            })
            .collect();
        let _ = writeln!(s, "  - {n} ({})", values.join("; "));
    }
}

/// What `check --snapshot` needs saved for this lab: the kinds its verifier reads, with the
/// kubectl command that saves each (`trainlab snapshot` saves exactly these).
fn render_reads(s: &mut String, lab: &crate::catalog::Lab, lang: Lang) {
    let Some(v) = crate::labs::verifier_for(&lab.id) else {
        return;
    };
    let target = crate::verify::Target::for_lab(&lab.id);
    let _ = writeln!(s, "\n## {}\n", ui("reads", lang));
    for q in crate::verify::queries(v, &target) {
        // `kubectl get secrets -o yaml` would write their data to disk; trainlab reads and
        // saves Secret metadata only.
        if *q.kind == crate::observe::kinds::SECRETS {
            let _ = writeln!(
                s,
                "  - Secret: trainlab snapshot {} DIR (metadata only; `kubectl get secrets -o yaml` would save their data)",
                lab.id
            );
            continue;
        }
        let scope = match &q.namespace {
            Some(ns) => format!(" -n {ns}"),
            None if q.kind.namespaced => " -A".to_string(),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "  - {}: kubectl get {}{scope} -o yaml > {}.yaml",
            q.kind.kind,
            q.kind.resource_name(),
            q.kind.plural
        );
    }
}
