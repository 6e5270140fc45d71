"""run_clm.py's own argument dataclasses, described for HfArgumentParser.

run_clm.py is not in any PyPI package (not in the transformers wheel nor its sdist, checked for
5.24.0), so its dataclasses are described here: field names, types, defaults, choices and
__post_init__ checks as in huggingface/transformers
examples/pytorch/language-modeling/run_clm.py at commit 00d481d18f914b55e65faa31e82321629691eadb
(the newest copy readable here; it declares check_min_version("4.57.0.dev0")). The copy at the
v5.24.0 tag could not be read here: a field added or renamed since would be judged wrongly.
TrainingArguments itself is the real one from the pinned transformers.
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
