//! Kubernetes quantities: the kit uses the crate-wide parser in [`crate::quantity`] (kept at the crate root so node facts, profiles and verifiers share one parser without importing each other).
pub use crate::quantity::*;
