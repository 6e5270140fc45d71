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
    // The labs' pods set CUDA_DEVICE_MAX_CONNECTIONS=1 (Megatron refuses TP > 1 without it); a
    // test about its absence passes it empty.
    c.env("PYTHONDONTWRITEBYTECODE", "1")
        .env("TRAINLAB_STANDIN_SECONDS", "0")
        .env("TRAINLAB_STANDIN_ALLOCATE", "0")
        .env("CUDA_DEVICE_MAX_CONNECTIONS", "1");
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
    run("trainer.py", &with_hf_data(args), env)
}

/// Flags only Megatron-LM's pretrain_gpt.py takes: a line with one is not an HF line.
const MEGATRON_MARKERS: &[&str] = &[
    "--num-layers",
    "--micro-batch-size",
    "--global-batch-size",
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--recompute-activations",
    "--recompute-granularity",
    "--checkpoint-activations",
    "--batch-size",
    "--model-parallel-size",
    "--loss-scale",
    "--initial-loss-scale",
];

/// An HF line (no Megatron-LM flag, no NeMo override) without data gets run_clm.py's required
/// dataset, so a test pins the flags it is about: run_clm refuses a line with no dataset first.
fn with_hf_data<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut a = args.to_vec();
    let flag_of = |w: &str| w.split('=').next().unwrap_or(w).to_string();
    let megatron = args
        .iter()
        .any(|w| MEGATRON_MARKERS.contains(&flag_of(w).as_str()));
    // NeMo's Hydra overrides (`trainer.precision=bf16-mixed`) are no HF line either.
    let nemo = args
        .iter()
        .any(|w| !w.starts_with('-') && w.contains('=') && w.contains('.'));
    let hf = !megatron && !nemo && args.iter().any(|w| w.starts_with("--"));
    let has_data = args.iter().any(|w| {
        ["--dataset_name", "--train_file", "--validation_file"]
            .iter()
            .any(|f| w.starts_with(f))
    });
    if hf && !has_data {
        a.extend(["--dataset_name", "Salesforce/wikitext"]);
    }
    a
}

fn torchrun(args: &[&str], env: &[(&str, &str)]) -> Run {
    run("torchrun", &with_hf_data(args), env)
}

/// What Megatron-LM's pretrain_gpt.py refuses to start without, besides the flags a test is
/// about (the model's shape, a tokenizer, the run's length, a learning rate): each is added
/// only when the command line lacks the flag.
const MEGATRON_NEEDS: &[(&str, Option<&str>)] = &[
    ("--num-layers", Some("24")),
    ("--hidden-size", Some("768")),
    ("--num-attention-heads", Some("12")),
    ("--seq-length", Some("1024")),
    ("--max-position-embeddings", Some("4096")),
    ("--tokenizer-type", Some("NullTokenizer")),
    ("--vocab-size", Some("32000")),
    ("--mock-data", None),
    ("--train-iters", Some("10")),
    ("--lr", Some("1e-4")),
];

/// `args` with [`MEGATRON_NEEDS`] completed.
fn with_needs<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut a = args.to_vec();
    for (flag, value) in MEGATRON_NEEDS {
        if !args
            .iter()
            .any(|w| w == flag || w.starts_with(&format!("{flag}=")))
        {
            a.push(flag);
            a.extend(value);
        }
    }
    a
}

/// The stand-in on a Megatron-LM command line completed with [`MEGATRON_NEEDS`].
fn megatron(args: &[&str], env: &[(&str, &str)]) -> Run {
    trainer(&with_needs(args), env)
}

/// `args` without `flag` (and its value, when it takes one).
fn without<'a>(args: &[&'a str], flag: &str) -> Vec<&'a str> {
    let i = args.iter().position(|w| *w == flag).expect(flag);
    let takes_value = args.get(i + 1).is_some_and(|w| !w.starts_with("--"));
    let mut a = args.to_vec();
    a.drain(i..if takes_value { i + 2 } else { i + 1 });
    a
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
    let r = megatron(MEGATRON_3D, &[("WORLD_SIZE", "8")]);
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
    let r = megatron(MEGATRON_3D, &[("WORLD_SIZE", "6")]);
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
    let r = megatron(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: Number of layers should be divisible by the pipeline-model-parallel size"
    );
}

#[test]
fn heads_not_divisible_by_tp_fail_when_the_model_is_built() {
    let r = megatron(
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
    let r = megatron(&args, &[("WORLD_SIZE", "8")]);
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
    let r = megatron(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 1);
    assert_eq!(r.last_err(), "AssertionError");
}

#[test]
fn megatron_accepts_a_loss_scale_with_bf16_and_ignores_the_initial_one() {
    let mut args = MEGATRON_3D.to_vec();
    args.extend(["--loss-scale", "1024"]);
    let r = megatron(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.field("loss-scaling"), "constant(1024)");

    let mut args = MEGATRON_3D.to_vec();
    args.extend(["--initial-loss-scale", "65536"]);
    let r = megatron(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.field("loss-scaling").starts_with("none("), "{}", r.stdout);

    // fp16 without --loss-scale: the dynamic scaler from --initial-loss-scale.
    let mut args = MEGATRON_3D[..MEGATRON_3D.len() - 1].to_vec();
    args.extend(["--fp16", "--initial-loss-scale", "4096"]);
    let r = megatron(&args, &[("WORLD_SIZE", "8")]);
    assert_eq!(r.field("loss-scaling"), "dynamic(initial=4096)");
}

#[test]
fn megatron_refuses_flags_its_parser_does_not_know() {
    let r = megatron(
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
    let r = megatron(
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
    let r = megatron(
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
    let r = megatron(
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
    let r = megatron(&["--micro-batch-size", "1", "--recompute-activations"], &[]);
    assert_eq!(r.field("checkpointing"), "selective");
    // Megatron prints the replacement and calls exit(): the pod completes without training.
    let r = megatron(
        &["--micro-batch-size", "1", "--checkpoint-activations"],
        &[],
    );
    assert_eq!(r.code, 0);
    assert!(r
        .stdout
        .starts_with("--checkpoint-activations is no longer valid, use --recompute-activations"));
    let r = megatron(&["--batch-size", "4"], &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size instead"
    );
}

/// The last `n` stderr lines, first to last.
fn err_tail(r: &Run, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = r.stderr.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

#[test]
fn megatron_without_a_tokenizer_type_builds_gpt2_bpe_and_stops_without_its_files() {
    let full = with_needs(MEGATRON_3D);
    let ws = [("WORLD_SIZE", "8")];
    // pretrain_gpt.py defaults the type to GPT2BPETokenizer: a bare assert in build_tokenizer,
    // whose statement (above the exception line) is what the log shows.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("termination-log");
    std::fs::write(&log, "").unwrap();
    let r = trainer(
        &without(&full, "--tokenizer-type"),
        &[ws[0], ("TRAINLAB_TERMINATION_LOG", log.to_str().unwrap())],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    let tail = [
        "  File \"megatron/training/tokenizer/tokenizer.py\", line 37, in build_tokenizer",
        "    assert args.vocab_file is not None",
        "AssertionError",
    ];
    assert_eq!(err_tail(&r, 3), tail);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().trim_end(),
        tail.join("\n")
    );
    // With GPT-2's vocabulary and merges it starts.
    let mut gpt2 = without(&without(&full, "--tokenizer-type"), "--vocab-size");
    gpt2.extend([
        "--vocab-file",
        "/data/vocab.json",
        "--merge-file",
        "/data/merges.txt",
    ]);
    let r = trainer(&gpt2, &ws);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // NullTokenizer needs --vocab-size.
    let r = trainer(&without(&full, "--vocab-size"), &ws);
    assert_eq!(r.code, 1);
    assert_eq!(
        err_tail(&r, 2),
        ["    assert args.vocab_size is not None", "AssertionError"]
    );
    // A type Megatron does not know is argparse's refusal.
    let mut bad = without(&full, "--tokenizer-type");
    bad.extend(["--tokenizer-type", "GPT2"]);
    let r = trainer(&bad, &ws);
    assert_eq!(r.code, 2);
    assert!(
        r.last_err()
            .starts_with("trainlab stand-in: error: argument --tokenizer-type: invalid choice: 'GPT2' (choose from 'BertWordPieceLowerCase',"),
        "{}",
        r.stderr
    );
}

#[test]
fn megatron_without_lr_or_a_run_length_stops_at_the_scheduler() {
    let full = with_needs(MEGATRON_3D);
    let ws = [("WORLD_SIZE", "8")];
    // OptimizerParamScheduler: `self.max_lr = float(max_lr)` with args.lr None.
    let r = trainer(&without(&full, "--lr"), &ws);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.last_err(),
        "TypeError: float() argument must be a string or a real number, not 'NoneType'"
    );
    let r = trainer(&without(&full, "--train-iters"), &ws);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.last_err(),
        "Exception: either train-iters or train-samples should be provided."
    );
    let mut samples = without(&full, "--train-iters");
    samples.extend(["--train-samples", "160"]);
    assert_eq!(trainer(&samples, &ws).code, 0);
    let mut both = full.clone();
    both.extend(["--train-samples", "160"]);
    let r = trainer(&both, &ws);
    assert_eq!(
        r.last_err(),
        "AssertionError: expected iteration-based training"
    );
    let mut above = full.clone();
    above.extend(["--min-lr", "1e-3"]);
    let r = trainer(&above, &ws);
    assert_eq!(r.code, 1);
    assert_eq!(
        err_tail(&r, 2),
        ["    assert args.min_lr <= args.lr", "AssertionError"]
    );
}

#[test]
fn megatron_needs_the_models_shape() {
    let full = with_needs(MEGATRON_3D);
    let ws = [("WORLD_SIZE", "8")];
    for (flag, message) in [
        (
            "--num-layers",
            "AssertionError: either num-layers or encoder-num-layers should be specified",
        ),
        (
            "--hidden-size",
            "AssertionError: hidden_size argument is None",
        ),
        (
            "--num-attention-heads",
            "AssertionError: num_attention_heads argument is None",
        ),
        (
            "--max-position-embeddings",
            "AssertionError: max_position_embeddings argument is None",
        ),
    ] {
        let r = trainer(&without(&full, flag), &ws);
        assert_eq!((r.code, r.last_err()), (1, message), "{flag}");
    }
    let r = trainer(&without(&full, "--seq-length"), &ws);
    assert_eq!(r.code, 1);
    assert_eq!(
        err_tail(&r, 2),
        [
            "    assert args.encoder_seq_length is not None",
            "AssertionError"
        ]
    );
    let mut short = without(&full, "--max-position-embeddings");
    short.extend(["--max-position-embeddings", "512"]);
    let r = trainer(&short, &ws);
    assert_eq!(
        r.last_err(),
        "AssertionError: max_position_embeddings (512) must be greater than or equal to seq_length (1024)."
    );
    let mut uneven = without(&full, "--hidden-size");
    uneven.extend(["--hidden-size", "1000"]);
    let r = trainer(&uneven, &ws);
    assert_eq!(
        err_tail(&r, 2),
        [
            "    assert args.hidden_size % args.num_attention_heads == 0",
            "AssertionError"
        ]
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
    // `--num_hidden_layers` is no field of run_clm.py or TrainingArguments: run_clm's
    // HfArgumentParser refuses the left-over words, as the real one does (the conformance
    // suite's differential test pins it against transformers 5.24.0).
    let r = trainer(
        &[
            "--num_hidden_layers",
            "8",
            "--per_device_train_batch_size",
            "2",
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.last_err(),
        "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--num_hidden_layers', '8']"
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
        planned_mib(&megatron(&a, &[]))
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
        planned_mib(&megatron(args, &e))
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
    let r = megatron(&args, &[("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", "100")]);
    assert_eq!(planned_mib(&r), 2048.0);
    let r = megatron(
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
    let r = megatron(
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
    args.extend(with_needs(MEGATRON_3D));
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

// --- the labs' Megatron-LM command lines --------------------------------------------------------

/// The PyTorchJob of a lab folder, each file replaced by the same-named file of `overlay` (the
/// `solution-eks/` layout), read by trainlab's manifest reader.
fn lab_job(lab: &str, folder: &str, overlay: Option<&str>) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs").join(lab);
    let mut files = std::collections::BTreeMap::new();
    for dir in std::iter::once(folder).chain(overlay) {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            files.insert(p.file_name().unwrap().to_owned(), p);
        }
    }
    files
        .values()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            trainlab::observe::parse_text(&text, &p.display().to_string()).unwrap()
        })
        .map(|o| (*o.value).clone())
        .find(|v| v["kind"] == "PyTorchJob")
        .unwrap_or_else(|| panic!("no PyTorchJob in labs/{lab}/{folder}"))
}

/// Runs every replica's `torchrun …` through the shim with the PET_* environment the
/// training-operator gives a PyTorchJob's pods; returns each role's run.
fn run_job(job: &serde_json::Value) -> Vec<(String, Run)> {
    let specs = job["spec"]["pytorchReplicaSpecs"].as_object().unwrap();
    let nodes: i64 = specs
        .values()
        .map(|s| s["replicas"].as_i64().unwrap())
        .sum();
    let nproc = job["spec"]["nprocPerNode"]
        .as_str()
        .unwrap_or("auto")
        .to_string();
    let words = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|w| w.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    specs
        .iter()
        .map(|(role, s)| {
            let c = &s["template"]["spec"]["containers"][0];
            let mut argv = words(&c["command"]);
            assert_eq!(argv.first().map(String::as_str), Some("torchrun"), "{role}");
            argv.remove(0);
            argv.extend(words(&c["args"]));
            let gpus: Vec<(String, String)> = c["env"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["name"] == "TRAINLAB_STANDIN_GPUS")
                .map(|e| {
                    (
                        "TRAINLAB_STANDIN_GPUS".into(),
                        e["value"].as_str().unwrap().into(),
                    )
                })
                .collect();
            let mut env: Vec<(&str, &str)> =
                gpus.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let nodes = nodes.to_string();
            env.extend([
                ("PET_NNODES", nodes.as_str()),
                ("PET_NPROC_PER_NODE", nproc.as_str()),
            ]);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            (role.clone(), torchrun(&argv, &env))
        })
        .collect()
}

#[test]
fn the_megatron_labs_solutions_and_drafts_start_as_megatron_would() {
    // The drafts are wrong only in what the lab teaches (TP, PP, precision), which Megatron-LM
    // runs with; every solution, kind and EKS, passes its startup checks.
    for (lab, folder, overlay) in [
        ("01-tensor-parallelism", "solution", None),
        ("01-tensor-parallelism", "solution", Some("solution-eks")),
        ("01-tensor-parallelism", "draft", None),
        ("02-parallelism-3d", "solution", None),
        ("02-parallelism-3d", "solution", Some("solution-eks")),
        ("02-parallelism-3d", "draft", None),
        ("10-bf16", "solution", None),
        ("10-bf16", "solution", Some("solution-eks")),
        ("10-bf16", "draft", None),
    ] {
        for (role, r) in run_job(&lab_job(lab, folder, overlay)) {
            let at = format!(
                "labs/{lab}/{}{folder} {role}",
                overlay.map_or(String::new(), |o| format!("{o} over "))
            );
            assert_eq!(r.code, 0, "{at}: {}", r.stderr);
            assert!(r.stdout.contains(": megatron world="), "{at}: {}", r.stdout);
        }
    }
}

#[test]
fn the_megatron_labs_solutions_without_a_tokenizer_or_lr_fail_with_megatrons_message() {
    for lab in ["01-tensor-parallelism", "02-parallelism-3d", "10-bf16"] {
        for (flag, last) in [
            ("--tokenizer-type", "AssertionError"),
            (
                "--lr",
                "TypeError: float() argument must be a string or a real number, not 'NoneType'",
            ),
        ] {
            let mut job = lab_job(lab, "solution", None);
            for spec in job["spec"]["pytorchReplicaSpecs"]
                .as_object_mut()
                .unwrap()
                .values_mut()
            {
                let args = spec["template"]["spec"]["containers"][0]["args"]
                    .as_array_mut()
                    .unwrap();
                let i = args
                    .iter()
                    .position(|w| {
                        w.as_str()
                            .is_some_and(|w| w == flag || w.starts_with(&format!("{flag}=")))
                    })
                    .unwrap_or_else(|| panic!("{lab}: no {flag}"));
                let joined = args[i].as_str().unwrap().contains('=');
                args.drain(i..if joined { i + 1 } else { i + 2 });
            }
            for (role, r) in run_job(&job) {
                assert_eq!(
                    (r.code, r.last_err()),
                    (1, last),
                    "{lab} {role} without {flag}"
                );
            }
        }
    }
}
