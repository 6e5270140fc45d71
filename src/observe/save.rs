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
