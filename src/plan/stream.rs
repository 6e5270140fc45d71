//! What a room graded from watches says about its cells and its streams (`grade --watch` on a
//! shared cluster, `grade::follow`): which cells a change re-judged, and how the watches stand.

use std::time::{Duration, SystemTime};

/// One cell of a room: a learner's lab.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellRef {
    pub learner: String,
    pub lab: String,
}

/// How a room's watches stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamState {
    /// Every kind is listed and watched (`kinds` streams, one per kind and scope).
    Watching { kinds: usize },
    /// A kind's stream failed; it is tried again after `retry_in`.
    Reconnecting {
        kind: String,
        why: String,
        retry_in: Duration,
    },
    /// The cluster had forgotten where a kind's stream stood (`410 Gone`): the kind was listed
    /// again, `objects` objects.
    Relisted { kind: String, objects: usize },
    /// What the room holds was last confirmed by the cluster (an event of a stream) at `at`.
    Confirmed { at: SystemTime },
}
