//! What a board shows of a judged lab without its report: the score, and each check's state
//! (its status, and whether it failed only because the lab's object is missing). A board's
//! mark and the room's summary are made from these alone, so a served board's outline never
//! reads a learner's packed results back (`PackedLabs::glance`).

use crate::verify::{LabResult, Score, Status};

/// A check's state as a board counts it: its status, and whether it is a failure only because
/// the lab's object does not exist yet (`Outcome::is_missing_object`).
pub type CheckState = (Status, bool);

/// A lab's glance, borrowed from where it is kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glance<'a> {
    pub score: Score,
    /// Every outcome's state, in the outcomes' order.
    pub outcomes: &'a [CheckState],
    /// Each of the lab's checks (`Lab::checks` order): the state of its outcome, None when the
    /// lab has no outcome for it.
    pub checks: &'a [Option<CheckState>],
}

/// The glances of a learner's labs, kept in three allocations whatever the labs' count: a
/// thousand learners' glances are a few thousand allocations, not tens of thousands.
#[derive(Debug, Clone, Default)]
pub struct Glances {
    scores: Box<[Score]>,
    outcomes: Box<[CheckState]>,
    checks: Box<[Option<CheckState>]>,
    /// Per lab, where its outcomes and its checks end in the two flat lists.
    ends: Box<[(u32, u32)]>,
}

impl Glances {
    pub fn of(results: &[LabResult]) -> Glances {
        let mut scores = Vec::with_capacity(results.len());
        let mut outcomes = Vec::new();
        let mut checks = Vec::new();
        let mut ends = Vec::with_capacity(results.len());
        for r in results {
            scores.push(r.score());
            outcomes.extend(r.outcomes.iter().map(|o| (o.status, o.is_missing_object())));
            checks.extend(r.lab.checks.iter().map(|check| {
                r.outcomes
                    .iter()
                    .find(|o| o.check == check.id)
                    .map(|o| (o.status, o.is_missing_object()))
            }));
            ends.push((outcomes.len() as u32, checks.len() as u32));
        }
        Glances {
            scores: scores.into(),
            outcomes: outcomes.into(),
            checks: checks.into(),
            ends: ends.into(),
        }
    }

    /// The glance of the `i`th lab, in the order the labs were judged.
    pub fn get(&self, i: usize) -> Option<Glance<'_>> {
        let score = *self.scores.get(i)?;
        let (outcomes_end, checks_end) = self.ends[i];
        let (outcomes_start, checks_start) = match i {
            0 => (0, 0),
            _ => self.ends[i - 1],
        };
        Some(Glance {
            score,
            outcomes: &self.outcomes[outcomes_start as usize..outcomes_end as usize],
            checks: &self.checks[checks_start as usize..checks_end as usize],
        })
    }

    /// The bytes kept (for `-v` and the benchmark).
    pub fn held(&self) -> usize {
        use std::mem::size_of;
        self.scores.len() * size_of::<Score>()
            + self.outcomes.len() * size_of::<CheckState>()
            + self.checks.len() * size_of::<Option<CheckState>>()
            + self.ends.len() * size_of::<(u32, u32)>()
    }
}
