//! `trainlab doctor` — what the current cluster is and which lab capabilities it has. Read-only.

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use super::live::{connect_and_announce, runtime, LiveArgs};
use super::{print, Global};
use crate::exit::ExitCode;
use crate::profile::doctor::{inspect, DoctorReport};
use crate::profile::eks::EksReport;

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
    /// Also ask the EKS API about this cluster: ACTIVE?, does the kube context point at its
    /// endpoint?, node groups and their GPU/EFA/Neuron figures (AWS credentials from the usual chain)
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// AWS region of --cluster [default: AWS_REGION / the AWS profile's region]
    #[arg(long, requires = "cluster")]
    pub region: Option<String>,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(g: &Global, a: &DoctorArgs) -> Result<ExitCode, crate::Error> {
    if let Some(name) = &a.cluster {
        return run_eks(g, a, name);
    }
    let report = runtime()?.block_on(async {
        let conn = connect_and_announce(&a.live).await?;
        inspect(&conn).await
    })?;
    match a.output {
        DoctorFormat::Json => print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        )),
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
        r.profile
            .map_or("unknown (no kind:// or aws:// providerID)", |p| p.as_str())
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "node",
        "zone",
        "instance type",
        "nvidia.com/gpu",
        "vpc.amazonaws.com/efa",
        "aws.amazon.com/neuron",
        "neuroncore",
    ]);
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
    for n in r
        .nodes
        .iter()
        .filter(|n| !n.missing_fake_capacity.is_empty())
    {
        s.push_str(&format!(
            "warning: kind node {} lost its faked capacity ({}); `trainlab setup kind` repairs it\n",
            n.name,
            n.missing_fake_capacity.join(", ")
        ));
    }
    for n in r.nodes.iter().filter(|n| !n.allocatable_pending.is_empty()) {
        s.push_str(&format!(
            "note: kind node {} has its faked capacity ({}) but the kubelet has not copied it into allocatable yet; run doctor again in a few seconds\n",
            n.name,
            n.allocatable_pending.join(", ")
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

#[derive(serde::Serialize)]
struct EksDoctor {
    schema_version: u32,
    eks: EksReport,
    cluster: Option<DoctorReport>,
    cluster_error: Option<String>,
}

/// `doctor --cluster NAME`: the EKS view first, then the kube view; any mismatch is an
/// environment error (exit 3) so nobody grades or resets the wrong cluster.
fn run_eks(_g: &Global, a: &DoctorArgs, name: &str) -> Result<ExitCode, crate::Error> {
    let (eks, cluster) = runtime()?.block_on(async {
        let conn = connect_and_announce(&a.live).await;
        let server = conn.as_ref().ok().map(|c| c.server.clone());
        let eks = crate::profile::eks::inspect(name, a.region.clone(), server.as_deref()).await?;
        let cluster = match conn {
            Ok(c) => inspect(&c).await.map_err(|e| (Some(c.describe()), e)),
            Err(e) => Err((None, e)),
        };
        Ok::<_, crate::Error>((eks, cluster))
    })?;
    let mut problems = Vec::new();
    if !eks.is_active() {
        problems.push(format!("cluster {name} is {}, not ACTIVE", eks.status));
    }
    let region = eks.region.clone().unwrap_or_else(|| "<region>".into());
    let (report, cluster_error) = match cluster {
        Ok(r) => {
            if eks.context_matches == Some(false) {
                problems.push(format!(
                    "the kube context {} ({}) does not point at cluster {name} (endpoint {}); run `aws eks update-kubeconfig --name {name} --region {region}`",
                    r.context,
                    r.server,
                    eks.endpoint.as_deref().unwrap_or("?")
                ));
            }
            (Some(r), None)
        }
        Err((_, e)) => {
            problems.push(format!(
                "cannot inspect the cluster through kube: {e}; `aws eks update-kubeconfig --name {name} --region {region}` writes a context for it"
            ));
            (None, Some(e.to_string()))
        }
    };
    let out = EksDoctor {
        schema_version: 1,
        eks,
        cluster: report,
        cluster_error,
    };
    match a.output {
        DoctorFormat::Json => print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&out).unwrap_or_default()
        )),
        DoctorFormat::Human => {
            print(&render_eks(&out.eks));
            if let Some(r) = &out.cluster {
                print(&format!("\n{}", render(r)));
            }
        }
    }
    if problems.is_empty() {
        Ok(ExitCode::Ok)
    } else {
        Err(crate::Error::Environment(problems.join("\n")))
    }
}

fn render_eks(e: &EksReport) -> String {
    let mut s = format!(
        "EKS cluster {} ({}): {}, Kubernetes {}\nendpoint: {}\n",
        e.cluster,
        e.region.as_deref().unwrap_or("?"),
        e.status,
        e.version.as_deref().unwrap_or("?"),
        e.endpoint.as_deref().unwrap_or("?")
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "node group",
        "status",
        "instance types",
        "desired",
        "GPUs/node",
        "EFA/node",
        "Neuron/node",
    ]);
    let fig = |v: Option<u32>| v.map_or("?".to_string(), |n| n.to_string());
    for n in &e.nodegroups {
        t.add_row([
            n.name.clone(),
            n.status.clone(),
            n.instance_types.join(", "),
            n.desired_size.map_or("-".into(), |d| d.to_string()),
            fig(n.gpus),
            fig(n.efa),
            fig(n.neuron),
        ]);
    }
    s.push_str(&format!("{t}\n"));
    s
}
