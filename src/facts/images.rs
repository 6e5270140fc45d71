//! How much disk the labs' images need on a node, and the root volume `setup eks` gives the
//! nodes it prepares (`doctor` checks nodes and node classes against the same figures).
//!
//! Sizes are download (compressed) sizes. Registry manifests cannot be read from where trainlab
//! is built, so each figure says where it comes from or how it was estimated; only the largest
//! decides the volume, and it is read in the larger of its two possible meanings.
//!
//! The arithmetic, each step with its source:
//! - A pull holds the compressed layers and their unpacked files at once. The EKS AL2023 AMI's
//!   containerd sets `discard_unpacked_layers = true` (awslabs/amazon-eks-ami v20260724,
//!   nodeadm/internal/containerd/config.template.toml), so the compressed blobs are deleted once
//!   the image is unpacked, but not before: the peak is compressed + unpacked.
//! - Unpacked layers take about twice their compressed size (gzip on binaries and Python
//!   trees; for example the dorado image in StaPH-B/docker-builds#1073: 8.5 GB compressed,
//!   15.7 GB unpacked).
//! - The AMI's own files: the EKS AL2023 AMI is built on a 20 GiB root volume
//!   (awslabs/amazon-eks-ami v20260724 templates/al2023/variables-default.json,
//!   `launch_block_device_mappings_volume_size: "20"`), counted whole.
//! - The kubelet starts deleting images at 85 % disk use (`imageGCHighThresholdPercent`, default
//!   85, KubeletConfiguration v1beta1) and evicts pods under 15 % free image filesystem
//!   (`imagefs.available<15%`, Kubernetes "Node-pressure Eviction"): the pull must fit in 85 %.
//! - Karpenter's default root volume is 20 GiB (aws/karpenter-provider-aws v1.14.1
//!   pkg/providers/amifamily/resolver.go `DefaultEBS`, gp3, encrypted), far below this.

/// One image a lab's EKS answer runs, by repository (the tag is the one the answer pins today;
/// a new tag of the same image is about the same size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSize {
    /// The repository, as the answers write it (without the tag).
    pub repository: &'static str,
    /// The tag the figure is for.
    pub tag: &'static str,
    /// Download size in MB (10^6 bytes).
    pub compressed_mb: u64,
    /// Where the figure comes from, or how it was estimated.
    pub source: &'static str,
}

/// Every image the labs' EKS answers run (a test reads the answers and fails on one missing).
pub const IMAGES: &[ImageSize] = &[
    ImageSize {
        repository: "nvcr.io/nvidia/nemo",
        tag: "25.04",
        compressed_mb: 29_000,
        source: "about 29 GB for nemo:24.12 (NVIDIA-NeMo/Speech#11824: \"The Nemo base image is around 29GB\"), read as the download size, the larger reading; nemo:26.04 is reported at 70 GB on disk unpacked, which agrees",
    },
    ImageSize {
        repository: "nvcr.io/nvidia/clara/bionemo-framework",
        tag: "2.6",
        compressed_mb: 29_000,
        source: "estimate: no figure reachable; built from the same NGC PyTorch base with NeMo and Megatron components, so taken as large as the NeMo image",
    },
    ImageSize {
        repository: "nvcr.io/nvidia/pytorch",
        tag: "25.04-py3",
        compressed_mb: 20_000,
        source: "estimate: the upper end of the 10-20 GB of CUDA training images (issue 30)",
    },
    ImageSize {
        repository: "public.ecr.aws/neuron/pytorch-training-neuronx",
        tag: "2.8.0-neuronx-py311-sdk2.26.1-ubuntu22.04",
        compressed_mb: 10_000,
        source: "estimate: PyTorch with the Neuron SDK, no CUDA",
    },
    ImageSize {
        repository: "public.ecr.aws/hpc-cloud/nccl-tests",
        tag: "cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9",
        compressed_mb: 6_000,
        source: "estimate: a CUDA devel base with the EFA installer, aws-ofi-nccl, NCCL and nccl-tests (awsome-distributed-training micro-benchmarks/nccl-tests/nccl-tests.Dockerfile)",
    },
    ImageSize {
        repository: "nvidia/cuda",
        tag: "12.4.1-base-ubuntu22.04",
        compressed_mb: 200,
        source: "estimate: the `base` flavour holds only the CUDA runtime compatibility libraries on Ubuntu",
    },
    ImageSize {
        repository: "ghcr.io/slinkyproject/slurmd",
        tag: "26.05-ubuntu26.04",
        compressed_mb: 1_000,
        source: "estimate: Slurm daemons on Ubuntu",
    },
    ImageSize {
        repository: "ghcr.io/slinkyproject/slurmctld",
        tag: "26.05-ubuntu26.04",
        compressed_mb: 1_000,
        source: "estimate: Slurm daemons on Ubuntu",
    },
    ImageSize {
        repository: "ghcr.io/slinkyproject/slurmdbd",
        tag: "26.05-ubuntu26.04",
        compressed_mb: 1_000,
        source: "estimate: Slurm daemons on Ubuntu",
    },
    ImageSize {
        repository: "docker.io/library/alpine",
        tag: "3.22",
        compressed_mb: 10,
        source: "estimate: Alpine's minimal root filesystem is a few MB",
    },
    ImageSize {
        repository: "busybox",
        tag: "1.36",
        compressed_mb: 10,
        source: "estimate: one static binary",
    },
];

/// Unpacked layers take about this many times their compressed size (see the module comment).
pub const UNPACK_FACTOR: u64 = 2;
/// The EKS AMI's own files, in GiB (the volume it is built on).
pub const AMI_GIB: u64 = 20;
/// The disk use at which the kubelet starts deleting images (percent).
pub const IMAGE_GC_HIGH_PERCENT: u64 = 85;
/// Karpenter's root volume when an EC2NodeClass names none (`DefaultEBS`), in GiB.
pub const KARPENTER_DEFAULT_ROOT_GIB: u64 = 20;
/// `setup eks` rounds the need up to a multiple of this, the headroom for logs, `emptyDir`
/// volumes and layers of a second image that image GC has not deleted yet.
pub const ROUND_GIB: u64 = 50;

const GIB: u64 = 1 << 30;

/// The repository of an image reference: without its tag or digest.
pub fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        // A colon after the last slash is a tag; before it, a registry port.
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => image,
    }
}

/// The size known for an image (by repository; `docker.io/library/` is optional).
pub fn lookup(image: &str) -> Option<&'static ImageSize> {
    let repo = repository(image);
    let short = repo.strip_prefix("docker.io/library/").unwrap_or(repo);
    IMAGES.iter().find(|i| {
        let known = i.repository.strip_prefix("docker.io/library/");
        i.repository == repo || known == Some(short) || i.repository == short
    })
}

/// The image that needs the most disk (the first of the table on a tie).
pub fn largest() -> &'static ImageSize {
    let mut best = &IMAGES[0];
    for i in IMAGES {
        if i.compressed_mb > best.compressed_mb {
            best = i;
        }
    }
    best
}

/// Disk an image needs at its pull's peak (compressed + unpacked), in bytes.
pub fn pull_peak_bytes(i: &ImageSize) -> u64 {
    i.compressed_mb * 1_000_000 * (1 + UNPACK_FACTOR)
}

/// The root volume (GiB) a node needs to pull the largest image: the AMI's files and that
/// pull's peak within the kubelet's 85 %. `doctor` reports nodes and node classes below it.
pub fn required_gib() -> u64 {
    let need = AMI_GIB * GIB + pull_peak_bytes(largest());
    let limit = GIB * IMAGE_GC_HIGH_PERCENT / 100;
    need.div_ceil(limit)
}

/// The root volume `setup eks` gives GPU and Trainium nodes (Karpenter `blockDeviceMappings`,
/// Auto Mode `ephemeralStorage`), and the size `doctor` tells to give: [`required_gib`] rounded up
/// to a multiple of [`ROUND_GIB`].
pub fn root_volume_gib() -> u64 {
    required_gib().div_ceil(ROUND_GIB) * ROUND_GIB
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::Path;

    #[test]
    fn the_volume_holds_the_largest_pull_within_the_kubelets_threshold() {
        // nemo: 29 GB + 58 GB unpacked = 87 GB = 81.02 GiB; + 20 GiB AMI = 101.02 GiB; / 0.85.
        assert_eq!(largest().repository, "nvcr.io/nvidia/nemo");
        assert_eq!(required_gib(), 119);
        assert_eq!(root_volume_gib(), 150);
        let fits = |gib: u64| (AMI_GIB * GIB + pull_peak_bytes(largest())) * 100 <= gib * GIB * 85;
        assert!(fits(required_gib()) && !fits(required_gib() - 1));
        assert!(root_volume_gib() >= required_gib());
        assert!(KARPENTER_DEFAULT_ROOT_GIB < required_gib());
    }

    #[test]
    fn repositories_drop_tags_and_digests_but_keep_registry_ports() {
        assert_eq!(
            repository("nvcr.io/nvidia/nemo:25.04"),
            "nvcr.io/nvidia/nemo"
        );
        assert_eq!(repository("reg:5000/a/b"), "reg:5000/a/b");
        assert_eq!(repository("reg:5000/a/b:1"), "reg:5000/a/b");
        assert_eq!(repository("a/b@sha256:00"), "a/b");
        assert_eq!(repository("busybox"), "busybox");
        assert_eq!(lookup("alpine:3.22").map(|i| i.compressed_mb), Some(10));
        assert_eq!(
            lookup("docker.io/library/busybox:1.37").map(|i| i.tag),
            Some("1.36")
        );
        assert!(lookup("example.com/unknown:1").is_none());
    }

    /// Every `image:` in the answers an EKS cluster runs: each lab's solution-eks/, or its
    /// solution/ when it has no EKS answer of its own.
    fn eks_answer_images() -> BTreeSet<String> {
        fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, v) in m {
                        match (k.as_str(), v.as_str()) {
                            ("image", Some(image)) => {
                                out.insert(image.to_string());
                            }
                            _ => walk(v, out),
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let labs = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs");
        let mut out = BTreeSet::new();
        for lab in std::fs::read_dir(&labs).unwrap() {
            let lab = lab.unwrap().path();
            let eks = lab.join("solution-eks");
            let dir = if eks.is_dir() {
                eks
            } else {
                lab.join("solution")
            };
            let Ok(files) = std::fs::read_dir(&dir) else {
                continue;
            };
            for f in files {
                let f = f.unwrap().path();
                if f.extension().and_then(|e| e.to_str()) != Some("yaml") {
                    continue;
                }
                let text = std::fs::read_to_string(&f).unwrap();
                let shown = f.display().to_string();
                for o in crate::observe::parse_text(&text, &shown).unwrap() {
                    walk(&o.value, &mut out);
                }
            }
        }
        out
    }

    #[test]
    fn every_image_an_eks_answer_runs_has_a_size() {
        let images = eks_answer_images();
        assert!(
            images.iter().any(|i| i.starts_with("nvcr.io/nvidia/nemo:")),
            "{images:?}"
        );
        let unknown: Vec<&String> = images.iter().filter(|i| lookup(i).is_none()).collect();
        assert!(
            unknown.is_empty(),
            "no size for {unknown:?}: add them to IMAGES"
        );
    }
}
