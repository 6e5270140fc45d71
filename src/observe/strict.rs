//! Typed views read a JSON value through this deserializer instead of serde_json's own, which
//! lets a derived struct take a sequence by position (`spec: [volcano, 4, …]` read as
//! `schedulerName: volcano, minAvailable: 4`). The API server never does: a mapping field
//! given a list is refused ("expected map, got slice"). Here a struct asked of a sequence is the
//! same refusal, at whatever depth, so a wrong shape is bad input naming the field, never a
//! grade.

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    Visitor,
};
use serde_json::{Error, Value};

/// A borrowed JSON value as a strict deserializer.
#[derive(Clone, Copy)]
pub struct Strict<'a>(pub &'a Value);

impl<'de> Deserializer<'de> for Strict<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Seq(items.iter())),
            Value::Object(map) => visitor.visit_map(Map {
                entries: map.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(_) => Err(de::Error::invalid_type(Unexpected::Seq, &visitor)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            // `{Variant: value}`: serde_json's own reading (no view uses such enums deeply).
            other => other.clone().deserialize_enum(name, variants, visitor),
        }
    }

    /// A field the view does not read is skipped without walking it (as serde_json's own
    /// `Value` deserializer does): a pod's status or a pool's metadata is not visited value by
    /// value only to be thrown away.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map identifier
    }
}

struct Seq<'a>(std::slice::Iter<'a, Value>);

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Strict(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Map<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'de> MapAccess<'de> for Map<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((k, v)) => {
                self.value = Some(v);
                let key: de::value::BorrowedStrDeserializer<'de, Error> =
                    de::value::BorrowedStrDeserializer::new(k);
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(Strict(v)),
            None => Err(de::Error::custom("a value was asked before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Spec {
        scheduler_name: Option<String>,
        min_available: Option<i64>,
        #[serde(default)]
        tasks: Vec<Task>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Task {
        name: String,
        replicas: Option<i64>,
    }

    fn strict<T: de::DeserializeOwned>(v: &Value) -> Result<T, String> {
        serde_path_to_error::deserialize::<_, T>(Strict(v)).map_err(|e| {
            let path = e.path().to_string();
            format!("{path}: {}", e.into_inner())
        })
    }

    #[test]
    fn a_sequence_where_a_struct_belongs_is_refused_at_its_path() {
        let spec = json!(["volcano", 4, [["worker", 4]]]);
        assert!(
            serde_json::from_value::<Spec>(spec.clone()).is_ok(),
            "serde_json takes it"
        );
        let err = strict::<Spec>(&spec).unwrap_err();
        assert!(
            err.contains("invalid type: sequence, expected struct Spec"),
            "{err}"
        );
        let nested = json!({"tasks": [["worker", 4]]});
        let err = strict::<Spec>(&nested).unwrap_err();
        assert!(
            err.starts_with("tasks[0]: invalid type: sequence, expected struct Task"),
            "{err}"
        );
    }

    #[test]
    fn fields_no_view_reads_are_skipped_whatever_their_shape() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Only {
            name: String,
        }
        let v = json!({"name": "w", "status": [["a", {"b": [1, 2]}]], "spec": {"x": [[1]]}});
        assert_eq!(strict::<Only>(&v).unwrap(), Only { name: "w".into() });
    }

    #[test]
    fn mappings_read_as_serde_json_reads_them() {
        let v = json!({"schedulerName": "volcano", "minAvailable": 4, "tasks": [{"name": "w", "replicas": 2}], "extra": [1]});
        assert_eq!(
            strict::<Spec>(&v).unwrap(),
            serde_json::from_value::<Spec>(v).unwrap()
        );
        let wrong = json!({"minAvailable": "four"});
        let err = strict::<Spec>(&wrong).unwrap_err();
        assert!(
            err.starts_with("minAvailable: invalid type: string \"four\""),
            "{err}"
        );
    }
}
