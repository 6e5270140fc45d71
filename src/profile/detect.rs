//! Capability detection on a live cluster: CRDs through discovery, controller Deployments by
//! name (one small LIST each, `fieldSelector=metadata.name=…`, never every Deployment of the
//! cluster), devices from the nodes already read. Grading and `doctor` share it.

use std::collections::HashMap;

use crate::cluster::{gather, Conn, Discovery};
use crate::facts::capabilities::{self, Capabilities, Capability, Evidence};
use crate::facts::{NodeFacts, Profile};
use crate::observe::{kinds, Query, Unavailable};
use crate::Error;

/// Detects `wanted` capabilities (and nothing else) on the connected cluster.
pub async fn detect(
    conn: &Conn,
    discovery: &Discovery,
    wanted: &[&'static Capability],
    nodes: &[NodeFacts],
    profile: Option<Profile>,
) -> Result<Capabilities, Error> {
    let mut served: HashMap<&'static str, Result<bool, String>> = HashMap::new();
    for cap in wanted {
        for k in cap.kinds {
            let key = k.crd.unwrap_or(k.plural);
            if served.contains_key(key) {
                continue;
            }
            let r = match discovery.resolve(conn, k).await {
                Ok(_) => Ok(true),
                Err(Unavailable::NotServed { .. }) => Ok(false),
                Err(why) => Err(why.to_string()),
            };
            served.insert(key, r);
        }
    }
    let names: Vec<&'static str> = wanted
        .iter()
        .flat_map(|c| c.controllers.iter().copied())
        .collect();
    let queries: Vec<Query> = names
        .iter()
        .map(|n| Query::cluster(&kinds::DEPLOYMENTS).named(n))
        .collect();
    let obs = gather(conn, discovery, &queries).await?;
    let mut available: HashMap<&str, Result<bool, String>> = HashMap::new();
    for (n, q) in names.iter().zip(&queries) {
        let r = match obs.list(q) {
            Ok(deps) => Ok(deps.iter().any(|d| {
                d.name() == *n && d.value["status"]["availableReplicas"].as_i64().unwrap_or(0) > 0
            })),
            Err(why) => Err(format!("cannot tell whether {n} runs: {why}")),
        };
        available.insert(n, r);
    }
    let served_fn = |k: &crate::observe::ResourceKind| {
        served
            .get(k.crd.unwrap_or(k.plural))
            .cloned()
            .unwrap_or(Ok(false))
    };
    let deploy_fn = |n: &str| available.get(n).cloned().unwrap_or(Ok(false));
    let ev = Evidence {
        served: &served_fn,
        deployment_available: &deploy_fn,
        nodes,
        profile,
    };
    Ok(wanted
        .iter()
        .map(|c| (c.name, capabilities::detect(c, &ev)))
        .collect())
}
