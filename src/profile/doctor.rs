//! `doctor`: what the cluster is and has — server version, nodes and their accelerators, the
//! profile, and each capability (CRDs served, controller Deployments available).

use serde::Serialize;

use crate::cluster::{Conn, Discovery};
use crate::observe::{kinds, ResourceKind};
use crate::profile::instances::{EFA, GPU, NEURON, NEURONCORE};
use crate::profile::{capabilities::install_hint, instances, Profile};
use crate::verify::views::nodes::NodeFacts;
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
    pub detail: String,
    pub install: Option<String>,
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
}

// Controller Deployments by upstream install manifest: volcano-development.yaml
// (volcano-scheduler, volcano-controllers in volcano-system), mpi-operator.yaml (mpi-operator),
// training-operator standalone overlay (training-operator), Karpenter chart (karpenter),
// Slinky chart (slurm-operator), FSx CSI chart (fsx-csi-controller).
const CONTROLLERS: &[(&str, &[&str])] = &[
    ("volcano", &["volcano-scheduler", "volcano-controllers"]),
    ("mpi-operator", &["mpi-operator"]),
    ("training-operator", &["training-operator"]),
    ("karpenter", &["karpenter"]),
    ("slinky", &["slurm-operator"]),
    ("fsx-csi", &["fsx-csi-controller"]),
];

static PYTORCHJOBS: ResourceKind = ResourceKind {
    group: "kubeflow.org",
    version: "v1",
    kind: "PyTorchJob",
    plural: "pytorchjobs",
    namespaced: true,
    crd: Some("pytorchjobs.kubeflow.org"),
    capability: Some("training-operator"),
    state_only: false,
};
// Slinky slurm-operator v1.2.1 api/v1beta1/nodeset_types.go.
static NODESETS: ResourceKind = ResourceKind {
    group: "slinky.slurm.net",
    version: "v1beta1",
    kind: "NodeSet",
    plural: "nodesets",
    namespaced: true,
    crd: Some("nodesets.slinky.slurm.net"),
    capability: Some("slinky"),
    state_only: false,
};

/// Which CRD proves a capability's API is installed.
fn crd_of(cap: &str) -> Option<&'static ResourceKind> {
    match cap {
        "volcano" => Some(&kinds::VOLCANO_JOBS),
        "mpi-operator" => Some(&kinds::MPIJOBS),
        "training-operator" => Some(&PYTORCHJOBS),
        "karpenter" | "karpenter-crds" => Some(&kinds::NODEPOOLS),
        "slinky" => Some(&NODESETS),
        _ => None,
    }
}

pub async fn inspect(conn: &Conn) -> Result<DoctorReport, Error> {
    let version = crate::cluster::probe(conn).await?;
    let discovery = Discovery::new();
    let queries = vec![
        crate::observe::Query::cluster(&kinds::NODES),
        crate::observe::Query::cluster(&kinds::DEPLOYMENTS),
    ];
    let obs = crate::cluster::gather(conn, &discovery, &queries).await?;
    let nodes_objs = obs
        .list(&queries[0])
        .map_err(|u| Error::Environment(format!("cannot list nodes: {u}")))?;
    let facts = NodeFacts::all(&nodes_objs)?;
    let profile = Profile::detect(&nodes_objs);
    let deployments = obs.list(&queries[1]);

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

    let mut caps = Vec::new();
    for cap in crate::catalog::CAPABILITIES {
        caps.push(capability(conn, &discovery, cap, &facts, &deployments, profile).await);
    }
    Ok(DoctorReport {
        schema_version: 1,
        context: conn.context.clone(),
        server: conn.server.clone(),
        server_version: version.git_version,
        profile,
        nodes,
        capabilities: caps,
    })
}

async fn capability(
    conn: &Conn,
    discovery: &Discovery,
    cap: &'static str,
    nodes: &[NodeFacts],
    deployments: &Result<Vec<&crate::observe::Obj>, crate::observe::Unavailable>,
    profile: Option<Profile>,
) -> CapabilityRow {
    let device = match cap {
        "nvidia-device-plugin" => Some(GPU),
        "efa-device-plugin" => Some(EFA),
        "neuron-device-plugin" => Some(NEURON),
        _ => None,
    };
    let (present, detail) = if let Some(res) = device {
        let n = nodes.iter().filter(|n| n.allocatable(res) > 0).count();
        let how = if profile == Some(Profile::Kind) {
            "faked"
        } else {
            "advertised"
        };
        (n > 0, format!("{res} {how} on {n} node(s)"))
    } else {
        let crd = match crd_of(cap) {
            Some(kind) => match discovery.resolve(conn, kind).await {
                Ok(_) => Ok(format!("CRD {} served", kind.crd.unwrap_or(kind.plural))),
                Err(why) => Err(why.to_string()),
            },
            None => Ok(String::new()),
        };
        let controllers = CONTROLLERS.iter().find(|(c, _)| *c == cap).map(|(_, d)| *d);
        let ctrl = match (controllers, deployments) {
            (None, _) => Ok(String::new()),
            (Some(names), Ok(deps)) => {
                let ready: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|name| {
                        deps.iter().any(|d| {
                            d.name() == *name
                                && d.value["status"]["availableReplicas"].as_i64().unwrap_or(0) > 0
                        })
                    })
                    .collect();
                if ready.len() == names.len() {
                    Ok(format!("controller {} available", names.join(", ")))
                } else {
                    Err(format!("controller {} not available", names.join(", ")))
                }
            }
            (Some(_), Err(why)) => Err(format!("cannot list deployments: {why}")),
        };
        // karpenter-crds needs only the CRD; every other capability needs its controller too.
        let ctrl = if cap == "karpenter-crds" {
            Ok(String::new())
        } else {
            ctrl
        };
        match (crd, ctrl) {
            (Ok(a), Ok(b)) => (
                true,
                [a, b]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            (Err(e), _) | (_, Err(e)) => (false, e),
        }
    };
    CapabilityRow {
        name: cap,
        present,
        install: (!present).then(|| install_hint(cap)),
        detail,
    }
}
