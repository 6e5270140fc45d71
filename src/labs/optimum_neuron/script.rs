//! The script a container's commands run, and its text when the manifests hold it: inline code
//! (`python -c CODE`), a here-document (`python - <<EOF`), or a file under a ConfigMap volume of
//! the pod. A file baked into the image is *unseen*: the grader cannot read it. A script may
//! also come from a repository the command clones first (`git clone … && torchrun repo/x.py`):
//! [`git_clones`] says where each clone lands, so a verifier can name the repository a script
//! comes from even though it cannot read it.

use k8s_openapi::api::core::v1::{Container, PodSpec};

use crate::observe::{Obj, Unavailable};
use crate::verify::kit::cmdline::{invocations, Invocation, LauncherCommand, ShellError};
use crate::verify::kit::k8s::mounts::{absolute, clean, config_map_at, config_map_file};

/// What one command's script is, as far as the manifests show.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    Read {
        /// `python -c`, `-` (standard input) or the file's absolute path.
        script: String,
        /// Where the text came from, for found values: the script, or
        /// `/opt/train/finetune.py (ConfigMap finetune, key finetune.py)`.
        origin: String,
        text: String,
    },
    /// A file the manifests do not show (in the image, or in a ConfigMap that is not there).
    Unseen { script: String },
    /// The file is under a ConfigMap volume, and ConfigMaps could not be read.
    Unavailable(Unavailable),
}

/// One command of the container that starts a recognised program.
#[derive(Debug, Clone)]
pub struct Run {
    /// The launchers, outermost first (`torchrun`, `python`, `optimum-cli`, …).
    pub launchers: Vec<LauncherCommand>,
    /// The script the last launcher runs; None for a module (`python -m`), or a launcher with
    /// no script of its own (`optimum-cli`).
    pub script: Option<Script>,
}

/// Every command of the container that starts a recognised program, in order. An error when
/// its shell script cannot be split (the shell would refuse it too).
pub fn runs(
    spec: &PodSpec,
    c: &Container,
    config_maps: &Result<Vec<&Obj>, Unavailable>,
) -> Result<Vec<Run>, ShellError> {
    let mut out = Vec::new();
    for inv in invocations(c)? {
        let launchers = LauncherCommand::chain(&inv.expanded);
        let Some(last) = launchers.last() else {
            continue;
        };
        let read = |script: &str, text: Option<&String>| Script::Read {
            script: script.to_string(),
            origin: script.to_string(),
            text: text.cloned().unwrap_or_default(),
        };
        let script = match (last, last.entry()) {
            (LauncherCommand::Python(p), _) if p.code.is_some() => {
                Some(read("python -c", p.code.as_ref()))
            }
            (_, Some(e)) if e.script == "-" => Some(read("-", inv.heredoc.as_ref())),
            (_, Some(e)) if !e.module => {
                let path = resolve_in(&e.script, inv.cwd.as_deref(), c);
                Some(file(&path, spec, c, config_maps))
            }
            _ => None,
        };
        out.push(Run { launchers, script });
    }
    Ok(out)
}

/// A file the command runs, read from the ConfigMap volume it lies under.
fn file(
    path: &str,
    spec: &PodSpec,
    c: &Container,
    config_maps: &Result<Vec<&Obj>, Unavailable>,
) -> Script {
    let unseen = || Script::Unseen {
        script: path.to_string(),
    };
    match config_maps {
        Ok(cms) => match config_map_file(path, spec, c, cms) {
            Some((cm, key, text)) => Script::Read {
                script: path.to_string(),
                origin: format!("{path} (ConfigMap {cm}, key {key})"),
                text,
            },
            None => unseen(),
        },
        Err(why) if config_map_at(path, spec, c).is_some() => Script::Unavailable(why.clone()),
        Err(_) => unseen(),
    }
}

/// A relative script path is relative to the container's `workingDir`, else the image's, which
/// the manifest does not show: `/` is assumed (the default of most training images).
pub fn resolve(script: &str, c: &Container) -> String {
    absolute(script, c).unwrap_or_else(|| clean(&format!("/{script}")))
}

/// [`resolve`] from the directory a command runs in after the script's `cd`s
/// ([`Invocation::cwd`]), when known.
pub fn resolve_in(script: &str, cwd: Option<&str>, c: &Container) -> String {
    match cwd {
        Some(dir) if !script.starts_with('/') => clean(&format!("{dir}/{script}")),
        _ => resolve(script, c),
    }
}

/// A `git clone` one of a container's commands makes.
#[derive(Debug, Clone, PartialEq)]
pub struct GitClone {
    /// The repository as written (`https://github.com/huggingface/optimum-neuron.git`).
    pub url: String,
    /// `--branch`/`-b` (a branch or a tag), when given.
    pub branch: Option<String>,
    /// The absolute directory it lands in.
    pub dir: String,
}

impl GitClone {
    /// Whether `path` (absolute) lies inside the clone.
    pub fn holds(&self, path: &str) -> bool {
        path.strip_prefix(&self.dir)
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// Options of `git clone [<options>] [--] <repository> [<directory>]` that take their value as
/// the next word (git-clone(1), https://git-scm.com/docs/git-clone); the rest are switches or
/// `--name=value`.
const CLONE_VALUE_OPTIONS: &[&str] = &[
    "-o",
    "--origin",
    "-b",
    "--branch",
    "-u",
    "--upload-pack",
    "--reference",
    "--reference-if-able",
    "--separate-git-dir",
    "--depth",
    "--shallow-since",
    "--shallow-exclude",
    "-j",
    "--jobs",
    "--template",
    "-c",
    "--config",
    "--server-option",
    "--filter",
    "--bundle-uri",
    "--revision",
];

/// git's own options before the subcommand that take the next word (git(1): `-C <path>`,
/// `-c <name>=<value>`, `--git-dir <path>`, …).
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
    "--config-env",
];

/// Every `git clone` the container's commands make, in order (a script the shell cannot split
/// has none).
pub fn git_clones(c: &Container) -> Vec<GitClone> {
    invocations(c)
        .unwrap_or_default()
        .iter()
        .filter_map(|inv| git_clone(inv, c))
        .collect()
}

/// One command as `git clone`: the repository, the branch, and where git puts it. The
/// directory defaults to the "humanish" part of the repository (`…/optimum-neuron.git` →
/// `optimum-neuron`, git-clone(1) `<directory>`), relative to `-C <path>`, else the working
/// directory.
fn git_clone(inv: &Invocation, c: &Container) -> Option<GitClone> {
    if inv.program_name() != Some("git") {
        return None;
    }
    let argv = &inv.expanded;
    let mut words = argv[1..].iter();
    let mut base: Option<String> = None;
    loop {
        let w = words.next()?;
        if w == "clone" {
            break;
        }
        if !w.starts_with('-') {
            return None;
        }
        if GIT_VALUE_OPTIONS.contains(&w.as_str()) {
            let v = words.next()?;
            if w == "-C" {
                base = Some(match &base {
                    Some(b) if !v.starts_with('/') => format!("{b}/{v}"),
                    _ => v.clone(),
                });
            }
        }
    }
    let (mut branch, mut positional) = (None, Vec::new());
    let mut options_done = false;
    while let Some(w) = words.next() {
        if options_done || !w.starts_with('-') || w == "-" {
            positional.push(w.clone());
        } else if w == "--" {
            options_done = true;
        } else if CLONE_VALUE_OPTIONS.contains(&w.as_str()) {
            let v = words.next();
            if matches!(w.as_str(), "-b" | "--branch") {
                branch = v.cloned();
            }
        } else if let Some(v) = w.strip_prefix("--branch=") {
            branch = Some(v.to_string());
        }
    }
    let url = positional.first()?.clone();
    let dir = positional.get(1).cloned().unwrap_or_else(|| humanish(&url));
    let cwd = inv.cwd.as_deref();
    let dir = match (dir.starts_with('/'), base) {
        (true, _) => clean(&dir),
        (false, Some(b)) => resolve_in(&format!("{b}/{dir}"), cwd, c),
        (false, None) => resolve_in(&dir, cwd, c),
    };
    Some(GitClone { url, branch, dir })
}

/// The directory name git picks for a repository: its last path part without `.git`.
fn humanish(url: &str) -> String {
    let trimmed = url.trim_end_matches('/').trim_end_matches("/.git");
    let last = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    last.strip_suffix(".git").unwrap_or(last).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;

    fn container(v: serde_json::Value) -> Container {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn relative_scripts_resolve_against_the_working_dir() {
        let mut c = container(serde_json::json!({"name": "c"}));
        assert_eq!(resolve("train.py", &c), "/train.py");
        c.working_dir = Some("/opt/train/".into());
        assert_eq!(resolve("./train.py", &c), "/opt/train/train.py");
        assert_eq!(resolve("../x/train.py", &c), "/opt/x/train.py");
        assert_eq!(resolve("/x/train.py", &c), "/x/train.py");
    }

    #[test]
    fn inline_code_a_heredoc_and_a_configmap_file_are_read() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [],
            "volumes": [{"name": "code", "configMap": {"name": "finetune"}}]
        }))
        .unwrap();
        let c = container(serde_json::json!({
            "name": "train",
            "workingDir": "/opt/train",
            "volumeMounts": [{"name": "code", "mountPath": "/opt/train"}],
            "command": ["bash", "-c",
                "pip install x && python -c 'import os' && python - <<EOF\nprint(1)\nEOF\n\
                 torchrun --nproc_per_node 2 finetune.py --bf16\npython baked.py\npython -m mod"]
        }));
        let cm = Obj::new(
            serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "finetune", "namespace": "ns"},
                "data": {"finetune.py": "from optimum.neuron import NeuronTrainer\n"}
            }),
            Origin::Live,
        )
        .unwrap();
        let runs = runs(&spec, &c, &Ok(vec![&cm])).unwrap();
        let scripts: Vec<Option<Script>> = runs.iter().map(|r| r.script.clone()).collect();
        let read = |s: &str, o: &str, t: &str| {
            Some(Script::Read {
                script: s.into(),
                origin: o.into(),
                text: t.into(),
            })
        };
        assert_eq!(
            scripts,
            [
                // `pip install` starts no recognised program: no run.
                read("python -c", "python -c", "import os"),
                read("-", "-", "print(1)\n"),
                read(
                    "/opt/train/finetune.py",
                    "/opt/train/finetune.py (ConfigMap finetune, key finetune.py)",
                    "from optimum.neuron import NeuronTrainer\n"
                ),
                Some(Script::Unseen {
                    script: "/opt/train/baked.py".into()
                }),
                None,
            ]
        );
        assert!(matches!(runs[2].launchers[0], LauncherCommand::Torchrun(_)));
    }

    #[test]
    fn an_unreadable_configmap_is_unavailable_only_for_files_under_one() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [],
            "volumes": [{"name": "code", "configMap": {"name": "finetune"}}]
        }))
        .unwrap();
        let c = container(serde_json::json!({
            "name": "train",
            "volumeMounts": [{"name": "code", "mountPath": "/code"}],
            "command": ["sh", "-c", "python /code/a.py; python /image/b.py"]
        }));
        let why = Unavailable::Failed {
            message: "timeout".into(),
        };
        let runs = runs(&spec, &c, &Err(why.clone())).unwrap();
        assert_eq!(runs[0].script, Some(Script::Unavailable(why)));
        assert_eq!(
            runs[1].script,
            Some(Script::Unseen {
                script: "/image/b.py".into()
            })
        );
        // A script the shell cannot split is an error, not an empty list.
        let bad = container(serde_json::json!({
            "name": "t", "command": ["sh", "-c", "python 'unclosed"]
        }));
        assert!(runs_of(&bad).is_err());
    }

    #[test]
    fn git_clones_land_in_the_named_or_humanish_directory() {
        let c = container(serde_json::json!({
            "name": "t",
            "workingDir": "/workspace",
            "command": ["bash", "-c",
                "git clone --depth 1 --branch v0.4.5 https://github.com/huggingface/optimum-neuron.git\n\
                 git -C /opt clone -q git@github.com:org/tools tools-src\n\
                 git clone https://example.com/a/b/ /abs/dest\n\
                 git status\n\
                 pip install x"]
        }));
        let clones = git_clones(&c);
        let got: Vec<(&str, Option<&str>, &str)> = clones
            .iter()
            .map(|g| (g.url.as_str(), g.branch.as_deref(), g.dir.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "https://github.com/huggingface/optimum-neuron.git",
                    Some("v0.4.5"),
                    "/workspace/optimum-neuron"
                ),
                ("git@github.com:org/tools", None, "/opt/tools-src"),
                ("https://example.com/a/b/", None, "/abs/dest"),
            ]
        );
        assert!(clones[0].holds("/workspace/optimum-neuron/examples/training/qwen3/x.py"));
        assert!(!clones[0].holds("/workspace/optimum-neuron-other/x.py"));
        assert!(!clones[0].holds("/workspace/optimum-neuron"));
        // `--branch=<name>` spelled inline, `--` before the repository.
        let c = container(serde_json::json!({
            "name": "t",
            "command": ["git", "clone", "--branch=v1", "--", "https://h/x.git"]
        }));
        let g = &git_clones(&c)[0];
        assert_eq!((g.branch.as_deref(), g.dir.as_str()), (Some("v1"), "/x"));
    }

    fn runs_of(c: &Container) -> Result<Vec<Run>, ShellError> {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({"containers": []})).unwrap();
        runs(&spec, c, &Ok(vec![]))
    }
}
