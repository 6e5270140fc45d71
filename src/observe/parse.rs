//! Reading Kubernetes objects from files: multi-document YAML, JSON, and `kind: List` wrappers as
//! `kubectl get -o yaml` writes them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::limits::Limits;
use super::object::{Obj, Origin};
use super::InputError;

/// Parses every object in one file's text. `path` is only used for messages.
pub fn parse_text(text: &str, path: &str) -> Result<Vec<Obj>, InputError> {
    parse_marked(text, path, &mut Vec::new(), Limits::default().max_objects)
}

/// [`parse_text`], also collecting the resources that `trainlab snapshot` Lists say they
/// captured (see [`super::save::CAPTURED_FIELD`]).
fn parse_marked(
    text: &str,
    path: &str,
    captured: &mut Vec<String>,
    max_objects: usize,
) -> Result<Vec<Obj>, InputError> {
    let out = parse_all(text, path, captured, max_objects, max_objects)?;
    if out.len() > max_objects {
        return Err(too_many_objects(path, max_objects));
    }
    Ok(out)
}

/// The refusal for input with more objects than `--max-objects` allows.
fn too_many_objects(path: &str, max: usize) -> InputError {
    InputError::Limit {
        path: path.to_string(),
        en: format!("more than {max} objects (documents and List items) in the files together, the most trainlab reads (--max-objects; each costs memory while it is judged)"),
        ja: format!("ファイル全体でオブジェクト（ドキュメントと List の要素）が {max} 個を超えます。trainlab が読む上限です（--max-objects。判定の間、1 個ずつメモリを使います）"),
    }
}

/// Every object of `text`, refusing more than `max_objects` (what is left of `limit`, the
/// `--max-objects` the refusal names).
fn parse_all(
    text: &str,
    path: &str,
    captured: &mut Vec<String>,
    max_objects: usize,
    limit: usize,
) -> Result<Vec<Obj>, InputError> {
    let trimmed = text.trim_start();
    // JSON first when it looks like JSON; YAML (a superset, incl. flow style and `---`
    // separated documents) otherwise or when that fails.
    let json: Option<Value> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        serde_json::from_str(text).ok()
    } else {
        None
    };
    if let Some(value) = json {
        let docs = match value {
            Value::Array(items) => items,
            v => vec![v],
        };
        if docs.len() > max_objects {
            return Err(too_many_objects(path, limit));
        }
        let mut out = Vec::new();
        for (i, v) in docs.into_iter().enumerate() {
            push_doc(v, path, i + 1, &mut out, captured)?;
        }
        return Ok(out);
    }
    let starts = document_starts(text);
    let docs: Vec<serde_saphyr::Spanned<Value>> =
        serde_saphyr::from_multiple_with_options(text, yaml_options(text.len(), max_objects))
            .map_err(|e| {
                if let Some(refusal) = budget_refusal(&e, path, limit) {
                    return refusal;
                }
                let loc = e.location();
                let line = loc.map(|l| l.line() as usize);
                InputError::Syntax {
                    path: path.to_string(),
                    doc: line.map_or(starts.len().max(1), |l| document_of(&starts, l)),
                    line,
                    column: loc.map(|l| l.column() as usize),
                    message: strip_location(
                        &e.render_with_formatter(&serde_saphyr::UserMessageFormatter),
                    ),
                }
            })?;
    let mut out = Vec::new();
    // Null documents (empty, or a trailing `---`) are skipped by the parser; numbering follows
    // the file's documents, not the ones that hold something.
    for spanned in docs {
        let doc = document_of(&starts, spanned.referenced.line() as usize);
        push_doc(spanned.value, path, doc, &mut out, captured)?;
    }
    Ok(out)
}

/// How files are read with serde-saphyr. Against serde_yaml 0.9 (release build): a 50 MB
/// multi-document kubectl List reads in 3.3-3.8 s vs 2.4-3.4 s (same JSON values, same ~500 MB), an
/// alias bomb stops in ~60 ms with these limits, 10,000-deep nesting fails in 0.3 ms (serde_yaml:
/// 460 ms), and syntax errors point at the opening bracket or quote that is never closed.
///
/// - Limits grow with the input instead of serde-saphyr's fixed defaults (250,000 nodes,
///   1,000,000 events, 1,024 documents), so a large `kubectl get -o yaml` snapshot reads while
///   an alias bomb still stops early: without aliases a file cannot hold more nodes than
///   bytes, so only alias expansion can exceed these budgets.
/// - Nesting stops at 64 levels: the deepest manifest trainlab installs, Volcano's
///   `jobs.batch.volcano.sh` CRD (a whole PodTemplateSpec schema), nests about 33 deep, and
///   10,000 levels must be an error, not a stack overflow (a debug build of serde-saphyr
///   overflows a 2 MiB thread near 85 levels).
/// - Plain scalars resolve as kubectl resolves them (sigs.k8s.io/yaml, `goyaml.v2/resolve.go`):
///   `yes`/`y`/`on` are true and `no`/`n`/`off` false (serde-saphyr's default), and `0644` is
///   octal, 420 (`strconv.ParseInt(s, 0, 64)` there; "YAML accepts both octal and decimal
///   values" for mode bits, k8s.io/api core/v1 `SecretVolumeSource.DefaultMode`).
/// - Messages are plain text: the location is shown by [`InputError::Syntax`].
fn yaml_options(input_len: usize, max_objects: usize) -> serde_saphyr::Options {
    serde_saphyr::options! {
        with_snippet: false,
        legacy_octal_numbers: true,
        budget: serde_saphyr::budget! {
            max_events: 1_000_000 + 2 * input_len,
            max_nodes: 250_000 + input_len,
            max_total_scalar_bytes: 64 * 1024 * 1024 + input_len,
            // Every document is an object (or a List of them): the parser stops at the object
            // limit instead of building a million documents first.
            max_documents: (1_024 + input_len / 4).min(max_objects.saturating_add(1)),
            max_depth: 64,
            flow_nesting_limit: 64,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 100_000 + input_len,
        },
    }
}

/// The line on which each document of a YAML stream starts: a `---` marker line, or the first
/// content line of the stream or after a `...` marker (directives and comments are not
/// content). A line that begins with `---` or `...` followed by a space, a tab or its end is a
/// document marker wherever it appears (YAML 1.2.2, 9.1.4 "Document Markers" and the
/// `c-forbidden` production), so counting them matches the parser for any file it accepts.
fn document_starts(text: &str) -> Vec<usize> {
    let marker = |line: &str, m: &str| {
        line.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
    };
    let mut starts = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        if marker(line, "---") {
            starts.push(i + 1);
            open = true;
        } else if marker(line, "...") {
            open = false;
        } else if !open {
            let content = line.trim_start();
            if !content.is_empty() && !content.starts_with('#') && !line.starts_with('%') {
                starts.push(i + 1);
                open = true;
            }
        }
    }
    starts
}

/// The 1-based number of the document holding `line`.
fn document_of(starts: &[usize], line: usize) -> usize {
    starts.partition_point(|&s| s <= line).max(1)
}

/// How deep Lists may nest in one document (`kubectl get` never nests them; a hand-joined file
/// may, once or twice).
const MAX_LIST_DEPTH: usize = 8;

fn is_list(value: &Value) -> bool {
    value
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && value.get("items").is_some()
}

/// The resource a typed list names (`v1` `PodList` → `pods`), when trainlab knows the kind:
/// `kubectl get pods -o json` of an empty namespace still says what it captured.
fn typed_list_resource(value: &Value) -> Option<String> {
    let kind = value.get("kind")?.as_str()?.strip_suffix("List")?;
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1");
    super::kinds::ALL
        .iter()
        .find(|k| k.matches(api_version, kind))
        .map(|k| k.resource_name())
}

fn push_doc(
    value: Value,
    path: &str,
    doc: usize,
    out: &mut Vec<Obj>,
    captured: &mut Vec<String>,
) -> Result<(), InputError> {
    if is_list(&value) {
        return push_list(&value, path, doc, 1, out, captured);
    }
    let origin = Origin::File {
        path: path.to_string(),
        doc,
        item: None,
    };
    out.push(Obj::new(value, origin)?);
    Ok(())
}

/// A List's items, reading Lists inside it as their items too (up to [`MAX_LIST_DEPTH`]).
fn push_list(
    value: &Value,
    path: &str,
    doc: usize,
    depth: usize,
    out: &mut Vec<Obj>,
    captured: &mut Vec<String>,
) -> Result<(), InputError> {
    if depth > MAX_LIST_DEPTH {
        return Err(InputError::NotAnObject {
            origin: format!(
                "{path}, document {doc} (Lists nested more than {MAX_LIST_DEPTH} deep)"
            ),
        });
    }
    if let Some(r) = value
        .get(super::save::CAPTURED_FIELD)
        .and_then(Value::as_str)
    {
        captured.push(r.to_string());
    }
    captured.extend(typed_list_resource(value));
    let Some(items) = value["items"].as_array() else {
        return Err(InputError::NotAnObject {
            origin: format!("{path}, document {doc} (`items` is not a list)"),
        });
    };
    for (j, item) in items.iter().enumerate() {
        if is_list(item) {
            push_list(item, path, doc, depth + 1, out, captured)?;
            continue;
        }
        let origin = Origin::File {
            path: path.to_string(),
            doc,
            item: Some(j + 1),
        };
        out.push(Obj::new(item.clone(), origin)?);
    }
    Ok(())
}

/// A budget the YAML parser stopped at, said in the user's terms: block nesting is a limit on the
/// file's shape, the document count is `--max-objects`.
fn budget_refusal(e: &serde_saphyr::Error, path: &str, max_objects: usize) -> Option<InputError> {
    use serde_saphyr::budget::BudgetBreach as B;
    let serde_saphyr::Error::Budget { breach, location } = e else {
        return None;
    };
    let at = if location.line() > 0 {
        format!(" (line {})", location.line())
    } else {
        String::new()
    };
    let at_ja = if location.line() > 0 {
        format!("（{} 行目）", location.line())
    } else {
        String::new()
    };
    let limit = |en: String, ja: String| InputError::Limit {
        path: path.to_string(),
        en,
        ja,
    };
    Some(match breach {
        B::Documents { .. } => too_many_objects(path, max_objects),
        B::Depth { .. } => limit(
            format!("nested more than 64 levels deep{at}; Kubernetes manifests nest about 30 levels at most, so this is not one"),
            format!("入れ子が 64 段を超えています{at_ja}。Kubernetes のマニフェストの入れ子は深くても 30 段ほどなので、マニフェストではありません"),
        ),
        // Alias expansion and the like keep the parser's own words ("too large or too complex").
        _ => return None,
    })
}

/// serde-saphyr ends messages with " at line L, column C" (and alias notes after it); the
/// location is shown up front instead.
fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Reads one file from disk.
pub fn parse_file(path: &Path) -> Result<Vec<Obj>, InputError> {
    parse_file_marked(path, &mut Vec::new())
}

/// [`parse_file`], also collecting the resources its Lists say they captured.
pub fn parse_file_marked(path: &Path, captured: &mut Vec<String>) -> Result<Vec<Obj>, InputError> {
    parse_file_within(path, captured, &mut Budget::default())
}

/// What the files of one command may still take: `--max-input-mib` bytes and `--max-objects`
/// objects for all of them together, so three files of 60 MB are refused as one of 180 MB is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    limits: Limits,
    bytes_left: u64,
    objects_left: usize,
}

impl Default for Budget {
    /// The default limits (what lab files and tests read within).
    fn default() -> Self {
        Budget::new(Limits::default())
    }
}

impl Budget {
    /// The whole of one command's `limits`.
    pub fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            bytes_left: limits.max_input_bytes,
            objects_left: limits.max_objects,
        }
    }

    /// Text read from `shown` (a file, standard input) within what is left, which it uses up.
    pub fn read(&mut self, input: impl std::io::Read, shown: &str) -> Result<String, InputError> {
        let first = self.bytes_left == self.limits.max_input_bytes;
        let text = read_text_bounded(input, self.bytes_left).map_err(|e| match e {
            ReadError::TooLarge if first => {
                let mib = self.limits.max_input_mib();
                InputError::Limit {
                    path: shown.to_string(),
                    en: format!("larger than {mib} MiB, the most trainlab reads from one input (raise it with --max-input-mib)"),
                    ja: format!("{mib} MiB を超えています。1 つの入力から読む上限です（--max-input-mib で変えられます）"),
                }
            }
            ReadError::TooLarge => {
                let mib = self.limits.max_input_mib();
                InputError::Limit {
                    path: shown.to_string(),
                    en: format!("the files together are larger than {mib} MiB, the most trainlab reads from one command's files (raise it with --max-input-mib)"),
                    ja: format!("ファイル全体が {mib} MiB を超えます。1 つのコマンドでファイルから読む上限です（--max-input-mib で変えられます）"),
                }
            }
            ReadError::Io(message) => InputError::Unreadable {
                path: shown.to_string(),
                message,
            },
            other => InputError::NotText {
                path: shown.to_string(),
                ja: other.ja(),
                en: other.to_string(),
            },
        })?;
        self.bytes_left = self.bytes_left.saturating_sub(text.len() as u64);
        Ok(text)
    }

    /// Parses `text` within the objects left, which it uses up.
    pub fn parse(
        &mut self,
        text: &str,
        shown: &str,
        captured: &mut Vec<String>,
    ) -> Result<Vec<Obj>, InputError> {
        let limit = self.limits.max_objects;
        let objs = parse_all(text, shown, captured, self.objects_left, limit)?;
        if objs.len() > self.objects_left {
            return Err(too_many_objects(shown, limit));
        }
        self.objects_left -= objs.len();
        Ok(objs)
    }
}

/// [`parse_file_marked`] within a command's [`Budget`].
pub fn parse_file_within(
    path: &Path,
    captured: &mut Vec<String>,
    budget: &mut Budget,
) -> Result<Vec<Obj>, InputError> {
    let shown = crate::text::shown_path(path);
    let file = std::fs::File::open(path).map_err(|e| InputError::Unreadable {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    let text = budget.read(file, &shown)?;
    budget.parse(&text, &shown, captured)
}

/// Why a text input could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(String),
    #[error("binary data, not YAML or JSON (a NUL byte at offset {0})")]
    Binary(usize),
    /// UTF-16 text (Windows editors and PowerShell's `>` write it): trainlab reads UTF-8, as
    /// JSON requires (RFC 8259 §8.1) and every Kubernetes tool writes.
    #[error("UTF-16 text, not UTF-8: save it as UTF-8 (in PowerShell, `Out-File -Encoding utf8`; most editors offer the encoding in their Save As dialog)")]
    Utf16,
    #[error("not UTF-8 text (an invalid byte at offset {0})")]
    NotUtf8(usize),
    /// More than the bound came.
    #[error("larger than the most trainlab reads (raise it with --max-input-mib)")]
    TooLarge,
}

impl ReadError {
    /// The reason in Japanese (the English is its `Display`).
    fn ja(&self) -> String {
        match self {
            ReadError::Io(m) => m.clone(),
            ReadError::Binary(at) => {
                format!("バイナリーデータで、YAML でも JSON でもありません（オフセット {at} に NUL バイト）")
            }
            ReadError::Utf16 => "UTF-16 のテキストで、UTF-8 ではありません。UTF-8 で保存してください（PowerShell なら `Out-File -Encoding utf8`。多くのエディターは「名前を付けて保存」で文字コードを選べます）".to_string(),
            ReadError::NotUtf8(at) => {
                format!("UTF-8 のテキストではありません（オフセット {at} に不正なバイト）")
            }
            ReadError::TooLarge => {
                "trainlab が読む上限を超えています（--max-input-mib で変えられます）".to_string()
            }
        }
    }
}

/// Whether bytes that hold a NUL are UTF-16 text: a byte-order mark (FF FE, FE FF), or ASCII
/// with every other byte zero at the start (UTF-16 without a mark).
fn looks_utf16(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return true;
    }
    let head = &bytes[..bytes.len().min(64) & !1];
    if head.len() < 4 {
        return false;
    }
    let pairs = head.chunks_exact(2);
    let le = pairs
        .clone()
        .all(|p| p[1] == 0 && p[0] != 0 && p[0].is_ascii());
    let be = pairs
        .clone()
        .all(|p| p[0] == 0 && p[1] != 0 && p[1].is_ascii());
    le || be
}

/// A text input, read a block at a time: stops at the first NUL byte (binary data, not YAML or
/// JSON) or once more than `max` bytes came, so a huge or sparse file is never read whole.
pub(crate) fn read_text_bounded(input: impl std::io::Read, max: u64) -> Result<String, ReadError> {
    use std::io::Read as _;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, input).take(max.saturating_add(1));
    let mut bytes = Vec::new();
    let mut block = [0u8; 1 << 16];
    loop {
        let n = reader
            .read(&mut block)
            .map_err(|e| ReadError::Io(e.to_string()))?;
        if n == 0 {
            break;
        }
        if let Some(i) = block[..n].iter().position(|b| *b == 0) {
            let mut head = bytes.clone();
            head.extend_from_slice(&block[..n]);
            if looks_utf16(&head) {
                return Err(ReadError::Utf16);
            }
            return Err(ReadError::Binary(bytes.len() + i));
        }
        bytes.extend_from_slice(&block[..n]);
        if bytes.len() as u64 > max {
            return Err(ReadError::TooLarge);
        }
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))
}

/// The manifest files a path stands for: the file itself, or every `.yaml`/`.yml`/`.json` file
/// in a folder (recursively, in name order). Other files in a folder (READMEs, notes) are ignored.
///
/// Symlinks are followed, but every real folder and file is read once: a link back up the tree
/// (`ln -s .. up`) or to itself would otherwise make the walk endless or count objects many
/// times. A FIFO, socket or device is refused rather than opened, since reading one can block
/// forever.
pub fn manifest_files(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::Unreadable {
        path: crate::text::shown_path(path),
        message: e.to_string(),
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !meta.is_dir() {
        return Err(not_a_file(path, &meta));
    }
    let mut walk = Walk::default();
    walk.dir(path)?;
    walk.files.sort();
    Ok(walk.files)
}

fn not_a_file(path: &Path, meta: &std::fs::Metadata) -> InputError {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let what = if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    };
    InputError::NotAFile {
        path: crate::text::shown_path(path),
        what: what.into(),
    }
}

fn is_manifest(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

#[derive(Default)]
struct Walk {
    /// Canonical paths of the folders and files already taken.
    seen: std::collections::HashSet<PathBuf>,
    files: Vec<PathBuf>,
}

impl Walk {
    fn first_visit(&mut self, p: &Path) -> Result<bool, InputError> {
        let real = std::fs::canonicalize(p).map_err(|e| InputError::Unreadable {
            path: crate::text::shown_path(p),
            message: e.to_string(),
        })?;
        Ok(self.seen.insert(real))
    }

    fn dir(&mut self, dir: &Path) -> Result<(), InputError> {
        if !self.first_visit(dir)? {
            return Ok(());
        }
        let unreadable = |e: std::io::Error| InputError::Unreadable {
            path: crate::text::shown_path(dir),
            message: e.to_string(),
        };
        for entry in std::fs::read_dir(dir).map_err(unreadable)? {
            let p = entry.map_err(unreadable)?.path();
            // `metadata` follows symlinks; a dangling link is only an error when it looks like
            // a manifest (a stale editor lock file is not the learner's problem).
            let meta = match std::fs::metadata(&p) {
                Ok(m) => m,
                Err(_) if !is_manifest(&p) => continue,
                Err(e) => {
                    return Err(InputError::Unreadable {
                        path: crate::text::shown_path(&p),
                        message: e.to_string(),
                    })
                }
            };
            if meta.is_dir() {
                self.dir(&p)?;
            } else if !is_manifest(&p) {
                continue;
            } else if !meta.is_file() {
                return Err(not_a_file(&p, &meta));
            } else if self.first_visit(&p)? {
                self.files.push(p);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_lists_and_skips_empty_documents() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n---\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node}\n";
        let objs = parse_text(text, "s.yaml").unwrap();
        let names: Vec<_> = objs.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["a", "b", "node"]);
        assert_eq!(objs[1].origin.to_string(), "s.yaml, document 1, item 2");
        assert_eq!(objs[2].origin.to_string(), "s.yaml, document 3");
    }

    #[test]
    fn a_list_item_that_is_not_an_object_is_an_error_naming_it() {
        let text =
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod}\n- just a string\n";
        let err = parse_text(text, "s.yaml").unwrap_err().to_string();
        assert!(err.contains("s.yaml, document 1, item 2"), "{err}");
    }

    #[test]
    fn yaml_syntax_errors_name_document_and_line() {
        let text = "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: [Pod\n";
        let err = parse_text(text, "bad.yaml").unwrap_err().to_string();
        assert!(err.starts_with("bad.yaml:"), "{err}");
        assert!(err.contains("document 2"), "{err}");
    }

    fn syntax(text: &str) -> (usize, Option<usize>, Option<usize>, String) {
        match parse_text(text, "f.yaml").unwrap_err() {
            InputError::Syntax {
                doc,
                line,
                column,
                message,
                ..
            } => (doc, line, column, message),
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn documents_are_numbered_as_the_file_has_them() {
        let text = "# a comment before anything\n%YAML 1.2\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n...\n\n---\n---\n# only a comment\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n...\napiVersion: v1\nkind: Node\nmetadata: {name: c}\n";
        let objs = parse_text(text, "s.yaml").unwrap();
        let origins: Vec<String> = objs.iter().map(|o| o.origin.to_string()).collect();
        assert_eq!(
            origins,
            [
                "s.yaml, document 1",
                "s.yaml, document 4",
                "s.yaml, document 5"
            ]
        );
        // A marker needs a space, a tab or the line's end after it; `---x` is content.
        assert_eq!(document_starts("a: 1\n---x: 2\n"), [1]);
        assert_eq!(document_starts("--- {a: 1}\n--- \n---\t\n"), [1, 2, 3]);
    }

    #[test]
    fn syntax_errors_name_the_line_and_column_where_the_problem_starts() {
        let (doc, line, column, message) =
            syntax("apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: [Pod\n");
        assert_eq!((doc, line, column), (2, Some(5), Some(7)));
        assert!(message.contains("unclosed bracket"), "{message}");
        assert!(!message.contains("at line"), "{message}");

        let (doc, line, _, message) = syntax("apiVersion: v1\nkind: Pod\nkind: Job\n");
        assert_eq!((doc, line), (1, Some(3)), "the duplicate, not the mapping");
        assert!(
            message.contains("duplicate mapping key `kind`"),
            "{message}"
        );

        let (_, line, _, message) = syntax("metadata:\n\tname: x\n");
        assert_eq!(line, Some(2));
        assert!(message.contains("tabs"), "{message}");
    }

    #[test]
    fn an_alias_bomb_stops_early_with_an_error() {
        let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        let mut previous = 'a';
        for name in 'b'..='i' {
            let refs = vec![format!("*{previous}"); 9].join(", ");
            text.push_str(&format!("{name}: &{name} [{refs}]\n"));
            previous = name;
        }
        // The parser's own budget stops it (that error), not a clock: no wall-clock bound here.
        let (_, line, _, message) = syntax(&text);
        assert!(line.is_some());
        assert!(message.contains("too large or too complex"), "{message}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let (_, line, _, message) = syntax(&text);
        assert_eq!(line, Some(1));
        assert!(message.contains("recursion limit"), "{message}");
        // Deep but reasonable nesting (CRD schemas) reads.
        let deep = format!(
            "apiVersion: v1\nkind: X\nspec: {}1{}\n",
            "{a: ".repeat(60),
            "}".repeat(60)
        );
        assert_eq!(parse_text(&deep, "ok.yaml").unwrap().len(), 1);
    }

    #[test]
    fn scalars_read_as_kubectl_reads_them() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nspec:\n  mode: 0644\n  hex: 0x1F\n  quoted: \"0644\"\n  flag: true\n  yes_: yes\n  n_: n\n  off_: off\n  text: \"yes\"\n";
        let objs = parse_text(text, "m.yaml").unwrap();
        let spec = &objs[0].value["spec"];
        assert_eq!(
            spec["mode"], 420,
            "YAML 1.1 octal, as kubectl reads defaultMode"
        );
        assert_eq!(spec["hex"], 31);
        assert_eq!(spec["quoted"], "0644");
        assert_eq!(spec["flag"], true);
        assert_eq!(spec["yes_"], true, "kubectl reads `yes` as true");
        assert_eq!(spec["n_"], false);
        assert_eq!(spec["off_"], false);
        assert_eq!(spec["text"], "yes");
        let (_, _, _, message) = syntax("apiVersion: v1\nkind: X\nmetadata: {name: x}\nv: .inf\n");
        assert!(message.contains("not a finite number"), "{message}");
    }

    #[test]
    fn json_lists_parse_like_yaml_ones() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}"#;
        let objs = parse_text(text, "s.json").unwrap();
        assert_eq!(objs[0].name(), "p");
    }
}
