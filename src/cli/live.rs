//! Live grading for `check` (and the shared connection flags): connect once, gather the reads
//! of every lab in one pass, judge, and with `--wait`/`--watch` re-observe.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::check::{exit_code, CheckArgs};
use super::output::eprint;
use super::{print, Global};
use crate::catalog::LabBundle;
use crate::cluster::{connect, gather, Conn, ConnectOpts, Discovery};
use crate::exit::ExitCode;
use crate::observe::{kinds, Query};
use crate::report::{self, Format, LabReport};
use crate::verify::{run, verifier_for, LabResult, MissingCapabilities, Status, Target};

#[derive(Debug, Args, Clone)]
pub struct LiveArgs {
    /// Kube context to use [default: the kubeconfig's current context]
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// Kubeconfig file [default: $KUBECONFIG, then ~/.kube/config, then in-cluster]
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Bound on connecting and on each API response
    #[arg(long, global = true, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub request_timeout: Duration,
}

impl LiveArgs {
    pub fn opts(&self) -> ConnectOpts {
        ConnectOpts {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            request_timeout: self.request_timeout,
        }
    }
}

/// `90s`, `5m`, `1h30m`, or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(s)
        .map_err(|e| format!("expected a duration such as 30s, 5m or 1h ({e})"))
}

pub fn runtime() -> Result<tokio::runtime::Runtime, crate::Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| crate::Error::Environment(format!("cannot start the async runtime: {e}")))
}

/// Connects and says once which cluster this command talks to (on stderr, so JSON stays clean).
pub async fn connect_and_announce(live: &LiveArgs) -> Result<Conn, crate::Error> {
    let conn = connect(&live.opts()).await?;
    eprint(&format!("trainlab: using {}\n", conn.describe()));
    Ok(conn)
}

pub fn check(g: &Global, a: &CheckArgs, labs: &[&LabBundle]) -> Result<ExitCode, crate::Error> {
    runtime()?.block_on(check_async(g, a, labs))
}

async fn check_async(
    g: &Global,
    a: &CheckArgs,
    labs: &[&LabBundle],
) -> Result<ExitCode, crate::Error> {
    let conn = connect_and_announce(&a.live).await?;
    let discovery = Discovery::new();
    let targets: Vec<Target> = labs
        .iter()
        .map(|b| {
            let mut t = Target::for_lab(&b.lab.id);
            t.context = Some(conn.context.clone());
            if let Some(ns) = &a.namespace {
                t.namespace = ns.clone();
            }
            t
        })
        .collect();
    let mut queries = vec![Query::cluster(&kinds::NODES)];
    for (b, t) in labs.iter().zip(&targets) {
        if let Some(v) = verifier_for(&b.lab.id) {
            queries.extend(v.reads(t));
        }
    }
    let overrides: BTreeMap<String, String> = a.params.iter().cloned().collect();
    let lang = g.lang();
    let human = a.output == Format::Human;
    let interactive = human && std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut delay = Duration::from_secs(1);
    let mut drawn_lines = 0usize;
    loop {
        let reading = interactive.then(|| spinner("reading the cluster…"));
        let obs = gather(&conn, &discovery, &queries).await;
        if let Some(s) = &reading {
            s.finish_and_clear();
        }
        let obs = obs?;
        let mut results: Vec<LabResult> = Vec::new();
        for (b, t) in labs.iter().zip(&targets) {
            let v = verifier_for(&b.lab.id).expect("select() keeps gradable labs only");
            results.push(run(
                b,
                v,
                &obs,
                t,
                &overrides,
                a.profile,
                &MissingCapabilities::new(),
            )?);
        }
        let pending = results.iter().any(|r| r.count(Status::Pending) > 0);
        let reports: Vec<LabReport> = results.iter().map(|r| LabReport::new(r, lang)).collect();
        let text = report::render(&reports, a.output, human && report::color_enabled());

        if a.watch {
            if drawn_lines > 0 && std::io::stdout().is_terminal() {
                let _ = console::Term::stdout().clear_last_lines(drawn_lines);
            }
            print(&text);
            drawn_lines = text.lines().count();
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(2)) => continue,
                _ = tokio::signal::ctrl_c() => return Ok(exit_code(&results)),
            }
        }
        // Time left before the deadline; the last re-check happens at the deadline itself.
        let left = a.wait.map_or(Duration::ZERO, |limit| {
            limit.saturating_sub(started.elapsed())
        });
        if !pending || left.is_zero() {
            print(&text);
            return Ok(exit_code(&results));
        }
        let pause = delay.min(left);
        let n: usize = results.iter().map(|r| r.count(Status::Pending)).sum();
        let waiting = interactive.then(|| {
            spinner(&format!(
                "{n} check(s) pending; re-checking in {}s ({}s of {}s)",
                pause.as_secs_f32().ceil() as u64,
                started.elapsed().as_secs(),
                a.wait.unwrap_or_default().as_secs()
            ))
        });
        tokio::time::sleep(pause).await;
        if let Some(w) = waiting {
            w.finish_and_clear();
        }
        delay = (delay * 2).min(Duration::from_secs(8));
    }
}

fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}
