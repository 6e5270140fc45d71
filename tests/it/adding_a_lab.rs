//! docs/adding-a-lab.md followed to the letter: the example lab folder (docs/examples/labs/
//! 99-hello-gpu) loads and lints clean with its verifier (docs/examples/hello_gpu.rs, compiled
//! here exactly as it would be as src/labs/hello_gpu/mod.rs), grades its solution and draft,
//! says once that the Job is missing, and a read a verifier did not declare is refused on an offline source.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "../../docs/examples/hello_gpu.rs"]
mod hello_gpu;

use hello_gpu::HelloGpu;
use trainlab::catalog::Catalog;
use trainlab::facts::Profile;
use trainlab::observe::{kinds, sources, InputError, Observed, SourceKind};
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{
    lint_lab, queries, run, JudgeCtx, Judgement, LabResult, Outcome, Read, Status, Target, Verifier,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn catalog() -> Catalog {
    Catalog::from_dir(&root().join("docs/examples/labs")).expect("the example lab loads")
}

fn grade(verifier: &dyn Verifier, obs: Observed) -> LabResult {
    let c = catalog();
    let b = c.get("hello-gpu").unwrap();
    let target = Target::for_lab("hello-gpu");
    let obs = obs.planned(queries(verifier, &target));
    run(
        b,
        verifier,
        &obs,
        &trainlab::facts::ClusterNodes::of(&obs),
        &target,
        &BTreeMap::new(),
        Some(Profile::Kind),
        None,
    )
    .unwrap()
}

fn files(folder: &str) -> Observed {
    sources::files(&[root().join("docs/examples/labs/99-hello-gpu").join(folder)]).unwrap()
}

fn status(r: &LabResult, check: &str) -> Status {
    r.outcomes.iter().find(|o| o.check == check).unwrap().status
}

#[test]
fn the_example_lab_lints_clean_with_its_verifier() {
    let c = catalog();
    let b = c.get("hello-gpu").unwrap();
    let problems = lint_lab(b, Some(&HelloGpu));
    assert!(problems.is_empty(), "{problems:#?}");
    // Without its registry line the lab is reported, naming where the line goes.
    let unregistered = lint_lab(b, None);
    assert!(unregistered[0].contains("registry!"), "{unregistered:?}");
}

#[test]
fn the_solution_passes_in_static_mode_and_the_draft_fails_with_its_hint() {
    let r = grade(&HelloGpu, files("solution"));
    assert_eq!(status(&r, "gpu-in-limits"), Status::Pass);
    assert_eq!(status(&r, "job-complete"), Status::Skipped);

    let r = grade(&HelloGpu, files("draft"));
    assert_eq!(status(&r, "gpu-in-limits"), Status::Fail);
    let report = LabReport::new(&r, Lang::En);
    let hint = report.outcomes[0].hint.as_deref().unwrap();
    assert!(
        hint.contains("`nvidia.com/gpu: 1`") && hint.contains("spec.template.spec"),
        "{hint}"
    );
}

#[test]
fn a_missing_job_fails_every_check_once_with_the_labs_missing_text() {
    let other = r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"other","namespace":"trainlab-hello-gpu"},"spec":{"template":{"spec":{"containers":[]}}}}"#;
    let obs = Observed::offline(
        SourceKind::Snapshot,
        "test",
        trainlab::observe::parse_text(other, "other.json").unwrap(),
    );
    let r = grade(&HelloGpu, obs);
    assert!(r.outcomes.iter().all(|o| o.status == Status::Fail));
    let text = trainlab::report::human::render_all(&[LabReport::new(&r, Lang::En)], false);
    let said = text
        .matches("There is no Job `hello-gpu` in namespace `trainlab-hello-gpu`")
        .count();
    assert_eq!(said, 1, "said once, at the top:\n{text}");
    assert!(text.contains("found: other"), "{text}");
}

/// Declares Pods but judges Jobs: a verifier bug a real cluster would expose as "not planned".
struct ReadsUndeclared;

static PODS_READ: Read = Read::lab(&kinds::PODS);
static JOBS_READ: Read = Read::lab(&kinds::JOBS);
static ONLY_PODS: &[&Read] = &[&PODS_READ];

impl Verifier for ReadsUndeclared {
    fn lab_id(&self) -> &'static str {
        "hello-gpu"
    }
    fn check_ids(&self) -> &'static [&'static str] {
        &["gpu-in-limits", "job-complete"]
    }
    fn reads(&self) -> &'static [&'static Read] {
        ONLY_PODS
    }
    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        Ok(Judgement::every(self.check_ids(), |c| {
            match ctx.list(&JOBS_READ) {
                Ok(_) => Outcome::pass(c),
                Err(why) => Outcome::unavailable(c, &why),
            }
        }))
    }
}

#[test]
fn a_snapshot_refuses_a_read_the_verifier_did_not_declare() {
    let text = std::fs::read_to_string(
        root().join("docs/examples/labs/99-hello-gpu/solution/hello-gpu.yaml"),
    )
    .unwrap();
    let objects = trainlab::observe::parse_text(&text, "hello-gpu.yaml").unwrap();
    let r = grade(
        &ReadsUndeclared,
        Observed::offline(SourceKind::Snapshot, "saved", objects),
    );
    for o in &r.outcomes {
        assert_eq!(o.status, Status::Error, "{o:?}");
        let why = format!("{:?}", o.reason);
        assert!(why.contains("was not planned"), "{why}");
    }
}
