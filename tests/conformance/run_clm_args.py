"""A COPY of run_clm.py's own argument dataclasses, not the script the EKS answers run.

The EKS answers (labs 11, 12, 14) run examples/pytorch/language-modeling/run_clm.py from
transformers' tag v5.24.0. This file describes run_clm.py's dataclasses (field names, types,
defaults, choices, __post_init__ checks and the argument-only steps of main()) as they are at
huggingface/transformers commit 00d481d18f914b55e65faa31e82321629691eadb, a 4.57 development
commit (it declares check_min_version("4.57.0.dev0")). TrainingArguments itself is the real one
from the pinned transformers 5.24.0.

Why a copy, and why that commit (checked 2026-12-05):
- the script is in no package this machine's registries serve at the pinned version: the
  transformers 5.24.0 wheel has no examples, and its source distribution on PyPI
  (transformers-5.24.0.tar.gz) holds only src/, tests/ and the packaging files;
- the v5.24.0 tag could not be read here: the repository snapshot is 1.33 GB, over what this
  machine may fetch, and the indexed copies of run_clm.py are 4.49 to 4.57 development commits,
  00d481d18f91 the newest.
So a field added, renamed or removed between 4.57.0.dev0 and 5.24.0 would be judged wrongly
here. Replace this file by the v5.24.0 script's own dataclasses when they can be read.
"""

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None, metadata={"help": "checkpoint to start from"})
    model_type: Optional[str] = field(default=None, metadata={"help": "model type when training from scratch"})
    config_overrides: Optional[str] = field(
        default=None, metadata={"help": "key=value,... applied to a from-scratch config"}
    )
    config_name: Optional[str] = field(default=None, metadata={"help": "config name or path"})
    tokenizer_name: Optional[str] = field(default=None, metadata={"help": "tokenizer name or path"})
    cache_dir: Optional[str] = field(default=None, metadata={"help": "download cache"})
    use_fast_tokenizer: bool = field(default=True, metadata={"help": "use a fast tokenizer"})
    model_revision: str = field(default="main", metadata={"help": "model revision"})
    token: str = field(default=None, metadata={"help": "hub token"})
    trust_remote_code: bool = field(default=False, metadata={"help": "run hub code"})
    dtype: Optional[str] = field(
        default=None,
        metadata={"help": "load dtype", "choices": ["auto", "bfloat16", "float16", "float32"]},
    )

    def __post_init__(self):
        # run_clm.py ModelArguments.__post_init__, message as upstream.
        if self.config_overrides is not None and (self.config_name is not None or self.model_name_or_path is not None):
            raise ValueError(
                "--config_overrides can't be used in combination with --config_name or --model_name_or_path"
            )


@dataclass
class DataTrainingArguments:
    dataset_name: Optional[str] = field(default=None, metadata={"help": "datasets-library dataset"})
    dataset_config_name: Optional[str] = field(default=None, metadata={"help": "its configuration"})
    train_file: Optional[str] = field(default=None, metadata={"help": "csv, json or txt training file"})
    validation_file: Optional[str] = field(default=None, metadata={"help": "csv, json or txt eval file"})
    max_train_samples: Optional[int] = field(default=None, metadata={"help": "truncate training examples"})
    max_eval_samples: Optional[int] = field(default=None, metadata={"help": "truncate eval examples"})
    streaming: bool = field(default=False, metadata={"help": "streaming mode"})
    block_size: Optional[int] = field(default=None, metadata={"help": "sequence length after tokenization"})
    overwrite_cache: bool = field(default=False, metadata={"help": "rebuild cached sets"})
    validation_split_percentage: Optional[int] = field(default=5, metadata={"help": "validation split %"})
    preprocessing_num_workers: Optional[int] = field(default=None, metadata={"help": "preprocessing processes"})
    keep_linebreaks: bool = field(default=True, metadata={"help": "keep line breaks in txt files"})

    def __post_init__(self):
        # run_clm.py DataTrainingArguments.__post_init__, messages as upstream (the streaming
        # branch's require_version("datasets>=2.0.0") is about the installed datasets, not the
        # command line, and is left out).
        if self.dataset_name is None and self.train_file is None and self.validation_file is None:
            raise ValueError("Need either a dataset name or a training/validation file.")
        if self.train_file is not None:
            extension = self.train_file.split(".")[-1]
            assert extension in ["csv", "json", "txt"], "`train_file` should be a csv, a json or a txt file."
        if self.validation_file is not None:
            extension = self.validation_file.split(".")[-1]
            assert extension in ["csv", "json", "txt"], "`validation_file` should be a csv, a json or a txt file."


def check_before_training(model_args, data_args, training_args, notes):
    """What run_clm.py main() decides from the arguments alone before it loads data or a model:
    the config (a from-scratch CONFIG_MAPPING[model_type]() with --config_overrides applied by
    PretrainedConfig.update_from_string, which refuses a key the config lacks) and the tokenizer
    (--tokenizer_name or --model_name_or_path, else ValueError). A config or tokenizer named by
    path or hub id is loaded by the pod, not here. Returns the from-scratch config, or None."""
    from transformers import CONFIG_MAPPING

    config = None
    if model_args.config_name or model_args.model_name_or_path:
        notes.append(f"config loaded by the pod: {model_args.config_name or model_args.model_name_or_path}")
    else:
        config = CONFIG_MAPPING[model_args.model_type]()
        if model_args.config_overrides is not None:
            config.update_from_string(model_args.config_overrides)
        notes.append(f"from-scratch {model_args.model_type} config ok")
    if not (model_args.tokenizer_name or model_args.model_name_or_path):
        raise ValueError(
            "You are instantiating a new tokenizer from scratch. This is not supported by this script. "
            "You can do it from another script, save it, and load it from here, using --tokenizer_name."
        )
    if not (training_args.do_train or training_args.do_eval):
        notes.append("neither --do_train nor --do_eval: run_clm.py would load everything and train nothing")
    return config
