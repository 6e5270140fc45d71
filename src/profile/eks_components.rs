//! What `trainlab setup eks` puts in an EKS cluster, as data and pure functions: the pinned
//! components in apply order, the EFA device plugin with the tolerations this cluster's
//! accelerated nodes need, and the NodePools and node classes for GPU/EFA and Trainium nodes.
//! `doctor` shares the rules that find accelerated nodes, their blocking taints and the EFA
//! plugin's DaemonSet.
//!
//! Versions, for the EKS Kubernetes versions AWS supports in December 2026 (1.32 to 1.36: 14
//! months of standard support and 12 of extended support per version, Amazon EKS User Guide
//! "Understand the Kubernetes version lifecycle on EKS"; 1.31's extended support ended
//! 2026-11-26): every component here uses only apps/v1 and rbac/v1, served by all of them.
//! - NVIDIA device plugin v0.20.0 (NVIDIA/k8s-device-plugin v0.20.0, README: Kubernetes ≥ 1.10),
//!   the upstream static manifest, which tolerates `nvidia.com/gpu:NoSchedule`.
//! - Neuron device plugin 2.22.4.0 (aws-neuron/aws-neuron-sdk v2.32.0 src/k8/, the static RBAC
//!   and DaemonSet files), which tolerates `aws.amazon.com/neuron:NoSchedule` and
//!   `CriticalAddonsOnly` and runs on inf1, inf2, trn1 and trn1n types (its nodeAffinity): the
//!   Trainium NodePool below offers trn1 and trn1n only, the types the labs use.
//! - EFA device plugin v0.5.20 (eks-charts chart v0.5.30), trainlab's rendering
//!   (manifests/eks/efa-device-plugin.yaml) with the tolerations the chart lacks.
//! - Volcano, MPI Operator, training-operator, JobSet and Kubeflow Trainer as the kind profile
//!   pins them ([`default_pins`]); not the Karpenter CRDs: on EKS, Karpenter brings its own.
//!
//! EKS Auto Mode nodes ship the NVIDIA and Neuron device plugins, not visible as DaemonSets
//! (Amazon EKS User Guide, "Deploy an accelerated workload": "EKS Auto Mode includes the NVIDIA
//! device plugin for Kubernetes. This plugin runs automatically and isn't visible as a daemon
//! set"), and advertise EFA themselves: the eks-charts EFA plugin keeps off them
//! (templates/daemonset.yaml, `eks.amazonaws.com/compute-type NotIn [auto]`). On Auto Mode,
//! `setup eks` installs none of the three.

use k8s_openapi::api::core::v1::{Taint, Toleration};
use serde_json::{json, Value};

use crate::facts::images;
use crate::facts::instances::{self, GPU, NEURON, NEURONCORE};
use crate::facts::precision::family_of;
use crate::observe::Obj;
use crate::profile::pins::{default_pins, Embedded, Pin};
use crate::profile::site::Site;
use crate::verify::kit::k8s::placement;
use crate::Error;

/// The EFA device plugin's version (the image tag; chart [`EFA_CHART_VERSION`]).
pub const EFA_PLUGIN_VERSION: &str = "v0.5.20";
/// The eks-charts chart it was rendered from.
pub const EFA_CHART_VERSION: &str = "v0.5.30";
/// What the EFA plugin's image is called, in any registry: `doctor` finds the plugin's
/// DaemonSet by it, whoever installed it (the chart, eksctl, `setup eks`).
pub const EFA_PLUGIN_IMAGE: &str = "aws-efa-k8s-device-plugin";
/// The NodePool and node class `setup eks` makes for GPU/EFA nodes (site key `gpu_node_class`;
/// a site value of that key names them instead).
pub const GPU_NODE_CLASS: &str = "trainlab-gpu";
/// The NodePool and node class for Trainium nodes (site key `neuron_node_class`).
pub const NEURON_NODE_CLASS: &str = "trainlab-neuron";

/// The EFA device plugin without the tolerations code adds (the manifest says how it was made).
pub static EFA_DEVICE_PLUGIN: Embedded = Embedded {
    name: "efa-device-plugin",
    path: "manifests/eks/efa-device-plugin.yaml",
    text: include_str!("../../manifests/eks/efa-device-plugin.yaml"),
    note: "eks-charts aws-efa-k8s-device-plugin v0.5.30 rendered with the GPU and Neuron tolerations the chart lacks (`tolerations: []`) and those of this cluster's accelerated nodes",
    note_ja: "eks-charts の aws-efa-k8s-device-plugin v0.5.30 をレンダリングし、チャートにない GPU と Neuron の toleration（`tolerations: []`）と、このクラスターのアクセラレーター付きノードの toleration を加えたもの",
};

/// A pinned download with nothing to wait for (the device plugins are DaemonSets).
fn download(component: &str, version: &str, url: &str, bytes: u64, sha256: &str) -> Pin {
    super::pins::pin(component, version, url, bytes, sha256, &[])
}

/// The device plugins a node group of EC2 instances needs (not Auto Mode's). Sizes and SHA-256
/// are those of the git blobs at the tags (`git show TAG:PATH | wc -c`, `| sha256sum`; neither
/// repository has LFS or eol attributes, so raw.githubusercontent.com serves these bytes). They
/// are DaemonSets: nothing to wait for.
fn device_plugin_pins() -> Vec<Pin> {
    vec![
        // NVIDIA/k8s-device-plugin v0.20.0 deployments/static/nvidia-device-plugin.yml:
        // DaemonSet nvidia-device-plugin-daemonset in kube-system, image
        // nvcr.io/nvidia/k8s-device-plugin:v0.20.0, tolerating nvidia.com/gpu (Exists, NoSchedule).
        // No node affinity: on a node without GPUs it logs "No devices found. Waiting
        // indefinitely." and idles (cmd/nvidia-device-plugin/main.go at the tag).
        download("NVIDIA device plugin", "v0.20.0", "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.20.0/deployments/static/nvidia-device-plugin.yml", 1_885, "325835e0b0d9263ae673e41d878f849e880642142e9f9b15d1a3400da6a2260d"),
        // aws-neuron/aws-neuron-sdk v2.32.0 src/k8/k8s-neuron-device-plugin-rbac.yml: the
        // ClusterRole, ServiceAccount and binding the DaemonSet runs as.
        download("Neuron device plugin RBAC", "2.22.4.0", "https://raw.githubusercontent.com/aws-neuron/aws-neuron-sdk/v2.32.0/src/k8/k8s-neuron-device-plugin-rbac.yml", 874, "3a3f0940f3cf81772974c863fa8e432d3bfd3a3d1f83a8a3ced04e996257fdc0"),
        // aws-neuron/aws-neuron-sdk v2.32.0 src/k8/k8s-neuron-device-plugin.yml: DaemonSet
        // neuron-device-plugin-daemonset in kube-system, image
        // public.ecr.aws/neuron/neuron-device-plugin:2.22.4.0, tolerating aws.amazon.com/neuron
        // (Exists, NoSchedule) and CriticalAddonsOnly.
        download("Neuron device plugin", "2.22.4.0", "https://raw.githubusercontent.com/aws-neuron/aws-neuron-sdk/v2.32.0/src/k8/k8s-neuron-device-plugin.yml", 3_379, "dbe47ed8dd19317685344755f6e2c5127ca45df5203e8a75feb7a2b1465a00ad"),
    ]
}

/// The pinned components setup eks installs, in apply order (device plugins, Volcano, MPI Operator,
/// training-operator, JobSet + Trainer + runtimes); `auto_mode` leaves out what Auto Mode nodes ship.
/// The EFA plugin is not a pin: its objects come from [`efa_device_plugin`].
pub fn eks_pins(auto_mode: bool) -> Vec<Pin> {
    let mut pins = if auto_mode {
        Vec::new()
    } else {
        device_plugin_pins()
    };
    // The Karpenter CRDs of the kind profile stand in for a controller kind cannot run; on EKS
    // the Karpenter Helm chart installs the CRDs of the version it runs.
    pins.extend(
        default_pins()
            .into_iter()
            .filter(|p| !p.component.starts_with("Karpenter")),
    );
    pins
}

/// Which accelerators something offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accelerators {
    pub gpu: bool,
    pub neuron: bool,
}

impl Accelerators {
    pub fn any(self) -> bool {
        self.gpu || self.neuron
    }

    fn or(self, other: Accelerators) -> Accelerators {
        Accelerators {
            gpu: self.gpu || other.gpu,
            neuron: self.neuron || other.neuron,
        }
    }
}

/// What an EC2 instance family carries, by its name: `p*`/`g*` followed by a digit and `gr6` have
/// NVIDIA GPUs, `trn*` and `inf*` AWS Neuron devices (Amazon EC2 "Accelerated computing instance
/// types"); the instance table ([`instances::INSTANCES`]) agrees for the types it knows.
pub fn family_accelerators(family: &str) -> Accelerators {
    let digit_after = |prefix: &str| {
        family
            .strip_prefix(prefix)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_digit())
    };
    Accelerators {
        gpu: digit_after("p") || digit_after("g") || family.starts_with("gr6"),
        neuron: family.starts_with("trn") || family.starts_with("inf"),
    }
}

/// What an instance type carries: the table's figures, else its family's.
pub fn instance_type_accelerators(instance_type: &str) -> Accelerators {
    match instances::lookup(instance_type) {
        Some(i) => Accelerators {
            gpu: i.gpus > 0,
            neuron: i.neuron > 0,
        },
        None => family_accelerators(family_of(instance_type)),
    }
}

fn positive(v: &Value) -> bool {
    match v {
        Value::String(s) => s
            .parse::<i64>()
            .map_or(!s.is_empty() && s != "0", |n| n > 0),
        Value::Number(n) => n.as_i64().is_some_and(|n| n > 0),
        _ => false,
    }
}

/// The accelerators a Node has or will have: advertised capacity, its instance type (a node
/// whose device plugin does not run advertises nothing, so capacity alone cannot tell), and
/// Karpenter's / Auto Mode's GPU-count labels (kubernetes-sigs/karpenter-provider-aws v1.14.1
/// pkg/apis/v1/labels.go `instance-gpu-count`, `instance-accelerator-count`).
pub fn node_accelerators(node: &Obj) -> Accelerators {
    let status = &node.value["status"];
    let advertised =
        |res: &str| positive(&status["capacity"][res]) || positive(&status["allocatable"][res]);
    let mut a = Accelerators {
        gpu: advertised(GPU),
        neuron: advertised(NEURON) || advertised(NEURONCORE),
    };
    if let Some(t) = node.label(instances::INSTANCE_TYPE_LABEL) {
        a = a.or(instance_type_accelerators(t));
    }
    for group in ["karpenter.k8s.aws", "eks.amazonaws.com"] {
        if node
            .label(&format!("{group}/instance-gpu-count"))
            .is_some_and(|n| n.parse::<i64>().is_ok_and(|n| n > 0))
        {
            a.gpu = true;
        }
    }
    a
}

/// The accelerators a NodePool's nodes would have: its taints, its GPU/Neuron limits and its
/// requirements on instance type, family, category and accelerator labels (Karpenter's
/// `karpenter.k8s.aws/…` and Auto Mode's `eks.amazonaws.com/…`).
pub fn node_pool_accelerators(pool: &Obj) -> Accelerators {
    let spec = &pool.value["spec"]["template"]["spec"];
    let mut a = Accelerators::default();
    for t in spec["taints"].as_array().into_iter().flatten() {
        match t["key"].as_str() {
            Some(GPU) => a.gpu = true,
            Some(NEURON) | Some(NEURONCORE) => a.neuron = true,
            _ => {}
        }
    }
    let limits = &pool.value["spec"]["limits"];
    a.gpu |= !limits[GPU].is_null();
    a.neuron |= !limits[NEURON].is_null() || !limits[NEURONCORE].is_null();
    for r in spec["requirements"].as_array().into_iter().flatten() {
        let key = r["key"].as_str().unwrap_or_default();
        let op = r["operator"].as_str().unwrap_or_default();
        let values: Vec<&str> = r["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let name = key
            .strip_prefix("karpenter.k8s.aws/")
            .or_else(|| key.strip_prefix("eks.amazonaws.com/"));
        let positive_op = op == "In" || op == "Gt" || op == "Exists" || op == "Gte";
        match (key, name) {
            (instances::INSTANCE_TYPE_LABEL, _) if op == "In" => {
                for v in &values {
                    a = a.or(instance_type_accelerators(v));
                }
            }
            (_, Some("instance-family")) if op == "In" => {
                for v in &values {
                    a = a.or(family_accelerators(v));
                }
            }
            (_, Some("instance-category")) if op == "In" => {
                for v in &values {
                    a.gpu |= matches!(*v, "p" | "g");
                    a.neuron |= matches!(*v, "trn" | "inf");
                }
            }
            (_, Some("instance-gpu-count" | "instance-gpu-name" | "instance-gpu-manufacturer"))
                if positive_op =>
            {
                a.gpu |= op != "In" || values.iter().any(|v| *v != "0");
            }
            (_, Some("instance-accelerator-manufacturer")) if op == "In" => {
                a.neuron |= values.contains(&"aws");
                a.gpu |= values.contains(&"nvidia");
            }
            (_, Some("instance-accelerator-name")) if op == "In" => {
                a.neuron |= values
                    .iter()
                    .any(|v| v.starts_with("trainium") || v.starts_with("inferentia"));
            }
            _ => {}
        }
    }
    a
}

/// Taints whose keys belong to node lifecycle, not to the node's purpose: the kubelet's and
/// node controller's `node.kubernetes.io/…` (the DaemonSet controller adds tolerations for them
/// itself, kubernetes pkg/controller/daemon/util `AddOrUpdateDaemonPodTolerations`), the cloud
/// provider's `node.cloudprovider.kubernetes.io/uninitialized`, and Karpenter's `karpenter.sh/…`
/// (unregistered, disrupted), which come and go with a node's life.
fn lifecycle_taint(key: &str) -> bool {
    key.starts_with("node.kubernetes.io/")
        || key.starts_with("node.cloudprovider.kubernetes.io/")
        || key.starts_with("karpenter.sh/")
        || key == "ToBeDeletedByClusterAutoscaler"
        || key == "DeletionCandidateOfClusterAutoscaler"
}

/// The taints of a Node (`spec.taints`) or of a NodePool's nodes (`spec.template.spec.taints`)
/// that keep a pod without a toleration off (NoSchedule, NoExecute), lifecycle taints aside.
pub fn blocking_taints(obj: &Obj) -> Vec<Taint> {
    let taints = if obj.kind() == "NodePool" {
        &obj.value["spec"]["template"]["spec"]["taints"]
    } else {
        &obj.value["spec"]["taints"]
    };
    taints
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| serde_json::from_value::<Taint>(t.clone()).ok())
        .filter(|t| placement::taint_blocks_scheduling(t) && !lifecycle_taint(&t.key))
        .collect()
}

/// The toleration of one taint: its key and effect, any value.
fn toleration_of(key: &str, effect: &str) -> Value {
    json!({"key": key, "operator": "Exists", "effect": effect})
}

/// The tolerations the EFA device plugin needs: nvidia.com/gpu and aws.amazon.com/neuron (Exists,
/// NoSchedule) plus every taint carried by a node or NodePool that offers GPUs or Neuron devices.
pub fn accelerator_tolerations(nodes: &[Obj], node_pools: &[Obj]) -> Vec<serde_json::Value> {
    let mut seen: Vec<(String, String)> = vec![
        (GPU.into(), "NoSchedule".into()),
        (NEURON.into(), "NoSchedule".into()),
    ];
    let mut extra: Vec<(String, String)> = Vec::new();
    let accelerated = nodes.iter().filter(|n| node_accelerators(n).any()).chain(
        node_pools
            .iter()
            .filter(|p| node_pool_accelerators(p).any()),
    );
    for obj in accelerated {
        for t in blocking_taints(obj) {
            let pair = (t.key.clone(), t.effect.clone());
            if !seen.contains(&pair) && !extra.contains(&pair) {
                extra.push(pair);
            }
        }
    }
    extra.sort();
    seen.extend(extra);
    seen.iter().map(|(k, e)| toleration_of(k, e)).collect()
}

/// The EFA device plugin's objects (ServiceAccount/DaemonSet…, namespace kube-system) with those tolerations.
/// The chart makes no ServiceAccount (`automountServiceAccountToken: false`): the objects are
/// its DaemonSet, with the template's `CriticalAddonsOnly` first and then `tolerations`.
pub fn efa_device_plugin(tolerations: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let objs = crate::observe::parse_text(EFA_DEVICE_PLUGIN.text, EFA_DEVICE_PLUGIN.path)
        .expect("manifests/eks/efa-device-plugin.yaml parses (a unit test proves it)");
    objs.into_iter()
        .map(|o| {
            let mut v = (*o.value).clone();
            if v["kind"] == "DaemonSet" {
                let list = &mut v["spec"]["template"]["spec"]["tolerations"];
                let mut all: Vec<Value> = list.as_array().cloned().unwrap_or_default();
                for t in tolerations {
                    if !all.contains(t) {
                        all.push(t.clone());
                    }
                }
                *list = Value::Array(all);
            }
            v
        })
        .collect()
}

/// Whether a DaemonSet runs the EFA device plugin (by its image, whoever installed it).
pub fn is_efa_plugin(daemon_set: &Obj) -> bool {
    daemon_set.kind() == "DaemonSet"
        && daemon_set.value["spec"]["template"]["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["image"].as_str())
            .any(|image| images::repository(image).ends_with(EFA_PLUGIN_IMAGE))
}

/// The tolerations of a DaemonSet's pods.
pub fn pod_tolerations(daemon_set: &Obj) -> Vec<Toleration> {
    daemon_set.value["spec"]["template"]["spec"]["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| serde_json::from_value(t.clone()).ok())
        .collect()
}

/// The taints of `taints` that `tolerations` leaves untolerated.
pub fn untolerated(tolerations: &[Toleration], taints: &[Taint]) -> Vec<Taint> {
    placement::untolerated_taints(tolerations, taints)
        .into_iter()
        .cloned()
        .collect()
}

/// The families of the instance table with EFA and `accel`'s devices, in table order.
fn efa_families(gpu: bool) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for i in instances::INSTANCES {
        let fits = i.efa > 0 && if gpu { i.gpus > 0 } else { i.neuron > 0 };
        let f = family_of(i.name);
        if fits && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

fn site_value<'a>(site: &'a Site, key: &str) -> Result<&'a str, Error> {
    site.values
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| {
            Error::usage(
                format!("サイトの値 `{key}` がありません。`trainlab setup eks` で見つけるか、`--param {key}=VALUE` で指定してください"),
                format!("the site has no `{key}`: let `trainlab setup eks` find it, or give it with `--param {key}=VALUE`"),
            )
        })
}

/// The role's name: both node classes take the IAM role by name (EC2NodeClass `role`, "the AWS
/// identity that nodes use", which Karpenter adds to an instance profile by name; Auto Mode's
/// "Name of IAM Role for Nodes"), so an ARN (`arn:aws:iam::ACCOUNT:role/PATH/NAME`) becomes its
/// last segment.
fn role_name(role: &str) -> &str {
    if role.starts_with("arn:") {
        role.rsplit('/').next().unwrap_or(role)
    } else {
        role
    }
}

/// Ids written with commas or spaces between them (`security_group_ids`).
fn ids(value: &str) -> Vec<&str> {
    value
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// NodePools + EC2NodeClasses (Karpenter) or NodePools + NodeClass (Auto Mode) for GPU/EFA and Trainium,
/// with a root volume fit for the labs' images, the GPU/Neuron taints, and subnet/security-group
/// selectors from the site (ids); an Err names the site value it lacks.
///
/// One subnet: EFA's OS-bypass traffic does not cross subnets (Amazon EC2 User Guide, "Elastic
/// Fabric Adapter for AI/ML and HPC workloads": the OS-bypass capabilities are limited to a
/// single subnet), so every node of a job must be in the same one; the zone requirement says the same to the scheduler. The cluster
/// security group allows all traffic between its members, which EFA needs (same guide: inbound
/// and outbound to itself).
///
/// Karpenter (karpenter.k8s.aws/v1 EC2NodeClass, aws/karpenter-provider-aws v1.14.1
/// pkg/apis/v1/ec2nodeclass.go): `role`, `amiSelectorTerms` `alias: al2023@latest` (with an alias
/// Karpenter picks the AMI variant each instance type needs, NVIDIA or Neuron, website
/// docs/concepts/nodeclasses.md "Unless using an alias, Karpenter cannot detect requirements
/// other than architecture"), `subnetSelectorTerms`/`securityGroupSelectorTerms` `id`,
/// `blockDeviceMappings` `/dev/xvda` (the AL2023 root device, amifamily/al2023.go) with
/// `rootVolume: true`, `ebs.volumeSize`. NodePools karpenter.sh/v1 (kubernetes-sigs/karpenter
/// v1.14.1 pkg/apis/v1/nodepool.go): `nodeClassRef` {group, kind, name}, `taints`,
/// `requirements` on `karpenter.k8s.aws/instance-family`, the zone and on-demand capacity,
/// `limits`, and consolidation of empty nodes only, as lab 15's answer.
///
/// Auto Mode (eks.amazonaws.com/v1 NodeClass, Amazon EKS User Guide "Create a Node Class for
/// Amazon EKS", awsdocs/amazon-eks-user-guide 4d52b4d0 latest/ug/automode/create-node-class.adoc):
/// `role` (required, the role's name), `subnetSelectorTerms`/`securityGroupSelectorTerms` (`id`
/// is one of their forms), `ephemeralStorage.size` (default 80Gi); its NodePools reference it
/// with group eks.amazonaws.com, kind NodeClass, and select families with
/// `eks.amazonaws.com/instance-family` (create-node-pool.adoc, the supported labels).
pub fn node_classes(site: &Site) -> Result<Vec<serde_json::Value>, Error> {
    let role = role_name(site_value(site, "node_role")?);
    let subnet = site_value(site, "subnet_id")?;
    let groups = ids(site_value(site, "security_group_ids")?);
    let zone = site_value(site, "zone")?;
    let size = format!("{}Gi", images::root_volume_gib());
    let subnets = json!([{"id": subnet}]);
    let security_groups: Vec<Value> = groups.iter().map(|g| json!({"id": g})).collect();
    let labels = json!({"app.kubernetes.io/managed-by": "trainlab"});
    let (class_group, class_kind, family_key) = if site.auto_mode {
        (
            "eks.amazonaws.com",
            "NodeClass",
            "eks.amazonaws.com/instance-family",
        )
    } else {
        (
            "karpenter.k8s.aws",
            "EC2NodeClass",
            "karpenter.k8s.aws/instance-family",
        )
    };
    // The names: the site's (a `--param gpu_node_class=…` names another), else trainlab's.
    let named = |key: &str, default: &'static str| -> String {
        site.values
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .unwrap_or(default)
            .to_string()
    };
    let gpu_name = named("gpu_node_class", GPU_NODE_CLASS);
    let neuron_name = named("neuron_node_class", NEURON_NODE_CLASS);
    let mut out = Vec::new();
    for (name, taint, gpu) in [
        (gpu_name.as_str(), GPU, true),
        (neuron_name.as_str(), NEURON, false),
    ] {
        let class = if site.auto_mode {
            json!({
                "apiVersion": "eks.amazonaws.com/v1",
                "kind": "NodeClass",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "role": role,
                    "subnetSelectorTerms": subnets,
                    "securityGroupSelectorTerms": security_groups,
                    "ephemeralStorage": {"size": size},
                },
            })
        } else {
            json!({
                "apiVersion": "karpenter.k8s.aws/v1",
                "kind": "EC2NodeClass",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "role": role,
                    "amiSelectorTerms": [{"alias": "al2023@latest"}],
                    "subnetSelectorTerms": subnets,
                    "securityGroupSelectorTerms": security_groups,
                    "blockDeviceMappings": [{
                        "deviceName": "/dev/xvda",
                        "rootVolume": true,
                        "ebs": {
                            "volumeSize": size,
                            "volumeType": "gp3",
                            "encrypted": true,
                            "deleteOnTermination": true,
                        },
                    }],
                },
            })
        };
        let pool = json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": class_group, "kind": class_kind, "name": name},
                        "taints": [{"key": taint, "effect": "NoSchedule"}],
                        "requirements": [
                            {"key": family_key, "operator": "In", "values": efa_families(gpu)},
                            {"key": instances::ZONE_LABEL, "operator": "In", "values": [zone]},
                            {"key": instances::CAPACITY_TYPE_LABEL, "operator": "In", "values": ["on-demand"]},
                        ],
                    },
                },
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"},
                "limits": {taint: "64"},
            },
        });
        out.push(class);
        out.push(pool);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;

    fn obj(v: Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    fn node(name: &str, instance_type: &str, taints: Value, capacity: Value) -> Obj {
        obj(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": instance_type}},
            "spec": {"taints": taints},
            "status": {"capacity": capacity, "allocatable": capacity},
        }))
    }

    fn pool(name: &str, requirements: Value, taints: Value) -> Obj {
        obj(json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": name},
            "spec": {"template": {"spec": {"requirements": requirements, "taints": taints,
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}},
        }))
    }

    fn keys(tolerations: &[Value]) -> Vec<String> {
        tolerations
            .iter()
            .map(|t| {
                format!(
                    "{}:{}",
                    t["key"].as_str().unwrap(),
                    t["effect"].as_str().unwrap()
                )
            })
            .collect()
    }

    fn site(auto_mode: bool) -> Site {
        let values = [
            ("zone", "us-west-2b"),
            ("subnet_id", "subnet-0a1b2c3d4e5f60718"),
            (
                "security_group_ids",
                "sg-0aaa1111bbbb2222c, sg-0ddd3333eeee4444f",
            ),
            ("node_role", "KarpenterNodeRole-train"),
            ("cluster", "train"),
        ];
        Site {
            context: "train".into(),
            written_by: String::new(),
            auto_mode,
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_gpu_and_neuron_taints_are_always_tolerated() {
        let t = accelerator_tolerations(&[], &[]);
        assert_eq!(
            keys(&t),
            [
                "nvidia.com/gpu:NoSchedule",
                "aws.amazon.com/neuron:NoSchedule"
            ]
        );
        assert!(t.iter().all(|t| t["operator"] == "Exists"));
    }

    #[test]
    fn taints_of_accelerated_nodes_and_pools_are_tolerated_and_others_are_not() {
        let nodes = [
            // A p5 whose GPU plugin has not run: known by its instance type.
            node(
                "gpu",
                "p5.48xlarge",
                json!([
                    {"key": "team", "value": "ml", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
                    {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"},
                    {"key": "soft", "effect": "PreferNoSchedule"},
                ]),
                json!({}),
            ),
            // An unknown type advertising Neuron devices.
            node(
                "neuron",
                "trn9.large",
                json!([{"key": "dedicated", "value": "trn", "effect": "NoExecute"}]),
                json!({"aws.amazon.com/neuron": "16"}),
            ),
            // A CPU node: its taint is not the plugin's business.
            node(
                "cpu",
                "m5.large",
                json!([{"key": "infra", "effect": "NoSchedule"}]),
                json!({}),
            ),
        ];
        let pools = [
            pool(
                "p",
                json!([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4d"]}]),
                json!([{"key": "gpu-pool", "effect": "NoSchedule"}, {"key": "team", "value": "ml", "effect": "NoSchedule"}]),
            ),
            pool(
                "cpu",
                json!([{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]}]),
                json!([{"key": "batch", "effect": "NoSchedule"}]),
            ),
        ];
        let t = accelerator_tolerations(&nodes, &pools);
        assert_eq!(
            keys(&t),
            [
                "nvidia.com/gpu:NoSchedule",
                "aws.amazon.com/neuron:NoSchedule",
                "dedicated:NoExecute",
                "gpu-pool:NoSchedule",
                "team:NoSchedule",
            ]
        );
    }

    #[test]
    fn accelerators_are_read_from_types_families_labels_and_pool_requirements() {
        assert_eq!(
            instance_type_accelerators("p5.48xlarge"),
            Accelerators {
                gpu: true,
                neuron: false
            }
        );
        assert_eq!(
            instance_type_accelerators("g6e.12xlarge"),
            Accelerators {
                gpu: true,
                neuron: false
            }
        );
        assert_eq!(
            instance_type_accelerators("trn2.48xlarge"),
            Accelerators {
                gpu: false,
                neuron: true
            }
        );
        assert!(!instance_type_accelerators("m7g.large").any());
        assert!(!instance_type_accelerators("c5n.18xlarge").any());
        let gpu_count = pool(
            "g",
            json!([{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]}]),
            json!([]),
        );
        assert!(node_pool_accelerators(&gpu_count).gpu);
        let auto = pool(
            "a",
            json!([{"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["trn1"]}]),
            json!([]),
        );
        assert!(node_pool_accelerators(&auto).neuron);
        let by_taint = pool(
            "t",
            json!([]),
            json!([{"key": "aws.amazon.com/neuron", "effect": "NoSchedule"}]),
        );
        assert_eq!(
            node_pool_accelerators(&by_taint),
            Accelerators {
                gpu: false,
                neuron: true
            }
        );
        let none = pool(
            "n",
            json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]),
            json!([]),
        );
        assert!(!node_pool_accelerators(&none).any());
    }

    #[test]
    fn the_efa_plugin_parses_and_carries_the_tolerations_after_its_own() {
        let t = accelerator_tolerations(
            &[],
            &[pool(
                "p",
                json!([]),
                json!([{"key": "nvidia.com/gpu", "value": "true", "effect": "NoExecute"}]),
            )],
        );
        let objs = efa_device_plugin(&t);
        assert_eq!(objs.len(), 1);
        let ds = obj(objs[0].clone());
        assert_eq!(
            (ds.kind(), ds.namespace(), ds.name()),
            (
                "DaemonSet",
                Some("kube-system"),
                "aws-efa-k8s-device-plugin"
            )
        );
        assert!(is_efa_plugin(&ds));
        let tol = ds.value["spec"]["template"]["spec"]["tolerations"]
            .as_array()
            .unwrap();
        assert_eq!(
            tol[0],
            json!({"key": "CriticalAddonsOnly", "operator": "Exists"})
        );
        assert_eq!(&tol[1..], &t[..]);
        let image = ds.value["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap();
        assert!(
            image.ends_with(&format!(
                "/eks/aws-efa-k8s-device-plugin:{EFA_PLUGIN_VERSION}"
            )),
            "{image}"
        );
        // The plugin now lands on nodes with those taints.
        let taints = blocking_taints(&node(
            "n",
            "p5.48xlarge",
            json!([
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NoExecute"},
            ]),
            json!({}),
        ));
        assert_eq!(taints.len(), 2);
        assert!(untolerated(&pod_tolerations(&ds), &taints).is_empty());
        // The chart's own (CriticalAddonsOnly only) does not.
        let chart = efa_device_plugin(&[]);
        assert_eq!(
            untolerated(&pod_tolerations(&obj(chart[0].clone())), &taints).len(),
            2
        );
    }

    #[test]
    fn the_efa_plugin_runs_on_every_efa_accelerator_type_the_labs_know() {
        let objs = efa_device_plugin(&[]);
        let terms = &objs[0]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
        let types: Vec<&str> = terms[0]["matchExpressions"][0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for i in instances::INSTANCES.iter().filter(|i| i.efa > 0) {
            assert!(
                types.contains(&i.name),
                "{} missing from the plugin's nodeAffinity",
                i.name
            );
        }
        assert!(
            types
                .iter()
                .all(|t| instance_type_accelerators(t).any() || t.starts_with("dl2q")),
            "{types:?}"
        );
    }

    #[test]
    fn pins_put_device_plugins_first_and_leave_out_karpenter_and_auto_modes_own() {
        let pins = eks_pins(false);
        let names: Vec<&str> = pins.iter().map(|p| p.component.as_str()).collect();
        assert_eq!(
            &names[..3],
            [
                "NVIDIA device plugin",
                "Neuron device plugin RBAC",
                "Neuron device plugin"
            ]
        );
        assert!(
            names.iter().all(|n| !n.starts_with("Karpenter")),
            "{names:?}"
        );
        for want in [
            "Volcano",
            "MPI Operator",
            "training-operator (PyTorchJob only)",
            "JobSet (for Kubeflow Trainer)",
            "Kubeflow Trainer (TrainJob)",
            "Kubeflow Trainer runtimes",
        ] {
            assert!(names.contains(&want), "{want} missing: {names:?}");
        }
        let auto: Vec<String> = eks_pins(true).into_iter().map(|p| p.component).collect();
        assert_eq!(auto.len(), pins.len() - 3);
        assert!(
            auto.iter().all(|n| !n.contains("device plugin")),
            "{auto:?}"
        );
        // --from DIR finds each file by its name: no two pins share one.
        let mut files: Vec<&str> = pins.iter().map(Pin::file_name).collect();
        files.sort();
        files.dedup();
        assert_eq!(files.len(), pins.len());
        // Each download is pinned at a tag of its version's release.
        for p in &pins[..3] {
            let crate::profile::pins::Source::Download { url, sha256, .. } = &p.source else {
                panic!("{p:?}")
            };
            assert!(
                url.contains("/v0.20.0/") || url.contains("/v2.32.0/"),
                "{url}"
            );
            assert_eq!(sha256.len(), 64);
        }
    }

    #[test]
    fn karpenter_node_classes_carry_the_sites_ids_volume_and_taints() {
        let objs = node_classes(&site(false)).unwrap();
        let kinds: Vec<(&str, &str)> = objs
            .iter()
            .map(|o| {
                (
                    o["kind"].as_str().unwrap(),
                    o["metadata"]["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("EC2NodeClass", GPU_NODE_CLASS),
                ("NodePool", GPU_NODE_CLASS),
                ("EC2NodeClass", NEURON_NODE_CLASS),
                ("NodePool", NEURON_NODE_CLASS)
            ]
        );
        for o in &objs {
            obj(o.clone());
        }
        let class = &objs[0]["spec"];
        assert_eq!(class["role"], "KarpenterNodeRole-train");
        assert_eq!(
            class["subnetSelectorTerms"],
            json!([{"id": "subnet-0a1b2c3d4e5f60718"}])
        );
        assert_eq!(
            class["securityGroupSelectorTerms"],
            json!([{"id": "sg-0aaa1111bbbb2222c"}, {"id": "sg-0ddd3333eeee4444f"}])
        );
        assert_eq!(
            class["amiSelectorTerms"],
            json!([{"alias": "al2023@latest"}])
        );
        let bdm = &class["blockDeviceMappings"][0];
        assert_eq!(bdm["deviceName"], "/dev/xvda");
        assert_eq!(
            bdm["ebs"]["volumeSize"],
            format!("{}Gi", images::root_volume_gib())
        );
        let gpu = obj(objs[1].clone());
        assert_eq!(
            gpu.value["spec"]["template"]["spec"]["nodeClassRef"],
            json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": GPU_NODE_CLASS})
        );
        assert_eq!(
            node_pool_accelerators(&gpu),
            Accelerators {
                gpu: true,
                neuron: false
            }
        );
        let taints: Vec<String> = blocking_taints(&gpu)
            .iter()
            .map(|t| t.key.clone())
            .collect();
        assert_eq!(taints, ["nvidia.com/gpu"]);
        let reqs = &gpu.value["spec"]["template"]["spec"]["requirements"];
        assert_eq!(
            reqs[0]["values"],
            json!(["p4d", "p4de", "p5", "p5e", "p5en", "p6-b200"])
        );
        assert_eq!(
            reqs[1],
            json!({"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2b"]})
        );
        let neuron = obj(objs[3].clone());
        assert_eq!(
            node_pool_accelerators(&neuron),
            Accelerators {
                gpu: false,
                neuron: true
            }
        );
        assert_eq!(
            neuron.value["spec"]["template"]["spec"]["requirements"][0]["values"],
            json!(["trn1", "trn1n"])
        );
    }

    #[test]
    fn the_sites_node_class_names_win_over_trainlabs() {
        let mut s = site(false);
        s.values.insert("gpu_node_class".into(), "gpu-efa".into());
        let objs = node_classes(&s).unwrap();
        let names: Vec<&str> = objs
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["gpu-efa", "gpu-efa", NEURON_NODE_CLASS, NEURON_NODE_CLASS]
        );
        assert_eq!(
            objs[1]["spec"]["template"]["spec"]["nodeClassRef"]["name"],
            "gpu-efa"
        );
    }

    #[test]
    fn a_role_arn_becomes_the_roles_name() {
        let mut s = site(false);
        s.values.insert(
            "node_role".into(),
            "arn:aws:iam::111122223333:role/eks/KarpenterNodeRole-train".into(),
        );
        assert_eq!(
            node_classes(&s).unwrap()[0]["spec"]["role"],
            "KarpenterNodeRole-train"
        );
        s.auto_mode = true;
        assert_eq!(
            node_classes(&s).unwrap()[0]["spec"]["role"],
            "KarpenterNodeRole-train"
        );
    }

    #[test]
    fn auto_mode_node_classes_are_eks_node_classes() {
        let objs = node_classes(&site(true)).unwrap();
        assert_eq!(objs[0]["apiVersion"], "eks.amazonaws.com/v1");
        assert_eq!(objs[0]["kind"], "NodeClass");
        assert_eq!(
            objs[0]["spec"]["ephemeralStorage"]["size"],
            format!("{}Gi", images::root_volume_gib())
        );
        assert_eq!(
            objs[0]["spec"]["subnetSelectorTerms"],
            json!([{"id": "subnet-0a1b2c3d4e5f60718"}])
        );
        assert!(objs[0]["spec"]["blockDeviceMappings"].is_null());
        let r = &objs[1]["spec"]["template"]["spec"];
        assert_eq!(
            r["nodeClassRef"],
            json!({"group": "eks.amazonaws.com", "kind": "NodeClass", "name": GPU_NODE_CLASS})
        );
        assert_eq!(
            r["requirements"][0]["key"],
            "eks.amazonaws.com/instance-family"
        );
    }

    #[test]
    fn a_missing_site_value_is_refused_by_name() {
        for key in ["node_role", "subnet_id", "security_group_ids", "zone"] {
            for auto_mode in [false, true] {
                let mut s = site(auto_mode);
                s.values.remove(key);
                let e = node_classes(&s).unwrap_err();
                assert_eq!(e.exit_code(), crate::exit::ExitCode::BadInput);
                let en = e.to_string();
                assert!(
                    en.contains(&format!("`{key}`")) && en.contains(&format!("--param {key}=")),
                    "{en}"
                );
                assert!(e
                    .in_lang(crate::text::Lang::Ja)
                    .contains(&format!("`{key}`")));
                // Blank counts as missing.
                s.values.insert(key.into(), "  ".into());
                assert!(node_classes(&s).is_err());
            }
        }
    }
}
