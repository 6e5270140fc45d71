//! A verifier's reads, declared once: the framework plans them (one LIST per distinct query
//! across every lab and learner) and `judge()` looks them up by the same declaration, so the two
//! can never drift apart. A read that was not declared is refused by every source alike.

use crate::observe::{Query, ResourceKind};

use super::Target;

/// Where a read looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The target's namespace (for a namespaced kind).
    Lab,
    /// The whole cluster: cluster-scoped kinds, or every namespace.
    Cluster,
}

/// One declared read: `static JOBS: Read = Read::lab(&kinds::JOBS);`
#[derive(Debug, PartialEq, Eq)]
pub struct Read {
    pub kind: &'static ResourceKind,
    pub scope: Scope,
}

impl Read {
    /// Objects of `kind` in the lab's namespace (or cluster-scoped ones).
    pub const fn lab(kind: &'static ResourceKind) -> Read {
        Read {
            kind,
            scope: Scope::Lab,
        }
    }

    /// Objects of `kind` across the cluster.
    pub const fn cluster(kind: &'static ResourceKind) -> Read {
        Read {
            kind,
            scope: Scope::Cluster,
        }
    }

    /// The query this read stands for, for one target.
    pub fn query(&self, target: &Target) -> Query {
        match self.scope {
            Scope::Lab => Query::new(self.kind, &target.namespace),
            Scope::Cluster => Query::cluster(self.kind),
        }
    }
}
