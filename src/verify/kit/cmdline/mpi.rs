//! `mpirun` / `mpiexec`: Open MPI (`mpirun`, `mpiexec`, `orterun`, `prterun`) and the MPICH /
//! Intel MPI Hydra launcher (`mpiexec`, `mpiexec.hydra`).
//!
//! Options are read in order up to the application: Open MPI accepts one or two dashes for every
//! long option (`-np` = `--np`), `--name=value` is read too, unknown options are taken as
//! switches, and the first word that is neither an option nor an option's value starts the
//! program (`/opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G`), whose own flags are never read
//! as mpirun's. Option names are case-sensitive (`-N` is not `-n`).
//! Upstream: open-mpi/ompi v4.1.8 `opal/util/cmd_line.c` (`opal_cmd_line_parse`, `find_option`
//! with `strcmp`): either prefix finds any option name; a non-dash word or `--` ends the
//! options. Hydra compares names case-insensitively (mpich v4.2.3 `lib/utils/args.c`
//! `match_arg`): not modelled.

use super::args::{parse_int, split_flag};
use super::{basename, last_wins, FlagError, Known, Setting};

/// Program names that start MPI jobs (Open MPI `mpirun`/`mpiexec`/`orterun`/`prterun`; MPICH and
/// Intel MPI Hydra `mpiexec`/`mpiexec.hydra`). Install names: open-mpi/ompi v4.1.8 links
/// `mpirun`, `mpiexec` to `orterun` (`ompi/mca/rte/orte/Makefile.am`); v5.0.8 `mpirun` execs
/// `prterun` (`ompi/tools/mpirun/main.c`); mpich v4.2.3 links both to `mpiexec.hydra`
/// (`src/pm/hydra/Makefile.am`).
pub const MPI_LAUNCHERS: &[&str] = &["mpirun", "mpiexec", "mpiexec.hydra", "orterun", "prterun"];

/// Options taking two values (`--mca NAME VALUE`; Hydra `-genv NAME VALUE`, `-env NAME VALUE`).
/// Upstream: ompi v4.1.8 `opal/mca/base/mca_base_cmd_line.c` (`mca`/`gmca`, 2 params); PRRTE
/// v3.0.11 `src/util/prte_cmd_line.h` (`prtemca`/`pmixmca` "requires TWO"); mpich v4.2.3
/// `mpiexec/options.c` `genv_fn`/`env_fn` also take one `NAME=VALUE` word, not modelled here.
const TWO_VALUES: &[&str] = &["mca", "gmca", "prtemca", "pmixmca", "genv", "env"];

/// Options taking one value: Open MPI 4 `orte/orted/orted_submit.c` / mpirun(1)
/// (https://www.open-mpi.org/doc/v4.0/man1/mpirun.1.php), Open MPI 5 mpirun(1), and Hydra
/// `mpiexec -h` (MPICH, Intel MPI `-ppn`/`-perhost`). Anything else is read as a switch.
/// The v4.1.8 table itself is `orte/mca/schizo/ompi/schizo_ompi.c` `cmd_line_init` (param counts).
const ONE_VALUE: &[&str] = &[
    "np",
    "n",
    "c",
    "N",
    "npernode",
    "npersocket",
    "ppn",
    "perhost",
    "x",
    "bind-to",
    "map-by",
    "rank-by",
    "hostfile",
    "machinefile",
    "default-hostfile",
    "f",
    "H",
    "host",
    "hosts",
    "wdir",
    "wd",
    "prefix",
    "path",
    "output-filename",
    "report-uri",
    "rankfile",
    "rf",
    "am",
    "tune",
    "app",
    "cpus-per-proc",
    "cpus-per-rank",
    "cpu-set",
    "timeout",
    "launcher",
    "bootstrap",
    "iface",
    "genvlist",
    "envlist",
    "configfile",
    "stdin",
    "preload-files",
    "personality",
    "output",
];

/// One mpirun option and the values it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiOption {
    /// As written, without `=value`: `-np`, `--bind-to`.
    pub spelling: String,
    /// Without leading dashes: `np`, `bind-to`, `mca`.
    pub name: String,
    pub values: Vec<String>,
}

/// An environment variable passed to the ranks: `-x NAME[=value]`, `-genv NAME VALUE`,
/// `-genvlist A,B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvExport {
    pub name: String,
    /// None: the launcher's own value is forwarded (`-x NCCL_DEBUG`).
    pub value: Option<String>,
    /// The option it came from, as written.
    pub option: String,
}

/// A host of `-H`/`--host`/`-hosts`: `node1` or `node1:4`. Open MPI's "not enough slots"
/// help text: slots come from "the --host command line parameter, via a ":N" suffix on the
/// hostname (N defaults to 1 if not provided)".
/// That text: ompi v4.1.8 `orte/mca/rmaps/base/help-orte-rmaps-base.txt` (`alloc-error`); parsing:
/// `orte/util/dash_host/dash_host.c` `orte_util_add_dash_host_nodes` (first `:`; `:*`/`:auto` not
/// modelled). Hydra `-hosts h:n` also defaults to 1 (mpich v4.2.3 `options.c` `hostlist_fn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    pub host: String,
    /// The `:N` slot count; None when not written (then 1).
    pub slots: Option<Known<i64>>,
}

/// One `mpirun` call: its options up to the application, and the application with its args.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mpirun {
    /// The launcher as written (`/opt/amazon/openmpi/bin/mpirun`).
    pub launcher: String,
    pub options: Vec<MpiOption>,
    /// The program and its arguments (empty when none was given).
    pub program: Vec<String>,
}

impl Mpirun {
    /// Reads an argv whose program is an MPI launcher; None otherwise.
    /// Unknown options are an error upstream (ompi v4.1.8 `opal_cmd_line_parse`, mpich v4.2.3
    /// `match_arg`): reading them as switches is trainlab's tolerance. `=value` is not in v4.1.8;
    /// it is in Hydra (`match_arg`) and Open MPI 5 (getopt_long, openpmix v5.0.8
    /// `src/util/pmix_cmd_line.c`).
    pub fn parse(argv: &[String]) -> Option<Mpirun> {
        let launcher = argv.first()?;
        if !MPI_LAUNCHERS.contains(&basename(launcher)) {
            return None;
        }
        let after = argv.get(1..).unwrap_or_default();
        let mut options = Vec::new();
        let mut i = 0;
        while let Some(word) = after.get(i) {
            if word == "--" {
                i += 1;
                break;
            }
            let Some((spelling, name, inline)) = split_flag(word) else {
                break;
            };
            let takes = if inline.is_some() {
                0
            } else if TWO_VALUES.contains(&name) {
                2
            } else if ONE_VALUE.contains(&name) {
                1
            } else {
                0
            };
            let end = (i + 1 + takes).min(after.len());
            let mut values: Vec<String> = inline.map(str::to_string).into_iter().collect();
            values.extend(after.get(i + 1..end).unwrap_or_default().iter().cloned());
            options.push(MpiOption {
                spelling: spelling.to_string(),
                name: name.to_string(),
                values,
            });
            i = end;
        }
        Some(Mpirun {
            launcher: launcher.clone(),
            options,
            program: after.get(i..).unwrap_or_default().to_vec(),
        })
    }

    /// The first MPI launcher anywhere in an argv, with what follows it (e.g. behind a wrapper
    /// the shell layer does not know: `numactl --interleave=all mpirun …`).
    /// A trainlab choice, no upstream rule: a wrapper execs its first command word, so the first
    /// launcher word is the one that runs; later ones are arguments of its program.
    pub fn find(argv: &[String]) -> Option<Mpirun> {
        let start = argv
            .iter()
            .position(|w| MPI_LAUNCHERS.contains(&basename(w)))?;
        Mpirun::parse(argv.get(start..)?)
    }

    /// Every option with one of these names (no dashes, case-sensitive), in order.
    pub fn options_named(&self, names: &[&str]) -> Vec<&MpiOption> {
        self.options
            .iter()
            .filter(|o| names.contains(&o.name.as_str()))
            .collect()
    }

    /// The last option with one of these names.
    pub fn option(&self, names: &[&str]) -> Option<&MpiOption> {
        self.options_named(names).pop()
    }

    pub fn has(&self, names: &[&str]) -> bool {
        self.option(names).is_some()
    }

    /// The number of processes as written: `-np N`, `-n N`, `--np N`, `--n N`, `-c N` and the
    /// `=N` forms (Open MPI synonyms; Hydra `-n`/`-np`). `Some("")` when the option has no value.
    /// Upstream: ompi v4.1.8 `schizo_ompi.c` `cmd_line_init` ("-c, -n, --n, -np, and --np are all
    /// synonyms"); mpich v4.2.3 `mpiexec/options.c` (`n`, `np` → `np_fn`).
    pub fn np_raw(&self) -> Option<&str> {
        self.option(NP)
            .map(|o| o.values.first().map(String::as_str).unwrap_or_default())
    }

    /// The number of processes, parsed. A repeated option: the last one, earlier ones reported.
    /// Last wins as in ompi v4.1.8 (`opal/util/cmd_line.h` `ocl_variable_dest`: overwritten on
    /// each occurrence); Hydra rejects a differing repeat (mpich v4.2.3 `args.c` `HYDU_set_int`).
    pub fn np(&self) -> Result<Option<Setting<i64>>, FlagError> {
        self.int_setting(NP)
    }

    /// Processes per node: `-N n` / `--npernode n` / `-npernode n` (Open MPI: "Launch n
    /// processes per node on all allocated nodes", `-N` its synonym), Hydra `-ppn n` / Intel
    /// `-perhost n`, or `--map-by ppr:n:node` (processes per resource). The last one written wins.
    /// Upstream: ompi v4.1.8 `schizo_ompi.c` `cmd_line_init` (`-N`, `npernode` set
    /// `rmaps_ppr_n_pernode`) and `orterun.1in` (`-npernode` "deprecated in favor of --map-by
    /// ppr:n:node"); mpich v4.2.3 `options.c` `ppn_fn`; Intel MPI Developer Reference 2021.15
    /// "Global Hydra Options" lists `-perhost` beside `-ppn` (its argument not verified upstream).
    /// "Last wins" is trainlab's simplification: v4.1.8 ignores `-N` once `--map-by` is given
    /// (`orte/mca/rmaps/base/rmaps_base_frame.c` `orte_rmaps_base_open`), and Open MPI 5 rejects
    /// the pair (PRRTE v3.0.11 `schizo_base_stubs.c` `prte_schizo_base_add_directive`).
    pub fn per_node(&self) -> Result<Option<Setting<i64>>, FlagError> {
        let direct = self.int_setting(PER_NODE)?;
        let direct_index = self
            .options
            .iter()
            .rposition(|o| PER_NODE.contains(&o.name.as_str()));
        let ppr_index = self.options.iter().rposition(|o| {
            o.name == "map-by" && o.values.first().is_some_and(|v| ppr_per_node(v).is_some())
        });
        let (Some(pi), Some(o)) = (ppr_index, ppr_index.and_then(|k| self.options.get(k))) else {
            return Ok(direct);
        };
        if direct_index.is_some_and(|d| d > pi) {
            return Ok(direct);
        }
        let raw = o.values.first().cloned().unwrap_or_default();
        let Some(n) = ppr_per_node(&raw) else {
            return Ok(direct);
        };
        let Some(value) = Known::read(n, parse_int) else {
            return Err(FlagError::invalid(
                &o.spelling,
                &raw,
                "ppr:N:node with an integer N",
            ));
        };
        Ok(Some(Setting {
            value,
            source: o.spelling.clone(),
            raw: Some(raw),
            earlier: Vec::new(),
        }))
    }

    /// Hosts of every `-H`/`-host`/`--host`/`-hosts` option, in order (`a:2,b:2` → two hosts).
    /// A slot count that is neither an integer nor a variable is an error.
    /// Spellings: ompi v4.1.8 `schizo_ompi.c` `cmd_line_init` (`H`, `host`); repeats are joined
    /// (`orted_submit.c` `create_app`); mpich v4.2.3 `options.c` (`host`, `hosts`, `hostlist`).
    pub fn hosts(&self) -> Result<Vec<HostSpec>, FlagError> {
        let mut out = Vec::new();
        for o in self.options_named(&["H", "host", "hosts"]) {
            for h in o.values.iter().flat_map(|v| v.split(',')) {
                if h.is_empty() {
                    continue;
                }
                let Some((host, slots)) = h.rsplit_once(':') else {
                    out.push(HostSpec {
                        host: h.to_string(),
                        slots: None,
                    });
                    continue;
                };
                let Some(slots) = Known::read(slots, parse_int) else {
                    return Err(FlagError::invalid(&o.spelling, h, "host or host:slots"));
                };
                out.push(HostSpec {
                    host: host.to_string(),
                    slots: Some(slots),
                });
            }
        }
        Ok(out)
    }

    /// `--hostfile F` / `-hostfile` / `--machinefile` / `--default-hostfile` / Hydra `-f F`.
    /// Upstream: ompi v4.1.8 `schizo_ompi.c` `cmd_line_init`; mpich v4.2.3 `options.c` (`f`,
    /// `hostfile`, `machinefile` → `mfile_fn`). Both refuse a second `-hostfile`/`-machinefile`;
    /// trainlab takes the last.
    pub fn hostfile(&self) -> Option<&str> {
        self.option(&["hostfile", "machinefile", "default-hostfile", "f"])
            .and_then(|o| o.values.first())
            .map(String::as_str)
    }

    /// Environment passed to the ranks, in order: Open MPI `-x NAME[=value]`, Hydra
    /// `-genv`/`-env NAME VALUE` and `-genvlist`/`-envlist A,B`.
    /// Upstream: ompi v4.1.8 `schizo_ompi.c` `parse_env` (`NAME=value` sets it, bare `NAME` copies
    /// mpirun's own value); mpich v4.2.3 `options.c` `genv_fn`, `genvlist_fn` (values taken from
    /// mpiexec's environment).
    pub fn exports(&self) -> Vec<EnvExport> {
        let mut out = Vec::new();
        for o in &self.options {
            match o.name.as_str() {
                "x" => {
                    for v in &o.values {
                        let (name, value) = match v.split_once('=') {
                            Some((n, val)) => (n.to_string(), Some(val.to_string())),
                            None => (v.clone(), None),
                        };
                        out.push(EnvExport {
                            name,
                            value,
                            option: o.spelling.clone(),
                        });
                    }
                }
                "genv" | "env" => {
                    if let Some(name) = o.values.first() {
                        out.push(EnvExport {
                            name: name.clone(),
                            value: o.values.get(1).cloned(),
                            option: o.spelling.clone(),
                        });
                    }
                }
                "genvlist" | "envlist" => {
                    for name in o.values.iter().flat_map(|v| v.split(',')) {
                        if !name.is_empty() {
                            out.push(EnvExport {
                                name: name.to_string(),
                                value: None,
                                option: o.spelling.clone(),
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The export of `name`, if any (the last one).
    pub fn export(&self, name: &str) -> Option<EnvExport> {
        self.exports().into_iter().rev().find(|e| e.name == name)
    }

    /// The Open MPI installation prefix the remote nodes get their `PATH` and `LD_LIBRARY_PATH`
    /// from, so that the ssh-started daemons find Open MPI: `--prefix DIR`, else, for a launcher
    /// started by its absolute path, that path without its last two parts
    /// (`/opt/amazon/openmpi/bin/mpirun` is `--prefix /opt/amazon/openmpi`); None with
    /// `--noprefix` or a launcher found through `PATH` (open-mpi/ompi v4.1.8
    /// `orte/tools/orterun/orterun.1in`, "Remote Execution" and `--noprefix`).
    pub fn prefix(&self) -> Option<String> {
        if self.has(&["noprefix"]) {
            return None;
        }
        if let Some(dir) = self.option(&["prefix"]).and_then(|o| o.values.first()) {
            return Some(dir.clone());
        }
        let bin = self.launcher.strip_prefix('/')?.rsplit_once('/')?.0;
        let prefix = bin.rsplit_once('/').map_or("", |(p, _)| p);
        Some(format!("/{prefix}"))
    }

    /// `--allow-run-as-root` (Open MPI refuses to run as root without it or the
    /// `OMPI_ALLOW_RUN_AS_ROOT=1` + `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` environment pair, which
    /// the caller finds in [`Invocation::env`](super::Invocation::env)).
    pub fn allow_run_as_root(&self) -> bool {
        self.has(&["allow-run-as-root"])
    }

    /// `--bind-to X`, or Open MPI's legacy `--bind-to-none`.
    /// That option is in ompi v1.6.5 `orte/tools/orterun/orterun.c`; v1.8.8 `orterun.1in` calls it
    /// "deprecated in favor of --bind-to none"; v4.1.8 and PRRTE v3.0.11 no longer list it.
    pub fn bind_to(&self) -> Option<String> {
        let last = self
            .options
            .iter()
            .rev()
            .find(|o| o.name == "bind-to" || o.name == "bind-to-none")?;
        if last.name == "bind-to-none" {
            return Some("none".to_string());
        }
        Some(last.values.first().cloned().unwrap_or_default())
    }

    /// `--map-by X`, or Open MPI 4's `--byslot` (= `--map-by slot`).
    /// Upstream: ompi v4.1.8 `rmaps_base_frame.c` `orte_rmaps_base_open` (maps by slot, warns
    /// "deprecated"); PRRTE v3.0.11 `schizo_ompi.c` `convert_deprecated_cli` (→ `--map-by slot`).
    pub fn map_by(&self) -> Option<String> {
        let last = self
            .options
            .iter()
            .rev()
            .find(|o| o.name == "map-by" || o.name == "byslot")?;
        if last.name == "byslot" {
            return Some("slot".to_string());
        }
        Some(last.values.first().cloned().unwrap_or_default())
    }

    /// `--mca NAME VALUE` (and `--gmca`) pairs, in order.
    pub fn mca(&self) -> Vec<(String, String)> {
        self.options_named(&["mca", "gmca"])
            .into_iter()
            .map(|o| {
                (
                    o.values.first().cloned().unwrap_or_default(),
                    o.values.get(1).cloned().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// A missing value is an error upstream too (ompi v4.1.8 `opal_cmd_line_parse`: "did not have
    /// enough parameters").
    fn int_setting(&self, names: &[&str]) -> Result<Option<Setting<i64>>, FlagError> {
        let mut setting: Option<Setting<i64>> = None;
        for o in self.options_named(names) {
            let Some(raw) = o.values.first() else {
                return Err(FlagError::MissingValue {
                    flag: o.spelling.clone(),
                });
            };
            let next = Setting::read(&o.spelling, raw, "an integer", parse_int)?;
            last_wins(&mut setting, next);
        }
        Ok(setting)
    }
}

const NP: &[&str] = &["np", "n", "c"];
const PER_NODE: &[&str] = &["N", "npernode", "ppn", "perhost"];

/// `ppr:8:node` or `ppr:8:node:PE=2` → `8`; other mappings → None.
/// Upstream shape: ompi v4.1.8 `rmaps_base_frame.c` `orte_rmaps_base_set_mapping_policy` (`ppr`,
/// then `N:object`, then optional `:modifiers`) and `rmaps/ppr/rmaps_ppr.c` `ppr_mapper`.
fn ppr_per_node(map_by: &str) -> Option<&str> {
    let mut parts = map_by.split(':');
    if !parts.next()?.eq_ignore_ascii_case("ppr") {
        return None;
    }
    let n = parts.next()?;
    parts
        .next()
        .filter(|r| r.eq_ignore_ascii_case("node"))
        .map(|_| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn mpirun(line: &str) -> Mpirun {
        Mpirun::parse(&words(line)).expect("an mpirun line")
    }

    #[test]
    fn reads_np_in_every_spelling() {
        for form in [
            "-np 16", "-n 16", "--np 16", "--n 16", "-np=16", "--np=16", "--n=16", "-c 16",
        ] {
            let m = mpirun(&format!("mpirun --allow-run-as-root {form} /app -n 99"));
            assert_eq!(m.np_raw(), Some("16"), "{form}");
            assert_eq!(m.np().unwrap().unwrap().known(), Some(&16), "{form}");
        }
    }

    #[test]
    fn every_launcher_name_is_recognised() {
        for l in [
            "mpirun",
            "mpiexec",
            "mpiexec.hydra",
            "orterun",
            "prterun",
            "/opt/amazon/openmpi/bin/mpirun",
        ] {
            assert!(
                Mpirun::parse(&words(&format!("{l} -n 2 ./a"))).is_some(),
                "{l}"
            );
        }
        assert!(Mpirun::parse(&words("torchrun -n 2")).is_none());
        assert!(Mpirun::parse(&[]).is_none());
    }

    #[test]
    fn finds_mpirun_behind_unknown_wrappers() {
        let m = Mpirun::find(&words("numactl --interleave=all /usr/bin/mpirun -np 4 ./a")).unwrap();
        assert_eq!(m.launcher, "/usr/bin/mpirun");
        assert_eq!(m.np_raw(), Some("4"));
        assert!(Mpirun::find(&words("python train.py")).is_none());
    }

    #[test]
    fn stops_at_the_application_so_its_flags_are_not_read() {
        // all_reduce_perf's own `-n 20` (iterations) must not be taken for -np.
        let m = mpirun("mpirun -x NCCL_DEBUG=INFO --mca pml ob1 /opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G -n 20");
        assert_eq!(m.np_raw(), None);
        assert_eq!(m.options.len(), 2);
        assert_eq!(
            m.program,
            words("/opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G -n 20")
        );
        assert_eq!(m.mca(), vec![("pml".to_string(), "ob1".to_string())]);
        // `--` ends the options too.
        let m = mpirun("mpirun -np 2 -- -weird-program");
        assert_eq!(m.program, words("-weird-program"));
    }

    #[test]
    fn processes_per_node_in_every_spelling() {
        for (form, source) in [
            ("-N 8", "-N"),
            ("--npernode 8", "--npernode"),
            ("-npernode 8", "-npernode"),
            ("-ppn 8", "-ppn"),
            ("-perhost 8", "-perhost"),
            ("--map-by ppr:8:node", "--map-by"),
            ("--map-by ppr:8:node:PE=2", "--map-by"),
            ("-map-by=ppr:8:node", "-map-by"),
        ] {
            let m = mpirun(&format!("mpirun {form} ./a"));
            let s = m.per_node().unwrap().expect(form);
            assert_eq!(s.known(), Some(&8), "{form}");
            assert_eq!(s.source, source, "{form}");
        }
        // -n is not -N.
        assert_eq!(mpirun("mpirun -n 8 ./a").per_node().unwrap(), None);
        // A mapping that is not per node says nothing about it.
        assert_eq!(
            mpirun("mpirun --map-by ppr:4:socket ./a")
                .per_node()
                .unwrap(),
            None
        );
        assert_eq!(mpirun("mpirun --map-by slot ./a").per_node().unwrap(), None);
        // The last written wins.
        let m = mpirun("mpirun --map-by ppr:4:node -N 8 ./a");
        assert_eq!(m.per_node().unwrap().unwrap().known(), Some(&8));
        let m = mpirun("mpirun -N 8 --map-by ppr:4:node ./a");
        assert_eq!(m.per_node().unwrap().unwrap().known(), Some(&4));
        let e = mpirun("mpirun --map-by ppr:x:node ./a")
            .per_node()
            .unwrap_err();
        assert_eq!(e.flag(), "--map-by");
    }

    #[test]
    fn host_lists_with_slots() {
        let m = mpirun("mpirun -H a:8,b:8 --host c -hosts d:$SLOTS ./app");
        assert_eq!(
            m.hosts().unwrap(),
            vec![
                HostSpec {
                    host: "a".into(),
                    slots: Some(Known::Value(8))
                },
                HostSpec {
                    host: "b".into(),
                    slots: Some(Known::Value(8))
                },
                HostSpec {
                    host: "c".into(),
                    slots: None
                },
                HostSpec {
                    host: "d".into(),
                    slots: Some(Known::Variable("$SLOTS".into()))
                },
            ]
        );
        let e = mpirun("mpirun -H a:x ./app").hosts().unwrap_err();
        assert_eq!(e.to_string(), "-H=a:x: expected host or host:slots");
        for form in [
            "--hostfile /etc/mpi/hostfile",
            "-hostfile /etc/mpi/hostfile",
            "--machinefile /etc/mpi/hostfile",
            "-f /etc/mpi/hostfile",
            "--hostfile=/etc/mpi/hostfile",
        ] {
            assert_eq!(
                mpirun(&format!("mpirun {form} ./a")).hostfile(),
                Some("/etc/mpi/hostfile"),
                "{form}"
            );
        }
    }

    #[test]
    fn exported_environment() {
        let m = mpirun("mpiexec -x FI_PROVIDER=efa -x NCCL_DEBUG -genv FI_EFA_USE_DEVICE_RDMA 1 -genvlist A,B ./a");
        let e = m.exports();
        assert_eq!(e.len(), 5);
        assert_eq!(
            e[0],
            EnvExport {
                name: "FI_PROVIDER".into(),
                value: Some("efa".into()),
                option: "-x".into()
            }
        );
        assert_eq!(e[1].value, None);
        assert_eq!(
            e[2],
            EnvExport {
                name: "FI_EFA_USE_DEVICE_RDMA".into(),
                value: Some("1".into()),
                option: "-genv".into()
            }
        );
        assert_eq!(e[4].name, "B");
        assert_eq!(
            m.export("FI_PROVIDER").and_then(|x| x.value),
            Some("efa".into())
        );
        assert_eq!(m.export("OTHER"), None);
    }

    #[test]
    fn the_prefix_comes_from_the_option_or_an_absolute_launcher() {
        let prefix = |line: &str| mpirun(line).prefix();
        assert_eq!(
            prefix("/opt/amazon/openmpi/bin/mpirun -np 2 a.out").as_deref(),
            Some("/opt/amazon/openmpi")
        );
        assert_eq!(prefix("/usr/bin/mpirun a.out").as_deref(), Some("/usr"));
        assert_eq!(
            prefix("mpirun --prefix /opt/amazon/openmpi a.out").as_deref(),
            Some("/opt/amazon/openmpi")
        );
        assert_eq!(prefix("mpirun -np 2 a.out"), None);
        assert_eq!(prefix("/opt/ompi/bin/mpirun --noprefix a.out"), None);
    }

    #[test]
    fn binding_and_mapping() {
        let m = mpirun("mpirun -bind-to none -map-by slot:PE=1 ./a");
        assert_eq!(m.bind_to().as_deref(), Some("none"));
        assert_eq!(m.map_by().as_deref(), Some("slot:PE=1"));
        let m = mpirun("mpirun --bind-to-none --byslot ./a");
        assert_eq!(m.bind_to().as_deref(), Some("none"));
        assert_eq!(m.map_by().as_deref(), Some("slot"));
        let m = mpirun("mpirun --bind-to=core ./a");
        assert_eq!(m.bind_to().as_deref(), Some("core"));
        assert_eq!(m.map_by(), None);
        assert!(!m.allow_run_as_root());
        assert!(mpirun("mpirun --allow-run-as-root ./a").allow_run_as_root());
    }

    #[test]
    fn np_problems_are_typed() {
        let e = mpirun("mpirun -np sixteen ./a").np().unwrap_err();
        assert_eq!(e.to_string(), "-np=sixteen: expected an integer");
        let m = mpirun("mpirun -np");
        assert_eq!(m.np_raw(), Some(""));
        assert_eq!(
            m.np().unwrap_err(),
            FlagError::MissingValue { flag: "-np".into() }
        );
        let m = mpirun("mpirun -np $NP ./a");
        assert_eq!(
            m.np().unwrap().unwrap().value,
            Known::Variable("$NP".into())
        );
        let m = mpirun("mpirun -np 8 -np 16 ./a");
        let s = m.np().unwrap().unwrap();
        assert_eq!(s.known(), Some(&16));
        assert_eq!(s.earlier, vec!["8".to_string()]);
    }

    #[test]
    fn aws_eks_nccl_tests_launcher_line() {
        // The shape of the aws-samples / EKS nccl-tests MPIJob launcher command.
        let line = "/opt/amazon/openmpi/bin/mpirun --allow-run-as-root --tag-output -np 16 -N 8 \
            --bind-to none -x PATH -x LD_LIBRARY_PATH -x FI_PROVIDER=efa -x FI_EFA_USE_DEVICE_RDMA=1 \
            -x NCCL_DEBUG=INFO -x NCCL_BUFFSIZE=8388608 -x NCCL_P2P_NET_CHUNKSIZE=524288 \
            --mca pml ^cm,ucx --mca btl tcp,self --mca btl_tcp_if_exclude lo,docker0,veth_def_agent \
            /opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G -f 2 -g 1 -c 1 -n 100";
        let m = mpirun(line);
        assert_eq!(m.np().unwrap().unwrap().known(), Some(&16));
        assert_eq!(m.per_node().unwrap().unwrap().known(), Some(&8));
        assert!(m.allow_run_as_root());
        assert_eq!(m.bind_to().as_deref(), Some("none"));
        assert_eq!(
            m.export("FI_PROVIDER").and_then(|e| e.value).as_deref(),
            Some("efa")
        );
        assert_eq!(m.mca().len(), 3);
        assert_eq!(
            m.program.first().map(String::as_str),
            Some("/opt/nccl-tests/build/all_reduce_perf")
        );
        // all_reduce_perf's `-c 1` (check) is not mpirun's `-c`.
        assert_eq!(m.np_raw(), Some("16"));
    }
}
