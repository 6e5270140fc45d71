//! A shell variable as known at some point of a script.

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
