//! Bounded retries of transient failures (connection resets, 429, 5xx) with backoff.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

/// Worth retrying: throttling, server errors, broken connections. Not 4xx answers.
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Runs `f` up to 3 times (100 ms, 200 ms backoff): small enough that an unreachable server still
/// fails within the request timeout plus well under a second.
pub async fn with_retry<T, F, Fut>(f: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let policy = ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_millis(400))
        .with_max_times(2);
    f.retry(policy).when(is_transient).await
}

/// (code, message) of an API error answer, if it is one.
pub fn api_error(e: &kube::Error) -> Option<(u16, String)> {
    match e {
        kube::Error::Api(s) => Some((s.code, s.message.clone())),
        _ => None,
    }
}
