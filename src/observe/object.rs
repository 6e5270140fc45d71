//! One Kubernetes object as read from any source, with where it came from.

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::InputError;

/// Where an object came from, so errors and evidence can point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file: `doc` is the 1-based YAML document, `item` the 1-based item of a List.
    File {
        path: String,
        doc: usize,
        item: Option<usize>,
    },
    /// The API server.
    Live,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, doc, item } => {
                write!(f, "{path}, document {doc}")?;
                if let Some(i) = item {
                    write!(f, ", item {i}")?;
                }
                Ok(())
            }
            Origin::Live => write!(f, "the cluster"),
        }
    }
}

/// An origin as written above (`x.yaml, document 2, item 3`, or the cluster), with the notes
/// the parser adds after it (`src/observe/parse.rs`: Lists nested too deep, `items` not a
/// list), in Japanese. The path is kept as it is: only trainlab's own words after its last
/// `, document ` are translated.
pub fn origin_ja(origin: &str) -> String {
    if origin == "the cluster" {
        return "クラスター".to_string();
    }
    let Some((path, rest)) = origin.rsplit_once(", document ") else {
        return origin.to_string();
    };
    let (place, note) = match rest.split_once(" (") {
        Some((p, n)) => (p, Some(n.trim_end_matches(')'))),
        None => (rest, None),
    };
    let mut out = match place.split_once(", item ") {
        Some((doc, item)) => {
            format!("{path} の {doc} 番目のドキュメントの {item} 番目の要素")
        }
        None => format!("{path} の {place} 番目のドキュメント"),
    };
    match note {
        Some("`items` is not a list") => out.push_str("（`items` がリストではありません）"),
        Some(n) => match n
            .strip_prefix("Lists nested more than ")
            .and_then(|d| d.strip_suffix(" deep"))
        {
            Some(depth) => out.push_str(&format!("（List の入れ子が {depth} 段を超えます）")),
            None => out.push_str(&format!(" ({n})")),
        },
        None => {}
    }
    out
}

/// `metadata` must be a mapping whose identity fields are strings: a learner's `name: 12345` or
/// `metadata: [x]` is bad input naming the field, never an object silently graded as missing.
fn check_metadata(value: &Value, origin: &Origin) -> Result<(), InputError> {
    let kind = value["kind"].as_str().unwrap_or_default();
    let bad = |field: &str, expected: &str, found: &Value| InputError::Field {
        origin: origin.to_string(),
        object: kind.to_string(),
        field: field.to_string(),
        message: format!("expected {expected}, found {}", shown(found)),
    };
    let Some(meta) = value.get("metadata") else {
        return Ok(());
    };
    let Some(meta) = meta.as_object() else {
        return Err(bad("metadata", "a mapping", meta));
    };
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generateName",
    ] {
        if let Some(v) = meta.get(f).filter(|v| !v.is_null() && !v.is_string()) {
            return Err(bad(&format!("metadata.{f}"), "a string", v));
        }
    }
    for f in ["labels", "annotations"] {
        match meta.get(f) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                if let Some((k, v)) = m.iter().find(|(_, v)| !v.is_string()) {
                    return Err(bad(&format!("metadata.{f}.{k}"), "a string", v));
                }
            }
            Some(v) => return Err(bad(&format!("metadata.{f}"), "a mapping", v)),
        }
    }
    Ok(())
}

/// A JSON value as a learner would recognise it in their YAML, kept short.
fn shown(v: &Value) -> String {
    let s = match v {
        Value::Array(_) => format!("a list {v}"),
        Value::Object(_) => "a mapping".to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::Bool(b) => format!("`{b}`"),
        other => other.to_string(),
    };
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// A Kubernetes object kept as JSON: sources stay schema-free and verifiers parse the part they
/// judge into a typed view with [`Obj::parse`]. The value is shared, so copying an object (into
/// an answer, a batch's observation) never copies its tree.
#[derive(Debug, Clone)]
pub struct Obj {
    pub value: Arc<Value>,
    pub origin: Origin,
}

impl Obj {
    /// An object from a test's JSON, as if read from `x.yaml` (unit tests across the kit).
    #[cfg(test)]
    pub(crate) fn test(value: Value) -> Obj {
        let origin = Origin::File {
            path: "x.yaml".into(),
            doc: 1,
            item: None,
        };
        Obj::new(value, origin).expect("a valid test object")
    }

    /// Wraps a JSON value; it must be a mapping with string `apiVersion` and `kind`.
    pub fn new(value: Value, origin: Origin) -> Result<Obj, InputError> {
        let ok = value.is_object()
            && value.get("apiVersion").is_some_and(Value::is_string)
            && value.get("kind").is_some_and(Value::is_string);
        if !ok {
            return Err(InputError::NotAnObject {
                origin: origin.to_string(),
            });
        }
        check_metadata(&value, &origin)?;
        Ok(Obj {
            value: Arc::new(value),
            origin,
        })
    }

    /// The value to change, copied first if another object shares it.
    pub fn value_mut(&mut self) -> &mut Value {
        Arc::make_mut(&mut self.value)
    }

    pub fn api_version(&self) -> &str {
        self.value["apiVersion"].as_str().unwrap_or_default()
    }
    pub fn kind(&self) -> &str {
        self.value["kind"].as_str().unwrap_or_default()
    }
    pub fn name(&self) -> &str {
        self.value["metadata"]["name"].as_str().unwrap_or_default()
    }
    pub fn namespace(&self) -> Option<&str> {
        self.value["metadata"]["namespace"].as_str()
    }
    pub fn uid(&self) -> Option<&str> {
        self.value["metadata"]["uid"].as_str()
    }
    pub fn label(&self, key: &str) -> Option<&str> {
        self.value["metadata"]["labels"][key].as_str()
    }

    /// True when `owner` is this object's controller (or plain owner), by uid. Names and labels
    /// can be forged by a learner; the uid in `ownerReferences` is set by the controller.
    pub fn is_owned_by(&self, owner: &Obj) -> bool {
        let Some(uid) = owner.uid() else { return false };
        self.value["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|refs| refs.iter().any(|r| r["uid"].as_str() == Some(uid)))
    }

    /// `Job/gang-train` for messages.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.kind(), self.name())
    }

    /// Bad input in one field of this object (a quantity too large to count, a negative
    /// replica count): exit 2 naming the file, document, object and field.
    pub fn field_error(&self, field: impl Into<String>, message: impl ToString) -> InputError {
        InputError::Field {
            origin: self.origin.to_string(),
            object: self.display_name(),
            field: field.into(),
            message: message.to_string(),
        }
    }

    /// Deserializes into a typed view; a type mismatch names the origin and the field path.
    ///
    /// Read once without tracking the path, which costs an allocated key for every field
    /// visited (a room's judge parses the same shared objects once per learner); only a value
    /// that does not read is read again, the same way, to name the field.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, InputError> {
        if let Ok(t) = T::deserialize(super::strict::Strict(&self.value)) {
            return Ok(t);
        }
        serde_path_to_error::deserialize::<_, T>(super::strict::Strict(&self.value)).map_err(|e| {
            InputError::Field {
                origin: self.origin.to_string(),
                object: self.display_name(),
                field: e.path().to_string(),
                message: e.into_inner().to_string(),
            }
        })
    }
}

#[cfg(test)]
mod origin_tests {
    use super::*;

    #[test]
    fn an_origin_reads_in_japanese_with_its_path_as_it_is() {
        let at = |doc, item| Origin::File {
            path: "a, document 9.yaml".into(),
            doc,
            item,
        };
        assert_eq!(
            origin_ja(&at(2, None).to_string()),
            "a, document 9.yaml の 2 番目のドキュメント"
        );
        assert_eq!(
            origin_ja(&at(1, Some(3)).to_string()),
            "a, document 9.yaml の 1 番目のドキュメントの 3 番目の要素"
        );
        assert_eq!(
            origin_ja("x.yaml, document 1 (`items` is not a list)"),
            "x.yaml の 1 番目のドキュメント（`items` がリストではありません）"
        );
        assert_eq!(origin_ja(&Origin::Live.to_string()), "クラスター");
    }
}
