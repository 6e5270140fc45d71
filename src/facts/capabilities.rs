//! Capabilities: what a check needs from the cluster (an API served by a CRD, a controller
//! running, a device advertised on nodes). One table serves lab validation, grading (a check
//! whose capability is missing is skipped with the install command) and `doctor`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::instances::{EFA, GPU, NEURON};
use crate::facts::NodeFacts;
use crate::facts::Profile;
use crate::observe::kinds::{self, ResourceKind};

/// One row of the table.
#[derive(Debug)]
pub struct Capability {
    pub name: &'static str,
    /// Kinds whose CRD proves the API is installed (any one served is enough).
    pub kinds: &'static [&'static ResourceKind],
    /// Controller Deployments (by name, in any namespace) that must each have an available
    /// replica; each entry lists the names one controller goes by (an install method may name
    /// it differently).
    pub controllers: &'static [&'static [&'static str]],
    /// A choice between other rows, by name: present when one of them is (a check that grades a
    /// PyTorchJob or a TrainJob needs one of their operators, not both). Its own `kinds`,
    /// `controllers` and `device` are empty.
    pub any_of: &'static [&'static str],
    /// An extended resource that some node must advertise.
    pub device: Option<&'static str>,
    /// Whether the kind profile provides it (`trainlab setup kind`). A capability the profile
    /// cannot provide (the Karpenter controller, FSx) is skipped on kind without blaming the
    /// environment.
    pub on_kind: bool,
    pub install_kind: Words,
    pub install_eks: Words,
}

/// A text of the table in both report languages (commands read the same in both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Words {
    pub en: &'static str,
    pub ja: &'static str,
}

impl Words {
    pub fn get(&self, ja: bool) -> &'static str {
        if ja {
            self.ja
        } else {
            self.en
        }
    }
}

/// The same words in both languages: a command.
const fn same(cmd: &'static str) -> Words {
    Words { en: cmd, ja: cmd }
}

// Controller Deployment names come from each project's install manifest or chart:
// volcano-sh/volcano@v1.15.1 installer/volcano-development.yaml (volcano-scheduler,
// volcano-controllers); kubeflow/mpi-operator@v0.8.0 deploy/v2beta1/mpi-operator.yaml
// (mpi-operator); kubeflow/training-operator@v1.9.4 manifests/base/deployment.yaml
// (training-operator); aws/karpenter-provider-aws@v1.14.1 charts/karpenter (karpenter);
// SlinkyProject/slurm-operator@v1.2.1 helm/slurm-operator (slurm-operator);
// kubernetes-sigs/aws-fsx-csi-driver charts (fsx-csi-controller).
pub static CAPABILITIES: &[Capability] = &[
    Capability {
        name: "volcano",
        kinds: &[&kinds::VOLCANO_JOBS, &kinds::PODGROUPS],
        controllers: &[&["volcano-scheduler"], &["volcano-controllers"]],
        any_of: &[],
        device: None,
        on_kind: true,
        install_kind: same("`trainlab setup kind`"),
        install_eks: Words {
            en: "`trainlab setup eks` (installs Volcano v1.15.1, pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（Volcano v1.15.1 を固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
    Capability {
        name: "mpi-operator",
        kinds: &[&kinds::MPIJOBS],
        controllers: &[&["mpi-operator"]],
        any_of: &[],
        device: None,
        on_kind: true,
        install_kind: same("`trainlab setup kind`"),
        install_eks: Words {
            en: "`trainlab setup eks` (installs the MPI Operator v0.8.0, pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（MPI Operator v0.8.0 を固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
    Capability {
        name: "training-operator",
        kinds: &[&kinds::PYTORCHJOBS],
        controllers: &[&["training-operator"]],
        any_of: &[],
        device: None,
        on_kind: true,
        install_kind: same("`trainlab setup kind`"),
        install_eks: Words {
            en: "`trainlab setup eks` (installs the training-operator v1.9.4 (PyTorchJob only, beside the MPI Operator), pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（training-operator v1.9.4（PyTorchJob のみ。MPI Operator と並べて）を固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
    // Kubeflow Trainer v2 (kubeflow/trainer@v2.3.0 manifests/overlays/manager: Deployment
    // `kubeflow-trainer-controller-manager`; JobSet v0.12.0 comes with it as
    // `jobset-controller-manager` (kustomize, config/default `namePrefix: jobset-`) or
    // `jobset-controller` (the Helm chart's subchart, charts/jobset templates/controller).
    Capability {
        name: "kubeflow-trainer",
        kinds: &[&kinds::TRAINJOBS],
        controllers: &[
            &["kubeflow-trainer-controller-manager"],
            &["jobset-controller-manager", "jobset-controller"],
        ],
        any_of: &[],
        device: None,
        on_kind: true,
        install_kind: same("`trainlab setup kind`"),
        install_eks: Words {
            en: "`trainlab setup eks` (installs Kubeflow Trainer v2.3.0 with JobSet v0.12.0 and its runtimes, pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（Kubeflow Trainer v2.3.0 と JobSet v0.12.0、ランタイムを固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
    // A PyTorch training job is a PyTorchJob (training-operator v1) or a TrainJob (Kubeflow
    // Trainer v2): the labs that teach one accept either.
    Capability {
        name: "pytorch-training",
        kinds: &[],
        controllers: &[],
        any_of: &["training-operator", "kubeflow-trainer"],
        device: None,
        on_kind: true,
        install_kind: same("`trainlab setup kind`"),
        install_eks: Words {
            en: "one of: the training-operator v1.9.4 (PyTorchJob) or Kubeflow Trainer v2.3.0 (TrainJob), see `trainlab doctor`",
            ja: "training-operator v1.9.4（PyTorchJob）か Kubeflow Trainer v2.3.0（TrainJob）のどちらか（`trainlab doctor` を参照）",
        },
    },
    Capability {
        name: "karpenter-crds",
        kinds: &[&kinds::NODEPOOLS],
        controllers: &[],
        any_of: &[],
        device: None,
        on_kind: true,
        install_kind: Words {
            en: "`trainlab setup kind` (CRDs only)",
            ja: "`trainlab setup kind`（CRD のみ）",
        },
        install_eks: Words {
            en: "the Karpenter Helm chart `oci://public.ecr.aws/karpenter/karpenter` v1.14.1",
            ja: "Karpenter の Helm チャート `oci://public.ecr.aws/karpenter/karpenter` v1.14.1",
        },
    },
    Capability {
        name: "karpenter",
        kinds: &[&kinds::NODEPOOLS],
        controllers: &[&["karpenter"]],
        any_of: &[],
        device: None,
        on_kind: false,
        install_kind: Words {
            en: "kind has the Karpenter CRDs but no controller (it launches EC2 instances): these checks need EKS",
            ja: "kind には Karpenter の CRD はありますがコントローラーはありません（EC2 インスタンスを起動するため）: これらのチェックには EKS が必要です",
        },
        install_eks: Words {
            en: "the Karpenter Helm chart `oci://public.ecr.aws/karpenter/karpenter` v1.14.1",
            ja: "Karpenter の Helm チャート `oci://public.ecr.aws/karpenter/karpenter` v1.14.1",
        },
    },
    // EKS Auto Mode: detected by its NodeClass CRD being served (nodeclasses.eks.amazonaws.com,
    // Amazon EKS User Guide "Create a Node Class for Amazon EKS"); its nodes also carry
    // `eks.amazonaws.com/compute-type: auto` ("Control if a workload is deployed on EKS Auto
    // Mode nodes"). Lab 15 accepts an Auto Mode NodePool where this is present.
    Capability {
        name: "eks-auto-mode",
        kinds: &[&kinds::EKS_NODECLASSES],
        controllers: &[],
        any_of: &[],
        device: None,
        on_kind: false,
        install_kind: Words {
            en: "EKS Auto Mode is an EKS feature; on kind, lab 15 uses Karpenter's EC2NodeClass",
            ja: "EKS Auto Mode は EKS の機能です。kind では lab 15 は Karpenter の EC2NodeClass を使います",
        },
        install_eks: Words {
            en: "enable EKS Auto Mode on the cluster (`aws eks update-cluster-config --name CLUSTER --compute-config enabled=true …`, Amazon EKS User Guide \"Enable EKS Auto Mode on an existing cluster\")",
            ja: "クラスターで EKS Auto Mode を有効にしてください（`aws eks update-cluster-config --name CLUSTER --compute-config enabled=true …`。Amazon EKS ユーザーガイド「既存のクラスターで EKS Auto Mode を有効にする」）",
        },
    },
    Capability {
        name: "slinky",
        kinds: &[&kinds::NODESETS],
        controllers: &[&["slurm-operator"]],
        any_of: &[],
        device: None,
        on_kind: true,
        install_kind: same("`trainlab setup kind --with slinky`"),
        install_eks: Words {
            en: "cert-manager, then the Slinky Helm charts `oci://ghcr.io/slinkyproject/charts/slurm-operator-crds` and `slurm-operator` 1.2.1",
            ja: "cert-manager の後に Slinky の Helm チャート `oci://ghcr.io/slinkyproject/charts/slurm-operator-crds` と `slurm-operator` 1.2.1",
        },
    },
    Capability {
        name: "fsx-csi",
        kinds: &[],
        controllers: &[&["fsx-csi-controller"]],
        any_of: &[],
        device: None,
        on_kind: false,
        install_kind: Words {
            en: "FSx for Lustre needs AWS (kind nodes have no Lustre client): these checks need EKS",
            ja: "FSx for Lustre には AWS が必要です（kind のノードには Lustre クライアントがありません）: これらのチェックには EKS が必要です",
        },
        install_eks: Words {
            en: "the aws-fsx-csi-driver Helm chart (`helm install aws-fsx-csi-driver aws-fsx-csi-driver/aws-fsx-csi-driver -n kube-system`)",
            ja: "aws-fsx-csi-driver の Helm チャート（`helm install aws-fsx-csi-driver aws-fsx-csi-driver/aws-fsx-csi-driver -n kube-system`）",
        },
    },
    Capability {
        name: "efa-device-plugin",
        kinds: &[],
        controllers: &[],
        any_of: &[],
        device: Some(EFA),
        on_kind: true,
        install_kind: Words {
            en: "`trainlab setup kind` (fakes EFA capacity)",
            ja: "`trainlab setup kind`（EFA の容量を模擬します）",
        },
        install_eks: Words {
            en: "`trainlab setup eks` (installs the EFA device plugin, tolerating the GPU and Neuron nodes' taints, pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（GPU と Neuron ノードの taint を許容する EFA device plugin を固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
    Capability {
        name: "nvidia-device-plugin",
        kinds: &[],
        controllers: &[],
        any_of: &[],
        device: Some(GPU),
        on_kind: true,
        install_kind: Words {
            en: "`trainlab setup kind` (fakes GPU capacity)",
            ja: "`trainlab setup kind`（GPU の容量を模擬します）",
        },
        install_eks: Words {
            en: "`trainlab setup eks` (installs the NVIDIA device plugin v0.20.0, pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（NVIDIA device plugin v0.20.0 を固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
    Capability {
        name: "neuron-device-plugin",
        kinds: &[],
        controllers: &[],
        any_of: &[],
        device: Some(NEURON),
        on_kind: true,
        install_kind: Words {
            en: "`trainlab setup kind` (fakes Neuron capacity)",
            ja: "`trainlab setup kind`（Neuron の容量を模擬します）",
        },
        install_eks: Words {
            en: "`trainlab setup eks` (installs the Neuron device plugin, pinned, with the rest of what the labs need)",
            ja: "`trainlab setup eks`（Neuron device plugin を固定したバージョンで、labs に必要な他のものと一緒にインストールします）",
        },
    },
];

/// The capability named `name`.
pub fn get(name: &str) -> Option<&'static Capability> {
    CAPABILITIES.iter().find(|c| c.name == name)
}

/// The capabilities these names (lab.yaml `capabilities:` of some checks) mean, each once, in
/// name order.
/// A choice's alternatives come along: detecting it needs theirs.
pub fn named<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<&'static Capability> {
    let mut names: std::collections::BTreeSet<&str> = names.into_iter().collect();
    let alternatives: Vec<&str> = names
        .iter()
        .filter_map(|n| get(n))
        .flat_map(|c| c.any_of.iter().copied())
        .collect();
    names.extend(alternatives);
    names.into_iter().filter_map(get).collect()
}

/// Every capability name, in table order (lab validation lists them).
pub fn names() -> Vec<&'static str> {
    CAPABILITIES.iter().map(|c| c.name).collect()
}

/// The command (or page) that installs a capability on a profile (both when unknown).
pub fn install_hint(name: &str, profile: Option<Profile>) -> String {
    install_hint_in(name, profile, false)
}

/// [`install_hint`] in the report's language (`ja`: Japanese).
pub fn install_hint_in(name: &str, profile: Option<Profile>, ja: bool) -> String {
    let Some(c) = get(name) else {
        return if ja {
            format!("{name} のコンポーネント")
        } else {
            format!("the {name} components")
        };
    };
    let (kind, eks) = (c.install_kind.get(ja), c.install_eks.get(ja));
    match profile {
        Some(Profile::Kind) => kind.to_string(),
        Some(Profile::Eks) => eks.to_string(),
        None if kind == eks => kind.to_string(),
        None => format!("kind: {kind}; EKS: {eks}"),
    }
}

/// One thing detection saw, rendered in the report's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "seen", rename_all = "kebab-case")]
pub enum Seen {
    CrdServed {
        crd: String,
    },
    CrdNotFound {
        crd: String,
    },
    ControllerAvailable {
        deployment: Cow<'static, str>,
    },
    ControllerNotAvailable {
        deployment: Cow<'static, str>,
    },
    /// The cluster could not say (a read failed): its own words.
    Unknown {
        message: String,
    },
    Device {
        resource: Cow<'static, str>,
        faked: bool,
        nodes: usize,
    },
    /// Offline kind state: the profile cannot provide it.
    NotOnKind,
}

impl Seen {
    pub fn text(&self, ja: bool) -> String {
        match (self, ja) {
            (Seen::CrdServed { crd }, false) => format!("CRD {crd} served"),
            (Seen::CrdServed { crd }, true) => format!("CRD {crd} あり"),
            (Seen::CrdNotFound { crd }, false) => format!("CRD {crd} not found"),
            (Seen::CrdNotFound { crd }, true) => format!("CRD {crd} なし"),
            (Seen::ControllerAvailable { deployment }, false) => {
                format!("controller {deployment} available")
            }
            (Seen::ControllerAvailable { deployment }, true) => {
                format!("コントローラー {deployment} 稼働中")
            }
            (Seen::ControllerNotAvailable { deployment }, false) => {
                format!("controller {deployment} not available")
            }
            (Seen::ControllerNotAvailable { deployment }, true) => {
                format!("コントローラー {deployment} が利用できません")
            }
            (Seen::Unknown { message }, _) => message.clone(),
            (
                Seen::Device {
                    resource,
                    faked,
                    nodes,
                },
                false,
            ) => {
                let how = if *faked { "faked" } else { "advertised" };
                format!("{resource} {how} on {nodes} node(s)")
            }
            (
                Seen::Device {
                    resource,
                    faked,
                    nodes,
                },
                true,
            ) => {
                let how = if *faked { "模擬" } else { "提供" };
                format!("{resource} を {nodes} ノードで{how}")
            }
            (Seen::NotOnKind, false) => "not on the kind profile".into(),
            (Seen::NotOnKind, true) => "kind プロファイルにはありません".into(),
        }
    }

    /// Several notes as one line.
    pub fn join(seen: &[Seen], ja: bool) -> String {
        let sep = if ja { "、" } else { "; " };
        seen.iter()
            .map(|n| n.text(ja))
            .collect::<Vec<_>>()
            .join(sep)
    }
}

/// What was found for one capability on a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detected {
    pub name: &'static str,
    /// Its API is served (or it has none): spec checks can be graded.
    pub api: bool,
    /// Its controller runs and its device is advertised: state checks can be graded.
    pub running: bool,
    /// What was seen (`CRD nodepools.karpenter.sh served; controller karpenter not available`),
    /// in English (doctor's JSON); [`Detected::seen`] renders it in a report's language.
    pub detail: String,
    #[serde(skip)]
    pub seen: Vec<Seen>,
    /// The profile it was detected for (the install command depends on it).
    #[serde(skip)]
    pub profile: Option<Profile>,
    /// How to install it on this cluster's profile; None when present.
    pub install: Option<String>,
    /// Missing although the profile could provide it: the environment is incomplete.
    pub installable: bool,
}

impl Detected {
    pub fn present(&self) -> bool {
        self.api && self.running
    }
}

/// Capability states by name. Offline sources detect nothing and gate nothing.
pub type Capabilities = BTreeMap<&'static str, Detected>;

/// Facts the detection reads, gathered by the caller in its one pass over the cluster.
pub struct Evidence<'a> {
    /// Whether each kind's API is served, by CRD name.
    pub served: &'a dyn Fn(&ResourceKind) -> Result<bool, String>,
    /// Available replicas of the Deployment with this name (in any namespace), or why unknown.
    pub deployment_available: &'a dyn Fn(&str) -> Result<bool, String>,
    pub nodes: &'a [NodeFacts],
    pub profile: Option<Profile>,
}

/// Decides one capability from the evidence.
pub fn detect(cap: &'static Capability, ev: &Evidence) -> Detected {
    if !cap.any_of.is_empty() {
        return detect_choice(cap, ev);
    }
    let mut notes = Vec::new();
    let mut api = true;
    let mut running = true;
    if !cap.kinds.is_empty() {
        let mut served_any = false;
        let mut why = Vec::new();
        for k in cap.kinds {
            match (ev.served)(k) {
                Ok(true) => served_any = true,
                Ok(false) => why.push(Seen::CrdNotFound { crd: crd_name(k) }),
                Err(message) => why.push(Seen::Unknown { message }),
            }
        }
        if served_any {
            notes.push(Seen::CrdServed {
                crd: crd_name(cap.kinds[0]),
            });
        } else {
            api = false;
            notes.extend(why);
        }
    }
    for names in cap.controllers {
        let answers: Vec<(&'static str, Result<bool, String>)> = names
            .iter()
            .map(|n| (*n, (ev.deployment_available)(n)))
            .collect();
        if let Some((d, _)) = answers.iter().find(|(_, a)| matches!(a, Ok(true))) {
            notes.push(Seen::ControllerAvailable {
                deployment: Cow::Borrowed(d),
            });
            continue;
        }
        running = false;
        match answers.into_iter().find_map(|(_, a)| a.err()) {
            Some(message) => notes.push(Seen::Unknown { message }),
            None => notes.push(Seen::ControllerNotAvailable {
                deployment: Cow::Borrowed(names.first().copied().unwrap_or_default()),
            }),
        }
    }
    if let Some(res) = cap.device {
        let n = ev.nodes.iter().filter(|n| n.allocatable(res) > 0).count();
        notes.push(Seen::Device {
            resource: Cow::Borrowed(res),
            faked: ev.profile == Some(Profile::Kind),
            nodes: n,
        });
        if n == 0 {
            running = false;
        }
    }
    let present = api && running;
    let on_profile = match ev.profile {
        Some(Profile::Kind) => cap.on_kind,
        _ => true,
    };
    Detected {
        name: cap.name,
        api,
        running,
        detail: Seen::join(&notes, false),
        seen: notes,
        profile: ev.profile,
        install: (!present).then(|| install_hint(cap.name, ev.profile)),
        installable: !present && on_profile,
    }
}

/// A choice is served when one alternative's API is, and runs when one alternative is present
/// (API and controller). What was seen is the present alternative's, else every alternative's.
fn detect_choice(cap: &'static Capability, ev: &Evidence) -> Detected {
    let alternatives: Vec<Detected> = cap
        .any_of
        .iter()
        .filter_map(|n| get(n))
        .map(|c| detect(c, ev))
        .collect();
    let chosen = alternatives
        .iter()
        .find(|d| d.present())
        .or_else(|| alternatives.iter().find(|d| d.api));
    let api = chosen.is_some();
    let running = chosen.is_some_and(Detected::present);
    let seen: Vec<Seen> = match chosen {
        Some(d) => d.seen.clone(),
        None => alternatives.iter().flat_map(|d| d.seen.clone()).collect(),
    };
    let present = api && running;
    let on_profile = match ev.profile {
        Some(Profile::Kind) => cap.on_kind,
        _ => true,
    };
    Detected {
        name: cap.name,
        api,
        running,
        detail: Seen::join(&seen, false),
        seen,
        profile: ev.profile,
        install: (!present).then(|| install_hint(cap.name, ev.profile)),
        installable: !present && on_profile,
    }
}

/// What a kind cluster is known to lack, for offline sources (saved state has no discovery): only
/// the capabilities the kind profile cannot provide; everything else is assumed present.
pub fn absent_on_kind(wanted: &[&'static Capability]) -> Capabilities {
    wanted
        .iter()
        .map(|c| {
            let d = Detected {
                name: c.name,
                api: true,
                running: c.on_kind,
                detail: if c.on_kind {
                    String::new()
                } else {
                    Seen::NotOnKind.text(false)
                },
                seen: if c.on_kind {
                    Vec::new()
                } else {
                    vec![Seen::NotOnKind]
                },
                profile: Some(Profile::Kind),
                install: (!c.on_kind).then(|| c.install_kind.en.to_string()),
                installable: false,
            };
            (c.name, d)
        })
        .collect()
}

fn crd_name(k: &ResourceKind) -> String {
    k.crd
        .map(str::to_string)
        .unwrap_or_else(|| k.resource_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence<'a>(
        served: &'a dyn Fn(&ResourceKind) -> Result<bool, String>,
        deploy: &'a dyn Fn(&str) -> Result<bool, String>,
        profile: Option<Profile>,
    ) -> Evidence<'a> {
        Evidence {
            served,
            deployment_available: deploy,
            nodes: &[],
            profile,
        }
    }

    #[test]
    fn a_served_crd_without_its_controller_grades_spec_but_not_state() {
        let served = |_: &ResourceKind| Ok(true);
        let deploy = |d: &str| Ok(d != "volcano-controllers");
        let d = detect(
            get("volcano").unwrap(),
            &evidence(&served, &deploy, Some(Profile::Kind)),
        );
        assert!(d.api);
        assert!(!d.running);
        assert!(d
            .detail
            .contains("controller volcano-controllers not available"));
        assert_eq!(d.install.as_deref(), Some("`trainlab setup kind`"));
        assert!(d.installable);
    }

    #[test]
    fn the_karpenter_controller_on_kind_is_missing_by_design_not_an_environment_fault() {
        let served = |_: &ResourceKind| Ok(true);
        let deploy = |_: &str| Ok(false);
        let d = detect(
            get("karpenter").unwrap(),
            &evidence(&served, &deploy, Some(Profile::Kind)),
        );
        assert!(!d.present());
        assert!(!d.installable);
        let eks = detect(
            get("karpenter").unwrap(),
            &evidence(&served, &deploy, Some(Profile::Eks)),
        );
        assert!(eks.installable);
        assert!(eks.install.unwrap().contains("Helm chart"));
    }

    #[test]
    fn a_crd_that_is_not_served_says_which() {
        let served = |_: &ResourceKind| Ok(false);
        let deploy = |_: &str| Ok(true);
        let d = detect(
            get("mpi-operator").unwrap(),
            &evidence(&served, &deploy, None),
        );
        assert!(!d.api);
        assert!(
            d.detail.contains("CRD mpijobs.kubeflow.org not found"),
            "{}",
            d.detail
        );
        assert!(d.install.unwrap().starts_with("kind: "));
    }

    #[test]
    fn every_kind_with_a_capability_names_one_in_the_table() {
        for k in kinds::ALL {
            if let Some(c) = k.capability {
                assert!(get(c).is_some(), "{} names unknown capability {c}", k.kind);
            }
        }
    }

    #[test]
    fn a_choice_is_met_by_either_alternative_and_names_both_when_neither_is() {
        let names: Vec<&str> = named(["pytorch-training"]).iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["kubeflow-trainer", "pytorch-training", "training-operator"]
        );
        let choice = get("pytorch-training").unwrap();
        // Only the training-operator: met by it.
        let served = |k: &ResourceKind| Ok(k.kind == "PyTorchJob");
        let deploy = |d: &str| Ok(d == "training-operator");
        let d = detect(choice, &evidence(&served, &deploy, Some(Profile::Eks)));
        assert!(d.present(), "{d:?}");
        assert!(
            d.detail.contains("training-operator available"),
            "{}",
            d.detail
        );
        // Only Kubeflow Trainer, JobSet under the Helm chart's name: met by it.
        let served = |k: &ResourceKind| Ok(k.kind == "TrainJob");
        let deploy =
            |d: &str| Ok(d == "kubeflow-trainer-controller-manager" || d == "jobset-controller");
        let d = detect(choice, &evidence(&served, &deploy, Some(Profile::Eks)));
        assert!(d.present(), "{d:?}");
        // A TrainJob CRD without its controller: specs can be graded, states cannot.
        let deploy = |_: &str| Ok(false);
        let d = detect(choice, &evidence(&served, &deploy, Some(Profile::Eks)));
        assert!(d.api && !d.running, "{d:?}");
        // Neither: what both lack is said, with the install command of the choice.
        let served = |_: &ResourceKind| Ok(false);
        let d = detect(choice, &evidence(&served, &deploy, Some(Profile::Eks)));
        assert!(!d.api);
        assert!(
            d.detail.contains("pytorchjobs.kubeflow.org not found"),
            "{}",
            d.detail
        );
        assert!(
            d.detail
                .contains("trainjobs.trainer.kubeflow.org not found"),
            "{}",
            d.detail
        );
        assert!(d.install.unwrap().contains("Kubeflow Trainer v2.3.0"));
    }
}
