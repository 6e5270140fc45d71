//! `trainlab setup eks` end to end: moto (on 127.0.0.1) answers for EKS and EC2 — a VPC with
//! subnets in two zones, a security group, an EKS cluster using them — and the Kubernetes API
//! emulator answers for the cluster (tests/data/setup-eks/cluster.yaml: a CPU node in
//! us-west-2a, a tainted p5 and a tainted trn1 node in us-west-2b, Karpenter's EC2NodeClass and
//! a NodePool, the EBS CSI driver). moto is started with its EKS endpoint template set to the
//! emulator's URL, so the cluster's endpoint is the context's server, as on a real cluster.
//! Like eks_doctor.rs, these tests skip (pass) outside CI when moto is not installed.

use crate::support::emulator::{Emulator, Recorded};
use crate::support::live;
use crate::support::moto::{moto, Moto};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

const ACCOUNT: &str = "123456789012";
const CONTEXT: &str = "arn:aws:eks:us-west-2:123456789012:cluster/train";

/// What the tests created in moto.
struct Aws {
    subnet_a: String,
    subnet_b: String,
    sg: String,
}

/// One EC2 Query call to moto (moto routes by the credential scope's service, and does not
/// check the signature); the text of the first `<tag>`.
async fn ec2(url: &str, params: &[(&str, &str)], tag: &str) -> String {
    let mut body = String::from("Version=2016-11-15");
    for (k, v) in params {
        body.push_str(&format!("&{k}={}", v.replace('/', "%2F")));
    }
    let text = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=testing/20260101/us-west-2/ec2/aws4_request, SignedHeaders=host, Signature=0",
        )
        .body(body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let open = format!("<{tag}>");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no {tag} in {text}"))
        + open.len();
    let end = text[start..].find('<').unwrap() + start;
    text[start..end].to_string()
}

/// A VPC with subnets in us-west-2a (listed first) and us-west-2b, a security group, and the
/// EKS cluster `train` using them.
fn seed(url: &str) -> Aws {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let vpc = ec2(
            url,
            &[("Action", "CreateVpc"), ("CidrBlock", "10.0.0.0/16")],
            "vpcId",
        )
        .await;
        let subnet = |cidr: &'static str, zone: &'static str| {
            let vpc = vpc.clone();
            async move {
                ec2(
                    url,
                    &[
                        ("Action", "CreateSubnet"),
                        ("VpcId", &vpc),
                        ("CidrBlock", cidr),
                        ("AvailabilityZone", zone),
                    ],
                    "subnetId",
                )
                .await
            }
        };
        let subnet_a = subnet("10.0.1.0/24", "us-west-2a").await;
        let subnet_b = subnet("10.0.2.0/24", "us-west-2b").await;
        let sg = ec2(
            url,
            &[
                ("Action", "CreateSecurityGroup"),
                ("GroupName", "eks-cluster-sg-train"),
                ("GroupDescription", "cluster"),
                ("VpcId", &vpc),
            ],
            "groupId",
        )
        .await;
        let conf = aws_sdk_eks::Config::builder()
            .behavior_version(aws_sdk_eks::config::BehaviorVersion::latest())
            .region(aws_sdk_eks::config::Region::new("us-west-2"))
            .endpoint_url(url)
            .credentials_provider(aws_sdk_eks::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .build();
        let eks = aws_sdk_eks::Client::from_conf(conf);
        let vpc_config = aws_sdk_eks::types::VpcConfigRequest::builder()
            .subnet_ids(&subnet_a)
            .subnet_ids(&subnet_b)
            .security_group_ids(&sg)
            .build();
        eks.create_cluster()
            .name("train")
            .role_arn(format!("arn:aws:iam::{ACCOUNT}:role/eks"))
            .resources_vpc_config(vpc_config)
            .send()
            .await
            .unwrap();
        Aws {
            subnet_a,
            subnet_b,
            sg,
        }
    })
}

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The emulator serving `seed` (files) with the kinds setup eks reads and writes.
fn emulator(seed: &str) -> Emulator {
    let emu = Emulator::start_from(&[data(seed).as_path()]);
    live::serve(&emu, &[live::Crd::Karpenter]);
    // Built-in kinds the emulator does not list by itself.
    emu.serve_crd("apps", "v1", "DaemonSet", "daemonsets", true);
    emu.serve_crd("storage.k8s.io", "v1", "CSIDriver", "csidrivers", false);
    emu
}

struct Setup {
    emu: Emulator,
    moto: Moto,
    aws: Aws,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    sites: PathBuf,
}

impl Setup {
    /// moto with cluster `train`, whose endpoint is `endpoint` (None: the emulator's), and a
    /// kubeconfig with the EKS context ARN pointing at the emulator.
    fn new(seed: &str, endpoint: Option<&str>) -> Option<Setup> {
        let emu = emulator(seed);
        let own = format!("{}/", emu.url());
        let moto = moto(Some(endpoint.unwrap_or(&own)))?;
        let aws = seed_aws(&moto);
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = emu.kubeconfig(dir.path(), CONTEXT);
        let sites = dir.path().join("sites");
        Some(Setup {
            emu,
            moto,
            aws,
            dir,
            kubeconfig,
            sites,
        })
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut c: Command = live::trainlab(&self.kubeconfig, self.dir.path(), &["setup", "eks"]);
        c.args(args)
            .args(["--request-timeout", "5s"])
            .env("AWS_ENDPOINT_URL", &self.moto.url)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env_remove("AWS_REGION")
            .env_remove("AWS_DEFAULT_REGION")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_CONFIG_FILE", "/nonexistent")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
            .env("TRAINLAB_SITE_DIR", &self.sites);
        live::output(c)
    }

    fn site_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(&self.sites) {
            Ok(d) => d.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn seed_aws(m: &Moto) -> Aws {
    seed(&m.url)
}

fn writes(requests: &[Recorded]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

fn pins() -> String {
    data("pins/pins.yaml").display().to_string()
}

fn pins_dir() -> String {
    data("pins").display().to_string()
}

#[test]
fn dry_run_plans_the_components_with_the_efa_tolerations_and_the_discovered_site() {
    let Some(s) = Setup::new("setup-eks/cluster", None) else {
        return;
    };
    let (code, out, err) = s.run(&["--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // The cluster came from the context's ARN; the facts from EKS and EC2.
    assert!(
        out.contains(&format!(
            "EKS cluster train (from the context's EKS ARN {CONTEXT})"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("account {ACCOUNT}")), "{out}");
    assert!(
        out.contains(&format!(
            "subnets: {} (us-west-2a), {} (us-west-2b)",
            s.aws.subnet_a, s.aws.subnet_b
        )),
        "{out}"
    );
    // The zone is the GPU/Neuron nodes' (us-west-2b), not the first subnet's, and its subnet.
    assert!(
        out.contains("  zone: us-west-2b (zone of the nodes with GPUs or Neuron devices)\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!("  subnet_id: {}\n", s.aws.subnet_b)),
        "{out}"
    );
    assert!(
        out.contains(&format!("  security_group_ids: {}\n", s.aws.sg)),
        "{out}"
    );
    assert!(
        out.contains("  node_role: KarpenterNodeRole-train\n"),
        "{out}"
    );
    assert!(out.contains("  region: us-west-2\n"), "{out}");
    // Every pinned component with its version and hash.
    for p in trainlab::profile::eks_components::eks_pins(false) {
        assert!(
            out.contains(&format!("  {} {}\n", p.component, p.version)),
            "{} missing:\n{out}",
            p.component
        );
        if let trainlab::profile::pins::Source::Download { sha256, .. } = &p.source {
            assert!(out.contains(sha256.as_str()), "{out}");
        }
    }
    // The EFA plugin tolerates the GPU and Neuron taints and the team taint of the p5 node.
    for t in [
        "    nvidia.com/gpu Exists NoSchedule\n",
        "    aws.amazon.com/neuron Exists NoSchedule\n",
        "    example.com/team Exists NoSchedule\n",
    ] {
        assert!(out.contains(t), "{t:?} missing:\n{out}");
    }
    // Karpenter's CRDs are served: node classes are planned.
    assert!(
        out.contains("node classes and NodePools to create:"),
        "{out}"
    );
    // The EBS CSI driver is there, the FSx one is not: its exact commands.
    assert!(
        out.contains("  EBS CSI driver: present (CSIDriver ebs.csi.aws.com)"),
        "{out}"
    );
    assert!(
        out.contains(&format!("aws eks create-addon --cluster-name train --region us-west-2 --addon-name aws-fsx-csi-driver --service-account-role-arn arn:aws:iam::{ACCOUNT}:role/AmazonEKS_FSx_CSI_DriverRole")),
        "{out}"
    );
    // Read only: no write reached the cluster and no site file was written.
    assert_eq!(writes(&s.emu.requests()), Vec::<String>::new());
    assert!(s.site_files().is_empty(), "{:?}", s.site_files());
}

#[test]
fn dry_run_in_japanese_says_the_plan_in_japanese() {
    let Some(s) = Setup::new("setup-eks/cluster", None) else {
        return;
    };
    let (code, out, err) = s.run(&["--dry-run", "--lang", "ja"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("何も変更せず"), "{out}");
    assert!(out.contains("Auto Mode 無効"), "{out}");
    assert!(
        out.contains("  zone: us-west-2b（GPU か Neuron のあるノードのゾーン）"),
        "{out}"
    );
    assert!(!out.contains("nothing will be changed"), "{out}");
}

#[test]
fn dry_run_without_the_api_server_still_plans_from_eks_and_ec2() {
    // The cluster's endpoint (and the context's server) is a closed port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        format!("http://127.0.0.1:{port}/")
    };
    let Some(s) = Setup::new("setup-eks/cluster", Some(&closed)) else {
        return;
    };
    let kc = std::fs::read_to_string(&s.kubeconfig).unwrap();
    std::fs::write(
        &s.kubeconfig,
        kc.replace(&s.emu.url(), closed.trim_end_matches('/')),
    )
    .unwrap();
    let (code, out, err) = s.run(&["--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("could not read the cluster"), "{out}");
    // No accelerated nodes known: the first subnet's zone, said so.
    assert!(
        out.contains(
            "  zone: us-west-2a (no accelerated nodes or NodePools: the first subnet's zone)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!("  subnet_id: {}\n", s.aws.subnet_a)),
        "{out}"
    );
    assert!(
        out.contains("    nvidia.com/gpu Exists NoSchedule\n"),
        "{out}"
    );
    assert!(
        out.contains("FSx for Lustre CSI driver: could not be checked"),
        "{out}"
    );
    assert!(s.site_files().is_empty());
}

/// The stored objects with their resourceVersions.
fn versions(emu: &Emulator) -> BTreeMap<String, Value> {
    emu.objects()
        .iter()
        .map(|o| {
            (
                format!(
                    "{}/{}/{}",
                    o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]
                ),
                o["metadata"]["resourceVersion"].clone(),
            )
        })
        .collect()
}

fn apply_patches(requests: &[Recorded]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| {
            r.method == "PATCH"
                && r.content_type
                    .as_deref()
                    .is_some_and(|c| c.starts_with("application/apply-patch+yaml"))
        })
        .map(|r| r.path.clone())
        .collect()
}

#[test]
fn a_real_run_applies_writes_the_site_file_and_a_second_run_changes_nothing() {
    let Some(s) = Setup::new("setup-eks/cluster", None) else {
        return;
    };
    let args = [
        "--pins",
        &pins(),
        "--from",
        &pins_dir(),
        "--wait-timeout",
        "5s",
    ];
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    let first = s.emu.requests();
    let applied = apply_patches(&first);
    // Every write is a server-side apply.
    assert_eq!(writes(&first).len(), applied.len(), "{:?}", writes(&first));
    for p in [
        "/api/v1/namespaces/widget-system",
        "/apis/apps/v1/namespaces/kube-system/daemonsets/aws-efa-k8s-device-plugin",
    ] {
        assert!(
            applied.iter().any(|a| a == p),
            "{p} not applied: {applied:?}"
        );
    }
    assert!(
        applied
            .iter()
            .any(|a| a.starts_with("/apis/karpenter.k8s.aws/v1/ec2nodeclasses/")),
        "{applied:?}"
    );
    // The DaemonSet tolerates the taints the accelerated nodes carry.
    let ds = s
        .emu
        .objects()
        .into_iter()
        .find(|o| o["kind"] == "DaemonSet")
        .unwrap();
    let tolerated: Vec<&str> = ds["spec"]["template"]["spec"]["tolerations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["key"].as_str())
        .collect();
    for key in [
        "nvidia.com/gpu",
        "aws.amazon.com/neuron",
        "example.com/team",
    ] {
        assert!(tolerated.contains(&key), "{key}: {tolerated:?}");
    }
    // The site file, for this context, with what was found.
    let files = s.site_files();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(out.contains(&files[0].display().to_string()), "{out}");
    let site = trainlab::profile::site::Site::load_from(&files[0])
        .unwrap()
        .unwrap();
    assert_eq!(site.context, CONTEXT);
    let v = |k: &str| site.values.get(k).cloned().unwrap_or_default();
    assert_eq!(v("zone"), "us-west-2b");
    assert_eq!(v("subnet_id"), s.aws.subnet_b);
    assert_eq!(v("security_group_ids"), s.aws.sg);
    assert_eq!(v("account"), ACCOUNT);
    assert_eq!(v("node_role"), "KarpenterNodeRole-train");
    assert!(!v("gpu_node_class").is_empty(), "{site:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();

    // Again: the same applies, no stored object changes, the same file.
    let before = versions(&s.emu);
    let objects_before = s.emu.objects();
    s.emu.clear_requests();
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    let second = s.emu.requests();
    assert_eq!(apply_patches(&second), applied);
    assert_eq!(writes(&second).len(), applied.len());
    assert_eq!(
        versions(&s.emu),
        before,
        "a second run changed stored objects"
    );
    assert_eq!(s.emu.objects(), objects_before);
    assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), text);
}

#[test]
fn a_param_overrides_a_discovered_value() {
    let Some(s) = Setup::new("setup-eks/cluster", None) else {
        return;
    };
    let (code, out, err) = s.run(&[
        "--dry-run",
        "--param",
        "zone=us-west-2a",
        "--with",
        "slinky",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    // --with slinky plans setup kind's charts against this context.
    assert!(
        out.contains(&format!("    helm upgrade --install slurm-operator oci://ghcr.io/slinkyproject/charts/slurm-operator --kube-context {CONTEXT} ")),
        "{out}"
    );
    assert!(out.contains("  zone: us-west-2a (--param)\n"), "{out}");
    assert!(
        out.contains(&format!("  subnet_id: {}\n", s.aws.subnet_a)),
        "{out}"
    );
}

#[test]
fn a_context_that_points_elsewhere_is_refused_before_any_request() {
    // moto's own endpoint (https://….eks.amazonaws.com), not the emulator the context names.
    let emu = emulator("setup-eks/cluster");
    let Some(m) = moto(None) else {
        return;
    };
    let aws = seed_aws(&m);
    let sites = tempfile::tempdir().unwrap();
    let s = Setup {
        kubeconfig: emu.kubeconfig(sites.path(), CONTEXT),
        emu,
        moto: m,
        aws,
        sites: sites.path().join("sites"),
        dir: sites,
    };
    let (code, out, err) = s.run(&[]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(err.contains("does not point at cluster train"), "{err}");
    assert!(
        err.contains("aws eks update-kubeconfig --name train --region us-west-2"),
        "{err}"
    );
    assert!(
        s.emu.requests().is_empty(),
        "{:?}",
        writes(&s.emu.requests())
    );
    assert!(s.site_files().is_empty());
}

#[test]
fn a_cluster_whose_nodes_are_not_eks_is_refused_before_any_write() {
    let Some(s) = Setup::new("kind-nodes", None) else {
        return;
    };
    let (code, out, err) = s.run(&["--pins", &pins(), "--from", &pins_dir()]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(err.contains("are not EKS nodes"), "{err}");
    assert!(err.contains("kind://"), "{err}");
    assert_eq!(writes(&s.emu.requests()), Vec::<String>::new());
    assert!(s.site_files().is_empty());
}

#[test]
fn a_value_the_node_classes_need_and_nothing_found_is_a_refusal_naming_its_param() {
    let Some(s) = Setup::new("setup-eks/no-role", None) else {
        return;
    };
    // The dry run says so and goes on.
    let (code, out, err) = s.run(&["--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("  node_role: not found (give it with --param node_role=…)\n"),
        "{out}"
    );
    assert!(out.contains("node classes: cannot be created"), "{out}");
    // A real run refuses before writing anything.
    let (code, out, err) = s.run(&["--pins", &pins(), "--from", &pins_dir()]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("--param node_role=…"), "{err}");
    assert_eq!(writes(&s.emu.requests()), Vec::<String>::new());
    assert!(s.site_files().is_empty());
    // Given, it goes through.
    let (code, out, err) = s.run(&[
        "--pins",
        &pins(),
        "--from",
        &pins_dir(),
        "--param",
        "node_role=MyNodeRole",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let site = trainlab::profile::site::Site::load_from(&s.site_files()[0])
        .unwrap()
        .unwrap();
    assert_eq!(site.values["node_role"], "MyNodeRole");
}

#[test]
fn help_teaches_the_steps_and_what_setup_eks_never_does() {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    let out = c.args(["setup", "eks", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for s in [
        "What it never does: create a cluster, a node group or anything in IAM",
        "--dry-run prints all of this and changes nothing",
        "--param <KEY=VALUE>",
        "--cluster <NAME>",
    ] {
        assert!(help.contains(s), "{s:?} missing:\n{help}");
    }
}

#[test]
fn a_param_that_is_no_site_value_is_refused_before_asking_aws() {
    // No AWS endpoint and no kubeconfig: the refusal comes first.
    let dir = tempfile::tempdir().unwrap();
    let c = live::trainlab(
        &dir.path().join("none"),
        dir.path(),
        &["setup", "eks", "--param", "colour=blue"],
    );
    let (code, _, err) = live::output(c);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--param colour: not a site value of setup eks (known keys: cluster, region"),
        "{err}"
    );
}
