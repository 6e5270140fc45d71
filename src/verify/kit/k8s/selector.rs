//! Label selectors: the string form (`a=b,a==b,a!=b,a,!a,a in (x,y),a notin (x),a>1,a<9`) and
//! `metav1.LabelSelector` (`matchLabels` + `matchExpressions`), matched against a label map.
//!
//! Follows k8s.io/apimachinery `pkg/labels/selector.go` (`Parse`, its lexer and parser,
//! `NewRequirement`, `Requirement.Matches`) and `pkg/apis/meta/v1/helpers.go`
//! (`LabelSelectorAsSelector`). Keys and values are validated as `validateLabelKey` /
//! `validateLabelValue` do (`pkg/util/validation/validation.go`: `IsQualifiedName`,
//! `IsValidLabelValue`), so a selector the API server would refuse is a typed error here too.
//!
//! Why not `kube::core::Selector` (kube-core 5.0 `labels.rs`): it has no string parser, no `Gt`/`Lt`
//! (node affinity needs them, and [`crate::verify::kit::k8s::placement`] reuses [`Requirement`]), no selector that
//! matches nothing (a nil `LabelSelector`), and its `TryFrom<LabelSelector>` accepts `In` with no
//! values, which the API server rejects.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use thiserror::Error;

/// Why a selector or one of its requirements is invalid. Texts quote the API server's rules.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SelectorError {
    /// The text does not follow the selector grammar.
    #[error("{message}")]
    Syntax { message: String },
    #[error("`{key}` is not a valid label key: {why}")]
    InvalidKey { key: String, why: String },
    #[error("`{value}` is not a valid value for label `{key}`: {why}")]
    InvalidValue {
        key: String,
        value: String,
        why: String,
    },
    /// The operator and the number of values do not fit (`NewRequirement`'s rules).
    #[error("requirement on `{key}`: {why}")]
    InvalidRequirement { key: String, why: String },
    #[error("`{operator}` is not a valid label selector operator")]
    UnknownOperator { operator: String },
    /// An error inside a selector written as text.
    #[error("label selector `{selector}`: {source}")]
    In {
        selector: String,
        source: Box<SelectorError>,
    },
}

/// `selection.Operator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operator {
    In,
    NotIn,
    /// `=`
    Equals,
    /// `==`
    DoubleEquals,
    /// `!=`
    NotEquals,
    Exists,
    DoesNotExist,
    /// `>` (`Gt` in node affinity): the label's value, as an integer, is greater.
    GreaterThan,
    /// `<` (`Lt` in node affinity).
    LessThan,
}

impl Operator {
    /// The operators of `matchExpressions` in a `LabelSelector` (`LabelSelectorOperator`).
    pub fn from_label_selector(op: &str) -> Option<Operator> {
        match op {
            "In" => Some(Operator::In),
            "NotIn" => Some(Operator::NotIn),
            "Exists" => Some(Operator::Exists),
            "DoesNotExist" => Some(Operator::DoesNotExist),
            _ => None,
        }
    }

    /// The operators of a node selector requirement (`NodeSelectorOperator`: In, NotIn, Exists,
    /// DoesNotExist, Gt, Lt), as `nodeSelectorRequirementsAsSelector` maps them.
    pub fn from_node_selector(op: &str) -> Option<Operator> {
        match op {
            "Gt" => Some(Operator::GreaterThan),
            "Lt" => Some(Operator::LessThan),
            other => Operator::from_label_selector(other),
        }
    }
}

/// One requirement: a key, an operator and its values, valid by `NewRequirement`'s rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: BTreeSet<String>,
}

impl Requirement {
    /// Validates like `labels.NewRequirement`: the key is a qualified name; In/NotIn need at least
    /// one value; `=`/`==`/`!=` exactly one; Exists/DoesNotExist none; Gt/Lt exactly one integer;
    /// every value is a valid label value (the empty string is one).
    pub fn new(
        key: &str,
        operator: Operator,
        values: Vec<String>,
    ) -> Result<Requirement, SelectorError> {
        if let Some(why) = invalid_label_key(key) {
            return Err(SelectorError::InvalidKey {
                key: key.to_string(),
                why,
            });
        }
        let invalid = |why: &str| SelectorError::InvalidRequirement {
            key: key.to_string(),
            why: why.to_string(),
        };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(invalid(
                    "for 'in', 'notin' operators, values set can't be empty",
                ))
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                return Err(invalid(
                    "exact-match compatibility requires one single value",
                ))
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(invalid(
                    "values set must be empty for exists and does not exist",
                ))
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    return Err(invalid(
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                if values.iter().any(|v| v.parse::<i64>().is_err()) {
                    return Err(invalid(
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
            _ => {}
        }
        for v in &values {
            if let Some(why) = invalid_label_value(v) {
                return Err(SelectorError::InvalidValue {
                    key: key.to_string(),
                    value: v.clone(),
                    why,
                });
            }
        }
        Ok(Requirement {
            key: key.to_string(),
            operator,
            values: values.into_iter().collect(),
        })
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn operator(&self) -> Operator {
        self.operator
    }

    pub fn values(&self) -> &BTreeSet<String> {
        &self.values
    }

    /// `Requirement.Matches`: In/`=`/`==` need the key with one of the values; NotIn/`!=` hold
    /// when the key is absent or has another value; Gt/Lt need the key with an integer value
    /// (a non-integer label value does not match).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let have = labels.get(&self.key);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                have.is_some_and(|v| self.values.contains(v))
            }
            Operator::NotIn | Operator::NotEquals => have.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => have.is_some(),
            Operator::DoesNotExist => have.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(have) = have.and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                let Some(want) = self
                    .values
                    .iter()
                    .next()
                    .and_then(|v| v.parse::<i64>().ok())
                else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    /// The form `Requirement.String` prints: `!a`, `a`, `a=b`, `a in (x,y)`, `a>3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = self.values.iter().cloned().collect::<Vec<_>>().join(",");
        match self.operator {
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::Equals => write!(f, "{}={values}", self.key),
            Operator::DoubleEquals => write!(f, "{}=={values}", self.key),
            Operator::NotEquals => write!(f, "{}!={values}", self.key),
            Operator::In => write!(f, "{} in ({values})", self.key),
            Operator::NotIn => write!(f, "{} notin ({values})", self.key),
            Operator::GreaterThan => write!(f, "{}>{values}", self.key),
            Operator::LessThan => write!(f, "{}<{values}", self.key),
        }
    }
}

/// A label selector: all requirements hold (AND), or the selector that matches nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// None: `labels.Nothing()` (a nil `LabelSelector`).
    requirements: Option<Vec<Requirement>>,
}

/// Parses the string form (see [`Selector::parse`]).
pub fn parse(text: &str) -> Result<Selector, SelectorError> {
    Selector::parse(text)
}

impl Selector {
    /// Matches every label set (an empty selector).
    pub fn everything() -> Selector {
        Selector {
            requirements: Some(Vec::new()),
        }
    }

    /// Matches no label set.
    pub fn nothing() -> Selector {
        Selector { requirements: None }
    }

    /// `labels.Parse`: comma-separated requirements; an empty text selects everything.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let mut reqs = Parser::new(text)
            .parse()
            .map_err(|source| SelectorError::In {
                selector: text.to_string(),
                source: Box::new(source),
            })?;
        // Upstream sorts by key for a deterministic form.
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            requirements: Some(reqs),
        })
    }

    /// `LabelSelectorAsSelector`: a nil selector matches nothing, an empty one everything;
    /// `matchLabels` are `=` requirements, `matchExpressions` take In, NotIn, Exists and
    /// DoesNotExist, all ANDed.
    pub fn from_label_selector(
        selector: Option<&LabelSelector>,
    ) -> Result<Selector, SelectorError> {
        let Some(s) = selector else {
            return Ok(Selector::nothing());
        };
        let mut reqs = Vec::new();
        for (k, v) in s.match_labels.iter().flatten() {
            reqs.push(Requirement::new(k, Operator::Equals, vec![v.clone()])?);
        }
        for e in s.match_expressions.iter().flatten() {
            let op = Operator::from_label_selector(&e.operator).ok_or_else(|| {
                SelectorError::UnknownOperator {
                    operator: e.operator.clone(),
                }
            })?;
            reqs.push(Requirement::new(
                &e.key,
                op,
                e.values.clone().unwrap_or_default(),
            )?);
        }
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            requirements: Some(reqs),
        })
    }

    /// `SelectorFromSet`: every pair must be present with that value (a `nodeSelector`, a
    /// `matchLabels` map). Not validated, as upstream: an empty map selects everything.
    pub fn from_set(labels: &BTreeMap<String, String>) -> Selector {
        let reqs = labels
            .iter()
            .map(|(k, v)| Requirement {
                key: k.clone(),
                operator: Operator::Equals,
                values: BTreeSet::from([v.clone()]),
            })
            .collect();
        Selector {
            requirements: Some(reqs),
        }
    }

    /// Builds a selector from requirements (all must hold).
    pub fn from_requirements(reqs: Vec<Requirement>) -> Selector {
        Selector {
            requirements: Some(reqs),
        }
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match &self.requirements {
            None => false,
            Some(reqs) => reqs.iter().all(|r| r.matches(labels)),
        }
    }

    /// The requirements (empty for both everything and nothing; see [`Selector::is_nothing`]).
    pub fn requirements(&self) -> &[Requirement] {
        self.requirements.as_deref().unwrap_or(&[])
    }

    pub fn is_everything(&self) -> bool {
        self.requirements.as_ref().is_some_and(Vec::is_empty)
    }

    pub fn is_nothing(&self) -> bool {
        self.requirements.is_none()
    }
}

impl fmt::Display for Selector {
    /// The string form; `(everything)` and `(nothing)` for the two selectors without requirements.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.requirements {
            None => f.write_str("(nothing)"),
            Some(r) if r.is_empty() => f.write_str("(everything)"),
            Some(r) => {
                let parts: Vec<String> = r.iter().map(ToString::to_string).collect();
                f.write_str(&parts.join(","))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The string form: lexer and recursive-descent parser, after selector.go (`Lexer`, `Parser`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    OpenPar,
    ClosePar,
    Comma,
    /// `!`
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    In,
    NotIn,
    Ident,
}

/// Where values are read, `in`/`notin` are plain identifiers (`value in (in)`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Splits the text into tokens; operators are matched longest first (`!=` before `!`).
fn lex(s: &str) -> Vec<(Tok, String)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            out.push((Tok::End, String::new()));
            return out;
        }
        if is_special(b[i]) {
            let two = b.get(i + 1).copied();
            let (tok, len) = match (b[i], two) {
                (b'=', Some(b'=')) => (Tok::DoubleEq, 2),
                (b'!', Some(b'=')) => (Tok::NotEq, 2),
                (b'=', _) => (Tok::Eq, 1),
                (b'!', _) => (Tok::Not, 1),
                (b'(', _) => (Tok::OpenPar, 1),
                (b')', _) => (Tok::ClosePar, 1),
                (b',', _) => (Tok::Comma, 1),
                (b'>', _) => (Tok::Gt, 1),
                _ => (Tok::Lt, 1),
            };
            out.push((tok, s[i..i + len].to_string()));
            i += len;
            continue;
        }
        let start = i;
        // Stops only at ASCII bytes, so the slice ends on a character boundary.
        while i < b.len() && !is_special(b[i]) && !is_space(b[i]) {
            i += 1;
        }
        let word = &s[start..i];
        let tok = match word {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Ident,
        };
        out.push((tok, word.to_string()));
    }
}

struct Parser {
    items: Vec<(Tok, String)>,
    pos: usize,
}

fn syntax(message: String) -> SelectorError {
    SelectorError::Syntax { message }
}

impl Parser {
    fn new(text: &str) -> Parser {
        Parser {
            items: lex(text),
            pos: 0,
        }
    }

    fn item(&self, ctx: Ctx) -> (Tok, String) {
        // The token list always ends with End, and the parser never reads past it.
        let (tok, lit) = self
            .items
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        let tok = match (ctx, tok) {
            (Ctx::Values, Tok::In | Tok::NotIn) => Tok::Ident,
            (_, t) => t,
        };
        (tok, lit)
    }

    fn lookahead(&self, ctx: Ctx) -> (Tok, String) {
        self.item(ctx)
    }

    fn consume(&mut self, ctx: Ctx) -> (Tok, String) {
        let it = self.item(ctx);
        if self.pos < self.items.len() {
            self.pos += 1;
        }
        it
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Tok::Ident | Tok::Not => {
                    reqs.push(self.requirement()?);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Ident && t2 != Tok::Not {
                                return Err(syntax(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(syntax(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )))
                        }
                    }
                }
                Tok::End => return Ok(reqs),
                _ => {
                    return Err(syntax(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )))
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (key, unary) = self.key_and_inferred_operator()?;
        if let Some(op) = unary {
            return Requirement::new(&key, op, Vec::new());
        }
        let op = self.operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.value_set()?,
            _ => self.exact_value()?,
        };
        Requirement::new(&key, op, values)
    }

    /// `[!] KEY`; with nothing after the key it is Exists (or DoesNotExist after `!`).
    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Operator>), SelectorError> {
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        let negated = tok == Tok::Not;
        if negated {
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Tok::Ident {
            return Err(syntax(format!("found '{lit}', expected: identifier")));
        }
        if let Some(why) = invalid_label_key(&lit) {
            return Err(SelectorError::InvalidKey { key: lit, why });
        }
        if negated {
            return Ok((lit, Some(Operator::DoesNotExist)));
        }
        let (next, _) = self.lookahead(Ctx::Values);
        let op = matches!(next, Tok::End | Tok::Comma).then_some(Operator::Exists);
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Operator, SelectorError> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Tok::In => Operator::In,
            Tok::NotIn => Operator::NotIn,
            Tok::Eq => Operator::Equals,
            Tok::DoubleEq => Operator::DoubleEquals,
            Tok::NotEq => Operator::NotEquals,
            Tok::Gt => Operator::GreaterThan,
            Tok::Lt => Operator::LessThan,
            _ => {
                return Err(syntax(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                )))
            }
        })
    }

    /// `( VALUE, ... )`; `()` is the one empty value, and empty entries (`(a,,b)`) are "".
    fn value_set(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Tok::OpenPar {
            return Err(syntax(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Tok::Ident | Tok::Comma => {
                let values = self.identifier_list()?;
                let (tok, _) = self.consume(Ctx::Values);
                if tok != Tok::ClosePar {
                    return Err(syntax(format!("found '{lit}', expected: ')'")));
                }
                Ok(values.into_iter().collect())
            }
            Tok::ClosePar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(syntax(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn identifier_list(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Tok::Ident => {
                    set.insert(lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosePar => return Ok(set),
                        _ => return Err(syntax(format!("found '{l2}', expected: ',' or ')'"))),
                    }
                }
                Tok::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Tok::ClosePar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if t2 == Tok::Comma {
                        self.consume(Ctx::Values);
                        set.insert(String::new());
                    }
                }
                _ => {
                    return Err(syntax(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )))
                }
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>`, `<`; nothing before `,` or the end is "".
    fn exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, _) = self.lookahead(Ctx::Values);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Tok::Ident {
            return Ok(vec![lit]);
        }
        Err(syntax(format!("found '{lit}', expected: identifier")))
    }
}

// ---------------------------------------------------------------------------------------------
// Key and value rules (k8s.io/apimachinery pkg/util/validation/validation.go).

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, at most 63 characters (qualified name part and
/// label value share this shape).
fn name_shape_error(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    let inner = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    if s.len() > 63 {
        return Some("must be no more than 63 characters".into());
    }
    let ok = !b.is_empty() && alnum(b[0]) && alnum(b[b.len() - 1]) && b.iter().all(|&c| inner(c));
    (!ok).then(|| {
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".into()
    })
}

/// `IsDNS1123Subdomain`: lowercase RFC 1123 labels joined by dots, at most 253 characters.
fn dns_subdomain_error(s: &str) -> Option<String> {
    if s.len() > 253 {
        return Some("must be no more than 253 characters".into());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let ok_end = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && ok_end(b[0])
            && ok_end(b[b.len() - 1])
            && b.iter().all(|&c| ok_end(c) || c == b'-')
    };
    (!s.split('.').all(label_ok)).then(|| {
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character".into()
    })
}

/// `IsQualifiedName`: `[prefix/]name`, the prefix a DNS subdomain, the name as above.
fn invalid_label_key(key: &str) -> Option<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                return Some("prefix part must be non-empty".into());
            }
            if let Some(why) = dns_subdomain_error(prefix) {
                return Some(format!("prefix part {why}"));
            }
            *name
        }
        _ => {
            return Some(
                "a qualified name must be a name with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into(),
            )
        }
    };
    if name.is_empty() {
        return Some("name part must be non-empty".into());
    }
    name_shape_error(name).map(|why| format!("name part {why}"))
}

/// Whether a string is a qualified name (`[prefix/]name`, `IsQualifiedName`), the rule for
/// label keys and for resource names.
pub fn is_qualified_name(s: &str) -> bool {
    invalid_label_key(s).is_none()
}

/// `IsValidLabelValue`: empty, or the name shape above.
fn invalid_label_value(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    name_shape_error(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn sel(s: &str) -> Selector {
        parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn equality_forms() {
        let l = labels(&[("app", "nccl"), ("tier", "gpu")]);
        assert!(sel("app=nccl").matches(&l));
        assert!(sel("app==nccl").matches(&l));
        assert!(!sel("app!=nccl").matches(&l));
        assert!(sel("app!=other").matches(&l));
        // `!=` also holds when the label is absent.
        assert!(sel("zone!=a").matches(&l));
        assert!(sel("app=nccl, tier = gpu").matches(&l));
        assert!(!sel("app=nccl,tier=cpu").matches(&l));
    }

    #[test]
    fn existence_forms() {
        let l = labels(&[("app", "nccl")]);
        assert!(sel("app").matches(&l));
        assert!(!sel("!app").matches(&l));
        assert!(sel("!zone").matches(&l));
        assert!(!sel("zone").matches(&l));
    }

    #[test]
    fn set_forms() {
        let l = labels(&[("zone", "us-west-2a")]);
        assert!(sel("zone in (us-west-2a,us-west-2b)").matches(&l));
        assert!(!sel("zone in (us-west-2b)").matches(&l));
        assert!(sel("zone notin (us-west-2b)").matches(&l));
        assert!(!sel("zone notin (us-west-2a)").matches(&l));
        // notin holds when the key is absent; in does not.
        assert!(sel("arch notin (arm64)").matches(&l));
        assert!(!sel("arch in (amd64)").matches(&l));
        // `in`/`notin` are plain values inside parentheses.
        assert!(sel("x in (in,notin)").matches(&labels(&[("x", "notin")])));
    }

    #[test]
    fn empty_values_follow_upstream() {
        // `a=` and `a in ()` both mean the value "".
        assert!(sel("a=").matches(&labels(&[("a", "")])));
        assert!(!sel("a=").matches(&labels(&[("a", "x")])));
        assert!(sel("a in ()").matches(&labels(&[("a", "")])));
        assert!(sel("a in (,x)").matches(&labels(&[("a", "")])));
    }

    #[test]
    fn greater_and_less_than_compare_integers() {
        let l = labels(&[("gpus", "8"), ("name", "x")]);
        assert!(sel("gpus>4").matches(&l));
        assert!(!sel("gpus<4").matches(&l));
        assert!(!sel("name>4").matches(&l));
        assert!(!sel("missing>4").matches(&l));
        assert!(parse("gpus>four").is_err());
    }

    #[test]
    fn empty_text_selects_everything() {
        let s = sel("");
        assert!(s.is_everything());
        assert!(s.matches(&BTreeMap::new()));
        assert!(sel("  ").is_everything());
    }

    #[test]
    fn malformed_text_is_a_typed_error() {
        for bad in [
            "a in b",
            "a in (b",
            ",a",
            "a,",
            "a b",
            "=b",
            "!a=b",
            "a=(b)",
            "a in (b c)",
            "a notin",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(matches!(e, SelectorError::In { .. }), "{bad}: {e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("label selector `{bad}`")),
                "{e}"
            );
        }
        let e = parse("a in b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "label selector `a in b`: found 'b' expected: '('"
        );
    }

    #[test]
    fn keys_and_values_are_validated() {
        let e = parse("-bad=x").unwrap_err();
        let SelectorError::In { source, .. } = e else {
            panic!()
        };
        assert!(matches!(*source, SelectorError::InvalidKey { .. }));
        assert!(
            parse("Example.com/app=x").is_err(),
            "prefix must be lower case"
        );
        assert!(parse("example.com/app=x").is_ok());
        assert!(parse("a/b/c=x").is_err());
        assert!(parse(&format!("{}=x", "k".repeat(64))).is_err());
        assert!(parse("app=has space").is_err());
        assert!(parse("app=-x").is_err());
        assert!(parse("app=a_b.c-d").is_ok());
        assert!(parse("app=日本").is_err());
    }

    #[test]
    fn requirement_rules_quote_the_api_server() {
        let e = Requirement::new("a", Operator::In, vec![]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "requirement on `a`: for 'in', 'notin' operators, values set can't be empty"
        );
        assert!(Requirement::new("a", Operator::Exists, vec!["x".into()]).is_err());
        assert!(Requirement::new("a", Operator::Equals, vec!["x".into(), "y".into()]).is_err());
        assert!(Requirement::new("a", Operator::GreaterThan, vec!["1.5".into()]).is_err());
        assert!(
            Requirement::new("a", Operator::GreaterThan, vec!["1".into(), "2".into()]).is_err()
        );
        assert!(Requirement::new("a", Operator::LessThan, vec!["3".into()]).is_ok());
        // A negative number is an integer but not a label value (it must start alphanumeric).
        assert!(Requirement::new("a", Operator::LessThan, vec!["-3".into()]).is_err());
    }

    #[test]
    fn label_selector_objects() {
        let l = labels(&[("app", "nccl"), ("zone", "a")]);
        let ls = LabelSelector {
            match_labels: Some(BTreeMap::from([("app".into(), "nccl".into())])),
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "zone".into(),
                operator: "In".into(),
                values: Some(vec!["a".into(), "b".into()]),
            }]),
        };
        let s = Selector::from_label_selector(Some(&ls)).unwrap();
        assert!(s.matches(&l));
        assert!(!s.matches(&labels(&[("app", "nccl"), ("zone", "c")])));
        // nil matches nothing, empty matches everything.
        assert!(!Selector::from_label_selector(None).unwrap().matches(&l));
        assert!(
            Selector::from_label_selector(Some(&LabelSelector::default()))
                .unwrap()
                .matches(&l)
        );
        let bad_op = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "zone".into(),
                operator: "Gt".into(),
                values: Some(vec!["1".into()]),
            }]),
            ..Default::default()
        };
        assert_eq!(
            Selector::from_label_selector(Some(&bad_op)).unwrap_err(),
            SelectorError::UnknownOperator {
                operator: "Gt".into()
            }
        );
        let no_values = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "zone".into(),
                operator: "In".into(),
                values: None,
            }]),
            ..Default::default()
        };
        assert!(Selector::from_label_selector(Some(&no_values)).is_err());
    }

    #[test]
    fn prints_like_upstream_sorted_by_key() {
        assert_eq!(
            sel("zone in (b,a),app,!gone,x!=y").to_string(),
            "app,!gone,x!=y,zone in (a,b)"
        );
        assert_eq!(Selector::nothing().to_string(), "(nothing)");
        assert_eq!(Selector::everything().to_string(), "(everything)");
    }

    #[test]
    fn from_set_is_equality_on_every_pair() {
        let s = Selector::from_set(&labels(&[("a", "1"), ("b", "2")]));
        assert!(s.matches(&labels(&[("a", "1"), ("b", "2"), ("c", "3")])));
        assert!(!s.matches(&labels(&[("a", "1")])));
        assert!(Selector::from_set(&BTreeMap::new()).is_everything());
    }

    /// Every short string over the grammar's characters parses or errors; none panics.
    #[test]
    fn no_input_panics() {
        let alphabet: Vec<&str> = vec![
            "a", "=", "!", "(", ")", ",", "<", ">", " ", "in", "1", "-", "é",
        ];
        let mut words = vec![String::new()];
        for _ in 0..4 {
            let mut next = Vec::new();
            for w in &words {
                for c in &alphabet {
                    next.push(format!("{w}{c}"));
                }
            }
            for w in &next {
                if let Ok(s) = parse(w) {
                    let _ = s.matches(&labels(&[("a", "1")]));
                    let _ = s.to_string();
                }
            }
            words = next;
        }
    }
}
