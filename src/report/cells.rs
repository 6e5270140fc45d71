//! The words and cell texts every view of a room shares (the terminal table, its heatmap, the
//! HTML page): kept apart so that none of those views imports another.

use super::Mark;
use crate::text::Lang;
use crate::verify::Score;

/// A word of the room's outputs in `lang`.
pub(crate) fn label(key: &str, lang: Lang) -> &'static str {
    t(key, lang)
}

/// A word of the room's table, from the shared table (`room-…` where the page says it
/// otherwise).
pub(crate) fn t(key: &str, lang: Lang) -> &'static str {
    match key {
        "learner" | "total" | "legend" | "notes" => super::ui(&format!("room-{key}"), lang),
        _ => super::ui(key, lang),
    }
}

/// `✔ 100%`, `◐ 53.8%`, `!`.
pub fn cell_text(mark: Mark, score: Option<&Score>) -> String {
    match score.and_then(|s| s.percent) {
        Some(p) => format!("{} {}%", mark.symbol(), percent(p)),
        None => mark.symbol().to_string(),
    }
}

/// A percent without a needless `.0`.
pub fn percent(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}
