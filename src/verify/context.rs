//! What a verifier knows besides the observed objects: where the lab lives and its parameters.

use std::collections::BTreeMap;

use super::{Judgement, Outcome, Read};
use crate::catalog::Lab;
use crate::facts::{ClusterNodes, NodeFacts, Profile};
use crate::observe::{InputError, Obj, Observed, SourceKind, Unavailable};

/// Where one learner's lab lives.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// The kube context, when live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub namespace: String,
    /// The learner's name in a workshop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learner: Option<String>,
    /// Prefix for cluster-scoped objects a lab asks for (`alice-` in a workshop, else empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name_prefix: String,
}

impl Target {
    /// The default target of a lab: namespace `trainlab-<id>`.
    pub fn for_lab(lab_id: &str) -> Target {
        Target {
            context: None,
            namespace: crate::catalog::lab_namespace(lab_id),
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
    /// Static mode with `--profile` given: the profile's values stand for the cluster facts
    /// static mode cannot read (`check 9 --files gang.yaml --profile kind` knows kind's 3 GPU
    /// nodes).
    pub profile_stands_for_cluster: bool,
}

impl Params {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.overrides
            .get(name)
            .or_else(|| self.profile.get(name))
            .map(String::as_str)
    }

    /// A parameter the verifier cannot do without: lab.yaml gives every one for each profile,
    /// so a missing one is a lab being written without it (bad input naming it), never a
    /// default written a second time in Rust.
    pub fn require(&self, name: &str) -> Result<&str, InputError> {
        self.get(name).ok_or_else(|| InputError::ParamMissing {
            name: name.to_string(),
        })
    }

    /// Only a value the user gave with `--param` (for facts that otherwise come from the
    /// cluster, such as the number of GPU nodes).
    pub fn given(&self, name: &str) -> Option<&str> {
        self.overrides
            .get(name)
            .or_else(|| {
                self.profile_stands_for_cluster
                    .then(|| self.profile.get(name))
                    .flatten()
            })
            .map(String::as_str)
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
                    expected_ja: "整数".to_string(),
                }),
        }
    }
}

/// Everything `judge()` may consult: the observed objects (through the lab's declared reads),
/// where the lab lives, its parameters, the profile and the cluster's nodes.
pub struct JudgeCtx<'a> {
    pub lab: &'a Lab,
    pub target: &'a Target,
    pub params: &'a Params,
    pub source: SourceKind,
    pub profile: Profile,
    /// The cluster's nodes, decoded once for the whole round ([`JudgeCtx::node_facts`]).
    pub(crate) nodes: &'a ClusterNodes<'a>,
    pub(crate) obs: &'a Observed,
    /// The verifier's declared reads: `list` refuses any other.
    pub(crate) declared: &'static [&'static Read],
}

/// The object a lab is about, or the judgement to return when it is missing or unreadable.
pub enum Named<'a> {
    Found(&'a Obj),
    /// Every check failed once with the lab's `missing` text (or skipped/errored, when the read
    /// itself failed).
    Absent(Judgement),
}

impl<'a> JudgeCtx<'a> {
    pub fn is_static(&self) -> bool {
        self.source.is_static()
    }

    /// The objects of a declared read. An undeclared read is refused on every source ("not
    /// planned"), so a snapshot test catches it before a real cluster does.
    pub fn list(&self, read: &Read) -> Result<Vec<&'a Obj>, Unavailable> {
        if !self.declared.contains(&read) {
            return Err(Unavailable::Failed {
                message: format!(
                    "internal: {} was not planned; the {} verifier's reads() must declare it",
                    read.query(self.target).describe(),
                    self.lab.id
                ),
            });
        }
        self.obs.list(&read.query(self.target))
    }

    /// The object named `name` of a declared read. When it is missing, every check in `checks`
    /// fails once with the `missing` hint (the lab's `missing:` text, said once at the top of the
    /// report); when the read failed, every check is skipped or errored with why.
    pub fn named(&self, read: &Read, name: &str, checks: &[&str]) -> Named<'a> {
        let objs = match self.list(read) {
            Ok(o) => o,
            Err(why) => {
                return Named::Absent(Judgement::every(checks, |c| Outcome::unavailable(c, &why)))
            }
        };
        if let Some(o) = objs.iter().copied().find(|o| o.name() == name) {
            return Named::Found(o);
        }
        let kind = read.kind;
        let expected = format!("{} {} {name}", kind.api_version(), kind.kind);
        let mut others: Vec<&str> = objs.iter().map(|o| o.name()).collect();
        others.sort_unstable();
        let found = if others.is_empty() {
            self.found_instead(read, name)
        } else {
            others.join(", ")
        };
        self.missing(checks, kind, name, expected, found)
    }

    /// Every check in `checks` fails once with the `missing` hint: `name` of `kind` is not
    /// there as `expected`, and `found` says what is instead.
    pub fn missing(
        &self,
        checks: &[&str],
        kind: &crate::observe::kinds::ResourceKind,
        name: &str,
        expected: String,
        found: String,
    ) -> Named<'a> {
        let ns = self.target.namespace.clone();
        Named::Absent(Judgement::every(checks, |c| {
            Outcome::fail(c, expected.clone(), found.clone())
                .hint(MISSING_HINT)
                .with("name", name)
                .with("kind", kind.kind)
                .with("api_version", kind.api_version())
                .with(
                    "accepted",
                    format!("`{}` {}", kind.api_version(), kind.kind),
                )
                .with("namespace", &ns)
        }))
    }

    /// What the learner most likely meant when no object of the read's kind is in the target
    /// namespace: one of that kind and name in another namespace (a manifest for another
    /// namespace), else objects of other kinds named `name` here (another kind or API group,
    /// such as a batch/v1 Job where a Volcano Job belongs); `—` when there is neither. Only what
    /// was read is searched: the learner's files, a snapshot, or the live reads of this check.
    fn found_instead(&self, read: &Read, name: &str) -> String {
        let kind = read.kind;
        let ns = self.target.namespace.as_str();
        let all = self.obs.objects();
        let mut elsewhere: Vec<String> = all
            .iter()
            .filter(|o| kind.matches(o.api_version(), o.kind()) && o.namespace() != Some(ns))
            // Field paths, not words: the found value reads the same in every language.
            .map(|o| match o.namespace() {
                Some(other) => format!("{} (metadata.namespace: {other})", o.name()),
                None => format!("{} (metadata.namespace: —)", o.name()),
            })
            .collect();
        let mut other_kinds: Vec<String> = all
            .iter()
            .filter(|o| o.name() == name && !kind.matches(o.api_version(), o.kind()))
            .filter(|o| o.namespace().is_none_or(|n| n == ns))
            .map(|o| format!("{} {} {}", o.api_version(), o.kind(), o.name()))
            .collect();
        for list in [&mut elsewhere, &mut other_kinds] {
            list.sort_unstable();
            list.dedup();
            list.truncate(5);
        }
        match (elsewhere.is_empty(), other_kinds.is_empty()) {
            (false, _) => elsewhere.join(", "),
            (true, false) => other_kinds.join(", "),
            (true, true) => "—".to_string(),
        }
    }

    /// Nodes as the framework read them (for verifiers that need the error too).
    pub fn nodes_read(&self) -> Result<&'a [&'a Obj], Unavailable> {
        self.nodes.objs().map_err(Unavailable::clone)
    }

    /// The nodes' facts, decoded once per round for every lab (`Err` inside: why the nodes
    /// could not be read; a node that does not decode is bad input).
    pub fn node_facts(&self) -> Result<Result<&'a [NodeFacts], &'a Unavailable>, InputError> {
        self.nodes.facts()
    }

    /// Nodes from any `Observed` (the framework always plans this read).
    pub fn nodes_of(obs: &'a Observed) -> Result<Vec<&'a Obj>, Unavailable> {
        obs.list(&crate::observe::Query::cluster(
            &crate::observe::kinds::NODES,
        ))
    }
}

/// The hint key of "the object the lab is about is missing"; its text is the lab's `missing:`.
pub const MISSING_HINT: &str = "missing";
