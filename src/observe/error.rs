//! Errors about input files: the user's snapshot or manifests. Always exit 2, never a grade.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot read: {message}")]
    Unreadable { path: String, message: String },

    #[error("{path}:{}: document {doc}: {message}", line.map(|l| match column { Some(c) => format!("{l}:{c}"), None => l.to_string() }).unwrap_or_else(|| "?".into()))]
    Syntax {
        path: String,
        doc: usize,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },

    #[error(
        "{origin}: expected a Kubernetes object (a mapping with string `apiVersion` and `kind`)"
    )]
    NotAnObject { origin: String },

    #[error("{origin}: {object}: field `{field}`: {message}")]
    Field {
        origin: String,
        object: String,
        field: String,
        message: String,
    },

    #[error("--param {name}={value}: expected {expected}")]
    Param {
        name: String,
        value: String,
        expected: String,
    },

    #[error("{object} appears twice with different contents: {first} and {second}; keep one (a snapshot saves each object once; for your own files, move the other copy out of the folder)")]
    Duplicate {
        object: String,
        first: String,
        second: String,
    },

    #[error("{path}: not a regular file or folder ({what}); give .yaml, .yml or .json files")]
    NotAFile { path: String, what: String },

    #[error("{path}: no Kubernetes objects found (expected .yaml, .yml or .json files)")]
    Empty { path: String },
}
