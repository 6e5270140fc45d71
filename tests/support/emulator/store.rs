//! The object store behind one lock: objects by key, resourceVersions, the change history
//! watches resume from, and namespaces (system ones, terminating ones).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::fault_rule::FaultRule;
use super::ids::{new_uid, now_rfc3339};
use super::meta::metadata_mut;
use super::recorded::Recorded;
use super::resources::{builtin_resources, resources_of_crd, Resource};

/// Identity of a stored object. The version is not part of it: one object is served under
/// every version of its group, as the API server converts between versions.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    pub(super) group: String,
    pub(super) kind: String,
    pub(super) namespace: String,
    pub(super) name: String,
}

impl Key {
    pub(super) fn new(r: &Resource, namespace: &str, name: &str) -> Key {
        Key {
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    pub(super) fn of(obj: &Value) -> Option<Key> {
        let api_version = obj["apiVersion"].as_str()?;
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        Some(Key {
            group: group.into(),
            kind: obj["kind"].as_str()?.into(),
            namespace: obj["metadata"]["namespace"].as_str().unwrap_or("").into(),
            name: obj["metadata"]["name"].as_str()?.into(),
        })
    }

    fn is(&self, r: &Resource) -> bool {
        self.group == r.group && self.kind == r.kind
    }
}

/// One stored change, for watches (live and resumed from a resourceVersion).
#[derive(Clone, Debug)]
pub(super) struct Change {
    pub(super) rv: u64,
    pub(super) kind: &'static str,
    pub(super) key: Key,
    pub(super) object: Value,
}

/// What a test tells the open watches (see `Emulator::bookmark`, `drop_watches`,
/// `expire_watches`).
#[derive(Clone, Debug)]
pub(super) enum WatchSignal {
    /// Send a BOOKMARK at this resourceVersion (to watches that allow bookmarks).
    Bookmark(u64),
    /// End the stream without a word, as a connection a proxy or load balancer cut.
    Drop,
    /// Send an ERROR event `410 Gone` and end the stream: the history is compacted.
    Gone(u64),
}

/// Namespaces every cluster has: objects may be created in them without seeding them.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The emulator's state, behind one lock: every request is handled atomically.
pub(super) struct Inner {
    pub(super) builtins: Vec<Resource>,
    pub(super) crds: Vec<Resource>,
    pub(super) store: BTreeMap<Key, Value>,
    pub(super) rv: u64,
    pub(super) faults: Vec<FaultRule>,
    /// Every LIST page ends with a new continue token, forever (a broken server or proxy).
    pub(super) endless_pages: bool,
    /// Items added to every LIST whose path starts with the key, as a broken server would.
    pub(super) stray_items: Vec<(String, Value)>,
    pub(super) requests: Vec<Recorded>,
    pub(super) history: Vec<Change>,
    pub(super) changes: broadcast::Sender<Change>,
    pub(super) watch_signals: broadcast::Sender<WatchSignal>,
    /// Watches from a resourceVersion below this get `410 Gone` (the history before it is
    /// compacted, `Emulator::expire_watches`).
    pub(super) compacted: u64,
    pub(super) port: u16,
    /// How long a deleted namespace stays `Terminating` (None: deleted at once).
    pub(super) namespace_grace: Option<Duration>,
    /// Terminating namespaces and when they disappear.
    pub(super) terminating: BTreeMap<Key, std::time::Instant>,
    /// Serves aggregated discovery to clients that ask for it.
    pub(super) aggregated: bool,
    /// When the emulator started (request times are counted from it).
    pub(super) started: std::time::Instant,
    pub(super) next_seq: u64,
}

impl Inner {
    pub(super) fn new(seed: Vec<Value>, port: u16) -> Inner {
        let (changes, _) = broadcast::channel(1024);
        let (watch_signals, _) = broadcast::channel(64);
        let mut inner = Inner {
            builtins: builtin_resources(),
            crds: Vec::new(),
            store: BTreeMap::new(),
            rv: 0,
            faults: Vec::new(),
            endless_pages: false,
            stray_items: Vec::new(),
            requests: Vec::new(),
            history: Vec::new(),
            changes,
            watch_signals,
            compacted: 0,
            port,
            namespace_grace: None,
            terminating: BTreeMap::new(),
            aggregated: true,
            started: std::time::Instant::now(),
            next_seq: 0,
        };
        inner.seed(seed);
        inner
    }

    /// Stores seed objects as given, filling only what a real server always has (uid,
    /// creationTimestamp, resourceVersion, the `default` namespace of namespaced built-ins).
    fn seed(&mut self, seed: Vec<Value>) {
        let highest_seed_rv = seed
            .iter()
            .filter_map(|o| {
                o["metadata"]["resourceVersion"]
                    .as_str()?
                    .parse::<u64>()
                    .ok()
            })
            .max()
            .unwrap_or(0);
        self.rv = highest_seed_rv.max(1000);
        for mut obj in seed {
            assert!(obj.is_object(), "seed entries must be objects: {obj}");
            let builtin = self
                .builtins
                .iter()
                .find(|r| Key::of(&obj).is_some_and(|k| k.is(r)) && r.namespaced);
            let meta = metadata_mut(&mut obj);
            if builtin.is_some() && !meta.contains_key("namespace") {
                meta.insert("namespace".into(), json!("default"));
            }
            meta.entry("uid").or_insert_with(|| json!(new_uid()));
            meta.entry("creationTimestamp")
                .or_insert_with(|| json!(now_rfc3339()));
            if !meta.contains_key("resourceVersion") {
                self.rv += 1;
                meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
            }
            let key = Key::of(&obj).unwrap_or_else(|| {
                panic!("seed object needs apiVersion, kind and metadata.name: {obj}")
            });
            self.store.insert(key, obj);
        }
    }

    /// Built-ins, then `serve_crd` kinds, then kinds of stored CRD objects (first one wins).
    pub(super) fn served(&self) -> Vec<Resource> {
        let from_crds = self.crd_objects().flat_map(resources_of_crd);
        let mut served: Vec<Resource> = Vec::new();
        for r in self
            .builtins
            .iter()
            .chain(&self.crds)
            .cloned()
            .chain(from_crds)
        {
            let duplicate = served
                .iter()
                .any(|s| s.group == r.group && s.version == r.version && s.plural == r.plural);
            if !duplicate {
                served.push(r);
            }
        }
        served
    }

    /// The stored CustomResourceDefinitions, found by their keys' range (the store is ordered
    /// by group and kind first): every request asks what is served, and a room's store holds
    /// tens of thousands of other objects.
    pub(super) fn crd_objects(&self) -> impl Iterator<Item = &Value> {
        self.kind_range("apiextensions.k8s.io", "CustomResourceDefinition")
            .map(|(_, crd)| crd)
    }

    /// The stored objects of one group and kind, in key order.
    pub(super) fn kind_range<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = (&'a Key, &'a Value)> {
        let start = Key {
            group: group.to_string(),
            kind: kind.to_string(),
            namespace: String::new(),
            name: String::new(),
        };
        self.store
            .range(start..)
            .take_while(move |(k, _)| k.group == group && k.kind == kind)
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Stores `obj` with a new resourceVersion and tells watchers.
    pub(super) fn put(&mut self, key: Key, mut obj: Value, kind: &'static str) -> Value {
        let rv = self.next_rv();
        metadata_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        self.store.insert(key.clone(), obj.clone());
        self.publish(Change {
            rv,
            kind,
            key,
            object: obj.clone(),
        });
        obj
    }

    /// Removes an object; watchers get it with the resourceVersion of the deletion.
    pub(super) fn remove(&mut self, key: &Key) -> Option<Value> {
        let mut obj = self.store.remove(key)?;
        let rv = self.next_rv();
        metadata_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        self.publish(Change {
            rv,
            kind: "DELETED",
            key: key.clone(),
            object: obj.clone(),
        });
        Some(obj)
    }

    fn publish(&mut self, change: Change) {
        self.history.push(change.clone());
        // No receiver is fine: nobody watches.
        let _ = self.changes.send(change);
    }

    /// Namespaces whose termination time is up disappear, with everything in them.
    pub(super) fn reap_terminated(&mut self) {
        let now = std::time::Instant::now();
        let due: Vec<Key> = self
            .terminating
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            self.terminating.remove(&key);
            if let Some(obj) = self.store.get(&key).cloned() {
                for dependent in self.cascade(&key, &obj) {
                    self.remove(&dependent);
                }
                self.remove(&key);
            }
        }
    }

    pub(super) fn namespace_terminating(&self, namespace: &str) -> bool {
        self.terminating.keys().any(|k| k.name == namespace)
    }

    pub(super) fn namespace_exists(&self, namespace: &str) -> bool {
        SYSTEM_NAMESPACES.contains(&namespace)
            || self.store.contains_key(&Key {
                group: String::new(),
                kind: "Namespace".into(),
                namespace: String::new(),
                name: namespace.into(),
            })
    }
}

impl Inner {
    /// Notes when request `seq` was answered.
    pub(super) fn answered(&mut self, seq: u64) {
        let at = self.started.elapsed();
        if let Some(r) = self.requests.iter_mut().rev().find(|r| r.seq == seq) {
            r.answered = Some(at);
        }
    }
}

/// A test that panicked while holding the lock must not make every later call panic too.
pub(super) fn lock(shared: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
