//! `Observed`: what a source saw, answered per query. The same type comes from a live cluster, a
//! saved snapshot or the learner's manifest files, so `judge()` never knows the difference
//! except through [`Unavailable`].

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use super::kinds::ResourceKind;
use super::object::Obj;

/// Which source produced an `Observed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A cluster through the API server.
    Live,
    /// Saved cluster state (`--snapshot DIR`).
    Snapshot,
    /// The learner's manifests (`--files PATH`): static mode, no cluster state.
    Files,
    /// The saved state embedded in the binary (`--demo`).
    Demo,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Live => "live",
            SourceKind::Snapshot => "snapshot",
            SourceKind::Files => "files",
            SourceKind::Demo => "demo",
        }
    }

    /// Static mode: only what the learner wrote is visible.
    pub fn is_static(self) -> bool {
        self == SourceKind::Files
    }
}

/// One read a verifier declares: a kind, a namespace (None: cluster-scoped, or all namespaces)
/// and an optional equality label selector (`a=b,c!=d,e`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Query {
    pub kind: &'static ResourceKind,
    pub namespace: Option<String>,
    pub selector: Option<String>,
    /// A field selector, `metadata.name=X` only (e.g. one controller Deployment by name).
    pub name: Option<String>,
}

impl Query {
    /// A namespaced read, or a cluster-scoped one when the kind is not namespaced.
    pub fn new(kind: &'static ResourceKind, namespace: &str) -> Query {
        Query {
            kind,
            namespace: kind.namespaced.then(|| namespace.to_string()),
            selector: None,
            name: None,
        }
    }

    pub fn cluster(kind: &'static ResourceKind) -> Query {
        Query {
            kind,
            namespace: None,
            selector: None,
            name: None,
        }
    }

    pub fn with_selector(mut self, selector: &str) -> Query {
        self.selector = Some(selector.to_string());
        self
    }

    /// Only the object(s) with this name (`fieldSelector=metadata.name=NAME`).
    pub fn named(mut self, name: &str) -> Query {
        self.name = Some(name.to_string());
        self
    }

    /// Whether a listed object is one this query reads (its namespace, label selector and
    /// name), as the API server would filter: for answering queries from a wider LIST.
    pub fn selects(&self, o: &Obj) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| o.namespace() == Some(ns))
            && self
                .selector
                .as_deref()
                .is_none_or(|s| Selector::parse(s).matches(o))
            && self.name.as_deref().is_none_or(|n| o.name() == n)
    }

    pub fn describe(&self) -> String {
        let mut s = self.kind.resource_name();
        if let Some(n) = &self.name {
            s.push_str(&format!(" named {n}"));
        }
        if let Some(ns) = &self.namespace {
            s.push_str(&format!(" in namespace {ns}"));
        }
        if let Some(sel) = &self.selector {
            s.push_str(&format!(" with labels {sel}"));
        }
        s
    }
}

/// Why a source cannot answer a query. Verifiers turn these into *skipped* or *error* outcomes
/// (see `verify::Outcome::unavailable`), never into *fail*.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Unavailable {
    /// Static mode: the learner's files hold no cluster state.
    NeedsLiveCluster,
    /// A snapshot holds no object of a kind that every cluster has (e.g. no Nodes were saved).
    NotCaptured { resource: String },
    /// The cluster does not serve the kind: its CRD is missing.
    NotServed {
        resource: String,
        crd: String,
        capability: Option<String>,
    },
    /// RBAC forbids the read.
    Forbidden {
        verb: String,
        resource: String,
        namespace: Option<String>,
        message: String,
    },
    /// Any other failure of the environment (timeouts, 5xx after retries).
    Failed { message: String },
}

impl Unavailable {
    /// For a forbidden read: the RBAC kinds and the kubectl commands that would allow it
    /// (kubectl accepts `plural.group` resources). Language-neutral; reports frame it.
    pub fn rbac_fix(&self) -> Option<(&'static str, String)> {
        let Unavailable::Forbidden {
            verb,
            resource,
            namespace,
            ..
        } = self
        else {
            return None;
        };
        Some(match namespace {
            Some(ns) => (
                "Role + RoleBinding",
                format!(
                    "`kubectl create role trainlab-read --verb={verb} --resource={resource} -n {ns}` && `kubectl create rolebinding trainlab-read --role=trainlab-read --user=<you> -n {ns}`"
                ),
            ),
            None => (
                "ClusterRole + ClusterRoleBinding",
                format!(
                    "`kubectl create clusterrole trainlab-read --verb={verb} --resource={resource}` && `kubectl create clusterrolebinding trainlab-read --clusterrole=trainlab-read --user=<you>`"
                ),
            ),
        })
    }

    /// Skipped (the source cannot show it) vs error (the environment failed).
    pub fn is_environment_error(&self) -> bool {
        matches!(
            self,
            Unavailable::Forbidden { .. } | Unavailable::Failed { .. }
        )
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NeedsLiveCluster => write!(f, "needs a live cluster"),
            Unavailable::NotCaptured { resource } => {
                write!(f, "the snapshot holds no {resource}")
            }
            Unavailable::NotServed {
                resource,
                crd,
                capability,
            } => {
                match capability {
                    Some(c) => write!(f, "requires {c} (CRD {crd} not found)")?,
                    None => write!(f, "the cluster does not serve {resource}")?,
                }
                Ok(())
            }
            Unavailable::Forbidden {
                verb,
                resource,
                namespace,
                message,
            } => {
                write!(f, "forbidden: cannot {verb} {resource}")?;
                match namespace {
                    Some(ns) => write!(f, " in namespace {ns}")?,
                    None => write!(f, " at cluster scope")?,
                }
                write!(f, " ({message}); ")?;
                let (kinds, commands) = self.rbac_fix().unwrap_or_default();
                write!(f, "a {kinds} allows it, e.g. {commands}")
            }
            Unavailable::Failed { message } => write!(f, "{message}"),
        }
    }
}

pub type ReadResult = Result<Vec<Obj>, Unavailable>;

/// What a source saw.
#[derive(Debug, Clone)]
pub struct Observed {
    pub source: SourceKind,
    /// Paths or the context name, for the report's `source` field.
    pub detail: String,
    inner: Inner,
    /// Snapshots: the resources known to be captured even when empty (see
    /// `save::CAPTURED_FIELD`). None: no kind is ever "not captured" (files, demo, live).
    captured: Option<std::collections::HashSet<String>>,
}

#[derive(Debug, Clone)]
enum Inner {
    /// Offline sources: every object, filtered per query; only planned queries are answered
    /// (None: not restricted yet, for tests that build an `Observed` by hand).
    Bag(Vec<Obj>, Option<std::collections::HashSet<Query>>),
    /// Live: the answer to each query that was planned.
    Reads(HashMap<Query, ReadResult>),
}

impl Observed {
    /// From saved objects (snapshot, demo) or the learner's files.
    pub fn offline(source: SourceKind, detail: impl Into<String>, objects: Vec<Obj>) -> Observed {
        Observed {
            source,
            detail: detail.into(),
            inner: Inner::Bag(objects, None),
            captured: None,
        }
    }

    /// A saved snapshot: a kind with no object in it counts as captured only when one of
    /// these resources names it; any other is "not captured".
    pub fn captured(mut self, resources: impl IntoIterator<Item = String>) -> Observed {
        self.captured = Some(resources.into_iter().collect());
        self
    }

    /// Answers only these queries from now on, as a live gather does: a read a verifier did not
    /// declare is refused ("not planned") on every source alike.
    pub fn planned(mut self, queries: impl IntoIterator<Item = Query>) -> Observed {
        if let Inner::Bag(_, planned) = &mut self.inner {
            *planned = Some(queries.into_iter().collect());
        }
        self
    }

    /// From a live gather: one result per planned query.
    pub fn live(detail: impl Into<String>, reads: HashMap<Query, ReadResult>) -> Observed {
        Observed {
            source: SourceKind::Live,
            detail: detail.into(),
            inner: Inner::Reads(reads),
            captured: None,
        }
    }

    /// The objects answering a query, or why the source cannot answer it.
    pub fn list(&self, q: &Query) -> Result<Vec<&Obj>, Unavailable> {
        match &self.inner {
            Inner::Reads(reads) => match reads.get(q) {
                Some(Ok(objs)) => Ok(objs.iter().collect()),
                Some(Err(u)) => Err(u.clone()),
                None => Err(not_planned(q)),
            },
            Inner::Bag(objects, planned) => {
                if planned.as_ref().is_some_and(|p| !p.contains(q)) {
                    return Err(not_planned(q));
                }
                if self.source.is_static() && q.kind.state_only {
                    return Err(Unavailable::NeedsLiveCluster);
                }
                let selector = q.selector.as_deref().map(Selector::parse);
                let is_nodes = q.kind.group.is_empty() && q.kind.kind == "Node";
                // "Not saved" is about the snapshot as a whole, not about this query's filters:
                // every cluster has nodes, and a snapshot's Lists say what else they captured.
                let resource = q.kind.resource_name();
                let unsaved = is_nodes && !self.source.is_static()
                    || self
                        .captured
                        .as_ref()
                        .is_some_and(|c| !c.contains(&resource));
                if unsaved
                    && !objects
                        .iter()
                        .any(|o| q.kind.matches(o.api_version(), o.kind()))
                {
                    return Err(Unavailable::NotCaptured {
                        resource: q.kind.resource_name(),
                    });
                }
                let matched: Vec<&Obj> = objects
                    .iter()
                    .filter(|o| q.kind.matches(o.api_version(), o.kind()))
                    .filter(|o| match (&q.namespace, o.namespace()) {
                        // A learner's manifest often omits the namespace; it would land in the
                        // lab's namespace when applied with -n.
                        (Some(want), Some(have)) => want == have,
                        _ => true,
                    })
                    .filter(|o| selector.as_ref().is_none_or(|s| s.matches(o)))
                    .filter(|o| q.name.as_deref().is_none_or(|n| o.name() == n))
                    .collect();
                Ok(matched)
            }
        }
    }

    /// Each planned query with its answer, in a stable order (live sources; `trainlab snapshot`
    /// saves them). Offline sources answer from their objects per query.
    pub fn answers(&self, queries: &[Query]) -> Vec<(Query, ReadResult)> {
        queries
            .iter()
            .map(|q| {
                let r = self.list(q).map(|objs| objs.into_iter().cloned().collect());
                (q.clone(), r)
            })
            .collect()
    }

    /// All objects of an offline source (for tests and `lint`).
    pub fn objects(&self) -> Vec<&Obj> {
        match &self.inner {
            Inner::Bag(o, _) => o.iter().collect(),
            Inner::Reads(r) => r
                .values()
                .filter_map(|r| r.as_ref().ok())
                .flatten()
                .collect(),
        }
    }
}

fn not_planned(q: &Query) -> Unavailable {
    Unavailable::Failed {
        message: format!(
            "internal: {} was not planned; the verifier's reads() must declare it",
            q.describe()
        ),
    }
}

/// Equality-based label selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated.
#[derive(Debug, Clone)]
pub struct Selector(Vec<Term>);

#[derive(Debug, Clone)]
enum Term {
    Eq(String, String),
    Ne(String, String),
    Exists(String),
    Absent(String),
}

impl Selector {
    pub fn parse(s: &str) -> Selector {
        let terms = s
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                if let Some((k, v)) = t.split_once("!=") {
                    Term::Ne(k.trim().into(), v.trim().into())
                } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                    Term::Eq(k.trim().into(), v.trim().into())
                } else if let Some(k) = t.strip_prefix('!') {
                    Term::Absent(k.trim().into())
                } else {
                    Term::Exists(t.into())
                }
            })
            .collect();
        Selector(terms)
    }

    pub fn matches(&self, o: &Obj) -> bool {
        self.matches_labels(&labels_of(o))
    }

    pub fn matches_labels(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|t| match t {
            Term::Eq(k, v) => labels.get(k) == Some(v),
            Term::Ne(k, v) => labels.get(k) != Some(v),
            Term::Exists(k) => labels.contains_key(k),
            Term::Absent(k) => !labels.contains_key(k),
        })
    }
}

fn labels_of(o: &Obj) -> BTreeMap<String, String> {
    o.value["metadata"]["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}
