//! Schema validation of custom resources against their stored CRD's `openAPIV3Schema`.
//!
//! A custom resource whose kind comes from a stored CustomResourceDefinition is checked against
//! that CRD's `openAPIV3Schema`, as kube-apiserver v1.33 does, for the two things the labs need:
//! fields the schema does not declare, and enums. Nothing else of the schema is enforced (types,
//! patterns, `required`, CEL rules); a schema with `x-kubernetes-preserve-unknown-fields` at the
//! root (what most seeded CRDs have) checks nothing.
//!
//! - Server-side apply converts the applied object to a typed value before anything else, and a
//!   field the schema does not declare fails that conversion whatever `fieldValidation` says, as
//!   a plain error kube-apiserver answers with 500 and no reason: `failed to create typed patch
//!   object (<ns>/<name>; <group>/<version>, Kind=<Kind>): .spec.foo: field not declared in
//!   schema` (k8s.io/apimachinery v0.33.0 pkg/util/managedfields/internal/structuredmerge.go
//!   `Apply` and `objectGVKNN`; the path and the `errors:` list of several are
//!   structured-merge-diff v4.6.0 typed/helpers.go `ValidationErrors.Error`; the 500 is
//!   k8s.io/apiserver v0.33.0 pkg/endpoints/handlers/responsewriters/status.go
//!   `ErrorToAPIStatus`, kubernetes/kubernetes#139253).
//! - Create and update bodies with `fieldValidation=Strict` are refused with 400 BadRequest:
//!   `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error: unknown field
//!   "spec.foo"` (apiextensions-apiserver v0.33.0 pkg/apiserver/customresource_handler.go
//!   `schemaCoercingDecoder.Decode`; k8s.io/apimachinery pkg/runtime/error.go
//!   `strictDecodingError`; k8s.io/apiserver pkg/endpoints/handlers/rest.go
//!   `transformDecodeError`). Without Strict the real server prunes such fields; the emulator
//!   keeps them.
//! - A value outside an `enum` is 422 Invalid: `<Kind>.<group> "<name>" is invalid: <field>:
//!   Unsupported value: "X": supported values: "a", "b"`, several as `[…, …]`, one cause each
//!   (apiextensions-apiserver pkg/apiserver/validation/validation.go
//!   `kubeOpenAPIResultToFieldErrors`; k8s.io/apimachinery pkg/util/validation/field/errors.go
//!   `NotSupported` and `ErrorBody`, pkg/api/errors/errors.go `NewInvalid`; field paths as
//!   kube-openapi's validators build them: `spec.a[0].b`). Real servers report such errors in
//!   map order; the emulator reports them in document order (keys sorted).

use serde_json::{json, Map, Value};

use super::meta::meta_str;
use super::reply::Reply;
use super::request::Request;
use super::resources::Resource;
use super::status::{bad_request, failure};
use super::store::Inner;

/// The keys of an object schema's value that the schema does not declare, as server-side apply's
/// typed conversion names them (`.spec.foo`, `.spec.tasks[0].bar`).
fn undeclared_fields(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let preserve = schema["x-kubernetes-preserve-unknown-fields"] == json!(true);
    match value {
        Value::Object(fields) => {
            for (key, v) in fields {
                let here = format!("{path}.{key}");
                match (
                    schema["properties"].get(key),
                    &schema["additionalProperties"],
                ) {
                    (Some(s), _) => undeclared_fields(s, v, &here, out),
                    (None, extra @ Value::Object(_)) => undeclared_fields(extra, v, &here, out),
                    (None, Value::Bool(true)) => {}
                    _ if preserve => {}
                    _ => out.push(here),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    undeclared_fields(s, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// The undeclared fields of a whole object: apiVersion, kind and metadata are the API's.
pub(super) fn undeclared_in_object(schema: &Value, obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Value::Object(fields) = obj {
        for (key, v) in fields {
            if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let mut one = Map::new();
            one.insert(key.clone(), v.clone());
            undeclared_fields(schema, &Value::Object(one), "", &mut out);
        }
    }
    out
}

/// `(field, ErrorBody)` of every value outside its schema's `enum`.
fn enum_violations(schema: &Value, value: &Value, path: &str, out: &mut Vec<(String, String)>) {
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            out.push((path.to_string(), unsupported_value(value, allowed)));
        }
    }
    match value {
        Value::Object(fields) => {
            for (key, v) in fields {
                let here = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match (
                    schema["properties"].get(key),
                    &schema["additionalProperties"],
                ) {
                    (Some(s), _) => enum_violations(s, v, &here, out),
                    (None, extra @ Value::Object(_)) => enum_violations(extra, v, &here, out),
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    enum_violations(s, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// `field.NotSupported(...).ErrorBody()`: `Unsupported value: "X": supported values: "a", "b"`
/// (a string value `%q`-quoted, a number or bool as is; each allowed value quoted, non-strings
/// as their JSON first).
fn unsupported_value(value: &Value, allowed: &[Value]) -> String {
    let quote = |s: &str| Value::String(s.to_string()).to_string();
    let shown = match value {
        Value::String(s) => quote(s),
        other => other.to_string(),
    };
    let supported: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => quote(s),
            other => quote(&other.to_string()),
        })
        .collect();
    format!(
        "Unsupported value: {shown}: supported values: {}",
        supported.join(", ")
    )
}

/// 500 without a reason, as kube-apiserver answers a failed typed conversion of an apply patch.
pub(super) fn typed_patch_error(applied: &Value, undeclared: &[String]) -> Reply {
    let api_version = applied["apiVersion"].as_str().unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = applied["kind"].as_str().unwrap_or("");
    let namespace = meta_str(applied, "namespace").unwrap_or("");
    let name = meta_str(applied, "name").unwrap_or("");
    let errors = match undeclared {
        [one] => format!("{one}: field not declared in schema"),
        many => {
            let lines: Vec<String> = many
                .iter()
                .map(|p| format!("  {p}: field not declared in schema"))
                .collect();
            format!("errors:\n{}", lines.join("\n"))
        }
    };
    let message = format!(
        "failed to create typed patch object ({namespace}/{name}; {group}/{version}, Kind={kind}): {errors}"
    );
    Reply::Json(
        500,
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "code": 500,
        }),
    )
}

/// 400 for a create or update body with undeclared fields under `fieldValidation=Strict`.
fn strict_decoding_error(r: &Resource, undeclared: &[String]) -> Reply {
    let unknown: Vec<String> = undeclared
        .iter()
        .map(|p| format!("unknown field \"{}\"", p.trim_start_matches('.')))
        .collect();
    bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
        unknown.join(", "),
        kind = r.kind,
        version = r.version,
    ))
}

/// 422 Invalid with one cause per field.
fn invalid_fields(r: &Resource, name: &str, errors: &[(String, String)]) -> Reply {
    let each: Vec<String> = errors.iter().map(|(f, m)| format!("{f}: {m}")).collect();
    let joined = match each.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let message = format!("{} \"{name}\" is invalid: {joined}", r.qualified_kind());
    let mut details = json!({
        "name": name,
        "kind": r.kind,
        "causes": errors
            .iter()
            .map(|(f, m)| json!({"reason": "FieldValueNotSupported", "message": m, "field": f}))
            .collect::<Vec<_>>(),
    });
    if !r.group.is_empty() {
        details["group"] = json!(r.group);
    }
    failure(422, "Invalid", message, details)
}

impl Inner {
    /// The `openAPIV3Schema` a stored CustomResourceDefinition gives this resource's version.
    pub(super) fn schema_of(&self, r: &Resource) -> Option<Value> {
        if r.builtin {
            return None;
        }
        let crd = self.crd_objects().find(|crd| {
            crd["spec"]["group"] == r.group.as_str()
                && crd["spec"]["names"]["kind"] == r.kind.as_str()
        })?;
        crd["spec"]["versions"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == r.version.as_str())?
            .get("schema")?
            .get("openAPIV3Schema")
            .cloned()
    }

    /// The enum check of the object about to be stored (or answered, in a dry run).
    pub(super) fn check_enums(&self, r: &Resource, obj: &Value) -> Result<(), Reply> {
        let Some(schema) = self.schema_of(r) else {
            return Ok(());
        };
        let mut errors = Vec::new();
        enum_violations(&schema, obj, "", &mut errors);
        if errors.is_empty() {
            return Ok(());
        }
        Err(invalid_fields(
            r,
            meta_str(obj, "name").unwrap_or(""),
            &errors,
        ))
    }

    /// A create or update body under `fieldValidation=Strict`: no undeclared field.
    pub(super) fn check_strict(
        &self,
        req: &Request,
        r: &Resource,
        obj: &Value,
    ) -> Result<(), Reply> {
        if !req.query.has("fieldValidation", "Strict") {
            return Ok(());
        }
        let Some(schema) = self.schema_of(r) else {
            return Ok(());
        };
        let undeclared = undeclared_in_object(&schema, obj);
        if undeclared.is_empty() {
            Ok(())
        } else {
            Err(strict_decoding_error(r, &undeclared))
        }
    }
}
