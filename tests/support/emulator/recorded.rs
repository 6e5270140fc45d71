//! A request as the emulator records it for tests: what arrived, when, and when it was answered.

use std::time::Duration;

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
