//! From a container's `command` + `args` to the commands it runs.
//!
//! Order of evaluation, as in a pod:
//! 1. The kubelet expands `$(VAR)` in `command`/`args` from the container's `env` (kubelet
//!    `third_party/forked/golang/expansion`: `$$` is a literal `$`, an undefined `$(VAR)` stays as
//!    written). Only literal `env[].value`s are known here; `valueFrom` values are not.
//! 2. If the program is a shell with `-c` (`sh -c`, `bash -lc`, `/bin/sh -ec`, …) its script is
//!    split into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines and `( )`, with POSIX
//!    quoting (single, double, backslash, backslash-newline), comments, `$(…)`, `${…}` and
//!    backticks kept whole, redirections set aside and here-documents captured. A `-c` script
//!    that runs another shell is unwrapped again, up to [`MAX_SHELL_DEPTH`] levels.
//! 3. Each command drops its leading `VAR=value` assignments and wrappers (`exec`, `env …`,
//!    `time`, `nohup`, `nice`, `stdbuf`, `timeout`, `neuron_parallel_compile`), recording them
//!    (see `strip_wrappers` for each).
//!
//! Shell variables are tracked in script order (container env, then `VAR=value` and
//! `export VAR=value` commands) without following control flow (`if`/`case` branches all count),
//! and `$VAR` references are resolved only when their value is literal in the manifest; anything
//! else stays as text, recognisable with [`is_var_ref`](super::is_var_ref).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;

use super::basename;

mod expand;
mod lexer;

pub(crate) use expand::expand_k8s;
use expand::{expand_word, quote_literal};
use lexer::{Lexer, RawCommand, Word};

/// How many nested shells (`sh -c "bash -c '…'"`) are unwrapped before giving up.
pub const MAX_SHELL_DEPTH: usize = 4;

/// Programs whose `-c SCRIPT` is a shell script.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "ash",
    "zsh",
    "ksh",
    "mksh",
    "busybox-sh",
];

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

/// How a command is joined to the one before it in its script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// `;`, a newline, or `( )`.
    Sequence,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `|` or `|&`
    Pipe,
    /// After `cmd &`.
    Background,
}

/// A redirection set aside from a command: `> /tmp/log`, `2>&1`, `<<EOF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2` in `2>&1`).
    pub fd: Option<u32>,
    /// `>`, `>>`, `<`, `>&`, `&>`, `<<`, `<<-`, `<<<`, …
    pub op: String,
    /// The file name, fd, or here-document delimiter, quotes removed.
    pub target: String,
}

/// A shell variable as known at some point of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellVar {
    /// The value with every resolvable reference expanded; references to unknown variables stay
    /// as written (`--nnodes $NNODES`).
    pub value: String,
    /// The elements of an array assignment `A=(x y)`.
    pub array: Option<Vec<String>>,
    /// In the environment of commands the shell starts (container env, `export`).
    pub exported: bool,
}

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
    /// [`Torchrun::with_env`](super::Torchrun::with_env)).
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
        (!super::is_var_ref(&joined)).then_some(joined)
    }

    /// The command quoted for a message (shell quoting, as a learner would type it).
    pub fn display(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// The commands a container runs, in order, with nested shells unwrapped.
pub fn invocations(c: &Container) -> Result<Vec<Invocation>, ShellError> {
    let env = literal_env(c);
    let known: BTreeMap<String, String> = env.iter().cloned().collect();
    let argv: Vec<String> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(|w| expand_k8s(w, &known))
        .collect();
    let vars: BTreeMap<String, ShellVar> = env
        .into_iter()
        .map(|(name, value)| {
            let var = ShellVar {
                value,
                array: None,
                exported: true,
            };
            (name, var)
        })
        .collect();
    let mut out = Vec::new();
    let ctx = Ctx {
        container: &c.name,
        depth: 0,
    };
    let words: Vec<Word> = argv.iter().map(|w| Word::literal(w)).collect();
    let raw = RawCommand {
        words,
        redirects: Vec::new(),
        heredoc: None,
        line: 1,
        joined_by: None,
    };
    let mut vars = vars;
    ctx.command(raw, &mut vars, &mut out)
        .map_err(|problem| ShellError {
            container: c.name.clone(),
            problem,
        })?;
    follow_cd(c, &mut out);
    Ok(out)
}

/// Sets each invocation's [`Invocation::cwd`] from the container's `workingDir` and the `cd`s
/// before it. Control flow is not followed (as for variables): a `cd` counts from where it
/// stands in the script.
fn follow_cd(c: &Container, out: &mut [Invocation]) {
    let mut cwd: Option<String> = c
        .working_dir
        .as_deref()
        .filter(|w| w.starts_with('/'))
        .map(super::super::k8s::mounts::clean);
    for inv in out.iter_mut() {
        inv.cwd = cwd.clone();
        if inv.program() != Some("cd") {
            continue;
        }
        let target = inv.expanded.iter().skip(1).find(|w| !w.starts_with('-'));
        cwd = match target {
            Some(dir) if super::is_var_ref(dir) || dir == "-" || dir.starts_with('~') => None,
            Some(dir) if dir.starts_with('/') => Some(super::super::k8s::mounts::clean(dir)),
            Some(dir) => {
                let base = cwd.as_deref().unwrap_or("/");
                Some(super::super::k8s::mounts::clean(&format!("{base}/{dir}")))
            }
            // `cd` alone goes home, which the manifest does not show.
            None => None,
        };
    }
}

/// Splits a shell script (e.g. a ConfigMap'd entrypoint, or a `-c` string) into invocations.
/// `origin` names it in errors; `vars` are the variables known before it runs.
pub fn split_script(
    script: &str,
    origin: &str,
    vars: &BTreeMap<String, ShellVar>,
) -> Result<Vec<Invocation>, ShellError> {
    let ctx = Ctx {
        container: origin,
        depth: 1,
    };
    let mut vars = vars.clone();
    let mut out = Vec::new();
    ctx.script(script, &mut vars, &mut out)
        .map_err(|problem| ShellError {
            container: origin.to_string(),
            problem,
        })?;
    Ok(out)
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

// ---------------------------------------------------------------------------------------------
// Container environment.

/// An environment variable as the container sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvLookup {
    Absent,
    Value(String),
    /// Set from something this grader cannot read (a Secret, a field, a missing ConfigMap); the
    /// text says what.
    Unresolved(String),
}

/// Looks `name` up in a container's environment with the Kubernetes precedence (core/v1
/// `Container.env`/`envFrom` docs: `env` wins over `envFrom`; among `envFrom` sources the last
/// one wins; within `env` the last entry of a name wins). `config_map(name, key)` reads a
/// ConfigMap key the caller has: `Value` if present, `Absent` if the map lacks the key,
/// `Unresolved` if the map cannot be read.
pub fn container_env(
    c: &Container,
    name: &str,
    config_map: &dyn Fn(&str, &str) -> EnvLookup,
) -> EnvLookup {
    if let Some(e) = c.env.iter().flatten().rev().find(|e| e.name == name) {
        let Some(from) = &e.value_from else {
            return EnvLookup::Value(e.value.clone().unwrap_or_default());
        };
        if let Some(r) = &from.config_map_key_ref {
            return match config_map(&r.name, &r.key) {
                // An optional key that is missing leaves the variable unset; otherwise the
                // kubelet refuses to start the container (CreateContainerConfigError).
                EnvLookup::Absent if r.optional == Some(true) => EnvLookup::Absent,
                EnvLookup::Absent => {
                    EnvLookup::Unresolved(format!("ConfigMap {} has no key {}", r.name, r.key))
                }
                found => found,
            };
        }
        if let Some(r) = &from.secret_key_ref {
            return EnvLookup::Unresolved(format!("set from Secret {}", r.name));
        }
        return EnvLookup::Unresolved("set from a field of the pod or container".into());
    }
    for src in c.env_from.iter().flatten().rev() {
        let prefix = src.prefix.as_deref().unwrap_or("");
        let Some(key) = name.strip_prefix(prefix) else {
            continue;
        };
        if let Some(r) = &src.config_map_ref {
            match config_map(&r.name, key) {
                EnvLookup::Absent => {}
                found => return found,
            }
        }
        if let Some(s) = &src.secret_ref {
            return EnvLookup::Unresolved(format!("may come from Secret {}", s.name));
        }
    }
    EnvLookup::Absent
}

/// The container's literal `env[].value`s, each expanded with the ones before it (the kubelet
/// expands `$(VAR)` in env values from previously defined variables).
fn literal_env(c: &Container) -> Vec<(String, String)> {
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for e in c.env.iter().flatten() {
        if e.value_from.is_some() {
            // Present at runtime with a value we cannot see: forget any earlier literal.
            known.remove(&e.name);
            continue;
        }
        let value = expand_k8s(e.value.as_deref().unwrap_or(""), &known);
        if !known.contains_key(&e.name) {
            order.push(e.name.clone());
        }
        known.insert(e.name.clone(), value);
    }
    order
        .into_iter()
        .filter_map(|n| known.get(&n).map(|v| (n.clone(), v.clone())))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// From raw commands to invocations.

struct Ctx<'a> {
    container: &'a str,
    depth: usize,
}

impl Ctx<'_> {
    fn script(
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

    fn command(
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

/// Drops wrappers in front of the program, collecting `env`'s assignments.
fn strip_wrappers(
    argv: &mut Vec<Word>,
    assignments: &mut Vec<(String, String)>,
    wrappers: &mut Vec<String>,
    vars: &BTreeMap<String, ShellVar>,
    shell: bool,
) {
    loop {
        let Some(name) = argv.first().map(|w| basename(&w.text).to_string()) else {
            return;
        };
        // How many words the wrapper and its options take, including the wrapper itself.
        let skip = match name.as_str() {
            // POSIX exec: `exec [-cl] [-a name] cmd`.
            "exec" if shell => skip_options(argv, &["a"], 0),
            // GNU time / bash's `time -p`.
            "time" => skip_options(argv, &["f", "o", "format", "output"], 0),
            // `neuron_parallel_compile <run commands>` prefixes the training command, running it
            // as a short graph-extraction trial (aws-neuron-sdk v2.26.1 `frameworks/torch/
            // torch-neuronx/api-reference-guide/training/pytorch-neuron-parallel-compile.rst`).
            // Its own `--command …` and `--analyze-*` options are not skipped here.
            "nohup" | "neuron_parallel_compile" => 1,
            // GNU nice: `-n N`, `--adjustment=N`, legacy `-N`.
            "nice" => skip_options(argv, &["n", "adjustment"], 0),
            // GNU stdbuf: `-oL`, `-o L`, `--output=L`.
            "stdbuf" => skip_options(argv, &["i", "o", "e", "input", "output", "error"], 0),
            // GNU timeout: options, then a DURATION operand.
            "timeout" => skip_options(argv, &["s", "k", "signal", "kill-after"], 1),
            "env" => {
                // GNU env: `-i`, `-u NAME`, `-C DIR`, then NAME=VALUE…, then the command.
                let mut i =
                    skip_options(argv, &["u", "C", "unset", "chdir", "S", "split-string"], 0);
                while let Some((n, v)) = argv.get(i).and_then(Word::assignment) {
                    let value = if shell {
                        expand_word(v, vars, false).join(" ")
                    } else {
                        v.to_string()
                    };
                    assignments.push((n.to_string(), value));
                    i += 1;
                }
                i
            }
            _ => return,
        };
        if skip >= argv.len() {
            // The wrapper runs nothing (`env` alone prints the environment): keep it as the
            // program.
            return;
        }
        wrappers.push(name);
        argv.drain(..skip);
    }
}

/// Index of the first word after the options of `argv[0]` (and `operands` more words).
/// `with_value` lists options that take the next word when not written `--x=v` / `-xV`.
fn skip_options(argv: &[Word], with_value: &[&str], operands: usize) -> usize {
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        let name = t.trim_start_matches('-');
        let long = t.starts_with("--");
        let takes = if long {
            !name.contains('=') && with_value.contains(&name)
        } else {
            // `-n 5` takes the next word; `-n5`/`-oL` carry it.
            name.chars().count() == 1 && with_value.contains(&name)
        };
        i += if takes { 2 } else { 1 };
    }
    i + operands
}

/// The `-c` script of a shell command line, or None when it runs a file or stdin.
fn shell_script(argv: &[String]) -> Result<Option<String>, ShellProblem> {
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

#[cfg(test)]
mod tests {
    use super::expand::expand_word;
    use super::*;

    fn container(command: &[&str], args: &[&str], env: &[(&str, &str)]) -> Container {
        let v = serde_json::json!({
            "name": "launcher",
            "command": command,
            "args": args,
            "env": env.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
        });
        serde_json::from_value(v).expect("container")
    }

    fn script(s: &str) -> Vec<Invocation> {
        split_script(s, "test", &BTreeMap::new()).expect("splits")
    }

    fn argvs(invs: &[Invocation]) -> Vec<Vec<&str>> {
        invs.iter()
            .map(|i| i.argv.iter().map(String::as_str).collect())
            .collect()
    }

    #[test]
    fn plain_command_and_args_are_one_invocation_without_a_shell() {
        let c = container(&["torchrun"], &["--nnodes", "$NNODES", "train.py"], &[]);
        let invs = invocations(&c).unwrap();
        assert_eq!(
            argvs(&invs),
            vec![vec!["torchrun", "--nnodes", "$NNODES", "train.py"]]
        );
        // No shell: nothing splits or expands `$NNODES`, and `A=1` would be a program name.
        assert_eq!(invs[0].expanded, invs[0].argv);
        assert_eq!(invs[0].depth, 0);
        assert_eq!(invs[0].container, "launcher");
    }

    #[test]
    fn sh_c_scripts_split_at_every_separator() {
        let invs = script("set -e; echo a && mpirun -np 2 ./x || true | tee log & wait\nls (pwd)");
        assert_eq!(
            argvs(&invs),
            vec![
                vec!["set", "-e"],
                vec!["echo", "a"],
                vec!["mpirun", "-np", "2", "./x"],
                vec!["true"],
                vec!["tee", "log"],
                vec!["wait"],
                vec!["ls"],
                vec!["pwd"],
            ]
        );
        let joins: Vec<Option<Connector>> = invs.iter().map(|i| i.joined_by).collect();
        assert_eq!(
            joins,
            vec![
                None,
                Some(Connector::Sequence),
                Some(Connector::And),
                Some(Connector::Or),
                Some(Connector::Pipe),
                Some(Connector::Background),
                Some(Connector::Sequence),
                Some(Connector::Sequence),
            ]
        );
    }

    #[test]
    fn every_shell_spelling_is_unwrapped() {
        for command in [
            &["sh", "-c"][..],
            &["bash", "-c"],
            &["bash", "-lc"],
            &["/bin/sh", "-ec"],
            &["/bin/bash", "-o", "pipefail", "-c"],
            &["bash", "--login", "-c"],
            &["/usr/bin/env", "bash", "-c"],
        ] {
            let c = container(command, &["echo hi; torchrun train.py"], &[]);
            let invs = invocations(&c).unwrap();
            assert_eq!(
                argvs(&invs),
                vec![vec!["echo", "hi"], vec!["torchrun", "train.py"]],
                "{command:?}"
            );
            assert!(invs.iter().all(|i| i.depth == 1));
        }
        // The script may also come from args.
        let c = container(&["/bin/bash"], &["-c", "torchrun train.py"], &[]);
        assert_eq!(
            argvs(&invocations(&c).unwrap()),
            vec![vec!["torchrun", "train.py"]]
        );
    }

    #[test]
    fn a_shell_running_a_file_is_kept_as_is() {
        let c = container(&["bash", "/scripts/run.sh"], &[], &[]);
        assert_eq!(
            argvs(&invocations(&c).unwrap()),
            vec![vec!["bash", "/scripts/run.sh"]]
        );
    }

    #[test]
    fn quoting_follows_posix_rules() {
        let invs = script(
            r#"python train.py --name 'a b' --msg "say \"hi\" \$x" --path a\ b --empty '' --mix 'it'"'"'s'"#,
        );
        assert_eq!(
            argvs(&invs),
            vec![vec![
                "python",
                "train.py",
                "--name",
                "a b",
                "--msg",
                r#"say "hi" $x"#,
                "--path",
                "a b",
                "--empty",
                "",
                "--mix",
                "it's"
            ]]
        );
        // Separators inside quotes are text.
        let invs = script("echo 'a; b && c' \"d | e\"");
        assert_eq!(argvs(&invs), vec![vec!["echo", "a; b && c", "d | e"]]);
    }

    #[test]
    fn backslash_newline_continues_a_command() {
        let invs = script("mpirun \\\n  -np \"16\" \\\n  --bind-to=none ./pi\necho done");
        assert_eq!(
            argvs(&invs),
            vec![
                vec!["mpirun", "-np", "16", "--bind-to=none", "./pi"],
                vec!["echo", "done"]
            ]
        );
        assert_eq!(invs[0].line, 1);
        assert_eq!(invs[1].line, 4);
    }

    #[test]
    fn comments_are_dropped_but_hash_inside_words_is_text() {
        let invs = script("# start\ntorchrun a#b.py # the script\n");
        assert_eq!(argvs(&invs), vec![vec!["torchrun", "a#b.py"]]);
    }

    #[test]
    fn substitutions_stay_whole_words() {
        let invs =
            script("torchrun --master_addr=$(hostname -i) --x ${A:-b c} --y `echo a b` t.py");
        assert_eq!(
            argvs(&invs),
            vec![vec![
                "torchrun",
                "--master_addr=$(hostname -i)",
                "--x",
                "${A:-b c}",
                "--y",
                "`echo a b`",
                "t.py"
            ]]
        );
        let invs = script("echo \"$(cat \"/etc/x y\")\" ; ls");
        assert_eq!(
            argvs(&invs),
            vec![vec!["echo", "$(cat \"/etc/x y\")"], vec!["ls"]]
        );
    }

    #[test]
    fn redirections_are_set_aside() {
        let invs = script("torchrun train.py > /tmp/log 2>&1 &> all; cat < in.txt");
        assert_eq!(
            argvs(&invs),
            vec![vec!["torchrun", "train.py"], vec!["cat"]]
        );
        let r = &invs[0].redirects;
        assert_eq!(r.len(), 3);
        assert_eq!(
            r[1],
            Redirect {
                fd: Some(2),
                op: ">&".into(),
                target: "1".into()
            }
        );
        assert_eq!(r[2].op, "&>");
        assert_eq!(invs[1].redirects[0].op, "<");
    }

    #[test]
    fn heredocs_are_captured_for_the_command() {
        let s = "cat > /tmp/ds.json <<'EOF'\n{\"zero_optimization\": {\"stage\": 3}}\nEOF\ndeepspeed train.py --deepspeed /tmp/ds.json";
        let invs = script(s);
        assert_eq!(
            argvs(&invs),
            vec![
                vec!["cat"],
                vec!["deepspeed", "train.py", "--deepspeed", "/tmp/ds.json"]
            ]
        );
        assert_eq!(
            invs[0].heredoc.as_deref(),
            Some("{\"zero_optimization\": {\"stage\": 3}}\n")
        );
        assert_eq!(invs[0].redirects[0].target, "/tmp/ds.json");
        // `<<-` strips leading tabs; a missing delimiter ends at the end of the script.
        let invs = script("cat <<-END\n\tline\n\tEND\nls");
        assert_eq!(invs[0].heredoc.as_deref(), Some("line\n"));
        assert_eq!(argvs(&invs)[1], vec!["ls"]);
        let invs = script("cat <<END\nunterminated");
        assert_eq!(invs[0].heredoc.as_deref(), Some("unterminated\n"));
    }

    #[test]
    fn assignments_and_wrappers_are_dropped_and_kept() {
        let invs = script(
            "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 exec env -u X NCCL_DEBUG=INFO nohup time -p mpirun -np 2 ./a",
        );
        let inv = &invs[0];
        assert_eq!(inv.argv, vec!["mpirun", "-np", "2", "./a"]);
        assert_eq!(
            inv.assignments,
            vec![
                ("OMPI_ALLOW_RUN_AS_ROOT".to_string(), "1".to_string()),
                (
                    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".to_string(),
                    "1".to_string()
                ),
                ("NCCL_DEBUG".to_string(), "INFO".to_string()),
            ]
        );
        assert_eq!(inv.wrappers, vec!["exec", "env", "nohup", "time"]);
        assert_eq!(inv.env("NCCL_DEBUG"), Some("INFO"));
        assert_eq!(inv.program_name(), Some("mpirun"));

        let invs =
            script("timeout -s KILL 2h nice -n 5 stdbuf -oL neuron_parallel_compile torchrun t.py");
        assert_eq!(invs[0].argv, vec!["torchrun", "t.py"]);
        assert_eq!(
            invs[0].wrappers,
            vec!["timeout", "nice", "stdbuf", "neuron_parallel_compile"]
        );
        // `env` alone runs nothing else: it is the program.
        assert_eq!(argvs(&script("env")), vec![vec!["env"]]);
        // A quoted assignment is a command name, as in sh.
        assert_eq!(argvs(&script("'A=1' x")), vec![vec!["A=1", "x"]]);
    }

    #[test]
    fn env_wrapper_works_at_depth_zero_too() {
        let c = container(&["env", "FI_PROVIDER=efa", "torchrun"], &["t.py"], &[]);
        let invs = invocations(&c).unwrap();
        assert_eq!(invs[0].argv, vec!["torchrun", "t.py"]);
        assert_eq!(invs[0].env("FI_PROVIDER"), Some("efa"));
    }

    #[test]
    fn control_keywords_do_not_hide_the_command() {
        let invs = script(
            "if [ \"$RANK\" = 0 ]; then\n  torchrun train.py\nelse\n  sleep 1\nfi\nwhile true; do sleep 5; done",
        );
        assert_eq!(
            argvs(&invs),
            vec![
                vec!["[", "$RANK", "=", "0", "]"],
                vec!["torchrun", "train.py"],
                vec!["sleep", "1"],
                vec!["true"],
                vec!["sleep", "5"],
            ]
        );
        let invs = script("{ torchrun a.py; }");
        assert_eq!(argvs(&invs), vec![vec!["torchrun", "a.py"]]);
    }

    #[test]
    fn variables_resolve_from_env_and_earlier_assignments() {
        let c = container(
            &["sh", "-c"],
            &["NP=16; export FI_PROVIDER=efa; mpirun -np $NP -x FI_PROVIDER ./a --gpus ${GPUS} --n $UNKNOWN"],
            &[("GPUS", "8")],
        );
        let invs = invocations(&c).unwrap();
        let inv = &invs[0];
        assert_eq!(inv.argv[2], "$NP");
        assert_eq!(
            inv.expanded,
            vec![
                "mpirun",
                "-np",
                "16",
                "-x",
                "FI_PROVIDER",
                "./a",
                "--gpus",
                "8",
                "--n",
                "$UNKNOWN"
            ]
        );
        assert_eq!(inv.resolve("$NP"), Some("16".into()));
        assert_eq!(inv.resolve("${GPUS}x"), Some("8x".into()));
        assert_eq!(inv.resolve("$UNKNOWN"), None);
        // Exported and container variables are in the command's environment; NP is not.
        assert_eq!(inv.env("FI_PROVIDER"), Some("efa"));
        assert_eq!(inv.env("GPUS"), Some("8"));
        assert_eq!(inv.env("NP"), None);
        let env = inv.environment();
        assert_eq!(env.get("FI_PROVIDER").map(String::as_str), Some("efa"));
        assert_eq!(env.get("GPUS").map(String::as_str), Some("8"));
        assert!(!env.contains_key("NP"));
        assert_eq!(inv.vars.get("NP").map(|v| v.value.as_str()), Some("16"));
    }

    #[test]
    fn unquoted_expansions_split_into_words() {
        let invs = script(
            "GPUS=8\nDIST_ARGS=\"--nproc_per_node $GPUS --nnodes $NNODES\"\ntorchrun $DIST_ARGS pretrain_gpt.py \"$DIST_ARGS\"",
        );
        assert_eq!(
            invs[0].expanded,
            vec![
                "torchrun",
                "--nproc_per_node",
                "8",
                "--nnodes",
                "$NNODES",
                "pretrain_gpt.py",
                "--nproc_per_node 8 --nnodes $NNODES"
            ]
        );
        // An unquoted empty expansion disappears; a quoted one stays an empty word.
        let invs = script("E=\nx $E \"$E\" y");
        assert_eq!(invs[0].expanded, vec!["x", "", "y"]);
    }

    #[test]
    fn arrays_as_in_megatron_example_scripts() {
        let invs = script(
            "DISTRIBUTED_ARGS=(\n  --nproc_per_node 8   # per node\n  --nnodes $NUM_NODES\n)\ntorchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \"${MODEL[@]}\"",
        );
        assert_eq!(
            invs[0].expanded,
            vec![
                "torchrun",
                "--nproc_per_node",
                "8",
                "--nnodes",
                "$NUM_NODES",
                "pretrain_gpt.py",
                "${MODEL[@]}"
            ]
        );
        assert_eq!(invs.len(), 1);
    }

    #[test]
    fn braced_defaults() {
        let mut vars = BTreeMap::new();
        vars.insert(
            "EMPTY".to_string(),
            ShellVar {
                value: String::new(),
                array: None,
                exported: false,
            },
        );
        vars.insert(
            "N".to_string(),
            ShellVar {
                value: "4".into(),
                array: None,
                exported: false,
            },
        );
        let invs = split_script(
            "x ${N:-2} ${EMPTY:-3} ${EMPTY-5} ${MISSING:-1} ${N#x}",
            "t",
            &vars,
        )
        .unwrap();
        assert_eq!(
            invs[0].expanded,
            vec!["x", "4", "3", "${MISSING:-1}", "${N#x}"]
        );
        // `${EMPTY-5}` is set-but-empty: nothing, and unquoted it vanishes.
    }

    #[test]
    fn kubernetes_expansion_comes_first() {
        let env: BTreeMap<String, String> = [("NP".to_string(), "16".to_string())].into();
        assert_eq!(expand_k8s("$(NP)", &env), "16");
        assert_eq!(expand_k8s("$$(NP)", &env), "$(NP)");
        assert_eq!(expand_k8s("$(OTHER)", &env), "$(OTHER)");
        assert_eq!(expand_k8s("a$b$", &env), "a$b$");
        assert_eq!(expand_k8s("$(unterminated", &env), "$(unterminated");
        let c = container(&["mpirun"], &["-np", "$(NP)", "/app"], &[("NP", "16")]);
        assert_eq!(invocations(&c).unwrap()[0].argv[2], "16");
        // Env values expand from earlier env entries.
        let c = container(
            &["sh", "-c", "echo $B"],
            &[],
            &[("A", "x"), ("B", "$(A)-y")],
        );
        assert_eq!(invocations(&c).unwrap()[0].expanded, vec!["echo", "x-y"]);
    }

    #[test]
    fn nested_shells_are_unwrapped_up_to_the_limit() {
        let invs = script("bash -c \"sh -c 'torchrun t.py; echo ok'\"");
        assert_eq!(
            argvs(&invs),
            vec![vec!["torchrun", "t.py"], vec!["echo", "ok"]]
        );
        assert_eq!(invs[0].depth, 3);
        // The container's `sh -c` is depth 1; each further `sh -c` adds one.
        let nested = |extra: usize| {
            let mut s = "torchrun t.py".to_string();
            for _ in 0..extra {
                s = format!("sh -c {}", shlex::try_quote(&s).unwrap());
            }
            invocations(&container(&["sh", "-c"], &[&s], &[]))
        };
        let deepest = nested(MAX_SHELL_DEPTH - 1).unwrap();
        assert_eq!(deepest[0].depth, MAX_SHELL_DEPTH);
        assert_eq!(deepest[0].argv, vec!["torchrun", "t.py"]);
        let e = nested(MAX_SHELL_DEPTH).unwrap_err();
        assert_eq!(
            e.problem,
            ShellProblem::TooDeep {
                limit: MAX_SHELL_DEPTH
            }
        );
        assert!(e.to_string().starts_with("container launcher:"), "{e}");
    }

    #[test]
    fn child_shells_see_only_exported_variables() {
        let invs = script("A=1; export B=2; C=3 sh -c 'x $A $B $C'");
        assert_eq!(invs[0].expanded, vec!["x", "$A", "2", "3"]);
    }

    #[test]
    fn unbalanced_quotes_are_typed_errors() {
        let c = container(&["sh", "-c"], &["echo ok\ntorchrun 'train.py --x"], &[]);
        let e = invocations(&c).unwrap_err();
        assert_eq!(e.container, "launcher");
        assert_eq!(
            e.problem,
            ShellProblem::UnclosedQuote {
                quote: '\'',
                line: 2
            }
        );
        assert_eq!(
            e.to_string(),
            "container launcher: the ' quote opened on line 2 of the shell script is never closed"
        );
        for (s, want) in [
            (
                "echo \"abc",
                ShellProblem::UnclosedQuote {
                    quote: '"',
                    line: 1,
                },
            ),
            (
                "echo $(date",
                ShellProblem::UnclosedSubstitution {
                    open: "$(",
                    line: 1,
                },
            ),
            (
                "echo ${A",
                ShellProblem::UnclosedSubstitution {
                    open: "${",
                    line: 1,
                },
            ),
            (
                "echo `date",
                ShellProblem::UnclosedSubstitution { open: "`", line: 1 },
            ),
            (
                "A=(1 2",
                ShellProblem::UnclosedSubstitution {
                    open: "array (",
                    line: 1,
                },
            ),
            (
                "echo >",
                ShellProblem::RedirectWithoutTarget {
                    op: ">".into(),
                    line: 1,
                },
            ),
        ] {
            assert_eq!(
                split_script(s, "t", &BTreeMap::new()).unwrap_err().problem,
                want,
                "{s}"
            );
        }
        let c = container(&["bash", "-c"], &[], &[]);
        assert_eq!(
            invocations(&c).unwrap_err().problem,
            ShellProblem::MissingScript {
                shell: "bash".into()
            }
        );
    }

    #[test]
    fn never_panics_on_odd_input() {
        for s in [
            "",
            "\\",
            "$",
            "${",
            "$(",
            "`",
            "'",
            "\"",
            "<<",
            "2>",
            "a=(",
            "((",
            "))",
            ";;",
            "&&&",
            "|||",
            "é$é",
            "x=${",
            "$((1+2))",
            "echo ${A[@",
            "\"$(\"",
            "cat <<'",
            "\u{0}",
            "#",
            "a\\\n",
            "if",
            "!",
            "{",
            "}",
        ] {
            let _ = split_script(s, "t", &BTreeMap::new());
        }
        let vars = BTreeMap::new();
        for s in ["$", "${}", "${A", "\\", "\"", "'", "$1", "${A:-}", "`x"] {
            let _ = expand_word(s, &vars, true);
        }
    }

    /// A small deterministic generator, so the test needs no crate and always runs the same.
    fn scripts(n: usize) -> Vec<String> {
        const PIECES: &[&str] = &[
            " ",
            "\n",
            "\\",
            "\\\n",
            "'",
            "\"",
            "$",
            "${",
            "}",
            "$(",
            ")",
            "(",
            "`",
            ";",
            "&",
            "&&",
            "|",
            "||",
            "<",
            ">",
            "2>&1",
            "<<",
            "<<-",
            "EOF",
            "#",
            "=",
            "A=",
            "A=(",
            "x",
            "sh -c ",
            "bash -lc ",
            "exec ",
            "env ",
            "-c",
            "--",
            "é",
            "[@]",
            ":-",
            "if ",
            "then ",
            "fi",
            "{",
            "\t",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..n)
            .map(|_| {
                let len = (next() % 24) as usize;
                (0..len)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn random_scripts_never_panic_and_stay_bounded() {
        let vars = BTreeMap::new();
        for s in scripts(4000) {
            if let Ok(invs) = split_script(&s, "fuzz", &vars) {
                for inv in &invs {
                    assert!(inv.depth <= MAX_SHELL_DEPTH, "{s:?}");
                    let _ = super::super::Launch::chain(&inv.expanded);
                    let _ = super::super::Mpirun::find(&inv.expanded);
                    let a = super::super::Args::new(inv.expanded.iter().cloned());
                    let _ = super::super::ParallelPlan::from_args(&a);
                    let _ = super::super::HfTrainingArgs::parse(&a);
                    let _ = super::super::MegatronArgs::parse(&a);
                    let _ = inv.resolve(&s);
                }
            }
            let _ = expand_word(&s, &vars, true);
            let _ = super::super::DsConfig::parse(&s);
        }
    }

    #[test]
    fn container_env_follows_kubernetes_precedence() {
        let c: Container = serde_json::from_value(serde_json::json!({
            "name": "c",
            "env": [
                {"name": "A", "value": "first"},
                {"name": "A", "value": "second"},
                {"name": "S", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}},
                {"name": "M", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "m"}}},
            ],
            "envFrom": [
                {"secretRef": {"name": "sec"}},
                {"configMapRef": {"name": "base"}},
                {"configMapRef": {"name": "over"}, "prefix": "P_"},
            ],
        }))
        .unwrap();
        let cms = |cm: &str, key: &str| match (cm, key) {
            ("cm", "m") => EnvLookup::Value("from-cm".into()),
            ("base", "FI_PROVIDER") => EnvLookup::Value("efa".into()),
            ("over", "X") => EnvLookup::Value("x".into()),
            _ => EnvLookup::Absent,
        };
        assert_eq!(
            container_env(&c, "A", &cms),
            EnvLookup::Value("second".into())
        );
        assert!(
            matches!(container_env(&c, "S", &cms), EnvLookup::Unresolved(w) if w.contains("creds"))
        );
        assert_eq!(
            container_env(&c, "M", &cms),
            EnvLookup::Value("from-cm".into())
        );
        assert_eq!(container_env(&c, "P_X", &cms), EnvLookup::Value("x".into()));
        assert_eq!(
            container_env(&c, "FI_PROVIDER", &cms),
            EnvLookup::Value("efa".into())
        );
        // Not in any ConfigMap: the Secret may define it.
        assert!(
            matches!(container_env(&c, "Z", &cms), EnvLookup::Unresolved(w) if w.contains("sec"))
        );
        let plain = container(&[], &[], &[]);
        assert_eq!(container_env(&plain, "X", &cms), EnvLookup::Absent);
    }

    #[test]
    fn command_line_is_shortened_for_messages() {
        let c = container(&["python"], &["train.py"], &[]);
        assert_eq!(command_line(&c, 160), "python train.py");
        assert_eq!(command_line(&c, 6), "python…");
    }

    #[test]
    fn display_quotes_words() {
        let invs = script("echo 'a b' c");
        assert_eq!(invs[0].display(), "echo 'a b' c");
    }
}
