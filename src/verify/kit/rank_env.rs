//! Environment variables as a program sees them: the container's `env`/`envFrom` (with the
//! namespace's ConfigMaps), what its command line sets on top (`export`, `VAR=value`
//! prefixes), and, for ranks that mpirun starts on other hosts, only what mpirun exports.

use k8s_openapi::api::core::v1::Container;

use super::cmdline::{self, EnvLookup, Mpirun, ShellError};
use super::workload::{Workload, WorkloadKind};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::views::mpi;
use crate::verify::Outcome;

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

/// `check`: the program of the training container `(c, path)` sees `name` = `want` (blanks
/// around the value ignored); in an MPIJob, the ranks the Launcher's mpirun starts do
/// ([`rank_env`]). Fails, with evidence `path` where it names a container:
/// - default: not set (expected `<path>.env: NAME=want`, found `<path>.env: —`);
/// - `wrong-value` {`value`}: found `NAME=value`;
/// - `unresolved` {`source`}: set from what the grader cannot read ([`source_of`]);
/// - `other-container` {`other`}: set on another container, not on the training one;
/// - MPIJob: `mpi-export` {`command`} (mpirun does not export it; found: the Worker's env entry
///   when only the Workers set it), `no-mpirun` {`command`} (the Launcher runs no mpirun).
///
/// A Launcher command line the shell reader cannot follow is bad input naming its field.
pub fn check_reaches(
    check: &str,
    wl: &Workload,
    (c, path): (&Container, &str),
    (name, want): (&str, &str),
    config_map: &dyn Fn(&str, &str) -> EnvLookup,
) -> Result<Outcome, InputError> {
    let seen = program_env(c, name, config_map);
    let wrong = |expected: &str, v: &str| {
        Outcome::fail(check, expected, format!("{name}={v}"))
            .hint("wrong-value")
            .with("value", v)
    };
    let unresolved = |expected: &str, c: &Container, path: &str| {
        let source = source_of(c, name);
        Outcome::fail(check, expected, format!("{name} ← {source}"))
            .hint("unresolved")
            .with("source", source)
            .with("path", path)
    };
    if wl.kind != WorkloadKind::MpiJob {
        let expected = format!("{path}.env: {name}={want}");
        return Ok(match seen {
            EnvLookup::Value(v) if v.trim() == want => Outcome::pass(check),
            EnvLookup::Value(v) => wrong(&expected, &v),
            EnvLookup::Unresolved(_) => unresolved(&expected, c, path),
            EnvLookup::Absent => {
                let set = |o: &Container| program_env(o, name, config_map) != EnvLookup::Absent;
                let other = wl.containers().find(|(_, o, p)| *p != path && set(o));
                let found = match other {
                    Some((_, _, op)) => format!("{op}.env: {name}"),
                    None => format!("{path}.env: —"),
                };
                let o = Outcome::fail(check, expected, found).with("path", path);
                match other {
                    Some((_, _, op)) => o.hint("other-container").with("other", op),
                    None => o,
                }
            }
        });
    }
    let expected = format!("mpirun -x {name}={want}");
    let launcher = wl
        .template(mpi::LAUNCHER)
        .and_then(|t| t.containers().next());
    let Some((lc, lpath)) = launcher else {
        let lpath = format!("spec.mpiReplicaSpecs.{}", mpi::LAUNCHER);
        return Ok(Outcome::fail(check, expected, format!("{lpath}: —"))
            .hint("no-mpirun")
            .with("path", lpath)
            .with("command", "—"));
    };
    let command = cmdline::command_line(lc, 160);
    let env = rank_env(lc, name, config_map)
        .map_err(|e| wl.obj.field_error(format!("{lpath}.command"), e.problem))?;
    Ok(match env {
        RankEnv::NoMpirun => Outcome::fail(check, expected, &command)
            .hint("no-mpirun")
            .with("path", lpath)
            .with("command", command),
        RankEnv::Exported(EnvLookup::Value(v)) if v.trim() == want => Outcome::pass(check),
        RankEnv::Exported(EnvLookup::Value(v)) => wrong(&expected, &v),
        RankEnv::Exported(EnvLookup::Unresolved(_)) => unresolved(&expected, lc, lpath),
        RankEnv::Exported(EnvLookup::Absent) | RankEnv::NotExported => {
            let found = match seen {
                EnvLookup::Absent => command.clone(),
                _ => format!("{path}.env: {name}"),
            };
            Outcome::fail(check, expected, found)
                .hint("mpi-export")
                .with("command", command)
        }
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

    fn workload_check(v: Value) -> Outcome {
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
        check_reaches("fi", &wl, (c, p), (FI, "efa"), &none).unwrap()
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

    #[test]
    fn a_job_s_program_must_see_the_value() {
        let ok = workload_check(job(json!([{"name": "c", "image": "i",
            "command": ["sh", "-c", "export FI_PROVIDER=efa; ./run"]}])));
        assert_eq!(ok.status, crate::verify::Status::Pass);
        let tcp = workload_check(job(
            json!([{"name": "c", "image": "i", "env": [{"name": FI, "value": "tcp"}]}]),
        ));
        assert_eq!(
            (tcp.hint.as_deref(), tcp.found.as_deref()),
            (Some("wrong-value"), Some("FI_PROVIDER=tcp"))
        );
        let other = workload_check(job(json!([{"name": "c", "image": "i"},
            {"name": "s", "image": "i", "env": [{"name": FI, "value": "efa"}]}])));
        assert_eq!(other.hint.as_deref(), Some("other-container"));
    }

    #[test]
    fn an_mpijob_s_ranks_see_only_what_mpirun_exports() {
        let launcher = |cmd: Value| json!({"name": "l", "image": "i", "command": cmd});
        let ok = workload_check(mpijob(
            launcher(json!(["mpirun", "-x", "FI_PROVIDER=efa", "./a"])),
            json!([]),
        ));
        assert_eq!(ok.status, crate::verify::Status::Pass);
        let w = workload_check(mpijob(
            launcher(json!(["mpirun", "./a"])),
            json!([{"name": FI, "value": "efa"}]),
        ));
        assert_eq!(w.hint.as_deref(), Some("mpi-export"));
        assert_eq!(
            w.found.as_deref(),
            Some("spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env: FI_PROVIDER")
        );
        let bare = workload_check(mpijob(launcher(json!(["./all_reduce_perf"])), json!([])));
        assert_eq!(
            (bare.hint.as_deref(), bare.found.as_deref()),
            (Some("no-mpirun"), Some("./all_reduce_perf"))
        );
    }
}
