//! What a request handler returns: the answer it decided, before the server turns it into HTTP.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use super::filter::Filter;
use super::resources::Resource;
use super::store::{Change, WatchSignal};

/// What a request handler decided, turned into HTTP by the server (`server.rs`).
pub(super) enum Reply {
    Json(u16, Value),
    /// JSON with another media type (aggregated discovery names its group, version and kind).
    JsonAs(u16, &'static str, Value),
    /// JSON already written as text.
    Raw(u16, String),
    Text(u16, &'static str),
    /// Boxed: it is far larger than an answer, which every handler returns.
    Watch(Box<WatchStart>),
}

/// Handlers return `Err` for an early error answer, so `?` reads like the server's validation.
pub(super) type Outcome = Result<Reply, Reply>;

/// What a watch sends first, and what it keeps listening to.
pub(super) struct WatchStart {
    pub(super) initial: Vec<Value>,
    pub(super) changes: broadcast::Receiver<Change>,
    pub(super) filter: Filter,
    pub(super) resource: Resource,
    pub(super) timeout: Option<Duration>,
    pub(super) signals: broadcast::Receiver<WatchSignal>,
    /// The client asked for bookmarks (`allowWatchBookmarks=true`).
    pub(super) bookmarks: bool,
    /// The stream ends after its initial events (a `410 Gone`).
    pub(super) ended: bool,
}
