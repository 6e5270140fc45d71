//! Operations that change a cluster because the user asked (`start`, `solve`, `reset`, `setup
//! kind`): what to apply or delete and where, done through a connected cluster, with what
//! happened returned (or told to a progress listener) for `cli/` to render. `cli/` parses
//! arguments, asks for confirmation and prints.

pub mod capacity;
pub mod eks_draft;
pub mod manifests;
pub mod reset;
pub mod setup;
pub mod setup_eks;
