//! The room's heatmap as terminal text that fits the terminal's width without splitting a word,
//! a name or an id. Layouts are tried from the richest to the most compact; the first whose
//! widest line fits is used:
//! 1. learners × labs, lab headers `N id`;
//! 2. learners × labs, lab headers `N` with a key of the lab ids below;
//! 3. labs × learners (transposed: fits when a room has fewer learners than labs);
//! 4. learners × labs, headers `N`, cells only the status symbol (the total keeps its percent);
//! 5. one line per learner: name, total, then one symbol per lab in lab order.
//!
//! Without a width (a pipe or a file) the first layout is used whole.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

use super::cells::{cell_text, label, percent};
use super::Scoreboard;

/// The heatmap, fitted to `width` columns when given.
pub fn render(board: &Scoreboard, width: Option<usize>) -> String {
    let Some(width) = width else {
        return grid(board, Header::NumberAndId, Cells::Percent);
    };
    let layouts: [&dyn Fn() -> String; 5] = [
        &|| grid(board, Header::NumberAndId, Cells::Percent),
        &|| grid(board, Header::Number, Cells::Percent) + &key(board, width),
        &|| transposed(board),
        &|| grid(board, Header::Number, Cells::Symbol) + &key(board, width),
        &|| lines(board),
    ];
    let mut last = String::new();
    for layout in layouts {
        last = layout();
        if super::fit::widest(&last) <= width {
            return last;
        }
    }
    last
}

#[derive(Clone, Copy)]
enum Header {
    NumberAndId,
    Number,
}

#[derive(Clone, Copy)]
enum Cells {
    Percent,
    Symbol,
}

fn table() -> Table {
    let mut tb = Table::new();
    tb.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    tb
}

fn total_text(board: &Scoreboard, row: usize) -> String {
    match board.learners[row].score.percent {
        Some(p) => format!("{}%", percent(p)),
        None => "–".to_string(),
    }
}

fn right(text: impl Into<String>) -> Cell {
    Cell::new(text.into()).set_alignment(CellAlignment::Right)
}

/// Learners down, labs across.
fn grid(board: &Scoreboard, header: Header, cells: Cells) -> String {
    let lang = board.lang;
    let mut tb = table();
    let mut head = vec![Cell::new(label("learner", lang))];
    head.extend(board.labs.iter().map(|c| match header {
        Header::NumberAndId => Cell::new(format!("{}\n{}", c.lab.number, c.lab.id)),
        Header::Number => right(c.lab.number.to_string()),
    }));
    head.push(right(label("total", lang)));
    tb.set_header(head);
    for (i, r) in board.learners.iter().enumerate() {
        let mut row = vec![Cell::new(&r.learner)];
        row.extend(r.cells.iter().map(|c| match cells {
            Cells::Percent => right(cell_text(c.mark, c.score.as_ref())),
            Cells::Symbol => right(c.mark.symbol()),
        }));
        row.push(right(total_text(board, i)));
        tb.add_row(row);
    }
    if matches!(cells, Cells::Symbol) {
        // One symbol under a lab number needs no padding: the narrowest grid.
        for j in 1..=board.labs.len() {
            if let Some(c) = tb.column_mut(j) {
                c.set_padding((0, 0));
            }
        }
    }
    format!("{tb}\n")
}

/// Labs down, learners across, the totals as the last row.
fn transposed(board: &Scoreboard) -> String {
    let lang = board.lang;
    let mut tb = table();
    let mut head = vec![Cell::new("lab")];
    head.extend(board.learners.iter().map(|r| right(r.learner.clone())));
    tb.set_header(head);
    for (j, c) in board.labs.iter().enumerate() {
        let mut row = vec![Cell::new(format!("{} {}", c.lab.number, c.lab.id))];
        row.extend(board.learners.iter().map(|r| {
            r.cells
                .get(j)
                .map(|cell| right(cell_text(cell.mark, cell.score.as_ref())))
                .unwrap_or_else(|| right(""))
        }));
        tb.add_row(row);
    }
    let mut totals = vec![Cell::new(label("total", lang))];
    totals.extend((0..board.learners.len()).map(|i| right(total_text(board, i))));
    tb.add_row(totals);
    format!("{tb}\n")
}

/// One line per learner: `name  total  ✔✔◐…` (one symbol per lab, in lab order).
fn lines(board: &Scoreboard) -> String {
    let name_width = board
        .learners
        .iter()
        .map(|r| textwrap::core::display_width(&r.learner))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    out.push_str(&format!(
        "{:name_width$}  {:>6}  lab {}\n",
        "",
        label("total", board.lang),
        lab_numbers(board)
    ));
    for (i, r) in board.learners.iter().enumerate() {
        let marks: String = r.cells.iter().map(|c| c.mark.symbol()).collect();
        let pad = name_width - textwrap::core::display_width(&r.learner);
        out.push_str(&format!(
            "{}{}  {:>6}  {marks}\n",
            r.learner,
            " ".repeat(pad),
            total_text(board, i)
        ));
    }
    out
}

/// `1–15` for consecutive labs, else `2,9,14`.
fn lab_numbers(board: &Scoreboard) -> String {
    let n: Vec<u32> = board.labs.iter().map(|c| c.lab.number).collect();
    let consecutive = n.windows(2).all(|w| w[1] == w[0] + 1);
    match (n.first(), n.last()) {
        (Some(a), Some(b)) if consecutive && n.len() > 2 => format!("{a}–{b}"),
        _ => n.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
    }
}

/// `1 tensor-parallelism · 2 parallelism-3d · …` packed into lines of `width`, one entry never
/// split across lines.
fn key(board: &Scoreboard, width: usize) -> String {
    let entries: Vec<String> = board
        .labs
        .iter()
        .map(|c| format!("{} {}", c.lab.number, c.lab.id))
        .collect();
    super::fit::pack(&entries, " · ", width)
}
