//! Launchers and the training script they start: `torchrun` (and `python -m
//! torch.distributed.run|launch`), `python`, `deepspeed`, `accelerate launch`, `optimum-cli`,
//! plus [`Mpirun`] from [`mpi`](super::mpi).
//!
//! Each launcher is argparse-like: its options come first, then the script, then the script's
//! arguments (argparse `REMAINDER`). Which options take a value decides where the script starts,
//! so each launcher lists them from its upstream parser.

use std::collections::BTreeMap;

use super::args::{normalize, parse_int, split_flag, Args};
use super::mpi::Mpirun;
use super::{basename, FlagError, Setting};

/// The launcher program an argv runs (`torchrun`, `mpirun`, `deepspeed`, …), recognised with
/// its options, not yet followed to the training script ([`LauncherCommand::chain`] does).
#[derive(Debug, Clone, PartialEq)]
pub enum LauncherCommand {
    Torchrun(Torchrun),
    Mpi(Mpirun),
    DeepSpeed(DeepSpeedLaunch),
    Accelerate(AccelerateLaunch),
    OptimumCli(OptimumCli),
    /// A plain `python script.py …` / `python -m module …`.
    Python(PythonRun),
}

/// The script a launcher chain ends in, and its arguments (what Megatron-LM or HF parse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingEntry {
    /// A path (`/workspace/train.py`) or, with `module`, a module name (`examples.train`).
    pub script: String,
    pub module: bool,
    pub args: Vec<String>,
}

/// How many launchers deep [`LauncherCommand::chain`] follows (`mpirun` → `python -m
/// torch.distributed.run` → script is two).
const MAX_CHAIN: usize = 8;

impl LauncherCommand {
    /// Recognises the launcher an argv runs; None for any other program.
    pub fn parse(argv: &[String]) -> Option<LauncherCommand> {
        let first = argv.first()?;
        let name = basename(first);
        if let Some(m) = Mpirun::parse(argv) {
            return Some(LauncherCommand::Mpi(m));
        }
        match name {
            "torchrun" => Torchrun::parse(argv).map(LauncherCommand::Torchrun),
            "deepspeed" => DeepSpeedLaunch::parse(argv).map(LauncherCommand::DeepSpeed),
            "accelerate" => AccelerateLaunch::parse(argv).map(LauncherCommand::Accelerate),
            "optimum-cli" => OptimumCli::parse(argv).map(LauncherCommand::OptimumCli),
            _ if is_python(name) => match Torchrun::parse(argv) {
                Some(t) => Some(LauncherCommand::Torchrun(t)),
                None => PythonRun::parse(argv).map(LauncherCommand::Python),
            },
            _ => None,
        }
    }

    /// The launchers an argv goes through, outermost first (`mpirun … python train.py` → Mpi,
    /// Python). Bounded: at most 8 levels.
    pub fn chain(argv: &[String]) -> Vec<LauncherCommand> {
        let mut out = Vec::new();
        let mut current: Vec<String> = argv.to_vec();
        while out.len() < MAX_CHAIN {
            let Some(launch) = LauncherCommand::parse(&current) else {
                break;
            };
            let inner = launch.inner_program();
            out.push(launch);
            match inner {
                Some(next) if !next.is_empty() && next.len() < current.len() => current = next,
                _ => break,
            }
        }
        out
    }

    /// The training script an argv finally runs, through any launchers.
    pub fn training_entry(argv: &[String]) -> Option<TrainingEntry> {
        LauncherCommand::chain(argv)
            .last()
            .and_then(LauncherCommand::entry)
    }

    /// This launcher's own script and arguments (None for `mpirun`, whose program is another
    /// command, and for `optimum-cli`).
    pub fn entry(&self) -> Option<TrainingEntry> {
        let (script, module, args) = match self {
            LauncherCommand::Torchrun(t) => (t.script.clone()?, t.module, t.script_args.clone()),
            LauncherCommand::DeepSpeed(d) => (d.script.clone()?, d.module, d.script_args.clone()),
            LauncherCommand::Accelerate(a) => (a.script.clone()?, a.module, a.script_args.clone()),
            LauncherCommand::Python(p) => match (&p.module, &p.script) {
                (Some(m), _) => (m.clone(), true, p.args.clone()),
                (None, Some(s)) => (s.clone(), false, p.args.clone()),
                (None, None) => return None,
            },
            LauncherCommand::Mpi(_) | LauncherCommand::OptimumCli(_) => return None,
        };
        Some(TrainingEntry {
            script,
            module,
            args,
        })
    }

    /// The command this launcher runs when it is itself a command line (mpirun's program, or a
    /// `--no-python` script), to look for a further launcher.
    fn inner_program(&self) -> Option<Vec<String>> {
        let with_args = |script: &Option<String>, args: &[String]| {
            script.as_ref().map(|s| {
                std::iter::once(s.clone())
                    .chain(args.iter().cloned())
                    .collect()
            })
        };
        match self {
            LauncherCommand::Mpi(m) => Some(m.program.clone()),
            LauncherCommand::Torchrun(t) if t.no_python => with_args(&t.script, &t.script_args),
            LauncherCommand::DeepSpeed(d) if d.no_python => with_args(&d.script, &d.script_args),
            LauncherCommand::Accelerate(a) if a.no_python => with_args(&a.script, &a.script_args),
            _ => None,
        }
    }
}

/// `python`, `python3`, `python3.11`, `/opt/conda/bin/python`.
fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Splits `words` (options, script, script args) given which options take a value; returns
/// (option words, script, script args). A short option with its value attached (`-r3`) and
/// `--x=v` take no extra word.
fn split_at_script(
    words: &[String],
    takes_value: impl Fn(&str) -> bool,
) -> (Vec<String>, Option<String>, Vec<String>) {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if w == "--" {
            let script = words.get(i + 1).cloned();
            let rest = words.get(i + 2..).unwrap_or_default().to_vec();
            return (words.get(..i).unwrap_or_default().to_vec(), script, rest);
        }
        let Some((spelling, name, inline)) = split_flag(w) else {
            break;
        };
        let takes = inline.is_none()
            && if spelling.starts_with("--") {
                takes_value(&normalize(name))
            } else {
                // `-r 3` takes the next word; `-r3` carries its value.
                name.chars().count() == 1 && takes_value(name)
            };
        i += if takes { 2 } else { 1 };
    }
    let end = i.min(words.len());
    (
        words.get(..end).unwrap_or_default().to_vec(),
        words.get(end).cloned(),
        words.get(end + 1..).unwrap_or_default().to_vec(),
    )
}

// ---------------------------------------------------------------------------------------------
// torchrun

/// How torchrun was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorchrunEntry {
    /// The `torchrun` console script.
    Torchrun,
    /// `python -m torch.distributed.run`.
    RunModule,
    /// `python -m torch.distributed.launch` (legacy; passes `--local-rank` to the script unless
    /// `--use-env`).
    LaunchModule,
}

/// `--nnodes`: `N` or `MIN:MAX` (torch `run.py` `parse_min_max_nnodes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nnodes {
    pub min: i64,
    pub max: i64,
}

/// `--nproc-per-node`: an int, or a name torchrun resolves on the node
/// (`determine_local_world_size`): `gpu` (CUDA device count), `auto` (accelerator count, else
/// CPU count), `cpu` (CPU count), `xpu`, or another (privateuse1 backend, else
/// `Unsupported nproc_per_node value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NprocPerNode {
    Count(i64),
    Gpu,
    Auto,
    Cpu,
    Xpu,
    Other(String),
}

/// torchrun options that take a value (pytorch `torch/distributed/run.py` `get_args_parser`;
/// legacy `launch.py` adds `--logdir`), normalized (`_`), with the short forms `-r`, `-t`.
const TORCHRUN_VALUES: &[&str] = &[
    "nnodes",
    "nproc_per_node",
    "rdzv_backend",
    "rdzv_endpoint",
    "rdzv_id",
    "rdzv_conf",
    "max_restarts",
    "monitor_interval",
    "start_method",
    "event_log_handler",
    "role",
    "log_dir",
    "logdir",
    "r",
    "redirects",
    "t",
    "tee",
    "local_ranks_filter",
    "node_rank",
    "master_addr",
    "master_port",
    "local_addr",
    "logs_specs",
    "numa_binding",
    "signals_to_handle",
];

/// One torchrun: its options, the training script and the script's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Torchrun {
    pub entry: TorchrunEntry,
    /// torchrun's own options (before the script).
    pub options: Args,
    /// The training script (a module name with `-m`); None when missing.
    pub script: Option<String>,
    pub script_args: Vec<String>,
    /// `-m`/`--module`: the script is a module.
    pub module: bool,
    /// `--no-python`: the script is run directly.
    pub no_python: bool,
    /// `PET_*` variables known for the command (from [`Torchrun::with_env`]).
    env: BTreeMap<String, String>,
}

impl Torchrun {
    /// Reads `torchrun …`, `python -m torch.distributed.run …` or `python -m
    /// torch.distributed.launch …`; None for anything else.
    pub fn parse(argv: &[String]) -> Option<Torchrun> {
        let first = argv.first()?;
        let (entry, rest) = if basename(first) == "torchrun" {
            (TorchrunEntry::Torchrun, argv.get(1..).unwrap_or_default())
        } else if is_python(basename(first)) {
            let py = PythonRun::parse(argv)?;
            let entry = match py.module.as_deref() {
                Some("torch.distributed.run") => TorchrunEntry::RunModule,
                Some("torch.distributed.launch") => TorchrunEntry::LaunchModule,
                _ => return None,
            };
            // The words after `-m torch.distributed.run`.
            let start = argv.len().saturating_sub(py.args.len());
            (entry, argv.get(start..).unwrap_or_default())
        } else {
            return None;
        };
        let (options, script, script_args) =
            split_at_script(rest, |n| TORCHRUN_VALUES.contains(&n));
        let options = Args::new(options);
        let module = options.has(&["m", "module"]);
        let no_python = options.has(&["no_python"]);
        Some(Torchrun {
            entry,
            options,
            script,
            script_args,
            module,
            no_python,
            env: BTreeMap::new(),
        })
    }

    /// Adds the environment the command runs with: torchrun reads `PET_<DEST>` for any value
    /// option not given on the command line (`torch/distributed/argparse_util.py` `env`), e.g.
    /// `PET_NNODES` set by the Kubeflow training-operator. Settings taken from it have the
    /// variable name as their source.
    pub fn with_env<'a>(mut self, env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Torchrun {
        self.env = env
            .into_iter()
            .filter(|(k, _)| k.starts_with("PET_"))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self
    }

    /// The variable torchrun falls back to for an option: `nproc-per-node` → `PET_NPROC_PER_NODE`.
    pub fn env_fallback(option: &str) -> String {
        format!("PET_{}", normalize(option).to_ascii_uppercase())
    }

    /// A value option from the command line, else from its `PET_` variable.
    fn setting<T>(
        &self,
        name: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<Setting<T>>, FlagError> {
        if let Some(s) = self.options.parse_with(&[name], expected, &parse)? {
            return Ok(Some(s));
        }
        let var = Torchrun::env_fallback(name);
        let Some(raw) = self.env.get(&var) else {
            return Ok(None);
        };
        Setting::read(&var, raw, expected, parse).map(Some)
    }

    /// `--nnodes N|MIN:MAX` (default `1:1` when unset). Other forms are torchrun's
    /// `nnodes=<v> is not in "MIN:MAX" format` error; it also requires `0 < MIN <= MAX`.
    pub fn nnodes(&self) -> Result<Option<Setting<Nnodes>>, FlagError> {
        self.setting("nnodes", "N or MIN:MAX with 0 < MIN <= MAX", |s| {
            let (min, max) = match s.split_once(':') {
                None => {
                    let n = parse_int(s)?;
                    (n, n)
                }
                Some((a, b)) => (parse_int(a)?, parse_int(b)?),
            };
            (0 < min && min <= max).then_some(Nnodes { min, max })
        })
    }

    /// `--nproc-per-node` / `--nproc_per_node` (default `1` when unset).
    pub fn nproc_per_node(&self) -> Result<Option<Setting<NprocPerNode>>, FlagError> {
        self.setting("nproc_per_node", "an integer, gpu, auto, cpu or xpu", |s| {
            Some(match s {
                "gpu" => NprocPerNode::Gpu,
                "auto" => NprocPerNode::Auto,
                "cpu" => NprocPerNode::Cpu,
                "xpu" => NprocPerNode::Xpu,
                _ => match parse_int(s) {
                    Some(n) => NprocPerNode::Count(n),
                    None => NprocPerNode::Other(s.to_string()),
                },
            })
        })
    }

    pub fn node_rank(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.setting("node_rank", "an integer", parse_int)
    }

    pub fn master_addr(&self) -> Result<Option<Setting<String>>, FlagError> {
        self.setting("master_addr", "a value", |s| Some(s.to_string()))
    }

    pub fn master_port(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.setting("master_port", "an integer", parse_int)
    }

    /// `--rdzv-backend` (default `static`; `c10d` recommended; `etcd`, `etcd-v2`).
    pub fn rdzv_backend(&self) -> Result<Option<Setting<String>>, FlagError> {
        self.setting("rdzv_backend", "a value", |s| Some(s.to_string()))
    }

    pub fn rdzv_endpoint(&self) -> Result<Option<Setting<String>>, FlagError> {
        self.setting("rdzv_endpoint", "a value", |s| Some(s.to_string()))
    }

    pub fn rdzv_id(&self) -> Result<Option<Setting<String>>, FlagError> {
        self.setting("rdzv_id", "a value", |s| Some(s.to_string()))
    }

    pub fn rdzv_conf(&self) -> Result<Option<Setting<String>>, FlagError> {
        self.setting("rdzv_conf", "a value", |s| Some(s.to_string()))
    }

    pub fn max_restarts(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.setting("max_restarts", "an integer", parse_int)
    }

    /// `--standalone` (or `PET_STANDALONE`, read as `bool(int(v))`).
    pub fn standalone(&self) -> bool {
        self.options.has(&["standalone"])
            || self
                .env
                .get("PET_STANDALONE")
                .and_then(|v| parse_int(v))
                .is_some_and(|n| n != 0)
    }
}

// ---------------------------------------------------------------------------------------------
// python

/// `python [options] script.py args…`, `python -m module args…` or `python -c CODE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonRun {
    pub interpreter: String,
    /// Interpreter options before the script (`-u`, `-X dev`).
    pub options: Vec<String>,
    pub module: Option<String>,
    pub script: Option<String>,
    /// `-c CODE`
    pub code: Option<String>,
    pub args: Vec<String>,
}

impl PythonRun {
    pub fn parse(argv: &[String]) -> Option<PythonRun> {
        let interpreter = argv.first()?;
        if !is_python(basename(interpreter)) {
            return None;
        }
        let mut run = PythonRun {
            interpreter: interpreter.clone(),
            options: Vec::new(),
            module: None,
            script: None,
            code: None,
            args: Vec::new(),
        };
        let mut i = 1;
        while let Some(w) = argv.get(i) {
            if w == "--" {
                i += 1;
                break;
            }
            if !w.starts_with('-') || w == "-" {
                break;
            }
            if w.starts_with("--") {
                // `--check-hash-based-pycs MODE` is the only long option with a value.
                let takes = w == "--check-hash-based-pycs";
                run.options.push(w.clone());
                if takes {
                    if let Some(v) = argv.get(i + 1) {
                        run.options.push(v.clone());
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            // A cluster of one-letter options; `m`, `c`, `X`, `W` take the rest or the next word.
            let cluster: Vec<char> = w.chars().skip(1).collect();
            let mut consumed_next = false;
            for (k, ch) in cluster.iter().enumerate() {
                if matches!(ch, 'm' | 'c' | 'X' | 'W') {
                    let attached: String =
                        cluster.get(k + 1..).unwrap_or_default().iter().collect();
                    let value = if attached.is_empty() {
                        consumed_next = true;
                        argv.get(i + 1).cloned()
                    } else {
                        Some(attached)
                    };
                    match ch {
                        'm' => run.module = value,
                        'c' => run.code = value,
                        _ => {
                            run.options.push(format!("-{ch}"));
                            run.options.extend(value);
                        }
                    }
                    break;
                }
                run.options.push(format!("-{ch}"));
            }
            i += if consumed_next { 2 } else { 1 };
            if run.module.is_some() || run.code.is_some() {
                run.args = argv.get(i..).unwrap_or_default().to_vec();
                return Some(run);
            }
        }
        run.script = argv.get(i).cloned();
        run.args = argv.get(i + 1..).unwrap_or_default().to_vec();
        Some(run)
    }
}

// ---------------------------------------------------------------------------------------------
// deepspeed

/// deepspeed launcher options that take a value (`deepspeed/launcher/runner.py` `parse_args`).
const DEEPSPEED_VALUES: &[&str] = &[
    "H",
    "hostfile",
    "i",
    "include",
    "e",
    "exclude",
    "num_nodes",
    "min_elastic_nodes",
    "max_elastic_nodes",
    "num_gpus",
    "num_accelerators",
    "master_port",
    "master_addr",
    "node_rank",
    "launcher",
    "launcher_args",
    "enable_each_rank_log",
    "autotuning",
    "comment",
    "account",
    "bind_core_list",
    "ssh_port",
];

/// `deepspeed [launcher options] script.py [script args]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeepSpeedLaunch {
    pub options: Args,
    pub script: Option<String>,
    pub script_args: Vec<String>,
    pub module: bool,
    pub no_python: bool,
}

impl DeepSpeedLaunch {
    pub fn parse(argv: &[String]) -> Option<DeepSpeedLaunch> {
        if basename(argv.first()?) != "deepspeed" {
            return None;
        }
        let (options, script, script_args) =
            split_at_script(argv.get(1..).unwrap_or_default(), |n| {
                DEEPSPEED_VALUES.contains(&n)
            });
        let options = Args::new(options);
        Some(DeepSpeedLaunch {
            module: options.has(&["module"]),
            no_python: options.has(&["no_python"]),
            options,
            script,
            script_args,
        })
    }

    /// `--num_gpus` / `--num_accelerators`: GPUs per node.
    pub fn num_gpus(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.options.int(&["num_gpus", "num_accelerators"])
    }

    pub fn num_nodes(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.options.int(&["num_nodes"])
    }

    /// `-H` / `--hostfile`.
    pub fn hostfile(&self) -> Option<&str> {
        self.options.value(&["H", "hostfile"])
    }

    /// `--launcher` (pdsh, openmpi, mvapich, slurm, mpich, impi).
    pub fn multinode_launcher(&self) -> Option<&str> {
        self.options.value(&["launcher"])
    }
}

// ---------------------------------------------------------------------------------------------
// accelerate

/// `accelerate launch` switches (`store_true`); every other option takes a value
/// (accelerate `src/accelerate/commands/launch.py` `launch_command_parser`).
const ACCELERATE_SWITCHES: &[&str] = &[
    "h",
    "help",
    "q",
    "quiet",
    "cpu",
    "multi_gpu",
    "tpu",
    "ipex",
    "enable_cpu_affinity",
    "dynamo_use_fullgraph",
    "dynamo_use_dynamic",
    "use_deepspeed",
    "use_fsdp",
    "use_megatron_lm",
    "use_xpu",
    "same_network",
    "m",
    "module",
    "no_python",
    "tpu_cluster",
    "no_tpu_cluster",
    "tpu_use_sudo",
    "downcast_bf16",
    "fp8_use_autocast_during_eval",
    "debug",
];

/// `accelerate launch [options] script.py [script args]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AccelerateLaunch {
    pub options: Args,
    pub script: Option<String>,
    pub script_args: Vec<String>,
    pub module: bool,
    pub no_python: bool,
}

impl AccelerateLaunch {
    pub fn parse(argv: &[String]) -> Option<AccelerateLaunch> {
        if basename(argv.first()?) != "accelerate"
            || argv.get(1).map(String::as_str) != Some("launch")
        {
            return None;
        }
        let (options, script, script_args) =
            split_at_script(argv.get(2..).unwrap_or_default(), |n| {
                !ACCELERATE_SWITCHES.contains(&n)
            });
        let options = Args::new(options);
        Some(AccelerateLaunch {
            module: options.has(&["m", "module"]),
            no_python: options.has(&["no_python"]),
            options,
            script,
            script_args,
        })
    }

    /// `--num_processes`: processes over all machines.
    pub fn num_processes(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.options.int(&["num_processes"])
    }

    pub fn num_machines(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.options.int(&["num_machines"])
    }

    pub fn machine_rank(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.options.int(&["machine_rank"])
    }

    /// `--mixed_precision no|fp16|bf16|fp8`.
    pub fn mixed_precision(&self) -> Result<Option<Setting<String>>, FlagError> {
        self.options
            .choice(&["mixed_precision"], &["no", "fp16", "bf16", "fp8"])
    }

    /// `--config_file`: the accelerate config the values default from.
    pub fn config_file(&self) -> Option<&str> {
        self.options.value(&["config_file"])
    }

    pub fn uses_deepspeed(&self) -> bool {
        self.options.has(&["use_deepspeed"])
    }

    pub fn deepspeed_config_file(&self) -> Option<&str> {
        self.options.value(&["deepspeed_config_file"])
    }
}

// ---------------------------------------------------------------------------------------------
// optimum-cli

/// `optimum-cli …` (huggingface/optimum-neuron `optimum/commands/`): `optimum-cli neuron
/// {cache,consolidate,serve} …` and `optimum-cli export neuron …` are the Neuron uses.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimumCli {
    /// The subcommand words before the first option: `["neuron", "consolidate", "/ckpt"]`.
    pub subcommand: Vec<String>,
    /// Every argument after `optimum-cli`.
    pub args: Args,
}

impl OptimumCli {
    pub fn parse(argv: &[String]) -> Option<OptimumCli> {
        if basename(argv.first()?) != "optimum-cli" {
            return None;
        }
        let rest = argv.get(1..).unwrap_or_default();
        let subcommand = rest
            .iter()
            .take_while(|w| !w.starts_with('-'))
            .cloned()
            .collect();
        Some(OptimumCli {
            subcommand,
            args: Args::new(rest.iter().cloned()),
        })
    }

    /// `optimum-cli neuron …` or `optimum-cli export neuron …`.
    pub fn is_neuron(&self) -> bool {
        let s: Vec<&str> = self.subcommand.iter().map(String::as_str).collect();
        matches!(s.as_slice(), ["neuron", ..] | ["export", "neuron", ..])
    }

    /// `--tensor_parallel_size N` (`export neuron`).
    pub fn tensor_parallel_size(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.args.int(&["tensor_parallel_size"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn torchrun(line: &str) -> Torchrun {
        Torchrun::parse(&words(line)).expect("a torchrun line")
    }

    #[test]
    fn torchrun_in_every_entry_form() {
        for (line, entry) in [
            (
                "torchrun --nproc_per_node 8 train.py --bf16",
                TorchrunEntry::Torchrun,
            ),
            (
                "/usr/local/bin/torchrun --nproc_per_node 8 train.py --bf16",
                TorchrunEntry::Torchrun,
            ),
            (
                "python -m torch.distributed.run --nproc_per_node 8 train.py --bf16",
                TorchrunEntry::RunModule,
            ),
            (
                "python3 -u -m torch.distributed.run --nproc_per_node 8 train.py --bf16",
                TorchrunEntry::RunModule,
            ),
            (
                "python3.10 -mtorch.distributed.run --nproc_per_node 8 train.py --bf16",
                TorchrunEntry::RunModule,
            ),
            (
                "python -m torch.distributed.launch --nproc_per_node 8 train.py --bf16",
                TorchrunEntry::LaunchModule,
            ),
        ] {
            let t = torchrun(line);
            assert_eq!(t.entry, entry, "{line}");
            assert_eq!(t.script.as_deref(), Some("train.py"), "{line}");
            assert_eq!(t.script_args, words("--bf16"), "{line}");
            assert_eq!(
                t.nproc_per_node().unwrap().unwrap().known(),
                Some(&NprocPerNode::Count(8)),
                "{line}"
            );
        }
        assert!(Torchrun::parse(&words("python train.py")).is_none());
        assert!(Torchrun::parse(&words("python -m torch.distributed.elastic x")).is_none());
    }

    #[test]
    fn torchrun_options_in_both_spellings_and_forms() {
        let t = torchrun(
            "torchrun --nnodes=2 --nproc-per-node=gpu --node-rank 1 --master_addr=10.0.0.1 \
             --master-port 29500 --rdzv_backend c10d --rdzv-endpoint=host:29400 --rdzv_id job1 \
             --rdzv_conf timeout=900 --max-restarts 3 --standalone -r 3 --tee=2 train.py --a 1",
        );
        assert_eq!(
            t.nnodes().unwrap().unwrap().known(),
            Some(&Nnodes { min: 2, max: 2 })
        );
        assert_eq!(
            t.nproc_per_node().unwrap().unwrap().known(),
            Some(&NprocPerNode::Gpu)
        );
        assert_eq!(t.node_rank().unwrap().unwrap().known(), Some(&1));
        assert_eq!(
            t.master_addr()
                .unwrap()
                .unwrap()
                .known()
                .map(String::as_str),
            Some("10.0.0.1")
        );
        assert_eq!(t.master_port().unwrap().unwrap().known(), Some(&29500));
        assert_eq!(
            t.rdzv_backend()
                .unwrap()
                .unwrap()
                .known()
                .map(String::as_str),
            Some("c10d")
        );
        assert_eq!(
            t.rdzv_endpoint()
                .unwrap()
                .unwrap()
                .known()
                .map(String::as_str),
            Some("host:29400")
        );
        assert_eq!(
            t.rdzv_id().unwrap().unwrap().known().map(String::as_str),
            Some("job1")
        );
        assert_eq!(
            t.rdzv_conf().unwrap().unwrap().known().map(String::as_str),
            Some("timeout=900")
        );
        assert_eq!(t.max_restarts().unwrap().unwrap().known(), Some(&3));
        assert!(t.standalone());
        assert_eq!(t.script.as_deref(), Some("train.py"));
        assert_eq!(t.script_args, words("--a 1"));
    }

    #[test]
    fn nnodes_min_max_and_nproc_names() {
        let t = torchrun("torchrun --nnodes 1:4 --nproc_per_node auto t.py");
        assert_eq!(
            t.nnodes().unwrap().unwrap().known(),
            Some(&Nnodes { min: 1, max: 4 })
        );
        assert_eq!(
            t.nproc_per_node().unwrap().unwrap().known(),
            Some(&NprocPerNode::Auto)
        );
        for (v, want) in [
            ("cpu", NprocPerNode::Cpu),
            ("xpu", NprocPerNode::Xpu),
            ("npu", NprocPerNode::Other("npu".into())),
        ] {
            let t = torchrun(&format!("torchrun --nproc_per_node {v} t.py"));
            assert_eq!(t.nproc_per_node().unwrap().unwrap().known(), Some(&want));
        }
        for bad in ["4:1", "0", "1:2:3", "two", "0:2"] {
            let t = torchrun(&format!("torchrun --nnodes {bad} t.py"));
            assert!(t.nnodes().is_err(), "{bad}");
        }
        let t = torchrun("torchrun --nnodes $NNODES t.py");
        assert!(t.nnodes().unwrap().unwrap().value.is_variable());
        assert_eq!(torchrun("torchrun t.py").nnodes().unwrap(), None);
    }

    #[test]
    fn pet_variables_fill_in_missing_options() {
        let t = torchrun("torchrun --nproc_per_node 4 train.py").with_env([
            ("PET_NNODES", "3"),
            ("PET_NPROC_PER_NODE", "auto"),
            ("PET_MASTER_ADDR", "job-master-0"),
            ("OTHER", "x"),
        ]);
        let nn = t.nnodes().unwrap().unwrap();
        assert_eq!(nn.known(), Some(&Nnodes { min: 3, max: 3 }));
        assert_eq!(nn.source, "PET_NNODES");
        // The command line wins over PET_*.
        let np = t.nproc_per_node().unwrap().unwrap();
        assert_eq!(np.known(), Some(&NprocPerNode::Count(4)));
        assert_eq!(np.source, "--nproc_per_node");
        assert_eq!(t.master_addr().unwrap().unwrap().source, "PET_MASTER_ADDR");
        assert_eq!(
            Torchrun::env_fallback("nproc-per-node"),
            "PET_NPROC_PER_NODE"
        );
        let bad = torchrun("torchrun t.py").with_env([("PET_NNODES", "x")]);
        assert_eq!(bad.nnodes().unwrap_err().flag(), "PET_NNODES");
        // From an invocation: the operator's PET_* variables written in the manifest.
        let c: k8s_openapi::api::core::v1::Container = serde_json::from_value(serde_json::json!({
            "name": "pytorch",
            "command": ["torchrun", "train.py"],
            "env": [{"name": "PET_NNODES", "value": "2:4"}],
        }))
        .unwrap();
        let inv = super::super::invocations(&c).unwrap().remove(0);
        let env = inv.environment();
        let t = Torchrun::parse(&inv.expanded)
            .unwrap()
            .with_env(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        assert_eq!(
            t.nnodes().unwrap().unwrap().known(),
            Some(&Nnodes { min: 2, max: 4 })
        );
        let standalone = torchrun("torchrun t.py").with_env([("PET_STANDALONE", "1")]);
        assert!(standalone.standalone());
        assert!(!torchrun("torchrun t.py")
            .with_env([("PET_STANDALONE", "0")])
            .standalone());
    }

    #[test]
    fn torchrun_module_and_switches_do_not_swallow_the_script() {
        let t = torchrun("torchrun --standalone --nnodes=1 -m examples.train --epochs 1");
        assert!(t.module);
        assert_eq!(t.script.as_deref(), Some("examples.train"));
        let t = torchrun("torchrun --no-python --nproc_per_node 2 ./run.sh x");
        assert!(t.no_python);
        assert_eq!(t.script.as_deref(), Some("./run.sh"));
        // torchrun's options after the script belong to the script.
        let t = torchrun("torchrun t.py --nnodes 9");
        assert_eq!(t.nnodes().unwrap(), None);
        assert_eq!(t.script_args, words("--nnodes 9"));
        // No script at all.
        assert_eq!(torchrun("torchrun --nnodes 2").script, None);
    }

    #[test]
    fn python_interpreter_forms() {
        let p = PythonRun::parse(&words("python3 -u -X dev train.py --lr 1")).unwrap();
        assert_eq!(p.script.as_deref(), Some("train.py"));
        assert_eq!(p.options, words("-u -X dev"));
        assert_eq!(p.args, words("--lr 1"));
        let p = PythonRun::parse(&words("/opt/conda/bin/python -m trl.cli sft --x")).unwrap();
        assert_eq!(p.module.as_deref(), Some("trl.cli"));
        assert_eq!(p.args, words("sft --x"));
        let p = PythonRun::parse(&words("python -c print(1)")).unwrap();
        assert_eq!(p.code.as_deref(), Some("print(1)"));
        assert!(PythonRun::parse(&words("pythonic x")).is_none());
        assert!(PythonRun::parse(&words("python -m"))
            .unwrap()
            .module
            .is_none());
    }

    #[test]
    fn deepspeed_launcher() {
        let argv = words("deepspeed --num_gpus 8 --num_nodes 2 -H /job/hostfile --launcher openmpi train.py --deepspeed ds.json --bf16");
        let Some(LauncherCommand::DeepSpeed(d)) = LauncherCommand::parse(&argv) else {
            panic!("deepspeed")
        };
        assert_eq!(d.num_gpus().unwrap().unwrap().known(), Some(&8));
        assert_eq!(d.num_nodes().unwrap().unwrap().known(), Some(&2));
        assert_eq!(d.hostfile(), Some("/job/hostfile"));
        assert_eq!(d.multinode_launcher(), Some("openmpi"));
        assert_eq!(d.script.as_deref(), Some("train.py"));
        assert_eq!(d.script_args, words("--deepspeed ds.json --bf16"));
        let d = DeepSpeedLaunch::parse(&words(
            "deepspeed --num_accelerators=4 --no_ssh --node_rank 0 t.py",
        ))
        .unwrap();
        assert_eq!(d.num_gpus().unwrap().unwrap().known(), Some(&4));
        assert_eq!(d.script.as_deref(), Some("t.py"));
    }

    #[test]
    fn accelerate_launch() {
        let argv = words("accelerate launch --multi_gpu --num_processes 16 --num-machines 2 --machine_rank 0 --mixed_precision bf16 --use_deepspeed --deepspeed_config_file ds.json run_clm.py --output_dir /out");
        let Some(LauncherCommand::Accelerate(a)) = LauncherCommand::parse(&argv) else {
            panic!("accelerate")
        };
        assert_eq!(a.num_processes().unwrap().unwrap().known(), Some(&16));
        assert_eq!(a.num_machines().unwrap().unwrap().known(), Some(&2));
        assert_eq!(a.machine_rank().unwrap().unwrap().known(), Some(&0));
        assert_eq!(
            a.mixed_precision()
                .unwrap()
                .unwrap()
                .known()
                .map(String::as_str),
            Some("bf16")
        );
        assert!(a.uses_deepspeed());
        assert_eq!(a.deepspeed_config_file(), Some("ds.json"));
        assert_eq!(a.script.as_deref(), Some("run_clm.py"));
        assert_eq!(a.script_args, words("--output_dir /out"));
        assert!(AccelerateLaunch::parse(&words("accelerate config")).is_none());
        let bad = AccelerateLaunch::parse(&words("accelerate launch --mixed_precision bf32 t.py"))
            .unwrap();
        assert!(bad.mixed_precision().is_err());
    }

    #[test]
    fn optimum_cli_neuron() {
        let Some(LauncherCommand::OptimumCli(o)) = LauncherCommand::parse(&words(
            "optimum-cli neuron consolidate /ckpt /out -f safetensors",
        )) else {
            panic!("optimum-cli")
        };
        assert!(o.is_neuron());
        assert_eq!(o.subcommand, words("neuron consolidate /ckpt /out"));
        let o = OptimumCli::parse(&words(
            "optimum-cli export neuron --model m --tensor_parallel_size 8 out",
        ))
        .unwrap();
        assert!(o.is_neuron());
        assert_eq!(o.tensor_parallel_size().unwrap().unwrap().known(), Some(&8));
        assert!(
            !OptimumCli::parse(&words("optimum-cli export onnx --model m"))
                .unwrap()
                .is_neuron()
        );
    }

    #[test]
    fn chains_end_in_the_training_script() {
        let argv = words("mpirun -np 16 python -m torch.distributed.run --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8");
        let chain = LauncherCommand::chain(&argv);
        assert_eq!(chain.len(), 2);
        assert!(matches!(chain[0], LauncherCommand::Mpi(_)));
        assert!(matches!(chain[1], LauncherCommand::Torchrun(_)));
        let entry = LauncherCommand::training_entry(&argv).unwrap();
        assert_eq!(entry.script, "pretrain_gpt.py");
        assert_eq!(entry.args, words("--tensor-model-parallel-size 8"));
        let entry =
            LauncherCommand::training_entry(&words("mpirun -n 2 python3 train.py --bf16")).unwrap();
        assert_eq!((entry.script.as_str(), entry.module), ("train.py", false));
        let entry = LauncherCommand::training_entry(&words("python -m my.trainer --x")).unwrap();
        assert_eq!((entry.script.as_str(), entry.module), ("my.trainer", true));
        // An MPI program that is no launcher: no training script.
        assert_eq!(
            LauncherCommand::training_entry(&words(
                "mpirun -np 2 /opt/nccl-tests/build/all_reduce_perf"
            )),
            None
        );
        assert!(LauncherCommand::parse(&words("echo hi")).is_none());
        assert!(LauncherCommand::chain(&[]).is_empty());
    }

    #[test]
    fn attached_short_values_and_double_dash() {
        let t = torchrun("torchrun -r3 -t 2 train.py");
        assert_eq!(t.script.as_deref(), Some("train.py"));
        let t = torchrun("torchrun --nnodes 2 -- train.py --x");
        assert_eq!(t.script.as_deref(), Some("train.py"));
        assert_eq!(t.script_args, words("--x"));
    }
}
