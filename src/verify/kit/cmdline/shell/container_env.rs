//! A container's environment as Kubernetes builds it: one variable looked up with the API's
//! precedence, and the literal values the grader can see.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;

use super::expand::expand_k8s;

/// An environment variable as the container sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvLookup {
    Absent,
    Value(String),
    /// Set from something this grader cannot read (a Secret, a field, a missing ConfigMap); the
    /// text says what.
    Unresolved(String),
}

/// Looks `name` up in a container's environment with the Kubernetes precedence (core/v1
/// `Container.env`/`envFrom` docs: `env` wins over `envFrom`; among `envFrom` sources the last
/// one wins; within `env` the last entry of a name wins). `config_map(name, key)` reads a
/// ConfigMap key the caller has: `Value` if present, `Absent` if the map lacks the key,
/// `Unresolved` if the map cannot be read.
pub fn container_env(
    c: &Container,
    name: &str,
    config_map: &dyn Fn(&str, &str) -> EnvLookup,
) -> EnvLookup {
    if let Some(e) = c.env.iter().flatten().rev().find(|e| e.name == name) {
        let Some(from) = &e.value_from else {
            return EnvLookup::Value(e.value.clone().unwrap_or_default());
        };
        if let Some(r) = &from.config_map_key_ref {
            return match config_map(&r.name, &r.key) {
                // An optional key that is missing leaves the variable unset; otherwise the
                // kubelet refuses to start the container (CreateContainerConfigError).
                EnvLookup::Absent if r.optional == Some(true) => EnvLookup::Absent,
                EnvLookup::Absent => {
                    EnvLookup::Unresolved(format!("ConfigMap {} has no key {}", r.name, r.key))
                }
                found => found,
            };
        }
        if let Some(r) = &from.secret_key_ref {
            return EnvLookup::Unresolved(format!("set from Secret {}", r.name));
        }
        return EnvLookup::Unresolved("set from a field of the pod or container".into());
    }
    for src in c.env_from.iter().flatten().rev() {
        let prefix = src.prefix.as_deref().unwrap_or("");
        let Some(key) = name.strip_prefix(prefix) else {
            continue;
        };
        if let Some(r) = &src.config_map_ref {
            match config_map(&r.name, key) {
                EnvLookup::Absent => {}
                found => return found,
            }
        }
        if let Some(s) = &src.secret_ref {
            return EnvLookup::Unresolved(format!("may come from Secret {}", s.name));
        }
    }
    EnvLookup::Absent
}

/// The container's literal `env[].value`s, each expanded with the ones before it (the kubelet
/// expands `$(VAR)` in env values from previously defined variables).
pub(super) fn literal_env(c: &Container) -> Vec<(String, String)> {
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for e in c.env.iter().flatten() {
        if e.value_from.is_some() {
            // Present at runtime with a value we cannot see: forget any earlier literal.
            known.remove(&e.name);
            continue;
        }
        let value = expand_k8s(e.value.as_deref().unwrap_or(""), &known);
        if !known.contains_key(&e.name) {
            order.push(e.name.clone());
        }
        known.insert(e.name.clone(), value);
    }
    order
        .into_iter()
        .filter_map(|n| known.get(&n).map(|v| (n.clone(), v.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_env_follows_kubernetes_precedence() {
        let c: Container = serde_json::from_value(serde_json::json!({
            "name": "c",
            "env": [
                {"name": "A", "value": "first"},
                {"name": "A", "value": "second"},
                {"name": "S", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}},
                {"name": "M", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "m"}}},
            ],
            "envFrom": [
                {"secretRef": {"name": "sec"}},
                {"configMapRef": {"name": "base"}},
                {"configMapRef": {"name": "over"}, "prefix": "P_"},
            ],
        }))
        .unwrap();
        let cms = |cm: &str, key: &str| match (cm, key) {
            ("cm", "m") => EnvLookup::Value("from-cm".into()),
            ("base", "FI_PROVIDER") => EnvLookup::Value("efa".into()),
            ("over", "X") => EnvLookup::Value("x".into()),
            _ => EnvLookup::Absent,
        };
        assert_eq!(
            container_env(&c, "A", &cms),
            EnvLookup::Value("second".into())
        );
        assert!(
            matches!(container_env(&c, "S", &cms), EnvLookup::Unresolved(w) if w.contains("creds"))
        );
        assert_eq!(
            container_env(&c, "M", &cms),
            EnvLookup::Value("from-cm".into())
        );
        assert_eq!(container_env(&c, "P_X", &cms), EnvLookup::Value("x".into()));
        assert_eq!(
            container_env(&c, "FI_PROVIDER", &cms),
            EnvLookup::Value("efa".into())
        );
        // Not in any ConfigMap: the Secret may define it.
        assert!(
            matches!(container_env(&c, "Z", &cms), EnvLookup::Unresolved(w) if w.contains("sec"))
        );
        let plain: Container =
            serde_json::from_value(serde_json::json!({"name": "launcher"})).unwrap();
        assert_eq!(container_env(&plain, "X", &cms), EnvLookup::Absent);
    }
}
