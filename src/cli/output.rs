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

/// Whether standard output was closed when trainlab started (`trainlab list >&-`). Rust's
/// runtime puts `/dev/null`, opened read-write, in place of a closed standard descriptor (std's
/// `sanitize_standard_fds`, library/std/src/sys/pal/unix/mod.rs), so every write would succeed
/// and the report vanish without a word; a shell's `> /dev/null` opens it write-only, which is
/// a choice and stays quiet. Linux only (it reads /proc); elsewhere never.
pub fn stdout_was_closed() -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let is_null = std::fs::read_link("/proc/self/fd/1")
        .is_ok_and(|target| target == std::path::Path::new("/dev/null"));
    let read_write = || {
        let info = std::fs::read_to_string("/proc/self/fdinfo/1").ok()?;
        let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
        // Octal, as the kernel prints it; O_ACCMODE is 0o3 and O_RDWR 0o2 on Linux.
        u32::from_str_radix(flags.trim(), 8)
            .ok()
            .map(|f| f & 0o3 == 0o2)
    };
    is_null && read_write().unwrap_or(false)
}

pub fn eprint(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes());
    let _ = err.flush();
}

/// `check`'s `-o`: the report formats, where `table` is another name for `human` so that one
/// spelling works for every command (`list` and `grade` print tables; `check` and `doctor`
/// text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckOutput {
    /// Coloured text for people (also `-o table`)
    #[value(alias = "table")]
    Human,
    /// JSON, schema version 2 (docs/report-schema.md)
    Json,
    /// JUnit XML: a testsuite per lab, a testcase per check
    Junit,
}

impl From<CheckOutput> for crate::report::Format {
    fn from(o: CheckOutput) -> Self {
        match o {
            CheckOutput::Human => crate::report::Format::Human,
            CheckOutput::Json => crate::report::Format::Json,
            CheckOutput::Junit => crate::report::Format::Junit,
        }
    }
}

/// `grade`'s `-o`: the room's formats, where `human` is another name for `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GradeOutput {
    /// Learners × labs, with a mark and a percent per cell (also `-o human`)
    #[value(alias = "human")]
    Table,
    /// One JSON document: every learner's outcomes, stable ids (`learner/lab`)
    Json,
    /// JUnit XML: a testsuite per learner × lab, a testcase per check
    Junit,
    /// One row per learner × lab
    Csv,
}

impl From<GradeOutput> for crate::report::room::RoomFormat {
    fn from(o: GradeOutput) -> Self {
        use crate::report::room::RoomFormat;
        match o {
            GradeOutput::Table => RoomFormat::Table,
            GradeOutput::Json => RoomFormat::Json,
            GradeOutput::Junit => RoomFormat::Junit,
            GradeOutput::Csv => RoomFormat::Csv,
        }
    }
}
