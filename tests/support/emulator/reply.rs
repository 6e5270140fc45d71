//! What a request handler returns: the answer it decided, before the server turns it into HTTP.

use serde_json::Value;

use super::watch::WatchStart;

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
