//! Offline sources: a saved snapshot folder, the learner's manifest files, the embedded demo.

use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};

use super::limits::Limits;
use super::observed::{Observed, SourceKind};
use super::parse::{manifest_files, parse_text};
use super::InputError;

static DEMO: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/manifests/demo");

/// Saved cluster state: every `.yaml`/`.yml`/`.json` under `dir` (Lists, multi-document YAML,
/// JSON, in any mix). Objects unrelated to the labs are kept and simply never asked for.
///
/// A kind of which the snapshot holds no object at all was either never saved or saved empty;
/// only `trainlab snapshot`'s Lists say which (they name the resource they captured), so for
/// any other kind the read answers "not captured" with the command that saves it, instead of a
/// grade built on a missing file.
pub fn snapshot(dir: &Path) -> Result<Observed, InputError> {
    snapshot_within(dir, Limits::default())
}

/// [`snapshot`] within a command's `limits` (`--max-input-mib`, `--max-objects`).
pub fn snapshot_within(dir: &Path, limits: Limits) -> Result<Observed, InputError> {
    let files = manifest_files(dir)?;
    let mut captured = Vec::new();
    let mut objects = Vec::new();
    let mut budget = super::parse::Budget::new(limits);
    for f in &files {
        objects.extend(super::parse::parse_file_within(
            f,
            &mut captured,
            &mut budget,
        )?);
        captured.extend(named_by_file(f));
    }
    let objects = dedupe(objects)?;
    if objects.is_empty() && captured.is_empty() {
        return Err(InputError::Empty {
            path: crate::text::shown_path(dir),
        });
    }
    Ok(
        Observed::offline(SourceKind::Snapshot, crate::text::shown_path(dir), objects)
            .captured(captured),
    )
}

/// The resources a snapshot file is named after (`pods.yaml`, `jobs.batch.volcano.sh.json`):
/// the names `show` advises saving each read as. A file that exists captured its resource even
/// when it holds nothing (`kubectl get pods -o yaml` of an empty namespace, or an empty file).
fn named_by_file(path: &Path) -> Vec<String> {
    let Some(stem) = path.file_name().and_then(|n| n.to_str()).and_then(|n| {
        [".yaml", ".yml", ".json"]
            .iter()
            .find_map(|ext| n.strip_suffix(ext))
    }) else {
        return Vec::new();
    };
    super::kinds::ALL
        .iter()
        .filter(|k| k.plural == stem || k.resource_name() == stem)
        .map(|k| k.resource_name())
        .collect()
}

/// The learner's manifests (static mode): files or folders, within the default limits.
/// `-` stands for standard input, as in `kubectl apply -f -`.
pub fn files(paths: &[PathBuf]) -> Result<Observed, InputError> {
    files_within(paths, Limits::default())
}

/// [`files`] within a command's `limits` (`--max-input-mib`, `--max-objects`).
pub fn files_within(paths: &[PathBuf], limits: Limits) -> Result<Observed, InputError> {
    let mut all = Vec::new();
    let mut from_stdin = Vec::new();
    let mut budget = super::parse::Budget::new(limits);
    for p in paths {
        if p.as_os_str() == STDIN {
            if from_stdin.is_empty() {
                from_stdin = read_stdin(&mut budget)?;
            }
        } else {
            all.extend(manifest_files(p)?);
        }
    }
    let mut objects = read_all(&all, &mut budget)?;
    objects = dedupe(objects.into_iter().chain(from_stdin).collect())?;
    if objects.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| crate::text::shown_path(p)).collect();
        let path = shown.join(", ");
        // Files named one by one (or standard input) were read: they are empty, not missing.
        if paths.iter().all(|p| p.as_os_str() == STDIN || p.is_file()) {
            return Err(InputError::NoObjects { path });
        }
        return Err(InputError::Empty { path });
    }
    let detail: Vec<String> = paths
        .iter()
        .map(|p| {
            if p.as_os_str() == STDIN {
                "standard input".to_string()
            } else {
                crate::text::shown_path(p)
            }
        })
        .collect();
    Ok(Observed::offline(
        SourceKind::Files,
        detail.join(", "),
        objects,
    ))
}

/// The path that names standard input.
const STDIN: &str = "-";

/// Manifests piped in (`kubectl kustomize . | trainlab check 9 --files -`), read with the same
/// bounds as a file.
fn read_stdin(budget: &mut super::parse::Budget) -> Result<Vec<super::Obj>, InputError> {
    let shown = "standard input";
    let text = budget.read(std::io::stdin().lock(), shown)?;
    budget.parse(&text, shown, &mut Vec::new())
}

/// The saved state of a learner half-way through the flagship labs, embedded at build time.
pub fn demo() -> Result<Observed, InputError> {
    let mut objects = Vec::new();
    let mut files: Vec<_> = DEMO.files().collect();
    files.sort_by_key(|f| f.path().to_path_buf());
    for f in files {
        let name = format!("demo/{}", f.path().display());
        let text = f.contents_utf8().ok_or_else(|| InputError::Unreadable {
            path: name.clone(),
            message: "not UTF-8".into(),
        })?;
        objects.extend(parse_text(text, &name)?);
    }
    Ok(Observed::offline(
        SourceKind::Demo,
        "embedded demo state",
        objects,
    ))
}

fn read_all(
    files: &[PathBuf],
    budget: &mut super::parse::Budget,
) -> Result<Vec<super::Obj>, InputError> {
    let mut objects = Vec::new();
    for f in files {
        objects.extend(super::parse::parse_file_within(f, &mut Vec::new(), budget)?);
    }
    dedupe(objects)
}

/// One object per identity. The same object saved twice (`kubectl get pods -A` and `-n NS` in
/// one folder) is kept once: same uid, same resourceVersion, or the same content. Two different
/// objects with one identity (`gang-train.yaml` and `gang-train.orig.yaml`) are bad input naming
/// both places: grading either one silently would be a guess.
///
/// Identity is (group, kind, namespace after defaulting, name). A manifest without
/// `metadata.namespace` lands in the namespace it is applied to, so it is the same object as one
/// that names that namespace: `kubectl apply -n NS` of both keeps whichever comes last (or refuses
/// the one naming another namespace). Either way two such objects that differ in more than the
/// namespace field are bad input, whatever order the files come in.
pub fn dedupe(objects: Vec<super::Obj>) -> Result<Vec<super::Obj>, InputError> {
    use std::collections::HashMap;
    type Key = (String, String, String);
    let mut seen: HashMap<(Key, Option<String>), usize> = HashMap::new();
    // Every namespace (None: implicit) each (group, kind, name) was seen with, and where.
    let mut by_name: HashMap<Key, Vec<(Option<String>, usize)>> = HashMap::new();
    let mut out: Vec<super::Obj> = Vec::with_capacity(objects.len());
    for o in objects {
        let name = o.name();
        if name.is_empty() {
            out.push(o);
            continue;
        }
        let group = o
            .api_version()
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
            .to_string();
        let key: Key = (group, o.kind().to_string(), name.to_string());
        let namespace = o.namespace().map(str::to_string);
        if let Some(&i) = seen.get(&(key.clone(), namespace.clone())) {
            let first = &out[i];
            let same = |f: &str| {
                let a = first.value["metadata"][f].as_str();
                a.is_some() && a == o.value["metadata"][f].as_str()
            };
            if same("uid") || same("resourceVersion") || first.value == o.value {
                continue;
            }
            return Err(duplicate(first, &o));
        }
        // One with its namespace implicit against one that names a namespace: the same object
        // once defaulted, unless only the namespace field tells them apart.
        let others = by_name.get(&key).cloned().unwrap_or_default();
        let mut kept_already = false;
        for (their_ns, i) in others {
            if their_ns.is_some() == namespace.is_some() {
                continue;
            }
            if without_namespace(&out[i]) != without_namespace(&o) {
                return Err(duplicate(&out[i], &o));
            }
            kept_already = true;
        }
        if kept_already {
            continue;
        }
        seen.insert((key.clone(), namespace.clone()), out.len());
        by_name.entry(key).or_default().push((namespace, out.len()));
        out.push(o);
    }
    Ok(out)
}

/// An object's content with `metadata.namespace` taken out.
fn without_namespace(o: &super::Obj) -> serde_json::Value {
    let mut v = o.value.as_ref().clone();
    if let Some(meta) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("namespace");
    }
    v
}

/// The error for two different objects with one identity, naming both places.
fn duplicate(first: &super::Obj, second: &super::Obj) -> InputError {
    let ns = second
        .namespace()
        .or(first.namespace())
        .map(|n| format!("{n}/"))
        .unwrap_or_default();
    InputError::Duplicate {
        object: format!("{} {ns}{}", second.kind(), second.name()),
        first: first.origin.to_string(),
        second: second.origin.to_string(),
    }
}
