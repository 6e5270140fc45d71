//! The HTTP server: its own thread's runtime and the one handler (record, apply faults, answer),
//! which turns a handler's [`Reply`] into HTTP.

use std::future::IntoFuture;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::Router;
use tokio::sync::oneshot;

use super::faults::{fault_status, FaultAction};
use super::listener::{Conn, KillableListener};
use super::reply::Reply;
use super::request::{Query, Request};
use super::store::{lock, Inner};
use super::watch::watch_body;

/// Runs the HTTP server until `stopped` fires. Dropping the runtime afterwards cancels every
/// connection task, open watches included, so stopping never waits for clients.
pub(super) fn serve_until_stopped(
    listener: std::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Mutex<Inner>>,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("emulator runtime");
    runtime.block_on(async move {
        let listener = KillableListener::new(
            tokio::net::TcpListener::from_std(listener).expect("tokio listener"),
            tls,
        );
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(shared);
        let server = axum::serve(listener, app.into_make_service_with_connect_info::<Conn>());
        tokio::select! {
            _ = server.into_future() => {}
            _ = stopped => {}
        }
    });
}

/// The one handler: record, apply faults, then answer like the API server.
async fn handle(
    State(shared): State<Arc<Mutex<Inner>>>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header_text = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let req = Request {
        method,
        path: uri.path().to_string(),
        raw_query: uri.query().unwrap_or("").to_string(),
        query: Query::parse(uri.query().unwrap_or("")),
        content_type: header_text(header::CONTENT_TYPE),
        accept: header_text(header::ACCEPT).unwrap_or_default(),
        headers: headers
            .iter()
            .map(|(n, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (n.as_str().to_string(), value)
            })
            .collect(),
        body,
    };
    let (seq, actions) = lock(&shared).record_and_match_faults(&req);
    let answer = |response: Response| {
        lock(&shared).answered(seq);
        response
    };
    for action in actions {
        match action {
            FaultAction::Sleep(delay) => tokio::time::sleep(delay).await,
            FaultAction::Wait(mut open) => {
                let _ = open.wait_for(|open| *open).await;
            }
            FaultAction::Fail(code, message) => {
                return answer(into_response(fault_status(code, &message, &req.path)))
            }
            FaultAction::Drop => {
                conn.dead.store(true, Ordering::SeqCst);
                return Response::new(Body::empty());
            }
        }
    }
    let reply = lock(&shared).serve(&req);
    answer(into_response(reply))
}

fn into_response(reply: Reply) -> Response {
    let (code, content_type, body) = match reply {
        Reply::Json(code, value) => (code, "application/json", Body::from(value.to_string())),
        Reply::JsonAs(code, media, value) => (code, media, Body::from(value.to_string())),
        Reply::Raw(code, text) => (code, "application/json", Body::from(text)),
        Reply::Text(code, text) => (code, "text/plain; charset=utf-8", Body::from(text)),
        Reply::Watch(start) => (200, "application/json", watch_body(*start)),
    };
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, content_type)
        .body(body)
        .expect("valid response")
}
