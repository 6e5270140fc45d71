//! `trainlab reset LAB` — remove what the lab put on the cluster, and say plainly what it did not.
//! What is found and deleted is `ops::reset`; this file asks for confirmation, shows the wait for
//! the namespace to finish terminating (bounded, so a following `start` does not race it) and
//! reports what was left.

use std::io::IsTerminal;
use std::time::Duration;

use clap::Args;

use super::live::{connect_and_announce, parse_duration, LiveArgs};
use super::progress::Steps;
use super::{print, Global};
use crate::cluster::{Conn, LAB_LABEL};
use crate::exit::ExitCode;
use crate::ops::manifests::Placement;
use crate::ops::reset::{self, ResetRequest, Survey, Surveyed};
use crate::text::say;

const AFTER_HELP: &str = "\
Exit codes:
  0  everything the lab put on the cluster is gone
  1  an object the task names was left: it lacks the trainlab.dev/lab label (the command that
     deletes it is printed)
  2  usage error (e.g. no --yes without a terminal)
  3  the cluster could not be reached, or a kind could not be searched
  4  the namespace is still terminating after --wait";

#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ResetArgs {
    /// The lab: number, id or folder
    pub lab: String,
    /// Namespace of the lab [default: trainlab-<lab id>, or <learner>-<lab id> with --learner]
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Do not ask for confirmation
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// In a workshop: reset only this learner's copy (e.g. --learner alice: namespace
    /// alice-<lab id> and cluster-scoped objects named alice-…; other learners' are kept)
    #[arg(long, value_name = "NAME")]
    pub learner: Option<String>,
    /// Prefix of your cluster-scoped objects in a workshop (`alice-` for `alice-gpu-training`):
    /// the task's names are looked up with it, and labelled cluster-scoped objects without it
    /// (another learner's) are kept
    #[arg(long, value_name = "PREFIX")]
    pub name_prefix: Option<String>,
    /// Print what reset would delete (and what it would keep), and delete nothing: it only
    /// reads, and needs no --yes
    #[arg(long)]
    pub dry_run: bool,
    /// How long to wait for the namespace to finish terminating (0s: do not wait)
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_duration)]
    pub wait: Duration,
}

pub fn run(g: &Global, a: &ResetArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let id = b.lab.id.clone();
    let place = Placement::new(&id, a.namespace.as_deref(), a.learner.as_deref())?;
    // `--learner alice` is `--name-prefix alice-` plus alice's namespace.
    let prefix = match (&a.name_prefix, place.target.learner.is_some()) {
        (Some(p), true) if *p != place.target.name_prefix => {
            let (learner, prefix) = (
                a.learner.as_deref().unwrap_or_default(),
                &place.target.name_prefix,
            );
            return Err(crate::Error::usage(
                format!("--learner {learner} ではオブジェクト名の接頭辞が {prefix} になり、--name-prefix {p} とは違います。どちらか一方を指定してください"),
                format!("--learner {learner} names objects with the prefix {prefix}, not --name-prefix {p}; give one of them"),
            ));
        }
        (Some(p), _) => p.clone(),
        (None, _) => place.target.name_prefix.clone(),
    };
    if !a.yes && !a.dry_run && !std::io::stdin().is_terminal() {
        return Err(crate::Error::usage(
            "reset はオブジェクトを削除します。端末以外から実行するときは --yes を付けて確認してください",
            "reset deletes objects; pass --yes to confirm when not on a terminal",
        ));
    }
    let lang = g.lang();
    let req = ResetRequest {
        bundle: b,
        namespace: place.target.namespace.clone(),
        prefix,
        lang,
    };
    let namespace = req.namespace.as_str();
    let stopped = crate::text::Text {
        ja: "reset を途中で止めました。削除済みのものは消え、残りはそのままです。同じ reset コマンドをもう一度実行すると続きを削除します".into(),
        en: "reset stopped in the middle; what it deleted is gone and the rest stays. Run the same reset command again to finish".into(),
    };
    super::live::runtime_stopped_by_signal(g.lang(), stopped)?.block_on(async {
        let conn = connect_and_announce(&g.connect_opts()).await?;
        crate::cluster::probe(&conn).await?;
        let mut surveyed = reset::survey(&conn, &req).await?;
        let plan = surveyed.plan(namespace, lang);
        let frees = reset::frees(&conn, &req, &surveyed).await;
        let frees_text = frees
            .as_ref()
            .filter(|c| !c.is_empty())
            .map(|c| {
                say(
                    lang,
                    format!(
                        "その Pod が使っているアクセラレーターの容量も解放します:\n  {}\n",
                        c.lines(lang).join("\n  ")
                    ),
                    format!(
                        "and frees the accelerated capacity its pods hold:\n  {}\n",
                        c.lines(lang).join("\n  ")
                    ),
                )
            })
            .unwrap_or_default();
        let ns = surveyed.namespace;
        let ours = ns.is_some_and(|n| n.ours);
        if a.dry_run {
            print(&dry_run_text(
                &conn,
                &plan,
                &surveyed.survey,
                &frees_text,
                g.lang(),
            ));
            return Ok(ExitCode::Ok);
        }
        if ns.is_some_and(|n| n.ours && n.terminating) {
            print(&say(
                lang,
                format!("Namespace/{namespace} はすでに終了処理中です (以前に削除済み)\n"),
                format!("Namespace/{namespace} is already terminating (deleted before)\n"),
            ));
        }
        if plan.is_empty() && !ours {
            let cluster = conn.describe();
            print(&say(
                lang,
                format!("リセットするものはありません: {cluster} に {LAB_LABEL}={id} のラベルが付いたオブジェクトはありません\n"),
                format!("nothing to reset: no objects labelled {LAB_LABEL}={id} in {cluster}\n"),
            ));
        } else if !plan.is_empty()
            && !a.yes
            && !confirmed(&conn, &plan, &surveyed.survey, &frees_text, lang)
        {
            print(&say(
                lang,
                "reset を取り消しました。何も削除していません\n",
                "reset cancelled; nothing deleted\n",
            ));
            return Ok(ExitCode::Ok);
        } else if a.yes && !frees_text.is_empty() {
            print(&say(
                lang,
                format!("reset: {frees_text}"),
                format!("reset {frees_text}"),
            ));
        }
        reset::delete_surveyed(&conn, &req, &mut surveyed, &mut |what| {
            print(&say(
                lang,
                format!("削除しました: {what}\n"),
                format!("deleted {what}\n"),
            ))
        })
        .await?;
        let mut still_terminating = false;
        if ours {
            still_terminating = !wait_gone(&conn, &surveyed, namespace, a.wait, lang).await?;
        } else if ns.is_some() {
            print(&say(
                lang,
                format!("Namespace/{namespace} は残しました: {LAB_LABEL}={id} のラベルがありません\n"),
                format!("kept Namespace/{namespace}: it does not carry {LAB_LABEL}={id}\n"),
            ));
        }
        Ok(report(
            &surveyed.survey,
            &g.live,
            namespace,
            &req.prefix,
            still_terminating,
            lang,
        ))
    })
}

/// `--dry-run`: what reset would delete and keep, from the survey (reads only).
fn dry_run_text(
    conn: &Conn,
    plan: &[String],
    survey: &Survey,
    frees: &str,
    lang: crate::text::Lang,
) -> String {
    let cluster = conn.describe();
    let mut text = if plan.is_empty() {
        say(
            lang,
            format!("reset は {cluster} から何も削除しません（このラボのラベル {LAB_LABEL} の付いたものがありません）\n"),
            format!("reset would delete nothing from {cluster} (nothing carries this lab's {LAB_LABEL} label)\n"),
        )
    } else {
        let list = plan.join("\n  ");
        let mut t = say(
            lang,
            format!("reset は {cluster} から次を削除します:\n  {list}\n"),
            format!("reset would delete from {cluster}:\n  {list}\n"),
        );
        t.push_str(frees);
        t
    };
    if !survey.unlabelled.is_empty() {
        let kept: Vec<String> = survey.unlabelled.iter().map(|f| f.shown(lang)).collect();
        let kept = kept.join("\n  ");
        text.push_str(&say(
            lang,
            format!("残すもの（{LAB_LABEL} ラベルがありません）:\n  {kept}\n"),
            format!("and would keep (no {LAB_LABEL} label):\n  {kept}\n"),
        ));
    }
    text.push_str(&say(
        lang,
        "--dry-run: 何も削除していません。削除するには --dry-run を外して実行してください\n",
        "--dry-run: nothing was deleted; run it again without --dry-run to delete\n",
    ));
    text
}

/// Asks on the terminal; true to go on.
fn confirmed(
    conn: &Conn,
    plan: &[String],
    survey: &Survey,
    frees: &str,
    lang: crate::text::Lang,
) -> bool {
    let (cluster, list) = (conn.describe(), plan.join("\n  "));
    let mut text = say(
        lang,
        format!("{cluster} から次を削除します:\n  {list}\n{frees}"),
        format!("This deletes from {cluster}:\n  {list}\n{frees}"),
    );
    if !survey.unlabelled.is_empty() {
        let kept: Vec<String> = survey.unlabelled.iter().map(|f| f.shown(lang)).collect();
        let kept = kept.join("\n  ");
        text.push_str(&say(
            lang,
            format!("残すもの（{LAB_LABEL} ラベルがありません）:\n  {kept}\n"),
            format!("and keeps (no {LAB_LABEL} label):\n  {kept}\n"),
        ));
    }
    super::confirm::ask(&text, lang)
}

/// Waits until the namespace is gone (`ops::reset::wait_gone`), drawing its steps, and says so
/// on stdout; true when it is gone.
async fn wait_gone(
    conn: &Conn,
    surveyed: &Surveyed,
    namespace: &str,
    limit: Duration,
    lang: crate::text::Lang,
) -> Result<bool, crate::Error> {
    let gone = reset::wait_gone(conn, surveyed, namespace, limit, lang, &mut Steps::new()).await?;
    if let Some(took) = gone {
        print(&say(
            lang,
            format!(
                "Namespace/{namespace} はなくなりました ({} 秒)\n",
                took.as_secs()
            ),
            format!("Namespace/{namespace} is gone ({}s)\n", took.as_secs()),
        ));
    }
    Ok(gone.is_some())
}

/// Says what is left and why, and picks the exit code: 3 when a kind could not be searched,
/// else 1 when the task's objects were left, else 4 while the namespace still terminates.
fn report(
    survey: &Survey,
    live: &LiveArgs,
    namespace: &str,
    prefix: &str,
    still_terminating: bool,
    lang: crate::text::Lang,
) -> ExitCode {
    let mut out = String::new();
    if still_terminating {
        out.push_str(&say(
            lang,
            format!("Namespace/{namespace} はまだ終了処理中です: なくなるまで `trainlab start` は断ります。`kubectl get namespace {namespace}` で確かめるか、--wait を長くして reset をもう一度実行してください\n"),
            format!("Namespace/{namespace} is still terminating: `trainlab start` refuses it until it is gone; see `kubectl get namespace {namespace}`, or run reset again with a longer --wait\n"),
        ));
    }
    if !survey.unlabelled.is_empty() {
        out.push_str(&say(
            lang,
            format!("クラスターに残っています: 課題が名前を挙げるものですが、{LAB_LABEL} ラベルがないため reset は削除しませんでした。自分のものなら、次で削除してください:\n"),
            format!("left on the cluster: the task names these, but they lack the {LAB_LABEL} label, so reset did not delete them; if they are yours, delete them with:\n"),
        ));
        for f in &survey.unlabelled {
            out.push_str(&format!(
                "  {}\n",
                f.kubectl_delete(live.kubeconfig.as_deref(), live.context.as_deref())
            ));
        }
    }
    if !survey.other_prefix.is_empty() {
        let kept: Vec<String> = survey.other_prefix.iter().map(|f| f.shown(lang)).collect();
        let kept = kept.join(", ");
        out.push_str(&say(
            lang,
            format!("残しました (このラボのラベルはありますが、自分のものではありません: 接頭辞 {prefix} がないか、ほかの受講者のもの): {kept}\n"),
            format!("kept (labelled for this lab, but not yours: without your prefix {prefix}, or another learner's): {kept}\n"),
        ));
    }
    if !survey.not_served.is_empty() {
        let kinds = survey.not_served.join(", ");
        out.push_str(&say(
            lang,
            format!("このクラスターが提供していないため、次の種類のものはありません: {kinds}\n"),
            format!("not served by this cluster, so nothing of these kinds exists: {kinds}\n"),
        ));
    }
    if !survey.unsearchable.is_empty() {
        let kinds = survey.unsearchable.join("\n  ");
        out.push_str(&say(
            lang,
            format!("検索できなかったため、次の種類のオブジェクトが残っているかもしれません:\n  {kinds}\n"),
            format!("could not be searched, so objects of these kinds may be left:\n  {kinds}\n"),
        ));
    }
    print(&out);
    if !survey.unsearchable.is_empty() {
        ExitCode::Environment
    } else if !survey.unlabelled.is_empty() {
        ExitCode::Failed
    } else if still_terminating {
        ExitCode::StillPending
    } else {
        ExitCode::Ok
    }
}
