//! The facts an outcome carries for its `{placeholders}`: a few short key/value pairs.

use std::collections::BTreeMap;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::catalog::Vars;

/// Facts by key, kept as one sorted list: a room holds tens of thousands of outcomes, and a
/// map's tree node costs about half a kilobyte even for one entry. Serialises as a JSON object
/// with sorted keys, as the `BTreeMap` it replaced did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(from = "BTreeMap<String, String>")]
pub struct Evidence(Vec<(String, String)>);

impl Evidence {
    pub fn new() -> Evidence {
        Evidence(Vec::new())
    }

    /// Sets `key`, returning the value it replaces.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.0.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                self.0.shrink_to_fit();
                None
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// In key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl std::ops::Index<&str> for Evidence {
    type Output = String;

    /// Like a map's index: panics when `key` is absent (tests read evidence this way).
    fn index(&self, key: &str) -> &String {
        self.get(key)
            .unwrap_or_else(|| panic!("no evidence {key:?} in {self:?}"))
    }
}

impl FromIterator<(String, String)> for Evidence {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Evidence {
        let sorted: BTreeMap<String, String> = iter.into_iter().collect();
        Evidence(sorted.into_iter().collect())
    }
}

impl From<BTreeMap<String, String>> for Evidence {
    fn from(sorted: BTreeMap<String, String>) -> Evidence {
        Evidence(sorted.into_iter().collect())
    }
}

impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Vars for Evidence {
    fn var(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_reads_like_the_sorted_map_it_replaces() {
        let mut e = Evidence::new();
        assert_eq!(e.insert("pod".into(), "w-1".into()), None);
        e.insert("container".into(), "trainer".into());
        e.insert("exit_code".into(), "1".into());
        assert_eq!(e.insert("pod".into(), "w-0".into()), Some("w-1".into()));
        assert_eq!(e.len(), 3);
        assert_eq!(e["pod"], "w-0");
        assert!(e.contains_key("exit_code") && !e.contains_key("node"));
        let keys: Vec<&String> = e.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["container", "exit_code", "pod"]);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"container":"trainer","exit_code":"1","pod":"w-0"}"#
        );
        let from: Evidence = [("b".to_string(), "2".to_string()), ("a".into(), "1".into())]
            .into_iter()
            .collect();
        assert_eq!(
            from.iter().next(),
            Some((&"a".to_string(), &"1".to_string()))
        );
        assert_eq!(from.var("b"), Some("2"));
    }
}
