//! What a script's syntax sets around a command: how it is joined to the one before it, and
//! its redirections.

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
