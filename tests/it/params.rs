//! `--param` (issue 31 §1): a parameter the lab's grading does not read, a zero or absurd count,
//! and a repeat with another value are bad input (exit 2) naming the parameter.

use std::path::Path;

use assert_cmd::Command;

fn trainlab() -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env("KUBECONFIG", "/nonexistent/trainlab-test-kubeconfig");
    c
}

/// `check LAB --files` the lab's reference answer (`solution/`) with extra `--param` arguments.
fn check_answer_with(lab: &str, folder: &str, params: &[&str]) -> std::process::Output {
    let files = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("labs")
        .join(folder)
        .join("solution");
    let mut c = trainlab();
    c.args(["check", lab, "--files"]).arg(files);
    for p in params {
        c.args(["--param", p]);
    }
    c.output().unwrap()
}

#[test]
fn a_param_the_lab_does_not_read_is_refused_naming_it() {
    for (lab, folder, param) in [
        ("9", "09-volcano-gang", "replicas=7"),
        ("2", "02-parallelism-3d", "tp=0"),
    ] {
        let out = check_answer_with(lab, folder, &[param]);
        let err = String::from_utf8_lossy(&out.stderr);
        let name = param.split('=').next().unwrap();
        assert_eq!(out.status.code(), Some(2), "{param}: {err}");
        assert!(
            err.contains(&format!(
                "--param {name}: grading lab {lab} does not read it"
            )),
            "{param}: {err}"
        );
    }
}

#[test]
fn a_zero_or_absurd_number_is_refused_with_its_bounds() {
    for (lab, folder, param) in [
        ("13", "13-mpijob-slots", "gpus_per_worker=0"),
        ("9", "09-volcano-gang", "gpu_nodes=2147483647"),
        ("9", "09-volcano-gang", "gpus_per_node=-1"),
    ] {
        let out = check_answer_with(lab, folder, &[param]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{param}: {err}");
        assert!(
            err.contains(&format!(
                "--param {param}: expected a whole number from 1 to 65535"
            )),
            "{param}: {err}"
        );
        assert!(!err.contains("2147483648"), "{err}");
    }
    // A value in range still grades.
    let out = check_answer_with("9", "09-volcano-gang", &["gpu_nodes=3"]);
    assert_ne!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_repeated_param_must_agree_with_itself() {
    let out = check_answer_with("9", "09-volcano-gang", &["gpu_nodes=2", "gpu_nodes=3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--param gpu_nodes is given twice with different values (2 and 3)"),
        "{err}"
    );
    let same = check_answer_with("9", "09-volcano-gang", &["gpu_nodes=3", "gpu_nodes=3"]);
    let again = check_answer_with("9", "09-volcano-gang", &["gpu_nodes=3"]);
    assert_eq!(same.status.code(), again.status.code());
    assert_eq!(same.stdout, again.stdout);
}
