//! `doctor --cluster` against a local AWS API emulator (moto, on 127.0.0.1 only). `.ci/run`
//! installs moto; on a machine without it these tests say so and pass only outside CI.

use crate::support;

use std::time::Duration;

use assert_cmd::Command;
use support::emulator::Emulator;

/// moto with its own EKS endpoints (also the STS of the EKS token tests, `eks_token.rs`).
pub(crate) fn moto() -> Option<crate::support::moto::Moto> {
    crate::support::moto::moto(None)
}

fn aws_env(cmd: &mut Command, url: &str) {
    cmd.env("AWS_ENDPOINT_URL", url)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-west-2")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("NO_COLOR", "1");
}

/// Creates cluster `train` with a p5 and a trn1 node group in moto; returns its endpoint.
fn seed(url: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let conf = aws_sdk_eks::Config::builder()
            .behavior_version(aws_sdk_eks::config::BehaviorVersion::latest())
            .region(aws_sdk_eks::config::Region::new("us-west-2"))
            .endpoint_url(url)
            .credentials_provider(aws_sdk_eks::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .build();
        let eks = aws_sdk_eks::Client::from_conf(conf);
        let vpc = aws_sdk_eks::types::VpcConfigRequest::builder()
            .subnet_ids("subnet-1")
            .build();
        let c = eks
            .create_cluster()
            .name("train")
            .role_arn("arn:aws:iam::123456789012:role/eks")
            .resources_vpc_config(vpc)
            .send()
            .await
            .unwrap();
        for (ng, it) in [("p5", "p5.48xlarge"), ("trn1", "trn1.32xlarge")] {
            let scaling = aws_sdk_eks::types::NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(4)
                .desired_size(2)
                .build();
            eks.create_nodegroup()
                .cluster_name("train")
                .nodegroup_name(ng)
                .node_role("arn:aws:iam::123456789012:role/node")
                .subnets("subnet-1")
                .instance_types(it)
                .scaling_config(scaling)
                .send()
                .await
                .unwrap();
        }
        c.cluster()
            .unwrap()
            .endpoint()
            .unwrap_or_default()
            .to_string()
    })
}

fn eks_nodes() -> Emulator {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/karpenter-single-az/eks-nodes");
    Emulator::start_from(&[data.as_path()])
}

#[test]
fn doctor_reports_an_active_cluster_and_its_node_groups_accelerators() {
    let Some(m) = moto() else { return };
    seed(&m.url);
    let k8s = eks_nodes();
    let dir = tempfile::tempdir().unwrap();
    let kc = k8s.kubeconfig(
        dir.path(),
        "arn:aws:eks:us-west-2:123456789012:cluster/train",
    );
    let mut cmd = Command::cargo_bin("trainlab").unwrap();
    aws_env(&mut cmd, &m.url);
    let out = cmd
        .env("KUBECONFIG", &kc)
        .env("TRAINLAB_CACHE_DIR", crate::support::cache_beside(&kc))
        .args(["doctor", "--cluster", "train", "-o", "json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let eks = &json["eks"];
    assert_eq!(eks["cluster"], "train");
    assert_eq!(eks["status"], "ACTIVE");
    let groups = eks["nodegroups"].as_array().unwrap();
    let p5 = groups.iter().find(|g| g["name"] == "p5").unwrap();
    assert_eq!(
        (p5["gpus"].as_u64(), p5["efa"].as_u64()),
        (Some(8), Some(32))
    );
    let trn1 = groups.iter().find(|g| g["name"] == "trn1").unwrap();
    assert_eq!(
        (trn1["neuron"].as_u64(), trn1["efa"].as_u64()),
        (Some(16), Some(8))
    );
    // The kubeconfig points at the local emulator, not at the EKS endpoint: that is reported,
    // and it is an environment problem (exit 3), so nobody grades the wrong cluster.
    assert_eq!(eks["context_matches"], false);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not point at cluster train"), "{err}");
    assert_eq!(
        json["cluster"]["profile"], "eks",
        "the kube part still runs: {json}"
    );
}

#[test]
fn an_unknown_cluster_is_an_environment_error_naming_it() {
    let Some(m) = moto() else { return };
    let mut cmd = Command::cargo_bin("trainlab").unwrap();
    aws_env(&mut cmd, &m.url);
    let out = cmd
        .env("KUBECONFIG", "/nonexistent")
        .args(["doctor", "--cluster", "nope"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DescribeCluster nope"), "{err}");
}
