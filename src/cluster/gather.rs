//! The live source: one LIST per distinct query (read in pages), concurrently, with the
//! reachability probe beside them (never in front) and discovery from the disk cache or one
//! request per root. Grading 1 lab or 100 learners costs about the same number of requests.
//!
//! Several queries of one kind (`check --all`: pods in fifteen lab namespaces) are read as one
//! cluster-wide LIST filtered here, when that costs fewer requests: the LIST gives up as soon as
//! its pages would outnumber the per-query LISTs, and a 403 for the cluster-wide read (a
//! learner whose RBAC is per namespace) or any other failure falls back to one LIST per query.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
use crate::observe::{kinds, Obj, Observed, Origin, Query, ResourceKind, Unavailable};
use crate::Error;

/// At most this many LISTs in flight: `check --all` plans 22 (one per kind), so they all go out
/// at once. Each in-flight request over HTTP/1.1 holds a connection of its own (a TLS handshake
/// when it opens one); a second wave would cost one more round trip, more connections do not.
const CONCURRENCY: usize = 32;

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

/// Runs `reads` with the connection's probe beside it (not in front: the first observation's
/// discovery and LISTs go out with `/version`). An unreachable server, refused credentials or a
/// server that is not a Kubernetes API server is the probe's one error, whatever the reads got
/// meanwhile; once the probe has succeeded (a later round) it costs nothing.
async fn probed<T>(conn: &Conn, reads: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    let (_, out) = futures::future::try_join(probe(conn), reads).await?;
    Ok(out)
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
        if matches!(e, kube::Error::Api(_) | kube::Error::SerdeError(_))
            || super::retry::not_an_api_server(&e)
        {
            let (server, context) = (conn.describe(), &conn.context);
            return Error::environment(
                format!("{server} のサーバーは応答しましたが、Kubernetes の API サーバーとしての応答ではありません: {why}\n  kubeconfig のサーバー URL を確認してください（`kubectl --context {context} cluster-info`）"),
                format!("the server of {server} answered, but not as a Kubernetes API server: {why}\n  check the server URL in the kubeconfig (`kubectl --context {context} cluster-info`)"),
            );
        }
        if super::retry::is_refused(&e) {
            let (server, context) = (conn.describe(), &conn.context);
            return Error::environment(
                format!("{server} の API サーバーに接続できません: 接続を拒否されました（そのアドレスで待ち受けているものがありません）\n  クラスターが止まっているか、kubeconfig のサーバー URL のポートが違います（`kubectl --context {context} cluster-info`。kind なら `docker ps` でコンテナーが動いているか確認してください）"),
                format!("cannot reach the API server of {server}: the connection was refused (nothing listens at that address)\n  the cluster is stopped, or the port in the kubeconfig's server URL is wrong (`kubectl --context {context} cluster-info`; for kind, see that its containers run with `docker ps`)"),
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
/// (401) stop the whole observation with one error instead of failing every check. Queries of
/// one kind may be read as one cluster-wide LIST (see the module docs).
pub async fn gather(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
) -> Result<Observed, Error> {
    discovery.next_round();
    gather_more(conn, discovery, queries).await
}

/// [`gather`] as more reads of the same observation: discovery answers of this round are
/// reused, so a group the cluster does not serve is asked about once per observation, not once
/// per gather.
pub async fn gather_more(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
) -> Result<Observed, Error> {
    let reads = probed(conn, read_objects(conn, discovery, queries, true)).await?;
    Ok(Observed::live(conn.context.clone(), reads))
}

/// [`gather`] with one LIST per query, never merged: for reads that are already the fallback of
/// a refused cluster-wide LIST (`grade`'s per-namespace reads).
pub async fn gather_each(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
) -> Result<Observed, Error> {
    discovery.next_round();
    let reads = probed(conn, read_objects(conn, discovery, queries, false)).await?;
    Ok(Observed::live(conn.context.clone(), reads))
}

/// [`gather`], each listed object converted by `convert` from its raw JSON as its page
/// arrives: workshop grading keeps a room's thousands of objects as compact text
/// ([`compact`]) instead of trees of values. One LIST per query (a room's queries are already
/// one per kind).
pub async fn gather_as<T: Send>(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
    convert: impl Fn(&RawValue, &Query) -> Result<T, String> + Sync,
) -> Result<Reads<T>, Error> {
    discovery.next_round();
    probed(conn, async {
        let planned = plan(queries.iter().cloned());
        let convert = &convert;
        let results: Vec<(Query, Result<Vec<T>, Failure>)> = stream::iter(planned)
            .map(|q| async move {
                let r = list_one(conn, discovery, &q, None, |raw| convert(raw, &q).map(Some))
                    .await
                    .map_err(Stopped::into_failure);
                (q, r)
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        settle(results)
    })
    .await
}

/// Each query with its objects, or why they cannot be read.
pub type Reads<T> = Vec<(Query, Result<Vec<T>, Unavailable>)>;

/// Each query with its objects, or the failure that kept them.
type Answers<T> = Vec<(Query, Result<Vec<T>, Failure>)>;

/// Refused credentials end the observation; any other failure is that query's answer.
fn settle<T>(results: Vec<(Query, Result<Vec<T>, Failure>)>) -> Result<Reads<T>, Error> {
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

/// How one kind's queries are read.
#[derive(Debug, Clone, PartialEq)]
enum Read {
    /// One LIST for one query.
    One(Query),
    /// One cluster-wide LIST answering several queries of one kind, each filtered locally.
    Merged { all: Query, members: Vec<Query> },
}

/// The reads for `queries` (deduplicated, in order): the queries of a kind asked two or more
/// times become one cluster-wide read, keeping the label selector or name when every query asks
/// the same (the server filters), else listing the kind whole. Secrets are never merged: their
/// metadata is read only where a check asks (most learners may not list them cluster-wide, and
/// other namespaces' Secrets are none of trainlab's business).
fn reads(queries: &[Query], merge: bool) -> Vec<Read> {
    let planned = plan(queries.iter().cloned());
    if !merge {
        return planned.into_iter().map(Read::One).collect();
    }
    let mut order: Vec<&'static ResourceKind> = Vec::new();
    let mut by_kind: HashMap<&'static ResourceKind, Vec<Query>> = HashMap::new();
    for q in planned {
        let group = by_kind.entry(q.kind).or_default();
        if group.is_empty() {
            order.push(q.kind);
        }
        group.push(q);
    }
    let mut out = Vec::new();
    for kind in order {
        let members = by_kind.remove(kind).unwrap_or_default();
        if members.len() < 2 || *kind == kinds::SECRETS {
            out.extend(members.into_iter().map(Read::One));
            continue;
        }
        let first = members[0].clone();
        let same = |f: fn(&Query) -> &Option<String>| members.iter().all(|q| f(q) == f(&first));
        let mut all = Query::cluster(kind);
        if same(|q| &q.selector) {
            all.selector = first.selector.clone();
        }
        if same(|q| &q.name) {
            all.name = first.name.clone();
        }
        out.push(Read::Merged { all, members });
    }
    out
}

/// Every query's objects as [`Obj`]s.
async fn read_objects(
    conn: &Conn,
    discovery: &Discovery,
    queries: &[Query],
    merge: bool,
) -> Result<HashMap<Query, Result<Vec<Obj>, Unavailable>>, Error> {
    let results: Vec<Answers<Obj>> = stream::iter(reads(queries, merge))
        .map(|read| async move {
            match read {
                Read::One(q) => {
                    let r = list_objects(conn, discovery, &q).await;
                    vec![(q, r)]
                }
                Read::Merged { all, members } => read_merged(conn, discovery, all, members).await,
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    Ok(settle(results.into_iter().flatten().collect())?
        .into_iter()
        .collect())
}

/// One query's objects, read on their own.
async fn list_objects(conn: &Conn, discovery: &Discovery, q: &Query) -> Result<Vec<Obj>, Failure> {
    list_one(conn, discovery, q, None, |raw| object_of(raw, q).map(Some))
        .await
        .map_err(Stopped::into_failure)
}

fn object_of(raw: &RawValue, q: &Query) -> Result<Obj, String> {
    Obj::new(object_value(raw, q)?, Origin::Live).map_err(|e| e.to_string())
}

/// The queries of `members` answered from one cluster-wide LIST (`all`), or each on its own
/// when that LIST would take more requests than they do, or did not succeed.
async fn read_merged(
    conn: &Conn,
    discovery: &Discovery,
    all: Query,
    members: Vec<Query>,
) -> Answers<Obj> {
    // Only the objects some member may select are converted: a cluster-wide list of pods
    // carries every namespace's, and most are none of these queries'.
    let namespaces: Option<BTreeSet<&str>> =
        members.iter().map(|m| m.namespace.as_deref()).collect();
    let names: Option<BTreeSet<&str>> = members.iter().map(|m| m.name.as_deref()).collect();
    let wanted = |raw: &RawValue| -> Result<Option<Obj>, String> {
        if namespaces.is_some() || names.is_some() {
            let head: Head = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            let among = |set: &Option<BTreeSet<&str>>, value: Option<&str>| {
                set.as_ref()
                    .is_none_or(|set| value.is_some_and(|v| set.contains(v)))
            };
            if !among(&namespaces, head.metadata.namespace.as_deref())
                || !among(&names, head.metadata.name.as_deref())
            {
                return Ok(None);
            }
        }
        object_of(raw, &all).map(Some)
    };
    let started = tokio::time::Instant::now();
    let listed = list_one(conn, discovery, &all, Some(members.len()), wanted).await;
    match listed {
        Ok(objs) => members
            .into_iter()
            .map(|m| {
                let mine: Vec<Obj> = objs.iter().filter(|o| m.selects(o)).cloned().collect();
                (m, Ok(mine))
            })
            .collect(),
        // Refused credentials, or a kind that is not served: the same answer for every member,
        // without asking again.
        Err(Stopped::Failed(
            f @ (Failure::Credentials(_) | Failure::Unavailable(Unavailable::NotServed { .. })),
        )) => members.into_iter().map(|m| (m, Err(f.clone()))).collect(),
        // Forbidden cluster-wide (RBAC per namespace), more pages than queries, or failed: each
        // member on its own, as if it had never been merged, within what is left of the one
        // --request-timeout the read had (a server that never answers is waited for once, not
        // once for the merged read and again for each member).
        Err(_) => {
            let bound = conn.timeout;
            let left = bound.saturating_sub(started.elapsed());
            let timed_out = move || {
                Failure::Unavailable(Unavailable::Failed {
                    message: format!(
                        "no answer within {} (--request-timeout)",
                        humantime::format_duration(bound)
                    ),
                })
            };
            if !bound.is_zero() && left.is_zero() {
                return members.into_iter().map(|m| (m, Err(timed_out()))).collect();
            }
            stream::iter(members)
                .map(|m| async move {
                    let read = list_objects(conn, discovery, &m);
                    let r = if bound.is_zero() {
                        read.await
                    } else {
                        tokio::time::timeout(left, read)
                            .await
                            .unwrap_or_else(|_| Err(timed_out()))
                    };
                    (m, r)
                })
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await
        }
    }
}

/// An object's namespace and name, everything else skipped unparsed.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    metadata: HeadMeta,
}

#[derive(Deserialize, Default)]
struct HeadMeta {
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
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
    /// Reading on would take more requests than the budget allows.
    OverBudget,
    /// The pages together took longer than `--request-timeout`, which bounds a whole LIST.
    Deadline,
    /// The pages together hold more objects than `--max-objects`.
    TooMany,
}

/// Every object `lp` selects, read in pages of `chunk` objects with `limit`/`continue` (0: in
/// one response), each item converted by `convert` as its page arrives (`None`: not kept). When
/// a continue token expires mid-way (410), the list is read again in one request, as client-go's
/// pager does (`FullListIfExpired`, only for page 2 or later).
///
/// With a `budget` (requests), the read gives up ([`Stop::OverBudget`]) as soon as a page says
/// the rest would not fit: `metadata.remainingItemCount` counts the objects still to come (the
/// server sets it on paged lists without a selector; without it the rest is taken as too many).
async fn paged<T, F, Fut>(
    lp: &ListParams,
    chunk: u32,
    max_objects: usize,
    budget: Option<usize>,
    mut fetch: F,
    convert: impl Fn(&RawValue) -> Result<Option<T>, String>,
) -> Result<Vec<T>, Stop>
where
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<String, kube::Error>>,
{
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    let mut sent = 0usize;
    loop {
        let mut page_params = lp.clone();
        if chunk > 0 {
            page_params = page_params.limit(chunk);
        }
        if let Some(t) = &token {
            page_params = page_params.continue_token(t);
        }
        sent += 1;
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
        let (next, remaining) = convert_page(&text, &convert, &mut items)?;
        if items.len() > max_objects {
            return Err(Stop::TooMany);
        }
        let Some(next) = next else {
            return Ok(items);
        };
        if let Some(budget) = budget {
            let pages_left = match remaining {
                Some(n) if chunk > 0 => usize::try_from(n.max(1))
                    .unwrap_or(usize::MAX)
                    .div_ceil(chunk as usize),
                _ => usize::MAX,
            };
            if sent.saturating_add(pages_left) > budget {
                return Err(Stop::OverBudget);
            }
        }
        token = Some(next);
    }
}

/// Converts one page's items into `out`; returns the continue token, if there is one, and the
/// server's count of the objects still to come.
fn convert_page<T>(
    text: &str,
    convert: impl Fn(&RawValue) -> Result<Option<T>, String>,
    out: &mut Vec<T>,
) -> Result<(Option<String>, Option<i64>), Stop> {
    let page: Page =
        serde_json::from_str(text).map_err(|e| Stop::Request(kube::Error::SerdeError(e)))?;
    let items = page.items.unwrap_or_default();
    out.reserve(items.len());
    for raw in items {
        if let Some(item) = convert(raw).map_err(Stop::Item)? {
            out.push(item);
        }
    }
    Ok((
        page.metadata.continue_.filter(|t| !t.is_empty()),
        page.metadata.remaining_item_count,
    ))
}

/// Why a kind has no answer when listing it brought more than `max` objects (`--max-objects`):
/// said alike by a room read once and by a room followed through watches.
pub fn too_many_objects(what: &str, max: usize) -> Unavailable {
    Unavailable::Failed {
        message: format!(
            "listing {what} gave more than {max} objects, the most trainlab keeps from one LIST (--max-objects; each costs memory while it is judged)"
        ),
    }
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
    same_kind(map.get("kind").and_then(Value::as_str), q)?;
    Ok(value)
}

/// An item of a LIST is of the kind listed: one that says it is another (a Secret in a list of
/// Nodes) is the server's or a proxy's fault, an environment error, never the learner's input.
fn same_kind(found: Option<&str>, q: &Query) -> Result<(), String> {
    match found {
        Some(kind) if kind != q.kind.kind => Err(format!(
            "the API server answered the LIST of {} with an object of kind {}: not what was asked (a broken server, proxy or aggregated API)",
            q.describe(),
            crate::catalog::echo(kind, 60)
        )),
        _ => Ok(()),
    }
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
    if let Some(Field::Raw(kind)) = fields.get("kind") {
        same_kind(serde_json::from_str::<&str>(kind.get()).ok(), q)?;
    }
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

/// Why [`list_one`] has no objects.
enum Stopped {
    Failed(Failure),
    /// The budget of a merged read would be exceeded.
    OverBudget,
}

impl Stopped {
    fn into_failure(self) -> Failure {
        match self {
            Stopped::Failed(f) => f,
            // Only merged reads have a budget, and they fall back instead.
            Stopped::OverBudget => Failure::Unavailable(Unavailable::Failed {
                message: "internal: a LIST without a budget ran over it".into(),
            }),
        }
    }
}

/// One query's objects, each converted by `convert` (`None`: not kept), within `budget` requests
/// when given.
async fn list_one<T>(
    conn: &Conn,
    discovery: &Discovery,
    q: &Query,
    budget: Option<usize>,
    convert: impl Fn(&RawValue) -> Result<Option<T>, String>,
) -> Result<Vec<T>, Stopped> {
    let ar = discovery
        .resolve_kind(conn, q.kind)
        .await
        .map_err(Stopped::Failed)?;
    let namespace = q.namespace.as_deref().filter(|_| q.kind.namespaced);
    let url = <DynamicObject as kube::Resource>::url_path(&ar, namespace);
    // Secrets are read as metadata only (`PartialObjectMetadataList`, see `kinds::SECRETS`):
    // their data never leaves the API server.
    let metadata_only = *q.kind == kinds::SECRETS;
    let pages = std::sync::atomic::AtomicUsize::new(0);
    let fetch = |p: ListParams| {
        pages.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
    // `--request-timeout` bounds one request; the same time bounds the whole LIST, every page
    // and retry of it, so a server that answers each page with a new continue token forever
    // (or drips pages) cannot hold a read longer.
    let read = paged(
        &lp,
        conn.chunk_size,
        conn.limits.max_objects,
        budget,
        fetch,
        convert,
    );
    let result = if conn.timeout.is_zero() {
        read.await
    } else {
        tokio::time::timeout(conn.timeout, read)
            .await
            .unwrap_or(Err(Stop::Deadline))
    };
    let stop = match result {
        Ok(items) => return Ok(items),
        Err(stop) => stop,
    };
    let failure = match stop {
        Stop::OverBudget => return Err(Stopped::OverBudget),
        Stop::TooMany => Failure::Unavailable(too_many_objects(
            &q.describe(),
            conn.limits.max_objects,
        )),
        // The whole LIST's bound and its first request's are the same: with no page answered,
        // whichever fired first, the server did not answer.
        Stop::Deadline if pages.load(std::sync::atomic::Ordering::Relaxed) <= 1 => {
            Failure::Unavailable(Unavailable::Failed {
                message: format!(
                    "listing {}: no answer within {} (--request-timeout)",
                    q.describe(),
                    humantime::format_duration(conn.timeout)
                ),
            })
        }
        Stop::Deadline => Failure::Unavailable(Unavailable::Failed {
            message: format!(
                "listing {} did not finish within {} ({} page request(s) sent): --request-timeout bounds a whole LIST, all its pages together; a server that keeps answering with a new continue token never finishes (raise --request-timeout only for a very large list)",
                q.describe(),
                humantime::format_duration(conn.timeout),
                pages.load(std::sync::atomic::Ordering::Relaxed)
            ),
        }),
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
            Some((404, _)) => {
                // The disk cache said this kind is served; the server says it is not (a CRD
                // removed since): the cache is set aside for the rest of the run.
                if discovery.answered_from_disk(&ar.api_version).await {
                    discovery.invalidate_disk(&ar.api_version);
                }
                Unavailable::NotServed {
                    resource: q.kind.resource_name(),
                    crd: q.kind.crd.unwrap_or(q.kind.plural).to_string(),
                    capability: q.kind.capability.map(str::to_string),
                }
            }
            _ => Unavailable::Failed {
                message: format!(
                    "listing {} failed: {}",
                    q.describe(),
                    super::retry::describe(&e, conn.timeout)
                ),
            },
        }),
    };
    Err(Stopped::Failed(failure))
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
    fn a_kinds_queries_in_several_namespaces_are_one_read_but_secrets_never() {
        let queries = [
            Query::cluster(&kinds::NODES),
            Query::new(&kinds::PODS, "a"),
            Query::new(&kinds::JOBS, "a"),
            Query::new(&kinds::PODS, "b").with_selector("app=x"),
            Query::new(&kinds::PODS, "a"),
            Query::new(&kinds::SECRETS, "a"),
            Query::new(&kinds::SECRETS, "b"),
            Query::cluster(&kinds::DEPLOYMENTS).named("karpenter"),
            Query::cluster(&kinds::DEPLOYMENTS).named("mpi-operator"),
            Query::new(&kinds::CONFIGMAPS, "a").with_selector("k=v"),
            Query::new(&kinds::CONFIGMAPS, "b").with_selector("k=v"),
        ];
        let planned = reads(&queries, true);
        assert_eq!(
            planned,
            [
                Read::One(Query::cluster(&kinds::NODES)),
                // Different selectors: the whole kind, filtered here.
                Read::Merged {
                    all: Query::cluster(&kinds::PODS),
                    members: vec![
                        Query::new(&kinds::PODS, "a"),
                        Query::new(&kinds::PODS, "b").with_selector("app=x"),
                    ],
                },
                Read::One(Query::new(&kinds::JOBS, "a")),
                Read::One(Query::new(&kinds::SECRETS, "a")),
                Read::One(Query::new(&kinds::SECRETS, "b")),
                Read::Merged {
                    all: Query::cluster(&kinds::DEPLOYMENTS),
                    members: vec![
                        Query::cluster(&kinds::DEPLOYMENTS).named("karpenter"),
                        Query::cluster(&kinds::DEPLOYMENTS).named("mpi-operator"),
                    ],
                },
                // One selector everywhere: the server filters.
                Read::Merged {
                    all: Query::cluster(&kinds::CONFIGMAPS).with_selector("k=v"),
                    members: vec![
                        Query::new(&kinds::CONFIGMAPS, "a").with_selector("k=v"),
                        Query::new(&kinds::CONFIGMAPS, "b").with_selector("k=v"),
                    ],
                },
            ]
        );
        assert_eq!(reads(&queries, false).len(), 10, "each query on its own");
    }

    /// A LIST page of `n` items, with a continue token and the count of items still to come.
    fn page(n: usize, next: Option<&str>, remaining: Option<i64>) -> String {
        let items: Vec<Value> = (0..n)
            .map(|i| json!({"metadata": {"name": format!("o{i}")}}))
            .collect();
        let mut metadata = json!({});
        if let Some(t) = next {
            metadata["continue"] = json!(t);
        }
        if let Some(r) = remaining {
            metadata["remainingItemCount"] = json!(r);
        }
        json!({"metadata": metadata, "items": items}).to_string()
    }

    /// Reads `pages` with a budget; how many requests were sent and what came of it.
    async fn read_pages(pages: Vec<String>, budget: Option<usize>) -> (usize, Result<usize, ()>) {
        let sent = std::sync::atomic::AtomicUsize::new(0);
        let fetch = |_: ListParams| {
            let i = sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let text = pages[i].clone();
            async move { Ok::<String, kube::Error>(text) }
        };
        let r = paged(&ListParams::default(), 2, 100_000, budget, fetch, |raw| {
            Ok(Some(raw.get().len()))
        })
        .await;
        let r = match r {
            Ok(items) => Ok(items.len()),
            Err(Stop::OverBudget) => Err(()),
            Err(_) => panic!("the list failed"),
        };
        (sent.load(std::sync::atomic::Ordering::SeqCst), r)
    }

    #[tokio::test]
    async fn a_budgeted_list_gives_up_as_soon_as_its_pages_would_outnumber_the_budget() {
        let three = vec![
            page(2, Some("t1"), Some(3)),
            page(2, Some("t2"), Some(1)),
            page(1, None, None),
        ];
        assert_eq!(read_pages(three.clone(), Some(3)).await, (3, Ok(5)));
        assert_eq!(read_pages(three.clone(), None).await, (3, Ok(5)));
        // Two more pages to come after the first: three requests, more than two queries cost.
        assert_eq!(read_pages(three, Some(2)).await, (1, Err(())));
        // The server did not say how many are left: taken as too many.
        let unknown = vec![page(2, Some("t1"), None), page(1, None, None)];
        assert_eq!(read_pages(unknown.clone(), Some(5)).await, (1, Err(())));
        assert_eq!(read_pages(unknown, None).await, (2, Ok(3)));
        // One page is always within a budget.
        assert_eq!(
            read_pages(vec![page(2, None, None)], Some(1)).await,
            (1, Ok(2))
        );
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
