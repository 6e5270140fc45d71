//! Writes: create, replace, patch, server-side apply, delete (with cascades), `dryRun=All`.

use serde_json::{json, Value};

use super::filter::Filter;
use super::ids::{new_uid, now_rfc3339, random_suffix};
use super::meta::{meta_str, metadata_mut};
use super::ownership::{owners_after_apply, owners_after_update, set_owners, Owner};
use super::patch::{apply_json_patch, apply_merge, merge_patch};
use super::reads::{list_document, list_item, present};
use super::reply::{Outcome, Reply};
use super::request::Request;
use super::resources::Resource;
use super::routing::Target;
use super::schema::{typed_patch_error, undeclared_in_object};
use super::status::{
    already_exists, bad_request, conflict, failure, invalid, namespace_is_terminating,
    namespace_not_found, not_found,
};
use super::store::{Inner, Key};

/// A request body: JSON, or YAML (apply bodies may be either). It must be one object.
fn parse_body(body: &[u8]) -> Result<Value, Reply> {
    let value = serde_json::from_slice::<Value>(body).or_else(|_| {
        let text = std::str::from_utf8(body).map_err(|_| ())?;
        serde_saphyr::from_str::<Value>(text).map_err(|_| ())
    });
    match value {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(bad_request(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        )),
    }
}

/// The body must be of the kind and group the URL names.
fn check_type(r: &Resource, obj: &Value) -> Result<(), Reply> {
    let (Some(api_version), Some(kind)) = (obj["apiVersion"].as_str(), obj["kind"].as_str()) else {
        let missing = if obj["kind"].is_string() {
            "apiVersion"
        } else {
            "Kind"
        };
        return Err(bad_request(format!(
            "Object '{missing}' is missing in '{obj}'"
        )));
    };
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    if group != r.group {
        return Err(bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            r.api_version()
        )));
    }
    if kind != r.kind {
        return Err(bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            r.kind
        )));
    }
    Ok(())
}

/// The body's namespace, if any, must be the one in the path.
fn check_namespace(t: &Target, obj: &Value) -> Result<(), Reply> {
    match meta_str(obj, "namespace") {
        Some(ns) if t.resource.namespaced && ns != t.namespace() => Err(bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}

/// The body's name must be the one in the URL (PUT, PATCH, apply).
fn check_name(t: &Target, obj: &Value) -> Result<(), Reply> {
    let name = meta_str(obj, "name").unwrap_or("");
    if name != t.name() {
        return Err(bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            t.name()
        )));
    }
    Ok(())
}

fn missing_name(r: &Resource) -> Reply {
    invalid(
        &r.qualified_kind(),
        &r.group,
        "",
        "metadata.name",
        "FieldValueRequired",
        "Required value: name or generateName is required",
    )
}

/// DNS-1123 subdomain (most kinds) or label (namespaces, services) names.
fn check_name_format(r: &Resource, name: &str) -> Result<(), Reply> {
    let label_only = r.builtin && matches!(r.kind.as_str(), "Namespace" | "Service");
    let valid_part = |part: &str| {
        !part.is_empty()
            && part.len() <= 63
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !part.starts_with('-')
            && !part.ends_with('-')
    };
    let ok = if label_only {
        valid_part(name)
    } else {
        name.len() <= 253 && name.split('.').all(valid_part)
    };
    if ok {
        return Ok(());
    }
    let rule = if label_only {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
    } else {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
    };
    let message = format!("Invalid value: \"{name}\": {rule}");
    Err(invalid(
        &r.qualified_kind(),
        &r.group,
        name,
        "metadata.name",
        "FieldValueInvalid",
        &message,
    ))
}

/// What the server sets on a new object: identity, timestamps, generation, defaults.
fn prepare_new(t: &Target, obj: &mut Value) {
    let r = &t.resource;
    obj["apiVersion"] = json!(r.api_version());
    let has_spec = obj.get("spec").is_some();
    let meta = metadata_mut(obj);
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "managedFields",
    ] {
        meta.remove(field);
    }
    if r.namespaced {
        meta.insert("namespace".into(), json!(t.namespace()));
    } else {
        meta.remove("namespace");
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
    if has_spec {
        meta.insert("generation".into(), json!(1));
    }
    if r.builtin && r.kind == "Namespace" {
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
    }
}

/// The status subresource changes only status; the main resource never changes a status that
/// has its own subresource (as kube-apiserver's status strategies do).
fn scope_to_subresource(t: &Target, existing: &Value, mut candidate: Value) -> Value {
    if t.is_status() {
        let mut out = existing.clone();
        match candidate.get("status") {
            Some(status) => out["status"] = status.clone(),
            None => {
                out.as_object_mut().map(|o| o.remove("status"));
            }
        }
        return out;
    }
    if t.resource.status {
        match existing.get("status") {
            Some(status) => candidate["status"] = status.clone(),
            None => {
                candidate.as_object_mut().map(|o| o.remove("status"));
            }
        }
    }
    candidate
}

/// Keeps what clients cannot change on update: identity and timestamps.
fn keep_identity(existing: &Value, candidate: &mut Value) {
    let meta = metadata_mut(candidate);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "generation",
        "resourceVersion",
    ] {
        match existing["metadata"].get(field) {
            Some(value) => meta.insert(field.into(), value.clone()),
            None => meta.remove(field),
        };
    }
}

impl Inner {
    pub(super) fn create(&mut self, req: &Request, t: &Target) -> Outcome {
        let r = &t.resource;
        let mut obj = parse_body(&req.body)?;
        check_type(r, &obj)?;
        check_namespace(t, &obj)?;
        self.check_strict(req, r, &obj)?;
        let name = match (meta_str(&obj, "name"), meta_str(&obj, "generateName")) {
            (Some(name), _) => name.to_string(),
            (None, Some(prefix)) => format!("{prefix}{}", random_suffix()),
            (None, None) => return Err(missing_name(r)),
        };
        metadata_mut(&mut obj).insert("name".into(), json!(name));
        let owners = owners_after_update(req, t, None, &obj);
        self.create_object(req, t, &name, obj, owners)
    }

    /// The shared end of POST and of an apply that creates: `owners` own the new object.
    fn create_object(
        &mut self,
        req: &Request,
        t: &Target,
        name: &str,
        mut obj: Value,
        owners: Vec<Owner>,
    ) -> Outcome {
        let r = &t.resource;
        check_name_format(r, name)?;
        if r.namespaced && !self.namespace_exists(t.namespace()) {
            return Err(namespace_not_found(t.namespace()));
        }
        if r.namespaced && self.namespace_terminating(t.namespace()) {
            return Err(namespace_is_terminating(r, name, t.namespace()));
        }
        let key = t.key(name);
        if self.store.contains_key(&key) {
            return Err(already_exists(r, name));
        }
        prepare_new(t, &mut obj);
        set_owners(&mut obj, owners);
        self.check_enums(r, &obj)?;
        if req.dry_run() {
            return Ok(Reply::Json(201, present(r, &obj)));
        }
        let stored = self.put(key, obj, "ADDED");
        Ok(Reply::Json(201, present(r, &stored)))
    }

    fn existing(&self, t: &Target) -> Result<Value, Reply> {
        self.store
            .get(&t.key(t.name()))
            .cloned()
            .ok_or_else(|| not_found(&t.resource, t.name()))
    }

    /// A resourceVersion the client sent is a precondition: it must be the stored one.
    fn check_precondition(t: &Target, existing: &Value, candidate: &Value) -> Result<(), Reply> {
        match meta_str(candidate, "resourceVersion") {
            Some(rv) if Some(rv) != meta_str(existing, "resourceVersion") => {
                Err(conflict(&t.resource, t.name()))
            }
            _ => Ok(()),
        }
    }

    /// The shared end of PUT, PATCH and apply: store only a real change, so a no-op keeps the
    /// resourceVersion (as the real server does); spec changes bump metadata.generation.
    /// `owners`: the owners an apply computed; None for an update, whose manager takes the fields
    /// it changed.
    fn commit_update(
        &mut self,
        req: &Request,
        t: &Target,
        existing: Value,
        candidate: Value,
        owners: Option<Vec<Owner>>,
    ) -> Outcome {
        let r = &t.resource;
        let mut next = scope_to_subresource(t, &existing, candidate);
        keep_identity(&existing, &mut next);
        next["apiVersion"] = existing["apiVersion"].clone();
        next["kind"] = existing["kind"].clone();
        let owners = owners.unwrap_or_else(|| owners_after_update(req, t, Some(&existing), &next));
        set_owners(&mut next, owners);
        if next == existing {
            return Ok(Reply::Json(200, present(r, &existing)));
        }
        if next.get("spec") != existing.get("spec") {
            if let Some(generation) = existing["metadata"]["generation"].as_i64() {
                metadata_mut(&mut next).insert("generation".into(), json!(generation + 1));
            }
        }
        next["apiVersion"] = json!(r.api_version());
        self.check_enums(r, &next)?;
        if req.dry_run() {
            return Ok(Reply::Json(200, present(r, &next)));
        }
        let stored = self.put(t.key(t.name()), next, "MODIFIED");
        Ok(Reply::Json(200, present(r, &stored)))
    }

    pub(super) fn replace(&mut self, req: &Request, t: &Target) -> Outcome {
        let candidate = parse_body(&req.body)?;
        check_type(&t.resource, &candidate)?;
        check_name(t, &candidate)?;
        check_namespace(t, &candidate)?;
        self.check_strict(req, &t.resource, &candidate)?;
        let existing = self.existing(t)?;
        Self::check_precondition(t, &existing, &candidate)?;
        self.commit_update(req, t, existing, candidate, None)
    }

    pub(super) fn patch(&mut self, req: &Request, t: &Target) -> Outcome {
        let media_type = req.media_type();
        if media_type == "application/apply-patch+yaml" {
            return self.apply(req, t);
        }
        if req.query.get("force").is_some() {
            return Err(invalid_patch_options(
                "force",
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch",
            ));
        }
        let existing = self.existing(t)?;
        let mut doc = existing.clone();
        match media_type {
            "application/json-patch+json" => {
                let ops: Value = serde_json::from_slice(&req.body)
                    .map_err(|e| bad_request(format!("error decoding patch: {e}")))?;
                apply_json_patch(&mut doc, &ops)
                    .map_err(|e| failure(422, "Invalid", e, json!({})))?;
            }
            "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                let patch: Value = serde_json::from_slice(&req.body)
                    .map_err(|e| bad_request(format!("error decoding patch: {e}")))?;
                merge_patch(&mut doc, &patch);
            }
            other => {
                let message = format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})");
                return Err(failure(415, "UnsupportedMediaType", message, json!({})));
            }
        }
        Self::check_precondition(t, &existing, &doc)?;
        self.commit_update(req, t, existing, doc, None)
    }

    /// Server-side apply: create when absent, else merge the applied fields over the object.
    fn apply(&mut self, req: &Request, t: &Target) -> Outcome {
        if req.query.get("fieldManager").is_none_or(str::is_empty) {
            return Err(invalid_patch_options(
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch",
            ));
        }
        let r = &t.resource;
        let applied = parse_body(&req.body)?;
        check_type(r, &applied)?;
        if meta_str(&applied, "name").is_none() {
            return Err(missing_name(r));
        }
        check_name(t, &applied)?;
        check_namespace(t, &applied)?;
        if !applied["metadata"]["managedFields"].is_null() {
            return Err(bad_request("metadata.managedFields must be nil"));
        }
        if let Some(schema) = self.schema_of(r) {
            let undeclared = undeclared_in_object(&schema, &applied);
            if !undeclared.is_empty() {
                return Err(typed_patch_error(&applied, &undeclared));
            }
        }
        match self.store.get(&t.key(t.name())).cloned() {
            None if t.is_status() => Err(not_found(r, t.name())),
            None => {
                let empty = json!({});
                let (_, owners) = owners_after_apply(req, t, &empty, &applied, applied.clone())?;
                self.create_object(req, t, t.name(), applied, owners)
            }
            Some(existing) => {
                Self::check_precondition(t, &existing, &applied)?;
                let merged = apply_merge(&existing, &applied, t);
                let (merged, owners) = owners_after_apply(req, t, &existing, &applied, merged)?;
                self.commit_update(req, t, existing, merged, Some(owners))
            }
        }
    }

    pub(super) fn delete(&mut self, req: &Request, t: &Target) -> Outcome {
        let r = &t.resource;
        let existing = self.existing(t)?;
        let key = t.key(t.name());
        let graceful_namespace =
            r.builtin && r.kind == "Namespace" && self.namespace_grace.is_some();
        if graceful_namespace {
            return Ok(Reply::Json(
                200,
                self.start_terminating(req, t, key, existing),
            ));
        }
        if !req.dry_run() {
            for dependent in self.cascade(&key, &existing) {
                self.remove(&dependent);
            }
            self.remove(&key);
        }
        Ok(Reply::Json(200, deleted_answer(r, &existing)))
    }

    /// A namespace deleted while [`Emulator::terminate_namespaces_after`] is set: marked
    /// (deletionTimestamp, phase `Terminating`) and removed once its time is up. Deleting it again
    /// answers the terminating namespace and changes nothing.
    fn start_terminating(&mut self, req: &Request, t: &Target, key: Key, existing: Value) -> Value {
        if self.terminating.contains_key(&key) || req.dry_run() {
            return deleted_answer(&t.resource, &existing);
        }
        let mut marked = existing;
        metadata_mut(&mut marked).insert("deletionTimestamp".into(), json!(now_rfc3339()));
        marked["status"] = json!({"phase": "Terminating"});
        let grace = self.namespace_grace.unwrap_or_default();
        self.terminating
            .insert(key.clone(), std::time::Instant::now() + grace);
        let stored = self.put(key, marked, "MODIFIED");
        present(&t.resource, &stored)
    }

    /// Deleting a namespace deletes everything in it; deleting a CRD deletes its objects.
    pub(super) fn cascade(&self, key: &Key, obj: &Value) -> Vec<Key> {
        let in_namespace = |k: &Key| k.namespace == key.name;
        let crd_kind = (
            obj["spec"]["group"].as_str(),
            obj["spec"]["names"]["kind"].as_str(),
        );
        let of_crd = |k: &Key| crd_kind == (Some(k.group.as_str()), Some(k.kind.as_str()));
        let dependent: &dyn Fn(&Key) -> bool = match (key.group.as_str(), key.kind.as_str()) {
            ("", "Namespace") => &in_namespace,
            ("apiextensions.k8s.io", "CustomResourceDefinition") => &of_crd,
            _ => return Vec::new(),
        };
        self.store
            .keys()
            .filter(|k| dependent(k))
            .cloned()
            .collect()
    }

    /// DELETE on a collection (with selectors) answers with the list of what it deleted.
    pub(super) fn delete_collection(&mut self, req: &Request, t: &Target) -> Outcome {
        let filter = Filter::from_request(req, t)?;
        let selected = self.selected(&filter);
        if !req.dry_run() {
            for (key, _) in &selected {
                self.remove(key);
            }
        }
        let items = selected
            .iter()
            .map(|(_, o)| list_item(&t.resource, o))
            .collect();
        let metadata = json!({"resourceVersion": self.rv.to_string()});
        Ok(Reply::Json(
            200,
            list_document(&t.resource, items, metadata),
        ))
    }
}

/// 422 about PatchOptions, as kube-apiserver validates them before looking at the object.
fn invalid_patch_options(field: &str, cause: &str, message: &str) -> Reply {
    let full = format!("PatchOptions.meta.k8s.io \"\" is invalid: {field}: {message}");
    let details = json!({
        "group": "meta.k8s.io",
        "kind": "PatchOptions",
        "causes": [{"reason": cause, "message": message, "field": field}],
    });
    failure(422, "Invalid", full, details)
}

/// What DELETE answers: the object (pods, namespaces, services, … as upstream's
/// `ReturnDeletedObject`), marked as terminating where a real one would still be; else Status.
fn deleted_answer(r: &Resource, obj: &Value) -> Value {
    if !r.returns_deleted {
        let mut details = r.details(meta_str(obj, "name").unwrap_or(""));
        details["uid"] = obj["metadata"]["uid"].clone();
        return json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        });
    }
    let mut out = present(r, obj);
    if r.deletes_gracefully() {
        metadata_mut(&mut out).insert("deletionTimestamp".into(), json!(now_rfc3339()));
    }
    if r.builtin && r.kind == "Pod" {
        metadata_mut(&mut out).insert("deletionGracePeriodSeconds".into(), json!(30));
    }
    if r.builtin && r.kind == "Namespace" {
        out["status"] = json!({"phase": "Terminating"});
    }
    out
}
