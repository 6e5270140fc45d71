//! Pinned upstream manifests the kind profile installs (shared/research/pins.md): URL, size and
//! SHA-256 of the file at that tag. `setup kind` refuses anything that does not match.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Error;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub component: String,
    pub version: String,
    pub url: String,
    pub bytes: u64,
    pub sha256: String,
    /// The Deployments to wait for after applying, as `namespace/name`.
    #[serde(default)]
    pub deployments: Vec<String>,
}

impl Pin {
    /// The file name under `--from DIR`: the URL's last path segment.
    pub fn file_name(&self) -> &str {
        self.url.rsplit('/').next().unwrap_or(&self.url)
    }
}

fn pin(
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
        url: url.into(),
        bytes,
        sha256: sha256.into(),
        deployments: deployments.iter().map(|s| s.to_string()).collect(),
    }
}

/// The default pins. Deployments waited for: volcano-admission, -controllers and -scheduler in
/// volcano-system (volcano-sh/volcano README), and mpi-operator in namespace mpi-operator
/// (deploy/v2beta1/mpi-operator.yaml creates that namespace; its controller pod is
/// `mpi-operator-<hash>` there, as in aws-samples/aws-hpc-tutorials 06-mpi-operator.md).
pub fn default_pins() -> Vec<Pin> {
    vec![
        pin("Volcano", "v1.15.1", "https://raw.githubusercontent.com/volcano-sh/volcano/v1.15.1/installer/volcano-development.yaml", 1_089_390, "b5fb45a57bcd1132be7055354999d244266873710609afd1f162005772d15c41", &["volcano-system/volcano-admission", "volcano-system/volcano-controllers", "volcano-system/volcano-scheduler"]),
        pin("MPI Operator", "v0.8.0", "https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.0/deploy/v2beta1/mpi-operator.yaml", 674_987, "b38def13a94abe60b2a4b3485239d77f64892b8fbd202e9e435a6031b7500a8f", &["mpi-operator/mpi-operator"]),
        pin("Karpenter NodePool CRD", "v1.14.1", "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml", 35_619, "3bb64a20c80776b77aa19a699ebdaf34480a7b2e7ec4ef890b43225b3517f878", &[]),
        pin("Karpenter NodeClaim CRD", "v1.14.1", "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/pkg/apis/crds/karpenter.sh_nodeclaims.yaml", 22_076, "96037dc241031fe0f7a09ddf78183d885ce6a1dfe115f7b3fbf8a12c564be694", &[]),
        pin("Karpenter EC2NodeClass CRD", "v1.14.1", "https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml", 57_451, "62dec59f01c0972d4503ca3ed25f243ba9c2f561be0d964ce7a14c8df406132f", &[]),
    ]
}

/// Pins from a YAML file (`--pins`, for mirrors of other versions and for tests).
pub fn load_pins(path: &Path) -> Result<Vec<Pin>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", path.display())))?;
    let de = serde_yaml::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        Error::Usage(format!(
            "{}: field `{field}`: {}",
            path.display(),
            e.into_inner()
        ))
    })
}

pub fn sha256_hex(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a file's size and hash against its pin; the error shows both hashes.
pub fn verify(pin: &Pin, data: &[u8], from: &str) -> Result<(), Error> {
    let got = sha256_hex(data);
    if data.len() as u64 != pin.bytes || got != pin.sha256 {
        return Err(Error::Environment(format!(
            "{from}: refusing {} {}: expected {} bytes with sha256 {}, got {} bytes with sha256 {got}",
            pin.component,
            pin.version,
            pin.bytes,
            pin.sha256,
            data.len()
        )));
    }
    Ok(())
}

/// Reads a pinned file from `--from DIR`, or downloads it over HTTPS, and verifies it.
pub async fn fetch(pin: &Pin, from: Option<&Path>) -> Result<Vec<u8>, Error> {
    let (data, shown) = match from {
        Some(dir) => {
            let path = dir.join(pin.file_name());
            let data = std::fs::read(&path).map_err(|e| {
                Error::Usage(format!(
                    "{}: cannot read {} {} ({e}); --from needs every pinned file, named like the URL's last segment",
                    path.display(),
                    pin.component,
                    pin.version
                ))
            })?;
            (data, path.display().to_string())
        }
        None => {
            let resp = reqwest::get(&pin.url)
                .await
                .and_then(|r| r.error_for_status())
                .map_err(|e| {
                    Error::Environment(format!(
                        "downloading {}: {e}; offline rooms can use --from DIR",
                        pin.url
                    ))
                })?;
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| Error::Environment(format!("downloading {}: {e}", pin.url)))?;
            (bytes.to_vec(), pin.url.clone())
        }
    };
    verify(pin, &data, &shown)?;
    Ok(data)
}
