//! A local Kubernetes API server emulator for tests that cannot run a real control plane.
//!
//! It speaks plain HTTP on 127.0.0.1 (random port) and answers the way kube-apiserver v1.33 does
//! for the requests trainlab makes: version, discovery (aggregated, `apidiscovery.k8s.io/v2` and
//! `v2beta1`, when the Accept header asks for it, as servers since 1.27 do by default; the legacy documents
//! otherwise, or always after [`Emulator::legacy_discovery_only`]), list/get/watch with label and field
//! selectors, create, replace, delete (with namespace and CRD cascades), server-side apply, JSON
//! patch and merge patch, `dryRun=All`, and real-shaped `Status` errors. Every request is recorded
//! so tests can prove grading is read-only and count requests, with when it arrived and when it
//! was answered (a request timeline); faults (errors, latency, dropped connections, a gate that
//! holds requests until enough are in flight at once) can be injected per path prefix.
//!
//! The server runs on its own thread with its own tokio runtime, so a test can run the real
//! `trainlab` binary as a child process (blocking) while the emulator keeps serving.
//!
//! Choices where a real server has more behaviour than an emulator needs:
//! - objects are deleted at once (no finalizers, no graceful pod termination), but the DELETE
//!   answer has the real shape (the object for pods/namespaces/services/…, else a `Status`);
//!   [`Emulator::terminate_namespaces_after`] makes namespaces terminate for a while first, with
//!   the `Terminating` phase and the refusal of new content a real namespace has meanwhile;
//! - server-side apply merges the applied fields over the stored object (objects merge key by
//!   key, lists and scalars are replaced, `null` removes) and tracks field ownership in
//!   `metadata.managedFields`, with real-shaped 409 conflicts and `force` (a simplified model,
//!   see "Field ownership" below: lists are atomic, seeded objects have no owners);
//! - list items of built-in kinds carry no `apiVersion`/`kind` (as kube-apiserver encodes typed
//!   lists); items of custom resources keep them (as unstructured lists do);
//! - field selectors compare any dotted path (`metadata.name`, `spec.nodeName`, `status.phase`)
//!   instead of rejecting the ones a kind does not index.
//! - a custom resource whose CustomResourceDefinition is stored is checked against its
//!   `openAPIV3Schema` for undeclared fields and enums only, with the real server's words (see
//!   "Schema validation of custom resources"); types, patterns, `required` and CEL rules are not
//!   enforced, and CRDs made with [`Emulator::serve_crd`] have no schema at all.

#![allow(dead_code)]

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BTreeSet};
use std::future::IntoFuture;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::serve::IncomingStream;
use axum::Router;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{broadcast, mpsc, oneshot};

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// A running emulator. Dropping it stops the server (so does [`Emulator::stop`]).
pub struct Emulator {
    shared: Arc<Mutex<Inner>>,
    addr: SocketAddr,
    /// The PEM certificate clients must trust, when serving HTTPS.
    tls_cert: Option<String>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One request as the emulator received it, in arrival order.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub method: String,
    /// The path without the query string, as sent (not percent-decoded).
    pub path: String,
    /// The raw query string ("" when absent).
    pub query: String,
    pub content_type: Option<String>,
    pub body: String,
    /// Every header, names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    /// When the request arrived, since the emulator started.
    pub received: Duration,
    /// When its answer was handed to the connection (headers sent), since the emulator started;
    /// `None` while it is being answered or when the connection was dropped.
    pub answered: Option<Duration>,
    /// Arrival order, unique for this emulator.
    pub seq: u64,
}

impl Recorded {
    /// The first value of a header (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A fault injected before normal handling (see [`Emulator::fault`]).
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with a real-shaped `Status` error of this code and message.
    Status(u16, String),
    /// One code per matching request, in order: a 2xx/3xx code lets that request through, any
    /// other code answers with a `Status` error. Once the list is used up, requests pass.
    Sequence(Vec<u16>),
    /// Wait this long, then go on (other faults still apply, then normal handling).
    Latency(Duration),
    /// Close the connection without answering: the client sees a connection error.
    Down,
    /// Hold each matching request until this many have arrived (all of them in flight at
    /// once), then let them through; later ones pass. A client that waits for one answer before
    /// sending the next request never gets one (its request timeout ends it): so a test can
    /// prove requests were sent concurrently without measuring time.
    Gate(usize),
}

impl Emulator {
    /// Starts serving `seed` (JSON values of real Kubernetes objects) on 127.0.0.1.
    pub fn start(seed: Vec<Value>) -> Emulator {
        Emulator::start_with(seed, None)
    }

    /// Like [`Emulator::start`], but serving HTTPS (HTTP/1.1 over TLS) with a fresh self-signed
    /// certificate for 127.0.0.1, as a real API server does: TLS handshakes and the TCP
    /// behaviour around them are part of what the client pays per connection.
    pub fn start_tls(seed: Vec<Value>) -> Emulator {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()])
            .expect("self-signed certificate");
        Emulator::start_tls_with(seed, certified.cert, certified.signing_key)
    }

    /// [`Emulator::start_tls`] with a self-signed certificate that is also a certificate
    /// authority (basic constraints CA:TRUE), as some hand-made clusters have: Go's crypto/x509
    /// (kubectl) accepts it as its own root, webpki (rustls) refuses a CA as a server's.
    pub fn start_tls_ca_as_server(seed: Vec<Value>) -> Emulator {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params
            .self_signed(&key)
            .expect("self-signed CA certificate");
        Emulator::start_tls_with(seed, cert, key)
    }

    fn start_tls_with(
        seed: Vec<Value>,
        cert: rcgen::Certificate,
        signing_key: rcgen::KeyPair,
    ) -> Emulator {
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(signing_key.serialize_der());
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key.into())
            .expect("server certificate");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        // No TLS 1.3 session tickets: the server sends nothing after its handshake flight, so
        // the client's first request on a new connection follows its own Finished message
        // while that is still unacknowledged (the case where Nagle's algorithm holds it).
        config.send_tls13_tickets = 0;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        Emulator::start_with(seed, Some((acceptor, cert.pem())))
    }

    fn start_with(seed: Vec<Value>, tls: Option<(tokio_rustls::TlsAcceptor, String)>) -> Emulator {
        let (acceptor, tls_cert) = match tls {
            Some((a, pem)) => (Some(a), Some(pem)),
            None => (None, None),
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("listener address");
        let shared = Arc::new(Mutex::new(Inner::new(seed, addr.port())));
        let (shutdown, stopped) = oneshot::channel();
        let state = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("k8s-emulator-{}", addr.port()))
            .spawn(move || serve_until_stopped(listener, acceptor, state, stopped))
            .expect("spawn emulator thread");
        Emulator {
            shared,
            addr,
            tls_cert,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// Starts with the objects of YAML/JSON files or folders (recursively; multi-document YAML,
    /// `kind: List` and typed lists are flattened). Panics on unreadable files: the test is wrong.
    pub fn start_from(paths: &[&Path]) -> Emulator {
        let mut seed = Vec::new();
        for path in paths {
            for file in manifest_files(path) {
                seed.extend(parse_manifest(&file));
            }
        }
        Emulator::start(seed)
    }

    /// `http://127.0.0.1:PORT` (`https://` when started with [`Emulator::start_tls`]).
    pub fn url(&self) -> String {
        let scheme = if self.tls_cert.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// Writes `dir/kubeconfig` with one cluster, user and context named `context` (the current
    /// context) pointing at this emulator, and returns its path. With TLS, the certificate is
    /// written to `dir/emulator-ca.pem` and named as the cluster's certificate authority.
    pub fn kubeconfig(&self, dir: &Path, context: &str) -> PathBuf {
        let mut cluster = json!({"server": self.url()});
        if let Some(pem) = &self.tls_cert {
            let ca = dir.join("emulator-ca.pem");
            std::fs::write(&ca, pem).expect("write emulator-ca.pem");
            cluster["certificate-authority"] = json!(ca.display().to_string());
        }
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": context, "user": {}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
            "preferences": {},
        });
        let path = dir.join("kubeconfig");
        // JSON is YAML: kube reads it like any kubeconfig.
        let text = serde_json::to_string_pretty(&config).expect("kubeconfig json");
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }

    /// Serves a custom resource kind in discovery (and its objects, seeded or created later).
    /// Seeded or created CustomResourceDefinition objects are served too, without this call.
    pub fn serve_crd(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
    ) {
        let resource = Resource::custom(group, version, kind, plural, namespaced);
        let mut inner = self.lock();
        inner
            .crds
            .retain(|r| !(r.group == group && r.version == version && r.plural == plural));
        inner.crds.push(resource);
    }

    /// Stops serving a kind [`Emulator::serve_crd`] served (as if its CRD were deleted; its
    /// objects stay stored but unreachable).
    pub fn unserve_crd(&self, group: &str, version: &str, plural: &str) {
        self.lock()
            .crds
            .retain(|r| !(r.group == group && r.version == version && r.plural == plural));
    }

    /// Injects `fault` for requests whose method matches (`None`: any) and whose path starts
    /// with `path_prefix`; `dry_run_only` limits it to `dryRun=All` requests. Faults are checked
    /// in the order they were added.
    pub fn fault(&self, method: Option<&str>, path_prefix: &str, dry_run_only: bool, fault: Fault) {
        self.lock().faults.push(FaultRule {
            method: method.map(str::to_ascii_uppercase),
            prefix: path_prefix.to_string(),
            dry_run_only,
            gate: matches!(fault, Fault::Gate(_)).then(|| tokio::sync::watch::channel(false).0),
            fault,
            used: 0,
        });
    }

    pub fn clear_faults(&self) {
        self.lock().faults.clear();
    }

    /// Answers discovery only with the legacy documents (`APIVersions`, `APIGroupList`, one
    /// `APIResourceList` per group/version) whatever the Accept header asks, as API servers
    /// before Kubernetes 1.27 do by default; `false` serves aggregated discovery again (the default).
    pub fn legacy_discovery_only(&self, legacy: bool) {
        self.lock().aggregated = !legacy;
    }

    /// From now on a deleted namespace stays `Terminating` (with a deletionTimestamp) for
    /// `grace` before it and everything in it disappear, as the namespace controller takes a
    /// while to empty a real one; meanwhile creating objects in it is refused like upstream's
    /// NamespaceLifecycle admission does.
    pub fn terminate_namespaces_after(&self, grace: Duration) {
        self.lock().namespace_grace = Some(grace);
    }

    /// Every request received so far, discovery included, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// From now on every LIST page carries a new continue token, so a client that follows
    /// them never finishes (each page is the first page again).
    pub fn endless_pages(&self) {
        self.lock().endless_pages = true;
    }

    /// From now on every LIST whose path starts with `prefix` also answers `item`, whatever it
    /// is (a Secret in a list of Nodes): what a broken server or aggregated API might send.
    pub fn stray_item(&self, prefix: &str, item: Value) {
        self.lock().stray_items.push((prefix.to_string(), item));
    }

    pub fn clear_requests(&self) {
        self.lock().requests.clear();
    }

    /// The stored objects now (ordered by group, kind, namespace, name), with apiVersion/kind.
    pub fn objects(&self) -> Vec<Value> {
        let mut inner = self.lock();
        inner.reap_terminated();
        inner.store.values().cloned().collect()
    }

    /// Stops the server and waits for its thread (also done on drop).
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.shared)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// A test that panicked while holding the lock must not make every later call panic too.
fn lock(shared: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------------------------
// Server plumbing
// ---------------------------------------------------------------------------------------------

/// Runs the HTTP server until `stopped` fires. Dropping the runtime afterwards cancels every
/// connection task, open watches included, so stopping never waits for clients.
fn serve_until_stopped(
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
        let (ready, handshaken) = mpsc::unbounded_channel();
        let listener = KillableListener {
            tcp: tokio::net::TcpListener::from_std(listener).expect("tokio listener"),
            tls,
            ready,
            handshaken,
        };
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

/// Per-connection switch a handler flips to drop the connection without answering (`Down`).
#[derive(Clone, Debug, Default)]
struct Conn {
    dead: Arc<AtomicBool>,
}

impl Connected<IncomingStream<'_, KillableListener>> for Conn {
    fn connect_info(stream: IncomingStream<'_, KillableListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A byte stream a connection runs on: plain TCP or TLS over it.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A TCP listener whose connections can be killed from a handler: axum has no API to drop a
/// connection, so the stream fails every write once its switch is flipped and hyper closes it.
/// With TLS, handshakes run in their own tasks so a slow client never holds up the others.
struct KillableListener {
    tcp: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    ready: mpsc::UnboundedSender<Box<dyn Io>>,
    handshaken: mpsc::UnboundedReceiver<Box<dyn Io>>,
}

impl KillableListener {
    fn wrap(io: Box<dyn Io>) -> (KillableStream, Conn) {
        let conn = Conn::default();
        let stream = KillableStream {
            inner: io,
            dead: conn.dead.clone(),
        };
        (stream, conn)
    }
}

impl axum::serve::Listener for KillableListener {
    type Io = KillableStream;
    type Addr = Conn;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let accepted = tokio::select! {
                Some(io) = self.handshaken.recv() => return KillableListener::wrap(io),
                accepted = self.tcp.accept() => accepted,
            };
            match accepted {
                Ok((stream, _)) => {
                    // Go's net package enables TCP_NODELAY on every TCP connection by default
                    // (net.TCPConn.SetNoDelay docs), so kube-apiserver answers without Nagle.
                    let _ = stream.set_nodelay(true);
                    let Some(acceptor) = self.tls.clone() else {
                        return KillableListener::wrap(Box::new(stream));
                    };
                    let ready = self.ready.clone();
                    tokio::spawn(async move {
                        if let Ok(tls) = acceptor.accept(stream).await {
                            let _ = ready.send(Box::new(tls));
                        }
                    });
                }
                // Out of file descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(Conn::default())
    }
}

struct KillableStream {
    inner: Box<dyn Io>,
    dead: Arc<AtomicBool>,
}

impl KillableStream {
    fn killed(&self) -> Option<io::Error> {
        self.dead
            .load(Ordering::SeqCst)
            .then(|| io::Error::new(io::ErrorKind::ConnectionReset, "emulated outage"))
    }
}

impl AsyncRead for KillableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
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

/// What a request handler decided, turned into HTTP by [`into_response`].
enum Reply {
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
type Outcome = Result<Reply, Reply>;

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

/// A request as handlers see it.
struct Request {
    method: Method,
    path: String,
    raw_query: String,
    query: Query,
    content_type: Option<String>,
    accept: String,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Request {
    /// `dryRun=All` in the query, or in the DeleteOptions body kube-rs sends with DELETE.
    fn dry_run(&self) -> bool {
        if self.query.has("dryRun", "All") {
            return true;
        }
        self.method == Method::DELETE
            && serde_json::from_slice::<Value>(&self.body)
                .ok()
                .and_then(|options| options.get("dryRun").cloned())
                .and_then(|d| d.as_array().cloned())
                .is_some_and(|values| values.iter().any(|v| v == "All"))
    }

    /// The media type without parameters, e.g. `application/apply-patch+yaml`.
    fn media_type(&self) -> &str {
        let full = self.content_type.as_deref().unwrap_or("");
        full.split(';').next().unwrap_or("").trim()
    }

    fn recorded(&self, seq: u64, received: Duration) -> Recorded {
        Recorded {
            method: self.method.to_string(),
            path: self.path.clone(),
            query: self.raw_query.clone(),
            content_type: self.content_type.clone(),
            body: String::from_utf8_lossy(&self.body).into_owned(),
            headers: self.headers.clone(),
            received,
            answered: None,
            seq,
        }
    }

    /// The aggregated discovery version the Accept header asks for first, if any.
    fn aggregated_discovery(&self) -> Option<&'static str> {
        self.accept
            .split(',')
            .map(|media| media.replace(' ', ""))
            .find_map(|media| {
                let params: Vec<&str> = media.split(';').collect();
                let has = |p: &str| params.contains(&p);
                (params.first() == Some(&"application/json")
                    && has("g=apidiscovery.k8s.io")
                    && has("as=APIGroupDiscoveryList"))
                .then(|| {
                    if has("v=v2") {
                        Some("v2")
                    } else if has("v=v2beta1") {
                        Some("v2beta1")
                    } else {
                        None
                    }
                })
                .flatten()
            })
    }
}

/// Decoded query parameters, in order (a key may repeat, like `dryRun`).
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(raw: &str) -> Query {
        let pairs = raw
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (percent_decode(k, true), percent_decode(v, true))
            })
            .collect();
        Query(pairs)
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn has(&self, key: &str, value: &str) -> bool {
        self.0.iter().any(|(k, v)| k == key && v == value)
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

fn percent_decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            (b'+', _, _) if plus_is_space => out.push(b' '),
            (b, _, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

struct FaultRule {
    method: Option<String>,
    prefix: String,
    dry_run_only: bool,
    fault: Fault,
    /// How many entries of a `Sequence` were consumed, or requests arrived at a `Gate`.
    used: usize,
    /// A `Gate`'s switch (opened when enough requests arrived).
    gate: Option<tokio::sync::watch::Sender<bool>>,
}

impl FaultRule {
    fn matches(&self, req: &Request) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m == req.method.as_str())
            && req.path.starts_with(&self.prefix)
            && (!self.dry_run_only || req.dry_run())
    }
}

enum FaultAction {
    Sleep(Duration),
    /// Held until the gate opens.
    Wait(tokio::sync::watch::Receiver<bool>),
    Fail(u16, String),
    Drop,
}

/// A `Status` error for an injected fault, with details taken from the path like the real one.
fn fault_status(code: u16, message: &str, path: &str) -> Reply {
    failure(code, reason_for(code), message, details_from_path(path))
}

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Expired",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "",
    }
}

/// The message kube-apiserver uses for a bare error of this code.
fn default_message(code: u16) -> String {
    match code {
        401 => "Unauthorized".into(),
        403 => "forbidden: emulated fault".into(),
        404 => "the server could not find the requested resource".into(),
        409 => "the object has been modified; please apply your changes to the latest version and try again".into(),
        429 => "the server has received too many requests and has asked us to try again later".into(),
        500 => "Internal error occurred: emulated fault".into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted".into(),
        _ => format!("emulated fault ({code})"),
    }
}

/// `{name, group, kind: plural}` from a resource path, as errors about a resource carry.
fn details_from_path(path: &str) -> Value {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segs.as_slice() {
        ["api", _, rest @ ..] => ("", rest),
        ["apis", group, _, rest @ ..] => (*group, rest),
        _ => return json!({}),
    };
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    let mut details = Map::new();
    if let Some(name) = rest.get(1) {
        details.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        details.insert("group".into(), json!(group));
    }
    if let Some(plural) = rest.first() {
        details.insert("kind".into(), json!(plural));
    }
    Value::Object(details)
}

// ---------------------------------------------------------------------------------------------
// Resources and discovery
// ---------------------------------------------------------------------------------------------

const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Namespaces cannot be deleted as a collection.
const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

/// One served resource (one group/version/plural).
#[derive(Clone, Debug)]
struct Resource {
    group: String,
    version: String,
    kind: String,
    plural: String,
    singular: String,
    namespaced: bool,
    /// Serves `{plural}/status`; writes to the main resource then keep the stored status.
    status: bool,
    /// DELETE answers with the object instead of a `Status` (`ReturnDeletedObject` upstream).
    returns_deleted: bool,
    /// Built-in kinds are encoded without apiVersion/kind inside lists.
    builtin: bool,
    verbs: &'static [&'static str],
    short_names: Vec<String>,
    categories: Vec<String>,
}

impl Resource {
    fn custom(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> Resource {
        Resource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            namespaced,
            status: true,
            returns_deleted: false,
            builtin: false,
            verbs: ALL_VERBS,
            short_names: Vec::new(),
            categories: Vec::new(),
        }
    }

    fn api_version(&self) -> String {
        group_version(&self.group, &self.version)
    }

    /// `pods` or `deployments.apps`, as error messages name a resource.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Pod` or `Deployment.apps`, as Invalid errors name a kind.
    fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// `{name, group, kind: plural}` for NotFound/AlreadyExists/Conflict errors.
    fn details(&self, name: &str) -> Value {
        let mut details = json!({"name": name, "kind": self.plural});
        if !self.group.is_empty() {
            details["group"] = json!(self.group);
        }
        details
    }

    /// Real servers keep deleted pods, namespaces, PVCs and CRDs until finalizers run, so the
    /// object they return carries a deletionTimestamp.
    fn deletes_gracefully(&self) -> bool {
        self.builtin
            && matches!(
                self.kind.as_str(),
                "Pod" | "Namespace" | "PersistentVolumeClaim" | "CustomResourceDefinition"
            )
    }
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The built-in kinds every emulator serves.
fn builtin_resources() -> Vec<Resource> {
    // (group, version, kind, plural, namespaced, status subresource, returns deleted object,
    //  short names, categories)
    type Row = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        bool,
        bool,
        bool,
        &'static [&'static str],
        &'static [&'static str],
    );
    #[rustfmt::skip]
    const ROWS: &[Row] = &[
        ("", "v1", "Node", "nodes", false, true, false, &["no"], &[]),
        ("", "v1", "Pod", "pods", true, true, true, &["po"], &["all"]),
        ("", "v1", "Event", "events", true, false, false, &["ev"], &[]),
        ("", "v1", "Namespace", "namespaces", false, false, true, &["ns"], &[]),
        ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, false, true, &["pvc"], &[]),
        ("", "v1", "ConfigMap", "configmaps", true, false, false, &["cm"], &[]),
        ("", "v1", "Service", "services", true, false, true, &["svc"], &["all"]),
        ("", "v1", "ServiceAccount", "serviceaccounts", true, false, true, &["sa"], &[]),
        ("", "v1", "Secret", "secrets", true, false, false, &[], &[]),
        ("batch", "v1", "Job", "jobs", true, true, false, &[], &["all"]),
        ("apps", "v1", "Deployment", "deployments", true, false, false, &["deploy"], &["all"]),
        ("apps", "v1", "StatefulSet", "statefulsets", true, true, false, &["sts"], &["all"]),
        ("apps", "v1", "DaemonSet", "daemonsets", true, true, false, &["ds"], &["all"]),
        ("storage.k8s.io", "v1", "StorageClass", "storageclasses", false, false, true, &["sc"], &[]),
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false, false, true, &["crd", "crds"], &[]),
    ];
    ROWS.iter()
        .map(
            |&(group, version, kind, plural, namespaced, status, returns_deleted, short, cats)| {
                Resource {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: kind.to_lowercase(),
                    namespaced,
                    status,
                    returns_deleted,
                    builtin: true,
                    verbs: if kind == "Namespace" {
                        NAMESPACE_VERBS
                    } else {
                        ALL_VERBS
                    },
                    short_names: short.iter().map(|s| s.to_string()).collect(),
                    categories: cats.iter().map(|s| s.to_string()).collect(),
                }
            },
        )
        .collect()
}

/// The resources a stored CustomResourceDefinition serves (one per served version).
fn resources_of_crd(crd: &Value) -> Vec<Resource> {
    let spec = &crd["spec"];
    let (Some(group), Some(kind), Some(plural)) = (
        spec["group"].as_str(),
        spec["names"]["kind"].as_str(),
        spec["names"]["plural"].as_str(),
    ) else {
        return Vec::new();
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    versions
        .iter()
        .filter(|v| v["served"].as_bool() != Some(false))
        .filter_map(|v| {
            let mut r = Resource::custom(group, v["name"].as_str()?, kind, plural, namespaced);
            r.status = v["subresources"]["status"].is_object();
            if let Some(singular) = spec["names"]["singular"].as_str() {
                r.singular = singular.into();
            }
            r.short_names = strings(&spec["names"]["shortNames"]);
            r.categories = strings(&spec["names"]["categories"]);
            Some(r)
        })
        .collect()
}

fn discovery_entry(r: &Resource) -> Value {
    let mut entry = json!({
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        entry["categories"] = json!(r.categories);
    }
    entry
}

/// One resource of aggregated discovery (`APIResourceDiscovery`).
fn aggregated_entry(r: &Resource) -> Value {
    let kind = json!({"group": r.group, "version": r.version, "kind": r.kind});
    let mut entry = json!({
        "resource": r.plural,
        "responseKind": kind,
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        entry["categories"] = json!(r.categories);
    }
    if r.status {
        entry["subresources"] = json!([{
            "subresource": "status",
            "responseKind": kind,
            "verbs": STATUS_VERBS,
        }]);
    }
    entry
}

fn status_discovery_entry(r: &Resource) -> Value {
    json!({
        "name": format!("{}/status", r.plural),
        "singularName": "",
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": STATUS_VERBS,
    })
}

/// `APIResourceList` for one group/version, or `None` when nothing is served there.
fn resource_list(served: &[Resource], group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for r in served
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        resources.push(discovery_entry(r));
        if r.status {
            resources.push(status_discovery_entry(r));
        }
    }
    (!resources.is_empty()).then(|| {
        json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version(group, version),
            "resources": resources,
        })
    })
}

/// `APIGroup` entries for every non-core group, in the order groups were first served.
fn api_groups(served: &[Resource]) -> Vec<Value> {
    let mut order: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in served.iter().filter(|r| !r.group.is_empty()) {
        match order.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) if !versions.contains(&r.version.as_str()) => {
                versions.push(&r.version)
            }
            Some(_) => {}
            None => order.push((&r.group, vec![&r.version])),
        }
    }
    order
        .into_iter()
        .map(|(group, versions)| {
            let entry = |v: &str| json!({"groupVersion": group_version(group, v), "version": v});
            json!({
                "name": group,
                "versions": versions.iter().map(|v| entry(v)).collect::<Vec<_>>(),
                "preferredVersion": entry(versions[0]),
            })
        })
        .collect()
}

fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.1",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-05-15T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

// ---------------------------------------------------------------------------------------------
// Status errors
// ---------------------------------------------------------------------------------------------

/// A `Status` failure exactly as kube-apiserver encodes it.
fn failure(code: u16, reason: &str, message: impl Into<String>, details: Value) -> Reply {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message.into(),
        "reason": reason,
        "details": details,
        "code": code,
    });
    if reason.is_empty() {
        status.as_object_mut().map(|s| s.remove("reason"));
    }
    Reply::Json(code, status)
}

fn not_found(r: &Resource, name: &str) -> Reply {
    let message = format!("{} \"{name}\" not found", r.qualified());
    failure(404, "NotFound", message, r.details(name))
}

fn namespace_not_found(namespace: &str) -> Reply {
    let message = format!("namespaces \"{namespace}\" not found");
    failure(
        404,
        "NotFound",
        message,
        json!({"name": namespace, "kind": "namespaces"}),
    )
}

/// NamespaceLifecycle admission refusing a create in a terminating namespace
/// (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go: a
/// Forbidden error, `<resource> "<name>" is forbidden: unable to create new content in namespace
/// <ns> because it is being terminated`, with a `NamespaceTerminating` cause).
fn namespace_is_terminating(r: &Resource, name: &str, namespace: &str) -> Reply {
    let message = format!(
        "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
        r.qualified()
    );
    let mut details = r.details(name);
    details["causes"] = json!([{
        "reason": "NamespaceTerminating",
        "message": format!("namespace {namespace} is being terminated"),
        "field": "metadata.namespace",
    }]);
    failure(403, "Forbidden", message, details)
}

fn already_exists(r: &Resource, name: &str) -> Reply {
    let message = format!("{} \"{name}\" already exists", r.qualified());
    failure(409, "AlreadyExists", message, r.details(name))
}

fn conflict(r: &Resource, name: &str) -> Reply {
    let message = format!(
        "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
        r.qualified()
    );
    failure(409, "Conflict", message, r.details(name))
}

/// 422 Invalid for one field, e.g. `metadata.name: Required value: name or generateName is required`.
fn invalid(kind: &str, group: &str, name: &str, field: &str, cause: &str, message: &str) -> Reply {
    let full = format!("{kind} \"{name}\" is invalid: {field}: {message}");
    let mut details = json!({
        "name": name,
        "kind": kind.split('.').next().unwrap_or(kind),
        "causes": [{"reason": cause, "message": message, "field": field}],
    });
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    if name.is_empty() {
        details.as_object_mut().map(|d| d.remove("name"));
    }
    failure(422, "Invalid", full, details)
}

fn bad_request(message: impl Into<String>) -> Reply {
    failure(400, "BadRequest", message, json!({}))
}

fn method_not_allowed() -> Reply {
    failure(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        json!({}),
    )
}

fn path_not_found() -> Reply {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource",
        json!({}),
    )
}

// ---------------------------------------------------------------------------------------------
// Schema validation of custom resources
// ---------------------------------------------------------------------------------------------
//
// A custom resource whose kind comes from a stored CustomResourceDefinition is checked against
// that CRD's `openAPIV3Schema`, as kube-apiserver v1.33 does, for the two things the labs need:
// fields the schema does not declare, and enums. Nothing else of the schema is enforced (types,
// patterns, `required`, CEL rules); a schema with `x-kubernetes-preserve-unknown-fields` at the
// root (what most seeded CRDs have) checks nothing.
//
// - Server-side apply converts the applied object to a typed value before anything else, and a
//   field the schema does not declare fails that conversion whatever `fieldValidation` says, as
//   a plain error kube-apiserver answers with 500 and no reason: `failed to create typed patch
//   object (<ns>/<name>; <group>/<version>, Kind=<Kind>): .spec.foo: field not declared in
//   schema` (k8s.io/apimachinery v0.33.0 pkg/util/managedfields/internal/structuredmerge.go
//   `Apply` and `objectGVKNN`; the path and the `errors:` list of several are
//   structured-merge-diff v4.6.0 typed/helpers.go `ValidationErrors.Error`; the 500 is
//   k8s.io/apiserver v0.33.0 pkg/endpoints/handlers/responsewriters/status.go
//   `ErrorToAPIStatus`, kubernetes/kubernetes#139253).
// - Create and update bodies with `fieldValidation=Strict` are refused with 400 BadRequest:
//   `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error: unknown field
//   "spec.foo"` (apiextensions-apiserver v0.33.0 pkg/apiserver/customresource_handler.go
//   `schemaCoercingDecoder.Decode`; k8s.io/apimachinery pkg/runtime/error.go
//   `strictDecodingError`; k8s.io/apiserver pkg/endpoints/handlers/rest.go
//   `transformDecodeError`). Without Strict the real server prunes such fields; the emulator
//   keeps them.
// - A value outside an `enum` is 422 Invalid: `<Kind>.<group> "<name>" is invalid: <field>:
//   Unsupported value: "X": supported values: "a", "b"`, several as `[…, …]`, one cause each
//   (apiextensions-apiserver pkg/apiserver/validation/validation.go
//   `kubeOpenAPIResultToFieldErrors`; k8s.io/apimachinery pkg/util/validation/field/errors.go
//   `NotSupported` and `ErrorBody`, pkg/api/errors/errors.go `NewInvalid`; field paths as
//   kube-openapi's validators build them: `spec.a[0].b`). Real servers report such errors in
//   map order; the emulator reports them in document order (keys sorted).

/// The keys of an object schema's value that the schema does not declare, as server-side apply's
/// typed conversion names them (`.spec.foo`, `.spec.tasks[0].bar`).
fn undeclared_fields(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let preserve = schema["x-kubernetes-preserve-unknown-fields"] == json!(true);
    match value {
        Value::Object(fields) => {
            for (key, v) in fields {
                let here = format!("{path}.{key}");
                match (
                    schema["properties"].get(key),
                    &schema["additionalProperties"],
                ) {
                    (Some(s), _) => undeclared_fields(s, v, &here, out),
                    (None, extra @ Value::Object(_)) => undeclared_fields(extra, v, &here, out),
                    (None, Value::Bool(true)) => {}
                    _ if preserve => {}
                    _ => out.push(here),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    undeclared_fields(s, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// The undeclared fields of a whole object: apiVersion, kind and metadata are the API's.
fn undeclared_in_object(schema: &Value, obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Value::Object(fields) = obj {
        for (key, v) in fields {
            if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let mut one = Map::new();
            one.insert(key.clone(), v.clone());
            undeclared_fields(schema, &Value::Object(one), "", &mut out);
        }
    }
    out
}

/// `(field, ErrorBody)` of every value outside its schema's `enum`.
fn enum_violations(schema: &Value, value: &Value, path: &str, out: &mut Vec<(String, String)>) {
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            out.push((path.to_string(), unsupported_value(value, allowed)));
        }
    }
    match value {
        Value::Object(fields) => {
            for (key, v) in fields {
                let here = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match (
                    schema["properties"].get(key),
                    &schema["additionalProperties"],
                ) {
                    (Some(s), _) => enum_violations(s, v, &here, out),
                    (None, extra @ Value::Object(_)) => enum_violations(extra, v, &here, out),
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    enum_violations(s, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// `field.NotSupported(...).ErrorBody()`: `Unsupported value: "X": supported values: "a", "b"`
/// (a string value `%q`-quoted, a number or bool as is; each allowed value quoted, non-strings
/// as their JSON first).
fn unsupported_value(value: &Value, allowed: &[Value]) -> String {
    let quote = |s: &str| Value::String(s.to_string()).to_string();
    let shown = match value {
        Value::String(s) => quote(s),
        other => other.to_string(),
    };
    let supported: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => quote(s),
            other => quote(&other.to_string()),
        })
        .collect();
    format!(
        "Unsupported value: {shown}: supported values: {}",
        supported.join(", ")
    )
}

/// 500 without a reason, as kube-apiserver answers a failed typed conversion of an apply patch.
fn typed_patch_error(applied: &Value, undeclared: &[String]) -> Reply {
    let api_version = applied["apiVersion"].as_str().unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = applied["kind"].as_str().unwrap_or("");
    let namespace = meta_str(applied, "namespace").unwrap_or("");
    let name = meta_str(applied, "name").unwrap_or("");
    let errors = match undeclared {
        [one] => format!("{one}: field not declared in schema"),
        many => {
            let lines: Vec<String> = many
                .iter()
                .map(|p| format!("  {p}: field not declared in schema"))
                .collect();
            format!("errors:\n{}", lines.join("\n"))
        }
    };
    let message = format!(
        "failed to create typed patch object ({namespace}/{name}; {group}/{version}, Kind={kind}): {errors}"
    );
    Reply::Json(
        500,
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "code": 500,
        }),
    )
}

/// 400 for a create or update body with undeclared fields under `fieldValidation=Strict`.
fn strict_decoding_error(r: &Resource, undeclared: &[String]) -> Reply {
    let unknown: Vec<String> = undeclared
        .iter()
        .map(|p| format!("unknown field \"{}\"", p.trim_start_matches('.')))
        .collect();
    bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
        unknown.join(", "),
        kind = r.kind,
        version = r.version,
    ))
}

/// 422 Invalid with one cause per field.
fn invalid_fields(r: &Resource, name: &str, errors: &[(String, String)]) -> Reply {
    let each: Vec<String> = errors.iter().map(|(f, m)| format!("{f}: {m}")).collect();
    let joined = match each.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let message = format!("{} \"{name}\" is invalid: {joined}", r.qualified_kind());
    let mut details = json!({
        "name": name,
        "kind": r.kind,
        "causes": errors
            .iter()
            .map(|(f, m)| json!({"reason": "FieldValueNotSupported", "message": m, "field": f}))
            .collect::<Vec<_>>(),
    });
    if !r.group.is_empty() {
        details["group"] = json!(r.group);
    }
    failure(422, "Invalid", message, details)
}

// ---------------------------------------------------------------------------------------------
// Store
// ---------------------------------------------------------------------------------------------

/// Identity of a stored object. The version is not part of it: one object is served under
/// every version of its group, as the API server converts between versions.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    group: String,
    kind: String,
    namespace: String,
    name: String,
}

impl Key {
    fn new(r: &Resource, namespace: &str, name: &str) -> Key {
        Key {
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    fn of(obj: &Value) -> Option<Key> {
        let api_version = obj["apiVersion"].as_str()?;
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        Some(Key {
            group: group.into(),
            kind: obj["kind"].as_str()?.into(),
            namespace: obj["metadata"]["namespace"].as_str().unwrap_or("").into(),
            name: obj["metadata"]["name"].as_str()?.into(),
        })
    }

    fn is(&self, r: &Resource) -> bool {
        self.group == r.group && self.kind == r.kind
    }
}

/// One stored change, for watches (live and resumed from a resourceVersion).
#[derive(Clone, Debug)]
struct Change {
    rv: u64,
    kind: &'static str,
    key: Key,
    object: Value,
}

/// Namespaces every cluster has: objects may be created in them without seeding them.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The emulator's state, behind one lock: every request is handled atomically.
struct Inner {
    builtins: Vec<Resource>,
    crds: Vec<Resource>,
    store: BTreeMap<Key, Value>,
    rv: u64,
    faults: Vec<FaultRule>,
    /// Every LIST page ends with a new continue token, forever (a broken server or proxy).
    endless_pages: bool,
    /// Items added to every LIST whose path starts with the key, as a broken server would.
    stray_items: Vec<(String, Value)>,
    requests: Vec<Recorded>,
    history: Vec<Change>,
    changes: broadcast::Sender<Change>,
    port: u16,
    /// How long a deleted namespace stays `Terminating` (None: deleted at once).
    namespace_grace: Option<Duration>,
    /// Terminating namespaces and when they disappear.
    terminating: BTreeMap<Key, std::time::Instant>,
    /// Serves aggregated discovery to clients that ask for it.
    aggregated: bool,
    /// When the emulator started (request times are counted from it).
    started: std::time::Instant,
    next_seq: u64,
}

impl Inner {
    fn new(seed: Vec<Value>, port: u16) -> Inner {
        let (changes, _) = broadcast::channel(1024);
        let mut inner = Inner {
            builtins: builtin_resources(),
            crds: Vec::new(),
            store: BTreeMap::new(),
            rv: 0,
            faults: Vec::new(),
            endless_pages: false,
            stray_items: Vec::new(),
            requests: Vec::new(),
            history: Vec::new(),
            changes,
            port,
            namespace_grace: None,
            terminating: BTreeMap::new(),
            aggregated: true,
            started: std::time::Instant::now(),
            next_seq: 0,
        };
        inner.seed(seed);
        inner
    }

    /// Stores seed objects as given, filling only what a real server always has (uid,
    /// creationTimestamp, resourceVersion, the `default` namespace of namespaced built-ins).
    fn seed(&mut self, seed: Vec<Value>) {
        let highest_seed_rv = seed
            .iter()
            .filter_map(|o| {
                o["metadata"]["resourceVersion"]
                    .as_str()?
                    .parse::<u64>()
                    .ok()
            })
            .max()
            .unwrap_or(0);
        self.rv = highest_seed_rv.max(1000);
        for mut obj in seed {
            assert!(obj.is_object(), "seed entries must be objects: {obj}");
            let builtin = self
                .builtins
                .iter()
                .find(|r| Key::of(&obj).is_some_and(|k| k.is(r)) && r.namespaced);
            let meta = metadata_mut(&mut obj);
            if builtin.is_some() && !meta.contains_key("namespace") {
                meta.insert("namespace".into(), json!("default"));
            }
            meta.entry("uid").or_insert_with(|| json!(new_uid()));
            meta.entry("creationTimestamp")
                .or_insert_with(|| json!(now_rfc3339()));
            if !meta.contains_key("resourceVersion") {
                self.rv += 1;
                meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
            }
            let key = Key::of(&obj).unwrap_or_else(|| {
                panic!("seed object needs apiVersion, kind and metadata.name: {obj}")
            });
            self.store.insert(key, obj);
        }
    }

    /// Built-ins, then `serve_crd` kinds, then kinds of stored CRD objects (first one wins).
    fn served(&self) -> Vec<Resource> {
        let from_crds = self.crd_objects().flat_map(resources_of_crd);
        let mut served: Vec<Resource> = Vec::new();
        for r in self
            .builtins
            .iter()
            .chain(&self.crds)
            .cloned()
            .chain(from_crds)
        {
            let duplicate = served
                .iter()
                .any(|s| s.group == r.group && s.version == r.version && s.plural == r.plural);
            if !duplicate {
                served.push(r);
            }
        }
        served
    }

    /// The stored CustomResourceDefinitions, found by their keys' range (the store is ordered
    /// by group and kind first): every request asks what is served, and a room's store holds
    /// tens of thousands of other objects.
    fn crd_objects(&self) -> impl Iterator<Item = &Value> {
        self.kind_range("apiextensions.k8s.io", "CustomResourceDefinition")
            .map(|(_, crd)| crd)
    }

    /// The stored objects of one group and kind, in key order.
    fn kind_range<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = (&'a Key, &'a Value)> {
        let start = Key {
            group: group.to_string(),
            kind: kind.to_string(),
            namespace: String::new(),
            name: String::new(),
        };
        self.store
            .range(start..)
            .take_while(move |(k, _)| k.group == group && k.kind == kind)
    }

    /// The `openAPIV3Schema` a stored CustomResourceDefinition gives this resource's version.
    fn schema_of(&self, r: &Resource) -> Option<Value> {
        if r.builtin {
            return None;
        }
        let crd = self.crd_objects().find(|crd| {
            crd["spec"]["group"] == r.group.as_str()
                && crd["spec"]["names"]["kind"] == r.kind.as_str()
        })?;
        crd["spec"]["versions"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == r.version.as_str())?
            .get("schema")?
            .get("openAPIV3Schema")
            .cloned()
    }

    /// The enum check of the object about to be stored (or answered, in a dry run).
    fn check_enums(&self, r: &Resource, obj: &Value) -> Result<(), Reply> {
        let Some(schema) = self.schema_of(r) else {
            return Ok(());
        };
        let mut errors = Vec::new();
        enum_violations(&schema, obj, "", &mut errors);
        if errors.is_empty() {
            return Ok(());
        }
        Err(invalid_fields(
            r,
            meta_str(obj, "name").unwrap_or(""),
            &errors,
        ))
    }

    /// A create or update body under `fieldValidation=Strict`: no undeclared field.
    fn check_strict(&self, req: &Request, r: &Resource, obj: &Value) -> Result<(), Reply> {
        if !req.query.has("fieldValidation", "Strict") {
            return Ok(());
        }
        let Some(schema) = self.schema_of(r) else {
            return Ok(());
        };
        let undeclared = undeclared_in_object(&schema, obj);
        if undeclared.is_empty() {
            Ok(())
        } else {
            Err(strict_decoding_error(r, &undeclared))
        }
    }

    fn record_and_match_faults(&mut self, req: &Request) -> (u64, Vec<FaultAction>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.requests
            .push(req.recorded(seq, self.started.elapsed()));
        let mut actions = Vec::new();
        for rule in self.faults.iter_mut().filter(|rule| rule.matches(req)) {
            match &rule.fault {
                Fault::Latency(delay) => actions.push(FaultAction::Sleep(*delay)),
                Fault::Gate(needed) => {
                    rule.used += 1;
                    if let Some(gate) = &rule.gate {
                        if rule.used >= *needed {
                            gate.send_replace(true);
                        }
                        actions.push(FaultAction::Wait(gate.subscribe()));
                    }
                }
                Fault::Status(code, message) => {
                    actions.push(FaultAction::Fail(*code, message.clone()));
                    break;
                }
                Fault::Down => {
                    actions.push(FaultAction::Drop);
                    break;
                }
                Fault::Sequence(codes) => {
                    let Some(&code) = codes.get(rule.used) else {
                        continue;
                    };
                    rule.used += 1;
                    if code >= 400 {
                        actions.push(FaultAction::Fail(code, default_message(code)));
                        break;
                    }
                }
            }
        }
        (seq, actions)
    }

    /// Notes when request `seq` was answered.
    fn answered(&mut self, seq: u64) {
        let at = self.started.elapsed();
        if let Some(r) = self.requests.iter_mut().rev().find(|r| r.seq == seq) {
            r.answered = Some(at);
        }
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Stores `obj` with a new resourceVersion and tells watchers.
    fn put(&mut self, key: Key, mut obj: Value, kind: &'static str) -> Value {
        let rv = self.next_rv();
        metadata_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        self.store.insert(key.clone(), obj.clone());
        self.publish(Change {
            rv,
            kind,
            key,
            object: obj.clone(),
        });
        obj
    }

    /// Removes an object; watchers get it with the resourceVersion of the deletion.
    fn remove(&mut self, key: &Key) -> Option<Value> {
        let mut obj = self.store.remove(key)?;
        let rv = self.next_rv();
        metadata_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        self.publish(Change {
            rv,
            kind: "DELETED",
            key: key.clone(),
            object: obj.clone(),
        });
        Some(obj)
    }

    fn publish(&mut self, change: Change) {
        self.history.push(change.clone());
        // No receiver is fine: nobody watches.
        let _ = self.changes.send(change);
    }

    /// Namespaces whose termination time is up disappear, with everything in them.
    fn reap_terminated(&mut self) {
        let now = std::time::Instant::now();
        let due: Vec<Key> = self
            .terminating
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            self.terminating.remove(&key);
            if let Some(obj) = self.store.get(&key).cloned() {
                for dependent in self.cascade(&key, &obj) {
                    self.remove(&dependent);
                }
                self.remove(&key);
            }
        }
    }

    fn namespace_terminating(&self, namespace: &str) -> bool {
        self.terminating.keys().any(|k| k.name == namespace)
    }

    fn namespace_exists(&self, namespace: &str) -> bool {
        SYSTEM_NAMESPACES.contains(&namespace)
            || self.store.contains_key(&Key {
                group: String::new(),
                kind: "Namespace".into(),
                namespace: String::new(),
                name: namespace.into(),
            })
    }
}

// ---------------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------------

/// A resource request path, resolved against the served resources.
struct Target {
    resource: Resource,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

impl Target {
    /// The namespace of objects addressed by this path ("" for cluster-scoped kinds).
    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    fn key(&self, name: &str) -> Key {
        Key::new(&self.resource, self.namespace(), name)
    }

    fn is_status(&self) -> bool {
        self.subresource.as_deref() == Some("status")
    }
}

impl Inner {
    fn serve(&mut self, req: &Request) -> Reply {
        self.reap_terminated();
        let segments: Vec<String> = req
            .path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| percent_decode(s, false))
            .collect();
        let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
        let discovery = match segs.as_slice() {
            ["version"] => Some(Reply::Json(200, version_info())),
            ["healthz" | "livez" | "readyz"] => Some(Reply::Text(200, "ok")),
            ["api" | "apis"] if self.aggregated && req.aggregated_discovery().is_some() => {
                let version = req.aggregated_discovery().unwrap_or("v2");
                Some(self.aggregated_list(segs[0] == "api", version))
            }
            ["api"] => Some(Reply::Json(200, self.api_versions())),
            ["apis"] => Some(Reply::Json(200, self.group_list())),
            ["apis", group] => Some(self.group(group)),
            ["api", version] => Some(self.resources("", version)),
            ["apis", group, version] => Some(self.resources(group, version)),
            _ => None,
        };
        if let Some(reply) = discovery {
            // Discovery is read-only. `/api` and `/apis` are aggregated when asked for (above),
            // else the legacy documents, which clients fall back to.
            return if req.method == Method::GET {
                reply
            } else {
                method_not_allowed()
            };
        }
        let target = match segs.as_slice() {
            ["api", version, rest @ ..] => self.resolve("", version, rest),
            ["apis", group, version, rest @ ..] => self.resolve(group, version, rest),
            _ => None,
        };
        match target {
            Some(target) => self.dispatch(req, &target).unwrap_or_else(|e| e),
            None => path_not_found(),
        }
    }

    fn api_versions(&self) -> Value {
        json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": format!("127.0.0.1:{}", self.port)}
            ],
        })
    }

    /// `APIGroupDiscoveryList` of `/api` (`core`: the core group only) or `/apis` (every other
    /// group), as kube-apiserver serves it by default since 1.27 (k8s.io/api `apidiscovery/v2` types;
    /// KEP-3352): each group's versions with their resources, subresources nested.
    fn aggregated_list(&self, core: bool, version: &'static str) -> Reply {
        let served = self.served();
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in served.iter().filter(|r| r.group.is_empty() == core) {
            match groups.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, versions)) if !versions.contains(&r.version.as_str()) => {
                    versions.push(&r.version)
                }
                Some(_) => {}
                None => groups.push((&r.group, vec![&r.version])),
            }
        }
        let items: Vec<Value> = groups
            .into_iter()
            .map(|(group, versions)| {
                let mut metadata = json!({"creationTimestamp": null});
                if !group.is_empty() {
                    metadata["name"] = json!(group);
                }
                let versions: Vec<Value> = versions
                    .into_iter()
                    .map(|v| {
                        let resources: Vec<Value> = served
                            .iter()
                            .filter(|r| r.group == group && r.version == v)
                            .map(aggregated_entry)
                            .collect();
                        json!({"version": v, "resources": resources, "freshness": "Current"})
                    })
                    .collect();
                json!({"metadata": metadata, "versions": versions})
            })
            .collect();
        let media = match version {
            "v2beta1" => {
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
            }
            _ => "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        };
        Reply::JsonAs(
            200,
            media,
            json!({
                "kind": "APIGroupDiscoveryList",
                "apiVersion": format!("apidiscovery.k8s.io/{version}"),
                "metadata": {},
                "items": items,
            }),
        )
    }

    fn group_list(&self) -> Value {
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": api_groups(&self.served())})
    }

    fn group(&self, group: &str) -> Reply {
        let groups = api_groups(&self.served());
        match groups.into_iter().find(|g| g["name"] == group) {
            Some(mut g) => {
                g["kind"] = json!("APIGroup");
                g["apiVersion"] = json!("v1");
                Reply::Json(200, g)
            }
            None => path_not_found(),
        }
    }

    fn resources(&self, group: &str, version: &str) -> Reply {
        match resource_list(&self.served(), group, version) {
            Some(list) => Reply::Json(200, list),
            None => path_not_found(),
        }
    }

    /// `{plural}`, `{plural}/{name}[/{sub}]`, `namespaces/{ns}/{plural}[/{name}[/{sub}]]`.
    /// `namespaces/{x}/{y}` is a namespaced collection only when `y` is a namespaced plural of
    /// this group/version; otherwise it is the `y` subresource of namespace `x`.
    fn resolve(&self, group: &str, version: &str, rest: &[&str]) -> Option<Target> {
        let served = self.served();
        let find = |plural: &str| {
            served
                .iter()
                .find(|r| r.group == group && r.version == version && r.plural == plural)
                .cloned()
        };
        let namespaced = |plural: &str| find(plural).is_some_and(|r| r.namespaced);
        let own = |s: &&str| s.to_string();
        let (namespace, plural, name, sub) = match rest {
            ["namespaces", ns, plural, tail @ ..] if namespaced(plural) && tail.len() <= 2 => (
                Some(ns.to_string()),
                *plural,
                tail.first().map(own),
                tail.get(1).map(own),
            ),
            [plural, tail @ ..] if tail.len() <= 2 => {
                (None, *plural, tail.first().map(own), tail.get(1).map(own))
            }
            _ => return None,
        };
        let resource = find(plural)?;
        let sub_ok = match sub.as_deref() {
            None => true,
            Some("status") => resource.status,
            Some(_) => false,
        };
        // A namespaced object is only addressable inside its namespace.
        let scope_ok = resource.namespaced == namespace.is_some() || name.is_none();
        (sub_ok && scope_ok).then_some(Target {
            resource,
            namespace,
            name,
            subresource: sub,
        })
    }

    fn dispatch(&mut self, req: &Request, t: &Target) -> Outcome {
        let has_name = t.name.is_some();
        if t.subresource.is_some()
            && !matches!(req.method, Method::GET | Method::PUT | Method::PATCH)
        {
            return Err(method_not_allowed());
        }
        match req.method {
            Method::GET if !has_name && req.query.flag("watch") => self.watch(req, t),
            Method::GET if !has_name => self.list(req, t),
            Method::GET => self.get(req, t),
            // Creating a namespaced object needs its namespace in the path.
            Method::POST if !has_name && (t.namespace.is_some() || !t.resource.namespaced) => {
                self.create(req, t)
            }
            Method::PUT if has_name => self.replace(req, t),
            Method::PATCH if has_name => self.patch(req, t),
            Method::DELETE if has_name => self.delete(req, t),
            Method::DELETE if t.resource.verbs.contains(&"deletecollection") => {
                self.delete_collection(req, t)
            }
            _ => Err(method_not_allowed()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reads: get, list, watch
// ---------------------------------------------------------------------------------------------

/// Which objects a list, watch or deletecollection selects.
#[derive(Clone)]
struct Filter {
    group: String,
    kind: String,
    namespace: Option<String>,
    labels: Vec<LabelRequirement>,
    fields: Vec<FieldRequirement>,
}

impl Filter {
    fn from_request(req: &Request, t: &Target) -> Result<Filter, Reply> {
        let labels = parse_label_selector(req.query.get("labelSelector").unwrap_or(""))
            .map_err(|e| bad_request(format!("unable to parse requirement: {e}")))?;
        let fields = parse_field_selector(req.query.get("fieldSelector").unwrap_or(""))
            .map_err(|e| bad_request(format!("invalid field selector: {e}")))?;
        Ok(Filter {
            group: t.resource.group.clone(),
            kind: t.resource.kind.clone(),
            namespace: t.namespace.clone(),
            labels,
            fields,
        })
    }

    fn matches(&self, key: &Key, obj: &Value) -> bool {
        key.group == self.group
            && key.kind == self.kind
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| *ns == key.namespace)
            && self
                .labels
                .iter()
                .all(|l| l.matches(&obj["metadata"]["labels"]))
            && self.fields.iter().all(|f| f.matches(obj))
    }
}

/// An object as the API answers it: apiVersion/kind of the version that was asked for.
fn present(r: &Resource, obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(map) = out.as_object_mut() {
        map.insert("apiVersion".into(), json!(r.api_version()));
        map.insert("kind".into(), json!(r.kind));
    }
    out
}

/// [`list_item`] written as JSON text onto `out`, from the stored object (keys in the order
/// `list_item`'s value would serialise them).
fn write_list_item(out: &mut String, r: &Resource, obj: &Value) {
    let Some(map) = obj.as_object() else {
        out.push_str(&list_item(r, obj).to_string());
        return;
    };
    let (api_version, kind) = (
        Value::String(r.api_version()),
        Value::String(r.kind.clone()),
    );
    let mut entries: Vec<(&str, &Value)> = map
        .iter()
        .filter(|(k, _)| *k != "apiVersion" && *k != "kind")
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    if !r.builtin {
        entries.push(("apiVersion", &api_version));
        entries.push(("kind", &kind));
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    out.push('{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(k).to_string());
        out.push(':');
        out.push_str(&v.to_string());
    }
    out.push('}');
}

/// A list item: typed (built-in) lists carry no apiVersion/kind per item, unstructured
/// (custom resource) lists do.
fn list_item(r: &Resource, obj: &Value) -> Value {
    let mut out = present(r, obj);
    if r.builtin {
        if let Some(map) = out.as_object_mut() {
            map.remove("apiVersion");
            map.remove("kind");
        }
    }
    out
}

fn list_document(r: &Resource, items: Vec<Value>, metadata: Value) -> Value {
    json!({
        "apiVersion": r.api_version(),
        "kind": format!("{}List", r.kind),
        "metadata": metadata,
        "items": items,
    })
}

/// kube-rs' `list_metadata`/`get_metadata` ask for `as=PartialObjectMetadata[List]`.
fn wants_metadata_only(req: &Request) -> bool {
    req.accept.contains("as=PartialObjectMetadata")
}

fn partial_metadata(obj: &Value) -> Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": obj["metadata"],
    })
}

impl Inner {
    fn get(&mut self, req: &Request, t: &Target) -> Outcome {
        let obj = self
            .store
            .get(&t.key(t.name()))
            .ok_or_else(|| not_found(&t.resource, t.name()))?;
        let body = if wants_metadata_only(req) {
            partial_metadata(obj)
        } else {
            present(&t.resource, obj)
        };
        Ok(Reply::Json(200, body))
    }

    fn selected(&self, filter: &Filter) -> Vec<(Key, Value)> {
        self.selected_refs(filter)
            .into_iter()
            .map(|(k, o)| (k.clone(), o.clone()))
            .collect()
    }

    /// The selected objects in key order, borrowed: a LIST walks only its own kind's keys (the
    /// store is ordered by group and kind first) and copies only the page it sends, as an API
    /// server's watch cache answers a paged LIST without copying the whole collection.
    fn selected_refs<'a>(&'a self, filter: &'a Filter) -> Vec<(&'a Key, &'a Value)> {
        self.kind_range(&filter.group, &filter.kind)
            .filter(|(k, o)| filter.matches(k, o))
            .collect()
    }

    /// LIST with selectors and `limit`/`continue` paging (the token is the offset).
    fn list(&mut self, req: &Request, t: &Target) -> Outcome {
        let filter = Filter::from_request(req, t)?;
        let all = self.selected_refs(&filter);
        let offset: usize = match req.query.get("continue").filter(|c| !c.is_empty()) {
            Some(token) if self.endless_pages && token.starts_with("endless-") => 0,
            Some(token) => token
                .strip_prefix("emulator-")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| bad_request("invalid continue token"))?,
            None => 0,
        };
        let limit = req
            .query
            .get("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|&l| l > 0)
            .unwrap_or(usize::MAX);
        let page: Vec<&Value> = all
            .iter()
            .skip(offset)
            .take(limit)
            .map(|&(_, o)| o)
            .collect();
        let mut metadata = json!({"resourceVersion": self.rv.to_string()});
        let next = offset.saturating_add(page.len());
        if next < all.len() {
            metadata["continue"] = json!(format!("emulator-{next}"));
            metadata["remainingItemCount"] = json!(all.len() - next);
        }
        if self.endless_pages {
            metadata["continue"] = json!(format!("endless-{}", self.next_seq));
        }
        if wants_metadata_only(req) {
            let items: Vec<Value> = page.into_iter().map(partial_metadata).collect();
            let list = json!({
                "apiVersion": "meta.k8s.io/v1",
                "kind": "PartialObjectMetadataList",
                "metadata": metadata,
                "items": items,
            });
            return Ok(Reply::Json(200, list));
        }
        // Written from the stored objects as they are, without copying each into a new value
        // first: a room's pods list is tens of thousands of objects, and the emulator answers
        // on one thread (a real API server serves a LIST from its watch cache, many at once).
        let head = list_document(&t.resource, Vec::new(), metadata);
        let mut body = String::from("{");
        for key in ["apiVersion", "kind", "metadata"] {
            body.push_str(&format!("{}:{},", Value::from(key), head[key]));
        }
        body.push_str("\"items\":[");
        let stray: Vec<&Value> = self
            .stray_items
            .iter()
            .filter(|(prefix, _)| req.path.starts_with(prefix.as_str()))
            .map(|(_, item)| item)
            .collect();
        for (i, o) in page.into_iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            write_list_item(&mut body, &t.resource, o);
        }
        for item in stray {
            if !body.ends_with('[') {
                body.push(',');
            }
            body.push_str(&item.to_string());
        }
        body.push_str("]}");
        Ok(Reply::Raw(200, body))
    }
}

/// What a watch sends first, and what it keeps listening to.
struct WatchStart {
    initial: Vec<Value>,
    changes: broadcast::Receiver<Change>,
    filter: Filter,
    resource: Resource,
    timeout: Option<Duration>,
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
    fn watch(&mut self, req: &Request, t: &Target) -> Outcome {
        let filter = Filter::from_request(req, t)?;
        let r = &t.resource;
        let since = req
            .query
            .get("resourceVersion")
            .filter(|rv| !rv.is_empty() && *rv != "0");
        let initial_events = req.query.flag("sendInitialEvents");
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
        })))
    }
}

/// The streaming body of a watch: one JSON event per line, fed by a task that stops when the
/// client disconnects (the body, hence the channel, is dropped) or the timeout passes.
fn watch_body(start: WatchStart) -> Body {
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
    let mut changes = start.changes;
    loop {
        tokio::select! {
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

// ---------------------------------------------------------------------------------------------
// Writes: create, replace, patch, apply, delete
// ---------------------------------------------------------------------------------------------

fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj["metadata"][field].as_str().filter(|s| !s.is_empty())
}

/// A request body: JSON, or YAML (apply bodies may be either). It must be one object.
fn parse_body(body: &[u8]) -> Result<Value, Reply> {
    let value = serde_json::from_slice::<Value>(body).or_else(|_| {
        let text = std::str::from_utf8(body).map_err(|_| ())?;
        serde_saphyr::from_str::<Value>(text).map_err(|_| ())
    });
    match value {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(bad_request(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        )),
    }
}

/// The body must be of the kind and group the URL names.
fn check_type(r: &Resource, obj: &Value) -> Result<(), Reply> {
    let (Some(api_version), Some(kind)) = (obj["apiVersion"].as_str(), obj["kind"].as_str()) else {
        let missing = if obj["kind"].is_string() {
            "apiVersion"
        } else {
            "Kind"
        };
        return Err(bad_request(format!(
            "Object '{missing}' is missing in '{obj}'"
        )));
    };
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    if group != r.group {
        return Err(bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            r.api_version()
        )));
    }
    if kind != r.kind {
        return Err(bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            r.kind
        )));
    }
    Ok(())
}

/// The body's namespace, if any, must be the one in the path.
fn check_namespace(t: &Target, obj: &Value) -> Result<(), Reply> {
    match meta_str(obj, "namespace") {
        Some(ns) if t.resource.namespaced && ns != t.namespace() => Err(bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}

/// The body's name must be the one in the URL (PUT, PATCH, apply).
fn check_name(t: &Target, obj: &Value) -> Result<(), Reply> {
    let name = meta_str(obj, "name").unwrap_or("");
    if name != t.name() {
        return Err(bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            t.name()
        )));
    }
    Ok(())
}

fn missing_name(r: &Resource) -> Reply {
    invalid(
        &r.qualified_kind(),
        &r.group,
        "",
        "metadata.name",
        "FieldValueRequired",
        "Required value: name or generateName is required",
    )
}

/// DNS-1123 subdomain (most kinds) or label (namespaces, services) names.
fn check_name_format(r: &Resource, name: &str) -> Result<(), Reply> {
    let label_only = r.builtin && matches!(r.kind.as_str(), "Namespace" | "Service");
    let valid_part = |part: &str| {
        !part.is_empty()
            && part.len() <= 63
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !part.starts_with('-')
            && !part.ends_with('-')
    };
    let ok = if label_only {
        valid_part(name)
    } else {
        name.len() <= 253 && name.split('.').all(valid_part)
    };
    if ok {
        return Ok(());
    }
    let rule = if label_only {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
    } else {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
    };
    let message = format!("Invalid value: \"{name}\": {rule}");
    Err(invalid(
        &r.qualified_kind(),
        &r.group,
        name,
        "metadata.name",
        "FieldValueInvalid",
        &message,
    ))
}

/// What the server sets on a new object: identity, timestamps, generation, defaults.
fn prepare_new(t: &Target, obj: &mut Value) {
    let r = &t.resource;
    obj["apiVersion"] = json!(r.api_version());
    let has_spec = obj.get("spec").is_some();
    let meta = metadata_mut(obj);
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "managedFields",
    ] {
        meta.remove(field);
    }
    if r.namespaced {
        meta.insert("namespace".into(), json!(t.namespace()));
    } else {
        meta.remove("namespace");
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
    if has_spec {
        meta.insert("generation".into(), json!(1));
    }
    if r.builtin && r.kind == "Namespace" {
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
    }
}

/// The status subresource changes only status; the main resource never changes a status that
/// has its own subresource (as kube-apiserver's status strategies do).
fn scope_to_subresource(t: &Target, existing: &Value, mut candidate: Value) -> Value {
    if t.is_status() {
        let mut out = existing.clone();
        match candidate.get("status") {
            Some(status) => out["status"] = status.clone(),
            None => {
                out.as_object_mut().map(|o| o.remove("status"));
            }
        }
        return out;
    }
    if t.resource.status {
        match existing.get("status") {
            Some(status) => candidate["status"] = status.clone(),
            None => {
                candidate.as_object_mut().map(|o| o.remove("status"));
            }
        }
    }
    candidate
}

/// Keeps what clients cannot change on update: identity and timestamps.
fn keep_identity(existing: &Value, candidate: &mut Value) {
    let meta = metadata_mut(candidate);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "generation",
        "resourceVersion",
    ] {
        match existing["metadata"].get(field) {
            Some(value) => meta.insert(field.into(), value.clone()),
            None => meta.remove(field),
        };
    }
}

impl Inner {
    fn create(&mut self, req: &Request, t: &Target) -> Outcome {
        let r = &t.resource;
        let mut obj = parse_body(&req.body)?;
        check_type(r, &obj)?;
        check_namespace(t, &obj)?;
        self.check_strict(req, r, &obj)?;
        let name = match (meta_str(&obj, "name"), meta_str(&obj, "generateName")) {
            (Some(name), _) => name.to_string(),
            (None, Some(prefix)) => format!("{prefix}{}", random_suffix()),
            (None, None) => return Err(missing_name(r)),
        };
        metadata_mut(&mut obj).insert("name".into(), json!(name));
        let owners = owners_after_update(req, t, None, &obj);
        self.create_object(req, t, &name, obj, owners)
    }

    /// The shared end of POST and of an apply that creates: `owners` own the new object.
    fn create_object(
        &mut self,
        req: &Request,
        t: &Target,
        name: &str,
        mut obj: Value,
        owners: Vec<Owner>,
    ) -> Outcome {
        let r = &t.resource;
        check_name_format(r, name)?;
        if r.namespaced && !self.namespace_exists(t.namespace()) {
            return Err(namespace_not_found(t.namespace()));
        }
        if r.namespaced && self.namespace_terminating(t.namespace()) {
            return Err(namespace_is_terminating(r, name, t.namespace()));
        }
        let key = t.key(name);
        if self.store.contains_key(&key) {
            return Err(already_exists(r, name));
        }
        prepare_new(t, &mut obj);
        set_owners(&mut obj, owners);
        self.check_enums(r, &obj)?;
        if req.dry_run() {
            return Ok(Reply::Json(201, present(r, &obj)));
        }
        let stored = self.put(key, obj, "ADDED");
        Ok(Reply::Json(201, present(r, &stored)))
    }

    fn existing(&self, t: &Target) -> Result<Value, Reply> {
        self.store
            .get(&t.key(t.name()))
            .cloned()
            .ok_or_else(|| not_found(&t.resource, t.name()))
    }

    /// A resourceVersion the client sent is a precondition: it must be the stored one.
    fn check_precondition(t: &Target, existing: &Value, candidate: &Value) -> Result<(), Reply> {
        match meta_str(candidate, "resourceVersion") {
            Some(rv) if Some(rv) != meta_str(existing, "resourceVersion") => {
                Err(conflict(&t.resource, t.name()))
            }
            _ => Ok(()),
        }
    }

    /// The shared end of PUT, PATCH and apply: store only a real change, so a no-op keeps the
    /// resourceVersion (as the real server does); spec changes bump metadata.generation.
    /// `owners`: the owners an apply computed; None for an update, whose manager takes the fields
    /// it changed.
    fn commit_update(
        &mut self,
        req: &Request,
        t: &Target,
        existing: Value,
        candidate: Value,
        owners: Option<Vec<Owner>>,
    ) -> Outcome {
        let r = &t.resource;
        let mut next = scope_to_subresource(t, &existing, candidate);
        keep_identity(&existing, &mut next);
        next["apiVersion"] = existing["apiVersion"].clone();
        next["kind"] = existing["kind"].clone();
        let owners = owners.unwrap_or_else(|| owners_after_update(req, t, Some(&existing), &next));
        set_owners(&mut next, owners);
        if next == existing {
            return Ok(Reply::Json(200, present(r, &existing)));
        }
        if next.get("spec") != existing.get("spec") {
            if let Some(generation) = existing["metadata"]["generation"].as_i64() {
                metadata_mut(&mut next).insert("generation".into(), json!(generation + 1));
            }
        }
        next["apiVersion"] = json!(r.api_version());
        self.check_enums(r, &next)?;
        if req.dry_run() {
            return Ok(Reply::Json(200, present(r, &next)));
        }
        let stored = self.put(t.key(t.name()), next, "MODIFIED");
        Ok(Reply::Json(200, present(r, &stored)))
    }

    fn replace(&mut self, req: &Request, t: &Target) -> Outcome {
        let candidate = parse_body(&req.body)?;
        check_type(&t.resource, &candidate)?;
        check_name(t, &candidate)?;
        check_namespace(t, &candidate)?;
        self.check_strict(req, &t.resource, &candidate)?;
        let existing = self.existing(t)?;
        Self::check_precondition(t, &existing, &candidate)?;
        self.commit_update(req, t, existing, candidate, None)
    }

    fn patch(&mut self, req: &Request, t: &Target) -> Outcome {
        let media_type = req.media_type();
        if media_type == "application/apply-patch+yaml" {
            return self.apply(req, t);
        }
        if req.query.get("force").is_some() {
            return Err(invalid_patch_options(
                "force",
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch",
            ));
        }
        let existing = self.existing(t)?;
        let mut doc = existing.clone();
        match media_type {
            "application/json-patch+json" => {
                let ops: Value = serde_json::from_slice(&req.body)
                    .map_err(|e| bad_request(format!("error decoding patch: {e}")))?;
                apply_json_patch(&mut doc, &ops)
                    .map_err(|e| failure(422, "Invalid", e, json!({})))?;
            }
            "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                let patch: Value = serde_json::from_slice(&req.body)
                    .map_err(|e| bad_request(format!("error decoding patch: {e}")))?;
                merge_patch(&mut doc, &patch);
            }
            other => {
                let message = format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})");
                return Err(failure(415, "UnsupportedMediaType", message, json!({})));
            }
        }
        Self::check_precondition(t, &existing, &doc)?;
        self.commit_update(req, t, existing, doc, None)
    }

    /// Server-side apply: create when absent, else merge the applied fields over the object.
    fn apply(&mut self, req: &Request, t: &Target) -> Outcome {
        if req.query.get("fieldManager").is_none_or(str::is_empty) {
            return Err(invalid_patch_options(
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch",
            ));
        }
        let r = &t.resource;
        let applied = parse_body(&req.body)?;
        check_type(r, &applied)?;
        if meta_str(&applied, "name").is_none() {
            return Err(missing_name(r));
        }
        check_name(t, &applied)?;
        check_namespace(t, &applied)?;
        if !applied["metadata"]["managedFields"].is_null() {
            return Err(bad_request("metadata.managedFields must be nil"));
        }
        if let Some(schema) = self.schema_of(r) {
            let undeclared = undeclared_in_object(&schema, &applied);
            if !undeclared.is_empty() {
                return Err(typed_patch_error(&applied, &undeclared));
            }
        }
        match self.store.get(&t.key(t.name())).cloned() {
            None if t.is_status() => Err(not_found(r, t.name())),
            None => {
                let empty = json!({});
                let (_, owners) = owners_after_apply(req, t, &empty, &applied, applied.clone())?;
                self.create_object(req, t, t.name(), applied, owners)
            }
            Some(existing) => {
                Self::check_precondition(t, &existing, &applied)?;
                let merged = apply_merge(&existing, &applied, t);
                let (merged, owners) = owners_after_apply(req, t, &existing, &applied, merged)?;
                self.commit_update(req, t, existing, merged, Some(owners))
            }
        }
    }

    fn delete(&mut self, req: &Request, t: &Target) -> Outcome {
        let r = &t.resource;
        let existing = self.existing(t)?;
        let key = t.key(t.name());
        let graceful_namespace =
            r.builtin && r.kind == "Namespace" && self.namespace_grace.is_some();
        if graceful_namespace {
            return Ok(Reply::Json(
                200,
                self.start_terminating(req, t, key, existing),
            ));
        }
        if !req.dry_run() {
            for dependent in self.cascade(&key, &existing) {
                self.remove(&dependent);
            }
            self.remove(&key);
        }
        Ok(Reply::Json(200, deleted_answer(r, &existing)))
    }

    /// A namespace deleted while [`Emulator::terminate_namespaces_after`] is set: marked
    /// (deletionTimestamp, phase `Terminating`) and removed once its time is up. Deleting it again
    /// answers the terminating namespace and changes nothing.
    fn start_terminating(&mut self, req: &Request, t: &Target, key: Key, existing: Value) -> Value {
        if self.terminating.contains_key(&key) || req.dry_run() {
            return deleted_answer(&t.resource, &existing);
        }
        let mut marked = existing;
        metadata_mut(&mut marked).insert("deletionTimestamp".into(), json!(now_rfc3339()));
        marked["status"] = json!({"phase": "Terminating"});
        let grace = self.namespace_grace.unwrap_or_default();
        self.terminating
            .insert(key.clone(), std::time::Instant::now() + grace);
        let stored = self.put(key, marked, "MODIFIED");
        present(&t.resource, &stored)
    }

    /// Deleting a namespace deletes everything in it; deleting a CRD deletes its objects.
    fn cascade(&self, key: &Key, obj: &Value) -> Vec<Key> {
        let in_namespace = |k: &Key| k.namespace == key.name;
        let crd_kind = (
            obj["spec"]["group"].as_str(),
            obj["spec"]["names"]["kind"].as_str(),
        );
        let of_crd = |k: &Key| crd_kind == (Some(k.group.as_str()), Some(k.kind.as_str()));
        let dependent: &dyn Fn(&Key) -> bool = match (key.group.as_str(), key.kind.as_str()) {
            ("", "Namespace") => &in_namespace,
            ("apiextensions.k8s.io", "CustomResourceDefinition") => &of_crd,
            _ => return Vec::new(),
        };
        self.store
            .keys()
            .filter(|k| dependent(k))
            .cloned()
            .collect()
    }

    /// DELETE on a collection (with selectors) answers with the list of what it deleted.
    fn delete_collection(&mut self, req: &Request, t: &Target) -> Outcome {
        let filter = Filter::from_request(req, t)?;
        let selected = self.selected(&filter);
        if !req.dry_run() {
            for (key, _) in &selected {
                self.remove(key);
            }
        }
        let items = selected
            .iter()
            .map(|(_, o)| list_item(&t.resource, o))
            .collect();
        let metadata = json!({"resourceVersion": self.rv.to_string()});
        Ok(Reply::Json(
            200,
            list_document(&t.resource, items, metadata),
        ))
    }
}

/// 422 about PatchOptions, as kube-apiserver validates them before looking at the object.
fn invalid_patch_options(field: &str, cause: &str, message: &str) -> Reply {
    let full = format!("PatchOptions.meta.k8s.io \"\" is invalid: {field}: {message}");
    let details = json!({
        "group": "meta.k8s.io",
        "kind": "PatchOptions",
        "causes": [{"reason": cause, "message": message, "field": field}],
    });
    failure(422, "Invalid", full, details)
}

/// What DELETE answers: the object (pods, namespaces, services, … as upstream's
/// `ReturnDeletedObject`), marked as terminating where a real one would still be; else Status.
fn deleted_answer(r: &Resource, obj: &Value) -> Value {
    if !r.returns_deleted {
        let mut details = r.details(meta_str(obj, "name").unwrap_or(""));
        details["uid"] = obj["metadata"]["uid"].clone();
        return json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        });
    }
    let mut out = present(r, obj);
    if r.deletes_gracefully() {
        metadata_mut(&mut out).insert("deletionTimestamp".into(), json!(now_rfc3339()));
    }
    if r.builtin && r.kind == "Pod" {
        metadata_mut(&mut out).insert("deletionGracePeriodSeconds".into(), json!(30));
    }
    if r.builtin && r.kind == "Namespace" {
        out["status"] = json!({"phase": "Terminating"});
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Field ownership (server-side apply)
// ---------------------------------------------------------------------------------------------
//
// A simplified model of kube-apiserver's field manager (k8s.io/apimachinery
// pkg/util/managedfields, sigs.k8s.io/structured-merge-diff), enough to test who owns what:
// - a field is a path of object keys; maps are walked, and a scalar, a list or an empty map is a
//   leaf (lists are atomic: real associative lists, `k:{"name":…}`, are not modelled);
// - tracked: labels, annotations, ownerReferences and finalizers of metadata, and every other
//   top-level field except `status` where the kind has a status subresource (the status
//   subresource tracks only `status`), as upstream strips identity fields and resets status;
// - an apply makes its manager own exactly the leaves it sent; a leaf owned by another manager
//   whose value the apply would change is a conflict (409) unless `force=true`, which moves the
//   leaf to the applier; equal values are shared. A leaf the applier owned before, no longer
//   sends and nobody else owns is removed from the object;
// - create, replace and non-apply patches are `Update` operations: the manager (the
//   `fieldManager` parameter, else the User-Agent up to its first `/`, as upstream's
//   `prefixFromUserAgent`) gains every leaf whose value it changed and every other manager loses
//   it — updates never conflict;
// - objects seeded without managedFields have no owners (upstream would attribute their fields
//   to `before-first-apply` on the first apply; not modelled).

/// A field: object keys from the root, e.g. `["spec", "replicas"]`.
type FieldPath = Vec<String>;

/// One `metadata.managedFields` entry, decoded.
#[derive(Clone, Debug, PartialEq)]
struct Owner {
    manager: String,
    /// `Apply` or `Update`.
    operation: String,
    api_version: String,
    /// `status` for writes to the status subresource, else empty.
    subresource: String,
    time: String,
    fields: BTreeSet<FieldPath>,
}

impl Owner {
    fn same_identity(&self, other: &Owner) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == "Apply" || self.api_version == other.api_version)
    }

    /// How conflict messages name a manager: upstream's `printManager` in
    /// staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go — the quoted
    /// name, the subresource, and for updates the apiVersion (the identifier has no time).
    fn printed(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == "Update" {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    fn encode(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": encode_fields(&self.fields),
        });
        if !self.subresource.is_empty() {
            entry["subresource"] = json!(self.subresource);
        }
        entry
    }
}

/// `.spec.replicas`, `.metadata.labels.app`: a path as structured-merge-diff prints it.
fn field_string(path: &FieldPath) -> String {
    path.iter().map(|k| format!(".{k}")).collect()
}

/// FieldsV1: `{"f:spec": {"f:replicas": {}}}`.
fn encode_fields(fields: &BTreeSet<FieldPath>) -> Value {
    let mut root = json!({});
    for path in fields {
        let mut at = &mut root;
        for key in path {
            at = at
                .as_object_mut()
                .expect("fieldsV1 nodes are objects")
                .entry(format!("f:{key}"))
                .or_insert_with(|| json!({}));
        }
    }
    root
}

/// FieldsV1 back to leaves. A node with no `f:` children is a leaf (`.`, `k:` and `v:` entries of
/// real servers count as the node itself).
fn decode_fields(node: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
    let children: Vec<(&str, &Value)> = node
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| k.strip_prefix("f:").map(|name| (name, v)))
                .collect()
        })
        .unwrap_or_default();
    if children.is_empty() {
        if !prefix.is_empty() {
            out.insert(prefix.clone());
        }
        return;
    }
    for (name, child) in children {
        prefix.push(name.to_string());
        decode_fields(child, prefix, out);
        prefix.pop();
    }
}

fn owners_of(obj: &Value) -> Vec<Owner> {
    let Some(entries) = obj["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            let mut fields = BTreeSet::new();
            decode_fields(&e["fieldsV1"], &mut Vec::new(), &mut fields);
            Owner {
                manager: text("manager"),
                operation: text("operation"),
                api_version: text("apiVersion"),
                subresource: text("subresource"),
                time: text("time"),
                fields,
            }
        })
        .collect()
}

/// Stores the owners that still own something (no entry at all when none do).
fn set_owners(obj: &mut Value, owners: Vec<Owner>) {
    let entries: Vec<Value> = owners
        .iter()
        .filter(|o| !o.fields.is_empty())
        .map(Owner::encode)
        .collect();
    let meta = metadata_mut(obj);
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(entries));
    }
}

fn leaves_into(value: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
    match value.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, v) in map {
                prefix.push(k.clone());
                leaves_into(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// The leaves of `obj` that ownership tracks for a write to `t` (see the section notes).
fn tracked_leaves(obj: &Value, t: &Target) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    let Some(map) = obj.as_object() else {
        return out;
    };
    for (key, value) in map {
        let mut prefix = vec![key.clone()];
        match key.as_str() {
            "status" if t.is_status() => leaves_into(value, &mut prefix, &mut out),
            _ if t.is_status() => {}
            "apiVersion" | "kind" => {}
            "status" if t.resource.status => {}
            "metadata" => {
                for field in ["labels", "annotations", "ownerReferences", "finalizers"] {
                    if let Some(v) = value.get(field) {
                        prefix.push(field.to_string());
                        leaves_into(v, &mut prefix, &mut out);
                        prefix.pop();
                    }
                }
            }
            _ => leaves_into(value, &mut prefix, &mut out),
        }
    }
    out
}

fn value_at<'a>(obj: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    path.iter()
        .try_fold(obj, |at, key| at.as_object()?.get(key))
}

fn remove_at(obj: &mut Value, path: &FieldPath) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents
        .iter()
        .try_fold(obj, |at, key| at.as_object_mut()?.get_mut(key));
    if let Some(map) = parent.and_then(Value::as_object_mut) {
        map.remove(last);
    }
}

/// One path lies inside the other (or they are the same field).
fn overlaps(a: &FieldPath, b: &FieldPath) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The manager of an update: `fieldManager`, else the User-Agent's product name.
fn update_manager(req: &Request) -> String {
    if let Some(m) = req.query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    let agent = req
        .headers
        .iter()
        .find(|(n, _)| n == "user-agent")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    agent
        .split('/')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(128)
        .collect()
}

fn subresource_of(t: &Target) -> String {
    t.subresource.clone().unwrap_or_default()
}

/// Adds `fields` to the entry of `me` (created when new), restamping it only when it changed.
fn grant(owners: &mut Vec<Owner>, me: Owner) {
    match owners.iter_mut().find(|o| o.same_identity(&me)) {
        Some(entry) if entry.fields != me.fields || entry.api_version != me.api_version => {
            entry.fields = me.fields;
            entry.api_version = me.api_version;
            entry.time = now_rfc3339();
        }
        Some(_) => {}
        None if !me.fields.is_empty() => owners.push(me),
        None => {}
    }
}

/// Owners after an `Update` by `manager` that turned `before` into `after`.
fn owners_after_update(
    req: &Request,
    t: &Target,
    before: Option<&Value>,
    after: &Value,
) -> Vec<Owner> {
    let empty = json!({});
    let before = before.unwrap_or(&empty);
    let mut owners = owners_of(before);
    let old = tracked_leaves(before, t);
    let new = tracked_leaves(after, t);
    let changed: BTreeSet<FieldPath> = old
        .union(&new)
        .filter(|p| value_at(before, p) != value_at(after, p))
        .cloned()
        .collect();
    if changed.is_empty() {
        return owners;
    }
    let me = Owner {
        manager: update_manager(req),
        operation: "Update".into(),
        api_version: t.resource.api_version(),
        subresource: subresource_of(t),
        time: now_rfc3339(),
        fields: BTreeSet::new(),
    };
    let mut mine = owners
        .iter()
        .find(|o| o.same_identity(&me))
        .map(|o| o.fields.clone())
        .unwrap_or_default();
    for owner in owners.iter_mut() {
        owner
            .fields
            .retain(|f| !changed.iter().any(|c| overlaps(f, c)));
    }
    mine.retain(|f| !changed.iter().any(|c| overlaps(f, c)));
    mine.extend(changed.into_iter().filter(|p| new.contains(p)));
    grant(&mut owners, Owner { fields: mine, ..me });
    owners
}

/// The merged object and its owners after an apply by `manager`, or the 409 upstream answers
/// (`NewConflictError` in pkg/util/managedfields/internal/conflict.go).
fn owners_after_apply(
    req: &Request,
    t: &Target,
    existing: &Value,
    applied: &Value,
    mut merged: Value,
) -> Result<(Value, Vec<Owner>), Reply> {
    let me = Owner {
        manager: req.query.get("fieldManager").unwrap_or("").to_string(),
        operation: "Apply".into(),
        api_version: t.resource.api_version(),
        subresource: subresource_of(t),
        time: now_rfc3339(),
        fields: tracked_leaves(applied, t),
    };
    let mut owners = owners_of(existing);
    let before: BTreeSet<FieldPath> = owners
        .iter()
        .find(|o| o.same_identity(&me))
        .map(|o| o.fields.clone())
        .unwrap_or_default();
    // Leaves this manager stopped applying, owned by nobody else, go.
    for gone in before.difference(&me.fields) {
        let shared = owners
            .iter()
            .any(|o| !o.same_identity(&me) && o.fields.iter().any(|f| overlaps(f, gone)));
        if !shared && !me.fields.iter().any(|f| overlaps(f, gone)) {
            remove_at(&mut merged, gone);
        }
    }
    let mut conflicts: Vec<(String, FieldPath)> = Vec::new();
    for owner in owners.iter_mut().filter(|o| !o.same_identity(&me)) {
        let taken: Vec<FieldPath> = owner
            .fields
            .iter()
            .filter(|f| value_at(existing, f) != value_at(&merged, f))
            .cloned()
            .collect();
        for field in taken {
            conflicts.push((owner.printed(), field.clone()));
            owner.fields.remove(&field);
        }
    }
    if !conflicts.is_empty() && !req.query.flag("force") {
        return Err(apply_conflict(conflicts));
    }
    grant(&mut owners, me);
    Ok((merged, owners))
}

/// 409 Conflict as `NewConflictError`/`getConflictMessage` build it: one cause per field with
/// reason `FieldManagerConflict` (`StatusCause.Type` is `reason` on the wire), and a message that
/// names the field for one conflict or lists fields per manager (managers sorted) for several.
fn apply_conflict(mut conflicts: Vec<(String, FieldPath)>) -> Reply {
    conflicts.sort();
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(manager, field)| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {manager}"),
                "field": field_string(field),
            })
        })
        .collect();
    let message = if let [(manager, field)] = conflicts.as_slice() {
        format!(
            "Apply failed with 1 conflict: conflict with {manager}: {}",
            field_string(field)
        )
    } else {
        let mut lines = Vec::new();
        let mut last: Option<&str> = None;
        for (manager, field) in &conflicts {
            if last != Some(manager.as_str()) {
                lines.push(format!("conflicts with {manager}:"));
                last = Some(manager);
            }
            lines.push(format!("- {}", field_string(field)));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    failure(409, "Conflict", message, json!({"causes": causes}))
}

// ---------------------------------------------------------------------------------------------
// Patch algorithms
// ---------------------------------------------------------------------------------------------

/// RFC 7386 JSON merge patch: objects merge key by key, `null` removes, anything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let map = target.as_object_mut().expect("just made an object");
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Server-side apply, approximated: the applied fields merge over the stored object. Labels and
/// annotations merge; ownerReferences and finalizers replace; other metadata is the server's.
/// On the main resource a status with its own subresource is ignored (and vice versa).
fn apply_merge(existing: &Value, applied: &Value, t: &Target) -> Value {
    let mut out = existing.clone();
    let Some(fields) = applied.as_object() else {
        return out;
    };
    for (field, value) in fields {
        match field.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let meta = &mut out["metadata"];
                for merged in ["labels", "annotations"] {
                    if let Some(v) = value.get(merged) {
                        merge_patch(&mut meta[merged], v);
                    }
                }
                for replaced in ["ownerReferences", "finalizers"] {
                    if let Some(v) = value.get(replaced) {
                        meta[replaced] = v.clone();
                    }
                }
            }
            "status" if t.is_status() || !t.resource.status => merge_patch(&mut out[field], value),
            _ if t.is_status() => {}
            "status" => {}
            _ => merge_patch(&mut out[field.as_str()], value),
        }
    }
    out
}

/// RFC 6902 JSON patch (add, remove, replace, move, copy, test), with the messages of the
/// library kube-apiserver uses.
fn apply_json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("json patch must be an array of operations")?;
    for op in ops {
        let name = op["op"].as_str().ok_or("missing operation kind")?;
        let path = op["path"]
            .as_str()
            .ok_or(format!("{name} operation is missing a path"))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or(format!("{name} operation is missing a value"))
        };
        let from = || {
            op["from"]
                .as_str()
                .ok_or(format!("{name} operation is missing from"))
        };
        match name {
            "add" => pointer_add(doc, path, value()?)?,
            "remove" => {
                pointer_remove(doc, path)?;
            }
            "replace" => {
                let target = doc.pointer_mut(path).ok_or(format!(
                    "replace operation does not apply: doc is missing key: {path}: missing value"
                ))?;
                *target = value()?;
            }
            "move" => {
                let moved = pointer_remove(doc, from()?)?;
                pointer_add(doc, path, moved)?;
            }
            "copy" => {
                let copied = doc.pointer(from()?).cloned().ok_or(format!(
                    "copy operation does not apply: doc is missing from path: {path}"
                ))?;
                pointer_add(doc, path, copied)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&value()?) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

/// `/a/b~1c` → (`/a`, `b/c`).
fn split_pointer(path: &str) -> Result<(&str, String), String> {
    let at = path
        .rfind('/')
        .ok_or(format!("invalid JSON pointer: {path:?}"))?;
    let token = path[at + 1..].replace("~1", "/").replace("~0", "~");
    Ok((&path[..at], token))
}

fn pointer_add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let missing =
        || format!("add operation does not apply: doc is missing path: \"{path}\": missing value");
    let (parent, token) = split_pointer(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(token, value);
        }
        Some(Value::Array(items)) if token == "-" => items.push(value),
        Some(Value::Array(items)) => {
            let index: usize = token.parse().map_err(|_| missing())?;
            if index > items.len() {
                return Err(missing());
            }
            items.insert(index, value);
        }
        _ => return Err(missing()),
    }
    Ok(())
}

fn pointer_remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let missing = || {
        format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
    };
    let (parent, token) = split_pointer(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&token).ok_or_else(missing),
        Some(Value::Array(items)) => match token.parse::<usize>() {
            Ok(index) if index < items.len() => Ok(items.remove(index)),
            _ => Err(missing()),
        },
        _ => Err(missing()),
    }
}

// ---------------------------------------------------------------------------------------------
// Selectors
// ---------------------------------------------------------------------------------------------

/// One term of a label selector (k8s.io/apimachinery/pkg/labels syntax).
#[derive(Clone, Debug, PartialEq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

impl LabelRequirement {
    fn matches(&self, labels: &Value) -> bool {
        let get = |key: &str| labels.get(key).and_then(Value::as_str);
        let number = |key: &str| get(key).and_then(|v| v.parse::<i64>().ok());
        match self {
            Self::Equals(k, v) => get(k) == Some(v.as_str()),
            // Like the real server, `!=` and `notin` also select objects without the label.
            Self::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Self::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Self::NotIn(k, vs) => get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Self::Exists(k) => get(k).is_some(),
            Self::DoesNotExist(k) => get(k).is_none(),
            Self::GreaterThan(k, n) => number(k).is_some_and(|v| v > *n),
            Self::LessThan(k, n) => number(k).is_some_and(|v| v < *n),
        }
    }
}

/// Splits at commas outside parentheses: `a in (x,y),b` → [`a in (x,y)`, `b`].
fn selector_terms(selector: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in selector.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    terms.push(current);
    terms
        .into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn valid_label_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_label_value(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn parse_label_selector(selector: &str) -> Result<Vec<LabelRequirement>, String> {
    selector_terms(selector)
        .iter()
        .map(|t| parse_label_term(t))
        .collect()
}

fn parse_label_term(term: &str) -> Result<LabelRequirement, String> {
    use LabelRequirement::*;
    let bad = || format!("invalid label selector term {term:?}");
    let key = |k: &str| {
        let k = k.trim();
        valid_label_key(k).then(|| k.to_string()).ok_or_else(bad)
    };
    let value = |v: &str| {
        let v = v.trim();
        valid_label_value(v).then(|| v.to_string()).ok_or_else(bad)
    };
    if let Some((head, rest)) = term.split_once('(') {
        let values = rest.strip_suffix(')').ok_or_else(bad)?;
        let values: Vec<String> = values.split(',').map(value).collect::<Result<_, _>>()?;
        let mut words = head.split_whitespace();
        let (k, op) = (words.next().ok_or_else(bad)?, words.next().ok_or_else(bad)?);
        return match op {
            "in" => Ok(In(key(k)?, values)),
            "notin" => Ok(NotIn(key(k)?, values)),
            _ => Err(bad()),
        };
    }
    if let Some(k) = term.strip_prefix('!') {
        return Ok(DoesNotExist(key(k)?));
    }
    let number = |v: &str| v.trim().parse::<i64>().map_err(|_| bad());
    if let Some((k, v)) = term.split_once("!=") {
        Ok(NotEquals(key(k)?, value(v)?))
    } else if let Some((k, v)) = term.split_once("==") {
        Ok(Equals(key(k)?, value(v)?))
    } else if let Some((k, v)) = term.split_once('=') {
        Ok(Equals(key(k)?, value(v)?))
    } else if let Some((k, v)) = term.split_once('>') {
        Ok(GreaterThan(key(k)?, number(v)?))
    } else if let Some((k, v)) = term.split_once('<') {
        Ok(LessThan(key(k)?, number(v)?))
    } else {
        Ok(Exists(key(term)?))
    }
}

/// `path=value`, `path==value` or `path!=value` on any dotted path of the object.
#[derive(Clone, Debug)]
struct FieldRequirement {
    path: Vec<String>,
    negated: bool,
    value: String,
}

impl FieldRequirement {
    fn matches(&self, obj: &Value) -> bool {
        let found = self.path.iter().fold(obj, |v, part| &v[part.as_str()]);
        let text = match found {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        (text == self.value) != self.negated
    }
}

fn parse_field_selector(selector: &str) -> Result<Vec<FieldRequirement>, String> {
    selector_terms(selector)
        .iter()
        .map(|term| {
            let (path, negated, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, true, v)
            } else if let Some((p, v)) = term.split_once("==") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once('=') {
                (p, false, v)
            } else {
                return Err(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                ));
            };
            Ok(FieldRequirement {
                path: path.trim().split('.').map(String::from).collect(),
                negated,
                value: value.trim().to_string(),
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Seed files
// ---------------------------------------------------------------------------------------------

/// A file as given, or every .yaml/.yml/.json under a folder (sorted, recursively).
fn manifest_files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .map(|entry| entry.expect("folder entry").path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .flat_map(|entry| {
            let manifest = matches!(
                entry.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            );
            if entry.is_dir() {
                manifest_files(&entry)
            } else if manifest {
                vec![entry]
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// The objects of one file: multi-document YAML (JSON is YAML too), lists flattened.
fn parse_manifest(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
        .unwrap_or_else(|e| panic!("parse {}: {e}", path.display()));
    let mut objects = Vec::new();
    for value in documents {
        flatten_into(value, &mut objects);
    }
    objects
}

/// `kind: List` and typed lists (`PodList`, whose items lack apiVersion/kind) become objects.
fn flatten_into(value: Value, out: &mut Vec<Value>) {
    match value {
        Value::Null => {}
        Value::Array(items) => items.into_iter().for_each(|v| flatten_into(v, out)),
        Value::Object(ref map) if map.get("items").is_some_and(Value::is_array) => {
            let list_kind = map.get("kind").and_then(Value::as_str).unwrap_or("List");
            let item_kind = list_kind.strip_suffix("List").filter(|k| !k.is_empty());
            let api_version = map.get("apiVersion").cloned();
            for mut item in map["items"].as_array().cloned().unwrap_or_default() {
                if let (Some(kind), Some(obj)) = (item_kind, item.as_object_mut()) {
                    obj.entry("kind").or_insert_with(|| json!(kind));
                    if let Some(v) = &api_version {
                        obj.entry("apiVersion").or_insert_with(|| v.clone());
                    }
                }
                flatten_into(item, out);
            }
        }
        other => out.push(other),
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers: uids, names, time
// ---------------------------------------------------------------------------------------------

/// 64 random-enough bits: std's per-process hash keys seeded by the OS, plus a counter.
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

/// A version-4 UUID string, like the uids kube-apiserver assigns.
fn new_uid() -> String {
    let bits = (u128::from(random_u64()) << 64) | u128::from(random_u64());
    let bits = (bits & !(0xf << 76)) | (0x4 << 76); // version 4
    let bits = (bits & !(0x3 << 62)) | (0x2 << 62); // RFC 4122 variant
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Five characters from the alphabet of generateName suffixes.
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = random_u64();
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// UTC now as RFC 3339 seconds (`2026-01-02T03:04:05Z`), the Kubernetes `Time` format.
fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day), Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
