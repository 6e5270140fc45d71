//! Which volume a path in a container lies on (core/v1 `VolumeMount`: the mount at `mountPath`
//! shows the volume's `subPath`; a deeper mount shadows a shallower one), what kind of volume it
//! is, which ConfigMap key a file of a ConfigMap volume comes from, and what the API server
//! refuses in volume mounts.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Container, KeyToPath, PodSpec, Volume, VolumeMount};

use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::workload::PodTemplate;

/// A path made absolute and lexically clean (`/a/./b/../c` → `/a/c`). A relative path is taken
/// from the container's `workingDir`; None when it has none (the image's working directory is
/// not in the manifest).
pub fn absolute(path: &str, c: &Container) -> Option<String> {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        let wd = c.working_dir.as_deref().filter(|w| w.starts_with('/'))?;
        format!("{wd}/{path}")
    };
    Some(clean(&joined))
}

pub fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The volume an absolute path lies on.
pub struct OnVolume<'a> {
    pub mount: &'a VolumeMount,
    /// The mount's field path (`spec.template.spec.containers[0].volumeMounts[1]`).
    pub mount_field: String,
    /// None when the mount names no volume of the pod (the API server refuses that).
    pub volume: Option<&'a Volume>,
    /// The path inside the volume (`subPath` joined), without a leading slash.
    pub inner: String,
}

/// The mount a path lies under, if any: the longest `mountPath` that is the path or a parent.
pub fn volume_at<'a>(
    path: &str,
    c: &'a Container,
    container_field: &str,
    spec: &'a PodSpec,
) -> Option<OnVolume<'a>> {
    let (i, m, rel) = c
        .volume_mounts
        .iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, m)| {
            let mp = clean(&m.mount_path);
            let rel = if path == mp {
                Some(String::new())
            } else if mp == "/" {
                Some(path.trim_start_matches('/').to_string())
            } else {
                path.strip_prefix(&format!("{mp}/")).map(str::to_string)
            };
            rel.map(|r| (i, m, r, mp.len()))
        })
        .max_by_key(|(_, _, _, len)| *len)
        .map(|(i, m, r, _)| (i, m, r))?;
    let base = m
        .sub_path
        .as_deref()
        .filter(|s| !s.is_empty())
        .or(m.sub_path_expr.as_deref().filter(|s| !s.is_empty()))
        .unwrap_or("");
    let inner = clean(&format!("{base}/{rel}"))
        .trim_start_matches('/')
        .to_string();
    Some(OnVolume {
        mount: m,
        mount_field: format!("{container_field}.volumeMounts[{i}]"),
        volume: spec.volumes.iter().flatten().find(|v| v.name == m.name),
        inner,
    })
}

/// The volume source's field name, for messages (`persistentVolumeClaim`, `emptyDir`).
pub fn volume_kind(v: &Volume) -> &'static str {
    let kinds: [(bool, &str); 14] = [
        (v.persistent_volume_claim.is_some(), "persistentVolumeClaim"),
        (v.empty_dir.is_some(), "emptyDir"),
        (v.host_path.is_some(), "hostPath"),
        (v.ephemeral.is_some(), "ephemeral"),
        (v.config_map.is_some(), "configMap"),
        (v.secret.is_some(), "secret"),
        (v.projected.is_some(), "projected"),
        (v.downward_api.is_some(), "downwardAPI"),
        (v.nfs.is_some(), "nfs"),
        (v.csi.is_some(), "csi"),
        (v.image.is_some(), "image"),
        (v.aws_elastic_block_store.is_some(), "awsElasticBlockStore"),
        (v.fc.is_some(), "fc"),
        (v.iscsi.is_some(), "iscsi"),
    ];
    kinds
        .iter()
        .find(|(set, _)| *set)
        .map_or("volume", |(_, k)| k)
}

/// The claims a pod mounts: `persistentVolumeClaim.claimName` of each volume, in order.
pub fn claim_names(spec: &PodSpec) -> Vec<String> {
    let volumes = spec.volumes.iter().flatten();
    let claims = volumes.filter_map(|v| v.persistent_volume_claim.as_ref());
    claims.map(|p| p.claim_name.clone()).collect()
}

/// `data` of a ConfigMap (core/v1: string values), read typed so a malformed object is bad input.
/// `binaryData` is no file the tools read as text.
pub type Data = BTreeMap<String, String>;

pub fn config_map_data(o: &Obj) -> Result<Data, InputError> {
    let cm: ConfigMap = o.parse()?;
    Ok(cm.data.unwrap_or_default())
}

/// The ConfigMap file at `inner` (a path inside the volume) of a `configMap` or `projected`
/// volume: the ConfigMap and the key it comes from. With `items` only the listed paths exist, each
/// from its key; without, every key is a file of its name (core/v1
/// `ConfigMapVolumeSource.items`, `ConfigMapProjection`). Of several sources, one where
/// `exists(config_map, key)` wins. The key is None when the volume holds no file at that path;
/// a key may also be missing from the ConfigMap, which the caller checks. None: the volume shows
/// no ConfigMap.
pub fn config_map_key(
    v: &Volume,
    inner: &str,
    exists: impl Fn(&str, &str) -> bool,
) -> Option<(String, Option<String>)> {
    let mut sources: Vec<(&str, Option<&Vec<KeyToPath>>)> = Vec::new();
    if let Some(cm) = &v.config_map {
        sources.push((&cm.name, cm.items.as_ref()));
    }
    for p in v.projected.iter().flat_map(|p| p.sources.iter().flatten()) {
        if let Some(cm) = &p.config_map {
            sources.push((&cm.name, cm.items.as_ref()));
        }
    }
    let mut fallback = None;
    for (name, items) in &sources {
        match items {
            Some(items) => {
                if let Some(i) = items.iter().find(|i| clean(&i.path) == clean(inner)) {
                    return Some((name.to_string(), Some(i.key.clone())));
                }
            }
            None if exists(name, inner) => return Some((name.to_string(), Some(inner.into()))),
            None => {
                fallback.get_or_insert((name.to_string(), Some(inner.to_string())));
            }
        }
    }
    fallback.or_else(|| sources.first().map(|(n, _)| (n.to_string(), None)))
}

/// The ConfigMap and key of the file at `path` in container `c` (relative paths from its
/// `workingDir`), when a ConfigMap volume holds one there.
pub fn config_map_at(path: &str, spec: &PodSpec, c: &Container) -> Option<(String, String)> {
    let path = absolute(path, c)?;
    let on = volume_at(&path, c, "", spec)?;
    match config_map_key(on.volume?, &on.inner, |_, _| false)? {
        (cm, Some(key)) => Some((cm, key)),
        (_, None) => None,
    }
}

/// The ConfigMap file at `path` in container `c` with its text: (ConfigMap, key, text). None
/// when no ConfigMap volume holds it or the ConfigMap (or key) is not among `config_maps`.
pub fn config_map_file(
    path: &str,
    spec: &PodSpec,
    c: &Container,
    config_maps: &[&Obj],
) -> Option<(String, String, String)> {
    let text = |cm: &str, key: &str| {
        let o = config_maps.iter().find(|o| o.name() == cm)?;
        o.value["data"][key].as_str().map(str::to_string)
    };
    let path = absolute(path, c)?;
    let on = volume_at(&path, c, "", spec)?;
    let (cm, key) = config_map_key(on.volume?, &on.inner, |cm, k| text(cm, k).is_some())?;
    let key = key?;
    let text = text(&cm, &key)?;
    Some((cm, key, text))
}

/// What the API server refuses in the volume mounts of every app and init container of a
/// template (kubernetes `pkg/apis/core/validation/validation.go` `ValidateVolumeMounts`: a mount
/// names a volume of the pod, has a `mountPath`, and no two mounts of a container share one), as
/// `(field, kubectl's text)`.
pub fn mount_rejections(t: &PodTemplate) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let init = t.spec.init_containers.iter().flatten().enumerate();
    let fields: Vec<(String, &Container)> = t
        .containers()
        .map(|(c, p)| (p.to_string(), c))
        .chain(init.map(|(i, c)| (t.field(&format!("initContainers[{i}]")), c)))
        .collect();
    for (field, c) in fields {
        let mut seen: Vec<&str> = Vec::new();
        for (i, m) in c.volume_mounts.iter().flatten().enumerate() {
            let at = format!("{field}.volumeMounts[{i}]");
            if m.name.is_empty() {
                out.push((format!("{at}.name"), format!("{at}.name: Required value")));
            } else if !t.spec.volumes.iter().flatten().any(|v| v.name == m.name) {
                let text = format!("{at}.name: Not found: \"{}\"", m.name);
                out.push((format!("{at}.name"), text));
            }
            let path = format!("{at}.mountPath");
            if m.mount_path.is_empty() {
                out.push((path.clone(), format!("{path}: Required value")));
            } else if seen.contains(&m.mount_path.as_str()) {
                let text = format!(
                    "{path}: Invalid value: \"{}\": must be unique",
                    m.mount_path
                );
                out.push((path, text));
            }
            seen.push(&m.mount_path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;
    use crate::verify::kit::k8s::workload::Workload;
    use k8s_openapi::api::core::v1::{ConfigMapProjection, ConfigMapVolumeSource};
    use k8s_openapi::api::core::v1::{ProjectedVolumeSource, VolumeProjection};
    use serde_json::json;

    fn container(mounts: &[(&str, &str, Option<&str>)], wd: Option<&str>) -> Container {
        Container {
            name: "trainer".into(),
            working_dir: wd.map(str::to_string),
            volume_mounts: Some(
                mounts
                    .iter()
                    .map(|(n, p, s)| VolumeMount {
                        name: n.to_string(),
                        mount_path: p.to_string(),
                        sub_path: s.map(str::to_string),
                        ..VolumeMount::default()
                    })
                    .collect(),
            ),
            ..Container::default()
        }
    }

    fn items(items: &[(&str, &str)]) -> Option<Vec<KeyToPath>> {
        (!items.is_empty()).then(|| {
            let item = |(k, p): &(&str, &str)| KeyToPath {
                key: k.to_string(),
                path: p.to_string(),
                mode: None,
            };
            items.iter().map(item).collect()
        })
    }

    fn cm_volume(name: &str, cm: &str, keys: &[(&str, &str)]) -> Volume {
        Volume {
            name: name.into(),
            config_map: Some(ConfigMapVolumeSource {
                name: cm.into(),
                items: items(keys),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        }
    }

    fn obj(v: serde_json::Value) -> Obj {
        let origin = Origin::File {
            path: "x.yaml".into(),
            doc: 1,
            item: None,
        };
        Obj::new(v, origin).unwrap()
    }

    #[test]
    fn paths_are_made_absolute_from_the_working_dir() {
        let c = container(&[], Some("/work"));
        assert_eq!(absolute("ds.json", &c).as_deref(), Some("/work/ds.json"));
        assert_eq!(absolute("/a/./b/../c//d", &c).as_deref(), Some("/a/c/d"));
        assert_eq!(absolute("ds.json", &container(&[], None)), None);
    }

    #[test]
    fn the_deepest_mount_holds_a_path_with_its_sub_path() {
        let c = container(
            &[("data", "/mnt", None), ("ckpt", "/mnt/ckpt/", Some("run1"))],
            None,
        );
        let spec = PodSpec::default();
        let on = volume_at("/mnt/ckpt/x/y", &c, "c", &spec).unwrap();
        assert_eq!(on.mount.name, "ckpt");
        assert_eq!(on.inner, "run1/x/y");
        assert_eq!(on.mount_field, "c.volumeMounts[1]");
        assert!(on.volume.is_none());
        let top = volume_at("/mnt", &c, "c", &spec).unwrap();
        assert_eq!(top.mount.name, "data");
        // A sibling with a common prefix is not under the mount.
        assert!(volume_at("/mntx/a", &c, "c", &spec).is_none());
        let root = container(&[("all", "/", None)], None);
        assert_eq!(volume_at("/a/b", &root, "c", &spec).unwrap().inner, "a/b");
    }

    #[test]
    fn config_map_files_come_from_their_key() {
        let has = |_: &str, k: &str| k == "ds_config.json";
        let plain = cm_volume("v", "ds", &[]);
        let file = |key: &str| Some(("ds".to_string(), Some(key.to_string())));
        assert_eq!(
            config_map_key(&plain, "ds_config.json", has),
            file("ds_config.json")
        );
        // Without items every key is a file: a name that is no key is returned for the caller
        // to find missing.
        assert_eq!(config_map_key(&plain, "ds.json", has), file("ds.json"));
        let listed = cm_volume("v", "ds", &[("ds_config.json", "zero3/ds.json")]);
        assert_eq!(
            config_map_key(&listed, "zero3/ds.json", has),
            file("ds_config.json")
        );
        // With items, a path not listed is no file at all, even when a key has that name.
        assert_eq!(
            config_map_key(&listed, "ds_config.json", has),
            Some(("ds".to_string(), None))
        );
        let empty = Volume {
            name: "e".into(),
            ..Volume::default()
        };
        assert_eq!(config_map_key(&empty, "x", has), None);
        // A projected volume of two ConfigMaps: the one that has the key.
        let source = |cm: &str| VolumeProjection {
            config_map: Some(ConfigMapProjection {
                name: cm.into(),
                ..ConfigMapProjection::default()
            }),
            ..VolumeProjection::default()
        };
        let projected = Volume {
            name: "p".into(),
            projected: Some(ProjectedVolumeSource {
                sources: Some(vec![source("other"), source("ds")]),
                ..ProjectedVolumeSource::default()
            }),
            ..Volume::default()
        };
        let in_ds = |cm: &str, k: &str| cm == "ds" && k == "ds_config.json";
        assert_eq!(
            config_map_key(&projected, "ds_config.json", in_ds),
            file("ds_config.json")
        );
    }

    #[test]
    fn a_config_map_file_is_read_through_the_mount_it_lies_under() {
        let spec = PodSpec {
            volumes: Some(vec![
                cm_volume("cfg", "ds", &[]),
                cm_volume("one", "ds", &[("ds_config.json", "renamed.json")]),
            ]),
            ..PodSpec::default()
        };
        let c = container(
            &[("cfg", "/etc/ds", None), ("one", "/etc/ds/deep", None)],
            Some("/etc/ds"),
        );
        let cm = obj(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ds"},
            "data": {"ds_config.json": "{}"}}),
        );
        let read = |p: &str| config_map_file(p, &spec, &c, &[&cm]);
        let want = Some(("ds".into(), "ds_config.json".into(), "{}".into()));
        assert_eq!(read("/etc/ds/ds_config.json"), want);
        // Relative to the working directory, and through the deeper mount's items.
        assert_eq!(read("ds_config.json"), want);
        assert_eq!(read("/etc/ds/deep/renamed.json"), want);
        assert_eq!(read("/etc/ds/missing.json"), None);
        assert_eq!(
            config_map_at("/etc/ds/missing.json", &spec, &c),
            Some(("ds".into(), "missing.json".into()))
        );
        assert_eq!(
            config_map_at("/etc/ds/deep/ds_config.json", &spec, &c),
            None
        );
        assert_eq!(claim_names(&spec), Vec::<String>::new());
    }

    #[test]
    fn config_map_data_is_read_typed() {
        let ok = obj(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
            "data": {"k": "v"}}),
        );
        assert_eq!(
            config_map_data(&ok).unwrap().get("k").map(String::as_str),
            Some("v")
        );
        let bad = obj(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
            "data": {"k": 3}}),
        );
        assert!(config_map_data(&bad).is_err());
    }

    #[test]
    fn the_api_server_refuses_a_mount_without_a_volume_or_path_or_twice_at_one_path() {
        let job = obj(
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"volumes": [{"name": "data", "emptyDir": {}}],
                "initContainers": [{"name": "init", "image": "x",
                    "volumeMounts": [{"name": "", "mountPath": "/a"}]}],
                "containers": [{"name": "c", "image": "x", "volumeMounts": [
                    {"name": "data", "mountPath": "/d"},
                    {"name": "gone", "mountPath": "/d"},
                    {"name": "data", "mountPath": ""}]}]}}}}),
        );
        let w = Workload::from_obj(&job).unwrap().unwrap();
        let texts: Vec<String> = mount_rejections(&w.templates[0])
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        let c = "spec.template.spec.containers[0].volumeMounts";
        assert_eq!(
            texts,
            [
                format!("{c}[1].name: Not found: \"gone\""),
                format!("{c}[1].mountPath: Invalid value: \"/d\": must be unique"),
                format!("{c}[2].mountPath: Required value"),
                "spec.template.spec.initContainers[0].volumeMounts[0].name: Required value"
                    .to_string(),
            ]
        );
    }
}
