//! The EKS token: built in-process (trainlab's default) against running `aws eks get-token` (the
//! AWS CLI from PyPI, `awscli`) as the kubeconfig's exec, measured the way a learner feels it.
//!
//!   cargo bench --bench eks_token
//!   RUNS=20 cargo bench --bench eks_token
//!   AWS=/path/to/aws cargo bench --bench eks_token    # which AWS CLI the exec runs
//!   TRAINLAB=/path/to/other/trainlab cargo bench --bench eks_token
//!
//! Scenarios, each the median / min / max of RUNS runs (signing: of 1,000):
//!
//! 1. `sign`: `eks_token::token_at` with fixed credentials: the SigV4 presign and base64url alone;
//! 2. `in-process`: what the first request of a run waits for: aws-config's default credentials
//!    chain (keys in the environment here), then signing; the first of the process alone, then
//!    each further one (a new cluster name each run, so no token is cached);
//! 3. `aws eks get-token`: one run of the AWS CLI with the arguments update-kubeconfig writes;
//! 4. `check efa-nccl`: the release `trainlab` binary against the API emulator over TLS with the
//!    kubeconfig exactly as `aws eks update-kubeconfig` writes it
//!    (tests/data/eks-kubeconfig/update-kubeconfig.yaml, only the server and its CA pointed at
//!    the emulator), in-process and with `--eks-token exec`.
//!
//! Without the AWS CLI (`aws` on PATH, or AWS=) the bench says so and measures only the
//! in-process rows. Credentials are fixed keys in the environment: neither path makes a network
//! call (without a role, get-token only presigns). Not a test: nothing here fails a build.

#[path = "../tests/support/emulator/mod.rs"]
mod emulator;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use aws_credential_types::Credentials;
use base64::Engine as _;
use emulator::Emulator;
use trainlab::cluster::eks_token::{token_at, EksExec, Plugin, TokenSource};

const KEY: &str = "AKIDTRAINLABBENCH";
const SECRET: &str = "trainlab-bench-secret";

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn row(name: &str, mut walls: Vec<Duration>, note: &str) {
    walls.sort();
    println!(
        "{name:<36} {:>10.3}ms {:>10.3}ms {:>10.3}ms  {note}",
        ms(walls[walls.len() / 2]),
        ms(walls[0]),
        ms(walls[walls.len() - 1]),
    );
}

/// The AWS CLI to run: `AWS=`, else `aws` on PATH (a pyenv shim resolved to the real script, so
/// the figure is the CLI's own and not pyenv's).
fn aws_cli() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AWS") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join("aws"))
        .find(|p| p.is_file())?;
    if found.to_string_lossy().contains("/shims/") {
        let out = Command::new("pyenv").args(["which", "aws"]).output().ok()?;
        let real = String::from_utf8(out.stdout).ok()?;
        return out.status.success().then(|| PathBuf::from(real.trim()));
    }
    Some(found)
}

/// A command with only what the bench sets: fixed keys, no AWS files, no instance metadata.
fn clean(cmd: &mut Command, home: &Path, bin: &Path) {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_CONFIG_FILE", home.join("aws-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", home.join("aws-credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("NO_COLOR", "1");
}

/// The update-kubeconfig fixture pointed at `emu` (server and CA only).
fn kubeconfig(emu: &Emulator, dir: &Path) -> PathBuf {
    emu.kubeconfig(dir, "unused");
    let pem = std::fs::read(dir.join("emulator-ca.pem")).expect("emulator CA");
    let ca = base64::engine::general_purpose::STANDARD.encode(pem);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/eks-kubeconfig/update-kubeconfig.yaml");
    let text = std::fs::read_to_string(fixture).expect("fixture");
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let indent = &line[..line.len() - line.trim_start().len()];
            match line.trim_start() {
                l if l.starts_with("server: ") => format!("{indent}server: {}", emu.url()),
                l if l.starts_with("certificate-authority-data: ") => {
                    format!("{indent}certificate-authority-data: {ca}")
                }
                _ => line.to_string(),
            }
        })
        .collect();
    let path = dir.join("config");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write kubeconfig");
    path
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10);
    let aws = aws_cli();
    println!(
        "{:<36} {:>12} {:>12} {:>12}",
        "scenario", "median", "min", "max"
    );

    // 1. Signing alone.
    let creds = Credentials::new(KEY, SECRET, Some("session-token".into()), None, "bench");
    let at = SystemTime::now();
    let mut walls = Vec::with_capacity(1000);
    for _ in 0..1000 {
        let started = Instant::now();
        std::hint::black_box(token_at(&creds, "us-west-2", "trainlab", at).expect("token"));
        walls.push(started.elapsed());
    }
    row("sign (token_at)", walls, "SigV4 presign + base64url");

    // 2. In-process, cold: the credentials chain from the environment, then signing.
    let home = tempfile::tempdir().expect("temp dir");
    // Safe in edition 2021; set before the runtime starts any thread.
    std::env::set_var("AWS_ACCESS_KEY_ID", KEY);
    std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET);
    std::env::set_var("AWS_CONFIG_FILE", home.path().join("aws-config"));
    std::env::set_var(
        "AWS_SHARED_CREDENTIALS_FILE",
        home.path().join("aws-credentials"),
    );
    std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");
    for var in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN"] {
        std::env::remove_var(var);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut walls: Vec<Duration> = (0..=runs.max(1) * 10)
        .map(|i| {
            rt.block_on(async {
                let exec = EksExec {
                    plugin: Plugin::AwsCli,
                    cluster_id: format!("bench-{i}"),
                    region: Some("us-west-2".into()),
                    profile: None,
                    role_arn: None,
                    session_name: None,
                    external_id: None,
                };
                let started = Instant::now();
                let source = TokenSource::for_exec(exec).await.expect("source");
                source.header().await.expect("token");
                started.elapsed()
            })
        })
        .collect();
    let first = walls.remove(0);
    row(
        "in-process, first of the process",
        vec![first],
        "aws-config loads its settings, default chain (env keys), sign",
    );
    row(
        "in-process, each further cluster",
        walls,
        "default chain (env keys) + sign, nothing cached",
    );

    // 3. The AWS CLI alone.
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    match &aws {
        Some(aws) => {
            std::os::unix::fs::symlink(aws, bin.join("aws")).expect("link aws");
            let run = || {
                let mut cmd = Command::new(bin.join("aws"));
                clean(&mut cmd, home.path(), &bin);
                let started = Instant::now();
                let out = cmd
                    .args([
                        "--region",
                        "us-west-2",
                        "eks",
                        "get-token",
                        "--cluster-name",
                        "trainlab",
                        "--output",
                        "json",
                    ])
                    .output()
                    .expect("run aws");
                assert!(
                    out.status.success(),
                    "aws eks get-token failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                started.elapsed()
            };
            run();
            let version = Command::new(bin.join("aws"))
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            let walls: Vec<Duration> = (0..runs).map(|_| run()).collect();
            row("aws eks get-token (one process)", walls, &version);
        }
        None => println!(
            "aws eks get-token: the AWS CLI is not installed (`pip install awscli`, or AWS=path); \
             measuring the in-process path only"
        ),
    }

    // 4. A learner's `check` against a TLS API server, with the update-kubeconfig kubeconfig.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seed = Emulator::start_from(&[
        &root.join("tests/data/kind-nodes"),
        &root.join("tests/data/efa-nccl/solution-state"),
    ])
    .objects();
    let emu = Emulator::start_tls(seed);
    let config = kubeconfig(&emu, home.path());
    let binary = std::env::var_os("TRAINLAB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_trainlab")));
    let check = |how: &str| {
        let mut cmd = Command::new(&binary);
        clean(&mut cmd, home.path(), &bin);
        cmd.env("KUBECONFIG", &config).args([
            "check",
            "efa-nccl",
            "-o",
            "json",
            "--eks-token",
            how,
        ]);
        let started = Instant::now();
        let out = cmd.output().expect("run trainlab");
        let wall = started.elapsed();
        let code = out.status.code().unwrap_or(-1);
        assert!(
            code == 0 || code == 1,
            "trainlab check --eks-token {how} exited {code}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        wall
    };
    let mut modes = vec!["in-process"];
    if aws.is_some() {
        modes.push("exec");
    }
    for how in modes {
        check(how);
        let walls: Vec<Duration> = (0..runs).map(|_| check(how)).collect();
        let note = match how {
            "exec" => "kube runs the exec twice per client (TLS identity, token)",
            _ => "no subprocess",
        };
        row(&format!("check efa-nccl --eks-token {how}"), walls, note);
    }
}
