//! What a verifier knows besides the observed objects: where the lab lives and its parameters.

use std::collections::BTreeMap;

use crate::catalog::Lab;
use crate::observe::{InputError, Obj, Observed, SourceKind};
use crate::profile::Profile;

/// Where one learner's lab lives.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Target {
    /// The kube context, when live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub namespace: String,
    /// The learner's name in a workshop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learner: Option<String>,
    /// Prefix for cluster-scoped objects a lab asks for (`alice-` in a workshop, else empty).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name_prefix: String,
}

impl Target {
    /// The default target of a lab: namespace `trainlab-<id>`.
    pub fn for_lab(lab_id: &str) -> Target {
        Target {
            context: None,
            namespace: format!("trainlab-{lab_id}"),
            learner: None,
            name_prefix: String::new(),
        }
    }

    /// The name a cluster-scoped object of this target must have (`gpu-training`,
    /// `alice-gpu-training`).
    pub fn cluster_name(&self, base: &str) -> String {
        format!("{}{}", self.name_prefix, base)
    }
}

/// Lab parameters: the profile's values from `lab.yaml`, overridden by `--param name=value`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    pub profile: BTreeMap<String, String>,
    pub overrides: BTreeMap<String, String>,
}

impl Params {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.overrides
            .get(name)
            .or_else(|| self.profile.get(name))
            .map(String::as_str)
    }

    /// Only a value the user gave with `--param` (for facts that otherwise come from the
    /// cluster, such as the number of GPU nodes).
    pub fn given(&self, name: &str) -> Option<&str> {
        self.overrides.get(name).map(String::as_str)
    }

    /// Parses a parameter as a number; a non-number is bad input naming the parameter.
    pub fn number(value: Option<&str>, name: &str) -> Result<Option<u32>, InputError> {
        match value {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<u32>()
                .map(Some)
                .map_err(|_| InputError::Param {
                    name: name.to_string(),
                    value: v.to_string(),
                    expected: "a whole number".to_string(),
                }),
        }
    }
}

/// Everything `judge()` may consult besides the observed objects.
pub struct JudgeCtx<'a> {
    pub lab: &'a Lab,
    pub target: &'a Target,
    pub params: &'a Params,
    pub source: SourceKind,
    pub profile: Profile,
    /// The cluster's nodes (empty in static mode or when nodes could not be read).
    pub nodes: Vec<&'a Obj>,
}

impl<'a> JudgeCtx<'a> {
    pub fn is_static(&self) -> bool {
        self.source.is_static()
    }

    /// Nodes as the framework read them (for verifiers that need the error too).
    pub fn nodes_of(obs: &'a Observed) -> Result<Vec<&'a Obj>, crate::observe::Unavailable> {
        obs.list(&crate::observe::Query::cluster(
            &crate::observe::kinds::NODES,
        ))
    }
}
