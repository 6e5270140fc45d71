//! Command lines inside containers (being written).
