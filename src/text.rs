//! Bilingual text and the language choice.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Ja,
    En,
}

impl Lang {
    /// `LANG`/`LC_ALL`/`LC_MESSAGES` starting with `ja` select Japanese; anything else English.
    pub fn from_env() -> Lang {
        for var in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let Ok(v) = std::env::var(var) {
                if v.is_empty() {
                    continue;
                }
                return if v.to_ascii_lowercase().starts_with("ja") {
                    Lang::Ja
                } else {
                    Lang::En
                };
            }
        }
        Lang::En
    }

    pub fn code(self) -> &'static str {
        match self {
            Lang::Ja => "ja",
            Lang::En => "en",
        }
    }
}

/// The Japanese or the English of a line built in Rust (both already formatted; English is the
/// original): errors, progress and summaries that are not lab text.
pub fn say(lang: Lang, ja: impl Into<String>, en: impl Into<String>) -> String {
    match lang {
        Lang::Ja => ja.into(),
        Lang::En => en.into(),
    }
}

/// A text present in both languages. Both are required: a lab file missing one is rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    pub ja: String,
    pub en: String,
}

impl Text {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::Ja => &self.ja,
            Lang::En => &self.en,
        }
    }

    pub fn render(&self, lang: Lang, vars: &impl Vars) -> String {
        fill(self.get(lang), vars)
    }
}

/// Something `{placeholders}` are filled from: parameters, an outcome's evidence.
pub trait Vars {
    fn var(&self, name: &str) -> Option<&str>;
}

impl Vars for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str)
    }
}

/// Replaces `{name}` with `vars[name]`. Unknown names stay as written, so a missing value is
/// visible rather than silently empty; `lint` catches them for the shipped labs.
pub fn fill(template: &str, vars: &impl Vars) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if is_placeholder(&after[..end]) => {
                let name = &after[..end];
                match vars.var(name) {
                    Some(v) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Placeholder names used in a template (`{like_this}`), for lint.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if is_placeholder(&after[..end]) => {
                names.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            _ => rest = after,
        }
    }
    names
}

fn is_placeholder(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

/// `text` as it may reach a terminal: control characters other than newline and tab (an ANSI
/// escape written into a manifest value, a carriage return, a NUL) are shown escaped (`\x1b`),
/// so a value can neither restyle the screen nor hide what is printed before it.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(shown) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file path as messages show it: every control character escaped, a newline and a tab
/// included (a file name may hold them, and printed raw they would forge lines or colours).
pub fn shown_path(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    if !text.chars().any(char::is_control) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `text` cut to `max` characters (with `…`) and made [`printable`], for echoing what a user
/// typed back in an error.
pub fn echo(text: &str, max: usize) -> String {
    let cut: String = text.chars().take(max).collect();
    let more = if text.chars().nth(max).is_some() {
        "…"
    } else {
        ""
    };
    format!("{}{more}", printable(&cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn fills_known_placeholders_and_keeps_unknown_ones() {
        let v = vars(&[("np", "16")]);
        assert_eq!(
            fill("set -np {np} ({missing})", &v),
            "set -np 16 ({missing})"
        );
    }

    #[test]
    fn leaves_yaml_and_json_braces_alone() {
        let v = vars(&[("x", "1")]);
        assert_eq!(fill("{ \"a\": {x} } {Upper}", &v), "{ \"a\": 1 } {Upper}");
        assert_eq!(placeholders("{ \"a\": {x} } {y_2}"), vec!["x", "y_2"]);
    }

    #[test]
    fn control_characters_are_shown_escaped_and_long_echoes_are_cut() {
        assert_eq!(super::printable("ok\tline\n"), "ok\tline\n");
        assert_eq!(super::printable("\u{1b}[31mred\r"), "\\x1b[31mred\\x0d");
        assert_eq!(super::echo("abcdef", 3), "abc…");
        assert_eq!(super::echo("abc", 3), "abc");
    }
}
