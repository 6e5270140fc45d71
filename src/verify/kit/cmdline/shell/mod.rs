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
//!
//! One file per job: `lexer` (a script into raw commands), `expand` (`$VAR` and the kubelet's
//! `$(VAR)`), `split` (a container or a script into its invocations, the entry points),
//! `interpret` (one raw command: its assignments, `export`, a nested shell), `wrappers` (what
//! runs in front of the program), `nested_shell` (which programs are shells and their `-c`
//! script), `container_env` (a container's environment with the Kubernetes precedence), and the
//! types they share: `invocation`, `var`, `syntax` (how commands are joined, redirections) and
//! `error`.

mod container_env;
mod error;
mod expand;
mod interpret;
mod invocation;
mod lexer;
mod nested_shell;
mod split;
mod syntax;
mod var;
mod wrappers;

pub use container_env::{container_env, EnvLookup};
pub use error::{ShellError, ShellProblem};
pub use interpret::MAX_SHELL_DEPTH;
pub use invocation::{command_line, Invocation};
pub use split::{invocations, split_script};
pub use syntax::{Connector, Redirect};
pub use var::ShellVar;

#[cfg(test)]
mod tests;
