//! Slinky (SchedMD slurm-operator) custom resources as the API server and the operator treat
//! them — rules labs 3 and 4 share:
//! - the kinds a v1.x cluster serves, and the names the quiz (and v0.x) used instead
//!   ([`replacement`]); `kubectl apply` refuses any other kind of the group
//!   (`no matches for kind "SlurmNodeSet" in version "slinky.slurm.net/v1alpha1"`, apimachinery
//!   `NoKindMatchError`), so in static mode a learner's manifest of such a kind is found
//!   ([`unserved_manifests`]) and failed with the lab's hint instead of "missing";
//! - what the v1beta1 CRDs refuse in a Controller or Accounting ([`key_ref_refusals`]), and the
//!   JWT key reference's deprecated name ([`deprecated_jwt_ref`]);
//! - the container images the CRDs leave empty ([`missing_images`]);
//! - the GPUs Slurm itself is told about ([`gres_gpus`], [`gres_conf_finds_gpus`]): a NodeSet's
//!   `extraConf` is split on spaces into `key=value` items passed to slurmd as `--conf`, keys
//!   title-cased (`internal/builder/workerbuilder/worker_app.go` `slurmdConfArgs`); GPUs are
//!   declared there as `Gres=gpu[:type]:N` and found on the node by a `gres.conf` in a ConfigMap
//!   the Controller's `configFileRefs` mount in /etc/slurm, `AutoDetect=nvidia` in the guide
//!   (`docs/installation.md` "With GPUs"; gres.conf(5): `Name=gpu … File=…` describes them by
//!   hand). A node found with fewer GRES than configured is drained (Slurm "Generic Resource
//!   (GRES) Scheduling").
//!
//! Upstream: SlinkyProject/slurm-operator v1.2.1 (`config/crd/bases/`, `api/v1beta1/`); the
//! v0.x kinds from v0.1.0 `api/v1alpha1/cluster_types.go` and the v0.4 changelog ("Removed the
//! Cluster CRD", "Added Accounting, Controller, Restapi, and LoginSet CRDs").

use serde_json::Value;

use crate::observe::kinds::NODESETS;
use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::version;
use crate::verify::{JudgeCtx, Judgement, Outcome};

/// The kinds the v1.x CRDs serve, all at `v1beta1` only (v1.2.1 `config/crd/bases/`).
pub const SERVED_KINDS: &[&str] = &[
    "Controller",
    "NodeSet",
    "LoginSet",
    "Accounting",
    "RestApi",
    "Token",
];

/// The v1.x kind that does the job of a kind a v1.x cluster does not serve: the quiz's
/// `SlurmNodeSet`/`SlurmCluster` (they never existed), the other quiz choices, and v0.1–v0.3's
/// `Cluster` (split into Controller, Accounting, RestApi, … in v0.4).
pub fn replacement(kind: &str) -> Option<&'static str> {
    match kind {
        "SlurmNodeSet" | "SlurmPartition" | "SlurmWorker" => Some("NodeSet"),
        "SlurmCluster" | "Cluster" => Some("Controller"),
        "SlurmAccounting" | "SlurmDBD" | "Slurmdbd" => Some("Accounting"),
        "SlurmController" | "Slurmctld" => Some("Controller"),
        _ => None,
    }
}

/// Static mode only: the learner's manifests of the Slinky API group whose kind no v1.x cluster
/// serves (the objects `kubectl apply` would refuse), in file order. A live cluster or a
/// snapshot cannot hold such an object, so there it is always empty. This looks at the
/// learner's own files, not at the cluster: no read is made.
pub fn unserved_manifests<'a>(ctx: &JudgeCtx<'a>) -> Vec<&'a Obj> {
    if !ctx.is_static() {
        return Vec::new();
    }
    ctx.obs
        .objects()
        .into_iter()
        .filter(|o| {
            group_of(o.api_version()) == NODESETS.group && !SERVED_KINDS.contains(&o.kind())
        })
        .collect()
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// When the lab's object is missing (`missing`: the judgement [`JudgeCtx::named`] gave) but
/// the learner wrote a Slinky object of an unserved kind (preferring one of the lab's name, then
/// one whose replacement is `kind`), `check` fails with hint `quiz-kind` instead
/// (evidence `found_kind`, `found_api_version`, `kind`, `name`, `api_version`); the other checks
/// keep the `missing` text: the API server would not create the object at all.
pub fn with_unserved(
    ctx: &JudgeCtx,
    mut missing: Judgement,
    check: &str,
    kind: &str,
    name: &str,
) -> Judgement {
    let found = unserved_manifests(ctx);
    let Some(o) = found
        .iter()
        .find(|o| o.name() == name)
        .or_else(|| found.iter().find(|o| replacement(o.kind()) == Some(kind)))
        .or(found.first())
    else {
        return missing;
    };
    let served = NODESETS.api_version();
    let outcome = Outcome::fail(
        check,
        format!("apiVersion: {served}, kind: {kind}"),
        format!("apiVersion: {}, kind: {}", o.api_version(), o.kind()),
    )
    .hint("quiz-kind")
    .with("found_kind", o.kind())
    .with("found_api_version", o.api_version())
    .with("kind", kind)
    .with("name", o.name())
    .with("api_version", &served);
    if let Some(slot) = missing.outcomes.iter_mut().find(|x| x.check == check) {
        *slot = outcome;
    }
    missing
}

/// An object of the right kind in another version: `kubectl apply` refuses it, since the v1.x
/// CRDs serve `v1beta1` only (kit [`version::unserved`]). Fails `check` with hint `api-version`
/// (evidence `written`, `served`, `kind`).
pub fn wrong_version(check: &str, o: &Obj) -> Option<Outcome> {
    version::unserved(check, o, &NODESETS.api_version())
        .map(|f| f.hint("api-version").with("kind", o.kind()))
}

/// A field the API server refuses, as `kubectl apply` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `spec.slurmKeyRef`, `spec.jwtHs256KeyRef.key`.
    pub field: String,
}

/// The JWT key reference (v1.2.1 `ControllerSpec.JwtKeyRef`, `AccountingSpec.JwtKeyRef`), added
/// in 1.1.0, and its deprecated former name ("Deprecated: use JwtKeyRef instead", read only
/// when `jwtKeyRef` is unset: `controller_keys.go` `AuthJwtRef`).
pub const JWT_KEY_REF: &str = "jwtKeyRef";
pub const JWT_HS256_KEY_REF: &str = "jwtHs256KeyRef";

/// What the CRD refuses in a Controller's or Accounting's key references: unless
/// `spec.external` is true, `spec.slurmKeyRef` must be set and so must a JWT key
/// (`spec.jwtKeyRef`, or the deprecated `spec.jwtHs256KeyRef`) — the
/// `x-kubernetes-validations` on ControllerSpec and AccountingSpec (`has(self.slurmKeyRef)`,
/// `has(self.jwtKeyRef) || has(self.jwtHs256KeyRef)`); and every set reference needs its `key`
/// (core/v1 `SecretKeySelector.key` is required). Rules on `spec` apply only when it is written.
pub fn key_ref_refusals(o: &Obj) -> Vec<Refusal> {
    let spec = &o.value["spec"];
    if !spec.is_object() || spec["external"].as_bool() == Some(true) {
        return Vec::new();
    }
    let refusal = |f: &str| Refusal {
        field: format!("spec.{f}"),
    };
    let mut out = Vec::new();
    let keyless = |v: &Value| v["key"].as_str().is_none_or(str::is_empty);
    match spec.get("slurmKeyRef") {
        None | Some(Value::Null) => out.push(refusal("slurmKeyRef")),
        Some(r) if keyless(r) => out.push(refusal("slurmKeyRef.key")),
        Some(_) => {}
    }
    let jwt = [JWT_KEY_REF, JWT_HS256_KEY_REF]
        .into_iter()
        .filter(|f| !spec[*f].is_null())
        .collect::<Vec<_>>();
    if jwt.is_empty() {
        out.push(refusal(JWT_KEY_REF));
    }
    for f in jwt.into_iter().filter(|f| keyless(&spec[*f])) {
        out.push(refusal(&format!("{f}.key")));
    }
    out
}

/// Whether a Controller or Accounting names its JWT key with the deprecated
/// `spec.jwtHs256KeyRef` (accepted by the CRD, but `jwtKeyRef` is the field to use).
pub fn deprecated_jwt_ref(o: &Obj) -> bool {
    !o.value["spec"][JWT_HS256_KEY_REF].is_null()
}

/// The refusal as a fail of `check` (hint `rejected`, evidence `field`, `kind`, `name`).
pub fn refusal_outcome(check: &str, o: &Obj, r: &Refusal) -> Outcome {
    Outcome::fail(
        check,
        format!("{}: {{name, key}}", r.field.trim_end_matches(".key")),
        format!("{}: —", r.field),
    )
    .hint("rejected")
    .with("field", &r.field)
    .with("kind", o.kind())
    .with("name", o.name())
}

/// The container-wrapper fields (`spec.slurmd`, `spec.logfile`) whose `image` is unset or
/// empty, as `spec.slurmd.image`. The CRDs have no default image, so such a container never
/// starts. A non-string image is bad input naming the field.
pub fn missing_images(o: &Obj, wrappers: &[&str]) -> Result<Vec<String>, InputError> {
    let mut out = Vec::new();
    for w in wrappers {
        let mut v: &serde_json::Value = &o.value;
        for p in w.split('.') {
            v = &v[p];
        }
        let field = format!("{w}.image");
        match &v["image"] {
            Value::Null => out.push(field),
            Value::String(s) if s.trim().is_empty() => out.push(field),
            Value::String(_) => {}
            _ => return Err(o.field_error(field, "expected a string")),
        }
    }
    Ok(out)
}

/// The GPUs a NodeSet's `extraConf` declares to Slurm: the counts of the `gpu` entries of its
/// `Gres=` items (`gpu:8`, `gpu:h100:8`; key case-insensitive, as the operator title-cases it).
/// None when no item declares `gpu`.
pub fn gres_gpus(extra_conf: &str) -> Option<i64> {
    let entries = extra_conf
        .split_whitespace()
        .filter_map(|item| item.split_once('='))
        .filter(|(k, _)| k.eq_ignore_ascii_case("gres"))
        .flat_map(|(_, v)| v.split(','));
    let mut total = None;
    for e in entries {
        let mut parts = e.split(':');
        if parts.next() != Some("gpu") {
            continue;
        }
        // `name[:type][:count]` (slurm.conf(5) `Gres`): without a count, one.
        let n = parts
            .next_back()
            .and_then(|c| c.parse::<i64>().ok())
            .unwrap_or(1);
        total = Some(total.unwrap_or(0) + n);
    }
    total
}

/// Whether a `gres.conf` lets slurmd find GPUs: an `AutoDetect=` other than `off`, or a
/// `Name=gpu` line (gres.conf(5): parameter names are case-insensitive, `#` starts a comment).
pub fn gres_conf_finds_gpus(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .flat_map(str::split_whitespace)
        .filter_map(|w| w.split_once('='))
        .any(|(k, v)| {
            (k.eq_ignore_ascii_case("autodetect") && !v.eq_ignore_ascii_case("off"))
                || (k.eq_ignore_ascii_case("name") && v == "gpu")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use serde_json::json;

    fn obj(v: Value) -> Obj {
        Obj::new(v, Origin::Live).unwrap()
    }

    fn controller(spec: Value) -> Obj {
        obj(
            json!({"apiVersion": NODESETS.api_version(), "kind": "Controller",
                   "metadata": {"name": "slurm"}, "spec": spec}),
        )
    }

    fn fields(o: &Obj) -> Vec<String> {
        key_ref_refusals(o).into_iter().map(|r| r.field).collect()
    }

    #[test]
    fn the_quizs_kinds_map_to_the_kinds_that_do_the_job() {
        assert_eq!(replacement("SlurmNodeSet"), Some("NodeSet"));
        assert_eq!(replacement("SlurmCluster"), Some("Controller"));
        assert_eq!(replacement("Cluster"), Some("Controller"));
        assert_eq!(replacement("NodeSet"), None);
        for k in SERVED_KINDS {
            assert_eq!(replacement(k), None, "{k} is served");
        }
    }

    #[test]
    fn both_key_references_are_required_unless_external() {
        let ok = controller(json!({
            "slurmKeyRef": {"name": "slurm-auth-slurm", "key": "slurm.key"},
            "jwtKeyRef": {"name": "slurm-auth-jwt", "key": "jwt.key"}}));
        assert!(fields(&ok).is_empty());
        assert!(!deprecated_jwt_ref(&ok));
        // The CRD still accepts the deprecated name.
        let older = controller(json!({
            "slurmKeyRef": {"name": "a", "key": "slurm.key"},
            "jwtHs256KeyRef": {"name": "b", "key": "jwt_hs256.key"}}));
        assert!(fields(&older).is_empty());
        assert!(deprecated_jwt_ref(&older));
        // A missing JWT key is reported under the field to use.
        assert_eq!(
            fields(&controller(json!({}))),
            ["spec.slurmKeyRef", "spec.jwtKeyRef"]
        );
        // Every reference written needs its key.
        assert_eq!(
            fields(&controller(
                json!({"slurmKeyRef": {"name": "a", "key": "k"},
                                      "jwtKeyRef": {"name": "b", "key": "k"},
                                      "jwtHs256KeyRef": {"name": "c"}})
            )),
            ["spec.jwtHs256KeyRef.key"]
        );
        assert_eq!(
            fields(&controller(json!({"slurmKeyRef": {"name": "a"},
                                      "jwtHs256KeyRef": {"name": "b", "key": ""}}))),
            ["spec.slurmKeyRef.key", "spec.jwtHs256KeyRef.key"]
        );
        assert!(fields(&controller(json!({"external": true}))).is_empty());
        let no_spec = obj(
            json!({"apiVersion": NODESETS.api_version(), "kind": "Controller",
                                 "metadata": {"name": "slurm"}}),
        );
        assert!(fields(&no_spec).is_empty());
    }

    #[test]
    fn an_unset_or_empty_image_is_reported_by_field() {
        let o = controller(
            json!({"slurmctld": {"image": "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"},
                                  "logfile": {"image": " "}}),
        );
        assert_eq!(
            missing_images(&o, &["spec.slurmctld", "spec.logfile"]).unwrap(),
            ["spec.logfile.image"]
        );
        assert_eq!(
            missing_images(&controller(json!({})), &["spec.slurmctld"]).unwrap(),
            ["spec.slurmctld.image"]
        );
        let bad = controller(json!({"slurmctld": {"image": 3}}));
        assert!(missing_images(&bad, &["spec.slurmctld"]).is_err());
    }

    #[test]
    fn another_version_is_refused_and_says_which_is_served() {
        let o = obj(
            json!({"apiVersion": "slinky.slurm.net/v1alpha1", "kind": "NodeSet",
                           "metadata": {"name": "gpu"}}),
        );
        let out = wrong_version("nodeset-kind", &o).unwrap();
        assert_eq!(out.hint.as_deref(), Some("api-version"));
        assert_eq!(
            out.found.as_deref(),
            Some("apiVersion: slinky.slurm.net/v1alpha1")
        );
        assert!(wrong_version("nodeset-kind", &controller(json!({}))).is_none());
    }

    #[test]
    fn gres_gpus_sums_the_gpu_entries_of_extra_conf() {
        assert_eq!(gres_gpus("Gres=gpu:8"), Some(8));
        assert_eq!(
            gres_gpus("Features=a100 gres=gpu:h100:4,gpu:h100:4"),
            Some(8)
        );
        assert_eq!(gres_gpus("GRES=gpu"), Some(1));
        assert_eq!(gres_gpus("Gres=gpu:h100"), Some(1));
        assert_eq!(gres_gpus("Gres=shard:8 Weight=10"), None);
        assert_eq!(gres_gpus(""), None);
    }

    #[test]
    fn a_gres_conf_finds_gpus_by_autodetect_or_by_name() {
        assert!(gres_conf_finds_gpus("AutoDetect=nvidia\n"));
        assert!(gres_conf_finds_gpus(
            "# h100\nNodeName=x Name=gpu File=/dev/nvidia[0-7]"
        ));
        assert!(!gres_conf_finds_gpus("AutoDetect=off\n"));
        assert!(!gres_conf_finds_gpus(
            "# AutoDetect=nvidia\nName=shard Count=8"
        ));
    }
}
