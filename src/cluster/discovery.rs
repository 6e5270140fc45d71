//! Discovery: is a kind served, and under which plural.
//!
//! Where the server serves aggregated discovery (KEP-3352, "Aggregated Discovery": alpha in
//! Kubernetes 1.26, beta and on by default in 1.27, GA in 1.30;
//! https://kubernetes.io/docs/concepts/overview/kubernetes-api/#aggregated-discovery), one GET of `/api` (the core group) and one of `/apis` (every other group) with the
//! `apidiscovery.k8s.io` Accept header ([`AGGREGATED_ACCEPT`]) answer every group/version at once,
//! as an `APIGroupDiscoveryList` (k8s.io/api `apidiscovery/v2`, mirrored by kube-core's
//! `discovery::v2`). A server without it answers the same GETs with the legacy `APIVersions` /
//! `APIGroupList`, which name the group/versions served; each of those is then asked on its own
//! (`/api/v1`, `/apis/<group>/<version>`), once per observation at most.
//!
//! With a disk cache ([`Discovery::cached`], [`super::cache`]), kinds are resolved from the last
//! run's answers first, without a request; a kind the file does not list (a CRD installed since),
//! or a LIST answered 404 for a kind it does (one removed since), sets the file's answer for that
//! group/version aside for the rest of the run and the server is asked (kubectl's `Invalidate()`
//! and retry once). kubectl sets its whole cache aside; here the kinds the file does list are
//! still read at once, beside the one lookup, and the file is rewritten with what the server
//! said.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kube::discovery::ApiResource;
use serde::Deserialize;
use tokio::sync::{Mutex, OnceCell};

use super::cache::{self, DiskCache, Lookup, Served, Snapshot};
use super::retry::{api_error, credentials_text, is_credentials_error, with_retry};
use super::Conn;
use crate::catalog::Text;
use crate::observe::{ResourceKind, Unavailable};

/// The Accept header of aggregated discovery, newest first, then the legacy documents: kubectl's
/// (k8s.io/client-go `discovery/discovery_client.go`, `AcceptV2` + `AcceptV2Beta1` + legacy JSON)
/// and kube-core's `discovery::v2::ACCEPT_AGGREGATED_DISCOVERY_V2`.
pub const AGGREGATED_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// Why a group/version's discovery gave no list.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// Forbidden, failed, timed out: the kinds of this group cannot be read now.
    Unavailable(Unavailable),
    /// The credentials were refused: the message for the whole run (exit 3), in both languages.
    Credentials(Text),
}

impl Failure {
    /// For callers that report per object or per check.
    fn into_unavailable(self) -> Unavailable {
        match self {
            Failure::Unavailable(u) => u,
            Failure::Credentials(message) => Unavailable::Failed {
                message: message.en,
            },
        }
    }
}

/// One group/version's resources, and whether they came from the disk cache.
#[derive(Debug, Clone)]
struct Answer {
    served: Served,
    from_disk: bool,
}

/// An answer filled by the first caller that asks in a round.
struct Entry<T> {
    round: u64,
    cell: Arc<OnceCell<T>>,
}

impl<T> Entry<T> {
    fn new(round: u64) -> Entry<T> {
        Entry {
            round,
            cell: Arc::default(),
        }
    }
}

/// What a discovery root (`/api`, `/apis`) answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RootAnswer {
    /// Aggregated discovery: every group/version under the root, with its resources, or `None`
    /// for a group/version the server marks `Stale` (an aggregated API server it could not
    /// reach: "clients that require the latest version … should not use the aggregated
    /// document" — that one is asked on its own).
    Aggregated(BTreeMap<String, Option<Served>>),
    /// The legacy `APIVersions`/`APIGroupList`: the group/versions served, each asked on its own.
    Legacy(BTreeSet<String>),
    /// Neither (the root is not served, or answered something else): each group/version is
    /// asked on its own, as before roots were asked at all.
    Unknown,
}

/// Resolves kinds for one connection. Concurrent reads of one group/version wait for one answer;
/// the roots are asked once per observation at most. What is kept across observations
/// ([`Discovery::next_round`], called by every `gather`):
/// - an answer that serves the kind asked for: kept for the run;
/// - a failure (timeout, 5xx, 403, 401), a group/version that is not served, or an answer
///   without the kind (a CRD not installed yet): asked again in the next round, so one blip
///   during `--watch` does not stay an error and a CRD installed meanwhile is seen.
#[derive(Default)]
pub struct Discovery {
    round: AtomicU64,
    versions: Mutex<HashMap<String, Entry<Result<Answer, Failure>>>>,
    roots: Mutex<HashMap<&'static str, Entry<Result<RootAnswer, Failure>>>>,
    disk: Option<Box<Disk>>,
}

/// The disk cache of one server, as this run uses it.
struct Disk {
    cache: DiskCache,
    state: std::sync::Mutex<DiskState>,
    /// One write at a time.
    writing: Mutex<()>,
}

#[derive(Default)]
struct DiskState {
    loaded: bool,
    /// The file's snapshot.
    read: Option<Snapshot>,
    /// The group/versions whose file answers were contradicted in this run: the file answers
    /// nothing more about them.
    set_aside: BTreeSet<String>,
    /// What this run read from the server (written over `read`).
    learnt: Option<Snapshot>,
}

impl Disk {
    fn state(&self) -> std::sync::MutexGuard<'_, DiskState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lookup(&self, api_version: &str) -> Lookup {
        let mut state = self.state();
        if state.set_aside.contains(api_version) {
            return Lookup::Unknown;
        }
        if !state.loaded {
            state.loaded = true;
            state.read = self.cache.load(cache::now_secs());
        }
        state
            .read
            .as_ref()
            .map_or(Lookup::Unknown, |s| s.lookup(api_version))
    }

    /// Sets the file's answer for `api_version` aside for the rest of the run.
    fn set_aside(&self, api_version: &str) {
        let mut state = self.state();
        if state.set_aside.insert(api_version.to_string()) {
            if let Some(read) = &mut state.read {
                read.record_version(api_version, None);
            }
        }
    }

    fn is_set_aside(&self, api_version: &str) -> bool {
        self.state().set_aside.contains(api_version)
    }

    /// Records what the server said and rewrites the file.
    async fn learn(&self, record: impl FnOnce(&mut Snapshot)) {
        let _one = self.writing.lock().await;
        let snapshot = {
            let mut state = self.state();
            let learnt = state
                .learnt
                .get_or_insert_with(|| Snapshot::new(self.cache.server(), cache::now_secs()));
            record(learnt);
            let learnt = learnt.clone();
            match &state.read {
                Some(read) => read.overlaid(&learnt),
                None => learnt,
            }
        };
        self.cache.store(&snapshot);
    }
}

impl Discovery {
    /// Discovery that keeps nothing between commands.
    pub fn new() -> Discovery {
        Discovery::default()
    }

    /// Discovery that resolves from, and writes to, the disk cache of `conn`'s server when a
    /// cache folder is set (`ConnectOpts::cache_dir`, from `--cache-dir`); otherwise [`Discovery::new`].
    pub fn cached(conn: &Conn) -> Discovery {
        match conn.cache_dir.as_deref() {
            Some(dir) => Discovery::with_disk_cache(dir, &conn.server),
            None => Discovery::new(),
        }
    }

    /// Discovery over the disk cache of `server` under the cache folder `dir`.
    pub fn with_disk_cache(dir: &std::path::Path, server: &str) -> Discovery {
        Discovery {
            disk: Some(Box::new(Disk {
                cache: DiskCache::new(dir, server),
                state: Default::default(),
                writing: Mutex::new(()),
            })),
            ..Discovery::default()
        }
    }

    /// Starts a new observation: answers that did not serve what was asked are fetched again
    /// when next needed (once per round).
    pub fn next_round(&self) {
        self.round.fetch_add(1, Ordering::SeqCst);
    }

    fn disk_set_aside(&self, api_version: &str) -> bool {
        self.disk
            .as_ref()
            .is_some_and(|d| d.is_set_aside(api_version))
    }

    /// Sets the disk cache's answer for `api_version` aside for the rest of the run (it said
    /// something the server contradicts): it is asked again, of the server.
    pub(crate) fn invalidate_disk(&self, api_version: &str) {
        if let Some(d) = &self.disk {
            d.set_aside(api_version);
        }
    }

    /// Whether `api_version` was last answered from the disk cache (so a LIST answered 404 for
    /// one of its kinds contradicts the file).
    pub(crate) async fn answered_from_disk(&self, api_version: &str) -> bool {
        let versions = self.versions.lock().await;
        versions
            .get(api_version)
            .and_then(|e| e.cell.get())
            .is_some_and(|a| {
                matches!(
                    a,
                    Ok(Answer {
                        from_disk: true,
                        ..
                    })
                )
            })
    }

    /// The resources served under a group/version; `wanted` says whether an answer from an
    /// earlier round can be reused.
    async fn resources(
        &self,
        conn: &Conn,
        api_version: &str,
        wanted: impl Fn(&Served) -> bool,
    ) -> Result<Answer, Failure> {
        let round = self.round.load(Ordering::SeqCst);
        let set_aside = self.disk_set_aside(api_version);
        let cell = {
            let mut versions = self.versions.lock().await;
            let entry = versions
                .entry(api_version.to_string())
                .or_insert_with(|| Entry::new(round));
            // An answer still being fetched is awaited whatever its round.
            let stale = match entry.cell.get() {
                Some(Ok(a)) if a.from_disk && set_aside => true,
                Some(Ok(a)) => entry.round != round && !wanted(&a.served),
                Some(Err(_)) => entry.round != round,
                None => false,
            };
            if stale {
                *entry = Entry::new(round);
            }
            entry.cell.clone()
        };
        cell.get_or_init(|| self.answer(conn, api_version))
            .await
            .clone()
    }

    /// A group/version's answer: from the disk cache when it can tell, else from the server
    /// (its root first, then the group/version itself when the root cannot tell).
    async fn answer(&self, conn: &Conn, api_version: &str) -> Result<Answer, Failure> {
        if let Some(disk) = &self.disk {
            match disk.lookup(api_version) {
                Lookup::Known(served) => {
                    return Ok(Answer {
                        served,
                        from_disk: true,
                    })
                }
                Lookup::Absent => {
                    return Ok(Answer {
                        served: Vec::new(),
                        from_disk: true,
                    })
                }
                // Served, resources not kept: only this group/version needs asking.
                Lookup::Listed => return self.version(conn, api_version).await,
                Lookup::Unknown => {}
            }
        }
        let fresh = |served: Served| Answer {
            served,
            from_disk: false,
        };
        match self.root(conn, cache::root_of(api_version)).await? {
            RootAnswer::Aggregated(all) => match all.get(api_version) {
                Some(Some(served)) => Ok(fresh(served.clone())),
                Some(None) => self.version(conn, api_version).await,
                None => Ok(fresh(Vec::new())),
            },
            RootAnswer::Legacy(listed) if !listed.contains(api_version) => Ok(fresh(Vec::new())),
            RootAnswer::Legacy(_) | RootAnswer::Unknown => self.version(conn, api_version).await,
        }
    }

    /// A root's answer, asked once per round.
    async fn root(&self, conn: &Conn, root: &'static str) -> Result<RootAnswer, Failure> {
        let round = self.round.load(Ordering::SeqCst);
        let cell = {
            let mut roots = self.roots.lock().await;
            let entry = roots.entry(root).or_insert_with(|| Entry::new(round));
            if entry.round != round && entry.cell.initialized() {
                *entry = Entry::new(round);
            }
            entry.cell.clone()
        };
        cell.get_or_init(|| async {
            let answer = fetch_root(conn, root).await;
            if let (Some(disk), Ok(a)) = (&self.disk, &answer) {
                match a {
                    RootAnswer::Aggregated(all) => {
                        let listed = all.keys().cloned().collect();
                        let resources = all
                            .iter()
                            .filter_map(|(gv, s)| Some((gv.clone(), s.clone()?)))
                            .collect();
                        disk.learn(|s| s.record_root(root, listed, Some(resources)))
                            .await;
                    }
                    RootAnswer::Legacy(listed) => {
                        let listed = listed.clone();
                        disk.learn(|s| s.record_root(root, listed, None)).await;
                    }
                    RootAnswer::Unknown => {}
                }
            }
            answer
        })
        .await
        .clone()
    }

    /// One group/version asked on its own.
    async fn version(&self, conn: &Conn, api_version: &str) -> Result<Answer, Failure> {
        let answer = fetch(conn, api_version).await;
        if let (Some(disk), Ok(served)) = (&self.disk, &answer) {
            let served = served.clone();
            disk.learn(|s| s.record_version(api_version, served)).await;
        }
        answer.map(|served| Answer {
            served: served.unwrap_or_default(),
            from_disk: false,
        })
    }

    /// The ApiResource for a known kind, or why it cannot be read.
    pub async fn resolve(
        &self,
        conn: &Conn,
        kind: &ResourceKind,
    ) -> Result<ApiResource, Unavailable> {
        self.resolve_kind(conn, kind)
            .await
            .map_err(Failure::into_unavailable)
    }

    /// The resources of `api_version` that `wanted` accepts; a disk answer without them is set
    /// aside and the server asked, once.
    async fn served_with(
        &self,
        conn: &Conn,
        api_version: &str,
        wanted: impl Fn(&Served) -> bool + Copy,
    ) -> Result<Served, Failure> {
        let answer = self.resources(conn, api_version, wanted).await?;
        if answer.from_disk && !wanted(&answer.served) {
            self.invalidate_disk(api_version);
            return Ok(self.resources(conn, api_version, wanted).await?.served);
        }
        Ok(answer.served)
    }

    /// The API resource of a kind, for a WATCH of it (`grade::follow`): a kind that is not
    /// served, or whose discovery failed, is that kind's answer; refused credentials are the
    /// run's error.
    pub async fn api_resource(
        &self,
        conn: &Conn,
        kind: &ResourceKind,
    ) -> Result<Result<ApiResource, Unavailable>, crate::Error> {
        match self.resolve_kind(conn, kind).await {
            Ok(ar) => Ok(Ok(ar)),
            Err(Failure::Unavailable(u)) => Ok(Err(u)),
            Err(Failure::Credentials(message)) => Err(crate::Error::Environment(message)),
        }
    }

    /// [`Discovery::resolve`], keeping refused credentials apart (gather stops on them).
    pub(crate) async fn resolve_kind(
        &self,
        conn: &Conn,
        kind: &ResourceKind,
    ) -> Result<ApiResource, Failure> {
        let api_version = kind.api_version();
        let has = |served: &Served| {
            served
                .iter()
                .any(|(k, p, _)| k == kind.kind && p == kind.plural)
        };
        let served = self.served_with(conn, &api_version, has).await?;
        if !has(&served) {
            return Err(Failure::Unavailable(Unavailable::NotServed {
                resource: kind.resource_name(),
                crd: kind.crd.unwrap_or(kind.plural).to_string(),
                capability: kind.capability.map(str::to_string),
            }));
        }
        Ok(ApiResource {
            group: kind.group.to_string(),
            version: kind.version.to_string(),
            api_version,
            kind: kind.kind.to_string(),
            plural: kind.plural.to_string(),
        })
    }

    /// The ApiResource for any apiVersion/kind (for applying manifests), via discovery.
    pub async fn resolve_any(
        &self,
        conn: &Conn,
        api_version: &str,
        kind: &str,
    ) -> Result<(ApiResource, bool), Unavailable> {
        let has = |served: &Served| served.iter().any(|(k, _, _)| k == kind);
        let served = self
            .served_with(conn, api_version, has)
            .await
            .map_err(Failure::into_unavailable)?;
        let (_, plural, namespaced) =
            served
                .iter()
                .find(|(k, _, _)| k == kind)
                .ok_or_else(|| Unavailable::NotServed {
                    resource: format!("{kind} ({api_version})"),
                    crd: format!("for {kind} in {api_version}"),
                    capability: None,
                })?;
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.to_string()),
        };
        Ok((
            ApiResource {
                group,
                version,
                api_version: api_version.to_string(),
                kind: kind.to_string(),
                plural: plural.clone(),
            },
            *namespaced,
        ))
    }
}

/// One GET of a discovery root (with retries), asking for aggregated discovery.
async fn fetch_root(conn: &Conn, root: &'static str) -> Result<RootAnswer, Failure> {
    let answer = with_retry(|| {
        let client = conn.client.clone();
        async move {
            let request = http::Request::get(root)
                .header(http::header::ACCEPT, AGGREGATED_ACCEPT)
                .body(Vec::new())
                .map_err(kube::Error::HttpError)?;
            client.request_text(request).await
        }
    })
    .await;
    match answer {
        Ok(text) => Ok(parse_root(root, &text)),
        Err(e) if is_credentials_error(&e) => Err(Failure::Credentials(credentials_text(conn, &e))),
        Err(e) => match api_error(&e) {
            // Not served, or not in a form asked for: each group/version on its own.
            Some((404 | 406, _)) => Ok(RootAnswer::Unknown),
            Some((403, msg)) => Err(Failure::Unavailable(Unavailable::Forbidden {
                verb: "get".into(),
                resource: format!("discovery ({root})"),
                namespace: None,
                message: msg,
            })),
            _ => Err(Failure::Unavailable(Unavailable::Failed {
                message: format!(
                    "discovery ({root}) failed: {}",
                    super::retry::describe(&e, conn.timeout)
                ),
            })),
        },
    }
}

/// What a root's answer says. A body that is none of the three documents is [`RootAnswer::Unknown`].
pub(crate) fn parse_root(root: &str, text: &str) -> RootAnswer {
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        kind: String,
        #[serde(default, rename = "apiVersion")]
        api_version: String,
    }
    #[derive(Deserialize)]
    struct ApiVersions {
        #[serde(default)]
        versions: Vec<String>,
    }
    #[derive(Deserialize)]
    struct GroupList {
        #[serde(default)]
        groups: Vec<Group>,
    }
    #[derive(Deserialize)]
    struct Group {
        #[serde(default)]
        versions: Vec<GroupVersion>,
    }
    #[derive(Deserialize)]
    struct GroupVersion {
        #[serde(default, rename = "groupVersion")]
        group_version: String,
    }
    let Ok(head) = serde_json::from_str::<Head>(text) else {
        return RootAnswer::Unknown;
    };
    match head.kind.as_str() {
        "APIGroupDiscoveryList" if head.api_version.starts_with("apidiscovery.k8s.io/") => {
            match serde_json::from_str::<kube::core::discovery::v2::APIGroupDiscoveryList>(text) {
                Ok(list) => RootAnswer::Aggregated(aggregated(root, list)),
                Err(_) => RootAnswer::Unknown,
            }
        }
        "APIVersions" if root == "/api" => match serde_json::from_str::<ApiVersions>(text) {
            Ok(v) => RootAnswer::Legacy(v.versions.into_iter().collect()),
            Err(_) => RootAnswer::Unknown,
        },
        "APIGroupList" if root == "/apis" => match serde_json::from_str::<GroupList>(text) {
            Ok(g) => RootAnswer::Legacy(
                g.groups
                    .into_iter()
                    .flat_map(|g| g.versions)
                    .map(|v| v.group_version)
                    .filter(|gv| gv.contains('/'))
                    .collect(),
            ),
            Err(_) => RootAnswer::Unknown,
        },
        _ => RootAnswer::Unknown,
    }
}

/// Every group/version of an aggregated answer with (kind, plural, namespaced) of its resources
/// (subresources are nested in aggregated discovery, so none is listed here).
fn aggregated(
    root: &str,
    list: kube::core::discovery::v2::APIGroupDiscoveryList,
) -> BTreeMap<String, Option<Served>> {
    let mut out = BTreeMap::new();
    for group in list.items {
        let name = group.metadata.and_then(|m| m.name).unwrap_or_default();
        // `/api` lists the core group, whose name is empty; `/apis` never does.
        if (root == "/api") != name.is_empty() {
            continue;
        }
        for v in group.versions {
            let Some(version) = v.version.filter(|v| !v.is_empty()) else {
                continue;
            };
            let gv = if name.is_empty() {
                version
            } else {
                format!("{name}/{version}")
            };
            if v.freshness.as_deref() == Some("Stale") {
                out.insert(gv, None);
                continue;
            }
            let served = v
                .resources
                .into_iter()
                .filter_map(|r| {
                    let plural = r.resource.filter(|p| !p.is_empty() && !p.contains('/'))?;
                    let kind = r.response_kind.and_then(|k| k.kind)?;
                    Some((kind, plural, r.scope.as_deref() == Some("Namespaced")))
                })
                .collect();
            out.insert(gv, Some(served));
        }
    }
    out
}

/// One group/version's discovery request (with retries): what it serves (`None`: not served,
/// 404), or why it cannot be read.
async fn fetch(conn: &Conn, api_version: &str) -> Result<Option<Served>, Failure> {
    let answer = if api_version.contains('/') {
        with_retry(|| conn.client.list_api_group_resources(api_version)).await
    } else {
        with_retry(|| conn.client.list_core_api_resources(api_version)).await
    };
    match answer {
        Ok(list) => Ok(Some(
            list.resources
                .into_iter()
                .filter(|r| !r.name.contains('/'))
                .map(|r| (r.kind, r.name, r.namespaced))
                .collect(),
        )),
        Err(e) if is_credentials_error(&e) => Err(Failure::Credentials(credentials_text(conn, &e))),
        Err(e) => match api_error(&e) {
            Some((404, _)) => Ok(None),
            Some((403, msg)) => Err(Failure::Unavailable(Unavailable::Forbidden {
                verb: "get".into(),
                resource: format!("discovery of {api_version}"),
                namespace: None,
                message: msg,
            })),
            _ => Err(Failure::Unavailable(Unavailable::Failed {
                message: format!("discovery of {api_version} failed: {e}"),
            })),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_aggregated_answer_lists_every_group_version_with_its_kinds() {
        let apis = json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [
                {"metadata": {"name": "apps"}, "versions": [{"version": "v1", "freshness": "Current", "resources": [
                    {"resource": "deployments", "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                     "scope": "Namespaced", "singularResource": "deployment", "verbs": ["list"],
                     "subresources": [{"subresource": "status", "verbs": ["get"]}]}
                ]}]},
                {"metadata": {"name": "karpenter.sh"}, "versions": [{"version": "v1", "resources": [
                    {"resource": "nodepools", "responseKind": {"kind": "NodePool"}, "scope": "Cluster", "verbs": ["list"]}
                ]}]},
                {"metadata": {"name": "metrics.k8s.io"}, "versions": [{"version": "v1beta1", "freshness": "Stale", "resources": []}]}
            ]
        });
        let RootAnswer::Aggregated(all) = parse_root("/apis", &apis.to_string()) else {
            panic!("not aggregated");
        };
        let own = |k: &str, p: &str, ns: bool| (k.to_string(), p.to_string(), ns);
        assert_eq!(
            all,
            BTreeMap::from([
                (
                    "apps/v1".to_string(),
                    Some(vec![own("Deployment", "deployments", true)])
                ),
                (
                    "karpenter.sh/v1".to_string(),
                    Some(vec![own("NodePool", "nodepools", false)])
                ),
                ("metrics.k8s.io/v1beta1".to_string(), None),
            ])
        );
        let core = json!({
            "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2beta1",
            "items": [{"metadata": {"creationTimestamp": null}, "versions": [{"version": "v1", "resources": [
                {"resource": "pods", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "scope": "Namespaced"}
            ]}]}]
        });
        assert_eq!(
            parse_root("/api", &core.to_string()),
            RootAnswer::Aggregated(BTreeMap::from([(
                "v1".to_string(),
                Some(vec![own("Pod", "pods", true)])
            )]))
        );
    }

    #[test]
    fn legacy_answers_name_the_group_versions_and_anything_else_is_unknown() {
        let versions = json!({"kind": "APIVersions", "versions": ["v1"]});
        assert_eq!(
            parse_root("/api", &versions.to_string()),
            RootAnswer::Legacy(BTreeSet::from(["v1".to_string()]))
        );
        let groups = json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}]},
            {"name": "kubeflow.org", "versions": [
                {"groupVersion": "kubeflow.org/v2beta1", "version": "v2beta1"},
                {"groupVersion": "kubeflow.org/v1", "version": "v1"}]}
        ]});
        assert_eq!(
            parse_root("/apis", &groups.to_string()),
            RootAnswer::Legacy(BTreeSet::from([
                "apps/v1".to_string(),
                "kubeflow.org/v1".to_string(),
                "kubeflow.org/v2beta1".to_string()
            ]))
        );
        for other in [
            "<html>proxy</html>",
            "{}",
            r#"{"kind": "Status", "code": 200}"#,
            r#"{"kind": "APIGroupDiscoveryList", "apiVersion": "v1", "items": []}"#,
            r#"{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": 3}"#,
        ] {
            assert_eq!(parse_root("/apis", other), RootAnswer::Unknown, "{other}");
        }
        // A root never speaks for the other one's groups.
        assert_eq!(
            parse_root("/apis", &versions.to_string()),
            RootAnswer::Unknown
        );
    }
}
