//! Asking before a command does something costly or destructive: on a terminal a `[y/N]`
//! question, elsewhere a refusal that names `--yes` (a script must say it means it).

use std::io::{BufRead, IsTerminal};

use super::output::eprint;
use crate::ops::capacity::Capacity;
use crate::text::say;
use crate::text::Lang;

/// Prints `text` and a `[y/N]` question on stderr and reads the answer; true to go on.
pub fn ask(text: &str, lang: Lang) -> bool {
    eprint(&format!(
        "{text}{} ",
        say(lang, "続けますか？ [y/N]", "Continue? [y/N]")
    ));
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim(), "y" | "Y" | "yes")
}

/// Whether a question can be asked at all.
pub fn can_ask() -> bool {
    std::io::stdin().is_terminal()
}

/// What the accelerated capacity of an EKS answer is, said before it is applied: one line per
/// kind of machine, and that it runs (and is billed) until reset.
pub fn capacity_text(capacity: &Capacity, what: &str, lab_id: &str, lang: Lang) -> String {
    let lines = capacity.lines(lang).join("\n  ");
    say(
        lang,
        format!("{what}は次のアクセラレーター容量を要求します:\n  {lines}\nノードは動いている間課金されます。`trainlab reset {lab_id}` で解放できます。\n"),
        format!("{what} asks for this accelerated capacity:\n  {lines}\nNodes are billed while they run; `trainlab reset {lab_id}` frees them.\n"),
    )
}

/// Goes on when the user agreed: `--yes`, or `y` on a terminal. Without a terminal and
/// without `--yes` it refuses (exit 2) naming the flag; a `n` on a terminal is Ok(false).
pub fn capacity_agreed(
    capacity: &Capacity,
    what: &str,
    lab_id: &str,
    yes: bool,
    lang: Lang,
) -> Result<bool, crate::Error> {
    if capacity.is_empty() {
        return Ok(true);
    }
    let text = capacity_text(capacity, what, lab_id, lang);
    if yes {
        eprint(&text);
        return Ok(true);
    }
    if !can_ask() {
        eprint(&text);
        return Err(crate::Error::usage(
            "これは実際の GPU/Trainium ノードを起動します。端末以外から実行するときは --yes を付けて確認してください（--dry-run で何が起動するかを確認できます）",
            "this starts real GPU/Trainium nodes; pass --yes to confirm when not on a terminal (--dry-run shows what it starts)",
        ));
    }
    Ok(ask(&text, lang))
}
