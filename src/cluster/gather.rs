//! The live source: one LIST per distinct query, concurrently, after one reachability probe and
//! cached discovery. Grading 1 lab or 100 learners costs about the same number of requests.

use std::collections::{HashMap, HashSet};

use futures::stream::{self, StreamExt};
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;

use super::discovery::Discovery;
use super::retry::{api_error, is_timeout, with_retry};
use super::Conn;
use crate::observe::{Obj, Observed, Origin, Query, ReadResult, Unavailable};
use crate::Error;

/// At most this many LISTs in flight.
const CONCURRENCY: usize = 8;

/// Deduplicates queries, keeping the first occurrence's order.
pub fn plan(queries: impl IntoIterator<Item = Query>) -> Vec<Query> {
    let mut seen = HashSet::new();
    queries
        .into_iter()
        .filter(|q| seen.insert(q.clone()))
        .collect()
}

/// Fails fast (exit 3) when the API server cannot be reached at all.
pub async fn probe(conn: &Conn) -> Result<k8s_openapi::apimachinery::pkg::version::Info, Error> {
    conn.version
        .get_or_try_init(|| probe_once(conn))
        .await
        .cloned()
}

async fn probe_once(conn: &Conn) -> Result<k8s_openapi::apimachinery::pkg::version::Info, Error> {
    with_retry(|| conn.client.apiserver_version()).await.map_err(|e| {
        let why = if is_timeout(&e) {
            format!("no answer within {}", humantime::format_duration(conn.timeout))
        } else {
            e.to_string()
        };
        Error::Environment(format!(
            "cannot reach the API server of {}: {why}\n  check that the cluster is running and the context is right (`kubectl --context {} get nodes`), or raise --request-timeout",
            conn.describe(),
            conn.context
        ))
    })
}

pub async fn gather(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
) -> Result<Observed, Error> {
    probe(conn).await?;
    let planned = plan(queries.iter().cloned());
    let results: Vec<(Query, ReadResult)> = stream::iter(planned)
        .map(|q| async move {
            let r = list_one(conn, discovery, &q).await;
            (q, r)
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let reads: HashMap<Query, ReadResult> = results.into_iter().collect();
    Ok(Observed::live(conn.context.clone(), reads))
}

async fn list_one(conn: &Conn, discovery: &Discovery, q: &Query) -> ReadResult {
    let ar = discovery.resolve(conn, q.kind).await?;
    let api: Api<DynamicObject> = match &q.namespace {
        Some(ns) if q.kind.namespaced => Api::namespaced_with(conn.client.clone(), ns, &ar),
        _ => Api::all_with(conn.client.clone(), &ar),
    };
    let mut lp = ListParams::default();
    if let Some(sel) = &q.selector {
        lp = lp.labels(sel);
    }
    let list = with_retry(|| api.list(&lp))
        .await
        .map_err(|e| match api_error(&e) {
            Some((403, message)) => Unavailable::Forbidden {
                verb: "list".into(),
                resource: q.kind.resource_name(),
                namespace: q.namespace.clone(),
                message,
            },
            Some((404, _)) => Unavailable::NotServed {
                resource: q.kind.resource_name(),
                crd: q.kind.crd.unwrap_or(q.kind.plural).to_string(),
                capability: q.kind.capability.map(str::to_string),
            },
            _ => Unavailable::Failed {
                message: format!("listing {} failed: {e}", q.describe()),
            },
        })?;
    let mut out = Vec::with_capacity(list.items.len());
    for item in list.items {
        let mut value = serde_json::to_value(&item).unwrap_or(Value::Null);
        // List items of built-in kinds come without apiVersion/kind.
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(q.kind.api_version()));
            map.entry("kind")
                .or_insert_with(|| Value::String(q.kind.kind.to_string()));
        }
        match Obj::new(value, Origin::Live) {
            Ok(o) => out.push(o),
            Err(e) => {
                return Err(Unavailable::Failed {
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}
