//! Pinned manifests the kind profile installs. Upstream files (shared/research/pins.md) carry
//! the URL, size and SHA-256 of the file at that tag, and `setup kind` refuses anything that
//! does not match; trainlab's own manifests (manifests/kind) are built into the binary.

use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::Error;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "PinEntry")]
pub struct Pin {
    pub component: String,
    pub version: String,
    pub source: Source,
    /// The Deployments to wait for after applying, as `namespace/name`.
    pub deployments: Vec<String>,
    /// Deployments (of earlier pins, as `namespace/name`) that must be available before this
    /// pin is applied: Kubeflow Trainer waits for JobSet's controller, its runtimes for the
    /// Trainer's. Every other Deployment is waited for once everything is applied.
    pub after: Vec<String>,
}

/// Where a pinned manifest's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An upstream file, downloaded over HTTPS (or read from `--from DIR`) and refused unless
    /// its size and SHA-256 are these.
    Download {
        url: String,
        bytes: u64,
        sha256: String,
    },
    /// A manifest of trainlab's own, built into the binary: nothing to download or hash.
    Embedded(&'static Embedded),
}

/// A manifest built into trainlab (a pins file names it with `embedded: <name>`).
#[derive(Debug, PartialEq, Eq)]
pub struct Embedded {
    pub name: &'static str,
    /// Its path in the repository.
    pub path: &'static str,
    pub text: &'static str,
    /// One line for the dry run: what it is and why it is trainlab's own.
    pub note: &'static str,
    /// [`Embedded::note`] in Japanese (`--lang ja`).
    pub note_ja: &'static str,
}

/// The training-operator is trainlab's own because its upstream standalone install also ships
/// the v1 `mpijobs.kubeflow.org` CRD, which would replace the MPI Operator's v2beta1 one
/// (manifests/kind/training-operator.yaml cites its sources).
pub static TRAINING_OPERATOR: Embedded = Embedded {
    name: "training-operator",
    path: "manifests/kind/training-operator.yaml",
    text: include_str!("../../manifests/kind/training-operator.yaml"),
    note: "the upstream standalone install without its v1 mpijobs.kubeflow.org CRD, so the MPI Operator's v2beta1 MPIJob keeps that name",
    note_ja: "upstream の standalone インストールから v1 の mpijobs.kubeflow.org CRD を除いたもの（MPI Operator の v2beta1 の MPIJob がその名前を使い続けられるように）",
};

/// JobSet v0.12.0 as Kubeflow Trainer v2.3.0's kustomize overlay installs it (namespace
/// kubeflow-system), without its CRD: upstream's is a kustomize build of a release asset that is
/// not a file in git (manifests/kind/jobset.yaml says how it was rendered).
pub static JOBSET: Embedded = Embedded {
    name: "jobset",
    path: "manifests/kind/jobset.yaml",
    text: include_str!("../../manifests/kind/jobset.yaml"),
    note: "JobSet's config/default as Kubeflow Trainer's kustomize overlay renders it (namespace kubeflow-system), without the CRD: upstream installs a kustomize build of a release asset, not a file to pin",
    note_ja: "Kubeflow Trainer の kustomize overlay がレンダリングする JobSet の config/default（namespace は kubeflow-system）から CRD を除いたもの。upstream がインストールするのはリリースアセットを kustomize でビルドしたもので、固定できるファイルがありません",
};

/// Kubeflow Trainer v2.3.0's controller manager: `kustomize build manifests/overlays/manager`
/// without the CRDs (pinned upstream files) and without JobSet ([`JOBSET`]); it ships no
/// kubeflow.org CRD, so it serves its TrainJob beside the training-operator's PyTorchJob.
pub static KUBEFLOW_TRAINER: Embedded = Embedded {
    name: "kubeflow-trainer",
    path: "manifests/kind/kubeflow-trainer.yaml",
    text: include_str!("../../manifests/kind/kubeflow-trainer.yaml"),
    note: "`kustomize build manifests/overlays/manager` without the CRDs and JobSet (upstream installs a kustomize build, not a file to pin); no kubeflow.org CRD, so it serves beside the training-operator",
    note_ja: "`kustomize build manifests/overlays/manager` から CRD と JobSet を除いたもの（upstream がインストールするのは kustomize のビルドで、固定できるファイルがありません）。kubeflow.org の CRD を含まないので training-operator と並んで動きます",
};

/// The ClusterTrainingRuntimes `torch-distributed` and `deepspeed-distributed` as Trainer's
/// runtimes overlay renders them: the raw base files name an untagged image and lack the label
/// the runtime webhook skips.
pub static TRAINER_RUNTIMES: Embedded = Embedded {
    name: "trainer-runtimes",
    path: "manifests/kind/trainer-runtimes.yaml",
    text: include_str!("../../manifests/kind/trainer-runtimes.yaml"),
    note: "the ClusterTrainingRuntimes torch-distributed and deepspeed-distributed as `kustomize build manifests/overlays/runtimes` renders them (images tagged v2.3.0, label trainer.kubeflow.org/webhook-validation: disabled)",
    note_ja: "`kustomize build manifests/overlays/runtimes` がレンダリングする ClusterTrainingRuntime の torch-distributed と deepspeed-distributed（イメージのタグは v2.3.0、ラベル trainer.kubeflow.org/webhook-validation: disabled 付き）",
};

/// Every embedded manifest, by the name a pins file uses.
pub static EMBEDDED: &[&Embedded] = &[
    &TRAINING_OPERATOR,
    &JOBSET,
    &KUBEFLOW_TRAINER,
    &TRAINER_RUNTIMES,
];

/// One entry of a pins file, before it is checked to be exactly one kind of source.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinEntry {
    component: String,
    version: String,
    url: Option<String>,
    bytes: Option<u64>,
    sha256: Option<String>,
    embedded: Option<String>,
    #[serde(default)]
    deployments: Vec<String>,
    #[serde(default)]
    after: Vec<String>,
}

impl TryFrom<PinEntry> for Pin {
    type Error = String;

    fn try_from(e: PinEntry) -> Result<Pin, String> {
        let source = match (e.url, e.bytes, e.sha256, e.embedded) {
            (Some(url), Some(bytes), Some(sha256), None) => {
                if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!("sha256 `{sha256}` is not 64 hex digits"));
                }
                Source::Download {
                    url,
                    bytes,
                    sha256: sha256.to_ascii_lowercase(),
                }
            }
            (None, None, None, Some(name)) => Source::Embedded(embedded(&name).ok_or_else(|| {
                let known: Vec<&str> = EMBEDDED.iter().map(|m| m.name).collect();
                format!(
                    "no embedded manifest `{name}` (built in: {})",
                    known.join(", ")
                )
            })?),
            _ => {
                return Err(format!(
                    "{} {}: give either url, bytes and sha256 (a download) or embedded (a built-in manifest)",
                    e.component, e.version
                ))
            }
        };
        Ok(Pin {
            component: e.component,
            version: e.version,
            source,
            deployments: e.deployments,
            after: e.after,
        })
    }
}

impl Embedded {
    /// The containers its Deployments run, as `image args...` (the dry run names what will run).
    pub fn containers(&self) -> Result<Vec<String>, Error> {
        let objs = crate::observe::parse_text(self.text, self.path)?;
        let mut out = Vec::new();
        for o in objs.iter().filter(|o| o.kind() == "Deployment") {
            let containers = o.value["spec"]["template"]["spec"]["containers"].as_array();
            for c in containers.into_iter().flatten() {
                let mut words = vec![c["image"].as_str().unwrap_or("-").to_string()];
                for a in c["args"].as_array().into_iter().flatten() {
                    words.push(a.as_str().unwrap_or_default().to_string());
                }
                out.push(words.join(" "));
            }
        }
        Ok(out)
    }
}

/// The embedded manifest of that name.
pub fn embedded(name: &str) -> Option<&'static Embedded> {
    EMBEDDED.iter().copied().find(|m| m.name == name)
}

impl Pin {
    /// The same pin, applied only once these Deployments (`namespace/name`) are available.
    fn after(mut self, deployments: &[&str]) -> Pin {
        self.after = deployments.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The file name under `--from DIR` (the URL's last path segment), or the embedded file's.
    pub fn file_name(&self) -> &str {
        let path = match &self.source {
            Source::Download { url, .. } => url.as_str(),
            Source::Embedded(m) => m.path,
        };
        path.rsplit('/').next().unwrap_or(path)
    }

    /// Where the bytes come from, for messages: the URL, or the embedded file's path.
    pub fn location(&self) -> &str {
        match &self.source {
            Source::Download { url, .. } => url,
            Source::Embedded(m) => m.path,
        }
    }
}

/// A pinned download: its URL, size and SHA-256, and the Deployments to wait for after it.
pub(crate) fn pin(
    component: &str,
    version: &str,
    url: &str,
    bytes: u64,
    sha256: &str,
    deployments: &[&str],
) -> Pin {
    Pin {
        component: component.into(),
        version: version.into(),
        source: Source::Download {
            url: url.into(),
            bytes,
            sha256: sha256.into(),
        },
        deployments: deployments.iter().map(|s| s.to_string()).collect(),
        after: Vec::new(),
    }
}

fn built_in(
    component: &str,
    version: &str,
    manifest: &'static Embedded,
    deployments: &[&str],
) -> Pin {
    Pin {
        component: component.into(),
        version: version.into(),
        source: Source::Embedded(manifest),
        deployments: deployments.iter().map(|s| s.to_string()).collect(),
        after: Vec::new(),
    }
}

/// JobSet's controller as manifests/kind/jobset.yaml deploys it.
const JOBSET_CONTROLLER: &str = "kubeflow-system/jobset-controller-manager";
/// Kubeflow Trainer's controller as manifests/kind/kubeflow-trainer.yaml deploys it.
const TRAINER_CONTROLLER: &str = "kubeflow-system/kubeflow-trainer-controller-manager";

/// The default pins. Deployments waited for: volcano-admission, -controllers and -scheduler in
/// volcano-system (volcano-sh/volcano README), mpi-operator in namespace mpi-operator
/// (deploy/v2beta1/mpi-operator.yaml creates that namespace; its controller pod is
/// `mpi-operator-<hash>` there, as in aws-samples/aws-hpc-tutorials 06-mpi-operator.md), and
/// training-operator in kubeflow (manifests/kind/training-operator.yaml). The PyTorchJob CRD
/// comes before the operator that watches it.
///
/// Kubeflow Trainer v2.3.0 is installed beside the training-operator v1.9.4: it ships no
/// kubeflow.org CRD, so neither the PyTorchJob CRD nor the v1 MPIJob that would replace the MPI
/// Operator's v2beta1 one comes with it, and a learner can practise with either a PyTorchJob or
/// a TrainJob. Its order: the JobSet CRD and JobSet (kubernetes-sigs/jobset v0.12.0, the version
/// Trainer's go.mod and Helm chart pin), then, once `jobset-controller-manager` is available, the
/// three Trainer CRDs and the Trainer, then, once `kubeflow-trainer-controller-manager` is
/// available (as kubeflow/trainer hack/e2e-setup-cluster.sh waits before the runtimes), the
/// runtimes. Both Deployments live in kubeflow-system (manifests/kind/jobset.yaml and
/// kubeflow-trainer.yaml). The CRDs are the files at the tags (sizes and hashes of the git blobs;
/// the repositories have no LFS or eol attributes, so raw.githubusercontent.com serves these bytes).
pub fn default_pins() -> Vec<Pin> {
    vec![
        pin("Volcano", "v1.15.1", "https://raw.githubusercontent.com/volcano-sh/volcano/v1.15.1/installer/volcano-development.yaml", 1_089_390, "b5fb45a57bcd1132be7055354999d244266873710609afd1f162005772d15c41", &["volcano-system/volcano-admission", "volcano-system/volcano-controllers", "volcano-system/volcano-scheduler"]),
        pin("MPI Operator", "v0.8.0", "https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.0/deploy/v2beta1/mpi-operator.yaml", 674_987, "b38def13a94abe60b2a4b3485239d77f64892b8fbd202e9e435a6031b7500a8f", &["mpi-operator/mpi-operator"]),
        pin("training-operator PyTorchJob CRD", "v1.9.4", "https://raw.githubusercontent.com/kubeflow/trainer/v1.9.4/manifests/base/crds/kubeflow.org_pytorchjobs.yaml", 644_522, "8b8a8a719cc94173169290251e817f7ac2bb425c20b6c2fa813397bcf4e932ed", &[]),
        built_in("training-operator (PyTorchJob only)", "v1.9.4", &TRAINING_OPERATOR, &["kubeflow/training-operator"]),
        pin("Karpenter NodePool CRD", "v1.14.1", "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml", 35_619, "3bb64a20c80776b77aa19a699ebdaf34480a7b2e7ec4ef890b43225b3517f878", &[]),
        pin("Karpenter NodeClaim CRD", "v1.14.1", "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/pkg/apis/crds/karpenter.sh_nodeclaims.yaml", 22_076, "96037dc241031fe0f7a09ddf78183d885ce6a1dfe115f7b3fbf8a12c564be694", &[]),
        pin("Karpenter EC2NodeClass CRD", "v1.14.1", "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml", 57_451, "62dec59f01c0972d4503ca3ed25f243ba9c2f561be0d964ce7a14c8df406132f", &[]),
        pin("JobSet CRD", "v0.12.0", "https://raw.githubusercontent.com/kubernetes-sigs/jobset/v0.12.0/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml", 823_762, "d022b87624512cf0b6741b31b24a2bea9945b5a838b50713af29332c878bb6fe", &[]),
        built_in("JobSet (for Kubeflow Trainer)", "v0.12.0", &JOBSET, &[JOBSET_CONTROLLER]),
        pin("Kubeflow Trainer TrainJob CRD", "v2.3.0", "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml", 554_665, "a742cafc5b5582640c7e0b7467c024fc237256fbca5ba0a9f0531dfb66d64416", &[]).after(&[JOBSET_CONTROLLER]),
        pin("Kubeflow Trainer TrainingRuntime CRD", "v2.3.0", "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml", 926_556, "69b8dbdf60a18e28cddcc2b8dfc4ce72a943e14b531b9389d593118faee4919f", &[]),
        pin("Kubeflow Trainer ClusterTrainingRuntime CRD", "v2.3.0", "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml", 926_571, "ec84dc3388fcdbe8c61d3c247a773d14458dd9438e995bea8e50d2a18080eef9", &[]),
        built_in("Kubeflow Trainer (TrainJob)", "v2.3.0", &KUBEFLOW_TRAINER, &[TRAINER_CONTROLLER]),
        built_in("Kubeflow Trainer runtimes", "v2.3.0", &TRAINER_RUNTIMES, &[]).after(&[TRAINER_CONTROLLER]),
    ]
}

/// Pins from a YAML file (`--pins`, for mirrors of other versions and for tests).
pub fn load_pins(path: &Path) -> Result<Vec<Pin>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(
            format!("{}: 読み込めません: {e}", path.display()),
            format!("{}: cannot read: {e}", path.display()),
        )
    })?;
    let mut field = String::new();
    let options = serde_saphyr::options! { with_snippet: false };
    serde_saphyr::with_deserializer_from_str_with_options(&text, options, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            field = e.path().to_string();
            e.into_inner()
        })
    })
    .map_err(|e| {
        Error::usage(
            format!("{}: フィールド `{field}`: {e}", path.display()),
            format!("{}: field `{field}`: {e}", path.display()),
        )
    })
}

pub fn sha256_hex(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a downloaded file's size and hash against its pin; the error shows both hashes.
/// An embedded manifest has nothing to check: it is part of the binary.
pub fn verify(pin: &Pin, data: &[u8], from: &str) -> Result<(), Error> {
    let Source::Download { bytes, sha256, .. } = &pin.source else {
        return Ok(());
    };
    let got = sha256_hex(data);
    if data.len() as u64 != *bytes || got != *sha256 {
        let (c, v, len) = (&pin.component, &pin.version, data.len());
        return Err(Error::environment(
            format!("{from}: {c} {v} を拒否しました: {bytes} バイトで sha256 {sha256} のはずが、{len} バイトで sha256 {got} でした"),
            format!("{from}: refusing {c} {v}: expected {bytes} bytes with sha256 {sha256}, got {len} bytes with sha256 {got}"),
        ));
    }
    Ok(())
}

/// Reads a pinned file from `--from DIR`, or downloads it over HTTPS, and verifies it; an
/// embedded manifest comes from the binary (`--from` does not need it).
pub async fn fetch(pin: &Pin, from: Option<&Path>) -> Result<Vec<u8>, Error> {
    let url = match &pin.source {
        Source::Embedded(m) => return Ok(m.text.as_bytes().to_vec()),
        Source::Download { url, .. } => url,
    };
    let (data, shown) = match from {
        Some(dir) => {
            let path = dir.join(pin.file_name());
            let data = std::fs::read(&path).map_err(|e| {
                let (shown, c, v) = (path.display(), &pin.component, &pin.version);
                Error::usage(
                    format!("{shown}: {c} {v} を読み込めません（{e}）。--from には固定したファイルがすべて、URL の最後の部分と同じ名前で必要です"),
                    format!("{shown}: cannot read {c} {v} ({e}); --from needs every pinned file, named like the URL's last segment"),
                )
            })?;
            (data, path.display().to_string())
        }
        None => {
            // The one HTTP stack: the client, User-Agent and request log of API requests.
            let bytes = crate::cluster::download(url).await.map_err(|e| {
                Error::environment(
                    format!("{url} のダウンロードに失敗しました: {e}。オフラインの会場では --from DIR を使えます"),
                    format!("downloading {url}: {e}; offline rooms can use --from DIR"),
                )
            })?;
            (bytes, url.clone())
        }
    };
    verify(pin, &data, &shown)?;
    Ok(data)
}
