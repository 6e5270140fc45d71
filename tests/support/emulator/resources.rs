//! The served resources: the built-in kinds and the ones a stored CustomResourceDefinition serves.

use serde_json::{json, Value};

const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Namespaces cannot be deleted as a collection.
const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
pub(super) const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

/// One served resource (one group/version/plural).
#[derive(Clone, Debug)]
pub(super) struct Resource {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) kind: String,
    pub(super) plural: String,
    pub(super) singular: String,
    pub(super) namespaced: bool,
    /// Serves `{plural}/status`; writes to the main resource then keep the stored status.
    pub(super) status: bool,
    /// DELETE answers with the object instead of a `Status` (`ReturnDeletedObject` upstream).
    pub(super) returns_deleted: bool,
    /// Built-in kinds are encoded without apiVersion/kind inside lists.
    pub(super) builtin: bool,
    pub(super) verbs: &'static [&'static str],
    pub(super) short_names: Vec<String>,
    pub(super) categories: Vec<String>,
}

impl Resource {
    pub(super) fn custom(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
    ) -> Resource {
        Resource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            namespaced,
            status: true,
            returns_deleted: false,
            builtin: false,
            verbs: ALL_VERBS,
            short_names: Vec::new(),
            categories: Vec::new(),
        }
    }

    pub(super) fn api_version(&self) -> String {
        group_version(&self.group, &self.version)
    }

    /// `pods` or `deployments.apps`, as error messages name a resource.
    pub(super) fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Pod` or `Deployment.apps`, as Invalid errors name a kind.
    pub(super) fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// `{name, group, kind: plural}` for NotFound/AlreadyExists/Conflict errors.
    pub(super) fn details(&self, name: &str) -> Value {
        let mut details = json!({"name": name, "kind": self.plural});
        if !self.group.is_empty() {
            details["group"] = json!(self.group);
        }
        details
    }

    /// Real servers keep deleted pods, namespaces, PVCs and CRDs until finalizers run, so the
    /// object they return carries a deletionTimestamp.
    pub(super) fn deletes_gracefully(&self) -> bool {
        self.builtin
            && matches!(
                self.kind.as_str(),
                "Pod" | "Namespace" | "PersistentVolumeClaim" | "CustomResourceDefinition"
            )
    }
}

pub(super) fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The built-in kinds every emulator serves.
pub(super) fn builtin_resources() -> Vec<Resource> {
    // (group, version, kind, plural, namespaced, status subresource, returns deleted object,
    //  short names, categories)
    type Row = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        bool,
        bool,
        bool,
        &'static [&'static str],
        &'static [&'static str],
    );
    #[rustfmt::skip]
    const ROWS: &[Row] = &[
        ("", "v1", "Node", "nodes", false, true, false, &["no"], &[]),
        ("", "v1", "Pod", "pods", true, true, true, &["po"], &["all"]),
        ("", "v1", "Event", "events", true, false, false, &["ev"], &[]),
        ("", "v1", "Namespace", "namespaces", false, false, true, &["ns"], &[]),
        ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, false, true, &["pvc"], &[]),
        ("", "v1", "ConfigMap", "configmaps", true, false, false, &["cm"], &[]),
        ("", "v1", "Service", "services", true, false, true, &["svc"], &["all"]),
        ("", "v1", "ServiceAccount", "serviceaccounts", true, false, true, &["sa"], &[]),
        ("", "v1", "Secret", "secrets", true, false, false, &[], &[]),
        ("batch", "v1", "Job", "jobs", true, true, false, &[], &["all"]),
        ("apps", "v1", "Deployment", "deployments", true, false, false, &["deploy"], &["all"]),
        ("apps", "v1", "StatefulSet", "statefulsets", true, true, false, &["sts"], &["all"]),
        ("apps", "v1", "DaemonSet", "daemonsets", true, true, false, &["ds"], &["all"]),
        ("storage.k8s.io", "v1", "StorageClass", "storageclasses", false, false, true, &["sc"], &[]),
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false, false, true, &["crd", "crds"], &[]),
    ];
    ROWS.iter()
        .map(
            |&(group, version, kind, plural, namespaced, status, returns_deleted, short, cats)| {
                Resource {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: kind.to_lowercase(),
                    namespaced,
                    status,
                    returns_deleted,
                    builtin: true,
                    verbs: if kind == "Namespace" {
                        NAMESPACE_VERBS
                    } else {
                        ALL_VERBS
                    },
                    short_names: short.iter().map(|s| s.to_string()).collect(),
                    categories: cats.iter().map(|s| s.to_string()).collect(),
                }
            },
        )
        .collect()
}

/// The resources a stored CustomResourceDefinition serves (one per served version).
pub(super) fn resources_of_crd(crd: &Value) -> Vec<Resource> {
    let spec = &crd["spec"];
    let (Some(group), Some(kind), Some(plural)) = (
        spec["group"].as_str(),
        spec["names"]["kind"].as_str(),
        spec["names"]["plural"].as_str(),
    ) else {
        return Vec::new();
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    versions
        .iter()
        .filter(|v| v["served"].as_bool() != Some(false))
        .filter_map(|v| {
            let mut r = Resource::custom(group, v["name"].as_str()?, kind, plural, namespaced);
            r.status = v["subresources"]["status"].is_object();
            if let Some(singular) = spec["names"]["singular"].as_str() {
                r.singular = singular.into();
            }
            r.short_names = strings(&spec["names"]["shortNames"]);
            r.categories = strings(&spec["names"]["categories"]);
            Some(r)
        })
        .collect()
}
