//! Who may read a served board. On a loopback address (the default, 127.0.0.1:8080) only this
//! machine can connect; the Host header must then name the loopback address too, so a web page
//! elsewhere cannot read the board through a DNS name rebound to 127.0.0.1. On any other
//! address every request must carry the token (`?token=` in the URL trainlab prints, or
//! `Authorization: Bearer`), given with `--token` or generated from the system's secure random
//! source.

use std::net::SocketAddr;

use base64::Engine as _;

use crate::Error;

/// How `--serve ADDR` is read: `HOST:PORT` with an IP address (`0.0.0.0:8080`, `[::1]:8080`),
/// or a port alone for the loopback address (`8080`); None for anything else.
pub fn parse_addr(s: &str) -> Option<SocketAddr> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Some(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse::<SocketAddr>().ok()
}

/// The rule a served board applies to every request.
#[derive(Debug, Clone)]
pub struct Access {
    addr: SocketAddr,
    token: Option<String>,
}

/// The characters a token may hold: they need no escaping in a URL.
fn url_safe(t: &str) -> bool {
    t.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
}

impl Access {
    /// The rule for a server listening on `addr`: `token` as given, else one generated when the
    /// address is not loopback.
    pub fn new(addr: SocketAddr, token: Option<String>) -> Result<Access, Error> {
        let token = match token {
            Some(t) if t.len() < 16 || !url_safe(&t) => {
                return Err(Error::usage(
                    "--token は 16 文字以上で、英数字と - _ . ~ だけにしてください（URL に入れるため）",
                    "--token needs at least 16 characters, letters, digits and - _ . ~ only (it goes in a URL)",
                ))
            }
            Some(t) => Some(t),
            None if addr.ip().is_loopback() => None,
            None => Some(generate()?),
        };
        Ok(Access { addr, token })
    }

    /// The URL to open: the address (`localhost` for the loopback IPv4 one) and the token.
    pub fn url(&self) -> String {
        let host = match self.addr {
            SocketAddr::V4(a) if a.ip().is_unspecified() => format!("<this-host>:{}", a.port()),
            SocketAddr::V6(a) if a.ip().is_unspecified() => format!("<this-host>:{}", a.port()),
            a => a.to_string(),
        };
        format!("http://{host}/{}", self.query())
    }

    /// The query a link of the page carries: `?token=…`, or nothing.
    pub fn query(&self) -> String {
        match &self.token {
            Some(t) => format!("?token={t}"),
            None => String::new(),
        }
    }

    /// Whether a request may be answered: its token (from the query or an `Authorization:
    /// Bearer` header) when one is needed, and on loopback without a token, a Host header that
    /// names a loopback address.
    pub fn allows(
        &self,
        query_token: Option<&str>,
        bearer: Option<&str>,
        host: Option<&str>,
    ) -> bool {
        match &self.token {
            Some(t) => [query_token, bearer]
                .into_iter()
                .flatten()
                .any(|given| same(given.as_bytes(), t.as_bytes())),
            None => host.is_some_and(is_loopback_host),
        }
    }
}

/// Compares without stopping at the first difference (the time taken says nothing of the
/// token).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `127.0.0.1:8080`, `localhost:8080`, `[::1]:8080` (any port: the listener's is the only one).
fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// 24 random bytes from the system's secure source (the TLS stack's, aws-lc-rs), base64url.
fn generate() -> Result<String, Error> {
    let mut bytes = [0u8; 24];
    rustls::crypto::aws_lc_rs::default_provider()
        .secure_random
        .fill(&mut bytes)
        .map_err(|_| {
            Error::environment(
                "--serve: トークンを生成できません（安全な乱数を取得できません）。--token を指定してください",
                "--serve: cannot generate a token (no secure random source); give --token",
            )
        })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_host_and_port_or_a_loopback_port() {
        assert_eq!(parse_addr("8080"), "127.0.0.1:8080".parse().ok());
        assert_eq!(parse_addr("0.0.0.0:9000"), "0.0.0.0:9000".parse().ok());
        assert_eq!(parse_addr("[::1]:80"), "[::1]:80".parse().ok());
        assert_eq!(parse_addr("localhost"), None);
        assert_eq!(parse_addr("host:port"), None);
    }

    #[test]
    fn loopback_needs_no_token_but_a_loopback_host() {
        let a = Access::new("127.0.0.1:8080".parse().unwrap(), None).unwrap();
        assert_eq!(a.url(), "http://127.0.0.1:8080/");
        assert!(a.allows(None, None, Some("127.0.0.1:8080")));
        assert!(a.allows(None, None, Some("localhost:8080")));
        assert!(a.allows(None, None, Some("[::1]:8080")));
        assert!(
            !a.allows(None, None, Some("evil.example:8080")),
            "a rebound name"
        );
        assert!(!a.allows(None, None, None));
    }

    #[test]
    fn any_other_address_needs_the_token_a_generated_one_too() {
        let a = Access::new("0.0.0.0:8080".parse().unwrap(), None).unwrap();
        let token = a.query().strip_prefix("?token=").unwrap().to_string();
        assert!(token.len() >= 32, "{token}");
        assert!(a.url().ends_with(&format!("/?token={token}")));
        assert!(a.allows(Some(&token), None, Some("anything")));
        assert!(a.allows(None, Some(&token), None));
        assert!(!a.allows(None, None, Some("127.0.0.1:8080")));
        assert!(!a.allows(Some("wrong"), None, None));
        let b = Access::new("0.0.0.0:8080".parse().unwrap(), None).unwrap();
        assert_ne!(a.query(), b.query(), "a fresh token each time");
    }

    #[test]
    fn a_given_token_must_be_long_and_url_safe() {
        let addr: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(Access::new(addr, Some("short".into())).is_err());
        assert!(Access::new(addr, Some("has space in it 1234".into())).is_err());
        let a = Access::new(addr, Some("a-long-enough-token_1".into())).unwrap();
        assert!(a.allows(Some("a-long-enough-token_1"), None, None));
    }
}
