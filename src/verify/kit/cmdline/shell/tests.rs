//! The whole path from a container's `command` + `args`, or a script, to the invocations it
//! runs: splitting, quoting, variables, wrappers, nested shells, and odd input that must not panic.

use super::expand::{expand_k8s, expand_word};
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;

use super::*;

fn container(command: &[&str], args: &[&str], env: &[(&str, &str)]) -> Container {
    let v = serde_json::json!({
        "name": "launcher",
        "command": command,
        "args": args,
        "env": env.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
    });
    serde_json::from_value(v).expect("container")
}

fn script(s: &str) -> Vec<Invocation> {
    split_script(s, "test", &BTreeMap::new()).expect("splits")
}

fn argvs(invs: &[Invocation]) -> Vec<Vec<&str>> {
    invs.iter()
        .map(|i| i.argv.iter().map(String::as_str).collect())
        .collect()
}

#[test]
fn plain_command_and_args_are_one_invocation_without_a_shell() {
    let c = container(&["torchrun"], &["--nnodes", "$NNODES", "train.py"], &[]);
    let invs = invocations(&c).unwrap();
    assert_eq!(
        argvs(&invs),
        vec![vec!["torchrun", "--nnodes", "$NNODES", "train.py"]]
    );
    // No shell: nothing splits or expands `$NNODES`, and `A=1` would be a program name.
    assert_eq!(invs[0].expanded, invs[0].argv);
    assert_eq!(invs[0].depth, 0);
    assert_eq!(invs[0].container, "launcher");
}

#[test]
fn sh_c_scripts_split_at_every_separator() {
    let invs = script("set -e; echo a && mpirun -np 2 ./x || true | tee log & wait\nls (pwd)");
    assert_eq!(
        argvs(&invs),
        vec![
            vec!["set", "-e"],
            vec!["echo", "a"],
            vec!["mpirun", "-np", "2", "./x"],
            vec!["true"],
            vec!["tee", "log"],
            vec!["wait"],
            vec!["ls"],
            vec!["pwd"],
        ]
    );
    let joins: Vec<Option<Connector>> = invs.iter().map(|i| i.joined_by).collect();
    assert_eq!(
        joins,
        vec![
            None,
            Some(Connector::Sequence),
            Some(Connector::And),
            Some(Connector::Or),
            Some(Connector::Pipe),
            Some(Connector::Background),
            Some(Connector::Sequence),
            Some(Connector::Sequence),
        ]
    );
}

#[test]
fn every_shell_spelling_is_unwrapped() {
    for command in [
        &["sh", "-c"][..],
        &["bash", "-c"],
        &["bash", "-lc"],
        &["/bin/sh", "-ec"],
        &["/bin/bash", "-o", "pipefail", "-c"],
        &["bash", "--login", "-c"],
        &["/usr/bin/env", "bash", "-c"],
    ] {
        let c = container(command, &["echo hi; torchrun train.py"], &[]);
        let invs = invocations(&c).unwrap();
        assert_eq!(
            argvs(&invs),
            vec![vec!["echo", "hi"], vec!["torchrun", "train.py"]],
            "{command:?}"
        );
        assert!(invs.iter().all(|i| i.depth == 1));
    }
    // The script may also come from args.
    let c = container(&["/bin/bash"], &["-c", "torchrun train.py"], &[]);
    assert_eq!(
        argvs(&invocations(&c).unwrap()),
        vec![vec!["torchrun", "train.py"]]
    );
}

#[test]
fn a_shell_running_a_file_is_kept_as_is() {
    let c = container(&["bash", "/scripts/run.sh"], &[], &[]);
    assert_eq!(
        argvs(&invocations(&c).unwrap()),
        vec![vec!["bash", "/scripts/run.sh"]]
    );
}

#[test]
fn quoting_follows_posix_rules() {
    let invs = script(
        r#"python train.py --name 'a b' --msg "say \"hi\" \$x" --path a\ b --empty '' --mix 'it'"'"'s'"#,
    );
    assert_eq!(
        argvs(&invs),
        vec![vec![
            "python",
            "train.py",
            "--name",
            "a b",
            "--msg",
            r#"say "hi" $x"#,
            "--path",
            "a b",
            "--empty",
            "",
            "--mix",
            "it's"
        ]]
    );
    // Separators inside quotes are text.
    let invs = script("echo 'a; b && c' \"d | e\"");
    assert_eq!(argvs(&invs), vec![vec!["echo", "a; b && c", "d | e"]]);
}

#[test]
fn backslash_newline_continues_a_command() {
    let invs = script("mpirun \\\n  -np \"16\" \\\n  --bind-to=none ./pi\necho done");
    assert_eq!(
        argvs(&invs),
        vec![
            vec!["mpirun", "-np", "16", "--bind-to=none", "./pi"],
            vec!["echo", "done"]
        ]
    );
    assert_eq!(invs[0].line, 1);
    assert_eq!(invs[1].line, 4);
}

#[test]
fn comments_are_dropped_but_hash_inside_words_is_text() {
    let invs = script("# start\ntorchrun a#b.py # the script\n");
    assert_eq!(argvs(&invs), vec![vec!["torchrun", "a#b.py"]]);
}

#[test]
fn substitutions_stay_whole_words() {
    let invs = script("torchrun --master_addr=$(hostname -i) --x ${A:-b c} --y `echo a b` t.py");
    assert_eq!(
        argvs(&invs),
        vec![vec![
            "torchrun",
            "--master_addr=$(hostname -i)",
            "--x",
            "${A:-b c}",
            "--y",
            "`echo a b`",
            "t.py"
        ]]
    );
    let invs = script("echo \"$(cat \"/etc/x y\")\" ; ls");
    assert_eq!(
        argvs(&invs),
        vec![vec!["echo", "$(cat \"/etc/x y\")"], vec!["ls"]]
    );
}

#[test]
fn redirections_are_set_aside() {
    let invs = script("torchrun train.py > /tmp/log 2>&1 &> all; cat < in.txt");
    assert_eq!(
        argvs(&invs),
        vec![vec!["torchrun", "train.py"], vec!["cat"]]
    );
    let r = &invs[0].redirects;
    assert_eq!(r.len(), 3);
    assert_eq!(
        r[1],
        Redirect {
            fd: Some(2),
            op: ">&".into(),
            target: "1".into()
        }
    );
    assert_eq!(r[2].op, "&>");
    assert_eq!(invs[1].redirects[0].op, "<");
}

#[test]
fn heredocs_are_captured_for_the_command() {
    let s = "cat > /tmp/ds.json <<'EOF'\n{\"zero_optimization\": {\"stage\": 3}}\nEOF\ndeepspeed train.py --deepspeed /tmp/ds.json";
    let invs = script(s);
    assert_eq!(
        argvs(&invs),
        vec![
            vec!["cat"],
            vec!["deepspeed", "train.py", "--deepspeed", "/tmp/ds.json"]
        ]
    );
    assert_eq!(
        invs[0].heredoc.as_deref(),
        Some("{\"zero_optimization\": {\"stage\": 3}}\n")
    );
    assert_eq!(invs[0].redirects[0].target, "/tmp/ds.json");
    // `<<-` strips leading tabs; a missing delimiter ends at the end of the script.
    let invs = script("cat <<-END\n\tline\n\tEND\nls");
    assert_eq!(invs[0].heredoc.as_deref(), Some("line\n"));
    assert_eq!(argvs(&invs)[1], vec!["ls"]);
    let invs = script("cat <<END\nunterminated");
    assert_eq!(invs[0].heredoc.as_deref(), Some("unterminated\n"));
}

#[test]
fn assignments_and_wrappers_are_dropped_and_kept() {
    let invs = script(
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 exec env -u X NCCL_DEBUG=INFO nohup time -p mpirun -np 2 ./a",
    );
    let inv = &invs[0];
    assert_eq!(inv.argv, vec!["mpirun", "-np", "2", "./a"]);
    assert_eq!(
        inv.assignments,
        vec![
            ("OMPI_ALLOW_RUN_AS_ROOT".to_string(), "1".to_string()),
            (
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".to_string(),
                "1".to_string()
            ),
            ("NCCL_DEBUG".to_string(), "INFO".to_string()),
        ]
    );
    assert_eq!(inv.wrappers, vec!["exec", "env", "nohup", "time"]);
    assert_eq!(inv.env("NCCL_DEBUG"), Some("INFO"));
    assert_eq!(inv.program_name(), Some("mpirun"));

    let invs =
        script("timeout -s KILL 2h nice -n 5 stdbuf -oL neuron_parallel_compile torchrun t.py");
    assert_eq!(invs[0].argv, vec!["torchrun", "t.py"]);
    assert_eq!(
        invs[0].wrappers,
        vec!["timeout", "nice", "stdbuf", "neuron_parallel_compile"]
    );
    // `env` alone runs nothing else: it is the program.
    assert_eq!(argvs(&script("env")), vec![vec!["env"]]);
    // A quoted assignment is a command name, as in sh.
    assert_eq!(argvs(&script("'A=1' x")), vec![vec!["A=1", "x"]]);
}

#[test]
fn env_wrapper_works_at_depth_zero_too() {
    let c = container(&["env", "FI_PROVIDER=efa", "torchrun"], &["t.py"], &[]);
    let invs = invocations(&c).unwrap();
    assert_eq!(invs[0].argv, vec!["torchrun", "t.py"]);
    assert_eq!(invs[0].env("FI_PROVIDER"), Some("efa"));
}

#[test]
fn control_keywords_do_not_hide_the_command() {
    let invs = script(
        "if [ \"$RANK\" = 0 ]; then\n  torchrun train.py\nelse\n  sleep 1\nfi\nwhile true; do sleep 5; done",
    );
    assert_eq!(
        argvs(&invs),
        vec![
            vec!["[", "$RANK", "=", "0", "]"],
            vec!["torchrun", "train.py"],
            vec!["sleep", "1"],
            vec!["true"],
            vec!["sleep", "5"],
        ]
    );
    let invs = script("{ torchrun a.py; }");
    assert_eq!(argvs(&invs), vec![vec!["torchrun", "a.py"]]);
}

#[test]
fn variables_resolve_from_env_and_earlier_assignments() {
    let c = container(
        &["sh", "-c"],
        &["NP=16; export FI_PROVIDER=efa; mpirun -np $NP -x FI_PROVIDER ./a --gpus ${GPUS} --n $UNKNOWN"],
        &[("GPUS", "8")],
    );
    let invs = invocations(&c).unwrap();
    let inv = &invs[0];
    assert_eq!(inv.argv[2], "$NP");
    assert_eq!(
        inv.expanded,
        vec![
            "mpirun",
            "-np",
            "16",
            "-x",
            "FI_PROVIDER",
            "./a",
            "--gpus",
            "8",
            "--n",
            "$UNKNOWN"
        ]
    );
    assert_eq!(inv.resolve("$NP"), Some("16".into()));
    assert_eq!(inv.resolve("${GPUS}x"), Some("8x".into()));
    assert_eq!(inv.resolve("$UNKNOWN"), None);
    // Exported and container variables are in the command's environment; NP is not.
    assert_eq!(inv.env("FI_PROVIDER"), Some("efa"));
    assert_eq!(inv.env("GPUS"), Some("8"));
    assert_eq!(inv.env("NP"), None);
    let env = inv.environment();
    assert_eq!(env.get("FI_PROVIDER").map(String::as_str), Some("efa"));
    assert_eq!(env.get("GPUS").map(String::as_str), Some("8"));
    assert!(!env.contains_key("NP"));
    assert_eq!(inv.vars.get("NP").map(|v| v.value.as_str()), Some("16"));
}

#[test]
fn unquoted_expansions_split_into_words() {
    let invs = script(
        "GPUS=8\nDIST_ARGS=\"--nproc_per_node $GPUS --nnodes $NNODES\"\ntorchrun $DIST_ARGS pretrain_gpt.py \"$DIST_ARGS\"",
    );
    assert_eq!(
        invs[0].expanded,
        vec![
            "torchrun",
            "--nproc_per_node",
            "8",
            "--nnodes",
            "$NNODES",
            "pretrain_gpt.py",
            "--nproc_per_node 8 --nnodes $NNODES"
        ]
    );
    // An unquoted empty expansion disappears; a quoted one stays an empty word.
    let invs = script("E=\nx $E \"$E\" y");
    assert_eq!(invs[0].expanded, vec!["x", "", "y"]);
}

#[test]
fn arrays_as_in_megatron_example_scripts() {
    let invs = script(
        "DISTRIBUTED_ARGS=(\n  --nproc_per_node 8   # per node\n  --nnodes $NUM_NODES\n)\ntorchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \"${MODEL[@]}\"",
    );
    assert_eq!(
        invs[0].expanded,
        vec![
            "torchrun",
            "--nproc_per_node",
            "8",
            "--nnodes",
            "$NUM_NODES",
            "pretrain_gpt.py",
            "${MODEL[@]}"
        ]
    );
    assert_eq!(invs.len(), 1);
}

#[test]
fn braced_defaults() {
    let mut vars = BTreeMap::new();
    vars.insert(
        "EMPTY".to_string(),
        ShellVar {
            value: String::new(),
            array: None,
            exported: false,
        },
    );
    vars.insert(
        "N".to_string(),
        ShellVar {
            value: "4".into(),
            array: None,
            exported: false,
        },
    );
    let invs = split_script(
        "x ${N:-2} ${EMPTY:-3} ${EMPTY-5} ${MISSING:-1} ${N#x}",
        "t",
        &vars,
    )
    .unwrap();
    assert_eq!(
        invs[0].expanded,
        vec!["x", "4", "3", "${MISSING:-1}", "${N#x}"]
    );
    // `${EMPTY-5}` is set-but-empty: nothing, and unquoted it vanishes.
}

#[test]
fn kubernetes_expansion_comes_first() {
    let env: BTreeMap<String, String> = [("NP".to_string(), "16".to_string())].into();
    assert_eq!(expand_k8s("$(NP)", &env), "16");
    assert_eq!(expand_k8s("$$(NP)", &env), "$(NP)");
    assert_eq!(expand_k8s("$(OTHER)", &env), "$(OTHER)");
    assert_eq!(expand_k8s("a$b$", &env), "a$b$");
    assert_eq!(expand_k8s("$(unterminated", &env), "$(unterminated");
    let c = container(&["mpirun"], &["-np", "$(NP)", "/app"], &[("NP", "16")]);
    assert_eq!(invocations(&c).unwrap()[0].argv[2], "16");
    // Env values expand from earlier env entries.
    let c = container(
        &["sh", "-c", "echo $B"],
        &[],
        &[("A", "x"), ("B", "$(A)-y")],
    );
    assert_eq!(invocations(&c).unwrap()[0].expanded, vec!["echo", "x-y"]);
}

#[test]
fn nested_shells_are_unwrapped_up_to_the_limit() {
    let invs = script("bash -c \"sh -c 'torchrun t.py; echo ok'\"");
    assert_eq!(
        argvs(&invs),
        vec![vec!["torchrun", "t.py"], vec!["echo", "ok"]]
    );
    assert_eq!(invs[0].depth, 3);
    // The container's `sh -c` is depth 1; each further `sh -c` adds one.
    let nested = |extra: usize| {
        let mut s = "torchrun t.py".to_string();
        for _ in 0..extra {
            s = format!("sh -c {}", shlex::try_quote(&s).unwrap());
        }
        invocations(&container(&["sh", "-c"], &[&s], &[]))
    };
    let deepest = nested(MAX_SHELL_DEPTH - 1).unwrap();
    assert_eq!(deepest[0].depth, MAX_SHELL_DEPTH);
    assert_eq!(deepest[0].argv, vec!["torchrun", "t.py"]);
    let e = nested(MAX_SHELL_DEPTH).unwrap_err();
    assert_eq!(
        e.problem,
        ShellProblem::TooDeep {
            limit: MAX_SHELL_DEPTH
        }
    );
    assert!(e.to_string().starts_with("container launcher:"), "{e}");
}

#[test]
fn child_shells_see_only_exported_variables() {
    let invs = script("A=1; export B=2; C=3 sh -c 'x $A $B $C'");
    assert_eq!(invs[0].expanded, vec!["x", "$A", "2", "3"]);
}

#[test]
fn unbalanced_quotes_are_typed_errors() {
    let c = container(&["sh", "-c"], &["echo ok\ntorchrun 'train.py --x"], &[]);
    let e = invocations(&c).unwrap_err();
    assert_eq!(e.container, "launcher");
    assert_eq!(
        e.problem,
        ShellProblem::UnclosedQuote {
            quote: '\'',
            line: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "container launcher: the ' quote opened on line 2 of the shell script is never closed"
    );
    for (s, want) in [
        (
            "echo \"abc",
            ShellProblem::UnclosedQuote {
                quote: '"',
                line: 1,
            },
        ),
        (
            "echo $(date",
            ShellProblem::UnclosedSubstitution {
                open: "$(",
                line: 1,
            },
        ),
        (
            "echo ${A",
            ShellProblem::UnclosedSubstitution {
                open: "${",
                line: 1,
            },
        ),
        (
            "echo `date",
            ShellProblem::UnclosedSubstitution { open: "`", line: 1 },
        ),
        (
            "A=(1 2",
            ShellProblem::UnclosedSubstitution {
                open: "array (",
                line: 1,
            },
        ),
        (
            "echo >",
            ShellProblem::RedirectWithoutTarget {
                op: ">".into(),
                line: 1,
            },
        ),
    ] {
        assert_eq!(
            split_script(s, "t", &BTreeMap::new()).unwrap_err().problem,
            want,
            "{s}"
        );
    }
    let c = container(&["bash", "-c"], &[], &[]);
    assert_eq!(
        invocations(&c).unwrap_err().problem,
        ShellProblem::MissingScript {
            shell: "bash".into()
        }
    );
}

#[test]
fn never_panics_on_odd_input() {
    for s in [
        "",
        "\\",
        "$",
        "${",
        "$(",
        "`",
        "'",
        "\"",
        "<<",
        "2>",
        "a=(",
        "((",
        "))",
        ";;",
        "&&&",
        "|||",
        "é$é",
        "x=${",
        "$((1+2))",
        "echo ${A[@",
        "\"$(\"",
        "cat <<'",
        "\u{0}",
        "#",
        "a\\\n",
        "if",
        "!",
        "{",
        "}",
    ] {
        let _ = split_script(s, "t", &BTreeMap::new());
    }
    let vars = BTreeMap::new();
    for s in ["$", "${}", "${A", "\\", "\"", "'", "$1", "${A:-}", "`x"] {
        let _ = expand_word(s, &vars, true);
    }
}

/// A small deterministic generator, so the test needs no crate and always runs the same.
fn scripts(n: usize) -> Vec<String> {
    const PIECES: &[&str] = &[
        " ",
        "\n",
        "\\",
        "\\\n",
        "'",
        "\"",
        "$",
        "${",
        "}",
        "$(",
        ")",
        "(",
        "`",
        ";",
        "&",
        "&&",
        "|",
        "||",
        "<",
        ">",
        "2>&1",
        "<<",
        "<<-",
        "EOF",
        "#",
        "=",
        "A=",
        "A=(",
        "x",
        "sh -c ",
        "bash -lc ",
        "exec ",
        "env ",
        "-c",
        "--",
        "é",
        "[@]",
        ":-",
        "if ",
        "then ",
        "fi",
        "{",
        "\t",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..n)
        .map(|_| {
            let len = (next() % 24) as usize;
            (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect()
        })
        .collect()
}

#[test]
fn random_scripts_never_panic_and_stay_bounded() {
    let vars = BTreeMap::new();
    for s in scripts(4000) {
        if let Ok(invs) = split_script(&s, "fuzz", &vars) {
            for inv in &invs {
                assert!(inv.depth <= MAX_SHELL_DEPTH, "{s:?}");
                let _ = super::super::LauncherCommand::chain(&inv.expanded);
                let _ = super::super::Mpirun::find(&inv.expanded);
                let a = super::super::Args::new(inv.expanded.iter().cloned());
                let _ = super::super::ParallelPlan::from_args(&a);
                let _ = super::super::HfTrainingArgs::parse(&a);
                let _ = super::super::MegatronArgs::parse(&a);
                let _ = inv.resolve(&s);
            }
        }
        let _ = expand_word(&s, &vars, true);
        let _ = super::super::DsConfig::parse(&s);
    }
}
