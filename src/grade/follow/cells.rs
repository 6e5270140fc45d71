//! Which cells (a learner's lab) a change can affect: a namespaced object → the cells whose
//! queries read that namespace; a cluster-wide query (nodes, NodePools, runtimes, a
//! learner-prefixed cluster-scoped object by name) → the cells that ask it; what capability
//! detection and node facts read (nodes, the controllers' Deployments) → every cell.

use std::collections::{BTreeSet, HashMap};

use crate::observe::kinds::ResourceKind;
use crate::observe::Query;

/// A cell's number: `learner * labs + lab`, in the room's order.
pub type Cell = usize;

/// The cells each read of the room can answer for.
#[derive(Default)]
pub struct Cells {
    by_namespace: HashMap<(&'static ResourceKind, String), Vec<Cell>>,
    /// Cluster-wide queries: the name they ask for (None: every object of the kind).
    wide: HashMap<&'static ResourceKind, Vec<(Option<String>, Cell)>>,
    /// Reads of every cell (node facts, capability detection): a change re-judges all.
    everyone: Vec<Query>,
    count: usize,
}

impl Cells {
    /// `queries(cell)` is what the cell reads; `everyone` what every cell's judging reads.
    pub fn new(count: usize, queries: impl Fn(Cell) -> Vec<Query>, everyone: Vec<Query>) -> Cells {
        let mut c = Cells {
            everyone,
            count,
            ..Cells::default()
        };
        for cell in 0..count {
            for q in queries(cell) {
                match q.namespace {
                    Some(ns) => c.by_namespace.entry((q.kind, ns)).or_default().push(cell),
                    None => c.wide.entry(q.kind).or_default().push((q.name, cell)),
                }
            }
        }
        for v in c.by_namespace.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        c
    }

    /// Whether a change of this object changes what every cell's judging reads.
    pub fn is_everyones(&self, kind: &ResourceKind, name: Option<&str>) -> bool {
        self.everyone.iter().any(|q| {
            *q.kind == *kind
                && q.name
                    .as_deref()
                    .is_none_or(|n| name.is_none_or(|m| m == n))
        })
    }

    /// Every cell that reads `kind`, anywhere.
    pub fn reading(&self, kind: &'static ResourceKind) -> BTreeSet<Cell> {
        if self.everyone.iter().any(|q| *q.kind == *kind) {
            return (0..self.count).collect();
        }
        let mut out: BTreeSet<Cell> = self
            .by_namespace
            .iter()
            .filter(|((k, _), _)| **k == *kind)
            .flat_map(|(_, cells)| cells.iter().copied())
            .collect();
        if let Some(wide) = self.wide.get(kind) {
            out.extend(wide.iter().map(|(_, c)| *c));
        }
        out
    }

    /// The cells a change of `kind` in `namespace` ("" when cluster-scoped) can affect;
    /// `name` None: any object there (a relist).
    pub fn affected(
        &self,
        kind: &'static ResourceKind,
        namespace: &str,
        name: Option<&str>,
    ) -> BTreeSet<Cell> {
        if self.is_everyones(kind, name) {
            return (0..self.count).collect();
        }
        let mut out = BTreeSet::new();
        if let Some(cells) = self.by_namespace.get(&(kind, namespace.to_string())) {
            out.extend(cells.iter().copied());
        }
        if let Some(wide) = self.wide.get(kind) {
            for (asked, cell) in wide {
                let hit = match (asked, name) {
                    (Some(a), Some(n)) => a == n,
                    _ => true,
                };
                if hit {
                    out.insert(*cell);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::kinds;

    /// Two learners × two labs: lab 0 reads pods in its namespace and nodes, lab 1 reads
    /// NodePools cluster-wide and a learner-named ClusterRole... as a named cluster read.
    fn cells() -> Cells {
        let learners = ["alice", "bob"];
        Cells::new(
            4,
            |cell| {
                let (l, lab) = (learners[cell / 2], cell % 2);
                if lab == 0 {
                    vec![Query::new(&kinds::PODS, &format!("{l}-a"))]
                } else {
                    vec![
                        Query::cluster(&kinds::NODEPOOLS),
                        Query::cluster(&kinds::NAMESPACES).named(&format!("{l}-b")),
                    ]
                }
            },
            vec![Query::cluster(&kinds::NODES)],
        )
    }

    #[test]
    fn a_learners_object_affects_only_their_cells_and_a_shared_kind_those_that_read_it() {
        let c = cells();
        let v = |s: BTreeSet<Cell>| s.into_iter().collect::<Vec<_>>();
        assert_eq!(v(c.affected(&kinds::PODS, "bob-a", Some("p"))), [2]);
        assert!(c
            .affected(&kinds::PODS, "kube-system", Some("p"))
            .is_empty());
        assert_eq!(v(c.affected(&kinds::NODEPOOLS, "", Some("gpu"))), [1, 3]);
        assert_eq!(v(c.affected(&kinds::NAMESPACES, "", Some("alice-b"))), [1]);
        assert_eq!(
            v(c.affected(&kinds::NAMESPACES, "", None)),
            [1, 3],
            "a relist"
        );
        assert_eq!(v(c.affected(&kinds::NODES, "", Some("n1"))), [0, 1, 2, 3]);
        assert_eq!(v(c.reading(&kinds::PODS)), [0, 2]);
    }
}
