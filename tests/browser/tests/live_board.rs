//! `trainlab grade --serve` in a real browser: headless Chromium opens the served board, the
//! test changes the cluster (the Kubernetes API emulator of the root package's tests, run here
//! in-process on 127.0.0.1), and the learner's cell changes on the open page without a reload,
//! marked as just changed; Ctrl-C ends trainlab and the page says so. A screenshot is written
//! to `target/tmp/live-board.png`.

mod common;
#[path = "../../support/emulator/mod.rs"]
mod emulator;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{browser_sized, eval, trainlab};
use emulator::Emulator;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::Tab;
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Polls `expr` until `ok` accepts its value (60 s at most, then fails saying what it last was).
fn wait_until(tab: &Tab, what: &str, expr: &str, ok: &dyn Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let v = eval(tab, expr);
        if ok(&v) {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: still {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The objects of a saved state's YAML file, as a client would create them (no server fields).
fn manifest(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    // `kubectl get -o yaml` saves a List: its items are the objects.
    docs.into_iter()
        .filter(|d| !d.is_null())
        .flat_map(|d| match d["items"].as_array() {
            Some(items) if d["kind"] == "List" => items.clone(),
            _ => vec![d],
        })
        .map(|mut o| {
            for f in ["uid", "resourceVersion", "creationTimestamp", "generation"] {
                if let Some(m) = o["metadata"].as_object_mut() {
                    m.remove(f);
                }
            }
            if let Some(m) = o.as_object_mut() {
                m.remove("status");
            }
            o
        })
        .collect()
}

#[test]
fn the_served_board_changes_a_cell_when_the_cluster_changes_without_a_reload() {
    let data = root().join("tests/data");
    let emu = Emulator::start_from(&[&data.join("kind-nodes"), &data.join("kind-operators")]);
    emu.serve_crd("batch.volcano.sh", "v1alpha1", "Job", "jobs", true);
    emu.serve_crd(
        "scheduling.volcano.sh",
        "v1beta1",
        "PodGroup",
        "podgroups",
        true,
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");

    // The learner `trainlab`: the template's namespace is then the lab's usual one, the one the
    // saved state uses.
    let mut child = Command::new(trainlab())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("KUBECONFIG", &kubeconfig)
        .env("TRAINLAB_NO_CACHE", "1")
        .args([
            "grade",
            "volcano-gang",
            "--learners",
            "trainlab",
            "--interval",
            "1s",
        ])
        .args(["--serve", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let url = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "trainlab printed no URL"
        );
        if let Some((_, rest)) = line.split_once("http://") {
            break format!("http://{}", rest.split_whitespace().next().unwrap());
        }
    };
    // Keep reading stderr so trainlab never blocks on a full pipe.
    std::thread::spawn(move || for _ in err.lines() {});

    let profile = tempfile::tempdir().unwrap();
    let b = browser_sized(profile.path(), 1500, 900);
    let tab = b.new_tab().unwrap();
    let cell = "document.querySelector('td[data-cell=\"trainlab/volcano-gang\"]')";
    // Before the first round the page is a placeholder that looks again; then the board.
    tab.navigate_to(&url).unwrap();
    wait_until(
        &tab,
        "the board",
        &format!("{cell} && {cell}.dataset.mark"),
        &|v| v == "not-started",
    );
    wait_until(
        &tab,
        "the live status",
        "document.getElementById('live-status').dataset.state",
        &|v| v == "live",
    );
    // Set on this document: a reload would lose it.
    eval(&tab, "window.notReloaded = 42");

    let state = data.join("volcano-gang/solution-state");
    for ns in manifest(&state.join("namespace.yaml")) {
        emu.create("/api/v1/namespaces", &ns);
    }
    for job in manifest(&state.join("vcjob.yaml")) {
        emu.create(
            "/apis/batch.volcano.sh/v1alpha1/namespaces/trainlab-volcano-gang/jobs",
            &job,
        );
    }
    let mark = wait_until(
        &tab,
        "the cell to change",
        &format!("{cell}.dataset.mark"),
        &|v| v != "not-started",
    );
    assert_eq!(
        eval(&tab, "window.notReloaded"),
        42,
        "the page was not reloaded"
    );
    assert_eq!(
        eval(&tab, &format!("{cell}.classList.contains('changed')")),
        true,
        "the cell is marked as just changed ({mark})"
    );
    assert_ne!(eval(&tab, &format!("{cell}.textContent")), "");
    // The detail panel shows the new outcomes of the cell, asked of the server when opened
    // (the page embeds no cell's details).
    assert_eq!(
        eval(
            &tab,
            "JSON.parse(document.getElementById('room-data').textContent).cells.length"
        ),
        0
    );
    tab.evaluate(&format!("{cell}.click()"), false).unwrap();
    wait_until(
        &tab,
        "the cell's details",
        "document.getElementById('detail').hidden ? 0 : document.querySelectorAll('#detail li[data-check]').length",
        &|v| v.as_u64().is_some_and(|n| n > 0),
    );
    assert_eq!(
        eval(&tab, "document.getElementById('detail').dataset.cell"),
        "trainlab/volcano-gang"
    );

    let shot = root().join("target/tmp/live-board.png");
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    std::fs::write(&shot, png).unwrap();

    // Ctrl-C: trainlab ends cleanly and the open page says so.
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    wait_until(
        &tab,
        "the page to say trainlab stopped",
        "document.getElementById('live-status').dataset.state",
        &|v| v == "ended",
    );
    // Grading never wrote: only the test's creates did.
    let writes = emu
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .count();
    assert_eq!(writes, 2);
}
