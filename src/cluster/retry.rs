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

/// The API server refused the credentials (401), or kube could not obtain them (an exec
/// plugin such as `aws eks get-token` failed): nothing a retry or another check can fix.
pub fn is_credentials_error(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 401,
        kube::Error::Auth(_) => true,
        _ => false,
    }
}

/// The one exit-3 message for rejected or unobtainable credentials, with how to refresh them:
/// EKS tokens come from `aws eks get-token` and expire with the AWS session behind them.
/// Commands: `aws sso login` (https://docs.aws.amazon.com/cli/latest/reference/sso/login.html)
/// and `aws eks update-kubeconfig --name --region`
/// (https://docs.aws.amazon.com/cli/latest/reference/eks/update-kubeconfig.html).
pub fn credentials_error(conn: &super::Conn, e: &kube::Error) -> crate::Error {
    let what = match e {
        kube::Error::Api(s) => format!(
            "the API server of {} refused trainlab's credentials (401 Unauthorized: {})",
            conn.describe(),
            s.message
        ),
        other => format!("cannot get credentials for {}: {other}", conn.describe()),
    };
    crate::Error::Environment(format!(
        "{what}\n  they have probably expired: on EKS, sign in again (`aws sso login` for SSO profiles) and refresh the kubeconfig (`aws eks update-kubeconfig --name CLUSTER --region REGION`), then run this again"
    ))
}
