//! `trainlab setup kind` — create (or reuse) the kind cluster, fake accelerator capacity on its
//! nodes, install the pinned operators. Idempotent; every step only against `kind-<name>`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::live::{parse_duration, runtime};
use super::output::eprint;
use super::progress::Steps;
use super::{print, Global};
use crate::exit::ExitCode;
use crate::ops::setup::{self, KindSetup};
use crate::ops::setup_eks::{
    self, ClusterFrom, EksPlan, EksSetup, IamState, NodeClasses, ZoneRule,
};
use crate::profile::charts::{self, Extra};
use crate::profile::eks_components;
use crate::profile::kind::{self, KindConfig};
use crate::profile::pins::{default_pins, fetch, load_pins, Pin, Source};
use crate::profile::site;
use crate::text::say;
use crate::text::Lang;
use crate::Error;

#[derive(Debug, Args)]
pub struct SetupArgs {
    #[command(subcommand)]
    pub target: SetupTarget,
}

#[derive(Debug, Subcommand)]
pub enum SetupTarget {
    /// A local kind cluster with faked GPU/EFA/Neuron capacity and the real operators
    #[command(after_help = "\
Steps (each idempotent; re-run after a Docker restart to repair faked capacity):
  1. verify every pinned manifest (size and sha256) before changing anything
  2. preflight: docker reachable, kind on PATH (skipped with --skip-create)
  3. create the cluster from kind-config.yaml unless it exists
  4. fake accelerators: node status capacity from each worker's instance type
  5. install Volcano, MPI Operator, the training-operator (PyTorchJob only, a manifest built
     into trainlab), the Karpenter CRDs, and beside them Kubeflow Trainer v2.3.0 (TrainJob) with
     JobSet v0.12.0 and the runtimes torch-distributed and deepspeed-distributed (manifests
     built into trainlab; JobSet's controller is awaited before the Trainer, the Trainer's
     before the runtimes)
  6. wait for the operators' Deployments to be available
  7. with --with slinky: helm installs cert-manager, the Slinky CRDs and slurm-operator
     (pinned chart versions; needs helm on PATH)

Every step after 3 runs only against the context kind-<name>; anything else is refused.")]
    Kind(KindArgs),
    /// Prepare an existing EKS cluster for the labs (never creates clusters or IAM)
    #[command(after_help = "\
Steps (each idempotent; re-run any time):
  1. find the cluster: --cluster, else the current context (an EKS ARN context, an eksctl
     `NAME.REGION.eksctl.io` name, or its user's `aws eks get-token --cluster-name NAME`), else
     the nodes' alpha.eksctl.io/cluster-name label; says which it used
  2. ask AWS (read only: eks:DescribeCluster, ec2:DescribeSubnets): status (must be ACTIVE),
     Kubernetes version, endpoint, Auto Mode, subnets and their zones, the cluster security group
  3. refuse when the kube context's server is not the cluster's endpoint, or when the nodes are
     not EKS nodes (providerID aws://)
  4. read the cluster: nodes (GPU/Neuron capacity, taints, zones), Karpenter's NodePools and
     EC2NodeClasses, CSI drivers, Karpenter's controller
  5. site facts: region, account, the zone with GPU capacity, a subnet there, the cluster
     security group, the node role, the node classes; --param KEY=VALUE overrides any
  6. verify every pinned manifest, then apply server-side: the operators, the EFA device plugin
     tolerating the GPU/Neuron taints, and with Karpenter (or Auto Mode) NodePools and node
     classes fit for the labs' images; wait for the operators' Deployments
  7. with --with slinky: the Slinky helm charts, as setup kind installs them
  8. write the site file that start, solve, check and grade read for --profile eks

What it never does: create a cluster, a node group or anything in IAM. What needs IAM (the
EBS and FSx CSI drivers, Karpenter) is detected and, when missing, printed as the exact
commands with this cluster's name, region and account.

--dry-run prints all of this and changes nothing (it needs read access only, and still plans
from what AWS says when the API server cannot be reached).")]
    Eks(EksArgs),
}

#[derive(Debug, Args)]
pub struct EksArgs {
    /// The EKS cluster [default: the one the current kube context points at]
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// AWS region [default: the context's, else AWS_REGION or the AWS profile's]
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Also install an optional component with helm (repeatable): `slinky` for labs 3 and 4
    #[arg(long = "with", value_name = "COMPONENT", value_enum)]
    pub with: Vec<Extra>,
    /// Print the plan (cluster facts, site values, components with versions and hashes, what
    /// needs IAM and the commands for it); change nothing, write no file
    #[arg(long)]
    pub dry_run: bool,
    /// How long to wait for the operators' Deployments
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub wait_timeout: Duration,
    /// A site value instead of the one discovered (repeatable): cluster, region, account, zone,
    /// subnet_id, security_group_ids, node_role, gpu_node_class, neuron_node_class
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = super::parse_param)]
    pub params: Vec<(String, String)>,
    /// Pins to install instead of the built-in ones (YAML list, as for setup kind)
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    /// Read the pinned upstream manifests (and chart archives) from this folder instead of downloading
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct KindArgs {
    /// Cluster name (context kind-<name>)
    #[arg(long, default_value = "trainlab")]
    pub name: String,
    /// kind cluster config [default: the kind-config.yaml built into trainlab]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the plan (cluster, nodes and resources to patch, URLs with versions and hashes); change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Read the pinned upstream manifests from this folder instead of downloading (air-gapped rooms)
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Use an existing cluster; do not call docker or kind
    #[arg(long)]
    pub skip_create: bool,
    /// Also install an optional component with helm (repeatable): `slinky` for labs 3 and 4
    /// (cert-manager, the Slinky CRDs and slurm-operator, pinned chart versions). With --from,
    /// the chart archives `helm pull` writes are read from that folder
    #[arg(long = "with", value_name = "COMPONENT", value_enum)]
    pub with: Vec<Extra>,
    /// Pins to install instead of the built-in ones (YAML list of component, version, url, bytes, sha256 or embedded, deployments, after)
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    /// How long to wait for the operators' Deployments (each wait: JobSet's before the Trainer,
    /// the Trainer's before its runtimes, then the others)
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub wait_timeout: Duration,
}

pub fn run(g: &Global, a: &SetupArgs) -> Result<ExitCode, Error> {
    match &a.target {
        SetupTarget::Kind(k) => kind_setup(g, k, g.lang()),
        SetupTarget::Eks(e) => eks_setup(g, e, g.lang()),
    }
}

/// The name the plan gives the kind config built into trainlab.
fn embedded_config_name(lang: Lang) -> String {
    say(
        lang,
        "kind-config.yaml（組み込み）",
        "kind-config.yaml (built in)",
    )
}

fn kind_setup(g: &Global, a: &KindArgs, lang: Lang) -> Result<ExitCode, Error> {
    let context = format!("kind-{}", a.name);
    // Safety first, before any request: a fake-GPU patch must never reach a real cluster.
    if let Some(c) = &g.live.context {
        if c != &context {
            return Err(Error::usage(
                format!("setup kind が操作するのはコンテキスト {context} だけです。--context {c} は使えません"),
                format!("setup kind only touches the context {context}; refusing --context {c}"),
            ));
        }
    }
    let (config_text, config_name) = match &a.config {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| {
                Error::usage(
                    format!("{}: 読み込めません: {e}", p.display()),
                    format!("{}: cannot read: {e}", p.display()),
                )
            })?,
            p.display().to_string(),
        ),
        None => (
            kind::EMBEDDED_CONFIG.to_string(),
            embedded_config_name(lang),
        ),
    };
    let config = KindConfig::parse(&config_text, &config_name)?;
    let pins = match &a.pins {
        Some(p) => load_pins(p)?,
        None => default_pins(),
    };
    if a.dry_run {
        let mut plan = dry_run_plan(a, &config, &config_name, &pins, lang)?;
        // A dry run with --from proves the folder would do: every pinned file present with
        // its size and hash, every chart archive present; nothing is applied.
        if let Some(dir) = &a.from {
            if !dir.is_dir() {
                return Err(Error::usage(
                    format!(
                        "--from {}: フォルダーではありません（固定したファイルを置いたフォルダーを指定してください）",
                        dir.display()
                    ),
                    format!(
                        "--from {}: not a folder (give the folder holding the pinned files)",
                        dir.display()
                    ),
                ));
            }
            let rt = runtime()?;
            let mut n = 0;
            for pin in pins
                .iter()
                .filter(|p| matches!(p.source, Source::Download { .. }))
            {
                rt.block_on(fetch(pin, Some(dir)))?;
                n += 1;
            }
            let archives = charts::archives_in(dir, &a.with)?;
            plan.push_str(&from_checked(dir, n, archives.len(), lang));
        }
        print(&fit_plan(&plan, crate::report::human::terminal_width()));
        return Ok(ExitCode::Ok);
    }
    let mut connect = g.connect_opts();
    connect.context = Some(context);
    let req = KindSetup {
        name: a.name.clone(),
        config_text,
        pins,
        from: a.from.clone(),
        with: a.with.clone(),
        skip_create: a.skip_create,
        wait_timeout: a.wait_timeout,
        connect,
        lang,
    };
    let stopped = crate::text::Text {
        ja: "setup kind を途中で止めました。済んだ手順はそのまま残ります。`trainlab setup kind` をもう一度実行すると続きから仕上げます（どの手順も何度実行しても同じ結果です）".into(),
        en: "setup kind stopped in the middle; the steps it finished stay. Run `trainlab setup kind` again to finish (every step gives the same result when run twice)".into(),
    };
    let ready = super::live::runtime_stopped_by_signal(lang, stopped)?
        .block_on(setup::kind_setup(&req, &mut Steps::new()))?;
    let (on, summary) = (ready.on, ready.summary);
    print(&say(
        lang,
        format!("\n{on} で kind プロファイルの準備ができました:\n{summary}次は trainlab doctor、続いて trainlab start 9 を実行してください\n"),
        format!("\nkind profile ready on {on}:\n{summary}next: trainlab doctor, then trainlab start 9\n"),
    ));
    Ok(ExitCode::Ok)
}

fn eks_setup(g: &Global, a: &EksArgs, lang: Lang) -> Result<ExitCode, Error> {
    for (k, _) in &a.params {
        if !site::KEYS.iter().any(|(key, _)| key == k) {
            let known: Vec<&str> = site::KEYS.iter().map(|(k, _)| *k).collect();
            let known = known.join(", ");
            return Err(Error::usage(
                format!("--param {k}: setup eks のサイトの値ではありません（使えるキー: {known}）"),
                format!("--param {k}: not a site value of setup eks (known keys: {known})"),
            ));
        }
    }
    let pins = match &a.pins {
        Some(p) => Some(load_pins(p)?),
        None => None,
    };
    let req = EksSetup {
        cluster: a.cluster.clone(),
        region: a.region.clone(),
        with: a.with.clone(),
        dry_run: a.dry_run,
        wait_timeout: a.wait_timeout,
        params: a.params.clone(),
        pins,
        from: a.from.clone(),
        connect: g.connect_opts(),
        lang,
    };
    let stopped = crate::text::Text {
        ja: "setup eks を途中で止めました。済んだ手順はそのまま残ります。`trainlab setup eks` をもう一度実行すると続きから仕上げます（どの手順も何度実行しても同じ結果です）".into(),
        en: "setup eks stopped in the middle; the steps it finished stay. Run `trainlab setup eks` again to finish (every step gives the same result when run twice)".into(),
    };
    let rt = super::live::runtime_stopped_by_signal(lang, stopped)?;
    let plan = rt.block_on(setup_eks::plan(&req))?;
    if a.dry_run {
        print(&eks_plan_text(&plan, a.wait_timeout, lang)?);
        return Ok(ExitCode::Ok);
    }
    eprint(&format!("{}\n", cluster_used(&plan, lang)));
    let (ready, path) = rt.block_on(setup_eks::apply(&req, &plan, &mut Steps::new()))?;
    let (on, summary) = (ready.on, ready.summary);
    let shown = path.display();
    let mut out = say(
        lang,
        format!(
            "\n{on} で EKS プロファイルの準備ができました:\n{summary}サイトファイル: {shown}\n"
        ),
        format!("\nEKS profile ready on {on}:\n{summary}site file: {shown}\n"),
    );
    out.push_str(&iam_text(&plan, lang));
    out.push_str(&say(
        lang,
        "次は trainlab doctor、続いて trainlab start 9 --profile eks を実行してください\n",
        "next: trainlab doctor, then trainlab start 9 --profile eks\n",
    ));
    print(&out);
    Ok(ExitCode::Ok)
}

/// Which cluster setup eks prepares and how it found it.
fn cluster_used(plan: &EksPlan, lang: Lang) -> String {
    let (name, context) = (&plan.facts.name, &plan.context);
    let (ja, en) = match &plan.cluster_from {
        ClusterFrom::Flag => ("--cluster で指定".to_string(), "from --cluster".to_string()),
        ClusterFrom::ContextArn(n) => (
            format!("コンテキストの EKS ARN {n} から"),
            format!("from the context's EKS ARN {n}"),
        ),
        ClusterFrom::Eksctl(n) => (
            format!("eksctl の名前 {n} から"),
            format!("from the eksctl name {n}"),
        ),
        ClusterFrom::ExecArgs => (
            "コンテキストのユーザーの `eks get-token --cluster-name` から".to_string(),
            "from the context user's `eks get-token --cluster-name`".to_string(),
        ),
        ClusterFrom::NodeLabel => (
            "ノードのラベル alpha.eksctl.io/cluster-name から".to_string(),
            "from the nodes' alpha.eksctl.io/cluster-name label".to_string(),
        ),
    };
    say(
        lang,
        format!("trainlab: EKS クラスター {name}（{ja}）、コンテキスト {context}"),
        format!("trainlab: EKS cluster {name} ({en}), context {context}"),
    )
}

/// What needs IAM: found, provided by Auto Mode, or the commands that install it.
fn iam_text(plan: &EksPlan, lang: Lang) -> String {
    let mut s = say(
        lang,
        "\nIAM が必要なもの（trainlab は IAM を作りません）:\n",
        "\nneeds IAM (trainlab never creates IAM):\n",
    );
    for item in &plan.iam {
        let name = item.name;
        match &item.state {
            IamState::Found(what) => s.push_str(&say(
                lang,
                format!("  {name}: あり（{what}）\n"),
                format!("  {name}: present ({what})\n"),
            )),
            IamState::AutoMode => s.push_str(&say(
                lang,
                format!("  {name}: EKS Auto Mode に組み込み\n"),
                format!("  {name}: built into EKS Auto Mode\n"),
            )),
            IamState::Missing | IamState::Unknown => {
                let (ja, en) = if item.state == IamState::Missing {
                    ("ありません。インストールするには", "missing; to install it")
                } else {
                    (
                        "確認できません。なければ",
                        "could not be checked; if missing",
                    )
                };
                s.push_str(&say(
                    lang,
                    format!("  {name}: {ja}（{}）:\n", item.doc),
                    format!("  {name}: {en} ({}):\n", item.doc),
                ));
                for c in &item.commands {
                    s.push_str(&format!("    {c}\n"));
                }
            }
        }
    }
    s
}

/// The `setup eks --dry-run` text: the whole plan in `lang`.
pub fn eks_plan_text(plan: &EksPlan, wait_timeout: Duration, lang: Lang) -> Result<String, Error> {
    let mut s = String::new();
    let mut line = |ja: String, en: String| {
        s.push_str(&say(lang, ja, en));
        s.push('\n');
    };
    let f = &plan.facts;
    line(
        "setup eks --dry-run: 何も変更せず、ファイルも書きません\n".into(),
        "setup eks --dry-run: nothing will be changed, no file written\n".into(),
    );
    let used = cluster_used(plan, lang);
    line(used.clone(), used);
    let dash = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    let (version, endpoint, platform) = (
        dash(&f.version),
        dash(&f.endpoint),
        dash(&f.platform_version),
    );
    let (status, region, account) = (&f.status, &f.region, dash(&f.account));
    let (auto_ja, auto) = if f.auto_mode {
        ("有効", "on")
    } else {
        ("無効", "off")
    };
    line(
        format!("EKS: {status}、Kubernetes {version}、プラットフォーム {platform}、Auto Mode {auto_ja}、リージョン {region}、アカウント {account}"),
        format!("EKS: {status}, Kubernetes {version}, platform {platform}, Auto Mode {auto}, region {region}, account {account}"),
    );
    line(
        format!("  エンドポイント: {endpoint}"),
        format!("  endpoint: {endpoint}"),
    );
    let subnets: Vec<String> = f
        .subnets
        .iter()
        .map(|sub| {
            let zone = if sub.zone.is_empty() {
                "?"
            } else {
                sub.zone.as_str()
            };
            format!("{} ({zone})", sub.id)
        })
        .collect();
    let subnets = if subnets.is_empty() {
        "-".to_string()
    } else {
        subnets.join(", ")
    };
    line(
        format!("  サブネット: {subnets}"),
        format!("  subnets: {subnets}"),
    );
    let sg = dash(&f.cluster_security_group);
    line(
        format!("  クラスターのセキュリティグループ: {sg}"),
        format!("  cluster security group: {sg}"),
    );
    if !f.security_groups.is_empty() {
        let groups = f.security_groups.join(", ");
        line(
            format!("  追加のセキュリティグループ: {groups}"),
            format!("  additional security groups: {groups}"),
        );
    }
    match &plan.unread {
        Some(why) => line(
            format!("\nクラスターを読めませんでした（以下は EKS と EC2 の情報だけによる計画です）: {}", why.ja),
            format!("\ncould not read the cluster (the plan below rests on what EKS and EC2 say only): {}", why.en),
        ),
        None => line(
            format!("\nクラスター: ノード {} 台（GPU か Neuron があるもの {} 台）", plan.nodes, plan.accelerated_nodes),
            format!("\ncluster: {} node(s), {} with GPUs or Neuron devices", plan.nodes, plan.accelerated_nodes),
        ),
    }
    line(
        "\nサイトの値（setup eks を実行するとサイトファイルに書きます）:".into(),
        "\nsite values (setup eks writes them to the site file):".into(),
    );
    for (key, _) in site::KEYS {
        let value = plan.site.values.get(*key);
        let (note_ja, note_en) = if plan.from_param.iter().any(|k| k == key) {
            ("（--param）".to_string(), " (--param)".to_string())
        } else if *key == "zone" {
            match plan.zone_rule {
                ZoneRule::AcceleratedNodes => ("（GPU か Neuron のあるノードのゾーン）".into(), " (zone of the nodes with GPUs or Neuron devices)".into()),
                ZoneRule::AcceleratedNodePools => ("（GPU か Neuron を出す NodePool が許すゾーン）".into(), " (a zone the GPU/Neuron NodePools allow)".into()),
                ZoneRule::FirstSubnet => ("（アクセラレーターのあるノードも NodePool もないので、最初のサブネットのゾーン）".into(), " (no accelerated nodes or NodePools: the first subnet's zone)".into()),
                ZoneRule::Param | ZoneRule::NotFound => (String::new(), String::new()),
            }
        } else {
            (String::new(), String::new())
        };
        match value {
            Some(v) => line(
                format!("  {key}: {v}{note_ja}"),
                format!("  {key}: {v}{note_en}"),
            ),
            None => line(
                format!("  {key}: 見つかりません（--param {key}=… で指定できます）"),
                format!("  {key}: not found (give it with --param {key}=…)"),
            ),
        }
    }
    line(
        "\nマニフェスト（この順に server-side で適用。upstream のファイルはサイズと sha256 を検証）:".into(),
        "\nmanifests, applied server-side in this order (upstream files size- and sha256-verified):".into(),
    );
    for p in &plan.pins {
        let title = format!("  {} {}", p.component, p.version);
        line(title.clone(), title);
        match &p.source {
            Source::Download { url, bytes, sha256 } => line(
                format!("    {url}\n    {bytes} バイト、sha256 {sha256}"),
                format!("    {url}\n    {bytes} bytes, sha256 {sha256}"),
            ),
            Source::Embedded(m) => line(
                format!(
                    "    trainlab に組み込み: {}（ダウンロードもハッシュの検証も不要）",
                    m.path
                ),
                format!(
                    "    built into trainlab: {} (no download, nothing to hash)",
                    m.path
                ),
            ),
        }
        if !p.deployments.is_empty() {
            let d = p.deployments.join(", ");
            line(
                format!("    待機する Deployment: {d}"),
                format!("    waits for: {d}"),
            );
        }
    }
    let efa = eks_components::EFA_PLUGIN_VERSION;
    line(
        format!("  EFA device plugin {efa}（trainlab が生成、kube-system）。toleration:"),
        format!("  EFA device plugin {efa} (built by trainlab, kube-system), tolerating:"),
    );
    for t in &plan.tolerations {
        let key = t["key"].as_str().unwrap_or("*");
        let op = t["operator"].as_str().unwrap_or("Equal");
        let effect = t["effect"].as_str().unwrap_or("*");
        let value = t["value"]
            .as_str()
            .map(|v| format!("={v}"))
            .unwrap_or_default();
        let row = format!("    {key}{value} {op} {effect}");
        line(row.clone(), row);
    }
    match &plan.node_classes {
        NodeClasses::Apply(objs) => {
            line(
                "\n作成するノードクラスと NodePool:".into(),
                "\nnode classes and NodePools to create:".into(),
            );
            for o in objs {
                let row = format!(
                    "  {} {}",
                    o["kind"].as_str().unwrap_or("?"),
                    o["metadata"]["name"].as_str().unwrap_or("?")
                );
                line(row.clone(), row);
            }
        }
        NodeClasses::Lacking(e) => line(
            format!("\nノードクラス: 作成できません: {}", e.in_lang(Lang::Ja)),
            format!("\nnode classes: cannot be created: {}", e.in_lang(Lang::En)),
        ),
        NodeClasses::NoKarpenter => line(
            "\nノードクラス: 作成しません（Karpenter の CRD がなく、Auto Mode でもありません）".into(),
            "\nnode classes: none (no Karpenter CRDs, not Auto Mode)".into(),
        ),
        NodeClasses::Unknown => line(
            "\nノードクラス: クラスターを読めないため未定（Karpenter の CRD があれば作成します）".into(),
            "\nnode classes: undecided, the cluster could not be read (created when Karpenter's CRDs are served)".into(),
        ),
    }
    for extra in &plan.with {
        let with = extra.name();
        line(
            format!("\n--with {with}: Helm チャート。この順にインストールします（helm が PATH 上に必要）:"),
            format!("\n--with {with}: helm charts, installed in this order (helm must be on PATH):"),
        );
        let timeout = humantime::format_duration(wait_timeout).to_string();
        for c in extra.charts() {
            let cmd = format!(
                "    helm {}",
                c.helm_args(&plan.context, None, &timeout).join(" ")
            );
            line(cmd.clone(), cmd);
        }
    }
    s.push_str(&iam_text(plan, lang));
    Ok(s)
}

/// The line a dry run with `--from DIR` adds: the folder holds every pinned file and archive.
fn from_checked(dir: &std::path::Path, files: usize, archives: usize, lang: Lang) -> String {
    let dir = dir.display();
    say(
        lang,
        format!(
            "\n--from {dir}: 固定したファイル {files} 個があり、サイズと sha256 が一致しました。チャートのアーカイブは {archives} 個ありました\n"
        ),
        format!(
            "\n--from {dir}: {files} pinned file(s) found, sizes and sha256 match; {archives} chart archive(s) found\n"
        ),
    )
}

/// The `--dry-run` text: pinned by a snapshot test, so it must be deterministic. The English is
/// the snapshot's; the Japanese says the same, keeping names, commands, URLs and hashes as they are.
/// A plan wrapped to the terminal (`width`, None for a pipe): each line continues 4 columns
/// under its own indent. A word wider than the line (a URL) stays whole, to be copied.
pub fn fit_plan(plan: &str, width: Option<usize>) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in plan.split('\n') {
        if !line.trim().contains(' ') {
            out.push(line.to_string());
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let hang = " ".repeat(indent + 4);
        out.push(crate::report::fit::wrap_hanging(line, width, &hang));
    }
    out.join("\n")
}

pub fn dry_run_plan(
    a: &KindArgs,
    config: &KindConfig,
    config_name: &str,
    pins: &[Pin],
    lang: Lang,
) -> Result<String, Error> {
    let mut s = String::new();
    // One line in `lang`; a line that reads the same in both (names, URLs, a command) is given twice.
    let mut line = |ja: String, en: String| {
        s.push_str(&say(lang, ja, en));
        s.push('\n');
    };
    let name = config.name.clone().unwrap_or_else(|| a.name.clone());
    let cluster = &a.name;
    line(
        "setup kind --dry-run: 何も変更しません\n".into(),
        "setup kind --dry-run: nothing will be changed\n".into(),
    );
    let (create_ja, create_en) = if a.skip_create {
        ("既存のクラスターを使用", "use the existing cluster")
    } else {
        ("なければ作成", "create unless it exists")
    };
    line(
        format!("クラスター: {cluster}（{create_ja}）、設定: {config_name}"),
        format!("cluster: {cluster} ({create_en}) from {config_name}"),
    );
    if name != a.name {
        line(
            format!("  注: 設定ファイルではクラスター名が `{name}` ですが、--name {cluster} を優先します"),
            format!("  note: the config names the cluster `{name}`; --name {cluster} wins"),
        );
    }
    line(
        format!("コンテキスト: kind-{cluster}（以降の手順はすべてこのコンテキストに対してだけ実行します）\n"),
        format!("context: kind-{cluster} (every later step runs only against it)\n"),
    );
    line(
        "模擬するアクセラレーターの容量（ノードの status に JSON パッチ）:".into(),
        "fake accelerator capacity (node status, JSON patch):".into(),
    );
    for (i, w) in config.workers().enumerate() {
        let node = kind::worker_name(&a.name, i);
        let it = w
            .labels
            .get(crate::profile::instances::INSTANCE_TYPE_LABEL)
            .map(String::as_str)
            .unwrap_or("-");
        let zone = w
            .labels
            .get(crate::profile::instances::ZONE_LABEL)
            .map(String::as_str)
            .unwrap_or("-");
        let caps: Vec<String> = kind::fake_capacity(it)
            .iter()
            .map(|(r, n)| format!("{r}={n}"))
            .collect();
        let caps = if caps.is_empty() {
            say(
                lang,
                "なし（不明なインスタンスタイプ）",
                "nothing (unknown instance type)",
            )
        } else {
            caps.join(", ")
        };
        let row = format!("  {node:<18} {it:<14} {zone:<11} {caps}");
        line(row.clone(), row);
    }
    let (source_ja, source_en) = match &a.from {
        Some(d) => (
            format!("{} から読み込んで", d.display()),
            format!("from {}", d.display()),
        ),
        None => (
            "HTTPS でダウンロードして".to_string(),
            "downloaded over HTTPS".to_string(),
        ),
    };
    line(
        format!("\nマニフェスト（この順に server-side で適用。upstream のファイルは {source_ja}サイズと sha256 を検証）:"),
        format!("\nmanifests, applied server-side in this order (upstream files {source_en}, size and sha256 verified):"),
    );
    for p in pins {
        let title = format!("  {} {}", p.component, p.version);
        line(title.clone(), title);
        if !p.after.is_empty() {
            let d = p.after.join(", ");
            line(
                format!("    適用する前に待機する Deployment: {d}"),
                format!("    first waits for: {d}"),
            );
        }
        match &p.source {
            Source::Download { url, bytes, sha256 } => {
                line(
                    format!("    {url}\n    {bytes} バイト、sha256 {sha256}"),
                    format!("    {url}\n    {bytes} bytes, sha256 {sha256}"),
                );
            }
            Source::Embedded(m) => {
                line(
                    format!(
                        "    trainlab に組み込み: {}（ダウンロードもハッシュの検証も不要）\n    {}",
                        m.path, m.note_ja
                    ),
                    format!(
                        "    built into trainlab: {} (no download, nothing to hash)\n    {}",
                        m.path, m.note
                    ),
                );
                for c in m.containers()? {
                    line(
                        format!("    実行するコンテナー: {c}"),
                        format!("    runs: {c}"),
                    );
                }
            }
        }
        if !p.deployments.is_empty() {
            let d = p.deployments.join(", ");
            line(
                format!("    待機する Deployment: {d}"),
                format!("    waits for: {d}"),
            );
        }
    }
    if a.with.is_empty() {
        let adds = Extra::Slinky
            .charts()
            .iter()
            .map(|c| format!("{} {}", c.release, c.version))
            .collect::<Vec<_>>()
            .join(", ");
        line(
            format!("\nオプション（未選択）: --with slinky（lab 3 と 4 用）を付けると {adds} もインストールします"),
            format!("\noptional, not selected: --with slinky (labs 3 and 4) adds {adds}"),
        );
    }
    for extra in &a.with {
        let with = extra.name();
        line(
            format!("\n--with {with}: Helm チャート。この順にインストールします（helm が PATH 上に必要）:"),
            format!("\n--with {with}: helm charts, installed in this order (helm must be on PATH):"),
        );
        for c in extra.charts() {
            let title = format!("  {} {}", c.component, c.version);
            line(title.clone(), title);
            let timeout = humantime::format_duration(a.wait_timeout).to_string();
            let args = c.helm_args(&format!("kind-{}", a.name), a.from.as_deref(), &timeout);
            let cmd = format!("    helm {}", args.join(" "));
            line(cmd.clone(), cmd);
        }
    }
    Ok(s)
}

#[cfg(test)]
pub(crate) mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    /// Runs of three or more all-lowercase ASCII words (two letters or more each) on one line:
    /// English sentences left in a Japanese text. Backtick spans, URLs and `helm` command lines
    /// are not prose and are skipped; a word touching a Japanese character is no English word.
    pub(crate) fn english_runs(text: &str) -> Vec<String> {
        let mut runs = Vec::new();
        for line in text.lines() {
            if line.trim_start().starts_with("helm ") {
                continue;
            }
            let mut prose = String::new();
            for (i, part) in line.split('`').enumerate() {
                if i % 2 == 0 {
                    prose.push_str(part);
                }
                prose.push(' ');
            }
            let mut run: Vec<&str> = Vec::new();
            for token in prose.split_whitespace() {
                let word = token.trim_matches(|c: char| "()[],.;:!?\"'".contains(c));
                if !token.contains("://")
                    && word.len() >= 2
                    && word.bytes().all(|b| b.is_ascii_lowercase())
                {
                    run.push(word);
                    continue;
                }
                if run.len() >= 3 {
                    runs.push(run.join(" "));
                }
                run.clear();
            }
            if run.len() >= 3 {
                runs.push(run.join(" "));
            }
        }
        runs
    }

    fn kind_args(args: &[&str]) -> KindArgs {
        let argv = [&["trainlab", "setup", "kind"][..], args].concat();
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Setup(SetupArgs {
                target: SetupTarget::Kind(k),
            }) => k,
            other => panic!("not setup kind: {other:?}"),
        }
    }

    /// The plan for `setup kind ARGS --dry-run` with the default pins and `config` (the
    /// built-in kind-config.yaml when None).
    fn plan(args: &[&str], config: Option<&str>, lang: Lang) -> String {
        let a = kind_args(args);
        let name = match config {
            Some(_) => "mine.yaml".to_string(),
            None => embedded_config_name(lang),
        };
        let config = KindConfig::parse(config.unwrap_or(kind::EMBEDDED_CONFIG), &name).unwrap();
        dry_run_plan(&a, &config, &name, &default_pins(), lang).unwrap()
    }

    /// A config naming another cluster, with a worker of an instance type trainlab does not know.
    const ODD_CONFIG: &str = "\
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: elsewhere
nodes:
  - role: control-plane
  - role: worker
    labels:
      node.kubernetes.io/instance-type: m9.unheard
";

    #[test]
    fn english_runs_finds_prose_but_not_code_urls_or_commands() {
        assert_eq!(
            english_runs("注: the config names the cluster `x`"),
            vec!["the config names the cluster"]
        );
        assert!(
            english_runs("実行: `trainlab setup kind --with slinky` と https://a.b/c/d/e")
                .is_empty()
        );
        assert!(english_runs("    helm upgrade --install cert-manager oci://x --wait").is_empty());
        assert!(english_runs("setup kind --dry-run: 何も変更しません").is_empty());
        assert!(english_runs("kind のノード trainlab-worker2 で GPU を模擬").is_empty());
    }

    #[test]
    fn dry_run_plan_in_japanese_has_no_english_sentence() {
        let variants: [(&[&str], Option<&str>); 4] = [
            (&["--dry-run"], None),
            (&["--dry-run", "--with", "slinky"], None),
            (
                &[
                    "--dry-run",
                    "--skip-create",
                    "--from",
                    "/srv/pins",
                    "--with",
                    "slinky",
                ],
                None,
            ),
            (&["--dry-run", "--name", "lab"], Some(ODD_CONFIG)),
        ];
        for (args, config) in variants {
            let ja = plan(args, config, Lang::Ja);
            let runs = english_runs(&ja);
            assert!(
                runs.is_empty(),
                "English in the ja plan {args:?}: {runs:?}\n{ja}"
            );
            // What is not prose stays as it is: URLs, hashes, versions, commands.
            let en = plan(args, config, Lang::En);
            for p in default_pins() {
                assert!(
                    ja.contains(&format!("  {} {}\n", p.component, p.version)),
                    "{ja}"
                );
                if let Source::Download { url, sha256, .. } = &p.source {
                    assert!(
                        ja.contains(url.as_str()) && ja.contains(sha256.as_str()),
                        "{ja}"
                    );
                }
            }
            for l in en.lines().filter(|l| l.trim_start().starts_with("helm ")) {
                assert!(ja.contains(l), "{l} missing from\n{ja}");
            }
        }
        let ja = plan(&["--dry-run", "--name", "lab"], Some(ODD_CONFIG), Lang::Ja);
        assert!(
            ja.contains("`elsewhere`") && ja.contains("--name lab"),
            "{ja}"
        );
        assert!(ja.contains("なし（不明なインスタンスタイプ）"), "{ja}");
        assert!(
            ja.contains(crate::profile::pins::TRAINING_OPERATOR.note_ja),
            "{ja}"
        );
        let from = from_checked(std::path::Path::new("/srv/pins"), 7, 3, Lang::Ja);
        assert!(english_runs(&from).is_empty(), "{from}");
        assert!(from.contains("/srv/pins") && from.contains('7') && from.contains('3'));
    }

    #[test]
    fn dry_run_plan_in_english_is_unchanged() {
        let en = plan(&["--dry-run"], None, Lang::En);
        // tests/kind_profile.rs pins the whole text; the unit test holds it to the same snapshot.
        let snap =
            include_str!("../../tests/it/snapshots/it__kind_profile__setup_kind_dry_run.snap");
        let body = snap.splitn(3, "---\n").nth(2).unwrap();
        assert_eq!(en, body);
        for l in [
            "setup kind --dry-run: nothing will be changed\n\n",
            "cluster: trainlab (create unless it exists) from kind-config.yaml (built in)\n",
            "context: kind-trainlab (every later step runs only against it)\n\n",
            "fake accelerator capacity (node status, JSON patch):\n",
            "\nmanifests, applied server-side in this order (upstream files downloaded over HTTPS, size and sha256 verified):\n",
            "    built into trainlab: manifests/kind/training-operator.yaml (no download, nothing to hash)\n",
            "    waits for: kubeflow/training-operator\n",
        ] {
            assert!(en.contains(l), "{l:?} missing from\n{en}");
        }
        let odd = plan(
            &[
                "--dry-run",
                "--name",
                "lab",
                "--skip-create",
                "--from",
                "/srv/pins",
                "--with",
                "slinky",
            ],
            Some(ODD_CONFIG),
            Lang::En,
        );
        for l in [
            "cluster: lab (use the existing cluster) from mine.yaml\n",
            "  note: the config names the cluster `elsewhere`; --name lab wins\n",
            "  lab-worker         m9.unheard     -           nothing (unknown instance type)\n",
            "(upstream files from /srv/pins, size and sha256 verified):\n",
            "\n--with slinky: helm charts, installed in this order (helm must be on PATH):\n",
        ] {
            assert!(odd.contains(l), "{l:?} missing from\n{odd}");
        }
        assert_eq!(
            from_checked(std::path::Path::new("/srv/pins"), 7, 3, Lang::En),
            "\n--from /srv/pins: 7 pinned file(s) found, sizes and sha256 match; 3 chart archive(s) found\n"
        );
        // The check sees English when there is some.
        assert!(!english_runs(&en).is_empty());
    }
}
