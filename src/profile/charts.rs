//! Optional components `setup kind --with NAME` installs with Helm, pinned by chart version.
//!
//! Slinky ships as Helm charts only (no single upstream manifest to hash), so these are
//! installed by shelling out to `helm`, as setup already shells out to `kind`. A pinned chart
//! version plays the part a manifest's sha256 plays for the other operators: `helm` refuses a
//! version the registry does not hold. For air-gapped rooms `--from DIR` takes the chart
//! archives `helm pull` writes (`<chart>-<version>.tgz`).

use std::path::{Path, PathBuf};

use crate::Error;

/// One pinned Helm release.
#[derive(Debug, PartialEq, Eq)]
pub struct Chart {
    /// What the dry run and progress lines call it.
    pub component: &'static str,
    /// The Helm release name (also the prefix of the Deployments the chart creates).
    pub release: &'static str,
    /// The OCI reference `helm` pulls.
    pub chart: &'static str,
    pub version: &'static str,
    pub namespace: &'static str,
    /// `--set` values: only what the labs need changed from the chart's defaults.
    pub set: &'static [&'static str],
}

impl Chart {
    /// The archive `helm pull oci://…/NAME --version V` writes: `NAME-V.tgz`.
    pub fn archive_name(&self) -> String {
        let name = self.chart.rsplit('/').next().unwrap_or(self.chart);
        format!("{name}-{}.tgz", self.version.trim_start_matches('v'))
    }

    /// The `helm` arguments installing (or upgrading to) this release on `context`; with
    /// `from`, the chart comes from the archive in that folder instead of the registry.
    /// `--wait` returns once the release's Deployments are available, within `timeout`.
    pub fn helm_args(&self, context: &str, from: Option<&Path>, timeout: &str) -> Vec<String> {
        let source = match from {
            Some(dir) => dir.join(self.archive_name()).display().to_string(),
            None => self.chart.to_string(),
        };
        let mut args: Vec<String> = [
            "upgrade",
            "--install",
            self.release,
            &source,
            "--kube-context",
            context,
            "--namespace",
            self.namespace,
            "--create-namespace",
            "--wait",
            "--timeout",
            timeout,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if from.is_none() {
            args.push("--version".into());
            args.push(self.version.into());
        }
        for s in self.set {
            args.push("--set".into());
            args.push((*s).into());
        }
        args
    }
}

/// The components `--with` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Extra {
    /// Slinky's slurm-operator (labs 3 and 4): cert-manager, the Slinky CRDs, the operator
    Slinky,
}

impl Extra {
    pub fn name(self) -> &'static str {
        match self {
            Extra::Slinky => "slinky",
        }
    }

    /// The charts, in install order.
    pub fn charts(self) -> &'static [Chart] {
        match self {
            Extra::Slinky => SLINKY,
        }
    }
}

/// Slinky's install order (SlinkyProject/slurm-operator@v1.2.1 docs/installation.md):
/// cert-manager first (the operator's webhook certificate), then the CRD chart, then the
/// operator. The `slurm` chart (a whole Slurm cluster: Controller, RestApi, default NodeSets)
/// is not installed: labs 3 and 4 have the learner write the Controller, Accounting and
/// NodeSet themselves, and a second Controller from the chart would only compete with theirs.
///
/// cert-manager is installed from its OCI chart with its CRDs (`crds.enabled=true`, the
/// cert-manager Helm install guide); v1.19.4 is a supported release line.
pub static SLINKY: &[Chart] = &[
    Chart {
        component: "cert-manager",
        release: "cert-manager",
        chart: "oci://quay.io/jetstack/charts/cert-manager",
        version: "v1.19.4",
        namespace: "cert-manager",
        set: &["crds.enabled=true"],
    },
    Chart {
        component: "Slinky CRDs",
        release: "slurm-operator-crds",
        chart: "oci://ghcr.io/slinkyproject/charts/slurm-operator-crds",
        version: "1.2.1",
        namespace: "slinky",
        set: &[],
    },
    Chart {
        component: "Slinky slurm-operator",
        release: "slurm-operator",
        chart: "oci://ghcr.io/slinkyproject/charts/slurm-operator",
        version: "1.2.1",
        namespace: "slinky",
        set: &[],
    },
];

/// Where to get helm when it is missing.
pub const HELM_INSTALL: &str = "https://helm.sh/docs/intro/install/";

/// Every chart archive a `--from DIR` install needs, or the first one missing.
pub fn archives_in(dir: &Path, extras: &[Extra]) -> Result<Vec<PathBuf>, Error> {
    let mut found = Vec::new();
    for c in extras.iter().flat_map(|e| e.charts()) {
        let p = dir.join(c.archive_name());
        if !p.is_file() {
            let (shown, d) = (p.display(), dir.display());
            let (component, version, chart) = (&c.component, &c.version, &c.chart);
            return Err(Error::usage(
                format!("{shown}: {component} {version} がありません（`helm pull {chart} --version {version} -d {d}` で取得してください）"),
                format!("{shown}: missing {component} {version} (fetch it with `helm pull {chart} --version {version} -d {d}`)"),
            ));
        }
        found.push(p);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slinky_installs_cert_manager_first_then_crds_then_the_operator() {
        let order: Vec<&str> = SLINKY.iter().map(|c| c.release).collect();
        assert_eq!(
            order,
            ["cert-manager", "slurm-operator-crds", "slurm-operator"]
        );
        // The capability table waits for the operator Deployment the last chart creates.
        let cap = crate::facts::capabilities::get("slinky").unwrap();
        assert!(cap
            .controllers
            .iter()
            .any(|names| names.contains(&SLINKY[2].release)));
    }

    #[test]
    fn helm_args_pin_the_version_and_the_kind_context() {
        let args = SLINKY[0].helm_args("kind-trainlab", None, "5m0s");
        let line = args.join(" ");
        assert!(line.starts_with("upgrade --install cert-manager oci://quay.io/jetstack/charts/cert-manager --kube-context kind-trainlab --namespace cert-manager --create-namespace --wait --timeout 5m0s"), "{line}");
        assert!(line.contains("--version v1.19.4"), "{line}");
        assert!(line.ends_with("--set crds.enabled=true"), "{line}");
    }

    #[test]
    fn from_a_folder_the_archive_replaces_registry_and_version() {
        let args = SLINKY[2].helm_args("kind-t", Some(Path::new("/srv/charts")), "5m");
        assert!(args.contains(&"/srv/charts/slurm-operator-1.2.1.tgz".to_string()));
        assert!(!args.contains(&"--version".to_string()));
        assert_eq!(SLINKY[0].archive_name(), "cert-manager-1.19.4.tgz");
    }

    #[test]
    fn a_missing_archive_is_named_with_the_command_that_fetches_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cert-manager-1.19.4.tgz"), b"x").unwrap();
        let err = archives_in(dir.path(), &[Extra::Slinky])
            .unwrap_err()
            .to_string();
        assert!(err.contains("slurm-operator-crds-1.2.1.tgz"), "{err}");
        assert!(
            err.contains(
                "helm pull oci://ghcr.io/slinkyproject/charts/slurm-operator-crds --version 1.2.1"
            ),
            "{err}"
        );
    }
}
