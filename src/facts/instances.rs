//! Accelerator and EFA figures per EC2 instance type. Sources:
//! - EFA interfaces: aws/karpenter-provider-aws pkg/fake/zz_generated.describe_instance_types.go
//!   (`MaximumEfaInterfaces`), awsome-distributed-training EKS READMEs and regression workflows,
//!   Neuron docs "trn1.32xlarge has 8 EFA devices, trn1n.32xlarge has 16".
//! - GPUs / Neuron devices: the same Karpenter instance data (`nvidia.com/gpu`,
//!   `aws.amazon.com/neuron`, `aws.amazon.com/neuroncore`).
//!
//! Only types whose figures are confirmed are listed; an unknown type is reported as such.

/// Extended resource names (NVIDIA device plugin `internal/lm/resource.go`; EKS user guide
/// device-management-efa; Neuron device plugin docs).
pub const GPU: &str = "nvidia.com/gpu";
pub const EFA: &str = "vpc.amazonaws.com/efa";
pub const NEURON: &str = "aws.amazon.com/neuron";
pub const NEURONCORE: &str = "aws.amazon.com/neuroncore";

/// Well-known node labels (k8s.io/api/core/v1 well_known_labels.go).
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
/// Karpenter's capacity type label (kubernetes-sigs/karpenter pkg/apis/v1/labels.go).
pub const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instance {
    pub name: &'static str,
    pub gpus: u32,
    pub efa: u32,
    pub neuron: u32,
    pub neuroncores: u32,
    /// Network bandwidth in Gbps.
    pub gbps: u32,
}

pub const INSTANCES: &[Instance] = &[
    Instance {
        name: "p4d.24xlarge",
        gpus: 8,
        efa: 4,
        neuron: 0,
        neuroncores: 0,
        gbps: 400,
    },
    Instance {
        name: "p4de.24xlarge",
        gpus: 8,
        efa: 4,
        neuron: 0,
        neuroncores: 0,
        gbps: 400,
    },
    Instance {
        name: "p5.48xlarge",
        gpus: 8,
        efa: 32,
        neuron: 0,
        neuroncores: 0,
        gbps: 3200,
    },
    Instance {
        name: "p5e.48xlarge",
        gpus: 8,
        efa: 32,
        neuron: 0,
        neuroncores: 0,
        gbps: 3200,
    },
    Instance {
        name: "p5en.48xlarge",
        gpus: 8,
        efa: 16,
        neuron: 0,
        neuroncores: 0,
        gbps: 3200,
    },
    Instance {
        name: "p6-b200.48xlarge",
        gpus: 8,
        efa: 8,
        neuron: 0,
        neuroncores: 0,
        gbps: 3200,
    },
    Instance {
        name: "trn1.32xlarge",
        gpus: 0,
        efa: 8,
        neuron: 16,
        neuroncores: 32,
        gbps: 800,
    },
    Instance {
        name: "trn1n.32xlarge",
        gpus: 0,
        efa: 16,
        neuron: 16,
        neuroncores: 32,
        gbps: 1600,
    },
];

/// The accelerator facts of an instance type. SageMaker HyperPod labels its EKS nodes with the
/// SageMaker name, `node.kubernetes.io/instance-type: ml.p5.48xlarge` (the HyperPod manifests of
/// aws-samples/awsome-distributed-training select `ml.p5.48xlarge` and `ml.trn1.32xlarge`):
/// `ml.` + a known type is that type.
pub fn lookup(instance_type: &str) -> Option<&'static Instance> {
    let name = instance_type.strip_prefix("ml.").unwrap_or(instance_type);
    INSTANCES.iter().find(|i| i.name == name)
}

/// EFA interfaces of a known instance type (None: not in the table).
pub fn efa_interfaces(instance_type: &str) -> Option<u32> {
    lookup(instance_type).map(|i| i.efa)
}

/// Known EFA-capable GPU instance types, for hints.
pub fn efa_gpu_types() -> Vec<&'static str> {
    INSTANCES
        .iter()
        .filter(|i| i.efa > 0 && i.gpus > 0)
        .map(|i| i.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hyperpod_instance_type_is_the_ec2_type_it_names() {
        assert_eq!(lookup("ml.p5.48xlarge").map(|i| i.gpus), Some(8));
        assert_eq!(lookup("ml.trn1.32xlarge").map(|i| i.neuron), Some(16));
        assert!(lookup("ml.").is_none());
        assert!(lookup("xml.p5.48xlarge").is_none());
    }
}
