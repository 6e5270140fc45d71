//! The server's verdict on the learner's files (`check --files … --dry-run=server`): every
//! object is sent as a server-side dry-run apply ([`crate::cluster::dry_run`]), and what the
//! API server refused is judged here, beside the static checks that ran on the same files.
//!
//! Where a refusal is reported, for each lab graded:
//! 1. at the spec checks that judge the field the server named: the checks whose outcome
//!    changes when that field is taken out of the object, or given another value;
//! 2. else at the spec checks that read the refused object: those whose outcome changes when
//!    the object is left out (it cannot exist on the cluster: every one of them would fail);
//! 3. else on the lab itself, when the lab reads the object's kind, or when no lab graded does.
//!
//! A check a refusal is attached to fails (the learner's, exit 1); a lab-level refusal fails the
//! run the same way without changing the score. What kept the dry run from judging an object
//! (forbidden, unreachable, a namespace that does not exist yet) is the environment's (exit 3),
//! never a fail. Nothing is persisted: every request carries `dryRun=All`.

use serde_json::Value;

use super::{Event, Plan, Progress};
use crate::catalog::Stage;
use crate::cluster::dry_run::{dry_run_apply, Answer, Refusal};
use crate::cluster::{connect, probe, ConnectOpts, Discovery};
use crate::observe::{Obj, Observed, Query, SourceKind};
use crate::results::check::{Attached, AttachedCheck, ServerProblem, ServerRefusal, ServerVerdict};
use crate::verify::{self, LabResult, Status};
use crate::Error;

/// Sends every object of the files to the cluster as a dry-run apply, judges the refusals and
/// makes each check a refusal is attached to fail in `results` (the static round's, in plan
/// order). A wrong `--context` or kubeconfig is bad input, as for any command; a cluster that
/// cannot be reached is a problem of the verdict, so the static grade is still shown.
pub(super) async fn server(
    plan: &Plan<'_>,
    opts: &ConnectOpts,
    obs: &Observed,
    queries: &[Query],
    results: &mut [LabResult],
    progress: &mut Progress,
) -> Result<ServerVerdict, Error> {
    let all_labs: Vec<String> = plan.items.iter().map(|i| i.bundle.lab.id.clone()).collect();
    let mut verdict = ServerVerdict {
        cluster: String::new(),
        sent: 0,
        refusals: Vec::new(),
        problems: Vec::new(),
    };
    let unreachable = |e: Error, verdict: &mut ServerVerdict| match e {
        Error::Environment(text) => {
            verdict.problems.push(ServerProblem {
                text,
                labs: all_labs.clone(),
            });
            Ok(())
        }
        other => Err(other),
    };
    let conn = match connect(opts).await {
        Ok(conn) => conn,
        Err(e) => {
            unreachable(e, &mut verdict)?;
            return Ok(verdict);
        }
    };
    progress.on(Event::Connected(&conn.describe()));
    verdict.cluster = conn.describe();
    if let Err(e) = probe(&conn).await {
        unreachable(e, &mut verdict)?;
        return Ok(verdict);
    }
    let discovery = Discovery::new();
    let objects: Vec<&Obj> = obs.objects();
    progress.on(Event::Reading {
        queries: objects.len(),
    });
    let mut refused: Vec<(usize, Refusal)> = Vec::new();
    for (i, obj) in objects.iter().enumerate() {
        let readers = labs_reading(plan, obj);
        let namespace = readers
            .first()
            .copied()
            .or_else(|| plan.items.first())
            .map(|item| item.target.namespace.clone())
            .unwrap_or_default();
        verdict.sent += 1;
        match dry_run_apply(&conn, &discovery, obj, &namespace).await {
            Ok(Answer::Accepted) => {}
            Ok(Answer::Refused(r)) => refused.push((i, r)),
            Ok(Answer::Unavailable(text)) => verdict.problems.push(ServerProblem {
                text,
                labs: if readers.is_empty() {
                    all_labs.clone()
                } else {
                    readers.iter().map(|i| i.bundle.lab.id.clone()).collect()
                },
            }),
            // Refused credentials: nothing more can be sent.
            Err(e) => {
                progress.on(Event::ReadDone);
                unreachable(e, &mut verdict)?;
                return Ok(verdict);
            }
        }
    }
    progress.on(Event::ReadDone);
    for (i, refusal) in refused {
        let labs = attribute(plan, obs, queries, results, i, &refusal);
        verdict.refusals.push(ServerRefusal {
            object: objects[i].display_name(),
            origin: objects[i].origin.to_string(),
            refusal,
            labs,
        });
    }
    fail_attached(&verdict, results);
    Ok(verdict)
}

/// The plan's items whose lab reads the object's kind.
fn labs_reading<'p, 'c>(plan: &'p Plan<'c>, obj: &Obj) -> Vec<&'p super::Item<'c>> {
    plan.items
        .iter()
        .filter(|item| {
            item.verifier
                .reads()
                .iter()
                .any(|r| r.kind.matches(obj.api_version(), obj.kind()))
        })
        .collect()
}

/// Where a refusal of `objects[index]` is reported (see the module's rules 1–3).
fn attribute(
    plan: &Plan<'_>,
    obs: &Observed,
    queries: &[Query],
    results: &[LabResult],
    index: usize,
    refusal: &Refusal,
) -> Vec<Attached> {
    let objects: Vec<Obj> = obs.objects().into_iter().cloned().collect();
    let refused = &objects[index];
    let with = |replaced: Option<Obj>| -> Observed {
        let mut changed = objects.clone();
        match replaced {
            Some(o) => changed[index] = o,
            None => {
                changed.remove(index);
            }
        }
        Observed::offline(SourceKind::Files, obs.detail.clone(), changed).planned(queries.to_vec())
    };
    // The observations of rule 1 (each field taken out, or given another value), then rule 2's.
    let mut by_field: Vec<Observed> = Vec::new();
    for field in &refusal.fields {
        let Some(path) = parse_path(field) else {
            continue;
        };
        for probe in [Probe::Remove, Probe::Replace] {
            let mut value = refused.value.as_ref().clone();
            if probe.apply(&mut value, &path) {
                if let Ok(o) = Obj::new(value, refused.origin.clone()) {
                    by_field.push(with(Some(o)));
                }
            }
        }
    }
    let without = with(None);
    let mut out = Vec::new();
    for (item, result) in plan.items.iter().zip(results) {
        let changed = |probe: &Observed| -> Vec<AttachedCheck> {
            let Ok(again) = verify::run(
                item.bundle,
                item.verifier,
                probe,
                &crate::facts::ClusterNodes::of(probe),
                &item.target,
                &plan.params,
                plan.options.profile,
                None,
            ) else {
                return Vec::new();
            };
            item.bundle
                .lab
                .checks
                .iter()
                .filter(|c| c.stage == Stage::Spec)
                .filter_map(|c| {
                    let before = result.outcomes.iter().find(|o| o.check == c.id)?;
                    let after = again.outcomes.iter().find(|o| o.check == c.id)?;
                    (before != after).then(|| AttachedCheck {
                        check: c.id.clone(),
                        before: before.status,
                    })
                })
                .collect()
        };
        let mut checks: Vec<AttachedCheck> = Vec::new();
        for probe in &by_field {
            for c in changed(probe) {
                if !checks.iter().any(|k| k.check == c.check) {
                    checks.push(c);
                }
            }
        }
        if checks.is_empty() {
            checks = changed(&without);
        }
        // In lab.yaml order, whatever probe found them.
        checks.sort_by_key(|c| item.bundle.lab.checks.iter().position(|k| k.id == c.check));
        let reads_it = item
            .verifier
            .reads()
            .iter()
            .any(|r| r.kind.matches(refused.api_version(), refused.kind()));
        if !checks.is_empty() || reads_it {
            out.push(Attached {
                lab: item.bundle.lab.id.clone(),
                checks,
            });
        }
    }
    if out.is_empty() {
        out = plan
            .items
            .iter()
            .map(|item| Attached {
                lab: item.bundle.lab.id.clone(),
                checks: Vec::new(),
            })
            .collect();
    }
    out
}

/// Each check a refusal is attached to fails: the object cannot be applied as written. Its own
/// expected/found and hint stay when it failed already; otherwise the report says what the
/// server refused instead.
fn fail_attached(verdict: &ServerVerdict, results: &mut [LabResult]) {
    for r in &verdict.refusals {
        for a in &r.labs {
            let Some(result) = results.iter_mut().find(|x| x.lab.id == a.lab) else {
                continue;
            };
            for c in &a.checks {
                let Some(o) = result.outcomes.iter_mut().find(|o| o.check == c.check) else {
                    continue;
                };
                if o.status != Status::Fail {
                    o.status = Status::Fail;
                    o.reason = None;
                    o.expected = Some("accepted by the API server (server-side dry run)".into());
                    o.found = Some(format!("refused by the API server: {}", r.object));
                }
            }
        }
    }
}

/// One step of a field path as the API server writes it: `spec.tasks[0].name` (validation),
/// `.spec.tasks[0].name` (server-side apply), `[name="worker"]` (a keyed list item).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
    Item(String, String),
}

/// The steps of a field path, or None for one it cannot follow.
fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path.strip_prefix('.').unwrap_or(path);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inside = &after[..end];
            steps.push(match inside.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => {
                    let (k, v) = inside.split_once('=')?;
                    Step::Item(k.to_string(), v.trim_matches('"').to_string())
                }
            });
            rest = &after[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Key(rest[..end].to_string()));
            rest = &rest[end..];
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    (!steps.is_empty()).then_some(steps)
}

/// How a field is changed to see which checks judge it.
#[derive(Debug, Clone, Copy)]
enum Probe {
    Remove,
    Replace,
}

/// A value no manifest holds, so a check that reads the field sees a change.
const OTHER_VALUE: &str = "trainlab-dry-run-probe";

impl Probe {
    /// Changes the field at `path`; false when the path does not lead to it.
    fn apply(self, value: &mut Value, path: &[Step]) -> bool {
        let Some((last, parents)) = path.split_last() else {
            return false;
        };
        let mut at = value;
        for step in parents {
            let next = match step {
                Step::Key(k) => at.get_mut(k.as_str()),
                Step::Index(i) => at.get_mut(*i),
                Step::Item(k, v) => at
                    .as_array_mut()
                    .and_then(|a| a.iter_mut().find(|x| x[k.as_str()].as_str() == Some(v))),
            };
            match next {
                Some(n) => at = n,
                None => return false,
            }
        }
        let other = Value::String(OTHER_VALUE.to_string());
        match (self, last, at) {
            (Probe::Remove, Step::Key(k), Value::Object(m)) => m.remove(k.as_str()).is_some(),
            (Probe::Replace, Step::Key(k), Value::Object(m)) => match m.get_mut(k.as_str()) {
                Some(v) => {
                    *v = other;
                    true
                }
                None => false,
            },
            (Probe::Remove, Step::Index(i), Value::Array(a)) if *i < a.len() => {
                a.remove(*i);
                true
            }
            (Probe::Replace, Step::Index(i), Value::Array(a)) if *i < a.len() => {
                a[*i] = other;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Text;
    use crate::exit::ExitCode;
    use crate::results::check::Checked;
    use serde_json::json;

    #[test]
    fn paths_are_read_as_validation_and_server_side_apply_write_them() {
        let k = |s: &str| Step::Key(s.into());
        assert_eq!(
            parse_path("spec.template.spec.requirements[0].operator").unwrap(),
            [
                k("spec"),
                k("template"),
                k("spec"),
                k("requirements"),
                Step::Index(0),
                k("operator")
            ]
        );
        assert_eq!(
            parse_path(".spec.tasks[name=\"worker\"].foo").unwrap(),
            [
                k("spec"),
                k("tasks"),
                Step::Item("name".into(), "worker".into()),
                k("foo")
            ]
        );
        assert_eq!(parse_path(""), None);
        assert_eq!(parse_path("spec..x"), None);
        assert_eq!(parse_path("spec[x"), None);
    }

    #[test]
    fn a_probe_changes_exactly_the_field_or_reports_it_cannot() {
        let v = json!({"spec": {"requirements": [{"key": "zone", "operator": "in"}], "x": 1}});
        let path = parse_path("spec.requirements[0].operator").unwrap();
        let mut removed = v.clone();
        assert!(Probe::Remove.apply(&mut removed, &path));
        assert_eq!(removed["spec"]["requirements"][0], json!({"key": "zone"}));
        let mut replaced = v.clone();
        assert!(Probe::Replace.apply(&mut replaced, &path));
        assert_eq!(replaced["spec"]["requirements"][0]["operator"], OTHER_VALUE);
        let mut same = v.clone();
        assert!(!Probe::Remove.apply(&mut same, &parse_path("spec.nothere.y").unwrap()));
        assert!(!Probe::Replace.apply(&mut same, &parse_path("spec.requirements[3]").unwrap()));
        assert_eq!(same, v);
    }

    fn verdict(problems: usize, refusals: usize) -> ServerVerdict {
        let refusal = ServerRefusal {
            object: "NodePool/gpu-training".into(),
            origin: "nodepool.yaml, document 1".into(),
            refusal: Refusal {
                code: 422,
                reason: "Invalid".into(),
                message: "m".into(),
                fields: Vec::new(),
            },
            labs: vec![Attached {
                lab: "karpenter-single-az".into(),
                checks: Vec::new(),
            }],
        };
        let problem = ServerProblem {
            text: Text {
                ja: "j".into(),
                en: "e".into(),
            },
            labs: vec!["karpenter-single-az".into()],
        };
        ServerVerdict {
            cluster: "context c (http://127.0.0.1:1)".into(),
            sent: 1,
            refusals: vec![refusal; refusals],
            problems: vec![problem; problems],
        }
    }

    #[test]
    fn a_refusal_fails_the_run_and_a_problem_is_the_environments() {
        let checked = |server| Checked {
            results: Vec::new(),
            server: Some(server),
        };
        assert_eq!(checked(verdict(0, 0)).exit_code(), ExitCode::Ok);
        assert_eq!(checked(verdict(0, 1)).exit_code(), ExitCode::Failed);
        assert_eq!(checked(verdict(1, 1)).exit_code(), ExitCode::Environment);
        let v = verdict(1, 1);
        assert_eq!(v.refusals_in("karpenter-single-az").count(), 1);
        assert_eq!(v.refusals_in("volcano-gang").count(), 0);
        assert_eq!(v.problems_in("karpenter-single-az").count(), 1);
    }
}
