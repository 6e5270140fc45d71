//! A newcomer's first hour (issue 31 §5), through the real binary: global flags before the
//! subcommand, one spelling of `-o` for every command, `--html` says what it wrote, `reset
//! --dry-run`, plain words for a missing object, and output that fits `COLUMNS`.

use std::path::Path;

use assert_cmd::Command;

/// `trainlab` with an English, colourless, hermetic environment.
fn trainlab() -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("KUBECONFIG", "/nonexistent/trainlab-test-kubeconfig")
        .write_stdin("");
    c
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = trainlab().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A kubeconfig whose server has no scheme: reading it is bad input naming the field, before
/// any request, so the answer proves which kubeconfig was read.
fn kubeconfig_without_scheme(dir: &Path) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"127.0.0.1:18009\"}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\nusers:\n- name: u\n  user: {token: abc}\n",
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn connection_flags_are_taken_before_the_subcommand_as_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_without_scheme(dir.path());
    for args in [
        vec!["--kubeconfig", &kc, "check", "9"],
        vec!["--kubeconfig", &kc, "--context", "x", "doctor"],
        vec!["--request-timeout", "5s", "check", "9", "--kubeconfig", &kc],
        vec!["check", "9", "--kubeconfig", &kc],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        assert!(
            err.contains("clusters[].cluster.server") && err.contains("127.0.0.1:18009"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn every_command_takes_both_spellings_of_the_text_output() {
    for (cmd, same) in [
        (vec!["check", "9", "--demo"], ["human", "table"]),
        (vec!["grade", "--demo"], ["table", "human"]),
        (vec!["list"], ["table", "human"]),
    ] {
        let out = |o: &str| {
            let mut args = cmd.clone();
            args.extend(["-o", o]);
            run(&args)
        };
        let (a, b) = (out(same[0]), out(same[1]));
        assert_eq!(a.0, b.0, "{cmd:?}: {}", b.2);
        assert!(!b.2.contains("invalid value"), "{cmd:?}: {}", b.2);
        assert_eq!(a.1, b.1, "{cmd:?}");
    }
    // Documented where the values are listed.
    let (_, help, _) = run(&["check", "--help"]);
    assert!(help.contains("also `-o table`"), "{help}");
    let (_, help, _) = run(&["grade", "--help"]);
    assert!(help.contains("also `-o human`"), "{help}");
}

#[test]
fn grade_html_says_which_file_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("room.html");
    let page_s = page.to_str().unwrap();
    let (code, out, err) = run(&["grade", "--demo", "-o", "csv", "--html", page_s]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(page.is_file());
    assert!(
        err.contains(&format!("trainlab: wrote {page_s}\n")),
        "{err}"
    );
    assert!(!out.contains("wrote"), "stdout stays the document: {out}");
    let out = trainlab()
        .env("LANG", "ja_JP.UTF-8")
        .args(["grade", "--demo", "-o", "csv", "--html", page_s])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{page_s} に書き込みました")), "{err}");
}

/// The kind nodes, as the live tests seed them.
fn kind_nodes() -> Vec<serde_json::Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kind-nodes");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for doc in serde_saphyr::from_multiple::<serde_json::Value>(&text).unwrap() {
            match doc["items"].as_array() {
                Some(items) => out.extend(items.iter().cloned()),
                None if doc.is_object() => out.push(doc),
                None => {}
            }
        }
    }
    out
}

#[test]
fn reset_dry_run_says_what_it_would_delete_and_only_reads() {
    use crate::support::live::{Cluster, Crd};
    let c = Cluster::start(kind_nodes(), &[Crd::Volcano]);
    let (code, out, err) = c.run(&["start", "9", "--request-timeout", "2s"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(c
        .object("Namespace", None, "trainlab-volcano-gang")
        .is_some());
    c.emu.clear_requests();
    // No --yes and no terminal: a dry run deletes nothing, so it needs no confirmation.
    let (code, out, err) = c.run(&["reset", "9", "--dry-run", "--request-timeout", "2s"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("reset would delete from "), "{out}");
    assert!(
        out.contains("\n  Namespace/trainlab-volcano-gang (and everything in it)\n"),
        "{out}"
    );
    assert!(out.contains("--dry-run: nothing was deleted"), "{out}");
    let writes: Vec<String> = c
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert!(c
        .object("Namespace", None, "trainlab-volcano-gang")
        .is_some());
}

/// The lines of `args`' stdout at `COLUMNS=80` wider than 80 display columns, except a line
/// that is one word (a URL or an image name, kept whole to be copied).
fn too_wide(args: &[&str]) -> Vec<String> {
    let out = trainlab().env("COLUMNS", "80").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| textwrap::core::display_width(l) > 80 && l.trim().contains(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn plans_usage_and_tasks_fit_the_terminal() {
    for args in [
        &["setup", "kind", "--dry-run"][..],
        &["setup", "kind", "--dry-run", "--lang", "ja"],
        &["setup", "kind", "--dry-run", "--with", "slinky"],
        &["grade", "--help"],
        &["grade", "-h"],
        &["show", "5", "--profile", "eks"],
        &["show", "5", "--profile", "eks", "--lang", "ja"],
    ] {
        let wide = too_wide(args);
        assert!(wide.is_empty(), "{args:?}:\n{}", wide.join("\n"));
    }
    // The usage names each source of a room on a line of its own.
    let (_, help, _) = run(&["grade", "--help"]);
    for source in ["--learners <NAMES>", "--contexts <CONTEXTS>", "--demo"] {
        assert!(
            help.contains(&format!("trainlab grade [OPTIONS] {source} [LABS]\n")),
            "{help}"
        );
    }
}

#[test]
fn show_5_lists_the_mpijobs_image_under_its_own_name_not_as_kinds_image() {
    // On kind lab 5 runs busybox (its task says so); the nccl-tests image is the EKS MPIJob's.
    let (code, out, _) = run(&["show", "5", "--profile", "kind"]);
    assert_eq!(code, 0);
    assert!(out.contains("image `busybox:1.37`"), "{out}");
    assert!(!out.contains("  - image ("), "{out}");
    assert!(
        out.contains("  - mpi_image (eks: public.ecr.aws/hpc-cloud/nccl-tests:"),
        "{out}"
    );
}

#[test]
fn a_missing_job_names_each_kind_the_lab_accepts_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("other.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    for lab in ["1", "2", "6", "10", "11", "12", "14"] {
        for lang in ["en", "ja"] {
            let (code, out, err) = run(&["check", lab, "--files", file, "--lang", lang]);
            assert_eq!(code, 1, "{lab}: {err}");
            assert!(!out.contains(" / "), "lab {lab} {lang}:\n{out}");
        }
    }
    let (_, out, _) = run(&["check", "6", "--files", file]);
    assert!(
        out.contains("There is no `bionemo-esm2` in namespace `trainlab-bionemo` of a kind this lab accepts: `batch/v1` Job, `trainer.kubeflow.org/v1alpha1` TrainJob."),
        "{out}"
    );
    let (_, out, _) = run(&["check", "6", "--files", file, "--lang", "ja"]);
    assert!(
        out.contains("namespace `trainlab-bionemo` に `bionemo-esm2` がありません（この lab が受け付ける種類: `batch/v1` Job, `trainer.kubeflow.org/v1alpha1` TrainJob）。"),
        "{out}"
    );
}
