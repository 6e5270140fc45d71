//! One read plan for a room on a shared cluster: every learner's queries of one kind are merged
//! into one cluster-wide LIST, and each learner's queries are answered from it locally (by
//! namespace, label selector and name). The room costs about one LIST per distinct kind plus
//! discovery, however many learners it has. Where RBAC forbids a kind at cluster scope, that
//! kind is read per namespace instead, and the room says so.
//!
//! Secrets are never read by room grading: the grader's role grants nothing on Secrets (RBAC
//! cannot grant metadata-only reads), so a check that needs one is skipped with that reason.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::value::RawValue;

use crate::cluster::{compact, gather_as, gather_each, Conn, Discovery};
use crate::observe::kinds::{self, ResourceKind};
use crate::observe::{Obj, Observed, Origin, Query, ReadResult, Unavailable};
use crate::Error;

/// The merged queries: one per kind, at cluster scope. When every query of a kind asks for the
/// same selector and name, the merged query keeps them (the server filters); otherwise it lists
/// the kind whole and the answers are filtered locally.
pub fn merge(queries: &[Query]) -> Vec<Query> {
    let mut order: Vec<&'static ResourceKind> = Vec::new();
    let mut groups: HashMap<&'static ResourceKind, Vec<&Query>> = HashMap::new();
    for q in queries {
        if is_withheld(q) {
            continue;
        }
        let g = groups.entry(q.kind).or_default();
        if g.is_empty() {
            order.push(q.kind);
        }
        g.push(q);
    }
    order
        .into_iter()
        .map(|kind| {
            let g = &groups[kind];
            let first = g[0];
            let same = g
                .iter()
                .all(|q| q.selector == first.selector && q.name == first.name);
            let mut m = Query::cluster(kind);
            if same {
                m.selector = first.selector.clone();
                m.name = first.name.clone();
            }
            m
        })
        .collect()
}

/// Room grading never reads Secrets (see the module docs).
pub fn is_withheld(q: &Query) -> bool {
    *q.kind == kinds::SECRETS
}

/// Why a withheld read has no answer. Forbidden by design: the grader's role has no rule for
/// Secrets; the verdict on the check becomes *skipped* (`super::withhold_secrets`).
pub fn withheld(q: &Query) -> Unavailable {
    Unavailable::Forbidden {
        verb: "list".into(),
        resource: q.kind.resource_name(),
        namespace: q.namespace.clone(),
        message: SECRETS_WITHHELD.into(),
    }
}

/// The message of a withheld Secret read.
pub const SECRETS_WITHHELD: &str = "workshop grading reads no Secrets";

/// A kind that RBAC forbids at cluster scope and was read namespace by namespace instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerNamespace {
    /// `pods`, `jobs.batch`.
    pub resource: String,
    /// How many namespaces were read.
    pub namespaces: usize,
    /// The API server's refusal of the cluster-wide read.
    pub message: String,
}

/// One object of the room's cluster-wide reads, kept as compressed JSON text until a batch of
/// learners is judged: a room holds thousands of objects; as trees of values they take about
/// five times the bytes of their text, and LZ4 packs their text to about 60%.
struct Stored {
    namespace: Option<Box<str>>,
    name: Box<str>,
    packed: Box<[u8]>,
}

impl Stored {
    /// A listed object, read as [`compact`] text.
    fn read(raw: &RawValue, q: &Query) -> Result<Stored, String> {
        let c = compact(raw, q)?;
        Ok(Stored {
            namespace: c.header.namespace().map(Box::from),
            name: c.header.name().into(),
            packed: lz4_flex::compress_prepend_size(c.text.as_bytes()).into_boxed_slice(),
        })
    }

    /// The object again; it passed `Obj::new` when it was read, so this cannot fail unless
    /// memory was damaged.
    fn obj(&self) -> Result<Obj, Unavailable> {
        lz4_flex::decompress_size_prepended(&self.packed)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_slice(&text).map_err(|e| e.to_string()))
            .and_then(|v| Obj::new(v, Origin::Live).map_err(|e| e.to_string()))
            .map_err(|message| Unavailable::Failed {
                message: format!("internal: a stored object no longer reads: {message}"),
            })
    }
}

/// What the room read, merged, and the per-namespace fallbacks.
pub struct RoomReads {
    /// Per merged kind: its query and the answer, objects kept as [`Stored`].
    main: HashMap<&'static ResourceKind, (Query, Result<Vec<Stored>, Unavailable>)>,
    /// For each merged kind, the positions of its objects per namespace, so answering one
    /// learner's query looks at that learner's objects only (not the whole room's).
    by_namespace: HashMap<&'static ResourceKind, HashMap<Box<str>, Vec<usize>>>,
    /// Kinds read per namespace after a cluster-wide 403, answered by their own queries.
    fallback: Option<Observed>,
    fallback_kinds: HashSet<&'static ResourceKind>,
    pub per_namespace: Vec<PerNamespace>,
    context: String,
    /// Answers to cluster-wide queries (nodes, NodePools, StorageClasses): the same for every
    /// learner, so parsed once and shared by every batch (objects share their values).
    shared: Mutex<HashMap<Query, ReadResult>>,
}

impl RoomReads {
    /// Reads what `queries` need: the merged LISTs, then per namespace for any namespaced kind
    /// whose cluster-wide LIST was forbidden.
    pub async fn gather(
        conn: &Conn,
        discovery: &Discovery,
        queries: &[Query],
    ) -> Result<RoomReads, Error> {
        let merged = merge(queries);
        let main = gather_as(conn, discovery, &merged, Stored::read).await?;
        let mut fallback_kinds = HashSet::new();
        let mut per_namespace = Vec::new();
        let mut retry: Vec<Query> = Vec::new();
        for (m, answer) in &main {
            let Err(Unavailable::Forbidden { message, .. }) = answer else {
                continue;
            };
            if !m.kind.namespaced {
                continue;
            }
            let mine: Vec<Query> = dedup(
                queries
                    .iter()
                    .filter(|q| q.kind == m.kind && q.namespace.is_some())
                    .cloned(),
            );
            if mine.is_empty() {
                continue;
            }
            fallback_kinds.insert(m.kind);
            per_namespace.push(PerNamespace {
                resource: m.kind.resource_name(),
                namespaces: mine
                    .iter()
                    .filter_map(|q| q.namespace.as_deref())
                    .collect::<HashSet<_>>()
                    .len(),
                message: message.clone(),
            });
            retry.extend(mine);
        }
        let fallback = if retry.is_empty() {
            None
        } else {
            Some(gather_each(conn, discovery, &retry).await?)
        };
        let by_namespace = main
            .iter()
            .filter(|(m, _)| m.kind.namespaced)
            .filter_map(|(m, answer)| {
                let objs = answer.as_ref().ok()?;
                let mut idx: HashMap<Box<str>, Vec<usize>> = HashMap::new();
                for (i, o) in objs.iter().enumerate() {
                    idx.entry(o.namespace.clone().unwrap_or_default())
                        .or_default()
                        .push(i);
                }
                Some((m.kind, idx))
            })
            .collect();
        Ok(RoomReads {
            main: main.into_iter().map(|(q, a)| (q.kind, (q, a))).collect(),
            by_namespace,
            fallback,
            fallback_kinds,
            per_namespace,
            context: conn.context.clone(),
            shared: Mutex::new(HashMap::new()),
        })
    }

    /// The answer to one learner's query, as if it had been read on its own.
    pub fn answer(&self, q: &Query) -> ReadResult {
        if q.namespace.is_some() {
            return self.answer_now(q);
        }
        let lock = || self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = lock().get(q) {
            return r.clone();
        }
        let r = self.answer_now(q);
        lock().insert(q.clone(), r.clone());
        r
    }

    fn answer_now(&self, q: &Query) -> ReadResult {
        if is_withheld(q) {
            return Err(withheld(q));
        }
        if self.fallback_kinds.contains(q.kind) && q.namespace.is_some() {
            if let Some(f) = &self.fallback {
                return f.list(q).map(|objs| objs.into_iter().cloned().collect());
            }
        }
        let Some((_, answer)) = self.main.get(q.kind) else {
            return Err(Unavailable::Failed {
                message: format!("internal: {} was not planned for the room", q.describe()),
            });
        };
        let objs = answer.as_ref().map_err(Clone::clone)?;
        let mine: Vec<&Stored> = match (&q.namespace, self.by_namespace.get(q.kind)) {
            (Some(ns), Some(idx)) => idx
                .get(ns.as_str())
                .map(|is| is.iter().map(|&i| &objs[i]).collect())
                .unwrap_or_default(),
            _ => objs.iter().collect(),
        };
        // Names are kept beside the text, so a named read parses only what it names.
        let parsed = mine
            .into_iter()
            .filter(|s| q.name.as_deref().is_none_or(|n| &*s.name == n))
            .map(Stored::obj)
            .collect::<Result<Vec<Obj>, Unavailable>>()?;
        Ok(filter(q, parsed))
    }

    /// An observation holding exactly the answers to `queries` (one batch of learners' labs), as
    /// a live gather of those queries would have produced.
    pub fn observed(&self, queries: &[Query]) -> Observed {
        let reads: HashMap<Query, ReadResult> = queries
            .iter()
            .map(|q| (q.clone(), self.answer(q)))
            .collect();
        Observed::live(self.context.clone(), reads)
    }
}

fn dedup(queries: impl Iterator<Item = Query>) -> Vec<Query> {
    let mut seen = HashSet::new();
    queries.filter(|q| seen.insert(q.clone())).collect()
}

/// The objects of a cluster-wide answer that `q` selects.
pub fn filter(q: &Query, objs: impl IntoIterator<Item = Obj>) -> Vec<Obj> {
    objs.into_iter().filter(|o| q.selects(o)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn obj(kind: &str, ns: Option<&str>, name: &str, labels: serde_json::Value) -> Obj {
        let mut meta = serde_json::json!({"name": name, "labels": labels});
        if let Some(ns) = ns {
            meta["namespace"] = ns.into();
        }
        Obj::new(
            serde_json::json!({"apiVersion": "v1", "kind": kind, "metadata": meta}),
            Origin::Live,
        )
        .unwrap()
    }

    #[test]
    fn a_room_merges_every_learners_queries_into_one_per_kind() {
        let queries: Vec<Query> = ["alice", "bob", "carol"]
            .iter()
            .flat_map(|l| {
                [
                    Query::cluster(&kinds::NODES),
                    Query::new(&kinds::PODS, &format!("{l}-volcano-gang")),
                    Query::new(&kinds::PODS, &format!("{l}-efa-nccl")).with_selector("app=x"),
                    Query::new(&kinds::JOBS, &format!("{l}-efa-nccl")),
                    Query::new(&kinds::SECRETS, &format!("{l}-efa-nccl")),
                ]
            })
            .chain([
                Query::cluster(&kinds::DEPLOYMENTS).named("volcano-scheduler"),
                Query::cluster(&kinds::DEPLOYMENTS).named("mpi-operator"),
            ])
            .collect();
        let m = merge(&queries);
        assert_eq!(
            m,
            [
                Query::cluster(&kinds::NODES),
                // Different selectors: listed whole, filtered locally.
                Query::cluster(&kinds::PODS),
                Query::cluster(&kinds::JOBS),
                Query::cluster(&kinds::DEPLOYMENTS),
            ],
            "one per kind, cluster-wide; Secrets never"
        );
        // One name everywhere: the server filters.
        let one = merge(&[Query::cluster(&kinds::DEPLOYMENTS).named("karpenter")]);
        assert_eq!(one[0].name.as_deref(), Some("karpenter"));
    }

    #[test]
    fn local_filtering_answers_like_the_server_would() {
        let all = [
            obj(
                "Pod",
                Some("alice-lab"),
                "p1",
                serde_json::json!({"app": "x"}),
            ),
            obj(
                "Pod",
                Some("alice-lab"),
                "p2",
                serde_json::json!({"app": "y"}),
            ),
            obj(
                "Pod",
                Some("bob-lab"),
                "p3",
                serde_json::json!({"app": "x"}),
            ),
        ];
        let names = |q: &Query| -> Vec<String> {
            filter(q, all.iter().cloned())
                .iter()
                .map(|o| o.name().to_string())
                .collect()
        };
        assert_eq!(names(&Query::new(&kinds::PODS, "alice-lab")), ["p1", "p2"]);
        assert_eq!(
            names(&Query::new(&kinds::PODS, "alice-lab").with_selector("app=x")),
            ["p1"]
        );
        assert_eq!(
            names(&Query::new(&kinds::PODS, "bob-lab").named("p3")),
            ["p3"]
        );
        assert_eq!(names(&Query::cluster(&kinds::PODS)).len(), 3);
        assert!(names(&Query::new(&kinds::PODS, "carol-lab")).is_empty());
    }

    #[test]
    fn a_stored_object_reads_back_as_it_was_listed_and_takes_less_room() {
        let pod = serde_json::json!({
            "metadata": {"name": "w-0", "namespace": "alice-lab", "labels": {"app": "x"}},
            "spec": {"containers": (0..8).map(|i| serde_json::json!({
                "name": format!("c{i}"), "image": "nvcr.io/nvidia/pytorch:24.07-py3",
                "resources": {"limits": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"}}}))
                .collect::<Vec<_>>()},
        });
        let raw = serde_json::value::to_raw_value(&pod).unwrap();
        let q = Query::new(&kinds::PODS, "alice-lab");
        let s = Stored::read(&raw, &q).unwrap();
        assert_eq!(
            (s.namespace.as_deref(), &*s.name),
            (Some("alice-lab"), "w-0")
        );
        assert!(
            s.packed.len() * 2 < raw.get().len(),
            "{} of {}",
            s.packed.len(),
            raw.get().len()
        );
        let o = s.obj().unwrap();
        assert_eq!(o.kind(), "Pod");
        assert_eq!(o.value["spec"], pod["spec"]);
    }

    /// A room's reads as `gather` would leave them: each kind's objects stored.
    fn room_reads(objects: &[(&'static ResourceKind, serde_json::Value)]) -> RoomReads {
        let mut main: HashMap<&'static ResourceKind, (Query, Result<Vec<Stored>, Unavailable>)> =
            HashMap::new();
        for (kind, v) in objects {
            let q = Query::cluster(kind);
            let raw = serde_json::value::to_raw_value(v).unwrap();
            let stored = Stored::read(&raw, &q).unwrap();
            main.entry(*kind)
                .or_insert_with(|| (q, Ok(Vec::new())))
                .1
                .as_mut()
                .unwrap()
                .push(stored);
        }
        let by_namespace = main
            .iter()
            .filter(|(k, _)| k.namespaced)
            .map(|(k, (_, objs))| {
                let mut idx: HashMap<Box<str>, Vec<usize>> = HashMap::new();
                for (i, o) in objs.as_ref().unwrap().iter().enumerate() {
                    idx.entry(o.namespace.clone().unwrap_or_default())
                        .or_default()
                        .push(i);
                }
                (*k, idx)
            })
            .collect();
        RoomReads {
            main,
            by_namespace,
            fallback: None,
            fallback_kinds: HashSet::new(),
            per_namespace: Vec::new(),
            context: "room".into(),
            shared: Mutex::new(HashMap::new()),
        }
    }

    #[test]
    fn every_learner_shares_one_parse_of_the_cluster_wide_answers_and_sees_only_their_namespace() {
        let pod = |ns: &str, name: &str| serde_json::json!({"metadata": {"name": name, "namespace": ns, "labels": {"app": "x"}}});
        let reads = room_reads(&[
            (
                &kinds::NODES,
                serde_json::json!({"metadata": {"name": "n1"}}),
            ),
            (
                &kinds::NODES,
                serde_json::json!({"metadata": {"name": "n2"}}),
            ),
            (&kinds::PODS, pod("alice-lab", "a-0")),
            (&kinds::PODS, pod("alice-lab", "a-1")),
            (&kinds::PODS, pod("bob-lab", "b-0")),
        ]);
        let nodes = Query::cluster(&kinds::NODES);
        let first = reads.answer(&nodes).unwrap();
        let again = reads.observed(std::slice::from_ref(&nodes));
        let again = again.list(&nodes).unwrap();
        assert_eq!(first.len(), 2);
        assert!(
            first
                .iter()
                .zip(&again)
                .all(|(a, b)| Arc::ptr_eq(&a.value, &b.value)),
            "the second learner gets the same parsed nodes, not a copy"
        );
        let names = |q: &Query| -> Vec<String> {
            reads
                .answer(q)
                .unwrap()
                .iter()
                .map(|o| o.name().to_string())
                .collect()
        };
        assert_eq!(
            names(&Query::new(&kinds::PODS, "alice-lab")),
            ["a-0", "a-1"]
        );
        assert_eq!(names(&Query::new(&kinds::PODS, "bob-lab")), ["b-0"]);
        assert_eq!(
            names(&Query::new(&kinds::PODS, "alice-lab").named("a-1")),
            ["a-1"]
        );
        assert!(names(&Query::new(&kinds::PODS, "carol-lab")).is_empty());
        // A namespaced answer is parsed for its learner: no sharing needed, none kept.
        assert_eq!(reads.shared.lock().unwrap().len(), 1);
    }

    #[test]
    fn secrets_are_withheld_as_forbidden_by_design() {
        let q = Query::new(&kinds::SECRETS, "alice-lab");
        assert!(is_withheld(&q));
        match withheld(&q) {
            Unavailable::Forbidden {
                resource, message, ..
            } => {
                assert_eq!(resource, "secrets");
                assert_eq!(message, SECRETS_WITHHELD);
            }
            other => panic!("{other:?}"),
        }
    }
}
