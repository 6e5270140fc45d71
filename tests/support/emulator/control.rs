//! The handle a test holds: start the emulator (HTTP or HTTPS), seed and serve kinds, inject
//! faults, read what was recorded and stored, stop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::fault_rule::{Fault, FaultRule};
use super::recorded::Recorded;
use super::resources::Resource;
use super::seed::{manifest_files, parse_manifest};
use super::server::serve_until_stopped;
use super::store::{lock, Inner, Key, WatchSignal};

/// A running emulator. Dropping it stops the server (so does [`Emulator::stop`]).
pub struct Emulator {
    pub(super) shared: Arc<Mutex<Inner>>,
    pub(super) addr: SocketAddr,
    /// The PEM certificate clients must trust, when serving HTTPS.
    pub(super) tls_cert: Option<String>,
    pub(super) shutdown: Option<oneshot::Sender<()>>,
    pub(super) thread: Option<std::thread::JoinHandle<()>>,
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

    /// The store's resourceVersion now (what a LIST or BOOKMARK would say).
    pub fn resource_version(&self) -> u64 {
        self.lock().rv
    }

    /// Sends a BOOKMARK at the current resourceVersion on every open watch that allows
    /// bookmarks (`allowWatchBookmarks=true`), as kube-apiserver does about once a minute.
    pub fn bookmark(&self) {
        let inner = self.lock();
        let _ = inner.watch_signals.send(WatchSignal::Bookmark(inner.rv));
    }

    /// How many watch streams are open now (each holds a receiver of the signals until its
    /// stream ends), so a test can wait for a client's watches before signalling them.
    pub fn open_watches(&self) -> usize {
        self.lock().watch_signals.receiver_count()
    }

    /// Ends every open watch stream without a word (a cut connection); clients reconnect.
    pub fn drop_watches(&self) {
        let _ = self.lock().watch_signals.send(WatchSignal::Drop);
    }

    /// Compacts the history: every open watch gets an ERROR event `410 Gone` and ends, and a
    /// watch from any resourceVersion up to now gets `410 Gone` too, so a client must list
    /// again. `then` (an object, created or replaced) is stored after the streams were told:
    /// a change made while the watches were broken, which only a new LIST can show.
    pub fn expire_watches(&self, then: Option<Value>) {
        let mut inner = self.lock();
        let rv = inner.rv;
        let _ = inner.watch_signals.send(WatchSignal::Gone(rv));
        if let Some(obj) = then {
            let key = Key::of(&obj).expect("an object with apiVersion, kind and metadata.name");
            let kind = if inner.store.contains_key(&key) {
                "MODIFIED"
            } else {
                "ADDED"
            };
            inner.put(key, obj, kind);
        }
        inner.compacted = inner.rv;
    }

    pub fn clear_requests(&self) {
        self.lock().requests.clear();
    }

    /// Creates one object as a client would (`kubectl create`): a POST of its JSON to `path`
    /// over plain HTTP/1.1, which must answer 201.
    pub fn create(&self, path: &str, obj: &Value) {
        self.send("POST", path, "application/json", obj, 201);
    }

    /// A JSON merge patch of one object, as `kubectl patch --type merge` sends it; the emulator
    /// must answer 200.
    pub fn patch(&self, path: &str, body: &Value) {
        self.send("PATCH", path, "application/merge-patch+json", body, 200);
    }

    /// One request with a JSON body over plain HTTP/1.1, answered with `status`.
    fn send(&self, method: &str, path: &str, content_type: &str, body: &Value, status: u16) {
        use std::io::{Read, Write};
        let addr = self.addr.to_string();
        let body = serde_json::to_string(body).expect("JSON");
        let mut s = std::net::TcpStream::connect(&addr).expect("connect to the emulator");
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut answer = String::new();
        s.read_to_string(&mut answer).expect("answer");
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{answer}"
        );
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
