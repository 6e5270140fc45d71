//! The entry points: the commands a container runs, or a script runs, in order, with nested
//! shells unwrapped and each command's working directory followed.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;

use super::container_env::literal_env;
use super::error::ShellError;
use super::expand::expand_k8s;
use super::interpret::Ctx;
use super::invocation::Invocation;
use super::lexer::{RawCommand, Word};
use super::var::ShellVar;

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
        .map(crate::verify::kit::k8s::mounts::clean);
    for inv in out.iter_mut() {
        inv.cwd = cwd.clone();
        if inv.program() != Some("cd") {
            continue;
        }
        let target = inv.expanded.iter().skip(1).find(|w| !w.starts_with('-'));
        cwd = match target {
            Some(dir) if super::super::is_var_ref(dir) || dir == "-" || dir.starts_with('~') => {
                None
            }
            Some(dir) if dir.starts_with('/') => Some(crate::verify::kit::k8s::mounts::clean(dir)),
            Some(dir) => {
                let base = cwd.as_deref().unwrap_or("/");
                Some(crate::verify::kit::k8s::mounts::clean(&format!(
                    "{base}/{dir}"
                )))
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
