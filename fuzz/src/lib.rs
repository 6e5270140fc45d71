//! Entry points of trainlab's fuzz targets: one function per parser of untrusted input, each
//! taking the fuzzer's bytes and checking the property of issue 15 — no panic, no hang, and bad
//! input comes back as a typed error that names where it is, never as a grade.
//!
//! `fuzz/fuzz_targets/<name>.rs` calls [`run`] with its name; `tests/it/fuzz_regressions.rs`
//! includes this file by path and replays every saved input under `tests/data/fuzz/<name>/`
//! through the same function, so a fixed finding stays fixed on the stable toolchain. This file
//! may therefore use only crates trainlab itself depends on.
//!
//! A property violation panics (the fuzzer records the input); a rejected input is
//! [`Verdict::Rejected`] with the message a user would see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use k8s_openapi::api::core::v1::{Container, EnvVar};
use serde_json::{json, Value};
use trainlab::catalog::{Catalog, LabBundle};
use trainlab::facts::Profile;
use trainlab::observe::{sources, InputError, Obj, Observed, Query};
use trainlab::quantity::{Quantity, MAX_UNITS};
use trainlab::text::Lang;
use trainlab::verify::kit::cmdline::{
    self as cl, Args, DsConfig, LauncherCommand, Mpirun, ShellVar,
};
use trainlab::verify::{self, Status, Target};

/// What the parser made of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Read (and, for the grading targets, graded) without complaint.
    Accepted,
    /// Refused with a typed error; the text is what the user sees.
    Rejected(String),
    /// Outside what the target reads (not UTF-8 text): the fuzzer drops it from the corpus.
    Ignored,
}

/// A target's entry point.
pub type Entry = fn(&[u8]) -> Verdict;

/// Every target: its name (the file in `fuzz/fuzz_targets/` and the folders of its corpus and
/// saved inputs) and its entry point.
pub const TARGETS: &[(&str, Entry)] = &[
    ("catalog", catalog),
    ("catalog_mutate", catalog_mutate),
    ("observe", observe),
    ("quantity", quantity),
    ("shell", shell),
    ("argv", argv),
    ("ds_config", ds_config),
    ("selector", selector),
    ("kubeconfig", kubeconfig),
    ("judge", judge),
    ("judge_mutate", judge_mutate),
];

/// Runs the target `name` on `data` (panics on an unknown name: a wrong target file).
pub fn run(name: &str, data: &[u8]) -> Verdict {
    let (_, f) = TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no fuzz target `{name}`"));
    f(data)
}

/// The repository root (this file is compiled from `fuzz/` and from the main package).
fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    if here.ends_with("fuzz") {
        here.parent().unwrap_or(here).to_path_buf()
    } else {
        here.to_path_buf()
    }
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Splits off a leading mode byte.
fn mode(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((m, rest)) => (*m, rest),
        None => (0, data),
    }
}

fn reject(e: impl std::fmt::Display) -> Verdict {
    let msg = e.to_string();
    assert!(!msg.trim().is_empty(), "an error with no message");
    Verdict::Rejected(msg)
}

// ---------------------------------------------------------------------------------------------
// Lab files: loading, validation, lint, texts.

/// A `lab.yaml`: parsed, validated as a lab folder with a solution manifest, linted against the
/// registered verifier of its id, and every text rendered in both languages.
pub fn catalog(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    const FILE: &str = "fuzz/lab.yaml";
    let lab = match trainlab::catalog::parse_lab(text, FILE) {
        Ok(lab) => lab,
        Err(e) => {
            assert_eq!(e.file, FILE, "a lab error names its file");
            return reject(e);
        }
    };
    // The files validation looks for: a solution manifest and the draft the lab names.
    let mut files = BTreeMap::new();
    files.insert("lab.yaml".to_string(), text.to_string());
    files.insert(
        "solution/job.yaml".to_string(),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n".to_string(),
    );
    if let Some(d) = lab.task.as_ref().and_then(|t| t.draft.clone()) {
        files.entry(d).or_insert_with(String::new);
    }
    let folder = lab.folder_name();
    let catalog = match Catalog::from_raw(vec![(folder, files)], "fuzz") {
        Ok(c) => c,
        Err(e) => {
            assert!(e.file.starts_with("fuzz/"), "{e}");
            return reject(e);
        }
    };
    for b in &catalog.labs {
        let _ = verify::lint_lab(b, trainlab::labs::verifier_for(&b.lab.id));
        render_lab(b);
        grade_demo(b);
    }
    Verdict::Accepted
}

/// A lab author's lab (`--labs-dir`) with the id of a registered verifier, graded on the
/// embedded demo state for two learners: its weights and texts go through the score, the
/// reports and the room's scoreboard.
fn grade_demo(b: &LabBundle) {
    static DEMO: OnceLock<trainlab::observe::Observed> = OnceLock::new();
    if trainlab::labs::verifier_for(&b.lab.id).is_none() {
        return;
    }
    let demo = DEMO.get_or_init(|| sources::demo().expect("the embedded demo state"));
    let target = Target::for_lab(&b.lab.id);
    let Ok(r) = trainlab::labs::grade_lab(b, demo, &target, &BTreeMap::new(), None) else {
        return;
    };
    let score = r.score();
    assert!(score.passed_weight <= score.counted_weight, "{score:?}");
    let reports: Vec<_> = [Lang::Ja, Lang::En]
        .into_iter()
        .map(|l| trainlab::report::LabReport::new(&r, l))
        .collect();
    let _ = trainlab::report::render(&reports, trainlab::report::Format::Json, false);
    let learner = |name: &str| {
        trainlab::results::room::LearnerResult::new(name.into(), None, Ok(vec![r.clone()]))
            .expect("a judged result packs")
    };
    // A room keeps results packed; what it reads back is what was judged.
    let back = learner("alice").labs().expect("a packed result reads back");
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].outcomes, r.outcomes);
    assert_eq!(back[0].advice, r.advice);
    assert_eq!(back[0].target, r.target);
    let room = trainlab::results::room::RoomResult {
        labs: vec![b.lab.clone()],
        learners: vec![learner("alice"), learner("bob")],
        source: trainlab::observe::SourceKind::Demo,
        source_detail: "demo".into(),
        template: None,
        notes: Vec::new(),
        graded_at: std::time::SystemTime::UNIX_EPOCH,
    };
    let board = trainlab::report::Scoreboard::new(&room, Lang::En);
    assert!(board.score.passed_weight <= board.score.counted_weight);
    let _ = trainlab::report::room::render(
        &board,
        trainlab::report::room::RoomFormat::Table,
        Some(100),
    );
}

/// Structure-aware lab files: a shipped lab (as JSON, which YAML reads) edited by the fuzzer's
/// bytes as [`judge_mutate`] edits objects, then read as [`catalog`] reads a lab file. Bytes: the
/// lab (two), then edits until the input ends.
pub fn catalog_mutate(data: &[u8]) -> Verdict {
    static LABS: OnceLock<Vec<State>> = OnceLock::new();
    let labs = LABS.get_or_init(|| {
        embedded()
            .labs
            .iter()
            .map(|b| {
                let v = serde_json::to_value(&*b.lab).expect("a lab serializes");
                let mut strings = Vec::new();
                collect_strings(&v, &mut strings);
                strings.sort();
                strings.dedup();
                State {
                    objects: vec![v],
                    strings,
                }
            })
            .collect()
    });
    let mut bytes = Bytes(data);
    let lab = &labs[bytes.below(labs.len())];
    let mut v = lab.objects[0].clone();
    for _ in 0..16 {
        if bytes.0.is_empty() {
            break;
        }
        edit(&mut v, &mut bytes, &lab.strings);
    }
    catalog(v.to_string().as_bytes())
}

/// Every text of a lab, in both languages, with each profile's parameters.
fn render_lab(b: &LabBundle) {
    let lab = &b.lab;
    for lang in [Lang::Ja, Lang::En] {
        for profile in trainlab::catalog::PROFILES {
            let params = lab.params(profile);
            let mut texts = vec![&lab.title, &lab.quiz.question, &lab.quiz.explanation];
            texts.extend(lab.task.as_ref().map(|t| &t.text));
            texts.extend(lab.missing.as_ref());
            texts.extend(lab.advice.values().chain(lab.messages.values()));
            for c in &lab.checks {
                texts.extend([&c.title, &c.hint]);
                texts.extend(c.hints.values());
                let _ = lab.hint_text(c, Some("missing"));
            }
            for t in texts {
                let _ = trainlab::catalog::placeholders(t.get(lang));
                let _ = t.render(lang, &params);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Manifests and snapshots.

const INPUT: &str = "fuzz-input.yaml";

/// One file's text read into objects: Lists, multi-document YAML, JSON. Then duplicates are
/// resolved, every kind is listed from the result, and the objects are saved as `trainlab
/// snapshot` saves them and read back, which must give the same objects.
pub fn observe(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    let objects = match trainlab::observe::parse_text(text, INPUT) {
        Ok(o) => o,
        Err(e) => return input_error(e),
    };
    for o in &objects {
        assert!(o.value.is_object(), "an object that is not a mapping");
        assert!(o.origin.to_string().starts_with(INPUT), "{}", o.origin);
        let _ = (o.kind(), o.name(), o.namespace(), o.uid(), o.display_name());
    }
    let objects = match sources::dedupe(objects) {
        Ok(o) => o,
        Err(e) => return input_error(e),
    };
    let namespace = objects
        .iter()
        .find_map(|o| o.namespace())
        .unwrap_or("default")
        .to_string();
    // A selector made of the first object's labels, as a verifier declares one.
    let selector = objects
        .first()
        .and_then(|o| o.value["metadata"]["labels"].as_object())
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        });
    for source in [
        trainlab::observe::SourceKind::Snapshot,
        trainlab::observe::SourceKind::Files,
    ] {
        let obs = Observed::offline(source, "fuzz", objects.clone());
        for &kind in trainlab::observe::kinds::ALL {
            let mut q = if kind.namespaced {
                Query::new(kind, &namespace)
            } else {
                Query::cluster(kind)
            };
            if let Some(s) = &selector {
                q = q.with_selector(s);
            }
            let _ = q.describe();
            if let Ok(found) = obs.list(&q) {
                // Saved as `trainlab snapshot` saves a read, read back as a snapshot reads it.
                let owned: Vec<Obj> = found.into_iter().cloned().collect();
                let saved = trainlab::observe::save::to_list_json(&q, &owned);
                let back = trainlab::observe::parse_text(&saved, "saved.json")
                    .unwrap_or_else(|e| panic!("a saved read does not read back: {e}\n{saved}"));
                assert_eq!(back.len(), owned.len(), "objects lost saving\n{saved}");
                for (a, b) in owned.iter().zip(&back) {
                    let mut a = a.value.as_ref().clone();
                    if let Some(m) = a.get_mut("metadata").and_then(Value::as_object_mut) {
                        m.remove("managedFields");
                    }
                    assert!(
                        same_json(&a, &b.value),
                        "{a}\nsaved and read back as\n{}",
                        b.value
                    );
                }
            }
        }
    }
    Verdict::Accepted
}

/// JSON equality, with floats equal to the last few bits (serde_json reads floats fast, not
/// always to the nearest bit).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x == y || (x - y).abs() <= x.abs().max(y.abs()) * 1e-15
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn input_error(e: InputError) -> Verdict {
    let shown = e.to_string();
    match &e {
        InputError::Param { .. } => {}
        _ => assert!(
            shown.contains(INPUT) || shown.contains("fuzz"),
            "an input error that does not name the input: {shown}"
        ),
    }
    assert_eq!(
        trainlab::Error::from(e).exit_code(),
        trainlab::ExitCode::BadInput
    );
    reject(shown)
}

// ---------------------------------------------------------------------------------------------
// Quantities.

/// Two quantities (split at the first NUL): each read, then its accessors and the arithmetic
/// trainlab does on resources, with the invariants exact arithmetic promises.
pub fn quantity(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    let (a, b) = text.split_once('\0').unwrap_or((text, "1"));
    let qa = match Quantity::parse(a) {
        Ok(q) => q,
        Err(e) => return reject(e),
    };
    one_quantity(&qa);
    let Ok(qb) = Quantity::parse(b) else {
        return Verdict::Accepted;
    };
    one_quantity(&qb);
    assert_eq!(qa == qb, qa.nanos() == qb.nanos());
    match (qa.checked_add(&qb), qb.checked_add(&qa)) {
        (Ok(x), Ok(y)) => {
            assert_eq!(x, y, "addition is commutative");
            assert_eq!(x.nanos(), qa.nanos() + qb.nanos());
            assert_eq!(
                x.checked_sub(&qb).ok().as_ref(),
                Some(&qa),
                "{a} + {b} - {b}"
            );
            let sum = Quantity::checked_sum([&qa, &qb]).expect("the same sum");
            assert_eq!(sum, x);
        }
        (Err(_), Err(_)) => {}
        (x, y) => panic!("{a} + {b}: {x:?}, but {b} + {a}: {y:?}"),
    }
    if let Ok(n) = qb.count() {
        match qa.checked_mul(n) {
            Ok(p) => assert_eq!(Some(p.nanos()), qa.nanos().checked_mul(i128::from(n))),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    let max = qa.clone().max_of(qb.clone());
    assert!(max >= qa && max >= qb);
    Verdict::Accepted
}

fn one_quantity(q: &Quantity) {
    const NANO: i128 = 1_000_000_000;
    assert!(q.nanos().unsigned_abs() <= MAX_UNITS as u128 * NANO as u128);
    // The canonical form of the value reads back as the same value.
    let canonical = q.checked_add(&Quantity::zero()).expect("in range");
    let back = Quantity::parse(canonical.as_str())
        .unwrap_or_else(|e| panic!("canonical `{canonical}` of `{q}` does not read: {e}"));
    assert_eq!(back.nanos(), q.nanos(), "`{q}` → `{canonical}`");
    let v = q.value();
    assert!(
        i128::from(v) * NANO >= q.nanos() || q.is_negative(),
        "value rounds away from 0"
    );
    assert_eq!(q.bytes(), v);
    match q.count() {
        Ok(n) => {
            assert!(q.is_whole());
            assert_eq!(Quantity::from_count(n), *q);
            assert_eq!(n, v);
        }
        Err(_) => assert!(!q.is_whole()),
    }
    if let Ok(m) = q.millis() {
        let back = Quantity::from_millis(m);
        assert!((back.nanos() - q.nanos()).abs() < 1_000_000, "{q} ≈ {m}m");
    }
    for n in [0, 1, 2, -1, 3] {
        if let Ok(p) = q.checked_mul(n) {
            assert_eq!(p.nanos(), q.nanos() * i128::from(n));
        }
    }
    let _ = (
        q.is_zero(),
        q.to_string(),
        q.clone().max_of(Quantity::zero()),
    );
}

// ---------------------------------------------------------------------------------------------
// Command lines.

/// A container's command line: the bytes are a shell script run as `sh -c SCRIPT` by a container
/// with a literal environment, and as a script file of its own. Every command found is then read
/// by the launcher and framework parsers, as the verifiers read it.
pub fn shell(data: &[u8]) -> Verdict {
    let Some(script) = text(data) else {
        return Verdict::Ignored;
    };
    let env = [
        ("NNODES", "2"),
        ("GPUS", "8"),
        ("MASTER_ADDR", "$(POD_IP)"),
        ("ARGS", "--nnodes $NNODES --nproc-per-node $(GPUS)"),
        ("POD_IP", ""),
    ];
    let c = Container {
        name: "trainer".into(),
        command: Some(vec!["/bin/bash".into(), "-lc".into()]),
        args: Some(vec![script.to_string()]),
        env: Some(
            env.iter()
                .map(|(n, v)| EnvVar {
                    name: n.to_string(),
                    value: Some(v.to_string()),
                    value_from: None,
                })
                .collect(),
        ),
        ..Default::default()
    };
    let _ = cl::command_line(&c, 40);
    let absent = |_: &str, _: &str| cl::EnvLookup::Absent;
    for (n, _) in env {
        let _ = cl::container_env(&c, n, &absent);
    }
    let from_container = cl::invocations(&c);
    let vars: BTreeMap<String, ShellVar> = env
        .iter()
        .map(|(n, v)| {
            let var = ShellVar {
                value: v.to_string(),
                array: None,
                exported: true,
            };
            (n.to_string(), var)
        })
        .collect();
    let from_script = cl::split_script(script, "fuzz.sh", &vars);
    let mut first_error = None;
    for r in [from_container, from_script] {
        match r {
            Ok(invocations) => {
                for (i, inv) in invocations.iter().enumerate() {
                    assert!(inv.depth <= cl::MAX_SHELL_DEPTH + 1, "depth {}", inv.depth);
                    assert!(inv.line >= 1);
                    let _ = (inv.program(), inv.program_name(), inv.environment());
                    let _ = (inv.env("NNODES"), inv.display());
                    for w in &inv.argv {
                        let _ = inv.resolve(w);
                    }
                    // The launcher and framework parsers on the first commands only: a long
                    // script would spend the run on the `argv` target's work.
                    if i < 8 {
                        read_argv(&inv.expanded);
                    }
                }
            }
            Err(e) => {
                let shown = e.to_string();
                assert!(
                    shown.contains("trainer") || shown.contains("fuzz.sh"),
                    "a shell error that does not name the container: {shown}"
                );
                first_error.get_or_insert(shown);
            }
        }
    }
    match first_error {
        Some(e) => reject(e),
        None => Verdict::Accepted,
    }
}

/// An argv (words separated by NUL bytes) read by every launcher and framework parser.
pub fn argv(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    let words: Vec<String> = text.split('\0').map(str::to_string).collect();
    read_argv(&words);
    Verdict::Accepted
}

/// Flag names the labs look up, plus every flag the argv itself spells.
const FLAGS: &[&str] = &[
    "--nnodes",
    "--nproc-per-node",
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--bf16",
    "--fp16",
    "--gradient_checkpointing",
    "--deepspeed",
    "--np",
    "-np",
    "-n",
    "--recompute-granularity",
    "--save_steps",
];

fn read_argv(words: &[String]) {
    let a = Args::new(words.iter().cloned());
    let own: Vec<&str> = words
        .iter()
        .filter(|w| w.starts_with('-'))
        .map(|w| w.split('=').next().unwrap_or(w))
        .take(8)
        .collect();
    for name in FLAGS.iter().copied().chain(own) {
        let names = [name];
        let _ = (a.flags(&names), a.last(&names), a.has(&names));
        let _ = (a.value(&names), a.values(&names));
        let _ = (a.int(&names), a.float(&names), a.string(&names));
        let _ = (
            a.switch(&names),
            a.hf_bool(&names, true),
            a.lenient_bool(&names),
        );
        let _ = a.choice(&names, &["full", "selective"]);
        if let Ok(Some(s)) = a.int(&names) {
            let _ = (s.known(), s.as_written());
        }
    }
    let _ = cl::deepspeed_config_arg(&a);
    words.iter().for_each(|w| {
        let _ = cl::is_var_ref(w);
    });

    // Launchers, outermost first, each with the accessors verifiers call.
    let chain = LauncherCommand::chain(words);
    assert!(chain.len() <= 8, "launcher chain of {}", chain.len());
    let _ = LauncherCommand::training_entry(words);
    for l in &chain {
        let _ = l.entry();
        match l {
            LauncherCommand::Torchrun(t) => {
                let t = t
                    .clone()
                    .with_env([("PET_NNODES", "2"), ("PET_NPROC_PER_NODE", "gpu")]);
                let _ = (
                    t.nnodes(),
                    t.nproc_per_node(),
                    t.node_rank(),
                    t.master_addr(),
                );
                let _ = (
                    t.master_port(),
                    t.rdzv_backend(),
                    t.rdzv_endpoint(),
                    t.rdzv_id(),
                );
                let _ = (t.rdzv_conf(), t.max_restarts(), t.standalone());
                if let Ok(Some(n)) = t.nnodes() {
                    if let Some(n) = n.known() {
                        assert!(n.min <= n.max, "--nnodes {n:?}");
                    }
                }
            }
            LauncherCommand::Mpi(m) => read_mpirun(m),
            LauncherCommand::DeepSpeed(d) => {
                let _ = (
                    d.num_gpus(),
                    d.num_nodes(),
                    d.hostfile(),
                    d.multinode_launcher(),
                );
            }
            LauncherCommand::Accelerate(x) => {
                let _ = (x.num_processes(), x.num_machines(), x.machine_rank());
                let _ = (x.mixed_precision(), x.config_file(), x.uses_deepspeed());
                let _ = x.deepspeed_config_file();
            }
            LauncherCommand::OptimumCli(o) => {
                let _ = (o.is_neuron(), o.tensor_parallel_size());
            }
            LauncherCommand::Python(_) => {}
        }
    }
    if let Some(m) = Mpirun::find(words) {
        read_mpirun(&m);
    }

    // The frameworks, on the script's arguments and on the whole argv.
    let script_args = LauncherCommand::training_entry(words).map(|e| e.args);
    for argv in [Some(words.to_vec()), script_args].into_iter().flatten() {
        if let Ok(m) = cl::MegatronArgs::from_argv(&argv) {
            let _ = (m.is_empty(), m.effective_recompute());
        }
        if let Ok(n) = cl::NemoArgs::from_argv(&argv) {
            let _ = n.is_empty();
        }
        let o = cl::Overrides::parse(&argv);
        let _ = (o.get("trainer.devices"), o.all("trainer.precision").count());
        let _ = o.int(&["trainer.num_nodes", "model.tensor_model_parallel_size"]);
        if let Ok(h) = cl::HfTrainingArgs::from_argv(&argv) {
            let _ = h.checkpointing();
            if let Some(json) = h.deepspeed_inline_json() {
                let _ = read_ds_config(json);
            }
        }
        if let Ok(mut plan) = cl::ParallelPlan::from_argv(&argv) {
            if let Ok(ds) =
                DsConfig::parse(r#"{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}"#)
            {
                plan.add_deepspeed(&ds, "ds.json");
            }
            let _ = format!("{plan:?}");
        }
    }
}

fn read_mpirun(m: &Mpirun) {
    let _ = (m.np_raw(), m.np(), m.per_node(), m.hosts(), m.hostfile());
    let _ = (m.exports(), m.export("NCCL_DEBUG"), m.allow_run_as_root());
    let _ = (
        m.bind_to(),
        m.map_by(),
        m.mca(),
        m.has(&["-x"]),
        m.option(&["-np"]),
    );
    let _ = m.options_named(&["-x", "--mca"]);
    if let Ok(hosts) = m.hosts() {
        let _ = format!("{hosts:?}");
    }
}

/// A DeepSpeed config file's text.
pub fn ds_config(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    read_ds_config(text)
}

fn read_ds_config(text: &str) -> Verdict {
    match DsConfig::parse(text) {
        Ok(ds) => {
            assert!(
                ds.effective_stage() <= 3,
                "ZeRO stage {}",
                ds.effective_stage()
            );
            let _ = (ds.bf16_enabled(), ds.fp16_enabled(), ds.bf16_path());
            let mut plan = cl::ParallelPlan::from_argv(&[]).expect("an empty argv");
            plan.add_deepspeed(&ds, "ds.json");
            let _ = format!("{ds:?}{plan:?}");
            Verdict::Accepted
        }
        Err(e) => reject(e),
    }
}

// ---------------------------------------------------------------------------------------------
// Selectors and room names (instructors' command-line input).

/// A label selector (`kubectl -l` form, kit and observe readers), a namespace template and a
/// list of learner names, split at NUL bytes.
pub fn selector(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    let mut parts = text.splitn(3, '\0');
    let sel = parts.next().unwrap_or_default();
    let template = parts.next();
    let learners = parts.next();
    let labels: BTreeMap<String, String> = [("app", "trainer"), ("role", "worker")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let _ = trainlab::observe::Selector::parse(sel).matches_labels(&labels);
    let mut verdict = Verdict::Accepted;
    match verify::kit::k8s::selector::parse(sel) {
        Ok(s) if s.is_everything() => assert!(s.matches(&labels)),
        Ok(s) => {
            // The string form reads back as the same selector (`(everything)` aside).
            let shown = s.to_string();
            let again = verify::kit::k8s::selector::parse(&shown)
                .unwrap_or_else(|e| panic!("`{sel}` shown as `{shown}` does not read: {e}"));
            assert_eq!(
                again.matches(&labels),
                s.matches(&labels),
                "`{sel}` vs `{shown}`"
            );
            let _ = (s.requirements().len(), s.is_everything(), s.is_nothing());
        }
        Err(e) => verdict = reject(e),
    }
    if let Some(t) = template {
        match trainlab::grade::Template::parse(t) {
            Ok(t) => {
                let ns = t.namespace("alice", "volcano-gang");
                if trainlab::grade::is_dns_label(&ns) {
                    assert_eq!(
                        t.learner_of(&ns, "volcano-gang").as_deref(),
                        Some("alice"),
                        "template {} made {ns}",
                        t.as_str()
                    );
                }
            }
            Err(e) => verdict = reject(e),
        }
    }
    if let Some(l) = learners {
        if let Err(e) = trainlab::grade::parse_learners(&[l.to_string()]) {
            verdict = reject(e);
        }
    }
    verdict
}

// ---------------------------------------------------------------------------------------------
// Kubeconfig.

/// A kubeconfig as `--kubeconfig`/`$KUBECONFIG` give it. kube-client parses it; trainlab merges
/// files and picks the profile from the context name. Never connects, never runs exec plugins.
pub fn kubeconfig(data: &[u8]) -> Verdict {
    let Some(text) = text(data) else {
        return Verdict::Ignored;
    };
    match kube::config::Kubeconfig::from_yaml(text) {
        Ok(kc) => {
            if let Some(c) = &kc.current_context {
                let _ = Profile::from_context_name(c);
            }
            for c in &kc.contexts {
                let _ = Profile::from_context_name(&c.name);
            }
            let _ = kc.clone().merge(kc);
            Verdict::Accepted
        }
        Err(e) => reject(e),
    }
}

// ---------------------------------------------------------------------------------------------
// Grading.

fn embedded() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().expect("the embedded labs load"))
}

/// A folder of this thread for the input file, so the real `--files`/`--snapshot` sources read
/// it (extensions, Lists and duplicates handled as for a user). Removed when the thread ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch() -> PathBuf {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static DIR: Scratch = {
            let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let d = std::env::temp_dir()
                .join(format!("trainlab-fuzz-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&d).expect("a scratch folder");
            Scratch(d)
        };
    }
    DIR.with(|d| d.0.clone())
}

/// One file's text as the learner's files or as a snapshot folder (`mode` bit 0), with the
/// profile detected, kind or eks (bits 1-2), named `.yaml` or `.json` (bit 3), graded for every
/// gradable lab and rendered in both languages as human text, JSON or JUnit (bits 4-5), in
/// colour or not (bit 6).
fn grade_text(mode: u8, text: &str, overrides: &BTreeMap<String, String>) -> Verdict {
    let snapshot = mode & 1 == 1;
    let profile = match (mode >> 1) % 3 {
        0 => None,
        1 => Some(Profile::Kind),
        _ => Some(Profile::Eks),
    };
    let dir = &scratch();
    let file = dir.join(if mode & 8 == 0 {
        INPUT
    } else {
        "fuzz-input.json"
    });
    let _ = std::fs::remove_file(dir.join(INPUT));
    let _ = std::fs::remove_file(dir.join("fuzz-input.json"));
    std::fs::write(&file, text).expect("the scratch file");
    let obs = if snapshot {
        sources::snapshot(dir)
    } else {
        sources::files(std::slice::from_ref(&file))
    };
    let obs = match obs {
        Ok(o) => o,
        Err(e) => return input_error(e),
    };
    let mut first_error = None;
    for bundle in embedded().labs.iter().filter(|b| b.lab.is_gradable()) {
        let target = Target::for_lab(&bundle.lab.id);
        let graded = trainlab::labs::grade_lab(bundle, &obs, &target, overrides, profile);
        // Grading is a pure function of what was observed: the same input, the same result
        // (no hash-map order leaking into outcomes, evidence or advice).
        let again = trainlab::labs::grade_lab(bundle, &obs, &target, overrides, profile);
        match (&graded, &again) {
            (Ok(a), Ok(b)) => assert_eq!(
                format!("{:?}{:?}", a.outcomes, a.advice),
                format!("{:?}{:?}", b.outcomes, b.advice),
                "{}: two gradings of one input differ",
                bundle.lab.id
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("{}: graded once, refused once", bundle.lab.id),
        }
        match graded {
            Ok(r) => {
                let ids: Vec<&str> = r.outcomes.iter().map(|o| o.check.as_str()).collect();
                let want: Vec<&str> = bundle.lab.checks.iter().map(|c| c.id.as_str()).collect();
                assert_eq!(ids, want, "one outcome per check, in lab.yaml order");
                for o in &r.outcomes {
                    if let Some(verify::Reason::Unavailable(u)) = &o.reason {
                        let shown = format!("{u:?}");
                        assert!(!shown.contains("internal:"), "{}: {shown}", bundle.lab.id);
                    }
                    if snapshot {
                        continue;
                    }
                    let stage = bundle.lab.check(&o.check).map(|c| c.stage);
                    if stage == Some(trainlab::catalog::Stage::State) {
                        assert_eq!(o.status, Status::Skipped, "a state check graded from files");
                    }
                }
                let _ = r.score();
                let reports: Vec<_> = [Lang::Ja, Lang::En]
                    .into_iter()
                    .map(|l| trainlab::report::LabReport::new(&r, l))
                    .collect();
                // One output format per run (bits 4-5), each in both languages.
                let format = match (mode >> 4) % 3 {
                    0 => trainlab::report::Format::Human,
                    1 => trainlab::report::Format::Json,
                    _ => trainlab::report::Format::Junit,
                };
                let _ = trainlab::report::render(&reports, format, mode & 64 != 0);
            }
            Err(e) => {
                assert_eq!(
                    e.exit_code(),
                    trainlab::ExitCode::BadInput,
                    "{}: offline grading failed with {e:?}",
                    bundle.lab.id
                );
                let shown = e.to_string();
                if let trainlab::Error::Input(i) = &e {
                    if !matches!(i, InputError::Param { .. }) {
                        assert!(
                            shown.contains("fuzz-input"),
                            "{}: an input error that does not name the file: {shown}",
                            bundle.lab.id
                        );
                    }
                }
                first_error.get_or_insert(shown);
            }
        }
    }
    match first_error {
        Some(e) => reject(e),
        None => Verdict::Accepted,
    }
}

/// A file of Kubernetes objects, graded by every gradable lab (mode byte first, see
/// [`grade_text`]).
pub fn judge(data: &[u8]) -> Verdict {
    let (m, rest) = mode(data);
    match text(rest) {
        Some(t) => grade_text(m, t, &BTreeMap::new()),
        None => Verdict::Ignored,
    }
}

/// Structure-aware grading: a saved state of the test suite (every folder of objects under
/// `tests/data/` and each lab's `solution/`, `starter/` and `draft/`) edited by the fuzzer's
/// bytes — values replaced, fields added or removed, objects dropped or copied — then written
/// as one JSON List file and graded as [`judge`] grades it, sometimes with a `--param`. Edits
/// keep most of the state well-formed, so the verifiers get far past the parser.
///
/// Bytes: the state (two), the mode of [`grade_text`] (one; bit 7 adds a `--param`), then edits
/// until the input ends.
pub fn judge_mutate(data: &[u8]) -> Verdict {
    let mut bytes = Bytes(data);
    let states = states();
    let state = &states[bytes.below(states.len())];
    let m = bytes.byte();
    // Mode bit 7: a `--param NAME=VALUE` too, chosen by the input's last two bytes.
    let mut overrides = BTreeMap::new();
    if let [.., name, value] = data {
        if m & 128 != 0 {
            let names = param_names();
            let name = &names[usize::from(*name) % names.len()];
            let value = match value % 2 {
                0 => STRINGS[usize::from(value / 2) % STRINGS.len()].to_string(),
                _ => NUMBERS[usize::from(value / 2) % NUMBERS.len()].to_string(),
            };
            overrides.insert(name.clone(), value);
        }
    }
    let mut objects: Vec<Value> = state.objects.clone();
    let dictionary = &state.strings;
    for _ in 0..24 {
        if bytes.0.is_empty() || objects.is_empty() {
            break;
        }
        let i = bytes.below(objects.len());
        match bytes.byte() % 4 {
            0 if bytes.byte() % 8 == 0 => {
                objects.remove(i);
            }
            1 if bytes.byte() % 8 == 0 => {
                // A copy: the same identity twice, or a second object under a new name.
                let mut copy = objects[i].clone();
                let renamed = bytes.byte() % 2 == 0;
                if let Some(m) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
                    if renamed {
                        m.insert("name".into(), json!(format!("copy-{i}")));
                        m.remove("uid");
                    }
                }
                objects.push(copy);
            }
            _ => edit(&mut objects[i], &mut bytes, dictionary),
        }
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    grade_text(m | 8, &list.to_string(), &overrides)
}

/// Every parameter name of the gradable labs (`gpu_nodes`, `efa_per_node`, …).
fn param_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v: Vec<String> = embedded()
            .labs
            .iter()
            .flat_map(|b| trainlab::catalog::PROFILES.iter().map(|p| b.lab.params(p)))
            .flat_map(|p| p.into_keys())
            .collect();
        v.sort();
        v.dedup();
        if v.is_empty() {
            v.push("gpu_nodes".into());
        }
        v
    })
}

/// A saved state: its objects and every string in them (keys and values), the edits'
/// dictionary.
struct State {
    objects: Vec<Value>,
    strings: Vec<String>,
}

fn states() -> &'static [State] {
    static STATES: OnceLock<Vec<State>> = OnceLock::new();
    STATES.get_or_init(|| {
        let root = repo_root();
        let mut folders = Vec::new();
        let data = root.join("tests/data");
        for lab in sorted_dirs(&data) {
            let name = lab
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if matches!(name.as_str(), "fuzz" | "pins" | "setup" | "sources") {
                continue;
            }
            folders.push(lab.clone());
            folders.extend(sorted_dirs(&lab));
        }
        for lab in sorted_dirs(&root.join("labs")) {
            for sub in ["solution", "starter", "draft"] {
                folders.push(lab.join(sub));
            }
        }
        let nodes = read_folder(&data.join("kind-nodes"));
        let mut out = Vec::new();
        for f in folders {
            let mut objects = read_folder(&f);
            if objects.is_empty() {
                continue;
            }
            // A state without nodes gets the kind cluster's, as the verifier tests add them.
            if !objects.iter().any(|o| o["kind"] == "Node") {
                objects.extend(nodes.iter().cloned());
            }
            let mut strings = Vec::new();
            for o in &objects {
                collect_strings(o, &mut strings);
            }
            strings.sort();
            strings.dedup();
            out.push(State { objects, strings });
        }
        assert!(!out.is_empty(), "no saved states under {}", data.display());
        out
    })
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The objects directly in a folder (sub-folders are states of their own).
fn read_folder(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter_map(|f| trainlab::observe::parse_file(f).ok())
        .flatten()
        .map(|o| std::sync::Arc::unwrap_or_clone(o.value))
        .collect()
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                collect_strings(x, out);
            }
        }
        _ => {}
    }
}

/// The fuzzer's bytes as choices.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let x = usize::from(self.byte()) << 8 | usize::from(self.byte());
        x % n
    }
}

/// Values that sit on the edges of what verifiers count.
const NUMBERS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    4,
    7,
    8,
    16,
    32,
    64,
    100,
    1024,
    i32::MAX as i64,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MAX,
    i64::MIN,
];
const STRINGS: &[&str] = &[
    "",
    "0",
    "-1",
    "1.5",
    "8",
    "1e400",
    "9223372036854775807",
    "99999999999999999999",
    "8Ei",
    "100Gi",
    "500m",
    "nvidia.com/gpu",
    "vpc.amazonaws.com/efa",
    "aws.amazon.com/neuron",
    "true",
    "$(NP)",
    "${NP}",
    "$NP",
    "sh",
    "-c",
    "torchrun",
    "mpirun",
    "--",
    "'",
    "\"",
    "\\",
    "\n",
    "日本語",
    "a=b",
    "In",
    "NotIn",
    "Exists",
    "Running",
    "Pending",
    "Failed",
    "True",
    "False",
];

/// One edit at a path the bytes choose inside `v`.
fn edit(v: &mut Value, bytes: &mut Bytes, dictionary: &[String]) {
    // Walk down: each step picks a child, until the bytes say stop or a leaf is reached.
    let mut target = v;
    for _ in 0..12 {
        let n = match &*target {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if n == 0 || bytes.byte().is_multiple_of(5) {
            break;
        }
        let i = bytes.below(n);
        target = match target {
            Value::Object(m) => m.values_mut().nth(i).expect("i < len"),
            Value::Array(a) => &mut a[i],
            other => other,
        };
    }
    let pick = |bytes: &mut Bytes| -> String {
        if bytes.byte().is_multiple_of(3) {
            STRINGS[bytes.below(STRINGS.len())].to_string()
        } else {
            dictionary
                .get(bytes.below(dictionary.len()))
                .cloned()
                .unwrap_or_default()
        }
    };
    match bytes.byte() % 10 {
        0 => *target = Value::Null,
        1 => *target = json!(bytes.byte().is_multiple_of(2)),
        2 => *target = json!(NUMBERS[bytes.below(NUMBERS.len())]),
        3 => *target = json!([0.5, -0.0, 1e300, 2.5, -3.75][bytes.below(5)]),
        4 => *target = json!(pick(bytes)),
        5 => {
            // A string edited: cut, or joined with another.
            if let Value::String(s) = target {
                let cut = bytes.below(s.len() + 1);
                let head: String = s.chars().take(cut).collect();
                *s = format!("{head}{}", pick(bytes));
            }
        }
        6 => match target {
            Value::Object(m) => {
                let key = pick(bytes);
                m.insert(key, json!(pick(bytes)));
            }
            Value::Array(a) => {
                let copy = a.first().cloned().unwrap_or(Value::Null);
                a.push(copy);
            }
            _ => *target = json!([pick(bytes)]),
        },
        7 => match target {
            Value::Object(m) if !m.is_empty() => {
                let i = bytes.below(m.len());
                if let Some(k) = m.keys().nth(i).cloned() {
                    m.remove(&k);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                let i = bytes.below(a.len());
                a.remove(i);
            }
            _ => *target = json!({}),
        },
        8 => *target = json!([]),
        _ => {
            let mut m = serde_json::Map::new();
            m.insert(pick(bytes), json!(pick(bytes)));
            *target = Value::Object(m);
        }
    }
}
