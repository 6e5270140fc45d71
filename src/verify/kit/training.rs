//! Training jobs as the labs grade them: the object's served version, what the API server and the
//! training-operator's webhook refuse before a pod exists, the training command a container runs
//! (through shells and launchers), and the DeepSpeed config it is given.

use k8s_openapi::api::core::v1::{Container, PodSpec};

use crate::observe::Obj;
use crate::verify::kit::cmdline::{
    deepspeed_config_arg, invocations, Args, DsConfig, FlagError, Launch,
};
use crate::verify::kit::mounts::config_map_file;
use crate::verify::kit::resources::validate_pod_spec;
use crate::verify::kit::workload::{PodTemplate, Workload};
use crate::verify::views::pytorch;
use crate::verify::{JudgeCtx, Judgement, Outcome, MISSING_HINT};

/// A manifest in another version of the kind is refused by `kubectl apply` (no such version is
/// served), so the object would not exist: every check fails with the lab's `missing` text.
pub fn wrong_version(ctx: &JudgeCtx, obj: &Obj, want: &str, checks: &[&str]) -> Option<Judgement> {
    if obj.api_version() == want {
        return None;
    }
    let kind = obj.kind().to_string();
    let found = format!("{} {kind} {}", obj.api_version(), obj.name());
    let expected = format!("{want} {kind} {}", obj.name());
    let ns = ctx.target.namespace.clone();
    let name = obj.name().to_string();
    Some(Judgement::every(checks, |c| {
        Outcome::fail(c, expected.clone(), found.clone())
            .hint(MISSING_HINT)
            .with("name", &name)
            .with("kind", &kind)
            .with("api_version", want)
            .with("namespace", &ns)
    }))
}

/// The first error the API server (pod validation) or, for a PyTorchJob, the training-operator's
/// validating webhook would answer `kubectl apply` or pod creation with.
pub struct Rejection {
    /// `<field path>: <error>` as the API server prints it.
    pub text: String,
    pub field: String,
}

impl Rejection {
    pub fn outcome(&self, check: &str) -> Outcome {
        Outcome::fail(check, "—", self.text.clone())
            .hint("rejected")
            .with("error", &self.text)
            .with("field", &self.field)
    }
}

/// Pod validation of every template (kit `resources::validate_pod_spec`), a Job's
/// `restartPolicy`, and the PyTorchJob
/// webhook's rules (kubeflow/training-operator v1.9.4 `pkg/webhooks/pytorch/pytorchjob_webhook.go`
/// `validatePyTorchReplicaSpecs`): only `Master`/`Worker` keys, a container named `pytorch` with
/// an image in each, and `Master.replicas` exactly 1 (unset included: the webhook sees the object
/// before any defaulting).
pub fn rejections(job: &Workload) -> Option<Rejection> {
    if let Some(v) = job.pytorch() {
        if v.replica_specs().next().is_none() {
            return Some(Rejection {
                text: "spec.pytorchReplicaSpecs: Required value: must be required".into(),
                field: "spec.pytorchReplicaSpecs".into(),
            });
        }
        for (key, rs) in v.replica_specs() {
            let role = format!("spec.pytorchReplicaSpecs[{key}]");
            if key != pytorch::MASTER && key != pytorch::WORKER {
                return Some(Rejection {
                    text: format!(
                        "{role}: Unsupported value: \"{key}\": supported values: \"Master\", \"Worker\""
                    ),
                    field: role,
                });
            }
            let containers = rs
                .pod_spec()
                .map(|s| s.containers.as_slice())
                .unwrap_or(&[]);
            let path = format!("{role}.template.spec.containers");
            if containers.is_empty() {
                return Some(Rejection {
                    text: format!("{path}: Required value: must be specified"),
                    field: path,
                });
            }
            for (i, c) in containers.iter().enumerate() {
                if c.image.as_deref().unwrap_or_default().is_empty() {
                    let field = format!("{path}[{i}].image");
                    return Some(Rejection {
                        text: format!("{field}: Required value: must be required"),
                        field,
                    });
                }
            }
            if !containers
                .iter()
                .any(|c| c.name == pytorch::DEFAULT_CONTAINER)
            {
                return Some(Rejection {
                    text: format!(
                        "{path}: Required value: must have at least one container with name pytorch"
                    ),
                    field: path,
                });
            }
            if key == pytorch::MASTER && rs.replicas != Some(1) {
                let field = format!("{role}.replicas");
                return Some(Rejection {
                    text: format!("{field}: Forbidden: must be 1"),
                    field,
                });
            }
        }
    }
    // A Job's pods may not restart `Always` (the default of a pod template): kubernetes
    // `pkg/apis/batch/validation/validation.go` `validateJobSpec`.
    if job.batch_job().is_some() {
        for t in &job.templates {
            match t.spec.restart_policy.as_deref() {
                Some("OnFailure") | Some("Never") => {}
                None | Some("") | Some("Always") => {
                    let field = t.field("restartPolicy");
                    return Some(Rejection {
                        text: format!(
                            "{field}: Required value: valid values: \"OnFailure\", \"Never\""
                        ),
                        field,
                    });
                }
                Some(other) => {
                    let field = t.field("restartPolicy");
                    return Some(Rejection {
                        text: format!("{field}: Unsupported value: \"{other}\": supported values: \"OnFailure\", \"Never\""),
                        field,
                    });
                }
            }
        }
    }
    job.templates.iter().find_map(|t| {
        validate_pod_spec(&t.spec, &t.path)
            .into_iter()
            .next()
            .map(|v| Rejection {
                text: v.api_server_text(),
                field: v.path.clone(),
            })
    })
}

/// The training command a container runs, found through shells and launchers.
pub struct Training {
    /// The launchers, outermost first (`torchrun`, `accelerate`, `deepspeed`, …).
    pub launchers: Vec<Launch>,
    pub args: Args,
    /// The command as written, for messages.
    pub display: String,
}

/// Python modules that are not a training script (`python -m pip install …`).
const NOT_TRAINING: &[&str] = &["pip", "ensurepip", "venv", "http.server"];

/// The last command of the container that reaches a training script (a setup step such as
/// `pip install … &&` comes before it). None when no command does, or the shell script cannot be
/// split (the pod would not start it either).
pub fn training_command(c: &Container) -> Option<Training> {
    let invs = invocations(c).ok()?;
    invs.iter().rev().find_map(|inv| {
        let launchers = Launch::chain(&inv.expanded);
        let entry = launchers.last().and_then(Launch::entry)?;
        if entry.module && NOT_TRAINING.contains(&entry.script.as_str()) {
            return None;
        }
        Some(Training {
            args: Args::new(entry.args.iter().cloned()),
            launchers,
            display: inv.display(),
        })
    })
}

/// The container a PyTorchJob runs its training in (the operator's `pytorch`), else the first.
pub fn main_container(t: &PodTemplate) -> Option<(&Container, &str)> {
    t.containers()
        .find(|(c, _)| c.name == pytorch::DEFAULT_CONTAINER)
        .or_else(|| t.containers().next())
}

/// Where a DeepSpeed config came from, read.
pub enum DsFound {
    None,
    Read {
        origin: String,
        config: DsConfig,
    },
    /// A path the manifests do not show (baked into the image, or a ConfigMap not applied).
    Unseen {
        origin: String,
    },
}

/// The DeepSpeed config the training command is given: inline JSON (`--deepspeed '{…}'`), or a
/// file under a ConfigMap volume of the pod (a `subPath` mount, or a directory mount with or
/// without `items`: core/v1 `ConfigMapVolumeSource`, `VolumeMount.subPath`). A config the tool
/// cannot parse is a [`FlagError`] on its flag.
pub fn deepspeed_config(
    t: &Training,
    spec: &PodSpec,
    c: &Container,
    config_maps: &[&Obj],
) -> Result<DsFound, FlagError> {
    let from_accelerate = t.launchers.iter().find_map(|l| match l {
        Launch::Accelerate(a) => a.deepspeed_config_file().map(str::to_string),
        _ => None,
    });
    let (flag, value) = match (deepspeed_config_arg(&t.args), from_accelerate) {
        (Some(s), _) => match s.known() {
            Some(v) => (s.source.clone(), v.clone()),
            None => {
                return Ok(DsFound::Unseen {
                    origin: s.as_written(),
                })
            }
        },
        (None, Some(path)) => ("--deepspeed_config_file".to_string(), path),
        (None, None) => return Ok(DsFound::None),
    };
    let parse = |text: &str, origin: String| {
        DsConfig::parse(text)
            .map(|config| DsFound::Read { origin, config })
            .map_err(|e| FlagError::Invalid {
                flag: flag.clone(),
                value: value.clone(),
                expected: e.to_string(),
            })
    };
    if value.trim_start().starts_with('{') {
        return parse(&value, flag.clone());
    }
    match config_map_file(&value, spec, c, config_maps) {
        Some((cm, key, text)) => parse(&text, format!("{value} (ConfigMap {cm}, key {key})")),
        None => Ok(DsFound::Unseen { origin: value }),
    }
}
