//! Workshop grading: many learners at once. A [`Room`] is the labs to grade and who is in the
//! room — named learners or learners found from labelled namespaces on one shared cluster, one
//! cluster per learner (`--contexts`), or the embedded demo room. [`run`] grades it once or
//! until Ctrl-C (`--watch`); `report::Scoreboard` is the graded room in one language, which every
//! room output renders.
//!
//! On a shared cluster the room costs about one LIST per distinct kind plus discovery, however
//! many learners it has ([`read`]); one cluster per learner runs the usual grading path for each
//! cluster, [`CONTEXTS_AT_ONCE`] clusters at a time by default, and a cluster that fails only
//! fails its learner's row.

mod demo;
mod follow;
mod judge;
pub mod rbac;
mod read;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, SystemTime};

use futures::stream::{self, StreamExt};

pub use crate::plan::learners::{
    check_learner, check_namespace, is_dns_label, own_cluster_target, parse_learners,
    shared_target, Template, DEFAULT_TEMPLATE,
};
pub use demo::LEARNERS as DEMO_LEARNERS;
pub use read::{filter, merge, RoomReads, SECRETS_WITHHELD};

use crate::catalog::{Catalog, LabBundle};
use crate::cluster::{connect, gather, Conn, ConnectOpts, Discovery};
use crate::exit::ExitCode;
use crate::facts::{NodeFacts, Profile};
use crate::observe::{kinds, Obj, Observed, Query, SourceKind, Unavailable};
use crate::plan::{self, Event, Item, Listener, Plan, Repeat, Request, RunOptions, Source};
use crate::results::room::room_exit_code;
use crate::results::room::{LearnerResult, RoomNote, RoomResult};
use crate::text::Lang;
use crate::verify::{self, LabResult, Outcome, Reason, Status, Verifier};
use crate::Error;

/// Clusters graded at once with `--contexts` unless `--concurrency` says otherwise. A cluster's
/// grading is a few round trips one after another (version beside discovery, then its LISTs all
/// at once), under a quarter of a second at 50 ms per request, so a room of 100 clusters takes 4
/// such waves at 32 (measured in `benches/room.rs`: 1.5 s on two cores). Every lab together
/// reads about 22 kinds, each LIST over its own connection, so 32 clusters keep about 700
/// requests (and sockets) open; `main` raises the open-file limit to the hard limit for that.
pub const CONTEXTS_AT_ONCE: usize = 32;

/// Who is in the room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Learners {
    /// Named learners on one shared cluster (`--learners a,b,c`).
    Named(Vec<String>),
    /// Learners found on one shared cluster from the namespaces this label selector picks
    /// (`--learners-from-namespaces LABEL=VALUE`), read back through the namespace template.
    FromNamespaces(String),
    /// One cluster per learner: kube contexts, each learner named after their context.
    Contexts(Vec<String>),
    /// The embedded demo room.
    Demo,
}

/// What the user asked for, before validation.
#[derive(Debug, Clone)]
pub struct RoomRequest {
    /// Labs to grade; none means every gradable lab.
    pub labs: Vec<String>,
    pub all: bool,
    pub learners: Learners,
    /// `--namespace-template` (shared clusters only).
    pub template: Option<String>,
    /// The shared cluster, or the kubeconfig holding every learner's context.
    pub connect: ConnectOpts,
    pub params: Vec<(String, String)>,
    pub profile: Option<Profile>,
    /// Clusters graded at once with `--contexts`.
    pub concurrency: usize,
    /// `--watch`: re-grade every this long until Ctrl-C.
    pub watch: Option<Duration>,
    pub output: RoomOutput,
}

/// How a room is shown: resolved with the room, so the run and its reporters take it from the
/// one [`Room`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomOutput {
    pub format: crate::report::room::RoomFormat,
    pub lang: Lang,
    /// `--html`: the scoreboard page is also written here.
    pub html: Option<std::path::PathBuf>,
    /// `--serve`: the scoreboard is also served over HTTP here.
    pub serve: Option<ServeAt>,
}

/// Where `--serve` listens, and the token it asks for (`--token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeAt {
    pub addr: std::net::SocketAddr,
    pub token: Option<String>,
}

/// A validated room.
pub struct Room<'c> {
    /// The labs, in catalog order, with their verifiers.
    pub labs: Vec<(&'c LabBundle, &'static dyn Verifier)>,
    pub learners: Learners,
    pub template: Template,
    pub connect: ConnectOpts,
    pub params: BTreeMap<String, String>,
    pub profile: Option<Profile>,
    pub concurrency: usize,
    pub watch: Option<Duration>,
    pub output: RoomOutput,
}

impl<'c> Room<'c> {
    /// Validates a request: the labs and parameters as `check` does, learner names, contexts
    /// and the namespace template.
    pub fn resolve(catalog: &'c Catalog, req: RoomRequest) -> Result<Room<'c>, Error> {
        let all = req.all || req.labs.is_empty();
        // Labs and --param are validated exactly as for `check` (the source does not matter).
        let plan = Plan::resolve(
            catalog,
            Request {
                labs: if all { Vec::new() } else { req.labs.clone() },
                all,
                namespace: None,
                learner: None,
                params: req.params.clone(),
                options: RunOptions::once(Source::Demo, req.profile, req.connect.limits),
            },
        )?;
        if req.watch.is_some() && req.learners == Learners::Demo {
            return Err(Error::usage(
                "--watch はクラスターを読み直しますが、デモの教室は変わりません。--watch を外してください",
                "--watch re-reads clusters; the demo room never changes: drop --watch",
            ));
        }
        if req.output.serve.is_some() && req.output.format != crate::report::room::RoomFormat::Table
        {
            return Err(Error::usage(
                "--serve はスコアボードをブラウザーに配信し続けます。-o json、junit、csv は文書を 1 つ出力するだけなので、--serve か -o を外してください（JSON は配信中の /room.json にあります）",
                "--serve keeps serving the board; -o json, junit and csv print one document: drop --serve or -o (the served board has the JSON at /room.json)",
            ));
        }
        if req.watch.is_some() && req.output.format != crate::report::room::RoomFormat::Table {
            return Err(Error::usage(
                "--watch は表を描き直します（--html も書き直します）。-o json、junit、csv は文書を 1 つ出力するだけなので、--watch か -o を外してください",
                "--watch redraws the table (and rewrites --html); -o json, junit and csv print one document: drop --watch or -o",
            ));
        }
        let template = match (&req.learners, &req.template) {
            (Learners::Contexts(_), Some(_)) => {
                return Err(Error::usage(
                    "--namespace-template は共有クラスター用です。--contexts では各受講者の lab はそれぞれのクラスターのいつもの namespace にあります",
                    "--namespace-template is for a shared cluster; with --contexts each learner's labs live in their own cluster's usual namespaces",
                ))
            }
            (Learners::Demo, Some(_)) => {
                return Err(Error::usage(
                    "--namespace-template は --demo には使えません",
                    "--namespace-template does not apply to --demo",
                ))
            }
            (_, Some(t)) => Template::parse(t)?,
            (_, None) => Template::default(),
        };
        match &req.learners {
            Learners::Named(names) => {
                for n in names {
                    check_learner(n)?;
                }
                for item in &plan.items {
                    for n in names {
                        let ns = template.namespace(n, &item.bundle.lab.id);
                        if !is_dns_label(&ns) {
                            let id = &item.bundle.lab.id;
                            return Err(Error::usage(
                                format!("受講者 `{n}`、lab {id}: namespace `{ns}` は namespace 名として使えません（63 文字まで）。短い受講者名を使うか、--namespace-template を指定してください"),
                                format!("learner `{n}`, lab {id}: the namespace `{ns}` is not a valid namespace name (at most 63 characters); use shorter learner names or --namespace-template"),
                            ));
                        }
                    }
                }
                let unique: HashSet<&String> = names.iter().collect();
                if unique.len() != names.len() || names.is_empty() {
                    return Err(Error::usage(
                        "--learners では各受講者を 1 回ずつ指定してください",
                        "--learners must name each learner once",
                    ));
                }
            }
            Learners::FromNamespaces(selector) => {
                if selector.trim().is_empty() {
                    return Err(Error::usage(
                        "--learners-from-namespaces には trainlab.dev/workshop=gpu-101 のようなラベルセレクターが必要です",
                        "--learners-from-namespaces needs a label selector such as trainlab.dev/workshop=gpu-101",
                    ));
                }
            }
            Learners::Contexts(ctxs) => {
                if ctxs.is_empty() || ctxs.iter().any(|c| c.is_empty()) {
                    return Err(Error::usage(
                        "--contexts に空の名前があります。kubeconfig の context をカンマ区切りで指定してください（--contexts kind-a,kind-b。`kubectl config get-contexts` で一覧できます）",
                        "--contexts has an empty name; give the kubeconfig contexts, comma-separated (--contexts kind-a,kind-b; `kubectl config get-contexts` lists them)",
                    ));
                }
                let mut seen = HashSet::new();
                if let Some(twice) = ctxs.iter().find(|c| !seen.insert(*c)) {
                    let twice = crate::catalog::echo(twice, 80);
                    return Err(Error::usage(
                        format!("--contexts に `{twice}` が 2 回あります。各 context は 1 回ずつ指定してください"),
                        format!("--contexts names `{twice}` twice; name each context once"),
                    ));
                }
            }
            Learners::Demo => {}
        }
        if req.concurrency == 0 {
            return Err(Error::usage(
                "--concurrency は 1 以上にしてください",
                "--concurrency must be at least 1",
            ));
        }
        Ok(Room {
            labs: plan.items.iter().map(|i| (i.bundle, i.verifier)).collect(),
            learners: req.learners,
            template,
            connect: req.connect,
            params: plan.params,
            profile: req.profile,
            concurrency: req.concurrency,
            watch: req.watch,
            output: req.output,
        })
    }

    /// The run plan of a room on one shared cluster (or the demo): every learner × lab, in
    /// learner order, each lab in the learner's templated namespace.
    pub fn shared_plan(&self, learners: &[String], source: Source) -> Plan<'c> {
        let items = learners
            .iter()
            .flat_map(|l| {
                self.labs.iter().map(move |(b, v)| Item {
                    bundle: b,
                    verifier: *v,
                    target: shared_target(&self.template, l, &b.lab.id),
                })
            })
            .collect();
        Plan {
            items,
            params: self.params.clone(),
            options: RunOptions::once(source, self.profile, self.connect.limits),
        }
    }

    /// The learners whose namespaces (by the template) are among `namespaces`, sorted.
    pub fn learners_from(&self, namespaces: &[&str]) -> Vec<String> {
        let mut found = BTreeSet::new();
        for ns in namespaces {
            for (b, _) in &self.labs {
                if let Some(l) = self.template.learner_of(ns, &b.lab.id) {
                    found.insert(l);
                }
            }
        }
        found.into_iter().collect()
    }

    fn template_text(&self) -> Option<String> {
        match self.learners {
            Learners::Contexts(_) => None,
            _ => Some(self.template.as_str().to_string()),
        }
    }
}

/// What a room run listens with: its rounds hold the room's result.
pub type RoomProgress = dyn Listener<RoomResult>;
pub use crate::plan::Quiet;

enum Session {
    Shared(Box<(Conn, Discovery)>),
    Contexts,
    Demo,
}

/// Grades the room once, or (`--watch`) every interval until Ctrl-C. The last round goes to the
/// listener's [`Listener::finished`], where the room is reported; the exit code is returned.
pub async fn run(room: &Room<'_>, progress: &mut RoomProgress) -> Result<ExitCode, Error> {
    let session = match &room.learners {
        Learners::Named(_) | Learners::FromNamespaces(_) => {
            let conn = connect(&room.connect).await?;
            progress.on(Event::Connected(&conn.describe()));
            let discovery = Discovery::cached(&conn);
            Session::Shared(Box::new((conn, discovery)))
        }
        Learners::Contexts(_) => Session::Contexts,
        Learners::Demo => Session::Demo,
    };
    if let (Some(_), Session::Shared(s)) = (room.watch, &session) {
        // A shared cluster is followed through watches, not rounds (`follow`).
        let (conn, discovery) = &**s;
        let stop = crate::interrupt::signal();
        let last = follow::run(room, conn, discovery, progress, stop).await?;
        let code = room_exit_code(&last);
        progress.finished(last);
        return Ok(code);
    }
    let repeat = room.watch.map_or(Repeat::Once, Repeat::Watch);
    let mut rounds = RoomRounds {
        room,
        session: &session,
        watching: room.watch.is_some(),
        progress,
    };
    let last = crate::plan::rounds::run_rounds(&mut rounds, repeat).await?;
    let code = room_exit_code(&last);
    progress.finished(last);
    Ok(code)
}

/// Grades a room on a shared cluster from watches (what `grade --watch` does there) until
/// `stop` completes, and returns the room as last graded: the listener hears `Graded` once,
/// then `Regraded` with the cells each change judged again, and `Stream` states.
pub async fn follow(
    room: &Room<'_>,
    progress: &mut RoomProgress,
    stop: impl std::future::Future<Output = ()>,
) -> Result<RoomResult, Error> {
    if !matches!(
        room.learners,
        Learners::Named(_) | Learners::FromNamespaces(_)
    ) {
        return Err(Error::usage(
            "ウォッチで採点できるのは共有クラスターの教室（--learners、--learners-from-namespaces）だけです",
            "only a room on a shared cluster (--learners, --learners-from-namespaces) is graded from watches",
        ));
    }
    let conn = connect(&room.connect).await?;
    progress.on(Event::Connected(&conn.describe()));
    let discovery = Discovery::cached(&conn);
    follow::run(room, &conn, &discovery, progress, stop).await
}

/// `grade`'s rounds: the whole room, observed and judged together (the same loop as `check`).
struct RoomRounds<'r, 'a> {
    room: &'r Room<'a>,
    session: &'r Session,
    watching: bool,
    progress: &'r mut RoomProgress,
}

impl crate::plan::rounds::Rounds for RoomRounds<'_, '_> {
    type Graded = RoomResult;

    async fn round(&mut self) -> Result<RoomResult, Error> {
        match self.session {
            Session::Shared(s) => {
                let (conn, discovery) = &**s;
                shared_round(self.room, conn, discovery, self.watching, self.progress).await
            }
            Session::Contexts => contexts_round(self.room, self.progress).await,
            Session::Demo => demo_round(self.room, self.progress),
        }
    }

    /// A room is graded once per round; `grade` has no `--wait`.
    fn pending(_: &RoomResult) -> usize {
        0
    }

    fn graded(&mut self, room: &RoomResult) {
        self.progress.on(Event::Graded(room));
    }
}

async fn shared_round(
    room: &Room<'_>,
    conn: &Conn,
    discovery: &Discovery,
    watching: bool,
    progress: &mut RoomProgress,
) -> Result<RoomResult, Error> {
    let mut notes = Vec::new();
    let learners = match &room.learners {
        Learners::Named(names) => names.clone(),
        Learners::FromNamespaces(selector) => {
            let q = Query::cluster(&kinds::NAMESPACES).with_selector(selector);
            let obs = gather(conn, discovery, std::slice::from_ref(&q)).await?;
            let nss = obs.list(&q).map_err(|why| {
                let why_ja = crate::facts::unavailable::unavailable_text(&why, Lang::Ja);
                Error::environment(
                    format!("ラベル {selector} の namespace の一覧を取得できません: {why_ja}"),
                    format!("cannot list the namespaces labelled {selector}: {why}"),
                )
            })?;
            let names: Vec<&str> = nss.iter().map(|o| o.name()).collect();
            let found = room.learners_from(&names);
            if found.is_empty() {
                let note = RoomNote::NoLearners {
                    selector: selector.clone(),
                    template: room.template.as_str().to_string(),
                };
                if !watching {
                    let (ja, en, n) = (note.text(Lang::Ja), note.text(Lang::En), names.len());
                    return Err(Error::environment(
                        format!("{ja}（ラベルの付いた namespace は {n} 個）。各受講者の namespace にラベルを付けるか（`kubectl label namespace alice-volcano-gang {selector}`）、--namespace-template を指定してください"),
                        format!("{en} ({n} namespace(s) carry the label); label each learner's namespaces (`kubectl label namespace alice-volcano-gang {selector}`) or give --namespace-template"),
                    ));
                }
                notes.push(note);
            }
            found
        }
        // `run` opens a shared session for these two only.
        Learners::Contexts(_) | Learners::Demo => Vec::new(),
    };
    let plan = room.shared_plan(&learners, Source::Live(room.connect.clone()));
    let wanted = plan.wanted_capabilities();
    // The controllers' Deployments join the room's other Deployment reads in one LIST.
    let controllers = crate::profile::detect::controller_queries(&wanted);
    let queries = || plan.each_query().chain(controllers.iter().cloned());
    progress.on(Event::Reading {
        queries: merge(queries()).len(),
    });
    let started = std::time::Instant::now();
    let reads = RoomReads::gather(conn, discovery, queries).await;
    progress.on(Event::ReadDone);
    let reads = reads?;
    let (objects, packed) = reads.held();
    tracing::info!(
        "room: {objects} objects read in {:.0} ms, held packed in {:.1} MB{}",
        ms(started),
        packed as f64 / 1e6,
        crate::observe::process::memory()
    );
    notes.extend(
        reads
            .per_namespace
            .iter()
            .cloned()
            .map(RoomNote::PerNamespace),
    );

    let nodes = reads
        .answer(&Query::cluster(&kinds::NODES))
        .unwrap_or_default();
    let node_refs: Vec<&Obj> = nodes.iter().collect();
    let profile = room.profile.or_else(|| Profile::detect(&node_refs));
    let facts = NodeFacts::all(&node_refs)?;
    // The detection rule of `check` and `doctor`, answered from what the room already read.
    let caps =
        crate::profile::detect::detect_from(conn, discovery, &wanted, &facts, profile, &|q| {
            reads.answer(q)
        })
        .await;

    progress.on(Event::Grading {
        learners: learners.len(),
    });
    let started = std::time::Instant::now();
    let (out, withheld) = judge::shared(
        &learners,
        &plan,
        room.labs.len(),
        &reads,
        &caps,
        &conn.context,
        progress,
    )?;
    tracing::info!(
        "room: {} learners × {} labs judged in {:.0} ms{}",
        learners.len(),
        room.labs.len(),
        ms(started),
        crate::observe::process::memory()
    );
    Ok(finish(
        room,
        out,
        withheld,
        SourceKind::Live,
        conn.describe(),
        notes,
    ))
}

fn ms(since: std::time::Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// One cluster per learner: the usual grading path for each context, `concurrency` at a time;
/// a cluster that fails fails only its learner's row.
async fn contexts_round(room: &Room<'_>, progress: &mut RoomProgress) -> Result<RoomResult, Error> {
    let Learners::Contexts(contexts) = &room.learners else {
        return Ok(finish(
            room,
            Vec::new(),
            BTreeSet::new(),
            SourceKind::Live,
            String::new(),
            Vec::new(),
        ));
    };
    progress.on(Event::Grading {
        learners: contexts.len(),
    });
    let jobs = contexts.iter().map(|ctx| async move {
        let r = grade_cluster(room, ctx).await;
        (ctx.clone(), r)
    });
    let mut s = stream::iter(jobs).buffer_unordered(room.concurrency);
    let mut done: HashMap<String, Result<Vec<LabResult>, String>> = HashMap::new();
    while let Some((ctx, r)) = s.next().await {
        progress.on(Event::LearnerDone(&ctx));
        done.insert(ctx, r.map_err(|e| e.to_string()));
    }
    let mut withheld = BTreeSet::new();
    let mut learners = Vec::with_capacity(contexts.len());
    for ctx in contexts {
        let results = done
            .remove(ctx)
            .unwrap_or_else(|| Err("not graded".to_string()));
        learners.push(kept(
            ctx.clone(),
            Some(ctx.clone()),
            results,
            &mut withheld,
        )?);
    }
    let detail = format!("{} cluster(s), one per learner", contexts.len());
    Ok(finish(
        room,
        learners,
        withheld,
        SourceKind::Live,
        detail,
        Vec::new(),
    ))
}

async fn grade_cluster(room: &Room<'_>, ctx: &str) -> Result<Vec<LabResult>, Error> {
    let mut opts = room.connect.clone();
    opts.context = Some(ctx.to_string());
    let limits = opts.limits;
    let plan = Plan {
        items: room
            .labs
            .iter()
            .map(|(b, v)| Item {
                bundle: b,
                verifier: *v,
                target: own_cluster_target(ctx, &b.lab.id),
            })
            .collect(),
        params: room.params.clone(),
        options: RunOptions::once(Source::Live(opts), room.profile, limits),
    };
    plan::run(&plan, &mut plan::Quiet).await
}

/// The embedded demo room, graded like a snapshot of a shared kind cluster.
fn demo_round(room: &Room<'_>, progress: &mut RoomProgress) -> Result<RoomResult, Error> {
    let bundles: Vec<&LabBundle> = room.labs.iter().map(|(b, _)| *b).collect();
    let learners: Vec<String> = DEMO_LEARNERS.iter().map(|s| s.to_string()).collect();
    let plan = room.shared_plan(&learners, Source::Demo);
    let obs: Observed = demo::observed(&bundles)?.planned(plan.queries());
    let caps = plan.offline_capabilities(&obs);
    let nodes = crate::facts::ClusterNodes::of(&obs);
    progress.on(Event::Grading {
        learners: learners.len(),
    });
    let per = room.labs.len().max(1);
    let mut out = Vec::new();
    let mut withheld = BTreeSet::new();
    for (l, items) in learners.iter().zip(plan.items.chunks(per)) {
        let mut results = Vec::new();
        for item in items {
            results.push(verify::run(
                item.bundle,
                item.verifier,
                &obs,
                &nodes,
                &item.target,
                &plan.params,
                plan.options.profile,
                caps.as_ref(),
            )?);
        }
        out.push(kept(l.clone(), None, Ok(results), &mut withheld)?);
        progress.on(Event::LearnerDone(l));
    }
    let detail = obs.detail.clone();
    Ok(finish(
        room,
        out,
        withheld,
        SourceKind::Demo,
        detail,
        Vec::new(),
    ))
}

/// A learner's labs as the room keeps them: a check that errored only for a withheld Secret
/// made skipped (`withhold_secrets`; the checks are added to `withheld` as `lab/check`), then
/// packed (`PackedLabs`).
fn kept(
    name: String,
    context: Option<String>,
    mut results: Result<Vec<LabResult>, String>,
    withheld: &mut BTreeSet<String>,
) -> Result<LearnerResult, Error> {
    if let Ok(results) = &mut results {
        for r in results.iter_mut() {
            for c in withhold_secrets(r) {
                withheld.insert(format!("{}/{c}", r.lab.id));
            }
        }
    }
    Ok(LearnerResult::new(name, context, results)?)
}

/// The room's result: its learners, and the room-wide notes (Secrets withheld).
fn finish(
    room: &Room<'_>,
    learners: Vec<LearnerResult>,
    withheld: BTreeSet<String>,
    source: SourceKind,
    source_detail: String,
    mut notes: Vec<RoomNote>,
) -> RoomResult {
    if !withheld.is_empty() {
        notes.push(RoomNote::SecretsWithheld {
            checks: withheld.into_iter().collect(),
        });
    }
    RoomResult {
        labs: room.labs.iter().map(|(b, _)| b.lab.clone()).collect(),
        learners,
        source,
        source_detail,
        template: room.template_text(),
        notes,
        graded_at: SystemTime::now(),
    }
}

/// A check that errored only because room grading withholds Secrets is skipped instead, with
/// that reason: it is neither the learner's fault nor a broken environment. Returns the checks.
pub fn withhold_secrets(r: &mut LabResult) -> Vec<String> {
    let mut changed = Vec::new();
    for o in &mut r.outcomes {
        let withheld = o.status == Status::Error
            && matches!(
                &o.reason,
                Some(Reason::Unavailable(Unavailable::Forbidden { message, .. }))
                    if message == SECRETS_WITHHELD
            );
        if withheld {
            *o = Outcome::skipped(&o.check, Reason::SecretsWithheld);
            changed.push(o.check.clone());
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog::embedded().unwrap()
    }

    fn request(learners: Learners) -> RoomRequest {
        RoomRequest {
            labs: Vec::new(),
            all: false,
            learners,
            template: None,
            connect: ConnectOpts::default(),
            params: Vec::new(),
            profile: None,
            concurrency: 4,
            watch: None,
            output: RoomOutput {
                format: crate::report::room::RoomFormat::Table,
                lang: Lang::En,
                html: None,
                serve: None,
            },
        }
    }

    #[test]
    fn no_lab_named_means_every_gradable_lab_from_the_registry() {
        let c = catalog();
        let room = Room::resolve(&c, request(Learners::Named(vec!["a".into()]))).unwrap();
        let ids: Vec<&str> = room.labs.iter().map(|(b, _)| b.lab.id.as_str()).collect();
        let registered: Vec<&str> = crate::labs::VERIFIERS
            .iter()
            .map(|v| v.lab_id())
            .filter(|id| c.find(id).is_some_and(|b| plan::is_gradable(&b.lab)))
            .collect();
        let mut a = ids.clone();
        let mut b = registered.clone();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_rooms_are_usage_errors() {
        let c = catalog();
        let mut r = request(Learners::Contexts(vec!["x".into()]));
        r.template = Some("{learner}".into());
        assert!(matches!(Room::resolve(&c, r), Err(Error::Usage(_))));
        let r = request(Learners::Contexts(vec!["x".into(), "x".into()]));
        assert!(matches!(Room::resolve(&c, r), Err(Error::Usage(_))));
        let mut r = request(Learners::Named(vec!["a".into()]));
        r.concurrency = 0;
        assert!(matches!(Room::resolve(&c, r), Err(Error::Usage(_))));
        let long = "l".repeat(60);
        let e = Room::resolve(&c, request(Learners::Named(vec![long])))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a valid namespace name"), "{e}");
        let mut r = request(Learners::Named(vec!["a".into()]));
        r.labs = vec!["no-such-lab".into()];
        assert!(Room::resolve(&c, r).is_err());
    }

    #[test]
    fn learners_are_read_back_from_namespaces_through_the_template() {
        let c = catalog();
        let room = Room::resolve(&c, request(Learners::FromNamespaces("x=y".into()))).unwrap();
        let lab = &room.labs[0].0.lab.id;
        let names = [
            format!("alice-{lab}"),
            format!("bob-{lab}"),
            "kube-system".to_string(),
            format!("alice-{}", room.labs[room.labs.len() - 1].0.lab.id),
        ];
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(room.learners_from(&refs), ["alice", "bob"]);
    }

    #[test]
    fn a_withheld_secret_read_is_skipped_with_the_reason_not_errored() {
        let c = catalog();
        let b = c.labs.iter().find(|b| plan::is_gradable(&b.lab)).unwrap();
        let check = b.lab.checks[0].id.clone();
        let q = Query::new(&kinds::SECRETS, "alice-x");
        let mut r = LabResult {
            lab: b.lab.clone(),
            source: SourceKind::Live,
            source_detail: String::new(),
            target: verify::Target::for_lab(&b.lab.id),
            profile: None,
            outcomes: vec![Outcome::unavailable(&check, &read::withheld(&q))],
            advice: Vec::new(),
        };
        assert_eq!(r.outcomes[0].status, Status::Error);
        assert_eq!(withhold_secrets(&mut r), vec![check]);
        assert_eq!(r.outcomes[0].status, Status::Skipped);
        assert_eq!(r.outcomes[0].reason, Some(Reason::SecretsWithheld));
        assert!(!r.environment_incomplete());
        // Any other forbidden read stays an error.
        let mut other = r.clone();
        other.outcomes = vec![Outcome::unavailable(
            &b.lab.checks[0].id,
            &Unavailable::Forbidden {
                verb: "list".into(),
                resource: "pods".into(),
                namespace: None,
                message: "no".into(),
            },
        )];
        assert!(withhold_secrets(&mut other).is_empty());
        assert_eq!(other.outcomes[0].status, Status::Error);
    }
}
