//! The one run loop of `check` (once, `--wait`, `--watch`) and `grade` (once, `--watch`): observe
//! and judge a round, tell the listener, then stop, re-observe while checks are pending (with
//! back-off, the last round at the deadline), or re-observe every interval until Ctrl-C.
//! What a round is (one target or a room) is the caller's; the repeating is here, once.

use std::future::Future;
use std::time::Duration;

// tokio's clock (the system's, unless a test pauses it) so the loop's tests need no wall clock.
use tokio::time::Instant;

use super::Repeat;
use crate::Error;

/// A run's rounds and the listener of what happens between them.
pub trait Rounds {
    /// What one round gives (a lab's results, a graded room).
    type Graded;
    /// Observes and judges once.
    fn round(&mut self) -> impl Future<Output = Result<Self::Graded, Error>>;
    /// How many checks of a round are still pending (what `--wait` waits for).
    fn pending(graded: &Self::Graded) -> usize;
    /// A round was judged: in watch mode this is where it is shown.
    fn graded(&mut self, graded: &Self::Graded);
    /// Some checks are pending; the next round starts after `pause`.
    fn waiting(&mut self, _pending: usize, _pause: Duration, _elapsed: Duration, _limit: Duration) {
    }
    /// The pause before the next round ended.
    fn wait_done(&mut self) {}
}

/// The first pause of `--wait`; each next one doubles, up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
const MAX_PAUSE: Duration = Duration::from_secs(8);

/// Runs rounds as `repeat` says and returns the last one.
///
/// Under `--watch` and `--wait`, Ctrl-C (and SIGTERM) is heard from the start, during a round as
/// well as between rounds (one listener for the whole run: a signal that arrives while a round
/// reads the cluster is not lost), and ends the run with the last round that finished (so
/// `--wait`'s exit code is that round's: 4 while checks are pending); before any round finished
/// it is an error saying nothing was graded.
pub async fn run_rounds<R: Rounds>(rounds: &mut R, repeat: Repeat) -> Result<R::Graded, Error> {
    let started = Instant::now();
    let mut delay = FIRST_PAUSE;
    let watching = matches!(repeat, Repeat::Watch(_) | Repeat::Wait(_));
    let interrupted = interrupt_signal(watching);
    tokio::pin!(interrupted);
    let mut last: Option<R::Graded> = None;
    loop {
        let graded = tokio::select! {
            graded = rounds.round() => graded?,
            _ = &mut interrupted => return last.ok_or_else(nothing_graded),
        };
        rounds.graded(&graded);
        let pause = match repeat {
            Repeat::Once => return Ok(graded),
            Repeat::Watch(every) => every,
            Repeat::Wait(limit) => {
                let pending = R::pending(&graded);
                // The last re-check happens at the deadline itself.
                let left = limit.saturating_sub(started.elapsed());
                if pending == 0 || left.is_zero() {
                    return Ok(graded);
                }
                let pause = delay.min(left);
                rounds.waiting(pending, pause, started.elapsed(), limit);
                delay = (delay * 2).min(MAX_PAUSE);
                pause
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => rounds.wait_done(),
            _ = &mut interrupted => return Ok(graded),
        }
        last = Some(graded);
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM when `listen`, else never (outside `--watch` and
/// `--wait` either ends the process as usual).
async fn interrupt_signal(listen: bool) {
    if !listen {
        return std::future::pending::<()>().await;
    }
    crate::interrupt::signal().await
}

fn nothing_graded() -> Error {
    Error::environment(
        "中断しました（Ctrl-C）。最初の採点が終わる前だったので、何も採点していません",
        "interrupted (Ctrl-C) before the first round finished: nothing was graded",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds whose pending counts are scripted, recording what the loop told them.
    struct Scripted {
        pending: Vec<usize>,
        next: usize,
        heard: Vec<String>,
    }

    impl Rounds for Scripted {
        type Graded = usize;
        async fn round(&mut self) -> Result<usize, Error> {
            let p = self.pending[self.next.min(self.pending.len() - 1)];
            self.next += 1;
            Ok(p)
        }
        fn pending(graded: &usize) -> usize {
            *graded
        }
        fn graded(&mut self, graded: &usize) {
            self.heard.push(format!("graded {graded}"));
        }
        fn waiting(&mut self, pending: usize, pause: Duration, _: Duration, _: Duration) {
            self.heard
                .push(format!("waiting {pending} {}s", pause.as_secs()));
        }
        fn wait_done(&mut self) {
            self.heard.push("wait done".into());
        }
    }

    fn scripted(pending: &[usize]) -> Scripted {
        Scripted {
            pending: pending.to_vec(),
            next: 0,
            heard: Vec::new(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn once_is_one_round() {
        let mut r = scripted(&[3]);
        assert_eq!(run_rounds(&mut r, Repeat::Once).await.unwrap(), 3);
        assert_eq!(r.heard, ["graded 3"]);
    }

    #[tokio::test(start_paused = true)]
    async fn wait_re_observes_with_back_off_until_nothing_is_pending() {
        let mut r = scripted(&[2, 1, 0]);
        let last = run_rounds(&mut r, Repeat::Wait(Duration::from_secs(60)))
            .await
            .unwrap();
        assert_eq!(last, 0);
        assert_eq!(
            r.heard,
            [
                "graded 2",
                "waiting 2 1s",
                "wait done",
                "graded 1",
                "waiting 1 2s",
                "wait done",
                "graded 0"
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn wait_gives_up_at_the_deadline_after_a_last_round_there() {
        let mut r = scripted(&[1]);
        let started = tokio::time::Instant::now();
        let last = run_rounds(&mut r, Repeat::Wait(Duration::from_secs(5)))
            .await
            .unwrap();
        assert_eq!(last, 1, "still pending");
        // Pauses of 1, 2, then the 2 s left: the last round is at the deadline itself.
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert_eq!(
            r.heard.iter().filter(|h| h.starts_with("graded")).count(),
            4
        );
        assert!(
            r.heard.contains(&"waiting 1 2s".to_string()),
            "{:?}",
            r.heard
        );
    }
}
