//! Which Service a host name reaches from a pod, and which ports that Service exposes.
//!
//! Rules (Kubernetes "DNS for Services and Pods", and the DNS-based service discovery spec
//! `kubernetes/dns` `docs/specification.md`):
//! - a Service `<svc>` in namespace `<ns>` has the record `<svc>.<ns>.svc.<zone>` (zone
//!   `cluster.local` unless the cluster is set up otherwise);
//! - a pod's resolv.conf searches `<its ns>.svc.<zone>`, `svc.<zone>` and `<zone>`, so `<svc>`
//!   reaches the Service of the pod's own namespace, and `<svc>.<ns>` and `<svc>.<ns>.svc` the
//!   Service of `<ns>`;
//! - a trailing dot makes a name absolute; names are case-insensitive.
//!
//! An IP address or a name of another form (an external database) reaches no Service.

use serde_json::Value;

use crate::observe::Obj;

/// The cluster DNS zone nearly every cluster uses (kubeadm, kind and EKS default).
pub const CLUSTER_DOMAIN: &str = "cluster.local";

/// The Service a host name reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceName {
    pub name: String,
    /// None: the pod's own namespace (a bare `<svc>`).
    pub namespace: Option<String>,
}

impl ServiceName {
    /// The namespace it is in, for a pod of namespace `pod_ns`.
    pub fn namespace_for<'a>(&'a self, pod_ns: &'a str) -> &'a str {
        self.namespace.as_deref().unwrap_or(pod_ns)
    }
}

/// An RFC 1123 label, the form of Service and namespace names.
fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// The Service `host` reaches from a pod, when it names one (see the module rules).
pub fn service_of_host(host: &str) -> Option<ServiceName> {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let h = h
        .strip_suffix(CLUSTER_DOMAIN)
        .and_then(|rest| rest.strip_suffix('.'))
        .map(str::to_string)
        .unwrap_or(h);
    let parts: Vec<&str> = h.split('.').collect();
    let parts = match parts.as_slice() {
        [svc, ns, "svc"] => vec![*svc, *ns],
        other => other.to_vec(),
    };
    if !parts.iter().all(|p| is_label(p)) {
        return None;
    }
    // A first label that is all digits is an IP address, never a Service.
    if parts[0].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match parts.as_slice() {
        [svc] => Some(ServiceName {
            name: svc.to_string(),
            namespace: None,
        }),
        [svc, ns] => Some(ServiceName {
            name: svc.to_string(),
            namespace: Some(ns.to_string()),
        }),
        _ => None,
    }
}

/// `spec.ports[].port` of a Service object (core/v1 `ServicePort.port`); entries without a
/// number are skipped.
pub fn ports(service: &Obj) -> Vec<i64> {
    ports_of(&service.value)
}

fn ports_of(v: &Value) -> Vec<i64> {
    v["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["port"].as_i64())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use serde_json::json;

    fn svc(name: &str, ns: Option<&str>) -> Option<ServiceName> {
        Some(ServiceName {
            name: name.into(),
            namespace: ns.map(String::from),
        })
    }

    #[test]
    fn every_form_the_pod_search_path_resolves_names_the_service() {
        assert_eq!(service_of_host("mariadb"), svc("mariadb", None));
        assert_eq!(service_of_host("mariadb.lab"), svc("mariadb", Some("lab")));
        assert_eq!(
            service_of_host("mariadb.lab.svc"),
            svc("mariadb", Some("lab"))
        );
        assert_eq!(
            service_of_host("MariaDB.lab.svc.cluster.local."),
            svc("mariadb", Some("lab"))
        );
    }

    #[test]
    fn addresses_and_other_names_reach_no_service() {
        assert_eq!(service_of_host("10.96.0.12"), None);
        assert_eq!(service_of_host("db.example.com"), None);
        assert_eq!(service_of_host("my_db"), None);
        assert_eq!(service_of_host(""), None);
        assert_eq!(service_of_host("mariadb.lab.svc.other.zone"), None);
    }

    #[test]
    fn a_bare_name_is_the_service_of_the_pods_namespace() {
        let s = service_of_host("mariadb").unwrap();
        assert_eq!(s.name, "mariadb");
        assert_eq!(s.namespace_for("lab"), "lab");
        let s = service_of_host("mariadb.other").unwrap();
        assert_eq!(s.name, "mariadb");
        assert_eq!(s.namespace_for("lab"), "other");
    }

    #[test]
    fn service_ports_are_read_from_spec_ports() {
        let o = Obj::new(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "mariadb"},
                   "spec": {"ports": [{"name": "mysql", "port": 3306}, {"name": "x"}]}}),
            Origin::Live,
        )
        .unwrap();
        assert_eq!(ports(&o), [3306]);
    }
}
