//! JUnit XML: a testsuite per lab (name = lab id), a testcase per check (classname = lab id,
//! name = check id). fail and pending are failures (type `fail`/`pending`), error is an error,
//! skipped is skipped; messages carry the hint, expected/found and the reason. With
//! `--dry-run=server` each suite also has a `server-dry-run` testcase.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::{LabReport, OutcomeReport};
use crate::verify::Status;

/// The testcase of `--dry-run=server`: the API server's verdict on the files of the lab.
const SERVER_CASE: &str = "server-dry-run";

/// Error when the dry run could not judge, failure when the server refused an object (each
/// refusal quoted), success otherwise.
fn server_status(s: &super::server::ServerReport) -> TestCaseStatus {
    let texts: Vec<&str> = s.refused.iter().map(|x| x.text.as_str()).collect();
    let (kind, lines) = if !s.errors.is_empty() {
        (
            NonSuccessKind::Error,
            s.errors.iter().map(String::as_str).collect(),
        )
    } else if !texts.is_empty() {
        (NonSuccessKind::Failure, texts)
    } else {
        return TestCaseStatus::success();
    };
    let mut status = TestCaseStatus::non_success(kind);
    status.set_message(lines[0].to_string());
    status.set_type(if kind == NonSuccessKind::Error {
        "error"
    } else {
        "fail"
    });
    status.set_description(lines.join("\n"));
    status
}

pub fn render_all(reports: &[LabReport]) -> String {
    let mut report = Report::new("trainlab");
    for r in reports {
        let mut suite = TestSuite::new(r.lab.id.as_str());
        suite.add_property(("source", r.source.kind));
        suite.add_property(("namespace", r.target.namespace.as_str()));
        // A lab with nothing counted was not graded; say so rather than imply 100 %.
        let score = match r.score.percent {
            Some(p) => format!("{p:.1}"),
            None => "not graded".to_string(),
        };
        suite.add_property(("score", score.as_str()));
        if let Some(l) = &r.target.learner {
            suite.add_property(("learner", l.as_str()));
        }
        for o in &r.outcomes {
            let status = case_status(o);
            let mut case = TestCase::new(o.check.as_str(), status);
            case.set_classname(r.lab.id.as_str());
            suite.add_test_case(case);
        }
        if let Some(server) = &r.server_dry_run {
            let mut case = TestCase::new(SERVER_CASE, server_status(server));
            case.set_classname(r.lab.id.as_str());
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialize JUnit: {e} -->\n"))
}

/// One check as a JUnit testcase status, the same for `check -o junit` and the room's JUnit:
/// pass is success, skipped is skipped (with why), fail and pending are failures typed by their
/// status, error is an error; the message is the hint (else the reason, else the title) and the
/// description holds expected, found, hint and reason.
pub fn case_status(o: &OutcomeReport) -> TestCaseStatus {
    let message = o
        .hint
        .clone()
        .or_else(|| o.reason.clone())
        .unwrap_or_else(|| o.title.clone());
    match o.status {
        Status::Pass => TestCaseStatus::success(),
        Status::Skipped => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(message);
            s
        }
        Status::Fail | Status::Pending | Status::Error => {
            let kind = if o.status == Status::Error {
                NonSuccessKind::Error
            } else {
                NonSuccessKind::Failure
            };
            let body: Vec<String> = [
                ("expected", &o.expected),
                ("found", &o.found),
                ("hint", &o.hint),
                ("reason", &o.reason),
            ]
            .into_iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {v}")))
            .collect();
            let mut s = TestCaseStatus::non_success(kind);
            s.set_message(message);
            s.set_type(o.status.as_str());
            s.set_description(body.join("\n"));
            s
        }
    }
}
