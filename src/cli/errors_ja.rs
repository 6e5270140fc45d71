//! clap's argument errors in Japanese, built from what the error carries (its kind and context)
//! rather than from clap's English sentence. The kinds and the context each one carries are
//! clap_builder 4.6's (`error/kind.rs`, `error/format.rs` `write_dynamic_context`, the tips of
//! `error/mod.rs`); values, argument names and a validator's own message are quoted as they are.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The whole message for `e`, as clap would print it but in Japanese: the error, tips, the
/// usage line and where to read more.
pub fn render(e: &clap::Error) -> String {
    let mut out = format!("エラー: {}", sentence(e));
    let mut tips: Vec<String> = Vec::new();
    for (kind, what) in [
        (ContextKind::SuggestedSubcommand, "サブコマンド"),
        (ContextKind::SuggestedArg, "引数"),
        (ContextKind::SuggestedValue, "値"),
    ] {
        let names = strings(e.get(kind));
        if !names.is_empty() {
            tips.push(format!("似た{what}があります: {}", quoted(&names)));
        }
    }
    if let Some(ContextValue::StyledStrs(more)) = e.get(ContextKind::Suggested) {
        tips.extend(more.iter().map(|s| tip(&s.to_string())));
    }
    if !tips.is_empty() {
        out.push('\n');
        for t in tips {
            out.push_str(&format!("\n  ヒント: {t}"));
        }
    }
    if let Some(ContextValue::StyledStr(usage)) = e.get(ContextKind::Usage) {
        let usage = usage.to_string();
        let line = usage.strip_prefix("Usage:").unwrap_or(&usage).trim();
        out.push_str(&format!("\n\n使い方: {line}"));
    }
    out.push_str("\n\n詳しくは '--help' を見てください。\n");
    out
}

/// The first sentence: what is wrong, by kind.
fn sentence(e: &clap::Error) -> String {
    let arg = string(e.get(ContextKind::InvalidArg));
    let value = string(e.get(ContextKind::InvalidValue));
    let sub = string(e.get(ContextKind::InvalidSubcommand));
    let number = |k| match e.get(k) {
        Some(ContextValue::Number(n)) => n.to_string(),
        _ => "?".to_string(),
    };
    match e.kind() {
        ErrorKind::UnknownArgument => {
            format!("引数 '{arg}' は使えません (この位置では受け付けていません)")
        }
        ErrorKind::InvalidSubcommand => format!("サブコマンド '{sub}' はありません"),
        ErrorKind::InvalidValue if value.is_empty() => {
            format!(
                "'{arg}' には値が必要ですが、指定されていません{}",
                valid_values(e)
            )
        }
        ErrorKind::InvalidValue => {
            format!("'{arg}' の値 '{value}' は使えません{}", valid_values(e))
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            format!("'{arg}' の値 '{value}' は使えません{why}")
        }
        ErrorKind::NoEquals => {
            format!("'{arg}' の値は = でつないで書いてください (例: {arg}=値)")
        }
        ErrorKind::TooManyValues => {
            format!("'{arg}' に余分な値 '{value}' があります。これ以上の値はとりません")
        }
        ErrorKind::TooFewValues => format!(
            "'{arg}' には値が {} 個必要ですが、{} 個しか指定されていません",
            number(ContextKind::MinValues),
            number(ContextKind::ActualNumValues)
        ),
        ErrorKind::WrongNumberOfValues => format!(
            "'{arg}' には値が {} 個必要ですが、{} 個指定されました",
            number(ContextKind::ExpectedNumValues),
            number(ContextKind::ActualNumValues)
        ),
        ErrorKind::MissingRequiredArgument => {
            let missing = strings(e.get(ContextKind::InvalidArg));
            format!(
                "次の必須の引数が指定されていません:{}",
                missing
                    .iter()
                    .map(|m| format!("\n  {m}"))
                    .collect::<String>()
            )
        }
        ErrorKind::MissingSubcommand => {
            let valid = strings(e.get(ContextKind::ValidSubcommand));
            let list = if valid.is_empty() {
                String::new()
            } else {
                format!("\n  [サブコマンド: {}]", valid.join(", "))
            };
            format!("'{sub}' にはサブコマンドが必要ですが、指定されていません{list}")
        }
        ErrorKind::ArgumentConflict => conflict(e, &arg, &sub),
        ErrorKind::InvalidUtf8 => "引数に UTF-8 として読めない文字があります".to_string(),
        // Help, version, I/O and formatting failures are not the user's mistake in an
        // argument; clap's own text (or help screen) is quoted.
        _ => e
            .to_string()
            .trim_start_matches("error: ")
            .trim()
            .to_string(),
    }
}

/// "the argument 'A' cannot be used with 'B'" and its variants.
fn conflict(e: &clap::Error, arg: &str, sub: &str) -> String {
    let prior = e.get(ContextKind::PriorArg);
    if !arg.is_empty() && string(prior) == arg {
        return format!("引数 '{arg}' は一度しか指定できません");
    }
    let with = match prior {
        Some(ContextValue::Strings(all)) => format!(
            "次の引数と一緒には使えません:{}",
            all.iter().map(|a| format!("\n  {a}")).collect::<String>()
        ),
        Some(ContextValue::String(one)) => format!(" '{one}' と一緒には使えません"),
        _ => "ほかに指定した引数と一緒には使えません".to_string(),
    };
    if !arg.is_empty() {
        format!("引数 '{arg}' は{with}")
    } else if !sub.is_empty() {
        format!("サブコマンド '{sub}' は{with}")
    } else {
        format!("引数の組み合わせが使えません: {with}")
    }
}

fn valid_values(e: &clap::Error) -> String {
    let valid = strings(e.get(ContextKind::ValidValue));
    if valid.is_empty() {
        String::new()
    } else {
        format!("\n  [使える値: {}]", valid.join(", "))
    }
}

/// clap's tips (`error/mod.rs`), whose quoted parts are kept.
fn tip(en: &str) -> String {
    let q: Vec<&str> = en.split('\'').skip(1).step_by(2).collect();
    match q.as_slice() {
        [value, use_this] if en.starts_with("to pass ") => {
            format!("'{value}' を値として渡すには '{use_this}' と書いてください")
        }
        [sub, _] if en.starts_with("subcommand ") => {
            format!("サブコマンド '{sub}' があります。使うには前の '--' を外してください")
        }
        [flag] if en.ends_with("' exists") => format!("'{flag}' があります"),
        _ => en.to_string(),
    }
}

fn string(v: Option<&ContextValue>) -> String {
    match v {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    }
}

fn strings(v: Option<&ContextValue>) -> Vec<String> {
    match v {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(s)) => s.clone(),
        _ => Vec::new(),
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    fn ja(args: &[&str]) -> String {
        let mut cmd = super::super::help_ja::japanese(crate::cli::Cli::command());
        let e = cmd.try_get_matches_from_mut(args).unwrap_err();
        super::render(&e)
    }

    #[test]
    fn an_unknown_flag_is_named_with_the_similar_one_and_the_usage() {
        let out = ja(&["trainlab", "check", "9", "--file", "x.yaml"]);
        assert!(
            out.starts_with("エラー: 引数 '--file' は使えません"),
            "{out}"
        );
        assert!(
            out.contains("ヒント: 似た引数があります: '--files'"),
            "{out}"
        );
        assert!(out.contains("使い方: trainlab check"), "{out}");
        assert!(!out.contains("Usage"), "{out}");
    }

    #[test]
    fn an_invalid_value_lists_the_valid_ones() {
        let out = ja(&["trainlab", "check", "9", "--profile", "gke"]);
        assert!(
            out.contains("'--profile <PROFILE>' の値 'gke' は使えません"),
            "{out}"
        );
        assert!(out.contains("[使える値: kind, eks]"), "{out}");
    }

    #[test]
    fn a_validator_message_is_quoted() {
        let out = ja(&["trainlab", "check", "9", "--wait", "soon"]);
        assert!(out.contains("の値 'soon' は使えません: "), "{out}");
    }

    #[test]
    fn a_missing_subcommand_lists_the_subcommands() {
        let out = ja(&["trainlab", "setup", "--lang", "ja"]);
        assert!(out.contains("にはサブコマンドが必要ですが"), "{out}");
        assert!(out.contains("kind"), "{out}");
    }

    #[test]
    fn tips_keep_their_quoted_parts() {
        assert_eq!(
            super::tip("to pass '-x' as a value, use '-- -x'"),
            "'-x' を値として渡すには '-- -x' と書いてください"
        );
        assert_eq!(
            super::tip("'check --files' exists"),
            "'check --files' があります"
        );
    }
}
