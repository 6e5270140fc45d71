//! Applying a lab's manifests with server-side apply (field manager `trainlab`, label
//! `trainlab.dev/lab=<id>`), validated as a whole before anything is written, and deleting what
//! carries that label.
//!
//! Field ownership: only `solve` forces (`force=true` takes every field the solution sets).
//! `start` applies without force, so a field the learner changed with another manager (`kubectl
//! edit`, `kubectl apply`) is a 409 from the API server, reported per field and manager, and
//! nothing is written.

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::Value;

use super::discovery::Discovery;
use super::retry::{api_error, credentials_error, is_credentials_error, with_retry};
use super::Conn;
use crate::observe::Obj;
use crate::text::Lang;
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
    /// Applying without force would change fields another field manager owns. When any object
    /// of a set has this, nothing of the set was written and only such objects are listed.
    Conflicts(Vec<FieldConflict>),
}

/// One field another manager owns, from a `FieldManagerConflict` cause of the API server's 409
/// (`NewConflictError` in k8s.io/apimachinery pkg/util/managedfields/internal/conflict.go: the
/// cause's `field` is the path, its message `conflict with <manager>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldConflict {
    /// `.data.queue`, `.metadata.labels.app`.
    pub field: String,
    /// As the server names it: `"kubectl-edit" using v1`, or `"kubectl"` for an applier.
    pub manager: String,
}

/// What a failed apply of one object was.
enum Refusal {
    Conflicts(Vec<FieldConflict>),
    Other(Error),
}

/// Labels an object and places it in the lab namespace. A Namespace manifest named like the
/// lab's default namespace is renamed to the target namespace.
pub fn label_and_place(obj: &Obj, lab_id: &str, namespace: &str) -> Value {
    let mut v = obj.value.as_ref().clone();
    let default_ns = crate::catalog::lab_namespace(lab_id);
    if obj.kind() == "Namespace" && obj.api_version() == "v1" && obj.name() == default_ns {
        v["metadata"]["name"] = Value::String(namespace.to_string());
    }
    if !v["metadata"]["labels"].is_object() {
        v["metadata"]["labels"] = Value::Object(Default::default());
    }
    v["metadata"]["labels"][LAB_LABEL] = Value::String(lab_id.to_string());
    v
}

/// Where an object's name is.
const NAME_PATH: &[&str] = &["metadata", "name"];

/// A field of a task object that a learner prefix changes: the object's own `metadata.name`,
/// or a field by which it names another task object that is renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// The object, by its index in the task's objects.
    pub object: usize,
    /// Mapping keys from the document's root (never through a list).
    pub path: &'static [&'static str],
    pub from: String,
    pub to: String,
}

/// The kind a reference field names.
enum Referent {
    /// Always this (group, kind).
    Kind(&'static str, &'static str),
    /// The `group` and `kind` fields beside the name (a typed reference).
    Beside,
}

/// A field by which an object (group, kind) names a cluster-scoped object. When both are task
/// objects, the reference follows the rename; a name of anything else (the starter's shared
/// EC2NodeClass `default`, Volcano's `default` queue) stays as written.
struct Reference {
    from: (&'static str, &'static str),
    path: &'static [&'static str],
    to: Referent,
}

const REFERENCES: &[Reference] = &[
    // "storageClassName is the name of the StorageClass required by the claim" (k8s.io/api
    // core/v1 PersistentVolumeClaimSpec.StorageClassName; PersistentVolumeSpec likewise).
    Reference {
        from: ("", "PersistentVolumeClaim"),
        path: &["spec", "storageClassName"],
        to: Referent::Kind("storage.k8s.io", "StorageClass"),
    },
    Reference {
        from: ("", "PersistentVolume"),
        path: &["spec", "storageClassName"],
        to: Referent::Kind("storage.k8s.io", "StorageClass"),
    },
    // `nodeClassRef` is `{group, kind, name}` (kubernetes-sigs/karpenter v1
    // `pkg/apis/v1/nodeclaim.go` NodeClassReference).
    Reference {
        from: ("karpenter.sh", "NodePool"),
        path: &["spec", "template", "spec", "nodeClassRef", "name"],
        to: Referent::Beside,
    },
    // A Volcano Job's and PodGroup's `spec.queue` name a Queue, which is cluster-scoped
    // (volcano.sh/apis batch/v1alpha1 JobSpec.Queue, scheduling/v1beta1 PodGroupSpec.Queue;
    // the scheduler's default queue is named "default").
    Reference {
        from: ("batch.volcano.sh", "Job"),
        path: &["spec", "queue"],
        to: Referent::Kind("scheduling.volcano.sh", "Queue"),
    },
    Reference {
        from: ("scheduling.volcano.sh", "PodGroup"),
        path: &["spec", "queue"],
        to: Referent::Kind("scheduling.volcano.sh", "Queue"),
    },
];

fn at<'v>(value: &'v Value, path: &[&str]) -> &'v Value {
    path.iter().fold(value, |v, k| &v[*k])
}

/// What a learner prefix (`alice-`) changes in a task's objects (`draft/` or `solution/`):
/// cluster-scoped objects are named `alice-<name>`, so learners sharing a cluster do not take
/// each other's NodePool, and fields naming one of them follow. `cluster_scoped[i]` is the
/// scope of `task[i]`. Namespaces are never renamed: the lab namespace is placed on its own.
pub fn learner_renames(task: &[Obj], cluster_scoped: &[bool], prefix: &str) -> Vec<Rename> {
    if prefix.is_empty() {
        return Vec::new();
    }
    let renamed: Vec<(usize, &str, &str, &str)> = task
        .iter()
        .enumerate()
        .filter(|(i, o)| cluster_scoped.get(*i) == Some(&true) && o.kind() != "Namespace")
        .map(|(i, o)| (i, group_of(o.api_version()), o.kind(), o.name()))
        .collect();
    let mut out = Vec::new();
    for (i, o) in task.iter().enumerate() {
        if let Some(&(_, _, _, name)) = renamed.iter().find(|r| r.0 == i) {
            out.push(Rename {
                object: i,
                path: NAME_PATH,
                from: name.to_string(),
                to: format!("{prefix}{name}"),
            });
        }
        let here = (group_of(o.api_version()), o.kind());
        for r in REFERENCES.iter().filter(|r| r.from == here) {
            let Some(name) = at(&o.value, r.path).as_str() else {
                continue;
            };
            let beside = |key: &str| {
                let (_, parent) = r.path.split_last().unwrap_or((&"", &[]));
                at(&o.value, parent)[key].as_str().map(str::to_string)
            };
            let (group, kind) = match r.to {
                Referent::Kind(g, k) => (Some(g.to_string()), k.to_string()),
                Referent::Beside => match beside("kind") {
                    Some(k) => (beside("group"), k),
                    None => continue,
                },
            };
            let names_a_renamed = renamed.iter().any(|&(_, g, k, n)| {
                n == name && k == kind && group.as_deref().is_none_or(|want| want == g)
            });
            if names_a_renamed {
                out.push(Rename {
                    object: i,
                    path: r.path,
                    from: name.to_string(),
                    to: format!("{prefix}{name}"),
                });
            }
        }
    }
    out
}

/// Sets the field a rename changes.
pub fn apply_rename(value: &mut Value, r: &Rename) {
    let mut v = value;
    for k in r.path {
        v = &mut v[*k];
    }
    *v = Value::String(r.to.clone());
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Resolves every object's kind and namespace: the starter's (shared: a cluster-scoped starter
/// object such as lab 15's EC2NodeClass `default` is the room's, never prefixed) and the task's,
/// whose cluster-scoped objects carry `name_prefix` (see [`learner_renames`]). A kind the
/// cluster does not serve stops everything before any write.
pub async fn prepare(
    conn: &Conn,
    discovery: &Discovery,
    starter: &[Obj],
    task: &[Obj],
    lab_id: &str,
    namespace: &str,
    name_prefix: &str,
) -> Result<Vec<Prepared>, Error> {
    let mut out = Vec::new();
    for o in starter.iter().chain(task) {
        let (resource, namespaced) = discovery
            .resolve_any(conn, o.api_version(), o.kind())
            .await
            .map_err(|why| {
                let (origin, name) = (&o.origin, o.display_name());
                let why_ja = crate::facts::unavailable::unavailable_text(&why, Lang::Ja);
                Error::environment(
                    format!("{origin}: {name}: {why_ja}"),
                    format!("{origin}: {name}: {why}"),
                )
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
    let scopes: Vec<bool> = out[starter.len()..].iter().map(|p| !p.namespaced).collect();
    for r in learner_renames(task, &scopes, name_prefix) {
        apply_rename(&mut out[starter.len() + r.object].value, &r);
    }
    // Namespaces first, then other cluster-scoped objects, then namespaced ones.
    out.sort_by_key(|p| (p.resource.kind != "Namespace", p.namespaced));
    Ok(out)
}

fn params(dry_run: bool, force: bool) -> PatchParams {
    let mut p = PatchParams::apply(FIELD_MANAGER);
    p.force = force;
    p.dry_run = dry_run;
    p
}

async fn apply_one(
    conn: &Conn,
    p: &Prepared,
    dry_run: bool,
    force: bool,
) -> Result<DynamicObject, Refusal> {
    let api = p.api(conn);
    let pp = params(dry_run, force);
    let patch = Patch::Apply(&p.value);
    with_retry(|| api.patch(p.name(), &pp, &patch))
        .await
        .map_err(|e| match field_conflicts(&e) {
            Some(c) => Refusal::Conflicts(c),
            None => Refusal::Other(rejected(conn, p, &e)),
        })
}

/// The fields of an apply conflict (a 409 whose causes are `FieldManagerConflict`), or None for
/// any other error, a resourceVersion conflict included.
fn field_conflicts(e: &kube::Error) -> Option<Vec<FieldConflict>> {
    let kube::Error::Api(status) = e else {
        return None;
    };
    if status.code != 409 {
        return None;
    }
    let found: Vec<FieldConflict> = status
        .details
        .as_ref()?
        .causes
        .iter()
        .filter(|c| c.reason == "FieldManagerConflict")
        .map(|c| FieldConflict {
            field: c.field.clone(),
            manager: c
                .message
                .strip_prefix("conflict with ")
                .unwrap_or(&c.message)
                .to_string(),
        })
        .collect();
    (!found.is_empty()).then_some(found)
}

/// A conflict during the real writes (someone edited between validation and apply): an error
/// that names the fields, since part of the set may already be written.
fn conflict_error(p: &Prepared, found: &[FieldConflict]) -> Error {
    let fields_ja: Vec<String> = found
        .iter()
        .map(|c| format!("{}（{} が管理）", c.field, c.manager))
        .collect();
    let fields: Vec<String> = found
        .iter()
        .map(|c| format!("{} (owned by {})", c.field, c.manager))
        .collect();
    let (origin, shown) = (&p.origin, p.display());
    Error::usage(
        format!(
            "{origin}: {shown}: 適用中にほかの誰かが変更しました: {}",
            fields_ja.join("、")
        ),
        format!(
            "{origin}: {shown}: changed by someone else while applying: {}",
            fields.join(", ")
        ),
    )
}

/// A namespace being deleted cannot take new objects (upstream's NamespaceLifecycle admission
/// refuses them): say so before writing anything, instead of failing half-way.
fn terminating(p: &Prepared) -> Error {
    let (shown, name) = (p.display(), p.name());
    Error::environment(
        format!("{shown} はまだ削除中です（`trainlab reset` か `kubectl delete` が終わっていません）。`kubectl get namespace {name}` で何も見つからなくなってから、もう一度実行してください"),
        format!("{shown} is still terminating (a `trainlab reset` or `kubectl delete` is not finished); wait until `kubectl get namespace {name}` finds nothing, then run this again"),
    )
}

fn rejected(conn: &Conn, p: &Prepared, e: &kube::Error) -> Error {
    if is_credentials_error(e) {
        return credentials_error(conn, e);
    }
    let (origin, shown) = (&p.origin, p.display());
    match api_error(e) {
        Some((403, msg)) => Error::environment(
            format!("{origin}: {shown}: 権限がありません: {msg}"),
            format!("{origin}: {shown}: forbidden: {msg}"),
        ),
        Some((code, msg)) if (400..500).contains(&code) => Error::usage(
            format!("{origin}: {shown}: API サーバーが拒否しました（{code}）: {msg}"),
            format!("{origin}: {shown}: the API server rejected it ({code}): {msg}"),
        ),
        _ => Error::environment(
            format!("{origin}: {shown}: {e}"),
            format!("{origin}: {shown}: {e}"),
        ),
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
///
/// `force` (only `solve`) takes fields other managers own. Without it, fields the learner changed
/// come back as [`Change::Conflicts`] for each object concerned, and nothing is written.
pub async fn apply_all(
    conn: &Conn,
    set: &[Prepared],
    force: bool,
) -> Result<Vec<(String, Change)>, Error> {
    let mut created_ns: Vec<&Prepared> = Vec::new();
    let mut foreign_ns: Vec<String> = Vec::new();
    let hard = |r: Refusal, p: &Prepared| match r {
        Refusal::Conflicts(c) => conflict_error(p, &c),
        Refusal::Other(e) => e,
    };
    for p in set.iter().filter(|p| p.resource.kind == "Namespace") {
        match current(conn, p).await? {
            None => {
                // A namespace that does not exist has no owners: nothing can conflict.
                apply_one(conn, p, true, force)
                    .await
                    .map_err(|r| hard(r, p))?;
                apply_one(conn, p, false, force)
                    .await
                    .map_err(|r| hard(r, p))?;
                created_ns.push(p);
            }
            Some(o) if o.metadata.deletion_timestamp.is_some() => {
                remove_created(conn, &created_ns).await;
                return Err(terminating(p));
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
    let is_created = |p: &Prepared| {
        created_ns
            .iter()
            .any(|n| n.name() == p.name() && n.resource.kind == p.resource.kind)
    };
    // Every object is validated, existing namespaces too (their labels may conflict), so all
    // conflicts of the set are reported at once.
    let mut conflicted = Vec::new();
    for p in set
        .iter()
        .filter(|p| !is_created(p) && !skip(p) && !foreign_ns.contains(&p.display()))
    {
        match apply_one(conn, p, true, force).await {
            Ok(_) => {}
            Err(Refusal::Conflicts(c)) => conflicted.push((p.display(), Change::Conflicts(c))),
            Err(Refusal::Other(e)) => {
                remove_created(conn, &created_ns).await;
                return Err(e);
            }
        }
    }
    if !conflicted.is_empty() {
        remove_created(conn, &created_ns).await;
        return Ok(conflicted);
    }
    let mut changes = Vec::new();
    for p in set {
        if is_created(p) {
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
        let after = apply_one(conn, p, false, force)
            .await
            .map_err(|r| hard(r, p))?
            .metadata
            .resource_version;
        let change = match before {
            None => Change::Created,
            Some(b) if Some(&b) == after.as_ref() => Change::Unchanged,
            Some(_) => Change::Configured,
        };
        changes.push((p.display(), change));
    }
    Ok(changes)
}

/// Removes the namespaces a rejected set created for its dry run, so it leaves nothing behind.
async fn remove_created(conn: &Conn, created: &[&Prepared]) {
    for ns in created {
        let _ = ns
            .api(conn)
            .delete(ns.name(), &DeleteParams::default())
            .await;
    }
}

fn api_in(conn: &Conn, resource: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(conn.client.clone(), ns, resource),
        None => Api::all_with(conn.client.clone(), resource),
    }
}

/// Names of the objects of one kind carrying the lab label: cluster-scoped ones (`namespace`
/// None), or the ones in one namespace. Read as metadata only (`PartialObjectMetadata`), so a
/// Secret's data never leaves the API server. Label-selected lists are small: one request.
pub async fn labelled(
    conn: &Conn,
    resource: &ApiResource,
    namespace: Option<&str>,
    lab_id: &str,
) -> Result<Vec<String>, Error> {
    let api = api_in(conn, resource, namespace);
    let lp = ListParams::default().labels(&format!("{LAB_LABEL}={lab_id}"));
    let list = with_retry(|| api.list_metadata(&lp)).await.map_err(|e| {
        if is_credentials_error(&e) {
            return credentials_error(conn, &e);
        }
        let why = api_error(&e).map_or_else(|| e.to_string(), |(code, m)| format!("{code}: {m}"));
        let plural = &resource.plural;
        Error::environment(
            format!("{LAB_LABEL}={lab_id} のラベルが付いた {plural} の一覧を取得できません: {why}"),
            format!("listing {plural} labelled {LAB_LABEL}={lab_id}: {why}"),
        )
    })?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect())
}

/// Deletes one object; one already gone is fine. Dependents go too (`propagationPolicy:
/// Background`, as `kubectl delete` does): a batch/v1 Job deleted with the API's default policy
/// would orphan its pods (`DefaultGarbageCollectionPolicy` in kubernetes
/// pkg/registry/batch/job/strategy.go returns OrphanDependents for batch/v1).
pub async fn delete(
    conn: &Conn,
    resource: &ApiResource,
    namespace: Option<&str>,
    name: &str,
) -> Result<(), Error> {
    let api = api_in(conn, resource, namespace);
    let dp = DeleteParams::background();
    match with_retry(|| api.delete(name, &dp)).await {
        Ok(_) => Ok(()),
        Err(e) if api_error(&e).is_some_and(|(c, _)| c == 404) => Ok(()),
        Err(e) if is_credentials_error(&e) => Err(credentials_error(conn, &e)),
        Err(e) => {
            let kind = &resource.kind;
            Err(Error::environment(
                format!("{kind}/{name} を削除できません: {e}"),
                format!("deleting {kind}/{name}: {e}"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::parse_text;

    fn objs(yaml: &str) -> Vec<Obj> {
        parse_text(yaml, "task.yaml").unwrap()
    }

    const TASK: &str = "\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fsx-lustre}
provisioner: fsx.csi.aws.com
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: training-data}
spec: {storageClassName: fsx-lustre}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch}
spec: {storageClassName: gp3}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu-training}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: own-class}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: mine}}}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: mine}
---
apiVersion: v1
kind: Namespace
metadata: {name: extra}
";

    #[test]
    fn cluster_scoped_task_objects_and_references_to_them_get_the_prefix() {
        let task = objs(TASK);
        // StorageClass, 2 PVCs, 2 NodePools, EC2NodeClass, Namespace.
        let scoped = [true, false, false, true, true, true, true];
        let got: Vec<(usize, String, String, String)> = learner_renames(&task, &scoped, "alice-")
            .into_iter()
            .map(|r| (r.object, r.path.join("."), r.from, r.to))
            .collect();
        let want = [
            (0, "metadata.name", "fsx-lustre", "alice-fsx-lustre"),
            // The claim follows its class; the one naming a class of the cluster does not.
            (1, "spec.storageClassName", "fsx-lustre", "alice-fsx-lustre"),
            // The NodePool naming the starter's shared `default` keeps that name.
            (3, "metadata.name", "gpu-training", "alice-gpu-training"),
            (4, "metadata.name", "own-class", "alice-own-class"),
            (
                4,
                "spec.template.spec.nodeClassRef.name",
                "mine",
                "alice-mine",
            ),
            (5, "metadata.name", "mine", "alice-mine"),
        ];
        let want: Vec<(usize, String, String, String)> = want
            .iter()
            .map(|(i, p, f, t)| (*i, p.to_string(), f.to_string(), t.to_string()))
            .collect();
        assert_eq!(got, want);

        let mut v = task[4].value.as_ref().clone();
        for r in learner_renames(&task, &scoped, "alice-")
            .iter()
            .filter(|r| r.object == 4)
        {
            apply_rename(&mut v, r);
        }
        assert_eq!(v["metadata"]["name"], "alice-own-class");
        assert_eq!(
            v["spec"]["template"]["spec"]["nodeClassRef"],
            serde_json::json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "alice-mine"})
        );
    }

    #[test]
    fn a_reference_to_another_kind_of_the_same_name_does_not_follow_and_no_prefix_changes_nothing()
    {
        let task = objs(
            "\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: pool}
spec: {template: {spec: {nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: c}}}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: c}
",
        );
        let renames = learner_renames(&task, &[true, true], "bob-");
        assert_eq!(
            renames
                .iter()
                .map(|r| (r.object, r.path.join(".")))
                .collect::<Vec<_>>(),
            [
                (0, "metadata.name".to_string()),
                (1, "metadata.name".to_string())
            ]
        );
        assert!(learner_renames(&task, &[true, true], "").is_empty());
    }
}
