//! Workshop rooms: requests sent, wall time and peak RSS of `trainlab grade` against the API
//! emulator of tests/support/emulator/ with a per-request latency (as a real API server has):
//! one shared cluster with 100 and 1,000 learners × every gradable lab (and 1 learner × 1 lab),
//! and 100 clusters, one per learner, through `--contexts`.
//!
//!   cargo bench --bench room                       # 5 ms per request (shared), 50 ms (contexts)
//!   LEARNERS=1000 RUNS=3 ONLY=shared cargo bench --bench room
//!   CONTEXTS=100 CONTEXT_LATENCY_MS=50 CONCURRENCY=16 ONLY=contexts cargo bench --bench room
//!   TRAINLAB=/path/to/other/trainlab cargo bench --bench room
//!   CHUNK_SIZE=0 cargo bench --bench room          # `--chunk-size 0`: each kind in one response
//!   SERVE=1 LEARNERS=1000 cargo bench --bench room # serve the room until killed, print the command
//!                                                  # (to run trainlab by hand: -v, perf, valgrind)
//!   ONLY=watch cargo bench --bench room            # `grade --watch` of 1,000 learners: change →
//!   WATCH_LEARNERS=1000 CHANGES=20 IDLE_SECS=30    #   re-judged latency, idle CPU, RSS, requests
//!
//! Runs the built binary as an instructor does (`grade --all --learners … -o json`, `grade
//! --contexts … -o json`); wall time includes process start, not the bench's setup (seeding the
//! emulator with a room's objects, printed beside). Peak RSS is the child's VmHWM
//! (/proc/PID/status), sampled every millisecond until it exits. The emulator answers on one
//! thread of this process, so its work shares the machine with trainlab's. Not a test: nothing
//! here fails a build on a slow machine; the goals are printed beside.

#[path = "../tests/support/emulator/mod.rs"]
mod emulator;
#[path = "../tests/support/live.rs"]
#[allow(dead_code)] // the bench uses the CRD groups and the discovery paths only
mod live;
#[path = "../tests/grade_support/room.rs"]
mod room;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emulator::{Emulator, Fault};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Serves every CRD group the labs read.
fn serve_crds(emu: &Emulator) {
    live::serve(emu, &live::ALL_CRDS);
}

struct Run {
    wall: Duration,
    rss_kib: u64,
    requests: usize,
    discovery: usize,
    lists: usize,
    kinds: usize,
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The resource a LIST reads (`pods`, `jobs.batch.volcano.sh`), whatever its namespace.
fn resource(path: &str) -> String {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        ["api", _, .., plural] => plural.to_string(),
        ["apis", group, _, .., plural] => format!("{plural}.{group}"),
        _ => path.to_string(),
    }
}

fn run_once(binary: &Path, kubeconfig: &Path, args: &[String], emu: &Emulator) -> Run {
    emu.clear_requests();
    let started = Instant::now();
    // The discovery cache beside the kubeconfig: warm after the warm-up run, as an instructor's
    // second `grade` finds it.
    let cache = kubeconfig.with_file_name("trainlab-cache");
    let mut child = Command::new(binary)
        .env("KUBECONFIG", kubeconfig)
        .env("TRAINLAB_CACHE_DIR", cache)
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trainlab");
    let mut rss = 0;
    let status = loop {
        if let Some(k) = peak_rss_kib(child.id()) {
            rss = rss.max(k);
        }
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let wall = started.elapsed();
    let code = status.code().unwrap_or(-1);
    if code != 0 {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        panic!("trainlab {args:?} exited {code}:\n{err}");
    }
    let log = emu.requests();
    let discovery = log
        .iter()
        .filter(|r| live::is_version_or_discovery(&r.path))
        .count();
    let lists: Vec<&str> = log
        .iter()
        .filter(|r| !live::is_version_or_discovery(&r.path))
        .map(|r| r.path.as_str())
        .collect();
    let kinds: BTreeSet<String> = lists.iter().map(|p| resource(p)).collect();
    assert!(log.iter().all(|r| r.method == "GET"), "grade never writes");
    Run {
        wall,
        rss_kib: rss,
        requests: log.len(),
        discovery,
        lists: lists.len(),
        kinds: kinds.len(),
    }
}

/// The release binary, or `TRAINLAB`.
fn binary() -> PathBuf {
    std::env::var_os("TRAINLAB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_trainlab")))
}

/// Runs `args` once to warm up, then `runs` times, and prints the median run.
fn measure(name: &str, kubeconfig: &Path, args: &[String], emu: &Emulator, runs: usize) {
    let binary = binary();
    run_once(&binary, kubeconfig, args, emu); // warm-up (page cache, first connection)
    let mut all: Vec<Run> = (0..runs)
        .map(|_| run_once(&binary, kubeconfig, args, emu))
        .collect();
    all.sort_by_key(|r| r.wall);
    let median = &all[all.len() / 2];
    let rss_max = all.iter().map(|r| r.rss_kib).max().unwrap_or(0);
    println!(
        "{name:<34} {:>4} req ({:>3} discovery, {:>3} LIST/GET of {:>2} kinds)  wall median {:>7.1} ms (min {:>6.1}, max {:>6.1})  peak RSS {:>5.1} MB",
        median.requests,
        median.discovery,
        median.lists,
        median.kinds,
        median.wall.as_secs_f64() * 1000.0,
        all[0].wall.as_secs_f64() * 1000.0,
        all[all.len() - 1].wall.as_secs_f64() * 1000.0,
        rss_max as f64 / 1024.0
    );
}

/// One shared cluster: `learners` learners, each with every lab of `labs` solved in their own
/// namespaces. Returns the emulator, its kubeconfig (in `dir`) and the grading command.
fn shared_room(
    learners: usize,
    labs: &[&str],
    latency: Duration,
    dir: &Path,
) -> (Emulator, PathBuf, Vec<String>) {
    let names: Vec<String> = (0..learners).map(|i| format!("l{i:04}")).collect();
    let solved: Vec<(&str, &[&str])> = names.iter().map(|n| (n.as_str(), labs)).collect();
    let emu = Emulator::start(room::room(&solved));
    serve_crds(&emu);
    emu.fault(None, "/", false, Fault::Latency(latency));
    let kubeconfig = emu.kubeconfig(dir, "kind-trainlab");
    let mut args: Vec<String> = vec!["grade".into()];
    args.extend(labs.iter().map(|l| l.to_string()));
    args.extend([
        "--learners".into(),
        names.join(","),
        "-o".into(),
        "json".into(),
    ]);
    if let Ok(n) = std::env::var("CHUNK_SIZE") {
        args.extend(["--chunk-size".into(), n]);
    }
    (emu, kubeconfig, args)
}

fn shared(learners: usize, labs: &[&str], latency: Duration, runs: usize) {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("temp dir");
    let (emu, kubeconfig, args) = shared_room(learners, labs, latency, dir.path());
    let objects = emu.objects().len();
    let setup = started.elapsed();
    measure(
        &format!("{learners} learners × {} labs", labs.len()),
        &kubeconfig,
        &args,
        &emu,
        runs,
    );
    println!(
        "{:<34} (setup, not timed above: {objects} objects seeded in {:.1} s)",
        "",
        setup.as_secs_f64()
    );
}

/// One cluster per learner: one emulator holding one learner's solved labs in their usual
/// namespaces, reachable under `contexts` context names of one kubeconfig (each context is its
/// own client and connections, as separate clusters are).
fn contexts(contexts: usize, labs: &[&str], latency: Duration, runs: usize) {
    let mut seed = room::cluster_base();
    for lab in labs {
        seed.extend(room::load(&format!("{lab}/solution-state")));
    }
    let emu = Emulator::start(seed);
    serve_crds(&emu);
    emu.fault(None, "/", false, Fault::Latency(latency));
    let dir = tempfile::tempdir().expect("temp dir");
    let names: Vec<String> = (0..contexts).map(|i| format!("kind-l{i:03}")).collect();
    let url = emu.url();
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": names.iter().map(|n| serde_json::json!({"name": n, "cluster": {"server": url}})).collect::<Vec<_>>(),
        "users": names.iter().map(|n| serde_json::json!({"name": n, "user": {}})).collect::<Vec<_>>(),
        "contexts": names.iter().map(|n| serde_json::json!({"name": n, "context": {"cluster": n, "user": n}})).collect::<Vec<_>>(),
        "current-context": names[0],
    });
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, config.to_string()).expect("write kubeconfig");
    let mut args: Vec<String> = vec!["grade".into()];
    args.extend(labs.iter().map(|l| l.to_string()));
    args.extend([
        "--contexts".into(),
        names.join(","),
        "-o".into(),
        "json".into(),
    ]);
    if let Ok(n) = std::env::var("CONCURRENCY") {
        args.extend(["--concurrency".into(), n]);
    }
    measure(
        &format!("{contexts} clusters × {} labs", labs.len()),
        &kubeconfig,
        &args,
        &emu,
        runs,
    );
}

/// CPU seconds (user + system) the process has used, from /proc/PID/stat (fields 14 and 15,
/// in clock ticks; proc(5)).
fn cpu_seconds(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // sysconf(_SC_CLK_TCK) is 100 on Linux.
    Some(ticks / 100.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Measured on the project's 2-core machine (2026-12-06, 1,000 learners × 15 labs, 5 ms per
/// request): first LIST and judging 6.2 s; change → judged again and drawn p50 297 ms, p95
/// 331 ms; 0.00 CPU-s over 30 s idle; 121 LIST pages + 20 WATCHes of 20 kinds; peak RSS 327 MB
/// (the one-shot room of the same build: 237 MB; pages of 100 objects: 297 MB).
///
/// `grade --all --learners … --watch -v` of a shared room: the time from a learner's change
/// (a pod created in their lab's namespace, its POST answered) to the line of `-v` saying the
/// cells were judged again, for `changes` changes one after another; the CPU the process uses
/// over `idle` with no change; its peak RSS; the requests it sent.
fn watch(learners: usize, labs: &[&str], latency: Duration, changes: usize, idle: Duration) {
    use std::io::BufRead;
    let dir = tempfile::tempdir().expect("temp dir");
    let (emu, kubeconfig, mut args) = shared_room(learners, labs, latency, dir.path());
    args.retain(|a| a != "-o" && a != "json");
    // Served, as an instructor's projector shows it: the latency that counts is the page's.
    args.extend([
        "--watch".into(),
        "-v".into(),
        "--serve".into(),
        "127.0.0.1:0".into(),
    ]);
    let cache = kubeconfig.with_file_name("trainlab-cache");
    let started = Instant::now();
    let mut child = Command::new(binary())
        .env("KUBECONFIG", &kubeconfig)
        .env("TRAINLAB_CACHE_DIR", cache)
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trainlab");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, String)>();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let said = line.contains("follow:") || line.contains("http://");
            if said && tx.send((Instant::now(), line)).is_err() {
                return;
            }
        }
    });
    let wait_for = |what: &str| -> (Instant, String) {
        loop {
            match rx.recv_timeout(Duration::from_secs(300)) {
                Ok((at, line)) if line.contains(what) => return (at, line),
                Ok(_) => {}
                Err(_) => panic!("trainlab never said `{what}`"),
            }
        }
    };
    let (_, url) = wait_for("http://");
    let addr = url
        .split("http://")
        .nth(1)
        .and_then(|u| u.split('/').next())
        .expect("the served URL")
        .to_string();
    let page = board_events(&addr);
    let (first, line) = wait_for("judged in");
    println!(
        "{:<34} first LIST + judging of the room: {:.1} s ({})",
        format!("watch, {learners} learners × {} labs", labs.len()),
        first.duration_since(started).as_secs_f64(),
        line.rsplit("follow: ").next().unwrap_or_default()
    );
    // A lab whose saved solution has its namespace (the pods are created there).
    let lab = labs
        .iter()
        .copied()
        .find(|l| *l == "volcano-gang")
        .unwrap_or(labs[0]);
    let mut latencies = Vec::new();
    let mut on_page = Vec::new();
    let mut cells = 0usize;
    // The page's first board (every row), before any change.
    page.recv_timeout(Duration::from_secs(300))
        .expect("the page's first board never came");
    for i in 0..changes {
        let learner = format!("l{:04}", (i * 37) % learners);
        let ns = format!("{learner}-{lab}");
        // A change the grade shows: the gang's minAvailable below its replicas (4 → 3) fails
        // `min-available-all`, so the learner's row changes and is pushed to the page.
        emu.patch(
            &format!("/apis/batch.volcano.sh/v1alpha1/namespaces/{ns}/jobs/gang-train"),
            &serde_json::json!({"spec": {"minAvailable": 3}}),
        );
        let stored = Instant::now();
        let (at, line) = wait_for("judged again");
        latencies.push(at.duration_since(stored));
        // The served page's stream brings that learner's row.
        let row = format!("\"learner\":\"{learner}\"");
        loop {
            let (seen, data) = page
                .recv_timeout(Duration::from_secs(300))
                .expect("the page's row never came");
            if data.contains(&row) {
                on_page.push(seen.duration_since(stored));
                break;
            }
        }
        cells += line
            .split("follow: ")
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
    }
    latencies.sort();
    on_page.sort();
    let before = cpu_seconds(pid).unwrap_or(0.0);
    std::thread::sleep(idle);
    let idle_cpu = cpu_seconds(pid).unwrap_or(0.0) - before;
    let rss = peak_rss_kib(pid).unwrap_or(0);
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let status = child.wait().expect("wait");
    let log = emu.requests();
    let is_watch = |r: &&&emulator::Recorded| r.query.split('&').any(|p| p == "watch=true");
    let api: Vec<&emulator::Recorded> = log
        .iter()
        .filter(|r| !live::is_version_or_discovery(&r.path))
        .collect();
    let watches = api.iter().filter(is_watch).count();
    let gets = api.iter().filter(|r| r.method == "GET").count();
    let kinds: BTreeSet<String> = api.iter().map(|r| resource(&r.path)).collect();
    let writes = api.iter().filter(|r| r.method != "GET").count();
    println!(
        "{:<34} change → judged again: p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms over {} changes ({} cells judged again in all)",
        "",
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.95).as_secs_f64() * 1000.0,
        latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        latencies.len(),
        cells
    );
    println!(
        "{:<34} change → the served page's row (SSE): p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        "",
        percentile(&on_page, 0.5).as_secs_f64() * 1000.0,
        percentile(&on_page, 0.95).as_secs_f64() * 1000.0,
        on_page.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
    );
    println!(
        "{:<34} idle {} s: {:.2} CPU-s; peak RSS {:.1} MB; requests: {} discovery, {} LIST pages + {} WATCH of {} kinds, {} writes (the bench's own POSTs); exit {:?}",
        "",
        idle.as_secs(),
        idle_cpu,
        rss as f64 / 1024.0,
        log.len() - api.len(),
        gets - watches,
        watches,
        kinds.len(),
        writes,
        status.code()
    );
}

/// The `rows` events of a served board's stream, with when each arrived.
fn board_events(addr: &str) -> std::sync::mpsc::Receiver<(Instant, String)> {
    use std::io::{BufRead, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the served board");
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .expect("ask for the events");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut rows = false;
        for line in std::io::BufReader::new(s).lines().map_while(Result::ok) {
            if let Some(name) = line.strip_prefix("event: ") {
                rows = name == "rows";
            } else if let Some(data) = line.strip_prefix("data: ") {
                if rows && tx.send((Instant::now(), data.to_string())).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

fn list(name: &str, default: &str) -> Vec<usize> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect()
}

fn main() {
    let runs: usize = env_or("RUNS", 5);
    let latency = Duration::from_millis(env_or("LATENCY_MS", 5));
    let labs = room::gradable();
    if std::env::var_os("SERVE").is_some() {
        // The first room, served until killed: run trainlab by hand (perf, valgrind, -v).
        let learners = list("LEARNERS", "1000")[0];
        let dir = tempfile::tempdir().expect("temp dir");
        let (_emu, kubeconfig, args) = shared_room(learners, &labs, latency, dir.path());
        let argfile = dir.path().join("args");
        std::fs::write(&argfile, args.join("\n")).expect("write args");
        println!(
            "serving {learners} learners; until killed:\n  KUBECONFIG={} trainlab $(cat {})",
            kubeconfig.display(),
            argfile.display()
        );
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    println!(
        "trainlab grade against the API emulator, {runs} runs (+1 warm-up); goals: requests ≤ kinds + discovery + continuation pages; 1,000 learners at 5 ms: wall ≤ 3 s, peak RSS ≤ 150 MB; 100 clusters at 50 ms: wall ≤ 2 s"
    );
    if std::env::var("ONLY").map_or(true, |o| o == "shared") {
        println!("one shared cluster, {} ms per request", latency.as_millis());
        for learners in list("LEARNERS", "100,1000") {
            shared(learners, &labs, latency, runs);
        }
        shared(1, &labs[..1], latency, runs);
    }
    if std::env::var("ONLY").is_ok_and(|o| o == "watch") {
        println!(
            "grade --watch of a shared cluster, {} ms per request; goals: p95 ≤ 1 s, idle CPU ≈ 0, peak RSS ≤ 150 MB, one LIST + one WATCH per kind",
            latency.as_millis()
        );
        watch(
            env_or("WATCH_LEARNERS", 1000),
            &labs,
            latency,
            env_or("CHANGES", 20),
            Duration::from_secs(env_or("IDLE_SECS", 30)),
        );
        return;
    }
    if std::env::var("ONLY").map_or(true, |o| o == "contexts") {
        let latency = Duration::from_millis(env_or("CONTEXT_LATENCY_MS", 50));
        println!(
            "one cluster per learner (--contexts), {} ms per request",
            latency.as_millis()
        );
        for n in list("CONTEXTS", "100") {
            contexts(n, &labs, latency, runs);
        }
    }
}
