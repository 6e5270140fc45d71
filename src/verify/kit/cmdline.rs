//! Command lines inside containers: what a pod will actually run, read the way the tools read it.
//!
//! Layers, each usable alone:
//! - [`shell`]: a container's `command` + `args` (after the kubelet's `$(VAR)` expansion) become
//!   [`Invocation`]s: `sh -c` / `bash -lc` scripts are split into commands, leading `VAR=value`
//!   assignments and wrappers (`exec`, `env`, `time`, `nohup`, …) are set aside, and the shell
//!   variables known at each command are kept so `$VAR` values can be resolved when they are
//!   literal in the manifest. Also: a container's environment with the Kubernetes precedence.
//! - [`args`]: [`Args`], a lookup view over any argv (`--a-b` = `--a_b`, `--x=1` = `--x 1`, the
//!   two boolean conventions, repeated flags), giving typed [`Setting`]s.
//! - [`launch`] and [`mpi`]: launchers (`torchrun`, `python -m torch.distributed.run|launch`,
//!   `mpirun`/`mpiexec`, `deepspeed`, `accelerate launch`, `optimum-cli`) and the training script
//!   plus arguments they start.
//! - [`frameworks`]: Megatron-LM flags, NeMo (Hydra) overrides, Hugging Face `TrainingArguments`
//!   (with optimum-neuron's additions), and a merged parallelism/precision view.
//! - [`ds_config`]: DeepSpeed config JSON.
//! - [`run_clm`]: what transformers' `run_clm.py` example stops on before it trains.
//!
//! Nothing here judges: a verifier decides what a value must be. Bad input never panics; what
//! the tools themselves would reject is a typed error that names the flag, field or container.

pub mod args;
pub mod ds_config;
pub mod frameworks;
pub mod launch;
pub mod mpi;
pub mod run_clm;
pub mod shell;

pub use args::{is_var_ref, Args, Flag};
pub use ds_config::{
    Bf16, DsConfig, DsConfigError, DsValue, Fp16, Offload, OffloadDevice, ZeroStage,
};
pub use frameworks::{
    deepspeed_config_arg, is_megatron_entry, Devices, HfTrainingArgs, MegatronArgs, Merged,
    MergedState, NemoArgs, Override, OverrideKind, Overrides, ParallelPlan, Precision,
    RecomputeGranularity, RecomputeMethod, RemovedFlag, SaveSteps, SaveStrategy,
};
pub use launch::{
    AccelerateLaunch, DeepSpeedLaunch, LauncherCommand, Nnodes, NprocPerNode, OptimumCli,
    PythonRun, Torchrun, TorchrunEntry, TrainingEntry,
};
pub use mpi::{EnvExport, HostSpec, MpiOption, Mpirun, MPI_LAUNCHERS};
pub use shell::{
    command_line, container_env, invocations, split_script, Connector, EnvLookup, Invocation,
    Redirect, ShellError, ShellProblem, ShellVar, MAX_SHELL_DEPTH,
};

/// A value as written: a literal the tool will parse, or a shell/Kubernetes variable reference
/// (`$NP`, `${NP}`, `$(NP)`) whose value the grader cannot see. A reference is neither an error
/// nor a number: checks that need the value report it as unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known<T> {
    Value(T),
    /// The text as written, e.g. `$GPUS_PER_NODE`.
    Variable(String),
}

impl<T> Known<T> {
    /// The literal value; None for a variable reference.
    pub fn value(&self) -> Option<&T> {
        match self {
            Known::Value(v) => Some(v),
            Known::Variable(_) => None,
        }
    }

    pub fn is_variable(&self) -> bool {
        matches!(self, Known::Variable(_))
    }

    /// The literal-or-variable split, one rule for every reader of a written value (flags,
    /// overrides, mpirun options, `PET_*` variables, host slots): text holding a variable
    /// reference ([`is_var_ref`]) is [`Known::Variable`] as written; any other text is a literal
    /// that `parse` reads. None when the literal does not parse (the caller's error names where
    /// it was written).
    pub fn read(raw: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<Known<T>> {
        if is_var_ref(raw) {
            Some(Known::Variable(raw.to_string()))
        } else {
            parse(raw).map(Known::Value)
        }
    }
}

/// One setting found on a command line (or in a config), with where it came from so hints can
/// quote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: Known<T>,
    /// The flag as written (`--tensor_model_parallel_size`), the override key
    /// (`model.tensor_model_parallel_size`), the env var (`PET_NNODES`) or the JSON path
    /// (`deepspeed:bf16.enabled`).
    pub source: String,
    /// The value text as written; None for a bare switch (`--bf16`).
    pub raw: Option<String>,
    /// Raw values of earlier occurrences that this one overrides (the last one wins), in order.
    /// A bare switch is recorded as an empty string.
    pub earlier: Vec<String>,
}

impl<T> Setting<T> {
    /// The literal value; None when it is a variable reference.
    pub fn known(&self) -> Option<&T> {
        self.value.value()
    }

    /// `--tensor-model-parallel-size=8`, `--bf16`, `model.tensor_model_parallel_size=8`: for
    /// messages.
    pub fn as_written(&self) -> String {
        match &self.raw {
            None => self.source.clone(),
            Some(raw) if self.source.starts_with('-') => format!("{} {raw}", self.source),
            Some(raw) => format!("{}={raw}", self.source),
        }
    }

    /// The setting `raw` written at `source` ([`Known::read`]); a literal `parse` refuses is
    /// [`FlagError::Invalid`] naming `source`, `raw` and `expected`.
    pub(crate) fn read(
        source: &str,
        raw: &str,
        expected: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Setting<T>, FlagError> {
        let value =
            Known::read(raw, parse).ok_or_else(|| FlagError::invalid(source, raw, expected))?;
        Ok(Setting {
            value,
            source: source.to_string(),
            raw: Some(raw.to_string()),
            earlier: Vec::new(),
        })
    }

    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Setting<U> {
        Setting {
            value: match self.value {
                Known::Value(v) => Known::Value(f(v)),
                Known::Variable(s) => Known::Variable(s),
            },
            source: self.source,
            raw: self.raw,
            earlier: self.earlier,
        }
    }
}

/// A repeated flag, option or override: the last occurrence wins, and the raw values it
/// overrides are kept, in order, in its [`Setting::earlier`] (a bare switch as an empty string).
/// One rule for every reader that meets a setting twice: argparse stores each occurrence in turn
/// (cpython `Lib/argparse.py` `_StoreAction.__call__`, `setattr` on every occurrence), Open MPI
/// v4.1.8 overwrites its variable on each (`opal/util/cmd_line.h` `ocl_variable_dest`), Hydra
/// applies overrides in order (v1.3.2 `config_loader_impl.py` `_apply_overrides_to_config`).
/// `current` is what was read so far (None before the first occurrence); `next` is written after
/// it.
pub(crate) fn last_wins<T>(current: &mut Option<Setting<T>>, mut next: Setting<T>) {
    if let Some(prev) = current.take() {
        let mut earlier = prev.earlier;
        earlier.push(prev.raw.unwrap_or_default());
        earlier.append(&mut next.earlier);
        next.earlier = earlier;
    }
    *current = Some(next);
}

/// A flag or override whose value the tool would reject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// `--tensor-model-parallel-size=eight`: expected an integer.
    #[error("{flag}={value}: expected {expected}")]
    Invalid {
        flag: String,
        value: String,
        expected: String,
    },
    /// `--num-layers` as the last word, or followed by another flag.
    #[error("{flag}: expected a value after it")]
    MissingValue { flag: String },
}

impl FlagError {
    pub(crate) fn invalid(flag: &str, value: &str, expected: impl Into<String>) -> FlagError {
        FlagError::Invalid {
            flag: flag.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// The flag, override key or field the error is about.
    pub fn flag(&self) -> &str {
        match self {
            FlagError::Invalid { flag, .. } | FlagError::MissingValue { flag } => flag,
        }
    }
}

/// The last path component: `/opt/amazon/openmpi/bin/mpirun` → `mpirun`.
pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_quote_themselves_as_written() {
        let flag = Setting {
            value: Known::Value(8),
            source: "--tensor-model-parallel-size".into(),
            raw: Some("8".into()),
            earlier: vec![],
        };
        assert_eq!(flag.as_written(), "--tensor-model-parallel-size 8");
        let switch = Setting {
            value: Known::Value(true),
            source: "--bf16".into(),
            raw: None,
            earlier: vec![],
        };
        assert_eq!(switch.as_written(), "--bf16");
        let key = Setting {
            value: Known::<i64>::Variable("$TP".into()),
            source: "model.tensor_model_parallel_size".into(),
            raw: Some("$TP".into()),
            earlier: vec![],
        };
        assert_eq!(key.as_written(), "model.tensor_model_parallel_size=$TP");
        assert_eq!(key.known(), None);
        assert!(key.value.is_variable());
    }

    #[test]
    fn flag_errors_name_the_flag_and_value() {
        let e = FlagError::invalid("--tensor-model-parallel-size", "eight", "an integer");
        assert_eq!(
            e.to_string(),
            "--tensor-model-parallel-size=eight: expected an integer"
        );
        assert_eq!(e.flag(), "--tensor-model-parallel-size");
    }

    #[test]
    fn a_value_is_a_variable_reference_or_a_literal_the_parser_reads() {
        let int = |s: &str| s.parse::<i64>().ok();
        assert_eq!(Known::read("8", int), Some(Known::Value(8)));
        assert_eq!(Known::read("eight", int), None);
        for v in ["$NP", "${NP:-8}", "$(NP)", "`nproc`", "ppr$X"] {
            assert_eq!(Known::read(v, int), Some(Known::Variable(v.into())), "{v}");
        }
        // The parser never sees a variable, whatever it would make of it.
        assert_eq!(
            Known::read("$NP", |_| -> Option<i64> { panic!("parsed") }),
            Some(Known::Variable("$NP".into()))
        );
        let e = Setting::read("-np", "four", "an integer", int).unwrap_err();
        assert_eq!(e, FlagError::invalid("-np", "four", "an integer"));
        let s = Setting::read("PET_NNODES", "2", "an integer", int).unwrap();
        assert_eq!(
            (s.known(), s.as_written()),
            (Some(&2), "PET_NNODES=2".into())
        );
    }

    #[test]
    fn the_last_occurrence_wins_and_keeps_what_it_overrides() {
        let written = |raw: Option<&str>| Setting {
            value: Known::Value(raw.unwrap_or("on").to_string()),
            source: "--x".into(),
            raw: raw.map(str::to_string),
            earlier: vec![],
        };
        let mut current = None;
        last_wins(&mut current, written(Some("1")));
        assert_eq!(current.as_ref().unwrap().earlier, Vec::<String>::new());
        last_wins(&mut current, written(None));
        last_wins(&mut current, written(Some("3")));
        let s = current.unwrap();
        assert_eq!(s.known().map(String::as_str), Some("3"));
        // A bare switch is recorded as an empty string.
        assert_eq!(s.earlier, vec!["1".to_string(), String::new()]);
    }

    #[test]
    fn basename_strips_directories() {
        assert_eq!(basename("/opt/amazon/openmpi/bin/mpirun"), "mpirun");
        assert_eq!(basename("torchrun"), "torchrun");
        assert_eq!(basename("dir/"), "");
    }
}
