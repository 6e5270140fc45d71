//! Patch algorithms: JSON merge patch, the apply merge, JSON patch.

use serde_json::{json, Value};

use super::routing::Target;

/// RFC 7386 JSON merge patch: objects merge key by key, `null` removes, anything else replaces.
pub(super) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let map = target.as_object_mut().expect("just made an object");
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Server-side apply, approximated: the applied fields merge over the stored object. Labels and
/// annotations merge; ownerReferences and finalizers replace; other metadata is the server's.
/// On the main resource a status with its own subresource is ignored (and vice versa).
pub(super) fn apply_merge(existing: &Value, applied: &Value, t: &Target) -> Value {
    let mut out = existing.clone();
    let Some(fields) = applied.as_object() else {
        return out;
    };
    for (field, value) in fields {
        match field.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let meta = &mut out["metadata"];
                for merged in ["labels", "annotations"] {
                    if let Some(v) = value.get(merged) {
                        merge_patch(&mut meta[merged], v);
                    }
                }
                for replaced in ["ownerReferences", "finalizers"] {
                    if let Some(v) = value.get(replaced) {
                        meta[replaced] = v.clone();
                    }
                }
            }
            "status" if t.is_status() || !t.resource.status => merge_patch(&mut out[field], value),
            _ if t.is_status() => {}
            "status" => {}
            _ => merge_patch(&mut out[field.as_str()], value),
        }
    }
    out
}

/// RFC 6902 JSON patch (add, remove, replace, move, copy, test), with the messages of the
/// library kube-apiserver uses.
pub(super) fn apply_json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("json patch must be an array of operations")?;
    for op in ops {
        let name = op["op"].as_str().ok_or("missing operation kind")?;
        let path = op["path"]
            .as_str()
            .ok_or(format!("{name} operation is missing a path"))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or(format!("{name} operation is missing a value"))
        };
        let from = || {
            op["from"]
                .as_str()
                .ok_or(format!("{name} operation is missing from"))
        };
        match name {
            "add" => pointer_add(doc, path, value()?)?,
            "remove" => {
                pointer_remove(doc, path)?;
            }
            "replace" => {
                let target = doc.pointer_mut(path).ok_or(format!(
                    "replace operation does not apply: doc is missing key: {path}: missing value"
                ))?;
                *target = value()?;
            }
            "move" => {
                let moved = pointer_remove(doc, from()?)?;
                pointer_add(doc, path, moved)?;
            }
            "copy" => {
                let copied = doc.pointer(from()?).cloned().ok_or(format!(
                    "copy operation does not apply: doc is missing from path: {path}"
                ))?;
                pointer_add(doc, path, copied)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&value()?) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

/// `/a/b~1c` → (`/a`, `b/c`).
fn split_pointer(path: &str) -> Result<(&str, String), String> {
    let at = path
        .rfind('/')
        .ok_or(format!("invalid JSON pointer: {path:?}"))?;
    let token = path[at + 1..].replace("~1", "/").replace("~0", "~");
    Ok((&path[..at], token))
}

fn pointer_add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let missing =
        || format!("add operation does not apply: doc is missing path: \"{path}\": missing value");
    let (parent, token) = split_pointer(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(token, value);
        }
        Some(Value::Array(items)) if token == "-" => items.push(value),
        Some(Value::Array(items)) => {
            let index: usize = token.parse().map_err(|_| missing())?;
            if index > items.len() {
                return Err(missing());
            }
            items.insert(index, value);
        }
        _ => return Err(missing()),
    }
    Ok(())
}

fn pointer_remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let missing = || {
        format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
    };
    let (parent, token) = split_pointer(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&token).ok_or_else(missing),
        Some(Value::Array(items)) => match token.parse::<usize>() {
            Ok(index) if index < items.len() => Ok(items.remove(index)),
            _ => Err(missing()),
        },
        _ => Err(missing()),
    }
}
