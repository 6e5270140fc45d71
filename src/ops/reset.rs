//! `reset`: what a lab put on the cluster, found and deleted. Deleted: the lab namespace when
//! trainlab created it (it carries `trainlab.dev/lab=<id>`), and every object labelled
//! `trainlab.dev/lab=<id>` of the kinds the lab deals with — the kinds its verifier reads and
//! those of its `starter/`, `draft/` and `solution/` — cluster-scoped ones (a NodePool), and
//! namespaced ones in a namespace trainlab did not create. Nothing unlabelled is ever deleted:
//! an object the task names that exists without the label is reported, as are kinds the cluster
//! does not serve or that could not be searched.
//!
//! In a workshop (a name prefix `alice-`) only that learner's cluster-scoped objects go: those
//! named with the prefix, not another learner's (see [`is_theirs`]).

use std::path::Path;
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;

use crate::catalog::LabBundle;
use crate::cluster::gather;
use crate::cluster::{
    api_error, credentials_error, delete, is_credentials_error, labelled, with_retry, Conn,
    Discovery, LAB_LABEL,
};
use crate::observe::{kinds, Obj, Query, Unavailable};
use crate::ops::capacity::Capacity;
use crate::ops::manifests::{lab_kinds, task_objects, LabKind};
use crate::ops::setup::{StepProgress, Steps as _};
use crate::text::say;
use crate::text::Lang;

/// A resolved reset: which lab, its namespace, and the learner's prefix of cluster-scoped names.
pub struct ResetRequest<'a> {
    pub bundle: &'a LabBundle,
    pub namespace: String,
    pub prefix: String,
    /// The language what reset deleted is said in.
    pub lang: Lang,
}

/// The lab namespace as reset found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceState {
    /// It carries `trainlab.dev/lab=<id>`: trainlab created it, and reset deletes it whole.
    pub ours: bool,
    /// It is already being deleted.
    pub terminating: bool,
}

/// Everything reset found before deleting anything.
pub struct Surveyed {
    pub survey: Survey,
    /// None: the namespace does not exist.
    pub namespace: Option<NamespaceState>,
    namespace_resource: ApiResource,
}

impl Surveyed {
    /// What deleting would remove, one line each, the namespace first.
    pub fn plan(&self, namespace: &str, lang: Lang) -> Vec<String> {
        let mut plan: Vec<String> = self.survey.labelled.iter().map(|f| f.shown(lang)).collect();
        if self.namespace.is_some_and(|n| n.ours && !n.terminating) {
            plan.insert(
                0,
                say(
                    lang,
                    format!("Namespace/{namespace}（中のものすべて）"),
                    format!("Namespace/{namespace} (and everything in it)"),
                ),
            );
        }
        plan
    }
}

/// Finds what `req` would delete and what it would leave; reads only (labels and metadata).
pub async fn survey(conn: &Conn, req: &ResetRequest<'_>) -> Result<Surveyed, crate::Error> {
    let b = req.bundle;
    let id = &b.lab.id;
    let kinds = lab_kinds(b)?;
    let named = task_objects(b)?;
    let discovery = Discovery::new();
    let (ns_ar, _) = discovery
        .resolve_any(conn, "v1", "Namespace")
        .await
        .map_err(|e| {
            crate::Error::environment(
                crate::facts::unavailable::unavailable_text(&e, crate::text::Lang::Ja),
                e.to_string(),
            )
        })?;
    let ns_now = get_labels(conn, &ns_ar, None, &req.namespace).await?;
    let namespace = ns_now.as_ref().map(|(labels, terminating)| NamespaceState {
        ours: labels.get(LAB_LABEL) == Some(id),
        terminating: *terminating,
    });
    let mut survey = Survey::default();
    let served = resolve_kinds(conn, &discovery, &kinds, &mut survey).await;
    // Namespaced objects go with a namespace trainlab created; in an absent one there are none.
    let searched_ns = namespace
        .is_some_and(|n| !n.ours)
        .then_some(req.namespace.as_str());
    let prefix = req.prefix.as_str();
    find_labelled(conn, &served, &named, searched_ns, id, prefix, &mut survey).await;
    find_unlabelled(conn, &served, &named, searched_ns, id, prefix, &mut survey).await;
    Ok(Surveyed {
        survey,
        namespace,
        namespace_resource: ns_ar,
    })
}

/// The accelerated capacity the lab's pods hold now, which deleting them frees: every unfinished
/// pod of a namespace trainlab created, or the lab-labelled pods of one it did not. None when
/// there is no namespace or its pods cannot be listed (a reset needs no pod reads: it then only
/// cannot say).
pub async fn frees(conn: &Conn, req: &ResetRequest<'_>, surveyed: &Surveyed) -> Option<Capacity> {
    let ns = surveyed.namespace?;
    let mut q = Query::new(&kinds::PODS, &req.namespace);
    if !ns.ours {
        q = q.with_selector(&format!("{LAB_LABEL}={}", req.bundle.lab.id));
    }
    let obs = gather(conn, &Discovery::new(), std::slice::from_ref(&q))
        .await
        .ok()?;
    let pods: Vec<Obj> = obs.list(&q).ok()?.into_iter().cloned().collect();
    Some(Capacity::of(&pods))
}

/// Deletes what the survey found labelled, what was built on the starter's objects first (a
/// NodePool before its node class), then the namespace when trainlab created it. `deleted`
/// hears each object as it goes.
pub async fn delete_surveyed(
    conn: &Conn,
    req: &ResetRequest<'_>,
    surveyed: &mut Surveyed,
    deleted: &mut dyn FnMut(&str),
) -> Result<(), crate::Error> {
    surveyed.survey.labelled.sort_by_key(|f| f.starter);
    for f in &surveyed.survey.labelled {
        delete(conn, &f.resource, f.namespace.as_deref(), &f.name).await?;
        deleted(&f.shown(req.lang));
    }
    if surveyed.namespace.is_some_and(|n| n.ours && !n.terminating) {
        delete(conn, &surveyed.namespace_resource, None, &req.namespace).await?;
        deleted(&format!("Namespace/{}", req.namespace));
    }
    Ok(())
}

/// Whether the lab namespace still exists (one metadata read).
pub async fn namespace_present(
    conn: &Conn,
    surveyed: &Surveyed,
    namespace: &str,
) -> Result<bool, crate::Error> {
    Ok(
        get_labels(conn, &surveyed.namespace_resource, None, namespace)
            .await?
            .is_some(),
    )
}

/// One object on the cluster: its resource, namespace (None: cluster-scoped) and name.
pub struct Found {
    pub resource: ApiResource,
    pub namespace: Option<String>,
    pub name: String,
    /// Of a kind `starter/` has: deleted after the others (a NodePool before its node class).
    pub starter: bool,
}

impl Found {
    pub fn shown(&self, lang: Lang) -> String {
        let (kind, name) = (&self.resource.kind, &self.name);
        match &self.namespace {
            Some(ns) => say(
                lang,
                format!("{kind}/{name}（名前空間 {ns}）"),
                format!("{kind}/{name} in namespace {ns}"),
            ),
            None => format!("{kind}/{name}"),
        }
    }

    /// The kubectl command that deletes it (`plural.group`, as kubectl names a resource).
    pub fn kubectl_delete(&self, kubeconfig: Option<&Path>, context: Option<&str>) -> String {
        let mut cmd = String::from("kubectl");
        if let Some(k) = kubeconfig {
            cmd.push_str(&format!(" --kubeconfig {}", k.display()));
        }
        if let Some(c) = context {
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
pub struct Survey {
    pub labelled: Vec<Found>,
    /// Named by the task, present, without the label: reported with the command, never deleted.
    pub unlabelled: Vec<Found>,
    /// Labelled cluster-scoped objects that are not the learner's ([`is_theirs`]): kept.
    pub other_prefix: Vec<Found>,
    /// `NodeClaim (karpenter.sh)`: the cluster does not serve it, so none can exist.
    pub not_served: Vec<String>,
    /// Kinds (or named objects) that could not be searched, with why.
    pub unsearchable: Vec<String>,
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
pub fn is_theirs(name: &str, prefix: &str, task_names: &[&str]) -> bool {
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

/// Waits until the lab's namespace is gone, at most `limit`, polling every second; the time it
/// took when it is gone, None when it is still terminating at the limit. The wait is one step
/// for `progress`, with the seconds so far as its news.
pub async fn wait_gone(
    conn: &Conn,
    surveyed: &Surveyed,
    namespace: &str,
    limit: Duration,
    lang: Lang,
    progress: &mut StepProgress,
) -> Result<Option<Duration>, crate::Error> {
    const POLL: Duration = Duration::from_secs(1);
    let started = Instant::now();
    if !namespace_present(conn, surveyed, namespace).await? {
        return Ok(Some(started.elapsed()));
    }
    if limit.is_zero() {
        return Ok(None);
    }
    let what = format!("Namespace/{namespace}");
    let limit_text = humantime::format_duration(limit);
    let step = say(
        lang,
        format!("{what} の終了処理を最長 {limit_text} 待ちます"),
        format!("waiting up to {limit_text} for {what} to finish terminating"),
    );
    progress.start(&step);
    loop {
        let elapsed = started.elapsed();
        if elapsed >= limit {
            progress.failed(&step);
            return Ok(None);
        }
        let (s, of) = (elapsed.as_secs(), limit.as_secs());
        progress.message(&say(
            lang,
            format!("{what} の終了処理中… {s} 秒 / {of} 秒"),
            format!("{what} is terminating… {s}s of {of}s"),
        ));
        tokio::time::sleep(POLL.min(limit - elapsed)).await;
        if !namespace_present(conn, surveyed, namespace).await? {
            progress.done(&step);
            return Ok(Some(started.elapsed()));
        }
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
