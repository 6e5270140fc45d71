//! Hydra's `key=value` command-line overrides (the way NeMo scripts are configured): which
//! words of a script's arguments are overrides, and the value a key ends up with.

use super::super::args::parse_int;
use super::super::{last_wins, FlagError, Setting};

/// The prefix of a Hydra override (Hydra "Basic Override syntax": `key=value` changes,
/// `+key=value` appends, `++key=value` appends or overrides, `~key` deletes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideKind {
    Set,
    Add,
    ForceAdd,
    Delete,
}

/// One `key=value` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub kind: OverrideKind,
    /// `model.tensor_model_parallel_size`
    pub key: String,
    /// The value with one pair of surrounding quotes removed; None for `~key`.
    pub value: Option<String>,
    /// Position in the argv.
    pub index: usize,
    /// The word as written.
    pub written: String,
}

/// The Hydra overrides among a script's arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    pub entries: Vec<Override>,
}

impl Overrides {
    pub fn parse(words: &[String]) -> Overrides {
        let entries = words
            .iter()
            .enumerate()
            .filter_map(|(index, w)| parse_override(w, index))
            .collect();
        Overrides { entries }
    }

    /// The last override of `key` (a later `~key` deletes it). Hydra applies command-line
    /// overrides in order, each replacing the value before (hydra v1.3.2, which NeMo v2.4.0 pins
    /// as its newest: `hydra/_internal/config_loader_impl.py` `_apply_overrides_to_config`).
    pub fn get(&self, key: &str) -> Option<&Override> {
        match self.entries.iter().rev().find(|o| o.key == key) {
            Some(o) if o.kind == OverrideKind::Delete => None,
            found => found,
        }
    }

    /// Every override of `key`, in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Override> {
        self.entries.iter().filter(move |o| o.key == key)
    }

    /// The value of any of `keys` (the last written wins, as Hydra applies them in order: see
    /// [`Overrides::get`]), parsed; `expected` describes a good value for the error. Lenient:
    /// Hydra v1.3.2 refuses a second `+key=` once the key exists ("Could not append to config").
    pub fn parse_with<T>(
        &self,
        keys: &[&str],
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<Setting<T>>, FlagError> {
        let mut setting: Option<Setting<T>> = None;
        for o in self
            .entries
            .iter()
            .filter(|o| keys.contains(&o.key.as_str()))
        {
            let source = match o.kind {
                // `~key` and `~key=value` delete the key (Hydra v1.3.2 `config_loader_impl.py`
                // `_apply_overrides_to_config`: the value only has to match the one deleted), so
                // nothing is set, whatever the value says.
                OverrideKind::Delete => {
                    setting = None;
                    continue;
                }
                OverrideKind::Set => o.key.clone(),
                OverrideKind::Add => format!("+{}", o.key),
                OverrideKind::ForceAdd => format!("++{}", o.key),
            };
            let Some(raw) = &o.value else {
                setting = None;
                continue;
            };
            last_wins(&mut setting, Setting::read(&source, raw, expected, &parse)?);
        }
        Ok(setting)
    }

    pub fn int(&self, keys: &[&str]) -> Result<Option<Setting<i64>>, FlagError> {
        self.parse_with(keys, "an integer", parse_int)
    }
}

/// `+model.x=1` → Override; words that are not `key=value` → None.
fn parse_override(word: &str, index: usize) -> Option<Override> {
    let (kind, rest) = if let Some(r) = word.strip_prefix("++") {
        (OverrideKind::ForceAdd, r)
    } else if let Some(r) = word.strip_prefix('+') {
        (OverrideKind::Add, r)
    } else if let Some(r) = word.strip_prefix('~') {
        (OverrideKind::Delete, r)
    } else {
        (OverrideKind::Set, word)
    };
    let (key, value) = match rest.split_once('=') {
        Some((k, v)) => (k, Some(unquote(v).to_string())),
        None if kind == OverrideKind::Delete => (rest, None),
        None => return None,
    };
    if !is_override_key(key) {
        return None;
    }
    Some(Override {
        kind,
        key: key.to_string(),
        value,
        index,
        written: word.to_string(),
    })
}

/// Hydra keys: dotted (`model.optim.lr`) or group paths (`model/optim`), each part starting
/// with a letter or `_` (Hydra's override grammar `ID`, `DOT_PATH`), optionally `@package`.
fn is_override_key(key: &str) -> bool {
    let path = key.split_once('@').map(|(p, _)| p).unwrap_or(key);
    !path.is_empty()
        && path.split(['.', '/']).all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
                && chars.all(|c| c == '_' || c == '-' || c.is_ascii_alphanumeric())
        })
        && path
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
}

/// `'bf16-mixed'` → `bf16-mixed` (Hydra quoted strings).
fn unquote(v: &str) -> &str {
    for q in ['\'', '"'] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v.get(1..v.len() - 1).unwrap_or(v);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn hydra_overrides_and_prefixes() {
        let o = Overrides::parse(&words(
            "train.py model.tensor_model_parallel_size=8 +trainer.foo=1 ++model.x='a-b' ~model.y --flag=1 trainer.precision=\"bf16-mixed\" exp_manager.name=run",
        ));
        let kinds: Vec<(OverrideKind, &str)> =
            o.entries.iter().map(|e| (e.kind, e.key.as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                (OverrideKind::Set, "model.tensor_model_parallel_size"),
                (OverrideKind::Add, "trainer.foo"),
                (OverrideKind::ForceAdd, "model.x"),
                (OverrideKind::Delete, "model.y"),
                (OverrideKind::Set, "trainer.precision"),
                (OverrideKind::Set, "exp_manager.name"),
            ]
        );
        assert_eq!(
            o.get("model.x").and_then(|e| e.value.as_deref()),
            Some("a-b")
        );
        assert_eq!(
            o.get("trainer.precision").and_then(|e| e.value.as_deref()),
            Some("bf16-mixed")
        );
        assert_eq!(o.get("model.y"), None);
        let s = o.int(&["trainer.foo"]).unwrap().unwrap();
        assert_eq!((s.source.as_str(), s.known()), ("+trainer.foo", Some(&1)));
        // Not overrides: flags, paths, `=` at the start.
        assert!(Overrides::parse(&words("--a=1 /x=y =v 9x=1"))
            .entries
            .is_empty());
        // A later delete removes the value.
        let o = Overrides::parse(&words("model.a=1 ~model.a"));
        assert_eq!(o.int(&["model.a"]).unwrap(), None);
        assert_eq!(o.all("model.a").count(), 2);
        // `~key=value` deletes too: it never sets the value it names.
        let o = Overrides::parse(&words("~model.tensor_model_parallel_size=4"));
        assert_eq!(o.int(&["model.tensor_model_parallel_size"]).unwrap(), None);
        let o = Overrides::parse(&words("model.a=2 ~model.a=2 model.a=3"));
        assert_eq!(o.int(&["model.a"]).unwrap().unwrap().known(), Some(&3));
    }
}
