//! The resource kinds verifiers read. Group/version/plural for core and batch kinds come from the
//! Kubernetes API reference; custom resources cite their upstream type next to the constant.

/// A kind a verifier may read. `crd` names the CustomResourceDefinition that serves it, so a kind
/// the cluster does not serve can be reported as "requires <capability> (CRD <crd> not found)".
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ResourceKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    pub crd: Option<&'static str>,
    /// The capability that provides the CRD, for the install hint.
    pub capability: Option<&'static str>,
    /// Kinds that only exist as cluster state (never in a learner's manifests): in static mode
    /// (`--files`) reading them yields "needs a live cluster".
    pub state_only: bool,
}

impl ResourceKind {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Matches an object's `apiVersion`/`kind` by group and kind. The version is ignored, so a
    /// verifier that reads `kubeflow.org/v2beta1` MPIJobs also sees a learner's `kubeflow.org/v1`
    /// manifest and can fail it with a precise hint instead of missing it.
    pub fn matches(&self, api_version: &str, kind: &str) -> bool {
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        group == self.group && kind == self.kind
    }

    /// `pods`, `jobs.batch`, `podgroups.scheduling.volcano.sh`: the name RBAC and kubectl use.
    pub fn resource_name(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

macro_rules! kind {
    ($name:ident, $group:literal, $version:literal, $kind:literal, $plural:literal, namespaced: $ns:literal, state_only: $so:literal) => {
        pub static $name: ResourceKind = ResourceKind {
            group: $group,
            version: $version,
            kind: $kind,
            plural: $plural,
            namespaced: $ns,
            crd: None,
            capability: None,
            state_only: $so,
        };
    };
    ($name:ident, $group:literal, $version:literal, $kind:literal, $plural:literal, namespaced: $ns:literal, state_only: $so:literal, capability: $cap:literal) => {
        pub static $name: ResourceKind = ResourceKind {
            group: $group,
            version: $version,
            kind: $kind,
            plural: $plural,
            namespaced: $ns,
            crd: Some(concat!($plural, ".", $group)),
            capability: Some($cap),
            state_only: $so,
        };
    };
}

// Built-in kinds (https://kubernetes.io/docs/reference/kubernetes-api/).
kind!(NODES, "", "v1", "Node", "nodes", namespaced: false, state_only: true);
kind!(PODS, "", "v1", "Pod", "pods", namespaced: true, state_only: true);
kind!(EVENTS, "", "v1", "Event", "events", namespaced: true, state_only: true);
kind!(NAMESPACES, "", "v1", "Namespace", "namespaces", namespaced: false, state_only: false);
kind!(PVCS, "", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", namespaced: true, state_only: false);
kind!(CONFIGMAPS, "", "v1", "ConfigMap", "configmaps", namespaced: true, state_only: false);
kind!(JOBS, "batch", "v1", "Job", "jobs", namespaced: true, state_only: false);
kind!(STORAGECLASSES, "storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced: false, state_only: false);
kind!(DEPLOYMENTS, "apps", "v1", "Deployment", "deployments", namespaced: true, state_only: false);
kind!(STATEFULSETS, "apps", "v1", "StatefulSet", "statefulsets", namespaced: true, state_only: false);
// Read by `doctor` only (the device plugins' DaemonSets), not by any lab: not in [`ALL`].
kind!(DAEMONSETS, "apps", "v1", "DaemonSet", "daemonsets", namespaced: true, state_only: true);
kind!(SERVICES, "", "v1", "Service", "services", namespaced: true, state_only: false);
// Secrets are only ever read as metadata (`PartialObjectMetadata`): trainlab never reads Secret data.
kind!(SECRETS, "", "v1", "Secret", "secrets", namespaced: true, state_only: false);

// Volcano: staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/job.go and
// scheduling/v1beta1/types.go (volcano-sh/volcano v1.15.1).
kind!(VOLCANO_JOBS, "batch.volcano.sh", "v1alpha1", "Job", "jobs", namespaced: true, state_only: false, capability: "volcano");
kind!(PODGROUPS, "scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups", namespaced: true, state_only: true, capability: "volcano");

// MPI Operator: pkg/apis/kubeflow/v2beta1/types.go (kubeflow/mpi-operator v0.8.0).
kind!(MPIJOBS, "kubeflow.org", "v2beta1", "MPIJob", "mpijobs", namespaced: true, state_only: false, capability: "mpi-operator");

// Karpenter: pkg/apis/v1/nodepool.go, nodeclaim.go (kubernetes-sigs/karpenter v1.14.1) and
// pkg/apis/v1/ec2nodeclass.go (aws/karpenter-provider-aws v1.14.1).
kind!(NODEPOOLS, "karpenter.sh", "v1", "NodePool", "nodepools", namespaced: false, state_only: false, capability: "karpenter-crds");
kind!(NODECLAIMS, "karpenter.sh", "v1", "NodeClaim", "nodeclaims", namespaced: false, state_only: true, capability: "karpenter-crds");
kind!(EC2NODECLASSES, "karpenter.k8s.aws", "v1", "EC2NodeClass", "ec2nodeclasses", namespaced: false, state_only: false, capability: "karpenter-crds");

// Kubeflow training-operator v1.9.4: pkg/apis/kubeflow.org/v1/pytorch_types.go.
// EKS Auto Mode's node class (Amazon EKS User Guide, "Create a Node Class for Amazon EKS":
// `apiVersion: eks.amazonaws.com/v1`, `kind: NodeClass`, cluster-scoped; the cluster's own
// `default` one is what the built-in pools use). Served only on an Auto Mode cluster.
kind!(EKS_NODECLASSES, "eks.amazonaws.com", "v1", "NodeClass", "nodeclasses", namespaced: false, state_only: false, capability: "eks-auto-mode");

kind!(PYTORCHJOBS, "kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", namespaced: true, state_only: false, capability: "training-operator");

// Kubeflow Trainer v2.3.0: pkg/apis/trainer/v1alpha1/{trainjob,trainingruntime}_types.go (the
// only version served; ClusterTrainingRuntime is cluster-scoped). JobSet v0.12.0 (the version
// Trainer pins): api/jobset/v1alpha2/jobset_types.go. A JobSet is made by the controller for
// each TrainJob, never written by a learner.
kind!(TRAINJOBS, "trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs", namespaced: true, state_only: false, capability: "kubeflow-trainer");
kind!(TRAINING_RUNTIMES, "trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", "trainingruntimes", namespaced: true, state_only: false, capability: "kubeflow-trainer");
kind!(CLUSTER_TRAINING_RUNTIMES, "trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", namespaced: false, state_only: false, capability: "kubeflow-trainer");
kind!(JOBSETS, "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", namespaced: true, state_only: true, capability: "kubeflow-trainer");

// Slinky slurm-operator v1.2.1: api/v1beta1/{nodeset,controller,accounting}_types.go.
kind!(NODESETS, "slinky.slurm.net", "v1beta1", "NodeSet", "nodesets", namespaced: true, state_only: false, capability: "slinky");
kind!(SLURM_CONTROLLERS, "slinky.slurm.net", "v1beta1", "Controller", "controllers", namespaced: true, state_only: false, capability: "slinky");
kind!(SLURM_ACCOUNTINGS, "slinky.slurm.net", "v1beta1", "Accounting", "accountings", namespaced: true, state_only: false, capability: "slinky");

/// Every kind above, for discovery and the snapshot source.
pub static ALL: &[&ResourceKind] = &[
    &NODES,
    &PODS,
    &EVENTS,
    &NAMESPACES,
    &PVCS,
    &CONFIGMAPS,
    &JOBS,
    &STORAGECLASSES,
    &DEPLOYMENTS,
    &STATEFULSETS,
    &SERVICES,
    &SECRETS,
    &VOLCANO_JOBS,
    &PODGROUPS,
    &MPIJOBS,
    &NODEPOOLS,
    &NODECLAIMS,
    &EC2NODECLASSES,
    &EKS_NODECLASSES,
    &PYTORCHJOBS,
    &TRAINJOBS,
    &TRAINING_RUNTIMES,
    &CLUSTER_TRAINING_RUNTIMES,
    &JOBSETS,
    &NODESETS,
    &SLURM_CONTROLLERS,
    &SLURM_ACCOUNTINGS,
];
