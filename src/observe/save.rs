//! Saving observed objects in the form the snapshot source reads back: one `kind: List` JSON
//! file per read (what `kubectl get -o json` writes), named after the resource and namespace.

use serde_json::{json, Value};

use super::{Obj, Query};

/// `05-jobs.batch.trainlab-efa-nccl.json`: the read's position (stable order), its resource and
/// its namespace.
pub fn file_name(index: usize, q: &Query) -> String {
    let mut name = format!("{:02}-{}", index + 1, q.kind.resource_name());
    if let Some(ns) = &q.namespace {
        name.push('.');
        name.push_str(ns);
    }
    name.push_str(".json");
    name
}

/// Whether `path` is a file a snapshot wrote: named as [`file_name`] names them, and a List that
/// records what it captured ([`CAPTURED_FIELD`]).
pub fn is_snapshot_file(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let named = name.len() > 3
        && name.as_bytes()[..2].iter().all(u8::is_ascii_digit)
        && name.as_bytes()[2] == b'-'
        && name.ends_with(".json");
    if !named || !path.is_file() {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    serde_json::from_str::<Value>(&text)
        .ok()
        .is_some_and(|v| v["kind"] == "List" && v.get(CAPTURED_FIELD).is_some())
}

/// The List field that records which resource a file captured, so an empty read ("the learner
/// has no pods yet") reads back as *captured and empty*, not as *never saved*.
pub const CAPTURED_FIELD: &str = "trainlabCaptured";

/// The objects of one read as a `kind: List`, as `kubectl get -o json` writes it (managedFields
/// dropped: they are noise for grading and for people reading the file), marked with the
/// resource it captured ([`CAPTURED_FIELD`]; kubectl and the snapshot reader ignore other fields).
pub fn to_list_json(q: &Query, objects: &[Obj]) -> String {
    let items: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut v = o.value.as_ref().clone();
            if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
            v
        })
        .collect();
    let list = json!({
        "apiVersion": "v1",
        "kind": "List",
        CAPTURED_FIELD: q.kind.resource_name(),
        "items": items,
    });
    let mut out = serde_json::to_string_pretty(&list).unwrap_or_default();
    out.push('\n');
    out
}
