//! The shared connection flags, and the terminal view of a grading run (the run itself is
//! `plan::run` in the library).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use indicatif::ProgressBar;

use super::output::eprint;
use super::print;
use crate::cluster::{connect, Conn, ConnectOpts};
use crate::plan::{Event, Listener};
use crate::plan::{Output, RunOptions};
use crate::report::{self, Format, LabReport};
use crate::results::check::Checked;

#[derive(Debug, Args, Clone)]
pub struct LiveArgs {
    /// Kube context to use [default: the kubeconfig's current context]
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// Kubeconfig file [default: $KUBECONFIG, then ~/.kube/config, then in-cluster]
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Bound on each API request: connecting, retries and the whole answer (0: no bound, as
    /// kubectl)
    #[arg(long, global = true, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Read big lists N objects per request, as kubectl's --chunk-size; 0 reads each list in one
    /// response (fewer requests, bigger answers)
    #[arg(long, global = true, value_name = "N", default_value_t = crate::cluster::PAGE_SIZE)]
    pub chunk_size: u32,
    /// How to get the token when the kubeconfig runs `aws eks get-token` or
    /// `aws-iam-authenticator token`: in-process signs it here with the same AWS credentials
    /// (no subprocess, reused until a minute before it expires); exec runs the command as the
    /// kubeconfig says. Other exec plugins always run
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "HOW",
        env = "TRAINLAB_EKS_TOKEN",
        default_value = "in-process"
    )]
    pub eks_token: crate::cluster::EksTokenMode,
    /// Bound on the kubeconfig's exec credential plugin (e.g. a login helper): run once first,
    /// stopped after DURATION (0: no bound) and named with what it said when it fails
    #[arg(long, global = true, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub exec_timeout: Duration,
}

impl LiveArgs {
    /// The connection flags, with the command's `limits` and discovery `cache_dir`
    /// ([`super::Global::connect_opts`] is the one caller).
    pub(super) fn opts(
        &self,
        limits: crate::observe::limits::Limits,
        cache_dir: Option<PathBuf>,
    ) -> ConnectOpts {
        ConnectOpts {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            request_timeout: self.request_timeout,
            chunk_size: self.chunk_size,
            eks_token: self.eks_token,
            exec_timeout: self.exec_timeout,
            limits,
            cache_dir,
        }
    }
}

/// `90s`, `5m`, `1h30m`, or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(s).map_err(|e| {
        crate::text::say(
            super::args::lang(),
            format!("30s、5m、1h のような長さを書いてください ({e})"),
            format!("expected a duration such as 30s, 5m or 1h ({e})"),
        )
    })
}

/// The shortest `--interval` between `--watch` rounds: each round re-reads every learner's
/// objects, and faster rounds only load the API server (0s sent hundreds of requests a second).
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// An `--interval`: a duration of at least [`MIN_INTERVAL`].
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < MIN_INTERVAL {
        let min = humantime::format_duration(MIN_INTERVAL);
        return Err(crate::text::say(
            super::args::lang(),
            format!(
                "間隔は {min} 以上にしてください (毎回すべての受講者のオブジェクトを読み直します)"
            ),
            format!("at least {min} between rounds (each round re-reads every learner's objects)"),
        ));
    }
    Ok(d)
}

pub fn runtime() -> Result<tokio::runtime::Runtime, crate::Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            crate::Error::environment(
                format!("非同期ランタイムを起動できません: {e}"),
                format!("cannot start the async runtime: {e}"),
            )
        })
}

/// A runtime for a command that changes the cluster (`setup`, `start`, `solve`, `reset`):
/// Ctrl-C or SIGTERM ends the process at once with exit 130, saying `stopped` on stderr. The
/// listener runs on a worker thread, so it also ends a command that waits on a confirmation
/// prompt (a select beside the command's future could not: the prompt blocks the thread that
/// polls it). Nothing is rolled back: each such command is idempotent, and `stopped` says to
/// run it again.
pub fn runtime_stopped_by_signal(
    lang: crate::text::Lang,
    stopped: crate::text::Text,
) -> Result<tokio::runtime::Runtime, crate::Error> {
    let rt = runtime()?;
    let said = crate::text::say(
        lang,
        format!("\n中断しました（Ctrl-C または SIGTERM）: {}\n", stopped.ja),
        format!("\ninterrupted (Ctrl-C or SIGTERM): {}\n", stopped.en),
    );
    rt.spawn(async move {
        crate::interrupt::signal().await;
        eprint(&said);
        std::process::exit(crate::exit::ExitCode::Interrupted.code());
    });
    Ok(rt)
}

/// Connects and says once which cluster this command talks to (on stderr, so JSON stays clean).
pub async fn connect_and_announce(opts: &ConnectOpts) -> Result<Conn, crate::Error> {
    let conn = connect(opts).await?;
    eprint(&format!("trainlab: using {}\n", conn.describe()));
    Ok(conn)
}

/// Renders a grading run in the terminal: spinners while reading and waiting (human output on a
/// terminal only), redraws in watch mode, the report when the run is finished: every report of
/// `check` is drawn here, from the events.
pub struct Screen {
    output: Output,
    interactive: bool,
    watch: bool,
    spinner: Option<ProgressBar>,
    drawn_lines: usize,
}

impl Screen {
    /// The screen a run's options ask for.
    pub fn new(options: &RunOptions) -> Screen {
        let human = options.output.format == Format::Human;
        Screen {
            output: options.output,
            interactive: options.is_live() && human && std::io::stderr().is_terminal(),
            watch: options.is_watch(),
            spinner: None,
            drawn_lines: 0,
        }
    }

    fn render(&self, checked: &Checked) -> String {
        let reports: Vec<LabReport> = checked
            .results
            .iter()
            .map(|r| {
                let report = LabReport::new(r, self.output.lang);
                match &checked.server {
                    Some(s) => report.with_server(s),
                    None => report,
                }
            })
            .collect();
        let color = self.output.format == Format::Human && report::color_enabled();
        report::render(&reports, self.output.format, color)
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.finish_and_clear();
        }
    }
}

impl Listener<Checked> for Screen {
    fn on(&mut self, event: Event<'_, Checked>) {
        match event {
            Event::Connected(describe) => eprint(&format!("trainlab: using {describe}\n")),
            Event::Reading { .. } if self.interactive => {
                self.spinner = Some(super::progress::spinner("reading the cluster…", false));
            }
            Event::ReadDone | Event::WaitDone => self.stop_spinner(),
            Event::Graded(checked) if self.watch => {
                if self.drawn_lines > 0 && std::io::stdout().is_terminal() {
                    let _ = console::Term::stdout().clear_last_lines(self.drawn_lines);
                }
                let text = self.render(checked);
                print(&text);
                self.drawn_lines = text.lines().count();
            }
            Event::Waiting {
                pending,
                pause,
                elapsed,
                limit,
            } if self.interactive => {
                self.spinner = Some(super::progress::spinner(
                    &format!(
                        "{pending} check(s) pending; re-checking in {}s ({}s of {}s)",
                        pause.as_secs_f32().ceil() as u64,
                        elapsed.as_secs(),
                        limit.as_secs()
                    ),
                    false,
                ));
            }
            _ => {}
        }
    }

    /// The report: in watch mode the last round is already on the screen.
    fn finished(&mut self, checked: Checked) {
        self.stop_spinner();
        if !self.watch {
            print(&self.render(&checked));
        }
    }
}
