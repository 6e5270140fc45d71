//! The lab file format (`labs/NN-<id>/lab.yaml`). Unknown fields are rejected so a typo in a lab
//! file is an error at load time, not a silently missing text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::text::Text;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lab {
    /// Stable id (`volcano-gang`), used by other tools: never rename.
    pub id: String,
    /// Quiz question number, 1..=15; the folder is `NN-<id>`.
    pub number: u32,
    /// Short topic keyword shown by `list` (e.g. `scheduling`).
    pub topic: String,
    pub title: Text,
    pub quiz: Quiz,
    /// Where current upstream differs from the quiz text, with a source.
    #[serde(default)]
    pub notes: Vec<Note>,
    /// `gradable` labs have a task, checks and a verifier; `quiz-only` labs have only the quiz.
    pub status: LabStatus,
    #[serde(default)]
    pub task: Option<Task>,
    #[serde(default)]
    pub checks: Vec<Check>,
    /// Non-scoring notes a verifier may attach, by id.
    #[serde(default)]
    pub advice: BTreeMap<String, Text>,
    /// Lab-specific texts for skipped/error/pending reasons, by id.
    #[serde(default)]
    pub messages: BTreeMap<String, Text>,
    /// What to do when the object the lab is about is missing: the `missing` hint of every
    /// check (a check's own `hints.missing` wins), said once at the top of a report.
    #[serde(default)]
    pub missing: Option<Text>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabStatus {
    Gradable,
    QuizOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Choice {
    A,
    B,
    C,
    D,
}

impl Choice {
    pub const ALL: [Choice; 4] = [Choice::A, Choice::B, Choice::C, Choice::D];

    pub fn letter(self) -> &'static str {
        match self {
            Choice::A => "A",
            Choice::B => "B",
            Choice::C => "C",
            Choice::D => "D",
        }
    }

    pub fn parse(s: &str) -> Option<Choice> {
        match s.trim().to_ascii_uppercase().as_str() {
            "A" => Some(Choice::A),
            "B" => Some(Choice::B),
            "C" => Some(Choice::C),
            "D" => Some(Choice::D),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quiz {
    pub question: Text,
    pub choices: Choices,
    pub answer: Choice,
    /// Markdown; tables and code blocks kept as in the seed.
    pub explanation: Text,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choices {
    #[serde(rename = "A")]
    pub a: Text,
    #[serde(rename = "B")]
    pub b: Text,
    #[serde(rename = "C")]
    pub c: Text,
    #[serde(rename = "D")]
    pub d: Text,
}

impl Choices {
    pub fn get(&self, c: Choice) -> &Text {
        match c {
            Choice::A => &self.a,
            Choice::B => &self.b,
            Choice::C => &self.c,
            Choice::D => &self.d,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    pub text: Text,
    /// Where the fact comes from (repository path at a tag, or a documentation URL).
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Task text; `{name}` placeholders are filled from the profile's parameters.
    pub text: Text,
    /// Per-profile parameters (`kind`, `eks`): name → value, all as strings.
    #[serde(default)]
    pub params: BTreeMap<String, BTreeMap<String, String>>,
    /// The draft manifest `start` writes for the learner, relative to the lab folder.
    #[serde(default)]
    pub draft: Option<String>,
    /// The file name the draft is written to in the learner's working directory.
    #[serde(default)]
    pub draft_as: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Judges what the learner wrote; also runs on `--files`.
    Spec,
    /// Judges what the cluster did; skipped on `--files`.
    State,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Stable id, part of the JSON and JUnit interface.
    pub id: String,
    pub stage: Stage,
    pub weight: u32,
    /// Capabilities the check needs from the cluster (see `trainlab doctor`).
    #[serde(default)]
    pub capabilities: Vec<String>,
    pub title: Text,
    /// Shown under a failure: what to change. `{placeholders}` come from the outcome's evidence.
    pub hint: Text,
    /// Hints for specific ways of failing (`not-in`, `missing`), chosen by the verifier.
    #[serde(default)]
    pub hints: BTreeMap<String, Text>,
}

impl Lab {
    pub fn is_gradable(&self) -> bool {
        self.status == LabStatus::Gradable
    }

    pub fn check(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// The hint text for a failure of `check` with hint key `key`: the check's own variant, the
    /// lab's `missing` text for `missing`, else the check's default hint.
    pub fn hint_text<'a>(&'a self, check: &'a Check, key: Option<&str>) -> &'a Text {
        key.and_then(|k| self.hint_variant(check, k))
            .unwrap_or(&check.hint)
    }

    /// The text hint key `key` names for `check`: its own variant, or the lab's `missing` text
    /// for `missing`; None when lab.yaml defines neither (`lint` reports that).
    pub fn hint_variant<'a>(&'a self, check: &'a Check, key: &str) -> Option<&'a Text> {
        check.hints.get(key).or_else(|| {
            (key == "missing")
                .then_some(self.missing.as_ref())
                .flatten()
        })
    }

    /// The names of the capabilities the lab's checks need (each check's `capabilities:`).
    pub fn capability_names(&self) -> impl Iterator<Item = &str> {
        self.checks
            .iter()
            .flat_map(|c| c.capabilities.iter().map(String::as_str))
    }

    /// `09-volcano-gang`
    pub fn folder_name(&self) -> String {
        format!("{:02}-{}", self.number, self.id)
    }

    /// Parameters for a profile (`kind`/`eks`), empty when the lab has none.
    pub fn params(&self, profile: &str) -> BTreeMap<String, String> {
        self.task
            .as_ref()
            .and_then(|t| t.params.get(profile))
            .cloned()
            .unwrap_or_default()
    }
}

/// The namespace a lab's objects live in unless `-n` or `--learner` names another:
/// `trainlab-<id>`. Every command that places, finds or grades a lab's objects starts here.
pub fn lab_namespace(lab_id: &str) -> String {
    format!("trainlab-{lab_id}")
}
