//! Reading Kubernetes objects from files: multi-document YAML, JSON, and `kind: List` wrappers as
//! `kubectl get -o yaml` writes them.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::object::{Obj, Origin};
use super::InputError;

/// Parses every object in one file's text. `path` is only used for messages.
pub fn parse_text(text: &str, path: &str) -> Result<Vec<Obj>, InputError> {
    let trimmed = text.trim_start();
    // JSON first when it looks like JSON; YAML (a superset, incl. flow style and `---`
    // separated documents) otherwise or when that fails.
    let json: Option<Value> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        serde_json::from_str(text).ok()
    } else {
        None
    };
    if let Some(value) = json {
        let docs = match value {
            Value::Array(items) => items,
            v => vec![v],
        };
        let mut out = Vec::new();
        for (i, v) in docs.into_iter().enumerate() {
            push_doc(v, path, i + 1, &mut out)?;
        }
        return Ok(out);
    }
    let mut out = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let doc = i + 1;
        let yaml = serde_yaml::Value::deserialize(de).map_err(|e| {
            let loc = e.location();
            InputError::Syntax {
                path: path.to_string(),
                doc,
                line: loc.as_ref().map(|l| l.line()),
                column: loc.as_ref().map(|l| l.column()),
                message: strip_location(&e.to_string()),
            }
        })?;
        if yaml.is_null() {
            continue; // empty document, e.g. a trailing `---`
        }
        let value = serde_json::to_value(&yaml).map_err(|e| InputError::Syntax {
            path: path.to_string(),
            doc,
            line: None,
            column: None,
            message: format!("not representable as JSON: {e}"),
        })?;
        push_doc(value, path, doc, &mut out)?;
    }
    Ok(out)
}

fn push_doc(value: Value, path: &str, doc: usize, out: &mut Vec<Obj>) -> Result<(), InputError> {
    let is_list = value
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && value.get("items").is_some();
    if is_list {
        let Some(items) = value["items"].as_array() else {
            return Err(InputError::NotAnObject {
                origin: format!("{path}, document {doc} (`items` is not a list)"),
            });
        };
        for (j, item) in items.iter().enumerate() {
            let origin = Origin::File {
                path: path.to_string(),
                doc,
                item: Some(j + 1),
            };
            out.push(Obj::new(item.clone(), origin)?);
        }
        return Ok(());
    }
    let origin = Origin::File {
        path: path.to_string(),
        doc,
        item: None,
    };
    out.push(Obj::new(value, origin)?);
    Ok(())
}

fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Reads one file from disk.
pub fn parse_file(path: &Path) -> Result<Vec<Obj>, InputError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| InputError::Unreadable {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    parse_text(&text, &shown)
}

/// The manifest files a path stands for: the file itself, or every `.yaml`/`.yml`/`.json` file
/// in a folder (recursively, in name order). Other files in a folder (READMEs, notes) are ignored.
pub fn manifest_files(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::Unreadable {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    walk(path, &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let unreadable = |e: std::io::Error| InputError::Unreadable {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let p = entry.map_err(unreadable)?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_lists_and_skips_empty_documents() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n---\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n";
        let objs = parse_text(text, "s.yaml").unwrap();
        let names: Vec<_> = objs.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["a", "b", "n"]);
        assert_eq!(objs[1].origin.to_string(), "s.yaml, document 1, item 2");
        assert_eq!(objs[2].origin.to_string(), "s.yaml, document 3");
    }

    #[test]
    fn a_list_item_that_is_not_an_object_is_an_error_naming_it() {
        let text =
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod}\n- just a string\n";
        let err = parse_text(text, "s.yaml").unwrap_err().to_string();
        assert!(err.contains("s.yaml, document 1, item 2"), "{err}");
    }

    #[test]
    fn yaml_syntax_errors_name_document_and_line() {
        let text = "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: [Pod\n";
        let err = parse_text(text, "bad.yaml").unwrap_err().to_string();
        assert!(err.starts_with("bad.yaml:"), "{err}");
        assert!(err.contains("document 2"), "{err}");
    }

    #[test]
    fn json_lists_parse_like_yaml_ones() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}"#;
        let objs = parse_text(text, "s.json").unwrap();
        assert_eq!(objs[0].name(), "p");
    }
}
