//! Discovery answers kept on disk between commands, per API server, the way kubectl keeps them:
//! a repeated `check` resolves its kinds from the file and goes straight to the LISTs.
//!
//! kubectl caches discovery under `~/.kube/cache/discovery/<host_port>/` (`--cache-dir`, or
//! `$KUBECACHEDIR`) for six hours: k8s.io/cli-runtime `pkg/genericclioptions/config_flags.go`,
//! `ToDiscoveryClient`: `diskcached.NewCachedDiscoveryClientForConfig(config, discoveryCacheDir,
//! httpCacheDir, time.Duration(6*time.Hour))`, the folder named by `computeDiscoverCacheDir`
//! (the server URL without its scheme, other characters than `\w`, `/` and `.` made `_`); the
//! client is k8s.io/client-go `discovery/cached/disk` (`CachedDiscoveryClient`: a TTL per file,
//! and `Invalidate()` so that a kind not found is looked up again once). trainlab keeps its own
//! copy, in its own format, under its own cache folder — `$XDG_CACHE_HOME/trainlab` (the XDG
//! Base Directory Specification; `~/.cache/trainlab` when unset), `--cache-dir DIR` or
//! `TRAINLAB_CACHE_DIR` to move it, `--no-cache` or `TRAINLAB_NO_CACHE=1` to keep nothing:
//! `<cache>/discovery/<server>/resources.json`, one file per API server URL.
//!
//! The file is a convenience, never a source of errors: one that is missing, unreadable, corrupt,
//! of another format, for another server or older than [`TTL`] is ignored (and rewritten), and a
//! folder that cannot be written is simply not written. What the file says is trusted until it
//! is contradicted: a kind it does not list (a CRD installed since) or a LIST answered 404 (a
//! CRD removed since) makes the run ask the server again about that group/version, once
//! ([`super::Discovery`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How long a file is used after the server's answers in it were read: kubectl's six hours.
pub const TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// The format of [`Snapshot`] files; a file of another format is ignored.
const FORMAT: u32 = 1;

const FILE: &str = "resources.json";

/// (kind, plural, namespaced) of each resource one group/version serves.
pub(crate) type Served = Vec<(String, String, bool)>;

/// The default cache folder: `$XDG_CACHE_HOME/trainlab`, else `$HOME/.cache/trainlab`. The XDG
/// Base Directory Specification says a relative `$XDG_CACHE_HOME` is invalid and to be ignored.
pub fn default_cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    xdg.or_else(|| std::env::home_dir().map(|h| h.join(".cache")))
        .map(|base| base.join("trainlab"))
}

/// The folder name of a server: its URL without the scheme, every character other than ASCII
/// letters, digits, `.`, `-` and `_` made `_` (`https://127.0.0.1:6443` → `127.0.0.1_6443`), as
/// kubectl's `computeDiscoverCacheDir` does, except that `/` is replaced too (one folder per
/// server, never nested) and a leading `.` as well (never `..`).
pub fn server_folder(server: &str) -> String {
    let bare = server
        .strip_prefix("https://")
        .or_else(|| server.strip_prefix("http://"))
        .unwrap_or(server);
    let mut name: String = bare
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    name
}

/// The discovery root a group/version is listed under: `/api` for the core group (`v1`), `/apis`
/// for every other.
pub(crate) fn root_of(api_version: &str) -> &'static str {
    if api_version.contains('/') {
        "/apis"
    } else {
        "/api"
    }
}

/// What a file (or a run) knows about one server's discovery.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Snapshot {
    pub format: u32,
    /// The server URL, as the kubeconfig names it: a file found under another server's folder
    /// (two URLs that sanitize alike) is ignored.
    pub server: String,
    /// Seconds since the Unix epoch when the oldest answer in the file was read.
    pub fetched: u64,
    /// Per discovery root (`/api`, `/apis`): every group/version it listed, when it was read. A
    /// group/version of a listed root that is not in its set is not served.
    #[serde(default)]
    pub versions: BTreeMap<String, BTreeSet<String>>,
    /// What each group/version serves.
    #[serde(default)]
    pub resources: BTreeMap<String, Served>,
}

/// What a snapshot says about one group/version.
#[derive(Debug, PartialEq)]
pub(crate) enum Lookup {
    /// Served, with these resources.
    Known(Served),
    /// Listed by its root, resources not kept (a legacy server's group/version not asked yet).
    Listed,
    /// Its root was read and does not list it: not served.
    Absent,
    /// The snapshot cannot tell.
    Unknown,
}

impl Snapshot {
    pub fn new(server: &str, fetched: u64) -> Snapshot {
        Snapshot {
            format: FORMAT,
            server: server.to_string(),
            fetched,
            ..Snapshot::default()
        }
    }

    pub fn lookup(&self, api_version: &str) -> Lookup {
        if let Some(served) = self.resources.get(api_version) {
            return Lookup::Known(served.clone());
        }
        match self.versions.get(root_of(api_version)) {
            Some(listed) if listed.contains(api_version) => Lookup::Listed,
            Some(_) => Lookup::Absent,
            None => Lookup::Unknown,
        }
    }

    /// A root's complete answer: the group/versions it lists, and (aggregated discovery) what
    /// each serves. Resources kept for group/versions the root no longer lists are dropped; with
    /// `resources`, every group/version of the root is replaced.
    pub fn record_root(
        &mut self,
        root: &str,
        listed: BTreeSet<String>,
        resources: Option<BTreeMap<String, Served>>,
    ) {
        self.resources
            .retain(|gv, _| root_of(gv) != root || (resources.is_none() && listed.contains(gv)));
        if let Some(r) = resources {
            self.resources.extend(r);
        }
        self.versions.insert(root.to_string(), listed);
    }

    /// One group/version's answer (`None`: the server answered 404 for it).
    pub fn record_version(&mut self, api_version: &str, served: Option<Served>) {
        match served {
            Some(s) => {
                self.resources.insert(api_version.to_string(), s);
            }
            None => {
                self.resources.remove(api_version);
                if let Some(listed) = self.versions.get_mut(root_of(api_version)) {
                    listed.remove(api_version);
                }
            }
        }
    }

    /// `later` (what this run read from the server) over this snapshot (what the file said).
    /// The result is as old as the older of the two.
    pub fn overlaid(&self, later: &Snapshot) -> Snapshot {
        let mut out = self.clone();
        for (root, listed) in &later.versions {
            let fresh: BTreeMap<String, Served> = later
                .resources
                .iter()
                .filter(|(gv, _)| root_of(gv) == root)
                .map(|(gv, s)| (gv.clone(), s.clone()))
                .collect();
            // Kept resources of group/versions still listed only when the root was legacy (its
            // answer carried no resources, so `later` may not have asked every one of them).
            out.resources
                .retain(|gv, _| root_of(gv) != root || listed.contains(gv));
            out.resources.extend(fresh);
            out.versions.insert(root.clone(), listed.clone());
        }
        for (gv, s) in &later.resources {
            out.resources.insert(gv.clone(), s.clone());
        }
        out.fetched = self.fetched.min(later.fetched);
        out
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// One server's file.
#[derive(Debug, Clone)]
pub(crate) struct DiskCache {
    file: PathBuf,
    server: String,
    ttl: Duration,
}

impl DiskCache {
    /// The file for `server` under the cache folder `root`.
    pub fn new(root: &Path, server: &str) -> DiskCache {
        DiskCache {
            file: root
                .join("discovery")
                .join(server_folder(server))
                .join(FILE),
            server: server.to_string(),
            ttl: TTL,
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// The snapshot in the file, when it can be used at `now` (seconds since the epoch):
    /// readable, of this format and server, and read from the server less than [`TTL`] ago (a
    /// time in the future, beyond a minute of clock skew, is no good either).
    pub fn load(&self, now: u64) -> Option<Snapshot> {
        let text = std::fs::read(&self.file).ok()?;
        let snapshot: Snapshot = serde_json::from_slice(&text).ok()?;
        let fresh = now.saturating_sub(snapshot.fetched) < self.ttl.as_secs()
            && snapshot.fetched <= now + 60;
        (snapshot.format == FORMAT && snapshot.server == self.server && fresh).then_some(snapshot)
    }

    /// Writes `snapshot` in place of the file (a temporary file renamed over it, so a reader never
    /// sees half a file). Best effort: a folder that cannot be created or written is left alone.
    pub fn store(&self, snapshot: &Snapshot) {
        if let Err(e) = self.try_store(snapshot) {
            tracing::debug!(target: super::LOG_TARGET, "discovery cache {} not written: {e}", self.file.display());
        }
    }

    fn try_store(&self, snapshot: &Snapshot) -> std::io::Result<()> {
        let dir = self
            .file
            .parent()
            .ok_or_else(|| std::io::Error::other("no folder"))?;
        create_private_dir(dir)?;
        let text = serde_json::to_vec(snapshot).map_err(std::io::Error::other)?;
        let tmp = dir.join(format!(
            "{FILE}.{}.{}.tmp",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        ));
        let written = write_private(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &self.file));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// The cache holds names of what a cluster serves, nothing secret, but it is the user's: folders
/// 0700 and files 0600 on Unix.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(kind: &str, plural: &str) -> Served {
        vec![(kind.to_string(), plural.to_string(), true)]
    }

    #[test]
    fn a_server_gets_one_folder_of_safe_characters() {
        assert_eq!(server_folder("https://127.0.0.1:6443"), "127.0.0.1_6443");
        assert_eq!(
            server_folder("https://ABC.gr7.us-west-2.eks.amazonaws.com"),
            "ABC.gr7.us-west-2.eks.amazonaws.com"
        );
        assert_eq!(
            server_folder("http://proxy:8001/api/clusters/a b"),
            "proxy_8001_api_clusters_a_b"
        );
        assert_eq!(server_folder("https://../x"), "_.._x");
        assert_eq!(server_folder(""), "_");
    }

    #[test]
    fn lookups_say_what_the_snapshot_knows() {
        let mut s = Snapshot::new("https://k", 1);
        assert_eq!(s.lookup("v1"), Lookup::Unknown);
        s.record_root(
            "/apis",
            ["apps/v1".to_string(), "kubeflow.org/v2beta1".to_string()].into(),
            None,
        );
        assert_eq!(s.lookup("apps/v1"), Lookup::Listed);
        assert_eq!(s.lookup("karpenter.sh/v1"), Lookup::Absent);
        assert_eq!(s.lookup("v1"), Lookup::Unknown, "/api was not read");
        s.record_version("apps/v1", Some(served("Deployment", "deployments")));
        assert_eq!(
            s.lookup("apps/v1"),
            Lookup::Known(served("Deployment", "deployments"))
        );
        s.record_version("kubeflow.org/v2beta1", None);
        assert_eq!(s.lookup("kubeflow.org/v2beta1"), Lookup::Absent);
    }

    #[test]
    fn an_aggregated_root_replaces_everything_under_it() {
        let mut s = Snapshot::new("https://k", 1);
        s.record_version("karpenter.sh/v1", Some(served("NodePool", "nodepools")));
        s.record_version("v1", Some(served("Pod", "pods")));
        let listed: BTreeSet<String> = ["apps/v1".to_string()].into();
        let resources: BTreeMap<String, Served> =
            [("apps/v1".to_string(), served("Deployment", "deployments"))].into();
        s.record_root("/apis", listed, Some(resources));
        assert_eq!(s.lookup("karpenter.sh/v1"), Lookup::Absent);
        assert_eq!(s.lookup("v1"), Lookup::Known(served("Pod", "pods")));
    }

    #[test]
    fn what_a_run_learnt_overlays_the_file_and_keeps_the_older_time() {
        let mut file = Snapshot::new("https://k", 100);
        file.record_root(
            "/apis",
            ["apps/v1".to_string(), "karpenter.sh/v1".to_string()].into(),
            None,
        );
        file.record_version("apps/v1", Some(served("Deployment", "deployments")));
        file.record_version("karpenter.sh/v1", Some(served("NodePool", "nodepools")));
        let mut run = Snapshot::new("https://k", 200);
        run.record_version("v1", Some(served("Pod", "pods")));
        let both = file.overlaid(&run);
        assert_eq!(both.fetched, 100);
        assert_eq!(both.lookup("v1"), Lookup::Known(served("Pod", "pods")));
        assert!(matches!(both.lookup("apps/v1"), Lookup::Known(_)));

        // A legacy root read again: what it still lists is kept, the rest goes.
        let mut again = Snapshot::new("https://k", 300);
        again.record_root("/apis", ["apps/v1".to_string()].into(), None);
        let after = both.overlaid(&again);
        assert!(matches!(after.lookup("apps/v1"), Lookup::Known(_)));
        assert_eq!(after.lookup("karpenter.sh/v1"), Lookup::Absent);
    }

    #[test]
    fn the_file_is_used_while_fresh_and_ignored_when_corrupt_stale_or_foreign() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(dir.path(), "https://127.0.0.1:6443");
        let now = 1_000_000;
        assert!(cache.load(now).is_none(), "no file yet");
        let mut s = Snapshot::new("https://127.0.0.1:6443", now - 10);
        s.record_version("v1", Some(served("Pod", "pods")));
        cache.store(&s);
        assert_eq!(
            cache.file,
            dir.path().join("discovery/127.0.0.1_6443/resources.json")
        );
        assert_eq!(cache.load(now), Some(s.clone()));
        assert!(cache.load(now + TTL.as_secs()).is_none(), "six hours on");
        assert!(cache.load(now - 3600).is_none(), "from the future");

        let other = DiskCache::new(dir.path(), "https://127.0.0.1_6443");
        assert_eq!(other.file, cache.file, "the two URLs share a folder");
        assert!(other.load(now).is_none(), "but not their answers");

        for corrupt in [&b"{\"format\": 1, \"server\""[..], b"[]", b"\xff\xfe", b""] {
            std::fs::write(&cache.file, corrupt).unwrap();
            assert!(cache.load(now).is_none());
        }
        let mut old_format = s.clone();
        old_format.format = 0;
        cache.store(&old_format);
        assert!(cache.load(now).is_none());
        // The file is written over whatever was there.
        cache.store(&s);
        assert_eq!(cache.load(now), Some(s));
        let leftovers: Vec<_> = std::fs::read_dir(cache.file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [std::ffi::OsString::from("resources.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_that_cannot_be_written_is_skipped_without_an_error() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
        let cache = DiskCache::new(&locked, "https://k");
        cache.store(&Snapshot::new("https://k", 1));
        // Root ignores permissions; either way nothing failed and the folder is unchanged or
        // holds a usable file.
        let written = cache.load(1).is_some();
        let probe = std::fs::write(locked.join("probe"), b"x").is_ok();
        assert_eq!(
            written, probe,
            "written exactly when the folder is writable"
        );
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
