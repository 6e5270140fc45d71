//! Offline sources: a saved snapshot folder, the learner's manifest files, the embedded demo.

use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};

use super::observed::{Observed, SourceKind};
use super::parse::{manifest_files, parse_file, parse_text};
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
    let files = manifest_files(dir)?;
    let mut captured = Vec::new();
    let mut objects = Vec::new();
    for f in &files {
        objects.extend(super::parse::parse_file_marked(f, &mut captured)?);
        captured.extend(named_by_file(f));
    }
    let objects = dedupe(objects)?;
    if objects.is_empty() && captured.is_empty() {
        return Err(InputError::Empty {
            path: dir.display().to_string(),
        });
    }
    Ok(
        Observed::offline(SourceKind::Snapshot, dir.display().to_string(), objects)
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

/// The learner's manifests (static mode): files or folders.
/// `-` stands for standard input, as in `kubectl apply -f -`.
pub fn files(paths: &[PathBuf]) -> Result<Observed, InputError> {
    let mut all = Vec::new();
    let mut from_stdin = Vec::new();
    for p in paths {
        if p.as_os_str() == STDIN {
            if from_stdin.is_empty() {
                from_stdin = read_stdin()?;
            }
        } else {
            all.extend(manifest_files(p)?);
        }
    }
    let mut objects = read_all(&all)?;
    objects = dedupe(objects.into_iter().chain(from_stdin).collect())?;
    if objects.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(InputError::Empty {
            path: shown.join(", "),
        });
    }
    let detail: Vec<String> = paths
        .iter()
        .map(|p| {
            if p.as_os_str() == STDIN {
                "standard input".to_string()
            } else {
                p.display().to_string()
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
fn read_stdin() -> Result<Vec<super::Obj>, InputError> {
    let text =
        super::parse::read_text_bounded(std::io::stdin().lock(), super::limits::max_input_bytes())
            .map_err(|message| InputError::Unreadable {
                path: "standard input".into(),
                message,
            })?;
    parse_text(&text, "standard input")
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

fn read_all(files: &[PathBuf]) -> Result<Vec<super::Obj>, InputError> {
    let mut objects = Vec::new();
    for f in files {
        objects.extend(parse_file(f)?);
    }
    dedupe(objects)
}

/// One object per identity. The same object saved twice (`kubectl get pods -A` and `-n NS` in
/// one folder) is kept once: same uid, same resourceVersion, or the same content. Two different
/// objects with one identity (`gang-train.yaml` and `gang-train.orig.yaml`) are bad input naming
/// both places: grading either one silently would be a guess.
pub fn dedupe(objects: Vec<super::Obj>) -> Result<Vec<super::Obj>, InputError> {
    use std::collections::HashMap;
    let mut seen: HashMap<(String, String, String, String), usize> = HashMap::new();
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
        let key = (
            group,
            o.kind().to_string(),
            o.namespace().unwrap_or_default().to_string(),
            name.to_string(),
        );
        match seen.get(&key) {
            None => {
                seen.insert(key, out.len());
                out.push(o);
            }
            Some(&i) => {
                let first = &out[i];
                let same = |f: &str| {
                    let a = first.value["metadata"][f].as_str();
                    a.is_some() && a == o.value["metadata"][f].as_str()
                };
                if same("uid") || same("resourceVersion") || first.value == o.value {
                    continue;
                }
                return Err(InputError::Duplicate {
                    object: format!(
                        "{} {}{}",
                        o.kind(),
                        o.namespace().map(|n| format!("{n}/")).unwrap_or_default(),
                        name
                    ),
                    first: first.origin.to_string(),
                    second: o.origin.to_string(),
                });
            }
        }
    }
    Ok(out)
}
