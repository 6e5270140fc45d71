//! `doctor` on an EKS cluster (the Kubernetes API emulator with `aws://` nodes): what silently
//! keeps labs from running — GPU and Trainium nodes without EFA and why, root volumes too small
//! for the labs' images, device plugins missing — in the JSON and the human output, read-only.

use serde_json::{json, Value};

use crate::support::emulator::Fault;
use crate::support::live::{json_of, Cluster, Crd};
use trainlab::facts::images;
use trainlab::observe::{Obj, Origin};
use trainlab::profile::eks_components as components;

fn node(name: &str, itype: &str, taints: Value, resources: Value, disk: &str) -> Value {
    let mut status = resources;
    status["ephemeral-storage"] = json!(disk);
    status["cpu"] = json!("192");
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "node.kubernetes.io/instance-type": itype,
            "topology.kubernetes.io/zone": "us-west-2a",
        }},
        "spec": {"providerID": format!("aws:///us-west-2a/i-0{name}"), "taints": taints},
        "status": {"capacity": status, "allocatable": status},
    })
}

/// A cluster as many EKS clusters are before `setup eks`: a CPU system node, a p5 from a
/// NodePool tainted `nvidia.com/gpu` (its GPUs advertised, its EFA not), a trn1 tainted
/// `aws.amazon.com/neuron` whose Neuron plugin is missing, the EFA plugin as the eks-charts chart
/// installs it (`tolerations: []`), and Karpenter's default 20 GiB EC2NodeClass under that pool.
fn before_setup() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}),
        node("system-a", "m5.xlarge", json!([]), json!({}), "20Gi"),
        node(
            "p5-a",
            "p5.48xlarge",
            json!([{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
            json!({"nvidia.com/gpu": "8"}),
            "19Gi",
        ),
        node(
            "trn-a",
            "trn1.32xlarge",
            json!([{"key": "aws.amazon.com/neuron", "effect": "NoSchedule"}]),
            json!({}),
            "300Gi",
        ),
        components::efa_device_plugin(&[])[0].clone(),
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
            "spec": {"role": "KarpenterNodeRole-train", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "train"}}],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "train"}}]}}),
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}]}}}}),
    ]
}

fn findings(report: &Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings in {report}"))
        .iter()
        .map(|f| {
            (
                f["problem"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn writes(c: &Cluster) -> Vec<String> {
    c.requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn doctor_names_what_keeps_labs_from_running_on_eks_and_the_fix() {
    let c = Cluster::start(before_setup(), &[Crd::Karpenter]);
    let (code, stdout, stderr) = c.run(&["doctor", "-o", "json", "--request-timeout", "2s"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(writes(&c).is_empty(), "doctor wrote: {:?}", writes(&c));
    let r = json_of(&stdout);
    assert_eq!(r["profile"], "eks");
    let f = findings(&r);
    let subjects: Vec<(&str, &str)> = f.iter().map(|(p, s, _)| (p.as_str(), s.as_str())).collect();
    assert_eq!(
        subjects,
        [
            ("no-efa", "Node p5-a"),
            ("small-root-volume", "Node p5-a"),
            ("device-plugin-missing", "Node trn-a"),
            ("no-efa", "Node trn-a"),
            ("small-root-volume", "EC2NodeClass default"),
        ],
        "{f:#?}"
    );
    let message = |i: usize| f[i].2.as_str();
    assert!(message(0).contains("the EFA device plugin DaemonSet kube-system/aws-efa-k8s-device-plugin does not tolerate its taints nvidia.com/gpu:NoSchedule"), "{}", message(0));
    assert!(
        message(1).contains(&format!("needs {} GiB", images::required_gib())),
        "{}",
        message(1)
    );
    assert!(
        message(2).contains("no DaemonSet in the cluster runs the Neuron device plugin"),
        "{}",
        message(2)
    );
    assert!(
        message(3).contains("does not tolerate its taints aws.amazon.com/neuron:NoSchedule"),
        "{}",
        message(3)
    );
    assert!(
        message(4).contains("no root volume in blockDeviceMappings: Karpenter's default"),
        "{}",
        message(4)
    );
    assert_eq!(r["findings"][0]["fix"], "`trainlab setup eks` re-applies the plugin so that it does, or add to kube-system/aws-efa-k8s-device-plugin spec.template.spec.tolerations: {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}");
    assert!(
        r["findings"][0]["message_ja"]
            .as_str()
            .unwrap()
            .contains("taint nvidia.com/gpu:NoSchedule を許容していません"),
        "{}",
        r["findings"][0]
    );
    assert_eq!(r["unread"], json!([]));

    // The human output, in both languages.
    let (code, en, _) = c.run(&["doctor", "--request-timeout", "2s"]);
    assert_eq!(code, 0);
    assert!(en.contains("EKS: what would silently keep labs from running:\n  ✘ node p5-a (p5.48xlarge, 32 EFA interfaces) has GPUs but no vpc.amazonaws.com/efa"), "{en}");
    assert!(
        en.contains("      fix: `trainlab setup eks` re-applies the plugin"),
        "{en}"
    );
    let (code, ja, _) = c.run(&["doctor", "--lang", "ja", "--request-timeout", "2s"]);
    assert_eq!(code, 0);
    assert!(ja.contains("EKS: lab を黙って止めてしまう問題:\n  ✘ ノード p5-a（p5.48xlarge、EFA インターフェース 32 個）には GPU がありますが vpc.amazonaws.com/efa がありません"), "{ja}");
    assert!(
        ja.contains("      対処: `trainlab setup eks` でプラグインを適用し直せば載ります"),
        "{ja}"
    );
}

#[test]
fn after_setup_eks_the_efa_plugin_tolerates_the_taints_and_the_node_classes_fit() {
    // What `setup eks` applies: the EFA plugin with this cluster's tolerations, and its node
    // classes; the nodes it would then start advertise EFA and have the root volume.
    let seed = before_setup();
    let objs: Vec<Obj> = seed
        .iter()
        .map(|v| Obj::new(v.clone(), Origin::Live).unwrap())
        .collect();
    let nodes: Vec<Obj> = objs
        .iter()
        .filter(|o| o.kind() == "Node")
        .cloned()
        .collect();
    let pools: Vec<Obj> = objs
        .iter()
        .filter(|o| o.kind() == "NodePool")
        .cloned()
        .collect();
    let plugin =
        components::efa_device_plugin(&components::accelerator_tolerations(&nodes, &pools));
    let mut site = trainlab::profile::site::Site::default();
    for (k, v) in [
        ("node_role", "KarpenterNodeRole-train"),
        ("subnet_id", "subnet-0a1"),
        ("security_group_ids", "sg-0b2"),
        ("zone", "us-west-2a"),
    ] {
        site.values.insert(k.into(), v.into());
    }
    let classes = components::node_classes(&site).unwrap();
    let size = format!("{}Gi", images::root_volume_gib());
    let seed: Vec<Value> = seed
        .into_iter()
        .filter(|v| v["kind"] != "DaemonSet" && v["metadata"]["name"] != "default")
        .filter(|v| v["kind"] != "NodePool")
        .chain(plugin)
        .chain(classes)
        .map(|mut v| {
            // The trn1 node now has its Neuron plugin; the p5's volume is setup's.
            if v["metadata"]["name"] == "trn-a" {
                v["status"]["capacity"]["aws.amazon.com/neuron"] = json!("16");
                v["status"]["allocatable"]["aws.amazon.com/neuron"] = json!("16");
            }
            if v["metadata"]["name"] == "p5-a" {
                v["status"]["capacity"]["ephemeral-storage"] = json!(size);
            }
            v
        })
        .collect();
    let c = Cluster::start(seed, &[Crd::Karpenter]);
    let (code, stdout, stderr) = c.run(&["doctor", "-o", "json", "--request-timeout", "2s"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let f = findings(&json_of(&stdout));
    // No taint is the cause any more; EFA is still missing on these two nodes (they were
    // started before), which doctor now puts down to how they were launched.
    assert_eq!(f.len(), 2, "{f:#?}");
    for (problem, _, message) in &f {
        assert_eq!(problem, "no-efa");
        assert!(!message.contains("does not tolerate"), "{message}");
        assert!(
            message.contains("may run there, so the node likely started without EFA interfaces"),
            "{message}"
        );
    }
}

#[test]
fn forbidden_daemon_sets_leave_the_cause_unknown_but_not_the_finding() {
    let c = Cluster::start(before_setup(), &[Crd::Karpenter]);
    c.emu.fault(
        None,
        "/apis/apps/v1/daemonsets",
        false,
        Fault::Status(403, "daemonsets.apps is forbidden: User \"learner\" cannot list resource \"daemonsets\" in API group \"apps\" at the cluster scope".into()),
    );
    let (code, stdout, stderr) = c.run(&["doctor", "-o", "json", "--request-timeout", "2s"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = json_of(&stdout);
    let f = findings(&r);
    let efa: Vec<&(String, String, String)> = f.iter().filter(|(p, _, _)| p == "no-efa").collect();
    assert_eq!(efa.len(), 2, "{f:#?}");
    assert!(
        efa.iter()
            .all(|(_, _, m)| m.contains("the DaemonSets could not be read")),
        "{efa:#?}"
    );
    assert!(
        r["unread"][0]
            .as_str()
            .unwrap()
            .starts_with("daemonsets.apps: "),
        "{}",
        r["unread"]
    );
}

#[test]
fn doctor_on_kind_reads_nothing_more() {
    // The findings are EKS's: a kind cluster's doctor lists no DaemonSet or node class.
    let kind = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "trainlab-worker", "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
        "spec": {"providerID": "kind://docker/trainlab/trainlab-worker"},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}},
    });
    let c = Cluster::start(vec![kind], &[Crd::Karpenter]);
    let (code, stdout, stderr) = c.run(&["doctor", "-o", "json", "--request-timeout", "2s"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = json_of(&stdout);
    assert_eq!(r["profile"], "kind");
    assert_eq!(r["findings"], json!([]));
    let paths: Vec<String> = c.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        paths
            .iter()
            .all(|p| !p.contains("daemonsets") && !p.contains("ec2nodeclasses")),
        "{paths:?}"
    );
}
