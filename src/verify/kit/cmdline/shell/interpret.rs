//! One raw command of a script, interpreted as the shell would: its leading assignments, the
//! reserved words around it, `export`, its wrappers, and a nested shell it starts.

use std::collections::BTreeMap;

use super::super::basename;
use super::error::ShellProblem;
use super::expand::expand_word;
use super::invocation::Invocation;
use super::lexer::{Lexer, RawCommand, Word};
use super::nested_shell::{shell_script, SHELLS};
use super::var::ShellVar;
use super::wrappers::strip_wrappers;

/// How many nested shells (`sh -c "bash -c '…'"`) are unwrapped before giving up.
pub const MAX_SHELL_DEPTH: usize = 4;

pub(super) struct Ctx<'a> {
    pub(super) container: &'a str,
    pub(super) depth: usize,
}

impl Ctx<'_> {
    pub(super) fn script(
        &self,
        script: &str,
        vars: &mut BTreeMap<String, ShellVar>,
        out: &mut Vec<Invocation>,
    ) -> Result<(), ShellProblem> {
        if self.depth > MAX_SHELL_DEPTH {
            return Err(ShellProblem::TooDeep {
                limit: MAX_SHELL_DEPTH,
            });
        }
        for raw in Lexer::new(script).commands()? {
            self.command(raw, vars, out)?;
        }
        Ok(())
    }

    pub(super) fn command(
        &self,
        raw: RawCommand,
        vars: &mut BTreeMap<String, ShellVar>,
        out: &mut Vec<Invocation>,
    ) -> Result<(), ShellProblem> {
        let mut words = raw.words;
        let shell = self.depth > 0;
        if shell {
            strip_reserved(&mut words);
        }
        // Leading assignments (only a shell reads them; at depth 0 `A=1` is a program name).
        // Each value sees the ones before it, as the shell assigns left to right.
        let mut assignments: Vec<(String, String, Option<Vec<String>>)> = Vec::new();
        if shell {
            let mut seen = vars.clone();
            while let Some(first) = words.first() {
                let Some((name, value_raw)) = first.assignment() else {
                    break;
                };
                let (value, array) = match &first.array {
                    Some(items) => {
                        let elems: Vec<String> = items
                            .iter()
                            .flat_map(|w| expand_word(&w.raw, &seen, true))
                            .collect();
                        (elems.join(" "), Some(elems))
                    }
                    None => (expand_word(value_raw, &seen, false).join(" "), None),
                };
                let exported = seen.get(name).is_some_and(|v| v.exported);
                seen.insert(
                    name.to_string(),
                    ShellVar {
                        value: value.clone(),
                        array: array.clone(),
                        exported,
                    },
                );
                assignments.push((name.to_string(), value, array));
                words.remove(0);
            }
        }
        if words.is_empty() {
            // `NP=16` alone sets shell variables (exported ones stay exported).
            for (name, value, array) in assignments {
                let exported = vars.get(&name).is_some_and(|v| v.exported);
                vars.insert(
                    name,
                    ShellVar {
                        value,
                        array,
                        exported,
                    },
                );
            }
            return Ok(());
        }
        let mut argv: Vec<Word> = words;
        let mut env_assignments: Vec<(String, String)> =
            assignments.into_iter().map(|(n, v, _)| (n, v)).collect();
        let mut wrappers = Vec::new();
        strip_wrappers(&mut argv, &mut env_assignments, &mut wrappers, vars, shell);
        if argv.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = argv.iter().map(|w| w.text.clone()).collect();
        let expanded: Vec<String> = if shell {
            argv.iter()
                .flat_map(|w| expand_word(&w.raw, vars, true))
                .collect()
        } else {
            texts.clone()
        };

        if shell && texts.first().map(|t| basename(t)) == Some("export") {
            export(argv.get(1..).unwrap_or_default(), vars);
            return Ok(());
        }

        if let Some(first) = expanded.first() {
            if SHELLS.contains(&basename(first)) {
                if let Some(script) = shell_script(&expanded)? {
                    // The child shell sees exported variables and this command's assignments.
                    let mut child: BTreeMap<String, ShellVar> = vars
                        .iter()
                        .filter(|(_, v)| v.exported)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    for (n, v) in &env_assignments {
                        child.insert(
                            n.clone(),
                            ShellVar {
                                value: v.clone(),
                                array: None,
                                exported: true,
                            },
                        );
                    }
                    let inner = Ctx {
                        container: self.container,
                        depth: self.depth + 1,
                    };
                    return inner.script(&script, &mut child, out);
                }
            }
        }

        out.push(Invocation {
            container: self.container.to_string(),
            depth: self.depth,
            line: raw.line,
            argv: texts,
            expanded,
            assignments: env_assignments,
            wrappers,
            redirects: raw.redirects,
            heredoc: raw.heredoc,
            joined_by: raw.joined_by,
            vars: vars.clone(),
            cwd: None,
        });
        Ok(())
    }
}

/// `export A=1 B` (also `export -p`, `export -n`): sets and marks variables exported.
fn export(args: &[Word], vars: &mut BTreeMap<String, ShellVar>) {
    for w in args {
        if w.text.starts_with('-') {
            continue;
        }
        match w.assignment() {
            Some((name, value_raw)) => {
                let value = expand_word(value_raw, vars, false).join(" ");
                vars.insert(
                    name.to_string(),
                    ShellVar {
                        value,
                        array: None,
                        exported: true,
                    },
                );
            }
            None => {
                if let Some(v) = vars.get_mut(&w.text) {
                    v.exported = true;
                }
            }
        }
    }
}

/// Reserved words that only open or close a compound command: the command inside still runs.
fn strip_reserved(words: &mut Vec<Word>) {
    const OPENERS: &[&str] = &[
        "if", "then", "else", "elif", "do", "while", "until", "!", "{", "fi", "done", "}", "esac",
    ];
    while words
        .first()
        .is_some_and(|w| !w.quoted && OPENERS.contains(&w.text.as_str()))
    {
        words.remove(0);
    }
}
