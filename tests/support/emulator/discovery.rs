//! Discovery documents: version, legacy `APIGroupList`/`APIResourceList`, and aggregated
//! discovery (`apidiscovery.k8s.io/v2` and `v2beta1`).

use serde_json::{json, Value};

use super::reply::Reply;
use super::resources::{group_version, Resource, STATUS_VERBS};
use super::status::path_not_found;
use super::store::Inner;

fn discovery_entry(r: &Resource) -> Value {
    let mut entry = json!({
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        entry["categories"] = json!(r.categories);
    }
    entry
}

/// One resource of aggregated discovery (`APIResourceDiscovery`).
fn aggregated_entry(r: &Resource) -> Value {
    let kind = json!({"group": r.group, "version": r.version, "kind": r.kind});
    let mut entry = json!({
        "resource": r.plural,
        "responseKind": kind,
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        entry["categories"] = json!(r.categories);
    }
    if r.status {
        entry["subresources"] = json!([{
            "subresource": "status",
            "responseKind": kind,
            "verbs": STATUS_VERBS,
        }]);
    }
    entry
}

fn status_discovery_entry(r: &Resource) -> Value {
    json!({
        "name": format!("{}/status", r.plural),
        "singularName": "",
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": STATUS_VERBS,
    })
}

/// `APIResourceList` for one group/version, or `None` when nothing is served there.
fn resource_list(served: &[Resource], group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for r in served
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        resources.push(discovery_entry(r));
        if r.status {
            resources.push(status_discovery_entry(r));
        }
    }
    (!resources.is_empty()).then(|| {
        json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version(group, version),
            "resources": resources,
        })
    })
}

/// `APIGroup` entries for every non-core group, in the order groups were first served.
fn api_groups(served: &[Resource]) -> Vec<Value> {
    let mut order: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in served.iter().filter(|r| !r.group.is_empty()) {
        match order.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) if !versions.contains(&r.version.as_str()) => {
                versions.push(&r.version)
            }
            Some(_) => {}
            None => order.push((&r.group, vec![&r.version])),
        }
    }
    order
        .into_iter()
        .map(|(group, versions)| {
            let entry = |v: &str| json!({"groupVersion": group_version(group, v), "version": v});
            json!({
                "name": group,
                "versions": versions.iter().map(|v| entry(v)).collect::<Vec<_>>(),
                "preferredVersion": entry(versions[0]),
            })
        })
        .collect()
}

pub(super) fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.1",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-05-15T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

impl Inner {
    pub(super) fn api_versions(&self) -> Value {
        json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": format!("127.0.0.1:{}", self.port)}
            ],
        })
    }

    /// `APIGroupDiscoveryList` of `/api` (`core`: the core group only) or `/apis` (every other
    /// group), as kube-apiserver serves it by default since 1.27 (k8s.io/api `apidiscovery/v2` types;
    /// KEP-3352): each group's versions with their resources, subresources nested.
    pub(super) fn aggregated_list(&self, core: bool, version: &'static str) -> Reply {
        let served = self.served();
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in served.iter().filter(|r| r.group.is_empty() == core) {
            match groups.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, versions)) if !versions.contains(&r.version.as_str()) => {
                    versions.push(&r.version)
                }
                Some(_) => {}
                None => groups.push((&r.group, vec![&r.version])),
            }
        }
        let items: Vec<Value> = groups
            .into_iter()
            .map(|(group, versions)| {
                let mut metadata = json!({"creationTimestamp": null});
                if !group.is_empty() {
                    metadata["name"] = json!(group);
                }
                let versions: Vec<Value> = versions
                    .into_iter()
                    .map(|v| {
                        let resources: Vec<Value> = served
                            .iter()
                            .filter(|r| r.group == group && r.version == v)
                            .map(aggregated_entry)
                            .collect();
                        json!({"version": v, "resources": resources, "freshness": "Current"})
                    })
                    .collect();
                json!({"metadata": metadata, "versions": versions})
            })
            .collect();
        let media = match version {
            "v2beta1" => {
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
            }
            _ => "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        };
        Reply::JsonAs(
            200,
            media,
            json!({
                "kind": "APIGroupDiscoveryList",
                "apiVersion": format!("apidiscovery.k8s.io/{version}"),
                "metadata": {},
                "items": items,
            }),
        )
    }

    pub(super) fn group_list(&self) -> Value {
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": api_groups(&self.served())})
    }

    pub(super) fn group(&self, group: &str) -> Reply {
        let groups = api_groups(&self.served());
        match groups.into_iter().find(|g| g["name"] == group) {
            Some(mut g) => {
                g["kind"] = json!("APIGroup");
                g["apiVersion"] = json!("v1");
                Reply::Json(200, g)
            }
            None => path_not_found(),
        }
    }

    pub(super) fn resources(&self, group: &str, version: &str) -> Reply {
        match resource_list(&self.served(), group, version) {
            Some(list) => Reply::Json(200, list),
            None => path_not_found(),
        }
    }
}
