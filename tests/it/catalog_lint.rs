//! The lab catalog: the embedded labs load and are complete in both languages; lookups accept a
//! number, an id or a folder; a broken lab file is an error naming the file and the field (or the
//! line), both through `Catalog::from_dir` and through `trainlab lint --labs-dir`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use trainlab::catalog::{Catalog, Choice, LabError, Text};

const LAB1: &str = "01-tensor-parallelism";

fn shipped_labs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("labs")
}

fn embedded() -> Catalog {
    Catalog::embedded().unwrap_or_else(|e| panic!("the embedded catalog must load: {e}"))
}

// ---------------------------------------------------------------------------------------------
// The embedded catalog

#[test]
fn embedded_catalog_loads_sorted_with_unique_ids_and_numbers() {
    let c = embedded();
    assert!(!c.labs.is_empty());
    let numbers: Vec<u32> = c.labs.iter().map(|b| b.lab.number).collect();
    let mut sorted = numbers.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(numbers, sorted, "labs are sorted by number, numbers unique");
    let ids: BTreeSet<&str> = c.labs.iter().map(|b| b.lab.id.as_str()).collect();
    assert_eq!(ids.len(), c.labs.len(), "ids are unique");
    for b in &c.labs {
        assert_eq!(b.origin, format!("labs/{}", b.lab.folder_name()));
    }
}

#[test]
fn embedded_catalog_has_one_lab_per_quiz_question_numbered_from_one() {
    let numbers: Vec<u32> = embedded().labs.iter().map(|b| b.lab.number).collect();
    // The quiz in seed/ has 15 questions; a lab added later takes the next number.
    assert!(numbers.len() >= 15, "{numbers:?}");
    assert_eq!(
        numbers,
        (1..=numbers.len() as u32).collect::<Vec<_>>(),
        "one lab per quiz question, numbered without gaps"
    );
}

/// Every text of a lab, with its field path.
fn texts(lab: &trainlab::catalog::Lab) -> Vec<(String, &Text)> {
    let mut v: Vec<(String, &Text)> = vec![
        ("title".into(), &lab.title),
        ("quiz.question".into(), &lab.quiz.question),
        ("quiz.explanation".into(), &lab.quiz.explanation),
    ];
    for c in Choice::ALL {
        v.push((
            format!("quiz.choices.{}", c.letter()),
            lab.quiz.choices.get(c),
        ));
    }
    for (i, n) in lab.notes.iter().enumerate() {
        v.push((format!("notes[{i}].text"), &n.text));
    }
    if let Some(t) = &lab.task {
        v.push(("task.text".into(), &t.text));
    }
    for c in &lab.checks {
        v.push((format!("checks.{}.title", c.id), &c.title));
        v.push((format!("checks.{}.hint", c.id), &c.hint));
        for (k, h) in &c.hints {
            v.push((format!("checks.{}.hints.{k}", c.id), h));
        }
    }
    for (k, t) in &lab.advice {
        v.push((format!("advice.{k}"), t));
    }
    for (k, t) in &lab.messages {
        v.push((format!("messages.{k}"), t));
    }
    v
}

#[test]
fn every_text_has_japanese_and_english() {
    let mut blank = Vec::new();
    let mut count = 0;
    for b in &embedded().labs {
        for (field, t) in texts(&b.lab) {
            count += 1;
            if t.ja.trim().is_empty() {
                blank.push(format!("{}/lab.yaml: {field}.ja", b.origin));
            }
            if t.en.trim().is_empty() {
                blank.push(format!("{}/lab.yaml: {field}.en", b.origin));
            }
        }
    }
    assert!(count > 0);
    assert!(blank.is_empty(), "empty texts:\n{}", blank.join("\n"));
}

#[test]
fn find_accepts_a_number_an_id_a_folder_and_a_path() {
    let c = embedded();
    for key in [
        "1",
        "01",
        "tensor-parallelism",
        "01-tensor-parallelism",
        "labs/01-tensor-parallelism/",
        "labs/01-tensor-parallelism",
        " 1 ",
    ] {
        let found = c
            .find(key)
            .unwrap_or_else(|| panic!("find({key:?}) found nothing"));
        assert_eq!(found.lab.id, "tensor-parallelism", "find({key:?})");
    }
    for key in ["0", "99", "tensor", "02-tensor-parallelism", ""] {
        assert!(c.find(key).is_none(), "find({key:?}) should find nothing");
    }
}

#[test]
fn find_accepts_the_forms_for_volcano_gang() {
    let c = embedded();
    for key in [
        "9",
        "volcano-gang",
        "09-volcano-gang",
        "labs/09-volcano-gang/",
    ] {
        let found = c
            .find(key)
            .unwrap_or_else(|| panic!("find({key:?}) found nothing (is lab 9 written yet?)"));
        assert_eq!(found.lab.id, "volcano-gang");
    }
}

#[test]
fn get_of_an_unknown_lab_lists_the_valid_ones() {
    let c = embedded();
    let err = c.get("99").unwrap_err().to_string();
    assert!(err.contains("unknown lab `99`"), "{err}");
    for b in &c.labs {
        assert!(err.contains(&b.lab.id), "{err}");
    }
}

// ---------------------------------------------------------------------------------------------
// Broken copies of the shipped labs

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A copy of the shipped `labs/` folder to break.
struct Labs {
    dir: tempfile::TempDir,
}

impl Labs {
    /// The copy must load before it is broken, so each test's error comes from its own edit.
    fn copy() -> Labs {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&shipped_labs(), dir.path());
        if let Err(e) = Catalog::from_dir(dir.path()) {
            panic!("the shipped labs must load before one is broken: {e}");
        }
        Labs { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self, folder: &str) -> PathBuf {
        self.root().join(folder).join("lab.yaml")
    }

    fn read(&self, folder: &str) -> String {
        std::fs::read_to_string(self.file(folder)).unwrap()
    }

    fn write(&self, folder: &str, text: &str) {
        std::fs::write(self.file(folder), text).unwrap();
    }

    /// Replaces exactly one occurrence of `from` in a lab file.
    fn replace(&self, folder: &str, from: &str, to: &str) {
        let text = self.read(folder);
        assert_eq!(
            text.matches(from).count(),
            1,
            "`{from}` must occur once in {folder}/lab.yaml"
        );
        self.write(folder, &text.replacen(from, to, 1));
    }

    fn load_err(&self) -> LabError {
        match Catalog::from_dir(self.root()) {
            Ok(c) => panic!("the broken copy loaded ({} labs)", c.labs.len()),
            Err(e) => e,
        }
    }

    /// `trainlab lint --labs-dir <copy>`
    fn lint(&self) -> assert_cmd::assert::Assert {
        Command::cargo_bin("trainlab")
            .unwrap()
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .arg("lint")
            .arg("--labs-dir")
            .arg(self.root())
            .assert()
    }

    fn shown(&self, folder: &str) -> String {
        self.file(folder).display().to_string()
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}"))
        + 1
}

#[test]
fn an_unbroken_copy_loads_like_the_embedded_catalog() {
    let labs = Labs::copy();
    let c = Catalog::from_dir(labs.root()).unwrap_or_else(|e| panic!("{e}"));
    let ids = |c: &Catalog| c.labs.iter().map(|b| b.lab.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&c), ids(&embedded()));
    labs.lint().success();
}

#[test]
fn bad_yaml_is_an_error_with_file_and_line() {
    let labs = Labs::copy();
    let line = line_of(&labs.read(LAB1), "answer: B");
    // `a: b: c` is a YAML syntax error, not a type error.
    labs.replace(LAB1, "  answer: B\n", "  answer: B: C\n");
    let err = labs.load_err();
    assert_eq!(err.file, labs.shown(LAB1));
    assert_eq!(err.line, Some(line), "{err}");
    assert!(err.column.is_some(), "{err}");
    assert!(
        err.message.contains("mapping values are not allowed"),
        "{err}"
    );
    let at = format!("{}:{line}:", labs.shown(LAB1));
    assert!(err.to_string().starts_with(&at), "{err}");
    labs.lint().code(2).stderr(predicate::str::contains(at));
}

#[test]
fn an_unknown_field_is_an_error_naming_it() {
    let labs = Labs::copy();
    labs.replace(
        LAB1,
        "topic: parallelism\n",
        "topic: parallelism\ndifficulty: hard\n",
    );
    let err = labs.load_err();
    assert_eq!(err.file, labs.shown(LAB1));
    assert!(err.to_string().contains("difficulty"), "{err}");
    assert_eq!(err.line, Some(4), "{err}");
    labs.lint().code(2).stderr(
        predicate::str::contains(labs.shown(LAB1)).and(predicate::str::contains("difficulty")),
    );
}

#[test]
fn a_title_without_english_is_an_error_naming_title_and_en() {
    let labs = Labs::copy();
    labs.replace(
        LAB1,
        "  en: \"Tensor Parallelism: splitting a single layer\"\n",
        "",
    );
    let err = labs.load_err();
    assert_eq!(err.file, labs.shown(LAB1));
    assert_eq!(err.field.as_deref(), Some("title"), "{err}");
    assert!(err.message.contains("`en`"), "{err}");
    labs.lint().code(2).stderr(
        predicate::str::contains(labs.shown(LAB1))
            .and(predicate::str::contains("title"))
            .and(predicate::str::contains("`en`")),
    );
}

#[test]
fn a_blank_english_title_is_an_error_naming_title_en() {
    let labs = Labs::copy();
    labs.replace(
        LAB1,
        "  en: \"Tensor Parallelism: splitting a single layer\"\n",
        "  en: \"  \"\n",
    );
    let err = labs.load_err();
    assert_eq!(err.field.as_deref(), Some("title.en"), "{err}");
}

#[test]
fn an_answer_that_is_not_a_choice_is_an_error_naming_quiz_answer() {
    let labs = Labs::copy();
    let line = line_of(&labs.read(LAB1), "answer: B");
    labs.replace(LAB1, "  answer: B\n", "  answer: E\n");
    let err = labs.load_err();
    assert_eq!(err.file, labs.shown(LAB1));
    assert_eq!(err.field.as_deref(), Some("quiz.answer"), "{err}");
    assert_eq!(err.line, Some(line), "{err}");
    labs.lint().code(2).stderr(
        predicate::str::contains(labs.shown(LAB1)).and(predicate::str::contains("quiz.answer")),
    );
}

#[test]
fn a_folder_that_does_not_match_number_and_id_is_an_error() {
    let labs = Labs::copy();
    std::fs::rename(labs.root().join(LAB1), labs.root().join("01-tensor")).unwrap();
    let err = labs.load_err();
    assert!(err.file.ends_with("01-tensor/lab.yaml"), "{err}");
    assert_eq!(err.field.as_deref(), Some("id"), "{err}");
    assert!(
        err.message.contains("01-tensor-parallelism"),
        "names the expected folder: {err}"
    );

    let labs = Labs::copy();
    labs.replace(LAB1, "number: 1\n", "number: 16\n");
    let err = labs.load_err();
    assert!(err.message.contains("16-tensor-parallelism"), "{err}");
    labs.lint()
        .code(2)
        .stderr(predicate::str::contains(labs.shown(LAB1)).and(predicate::str::contains("id")));
}

/// Replaces lab 1 of the copy with a small gradable lab (the docs' example lab under lab 1's id)
/// carrying the given checks, so these tests do not depend on what lab 1 ships.
fn make_gradable(labs: &Labs, checks: &str) {
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/labs/99-hello-gpu/lab.yaml"),
    )
    .unwrap();
    let head = &example[..example.find("\nchecks:\n").unwrap() + 1];
    let text = head
        .replace("id: hello-gpu", "id: tensor-parallelism")
        .replace("number: 99", "number: 1")
        .replace("  draft: draft/hello-gpu.yaml\n", "")
        .replace("  draft_as: hello-gpu.yaml\n", "");
    let folder = labs.root().join(LAB1);
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::create_dir_all(folder.join("solution")).unwrap();
    labs.write(LAB1, &format!("{text}{checks}"));
    std::fs::write(
        folder.join("solution").join("job.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: tp\n",
    )
    .unwrap();
}

const CHECK_A: &str = "  - id: job-exists\n    stage: spec\n    weight: 1\n    title: {ja: \"Job がある\", en: \"a Job exists\"}\n    hint: {ja: \"作成してください\", en: \"create it\"}\n";
const CHECK_B: &str = "  - id: job-complete\n    stage: state\n    weight: 1\n    title: {ja: \"完了する\", en: \"it completes\"}\n    hint: {ja: \"ログを見てください\", en: \"read the logs\"}\n";

#[test]
fn a_gradable_lab_with_distinct_check_ids_loads() {
    let labs = Labs::copy();
    make_gradable(&labs, &format!("checks:\n{CHECK_A}{CHECK_B}"));
    let c = Catalog::from_dir(labs.root()).unwrap_or_else(|e| panic!("{e}"));
    let lab = &c.find("1").unwrap().lab;
    assert!(lab.is_gradable());
    assert_eq!(lab.checks.len(), 2);
}

#[test]
fn a_duplicate_check_id_is_an_error_naming_the_check() {
    let labs = Labs::copy();
    make_gradable(&labs, &format!("checks:\n{CHECK_A}{CHECK_A}"));
    let err = labs.load_err();
    assert_eq!(err.file, labs.shown(LAB1));
    assert_eq!(err.field.as_deref(), Some("checks[1].id"), "{err}");
    assert!(
        err.message.contains("duplicate check id `job-exists`"),
        "{err}"
    );
    labs.lint().code(2).stderr(
        predicate::str::contains(labs.shown(LAB1)).and(predicate::str::contains("checks[1].id")),
    );
}

#[test]
fn lint_on_the_shipped_labs_passes_for_all_of_them() {
    let n = embedded().labs.len();
    Command::cargo_bin("trainlab")
        .unwrap()
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .arg("lint")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!("lint: {n} labs OK")));
}

// ---------------------------------------------------------------------------------------------
// Profile overlays: `solution-eks/` over `solution/`

const LAB10: &str = "10-bf16";

/// Lab 10's kind solution copied into `solution-eks/` under the same name, edited by `edit`:
/// an EKS overlay whose only difference from the kind answer is that edit.
fn eks_overlay(labs: &Labs, edit: impl Fn(&str) -> String) {
    let folder = labs.root().join(LAB10);
    let kind = folder.join("solution/bf16-train.yaml");
    let text = std::fs::read_to_string(&kind).unwrap();
    std::fs::create_dir_all(folder.join("solution-eks")).unwrap();
    std::fs::write(folder.join("solution-eks/bf16-train.yaml"), edit(&text)).unwrap();
}

/// An overlay that differs from the kind answer only by a label the reports show.
fn mark(text: &str) -> String {
    assert_eq!(text.matches("\n  labels:\n").count(), 1);
    text.replacen("\n  labels:\n", "\n  labels:\n    overlay: eks\n", 1)
}

fn trainlab(labs: &Labs) -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", labs.root().join("no-kubeconfig"))
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .arg("--labs-dir")
        .arg(labs.root());
    c
}

#[test]
fn an_eks_solution_that_fails_a_spec_check_is_a_lint_error_naming_the_profile() {
    let labs = Labs::copy();
    // FP16 instead of BF16 on EKS only: the kind solution still passes.
    eks_overlay(&labs, |t| t.replace("--bf16", "--fp16"));
    labs.lint().code(2).stderr(
        predicate::str::contains("10-bf16/solution/ + solution-eks/ (eks profile)")
            .and(predicate::str::contains("bf16-on"))
            .and(predicate::str::contains("(kind profile)").not()),
    );
}

#[test]
fn an_eks_overlay_that_keeps_the_concept_passes_lint() {
    let labs = Labs::copy();
    eks_overlay(&labs, mark);
    labs.lint().success();
}

#[test]
fn an_overlay_folder_for_an_unknown_profile_is_an_error_naming_it() {
    let labs = Labs::copy();
    let folder = labs.root().join(LAB10).join("solution-gpu");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("x.yaml"), "apiVersion: v1\nkind: ConfigMap\n").unwrap();
    let err = labs.load_err();
    assert!(err.file.ends_with("10-bf16/solution-gpu"), "{err}");
    assert!(err.message.contains("solution-<profile>"), "{err}");
    labs.lint()
        .code(2)
        .stderr(predicate::str::contains("solution-gpu"));
}

#[test]
fn solve_dry_run_applies_the_chosen_profiles_overlay_and_keeps_shared_files() {
    let labs = Labs::copy();
    eks_overlay(&labs, mark);
    let out = |profile: &str| {
        let o = trainlab(&labs)
            .args(["solve", "10", "--dry-run", "--profile", profile])
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let (kind, eks) = (out("kind"), out("eks"));
    assert!(
        kind.contains("the kind profile's reference solution"),
        "{kind}"
    );
    assert!(!kind.contains("overlay: eks"), "{kind}");
    assert!(eks.contains("overlay: eks"), "{eks}");
    assert_eq!(eks.matches("name: bf16-train").count(), 1, "{eks}");
    // The starter is shared: the stand-in ConfigMap is applied on both profiles.
    for text in [&kind, &eks] {
        assert!(text.contains("name: trainer-standin"), "{text}");
    }
}

#[test]
fn show_prints_the_profiles_solution_command_lines() {
    let labs = Labs::copy();
    eks_overlay(&labs, |t| {
        t.replace("pretrain_gpt.py", "/opt/megatron-lm/pretrain_gpt.py")
    });
    let show = |profile: &str| {
        let o = trainlab(&labs)
            .args(["show", "10", "--profile", profile])
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let eks = show("eks");
    assert!(
        eks.contains(
            "The reference solution's command lines (eks: trainlab solve bf16 --profile eks)"
        ),
        "{eks}"
    );
    assert!(
        eks.contains("PyTorchJob/bf16-train Master/pytorch"),
        "{eks}"
    );
    assert!(
        eks.contains("torchrun /opt/megatron-lm/pretrain_gpt.py"),
        "{eks}"
    );
    let kind = show("kind");
    let section = kind
        .split("## The reference solution's command lines (kind")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("no command-line section: {kind}"));
    assert!(section.contains("torchrun pretrain_gpt.py"), "{section}");
    assert!(!section.contains("/opt/megatron-lm/"), "{section}");
}

#[test]
fn a_draft_path_that_leaves_its_folder_is_an_error_and_start_writes_nothing() {
    for (bad, says) in [
        ("../../../../evil-draft.yaml", "leaves its folder"),
        ("/tmp/trainlab-evil-draft.yaml", "absolute path"),
    ] {
        let labs = Labs::copy();
        labs.replace(
            "09-volcano-gang",
            "  draft_as: gang-train.yaml\n",
            &format!("  draft_as: {bad}\n"),
        );
        let err = labs.load_err();
        assert_eq!(err.field.as_deref(), Some("task.draft_as"), "{err}");
        assert!(err.message.contains(says), "{err}");
        labs.lint()
            .code(2)
            .stderr(predicate::str::contains("task.draft_as"));
        let work = tempfile::tempdir().unwrap();
        trainlab(&labs)
            .current_dir(work.path())
            .args(["start", "9", "--draft-only"])
            .assert()
            .code(2);
        assert!(!Path::new("/tmp/trainlab-evil-draft.yaml").exists());
        assert!(!work.path().join("../../../../evil-draft.yaml").exists());
    }
}

#[test]
fn lint_reports_every_broken_lab_and_every_folder_it_passes_over() {
    let labs = Labs::copy();
    // Two broken labs: both are reported, not only the first.
    labs.replace(
        LAB1,
        "topic: parallelism\n",
        "topic: parallelism\ndifficulty: hard\n",
    );
    labs.replace(LAB10, "number: 10\n", "number: 10\nlevel: 3\n");
    // Two folders that are not lab folders: said, with why.
    std::fs::create_dir_all(labs.root().join("volcano-gang")).unwrap();
    std::fs::create_dir_all(labs.root().join("..x")).unwrap();
    let out = labs.lint().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("difficulty"), "{stderr}");
    assert!(stderr.contains("level"), "{stderr}");
    for folder in ["volcano-gang", "..x"] {
        assert!(
            stderr.contains(&format!("{folder}: passed over: not a lab folder name")),
            "{folder}: {stderr}"
        );
    }
    // The other 13 labs were still linted: one problem each for the two broken ones only.
    assert!(stderr.contains("lint found 2 problem(s)"), "{stderr}");
}

/// The ids a lab's code names as string literals after `prefix` (`.hint("`, `Advice::new("`).
fn literal_ids(code: &str, prefix: &str) -> BTreeSet<String> {
    code.match_indices(prefix)
        .filter_map(|(i, _)| {
            let rest = &code[i + prefix.len()..];
            let end = rest.find('"')?;
            Some(rest[..end].to_string())
        })
        .collect()
}

/// Every hint key, message id and advice id a lab's own code writes exists in its lab.yaml: the
/// report would otherwise fall back to the default hint or print the bare id. (`lint` checks
/// the ids a graded state gives, kit rules included; this reads every literal in the code.)
#[test]
fn every_hint_message_and_advice_a_verifier_names_is_defined_in_its_lab_yaml() {
    let c = embedded();
    let labs_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/labs");
    let mut undefined = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&labs_dir).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let id = dir.file_name().unwrap().to_string_lossy().replace('_', "-");
        let lab = &c
            .find(&id)
            .unwrap_or_else(|| panic!("src/labs/{id}: no lab"))
            .lab;
        let mut code = String::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            // Production code only: unit tests may name ids to show they are refused.
            code.push_str(text.split("#[cfg(test)]").next().unwrap());
        }
        for h in literal_ids(&code, ".hint(\"") {
            seen += 1;
            // A literal cannot say which check gives it: any check's variant will do.
            let defined = lab.checks.iter().any(|c| lab.hint_variant(c, &h).is_some());
            if !defined {
                undefined.push(format!("{id}: hint `{h}`"));
            }
        }
        for prefix in ["Message(\"", "message(\""] {
            for m in literal_ids(&code, prefix) {
                seen += 1;
                if !lab.messages.contains_key(&m) {
                    undefined.push(format!("{id}: message `{m}`"));
                }
            }
        }
        for a in literal_ids(&code, "Advice::new(\"") {
            seen += 1;
            if !lab.advice.contains_key(&a) {
                undefined.push(format!("{id}: advice `{a}`"));
            }
        }
    }
    assert!(seen > 100, "the scan found the verifiers' ids: {seen}");
    assert!(
        undefined.is_empty(),
        "not in lab.yaml:\n{}",
        undefined.join("\n")
    );
}

#[test]
fn lint_names_a_hint_the_verifier_gives_that_lab_yaml_does_not_define() {
    // The drafts fail checks with hint variants; with every variant taken out of lab.yaml,
    // lint names each one instead of falling back to the default hint in silence.
    let c = embedded();
    let mut named = Vec::new();
    for b in c.labs.iter().filter(|b| b.lab.is_gradable()) {
        let mut b = b.clone();
        let mut lab = (*b.lab).clone();
        for check in &mut lab.checks {
            check.hints.clear();
        }
        b.lab = std::sync::Arc::new(lab);
        let v = trainlab::labs::verifier_for(&b.lab.id).unwrap();
        named.extend(
            trainlab::verify::lint_lab(&b, Some(v))
                .into_iter()
                .filter(|p| p.contains("hints`: the verifier gives hint")),
        );
    }
    assert!(!named.is_empty(), "no draft gave a hint variant");
    assert!(named.iter().all(|p| p.contains("lab.yaml")), "{named:#?}");
}

/// lab.yaml holds every parameter default; the code holds none. A lab written without one the
/// verifier needs is bad input naming it, not a grade built on a default the code invented.
#[test]
fn a_parameter_the_verifier_needs_and_lab_yaml_lacks_is_bad_input_naming_it() {
    let c = embedded();
    let mut b = c.get("efa-nccl").unwrap().clone();
    let mut lab = (*b.lab).clone();
    for params in lab.task.as_mut().unwrap().params.values_mut() {
        params.remove("instance_type");
    }
    b.lab = std::sync::Arc::new(lab);
    let files = trainlab::observe::sources::files(&[
        Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/05-efa-nccl/solution")
    ])
    .unwrap();
    let target = trainlab::verify::Target::for_lab("efa-nccl");
    let err = trainlab::labs::grade_lab(&b, &files, &target, &Default::default(), None)
        .expect_err("no instance_type anywhere");
    let text = err.to_string();
    assert!(
        text.contains("no parameter `instance_type`") && text.contains("--param instance_type="),
        "{text}"
    );
    assert_eq!(err.exit_code(), trainlab::ExitCode::BadInput);
    // With --param it grades.
    let given = [("instance_type".to_string(), "p5.48xlarge".to_string())].into();
    assert!(trainlab::labs::grade_lab(&b, &files, &target, &given, None).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Lab texts an upstream read found wrong (issue 31 §8), each in ja and en

/// Every text of lab `id` with its field path, as owned strings.
fn lab_texts(id: &str) -> Vec<(String, Text)> {
    let c = embedded();
    let b = c.get(id).unwrap_or_else(|e| panic!("lab {id}: {e}"));
    texts(&b.lab)
        .into_iter()
        .map(|(f, t)| (f, t.clone()))
        .collect()
}

fn lab_text(id: &str, field: &str) -> Text {
    lab_texts(id)
        .into_iter()
        .find(|(f, _)| f == field)
        .unwrap_or_else(|| panic!("lab {id} has no text {field}"))
        .1
}

/// The note of lab `id` whose English text contains `needle`, with its source.
fn note_with(id: &str, needle: &str) -> (Text, String) {
    let c = embedded();
    let b = c.get(id).unwrap();
    let n = b
        .lab
        .notes
        .iter()
        .find(|n| n.text.en.contains(needle))
        .unwrap_or_else(|| panic!("lab {id} has no note saying {needle:?}"));
    (n.text.clone(), n.source.clone())
}

#[test]
fn lab9_does_not_teach_that_a_gang_larger_than_the_cluster_goes_inqueue() {
    // Volcano v1.15.1: proportion rejects a job whose minResources exceed the queue's real
    // capacity (the cluster's allocatable), whatever the cluster's size.
    let task = lab_text("volcano-gang", "task.text");
    assert!(!task.ja.contains("Inqueue"), "{}", task.ja);
    assert!(!task.en.contains("Inqueue"), "{}", task.en);
    assert!(task.en.contains("queue resource quota insufficient"));
    assert!(task.ja.contains("queue resource quota insufficient"));
    let (note, source) = note_with("volcano-gang", "proportion plugin");
    for t in [&note.ja, &note.en] {
        assert!(t.contains("queue resource quota insufficient"), "{t}");
        assert!(!t.contains("5 or more") && !t.contains("5 台以上"), "{t}");
    }
    assert!(
        source.contains("plugins/proportion/proportion.go"),
        "{source}"
    );
    assert!(source.contains("framework/session_plugins.go"), "{source}");
    let inqueue = lab_text("volcano-gang", "advice.inqueue");
    assert!(!inqueue.en.contains("admits up to 1.2"), "{}", inqueue.en);
    assert!(inqueue.en.contains("proportion") && inqueue.ja.contains("proportion"));
}

#[test]
fn lab7_says_what_runs_without_bf16_that_transformers_neuronx_ended_and_karpenter_has_dra() {
    let bf16 = lab_text("optimum-neuron", "advice.no-bf16");
    assert!(!bf16.en.contains("trains in FP32"), "{}", bf16.en);
    assert!(!bf16.ja.contains("FP32 で学習します"), "{}", bf16.ja);
    assert!(bf16
        .en
        .contains("casts FP32 matrix multiplications to BF16"));
    assert!(bf16.ja.contains("BF16 にキャスト"));
    let ex = lab_text("optimum-neuron", "quiz.explanation");
    for t in [&ex.ja, &ex.en] {
        assert!(
            t.contains("2025-09-16") && t.contains("NxD Inference"),
            "{t}"
        );
    }
    let (dra, source) = note_with("optimum-neuron", "Neuron DRA driver");
    assert!(
        !dra.en.contains("not supported with Karpenter"),
        "{}",
        dra.en
    );
    assert!(
        !dra.ja.contains("Karpenter と EKS Auto Mode では未対応"),
        "{}",
        dra.ja
    );
    assert!(dra.en.contains("settings.enableDRA") && dra.ja.contains("settings.enableDRA"));
    assert!(source.contains("karpenter.sh/docs/tasks/dra"), "{source}");
}

#[test]
fn lab14_ja_and_en_both_count_the_best_checkpoint_inside_save_total_limit() {
    let (n, source) = note_with("checkpoint-strategy", "load_best_model_at_end");
    assert!(!n.ja.contains("上限とは別に"), "{}", n.ja);
    assert!(n.ja.contains("上限の中に数えられます"), "{}", n.ja);
    assert!(n.ja.contains("最良の 1 個と最新の 4 個"), "{}", n.ja);
    assert!(n.en.contains("counts inside the limit"), "{}", n.en);
    assert!(n.en.contains("the best and the newest 4"), "{}", n.en);
    assert!(source.contains("rotate_checkpoints"), "{source}");
}

#[test]
fn lab11_dates_activation_checkpointing_to_5_23_and_ja_adds_no_therefore() {
    let (n, _) = note_with("gradient-checkpointing", "--activation_checkpointing");
    assert!(
        n.en.contains("since 5.23") && !n.en.contains("since 5.24"),
        "{}",
        n.en
    );
    assert!(
        n.ja.contains("5.23 以降") && !n.ja.contains("5.24 以降"),
        "{}",
        n.ja
    );
    let task = lab_text("gradient-checkpointing", "task.text");
    assert!(!task.ja.contains("そのため OOM-kill"), "{}", task.ja);
    assert!(task.ja.contains("OOM-kill はカーネルが"), "{}", task.ja);
}

#[test]
fn lab8_does_not_promise_a_default_storage_class_on_eks() {
    let h = lab_text("fsx-lustre", "checks.pvc-rwx-size.hints.no-storage-class");
    assert!(!h.en.contains("usually EBS"), "{}", h.en);
    assert!(!h.ja.contains("多くの場合 EBS"), "{}", h.ja);
    assert!(h.en.contains("1.30") && h.ja.contains("1.30"));
}

#[test]
fn labs_1_and_2_ja_set_cuda_device_max_connections_grammatically() {
    for id in ["tensor-parallelism", "parallelism-3d"] {
        let all = lab_texts(id);
        let bad: Vec<&String> = all
            .iter()
            .filter(|(_, t)| {
                t.ja.contains("`env` に `CUDA_DEVICE_MAX_CONNECTIONS: \"1\"` にしてください")
            })
            .map(|(f, _)| f)
            .collect();
        assert!(bad.is_empty(), "{id}: {bad:?}");
        assert!(
            all.iter().any(|(_, t)| t
                .ja
                .contains("`env` で `CUDA_DEVICE_MAX_CONNECTIONS` を `\"1\"` にしてください")),
            "{id}"
        );
    }
}

#[test]
fn labs_5_and_15_say_efa_os_bypass_needs_one_subnet_not_only_one_az() {
    for id in ["efa-nccl", "karpenter-single-az"] {
        let (n, source) = note_with(id, "one subnet");
        assert!(n.ja.contains("サブネット"), "{id}: {}", n.ja);
        assert!(source.contains("parallelcluster"), "{id}: {source}");
    }
}
