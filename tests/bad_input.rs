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
