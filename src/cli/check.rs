//! `trainlab check LAB...` — grade the current cluster (default), saved state (`--snapshot`), the learner's manifests
//! (`--files`, static mode) or the embedded demo (`--demo`).

use std::path::PathBuf;

use clap::Args;

use super::{parse_param, Global};
use crate::exit::ExitCode;
use crate::facts::Profile;
use crate::plan::{self, Output, Plan, Repeat, Request, RunOptions, Source};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  trainlab check 9 --wait 2m
      the current kube context's cluster, re-checking while pending
  trainlab check --all --demo
      grade the embedded demo state
  trainlab start 9 --draft-only
      write the starting file gang-train.yaml (no cluster)
  trainlab check 9 --files gang-train.yaml --profile kind
      static mode: your manifest before applying it, with kind's facts
  trainlab check 15 --files nodepool.yaml --dry-run=server
      static mode, and the cluster's API server validates every object without storing it
  trainlab check 13 --snapshot ./saved -o junit
      saved `kubectl get -o yaml` output, as JUnit XML

Without --snapshot, --files or --demo, check reads the cluster of the current kube context (or --context) and never writes to it. In static mode (--files) checks about cluster state are skipped, never failed, and no cluster is contacted.

--dry-run=server (with --files) also sends every object of the files to the current context's API server as `kubectl apply --server-side --dry-run=server --validate=strict` would: a server-side apply with dryRun=All, force, fieldValidation=Strict and field manager trainlab, into the lab's namespace unless an object names its own. The server decodes it against the kind's schema, validates it (enums, unknown fields, CEL rules) and runs the admission webhooks, then stores nothing. A refusal is quoted word for word under the spec check that judges the refused field or reads the refused object (or under the lab), and fails it (exit 1); a dry run the cluster cannot make (unreachable, forbidden, a namespace that does not exist yet) is an environment error (exit 3), never a fail. Dry runs are authorized like the write itself (patch on the kind) and appear in the API server's audit log as `patch` requests whose requestURI carries dryRun=All.")]
pub struct CheckArgs {
    /// Labs to grade (number, id or folder)
    #[arg(required_unless_present = "all")]
    pub labs: Vec<String>,
    /// Grade every gradable lab
    #[arg(long, conflicts_with = "labs")]
    pub all: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// With --files: `server` also has the API server of the current context validate every
    /// object, as `kubectl apply --server-side --dry-run=server` does, storing nothing (see
    /// below)
    #[arg(
        long = "dry-run",
        value_enum,
        value_name = "STRATEGY",
        require_equals = true,
        requires = "files"
    )]
    pub dry_run: Option<DryRun>,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value = "human")]
    pub output: super::output::CheckOutput,
    /// A lab parameter, e.g. --param gpu_nodes=3 (for facts static mode cannot read). Only a
    /// parameter the lab's grading reads is taken; a count is a whole number from 1 to 65535;
    /// a repeat must repeat the same value
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Profile whose parameters apply [default: detected from node providerIDs, else kind]; with
    /// --files, its figures (GPU nodes, GPUs per node) stand for the cluster's
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Namespace of the lab [default: trainlab-<lab id>, or <learner>-<lab id> with --learner];
    /// only with one lab
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// In a workshop: check your lab where `start --learner NAME` put it and `trainlab grade`
    /// looks (e.g. --learner alice: namespace alice-<lab id>, NodePool alice-gpu-training)
    #[arg(long, value_name = "NAME")]
    pub learner: Option<String>,
    /// Live: re-check until nothing is pending or DURATION (e.g. 90s, 5m) runs out (exit 4)
    #[arg(long, value_name = "DURATION", value_parser = super::live::parse_duration, conflicts_with = "watch")]
    pub wait: Option<std::time::Duration>,
    /// Live: keep re-grading as you edit, redrawing the result, until Ctrl-C
    #[arg(long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
#[group(required = false, multiple = false)]
pub struct SourceArgs {
    /// A folder of saved cluster state (`kubectl get ... -o yaml` Lists, multi-document YAML, JSON)
    #[arg(long, value_name = "DIR")]
    pub snapshot: Option<PathBuf>,
    /// Your manifest files or folders (static mode: no cluster state); `-` reads them from
    /// standard input, as `kubectl apply -f -` does
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The embedded demo: a learner half-way through the flagship labs
    #[arg(long)]
    pub demo: bool,
}

/// `--dry-run`, spelled as kubectl's (`--dry-run=none|client|server`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DryRun {
    /// Static mode only: no cluster is contacted (the default)
    None,
    /// The same as none: check never sends anything to a cluster without `server`
    Client,
    /// Also send every object to the API server as a server-side dry run: validated, never stored
    Server,
}

pub fn run(g: &Global, a: &CheckArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let plan = Plan::resolve(&catalog, a.request(g))?;
    let mut screen = super::live::Screen::new(&plan.options);
    super::live::runtime()?.block_on(plan::check(&plan, &mut screen))
}

impl CheckArgs {
    /// The command line as the library's request: every flag, the global ones included,
    /// resolved here once and moved into the plan.
    fn request(&self, g: &Global) -> Request {
        let source = if let Some(dir) = &self.source.snapshot {
            Source::Snapshot(dir.clone())
        } else if !self.source.files.is_empty() {
            Source::Files(self.source.files.clone())
        } else if self.source.demo {
            Source::Demo
        } else {
            Source::Live(g.connect_opts())
        };
        let repeat = match (self.wait, self.watch) {
            (Some(d), _) => Repeat::Wait(d),
            (None, true) => Repeat::Watch(std::time::Duration::from_secs(2)),
            (None, false) => Repeat::Once,
        };
        Request {
            labs: self.labs.clone(),
            all: self.all,
            namespace: self.namespace.clone(),
            learner: self.learner.clone(),
            params: self.params.clone(),
            options: RunOptions {
                source,
                profile: self.profile,
                repeat,
                server_dry_run: (self.dry_run == Some(DryRun::Server)).then(|| g.connect_opts()),
                limits: g.limits(),
                output: Output {
                    format: self.output.into(),
                    lang: g.lang(),
                },
            },
        }
    }
}
