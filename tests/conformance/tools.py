"""Adapters from a conformance case to each real tool's own parser and validation.

Each adapter calls the tool's code the way the tool's entry point does and stops where the tool
would need a GPU, a process group, the network or files that only exist in the cluster. Every
such stop, and every value given in place of what the machine lacks, is said next to the code
with the upstream file it follows. Versions: requirements.txt.

A runner's `run(case, tmp)` returns {"verdict": "accept"|"refuse", "message": ..., "notes": [...]}.
A refusal is what the tool's own code raises or exits with (step() reads the traceback to tell);
an exception raised by this file's own code, its stubs included, is not caught and becomes the
judge's "error" verdict.
"""

import importlib
import importlib.util
import json
import os
import sys


class Refused(Exception):
    """The tool refused; message is its own (exception text or argparse error). Raised directly
    only where this file stands in for what the tool does at run time (each such place says
    which upstream code it follows); everything else the tool refuses comes through step()."""


# The packages whose code counts as "the tool" for the case being judged: Adapter.run sets them
# from the adapter's `owners` before check() runs (each case runs in a forked child of its own).
_owners = ()


def step(fn, *args, **kwargs):
    """Runs one of the tool's own functions. The tool's own refusal becomes Refused: a
    SystemExit (argparse's `prog: error: ...`, or Megatron's exit() after printing why), or an
    exception raised in the tool's code. Which code raised it is read from the traceback: the
    innermost frame that is either the tool's (a file of an `owners` package, argparse, which
    the tool's parsers are built on, or run_clm_args.py, this folder's cited copy of run_clm.py)
    or this suite's (the other Python files of this folder) decides. An exception raised in this suite's own code,
    including the stubs given in place of a GPU, a process group or the tokenizer files, or a
    stub missing an attribute the tool asked for, is a fault of the adapter: it is not caught
    here and the judge reports it as an `error`, never as the tool's refusal."""
    try:
        return fn(*args, **kwargs)
    except Refused:
        raise
    except SystemExit as e:
        if raised_by_adapter(e):
            raise
        if e.code in (0, None):
            # Megatron's validate_args calls exit() for --checkpoint-activations after printing
            # why: the program ends before training.
            raise Refused("exited before training (status 0)") from None
        raise Refused("") from None  # argparse printed `prog: error: ...`; the judge reads it
    except Exception as e:
        if raised_by_adapter(e):
            raise
        text = f"{type(e).__name__}: {e}".rstrip(": ")
        if not str(e):
            # A bare `assert` (Megatron's validate_args has many) says nothing: the statement
            # that failed is its reason, so a case can pin it.
            text += where_raised(e)
        raise Refused(text) from None


_HERE = os.path.dirname(os.path.realpath(__file__))
# run_clm_args.py is the tool's (a cited copy of run_clm.py's code); every other Python file of
# this folder is the suite's.
TOOL_FILES = {os.path.join(_HERE, "run_clm_args.py")}
SUITE_FILES = {os.path.join(_HERE, f) for f in os.listdir(_HERE) if f.endswith(".py")} - TOOL_FILES


def package_dirs(names):
    """The folders the installed packages `names` live in."""
    dirs = []
    for name in names:
        spec = importlib.util.find_spec(name)
        for d in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.realpath(d) + os.sep)
    return dirs


def frame_owner(filename, tool_dirs):
    """"tool", "suite" or None (the standard library, pydantic and other shared code)."""
    path = os.path.realpath(filename)
    if path in SUITE_FILES:
        return "suite"
    if path in TOOL_FILES or os.path.basename(path) == "argparse.py" or path.startswith(tuple(tool_dirs)):
        return "tool"
    return None


def defined_in_suite(obj):
    """True when `obj`, or its class, is defined in one of the suite's files (a stub)."""
    for candidate in (obj, type(obj)):
        module = sys.modules.get(getattr(candidate, "__module__", None) or "")
        path = getattr(module, "__file__", None)
        if path and os.path.realpath(path) in SUITE_FILES:
            return True
    return False


def where_raised(e):
    """` at megatron/training/arguments.py:612: assert args.seq_length is not None`: the
    innermost frame of the tool's code, with its source line; empty when there is none."""
    import linecache

    tool_dirs = package_dirs(_owners)
    found = ""
    tb = e.__traceback__
    while tb is not None:
        path = os.path.realpath(tb.tb_frame.f_code.co_filename)
        if frame_owner(path, tool_dirs) == "tool" and os.path.basename(path) != "argparse.py":
            root = next((d for d in tool_dirs if path.startswith(d)), os.path.dirname(path) + os.sep)
            shown = os.path.join(os.path.basename(root.rstrip(os.sep)), path[len(root):])
            source = linecache.getline(path, tb.tb_lineno).strip()
            found = f" at {shown}:{tb.tb_lineno}: {source}"
        tb = tb.tb_next
    return found


def raised_by_adapter(e):
    """True when `e` is a fault of this suite: its innermost frame that is the tool's or the
    suite's is the suite's (step's own frame excluded), or no frame of the tool is on the way,
    or it is an AttributeError on one of this file's stubs (the tool asked a stub for something
    it does not give: the stub is incomplete, the command line is not at fault)."""
    if isinstance(e, AttributeError) and defined_in_suite(getattr(e, "obj", None)):
        return True
    tool_dirs = package_dirs(_owners)
    owners = []
    tb = e.__traceback__.tb_next if e.__traceback__ else None  # skip step() itself
    while tb is not None:
        owners.append(frame_owner(tb.tb_frame.f_code.co_filename, tool_dirs))
        tb = tb.tb_next
    decided = [o for o in owners if o is not None]
    return not decided or decided[-1] == "suite"


def last_error_line(text):
    """argparse's `prog: error: message` (or the last line printed) from captured output."""
    lines = [line for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if "error:" in line:
            return line.strip()
    return lines[-1].strip() if lines else "exited with status 2"


class Adapter:
    """One real tool. What every adapter does the same way lives here, once:
    - load() imports `modules` (the judge calls it before the cases, so a missing package is a
      setup failure, not a case's verdict);
    - run() sets the case's `env`, names the program `program` in argparse's messages (argv[0]),
      calls check() and turns the tool's refusal (Refused) into a refuse verdict.
    A subclass says which modules and program, and check(case, tmp, notes) runs the tool's own
    code on the case."""

    modules = ()
    # The installed packages whose code is the tool (step() counts only their exceptions as its
    # refusal).
    owners = ()
    program = ""

    @classmethod
    def load(cls):
        for module in cls.modules:
            importlib.import_module(module)

    @classmethod
    def run(cls, case, tmp):
        global _owners
        _owners = cls.owners
        notes = []
        apply_env(case)
        sys.argv = [cls.program]
        try:
            cls.check(case, tmp, notes)
        except Refused as e:
            return {"verdict": "refuse", "message": str(e), "notes": notes}
        return {"verdict": "accept", "message": "", "notes": notes}

    @staticmethod
    def check(case, tmp, notes):
        raise NotImplementedError


def materialize_files(case, tmp, argv):
    """`files` (path as the pod sees it → content): writes each under tmp and points the argv at
    it, so a `--deepspeed /etc/ds/ds.json` from a ConfigMap is read as the pod would read it."""
    files = case.get("files") or {}
    mapping = {}
    for i, (path, content) in enumerate(sorted(files.items())):
        local = os.path.join(tmp, f"file{i}-{os.path.basename(path)}")
        with open(local, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        mapping[path] = local
    out = []
    for word in argv:
        if word in mapping:
            out.append(mapping[word])
        elif "=" in word and word.split("=", 1)[1] in mapping:
            flag, value = word.split("=", 1)
            out.append(f"{flag}={mapping[value]}")
        else:
            out.append(word)
    return out


def apply_env(case):
    for k, v in (case.get("env") or {}).items():
        os.environ[str(k)] = str(v)


# --------------------------------------------------------------------------------------------
# torchrun (torch/distributed/run.py at torch 2.15.0)


class Torchrun(Adapter):
    modules = ("torch.distributed.run",)
    owners = ("torch",)
    program = "torchrun"

    @staticmethod
    def check(case, tmp, notes):
        import torch
        import torch.distributed.run as tr

        gpus = int(case.get("gpus", 8))
        pretend_gpus(torch, gpus)
        notes.append(f"node GPUs given as {gpus} (this machine has none)")
        args = step(tr.parse_args, list(case["argv"]))
        # main() is parse_args + run(); run() ends in elastic_launch(config, entrypoint)(*args),
        # which starts the workers. Everything before it (rendezvous defaults, nnodes MIN:MAX,
        # nproc_per_node resolution, rdzv_conf, logs specs) runs for real; the launch is
        # replaced by a recorder.
        launched = {}

        def record_launch(config, entrypoint):
            launched["config"] = config
            launched["entrypoint"] = entrypoint
            return lambda *a: launched.setdefault("args", a)

        tr.elastic_launch = record_launch
        step(tr.run, args)
        cfg = launched["config"]
        notes.append(f"nnodes {cfg.min_nodes}:{cfg.max_nodes}, nproc_per_node {cfg.nproc_per_node}")


def pretend_gpus(torch, count):
    """torchrun resolves `--nproc-per-node gpu|auto` from the node's devices
    (run.py determine_local_world_size: torch.cuda.is_available/device_count, and
    torch.accelerator for `auto`). The pods run on GPU nodes; this machine has none, so the
    case's `gpus` (default 8) stands in for the node's device count."""

    class Cuda:
        type = "cuda"

    torch.cuda.is_available = lambda: count > 0
    torch.cuda.device_count = lambda: count
    torch.accelerator.is_available = lambda: count > 0
    torch.accelerator.device_count = lambda: count
    torch.accelerator.current_accelerator = lambda *a, **k: Cuda()


def pretend_gpu_arch(torch, major):
    """validate_args reads the GPU's compute capability to pick defaults and warnings
    (megatron/training/arguments.py: `get_device_arch_version() < 10` for TP/CP > 1, `>= 10` for
    FSDP stream groups; `torch.cuda.get_device_capability()` with --moe-grouped-gemm;
    get_device_arch_version is megatron/training/utils/common_utils.py →
    torch.cuda.get_device_properties(cuda:0).major). This machine has no GPU; the case's
    `gpu_arch` stands in (default 9: H100, the p5 instances the EKS labs name)."""

    class Props:
        name = f"GPU with compute capability {major}.0"
        minor = 0
        total_memory = 80 * 2**30
        multi_processor_count = 132

    Props.major = major
    torch.cuda.get_device_properties = lambda *a, **k: Props()
    torch.cuda.get_device_capability = lambda *a, **k: (major, 0)


# --------------------------------------------------------------------------------------------
# Megatron-LM (megatron-core 0.19.0 wheel, megatron/training/; pretrain_gpt.py at core_v0.19.0)


class Megatron(Adapter):
    modules = (
        "megatron.training.arguments",
        "megatron.training.argument_utils",
        "megatron.training.training",
    )
    owners = ("megatron",)
    program = "pretrain_gpt.py"

    @staticmethod
    def check(case, tmp, notes):
        import torch
        from megatron.training.argument_utils import (
            gpt_config_from_args,
            pretrain_cfg_container_from_args,
        )
        from megatron.training.arguments import parse_and_validate_args
        from megatron.training.training import get_optimizer_param_scheduler

        world = int(case.get("world_size", 1))
        # parse_args reads the world size and rank from the environment as torchrun sets them
        # (megatron/training/arguments.py parse_args: `args.rank = int(os.getenv('RANK', '0'))`,
        # `args.world_size = int(os.getenv("WORLD_SIZE", '1'))`). Rank 0 of `world` ranks.
        os.environ["WORLD_SIZE"] = str(world)
        os.environ["RANK"] = "0"
        os.environ["LOCAL_RANK"] = "0"
        notes.append(f"world size {world}, rank 0")
        pretend_gpu_arch(torch, int(case.get("gpu_arch", 9)))
        guard_tokenizer_loading(notes)

        # pretrain_gpt.py's __main__ (core_v0.19.0, lines 512-522): parse_and_validate_args
        # with args_defaults={'tokenizer_type': 'GPT2BPETokenizer'} (extra_args_provider is
        # modelopt's, None when nvidia-modelopt is absent, as here), then gpt_config_from_args
        # (builds the TransformerConfig: heads % TP and friends) and
        # pretrain_cfg_container_from_args (optimizer, scheduler, checkpoint configs).
        # parse_and_validate_args also runs set_global_variables: the micro-batch calculator
        # (global batch divisibility) and build_tokenizer.
        sys.argv = [Megatron.program, *materialize_files(case, tmp, case["argv"])]
        args = step(
            parse_and_validate_args,
            extra_args_provider=None,
            args_defaults={"tokenizer_type": "GPT2BPETokenizer"},
        )
        model_cfg = step(gpt_config_from_args, args)
        step(pretrain_cfg_container_from_args, args, model_cfg)
        # pretrain() itself starts torch.distributed with NCCL and builds the model on CUDA:
        # not here. Of what it does, the learning-rate scheduler needs neither (training.py
        # get_optimizer_param_scheduler → OptimizerParamScheduler: train-iters/samples given,
        # `float(max_lr)`, max_lr >= min_lr), so it is built over a one-parameter CPU optimizer
        # in place of the model's.
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
        step(get_optimizer_param_scheduler, optimizer)
        notes.append(
            f"TP {args.tensor_model_parallel_size} PP {args.pipeline_model_parallel_size} "
            f"DP {args.data_parallel_size} tokenizer {args.tokenizer_type}"
        )


def guard_tokenizer_loading(notes):
    """build_tokenizer (megatron/core/tokenizers/utils/build_tokenizer.py) runs for real: its
    dispatch refuses an unsupported --tokenizer-type. What it then loads are files in the image
    or on a volume, or downloads: MegatronTokenizer.from_pretrained is wrapped so that
      - NullTokenizer (no files) is built for real;
      - GPT2BPETokenizer/BertWordPiece* without --vocab-file is refused: core_v0.19.0 downloads
        the vocabulary at run time (megatron/core/tokenizers/text/libraries/
        megatron_hf_tokenizer.py _get_vocab_file → _download, with the `wget` module), which
        this suite does not count as a runnable command line (and core_v0.12-0.16, e.g.
        Megatron-LM in nvcr.io/nvidia/nemo:25.04, stop with a bare AssertionError on
        `args.vocab_file is None`: megatron/training/tokenizer/tokenizer.py lines 36-38);
      - a library that loads a model file (huggingface, sentencepiece, tiktoken, sft) without
        --tokenizer-model is refused (it would load `None`);
      - otherwise the files are not read and a GPT-2-sized vocabulary (50257, or --vocab-size)
        stands in for the padded vocabulary size, which no check here depends on."""
    import megatron.core.tokenizers.utils.build_tokenizer as bt

    real = bt.MegatronTokenizer

    class Loaded:
        def __init__(self, vocab_size):
            self.vocab_size = vocab_size

    class Guarded:
        @staticmethod
        def from_pretrained(tokenizer_path=None, metadata_path=None, **kwargs):
            library = metadata_path.get("library") if isinstance(metadata_path, dict) else None
            if library in ("null-text", "null-multimodal"):
                return real.from_pretrained(tokenizer_path=tokenizer_path, metadata_path=metadata_path, **kwargs)
            if library == "megatron" and not kwargs.get("vocab_file"):
                raise Refused(
                    f"{tokenizer_path} without --vocab-file: Megatron downloads the vocabulary at "
                    "run time (core_v0.19.0 megatron_hf_tokenizer.py _download; core_v0.12-0.16: "
                    "AssertionError on vocab_file None)"
                )
            if library in ("huggingface", "sentencepiece", "tiktoken", "sft") and not tokenizer_path:
                raise Refused(f"the {library} tokenizer needs --tokenizer-model (got None)")
            notes.append(f"tokenizer files not read here: {tokenizer_path or kwargs.get('vocab_file')}")
            return Loaded(kwargs.get("vocab_size") or 50257)

    bt.MegatronTokenizer = Guarded


# --------------------------------------------------------------------------------------------
# Hugging Face Trainer scripts (transformers 5.24.0 HfArgumentParser + TrainingArguments)


class HfTrainer(Adapter):
    modules = ("transformers.training_args", "transformers")
    # With --deepspeed, DeepSpeed's config model runs under the Trainer's.
    owners = ("transformers", "deepspeed")
    # The program is the script the case names (run_clm.py, or another: see check).
    program = "train.py"

    @staticmethod
    def check(case, tmp, notes):
        import transformers.training_args as ta
        from transformers import HfArgumentParser, TrainingArguments

        # TrainingArguments.__post_init__ refuses --bf16 unless torch sees a bf16-capable GPU
        # (training_args.py `_validate_args`: "Your setup doesn't support bf16/gpu"). Whether
        # the pods land on such GPUs is a placement question the labs grade separately
        # (lab bf16's bf16-capable-placement); the command line is judged as on such a node.
        ta.is_torch_bf16_gpu_available = lambda: True
        argv = materialize_files(case, tmp, case["argv"])
        script = os.path.basename(case.get("script") or "")
        if script == "run_clm.py":
            import run_clm_args

            sys.argv = ["run_clm.py"]  # the program name in argparse's messages
            parser = HfArgumentParser((run_clm_args.ModelArguments, run_clm_args.DataTrainingArguments, TrainingArguments))
            if len(argv) == 1 and argv[0].endswith(".json"):
                model_args, data_args, training_args = step(parser.parse_json_file, json_file=argv[0])
            else:
                # run_clm.py parses without return_remaining_strings: an argument none of the
                # three dataclasses declares is refused (hf_argparser.py: "Some specified
                # arguments are not used by the HfArgumentParser").
                model_args, data_args, training_args = step(parser.parse_args_into_dataclasses, args=argv)
            model_config = step(run_clm_args.check_before_training, model_args, data_args, training_args, notes)
        else:
            model_config = None
            # Another script: its own arguments are unknown here, so only TrainingArguments'
            # fields are judged and the rest is the script's (listed in the notes).
            sys.argv = [script or "train.py"]
            parser = HfArgumentParser((TrainingArguments,))
            training_args, remaining = step(parser.parse_args_into_dataclasses, args=argv, return_remaining_strings=True)
            if remaining:
                notes.append(f"left to {script or 'the script'}: {' '.join(remaining)}")
        if training_args.deepspeed:
            judge_hf_deepspeed(case, training_args, model_config, notes)
        notes.append(
            f"bf16={training_args.bf16} fp16={training_args.fp16} "
            f"gradient_checkpointing={training_args.gradient_checkpointing}"
        )


# --------------------------------------------------------------------------------------------
# DeepSpeed config JSON (deepspeed 0.19.5 deepspeed/runtime/config.py DeepSpeedConfig), alone or
# as the HF Trainer hands it over


class DeepSpeedConfigTool(Adapter):
    modules = ("deepspeed.runtime.config",)
    owners = ("deepspeed",)

    @staticmethod
    def check(case, tmp, notes):
        validate_deepspeed_config(case["config"], int(case.get("world_size", 1)), notes)


def validate_deepspeed_config(config, world, notes):
    """DeepSpeedConfig(config, mpu) as deepspeed.initialize builds it: the pydantic models
    (DeepSpeedZeroConfig with its offload configs, forbidding unknown keys), the batch
    arithmetic and the precision checks.

    DeepSpeedConfig.__init__ asks deepspeed.comm for the rank and, through the `mpu` object
    (DeepSpeed's model-parallel-unit interface), for the data-parallel world size; without a
    process group it would fall back to world size 1. The case's world_size is the
    data-parallel size the job runs with."""
    import deepspeed.runtime.config as dsc

    dsc.dist.get_rank = lambda *a, **k: 0

    class Mpu:
        @staticmethod
        def get_data_parallel_world_size():
            return world

        @staticmethod
        def get_model_parallel_world_size():
            return 1

        @staticmethod
        def get_model_parallel_rank():
            return 0

        @staticmethod
        def get_data_parallel_rank():
            return 0

    ds = step(dsc.DeepSpeedConfig, json.loads(json.dumps(config)), mpu=Mpu())
    zero = ds.zero_config
    notes.append(
        f"zero stage {int(zero.stage)}, offload_param {getattr(zero.offload_param, 'device', None)}, "
        f"offload_optimizer {getattr(zero.offload_optimizer, 'device', None)}, "
        f"batch {ds.train_batch_size} = {ds.train_micro_batch_size_per_gpu} x {ds.gradient_accumulation_steps} x {world}"
    )


def judge_hf_deepspeed(case, training_args, model_config, notes):
    """`--deepspeed CONFIG` with the HF Trainer: what Trainer does with it before training
    (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig: trainer_config_process
    fills `auto` from TrainingArguments and records mismatches, trainer_config_finalize fills the
    model-size `auto`s and raises on mismatches; deepspeed.initialize then builds
    DeepSpeedConfig). TrainingArguments.__post_init__ only loads the file.

    The processes: TrainingArguments here sees one; each of the job's `world_size` processes
    sees world_size, which `auto` batch sizes multiply by, so process() reads the arguments as a
    launched rank would. The model: run_clm.py's from-scratch config when there is one, else
    the case's `hidden_size` (default 768); it only fills hidden-size `auto` buckets.
    num_training_steps: --max_steps, else 1 (it only fills a scheduler's `auto` steps)."""
    from types import SimpleNamespace

    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    world = int(case.get("world_size", 1))

    class AsLaunched:
        world_size = world

        def __init__(self, args):
            self._args = args

        def __getattr__(self, name):
            return getattr(self._args, name)

    args = AsLaunched(training_args)
    hf_ds = step(HfTrainerDeepSpeedConfig, training_args.deepspeed)
    step(hf_ds.trainer_config_process, args)
    model = SimpleNamespace(config=model_config or SimpleNamespace(hidden_size=int(case.get("hidden_size", 768))))
    steps = training_args.max_steps if training_args.max_steps > 0 else 1
    step(hf_ds.trainer_config_finalize, args, model, steps)
    validate_deepspeed_config(hf_ds.config, world, notes)


# --------------------------------------------------------------------------------------------
# Launchers: accelerate launch (accelerate 1.13.0 commands/launch.py), deepspeed
# (deepspeed/launcher/runner.py)


class AccelerateLaunch(Adapter):
    modules = ("accelerate.commands.launch",)
    owners = ("accelerate",)
    program = "accelerate"

    @staticmethod
    def check(case, tmp, notes):
        import torch
        from accelerate.commands import launch as al

        gpus = int(case.get("gpus", 8))
        pretend_gpus(torch, gpus)
        # No accelerate config file here: HOME points at the empty case folder, so only the
        # command line counts, as in a pod without ~/.cache/huggingface/accelerate.
        os.environ["HOME"] = tmp
        os.environ["HF_HOME"] = os.path.join(tmp, "hf")
        parser = al.launch_command_parser()
        args = step(parser.parse_args, list(case["argv"]))
        # launch_command = _validate_launch_command + the chosen launcher, which starts
        # processes: only the validation runs.
        args, _, _ = step(al._validate_launch_command, args)
        notes.append(f"num_processes {args.num_processes}, num_machines {args.num_machines}, mixed_precision {args.mixed_precision}")


class DeepSpeedLauncher(Adapter):
    modules = ("deepspeed.launcher.runner",)
    owners = ("deepspeed",)
    program = "deepspeed"

    @staticmethod
    def check(case, tmp, notes):
        from deepspeed.launcher import runner

        # runner.main parses, then reads the hostfile and the node's GPUs and starts processes:
        # only its parser runs here.
        args = step(runner.parse_args, list(case["argv"]))
        notes.append(f"num_gpus {args.num_gpus}, num_nodes {args.num_nodes}, script {args.user_script}")


RUNNERS = {
    "torchrun": Torchrun,
    "megatron": Megatron,
    "hf-trainer": HfTrainer,
    "deepspeed-config": DeepSpeedConfigTool,
    "accelerate-launch": AccelerateLaunch,
    "deepspeed-launcher": DeepSpeedLauncher,
}
