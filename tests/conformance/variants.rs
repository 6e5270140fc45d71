//! The kit's side of `variants.yaml`, computed: each variant's command line (or DeepSpeed
//! config) is put into the reference solution of the lab that grades it, in place of the
//! solution's own line, and that lab's verifier grades the files as `check --files` does. The
//! outcome is the kit's verdict:
//!
//! - `refuse`: a check fails (the entry's `check:` names one that must be among them);
//! - `advise`: every check passes and the lab advises (the entry's `advice:` names it), beyond
//!   what it advises on the solution itself;
//! - `accept`: every check passes and nothing is advised.
//!
//! The solution is the smallest workload the lab grades whole: everything but the variant's line
//! is the lab's own answer, so a fail is the line's.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use trainlab::catalog::{Catalog, LabBundle};
use trainlab::facts::Profile;
use trainlab::labs::grade_lab;
use trainlab::observe::{parse_text, Obj, Observed, SourceKind};
use trainlab::verify::{Status, Target};

/// The profile the variants are graded on: kind's solutions are what `standin_diff.py` runs too.
const PROFILE: &str = "kind";

/// What the lab made of a variant.
#[derive(Debug)]
pub struct KitVerdict {
    /// `accept`, `refuse` or `advise`.
    pub verdict: &'static str,
    /// The checks that failed, with what they found.
    pub failed: Vec<(String, String)>,
    /// The ids of the advice given.
    pub advice: Vec<String>,
}

/// The lab a variant is graded by: `lab:`, else the lab of a `from: labs/<module> …` test file
/// (the module is the lab's id with `_` for `-`).
pub fn lab_of(v: &Value) -> Result<String, String> {
    if let Some(lab) = v["lab"].as_str() {
        return Ok(lab.to_string());
    }
    let from = v["from"].as_str().unwrap_or_default();
    from.strip_prefix("labs/")
        .and_then(|rest| rest.split_whitespace().next())
        .map(|module| module.replace('_', "-"))
        .ok_or_else(|| format!("no `lab:` and `from: {from}` names no labs/<lab> test"))
}

/// The variant's whole argv: `base:` (a named line of `bases:`) and then `argv`.
pub fn argv_of(v: &Value, bases: &Value) -> Vec<String> {
    let words = |x: &Value| -> Vec<String> {
        x.as_array()
            .map(|a| {
                a.iter()
                    .map(|w| w.as_str().expect("argv words are strings").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut argv = match v["base"].as_str() {
        Some(name) => words(&bases[name]),
        None => Vec::new(),
    };
    argv.extend(words(&v["argv"]));
    argv
}

/// Grades the variant with its lab's verifier; Err says why it could not be graded.
pub fn kit_verdict(v: &Value, bases: &Value) -> Result<KitVerdict, String> {
    let catalog = Catalog::embedded().expect("embedded labs");
    let lab = lab_of(v)?;
    let bundle = catalog
        .get(&lab)
        .map_err(|e| format!("no lab {lab} in the catalog: {e}"))?;
    let mut objects = solution(bundle);
    // What the solution itself draws (lab 14 advises syncing its PVC to S3 whatever the line) is
    // not the variant's: only advice the variant adds counts.
    let own = grade(bundle, solution(bundle))?;
    if !own.failed.is_empty() {
        return Err(format!("the lab's own solution fails {:?}", own.failed));
    }
    match v["tool"].as_str().unwrap_or_default() {
        "deepspeed-config" => put_config(&mut objects, &v["config"])?,
        tool => put_line(&mut objects, tool, v, &argv_of(v, bases))?,
    }
    let mut got = grade(bundle, objects)?;
    got.advice.retain(|a| !own.advice.contains(a));
    got.verdict = if !got.failed.is_empty() {
        "refuse"
    } else if !got.advice.is_empty() {
        "advise"
    } else {
        "accept"
    };
    Ok(got)
}

/// The lab's verifier on `objects` read as the learner's files; a check in error is Err.
fn grade(bundle: &LabBundle, objects: Vec<Obj>) -> Result<KitVerdict, String> {
    let site = super::site_of(PROFILE);
    let params: BTreeMap<String, String> = bundle
        .lab
        .params(PROFILE)
        .into_iter()
        .map(|(k, val)| {
            let val = site.render(&val, "lab.yaml").expect("lab params render");
            (k, val)
        })
        .collect();
    let observed = Observed::offline(SourceKind::Files, "variant", objects);
    let result = grade_lab(
        bundle,
        &observed,
        &Target::for_lab(&bundle.lab.id),
        &params,
        None::<Profile>,
    )
    .map_err(|e| format!("grading failed: {e}"))?;
    let errors: Vec<String> = result
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Error)
        .map(|o| format!("{} {:?}", o.check, o.reason))
        .collect();
    if !errors.is_empty() {
        return Err(format!("checks in error: {errors:?}"));
    }
    Ok(KitVerdict {
        verdict: "",
        failed: result
            .outcomes
            .iter()
            .filter(|o| o.status == Status::Fail)
            .map(|o| (o.check.clone(), o.found.clone().unwrap_or_default()))
            .collect(),
        advice: result.advice.iter().map(|a| a.id.clone()).collect(),
    })
}

/// The lab's reference solution as kind applies it.
fn solution(b: &LabBundle) -> Vec<Obj> {
    b.files_for("solution", PROFILE, &super::site_of(PROFILE))
        .expect("lab files render")
        .into_iter()
        .flat_map(|(rel, text)| parse_text(&text, &b.path_of(rel)).expect("lab files parse"))
        .collect()
}

/// Replaces the DeepSpeed config of the solution's ConfigMap (the data key holding a JSON object
/// with `zero_optimization`) with the variant's.
fn put_config(objects: &mut [Obj], config: &Value) -> Result<(), String> {
    for o in objects.iter_mut().filter(|o| o.kind() == "ConfigMap") {
        let Some(data) = o.value_mut()["data"].as_object_mut() else {
            continue;
        };
        let key = data.iter().find_map(|(k, text)| {
            let parsed: Value = serde_json::from_str(text.as_str()?).ok()?;
            parsed.get("zero_optimization").map(|_| k.clone())
        });
        if let Some(key) = key {
            data[&key] = Value::String(serde_json::to_string_pretty(config).unwrap());
            return Ok(());
        }
    }
    Err("the lab's solution has no ConfigMap with a DeepSpeed config".into())
}

/// The pod templates of a PyTorchJob (by role) or a batch Job (`Job`).
fn templates(o: &mut Obj) -> Result<Vec<(String, &mut Value)>, String> {
    let kind = o.kind().to_string();
    let v = o.value_mut();
    match kind.as_str() {
        "PyTorchJob" => Ok(v["spec"]["pytorchReplicaSpecs"]
            .as_object_mut()
            .ok_or("a PyTorchJob without pytorchReplicaSpecs")?
            .iter_mut()
            .map(|(role, spec)| (role.clone(), &mut spec["template"]))
            .collect()),
        "Job" => Ok(vec![("Job".to_string(), &mut v["spec"]["template"])]),
        other => Err(format!("a {other} is not a workload this test can edit")),
    }
}

/// The solution's training container's words (`command` + `args`).
fn words_of(c: &Value) -> Vec<String> {
    ["command", "args"]
        .iter()
        .flat_map(|k| c[*k].as_array().cloned().unwrap_or_default())
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

/// Puts the variant's line into the solution's training job, in place of its own: every
/// role's first container runs it.
///
/// - `megatron`: `torchrun --nproc_per_node=N pretrain_gpt.py ARGV` with the variant's
///   `world_size` as pods × N, N the solution's GPUs per pod when they divide the world (else,
///   and for a batch Job, one pod of `world_size` processes); `CUDA_DEVICE_MAX_CONNECTIONS`
///   only from the variant's `env`.
/// - `torchrun`: `torchrun ARGV` followed by the solution's own script arguments (the variant
///   is about torchrun's options only).
/// - `hf-trainer`: the solution's launcher (what comes before its script; `python3` when the
///   script is inside a shell script), the variant's `script`, then ARGV.
///
/// Every tool but `megatron` keeps the solution's environment; the variant's `env` is added.
fn put_line(objects: &mut [Obj], tool: &str, v: &Value, argv: &[String]) -> Result<(), String> {
    let job = objects
        .iter_mut()
        .find(|o| matches!(o.kind(), "PyTorchJob" | "Job"))
        .ok_or("the lab's solution has no PyTorchJob or Job")?;
    let is_pytorchjob = job.kind() == "PyTorchJob";
    let first = |t: &Value| t["spec"]["containers"][0].clone();
    let sample = templates(job)?
        .first()
        .map(|(_, t)| first(t))
        .ok_or("a job without pod templates")?;
    let sol = words_of(&sample);
    // The solution's launcher and script arguments, when its command runs the script itself
    // (lab 14's runs it from a bash script: then `python3` and nothing).
    let script_at = sol.iter().position(|w| w.ends_with(".py"));
    let (launcher, script_args) = match script_at {
        Some(i) => (sol[..i].to_vec(), sol[i + 1..].to_vec()),
        None => (vec!["python3".to_string()], Vec::new()),
    };
    let gpus = sample["resources"]["limits"]["nvidia.com/gpu"]
        .as_i64()
        .or_else(|| {
            sample["resources"]["limits"]["nvidia.com/gpu"]
                .as_str()
                .and_then(|s| s.parse().ok())
        })
        .unwrap_or(1)
        .max(1);
    let mut pods = None;
    let words: Vec<String> = match tool {
        "megatron" => {
            let world = v["world_size"].as_i64().unwrap_or(1).max(1);
            // A PyTorchJob's pods each run N processes; a Job's one pod runs them all.
            let (n, nproc) = if is_pytorchjob && world % gpus == 0 {
                (world / gpus, gpus)
            } else {
                (1, world)
            };
            pods = Some(n);
            [
                "torchrun".to_string(),
                format!("--nproc_per_node={nproc}"),
                "pretrain_gpt.py".into(),
            ]
            .into_iter()
            .chain(argv.iter().cloned())
            .collect()
        }
        "torchrun" => std::iter::once("torchrun".to_string())
            .chain(argv.iter().cloned())
            .chain(script_args)
            .collect(),
        "hf-trainer" => {
            let script = v["script"].as_str().unwrap_or("train.py").to_string();
            launcher
                .into_iter()
                .chain(std::iter::once(script))
                .chain(argv.iter().cloned())
                .collect()
        }
        other => return Err(format!("no kit workload for tool {other}")),
    };
    let env: Vec<Value> = v["env"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, val)| json!({"name": k, "value": val.as_str().unwrap_or_default()}))
                .collect()
        })
        .unwrap_or_default();
    for (_, t) in templates(job)? {
        let c = &mut t["spec"]["containers"][0];
        c["command"] = json!([words[0]]);
        c["args"] = json!(words[1..]);
        let mut kept: Vec<Value> = c["env"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| tool != "megatron" || e["name"] != "CUDA_DEVICE_MAX_CONNECTIONS")
            .collect();
        kept.extend(env.iter().cloned());
        c["env"] = Value::Array(kept);
    }
    if let (Some(n), true) = (pods, is_pytorchjob) {
        let spec = &mut job.value_mut()["spec"];
        if spec.get("nprocPerNode").is_some() {
            spec["nprocPerNode"] = Value::Null;
        }
        let replicas = spec["pytorchReplicaSpecs"]
            .as_object_mut()
            .ok_or("a PyTorchJob without pytorchReplicaSpecs")?;
        if let Some(master) = replicas.get_mut("Master") {
            master["replicas"] = json!(1);
        }
        if n > 1 {
            if let Some(worker) = replicas.get_mut("Worker") {
                worker["replicas"] = json!(n - 1);
            }
        } else {
            replicas.remove("Worker");
        }
        if let Some(map) = spec.as_object_mut() {
            map.retain(|_, val| !val.is_null());
        }
    }
    Ok(())
}
