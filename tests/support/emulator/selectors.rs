//! Label and field selectors: parsing and matching.

use serde_json::Value;

/// One term of a label selector (k8s.io/apimachinery/pkg/labels syntax).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

impl LabelRequirement {
    pub(super) fn matches(&self, labels: &Value) -> bool {
        let get = |key: &str| labels.get(key).and_then(Value::as_str);
        let number = |key: &str| get(key).and_then(|v| v.parse::<i64>().ok());
        match self {
            Self::Equals(k, v) => get(k) == Some(v.as_str()),
            // Like the real server, `!=` and `notin` also select objects without the label.
            Self::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Self::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Self::NotIn(k, vs) => get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Self::Exists(k) => get(k).is_some(),
            Self::DoesNotExist(k) => get(k).is_none(),
            Self::GreaterThan(k, n) => number(k).is_some_and(|v| v > *n),
            Self::LessThan(k, n) => number(k).is_some_and(|v| v < *n),
        }
    }
}

/// Splits at commas outside parentheses: `a in (x,y),b` → [`a in (x,y)`, `b`].
fn selector_terms(selector: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in selector.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    terms.push(current);
    terms
        .into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn valid_label_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_label_value(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

pub(super) fn parse_label_selector(selector: &str) -> Result<Vec<LabelRequirement>, String> {
    selector_terms(selector)
        .iter()
        .map(|t| parse_label_term(t))
        .collect()
}

fn parse_label_term(term: &str) -> Result<LabelRequirement, String> {
    use LabelRequirement::*;
    let bad = || format!("invalid label selector term {term:?}");
    let key = |k: &str| {
        let k = k.trim();
        valid_label_key(k).then(|| k.to_string()).ok_or_else(bad)
    };
    let value = |v: &str| {
        let v = v.trim();
        valid_label_value(v).then(|| v.to_string()).ok_or_else(bad)
    };
    if let Some((head, rest)) = term.split_once('(') {
        let values = rest.strip_suffix(')').ok_or_else(bad)?;
        let values: Vec<String> = values.split(',').map(value).collect::<Result<_, _>>()?;
        let mut words = head.split_whitespace();
        let (k, op) = (words.next().ok_or_else(bad)?, words.next().ok_or_else(bad)?);
        return match op {
            "in" => Ok(In(key(k)?, values)),
            "notin" => Ok(NotIn(key(k)?, values)),
            _ => Err(bad()),
        };
    }
    if let Some(k) = term.strip_prefix('!') {
        return Ok(DoesNotExist(key(k)?));
    }
    let number = |v: &str| v.trim().parse::<i64>().map_err(|_| bad());
    if let Some((k, v)) = term.split_once("!=") {
        Ok(NotEquals(key(k)?, value(v)?))
    } else if let Some((k, v)) = term.split_once("==") {
        Ok(Equals(key(k)?, value(v)?))
    } else if let Some((k, v)) = term.split_once('=') {
        Ok(Equals(key(k)?, value(v)?))
    } else if let Some((k, v)) = term.split_once('>') {
        Ok(GreaterThan(key(k)?, number(v)?))
    } else if let Some((k, v)) = term.split_once('<') {
        Ok(LessThan(key(k)?, number(v)?))
    } else {
        Ok(Exists(key(term)?))
    }
}

/// `path=value`, `path==value` or `path!=value` on any dotted path of the object.
#[derive(Clone, Debug)]
pub(super) struct FieldRequirement {
    pub(super) path: Vec<String>,
    pub(super) negated: bool,
    pub(super) value: String,
}

impl FieldRequirement {
    pub(super) fn matches(&self, obj: &Value) -> bool {
        let found = self.path.iter().fold(obj, |v, part| &v[part.as_str()]);
        let text = match found {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        (text == self.value) != self.negated
    }
}

pub(super) fn parse_field_selector(selector: &str) -> Result<Vec<FieldRequirement>, String> {
    selector_terms(selector)
        .iter()
        .map(|term| {
            let (path, negated, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, true, v)
            } else if let Some((p, v)) = term.split_once("==") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once('=') {
                (p, false, v)
            } else {
                return Err(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                ));
            };
            Ok(FieldRequirement {
                path: path.trim().split('.').map(String::from).collect(),
                negated,
                value: value.trim().to_string(),
            })
        })
        .collect()
}
