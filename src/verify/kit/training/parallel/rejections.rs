//! What the API server and the training-operator's webhook would refuse in a training job.

use crate::verify::kit::k8s::rejection::Rejection;
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::views::pytorch::{self, NprocPerNode as SpecNproc, PyTorchJob};

/// Everything the API server and the operator's webhook would refuse in a training job: a
/// PyTorchJob's ([`pytorchjob_rejections`]) or a TrainJob's (kit `trainjob::rejections`).
pub fn rejections(w: &Workload) -> Vec<Rejection> {
    match w.pytorch() {
        Some(job) => pytorchjob_rejections(w, job),
        None => super::super::trainjob::rejections(w),
    }
}

/// Everything the API server would refuse in a PyTorchJob: the CRD's schema for
/// `spec.nprocPerNode` (a string), the training-operator's validating webhook
/// (kubeflow/training-operator `pkg/webhooks/pytorch/pytorchjob_webhook.go` and
/// `pkg/webhooks/utils/utils.go` `ValidateReplicaSpecs`: replica types exactly `Master` and
/// `Worker`, containers with images, one container named `pytorch`, `Master.replicas` written
/// and 1, `Worker.replicas` at least 1, a Worker with `elasticPolicy`, not both nproc fields)
/// and the pod validation each template's pods go through ([`resources::validate_pod_spec`]).
pub fn pytorchjob_rejections(w: &Workload, job: &PyTorchJob) -> Vec<Rejection> {
    let mut out = Vec::new();
    let mut add = |field: String, text: String| out.push(Rejection { field, text });
    let root = "spec.pytorchReplicaSpecs";
    if let Some(SpecNproc::Unquoted(n)) = job.nproc_per_node() {
        // The CRD declares `nprocPerNode` a string; the API server's schema validation says so.
        add(
            "spec.nprocPerNode".into(),
            format!(
                "spec.nprocPerNode: Invalid value: \"integer\": spec.nprocPerNode in body must be of type string: \"integer\" (found {n})"
            ),
        );
    }
    if job.replica_specs().next().is_none() {
        add(
            root.into(),
            format!("{root}: Required value: must be required"),
        );
    }
    if let Some(elastic) = job.elastic() {
        if !job.replica_specs().any(|(k, _)| k == pytorch::WORKER) {
            let f = format!("{root}[{}]", pytorch::WORKER);
            add(
                f.clone(),
                format!("{f}: Required value: must be configured if elastic policy is used"),
            );
        }
        if elastic.n_proc_per_node.is_some() && job.nproc_per_node().is_some() {
            let f = "spec.elasticPolicy.nProcPerNode".to_string();
            add(
                f.clone(),
                format!("{f}: Forbidden: must not be used with spec.nprocPerNode"),
            );
        }
    }
    for (key, spec) in job.replica_specs() {
        let role = format!("{root}[{key}]");
        if key != pytorch::MASTER && key != pytorch::WORKER {
            add(
                role.clone(),
                format!("{role}: Unsupported value: \"{key}\": supported values: \"Master\", \"Worker\""),
            );
        }
        let containers = format!("{role}.template.spec.containers");
        let pod = spec.pod_spec();
        let list = pod.map(|p| p.containers.as_slice()).unwrap_or_default();
        if list.is_empty() {
            add(
                containers.clone(),
                format!("{containers}: Required value: must be specified"),
            );
        }
        for (i, c) in list.iter().enumerate() {
            if c.image.as_deref().unwrap_or_default().is_empty() {
                let f = format!("{containers}[{i}].image");
                add(f.clone(), format!("{f}: Required value: must be required"));
            }
        }
        if !list.iter().any(|c| c.name == pytorch::DEFAULT_CONTAINER) {
            add(
                containers.clone(),
                format!(
                    "{containers}: Required value: must have at least one container with name {}",
                    pytorch::DEFAULT_CONTAINER
                ),
            );
        }
        let replicas = format!("{role}.replicas");
        if key == pytorch::MASTER && spec.replicas != Some(1) {
            add(
                replicas.clone(),
                format!("{replicas}: Forbidden: must be 1"),
            );
        } else if key == pytorch::WORKER && spec.replicas.is_some_and(|r| r < 1) {
            add(
                replicas.clone(),
                format!("{replicas}: Forbidden: must be at least 1"),
            );
        }
    }
    for t in &w.templates {
        for v in resources::validate_pod_spec(&t.spec, &t.path) {
            add(v.path.clone(), v.api_server_text());
        }
    }
    out
}
