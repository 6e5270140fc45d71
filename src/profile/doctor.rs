//! `doctor`: what the cluster is and has — server version, nodes and their accelerators, the
//! profile, and each capability (CRDs served, controller Deployments available).

use serde::Serialize;

use crate::catalog::Catalog;
use crate::cluster::{Conn, Discovery};
use crate::facts::capabilities::{self, Capability, Detected, Seen};
use crate::facts::instances::{self, EFA, GPU, NEURON, NEURONCORE};
use crate::facts::{NodeFacts, Profile};
use crate::observe::{kinds, Obj, Query, Unavailable};
use crate::profile::eks_components::{self as components, Accelerators};
use crate::Error;

#[derive(Debug, Clone, Serialize)]
pub struct NodeRow {
    pub name: String,
    pub zone: Option<String>,
    pub instance_type: Option<String>,
    pub gpu: i64,
    pub efa: i64,
    pub neuron: i64,
    pub neuroncore: i64,
    /// Kind nodes whose faked capacity is missing (kubelet re-registration zeroes it).
    pub missing_fake_capacity: Vec<String>,
    /// Capacity is patched but the kubelet has not mirrored it into allocatable yet (it does on
    /// its next status sync, within seconds; kubelet nodestatus setters recompute allocatable).
    pub allocatable_pending: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapabilityRow {
    pub name: &'static str,
    pub present: bool,
    /// What was seen, in English (the JSON output); [`CapabilityRow::detail_in`] says it in a
    /// report's language.
    pub detail: String,
    pub install: Option<String>,
    /// What was seen, one note each, for rendering in either language.
    #[serde(skip)]
    pub seen: Vec<Seen>,
    /// [`CapabilityRow::install`] in Japanese.
    #[serde(skip)]
    pub install_ja: Option<String>,
}

impl CapabilityRow {
    /// The row for what detection found.
    pub fn new(d: &Detected) -> CapabilityRow {
        CapabilityRow {
            name: d.name,
            present: d.present(),
            detail: d.detail.clone(),
            install: d.install.clone(),
            seen: d.seen.clone(),
            install_ja: d
                .install
                .as_ref()
                .map(|_| capabilities::install_hint_in(d.name, d.profile, true)),
        }
    }

    /// What was seen, in Japanese (`ja`) or English (as in the JSON).
    pub fn detail_in(&self, ja: bool) -> String {
        if ja && !self.seen.is_empty() {
            Seen::join(&self.seen, true)
        } else {
            self.detail.clone()
        }
    }

    /// How to install it, in Japanese (`ja`) or English (as in the JSON); None when present.
    pub fn install_in(&self, ja: bool) -> Option<&str> {
        if ja {
            self.install_ja.as_deref().or(self.install.as_deref())
        } else {
            self.install.as_deref()
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub schema_version: u32,
    pub context: String,
    pub server: String,
    pub server_version: String,
    pub profile: Option<Profile>,
    pub nodes: Vec<NodeRow>,
    pub capabilities: Vec<CapabilityRow>,
    /// Which labs this cluster can run now, from the capabilities above.
    pub labs: Vec<LabRow>,
    /// On EKS: what would silently keep labs from running (nodes without EFA, root volumes too
    /// small for the labs' images, device plugins missing), each with its fix.
    pub findings: Vec<Finding>,
    /// On EKS: reads the findings needed that failed (a finding's cause may then be unknown).
    pub unread: Vec<String>,
}

/// Whether a cluster can run a lab now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runs {
    /// Every check can be graded.
    Yes,
    /// Some checks would be skipped (`skipped` says which, and what they need).
    Partly,
    /// Every check would be skipped: nothing would be graded.
    No,
}

/// One lab: whether it runs here, and the checks that would be skipped for a missing capability.
#[derive(Debug, Clone, Serialize)]
pub struct LabRow {
    pub number: u32,
    pub id: String,
    pub runs: Runs,
    pub skipped: Vec<SkippedCheck>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkippedCheck {
    pub check: String,
    /// The capabilities it needs that the cluster lacks (their install commands are in
    /// `capabilities`).
    pub needs: Vec<String>,
}

/// Each gradable lab against the capabilities present: a check whose capability is missing is
/// skipped with the install command when graded, so the lab runs partly, or not at all when
/// every check would be skipped.
pub fn lab_rows(catalog: &Catalog, capabilities: &[CapabilityRow]) -> Vec<LabRow> {
    let missing = |name: &str| capabilities.iter().any(|c| c.name == name && !c.present);
    catalog
        .labs
        .iter()
        .filter(|b| crate::labs::is_gradable(&b.lab))
        .map(|b| {
            let skipped: Vec<SkippedCheck> = b
                .lab
                .checks
                .iter()
                .filter_map(|c| {
                    let needs: Vec<String> = c
                        .capabilities
                        .iter()
                        .filter(|name| missing(name))
                        .cloned()
                        .collect();
                    (!needs.is_empty()).then(|| SkippedCheck {
                        check: c.id.clone(),
                        needs,
                    })
                })
                .collect();
            let runs = match skipped.len() {
                0 => Runs::Yes,
                n if n == b.lab.checks.len() => Runs::No,
                _ => Runs::Partly,
            };
            LabRow {
                number: b.lab.number,
                id: b.lab.id.clone(),
                runs,
                skipped,
            }
        })
        .collect()
}

/// What `doctor` reads on an EKS cluster beyond its nodes, for [`eks_findings`]: the DaemonSets
/// (the device plugins), Karpenter's NodePools and EC2NodeClasses and Auto Mode's NodeClasses.
/// Only get/list, as every other doctor read.
pub fn eks_queries() -> Vec<Query> {
    vec![
        Query::cluster(&kinds::DAEMONSETS),
        Query::cluster(&kinds::NODEPOOLS),
        Query::cluster(&kinds::EC2NODECLASSES),
        Query::cluster(&kinds::EKS_NODECLASSES),
    ]
}

pub async fn inspect(conn: &Conn, catalog: &Catalog) -> Result<DoctorReport, Error> {
    let discovery = Discovery::cached(conn);
    let queries = vec![crate::observe::Query::cluster(&kinds::NODES)];
    // The gather probes the server beside its reads; the version is then known.
    let obs = crate::cluster::gather(conn, &discovery, &queries).await?;
    let version = crate::cluster::probe(conn).await?;
    let nodes_objs = obs.list(&queries[0]).map_err(|u| {
        Error::environment(
            format!("ノードの一覧を取得できません: {u}"),
            format!("cannot list nodes: {u}"),
        )
    })?;
    let facts = NodeFacts::all(&nodes_objs)?;
    let profile = Profile::detect(&nodes_objs);

    let nodes = facts
        .iter()
        .map(|n| {
            let mut missing = Vec::new();
            let mut syncing = Vec::new();
            if profile == Some(Profile::Kind) {
                if let Some(i) = n.instance_type.as_deref().and_then(instances::lookup) {
                    for (res, want) in [
                        (GPU, i.gpus),
                        (EFA, i.efa),
                        (NEURON, i.neuron),
                        (NEURONCORE, i.neuroncores),
                    ] {
                        let want = i64::from(want);
                        let capacity = n.capacity.get(res).copied().unwrap_or(0);
                        if want > 0 && capacity < want {
                            missing.push(format!("{res}: {want}"));
                        } else if want > 0 && n.allocatable(res) < want {
                            syncing.push(format!("{res}: {want}"));
                        }
                    }
                }
            }
            NodeRow {
                name: n.name.clone(),
                zone: n.zone.clone(),
                instance_type: n.instance_type.clone(),
                gpu: n.allocatable(GPU),
                efa: n.allocatable(EFA),
                neuron: n.allocatable(NEURON),
                neuroncore: n.allocatable(NEURONCORE),
                missing_fake_capacity: missing,
                allocatable_pending: syncing,
            }
        })
        .collect();

    let all: Vec<&'static Capability> = capabilities::CAPABILITIES.iter().collect();
    let detected = super::detect::detect(conn, &discovery, &all, &facts, profile).await?;
    let caps = all
        .iter()
        .filter_map(|c| detected.get(c.name))
        .map(CapabilityRow::new)
        .collect::<Vec<_>>();
    let labs = lab_rows(catalog, &caps);
    let (findings, unread) = if profile == Some(Profile::Eks) {
        let queries = eks_queries();
        let obs = crate::cluster::gather_more(conn, &discovery, &queries).await?;
        let mut unread = Vec::new();
        let mut read = |q: &Query| -> Result<Vec<Obj>, String> {
            match obs.list(q) {
                Ok(objs) => Ok(objs.into_iter().cloned().collect()),
                // A CRD not served: nothing of that kind exists.
                Err(Unavailable::NotServed { .. }) => Ok(Vec::new()),
                Err(why) => {
                    unread.push(format!("{}: {why}", q.kind.resource_name()));
                    Err(why.to_string())
                }
            }
        };
        let daemon_sets = read(&queries[0]);
        let node_pools = read(&queries[1]).unwrap_or_default();
        let ec2_node_classes = read(&queries[2]).unwrap_or_default();
        let eks_node_classes = read(&queries[3]).unwrap_or_default();
        let nodes: Vec<Obj> = nodes_objs.iter().map(|o| (*o).clone()).collect();
        let state = EksState {
            nodes: &nodes,
            daemon_sets: daemon_sets.as_deref().map_err(String::as_str),
            node_pools: &node_pools,
            ec2_node_classes: &ec2_node_classes,
            eks_node_classes: &eks_node_classes,
        };
        (eks_findings(&state), unread)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(DoctorReport {
        schema_version: 1,
        context: conn.context.clone(),
        server: conn.server.clone(),
        server_version: version.git_version,
        profile,
        nodes,
        capabilities: caps,
        labs,
        findings,
        unread,
    })
}

// --- EKS findings -------------------------------------------------------------------------------

/// What silently keeps labs from running on an EKS cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Problem {
    /// A node with GPUs or Neuron devices, on a type with EFA, advertises no EFA.
    NoEfa,
    /// A node's, EC2NodeClass's or NodeClass's root volume cannot hold the labs' images.
    SmallRootVolume,
    /// A node with GPUs or Neuron devices advertises none: its device plugin is missing.
    DevicePluginMissing,
}

/// One problem, what it is about, and its fix, in English and Japanese.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub problem: Problem,
    /// `Node ip-10-0-1-5`, `EC2NodeClass default`, `NodeClass default`.
    pub subject: String,
    pub message: String,
    pub message_ja: String,
    pub fix: String,
    pub fix_ja: String,
}

impl Finding {
    pub fn message_in(&self, ja: bool) -> &str {
        if ja {
            &self.message_ja
        } else {
            &self.message
        }
    }

    pub fn fix_in(&self, ja: bool) -> &str {
        if ja {
            &self.fix_ja
        } else {
            &self.fix
        }
    }
}

/// What [`eks_findings`] judges: the objects doctor read.
pub struct EksState<'a> {
    pub nodes: &'a [Obj],
    /// Every DaemonSet, or why they could not be read.
    pub daemon_sets: Result<&'a [Obj], &'a str>,
    pub node_pools: &'a [Obj],
    pub ec2_node_classes: &'a [Obj],
    pub eks_node_classes: &'a [Obj],
}

/// A device plugin, found by the image its DaemonSet runs.
struct Plugin {
    resource: &'static str,
    name: &'static str,
    /// The end of its image repository, in any registry.
    image: &'static str,
}

const EFA_PLUGIN: Plugin = Plugin {
    resource: EFA,
    name: "EFA device plugin",
    image: components::EFA_PLUGIN_IMAGE,
};
/// NVIDIA/k8s-device-plugin's image `nvcr.io/nvidia/k8s-device-plugin` (the static manifest,
/// the Helm chart and the GPU Operator all run it).
const NVIDIA_PLUGIN: Plugin = Plugin {
    resource: GPU,
    name: "NVIDIA device plugin",
    image: "nvidia/k8s-device-plugin",
};
/// aws-neuron-sdk's `public.ecr.aws/neuron/neuron-device-plugin`.
const NEURON_PLUGIN: Plugin = Plugin {
    resource: NEURON,
    name: "Neuron device plugin",
    image: "neuron/neuron-device-plugin",
};

/// Why a node lacks what a plugin advertises, as far as the DaemonSets show it.
enum Cause {
    /// No DaemonSet runs the plugin's image.
    NoDaemonSet,
    /// Its DaemonSet cannot place a pod on the node: these taints, or its node affinity or
    /// selector.
    Refused {
        daemon_set: String,
        taints: Vec<k8s_openapi::api::core::v1::Taint>,
        selection: bool,
    },
    /// Its DaemonSet may run there: the cause is not visible in what doctor reads.
    MayRun { daemon_set: String },
    /// The DaemonSets could not be read.
    Unread(String),
    /// An EKS Auto Mode node: its device plugins are built in.
    AutoMode,
}

fn is_plugin(ds: &Obj, plugin: &Plugin) -> bool {
    ds.value["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["image"].as_str())
        .any(|image| crate::facts::images::repository(image).ends_with(plugin.image))
}

fn cause(state: &EksState, plugin: &Plugin, node: &Obj, facts: &NodeFacts) -> Cause {
    let daemon_sets = match state.daemon_sets {
        Ok(d) => d,
        Err(why) => return Cause::Unread(why.to_string()),
    };
    let mine: Vec<&Obj> = daemon_sets
        .iter()
        .filter(|d| is_plugin(d, plugin))
        .collect();
    if mine.is_empty() {
        return Cause::NoDaemonSet;
    }
    let taints = components::blocking_taints(node);
    let mut first_refusal = None;
    for ds in &mine {
        let name = format!("{}/{}", ds.namespace().unwrap_or("-"), ds.name());
        let tolerations = components::pod_tolerations(ds);
        let untolerated = components::untolerated(&tolerations, &taints);
        // Node affinity and nodeSelector, as the scheduler reads them (DaemonSet pods tolerate
        // cordons and the node lifecycle taints by themselves).
        let spec: Option<k8s_openapi::api::core::v1::PodSpec> =
            serde_json::from_value(ds.value["spec"]["template"]["spec"].clone()).ok();
        let selection = spec.is_some_and(|spec| {
            crate::verify::kit::k8s::placement::refusals(&spec, facts)
                .iter()
                .any(|r| {
                    matches!(
                        r,
                        crate::verify::kit::k8s::placement::Refusal::NodeAffinity
                            | crate::verify::kit::k8s::placement::Refusal::NodeSelector { .. }
                    )
                })
        });
        if untolerated.is_empty() && !selection {
            return Cause::MayRun { daemon_set: name };
        }
        first_refusal.get_or_insert(Cause::Refused {
            daemon_set: name,
            taints: untolerated,
            selection,
        });
    }
    first_refusal.unwrap_or(Cause::NoDaemonSet)
}

fn taint_text(t: &k8s_openapi::api::core::v1::Taint) -> String {
    match t.value.as_deref() {
        Some(v) if !v.is_empty() => format!("{}={}:{}", t.key, v, t.effect),
        _ => format!("{}:{}", t.key, t.effect),
    }
}

/// The sentence that says why, and the fix, in (en, ja) pairs.
fn explain(
    cause: &Cause,
    plugin: &Plugin,
    node: &str,
    instance_type: &str,
) -> ((String, String), (String, String)) {
    let (name, image, resource) = (plugin.name, plugin.image, plugin.resource);
    let setup = "`trainlab setup eks`";
    match cause {
        Cause::NoDaemonSet => (
            (
                format!("no DaemonSet in the cluster runs the {name} (image …/{image})"),
                format!("{name}（イメージ …/{image}）を動かす DaemonSet がクラスターにありません"),
            ),
            (
                format!("{setup} installs it"),
                format!("{setup} がインストールします"),
            ),
        ),
        Cause::Refused {
            daemon_set,
            taints,
            selection,
        } => {
            let mut en = Vec::new();
            let mut ja = Vec::new();
            let mut fix_en = vec![format!("{setup} re-applies the plugin so that it does")];
            let mut fix_ja = vec![format!("{setup} でプラグインを適用し直せば載ります")];
            if !taints.is_empty() {
                let list: Vec<String> = taints.iter().map(taint_text).collect();
                let list = list.join(", ");
                en.push(format!("does not tolerate its taints {list}"));
                ja.push(format!("ノードの taint {list} を許容していません"));
                let tolerations: Vec<String> = taints
                    .iter()
                    .map(|t| format!("{{key: {}, operator: Exists, effect: {}}}", t.key, t.effect))
                    .collect();
                let tolerations = tolerations.join(", ");
                fix_en.push(format!(
                    "or add to {daemon_set} spec.template.spec.tolerations: {tolerations}"
                ));
                fix_ja.push(format!(
                    "または {daemon_set} の spec.template.spec.tolerations に {tolerations} を加えてください"
                ));
            }
            if *selection {
                en.push(format!(
                    "does not select the node (its node affinity or nodeSelector leaves out {instance_type})"
                ));
                ja.push(format!(
                    "ノードを選びません（node affinity か nodeSelector に {instance_type} が入っていません）"
                ));
                fix_en.push(format!("or add {instance_type} to its node affinity"));
                fix_ja.push(format!("または node affinity に {instance_type} を加えてください"));
            }
            (
                (
                    format!("the {name} DaemonSet {daemon_set} {}", en.join(" and ")),
                    format!("{name} の DaemonSet {daemon_set} が{}", ja.join("。また")),
                ),
                (fix_en.join(", "), fix_ja.join("。")),
            )
        }
        Cause::MayRun { daemon_set } => {
            let (ns, _) = daemon_set.split_once('/').unwrap_or(("kube-system", ""));
            let pods = format!("`kubectl -n {ns} get pods -o wide --field-selector spec.nodeName={node}`");
            let efa = resource == EFA;
            (
                if efa {
                    (
                        format!("the {name} DaemonSet {daemon_set} may run there, so the node likely started without EFA interfaces (Karpenter and EKS Auto Mode attach them only to a node launched for a pending pod that requests {EFA}) or the plugin's pod is not running"),
                        format!("{name} の DaemonSet {daemon_set} はこのノードで動けるので、ノードが EFA インターフェースなしで起動した（Karpenter と EKS Auto Mode は {EFA} を要求する Pending の Pod のために起動したノードにだけ付けます）か、プラグインの Pod が動いていない可能性があります"),
                    )
                } else {
                    (
                        format!("the {name} DaemonSet {daemon_set} may run there: its pod on the node is not running or found no device"),
                        format!("{name} の DaemonSet {daemon_set} はこのノードで動けます。ノード上の Pod が動いていないか、デバイスを見つけていません"),
                    )
                },
                if efa {
                    (
                        format!("let a pod that requests {EFA} start the node (delete this node while such a pod is pending, and Karpenter replaces it with EFA), and check the plugin's pod with {pods}"),
                        format!("{EFA} を要求する Pod にノードを起動させてください（そのような Pod が Pending のときにこのノードを削除すれば Karpenter が EFA 付きで置き換えます）。プラグインの Pod は {pods} で確かめられます"),
                    )
                } else {
                    (
                        format!("check the plugin's pod and its log: {pods}"),
                        format!("プラグインの Pod とログを確かめてください: {pods}"),
                    )
                },
            )
        }
        Cause::AutoMode => (
            (
                format!("EKS Auto Mode runs its own {name} on its nodes, so the node likely started without EFA interfaces (Auto Mode attaches them only to a node launched for a pending pod that requests {EFA})"),
                format!("EKS Auto Mode はノードで自前の {name} を動かすので、ノードが EFA インターフェースなしで起動した可能性があります（Auto Mode は {EFA} を要求する Pending の Pod のために起動したノードにだけ付けます）"),
            ),
            (
                format!("let a pod that requests {EFA} start the node: delete this node while such a pod is pending, and Auto Mode replaces it with EFA"),
                format!("{EFA} を要求する Pod にノードを起動させてください。そのような Pod が Pending のときにこのノードを削除すれば、Auto Mode が EFA 付きで置き換えます"),
            ),
        ),
        Cause::Unread(why) => (
            (
                format!("the DaemonSets could not be read ({why}), so the cause cannot be seen"),
                format!("DaemonSet を読めなかった（{why}）ため原因はわかりません"),
            ),
            (
                format!("{setup} installs the {name}; allowing `list` on daemonsets.apps lets doctor say more"),
                format!("{setup} が {name} をインストールします。daemonsets.apps の `list` を許可すると doctor が詳しく調べられます"),
            ),
        ),
    }
}

fn what_it_has(a: Accelerators) -> (&'static str, &'static str) {
    match (a.gpu, a.neuron) {
        (true, true) => ("GPUs and Neuron devices", "GPU と Neuron デバイス"),
        (true, false) => ("GPUs", "GPU "),
        _ => ("Neuron devices", "Neuron デバイス"),
    }
}

/// EKS Auto Mode's nodes carry `eks.amazonaws.com/compute-type: auto` (Amazon EKS User Guide,
/// "Control if a workload is deployed on EKS Auto Mode nodes"); they ship their device plugins.
fn is_auto_mode_node(node: &Obj) -> bool {
    node.label("eks.amazonaws.com/compute-type") == Some("auto")
}

const GIB: i64 = 1 << 30;

fn gib(bytes: i64) -> String {
    let tenths = (bytes * 10 + GIB / 2) / GIB;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// The root volume an EC2NodeClass gives, in bytes, and where the figure comes from (English,
/// Japanese). As Karpenter decides it (aws/karpenter-provider-aws v1.14.1
/// pkg/providers/instancetype/types.go, ephemeral storage): the mapping marked `rootVolume`,
/// else the one on the AMI family's ephemeral device (`/dev/xvdb` for Bottlerocket, whose
/// data volume holds the images; `/dev/sda1` for Windows; `/dev/xvda` for AL2/AL2023),
/// else `DefaultEBS`, 20 GiB.
fn ec2_node_class_root(class: &Obj) -> (i64, String, String) {
    let spec = &class.value["spec"];
    let family = spec["amiFamily"]
        .as_str()
        .map(str::to_ascii_lowercase)
        .or_else(|| {
            spec["amiSelectorTerms"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|t| t["alias"].as_str())
                .and_then(|a| a.split('@').next())
                .map(str::to_ascii_lowercase)
        })
        .unwrap_or_default();
    let device = if family.starts_with("bottlerocket") {
        "/dev/xvdb"
    } else if family.starts_with("windows") {
        "/dev/sda1"
    } else {
        "/dev/xvda"
    };
    let mappings: Vec<&serde_json::Value> = spec["blockDeviceMappings"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let chosen = mappings
        .iter()
        .find(|m| m["rootVolume"].as_bool() == Some(true))
        .or_else(|| {
            mappings
                .iter()
                .find(|m| m["deviceName"].as_str() == Some(device))
        });
    let size = chosen.and_then(|m| {
        let text = m["ebs"]["volumeSize"].as_str()?;
        crate::quantity::Quantity::parse(text).ok()?.count().ok()
    });
    let default = crate::facts::images::KARPENTER_DEFAULT_ROOT_GIB as i64 * GIB;
    match (chosen, size) {
        (Some(m), Some(bytes)) => {
            let dev = m["deviceName"].as_str().unwrap_or(device);
            (
                bytes,
                format!("blockDeviceMappings {dev}"),
                format!("blockDeviceMappings の {dev}"),
            )
        }
        _ => (
            default,
            "no root volume in blockDeviceMappings: Karpenter's default".into(),
            "blockDeviceMappings にルートボリュームがないため Karpenter の既定値".into(),
        ),
    }
}

/// An Auto Mode NodeClass's `ephemeralStorage.size`, else its default, 80 GiB (Amazon EKS User
/// Guide, "Create a Node Class for Amazon EKS": awsdocs/amazon-eks-user-guide 4d52b4d0
/// latest/ug/automode/create-node-class.adoc, `ephemeralStorage` "shown with default values",
/// `size: "80Gi"`).
fn eks_node_class_root(class: &Obj) -> (i64, String, String) {
    let size = class.value["spec"]["ephemeralStorage"]["size"]
        .as_str()
        .and_then(|s| crate::quantity::Quantity::parse(s).ok()?.count().ok());
    match size {
        Some(bytes) => (
            bytes,
            "ephemeralStorage.size".into(),
            "ephemeralStorage.size".into(),
        ),
        None => (
            80 * GIB,
            "no ephemeralStorage.size: Auto Mode's default".into(),
            "ephemeralStorage.size がないため Auto Mode の既定値".into(),
        ),
    }
}

/// What silently keeps labs from running on an EKS cluster: accelerated nodes without EFA (with
/// the EFA plugin's DaemonSet as the cause when it shows), accelerated nodes and the node classes
/// of accelerated NodePools (and the ones named `default`, which lab 15's answer and the
/// Karpenter guide use) whose root volume cannot hold the labs' largest image, and accelerated
/// nodes whose device plugin advertises nothing. Pure: judged from what doctor read.
pub fn eks_findings(state: &EksState) -> Vec<Finding> {
    use crate::facts::images;
    let mut out = Vec::new();
    let need = images::required_gib() as i64 * GIB;
    let root = images::root_volume_gib();
    let largest = images::largest();
    let image = format!("{}:{}", largest.repository, largest.tag);
    let gb = largest.compressed_mb / 1000;
    for node in state.nodes {
        let accel = components::node_accelerators(node);
        if !accel.any() {
            continue;
        }
        let Ok(facts) = NodeFacts::from_obj(node) else {
            continue;
        };
        let name = &facts.name;
        let subject = format!("Node {name}");
        let itype = facts.instance_type.clone().unwrap_or_else(|| "?".into());
        let (has_en, has_ja) = what_it_has(accel);
        let auto = is_auto_mode_node(node);
        let advertised = |res: &str| {
            facts.allocatable(res) > 0 || facts.capacity.get(res).is_some_and(|n| *n > 0)
        };
        // Device plugins: Auto Mode ships its own, so only other nodes can lack one.
        let mut plugins = Vec::new();
        if accel.gpu && !advertised(GPU) {
            plugins.push(&NVIDIA_PLUGIN);
        }
        if accel.neuron && !advertised(NEURON) && !advertised(NEURONCORE) {
            plugins.push(&NEURON_PLUGIN);
        }
        for plugin in plugins.into_iter().filter(|_| !auto) {
            let c = cause(state, plugin, node, &facts);
            let ((why_en, why_ja), (fix_en, fix_ja)) = explain(&c, plugin, name, &itype);
            let res = plugin.resource;
            out.push(Finding {
                problem: Problem::DevicePluginMissing,
                subject: subject.clone(),
                message: format!("node {name} ({itype}) has {has_en} but advertises no {res}: pods that request it stay Pending; {why_en}"),
                message_ja: format!("ノード {name}（{itype}）には {has_ja}がありますが {res} を提供していません。これを要求する Pod は Pending のままです。{why_ja}"),
                fix: fix_en,
                fix_ja,
            });
        }
        // EFA, on the types the instance table knows to have it.
        let efa = itype_efa(&itype);
        if efa > 0 && !advertised(EFA) {
            let c = if auto {
                Cause::AutoMode
            } else {
                cause(state, &EFA_PLUGIN, node, &facts)
            };
            let ((why_en, why_ja), (fix_en, fix_ja)) = explain(&c, &EFA_PLUGIN, name, &itype);
            out.push(Finding {
                problem: Problem::NoEfa,
                subject: subject.clone(),
                message: format!("node {name} ({itype}, {efa} EFA interfaces) has {has_en} but no {EFA}: labs that ask for EFA stay Pending there; {why_en}"),
                message_ja: format!("ノード {name}（{itype}、EFA インターフェース {efa} 個）には {has_ja}がありますが {EFA} がありません。EFA を要求する lab はそこで Pending のままです。{why_ja}"),
                fix: fix_en,
                fix_ja,
            });
        }
        // The root volume, as the kubelet reports its filesystem.
        if let Some(bytes) = facts.capacity.get("ephemeral-storage").copied() {
            if bytes < need {
                let (has, needs) = (gib(bytes), images::required_gib());
                out.push(Finding {
                    problem: Problem::SmallRootVolume,
                    subject,
                    message: format!("node {name} has {has} GiB of ephemeral storage; pulling the labs' largest image ({image}, about {gb} GB to download and twice that unpacked) needs {needs} GiB"),
                    message_ja: format!("ノード {name} のエフェメラルストレージは {has} GiB です。lab の最大のイメージ（{image}、ダウンロード約 {gb} GB、展開後はその約 2 倍）の pull には {needs} GiB 必要です"),
                    fix: format!("give its node group or node class a root volume of at least {root} GiB (`trainlab setup eks` makes the NodePools {} and {} with {root} GiB)", components::GPU_NODE_CLASS, components::NEURON_NODE_CLASS),
                    fix_ja: format!("ノードグループかノードクラスのルートボリュームを {root} GiB 以上にしてください（`trainlab setup eks` は {root} GiB の NodePool {} と {} を作ります）", components::GPU_NODE_CLASS, components::NEURON_NODE_CLASS),
                });
            }
        }
    }
    // Node classes that accelerated NodePools use, and `default`.
    let used_by = |group: &str, kind: &str, name: &str| -> Vec<String> {
        state
            .node_pools
            .iter()
            .filter(|p| components::node_pool_accelerators(p).any())
            .filter(|p| {
                let r = &p.value["spec"]["template"]["spec"]["nodeClassRef"];
                r["name"] == name
                    && r["kind"].as_str().is_none_or(|k| k == kind)
                    && r["group"].as_str().is_none_or(|g| g == group)
            })
            .map(|p| p.name().to_string())
            .collect()
    };
    let classes = state
        .ec2_node_classes
        .iter()
        .map(|c| {
            (
                "karpenter.k8s.aws",
                "EC2NodeClass",
                c,
                ec2_node_class_root(c),
            )
        })
        .chain(
            state
                .eks_node_classes
                .iter()
                .map(|c| ("eks.amazonaws.com", "NodeClass", c, eks_node_class_root(c))),
        );
    for (group, kind, class, (bytes, from_en, from_ja)) in classes {
        let name = class.name();
        let pools = used_by(group, kind, name);
        if (pools.is_empty() && name != "default") || bytes >= need {
            continue;
        }
        let has = gib(bytes);
        let needs = images::required_gib();
        let (used_en, used_ja) = if pools.is_empty() {
            (
                "lab 15's answer and the Karpenter guide use it".to_string(),
                "lab 15 の解答と Karpenter のガイドが使います".to_string(),
            )
        } else {
            let list = pools.join(", ");
            (
                format!("the GPU/Trainium NodePools {list} use it"),
                format!("GPU/Trainium の NodePool {list} が使っています"),
            )
        };
        let (fix, fix_ja) = if kind == "EC2NodeClass" {
            (
                format!("set spec.blockDeviceMappings to [{{deviceName: /dev/xvda, rootVolume: true, ebs: {{volumeSize: {root}Gi, volumeType: gp3}}}}] (AL2023), or use the NodePools `trainlab setup eks` makes ({} and {}, {root} GiB)", components::GPU_NODE_CLASS, components::NEURON_NODE_CLASS),
                format!("spec.blockDeviceMappings を [{{deviceName: /dev/xvda, rootVolume: true, ebs: {{volumeSize: {root}Gi, volumeType: gp3}}}}]（AL2023）にするか、`trainlab setup eks` が作る NodePool（{} と {}、{root} GiB）を使ってください", components::GPU_NODE_CLASS, components::NEURON_NODE_CLASS),
            )
        } else {
            (
                format!("set spec.ephemeralStorage.size: {root}Gi, or use the NodePools `trainlab setup eks` makes ({} and {}, {root} GiB)", components::GPU_NODE_CLASS, components::NEURON_NODE_CLASS),
                format!("spec.ephemeralStorage.size を {root}Gi にするか、`trainlab setup eks` が作る NodePool（{} と {}、{root} GiB）を使ってください", components::GPU_NODE_CLASS, components::NEURON_NODE_CLASS),
            )
        };
        out.push(Finding {
            problem: Problem::SmallRootVolume,
            subject: format!("{kind} {name}"),
            message: format!("{kind} {name} gives nodes a {has} GiB root volume ({from_en}); {used_en}, and pulling the labs' largest image ({image}, about {gb} GB to download and twice that unpacked) needs {needs} GiB"),
            message_ja: format!("{kind} {name} のノードのルートボリュームは {has} GiB です（{from_ja}）。{used_ja}。lab の最大のイメージ（{image}、ダウンロード約 {gb} GB、展開後はその約 2 倍）の pull には {needs} GiB 必要です"),
            fix,
            fix_ja,
        });
    }
    out
}

/// EFA interfaces of an instance type the table knows (0 otherwise).
fn itype_efa(instance_type: &str) -> u32 {
    instances::efa_interfaces(instance_type).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(absent: &[&str]) -> Vec<CapabilityRow> {
        capabilities::CAPABILITIES
            .iter()
            .map(|c| CapabilityRow {
                name: c.name,
                present: !absent.contains(&c.name),
                detail: String::new(),
                install: None,
                seen: Vec::new(),
                install_ja: None,
            })
            .collect()
    }

    fn row<'a>(labs: &'a [LabRow], id: &str) -> &'a LabRow {
        labs.iter().find(|l| l.id == id).unwrap()
    }

    #[test]
    fn a_cluster_with_every_capability_runs_every_lab() {
        let c = Catalog::embedded().unwrap();
        let labs = lab_rows(&c, &rows(&[]));
        assert_eq!(
            labs.len(),
            c.labs
                .iter()
                .filter(|b| crate::labs::is_gradable(&b.lab))
                .count()
        );
        assert!(labs
            .iter()
            .all(|l| l.runs == Runs::Yes && l.skipped.is_empty()));
    }

    #[test]
    fn a_missing_capability_skips_exactly_the_checks_that_name_it() {
        let c = Catalog::embedded().unwrap();
        let labs = lab_rows(&c, &rows(&["volcano"]));
        let lab = &c.get("volcano-gang").unwrap().lab;
        let needing: Vec<&str> = lab
            .checks
            .iter()
            .filter(|k| k.capabilities.iter().any(|n| n == "volcano"))
            .map(|k| k.id.as_str())
            .collect();
        assert!(!needing.is_empty());
        let r = row(&labs, "volcano-gang");
        let skipped: Vec<&str> = r.skipped.iter().map(|s| s.check.as_str()).collect();
        assert_eq!(skipped, needing);
        assert!(r.skipped.iter().all(|s| s.needs == ["volcano"]));
        let expected = if needing.len() == lab.checks.len() {
            Runs::No
        } else {
            Runs::Partly
        };
        assert_eq!(r.runs, expected);
        // A lab that names no Volcano capability is untouched.
        let other = c
            .labs
            .iter()
            .find(|b| {
                crate::labs::is_gradable(&b.lab)
                    && b.lab
                        .checks
                        .iter()
                        .all(|k| !k.capabilities.iter().any(|n| n == "volcano"))
            })
            .unwrap();
        assert_eq!(row(&labs, &other.lab.id).runs, Runs::Yes);
    }

    #[test]
    fn a_lab_whose_every_check_is_skipped_does_not_run() {
        let c = Catalog::embedded().unwrap();
        let all: Vec<&str> = capabilities::CAPABILITIES.iter().map(|c| c.name).collect();
        let labs = lab_rows(&c, &rows(&all));
        for l in &labs {
            let lab = &c.get(&l.id).unwrap().lab;
            let every = lab.checks.iter().all(|k| !k.capabilities.is_empty());
            assert_eq!(l.runs == Runs::No, every, "{}: {:?}", l.id, l.runs);
        }
        assert!(labs.iter().any(|l| l.runs == Runs::No));
    }
    // --- EKS findings ---------------------------------------------------------------------------

    use crate::observe::Origin;
    use serde_json::{json, Value};

    fn obj(v: Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    /// An EKS node of `itype` with `taints`, these extended resources and root filesystem.
    fn eks_node(name: &str, itype: &str, taints: Value, resources: Value, disk: &str) -> Obj {
        let mut status = resources.clone();
        status["ephemeral-storage"] = json!(disk);
        obj(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": itype}},
            "spec": {"providerID": format!("aws:///us-west-2a/i-{name}"), "taints": taints},
            "status": {"capacity": status, "allocatable": status},
        }))
    }

    fn gpu_taint() -> Value {
        json!([{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    }

    /// The chart's EFA DaemonSet: `tolerations: []`, so only CriticalAddonsOnly.
    fn chart_efa() -> Obj {
        obj(components::efa_device_plugin(&[])[0].clone())
    }

    fn judge(nodes: &[Obj], daemon_sets: &[Obj]) -> Vec<Finding> {
        eks_findings(&EksState {
            nodes,
            daemon_sets: Ok(daemon_sets),
            node_pools: &[],
            ec2_node_classes: &[],
            eks_node_classes: &[],
        })
    }

    fn of(findings: &[Finding], problem: Problem) -> Vec<&Finding> {
        findings.iter().filter(|f| f.problem == problem).collect()
    }

    #[test]
    fn a_tainted_gpu_node_without_efa_names_the_untolerated_taint_and_the_toleration() {
        let nodes = [eks_node(
            "p5-a",
            "p5.48xlarge",
            gpu_taint(),
            json!({"nvidia.com/gpu": "8"}),
            "300Gi",
        )];
        let f = judge(&nodes, &[chart_efa()]);
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(
            (f.problem, f.subject.as_str()),
            (Problem::NoEfa, "Node p5-a")
        );
        assert!(
            f.message.contains(
                "node p5-a (p5.48xlarge, 32 EFA interfaces) has GPUs but no vpc.amazonaws.com/efa"
            ),
            "{}",
            f.message
        );
        assert!(f.message.contains("the EFA device plugin DaemonSet kube-system/aws-efa-k8s-device-plugin does not tolerate its taints nvidia.com/gpu:NoSchedule"), "{}", f.message);
        assert!(f.fix.contains("`trainlab setup eks`"), "{}", f.fix);
        assert!(
            f.fix
                .contains("{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"),
            "{}",
            f.fix
        );
        assert!(
            f.message_ja.contains("nvidia.com/gpu:NoSchedule")
                && f.fix_ja.contains("`trainlab setup eks`"),
            "{}",
            f.message_ja
        );

        // With the tolerations setup eks gives it, the taint is no longer the cause.
        let fixed = obj(
            components::efa_device_plugin(&components::accelerator_tolerations(&nodes, &[]))[0]
                .clone(),
        );
        let f = judge(&nodes, std::slice::from_ref(&fixed));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .contains("may run there, so the node likely started without EFA interfaces"),
            "{}",
            f[0].message
        );
        // And once the node advertises EFA, nothing is said.
        let good = [eks_node(
            "p5-a",
            "p5.48xlarge",
            gpu_taint(),
            json!({"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}),
            "300Gi",
        )];
        assert!(judge(&good, &[fixed]).is_empty());
    }

    #[test]
    fn the_efa_plugins_cause_is_its_absence_its_affinity_or_an_unreadable_list() {
        let trn = [eks_node(
            "trn-a",
            "trn1.32xlarge",
            json!([{"key": "aws.amazon.com/neuron", "effect": "NoSchedule"}]),
            json!({"aws.amazon.com/neuron": "16"}),
            "300Gi",
        )];
        let f = judge(&trn, &[]);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .contains("has Neuron devices but no vpc.amazonaws.com/efa"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message
                .contains("no DaemonSet in the cluster runs the EFA device plugin"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].fix, "`trainlab setup eks` installs it");

        // A plugin that tolerates everything but selects other instance types.
        let mut ds = components::efa_device_plugin(&[json!({"operator": "Exists"})])[0].clone();
        ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            ["matchExpressions"][0]["values"] = json!(["p4d.24xlarge"]);
        let f = judge(&trn, &[obj(ds)]);
        assert!(f[0].message.contains("does not select the node (its node affinity or nodeSelector leaves out trn1.32xlarge)"), "{}", f[0].message);
        assert!(!f[0].message.contains("taints"), "{}", f[0].message);

        let f = eks_findings(&EksState {
            nodes: &trn,
            daemon_sets: Err("forbidden"),
            node_pools: &[],
            ec2_node_classes: &[],
            eks_node_classes: &[],
        });
        assert!(
            f[0].message
                .contains("the DaemonSets could not be read (forbidden)"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn accelerated_nodes_without_their_device_plugin_are_named_except_on_auto_mode() {
        // A p4d whose GPUs nobody advertises, and a trn1 whose Neuron devices nobody does.
        let nodes = [
            eks_node(
                "p4d-a",
                "p4d.24xlarge",
                gpu_taint(),
                json!({"vpc.amazonaws.com/efa": "4"}),
                "300Gi",
            ),
            eks_node(
                "trn-a",
                "trn1.32xlarge",
                json!([]),
                json!({"vpc.amazonaws.com/efa": "8"}),
                "300Gi",
            ),
            eks_node("cpu-a", "m5.large", json!([]), json!({}), "20Gi"),
        ];
        let f = judge(&nodes, &[chart_efa()]);
        let missing = of(&f, Problem::DevicePluginMissing);
        assert_eq!(missing.len(), 2, "{f:#?}");
        assert!(
            missing[0]
                .message
                .contains("node p4d-a (p4d.24xlarge) has GPUs but advertises no nvidia.com/gpu"),
            "{}",
            missing[0].message
        );
        assert!(
            missing[0]
                .message
                .contains("no DaemonSet in the cluster runs the NVIDIA device plugin"),
            "{}",
            missing[0].message
        );
        assert!(
            missing[1]
                .message
                .contains("advertises no aws.amazon.com/neuron"),
            "{}",
            missing[1].message
        );
        assert!(
            f.iter().all(|f| !f.subject.contains("cpu-a")),
            "a CPU node is none of this: {f:#?}"
        );

        // The NVIDIA plugin from upstream's static manifest, which tolerates nvidia.com/gpu only.
        let nvidia = obj(json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"name": "n"}}, "template": {"metadata": {"labels": {"name": "n"}}, "spec": {
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{"name": "c", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}]}}},
        }));
        let team = [eks_node(
            "p4d-b",
            "p4d.24xlarge",
            json!([{"key": "team", "value": "ml", "effect": "NoSchedule"}]),
            json!({"vpc.amazonaws.com/efa": "4"}),
            "300Gi",
        )];
        let f = judge(&team, &[nvidia]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].message.contains("the NVIDIA device plugin DaemonSet kube-system/nvidia-device-plugin-daemonset does not tolerate its taints team=ml:NoSchedule"), "{}", f[0].message);

        // Auto Mode ships its plugins: nothing to install there.
        let mut auto = eks_node(
            "auto-a",
            "p4d.24xlarge",
            gpu_taint(),
            json!({"vpc.amazonaws.com/efa": "4"}),
            "300Gi",
        );
        auto.value_mut()["metadata"]["labels"]["eks.amazonaws.com/compute-type"] = json!("auto");
        assert!(judge(std::slice::from_ref(&auto), &[]).is_empty());
        // Without EFA, the cause is how Auto Mode launched it, not a plugin to install.
        auto.value_mut()["status"]["capacity"] = json!({"ephemeral-storage": "300Gi"});
        auto.value_mut()["status"]["allocatable"] = json!({"ephemeral-storage": "300Gi"});
        let f = judge(&[auto], &[]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].problem, Problem::NoEfa);
        assert!(
            f[0].message
                .contains("EKS Auto Mode runs its own EFA device plugin on its nodes"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn root_volumes_too_small_for_the_labs_images_are_named_with_the_size_to_give() {
        use crate::facts::images;
        let need = images::required_gib();
        let small = format!("{}Gi", need - 1);
        let nodes = [
            eks_node(
                "p5-small",
                "p5.48xlarge",
                json!([]),
                json!({"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}),
                &small,
            ),
            eks_node(
                "p5-big",
                "p5.48xlarge",
                json!([]),
                json!({"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}),
                &format!("{need}Gi"),
            ),
            eks_node("cpu-small", "m5.large", json!([]), json!({}), "20Gi"),
        ];
        let f = judge(&nodes, &[]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].problem, f[0].subject.as_str()),
            (Problem::SmallRootVolume, "Node p5-small")
        );
        assert!(
            f[0].message
                .contains(&format!("has {}.0 GiB of ephemeral storage", need - 1)),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains(&format!("nvcr.io/nvidia/nemo:25.04, about 29 GB to download and twice that unpacked) needs {need} GiB")), "{}", f[0].message);
        assert!(
            f[0].fix
                .contains(&format!("at least {} GiB", images::root_volume_gib())),
            "{}",
            f[0].fix
        );

        let pool = |name: &str, class: &str, kind: &str, family: &str| {
            obj(json!({
                "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
                "spec": {"template": {"spec": {
                    "nodeClassRef": {"group": if kind == "NodeClass" { "eks.amazonaws.com" } else { "karpenter.k8s.aws" }, "kind": kind, "name": class},
                    "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [family]}]}}},
            }))
        };
        let class = |name: &str, spec: Value| {
            obj(
                json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name}, "spec": spec}),
            )
        };
        let alias = json!([{"alias": "al2023@latest"}]);
        let pools = [
            pool("gpu", "small", "EC2NodeClass", "p5"),
            pool("gpu-big", "big", "EC2NodeClass", "p5"),
            pool("rocket", "rocket", "EC2NodeClass", "p5"),
            pool("cpu", "cpu", "EC2NodeClass", "m5"),
            pool("auto-gpu", "auto-small", "NodeClass", "p5"),
        ];
        let ec2 = [
            // No blockDeviceMappings: Karpenter's 20 GiB; not used by a pool, but named `default`.
            class("default", json!({"amiSelectorTerms": alias})),
            class(
                "small",
                json!({"amiSelectorTerms": alias, "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}}]}),
            ),
            class(
                "big",
                json!({"amiSelectorTerms": alias, "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": true, "ebs": {"volumeSize": format!("{}Gi", images::root_volume_gib())}}]}),
            ),
            // Bottlerocket keeps images on its data volume, /dev/xvdb.
            class(
                "rocket",
                json!({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}], "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi"}},
                {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "200Gi"}}]}),
            ),
            // Used by CPU pools only.
            class("cpu", json!({"amiSelectorTerms": alias})),
        ];
        let auto = [
            obj(
                json!({"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass", "metadata": {"name": "auto-small"}, "spec": {"role": "r"}}),
            ),
            obj(
                json!({"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass", "metadata": {"name": "auto-big"}, "spec": {"ephemeralStorage": {"size": "150Gi"}}}),
            ),
        ];
        let f = eks_findings(&EksState {
            nodes: &[],
            daemon_sets: Ok(&[]),
            node_pools: &pools,
            ec2_node_classes: &ec2,
            eks_node_classes: &auto,
        });
        let subjects: Vec<&str> = f.iter().map(|f| f.subject.as_str()).collect();
        assert_eq!(
            subjects,
            [
                "EC2NodeClass default",
                "EC2NodeClass small",
                "NodeClass auto-small"
            ],
            "{f:#?}"
        );
        assert!(f[0].message.contains("gives nodes a 20.0 GiB root volume (no root volume in blockDeviceMappings: Karpenter's default); lab 15's answer"), "{}", f[0].message);
        assert!(f[1].message.contains("a 100.0 GiB root volume (blockDeviceMappings /dev/xvda); the GPU/Trainium NodePools gpu use it"), "{}", f[1].message);
        assert!(
            f[1].fix
                .contains(&format!("volumeSize: {}Gi", images::root_volume_gib())),
            "{}",
            f[1].fix
        );
        assert!(
            f[2].message
                .contains("80.0 GiB root volume (no ephemeralStorage.size: Auto Mode's default)"),
            "{}",
            f[2].message
        );
        assert!(
            f[2].fix.contains(&format!(
                "spec.ephemeralStorage.size: {}Gi",
                images::root_volume_gib()
            )),
            "{}",
            f[2].fix
        );
        // The node classes setup eks writes pass.
        let mut site = crate::profile::site::Site::default();
        for (k, v) in [
            ("node_role", "r"),
            ("subnet_id", "subnet-1"),
            ("security_group_ids", "sg-1"),
            ("zone", "us-west-2a"),
        ] {
            site.values.insert(k.into(), v.into());
        }
        for auto_mode in [false, true] {
            site.auto_mode = auto_mode;
            let objs: Vec<Obj> = components::node_classes(&site)
                .unwrap()
                .into_iter()
                .map(obj)
                .collect();
            let (classes, pools): (Vec<Obj>, Vec<Obj>) =
                objs.into_iter().partition(|o| o.kind() != "NodePool");
            let (ec2, auto): (Vec<Obj>, Vec<Obj>) = classes
                .into_iter()
                .partition(|o| o.kind() == "EC2NodeClass");
            let f = eks_findings(&EksState {
                nodes: &[],
                daemon_sets: Ok(&[]),
                node_pools: &pools,
                ec2_node_classes: &ec2,
                eks_node_classes: &auto,
            });
            assert!(f.is_empty(), "{f:#?}");
        }
    }
}
