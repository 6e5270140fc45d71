//! Discovery, once per group/version per run: is a kind served, and under which plural.

use std::collections::HashMap;
use std::sync::Arc;

use kube::discovery::ApiResource;
use tokio::sync::{Mutex, OnceCell};

use super::retry::{api_error, with_retry};
use super::Conn;
use crate::observe::{ResourceKind, Unavailable};

/// (kind, plural, namespaced) of one served resource.
type Served = Vec<(String, String, bool)>;
/// One group/version's discovery answer, filled by the first caller that asks.
type Cell = Arc<OnceCell<Result<Served, Unavailable>>>;

/// Caches `/api/v1` and `/apis/<group>/<version>` answers for the run. One cell per
/// group/version, so concurrent LISTs of one group wait for a single discovery request instead
/// of each sending their own.
#[derive(Default)]
pub struct Discovery {
    cache: Mutex<HashMap<String, Cell>>,
}

impl Discovery {
    pub fn new() -> Discovery {
        Discovery::default()
    }

    /// The (kind, plural, namespaced) entries served under a group/version.
    async fn resources(&self, conn: &Conn, api_version: &str) -> Result<Served, Unavailable> {
        let cell = self
            .cache
            .lock()
            .await
            .entry(api_version.to_string())
            .or_default()
            .clone();
        cell.get_or_init(|| fetch(conn, api_version)).await.clone()
    }

    /// The ApiResource for a known kind, or why it cannot be read.
    pub async fn resolve(
        &self,
        conn: &Conn,
        kind: &ResourceKind,
    ) -> Result<ApiResource, Unavailable> {
        let api_version = kind.api_version();
        let served = self.resources(conn, &api_version).await?;
        if !served
            .iter()
            .any(|(k, plural, _)| k == kind.kind && plural == kind.plural)
        {
            return Err(Unavailable::NotServed {
                resource: kind.resource_name(),
                crd: kind.crd.unwrap_or(kind.plural).to_string(),
                capability: kind.capability.map(str::to_string),
            });
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
        let served = self.resources(conn, api_version).await?;
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
async fn fetch(conn: &Conn, api_version: &str) -> Result<Served, Unavailable> {
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
        Err(e) => match api_error(&e) {
            Some((404, _)) => Ok(Vec::new()),
            Some((403, msg)) => Err(Unavailable::Forbidden {
                verb: "get".into(),
                resource: format!("discovery of {api_version}"),
                namespace: None,
                message: msg,
            }),
            _ => Err(Unavailable::Failed {
                message: format!("discovery of {api_version} failed: {e}"),
            }),
        },
    }
}
