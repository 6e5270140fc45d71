//! A room on a shared cluster graded from watches (`grade --watch`): each merged read of the
//! room (one per kind, cluster-wide, as `read::merge` makes them) is LISTed and then WATCHed
//! once for the whole room ([`feed`]); the objects are kept packed per kind and namespace
//! ([`store`]); a change re-judges only the cells it can affect ([`cells`], [`judge`]), a
//! [`DEBOUNCE`] after the first change of a burst, and the listener hears
//! `Event::Regraded` with the room and the cells judged again. With no change nothing runs.
//!
//! A kind RBAC forbids cluster-wide is watched namespace by namespace (the learners'
//! namespaces of that kind), as `read.rs` reads it per namespace. A kind the cluster does not
//! serve keeps that answer until the command is run again.

mod cells;
mod feed;
mod judge;
mod store;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::future::Future;
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc;

use super::{finish, merge, Learners, Room, RoomProgress};
use crate::cluster::{Conn, Discovery};
use crate::facts::{NodeFacts, Profile};
use crate::observe::kinds::{self, ResourceKind};
use crate::observe::{Obj, Query, SourceKind, Unavailable};
use crate::plan::stream::{CellRef, StreamState};
use crate::plan::{Event, Source};
use crate::results::room::{LearnerResult, PerNamespace, RoomNote, RoomResult};
use crate::Error;

use cells::{Cell, Cells};
use feed::{FeedId, Msg};
use judge::Judging;
use store::{Staging, Store};

/// How long the engine waits after a change before judging: a learner's `kubectl apply` of a
/// Job makes a burst of events (the Job, its pods created one by one, their status written
/// as they are scheduled) within some tens of milliseconds, so judging once after 150 ms
/// judges the burst once, and keeps the board within the 1 s of the change.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Learner names the kinds are planned with when learners come from labelled namespaces: a
/// read whose name differs per learner (a learner-prefixed cluster-scoped object) must be
/// watched whole, whoever is in the room yet (two names make `merge` see that it differs).
const PLANNING_LEARNERS: [&str; 2] = ["trainlab-planning-a", "trainlab-planning-b"];

/// One stream: what it reads, and into which store.
struct Stream {
    query: Query,
    /// The stream of the labelled namespaces that name the learners.
    learners: bool,
    listed: bool,
    /// Its first LIST failed: the kind was answered with the failure until a list succeeds.
    failed_first: bool,
    /// It failed and was said to be reconnecting; the next change it brings says it is back.
    lost: bool,
    /// It brought more than `--max-objects` objects: its kind has no answer, and what it
    /// brings is ignored until it lists again.
    over: bool,
    /// Objects of a (re)list in progress.
    buffer: Option<Staging>,
}

/// Grades the room from watches until `stop` completes; returns the room as last graded.
pub async fn run(
    room: &Room<'_>,
    conn: &Conn,
    discovery: &Discovery,
    progress: &mut RoomProgress,
    stop: impl Future<Output = ()>,
) -> Result<RoomResult, Error> {
    // Heard from the start (discovery and the first LISTs included): a signal before the room
    // is first judged ends the run with nothing graded, as `plan::rounds` does.
    tokio::pin!(stop);
    let begun = tokio::select! {
        b = begin(room, conn, discovery, progress) => b?,
        _ = &mut stop => return Err(nothing_graded()),
    };
    let Begun {
        mut engine,
        mut rx,
        tx,
        mut tasks,
    } = begun;
    let mut dirty: BTreeSet<Cell> = BTreeSet::new();
    let mut deadline: Option<tokio::time::Instant> = None;
    let mut learners_dirty = false;
    loop {
        let wait = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = &mut stop => break,
            m = rx.recv() => {
                let (id, msg) = m.ok_or_else(stopped)?;
                match engine.live(id, msg) {
                    Live::Cells(cells, said) => {
                        dirty.extend(cells);
                        if let Some(state) = said {
                            progress.on(Event::Stream(&state));
                        }
                    }
                    Live::Learners(said) => {
                        learners_dirty = true;
                        if let Some(state) = said {
                            progress.on(Event::Stream(&state));
                        }
                    }
                    Live::Said(state) => progress.on(Event::Stream(&state)),
                    Live::Nothing => {}
                }
                if (learners_dirty || !dirty.is_empty()) && deadline.is_none() {
                    deadline = Some(tokio::time::Instant::now() + DEBOUNCE);
                }
            }
            _ = wait => {
                deadline = None;
                let started = std::time::Instant::now();
                if std::mem::take(&mut learners_dirty) {
                    // Cells are numbered by learner: the cells already due are found again by
                    // name, and a new learner is judged whole.
                    let due: Vec<CellRef> = dirty.iter().map(|&c| engine.cell_ref(c)).collect();
                    dirty = engine.learners_changed()?;
                    dirty.extend(due.iter().filter_map(|c| engine.cell_of(c)));
                    // A kind forbidden cluster-wide is watched in the new learners' namespaces
                    // too; their cells are judged again when those streams have listed.
                    engine.watch_namespaces(conn, discovery, &tx, &mut tasks).await?;
                }
                if engine.caps_stale {
                    engine.caps_stale = false;
                    engine.detect(conn, discovery).await?;
                }
                let cells: Vec<Cell> = std::mem::take(&mut dirty).into_iter().collect();
                engine.judge(&cells)?;
                let changed: Vec<CellRef> = cells.iter().map(|&c| engine.cell_ref(c)).collect();
                progress.on(Event::Stream(&StreamState::Confirmed { at: engine.confirmed }));
                progress.on(Event::Regraded { result: &engine.board, changed: &changed });
                // After the listener drew the board: the time a change takes to reach it.
                tracing::info!(
                    "follow: {} cell(s) of {} learner(s) judged again and shown in {:.0} ms",
                    cells.len(),
                    cells.iter().map(|c| c / engine.per()).collect::<HashSet<_>>().len(),
                    started.elapsed().as_secs_f64() * 1000.0
                );
            }
        }
    }
    drop(tasks);
    Ok(engine.board)
}

/// The streams' tasks, ended when the run ends however it ends.
#[derive(Default)]
struct Tasks(Vec<tokio::task::JoinHandle<()>>);

impl Tasks {
    fn push(&mut self, t: tokio::task::JoinHandle<()>) {
        self.0.push(t);
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// A room listed and judged once, its streams watching.
struct Begun<'r, 'c> {
    engine: Engine<'r, 'c>,
    rx: mpsc::UnboundedReceiver<(FeedId, Msg)>,
    /// For the streams started later (a kind forbidden cluster-wide, in a new learner's
    /// namespace).
    tx: mpsc::UnboundedSender<(FeedId, Msg)>,
    tasks: Tasks,
}

/// Plans and starts the streams, waits for every first LIST, and judges the whole room.
async fn begin<'r, 'c>(
    room: &'r Room<'c>,
    conn: &Conn,
    discovery: &Discovery,
    progress: &mut RoomProgress,
) -> Result<Begun<'r, 'c>, Error> {
    let mut engine = Engine::new(room, conn);
    let (tx, mut rx) = mpsc::unbounded_channel::<(FeedId, Msg)>();
    let merged = engine.planned_reads();
    progress.on(Event::Reading {
        queries: merged.len(),
    });
    let mut tasks = Tasks::default();
    for q in merged {
        match discovery.api_resource(conn, q.kind).await? {
            Ok(ar) => {
                engine.store.plan(q.kind);
                tasks.push(engine.start(conn, ar, q, false, &tx));
            }
            Err(why) => engine.store.unavailable(q.kind, why),
        }
    }
    if let Learners::FromNamespaces(selector) = &room.learners {
        let q = Query::cluster(&kinds::NAMESPACES).with_selector(selector);
        match discovery.api_resource(conn, &kinds::NAMESPACES).await? {
            Ok(ar) => tasks.push(engine.start(conn, ar, q, true, &tx)),
            Err(why) => {
                return Err(Error::environment(
                    format!("ラベル {selector} の namespace の一覧を取得できません: {why}"),
                    format!("cannot list the namespaces labelled {selector}: {why}"),
                ))
            }
        }
    }
    // The first LIST of every stream; then, once the learners are known, of the streams of a
    // kind forbidden cluster-wide in their namespaces (learners found from namespaces are
    // known only once those are listed).
    loop {
        while engine.streams.iter().any(|s| !s.listed) {
            let (id, msg) = rx.recv().await.ok_or_else(stopped)?;
            if let Some(state) = engine
                .initial(conn, discovery, id, msg, &tx, &mut tasks)
                .await?
            {
                progress.on(Event::Stream(&state));
            }
        }
        engine.learners_changed()?;
        if engine
            .watch_namespaces(conn, discovery, &tx, &mut tasks)
            .await?
            == 0
        {
            break;
        }
    }
    progress.on(Event::ReadDone);
    let (objects, packed) = engine.store.held();
    tracing::info!(
        "follow: {objects} objects listed, held packed in {:.1} MB; {} stream(s) watching{}",
        packed as f64 / 1e6,
        engine.streams.len(),
        crate::observe::process::memory()
    );
    progress.on(Event::Grading {
        learners: engine.learners.len(),
    });
    engine.detect(conn, discovery).await?;
    engine.caps_stale = false;
    let all: Vec<Cell> = (0..engine.cells_count()).collect();
    let started = std::time::Instant::now();
    engine.judge(&all)?;
    tracing::info!(
        "follow: {} learner(s) × {} lab(s) judged in {:.0} ms; watching{}",
        engine.learners.len(),
        room.labs.len(),
        started.elapsed().as_secs_f64() * 1000.0,
        crate::observe::process::memory()
    );
    progress.on(Event::Graded(&engine.board));
    progress.on(Event::Stream(&StreamState::Watching {
        kinds: engine.streams.len(),
    }));
    Ok(Begun {
        engine,
        rx,
        tx,
        tasks,
    })
}

fn stopped() -> Error {
    Error::environment(
        "クラスターの監視が止まりました",
        "the room's watches stopped",
    )
}

fn nothing_graded() -> Error {
    Error::environment(
        "中断しました（Ctrl-C）。最初の採点が終わる前だったので、何も採点していません",
        "interrupted (Ctrl-C) before the first round finished: nothing was graded",
    )
}

/// What a live message changed.
enum Live {
    /// The cells to judge again, and what to say now.
    Cells(BTreeSet<Cell>, Option<StreamState>),
    /// The learners may have changed, and what to say now.
    Learners(Option<StreamState>),
    Said(StreamState),
    Nothing,
}

struct Engine<'r, 'c> {
    room: &'r Room<'c>,
    context: String,
    streams: Vec<Stream>,
    store: Store,
    /// The labelled namespaces (`--learners-from-namespaces`).
    namespaces: Store,
    learners: Vec<String>,
    cells: Cells,
    /// The room as it now stands: each cell's result is replaced where it is judged again.
    board: RoomResult,
    /// The checks withheld from each cell (Secrets), for the room's note.
    withheld: Vec<Vec<String>>,
    notes: Vec<RoomNote>,
    caps: crate::facts::capabilities::Capabilities,
    profile: Option<Profile>,
    /// What node facts and capability detection read changed: detect again before judging.
    caps_stale: bool,
    confirmed: SystemTime,
    /// The cluster-wide queries of the kinds RBAC forbids cluster-wide: each is watched in
    /// every learner's namespace instead (`watch_namespaces`).
    forbidden: Vec<Query>,
    /// `--max-objects`: the most objects a stream may bring (a LIST's bound, for the room's
    /// watches too).
    max_objects: usize,
}

impl<'r, 'c> Engine<'r, 'c> {
    fn new(room: &'r Room<'c>, conn: &Conn) -> Engine<'r, 'c> {
        Engine {
            room,
            max_objects: conn.limits.max_objects,
            forbidden: Vec::new(),
            context: conn.context.clone(),
            streams: Vec::new(),
            store: Store::new(&conn.context),
            namespaces: Store::new(&conn.context),
            learners: Vec::new(),
            cells: Cells::default(),
            board: finish(
                room,
                Vec::new(),
                BTreeSet::new(),
                SourceKind::Live,
                conn.describe(),
                Vec::new(),
            ),
            withheld: Vec::new(),
            notes: Vec::new(),
            caps: Default::default(),
            profile: room.profile,
            caps_stale: true,
            confirmed: SystemTime::now(),
        }
    }

    fn per(&self) -> usize {
        self.room.labs.len().max(1)
    }

    fn cells_count(&self) -> usize {
        self.learners.len() * self.per()
    }

    fn cell_of(&self, c: &CellRef) -> Option<Cell> {
        let l = self.learners.iter().position(|l| *l == c.learner)?;
        let lab = self.room.labs.iter().position(|(b, _)| b.lab.id == c.lab)?;
        Some(l * self.per() + lab)
    }

    fn cell_ref(&self, c: Cell) -> CellRef {
        CellRef {
            learner: self.learners[c / self.per()].clone(),
            lab: self.room.labs[c % self.per()].0.lab.id.clone(),
        }
    }

    /// What every cell's judging reads beside its own queries: the controllers' Deployments
    /// (capability detection) and the nodes.
    fn everyone(&self) -> Vec<Query> {
        let mut everyone = crate::profile::detect::controller_queries(&self.wanted());
        everyone.push(Query::cluster(&kinds::NODES));
        everyone
    }

    /// The capabilities the room's labs name (the same for every learner).
    fn wanted(&self) -> Vec<&'static crate::facts::capabilities::Capability> {
        let one: Vec<String> = PLANNING_LEARNERS[..1]
            .iter()
            .map(|s| s.to_string())
            .collect();
        self.room
            .shared_plan(&one, Source::Live(self.room.connect.clone()))
            .wanted_capabilities()
    }

    /// The merged reads to watch: one per kind, cluster-wide.
    fn planned_reads(&self) -> Vec<Query> {
        let learners: Vec<String> = match &self.room.learners {
            Learners::Named(names) => names.clone(),
            _ => PLANNING_LEARNERS.iter().map(|s| s.to_string()).collect(),
        };
        let plan = self
            .room
            .shared_plan(&learners, Source::Live(self.room.connect.clone()));
        merge(plan.each_query().chain(self.everyone()))
    }

    fn start(
        &mut self,
        conn: &Conn,
        ar: kube::discovery::ApiResource,
        query: Query,
        learners: bool,
        tx: &mpsc::UnboundedSender<(FeedId, Msg)>,
    ) -> tokio::task::JoinHandle<()> {
        let id = self.streams.len();
        self.streams.push(Stream {
            query: query.clone(),
            learners,
            listed: false,
            failed_first: false,
            lost: false,
            over: false,
            buffer: None,
        });
        feed::spawn(
            conn.watch_client.clone(),
            ar,
            query,
            conn.chunk_size,
            id,
            tx.clone(),
        )
    }

    fn store_of(&mut self, id: FeedId) -> &mut Store {
        if self.streams[id].learners {
            &mut self.namespaces
        } else {
            &mut self.store
        }
    }

    /// A message before the room is first judged.
    async fn initial(
        &mut self,
        conn: &Conn,
        discovery: &Discovery,
        id: FeedId,
        msg: Msg,
        tx: &mpsc::UnboundedSender<(FeedId, Msg)>,
        tasks: &mut Tasks,
    ) -> Result<Option<StreamState>, Error> {
        match msg {
            Msg::Forbidden { message } => {
                let kind = self.streams[id].query.kind;
                self.streams[id].listed = true;
                let why = Unavailable::Forbidden {
                    verb: "list".into(),
                    resource: kind.resource_name(),
                    namespace: None,
                    message: message.clone(),
                };
                if !kind.namespaced || self.streams[id].learners {
                    self.store_of(id).unavailable(kind, why);
                    return Ok(None);
                }
                tracing::info!(
                    "follow: {} is forbidden cluster-wide; watched namespace by namespace",
                    kind.resource_name()
                );
                self.notes.push(RoomNote::PerNamespace(PerNamespace {
                    resource: kind.resource_name(),
                    namespaces: 0,
                    message,
                }));
                self.store.per_namespace(kind, why);
                self.forbidden.push(self.streams[id].query.clone());
                self.watch_namespaces(conn, discovery, tx, tasks).await?;
                Ok(None)
            }
            Msg::InitDone => {
                self.list_done(id);
                self.streams[id].listed = true;
                Ok(None)
            }
            Msg::Failed {
                code: Some(401),
                why,
                ..
            } => {
                let what = self.streams[id].query.describe();
                Err(Error::environment(
                    format!("API サーバーが認証情報を拒否しました（{what} の LIST、401）: {why}"),
                    format!(
                        "the API server refused the credentials (the LIST of {what}, 401): {why}"
                    ),
                ))
            }
            Msg::Failed { ref why, .. } if !self.streams[id].listed => {
                // The room is judged without this kind (its checks say why) rather than waited
                // for; the stream keeps trying, and its first list re-judges what reads it.
                let kind = self.streams[id].query.kind;
                let failed = Unavailable::Failed {
                    message: why.clone(),
                };
                if self.streams[id].learners {
                    return Err(Error::environment(
                        format!("ラベル付きの namespace の一覧を取得できません: {why}"),
                        format!("cannot list the labelled namespaces: {why}"),
                    ));
                }
                if self.streams[id].query.namespace.is_none() {
                    self.store.unavailable(kind, failed);
                }
                self.streams[id].listed = true;
                self.streams[id].failed_first = true;
                Ok(self.buffered(id, msg))
            }
            other => Ok(self.buffered(id, other)),
        }
    }

    /// The namespaces the room's learners read a kind in (learners found from namespaces are
    /// known once their stream listed: none before).
    fn namespaces_of(&self, kind: &ResourceKind) -> Vec<String> {
        let names = match &self.room.learners {
            Learners::Named(names) => names,
            Learners::FromNamespaces(_) => &self.learners,
            Learners::Contexts(_) | Learners::Demo => return Vec::new(),
        };
        let plan = self
            .room
            .shared_plan(names, Source::Live(self.room.connect.clone()));
        let set: BTreeSet<String> = plan
            .each_query()
            .filter(|q| *q.kind == *kind)
            .filter_map(|q| q.namespace)
            .collect();
        set.into_iter().collect()
    }

    /// Starts a stream of each kind forbidden cluster-wide in each namespace of the room's
    /// learners that has none yet; returns how many were started. The room's note says in how
    /// many namespaces each is watched.
    async fn watch_namespaces(
        &mut self,
        conn: &Conn,
        discovery: &Discovery,
        tx: &mpsc::UnboundedSender<(FeedId, Msg)>,
        tasks: &mut Tasks,
    ) -> Result<usize, Error> {
        let mut started = 0;
        for base in self.forbidden.clone() {
            let kind = base.kind;
            let watched = self
                .store
                .watched_namespaces(kind)
                .cloned()
                .unwrap_or_default();
            let new: Vec<String> = self
                .namespaces_of(kind)
                .into_iter()
                .filter(|ns| !watched.contains(ns))
                .collect();
            if new.is_empty() {
                continue;
            }
            let Ok(ar) = discovery.api_resource(conn, kind).await? else {
                continue;
            };
            for ns in new {
                self.store.watch_namespace(kind, &ns);
                let mut q = base.clone();
                q.namespace = Some(ns);
                tasks.push(self.start(conn, ar.clone(), q, false, tx));
                started += 1;
            }
            let count = self.store.watched_namespaces(kind).map_or(0, |w| w.len());
            for note in &mut self.notes {
                if let RoomNote::PerNamespace(p) = note {
                    if p.resource == kind.resource_name() {
                        p.namespaces = count;
                    }
                }
            }
        }
        Ok(started)
    }

    /// Init, a listed object or a failure: kept for the end of the list, or said.
    fn buffered(&mut self, id: FeedId, msg: Msg) -> Option<StreamState> {
        match msg {
            Msg::Init => {
                self.streams[id].buffer = Some(Staging::default());
                self.streams[id].over = false;
                None
            }
            Msg::Listed(_) if self.streams[id].over => None,
            Msg::Listed(h) => {
                let buffer = self.streams[id].buffer.get_or_insert_with(Staging::default);
                buffer.add(h);
                if buffer.len() > self.max_objects {
                    self.give_up(id);
                }
                None
            }
            Msg::Failed {
                why,
                gone,
                retry_in,
                ..
            } => {
                let kind = self.streams[id].query.describe();
                tracing::info!(
                    "follow: the stream of {kind} failed ({why}); {} in {:.1} s",
                    if gone {
                        "listing it again"
                    } else {
                        "reconnecting"
                    },
                    retry_in.as_secs_f64()
                );
                Some(StreamState::Reconnecting {
                    kind,
                    why,
                    retry_in,
                })
            }
            _ => None,
        }
    }

    /// A (re)list ended: what the stream holds is replaced. Returns the namespaces changed.
    fn list_done(&mut self, id: FeedId) -> (usize, Vec<String>) {
        if self.streams[id].over {
            return (0, Vec::new());
        }
        let objects = self.streams[id].buffer.take().unwrap_or_default();
        let n = objects.len();
        let (kind, scope) = (
            self.streams[id].query.kind,
            self.streams[id].query.namespace.clone(),
        );
        let changed = self.store_of(id).replace(kind, scope.as_deref(), objects);
        (n, changed)
    }

    /// The stream brought more than `--max-objects` objects: its kind is answered with that, as
    /// a LIST that brought them would be, and what it holds is dropped.
    fn give_up(&mut self, id: FeedId) {
        let (kind, what) = (
            self.streams[id].query.kind,
            self.streams[id].query.describe(),
        );
        tracing::warn!(
            "follow: {what} brought more than {} objects (--max-objects): it is no longer followed",
            self.max_objects
        );
        self.streams[id].over = true;
        self.streams[id].buffer = None;
        let why = crate::cluster::too_many_objects(&what, self.max_objects);
        self.store_of(id).unavailable(kind, why);
    }

    /// A message once the room is judged: what it changed, and that the room is followed
    /// again when a stream said to be reconnecting brings a change or hears the server answer
    /// again (`Msg::Answered`) and no other stream is still lost (a watch resumed from its
    /// resourceVersion lists nothing again, so nothing else would say so).
    fn live(&mut self, id: FeedId, msg: Msg) -> Live {
        let brings_change = matches!(
            msg,
            Msg::Applied(_) | Msg::Deleted { .. } | Msg::InitDone | Msg::Answered
        );
        if matches!(msg, Msg::Failed { .. }) {
            self.streams[id].lost = true;
        }
        let live = self.change(id, msg);
        let back = brings_change
            && std::mem::take(&mut self.streams[id].lost)
            && !self.streams.iter().any(|s| s.lost);
        if !back {
            return live;
        }
        let following = StreamState::Watching {
            kinds: self.streams.len(),
        };
        match live {
            Live::Cells(cells, None) => Live::Cells(cells, Some(following)),
            Live::Learners(None) => Live::Learners(Some(following)),
            Live::Nothing => Live::Said(following),
            // A relist says so itself, which says the room is followed.
            said => said,
        }
    }

    /// What a message once the room is judged changed.
    fn change(&mut self, id: FeedId, msg: Msg) -> Live {
        self.confirmed = SystemTime::now();
        let kind = self.streams[id].query.kind;
        let learners = self.streams[id].learners;
        let cells = match msg {
            Msg::InitDone if self.streams[id].over => {
                // Judged again: with the kind's answer now the bound it went over.
                return if learners {
                    Live::Learners(None)
                } else {
                    Live::Cells(self.cells.reading(kind), None)
                };
            }
            Msg::Applied(_) | Msg::Deleted { .. } if self.streams[id].over => {
                return Live::Nothing;
            }
            Msg::InitDone => {
                // A stream started after the room was judged (a new learner's namespace) lists
                // for the first time: no relist to say.
                let first = !std::mem::replace(&mut self.streams[id].listed, true);
                let (objects, changed) = self.list_done(id);
                tracing::info!(
                    "follow: {} {}: {objects} objects, {} namespace(s) changed",
                    kind.resource_name(),
                    if first {
                        "listed"
                    } else {
                        "listed again after 410 Gone"
                    },
                    changed.len()
                );
                if learners {
                    return Live::Learners(None);
                }
                let mut cells = BTreeSet::new();
                if std::mem::take(&mut self.streams[id].failed_first) {
                    // Every cell reading the kind was judged without it.
                    cells.extend(self.cells.reading(kind));
                }
                for ns in &changed {
                    cells.extend(self.touched(kind, ns, None));
                }
                // Said now; the cells follow with the next judging.
                let said = (!first).then(|| StreamState::Relisted {
                    kind: kind.resource_name(),
                    objects,
                });
                return Live::Cells(cells, said);
            }
            Msg::Applied(h) => {
                let (ns, name) = (h.namespace.to_string(), h.name.to_string());
                if !self.store_of(id).apply(kind, h) || learners {
                    return if learners {
                        Live::Learners(None)
                    } else {
                        Live::Nothing
                    };
                }
                if self.store_of(id).count(kind) > self.max_objects {
                    self.give_up(id);
                    return Live::Cells(self.cells.reading(kind), None);
                }
                self.touched(kind, &ns, Some(&name))
            }
            Msg::Deleted { namespace, name } => {
                if !self.store_of(id).delete(kind, &namespace, &name) {
                    return Live::Nothing;
                }
                if learners {
                    return Live::Learners(None);
                }
                self.touched(kind, &namespace, Some(&name))
            }
            Msg::Forbidden { .. } | Msg::Answered => return Live::Nothing,
            other => {
                return match self.buffered(id, other) {
                    Some(state) => Live::Said(state),
                    None => Live::Nothing,
                }
            }
        };
        Live::Cells(cells, None)
    }

    /// The cells a change can affect; what everyone reads makes capabilities stale.
    fn touched(
        &mut self,
        kind: &'static ResourceKind,
        ns: &str,
        name: Option<&str>,
    ) -> BTreeSet<Cell> {
        if self.cells.is_everyones(kind, name) {
            self.caps_stale = true;
        }
        self.cells.affected(kind, ns, name)
    }

    /// The learners now in the room (named, or read back from the labelled namespaces): the
    /// cell index and results follow them. Returns the cells of new learners.
    fn learners_changed(&mut self) -> Result<BTreeSet<Cell>, Error> {
        let now: Vec<String> = match &self.room.learners {
            Learners::Named(names) => names.clone(),
            Learners::FromNamespaces(selector) => {
                let q = Query::cluster(&kinds::NAMESPACES).with_selector(selector);
                let found = self.namespaces.answer(&q).unwrap_or_default();
                let names: Vec<&str> = found.iter().map(Obj::name).collect();
                self.room.learners_from(&names)
            }
            Learners::Contexts(_) | Learners::Demo => Vec::new(),
        };
        self.notes
            .retain(|n| !matches!(n, RoomNote::NoLearners { .. }));
        if let Learners::FromNamespaces(selector) = &self.room.learners {
            if now.is_empty() {
                self.notes.push(RoomNote::NoLearners {
                    selector: selector.clone(),
                    template: self.room.template.as_str().to_string(),
                });
            }
        }
        let per = self.per();
        let mut kept: HashMap<String, (LearnerResult, Vec<Vec<String>>)> = HashMap::new();
        let mut withheld = std::mem::take(&mut self.withheld).into_iter();
        for l in std::mem::take(&mut self.board.learners) {
            let w: Vec<Vec<String>> = withheld.by_ref().take(per).collect();
            kept.insert(l.name.clone(), (l, w));
        }
        let mut fresh = BTreeSet::new();
        for (i, l) in now.iter().enumerate() {
            let (row, w) = match kept.remove(l) {
                Some(known) => known,
                None => {
                    fresh.extend(i * per..(i + 1) * per);
                    let row =
                        LearnerResult::new(l.clone(), Some(self.context.clone()), Ok(Vec::new()))?;
                    (row, vec![Vec::new(); per])
                }
            };
            self.board.learners.push(row);
            self.withheld.extend(w);
        }
        if now != self.learners {
            tracing::info!("follow: the room has {} learner(s)", now.len());
        }
        self.learners = now;
        let everyone = self.everyone();
        let count = self.cells_count();
        let cells = {
            let j = self.judging();
            Cells::new(count, |c| j.queries(c), everyone)
        };
        self.cells = cells;
        Ok(fresh)
    }

    fn judging(&self) -> Judging<'_, 'c> {
        Judging {
            room: self.room,
            learners: &self.learners,
            caps: &self.caps,
            profile: self.profile,
            context: &self.context,
        }
    }

    /// Node facts, the profile and the capabilities, from what the room holds (the rule of
    /// `check` and `doctor`, as `grade`'s first read does).
    async fn detect(&mut self, conn: &Conn, discovery: &Discovery) -> Result<(), Error> {
        let nodes = self
            .store
            .answer(&Query::cluster(&kinds::NODES))
            .unwrap_or_default();
        let refs: Vec<&Obj> = nodes.iter().collect();
        self.profile = self.room.profile.or_else(|| Profile::detect(&refs));
        let facts = NodeFacts::all(&refs)?;
        let wanted = self.wanted();
        let store = &self.store;
        self.caps = crate::profile::detect::detect_from(
            conn,
            discovery,
            &wanted,
            &facts,
            self.profile,
            &|q| store.answer(q),
        )
        .await;
        Ok(())
    }

    /// Judges `cells` (in cell order, a new learner's all at once) into the board.
    fn judge(&mut self, cells: &[Cell]) -> Result<(), Error> {
        let rejudged = self
            .judging()
            .cells(cells, &self.store, &self.board.learners)?;
        let per = self.per();
        for r in rejudged {
            for (c, checks) in r.withheld {
                self.withheld[c] = checks;
            }
            self.board.learners[r.learner].results = Ok(r.labs);
        }
        self.board.graded_at = SystemTime::now();
        let mut notes = self.notes.clone();
        let withheld: BTreeSet<String> = self
            .withheld
            .iter()
            .enumerate()
            .flat_map(|(c, checks)| {
                let lab = &self.room.labs[c % per].0.lab.id;
                checks.iter().map(move |check| format!("{lab}/{check}"))
            })
            .collect();
        if !withheld.is_empty() {
            notes.push(RoomNote::SecretsWithheld {
                checks: withheld.into_iter().collect(),
            });
        }
        self.board.notes = notes;
        Ok(())
    }
}
