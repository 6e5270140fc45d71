//! Capabilities a check may need (DESIGN.md), with how to install each one.

/// The command (or page) that installs a capability, per the pins in shared/research/pins.md.
pub fn install_hint(capability: &str) -> String {
    match capability {
        "volcano" => "`trainlab setup kind` on kind, or `kubectl apply -f https://raw.githubusercontent.com/volcano-sh/volcano/v1.15.1/installer/volcano-development.yaml`".into(),
        "mpi-operator" => "`trainlab setup kind` on kind, or `kubectl apply --server-side -f https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.0/deploy/v2beta1/mpi-operator.yaml`".into(),
        "karpenter-crds" => "`trainlab setup kind` on kind (CRDs only), or the Karpenter Helm chart `oci://public.ecr.aws/karpenter/karpenter` v1.14.1 on EKS".into(),
        "karpenter" => "the Karpenter controller (Helm chart `oci://public.ecr.aws/karpenter/karpenter` v1.14.1; EKS only — kind has the CRDs but no controller)".into(),
        "training-operator" => "`kubectl apply --server-side -k \"github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.9.4\"`".into(),
        "slinky" => "the Slinky Helm charts `oci://ghcr.io/slinkyproject/charts/slurm-operator-crds` and `slurm-operator` 1.2.1 (after cert-manager)".into(),
        "fsx-csi" => "the aws-fsx-csi-driver Helm chart (EKS only)".into(),
        "efa-device-plugin" => "the `eks/aws-efa-k8s-device-plugin` Helm chart on EKS; `trainlab setup kind` fakes EFA capacity on kind".into(),
        "nvidia-device-plugin" => "the NVIDIA device plugin Helm chart `nvdp/nvidia-device-plugin` 0.20.0 on EKS; `trainlab setup kind` fakes GPU capacity on kind".into(),
        "neuron-device-plugin" => "the Neuron Helm chart `oci://public.ecr.aws/neuron/neuron-helm-chart` on EKS; `trainlab setup kind` fakes Neuron capacity on kind".into(),
        other => format!("the {other} components"),
    }
}
