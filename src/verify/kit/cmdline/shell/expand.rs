//! Word expansion with the variables the grader knows: `$NAME`, `${NAME}`, `${NAME:-word}`,
//! `${NAME[@]}`, field splitting of unquoted results; and the kubelet's `$(VAR)` expansion.

use std::collections::BTreeMap;

use super::lexer::{find_backtick_end, find_brace_end, find_paren_end};
use super::var::ShellVar;

/// The kubelet's `$(VAR)` expansion: `$$` → `$`, `$(NAME)` → its value when known, anything
/// else as written.
pub(crate) fn expand_k8s(s: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
        } else if let Some((name, r)) = after.strip_prefix('(').and_then(|a| a.split_once(')')) {
            match env.get(name) {
                Some(v) => out.push_str(v),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = r;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Expands a word as written (quotes included) with the known variables. With `split`, unquoted
/// expansions are split into words at blanks and an unquoted empty result is no word at all;
/// without it the result is one field. Unknown references and command substitutions stay as
/// written (quotes removed).
pub(super) fn expand_word(
    raw: &str,
    vars: &BTreeMap<String, ShellVar>,
    split: bool,
) -> Vec<String> {
    let chars: Vec<char> = raw.chars().collect();
    let mut fields: Vec<String> = Vec::new();
    let mut cur = String::new();
    // The current field exists even if empty (it had quotes or literal text).
    let mut have = false;
    let mut i = 0;
    let mut in_dq = false;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' if !in_dq => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&n) => {
                        cur.push(n);
                        have = true;
                    }
                    None => {
                        cur.push('\\');
                        have = true;
                    }
                }
                i += 2;
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some(&n @ ('$' | '`' | '"' | '\\')) => cur.push(n),
                    Some('\n') => {}
                    Some(&n) => {
                        cur.push('\\');
                        cur.push(n);
                    }
                    None => cur.push('\\'),
                }
                i += 2;
            }
            '\'' if !in_dq => {
                have = true;
                i += 1;
                while let Some(&q) = chars.get(i) {
                    i += 1;
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                have = true;
                in_dq = !in_dq;
                i += 1;
            }
            '`' => {
                // Command substitution: kept as written.
                let end = find_backtick_end(&chars, i + 1).unwrap_or(chars.len());
                cur.extend(chars.get(i..(end + 1).min(chars.len())).unwrap_or_default());
                have = true;
                i = end + 1;
            }
            '$' => {
                let (expansion, next) = dollar(&chars, i, vars);
                i = next;
                match expansion {
                    Expansion::Literal(text) => {
                        cur.push_str(&text);
                        have = true;
                    }
                    Expansion::Value(v) if in_dq || !split => {
                        cur.push_str(&v);
                        have = true;
                    }
                    Expansion::Value(v) => {
                        // Field splitting at blanks (default IFS): a blank ends the field.
                        for (k, piece) in v.split([' ', '\t', '\n']).enumerate() {
                            if k > 0 && have {
                                fields.push(std::mem::take(&mut cur));
                                have = false;
                            }
                            if !piece.is_empty() {
                                cur.push_str(piece);
                                have = true;
                            }
                        }
                    }
                    Expansion::Array(items) if in_dq || split => {
                        // `"${A[@]}"`: one field per element.
                        let n = items.len();
                        for (k, item) in items.into_iter().enumerate() {
                            cur.push_str(&item);
                            have = true;
                            if k + 1 < n {
                                fields.push(std::mem::take(&mut cur));
                            }
                        }
                    }
                    Expansion::Array(items) => {
                        cur.push_str(&items.join(" "));
                        have = true;
                    }
                }
            }
            c => {
                cur.push(c);
                have = true;
                i += 1;
            }
        }
    }
    if have {
        fields.push(cur);
    }
    if !split {
        return vec![fields.join(" ")];
    }
    fields
}

enum Expansion {
    /// Text kept as written (an unknown reference) or a literal `$`.
    Literal(String),
    Value(String),
    Array(Vec<String>),
}

/// Reads the `$…` at `chars[i]`; returns what it expands to and the index after it.
fn dollar(chars: &[char], i: usize, vars: &BTreeMap<String, ShellVar>) -> (Expansion, usize) {
    let as_written = |end: usize| {
        Expansion::Literal(
            chars
                .get(i..end.min(chars.len()))
                .unwrap_or_default()
                .iter()
                .collect(),
        )
    };
    match chars.get(i + 1) {
        Some('(') => {
            let end = find_paren_end(chars, i + 1).unwrap_or(chars.len());
            (as_written(end + 1), end + 1)
        }
        Some('{') => {
            let Some(end) = find_brace_end(chars, i + 1) else {
                return (as_written(chars.len()), chars.len());
            };
            let inner: String = chars.get(i + 2..end).unwrap_or_default().iter().collect();
            let exp = braced(&inner, vars).unwrap_or_else(|| {
                Expansion::Literal(chars.get(i..=end).unwrap_or_default().iter().collect())
            });
            (exp, end + 1)
        }
        Some(&c) if c == '_' || c.is_ascii_alphabetic() => {
            let mut end = i + 1;
            while chars
                .get(end)
                .is_some_and(|c| *c == '_' || c.is_ascii_alphanumeric())
            {
                end += 1;
            }
            let name: String = chars.get(i + 1..end).unwrap_or_default().iter().collect();
            match vars.get(&name) {
                Some(v) => match &v.array {
                    // `$A` on an array is its first element.
                    Some(items) => (
                        Expansion::Value(items.first().cloned().unwrap_or_default()),
                        end,
                    ),
                    None => (Expansion::Value(v.value.clone()), end),
                },
                None => (as_written(end), end),
            }
        }
        Some(&c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => (as_written(i + 2), i + 2),
        _ => (Expansion::Literal("$".into()), i + 1),
    }
}

/// `${NAME}`, `${NAME:-word}`, `${NAME-word}`, `${NAME[@]}`, `${NAME[*]}`; None for anything else
/// or an unknown NAME.
fn braced(inner: &str, vars: &BTreeMap<String, ShellVar>) -> Option<Expansion> {
    let name_end = inner
        .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
        .unwrap_or(inner.len());
    let (name, rest) = inner.split_at(name_end);
    if name.is_empty() {
        return None;
    }
    let var = vars.get(name)?;
    match rest {
        "" => Some(Expansion::Value(match &var.array {
            Some(items) => items.first().cloned().unwrap_or_default(),
            None => var.value.clone(),
        })),
        "[@]" | "[*]" => Some(Expansion::Array(
            var.array.clone().unwrap_or_else(|| vec![var.value.clone()]),
        )),
        _ => {
            let (colon, default) = if let Some(d) = rest.strip_prefix(":-") {
                (true, d)
            } else if let Some(d) = rest.strip_prefix('-') {
                (false, d)
            } else {
                return None;
            };
            if colon && var.value.is_empty() {
                // Only a default without references of its own is known.
                (!crate::verify::kit::cmdline::is_var_ref(default))
                    .then(|| Expansion::Value(default.to_string()))
            } else {
                Some(Expansion::Value(var.value.clone()))
            }
        }
    }
}

/// Quotes text so [`expand_word`] reads it as one double-quoted word.
pub(super) fn quote_literal(text: &str) -> String {
    let mut s = String::from("\"");
    for c in text.chars() {
        if c == '"' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}
