//! The training container of a pod template: which container a check reads when there are
//! several (a sidecar, a log shipper), and the API server's answer when there is none.

use k8s_openapi::api::core::v1::Container;

use crate::verify::kit::k8s::rejection::Rejection;
use crate::verify::kit::k8s::resources;
use crate::verify::kit::k8s::workload::PodTemplate;
use crate::verify::Outcome;

/// Whether a container asks for some of `resource` in its limits (the only place an extended
/// resource may be asked for: kubernetes `ValidateResourceRequirements`). A quantity that does
/// not parse is no ask; the API server's refusal of it is a [`Rejection`].
pub fn asks_for(c: &Container, resource: &str) -> bool {
    resources::limit(c, resource)
        .ok()
        .flatten()
        .is_some_and(|q| !q.is_zero())
}

/// The first container that meets the first rule any container meets, else the first container
/// (with its field path). Rules go from the most telling (asks for the accelerator) to the
/// least (runs the expected image).
pub fn pick<'a>(
    t: &'a PodTemplate,
    rules: &[&dyn Fn(&Container) -> bool],
) -> Option<(&'a Container, &'a str)> {
    rules
        .iter()
        .find_map(|rule| t.containers().find(|(c, _)| rule(c)))
        .or_else(|| t.containers().next())
}

/// The template has no container: the API server refuses it
/// (`spec.template.spec.containers: Required value`, kubernetes `validatePodSpec`).
pub fn no_container(check: &str, t: &PodTemplate) -> Outcome {
    let field = t.field("containers");
    let error = format!("{field}: Required value");
    Outcome::fail(check, "—", error.clone())
        .hint("rejected")
        .with("error", error)
        .with("field", field)
}

/// Whether a rejection is about container resources (it then belongs to the resource check,
/// and the other checks read the rest of the container).
pub fn is_about_resources(r: &Rejection) -> bool {
    r.field.contains(".resources")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Status;
    use k8s_openapi::api::core::v1::PodSpec;

    fn template(containers: serde_json::Value) -> PodTemplate {
        let spec: PodSpec =
            serde_json::from_value(serde_json::json!({ "containers": containers })).unwrap();
        PodTemplate::job_for_test(spec)
    }

    #[test]
    fn the_container_asking_for_the_accelerator_wins_over_the_first() {
        let t = template(serde_json::json!([
            {"name": "logs", "image": "fluent-bit"},
            {"name": "zero", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "0"}}},
            {"name": "train", "image": "nvcr.io/nvidia/clara/bionemo-framework:2.6",
             "resources": {"limits": {"nvidia.com/gpu": "8"}}}
        ]));
        let gpu = |c: &Container| asks_for(c, "nvidia.com/gpu");
        let (c, path) = pick(&t, &[&gpu]).unwrap();
        assert_eq!(
            (c.name.as_str(), path),
            ("train", "spec.template.spec.containers[2]")
        );

        // No rule met: the first container.
        let neuron = |c: &Container| asks_for(c, "aws.amazon.com/neuron");
        assert_eq!(pick(&t, &[&neuron]).unwrap().0.name, "logs");
        // A later rule is only asked when no container meets an earlier one.
        let image = |c: &Container| c.image.as_deref() == Some("x");
        assert_eq!(pick(&t, &[&neuron, &image]).unwrap().0.name, "zero");
        assert_eq!(pick(&t, &[&gpu, &image]).unwrap().0.name, "train");
        assert!(pick(&template(serde_json::json!([])), &[&gpu]).is_none());
    }

    #[test]
    fn an_unparsable_quantity_is_no_ask() {
        let t = template(serde_json::json!([
            {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "lots"}}}
        ]));
        assert!(!asks_for(&t.spec.containers[0], "nvidia.com/gpu"));
    }

    #[test]
    fn no_container_is_the_api_servers_refusal() {
        let o = no_container("image", &template(serde_json::json!([])));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.hint.as_deref(), Some("rejected"));
        assert_eq!(
            o.found.as_deref(),
            Some("spec.template.spec.containers: Required value")
        );
        let r = |field: &str| Rejection {
            text: String::new(),
            field: field.into(),
        };
        assert!(is_about_resources(&r(
            "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"
        )));
        assert!(!is_about_resources(&r("spec.template.spec.restartPolicy")));
    }
}
