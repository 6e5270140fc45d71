//! The kind profile: the cluster layout (kind-config.yaml), the faked accelerator capacity each
//! worker's instance type gets, and installing the pinned operators.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::instances::{self, EFA, GPU, INSTANCE_TYPE_LABEL, NEURON, NEURONCORE};
use crate::cluster::{Conn, Discovery, FIELD_MANAGER};
use crate::facts::unavailable::unavailable_text;
use crate::facts::NodeFacts;
use crate::observe::{parse_text, Obj};
use crate::text::Lang;
use crate::Error;

/// The repository's kind-config.yaml, embedded.
pub const EMBEDDED_CONFIG: &str = include_str!("../../kind-config.yaml");

/// The parts of a kind `Cluster` config (kind.x-k8s.io/v1alpha4, kind pkg/apis/config/v1alpha4/types.go)
/// the profile reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KindConfig {
    pub kind: String,
    pub api_version: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub nodes: Vec<KindNode>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KindNode {
    pub role: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

impl KindConfig {
    pub fn parse(text: &str, file: &str) -> Result<KindConfig, Error> {
        let mut field = String::new();
        let options = serde_saphyr::options! { with_snippet: false };
        let c: KindConfig =
            serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
                serde_path_to_error::deserialize(de).map_err(|e| {
                    field = e.path().to_string();
                    e.into_inner()
                })
            })
            .map_err(|e| {
                Error::usage(
                    format!("{file}: フィールド `{field}`: {e}"),
                    format!("{file}: field `{field}`: {e}"),
                )
            })?;
        if c.kind != "Cluster" || c.api_version != "kind.x-k8s.io/v1alpha4" {
            let (kind, api_version) = (&c.kind, &c.api_version);
            return Err(Error::usage(
                format!("{file}: kind: Cluster、apiVersion: kind.x-k8s.io/v1alpha4 のはずが、kind: {kind}、apiVersion: {api_version} でした"),
                format!("{file}: expected kind: Cluster, apiVersion: kind.x-k8s.io/v1alpha4; found kind: {kind}, apiVersion: {api_version}"),
            ));
        }
        Ok(c)
    }

    pub fn workers(&self) -> impl Iterator<Item = &KindNode> {
        self.nodes.iter().filter(|n| n.role == "worker")
    }
}

/// Node names kind gives workers: `<cluster>-worker`, `<cluster>-worker2`, ...
pub fn worker_name(cluster: &str, index: usize) -> String {
    if index == 0 {
        format!("{cluster}-worker")
    } else {
        format!("{cluster}-worker{}", index + 1)
    }
}

/// The extended resources a kind node with this instance type advertises (from the instance
/// table, the same figures the verifiers use on EKS).
pub fn fake_capacity(instance_type: &str) -> Vec<(&'static str, i64)> {
    let Some(i) = instances::lookup(instance_type) else {
        return Vec::new();
    };
    [
        (GPU, i.gpus),
        (EFA, i.efa),
        (NEURON, i.neuron),
        (NEURONCORE, i.neuroncores),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(r, n)| (r, i64::from(n)))
    .collect()
}

/// One node's missing or wrong capacities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapacityPatch {
    pub node: String,
    pub set: Vec<(&'static str, i64)>,
}

impl CapacityPatch {
    /// The RFC 6902 patch for `PATCH /api/v1/nodes/<node>/status`; `~1` escapes `/` in the
    /// resource name (kubernetes.io/docs/tasks/administer-cluster/extended-resource-node/).
    pub fn json_patch(&self) -> Value {
        Value::Array(
            self.set
                .iter()
                .map(|(res, n)| json!({"op": "add", "path": format!("/status/capacity/{}", res.replace('/', "~1")), "value": n.to_string()}))
                .collect(),
        )
    }
}

/// What to patch so each node's capacity matches its instance type; nothing for nodes that
/// already match (so a second `setup` sends no patch).
pub fn capacity_patches(nodes: &[NodeFacts]) -> Vec<CapacityPatch> {
    nodes
        .iter()
        .filter_map(|n| {
            let it = n.labels.get(INSTANCE_TYPE_LABEL)?;
            let set: Vec<_> = fake_capacity(it)
                .into_iter()
                .filter(|(res, want)| n.capacity.get(*res) != Some(want))
                .collect();
            (!set.is_empty()).then(|| CapacityPatch {
                node: n.name.clone(),
                set,
            })
        })
        .collect()
}

pub async fn patch_capacity(conn: &Conn, p: &CapacityPatch) -> Result<(), Error> {
    let body = serde_json::to_vec(&p.json_patch()).unwrap_or_default();
    let req = http::Request::patch(format!("/api/v1/nodes/{}/status", p.node))
        .header("Content-Type", "application/json-patch+json")
        .body(body)
        .map_err(|e| Error::environment(e.to_string(), e.to_string()))?;
    crate::cluster::with_retry(|| conn.client.request_text(req.clone()))
        .await
        .map(|_| ())
        .map_err(|e| {
            let node = &p.node;
            Error::environment(
                format!("ノード {node} の status へのパッチに失敗しました: {e}"),
                format!("patching node {node} status: {e}"),
            )
        })
}

/// Applies every document of a manifest with server-side apply (field manager `trainlab`).
/// CRDs go first; kinds they define are resolved with fresh discovery afterwards.
pub async fn apply_manifest(conn: &Conn, text: &str, shown: &str) -> Result<usize, Error> {
    apply_objects(conn, parse_text(text, shown)?).await
}

/// [`apply_manifest`] for documents parsed beforehand (`setup kind` parses every pinned file
/// before it writes anything).
pub async fn apply_objects(conn: &Conn, objs: Vec<Obj>) -> Result<usize, Error> {
    let (crds, rest): (Vec<Obj>, Vec<Obj>) = objs
        .into_iter()
        .partition(|o| o.kind() == "CustomResourceDefinition" || o.kind() == "Namespace");
    let mut applied = 0;
    for (batch, discovery) in [(crds, Discovery::new()), (rest, Discovery::new())] {
        for o in &batch {
            apply_object(conn, &discovery, o).await?;
            applied += 1;
        }
    }
    Ok(applied)
}

async fn apply_object(conn: &Conn, discovery: &Discovery, o: &Obj) -> Result<(), Error> {
    use kube::api::{Api, DynamicObject, Patch, PatchParams};
    let (ar, namespaced) = discovery
        .resolve_any(conn, o.api_version(), o.kind())
        .await
        .map_err(|why| {
            let (origin, name) = (&o.origin, o.display_name());
            Error::environment(
                format!("{origin}: {name}: {}", unavailable_text(&why, Lang::Ja)),
                format!("{origin}: {name}: {why}"),
            )
        })?;
    let api: Api<DynamicObject> = match (namespaced, o.namespace()) {
        (true, Some(ns)) => Api::namespaced_with(conn.client.clone(), ns, &ar),
        (true, None) => Api::namespaced_with(conn.client.clone(), "default", &ar),
        (false, _) => Api::all_with(conn.client.clone(), &ar),
    };
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    let patch = Patch::Apply(o.value.as_ref());
    crate::cluster::with_retry(|| api.patch(o.name(), &pp, &patch))
        .await
        .map(|_| ())
        .map_err(|e| {
            let (origin, name) = (&o.origin, o.display_name());
            Error::environment(
                format!("{origin}: {name} を適用できません: {e}"),
                format!("{origin}: applying {name}: {e}"),
            )
        })
}

/// True when a Deployment reports at least one available replica.
pub async fn deployment_available(conn: &Conn, namespace: &str, name: &str) -> bool {
    let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(conn.client.clone(), namespace);
    match api.get_opt(name).await {
        Ok(Some(d)) => d.status.and_then(|s| s.available_replicas).unwrap_or(0) > 0,
        _ => false,
    }
}
