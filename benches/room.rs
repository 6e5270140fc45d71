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
