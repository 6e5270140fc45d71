//! `Status` errors shaped exactly as kube-apiserver encodes them.

use serde_json::{json, Value};

use super::reply::Reply;
use super::resources::Resource;

/// A `Status` failure exactly as kube-apiserver encodes it.
pub(super) fn failure(
    code: u16,
    reason: &str,
    message: impl Into<String>,
    details: Value,
) -> Reply {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message.into(),
        "reason": reason,
        "details": details,
        "code": code,
    });
    if reason.is_empty() {
        status.as_object_mut().map(|s| s.remove("reason"));
    }
    Reply::Json(code, status)
}

pub(super) fn not_found(r: &Resource, name: &str) -> Reply {
    let message = format!("{} \"{name}\" not found", r.qualified());
    failure(404, "NotFound", message, r.details(name))
}

pub(super) fn namespace_not_found(namespace: &str) -> Reply {
    let message = format!("namespaces \"{namespace}\" not found");
    failure(
        404,
        "NotFound",
        message,
        json!({"name": namespace, "kind": "namespaces"}),
    )
}

/// NamespaceLifecycle admission refusing a create in a terminating namespace
/// (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go: a
/// Forbidden error, `<resource> "<name>" is forbidden: unable to create new content in namespace
/// <ns> because it is being terminated`, with a `NamespaceTerminating` cause).
pub(super) fn namespace_is_terminating(r: &Resource, name: &str, namespace: &str) -> Reply {
    let message = format!(
        "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
        r.qualified()
    );
    let mut details = r.details(name);
    details["causes"] = json!([{
        "reason": "NamespaceTerminating",
        "message": format!("namespace {namespace} is being terminated"),
        "field": "metadata.namespace",
    }]);
    failure(403, "Forbidden", message, details)
}

pub(super) fn already_exists(r: &Resource, name: &str) -> Reply {
    let message = format!("{} \"{name}\" already exists", r.qualified());
    failure(409, "AlreadyExists", message, r.details(name))
}

pub(super) fn conflict(r: &Resource, name: &str) -> Reply {
    let message = format!(
        "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
        r.qualified()
    );
    failure(409, "Conflict", message, r.details(name))
}

/// 422 Invalid for one field, e.g. `metadata.name: Required value: name or generateName is required`.
pub(super) fn invalid(
    kind: &str,
    group: &str,
    name: &str,
    field: &str,
    cause: &str,
    message: &str,
) -> Reply {
    let full = format!("{kind} \"{name}\" is invalid: {field}: {message}");
    let mut details = json!({
        "name": name,
        "kind": kind.split('.').next().unwrap_or(kind),
        "causes": [{"reason": cause, "message": message, "field": field}],
    });
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    if name.is_empty() {
        details.as_object_mut().map(|d| d.remove("name"));
    }
    failure(422, "Invalid", full, details)
}

pub(super) fn bad_request(message: impl Into<String>) -> Reply {
    failure(400, "BadRequest", message, json!({}))
}

pub(super) fn method_not_allowed() -> Reply {
    failure(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        json!({}),
    )
}

pub(super) fn path_not_found() -> Reply {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource",
        json!({}),
    )
}
