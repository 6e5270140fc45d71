//! A learner's judged labs, kept compactly until a report shows them.
//!
//! A room of a thousand learners holds fifteen thousand results. As structs they are hundreds
//! of thousands of small strings (check ids, evidence, the same "not served" reason in every
//! learner's labs), allocated while each learner's objects were being parsed and freed around
//! them: the allocator cannot give those pages back, and the room's memory grew by about
//! 110 MB while it was judged (benches/room.rs, `-v`). Kept as one LZ4 block of JSON per
//! learner instead, a learner's fifteen labs take a few kilobytes in one allocation, and a
//! report reads them back one learner at a time (`docs/performance.md`).

use std::sync::Arc;

use super::glance::{Glance, Glances};
use crate::catalog::Lab;
use crate::facts::Profile;
use crate::observe::SourceKind;
use crate::verify::{Advice, LabResult, Outcome, Target};

fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Judged results that could not be read back: trainlab's own bytes, so a bug, never the
/// learner's or the cluster's doing.
#[derive(Debug, thiserror::Error)]
#[error("trainlab could not read back a result it judged ({0}); this is a bug, please report it")]
pub struct Unreadable(String);

impl From<Unreadable> for crate::Error {
    /// Grading could not finish: exit 3, as for any run that could not grade everything.
    fn from(e: Unreadable) -> crate::Error {
        crate::Error::environment(
            format!(
                "採点結果を読み戻せませんでした（trainlab の不具合です。報告してください）: {e}"
            ),
            e.to_string(),
        )
    }
}

/// One learner's judged labs, in the order judged. A clone shares the bytes (a served board
/// keeps the room a listener was told of).
#[derive(Debug, Clone)]
pub struct PackedLabs {
    /// The catalog's labs, shared with every other learner's (the lab is not in `bytes`).
    labs: Arc<[Arc<Lab>]>,
    /// LZ4 (size prepended) of the JSON array of every result's [`Kept`] fields.
    bytes: Arc<[u8]>,
    /// What `room_exit_code` asks of every result, known without reading them back.
    incomplete: bool,
    /// A digest of each result's kept JSON, in the labs' order: a served board finds the
    /// cells that changed without reading a result back.
    digests: Arc<[u64]>,
    /// Each result's score and checks' states: what a board's outline shows, known without
    /// reading the results back.
    glances: Arc<Glances>,
}

/// A result's fields but its lab, in order; read back as [`Unkept`].
type Kept<'a> = (
    SourceKind,
    &'a str,
    &'a Target,
    Option<Profile>,
    &'a [Outcome],
    &'a [Advice],
);
type Unkept = (
    SourceKind,
    String,
    Target,
    Option<Profile>,
    Vec<Outcome>,
    Vec<Advice>,
);

impl PackedLabs {
    pub fn pack(results: &[LabResult]) -> Result<PackedLabs, Unreadable> {
        let kept: Vec<Kept<'_>> = results
            .iter()
            .map(|r| {
                (
                    r.source,
                    r.source_detail.as_str(),
                    &r.target,
                    r.profile,
                    r.outcomes.as_slice(),
                    r.advice.as_slice(),
                )
            })
            .collect();
        // The JSON array written one result at a time, each one's bytes digested as written.
        let mut json = vec![b'['];
        let mut digests = Vec::with_capacity(kept.len());
        for (i, k) in kept.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            let start = json.len();
            serde_json::to_writer(&mut json, k).map_err(|e| Unreadable(e.to_string()))?;
            digests.push(digest(&json[start..]));
        }
        json.push(b']');
        Ok(PackedLabs {
            labs: results.iter().map(|r| r.lab.clone()).collect(),
            bytes: lz4_flex::compress_prepend_size(&json).into(),
            incomplete: results.iter().any(LabResult::environment_incomplete),
            digests: digests.into(),
            glances: Arc::new(Glances::of(results)),
        })
    }

    /// The score and checks' states of the `i`th lab ([`PackedLabs::labs`]'s order).
    pub fn glance(&self, i: usize) -> Option<Glance<'_>> {
        self.glances.get(i)
    }

    /// A digest of each lab's result, in the labs' order ([`PackedLabs::labs`]): equal
    /// results, equal digests; a changed result going unseen would need a 64-bit collision.
    pub fn digests(&self) -> &[u64] {
        &self.digests
    }

    pub fn unpack(&self) -> Result<Vec<LabResult>, Unreadable> {
        let json = lz4_flex::decompress_size_prepended(&self.bytes)
            .map_err(|e| Unreadable(e.to_string()))?;
        // Checked as UTF-8 once, then parsed as text: the parser need not check each string.
        let json = String::from_utf8(json).map_err(|e| Unreadable(e.to_string()))?;
        let kept: Vec<Unkept> =
            serde_json::from_str(&json).map_err(|e| Unreadable(e.to_string()))?;
        if kept.len() != self.labs.len() {
            return Err(Unreadable(format!(
                "{} results for {} labs",
                kept.len(),
                self.labs.len()
            )));
        }
        Ok(kept
            .into_iter()
            .zip(self.labs.iter())
            .map(
                |((source, source_detail, target, profile, outcomes, advice), lab)| LabResult {
                    lab: lab.clone(),
                    source,
                    source_detail,
                    target,
                    profile,
                    outcomes,
                    advice,
                },
            )
            .collect())
    }

    /// These labs with some judged again: each result replaces the one of its lab, or is added
    /// after the others when its lab has none yet.
    pub fn replaced(&self, judged: Vec<LabResult>) -> Result<PackedLabs, Unreadable> {
        let mut labs = self.unpack()?;
        for r in judged {
            match labs.iter_mut().find(|old| old.lab.id == r.lab.id) {
                Some(old) => *old = r,
                None => labs.push(r),
            }
        }
        PackedLabs::pack(&labs)
    }

    /// The labs, in the order judged.
    pub fn labs(&self) -> &[Arc<Lab>] {
        &self.labs
    }

    pub fn len(&self) -> usize {
        self.labs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labs.is_empty()
    }

    /// [`LabResult::environment_incomplete`] of any of them.
    pub fn environment_incomplete(&self) -> bool {
        self.incomplete
    }

    /// The bytes kept (for `-v` and the benchmark).
    pub fn held(&self) -> usize {
        self.bytes.len()
            + self.labs.len() * std::mem::size_of::<Arc<Lab>>()
            + self.digests.len() * std::mem::size_of::<u64>()
            + self.glances.held()
    }
}
