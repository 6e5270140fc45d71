//! Bad input never becomes a grade: objects saved twice are counted once, two different objects
//! with one identity are an error naming both files, and malformed metadata is an error naming
//! the field — each exit 2 at the CLI, never a learner fail.

use std::path::Path;

use assert_cmd::Command;
use trainlab::observe::{sources, InputError};

fn trainlab() -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env("KUBECONFIG", "/nonexistent/trainlab-test-kubeconfig");
    c
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

const JOB: &str = r#"apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: gang-train, namespace: trainlab-volcano-gang, uid: u-1, resourceVersion: "7"}
spec: {minAvailable: 4, schedulerName: volcano, tasks: [{name: worker, replicas: 4}]}
"#;

#[test]
fn the_same_object_saved_twice_is_one_object() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "all-namespaces.yaml", JOB);
    // The same object from `-n NS`, with a field order kubectl may change: same uid.
    write(
        dir.path(),
        "namespace.yaml",
        &JOB.replace(
            "minAvailable: 4, schedulerName",
            "schedulerName: volcano, minAvailable",
        ),
    );
    let obs = sources::snapshot(dir.path()).unwrap();
    assert_eq!(obs.objects().len(), 1);
}

#[test]
fn two_different_objects_with_one_identity_are_an_error_naming_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let mine = JOB.replace(", uid: u-1, resourceVersion: \"7\"", "");
    write(dir.path(), "gang-train.yaml", &mine);
    write(
        dir.path(),
        "gang-train.orig.yaml",
        &mine.replace("minAvailable: 4", "minAvailable: 3"),
    );
    let err = sources::files(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(matches!(err, InputError::Duplicate { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("gang-train.yaml") && text.contains("gang-train.orig.yaml"),
        "{text}"
    );
    let out = trainlab()
        .args(["check", "9", "--profile", "kind", "--files"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn malformed_metadata_is_bad_input_naming_the_field_not_a_missing_object() {
    for (metadata, field, found) in [
        ("metadata: [x]", "metadata", "a list"),
        (
            "metadata: {name: 12345}",
            "metadata.name",
            "the number 12345",
        ),
        (
            "metadata: {name: gang-train, namespace: [a]}",
            "metadata.namespace",
            "a list",
        ),
        (
            "metadata: {name: gang-train, labels: {a: {b: c}}}",
            "metadata.labels.a",
            "a mapping",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "job.yaml",
            &format!("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n{metadata}\nspec: {{}}\n"),
        );
        let out = trainlab()
            .args(["check", "9", "--profile", "kind", "--files"])
            .arg(dir.path().join("job.yaml"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{metadata}: {stderr}");
        assert!(
            stderr.contains(&format!("field `{field}`")) && stderr.contains(found),
            "{metadata}: {stderr}"
        );
        assert!(stderr.contains("document 1"), "{stderr}");
    }
}

#[test]
fn a_symlink_loop_in_a_snapshot_folder_is_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    write(&sub, "job.yaml", JOB);
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap();
    // A second name for the same file is read once too.
    std::os::unix::fs::symlink("sub/job.yaml", dir.path().join("again.yaml")).unwrap();
    let files = trainlab::observe::manifest_files(dir.path()).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    let obs = sources::snapshot(dir.path()).unwrap();
    assert_eq!(obs.objects().len(), 1);
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

#[test]
fn a_fifo_named_like_a_manifest_is_refused_by_name_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "job.yaml", JOB);
    mkfifo(&dir.path().join("pipe.yaml"));
    let out = trainlab()
        .args(["check", "volcano-gang", "--snapshot"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("pipe.yaml") && err.contains("named pipe"),
        "{err}"
    );
}

#[test]
fn a_fifo_given_directly_is_refused_and_one_without_a_manifest_name_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("notes");
    mkfifo(&fifo);
    let out = trainlab()
        .args(["check", "volcano-gang", "--files"])
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("notes") && err.contains("not a regular file or folder"),
        "{err}"
    );
    assert!(!err.contains("Not a directory"), "{err}");
    // In a folder, a FIFO that is not named like a manifest is ignored like a README.
    write(dir.path(), "job.yaml", JOB);
    let obs = sources::snapshot(dir.path()).unwrap();
    assert_eq!(obs.objects().len(), 1);
}

#[test]
fn a_snapshot_without_the_pods_says_they_were_not_saved_and_how_to_save_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mpijob-slots/solution-state");
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(&src).unwrap() {
        let f = f.unwrap();
        if f.file_name() != "pods.yaml" {
            std::fs::copy(f.path(), dir.path().join(f.file_name())).unwrap();
        }
    }
    let out = trainlab()
        .args(["check", "mpijob-slots", "--snapshot"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Not the learner's cleanPodPolicy: the instructor's folder simply lacks the pods.
    assert!(!text.contains("cleanPodPolicy"), "{text}");
    assert!(text.contains("the snapshot holds no pods"), "{text}");
    assert!(
        text.contains("trainlab snapshot LAB DIR") && text.contains("kubectl get pods -A -o yaml"),
        "{text}"
    );
}
