//! The kind profile's trainer stand-in (manifests/trainer-standin): the ConfigMap carries exactly
//! the files, and `trainer.py` / the `torchrun` shim accept, refuse and size activation memory
//! the way the README's contract says (run with the machine's python3).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/trainer-standin")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The last stderr line: where the real tool's exception line is.
    fn last_err(&self) -> &str {
        self.stderr.lines().last().unwrap_or("")
    }

    /// The `key=value` of the success summary line.
    fn field(&self, key: &str) -> String {
        let line = self
            .stdout
            .lines()
            .find(|l| l.starts_with("trainlab stand-in (not a real trainer):"))
            .unwrap_or_else(|| panic!("no summary line:\n{}\n{}", self.stdout, self.stderr));
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key}= in {line}"))
            .to_string()
    }
}

/// Runs `python3 <dir>/<program> args` with a clean launcher environment; `env` adds to it.
fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new("python3");
    c.arg(dir().join(program)).args(args);
    for k in [
        "WORLD_SIZE",
        "PET_NNODES",
        "PET_NPROC_PER_NODE",
        "PET_NODE_RANK",
        "PET_STANDALONE",
        "TRAINLAB_STANDIN_GPUS",
        "TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER",
        "TRAINLAB_STANDIN_MAX_MB",
        "TRAINLAB_TERMINATION_LOG",
    ] {
        c.env_remove(k);
    }
    // No __pycache__ next to the files (the torchrun shim imports trainer.py).
    c.env("PYTHONDONTWRITEBYTECODE", "1")
        .env("TRAINLAB_STANDIN_SECONDS", "0")
        .env("TRAINLAB_STANDIN_ALLOCATE", "0");
    for (k, v) in env {
        c.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = c
        .output()
        .expect("python3 must be on PATH to test the stand-in");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

fn trainer(args: &[&str], env: &[(&str, &str)]) -> Run {
    run("trainer.py", args, env)
}

fn torchrun(args: &[&str], env: &[(&str, &str)]) -> Run {
    run("torchrun", args, env)
}

const MEGATRON_3D: &[&str] = &[
    "--tensor-model-parallel-size",
    "2",
    "--pipeline-model-parallel-size",
    "2",
    "--num-layers",
    "24",
    "--num-attention-heads",
    "16",
    "--micro-batch-size",
    "1",
    "--global-batch-size",
    "16",
    "--bf16",
];

// --- the ConfigMap ------------------------------------------------------------------------------

/// The `data` of the ConfigMap `trainer-standin` in a manifest file, parsed by trainlab's own
/// manifest reader (the one `start`/`solve` apply with).
fn configmap_data(text: &str, origin: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let objs = trainlab::observe::parse_text(text, origin)
        .unwrap_or_else(|e| panic!("{origin}: not a manifest: {e}"));
    objs.into_iter()
        .map(|o| o.value)
        .find(|v| v["kind"] == "ConfigMap" && v["metadata"]["name"] == "trainer-standin")
        .and_then(|v| v["data"].as_object().cloned())
}

#[test]
fn the_configmap_carries_exactly_the_two_files() {
    let text = std::fs::read_to_string(dir().join("configmap.yaml")).unwrap();
    let data = configmap_data(&text, "configmap.yaml").expect("ConfigMap trainer-standin");
    let keys: Vec<&String> = data.keys().collect();
    assert_eq!(keys, ["torchrun", "trainer.py"]);
    for file in ["torchrun", "trainer.py"] {
        let want = std::fs::read_to_string(dir().join(file)).unwrap();
        assert!(
            data[file].as_str() == Some(want.as_str()),
            "configmap.yaml's {file} differs from manifests/trainer-standin/{file}: run build-configmap.sh"
        );
        assert!(want.starts_with("#!/usr/bin/env python3\n"), "{file}");
    }
}

#[test]
fn copies_of_the_configmap_in_labs_are_identical() {
    let text = std::fs::read_to_string(dir().join("configmap.yaml")).unwrap();
    let want = configmap_data(&text, "configmap.yaml").unwrap();
    let labs = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs");
    let mut stack = vec![labs];
    let mut copies = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml")
                && p.file_name().is_some_and(|n| n != "lab.yaml")
            {
                // Lab definitions are not manifests; any manifest holding the ConfigMap is.
                let text = std::fs::read_to_string(&p).unwrap();
                if !(text.contains("kind: ConfigMap") && text.contains("trainer-standin")) {
                    continue;
                }
                if let Some(data) = configmap_data(&text, &p.display().to_string()) {
                    copies += 1;
                    assert!(
                        data == want,
                        "{}: ConfigMap trainer-standin differs from manifests/trainer-standin/configmap.yaml",
                        p.display()
                    );
                }
            }
        }
    }
    eprintln!("{copies} lab copies checked");
}

// --- Megatron-LM --------------------------------------------------------------------------------

#[test]
fn a_valid_3d_layout_reports_tp_pp_dp_and_exits_0() {
    let r = trainer(MEGATRON_3D, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        (r.field("TP"), r.field("PP"), r.field("DP")),
        ("2".into(), "2".into(), "2".into())
    );
    assert_eq!(r.field("precision"), "bf16");
    assert_eq!(r.field("checkpointing"), "none");
    assert_eq!(r.field("world"), "8");
}

#[test]
fn a_world_size_not_divisible_by_tp_x_pp_fails_with_megatrons_assertion() {
    let r = trainer(MEGATRON_3D, &[("WORLD_SIZE", "6")]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.last_err(),
        "AssertionError: world size (6) is not divisible by total_model_size (total_model_size=4)"
    );
    assert!(r.stdout.is_empty(), "no summary on failure: {}", r.stdout);
}

#[test]
fn layers_not_divisible_by_pp_fail() {
    let mut args = MEGATRON_3D.to_vec();
    args[5] = "30"; // --num-layers
    args[3] = "4"; // --pipeline-model-parallel-size
    let r = trainer(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: Number of layers should be divisible by the pipeline-model-parallel size"
    );
}

#[test]
fn heads_not_divisible_by_tp_fail_when_the_model_is_built() {
    let r = trainer(
        &[
            "--tensor-model-parallel-size",
            "8",
            "--num-attention-heads",
            "12",
            "--micro-batch-size",
            "1",
        ],
        &[("WORLD_SIZE", "8")],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "ValueError: num_attention_heads (12) must be a multiple of tensor_model_parallel_size (8)."
    );
}

#[test]
fn a_global_batch_not_divisible_by_micro_batch_times_dp_fails() {
    let mut args = MEGATRON_3D.to_vec();
    args[11] = "3"; // --global-batch-size, DP=2
    let r = trainer(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: global batch size (3) is not divisible by micro batch size (1) times data parallel size (2)"
    );
}

#[test]
fn megatron_bf16_with_fp16_is_a_bare_assertion() {
    let mut args = MEGATRON_3D.to_vec();
    args.push("--fp16");
    let r = trainer(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 1);
    assert_eq!(r.last_err(), "AssertionError");
}

#[test]
fn megatron_accepts_a_loss_scale_with_bf16_and_ignores_the_initial_one() {
    let mut args = MEGATRON_3D.to_vec();
    args.extend(["--loss-scale", "1024"]);
    let r = trainer(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.field("loss-scaling"), "constant(1024)");

    let mut args = MEGATRON_3D.to_vec();
    args.extend(["--initial-loss-scale", "65536"]);
    let r = trainer(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.field("loss-scaling").starts_with("none("), "{}", r.stdout);

    // fp16 without --loss-scale: the dynamic scaler from --initial-loss-scale.
    let mut args = MEGATRON_3D[..MEGATRON_3D.len() - 1].to_vec();
    args.extend(["--fp16", "--initial-loss-scale", "4096"]);
    let r = trainer(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.field("loss-scaling"), "dynamic(initial=4096)");
}

#[test]
fn megatron_refuses_flags_its_parser_does_not_know() {
    let r = trainer(
        &[
            "--tensor_model_parallel_size",
            "2",
            "--micro-batch-size",
            "1",
        ],
        &[],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.last_err(),
        "trainlab stand-in: error: unrecognized arguments: --tensor_model_parallel_size 2"
    );
    let r = trainer(
        &["--micro-batch-size", "1", "--recompute-granularity", "some"],
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.last_err().contains("invalid choice: 'some'"),
        "{}",
        r.stderr
    );
    // Known Megatron flags that change nothing here are accepted.
    let r = trainer(
        &[
            "--micro-batch-size",
            "1",
            "--seq-length",
            "4096",
            "--mock-data",
            "--lr",
            "3e-4",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn megatron_recompute_flags_and_removed_flags() {
    let r = trainer(
        &[
            "--micro-batch-size",
            "1",
            "--recompute-activations",
            "--recompute-method",
            "uniform",
        ],
        &[],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: recompute method is not yet supported for selective recomputing granularity"
    );
    let r = trainer(&["--micro-batch-size", "1", "--recompute-activations"], &[]);
    assert_eq!(r.field("checkpointing"), "selective");
    // Megatron prints the replacement and calls exit(): the pod completes without training.
    let r = trainer(
        &["--micro-batch-size", "1", "--checkpoint-activations"],
        &[],
    );
    assert_eq!(r.code, 0);
    assert!(r
        .stdout
        .starts_with("--checkpoint-activations is no longer valid, use --recompute-activations"));
    let r = trainer(&["--batch-size", "4"], &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size instead"
    );
}

// --- HF Trainer ---------------------------------------------------------------------------------

#[test]
fn hf_bf16_and_fp16_both_true_fail_with_transformers_message() {
    let r = trainer(
        &["--bf16", "True", "--fp16", "true", "--output_dir", "/tmp/o"],
        &[],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "ValueError: At most one of fp16 and bf16 can be True, but not both"
    );
    let r = trainer(
        &["--bf16", "--fp16", "False", "--output_dir", "/tmp/o"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.field("precision"), "bf16");
}

#[test]
fn hf_booleans_take_the_string_to_bool_spellings_only() {
    let r = trainer(&["--bf16", "maybe"], &[]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.last_err(),
        "trainlab stand-in: error: argument --bf16: Truthy value expected: got maybe but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive)."
    );
    let r = trainer(&["--bf16=YES", "--per-device-train-batch-size", "2"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.field("precision"), "bf16");
    assert_eq!(r.field("micro-batch"), "2");
}

#[test]
fn hf_depth_comes_from_run_clms_config_overrides_not_a_num_hidden_layers_flag() {
    let layers = |args: &[&str]| trainer(args, &[]).field("layers");
    // GPT-2's name, and the alias every config maps to it.
    assert_eq!(
        layers(&[
            "--model_type",
            "gpt2",
            "--config_overrides",
            "n_layer=12,n_head=12",
            "--do_train"
        ]),
        "12"
    );
    assert_eq!(
        layers(&[
            "--model_type=llama",
            "--config_overrides=num_hidden_layers=6",
            "--do_train"
        ]),
        "6"
    );
    // `--num_hidden_layers` is no field of run_clm.py or TrainingArguments: a script's own flag,
    // not the depth (the default 24 applies).
    assert_eq!(
        layers(&[
            "--num_hidden_layers",
            "8",
            "--per_device_train_batch_size",
            "2"
        ]),
        "24"
    );
    // config.update_from_string: `int(v)` for an int field.
    let r = trainer(
        &[
            "--model_type",
            "gpt2",
            "--config_overrides",
            "n_layer=many",
            "--do_train",
        ],
        &[],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "ValueError: invalid literal for int() with base 10: 'many'"
    );
}

#[test]
fn hf_config_overrides_with_a_pretrained_model_fail_as_run_clms_model_arguments_do() {
    for other in ["--model_name_or_path", "--config_name"] {
        let r = trainer(
            &[
                other,
                "openai-community/gpt2",
                "--config_overrides",
                "n_layer=24",
                "--do_train",
            ],
            &[],
        );
        assert_eq!(r.code, 1, "{other}");
        assert_eq!(
            r.last_err(),
            "ValueError: --config_overrides can't be used in combination with --config_name or --model_name_or_path"
        );
    }
    let r = trainer(
        &[
            "--model_name_or_path",
            "openai-community/gpt2",
            "--do_train",
            "--bf16",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn mixing_tools_or_naming_none_is_a_usage_error() {
    let r = trainer(
        &[
            "--micro-batch-size",
            "1",
            "--per_device_train_batch_size",
            "4",
        ],
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(r.last_err().contains("mixes"), "{}", r.stderr);
    let r = trainer(&["pretrain_gpt.py"], &[]);
    assert_eq!(r.code, 2);
}

// --- NeMo ---------------------------------------------------------------------------------------

#[test]
fn nemo_overrides_are_checked_like_megatron_core() {
    let base = [
        "megatron_gpt_pretraining.py",
        "trainer.devices=8",
        "trainer.num_nodes=2",
        "model.tensor_model_parallel_size=4",
        "model.num_layers=24",
        "trainer.precision=bf16-mixed",
    ];
    let mut bad = base.to_vec();
    bad.push("model.pipeline_model_parallel_size=3");
    let r = trainer(&bad, &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "RuntimeError: world_size (16) is not divisible by 12"
    );

    let mut good = base.to_vec();
    good.extend([
        "++model.pipeline_model_parallel_size=2",
        "model.activations_checkpoint_granularity=selective",
    ]);
    let r = trainer(&good, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        (r.field("world"), r.field("DP"), r.field("precision")),
        ("16".into(), "2".into(), "bf16".into())
    );
    assert_eq!(r.field("checkpointing"), "selective");
}

// --- the memory model (lab 11) ------------------------------------------------------------------

fn planned_mib(r: &Run) -> f64 {
    r.field("activations")
        .trim_end_matches("MiB")
        .parse()
        .unwrap()
}

#[test]
fn lab_11_defaults_exceed_512mi_without_checkpointing_and_fit_with_it() {
    let limit = 512.0;
    let hf = |extra: &[&str]| {
        let mut a = vec!["--per_device_train_batch_size", "16", "--bf16", "True"];
        a.extend_from_slice(extra);
        trainer(&a, &[])
    };
    let none = planned_mib(&hf(&[]));
    let grad = planned_mib(&hf(&["--gradient_checkpointing"]));
    let act = planned_mib(&hf(&["--activation_checkpointing", "true"]));
    // 16 × 24 × 2 MiB; 16 × (24 × 2/34 + 1) × 2 MiB: each layer's input plus one layer.
    assert_eq!((none, grad, act), (768.0, 77.2, 77.2));
    assert!(none > limit * 1.25, "must be OOM-killed, with a margin");
    assert!(grad < limit * 0.5, "must fit comfortably");

    // Megatron's selective and full recompute at the same batch and depth.
    let meg = |extra: &[&str]| {
        let mut a = vec!["--micro-batch-size", "16", "--num-layers", "24"];
        a.extend_from_slice(extra);
        planned_mib(&trainer(&a, &[]))
    };
    assert_eq!(meg(&[]), 768.0);
    assert_eq!(meg(&["--recompute-activations"]), 192.0);
    assert_eq!(
        meg(&[
            "--recompute-granularity",
            "full",
            "--recompute-method",
            "uniform"
        ]),
        77.2
    );
}

#[test]
fn per_layer_checkpointing_stays_linear_in_the_layers_with_a_smaller_constant() {
    // The lab's note: checkpointing each layer keeps each layer's input, O(layers), not
    // O(√layers) (that is segmented checkpointing).
    let full = |layers: &str| {
        let overrides = format!("n_layer={layers}");
        planned_mib(&trainer(
            &[
                "--model_type",
                "gpt2",
                "--config_overrides",
                &overrides,
                "--per_device_train_batch_size",
                "1",
                "--gradient_checkpointing",
            ],
            &[("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", "34")],
        ))
    };
    // 34 MiB per layer without checkpointing: 2 MiB per layer's input, plus one 34 MiB layer.
    assert_eq!(full("16"), 16.0 * 2.0 + 34.0);
    assert_eq!(full("64"), 64.0 * 2.0 + 34.0);
    let growth = (full("64") - full("16")) / (full("32") - full("16"));
    assert!((growth - 3.0).abs() < 1e-9, "linear, not √: {growth}");
}

#[test]
fn activation_memory_grows_with_batch_and_depth_and_shrinks_with_tp_and_pp() {
    let env = [("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", "0.5")];
    let plan = |args: &[&str], world: &str| {
        let mut e = env.to_vec();
        e.push(("WORLD_SIZE", world));
        planned_mib(&trainer(args, &e))
    };
    let base = plan(&["--micro-batch-size", "4", "--num-layers", "16"], "1");
    assert_eq!(base, 4.0 * 16.0 * 0.5);
    assert!(plan(&["--micro-batch-size", "8", "--num-layers", "16"], "1") > base);
    assert!(plan(&["--micro-batch-size", "4", "--num-layers", "32"], "1") > base);
    let tp2 = [
        "--micro-batch-size",
        "4",
        "--num-layers",
        "16",
        "--tensor-model-parallel-size",
        "2",
    ];
    assert_eq!(plan(&tp2, "2"), base / 2.0);
    let pp2 = [
        "--micro-batch-size",
        "4",
        "--num-layers",
        "16",
        "--pipeline-model-parallel-size",
        "2",
    ];
    assert_eq!(plan(&pp2, "2"), base / 2.0);
}

#[test]
fn activation_memory_is_capped_at_2_gib() {
    let args = ["--micro-batch-size", "64", "--num-layers", "96"];
    let r = trainer(&args, &[("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", "100")]);
    assert_eq!(planned_mib(&r), 2048.0);
    let r = trainer(
        &args,
        &[
            ("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", "100"),
            ("TRAINLAB_STANDIN_MAX_MB", "8192"),
        ],
    );
    assert_eq!(planned_mib(&r), 2048.0, "the env cannot raise the hard cap");
}

#[test]
fn the_planned_memory_is_really_allocated_when_allowed() {
    let r = trainer(
        &[
            "--per_device_train_batch_size",
            "4",
            "--model_type",
            "gpt2",
            "--config_overrides",
            "n_embd=512,n_layer=8",
        ],
        &[
            ("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", "0.125"),
            ("TRAINLAB_STANDIN_ALLOCATE", "1"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(planned_mib(&r), 4.0);
    assert!(
        r.stdout
            .contains("holding 4.0 MiB of activations (8 layer-equivalents per sample)"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_outcome_is_written_to_the_termination_log_when_it_exists() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("termination-log");
    std::fs::write(&log, "").unwrap();
    let r = trainer(
        MEGATRON_3D,
        &[
            ("WORLD_SIZE", "6"),
            ("TRAINLAB_TERMINATION_LOG", log.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().trim_end(),
        r.last_err()
    );
}

// --- the torchrun shim --------------------------------------------------------------------------

#[test]
fn torchrun_takes_its_world_from_the_pet_env_the_training_operator_sets() {
    let mut args = vec!["pretrain_gpt.py"];
    args.extend_from_slice(MEGATRON_3D);
    let pet = [
        ("PET_NNODES", "2"),
        ("PET_NPROC_PER_NODE", "4"),
        ("PET_NODE_RANK", "1"),
    ];
    let r = torchrun(&args, &pet);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.field("world"), "8");
    assert_eq!(r.field("DP"), "2");
    assert!(r.field("launcher").contains("node_rank=1"), "{}", r.stdout);

    // The command line wins over PET_*: 2 x 3 = 6 is not divisible by TP x PP = 4.
    let mut cli = vec!["--nproc_per_node=3"];
    cli.extend_from_slice(&args);
    let r = torchrun(&cli, &pet);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: world size (6) is not divisible by total_model_size (total_model_size=4)"
    );
}

#[test]
fn torchrun_parses_nnodes_ranges_and_nproc_keywords() {
    let hf = ["train.py", "--bf16", "True"];
    let with = |opts: &[&str], env: &[(&str, &str)]| {
        let mut a = opts.to_vec();
        a.extend_from_slice(&hf);
        torchrun(&a, env)
    };
    let r = with(&["--nnodes", "1:4", "--nproc-per-node", "2"], &[]);
    assert_eq!(r.field("world"), "8", "an elastic range uses its maximum");
    let r = with(&["--nnodes", "1:x"], &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "RuntimeError: nnodes=1:x is not in \"MIN:MAX\" format"
    );
    let r = with(&["--nproc-per-node", "gpu"], &[]);
    assert_eq!(r.code, 1);
    assert_eq!(r.last_err(), "ValueError: Cuda is not available.");
    let r = with(
        &["--nproc-per-node", "auto"],
        &[("TRAINLAB_STANDIN_GPUS", "8")],
    );
    assert_eq!(r.field("world"), "8");
    let r = with(&["--nproc-per-node", "many"], &[]);
    assert_eq!(
        r.last_err(),
        "ValueError: Unsupported nproc_per_node value: many"
    );
    let r = with(&["--bogus"], &[]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.last_err(),
        "torchrun: error: unrecognized arguments: --bogus"
    );
    let r = torchrun(&["--standalone"], &[]);
    assert_eq!(r.code, 2, "no script");
    let r = with(
        &[
            "--standalone",
            "--rdzv-backend=c10d",
            "--master_port",
            "29500",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}
