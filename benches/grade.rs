//! Wall time and request count of grading against a local API server (the emulator of
//! tests/support/emulator.rs, over plain HTTP and over TLS as a real API server speaks).
//!
//! Runs the built `trainlab` binary the way a learner does (`check efa-nccl`, `check --all`)
//! and prints, per scenario, the median / min / max wall time of RUNS runs and the requests
//! each run sent. Not a test: nothing here can fail a build on a slow machine.
//!
//!   cargo bench --bench grade            # release build, the figures to compare
//!   RUNS=50 cargo bench --bench grade
//!   TRAINLAB=/path/to/other/trainlab cargo bench --bench grade   # compare another build
//!
//! Wall time includes process start and kubeconfig loading, as a learner sees it.

#[path = "../tests/support/emulator.rs"]
mod emulator;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use emulator::Emulator;

const GRADABLE: [&str; 4] = [
    "efa-nccl",
    "volcano-gang",
    "mpijob-slots",
    "karpenter-single-az",
];

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// Kind nodes plus every gradable lab's solution state, with the labs' CRD groups served.
fn cluster(tls: bool) -> Emulator {
    let mut paths = vec![data("kind-nodes")];
    paths.extend(
        GRADABLE
            .iter()
            .map(|lab| data(&format!("{lab}/solution-state"))),
    );
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let seed = Emulator::start_from(&refs).objects();
    let emu = if tls {
        Emulator::start_tls(seed)
    } else {
        Emulator::start(seed)
    };
    emu.serve_crd("batch.volcano.sh", "v1alpha1", "Job", "jobs", true);
    emu.serve_crd(
        "scheduling.volcano.sh",
        "v1beta1",
        "PodGroup",
        "podgroups",
        true,
    );
    emu.serve_crd("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", true);
    emu.serve_crd("karpenter.sh", "v1", "NodePool", "nodepools", false);
    emu.serve_crd("karpenter.sh", "v1", "NodeClaim", "nodeclaims", false);
    emu.serve_crd(
        "karpenter.k8s.aws",
        "v1",
        "EC2NodeClass",
        "ec2nodeclasses",
        false,
    );
    emu
}

struct Figures {
    walls: Vec<Duration>,
    requests: usize,
    by_kind: BTreeMap<String, usize>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `trainlab ARGS` `runs` times (after one warm-up) and measures each run.
fn measure(emu: &Emulator, kubeconfig: &Path, args: &[&str], runs: usize) -> Figures {
    let binary = std::env::var_os("TRAINLAB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_trainlab")));
    let run_once = || {
        let started = Instant::now();
        let out = Command::new(&binary)
            .env("KUBECONFIG", kubeconfig)
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .expect("run trainlab");
        let wall = started.elapsed();
        let code = out.status.code().unwrap_or(-1);
        // 0: all passed, 1: some check failed; anything else means the bench measures an error.
        assert!(
            code == 0 || code == 1,
            "trainlab {args:?} exited {code}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        wall
    };
    run_once();
    let mut walls = Vec::with_capacity(runs);
    let mut requests = 0;
    let mut by_kind = BTreeMap::new();
    for _ in 0..runs {
        emu.clear_requests();
        walls.push(run_once());
        let log = emu.requests();
        requests = log.len();
        by_kind.clear();
        for r in log {
            let segments = r.path.trim_matches('/').split('/').count();
            let kind = match r.path.as_str() {
                "/version" => "version",
                p if p.starts_with("/api/") && segments == 2 => "discovery",
                p if p.starts_with("/apis/") && segments == 3 => "discovery",
                "/api" | "/apis" => "discovery",
                _ => "read",
            };
            *by_kind.entry(format!("{} {kind}", r.method)).or_insert(0) += 1;
        }
    }
    walls.sort();
    Figures {
        walls,
        requests,
        by_kind,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    println!(
        "{:<8} {:<28} {:>9} {:>8} {:>8} {:>9}  requests by verb",
        "server", "command", "median", "min", "max", "requests"
    );
    for tls in [false, true] {
        let emu = cluster(tls);
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
        let server = if tls { "https" } else { "http" };
        for args in [
            &["check", "efa-nccl", "-o", "json"][..],
            &["check", "--all", "-o", "json"][..],
        ] {
            let f = measure(&emu, &kubeconfig, args, runs);
            let by: Vec<String> = f.by_kind.iter().map(|(k, n)| format!("{k}: {n}")).collect();
            println!(
                "{server:<8} {:<28} {:>7.1}ms {:>6.1}ms {:>6.1}ms {:>9}  {}",
                args.join(" "),
                ms(f.walls[f.walls.len() / 2]),
                ms(f.walls[0]),
                ms(f.walls[f.walls.len() - 1]),
                f.requests,
                by.join(", ")
            );
        }
    }
}
