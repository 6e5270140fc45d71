//! Every API request is bounded: the whole answer, headers and body, arrives within
//! `--request-timeout` (a server that drips its body never holds trainlab longer), it is at most
//! `--max-input-mib` large, and a throttled or failing answer (429, 500, 502, 503, 504) is
//! retried at most twice, waiting what the server asks (`Retry-After`) only while the budget
//! lasts. A wait longer than what is left is an error that says how long the server asked for.
//!
//! kube's own `RetryPolicy::server_retry` (kube-client 5 `src/client/retry.rs`) retries 15 times
//! and honours any `Retry-After` up to 1,000 s; this policy replaces it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use tower::retry::Policy;
use tower::{BoxError, Layer, Service};

/// How much one request may take and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The whole request, retries and body included; None: no limit (`--request-timeout 0`,
    /// as kubectl reads it).
    pub timeout: Option<Duration>,
    /// Bytes of one answer's body.
    pub max_bytes: u64,
}

/// Retries at most this many times (3 attempts in all).
const MAX_RETRIES: u32 = 2;

/// The answer took longer than the budget.
#[derive(Debug, thiserror::Error)]
#[error("no answer within {}", humantime::format_duration(*.0))]
pub struct TimedOut(pub Duration);

/// The answer's body is larger than the budget.
#[derive(Debug, thiserror::Error)]
#[error("the answer is larger than {} MiB, the most trainlab reads from one answer (raise it with --max-input-mib)", .0 / (1024 * 1024))]
pub struct TooLarge(pub u64);

/// The server answered 429/503 asking to wait longer than the request's budget has left.
#[derive(Debug, thiserror::Error)]
#[error("the API server answered {status} and asked to wait {seconds} s before trying again (Retry-After), longer than --request-timeout leaves; wait and run this again, or raise --request-timeout")]
pub struct AskedToWait {
    pub status: u16,
    pub seconds: u64,
}

/// The server answered with a redirect. An API server never redirects a request; a login page,
/// a proxy or a load balancer in front of it does.
#[derive(Debug, thiserror::Error)]
#[error("the server answered {status} and redirects to {location}: a Kubernetes API server never redirects, so this is a login page, a proxy or a load balancer in front of it; check the server URL in the kubeconfig")]
pub struct Redirected {
    pub status: u16,
    pub location: String,
}

/// The server answered in another format than the JSON trainlab asks for (`Accept:
/// application/json`): protobuf (`application/vnd.kubernetes.protobuf`), which an API server only
/// sends when asked, or a page.
#[derive(Debug, thiserror::Error)]
#[error(
    "the server answered with Content-Type {content_type}, not the JSON trainlab asked for: {why}"
)]
pub struct NotJson {
    pub content_type: String,
    pub why: &'static str,
}

/// When the request must be done by, carried in the request's extensions so the retry policy
/// (an inner layer) knows what is left.
#[derive(Debug, Clone, Copy)]
struct Deadline(Option<Instant>);

/// The outermost layer: sets the request's deadline, bounds the wait for the headers and wraps
/// the body so it ends (with an error) at the deadline or at the size limit.
#[derive(Debug, Clone, Copy)]
pub struct BoundsLayer(pub Budget);

impl<S> Layer<S> for BoundsLayer {
    type Service = Bounds<S>;
    fn layer(&self, inner: S) -> Bounds<S> {
        Bounds {
            inner,
            budget: self.0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bounds<S> {
    inner: S,
    budget: Budget,
}

type Pending<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>;

impl<S, B, R> Service<Request<B>> for Bounds<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    R: Body<Data = Bytes> + Send + 'static,
    R::Error: Into<BoxError>,
{
    type Response = Response<BoundedBody<R>>;
    type Error = BoxError;
    type Future = Pending<Self::Response>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let budget = self.budget;
        let deadline = budget.timeout.map(|t| Instant::now() + t);
        req.extensions_mut().insert(Deadline(deadline));
        let answer = self.inner.call(req);
        Box::pin(async move {
            let res = match deadline {
                Some(at) => match tokio::time::timeout_at(at, answer).await {
                    Ok(r) => r.map_err(Into::into)?,
                    Err(_) => return Err(timed_out(budget)),
                },
                None => answer.await.map_err(Into::into)?,
            };
            if let Some(wait) = refused_wait(&res, deadline) {
                return Err(Box::new(wait) as BoxError);
            }
            if let Some(wrong) = not_an_api_answer(&res) {
                return Err(wrong);
            }
            Ok(res.map(|body| BoundedBody {
                inner: Box::pin(body),
                deadline: deadline.map(|at| Box::pin(tokio::time::sleep_until(at))),
                budget,
                read: 0,
            }))
        })
    }
}

/// A timeout as the I/O error kube's callers recognise ([`super::is_timeout`]).
fn timed_out(budget: Budget) -> BoxError {
    let limit = budget.timeout.unwrap_or_default();
    Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        TimedOut(limit),
    ))
}

/// A final 429/503 whose `Retry-After` asks for more time than is left: the policy did not
/// retry it, and passing it on would read as a plain refusal.
fn refused_wait<R>(res: &Response<R>, deadline: Option<Instant>) -> Option<AskedToWait> {
    let seconds = retry_after(res)?;
    let left = deadline.map(|at| at.saturating_duration_since(Instant::now()))?;
    (Duration::from_secs(seconds) > left).then(|| AskedToWait {
        status: res.status().as_u16(),
        seconds,
    })
}

/// A redirect, or a body that cannot be the JSON an API server sends when asked for JSON.
fn not_an_api_answer<R>(res: &Response<R>) -> Option<BoxError> {
    if res.status().is_redirection() {
        let location = res
            .headers()
            .get(http::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .map_or_else(
                || "nowhere it says".to_string(),
                |l| crate::text::echo(l, 200),
            );
        return Some(Box::new(Redirected {
            status: res.status().as_u16(),
            location,
        }));
    }
    let content_type = res
        .headers()
        .get(http::header::CONTENT_TYPE)?
        .to_str()
        .ok()?
        .to_ascii_lowercase();
    let why = if content_type.starts_with("application/vnd.kubernetes.protobuf") {
        "Kubernetes protobuf, which an API server sends only when asked for it: a proxy or an aggregated API in between rewrote the request"
    } else if content_type.starts_with("text/html") {
        "a web page (a login page or a proxy's error page?): check the server URL in the kubeconfig"
    } else {
        return None;
    };
    Some(Box::new(NotJson {
        content_type: crate::text::echo(&content_type, 80),
        why,
    }))
}

/// `Retry-After` in seconds (RFC 9110 §10.2.3 also allows an HTTP date, which the API server
/// never sends: such a value is ignored).
fn retry_after<R>(res: &Response<R>) -> Option<u64> {
    if !matches!(
        res.status(),
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
    ) {
        return None;
    }
    res.headers()
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A response body that ends at the deadline or past the size limit.
pub struct BoundedBody<B> {
    inner: Pin<Box<B>>,
    deadline: Option<Pin<Box<Sleep>>>,
    budget: Budget,
    read: u64,
}

impl<B> Body for BoundedBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(d) = self.deadline.as_mut() {
            if d.as_mut().poll(cx).is_ready() {
                let budget = self.budget;
                return Poll::Ready(Some(Err(timed_out(budget))));
            }
        }
        let frame = match self.inner.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        if let Some(data) = frame.data_ref() {
            self.read = self.read.saturating_add(data.len() as u64);
            if self.read > self.budget.max_bytes {
                let max = self.budget.max_bytes;
                return Poll::Ready(Some(Err(Box::new(TooLarge(max)))));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Retries throttled and failing answers, at most [`MAX_RETRIES`] times, within the request's
/// deadline: `Retry-After` when the server gives one and it fits, else 100 ms then 200 ms.
#[derive(Debug, Clone, Default)]
pub struct ServerRetry {
    attempt: u32,
}

impl<R> Policy<Request<kube::client::Body>, Response<R>, BoxError> for ServerRetry {
    type Future = Sleep;

    fn retry(
        &mut self,
        req: &mut Request<kube::client::Body>,
        result: &mut Result<Response<R>, BoxError>,
    ) -> Option<Self::Future> {
        let res = result.as_ref().ok()?;
        let retryable = matches!(
            res.status(),
            StatusCode::TOO_MANY_REQUESTS
                | StatusCode::INTERNAL_SERVER_ERROR
                | StatusCode::BAD_GATEWAY
                | StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::GATEWAY_TIMEOUT
        );
        if !retryable || self.attempt >= MAX_RETRIES {
            return None;
        }
        let backoff = Duration::from_millis(100 << self.attempt);
        let wait = retry_after(res).map_or(backoff, Duration::from_secs);
        let deadline = req.extensions().get::<Deadline>().and_then(|d| d.0);
        if let Some(at) = deadline {
            if Instant::now() + wait >= at {
                return None;
            }
        }
        self.attempt += 1;
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(
        &mut self,
        req: &Request<kube::client::Body>,
    ) -> Option<Request<kube::client::Body>> {
        let mut clone = Request::builder()
            .method(req.method().clone())
            .uri(req.uri().clone())
            .version(req.version())
            .body(req.body().try_clone()?)
            .ok()?;
        *clone.headers_mut() = req.headers().clone();
        *clone.extensions_mut() = req.extensions().clone();
        Some(clone)
    }
}
