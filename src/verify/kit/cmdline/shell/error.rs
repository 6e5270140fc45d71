//! What stops a script from being split: the learner's to fix.

/// A script that cannot be split, or a shell with nothing to run: the pod would fail to start
/// its command, so this is the learner's to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("container {container}: {problem}")]
pub struct ShellError {
    pub container: String,
    pub problem: ShellProblem,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellProblem {
    #[error("the {quote} quote opened on line {line} of the shell script is never closed")]
    UnclosedQuote { quote: char, line: usize },
    #[error("the {open} opened on line {line} of the shell script is never closed")]
    UnclosedSubstitution { open: &'static str, line: usize },
    #[error("line {line} of the shell script: {op} has no file name after it")]
    RedirectWithoutTarget { op: String, line: usize },
    #[error("{shell} -c is given no script")]
    MissingScript { shell: String },
    #[error("shells nested more than {limit} deep (sh -c running sh -c …)")]
    TooDeep { limit: usize },
}
