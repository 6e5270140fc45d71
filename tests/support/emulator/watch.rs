//! Watches: the initial events, resuming from a resourceVersion, and the streaming body.

use std::io;
use std::time::Duration;

use axum::body::{Body, Bytes};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use super::filter::Filter;
use super::reads::present;
use super::reply::{Outcome, Reply, WatchStart};
use super::request::Request;
use super::resources::Resource;
use super::routing::Target;
use super::store::{Inner, WatchSignal};

/// The ERROR event kube-apiserver's watch cache sends when a watch asks for a resourceVersion
/// older than what it keeps: a `Status` of reason `Expired`, code 410, with the message
/// "too old resource version: %d (%d)" (k8s.io/apiserver `pkg/storage/cacher/watch_cache.go`,
/// `errors.NewResourceExpired`; the code and reason from k8s.io/apimachinery
/// `pkg/api/errors.NewResourceExpired`, `StatusReasonExpired` → `http.StatusGone`).
fn gone_event(asked: u64, oldest: u64) -> Value {
    watch_event(
        "ERROR",
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": format!("too old resource version: {asked} ({oldest})"),
            "reason": "Expired",
            "code": 410,
        }),
    )
}

/// A BOOKMARK as kube-apiserver sends it: an object of the watched kind with only its
/// resourceVersion (https://kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks).
fn bookmark_event(r: &Resource, rv: u64) -> Value {
    watch_event(
        "BOOKMARK",
        json!({
            "apiVersion": r.api_version(),
            "kind": r.kind,
            "metadata": {"resourceVersion": rv.to_string()},
        }),
    )
}

fn watch_event(kind: &str, object: Value) -> Value {
    json!({"type": kind, "object": object})
}

impl Inner {
    /// WATCH: without a resourceVersion (or "0"), synthetic ADDED events for the current
    /// objects; with one, the stored changes after it; with `sendInitialEvents=true`, ADDED
    /// events then a BOOKMARK marking their end. Then live changes until the client leaves or
    /// `timeoutSeconds` passes. The snapshot and the subscription are taken under one lock, so
    /// no change is missed or sent twice.
    pub(super) fn watch(&mut self, req: &Request, t: &Target) -> Outcome {
        let filter = Filter::from_request(req, t)?;
        let r = &t.resource;
        let since = req
            .query
            .get("resourceVersion")
            .filter(|rv| !rv.is_empty() && *rv != "0");
        let initial_events = req.query.flag("sendInitialEvents");
        let bookmarks = req.query.flag("allowWatchBookmarks");
        let asked = since.and_then(|rv| rv.parse::<u64>().ok());
        if let Some(asked) = asked.filter(|rv| *rv < self.compacted && !initial_events) {
            return Ok(Reply::Watch(Box::new(WatchStart {
                initial: vec![gone_event(asked, self.compacted)],
                changes: self.changes.subscribe(),
                filter,
                resource: r.clone(),
                timeout: None,
                signals: self.watch_signals.subscribe(),
                bookmarks,
                ended: true,
            })));
        }
        let mut initial: Vec<Value> = match since.and_then(|rv| rv.parse::<u64>().ok()) {
            Some(rv) if !initial_events => self
                .history
                .iter()
                .filter(|c| c.rv > rv && filter.matches(&c.key, &c.object))
                .map(|c| watch_event(c.kind, present(r, &c.object)))
                .collect(),
            _ if since.is_some() && !initial_events => Vec::new(),
            _ => self
                .selected(&filter)
                .iter()
                .map(|(_, o)| watch_event("ADDED", present(r, o)))
                .collect(),
        };
        if initial_events {
            let bookmark = json!({
                "apiVersion": r.api_version(),
                "kind": r.kind,
                "metadata": {
                    "resourceVersion": self.rv.to_string(),
                    "annotations": {"k8s.io/initial-events-end": "true"},
                },
            });
            initial.push(watch_event("BOOKMARK", bookmark));
        }
        let timeout = req
            .query
            .get("timeoutSeconds")
            .and_then(|s| s.parse::<u64>().ok())
            .map(Duration::from_secs);
        Ok(Reply::Watch(Box::new(WatchStart {
            initial,
            changes: self.changes.subscribe(),
            filter,
            resource: r.clone(),
            timeout,
            signals: self.watch_signals.subscribe(),
            bookmarks,
            ended: false,
        })))
    }
}

/// The streaming body of a watch: one JSON event per line, fed by a task that stops when the
/// client disconnects (the body, hence the channel, is dropped) or the timeout passes.
pub(super) fn watch_body(start: WatchStart) -> Body {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(pump_watch(start, tx));
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|line| (Ok::<Bytes, io::Error>(line), rx))
    });
    Body::from_stream(stream)
}

async fn pump_watch(start: WatchStart, tx: mpsc::Sender<Bytes>) {
    let line = |event: &Value| Bytes::from(format!("{event}\n"));
    for event in &start.initial {
        if tx.send(line(event)).await.is_err() {
            return;
        }
    }
    let deadline = async {
        match start.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    if start.ended {
        return;
    }
    let mut changes = start.changes;
    let mut signals = start.signals;
    loop {
        tokio::select! {
            // A signal sent before a change is acted on first: a test that expires the watches
            // and then changes an object knows the old streams never carry that change.
            biased;
            signal = signals.recv() => match signal {
                Ok(WatchSignal::Bookmark(rv)) if start.bookmarks => {
                    if tx.send(line(&bookmark_event(&start.resource, rv))).await.is_err() {
                        return;
                    }
                }
                Ok(WatchSignal::Drop) => return,
                Ok(WatchSignal::Gone(rv)) => {
                    let _ = tx.send(line(&gone_event(rv, rv))).await;
                    return;
                }
                Ok(WatchSignal::Bookmark(_)) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = &mut deadline => return,
            _ = tx.closed() => return,
            change = changes.recv() => match change {
                Ok(c) if start.filter.matches(&c.key, &c.object) => {
                    let event = watch_event(c.kind, present(&start.resource, &c.object));
                    if tx.send(line(&event)).await.is_err() {
                        return;
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}
