//! The lab kit: shared views and rules every verifier builds on, one rule each, each cited and
//! unit-tested. A verifier that needs a rule the kit lacks adds it here, with a test.
//!
//! - [`quantity`]: Kubernetes quantities with checked arithmetic (an overflow is bad input).
//! - [`resources`]: the effective request of a pod, and the API server's rules for extended
//!   resources.
//! - [`workload`]: the pod templates of every workload kind the labs grade, with field paths.
//! - [`owned`]: objects owned by another, by ownerReference uid.
//! - [`placement`]: which nodes a pod template may use.
//! - [`conditions`]: status conditions.
//! - [`selector`]: label selectors.
//! - [`pods`]: pod status (terminations, waiting reasons, the scheduler's message), how a job
//!   ended, and the one `pods-running` rule (`pods::running`).
//! - [`mounts`]: which volume a path in a container lies on, ConfigMap files, mount refusals.
//! - [`training`]: training jobs: served version, API-server and webhook refusals, the training
//!   command and its DeepSpeed config.
//! - [`parallel`]: TP/PP/DP degrees, world size and GPU nodes of a PyTorchJob.
//! - [`cmdline`]: command lines inside containers (shell, mpirun, torchrun, Megatron-LM,
//!   Hugging Face, DeepSpeed).
//! - [`container`]: which container of a template a check reads; [`devices`]: GPU/EFA/Neuron
//!   counts a container asks for and a whole node of each instance type; [`capacity`]: the GPU
//!   nodes a workload may use and how many of its pods fit at once; [`neuron`]: Trainium.
//! - [`env`] and [`rank_env`]: where an environment variable comes from, and what the ranks
//!   of an mpirun see; [`efa`]: NCCL-over-EFA variables; [`image`]: image references.
//! - [`script`] and [`python`]: the script a container runs and what it imports and uses.
//! - [`ranks`]: the pods of an Indexed Job or MPIJob, one per rank; [`spread`]: where pods
//!   landed (nodes, zones); [`zones`]: the one zone requirements leave; [`gang`]: Volcano's
//!   PodGroup and all-or-nothing; [`mpi_launcher`]: the launcher's mpirun and Open MPI rules.
//! - [`nodepool`]: Karpenter NodePools; [`slinky`]: Slinky kinds; [`rollout`]: an operator's
//!   StatefulSet pods Ready; [`services`]: which Service a host name reaches; [`storage`]:
//!   claims and StorageClasses; [`version`]: an apiVersion its CRD does not serve.

pub mod capacity;
pub mod cmdline;
pub mod conditions;
pub mod container;
pub mod devices;
pub mod efa;
pub mod env;
pub mod gang;
pub mod image;
pub mod mounts;
pub mod mpi_launcher;
pub mod neuron;
pub mod nodepool;
pub mod owned;
pub mod parallel;
pub mod placement;
pub mod pods;
pub mod python;
pub mod quantity;
pub mod rank_env;
pub mod ranks;
pub mod resources;
pub mod rollout;
pub mod script;
pub mod selector;
pub mod services;
pub mod slinky;
pub mod spread;
pub mod storage;
pub mod training;
pub mod version;
pub mod workload;
pub mod zones;
