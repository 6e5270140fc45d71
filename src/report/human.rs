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

    fn word(&self, status: Status, lang: crate::catalog::Lang) -> String {
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

pub fn render_all(reports: &[LabReport], color: bool) -> String {
    let mut out = String::new();
    for (i, r) in reports.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_one(&mut out, r, color);
    }
    out
}

fn render_one(out: &mut String, r: &LabReport, color: bool) {
    let p = Palette::new(color);
    let lang = r.lang;
    let _ = writeln!(
        out,
        "{}",
        p.bold.apply_to(format!(
            "lab {} {} — {}",
            r.lab.number, r.lab.id, r.lab.title
        ))
    );
    let mut ctx = format!("{}: {}", ui("source", lang), r.source.kind);
    if !r.source.detail.is_empty() {
        let _ = write!(ctx, " ({})", r.source.detail);
    }
    let _ = write!(ctx, " · {}: {}", ui("namespace", lang), r.target.namespace);
    if let Some(l) = &r.target.learner {
        let _ = write!(ctx, " · learner: {l}");
    }
    if let Some(pr) = r.profile {
        let _ = write!(ctx, " · {}: {pr}", ui("profile", lang));
    }
    let _ = writeln!(out, "{}", p.dim.apply_to(ctx));

    // The object the lab is about is missing: say so once, not under every check.
    let hoist = r.outcomes.iter().filter(|o| o.missing).count() > 1;
    let missing = r.outcomes.iter().find(|o| o.missing).filter(|_| hoist);
    if let Some(m) = missing {
        let _ = writeln!(out, "  {} {}", p.mark(Status::Fail), p.bold.apply_to(m.hint.as_deref().unwrap_or_default().trim_end()));
        if let (Some(e), Some(f)) = (&m.expected, &m.found) {
            let _ = writeln!(out, "      {}: {e}", ui("expected", lang));
            let _ = writeln!(out, "      {}: {f}", ui("found", lang));
        }
    }
    let width = r.outcomes.iter().map(|o| o.check.len()).max().unwrap_or(0);
    for o in &r.outcomes {
        let _ = writeln!(
            out,
            "  {} {:<width$}  {}",
            p.mark(o.status),
            o.check,
            o.title,
            width = width
        );
        let indent = "      ";
        if o.status != Status::Pass {
            if let Some(why) = &o.reason {
                let _ = writeln!(out, "{indent}{}: {why}", p.word(o.status, lang));
            }
        }
        if o.missing && hoist {
            continue;
        }
        if o.status == Status::Fail || o.status == Status::Pending {
            if let Some(e) = &o.expected {
                let _ = writeln!(out, "{indent}{}: {e}", ui("expected", lang));
            }
            if let Some(f) = &o.found {
                let _ = writeln!(out, "{indent}{}: {f}", ui("found", lang));
            }
        }
        if let Some(h) = &o.hint {
            for (i, line) in h.trim_end().lines().enumerate() {
                let label = if i == 0 {
                    format!("{}: ", ui("hint", lang))
                } else {
                    " ".repeat(ui("hint", lang).chars().count() + 2)
                };
                let _ = writeln!(out, "{indent}{}{line}", p.bold.apply_to(label));
            }
        }
    }
    for a in &r.advice {
        let _ = writeln!(
            out,
            "  {} {}: {}",
            p.pending.apply_to("※"),
            ui("advice", lang),
            a.text.trim_end()
        );
    }
    let c = &r.counts;
    let score = match r.score.percent {
        Some(pct) => format!(
            "{}/{} ({pct:.1}%)",
            r.score.passed_weight, r.score.counted_weight
        ),
        None => ui("not-graded", lang).to_string(),
    };
    let _ = writeln!(
        out,
        "{}: {score} · {} {}, {} {}, {} {}, {} {}, {} {}",
        p.bold.apply_to(ui("score", lang)),
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
}
