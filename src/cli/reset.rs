//! `trainlab reset LAB` — remove what the lab put on the cluster, and say plainly what it did not.
//!
//! Deleted: the lab namespace when trainlab created it (it carries `trainlab.dev/lab=<id>`), and
//! every object labelled `trainlab.dev/lab=<id>` of the kinds the lab deals with — the kinds its
//! verifier reads and those of its `starter/`, `draft/` and `solution/` — cluster-scoped ones
//! (a NodePool), and namespaced ones in a namespace trainlab did not create. Nothing unlabelled
//! is ever deleted. Reported: an object the task names (kind and name in `draft/` or
//! `solution/`) that exists without the label, with the `kubectl delete` command for it; a kind
//! the cluster does not serve; a kind that could not be searched. Then reset waits, bounded, for
//! the namespace to finish terminating, so a following `start` does not race it.
//!
//! In a workshop (`--learner NAME`, or `--name-prefix NAME-`) only that learner's cluster-scoped
//! objects go: those named with the prefix, not another learner's (see [`is_theirs`]).

use std::io::{BufRead, IsTerminal};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;

use super::live::{connect_and_announce, parse_duration, runtime, LiveArgs};
use super::manifests::{lab_kinds, task_objects, LabKind, Placement};
use super::output::eprint;
use super::{print, Global};
use crate::cluster::{
    api_error, credentials_error, delete, is_credentials_error, labelled, with_retry, Conn,
    Discovery, LAB_LABEL,
};
use crate::exit::ExitCode;
use crate::observe::Unavailable;

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
    /// How long to wait for the namespace to finish terminating (0s: do not wait)
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_duration)]
    pub wait: Duration,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// One object on the cluster: its resource, namespace (None: cluster-scoped) and name.
struct Found {
    resource: ApiResource,
    namespace: Option<String>,
    name: String,
    /// Of a kind `starter/` has: deleted after the others (a NodePool before its node class).
    starter: bool,
}

impl Found {
    fn shown(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{} in namespace {ns}", self.resource.kind, self.name),
            None => format!("{}/{}", self.resource.kind, self.name),
        }
    }

    /// The kubectl command that deletes it (`plural.group`, as kubectl names a resource).
    fn kubectl_delete(&self, live: &LiveArgs) -> String {
        let mut cmd = String::from("kubectl");
        if let Some(k) = &live.kubeconfig {
            cmd.push_str(&format!(" --kubeconfig {}", k.display()));
        }
        if let Some(c) = &live.context {
            cmd.push_str(&format!(" --context {c}"));
        }
        let resource = if self.resource.group.is_empty() {
            self.resource.plural.clone()
        } else {
            format!("{}.{}", self.resource.plural, self.resource.group)
        };
        cmd.push_str(&format!(" delete {resource} {}", self.name));
        if let Some(ns) = &self.namespace {
            cmd.push_str(&format!(" -n {ns}"));
        }
        cmd
    }
}

/// A served kind: its resource and whether it is namespaced.
struct Served<'a> {
    kind: &'a LabKind,
    resource: ApiResource,
    namespaced: bool,
}

/// What reset found before deleting anything.
#[derive(Default)]
struct Survey {
    labelled: Vec<Found>,
    /// Named by the task, present, without the label: reported with the command, never deleted.
    unlabelled: Vec<Found>,
    /// Labelled cluster-scoped objects that are not the learner's ([`is_theirs`]): kept.
    other_prefix: Vec<Found>,
    /// `NodeClaim (karpenter.sh)`: the cluster does not serve it, so none can exist.
    not_served: Vec<String>,
    /// Kinds (or named objects) that could not be searched, with why.
    unsearchable: Vec<String>,
}

pub fn run(g: &Global, a: &ResetArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let id = b.lab.id.clone();
    let place = Placement::new(&id, a.namespace.as_deref(), a.learner.as_deref())?;
    // `--learner alice` is `--name-prefix alice-` plus alice's namespace.
    let prefix = match (&a.name_prefix, place.learner.is_some()) {
        (Some(p), true) if *p != place.name_prefix => {
            let (learner, prefix) = (a.learner.as_deref().unwrap_or_default(), &place.name_prefix);
            return Err(crate::Error::usage(
                format!("--learner {learner} ではオブジェクト名の接頭辞が {prefix} になり、--name-prefix {p} とは違います。どちらか一方を指定してください"),
                format!("--learner {learner} names objects with the prefix {prefix}, not --name-prefix {p}; give one of them"),
            ));
        }
        (Some(p), _) => p.clone(),
        (None, _) => place.name_prefix.clone(),
    };
    let namespace = place.namespace.clone();
    if !a.yes && !std::io::stdin().is_terminal() {
        return Err(crate::Error::usage(
            "reset はオブジェクトを削除します。端末以外から実行するときは --yes を付けて確認してください",
            "reset deletes objects; pass --yes to confirm when not on a terminal",
        ));
    }
    let kinds = lab_kinds(b)?;
    let named = task_objects(b)?;
    runtime()?.block_on(async {
        let conn = connect_and_announce(&a.live).await?;
        crate::cluster::probe(&conn).await?;
        let discovery = Discovery::new();
        let (ns_ar, _) = discovery
            .resolve_any(&conn, "v1", "Namespace")
            .await
            .map_err(|e| {
                crate::Error::environment(
                    crate::facts::unavailable::unavailable_text(&e, crate::catalog::Lang::Ja),
                    e.to_string(),
                )
            })?;
        let ns_now = get_labels(&conn, &ns_ar, None, &namespace).await?;
        let ns_ours = ns_now
            .as_ref()
            .is_some_and(|(labels, _)| labels.get(LAB_LABEL) == Some(&id));
        let ns_terminating = ns_now.as_ref().is_some_and(|(_, terminating)| *terminating);
        let prefix = prefix.as_str();
        let mut survey = Survey::default();
        let served = resolve_kinds(&conn, &discovery, &kinds, &mut survey).await;
        // Namespaced objects go with a namespace trainlab created; in an absent one there are none.
        let searched_ns = (ns_now.is_some() && !ns_ours).then_some(namespace.as_str());
        find_labelled(
            &conn,
            &served,
            &named,
            searched_ns,
            &id,
            prefix,
            &mut survey,
        )
        .await;
        find_unlabelled(
            &conn,
            &served,
            &named,
            searched_ns,
            &id,
            prefix,
            &mut survey,
        )
        .await;

        let mut plan: Vec<String> = survey.labelled.iter().map(Found::shown).collect();
        if ns_ours && !ns_terminating {
            plan.insert(0, format!("Namespace/{namespace} (and everything in it)"));
        }
        if ns_ours && ns_terminating {
            print(&format!(
                "Namespace/{namespace} is already terminating (deleted before)\n"
            ));
        }
        if plan.is_empty() && !ns_ours {
            print(&format!(
                "nothing to reset: no objects labelled {LAB_LABEL}={id} in {}\n",
                conn.describe()
            ));
        } else if !plan.is_empty() && !a.yes && !confirmed(&conn, &plan, &survey) {
            print("reset cancelled; nothing deleted\n");
            return Ok(ExitCode::Ok);
        }
        // What was built on the starter's objects goes first (a NodePool before its node class).
        survey.labelled.sort_by_key(|f| f.starter);
        for f in &survey.labelled {
            delete(&conn, &f.resource, f.namespace.as_deref(), &f.name).await?;
            print(&format!("deleted {}\n", f.shown()));
        }
        let mut still_terminating = false;
        if ns_ours {
            if !ns_terminating {
                delete(&conn, &ns_ar, None, &namespace).await?;
                print(&format!("deleted Namespace/{namespace}\n"));
            }
            still_terminating = !wait_gone(&conn, &ns_ar, &namespace, a.wait).await?;
        } else if ns_now.is_some() {
            print(&format!(
                "kept Namespace/{namespace}: it does not carry {LAB_LABEL}={id}\n"
            ));
        }
        Ok(report(
            &survey,
            &a.live,
            &namespace,
            prefix,
            still_terminating,
        ))
    })
}

/// The labels of an object and whether it is being deleted, or None when it does not exist.
/// Metadata only: a Secret's data is never read.
async fn get_labels(
    conn: &Conn,
    resource: &ApiResource,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<(std::collections::BTreeMap<String, String>, bool)>, crate::Error> {
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(conn.client.clone(), ns, resource),
        None => Api::all_with(conn.client.clone(), resource),
    };
    match with_retry(|| api.get_metadata_opt(name)).await {
        Ok(found) => Ok(found.map(|o| {
            let terminating = o.metadata.deletion_timestamp.is_some();
            (o.metadata.labels.unwrap_or_default(), terminating)
        })),
        Err(e) if is_credentials_error(&e) => Err(credentials_error(conn, &e)),
        Err(e) => {
            let kind = &resource.kind;
            let why =
                api_error(&e).map_or_else(|| e.to_string(), |(code, msg)| format!("{code}: {msg}"));
            Err(crate::Error::environment(
                format!("{kind}/{name} を読み取れません: {why}"),
                format!("reading {kind}/{name}: {why}"),
            ))
        }
    }
}

/// Each kind at the first of its apiVersions the cluster serves. A kind served at none is
/// reported as not served (no object of it can exist); one whose discovery failed as not
/// searchable.
async fn resolve_kinds<'a>(
    conn: &Conn,
    discovery: &Discovery,
    kinds: &'a [LabKind],
    survey: &mut Survey,
) -> Vec<Served<'a>> {
    let mut served = Vec::new();
    for kind in kinds {
        let mut failed: Option<String> = None;
        let mut found = None;
        for api_version in &kind.api_versions {
            match discovery.resolve_any(conn, api_version, &kind.kind).await {
                Ok(r) => {
                    found = Some(r);
                    break;
                }
                Err(Unavailable::NotServed { .. }) => {}
                Err(why) => failed = Some(why.to_string()),
            }
        }
        let label = if kind.group.is_empty() {
            kind.kind.clone()
        } else {
            format!("{} ({})", kind.kind, kind.group)
        };
        match (found, failed) {
            (Some((resource, namespaced)), _) => served.push(Served {
                kind,
                resource,
                namespaced,
            }),
            (None, Some(why)) => survey.unsearchable.push(format!("{label}: {why}")),
            (None, None) => survey.not_served.push(label),
        }
    }
    served
}

/// Whether a labelled cluster-scoped object is the one of the learner whose prefix is `prefix`:
/// it carries the prefix, and is not the task's object of a learner whose name starts like it
/// (`alice-b-gpu-training` is learner alice-b's, not alice's). Without a prefix, every one is.
fn is_theirs(name: &str, prefix: &str, task_names: &[&str]) -> bool {
    let Some(rest) = name.strip_prefix(prefix) else {
        return false;
    };
    prefix.is_empty()
        || task_names
            .iter()
            .all(|base| rest == *base || !rest.ends_with(&format!("-{base}")))
}

/// The labelled objects of every served kind: cluster-scoped ones, and namespaced ones in
/// `namespace` (None: namespaced kinds are not searched).
async fn find_labelled(
    conn: &Conn,
    served: &[Served<'_>],
    named: &[(String, String, String)],
    namespace: Option<&str>,
    lab_id: &str,
    prefix: &str,
    survey: &mut Survey,
) {
    for s in served {
        let scope = match (s.namespaced, namespace) {
            (true, None) => continue,
            (true, Some(ns)) => Some(ns),
            (false, _) => None,
        };
        let task_names: Vec<&str> = named
            .iter()
            .filter(|(g, k, _)| *g == s.kind.group && *k == s.kind.kind)
            .map(|(_, _, n)| n.as_str())
            .collect();
        match labelled(conn, &s.resource, scope, lab_id).await {
            Ok(names) => {
                for name in names {
                    let found = Found {
                        resource: s.resource.clone(),
                        namespace: scope.map(str::to_string),
                        starter: s.kind.starter,
                        name,
                    };
                    if !s.namespaced && !is_theirs(&found.name, prefix, &task_names) {
                        survey.other_prefix.push(found);
                    } else {
                        survey.labelled.push(found);
                    }
                }
            }
            Err(e) => survey
                .unsearchable
                .push(format!("{}: {e}", s.resource.kind)),
        }
    }
}

/// The task's objects that exist without the lab label (cluster-scoped names carry `prefix`).
async fn find_unlabelled(
    conn: &Conn,
    served: &[Served<'_>],
    named: &[(String, String, String)],
    namespace: Option<&str>,
    lab_id: &str,
    prefix: &str,
    survey: &mut Survey,
) {
    for (group, kind, base) in named {
        let Some(s) = served
            .iter()
            .find(|s| &s.kind.group == group && &s.kind.kind == kind)
        else {
            continue; // not served: already reported
        };
        let (scope, name) = match (s.namespaced, namespace) {
            (true, None) => continue,
            (true, Some(ns)) => (Some(ns), base.clone()),
            (false, _) => (None, format!("{prefix}{base}")),
        };
        match get_labels(conn, &s.resource, scope, &name).await {
            Ok(Some((labels, _))) if labels.get(LAB_LABEL).map(String::as_str) != Some(lab_id) => {
                survey.unlabelled.push(Found {
                    resource: s.resource.clone(),
                    namespace: scope.map(str::to_string),
                    name,
                    starter: s.kind.starter,
                });
            }
            Ok(_) => {}
            Err(e) => survey.unsearchable.push(e.to_string()),
        }
    }
}

/// Asks on the terminal; true to go on.
fn confirmed(conn: &Conn, plan: &[String], survey: &Survey) -> bool {
    let mut text = format!(
        "This deletes from {}:\n  {}\n",
        conn.describe(),
        plan.join("\n  ")
    );
    if !survey.unlabelled.is_empty() {
        let kept: Vec<String> = survey.unlabelled.iter().map(Found::shown).collect();
        text.push_str(&format!(
            "and keeps (no {LAB_LABEL} label):\n  {}\n",
            kept.join("\n  ")
        ));
    }
    text.push_str("Continue? [y/N] ");
    eprint(&text);
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim(), "y" | "Y" | "yes")
}

/// Waits until the namespace is gone, at most `limit`; true when it is. Progress goes to
/// stderr: a spinner on a terminal, else a line when waiting starts and every 10 s.
async fn wait_gone(
    conn: &Conn,
    ns_ar: &ApiResource,
    namespace: &str,
    limit: Duration,
) -> Result<bool, crate::Error> {
    const POLL: Duration = Duration::from_secs(1);
    const NOTE_EVERY: Duration = Duration::from_secs(10);
    let started = Instant::now();
    if get_labels(conn, ns_ar, None, namespace).await?.is_none() {
        return Ok(true);
    }
    if limit.is_zero() {
        return Ok(false);
    }
    let what = format!("Namespace/{namespace}");
    let limit_text = humantime::format_duration(limit);
    let spinner = std::io::stderr().is_terminal().then(|| {
        let pb = ProgressBar::new_spinner();
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.enable_steady_tick(Duration::from_millis(120));
        pb
    });
    if spinner.is_none() {
        eprint(&format!(
            "waiting up to {limit_text} for {what} to finish terminating\n"
        ));
    }
    let mut noted = Duration::ZERO;
    let gone = loop {
        let elapsed = started.elapsed();
        if elapsed >= limit {
            break false;
        }
        match &spinner {
            Some(pb) => pb.set_message(format!(
                "{what} is terminating… {}s of {}s",
                elapsed.as_secs(),
                limit.as_secs()
            )),
            None if elapsed >= noted + NOTE_EVERY => {
                noted = elapsed;
                eprint(&format!(
                    "{what} still terminating ({}s)\n",
                    elapsed.as_secs()
                ));
            }
            None => {}
        }
        tokio::time::sleep(POLL.min(limit - elapsed)).await;
        if get_labels(conn, ns_ar, None, namespace).await?.is_none() {
            break true;
        }
    };
    if let Some(pb) = spinner {
        pb.finish_and_clear();
    }
    if gone {
        print(&format!(
            "{what} is gone ({}s)\n",
            started.elapsed().as_secs()
        ));
    }
    Ok(gone)
}

/// Says what is left and why, and picks the exit code: 3 when a kind could not be searched,
/// else 1 when the task's objects were left, else 4 while the namespace still terminates.
fn report(
    survey: &Survey,
    live: &LiveArgs,
    namespace: &str,
    prefix: &str,
    still_terminating: bool,
) -> ExitCode {
    let mut out = String::new();
    if still_terminating {
        out.push_str(&format!(
            "Namespace/{namespace} is still terminating: `trainlab start` refuses it until it is gone; see `kubectl get namespace {namespace}`, or run reset again with a longer --wait\n"
        ));
    }
    if !survey.unlabelled.is_empty() {
        out.push_str(&format!(
            "left on the cluster: the task names these, but they lack the {LAB_LABEL} label, so reset did not delete them; if they are yours, delete them with:\n"
        ));
        for f in &survey.unlabelled {
            out.push_str(&format!("  {}\n", f.kubectl_delete(live)));
        }
    }
    if !survey.other_prefix.is_empty() {
        let kept: Vec<String> = survey.other_prefix.iter().map(Found::shown).collect();
        out.push_str(&format!(
            "kept (labelled for this lab, but not yours: without your prefix {prefix}, or another learner's): {}\n",
            kept.join(", ")
        ));
    }
    if !survey.not_served.is_empty() {
        out.push_str(&format!(
            "not served by this cluster, so nothing of these kinds exists: {}\n",
            survey.not_served.join(", ")
        ));
    }
    if !survey.unsearchable.is_empty() {
        out.push_str(&format!(
            "could not be searched, so objects of these kinds may be left:\n  {}\n",
            survey.unsearchable.join("\n  ")
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

#[cfg(test)]
mod tests {
    use super::is_theirs;

    #[test]
    fn a_learners_objects_carry_their_prefix_and_are_not_a_longer_named_learners() {
        let task = ["gpu-training"];
        assert!(is_theirs("alice-gpu-training", "alice-", &task));
        assert!(is_theirs("alice-scratch", "alice-", &task));
        assert!(!is_theirs("bob-gpu-training", "alice-", &task));
        // Learner `alice-b`'s NodePool starts with `alice-` too.
        assert!(!is_theirs("alice-b-gpu-training", "alice-", &task));
        assert!(is_theirs("alice-b-gpu-training", "alice-b-", &task));
        // Without a prefix (one learner per cluster) every labelled object is theirs.
        assert!(is_theirs("bob-gpu-training", "", &task));
        assert!(is_theirs("default", "", &task));
    }
}
