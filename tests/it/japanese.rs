//! `--lang ja` throughout (issue 31 §5), through the real binary: every `--help`, clap's argument
//! errors, the draft `start --draft-only` writes, and the details of errors and found values;
//! and the README's first path (`start 9 --draft-only`, then `check 9 --files gang-train.yaml`)
//! grading the draft's size as written.

use std::path::Path;

use assert_cmd::Command;

/// `trainlab` in a hermetic, colourless environment whose own language is English (`--lang`
/// or `LANG` of the test decides).
fn trainlab(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.current_dir(dir)
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "1000")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("KUBECONFIG", "/nonexistent/trainlab-test-kubeconfig")
        .write_stdin("");
    c
}

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = trainlab(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(args: &[&str]) -> (i32, String, String) {
    run_in(&std::env::temp_dir(), args)
}

/// What clap writes itself in English on a help screen.
const CLAP_ENGLISH: &[&str] = &[
    "Usage:",
    "Options:",
    "Arguments:",
    "Commands:",
    "Print help",
    "Print version",
    "[default:",
    "[possible values:",
    "[env:",
];

#[test]
fn every_help_screen_is_japanese_under_lang_ja_and_unchanged_in_english() {
    let screens: Vec<Vec<&str>> = vec![
        vec!["--lang", "ja", "--help"],
        vec!["--lang=ja", "-h"],
        vec!["check", "--help", "--lang", "ja"],
        vec!["--lang", "ja", "setup", "eks", "--help"],
        vec!["--lang", "ja", "help", "start"],
    ];
    for args in &screens {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("使い方: trainlab"), "{args:?}:\n{out}");
        for english in CLAP_ENGLISH {
            assert!(!out.contains(english), "{args:?} says {english:?}:\n{out}");
        }
    }
    let (_, top, _) = run(&["--lang", "ja", "--help"]);
    assert!(
        top.contains("コマンド:") && top.contains("オプション:"),
        "{top}"
    );
    assert!(top.contains("終了コード:"), "{top}");
    let (_, check, _) = run(&["--lang", "ja", "check", "--help"]);
    assert!(
        check.contains("自分のマニフェストのファイルまたはフォルダー"),
        "{check}"
    );
    assert!(check.contains("[既定値: human]"), "{check}");
    // The language of the environment, as for every other text.
    let out = trainlab(&std::env::temp_dir())
        .env("LANG", "ja_JP.UTF-8")
        .args(["start", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("下書きだけを書き出します"), "{text}");
    // English stays clap's own.
    let (code, en, _) = run(&["--lang", "en", "check", "--help"]);
    assert_eq!(code, 0);
    assert!(
        en.contains("Usage: trainlab check") && en.contains("Options:"),
        "{en}"
    );
    assert!(en.contains("Your manifest files or folders"), "{en}");
}

#[test]
fn argument_errors_are_japanese_under_lang_ja_with_the_same_exit_code() {
    for (args, says) in [
        (
            vec!["check", "9", "--file", "x.yaml"],
            vec![
                "引数 '--file' は使えません",
                "似た引数があります: '--files'",
            ],
        ),
        (
            vec!["check", "9", "--profile", "gke"],
            vec!["の値 'gke' は使えません", "[使える値: kind, eks]"],
        ),
        (
            vec!["check", "9", "--wait", "soon"],
            vec!["の値 'soon' は使えません: 30s、5m、1h のような長さを書いてください"],
        ),
        (vec!["check"], vec!["次の必須の引数が指定されていません"]),
        (
            vec!["setup", "--verbose"],
            vec!["サブコマンドが必要ですが", "[サブコマンド: kind, eks"],
        ),
        (vec!["check", "9", "--all"], vec!["と一緒には使えません"]),
        (vec!["bogus"], vec!["サブコマンド 'bogus' はありません"]),
        (
            vec!["quiz", "9", "--answer", "Z"],
            vec!["A、B、C、D のどれかを書いてください"],
        ),
    ] {
        let mut ja = vec!["--lang", "ja"];
        ja.extend(&args);
        let (code, out, err) = run(&ja);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.starts_with("エラー: "), "{args:?}:\n{err}");
        for s in says {
            assert!(err.contains(s), "{args:?} should say {s:?}:\n{err}");
        }
        for english in ["error:", "Usage:", "For more information", "tip:"] {
            assert!(!err.contains(english), "{args:?} says {english:?}:\n{err}");
        }
        // The same mistake in English is clap's message, with the same exit code.
        let mut en = vec!["--lang", "en"];
        en.extend(&args);
        let (code, _, err) = run(&en);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}:\n{err}");
    }
    let (code, _, err) = run(&["--lang", "en", "check", "9", "--file", "x.yaml"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("error: unexpected argument '--file' found")
            && err.contains("tip: a similar argument exists: '--files'"),
        "{err}"
    );
    let (code, out, _) = run(&["--lang", "ja", "--version"]);
    assert_eq!((code, out.starts_with("trainlab ")), (0, true), "{out}");
}

/// Every line of `text` that holds a YAML comment, with the comment only.
fn comments(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.find('#').map(|i| &l[i..]))
        .collect()
}

#[test]
fn the_draft_start_writes_has_japanese_comments_under_lang_ja_and_the_same_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let ja_dir = dir.path().join("ja");
    let en_dir = dir.path().join("en");
    std::fs::create_dir_all(&ja_dir).unwrap();
    std::fs::create_dir_all(&en_dir).unwrap();
    let (code, out, err) = run_in(&ja_dir, &["--lang", "ja", "start", "9", "--draft-only"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("gang-train.yaml"), "{out}");
    let (code, _, err) = run_in(&en_dir, &["--lang", "en", "start", "9", "--draft-only"]);
    assert_eq!(code, 0, "{err}");
    let ja = std::fs::read_to_string(ja_dir.join("gang-train.yaml")).unwrap();
    let en = std::fs::read_to_string(en_dir.join("gang-train.yaml")).unwrap();
    assert!(ja.contains("# TODO: gang を理解するスケジューラー"), "{ja}");
    assert!(
        en.contains("# TODO: the scheduler that understands gangs"),
        "{en}"
    );
    for c in comments(&ja) {
        // A commented-out key (`# schedulerName:`) is YAML, not prose.
        let prose = c.trim_start_matches('#').trim();
        let is_key = prose.ends_with(':') && !prose.contains(' ');
        let japanese = c.chars().any(|ch| ('\u{3040}'..='\u{9fff}').contains(&ch));
        assert!(
            is_key || japanese,
            "an English comment in the ja draft: {c}"
        );
    }
    // Only the comments differ: without them the two files are the same lines.
    let strip = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| match l.find('#') {
                Some(i) => l[..i].trim_end().to_string(),
                None => l.to_string(),
            })
            .collect()
    };
    assert_eq!(strip(&ja), strip(&en));
    // And the ja draft grades as the English one does.
    let graded = |d: &Path| {
        run_in(
            d,
            &["--lang", "en", "check", "9", "--files", "gang-train.yaml"],
        )
    };
    assert_eq!(graded(&ja_dir).1, graded(&en_dir).1);
}

#[test]
fn lint_refuses_a_japanese_draft_whose_yaml_differs_from_the_draft() {
    let dir = tempfile::tempdir().unwrap();
    let labs = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs");
    let copy = dir.path().join("labs");
    for lab in ["09-volcano-gang", "10-bf16"] {
        copy_dir(&labs.join(lab), &copy.join(lab));
    }
    let (code, out, err) = run(&["lint", "--labs-dir", copy.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let ja_draft = copy.join("09-volcano-gang/draft-ja/gang-train.yaml");
    let text = std::fs::read_to_string(&ja_draft).unwrap();
    std::fs::write(&ja_draft, text.replace("replicas: 2 ", "replicas: 3 ")).unwrap();
    std::fs::remove_file(copy.join("10-bf16/draft-ja/bf16-train.yaml")).unwrap();
    let (code, out, err) = run(&["lint", "--labs-dir", copy.to_str().unwrap()]);
    let all = format!("{out}{err}");
    assert_eq!(code, 2, "{all}");
    assert!(
        all.contains(
            "09-volcano-gang/draft-ja/gang-train.yaml: object 1 differs from the same object of"
        ) && all.contains("at `spec.tasks[0].replicas`: 3 here, 2 there")
            && all.contains("expected the same YAML, with only the comments in Japanese"),
        "{all}"
    );
    assert!(
        all.contains("10-bf16/draft-ja/bf16-train.yaml: missing: the Japanese draft"),
        "{all}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// English that trainlab itself once wrote into Japanese output (issue 31 §5).
const ENGLISH_DETAILS: &[&str] = &[
    "binary data",
    "not YAML or JSON",
    "cannot read",
    "document 1",
    "in namespace",
    "without a namespace",
    "GPU nodes",
    "expected a Kubernetes object",
    "is not a list",
    "a whole number",
    "per pod",
];

#[test]
fn errors_and_found_values_under_lang_ja_leave_no_english_details() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("binary.yaml", b"apiVersion: v1\0kind".to_vec()),
        ("not-an-object.yaml", b"foo: 1\n".to_vec()),
        (
            "items.yaml",
            b"apiVersion: v1\nkind: List\nitems: 3\n".to_vec(),
        ),
        (
            "elsewhere.yaml",
            b"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: gang-train, namespace: team-a}\nspec: {minAvailable: 1}\n".to_vec(),
        ),
        (
            "no-namespace.yaml",
            b"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: gang-train}\nspec: {minAvailable: 1}\n---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: gang-train, namespace: team-b}\nspec: {minAvailable: 1}\n".to_vec(),
        ),
    ];
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let draft =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/09-volcano-gang/draft/gang-train.yaml");
    let draft = draft.to_str().unwrap();
    let mut runs: Vec<Vec<&str>> = files
        .iter()
        .map(|(name, _)| vec!["--lang", "ja", "check", "9", "--files", name])
        .collect();
    runs.push(vec!["--lang", "ja", "check", "9", "--files", draft]);
    // Drafts whose expected values hold the words verifiers write (`per pod`, `GPU nodes`).
    let labs = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs");
    let tp = labs.join("01-tensor-parallelism/draft/tp-llm.yaml");
    let neuron = labs.join("07-optimum-neuron/draft/neuron-finetune.yaml");
    let (tp, neuron) = (tp.to_str().unwrap(), neuron.to_str().unwrap());
    for (lab, file) in [("1", tp), ("7", neuron), ("9", draft)] {
        runs.push(vec![
            "--lang",
            "ja",
            "check",
            lab,
            "--files",
            file,
            "--profile",
            "kind",
        ]);
    }
    let ckpt = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("labs/11-gradient-checkpointing/solution/ckpt-train.yaml");
    let ckpt = ckpt.to_str().unwrap();
    runs.push(vec![
        "--lang",
        "ja",
        "check",
        "11",
        "--files",
        ckpt,
        "--param",
        "memory_limit=lots",
    ]);
    for args in &runs {
        let (code, out, err) = run_in(dir.path(), args);
        let all = format!("{out}{err}");
        assert!(matches!(code, 1 | 2), "{args:?}: {all}");
        for english in ENGLISH_DETAILS {
            assert!(!all.contains(english), "{args:?} says {english:?}:\n{all}");
        }
    }
    let (_, _, err) = run_in(
        dir.path(),
        &["--lang", "ja", "check", "9", "--files", "binary.yaml"],
    );
    assert!(
        err.contains("バイナリーデータで、YAML でも JSON でもありません"),
        "{err}"
    );
    let (_, _, err) = run_in(
        dir.path(),
        &[
            "--lang",
            "ja",
            "check",
            "9",
            "--files",
            "not-an-object.yaml",
        ],
    );
    assert!(
        err.contains("not-an-object.yaml の 1 番目のドキュメント"),
        "{err}"
    );
    let (_, out, _) = run_in(
        dir.path(),
        &["--lang", "ja", "check", "9", "--files", "elsewhere.yaml"],
    );
    assert!(
        out.contains("gang-train (metadata.namespace: team-a)"),
        "{out}"
    );
    // English is as it was.
    let (_, _, err) = run_in(
        dir.path(),
        &["--lang", "en", "check", "9", "--files", "binary.yaml"],
    );
    assert!(
        err.contains(
            "binary.yaml: cannot read: binary data, not YAML or JSON (a NUL byte at offset 14)"
        ),
        "{err}"
    );
}

#[test]
fn the_readme_first_path_grades_the_drafts_size_and_without_profile_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(dir.path(), &["start", "9", "--draft-only"]);
    assert_eq!(code, 0, "{err}");
    // As README.md and `trainlab --help` write it now.
    let (code, out, err) = run_in(
        dir.path(),
        &[
            "check",
            "9",
            "--files",
            "gang-train.yaml",
            "--profile",
            "kind",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("expected: spec.tasks[0].replicas: 4 (3 GPU nodes + 1)"),
        "gang-size is graded with kind's 3 GPU nodes:\n{out}"
    );
    // min-available-all names the size gang-size wants, not the draft's wrong 2.
    assert!(out.contains("`spec.minAvailable: 4`"), "{out}");
    assert!(!out.contains("Set `spec.minAvailable: 2`"), "{out}");
    // Without --profile nothing stands for the cluster: the skip names both ways to give the
    // GPU nodes, and min-available-all names no number gang-size is about to change.
    let (_, out, _) = run_in(dir.path(), &["check", "9", "--files", "gang-train.yaml"]);
    assert!(
        out.contains("supply it with `--profile kind|eks` (that profile's figures) or `--param gpu_nodes=<value>`"),
        "{out}"
    );
    assert!(
        out.contains("Set `spec.minAvailable` to the total replicas the gang-size check asks for"),
        "{out}"
    );
    assert!(!out.contains("Set `spec.minAvailable: 2`"), "{out}");
    // The way the README and the help put it.
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.contains("trainlab check 9 --files gang-train.yaml --profile kind"),
        "README's first check names the profile"
    );
    let (_, help, _) = run(&["--help"]);
    assert!(
        help.contains("trainlab check 9 --files gang-train.yaml --profile kind"),
        "{help}"
    );
}
