//! Bad input never becomes a grade: objects saved twice are counted once, two different objects
//! with one identity are an error naming both files, and malformed metadata is an error naming
//! the field — each exit 2 at the CLI, never a learner fail.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
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
fn an_implicit_namespace_is_the_applied_one_so_two_versions_are_an_error_in_either_order() {
    // The lab's own answer with its namespace implicit (as `kubectl apply -n` takes it), and a
    // broken copy naming the lab namespace: one object once defaulted, two contents.
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/09-volcano-gang/solution/gang-train.yaml"),
    )
    .unwrap();
    assert!(
        !good.contains("namespace:"),
        "the answer leaves its namespace implicit"
    );
    let broken = good.replacen(
        "name: gang-train\n",
        "name: gang-train\n  namespace: trainlab-volcano-gang\n",
        1,
    );
    assert_ne!(broken, good);
    let broken = broken.replace("minAvailable: 4", "minAvailable: 1");
    for order in [
        ["a-good.yaml", "b-broken.yaml"],
        ["b-good.yaml", "a-broken.yaml"],
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), order[0], &good);
        write(dir.path(), order[1], &broken);
        let out = trainlab()
            .args(["check", "9", "--profile", "kind", "--files"])
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{order:?}: {stderr}");
        assert!(
            stderr.contains(order[0]) && stderr.contains(order[1]),
            "{order:?}: {stderr}"
        );
    }
    // The same content with and without the namespace field is one object.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", &good);
    write(
        dir.path(),
        "b.yaml",
        &good.replacen(
            "name: gang-train\n",
            "name: gang-train\n  namespace: trainlab-volcano-gang\n",
            1,
        ),
    );
    assert_eq!(
        sources::files(&[dir.path().to_path_buf()])
            .unwrap()
            .objects()
            .len(),
        1
    );
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

// ---------------------------------------------------------------------------------------------
// Writing: only regular files are replaced, and a failed write is an error (issue 21, items 1-2)

/// The binary with stdout going to `/dev/full` (every write fails with ENOSPC).
fn to_full_disk(args: &[&str]) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    std::process::Command::new(assert_cmd::cargo::cargo_bin("trainlab"))
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env("KUBECONFIG", "/nonexistent/trainlab-test-kubeconfig")
        .args(args)
        .stdout(full)
        .output()
        .unwrap()
}

/// The binary run by `sh` with `redirect` on its command line (`>&-`, `>/dev/null`).
fn with_stdout_redirect(redirect: &str, args: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$0\" {args} {redirect}"))
        .arg(assert_cmd::cargo::cargo_bin("trainlab"))
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .output()
        .unwrap()
}

#[test]
fn a_closed_standard_output_is_an_error_and_dev_null_is_a_choice() {
    let out = with_stdout_redirect(">&-", "list");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("standard output is closed (`>&-`)"),
        "{stderr}"
    );
    let out = with_stdout_redirect(">/dev/null", "list");
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    assert!(out.stderr.is_empty(), "{:?}", out);
}

#[test]
fn output_that_cannot_be_written_is_an_error_naming_standard_output() {
    for args in [
        &["grade", "--demo", "-o", "json"][..],
        &["grade", "--demo", "-o", "csv"],
        &["list"],
        &["show", "9"],
        &["rbac"],
    ] {
        let out = to_full_disk(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr
                .contains("could not write the output to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_reader_that_closes_the_pipe_early_is_not_an_error() {
    use std::io::Read as _;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("trainlab"))
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .args(["grade", "--demo", "-o", "csv"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe as `| head -c1` does.
    let mut one = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut one).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("could not write"), "{stderr}");
    assert_ne!(out.status.code(), Some(2), "{stderr}");
}

#[test]
fn grade_html_refuses_a_device_a_fifo_and_a_symlink_and_leaves_them_as_they_were() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.html");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let target = dir.path().join("elsewhere.html");
    std::fs::write(&target, "keep me").unwrap();
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for (path, what) in [
        (Path::new("/dev/full"), "a device"),
        (fifo.as_path(), "a named pipe (FIFO)"),
        (link.as_path(), "a symbolic link"),
    ] {
        trainlab()
            .args(["grade", "--demo", "--html"])
            .arg(path)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "that is {what}, not a regular file"
            )));
    }
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
}

#[test]
fn grade_html_replaces_a_regular_file_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("room.html");
    std::fs::write(&page, "old page").unwrap();
    trainlab()
        .args(["grade", "--demo", "-o", "csv", "--html"])
        .arg(&page)
        .assert()
        .success();
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(
        text.starts_with("<!DOCTYPE html>"),
        "{}",
        &text[..40.min(text.len())]
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("room.html")]);
}

// ---------------------------------------------------------------------------------------------
// Names that go into request paths (issue 21, item 4; item 17's long learner)

#[test]
fn a_namespace_that_is_not_a_dns_label_is_refused_before_any_request() {
    // The kubeconfig does not exist: any attempt to connect would be an environment error
    // (exit 3), so exit 2 with the reason shows nothing was requested.
    for (ns, why) in [
        ("ns/../../api", "lowercase letters, digits and `-`"),
        ("x?y=1", "lowercase letters, digits and `-`"),
        ("", "it is empty"),
        (&"n".repeat(64), "it has 64 characters, at most 63"),
    ] {
        for command in [
            &["check", "9", "-n"][..],
            &["snapshot", "9", "/tmp/trainlab-never-written", "-n"],
            &["start", "9", "-n"],
            &["solve", "9", "-n"],
            &["reset", "9", "--yes", "-n"],
        ] {
            trainlab()
                .args(command)
                .arg(ns)
                .assert()
                .code(2)
                .stderr(predicates::str::contains("not a valid namespace name"))
                .stderr(predicates::str::contains(why));
        }
    }
}

#[test]
fn check_learner_refuses_a_name_whose_namespace_is_too_long_as_grade_does() {
    let learner = "a".repeat(63);
    trainlab()
        .args(["check", "9", "--learner", &learner])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "--learner {learner}: the namespace `{learner}-volcano-gang`: not a valid namespace name: it has 76 characters"
        )));
}

// ---------------------------------------------------------------------------------------------
// Kubeconfig (issue 21, item 8)

fn kubeconfig_with_server(dir: &Path, server: &str) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"{server}\"}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\nusers:\n- name: u\n  user: {{token: abc}}\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_server_without_a_scheme_or_with_another_is_bad_input_naming_the_field_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for (server, says) in [
        (
            "127.0.0.1:18002",
            "without a scheme; write it as `https://127.0.0.1:18002`",
        ),
        (
            "ftp://127.0.0.1:18002",
            "whose scheme `ftp` is not one an API server speaks",
        ),
    ] {
        let kc = kubeconfig_with_server(dir.path(), server);
        let out = trainlab()
            .args(["check", "9", "--kubeconfig"])
            .arg(&kc)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{server}: {stderr}");
        assert!(stderr.contains("clusters[].cluster.server"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

// ---------------------------------------------------------------------------------------------
// What a server sends (issue 21, items 9, 10, 12, 13): a scripted HTTP server on 127.0.0.1

/// The paths a [`scripted_server`] was asked for, in order.
type Asked = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// How many times `path` was asked for.
fn asked(paths: &Asked, path: &str) -> usize {
    paths.lock().unwrap().iter().filter(|p| *p == path).count()
}

/// A server that answers every request with `answer` (written by the closure, which may drip
/// it), noting the path of each request. Runs until the test process ends.
fn scripted_server(
    answer: impl Fn(&mut std::net::TcpStream) + Send + Sync + 'static,
) -> (String, Asked) {
    use std::io::{BufRead as _, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count: Asked = Default::default();
    let seen = count.clone();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (seen, answer) = (seen.clone(), answer.clone());
            std::thread::spawn(move || loop {
                // One request head per loop (keep-alive connections send several).
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let mut request_line: Option<String> = None;
                while reader.read_line(&mut line).unwrap_or(0) > 0 {
                    request_line.get_or_insert_with(|| line.clone());
                    if line == "\r\n" {
                        break;
                    }
                    line.clear();
                }
                let Some(request_line) = request_line else {
                    return;
                };
                // "GET /version HTTP/1.1"
                let path = request_line.split(' ').nth(1).unwrap_or_default();
                seen.lock().unwrap().push(path.to_string());
                answer(&mut stream);
            });
        }
    });
    (url, count)
}

fn check_against(url: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_with_server(dir.path(), url);
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("trainlab"))
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env("TRAINLAB_CACHE_DIR", dir.path().join("cache"))
        .args(["check", "9", "--kubeconfig"])
        .arg(&kc)
        .args(extra)
        .output()
        .unwrap();
    out
}

fn reply(stream: &mut std::net::TcpStream, head: &str, body: &str) {
    use std::io::Write as _;
    let _ = write!(
        stream,
        "HTTP/1.1 {head}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
}

#[test]
fn a_server_asking_to_wait_longer_than_the_budget_is_an_error_saying_how_long() {
    let (url, count) =
        scripted_server(|s| reply(s, "429 Too Many Requests\r\nretry-after: 3600", "slow down"));
    let out = check_against(&url, &["--request-timeout", "5s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("answered 429 and asked to wait 3600 s"),
        "{stderr}"
    );
    // Discovery's roots went out beside `/version` and were not retried either.
    assert_eq!(asked(&count, "/version"), 1, "not retried");
    assert!(asked(&count, "/api") <= 1 && asked(&count, "/apis") <= 1);
}

#[test]
fn throttling_is_retried_at_most_twice_within_the_budget() {
    let (url, count) =
        scripted_server(|s| reply(s, "429 Too Many Requests\r\nretry-after: 1", "slow down"));
    let out = check_against(&url, &["--request-timeout", "10s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("answered 429 Too Many Requests"),
        "{stderr}"
    );
    // /version: one request and two retries, then the error (discovery's roots, sent beside
    // it, as often at most); nothing else is tried.
    assert_eq!(asked(&count, "/version"), 3, "{stderr}");
    let all = count.lock().unwrap().clone();
    assert!(
        all.iter()
            .all(|p| ["/version", "/api", "/apis"].contains(&p.as_str())),
        "{all:?}"
    );
    assert!(
        asked(&count, "/api") <= 3 && asked(&count, "/apis") <= 3,
        "{all:?}"
    );
}

#[test]
fn a_body_that_drips_is_cut_at_the_request_timeout() {
    let (url, count) = scripted_server(|s| {
        use std::io::Write as _;
        let _ = write!(s, "HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n");
        for _ in 0..100_000 {
            if s.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
    let out = check_against(&url, &["--request-timeout", "2s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    // Cut by the timeout (the body would take 500 s), and a timeout is not retried.
    assert!(stderr.contains("no answer within 2s"), "{stderr}");
    assert_eq!(asked(&count, "/version"), 1, "not retried: {stderr}");
    assert!(asked(&count, "/api") <= 1 && asked(&count, "/apis") <= 1);
}

#[test]
fn request_timeout_zero_means_no_timeout_as_in_kubectl() {
    let (url, _) = scripted_server(|s| {
        std::thread::sleep(std::time::Duration::from_millis(300));
        reply(
            s,
            "500 Internal Server Error",
            "<html><body>oops</body></html>",
        )
    });
    let out = check_against(&url, &["--request-timeout", "0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("within 0s"), "{stderr}");
    assert!(stderr.contains("answered 500"), "{stderr}");
}

#[test]
fn a_server_that_is_no_api_server_is_described_once_in_plain_words() {
    for (head, body, says) in [
        (
            "500 Internal Server Error",
            "<html>\n<body>backend down</body></html>",
            "the server answered 500 Internal Server Error: <html>",
        ),
        (
            "200 OK",
            "<!DOCTYPE html><title>login</title>",
            "not the JSON an API server sends",
        ),
    ] {
        let (url, _) = scripted_server(move |s| reply(s, head, body));
        let out = check_against(&url, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(
            stderr.contains("not as a Kubernetes API server"),
            "{stderr}"
        );
        assert!(!stderr.contains("Status {"), "no debug dump: {stderr}");
        assert_eq!(stderr.matches("backend down").count(), 0, "{stderr}");
    }
}

#[test]
fn a_file_larger_than_the_input_limit_is_refused_without_reading_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    // Sparse: 4 GB on paper, nothing on disk. Zeros are NUL bytes: refused at the first block.
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(4 << 30).unwrap();
    trainlab()
        .args(["check", "9", "--files"])
        .arg(&big)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("a NUL byte at offset 0"));
    // Text over the limit: refused naming the flag that raises it.
    let text = dir.path().join("text.yaml");
    std::fs::write(&text, "# padding\n".repeat(200_000)).unwrap();
    trainlab()
        .args(["check", "9", "--max-input-mib", "1", "--files"])
        .arg(&text)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "larger than 1 MiB, the most trainlab reads from one input (raise it with --max-input-mib)",
        ));
}

#[test]
fn an_answer_larger_than_the_input_limit_is_refused_naming_the_flag() {
    let (url, _) = scripted_server(|s| {
        use std::io::Write as _;
        let body = vec![b' '; 3 << 20];
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(&body);
    });
    let out = check_against(&url, &["--max-input-mib", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("larger than 1 MiB, the most trainlab reads from one answer (raise it with --max-input-mib)"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// Snapshots as `show` advises saving them (issue 21, items 6-7)

/// Lab 9's solution state, as files in a fresh folder.
fn lab9_snapshot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/volcano-gang/solution-state");
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    dir
}

#[test]
fn a_snapshot_lacking_kinds_the_lab_reads_is_not_graded_never_100_percent() {
    let dir = lab9_snapshot();
    // The saved state has no nodes.yaml or pods.yaml: five checks cannot be judged.
    assert!(!dir.path().join("pods.yaml").exists());
    let out = trainlab()
        .args(["check", "9", "--snapshot"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("not graded (the snapshot did not save what it reads): nodes, pods"),
        "{stdout}"
    );
    assert!(!stdout.contains("100"), "{stdout}");
    let json = trainlab()
        .args(["check", "9", "-o", "json", "--snapshot"])
        .arg(dir.path())
        .output()
        .unwrap();
    // One lab: the document is its report.
    let lab: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(lab["score"]["percent"], serde_json::Value::Null, "{lab}");
    assert_eq!(lab["not_saved"], serde_json::json!(["nodes", "pods"]));
}

#[test]
fn an_empty_list_file_or_a_typed_list_counts_as_saved() {
    for (name, text) in [
        ("pods.yaml", "apiVersion: v1\nkind: List\nitems: []\n"),
        ("pods.yaml", ""),
        (
            "saved-pods.yaml",
            "apiVersion: v1\nkind: PodList\nitems: []\n",
        ),
    ] {
        let dir = lab9_snapshot();
        write(dir.path(), name, text);
        let out = trainlab()
            .args(["check", "9", "-o", "json", "--snapshot"])
            .arg(dir.path())
            .output()
            .unwrap();
        let lab: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            lab["not_saved"],
            serde_json::json!(["nodes"]),
            "{name}: {lab}"
        );
        let gang_held = lab["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["check"] == "gang-held")
            .unwrap();
        assert_ne!(
            gang_held["status"], "skipped",
            "{name}: pods were saved: {gang_held}"
        );
    }
}

#[test]
fn a_list_inside_a_list_is_read_as_its_items() {
    let dir = tempfile::tempdir().unwrap();
    let job = JOB.replace('\n', "\n    ");
    write(
        dir.path(),
        "nested.yaml",
        &format!("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - {}\n", job.trim_end()),
    );
    let obs = sources::snapshot(dir.path()).unwrap();
    assert_eq!(obs.objects().len(), 1);
    assert_eq!(obs.objects()[0].kind(), "Job");
}

#[test]
fn a_sequence_where_a_mapping_belongs_is_bad_input_for_every_workload_kind() {
    let dir = tempfile::tempdir().unwrap();
    for (lab, head, expected) in [
        (
            "9",
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: gang-train}\n",
            "JobSpec",
        ),
        (
            "13",
            "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: nccl-allreduce}\n",
            "MpiJobSpec",
        ),
        (
            "10",
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: bf16-train}\n",
            "PyTorchJobSpec",
        ),
    ] {
        for spec in [
            "spec: [volcano, 4, [[worker, 4, 4, {}]]]\n",
            "spec: [\"echo hi\"]\n",
        ] {
            write(dir.path(), "m.yaml", &format!("{head}{spec}"));
            trainlab()
                .args(["check", lab, "--files"])
                .arg(dir.path().join("m.yaml"))
                .assert()
                .code(2)
                .stderr(predicates::str::contains(format!(
                    "field `spec`: invalid type: sequence, expected struct {expected}"
                )));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Item 17: the smaller ones.

#[test]
fn check_help_names_the_json_schema_version_it_emits() {
    let out = trainlab().args(["check", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let version = trainlab::report::SCHEMA_VERSION;
    assert!(
        help.contains(&format!("schema version {version}")),
        "{help}"
    );
}

#[test]
fn a_huge_lab_name_is_echoed_cut_short_and_escaped() {
    let huge = format!("\u{1b}[31m{}", "x".repeat(100_000));
    let out = trainlab()
        .args(["check", &huge, "--demo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.len() < 2_000, "{} bytes", err.len());
    assert!(err.contains("unknown lab `\\x1b[31mxxx"), "{err}");
    assert!(err.contains("…`"), "{err}");
    assert!(!err.contains('\u{1b}'), "a raw escape reached the terminal");
}

#[test]
fn files_dash_reads_the_manifests_from_standard_input() {
    trainlab()
        .args(["check", "9", "--files", "-", "-o", "json"])
        .write_stdin(JOB)
        .assert()
        .stdout(predicates::str::contains("\"source\""))
        .stdout(predicates::str::contains("standard input"));
    trainlab()
        .args(["check", "9", "--files", "-"])
        .write_stdin("")
        .assert()
        .code(2);
}

#[test]
fn contexts_with_an_empty_or_a_repeated_name_say_which() {
    trainlab()
        .args(["grade", "--contexts", ",", "9"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--contexts has an empty name"));
    trainlab()
        .args(["grade", "--contexts", "kind-a,kind-a", "9"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--contexts names `kind-a` twice"));
}

#[test]
fn a_lab_named_twice_is_graded_once() {
    let out = trainlab()
        .args(["check", "9", "9", "volcano-gang", "--demo", "-o", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let labs = v["results"].as_array().map_or(1, |r| r.len());
    assert_eq!(labs, 1, "{text}");
}

#[test]
fn a_manifest_for_another_namespace_or_kind_says_what_was_found_instead() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "other-ns.yaml",
        &JOB.replace("namespace: trainlab-volcano-gang", "namespace: team-a"),
    );
    let out = trainlab()
        .args(["check", "9", "--files"])
        .arg(dir.path().join("other-ns.yaml"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("found: gang-train (metadata.namespace: team-a)"),
        "{text}"
    );
    // A batch/v1 Job where the Volcano Job belongs.
    write(
        dir.path(),
        "batch.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: gang-train, namespace: trainlab-volcano-gang}\nspec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}\n",
    );
    let out = trainlab()
        .args(["check", "9", "--files"])
        .arg(dir.path().join("batch.yaml"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("found: batch/v1 Job gang-train"), "{text}");
}

#[test]
fn control_characters_in_a_manifest_value_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "job.yaml",
        &JOB.replace(
            "schedulerName: volcano",
            "schedulerName: \"\\e[2J\\e[31mvolcano\\r\"",
        ),
    );
    let out = trainlab()
        .args(["check", "9", "--files"])
        .arg(dir.path().join("job.yaml"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    assert!(text.contains("\\x1b[2J"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Items 13 and 15: kubeconfig problems in the user's terms.

fn kubeconfig_with_ca(dir: &Path, ca: &str) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:9', certificate-authority: {ca}}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_kubeconfig_problem_names_the_file_field_or_line_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let missing = kubeconfig_with_ca(dir.path(), "/nonexistent/ca.pem");
    trainlab()
        .env("KUBECONFIG", &missing)
        .args(["check", "9"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(
            "the certificate authority file /nonexistent/ca.pem (`clusters[].cluster.certificate-authority`) cannot be read",
        ))
        .stderr(predicates::str::contains("'\"").not());

    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "this is not a certificate\n").unwrap();
    let kc = kubeconfig_with_ca(dir.path(), &not_pem.display().to_string());
    trainlab()
        .env("KUBECONFIG", &kc)
        .args(["check", "9"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("holds no PEM certificate"))
        .stderr(predicates::str::contains(not_pem.display().to_string()));

    let twice = dir.path().join("twice");
    std::fs::write(
        &twice,
        "apiVersion: v1\nkind: Config\nclusters: []\nclusters: []\n",
    )
    .unwrap();
    trainlab()
        .env("KUBECONFIG", &twice)
        .args(["check", "9"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "line 4 column 1: the key `clusters` is written twice",
        ))
        .stderr(predicates::str::contains("DuplicateKeyPolicy").not());
}

// --- memory: the files of a command together, objects counted as well as bytes ------------------

#[test]
fn files_that_are_each_under_the_byte_limit_are_refused_together() {
    let dir = tempfile::tempdir().unwrap();
    // Two files of 0.6 MiB: each under --max-input-mib 1, together over it.
    let padding = "# padding\n".repeat(63_000);
    for name in ["a.yaml", "b.yaml"] {
        write(
            dir.path(),
            name,
            &format!("{padding}apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n"),
        );
    }
    let out = trainlab()
        .args(["check", "9", "--max-input-mib", "1", "--files"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the files together are larger than 1 MiB"),
        "{stderr}"
    );
}

#[test]
fn more_documents_than_max_objects_are_refused_before_they_are_all_built() {
    let dir = tempfile::tempdir().unwrap();
    let docs: String = (0..2_000)
        .map(|i| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n---\n"))
        .collect();
    write(dir.path(), "many.yaml", &docs);
    let out = trainlab()
        .args(["check", "9", "--max-objects", "1000", "--files"])
        .arg(dir.path().join("many.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("more than 1000 objects"), "{stderr}");
    assert!(stderr.contains("--max-objects"), "{stderr}");
    // The same objects as a JSON list, and spread over two files, are counted alike.
    let items: Vec<String> = (0..600)
        .map(|i| {
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"j{i}"}}}}"#)
        })
        .collect();
    for name in ["x.json", "y.json"] {
        write(dir.path(), name, &format!("[{}]", items.join(",")));
    }
    std::fs::remove_file(dir.path().join("many.yaml")).unwrap();
    let out = trainlab()
        .args(["check", "9", "--max-objects", "1000", "--files"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("more than 1000 objects"), "{stderr}");
}

#[test]
fn yaml_nested_past_the_limit_is_said_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("apiVersion: v1\nkind: X\nspec:\n");
    for i in 0..70 {
        text.push_str(&format!("{}a:\n", "  ".repeat(i + 1)));
    }
    text.push_str(&format!("{}1\n", "  ".repeat(71)));
    write(dir.path(), "deep.yaml", &text);
    let out = trainlab()
        .args(["check", "9", "--files"])
        .arg(dir.path().join("deep.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nested more than 64 levels deep"),
        "{stderr}"
    );
    assert!(!stderr.contains("Depth {"), "{stderr}");
}

#[test]
fn a_utf16_file_and_an_empty_file_are_said_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    // "apiVersion: v1" as UTF-16LE with its byte-order mark, as PowerShell's `>` writes it.
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "apiVersion: v1\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    std::fs::write(dir.path().join("u16.yaml"), utf16).unwrap();
    std::fs::write(dir.path().join("empty.yaml"), "# TODO\n---\n").unwrap();
    for (file, says) in [
        ("u16.yaml", "UTF-16 text, not UTF-8: save it as UTF-8"),
        (
            "empty.yaml",
            "holds no Kubernetes object (empty, or only comments and `---`)",
        ),
    ] {
        let out = trainlab()
            .args(["check", "9", "--files"])
            .arg(dir.path().join(file))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(says), "{file}: {stderr}");
        assert!(!stderr.contains("NUL byte"), "{stderr}");
    }
}

#[test]
fn a_kubeconfig_context_naming_a_missing_cluster_or_an_empty_current_context_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let write_kc = |current: &str, cluster: &str| {
        let path = dir.path().join(format!("kubeconfig-{cluster}"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"https://127.0.0.1:1\"}}}}]\nusers: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: x, context: {{cluster: {cluster}, user: u}}}}]\ncurrent-context: {current}\n"
            ),
        )
        .unwrap();
        path
    };
    for (kc, says) in [
        (
            write_kc("x", "missing"),
            "context `x` names the cluster `missing`, which the kubeconfig does not define (clusters: c)",
        ),
        (
            write_kc("\"\"", "c"),
            "the kubeconfig has no current context; pass --context NAME",
        ),
    ] {
        let out = trainlab()
            .args(["check", "9", "--request-timeout", "2s", "--kubeconfig"])
            .arg(&kc)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn a_file_name_with_a_newline_or_an_escape_is_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bad\nname\u{1b}[31m.yaml",
        "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: [\n",
    );
    let out = trainlab()
        .args(["check", "9", "--files"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad\\nname\\x1b[31m.yaml"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no raw escape reaches the terminal"
    );
}

#[test]
fn a_refused_connection_says_nothing_listens_instead_of_raising_the_timeout() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = check_against(
        &format!("http://127.0.0.1:{port}"),
        &["--request-timeout", "5s"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the connection was refused (nothing listens at that address)"),
        "{stderr}"
    );
    assert!(!stderr.contains("raise --request-timeout"), "{stderr}");
}

#[test]
fn a_redirect_and_a_protobuf_answer_are_said_for_what_they_are() {
    for (head, says) in [
        (
            "302 Found\r\nlocation: https://login.example.com/sso",
            "answered 302 and redirects to https://login.example.com/sso: a Kubernetes API server never redirects",
        ),
        (
            "200 OK\r\ncontent-type: application/vnd.kubernetes.protobuf",
            "Content-Type application/vnd.kubernetes.protobuf, not the JSON trainlab asked for",
        ),
        (
            "200 OK\r\ncontent-type: text/html; charset=utf-8",
            "a web page (a login page or a proxy's error page?)",
        ),
    ] {
        let (url, _) = scripted_server(move |s| reply(s, head, "k8s\0\u{1}\u{2}"));
        let out = check_against(&url, &["--request-timeout", "5s"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{head}: {stderr}");
        assert!(stderr.contains(says), "{head}: {stderr}");
        assert!(stderr.contains("answered, but not as a Kubernetes API server"), "{stderr}");
        assert!(!stderr.contains("invalid utf-8"), "{stderr}");
    }
}

#[test]
fn insecure_skip_tls_verify_beside_a_certificate_authority_is_refused_as_kubectl_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\", insecure-skip-tls-verify: true, certificate-authority-data: \"LS0t\"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    let out = trainlab()
        .args(["check", "9", "--kubeconfig"])
        .arg(&kc)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("has both `insecure-skip-tls-verify: true` and a certificate authority"),
        "{stderr}"
    );
}

#[test]
fn an_answer_cut_short_is_said_to_be_cut_short_not_a_web_page() {
    // JSON that stops in the middle, with a length that matches what was sent.
    let (url, _) = scripted_server(|s| {
        reply(
            s,
            "200 OK\r\ncontent-type: application/json",
            "{\"major\":\"1\",\"minor\":",
        )
    });
    let out = check_against(&url, &["--request-timeout", "5s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("stopped in the middle of its JSON"),
        "{stderr}"
    );
    assert!(!stderr.contains("web page"), "{stderr}");

    // A length that promises more than the connection brings before it closes.
    let (url, _) = scripted_server(|s| {
        use std::io::Write as _;
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{{\"major\":\"1\""
        );
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    let out = check_against(&url, &["--request-timeout", "5s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the connection closed before the server's whole answer arrived"),
        "{stderr}"
    );
    assert!(!stderr.contains("web page"), "{stderr}");
}
