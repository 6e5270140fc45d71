//! Text made safe for the HTML pages (`html`, `live_page`): escaped element text and attribute
//! values, and JSON that cannot end the `<script>` block it sits in.

use serde::Serialize;

/// HTML-escapes text for element content and attribute values.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The JSON for a `<script type="application/json">` block: `<` only ever appears inside JSON
/// strings, where `\u003c` means the same, so no `</script>` or `<!--` can end the block.
pub(super) fn script_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c")
}
