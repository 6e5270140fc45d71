//! run_clm.py's own refusals, for lab tests that show every answer and draft would start: what
//! the script stops on before training (the conformance suite runs the real one on the same
//! lines; this keeps the lab tests self-contained).

use trainlab::verify::kit::cmdline::Args;

/// What run_clm.py itself stops on before training, or that makes it not train (transformers
/// examples/pytorch/language-modeling/run_clm.py: ModelArguments.__post_init__,
/// DataTrainingArguments.__post_init__, the tokenizer and `do_train` in `main`; HfArgumentParser
/// refuses a flag no dataclass has, such as `--num_hidden_layers`).
pub fn refusal(a: &Args) -> Option<&'static str> {
    let model = a.has(&["model_name_or_path"]) || a.has(&["config_name"]);
    if a.has(&["num_hidden_layers"]) {
        Some("Some specified arguments are not used by the HfArgumentParser")
    } else if a.has(&["config_overrides"]) && model {
        Some("--config_overrides can't be used in combination with --config_name or --model_name_or_path")
    } else if !a.has(&["dataset_name"]) && !a.has(&["train_file"]) && !a.has(&["validation_file"]) {
        Some("Need either a dataset name or a training/validation file.")
    } else if !a.has(&["model_name_or_path"]) && !a.has(&["tokenizer_name"]) {
        Some("You are instantiating a new tokenizer from scratch.")
    } else if !model && !a.has(&["model_type"]) {
        Some("no model: --model_name_or_path, --config_name or --model_type")
    } else if !a.has(&["do_train"]) {
        Some("no --do_train: run_clm.py does not train")
    } else {
        None
    }
}
