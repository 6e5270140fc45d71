//! The nodes a workload may use and where its pods landed.

/// The GPU nodes a workload may use and how many of its pods fit at once.
pub mod capacity;
/// GPU/EFA/Neuron counts a container asks for, and a whole node of each instance type.
pub mod devices;
/// Where pods landed (nodes, zones), and whether a pod fits nowhere.
pub mod spread;
/// The one zone requirements leave.
pub mod zones;
