//! The outcome vocabulary (docs/architecture.md, "Outcomes"): every check yields exactly one outcome.

use super::evidence::Evidence;

use serde::{Deserialize, Serialize};

use crate::observe::Unavailable;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The requirement holds.
    Pass,
    /// The learner's objects are wrong or missing.
    Fail,
    /// Objects are right but the cluster has not converged yet.
    Pending,
    /// The profile or source cannot show this.
    Skipped,
    /// The environment failed; never the learner's fault.
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Pending => "pending",
            Status::Skipped => "skipped",
            Status::Error => "error",
        }
    }

    /// Whether the check's weight is part of the score's denominator.
    pub fn is_counted(self) -> bool {
        matches!(self, Status::Pass | Status::Fail | Status::Pending)
    }
}

/// Why a check was skipped, errored or is pending: a framework condition, a lab-specific message
/// from `lab.yaml` (`messages:`), or a fact the cluster reported (shown verbatim).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reason {
    Unavailable(Unavailable),
    /// `messages.<id>` in lab.yaml, filled from the outcome's evidence.
    Message(String),
    /// Text from the cluster itself (a scheduler message, a condition), not translated.
    Cluster(String),
    /// A parameter the check needs in static mode (`--param name=value`).
    NeedsParam(String),
    /// Workshop grading reads no Secrets (the grader's role has no permission on them).
    SecretsWithheld,
    /// A capability the check needs is missing (detected once per run, as `doctor` does).
    MissingCapability {
        capability: String,
        /// What detection saw (`controller volcano-scheduler not available`).
        seen: Vec<crate::facts::capabilities::Seen>,
        /// The profile detected: the install command depends on it.
        profile: Option<crate::facts::Profile>,
        /// The profile could provide it: its absence makes the grade incomplete (exit 3).
        installable: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub check: String,
    pub status: Status,
    pub expected: Option<String>,
    pub found: Option<String>,
    pub reason: Option<Reason>,
    /// A key of the check's `hints:` in lab.yaml, for a specific way of failing.
    pub hint: Option<String>,
    /// Facts that fill `{placeholders}` in the check's hint and in messages.
    pub evidence: Evidence,
}

impl Outcome {
    fn new(check: &str, status: Status) -> Outcome {
        Outcome {
            check: check.to_string(),
            status,
            expected: None,
            found: None,
            reason: None,
            hint: None,
            evidence: Evidence::new(),
        }
    }

    pub fn pass(check: &str) -> Outcome {
        Outcome::new(check, Status::Pass)
    }

    /// A failure: what was expected and what was found.
    pub fn fail(check: &str, expected: impl Into<String>, found: impl Into<String>) -> Outcome {
        let mut o = Outcome::new(check, Status::Fail);
        o.expected = Some(expected.into());
        o.found = Some(found.into());
        o
    }

    pub fn pending(check: &str, reason: Reason) -> Outcome {
        let mut o = Outcome::new(check, Status::Pending);
        o.reason = Some(reason);
        o
    }

    pub fn skipped(check: &str, reason: Reason) -> Outcome {
        let mut o = Outcome::new(check, Status::Skipped);
        o.reason = Some(reason);
        o
    }

    pub fn error(check: &str, reason: Reason) -> Outcome {
        let mut o = Outcome::new(check, Status::Error);
        o.reason = Some(reason);
        o
    }

    /// A read the source could not answer: skipped when the source cannot show it, error when
    /// the environment failed. Never a fail.
    pub fn unavailable(check: &str, why: &Unavailable) -> Outcome {
        let reason = Reason::Unavailable(why.clone());
        if why.is_environment_error() {
            Outcome::error(check, reason)
        } else {
            Outcome::skipped(check, reason)
        }
    }

    /// A failure only because the object the lab is about is missing (the learner has not
    /// started): reports say it once, and the room's summary does not count it.
    pub fn is_missing_object(&self) -> bool {
        self.status == Status::Fail && self.hint.as_deref() == Some(super::MISSING_HINT)
    }

    /// Adds a fact for `{placeholders}`.
    pub fn with(mut self, key: &str, value: impl ToString) -> Outcome {
        self.evidence.insert(key.to_string(), value.to_string());
        self
    }

    /// Selects a specific hint (`hints.<key>` in lab.yaml).
    pub fn hint(mut self, key: &str) -> Outcome {
        self.hint = Some(key.to_string());
        self
    }

    /// Adds expected/found to a non-fail outcome (e.g. evidence on a pass).
    pub fn expected_found(
        mut self,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Outcome {
        self.expected = Some(expected.into());
        self.found = Some(found.into());
        self
    }
}

/// A non-scoring note (`advice.<id>` in lab.yaml) with the facts for its placeholders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advice {
    pub id: String,
    pub evidence: Evidence,
}

impl Advice {
    pub fn new(id: &str) -> Advice {
        Advice {
            id: id.to_string(),
            evidence: Evidence::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl ToString) -> Advice {
        self.evidence.insert(key.to_string(), value.to_string());
        self
    }
}

/// What `judge()` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judgement {
    pub outcomes: Vec<Outcome>,
    pub advice: Vec<Advice>,
}

impl Judgement {
    /// One outcome per check when a single cause decides them all: the read failed, or the
    /// object every check is about is missing.
    pub fn every(checks: &[&str], f: impl Fn(&str) -> Outcome) -> Judgement {
        Judgement {
            outcomes: checks.iter().map(|c| f(c)).collect(),
            advice: Vec::new(),
        }
    }

    pub fn push(&mut self, o: Outcome) {
        self.outcomes.push(o);
    }

    pub fn advise(&mut self, a: Advice) {
        if !self.advice.iter().any(|x| x.id == a.id) {
            self.advice.push(a);
        }
    }

    pub fn get(&self, check: &str) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| o.check == check)
    }
}
