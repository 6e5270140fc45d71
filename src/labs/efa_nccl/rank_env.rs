//! Environment variables as a program sees them: the container's `env`/`envFrom` (with the
//! namespace's ConfigMaps), what its command line sets on top (`export`, `VAR=value`
//! prefixes), and, for ranks that mpirun starts on other hosts, only what mpirun exports.

use k8s_openapi::api::core::v1::Container;

use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::{self, EnvLookup, Mpirun, ShellError};
use crate::verify::kit::k8s::workload::{Workload, WorkloadKind};
use crate::verify::views::mpi;

/// Reads ConfigMap keys from the namespace's ConfigMaps: a map that is missing or unreadable
/// leaves the variable unresolved (`ConfigMap/<name>`); a missing key is absent.
pub fn config_maps<'a>(
    read: &'a Result<Vec<&'a Obj>, Unavailable>,
) -> impl Fn(&str, &str) -> EnvLookup + 'a {
    move |map: &str, key: &str| {
        let unresolved = || EnvLookup::Unresolved(format!("ConfigMap/{map}"));
        let Ok(list) = read else { return unresolved() };
        match list.iter().find(|o| o.name() == map) {
            None => unresolved(),
            Some(o) => match o.value["data"][key].as_str() {
                Some(v) => EnvLookup::Value(v.to_string()),
                None => EnvLookup::Absent,
            },
        }
    }
}

/// The value the container's program starts with: what its command line sets (the last
/// command whose environment has it: `export`, `VAR=value` prefixes, literal env), else the
/// container's environment (kit `cmdline::container_env`). A command line the shell reader
/// cannot follow leaves the container's environment alone to decide.
pub fn program_env(
    c: &Container,
    name: &str,
    config_map: &dyn Fn(&str, &str) -> EnvLookup,
) -> EnvLookup {
    let invs = cmdline::invocations(c).unwrap_or_default();
    match invs.iter().rev().find_map(|i| i.env(name)) {
        Some(v) => EnvLookup::Value(v.to_string()),
        None => cmdline::container_env(c, name, config_map),
    }
}

/// What an MPI launcher container gives the ranks it starts of one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankEnv {
    /// The container runs no mpirun.
    NoMpirun,
    /// mpirun does not export it: the ranks, started over ssh, do not get it.
    NotExported,
    /// Exported: `-x NAME=value`, or `-x NAME` forwarding mpirun's own value.
    Exported(EnvLookup),
}

/// Open MPI mpirun(1) `-x`: "Export the specified environment variables to the remote nodes
/// before executing the program"; a bare `-x NAME` forwards mpirun's own value, which is its
/// command line's environment, else the container's. The first mpirun that exports `name`.
/// Upstream: open-mpi/ompi v4.1.8 `orte/tools/orterun/orterun.1in` (`-x`) and
/// `orte/mca/schizo/ompi/schizo_ompi.c` `parse_env` (bare name: mpirun's `getenv`, a warning if
/// unset). Taking the first exporting mpirun is a trainlab choice. Not Hydra: by default it passes
/// mpiexec's whole environment (mpich v4.2.3 `src/pm/hydra/mansrc/mpiexec.txt`, `-envnone`).
pub fn rank_env(
    c: &Container,
    name: &str,
    config_map: &dyn Fn(&str, &str) -> EnvLookup,
) -> Result<RankEnv, ShellError> {
    let invs = cmdline::invocations(c)?;
    let mut runs = invs
        .iter()
        .filter_map(|i| Some((i, Mpirun::find(&i.expanded)?)))
        .peekable();
    if runs.peek().is_none() {
        return Ok(RankEnv::NoMpirun);
    }
    let Some((inv, x)) = runs.find_map(|(i, m)| Some((i, m.export(name)?))) else {
        return Ok(RankEnv::NotExported);
    };
    Ok(RankEnv::Exported(match (x.value, inv.env(name)) {
        (Some(v), _) => EnvLookup::Value(v),
        (None, Some(v)) => EnvLookup::Value(v.to_string()),
        (None, None) => cmdline::container_env(c, name, config_map),
    }))
}

/// Where a variable the grader cannot read comes from: `Secret/name`, `ConfigMap/name`, or
/// the `valueFrom` kind (`fieldRef`, `resourceFieldRef`); `envFrom` when no source names it.
pub fn source_of(c: &Container, name: &str) -> String {
    let named = c.env.iter().flatten().rev().find(|e| e.name == name);
    if let Some(from) = named.and_then(|e| e.value_from.as_ref()) {
        return match (&from.config_map_key_ref, &from.secret_key_ref) {
            (Some(r), _) => format!("ConfigMap/{}", r.name),
            (_, Some(r)) => format!("Secret/{}", r.name),
            _ if from.field_ref.is_some() => "fieldRef".into(),
            _ => "resourceFieldRef".into(),
        };
    }
    let from = c.env_from.iter().flatten().rev().find_map(|s| {
        let secret = s.secret_ref.as_ref().map(|r| format!("Secret/{}", r.name));
        secret.or_else(|| {
            s.config_map_ref
                .as_ref()
                .map(|r| format!("ConfigMap/{}", r.name))
        })
    });
    from.unwrap_or_else(|| "envFrom".into())
}

/// A variable as the ranks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RanksSee {
    /// Its value (or absence). `path` is the container that decides it: the training container,
    /// or in an MPIJob the Launcher, whose mpirun exports it; `source` says where a value the
    /// grader cannot read comes from ([`source_of`]).
    Seen {
        value: EnvLookup,
        path: String,
        source: Option<String>,
    },
    /// An MPIJob whose Launcher runs no mpirun (`command` as written): no rank starts.
    NoMpirun { path: String, command: String },
}

/// `name` as the ranks of the training container `(c, path)` see it: what its program starts
/// with; in an MPIJob, what the Launcher's mpirun exports to the ranks it starts over ssh
/// ([`rank_env`]: the Workers' own `env` does not reach them). A Launcher command line the
/// shell reader cannot follow is bad input naming its field.
pub fn ranks_see(
    wl: &Workload,
    (c, path): (&Container, &str),
    name: &str,
    config_map: &dyn Fn(&str, &str) -> EnvLookup,
) -> Result<RanksSee, InputError> {
    let seen = |value: EnvLookup, c: &Container, path: &str| {
        let source = matches!(value, EnvLookup::Unresolved(_)).then(|| source_of(c, name));
        RanksSee::Seen {
            value,
            path: path.to_string(),
            source,
        }
    };
    if wl.kind != WorkloadKind::MpiJob {
        return Ok(seen(program_env(c, name, config_map), c, path));
    }
    let launcher = wl
        .template(mpi::LAUNCHER)
        .and_then(|t| t.containers().next());
    let Some((lc, lpath)) = launcher else {
        return Ok(RanksSee::NoMpirun {
            path: format!("spec.mpiReplicaSpecs.{}", mpi::LAUNCHER),
            command: "—".into(),
        });
    };
    let env = rank_env(lc, name, config_map)
        .map_err(|e| wl.obj.field_error(format!("{lpath}.command"), e.problem))?;
    Ok(match env {
        RankEnv::NoMpirun => RanksSee::NoMpirun {
            path: lpath.to_string(),
            command: cmdline::command_line(lc, 160),
        },
        RankEnv::NotExported => seen(EnvLookup::Absent, lc, lpath),
        RankEnv::Exported(v) => seen(v, lc, lpath),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use serde_json::{json, Value};

    fn container(v: Value) -> Container {
        let mut c = json!({"name": "c", "image": "i"});
        for (k, x) in v.as_object().unwrap() {
            c[k] = x.clone();
        }
        serde_json::from_value(c).unwrap()
    }

    fn none(_: &str, _: &str) -> EnvLookup {
        EnvLookup::Unresolved("ConfigMap".into())
    }

    const FI: &str = "FI_PROVIDER";

    #[test]
    fn the_command_line_sets_what_the_program_sees() {
        let v = |c: Value| program_env(&container(c), FI, &none);
        assert_eq!(
            v(json!({"env": [{"name": FI, "value": "efa"}]})),
            EnvLookup::Value("efa".into())
        );
        let export = json!({"command": ["sh", "-c", "export FI_PROVIDER=efa; exec ./run"]});
        assert_eq!(v(export), EnvLookup::Value("efa".into()));
        let prefix = json!({"command": ["sh", "-c", "FI_PROVIDER=efa ./run"],
                            "env": [{"name": FI, "value": "tcp"}]});
        assert_eq!(v(prefix), EnvLookup::Value("efa".into()));
        let cm = json!({"env": [{"name": FI, "valueFrom": {"configMapKeyRef": {"name": "m", "key": "k"}}}]});
        assert_eq!(v(cm), EnvLookup::Unresolved("ConfigMap".into()));
        assert_eq!(v(json!({})), EnvLookup::Absent);
    }

    #[test]
    fn ranks_get_only_what_mpirun_exports() {
        let r = |c: Value| rank_env(&container(c), FI, &none).unwrap();
        let run = |x: &str| json!({"command": ["mpirun", "-np", "2", "-x", x, "./a"]});
        assert_eq!(
            r(run("FI_PROVIDER=efa")),
            RankEnv::Exported(EnvLookup::Value("efa".into()))
        );
        assert_eq!(r(run("PATH")), RankEnv::NotExported);
        let mut fwd = run(FI);
        fwd["env"] = json!([{"name": FI, "value": "efa"}]);
        assert_eq!(r(fwd), RankEnv::Exported(EnvLookup::Value("efa".into())));
        let prefixed =
            json!({"command": ["sh", "-c", "FI_PROVIDER=efa mpirun -x FI_PROVIDER ./a"]});
        assert_eq!(
            r(prefixed),
            RankEnv::Exported(EnvLookup::Value("efa".into()))
        );
        assert_eq!(r(json!({"command": ["./a"]})), RankEnv::NoMpirun);
    }

    #[test]
    fn config_maps_and_sources() {
        let cm = Obj::new(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"},
                   "data": {"k": "efa"}}),
            Origin::File {
                path: "cm.yaml".into(),
                doc: 1,
                item: None,
            },
        )
        .unwrap();
        let read = Ok(vec![&cm]);
        let look = config_maps(&read);
        assert_eq!(look("m", "k"), EnvLookup::Value("efa".into()));
        assert_eq!(look("m", "x"), EnvLookup::Absent);
        assert_eq!(look("n", "k"), EnvLookup::Unresolved("ConfigMap/n".into()));
        let c = container(
            json!({"env": [{"name": FI, "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}),
        );
        assert_eq!(source_of(&c, FI), "Secret/s");
        let c = container(json!({"envFrom": [{"configMapRef": {"name": "m"}}]}));
        assert_eq!(source_of(&c, FI), "ConfigMap/m");
    }

    fn ranks_see_of(v: Value) -> RanksSee {
        let o = Obj::new(
            v,
            Origin::File {
                path: "w.yaml".into(),
                doc: 1,
                item: None,
            },
        )
        .unwrap();
        let wl = Workload::from_obj(&o).unwrap().unwrap();
        let t = wl.templates.last().unwrap();
        let (c, p) = t.containers().next().unwrap();
        ranks_see(&wl, (c, p), FI, &none).unwrap()
    }

    fn job(containers: Value) -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    }

    fn mpijob(launcher: Value, worker_env: Value) -> Value {
        json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
               "spec": {"mpiReplicaSpecs": {
                 "Launcher": {"replicas": 1, "template": {"spec": {"containers": [launcher]}}},
                 "Worker": {"replicas": 2, "template": {"spec": {"containers": [
                     {"name": "w", "image": "i", "env": worker_env}]}}}}}})
    }

    fn value(r: RanksSee) -> EnvLookup {
        match r {
            RanksSee::Seen { value, .. } => value,
            other => panic!("not seen: {other:?}"),
        }
    }

    #[test]
    fn a_job_s_ranks_see_what_its_program_starts_with() {
        let export = job(json!([{"name": "c", "image": "i",
            "command": ["sh", "-c", "export FI_PROVIDER=efa; ./run"]}]));
        assert_eq!(value(ranks_see_of(export)), EnvLookup::Value("efa".into()));
        let secret = job(json!([{"name": "c", "image": "i", "env": [{"name": FI,
            "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]));
        match ranks_see_of(secret) {
            RanksSee::Seen { path, source, .. } => {
                assert_eq!(path, "spec.template.spec.containers[0]");
                assert_eq!(source.as_deref(), Some("Secret/s"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_mpijob_s_ranks_see_only_what_mpirun_exports() {
        let launcher = |cmd: Value| json!({"name": "l", "image": "i", "command": cmd});
        let exported = mpijob(
            launcher(json!(["mpirun", "-x", "FI_PROVIDER=tcp", "./a"])),
            json!([]),
        );
        assert_eq!(
            value(ranks_see_of(exported)),
            EnvLookup::Value("tcp".into())
        );
        // The Workers' env does not reach ranks started over ssh.
        let workers_only = mpijob(
            launcher(json!(["mpirun", "./a"])),
            json!([{"name": FI, "value": "tcp"}]),
        );
        match ranks_see_of(workers_only) {
            RanksSee::Seen { value, path, .. } => {
                assert_eq!(value, EnvLookup::Absent);
                assert_eq!(
                    path,
                    "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]"
                );
            }
            other => panic!("{other:?}"),
        }
        let bare = mpijob(launcher(json!(["./all_reduce_perf"])), json!([]));
        assert_eq!(
            ranks_see_of(bare),
            RanksSee::NoMpirun {
                path: "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]".into(),
                command: "./all_reduce_perf".into()
            }
        );
    }
}
