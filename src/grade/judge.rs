//! Judging a room on a shared cluster from what it read: each learner from an observation
//! holding only their answers, learners spread over the machine's cores.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use super::{RoomProgress, RoomReads};
use crate::facts::capabilities::Capabilities;
use crate::observe::Query;
use crate::plan::{Event, Item, Plan};
use crate::results::room::LearnerResult;
use crate::verify;
use crate::Error;

/// Learners judged from one observation. One: a learner's objects are held as trees of values
/// (about five times their text) only while that learner is judged, and what every learner
/// reads (nodes, the room's NodePools) is parsed once for the room and shared
/// (`RoomReads::answer`), so a bigger batch would save nothing.
const BATCH: usize = 1;

/// At most this many batches judged at once (one per core, up to this).
const MAX_WORKERS: usize = 4;

/// Every learner's results, in the order of `learners`, each kept packed as soon as it is
/// judged (`super::kept`), and the checks skipped for a withheld Secret (`lab/check`). `per` is
/// the number of labs each learner has in `plan` (items are laid out learner by learner).
pub fn shared(
    learners: &[String],
    plan: &Plan<'_>,
    per: usize,
    reads: &RoomReads,
    caps: &Capabilities,
    context: &str,
    progress: &mut RoomProgress,
) -> Result<(Vec<LearnerResult>, BTreeSet<String>), Error> {
    let per = per.max(1);
    let batches: Vec<(&[String], &[Item<'_>])> = learners
        .chunks(BATCH)
        .zip(plan.items.chunks(per * BATCH))
        .collect();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, MAX_WORKERS)
        .min(batches.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<Judged, Error>)>();
    let mut done: Vec<Option<Vec<LearnerResult>>> = Vec::new();
    let mut withheld = BTreeSet::new();
    done.resize_with(batches.len(), || None);
    let mut failed: Option<Error> = None;
    let mut take = |(i, r): (usize, Result<Judged, Error>)| match r {
        Ok((results, checks)) => {
            for l in &results {
                progress.on(Event::LearnerDone(&l.name));
            }
            done[i] = Some(results);
            withheld.extend(checks);
        }
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            failed.get_or_insert(e);
        }
    };
    let judge_next = || -> Option<(usize, Result<Judged, Error>)> {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let i = next.fetch_add(1, Ordering::Relaxed);
        let (names, items) = batches.get(i)?;
        Some((i, batch(names, items, per, plan, reads, caps, context)))
    };
    std::thread::scope(|s| {
        // The calling thread is one of the workers: it read the room, and the memory its
        // allocator freed then is used again for judging instead of fresh pages on another
        // thread (mimalloc keeps freed pages per thread). Its own results are taken, and
        // progress drawn, between its batches.
        for _ in 1..workers {
            let tx = tx.clone();
            s.spawn(move || {
                while let Some(judged) = judge_next() {
                    if tx.send(judged).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        while let Some(judged) = judge_next() {
            take(judged);
            while let Ok(other) = rx.try_recv() {
                take(other);
            }
        }
        for other in rx {
            take(other);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok((done.into_iter().flatten().flatten().collect(), withheld))
}

/// A batch's learners, kept, and the checks skipped there for a withheld Secret.
type Judged = (Vec<LearnerResult>, BTreeSet<String>);

/// One batch of learners, judged from one observation holding exactly the batch's answers.
fn batch(
    names: &[String],
    items: &[Item<'_>],
    per: usize,
    plan: &Plan<'_>,
    reads: &RoomReads,
    caps: &Capabilities,
    context: &str,
) -> Result<Judged, Error> {
    let mut seen = std::collections::HashSet::new();
    let queries: Vec<Query> = items
        .iter()
        .flat_map(|i| verify::queries(i.verifier, &i.target))
        .filter(|q| seen.insert(q.clone()))
        .collect();
    let obs = reads.observed(&queries);
    let nodes = crate::facts::ClusterNodes::of(&obs);
    let params = crate::plan::params_with_site(&plan.params, Some(context), plan.options.profile)?;
    let mut out = Vec::with_capacity(names.len());
    let mut withheld = BTreeSet::new();
    for (l, mine) in names.iter().zip(items.chunks(per)) {
        let mut results = Vec::with_capacity(mine.len());
        for item in mine {
            let mut target = item.target.clone();
            target.context = Some(context.to_string());
            results.push(verify::run(
                item.bundle,
                item.verifier,
                &obs,
                &nodes,
                &target,
                &params,
                plan.options.profile,
                Some(caps),
            )?);
        }
        out.push(super::kept(
            l.clone(),
            Some(context.to_string()),
            Ok(results),
            &mut withheld,
        )?);
    }
    Ok((out, withheld))
}
