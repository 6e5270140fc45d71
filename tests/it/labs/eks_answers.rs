//! Every EKS answer runs on real hardware (issue 30 §3): the site's values reach every lab file
//! (`${site.KEY}`), no placeholder is ever applied, and each answer the issue found wanting is
//! fixed, while a learner's answer that is right in another way still passes.

use crate::support;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::observe::{parse_text, Obj};
use trainlab::profile::site::Site;
use trainlab::verify::kit::cmdline::{Args, MegatronArgs, RecomputeGranularity};
use trainlab::verify::{LabResult, Status};

/// The EKS objects of a lab folder, rendered with the test site (zone eu-north-1b).
fn eks_objects(lab: &str, folder: &str) -> Vec<Obj> {
    files_of(lab, folder, "eks")
        .into_iter()
        .flat_map(|(path, text)| parse_text(&text, &path).expect("lab files parse"))
        .collect()
}

fn first<'a>(objs: &'a [Obj], kind: &str) -> &'a Obj {
    objs.iter()
        .find(|o| o.kind() == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

/// Every string in a JSON value, with its path.
fn strings(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((path.to_string(), s.clone())),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| strings(x, &format!("{path}[{i}]"), out)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| strings(x, &format!("{path}.{k}"), out)),
        _ => {}
    }
}

/// What a placeholder looks like in a value: kind's stand-in ids, `<…>`, an unfilled token, the
/// kind cluster's names, or an AWS zone other than the site's.
fn placeholder_in(s: &str, site_zone: &str) -> Option<String> {
    for p in [
        "subnet-0123",
        "sg-0123",
        "${site.",
        "KarpenterNodeRole-trainlab",
        "REPLACE",
    ] {
        if s.contains(p) {
            return Some(p.to_string());
        }
    }
    // `<subnet-id>` as a value (a usage line of a script, `cp <file> …`, is no value).
    if let Some(inner) = s.trim().strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        if !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-' || c == '_')
        {
            return Some(format!("<{inner}>"));
        }
    }
    // A zone: two letters, a word, a digit and a letter (us-west-2a, eu-north-1b).
    for word in s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        let parts: Vec<&str> = word.split('-').collect();
        let is_zone = parts.len() == 3
            && parts[0].len() == 2
            && parts[0].chars().all(|c| c.is_ascii_lowercase())
            && parts[1].chars().all(|c| c.is_ascii_lowercase())
            && parts[2].len() == 2
            && parts[2].as_bytes()[0].is_ascii_digit()
            && parts[2].as_bytes()[1].is_ascii_lowercase();
        if is_zone && word != site_zone {
            return Some(word.to_string());
        }
    }
    None
}

#[test]
fn the_placeholder_finder_sees_what_the_issue_found() {
    let zone = "eu-north-1b";
    assert!(placeholder_in("subnet-0123456789abcdef0", zone).is_some());
    assert!(placeholder_in("sg-0123456789abcdef0", zone).is_some());
    assert!(placeholder_in("<subnet-id>", zone).is_some());
    assert!(placeholder_in("us-west-2a", zone).is_some());
    assert!(placeholder_in("${site.zone}", zone).is_some());
    assert_eq!(placeholder_in("eu-north-1b", zone), None);
    assert_eq!(placeholder_in("subnet-0a1b2c3d4e5f60718", zone), None);
    assert_eq!(placeholder_in("cat <<EOF > /tmp/x", zone), None);
    assert_eq!(placeholder_in("usage: download <file>", zone), None);
    assert_eq!(placeholder_in("p5.48xlarge", zone), None);
}

/// No EKS answer (solution-eks/ or the shared solution/, and the starter, as `solve --profile
/// eks` applies them) holds a placeholder once rendered with a real-looking site, and no lab's
/// EKS parameters do.
#[test]
fn no_eks_answer_contains_a_placeholder() {
    let site = test_site("eks");
    let zone = site.get("zone").unwrap().to_string();
    let catalog = Catalog::embedded().unwrap();
    let mut found = Vec::new();
    for b in &catalog.labs {
        for folder in ["starter", "solution"] {
            for o in eks_objects(&b.lab.id, folder) {
                let mut values = Vec::new();
                strings(&o.value, "", &mut values);
                for (path, s) in values {
                    if let Some(p) = placeholder_in(&s, &zone) {
                        found.push(format!("{} {}{path}: {p}", o.origin, o.display_name()));
                    }
                }
            }
        }
        for (k, v) in params_of(&b.lab.id, "eks") {
            if let Some(p) = placeholder_in(&v, &zone) {
                found.push(format!("{} params.eks.{k}: {p}", b.lab.id));
            }
        }
    }
    assert!(found.is_empty(), "placeholders:\n{}", found.join("\n"));
}

// ---- `solve --profile eks` and the site file, through the binary ----

const CONTEXT: &str = "arn:aws:eks:eu-north-1:111122223333:cluster/labtest";

fn solve(site_dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("KUBECONFIG", "/nonexistent")
        .env("TRAINLAB_SITE_DIR", site_dir)
        .write_stdin("")
        .args(args);
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn solve_eks_without_a_site_refuses_naming_the_param() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = solve(
        dir.path(),
        &[
            "solve",
            "8",
            "--dry-run",
            "--profile",
            "eks",
            "--context",
            CONTEXT,
        ],
    );
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("--param subnet_id="), "{err}");
    assert!(err.contains("trainlab setup eks"), "{err}");
    assert!(!out.contains("subnet-0123"), "{out}");
}

#[test]
fn solve_eks_fills_the_answer_from_the_site_file_and_a_param_wins() {
    let dir = tempfile::tempdir().unwrap();
    let site = Site {
        context: CONTEXT.into(),
        written_by: "test".into(),
        auto_mode: false,
        values: test_site("eks").values().clone(),
    };
    site.save_to(&dir.path().join(trainlab::profile::site::file_name(CONTEXT)))
        .unwrap();
    let args = [
        "solve",
        "8",
        "--dry-run",
        "--profile",
        "eks",
        "--context",
        CONTEXT,
    ];
    let (code, out, err) = solve(dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("subnetId: subnet-0a1b2c3d4e5f60718"), "{out}");
    assert!(
        out.contains("securityGroupIds: sg-0f1e2d3c4b5a69788"),
        "{out}"
    );
    assert!(!out.contains("${site."), "{out}");
    // --param over the file.
    let mut with = args.to_vec();
    with.extend(["--param", "subnet_id=subnet-0fedcba9876543210"]);
    let (code, out, err) = solve(dir.path(), &with);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("subnetId: subnet-0fedcba9876543210"), "{out}");
    // A --param that is no site key is bad input listing the keys.
    let mut bad = args.to_vec();
    bad.extend(["--param", "vpc=vpc-1"]);
    let (code, _, err) = solve(dir.path(), &bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("subnet_id"), "{err}");
}

#[test]
fn solve_kind_fills_the_answer_with_kinds_own_values() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = solve(
        dir.path(),
        &["solve", "15", "--dry-run", "--profile", "kind"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("- us-west-2a"), "{out}");
    assert!(!out.contains("${site."), "{out}");
}

/// `check` on a live EKS cluster: the site file of the kube context gives the lab's
/// `subnet_id`, so a StorageClass on another subnet is told which one the cluster has; a
/// `--param` wins over the site.
#[test]
fn check_on_eks_takes_the_sites_values_as_the_labs_params() {
    use support::emulator::Emulator;
    use support::live::Cluster;
    let ns = "trainlab-fsx-lustre";
    let mut seed: Vec<Value> = vec![serde_json::json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-a", "labels": {"topology.kubernetes.io/zone": "eu-north-1b"}},
        "spec": {"providerID": "aws:///eu-north-1b/i-0123456789abcdef0"},
        "status": {"capacity": {"cpu": "192", "memory": "2Ti", "pods": "110"}},
    })];
    for o in eks_objects("fsx-lustre", "solution") {
        let mut v = (*o.value).clone();
        if o.kind() == "StorageClass" {
            v["parameters"]["subnetId"] = "subnet-0fedcba9876543210".into();
        } else {
            v["metadata"]["namespace"] = ns.into();
        }
        seed.push(v);
    }
    let cluster = Cluster::on_context(Emulator::start(seed), CONTEXT);
    let sites = tempfile::tempdir().unwrap();
    let site = Site {
        context: CONTEXT.into(),
        written_by: "test".into(),
        auto_mode: false,
        values: test_site("eks").values().clone(),
    };
    site.save_to(
        &sites
            .path()
            .join(trainlab::profile::site::file_name(CONTEXT)),
    )
    .unwrap();
    let network = |extra: &[&str]| {
        let mut args = vec!["check", "8", "-o", "json"];
        args.extend(extra);
        let mut c = cluster.cmd(&args);
        c.env("TRAINLAB_SITE_DIR", sites.path());
        let (code, out, err) = support::live::output(c);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}\n{err}"));
        let o = v["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["check"] == "network-params")
            .unwrap()
            .clone();
        (code, o)
    };
    let (_, o) = network(&[]);
    assert_eq!(o["status"], "fail", "{o}");
    assert!(o.to_string().contains("subnet-0a1b2c3d4e5f60718"), "{o}");
    let (_, o) = network(&["--param", "subnet_id=subnet-0fedcba9876543210"]);
    assert_eq!(o["status"], "pass", "{o}");
    // `--profile kind` reads no site: nothing to compare the subnet with.
    let (_, o) = network(&["--profile", "kind"]);
    assert_eq!(o["status"], "pass", "{o}");
}

// ---- the findings of issue 30 §3 ----

fn spec_checks_pass(r: &LabResult) {
    for o in &r.outcomes {
        assert!(
            matches!(o.status, Status::Pass | Status::Skipped),
            "{}: {o:?}",
            o.check
        );
    }
}

/// Lab 5: a published image tag (with the aws-ofi-nccl plugin), the Launcher created once the
/// Workers are Ready, room for retries, and the site's zone.
#[test]
fn efa_nccl_eks_answer_uses_a_published_image_waits_for_workers_and_the_sites_zone() {
    let objs = eks_objects("efa-nccl", "solution");
    let job = &first(&objs, "MPIJob").value;
    assert_eq!(job["spec"]["launcherCreationPolicy"], "WaitForWorkersReady");
    assert!(job["spec"]["runPolicy"]["backoffLimit"].as_i64().unwrap() >= 6);
    let specs = &job["spec"]["mpiReplicaSpecs"];
    for role in ["Launcher", "Worker"] {
        assert_eq!(
            specs[role]["template"]["spec"]["containers"][0]["image"],
            "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9",
            "{role}"
        );
    }
    assert_eq!(
        specs["Worker"]["template"]["spec"]["nodeSelector"]["topology.kubernetes.io/zone"],
        "eu-north-1b"
    );
    assert_eq!(
        params_of("efa-nccl", "eks")["mpi_image"],
        "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
    );
    // The verifier grades the concept: with or without the policy, the answer passes.
    spec_checks_pass(&State::solution_of("efa-nccl", "eks").grade("efa-nccl"));
    let without = State::solution_of("efa-nccl", "eks").edit("MPIJob", "nccl-efa", |v| {
        v["spec"]
            .as_object_mut()
            .unwrap()
            .remove("launcherCreationPolicy");
        v["spec"]["runPolicy"]["backoffLimit"] = 2.into();
    });
    spec_checks_pass(&without.grade("efa-nccl"));
}

/// Lab 8: the EKS StorageClass names the site's subnet and security group, and passes.
#[test]
fn fsx_lustre_eks_answer_uses_the_sites_subnet_and_security_group() {
    let objs = eks_objects("fsx-lustre", "solution");
    let sc = &first(&objs, "StorageClass").value;
    assert_eq!(sc["parameters"]["subnetId"], "subnet-0a1b2c3d4e5f60718");
    assert_eq!(sc["parameters"]["securityGroupIds"], "sg-0f1e2d3c4b5a69788");
    let r = State::solution_of("fsx-lustre", "eks").grade("fsx-lustre");
    spec_checks_pass(&r);
    assert_eq!(outcome(&r, "network-params").status, Status::Pass);
    // The kind answer keeps kind's stand-in ids.
    let kind = files_of("fsx-lustre", "solution", "kind");
    assert!(kind
        .iter()
        .any(|(_, t)| t.contains("subnet-0123456789abcdef0")));
}

/// Lab 13: the workers tolerate the GPU taint and ask for no huge pages (EKS AMIs reserve
/// none); an answer that requests them, for nodes that reserve them, still passes.
#[test]
fn mpijob_slots_eks_workers_tolerate_gpu_nodes_and_need_no_huge_pages() {
    let objs = eks_objects("mpijob-slots", "solution");
    let job = &first(&objs, "MPIJob").value;
    let worker = &job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"];
    let tolerates = worker["tolerations"].as_array().is_some_and(|t| {
        t.iter()
            .any(|t| t["key"] == "nvidia.com/gpu" && t["effect"] == "NoSchedule")
    });
    assert!(tolerates, "{worker}");
    let resources = worker["containers"][0]["resources"].to_string();
    assert!(!resources.contains("hugepages"), "{resources}");
    spec_checks_pass(&State::solution_of("mpijob-slots", "eks").grade("mpijob-slots"));
    let with_huge_pages =
        State::solution_of("mpijob-slots", "eks").edit("MPIJob", "nccl-allreduce", |v| {
            let r = &mut v["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
                [0]["resources"];
            r["requests"]["hugepages-2Mi"] = "5120Mi".into();
            r["limits"]["hugepages-2Mi"] = "5120Mi".into();
        });
    spec_checks_pass(&with_huge_pages.grade("mpijob-slots"));
}

/// Lab 7: one node's job asks for no EFA interfaces.
#[test]
fn optimum_neuron_single_node_eks_answer_requests_no_efa() {
    let objs = eks_objects("optimum-neuron", "solution");
    let job = &first(&objs, "Job").value;
    let resources = job["spec"]["template"]["spec"]["containers"][0]["resources"].to_string();
    assert!(!resources.contains("vpc.amazonaws.com/efa"), "{resources}");
}

/// Lab 9: an image NVIDIA's CUDA tag policy cannot delete (the pods only sleep).
#[test]
fn volcano_gang_eks_answer_uses_no_expiring_cuda_tag() {
    for o in eks_objects("volcano-gang", "solution") {
        let mut values = Vec::new();
        strings(&o.value, "", &mut values);
        for (path, s) in values.iter().filter(|(p, _)| p.ends_with(".image")) {
            assert!(!s.starts_with("nvidia/cuda:"), "{path}: {s}");
        }
    }
    assert!(!params_of("volcano-gang", "eks")["image"].starts_with("nvidia/cuda:"));
}

/// Lab 14: a StorageClass name of the lab's own; any class with the right parameters passes.
#[test]
fn checkpoint_strategy_eks_storage_class_cannot_collide_with_gp3() {
    let objs = eks_objects("checkpoint-strategy", "solution");
    let sc = first(&objs, "StorageClass");
    assert_ne!(sc.name(), "gp3");
    let pvc = &first(&objs, "PersistentVolumeClaim").value;
    assert_eq!(pvc["spec"]["storageClassName"], sc.name());
    // Another name with the same parameters is as right.
    let renamed = State::solution_of("checkpoint-strategy", "eks")
        .edit("StorageClass", sc.name(), |v| {
            v["metadata"]["name"] = "fast-ckpt".into();
        })
        .edit_all("PersistentVolumeClaim", |v| {
            v["spec"]["storageClassName"] = "fast-ckpt".into();
        });
    spec_checks_pass(&renamed.grade("checkpoint-strategy"));
}

/// Lab 15: the zone is the site's; on EKS the starter's EC2NodeClass names the site's node role,
/// its one subnet and the cluster security group, and has room for the labs' images.
#[test]
fn karpenter_single_az_eks_uses_the_sites_zone_role_subnet_and_security_group() {
    let pool = eks_objects("karpenter-single-az", "solution");
    let reqs = first(&pool, "NodePool").value["spec"]["template"]["spec"]["requirements"].clone();
    let zone = reqs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "topology.kubernetes.io/zone")
        .unwrap();
    assert_eq!(zone["values"], serde_json::json!(["eu-north-1b"]));
    let starter = eks_objects("karpenter-single-az", "starter");
    let class = &first(&starter, "EC2NodeClass").value["spec"];
    assert_eq!(class["role"], "labtest-karpenter-node");
    assert_eq!(
        class["subnetSelectorTerms"],
        serde_json::json!([{"id": "subnet-0a1b2c3d4e5f60718"}])
    );
    assert_eq!(
        class["securityGroupSelectorTerms"],
        serde_json::json!([{"id": "sg-0f1e2d3c4b5a69788"}])
    );
    let root = class["blockDeviceMappings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["rootVolume"] == true)
        .unwrap();
    let gi: i64 = root["ebs"]["volumeSize"]
        .as_str()
        .unwrap()
        .trim_end_matches("Gi")
        .parse()
        .unwrap();
    // What `setup eks` gives its own node classes and `doctor` asks for.
    assert!(
        gi >= trainlab::facts::images::root_volume_gib() as i64,
        "{gi}Gi"
    );
    // kind keeps its own zone.
    let kind = files_of("karpenter-single-az", "solution", "kind");
    assert!(kind.iter().any(|(_, t)| t.contains("\"us-west-2a\"")));
}

// ---- lab 2: the memory budget of the EKS answer, from its own command line ----

/// Bytes of activations one transformer layer keeps per micro-batch (Korthikanti et al. 2022,
/// Reducing Activation Recomputation in Large Transformer Models, arXiv:2205.05198, the
/// activation memory per layer for each technique): s sequence, b micro-batch, h hidden,
/// a heads, t TP.
fn activation_bytes_per_layer(
    s: f64,
    b: f64,
    h: f64,
    a: f64,
    t: f64,
    sp: bool,
    recompute: Option<RecomputeGranularity>,
) -> f64 {
    match (recompute, sp) {
        // Only each layer's input is kept.
        (Some(RecomputeGranularity::Full), true) => 2.0 * s * b * h / t,
        (Some(RecomputeGranularity::Full), false) => 2.0 * s * b * h,
        (Some(RecomputeGranularity::Selective), true) => 34.0 * s * b * h / t,
        (Some(RecomputeGranularity::Selective), false) => s * b * h * (10.0 + 24.0 / t),
        (None, true) => s * b * h / t * (34.0 + 5.0 * a * s / h),
        (None, false) => s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)),
    }
}

/// Per-GPU bytes on the first pipeline stage of a Megatron-LM GPT run: weights, gradients and
/// Adam states (bf16: 6 + 12 / DP with the distributed optimizer, else 18), plus the activations
/// of the PP micro-batches 1F1B keeps in flight there.
fn first_stage_bytes(argv: &[String], world: i64) -> (f64, f64) {
    let at = argv
        .iter()
        .position(|a| a.ends_with("pretrain_gpt.py"))
        .expect("pretrain_gpt.py");
    let script = &argv[at + 1..];
    let m = MegatronArgs::from_argv(script).unwrap();
    let int = |s: &Option<trainlab::verify::kit::cmdline::Setting<i64>>, default: i64| {
        s.as_ref()
            .and_then(|s| s.known().copied())
            .unwrap_or(default) as f64
    };
    let on = |s: &Option<trainlab::verify::kit::cmdline::Setting<bool>>| {
        s.as_ref().and_then(|s| s.known().copied()) == Some(true)
    };
    let (l, h, a) = (
        int(&m.num_layers, 0),
        int(&m.hidden_size, 0),
        int(&m.num_attention_heads, 0),
    );
    let (s, b) = (int(&m.seq_length, 0), int(&m.micro_batch_size, 1));
    let (t, p) = (
        int(&m.tensor_model_parallel_size, 1),
        int(&m.pipeline_model_parallel_size, 1),
    );
    let d = world as f64 / (t * p);
    let vocab = Args::new(script.iter().cloned())
        .int(&["vocab-size"])
        .unwrap()
        .and_then(|s| s.known().copied())
        .unwrap_or(50257) as f64;
    assert!(on(&m.bf16), "the budget below is bf16's");
    let per_param = if on(&m.use_distributed_optimizer) {
        6.0 + 12.0 / d
    } else {
        18.0
    };
    let layers = l / p;
    let params = layers * 12.0 * h * h / t + (vocab + s) * h / t;
    let recompute = if on(&m.recompute_activations) {
        Some(RecomputeGranularity::Selective)
    } else {
        m.recompute_granularity
            .as_ref()
            .and_then(|g| g.known().cloned())
    };
    let sp = on(&m.sequence_parallel);
    let micro_batches = int(&m.global_batch_size, 0) / (b * d);
    let in_flight = p.min(micro_batches);
    let act = activation_bytes_per_layer(s, b, h, a, t, sp, recompute) * layers * in_flight;
    (params * per_param, act)
}

/// The EKS answer's pods × --nproc_per_node.
fn world_of(job: &Value) -> i64 {
    let specs = &job["spec"]["pytorchReplicaSpecs"];
    let pods: i64 = ["Master", "Worker"]
        .iter()
        .map(|r| specs[r]["replicas"].as_i64().unwrap_or(0))
        .sum();
    let args = specs["Master"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap();
    let nproc: i64 = args
        .iter()
        .find_map(|a| a.as_str()?.strip_prefix("--nproc_per_node="))
        .unwrap()
        .parse()
        .unwrap();
    pods * nproc
}

#[test]
fn parallelism_3d_eks_answer_fits_80_gb_with_its_activations() {
    let objs = eks_objects("parallelism-3d", "solution");
    let job = &first(&objs, "PyTorchJob").value;
    let c = &job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0];
    let argv: Vec<String> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .chain(c["args"].as_array().unwrap())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let world = world_of(job);
    let (states, acts) = first_stage_bytes(&argv, world);
    // An H100 80GB: 81,559 MiB (GPU feature discovery's nvidia.com/gpu.memory).
    let gpu = 81_559.0 * 1_048_576.0;
    let total = states + acts;
    let gib = |x: f64| x / 1_073_741_824.0;
    eprintln!(
        "world {world}: states {:.1} GiB + activations {:.1} GiB = {:.1} GiB of {:.1} GiB",
        gib(states),
        gib(acts),
        gib(total),
        gib(gpu)
    );
    // Room for the CUDA context, NCCL's buffers and the allocator: at least a fifth left.
    assert!(total <= 0.8 * gpu, "{:.1} GiB", gib(total));
    // The budget itself tells the quiz's 8-node layout apart: it does not fit.
    let mut eight: Vec<String> = argv.clone();
    for a in &mut eight {
        if a.starts_with("--pipeline-model-parallel-size") {
            *a = "--pipeline-model-parallel-size=4".into();
        }
    }
    let (s8, a8) = first_stage_bytes(&eight, 64);
    assert!(s8 + a8 > gpu, "{:.1} GiB", gib(s8 + a8));
    // And the lab's EKS parameters say the same layout as the answer.
    let p = params_of("parallelism-3d", "eks");
    assert_eq!(p["nodes"].parse::<i64>().unwrap() * 8, world);
}

/// `trainlab lint`: a token no site can fill is a problem naming the file; the shipped labs have
/// none (they lint clean with kind's values on both profiles).
#[test]
fn lint_refuses_an_unknown_site_value_and_passes_the_shipped_tokens() {
    let rel = "solution-eks/fsx-training-data.yaml";
    let problems = lint_after_edit("fsx-lustre", rel, |t| {
        t.replace("${site.subnet_id}", "${site.vpc_subnet}")
    });
    assert!(
        problems
            .iter()
            .any(|p| p.contains(rel) && p.contains("unknown site value `${site.vpc_subnet}`")),
        "{problems:?}"
    );
}

/// What `lint` says of `lab` once its file `rel` is edited by `edit` (the lab as shipped lints
/// clean).
fn lint_after_edit(lab: &str, rel: &str, edit: impl FnOnce(&str) -> String) -> Vec<String> {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(lab).unwrap();
    let v = trainlab::labs::verifier_for(&b.lab.id).unwrap();
    assert_eq!(trainlab::verify::lint_lab(b, Some(v)), Vec::<String>::new());
    let mut broken = b.clone();
    let text = edit(&broken.files[rel]);
    broken.files.insert(rel.to_string(), text);
    trainlab::verify::lint_lab(&broken, Some(v))
}

/// `trainlab lint`: `start` writes the draft as it is, so a site token in a draft is a problem.
#[test]
fn lint_refuses_a_site_token_in_a_draft() {
    let rel = "draft/nodepool.yaml";
    let problems = lint_after_edit("karpenter-single-az", rel, |t| {
        format!("{t}\n# zone: ${{site.zone}}\n")
    });
    assert!(
        problems
            .iter()
            .any(|p| p.contains(rel) && p.contains("in the draft")),
        "{problems:?}"
    );
}

/// `start` and `solve` refuse a missing site value before they contact any cluster: the refusal
/// names the `--param`, not an unreachable API server.
#[test]
fn start_and_solve_refuse_a_missing_site_value_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["start", "15", "--profile", "eks", "--context", CONTEXT],
        vec!["solve", "8", "--profile", "eks", "--context", CONTEXT],
    ] {
        let (code, out, err) = solve(dir.path(), &args);
        assert_eq!(code, 2, "{args:?}\n{out}\n{err}");
        assert!(err.contains("--param "), "{args:?}: {err}");
        assert!(!err.contains("kubeconfig"), "{args:?}: {err}");
    }
}

/// Images that cannot use EFA from a container: no EFA libraries, no aws-ofi-nccl plugin.
const NO_OFI_NCCL: &[&str] = &[
    "ghcr.io/slinkyproject/slurmd",
    "busybox",
    "docker.io/library/alpine",
    "python",
];

#[test]
fn no_eks_answer_requests_efa_for_an_image_without_the_ofi_plugin() {
    let catalog = Catalog::embedded().unwrap();
    let mut found = Vec::new();
    for b in &catalog.labs {
        for o in eks_objects(&b.lab.id, "solution") {
            let mut values = Vec::new();
            strings(&o.value, "", &mut values);
            let text = o.value.to_string();
            if !text.contains("vpc.amazonaws.com/efa") {
                continue;
            }
            for (path, image) in values.iter().filter(|(p, _)| p.ends_with("image")) {
                let repo = image.split(':').next().unwrap_or(image);
                if NO_OFI_NCCL.contains(&repo) {
                    found.push(format!("{} {}{path}: {image}", o.origin, o.display_name()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "EFA requested beside an image that cannot use it:\n{}",
        found.join("\n")
    );
}

#[test]
fn show_fills_the_task_from_the_site_file_or_says_where_a_value_comes_from() {
    let dir = tempfile::tempdir().unwrap();
    let run = |kubeconfig: &Path| {
        let mut c = Command::cargo_bin("trainlab").unwrap();
        c.env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .env("KUBECONFIG", kubeconfig)
            .env("TRAINLAB_SITE_DIR", dir.path())
            .args(["show", "5", "--profile", "eks"]);
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\ncurrent-context: \"{CONTEXT}\"\n"),
    )
    .unwrap();
    let without = run(&kubeconfig);
    assert!(!without.contains("${site."), "{without}");
    assert!(
        without.contains("<zone: from `trainlab setup eks` or --param zone=…>"),
        "{without}"
    );
    let site = Site {
        context: CONTEXT.into(),
        written_by: "test".into(),
        auto_mode: false,
        values: [("zone".to_string(), "eu-north-1b".to_string())]
            .into_iter()
            .collect(),
    };
    site.save_to(&dir.path().join(trainlab::profile::site::file_name(CONTEXT)))
        .unwrap();
    let with = run(&kubeconfig);
    assert!(with.contains("e.g. eu-north-1b"), "{with}");
}
