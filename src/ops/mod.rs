//! Operations that change a cluster because the learner asked (`start`, `solve`, `reset`): what
//! to apply or delete and where, done through a connected cluster, with what happened returned
//! for `cli/` to render. `cli/` parses arguments, asks for confirmation and prints.

pub mod manifests;
pub mod reset;
