//! STUB for branch h-setup only: the in-cluster content of `setup eks` belongs to the
//! "components" work (branch h-components), which replaces this file at merge. Kept tiny and
//! honest: the kind profile's pins without the Karpenter CRDs (Karpenter's own chart installs
//! them on EKS), no NVIDIA/Neuron device plugin yet, a minimal EFA plugin and one GPU node class.

use serde_json::{json, Value};

use crate::observe::Obj;
use crate::profile::pins::Pin;
use crate::profile::site::Site;
use crate::Error;

/// The pinned components setup eks installs, in apply order; `auto_mode` leaves out what Auto
/// Mode nodes ship (nothing to leave out in this stub: it has no device plugin).
pub fn eks_pins(_auto_mode: bool) -> Vec<Pin> {
    crate::profile::pins::default_pins()
        .into_iter()
        .filter(|p| !p.component.starts_with("Karpenter"))
        .collect()
}

/// `nvidia.com/gpu` and `aws.amazon.com/neuron` (Exists, NoSchedule), plus every taint of a
/// node that advertises GPUs or Neuron devices and of every NodePool.
pub fn accelerator_tolerations(nodes: &[Obj], node_pools: &[Obj]) -> Vec<Value> {
    let mut out = vec![
        json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}),
    ];
    let accelerated = |n: &&Obj| {
        let cap = &n.value["status"]["capacity"];
        cap.get("nvidia.com/gpu").is_some() || cap.get("aws.amazon.com/neuron").is_some()
    };
    let node_taints = nodes.iter().filter(accelerated).flat_map(|n| {
        n.value["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    });
    let pool_taints = node_pools.iter().flat_map(|p| {
        p.value["spec"]["template"]["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    });
    for t in node_taints.chain(pool_taints) {
        let Some(key) = t["key"].as_str() else {
            continue;
        };
        let mut tol = json!({"key": key, "operator": "Exists"});
        if let Some(effect) = t["effect"].as_str() {
            tol["effect"] = json!(effect);
        }
        if !out.contains(&tol) {
            out.push(tol);
        }
    }
    out
}

/// The EFA plugin's image tag: eks-charts `stable/aws-efa-k8s-device-plugin/README.md`
/// (`image.tag` default v0.5.8, as read in the Pavani-Panakanti/eks-charts fork).
pub const EFA_PLUGIN_VERSION: &str = "v0.5.8";

/// The EFA device plugin's DaemonSet in kube-system with `tolerations`.
pub fn efa_device_plugin(tolerations: &[Value]) -> Vec<Value> {
    let image = format!(
        "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:{EFA_PLUGIN_VERSION}"
    );
    vec![json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "aws-efa-k8s-device-plugin", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"name": "aws-efa-k8s-device-plugin"}},
            "template": {
                "metadata": {"labels": {"name": "aws-efa-k8s-device-plugin"}},
                "spec": {
                    "tolerations": tolerations,
                    "containers": [{"name": "aws-efa-k8s-device-plugin", "image": image}]
                }
            }
        }
    })]
}

/// One GPU NodePool and its EC2NodeClass (Karpenter v1); an Err names the site value it lacks.
pub fn node_classes(site: &Site) -> Result<Vec<Value>, Error> {
    let get = |k: &str| {
        site.values.get(k).cloned().ok_or_else(|| {
            Error::usage(
                format!("サイトの値 {k} がありません（--param {k}=… で指定してください）"),
                format!("the site value {k} is missing (give it with --param {k}=…)"),
            )
        })
    };
    let (class, subnet, sg, role) = (
        get("gpu_node_class")?,
        get("subnet_id")?,
        get("security_group_ids")?,
        get("node_role")?,
    );
    Ok(vec![
        json!({
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": class},
            "spec": {
                "role": role,
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": [{"id": subnet}],
                "securityGroupSelectorTerms": [{"id": sg}],
            }
        }),
        json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": class},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class},
                "requirements": [],
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
            }}}
        }),
    ])
}
