//! The room's objects while it is followed: per kind and namespace, one LZ4-packed block of the
//! objects' compact JSON text (as `read.rs` keeps a listed room), so a change repacks the block
//! of one namespace of one kind. Answers a learner's queries as a LIST of them would have.
//!
//! One namespace's objects of one kind are a few kilobytes: too little for LZ4 to find much to
//! repeat (a 1,000-learner room took 56 MB packed so, against 23 MB in the 32 KB blocks of
//! `read.rs`). Each block is packed against a dictionary, the text of another namespace's
//! objects of the same kind (learners' pods repeat each other's keys, labels and images).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::observe::kinds::ResourceKind;
use crate::observe::{Obj, Observed, Origin, Query, ReadResult, Unavailable};

use super::super::read::{filter, is_withheld, withheld};

/// One object as a stream brought it: where it lives and its compact text
/// (`cluster::compact`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Empty for a cluster-scoped object.
    pub namespace: Box<str>,
    pub name: Box<str>,
    pub text: Box<str>,
}

/// Objects as (name, compact text).
type Named = Vec<(Box<str>, Box<str>)>;

/// LZ4 looks back at most this far: a longer dictionary's start is never used.
const DICT_MAX: usize = 64 * 1024;

/// A dictionary shorter than this is replaced by a longer namespace's text when one comes.
const DICT_ENOUGH: usize = 16 * 1024;

/// What a kind's blocks are packed against: shared by the blocks packed with it.
type Dict = Arc<[u8]>;

/// A dictionary for the blocks to come: `dict`, or the text of `items` when it is longer and
/// `dict` is short.
fn dict_for(dict: &Dict, items: &Named) -> Dict {
    if dict.len() >= DICT_ENOUGH {
        return dict.clone();
    }
    let len: usize = items.iter().map(|(_, t)| t.len()).sum();
    if len <= dict.len() {
        return dict.clone();
    }
    let mut text = Vec::with_capacity(len);
    for (_, t) in items {
        text.extend_from_slice(t.as_bytes());
    }
    let keep = text.len().saturating_sub(DICT_MAX);
    Arc::from(&text[keep..])
}

/// One namespace's objects of one kind, packed, in name order.
struct Block {
    packed: Box<[u8]>,
    /// What `packed` was packed against.
    dict: Dict,
    /// Each object's name and byte range in the unpacked text.
    objects: Vec<(Box<str>, u32, u32)>,
}

impl Block {
    fn pack(mut items: Named, dict: Dict) -> Block {
        items.sort_by(|a, b| a.0.cmp(&b.0));
        let mut text = String::with_capacity(items.iter().map(|(_, t)| t.len()).sum());
        let mut objects = Vec::with_capacity(items.len());
        for (name, t) in items {
            let start = text.len();
            text.push_str(&t);
            // A block is one namespace's objects of one kind: far below 4 GiB.
            let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
            objects.push((name, n(start), n(text.len())));
        }
        Block {
            packed: lz4_flex::block::compress_prepend_size_with_dict(text.as_bytes(), &dict)
                .into_boxed_slice(),
            dict,
            objects,
        }
    }

    fn text(&self) -> Result<String, Unavailable> {
        let bytes = lz4_flex::block::decompress_size_prepended_with_dict(&self.packed, &self.dict)
            .map_err(|e| broken(&e))?;
        String::from_utf8(bytes).map_err(|e| broken(&e))
    }

    /// Whether both hold the same objects. Their bytes say so only when they were packed
    /// against the same dictionary: against different ones, equal objects can be different
    /// bytes and different objects equal bytes.
    fn same(&self, other: &Block) -> bool {
        if self.objects != other.objects {
            return false;
        }
        if Arc::ptr_eq(&self.dict, &other.dict) || self.dict == other.dict {
            return self.packed == other.packed;
        }
        matches!((self.text(), other.text()), (Ok(a), Ok(b)) if a == b)
    }

    /// The objects as (name, text), in name order.
    fn unpack(&self) -> Result<Named, Unavailable> {
        let text = self.text()?;
        self.objects
            .iter()
            .map(|(name, s, e)| {
                let t = text
                    .get(*s as usize..*e as usize)
                    .ok_or_else(|| broken(&"an object out of its block"))?;
                Ok((name.clone(), t.into()))
            })
            .collect()
    }
}

fn broken(e: &dyn std::fmt::Display) -> Unavailable {
    Unavailable::Failed {
        message: format!("internal: a held object no longer reads: {e}"),
    }
}

/// A stream's (re)list while it arrives: each namespace's objects are packed as soon as the
/// list moves on to the next namespace (the API server lists in key order, namespace then
/// name), so a room's text is never held unpacked whole (a 1,000-learner room's pods are
/// hundreds of megabytes as text).
#[derive(Default)]
pub struct Staging {
    blocks: BTreeMap<Box<str>, Block>,
    open: Option<(Box<str>, Named)>,
    count: usize,
    dict: Dict,
}

impl Staging {
    pub fn add(&mut self, h: Held) {
        self.count += 1;
        match &mut self.open {
            Some((ns, items)) if *ns == h.namespace => items.push((h.name, h.text)),
            _ => {
                self.seal();
                self.open = Some((h.namespace, vec![(h.name, h.text)]));
            }
        }
    }

    /// How many objects were listed.
    pub fn len(&self) -> usize {
        self.count
    }

    fn seal(&mut self) {
        if let Some((ns, items)) = self.open.take() {
            // A namespace met again (a list out of key order) joins its block.
            let items = match self.blocks.remove(&ns) {
                Some(b) => {
                    let mut all = b.unpack().unwrap_or_default();
                    all.extend(items);
                    all
                }
                None => items,
            };
            self.dict = dict_for(&self.dict, &items);
            self.blocks
                .insert(ns, Block::pack(items, self.dict.clone()));
        }
    }
}

/// What the room holds of one kind.
#[derive(Default)]
struct Kind {
    /// Per namespace ("" for cluster-scoped objects).
    blocks: BTreeMap<Box<str>, Block>,
    /// What a namespace's new block is packed against (the last list's dictionary).
    dict: Dict,
    /// Why the kind (or, with `watched_namespaces`, a namespace outside them) has no answer.
    unavailable: Option<Unavailable>,
    /// Watched namespace by namespace (RBAC forbids the kind cluster-wide): only these
    /// namespaces have answers.
    watched_namespaces: Option<std::collections::HashSet<String>>,
}

/// The room's objects, per kind and namespace.
#[derive(Default)]
pub struct Store {
    kinds: HashMap<&'static ResourceKind, Kind>,
    context: String,
}

impl Store {
    pub fn new(context: &str) -> Store {
        Store {
            kinds: HashMap::new(),
            context: context.to_string(),
        }
    }

    /// The kind will be answered from what its streams bring.
    pub fn plan(&mut self, kind: &'static ResourceKind) {
        self.kinds.entry(kind).or_default();
    }

    /// The kind has no answer (not served, forbidden): every query of it gets `why`.
    pub fn unavailable(&mut self, kind: &'static ResourceKind, why: Unavailable) {
        let k = self.kinds.entry(kind).or_default();
        k.blocks.clear();
        k.unavailable = Some(why);
    }

    /// The kind is forbidden cluster-wide (`why`): it is answered only in the namespaces then
    /// watched one by one ([`Store::watch_namespace`]).
    pub fn per_namespace(&mut self, kind: &'static ResourceKind, why: Unavailable) {
        let k = self.kinds.entry(kind).or_default();
        k.blocks.clear();
        k.unavailable = Some(why);
        k.watched_namespaces = Some(Default::default());
    }

    /// The namespaces a kind forbidden cluster-wide is watched in (None: it is not).
    pub fn watched_namespaces(
        &self,
        kind: &'static ResourceKind,
    ) -> Option<&std::collections::HashSet<String>> {
        self.kinds.get(kind)?.watched_namespaces.as_ref()
    }

    /// A kind forbidden cluster-wide is watched in `namespace` too (a learner new to the room).
    pub fn watch_namespace(&mut self, kind: &'static ResourceKind, namespace: &str) {
        let k = self.kinds.entry(kind).or_default();
        k.watched_namespaces
            .get_or_insert_with(Default::default)
            .insert(namespace.to_string());
    }

    /// A stream listed its scope again (`namespace`: one namespace; None: the whole kind):
    /// what it holds is replaced by `objects`. Returns the namespaces whose objects changed.
    pub fn replace(
        &mut self,
        kind: &'static ResourceKind,
        namespace: Option<&str>,
        mut listed: Staging,
    ) -> Vec<String> {
        let k = self.kinds.entry(kind).or_default();
        if k.watched_namespaces.is_none() {
            k.unavailable = None;
        }
        listed.seal();
        if listed.dict.len() > k.dict.len() || namespace.is_none() {
            k.dict = listed.dict.clone();
        }
        let mut fresh = listed.blocks;
        if let Some(ns) = namespace {
            fresh.retain(|n, _| **n == *ns);
        }
        let old: Vec<Box<str>> = k
            .blocks
            .keys()
            .filter(|ns| namespace.is_none_or(|n| &***ns == n))
            .cloned()
            .collect();
        let mut changed = Vec::new();
        for ns in old {
            if !fresh.contains_key(&ns) {
                k.blocks.remove(&ns);
                changed.push(ns.to_string());
            }
        }
        for (ns, b) in fresh {
            // Packing is deterministic (objects in name order, one dictionary): equal objects
            // are equal bytes, unless a new list packed them against another dictionary.
            let same = k.blocks.get(&ns).is_some_and(|was| was.same(&b));
            if !same {
                changed.push(ns.to_string());
            }
            k.blocks.insert(ns, b);
        }
        changed
    }

    /// An object was added or changed; returns whether what the room holds changed (a status
    /// write that only stripped fields touch leaves it as it was).
    pub fn apply(&mut self, kind: &'static ResourceKind, h: Held) -> bool {
        let k = self.kinds.entry(kind).or_default();
        let (mut items, dict) = match k.blocks.get(&h.namespace) {
            Some(b) => (b.unpack().unwrap_or_default(), b.dict.clone()),
            None => (Vec::new(), k.dict.clone()),
        };
        match items.iter_mut().find(|(n, _)| *n == h.name) {
            Some((_, t)) if *t == h.text => return false,
            Some((_, t)) => *t = h.text,
            None => items.push((h.name, h.text)),
        }
        k.blocks.insert(h.namespace, Block::pack(items, dict));
        true
    }

    /// An object was deleted; returns whether the room held it.
    pub fn delete(&mut self, kind: &'static ResourceKind, namespace: &str, name: &str) -> bool {
        let Some(k) = self.kinds.get_mut(kind) else {
            return false;
        };
        let Some(b) = k.blocks.get(namespace) else {
            return false;
        };
        let mut items = b.unpack().unwrap_or_default();
        let before = items.len();
        items.retain(|(n, _)| &**n != name);
        if items.len() == before {
            return false;
        }
        if items.is_empty() {
            k.blocks.remove(namespace);
        } else {
            let dict = b.dict.clone();
            k.blocks.insert(namespace.into(), Block::pack(items, dict));
        }
        true
    }

    /// How many objects of `kind` the room holds.
    pub fn count(&self, kind: &'static ResourceKind) -> usize {
        self.kinds
            .get(kind)
            .map_or(0, |k| k.blocks.values().map(|b| b.objects.len()).sum())
    }

    /// How many objects the room holds, and their packed bytes with the dictionaries (for
    /// `-v` and the bench).
    pub fn held(&self) -> (usize, usize) {
        let blocks = self.kinds.values().flat_map(|k| k.blocks.values());
        let mut dicts = std::collections::HashSet::new();
        blocks.fold((0, 0), |(n, bytes), b| {
            let dict = if dicts.insert(Arc::as_ptr(&b.dict) as *const u8) {
                b.dict.len()
            } else {
                0
            };
            (n + b.objects.len(), bytes + b.packed.len() + dict)
        })
    }

    /// The answer to one query, as a LIST of it would have been.
    pub fn answer(&self, q: &Query) -> ReadResult {
        if is_withheld(q) {
            return Err(withheld(q));
        }
        let Some(k) = self.kinds.get(q.kind) else {
            return Err(Unavailable::Failed {
                message: format!("internal: {} was not planned for the room", q.describe()),
            });
        };
        if let Some(why) = &k.unavailable {
            let watched = match (&k.watched_namespaces, &q.namespace) {
                (Some(set), Some(ns)) => set.contains(ns),
                _ => false,
            };
            if !watched {
                return Err(why.clone());
            }
        }
        let blocks: Vec<&Block> = match &q.namespace {
            Some(ns) => k.blocks.get(ns.as_str()).into_iter().collect(),
            None => k.blocks.values().collect(),
        };
        let mut out = Vec::new();
        for b in blocks {
            let text = b.text()?;
            for (name, s, e) in &b.objects {
                if q.name.as_deref().is_some_and(|n| &**name != n) {
                    continue;
                }
                let bytes = text
                    .get(*s as usize..*e as usize)
                    .ok_or_else(|| broken(&"an object out of its block"))?;
                let v = serde_json::from_str(bytes).map_err(|e| broken(&e))?;
                out.push(Obj::new(v, Origin::Live).map_err(|e| broken(&e))?);
            }
        }
        Ok(filter(q, out))
    }

    /// An observation holding exactly the answers to `queries` (one learner's labs); what every
    /// learner reads (`Query` without a namespace) is parsed once per judging and kept in
    /// `shared`.
    pub fn observed(&self, queries: &[Query], shared: &Shared) -> Observed {
        let reads: HashMap<Query, ReadResult> = queries
            .iter()
            .map(|q| {
                let r = if q.namespace.is_some() {
                    self.answer(q)
                } else {
                    shared.get(q, || self.answer(q))
                };
                (q.clone(), r)
            })
            .collect();
        Observed::live(self.context.clone(), reads)
    }
}

/// Answers to cluster-wide queries for one judging: the same for every learner, parsed once
/// (objects share their values when cloned).
#[derive(Default)]
pub struct Shared(Mutex<HashMap<Query, ReadResult>>);

impl Shared {
    fn get(&self, q: &Query, answer: impl FnOnce() -> ReadResult) -> ReadResult {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(q.clone()).or_insert_with(answer).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::kinds;

    fn pod(ns: &str, name: &str, app: &str) -> Held {
        let text = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        })
        .to_string();
        Held {
            namespace: ns.into(),
            name: name.into(),
            text: text.into(),
        }
    }

    fn staged(objects: Vec<Held>) -> Staging {
        let mut st = Staging::default();
        for h in objects {
            st.add(h);
        }
        st
    }

    fn names(s: &Store, q: &Query) -> Vec<String> {
        s.answer(q)
            .unwrap()
            .iter()
            .map(|o| o.name().to_string())
            .collect()
    }

    #[test]
    fn a_relist_reports_only_the_namespaces_whose_objects_changed() {
        let mut s = Store::new("room");
        let first = s.replace(
            &kinds::PODS,
            None,
            staged(vec![pod("a-lab", "p1", "x"), pod("b-lab", "p2", "x")]),
        );
        assert_eq!(first, ["a-lab", "b-lab"]);
        // Same objects, another order: nothing changed.
        let again = s.replace(
            &kinds::PODS,
            None,
            staged(vec![pod("b-lab", "p2", "x"), pod("a-lab", "p1", "x")]),
        );
        assert!(again.is_empty(), "{again:?}");
        // b's pod changed, a's vanished, c's appeared.
        let changed = s.replace(
            &kinds::PODS,
            None,
            staged(vec![pod("b-lab", "p2", "y"), pod("c-lab", "p3", "x")]),
        );
        assert_eq!(changed, ["a-lab", "b-lab", "c-lab"]);
        assert!(names(&s, &Query::new(&kinds::PODS, "a-lab")).is_empty());
    }

    #[test]
    fn a_change_repacks_one_namespace_and_answers_like_a_list() {
        let mut s = Store::new("room");
        s.replace(
            &kinds::PODS,
            None,
            staged(vec![pod("a-lab", "p1", "x"), pod("a-lab", "p2", "y")]),
        );
        assert!(!s.apply(&kinds::PODS, pod("a-lab", "p1", "x")), "no change");
        assert!(s.apply(&kinds::PODS, pod("a-lab", "p3", "x")));
        assert_eq!(
            names(&s, &Query::new(&kinds::PODS, "a-lab")),
            ["p1", "p2", "p3"]
        );
        assert_eq!(
            names(
                &s,
                &Query::new(&kinds::PODS, "a-lab").with_selector("app=x")
            ),
            ["p1", "p3"]
        );
        assert_eq!(names(&s, &Query::cluster(&kinds::PODS).named("p2")), ["p2"]);
        assert!(s.delete(&kinds::PODS, "a-lab", "p1"));
        assert!(!s.delete(&kinds::PODS, "a-lab", "p1"), "already gone");
        assert_eq!(s.held().0, 2);
    }

    #[test]
    fn an_unavailable_kind_answers_why_and_a_forbidden_one_answers_its_watched_namespaces() {
        let mut s = Store::new("room");
        let no = Unavailable::Failed {
            message: "no".into(),
        };
        s.unavailable(&kinds::JOBS, no.clone());
        assert_eq!(
            s.answer(&Query::new(&kinds::JOBS, "a-lab")).err(),
            Some(no.clone())
        );
        s.per_namespace(&kinds::PODS, no.clone());
        s.watch_namespace(&kinds::PODS, "a-lab");
        s.replace(
            &kinds::PODS,
            Some("a-lab"),
            staged(vec![pod("a-lab", "p1", "x")]),
        );
        assert_eq!(names(&s, &Query::new(&kinds::PODS, "a-lab")), ["p1"]);
        assert_eq!(
            s.answer(&Query::new(&kinds::PODS, "b-lab")).err(),
            Some(no.clone())
        );
        assert_eq!(s.answer(&Query::cluster(&kinds::PODS)).err(), Some(no));
        assert!(s.answer(&Query::new(&kinds::SECRETS, "a-lab")).is_err());
    }

    /// A learner's pod as a training lab makes them: the same image, env and resources as every
    /// other learner's, with their own names.
    fn training_pod(ns: &str, name: &str) -> Held {
        let text = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {
                "app": "trainer", "training.kubeflow.org/job-name": format!("{ns}-job"),
                "training.kubeflow.org/replica-type": "worker"}},
            "spec": {"schedulerName": "volcano", "containers": [{
                "name": "pytorch",
                "image": "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.42.0-ofiv1.16.0-ncclv2.27.5-1-testsv2.16.4",
                "command": ["torchrun", "--nnodes=2", "--nproc-per-node=8", "train.py", "--bf16"],
                "env": [{"name": "FI_PROVIDER", "value": "efa"}, {"name": "NCCL_DEBUG", "value": "INFO"}],
                "resources": {"limits": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "memory": "1600Gi"}},
                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}]},
            "status": {"phase": "Running", "podIP": format!("10.0.{}.{}", ns.len(), name.len())},
        })
        .to_string();
        Held {
            namespace: ns.into(),
            name: name.into(),
            text: text.into(),
        }
    }

    #[test]
    fn namespaces_are_packed_against_a_dictionary_and_read_back_exactly() {
        let pods: Vec<Held> = (0..200)
            .flat_map(|l| {
                (0..4).map(move |p| training_pod(&format!("l{l:03}-lab"), &format!("w-{p}")))
            })
            .collect();
        let mut s = Store::new("room");
        s.replace(&kinds::PODS, None, staged(pods.clone()));
        let (count, packed) = s.held();
        assert_eq!(count, 800);
        // Each namespace packed alone, as the store did before dictionaries.
        let alone: usize = pods
            .chunks(4)
            .map(|ns| {
                let text: String = ns.iter().map(|h| &*h.text).collect();
                lz4_flex::compress_prepend_size(text.as_bytes()).len()
            })
            .sum();
        assert!(
            packed * 2 < alone,
            "{packed} bytes with a dictionary, {alone} without"
        );
        // Every object reads back as it was listed.
        let check = |s: &Store| {
            for h in &pods {
                let got = s
                    .answer(&Query::new(&kinds::PODS, &h.namespace).named(&h.name))
                    .unwrap();
                let want: serde_json::Value = serde_json::from_str(&h.text).unwrap();
                assert_eq!(got.len(), 1);
                assert_eq!(*got[0].value, want, "{}/{}", h.namespace, h.name);
            }
        };
        check(&s);
        // A relist in another order picks another dictionary: nothing changed, and a change
        // after it still packs and reads back.
        let mut reversed = pods.clone();
        reversed.reverse();
        let mut by_ns: Vec<Held> = Vec::new();
        for chunk in reversed.chunks(4) {
            by_ns.extend(chunk.iter().rev().cloned());
        }
        assert!(s.replace(&kinds::PODS, None, staged(by_ns)).is_empty());
        check(&s);
        assert!(s.apply(&kinds::PODS, training_pod("l000-lab", "w-9")));
        assert!(s.apply(&kinds::PODS, training_pod("new-lab", "w-0")));
        assert_eq!(names(&s, &Query::new(&kinds::PODS, "new-lab")), ["w-0"]);
        assert_eq!(names(&s, &Query::new(&kinds::PODS, "l000-lab")).len(), 5);
        check(&s);
    }
}
