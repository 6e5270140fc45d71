//! An object's `metadata`, read and written the one way every handler does.

use serde_json::{json, Map, Value};

/// The object's `metadata`, made an empty object first when it is missing or not an object.
pub(super) fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

/// A `metadata` string field; None when absent or empty.
pub(super) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj["metadata"][field].as_str().filter(|s| !s.is_empty())
}
