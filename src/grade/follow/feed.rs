//! One stream per watched kind (or, where RBAC forbids the kind cluster-wide, per namespace):
//! kube-runtime's `watcher` LISTs, then WATCHes from the LIST's resourceVersion with bookmarks,
//! re-LISTs on `410 Gone` and re-WATCHes from the last resourceVersion seen when a stream ends.
//! What it brings is sent to the engine as [`Msg`]s, each object already compact text.
//!
//! kube-runtime 5.0.0 `src/watcher.rs`, which this relies on:
//! - `Config::default()` asks for bookmarks (`bookmarks: true`, sent as `allowWatchBookmarks`)
//!   and lists in pages of 500 with the most recent semantic (a consistent read);
//! - `step_trampolined`: a BOOKMARK only moves the stream's resourceVersion on (`State::Watching`
//!   gets `bm.metadata.resource_version`), so a reconnect resumes after it without a relist;
//!   an ERROR event of code 410 returns `Err(WatchError)` and goes back to `State::Empty`, so
//!   the next poll lists again (`Init`, `InitApply`…, `InitDone`); a stream that ends goes to
//!   `State::InitListed` and watches again from its resourceVersion, saying nothing;
//! - errors are returned, not retried with a pause: "You can apply your own backoff by not
//!   polling the stream for a duration after errors" (the docs of `watcher()`), which is what
//!   [`follow`] does with `DefaultBackoff` (800 ms doubling to 30 s, with jitter; reset after
//!   120 s without errors), telling the engine how long it waits.

use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::{self, DefaultBackoff, Event};
use tokio::sync::mpsc::UnboundedSender;

use super::store::Held;
use crate::cluster::compact;
use crate::observe::Query;

/// What one stream says.
#[derive(Debug)]
pub enum Msg {
    /// A (re)list starts: the objects that follow replace what the stream brought before.
    Init,
    /// An object of the list.
    Listed(Held),
    /// The list is complete; live changes follow.
    InitDone,
    /// An object was added or changed.
    Applied(Held),
    /// An object was deleted.
    Deleted { namespace: String, name: String },
    /// The stream failed and is tried again after `retry_in`; `gone`: the cluster had
    /// forgotten its resourceVersion (410), so the kind is listed again.
    Failed {
        why: String,
        gone: bool,
        /// The API server's status code, when it answered with one (401: credentials).
        code: Option<u16>,
        retry_in: Duration,
    },
    /// The first LIST of a cluster-wide stream was forbidden (RBAC): this stream ends.
    Forbidden { message: String },
    /// After a failure, the API server answered a LIST of the stream's scope again: the watch
    /// resumes from where it stood. (kube-runtime's watcher says nothing when a watch restarts,
    /// so a room without changes would otherwise stay "lost".)
    Answered,
}

/// Which stream a message comes from (an index the engine gave it).
pub type FeedId = usize;

/// Starts a stream of `query` (one kind, cluster-wide, or in `query.namespace`) with
/// `client` (one without the request timeout: a WATCH lasts). Each message goes to `tx` with
/// `id`; the stream ends when the engine drops its receiver.
pub fn spawn(
    client: kube::Client,
    ar: ApiResource,
    query: Query,
    page_size: u32,
    id: FeedId,
    tx: UnboundedSender<(FeedId, Msg)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(follow(client, ar, query, page_size, id, tx))
}

async fn follow(
    client: kube::Client,
    ar: ApiResource,
    query: Query,
    page_size: u32,
    id: FeedId,
    tx: UnboundedSender<(FeedId, Msg)>,
) {
    let api: Api<DynamicObject> = match query.namespace.as_deref() {
        Some(ns) if query.kind.namespaced => Api::namespaced_with(client, ns, &ar),
        _ => Api::all_with(client, &ar),
    };
    let mut config = watcher::Config {
        page_size: (page_size > 0).then_some(page_size),
        ..watcher::Config::default()
    };
    if let Some(sel) = &query.selector {
        config = config.labels(sel);
    }
    if let Some(name) = &query.name {
        config = config.fields(&format!("metadata.name={name}"));
    }
    // One object's metadata of the stream's scope: asked after a failure to learn that the API
    // server answers again.
    let probe = kube::api::ListParams {
        label_selector: config.label_selector.clone(),
        field_selector: config.field_selector.clone(),
        limit: Some(1),
        ..kube::api::ListParams::default()
    };
    let probe_api = api.clone();
    let mut stream = watcher::watcher(api, config).boxed();
    let mut backoff = DefaultBackoff::default();
    let mut listed = false;
    let send = |m: Msg| tx.send((id, m)).is_ok();
    while let Some(next) = stream.next().await {
        let sent = match next {
            Ok(event) => {
                backoff.reset();
                match event {
                    Event::Init => send(Msg::Init),
                    Event::InitApply(o) => held(&o, &query).is_none_or(|h| send(Msg::Listed(h))),
                    Event::InitDone => {
                        listed = true;
                        send(Msg::InitDone)
                    }
                    Event::Apply(o) => held(&o, &query).is_none_or(|h| send(Msg::Applied(h))),
                    Event::Delete(o) => send(Msg::Deleted {
                        namespace: o.metadata.namespace.clone().unwrap_or_default(),
                        name: o.metadata.name.clone().unwrap_or_default(),
                    }),
                }
            }
            Err(e) => {
                let cluster_wide = query.namespace.is_none();
                if let (false, true, Some(message)) = (listed, cluster_wide, forbidden(&e)) {
                    let _ = send(Msg::Forbidden { message });
                    return;
                }
                let retry_in = backoff.next().unwrap_or(Duration::from_secs(30));
                let gone = matches!(&e, watcher::Error::WatchError(s) if s.code == 410);
                if !send(Msg::Failed {
                    why: e.to_string(),
                    gone,
                    code: status_code(&e),
                    retry_in,
                }) {
                    return;
                }
                tokio::time::sleep(retry_in).await;
                // A 410 lists again, and that says the stream is back; otherwise the watch
                // restarts from its resourceVersion, silently: ask once whether the server
                // answers. (If the watch then fails, it is said lost again.)
                if !gone && probe_api.list_metadata(&probe).await.is_ok() && !send(Msg::Answered) {
                    return;
                }
                true
            }
        };
        if !sent {
            return;
        }
    }
}

/// The status code of a failure the API server answered.
fn status_code(e: &watcher::Error) -> Option<u16> {
    match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => Some(s.code),
        watcher::Error::WatchError(s) => Some(s.code),
        _ => None,
    }
}

/// The message of a 403 on the stream's first LIST.
fn forbidden(e: &watcher::Error) -> Option<String> {
    match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s)) if s.code == 403 => {
            Some(s.message.clone())
        }
        _ => None,
    }
}

/// An object as compact text, or None (logged) when it cannot be one: an item of another kind
/// or without a name is the server's fault, never a learner's, and is left out.
fn held(o: &DynamicObject, q: &Query) -> Option<Held> {
    let made = serde_json::value::to_raw_value(o)
        .map_err(|e| e.to_string())
        .and_then(|raw| compact(&raw, q));
    match made {
        Ok(c) => Some(Held {
            namespace: c.header.namespace().unwrap_or_default().into(),
            name: c.header.name().into(),
            text: c.text.into(),
        }),
        Err(why) => {
            tracing::warn!("follow: {} brought an object left out: {why}", q.describe());
            None
        }
    }
}
