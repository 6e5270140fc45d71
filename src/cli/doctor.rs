//! `trainlab doctor` — what the current cluster is and which lab capabilities it has. Read-only.

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use super::live::{connect_and_announce, runtime};
use super::{print, Global};
use crate::exit::ExitCode;
use crate::facts::Profile;
use crate::profile::doctor::{inspect, DoctorReport, LabRow, Runs};
use crate::profile::eks::EksReport;
use crate::text::say;
use crate::text::Lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DoctorFormat {
    /// Text for people (also `-o table`)
    #[value(alias = "table")]
    Human,
    /// JSON
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
}

pub fn run(g: &Global, a: &DoctorArgs) -> Result<ExitCode, crate::Error> {
    if let Some(name) = &a.cluster {
        return run_eks(g, a, name);
    }
    let catalog = g.catalog()?;
    let report = runtime()?.block_on(async {
        let conn = connect_and_announce(&g.connect_opts()).await?;
        inspect(&conn, &catalog).await
    })?;
    match a.output {
        DoctorFormat::Json => print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        )),
        DoctorFormat::Human => print(&render(&report, g.lang())),
    }
    Ok(ExitCode::Ok)
}

fn render(r: &DoctorReport, lang: Lang) -> String {
    let ja = lang == Lang::Ja;
    let (context, server, version) = (&r.context, &r.server, &r.server_version);
    let profile = match r.profile {
        Some(p) => p.as_str().to_string(),
        None => say(
            lang,
            "不明（ノードに kind:// や aws:// の providerID がありません）",
            "unknown (no kind:// or aws:// providerID)",
        ),
    };
    let mut s = say(
        lang,
        format!(
            "クラスター: {context} ({server})、Kubernetes {version}\nプロファイル: {profile}\n\n"
        ),
        format!("cluster: {context} ({server}), Kubernetes {version}\nprofile: {profile}\n\n"),
    );
    let mut t = Table::new();
    let (node, zone, instance_type) = if ja {
        ("ノード", "ゾーン", "インスタンスタイプ")
    } else {
        ("node", "zone", "instance type")
    };
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        node,
        zone,
        instance_type,
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
        let (name, lost) = (&n.name, n.missing_fake_capacity.join(", "));
        s.push_str(&say(
            lang,
            format!("警告: kind のノード {name} で模擬した容量（{lost}）が失われています。`trainlab setup kind` で元に戻せます\n"),
            format!("warning: kind node {name} lost its faked capacity ({lost}); `trainlab setup kind` repairs it\n"),
        ));
    }
    for n in r.nodes.iter().filter(|n| !n.allocatable_pending.is_empty()) {
        let (name, pending) = (&n.name, n.allocatable_pending.join(", "));
        s.push_str(&say(
            lang,
            format!("注: kind のノード {name} には模擬した容量（{pending}）がありますが、kubelet がまだ allocatable に反映していません。数秒後に doctor をもう一度実行してください\n"),
            format!("note: kind node {name} has its faked capacity ({pending}) but the kubelet has not copied it into allocatable yet; run doctor again in a few seconds\n"),
        ));
    }
    s.push_str(&findings(r, lang));
    s.push_str(&say(lang, "lab に必要な機能:\n", "capabilities:\n"));
    for c in &r.capabilities {
        let mark = if c.present { "✔" } else { "✘" };
        s.push_str(&format!("  {mark} {:<22} {}\n", c.name, c.detail_in(ja)));
        if let Some(i) = c.install_in(ja) {
            s.push_str(&say(
                lang,
                format!("      インストール: {i}\n"),
                format!("      install: {i}\n"),
            ));
        }
    }
    s.push_str(&lab_table(&r.labs, lang));
    s
}

/// On EKS: what would silently keep labs from running, each with its fix, and the reads that
/// failed; nothing on other profiles.
fn findings(r: &DoctorReport, lang: Lang) -> String {
    let ja = lang == Lang::Ja;
    if r.profile != Some(Profile::Eks) {
        return String::new();
    }
    let mut s = if r.findings.is_empty() {
        say(
            lang,
            "EKS: EFA、ルートボリューム、デバイスプラグインに問題は見つかりませんでした\n\n",
            "EKS: no node without EFA, root volume too small or device plugin missing\n\n",
        )
    } else {
        say(
            lang,
            "EKS: lab を黙って止めてしまう問題:\n",
            "EKS: what would silently keep labs from running:\n",
        )
    };
    for f in &r.findings {
        s.push_str(&format!("  ✘ {}\n", f.message_in(ja)));
        s.push_str(&say(
            lang,
            format!("      対処: {}\n", f.fix_in(ja)),
            format!("      fix: {}\n", f.fix_in(ja)),
        ));
    }
    for u in &r.unread {
        s.push_str(&say(
            lang,
            format!("  注: 読めませんでした: {u}\n"),
            format!("  note: could not read {u}\n"),
        ));
    }
    if !r.findings.is_empty() {
        s.push('\n');
    }
    s
}

/// Which labs this cluster can run now: yes, partly (the checks that would be skipped and the
/// capability each needs; the install commands are in the capability list above), or no.
fn lab_table(labs: &[LabRow], lang: Lang) -> String {
    let ja = lang == Lang::Ja;
    let mut t = Table::new();
    let header = if ja {
        [
            "lab",
            "実行できるか",
            "スキップされるチェック（必要な機能）",
        ]
    } else {
        ["lab", "runs here", "checks that would be skipped (needs)"]
    };
    t.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    for l in labs {
        let runs = match (l.runs, ja) {
            (Runs::Yes, true) => "✔ はい",
            (Runs::Yes, false) => "✔ yes",
            (Runs::Partly, true) => "◐ 一部",
            (Runs::Partly, false) => "◐ partly",
            (Runs::No, true) => "✘ いいえ",
            (Runs::No, false) => "✘ no",
        };
        let skipped: Vec<String> = l
            .skipped
            .iter()
            .map(|c| format!("{} ({})", c.check, c.needs.join(", ")))
            .collect();
        t.add_row([
            format!("{:>2} {}", l.number, l.id),
            runs.to_string(),
            if skipped.is_empty() {
                "—".to_string()
            } else {
                skipped.join("\n")
            },
        ]);
    }
    say(
        lang,
        format!("\nこのクラスターで実行できる lab:\n{t}\n"),
        format!("\nlabs this cluster can run:\n{t}\n"),
    )
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
fn run_eks(g: &Global, a: &DoctorArgs, name: &str) -> Result<ExitCode, crate::Error> {
    let lang = g.lang();
    let catalog = g.catalog()?;
    let (eks, cluster) = runtime()?.block_on(async {
        let conn = connect_and_announce(&g.connect_opts()).await;
        let server = conn.as_ref().ok().map(|c| c.server.clone());
        let eks = crate::profile::eks::inspect(name, a.region.clone(), server.as_deref()).await?;
        let cluster = match conn {
            Ok(c) => inspect(&c, &catalog)
                .await
                .map_err(|e| (Some(c.describe()), e)),
            Err(e) => Err((None, e)),
        };
        Ok::<_, crate::Error>((eks, cluster))
    })?;
    // Each problem in Japanese and English; the error carries both.
    let mut problems: Vec<(String, String)> = Vec::new();
    if !eks.is_active() {
        let status = &eks.status;
        problems.push((
            format!("クラスター {name} は {status} です（ACTIVE ではありません）"),
            format!("cluster {name} is {status}, not ACTIVE"),
        ));
    }
    let region = eks.region.clone().unwrap_or_else(|| "<region>".into());
    let update = format!("aws eks update-kubeconfig --name {name} --region {region}");
    let (report, cluster_error) = match cluster {
        Ok(r) => {
            if eks.context_matches == Some(false) {
                let (context, server) = (&r.context, &r.server);
                let endpoint = eks.endpoint.as_deref().unwrap_or("?");
                problems.push((
                    format!("kube のコンテキスト {context} ({server}) はクラスター {name}（エンドポイント {endpoint}）を指していません。`{update}` を実行してください"),
                    format!("the kube context {context} ({server}) does not point at cluster {name} (endpoint {endpoint}); run `{update}`"),
                ));
            }
            (Some(r), None)
        }
        Err((_, e)) => {
            let why_ja = e.in_lang(Lang::Ja);
            problems.push((
                format!("kube 経由でクラスターを調べられません: {why_ja}。`{update}` でこのクラスターのコンテキストを書き込めます"),
                format!("cannot inspect the cluster through kube: {e}; `{update}` writes a context for it"),
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
            print(&render_eks(&out.eks, lang));
            if let Some(r) = &out.cluster {
                print(&format!("\n{}", render(r, lang)));
            }
        }
    }
    if problems.is_empty() {
        Ok(ExitCode::Ok)
    } else {
        let (ja, en): (Vec<String>, Vec<String>) = problems.into_iter().unzip();
        Err(crate::Error::environment(ja.join("\n"), en.join("\n")))
    }
}

fn render_eks(e: &EksReport, lang: Lang) -> String {
    let cluster = &e.cluster;
    let region = e.region.as_deref().unwrap_or("?");
    let status = &e.status;
    let version = e.version.as_deref().unwrap_or("?");
    let endpoint = e.endpoint.as_deref().unwrap_or("?");
    let mut s = say(
        lang,
        format!("EKS クラスター {cluster} ({region}): {status}、Kubernetes {version}\nエンドポイント: {endpoint}\n"),
        format!("EKS cluster {cluster} ({region}): {status}, Kubernetes {version}\nendpoint: {endpoint}\n"),
    );
    let header = match lang {
        Lang::Ja => [
            "ノードグループ",
            "状態",
            "インスタンスタイプ",
            "希望ノード数",
            "GPU/ノード",
            "EFA/ノード",
            "Neuron/ノード",
        ],
        Lang::En => [
            "node group",
            "status",
            "instance types",
            "desired",
            "GPUs/node",
            "EFA/node",
            "Neuron/node",
        ],
    };
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(header);
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cli::setup::tests::english_runs;
    use crate::facts::capabilities::{self, Evidence, CAPABILITIES};
    use crate::facts::{NodeFacts, Profile};
    use crate::observe::ResourceKind;
    use crate::profile::doctor::{CapabilityRow, NodeRow};
    use crate::profile::eks::NodegroupRow;

    fn node_facts() -> Vec<NodeFacts> {
        vec![NodeFacts {
            name: "trainlab-worker".into(),
            zone: Some("us-west-2a".into()),
            instance_type: Some("p5.48xlarge".into()),
            provider_id: Some("kind://docker/trainlab/trainlab-worker".into()),
            allocatable: BTreeMap::from([("nvidia.com/gpu".to_string(), 8)]),
            capacity: BTreeMap::from([("nvidia.com/gpu".to_string(), 8)]),
            allocatable_exact: BTreeMap::new(),
            created: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            unschedulable: false,
        }]
    }

    /// A report with every kind of line doctor prints: a node that lost its faked capacity, one
    /// still syncing, capabilities present and missing (CRDs served or not, controllers up or
    /// not, devices on some nodes or none).
    fn report(profile: Option<Profile>) -> DoctorReport {
        let nodes = node_facts();
        let served = |k: &ResourceKind| Ok(!k.plural.contains("nodesets"));
        let deploy = |d: &str| Ok(!d.starts_with("volcano-con") && d != "karpenter");
        let ev = Evidence {
            served: &served,
            deployment_available: &deploy,
            nodes: &nodes,
            profile,
        };
        let row = |name: &str, missing: Vec<String>, pending: Vec<String>| NodeRow {
            name: name.into(),
            zone: Some("us-west-2a".into()),
            instance_type: Some("p5.48xlarge".into()),
            gpu: 8,
            efa: 32,
            neuron: 0,
            neuroncore: 0,
            missing_fake_capacity: missing,
            allocatable_pending: pending,
        };
        let capabilities: Vec<CapabilityRow> = CAPABILITIES
            .iter()
            .map(|c| CapabilityRow::new(&capabilities::detect(c, &ev)))
            .collect();
        DoctorReport {
            schema_version: 1,
            context: "kind-trainlab".into(),
            server: "https://127.0.0.1:6443".into(),
            server_version: "v1.33.1".into(),
            profile,
            nodes: vec![
                row("trainlab-worker", Vec::new(), Vec::new()),
                row(
                    "trainlab-worker2",
                    vec!["nvidia.com/gpu: 8".into()],
                    Vec::new(),
                ),
                row(
                    "trainlab-worker3",
                    Vec::new(),
                    vec!["vpc.amazonaws.com/efa: 32".into()],
                ),
            ],
            labs: crate::profile::doctor::lab_rows(
                &crate::catalog::Catalog::embedded().unwrap(),
                &capabilities,
            ),
            capabilities,
            findings: Vec::new(),
            unread: Vec::new(),
        }
    }

    fn eks_report() -> EksReport {
        EksReport {
            cluster: "train".into(),
            region: Some("us-west-2".into()),
            status: "ACTIVE".into(),
            version: Some("1.33".into()),
            endpoint: Some("https://ABC.gr7.us-west-2.eks.amazonaws.com".into()),
            context_matches: Some(true),
            nodegroups: vec![NodegroupRow {
                name: "p5".into(),
                status: "ACTIVE".into(),
                instance_types: vec!["p5.48xlarge".into()],
                desired_size: Some(2),
                gpus: Some(8),
                efa: Some(32),
                neuron: None,
            }],
        }
    }

    #[test]
    fn doctor_in_japanese_has_no_english_sentence() {
        for profile in [Some(Profile::Kind), Some(Profile::Eks), None] {
            let r = report(profile);
            assert!(r.capabilities.iter().any(|c| !c.present));
            let ja = render(&r, Lang::Ja);
            let runs = english_runs(&ja);
            assert!(
                runs.is_empty(),
                "English in doctor ({profile:?}): {runs:?}\n{ja}"
            );
            assert!(
                ja.contains("trainlab-worker2") && ja.contains("nvidia.com/gpu: 8"),
                "{ja}"
            );
            assert!(
                ja.contains("`trainlab setup kind`") || profile == Some(Profile::Eks),
                "{ja}"
            );
        }
        let ja = render_eks(&eks_report(), Lang::Ja);
        let runs = english_runs(&ja);
        assert!(
            runs.is_empty(),
            "English in doctor --cluster: {runs:?}\n{ja}"
        );
        assert!(
            ja.contains("EKS クラスター train (us-west-2): ACTIVE"),
            "{ja}"
        );
    }

    #[test]
    fn doctor_in_english_is_unchanged() {
        let en = render(&report(Some(Profile::Kind)), Lang::En);
        for l in [
            "cluster: kind-trainlab (https://127.0.0.1:6443), Kubernetes v1.33.1\nprofile: kind\n\n",
            "│ node             ┆ zone       ┆ instance type ┆ nvidia.com/gpu ┆",
            "warning: kind node trainlab-worker2 lost its faked capacity (nvidia.com/gpu: 8); `trainlab setup kind` repairs it\n",
            "note: kind node trainlab-worker3 has its faked capacity (vpc.amazonaws.com/efa: 32) but the kubelet has not copied it into allocatable yet; run doctor again in a few seconds\n",
            "capabilities:\n",
            "  ✘ volcano                CRD jobs.batch.volcano.sh served; controller volcano-scheduler available; controller volcano-controllers not available\n      install: `trainlab setup kind`\n",
            "  ✔ nvidia-device-plugin   nvidia.com/gpu faked on 1 node(s)\n",
        ] {
            assert!(en.contains(l), "{l:?} missing from\n{en}");
        }
        let unknown = render(&report(None), Lang::En);
        assert!(
            unknown.contains("profile: unknown (no kind:// or aws:// providerID)\n"),
            "{unknown}"
        );
        assert!(!english_runs(&en).is_empty(), "the check sees English");
        // The lab table: volcano is missing in the fixture (a controller is down), so the
        // Volcano lab runs partly or not, naming its checks and what they need.
        assert!(en.contains("labs this cluster can run:\n"), "{en}");
        let volcano_line = en
            .lines()
            .find(|l| l.contains(" 9 volcano-gang"))
            .unwrap_or_else(|| panic!("no lab 9 row in\n{en}"));
        assert!(
            volcano_line.contains("◐ partly") || volcano_line.contains("✘ no"),
            "{volcano_line}"
        );
        assert!(volcano_line.contains("(volcano)"), "{volcano_line}");
        assert!(
            en.lines()
                .any(|l| l.contains(" 1 tensor-parallelism") && l.contains("✔ yes")),
            "{en}"
        );
        let eks = render_eks(&eks_report(), Lang::En);
        assert!(
            eks.starts_with("EKS cluster train (us-west-2): ACTIVE, Kubernetes 1.33\nendpoint: https://ABC.gr7.us-west-2.eks.amazonaws.com\n"),
            "{eks}"
        );
        assert!(eks.contains("│ node group ┆ status ┆ instance types ┆ desired ┆ GPUs/node ┆ EFA/node ┆ Neuron/node │"), "{eks}");
    }
    /// Findings of every kind and cause `doctor` can say on EKS.
    fn eks_findings_of_every_kind() -> Vec<crate::profile::doctor::Finding> {
        use crate::observe::{Obj, Origin};
        use crate::profile::doctor::{eks_findings, EksState};
        use crate::profile::eks_components as components;
        use serde_json::json;
        let obj = |v: serde_json::Value| Obj::new(v, Origin::Live).unwrap();
        let node = |name: &str, itype: &str, taints: serde_json::Value, res: serde_json::Value| {
            let mut status = res;
            status["ephemeral-storage"] = json!("20Gi");
            obj(json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": itype}},
                "spec": {"taints": taints},
                "status": {"capacity": status, "allocatable": status},
            }))
        };
        let tainted = node(
            "p5-a",
            "p5.48xlarge",
            json!([{"key": "team", "value": "ml", "effect": "NoSchedule"}]),
            json!({}),
        );
        let trn = node("trn-a", "trn1.32xlarge", json!([]), json!({}));
        let mut picky = components::efa_device_plugin(&[])[0].clone();
        picky["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            ["matchExpressions"][0]["values"] = json!(["p4d.24xlarge"]);
        let tolerant = components::efa_device_plugin(&[json!({"operator": "Exists"})])[0].clone();
        let class = obj(
            json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"}, "spec": {}}),
        );
        let auto = obj(
            json!({"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass", "metadata": {"name": "default"}, "spec": {}}),
        );
        let mut auto_node = node("auto-a", "p5.48xlarge", json!([]), json!({}));
        auto_node.value_mut()["metadata"]["labels"]["eks.amazonaws.com/compute-type"] =
            json!("auto");
        let nodes = [tainted, trn, auto_node];
        let mut out = Vec::new();
        for daemon_sets in [vec![obj(picky)], vec![obj(tolerant)], vec![]] {
            out.extend(eks_findings(&EksState {
                nodes: &nodes,
                daemon_sets: Ok(&daemon_sets),
                node_pools: &[],
                ec2_node_classes: std::slice::from_ref(&class),
                eks_node_classes: std::slice::from_ref(&auto),
            }));
        }
        out.extend(eks_findings(&EksState {
            nodes: &nodes,
            daemon_sets: Err("forbidden"),
            node_pools: &[],
            ec2_node_classes: &[],
            eks_node_classes: &[],
        }));
        out
    }

    #[test]
    fn eks_findings_are_said_in_either_language_with_their_fix() {
        let mut r = report(Some(Profile::Eks));
        r.findings = eks_findings_of_every_kind();
        r.unread = vec!["daemonsets.apps: forbidden".into()];
        let problems: std::collections::BTreeSet<String> = r
            .findings
            .iter()
            .map(|f| format!("{:?}", f.problem))
            .collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        let en = render(&r, Lang::En);
        assert!(
            en.contains("EKS: what would silently keep labs from running:\n"),
            "{en}"
        );
        for f in &r.findings {
            assert!(
                en.contains(&format!("  ✘ {}\n      fix: {}\n", f.message, f.fix)),
                "{f:?}\n{en}"
            );
        }
        assert!(
            en.contains("  note: could not read daemonsets.apps: forbidden\n"),
            "{en}"
        );
        let ja = render(&r, Lang::Ja);
        for f in &r.findings {
            assert!(
                ja.contains(&format!("  ✘ {}\n      対処: {}\n", f.message_ja, f.fix_ja)),
                "{f:?}\n{ja}"
            );
        }
        let runs = english_runs(&ja);
        assert!(
            runs.is_empty(),
            "English in doctor's EKS findings: {runs:?}\n{ja}"
        );
        // Both languages in the JSON too.
        let v = serde_json::to_value(&r).unwrap();
        let first = &v["findings"][0];
        assert_eq!(
            first["problem"],
            format!("{:?}", r.findings[0].problem)
                .replace("NoEfa", "no-efa")
                .replace("SmallRootVolume", "small-root-volume")
                .replace("DevicePluginMissing", "device-plugin-missing")
        );
        assert_eq!(first["message_ja"], r.findings[0].message_ja);
        assert_eq!(first["fix"], r.findings[0].fix);
        // Nothing found on EKS says so; other profiles say nothing.
        r.findings.clear();
        r.unread.clear();
        assert!(render(&r, Lang::En).contains(
            "EKS: no node without EFA, root volume too small or device plugin missing\n"
        ));
        let kind = render(&report(Some(Profile::Kind)), Lang::En);
        assert!(!kind.contains("EKS:"), "{kind}");
    }
}
