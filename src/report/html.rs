//! `grade --html FILE`: a self-contained scoreboard page — inline CSS and JS, no request to
//! anywhere — with a learners × labs heatmap (sortable by any column), a click on a cell
//! showing that learner's outcomes with hints, and the checks the room fails most.
//!
//! The heatmap and the summary are plain HTML (readable without JS); the page's script reads
//! the room from an embedded JSON block and only ever sets `textContent`, so no text from a
//! cluster is ever parsed as HTML.

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use super::board::{Cell, Row};
use super::cells::{cell_text, percent};
pub(super) use super::escape::{esc, script_json};
pub use super::live_page::Live;
use super::ui;
use super::{Mark, Scoreboard};
use crate::text::Lang;
use crate::verify::Status;

/// A word of the page: the shared table's `page-…` words, and the room's `most-failed`.
fn t(key: &str, lang: Lang) -> &'static str {
    match key {
        "most-failed" => ui(key, lang),
        _ => ui(&format!("page-{key}"), lang),
    }
}

/// A cell's colour: its status, the same colour the legend shows for it (a percent is in the
/// cell's text; colouring by percent made a failing 60 % cell look like a passing one).
fn colour(mark: Mark) -> &'static str {
    match mark {
        Mark::Done => "#b9e4bb",
        Mark::Pending => "#fde9a8",
        Mark::Partial => "#fdd3a6",
        Mark::Failing => "#f5b7b3",
        Mark::NotStarted => "#f1f1f1",
        Mark::NotGraded => "#e2e2e2",
        Mark::Error => "#e4d4f4",
    }
}

// The page's data: only what the page shows, so a big room stays a small file.
#[derive(Serialize)]
struct Data<'a> {
    ui: Ui,
    labs: Vec<LabData<'a>>,
    cells: PageCells<'a>,
}

/// Every cell's detail, row after row; none on a served page, which asks its server for a
/// learner's details when a cell is opened ([`learner_details`]): a board of a thousand
/// learners' details is about 30 MB.
struct PageCells<'a> {
    board: &'a Scoreboard,
    embedded: bool,
}

impl Serialize for PageCells<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq as _;
        let mut seq = s.serialize_seq(None)?;
        let rows = if self.embedded {
            &self.board.learners[..]
        } else {
            &[]
        };
        for r in rows {
            for c in &r.cells {
                seq.serialize_element(&cell_data(r, c, self.board.lang))?;
            }
        }
        seq.end()
    }
}

/// The details of a learner's cells as a served page asks for them (`/cells.json`), with the
/// version of the board they are from (a page ignores details older than what it shows).
pub fn learner_details(board: &Scoreboard, row: &Row, version: u64) -> String {
    #[derive(Serialize)]
    struct Details<'a> {
        version: u64,
        cells: Vec<CellData<'a>>,
    }
    let details = Details {
        version,
        cells: row
            .cells
            .iter()
            .map(|c| cell_data(row, c, board.lang))
            .collect(),
    };
    // Serialising our own structs to a string cannot fail.
    serde_json::to_string(&details).unwrap_or_default()
}

#[derive(Serialize)]
struct Ui {
    expected: &'static str,
    found: &'static str,
    hint: &'static str,
    reason: &'static str,
    advice: &'static str,
    score: &'static str,
    not_graded: &'static str,
    status: [(&'static str, &'static str); 5],
}

#[derive(Serialize)]
struct LabData<'a> {
    id: &'a str,
    number: u32,
    title: &'a str,
}

#[derive(Serialize)]
struct CellData<'a> {
    id: &'a str,
    learner: &'a str,
    lab: &'a str,
    mark: &'static str,
    mark_label: &'static str,
    score: Option<String>,
    namespace: Option<&'a str>,
    error: Option<&'a str>,
    outcomes: Vec<OutcomeData<'a>>,
    advice: Vec<&'a str>,
}

#[derive(Serialize)]
struct OutcomeData<'a> {
    check: &'a str,
    status: Status,
    title: &'a str,
    hint: Option<&'a str>,
    expected: Option<&'a str>,
    found: Option<&'a str>,
    reason: Option<&'a str>,
}

/// What the detail panel shows of one cell.
fn cell_data<'a>(r: &'a Row, c: &'a Cell, lang: Lang) -> CellData<'a> {
    let rep = c.report.as_ref();
    CellData {
        id: &c.id,
        learner: &r.learner,
        lab: &c.lab,
        mark: c.mark.as_str(),
        mark_label: c.mark.label(lang),
        score: c.score.and_then(|s| {
            s.percent
                .map(|p| format!("{}/{} ({}%)", s.passed_weight, s.counted_weight, percent(p)))
        }),
        namespace: rep.map(|r| r.target.namespace.as_str()),
        error: r.error.as_deref(),
        outcomes: rep
            .map(|r| {
                r.outcomes
                    .iter()
                    .map(|o| OutcomeData {
                        check: &o.check,
                        status: o.status,
                        title: &o.title,
                        hint: o.hint.as_deref(),
                        expected: o.expected.as_deref(),
                        found: o.found.as_deref(),
                        reason: o.reason.as_deref(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        advice: rep
            .map(|r| r.advice.iter().map(|a| a.text.as_str()).collect())
            .unwrap_or_default(),
    }
}

/// One learner's row as the heatmap shows it: what the static page writes as HTML and what a
/// served page's script sets (attributes and text only) when the row changes.
#[derive(Serialize)]
pub struct RowView<'a> {
    pub learner: &'a str,
    /// The total's sort value (-1: not graded) and text.
    pub total_value: String,
    pub total_text: String,
    pub cells: Vec<CellView<'a>>,
}

/// One cell of a [`RowView`].
#[derive(Serialize)]
pub struct CellView<'a> {
    pub id: &'a str,
    pub lab: &'a str,
    pub mark: &'static str,
    /// The sort value: the percent, -1 when not graded.
    pub value: String,
    pub colour: &'static str,
    /// The mark in words (the cell's tooltip).
    pub title: &'static str,
    pub text: String,
}

/// The view of one learner's row.
pub fn row_view<'a>(board: &'a Scoreboard, r: &'a Row) -> RowView<'a> {
    let lang = board.lang;
    let total = r.score.percent;
    RowView {
        learner: &r.learner,
        total_value: total.map(|p| p.to_string()).unwrap_or_else(|| "-1".into()),
        total_text: total
            .map(|p| format!("{}%", percent(p)))
            .unwrap_or_else(|| "–".into()),
        cells: r
            .cells
            .iter()
            .map(|c| CellView {
                id: &c.id,
                lab: &c.lab,
                mark: c.mark.as_str(),
                value: c
                    .score
                    .and_then(|s| s.percent)
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "-1".into()),
                colour: colour(c.mark),
                title: c.mark.label(lang),
                text: cell_text(c.mark, c.score.as_ref()),
            })
            .collect(),
    }
}

/// A learner's detail page (`grade --serve`'s `/learner/NAME`): each lab's checks with their
/// status, expected and found values, hints and reasons, as plain HTML (no script).
pub fn learner_page(board: &Scoreboard, row: &Row, query: &str) -> String {
    let lang = board.lang;
    let mut h = String::with_capacity(16 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{} — {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        lang.code(),
        esc(&row.learner),
        esc(t("title", lang))
    );
    let total = row
        .score
        .percent
        .map(|p| format!("{}%", percent(p)))
        .unwrap_or_else(|| ui("not-graded", lang).to_string());
    let _ = writeln!(
        h,
        "<header><h1>{}</h1><p class=\"meta\"><a href=\"../{}\">{}</a> · {}: {}</p></header><main id=\"detail\">",
        esc(&row.learner),
        esc(query),
        esc(t("title", lang)),
        esc(t("total", lang)),
        esc(&total)
    );
    if let Some(e) = &row.error {
        let _ = writeln!(h, "<p class=\"error\">{}</p>", esc(e));
    }
    for (col, cell) in board.labs.iter().zip(&row.cells) {
        let d = cell_data(row, cell, lang);
        let _ = writeln!(
            h,
            "<section data-lab=\"{}\"><h2><span class=\"num\">{}</span> {} <small>— {}{}</small></h2><ul>",
            esc(&cell.lab),
            col.lab.number,
            esc(&col.lab.title),
            esc(d.mark_label),
            d.score.as_deref().map(|s| format!(" · {}", esc(s))).unwrap_or_default()
        );
        for o in &d.outcomes {
            let _ = write!(
                h,
                "<li class=\"o st-{}\" data-check=\"{}\"><span class=\"status\">{}</span>{}<code>{}</code>",
                o.status.as_str(),
                esc(o.check),
                esc(ui(o.status.as_str(), lang)),
                esc(o.title),
                esc(o.check)
            );
            for (key, value) in [
                ("expected", o.expected),
                ("found", o.found),
                ("hint", o.hint),
            ] {
                if let Some(v) = value {
                    let class = if key == "hint" { "hint" } else { "ef" };
                    let _ = write!(
                        h,
                        "<p class=\"{class}\">{}: {}</p>",
                        esc(ui(key, lang)),
                        esc(v)
                    );
                }
            }
            if let Some(r) = o.reason {
                let _ = write!(
                    h,
                    "<p class=\"reason\">{}: {}</p>",
                    esc(t("reason", lang)),
                    esc(r)
                );
            }
            h.push_str("</li>\n");
        }
        h.push_str("</ul>");
        for a in &d.advice {
            let _ = write!(
                h,
                "<p class=\"advice\">※ {}: {}</p>",
                esc(ui("advice", lang)),
                esc(a)
            );
        }
        h.push_str("</section>\n");
    }
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

/// The room's score as the page's header says it.
pub fn room_score(board: &Scoreboard) -> String {
    match board.score.percent {
        Some(p) => format!(
            "{}/{} ({}%)",
            board.score.passed_weight,
            board.score.counted_weight,
            percent(p)
        ),
        None => ui("not-graded", board.lang).to_string(),
    }
}

fn data(board: &Scoreboard, embedded: bool) -> Data<'_> {
    let lang = board.lang;
    let statuses = [
        Status::Pass,
        Status::Fail,
        Status::Pending,
        Status::Skipped,
        Status::Error,
    ];
    let cells = PageCells { board, embedded };
    Data {
        ui: Ui {
            expected: ui("expected", lang),
            found: ui("found", lang),
            hint: ui("hint", lang),
            reason: t("reason", lang),
            advice: ui("advice", lang),
            score: ui("score", lang),
            not_graded: ui("not-graded", lang),
            status: statuses.map(|s| (s.as_str(), ui(s.as_str(), lang))),
        },
        labs: board
            .labs
            .iter()
            .map(|c| LabData {
                id: &c.lab.id,
                number: c.lab.number,
                title: &c.lab.title,
            })
            .collect(),
        cells,
    }
}

/// The whole page.
pub fn render(board: &Scoreboard) -> String {
    render_page(board, None)
}

/// The page `grade --serve` serves: the file's page, allowed to connect back to its own
/// server for updates and a cell's details, with a status line and the script that applies
/// them. The board may be an outline: the page embeds no cell's details.
pub fn render_live(board: &Scoreboard, live: &Live<'_>) -> String {
    render_page(board, Some(live))
}

fn render_page(board: &Scoreboard, live: Option<&Live<'_>>) -> String {
    let lang = board.lang;
    // A served page may open one connection: back to the server that served it.
    let connect = if live.is_some() {
        "; connect-src 'self'"
    } else {
        ""
    };
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:{connect}\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        lang.code(),
        esc(t("title", lang))
    );
    let _ = writeln!(h, "<header><h1>{}</h1>", esc(t("title", lang)));
    let room_score = room_score(board);
    let _ = writeln!(
        h,
        "<p class=\"meta\"><span>{}: <b id=\"room-score\">{}</b></span> <span>{}: {} ({})</span> <span>{}: <time>{}</time></span></p>",
        esc(t("room", lang)),
        esc(&room_score),
        esc(t("source", lang)),
        esc(board.source.kind),
        esc(&board.source.detail),
        esc(t("graded-at", lang)),
        esc(&board.graded_at)
    );
    if let Some(live) = live {
        super::live_page::status_line(&mut h, board, live);
    }
    let _ = writeln!(h, "<p class=\"help\">{}</p></header>", esc(t("help", lang)));

    // The heatmap.
    h.push_str("<main>\n<div class=\"scroll\"><table id=\"heatmap\">\n<thead><tr>");
    let _ = write!(
        h,
        "<th scope=\"col\" data-key=\"learner\" aria-sort=\"ascending\"><button type=\"button\" title=\"{} {}\">{}</button></th>",
        esc(t("sort", lang)),
        esc(t("learner", lang)),
        esc(t("learner", lang))
    );
    for c in &board.labs {
        let _ = write!(
            h,
            "<th scope=\"col\" data-key=\"lab:{}\" aria-sort=\"none\"><button type=\"button\" title=\"{}\"><span class=\"num\">{}</span> {}</button></th>",
            esc(&c.lab.id),
            esc(&c.lab.title),
            c.lab.number,
            esc(&c.lab.id)
        );
    }
    let _ = write!(
        h,
        "<th scope=\"col\" data-key=\"total\" aria-sort=\"none\"><button type=\"button\">{}</button></th></tr></thead>\n<tbody>\n",
        esc(t("total", lang))
    );
    // The heatmap shows marks and scores only: an outline's rows hold them (the details are
    // the page's data, below).
    for r in &board.learners {
        let v = row_view(board, r);
        let _ = write!(
            h,
            "<tr data-learner=\"{}\"><th scope=\"row\" data-value=\"{}\">{}</th>",
            esc(&r.id),
            esc(v.learner),
            esc(v.learner)
        );
        for c in &v.cells {
            let _ = write!(
                h,
                "<td class=\"cell m-{}\" data-cell=\"{}\" data-lab=\"{}\" data-value=\"{}\" data-mark=\"{}\" style=\"background:{}\" tabindex=\"0\" role=\"button\" title=\"{}\">{}</td>",
                c.mark,
                esc(c.id),
                esc(c.lab),
                c.value,
                c.mark,
                c.colour,
                esc(c.title),
                esc(&c.text)
            );
        }
        let _ = writeln!(
            h,
            "<td class=\"total\" data-value=\"{}\">{}</td></tr>",
            v.total_value,
            esc(&v.total_text)
        );
    }
    h.push_str("</tbody></table></div>\n");

    // Legend.
    let _ = write!(h, "<p class=\"legend\">{}: ", esc(t("legend", lang)));
    for m in Mark::ALL {
        let _ = write!(
            h,
            "<span class=\"key\" data-mark=\"{}\" style=\"background:{}\">{} {}</span> ",
            m.as_str(),
            colour(m),
            m.symbol(),
            esc(m.label(lang))
        );
    }
    h.push_str("</p>\n");

    // The detail panel, filled by the script.
    let _ = writeln!(
        h,
        "<section id=\"detail\" aria-live=\"polite\" hidden><button type=\"button\" id=\"close\">{}</button><div id=\"detail-body\"></div></section>",
        esc(t("close", lang))
    );

    // The checks the room fails most.
    let _ = writeln!(
        h,
        "<section id=\"summary\"><h2>{}</h2>",
        esc(t("most-failed", lang))
    );
    if board.most_failed.is_empty() {
        let _ = writeln!(h, "<p>{}</p>", esc(t("none-failed", lang)));
    } else {
        h.push_str("<ol id=\"most-failed\">\n");
        for f in board.most_failed.iter().take(10) {
            let share = if f.counted > 0 {
                f.failed as f64 * 100.0 / f.counted as f64
            } else {
                0.0
            };
            let count = match lang {
                Lang::Ja => format!(
                    "{} {} {} {}",
                    f.counted,
                    t("of", lang),
                    f.failed,
                    t("failing", lang)
                ),
                Lang::En => format!(
                    "{} {} {} {}",
                    f.failed,
                    t("of", lang),
                    f.counted,
                    t("failing", lang)
                ),
            };
            let _ = writeln!(
                h,
                "<li data-check=\"{}\" data-failed=\"{}\"><div class=\"bar\"><span style=\"width:{share:.0}%\"></span></div><b>{}</b> <code>{}</code> {}<br><small>{}</small></li>",
                esc(&f.id),
                f.failed,
                esc(&count),
                esc(&f.id),
                esc(&f.title),
                esc(&f.learners.join(", "))
            );
        }
        h.push_str("</ol>\n");
    }
    h.push_str("</section>\n");
    if !board.notes.is_empty() {
        let _ = writeln!(
            h,
            "<section id=\"notes\"><h2>{}</h2><ul>",
            esc(t("notes", lang))
        );
        for n in &board.notes {
            let _ = writeln!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul></section>\n");
    }
    h.push_str("</main>\n");
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"room-data\">{}</script>",
        script_json(&data(board, live.is_none()))
    );
    let _ = writeln!(h, "<script>{JS}</script>");
    if let Some(live) = live {
        super::live_page::script(&mut h, live, lang);
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// Writes the page so that a reader (a browser refreshing it, `--watch` rewriting it) sees
/// either the old page or the new one, never half of one: a temporary file in the same
/// folder, then a rename over the target.
/// Whether `path` may be replaced by a page: it does not exist, or it is a regular file (not
/// followed through a link). Otherwise what it is (`a symbolic link`, `a device`, …), for the
/// error, in Japanese and English: renaming over a device or a FIFO would replace it with a file.
pub fn check_replaceable(path: &Path) -> Result<(), (&'static str, &'static str)> {
    use std::os::unix::fs::FileTypeExt as _;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let t = meta.file_type();
    if t.is_file() {
        Ok(())
    } else if t.is_symlink() {
        Err(("シンボリックリンク", "a symbolic link"))
    } else if t.is_dir() {
        Err(("フォルダー", "a folder"))
    } else if t.is_fifo() {
        Err(("名前付きパイプ（FIFO）", "a named pipe (FIFO)"))
    } else if t.is_char_device() || t.is_block_device() {
        Err(("デバイス", "a device"))
    } else if t.is_socket() {
        Err(("ソケット", "a socket"))
    } else {
        Err(("通常のファイル以外のもの", "not a regular file"))
    }
}

/// Writes `text` to `path` through a temporary file in the same folder and one rename, so a
/// reader sees the old page or the new one, never half of one. Refuses (`InvalidInput`) a path
/// that is anything but a regular file or nothing ([`check_replaceable`]), checked again just
/// before the rename.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let refuse = |(_, what): (&str, &str)| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file"),
        )
    };
    check_replaceable(path).map_err(refuse)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scoreboard.html".into());
    let existing = existing_file(path)?;
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Some(meta) = &existing {
            if !keep_mode_and_owner(&tmp, meta)? {
                // The page cannot be given the file's owner: replacing it would hand the
                // learner's board to another owner, so it is written into the file itself.
                let _ = std::fs::remove_file(&tmp);
                return write_in_place(path, text);
            }
        }
        check_replaceable(path).map_err(refuse)?;
        // rename(2) replaces the target in one step on the same file system.
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The metadata of the file a page replaces, once it is known the user may write it: a file
/// whose mode gives nobody write access is read-only on purpose and refused even for root
/// (who could), and one the user cannot open for writing is refused, although the folder
/// would let a rename replace it.
fn existing_file(path: &Path) -> std::io::Result<Option<std::fs::Metadata>> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o222 == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("it is read-only (mode {mode:04o}); make it writable (chmod u+w) or name another file"),
        ));
    }
    if let Err(e) = std::fs::OpenOptions::new().write(true).open(path) {
        return Err(std::io::Error::new(
            e.kind(),
            format!("you may not write it ({e}); name a file of your own"),
        ));
    }
    Ok(Some(meta))
}

/// Gives `tmp` the replaced file's mode and owner; false when the owner cannot be given
/// (only root may give a file away).
fn keep_mode_and_owner(tmp: &Path, meta: &std::fs::Metadata) -> std::io::Result<bool> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    std::fs::set_permissions(
        tmp,
        std::fs::Permissions::from_mode(meta.permissions().mode() & 0o7777),
    )?;
    let mine = std::fs::metadata(tmp)?;
    if mine.uid() == meta.uid() && mine.gid() == meta.gid() {
        return Ok(true);
    }
    Ok(std::os::unix::fs::chown(tmp, Some(meta.uid()), Some(meta.gid())).is_ok())
}

/// Overwrites the file itself (its mode and owner stay as they are).
fn write_in_place(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

const CSS: &str = r#"
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI","Hiragino Sans","Noto Sans CJK JP",sans-serif;color:#1d1d1f;background:#fafafa}
body{margin:0;padding:1rem 1.5rem 3rem}
h1{font-size:1.4rem;margin:.2rem 0}
h2{font-size:1.1rem;margin:1.2rem 0 .5rem}
.meta span{margin-right:1.2rem}.meta,.help,.legend{color:#444;font-size:.9rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:separate;border-spacing:2px;font-variant-numeric:tabular-nums}
th,td{padding:.3rem .45rem;white-space:nowrap}
thead th{position:sticky;top:0;background:#fafafa;font-weight:600;font-size:.85rem;vertical-align:bottom;white-space:normal;max-width:6.5rem;text-align:left}
thead th button{all:unset;cursor:pointer}thead th button:focus-visible{outline:2px solid #0b57d0}
thead th[aria-sort=ascending] button::after{content:" \25B2"}thead th[aria-sort=descending] button::after{content:" \25BC"}
.num{color:#666}
tbody th{text-align:left;font-weight:600;background:#fafafa;position:sticky;left:0}
td.cell{text-align:right;cursor:pointer;border-radius:4px;min-width:3.8rem;font-size:.92rem}
td.cell:hover,td.cell:focus-visible{outline:2px solid #333}
td.cell.selected{outline:3px solid #0b57d0}
td.total{text-align:right;font-weight:600;background:#fafafa}
td.total,thead th[data-key=total]{position:sticky;right:0}
.legend .key{display:inline-block;padding:.1rem .4rem;border-radius:4px;margin:.1rem}
#detail{margin-top:1rem;padding:1rem 1.2rem;background:#fff;border:1px solid #ddd;border-radius:8px;position:relative}
#close{position:absolute;right:1rem;top:1rem}
#detail ul{list-style:none;padding:0;margin:.5rem 0}
#detail li{padding:.45rem .6rem;border-left:4px solid #ccc;margin:.35rem 0;background:#fcfcfc}
#detail li.st-pass{border-color:#2e7d32}#detail li.st-fail{border-color:#c62828}
#detail li.st-pending{border-color:#f9a825}#detail li.st-skipped{border-color:#9e9e9e}#detail li.st-error{border-color:#8e24aa}
#detail .status{font-weight:600;margin-right:.5rem}#detail code{color:#555;margin-left:.4rem;font-size:.85em}
#detail .hint{margin:.3rem 0 0;font-weight:500}#detail .ef,#detail .reason{margin:.2rem 0 0;color:#444;font-size:.9rem;white-space:pre-wrap}
#detail .error{color:#8e24aa}
#most-failed li{margin:.45rem 0}
.bar{display:inline-block;width:7rem;height:.6rem;background:#eee;border-radius:3px;margin-right:.6rem;vertical-align:middle}
.bar span{display:block;height:100%;background:#c62828;border-radius:3px}
"#;

const JS: &str = r#"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("room-data").textContent);
  var cells = new Map();
  data.cells.forEach(function (c) { cells.set(c.id, c); });
  var labs = new Map();
  data.labs.forEach(function (l) { labs.set(l.id, l); });
  var statusWord = new Map(data.ui.status);
  var detail = document.getElementById("detail");
  var body = document.getElementById("detail-body");
  var table = document.getElementById("heatmap");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function show(id) {
    var c = cells.get(id);
    if (!c) {
      // A served page has no details embedded: it asks its server, then shows the cell.
      var board = window.trainlabBoard;
      if (board.load) board.load(id, function () { if (cells.has(id)) show(id); });
      return;
    }
    table.querySelectorAll("td.selected").forEach(function (td) { td.classList.remove("selected"); });
    table.querySelectorAll("td[data-cell]").forEach(function (td) {
      if (td.dataset.cell === id) td.classList.add("selected");
    });
    var lab = labs.get(c.lab);
    body.replaceChildren();
    body.append(el("h2", null, c.learner + " \u2014 " + lab.number + " " + lab.title));
    var line = c.mark_label + " \u00b7 " + data.ui.score + ": " + (c.score || data.ui.not_graded);
    if (c.namespace) line += " \u00b7 " + c.namespace;
    body.append(el("p", "cell-score", line));
    if (c.error) body.append(el("p", "error", c.error));
    var ul = el("ul", "outcomes");
    c.outcomes.forEach(function (o) {
      var li = el("li", "o st-" + o.status);
      li.dataset.check = o.check;
      li.dataset.status = o.status;
      li.append(el("span", "status", statusWord.get(o.status) || o.status));
      li.append(el("span", "title", o.title));
      li.append(el("code", null, o.check));
      if (o.expected) li.append(el("p", "ef", data.ui.expected + ": " + o.expected));
      if (o.found) li.append(el("p", "ef", data.ui.found + ": " + o.found));
      if (o.hint) li.append(el("p", "hint", data.ui.hint + ": " + o.hint));
      if (o.reason) li.append(el("p", "reason", data.ui.reason + ": " + o.reason));
      ul.append(li);
    });
    body.append(ul);
    c.advice.forEach(function (a) { body.append(el("p", "advice", "\u203b " + data.ui.advice + ": " + a)); });
    detail.hidden = false;
    detail.dataset.cell = id;
  }

  function value(tr, key) {
    if (key === "learner") return tr.querySelector("th").dataset.value;
    if (key === "total") return Number(tr.querySelector("td.total").dataset.value);
    var lab = key.slice(4);
    var td = Array.prototype.find.call(tr.querySelectorAll("td.cell"), function (d) { return d.dataset.lab === lab; });
    return td ? Number(td.dataset.value) : -1;
  }

  function sort(th) {
    var key = th.dataset.key;
    var next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    if (th.getAttribute("aria-sort") === "none" && key !== "learner") next = "descending";
    table.querySelectorAll("thead th").forEach(function (h) { h.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", next);
    var dir = next === "ascending" ? 1 : -1;
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var va = value(a, key), vb = value(b, key);
      var d = typeof va === "number" ? va - vb : String(va).localeCompare(String(vb));
      if (d === 0) d = value(a, "learner").localeCompare(value(b, "learner"));
      return d * dir;
    });
    rows.forEach(function (r) { tbody.append(r); });
    reveal(th);
  }

  // The sorted column stays in sight: a narrow window scrolls the table, and the column is
  // brought between the sticky learner names and the sticky total.
  function reveal(th) {
    var box = table.parentElement;
    if (box.scrollWidth <= box.clientWidth) return;
    var left = table.querySelector("thead th").getBoundingClientRect().right;
    var right = table.querySelector("thead th[data-key=total]").getBoundingClientRect().left;
    var r = th.getBoundingClientRect();
    if (th.dataset.key === "learner" || th.dataset.key === "total") return;
    if (r.left < left) box.scrollLeft -= left - r.left;
    else if (r.right > right) box.scrollLeft += r.right - right;
  }

  table.addEventListener("click", function (e) {
    var td = e.target.closest("td[data-cell]");
    if (td) { show(td.dataset.cell); return; }
    var th = e.target.closest("th[data-key]");
    if (th) sort(th);
  });
  table.addEventListener("keydown", function (e) {
    if (e.key !== "Enter" && e.key !== " ") return;
    var td = e.target.closest("td[data-cell]");
    if (td) { e.preventDefault(); show(td.dataset.cell); }
  });
  document.getElementById("close").addEventListener("click", function () {
    detail.hidden = true;
    table.querySelectorAll("td.selected").forEach(function (td) { td.classList.remove("selected"); });
  });
  // A served page's updates (report/live_page.rs): details it fetched, and cells that changed
  // (their details are dropped, and asked for again when the cell is open).
  window.trainlabBoard = {
    set: function (list) { list.forEach(function (c) { cells.set(c.id, c); }); },
    forget: function (id) {
      cells.delete(id);
      if (!detail.hidden && detail.dataset.cell === id) show(id);
    }
  };
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_this_module_asks_for_exists_in_both_languages() {
        crate::report::messages::assert_every_word_exists(include_str!("html.rs"), t);
    }

    #[test]
    fn text_is_escaped_and_json_cannot_close_its_script() {
        assert_eq!(esc("<b a=\"x\">&'"), "&lt;b a=&quot;x&quot;&gt;&amp;&#39;");
        let s = script_json(&serde_json::json!({"t": "</script><!--"}));
        assert!(!s.contains('<'), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["t"], "</script><!--");
    }

    #[test]
    fn every_status_has_a_colour_of_its_own() {
        let all: std::collections::HashSet<&str> = Mark::ALL.iter().map(|m| colour(*m)).collect();
        assert_eq!(all.len(), Mark::ALL.len());
    }

    #[test]
    fn a_page_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("room.html");
        write_atomically(&p, "one").unwrap();
        write_atomically(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
    }
}
