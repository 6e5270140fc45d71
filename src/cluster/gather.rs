//! The live source: one LIST per distinct query (read in pages), concurrently, after one
//! reachability probe and cached discovery. Grading 1 lab or 100 learners costs about the same
//! number of requests.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;

use futures::stream::{self, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::{DynamicObject, ListParams};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::discovery::{Discovery, Failure};
use super::retry::{
    api_error, credentials_error, credentials_text, is_credentials_error, with_retry,
};
use super::Conn;
use crate::observe::{kinds, Obj, Observed, Origin, Query, Unavailable};
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
        if is_credentials_error(&e) {
            return credentials_error(conn, &e);
        }
        if let Some(tls) = super::retry::tls_problem(&e) {
            let server = conn.describe();
            return Error::environment(
                format!("{server} の API サーバーに接続できません: {tls}"),
                format!("cannot connect to the API server of {server}: {tls}"),
            );
        }
        let why = super::retry::describe(&e, conn.timeout);
        if matches!(e, kube::Error::Api(_) | kube::Error::SerdeError(_)) {
            let (server, context) = (conn.describe(), &conn.context);
            return Error::environment(
                format!("{server} のサーバーは応答しましたが、Kubernetes の API サーバーとしての応答ではありません: {why}\n  kubeconfig のサーバー URL を確認してください（`kubectl --context {context} cluster-info`）"),
                format!("the server of {server} answered, but not as a Kubernetes API server: {why}\n  check the server URL in the kubeconfig (`kubectl --context {context} cluster-info`)"),
            );
        }
        Error::environment(
            format!(
                "{} の API サーバーに接続できません: {why}\n  クラスターが動いていて context が正しいか確認するか（`kubectl --context {} get nodes`）、--request-timeout を大きくしてください",
                conn.describe(),
                conn.context
            ),
            format!(
                "cannot reach the API server of {}: {why}\n  check that the cluster is running and the context is right (`kubectl --context {} get nodes`), or raise --request-timeout",
                conn.describe(),
                conn.context
            ),
        )
    })
}

/// One observation: every query's objects, or why it cannot be read. Refused credentials
/// (401) stop the whole observation with one error instead of failing every check.
pub async fn gather(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
) -> Result<Observed, Error> {
    discovery.next_round();
    gather_more(conn, discovery, queries).await
}

/// [`gather`] as more reads of the same observation (capability detection after a check's
/// reads): discovery answers of this round are reused, so a group the cluster does not serve
/// is asked about once per observation, not once per gather.
pub async fn gather_more(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
) -> Result<Observed, Error> {
    let reads = gather_as_in_round(conn, discovery, queries, |raw, q| {
        Obj::new(object_value(raw, q)?, Origin::Live).map_err(|e| e.to_string())
    })
    .await?;
    Ok(Observed::live(
        conn.context.clone(),
        reads.into_iter().collect(),
    ))
}

/// [`gather`], each listed object converted by `convert` from its raw JSON as its page
/// arrives: workshop grading keeps a room's thousands of objects as compact text
/// ([`compact`]) instead of trees of values.
pub async fn gather_as<T: Send>(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
    convert: impl Fn(&RawValue, &Query) -> Result<T, String> + Sync,
) -> Result<Vec<(Query, Result<Vec<T>, Unavailable>)>, Error> {
    discovery.next_round();
    gather_as_in_round(conn, discovery, queries, convert).await
}

async fn gather_as_in_round<T: Send>(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
    convert: impl Fn(&RawValue, &Query) -> Result<T, String> + Sync,
) -> Result<Vec<(Query, Result<Vec<T>, Unavailable>)>, Error> {
    probe(conn).await?;
    let planned = plan(queries.iter().cloned());
    let convert = &convert;
    let results: Vec<(Query, Result<Vec<T>, Failure>)> = stream::iter(planned)
        .map(|q| async move {
            let r = list_one(conn, discovery, &q, convert).await;
            (q, r)
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut reads = Vec::with_capacity(results.len());
    for (q, r) in results {
        let r = match r {
            Ok(objs) => Ok(objs),
            Err(Failure::Credentials(message)) => return Err(Error::Environment(message)),
            Err(Failure::Unavailable(u)) => Err(u),
        };
        reads.push((q, r));
    }
    Ok(reads)
}

/// Objects per LIST request by default (`--chunk-size`): client-go's pager reads in pages of 500
/// (`defaultPageSize` in k8s.io/client-go/tools/pager/pager.go) and so does kubectl, so a big
/// namespace or node list never has to be served and held as one response.
pub const PAGE_SIZE: u32 = 500;

/// One LIST page as the API server sent it. The items stay slices of the response text, so a
/// page is held once, as text; each item becomes a tree of values only while it is converted
/// (a room's pods list is thousands of objects).
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

/// Why a paged LIST stopped.
enum Stop {
    /// The request failed or the answer was not a list.
    Request(kube::Error),
    /// An item of the list is not a Kubernetes object.
    Item(String),
}

/// Every object `lp` selects, read in pages of `chunk` objects with `limit`/`continue` (0: in
/// one response), each item converted by `convert` as its page arrives. When a continue token
/// expires mid-way (410), the list is read again in one request, as client-go's pager does
/// (`FullListIfExpired`, only for page 2 or later).
async fn paged<T, F, Fut>(
    lp: &ListParams,
    chunk: u32,
    mut fetch: F,
    convert: impl Fn(&RawValue) -> Result<T, String>,
) -> Result<Vec<T>, Stop>
where
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<String, kube::Error>>,
{
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut page_params = lp.clone();
        if chunk > 0 {
            page_params = page_params.limit(chunk);
        }
        if let Some(t) = &token {
            page_params = page_params.continue_token(t);
        }
        let text = match with_retry(|| fetch(page_params.clone())).await {
            Ok(text) => text,
            Err(e) if token.is_some() && api_error(&e).is_some_and(|(code, _)| code == 410) => {
                let text = with_retry(|| fetch(lp.clone()))
                    .await
                    .map_err(Stop::Request)?;
                items.clear();
                convert_page(&text, &convert, &mut items)?;
                return Ok(items);
            }
            Err(e) => return Err(Stop::Request(e)),
        };
        match convert_page(&text, &convert, &mut items)? {
            Some(next) => token = Some(next),
            None => return Ok(items),
        }
    }
}

/// Converts one page's items into `out`; returns the continue token, if there is one.
fn convert_page<T>(
    text: &str,
    convert: impl Fn(&RawValue) -> Result<T, String>,
    out: &mut Vec<T>,
) -> Result<Option<String>, Stop> {
    let page: Page =
        serde_json::from_str(text).map_err(|e| Stop::Request(kube::Error::SerdeError(e)))?;
    let items = page.items.unwrap_or_default();
    out.reserve(items.len());
    for raw in items {
        out.push(convert(raw).map_err(Stop::Item)?);
    }
    Ok(page.metadata.continue_.filter(|t| !t.is_empty()))
}

/// One listed object as JSON, without what no check reads and what makes objects big: a room
/// holds thousands of them (see [`strip_metadata`]; a Node's `status.images` lists every image
/// cached on it, k8s.io/api core/v1 `NodeStatus.Images`). Secrets keep their metadata only,
/// whatever the server sent. List items of built-in kinds come without apiVersion/kind: the
/// query says what they are.
fn object_value(raw: &RawValue, q: &Query) -> Result<Value, String> {
    let mut value: Value = if *q.kind == kinds::SECRETS {
        let MetadataOnly { metadata } =
            serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
        serde_json::json!({ "metadata": metadata })
    } else {
        serde_json::from_str(raw.get()).map_err(|e| e.to_string())?
    };
    let Some(map) = value.as_object_mut() else {
        return Ok(value);
    };
    if let Some(meta) = map.get_mut("metadata") {
        strip_metadata(meta);
    }
    if *q.kind == kinds::NODES {
        if let Some(status) = map.get_mut("status") {
            strip_node_status(status);
        }
    }
    map.entry("apiVersion")
        .or_insert_with(|| Value::String(q.kind.api_version()));
    map.entry("kind")
        .or_insert_with(|| Value::String(q.kind.kind.to_string()));
    Ok(value)
}

/// `metadata.managedFields` is often a third of a pod; kubectl's `last-applied-configuration`
/// annotation is a second copy of the whole object (of a Secret, its data: never kept).
fn strip_metadata(meta: &mut Value) {
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    meta.remove("managedFields");
    if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        a.remove(LAST_APPLIED);
    }
}

fn strip_node_status(status: &mut Value) {
    if let Some(status) = status.as_object_mut() {
        status.remove("images");
    }
}

/// A listed object kept as compact JSON text, and its identity.
#[derive(Debug)]
pub struct Compact {
    /// apiVersion, kind and metadata only, checked as [`Obj::new`] checks any object.
    pub header: Obj,
    /// The whole object, stripped as [`object_value`] strips it.
    pub text: String,
}

/// One listed object as [`Compact`] text, parsing only what must change: the metadata (and a
/// Node's status). The rest (spec, status) is copied as the server wrote it, never built into
/// a tree of values: a room reads thousands of objects and judges each learner's later.
pub fn compact(raw: &RawValue, q: &Query) -> Result<Compact, String> {
    if *q.kind == kinds::SECRETS || *q.kind == kinds::NODES {
        // Few, and stripped deeper: the general path.
        let value = object_value(raw, q)?;
        let text = value.to_string();
        let header = header_of(&value)?;
        return Ok(Compact { header, text });
    }
    let top: BTreeMap<String, &RawValue> =
        serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
    let mut fields: BTreeMap<String, Field> =
        top.into_iter().map(|(k, v)| (k, Field::Raw(v))).collect();
    if let Some(Field::Raw(meta)) = fields.get("metadata") {
        let mut meta: Value = serde_json::from_str(meta.get()).map_err(|e| e.to_string())?;
        strip_metadata(&mut meta);
        fields.insert("metadata".into(), Field::Value(meta));
    }
    fields
        .entry("apiVersion".into())
        .or_insert_with(|| Field::Value(Value::String(q.kind.api_version())));
    fields
        .entry("kind".into())
        .or_insert_with(|| Field::Value(Value::String(q.kind.kind.to_string())));
    let text = serde_json::to_string(&fields).map_err(|e| e.to_string())?;
    let mut skeleton = serde_json::Map::new();
    for key in ["apiVersion", "kind", "metadata"] {
        if let Some(f) = fields.remove(key) {
            skeleton.insert(key.into(), f.into_value()?);
        }
    }
    let header = Obj::new(Value::Object(skeleton), Origin::Live).map_err(|e| e.to_string())?;
    Ok(Compact { header, text })
}

fn header_of(value: &Value) -> Result<Obj, String> {
    let mut skeleton = serde_json::Map::new();
    for key in ["apiVersion", "kind", "metadata"] {
        if let Some(v) = value.get(key) {
            skeleton.insert(key.into(), v.clone());
        }
    }
    Obj::new(Value::Object(skeleton), Origin::Live).map_err(|e| e.to_string())
}

/// A top-level field of a listed object: as the server wrote it, or rewritten.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Field<'a> {
    Raw(&'a RawValue),
    Value(Value),
}

impl Field<'_> {
    fn into_value(self) -> Result<Value, String> {
        match self {
            Field::Raw(r) => serde_json::from_str(r.get()).map_err(|e| e.to_string()),
            Field::Value(v) => Ok(v),
        }
    }
}

/// A Secret as far as trainlab ever reads one (`PartialObjectMetadata`): the rest of what a
/// server sends is skipped unparsed.
#[derive(Deserialize)]
struct MetadataOnly {
    #[serde(default)]
    metadata: Value,
}

/// kubectl's client-side apply annotation (k8s.io/kubectl `corev1.LastAppliedConfigAnnotation`).
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

async fn list_one<T>(
    conn: &Conn,
    discovery: &Discovery,
    q: &Query,
    convert: &(impl Fn(&RawValue, &Query) -> Result<T, String> + Sync),
) -> Result<Vec<T>, Failure> {
    let ar = discovery.resolve_kind(conn, q.kind).await?;
    let namespace = q.namespace.as_deref().filter(|_| q.kind.namespaced);
    let url = <DynamicObject as kube::Resource>::url_path(&ar, namespace);
    // Secrets are read as metadata only (`PartialObjectMetadataList`, see `kinds::SECRETS`):
    // their data never leaves the API server.
    let metadata_only = *q.kind == kinds::SECRETS;
    let fetch = |p: ListParams| {
        let client = conn.client.clone();
        let request = kube::core::Request::new(url.clone());
        async move {
            let req = if metadata_only {
                request.list_metadata(&p)
            } else {
                request.list(&p)
            }
            .map_err(kube::Error::BuildRequest)?;
            client.request_text(req).await
        }
    };
    let mut lp = ListParams::default();
    if let Some(sel) = &q.selector {
        lp = lp.labels(sel);
    }
    if let Some(name) = &q.name {
        lp = lp.fields(&format!("metadata.name={name}"));
    }
    paged(&lp, conn.chunk_size, fetch, |raw: &RawValue| {
        convert(raw, q)
    })
    .await
    .map_err(|stop| match stop {
        Stop::Item(message) => Failure::Unavailable(Unavailable::Failed { message }),
        Stop::Request(e) if is_credentials_error(&e) => {
            Failure::Credentials(credentials_text(conn, &e))
        }
        Stop::Request(e) => Failure::Unavailable(match api_error(&e) {
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
                message: format!(
                    "listing {} failed: {}",
                    q.describe(),
                    super::retry::describe(&e, conn.timeout)
                ),
            },
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(v: &Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(v).unwrap()
    }

    fn pod() -> Value {
        json!({
            "metadata": {
                "name": "w-0", "namespace": "alice-lab", "labels": {"app": "train"},
                "managedFields": [{"manager": "kubectl"}],
                "annotations": {LAST_APPLIED: "{\"kind\":\"Pod\"}", "team": "ml"},
            },
            "spec": {"containers": [{"name": "t", "image": "busybox", "args": ["a\"b"]}]},
            "status": {"phase": "Running"},
        })
    }

    #[test]
    fn compact_text_is_the_object_the_full_read_gives() {
        for (q, v) in [
            (Query::new(&kinds::PODS, "alice-lab"), pod()),
            (
                Query::cluster(&kinds::NODES),
                json!({"metadata": {"name": "n"}, "status": {"images": [{"names": ["x"]}], "capacity": {"cpu": "8"}}}),
            ),
            (
                Query::new(&kinds::SECRETS, "alice-lab"),
                json!({"metadata": {"name": "s", "namespace": "alice-lab", "annotations": {LAST_APPLIED: "{\"data\":{}}"}}, "data": {"p": "c2VjcmV0"}}),
            ),
        ] {
            let r = raw(&v);
            let full = object_value(&r, &q).unwrap();
            let c = compact(&r, &q).unwrap();
            let text: Value = serde_json::from_str(&c.text).unwrap();
            assert_eq!(text, full, "{}", q.describe());
            assert_eq!(c.header.name(), full["metadata"]["name"]);
            assert_eq!(c.header.namespace(), full["metadata"]["namespace"].as_str());
        }
        let c = compact(&raw(&pod()), &Query::new(&kinds::PODS, "alice-lab")).unwrap();
        let text: Value = serde_json::from_str(&c.text).unwrap();
        assert_eq!(text["kind"], "Pod", "built-in list items get their kind");
        assert_eq!(text["metadata"]["annotations"], json!({"team": "ml"}));
        assert!(text["metadata"].get("managedFields").is_none());
        assert_eq!(text["spec"]["containers"][0]["args"][0], "a\"b");
    }

    #[test]
    fn compact_refuses_what_obj_new_refuses() {
        let q = Query::new(&kinds::PODS, "lab");
        let bad_name = json!({"metadata": {"name": 12345}});
        let e = compact(&raw(&bad_name), &q).unwrap_err();
        assert!(e.contains("metadata.name"), "{e}");
        assert!(compact(&raw(&json!([1, 2])), &q).is_err());
        assert!(compact(&raw(&json!({"metadata": [1]})), &q).is_err());
    }
}
