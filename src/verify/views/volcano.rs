//! Typed view (being written).
