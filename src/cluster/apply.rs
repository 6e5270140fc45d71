//! Applying a lab's manifests with server-side apply (field manager `trainlab`, label
//! `trainlab.dev/lab=<id>`), validated as a whole before anything is written, and deleting what
//! carries that label.

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::Value;

use super::discovery::Discovery;
use super::gather::list_all;
use super::retry::{api_error, credentials_error, is_credentials_error, with_retry};
use super::Conn;
use crate::observe::Obj;
use crate::Error;

pub const FIELD_MANAGER: &str = "trainlab";
pub const LAB_LABEL: &str = "trainlab.dev/lab";
/// A starter object marked `trainlab.dev/apply: create-only` is created when absent and never
/// touched when present: e.g. the EC2NodeClass `default` a real EKS cluster already has.
pub const APPLY_ANNOTATION: &str = "trainlab.dev/apply";

/// One manifest ready to apply: labelled, namespaced into the lab's namespace.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub origin: String,
    pub value: Value,
    pub namespaced: bool,
    pub resource: ApiResource,
}

impl Prepared {
    pub fn create_only(&self) -> bool {
        self.value["metadata"]["annotations"][APPLY_ANNOTATION].as_str() == Some("create-only")
    }
    pub fn name(&self) -> &str {
        self.value["metadata"]["name"].as_str().unwrap_or_default()
    }
    pub fn display(&self) -> String {
        format!("{}/{}", self.resource.kind, self.name())
    }
    fn api(&self, conn: &Conn) -> Api<DynamicObject> {
        match self.value["metadata"]["namespace"].as_str() {
            Some(ns) if self.namespaced => {
                Api::namespaced_with(conn.client.clone(), ns, &self.resource)
            }
            _ => Api::all_with(conn.client.clone(), &self.resource),
        }
    }
}

/// What applying one object did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Created,
    Configured,
    Unchanged,
    /// A create-only object that already existed: left exactly as it was.
    Kept,
    /// A namespace that already existed without this lab's label (the learner's own, given with
    /// `-n`): used as it is, never labelled, so `reset` never deletes it.
    Foreign,
}

/// Labels an object and places it in the lab namespace. A Namespace manifest named like the
/// lab's default namespace is renamed to the target namespace.
pub fn label_and_place(obj: &Obj, lab_id: &str, namespace: &str) -> Value {
    let mut v = obj.value.clone();
    let default_ns = format!("trainlab-{lab_id}");
    if obj.kind() == "Namespace" && obj.api_version() == "v1" && obj.name() == default_ns {
        v["metadata"]["name"] = Value::String(namespace.to_string());
    }
    if !v["metadata"]["labels"].is_object() {
        v["metadata"]["labels"] = Value::Object(Default::default());
    }
    v["metadata"]["labels"][LAB_LABEL] = Value::String(lab_id.to_string());
    v
}

/// Resolves every object's kind and namespace. A kind the cluster does not serve stops
/// everything before any write.
pub async fn prepare(
    conn: &Conn,
    discovery: &Discovery,
    objs: &[Obj],
    lab_id: &str,
    namespace: &str,
) -> Result<Vec<Prepared>, Error> {
    let mut out = Vec::new();
    for o in objs {
        let (resource, namespaced) = discovery
            .resolve_any(conn, o.api_version(), o.kind())
            .await
            .map_err(|why| {
                Error::Environment(format!("{}: {}: {why}", o.origin, o.display_name()))
            })?;
        let mut value = label_and_place(o, lab_id, namespace);
        if namespaced {
            value["metadata"]["namespace"] = Value::String(namespace.to_string());
        }
        out.push(Prepared {
            origin: o.origin.to_string(),
            value,
            namespaced,
            resource,
        });
    }
    // Namespaces first, then other cluster-scoped objects, then namespaced ones.
    out.sort_by_key(|p| (p.resource.kind != "Namespace", p.namespaced));
    Ok(out)
}

fn params(dry_run: bool) -> PatchParams {
    let mut p = PatchParams::apply(FIELD_MANAGER).force();
    p.dry_run = dry_run;
    p
}

async fn apply_one(conn: &Conn, p: &Prepared, dry_run: bool) -> Result<DynamicObject, Error> {
    let api = p.api(conn);
    let pp = params(dry_run);
    let patch = Patch::Apply(&p.value);
    with_retry(|| api.patch(p.name(), &pp, &patch))
        .await
        .map_err(|e| rejected(conn, p, &e))
}

fn rejected(conn: &Conn, p: &Prepared, e: &kube::Error) -> Error {
    if is_credentials_error(e) {
        return credentials_error(conn, e);
    }
    match api_error(e) {
        Some((403, msg)) => {
            Error::Environment(format!("{}: {}: forbidden: {msg}", p.origin, p.display()))
        }
        Some((code, msg)) if (400..500).contains(&code) => Error::Usage(format!(
            "{}: {}: the API server rejected it ({code}): {msg}",
            p.origin,
            p.display()
        )),
        _ => Error::Environment(format!("{}: {}: {e}", p.origin, p.display())),
    }
}

async fn current(conn: &Conn, p: &Prepared) -> Result<Option<DynamicObject>, Error> {
    let api = p.api(conn);
    with_retry(|| api.get_opt(p.name()))
        .await
        .map_err(|e| rejected(conn, p, &e))
}

async fn current_version(conn: &Conn, p: &Prepared) -> Result<Option<String>, Error> {
    Ok(current(conn, p)
        .await?
        .and_then(|o| o.metadata.resource_version))
}

/// Validates the whole set with a server-side dry run, then applies it. When the lab
/// namespace does not exist yet, namespaced objects cannot be dry-run; the namespace is then
/// created first and removed again if validation fails, so a rejected set leaves nothing behind.
pub async fn apply_all(conn: &Conn, set: &[Prepared]) -> Result<Vec<(String, Change)>, Error> {
    let mut created_ns: Vec<&Prepared> = Vec::new();
    let mut foreign_ns: Vec<String> = Vec::new();
    for p in set.iter().filter(|p| p.resource.kind == "Namespace") {
        match current(conn, p).await? {
            None => {
                apply_one(conn, p, true).await?;
                apply_one(conn, p, false).await?;
                created_ns.push(p);
            }
            Some(o) => {
                // Labelling an existing namespace would hand it, and everything in it, to `reset`.
                let has = o
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(LAB_LABEL))
                    .map(String::as_str);
                if has != p.value["metadata"]["labels"][LAB_LABEL].as_str() {
                    foreign_ns.push(p.display());
                }
            }
        }
    }
    let mut existing_create_only = Vec::new();
    for p in set.iter().filter(|p| p.create_only()) {
        if current_version(conn, p).await?.is_some() {
            existing_create_only.push(p.display());
        }
    }
    let skip = |p: &Prepared| existing_create_only.contains(&p.display());
    for p in set
        .iter()
        .filter(|p| p.resource.kind != "Namespace" && !skip(p))
    {
        if let Err(e) = apply_one(conn, p, true).await {
            for ns in &created_ns {
                let _ = ns
                    .api(conn)
                    .delete(ns.name(), &DeleteParams::default())
                    .await;
            }
            return Err(e);
        }
    }
    let mut changes = Vec::new();
    for p in set {
        if created_ns
            .iter()
            .any(|n| n.name() == p.name() && n.resource.kind == p.resource.kind)
        {
            changes.push((p.display(), Change::Created));
            continue;
        }
        if skip(p) {
            changes.push((p.display(), Change::Kept));
            continue;
        }
        if foreign_ns.contains(&p.display()) {
            changes.push((p.display(), Change::Foreign));
            continue;
        }
        let before = current_version(conn, p).await?;
        let after = apply_one(conn, p, false).await?.metadata.resource_version;
        let change = match before {
            None => Change::Created,
            Some(b) if Some(&b) == after.as_ref() => Change::Unchanged,
            Some(_) => Change::Configured,
        };
        changes.push((p.display(), change));
    }
    Ok(changes)
}

fn api_in(conn: &Conn, resource: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(conn.client.clone(), ns, resource),
        None => Api::all_with(conn.client.clone(), resource),
    }
}

/// Objects of one kind carrying the lab label: cluster-scoped ones (`namespace` None), or the
/// ones in one namespace.
pub async fn labelled(
    conn: &Conn,
    resource: &ApiResource,
    namespace: Option<&str>,
    lab_id: &str,
) -> Result<Vec<String>, Error> {
    let api = api_in(conn, resource, namespace);
    let lp = ListParams::default().labels(&format!("{LAB_LABEL}={lab_id}"));
    let items = list_all(&api, &lp).await.map_err(|e| {
        if is_credentials_error(&e) {
            return credentials_error(conn, &e);
        }
        Error::Environment(format!(
            "listing {} labelled {LAB_LABEL}={lab_id}: {e}",
            resource.plural
        ))
    })?;
    Ok(items.into_iter().filter_map(|o| o.metadata.name).collect())
}

pub async fn delete(
    conn: &Conn,
    resource: &ApiResource,
    namespace: Option<&str>,
    name: &str,
) -> Result<(), Error> {
    let api = api_in(conn, resource, namespace);
    let dp = DeleteParams::default();
    match with_retry(|| api.delete(name, &dp)).await {
        Ok(_) => Ok(()),
        Err(e) if api_error(&e).is_some_and(|(c, _)| c == 404) => Ok(()),
        Err(e) if is_credentials_error(&e) => Err(credentials_error(conn, &e)),
        Err(e) => Err(Error::Environment(format!(
            "deleting {}/{name}: {e}",
            resource.kind
        ))),
    }
}
