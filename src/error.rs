//! Library error types. Each variant says what went wrong and where, so the CLI can print it as is
//! and map it to an exit code (see [`Error::exit_code`]).

use crate::catalog::{Lang, Text};
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

    /// [`Error::Usage`], said in both languages: the errors a newcomer meets first.
    #[error("{}", .0.en)]
    UsageSaid(Text),

    /// [`Error::Environment`], said in both languages.
    #[error("{}", .0.en)]
    EnvironmentSaid(Text),
}

impl Error {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Lab(_) | Error::Input(_) | Error::Usage(_) | Error::UsageSaid(_) => {
                ExitCode::BadInput
            }
            Error::Environment(_) | Error::EnvironmentSaid(_) => ExitCode::Environment,
        }
    }

    /// A usage error in both languages.
    pub fn usage(ja: impl Into<String>, en: impl Into<String>) -> Error {
        Error::UsageSaid(Text {
            ja: ja.into(),
            en: en.into(),
        })
    }

    /// An environment error in both languages.
    pub fn environment(ja: impl Into<String>, en: impl Into<String>) -> Error {
        Error::EnvironmentSaid(Text {
            ja: ja.into(),
            en: en.into(),
        })
    }

    /// The message in `lang` where the error has one, else as it was written.
    pub fn in_lang(&self, lang: Lang) -> String {
        match self {
            Error::UsageSaid(t) | Error::EnvironmentSaid(t) => t.get(lang).to_string(),
            other => other.to_string(),
        }
    }
}

/// A file path shown to users: relative paths stay as given, so messages match what they typed.
pub fn display_path(p: &std::path::Path) -> String {
    p.display().to_string()
}
