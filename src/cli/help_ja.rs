//! `--help` in Japanese: the clap command with every about, help text, heading and annotation
//! taken from the table in `help_ja.yaml` (data, one entry per subcommand and argument).
//!
//! The command is built first (clap then adds `--help`, `--version`, the `help` subcommand and
//! copies the global arguments into every subcommand), and the built command is translated, so
//! what clap adds is Japanese too. The headings clap writes itself ("Usage:", "Options:",
//! "Arguments:", "Commands:") come from the help template and the arguments' headings; the
//! annotations ("[default: …]", "[possible values: …]", "[env: …]") are hidden and written in
//! Japanese into the help text. Where these come from: clap_builder 4.6's
//! `output/help_template.rs` (`write_all_args`, `spec_vals`) and `builder/command.rs`
//! (`_check_help_and_version`).

use std::collections::BTreeMap;

use clap::{Arg, Command};
use serde::Deserialize;

/// The table: subcommand path (`""` for trainlab itself, `"setup kind"`) → its texts.
const TABLE: &str = include_str!("help_ja.yaml");

/// The headings and texts clap writes itself, in Japanese.
const TEMPLATE: &str =
    "{before-help}{about-with-newline}\n使い方: {usage}\n\n{all-args}{after-help}";
const OPTIONS: &str = "オプション";
const ARGUMENTS: &str = "引数";
const COMMANDS: &str = "コマンド";
const HELP_FLAG: &str = "ヘルプを表示します (-h は要約、--help は詳しい説明)";
const VERSION_FLAG: &str = "バージョンを表示します";
const HELP_COMMAND: &str = "このヘルプ、または指定したサブコマンドのヘルプを表示します";
const HELP_COMMAND_ARG: &str = "ヘルプを表示するサブコマンド";

/// The Japanese of one command: its texts, and its own arguments' help by argument id.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandText {
    about: Option<String>,
    long_about: Option<String>,
    after_help: Option<String>,
    #[serde(default)]
    args: BTreeMap<String, String>,
}

pub(crate) type Table = BTreeMap<String, CommandText>;

/// The embedded table, or why it does not parse (a test keeps it parsing).
pub(crate) fn table() -> Result<Table, String> {
    serde_saphyr::from_str(TABLE).map_err(|e| format!("src/cli/help_ja.yaml: {e}"))
}

/// `cmd` (trainlab's whole command) built and with every text in Japanese. Should the table not
/// parse, the help stays English rather than the program stopping.
pub fn japanese(mut cmd: Command) -> Command {
    cmd.build();
    let table = match table() {
        Ok(t) => t,
        Err(why) => {
            tracing::debug!("Japanese help unavailable: {why}");
            return cmd;
        }
    };
    translate(cmd, "", &table, &table)
}

/// One command and, below it, its subcommands. `texts` is where this command's own texts are
/// looked up: the table, or nothing inside clap's `help` subcommand, whose children are copies
/// of the real subcommands and take their abouts from [`copy_about`].
fn translate(mut cmd: Command, path: &str, table: &Table, texts: &Table) -> Command {
    let empty = CommandText::default();
    let own = texts.get(path).unwrap_or(&empty);
    let root = table.get("").unwrap_or(&empty);
    if let (Some(_), Some(ja)) = (cmd.get_about(), &own.about) {
        cmd = cmd.about(ja.clone());
    }
    if let (Some(_), Some(ja)) = (cmd.get_long_about(), &own.long_about) {
        cmd = cmd.long_about(ja.clone());
    }
    if let (Some(_), Some(ja)) = (cmd.get_after_help(), &own.after_help) {
        cmd = cmd.after_help(ja.clone());
    }
    cmd = cmd
        .help_template(TEMPLATE)
        .subcommand_help_heading(COMMANDS)
        .mut_args(|a| {
            let id = a.get_id().as_str().to_string();
            let ja = match id.as_str() {
                "help" => Some(HELP_FLAG),
                "version" => Some(VERSION_FLAG),
                // A global argument is described where it is declared: at the top.
                _ if a.is_global_set() => root.args.get(&id).map(String::as_str),
                _ if cmd_is_help(path) => Some(HELP_COMMAND_ARG),
                _ => own.args.get(&id).map(String::as_str),
            };
            translate_arg(a, ja)
        });
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let sub = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| {
            if name == "help" {
                // clap's `help` subcommand, and inside it copies of the real subcommands.
                let s = s.about(HELP_COMMAND);
                let s = translate(s, &sub, table, &Table::new());
                s.mut_subcommands(|c| copy_about(c, path, table))
            } else {
                translate(s, &sub, table, texts)
            }
        });
    }
    cmd
}

fn cmd_is_help(path: &str) -> bool {
    path == "help" || path.ends_with(" help")
}

/// The about of a copy inside `help` (e.g. `help check`) is the real subcommand's about.
fn copy_about(c: Command, parent: &str, table: &Table) -> Command {
    let name = c.get_name().to_string();
    let real = if parent.is_empty() {
        name.clone()
    } else {
        format!("{parent} {name}")
    };
    let mut c = match table.get(&real).and_then(|t| t.about.clone()) {
        Some(ja) if c.get_about().is_some() => c.about(ja),
        _ if name == "help" => c.about(HELP_COMMAND),
        _ => c,
    };
    c = c.help_template(TEMPLATE).subcommand_help_heading(COMMANDS);
    c.mut_subcommands(|cc| copy_about(cc, &real, table))
}

/// One argument: its help (short and long) in Japanese, its heading, and clap's annotations
/// written in Japanese into the help.
fn translate_arg(mut a: Arg, ja: Option<&str>) -> Arg {
    let mut notes: Vec<String> = Vec::new();
    if let Some(env) = a.get_env().filter(|_| !a.is_hide_env_set()) {
        notes.push(format!("[環境変数: {}]", env.to_string_lossy()));
        a = a.hide_env(true);
    }
    // clap writes these only for arguments that take a value (`spec_vals`).
    if a.get_num_args().is_some_and(|n| n.takes_values()) {
        let defaults: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if !defaults.is_empty() && !a.is_hide_default_value_set() {
            notes.push(format!("[既定値: {}]", defaults.join(" ")));
            a = a.hide_default_value(true);
        }
        let values: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() && !a.is_hide_possible_values_set() {
            notes.push(format!("[値: {}]", values.join(", ")));
            a = a.hide_possible_values(true);
        }
    }
    let note = |text: &str| {
        if notes.is_empty() {
            text.to_string()
        } else {
            format!("{text} {}", notes.join(" "))
        }
    };
    if let Some(ja) = ja {
        if a.get_help().is_some() {
            a = a.help(note(ja));
        }
        if a.get_long_help().is_some() {
            a = a.long_help(note(ja));
        }
    }
    if a.get_help_heading().is_none() {
        let heading = if a.is_positional() {
            ARGUMENTS
        } else {
            OPTIONS
        };
        a = a.help_heading(heading);
    }
    a
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every text a user can read in `--help`, as (what it is, its English) by the table's key.
    fn english(cmd: &Command, path: &str, out: &mut Vec<(String, String)>) {
        let key = |what: &str| format!("{path:?}.{what}");
        if let Some(t) = cmd.get_about() {
            out.push((key("about"), t.to_string()));
        }
        if let Some(t) = cmd.get_long_about() {
            out.push((key("long_about"), t.to_string()));
        }
        if let Some(t) = cmd.get_after_help() {
            out.push((key("after_help"), t.to_string()));
        }
        for a in cmd.get_arguments() {
            let text = a.get_long_help().or(a.get_help());
            if let Some(t) = text {
                out.push((key(&format!("args.{}", a.get_id())), t.to_string()));
            }
        }
        for s in cmd.get_subcommands() {
            let sub = if path.is_empty() {
                s.get_name().to_string()
            } else {
                format!("{path} {}", s.get_name())
            };
            english(s, &sub, out);
        }
    }

    fn in_table(table: &Table, key: &str) -> bool {
        let (path, what) = key.split_once("\".").unwrap_or_default();
        let path: String = path.trim_start_matches('"').replace("\\\"", "\"");
        let Some(t) = table.get(&path) else {
            return false;
        };
        match what {
            "about" => t.about.is_some(),
            "long_about" => t.long_about.is_some(),
            "after_help" => t.after_help.is_some(),
            _ => what
                .strip_prefix("args.")
                .is_some_and(|id| t.args.contains_key(id)),
        }
    }

    #[test]
    fn every_help_text_of_every_subcommand_and_argument_has_japanese() {
        let table = table().unwrap();
        let mut texts = Vec::new();
        english(&crate::cli::Cli::command(), "", &mut texts);
        assert!(
            texts.len() > 50,
            "the walk found only {} texts",
            texts.len()
        );
        let missing: Vec<String> = texts
            .iter()
            .filter(|(key, _)| !in_table(&table, key))
            .map(|(key, en)| format!("{key}: {en:?}"))
            .collect();
        assert!(
            missing.is_empty(),
            "src/cli/help_ja.yaml has no Japanese for:\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn the_table_names_no_subcommand_or_argument_that_does_not_exist() {
        let table = table().unwrap();
        let mut texts = Vec::new();
        english(&crate::cli::Cli::command(), "", &mut texts);
        let known: std::collections::BTreeSet<&str> = texts.iter().map(|(k, _)| &k[..]).collect();
        let mut stale = Vec::new();
        for (path, t) in &table {
            let key = |what: &str| format!("{path:?}.{what}");
            let mut keys = Vec::new();
            for (what, set) in [
                ("about", t.about.is_some()),
                ("long_about", t.long_about.is_some()),
                ("after_help", t.after_help.is_some()),
            ] {
                if set {
                    keys.push(key(what));
                }
            }
            keys.extend(t.args.keys().map(|id| key(&format!("args.{id}"))));
            stale.extend(keys.into_iter().filter(|k| !known.contains(k.as_str())));
        }
        assert!(
            stale.is_empty(),
            "src/cli/help_ja.yaml translates what no longer exists:\n{}",
            stale.join("\n")
        );
    }

    /// Every help screen, rendered: no English heading or annotation of clap's is left.
    #[test]
    fn every_help_screen_has_japanese_headings_and_annotations() {
        fn screens(cmd: &mut Command, out: &mut Vec<(String, String)>) {
            let name = cmd.get_name().to_string();
            out.push((name.clone(), cmd.render_help().to_string()));
            out.push((name, cmd.render_long_help().to_string()));
            for s in cmd.get_subcommands_mut() {
                screens(s, out);
            }
        }
        let mut cmd = japanese(crate::cli::Cli::command());
        let mut out = Vec::new();
        screens(&mut cmd, &mut out);
        for (name, screen) in &out {
            for english in [
                "Usage:",
                "Options:",
                "Arguments:",
                "Commands:",
                "Print help",
                "Print version",
                "[default:",
                "[possible values:",
                "[env:",
                "Print this message",
            ] {
                assert!(
                    !screen.contains(english),
                    "`{name} --help` still says {english:?}:\n{screen}"
                );
            }
        }
        let top = &out[0].1;
        assert!(top.contains("使い方: trainlab"), "{top}");
        assert!(top.contains("コマンド:"), "{top}");
    }
}
