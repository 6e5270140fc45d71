//! Text that fits the terminal's width: wrapped at word boundaries (never inside a word, a name
//! or an id), lists packed entry by entry, and the widest line measured in display columns
//! (Japanese characters are two).

/// `units` joined by `sep`, as many per line as fit in `width` (a unit wider than the width
/// gets a line of its own): for lists whose entries must stay whole.
pub fn pack(units: &[String], sep: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for u in units {
        let candidate = if line.is_empty() {
            u.clone()
        } else {
            format!("{line}{sep}{u}")
        };
        if line.is_empty() || textwrap::core::display_width(&candidate) <= width {
            line = candidate;
        } else {
            out.push_str(line.trim_end());
            out.push('\n');
            line = u.clone();
        }
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Wraps `text` to `width` (when given), never inside a word or an id: English lines break at
/// spaces only (the Unicode rules would break `volcano-gang` after its hyphen); lines with
/// Japanese break where Japanese text may (between characters, UAX #14), keeping ASCII words
/// whole where the rules allow.
pub fn wrap(text: &str, width: Option<usize>) -> String {
    wrap_hanging(text, width, "")
}

/// [`wrap`], continuation lines indented by `hang` (a list entry's text under its start). Like
/// the text given, the result has no final newline.
pub fn wrap_hanging(text: &str, width: Option<usize>, hang: &str) -> String {
    let Some(w) = width else {
        return text.to_string();
    };
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        out.push(textwrap::fill(line, options(line, w, "", hang)));
    }
    out.join("\n")
}

/// How a line is wrapped to `width`: English at spaces only, Japanese where Japanese text may
/// break (UAX #14), never splitting a word at its hyphen, and a word too long for the rest of a
/// line starting the next (first fit: the optimal-fit algorithm may keep it, past the edge).
pub fn options<'a>(
    line: &str,
    width: usize,
    initial: &'a str,
    hang: &'a str,
) -> textwrap::Options<'a> {
    let separator = if line.is_ascii() || !line.chars().any(is_wide) {
        textwrap::WordSeparator::AsciiSpace
    } else {
        textwrap::WordSeparator::UnicodeBreakProperties
    };
    textwrap::Options::new(width.max(20))
        .break_words(false)
        .word_separator(separator)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        .initial_indent(initial)
        .subsequent_indent(hang)
}

/// A character of CJK text (two columns wide).
fn is_wide(c: char) -> bool {
    textwrap::core::display_width(c.encode_utf8(&mut [0; 4])) == 2
}

/// The display width of the widest line.
pub fn widest(text: &str) -> usize {
    text.lines()
        .map(textwrap::core::display_width)
        .max()
        .unwrap_or(0)
}

/// Prose as `show`, `start` and `quiz` print it, wrapped to `width`: a list item (`- …`,
/// `A) …`) continues under its text, other lines under their own indentation, and the lines of
/// a fenced block (```` ``` ````), YAML or commands, are left as written.
pub fn wrap_prose(text: &str, width: Option<usize>) -> String {
    if width.is_none() {
        return text.to_string();
    }
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push(line.to_string());
            continue;
        }
        if fenced || line.trim().is_empty() {
            out.push(line.to_string());
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let rest = &line[indent..];
        let marker = ["- ", "* ", "A) ", "B) ", "C) ", "D) "]
            .iter()
            .find(|m| rest.starts_with(**m))
            .map_or(0, |m| m.len());
        let hang = " ".repeat(indent + marker);
        out.push(wrap_hanging(line, width, &hang));
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}
