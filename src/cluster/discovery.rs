//! Discovery: is a kind served, and under which plural. One request per group/version per
//! observation at most; only answers that name the kind are kept for the rest of the run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kube::discovery::ApiResource;
use tokio::sync::{Mutex, OnceCell};

use super::retry::{api_error, credentials_text, is_credentials_error, with_retry};
use super::Conn;
use crate::catalog::Text;
use crate::observe::{ResourceKind, Unavailable};

/// (kind, plural, namespaced) of one served resource.
type Served = Vec<(String, String, bool)>;

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

/// One group/version's discovery answer, filled by the first caller that asks in a round.
struct Entry {
    round: u64,
    cell: Arc<OnceCell<Result<Served, Failure>>>,
}

/// Caches `/api/v1` and `/apis/<group>/<version>` answers. Concurrent reads of one
/// group/version wait for a single discovery request. What is kept across observations
/// ([`Discovery::next_round`], called by every `gather`):
/// - an answer that serves the kind asked for: kept for the run;
/// - a failure (timeout, 5xx, 403, 401), a group/version that is not served (404), or an
///   answer without the kind (a CRD not installed yet): asked again in the next round, so one
///   blip during `--watch` does not stay an error and a CRD installed meanwhile is seen.
#[derive(Default)]
pub struct Discovery {
    round: AtomicU64,
    cache: Mutex<HashMap<String, Entry>>,
}

impl Discovery {
    pub fn new() -> Discovery {
        Discovery::default()
    }

    /// Starts a new observation: answers that did not serve what was asked are fetched again
    /// when next needed (once per round).
    pub fn next_round(&self) {
        self.round.fetch_add(1, Ordering::SeqCst);
    }

    /// The (kind, plural, namespaced) entries served under a group/version; `wanted` says
    /// whether an answer from an earlier round can be reused.
    async fn resources(
        &self,
        conn: &Conn,
        api_version: &str,
        wanted: impl Fn(&Served) -> bool,
    ) -> Result<Served, Failure> {
        let round = self.round.load(Ordering::SeqCst);
        let cell = {
            let mut cache = self.cache.lock().await;
            let entry = cache
                .entry(api_version.to_string())
                .or_insert_with(|| Entry {
                    round,
                    cell: Arc::default(),
                });
            // An answer still being fetched is awaited whatever its round.
            let stale = entry.round != round
                && match entry.cell.get() {
                    Some(Ok(served)) => !wanted(served),
                    Some(Err(_)) => true,
                    None => false,
                };
            if stale {
                *entry = Entry {
                    round,
                    cell: Arc::default(),
                };
            }
            entry.cell.clone()
        };
        cell.get_or_init(|| fetch(conn, api_version)).await.clone()
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
        let served = self.resources(conn, &api_version, has).await?;
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
            .resources(conn, api_version, has)
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

/// One discovery request (with retries): what a group/version serves, or why it cannot be read.
async fn fetch(conn: &Conn, api_version: &str) -> Result<Served, Failure> {
    let answer = if api_version.contains('/') {
        with_retry(|| conn.client.list_api_group_resources(api_version)).await
    } else {
        with_retry(|| conn.client.list_core_api_resources(api_version)).await
    };
    match answer {
        Ok(list) => Ok(list
            .resources
            .into_iter()
            .filter(|r| !r.name.contains('/'))
            .map(|r| (r.kind, r.name, r.namespaced))
            .collect()),
        Err(e) if is_credentials_error(&e) => Err(Failure::Credentials(credentials_text(conn, &e))),
        Err(e) => match api_error(&e) {
            Some((404, _)) => Ok(Vec::new()),
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
