//! A lab's manifests (`starter/`, `draft/`, `solution/`) as objects, and applying them live.

use super::live::{connect_and_announce, runtime, LiveArgs};
use super::print;
use crate::catalog::LabBundle;
use crate::cluster::{apply_all, prepare, Change, Discovery};
use crate::observe::{parse_text, Obj};

pub fn objects(b: &LabBundle, folder: &str) -> Result<Vec<Obj>, crate::Error> {
    let mut out = Vec::new();
    for (rel, text) in b.files_under(folder) {
        out.extend(parse_text(text, &b.path_of(rel))?);
    }
    Ok(out)
}

/// What applying a set did.
pub enum Applied {
    /// Every object was applied (one line each was printed).
    Done,
    /// Nothing was written: without force the set would take fields another field manager owns.
    /// One line per field: `ConfigMap/gang-settings .data.queue: now managed by "kubectl-edit"
    /// using v1`.
    Conflicts(Vec<String>),
}

/// A kind `reset` searches for objects labelled for the lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabKind {
    pub group: String,
    pub kind: String,
    /// The apiVersions it may be served at, the verifier's first (one object is served under
    /// every version of its group, so any served one finds it).
    pub api_versions: Vec<String>,
    /// `starter/` has objects of this kind: deleted last, after what was built on them.
    pub starter: bool,
}

/// Kinds a lab's objects never include, whatever a verifier reads: a Node can carry the lab
/// label (a NodePool's template labels reach its nodes) and deleting it would take a machine
/// out of the cluster. Namespaces are handled on their own.
const NEVER_SEARCHED: &[(&str, &str)] = &[("", "Node"), ("", "Namespace")];

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The kinds `reset` searches: those the verifier reads, then those of `starter/`, `draft/`
/// and `solution/`.
pub fn lab_kinds(b: &LabBundle) -> Result<Vec<LabKind>, crate::Error> {
    let mut found: Vec<(String, String, bool)> = Vec::new();
    if let Some(v) = crate::verify::verifier_for(&b.lab.id) {
        for r in v.reads() {
            found.push((r.kind.api_version(), r.kind.kind.to_string(), false));
        }
    }
    for folder in ["starter", "draft", "solution"] {
        for o in objects(b, folder)? {
            found.push((
                o.api_version().to_string(),
                o.kind().to_string(),
                folder == "starter",
            ));
        }
    }
    let mut kinds: Vec<LabKind> = Vec::new();
    for (api_version, kind, starter) in found {
        let group = group_of(&api_version).to_string();
        if NEVER_SEARCHED.contains(&(group.as_str(), kind.as_str())) {
            continue;
        }
        match kinds
            .iter_mut()
            .find(|k| k.group == group && k.kind == kind)
        {
            Some(k) => {
                k.starter |= starter;
                if !k.api_versions.contains(&api_version) {
                    k.api_versions.push(api_version);
                }
            }
            None => kinds.push(LabKind {
                group,
                kind,
                api_versions: vec![api_version],
                starter,
            }),
        }
    }
    Ok(kinds)
}

/// The objects the lab's task names: (group, kind, name) of `draft/` and `solution/`, once each.
pub fn task_objects(b: &LabBundle) -> Result<Vec<(String, String, String)>, crate::Error> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for folder in ["draft", "solution"] {
        for o in objects(b, folder)? {
            let named = (
                group_of(o.api_version()).to_string(),
                o.kind().to_string(),
                o.name().to_string(),
            );
            let skip = NEVER_SEARCHED.contains(&(named.0.as_str(), named.1.as_str()));
            if !skip && !out.contains(&named) {
                out.push(named);
            }
        }
    }
    Ok(out)
}

/// Applies folders of a lab into `namespace` as one set (validated as a whole, so a rejected
/// object in `solution/` leaves no `starter/` object behind) and prints one line per object.
/// `force` takes fields other managers own (`solve` only).
pub fn apply_folders(
    b: &LabBundle,
    folders: &[&str],
    namespace: &str,
    live: &LiveArgs,
    force: bool,
) -> Result<Applied, crate::Error> {
    let mut objs = Vec::new();
    for folder in folders {
        objs.extend(objects(b, folder)?);
    }
    runtime()?.block_on(async {
        let conn = connect_and_announce(live).await?;
        crate::cluster::probe(&conn).await?;
        let discovery = Discovery::new();
        let set = prepare(&conn, &discovery, &objs, &b.lab.id, namespace).await?;
        let changes = apply_all(&conn, &set, force).await?;
        let mut conflicts = Vec::new();
        for (what, change) in &changes {
            if let Change::Conflicts(fields) = change {
                for c in fields {
                    conflicts.push(format!("{what} {}: now managed by {}", c.field, c.manager));
                }
            }
        }
        if !conflicts.is_empty() {
            return Ok(Applied::Conflicts(conflicts));
        }
        for (what, change) in changes {
            let word = match change {
                Change::Created => "created",
                Change::Configured => "configured",
                Change::Unchanged => "unchanged",
                Change::Kept => "exists, kept as it is (create-only)",
                Change::Foreign => {
                    "exists without the trainlab.dev/lab label, used as it is (reset keeps it)"
                }
                // Returned above: a set with conflicts writes nothing.
                Change::Conflicts(_) => continue,
            };
            print(&format!("{what} {word}\n"));
        }
        Ok(Applied::Done)
    })
}

/// The documents a `--dry-run` would apply, as YAML.
pub fn render_plan(b: &LabBundle, folder: &str, namespace: &str) -> Result<String, crate::Error> {
    let mut s = String::new();
    for o in objects(b, folder)? {
        let mut v = crate::cluster::label_and_place(&o, &b.lab.id, namespace);
        // Without a cluster to ask, scope comes from the kinds trainlab knows; others are
        // assumed namespaced, as most lab objects are.
        let namespaced = crate::observe::kinds::ALL
            .iter()
            .find(|k| k.matches(o.api_version(), o.kind()))
            .map_or(o.kind() != "Namespace", |k| k.namespaced);
        if namespaced {
            v["metadata"]["namespace"] = serde_json::Value::String(namespace.to_string());
        }
        s.push_str(&format!("# from {}\n---\n", o.origin));
        s.push_str(&serde_saphyr::to_string(&v).unwrap_or_default());
    }
    Ok(s)
}
