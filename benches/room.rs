//! A workshop room on one shared cluster: requests sent, wall time and peak RSS of `trainlab
//! grade` for 100 learners × every gradable lab, and for one learner × one lab, against the API
//! emulator of tests/support/emulator.rs with a per-request latency (as a real API server has).
//!
//!   cargo bench --bench room                       # 5 ms per request, 5 runs each
//!   LATENCY_MS=20 LEARNERS=200 RUNS=3 cargo bench --bench room
//!   TRAINLAB=/path/to/other/trainlab cargo bench --bench room
//!   CHUNK_SIZE=0 cargo bench --bench room          # `--chunk-size 0`: each kind in one response
//!
//! Runs the built binary as an instructor does (`grade --all --learners … -o json`); wall time
//! includes process start. Peak RSS is the child's VmHWM (/proc/PID/status), sampled every
//! millisecond until it exits. Not a test: nothing here fails a build on a slow machine; the
//! goals (requests ≤ kinds + discovery, wall ≤ 1 s at 5 ms, RSS ≤ 50 MB) are printed beside.

#[path = "../tests/support/emulator.rs"]
mod emulator;
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
    emu.serve_crd("batch.volcano.sh", "v1alpha1", "Job", "jobs", true);
    emu.serve_crd(
        "scheduling.volcano.sh",
        "v1beta1",
        "PodGroup",
        "podgroups",
        true,
    );
    emu.serve_crd("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", true);
    emu.serve_crd("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", true);
    emu.serve_crd("karpenter.sh", "v1", "NodePool", "nodepools", false);
    emu.serve_crd("karpenter.sh", "v1", "NodeClaim", "nodeclaims", false);
    emu.serve_crd(
        "karpenter.k8s.aws",
        "v1",
        "EC2NodeClass",
        "ec2nodeclasses",
        false,
    );
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

fn is_discovery(path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches!(
        segs.as_slice(),
        ["version"] | ["api"] | ["apis"] | ["api", _] | ["apis", _] | ["apis", _, _]
    )
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
    let discovery = log.iter().filter(|r| is_discovery(&r.path)).count();
    let lists: Vec<&str> = log
        .iter()
        .filter(|r| !is_discovery(&r.path))
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

fn scenario(name: &str, learners: usize, labs: &[&str], latency: Duration, runs: usize) {
    let names: Vec<String> = (0..learners).map(|i| format!("l{i:03}")).collect();
    let solved: Vec<(&str, &[&str])> = names.iter().map(|n| (n.as_str(), labs)).collect();
    let emu = Emulator::start(room::room(&solved));
    serve_crds(&emu);
    emu.fault(None, "/", false, Fault::Latency(latency));
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
    let binary = std::env::var_os("TRAINLAB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_trainlab")));
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
    run_once(&binary, &kubeconfig, &args, &emu); // warm-up (page cache, first connection)
    let mut all: Vec<Run> = (0..runs)
        .map(|_| run_once(&binary, &kubeconfig, &args, &emu))
        .collect();
    all.sort_by_key(|r| r.wall);
    let median = &all[all.len() / 2];
    let rss_max = all.iter().map(|r| r.rss_kib).max().unwrap_or(0);
    println!(
        "{name:<34} {:>4} req ({:>2} discovery, {:>3} LIST/GET of {:>2} kinds)  wall median {:>7.1} ms (min {:>6.1}, max {:>6.1})  peak RSS {:>5.1} MB",
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

fn main() {
    let runs: usize = env_or("RUNS", 5);
    let latency = Duration::from_millis(env_or("LATENCY_MS", 5));
    let learners: usize = env_or("LEARNERS", 100);
    let labs = room::gradable();
    println!(
        "trainlab grade against the API emulator, {} ms per request, {runs} runs (+1 warm-up); goals: requests ≤ kinds + discovery, wall ≤ 1 s at 5 ms, peak RSS ≤ 50 MB",
        latency.as_millis()
    );
    scenario(
        &format!("{learners} learners × {} labs", labs.len()),
        learners,
        &labs,
        latency,
        runs,
    );
    scenario("1 learner × 1 lab", 1, &labs[..1], latency, runs);
}
