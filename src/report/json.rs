//! JSON output. One lab: a `LabReport` object. Several: `{schema_version, results: [...]}`.

use serde::Serialize;

use super::{LabReport, SCHEMA_VERSION};

#[derive(Serialize)]
struct Many<'a> {
    schema_version: u32,
    results: &'a [LabReport],
}

pub fn render_all(reports: &[LabReport]) -> String {
    let text = if reports.len() == 1 {
        serde_json::to_string_pretty(&reports[0])
    } else {
        serde_json::to_string_pretty(&Many {
            schema_version: SCHEMA_VERSION,
            results: reports,
        })
    };
    // Serializing plain structs of strings and numbers cannot fail.
    let mut s = text.unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
