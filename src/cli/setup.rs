//! `trainlab setup kind` — create (or reuse) the kind cluster, fake accelerator capacity on its
//! nodes, install the pinned operators. Idempotent; every step only against `kind-<name>`.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use super::live::{parse_duration, runtime, LiveArgs};
use super::output::eprint;
use super::{print, Global};
use crate::cluster::{connect, gather, probe, Discovery};
use crate::exit::ExitCode;
use crate::observe::{kinds, parse_text, Query};
use crate::profile::charts::{self, Extra};
use crate::profile::kind::{self, apply_objects, capacity_patches, patch_capacity, KindConfig};
use crate::profile::pins::{default_pins, fetch, load_pins, Pin, Source};
use crate::profile::Profile;
use crate::verify::views::nodes::NodeFacts;
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
     into trainlab) and the Karpenter CRDs
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
    /// Pins to install instead of the built-in ones (YAML list of component, version, url, bytes, sha256 or embedded, deployments)
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    /// How long to wait for the operators' Deployments
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub wait_timeout: Duration,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(_g: &Global, a: &SetupArgs) -> Result<ExitCode, Error> {
    match &a.target {
        SetupTarget::Kind(k) => kind_setup(k),
    }
}

fn kind_setup(a: &KindArgs) -> Result<ExitCode, Error> {
    let context = format!("kind-{}", a.name);
    // Safety first, before any request: a fake-GPU patch must never reach a real cluster.
    if let Some(c) = &a.live.context {
        if c != &context {
            return Err(Error::Usage(format!(
                "setup kind only touches the context {context}; refusing --context {c}"
            )));
        }
    }
    let (config_text, config_name) = match &a.config {
        Some(p) => (
            std::fs::read_to_string(p)
                .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", p.display())))?,
            p.display().to_string(),
        ),
        None => (
            kind::EMBEDDED_CONFIG.to_string(),
            "kind-config.yaml (built in)".to_string(),
        ),
    };
    let config = KindConfig::parse(&config_text, &config_name)?;
    let pins = match &a.pins {
        Some(p) => load_pins(p)?,
        None => default_pins(),
    };
    if a.dry_run {
        let mut plan = dry_run_plan(a, &config, &config_name, &pins)?;
        // A dry run with --from proves the folder would do: every pinned file present with
        // its size and hash, every chart archive present; nothing is applied.
        if let Some(dir) = &a.from {
            if !dir.is_dir() {
                return Err(Error::Usage(format!(
                    "--from {}: not a folder (give the folder holding the pinned files)",
                    dir.display()
                )));
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
            let _ = writeln!(
                plan,
                "\n--from {}: {n} pinned file(s) found, sizes and sha256 match; {} chart archive(s) found",
                dir.display(),
                archives.len()
            );
        }
        print(&plan);
        return Ok(ExitCode::Ok);
    }
    if !a.with.is_empty() {
        helm_preflight()?;
        if let Some(dir) = &a.from {
            charts::archives_in(dir, &a.with)?;
        }
    }
    let steps = Steps::new();
    // Every pinned file is read (or downloaded), size- and hash-checked and parsed before the
    // first write: a mismatch, a missing `--from` file or a broken document installs nothing,
    // so no operator is ever left half-installed.
    let rt = runtime()?;
    let pb = steps.start(&format!(
        "manifests: verifying {} pinned file(s)",
        pins.len()
    ));
    let mut manifests = Vec::with_capacity(pins.len());
    for pin in &pins {
        let data = rt.block_on(fetch(pin, a.from.as_deref()))?;
        let text = String::from_utf8(data)
            .map_err(|_| Error::Environment(format!("{} is not UTF-8", pin.location())))?;
        manifests.push((pin, parse_text(&text, pin.file_name())?));
    }
    steps.done(
        pb,
        "manifests verified (size and sha256; built-in ones need none)",
    );
    if !a.skip_create {
        steps.run("preflight: docker and kind", preflight)?;
        steps.run(&format!("cluster {}", a.name), || {
            create_cluster(a, &config_text)
        })?;
    }
    let mut opts = a.live.opts();
    opts.context = Some(context.clone());
    rt.block_on(async {
        let conn = connect(&opts).await?;
        eprint(&format!("trainlab: using {}\n", conn.describe()));
        probe(&conn).await?;
        let discovery = Discovery::new();
        let nodes_q = Query::cluster(&kinds::NODES);
        let obs = gather(&conn, &discovery, std::slice::from_ref(&nodes_q)).await?;
        let node_objs = obs.list(&nodes_q).map_err(|u| Error::Environment(format!("cannot list nodes: {u}")))?;
        if Profile::detect(&node_objs) != Some(Profile::Kind) {
            return Err(Error::Environment(format!(
                "{context} does not look like a kind cluster (no kind:// providerID on its nodes); refusing to fake capacity"
            )));
        }
        let facts = NodeFacts::all(&node_objs)?;
        let patches = capacity_patches(&facts);
        let mut summary = String::new();
        let pb = steps.start(&format!("fake accelerators: {} node(s) to patch", patches.len()));
        for p in &patches {
            patch_capacity(&conn, p).await?;
            let set: Vec<String> = p.set.iter().map(|(r, n)| format!("{r}={n}")).collect();
            let _ = writeln!(summary, "  patched {}: {}", p.node, set.join(", "));
        }
        steps.done(pb, "fake accelerators");
        if patches.is_empty() {
            let _ = writeln!(summary, "  node capacity already right on every node");
        }
        for (pin, objs) in manifests {
            let pb = steps.start(&format!("{} {}", pin.component, pin.version));
            let n = apply_objects(&conn, objs).await?;
            steps.done(pb, &format!("{} {}", pin.component, pin.version));
            let _ = writeln!(summary, "  applied {} {} ({n} documents, server-side)", pin.component, pin.version);
        }
        let waits: Vec<&String> = pins.iter().flat_map(|p| &p.deployments).collect();
        if !waits.is_empty() {
            let pb = steps.start("waiting for operator Deployments");
            let deadline = Instant::now() + a.wait_timeout;
            let mut pending: Vec<&String> = waits.clone();
            while !pending.is_empty() {
                let mut still = Vec::new();
                for d in pending {
                    let (ns, name) = d.split_once('/').unwrap_or(("default", d));
                    if !kind::deployment_available(&conn, ns, name).await {
                        still.push(d);
                    }
                }
                pending = still;
                if pending.is_empty() {
                    break;
                }
                if Instant::now() > deadline {
                    let names: Vec<&str> = pending.iter().map(|s| s.as_str()).collect();
                    return Err(Error::Environment(format!(
                        "not available after {}: {} (see `kubectl -n <ns> describe deployment <name>`; re-run setup to continue)",
                        humantime::format_duration(a.wait_timeout),
                        names.join(", ")
                    )));
                }
                if let Some(pb) = &pb {
                    pb.set_message(format!("waiting for {} Deployment(s)", pending.len()));
                }
                tokio::time::sleep(deadline.saturating_duration_since(Instant::now()).min(Duration::from_secs(3))).await;
            }
            steps.done(pb, "operator Deployments available");
        }
        let timeout = humantime::format_duration(a.wait_timeout).to_string();
        for extra in &a.with {
            for c in extra.charts() {
                let what = format!("{} {} (helm)", c.component, c.version);
                let pb = steps.start(&what);
                helm_install(c, &context, a.from.as_deref(), &timeout)?;
                steps.done(pb, &what);
                let _ = writeln!(summary, "  installed {} {} with helm (release {} in {})", c.component, c.version, c.release, c.namespace);
            }
        }
        print(&format!("\nkind profile ready on {}:\n{summary}next: trainlab doctor, then trainlab start 9\n", conn.describe()));
        Ok(ExitCode::Ok)
    })
}

/// `--with` needs helm; checked before anything is changed.
fn helm_preflight() -> Result<(), Error> {
    match Process::new("helm").args(["version", "--short"]).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(Error::Environment(format!(
            "`helm version` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
        Err(_) => Err(Error::Environment(format!(
            "--with needs helm, which is not on PATH; install it ({}) and re-run",
            charts::HELM_INSTALL
        ))),
    }
}

fn helm_install(
    c: &charts::Chart,
    context: &str,
    from: Option<&std::path::Path>,
    timeout: &str,
) -> Result<(), Error> {
    let args = c.helm_args(context, from, timeout);
    let out = Process::new("helm")
        .args(&args)
        .output()
        .map_err(|e| Error::Environment(format!("running helm: {e}")))?;
    if !out.status.success() {
        return Err(Error::Environment(format!(
            "`helm {}` failed: {}\n(re-run setup to continue; `helm -n {} status {}` shows the release)",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim(),
            c.namespace,
            c.release
        )));
    }
    Ok(())
}

fn preflight() -> Result<(), Error> {
    let docker = Process::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output();
    if !docker.map(|o| o.status.success()).unwrap_or(false) {
        return Err(Error::Environment(
            "docker is not reachable (`docker info` failed); install and start Docker: https://docs.docker.com/get-docker/".into(),
        ));
    }
    let kind = Process::new("kind").arg("version").output();
    if !kind.map(|o| o.status.success()).unwrap_or(false) {
        return Err(Error::Environment(
            "`kind` is not on PATH; install it: https://kind.sigs.k8s.io/docs/user/quick-start/#installation".into(),
        ));
    }
    Ok(())
}

fn create_cluster(a: &KindArgs, config_text: &str) -> Result<(), Error> {
    let out = Process::new("kind")
        .args(["get", "clusters"])
        .output()
        .map_err(|e| Error::Environment(format!("kind get clusters: {e}")))?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == a.name)
    {
        return Ok(()); // already there: reuse it
    }
    let dir = std::env::temp_dir().join(format!("trainlab-kind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::Environment(e.to_string()))?;
    let file = dir.join("kind-config.yaml");
    std::fs::write(&file, config_text).map_err(|e| Error::Environment(e.to_string()))?;
    let status = Process::new("kind")
        .args(["create", "cluster", "--name", &a.name, "--config"])
        .arg(&file)
        .status()
        .map_err(|e| Error::Environment(format!("kind create cluster: {e}")))?;
    let _ = std::fs::remove_dir_all(&dir);
    if !status.success() {
        return Err(Error::Environment(format!(
            "`kind create cluster --name {}` failed (see its output above)",
            a.name
        )));
    }
    Ok(())
}

/// The `--dry-run` text: pinned by a snapshot test, so it must be deterministic.
pub fn dry_run_plan(
    a: &KindArgs,
    config: &KindConfig,
    config_name: &str,
    pins: &[Pin],
) -> Result<String, Error> {
    let mut s = String::new();
    let name = config.name.clone().unwrap_or_else(|| a.name.clone());
    let _ = writeln!(s, "setup kind --dry-run: nothing will be changed\n");
    let create = if a.skip_create {
        "use the existing cluster"
    } else {
        "create unless it exists"
    };
    let _ = writeln!(s, "cluster: {} ({create}) from {config_name}", a.name);
    if name != a.name {
        let _ = writeln!(
            s,
            "  note: the config names the cluster `{name}`; --name {} wins",
            a.name
        );
    }
    let _ = writeln!(
        s,
        "context: kind-{} (every later step runs only against it)\n",
        a.name
    );
    let _ = writeln!(s, "fake accelerator capacity (node status, JSON patch):");
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
            "nothing (unknown instance type)".to_string()
        } else {
            caps.join(", ")
        };
        let _ = writeln!(s, "  {node:<18} {it:<14} {zone:<11} {caps}");
    }
    let source = match &a.from {
        Some(d) => format!("from {}", d.display()),
        None => "downloaded over HTTPS".to_string(),
    };
    let _ = writeln!(
        s,
        "\nmanifests, applied server-side in this order (upstream files {source}, size and sha256 verified):"
    );
    for p in pins {
        let _ = writeln!(s, "  {} {}", p.component, p.version);
        match &p.source {
            Source::Download { url, bytes, sha256 } => {
                let _ = writeln!(s, "    {url}\n    {bytes} bytes, sha256 {sha256}");
            }
            Source::Embedded(m) => {
                let _ = writeln!(
                    s,
                    "    built into trainlab: {} (no download, nothing to hash)\n    {}",
                    m.path, m.note
                );
                for c in m.containers()? {
                    let _ = writeln!(s, "    runs: {c}");
                }
            }
        }
        if !p.deployments.is_empty() {
            let _ = writeln!(s, "    waits for: {}", p.deployments.join(", "));
        }
    }
    if a.with.is_empty() {
        let _ = writeln!(
            s,
            "\noptional, not selected: --with slinky (labs 3 and 4) adds {}",
            Extra::Slinky
                .charts()
                .iter()
                .map(|c| format!("{} {}", c.release, c.version))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for extra in &a.with {
        let _ = writeln!(
            s,
            "\n--with {}: helm charts, installed in this order (helm must be on PATH):",
            extra.name()
        );
        for c in extra.charts() {
            let _ = writeln!(s, "  {} {}", c.component, c.version);
            let timeout = humantime::format_duration(a.wait_timeout).to_string();
            let args = c.helm_args(&format!("kind-{}", a.name), a.from.as_deref(), &timeout);
            let _ = writeln!(s, "    helm {}", args.join(" "));
        }
    }
    Ok(s)
}

/// Progress lines: a spinner per step on a terminal, plain lines otherwise.
struct Steps {
    tty: bool,
}

impl Steps {
    fn new() -> Steps {
        Steps {
            tty: std::io::stderr().is_terminal(),
        }
    }

    fn start(&self, msg: &str) -> Option<ProgressBar> {
        if !self.tty {
            eprint(&format!("… {msg}\n"));
            return None;
        }
        let pb = ProgressBar::new_spinner();
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_message(msg.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        Some(pb)
    }

    fn done(&self, pb: Option<ProgressBar>, msg: &str) {
        match pb {
            Some(pb) => pb.finish_with_message(format!("✔ {msg}")),
            None => eprint(&format!("✔ {msg}\n")),
        }
    }

    fn run(&self, msg: &str, f: impl FnOnce() -> Result<(), Error>) -> Result<(), Error> {
        let pb = self.start(msg);
        let r = f();
        match (&r, pb) {
            (Ok(()), pb) => self.done(pb, msg),
            (Err(_), Some(pb)) => pb.abandon_with_message(format!("✘ {msg}")),
            (Err(_), None) => {}
        }
        r
    }
}
