//! Observing: queries, the `Observed` snapshot verifiers judge, and its sources.

mod error;
pub mod kinds;
pub mod limits;
mod object;
mod observed;
mod parse;
pub mod process;
pub mod save;
pub mod sources;
mod strict;

pub use error::InputError;
pub use kinds::ResourceKind;
pub use object::{Obj, Origin};
pub use observed::{Observed, Query, ReadResult, Selector, SourceKind, Unavailable};
pub use parse::{manifest_files, parse_file, parse_text};
