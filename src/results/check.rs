//! What a `check` run produced: each lab's result and, with `--dry-run=server`, the API
//! server's verdict on the files; and the exit code they make.

use crate::catalog::Text;
use crate::cluster::dry_run::Refusal;
use crate::exit::ExitCode;
use crate::verify::{LabResult, Status};

/// A `check` run: the graded labs and, with `--dry-run=server`, the server's verdict.
#[derive(Debug, Clone)]
pub struct Checked {
    pub results: Vec<LabResult>,
    pub server: Option<ServerVerdict>,
}

impl Checked {
    /// [`exit_code`] of the results, then the server's verdict: a problem is the
    /// environment's (3, it takes precedence), a refusal is a fail (1) even when no check holds
    /// it.
    pub fn exit_code(&self) -> ExitCode {
        let graded = exit_code(&self.results);
        let Some(server) = &self.server else {
            return graded;
        };
        if !server.problems.is_empty() {
            ExitCode::Environment
        } else if !server.refusals.is_empty() && graded != ExitCode::Environment {
            ExitCode::Failed
        } else {
            graded
        }
    }
}

/// The process exit code of graded results: 3 when the environment kept any lab from being
/// fully graded (an errored check, a missing capability the cluster could have), else 1 on a
/// fail, else 4 while pending, else 0.
pub fn exit_code(results: &[LabResult]) -> ExitCode {
    let any = |s: Status| {
        results
            .iter()
            .any(|r| r.outcomes.iter().any(|o| o.status == s))
    };
    if results.iter().any(LabResult::environment_incomplete) {
        ExitCode::Environment
    } else if any(Status::Fail) {
        ExitCode::Failed
    } else if any(Status::Pending) {
        ExitCode::StillPending
    } else {
        ExitCode::Ok
    }
}

/// What the API server said about the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVerdict {
    /// The cluster that judged (`context kind-trainlab (https://127.0.0.1:6443)`); empty when
    /// none could be reached.
    pub cluster: String,
    /// Objects sent (each once, whatever the number of labs).
    pub sent: usize,
    /// What the server refused, in file order.
    pub refusals: Vec<ServerRefusal>,
    /// What kept the dry run from judging (an object, or all of them).
    pub problems: Vec<ServerProblem>,
}

/// One refused object and where it is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRefusal {
    /// `NodePool/gpu-training`.
    pub object: String,
    /// `nodepool.yaml, document 1`.
    pub origin: String,
    pub refusal: Refusal,
    /// The labs it is reported in.
    pub labs: Vec<Attached>,
}

/// A refusal in one lab: at these checks, or (none) on the lab itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    pub lab: String,
    pub checks: Vec<AttachedCheck>,
}

/// A check a refusal is attached to, with what static mode had said of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachedCheck {
    pub check: String,
    /// The check's status from the files alone (a fail keeps its own hint).
    pub before: Status,
}

/// What kept the dry run from judging, in both languages, and the labs it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerProblem {
    pub text: Text,
    pub labs: Vec<String>,
}

impl ServerVerdict {
    /// The refusals reported in `lab`, each with the checks it is attached to there.
    pub fn refusals_in<'a>(
        &'a self,
        lab: &'a str,
    ) -> impl Iterator<Item = (&'a ServerRefusal, &'a [AttachedCheck])> + 'a {
        self.refusals.iter().filter_map(move |r| {
            r.labs
                .iter()
                .find(|a| a.lab == lab)
                .map(|a| (r, a.checks.as_slice()))
        })
    }

    /// The problems that concern `lab`.
    pub fn problems_in<'a>(&'a self, lab: &'a str) -> impl Iterator<Item = &'a Text> + 'a {
        self.problems
            .iter()
            .filter(move |p| p.labs.iter().any(|l| l == lab))
            .map(|p| &p.text)
    }
}
