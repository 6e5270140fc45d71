//! Bounded retries of transient failures (connection resets, 429, 5xx) with backoff.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

/// Worth retrying: throttling, server errors, broken connections. Not 4xx answers, and not
/// timeouts: each attempt already waited the whole request timeout, and retrying would multiply
/// it (a server that never answers must fail within `--request-timeout`, not three times that).
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => !is_timeout(e),
        _ => false,
    }
}

/// The connect, read or write timeout ran out (somewhere in the error's source chain).
pub fn is_timeout(e: &kube::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cause = c.source();
    }
    false
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
