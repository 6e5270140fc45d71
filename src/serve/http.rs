//! The routes of a served board, all read-only (GET): the page, its event stream, the room's
//! JSON document, a learner's details for the page (`/cells.json?learner=NAME`) and a
//! learner's detail page. Every answer is checked against [`Access`] first and
//! carries the page's security headers; nothing here reaches a cluster.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures::stream::{self, Stream, StreamExt};
use tokio::sync::{broadcast, watch};

use super::access::Access;
use super::board::{Push, Shared};
use crate::report::html::{learner_details, learner_page, render_live, Live};

#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    access: Arc<Access>,
    stopped: watch::Receiver<bool>,
}

pub(super) fn router(
    shared: Arc<Shared>,
    access: Access,
    stopped: watch::Receiver<bool>,
) -> Router {
    let app = App {
        shared,
        access: Arc::new(access),
        stopped,
    };
    Router::new()
        .route("/", get(page))
        .route("/events", get(events))
        .route("/room.json", get(room_json))
        .route("/learner/{name}", get(learner))
        .route("/cells.json", get(cells))
        .with_state(app)
}

type Params = Query<HashMap<String, String>>;

/// The refusal, or nothing when the request may be answered.
fn refused(app: &App, q: &HashMap<String, String>, headers: &HeaderMap) -> Option<Response> {
    let header = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let bearer = header(header::AUTHORIZATION).and_then(|v| v.strip_prefix("Bearer "));
    if app.access.allows(
        q.get("token").map(String::as_str),
        bearer,
        header(header::HOST),
    ) {
        return None;
    }
    let text = "403 forbidden: open the URL `trainlab grade --serve` printed (it carries the board's token), or pass it as ?token= or Authorization: Bearer\n";
    Some(with_headers(
        (StatusCode::FORBIDDEN, text).into_response(),
        "text/plain; charset=utf-8",
    ))
}

/// The page's policy as headers too, the token kept out of other sites' Referer, and nothing
/// cached (a board is live).
fn with_headers(mut r: Response, content_type: &'static str) -> Response {
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Before the first round is graded: a page that looks again in two seconds.
const GRADING: &str = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"2\"><title>trainlab</title></head><body><p>grading the room… / 採点しています…</p></body></html>\n";

async fn page(State(app): State<App>, Query(q): Params, headers: HeaderMap) -> Response {
    if let Some(r) = refused(&app, &q, &headers) {
        return r;
    }
    let query = app.access.query();
    let html = app.shared.with_board(|board, _, version| {
        let sep = if query.is_empty() { '?' } else { '&' };
        let events = format!("events{query}{sep}shown={version}");
        let details = format!("cells.json{query}");
        render_live(
            board,
            &Live {
                events: &events,
                details: &details,
                query: &query,
            },
        )
    });
    let html = html.unwrap_or_else(|| GRADING.to_string());
    with_headers(html.into_response(), "text/html; charset=utf-8")
}

async fn room_json(State(app): State<App>, Query(q): Params, headers: HeaderMap) -> Response {
    if let Some(r) = refused(&app, &q, &headers) {
        return r;
    }
    // A clone of the room shares its packed results; the document is written learner by
    // learner as the client reads it (a room of a thousand learners is about 85 MB of JSON).
    let Some((room, lang)) = app.shared.with_board(|b, room, _| (room.clone(), b.lang)) else {
        return not_yet();
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(CHUNKS_AHEAD);
    tokio::task::spawn_blocking(move || {
        let out = std::io::BufWriter::with_capacity(CHUNK, Chunks(tx.clone()));
        if let Err(e) = crate::report::write_json_streamed(room, lang, out) {
            // Headers are sent: the body ends short, and the log says why (a client that
            // left is no error).
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                tracing::warn!("serving /room.json: {e}");
                let _ = tx.blocking_send(Err(e));
            }
        }
    });
    let body = axum::body::Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }));
    with_headers(body.into_response(), "application/json")
}

/// Bytes of `/room.json` handed to the connection at a time, and how many may wait for it.
const CHUNK: usize = 64 * 1024;
const CHUNKS_AHEAD: usize = 8;

/// A writer whose bytes go to a response body, waiting while the client is behind.
struct Chunks(tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>);

impl std::io::Write for Chunks {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .blocking_send(Ok(bytes.to_vec()))
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn learner(
    State(app): State<App>,
    Path(name): Path<String>,
    Query(q): Params,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = refused(&app, &q, &headers) {
        return r;
    }
    let query = app.access.query();
    let page = app.shared.with_board(|board, room, _| {
        let row = board.full_row(room, &name)?;
        Some(learner_page(board, &row, &query))
    });
    match page {
        Some(Some(html)) => with_headers(html.into_response(), "text/html; charset=utf-8"),
        Some(None) => no_learner(&name),
        None => not_yet(),
    }
}

/// The details of a learner's cells, as the page's script asks for them when a cell is opened.
async fn cells(State(app): State<App>, Query(q): Params, headers: HeaderMap) -> Response {
    if let Some(r) = refused(&app, &q, &headers) {
        return r;
    }
    let Some(name) = q.get("learner") else {
        return with_headers(
            (
                StatusCode::BAD_REQUEST,
                "cells.json needs ?learner=NAME (a learner of the board)\n",
            )
                .into_response(),
            "text/plain; charset=utf-8",
        );
    };
    let details = app.shared.with_board(|board, room, version| {
        let row = board.full_row(room, name)?;
        Some(learner_details(board, &row, version))
    });
    match details {
        Some(Some(json)) => with_headers(json.into_response(), "application/json"),
        Some(None) => no_learner(name),
        None => not_yet(),
    }
}

fn no_learner(name: &str) -> Response {
    with_headers(
        (
            StatusCode::NOT_FOUND,
            format!("no learner `{}` in this room\n", name.escape_debug()),
        )
            .into_response(),
        "text/plain; charset=utf-8",
    )
}

fn not_yet() -> Response {
    with_headers(
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "the room is still being graded; try again in a moment\n",
        )
            .into_response(),
        "text/plain; charset=utf-8",
    )
}

async fn events(State(app): State<App>, Query(q): Params, headers: HeaderMap) -> Response {
    if let Some(r) = refused(&app, &q, &headers) {
        return r;
    }
    let shown = q.get("shown").and_then(|v| v.parse().ok());
    let (first, rx) = app.shared.subscribe(shown);
    let stream = stream::iter(first.into_iter().map(sse)).chain(follow(app, rx));
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn sse(p: Push) -> Result<SseEvent, Infallible> {
    Ok(SseEvent::default().event(p.event).data(&*p.data))
}

/// The pushes as they come, until the server stops (what was pushed before it stopped, such as
/// the status saying so, is still sent); a page that fell behind gets every row.
fn follow(
    app: App,
    rx: broadcast::Receiver<Push>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    stream::unfold((app, rx), |(mut app, mut rx)| async move {
        loop {
            if *app.stopped.borrow() {
                return rx.try_recv().ok().map(|p| (vec![p], (app, rx)));
            }
            tokio::select! {
                biased;
                got = rx.recv() => match got {
                    Ok(p) => return Some((vec![p], (app, rx))),
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let all = app.shared.everything();
                        if !all.is_empty() {
                            return Some((all, (app, rx)));
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = app.stopped.changed() => {}
            }
        }
    })
    .flat_map(|pushes| stream::iter(pushes.into_iter().map(sse)))
}
