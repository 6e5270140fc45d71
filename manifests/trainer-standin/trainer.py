#!/usr/bin/env python3
"""trainlab trainer stand-in: NOT a real trainer.

On the kind profile there are no GPUs, so lab containers run this script (Python 3 standard
library only) instead of Megatron-LM, NeMo or the Hugging Face Trainer. It reads the same
command line, validates it the way those tools do, and fails with their message when the
configuration is wrong, so a misconfiguration becomes real cluster state (a failed pod).
When the configuration is valid it touches the activation memory a real trainer would hold
(see plan_activation_mib), so a pod memory limit that is too small gets a real OOM kill.

Command-line contract (manifests/trainer-standin/README.md has the full table):
  python3 trainer.py <Megatron-LM flags | NeMo key=value overrides | HF TrainingArguments>
  exit 0  valid: one summary line on stdout, then it sleeps TRAINLAB_STANDIN_SECONDS (30)
  exit 1  the real tool's validation error (last line "<ExceptionClass>: <message>")
  exit 2  a command line the real tool's argument parser would refuse (argparse exits 2)
  137     killed by the kernel: the activation memory did not fit the pod's memory limit
"""

import math
import os
import sys
import time

EXIT_INVALID = 1  # an uncaught Python exception exits 1: what a real trainer does on these errors
EXIT_USAGE = 2  # argparse's exit status for a command line it refuses

PROG = "trainlab stand-in"
BANNER = "trainlab stand-in (not a real trainer)"

# Activation memory model (see plan_activation_mib). MiB per sample per transformer layer on
# one GPU without checkpointing; a stand-in constant, not a measurement.
DEFAULT_MIB_PER_SAMPLE_LAYER = 2.0
HARD_CAP_MIB = 2048.0  # never allocate more than 2 GiB, whatever the command line asks for
DEFAULT_LAYERS = 24  # when the command line does not say (stand-in default, see README)
# The share of a layer's activations that is its input: what full checkpointing keeps per layer
# (2sbh of ~34sbh bytes, see plan_activation_mib).
LAYER_INPUT_SHARE = 2 / 34
PAGE = 4096


class Invalid(Exception):
    """The real tool's validation error: `kind` is the Python exception class it raises."""

    def __init__(self, kind, message="", site=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        # (file, line, function, statement) of the raising frame, for a bare `assert`: there the
        # statement Python shows above the exception line is the only clue to what is wrong.
        self.site = site

    def line(self):
        # A bare `assert` raises AssertionError with no message: Python prints the class alone.
        return f"{self.kind}: {self.message}" if self.message else self.kind

    def tail(self):
        """The end of Python's traceback: the raising frame (when known), then the exception."""
        if self.site is None:
            return self.line()
        path, lineno, function, statement = self.site
        return f'  File "{path}", line {lineno}, in {function}\n    {statement}\n{self.line()}'


class Usage(Exception):
    """A command line the real tool's argument parser refuses (argparse: exit status 2)."""


# --- Megatron-LM ---------------------------------------------------------------------------
# Flag names: NVIDIA/Megatron-LM core_v0.19.0 megatron/training/arguments.py (shared research
# upstream-facts.md §12.1). Megatron's parser only knows the dashed spelling.
MEGATRON_INT = {
    "tensor-model-parallel-size",
    "pipeline-model-parallel-size",
    "context-parallel-size",
    "num-layers",
    "num-attention-heads",
    "micro-batch-size",
    "global-batch-size",
    "recompute-num-layers",
    "num-layers-per-virtual-pipeline-stage",
    "num-virtual-stages-per-pipeline-rank",
    # the model's shape, the tokenizer's size and the run's length (see check_model_shape,
    # check_tokenizer and check_schedule)
    "hidden-size",
    "kv-channels",
    "seq-length",
    "encoder-seq-length",
    "encoder-num-layers",
    "max-position-embeddings",
    "vocab-size",
    "train-iters",
    "train-samples",
    # removed flags that still parse and are then refused by validate_args
    "batch-size",
    "model-parallel-size",
}
MEGATRON_FLOAT = {"loss-scale", "initial-loss-scale", "min-loss-scale", "lr", "min-lr"}
# --tokenizer-type's choices: TokenizerConfig.tokenizer_type, a Literal that argparse turns into
# choices (core_v0.19.0 megatron/training/config/training_config.py, argument_utils.py).
TOKENIZER_TYPES = (
    "BertWordPieceLowerCase", "BertWordPieceCase", "GPT2BPETokenizer", "SentencePieceTokenizer",
    "GPTSentencePieceTokenizer", "HuggingFaceTokenizer", "Llama2Tokenizer", "TikTokenizer",
    "MultimodalTokenizer", "NullTokenizer", "NullMultimodalTokenizer", "SFTTokenizer",
)
MEGATRON_CHOICE = {
    "recompute-granularity": ("full", "selective"),
    "recompute-method": ("uniform", "block"),
    "tokenizer-type": TOKENIZER_TYPES,
}
MEGATRON_STR = {"vocab-file", "merge-file", "tokenizer-model"}
MEGATRON_BOOL = {
    "bf16",
    "fp16",
    "recompute-activations",
    "checkpoint-activations",
    "distribute-saved-activations",
    "sequence-parallel",
    "use-distributed-optimizer",
}
# Flags the stand-in accepts and ignores (they do not change what it checks). Anything else
# dashed is refused like Megatron's argparse does, so a misspelled parallelism flag fails the
# pod instead of silently training with TP=1.
MEGATRON_IGNORED = {
    "ffn-hidden-size", "num-query-groups", "group-query-attention",
    "position-embedding-type", "rotary-base", "normalization",
    "swiglu", "untie-embeddings-and-output-weights", "disable-bias-linear", "attention-dropout",
    "hidden-dropout", "init-method-std", "num-experts", "moe-router-topk",
    "expert-model-parallel-size", "use-mcore-models", "use-flash-attn", "transformer-impl",
    "attention-backend", "spec", "data-path", "split", "mock-data",
    "data-cache-path", "num-workers",
    "eval-iters", "eval-interval", "log-interval",
    "save-interval", "save", "load", "ckpt-format", "no-load-optim", "no-load-rng",
    "finetune", "exit-interval", "exit-duration-in-mins", "tensorboard-dir", "wandb-project",
    "wandb-exp-name", "log-throughput", "timing-log-level", "lr-decay-style",
    "lr-decay-iters", "lr-decay-samples", "lr-warmup-iters", "lr-warmup-fraction",
    "lr-warmup-samples", "weight-decay", "clip-grad", "adam-beta1", "adam-beta2", "adam-eps",
    "optimizer", "seed", "loss-scale-window", "hysteresis", "overlap-grad-reduce",
    "overlap-param-gather", "accumulate-allreduce-grads-in-fp32", "attention-softmax-in-fp32",
    "no-masked-softmax-fusion", "no-bias-gelu-fusion", "no-gradient-accumulation-fusion",
    "distributed-backend", "distributed-timeout-minutes", "local-rank", "rampup-batch-size",
    "fp8-format", "fp8-margin", "fp8-amax-history-len", "fp8-amax-compute-algo",
}
MEGATRON_IGNORED_BOOL = {
    "group-query-attention", "swiglu", "untie-embeddings-and-output-weights",
    "disable-bias-linear", "use-mcore-models", "use-flash-attn", "mock-data", "no-load-optim",
    "no-load-rng", "finetune", "log-throughput", "overlap-grad-reduce", "overlap-param-gather",
    "accumulate-allreduce-grads-in-fp32", "attention-softmax-in-fp32",
    "no-masked-softmax-fusion", "no-bias-gelu-fusion", "no-gradient-accumulation-fusion",
}
MEGATRON_ONLY = MEGATRON_INT | MEGATRON_FLOAT | set(MEGATRON_CHOICE) | MEGATRON_STR | (
    MEGATRON_BOOL - {"bf16", "fp16"}
) | MEGATRON_IGNORED

# --- Hugging Face TrainingArguments -----------------------------------------------------------
# Field names: transformers 5.24 TrainingArguments (upstream-facts.md §13), plus the
# ModelArguments / DataTrainingArguments of transformers' examples/pytorch/language-modeling/
# run_clm.py (model_type, config_overrides, tokenizer_name, dataset_name, train_file, ...).
# HfArgumentParser accepts `--x_y` and `--x-y` for every field. The model's depth is not a flag
# of either: run_clm reads it from the model's config.json, or from `--config_overrides
# n_layer=N` when it builds a model from `--model_type` (see hf_layers). transformers 5 removed
# `overwrite_output_dir`; like any flag not listed here it is taken as a script's own.
HF_BOOL = {
    "bf16", "fp16", "gradient_checkpointing", "activation_checkpointing", "bf16_full_eval",
    "fp16_full_eval", "use_cpu", "do_train", "do_eval", "tf32",
}
HF_INT = {
    "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
    "num_attention_heads", "max_steps", "save_total_limit", "seed", "dataloader_num_workers",
}
HF_VALUE = {
    "output_dir", "num_train_epochs", "learning_rate", "weight_decay", "warmup_ratio",
    "warmup_steps", "lr_scheduler_type", "logging_steps", "save_steps", "save_strategy",
    "eval_strategy", "eval_steps", "report_to", "deepspeed", "fsdp", "fsdp_config",
    "resume_from_checkpoint", "model_name_or_path", "config_name", "tokenizer_name",
    "dataset_name", "dataset_config_name", "train_file", "validation_file", "block_size",
    "config_overrides", "model_type", "torch_dtype", "optim", "max_grad_norm", "logging_dir", "run_name",
    "gradient_checkpointing_kwargs", "half_precision_backend", "cache_dir",
}
# Names both tools know (--bf16, --seed, --weight-decay/--weight_decay, ...) say nothing about
# which tool a command line is for.
SHARED = {n.replace("_", "-") for n in HF_BOOL | HF_INT | HF_VALUE} & (
    MEGATRON_INT | MEGATRON_FLOAT | set(MEGATRON_CHOICE) | MEGATRON_BOOL | MEGATRON_IGNORED
)
MEGATRON_ONLY = MEGATRON_ONLY - SHARED
HF_ONLY = (HF_BOOL | HF_INT | HF_VALUE) - {n.replace("-", "_") for n in SHARED}
# Every option run_clm.py's HfArgumentParser knows: the init fields of run_clm.py's
# ModelArguments and DataTrainingArguments and of transformers 5.24.0 TrainingArguments
# (training_args.py), as listed by dataclasses.fields() in the conformance venv
# (tests/conformance/run_clm_args.py describes run_clm's two). Any other option is left over,
# and run_clm refuses the whole line (hf_argparser.py parse_args_into_dataclasses).
RUN_CLM_FIELDS = frozenset((
    "accelerator_config", "activation_checkpointing", "activation_checkpointing_kwargs",
    "adam_beta1", "adam_beta2", "adam_epsilon", "auto_find_batch_size",
    "average_tokens_across_devices", "batch_eval_metrics", "bf16", "bf16_full_eval", "block_size",
    "cache_dir", "config_name", "config_overrides", "data_seed", "dataloader_drop_last",
    "dataloader_in_order", "dataloader_multiprocessing_context", "dataloader_num_workers",
    "dataloader_persistent_workers", "dataloader_pin_memory", "dataloader_prefetch_factor",
    "dataset_config_name", "dataset_name", "ddp_backend", "ddp_broadcast_buffers",
    "ddp_bucket_cap_mb", "ddp_find_unused_parameters", "ddp_static_graph", "ddp_timeout", "debug",
    "deepspeed", "disable_tqdm", "do_eval", "do_predict", "do_train", "dtype",
    "enable_jit_checkpoint", "eval_accumulation_steps", "eval_delay", "eval_do_concat_batches",
    "eval_on_start", "eval_steps", "eval_strategy", "eval_use_gather_object", "fp16",
    "fp16_full_eval", "fsdp", "fsdp_config", "full_determinism", "gradient_accumulation_steps",
    "gradient_checkpointing", "gradient_checkpointing_kwargs", "greater_is_better",
    "hub_always_push", "hub_model_id", "hub_private_repo", "hub_revision", "hub_strategy",
    "hub_token", "ignore_data_skip", "include_for_metrics", "include_num_input_tokens_seen",
    "keep_linebreaks", "label_names", "label_smoothing_factor", "learning_rate",
    "length_column_name", "liger_kernel_config", "load_best_model_at_end", "local_rank",
    "log_level", "log_level_replica", "log_on_each_node", "logging_first_step",
    "logging_nan_inf_filter", "logging_steps", "logging_strategy", "lr_scheduler_kwargs",
    "lr_scheduler_type", "max_eval_samples", "max_grad_norm", "max_steps", "max_train_samples",
    "metric_for_best_model", "model_name_or_path", "model_revision", "model_type",
    "neftune_noise_alpha", "num_train_epochs", "optim", "optim_args", "optim_target_modules",
    "output_dir", "overwrite_cache", "parallelism_config", "per_device_eval_batch_size",
    "per_device_train_batch_size", "prediction_loss_only", "preprocessing_num_workers", "project",
    "push_to_hub", "remove_unused_columns", "report_to",
    "restore_callback_states_from_checkpoint", "resume_from_checkpoint", "run_name",
    "save_on_each_node", "save_only_model", "save_steps", "save_strategy", "save_total_limit",
    "seed", "skip_memory_metrics", "streaming", "tf32", "token", "tokenizer_name",
    "torch_compile", "torch_compile_backend", "torch_compile_mode", "torch_empty_cache_steps",
    "trackio_bucket_id", "trackio_space_id", "trackio_static_space_id", "train_file",
    "train_sampling_strategy", "trust_remote_code", "use_cache", "use_cpu", "use_fast_tokenizer",
    "use_liger_kernel", "validation_file", "validation_split_percentage", "warmup_steps",
    "weight_decay",
))
# TrainingArguments save_strategy (trainer_utils.py SaveStrategy): argparse choices.
SAVE_STRATEGIES = ("no", "steps", "epoch", "best")
# transformers/hf_argparser.py string_to_bool: the accepted spellings (upstream-facts.md §13).
TRUTHY = {"yes", "true", "t", "y", "1"}
FALSY = {"no", "false", "f", "n", "0"}


def is_override(tok):
    """A Hydra/NeMo `key.path=value` override (`+`/`++` prefixes allowed), not a flag."""
    if tok.startswith("-") or "=" not in tok:
        return False
    key = tok.split("=", 1)[0].lstrip("+")
    return "." in key and all(p.replace("_", "").isalnum() for p in key.split("."))


def split_flag(tok):
    """`--name=value` -> (name, value); `--name` -> (name, None); anything else -> (None, None)."""
    if not tok.startswith("--") or tok == "--":
        return None, None
    body = tok[2:]
    if "=" in body:
        name, value = body.split("=", 1)
        return name, value
    return body, None


def detect(argv):
    """Which tool this command line is for: 'megatron', 'nemo' or 'hf'."""
    found = {}
    for tok in argv:
        if is_override(tok):
            found.setdefault("nemo", tok)
            continue
        name, value = split_flag(tok)
        if name is None:
            continue
        # Megatron's `_` spelling counts too: its parser then refuses it, as Megatron does.
        if name in MEGATRON_ONLY or name.replace("_", "-") in MEGATRON_ONLY:
            found.setdefault("megatron", "--" + name)
        elif name.replace("-", "_") in HF_ONLY:
            found.setdefault("hf", "--" + name)
    if len(found) > 1:
        shown = ", ".join(f"{k} ({v})" for k, v in sorted(found.items()))
        raise Usage(
            f"the command line mixes {shown}; a real job runs one of Megatron-LM, NeMo or the "
            "HF Trainer"
        )
    if found:
        return next(iter(found))
    if any(split_flag(t)[0] in ("bf16", "fp16") for t in argv):
        # Only the precision flags: the HF Trainer needs nothing else to start.
        return "hf"
    raise Usage(
        "no Megatron-LM flag, NeMo override or HF TrainingArguments flag on the command line"
    )


def parse_int(flag, raw):
    try:
        return int(raw)
    except ValueError:
        # argparse's wording for a bad `type=int` value
        raise Usage(f"argument --{flag}: invalid int value: '{raw}'")


def parse_float(flag, raw):
    try:
        return float(raw)
    except ValueError:
        raise Usage(f"argument --{flag}: invalid float value: '{raw}'")


def parse_megatron(argv):
    a = {
        "tensor-model-parallel-size": 1,
        "pipeline-model-parallel-size": 1,
        "context-parallel-size": 1,
    }
    i = 0
    unrecognized = []
    while i < len(argv):
        tok = argv[i]
        name, value = split_flag(tok)
        i += 1
        if name is None:
            unrecognized.append(tok)
            continue

        def take():
            nonlocal i
            if value is not None:
                return value
            if i >= len(argv) or argv[i].startswith("--"):
                raise Usage(f"argument --{name}: expected one argument")
            i += 1
            return argv[i - 1]

        if name in MEGATRON_BOOL or name in MEGATRON_IGNORED_BOOL:
            if value is not None:
                raise Usage(f"argument --{name}: ignored explicit argument '{value}'")
            a[name] = True
        elif name in MEGATRON_INT:
            a[name] = parse_int(name, take())
        elif name in MEGATRON_FLOAT:
            a[name] = parse_float(name, take())
        elif name in MEGATRON_CHOICE:
            raw = take()
            if raw not in MEGATRON_CHOICE[name]:
                choices = ", ".join(f"'{c}'" for c in MEGATRON_CHOICE[name])
                raise Usage(f"argument --{name}: invalid choice: '{raw}' (choose from {choices})")
            a[name] = raw
        elif name in MEGATRON_STR:
            a[name] = take()
        elif name in MEGATRON_IGNORED:
            take()
        else:
            unrecognized.append(tok)
    if unrecognized:
        raise Usage("unrecognized arguments: " + " ".join(unrecognized))
    return a


def validate_megatron(a, world):
    """Megatron-LM's checks, in the order a run reaches them (upstream-facts.md §12.2)."""
    tp = a["tensor-model-parallel-size"]
    pp = a["pipeline-model-parallel-size"]
    cp = a["context-parallel-size"]
    # megatron/training/arguments.py validate_args: removed flags first.
    if a.get("batch-size") is not None:
        raise Invalid(
            "AssertionError", "--batch-size argument is no longer valid, use --micro-batch-size instead"
        )
    if a.get("model-parallel-size") is not None:
        raise Invalid(
            "AssertionError",
            "--model-parallel-size is no longer valid, use --tensor-model-parallel-size instead",
        )
    if a.get("checkpoint-activations"):
        # validate_args prints this and calls exit() (status 0): the job "completes" untrained.
        return "checkpoint-activations"
    total = tp * pp * cp
    if world % total != 0:
        # arguments.py: assert world_size % total_model_size == 0, f"... ({total_model_size=})"
        raise Invalid(
            "AssertionError",
            f"world size ({world}) is not divisible by total_model_size (total_model_size={total})",
        )
    dp = world // total
    mbs = a.get("micro-batch-size")
    if mbs is None or mbs <= 0:
        raise Invalid("AssertionError")  # bare asserts on micro_batch_size
    gbs = a.get("global-batch-size")
    if gbs is None:
        gbs = mbs * dp  # arguments.py: defaults to micro batch x data parallel size
    elif gbs <= 0:
        raise Invalid("AssertionError")  # bare `assert args.global_batch_size > 0`
    layers = a.get("num-layers")
    vpp = a.get("num-layers-per-virtual-pipeline-stage")
    if layers is not None:
        if vpp is not None:
            if layers % pp != 0:
                raise Invalid(
                    "AssertionError",
                    "number of layers of the model must be divisible pipeline model parallel size",
                )
            if (layers // pp) % vpp != 0:
                raise Invalid(
                    "AssertionError",
                    "number of layers per pipeline stage must be divisible number of layers per "
                    "virtual pipeline stage",
                )
        elif layers % pp != 0:
            raise Invalid(
                "AssertionError", "Number of layers should be divisible by the pipeline-model-parallel size"
            )
    # arguments.py: `if args.fp16: assert not args.bf16` -- a bare assert, no message.
    if a.get("fp16") and a.get("bf16"):
        raise Invalid("AssertionError")
    check_run_length_flags(a)
    check_model_shape(a, cp)
    # arguments.py validate_args (core_v0.19.0 line 1438; the same check at core_v0.12.0): with
    # TP or CP > 1 on GPUs before Blackwell (the stand-in stands for H100/A100) the kernels'
    # overlap needs one CUDA connection.
    if (tp > 1 or cp > 1) and os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1":
        raise Invalid(
            "AssertionError",
            "Using tensor model parallelism or context parallelism require setting the "
            "environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1",
        )
    granularity = a.get("recompute-granularity")
    if a.get("recompute-activations"):
        granularity = "selective"  # --recompute-activations is shorthand for selective
    if granularity == "selective" and a.get("recompute-method") is not None:
        raise Invalid(
            "AssertionError",
            "recompute method is not yet supported for selective recomputing granularity",
        )
    # megatron/core/num_microbatches_calculator.py, when the global variables are set up.
    if gbs % (mbs * dp) != 0:
        raise Invalid(
            "AssertionError",
            f"global batch size ({gbs}) is not divisible by micro batch size ({mbs}) times data "
            f"parallel size ({dp})",
        )
    # set_global_variables builds the tokenizer right after the micro-batch calculator.
    check_tokenizer(a)
    heads = a.get("num-attention-heads")
    # megatron/core/transformer/transformer_config.py __post_init__, when the model is built.
    if heads is not None and heads % tp != 0:
        raise Invalid(
            "ValueError",
            f"num_attention_heads ({heads}) must be a multiple of tensor_model_parallel_size ({tp}).",
        )
    check_schedule(a)
    if a.get("bf16"):
        precision = "bf16"
    elif a.get("fp16"):
        precision = "fp16"
    else:
        precision = "fp32"
    return {
        "framework": "megatron",
        "world": world,
        "tp": tp,
        "pp": pp,
        "cp": cp,
        "dp": dp,
        # validate_args fills num_layers from --encoder-num-layers when only that is given.
        "layers": layers if layers is not None else a.get("encoder-num-layers"),
        "heads": heads,
        "micro_batch": mbs,
        "global_batch": gbs,
        "precision": precision,
        "loss_scaling": megatron_loss_scaling(a, precision),
        "checkpointing": granularity or "none",
    }


# validate_args in core_v0.19.0 megatron/training/arguments.py (line numbers below).
ARGUMENTS_PY = "megatron/training/arguments.py"


def check_run_length_flags(a):
    """Iteration- and sample-based training exclude each other (arguments.py:1236-1253)."""
    if a.get("train-iters") and a.get("train-samples") is not None:
        raise Invalid("AssertionError", "expected iteration-based training")
    if a.get("train-samples") and a.get("train-iters") is not None:
        raise Invalid("AssertionError", "expected sample-based training")


def check_model_shape(a, cp):
    """validate_args' required model arguments and shape rules, in its order
    (arguments.py:1264-1320)."""
    if a.get("num-layers") is not None and a.get("encoder-num-layers") is not None:
        raise Invalid(
            "AssertionError", "cannot have both num-layers and encoder-num-layers specified"
        )
    if a.get("num-layers") is None and a.get("encoder-num-layers") is None:
        raise Invalid(
            "AssertionError", "either num-layers or encoder-num-layers should be specified"
        )
    for flag in ("hidden-size", "num-attention-heads", "max-position-embeddings"):
        if a.get(flag) is None:
            # _check_arg_is_not_none: '{} argument is None'.format(arg)
            raise Invalid("AssertionError", f"{flag.replace('-', '_')} argument is None")
    hidden, heads = a["hidden-size"], a["num-attention-heads"]
    if a.get("kv-channels") is None and heads == 0:
        raise Invalid("ZeroDivisionError", "integer modulo by zero")
    if a.get("kv-channels") is None and hidden % heads != 0:
        raise Invalid(
            "AssertionError",
            site=(ARGUMENTS_PY, 1292, "validate_args",
                  "assert args.hidden_size % args.num_attention_heads == 0"),
        )
    seq = a.get("seq-length")
    if seq is not None and cp > 1 and seq % (cp * 2) != 0:
        raise Invalid(
            "AssertionError",
            "seq-length should be a multiple of 2 * context-parallel-size if "
            "context-parallel-size > 1.",
        )
    if seq is not None and a.get("encoder-seq-length") is not None:
        raise Invalid(
            "AssertionError",
            site=(ARGUMENTS_PY, 1307, "validate_args", "assert args.encoder_seq_length is None"),
        )
    if seq is None:
        seq = a.get("encoder-seq-length")
        if seq is None:
            raise Invalid(
                "AssertionError",
                site=(ARGUMENTS_PY, 1310, "validate_args",
                      "assert args.encoder_seq_length is not None"),
            )
    max_pos = a["max-position-embeddings"]
    if max_pos < seq:
        raise Invalid(
            "AssertionError",
            f"max_position_embeddings ({max_pos}) must be greater than or equal to seq_length "
            f"({seq}).",
        )
    lr, min_lr = a.get("lr"), a.get("min-lr", 0.0)
    if lr is not None and not min_lr <= lr:
        raise Invalid(
            "AssertionError",
            site=(ARGUMENTS_PY, 1320, "validate_args", "assert args.min_lr <= args.lr"),
        )


# The tokenizer: pretrain_gpt.py passes args_defaults={'tokenizer_type': 'GPT2BPETokenizer'}
# (core_v0.19.0 pretrain_gpt.py:514, the same at core_v0.12.0), so no --tokenizer-type means
# GPT-2's BPE tokenizer, which needs its vocabulary files. Built as the Megatron-LM in
# nvcr.io/nvidia/nemo:25.04 builds it: NeMo v2.3.0's requirements/manifest.json pins Megatron-LM
# 3cdfd613 (core_v0.12.0 + 2 commits), whose megatron/training/tokenizer/tokenizer.py
# build_tokenizer asserts what each type needs (bare asserts, lines below). core_v0.19.0's
# build_tokenizer downloads GPT-2's files from the internet instead, which a stand-in cannot.
# Types that load a model the stand-in does not have (HuggingFace, Multimodal, SFT) have no
# such assert and are not checked.
TOKENIZER_PY = "megatron/training/tokenizer/tokenizer.py"
TOKENIZER_NEEDS = {
    "BertWordPieceLowerCase": (("vocab-file", 27),),
    "BertWordPieceCase": (("vocab-file", 32),),
    "GPT2BPETokenizer": (("vocab-file", 37), ("merge-file", 38)),
    "SentencePieceTokenizer": (("tokenizer-model", 41),),
    "GPTSentencePieceTokenizer": (("tokenizer-model", 46),),
    "Llama2Tokenizer": (("tokenizer-model", 51),),
    "TikTokenizer": (("tokenizer-model", 54),),
    "NullTokenizer": (("vocab-size", 66),),
    "NullMultimodalTokenizer": (("vocab-size", 97),),
}


def check_tokenizer(a):
    """Refuses a tokenizer type without the file or size it needs."""
    kind = a.get("tokenizer-type") or "GPT2BPETokenizer"
    for flag, lineno in TOKENIZER_NEEDS.get(kind, ()):
        if a.get(flag) is None:
            raise Invalid(
                "AssertionError",
                site=(TOKENIZER_PY, lineno, "build_tokenizer",
                      f"assert args.{flag.replace('-', '_')} is not None"),
            )


def check_schedule(a):
    """get_optimizer_param_scheduler (core_v0.19.0 megatron/training/training.py:1939) and
    OptimizerParamScheduler.__init__ (megatron/core/optimizer_param_scheduler.py:148-151),
    reached after the model and the optimizer are built."""
    if not a.get("train-iters") and not a.get("train-samples"):
        raise Invalid("Exception", "either train-iters or train-samples should be provided.")
    if a.get("lr") is None:
        # `self.max_lr = float(max_lr)` with max_lr = args.lr = None (Python 3.10+ wording).
        raise Invalid(
            "TypeError", "float() argument must be a string or a real number, not 'NoneType'"
        )
    if a.get("min-lr", 0.0) < 0.0:
        raise Invalid(
            "AssertionError",
            site=("megatron/core/optimizer_param_scheduler.py", 150, "__init__",
                  "assert self.min_lr >= 0.0"),
        )


def megatron_loss_scaling(a, precision):
    """What Megatron does with the loss-scale flags (megatron/core/optimizer/__init__.py):
    --loss-scale gives a constant scaler under fp16 *and* bf16; fp16 without it uses a dynamic
    scaler starting at --initial-loss-scale; bf16 without it uses none (no error either way)."""
    if precision == "fp32":
        return "none"
    if a.get("loss-scale"):
        return f"constant({a['loss-scale']:g})"
    if precision == "fp16":
        return f"dynamic(initial={a.get('initial-loss-scale', 2.0 ** 32):g})"
    if a.get("initial-loss-scale") is not None:
        return "none(--initial-loss-scale unused under bf16)"
    return "none"


# --- NeMo ---------------------------------------------------------------------------------------
# Override names: NeMo 1 Hydra config and NeMo 2 recipe paths (upstream-facts.md §12.3).
def parse_nemo(argv):
    o = {}
    for tok in argv:
        if is_override(tok):
            key, value = tok.split("=", 1)
            o[key.lstrip("+")] = value
    return o


def nemo_value(o, *keys):
    for k in keys:
        if k in o and o[k].lower() not in ("null", "none", "~", ""):
            return o[k]
    return None


def nemo_int(o, *keys):
    raw = nemo_value(o, *keys)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise Invalid("ValueError", f"invalid literal for int() with base 10: '{raw}'")


def validate_nemo(o, env_world):
    tp = nemo_int(o, "model.tensor_model_parallel_size", "trainer.strategy.tensor_model_parallel_size") or 1
    pp = nemo_int(o, "model.pipeline_model_parallel_size", "trainer.strategy.pipeline_model_parallel_size") or 1
    cp = nemo_int(o, "model.context_parallel_size", "trainer.strategy.context_parallel_size") or 1
    raw_devices = nemo_value(o, "trainer.devices")
    # Lightning's "auto" / -1 mean every visible device: the launcher's count (WORLD_SIZE).
    devices = None if raw_devices in (None, "auto", "-1") else nemo_int(o, "trainer.devices")
    nodes = nemo_int(o, "trainer.num_nodes") or 1
    # Lightning's world size is devices x num_nodes; without devices, the launcher's WORLD_SIZE.
    world = devices * nodes if devices else env_world
    total = tp * pp * cp
    if world % total != 0:
        # NeMo runs Megatron core's parallel_state.initialize_model_parallel (§12.2).
        raise Invalid("RuntimeError", f"world_size ({world}) is not divisible by {total}")
    dp = world // total
    layers = nemo_int(o, "model.num_layers", "model.config.num_layers")
    if layers is not None and layers % pp != 0:
        # NeMo's own wording for this rule is unconfirmed; Megatron-LM's is used.
        raise Invalid(
            "AssertionError", "Number of layers should be divisible by the pipeline-model-parallel size"
        )
    heads = nemo_int(o, "model.num_attention_heads", "model.config.num_attention_heads")
    mbs = nemo_int(o, "model.micro_batch_size", "data.micro_batch_size") or 1
    gbs = nemo_int(o, "model.global_batch_size", "data.global_batch_size") or mbs * dp
    if gbs % (mbs * dp) != 0:
        raise Invalid(
            "AssertionError",
            f"global batch size ({gbs}) is not divisible by micro batch size ({mbs}) times data "
            f"parallel size ({dp})",
        )
    if heads is not None and heads % tp != 0:
        raise Invalid(
            "ValueError",
            f"num_attention_heads ({heads}) must be a multiple of tensor_model_parallel_size ({tp}).",
        )
    precision_raw = (nemo_value(o, "trainer.precision") or "32").lower()
    plugins = (nemo_value(o, "trainer.plugins") or "").lower()
    if "bf16" in precision_raw or "bf16" in plugins:
        precision = "bf16"
    elif precision_raw.startswith("16") or "fp16" in plugins:
        precision = "fp16"
    else:
        precision = "fp32"
    granularity = nemo_value(
        o,
        "model.activations_checkpoint_granularity",
        "model.recompute_granularity",
        "model.config.recompute_granularity",
    )
    return {
        "framework": "nemo",
        "world": world,
        "tp": tp,
        "pp": pp,
        "cp": cp,
        "dp": dp,
        "layers": layers,
        "heads": heads,
        "micro_batch": mbs,
        "global_batch": gbs,
        "precision": precision,
        "loss_scaling": "n/a",
        "checkpointing": granularity.lower() if granularity else "none",
    }


# --- Hugging Face Trainer -----------------------------------------------------------------------
def string_to_bool(flag, raw):
    low = raw.lower()
    if low in TRUTHY:
        return True
    if low in FALSY:
        return False
    # transformers/hf_argparser.py string_to_bool, raised through argparse (exit 2).
    raise Usage(
        f"argument --{flag}: Truthy value expected: got {raw} but expected one of yes/no, "
        "true/false, t/f, y/n, 1/0 (case insensitive)."
    )


def parse_hf(argv):
    a = {"per_device_train_batch_size": 8, "unused": []}  # TrainingArguments default
    i = 0
    while i < len(argv):
        tok = argv[i]
        name, value = split_flag(tok)
        i += 1
        if name is None:
            if not tok.endswith(".py"):  # the script path a launcher passes on is no argument
                a["unused"].append(tok)  # argparse leaves a stray word over too
            continue
        field = name.replace("-", "_")
        if field not in RUN_CLM_FIELDS and field.removeprefix("no_") not in RUN_CLM_FIELDS:
            # Not an option of run_clm.py's parser: left over with the word after it.
            a["unused"].append(tok)
            if value is None and i < len(argv) and not argv[i].startswith("-"):
                a["unused"].append(argv[i])
                i += 1
            continue
        field = name.replace("-", "_")
        if field in HF_BOOL:
            # bool fields have nargs="?", const=True: the next token is the value unless it is
            # another option.
            if value is None and i < len(argv) and not argv[i].startswith("-"):
                value = argv[i]
                i += 1
            a[field] = True if value is None else string_to_bool(name, value)
        elif field in HF_INT or field in HF_VALUE:
            if value is None:
                if i >= len(argv) or argv[i].startswith("--"):
                    raise Usage(f"argument --{name}: expected one argument")
                value = argv[i]
                i += 1
            a[field] = parse_int(name, value) if field in HF_INT else value
        elif value is None and i < len(argv) and not argv[i].startswith("-"):
            i += 1  # a script's own `--flag value`: skip its value too
    return a


# The depth keys --config_overrides may set: GPT-2's own name and the alias every config maps
# to it (PretrainedConfig.attribute_map).
LAYER_KEYS = ("n_layer", "num_hidden_layers")


def hf_layers(overrides):
    """The depth run_clm gives a model built from --model_type: the last depth key in
    --config_overrides "k1=v1,k2=v2" (PretrainedConfig.update_from_string, transformers 5.24
    configuration_utils.py: `d = dict(x.split("=") ...)`, then `v = int(v)` for an int field).
    None when it is not set there (the model's own config.json says; the stand-in's default)."""
    depth = None
    for part in (overrides or "").split(","):
        key, _, value = part.partition("=")
        if key in LAYER_KEYS:
            try:
                depth = int(value)
            except ValueError:
                raise Invalid("ValueError", f"invalid literal for int() with base 10: '{value}'")
    return depth


def validate_run_clm_model_args(a):
    """run_clm.py ModelArguments.__post_init__ (transformers examples/pytorch/language-modeling):
    config_overrides only applies to a config built from --model_type. HfArgumentParser builds
    ModelArguments before TrainingArguments, so this comes first."""
    if a.get("config_overrides") is not None and (
        a.get("config_name") is not None or a.get("model_name_or_path") is not None
    ):
        raise Invalid(
            "ValueError",
            "--config_overrides can't be used in combination with --config_name or "
            "--model_name_or_path",
        )


def validate_run_clm_data_args(a):
    """run_clm.py DataTrainingArguments.__post_init__: some data to train on is required."""
    if all(a.get(k) is None for k in ("dataset_name", "train_file", "validation_file")):
        raise Invalid("ValueError", "Need either a dataset name or a training/validation file.")


def validate_save_strategy(a):
    """TrainingArguments save_strategy is an argparse choice: refused while parsing (exit 2)."""
    strategy = a.get("save_strategy", "steps")
    if strategy not in SAVE_STRATEGIES:
        choices = ", ".join(repr(c) for c in SAVE_STRATEGIES)
        raise Usage(
            f"argument --save_strategy/--save-strategy: invalid choice: {strategy!r} (choose from {choices})"
        )


def validate_save_steps(a):
    """With save_strategy "steps" (the default) a save_steps above 1 must be whole
    (transformers 5.24.0 training_args.py TrainingArguments.__post_init__)."""
    raw = a.get("save_steps")
    if a.get("save_strategy", "steps") == "steps" and raw is not None:
        steps = parse_float("save_steps", raw)
        if steps > 1 and steps != int(steps):
            raise Invalid("ValueError", f"--save_steps must be an integer if bigger than 1: {steps}")


def validate_hf(a, world):
    # HfArgumentParser builds ModelArguments, DataTrainingArguments, TrainingArguments in that
    # order (each __post_init__ runs), and only then refuses left-over words.
    validate_save_strategy(a)
    validate_run_clm_model_args(a)
    validate_run_clm_data_args(a)
    validate_save_steps(a)
    # transformers/src/transformers/training_args.py TrainingArguments.__post_init__:
    #   if self.fp16 and self.bf16: raise ValueError("At most one of fp16 and bf16 can be True,
    #   but not both")  (verified in transformers 5.24.0, upstream-facts.md §13)
    # The bf16-support check that runs before it is not reproduced: kind's GPUs are faked.
    if a.get("fp16") and a.get("bf16"):
        raise Invalid("ValueError", "At most one of fp16 and bf16 can be True, but not both")
    if a["unused"]:
        raise Invalid(
            "ValueError",
            f"Some specified arguments are not used by the HfArgumentParser: {a['unused']!r}",
        )
    if a.get("gradient_checkpointing"):
        # transformers 5.24 deprecates the old name (a warning, not an error).
        print(
            "FutureWarning: `gradient_checkpointing` is deprecated and will be removed in v6. "
            "Use `activation_checkpointing` instead.",
            file=sys.stderr,
        )
    layers = hf_layers(a.get("config_overrides"))
    checkpointing = a.get("gradient_checkpointing") or a.get("activation_checkpointing")
    precision = "bf16" if a.get("bf16") else "fp16" if a.get("fp16") else "fp32"
    batch = a["per_device_train_batch_size"]
    return {
        "framework": "hf",
        "world": world,
        "tp": 1,
        "pp": 1,
        "cp": 1,
        "dp": world,
        "layers": layers,
        "heads": a.get("num_attention_heads"),
        "micro_batch": batch,
        "global_batch": batch * world * (a.get("gradient_accumulation_steps") or 1),
        "precision": precision,
        "loss_scaling": "dynamic(GradScaler)" if precision == "fp16" else "none",
        "checkpointing": "full" if checkpointing else "none",
    }


# --- the memory model ---------------------------------------------------------------------------
def env_float(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise Usage(f"{name}={raw!r} is not a number")


def plan_activation_mib(plan):
    """Activation memory one rank holds for a training step, in MiB.

    units (layer-equivalents of activations kept per sample), with L = layers on this rank
    (ceil(layers / PP)):
      no checkpointing              L                 every layer keeps its activations
      selective (Megatron)          ceil(L / 4)       the attention core is recomputed
      full (HF, Megatron, NeMo)     L x 2/34 + 1      each layer keeps only its input, and the
                                                      backward pass recomputes one layer at a time
    A layer's input is 2sbh bytes of the sbh(34 + 5as/h) it keeps without checkpointing
    (Korthikanti et al. 2022, arXiv:2205.05198; the 5as/h attention scores are not kept by
    flash/SDPA attention): per-layer checkpointing stays linear in the layers with a much smaller
    constant, not sqrt(L), which is segmented checkpointing (Chen et al. 2016, arXiv:1604.06174).
    MiB = micro batch x units x TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER (default 2.0) / TP,
    capped at TRAINLAB_STANDIN_MAX_MB (default and hard maximum 2048).
    The shape is what matters: monotone in batch and depth, and checkpointing far smaller.
    """
    per = env_float("TRAINLAB_STANDIN_MB_PER_SAMPLE_LAYER", DEFAULT_MIB_PER_SAMPLE_LAYER)
    cap = min(env_float("TRAINLAB_STANDIN_MAX_MB", HARD_CAP_MIB), HARD_CAP_MIB)
    layers = plan["layers"] or DEFAULT_LAYERS
    on_rank = max(1, math.ceil(layers / plan["pp"]))
    mode = plan["checkpointing"]
    if mode == "none":
        units = on_rank
    elif mode == "selective":
        units = math.ceil(on_rank / 4)
    else:
        units = on_rank * LAYER_INPUT_SHARE + 1
    mib = plan["micro_batch"] * units * max(per, 0.0) / plan["tp"]
    return min(mib, cap), units


def touch(mib):
    """Allocates `mib` MiB and writes one byte per page so the kernel really charges it."""
    chunks = []
    left = int(mib * 1024 * 1024)
    step = 1024 * 1024
    while left > 0:
        n = min(step, left)
        b = bytearray(n)
        pages = (n + PAGE - 1) // PAGE
        b[::PAGE] = b"\x01" * pages
        chunks.append(b)
        left -= n
    return chunks


# --- entry point --------------------------------------------------------------------------------
def termination_log(line):
    """Kubernetes copies /dev/termination-log into the container status (state.terminated.
    message), so graders see the outcome without reading logs. Written only if it exists."""
    path = os.environ.get("TRAINLAB_TERMINATION_LOG", "/dev/termination-log")
    if os.path.isfile(path):
        try:
            with open(path, "w") as f:
                f.write(line + "\n")
        except OSError:
            pass


def env_world():
    raw = os.environ.get("WORLD_SIZE", "1")
    try:
        return max(1, int(raw))
    except ValueError:
        raise Usage(f"WORLD_SIZE={raw!r} is not an integer")


def run(argv, world=None, launcher=None):
    """Validates, prints the summary, allocates, sleeps. Returns the exit status."""
    try:
        mode = detect(argv)
        world = world if world is not None else env_world()
        if mode == "megatron":
            plan = validate_megatron(parse_megatron(argv), world)
        elif mode == "nemo":
            plan = validate_nemo(parse_nemo(argv), world)
        else:
            plan = validate_hf(parse_hf(argv), world)
        if plan == "checkpoint-activations":
            msg = (
                "--checkpoint-activations is no longer valid, use --recompute-activations, or, "
                "for more control, --recompute-granularity and --recompute-method."
            )
            print(msg, flush=True)
            termination_log(msg)
            return 0
        mib, units = plan_activation_mib(plan)
        seconds = env_float("TRAINLAB_STANDIN_SECONDS", 30.0)
    except Usage as e:
        line = f"{PROG}: error: {e}"
        print(line, file=sys.stderr, flush=True)
        termination_log(line)
        return EXIT_USAGE
    except Invalid as e:
        print(f"[{PROG}] the real tool stops here with:", file=sys.stderr)
        print(e.tail(), file=sys.stderr, flush=True)
        termination_log(e.tail())
        return EXIT_INVALID

    summary = (
        f"{BANNER}: {plan['framework']} world={plan['world']} TP={plan['tp']} PP={plan['pp']} "
        f"CP={plan['cp']} DP={plan['dp']} precision={plan['precision']} "
        f"loss-scaling={plan['loss_scaling']} checkpointing={plan['checkpointing']} "
        f"micro-batch={plan['micro_batch']} global-batch={plan['global_batch']} "
        f"layers={plan['layers'] or DEFAULT_LAYERS} activations={mib:.1f}MiB"
    )
    if launcher:
        summary += f" launcher={launcher}"
    print(summary, flush=True)
    termination_log(summary)
    held = []
    if os.environ.get("TRAINLAB_STANDIN_ALLOCATE", "1") != "0":
        held = touch(mib)
        per_sample = f"{units:.2f}".rstrip("0").rstrip(".")
        print(f"{PROG}: holding {mib:.1f} MiB of activations ({per_sample} layer-equivalents per sample)", flush=True)
    time.sleep(max(0.0, seconds))
    del held
    return 0


def main():
    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
