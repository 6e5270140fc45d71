//! Lab validation beyond the schema (`trainlab lint`): the verifier's check ids match lab.yaml,
//! the solution passes static mode, the draft fails it.

use crate::catalog::{draft_ja_path, LabBundle, Stage, PROFILES};
use crate::catalog::{SiteFill, SITE_TOKEN};
use crate::facts::Profile;
use crate::observe::{parse_text, Observed, SourceKind};

use super::{Status, Target, Verifier};

/// Problems with one lab, each naming the file and what was expected.
pub fn lint_lab(b: &LabBundle, verifier: Option<&dyn Verifier>) -> Vec<String> {
    let lab = &b.lab;
    let file = b.path_of("lab.yaml");
    let mut problems = Vec::new();
    if !lab.is_gradable() {
        if verifier.is_some() {
            problems.push(format!(
                "{file}: field `status`: a verifier exists for `{}`; expected `status: gradable`",
                lab.id
            ));
        }
        return problems;
    }
    let Some(v) = verifier else {
        problems.push(format!("{file}: field `status`: gradable, but no verifier is registered for `{}` (the `registry!` list in src/labs/mod.rs)", lab.id));
        return problems;
    };
    let ids: Vec<&str> = lab.checks.iter().map(|c| c.id.as_str()).collect();
    if ids != v.check_ids() {
        problems.push(format!(
            "{file}: field `checks`: ids {ids:?} do not match the verifier's {:?}",
            v.check_ids()
        ));
        return problems;
    }
    for profile in PROFILES {
        for (folder, should_pass) in [("solution", true), ("draft", false)] {
            problems.extend(lint_folder(b, v, profile, folder, should_pass));
        }
    }
    if let Some(draft) = lab.task.as_ref().and_then(|t| t.draft.as_deref()) {
        problems.extend(lint_draft_ja(b, draft));
    }
    // `start` writes the draft as it is, for the learner to finish: a site token there would
    // reach them unfilled.
    let ja_folder = draft_ja_path("draft/").trim_end_matches('/').to_string();
    for (rel, text) in b
        .files_under("draft")
        .into_iter()
        .chain(b.files_under(&ja_folder))
    {
        if text.contains(SITE_TOKEN) {
            problems.push(format!(
                "{}: `{SITE_TOKEN}…}}` in the draft: `trainlab start` writes the draft as it is, so the learner would see the token; write a TODO for the value instead",
                b.path_of(rel)
            ));
        }
    }
    problems
}

/// The Japanese draft `start --lang ja` writes: it must exist beside the draft and hold the same
/// YAML (every document's value equal), so the two differ only in their comments and cannot
/// drift apart.
fn lint_draft_ja(b: &LabBundle, draft: &str) -> Vec<String> {
    let ja = draft_ja_path(draft);
    let (Some(en_text), Some(ja_text)) = (b.files.get(draft), b.files.get(&ja)) else {
        // A draft that does not exist is named by lab.yaml's own validation.
        if !b.files.contains_key(draft) {
            return Vec::new();
        }
        return vec![format!(
            "{}: missing: the Japanese draft `trainlab start --lang ja` writes, the same YAML as {} with its comments in Japanese",
            b.path_of(&ja),
            b.path_of(draft)
        )];
    };
    let parsed = |rel: &str, text: &str| {
        parse_text(text, &b.path_of(rel)).map(|objs| {
            objs.into_iter()
                .map(|o| (*o.value).clone())
                .collect::<Vec<_>>()
        })
    };
    match (parsed(draft, en_text), parsed(&ja, ja_text)) {
        (Err(e), _) | (_, Err(e)) => vec![e.to_string()],
        (Ok(en), Ok(ja_docs)) if en.len() != ja_docs.len() => vec![format!(
            "{}: {} objects, expected {} as in {} (the Japanese draft differs only in its comments)",
            b.path_of(&ja),
            ja_docs.len(),
            en.len(),
            b.path_of(draft)
        )],
        (Ok(en), Ok(ja_docs)) => en
            .iter()
            .zip(&ja_docs)
            .enumerate()
            .find_map(|(i, (e, j))| Some((i, first_difference(e, j, "")?)))
            .map(|(i, (at, e, j))| {
                vec![format!(
                    "{}: object {} differs from the same object of {} at `{at}`: {j} here, {e} there; expected the same YAML, with only the comments in Japanese",
                    b.path_of(&ja),
                    i + 1,
                    b.path_of(draft)
                )]
            })
            .unwrap_or_default(),
    }
}

/// Where two values first differ: the field path (`spec.tasks[0].replicas`) and each value as
/// JSON. None when they are equal.
fn first_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
    at: &str,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    let shown = |v: Option<&Value>| v.map_or("nothing".to_string(), Value::to_string);
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => first_difference(p, q, &path),
                    (p, q) => Some((path, shown(p), shown(q))),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some((at.to_string(), a.to_string(), b.to_string())),
    }
}

/// One folder of a lab (`solution/` with the profile's overlay, or the draft) in static mode with
/// one profile's parameters: the solution must pass every spec check, the draft must fail one.
/// The kind profile grades with its parameters given as `--param` values (as `lint` always
/// did); any other profile as `check --files --profile P` does, its parameters standing for the
/// cluster.
fn lint_folder(
    b: &LabBundle,
    v: &dyn Verifier,
    profile: &str,
    folder: &str,
    should_pass: bool,
) -> Vec<String> {
    let lab = &b.lab;
    let files = if folder == "solution" {
        b.raw_files_for(folder, profile)
    } else {
        b.files_under(folder)
    };
    if files.is_empty() {
        return Vec::new();
    }
    let file = b.path_of("lab.yaml");
    let mut problems = Vec::new();
    let mut objects = Vec::new();
    // Graded with kind's stand-in site values on every profile: kind's have every key, so what
    // fails here is a token no site can fill (an unknown key, an unclosed `${site.`).
    for (rel, raw) in &files {
        let first_reader = profile == PROFILES[0] || rel.contains(&format!("-{profile}/"));
        let text = match LintSite.fill(raw, &b.path_of(rel)) {
            Ok(t) => t,
            Err(e) => {
                if first_reader {
                    problems.push(e.to_string());
                }
                continue;
            }
        };
        match parse_text(&text, &b.path_of(rel)) {
            // Each file once, under the first profile that reads it.
            Ok(o) => objects.extend(o),
            Err(e) if first_reader => problems.push(e.to_string()),
            Err(_) => {}
        }
    }
    let shown = match (folder, b.has_overlay(folder, profile)) {
        ("solution", true) => format!("solution/ + solution-{profile}/"),
        _ => format!("{folder}/"),
    };
    let obs = Observed::offline(SourceKind::Files, folder, objects);
    let target = Target::for_lab(&lab.id);
    let (params, as_profile) = if profile == "kind" {
        (lab.params(profile).into_iter().collect(), None)
    } else {
        (Default::default(), Profile::parse(profile))
    };
    let obs = obs.planned(super::queries(v, &target));
    let nodes = crate::facts::ClusterNodes::of(&obs);
    match super::run(b, v, &obs, &nodes, &target, &params, as_profile, None) {
        Err(e) => problems.push(format!("{}/{shown} ({profile}): {e}", b.origin)),
        Ok(r) => {
            let spec: Vec<_> = r
                .outcomes
                .iter()
                .filter(|o| lab.check(&o.check).is_some_and(|c| c.stage == Stage::Spec))
                .collect();
            let failing: Vec<&str> = spec
                .iter()
                .filter(|o| !matches!(o.status, Status::Pass | Status::Skipped))
                .map(|o| o.check.as_str())
                .collect();
            if should_pass && !failing.is_empty() {
                problems.push(format!(
                    "{}/{shown} ({profile} profile): spec checks do not pass in static mode: {failing:?}",
                    b.origin
                ));
            }
            if !should_pass && !spec.iter().any(|o| o.status == Status::Fail) {
                problems.push(format!("{}/{shown} ({profile} profile): applied as is, the draft must fail the lab, but no spec check fails", b.origin));
            }
            problems.extend(
                undefined_texts(b, &r)
                    .into_iter()
                    .map(|p| format!("{file}: {p} (graded on {shown}, {profile} profile)")),
            );
        }
    }
    problems
}

/// Fills `${site.KEY}` with kind's stand-ins (`facts::site::KIND_VALUES`); a key no site has,
/// or an unclosed token, is the lint problem naming the file.
struct LintSite;

impl SiteFill for LintSite {
    type Error = String;
    fn fill(&self, text: &str, origin: &str) -> Result<String, String> {
        crate::facts::site::fill(text, &crate::facts::site::kind_value)
            .map_err(|e| e.said(origin).0)
    }
}

/// The hint keys, message ids and advice ids a graded result names that lab.yaml does not define.
/// The report would otherwise fall back to the check's default hint or print the bare id.
pub fn undefined_texts(b: &LabBundle, r: &super::LabResult) -> Vec<String> {
    let lab = &b.lab;
    let mut problems = Vec::new();
    for o in &r.outcomes {
        let Some(check) = lab.check(&o.check) else {
            continue;
        };
        if let Some(key) = o.hint.as_deref() {
            if lab.hint_variant(check, key).is_none() {
                problems.push(format!(
                    "field `checks[{}].hints`: the verifier gives hint `{key}`, which is not defined",
                    o.check
                ));
            }
        }
        if let Some(super::Reason::Message(id)) = &o.reason {
            if !lab.messages.contains_key(id) {
                problems.push(format!(
                    "field `messages`: check `{}` says message `{id}`, which is not defined",
                    o.check
                ));
            }
        }
    }
    for a in &r.advice {
        if !lab.advice.contains_key(&a.id) {
            problems.push(format!(
                "field `advice`: the verifier gives advice `{}`, which is not defined",
                a.id
            ));
        }
    }
    problems.sort();
    problems.dedup();
    problems
}
