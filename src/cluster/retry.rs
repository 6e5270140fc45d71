//! Bounded retries of transient failures (connection resets, 429, 5xx) with backoff.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

/// Worth retrying here: a broken connection. Not an answer: throttling and server errors were
/// already retried within the request's budget by the HTTP stack ([`super::bounds`]), and
/// retrying them again would multiply the count. Not timeouts, an answer too large or a
/// server asking to wait: each attempt already used its whole budget (a server that never
/// answers must fail within `--request-timeout`, not three times that).
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::HyperError(_) | kube::Error::Service(_) => {
            !is_timeout(e) && bound_hit(e).is_none()
        }
        _ => false,
    }
}

/// The request budget's own refusals in an error's source chain: the answer was too large, or
/// the server asked to wait longer than the budget leaves. Said as they are (they name the flag
/// to raise), not as "cannot reach".
pub fn bound_hit(e: &kube::Error) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(t) = c.downcast_ref::<super::bounds::TooLarge>() {
            return Some(t.to_string());
        }
        if let Some(w) = c.downcast_ref::<super::bounds::AskedToWait>() {
            return Some(w.to_string());
        }
        if let Some(r) = c.downcast_ref::<super::bounds::Redirected>() {
            return Some(r.to_string());
        }
        if let Some(n) = c.downcast_ref::<super::bounds::NotJson>() {
            return Some(n.to_string());
        }
        cause = c.source();
    }
    None
}

/// The server answered, but as no API server does (a redirect, protobuf unasked, a web page).
pub fn not_an_api_server(e: &kube::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<super::bounds::Redirected>() || c.is::<super::bounds::NotJson>() {
            return true;
        }
        cause = c.source();
    }
    false
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

/// Whether nothing listens at the server's address: the connection was refused (the cluster is
/// stopped, or the URL's port is wrong). Waiting longer would not help.
pub fn is_refused(e: &kube::Error) -> bool {
    let mut pending: Vec<&(dyn std::error::Error + 'static)> = vec![e];
    for _ in 0..32 {
        let Some(err) = pending.pop() else {
            return false;
        };
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
            pending.extend(
                io.get_ref()
                    .map(|w| w as &(dyn std::error::Error + 'static)),
            );
        }
        pending.extend(err.source());
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
        kube::Error::Service(e) => super::eks_token::is_token_error(e.as_ref()),
        _ => false,
    }
}

/// The one exit-3 message for rejected or unobtainable credentials, with how to refresh them:
/// EKS tokens come from `aws eks get-token` and expire with the AWS session behind them.
/// Commands: `aws sso login` (https://docs.aws.amazon.com/cli/latest/reference/sso/login.html)
/// and `aws eks update-kubeconfig --name --region`
/// (https://docs.aws.amazon.com/cli/latest/reference/eks/update-kubeconfig.html).
pub fn credentials_error(conn: &super::Conn, e: &kube::Error) -> crate::Error {
    crate::Error::Environment(credentials_text(conn, e))
}

/// [`credentials_error`]'s message in both languages (kept by discovery for the whole run).
pub fn credentials_text(conn: &super::Conn, e: &kube::Error) -> crate::catalog::Text {
    let server = conn.describe();
    let (what_ja, what) = match e {
        kube::Error::Api(s) => (
            format!("{server} の API サーバーが trainlab の認証情報を拒否しました（401 Unauthorized: {}）", s.message),
            format!("the API server of {server} refused trainlab's credentials (401 Unauthorized: {})", s.message),
        ),
        other => (
            format!("{server} の認証情報を取得できません: {other}"),
            format!("cannot get credentials for {server}: {other}"),
        ),
    };
    crate::catalog::Text {
        ja: format!("{what_ja}\n  認証情報の期限が切れている可能性があります。EKS ではサインインし直して（SSO プロファイルなら `aws sso login`）kubeconfig を更新してから（`aws eks update-kubeconfig --name CLUSTER --region REGION`）、もう一度実行してください"),
        en: format!("{what}\n  they have probably expired: on EKS, sign in again (`aws sso login` for SSO profiles) and refresh the kubeconfig (`aws eks update-kubeconfig --name CLUSTER --region REGION`), then run this again"),
    }
}

/// A failed request in the user's terms, once: a timeout with its bound, the budget's own
/// refusals, what the server answered (code, reason and the first line of its body, not a
/// debug dump), an answer that is not JSON (a proxy's or a web server's page), or the
/// connection error at the bottom of the chain.
pub fn describe(e: &kube::Error, timeout: std::time::Duration) -> String {
    if is_timeout(e) {
        return format!("no answer within {}", humantime::format_duration(timeout));
    }
    if let Some(why) = bound_hit(e) {
        return why;
    }
    match e {
        kube::Error::Api(s) => {
            let reason = http::StatusCode::from_u16(s.code)
                .ok()
                .and_then(|c| c.canonical_reason())
                .unwrap_or("");
            format!(
                "the server answered {} {reason}: {}",
                s.code,
                first_line(&s.message)
            )
        }
        // JSON that stops in the middle is an answer cut short, not a web page.
        kube::Error::SerdeError(j) if j.classify() == serde_json::error::Category::Eof => {
            "the server's answer stopped in the middle of its JSON: something between trainlab and the API server (a proxy, a load balancer) cut it short, or the server restarted; run this again, and check the proxy if it keeps happening".to_string()
        }
        kube::Error::SerdeError(_) => "the server's answer is not the JSON an API server sends (a web page or a proxy's answer?): check the server URL in the kubeconfig".to_string(),
        other if cut_short(other) => "the connection closed before the server's whole answer arrived: something between trainlab and the API server (a proxy, a load balancer) cut it, or the server restarted; run this again, and check the proxy if it keeps happening".to_string(),
        other => {
            let mut last: &(dyn std::error::Error + 'static) = other;
            while let Some(next) = last.source() {
                last = next;
            }
            last.to_string()
        }
    }
}

/// Whether the connection ended before the body its `Content-Length` promised: hyper's body
/// decoder says so with an `UnexpectedEof` I/O error under its own (hyper 1.x
/// `proto/h1/decode.rs`, "end of file before message length reached").
fn cut_short(e: &kube::Error) -> bool {
    causes(e).into_iter().any(|err| {
        err.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
    })
}

/// The TLS failure under a request error, in the user's terms, when there is one: a server
/// certificate the kubeconfig's certificate authority did not sign (or that is expired, or for
/// another name), or a handshake that failed because the server does not speak TLS. None for
/// other errors. rustls' error sits under hyper's inside `io::Error`s ([`causes`] opens them).
pub fn tls_problem(e: &kube::Error) -> Option<String> {
    causes(e)
        .into_iter()
        .find_map(|err| err.downcast_ref::<rustls::Error>())
        .map(tls_words)
}

/// The errors under `e`, `e` first. `io::Error::source` skips the error it wraps (where rustls'
/// and hyper's errors sit), so each `io::Error` is opened with `get_ref` as well. Bounded: an
/// error chain is short, and this never loops on a cycle.
fn causes(e: &kube::Error) -> Vec<&(dyn std::error::Error + 'static)> {
    let mut pending: Vec<&(dyn std::error::Error + 'static)> = vec![e];
    let mut found = Vec::new();
    while let Some(err) = pending.pop() {
        if found.len() == 32 {
            break;
        }
        found.push(err);
        pending.extend(err.source());
        if let Some(wrapped) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            pending.push(wrapped);
        }
    }
    found
}

fn tls_words(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    const CA: &str = "`clusters[].cluster.certificate-authority` or `-data`";
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => format!(
            "the server's TLS certificate is not trusted: the certificate authority in the kubeconfig ({CA}) did not sign it ({e}); use the cluster's own CA (kind and `aws eks update-kubeconfig` write it for you)"
        ),
        rustls::Error::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            format!("the server's TLS certificate has expired ({e})")
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => format!(
            "the server's TLS certificate is not for the host in `clusters[].cluster.server` ({e}); use the server name the certificate was issued for"
        ),
        // webpki refuses a certificate authority presented as the server's own certificate;
        // Go's crypto/x509 (kubectl) accepts a self-signed CA:TRUE certificate as its own root.
        rustls::Error::InvalidCertificate(_) if format!("{e:?}").contains("CaUsedAsEndEntity") => format!(
            "the server's TLS certificate is itself a certificate authority (CA:TRUE), which trainlab's TLS library (rustls) does not accept as a server's certificate, although kubectl does ({e}); give the API server a certificate signed by that CA (kind, kubeadm and EKS clusters have one), or reach it through `kubectl proxy` and point the kubeconfig at http://127.0.0.1:8001"
        ),
        rustls::Error::InvalidCertificate(_) => {
            format!("the server's TLS certificate is not trusted ({e}); check {CA}")
        }
        _ => format!(
            "the TLS handshake failed ({e}): a server that does not speak TLS answers an `https://` URL this way; if the server has no TLS, write `clusters[].cluster.server` as `http://…`"
        ),
    }
}

/// The first non-empty line of a body, at most 200 characters: enough to recognise a page.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(an empty body)");
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}
