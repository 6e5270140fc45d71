//! The house rules of docs/architecture.md, read from the source so they stay true: the top-level
//! modules form layers that point one way (no module circle), and the kit holds only rules two or
//! more labs use (a rule one lab needs lives in that lab's folder).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules of `src/`, lowest first: each may use only those before it.
const LAYERS: &[&str] = &[
    "text",
    "quantity",
    "exit",
    "observe",
    "facts",
    "catalog",
    "error",
    "interrupt",
    "cluster",
    "verify",
    "labs",
    "profile",
    "results",
    "report",
    "plan",
    "ops",
    "grade",
    "serve",
    "cli",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return out;
    }
    for entry in fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The code of a file without its comments (doc comments name other modules freely).
fn code(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The code before the file's unit tests: what a module needs to work, not to be tested.
fn production_code(path: &Path) -> String {
    let text = code(path);
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path written after `prefix` (`crate::`, `kit::`), expanded over `{a, b::c}` groups:
/// `kit::k8s::{pods, owned}` gives `k8s::pods` and `k8s::owned`.
fn paths_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(is_ident) {
            continue;
        }
        out.extend(expand(rest, String::new()));
    }
    out
}

fn expand(text: &str, base: String) -> Vec<String> {
    let ident: String = text.chars().take_while(|&c| is_ident(c)).collect();
    if !ident.is_empty() {
        let path = if base.is_empty() {
            ident.clone()
        } else {
            format!("{base}::{ident}")
        };
        let rest = &text[ident.len()..];
        return match rest.strip_prefix("::") {
            Some(more) => expand(more, path),
            None => vec![path],
        };
    }
    let Some(group) = text.strip_prefix('{') else {
        return vec![base];
    };
    // Split the group at its top-level commas.
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.extend(item(&group[start..i], &base));
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.extend(item(&group[start..i], &base));
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

fn item(text: &str, base: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() || text == "self" || text.starts_with("self ") {
        return vec![base.to_string()];
    }
    expand(text, base.to_string())
}

/// The top-level module a `crate::` path lands in (`crate::Error` is `error`).
fn top_module(path: &str) -> String {
    let first = path.split("::").next().unwrap();
    match first {
        "Error" => "error".into(),
        "ExitCode" => "exit".into(),
        other => other.into(),
    }
}

#[test]
fn the_top_level_modules_point_one_way() {
    let rank: BTreeMap<&str, usize> = LAYERS.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let mut found = BTreeSet::new();
    let mut upward = Vec::new();
    for entry in fs::read_dir(src()).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        let Some(&own) = rank.get(name.as_str()) else {
            panic!("src/{name} is not in LAYERS (tests/architecture.rs, docs/architecture.md)");
        };
        found.insert(name.clone());
        // Tests count too: a test that reaches up would make a circle the compiler allows.
        for file in rust_files(&p) {
            for used in paths_after(&code(&file), "crate::") {
                let to = top_module(&used);
                if to == name {
                    continue;
                }
                match rank.get(to.as_str()) {
                    Some(&r) if r < own => {}
                    Some(_) => upward.push(format!(
                        "{} uses crate::{used} ({name} → {to})",
                        file.strip_prefix(src()).unwrap().display()
                    )),
                    None => panic!("{}: crate::{used}: unknown module", file.display()),
                }
            }
        }
    }
    let listed: BTreeSet<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    assert_eq!(found, listed, "LAYERS lists exactly the modules of src/");
    assert!(
        upward.is_empty(),
        "a module may use only the layers below it:\n{}",
        upward.join("\n")
    );
}

/// The layers that judge: everything below `cluster` and the verifiers above it. They read what
/// was observed and never a cluster, so they name neither the Kubernetes client nor the async
/// runtime (what a core crate of their own would enforce through its Cargo.toml; the split was
/// measured and not kept: see docs/architecture.md).
const PURE: &[&str] = &[
    "text", "quantity", "exit", "observe", "facts", "catalog", "error", "verify", "labs",
];

#[test]
fn the_judging_layers_name_neither_kube_nor_tokio() {
    let mut found = Vec::new();
    for name in PURE {
        let file = src().join(format!("{name}.rs"));
        let path = if file.exists() {
            file
        } else {
            src().join(name)
        };
        for f in rust_files(&path) {
            // Tests count too: a test that needs a runtime belongs to the layers above.
            let text = code(&f);
            for client in ["kube::", "tokio::"] {
                if !paths_after(&text, client).is_empty() {
                    found.push(format!(
                        "{}: {client}",
                        f.strip_prefix(src()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a judging layer names a client:\n{}",
        found.join("\n")
    );
}

/// A kit module's name as the labs write it: `k8s::pods`, `cmdline` (one unit: its submodules
/// serve each other).
fn kit_unit(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    match parts.as_slice() {
        ["cmdline", ..] => Some("cmdline".into()),
        [group, module, ..] if *group != "cmdline" => Some(format!("{group}::{module}")),
        _ => None,
    }
}

fn kit_units() -> BTreeMap<String, Vec<PathBuf>> {
    let kit = src().join("verify/kit");
    let mut units: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for file in rust_files(&kit) {
        let rel = file.strip_prefix(&kit).unwrap().with_extension("");
        let parts: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let unit = match parts.as_slice() {
            [top] if top == "mod" => continue,
            [top] if top == "cmdline" => "cmdline".to_string(),
            [top, ..] if top == "cmdline" => "cmdline".to_string(),
            [_, m] if m == "mod" => continue,
            // A module that is a folder (`training/parallel/`) is one unit, as `cmdline` is.
            [group, module, ..] => format!("{group}::{module}"),
            other => panic!("unexpected kit file {other:?}"),
        };
        units.entry(unit).or_default().push(file);
    }
    units
}

#[test]
fn every_kit_module_serves_two_labs_or_more() {
    let units = kit_units();
    // Which kit units each unit's own code uses (its tests may use anything).
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (unit, files) in &units {
        let used = uses.entry(unit.clone()).or_default();
        for f in files {
            for p in paths_after(&production_code(f), "kit::") {
                if let Some(u) = kit_unit(&p).filter(|u| u != unit) {
                    used.insert(u);
                }
            }
        }
    }
    // Which labs reach each unit, directly or through other kit units.
    let mut labs_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in fs::read_dir(src().join("labs")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let lab = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut todo: Vec<String> = rust_files(&dir)
            .iter()
            .flat_map(|f| paths_after(&production_code(f), "kit::"))
            .filter_map(|p| kit_unit(&p))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some(u) = todo.pop() {
            if seen.insert(u.clone()) {
                todo.extend(uses.get(&u).into_iter().flatten().cloned());
            }
        }
        for u in seen {
            labs_of.entry(u).or_default().insert(lab.clone());
        }
    }
    let lonely: Vec<String> = units
        .keys()
        .filter_map(|u| {
            let labs = labs_of.get(u).cloned().unwrap_or_default();
            (labs.len() < 2).then(|| format!("kit::{u} serves {labs:?}"))
        })
        .collect();
    assert!(
        lonely.is_empty(),
        "a rule one lab needs lives in that lab's folder (src/labs/<lab>/):\n{}",
        lonely.join("\n")
    );
}

#[test]
fn the_path_reader_expands_groups_and_skips_longer_names() {
    let text = "use crate::verify::kit::k8s::{pods::{self, running}, owned};\nfoo_kit::x; kit::cmdline::Args";
    assert_eq!(
        paths_after(text, "kit::"),
        [
            "k8s::pods",
            "k8s::pods::running",
            "k8s::owned",
            "cmdline::Args"
        ]
    );
    assert_eq!(
        paths_after(
            "crate::Error::usage(); use crate::{catalog::Lang, text};",
            "crate::"
        ),
        ["Error::usage", "catalog::Lang", "text"]
    );
}

/// The module path of a source file (`src/plan/mod.rs` is `plan`, `src/plan/rounds.rs` is
/// `plan::rounds`; `lib.rs` is the crate).
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file that defines the longest module prefix of `path`, if any.
fn file_of(path: &[String]) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| {
        let base = path[..n].iter().fold(src(), |p, s| p.join(s));
        [base.with_extension("rs"), base.join("mod.rs")]
            .into_iter()
            .find(|f| f.is_file())
    })
}

/// The files a source file imports: every `crate::` path and every `super::` path (resolved
/// from the file's own module), each to the file that defines it.
fn imported_files(file: &Path) -> BTreeSet<PathBuf> {
    let text = production_code(file);
    let me = module_of(file);
    let mut out = BTreeSet::new();
    for p in paths_after(&text, "crate::") {
        let segs: Vec<String> = p.split("::").map(str::to_string).collect();
        out.extend(file_of(&segs));
    }
    // `super::super::x`: counted once, from the first `super::` of the chain.
    let mut rest = text.as_str();
    while let Some(i) = rest.find("super::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i..];
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            rest = &rest["super::".len()..];
            continue;
        }
        let mut base = me.clone();
        while let Some(more) = rest.strip_prefix("super::") {
            base.pop();
            rest = more;
        }
        for p in expand(rest, String::new()) {
            let mut segs = base.clone();
            segs.extend(p.split("::").filter(|s| !s.is_empty()).map(str::to_string));
            out.extend(file_of(&segs));
        }
    }
    out.remove(file);
    out
}

#[test]
fn no_two_files_import_each_other_in_a_loop() {
    let files = rust_files(&src());
    let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = files
        .iter()
        .map(|f| (f.clone(), imported_files(f)))
        .collect();
    // A depth-first walk: a file met again while it is still on the path closes a loop.
    fn walk(
        f: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        path: &mut Vec<PathBuf>,
        done: &mut BTreeSet<PathBuf>,
        loops: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|p| p == f) {
            let names: Vec<String> = path[i..]
                .iter()
                .chain(std::iter::once(f))
                .map(|p| p.strip_prefix(src()).unwrap().display().to_string())
                .collect();
            loops.push(names.join(" → "));
            return;
        }
        if !done.insert(f.clone()) {
            return;
        }
        path.push(f.clone());
        for next in graph.get(f).into_iter().flatten() {
            walk(next, graph, path, done, loops);
        }
        path.pop();
    }
    let (mut done, mut loops) = (BTreeSet::new(), Vec::new());
    for f in graph.keys() {
        walk(f, &graph, &mut Vec::new(), &mut done, &mut loops);
    }
    assert!(
        loops.is_empty(),
        "files that import each other:\n{}",
        loops.join("\n")
    );
    // The reader sees imports: a lab's use of a kit file, and a kit file's `super::` group.
    let bf16 = src().join("labs/bf16/mod.rs");
    let uses = &graph[&bf16];
    assert!(
        uses.contains(&src().join("verify/kit/training/job_pods.rs")),
        "{uses:?}"
    );
    let job = &graph[&src().join("verify/kit/training/job.rs")];
    assert!(
        job.contains(&src().join("verify/kit/training/trainjob.rs")),
        "{job:?}"
    );
}

#[test]
fn no_lab_or_kit_rule_decodes_a_node_itself() {
    // `facts::ClusterNodes` decodes a round's nodes once for every lab (`JudgeCtx::node_facts`).
    let mut offenders = Vec::new();
    for dir in ["verify", "labs"] {
        for f in rust_files(&src().join(dir)) {
            let text = production_code(&f);
            if text.contains("NodeFacts::from_obj") || text.contains("NodeFacts::all") {
                offenders.push(f.strip_prefix(src()).unwrap().display().to_string());
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:?}");
}
