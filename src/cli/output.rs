//! Writing to stdout/stderr without panicking on a closed pipe (`trainlab list | head`), and
//! without losing a failed write: a full disk or `> /dev/full` is an error the command reports
//! when it ends (exit 2), while a reader that closed the pipe early stays quiet, as with other
//! Unix tools.

use std::io::Write;
use std::sync::OnceLock;

/// The first write to stdout that failed for another reason than a closed pipe.
static STDOUT_FAILED: OnceLock<String> = OnceLock::new();

pub fn print(s: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        stdout_failed(&e);
    }
}

/// Records a failed write to stdout (a closed pipe is not a failure: the reader has what it
/// wanted).
pub fn stdout_failed(e: &std::io::Error) {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        let _ = STDOUT_FAILED.set(e.to_string());
    }
}

/// Why the output could not be written, if a write failed.
pub fn stdout_failure() -> Option<&'static str> {
    STDOUT_FAILED.get().map(String::as_str)
}

pub fn eprint(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes());
    let _ = err.flush();
}
