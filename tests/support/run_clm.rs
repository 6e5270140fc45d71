//! run_clm.py's own refusals, for lab tests that show every answer and draft would start (the
//! kit's model of the script, `trainlab::verify::kit::cmdline::run_clm`; the conformance suite
//! runs the real script on the same lines).

#![allow(dead_code)]

use serde_json::Value;
#[allow(unused_imports)]
pub use trainlab::verify::kit::cmdline::run_clm::refusal;

use super::state::State;

/// Removes `--dataset_name VALUE` (or `--dataset_name=VALUE`) wherever a command line holds it:
/// an argv array, or a shell script string.
fn drop_dataset(v: &mut Value) {
    match v {
        Value::Array(words) => {
            if let Some(i) = words.iter().position(|w| w == "--dataset_name") {
                words.drain(i..(i + 2).min(words.len()));
            }
            words.retain(|w| !w.as_str().is_some_and(|s| s.starts_with("--dataset_name=")));
            words.iter_mut().for_each(drop_dataset);
        }
        Value::Object(map) => map.values_mut().for_each(drop_dataset),
        Value::String(s) if s.contains("--dataset_name") => {
            let kept: Vec<&str> = s.split(' ').collect();
            let mut out = Vec::new();
            let mut skip = false;
            for w in kept {
                if skip {
                    skip = false;
                } else if w == "--dataset_name" {
                    skip = true;
                } else if !w.starts_with("--dataset_name=") {
                    out.push(w);
                }
            }
            *s = out.join(" ");
        }
        _ => {}
    }
}

/// A lab whose answer can run run_clm.py: its kind and EKS answers get no `run-clm-refuses`
/// advice; `answer` (a state whose `kind` object runs run_clm.py) without its dataset keeps every
/// check's status (the lab grades its own concept) and is advised with run_clm's own message,
/// naming the role. (The kind answers run the stand-in, which refuses the same lines live.)
pub fn assert_a_line_run_clm_refuses_is_advised_not_failed(lab: &str, kind: &str, answer: State) {
    let advised = |s: &State| {
        s.grade(lab)
            .advice
            .into_iter()
            .find(|a| a.id == "run-clm-refuses")
    };
    for profile in ["kind", "eks"] {
        let s = State::solution_of(lab, profile);
        assert_eq!(advised(&s), None, "{profile}");
    }
    assert_eq!(advised(&answer), None);
    let broken = answer.clone().edit_all(kind, drop_dataset);
    let statuses = |s: &State| -> Vec<_> {
        s.grade(lab)
            .outcomes
            .iter()
            .map(|o| (o.check.clone(), o.status))
            .collect()
    };
    assert_eq!(statuses(&broken), statuses(&answer));
    let a = advised(&broken).expect("run-clm-refuses advice");
    assert_eq!(
        a.evidence["message"],
        "Need either a dataset name or a training/validation file."
    );
    assert!(!a.evidence["role"].is_empty());
}

/// The training arguments of the job named `job` (a Job or PyTorchJob, not a ConfigMap of that
/// name) among `objects`, as the kit reads them.
pub fn job_training_args(
    objects: &[trainlab::observe::Obj],
    job: &str,
) -> trainlab::verify::kit::cmdline::Args {
    use trainlab::verify::kit::training::job::{main_container, training_command};
    let obj = objects
        .iter()
        .find(|o| o.name() == job && o.kind() != "ConfigMap")
        .expect("the job");
    let w = trainlab::verify::kit::k8s::workload::Workload::from_obj(obj)
        .unwrap()
        .unwrap();
    let (c, _) = main_container(&w.templates[0]).unwrap();
    training_command(c).expect("a training command").args
}

/// The lab's kind and EKS answers and its draft all start under run_clm.py: nothing in their
/// job's arguments is what the script stops on.
pub fn assert_every_answer_and_the_draft_start(lab: &str, job: &str) {
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let b = catalog.get(lab).unwrap();
    let draft = b.lab.task.as_ref().unwrap().draft.as_ref().unwrap();
    let draft = trainlab::observe::parse_text(b.files.get(draft).unwrap(), "draft").unwrap();
    for (name, objects) in [
        ("solution", State::solution_of(lab, "kind").objects),
        ("draft", draft),
        ("solution-eks", State::solution_of(lab, "eks").objects),
    ] {
        let a = job_training_args(&objects, job);
        assert_eq!(refusal(&a).as_deref(), None, "{name}: {:?}", a.words());
    }
}
