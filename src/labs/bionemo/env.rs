//! Where a pod template's containers get an environment variable from: a literal in the
//! manifest, a Secret, a ConfigMap, or something else (a field of the pod) — the question behind
//! "is the API key passed from a Secret?". Only names and field paths are reported, never a
//! value: a literal key is quoted by its path, not its text.
//!
//! core/v1 `Container.env` / `envFrom`: an `env` entry wins over `envFrom` for the same name, and
//! an `envFrom` `prefix` renames every variable it brings.

use k8s_openapi::api::core::v1::Container;

use crate::verify::kit::k8s::workload::PodTemplate;

/// Where one setting of a variable comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvSource {
    /// `value:` in the manifest.
    Literal,
    /// `valueFrom.secretKeyRef` (`key` Some), or a whole Secret in `envFrom` (`key` None: its
    /// keys are not read, a Secret is only ever seen as metadata).
    Secret { name: String, key: Option<String> },
    /// `valueFrom.configMapKeyRef`.
    ConfigMap { name: String },
    /// `valueFrom.fieldRef` / `resourceFieldRef`.
    Other,
}

/// One place a variable is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSetting {
    pub container: String,
    pub variable: String,
    /// The field path (`spec.template.spec.containers[0].env[0].value`), never the value.
    pub field: String,
    pub source: EnvSource,
}

/// Every place the containers and init containers of `t` set one of `names`: each `env` entry
/// that names one (an empty literal sets nothing). When no container names any of them, the
/// whole Secrets in `envFrom` without a prefix (they may carry it; reported as `names[0]`). A
/// ConfigMap in `envFrom` is not reported: whether it holds the name needs its data.
pub fn env_settings(t: &PodTemplate, names: &[&str]) -> Vec<EnvSetting> {
    let init = t
        .spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (c, format!("{}.initContainers[{i}]", t.path)));
    let app = t.containers().map(|(c, p)| (c, p.to_string()));
    let mut settings = Vec::new();
    let mut from_env_from = Vec::new();
    for (c, path) in init.chain(app) {
        let named = named_in_env(c, &path, names);
        if named.is_empty() {
            from_env_from.extend(secrets_in_env_from(c, &path, names));
        }
        settings.extend(named);
    }
    if settings.is_empty() {
        settings = from_env_from;
    }
    settings
}

fn named_in_env(c: &Container, path: &str, names: &[&str]) -> Vec<EnvSetting> {
    let mut out = Vec::new();
    for (i, e) in c.env.iter().flatten().enumerate() {
        if !names.contains(&e.name.as_str()) {
            continue;
        }
        let field = format!("{path}.env[{i}]");
        let (source, field) = match &e.value_from {
            None if e.value.as_deref().unwrap_or_default().is_empty() => continue,
            None => (EnvSource::Literal, format!("{field}.value")),
            Some(vf) => match (&vf.secret_key_ref, &vf.config_map_key_ref) {
                (Some(s), _) => (
                    EnvSource::Secret {
                        name: s.name.clone(),
                        key: Some(s.key.clone()),
                    },
                    format!("{field}.valueFrom.secretKeyRef"),
                ),
                (None, Some(m)) => (
                    EnvSource::ConfigMap {
                        name: m.name.clone(),
                    },
                    format!("{field}.valueFrom.configMapKeyRef"),
                ),
                (None, None) => (EnvSource::Other, format!("{field}.valueFrom")),
            },
        };
        out.push(EnvSetting {
            container: c.name.clone(),
            variable: e.name.clone(),
            field,
            source,
        });
    }
    out
}

fn secrets_in_env_from(c: &Container, path: &str, names: &[&str]) -> Vec<EnvSetting> {
    let Some(first) = names.first() else {
        return Vec::new();
    };
    c.env_from
        .iter()
        .flatten()
        .enumerate()
        // A prefix renames every variable, so none is called by the name any more.
        .filter(|(_, ef)| ef.prefix.as_deref().is_none_or(str::is_empty))
        .filter_map(|(i, ef)| {
            let s = ef.secret_ref.as_ref()?;
            Some(EnvSetting {
                container: c.name.clone(),
                variable: first.to_string(),
                field: format!("{path}.envFrom[{i}].secretRef"),
                source: EnvSource::Secret {
                    name: s.name.clone(),
                    key: None,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;
    use serde_json::json;

    const KEY: &[&str] = &["NGC_CLI_API_KEY", "NGC_API_KEY"];

    fn template(spec: serde_json::Value) -> PodTemplate {
        let spec: PodSpec = serde_json::from_value(spec).unwrap();
        PodTemplate::job_for_test(spec)
    }

    fn sources(t: &PodTemplate) -> Vec<(String, EnvSource)> {
        env_settings(t, KEY)
            .into_iter()
            .map(|s| (s.field, s.source))
            .collect()
    }

    #[test]
    fn each_way_of_setting_a_variable_is_told_apart() {
        let t = template(json!({
            "initContainers": [{"name": "fetch", "env": [
                {"name": "NGC_CLI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "ngc", "key": "k"}}}]}],
            "containers": [{"name": "train", "env": [
                {"name": "OTHER", "value": "x"},
                {"name": "NGC_API_KEY", "value": "nvapi-literal"},
                {"name": "NGC_CLI_API_KEY", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
                {"name": "NGC_CLI_API_KEY", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "NGC_CLI_API_KEY", "value": ""}]}]
        }));
        let p = "spec.template.spec";
        assert_eq!(
            sources(&t),
            [
                (
                    format!("{p}.initContainers[0].env[0].valueFrom.secretKeyRef"),
                    EnvSource::Secret {
                        name: "ngc".into(),
                        key: Some("k".into())
                    }
                ),
                (
                    format!("{p}.containers[0].env[1].value"),
                    EnvSource::Literal
                ),
                (
                    format!("{p}.containers[0].env[2].valueFrom.configMapKeyRef"),
                    EnvSource::ConfigMap { name: "cm".into() }
                ),
                (
                    format!("{p}.containers[0].env[3].valueFrom"),
                    EnvSource::Other
                ),
            ]
        );
        // The value itself is never reported.
        assert!(env_settings(&t, KEY)
            .iter()
            .all(|s| !s.field.contains("nvapi")));
    }

    #[test]
    fn a_whole_secret_in_env_from_counts_only_when_no_container_names_the_variable() {
        let env_from = json!([
            {"secretRef": {"name": "ngc"}},
            {"secretRef": {"name": "renamed"}, "prefix": "X_"},
            {"configMapRef": {"name": "cm"}}
        ]);
        let t = template(json!({"containers": [{"name": "train", "envFrom": env_from}]}));
        let s = env_settings(&t, KEY);
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].variable.as_str(), s[0].field.as_str(), &s[0].source),
            (
                "NGC_CLI_API_KEY",
                "spec.template.spec.containers[0].envFrom[0].secretRef",
                &EnvSource::Secret {
                    name: "ngc".into(),
                    key: None
                }
            )
        );
        // A container that names it wins over any envFrom.
        let t = template(json!({"containers": [
            {"name": "a", "envFrom": env_from},
            {"name": "b", "env": [{"name": "NGC_API_KEY", "value": "k"}]}
        ]}));
        assert_eq!(
            sources(&t),
            [(
                "spec.template.spec.containers[1].env[0].value".to_string(),
                EnvSource::Literal
            )]
        );
        let none = template(json!({"containers": [{"name": "a"}]}));
        assert!(env_settings(&none, KEY).is_empty());
        assert!(env_settings(&t, &[]).is_empty());
    }
}
