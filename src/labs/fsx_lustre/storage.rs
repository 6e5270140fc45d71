//! Storage as the labs grade it: persistent volume claims (what the API server refuses, the
//! StorageClass a claim names, whether a pod template mounts it), StorageClasses (their string
//! `parameters`), and the events provisioners and the kubelet write about such objects
//! (core/v1 `PersistentVolumeClaimSpec`, `PersistentVolumeClaimVolumeSource`, `VolumeMount`,
//! `Event`; storage.k8s.io/v1 `StorageClass`).
//!
//! API-server rules: kubernetes `pkg/apis/core/validation/validation.go`
//! `ValidatePersistentVolumeClaimSpec` (access modes, the storage request) and
//! `ValidateVolumeMounts` (a mount must name a volume of the pod: `Not found`); a StorageClass's
//! `parameters` is a `map[string]string`, so any other JSON type fails decoding
//! (`json: cannot unmarshal number into Go struct field StorageClass.parameters of type string`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PersistentVolumeClaim};
use serde_json::Value;

use crate::observe::{InputError, Obj};
use crate::quantity::Quantity;
use crate::verify::kit::k8s::mounts::volume_kind;
use crate::verify::kit::k8s::workload::PodTemplate;

pub const READ_WRITE_MANY: &str = "ReadWriteMany";
const READ_WRITE_ONCE_POD: &str = "ReadWriteOncePod";
/// `supportedAccessModes`, in the order the API server lists them.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    READ_WRITE_ONCE_POD,
];
/// The claim's class before `spec.storageClassName` existed; still honoured when the field is
/// unset (kubernetes `pkg/apis/core/v1/helper` `GetPersistentVolumeClaimClass`).
const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// The parts of a claim the labs grade.
#[derive(Debug, Clone)]
pub struct Claim {
    pub access_modes: Vec<String>,
    /// `spec.storageClassName`, else the beta annotation; None: the cluster's default class.
    pub storage_class: Option<String>,
    /// `spec.resources.requests.storage`.
    pub request: Option<Quantity>,
    /// `status.phase` (`Pending`, `Bound`, `Lost`); None before the controller saw it.
    pub phase: Option<String>,
    pub volume_name: Option<String>,
    /// `status.capacity.storage`: what the bound volume holds.
    pub capacity: Option<String>,
}

impl Claim {
    /// Reads a claim; a field of the wrong type or an unreadable storage quantity is bad input.
    pub fn from_obj(o: &Obj) -> Result<Claim, InputError> {
        let pvc: PersistentVolumeClaim = o.parse()?;
        let spec = pvc.spec.unwrap_or_default();
        let request = spec
            .resources
            .and_then(|r| r.requests)
            .and_then(|r| r.get("storage").cloned())
            .map(|q| Quantity::try_from(&q))
            .transpose()
            .map_err(|e| o.field_error("spec.resources.requests.storage", e))?;
        let storage_class = spec.storage_class_name.or_else(|| {
            o.value["metadata"]["annotations"][BETA_CLASS_ANNOTATION]
                .as_str()
                .map(str::to_string)
        });
        let status = pvc.status.unwrap_or_default();
        Ok(Claim {
            access_modes: spec.access_modes.unwrap_or_default(),
            storage_class,
            request,
            phase: status.phase,
            volume_name: spec.volume_name.filter(|v| !v.is_empty()),
            capacity: status
                .capacity
                .and_then(|c| c.get("storage").map(|q| q.0.clone())),
        })
    }

    /// The API server's first refusal of this claim, as it words it (`field: error`).
    pub fn rejection(&self) -> Option<String> {
        if self.access_modes.is_empty() {
            return Some(
                "spec.accessModes: Required value: at least 1 access mode is required".into(),
            );
        }
        if let Some(m) = self
            .access_modes
            .iter()
            .find(|m| !ACCESS_MODES.contains(&m.as_str()))
        {
            let supported: Vec<String> = ACCESS_MODES.iter().map(|s| format!("\"{s}\"")).collect();
            return Some(format!(
                "spec.accessModes: Unsupported value: \"{m}\": supported values: {}",
                supported.join(", ")
            ));
        }
        if self.access_modes.len() > 1 && self.access_modes.iter().any(|m| m == READ_WRITE_ONCE_POD)
        {
            return Some(
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"
                    .into(),
            );
        }
        match &self.request {
            None => Some("spec.resources[storage]: Required value".into()),
            Some(q) if q.is_negative() || q.is_zero() => Some(format!(
                "spec.resources[storage]: Invalid value: \"{q}\": must be greater than zero"
            )),
            Some(_) => None,
        }
    }

    pub fn read_write_many(&self) -> bool {
        self.access_modes.iter().any(|m| m == READ_WRITE_MANY)
    }
}

/// How a pod template uses a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimUse {
    /// The API server refuses the template first: a mount names no volume ([`unknown_mount`]).
    Refused { field: String, error: String },
    /// A container mounts the claim's volume: `mount_field` at `path`.
    Mounted {
        volume_field: String,
        mount_field: String,
        path: String,
    },
    /// The pod has the claim as a volume, but no container mounts it.
    NotMounted { volume_field: String },
    /// No volume of the pod is the claim; `volumes` lists them (`data: emptyDir`,
    /// `data: persistentVolumeClaim other`), `claims` the other claims they name.
    Absent {
        volumes: Vec<String>,
        claims: Vec<String>,
    },
}

/// Whether template `t` mounts claim `claim` (a `persistentVolumeClaim` volume naming it, mounted
/// by one of the pod's containers).
pub fn claim_use(t: &PodTemplate, claim: &str) -> ClaimUse {
    if let Some((field, error)) = unknown_mount(t) {
        return ClaimUse::Refused { field, error };
    }
    let volumes = t.spec.volumes.as_deref().unwrap_or_default();
    let found = volumes.iter().enumerate().find(|(_, v)| {
        v.persistent_volume_claim
            .as_ref()
            .is_some_and(|p| p.claim_name == claim)
    });
    let Some((i, v)) = found else {
        return ClaimUse::Absent {
            volumes: volumes
                .iter()
                .map(|v| match &v.persistent_volume_claim {
                    Some(p) => format!("{}: persistentVolumeClaim {}", v.name, p.claim_name),
                    None => format!("{}: {}", v.name, volume_kind(v)),
                })
                .collect(),
            claims: volumes
                .iter()
                .filter_map(|v| Some(v.persistent_volume_claim.as_ref()?.claim_name.clone()))
                .collect(),
        };
    };
    let volume_field = t.field(&format!("volumes[{i}]"));
    for (c, c_path) in t.containers() {
        if let Some((j, m)) = mounts(c).find(|(_, m)| m.name == v.name) {
            return ClaimUse::Mounted {
                volume_field,
                mount_field: format!("{c_path}.volumeMounts[{j}]"),
                path: m.mount_path.clone(),
            };
        }
    }
    ClaimUse::NotMounted { volume_field }
}

fn mounts(
    c: &Container,
) -> impl Iterator<Item = (usize, &k8s_openapi::api::core::v1::VolumeMount)> {
    c.volume_mounts.iter().flatten().enumerate()
}

/// A mount the API server refuses for the volume it names (none of the pod's, or no name): the
/// first such rejection of [`crate::verify::kit::k8s::mounts::mount_rejections`], as
/// `(field, "<field>: Not found: \"name\"")`.
pub fn unknown_mount(t: &PodTemplate) -> Option<(String, String)> {
    crate::verify::kit::k8s::mounts::mount_rejections(t)
        .into_iter()
        .find(|(field, _)| field.ends_with(".name"))
}

/// A StorageClass parameter as written: a string, or another JSON type the API server refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    Text(String),
    /// Go's name of the JSON type (`number`, `bool`, `array`, `object`) and the value as written.
    Other(&'static str, String),
}

/// A StorageClass: its provisioner and parameters.
#[derive(Debug, Clone)]
pub struct StorageClass<'o> {
    pub obj: &'o Obj,
    pub provisioner: Option<String>,
    pub params: BTreeMap<String, Param>,
}

impl<'o> StorageClass<'o> {
    /// Reads a StorageClass; `provisioner` or `parameters` of the wrong shape is bad input.
    pub fn read(obj: &'o Obj) -> Result<StorageClass<'o>, InputError> {
        let provisioner = match &obj.value["provisioner"] {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            _ => return Err(obj.field_error("provisioner", "must be a string")),
        };
        let mut params = BTreeMap::new();
        match &obj.value["parameters"] {
            Value::Null => {}
            Value::Object(m) => {
                for (k, v) in m {
                    let p = match v {
                        Value::String(s) => Param::Text(s.clone()),
                        // Go decodes null into a map's zero value.
                        Value::Null => Param::Text(String::new()),
                        Value::Number(n) => Param::Other("number", n.to_string()),
                        Value::Bool(b) => Param::Other("bool", b.to_string()),
                        Value::Array(_) => Param::Other("array", v.to_string()),
                        Value::Object(_) => Param::Other("object", v.to_string()),
                    };
                    params.insert(k.clone(), p);
                }
            }
            _ => return Err(obj.field_error("parameters", "must be a mapping of strings")),
        }
        Ok(StorageClass {
            obj,
            provisioner,
            params,
        })
    }

    /// A parameter's text; a value of another type counts as written (the refusal is reported
    /// once, by [`StorageClass::not_string`]).
    pub fn text(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(|p| match p {
            Param::Text(s) | Param::Other(_, s) => s.as_str(),
        })
    }

    /// The first parameter that is not a string: `(key, Go type, value)`.
    pub fn not_string(&self) -> Option<(&str, &'static str, &str)> {
        self.params.iter().find_map(|(k, p)| match p {
            Param::Other(t, v) => Some((k.as_str(), *t, v.as_str())),
            Param::Text(_) => None,
        })
    }
}

/// The newest event about the object with `uid` (`involvedObject.uid`, never its name):
/// `(type, reason, message)`. Newest by `lastTimestamp`, `eventTime`, `series.lastObservedTime`
/// or creation, whichever is latest (RFC 3339 texts compare in time order).
pub fn latest_event<'e>(events: &[&'e Obj], uid: &str) -> Option<(&'e str, &'e str, &'e str)> {
    let s = |e: &'e Obj, p: &str| e.value.pointer(p).and_then(Value::as_str).unwrap_or("");
    let when = |e: &'e Obj| {
        [
            "/lastTimestamp",
            "/eventTime",
            "/series/lastObservedTime",
            "/metadata/creationTimestamp",
        ]
        .iter()
        .map(|p| s(e, p))
        .max()
        .unwrap_or("")
    };
    events
        .iter()
        .copied()
        .filter(|e| !uid.is_empty() && s(e, "/involvedObject/uid") == uid)
        .max_by_key(|e| when(e))
        .map(|e| (s(e, "/type"), s(e, "/reason"), s(e, "/message")))
}

/// The first of `pods` whose newest event is the kubelet's `FailedMount` warning, with its
/// message: a volume that does not mount keeps the pod in ContainerCreating (kubelet
/// `pkg/kubelet/events` `FailedMountVolume`).
pub fn failed_mount<'a>(pods: &[&'a Obj], events: &[&'a Obj]) -> Option<(&'a str, &'a str)> {
    pods.iter()
        .find_map(|p| match latest_event(events, p.uid()?)? {
            ("Warning", "FailedMount", m) => Some((p.name(), m)),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::parse_text;
    use crate::verify::kit::k8s::workload::Workload;

    fn obj(yaml: &str) -> Obj {
        parse_text(yaml, "test").unwrap().remove(0)
    }

    fn claim(spec: &str) -> Claim {
        Claim::from_obj(&obj(&format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data}}\nspec: {spec}\n"
        )))
        .unwrap()
    }

    #[test]
    fn the_api_server_refuses_claims_without_modes_or_size() {
        let c = claim("{resources: {requests: {storage: 1200Gi}}}");
        assert_eq!(
            c.rejection().as_deref(),
            Some("spec.accessModes: Required value: at least 1 access mode is required")
        );
        let c = claim("{accessModes: [ReadWriteMany]}");
        assert_eq!(
            c.rejection().as_deref(),
            Some("spec.resources[storage]: Required value")
        );
        let c = claim("{accessModes: [ReadWriteAll], resources: {requests: {storage: 1Gi}}}");
        assert!(c
            .rejection()
            .unwrap()
            .starts_with("spec.accessModes: Unsupported value: \"ReadWriteAll\""));
        let c = claim("{accessModes: [ReadWriteMany], resources: {requests: {storage: '0'}}}");
        assert_eq!(
            c.rejection().as_deref(),
            Some("spec.resources[storage]: Invalid value: \"0\": must be greater than zero")
        );
        let c = claim(
            "{accessModes: [ReadWriteOncePod, ReadWriteMany], resources: {requests: {storage: 1Gi}}}",
        );
        assert!(c
            .rejection()
            .unwrap()
            .contains("may not use ReadWriteOncePod"));
        let ok = claim("{accessModes: [ReadWriteMany], resources: {requests: {storage: 2400Gi}}}");
        assert_eq!(ok.rejection(), None);
        assert!(ok.read_write_many());
        assert_eq!(ok.request.unwrap().bytes(), 2400 << 30);
    }

    #[test]
    fn the_class_comes_from_the_field_else_the_beta_annotation() {
        let c = claim("{storageClassName: fsx}");
        assert_eq!(c.storage_class.as_deref(), Some("fsx"));
        let o = obj("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: d\n  annotations: {volume.beta.kubernetes.io/storage-class: old}\nspec: {}\n");
        assert_eq!(
            Claim::from_obj(&o).unwrap().storage_class.as_deref(),
            Some("old")
        );
        assert_eq!(claim("{}").storage_class, None);
    }

    #[test]
    fn an_unreadable_size_is_bad_input_naming_the_field() {
        let o = obj("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: d}\nspec: {resources: {requests: {storage: lots}}}\n");
        let err = Claim::from_obj(&o).unwrap_err().to_string();
        assert!(err.contains("spec.resources.requests.storage"), "{err}");
    }

    fn template(pod: &str) -> PodTemplate {
        let o = obj(&format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  template:\n    spec: {pod}\n"
        ));
        Workload::from_obj(&o).unwrap().unwrap().templates.remove(0)
    }

    #[test]
    fn a_template_mounts_the_claim_through_a_volume_and_a_mount() {
        let t = template("{containers: [{name: a, volumeMounts: [{name: d, mountPath: /data}]}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}");
        assert_eq!(
            claim_use(&t, "data"),
            ClaimUse::Mounted {
                volume_field: "spec.template.spec.volumes[0]".into(),
                mount_field: "spec.template.spec.containers[0].volumeMounts[0]".into(),
                path: "/data".into(),
            }
        );
        let t = template("{containers: [{name: a}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}");
        assert_eq!(
            claim_use(&t, "data"),
            ClaimUse::NotMounted {
                volume_field: "spec.template.spec.volumes[0]".into()
            }
        );
        let t = template("{containers: [{name: a}], volumes: [{name: d, emptyDir: {}}, {name: e, persistentVolumeClaim: {claimName: other}}]}");
        assert_eq!(
            claim_use(&t, "data"),
            ClaimUse::Absent {
                volumes: vec![
                    "d: emptyDir".into(),
                    "e: persistentVolumeClaim other".into()
                ],
                claims: vec!["other".into()],
            }
        );
    }

    #[test]
    fn a_mount_of_a_missing_volume_is_refused() {
        let t = template("{containers: [{name: a, volumeMounts: [{name: x, mountPath: /x}]}]}");
        assert!(matches!(claim_use(&t, "data"), ClaimUse::Refused { .. }));
        assert_eq!(
            unknown_mount(&t),
            Some((
                "spec.template.spec.containers[0].volumeMounts[0].name".into(),
                "spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"x\"".into()
            ))
        );
        let t = template("{containers: [{name: a}], initContainers: [{name: i, volumeMounts: [{name: cache, mountPath: /cache}]}]}");
        assert_eq!(
            unknown_mount(&t).unwrap().0,
            "spec.template.spec.initContainers[0].volumeMounts[0].name"
        );
        // No name at all is refused as the API server words it, not as "not found".
        let t = template("{containers: [{name: a, volumeMounts: [{name: '', mountPath: /x}]}]}");
        assert_eq!(
            unknown_mount(&t).unwrap().1,
            "spec.template.spec.containers[0].volumeMounts[0].name: Required value"
        );
    }

    #[test]
    fn storage_class_parameters_that_are_not_strings_are_found() {
        let o = obj("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: c}\nprovisioner: p\nparameters: {a: x, b: 250, c: true}\n");
        let c = StorageClass::read(&o).unwrap();
        assert_eq!(c.provisioner.as_deref(), Some("p"));
        assert_eq!(c.text("a"), Some("x"));
        assert_eq!(c.text("b"), Some("250"));
        assert_eq!(c.not_string(), Some(("b", "number", "250")));
        let o = obj("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: c}\nparameters: [a]\n");
        let err = StorageClass::read(&o).unwrap_err().to_string();
        assert!(err.contains("parameters"), "{err}");
    }

    #[test]
    fn the_latest_event_of_an_object_is_found_by_uid() {
        let events: Vec<Obj> = parse_text(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Event, metadata: {name: a}, involvedObject: {uid: u1, name: data}, type: Warning, reason: ProvisioningFailed, message: old, lastTimestamp: '2026-12-02T10:00:00Z'}\n- {apiVersion: v1, kind: Event, metadata: {name: b}, involvedObject: {uid: u1, name: data}, type: Normal, reason: Provisioning, message: new, eventTime: '2026-12-02T10:05:00.000001Z'}\n- {apiVersion: v1, kind: Event, metadata: {name: c}, involvedObject: {uid: u2, name: data}, type: Warning, reason: X, message: other, lastTimestamp: '2026-12-02T11:00:00Z'}\n",
            "test",
        )
        .unwrap();
        let refs: Vec<&Obj> = events.iter().collect();
        assert_eq!(
            latest_event(&refs, "u1"),
            Some(("Normal", "Provisioning", "new"))
        );
        assert_eq!(latest_event(&refs, "u3"), None);
        assert_eq!(latest_event(&refs, ""), None);
        let pod = obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: u2}\n");
        assert_eq!(failed_mount(&[&pod], &refs), None);
        let mounting = obj("apiVersion: v1\nkind: Event\nmetadata: {name: m}\ninvolvedObject: {uid: u2}\ntype: Warning\nreason: FailedMount\nmessage: lustre mount timed out\nlastTimestamp: '2026-12-02T12:00:00Z'\n");
        let with: Vec<&Obj> = refs.iter().copied().chain([&mounting]).collect();
        assert_eq!(
            failed_mount(&[&pod], &with),
            Some(("p", "lustre mount timed out"))
        );
    }
}
