//! Which accelerators train in BF16 natively, and how a node says which accelerator it has.
//!
//! Sources:
//! - GPU per EC2 instance type and Karpenter's `instance-gpu-name`:
//!   aws/karpenter-provider-aws `website/content/en/docs/reference/instance-types.md`.
//! - GFD labels `nvidia.com/gpu.product` (the NVML name, sanitised, with `-MIG-…`/`-SHARED`
//!   suffixes for MIG and sharing), `nvidia.com/gpu.compute.major`, `nvidia.com/gpu.family`:
//!   NVIDIA/k8s-device-plugin `internal/lm/resource.go` and `docs/gpu-feature-discovery/README.md`.
//! - Compute capability: NVIDIA BioNeMo prerequisites (A100 8.0, A10 8.6, L4 8.9, H100 9.0) and
//!   https://developer.nvidia.com/cuda-gpus; native BF16 tensor-core math starts with Ampere
//!   (CC 8.0): "You need Ampere+ GPU with cuda>=11.0" (transformers `TrainingArguments`).
//! - Trainium: 190 BF16 TFLOPS per chip (Trainium), 667 (Trainium2), AWS Neuron architecture docs.
//! - Karpenter AWS labels: aws/karpenter-provider-aws `pkg/apis/v1/labels.go`.
//!
//! V100 (p3, p3dn) and T4 (g4dn) have no BF16 tensor cores. Software does not stop BF16 there:
//! torch's `is_bf16_supported()` counts emulation, so the HF Trainer's own check usually passes
//! and training runs slowly in emulation (torch 2.15.0 `torch/cuda/__init__.py`
//! `is_bf16_supported(including_emulation=True)`).

/// GFD labels (NVIDIA/k8s-device-plugin `internal/lm`).
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
pub const GPU_COMPUTE_MAJOR_LABEL: &str = "nvidia.com/gpu.compute.major";
pub const GPU_FAMILY_LABEL: &str = "nvidia.com/gpu.family";
/// Karpenter AWS node labels (`pkg/apis/v1/labels.go`).
pub const KARPENTER_GPU_NAME_LABEL: &str = "karpenter.k8s.aws/instance-gpu-name";
pub const KARPENTER_FAMILY_LABEL: &str = "karpenter.k8s.aws/instance-family";
pub const KARPENTER_ACCELERATOR_LABEL: &str = "karpenter.k8s.aws/instance-accelerator-name";
/// The deprecated instance-type label kubelets still set (k8s.io/api `well_known_labels.go`).
pub const BETA_INSTANCE_TYPE_LABEL: &str = "beta.kubernetes.io/instance-type";

/// Native BF16 needs compute capability 8.0 (Ampere) or newer.
pub const BF16_MIN_COMPUTE_MAJOR: u32 = 8;

/// One accelerator model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accelerator {
    /// `A100`, `T4`, `Trainium2`.
    pub model: &'static str,
    /// The model as a token of the GFD product name (`NVIDIA-A100-SXM4-40GB` → `A100`); None for
    /// non-NVIDIA accelerators.
    pub gfd_token: Option<&'static str>,
    /// Karpenter's `instance-gpu-name` / `instance-accelerator-name` value.
    pub karpenter_name: &'static str,
    /// CUDA compute capability (major, minor); None for non-NVIDIA accelerators.
    pub compute: Option<(u32, u32)>,
    /// GFD `nvidia.com/gpu.family`.
    pub gfd_family: Option<&'static str>,
    pub bf16: bool,
}

const fn gpu(
    model: &'static str,
    karpenter_name: &'static str,
    compute: (u32, u32),
    family: &'static str,
) -> Accelerator {
    Accelerator {
        model,
        gfd_token: Some(model),
        karpenter_name,
        compute: Some(compute),
        gfd_family: Some(family),
        bf16: compute.0 >= BF16_MIN_COMPUTE_MAJOR,
    }
}

const fn trainium(model: &'static str, karpenter_name: &'static str) -> Accelerator {
    Accelerator {
        model,
        gfd_token: None,
        karpenter_name,
        compute: None,
        gfd_family: None,
        bf16: true,
    }
}

pub const A100: Accelerator = gpu("A100", "a100", (8, 0), "ampere");
pub const A10G: Accelerator = gpu("A10G", "a10g", (8, 6), "ampere");
pub const L4: Accelerator = gpu("L4", "l4", (8, 9), "ada-lovelace");
pub const L40S: Accelerator = gpu("L40S", "l40s", (8, 9), "ada-lovelace");
pub const H100: Accelerator = gpu("H100", "h100", (9, 0), "hopper");
pub const H200: Accelerator = gpu("H200", "h200", (9, 0), "hopper");
pub const B200: Accelerator = gpu("B200", "b200", (10, 0), "blackwell");
pub const V100: Accelerator = gpu("V100", "v100", (7, 0), "volta");
pub const T4: Accelerator = gpu("T4", "t4", (7, 5), "turing");
pub const TRAINIUM: Accelerator = trainium("Trainium", "trainium");
pub const TRAINIUM2: Accelerator = trainium("Trainium2", "trainium2");

pub const ACCELERATORS: &[Accelerator] = &[
    A100, A10G, L4, L40S, H100, H200, B200, V100, T4, TRAINIUM, TRAINIUM2,
];

/// EC2 instance families (the part of the instance type before the `.`) and their accelerator.
pub const FAMILIES: &[(&str, Accelerator)] = &[
    ("p4d", A100),
    ("p4de", A100),
    ("p5", H100),
    ("p5e", H200),
    ("p5en", H200),
    ("p6-b200", B200),
    ("g5", A10G),
    ("g6", L4),
    ("g6e", L40S),
    ("p3", V100),
    ("p3dn", V100),
    ("g4dn", T4),
    ("trn1", TRAINIUM),
    ("trn1n", TRAINIUM),
    ("trn2", TRAINIUM2),
];

/// `p4d.24xlarge` → `p4d`.
pub fn family_of(instance_type: &str) -> &str {
    instance_type
        .split_once('.')
        .map_or(instance_type, |(f, _)| f)
}

/// The accelerator of an EC2 instance type (None: not in the table).
pub fn by_instance_type(instance_type: &str) -> Option<Accelerator> {
    by_family(family_of(instance_type))
}

/// The accelerator of an EC2 instance family (`p5`).
pub fn by_family(family: &str) -> Option<Accelerator> {
    FAMILIES.iter().find(|(f, _)| *f == family).map(|(_, a)| *a)
}

/// The accelerator of a GFD product name: `NVIDIA-A100-SXM4-40GB`, `Tesla-T4`,
/// `NVIDIA-H100-80GB-HBM3-MIG-1g.10gb` (the model is one `-`-separated token of the name).
pub fn by_gpu_product(product: &str) -> Option<Accelerator> {
    let tokens: Vec<&str> = product.split('-').collect();
    ACCELERATORS
        .iter()
        .find(|a| {
            a.gfd_token
                .is_some_and(|t| tokens.iter().any(|x| x.eq_ignore_ascii_case(t)))
        })
        .copied()
}

/// The accelerator of a Karpenter `instance-gpu-name` or `instance-accelerator-name` value.
pub fn by_karpenter_name(name: &str) -> Option<Accelerator> {
    ACCELERATORS
        .iter()
        .find(|a| a.karpenter_name == name)
        .copied()
}

/// Whether a GFD `nvidia.com/gpu.family` value has native BF16 (None: unknown family).
pub fn family_has_bf16(gfd_family: &str) -> Option<bool> {
    match gfd_family {
        "ampere" | "ada-lovelace" | "hopper" | "blackwell" => Some(true),
        "volta" | "turing" | "pascal" | "maxwell" | "kepler" => Some(false),
        _ => None,
    }
}

/// Whether a GFD `nvidia.com/gpu.compute.major` value has native BF16 (None: not a number).
pub fn compute_major_has_bf16(major: &str) -> Option<bool> {
    major
        .trim()
        .parse::<u32>()
        .ok()
        .map(|m| m >= BF16_MIN_COMPUTE_MAJOR)
}

/// What one node label says about BF16 (None: the label says nothing this table knows).
pub fn label_says(key: &str, value: &str) -> Option<bool> {
    match key {
        crate::facts::instances::INSTANCE_TYPE_LABEL | BETA_INSTANCE_TYPE_LABEL => {
            by_instance_type(value).map(|a| a.bf16)
        }
        KARPENTER_FAMILY_LABEL => by_family(value).map(|a| a.bf16),
        GPU_PRODUCT_LABEL => by_gpu_product(value).map(|a| a.bf16),
        KARPENTER_GPU_NAME_LABEL | KARPENTER_ACCELERATOR_LABEL => {
            by_karpenter_name(value).map(|a| a.bf16)
        }
        GPU_FAMILY_LABEL => family_has_bf16(value),
        GPU_COMPUTE_MAJOR_LABEL => compute_major_has_bf16(value),
        _ => None,
    }
}

/// The node labels that can say, in the order a node is judged by.
pub const BF16_LABELS: &[&str] = &[
    crate::facts::instances::INSTANCE_TYPE_LABEL,
    BETA_INSTANCE_TYPE_LABEL,
    GPU_PRODUCT_LABEL,
    GPU_COMPUTE_MAJOR_LABEL,
    GPU_FAMILY_LABEL,
    KARPENTER_GPU_NAME_LABEL,
    KARPENTER_FAMILY_LABEL,
    KARPENTER_ACCELERATOR_LABEL,
];

/// Instance types of the table with native BF16, for hints (`p4d.*`, …).
pub fn bf16_families() -> Vec<&'static str> {
    FAMILIES
        .iter()
        .filter(|(_, a)| a.bf16)
        .map(|(f, _)| *f)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_types_by_family() {
        assert_eq!(by_instance_type("p4d.24xlarge"), Some(A100));
        assert_eq!(by_instance_type("p5en.48xlarge"), Some(H200));
        assert_eq!(by_instance_type("p6-b200.48xlarge"), Some(B200));
        assert_eq!(by_instance_type("g5.xlarge").map(|a| a.bf16), Some(true));
        assert_eq!(
            by_instance_type("trn1.32xlarge").map(|a| a.bf16),
            Some(true)
        );
        assert_eq!(by_instance_type("p3.16xlarge").map(|a| a.bf16), Some(false));
        assert_eq!(
            by_instance_type("p3dn.24xlarge").map(|a| a.bf16),
            Some(false)
        );
        assert_eq!(
            by_instance_type("g4dn.12xlarge").map(|a| a.bf16),
            Some(false)
        );
        // g5g carries a T4G (Graviton): not the g5 family.
        assert_eq!(by_instance_type("g5g.xlarge"), None);
        assert_eq!(by_instance_type("m5.large"), None);
        assert_eq!(family_of("p4d.24xlarge"), "p4d");
        assert_eq!(family_of("p5"), "p5");
    }

    #[test]
    fn gfd_products_by_model_token() {
        assert_eq!(by_gpu_product("NVIDIA-A100-SXM4-40GB"), Some(A100));
        assert_eq!(by_gpu_product("NVIDIA-H100-80GB-HBM3"), Some(H100));
        assert_eq!(by_gpu_product("NVIDIA-A10G"), Some(A10G));
        assert_eq!(by_gpu_product("NVIDIA-L4"), Some(L4));
        assert_eq!(by_gpu_product("NVIDIA-L40S"), Some(L40S));
        assert_eq!(by_gpu_product("Tesla-T4"), Some(T4));
        assert_eq!(by_gpu_product("Tesla-V100-SXM2-16GB"), Some(V100));
        assert_eq!(
            by_gpu_product("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
            Some(A100)
        );
        assert_eq!(by_gpu_product("NVIDIA-H200-SHARED"), Some(H200));
        assert_eq!(by_gpu_product("NVIDIA-GH200"), None);
    }

    #[test]
    fn labels_say_what_they_know() {
        assert_eq!(label_says(GPU_COMPUTE_MAJOR_LABEL, "9"), Some(true));
        assert_eq!(label_says(GPU_COMPUTE_MAJOR_LABEL, "7"), Some(false));
        assert_eq!(label_says(GPU_COMPUTE_MAJOR_LABEL, "x"), None);
        assert_eq!(label_says(GPU_FAMILY_LABEL, "hopper"), Some(true));
        assert_eq!(label_says(GPU_FAMILY_LABEL, "turing"), Some(false));
        assert_eq!(label_says(KARPENTER_GPU_NAME_LABEL, "a10g"), Some(true));
        assert_eq!(label_says(KARPENTER_GPU_NAME_LABEL, "t4"), Some(false));
        assert_eq!(
            label_says(KARPENTER_ACCELERATOR_LABEL, "trainium2"),
            Some(true)
        );
        assert_eq!(label_says(KARPENTER_FAMILY_LABEL, "p4de"), Some(true));
        assert_eq!(
            label_says(BETA_INSTANCE_TYPE_LABEL, "p3.2xlarge"),
            Some(false)
        );
        assert_eq!(
            label_says("topology.kubernetes.io/zone", "us-west-2a"),
            None
        );
    }

    #[test]
    fn ampere_is_the_line() {
        for a in ACCELERATORS {
            if let Some((major, _)) = a.compute {
                assert_eq!(a.bf16, major >= 8, "{}", a.model);
                assert_eq!(
                    family_has_bf16(a.gfd_family.unwrap()),
                    Some(a.bf16),
                    "{}",
                    a.model
                );
            }
        }
        assert!(bf16_families().contains(&"g6"));
        assert!(!bf16_families().contains(&"g4dn"));
    }
}
