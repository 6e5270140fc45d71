//! Command-line interface: clap definitions (one file per command) and dispatch. `main.rs` only
//! parses and calls [`dispatch`].

mod apply;
pub mod args;
mod check;
mod confirm;
mod doctor;
mod errors_ja;
mod grade;
mod help_ja;
mod lint;
mod list;
mod live;
mod output;
mod progress;
mod quiz;
mod rbac;
mod reset;
mod setup;
mod show;
mod snapshot;
mod solve;
mod start;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::catalog::Catalog;
use crate::exit::{ExitCode, EXIT_CODES_HELP};
use crate::text::Lang;

pub use output::print;

const ABOUT: &str =
    "Hands-on labs about training ML models on Amazon EKS, graded from cluster state.";

// Paragraphs are single lines so clap wraps them evenly to the terminal; example lines are short
// enough for 80 columns so they keep their indent.
const LONG_ABOUT: &str = "\
Hands-on labs about training ML models on Amazon EKS, graded from cluster state.

Each of the 15 labs pairs a quiz question with (for gradable labs) a task: apply real manifests (a Volcano gang Job, an MPIJob, a single-AZ Karpenter NodePool, pods requesting EFA) and let trainlab check, one check at a time, what is right, what is wrong and how to fix it.

Start here:
  trainlab list                  the labs, and which are gradable
  trainlab quiz 9                answer question 9 (--answer A|B|C|D in scripts)
  trainlab show 9                question, task and checks of lab 9
  trainlab check --all --demo    grade the embedded demo, no cluster
  trainlab start 9 --draft-only  write the starting file gang-train.yaml
  trainlab check 9 --files gang-train.yaml --profile kind
                                 grade your manifest before applying it, with
                                 kind's figures (3 GPU nodes of 8 GPUs)
  trainlab check 9 --snapshot DIR
                                 grade saved `kubectl get -o yaml` output
  trainlab start 9 ; trainlab check 9 --wait 5m ; trainlab reset 9
                                 the same on a cluster (kind or EKS)

LAB is a number (9), an id (volcano-gang) or a folder name (09-volcano-gang).";

#[derive(Debug, Parser)]
#[command(name = "trainlab", version, about = ABOUT, long_about = LONG_ABOUT, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Language of texts: ja or en [default: from LANG/LC_ALL: ja* → ja, else en]
    #[arg(long, global = true, value_enum)]
    pub lang: Option<Lang>,
    /// Read labs from this folder instead of the copy built into the binary (for lab authors)
    #[arg(long, global = true, value_name = "DIR")]
    pub labs_dir: Option<PathBuf>,
    /// Log each API request (verb, path, status, milliseconds) to stderr; -vv for more detail
    #[arg(short = 'v', long = "verbose", global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The most MiB read from the files of one command together (--files, --snapshot) and from
    /// one API answer; more is refused, naming this flag
    #[arg(long, global = true, value_name = "MIB", default_value_t = crate::observe::limits::DEFAULT_MAX_INPUT_MIB, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_input_mib: u64,
    /// The most objects read from the files of one command together and from one LIST (all its
    /// pages), or held of one kind while a room is followed (--watch, --serve). Each costs up
    /// to about 3 KB while judged, so the default bounds that at about 300 MB
    #[arg(long, global = true, value_name = "N", default_value_t = crate::observe::limits::DEFAULT_MAX_OBJECTS, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_objects: u64,
    /// Where to keep what API servers answered to discovery between commands (six hours, as
    /// kubectl's `--cache-dir`): DIR/discovery/<server>/ [default: $XDG_CACHE_HOME/trainlab or
    /// ~/.cache/trainlab]
    #[arg(long, global = true, value_name = "DIR", env = "TRAINLAB_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Keep no discovery cache: ask every API server what it serves on every command
    #[arg(long, global = true, env = "TRAINLAB_NO_CACHE", action = clap::ArgAction::SetTrue, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
    /// The cluster connection (`--context`, `--kubeconfig`, …): global, so it may come before
    /// the subcommand as well as after it, as with kubectl.
    #[command(flatten)]
    pub live: live::LiveArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the labs: number, id, title, topic, and whether they are gradable
    List(list::ListArgs),
    /// Show a lab: the question, the task (with the profile's parameters) and its checks
    Show(show::ShowArgs),
    /// Answer quiz questions (interactive in a terminal; --answer for scripts)
    Quiz(quiz::QuizArgs),
    /// Grade labs on the current cluster, or from saved state, your manifests or the demo
    Check(check::CheckArgs),
    /// Grade a workshop room: learners × labs, as a table, JSON, JUnit, CSV or an HTML scoreboard
    Grade(grade::GradeArgs),
    /// Print the read-only RBAC that workshop grading needs (no Secrets), for admins to review
    Rbac(rbac::RbacArgs),
    /// Validate lab files: schema, both languages, check ids, solution and draft
    Lint(lint::LintArgs),
    /// Prepare a practice cluster (kind: faked accelerators, real operators)
    Setup(setup::SetupArgs),
    /// Inspect the current cluster: nodes, accelerators, profile, capabilities, and which labs it
    /// can run now (yes, partly: the checks that would be skipped, or no) (read-only)
    Doctor(doctor::DoctorArgs),
    /// Save what grading labs reads from the cluster, for `check --snapshot` (read-only)
    Snapshot(snapshot::SnapshotArgs),
    /// Start a lab on a cluster: create its namespace, apply its starter, write your draft
    Start(start::StartArgs),
    /// Apply a lab's reference solution (instructors, self-tests)
    Solve(solve::SolveArgs),
    /// Delete a lab's namespace and the cluster-scoped objects trainlab labelled for it
    Reset(reset::ResetArgs),
}

impl Global {
    /// The command's bounds on what it reads (`--max-input-mib`, `--max-objects`).
    pub fn limits(&self) -> crate::observe::limits::Limits {
        crate::observe::limits::Limits::new(self.max_input_mib, self.max_objects)
    }

    /// Where discovery answers are kept between commands: `--cache-dir`, else the default
    /// folder; none with `--no-cache` or an empty `--cache-dir`.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        self.cache_dir
            .clone()
            .filter(|d| !d.as_os_str().is_empty())
            .or_else(crate::cluster::cache::default_cache_dir)
    }

    /// How every command connects: the connection flags, the command's bounds and the
    /// discovery cache, resolved once here and carried by the options (no process globals).
    pub fn connect_opts(&self) -> crate::cluster::ConnectOpts {
        self.live.opts(self.limits(), self.cache_dir())
    }

    pub fn lang(&self) -> Lang {
        self.lang.unwrap_or_else(Lang::from_env)
    }

    pub fn catalog(&self) -> Result<Catalog, crate::Error> {
        match &self.labs_dir {
            Some(dir) => Ok(Catalog::from_dir(dir)?),
            None => Ok(Catalog::embedded()?),
        }
    }
}

/// Runs a parsed command line and returns the process exit code. Errors are printed here, once,
/// with what to do next.
pub fn dispatch(cli: Cli) -> i32 {
    if output::stdout_was_closed() {
        let said = crate::text::say(
            cli.global.lang(),
            "エラー: 標準出力が閉じています（`>&-`）。trainlab は結果を標準出力に書きます。ファイルか /dev/null にリダイレクトしてください\n",
            "error: standard output is closed (`>&-`); trainlab writes its results there: redirect it to a file, or to /dev/null to discard them\n",
        );
        output::eprint(&said);
        return ExitCode::BadInput.code();
    }
    let result = match &cli.command {
        Command::List(a) => list::run(&cli.global, a),
        Command::Show(a) => show::run(&cli.global, a),
        Command::Quiz(a) => quiz::run(&cli.global, a),
        Command::Check(a) => check::run(&cli.global, a),
        Command::Grade(a) => grade::run(&cli.global, a),
        Command::Rbac(a) => rbac::run(&cli.global, a),
        Command::Lint(a) => lint::run(&cli.global, a),
        Command::Setup(a) => setup::run(&cli.global, a),
        Command::Doctor(a) => doctor::run(&cli.global, a),
        Command::Snapshot(a) => snapshot::run(&cli.global, a),
        Command::Start(a) => start::run(&cli.global, a),
        Command::Solve(a) => solve::run(&cli.global, a),
        Command::Reset(a) => reset::run(&cli.global, a),
    };
    let code = match result {
        Ok(code) => code.code(),
        Err(e) => {
            let lang = cli.global.lang();
            let label = match lang {
                crate::text::Lang::Ja => "エラー",
                crate::text::Lang::En => "error",
            };
            output::eprint(&format!("{label}: {}\n", e.in_lang(lang)));
            e.exit_code().code()
        }
    };
    // A report that did not reach its file is no report: say so, whatever the grade was.
    match output::stdout_failure() {
        Some(why) => {
            output::eprint(&format!(
                "error: could not write the output to standard output: {why}\n"
            ));
            ExitCode::BadInput.code()
        }
        None => code,
    }
}

/// `--param name=value`
pub fn parse_param(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(crate::text::say(
            args::lang(),
            format!("NAME=VALUE の形で書いてください。`{s}` でした"),
            format!("expected NAME=VALUE, found `{s}`"),
        )),
    }
}

pub(crate) fn ok() -> Result<ExitCode, crate::Error> {
    Ok(ExitCode::Ok)
}
