//! Saved cluster states for verifier tests: load a folder, edit one object to break it, grade it.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trainlab::catalog::Catalog;
use trainlab::facts::Profile;
use trainlab::labs::grade_lab;
use trainlab::observe::{parse_file, Obj, Observed, SourceKind};
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Outcome, Reason, Status, Target};

/// `tests/data/<rel>`
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

pub use super::test_site::test_site;

/// A lab's parameters for a profile (`task.params.eks`), each `${site.KEY}` filled from
/// [`test_site`].
pub fn params_of(lab: &str, profile: &str) -> BTreeMap<String, String> {
    let site = test_site(profile);
    Catalog::embedded()
        .expect("embedded labs")
        .get(lab)
        .expect("a shipped lab")
        .lab
        .params(profile)
        .into_iter()
        .map(|(k, v)| {
            let v = site.render(&v, "lab.yaml").expect("lab params render");
            (k, v)
        })
        .collect()
}

/// A lab folder's files as a profile applies them, rendered with [`test_site`].
pub fn files_of(lab: &str, folder: &str, profile: &str) -> Vec<(String, String)> {
    let catalog = Catalog::embedded().expect("embedded labs");
    let b = catalog.get(lab).expect("a shipped lab");
    b.files_for(folder, profile, &test_site(profile))
        .expect("lab files render")
        .into_iter()
        .map(|(rel, text)| (b.path_of(rel), text))
        .collect()
}

/// A saved state (all objects of a folder), editable before grading.
#[derive(Clone)]
pub struct State {
    pub objects: Vec<Obj>,
    pub source: SourceKind,
    params: BTreeMap<String, String>,
}

impl State {
    /// A lab's reference solution for a profile as the learner's files (static mode):
    /// `solution/` with the profile's overlay laid over it, as `solve --profile` applies it
    /// (`LabBundle::files_for`), graded with the profile's parameters.
    pub fn solution_of(lab: &str, profile: &str) -> State {
        let objects = files_of(lab, "solution", profile)
            .into_iter()
            .flat_map(|(path, text)| {
                trainlab::observe::parse_text(&text, &path).expect("lab files parse")
            })
            .collect();
        let mut s = State {
            objects,
            source: SourceKind::Files,
            params: BTreeMap::new(),
        };
        for (k, v) in params_of(lab, profile) {
            s = s.param(&k, &v);
        }
        s
    }

    /// Loads every .yaml/.json under `tests/data/<rel>` as a snapshot.
    pub fn load(rel: &str) -> State {
        let files = trainlab::observe::manifest_files(&data(rel)).expect("test data folder");
        let objects = files
            .iter()
            .flat_map(|f| parse_file(f).expect("valid test data"))
            .collect();
        State {
            objects,
            source: SourceKind::Snapshot,
            params: BTreeMap::new(),
        }
    }

    /// The embedded demo state (`check --demo`): every lab's part and the nodes.
    pub fn demo() -> State {
        let obs = trainlab::observe::sources::demo().expect("the embedded demo loads");
        State {
            objects: obs.objects().into_iter().cloned().collect(),
            source: SourceKind::Demo,
            params: BTreeMap::new(),
        }
    }

    /// The same objects read as the learner's files (static mode).
    pub fn into_files(mut self) -> State {
        self.source = SourceKind::Files;
        self
    }

    pub fn param(mut self, k: &str, v: &str) -> State {
        self.params.insert(k.into(), v.into());
        self
    }

    /// Edits the one object of `kind` named `name` (panics when absent: the test is wrong).
    pub fn edit(mut self, kind: &str, name: &str, f: impl FnOnce(&mut Value)) -> State {
        let o = self
            .objects
            .iter_mut()
            .find(|o| o.kind() == kind && o.name() == name)
            .unwrap_or_else(|| panic!("no {kind}/{name} in the state"));
        f(o.value_mut());
        self
    }

    /// Edits every object of a kind.
    pub fn edit_all(mut self, kind: &str, mut f: impl FnMut(&mut Value)) -> State {
        for o in self.objects.iter_mut().filter(|o| o.kind() == kind) {
            f(o.value_mut());
        }
        self
    }

    /// Removes objects matching a predicate.
    pub fn remove(mut self, f: impl Fn(&Obj) -> bool) -> State {
        self.objects.retain(|o| !f(o));
        self
    }

    /// Adds an object from YAML text.
    pub fn add(mut self, yaml: &str) -> State {
        self.objects
            .extend(trainlab::observe::parse_text(yaml, "test").expect("valid yaml"));
        self
    }

    pub fn observed(&self) -> Observed {
        Observed::offline(self.source, "test state", self.objects.clone())
    }

    /// Grades `lab` with its verifier, default target `trainlab-<lab>`.
    pub fn grade(&self, lab: &str) -> LabResult {
        self.try_grade(lab).expect("grading succeeds")
    }

    pub fn try_grade(&self, lab: &str) -> Result<LabResult, trainlab::Error> {
        let catalog = Catalog::embedded().expect("embedded labs load");
        let bundle = catalog.get(lab).expect("lab exists");
        let target = Target::for_lab(&bundle.lab.id);
        grade_lab(
            bundle,
            &self.observed(),
            &target,
            &self.params,
            None::<Profile>,
        )
    }
}

/// Status of one check.
pub fn status(r: &LabResult, check: &str) -> Status {
    r.outcomes
        .iter()
        .find(|o| o.check == check)
        .unwrap_or_else(|| panic!("no outcome for {check}"))
        .status
}

/// Every check passes.
pub fn assert_all_pass(r: &LabResult) {
    let bad: Vec<String> = r
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| {
            format!(
                "{} {:?} expected={:?} found={:?} reason={:?}",
                o.check, o.status, o.expected, o.found, o.reason
            )
        })
        .collect();
    assert!(bad.is_empty(), "not all checks pass:\n{}", bad.join("\n"));
}

/// Exactly `check` fails (every other check passes), and its failure selects `hint` (None: the
/// check's default hint). Returns the failed outcome for further assertions on expected/found.
pub fn assert_only_fails(
    r: &LabResult,
    check: &str,
    hint: Option<&str>,
) -> trainlab::verify::Outcome {
    let others: Vec<String> = r
        .outcomes
        .iter()
        .filter(|o| o.check != check && o.status != Status::Pass)
        .map(|o| {
            format!(
                "{} {:?} expected={:?} found={:?} reason={:?}",
                o.check, o.status, o.expected, o.found, o.reason
            )
        })
        .collect();
    assert!(
        others.is_empty(),
        "other checks did not pass:\n{}",
        others.join("\n")
    );
    let o = r
        .outcomes
        .iter()
        .find(|o| o.check == check)
        .expect("outcome present")
        .clone();
    assert_eq!(o.status, Status::Fail, "{check} should fail: {o:?}");
    assert_eq!(o.hint.as_deref(), hint, "{check} hint variant");
    assert!(
        o.expected.is_some() && o.found.is_some(),
        "{check} carries expected and found: {o:?}"
    );
    // The rendered hint must exist in both languages (lab.yaml has the text).
    for lang in [trainlab::text::Lang::Ja, trainlab::text::Lang::En] {
        let rep = trainlab::report::LabReport::new(r, lang);
        let h = rep
            .outcomes
            .iter()
            .find(|x| x.check == check)
            .unwrap()
            .hint
            .clone()
            .unwrap();
        assert!(!h.trim().is_empty());
        assert!(
            !h.contains('{')
                || !h.contains('}')
                || !trainlab::catalog::placeholders(&h)
                    .iter()
                    .any(|p| !o.evidence.contains_key(p) && h.contains(&format!("{{{p}}}"))),
            "unfilled placeholder in hint: {h}"
        );
    }
    o
}

impl State {
    /// Adds the objects of another folder (e.g. `kind-nodes`).
    pub fn and(mut self, rel: &str) -> State {
        self.objects.extend(State::load(rel).objects);
        self
    }
}

/// Runs the real binary in `dir` against `kubeconfig` (none: a path that does not exist, so no
/// cluster is reachable): exit code, stdout, stderr.
pub fn trainlab(dir: &Path, kubeconfig: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_trainlab"));
    c.env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .current_dir(dir);
    match kubeconfig {
        Some(k) => c
            .env("KUBECONFIG", k)
            .env("TRAINLAB_CACHE_DIR", super::cache_beside(k)),
        None => c.env("KUBECONFIG", "/nonexistent"),
    };
    let out = c.args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// (check, status) of every outcome of a one-lab JSON report.
pub fn statuses(report: &str) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(report).unwrap();
    v["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["check"].as_str().unwrap().into(),
                o["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// The outcome of `check` (panics when the lab has no such check: the test is wrong).
pub fn outcome<'a>(r: &'a LabResult, check: &str) -> &'a Outcome {
    r.outcomes.iter().find(|o| o.check == check).unwrap()
}

/// The hint of `check` as the report renders it in `lang` (empty when there is none).
pub fn hint(r: &LabResult, check: &str, lang: Lang) -> String {
    let rep = LabReport::new(r, lang);
    let o = rep.outcomes.iter().find(|o| o.check == check).unwrap();
    o.hint.clone().unwrap_or_default()
}

/// The reason of `check` as the English report renders it (empty when there is none).
pub fn reason(r: &LabResult, check: &str) -> String {
    let rep = LabReport::new(r, Lang::En);
    let o = rep.outcomes.iter().find(|o| o.check == check).unwrap();
    o.reason.clone().unwrap_or_default()
}

/// The id of the lab message an outcome's reason names (panics on another reason).
pub fn message(o: &Outcome) -> &str {
    match &o.reason {
        Some(Reason::Message(id)) => id,
        other => panic!("{}: expected a lab message, got {other:?}", o.check),
    }
}

/// A Megatron-LM lab's EKS answer is what its task text says for EKS: the text (ja and en) names
/// the EKS image, script and EFA; every replica of the solution's PyTorchJob runs that image and
/// script with every EFA device of a p5.48xlarge (32, requests = limits) and a memory-backed
/// `/dev/shm`, as multi-node NCCL needs.
pub fn assert_eks_megatron_job_matches_the_task_text(lab: &str) {
    let eks = params_of(lab, "eks");
    let catalog = Catalog::embedded().expect("embedded labs");
    let task = catalog.get(lab).unwrap().lab.task.clone().unwrap();
    for text in [&task.text.ja, &task.text.en] {
        for fact in [
            eks["image"].as_str(),
            eks["script"].as_str(),
            "vpc.amazonaws.com/efa",
        ] {
            assert!(text.contains(fact), "the task text does not name {fact}");
        }
    }
    let s = State::solution_of(lab, "eks");
    let job = s.objects.iter().find(|o| o.kind() == "PyTorchJob").unwrap();
    let specs = job.value["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .unwrap();
    assert!(!specs.is_empty());
    for (role, spec) in specs {
        let pod = &spec["template"]["spec"];
        let c = &pod["containers"][0];
        assert_eq!(c["image"], Value::from(eks["image"].as_str()), "{role}");
        assert!(
            c["args"]
                .as_array()
                .unwrap()
                .contains(&Value::from(eks["script"].as_str())),
            "{role}"
        );
        let r = &c["resources"];
        assert_eq!(
            r["limits"]["vpc.amazonaws.com/efa"],
            Value::from(32),
            "{role}"
        );
        assert_eq!(
            r["requests"]["vpc.amazonaws.com/efa"],
            Value::from(32),
            "{role}"
        );
        let shm = c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["mountPath"] == "/dev/shm")
            .expect("/dev/shm mounted");
        let vol = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == shm["name"])
            .unwrap();
        assert_eq!(vol["emptyDir"]["medium"], "Memory", "{role}");
    }
}

/// Labs 1 and 2 split layers with Megatron-LM (TP > 1): their answers set
/// `CUDA_DEVICE_MAX_CONNECTIONS=1`, and a job without it, or with another value, still passes
/// every check but is advised (the GPU the pods get decides whether Megatron-LM refuses it, which a
/// manifest does not show); with TP 1 nothing is advised.
pub fn assert_max_connections_is_advice_when_layers_split(lab: &str, solved: State) {
    const VAR: &str = "CUDA_DEVICE_MAX_CONNECTIONS";
    let advice_ids = |r: &LabResult| -> Vec<String> {
        r.advice
            .iter()
            .map(|a| a.id.clone())
            .filter(|id| id.starts_with("max-connections"))
            .collect()
    };
    let with_env = |s: State, value: Option<&'static str>| {
        s.edit_all("PyTorchJob", |job| {
            for spec in job["spec"]["pytorchReplicaSpecs"]
                .as_object_mut()
                .unwrap()
                .values_mut()
            {
                let env = spec["template"]["spec"]["containers"][0]["env"]
                    .as_array_mut()
                    .unwrap();
                env.retain(|e| e["name"] != VAR);
                if let Some(v) = value {
                    env.push(serde_json::json!({"name": VAR, "value": v}));
                }
            }
        })
    };
    for profile in ["kind", "eks"] {
        let r = State::solution_of(lab, profile).grade(lab);
        assert!(advice_ids(&r).is_empty(), "{profile}: {:?}", r.advice);
    }
    let r = solved.clone().grade(lab);
    assert!(advice_ids(&r).is_empty(), "{:?}", r.advice);

    let r = with_env(solved.clone(), None).grade(lab);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["max-connections-unset"]);
    let a = r
        .advice
        .iter()
        .find(|a| a.id == "max-connections-unset")
        .unwrap();
    assert!(["Master", "Worker"].contains(&a.evidence["role"].as_str()));
    assert!(a.evidence["model"].starts_with("TP "), "{:?}", a.evidence);
    let text = r.lab.advice["max-connections-unset"].render(Lang::En, &a.evidence);
    assert!(!text.contains('{'), "{text}");
    assert!(
        text.contains("CUDA_DEVICE_MAX_CONNECTIONS: \"1\""),
        "{text}"
    );

    let r = with_env(solved.clone(), Some("0")).grade(lab);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["max-connections"]);
    let a = r.advice.iter().find(|a| a.id == "max-connections").unwrap();
    assert_eq!(a.evidence["found"], "0");

    // TP 1: no layer is split, so the variable does not matter (tp-set says what is wrong).
    let tp1 = with_env(solved, None).edit_all("PyTorchJob", |job| {
        for spec in job["spec"]["pytorchReplicaSpecs"]
            .as_object_mut()
            .unwrap()
            .values_mut()
        {
            for w in spec["template"]["spec"]["containers"][0]["args"]
                .as_array_mut()
                .unwrap()
            {
                if w.as_str()
                    .is_some_and(|s| s.starts_with("--tensor-model-parallel-size"))
                {
                    *w = serde_json::json!("--tensor-model-parallel-size=1");
                }
            }
        }
    });
    assert!(advice_ids(&tp1.grade(lab)).is_empty());
}

/// One of EKS Auto Mode's built-in NodePools (`system`, `general-purpose`): every zone, Auto
/// Mode's own NodeClass and labels, as the cluster creates them (labs 5 and 15 must leave them
/// alone).
pub fn auto_mode_built_in_pool(name: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: eks.amazonaws.com, kind: NodeClass, name: default}}\n      requirements:\n      - {{key: eks.amazonaws.com/instance-category, operator: In, values: [c, m, r]}}\n      - {{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}}\n"
    )
}
