//! Running the built `trainlab` against the API emulator, as the live tests and benches do:
//! the CRD groups the labs read, a scratch folder with a kubeconfig for the emulator, the
//! command in a clean environment (English, no colour, closed stdin, its own discovery cache),
//! and the classifier of discovery paths the request-count tests share.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

use super::emulator::{Emulator, Recorded};

/// The kube context of every kubeconfig written here: the name `setup kind` gives its cluster.
pub const CONTEXT: &str = "kind-trainlab";

/// A CRD group the labs read that the emulator does not serve until told to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crd {
    /// Volcano's Job and PodGroup.
    Volcano,
    /// kubeflow.org/v2beta1 MPIJob (the MPI Operator).
    MpiJob,
    /// kubeflow.org/v1 PyTorchJob (training-operator v1).
    PyTorchJob,
    /// Karpenter's NodePool and NodeClaim and the AWS provider's EC2NodeClass.
    Karpenter,
    /// Slinky's NodeSet, Controller and Accounting.
    Slinky,
}

/// What the kind profile and an EKS cluster serve of the above (Slinky is installed by lab 4's
/// learners, not by `setup kind`).
pub const LAB_CRDS: [Crd; 4] = [Crd::Volcano, Crd::MpiJob, Crd::PyTorchJob, Crd::Karpenter];

/// Every group above.
pub const ALL_CRDS: [Crd; 5] = [
    Crd::Volcano,
    Crd::MpiJob,
    Crd::PyTorchJob,
    Crd::Karpenter,
    Crd::Slinky,
];

/// Serves `crds` on `emu` (group, version, kind, plural, namespaced: as upstream's CRDs).
pub fn serve(emu: &Emulator, crds: &[Crd]) {
    for crd in crds {
        match crd {
            Crd::Volcano => {
                emu.serve_crd("batch.volcano.sh", "v1alpha1", "Job", "jobs", true);
                let group = "scheduling.volcano.sh";
                emu.serve_crd(group, "v1beta1", "PodGroup", "podgroups", true);
            }
            Crd::MpiJob => emu.serve_crd("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", true),
            Crd::PyTorchJob => {
                emu.serve_crd("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", true)
            }
            Crd::Karpenter => {
                emu.serve_crd("karpenter.sh", "v1", "NodePool", "nodepools", false);
                emu.serve_crd("karpenter.sh", "v1", "NodeClaim", "nodeclaims", false);
                let group = "karpenter.k8s.aws";
                emu.serve_crd(group, "v1", "EC2NodeClass", "ec2nodeclasses", false);
            }
            Crd::Slinky => {
                for (kind, plural) in [
                    ("NodeSet", "nodesets"),
                    ("Controller", "controllers"),
                    ("Accounting", "accountings"),
                ] {
                    emu.serve_crd("slinky.slurm.net", "v1beta1", kind, plural, true);
                }
            }
        }
    }
}

/// `/api`, `/apis` and their group and group-version paths (not `/version`).
pub fn is_discovery(path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches!(
        segs.as_slice(),
        ["api"] | ["apis"] | ["api", _] | ["apis", _] | ["apis", _, _]
    )
}

/// `/version` or a discovery path: what a client asks before its reads.
pub fn is_version_or_discovery(path: &str) -> bool {
    path.trim_end_matches('/') == "/version" || is_discovery(path)
}

/// The discovery cache folder for a command pointed at `kubeconfig`: beside it, so each test's
/// runs share one cache (the second `check` of a test resolves from the first's answers, as a
/// learner's would) and no test sees another's, nor the machine's `~/.cache/trainlab`.
pub fn cache_beside(kubeconfig: impl AsRef<Path>) -> PathBuf {
    kubeconfig
        .as_ref()
        .parent()
        .unwrap_or(Path::new("."))
        .join("trainlab-cache")
}

/// An emulator, a scratch folder and a kubeconfig in it whose current context points at it.
pub struct Cluster {
    pub emu: Emulator,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

impl Cluster {
    /// An emulator serving `seed` and `crds`.
    pub fn start(seed: Vec<Value>, crds: &[Crd]) -> Cluster {
        let emu = Emulator::start(seed);
        serve(&emu, crds);
        Cluster::on(emu)
    }

    /// A scratch folder and kubeconfig for an emulator already started.
    pub fn on(emu: Emulator) -> Cluster {
        Cluster::on_context(emu, CONTEXT)
    }

    /// The same, with the kubeconfig's only (and current) context named `context`.
    pub fn on_context(emu: Emulator, context: &str) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = emu.kubeconfig(dir.path(), context);
        Cluster {
            emu,
            dir,
            kubeconfig,
        }
    }

    /// `trainlab ARGS` pointed at this emulator, run from the scratch folder (so `start` writes
    /// its draft there); see [`trainlab`].
    pub fn cmd(&self, args: &[&str]) -> Command {
        trainlab(&self.kubeconfig, self.dir.path(), args)
    }

    /// Runs and returns (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        output(self.cmd(args))
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.emu.requests()
    }

    /// The stored object of `kind` named `name` (in `namespace` when given).
    pub fn object(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.emu.objects().into_iter().find(|o| {
            o["kind"] == kind
                && o["metadata"]["name"] == name
                && o["metadata"]["namespace"].as_str() == namespace
        })
    }
}

/// `trainlab ARGS` in English, colourless, with a closed stdin, for `kubeconfig`, run in `dir`,
/// with a discovery cache of its own beside the kubeconfig ([`cache_beside`]) and none
/// of the caller's TRAINLAB_NO_CACHE. The timeout only ends a hung test.
pub fn trainlab(kubeconfig: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::cargo_bin("trainlab").unwrap();
    c.env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("TRAINLAB_NO_CACHE")
        .env("KUBECONFIG", kubeconfig)
        .env("TRAINLAB_CACHE_DIR", cache_beside(kubeconfig))
        .current_dir(dir)
        .timeout(Duration::from_secs(120))
        .write_stdin("")
        .args(args);
    c
}

/// Runs `c`: (exit code, stdout, stderr).
pub fn output(mut c: Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// stdout parsed as JSON, or a panic that shows it.
pub fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}
