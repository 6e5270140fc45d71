//! Conformance: the real tools judge the labs' command lines and configs.
//!
//! This test reads every lab's reference solution for both profiles (`solution/`, and
//! `solution/` + `solution-eks/` on EKS), finds each training command line the way the kit reads
//! it (shell scripts split, launchers followed to the script), and writes them as cases for
//! `tests/conformance/judge.py`, which runs the real tools' own parsers and validators (torchrun's
//! `get_args_parser`, Megatron-LM's `parse_args`/`validate_args`, transformers'
//! `HfArgumentParser`, DeepSpeed's config model) from pinned PyPI packages.
//!
//! The extraction runs in every `cargo test` (it must find the labs' command lines). Judging
//! needs the Python tools: `bash tests/conformance/setup.sh` installs them (what `.ci/run`
//! does), then `cargo test --test conformance -- --include-ignored` runs them
//! (`TRAINLAB_CONFORMANCE_VENV` names the venv when it is not `target/conformance-venv`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use trainlab::catalog::{Catalog, LabBundle, PROFILES};
use trainlab::observe::{parse_text, Obj};
use trainlab::verify::kit::cmdline::{
    invocations, LauncherCommand, Nnodes, NprocPerNode, Torchrun,
};
use trainlab::verify::kit::k8s::workload::Workload;

/// One command line or config for the real tools, in judge.py's case schema
/// (tests/conformance/README.md).
fn case(id: String, origin: String, tool: &str, body: Value) -> Value {
    let mut c = json!({"id": id, "origin": origin, "tool": tool, "expect": "accept"});
    for (k, v) in body.as_object().cloned().unwrap_or_default() {
        c[k] = v;
    }
    c
}

/// The tool whose parser reads a training script's arguments, by the script's entry point:
/// Megatron-LM's `pretrain_*.py` (NVIDIA/Megatron-LM, repository root), or a Hugging Face
/// example script (`run_clm.py` and friends, huggingface/transformers examples/pytorch/).
/// Others (NeMo/BioNeMo entry points, a learner's own `train.py`) have no parser here.
/// On kind the script is trainlab's stand-in (`/opt/trainlab/bin/trainer.py`), which reads the
/// line of the tool it stands in for: HF `run_clm.py` when the line has TrainingArguments'
/// required `--output_dir`, else Megatron-LM (manifests/trainer-standin/README.md).
fn script_tool(script: &str, args: &[String]) -> Option<(&'static str, String)> {
    let name = script.rsplit('/').next().unwrap_or(script);
    if name == "trainer.py" && script.starts_with("/opt/trainlab/") {
        let hf = args
            .iter()
            .any(|a| a.starts_with("--output_dir") || a.starts_with("--output-dir"));
        return Some(if hf {
            ("hf-trainer", "run_clm.py".to_string())
        } else {
            ("megatron", "pretrain_gpt.py".to_string())
        });
    }
    let tool = if name.starts_with("pretrain_") && name.ends_with(".py") {
        "megatron"
    } else if name.starts_with("run_") && name.ends_with(".py") {
        "hf-trainer"
    } else {
        return None;
    };
    Some((tool, name.to_string()))
}

/// The ranks a workload's training command starts: torchrun's nodes × processes per node (its
/// own options, else the PyTorchJob's `nprocPerNode` and the pods of every template).
fn world_size(w: &Workload, t: Option<&Torchrun>) -> i64 {
    let pods = w.total_replicas().max(1);
    let nnodes = t
        .and_then(|t| t.nnodes().ok().flatten())
        .and_then(|s| s.known().copied())
        .map(|Nnodes { max, .. }| max)
        .unwrap_or(pods);
    let from_job = w.obj.value["spec"]["nprocPerNode"]
        .as_str()
        .and_then(|s| s.parse::<i64>().ok())
        .or_else(|| w.obj.value["spec"]["nprocPerNode"].as_i64());
    let nproc = t
        .and_then(|t| t.nproc_per_node().ok().flatten())
        .and_then(|s| match s.known() {
            Some(NprocPerNode::Count(n)) => Some(*n),
            _ => None,
        })
        .or(from_job)
        .unwrap_or(1);
    nnodes * nproc
}

/// The GPUs a container is given (`nvidia.com/gpu` limit): what torchrun's `gpu`/`auto` count.
fn gpus_of(c: &k8s_openapi::api::core::v1::Container) -> i64 {
    c.resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.get("nvidia.com/gpu"))
        .and_then(|q| q.0.parse().ok())
        .unwrap_or(0)
}

#[path = "support/test_site.rs"]
mod test_site;

#[path = "conformance/variants.rs"]
mod variants;

/// The site a profile's files are rendered with: the tests' own (kind's stand-ins, or the fixed
/// EKS site of tests/support/test_site.rs).
fn site_of(profile: &str) -> trainlab::profile::site::SiteValues {
    test_site::test_site(profile)
}

/// What the extraction found in one lab × profile: the cases, every solution command line that
/// runs a tool the judge knows (with the tools it was judged by), and what it could not judge.
#[derive(Default)]
struct Extraction {
    cases: Vec<Value>,
    lines: Vec<ToolLine>,
    /// A solution command line that cannot be read or judged, said with where it is.
    problems: Vec<String>,
}

/// One solution command line that runs a known tool: where it is, the tools its launcher chain
/// and script need judged, and the tools a case was written for.
struct ToolLine {
    place: String,
    needs: Vec<&'static str>,
    judged: Vec<&'static str>,
}

/// The cases of one lab folder as one profile applies it.
fn cases_of(b: &LabBundle, profile: &str) -> Extraction {
    let mut out = Extraction::default();
    let parsed: Vec<(&str, Vec<Obj>)> = ["starter", "solution"]
        .iter()
        .flat_map(|folder| {
            b.files_for(folder, profile, &site_of(profile))
                .expect("lab files render")
        })
        .map(|(rel, text)| {
            (
                rel,
                parse_text(&text, &b.path_of(rel)).expect("lab files parse"),
            )
        })
        .collect();
    let config_maps: BTreeMap<String, Value> = parsed
        .iter()
        .flat_map(|(_, objects)| objects.iter())
        .filter(|o| o.kind() == "ConfigMap")
        .map(|o| (o.name().to_string(), o.value["data"].clone()))
        .collect();
    for (rel, objects) in parsed.iter().filter(|(rel, _)| rel.starts_with("solution")) {
        for o in objects {
            workload_cases(&Place::of(b), profile, rel, o, &config_maps, &mut out);
            out.cases.extend(deepspeed_config_cases(b, profile, rel, o));
        }
    }
    out
}

/// The files a container sees from the lab's ConfigMaps (`{mountPath/key: text}`): a DeepSpeed
/// config the command line names is read from there, as in the pod.
fn mounted_files(
    spec: &k8s_openapi::api::core::v1::PodSpec,
    c: &k8s_openapi::api::core::v1::Container,
    config_maps: &BTreeMap<String, Value>,
) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for m in c.volume_mounts.iter().flatten() {
        let Some(cm) = spec
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == m.name)
            .and_then(|v| v.config_map.as_ref())
        else {
            continue;
        };
        let Some(data) = config_maps.get(&cm.name).and_then(Value::as_object) else {
            continue;
        };
        for (key, text) in data {
            let Some(text) = text.as_str() else { continue };
            // `items` renames keys; a subPath mounts one key as the mount path itself.
            let name = cm
                .items
                .iter()
                .flatten()
                .find(|i| &i.key == key)
                .map_or(key.as_str(), |i| i.path.as_str());
            let path = match &m.sub_path {
                Some(sub) if sub == name => m.mount_path.clone(),
                Some(_) => continue,
                None => format!("{}/{name}", m.mount_path.trim_end_matches('/')),
            };
            files.insert(path, text.to_string());
        }
    }
    files
}

/// Where a lab's files come from, as cases and problems name it: the lab's id and its folder.
struct Place {
    lab: String,
    origin: String,
}

impl Place {
    fn of(b: &LabBundle) -> Place {
        Place {
            lab: b.lab.id.clone(),
            origin: b.origin.clone(),
        }
    }
}

/// The tools a launcher chain needs judged: each launcher the judge has an adapter for, and the
/// script's parser when [`script_tool`] knows it.
fn tools_needed(chain: &[LauncherCommand]) -> Vec<&'static str> {
    let mut needs: Vec<&'static str> = chain
        .iter()
        .filter_map(|l| match l {
            LauncherCommand::Torchrun(_) => Some("torchrun"),
            LauncherCommand::DeepSpeed(_) => Some("deepspeed-launcher"),
            LauncherCommand::Accelerate(_) => Some("accelerate-launch"),
            _ => None,
        })
        .collect();
    if let Some((tool, _)) = chain
        .last()
        .and_then(LauncherCommand::entry)
        .and_then(|e| script_tool(&e.script, &e.args))
    {
        needs.push(tool);
    }
    needs
}

fn workload_cases(
    b: &Place,
    profile: &str,
    rel: &str,
    o: &Obj,
    config_maps: &BTreeMap<String, Value>,
    out: &mut Extraction,
) {
    let w = match Workload::from_obj(o) {
        Ok(Some(w)) => w,
        Ok(None) => return,
        Err(e) => {
            out.problems.push(format!(
                "{}/{rel} {}/{} ({profile}): not a readable workload: {e}",
                b.origin,
                o.kind(),
                o.name()
            ));
            return;
        }
    };
    let mut seen = std::collections::BTreeSet::new();
    for (t, c, _) in w.containers() {
        let place = |line: usize| {
            format!(
                "{} ({profile}) {rel} {}/{} {}/{} line {line}",
                b.lab,
                o.kind(),
                o.name(),
                t.role,
                c.name
            )
        };
        let lines = match invocations(c) {
            Ok(lines) => lines,
            Err(e) => {
                out.problems.push(format!(
                    "{}: the shell reader cannot split this command, so the real tools cannot judge it: {e}",
                    place(1)
                ));
                continue;
            }
        };
        for inv in lines {
            // The same line in Master and Worker is one case.
            if !seen.insert(inv.expanded.clone()) {
                continue;
            }
            let origin = format!(
                "{}/{rel} {}/{} {}/{} line {}",
                b.origin,
                o.kind(),
                o.name(),
                t.role,
                c.name,
                inv.line
            );
            let id = format!("{}/{profile}/{}/{}/{}", b.lab, t.role, c.name, inv.line);
            let chain = LauncherCommand::chain(&inv.expanded);
            let needs = tools_needed(&chain);
            if needs.is_empty() {
                continue;
            }
            let mut judged = Vec::new();
            let torchrun = chain.iter().find_map(|l| match l {
                LauncherCommand::Torchrun(t) => Some(
                    t.clone().with_env(
                        inv.environment()
                            .iter()
                            .map(|(k, v)| (k.as_str(), v.as_str())),
                    ),
                ),
                _ => None,
            });
            let env = inv.environment();
            let files = mounted_files(&t.spec, c, config_maps);
            if torchrun.is_some() {
                let start = inv
                    .expanded
                    .iter()
                    .position(|w| w == "torch.distributed.run")
                    .unwrap_or(0);
                out.cases.push(case(
                    format!("{id}/torchrun"),
                    origin.clone(),
                    "torchrun",
                    json!({
                        "argv": inv.expanded[start + 1..].to_vec(),
                        "env": env,
                        "gpus": gpus_of(c),
                    }),
                ));
                judged.push("torchrun");
            }
            if let Some(entry) = chain.last().and_then(LauncherCommand::entry) {
                if let Some((tool, script)) = script_tool(&entry.script, &entry.args) {
                    out.cases.push(case(
                        format!("{id}/{tool}"),
                        origin,
                        tool,
                        json!({
                            "script": script,
                            "argv": entry.args,
                            "world_size": world_size(&w, torchrun.as_ref()),
                            "env": env,
                            "files": files,
                        }),
                    ));
                    judged.push(tool);
                }
            }
            out.lines.push(ToolLine {
                place: place(inv.line),
                needs,
                judged,
            });
        }
    }
}

/// A DeepSpeed config a ConfigMap carries (a JSON value with `zero_optimization`): the real
/// config model validates it.
fn deepspeed_config_cases(b: &LabBundle, profile: &str, rel: &str, o: &Obj) -> Vec<Value> {
    if o.kind() != "ConfigMap" {
        return Vec::new();
    }
    let Some(data) = o.value["data"].as_object() else {
        return Vec::new();
    };
    data.iter()
        .filter_map(|(key, v)| {
            let config: Value = serde_json::from_str(v.as_str()?).ok()?;
            config.get("zero_optimization")?;
            // `"auto"` values are the HF Trainer's to fill (HfTrainerDeepSpeedConfig) before
            // DeepSpeed reads the file: such a config is judged through the HF command line
            // that names it (a case with the file mounted), not alone.
            if has_auto(&config) {
                return None;
            }
            Some(case(
                format!("{}/{profile}/{}/{key}", b.lab.id, o.name()),
                format!("{}/{rel} ConfigMap/{} data.{key}", b.origin, o.name()),
                "deepspeed-config",
                json!({"config": config}),
            ))
        })
        .collect()
}

fn has_auto(v: &Value) -> bool {
    match v {
        Value::String(s) => s == "auto",
        Value::Array(a) => a.iter().any(has_auto),
        Value::Object(m) => m.values().any(has_auto),
        _ => false,
    }
}

/// Every lab's solution cases for every profile, each once (a file both profiles share gives
/// the same line twice: the first profile's id is kept). Panics naming every solution command
/// line that could not be read or judged: a line the real tools never see is not conformance.
fn all_cases() -> Vec<Value> {
    let catalog = Catalog::embedded().expect("embedded labs");
    let mut by_line: BTreeMap<String, Value> = BTreeMap::new();
    let mut problems = Vec::new();
    for b in &catalog.labs {
        for profile in PROFILES {
            let found = cases_of(b, profile);
            problems.extend(found.problems);
            for l in found.lines {
                for tool in l.needs.iter().filter(|t| !l.judged.contains(t)) {
                    problems.push(format!("{}: runs {tool}, which no case judges", l.place));
                }
            }
            for c in found.cases {
                let key = format!("{}|{}|{}|{}", b.lab.id, c["tool"], c["argv"], c["config"]);
                by_line.entry(key).or_insert(c);
            }
        }
    }
    assert!(
        problems.is_empty(),
        "solution command lines the real tools cannot judge:\n{}",
        problems.join("\n")
    );
    let mut cases: Vec<Value> = by_line.into_values().collect();
    cases.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    cases
}

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// The interpreter of the venv `bash tests/conformance/setup.sh` builds (`TRAINLAB_CONFORMANCE_VENV`
/// names it when it is not `target/conformance-venv`).
fn conformance_python() -> String {
    let venv = std::env::var_os("TRAINLAB_CONFORMANCE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/conformance-venv"));
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `bash tests/conformance/setup.sh` first (it installs the real tools)",
        python.display()
    );
    python.display().to_string()
}

fn write_cases(cases: &[Value]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-cases.json");
    std::fs::write(
        &path,
        serde_json::to_vec_pretty(&json!({"cases": cases})).unwrap(),
    )
    .unwrap();
    path
}

/// The lab × profile groups whose solution runs a tool the judge knows, derived from the
/// catalog (every container command line read as the kit reads it), with their extraction.
fn tool_groups() -> Vec<(String, &'static str, Extraction)> {
    let catalog = Catalog::embedded().expect("embedded labs");
    let mut groups = Vec::new();
    for b in &catalog.labs {
        for profile in PROFILES {
            let found = cases_of(b, profile);
            if !found.lines.is_empty() || !found.problems.is_empty() {
                groups.push((b.lab.id.clone(), *profile, found));
            }
        }
    }
    groups
}

#[test]
fn every_training_lab_yields_its_command_lines_for_both_profiles() {
    // Every solution line is read and judged (all_cases panics naming the ones that are not).
    let cases = all_cases();
    let groups = tool_groups();
    // Each group found from the catalog gives a case for every tool each of its lines needs,
    // under its own id (before the two profiles' identical lines are merged).
    for (lab, profile, found) in &groups {
        for line in &found.lines {
            for tool in &line.needs {
                let prefix = format!("{lab}/{profile}/");
                let has_case = found.cases.iter().any(|c| {
                    c["tool"] == *tool && c["id"].as_str().is_some_and(|id| id.starts_with(&prefix))
                });
                assert!(has_case, "{}: no {tool} case", line.place);
            }
        }
    }
    // A floor, so that a change to how lines are found cannot silently find none: on
    // 2026-12-05, labs 1, 2, 7, 10, 11, 12 and 14 run torchrun, Megatron-LM or an HF script on
    // both profiles (14 groups).
    let names: Vec<String> = groups.iter().map(|(l, p, _)| format!("{l}/{p}")).collect();
    assert!(groups.len() >= 14, "{names:?}");
    for profile in PROFILES {
        assert!(
            groups.iter().filter(|(_, p, _)| p == profile).count() >= 7,
            "{names:?}"
        );
    }
    let tools = |lab: &str, profile: &str| -> Vec<String> {
        cases
            .iter()
            .filter(|c| {
                c["id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(&format!("{lab}/{profile}/")))
            })
            .map(|c| c["tool"].as_str().unwrap().to_string())
            .collect()
    };
    // The Megatron-LM labs run torchrun and Megatron's pretrain_gpt.py on kind (the stand-in
    // reads the same line), so their lines reach both parsers.
    for lab in ["tensor-parallelism", "parallelism-3d", "bf16"] {
        let t = tools(lab, "kind");
        assert!(t.contains(&"megatron".to_string()), "{lab}: {t:?}");
        assert!(t.contains(&"torchrun".to_string()), "{lab}: {t:?}");
    }
    // Lab 12's DeepSpeed config reaches the judge with the HF line that names it, mounted
    // where the pod sees it, on both profiles.
    for profile in ["kind", "eks"] {
        let with_config = cases.iter().any(|c| {
            c["tool"] == "hf-trainer"
                && c["id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(&format!("zero3-offload/{profile}/")))
                && c["files"]
                    .as_object()
                    .is_some_and(|f| f.keys().any(|k| k.ends_with("ds_config.json")))
        });
        assert!(with_config, "{profile}: {cases:#?}");
    }
    let path = write_cases(&cases);
    assert!(path.exists());
}

/// A container command the shell reader cannot split is not skipped: it is a problem naming the
/// lab, profile, file, object, role and container; and a line whose launcher the judge has no
/// case for (here `deepspeed`) is one too.
#[test]
fn a_solution_line_that_cannot_be_read_or_judged_is_named() {
    let place = Place {
        lab: "demo".into(),
        origin: "labs/99-demo".into(),
    };
    let job = |command: &str| {
        parse_text(
            &format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train}}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: trainer\n          image: x\n          command: {command}\n"
            ),
            "test",
        )
        .unwrap()
        .remove(0)
    };
    let mut out = Extraction::default();
    let unclosed = job(r#"["sh", "-c", "torchrun --nproc_per_node=8 'train.py"]"#);
    workload_cases(
        &place,
        "kind",
        "solution/job.yaml",
        &unclosed,
        &BTreeMap::new(),
        &mut out,
    );
    assert_eq!(out.problems.len(), 1, "{:?}", out.problems);
    let p = &out.problems[0];
    assert!(
        p.starts_with("demo (kind) solution/job.yaml Job/train ") && p.contains("/trainer"),
        "{p}"
    );
    assert!(p.contains("cannot split"), "{p}");
    assert!(out.cases.is_empty());

    let mut out = Extraction::default();
    let launcher = job(r#"["deepspeed", "--num_gpus", "8", "train.py", "--lr", "1"]"#);
    workload_cases(
        &place,
        "kind",
        "solution/job.yaml",
        &launcher,
        &BTreeMap::new(),
        &mut out,
    );
    assert!(out.problems.is_empty(), "{:?}", out.problems);
    assert_eq!(out.lines.len(), 1);
    assert_eq!(out.lines[0].needs, vec!["deepspeed-launcher"]);
    assert!(out.lines[0].judged.is_empty());
}

/// The real tools judge every case (needs `bash tests/conformance/setup.sh`; `.ci/run` runs it).
#[test]
#[ignore = "needs the real tools: bash tests/conformance/setup.sh (TRAINLAB_CONFORMANCE_VENV names its venv)"]
fn the_real_tools_accept_every_solution_command_line_and_config() {
    let python = conformance_python();
    let cases = write_cases(&all_cases());
    let out = Command::new(&python)
        .arg(conformance_dir().join("judge.py"))
        .arg(&cases)
        .arg("--variants")
        .arg(conformance_dir().join("variants.yaml"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the real tools refused a solution (above), or judge.py failed:\n{stderr}"
    );
}

/// `tests/conformance/variants.yaml` stays true to the kit: each entry's `kit:` verdict is
/// computed, not read: the variant's line is graded by its lab's verifier in place of the
/// solution's (`variants.rs`), and must be what `kit:` says, failing the check `check:` names
/// (refuse) or giving the advice `advice:` names (advise). The kit's and the real tool's verdicts
/// then agree (the kit accepts what the tool accepts; what the kit refuses the tool refuses too,
/// or is a concept error it cannot see; what the kit advises about is what the tool refuses, or
/// accepts when the advice is about something else, such as speed), no disagreement is left as a
/// `finding:`, and every `from:` names a lab test function or a kit item that is defined.
#[test]
fn every_flag_variant_pairs_the_kits_computed_verdict_with_the_real_tools() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(conformance_dir().join("variants.yaml")).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).expect("variants.yaml parses");
    let variants = doc["variants"].as_array().expect("a variants list");
    assert!(variants.len() >= 50, "{}", variants.len());
    let mut wrong = Vec::new();
    for v in variants {
        let id = v["id"].as_str().expect("an id");
        let kit = v["kit"].as_str().unwrap_or_default();
        let real = v["real"].as_str().unwrap_or_default();
        match variants::kit_verdict(v, &doc["bases"]) {
            Err(e) => wrong.push(format!("{id}: the kit could not grade it: {e}")),
            Ok(got) => {
                println!(
                    "{id}: kit {} (failed {:?}, advice {:?})",
                    got.verdict, got.failed, got.advice
                );
                if got.verdict != kit {
                    wrong.push(format!(
                        "{id}: variants.yaml says kit {kit}, the kit's verdict is {} (failed {:?}, advice {:?})",
                        got.verdict, got.failed, got.advice
                    ));
                }
                if let (Some(check), "refuse") = (v["check"].as_str(), got.verdict) {
                    if !got.failed.iter().any(|(c, _)| c == check) {
                        wrong.push(format!(
                            "{id}: refused, but not by {check} (failed {:?})",
                            got.failed
                        ));
                    }
                }
                if let (Some(advice), "advise") = (v["advice"].as_str(), got.verdict) {
                    if !got.advice.iter().any(|a| a == advice) {
                        wrong.push(format!(
                            "{id}: advised, but not {advice} (advice {:?})",
                            got.advice
                        ));
                    }
                }
            }
        }
        if kit == "refuse" && v["check"].as_str().is_none() {
            wrong.push(format!(
                "{id}: kit refuse needs `check:` (the lab check that fails)"
            ));
        }
        if kit == "advise" && v["advice"].as_str().is_none() {
            wrong.push(format!(
                "{id}: kit advise needs `advice:` (the advice given)"
            ));
        }
        let agrees = matches!(
            (kit, real),
            ("accept", "accept")
                | ("refuse", "refuse" | "concept")
                | ("advise", "refuse" | "accept")
        );
        if !agrees {
            wrong.push(format!("{id}: kit {kit} / real {real} do not agree"));
        }
        if v.get("finding").is_some() {
            wrong.push(format!("{id}: open finding {}", v["finding"]));
        }
        if let Err(e) = from_exists(root, v["from"].as_str().unwrap_or_default()) {
            wrong.push(format!("{id}: {e}"));
        }
    }
    assert!(wrong.is_empty(), "variants.yaml:\n{}", wrong.join("\n"));
}

/// `from:` names a test function (`labs/bf16 fn_name`, a module of tests/it) or a kit item
/// (`kit src/… Type::item words…`): the function, or the item's last `::` segment, is defined
/// there (`fn`, `const`, `static`, `struct`, `enum` or `type`), and every other identifier
/// named appears in that file.
fn from_exists(root: &Path, from: &str) -> Result<(), String> {
    if let Some(kit_ref) = from.strip_prefix("kit ") {
        let (file, symbol) = kit_ref.split_once(' ').ok_or("from: kit <file> <symbol>")?;
        let source = std::fs::read_to_string(root.join(file)).map_err(|_| format!("no {file}"))?;
        let mut words = symbol.split_whitespace();
        let path = words.next().ok_or("from: kit <file> <symbol>")?;
        let item = path.rsplit("::").next().unwrap();
        let defined = ["fn", "const", "static", "struct", "enum", "type"]
            .iter()
            .any(|k| {
                source.contains(&format!("{k} {item}("))
                    || source.contains(&format!("{k} {item}:"))
                    || source.contains(&format!("{k} {item} "))
                    || source.contains(&format!("{k} {item}<"))
            });
        if !defined {
            return Err(format!("{file} defines no {item}"));
        }
        for name in path.split("::").chain(words) {
            if !source.contains(name) {
                return Err(format!("{file} has no {name}"));
            }
        }
        Ok(())
    } else {
        let mut words = from.split_whitespace();
        let test_file = words.next().ok_or("from: <tests/it module> <fn>")?;
        let function = words.next().ok_or("from: <tests/it module> <fn>")?;
        // The integration tests are modules of one binary (tests/it/).
        let source = std::fs::read_to_string(root.join("tests/it").join(format!("{test_file}.rs")))
            .map_err(|_| format!("no tests/it/{test_file}.rs"))?;
        if source.contains(&format!("fn {function}(")) {
            Ok(())
        } else {
            Err(format!("tests/it/{test_file}.rs has no fn {function}"))
        }
    }
}

/// Every refuse case names the text the tool's refusal must contain (`message:`), in the sample
/// cases and in the variants, so a refusal for another reason cannot pass; judge.py refuses such
/// a case too, this says so without the real tools.
#[test]
fn every_refuse_case_pins_its_message() {
    let samples: Value = serde_json::from_str(
        &std::fs::read_to_string(conformance_dir().join("sample-cases.json")).unwrap(),
    )
    .expect("sample-cases.json parses");
    let variants: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(conformance_dir().join("variants.yaml")).unwrap(),
    )
    .expect("variants.yaml parses");
    let refuse_cases = samples["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["expect"] == "refuse")
        .chain(
            variants["variants"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v["real"] == "refuse"),
        );
    let mut count = 0;
    let mut without: Vec<&str> = Vec::new();
    for c in refuse_cases {
        count += 1;
        if c["message"].as_str().is_none_or(|m| m.trim().is_empty()) {
            without.push(c["id"].as_str().unwrap_or("?"));
        }
    }
    assert!(count >= 50, "{count} refuse cases");
    assert!(
        without.is_empty(),
        "refuse cases without `message:`: {without:?}"
    );
}

/// The judge's own rules hold without the real tools (`tests/conformance/selftest.py`, the
/// standard library only): a tool's own exception or argparse exit is its refusal, an exception
/// raised in the suite's code or an attribute missing from one of its stubs is an error, and a
/// refuse case without `message` is refused.
#[test]
fn the_judge_tells_the_tools_refusal_from_its_own_faults() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .arg(conformance_dir().join("selftest.py"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python} (set PYTHON): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The EKS token trainlab builds in-process (`cluster::eks_token`) equals the one botocore builds
/// as `aws eks get-token` does (`tests/conformance/eks_token.py`), for fixed credentials, regions
/// of each partition, cluster names and ids, and signing times: the same presigned URL, byte for
/// byte, so the same signature.
#[test]
#[ignore = "needs botocore: bash tests/conformance/setup.sh (TRAINLAB_CONFORMANCE_VENV names its venv)"]
fn eks_tokens_match_botocore() {
    use aws_credential_types::Credentials;
    use std::time::{Duration, SystemTime};
    use trainlab::cluster::eks_token::{presigned_url, token_at};

    // A session token as STS writes them: long, with `/`, `+` and `=` to be percent-encoded.
    let session_token = format!(
        "IQoJb3JpZ2luX2VjEHsaCXVzLWVhc3QtMSJHMEUCIQD{}/x+Yz==",
        "A1b2C3d4/E5f6+G7h8".repeat(20)
    );
    let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    // id, access key id, session token, region, cluster name or id, signing time (Unix seconds).
    type Input<'a> = (&'a str, &'a str, Option<&'a str>, &'a str, &'a str, u64);
    #[rustfmt::skip]
    let inputs: [Input; 9] = [
        ("update-kubeconfig", "ASIAEXAMPLE", Some(session_token.as_str()), "us-west-2", "trainlab", 1_796_270_706),
        ("long-lived-keys", "AKIAIOSFODNN7EXAMPLE", None, "us-east-1", "gpu-cluster_01", 1_577_836_800),
        ("leap-day-midnight", "ASIAEXAMPLE", Some("short/+="), "eu-central-1", "a", 1_835_481_599),
        ("outposts-cluster-id", "ASIAEXAMPLE", Some(session_token.as_str()), "us-west-2", "0123abcd-1111-2222-3333-444455556666", 1_800_000_000),
        ("max-length-name", "AKIAIOSFODNN7EXAMPLE", None, "ap-northeast-1", &"n".repeat(100), 1_800_000_001),
        ("china", "ASIAEXAMPLE", Some(session_token.as_str()), "cn-north-1", "trainlab", 1_796_270_706),
        ("govcloud", "ASIAEXAMPLE", Some(session_token.as_str()), "us-gov-west-1", "trainlab", 1_796_270_706),
        ("iso-b", "AKIAIOSFODNN7EXAMPLE", None, "us-isob-east-1", "trainlab", 1_796_270_706),
        ("newer-region", "AKIAIOSFODNN7EXAMPLE", None, "mx-central-1", "trainlab", 1_796_270_706),
    ];
    let cases: Vec<Value> = inputs
        .iter()
        .map(|(id, key, token, region, cluster, secs)| {
            let creds = Credentials::new(*key, secret, token.map(str::to_string), None, "test");
            let time = SystemTime::UNIX_EPOCH + Duration::from_secs(*secs);
            json!({
                "id": id,
                "access_key_id": key,
                "secret_access_key": secret,
                "session_token": token,
                "region": region,
                "cluster_id": cluster,
                "time": secs,
                "trainlab_url": presigned_url(&creds, region, cluster, time).unwrap(),
                "trainlab_token": token_at(&creds, region, cluster, time).unwrap(),
            })
        })
        .collect();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("eks-token-cases.json");
    std::fs::write(
        &path,
        serde_json::to_vec_pretty(&json!({"cases": cases})).unwrap(),
    )
    .unwrap();
    let python = conformance_python();
    // Nothing from this machine's AWS settings (AWS_STS_REGIONAL_ENDPOINTS, AWS_CONFIG_FILE...)
    // reaches botocore: the cases say everything.
    let out = Command::new(&python)
        .env_clear()
        .arg(conformance_dir().join("eks_token.py"))
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "botocore built another token (above), or eks_token.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("{} passed, 0 failed", inputs.len())),
        "{stdout}"
    );
}
