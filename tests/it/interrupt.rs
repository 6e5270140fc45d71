//! Ctrl-C and SIGTERM in the middle of a command that changes the cluster (issue 31 §2): the
//! process ends at once with exit 130, saying what stays and what to run, also while it waits
//! on a server that never answers and while it waits at a `[y/N]` prompt.

use std::io::Read as _;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::live::{Cluster, LAB_CRDS};
use crate::support::pty::on_terminal;

/// A server that accepts connections and reads requests but never answers; counts connections.
fn silent_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut sink = [0u8; 4096];
                while stream.read(&mut sink).unwrap_or(0) > 0 {}
            });
        }
    });
    (url, seen)
}

/// `trainlab ARGS --kubeconfig K` against `url`, sent `signal` once it has connected; returns
/// the exit code, stderr and how long the process took to end after the signal.
fn signalled(
    url: &str,
    seen: &AtomicUsize,
    args: &[&str],
    signal: &str,
) -> (i32, String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!("apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"{url}\"}}}}]\nusers: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: kind-trainlab, context: {{cluster: c, user: u}}}}]\ncurrent-context: kind-trainlab\n"),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainlab"))
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env("TRAINLAB_CACHE_DIR", dir.path().join("cache"))
        .args(args)
        .args(["--request-timeout", "60s", "--kubeconfig"])
        .arg(&kc)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "trainlab never connected");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The request is in flight and will never be answered.
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    let ok = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{args:?}: still running 20 s after {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = sent.elapsed();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code().unwrap_or(-1), stderr, took)
}

#[test]
fn ctrl_c_while_reset_waits_on_the_cluster_ends_it_at_once_with_130_saying_what_to_run() {
    let (url, seen) = silent_server();
    let (code, stderr, took) = signalled(&url, &seen, &["reset", "9", "--yes"], "-INT");
    assert_eq!(code, 130, "{stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        stderr.contains("interrupted (Ctrl-C or SIGTERM): reset stopped in the middle"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Run the same reset command again"),
        "{stderr}"
    );
}

#[test]
fn sigterm_while_solve_applies_ends_it_at_once_with_130() {
    let (url, seen) = silent_server();
    let (code, stderr, took) =
        signalled(&url, &seen, &["solve", "9", "--profile", "kind"], "-TERM");
    assert_eq!(code, 130, "{stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(stderr.contains("stopped while applying"), "{stderr}");
}

#[test]
fn sigterm_while_setup_kind_waits_ends_it_with_130_saying_to_run_it_again() {
    let (url, seen) = silent_server();
    // The kubeconfig's context is kind-trainlab, the one setup kind touches.
    // Pinned files from a folder, as an offline room installs them.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pins = root.join("tests/data/setup/pins-wait.yaml");
    let from = root.join("tests/data/pins");
    let (pins, from) = (pins.to_str().unwrap(), from.to_str().unwrap());
    let (code, stderr, took) = signalled(
        &url,
        &seen,
        &[
            "setup",
            "kind",
            "--skip-create",
            "--pins",
            pins,
            "--from",
            from,
        ],
        "-TERM",
    );
    assert_eq!(code, 130, "{stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        stderr.contains("Run `trainlab setup kind` again"),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_at_resets_confirmation_prompt_ends_it_with_130_and_deletes_nothing() {
    let c = Cluster::start(vec![], &LAB_CRDS);
    let (code, _, stderr) = c.run(&["solve", "9", "--profile", "kind"]);
    assert_eq!(code, 0, "{stderr}");
    c.emu.clear_requests();
    let kubeconfig = c.kubeconfig.to_str().unwrap();
    // Ctrl-C typed on the terminal: the line discipline turns it into SIGINT.
    let out = on_terminal(
        &[
            env!("CARGO_BIN_EXE_trainlab"),
            "reset",
            "9",
            "--kubeconfig",
            kubeconfig,
        ],
        &[("[y/N]", "\u{3}")],
        "interrupted",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("EXIT 130"), "{text}");
    assert!(text.contains("reset stopped in the middle"), "{text}");
    let deletes: Vec<_> = c
        .requests()
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .collect();
    assert!(deletes.is_empty(), "{deletes:?}");
}
