//! Profiles (`kind`, `eks`), per-instance accelerator facts, and cluster capabilities.

pub mod charts;
pub mod detect;
pub mod doctor;
pub use crate::facts::instances;
pub mod aws_query;
pub mod eks;
pub mod eks_components;
pub mod kind;
pub mod pins;
pub mod site;

pub use crate::facts::capabilities;
