//! Profiles: `kind` (a local cluster with faked accelerators) or `eks`.

use crate::observe::Obj;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// A local kind cluster with faked accelerators.
    Kind,
    /// Amazon EKS.
    Eks,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Kind => "kind",
            Profile::Eks => "eks",
        }
    }

    /// From its name in lab files (`task.params.eks`, `solution-eks/`).
    pub fn parse(name: &str) -> Option<Profile> {
        [Profile::Kind, Profile::Eks]
            .into_iter()
            .find(|p| p.as_str() == name)
    }

    /// From node `spec.providerID`: `kind://...` is kind, `aws://...` is EKS. `None` when no
    /// node says (static mode, or an unknown provider).
    pub fn detect(nodes: &[&Obj]) -> Option<Profile> {
        let ids = nodes
            .iter()
            .filter_map(|n| n.value["spec"]["providerID"].as_str());
        let mut found = None;
        for id in ids {
            if id.starts_with("kind://") {
                found = Some(Profile::Kind);
            } else if id.starts_with("aws://") {
                return Some(Profile::Eks);
            }
        }
        found
    }

    /// From a kube context name alone (no request): `kind-*` is kind, EKS ARNs and
    /// `*.eksctl.io` contexts are EKS.
    pub fn from_context_name(name: &str) -> Option<Profile> {
        if name.starts_with("kind-") {
            Some(Profile::Kind)
        } else if name.starts_with("arn:aws:eks:") || name.contains(".eksctl.io") {
            Some(Profile::Eks)
        } else {
            None
        }
    }
}
