//! Reading the command line in the user's language: the language is known before clap parses
//! (`--lang` anywhere before `--`, else the environment, as [`Global::lang`] decides), so
//! `--help` and every argument error are already in it.
//!
//! [`Global::lang`]: super::Global::lang

use std::ffi::OsString;
use std::sync::OnceLock;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use super::Cli;
use crate::text::Lang;

static LANG: OnceLock<Lang> = OnceLock::new();

/// The language of this run's command line, for value parsers (which clap calls without any
/// state): English until [`parse`] has looked.
pub fn lang() -> Lang {
    LANG.get().copied().unwrap_or(Lang::En)
}

/// The language the command line asks for: the last `--lang ja|en` or `--lang=ja|en` before a
/// lone `--`, else `LC_ALL`/`LC_MESSAGES`/`LANG`. A `--lang` value that is neither is left to
/// clap to refuse, in the environment's language.
pub fn lang_in(args: &[OsString]) -> Lang {
    let mut found = None;
    let mut words = args.iter().skip(1).map(|a| a.to_str());
    while let Some(word) = words.next() {
        let value = match word {
            Some("--") => break,
            Some("--lang") => words.next().flatten(),
            Some(w) => w.strip_prefix("--lang="),
            None => None,
        };
        match value {
            Some("ja") => found = Some(Lang::Ja),
            Some("en") => found = Some(Lang::En),
            _ => {}
        }
    }
    found.unwrap_or_else(Lang::from_env)
}

/// The parsed command line, or the help, version or error clap (or, in Japanese, this module)
/// prints before the process ends: help and version with 0, errors with clap's 2, the same as
/// [`crate::exit::ExitCode::BadInput`].
pub fn parse_or_exit() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match parse(args) {
        Ok(cli) => cli,
        Err((e, lang)) => {
            let own = matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            );
            if lang == Lang::En || own {
                e.exit()
            }
            super::output::eprint(&super::errors_ja::render(&e));
            std::process::exit(e.exit_code())
        }
    }
}

/// `args` (the program name first) parsed with the help and errors of their language.
pub fn parse(args: Vec<OsString>) -> Result<Cli, (clap::Error, Lang)> {
    let lang = lang_in(&args);
    let _ = LANG.set(lang);
    let mut cmd = match lang {
        Lang::Ja => super::help_ja::japanese(Cli::command()),
        Lang::En => Cli::command(),
    };
    cmd.try_get_matches_from_mut(args)
        .and_then(|m| Cli::from_arg_matches(&m))
        .map_err(|e| (e.format(&mut cmd), lang))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_language_is_read_wherever_lang_is_and_not_after_a_double_dash() {
        assert_eq!(lang_in(&words("trainlab check --lang ja 9")), Lang::Ja);
        assert_eq!(lang_in(&words("trainlab --lang=ja check 9")), Lang::Ja);
        assert_eq!(
            lang_in(&words("trainlab --lang ja check --lang en 9")),
            Lang::En
        );
        assert_eq!(
            lang_in(&words("trainlab check --lang ja -- --lang en")),
            Lang::Ja
        );
    }
}
