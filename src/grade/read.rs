//! One read plan for a room on a shared cluster: every learner's queries of one kind are merged
//! into one cluster-wide LIST, and each learner's queries are answered from it locally (by
//! namespace, label selector and name). The room costs about one LIST per distinct kind plus
//! discovery, however many learners it has. Where RBAC forbids a kind at cluster scope, that
//! kind is read per namespace instead, and the room says so.
//!
//! Secrets are never read by room grading: the grader's role grants nothing on Secrets (RBAC
//! cannot grant metadata-only reads), so a check that needs one is skipped with that reason.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::value::RawValue;

use crate::cluster::{compact, gather_as, gather_each, Conn, Discovery};
use crate::observe::kinds::{self, ResourceKind};
use crate::observe::{Obj, Observed, Origin, Query, ReadResult, Unavailable};
use crate::results::room::PerNamespace;
use crate::Error;

/// The merged queries: one per kind, at cluster scope. When every query of a kind asks for the
/// same selector and name, the merged query keeps them (the server filters); otherwise it lists
/// the kind whole and the answers are filtered locally. The queries are taken one at a time and
/// only the kinds are kept: a room of a thousand learners asks tens of thousands of them.
pub fn merge<Q: std::borrow::Borrow<Query>>(queries: impl IntoIterator<Item = Q>) -> Vec<Query> {
    let mut merged: Vec<(Query, bool)> = Vec::new();
    for q in queries {
        let q = q.borrow();
        if is_withheld(q) {
            continue;
        }
        match merged.iter_mut().find(|(m, _)| m.kind == q.kind) {
            Some((m, same)) => *same &= m.selector == q.selector && m.name == q.name,
            None => {
                let mut first = Query::cluster(q.kind);
                first.selector = q.selector.clone();
                first.name = q.name.clone();
                merged.push((first, true));
            }
        }
    }
    merged
        .into_iter()
        .map(|(mut m, same)| {
            if !same {
                m.selector = None;
                m.name = None;
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

/// Listed objects' text is packed in blocks of about this many bytes. Objects packed alone
/// shrink to about 60% of their text (LZ4 finds little to repeat inside one object); a block of
/// neighbours in a list (ordered by namespace, so a learner's objects are neighbours) shrinks to
/// about 25%, since a learner's pods, Jobs and ConfigMaps repeat each other's keys, labels and
/// images. Bigger blocks pack a little better but cost more to unpack for one object.
const BLOCK: usize = 32 * 1024;

/// One kind's listed objects, kept as compact JSON text (see [`compact`]) packed with LZ4 in
/// blocks until the learners they belong to are judged: a room holds tens of thousands of
/// objects, and as trees of values they take about five times the bytes of their text.
#[derive(Default)]
struct Listed {
    blocks: Vec<Box<[u8]>>,
    objects: Vec<Stored>,
}

/// Positions of a kind's objects, per namespace.
type Index = HashMap<Box<str>, Vec<usize>>;

impl Listed {
    /// A kind's list as read, and (for a namespaced kind) where each namespace's objects are.
    fn new(
        kind: &ResourceKind,
        placed: Vec<Placed>,
        blocks: Vec<Box<[u8]>>,
    ) -> (Listed, Option<Index>) {
        let idx = kind.namespaced.then(|| {
            let mut idx: Index = HashMap::new();
            for (i, p) in placed.iter().enumerate() {
                let ns = p.namespace.as_deref().unwrap_or_default();
                match idx.get_mut(ns) {
                    Some(v) => v.push(i),
                    None => {
                        idx.insert(ns.into(), vec![i]);
                    }
                }
            }
            idx
        });
        let objects = placed.into_iter().map(|p| p.stored).collect();
        (Listed { blocks, objects }, idx)
    }
}

/// Where one listed object's text is, and its name (so a named read unpacks only its block).
struct Stored {
    name: Box<str>,
    block: u32,
    start: u32,
    end: u32,
}

/// One listed object as it is read: where its text went, and its namespace (for the index).
struct Placed {
    namespace: Option<Box<str>>,
    stored: Stored,
}

/// A kind's list while it is read: its sealed blocks and the one being filled.
#[derive(Default)]
struct Packer {
    blocks: Vec<Box<[u8]>>,
    run: String,
}

impl Packer {
    /// Appends one object's text; returns its block and byte range in that block.
    fn add(&mut self, text: &str) -> Result<(u32, u32, u32), String> {
        if !self.run.is_empty() && self.run.len() + text.len() > BLOCK {
            self.seal();
        }
        let start = self.run.len();
        self.run.push_str(text);
        let n = |v: usize| u32::try_from(v).map_err(|_| "an object too big to hold".to_string());
        Ok((n(self.blocks.len())?, n(start)?, n(self.run.len())?))
    }

    fn seal(&mut self) {
        if !self.run.is_empty() {
            let packed = lz4_flex::compress_prepend_size(self.run.as_bytes());
            self.blocks.push(packed.into_boxed_slice());
            self.run.clear();
        }
    }

    fn finish(mut self) -> Vec<Box<[u8]>> {
        self.seal();
        self.blocks
    }

    /// A listed object, read as [`compact`] text into this kind's blocks.
    fn read(packer: &Mutex<Packer>, raw: &RawValue, q: &Query) -> Result<Placed, String> {
        let c = compact(raw, q)?;
        let (block, start, end) = packer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(&c.text)?;
        Ok(Placed {
            namespace: c.header.namespace().map(Box::from),
            stored: Stored {
                name: c.header.name().into(),
                block,
                start,
                end,
            },
        })
    }
}

/// The blocks unpacked and the objects parsed for one observation (one learner's queries
/// often read one block, or one object, more than once: one namespace's pods with two
/// selectors).
#[derive(Default)]
struct Unpacked {
    /// Each block's text, checked as UTF-8 once: its objects are then parsed from `&str`,
    /// whose strings the parser need not check one by one.
    blocks: HashMap<(&'static ResourceKind, u32), String>,
    objects: HashMap<(&'static ResourceKind, usize), Obj>,
}

impl Unpacked {
    /// Object `i` of `kind`; it passed `Obj::new` when it was read, so this cannot fail unless
    /// memory was damaged.
    fn obj(
        &mut self,
        kind: &'static ResourceKind,
        listed: &Listed,
        i: usize,
    ) -> Result<Obj, Unavailable> {
        if let Some(o) = self.objects.get(&(kind, i)) {
            return Ok(o.clone());
        }
        let s = &listed.objects[i];
        let failed = |message: String| Unavailable::Failed {
            message: format!("internal: a stored object no longer reads: {message}"),
        };
        let text = match self.blocks.entry((kind, s.block)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let packed = listed
                    .blocks
                    .get(s.block as usize)
                    .ok_or_else(|| failed("no such block".into()))?;
                let bytes = lz4_flex::decompress_size_prepended(packed)
                    .map_err(|e| failed(e.to_string()))?;
                e.insert(String::from_utf8(bytes).map_err(|e| failed(e.to_string()))?)
            }
        };
        let bytes = text
            .get(s.start as usize..s.end as usize)
            .ok_or_else(|| failed("out of its block".into()))?;
        let v = serde_json::from_str(bytes).map_err(|e| failed(e.to_string()))?;
        let o = Obj::new(v, Origin::Live).map_err(|e| failed(e.to_string()))?;
        self.objects.insert((kind, i), o.clone());
        Ok(o)
    }
}

/// What the room read, merged, and the per-namespace fallbacks.
pub struct RoomReads {
    /// Per merged kind: its query and the answer, objects kept packed ([`Listed`]).
    main: HashMap<&'static ResourceKind, (Query, Result<Listed, Unavailable>)>,
    /// For each merged kind, the positions of its objects per namespace, so answering one
    /// learner's query looks at that learner's objects only (not the whole room's).
    by_namespace: HashMap<&'static ResourceKind, Index>,
    /// Kinds read per namespace after a cluster-wide 403, answered by their own queries.
    fallback: Option<Observed>,
    fallback_kinds: HashSet<&'static ResourceKind>,
    pub per_namespace: Vec<PerNamespace>,
    context: String,
    /// Answers to cluster-wide queries (nodes, NodePools, StorageClasses): the same for every
    /// learner, so parsed once and shared by every batch (objects share their values).
    shared: Mutex<HashMap<Query, Arc<OnceLock<ReadResult>>>>,
}

impl RoomReads {
    /// Reads what `queries` need: the merged LISTs, then per namespace for any namespaced kind
    /// whose cluster-wide LIST was forbidden.
    /// Reads what `queries` ask. They are called again only for a kind RBAC forbids at
    /// cluster scope (read per namespace instead): the room's queries are made as they are
    /// needed, never held as one list.
    pub async fn gather<I: Iterator<Item = Query>>(
        conn: &Conn,
        discovery: &Discovery,
        queries: impl Fn() -> I,
    ) -> Result<RoomReads, Error> {
        let merged = merge(queries());
        let mut packers: HashMap<Query, Mutex<Packer>> = merged
            .iter()
            .map(|q| (q.clone(), Mutex::default()))
            .collect();
        let read = |raw: &RawValue, q: &Query| match packers.get(q) {
            Some(p) => Packer::read(p, raw, q),
            None => Err(format!("internal: {} was not planned", q.describe())),
        };
        let main = gather_as(conn, discovery, &merged, read).await?;
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
            let mine: Vec<Query> =
                dedup(queries().filter(|q| q.kind == m.kind && q.namespace.is_some()));
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
        let mut by_namespace = HashMap::new();
        let mut kept = HashMap::new();
        for (q, answer) in main {
            let blocks = packers
                .remove(&q)
                .map(|p| p.into_inner().unwrap_or_else(|e| e.into_inner()).finish())
                .unwrap_or_default();
            let answer = answer.map(|placed| {
                let (listed, idx) = Listed::new(q.kind, placed, blocks);
                if let Some(idx) = idx {
                    by_namespace.insert(q.kind, idx);
                }
                listed
            });
            kept.insert(q.kind, (q, answer));
        }
        Ok(RoomReads {
            main: kept,
            by_namespace,
            fallback,
            fallback_kinds,
            per_namespace,
            context: conn.context.clone(),
            shared: Mutex::new(HashMap::new()),
        })
    }

    /// How many objects the room holds, and their packed bytes (for `-v`).
    pub fn held(&self) -> (usize, usize) {
        let listed = self.main.values().filter_map(|(_, a)| a.as_ref().ok());
        listed.fold((0, 0), |(n, bytes), l| {
            let packed: usize = l.blocks.iter().map(|b| b.len()).sum();
            (n + l.objects.len(), bytes + packed)
        })
    }

    /// The answer to one learner's query, as if it had been read on its own.
    pub fn answer(&self, q: &Query) -> ReadResult {
        self.answer_in(q, &mut Unpacked::default())
    }

    /// [`RoomReads::answer`], reusing what `unpacked` holds for this observation.
    fn answer_in(&self, q: &Query, unpacked: &mut Unpacked) -> ReadResult {
        if q.namespace.is_some() {
            return self.answer_now(q, unpacked);
        }
        // One answer per query, however many workers ask at once: a second parse of the room's
        // thousand NodePools would be held beside the first.
        let once = {
            let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            shared.entry(q.clone()).or_default().clone()
        };
        once.get_or_init(|| {
            let r = self.answer_now(q, unpacked);
            if let Ok(objs) = &r {
                tracing::debug!(
                    "room: {} answered for every learner: {} objects",
                    q.describe(),
                    objs.len()
                );
            }
            r
        })
        .clone()
    }

    fn answer_now(&self, q: &Query, unpacked: &mut Unpacked) -> ReadResult {
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
        let listed = answer.as_ref().map_err(Clone::clone)?;
        let all: Vec<usize>;
        let mine: &[usize] = match (&q.namespace, self.by_namespace.get(q.kind)) {
            (Some(ns), Some(idx)) => idx.get(ns.as_str()).map_or(&[], Vec::as_slice),
            _ => {
                all = (0..listed.objects.len()).collect();
                &all
            }
        };
        // Names are kept beside the text, so a named read parses only what it names.
        let mut out = Vec::with_capacity(mine.len());
        for &i in mine {
            if q.name
                .as_deref()
                .is_some_and(|n| &*listed.objects[i].name != n)
            {
                continue;
            }
            out.push(unpacked.obj(q.kind, listed, i)?);
        }
        Ok(filter(q, out))
    }

    /// An observation holding exactly the answers to `queries` (one batch of learners' labs), as
    /// a live gather of those queries would have produced. Each block is unpacked and each
    /// object parsed once for the batch, however many of its queries select it.
    pub fn observed(&self, queries: &[Query]) -> Observed {
        let mut unpacked = Unpacked::default();
        let reads: HashMap<Query, ReadResult> = queries
            .iter()
            .map(|q| (q.clone(), self.answer_in(q, &mut unpacked)))
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

    /// A kind's objects read as `gather` reads them: packed in blocks, indexed by namespace.
    fn listed(
        kind: &'static ResourceKind,
        objects: &[serde_json::Value],
    ) -> (Listed, Option<Index>) {
        let q = Query::cluster(kind);
        let packer = Mutex::new(Packer::default());
        let placed = objects
            .iter()
            .map(|v| {
                let raw = serde_json::value::to_raw_value(v).unwrap();
                Packer::read(&packer, &raw, &q).unwrap()
            })
            .collect();
        let blocks = packer.into_inner().unwrap().finish();
        Listed::new(kind, placed, blocks)
    }

    #[test]
    fn neighbours_are_packed_together_and_each_reads_back_as_it_was_listed() {
        let pod = |i: usize| {
            serde_json::json!({
                "metadata": {"name": format!("w-{i}"), "namespace": format!("l{}-lab", i / 8), "labels": {"app": "x"}},
                "spec": {"containers": (0..4).map(|c| serde_json::json!({
                    "name": format!("c{c}"), "image": "nvcr.io/nvidia/pytorch:24.07-py3",
                    "resources": {"limits": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"}}}))
                    .collect::<Vec<_>>()},
            })
        };
        let pods: Vec<serde_json::Value> = (0..200).map(pod).collect();
        let (listed, idx) = listed(&kinds::PODS, &pods);
        let text: usize = pods.iter().map(|p| p.to_string().len()).sum();
        let packed: usize = listed.blocks.iter().map(|b| b.len()).sum();
        assert!(listed.blocks.len() > 1, "{} blocks", listed.blocks.len());
        assert!(packed * 5 < text, "{packed} of {text}");
        let idx = idx.unwrap();
        assert_eq!(idx["l3-lab"], (24..32).collect::<Vec<_>>());
        let mut unpacked = Unpacked::default();
        for (i, p) in pods.iter().enumerate() {
            let o = unpacked.obj(&kinds::PODS, &listed, i).unwrap();
            assert_eq!(o.kind(), "Pod", "built-in list items get their kind");
            assert_eq!(o.name(), format!("w-{i}"));
            assert_eq!(o.value["spec"], p["spec"]);
        }
        assert_eq!(
            unpacked.blocks.len(),
            listed.blocks.len(),
            "each block unpacked once"
        );
    }

    /// A room's reads as `gather` would leave them: each kind's objects stored.
    fn room_reads(objects: &[(&'static ResourceKind, serde_json::Value)]) -> RoomReads {
        let mut kinds: Vec<&'static ResourceKind> = Vec::new();
        for (k, _) in objects {
            if !kinds.contains(k) {
                kinds.push(k);
            }
        }
        let mut main = HashMap::new();
        let mut by_namespace = HashMap::new();
        for kind in kinds {
            let mine: Vec<serde_json::Value> = objects
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, v)| v.clone())
                .collect();
            let (l, idx) = listed(kind, &mine);
            if let Some(idx) = idx {
                by_namespace.insert(kind, idx);
            }
            main.insert(kind, (Query::cluster(kind), Ok(l)));
        }
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
