//! Which volume a path in a container lies on (core/v1 `VolumeMount`: the mount at `mountPath`
//! shows the volume's `subPath`; a deeper mount shadows a shallower one), and what kind of
//! volume it is.

use k8s_openapi::api::core::v1::{ConfigMapVolumeSource, Container, PodSpec, Volume, VolumeMount};

use crate::observe::Obj;

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

/// The ConfigMap volume mounted where `path` is, with the file's path inside the volume
/// (core/v1 `VolumeMount.subPath`, `ConfigMapVolumeSource.items`).
pub fn config_map_at<'a>(
    path: &str,
    spec: &'a PodSpec,
    c: &Container,
) -> Option<(&'a ConfigMapVolumeSource, String)> {
    for m in c.volume_mounts.iter().flatten() {
        let Some(vol) = spec.volumes.iter().flatten().find(|v| v.name == m.name) else {
            continue;
        };
        let Some(src) = &vol.config_map else { continue };
        let mount = m.mount_path.trim_end_matches('/');
        let inner = match m.sub_path.as_deref().filter(|s| !s.is_empty()) {
            Some(sub) if path == mount => sub.to_string(),
            Some(_) => continue,
            None => match path.strip_prefix(mount).and_then(|r| r.strip_prefix('/')) {
                Some(rel) => rel.to_string(),
                None => continue,
            },
        };
        let key = match &src.items {
            Some(items) => items.iter().find(|i| i.path == inner)?.key.clone(),
            None => inner,
        };
        return Some((src, key));
    }
    None
}

/// The ConfigMap key mounted at `path` in container `c`: (ConfigMap, key, text).
pub fn config_map_file(
    path: &str,
    spec: &PodSpec,
    c: &Container,
    config_maps: &[&Obj],
) -> Option<(String, String, String)> {
    let (src, key) = config_map_at(path, spec, c)?;
    let cm = config_maps.iter().find(|o| o.name() == src.name)?;
    let text = cm.value["data"][key.as_str()].as_str()?;
    Some((src.name.clone(), key, text.to_string()))
}
