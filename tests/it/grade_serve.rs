//! `trainlab grade --serve`: the scoreboard served over HTTP, following the cluster. The page is
//! the `--html` page plus a status line and a script fed by Server-Sent Events; a change in the
//! cluster reaches an open page as the rows that changed; every request is checked (a token
//! when one is set, a loopback Host header otherwise); Ctrl-C ends it cleanly; grading never
//! writes. The same page in a real browser: tests/browser/.

use crate::room;
use crate::support::live;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use live::{Cluster, ALL_CRDS};

/// A `trainlab grade … --serve` running in the background, and the URL it printed.
struct Served {
    child: Child,
    /// `127.0.0.1:PORT`
    addr: String,
    /// The printed URL's query (`?token=…` or empty).
    query: String,
    stderr: mpsc::Receiver<String>,
}

/// A test that fails does not leave its server running.
impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(kubeconfig: Option<&std::path::Path>, args: &[&str]) -> Served {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("trainlab"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("TRAINLAB_NO_CACHE", "1")
        .args(["grade"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(k) = kubeconfig {
        cmd.env("KUBECONFIG", k);
    }
    let mut child = cmd.spawn().unwrap();
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The URL comes first; a trainlab that stops before printing it fails here with what it said.
    let mut said = Vec::new();
    let url = loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => match line.split_once("http://") {
                Some((_, rest)) => break rest.split_whitespace().next().unwrap().to_string(),
                None => said.push(line),
            },
            Err(_) => panic!("no URL printed; stderr: {said:?}"),
        }
    };
    let (addr, rest) = url.split_once('/').unwrap();
    Served {
        child,
        addr: addr.to_string(),
        query: rest.to_string(),
        stderr: rx,
    }
}

/// One HTTP/1.1 GET: status, headers (lower-case names) and body.
fn get(addr: &str, path: &str, extra: &[(&str, &str)]) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let host = extra
        .iter()
        .find(|(k, _)| *k == "Host")
        .map(|(_, v)| v.to_string())
        .unwrap_or_else(|| addr.to_string());
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in extra.iter().filter(|(k, _)| *k != "Host") {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v == "chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, headers, body)
}

/// A body sent in chunks (`/room.json` is written as the client reads it), put together.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").expect("a chunk's size line");
        let size = usize::from_str_radix(size.trim(), 16).expect("a hexadecimal chunk size");
        if size == 0 {
            return body;
        }
        body.push_str(&after[..size]);
        rest = after[size..]
            .strip_prefix("\r\n")
            .expect("a chunk ends its line");
    }
}

/// Waits until the board is graded (before that the page says it is grading).
fn wait_for_board(addr: &str, query: &str) {
    for _ in 0..600 {
        if get(addr, &format!("/{query}"), &[])
            .2
            .contains("id=\"live-status\"")
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the board never came");
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// An open event stream: its events as (name, data) in order.
fn events(addr: &str, path: &str) -> mpsc::Receiver<(String, String)> {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut name, mut data) = (String::new(), String::new());
        for line in BufReader::new(s).lines().map_while(Result::ok) {
            // Chunked framing lines (sizes) are not `field: value` lines of the stream.
            if let Some(v) = line.strip_prefix("event: ") {
                name = v.to_string();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            } else if line.is_empty()
                && !name.is_empty()
                && tx
                    .send((std::mem::take(&mut name), std::mem::take(&mut data)))
                    .is_err()
            {
                break;
            }
        }
    });
    rx
}

/// The next event whose data `f` accepts (60 s at most, then the test fails naming `what`).
fn next_event(
    rx: &mpsc::Receiver<(String, String)>,
    what: &str,
    f: &dyn Fn(&str, &Value) -> bool,
) -> Value {
    loop {
        let (name, data) = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no event: {what}"));
        let v: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
        if f(&name, &v) {
            return v;
        }
    }
}

fn mark(rows_event: &Value, cell: &str) -> Option<String> {
    rows_event["rows"]
        .as_array()?
        .iter()
        .flat_map(|r| r["cells"].as_array().into_iter().flatten())
        .find(|c| c["id"] == cell)
        .map(|c| c["mark"].as_str().unwrap().to_string())
}

fn interrupt(mut served: Served) -> (i32, String) {
    let ok = Command::new("kill")
        .args(["-INT", &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let status = served.child.wait().unwrap();
    let rest: Vec<String> = served.stderr.try_iter().collect();
    (status.code().unwrap_or(-1), rest.join("\n"))
}

#[test]
fn a_served_board_follows_the_cluster_and_pushes_only_the_rows_that_changed() {
    let c = Cluster::start(
        room::room(&[("alice", &["volcano-gang"]), ("bob", &[])]),
        &ALL_CRDS,
    );
    let served = serve(
        Some(&c.kubeconfig),
        &[
            "volcano-gang",
            "--learners",
            "alice,bob",
            "--serve",
            "127.0.0.1:0",
            "--interval",
            "1s",
        ],
    );
    assert_eq!(served.query, "", "loopback: no token");
    let stream = events(&served.addr, "/events");
    let first = next_event(&stream, "the first board", &|n, v| {
        n == "rows" && mark(v, "bob/volcano-gang").is_some()
    });
    assert_eq!(mark(&first, "alice/volcano-gang").as_deref(), Some("done"));
    assert_eq!(
        mark(&first, "bob/volcano-gang").as_deref(),
        Some("not-started")
    );

    // The page itself: the file's page, allowed to connect back, with its live status.
    let (status, headers, page) = get(&served.addr, "/", &[]);
    assert_eq!(status, 200);
    let csp = header(&headers, "content-security-policy").unwrap();
    assert!(
        csp.contains("connect-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert_eq!(header(&headers, "referrer-policy"), Some("no-referrer"));
    assert!(page.contains("id=\"live-status\""), "status line");
    assert!(page.contains("data-cell=\"bob/volcano-gang\""));
    assert!(
        page.contains("connect-src 'self'"),
        "the page's own policy too"
    );

    // bob starts: his namespace and a Volcano Job appear.
    c.emu.create(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bob-volcano-gang"}}),
    );
    let job = room::as_created("bob", "volcano-gang", "solution-state", "Job");
    c.emu.create(
        "/apis/batch.volcano.sh/v1alpha1/namespaces/bob-volcano-gang/jobs",
        &job,
    );
    let later = next_event(&stream, "bob's new grade", &|n, v| {
        n == "rows" && mark(v, "bob/volcano-gang").is_some_and(|m| m != "not-started")
    });
    assert_eq!(later["changed"], json!(["bob/volcano-gang"]), "{later}");
    assert_eq!(
        mark(&later, "alice/volcano-gang"),
        None,
        "alice's row did not change: not pushed"
    );
    assert!(
        later["room_score"].is_string() && later["confirmed"].is_string(),
        "{later}"
    );

    // A learner's detail and the room's document, from the same board.
    let (status, _, detail) = get(&served.addr, "/learner/bob", &[]);
    assert_eq!(status, 200);
    assert!(
        detail.contains("data-check=") && detail.contains("bob"),
        "{detail}"
    );
    // What the page asks for when bob's cell is opened: his new outcomes, from this board.
    let (status, headers, cells) = get(&served.addr, "/cells.json?learner=bob", &[]);
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("application/json"));
    let cells: Value = serde_json::from_str(&cells).unwrap();
    let cell = &cells["cells"][0];
    assert_eq!(cell["id"], "bob/volcano-gang");
    assert_ne!(cell["mark"], "not-started", "{cell}");
    assert!(!cell["outcomes"].as_array().unwrap().is_empty(), "{cell}");
    assert!(cells["version"].as_u64().unwrap() >= later["version"].as_u64().unwrap());
    assert!(
        page.contains("\"cells\":[]}</script>"),
        "the page itself embeds no cell's details"
    );
    let (status, _, doc) = get(&served.addr, "/room.json", &[]);
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&doc).unwrap();
    let bob = doc["learners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "bob")
        .unwrap();
    assert_ne!(bob["cells"][0]["mark"], "not-started", "{bob}");

    let (code, said) = interrupt(served);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("trainlab: Live: following the cluster ("),
        "the terminal says how the watches stand: {said}"
    );
    next_event(&stream, "the page told trainlab stopped", &|n, v| {
        n == "status" && v["state"] == "ended"
    });
    // Only the test's two POSTs wrote; serving and grading never did.
    let writes: Vec<_> = c
        .emu
        .requests()
        .into_iter()
        .filter(|r| !matches!(r.method.as_str(), "GET"))
        .collect();
    assert_eq!(writes.len(), 2, "{writes:?}");
}

#[test]
fn a_board_with_a_token_refuses_every_request_without_it() {
    let token = "a-test-token-of-24-chars";
    let served = serve(
        None,
        &["--demo", "--serve", "127.0.0.1:0", "--token", token],
    );
    assert_eq!(served.query, format!("?token={token}"));
    wait_for_board(&served.addr, &served.query);
    for path in [
        "/",
        "/events",
        "/room.json",
        "/learner/aiko",
        "/cells.json?learner=aiko",
    ] {
        let (status, _, body) = get(&served.addr, path, &[]);
        assert_eq!(status, 403, "{path}");
        assert!(body.contains("token"), "says what is missing: {body}");
        let sep = if path.contains('?') { '&' } else { '?' };
        let (status, _, _) = get(
            &served.addr,
            &format!("{path}{sep}token=wrong-token-of-24-chars"),
            &[],
        );
        assert_eq!(status, 403, "{path} with a wrong token");
    }
    let (status, _, page) = get(&served.addr, &format!("/?token={token}"), &[]);
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!("room.json?token={token}")),
        "links carry the token"
    );
    let bearer = format!("Bearer {token}");
    let (status, _, doc) = get(&served.addr, "/room.json", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(
        doc["learners"].as_array().unwrap().len(),
        8,
        "the demo room"
    );
    let (status, _, detail) = get(&served.addr, &format!("/learner/aiko?token={token}"), &[]);
    assert_eq!(status, 200);
    assert!(detail.contains("whole-node-gpus"), "aiko's checks");
    let (status, _, _) = get(&served.addr, &format!("/learner/nobody?token={token}"), &[]);
    assert_eq!(status, 404);
    let (status, _, cells) = get(
        &served.addr,
        &format!("/cells.json?learner=aiko&token={token}"),
        &[],
    );
    assert_eq!(status, 200);
    assert!(cells.contains("whole-node-gpus"), "aiko's checks: {cells}");
    let (status, _, said) = get(
        &served.addr,
        &format!("/cells.json?learner=nobody&token={token}"),
        &[],
    );
    assert_eq!((status, said.contains("nobody")), (404, true), "{said}");
    let (status, _, said) = get(&served.addr, &format!("/cells.json?token={token}"), &[]);
    assert_eq!(
        (status, said.contains("learner=NAME")),
        (400, true),
        "{said}"
    );
    let (code, said) = interrupt(served);
    assert_eq!(code, 0, "{said}");
}

#[test]
fn a_loopback_board_answers_only_a_loopback_host() {
    let served = serve(None, &["--demo", "--serve", "127.0.0.1:0"]);
    wait_for_board(&served.addr, "");
    let port = served.addr.rsplit(':').next().unwrap().to_string();
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        assert_eq!(get(&served.addr, "/", &[("Host", &host)]).0, 200, "{host}");
    }
    // A page elsewhere whose name was rebound to 127.0.0.1 sends its own name.
    let (status, _, _) = get(
        &served.addr,
        "/room.json",
        &[("Host", &format!("evil.example:{port}"))],
    );
    assert_eq!(status, 403);
    let (code, said) = interrupt(served);
    assert_eq!(code, 0, "{said}");
}

#[test]
fn bad_serve_arguments_are_exit_2_before_anything_is_read() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let at = format!("127.0.0.1:{port}");
    for (args, says) in [
        (vec!["--demo", "--serve", "nowhere"], "is not an address"),
        (
            vec!["--demo", "--serve", "127.0.0.1:0", "-o", "json"],
            "/room.json",
        ),
        (
            vec!["--demo", "--serve", "127.0.0.1:0", "--token", "short"],
            "at least 16",
        ),
        (
            vec!["--demo", "--token", "a-test-token-of-24-chars"],
            "--serve",
        ),
        (vec!["--demo", "--serve", at.as_str()], "another port"),
    ] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("trainlab"))
            .env("LANG", "C.UTF-8")
            .arg("grade")
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    drop(taken);
}

#[test]
fn credentials_the_cluster_refuses_while_following_end_the_run_with_exit_3_saying_so() {
    let c = Cluster::start(room::room(&[("alice", &["volcano-gang"])]), &ALL_CRDS);
    c.emu.fault(
        Some("GET"),
        "/apis/batch.volcano.sh/v1alpha1/jobs",
        false,
        crate::support::emulator::Fault::Status(401, "Unauthorized".into()),
    );
    let mut served = serve(
        Some(&c.kubeconfig),
        &[
            "volcano-gang",
            "--learners",
            "alice",
            "--serve",
            "127.0.0.1:0",
        ],
    );
    let status = served.child.wait().unwrap();
    // The child has exited: its stderr ends, and so does the channel.
    let said = served.stderr.iter().collect::<Vec<_>>().join("\n");
    assert_eq!(status.code(), Some(3), "an environment error: {said}");
    assert!(
        said.contains("refused the credentials") && said.contains("401"),
        "{said}"
    );
    // Nothing was written to the cluster.
    assert!(c.emu.requests().iter().all(|r| r.method == "GET"));
}
