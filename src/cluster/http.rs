//! The HTTP stack under the kube client: our own connector (TCP_NODELAY), a `User-Agent`, and
//! one log line per request at `-v`.
//!
//! kube-client 5 builds its default stack with `HttpConnector::new()` (kube-client
//! `src/client/builder.rs`, `TryFrom<(Config, E)> for ClientBuilder`), and hyper-util's
//! connector leaves Nagle's algorithm on (`HttpConnector::set_nodelay`: "Default is `false`").
//! After a TLS handshake the request is a small write that then waits for the ACK of the
//! client's last handshake flight, which the server delays: ~40 ms per new connection on Linux.
//! So the stack is rebuilt here with the same layers kube uses (base URI, retry, auth, extra
//! headers) over a connector with TCP_NODELAY set.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use http::{HeaderValue, Request, Response};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::ConfigExt;
use tower::filter::AsyncFilterLayer;
use tower::{BoxError, Layer, Service, ServiceBuilder};

/// `trainlab/<version>`, sent with every request (the API server's audit log records it as
/// `userAgent`).
pub const USER_AGENT: &str = concat!("trainlab/", env!("CARGO_PKG_VERSION"));

/// Where request logs go (`-v`): `tracing` events with this target.
pub const LOG_TARGET: &str = "trainlab::http";

/// Builds the kube client for `config`: kube's own layers over a connector with TCP_NODELAY.
/// `eks`: the in-process EKS token source that stands in for the kubeconfig's exec (which
/// `eks_token::take_over` removed from `config`), set on each request as kube's own auth layer
/// would set a refreshable token.
pub fn build_client(
    mut config: kube::Config,
    budget: super::bounds::Budget,
    eks: Option<std::sync::Arc<super::eks_token::TokenSource>>,
) -> Result<kube::Client, kube::Error> {
    let eks_auth = eks.map(|source| AsyncFilterLayer::new(super::eks_token::EksAuth(source)));
    config.headers.push((
        http::header::USER_AGENT,
        HeaderValue::from_static(USER_AGENT),
    ));
    if config.proxy_url.is_some() {
        // kube's builder knows which proxy schemes this build supports and says so.
        // kube's proxied stack is a `BoxService`, which is not `Clone` as the EKS token's
        // asynchronous filter needs; a buffer in front of it is (kube's `Client` buffers the same way).
        return Ok(kube::client::ClientBuilder::try_from(config)?
            .with_layer(&tower::buffer::BufferLayer::new(1024))
            .with_layer(&tower::util::option_layer(eks_auth))
            .with_layer(&LogLayer)
            .with_layer(&super::bounds::BoundsLayer(budget))
            .build());
    }
    // The same provider kube installs when it builds a client (its `rustls-tls` + `aws-lc-rs`
    // features): rustls needs a process-wide default when more than one is compiled in.
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = config.rustls_https_connector_with_connector(http)?;
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let hyper = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build::<_, kube::client::Body>(connector);
    let service = ServiceBuilder::new()
        .layer(super::bounds::BoundsLayer(budget))
        .layer(config.base_uri_layer())
        .layer(tower::retry::RetryLayer::new(
            super::bounds::ServerRetry::default(),
        ))
        .option_layer(config.auth_layer()?)
        .option_layer(eks_auth)
        .layer(config.extra_headers_layer()?)
        .layer(LogLayer)
        .map_err(BoxError::from)
        .service(hyper);
    Ok(kube::Client::new(service, config.default_namespace))
}

/// Logs each request that reaches the network: `GET /api/v1/nodes 200 3.1ms` at info level
/// (`-v`), the query string too at debug level (`-vv`). The time runs until the response
/// headers arrive.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogLayer;

impl<S> Layer<S> for LogLayer {
    type Service = Log<S>;
    fn layer(&self, inner: S) -> Log<S> {
        Log { inner }
    }
}

#[derive(Clone, Debug)]
pub struct Log<S> {
    inner: S,
}

type Pending<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<S, B, R> Service<Request<B>> for Log<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: std::fmt::Display,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Pending<Response<R>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        if let Some(query) = req.uri().query() {
            tracing::debug!(target: LOG_TARGET, "{method} {path}?{query}");
        }
        let started = Instant::now();
        let answer = self.inner.call(req);
        Box::pin(async move {
            let result = answer.await;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            match &result {
                Ok(res) => tracing::info!(
                    target: LOG_TARGET,
                    "{method} {path} {} {ms:.1}ms",
                    res.status().as_u16()
                ),
                Err(e) => {
                    tracing::info!(target: LOG_TARGET, "{method} {path} failed after {ms:.1}ms: {e}")
                }
            }
            result
        })
    }
}

/// Downloads `url` with the same `User-Agent` and request log as API requests (for the
/// pinned release manifests `setup kind` installs).
pub async fn download(url: &str) -> Result<Vec<u8>, reqwest::Error> {
    let client = reqwest::Client::builder().user_agent(USER_AGENT).build()?;
    let started = Instant::now();
    let answer = client.get(url).send().await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match &answer {
        Ok(res) => {
            tracing::info!(target: LOG_TARGET, "GET {url} {} {ms:.1}ms", res.status().as_u16())
        }
        Err(e) => tracing::info!(target: LOG_TARGET, "GET {url} failed after {ms:.1}ms: {e}"),
    }
    let bytes = answer?.error_for_status()?.bytes().await?;
    Ok(bytes.to_vec())
}
