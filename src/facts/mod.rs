//! Facts about the cluster's machines that grading, profiles and `doctor` all use: the instance
//! table (GPU, EFA, Neuron per EC2 instance type, and what the kind profile fakes) and the typed
//! view of a Node, the profiles, and the capabilities checks need, and why a read is unavailable in words. Kept apart so `verify` and `profile` do not import each other.

pub mod capabilities;
pub mod fsx;
pub mod images;
pub mod instances;
pub mod nodes;
pub mod precision;
mod profile;
pub mod site;
pub mod unavailable;

pub use nodes::{ClusterNodes, NodeFacts};
pub use profile::Profile;
