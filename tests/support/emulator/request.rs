//! A request as handlers read it (`Request`, its decoded `Query`), and its record
//! ([`Recorded`]) as the server keeps it.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::Method;
use serde_json::Value;

use super::recorded::Recorded;

/// A request as handlers see it.
pub(super) struct Request {
    pub(super) method: Method,
    pub(super) path: String,
    pub(super) raw_query: String,
    pub(super) query: Query,
    pub(super) content_type: Option<String>,
    pub(super) accept: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Bytes,
}

impl Request {
    /// `dryRun=All` in the query, or in the DeleteOptions body kube-rs sends with DELETE.
    pub(super) fn dry_run(&self) -> bool {
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
    pub(super) fn media_type(&self) -> &str {
        let full = self.content_type.as_deref().unwrap_or("");
        full.split(';').next().unwrap_or("").trim()
    }

    pub(super) fn recorded(&self, seq: u64, received: Duration) -> Recorded {
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
    pub(super) fn aggregated_discovery(&self) -> Option<&'static str> {
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
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn parse(raw: &str) -> Query {
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

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn has(&self, key: &str, value: &str) -> bool {
        self.0.iter().any(|(k, v)| k == key && v == value)
    }

    pub(super) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

pub(super) fn percent_decode(text: &str, plus_is_space: bool) -> String {
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
