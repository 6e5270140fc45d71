//! Seed files: manifests read from files or folders, lists flattened into objects.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// A file as given, or every .yaml/.yml/.json under a folder (sorted, recursively).
pub(super) fn manifest_files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .map(|entry| entry.expect("folder entry").path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .flat_map(|entry| {
            let manifest = matches!(
                entry.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            );
            if entry.is_dir() {
                manifest_files(&entry)
            } else if manifest {
                vec![entry]
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// The objects of one file: multi-document YAML (JSON is YAML too), lists flattened.
pub(super) fn parse_manifest(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
        .unwrap_or_else(|e| panic!("parse {}: {e}", path.display()));
    let mut objects = Vec::new();
    for value in documents {
        flatten_into(value, &mut objects);
    }
    objects
}

/// `kind: List` and typed lists (`PodList`, whose items lack apiVersion/kind) become objects.
fn flatten_into(value: Value, out: &mut Vec<Value>) {
    match value {
        Value::Null => {}
        Value::Array(items) => items.into_iter().for_each(|v| flatten_into(v, out)),
        Value::Object(ref map) if map.get("items").is_some_and(Value::is_array) => {
            let list_kind = map.get("kind").and_then(Value::as_str).unwrap_or("List");
            let item_kind = list_kind.strip_suffix("List").filter(|k| !k.is_empty());
            let api_version = map.get("apiVersion").cloned();
            for mut item in map["items"].as_array().cloned().unwrap_or_default() {
                if let (Some(kind), Some(obj)) = (item_kind, item.as_object_mut()) {
                    obj.entry("kind").or_insert_with(|| json!(kind));
                    if let Some(v) = &api_version {
                        obj.entry("apiVersion").or_insert_with(|| v.clone());
                    }
                }
                flatten_into(item, out);
            }
        }
        other => out.push(other),
    }
}
