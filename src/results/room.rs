//! What grading a room produced: every learner's labs (or why their cluster could not be
//! read), how the room was read, and the exit code it makes.

use std::time::SystemTime;

use crate::catalog::Lab;
use crate::exit::ExitCode;
use crate::observe::SourceKind;
use crate::verify::LabResult;

use super::packed::{PackedLabs, Unreadable};

/// One learner's graded labs (kept packed: [`PackedLabs::unpack`] reads them back), or why
/// their cluster could not be graded at all.
#[derive(Debug, Clone)]
pub struct LearnerResult {
    pub name: String,
    pub context: Option<String>,
    pub results: Result<PackedLabs, String>,
}

impl LearnerResult {
    /// A learner's judged labs, or why they could not be judged, kept packed.
    pub fn new(
        name: String,
        context: Option<String>,
        results: Result<Vec<LabResult>, String>,
    ) -> Result<LearnerResult, Unreadable> {
        let results = match results {
            Ok(labs) => Ok(PackedLabs::pack(&labs)?),
            Err(why) => Err(why),
        };
        Ok(LearnerResult {
            name,
            context,
            results,
        })
    }

    /// The learner's labs read back (none when their cluster could not be read).
    pub fn labs(&self) -> Result<Vec<LabResult>, Unreadable> {
        match &self.results {
            Ok(packed) => packed.unpack(),
            Err(_) => Ok(Vec::new()),
        }
    }
}

/// Something the room should know about how it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomNote {
    /// A kind forbidden at cluster scope, read per namespace instead.
    PerNamespace(PerNamespace),
    /// Checks skipped because room grading reads no Secrets (`lab/check` ids).
    SecretsWithheld { checks: Vec<String> },
    /// `--learners-from-namespaces` found nobody (in watch mode; once, it is an error).
    NoLearners { selector: String, template: String },
}

/// A graded room.
#[derive(Debug, Clone)]
pub struct RoomResult {
    pub labs: Vec<std::sync::Arc<Lab>>,
    pub learners: Vec<LearnerResult>,
    pub source: SourceKind,
    pub source_detail: String,
    /// The namespace template (shared clusters and the demo).
    pub template: Option<String>,
    pub notes: Vec<RoomNote>,
    pub graded_at: SystemTime,
}

/// A kind that RBAC forbids at cluster scope and was read namespace by namespace instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerNamespace {
    /// `pods`, `jobs.batch`.
    pub resource: String,
    /// How many namespaces were read.
    pub namespaces: usize,
    /// The API server's refusal of the cluster-wide read.
    pub message: String,
}

/// The exit code of a graded room: it is about grading, not about the learners' scores —
/// 3 when any learner's cluster could not be read or the environment kept a lab from being
/// fully graded, else 0.
pub fn room_exit_code(room: &RoomResult) -> ExitCode {
    let incomplete = room.learners.iter().any(|l| match &l.results {
        Ok(labs) => labs.environment_incomplete(),
        Err(_) => true,
    });
    if incomplete {
        ExitCode::Environment
    } else {
        ExitCode::Ok
    }
}
