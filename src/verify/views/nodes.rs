//! Moved to [`crate::facts::nodes`]; re-exported while verifiers move over to the kit.
pub use crate::facts::nodes::*;

/// A whole-number quantity, or None (transitional: verifiers move to `kit::k8s::quantity`).
pub fn parse_int_quantity(q: &str) -> Option<i64> {
    crate::quantity::Quantity::parse(q).ok()?.count().ok()
}
