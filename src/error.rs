//! Library error types. Each variant says what went wrong and where, so the CLI can print it as is
//! and map it to an exit code (see [`Error::exit_code`]).

use crate::exit::ExitCode;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A lab file (embedded or from `--labs-dir`) is malformed.
    #[error("{0}")]
    Lab(#[from] crate::catalog::LabError),

    /// An input file (snapshot, manifest) could not be read or parsed.
    #[error("{0}")]
    Input(#[from] crate::observe::InputError),

    /// The user asked for something that does not exist or makes no sense.
    #[error("{0}")]
    Usage(String),

    /// The environment (cluster, AWS, local tools) failed; never the learner's fault.
    #[error("{0}")]
    Environment(String),
}

impl Error {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Lab(_) | Error::Input(_) | Error::Usage(_) => ExitCode::BadInput,
            Error::Environment(_) => ExitCode::Environment,
        }
    }
}

/// A file path shown to users: relative paths stay as given, so messages match what they typed.
pub fn display_path(p: &std::path::Path) -> String {
    p.display().to_string()
}
