//! Hugging Face `TrainingArguments` as `HfArgumentParser` reads them from a script's arguments,
//! with optimum-neuron's `NeuronTrainingArguments` additions.

use super::super::args::{parse_float, Args};
use super::super::{FlagError, Setting};

/// `--save_strategy` choices (transformers `SaveStrategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveStrategy {
    No,
    Steps,
    Epoch,
    Best,
}

/// `--save_steps`: an integer step count, or a ratio of the total steps when below 1
/// (TrainingArguments docs: "Should be an integer or a float in range `[0,1)`. If smaller than
/// 1, will be interpreted as ratio of total training steps.").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SaveSteps {
    Steps(i64),
    Ratio(f64),
}

/// The `TrainingArguments` fields the labs grade (transformers 5.24 `training_args.py`, read
/// through `HfArgumentParser`: both spellings, `string_to_bool` booleans), plus optimum-neuron's
/// `NeuronTrainingArguments` (huggingface/optimum-neuron v0.4.5
/// `optimum/neuron/trainers/training_args.py`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HfTrainingArgs {
    /// The single `.json`/`.yaml`/`.yml` argument example scripts read their arguments from
    /// instead (transformers examples `run_clm.py`: `len(sys.argv) == 2 and
    /// sys.argv[1].endswith(".json")`); every other field is then None.
    pub config_file: Option<String>,
    pub output_dir: Option<Setting<String>>,
    pub logging_dir: Option<Setting<String>>,
    /// `--deepspeed`: a config path, or inline JSON when it starts with `{`.
    pub deepspeed: Option<Setting<String>>,
    pub resume_from_checkpoint: Option<Setting<String>>,
    pub bf16: Option<Setting<bool>>,
    pub fp16: Option<Setting<bool>>,
    /// Deprecated in transformers 5.24 in favour of `activation_checkpointing`; both work.
    pub gradient_checkpointing: Option<Setting<bool>>,
    pub activation_checkpointing: Option<Setting<bool>>,
    pub per_device_train_batch_size: Option<Setting<i64>>,
    pub gradient_accumulation_steps: Option<Setting<i64>>,
    pub max_steps: Option<Setting<i64>>,
    pub save_strategy: Option<Setting<SaveStrategy>>,
    pub save_steps: Option<Setting<SaveSteps>>,
    pub save_total_limit: Option<Setting<i64>>,
    /// optimum-neuron `--tensor_parallel_size` (default 1; v0.4.5 `training_args.py` l.361).
    pub tensor_parallel_size: Option<Setting<i64>>,
    /// optimum-neuron `--pipeline_parallel_size` (default 1; v0.4.5 `training_args.py` l.368).
    pub pipeline_parallel_size: Option<Setting<i64>>,
    /// optimum-neuron `--zero_1` (default True, v0.4.5 `training_args.py` l.325, so `--no_zero_1`
    /// turns it off).
    pub zero_1: Option<Setting<bool>>,
}

impl HfTrainingArgs {
    pub fn parse(a: &Args) -> Result<HfTrainingArgs, FlagError> {
        if let [only] = a.words() {
            if [".json", ".yaml", ".yml"]
                .iter()
                .any(|ext| only.ends_with(ext))
            {
                return Ok(HfTrainingArgs {
                    config_file: Some(only.clone()),
                    ..HfTrainingArgs::default()
                });
            }
        }
        Ok(HfTrainingArgs {
            config_file: None,
            output_dir: a.string(&["output_dir"])?,
            logging_dir: a.string(&["logging_dir"])?,
            deepspeed: a.string(&["deepspeed"])?,
            resume_from_checkpoint: a.string(&["resume_from_checkpoint"])?,
            bf16: a.hf_bool(&["bf16"], false)?,
            fp16: a.hf_bool(&["fp16"], false)?,
            gradient_checkpointing: a.hf_bool(&["gradient_checkpointing"], false)?,
            activation_checkpointing: a.hf_bool(&["activation_checkpointing"], false)?,
            per_device_train_batch_size: a.int(&["per_device_train_batch_size"])?,
            gradient_accumulation_steps: a.int(&["gradient_accumulation_steps"])?,
            max_steps: a.int(&["max_steps"])?,
            save_strategy: a.parse_with(
                &["save_strategy"],
                "one of no, steps, epoch, best",
                |s| match s {
                    "no" => Some(SaveStrategy::No),
                    "steps" => Some(SaveStrategy::Steps),
                    "epoch" => Some(SaveStrategy::Epoch),
                    "best" => Some(SaveStrategy::Best),
                    _ => None,
                },
            )?,
            // `--save_steps must be an integer if bigger than 1: 1.5` (TrainingArguments
            // `__post_init__`).
            save_steps: a.parse_with(&["save_steps"], "an integer, or a ratio below 1", |s| {
                let v = parse_float(s)?;
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Some(SaveSteps::Steps(v as i64))
                } else if v < 1.0 {
                    Some(SaveSteps::Ratio(v))
                } else {
                    None
                }
            })?,
            save_total_limit: a.int(&["save_total_limit"])?,
            tensor_parallel_size: a.int(&["tensor_parallel_size"])?,
            pipeline_parallel_size: a.int(&["pipeline_parallel_size"])?,
            zero_1: a.hf_bool(&["zero_1"], true)?,
        })
    }

    pub fn from_argv(argv: &[String]) -> Result<HfTrainingArgs, FlagError> {
        HfTrainingArgs::parse(&Args::new(argv.iter().cloned()))
    }

    /// Activation checkpointing as asked: `--activation_checkpointing` (newer name) else
    /// `--gradient_checkpointing`; whichever is written true wins.
    pub fn checkpointing(&self) -> Option<&Setting<bool>> {
        let on = |s: &&Setting<bool>| s.known() == Some(&true);
        self.activation_checkpointing
            .as_ref()
            .filter(on)
            .or_else(|| self.gradient_checkpointing.as_ref().filter(on))
            .or(self.activation_checkpointing.as_ref())
            .or(self.gradient_checkpointing.as_ref())
    }

    /// The `--deepspeed` value when it is inline JSON (transformers accepts a dict or a string
    /// starting with `{`).
    pub fn deepspeed_inline_json(&self) -> Option<&str> {
        self.deepspeed
            .as_ref()
            .and_then(Setting::known)
            .map(String::as_str)
            .filter(|v| v.trim_start().starts_with('{'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::kit::cmdline::{DsConfig, MergedState, ParallelPlan, Precision};

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn hf_training_arguments() {
        let h = HfTrainingArgs::from_argv(&words(
            "--output_dir /fsx/out --logging-dir /fsx/logs --bf16 True --gradient_checkpointing \
             --per-device-train-batch-size 4 --gradient_accumulation_steps 8 --max_steps 1000 \
             --save_strategy steps --save_steps 0.25 --save_total_limit 2 --deepspeed ds.json \
             --resume_from_checkpoint /fsx/out/checkpoint-500",
        ))
        .unwrap();
        assert_eq!(
            h.output_dir.as_ref().unwrap().known().map(String::as_str),
            Some("/fsx/out")
        );
        assert_eq!(
            h.logging_dir.as_ref().unwrap().known().map(String::as_str),
            Some("/fsx/logs")
        );
        assert_eq!(h.bf16.as_ref().unwrap().known(), Some(&true));
        assert_eq!(h.fp16, None);
        assert_eq!(
            h.checkpointing().unwrap().source,
            "--gradient_checkpointing"
        );
        assert_eq!(
            h.per_device_train_batch_size.as_ref().unwrap().known(),
            Some(&4)
        );
        assert_eq!(
            h.gradient_accumulation_steps.as_ref().unwrap().known(),
            Some(&8)
        );
        assert_eq!(h.max_steps.as_ref().unwrap().known(), Some(&1000));
        assert_eq!(
            h.save_strategy.as_ref().unwrap().known(),
            Some(&SaveStrategy::Steps)
        );
        assert_eq!(
            h.save_steps.as_ref().unwrap().known(),
            Some(&SaveSteps::Ratio(0.25))
        );
        assert_eq!(h.save_total_limit.as_ref().unwrap().known(), Some(&2));
        assert_eq!(
            h.deepspeed.as_ref().unwrap().known().map(String::as_str),
            Some("ds.json")
        );
        assert_eq!(h.deepspeed_inline_json(), None);
        assert!(h.resume_from_checkpoint.is_some());
    }

    #[test]
    fn hf_save_steps_and_strategy_rules() {
        let steps = |v: &str| HfTrainingArgs::from_argv(&words(&format!("--save_steps {v}")));
        assert_eq!(
            steps("500").unwrap().save_steps.unwrap().known(),
            Some(&SaveSteps::Steps(500))
        );
        assert_eq!(
            steps("500.0").unwrap().save_steps.unwrap().known(),
            Some(&SaveSteps::Steps(500))
        );
        assert_eq!(
            steps("0.1").unwrap().save_steps.unwrap().known(),
            Some(&SaveSteps::Ratio(0.1))
        );
        assert_eq!(steps("1.5").unwrap_err().flag(), "--save_steps");
        let e = HfTrainingArgs::from_argv(&words("--save_strategy sometimes")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--save_strategy=sometimes: expected one of no, steps, epoch, best"
        );
        for s in ["no", "epoch", "best"] {
            assert!(HfTrainingArgs::from_argv(&words(&format!("--save_strategy={s}"))).is_ok());
        }
    }

    #[test]
    fn hf_checkpointing_names() {
        let h = HfTrainingArgs::from_argv(&words("--activation_checkpointing")).unwrap();
        assert_eq!(
            h.checkpointing().unwrap().source,
            "--activation_checkpointing"
        );
        let h = HfTrainingArgs::from_argv(&words(
            "--activation_checkpointing false --gradient_checkpointing true",
        ))
        .unwrap();
        assert_eq!(
            h.checkpointing().unwrap().source,
            "--gradient_checkpointing"
        );
        let h = HfTrainingArgs::from_argv(&words("--gradient-checkpointing=False")).unwrap();
        assert_eq!(h.checkpointing().unwrap().known(), Some(&false));
        assert_eq!(
            HfTrainingArgs::from_argv(&words("--bf16"))
                .unwrap()
                .checkpointing(),
            None
        );
    }

    #[test]
    fn hf_config_file_instead_of_flags() {
        for f in ["args.json", "conf/train.yaml", "x.yml"] {
            let h = HfTrainingArgs::from_argv(&words(f)).unwrap();
            assert_eq!(h.config_file.as_deref(), Some(f));
            assert_eq!(h.bf16, None);
        }
        assert_eq!(
            HfTrainingArgs::from_argv(&words("--bf16"))
                .unwrap()
                .config_file,
            None
        );
    }

    #[test]
    fn optimum_neuron_arguments() {
        let h = HfTrainingArgs::from_argv(&words(
            "--bf16 --tensor_parallel_size=8 --pipeline_parallel_size 1 --no_zero_1",
        ))
        .unwrap();
        assert_eq!(h.tensor_parallel_size.as_ref().unwrap().known(), Some(&8));
        assert_eq!(h.pipeline_parallel_size.as_ref().unwrap().known(), Some(&1));
        assert_eq!(h.zero_1.as_ref().unwrap().known(), Some(&false));
        let h = HfTrainingArgs::from_argv(&words("--zero_1 true")).unwrap();
        assert_eq!(h.zero_1.as_ref().unwrap().known(), Some(&true));
    }

    #[test]
    fn hf_inline_deepspeed_json() {
        let h = HfTrainingArgs::from_argv(&[
            "--deepspeed".to_string(),
            "{\"zero_optimization\": {\"stage\": 2}}".to_string(),
        ])
        .unwrap();
        assert_eq!(
            h.deepspeed_inline_json(),
            Some("{\"zero_optimization\": {\"stage\": 2}}")
        );
    }

    #[test]
    fn hf_run_clm_with_deepspeed_line() {
        let argv = words(
            "deepspeed --num_gpus 8 examples/pytorch/language-modeling/run_clm.py --model_name_or_path gpt2 \
             --dataset_name wikitext --do_train --per_device_train_batch_size 4 --gradient_accumulation_steps 2 \
             --bf16 --gradient_checkpointing --deepspeed /config/ds_zero3.json --output_dir /fsx/out \
             --save_strategy steps --save_steps 500 --save_total_limit 3",
        );
        let entry = crate::verify::kit::cmdline::LauncherCommand::training_entry(&argv).unwrap();
        assert!(entry.script.ends_with("run_clm.py"));
        let h = HfTrainingArgs::from_argv(&entry.args).unwrap();
        assert_eq!(
            h.deepspeed.as_ref().unwrap().known().map(String::as_str),
            Some("/config/ds_zero3.json")
        );
        assert_eq!(h.bf16.as_ref().unwrap().known(), Some(&true));
        assert_eq!(
            h.save_steps.as_ref().unwrap().known(),
            Some(&SaveSteps::Steps(500))
        );
        let ds = DsConfig::parse(
            r#"{"bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto",
                "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}"#,
        )
        .unwrap();
        let mut plan = ParallelPlan::from_argv(&entry.args).unwrap();
        plan.add_deepspeed(&ds, "/config/ds_zero3.json");
        // `auto` adds nothing: the HF flags stand.
        assert_eq!(plan.micro_batch_size.settings.len(), 1);
        assert_eq!(plan.precision.value(), Some(&Precision::Bf16));
        let ds =
            DsConfig::parse(r#"{"fp16": {"enabled": true}, "train_micro_batch_size_per_gpu": 8}"#)
                .unwrap();
        plan.add_deepspeed(&ds, "ds.json");
        assert!(matches!(plan.precision.state(), MergedState::Conflict(_)));
        assert!(matches!(
            plan.micro_batch_size.state(),
            MergedState::Conflict(_)
        ));
        assert_eq!(
            plan.micro_batch_size.settings[1].source,
            "ds.json:train_micro_batch_size_per_gpu"
        );
    }
}
