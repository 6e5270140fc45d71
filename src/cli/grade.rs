//! `trainlab grade` — a workshop room at once: learners × labs on one shared cluster, one
//! cluster per learner, or the embedded demo room. The grading is `grade::run` in the library;
//! this file parses and renders (table, JSON, JUnit, CSV, the HTML scoreboard, the progress bar).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args};
use indicatif::{ProgressBar, ProgressStyle};

use super::live::runtime;
use super::output::eprint;
use super::{parse_param, print, Global};
use crate::exit::ExitCode;
use crate::facts::Profile;
use crate::grade::{self, Learners, Room, RoomOutput, RoomRequest, ServeAt};
use crate::plan::{Event, Listener};
use crate::report::html;
use crate::report::room::{self, RoomFormat};
use crate::report::Scoreboard;
use crate::results::room::RoomResult;
use crate::serve::{self, LiveBoard};
use crate::text::Lang;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("room").required(true).args(["learners", "learners_from_namespaces", "contexts", "demo"])))]
// The generated usage line lists the four sources in one line of 132 columns: one line each.
#[command(override_usage = "\
trainlab grade [OPTIONS] --learners <NAMES> [LABS]
       trainlab grade [OPTIONS] --learners-from-namespaces <LABEL=VALUE> [LABS]
       trainlab grade [OPTIONS] --contexts <CONTEXTS> [LABS]
       trainlab grade [OPTIONS] --demo [LABS]")]
#[command(after_help = "\
Examples:
  trainlab grade --demo --html room.html
      the embedded demo room of eight learners, no cluster
  trainlab grade --learners alice,bob,carol
      every gradable lab of three learners on the current cluster,
      in namespaces alice-volcano-gang, bob-efa-nccl, ...
  trainlab grade 9 13 -o json \\
      --learners-from-namespaces trainlab.dev/workshop=gpu-101
      learners found from labelled namespaces, as one JSON document
  trainlab grade --contexts kind-alice,kind-bob -o junit
      one cluster per learner (kube contexts), 32 at a time (--concurrency)
  trainlab grade --learners alice,bob --watch --html room.html
      follow the room, redrawing the table and rewriting the page
  trainlab grade --learners-from-namespaces trainlab.dev/workshop=gpu-101 --serve
      the live scoreboard at http://127.0.0.1:8080/ for a projector: it
      follows the cluster and updates itself, no reload
  trainlab grade --learners alice,bob --serve 0.0.0.0:8080
      the same for other machines: every request needs the token trainlab
      prints (or --token)

On a shared cluster each learner's lab lives in the namespace --namespace-template makes ({learner}-{lab} unless given) and cluster-scoped objects a lab asks for carry the learner's prefix (alice-gpu-training). The room costs about one LIST per kind plus discovery, whatever the number of learners; where RBAC forbids a kind cluster-wide it is read namespace by namespace, and the output says so. Secrets are never read (`trainlab rbac` prints the role grading needs). grade never writes to any cluster.

The exit code is about grading, not scores: 0 the room was graded, 3 a learner's cluster could not be read or the environment kept a lab from being fully graded, 2 bad input. Ctrl-C ends --watch at once, even in the middle of a round, with the exit code of the last round that finished (3 when none had).")]
pub struct GradeArgs {
    /// Labs to grade (number, id or folder) [default: every gradable lab]
    pub labs: Vec<String>,
    /// Grade every gradable lab (the default when no lab is named)
    #[arg(long, conflicts_with = "labs")]
    pub all: bool,
    /// Learners on the shared cluster: --learners alice,bob,carol
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub learners: Vec<String>,
    /// Learners found from the namespaces this label selector picks, read back through
    /// --namespace-template
    #[arg(long, value_name = "LABEL=VALUE")]
    pub learners_from_namespaces: Option<String>,
    /// One cluster per learner: kube contexts of the kubeconfig, each learner named after theirs
    #[arg(long, value_name = "CONTEXTS", value_delimiter = ',')]
    pub contexts: Vec<String>,
    /// The embedded demo room: eight learners at different stages, no cluster
    #[arg(long)]
    pub demo: bool,
    /// Namespace of a learner's lab on a shared cluster: {learner} once, {lab} optional
    /// [default: {learner}-{lab}]
    #[arg(long, value_name = "TEMPLATE")]
    pub namespace_template: Option<String>,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value = "table")]
    pub output: super::output::GradeOutput,
    /// Also write the scoreboard: one self-contained HTML file (heatmap, outcomes and hints)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Follow the room until Ctrl-C, redrawing the table and rewriting --html: on a shared
    /// cluster each kind is watched once and only what changed is graded again; with
    /// --contexts every cluster is re-graded every --interval
    #[arg(long)]
    pub watch: bool,
    /// Serve the scoreboard over HTTP at ADDR [default: 127.0.0.1:8080; a port alone is on
    /// 127.0.0.1; port 0 takes any free one] until Ctrl-C: the --html page, updated in the
    /// browser as the cluster changes (no reload), a learner's detail at /learner/NAME (as JSON
    /// at /cells.json?learner=NAME, what the page asks when a cell is opened) and the -o json
    /// document at /room.json. Grading follows the cluster as with --watch; --demo serves its
    /// board as it is
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080", value_parser = parse_serve_addr)]
    pub serve: Option<std::net::SocketAddr>,
    /// The token every request to --serve must carry (?token=TOKEN, as in the URL printed, or
    /// Authorization: Bearer TOKEN): at least 16 of A-Z a-z 0-9 - _ . ~ [default: none on a
    /// loopback address; generated and printed on any other]
    #[arg(
        long,
        value_name = "TOKEN",
        requires = "serve",
        env = "TRAINLAB_SERVE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Time between rounds with --watch and --contexts (at least 1s); a shared cluster is
    /// watched, not re-read
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = super::live::parse_interval)]
    pub interval: Duration,
    /// Clusters graded at the same time with --contexts (each sends its LISTs at once, about 22
    /// for every lab, so 32 clusters keep about 700 requests and connections open)
    #[arg(long, value_name = "N", default_value_t = grade::CONTEXTS_AT_ONCE)]
    pub concurrency: usize,
    /// A lab parameter, e.g. --param gpu_nodes=3: one the labs' grading reads, a count from 1
    /// to 65535, given once (or repeated with the same value)
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Profile whose parameters apply [default: detected from node providerIDs, else kind]
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
}

pub fn run(g: &Global, a: &GradeArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let learners = if a.demo {
        Learners::Demo
    } else if let Some(sel) = &a.learners_from_namespaces {
        Learners::FromNamespaces(sel.clone())
    } else if !a.contexts.is_empty() {
        if g.live.context.is_some() {
            return Err(crate::Error::usage(
                "--contexts で受講者全員のクラスターを指定しています。--context を外してください",
                "--contexts names every learner's cluster; drop --context",
            ));
        }
        Learners::Contexts(a.contexts.iter().map(|c| c.trim().to_string()).collect())
    } else {
        Learners::Named(grade::parse_learners(&a.learners)?)
    };
    if let Some(p) = &a.html {
        check_writable(p)?;
    }
    let room = Room::resolve(
        &catalog,
        RoomRequest {
            labs: a.labs.clone(),
            all: a.all,
            learners,
            template: a.namespace_template.clone(),
            connect: g.connect_opts(),
            params: a.params.clone(),
            profile: a.profile,
            concurrency: a.concurrency,
            // A served board follows the cluster (the demo's never changes).
            watch: (a.watch || (a.serve.is_some() && !a.demo)).then_some(a.interval),
            output: RoomOutput {
                format: a.output.into(),
                lang: g.lang(),
                html: a.html.clone(),
                serve: a.serve.map(|addr| ServeAt {
                    addr,
                    token: a.token.clone(),
                }),
            },
        },
    )?;
    let mut screen = RoomScreen::new(&room);
    let code = runtime()?.block_on(async {
        let Some(at) = &room.output.serve else {
            return grade::run(&room, &mut screen).await;
        };
        let live = LiveBoard::new(room.output.lang);
        let serving = serve::start(at.addr, at.token.clone(), &live).await?;
        // Ctrl-C is heard from now on, while the first round is graded too (the rounds of a
        // board that follows the cluster also hear it themselves).
        let (heard, mut stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            crate::interrupt::signal().await;
            let _ = heard.send(true);
        });
        eprint(&serve::listening(&serving.url, room.output.lang));
        screen.live = Some(live);
        let code = grade::run(&room, &mut screen).await;
        // A board graded once (the demo) stays served until Ctrl-C.
        if code.is_ok() && room.watch.is_none() {
            let _ = stopped.wait_for(|s| *s).await;
        }
        if let Some(live) = &mut screen.live {
            live.ended();
        }
        serving.stop().await;
        code
    })?;
    // A page that could not be written is bad input (the folder was checked before grading).
    match screen.failed.take() {
        Some(e) => Err(e),
        None => Ok(code),
    }
}

/// `--serve ADDR`: an IP address and port, or a port alone.
fn parse_serve_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    serve::parse_addr(s).ok_or_else(|| {
        crate::text::say(
            super::args::lang(),
            format!("`{s}` はアドレスではありません。127.0.0.1:8080、0.0.0.0:8080、またはポート番号だけを書いてください"),
            format!("`{s}` is not an address: write 127.0.0.1:8080, 0.0.0.0:8080 or a port alone"),
        )
    })
}

/// The page's folder must exist before grading starts, not after.
fn check_writable(p: &std::path::Path) -> Result<(), crate::Error> {
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        if !d.is_dir() {
            let (p, d) = (p.display(), d.display());
            return Err(crate::Error::usage(
                format!("--html {p}: フォルダー {d} がありません"),
                format!("--html {p}: the folder {d} does not exist"),
            ));
        }
    }
    if p.is_dir() {
        let p = p.display();
        return Err(crate::Error::usage(
            format!("--html {p}: フォルダーです。{p}/room.html のようにファイルを指定してください"),
            format!("--html {p}: that is a folder; name a file such as {p}/room.html"),
        ));
    }
    html::check_replaceable(p).map_err(|(what_ja, what)| {
        let p = p.display();
        crate::Error::usage(
            format!("--html {p}: {what_ja}で、通常のファイルではありません。ページを書き込むのは新しいファイルか、既存の通常のファイルだけです"),
            format!("--html {p}: that is {what}, not a regular file; the page is written only to a new file or over a regular one"),
        )
    })
}

fn write_html(p: &std::path::Path, board: &Scoreboard) -> Result<(), crate::Error> {
    html::write_atomically(p, &html::render(board)).map_err(|e| {
        let p = p.display();
        crate::Error::usage(
            format!("--html {p} に書き込めません: {e}"),
            format!("cannot write --html {p}: {e}"),
        )
    })
}

/// What `--html` did, on stderr (stdout holds the table or the document).
fn wrote(p: &std::path::Path, lang: Lang) -> String {
    let p = p.display();
    crate::text::say(
        lang,
        format!("trainlab: {p} に書き込みました\n"),
        format!("trainlab: wrote {p}\n"),
    )
}

fn width(format: RoomFormat) -> Option<usize> {
    (format == RoomFormat::Table)
        .then(crate::report::human::terminal_width)
        .flatten()
}

/// Every rendering of a room run, as a listener: a progress bar on stderr (a terminal only); in
/// watch mode the table redrawn and the page rewritten each round; the room's table or
/// document (and the page) when the run is finished.
struct RoomScreen {
    output: RoomOutput,
    watch: bool,
    interactive: bool,
    bar: Option<ProgressBar>,
    drawn_lines: usize,
    /// Whether `wrote FILE` was said (once per run).
    html_announced: bool,
    /// The final page could not be written: the command's error.
    failed: Option<crate::Error>,
    /// `--serve`: the served board hears every event too.
    live: Option<LiveBoard>,
}

impl RoomScreen {
    fn new(room: &Room<'_>) -> RoomScreen {
        RoomScreen {
            output: room.output.clone(),
            watch: room.watch.is_some(),
            interactive: std::io::stderr().is_terminal(),
            bar: None,
            drawn_lines: 0,
            html_announced: false,
            failed: None,
            live: None,
        }
    }

    fn stop(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Listener<RoomResult> for RoomScreen {
    fn on(&mut self, event: Event<'_, RoomResult>) {
        if let Some(live) = &mut self.live {
            live.on(event);
        }
        match event {
            // Machine output stays alone on a log that merges both streams (`kubectl logs` of
            // the grader Job): the cluster is named there only when a person watches.
            Event::Connected(describe)
                if self.interactive || self.output.format == RoomFormat::Table =>
            {
                eprint(&format!("trainlab: using {describe}\n"));
            }
            Event::Reading { queries } if self.interactive => {
                self.bar = Some(super::progress::spinner(
                    &format!("reading the cluster: {queries} kind(s)…"),
                    false,
                ));
            }
            Event::ReadDone => self.stop(),
            Event::Grading { learners } if self.interactive => {
                let pb = ProgressBar::new(learners as u64);
                pb.set_style(
                    ProgressStyle::with_template("grading {bar:30} {pos}/{len} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                self.bar = Some(pb);
            }
            Event::LearnerDone(learner) => {
                if let Some(b) = &self.bar {
                    b.set_message(learner.to_string());
                    b.inc(1);
                }
            }
            Event::Graded(result) | Event::Regraded { result, .. } => self.graded(result),
            // A watched room says how its watches stand: lost, listed again, followed again.
            Event::Stream(state) => {
                if let Some(text) = state.said(self.output.lang) {
                    eprint(&format!("trainlab: {text}\n"));
                    // On one terminal the next redraw of the table clears this line too.
                    if self.drawn_lines > 0
                        && std::io::stdout().is_terminal()
                        && std::io::stderr().is_terminal()
                    {
                        self.drawn_lines += 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// The room's report. In watch mode the last round is already drawn; otherwise the board
    /// is made from the room as it is handed over, each learner's results dropped as soon as
    /// their row is made (a room of a thousand learners never holds both whole).
    fn finished(&mut self, result: RoomResult) {
        self.stop();
        if self.watch {
            return;
        }
        let format = self.output.format;
        if format == RoomFormat::Json && self.output.html.is_none() {
            // Written learner by learner: neither the board nor the document is ever whole.
            let out = std::io::BufWriter::new(std::io::stdout().lock());
            if let Err(e) = crate::report::write_json_streamed(result, self.output.lang, out) {
                super::output::stdout_failed(&e);
            }
            tracing::info!("room: written{}", crate::observe::process::memory());
            return;
        }
        let board = if self.shows_checks() {
            Scoreboard::from_room(result, self.output.lang)
        } else {
            Scoreboard::outline(&result, self.output.lang)
        };
        if format == RoomFormat::Json {
            // Streamed: a room's document is megabytes, never held whole as a string.
            let out = std::io::BufWriter::new(std::io::stdout().lock());
            if let Err(e) = room::write_json(&board, out) {
                super::output::stdout_failed(&e);
            }
        } else {
            print(&room::render(&board, format, width(format)));
        }
        if let Some(p) = &self.output.html {
            match write_html(p, &board) {
                Ok(()) => eprint(&wrote(p, self.output.lang)),
                Err(e) => self.failed = Some(e),
            }
        }
    }
}

impl RoomScreen {
    /// Whether what is rendered shows each cell's checks: the format's, or the `--html` page's
    /// details. Otherwise the board's outline is enough (no result read back).
    fn shows_checks(&self) -> bool {
        self.output.format.shows_checks() || self.output.html.is_some()
    }

    fn graded(&mut self, result: &RoomResult) {
        self.stop();
        if !self.watch {
            return;
        }
        let (lang, format) = (self.output.lang, self.output.format);
        let board = if self.shows_checks() {
            Scoreboard::new(result, lang)
        } else {
            Scoreboard::outline(result, lang)
        };
        if self.drawn_lines > 0 && std::io::stdout().is_terminal() {
            let _ = console::Term::stdout().clear_last_lines(self.drawn_lines);
        }
        let text = room::render(&board, format, width(format));
        print(&text);
        self.drawn_lines = text.lines().count();
        if let Some(p) = &self.output.html {
            // A failed rewrite keeps the last page and says why; the next round tries again.
            // The first page written is announced; later rounds rewrite it quietly.
            match write_html(p, &board) {
                Err(e) => eprint(&format!("trainlab: {}\n", e.in_lang(lang))),
                Ok(()) if !self.html_announced => {
                    self.html_announced = true;
                    eprint(&wrote(p, lang));
                }
                Ok(()) => {}
            }
        }
    }
}
