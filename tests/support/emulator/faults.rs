//! Faults injected per path prefix (`fault_rule`): which ones a request meets, and the `Status`
//! they answer.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::fault_rule::Fault;
use super::reply::Reply;
use super::request::Request;
use super::status::failure;
use super::store::Inner;

pub(super) enum FaultAction {
    Sleep(Duration),
    /// Held until the gate opens.
    Wait(tokio::sync::watch::Receiver<bool>),
    Fail(u16, String),
    Drop,
}

/// A `Status` error for an injected fault, with details taken from the path like the real one.
pub(super) fn fault_status(code: u16, message: &str, path: &str) -> Reply {
    failure(code, reason_for(code), message, details_from_path(path))
}

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Expired",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "",
    }
}

/// The message kube-apiserver uses for a bare error of this code.
fn default_message(code: u16) -> String {
    match code {
        401 => "Unauthorized".into(),
        403 => "forbidden: emulated fault".into(),
        404 => "the server could not find the requested resource".into(),
        409 => "the object has been modified; please apply your changes to the latest version and try again".into(),
        429 => "the server has received too many requests and has asked us to try again later".into(),
        500 => "Internal error occurred: emulated fault".into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted".into(),
        _ => format!("emulated fault ({code})"),
    }
}

/// `{name, group, kind: plural}` from a resource path, as errors about a resource carry.
fn details_from_path(path: &str) -> Value {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segs.as_slice() {
        ["api", _, rest @ ..] => ("", rest),
        ["apis", group, _, rest @ ..] => (*group, rest),
        _ => return json!({}),
    };
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    let mut details = Map::new();
    if let Some(name) = rest.get(1) {
        details.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        details.insert("group".into(), json!(group));
    }
    if let Some(plural) = rest.first() {
        details.insert("kind".into(), json!(plural));
    }
    Value::Object(details)
}

impl Inner {
    pub(super) fn record_and_match_faults(&mut self, req: &Request) -> (u64, Vec<FaultAction>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.requests
            .push(req.recorded(seq, self.started.elapsed()));
        let mut actions = Vec::new();
        for rule in self.faults.iter_mut().filter(|rule| rule.matches(req)) {
            match &rule.fault {
                Fault::Latency(delay) => actions.push(FaultAction::Sleep(*delay)),
                Fault::Gate(needed) => {
                    rule.used += 1;
                    if let Some(gate) = &rule.gate {
                        if rule.used >= *needed {
                            gate.send_replace(true);
                        }
                        actions.push(FaultAction::Wait(gate.subscribe()));
                    }
                }
                Fault::Status(code, message) => {
                    actions.push(FaultAction::Fail(*code, message.clone()));
                    break;
                }
                Fault::Down => {
                    actions.push(FaultAction::Drop);
                    break;
                }
                Fault::Sequence(codes) => {
                    let Some(&code) = codes.get(rule.used) else {
                        continue;
                    };
                    rule.used += 1;
                    if code >= 400 {
                        actions.push(FaultAction::Fail(code, default_message(code)));
                        break;
                    }
                }
            }
        }
        (seq, actions)
    }
}
