//! `trainlab reset LAB` — delete the lab namespace and the cluster-scoped objects labelled
//! `trainlab.dev/lab=<id>`; nothing else, ever. A namespace trainlab did not create (one given
//! with `-n` that lacks the label) is kept; only the labelled objects of the lab's kinds in it go.

use std::io::{BufRead, IsTerminal};

use clap::Args;
use kube::discovery::ApiResource;

use super::live::{connect_and_announce, runtime, LiveArgs};
use super::output::eprint;
use super::{manifests, print, Global};
use crate::cluster::{delete, labelled, Discovery, LAB_LABEL};
use crate::exit::ExitCode;

#[derive(Debug, Args)]
pub struct ResetArgs {
    /// The lab: number, id or folder
    pub lab: String,
    /// Namespace of the lab [default: trainlab-<lab id>]
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Do not ask for confirmation
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(g: &Global, a: &ResetArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let b = crate::plan::select(&catalog, std::slice::from_ref(&a.lab), false)?[0];
    let id = b.lab.id.clone();
    let namespace = a
        .namespace
        .clone()
        .unwrap_or_else(|| format!("trainlab-{id}"));
    if !a.yes && !std::io::stdin().is_terminal() {
        return Err(crate::Error::Usage(
            "reset deletes objects; pass --yes to confirm when not on a terminal".into(),
        ));
    }
    // The cluster-scoped kinds this lab creates, from its own manifests.
    let mut kinds: Vec<(String, String)> = Vec::new();
    for folder in ["starter", "solution"] {
        for o in manifests::objects(b, folder)? {
            let k = (o.api_version().to_string(), o.kind().to_string());
            if o.kind() != "Namespace" && !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    runtime()?.block_on(async {
        let conn = connect_and_announce(&a.live).await?;
        crate::cluster::probe(&conn).await?;
        let discovery = Discovery::new();
        let (ns_ar, _) = discovery
            .resolve_any(&conn, "v1", "Namespace")
            .await
            .map_err(|e| crate::Error::Environment(e.to_string()))?;
        let ns_ours = labelled(&conn, &ns_ar, None, &id)
            .await?
            .contains(&namespace);
        // (resource, namespace, name)
        let mut doomed = Vec::new();
        for (api_version, kind) in &kinds {
            let Ok((ar, namespaced)) = discovery.resolve_any(&conn, api_version, kind).await else {
                continue;
            };
            let scope = match (namespaced, ns_ours) {
                (true, true) => continue, // removed with the namespace
                // A namespace trainlab did not create stays; only the lab's objects in it go.
                (true, false) => Some(namespace.as_str()),
                (false, _) => None,
            };
            for name in labelled(&conn, &ar, scope, &id).await? {
                doomed.push((ar.clone(), scope, name));
            }
        }
        let shown = |(ar, ns, n): &(ApiResource, Option<&str>, String)| match ns {
            Some(ns) => format!("{}/{n} in namespace {ns}", ar.kind),
            None => format!("{}/{n}", ar.kind),
        };
        let mut plan: Vec<String> = doomed.iter().map(shown).collect();
        if ns_ours {
            plan.insert(0, format!("Namespace/{namespace} (and everything in it)"));
        }
        if plan.is_empty() {
            print(&format!(
                "nothing to reset: no objects labelled {LAB_LABEL}={id} in {}\n",
                conn.describe()
            ));
            return Ok(ExitCode::Ok);
        }
        if !a.yes {
            eprint(&format!(
                "This deletes from {}:\n  {}\nContinue? [y/N] ",
                conn.describe(),
                plan.join("\n  ")
            ));
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            if !matches!(line.trim(), "y" | "Y" | "yes") {
                print("reset cancelled; nothing deleted\n");
                return Ok(ExitCode::Ok);
            }
        }
        for d in &doomed {
            delete(&conn, &d.0, d.1, &d.2).await?;
            print(&format!("deleted {}\n", shown(d)));
        }
        if ns_ours {
            delete(&conn, &ns_ar, None, &namespace).await?;
            print(&format!("deleted Namespace/{namespace}\n"));
        } else {
            print(&format!(
                "kept Namespace/{namespace}: it does not carry {LAB_LABEL}={id}\n"
            ));
        }
        Ok(ExitCode::Ok)
    })
}
