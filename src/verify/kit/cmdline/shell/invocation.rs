//! [`Invocation`]: one simple command a container runs, its environment, and how a command is
//! shown in messages.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;

use super::super::{basename, is_var_ref};
use super::expand::{expand_word, quote_literal};
use super::syntax::{Connector, Redirect};
use super::var::ShellVar;

/// One simple command a container runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The container it comes from.
    pub container: String,
    /// 0: the container's `command` + `args` themselves; 1: inside its `sh -c`; 2: a shell
    /// inside that, …
    pub depth: usize,
    /// Line in its script where the command starts (1 at depth 0).
    pub line: usize,
    /// The program and its arguments as written, quotes removed, wrappers and assignments
    /// dropped, variable references unexpanded.
    pub argv: Vec<String>,
    /// `argv` with the variables the grader knows expanded and split into words as the shell
    /// does (`torchrun $DIST_ARGS train.py` with `DIST_ARGS="--nnodes 2"` → `torchrun --nnodes 2
    /// train.py`); unknown references stay as written. At depth 0 there is no shell, so this is
    /// `argv`.
    pub expanded: Vec<String>,
    /// `VAR=value` prefixes and `env VAR=value` settings for this command only, in order.
    pub assignments: Vec<(String, String)>,
    /// Wrappers dropped in front of the program (`exec`, `env`, `nohup`, …), by name.
    pub wrappers: Vec<String>,
    pub redirects: Vec<Redirect>,
    /// The body of a `<<` here-document fed to the command.
    pub heredoc: Option<String>,
    /// How it is joined to the previous command of its script (None for the first).
    pub joined_by: Option<Connector>,
    /// Shell variables known just before the command runs.
    pub vars: BTreeMap<String, ShellVar>,
    /// The directory the command runs in, as far as the manifest shows it: the container's
    /// absolute `workingDir`, moved by the `cd`s before it in script order (a relative `cd`
    /// from there, or from `/` when the image's directory is not shown). None once a `cd` goes
    /// where the manifest cannot tell (`cd`, `cd -`, `cd $UNSET`).
    pub cwd: Option<String>,
}

impl Invocation {
    /// The program as written (`/opt/amazon/openmpi/bin/mpirun`).
    pub fn program(&self) -> Option<&str> {
        self.argv.first().map(String::as_str)
    }

    /// The program's file name (`mpirun`).
    pub fn program_name(&self) -> Option<&str> {
        self.program().map(basename)
    }

    /// The value of `name` in the environment the command starts with: its own assignments
    /// (last wins), else an exported shell variable (including the container's literal env).
    pub fn env(&self, name: &str) -> Option<&str> {
        if let Some((_, v)) = self.assignments.iter().rev().find(|(n, _)| n == name) {
            return Some(v);
        }
        self.vars
            .get(name)
            .filter(|v| v.exported)
            .map(|v| v.value.as_str())
    }

    /// The whole environment the command starts with, as far as the manifest shows it:
    /// exported variables (container env, `export`), then its own assignments (e.g. for
    /// [`Torchrun::with_env`](super::super::Torchrun::with_env)).
    pub fn environment(&self) -> BTreeMap<String, String> {
        let mut env: BTreeMap<String, String> = self
            .vars
            .iter()
            .filter(|(_, v)| v.exported)
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect();
        for (k, v) in &self.assignments {
            env.insert(k.clone(), v.clone());
        }
        env
    }

    /// `text` with the known variables expanded (no word splitting); None if any reference
    /// stays unresolved.
    pub fn resolve(&self, text: &str) -> Option<String> {
        let fields = expand_word(&quote_literal(text), &self.vars, false);
        let joined = fields.join(" ");
        (!is_var_ref(&joined)).then_some(joined)
    }

    /// The command quoted for a message (shell quoting, as a learner would type it).
    pub fn display(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// `command` + `args` as written, shortened to `max_chars`, for messages.
pub fn command_line(c: &Container, max_chars: usize) -> String {
    let line = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    if line.chars().count() > max_chars {
        format!("{}…", line.chars().take(max_chars).collect::<String>())
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::kit::cmdline::split_script;

    #[test]
    fn command_line_is_shortened_for_messages() {
        let c: Container = serde_json::from_value(serde_json::json!({
            "name": "launcher", "command": ["python"], "args": ["train.py"],
        }))
        .unwrap();
        assert_eq!(command_line(&c, 160), "python train.py");
        assert_eq!(command_line(&c, 6), "python…");
    }

    #[test]
    fn display_quotes_words() {
        let invs = split_script("echo 'a b' c", "test", &BTreeMap::new()).unwrap();
        assert_eq!(invs[0].display(), "echo 'a b' c");
    }
}
