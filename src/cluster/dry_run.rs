//! Server-side dry run of one manifest object (`check --files … --dry-run=server`): the object
//! is sent as `kubectl apply --server-side --dry-run=server --field-manager=trainlab
//! --force-conflicts --validate=strict` sends it — a PATCH of type
//! `application/apply-patch+yaml` with `dryRun=All&force=true&fieldManager=trainlab&
//! fieldValidation=Strict` — so the API server runs the whole write path (decoding against the
//! schema, defaulting, validation with enums and CEL rules, admission webhooks) and persists
//! nothing. What came back is sorted here, by Kubernetes semantics only: the server refused the
//! learner's object ([`Answer::Refused`]), or the environment kept the dry run from happening
//! ([`Answer::Unavailable`]: forbidden, unreachable, a webhook that cannot dry-run, a namespace
//! that does not exist yet). Which check a refusal belongs to is `plan`'s business.
//!
//! What kube-apiserver v1.33 answers (k8s.io/apimachinery and k8s.io/apiserver v0.33.0):
//! - a field the kind's schema does not declare, in an apply patch: the typed conversion of
//!   server-side apply fails first, *whatever fieldValidation says*, with a plain Go error that
//!   becomes `500` without a reason: `failed to create typed patch object (<ns>/<name>;
//!   <group>/<version>, Kind=<Kind>): .spec.foo: field not declared in schema`
//!   (pkg/util/managedfields/internal/structuredmerge.go `Apply`;
//!   pkg/endpoints/handlers/responsewriters/status.go `ErrorToAPIStatus`; reported upstream as
//!   kubernetes/kubernetes#122480 and #139253, still open). It is the learner's field, not a
//!   server fault, so it is a refusal here;
//! - `fieldValidation=Strict` on an apply patch adds only the YAML decoder's own strictness
//!   (duplicate keys: `400 error strict decoding YAML: …`, pkg/endpoints/handlers/patch.go
//!   `applyPatcher.applyPatchToCurrentObject`); the `strict decoding error: unknown field
//!   "spec.foo"` wording belongs to create and update bodies (apiextensions-apiserver
//!   pkg/apiserver/customresource_handler.go `schemaCoercingDecoder`);
//! - schema validation (enums, patterns, CEL rules): `422 Invalid`, `<Kind>.<group> "<name>" is
//!   invalid: <field>: Unsupported value: "X": supported values: "a", "b"` (pkg/api/errors
//!   `NewInvalid`, pkg/util/validation/field/errors.go `NotSupported`);
//! - an admission webhook's denial: `admission webhook "<name>" denied the request: …`, with the
//!   webhook's code (400 when it gives none), and a webhook not marked `sideEffects: None`/
//!   `NoneOnDryRun`: `400 admission webhook "<name>" does not support dry run`
//!   (pkg/admission/plugin/webhook/errors/statuserror.go);
//! - RBAC: `403 Forbidden`, `… is forbidden: User "<u>" cannot patch resource "<r>" in API group
//!   "<g>" …` (pkg/endpoints/handlers/responsewriters/errors.go `forbiddenMessage`): a dry run
//!   needs the same permission as the write.

use kube::api::{Api, DynamicObject, Patch, PatchParams, ValidationDirective};
use kube::discovery::ApiResource;
use serde_json::Value;

use super::apply::FIELD_MANAGER;
use super::discovery::Discovery;
use super::retry::{credentials_error, is_credentials_error, with_retry};
use super::Conn;
use crate::observe::{kinds, Obj, Unavailable};
use crate::text::Text;
use crate::Error;

/// What the API server made of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Accepted: applying it would succeed (nothing was stored).
    Accepted,
    /// Refused because of what the object says: the learner's to fix.
    Refused(Refusal),
    /// The dry run could not judge the object: never the learner's fault.
    Unavailable(Text),
}

/// A refusal as the API server gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status (0: refused before any request, as kubectl would: [`NO_MATCH_REASON`],
    /// [`NAME_REASON`]).
    pub code: u16,
    /// The `Status` reason (`Invalid`, `BadRequest`; empty when the server gave none).
    pub reason: String,
    /// The server's own message, exactly.
    pub message: String,
    /// The fields the server named (`spec.disruption.consolidationPolicy`,
    /// `.spec.foo`), in its order: the causes of a 422, or the paths of an undeclared-field
    /// message.
    pub fields: Vec<String>,
}

/// The reason of a refusal found in discovery, before any request: the group is served but not
/// this kind in this version. kubectl says `no matches for kind "Job" in version
/// "batch.volcano.sh/v1beta1"` (k8s.io/apimachinery pkg/api/meta/errors.go `NoKindMatchError`).
pub const NO_MATCH_REASON: &str = "NoKindMatch";

/// The reason of a refusal before any request: the object has no `metadata.name`, which an
/// apply needs.
pub const NAME_REASON: &str = "NameRequired";

/// The query a dry-run apply sends: `dryRun=All`, `force=true` (the dry run validates what the
/// file says, not who owns which field), `fieldManager=trainlab`, `fieldValidation=Strict`.
pub fn dry_run_params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER)
        .force()
        .dry_run()
        .validation(ValidationDirective::Strict)
}

/// Sends `obj` as a server-side dry-run apply, into `namespace` when its kind is namespaced and
/// it names none. Refused credentials stop the whole dry run (the error every command gives for
/// them); everything else is an [`Answer`].
pub async fn dry_run_apply(
    conn: &Conn,
    discovery: &Discovery,
    obj: &Obj,
    namespace: &str,
) -> Result<Answer, Error> {
    if obj.name().is_empty() {
        // client-go refuses before any request (rest/request.go: `resource name may not be
        // empty`); kubectl apply says the same.
        return Ok(Answer::Refused(Refusal {
            code: 0,
            reason: NAME_REASON.to_string(),
            message: "resource name may not be empty".to_string(),
            fields: vec!["metadata.name".to_string()],
        }));
    }
    let (resource, namespaced) = match discovery
        .resolve_any(conn, obj.api_version(), obj.kind())
        .await
    {
        Ok(found) => found,
        Err(Unavailable::NotServed { .. }) => return not_served(conn, obj).await,
        Err(other) => return Ok(Answer::Unavailable(unavailable(obj, &other.to_string()))),
    };
    let mut value = obj.value.as_ref().clone();
    let ns = match (namespaced, obj.namespace()) {
        (true, Some(ns)) if !ns.is_empty() => Some(ns.to_string()),
        (true, _) => {
            value["metadata"]["namespace"] = Value::String(namespace.to_string());
            Some(namespace.to_string())
        }
        (false, _) => None,
    };
    let api: Api<DynamicObject> = match &ns {
        Some(ns) => Api::namespaced_with(conn.client.clone(), ns, &resource),
        None => Api::all_with(conn.client.clone(), &resource),
    };
    let params = dry_run_params();
    let patch = Patch::Apply(&value);
    match with_retry(|| api.patch(obj.name(), &params, &patch)).await {
        Ok(_) => Ok(Answer::Accepted),
        Err(e) if is_credentials_error(&e) => Err(credentials_error(conn, &e)),
        Err(kube::Error::Api(status)) => Ok(judge_status(
            obj,
            &resource,
            ns.as_deref(),
            status.code,
            &status.reason,
            &status.message,
            status
                .details
                .as_ref()
                .map(|d| d.causes.iter().map(|c| c.field.clone()).collect())
                .unwrap_or_default(),
        )),
        Err(e) => {
            let why = super::retry::describe(&e, conn.timeout);
            Ok(Answer::Unavailable(unavailable(obj, &why)))
        }
    }
}

/// Sorts an error answer: the learner's refusal, or the environment's failure.
pub fn judge_status(
    obj: &Obj,
    resource: &ApiResource,
    namespace: Option<&str>,
    code: u16,
    reason: &str,
    message: &str,
    causes: Vec<String>,
) -> Answer {
    let refused = |fields: Vec<String>| {
        Answer::Refused(Refusal {
            code,
            reason: reason.to_string(),
            message: message.to_string(),
            fields,
        })
    };
    let shown = obj.display_name();
    let denied_by_admission = message.contains("admission webhook \"")
        && message.contains("denied the request")
        || message.contains("ValidatingAdmissionPolicy")
        || message.contains("violates PodSecurity");
    match code {
        400 if message.contains("does not support dry run") => Answer::Unavailable(Text {
            ja: format!("{shown}: このクラスターの admission webhook がドライランを受け付けません（webhook の sideEffects が None でも NoneOnDryRun でもありません）。API サーバーの答え: {message}"),
            en: format!("{shown}: an admission webhook of this cluster cannot take dry runs (its sideEffects is neither None nor NoneOnDryRun); the API server said: {message}"),
        }),
        400 | 422 => refused(if causes.is_empty() {
            fields_in(message)
        } else {
            causes
        }),
        403 if denied_by_admission => refused(causes),
        403 => {
            let verb_resource = format!("patch {}", qualified(resource));
            let scope = match namespace {
                Some(ns) => format!(" -n {ns}"),
                None => String::new(),
            };
            Answer::Unavailable(Text {
                ja: format!("{shown}: サーバー側ドライランが禁止されています（ドライランには適用と同じ権限 `{verb_resource}`{scope} が必要です）。API サーバーの答え: {message}"),
                en: format!("{shown}: the server-side dry run is forbidden (a dry run needs the same permission as applying: `{verb_resource}`{scope}); the API server said: {message}"),
            })
        }
        404 if namespace.is_some() && message.starts_with("namespaces ") => {
            let ns = namespace.unwrap_or_default();
            Answer::Unavailable(Text {
                ja: format!("{shown}: namespace `{ns}` がこのクラスターにないため、その中にドライランできません。`trainlab start LAB`（namespace を作成します）か `kubectl create namespace {ns}` のあとで、もう一度実行してください"),
                en: format!("{shown}: namespace `{ns}` does not exist on this cluster, so nothing can be dry-run in it; run `trainlab start LAB` (it creates the namespace) or `kubectl create namespace {ns}`, then run this again"),
            })
        }
        500 if message.starts_with("failed to create typed patch object") => {
            refused(fields_in(message))
        }
        _ => {
            let reason = if reason.is_empty() {
                String::new()
            } else {
                format!(" {reason}")
            };
            unavailable_answer(obj, &format!("the server answered {code}{reason}: {message}"))
        }
    }
}

fn unavailable_answer(obj: &Obj, why: &str) -> Answer {
    Answer::Unavailable(unavailable(obj, why))
}

fn unavailable(obj: &Obj, why: &str) -> Text {
    let shown = obj.display_name();
    Text {
        ja: format!("{shown}: サーバー側ドライランができませんでした: {why}"),
        en: format!("{shown}: the server-side dry run could not be made: {why}"),
    }
}

/// `jobs.batch.volcano.sh`, `configmaps`: the resource as RBAC and kubectl name it.
fn qualified(r: &ApiResource) -> String {
    if r.group.is_empty() {
        r.plural.clone()
    } else {
        format!("{}.{}", r.plural, r.group)
    }
}

/// A kind discovery does not know in that apiVersion. When its group is served (the core group
/// always is), the learner wrote a kind or version the cluster does not have, as kubectl would
/// say before sending anything; when the group is not served at all, its CRDs are missing: the
/// environment's, with the install command when trainlab knows the kind.
async fn not_served(conn: &Conn, obj: &Obj) -> Result<Answer, Error> {
    let (api_version, kind) = (obj.api_version(), obj.kind());
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let group_served = if group.is_empty() {
        true
    } else {
        match with_retry(|| conn.client.list_api_groups()).await {
            Ok(list) => list.groups.iter().any(|g| g.name == group),
            Err(e) if is_credentials_error(&e) => return Err(credentials_error(conn, &e)),
            Err(e) => {
                let why = super::retry::describe(&e, conn.timeout);
                return Ok(unavailable_answer(obj, &why));
            }
        }
    };
    if group_served {
        return Ok(Answer::Refused(Refusal {
            code: 0,
            reason: NO_MATCH_REASON.to_string(),
            message: format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
            fields: vec!["apiVersion".to_string(), "kind".to_string()],
        }));
    }
    let known = kinds::ALL.iter().find(|k| k.matches(api_version, kind));
    let why = Unavailable::NotServed {
        resource: format!("{kind} ({api_version})"),
        crd: known
            .and_then(|k| k.crd)
            .map_or_else(|| format!("for {kind}"), str::to_string),
        capability: known.and_then(|k| k.capability).map(str::to_string),
    };
    let shown = obj.display_name();
    Ok(Answer::Unavailable(Text {
        ja: format!(
            "{shown}: {}",
            crate::facts::unavailable::unavailable_text(&why, crate::text::Lang::Ja)
        ),
        en: format!(
            "{shown}: {}",
            crate::facts::unavailable::unavailable_text(&why, crate::text::Lang::En)
        ),
    }))
}

/// The field paths a refusal message names: each `.a.b[0].c: field not declared in schema`
/// of server-side apply's typed conversion (structured-merge-diff v4.6.0 typed/validate.go and
/// typed/helpers.go `ValidationErrors.Error`: one error is `<path>: <message>`, several are
/// `errors:\n  <path>: …` lines), and each `unknown field "a.b"` of a strict decoding error.
pub fn fields_in(message: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in message.split(['\n', ',']) {
        let part = part.trim();
        if let Some(at) = part.find(": field not declared in schema") {
            let before = &part[..at];
            // The path is the last word before the colon (`…Kind=Job): .spec.foo`).
            if let Some(path) = before.rsplit(' ').next().filter(|p| p.starts_with('.')) {
                out.push(path.to_string());
            }
        } else if let Some(rest) = part.split("unknown field \"").nth(1) {
            if let Some(path) = rest.split('"').next() {
                out.push(path.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Obj {
        Obj::test(json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": "gpu-training"},
        }))
    }

    fn resource() -> ApiResource {
        ApiResource {
            group: "karpenter.sh".into(),
            version: "v1".into(),
            api_version: "karpenter.sh/v1".into(),
            kind: "NodePool".into(),
            plural: "nodepools".into(),
        }
    }

    fn judge(code: u16, reason: &str, message: &str, causes: &[&str]) -> Answer {
        let causes = causes.iter().map(|c| c.to_string()).collect();
        judge_status(&obj(), &resource(), None, code, reason, message, causes)
    }

    #[test]
    fn the_query_is_kubectls_server_side_dry_run_with_strict_validation() {
        let p = dry_run_params();
        assert!(p.dry_run && p.force);
        assert_eq!(p.field_manager.as_deref(), Some("trainlab"));
        assert!(matches!(
            p.field_validation,
            Some(ValidationDirective::Strict)
        ));
    }

    #[test]
    fn an_invalid_object_is_refused_with_the_fields_the_server_named() {
        let m = "NodePool.karpenter.sh \"gpu-training\" is invalid: spec.disruption.consolidationPolicy: Unsupported value: \"WhenUnderutilized\": supported values: \"WhenEmpty\", \"WhenEmptyOrUnderutilized\", \"Balanced\"";
        let a = judge(422, "Invalid", m, &["spec.disruption.consolidationPolicy"]);
        let Answer::Refused(r) = a else {
            panic!("{a:?}")
        };
        assert_eq!(
            (r.code, r.reason.as_str(), r.message.as_str()),
            (422, "Invalid", m)
        );
        assert_eq!(r.fields, ["spec.disruption.consolidationPolicy"]);
    }

    #[test]
    fn an_undeclared_field_is_the_learners_although_the_server_answers_500() {
        let one = "failed to create typed patch object (/gpu-training; karpenter.sh/v1, Kind=NodePool): .spec.template.spec.nodeClassRef.apiVersion: field not declared in schema";
        let Answer::Refused(r) = judge(500, "", one, &[]) else {
            panic!()
        };
        assert_eq!(r.fields, [".spec.template.spec.nodeClassRef.apiVersion"]);
        let two = "failed to create typed patch object (ns/x; kubeflow.org/v2beta1, Kind=MPIJob): errors:\n  .spec.foo: field not declared in schema\n  .spec.bar: field not declared in schema";
        assert_eq!(fields_in(two), [".spec.foo", ".spec.bar"]);
        let strict = "MPIJob in version \"v2beta1\" cannot be handled as a MPIJob: strict decoding error: unknown field \"spec.foo\", unknown field \"spec.bar\"";
        assert_eq!(fields_in(strict), ["spec.foo", "spec.bar"]);
        // Any other 500 is the server's.
        assert!(matches!(
            judge(
                500,
                "InternalError",
                "Internal error occurred: etcdserver: leader changed",
                &[]
            ),
            Answer::Unavailable(_)
        ));
    }

    #[test]
    fn forbidden_is_the_environment_unless_admission_denied_the_content() {
        let rbac = "nodepools.karpenter.sh \"gpu-training\" is forbidden: User \"learner\" cannot patch resource \"nodepools\" in API group \"karpenter.sh\" at the cluster scope";
        let Answer::Unavailable(t) = judge(403, "Forbidden", rbac, &[]) else {
            panic!()
        };
        assert!(t.en.contains("`patch nodepools.karpenter.sh`"), "{}", t.en);
        assert!(t.en.ends_with(rbac), "{}", t.en);
        let webhook = "admission webhook \"validatejob.volcano.sh\" denied the request: job 'minAvailable' should not be greater than total replicas in tasks";
        assert!(matches!(judge(400, "", webhook, &[]), Answer::Refused(_)));
        assert!(matches!(
            judge(403, "Forbidden", webhook, &[]),
            Answer::Refused(_)
        ));
        let no_dry_run = "admission webhook \"check.example.com\" does not support dry run";
        assert!(matches!(
            judge(400, "BadRequest", no_dry_run, &[]),
            Answer::Unavailable(_)
        ));
    }

    #[test]
    fn a_missing_namespace_says_how_to_create_it() {
        let a = judge_status(
            &obj(),
            &resource(),
            Some("trainlab-volcano-gang"),
            404,
            "NotFound",
            "namespaces \"trainlab-volcano-gang\" not found",
            Vec::new(),
        );
        let Answer::Unavailable(t) = a else { panic!() };
        assert!(t.en.contains("`trainlab start LAB`"), "{}", t.en);
        assert!(t
            .ja
            .contains("kubectl create namespace trainlab-volcano-gang"));
    }
}
