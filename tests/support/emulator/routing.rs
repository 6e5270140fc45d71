//! Routing: a request path resolved against the served resources, then sent to its verb.

use axum::http::Method;

use super::discovery::version_info;
use super::reply::{Outcome, Reply};
use super::request::{percent_decode, Request};
use super::resources::Resource;
use super::status::{method_not_allowed, path_not_found};
use super::store::{Inner, Key};

/// A resource request path, resolved against the served resources.
pub(super) struct Target {
    pub(super) resource: Resource,
    pub(super) namespace: Option<String>,
    pub(super) name: Option<String>,
    pub(super) subresource: Option<String>,
}

impl Target {
    /// The namespace of objects addressed by this path ("" for cluster-scoped kinds).
    pub(super) fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    pub(super) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    pub(super) fn key(&self, name: &str) -> Key {
        Key::new(&self.resource, self.namespace(), name)
    }

    pub(super) fn is_status(&self) -> bool {
        self.subresource.as_deref() == Some("status")
    }
}

impl Inner {
    pub(super) fn serve(&mut self, req: &Request) -> Reply {
        self.reap_terminated();
        let segments: Vec<String> = req
            .path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| percent_decode(s, false))
            .collect();
        let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
        let discovery = match segs.as_slice() {
            ["version"] => Some(Reply::Json(200, version_info())),
            ["healthz" | "livez" | "readyz"] => Some(Reply::Text(200, "ok")),
            ["api" | "apis"] if self.aggregated && req.aggregated_discovery().is_some() => {
                let version = req.aggregated_discovery().unwrap_or("v2");
                Some(self.aggregated_list(segs[0] == "api", version))
            }
            ["api"] => Some(Reply::Json(200, self.api_versions())),
            ["apis"] => Some(Reply::Json(200, self.group_list())),
            ["apis", group] => Some(self.group(group)),
            ["api", version] => Some(self.resources("", version)),
            ["apis", group, version] => Some(self.resources(group, version)),
            _ => None,
        };
        if let Some(reply) = discovery {
            // Discovery is read-only. `/api` and `/apis` are aggregated when asked for (above),
            // else the legacy documents, which clients fall back to.
            return if req.method == Method::GET {
                reply
            } else {
                method_not_allowed()
            };
        }
        let target = match segs.as_slice() {
            ["api", version, rest @ ..] => self.resolve("", version, rest),
            ["apis", group, version, rest @ ..] => self.resolve(group, version, rest),
            _ => None,
        };
        match target {
            Some(target) => self.dispatch(req, &target).unwrap_or_else(|e| e),
            None => path_not_found(),
        }
    }

    /// `{plural}`, `{plural}/{name}[/{sub}]`, `namespaces/{ns}/{plural}[/{name}[/{sub}]]`.
    /// `namespaces/{x}/{y}` is a namespaced collection only when `y` is a namespaced plural of
    /// this group/version; otherwise it is the `y` subresource of namespace `x`.
    fn resolve(&self, group: &str, version: &str, rest: &[&str]) -> Option<Target> {
        let served = self.served();
        let find = |plural: &str| {
            served
                .iter()
                .find(|r| r.group == group && r.version == version && r.plural == plural)
                .cloned()
        };
        let namespaced = |plural: &str| find(plural).is_some_and(|r| r.namespaced);
        let own = |s: &&str| s.to_string();
        let (namespace, plural, name, sub) = match rest {
            ["namespaces", ns, plural, tail @ ..] if namespaced(plural) && tail.len() <= 2 => (
                Some(ns.to_string()),
                *plural,
                tail.first().map(own),
                tail.get(1).map(own),
            ),
            [plural, tail @ ..] if tail.len() <= 2 => {
                (None, *plural, tail.first().map(own), tail.get(1).map(own))
            }
            _ => return None,
        };
        let resource = find(plural)?;
        let sub_ok = match sub.as_deref() {
            None => true,
            Some("status") => resource.status,
            Some(_) => false,
        };
        // A namespaced object is only addressable inside its namespace.
        let scope_ok = resource.namespaced == namespace.is_some() || name.is_none();
        (sub_ok && scope_ok).then_some(Target {
            resource,
            namespace,
            name,
            subresource: sub,
        })
    }

    fn dispatch(&mut self, req: &Request, t: &Target) -> Outcome {
        let has_name = t.name.is_some();
        if t.subresource.is_some()
            && !matches!(req.method, Method::GET | Method::PUT | Method::PATCH)
        {
            return Err(method_not_allowed());
        }
        match req.method {
            Method::GET if !has_name && req.query.flag("watch") => self.watch(req, t),
            Method::GET if !has_name => self.list(req, t),
            Method::GET => self.get(req, t),
            // Creating a namespaced object needs its namespace in the path.
            Method::POST if !has_name && (t.namespace.is_some() || !t.resource.namespaced) => {
                self.create(req, t)
            }
            Method::PUT if has_name => self.replace(req, t),
            Method::PATCH if has_name => self.patch(req, t),
            Method::DELETE if has_name => self.delete(req, t),
            Method::DELETE if t.resource.verbs.contains(&"deletecollection") => {
                self.delete_collection(req, t)
            }
            _ => Err(method_not_allowed()),
        }
    }
}
