//! `trainlab list`

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use serde::Serialize;

use crate::report::ui;

use super::{ok, print, Global};
use crate::catalog::{Catalog, Text};
use crate::exit::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// A table for people (also `-o human`)
    #[value(alias = "human")]
    Table,
    /// JSON: every lab with both titles
    Json,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value = "table")]
    pub output: ListFormat,
}

#[derive(Serialize)]
struct Entry<'a> {
    number: u32,
    id: &'a str,
    topic: &'a str,
    title: &'a Text,
    gradable: bool,
    checks: usize,
}

#[derive(Serialize)]
struct Listing<'a> {
    schema_version: u32,
    labs: Vec<Entry<'a>>,
}

/// A lab is gradable when its file says so and a verifier is registered for it.
pub use crate::plan::is_gradable;

pub fn run(g: &Global, a: &ListArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    print(&render(&catalog, a.output, g.lang()));
    ok()
}

pub fn render(catalog: &Catalog, format: ListFormat, lang: crate::text::Lang) -> String {
    let entries: Vec<Entry> = catalog
        .labs
        .iter()
        .map(|b| Entry {
            number: b.lab.number,
            id: &b.lab.id,
            topic: &b.lab.topic,
            title: &b.lab.title,
            gradable: is_gradable(&b.lab),
            checks: b.lab.checks.len(),
        })
        .collect();
    match format {
        ListFormat::Json => {
            let listing = Listing {
                schema_version: 1,
                labs: entries,
            };
            let mut s = serde_json::to_string_pretty(&listing).unwrap_or_default();
            s.push('\n');
            s
        }
        ListFormat::Table => table(&entries, lang, crate::report::human::terminal_width()),
    }
}

/// The most columns a title may be narrower than before the list drops the table: a title
/// squeezed into fewer columns reads a word per line.
const MIN_TITLE_WIDTH: usize = 24;

/// The labs as a table whose titles wrap at word boundaries (Japanese between characters), or,
/// when the terminal is too narrow for a title column, one entry per lab with its title under it.
fn table(entries: &[Entry], lang: crate::text::Lang, width: Option<usize>) -> String {
    use crate::report::fit::wrap_hanging;
    let gradable = |e: &Entry| {
        if e.gradable {
            ui("list-checks", lang).replace("{n}", &e.checks.to_string())
        } else {
            ui("list-quiz-only", lang).to_string()
        }
    };
    let head = [
        "#",
        ui("list-id", lang),
        ui("list-topic", lang),
        ui("list-title", lang),
        ui("list-gradable", lang),
    ];
    let col = |i: usize, f: &dyn Fn(&Entry) -> String| -> usize {
        entries
            .iter()
            .map(|e| textwrap::core::display_width(&f(e)))
            .chain([textwrap::core::display_width(head[i])])
            .max()
            .unwrap_or(0)
    };
    let fixed = col(0, &|e| e.number.to_string())
        + col(1, &|e| e.id.to_string())
        + col(2, &|e| e.topic.to_string())
        + col(4, &gradable);
    // Five columns: a border and two padding columns each, and the closing border.
    let title_width = width.map(|w| w.saturating_sub(fixed + 5 * 3 + 1));
    if title_width.is_some_and(|tw| tw < MIN_TITLE_WIDTH) {
        let mut out = String::new();
        for e in entries {
            let line = format!("{:>2}  {}  ({}, {})", e.number, e.id, e.topic, gradable(e));
            out.push_str(&wrap_hanging(&line, width, "    "));
            out.push('\n');
            let title = format!("    {}", e.title.get(lang));
            out.push_str(&wrap_hanging(&title, width, "    "));
            out.push('\n');
        }
        return out;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(head);
    for e in entries {
        let title = crate::report::fit::wrap(e.title.get(lang), title_width);
        t.add_row([
            e.number.to_string(),
            e.id.to_string(),
            e.topic.to_string(),
            title,
            gradable(e),
        ]);
    }
    format!("{t}\n")
}
