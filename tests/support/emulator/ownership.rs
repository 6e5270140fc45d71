//! Field ownership of server-side apply (`metadata.managedFields`) and its 409 conflicts.
//!
//! A simplified model of kube-apiserver's field manager (k8s.io/apimachinery
//! pkg/util/managedfields, sigs.k8s.io/structured-merge-diff), enough to test who owns what:
//! - a field is a path of object keys; maps are walked, and a scalar, a list or an empty map is a
//!   leaf (lists are atomic: real associative lists, `k:{"name":…}`, are not modelled);
//! - tracked: labels, annotations, ownerReferences and finalizers of metadata, and every other
//!   top-level field except `status` where the kind has a status subresource (the status
//!   subresource tracks only `status`), as upstream strips identity fields and resets status;
//! - an apply makes its manager own exactly the leaves it sent; a leaf owned by another manager
//!   whose value the apply would change is a conflict (409) unless `force=true`, which moves the
//!   leaf to the applier; equal values are shared. A leaf the applier owned before, no longer
//!   sends and nobody else owns is removed from the object;
//! - create, replace and non-apply patches are `Update` operations: the manager (the
//!   `fieldManager` parameter, else the User-Agent up to its first `/`, as upstream's
//!   `prefixFromUserAgent`) gains every leaf whose value it changed and every other manager loses
//!   it — updates never conflict;
//! - objects seeded without managedFields have no owners (upstream would attribute their fields
//!   to `before-first-apply` on the first apply; not modelled).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::ids::now_rfc3339;
use super::meta::metadata_mut;
use super::reply::Reply;
use super::request::Request;
use super::routing::Target;
use super::status::failure;

/// A field: object keys from the root, e.g. `["spec", "replicas"]`.
type FieldPath = Vec<String>;

/// One `metadata.managedFields` entry, decoded.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Owner {
    pub(super) manager: String,
    /// `Apply` or `Update`.
    pub(super) operation: String,
    pub(super) api_version: String,
    /// `status` for writes to the status subresource, else empty.
    pub(super) subresource: String,
    pub(super) time: String,
    pub(super) fields: BTreeSet<FieldPath>,
}

impl Owner {
    fn same_identity(&self, other: &Owner) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == "Apply" || self.api_version == other.api_version)
    }

    /// How conflict messages name a manager: upstream's `printManager` in
    /// staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go — the quoted
    /// name, the subresource, and for updates the apiVersion (the identifier has no time).
    fn printed(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == "Update" {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    fn encode(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": encode_fields(&self.fields),
        });
        if !self.subresource.is_empty() {
            entry["subresource"] = json!(self.subresource);
        }
        entry
    }
}

/// `.spec.replicas`, `.metadata.labels.app`: a path as structured-merge-diff prints it.
fn field_string(path: &FieldPath) -> String {
    path.iter().map(|k| format!(".{k}")).collect()
}

/// FieldsV1: `{"f:spec": {"f:replicas": {}}}`.
fn encode_fields(fields: &BTreeSet<FieldPath>) -> Value {
    let mut root = json!({});
    for path in fields {
        let mut at = &mut root;
        for key in path {
            at = at
                .as_object_mut()
                .expect("fieldsV1 nodes are objects")
                .entry(format!("f:{key}"))
                .or_insert_with(|| json!({}));
        }
    }
    root
}

/// FieldsV1 back to leaves. A node with no `f:` children is a leaf (`.`, `k:` and `v:` entries of
/// real servers count as the node itself).
fn decode_fields(node: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
    let children: Vec<(&str, &Value)> = node
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| k.strip_prefix("f:").map(|name| (name, v)))
                .collect()
        })
        .unwrap_or_default();
    if children.is_empty() {
        if !prefix.is_empty() {
            out.insert(prefix.clone());
        }
        return;
    }
    for (name, child) in children {
        prefix.push(name.to_string());
        decode_fields(child, prefix, out);
        prefix.pop();
    }
}

fn owners_of(obj: &Value) -> Vec<Owner> {
    let Some(entries) = obj["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            let mut fields = BTreeSet::new();
            decode_fields(&e["fieldsV1"], &mut Vec::new(), &mut fields);
            Owner {
                manager: text("manager"),
                operation: text("operation"),
                api_version: text("apiVersion"),
                subresource: text("subresource"),
                time: text("time"),
                fields,
            }
        })
        .collect()
}

/// Stores the owners that still own something (no entry at all when none do).
pub(super) fn set_owners(obj: &mut Value, owners: Vec<Owner>) {
    let entries: Vec<Value> = owners
        .iter()
        .filter(|o| !o.fields.is_empty())
        .map(Owner::encode)
        .collect();
    let meta = metadata_mut(obj);
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(entries));
    }
}

fn leaves_into(value: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
    match value.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, v) in map {
                prefix.push(k.clone());
                leaves_into(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// The leaves of `obj` that ownership tracks for a write to `t` (see the section notes).
fn tracked_leaves(obj: &Value, t: &Target) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    let Some(map) = obj.as_object() else {
        return out;
    };
    for (key, value) in map {
        let mut prefix = vec![key.clone()];
        match key.as_str() {
            "status" if t.is_status() => leaves_into(value, &mut prefix, &mut out),
            _ if t.is_status() => {}
            "apiVersion" | "kind" => {}
            "status" if t.resource.status => {}
            "metadata" => {
                for field in ["labels", "annotations", "ownerReferences", "finalizers"] {
                    if let Some(v) = value.get(field) {
                        prefix.push(field.to_string());
                        leaves_into(v, &mut prefix, &mut out);
                        prefix.pop();
                    }
                }
            }
            _ => leaves_into(value, &mut prefix, &mut out),
        }
    }
    out
}

fn value_at<'a>(obj: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    path.iter()
        .try_fold(obj, |at, key| at.as_object()?.get(key))
}

fn remove_at(obj: &mut Value, path: &FieldPath) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents
        .iter()
        .try_fold(obj, |at, key| at.as_object_mut()?.get_mut(key));
    if let Some(map) = parent.and_then(Value::as_object_mut) {
        map.remove(last);
    }
}

/// One path lies inside the other (or they are the same field).
fn overlaps(a: &FieldPath, b: &FieldPath) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The manager of an update: `fieldManager`, else the User-Agent's product name.
fn update_manager(req: &Request) -> String {
    if let Some(m) = req.query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    let agent = req
        .headers
        .iter()
        .find(|(n, _)| n == "user-agent")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    agent
        .split('/')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(128)
        .collect()
}

fn subresource_of(t: &Target) -> String {
    t.subresource.clone().unwrap_or_default()
}

/// Adds `fields` to the entry of `me` (created when new), restamping it only when it changed.
fn grant(owners: &mut Vec<Owner>, me: Owner) {
    match owners.iter_mut().find(|o| o.same_identity(&me)) {
        Some(entry) if entry.fields != me.fields || entry.api_version != me.api_version => {
            entry.fields = me.fields;
            entry.api_version = me.api_version;
            entry.time = now_rfc3339();
        }
        Some(_) => {}
        None if !me.fields.is_empty() => owners.push(me),
        None => {}
    }
}

/// Owners after an `Update` by `manager` that turned `before` into `after`.
pub(super) fn owners_after_update(
    req: &Request,
    t: &Target,
    before: Option<&Value>,
    after: &Value,
) -> Vec<Owner> {
    let empty = json!({});
    let before = before.unwrap_or(&empty);
    let mut owners = owners_of(before);
    let old = tracked_leaves(before, t);
    let new = tracked_leaves(after, t);
    let changed: BTreeSet<FieldPath> = old
        .union(&new)
        .filter(|p| value_at(before, p) != value_at(after, p))
        .cloned()
        .collect();
    if changed.is_empty() {
        return owners;
    }
    let me = Owner {
        manager: update_manager(req),
        operation: "Update".into(),
        api_version: t.resource.api_version(),
        subresource: subresource_of(t),
        time: now_rfc3339(),
        fields: BTreeSet::new(),
    };
    let mut mine = owners
        .iter()
        .find(|o| o.same_identity(&me))
        .map(|o| o.fields.clone())
        .unwrap_or_default();
    for owner in owners.iter_mut() {
        owner
            .fields
            .retain(|f| !changed.iter().any(|c| overlaps(f, c)));
    }
    mine.retain(|f| !changed.iter().any(|c| overlaps(f, c)));
    mine.extend(changed.into_iter().filter(|p| new.contains(p)));
    grant(&mut owners, Owner { fields: mine, ..me });
    owners
}

/// The merged object and its owners after an apply by `manager`, or the 409 upstream answers
/// (`NewConflictError` in pkg/util/managedfields/internal/conflict.go).
pub(super) fn owners_after_apply(
    req: &Request,
    t: &Target,
    existing: &Value,
    applied: &Value,
    mut merged: Value,
) -> Result<(Value, Vec<Owner>), Reply> {
    let me = Owner {
        manager: req.query.get("fieldManager").unwrap_or("").to_string(),
        operation: "Apply".into(),
        api_version: t.resource.api_version(),
        subresource: subresource_of(t),
        time: now_rfc3339(),
        fields: tracked_leaves(applied, t),
    };
    let mut owners = owners_of(existing);
    let before: BTreeSet<FieldPath> = owners
        .iter()
        .find(|o| o.same_identity(&me))
        .map(|o| o.fields.clone())
        .unwrap_or_default();
    // Leaves this manager stopped applying, owned by nobody else, go.
    for gone in before.difference(&me.fields) {
        let shared = owners
            .iter()
            .any(|o| !o.same_identity(&me) && o.fields.iter().any(|f| overlaps(f, gone)));
        if !shared && !me.fields.iter().any(|f| overlaps(f, gone)) {
            remove_at(&mut merged, gone);
        }
    }
    let mut conflicts: Vec<(String, FieldPath)> = Vec::new();
    for owner in owners.iter_mut().filter(|o| !o.same_identity(&me)) {
        let taken: Vec<FieldPath> = owner
            .fields
            .iter()
            .filter(|f| value_at(existing, f) != value_at(&merged, f))
            .cloned()
            .collect();
        for field in taken {
            conflicts.push((owner.printed(), field.clone()));
            owner.fields.remove(&field);
        }
    }
    if !conflicts.is_empty() && !req.query.flag("force") {
        return Err(apply_conflict(conflicts));
    }
    grant(&mut owners, me);
    Ok((merged, owners))
}

/// 409 Conflict as `NewConflictError`/`getConflictMessage` build it: one cause per field with
/// reason `FieldManagerConflict` (`StatusCause.Type` is `reason` on the wire), and a message that
/// names the field for one conflict or lists fields per manager (managers sorted) for several.
fn apply_conflict(mut conflicts: Vec<(String, FieldPath)>) -> Reply {
    conflicts.sort();
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(manager, field)| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {manager}"),
                "field": field_string(field),
            })
        })
        .collect();
    let message = if let [(manager, field)] = conflicts.as_slice() {
        format!(
            "Apply failed with 1 conflict: conflict with {manager}: {}",
            field_string(field)
        )
    } else {
        let mut lines = Vec::new();
        let mut last: Option<&str> = None;
        for (manager, field) in &conflicts {
            if last != Some(manager.as_str()) {
                lines.push(format!("conflicts with {manager}:"));
                last = Some(manager);
            }
            lines.push(format!("- {}", field_string(field)));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    failure(409, "Conflict", message, json!({"causes": causes}))
}
