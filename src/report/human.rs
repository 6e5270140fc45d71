//! Human output: one line per check with a mark, details under failures, a score line.

use std::fmt::Write;

use console::Style;

use super::{ui, LabReport};
use crate::verify::Status;

struct Palette {
    pass: Style,
    fail: Style,
    pending: Style,
    skipped: Style,
    error: Style,
    bold: Style,
    dim: Style,
}

impl Palette {
    fn new(color: bool) -> Palette {
        let s = |st: Style| st.force_styling(color);
        Palette {
            pass: s(Style::new().green()),
            fail: s(Style::new().red().bold()),
            pending: s(Style::new().yellow()),
            skipped: s(Style::new().dim()),
            error: s(Style::new().magenta().bold()),
            bold: s(Style::new().bold()),
            dim: s(Style::new().dim()),
        }
    }

    fn mark(&self, status: Status) -> String {
        let (m, st) = match status {
            Status::Pass => ("✔", &self.pass),
            Status::Fail => ("✘", &self.fail),
            Status::Pending => ("…", &self.pending),
            Status::Skipped => ("-", &self.skipped),
            Status::Error => ("!", &self.error),
        };
        st.apply_to(m).to_string()
    }

    fn word(&self, status: Status, lang: crate::text::Lang) -> String {
        let w = ui(status.as_str(), lang);
        let st = match status {
            Status::Pass => &self.pass,
            Status::Fail => &self.fail,
            Status::Pending => &self.pending,
            Status::Skipped => &self.skipped,
            Status::Error => &self.error,
        };
        st.apply_to(w).to_string()
    }
}

/// The status mark without colour, for measuring.
fn plain_mark(status: Status) -> &'static str {
    match status {
        Status::Pass => "✔",
        Status::Fail => "✘",
        Status::Pending => "…",
        Status::Skipped => "-",
        Status::Error => "!",
    }
}

pub fn render_all(reports: &[LabReport], color: bool) -> String {
    render_all_width(reports, color, terminal_width())
}

/// Renders wrapped to `width` columns (None: no wrapping, for pipes and files).
pub fn render_all_width(reports: &[LabReport], color: bool, width: Option<usize>) -> String {
    let mut out = String::new();
    for (i, r) in reports.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_one(&mut out, r, color, width);
    }
    out
}

/// The width to wrap to: `COLUMNS` when set, else the terminal's; None when stdout is not a
/// terminal (a file or pipe keeps one line per paragraph).
pub fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
    {
        return Some(n.max(40));
    }
    let term = console::Term::stdout();
    if !term.is_term() {
        return None;
    }
    term.size_checked()
        .map(|(_, cols)| usize::from(cols).max(40))
}

/// Writes `label text` starting at `indent`, each line of `text` wrapped to `width` with a
/// hanging indent under the text (the label's display width, so Japanese labels line up too).
fn para(
    out: &mut String,
    indent: &str,
    label: &str,
    styled_label: &str,
    text: &str,
    width: Option<usize>,
) {
    let hang = " ".repeat(indent.chars().count() + textwrap::core::display_width(label));
    let text = crate::catalog::printable(text);
    for (i, line) in text.trim_end().lines().enumerate() {
        let first = if i == 0 {
            format!("{indent}{styled_label}")
        } else {
            hang.clone()
        };
        match width {
            Some(w) => {
                // Wrap the plain text; the label's width is accounted for by the indents.
                let opts = super::fit::options(line, w, &hang, &hang);
                let wrapped = textwrap::fill(line, opts);
                let mut lines = wrapped.lines();
                if let Some(l) = lines.next() {
                    let _ = writeln!(out, "{first}{}", &l[hang.len().min(l.len())..]);
                }
                for l in lines {
                    let _ = writeln!(out, "{l}");
                }
            }
            None => {
                let _ = writeln!(out, "{first}{line}");
            }
        }
    }
}

fn render_one(out: &mut String, r: &LabReport, color: bool, width: Option<usize>) {
    let p = Palette::new(color);
    let lang = r.lang;
    let heading = format!("lab {} {} — {}", r.lab.number, r.lab.id, r.lab.title);
    let _ = writeln!(
        out,
        "{}",
        p.bold
            .apply_to(super::fit::wrap_hanging(&heading, width, "  "))
    );
    let mut ctx = format!("{}: {}", ui("source", lang), r.source.kind);
    // The demo's detail is trainlab's own words: said in the report's language.
    let detail = if r.source.kind == "demo" {
        ui("demo-state", lang)
    } else {
        r.source.detail.as_str()
    };
    if !detail.is_empty() {
        let _ = write!(ctx, " ({detail})");
    }
    let _ = write!(ctx, " · {}: {}", ui("namespace", lang), r.target.namespace);
    if let Some(l) = &r.target.learner {
        let _ = write!(ctx, " · learner: {l}");
    }
    if let Some(pr) = r.profile {
        let _ = write!(ctx, " · {}: {pr}", ui("profile", lang));
    }
    let _ = writeln!(
        out,
        "{}",
        p.dim.apply_to(super::fit::wrap_hanging(&ctx, width, "  "))
    );

    // The server's verdict: what it refused for no single check, and what kept it from judging.
    if let Some(server) = &r.server_dry_run {
        let _ = writeln!(
            out,
            "{}",
            p.dim.apply_to(super::fit::wrap_hanging(
                &super::server::summary(server, lang),
                width,
                "  "
            ))
        );
        for refusal in server.refused.iter().filter(|x| x.on_the_lab()) {
            let mark = format!("{} ", p.mark(Status::Fail));
            para(out, "  ", "✘ ", &mark, &refusal.text, width);
        }
        for e in &server.errors {
            let mark = format!("{} ", p.mark(Status::Error));
            para(out, "  ", "! ", &mark, e, width);
        }
    }
    // The object the lab is about is missing: say so once, not under every check.
    let hoist = r.outcomes.iter().filter(|o| o.missing).count() > 1;
    let missing = r.outcomes.iter().find(|o| o.missing).filter(|_| hoist);
    if let Some(m) = missing {
        let mark = format!("{} ", p.mark(Status::Fail));
        let hint = m.hint.as_deref().unwrap_or_default();
        para(out, "  ", "✘ ", &mark, hint, width);
        if let (Some(e), Some(f)) = (&m.expected, &m.found) {
            for (key, v) in [("expected", e), ("found", f)] {
                let label = format!("{}: ", ui(key, lang));
                para(out, "      ", &label, &label, v, width);
            }
        }
    }
    let col = r.outcomes.iter().map(|o| o.check.len()).max().unwrap_or(0);
    for o in &r.outcomes {
        let plain = format!("  {} {:<col$}  ", plain_mark(o.status), o.check);
        let styled = format!("  {} {:<col$}  ", p.mark(o.status), o.check);
        para(out, "", &plain, &styled, &o.title, width);
        let indent = "      ";
        if o.status != Status::Pass {
            if let Some(why) = o.human_reason.as_ref().or(o.reason.as_ref()) {
                let label = format!("{}: ", ui(o.status.as_str(), lang));
                let styled = format!("{}: ", p.word(o.status, lang));
                para(out, indent, &label, &styled, why, width);
            }
        }
        if o.missing && hoist {
            continue;
        }
        if o.status == Status::Fail || o.status == Status::Pending {
            for (key, v) in [("expected", &o.expected), ("found", &o.found)] {
                if let Some(v) = v {
                    let label = format!("{}: ", ui(key, lang));
                    para(out, indent, &label, &label, v, width);
                }
            }
        }
        if let Some(h) = &o.hint {
            let label = format!("{}: ", ui("hint", lang));
            let styled = p.bold.apply_to(&label).to_string();
            para(out, indent, &label, &styled, h, width);
        }
    }
    for a in &r.advice {
        let label = format!("※ {}: ", ui("advice", lang));
        let styled = format!("{} {}: ", p.pending.apply_to("※"), ui("advice", lang));
        para(out, "  ", &label, &styled, &a.text, width);
    }
    let c = &r.counts;
    let score = match r.score.percent {
        Some(pct) => format!(
            "{}/{} ({pct:.1}%)",
            r.score.passed_weight, r.score.counted_weight
        ),
        None if !r.not_saved.is_empty() => format!(
            "{} {}",
            ui("not-graded-unsaved", lang),
            r.not_saved.join(", ")
        ),
        None => ui("not-graded", lang).to_string(),
    };
    // The score line, wrapped whole: measured without its colour codes.
    let plain = format!(
        "{}: {score} · {} {}, {} {}, {} {}, {} {}, {} {}",
        ui("score", lang),
        c.pass,
        ui("pass", lang),
        c.fail,
        ui("fail", lang),
        c.pending,
        ui("pending", lang),
        c.skipped,
        ui("skipped", lang),
        c.error,
        ui("error", lang),
    );
    let wrapped = super::fit::wrap_hanging(&plain, width, "  ");
    let label = format!("{}:", ui("score", lang));
    let _ = writeln!(
        out,
        "{}{}",
        p.bold.apply_to(&label),
        &wrapped[label.len()..]
    );
}
