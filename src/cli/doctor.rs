//! `trainlab doctor` — what the current cluster is and which lab capabilities it has. Read-only.

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use super::live::{connect_and_announce, runtime, LiveArgs};
use super::{print, Global};
use crate::exit::ExitCode;
use crate::profile::doctor::{inspect, DoctorReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DoctorFormat {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value = "human")]
    pub output: DoctorFormat,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(_g: &Global, a: &DoctorArgs) -> Result<ExitCode, crate::Error> {
    let report = runtime()?.block_on(async {
        let conn = connect_and_announce(&a.live).await?;
        inspect(&conn).await
    })?;
    match a.output {
        DoctorFormat::Json => print(&format!("{}\n", serde_json::to_string_pretty(&report).unwrap_or_default())),
        DoctorFormat::Human => print(&render(&report)),
    }
    Ok(ExitCode::Ok)
}

fn render(r: &DoctorReport) -> String {
    let mut s = format!(
        "cluster: {} ({}), Kubernetes {}\nprofile: {}\n\n",
        r.context,
        r.server,
        r.server_version,
        r.profile.map_or("unknown (no kind:// or aws:// providerID)", |p| p.as_str())
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_header(["node", "zone", "instance type", "nvidia.com/gpu", "vpc.amazonaws.com/efa", "aws.amazon.com/neuron", "neuroncore"]);
    for n in &r.nodes {
        t.add_row([
            n.name.clone(),
            n.zone.clone().unwrap_or_else(|| "-".into()),
            n.instance_type.clone().unwrap_or_else(|| "-".into()),
            n.gpu.to_string(),
            n.efa.to_string(),
            n.neuron.to_string(),
            n.neuroncore.to_string(),
        ]);
    }
    s.push_str(&format!("{t}\n\n"));
    for n in r.nodes.iter().filter(|n| !n.missing_fake_capacity.is_empty()) {
        s.push_str(&format!(
            "warning: kind node {} lost its faked capacity ({}); `trainlab setup kind` repairs it\n",
            n.name,
            n.missing_fake_capacity.join(", ")
        ));
    }
    s.push_str("capabilities:\n");
    for c in &r.capabilities {
        let mark = if c.present { "✔" } else { "✘" };
        s.push_str(&format!("  {mark} {:<22} {}\n", c.name, c.detail));
        if let Some(i) = &c.install {
            s.push_str(&format!("      install: {i}\n"));
        }
    }
    s
}
