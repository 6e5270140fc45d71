//! The command lines a lab's reference solution runs: what `show LAB --profile P` prints, and
//! what the conformance suite (tests/conformance.rs) hands to the real tools' own parsers.

use crate::catalog::{LabBundle, SiteFill};
use crate::observe::parse_text;

use super::kit::k8s::workload::Workload;

/// One container's command line in a lab file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The lab file it is written in (`solution-eks/bf16-train.yaml`).
    pub file: String,
    /// `PyTorchJob/bf16-train`
    pub object: String,
    /// The pod template's role (`Master`, `Launcher`, a Volcano task, `Job`).
    pub role: String,
    pub container: String,
    pub image: String,
    /// `command` then `args`, as the kubelet runs them (no image entrypoint is known here).
    pub argv: Vec<String>,
}

impl CommandLine {
    /// The argv as one shell line, quoted where a word needs it.
    pub fn shell_line(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// Every container command line of a lab folder as one profile applies it (`solution/` with
/// `solution-eks/` over it), in file order; containers without a command are left out.
/// Every `${site.KEY}` is filled by `site`: kind's stand-ins, the EKS site's values, or left as
/// written (`catalog::AsWritten`).
pub fn command_lines<F: SiteFill>(
    b: &LabBundle,
    folder: &str,
    profile: &str,
    site: &F,
) -> Result<Vec<CommandLine>, crate::Error>
where
    crate::Error: From<F::Error>,
{
    let mut out = Vec::new();
    for (rel, text) in b.files_for(folder, profile, site)? {
        for o in parse_text(&text, &b.path_of(rel))? {
            let Some(w) = Workload::from_obj(&o)? else {
                continue;
            };
            for (t, c, _) in w.containers() {
                let argv: Vec<String> = c
                    .command
                    .iter()
                    .flatten()
                    .chain(c.args.iter().flatten())
                    .cloned()
                    .collect();
                if argv.is_empty() {
                    continue;
                }
                out.push(CommandLine {
                    file: rel.to_string(),
                    object: format!("{}/{}", o.kind(), o.name()),
                    role: t.role.clone(),
                    container: c.name.clone(),
                    image: c.image.clone().unwrap_or_default(),
                    argv,
                });
            }
        }
    }
    Ok(out)
}
