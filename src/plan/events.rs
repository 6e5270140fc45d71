//! What a run says while it works: one typed event stream for `check` (once, `--wait`, `--watch`),
//! `grade` (a room, `--watch`) and the steps of the commands that change a cluster (`setup`,
//! `reset`), the way cargo-nextest's runner emits events its reporters subscribe to. There is one
//! render path: whatever shows a run (spinners, progress bars, watch redraws, and the final
//! report in every format) is a [`Listener`]; the run hands its final result to
//! [`Listener::finished`] and returns only the exit code.

use std::time::Duration;

/// One thing that happened in a run; `R` is what a graded round holds (a check's `Checked`, a
/// room's `RoomResult`).
pub enum Event<'a, R> {
    /// Connected to a cluster (once): its context and server.
    Connected(&'a str),
    /// A round of observation starts: `queries` merged reads.
    Reading { queries: usize },
    /// The round's reads are in.
    ReadDone,
    /// Judging `learners` learners (a room; clusters with `--contexts`).
    Grading { learners: usize },
    /// One learner of a room was judged.
    LearnerDone(&'a str),
    /// A round was graded; in watch mode this is where results are shown.
    Graded(&'a R),
    /// A room graded from watches was judged again where the cluster changed: the whole room
    /// as it now stands, and the cells judged again (the others kept their results).
    Regraded {
        result: &'a R,
        changed: &'a [super::stream::CellRef],
    },
    /// How the watches of a room graded from watches stand.
    Stream(&'a super::stream::StreamState),
    /// Some checks are pending; the next round starts after `pause`.
    Waiting {
        pending: usize,
        pause: Duration,
        elapsed: Duration,
        limit: Duration,
    },
    /// The waiting pause ended.
    WaitDone,
    /// A step of a command that changes the cluster starts (`setup`, `reset`): what it does.
    StepStarted(&'a str),
    /// The running step has news (how many Deployments are still awaited, how long a
    /// namespace has been terminating).
    StepNews(&'a str),
    /// The running step ended well, said as this.
    StepDone(&'a str),
    /// The running step failed (the error follows as the operation's result).
    StepFailed(&'a str),
    /// A line outside the steps (the cluster being used).
    Note(&'a str),
}

// By hand: a derive would ask `R: Copy`, and an event only borrows its `R`.
impl<R> Clone for Event<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for Event<'_, R> {}

/// Listens to a run's events.
pub trait Listener<R> {
    fn on(&mut self, event: Event<'_, R>);

    /// The run is over and this is what it produced, handed over whole: a reporter renders it
    /// here (in watch mode it already drew each round at [`Event::Graded`]); a room's reporter
    /// may drop each learner's results as their row is made. Progress-only listeners ignore it.
    fn finished(&mut self, _result: R) {}
}

/// A [`Listener`] that shows nothing (tests, machine output).
pub struct Quiet;

impl<R> Listener<R> for Quiet {
    fn on(&mut self, _: Event<'_, R>) {}
}
