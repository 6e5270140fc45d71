//! Test support shared by the integration tests (never shipped in the binary).
#![allow(dead_code)]

pub mod emulator;
pub mod live;
pub mod run_clm;
pub mod state;

/// The discovery cache folder for a command pointed at `kubeconfig`: beside it, so each test's
/// runs share one cache (the second `check` of a test resolves from the first's answers, as a
/// learner's would) and no test sees another's, nor the machine's `~/.cache/trainlab`.
pub fn cache_beside(kubeconfig: impl AsRef<std::path::Path>) -> std::path::PathBuf {
    kubeconfig
        .as_ref()
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("trainlab-cache")
}
