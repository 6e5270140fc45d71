//! A command that starts another shell: which programs are shells, and the `-c` script one runs.

use super::super::basename;
use super::error::ShellProblem;

/// Programs whose `-c SCRIPT` is a shell script.
pub(super) const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "ash",
    "zsh",
    "ksh",
    "mksh",
    "busybox-sh",
];

/// The `-c` script of a shell command line, or None when it runs a file or stdin.
pub(super) fn shell_script(argv: &[String]) -> Result<Option<String>, ShellProblem> {
    let shell = argv
        .first()
        .map(|s| basename(s))
        .unwrap_or("sh")
        .to_string();
    let mut c_flag = false;
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        if w == "--" || w == "-" {
            i += 1;
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            // bash long options; these two take a file name.
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = w.strip_prefix('-').or_else(|| w.strip_prefix('+')) else {
            break;
        };
        if cluster.contains('c') {
            c_flag = true;
        }
        // `-o pipefail`, `-O extglob`: the option name is the next word.
        i += if cluster.contains('o') || cluster.contains('O') {
            2
        } else {
            1
        };
    }
    if !c_flag {
        return Ok(None);
    }
    match argv.get(i) {
        Some(script) => Ok(Some(script.clone())),
        None => Err(ShellProblem::MissingScript { shell }),
    }
}
