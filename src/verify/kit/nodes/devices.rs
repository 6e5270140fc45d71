//! Device resources a training pod takes (`nvidia.com/gpu`, `vpc.amazonaws.com/efa`,
//! `aws.amazon.com/neuron`): whether a container names them, the count it asks for, what a
//! whole node of each allowed instance type has (the facts table), and the API server's
//! refusals of how they are written, as one fail per refusal.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Container;

use crate::facts::instances::{self, Instance, INSTANCE_TYPE_LABEL};
use crate::facts::NodeFacts;
use crate::verify::kit::k8s::placement::{self, Allowed};
use crate::verify::kit::k8s::resources::{self, Rule, Violation};
use crate::verify::kit::k8s::workload::{PodTemplate, Workload};
use crate::verify::Outcome;

/// Whether a container names `resource` in its limits or its requests.
pub fn mentions(c: &Container, resource: &str) -> bool {
    let r = c.resources.as_ref();
    let has = |m: Option<&BTreeMap<String, _>>| m.is_some_and(|m| m.contains_key(resource));
    has(r.and_then(|r| r.limits.as_ref())) || has(r.and_then(|r| r.requests.as_ref()))
}

/// Whether a container names `resource` in its limits (where extended resources belong).
pub fn in_limits(c: &Container, resource: &str) -> bool {
    c.resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .is_some_and(|m| m.contains_key(resource))
}

/// The whole count a container asks for: its limit, else its request. A requests/limits
/// mismatch or a fraction is left to [`refused`], so it is reported once, by the API's rule.
pub fn count_of(c: &Container, resource: &str) -> Option<i64> {
    let limit = resources::limit_count(c, resource).ok().flatten();
    limit.or_else(|| resources::effective_count(c, resource).ok().flatten())
}

/// The count as written (limit, else request), `—` when absent.
pub fn count_text(c: &Container, resource: &str) -> String {
    let q = resources::limit(c, resource).ok().flatten();
    let q = q.or_else(|| resources::request(c, resource).ok().flatten());
    q.map_or_else(|| "—".to_string(), |q| q.as_str().to_string())
}

/// The instance types a template's counts are judged against, and where they came from: the
/// types its placement allows (`<template path>`), else the types of the nodes its pods were
/// bound to (`spec.nodeName: <nodes>`), else `--param instance_type`.
pub fn judged_types(
    t: &PodTemplate,
    bound: &[&NodeFacts],
    param: Option<&str>,
) -> Option<(BTreeSet<String>, String)> {
    if let Allowed::Only(set) = placement::allowed_values(&t.spec, INSTANCE_TYPE_LABEL) {
        return Some((set, t.path.clone()));
    }
    let types: BTreeSet<String> = bound
        .iter()
        .filter_map(|n| n.instance_type.clone())
        .collect();
    if !types.is_empty() {
        let names: Vec<&str> = bound.iter().map(|n| n.name.as_str()).collect();
        return Some((types, format!("spec.nodeName: {}", names.join(", "))));
    }
    let t = param?;
    Some((
        BTreeSet::from([t.to_string()]),
        "--param instance_type".into(),
    ))
}

/// One figure of a whole node (`|i| i.efa`) for each of a set of instance types; None for a
/// type the facts table does not list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerType(pub BTreeMap<String, Option<u32>>);

impl PerType {
    pub fn of(types: &BTreeSet<String>, figure: impl Fn(&Instance) -> u32) -> PerType {
        let by = |t: &String| (t.clone(), instances::lookup(t).map(&figure));
        PerType(types.iter().map(by).collect())
    }

    /// Types the table does not list.
    pub fn unknown(&self) -> Vec<&str> {
        let none = self.0.iter().filter(|(_, f)| f.is_none());
        none.map(|(t, _)| t.as_str()).collect()
    }

    /// Listed types whose figure is 0 (e.g. a Trainium type's GPUs).
    pub fn lacking(&self) -> Vec<&str> {
        let zero = self.0.iter().filter(|(_, f)| **f == Some(0));
        zero.map(|(t, _)| t.as_str()).collect()
    }

    /// The distinct figures of the listed types.
    pub fn figures(&self) -> BTreeSet<u32> {
        self.0.values().flatten().copied().collect()
    }

    /// The figure every type has, when every type is listed and they agree.
    pub fn agreed(&self) -> Option<u32> {
        let f = self.figures();
        (f.len() == 1 && self.unknown().is_empty()).then(|| f.first().copied())?
    }

    /// `p4d.24xlarge 4, p5.48xlarge 32` (an unlisted type shows 0).
    pub fn describe(&self) -> String {
        let each = |(t, f): (&String, &Option<u32>)| format!("{t} {}", f.unwrap_or(0));
        self.0.iter().map(each).collect::<Vec<_>>().join(", ")
    }
}

/// The API server's refusals of `resource` in any template of a workload (it refuses the pods
/// made from it).
pub fn violations(wl: &Workload, resource: &str) -> Vec<Violation> {
    let all = wl.templates.iter();
    all.flat_map(|t| resources::validate_pod_spec(&t.spec, &t.path))
        .filter(|v| v.resource == resource)
        .collect()
}

/// A refusal as a fail of `check`. Hints: `requests-only` (expected: the limits field; found:
/// the request as written), `mismatch` (expected/found: `<res>: requests N, limits M`),
/// `api-rule` (any other rule; expected: the field, found: the value). Evidence: `path` (the
/// container), `api_error` (the API server's words, as `kubectl apply` prints them).
pub fn refused(check: &str, wl: &Workload, v: &Violation) -> Outcome {
    let cpath = v.path.split(".resources.").next().unwrap_or(&v.path);
    let c = wl.containers().find(|(_, c, _)| c.name == v.container);
    let written = |limits: bool| {
        let r = c.and_then(|(_, c, _)| c.resources.as_ref());
        let m = r.and_then(|r| {
            if limits {
                r.limits.as_ref()
            } else {
                r.requests.as_ref()
            }
        });
        let q = m.and_then(|m| m.get(&v.resource)).map(|q| q.0.clone());
        q.unwrap_or_else(|| "—".into())
    };
    let res = &v.resource;
    let (hint, expected, found) = match v.rule {
        Rule::LimitRequired => (
            "requests-only",
            v.path.clone(),
            format!("{cpath}.resources.requests[{res}]: {}", written(false)),
        ),
        Rule::MustEqualLimit => {
            let lim = written(true);
            let show = |req: &str| format!("{res}: requests {req}, limits {lim}");
            ("mismatch", show(&lim), show(&written(false)))
        }
        _ => (
            "api-rule",
            v.path.clone(),
            v.value.clone().unwrap_or_default(),
        ),
    };
    Outcome::fail(check, expected, found)
        .hint(hint)
        .with("path", cpath)
        .with("api_error", v.api_server_text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Obj, Origin};
    use serde_json::{json, Value};

    fn container(resources: Value) -> Container {
        serde_json::from_value(json!({"name": "c", "resources": resources})).unwrap()
    }

    fn job(spec: Value) -> Obj {
        let v = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                       "spec": {"template": {"spec": spec}}});
        let origin = Origin::File {
            path: "job.yaml".into(),
            doc: 1,
            item: None,
        };
        Obj::new(v, origin).unwrap()
    }

    const EFA: &str = instances::EFA;

    #[test]
    fn counts_read_the_limit_else_the_request() {
        let c = container(json!({"limits": {EFA: "32"}, "requests": {EFA: "16"}}));
        assert_eq!(
            (count_of(&c, EFA), count_text(&c, EFA)),
            (Some(32), "32".into())
        );
        let c = container(json!({"requests": {EFA: "4"}}));
        assert_eq!((count_of(&c, EFA), in_limits(&c, EFA)), (Some(4), false));
        assert!(mentions(&c, EFA));
        let c = container(json!({}));
        assert_eq!((count_of(&c, EFA), count_text(&c, EFA)), (None, "—".into()));
    }

    #[test]
    fn whole_node_figures_per_type() {
        let types = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let p = PerType::of(&types(&["p5.48xlarge", "p5e.48xlarge"]), |i| i.efa);
        assert_eq!(p.agreed(), Some(32));
        let p = PerType::of(&types(&["p4d.24xlarge", "p5.48xlarge"]), |i| i.efa);
        assert_eq!(
            (p.agreed(), p.describe().as_str()),
            (None, "p4d.24xlarge 4, p5.48xlarge 32")
        );
        let p = PerType::of(&types(&["g5.48xlarge", "trn1.32xlarge"]), |i| i.gpus);
        assert_eq!(
            (p.unknown(), p.lacking(), p.agreed()),
            (vec!["g5.48xlarge"], vec!["trn1.32xlarge"], None)
        );
    }

    #[test]
    fn judged_types_come_from_placement_then_nodes_then_the_param() {
        let o = job(
            json!({"nodeSelector": {INSTANCE_TYPE_LABEL: "p5.48xlarge"}, "containers": [{"name": "c"}]}),
        );
        let wl = Workload::from_obj(&o).unwrap().unwrap();
        let (t, from) = judged_types(&wl.templates[0], &[], Some("p4d.24xlarge")).unwrap();
        assert_eq!(
            (t.first().unwrap().as_str(), from.as_str()),
            ("p5.48xlarge", "spec.template.spec")
        );
        let o = job(json!({"containers": [{"name": "c"}]}));
        let wl = Workload::from_obj(&o).unwrap().unwrap();
        let (t, from) = judged_types(&wl.templates[0], &[], Some("p4d.24xlarge")).unwrap();
        assert_eq!(
            (t.first().unwrap().as_str(), from.as_str()),
            ("p4d.24xlarge", "--param instance_type")
        );
        assert_eq!(judged_types(&wl.templates[0], &[], None), None);
    }

    #[test]
    fn refusals_become_one_fail_quoting_the_api_server() {
        let o = job(json!({"containers": [{"name": "c", "resources": {
            "limits": {EFA: "32"}, "requests": {EFA: "16"}}}]}));
        let wl = Workload::from_obj(&o).unwrap().unwrap();
        let v = violations(&wl, EFA);
        let f = refused("x", &wl, &v[0]);
        assert_eq!(f.hint.as_deref(), Some("mismatch"));
        assert_eq!(
            f.found.as_deref(),
            Some("vpc.amazonaws.com/efa: requests 16, limits 32")
        );
        let o = job(json!({"containers": [{"name": "c", "resources": {"requests": {EFA: "8"}}}]}));
        let wl = Workload::from_obj(&o).unwrap().unwrap();
        let f = refused("x", &wl, &violations(&wl, EFA)[0]);
        assert_eq!(f.hint.as_deref(), Some("requests-only"));
        assert_eq!(f.evidence["path"], "spec.template.spec.containers[0]");
        assert!(f.evidence["api_error"].contains("Limit must be set"));
    }
}
