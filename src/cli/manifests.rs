//! A lab's manifests (`starter/`, `solution/`) as objects, and applying them live.

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

/// Applies folders of a lab into `namespace` as one set (validated as a whole, so a rejected
/// object in `solution/` leaves no `starter/` object behind) and prints one line per object.
pub fn apply_folders(
    b: &LabBundle,
    folders: &[&str],
    namespace: &str,
    live: &LiveArgs,
) -> Result<(), crate::Error> {
    let mut objs = Vec::new();
    for folder in folders {
        objs.extend(objects(b, folder)?);
    }
    runtime()?.block_on(async {
        let conn = connect_and_announce(live).await?;
        crate::cluster::probe(&conn).await?;
        let discovery = Discovery::new();
        let set = prepare(&conn, &discovery, &objs, &b.lab.id, namespace).await?;
        let changes = apply_all(&conn, &set).await?;
        for (what, change) in changes {
            let word = match change {
                Change::Created => "created",
                Change::Configured => "configured",
                Change::Unchanged => "unchanged",
                Change::Kept => "exists, kept as it is (create-only)",
                Change::Foreign => {
                    "exists without the trainlab.dev/lab label, used as it is (reset keeps it)"
                }
            };
            print(&format!("{what} {word}\n"));
        }
        Ok(())
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
