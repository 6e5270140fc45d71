//! The served board: a listener of the room run that keeps the latest room (its results
//! packed) and its [`Scoreboard::outline`] and, when a round or a re-judgement changes rows,
//! pushes just those rows to every open page: marks and scores, never a cell's report. A
//! row's reports are read back from the room only when a page asks for a learner's details.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::json;
use tokio::sync::broadcast;

use crate::plan::stream::StreamState;
use crate::plan::{Event, Listener};
use crate::report::html::{room_score, row_view};
use crate::report::{Row, Scoreboard};
use crate::results::room::{LearnerResult, RoomResult};
use crate::text::Lang;

/// One Server-Sent Event: its name and JSON data.
#[derive(Debug, Clone)]
pub struct Push {
    pub event: &'static str,
    pub data: Arc<str>,
}

/// Pushes a slow page has not taken yet; one that falls further behind gets the whole board
/// again (`rows` of every learner) instead of the ones it missed.
const BACKLOG: usize = 64;

/// What the server and the listener share.
pub struct Shared {
    state: Mutex<State>,
    pushes: broadcast::Sender<Push>,
}

#[derive(Default)]
struct State {
    /// The latest board, an outline (no cell's report), and the room it outlines.
    board: Option<(Scoreboard, RoomResult)>,
    /// A digest of each learner's row as last pushed (its JSON), to find the rows that changed:
    /// a digest, not the text, since a room of a thousand learners would keep its board twice.
    rows: HashMap<String, u64>,
    /// A digest of each cell as last pushed, to mark the cells that changed.
    cells: HashMap<String, u64>,
    version: u64,
    status: Option<Push>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The latest board (an outline) and the room it outlines, when a round has been graded.
    pub fn with_board<T>(&self, f: impl FnOnce(&Scoreboard, &RoomResult, u64) -> T) -> Option<T> {
        let s = self.lock();
        s.board.as_ref().map(|(b, room)| f(b, room, s.version))
    }

    /// What a page that connects is told first: the status, and every row unless it already
    /// shows this version; then the pushes to come.
    pub fn subscribe(&self, shown: Option<u64>) -> (Vec<Push>, broadcast::Receiver<Push>) {
        let s = self.lock();
        let mut first: Vec<Push> = s.status.iter().cloned().collect();
        if let Some((b, _)) = &s.board {
            if shown != Some(s.version) {
                let all: Vec<&str> = b.learners.iter().map(|r| r.id.as_str()).collect();
                first.extend(rows_push(b, s.version, &all, &[], &[]));
            }
        }
        (first, self.pushes.subscribe())
    }

    /// Every row, for a page that fell behind.
    pub fn everything(&self) -> Vec<Push> {
        let s = self.lock();
        let Some((b, _)) = s.board.as_ref() else {
            return Vec::new();
        };
        let all: Vec<&str> = b.learners.iter().map(|r| r.id.as_str()).collect();
        rows_push(b, s.version, &all, &[], &[])
    }
}

/// Rows a `rows` event carries at most: every row of a thousand learners is about 2.5 MB of
/// JSON, sent in parts a page applies one at a time.
const ROWS_PER_PUSH: usize = 50;

/// The `rows` events: the rows named (in parts of [`ROWS_PER_PUSH`]), the cells that changed,
/// the learners gone (with the first part).
fn rows_push(
    b: &Scoreboard,
    version: u64,
    learners: &[&str],
    changed: &[String],
    removed: &[String],
) -> Vec<Push> {
    // Written straight to text: as a tree of values (`json!`) a part would take several times
    // its text.
    #[derive(serde::Serialize)]
    struct Rows<'a> {
        version: u64,
        rows: PushedRows<'a>,
        changed: &'a [String],
        removed: &'a [String],
        room_score: String,
        confirmed: &'a str,
    }
    let learners: HashSet<&str> = learners.iter().copied().collect();
    let named: Vec<&Row> = b
        .learners
        .iter()
        .filter(|r| learners.contains(r.id.as_str()))
        .collect();
    let parts: Vec<&[&Row]> = if named.is_empty() {
        vec![&[]]
    } else {
        named.chunks(ROWS_PER_PUSH).collect()
    };
    parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let data = Rows {
                version,
                rows: PushedRows { b, rows: part },
                changed,
                removed: if i == 0 { removed } else { &[] },
                room_score: room_score(b),
                confirmed: &b.graded_at,
            };
            Push {
                event: "rows",
                // Serialising our own structs to a string cannot fail.
                data: serde_json::to_string(&data).unwrap_or_default().into(),
            }
        })
        .collect()
}

/// The rows of a push, each one's view made only while it is written.
struct PushedRows<'a> {
    b: &'a Scoreboard,
    rows: &'a [&'a Row],
}

impl serde::Serialize for PushedRows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq as _;
        let mut seq = s.serialize_seq(None)?;
        for r in self.rows {
            seq.serialize_element(&row_view(self.b, r))?;
        }
        seq.end()
    }
}

/// What a row shows and what each of its cells shows, as digests, taken from the results the
/// row is made of (`PackedLabs::digests`): nothing is read back or rendered. Two rows (or
/// cells) with the same digest are taken as the same; a change going unseen would need a
/// 64-bit collision. Returns the row's digest and each cell's (`learner/lab`).
fn digests(b: &Scoreboard, learner: Option<&LearnerResult>, r: &Row) -> (u64, Vec<(String, u64)>) {
    use std::hash::{Hash as _, Hasher as _};
    let hash = |v: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        v(&mut h);
        h.finish()
    };
    let cells: Vec<(String, u64)> = b
        .labs
        .iter()
        .map(|col| {
            let id = format!("{}/{}", r.id, col.lab.id);
            let cell = match learner.map(|l| &l.results) {
                Some(Ok(packed)) => {
                    let at = packed.labs().iter().position(|lab| lab.id == col.lab.id);
                    hash(&|h| at.and_then(|i| packed.digests().get(i)).hash(h))
                }
                Some(Err(why)) => hash(&|h| why.hash(h)),
                None => 0,
            };
            (id, cell)
        })
        .collect();
    let row = hash(&|h| {
        cells.iter().for_each(|(_, c)| c.hash(h));
        learner.map(|l| &l.context).hash(h);
    });
    (row, cells)
}

/// The listener that feeds the server: one board in one language.
pub struct LiveBoard {
    shared: Arc<Shared>,
    lang: Lang,
    /// The state and text last said (a newer confirmation says them again).
    said: Option<(&'static str, String)>,
    /// When the cluster last confirmed what the board holds (RFC 3339), once told.
    confirmed: Option<String>,
}

impl LiveBoard {
    pub fn new(lang: Lang) -> LiveBoard {
        LiveBoard {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                pushes: broadcast::channel(BACKLOG).0,
            }),
            lang,
            said: None,
            confirmed: None,
        }
    }

    pub(super) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// The pushes from now on, as an open page receives them.
    pub fn subscribe(&self) -> broadcast::Receiver<Push> {
        self.shared.pushes.subscribe()
    }

    /// Keeps `room` and its board and pushes the rows that differ from the last board (all of
    /// them the first time), marking the cells that changed. Returns the cells marked.
    pub fn publish(&self, room: &RoomResult) -> Vec<String> {
        let board = Scoreboard::outline(room, self.lang);
        let mut s = self.shared.lock();
        let all: Vec<String> = board.learners.iter().map(|r| r.id.clone()).collect();
        // A clone of a room shares its learners' packed results.
        s.board = Some((board, room.clone()));
        self.push_rows(s, &all)
    }

    /// Some learners were judged again: their rows are made anew from `room` on the board kept
    /// (no other row is rebuilt or compared), and the ones that differ are pushed.
    pub fn publish_learners(&self, room: &RoomResult, learners: &[&str]) -> Vec<String> {
        let mut s = self.shared.lock();
        let State { board, rows, .. } = &mut *s;
        let Some((board, kept)) = board.as_mut() else {
            drop(s);
            return self.publish(room);
        };
        board.update(room, learners);
        *kept = room.clone();
        // New learners are compared too (they have no row yet).
        let mut look: Vec<String> = learners.iter().map(|l| l.to_string()).collect();
        look.extend(
            board
                .learners
                .iter()
                .filter(|r| !rows.contains_key(&r.id))
                .map(|r| r.id.clone()),
        );
        self.push_rows(s, &look)
    }

    /// Compares the rows of `look` with what was last pushed and pushes those that differ,
    /// with the learners gone from the board.
    fn push_rows(&self, mut s: MutexGuard<'_, State>, look: &[String]) -> Vec<String> {
        let State {
            board,
            rows,
            cells,
            version,
            ..
        } = &mut *s;
        let Some((board, room)) = board.as_ref() else {
            return Vec::new();
        };
        let first = *version == 0;
        let mut changed_rows = Vec::new();
        let mut changed_cells = Vec::new();
        let look: HashSet<&str> = look.iter().map(String::as_str).collect();
        let results: HashMap<&str, &LearnerResult> =
            room.learners.iter().map(|l| (l.name.as_str(), l)).collect();
        for r in board
            .learners
            .iter()
            .filter(|r| look.contains(r.id.as_str()))
        {
            let learner = results.get(r.id.as_str()).copied();
            let (row, row_cells) = digests(board, learner, r);
            if rows.get(&r.id) == Some(&row) {
                continue;
            }
            changed_rows.push(r.id.clone());
            for (id, cell) in row_cells {
                if !first && cells.get(&id) != Some(&cell) {
                    changed_cells.push(id.clone());
                }
                cells.insert(id, cell);
            }
            rows.insert(r.id.clone(), row);
        }
        let present: HashSet<&str> = board.learners.iter().map(|r| r.id.as_str()).collect();
        let removed: Vec<String> = rows
            .keys()
            .filter(|k| !present.contains(k.as_str()))
            .cloned()
            .collect();
        for gone in &removed {
            rows.remove(gone);
        }
        cells.retain(|id, _| {
            // `learner/lab`: a lab id has no `/`, a context's name may.
            id.rsplit_once('/')
                .is_some_and(|(learner, _)| present.contains(learner))
        });
        *version += 1;
        // With no page open nothing is written: a page that opens later is sent every row
        // (`subscribe`), and the first board's push would be every row too.
        if self.shared.pushes.receiver_count() > 0 {
            let names: Vec<&str> = changed_rows.iter().map(String::as_str).collect();
            let pushes = rows_push(board, *version, &names, &changed_cells, &removed);
            drop(s);
            for push in pushes {
                // A page that closed meanwhile is no error.
                let _ = self.shared.pushes.send(push);
            }
        }
        changed_cells
    }

    /// Says how live the board is: `state` is `live`, `cluster-lost` or `ended`; the time the
    /// cluster last confirmed the board is the last one told, else when it was graded.
    pub fn status(&mut self, state: &'static str, text: &str) {
        self.said = Some((state, text.to_string()));
        let confirmed = self
            .confirmed
            .clone()
            .or_else(|| self.shared.with_board(|b, _, _| b.graded_at.clone()));
        let push = Push {
            event: "status",
            data: json!({"state": state, "text": text, "confirmed": confirmed})
                .to_string()
                .into(),
        };
        self.shared.lock().status = Some(push.clone());
        let _ = self.shared.pushes.send(push);
    }
}

impl Listener<RoomResult> for LiveBoard {
    fn on(&mut self, event: Event<'_, RoomResult>) {
        match event {
            Event::Connected(cluster) => {
                let following = crate::report::ui("live-following", self.lang);
                self.status("live", &format!("{following} ({cluster})"));
            }
            Event::Graded(room) => {
                self.publish(room);
            }
            Event::Regraded { result, changed } => {
                let mut learners: Vec<&str> = changed.iter().map(|c| c.learner.as_str()).collect();
                learners.sort_unstable();
                learners.dedup();
                self.publish_learners(result, &learners);
            }
            Event::Stream(state) => self.stream(state),
            _ => {}
        }
    }
}

impl LiveBoard {
    /// How the room's watches stand, in the status line.
    fn stream(&mut self, state: &StreamState) {
        match state {
            StreamState::Watching { .. } | StreamState::Relisted { .. } => {
                self.status("live", crate::report::ui("live-following", self.lang));
            }
            StreamState::Reconnecting { .. } => {
                let text = state.said(self.lang).unwrap_or_default();
                self.status("cluster-lost", &text);
            }
            StreamState::Confirmed { at } => {
                self.confirmed = Some(humantime::format_rfc3339_seconds(*at).to_string());
                let (state, text) = self.said.clone().unwrap_or((
                    "live",
                    crate::report::ui("live-following", self.lang).into(),
                ));
                self.status(state, &text);
            }
        }
    }

    /// The server is stopping (Ctrl-C): open pages keep the last board and say so.
    pub fn ended(&mut self) {
        self.status("ended", crate::report::ui("live-ended", self.lang));
    }
}
