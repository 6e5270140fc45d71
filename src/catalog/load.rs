//! Loading lab folders, from the copy embedded at build time or from `--labs-dir`, and validating
//! them. Every error names the file, the field (or line) and what was expected.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use include_dir::{include_dir, Dir};

use super::model::{Lab, LabStatus};
use crate::text::{placeholders, Text};

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/labs");

/// Profiles a lab may carry parameters for.
pub const PROFILES: &[&str] = &["kind", "eks"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Dotted path of the offending field (`quiz.choices.A.en`), when known.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for LabError {}

impl LabError {
    fn new(file: &str, field: Option<&str>, message: impl Into<String>) -> Self {
        LabError {
            file: file.to_string(),
            line: None,
            column: None,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }
}

/// How a lab file names a fact of the cluster it runs on (`${site.zone}`, `facts::site`).
pub use crate::facts::site::TOKEN_OPEN as SITE_TOKEN;

/// What fills the `${site.KEY}` tokens of a lab's files. `profile::site::SiteValues` is the one
/// every command uses (implemented in `ops::manifests`, a layer that sees both); [`AsWritten`]
/// leaves them as they are, for what only prints a lab.
pub trait SiteFill {
    type Error;
    /// `text` (the file `origin`) with every token filled, or why one cannot be.
    fn fill(&self, text: &str, origin: &str) -> Result<String, Self::Error>;
}

/// Leaves every `${site.KEY}` as written (`show`, which reads no site file).
#[derive(Debug, Clone, Copy, Default)]
pub struct AsWritten;

impl SiteFill for AsWritten {
    type Error = LabError;
    fn fill(&self, text: &str, _origin: &str) -> Result<String, LabError> {
        Ok(text.to_string())
    }
}

/// A lab file plus the files around it (`starter/`, `solution/`, the draft), keyed by their path
/// relative to the lab folder with `/` separators.
#[derive(Debug, Clone)]
pub struct LabBundle {
    /// Shared: every graded copy of the lab (a room grades it once per learner) points here.
    pub lab: std::sync::Arc<Lab>,
    /// Where the lab came from, for messages: `labs/09-volcano-gang` (embedded) or a real path.
    pub origin: String,
    pub files: BTreeMap<String, String>,
}

impl LabBundle {
    /// Files under a sub-folder (`starter`, `solution`), in name order.
    pub fn files_under(&self, folder: &str) -> Vec<(&str, &str)> {
        let prefix = format!("{folder}/");
        self.files
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| k.ends_with(".yaml") || k.ends_with(".yml") || k.ends_with(".json"))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// A folder as one profile sees it: `solution/` (or `starter/`) with the profile's overlay
    /// `solution-<profile>/` laid over it. An overlay file replaces the base file of the same
    /// name; base files without one are shared by every profile. The kind profile has no
    /// overlay today, so it gets the base folder as it is.
    ///
    /// The text is as written: `${site.KEY}` tokens are still in it. Everything that applies,
    /// grades or prints a lab's files reads [`LabBundle::files_for`], which renders them.
    pub fn raw_files_for(&self, folder: &str, profile: &str) -> Vec<(&str, &str)> {
        let overlay = self.files_under(&format!("{folder}-{profile}"));
        let replaced: BTreeSet<&str> = overlay.iter().map(|(k, _)| file_name(k)).collect();
        let mut files: Vec<(&str, &str)> = self
            .files_under(folder)
            .into_iter()
            .filter(|(k, _)| !replaced.contains(file_name(k)))
            .chain(overlay)
            .collect();
        // One order whichever folder a file comes from: the same apply order on both profiles.
        files.sort_by(|a, b| file_name(a.0).cmp(file_name(b.0)).then(a.0.cmp(b.0)));
        files
    }

    /// [`LabBundle::raw_files_for`] with every `${site.KEY}` filled by `site`: the site values a
    /// command resolved (`profile::site::SiteValues`: kind's stand-ins on the kind profile, the
    /// cluster's site file and `--param` on EKS), whose refusal names the file and the `--param`
    /// that gives a missing value, so no placeholder ever leaves this function.
    pub fn files_for<F: SiteFill>(
        &self,
        folder: &str,
        profile: &str,
        site: &F,
    ) -> Result<Vec<(&str, String)>, F::Error> {
        self.raw_files_for(folder, profile)
            .into_iter()
            .map(|(rel, text)| Ok((rel, site.fill(text, &self.path_of(rel))?)))
            .collect()
    }

    /// Whether a profile has its own overlay of `folder` (`solution-eks/`).
    pub fn has_overlay(&self, folder: &str, profile: &str) -> bool {
        !self.files_under(&format!("{folder}-{profile}")).is_empty()
    }

    pub fn path_of(&self, rel: &str) -> String {
        format!("{}/{}", self.origin, rel)
    }

    /// The draft `start` writes in `lang` (its path in the bundle and its text): under ja the
    /// Japanese variant ([`draft_ja_path`]), which `lint` requires and keeps equal to the
    /// draft apart from its comments.
    pub fn draft_in(&self, rel: &str, lang: crate::text::Lang) -> Option<(String, &str)> {
        let ja = draft_ja_path(rel);
        let chosen = match lang {
            crate::text::Lang::Ja if self.files.contains_key(&ja) => ja,
            _ => rel.to_string(),
        };
        let text = self.files.get(&chosen)?;
        Some((chosen, text.as_str()))
    }
}

/// Where a draft's Japanese variant lives: `draft/gang-train.yaml` → `draft-ja/gang-train.yaml`
/// (the same YAML, its comments in Japanese). A folder of its own keeps it out of everything
/// that reads `draft/` as the learner's files.
pub fn draft_ja_path(rel: &str) -> String {
    match rel.split_once('/') {
        Some((dir, rest)) => format!("{dir}-ja/{rest}"),
        None => format!("ja/{rel}"),
    }
}

/// The first `starter-*`/`solution-*` folder of a bundle that names no profile
/// (`solution-EKS/`, `solution-gpu/`): its files would silently never be applied.
fn unknown_overlay(b: &LabBundle) -> Option<String> {
    b.files.keys().find_map(|rel| {
        let top = rel.split('/').next()?;
        let (base, profile) = top.split_once('-')?;
        let overlays_a_folder = matches!(base, "starter" | "solution") && rel.contains('/');
        (overlays_a_folder && !PROFILES.contains(&profile)).then(|| top.to_string())
    })
}

/// Why a path written in a lab file could leave the folder it is relative to (the lab folder
/// for `draft`, the learner's working folder for `draft_as`): absolute, `..`, or empty. None
/// when it stays inside.
fn leaves_its_folder(path: &str) -> Option<String> {
    use std::path::Component;
    let p = Path::new(path);
    if path.trim().is_empty() {
        return Some("expected a relative file path, found an empty one".into());
    }
    if p.is_absolute() || path.starts_with('~') {
        return Some(format!(
            "expected a path relative to its folder, found the absolute path `{path}`"
        ));
    }
    p.components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| format!("`{path}` leaves its folder (`..`): expected a path inside it"))
}

/// The last segment of a bundle path (`solution-eks/job.yaml` → `job.yaml`).
fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// A labs folder as `lint` reads it: what loads, every error, and what was passed over.
#[derive(Debug)]
pub struct Survey {
    pub catalog: Catalog,
    pub errors: Vec<LabError>,
    /// One line per sub-folder that is not a lab folder, saying so.
    pub skipped: Vec<String>,
}

/// All labs, sorted by number.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub labs: Vec<LabBundle>,
}

impl Catalog {
    /// The labs compiled into the binary.
    pub fn embedded() -> Result<Catalog, LabError> {
        let mut raw = Vec::new();
        for dir in EMBEDDED.dirs() {
            let folder = dir.path().to_string_lossy().to_string();
            if !is_lab_folder(&folder) {
                continue;
            }
            let mut files = BTreeMap::new();
            collect_embedded(dir, dir.path(), &mut files);
            raw.push((folder, files));
        }
        Catalog::from_raw(raw, "labs")
    }

    /// Labs from a folder on disk (`--labs-dir`), for lab authors.
    pub fn from_dir(root: &Path) -> Result<Catalog, LabError> {
        let survey = Catalog::survey_dir(root)?;
        match survey.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(survey.catalog),
        }
    }

    /// Every lab of a folder on disk with every problem found, not only the first, and the
    /// sub-folders passed over with why (`trainlab lint --labs-dir`). Errs only when the folder
    /// itself cannot be read or holds no lab folder at all.
    pub fn survey_dir(root: &Path) -> Result<Survey, LabError> {
        let shown = root.display().to_string();
        let entries = std::fs::read_dir(root).map_err(|e| {
            LabError::new(&shown, None, format!("cannot read the labs folder: {e}"))
        })?;
        let mut raw = Vec::new();
        let mut skipped = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| LabError::new(&shown, None, e.to_string()))?;
            let folder = entry.file_name().to_string_lossy().to_string();
            if !entry.path().is_dir() {
                continue;
            }
            if !is_lab_folder(&folder) {
                skipped.push(format!(
                    "{shown}/{folder}: passed over: not a lab folder name (expected NN-<id>, e.g. 09-volcano-gang)"
                ));
                continue;
            }
            let mut files = BTreeMap::new();
            collect_disk(&entry.path(), &entry.path(), &mut files)?;
            raw.push((folder, files));
        }
        skipped.sort();
        if raw.is_empty() {
            return Err(LabError::new(
                &shown,
                None,
                "no lab folders found (expected sub-folders named NN-<id> holding lab.yaml)",
            ));
        }
        let (catalog, errors) = Catalog::load_all(raw, &shown);
        Ok(Survey {
            catalog,
            errors,
            skipped,
        })
    }

    /// Labs from (folder name, files by relative path) pairs, validated as [`Catalog::from_dir`]
    /// validates them; `root` names them in messages. Public for the fuzz targets (fuzz/).
    pub fn from_raw(
        raw: Vec<(String, BTreeMap<String, String>)>,
        root: &str,
    ) -> Result<Catalog, LabError> {
        let (catalog, errors) = Catalog::load_all(raw, root);
        match errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(catalog),
        }
    }

    /// The labs that load, and one error per lab that does not (plus duplicate ids and
    /// numbers), in folder order.
    fn load_all(
        mut raw: Vec<(String, BTreeMap<String, String>)>,
        root: &str,
    ) -> (Catalog, Vec<LabError>) {
        // Deterministic: the first broken lab reported is the same on every filesystem.
        raw.sort_by(|a, b| a.0.cmp(&b.0));
        let mut labs = Vec::new();
        let mut errors = Vec::new();
        for (folder, mut files) in raw {
            let origin = format!("{root}/{folder}");
            let file = format!("{origin}/lab.yaml");
            let Some(text) = files.remove("lab.yaml") else {
                errors.push(LabError::new(&file, None, "missing lab.yaml"));
                continue;
            };
            let lab = match parse_lab(&text, &file) {
                Ok(lab) => lab,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let bundle = LabBundle {
                lab: std::sync::Arc::new(lab),
                origin,
                files,
            };
            match validate(&bundle, &folder) {
                Ok(()) => labs.push(bundle),
                Err(e) => errors.push(e),
            }
        }
        labs.sort_by_key(|b| b.lab.number);
        let mut ids = BTreeSet::new();
        let mut numbers = BTreeSet::new();
        for b in &labs {
            let file = format!("{}/lab.yaml", b.origin);
            if !ids.insert(b.lab.id.clone()) {
                errors.push(LabError::new(
                    &file,
                    Some("id"),
                    format!("duplicate lab id `{}`", b.lab.id),
                ));
            }
            if !numbers.insert(b.lab.number) {
                errors.push(LabError::new(
                    &file,
                    Some("number"),
                    format!("duplicate lab number {}", b.lab.number),
                ));
            }
        }
        (Catalog { labs }, errors)
    }

    /// Finds a lab by number (`9`), id (`volcano-gang`) or folder name (`09-volcano-gang`).
    pub fn find(&self, key: &str) -> Option<&LabBundle> {
        let key = key.trim().trim_end_matches('/');
        let key = key.rsplit('/').next().unwrap_or(key);
        if let Ok(n) = key.parse::<u32>() {
            return self.labs.iter().find(|b| b.lab.number == n);
        }
        self.labs
            .iter()
            .find(|b| b.lab.id == key || b.lab.folder_name() == key)
    }

    /// Like [`Catalog::find`], with an error listing the valid labs.
    pub fn get(&self, key: &str) -> Result<&LabBundle, UnknownLab> {
        self.find(key).ok_or_else(|| {
            let valid: Vec<String> = self
                .labs
                .iter()
                .map(|b| format!("  {:>2}  {}", b.lab.number, b.lab.id))
                .collect();
            let key = super::echo(key, 60);
            let valid = valid.join("\n");
            UnknownLab(Text {
                ja: format!("lab `{key}` はありません。番号、id、フォルダー名のどれかで指定してください。lab の一覧:\n{valid}"),
                en: format!("unknown lab `{key}`; give a number, an id or a folder name. Labs:\n{valid}"),
            })
        })
    }
}

/// A lab key that names no lab, with the valid labs listed in both languages (a usage error at
/// the edge: `crate::Error` converts it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.en)]
pub struct UnknownLab(pub Text);

fn is_lab_folder(name: &str) -> bool {
    let mut parts = name.splitn(2, '-');
    let num = parts.next().unwrap_or("");
    num.len() == 2
        && num.chars().all(|c| c.is_ascii_digit())
        && parts.next().is_some_and(|s| !s.is_empty())
}

fn collect_embedded(dir: &Dir<'_>, base: &Path, out: &mut BTreeMap<String, String>) {
    for f in dir.files() {
        if let (Ok(rel), Some(text)) = (f.path().strip_prefix(base), f.contents_utf8()) {
            out.insert(rel.to_string_lossy().replace('\\', "/"), text.to_string());
        }
    }
    for d in dir.dirs() {
        collect_embedded(d, base, out);
    }
}

fn collect_disk(
    dir: &Path,
    base: &Path,
    out: &mut BTreeMap<String, String>,
) -> Result<(), LabError> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| LabError::new(&shown, None, e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| LabError::new(&shown, None, e.to_string()))?;
        let path = entry.path();
        if path.is_dir() {
            collect_disk(&path, base, out)?;
        } else {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                LabError::new(
                    &path.display().to_string(),
                    None,
                    format!("cannot read: {e}"),
                )
            })?;
            let rel = path.strip_prefix(base).unwrap_or(&path);
            out.insert(rel.to_string_lossy().replace('\\', "/"), text);
        }
    }
    Ok(())
}

/// Parses one lab file; errors carry line, column and the field path.
pub fn parse_lab(text: &str, file: &str) -> Result<Lab, LabError> {
    // `null_as_string`: an empty or `~` value in a text field reads as text, as with serde_yaml.
    let options = serde_saphyr::options! { with_snippet: false, null_as_string: true };
    let mut path = String::new();
    serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_path_to_error::deserialize::<_, Lab>(de).map_err(|e| {
            path = e.path().to_string();
            e.into_inner()
        })
    })
    .map_err(|inner| {
        let (line, column) = inner
            .location()
            .map(|l| (Some(l.line() as usize), Some(l.column() as usize)))
            .unwrap_or((None, None));
        let mut message =
            strip_location(&inner.render_with_formatter(&serde_saphyr::UserMessageFormatter));
        // A message may start with the path; we show it as `field` instead.
        if let Some(rest) = message.strip_prefix(&format!("{path}: ")) {
            message = rest.to_string();
        }
        let known = path != "." && !path.is_empty() && !path.contains('?');
        LabError {
            file: file.to_string(),
            line,
            column,
            field: known.then_some(path),
            message,
        }
    })
}

/// serde-saphyr appends "at line X, column Y" to its messages; we show the location up front instead.
fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn validate(b: &LabBundle, folder: &str) -> Result<(), LabError> {
    let lab = &b.lab;
    let file = format!("{}/lab.yaml", b.origin);
    let err = |field: &str, msg: String| Err(LabError::new(&file, Some(field), msg));

    if !is_kebab(&lab.id) {
        return err(
            "id",
            format!("expected a kebab-case id (a-z, 0-9, -), found `{}`", lab.id),
        );
    }
    if folder != lab.folder_name() {
        return err(
            "id",
            format!(
                "folder `{folder}` does not match number {} and id `{}` (expected folder `{}`)",
                lab.number,
                lab.id,
                lab.folder_name()
            ),
        );
    }
    if !(1..=99).contains(&lab.number) {
        return err("number", format!("expected 1..=99, found {}", lab.number));
    }
    for (field, t) in [
        ("title", &lab.title),
        ("quiz.question", &lab.quiz.question),
        ("quiz.explanation", &lab.quiz.explanation),
    ] {
        if let Some(lang) = blank_lang(t) {
            return err(&format!("{field}.{lang}"), "expected non-empty text".into());
        }
    }
    for c in super::model::Choice::ALL {
        if let Some(lang) = blank_lang(lab.quiz.choices.get(c)) {
            return err(
                &format!("quiz.choices.{}.{lang}", c.letter()),
                "expected non-empty text".into(),
            );
        }
    }
    for (i, n) in lab.notes.iter().enumerate() {
        if n.source.trim().is_empty() {
            return err(
                &format!("notes[{i}].source"),
                "every note needs a source".into(),
            );
        }
    }
    match lab.status {
        LabStatus::QuizOnly => {
            if !lab.checks.is_empty() {
                return err(
                    "checks",
                    "a quiz-only lab has no checks (set `status: gradable`)".into(),
                );
            }
        }
        LabStatus::Gradable => {
            let Some(task) = &lab.task else {
                return err("task", "a gradable lab needs a task".into());
            };
            if lab.checks.is_empty() {
                return err("checks", "a gradable lab needs at least one check".into());
            }
            for profile in task.params.keys() {
                if !PROFILES.contains(&profile.as_str()) {
                    return err(
                        &format!("task.params.{profile}"),
                        format!("unknown profile; expected one of {}", PROFILES.join(", ")),
                    );
                }
            }
            for lang in ["ja", "en"] {
                let text = if lang == "ja" {
                    &task.text.ja
                } else {
                    &task.text.en
                };
                for name in placeholders(text) {
                    for profile in PROFILES {
                        let known = task
                            .params
                            .get(*profile)
                            .is_some_and(|p| p.contains_key(&name));
                        if !known {
                            return err(
                                &format!("task.text.{lang}"),
                                format!("placeholder `{{{name}}}` has no value in task.params.{profile}"),
                            );
                        }
                    }
                }
            }
            for (field, path) in [
                ("task.draft", &task.draft),
                ("task.draft_as", &task.draft_as),
            ] {
                if let Some(why) = path.as_deref().and_then(leaves_its_folder) {
                    return err(field, why);
                }
            }
            if let Some(d) = &task.draft {
                if !b.files.contains_key(d) {
                    return err(
                        "task.draft",
                        format!("file `{d}` not found in the lab folder"),
                    );
                }
            }
            if b.files_under("solution").is_empty() {
                return err(
                    "status",
                    "a gradable lab needs manifests in solution/".into(),
                );
            }
            if let Some(bad) = unknown_overlay(b) {
                return Err(LabError::new(
                    &b.path_of(&bad),
                    None,
                    format!(
                        "`{bad}` is not a folder trainlab reads: a profile overlay is `starter-<profile>/` or `solution-<profile>/` with a profile of {PROFILES:?}"
                    ),
                ));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (i, c) in lab.checks.iter().enumerate() {
        let at = |f: &str| format!("checks[{i}].{f}");
        if !is_kebab(&c.id) {
            return err(
                &at("id"),
                format!("expected a kebab-case id, found `{}`", c.id),
            );
        }
        if !seen.insert(c.id.as_str()) {
            return err(&at("id"), format!("duplicate check id `{}`", c.id));
        }
        // Scores add weights up as u32 (a lab's checks, then a room's learners and labs): a
        // bound keeps every sum exact instead of overflowing (found by fuzzing, issue 15).
        if !(1..=100).contains(&c.weight) {
            return err(
                &at("weight"),
                format!("expected a weight from 1 to 100, found {}", c.weight),
            );
        }
        for cap in &c.capabilities {
            if crate::facts::capabilities::get(cap).is_none() {
                return err(
                    &at("capabilities"),
                    format!(
                        "unknown capability `{cap}`; expected one of {}",
                        crate::facts::capabilities::names().join(", ")
                    ),
                );
            }
        }
        for (f, t) in [("title", &c.title), ("hint", &c.hint)] {
            if let Some(lang) = blank_lang(t) {
                return err(
                    &at(&format!("{f}.{lang}")),
                    "expected non-empty text".into(),
                );
            }
        }
    }
    if let Some(t) = &lab.missing {
        if let Some(lang) = blank_lang(t) {
            return err(&format!("missing.{lang}"), "expected non-empty text".into());
        }
    }
    for (k, t) in lab.advice.iter().chain(lab.messages.iter()) {
        if let Some(lang) = blank_lang(t) {
            return err(&format!("{k}.{lang}"), "expected non-empty text".into());
        }
    }
    Ok(())
}

fn blank_lang(t: &crate::text::Text) -> Option<&'static str> {
    if t.ja.trim().is_empty() {
        Some("ja")
    } else if t.en.trim().is_empty() {
        Some("en")
    } else {
        None
    }
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}
