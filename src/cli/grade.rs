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
use crate::grade::{self, Learners, Room, RoomRequest};
use crate::plan::{Event, Listener};
use crate::report::html;
use crate::report::room::{self, RoomFormat};
use crate::report::Scoreboard;
use crate::results::room::{room_exit_code, RoomResult};
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
      re-grade every 10s, redrawing the table and rewriting the page

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
    if a.watch && RoomFormat::from(a.output) != RoomFormat::Table {
        return Err(crate::Error::usage(
            "--watch は表を描き直します（--html も書き直します）。-o json、junit、csv は文書を 1 つ出力するだけなので、--watch か -o を外してください",
            "--watch redraws the table (and rewrites --html); -o json, junit and csv print one document: drop --watch or -o",
        ));
    }
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
        },
    )?;
    let mut view = RoomScreen::new(g.lang(), a.output.into(), a.watch, a.html.clone());
    let result =
        runtime()?.block_on(grade::run(&room, a.watch.then_some(a.interval), &mut view))?;
    let code = room_exit_code(&result);
    if !a.watch {
        // The board holds every report; the room's results are dropped as it is made.
        let board = Scoreboard::from_room(result, g.lang());
        if RoomFormat::from(a.output) == RoomFormat::Json {
            // Streamed: a room's document is megabytes, never held whole as a string.
            let out = std::io::BufWriter::new(std::io::stdout().lock());
            if let Err(e) = room::write_json(&board, out) {
                super::output::stdout_failed(&e);
            }
        } else {
            print(&room::render(
                &board,
                a.output.into(),
                width(a.output.into()),
            ));
        }
        if let Some(p) = &a.html {
            write_html(p, &board)?;
            eprint(&wrote(p, g.lang()));
        }
    }
    Ok(code)
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

/// The terminal side of a room run: a progress bar on stderr (a terminal only), and in watch
/// mode the table redrawn and the page rewritten each round.
struct RoomScreen {
    lang: Lang,
    format: RoomFormat,
    watch: bool,
    html: Option<PathBuf>,
    interactive: bool,
    bar: Option<ProgressBar>,
    drawn_lines: usize,
    /// Whether `wrote FILE` was said (once per run).
    html_announced: bool,
}

impl RoomScreen {
    fn new(lang: Lang, format: RoomFormat, watch: bool, html: Option<PathBuf>) -> RoomScreen {
        RoomScreen {
            lang,
            format,
            watch,
            html,
            interactive: std::io::stderr().is_terminal(),
            bar: None,
            drawn_lines: 0,
            html_announced: false,
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
        match event {
            // Machine output stays alone on a log that merges both streams (`kubectl logs` of
            // the grader Job): the cluster is named there only when a person watches.
            Event::Connected(describe) if self.interactive || self.format == RoomFormat::Table => {
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
            _ => {}
        }
    }
}

impl RoomScreen {
    fn graded(&mut self, result: &RoomResult) {
        self.stop();
        if !self.watch {
            return;
        }
        let board = Scoreboard::new(result, self.lang);
        if self.drawn_lines > 0 && std::io::stdout().is_terminal() {
            let _ = console::Term::stdout().clear_last_lines(self.drawn_lines);
        }
        let text = room::render(&board, self.format, width(self.format));
        print(&text);
        self.drawn_lines = text.lines().count();
        if let Some(p) = &self.html {
            // A failed rewrite keeps the last page and says why; the next round tries again.
            // The first page written is announced; later rounds rewrite it quietly.
            match write_html(p, &board) {
                Err(e) => eprint(&format!("trainlab: {}\n", e.in_lang(self.lang))),
                Ok(()) if !self.html_announced => {
                    self.html_announced = true;
                    eprint(&wrote(p, self.lang));
                }
                Ok(()) => {}
            }
        }
    }
}
