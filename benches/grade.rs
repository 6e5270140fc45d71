//! Wall time, requests and the request timeline of grading against a local API server (the
//! emulator of tests/support/emulator/, over plain HTTP and over TLS as a real API server
//! speaks, answering each request after LATENCY_MS, as a real server over a network does).
//!
//! Runs the built `trainlab` binary the way a learner does (`check efa-nccl`, `check --all`)
//! and prints, per scenario, the median / min / max wall time of RUNS runs, the requests each
//! run sent, and the timeline of the last run: from the first request's arrival to the last
//! answer, and how many sequential steps it took (a request is a step after another when it
//! was sent only once that one was answered: `/version`, then discovery, then the LISTs is three
//! steps; all of them together is one). Not a test: nothing here can fail a build on a slow
//! machine.
//!
//!   cargo bench --bench grade            # release build, the figures to compare
//!   RUNS=50 LATENCY_MS=20 cargo bench --bench grade
//!   TRAINLAB=/path/to/other/trainlab cargo bench --bench grade   # measure another build
//!   BEFORE=/path/to/old/trainlab cargo bench --bench grade       # an older build beside it
//!   TIMELINE=1 cargo bench --bench grade # and every request of each timeline
//!   ANCHOR=0 cargo bench --bench grade   # without the kubectl + jq anchor
//!
//! The anchor (the README's comparison): the same nine checks of `check efa-nccl` as a shell
//! script of `kubectl get … -o json | jq` (benches/anchor/efa-nccl.sh), run in the same process
//! against the same server (over plain HTTP and over TLS), with kubectl's discovery cache warm as
//! a learner's would be. It needs `kubectl` and `jq` on PATH; without them the bench says so and
//! skips the row.
//!
//! Wall time includes process start and kubeconfig loading, as a learner sees it. The discovery
//! cache lives in a temporary folder: "warm" runs find the answers of the warm-up run there,
//! "cold" runs pass `--no-cache` (an older build ignores both: it has no cache).

#[path = "../tests/support/emulator/mod.rs"]
mod emulator;
#[path = "../tests/support/live.rs"]
#[allow(dead_code)] // the bench uses the CRD groups only
mod live;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use emulator::{Emulator, Fault, Recorded};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// Kind nodes, the operators `setup kind` installs and every gradable lab's solution state, with
/// the labs' CRD groups served: every lab passes.
fn cluster(tls: bool, latency: Duration) -> Emulator {
    let mut paths = vec![data("kind-nodes"), data("kind-operators")];
    paths.extend(
        trainlab::labs::VERIFIERS
            .iter()
            .map(|v| data(&format!("{}/solution-state", v.lab_id()))),
    );
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let seed = Emulator::start_from(&refs).objects();
    let emu = if tls {
        Emulator::start_tls(seed)
    } else {
        Emulator::start(seed)
    };
    live::serve(&emu, &live::LAB_CRDS);
    if !latency.is_zero() {
        emu.fault(None, "/", false, Fault::Latency(latency));
    }
    emu
}

struct Figures {
    walls: Vec<Duration>,
    requests: usize,
    by_kind: BTreeMap<String, usize>,
    /// The last run's requests.
    log: Vec<Recorded>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn kind_of(path: &str) -> &'static str {
    let segments = path.trim_matches('/').split('/').count();
    match path {
        "/version" => "version",
        p if p.starts_with("/api/") && segments == 2 => "discovery",
        p if p.starts_with("/apis/") && (segments == 2 || segments == 3) => "discovery",
        "/api" | "/apis" => "discovery",
        _ => "LIST",
    }
}

/// Runs `binary ARGS` `runs` times (after one warm-up) and measures each run.
fn measure(
    emu: &Emulator,
    binary: &Path,
    kubeconfig: &Path,
    cache: &Path,
    args: &[&str],
    runs: usize,
) -> Figures {
    let run_once = || {
        let started = Instant::now();
        let out = Command::new(binary)
            .env("KUBECONFIG", kubeconfig)
            .env("TRAINLAB_CACHE_DIR", cache)
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
    let mut log = Vec::new();
    for _ in 0..runs {
        emu.clear_requests();
        walls.push(run_once());
        log = emu.requests();
    }
    let mut by_kind = BTreeMap::new();
    for r in &log {
        *by_kind
            .entry(format!("{} {}", r.method, kind_of(&r.path)))
            .or_insert(0) += 1;
    }
    walls.sort();
    Figures {
        walls,
        requests: log.len(),
        by_kind,
        log,
    }
}

/// (first request to last answer, sequential steps) of a run's requests. A request's step is
/// one more than the latest step among the requests answered before it arrived.
fn timeline(log: &[Recorded]) -> (Duration, usize, Vec<usize>) {
    let mut order: Vec<usize> = (0..log.len()).collect();
    order.sort_by_key(|&i| log[i].received);
    let mut step = vec![0usize; log.len()];
    for (n, &i) in order.iter().enumerate() {
        let before = order[..n]
            .iter()
            .filter(|&&j| log[j].answered.is_some_and(|a| a <= log[i].received))
            .map(|&j| step[j])
            .max()
            .unwrap_or(0);
        step[i] = before + 1;
    }
    let first = log.iter().map(|r| r.received).min().unwrap_or_default();
    let last = log
        .iter()
        .filter_map(|r| r.answered)
        .max()
        .unwrap_or_default();
    let steps = step.iter().copied().max().unwrap_or(0);
    (last.saturating_sub(first), steps, step)
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let runs: usize = env_or("RUNS", 20);
    let latency = Duration::from_millis(env_or("LATENCY_MS", 2));
    let show_timeline = std::env::var_os("TIMELINE").is_some();
    let after = std::env::var_os("TRAINLAB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_trainlab")));
    let mut builds = vec![("after", after)];
    if let Some(before) = std::env::var_os("BEFORE") {
        builds.insert(0, ("before", PathBuf::from(before)));
    }
    println!(
        "trainlab against the API emulator, {} ms per request, {runs} runs (+1 warm-up)",
        latency.as_millis()
    );
    println!(
        "{:<6} {:<7} {:<6} {:<24} {:>9} {:>8} {:>8} {:>5} {:>10} {:>5}  requests by verb",
        "server", "build", "cache", "command", "median", "min", "max", "req", "first→last", "steps"
    );
    for tls in [false, true] {
        let emu = cluster(tls, latency);
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
        let server = if tls { "https" } else { "http" };
        let mut check_warm = None;
        for (build, binary) in &builds {
            for command in [&["check", "efa-nccl"][..], &["check", "--all"]] {
                for cache in ["warm", "cold"] {
                    let mut args = command.to_vec();
                    args.extend(["-o", "json"]);
                    if cache == "cold" {
                        if *build == "before" {
                            continue; // no cache to be cold or warm
                        }
                        args.push("--no-cache");
                    }
                    let cache_dir = dir.path().join(format!("cache-{build}"));
                    let f = measure(&emu, binary, &kubeconfig, &cache_dir, &args, runs);
                    let (span, steps, step) = timeline(&f.log);
                    let by: Vec<String> =
                        f.by_kind.iter().map(|(k, n)| format!("{k}: {n}")).collect();
                    let cache = if *build == "before" { "none" } else { cache };
                    if *build == "after" && cache == "warm" && command == ["check", "efa-nccl"] {
                        check_warm = Some(f.walls[f.walls.len() / 2]);
                    }
                    println!(
                        "{server:<6} {build:<7} {cache:<6} {:<24} {:>7.1}ms {:>6.1}ms {:>6.1}ms {:>5} {:>8.1}ms {:>5}  {}",
                        command.join(" "),
                        ms(f.walls[f.walls.len() / 2]),
                        ms(f.walls[0]),
                        ms(f.walls[f.walls.len() - 1]),
                        f.requests,
                        ms(span),
                        steps,
                        by.join(", ")
                    );
                    if show_timeline {
                        let first = f.log.iter().map(|r| r.received).min().unwrap_or_default();
                        let mut rows: Vec<(usize, &Recorded)> =
                            step.iter().copied().zip(&f.log).collect();
                        rows.sort_by_key(|(_, r)| r.received);
                        for (s, r) in rows {
                            println!(
                                "         step {s}  +{:>6.1}ms → +{:>6.1}ms  {} {}",
                                ms(r.received.saturating_sub(first)),
                                ms(r.answered.unwrap_or_default().saturating_sub(first)),
                                r.method,
                                r.path
                            );
                        }
                    }
                }
            }
        }
        if env_or("ANCHOR", 1) == 1 {
            let kubectl_config = with_token(&kubeconfig, dir.path());
            anchor(&emu, &kubectl_config, dir.path(), server, runs, check_warm);
        }
    }
}

/// The kubeconfig with a bearer token for its user, which the emulator ignores. Over https, a
/// user with no credentials makes kubectl ask for a username and password on stdin (it read EOF
/// and stopped, before any request); trainlab asks for none.
fn with_token(kubeconfig: &Path, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(kubeconfig).expect("read the emulator's kubeconfig");
    let mut config: serde_json::Value = serde_json::from_str(&text).expect("a JSON kubeconfig");
    for user in config["users"].as_array_mut().into_iter().flatten() {
        user["user"]["token"] = "anchor".into();
    }
    let path = dir.join("kubeconfig-kubectl");
    std::fs::write(&path, config.to_string()).expect("write the kubectl kubeconfig");
    path
}

/// The kubectl + jq script of the same checks (see the module docs), `runs` times after a
/// warm-up that fills kubectl's discovery cache, and how many times slower it is than `check`.
fn anchor(
    emu: &Emulator,
    kubeconfig: &Path,
    dir: &Path,
    server: &str,
    runs: usize,
    check: Option<Duration>,
) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/anchor/efa-nccl.sh");
    let run_once = || {
        let started = Instant::now();
        let out = Command::new("bash")
            .arg(&script)
            .env("KUBECONFIG", kubeconfig)
            .env("KUBECACHEDIR", dir.join("kubectl-cache"))
            .output();
        (started.elapsed(), out)
    };
    match run_once() {
        (_, Ok(out)) if out.status.success() => {}
        (_, Ok(out)) => {
            println!(
                "{server:<6} anchor: the kubectl + jq script did not pass (is kubectl or jq \
                 missing?), skipped:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        (_, Err(e)) => {
            println!("{server:<6} anchor: cannot run bash ({e}), skipped");
            return;
        }
    }
    let mut walls = Vec::with_capacity(runs);
    let mut requests = 0;
    for _ in 0..runs {
        emu.clear_requests();
        walls.push(run_once().0);
        requests = emu.requests().len();
    }
    walls.sort();
    let median = walls[walls.len() / 2];
    println!(
        "{server:<6} {:<7} {:<6} {:<24} {:>7.1}ms {:>6.1}ms {:>6.1}ms {:>5}  kubectl + jq, benches/anchor/efa-nccl.sh{}",
        "anchor",
        "warm",
        "same 9 checks",
        ms(median),
        ms(walls[0]),
        ms(walls[walls.len() - 1]),
        requests,
        check
            .map(|c| format!(": {:.0}× the time of `check efa-nccl` (warm)", ms(median) / ms(c)))
            .unwrap_or_default()
    );
}
