//! One grading run for every source. The command line is resolved into a validated [`Plan`]
//! before any work (labs, targets, source, parameters, profile, repeat mode); [`run`] then
//! observes once per round — one LIST per distinct query on a live cluster, the same planned
//! queries answered from files offline — judges every lab, and with `--wait`/`--watch`
//! observes again. `cli/` only parses and renders.

pub mod learners;
pub mod rounds;
pub mod server_verdict;
pub mod stream;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::catalog::{Catalog, LabBundle};
use crate::cluster::{connect, gather, gather_more, Conn, ConnectOpts, Discovery};
use crate::exit::ExitCode;
use crate::facts::capabilities::{self, Capabilities};
use crate::facts::{ClusterNodes, Profile};
use crate::labs::verifier_for;
use crate::observe::{sources, Observed, Query};
use crate::results::check::Checked;
use crate::verify::{self, LabResult, Status, Target, Verifier};
use crate::Error;

/// Where the state to grade comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A cluster through the API server.
    Live(ConnectOpts),
    /// Saved `kubectl get -o yaml` output.
    Snapshot(PathBuf),
    /// The learner's manifests (static mode).
    Files(Vec<PathBuf>),
    /// The state embedded in the binary.
    Demo,
}

impl Source {
    pub fn is_live(&self) -> bool {
        matches!(self, Source::Live(_))
    }
}

/// Grade once, re-grade while pending (bounded), or re-grade until interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    Once,
    /// Re-observe while any check is pending, until this much time has passed.
    Wait(Duration),
    /// Re-observe every interval until Ctrl-C.
    Watch(Duration),
}

/// How a run reads and is shown: resolved once from the command line before any work
/// (ripgrep's `HiArgs`), moved whole from the [`Request`] into the [`Plan`], where the run and
/// its reporters both take it from (nothing is copied field by field, nothing bypasses the
/// plan).
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub source: Source,
    pub profile: Option<Profile>,
    pub repeat: Repeat,
    /// `--dry-run=server` with `--files`: also send every object to this cluster as a
    /// server-side dry run ([`server_verdict`]).
    pub server_dry_run: Option<ConnectOpts>,
    /// The bounds on what the files bring (`--max-input-mib`, `--max-objects`); a live source
    /// carries its own in its `ConnectOpts`.
    pub limits: crate::observe::limits::Limits,
    /// How the listeners show the run.
    pub output: Output,
}

/// How a run is shown: the report's format and language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    pub format: crate::report::Format,
    pub lang: crate::text::Lang,
}

impl RunOptions {
    /// Options for a plan graded once inside another run (a room's learners and clusters):
    /// what it reads and with which bounds; the room reports its results itself.
    pub fn once(
        source: Source,
        profile: Option<Profile>,
        limits: crate::observe::limits::Limits,
    ) -> RunOptions {
        RunOptions {
            source,
            profile,
            repeat: Repeat::Once,
            server_dry_run: None,
            limits,
            output: Output {
                format: crate::report::Format::Human,
                lang: crate::text::Lang::En,
            },
        }
    }

    /// Whether the run reads a cluster (spinners, `--wait` and `--watch` are for those).
    pub fn is_live(&self) -> bool {
        self.source.is_live()
    }

    /// Whether each round is drawn as it is graded (`--watch`).
    pub fn is_watch(&self) -> bool {
        matches!(self.repeat, Repeat::Watch(_))
    }
}

/// What the user asked for, before validation: which labs, where, and the run's options.
#[derive(Debug, Clone)]
pub struct Request {
    pub labs: Vec<String>,
    pub all: bool,
    pub namespace: Option<String>,
    /// A workshop learner: each lab's namespace from grade's default template, and the
    /// learner's prefix on the task's cluster-scoped names (`-n` still names the namespace).
    pub learner: Option<String>,
    pub params: Vec<(String, String)>,
    pub options: RunOptions,
}

/// One lab to grade, for one target.
pub struct Item<'c> {
    pub bundle: &'c LabBundle,
    pub verifier: &'static dyn Verifier,
    pub target: Target,
}

/// A validated grading run.
pub struct Plan<'c> {
    pub items: Vec<Item<'c>>,
    /// `--param` values. In static mode an explicit `--profile` also supplies the facts a
    /// cluster would (`verify::Params::given`).
    pub params: BTreeMap<String, String>,
    pub options: RunOptions,
}

impl<'c> Plan<'c> {
    /// Validates a request: every named lab exists and is gradable, `-n` goes with one lab,
    /// `--wait`/`--watch` with a live cluster, and every `--param` is a parameter of a lab.
    pub fn resolve(catalog: &'c Catalog, req: Request) -> Result<Plan<'c>, Error> {
        let bundles = select(catalog, &req.labs, req.all)?;
        if req.namespace.is_some() && bundles.len() != 1 {
            return Err(Error::usage(
                "-n/--namespace には lab を 1 つだけ指定してください",
                "-n/--namespace needs exactly one lab",
            ));
        }
        let options = req.options;
        if options.server_dry_run.is_some() && !matches!(options.source, Source::Files(_)) {
            return Err(Error::usage(
                "--dry-run=server は --files のマニフェストを API サーバーに送って検証します。--files と一緒に指定してください",
                "--dry-run=server sends the manifests of --files to the API server; give it with --files",
            ));
        }
        if !options.is_live() && options.repeat != Repeat::Once {
            return Err(Error::usage(
                "--wait と --watch はライブクラスターを採点します。--snapshot/--files/--demo を外してください",
                "--wait and --watch grade a live cluster; drop --snapshot/--files/--demo",
            ));
        }
        check_params(&bundles, &req.params)?;
        let params: BTreeMap<String, String> = req.params.into_iter().collect();
        let mut items = Vec::new();
        for b in bundles {
            let verifier = verifier_for(&b.lab.id).ok_or_else(|| crate::labs::quiz_only(b))?;
            let target =
                learners::place(&b.lab.id, req.namespace.as_deref(), req.learner.as_deref())?;
            items.push(Item {
                bundle: b,
                verifier,
                target,
            });
        }
        Ok(Plan {
            items,
            params,
            options,
        })
    }

    /// Every query of the run, deduplicated in order: nodes first, then each lab's declared reads.
    pub fn queries(&self) -> Vec<Query> {
        let mut seen = std::collections::HashSet::new();
        self.each_query()
            .filter(|q| seen.insert(q.clone()))
            .collect()
    }

    /// Every item's queries, made one at a time, repeats included: a room's plan asks tens of
    /// thousands of them, which only need to be merged (`grade::read::merge`).
    pub fn each_query(&self) -> impl Iterator<Item = Query> + '_ {
        self.items
            .iter()
            .flat_map(|i| verify::queries(i.verifier, &i.target))
    }

    /// The capabilities any graded check names (room grading detects them in its own pass).
    pub fn wanted_capabilities(&self) -> Vec<&'static capabilities::Capability> {
        self.capabilities()
    }

    /// What an offline observation gates, as a run does: on the kind profile, the capabilities
    /// kind cannot provide; nothing for static mode or other profiles.
    pub fn offline_capabilities(&self, obs: &Observed) -> Option<Capabilities> {
        verify::offline_gate(obs, self.options.profile, &self.capabilities())
    }

    /// The capabilities any graded check names.
    fn capabilities(&self) -> Vec<&'static capabilities::Capability> {
        capabilities::named(
            self.items
                .iter()
                .flat_map(|i| i.bundle.lab.capability_names()),
        )
    }
}

/// The `--param` names each lab's verifier reads while judging (through `ctx.params.get`,
/// `given` or `require`, directly or through a kit rule). A task parameter missing here only
/// fills the task text (lab 9's `replicas`, lab 2's `tp`): a `--param` of it would change
/// nothing graded, so it is refused. `tests::reads_match_the_verifiers_source` checks this
/// table against every lab's source, both ways.
const READS: &[(&str, &[&str])] = &[
    // labs/tensor_parallelism/mod.rs → kit/nodes/capacity.rs `GpuNodes::find`
    ("tensor-parallelism", &["gpus_per_node", "nodes"]),
    // labs/parallelism_3d/mod.rs, and `GpuNodes::find`
    (
        "parallelism-3d",
        &[
            "gpus_per_node",
            "nodes",
            "model_params_billion",
            "gpu_memory_gb",
        ],
    ),
    // labs/slurm_accounting/mod.rs (`Db::of`, the controller's name)
    (
        "slurm-accounting",
        &[
            "controller",
            "db_service",
            "db_port",
            "database",
            "db_user",
            "password_secret",
            "password_key",
        ],
    ),
    (
        "slinky-nodeset",
        &["controller", "instance_type", "nodes", "gpus_per_node"],
    ),
    ("efa-nccl", &["instance_type", "gpus"]),
    // labs/bionemo/mod.rs, and `GpuNodes::find`
    (
        "bionemo",
        &["standin_image", "secret", "gpus", "gpus_per_node", "nodes"],
    ),
    (
        "optimum-neuron",
        &["instance_type", "standin_image", "neuron", "neuroncores"],
    ),
    ("fsx-lustre", &["subnet_id", "security_group_ids"]),
    ("volcano-gang", &["gpus_per_node", "gpu_nodes"]),
    ("bf16", &[]),
    ("gradient-checkpointing", &["batch_size", "memory_limit"]),
    ("zero3-offload", &["model_params"]),
    ("mpijob-slots", &["gpus_per_worker", "mpirun"]),
    ("checkpoint-strategy", &[]),
    ("karpenter-single-az", &[]),
];

/// The largest whole number a numeric `--param` takes: far above any real count of nodes, GPUs,
/// GB or ports, and small enough that what trainlab derives from it (a replica count one
/// larger, a product of two) stays a number its own parsers accept.
pub const PARAM_MAX: u32 = 65_535;

/// The parameters the verifier of `lab_id` reads (see [`READS`]).
pub fn params_read(lab_id: &str) -> &'static [&'static str] {
    READS
        .iter()
        .find(|(id, _)| *id == lab_id)
        .map_or(&[], |(_, names)| *names)
}

/// Every `--param` must be read by a graded lab's verifier, given once (or repeated with the
/// same value), and, where the lab's own value is a whole number, a whole number from 1 to
/// [`PARAM_MAX`].
fn check_params(bundles: &[&LabBundle], given: &[(String, String)]) -> Result<(), Error> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, value) in given {
        match seen.insert(name, value) {
            Some(before) if before != value => {
                return Err(Error::usage(
                    format!("--param {name} が 2 回、違う値で指定されています（{before} と {value}）。どちらか 1 つにしてください"),
                    format!("--param {name} is given twice with different values ({before} and {value}); keep one"),
                ));
            }
            _ => {}
        }
    }
    let task_values = |b: &LabBundle, name: &str| -> Vec<String> {
        b.lab
            .task
            .as_ref()
            .map(|t| {
                t.params
                    .values()
                    .filter_map(|p| p.get(name).cloned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let read: BTreeSet<&str> = bundles
        .iter()
        .flat_map(|b| params_read(&b.lab.id).iter().copied())
        .collect();
    for (name, value) in seen {
        if !read.contains(name) {
            let list: Vec<&str> = read.iter().copied().collect();
            let (ja, en) = if list.is_empty() {
                ("なし".to_string(), "none".to_string())
            } else {
                (list.join(", "), list.join(", "))
            };
            let in_text: Vec<String> = bundles
                .iter()
                .filter(|b| !task_values(b, name).is_empty())
                .map(|b| b.lab.number.to_string())
                .collect();
            return Err(if in_text.is_empty() {
                Error::usage(
                    format!("--param {name}: 採点する lab のパラメーターではありません。使える名前: {ja}（`trainlab show LAB` で一覧できます）"),
                    format!("--param {name}: not a parameter of the lab(s) graded; valid names: {en} (`trainlab show LAB` lists them)"),
                )
            } else {
                let labs = in_text.join(", ");
                Error::usage(
                    format!("--param {name}: lab {labs} の採点はこの値を読みません（課題文に出てくるだけです）。指定しても結果は変わらないので外してください。採点が読む名前: {ja}"),
                    format!("--param {name}: grading lab {labs} does not read it (it only appears in the task text), so it would change nothing; drop it. Names grading reads: {en}"),
                )
            });
        }
        let numeric = bundles.iter().any(|b| {
            params_read(&b.lab.id).contains(&name)
                && task_values(b, name)
                    .iter()
                    .any(|v| v.trim().parse::<u32>().is_ok())
        });
        if numeric {
            let ok = value
                .trim()
                .parse::<u32>()
                .is_ok_and(|n| (1..=PARAM_MAX).contains(&n));
            if !ok {
                return Err(Error::usage(
                    format!(
                        "--param {name}={value}: 1 から {PARAM_MAX} までの整数を指定してください"
                    ),
                    format!(
                        "--param {name}={value}: expected a whole number from 1 to {PARAM_MAX}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

pub use crate::labs::is_gradable;

/// The labs named (each once, however it is named), or every gradable lab for `--all`. A
/// quiz-only lab named explicitly is an error that says so (nothing to grade), not an empty pass.
pub fn select<'c>(
    catalog: &'c Catalog,
    keys: &[String],
    all: bool,
) -> Result<Vec<&'c LabBundle>, Error> {
    if all {
        return Ok(catalog
            .labs
            .iter()
            .filter(|b| is_gradable(&b.lab))
            .collect());
    }
    let mut out = Vec::new();
    for k in keys {
        let b = catalog.get(k)?;
        if !is_gradable(&b.lab) {
            return Err(crate::labs::quiz_only(b));
        }
        // `check 9 volcano-gang` names one lab twice: grade it once, in first-named order.
        if !out.iter().any(|o: &&LabBundle| o.lab.id == b.lab.id) {
            out.push(b);
        }
    }
    Ok(out)
}

pub mod events;
pub use events::{Event, Listener, Quiet};

/// What `check` listens with: each round is a [`Checked`] (the server's verdict, which only
/// `--files … --dry-run=server` has, joins the final one).
pub type Progress = dyn Listener<Checked>;

enum Session {
    Offline(Observed),
    Live {
        conn: Conn,
        discovery: Box<Discovery>,
        capabilities: Option<Capabilities>,
    },
}

/// Runs a plan to its end: once, until nothing is pending (or the wait runs out), or until
/// Ctrl-C in watch mode. Returns the last round's results; the listener heard every round
/// (`grade` uses it per cluster, and reports the room itself).
pub async fn run(plan: &Plan<'_>, progress: &mut Progress) -> Result<Vec<LabResult>, Error> {
    let queries = plan.queries();
    let session = match &plan.options.source {
        Source::Live(opts) => {
            let conn = connect(opts).await?;
            progress.on(Event::Connected(&conn.describe()));
            Session::Live {
                discovery: Box::new(Discovery::cached(&conn)),
                conn,
                capabilities: None,
            }
        }
        Source::Snapshot(dir) => Session::Offline(
            sources::snapshot_within(dir, plan.options.limits)?.planned(queries.clone()),
        ),
        Source::Files(paths) => Session::Offline(
            sources::files_within(paths, plan.options.limits)?.planned(queries.clone()),
        ),
        Source::Demo => Session::Offline(sources::demo()?.planned(queries.clone())),
    };
    run_session(plan, &queries, session, progress).await
}

/// `check`: [`run`], and with `--files … --dry-run=server` the server's verdict on the same
/// files, read once ([`server_verdict`]). The final [`Checked`] goes to the listener's
/// [`Listener::finished`], the one place a report is rendered; the exit code is returned.
pub async fn check(plan: &Plan<'_>, progress: &mut Progress) -> Result<ExitCode, Error> {
    let checked = checked(plan, progress).await?;
    let code = checked.exit_code();
    progress.finished(checked);
    Ok(code)
}

async fn checked(plan: &Plan<'_>, progress: &mut Progress) -> Result<Checked, Error> {
    let (Source::Files(paths), Some(opts)) = (&plan.options.source, &plan.options.server_dry_run)
    else {
        return Ok(Checked {
            results: run(plan, progress).await?,
            server: None,
        });
    };
    let queries = plan.queries();
    let obs = sources::files_within(paths, plan.options.limits)?.planned(queries.clone());
    let mut results = run_session(plan, &queries, Session::Offline(obs.clone()), progress).await?;
    let server = server_verdict::server(plan, opts, &obs, &queries, &mut results, progress).await?;
    Ok(Checked {
        results,
        server: Some(server),
    })
}

async fn run_session(
    plan: &Plan<'_>,
    queries: &[Query],
    mut session: Session,
    progress: &mut Progress,
) -> Result<Vec<LabResult>, Error> {
    let mut rounds = CheckRounds {
        plan,
        queries,
        session: &mut session,
        progress,
    };
    let last = rounds::run_rounds(&mut rounds, plan.options.repeat).await?;
    Ok(last.results)
}

/// `check`'s rounds: every planned lab, observed and judged together.
struct CheckRounds<'r, 'p> {
    plan: &'r Plan<'p>,
    queries: &'r [Query],
    session: &'r mut Session,
    progress: &'r mut Progress,
}

impl rounds::Rounds for CheckRounds<'_, '_> {
    type Graded = Checked;

    async fn round(&mut self) -> Result<Checked, Error> {
        let results = round(self.plan, self.queries, self.session, self.progress).await?;
        Ok(Checked {
            results,
            server: None,
        })
    }

    fn pending(checked: &Checked) -> usize {
        checked
            .results
            .iter()
            .map(|r| r.count(Status::Pending))
            .sum()
    }

    fn graded(&mut self, checked: &Checked) {
        self.progress.on(Event::Graded(checked));
    }

    fn waiting(&mut self, pending: usize, pause: Duration, elapsed: Duration, limit: Duration) {
        self.progress.on(Event::Waiting {
            pending,
            pause,
            elapsed,
            limit,
        });
    }

    fn wait_done(&mut self) {
        self.progress.on(Event::WaitDone);
    }
}

/// Reads exactly what grading the plan would read, once, and returns each query's answer:
/// `trainlab snapshot` saves these so `check --snapshot` grades the same state offline.
pub async fn capture(
    plan: &Plan<'_>,
    progress: &mut Progress,
) -> Result<Vec<(Query, crate::observe::ReadResult)>, Error> {
    let Source::Live(opts) = &plan.options.source else {
        return Err(Error::usage(
            "snapshot はライブクラスターを読み取ります。--snapshot/--files/--demo は指定できません",
            "snapshot reads a live cluster; it takes no --snapshot/--files/--demo",
        ));
    };
    let conn = connect(opts).await?;
    progress.on(Event::Connected(&conn.describe()));
    let queries = plan.queries();
    progress.on(Event::Reading {
        queries: queries.len(),
    });
    let obs = gather(&conn, &Discovery::cached(&conn), &queries).await;
    progress.on(Event::ReadDone);
    Ok(obs?.answers(&queries))
}

/// One observation and one judgement of every lab.
async fn round(
    plan: &Plan<'_>,
    queries: &[Query],
    session: &mut Session,
    progress: &mut Progress,
) -> Result<Vec<LabResult>, Error> {
    let fresh;
    let context = match &*session {
        Session::Live { conn, .. } => Some(conn.context.clone()),
        Session::Offline(_) => None,
    };
    let offline_caps;
    // The nodes are decoded once per round, for capability detection and every lab.
    let (obs, nodes, caps) = match session {
        Session::Offline(obs) => {
            offline_caps = plan.offline_capabilities(obs);
            (&*obs, ClusterNodes::of(obs), offline_caps.as_ref())
        }
        Session::Live {
            conn,
            discovery,
            capabilities,
        } => {
            progress.on(Event::Reading {
                queries: queries.len(),
            });
            // One concurrent round: the labs' reads, and in the first round what capability
            // detection needs (the controllers' Deployments by name, and the capabilities'
            // kinds resolved beside the LISTs), so detection sends nothing after them.
            let first = capabilities.is_none();
            let wanted = plan.capabilities();
            let mut reads = queries.to_vec();
            if first {
                reads.extend(crate::profile::detect::controller_queries(&wanted));
            }
            discovery.next_round();
            let kinds = async {
                if first {
                    crate::profile::detect::resolve_kinds(conn, discovery, &wanted).await;
                }
                Ok(())
            };
            // A failed observation (the probe's error) ends the round at once, without waiting
            // for the kinds.
            let observed = futures::future::try_join(gather_more(conn, discovery, &reads), kinds)
                .await
                .map(|(observed, ())| observed);
            progress.on(Event::ReadDone);
            fresh = observed?;
            let nodes = ClusterNodes::of(&fresh);
            if first {
                let profile = plan.options.profile.or_else(|| nodes.profile());
                let facts = match nodes.facts()? {
                    Ok(f) => f,
                    Err(_) => &[],
                };
                let deployments = |q: &Query| {
                    fresh
                        .list(q)
                        .map(|objs| objs.into_iter().cloned().collect())
                };
                *capabilities = Some(
                    crate::profile::detect::detect_from(
                        conn,
                        discovery,
                        &wanted,
                        facts,
                        profile,
                        &deployments,
                    )
                    .await,
                );
            }
            (&fresh, nodes, capabilities.as_ref())
        }
    };
    let params = params_with_site(&plan.params, context.as_deref(), plan.options.profile)?;
    // The profile, detected once for the round's labs rather than by each lab's run.
    let profile = plan.options.profile.or_else(|| nodes.profile());
    let mut results = Vec::with_capacity(plan.items.len());
    for item in &plan.items {
        let mut target = item.target.clone();
        target.context = context.clone();
        results.push(verify::run(
            item.bundle,
            item.verifier,
            obs,
            &nodes,
            &target,
            &params,
            profile,
            caps,
        )?);
    }
    Ok(results)
}

/// The `--param` values with, beneath them, the site file `trainlab setup eks` wrote for the
/// kube context (`profile::site`): on a cluster it prepared, the lab parameters of the same
/// name (zone, subnet_id, security_group_ids) are those facts of the cluster. Only `setup eks`
/// writes site files, so a context that has one is an EKS cluster; `--profile kind` still
/// ignores it. A site file that cannot be read is an error naming it; no context or no file
/// changes nothing.
pub fn params_with_site(
    params: &BTreeMap<String, String>,
    context: Option<&str>,
    profile: Option<Profile>,
) -> Result<BTreeMap<String, String>, Error> {
    let site = match context {
        Some(c) if profile != Some(Profile::Kind) => crate::profile::site::Site::load(c)?,
        _ => None,
    };
    let mut out = site.map(|s| s.values).unwrap_or_default();
    out.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source of a lab's verifier folder, all files together.
    fn lab_source(lab_id: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/labs")
            .join(lab_id.replace('-', "_"));
        let mut out = String::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                out.push_str(&std::fs::read_to_string(p).unwrap());
            }
        }
        out
    }

    /// Ways the verifiers read a parameter by name (whitespace ignored, so a call rustfmt
    /// splits over lines counts).
    fn reads_by_name(src: &str, name: &str) -> bool {
        let src: String = src.chars().filter(|c| !c.is_whitespace()).collect();
        ["get", "given", "require", "p", "read"]
            .iter()
            .any(|f| src.contains(&format!("{f}(\"{name}\"")))
            || src.contains(&format!("),\"{name}\")"))
    }

    #[test]
    fn reads_match_the_verifiers_source() {
        let catalog = Catalog::embedded().unwrap();
        for b in catalog.labs.iter().filter(|b| is_gradable(&b.lab)) {
            let id = &b.lab.id;
            assert!(READS.iter().any(|(i, _)| i == id), "{id} is not in READS");
            let src = lab_source(id);
            // `GpuNodes::find` (kit/nodes/capacity.rs) reads gpus_per_node and nodes.
            let kit = src.contains("GpuNodes::find");
            for name in params_read(id) {
                let via_kit = kit && ["gpus_per_node", "nodes"].contains(name);
                assert!(
                    via_kit || reads_by_name(&src, name),
                    "{id}: READS names {name}, which its source does not read"
                );
            }
            let task = b.lab.task.as_ref().unwrap();
            for name in task.params.values().flat_map(|p| p.keys()) {
                if !params_read(id).contains(&name.as_str()) {
                    assert!(
                        !reads_by_name(&src, name),
                        "{id} reads {name}, which READS leaves out"
                    );
                }
            }
        }
    }
}
