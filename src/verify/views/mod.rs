//! Typed views of the objects verifiers judge. Built-in kinds use k8s-openapi; custom resources
//! deserialize only the fields checks need, tolerate unknown fields, and cite their upstream type.

pub mod karpenter;
pub mod kubeflow;
pub mod mpi;
pub mod pods;
pub mod pytorch;
pub mod slinky;
pub mod trainer;
pub mod volcano;
