//! `setup kind` as an operation: verify every pinned manifest, create (or reuse) the kind
//! cluster, fake accelerator capacity on its nodes, install the pinned operators and wait for
//! them, and install the optional helm components. Idempotent; after the cluster exists, every
//! step runs only against `kind-<name>`. Progress is told to a [`StepProgress`]; `cli/` draws it.

use std::path::PathBuf;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use crate::cluster::{connect, gather, probe, ConnectOpts, Discovery};
use crate::facts::NodeFacts;
use crate::facts::Profile;
use crate::observe::{kinds, parse_text, Query};
use crate::plan::{Event, Listener};
use crate::profile::charts::{self, Extra};
use crate::profile::kind::{self, apply_objects, capacity_patches, patch_capacity};
use crate::profile::pins::{fetch, Pin};
use crate::text::say;
use crate::text::Lang;
use crate::Error;

/// A resolved `setup kind` (the config read and parsed, the pins loaded, the context checked).
pub struct KindSetup {
    /// The cluster's name: its context is `kind-<name>`.
    pub name: String,
    pub config_text: String,
    pub pins: Vec<Pin>,
    /// The folder holding the pinned files and chart archives (air-gapped rooms).
    pub from: Option<PathBuf>,
    pub with: Vec<Extra>,
    /// Use an existing cluster; do not call docker or kind.
    pub skip_create: bool,
    pub wait_timeout: Duration,
    /// How to reach the cluster; its context is always `kind-<name>`.
    pub connect: ConnectOpts,
    pub lang: Lang,
}

impl KindSetup {
    /// The only context setup touches.
    pub fn context(&self) -> String {
        format!("kind-{}", self.name)
    }
}

/// What a finished setup reports: the cluster and one line per thing it did.
pub struct Ready {
    pub on: String,
    pub summary: String,
}

/// What a command that changes the cluster tells its steps to: a listener of the run's one
/// event stream (`plan::Event`'s step events), as `check` and `grade` tell theirs.
pub type StepProgress = dyn Listener<()>;

/// The step events, said as verbs.
pub(crate) trait Steps {
    fn start(&mut self, what: &str);
    fn message(&mut self, text: &str);
    fn done(&mut self, what: &str);
    fn failed(&mut self, what: &str);
    fn note(&mut self, line: &str);
}

impl<L: Listener<()> + ?Sized> Steps for L {
    fn start(&mut self, what: &str) {
        self.on(Event::StepStarted(what));
    }
    fn message(&mut self, text: &str) {
        self.on(Event::StepNews(text));
    }
    fn done(&mut self, what: &str) {
        self.on(Event::StepDone(what));
    }
    fn failed(&mut self, what: &str) {
        self.on(Event::StepFailed(what));
    }
    fn note(&mut self, line: &str) {
        self.on(Event::Note(line));
    }
}

/// Runs one step: start, then done or failed.
fn run_step(
    progress: &mut StepProgress,
    what: &str,
    f: impl FnOnce() -> Result<(), Error>,
) -> Result<(), Error> {
    progress.start(what);
    let r = f();
    match &r {
        Ok(()) => progress.done(what),
        Err(_) => progress.failed(what),
    }
    r
}

/// Sets the kind profile up. Every pinned file is read (or downloaded), size- and hash-checked
/// and parsed before the first write: a mismatch, a missing `--from` file or a broken document
/// installs nothing, so no operator is ever left half-installed.
pub async fn kind_setup(req: &KindSetup, progress: &mut StepProgress) -> Result<Ready, Error> {
    let context = req.context();
    if !req.with.is_empty() {
        helm_preflight()?;
        if let Some(dir) = &req.from {
            charts::archives_in(dir, &req.with)?;
        }
    }
    progress.start(&verifying(req.pins.len(), req.lang));
    let manifests = read_pins(&req.pins, req.from.as_deref()).await?;
    progress.done(&verified(req.lang));
    if !req.skip_create {
        run_step(
            progress,
            &say(
                req.lang,
                "事前確認: docker と kind",
                "preflight: docker and kind",
            ),
            preflight,
        )?;
        run_step(
            progress,
            &say(
                req.lang,
                format!("クラスター {}", req.name),
                format!("cluster {}", req.name),
            ),
            || create_cluster(&req.name, &req.config_text),
        )?;
    }
    let conn = connect(&req.connect).await?;
    progress.note(&format!("trainlab: using {}", conn.describe()));
    probe(&conn).await?;
    let discovery = Discovery::new();
    let nodes_q = Query::cluster(&kinds::NODES);
    let obs = gather(&conn, &discovery, std::slice::from_ref(&nodes_q)).await?;
    let node_objs = obs.list(&nodes_q).map_err(|u| {
        Error::environment(
            format!("ノードの一覧を取得できません: {u}"),
            format!("cannot list nodes: {u}"),
        )
    })?;
    if Profile::detect(&node_objs) != Some(Profile::Kind) {
        return Err(Error::environment(
            format!("{context} は kind のクラスターには見えません（ノードに kind:// の providerID がありません）。容量の模擬はしません"),
            format!("{context} does not look like a kind cluster (no kind:// providerID on its nodes); refusing to fake capacity"),
        ));
    }
    let facts = NodeFacts::all(&node_objs)?;
    let patches = capacity_patches(&facts);
    let mut summary = String::new();
    progress.start(&say(
        req.lang,
        format!(
            "アクセラレーターの模擬: パッチするノード {} 台",
            patches.len()
        ),
        format!("fake accelerators: {} node(s) to patch", patches.len()),
    ));
    for p in &patches {
        patch_capacity(&conn, p).await?;
        let set: Vec<String> = p.set.iter().map(|(r, n)| format!("{r}={n}")).collect();
        let set = set.join(", ");
        summary.push_str(&say(
            req.lang,
            format!("  {} にパッチ: {set}\n", p.node),
            format!("  patched {}: {set}\n", p.node),
        ));
    }
    progress.done(&say(
        req.lang,
        "アクセラレーターの模擬",
        "fake accelerators",
    ));
    if patches.is_empty() {
        summary.push_str(&say(
            req.lang,
            "  どのノードの容量もすでに正しい状態です\n",
            "  node capacity already right on every node\n",
        ));
    }
    let waited = apply_pins(
        &conn,
        manifests,
        req.wait_timeout,
        req.lang,
        progress,
        &mut summary,
    )
    .await?;
    wait_rest(
        &conn,
        &req.pins,
        &waited,
        req.wait_timeout,
        req.lang,
        progress,
    )
    .await?;
    install_charts(
        &req.with,
        &context,
        req.from.as_deref(),
        req.wait_timeout,
        req.lang,
        progress,
        &mut summary,
    )?;
    Ok(Ready {
        on: conn.describe(),
        summary,
    })
}

/// `namespace/name, …` for messages.
fn list(deployments: &[&String]) -> String {
    let names: Vec<&str> = deployments.iter().map(|s| s.as_str()).collect();
    names.join(", ")
}

/// "manifests: verifying N pinned file(s)".
pub(crate) fn verifying(n: usize, lang: Lang) -> String {
    say(
        lang,
        format!("マニフェスト: 固定したファイル {n} 個を検証中"),
        format!("manifests: verifying {n} pinned file(s)"),
    )
}

/// "manifests verified".
pub(crate) fn verified(lang: Lang) -> String {
    say(
        lang,
        "マニフェストを検証しました（サイズと sha256。組み込みのものは検証不要）",
        "manifests verified (size and sha256; built-in ones need none)",
    )
}

/// Every pinned file read (or downloaded), size- and hash-checked and parsed, before anything is
/// written: a mismatch, a missing `--from` file or a broken document installs nothing.
pub(crate) async fn read_pins<'p>(
    pins: &'p [Pin],
    from: Option<&std::path::Path>,
) -> Result<Vec<(&'p Pin, Vec<crate::observe::Obj>)>, Error> {
    let mut manifests = Vec::with_capacity(pins.len());
    for pin in pins {
        let data = fetch(pin, from).await?;
        let text = String::from_utf8(data).map_err(|_| {
            Error::environment(
                format!("{} は UTF-8 ではありません", pin.location()),
                format!("{} is not UTF-8", pin.location()),
            )
        })?;
        manifests.push((pin, parse_text(&text, pin.file_name())?));
    }
    Ok(manifests)
}

/// Applies the pins in order, server-side. A pin that needs another's controller waits for it
/// first; returns the Deployments already waited for (the rest are waited for once everything
/// is applied, so the operators start side by side).
pub(crate) async fn apply_pins<'p>(
    conn: &crate::cluster::Conn,
    manifests: Vec<(&'p Pin, Vec<crate::observe::Obj>)>,
    wait_timeout: Duration,
    lang: Lang,
    progress: &mut StepProgress,
    summary: &mut String,
) -> Result<Vec<&'p String>, Error> {
    let mut waited: Vec<&String> = Vec::new();
    for (pin, objs) in manifests {
        let (c, v) = (&pin.component, &pin.version);
        let first: Vec<&String> = pin.after.iter().filter(|d| !waited.contains(d)).collect();
        if !first.is_empty() {
            let names = list(&first);
            let what = say(
                lang,
                format!("{c} {v} の前に Deployment を待機中: {names}"),
                format!("waiting for {names} before {c} {v}"),
            );
            progress.start(&what);
            let before = format!("{c} {v}");
            let r = wait_available(conn, &first, wait_timeout, lang, Some(&before), progress).await;
            if let Err(e) = r {
                progress.failed(&what);
                return Err(e);
            }
            progress.done(&say(
                lang,
                format!("{names} が利用可能になりました"),
                format!("{names} available"),
            ));
            summary.push_str(&say(
                lang,
                format!("  {c} {v} の前に {names} が利用可能になるのを待ちました\n"),
                format!("  waited for {names} before {c} {v}\n"),
            ));
            waited.extend(first);
        }
        progress.start(&format!("{c} {v}"));
        let n = apply_objects(conn, objs).await?;
        progress.done(&format!("{c} {v}"));
        summary.push_str(&say(
            lang,
            format!("  {c} {v} を適用（ドキュメント {n} 個、server-side）\n"),
            format!("  applied {c} {v} ({n} documents, server-side)\n"),
        ));
    }
    Ok(waited)
}

/// Waits for every pin's Deployments not waited for yet.
pub(crate) async fn wait_rest(
    conn: &crate::cluster::Conn,
    pins: &[Pin],
    waited: &[&String],
    wait_timeout: Duration,
    lang: Lang,
    progress: &mut StepProgress,
) -> Result<(), Error> {
    let waits: Vec<&String> = pins
        .iter()
        .flat_map(|p| &p.deployments)
        .filter(|d| !waited.contains(d))
        .collect();
    if waits.is_empty() {
        return Ok(());
    }
    let what = say(
        lang,
        "オペレーターの Deployment を待機中",
        "waiting for operator Deployments",
    );
    progress.start(&what);
    if let Err(e) = wait_available(conn, &waits, wait_timeout, lang, None, progress).await {
        progress.failed(&what);
        return Err(e);
    }
    progress.done(&say(
        lang,
        "オペレーターの Deployment が利用可能になりました",
        "operator Deployments available",
    ));
    Ok(())
}

/// Installs the `--with` extras' charts with helm, in order, into `context`.
pub(crate) fn install_charts(
    with: &[Extra],
    context: &str,
    from: Option<&std::path::Path>,
    wait_timeout: Duration,
    lang: Lang,
    progress: &mut StepProgress,
    summary: &mut String,
) -> Result<(), Error> {
    let timeout = humantime::format_duration(wait_timeout).to_string();
    for extra in with {
        for c in extra.charts() {
            let what = format!("{} {} (helm)", c.component, c.version);
            progress.start(&what);
            if let Err(e) = helm_install(c, context, from, &timeout) {
                progress.failed(&what);
                return Err(e);
            }
            progress.done(&what);
            summary.push_str(&say(
                lang,
                format!(
                    "  {} {} を helm でインストール（namespace {} のリリース {}）\n",
                    c.component, c.version, c.namespace, c.release
                ),
                format!(
                    "  installed {} {} with helm (release {} in {})\n",
                    c.component, c.version, c.release, c.namespace
                ),
            ));
        }
    }
    Ok(())
}

/// Waits up to `--wait-timeout` until every one of `deployments` (`namespace/name`) has an
/// available replica; `before` names the pin that needs them, for the error. (`setup eks` too.)
async fn wait_available(
    conn: &crate::cluster::Conn,
    deployments: &[&String],
    wait_timeout: Duration,
    lang: Lang,
    before: Option<&str>,
    progress: &mut StepProgress,
) -> Result<(), Error> {
    let deadline = Instant::now() + wait_timeout;
    let mut pending: Vec<&String> = deployments.to_vec();
    loop {
        let mut still = Vec::new();
        for d in pending {
            let (ns, name) = d.split_once('/').unwrap_or(("default", d));
            if !kind::deployment_available(conn, ns, name).await {
                still.push(d);
            }
        }
        pending = still;
        if pending.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            let (after, names) = (humantime::format_duration(wait_timeout), list(&pending));
            let (needed_ja, needed_en) = match before {
                Some(pin) => (
                    format!("（{pin} の適用に必要です）"),
                    format!(", needed before {pin}"),
                ),
                None => (String::new(), String::new()),
            };
            return Err(Error::environment(
                format!("{after} 待っても利用可能になりません: {names}{needed_ja}（`kubectl -n <ns> describe deployment <name>` で確認してください。setup を再実行すると続きから進めます）"),
                format!("not available after {after}: {names}{needed_en} (see `kubectl -n <ns> describe deployment <name>`; re-run setup to continue)"),
            ));
        }
        progress.message(&say(
            lang,
            format!("Deployment {} 個を待機中", pending.len()),
            format!("waiting for {} Deployment(s)", pending.len()),
        ));
        tokio::time::sleep(
            deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_secs(3)),
        )
        .await;
    }
}

/// `--with` needs helm; checked before anything is changed.
pub fn helm_preflight() -> Result<(), Error> {
    match Process::new("helm").args(["version", "--short"]).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr).trim().to_string();
            Err(Error::environment(
                format!("`helm version` が失敗しました: {why}"),
                format!("`helm version` failed: {why}"),
            ))
        }
        Err(_) => Err(Error::environment(
            format!(
                "--with には helm が必要ですが、PATH 上にありません。インストールして（{}）再実行してください",
                charts::HELM_INSTALL
            ),
            format!(
                "--with needs helm, which is not on PATH; install it ({}) and re-run",
                charts::HELM_INSTALL
            ),
        )),
    }
}

fn helm_install(
    c: &charts::Chart,
    context: &str,
    from: Option<&std::path::Path>,
    timeout: &str,
) -> Result<(), Error> {
    let args = c.helm_args(context, from, timeout);
    let out = Process::new("helm").args(&args).output().map_err(|e| {
        Error::environment(
            format!("helm を実行できません: {e}"),
            format!("running helm: {e}"),
        )
    })?;
    if !out.status.success() {
        let (cmd, why) = (args.join(" "), String::from_utf8_lossy(&out.stderr));
        let (why, ns, release) = (why.trim(), c.namespace, c.release);
        return Err(Error::environment(
            format!("`helm {cmd}` が失敗しました: {why}\n（setup を再実行すると続きから進めます。リリースの状態は `helm -n {ns} status {release}` で確認できます）"),
            format!("`helm {cmd}` failed: {why}\n(re-run setup to continue; `helm -n {ns} status {release}` shows the release)"),
        ));
    }
    Ok(())
}

fn preflight() -> Result<(), Error> {
    let docker = Process::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output();
    if !docker.map(|o| o.status.success()).unwrap_or(false) {
        return Err(Error::environment(
            "docker に接続できません（`docker info` が失敗しました）。Docker をインストールして起動してください: https://docs.docker.com/get-docker/",
            "docker is not reachable (`docker info` failed); install and start Docker: https://docs.docker.com/get-docker/",
        ));
    }
    let kind = Process::new("kind").arg("version").output();
    if !kind.map(|o| o.status.success()).unwrap_or(false) {
        return Err(Error::environment(
            "`kind` が PATH 上にありません。インストールしてください: https://kind.sigs.k8s.io/docs/user/quick-start/#installation",
            "`kind` is not on PATH; install it: https://kind.sigs.k8s.io/docs/user/quick-start/#installation",
        ));
    }
    Ok(())
}

fn create_cluster(name: &str, config_text: &str) -> Result<(), Error> {
    let out = Process::new("kind")
        .args(["get", "clusters"])
        .output()
        .map_err(|e| {
            Error::environment(
                format!("`kind get clusters` を実行できません: {e}"),
                format!("kind get clusters: {e}"),
            )
        })?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == name)
    {
        return Ok(()); // already there: reuse it
    }
    let dir = std::env::temp_dir().join(format!("trainlab-kind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::environment(e.to_string(), e.to_string()))?;
    let file = dir.join("kind-config.yaml");
    std::fs::write(&file, config_text)
        .map_err(|e| Error::environment(e.to_string(), e.to_string()))?;
    let status = Process::new("kind")
        .args(["create", "cluster", "--name", name, "--config"])
        .arg(&file)
        .status()
        .map_err(|e| {
            Error::environment(
                format!("`kind create cluster` を実行できません: {e}"),
                format!("kind create cluster: {e}"),
            )
        })?;
    let _ = std::fs::remove_dir_all(&dir);
    if !status.success() {
        return Err(Error::environment(
            format!(
                "`kind create cluster --name {}` が失敗しました（上の出力を確認してください）",
                name
            ),
            format!(
                "`kind create cluster --name {}` failed (see its output above)",
                name
            ),
        ));
    }
    Ok(())
}
