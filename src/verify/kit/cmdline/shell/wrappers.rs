//! Wrappers in front of the program (`exec`, `env`, `time`, `nohup`, `nice`, `stdbuf`,
//! `timeout`, `neuron_parallel_compile`): set aside with the assignments `env` makes.

use std::collections::BTreeMap;

use super::super::basename;
use super::expand::expand_word;
use super::lexer::Word;
use super::var::ShellVar;

/// Drops wrappers in front of the program, collecting `env`'s assignments.
pub(super) fn strip_wrappers(
    argv: &mut Vec<Word>,
    assignments: &mut Vec<(String, String)>,
    wrappers: &mut Vec<String>,
    vars: &BTreeMap<String, ShellVar>,
    shell: bool,
) {
    loop {
        let Some(name) = argv.first().map(|w| basename(&w.text).to_string()) else {
            return;
        };
        // How many words the wrapper and its options take, including the wrapper itself.
        let skip = match name.as_str() {
            // POSIX exec: `exec [-cl] [-a name] cmd`.
            "exec" if shell => skip_options(argv, &["a"], 0),
            // GNU time / bash's `time -p`.
            "time" => skip_options(argv, &["f", "o", "format", "output"], 0),
            // `neuron_parallel_compile <run commands>` prefixes the training command, running it
            // as a short graph-extraction trial (aws-neuron-sdk v2.26.1 `frameworks/torch/
            // torch-neuronx/api-reference-guide/training/pytorch-neuron-parallel-compile.rst`).
            // Its own `--command …` and `--analyze-*` options are not skipped here.
            "nohup" | "neuron_parallel_compile" => 1,
            // GNU nice: `-n N`, `--adjustment=N`, legacy `-N`.
            "nice" => skip_options(argv, &["n", "adjustment"], 0),
            // GNU stdbuf: `-oL`, `-o L`, `--output=L`.
            "stdbuf" => skip_options(argv, &["i", "o", "e", "input", "output", "error"], 0),
            // GNU timeout: options, then a DURATION operand.
            "timeout" => skip_options(argv, &["s", "k", "signal", "kill-after"], 1),
            "env" => {
                // GNU env: `-i`, `-u NAME`, `-C DIR`, then NAME=VALUE…, then the command.
                let mut i =
                    skip_options(argv, &["u", "C", "unset", "chdir", "S", "split-string"], 0);
                while let Some((n, v)) = argv.get(i).and_then(Word::assignment) {
                    let value = if shell {
                        expand_word(v, vars, false).join(" ")
                    } else {
                        v.to_string()
                    };
                    assignments.push((n.to_string(), value));
                    i += 1;
                }
                i
            }
            _ => return,
        };
        if skip >= argv.len() {
            // The wrapper runs nothing (`env` alone prints the environment): keep it as the
            // program.
            return;
        }
        wrappers.push(name);
        argv.drain(..skip);
    }
}

/// Index of the first word after the options of `argv[0]` (and `operands` more words).
/// `with_value` lists options that take the next word when not written `--x=v` / `-xV`.
fn skip_options(argv: &[Word], with_value: &[&str], operands: usize) -> usize {
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        let name = t.trim_start_matches('-');
        let long = t.starts_with("--");
        let takes = if long {
            !name.contains('=') && with_value.contains(&name)
        } else {
            // `-n 5` takes the next word; `-n5`/`-oL` carry it.
            name.chars().count() == 1 && with_value.contains(&name)
        };
        i += if takes { 2 } else { 1 };
    }
    i + operands
}
