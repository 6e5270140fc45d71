//! Library error types. Each variant says what went wrong and where, so the CLI can print it as is
//! and map it to an exit code (see [`Error::exit_code`]).

use crate::exit::ExitCode;
use crate::text::{Lang, Text};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A lab file (embedded or from `--labs-dir`) is malformed.
    #[error("{0}")]
    Lab(#[from] crate::catalog::LabError),

    /// An input file (snapshot, manifest) could not be read or parsed.
    #[error("{0}")]
    Input(#[from] crate::observe::InputError),

    /// The user asked for something that does not exist or makes no sense. Said in both
    /// languages (build it with [`Error::usage`]); `Display` is the English text.
    #[error("{}", .0.en)]
    Usage(Text),

    /// The environment (cluster, AWS, local tools) failed; never the learner's fault. Said in
    /// both languages (build it with [`Error::environment`]); `Display` is the English text.
    #[error("{}", .0.en)]
    Environment(Text),
}

impl Error {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Lab(_) | Error::Input(_) | Error::Usage(_) => ExitCode::BadInput,
            Error::Environment(_) => ExitCode::Environment,
        }
    }

    /// A usage error in both languages.
    pub fn usage(ja: impl Into<String>, en: impl Into<String>) -> Error {
        Error::Usage(Text {
            ja: ja.into(),
            en: en.into(),
        })
    }

    /// An environment error in both languages.
    pub fn environment(ja: impl Into<String>, en: impl Into<String>) -> Error {
        Error::Environment(Text {
            ja: ja.into(),
            en: en.into(),
        })
    }

    /// The message in `lang` where the error has one, else as it was written.
    pub fn in_lang(&self, lang: Lang) -> String {
        match self {
            Error::Usage(t) | Error::Environment(t) => t.get(lang).to_string(),
            Error::Input(e) => e.in_lang(lang),
            other => other.to_string(),
        }
    }
}

/// A file path shown to users: relative paths stay as given, so messages match what they typed.
pub fn display_path(p: &std::path::Path) -> String {
    p.display().to_string()
}

impl From<crate::catalog::UnknownLab> for Error {
    fn from(e: crate::catalog::UnknownLab) -> Error {
        Error::Usage(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_said_in_both_languages_with_unchanged_exit_codes() {
        let usage = Error::usage("ja text", "en text");
        assert_eq!(usage.to_string(), "en text");
        assert_eq!(usage.in_lang(Lang::Ja), "ja text");
        assert_eq!(usage.in_lang(Lang::En), "en text");
        assert_eq!(usage.exit_code(), ExitCode::BadInput);
        assert_eq!(usage.exit_code().code(), 2);

        let environment = Error::environment("ja text", "en text");
        assert_eq!(environment.to_string(), "en text");
        assert_eq!(environment.in_lang(Lang::Ja), "ja text");
        assert_eq!(environment.exit_code(), ExitCode::Environment);
        assert_eq!(environment.exit_code().code(), 3);
    }
}
