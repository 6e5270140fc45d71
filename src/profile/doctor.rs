//! `doctor`: what the cluster is and has — server version, nodes and their accelerators, the
//! profile, and each capability (CRDs served, controller Deployments available).

use serde::Serialize;

use crate::cluster::{Conn, Discovery};
use crate::facts::capabilities::{self, Capability, Detected, Seen};
use crate::facts::instances::{self, EFA, GPU, NEURON, NEURONCORE};
use crate::facts::{NodeFacts, Profile};
use crate::observe::kinds;
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
}

pub async fn inspect(conn: &Conn) -> Result<DoctorReport, Error> {
    let version = crate::cluster::probe(conn).await?;
    let discovery = Discovery::new();
    let queries = vec![crate::observe::Query::cluster(&kinds::NODES)];
    let obs = crate::cluster::gather(conn, &discovery, &queries).await?;
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
        .collect();
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
