//! `doctor`: what the cluster is and has — server version, nodes and their accelerators, the
//! profile, and each capability (CRDs served, controller Deployments available).

use serde::Serialize;

use crate::catalog::Catalog;
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
    /// Which labs this cluster can run now, from the capabilities above.
    pub labs: Vec<LabRow>,
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
    Ok(DoctorReport {
        schema_version: 1,
        context: conn.context.clone(),
        server: conn.server.clone(),
        server_version: version.git_version,
        profile,
        nodes,
        capabilities: caps,
        labs,
    })
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
}
