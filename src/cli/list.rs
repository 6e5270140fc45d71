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
    Table,
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

pub fn render(catalog: &Catalog, format: ListFormat, lang: crate::catalog::Lang) -> String {
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
        ListFormat::Table => {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_header([
                    "#",
                    ui("list-id", lang),
                    ui("list-topic", lang),
                    ui("list-title", lang),
                    ui("list-gradable", lang),
                ]);
            for e in &entries {
                let gradable = if e.gradable {
                    ui("list-checks", lang).replace("{n}", &e.checks.to_string())
                } else {
                    ui("list-quiz-only", lang).to_string()
                };
                t.add_row([
                    e.number.to_string(),
                    e.id.to_string(),
                    e.topic.to_string(),
                    e.title.get(lang).to_string(),
                    gradable,
                ]);
            }
            if let Some(w) = crate::report::human::terminal_width() {
                t.set_width(u16::try_from(w).unwrap_or(u16::MAX));
            }
            // Ids, numbers and topics are never split (`tensor-parallelis/m`); titles wrap.
            for i in [0, 1, 2, 4] {
                if let Some(c) = t.column_mut(i) {
                    c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
                }
            }
            format!("{t}\n")
        }
    }
}
