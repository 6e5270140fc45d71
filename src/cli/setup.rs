//! `trainlab setup kind` — create (or reuse) the kind cluster, fake accelerator capacity on its
//! nodes, install the pinned operators. Idempotent; every step only against `kind-<name>`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use super::live::{parse_duration, runtime, LiveArgs};
use super::output::eprint;
use super::{print, Global};
use crate::catalog::Lang;
use crate::exit::ExitCode;
use crate::ops::setup::{self, KindSetup, SetupProgress};
use crate::profile::charts::{self, Extra};
use crate::profile::kind::{self, KindConfig};
use crate::profile::pins::{default_pins, fetch, load_pins, Pin, Source};
use crate::text::say;
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
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(g: &Global, a: &SetupArgs) -> Result<ExitCode, Error> {
    match &a.target {
        SetupTarget::Kind(k) => kind_setup(k, g.lang()),
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

fn kind_setup(a: &KindArgs, lang: Lang) -> Result<ExitCode, Error> {
    let context = format!("kind-{}", a.name);
    // Safety first, before any request: a fake-GPU patch must never reach a real cluster.
    if let Some(c) = &a.live.context {
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
        print(&plan);
        return Ok(ExitCode::Ok);
    }
    let mut connect = a.live.opts();
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
    let ready = runtime()?.block_on(setup::kind_setup(&req, &mut Steps::new()))?;
    let (on, summary) = (ready.on, ready.summary);
    print(&say(
        lang,
        format!("\n{on} で kind プロファイルの準備ができました:\n{summary}次は trainlab doctor、続いて trainlab start 9 を実行してください\n"),
        format!("\nkind profile ready on {on}:\n{summary}next: trainlab doctor, then trainlab start 9\n"),
    ));
    Ok(ExitCode::Ok)
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

/// Progress lines: a spinner per step on a terminal, plain lines otherwise.
struct Steps {
    tty: bool,
    bar: Option<ProgressBar>,
}

impl Steps {
    fn new() -> Steps {
        Steps {
            tty: std::io::stderr().is_terminal(),
            bar: None,
        }
    }
}

impl SetupProgress for Steps {
    fn start(&mut self, msg: &str) {
        if !self.tty {
            eprint(&format!("… {msg}\n"));
            return;
        }
        let pb = ProgressBar::new_spinner();
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_message(msg.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        self.bar = Some(pb);
    }

    fn message(&mut self, text: &str) {
        if let Some(pb) = &self.bar {
            pb.set_message(text.to_string());
        }
    }

    fn done(&mut self, msg: &str) {
        match self.bar.take() {
            Some(pb) => pb.finish_with_message(format!("✔ {msg}")),
            None => eprint(&format!("✔ {msg}\n")),
        }
    }

    fn failed(&mut self, msg: &str) {
        if let Some(pb) = self.bar.take() {
            pb.abandon_with_message(format!("✘ {msg}"));
        }
    }

    fn note(&mut self, line: &str) {
        eprint(&format!("{line}\n"));
    }
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
