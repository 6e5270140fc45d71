//! Process exit codes: part of the CLI's interface (documented in `--help` and the README).

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    /// Every counted check passed (or the quiz answer was right).
    Ok = 0,
    /// At least one check failed, or the quiz answer was wrong.
    Failed = 1,
    /// Usage error or bad input: unreadable file, invalid YAML, unknown lab.
    BadInput = 2,
    /// The environment failed: unreachable cluster, forbidden read, missing prerequisite.
    Environment = 3,
    /// Checks are still pending (after `--wait`, if given).
    StillPending = 4,
    /// Ctrl-C or SIGTERM stopped a command that changes the cluster (`setup`, `start`, `solve`,
    /// `reset`) in the middle: 128 + SIGINT, as shells report it.
    Interrupted = 130,
}

impl ExitCode {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The text `--help` prints about exit codes.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  every counted check passed (quiz: every answer given was right; quitting is no wrong answer)
  1  a check failed (quiz: a wrong answer)
  2  usage error or bad input (unreadable file, invalid YAML, unknown lab)
  3  environment error (cluster unreachable, read forbidden, missing operator)
  4  checks still pending (not converged yet; --wait D re-checks up to D)
130  interrupted (Ctrl-C or SIGTERM) while setup, start, solve or reset changed the cluster:
     what was done stays; run the command again to finish (each is idempotent)";
