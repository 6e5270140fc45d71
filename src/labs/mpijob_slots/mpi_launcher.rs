//! What an MPI launcher pod template runs: the `mpirun` found in its containers' command lines
//! (through shells and `$(VAR)`s, kit `cmdline`), with the command and container it came from,
//! and the Open MPI rules that depend on them.
//!
//! - Binding and mapping: `--bind-to X` and `--map-by X` set the MCA parameters
//!   `hwloc_base_binding_policy` and `rmaps_base_mapping_policy` (open-mpi/ompi v4.x
//!   `orte/mca/schizo/ompi/schizo_ompi.c`, `cmd_line_init`), so `--mca <param> X` and the
//!   environment variable `OMPI_MCA_<param>=X` say the same; the command-line option wins over
//!   `--mca`, which wins over the environment (Open MPI FAQ, "How do I set the value of MCA
//!   parameters?").
//! - Running as root: Open MPI's mpirun "will refuse to run as root by default" unless given
//!   `--allow-run-as-root` or both `OMPI_ALLOW_RUN_AS_ROOT=1` and
//!   `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` (open-mpi/ompi v4.x `orte/tools/orterun/orterun.1in`,
//!   "Running as root"). The container's `runAsUser` wins over the pod's; with neither, the image
//!   decides.
//! - The pods of an MPIJob, by ownerReference uid (kit `owned`): the workers it owns, and the
//!   launcher Job it owns with that Job's pods; with `runLauncherAsWorker` the launcher is a host
//!   in the hostfile too (kubeflow/mpi-operator v0.8.0 `pkg/controller/mpi_job_controller.go`).

use k8s_openapi::api::core::v1::Container;

use crate::observe::{InputError, Obj};
use crate::verify::kit::cmdline::{self, EnvLookup, Invocation, Mpirun, ShellError, ShellProblem};
use crate::verify::kit::k8s::owned;
use crate::verify::kit::k8s::workload::PodTemplate;
use crate::verify::views::pods::PodFacts;

/// The mpirun an MPIJob's launcher template runs, or why there is none.
#[derive(Debug, Clone)]
pub enum LauncherMpirun {
    /// No container at all.
    NoContainer,
    /// No container runs mpirun: the first container's command line as written.
    NoMpirun(String),
    /// A container's shell script cannot be split (the shell would refuse it too).
    Shell(ShellError),
    Found(Box<Found>),
}

/// An mpirun, the command it came from (its environment) and its container.
#[derive(Debug, Clone)]
pub struct Found {
    pub mpirun: Mpirun,
    pub invocation: Invocation,
    pub container: Container,
}

/// The mpirun a launcher template runs: the first with a process count (`-np`, `-N`, …), else
/// the first one. A trainlab choice, no upstream rule: launcher scripts often run a probe such as
/// `mpirun hostname` first, and the run that sets a count is the job being graded.
pub fn find(t: &PodTemplate) -> LauncherMpirun {
    let mut found: Vec<Found> = Vec::new();
    for c in &t.spec.containers {
        let invocations = match cmdline::invocations(c) {
            Ok(i) => i,
            Err(e) => return LauncherMpirun::Shell(e),
        };
        for invocation in invocations {
            if let Some(mpirun) = Mpirun::find(&invocation.expanded) {
                let container = c.clone();
                found.push(Found {
                    mpirun,
                    invocation,
                    container,
                });
            }
        }
    }
    let counted =
        |f: &Found| f.mpirun.np_raw().is_some() || !matches!(f.mpirun.per_node(), Ok(None));
    let pick = found.iter().position(counted);
    match pick.or((!found.is_empty()).then_some(0)) {
        Some(i) => LauncherMpirun::Found(Box::new(found.swap_remove(i))),
        None => match t.spec.containers.first() {
            Some(c) => LauncherMpirun::NoMpirun(cmdline::command_line(c, 160)),
            None => LauncherMpirun::NoContainer,
        },
    }
}

/// Where a script cannot be split, as values: `<container>: <line>: <token>`.
pub fn shell_error_at(e: &ShellError) -> String {
    let at = match &e.problem {
        ShellProblem::UnclosedQuote { quote, line } => format!("{line}: {quote}"),
        ShellProblem::UnclosedSubstitution { open, line } => format!("{line}: {open}"),
        ShellProblem::RedirectWithoutTarget { op, line } => format!("{line}: {op}"),
        ShellProblem::MissingScript { shell } => format!("{shell} -c"),
        ShellProblem::TooDeep { limit } => format!("sh -c × {limit}"),
    };
    format!("{}: {at}", e.container)
}

/// An Open MPI policy and where it was set (`-bind-to`, `--mca hwloc_base_binding_policy`,
/// `OMPI_MCA_hwloc_base_binding_policy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub value: String,
    pub source: String,
}

impl Policy {
    /// As written: `-bind-to none`, `--mca hwloc_base_binding_policy none`,
    /// `OMPI_MCA_hwloc_base_binding_policy=none`.
    pub fn written(&self) -> String {
        if self.source.starts_with('-') {
            format!("{} {}", self.source, self.value)
        } else {
            format!("{}={}", self.source, self.value)
        }
    }

    /// Whether the policy is `want`, qualifiers aside (`slot:PE=1` is `slot`). Open MPI reads the
    /// word before the first `:` case-insensitively, the rest as modifiers (open-mpi/ompi v4.1.8
    /// `orte/mca/rmaps/base/rmaps_base_frame.c` `orte_rmaps_base_set_mapping_policy`;
    /// `opal/mca/hwloc/base/hwloc_base_frame.c` `opal_hwloc_base_set_binding_policy`).
    pub fn is(&self, want: &str) -> bool {
        let head = self.value.split(':').next().unwrap_or_default();
        head.eq_ignore_ascii_case(want)
    }
}

const BINDING_PARAM: &str = "hwloc_base_binding_policy";
const MAPPING_PARAM: &str = "rmaps_base_mapping_policy";

impl Found {
    /// The binding policy: `--bind-to`, else the MCA parameter on the command line, else in the
    /// environment.
    pub fn binding(&self) -> Option<Policy> {
        let option = self.mpirun.bind_to().map(|value| Policy {
            value,
            source: "-bind-to".into(),
        });
        option.or_else(|| self.mca(BINDING_PARAM))
    }

    /// The mapping policy: `--map-by`, else the MCA parameter on the command line, else in the
    /// environment.
    pub fn mapping(&self) -> Option<Policy> {
        let option = self.mpirun.map_by().map(|value| Policy {
            value,
            source: "-map-by".into(),
        });
        option.or_else(|| self.mca(MAPPING_PARAM))
    }

    fn mca(&self, param: &str) -> Option<Policy> {
        let on_line = self
            .mpirun
            .mca()
            .into_iter()
            .rev()
            .find(|(n, _)| n == param);
        if let Some((_, value)) = on_line {
            return Some(Policy {
                value,
                source: format!("--mca {param}"),
            });
        }
        let var = format!("OMPI_MCA_{param}");
        self.env_value(&var)
            .map(|value| Policy { value, source: var })
    }

    /// A variable's literal value where mpirun starts: its command's environment, else the
    /// container's `env`.
    fn env_value(&self, name: &str) -> Option<String> {
        if let Some(v) = self.invocation.env(name) {
            return Some(v.to_string());
        }
        let unread = |_: &str, _: &str| EnvLookup::Unresolved(String::new());
        match cmdline::container_env(&self.container, name, &unread) {
            EnvLookup::Value(v) => Some(v),
            _ => None,
        }
    }

    /// Whether mpirun passes `name` to the ranks: `-x NAME[=value]` (Hydra `-genv`,
    /// `-genvlist`), or Open MPI's `mca_base_env_list` (`--mca` or `OMPI_MCA_…`, `;`-separated
    /// `NAME[=value]` entries, open-mpi/ompi v4.1.8 `opal/mca/base/mca_base_var.c`): ranks that
    /// mpirun starts over ssh get only these of its environment (mpirun(1) `-x`).
    pub fn forwards(&self, name: &str) -> bool {
        const ENV_LIST: &str = "mca_base_env_list";
        let listed = |list: &str| list.split(';').any(|e| e.split('=').next() == Some(name));
        let on_line = self
            .mpirun
            .mca()
            .into_iter()
            .rev()
            .find(|(n, _)| n == ENV_LIST);
        let list = match on_line {
            Some((_, v)) => Some(v),
            None => self.env_value(&format!("OMPI_MCA_{ENV_LIST}")),
        };
        self.mpirun.export(name).is_some() || list.is_some_and(|l| listed(&l))
    }

    /// Whether Open MPI's mpirun is allowed to run as root (see the module docs). A variable set
    /// from a Secret or ConfigMap counts as set: its value cannot be seen.
    pub fn root_allowed(&self) -> bool {
        let set = |n: &str| {
            let unread = |_: &str, _: &str| EnvLookup::Unresolved(String::new());
            self.invocation.env(n) == Some("1")
                || matches!(
                    cmdline::container_env(&self.container, n, &unread),
                    EnvLookup::Unresolved(_)
                )
        };
        self.mpirun.allow_run_as_root()
            || (set("OMPI_ALLOW_RUN_AS_ROOT") && set("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"))
    }

    /// The user mpirun runs as: the container's `runAsUser`, else the pod's (`t`), else None
    /// (the image decides).
    pub fn run_as_user(&self, t: &PodTemplate) -> Option<i64> {
        let own = self.container.security_context.as_ref();
        let pod = t.spec.security_context.as_ref();
        own.and_then(|c| c.run_as_user)
            .or_else(|| pod.and_then(|p| p.run_as_user))
    }
}

/// What the MPI Operator made of an MPIJob.
#[derive(Debug, Clone, Default)]
pub struct MpiPods {
    /// The MPIJob has a uid (it was read from a cluster): ownership can be known.
    pub has_uid: bool,
    /// Host pods not being deleted: the workers, plus the launcher's when it is a host. None when
    /// pods could not be read (or the MPIJob has no uid).
    pub hosts: Option<Vec<PodFacts>>,
    /// The launcher Job (not being deleted) and its pods' phases. Outer None: Jobs unreadable;
    /// inner None: not made yet.
    pub launcher: Option<Option<(String, Vec<String>)>>,
}

impl MpiPods {
    /// From the pods and Jobs read (None: that read failed).
    pub fn of(
        mpijob: &Obj,
        launcher_is_host: bool,
        pods: Option<&[&Obj]>,
        jobs: Option<&[&Obj]>,
    ) -> Result<MpiPods, InputError> {
        let facts = |objs: &[&Obj]| -> Result<Vec<PodFacts>, InputError> {
            objs.iter().map(|p| PodFacts::from_obj(p)).collect()
        };
        let has_uid = mpijob.uid().is_some_and(|u| !u.is_empty());
        let owned = pods.map(|pods| owned::owned_by(mpijob, pods));
        let (Some(pods), Some(Ok(workers))) = (pods, owned) else {
            return Ok(MpiPods {
                has_uid,
                ..MpiPods::default()
            });
        };
        // Launcher Job → its pods; a Job being deleted is no longer the launcher.
        let branches = jobs.map(|jobs| owned::owned_two_levels(mpijob, jobs, pods));
        let branches = branches.map(Result::unwrap_or_default);
        let current = (branches.as_ref()).and_then(|b| b.iter().find(|b| !b.terminating));
        let mut hosts = facts(&workers.current)?;
        let mut launcher = branches.as_ref().map(|_| None);
        if let Some(b) = current {
            let pods = facts(&b.children.current)?;
            let unknown = || "Unknown".to_string();
            let phases = pods.iter().map(|p| p.phase.clone().unwrap_or_else(unknown));
            launcher = Some(Some((b.obj.name().to_string(), phases.collect())));
            if launcher_is_host {
                hosts.extend(pods);
            }
        }
        Ok(MpiPods {
            has_uid,
            hosts: Some(hosts),
            launcher,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn template(spec: Value) -> PodTemplate {
        let spec: k8s_openapi::api::core::v1::PodSpec = serde_json::from_value(spec).unwrap();
        PodTemplate {
            role: "Launcher".into(),
            replicas: 1,
            replicas_set: true,
            replicas_path: "spec.mpiReplicaSpecs.Launcher.replicas".into(),
            container_paths: Vec::new(),
            spec,
            labels: Default::default(),
            path: "spec.mpiReplicaSpecs.Launcher.template.spec".into(),
        }
    }

    fn found(container: Value) -> Found {
        match find(&template(json!({"containers": [container]}))) {
            LauncherMpirun::Found(f) => *f,
            other => panic!("no mpirun: {other:?}"),
        }
    }

    #[test]
    fn forwarded_variables_by_x_or_the_env_list() {
        let f = found(json!({"name": "l", "command": ["mpirun", "-x", "PATH",
            "-x", "NCCL_DEBUG=INFO", "/a.out"]}));
        assert!(f.forwards("PATH") && f.forwards("NCCL_DEBUG"));
        assert!(!f.forwards("LD_LIBRARY_PATH"));
        let f = found(
            json!({"name": "l", "command": ["mpirun", "--mca", "mca_base_env_list",
            "PATH;LD_LIBRARY_PATH=/opt/lib", "/a.out"]}),
        );
        assert!(f.forwards("PATH") && f.forwards("LD_LIBRARY_PATH"));
        assert!(!f.forwards("LD_LIBRARY"));
        let f = found(json!({"name": "l", "command": ["mpirun", "/a.out"],
            "env": [{"name": "OMPI_MCA_mca_base_env_list", "value": "LD_LIBRARY_PATH"}]}));
        assert!(f.forwards("LD_LIBRARY_PATH") && !f.forwards("PATH"));
    }

    #[test]
    fn the_mpirun_with_a_count_is_the_one_judged_through_shells() {
        let t = template(json!({"containers": [
            {"name": "a", "command": ["sh", "-c", "mpirun hostname && mpirun -np 16 /pi"]}]}));
        let LauncherMpirun::Found(f) = find(&t) else {
            panic!("no mpirun")
        };
        assert_eq!(f.mpirun.np_raw(), Some("16"));
        let t = template(json!({"containers": [{"name": "a", "command": ["sleep", "1"]}]}));
        assert!(matches!(find(&t), LauncherMpirun::NoMpirun(c) if c == "sleep 1"));
        assert!(matches!(
            find(&template(json!({"containers": []}))),
            LauncherMpirun::NoContainer
        ));
        let t =
            template(json!({"containers": [{"name": "a", "command": ["sh", "-c", "echo 'x"]}]}));
        let LauncherMpirun::Shell(e) = find(&t) else {
            panic!("split")
        };
        assert_eq!(shell_error_at(&e), "a: 1: '");
    }

    #[test]
    fn binding_and_mapping_from_options_mca_or_the_environment() {
        let f = found(
            json!({"name": "l", "command": ["mpirun", "-bind-to", "none", "--map-by", "slot:PE=1", "/pi"]}),
        );
        assert!(f.binding().unwrap().is("none"));
        assert!(f.mapping().unwrap().is("slot"));
        let f = found(
            json!({"name": "l", "command": ["mpirun", "--mca", "hwloc_base_binding_policy", "none",
            "-mca", "rmaps_base_mapping_policy", "slot", "/pi"]}),
        );
        assert_eq!(
            f.binding().unwrap().source,
            "--mca hwloc_base_binding_policy"
        );
        assert!(f.mapping().unwrap().is("slot"));
        let f = found(json!({"name": "l", "command": ["mpirun", "/pi"], "env": [
            {"name": "OMPI_MCA_hwloc_base_binding_policy", "value": "none"}]}));
        let b = f.binding().unwrap();
        assert!(b.is("none"));
        assert_eq!(b.written(), "OMPI_MCA_hwloc_base_binding_policy=none");
        assert_eq!(f.mapping(), None);
        // The option wins over the environment.
        let f = found(
            json!({"name": "l", "command": ["mpirun", "--bind-to", "core", "/pi"], "env": [
            {"name": "OMPI_MCA_hwloc_base_binding_policy", "value": "none"}]}),
        );
        assert!(f.binding().unwrap().is("core"));
    }

    fn obj(v: Value) -> Obj {
        Obj::new(v, crate::observe::Origin::Live).unwrap()
    }

    fn owned_by(kind: &str, name: &str, uid: &str) -> Value {
        json!([{"apiVersion": "x/v1", "kind": kind, "name": name, "uid": uid, "controller": true}])
    }

    fn pod(name: &str, owner: Value, phase: &str) -> Obj {
        obj(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "ownerReferences": owner},
            "spec": {"nodeName": "n", "containers": []}, "status": {"phase": phase}}))
    }

    #[test]
    fn the_hosts_are_the_workers_and_the_launcher_when_it_is_one() {
        let mpijob = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                "metadata": {"name": "m", "uid": "u-m"}}),
        );
        let launcher = obj(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "m-launcher", "uid": "u-l",
                         "ownerReferences": owned_by("MPIJob", "m", "u-m")}}));
        let w = pod("m-worker-0", owned_by("MPIJob", "m", "u-m"), "Running");
        let l = pod(
            "m-launcher-x",
            owned_by("Job", "m-launcher", "u-l"),
            "Pending",
        );
        let stray = pod("m-worker-1", owned_by("MPIJob", "m", "other"), "Running");
        let (pods, jobs) = ([&w, &l, &stray], [&launcher]);
        let made = MpiPods::of(&mpijob, false, Some(&pods), Some(&jobs)).unwrap();
        let names = |m: &MpiPods| -> Vec<String> {
            m.hosts.iter().flatten().map(|p| p.name.clone()).collect()
        };
        assert_eq!(names(&made), ["m-worker-0"]);
        assert_eq!(
            made.launcher,
            Some(Some(("m-launcher".into(), vec!["Pending".into()])))
        );
        let made = MpiPods::of(&mpijob, true, Some(&pods), Some(&jobs)).unwrap();
        assert_eq!(names(&made), ["m-worker-0", "m-launcher-x"]);
        let made = MpiPods::of(&mpijob, false, Some(&pods), None).unwrap();
        assert_eq!(made.launcher, None);
        let file = obj(
            json!({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                              "metadata": {"name": "m"}}),
        );
        let made = MpiPods::of(&file, false, Some(&pods), Some(&jobs)).unwrap();
        assert!(!made.has_uid && made.hosts.is_none());
    }

    #[test]
    fn running_as_root_needs_the_option_or_both_variables() {
        let f = found(json!({"name": "l", "command": ["mpirun", "/pi"],
            "securityContext": {"runAsUser": 0}}));
        assert!(!f.root_allowed());
        assert_eq!(f.run_as_user(&template(json!({"containers": []}))), Some(0));
        let f = found(json!({"name": "l", "command": ["mpirun", "--allow-run-as-root", "/pi"]}));
        assert!(f.root_allowed());
        let f = found(json!({"name": "l", "command": ["mpirun", "/pi"], "env": [
            {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"},
            {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}));
        assert!(
            f.root_allowed(),
            "a Secret's value is unseen: counted as set"
        );
        let f = found(json!({"name": "l", "command": ["mpirun", "/pi"], "env": [
            {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"}]}));
        assert!(!f.root_allowed());
        let pod = template(json!({"securityContext": {"runAsUser": 1000}, "containers": []}));
        assert_eq!(f.run_as_user(&pod), Some(1000));
    }
}
