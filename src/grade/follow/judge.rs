//! Judging some cells of a followed room from what the store holds: each learner from an
//! observation of only the queries of their cells being judged, learners spread over the
//! machine's cores (as `grade::judge` does for a whole room).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::cells::Cell;
use super::store::{Shared, Store};
use crate::facts::capabilities::Capabilities;
use crate::facts::Profile;
use crate::grade::{withhold_secrets, Room};
use crate::observe::Query;
use crate::plan::learners::shared_target;
use crate::results::packed::PackedLabs;
use crate::results::room::LearnerResult;
use crate::verify::{self, LabResult, Target};
use crate::Error;

/// A learner's cells judged again.
pub struct Rejudged {
    /// The learner's index in the room.
    pub learner: usize,
    /// Their labs, the cells judged again put in.
    pub labs: PackedLabs,
    /// Each cell judged, with the checks skipped there for a withheld Secret.
    pub withheld: Vec<(Cell, Vec<String>)>,
}

/// A learner's judged cells put into their row (`rows[learner]`, none yet for a new learner),
/// a withheld Secret's checks made skipped first (`withhold_secrets`).
fn rejudged(
    learner: usize,
    judged: Vec<(Cell, LabResult)>,
    rows: &[LearnerResult],
) -> Result<Rejudged, Error> {
    let mut withheld = Vec::with_capacity(judged.len());
    let mut labs = Vec::with_capacity(judged.len());
    for (c, mut r) in judged {
        withheld.push((c, withhold_secrets(&mut r)));
        labs.push(r);
    }
    let labs = match rows.get(learner).map(|r| &r.results) {
        Some(Ok(kept)) => kept.replaced(labs)?,
        _ => PackedLabs::pack(&labs)?,
    };
    Ok(Rejudged {
        learner,
        labs,
        withheld,
    })
}

/// At most this many learners judged at once (one per core, up to this), as `grade::judge`.
const MAX_WORKERS: usize = 4;

/// What judging needs beside the store.
pub struct Judging<'a, 'c> {
    pub room: &'a Room<'c>,
    pub learners: &'a [String],
    pub caps: &'a Capabilities,
    pub profile: Option<Profile>,
    pub context: &'a str,
}

impl Judging<'_, '_> {
    /// The target of a cell (its learner's namespace for its lab, on the room's context).
    pub fn target(&self, cell: Cell) -> Target {
        let per = self.room.labs.len().max(1);
        let (bundle, _) = self.room.labs[cell % per];
        let mut t = shared_target(
            &self.room.template,
            &self.learners[cell / per],
            &bundle.lab.id,
        );
        t.context = Some(self.context.to_string());
        t
    }

    /// What a cell reads.
    pub fn queries(&self, cell: Cell) -> Vec<Query> {
        let per = self.room.labs.len().max(1);
        let (_, verifier) = self.room.labs[cell % per];
        verify::queries(verifier, &self.target(cell))
    }

    /// The cells judged again, learner by learner: each learner's labs as `rows` held them with
    /// the cells put in, packed again by the worker that judged them (a room's fifteen
    /// thousand results are never all unpacked at once).
    pub fn cells(
        &self,
        cells: &[Cell],
        store: &Store,
        rows: &[LearnerResult],
    ) -> Result<Vec<Rejudged>, Error> {
        let per = self.room.labs.len().max(1);
        let mut by_learner: BTreeMap<usize, Vec<Cell>> = BTreeMap::new();
        for &c in cells {
            by_learner.entry(c / per).or_default().push(c);
        }
        let groups: Vec<Vec<Cell>> = by_learner.into_values().collect();
        let params =
            crate::plan::params_with_site(&self.room.params, Some(self.context), self.profile)?;
        let shared = Shared::default();
        let next = AtomicUsize::new(0);
        let out: Mutex<Vec<Rejudged>> = Mutex::new(Vec::with_capacity(groups.len()));
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, MAX_WORKERS)
            .min(groups.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    while let Some(group) = groups.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let done = self
                            .learner(group, store, &shared, &params)
                            .and_then(|judged| rejudged(group[0] / per, judged, rows));
                        match done {
                            Ok(done) => out.lock().unwrap_or_else(|e| e.into_inner()).push(done),
                            Err(e) => {
                                failed
                                    .lock()
                                    .unwrap_or_else(|e| e.into_inner())
                                    .get_or_insert(e);
                                return;
                            }
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        let mut out = out.into_inner().unwrap_or_else(|e| e.into_inner());
        out.sort_by_key(|r| r.learner);
        Ok(out)
    }

    /// One learner's cells, from one observation of their queries.
    fn learner(
        &self,
        cells: &[Cell],
        store: &Store,
        shared: &Shared,
        params: &BTreeMap<String, String>,
    ) -> Result<Vec<(Cell, LabResult)>, Error> {
        let mut seen = std::collections::HashSet::new();
        let queries: Vec<Query> = cells
            .iter()
            .flat_map(|&c| self.queries(c))
            .filter(|q| seen.insert(q.clone()))
            .collect();
        let obs = store.observed(&queries, shared);
        let nodes = crate::facts::ClusterNodes::of(&obs);
        let per = self.room.labs.len().max(1);
        cells
            .iter()
            .map(|&c| {
                let (bundle, verifier) = self.room.labs[c % per];
                let r = verify::run(
                    bundle,
                    verifier,
                    &obs,
                    &nodes,
                    &self.target(c),
                    params,
                    self.profile,
                    Some(self.caps),
                )?;
                Ok((c, r))
            })
            .collect()
    }
}
