//! Capability detection on a live cluster: CRDs through discovery, controller Deployments by
//! name (`fieldSelector=metadata.name=…` for one; several names are one Deployment LIST filtered
//! locally, as `gather` merges a kind's queries when that costs fewer requests — it gives up for
//! a cluster with more Deployments than that many pages hold), devices from the nodes already
//! read. Grading and `doctor` share it; `check` reads the Deployments in the same round as the
//! labs' reads.

use std::collections::HashMap;

use crate::cluster::{gather_more, Conn, Discovery};
use crate::facts::capabilities::{self, Capabilities, Capability, Evidence};
use crate::facts::{NodeFacts, Profile};
use crate::observe::{kinds, Query, ReadResult, Unavailable};
use crate::Error;

/// Detects `wanted` capabilities (and nothing else) on the connected cluster.
pub async fn detect(
    conn: &Conn,
    discovery: &Discovery,
    wanted: &[&'static Capability],
    nodes: &[NodeFacts],
    profile: Option<Profile>,
) -> Result<Capabilities, Error> {
    let queries = controller_queries(wanted);
    let obs = gather_more(conn, discovery, &queries).await?;
    let answer = |q: &Query| obs.list(q).map(|objs| objs.into_iter().cloned().collect());
    Ok(detect_from(conn, discovery, wanted, nodes, profile, &answer).await)
}

/// Resolves the kinds of the `wanted` capabilities, concurrently: run beside a gather, their
/// discovery answers are ready when [`detect_from`] asks (nothing is sent after the LISTs).
pub async fn resolve_kinds(conn: &Conn, discovery: &Discovery, wanted: &[&'static Capability]) {
    let mut seen = std::collections::HashSet::new();
    let kinds: Vec<_> = wanted
        .iter()
        .flat_map(|c| c.kinds.iter())
        .filter(|k| seen.insert(k.resource_name()))
        .collect();
    futures::future::join_all(kinds.into_iter().map(|k| discovery.resolve(conn, k))).await;
}

/// The queries that tell whether the capabilities' controllers run: one Deployment by name each.
pub fn controller_queries(wanted: &[&'static Capability]) -> Vec<Query> {
    wanted
        .iter()
        .flat_map(|c| c.controllers.iter().flat_map(|names| names.iter()))
        .map(|n| Query::cluster(&kinds::DEPLOYMENTS).named(n))
        .collect()
}

/// The one detection rule, with the controllers' Deployments answered by `deployments` (their
/// own small LISTs for `check` and `doctor`; the room's one Deployment LIST for `grade`): CRDs
/// through discovery, a controller runs when its Deployment has an available replica, devices
/// from the nodes.
pub async fn detect_from(
    conn: &Conn,
    discovery: &Discovery,
    wanted: &[&'static Capability],
    nodes: &[NodeFacts],
    profile: Option<Profile>,
    deployments: &dyn Fn(&Query) -> ReadResult,
) -> Capabilities {
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
    let mut available: HashMap<&str, Result<bool, String>> = HashMap::new();
    for n in wanted
        .iter()
        .flat_map(|c| c.controllers.iter().flat_map(|names| names.iter()))
    {
        let q = Query::cluster(&kinds::DEPLOYMENTS).named(n);
        let r = match deployments(&q) {
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
    wanted
        .iter()
        .map(|c| (c.name, capabilities::detect(c, &ev)))
        .collect()
}
