//! The faults a test injects (`Emulator::fault`) as the store keeps them: what each matches
//! and how far it has gone. What they answer is `faults.rs`.

use std::time::Duration;

use super::request::Request;

/// A fault injected before normal handling (see [`Emulator::fault`]).
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with a real-shaped `Status` error of this code and message.
    Status(u16, String),
    /// One code per matching request, in order: a 2xx/3xx code lets that request through, any
    /// other code answers with a `Status` error. Once the list is used up, requests pass.
    Sequence(Vec<u16>),
    /// Wait this long, then go on (other faults still apply, then normal handling).
    Latency(Duration),
    /// Close the connection without answering: the client sees a connection error.
    Down,
    /// Hold each matching request until this many have arrived (all of them in flight at
    /// once), then let them through; later ones pass. A client that waits for one answer before
    /// sending the next request never gets one (its request timeout ends it): so a test can
    /// prove requests were sent concurrently without measuring time.
    Gate(usize),
}

pub(super) struct FaultRule {
    pub(super) method: Option<String>,
    pub(super) prefix: String,
    pub(super) dry_run_only: bool,
    pub(super) fault: Fault,
    /// How many entries of a `Sequence` were consumed, or requests arrived at a `Gate`.
    pub(super) used: usize,
    /// A `Gate`'s switch (opened when enough requests arrived).
    pub(super) gate: Option<tokio::sync::watch::Sender<bool>>,
}

impl FaultRule {
    pub(super) fn matches(&self, req: &Request) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m == req.method.as_str())
            && req.path.starts_with(&self.prefix)
            && (!self.dry_run_only || req.dry_run())
    }
}
