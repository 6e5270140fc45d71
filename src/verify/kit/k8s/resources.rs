//! What a pod asks for, and the API server's rules for container resources.
//!
//! - Per container: [`limit`], [`request`] and [`effective_request`] (the request, or the limit
//!   when only the limit is set: `SetDefaults_Pod`, kubernetes `pkg/apis/core/v1/defaults.go`,
//!   "If limits are specified, but requests are not, default requests to limits", for every
//!   resource of app and init containers; it runs on Pods only, not on templates, but every pod
//!   a controller creates from a template goes through it).
//! - Per pod: [`pod_requests`] / [`pod_request`], the rule of `PodRequests` and
//!   `AggregateContainerRequests` (k8s.io/component-helpers `resource/helpers.go`) that
//!   kube-scheduler filters nodes with.
//! - Fit on a node: [`shortfalls`] against a node's allocatable (`NodeFacts::allocatable_exact`), the `NodeResourcesFit` filter's
//!   comparison (kubernetes `pkg/scheduler/framework/plugins/noderesources/fit.go`,
//!   `fitsRequest`: a request above allocatable minus what is already requested is
//!   "Insufficient <resource>").
//! - Validation: [`validate_pod_spec`] / [`validate_container`], the checks of
//!   `ValidateContainerResourceRequirements` and `validateContainerResourceName` (kubernetes
//!   `pkg/apis/core/validation/validation.go`), so static mode refuses what `kubectl apply` (or
//!   the controller creating the pods) would have refused.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use crate::verify::kit::k8s::quantity::{Quantity, QuantityError};
use crate::verify::kit::k8s::selector::is_qualified_name;

/// `kubernetes.io/`: names containing it are native (`ResourceDefaultNamespacePrefix`).
const NATIVE_DOMAIN: &str = "kubernetes.io/";
/// `hugepages-` (`ResourceHugePagesPrefix`).
const HUGEPAGES_PREFIX: &str = "hugepages-";
/// Quota names (`DefaultResourceRequestsPrefix`), never extended resources.
const REQUESTS_PREFIX: &str = "requests.";
/// Unprefixed names a container may use (`standardContainerResources`; hugepages-* too).
const STANDARD_CONTAINER_RESOURCES: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];
/// Pod-level resources (`supportedPodLevelResources` in helpers.go; hugepages-* too).
const POD_LEVEL_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `IsNativeResource`: no domain, or a domain under kubernetes.io.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains(NATIVE_DOMAIN)
}

pub fn is_hugepages(name: &str) -> bool {
    name.starts_with(HUGEPAGES_PREFIX)
}

/// `IsExtendedResourceName`: not native, not a quota name, and `requests.<name>` is a qualified
/// name. `nvidia.com/gpu`, `vpc.amazonaws.com/efa`, `aws.amazon.com/neuron`,
/// `aws.amazon.com/neuroncore` are extended resources.
pub fn is_extended_resource(name: &str) -> bool {
    !is_native_resource(name)
        && !name.starts_with(REQUESTS_PREFIX)
        && is_qualified_name(&format!("{REQUESTS_PREFIX}{name}"))
}

/// `IsOvercommitAllowed`: native and not hugepages. For every other resource (all extended
/// resources) a request must come with an equal limit.
pub fn overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepages(name)
}

fn read(
    list: Option<&BTreeMap<String, K8sQuantity>>,
    resource: &str,
    path: impl FnOnce() -> String,
) -> Result<Option<Quantity>, QuantityError> {
    match list.and_then(|l| l.get(resource)) {
        None => Ok(None),
        Some(q) => Quantity::parse(&q.0).map(Some).map_err(|e| e.at(path())),
    }
}

/// `resources.limits[resource]` of a container (None: not set).
pub fn limit(c: &Container, resource: &str) -> Result<Option<Quantity>, QuantityError> {
    let list = c.resources.as_ref().and_then(|r| r.limits.as_ref());
    read(list, resource, || {
        format!("container {}: resources.limits[{resource}]", c.name)
    })
}

/// `resources.requests[resource]` of a container, as written (None: not set).
pub fn request(c: &Container, resource: &str) -> Result<Option<Quantity>, QuantityError> {
    let list = c.resources.as_ref().and_then(|r| r.requests.as_ref());
    read(list, resource, || {
        format!("container {}: resources.requests[{resource}]", c.name)
    })
}

/// The request the pod will carry: the request, else the limit (`SetDefaults_Pod`).
pub fn effective_request(c: &Container, resource: &str) -> Result<Option<Quantity>, QuantityError> {
    match request(c, resource)? {
        Some(q) => Ok(Some(q)),
        None => limit(c, resource),
    }
}

/// Every effective request of a container (requests, plus limits for resources without one).
pub fn container_requests(c: &Container) -> Result<BTreeMap<String, Quantity>, QuantityError> {
    let r = c.resources.as_ref();
    let mut names: Vec<&String> = Vec::new();
    names.extend(
        r.and_then(|r| r.requests.as_ref())
            .into_iter()
            .flat_map(|m| m.keys()),
    );
    names.extend(
        r.and_then(|r| r.limits.as_ref())
            .into_iter()
            .flat_map(|m| m.keys()),
    );
    let mut out = BTreeMap::new();
    for name in names {
        if out.contains_key(name) {
            continue;
        }
        if let Some(q) = effective_request(c, name)? {
            out.insert(name.clone(), q);
        }
    }
    Ok(out)
}

fn add_into(
    acc: &mut BTreeMap<String, Quantity>,
    add: &BTreeMap<String, Quantity>,
) -> Result<(), QuantityError> {
    for (k, v) in add {
        let sum = match acc.get(k) {
            Some(have) => have
                .checked_add(v)
                .map_err(|e| e.at(format!("requests of {k}")))?,
            None => v.clone(),
        };
        acc.insert(k.clone(), sum);
    }
    Ok(())
}

fn max_into(acc: &mut BTreeMap<String, Quantity>, other: &BTreeMap<String, Quantity>) {
    for (k, v) in other {
        match acc.get(k) {
            Some(have) if have >= v => {}
            _ => {
                acc.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Whether an init container is a sidecar: `restartPolicy: Always` (`isRestartableInitContainer`).
pub fn is_sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// What the scheduler reserves for a pod, per resource (`PodRequests`):
/// - the sum over app containers, plus every sidecar (restartable init container);
/// - at least the largest "init step": a regular init container runs beside the sidecars
///   declared before it, so each step needs its own request plus those sidecars';
/// - pod-level `spec.resources.requests` replace the container sum for cpu, memory and
///   hugepages-* (PodLevelResources) when set;
/// - plus `spec.overhead`.
///
/// Requests default to limits per container (see the module comment). Sums are checked: an
/// overflow is an error, never a wrapped number.
pub fn pod_requests(spec: &PodSpec) -> Result<BTreeMap<String, Quantity>, QuantityError> {
    let mut total = BTreeMap::new();
    for c in &spec.containers {
        add_into(&mut total, &container_requests(c)?)?;
    }
    let mut sidecars: BTreeMap<String, Quantity> = BTreeMap::new();
    let mut init_peak: BTreeMap<String, Quantity> = BTreeMap::new();
    for c in spec.init_containers.iter().flatten() {
        let own = container_requests(c)?;
        let step = if is_sidecar(c) {
            add_into(&mut total, &own)?;
            add_into(&mut sidecars, &own)?;
            sidecars.clone()
        } else {
            let mut step = own;
            add_into(&mut step, &sidecars)?;
            step
        };
        max_into(&mut init_peak, &step);
    }
    max_into(&mut total, &init_peak);

    let pod_level = spec.resources.as_ref().and_then(|r| r.requests.as_ref());
    for (name, q) in pod_level.into_iter().flatten() {
        if POD_LEVEL_RESOURCES.contains(&name.as_str()) || is_hugepages(name) {
            let q = Quantity::parse(&q.0)
                .map_err(|e| e.at(format!("spec.resources.requests[{name}]")))?;
            total.insert(name.clone(), q);
        }
    }
    if let Some(overhead) = spec.overhead.as_ref() {
        let mut o = BTreeMap::new();
        for (name, q) in overhead {
            let q = Quantity::parse(&q.0).map_err(|e| e.at(format!("spec.overhead[{name}]")))?;
            o.insert(name.clone(), q);
        }
        add_into(&mut total, &o)?;
    }
    Ok(total)
}

/// [`pod_requests`] for one resource (zero when nothing asks for it).
pub fn pod_request(spec: &PodSpec, resource: &str) -> Result<Quantity, QuantityError> {
    Ok(pod_requests(spec)?
        .remove(resource)
        .unwrap_or_else(Quantity::zero))
}

/// A whole count of a container's limit (`nvidia.com/gpu: 8`); a fraction is an error naming
/// the field.
pub fn limit_count(c: &Container, resource: &str) -> Result<Option<i64>, QuantityError> {
    count_at(limit(c, resource)?, || {
        format!("container {}: resources.limits[{resource}]", c.name)
    })
}

/// A whole count of a container's effective request (request, else limit).
pub fn effective_count(c: &Container, resource: &str) -> Result<Option<i64>, QuantityError> {
    count_at(effective_request(c, resource)?, || {
        format!("container {}: resources[{resource}]", c.name)
    })
}

/// A whole count of what the pod asks for (`pod_request(..).count()`), e.g. GPUs per pod.
pub fn pod_count(spec: &PodSpec, resource: &str) -> Result<i64, QuantityError> {
    pod_request(spec, resource)?
        .count()
        .map_err(|e| e.at(format!("the pod's request of {resource}")))
}

fn count_at(
    q: Option<Quantity>,
    path: impl FnOnce() -> String,
) -> Result<Option<i64>, QuantityError> {
    q.map(|q| q.count().map_err(|e| e.at(path()))).transpose()
}

/// A resource a node cannot give a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    pub resource: String,
    pub requested: Quantity,
    /// What the node can give (its allocatable minus what is already requested there).
    pub available: Quantity,
}

impl Shortfall {
    /// The scheduler's reason text: `Insufficient nvidia.com/gpu`.
    pub fn reason(&self) -> String {
        format!("Insufficient {}", self.resource)
    }
}

/// The resources whose request exceeds what is available (`fitsRequest`): a resource the node
/// does not list has none; a zero request always fits. Pass the node's allocatable for an
/// empty node, or allocatable minus what its pods already request.
pub fn shortfalls(
    requests: &BTreeMap<String, Quantity>,
    available: &BTreeMap<String, Quantity>,
) -> Vec<Shortfall> {
    requests
        .iter()
        .filter(|(_, want)| !want.is_zero())
        .filter_map(|(name, want)| {
            let have = available.get(name).cloned().unwrap_or_else(Quantity::zero);
            (*want > have).then(|| Shortfall {
                resource: name.clone(),
                requested: want.clone(),
                available: have,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Validation.

/// Which API server rule a container's resources break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// A request of a non-overcommitable resource without a limit.
    LimitRequired,
    /// A request of a non-overcommitable resource different from its limit.
    MustEqualLimit,
    /// A request above its limit (overcommitable resources).
    AboveLimit,
    /// A fractional quantity of an extended resource.
    NotInteger,
    Negative,
    /// An unprefixed name that is not cpu, memory, ephemeral-storage or hugepages-* (`gpu: 1`).
    NotAContainerResource,
    /// A prefixed, non-native name that is not a valid extended resource name.
    NotAnExtendedResourceName,
    /// The quantity cannot be read at all.
    Unreadable,
}

/// One refusal, with the field path and the API server's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The container's name.
    pub container: String,
    /// The field, keyed by resource: `spec.containers[0].resources.requests[nvidia.com/gpu]`.
    pub path: String,
    /// The field the API server names in its message (for request/limit comparisons it stops at
    /// `…resources.requests` or `…resources.limits`).
    pub api_path: String,
    pub resource: String,
    pub rule: Rule,
    /// The API server's text for the rule, e.g. `must be equal to nvidia.com/gpu limit of 2`.
    pub message: String,
    /// The offending value as written (None for a missing field).
    pub value: Option<String>,
}

impl Violation {
    /// The error as `kubectl apply` prints it (`field.Error`): `<path>: Required value: <msg>` or
    /// `<path>: Invalid value: "<value>": <msg>`.
    pub fn api_server_text(&self) -> String {
        match &self.value {
            None => format!("{}: Required value: {}", self.api_path, self.message),
            Some(v) => format!(
                "{}: Invalid value: \"{v}\": {}",
                self.api_path, self.message
            ),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            None => write!(f, "{}: {}", self.path, self.message),
            Some(v) => write!(f, "{}: `{v}`: {}", self.path, self.message),
        }
    }
}

/// The resource checks of every app and init container of a pod spec. `spec_path` is where the
/// spec sits in its object: `spec` for a Pod, `spec.template.spec` for a Job.
pub fn validate_pod_spec(spec: &PodSpec, spec_path: &str) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, c) in spec.containers.iter().enumerate() {
        out.extend(validate_container(
            c,
            &format!("{spec_path}.containers[{i}]"),
        ));
    }
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        out.extend(validate_container(
            c,
            &format!("{spec_path}.initContainers[{i}]"),
        ));
    }
    out
}

/// `ValidateContainerResourceRequirements` for one container (`container_path` like
/// `spec.containers[0]`): names, non-negative and integer quantities, then each request against
/// its limit. Limits are checked before requests, in name order, as upstream walks them.
pub fn validate_container(c: &Container, container_path: &str) -> Vec<Violation> {
    let mut out = Vec::new();
    let r = c.resources.as_ref();
    let limits = r.and_then(|r| r.limits.as_ref());
    let requests = r.and_then(|r| r.requests.as_ref());
    let lim_path = format!("{container_path}.resources.limits");
    let req_path = format!("{container_path}.resources.requests");
    let violation = |path: String,
                     api_path: String,
                     resource: &str,
                     rule,
                     message: String,
                     value: Option<&str>| {
        Violation {
            container: c.name.clone(),
            path,
            api_path,
            resource: resource.to_string(),
            rule,
            message,
            value: value.map(str::to_string),
        }
    };

    // Each listed quantity on its own: name, readability, sign, integrality.
    let mut check_entries = |list: Option<&BTreeMap<String, K8sQuantity>>, base: &str| {
        let mut parsed = BTreeMap::new();
        for (name, q) in list.into_iter().flatten() {
            let keyed = format!("{base}[{name}]");
            if let Some((rule, msg)) = name_problem(name) {
                out.push(violation(
                    keyed.clone(),
                    keyed.clone(),
                    name,
                    rule,
                    msg.into(),
                    Some(name),
                ));
            }
            let value = match Quantity::parse(&q.0) {
                Ok(v) => v,
                Err(e) => {
                    out.push(violation(
                        keyed.clone(),
                        keyed,
                        name,
                        Rule::Unreadable,
                        e.to_string(),
                        Some(&q.0),
                    ));
                    continue;
                }
            };
            // ValidateNonnegativeQuantity; ValidateResourceQuantityValue's isNotIntegerErrorMsg.
            if value.is_negative() {
                out.push(violation(
                    keyed.clone(),
                    keyed.clone(),
                    name,
                    Rule::Negative,
                    "must be greater than or equal to 0".into(),
                    Some(&q.0),
                ));
            }
            if is_extended_resource(name) && !value.is_whole() {
                out.push(violation(
                    keyed.clone(),
                    keyed,
                    name,
                    Rule::NotInteger,
                    "must be an integer".into(),
                    Some(&q.0),
                ));
            }
            parsed.insert(name.clone(), value);
        }
        parsed
    };
    let lims = check_entries(limits, &lim_path);
    let reqs = check_entries(requests, &req_path);

    for (name, req) in &reqs {
        let keyed = format!("{req_path}[{name}]");
        let written = requests
            .and_then(|m| m.get(name))
            .map(|q| q.0.as_str())
            .unwrap_or_default();
        match lims.get(name) {
            Some(lim) if req != lim && !overcommit_allowed(name) => out.push(violation(
                keyed,
                req_path.clone(),
                name,
                Rule::MustEqualLimit,
                format!("must be equal to {name} limit of {lim}"),
                Some(written),
            )),
            Some(lim) if req > lim => out.push(violation(
                keyed,
                req_path.clone(),
                name,
                Rule::AboveLimit,
                format!("must be less than or equal to {name} limit of {lim}"),
                Some(written),
            )),
            // A limit that could not be read was reported above; nothing to compare with.
            None if limits.is_some_and(|m| m.contains_key(name)) => {}
            None if !overcommit_allowed(name) => out.push(violation(
                format!("{lim_path}[{name}]"),
                lim_path.clone(),
                name,
                Rule::LimitRequired,
                "Limit must be set for non overcommitable resources".into(),
                None,
            )),
            _ => {}
        }
    }
    out
}

/// `validateContainerResourceName`'s two rules for names.
fn name_problem(name: &str) -> Option<(Rule, &'static str)> {
    if !name.contains('/') {
        let standard = STANDARD_CONTAINER_RESOURCES.contains(&name) || is_hugepages(name);
        return (!standard).then_some((
            Rule::NotAContainerResource,
            "must be a standard resource for containers",
        ));
    }
    (!is_native_resource(name) && !is_extended_resource(name)).then_some((
        Rule::NotAnExtendedResourceName,
        "doesn't follow extended resource name standard",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GPU: &str = "nvidia.com/gpu";
    const EFA: &str = "vpc.amazonaws.com/efa";

    fn spec(v: serde_json::Value) -> PodSpec {
        serde_json::from_value(v).unwrap()
    }

    fn container(v: serde_json::Value) -> Container {
        serde_json::from_value(v).unwrap()
    }

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn resource_name_classes() {
        for ext in [
            GPU,
            EFA,
            "aws.amazon.com/neuron",
            "aws.amazon.com/neuroncore",
        ] {
            assert!(is_extended_resource(ext), "{ext}");
            assert!(!overcommit_allowed(ext), "{ext}");
        }
        for native in [
            "cpu",
            "memory",
            "ephemeral-storage",
            "example.kubernetes.io/x",
        ] {
            assert!(!is_extended_resource(native), "{native}");
            assert!(overcommit_allowed(native), "{native}");
        }
        assert!(!overcommit_allowed("hugepages-2Mi"));
        assert!(!is_extended_resource("requests.nvidia.com/gpu"));
    }

    #[test]
    fn container_accessors_read_and_default() {
        let c = container(serde_json::json!({"name": "t", "resources": {
            "limits": {GPU: "8", "cpu": "4"}, "requests": {"cpu": "2"}}}));
        assert_eq!(limit(&c, GPU).unwrap(), Some(q("8")));
        assert_eq!(request(&c, GPU).unwrap(), None);
        assert_eq!(effective_request(&c, GPU).unwrap(), Some(q("8")));
        assert_eq!(effective_request(&c, "cpu").unwrap(), Some(q("2")));
        assert_eq!(effective_request(&c, "memory").unwrap(), None);
        let bare = container(serde_json::json!({"name": "t"}));
        assert_eq!(effective_request(&bare, GPU).unwrap(), None);
    }

    #[test]
    fn unreadable_quantities_name_the_container_and_field() {
        let c = container(
            serde_json::json!({"name": "trainer", "resources": {"limits": {GPU: "eight"}}}),
        );
        let e = limit(&c, GPU).unwrap_err();
        assert_eq!(
            e.to_string(),
            "container trainer: resources.limits[nvidia.com/gpu]: `eight` is not a Kubernetes quantity: it does not start with a number"
        );
        assert!(pod_request(
            &spec(serde_json::json!({"containers": [{"name": "trainer", "resources": {"limits": {GPU: "eight"}}}]})),
            GPU
        )
        .is_err());
    }

    #[test]
    fn app_containers_add_up() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "a", "resources": {"limits": {GPU: "4"}}},
            {"name": "b", "resources": {"requests": {GPU: "2"}, "limits": {GPU: "2"}}},
            {"name": "c"}
        ]}));
        assert_eq!(pod_request(&s, GPU).unwrap(), q("6"));
        assert_eq!(pod_request(&s, EFA).unwrap(), Quantity::zero());
    }

    #[test]
    fn an_init_container_larger_than_the_app_containers_sets_the_request() {
        let s = spec(serde_json::json!({
        "initContainers": [
            {"name": "warmup", "resources": {"requests": {"cpu": "8"}}},
            {"name": "small", "resources": {"requests": {"cpu": "1"}}}
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "2"}}},
            {"name": "b", "resources": {"requests": {"cpu": "3"}}}
        ]}));
        assert_eq!(pod_request(&s, "cpu").unwrap(), q("8"));
        let smaller = spec(serde_json::json!({
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "5"}}}]}));
        assert_eq!(pod_request(&smaller, "cpu").unwrap(), q("5"));
    }

    #[test]
    fn sidecars_add_to_the_sum_and_to_later_init_steps() {
        // sidecar 1 + app 2 = 3 for the running pod; the init step after the sidecar needs 1 + 3.
        let s = spec(serde_json::json!({
            "initContainers": [
                {"name": "early", "resources": {"requests": {"cpu": "3500m"}}},
                {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                {"name": "late", "resources": {"requests": {"cpu": "3"}}}
            ],
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "2"}}}]}));
        // max(3 (app + sidecar), 3.5 (early), 4 (late + sidecar)) = 4
        assert_eq!(pod_request(&s, "cpu").unwrap(), q("4"));
        let only_sidecar = spec(serde_json::json!({
            "initContainers": [{"name": "proxy", "restartPolicy": "Always", "resources": {"limits": {GPU: "1"}}}],
            "containers": [{"name": "app", "resources": {"limits": {GPU: "8"}}}]}));
        assert_eq!(pod_request(&only_sidecar, GPU).unwrap(), q("9"));
    }

    #[test]
    fn pod_level_requests_and_overhead() {
        let s = spec(serde_json::json!({
            "resources": {"requests": {"cpu": "10", GPU: "99"}},
            "overhead": {"cpu": "250m", "memory": "120Mi"},
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {GPU: "8"}}}]}));
        let r = pod_requests(&s).unwrap();
        // Pod-level cpu replaces the sum; GPUs are not a pod-level resource.
        assert_eq!(r["cpu"], q("10.25"));
        assert_eq!(r[GPU], q("8"));
        assert_eq!(r["memory"].bytes(), (1 << 30) + 120 * (1 << 20));
    }

    #[test]
    fn sums_that_overflow_are_errors() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "a", "resources": {"limits": {GPU: "9223372036854775807"}}},
            {"name": "b", "resources": {"limits": {GPU: "1"}}}
        ]}));
        let e = pod_request(&s, GPU).unwrap_err();
        assert!(
            e.to_string().contains("larger than trainlab can count"),
            "{e}"
        );
    }

    #[test]
    fn counts_are_whole_numbers_or_located_errors() {
        let c = container(serde_json::json!({"name": "trainer", "resources": {
            "limits": {GPU: "8", EFA: "0.5"}}}));
        assert_eq!(limit_count(&c, GPU).unwrap(), Some(8));
        assert_eq!(effective_count(&c, GPU).unwrap(), Some(8));
        assert_eq!(limit_count(&c, "aws.amazon.com/neuron").unwrap(), None);
        let e = limit_count(&c, EFA).unwrap_err();
        assert_eq!(
            e.to_string(),
            "container trainer: resources.limits[vpc.amazonaws.com/efa]: `0.5` is not a whole number; this resource is counted in whole units"
        );
        let s = spec(serde_json::json!({"containers": [
            {"name": "a", "resources": {"limits": {GPU: "4"}}},
            {"name": "b", "resources": {"limits": {GPU: "4"}}}]}));
        assert_eq!(pod_count(&s, GPU).unwrap(), 8);
        assert_eq!(pod_count(&s, EFA).unwrap(), 0);
    }

    #[test]
    fn shortfalls_against_a_node() {
        let node = crate::observe::Obj::new(
            serde_json::json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "p5"},
            "status": {"allocatable": {GPU: "8", "cpu": "191450m", "memory": "2047Gi"}}}),
            crate::observe::Origin::Live,
        )
        .unwrap();
        let alloc = crate::facts::NodeFacts::from_obj(&node)
            .unwrap()
            .allocatable_exact;
        let s = spec(serde_json::json!({"containers": [
            {"name": "a", "resources": {"limits": {GPU: "16", EFA: "0", "cpu": "96"}}}]}));
        let short = shortfalls(&pod_requests(&s).unwrap(), &alloc);
        assert_eq!(short.len(), 1);
        assert_eq!(short[0].reason(), "Insufficient nvidia.com/gpu");
        assert_eq!(short[0].requested, q("16"));
        assert_eq!(short[0].available, q("8"));
        // A resource the node lacks is a shortfall as soon as the pod asks for one.
        let efa = spec(serde_json::json!({"containers": [
            {"name": "a", "resources": {"limits": {EFA: "32"}}}]}));
        assert_eq!(
            shortfalls(&pod_requests(&efa).unwrap(), &alloc)[0].reason(),
            "Insufficient vpc.amazonaws.com/efa"
        );
    }

    fn rules(v: &[Violation]) -> Vec<Rule> {
        v.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn a_gpu_request_without_a_limit_is_refused() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "trainer", "resources": {"requests": {GPU: "8"}}}]}));
        let v = validate_pod_spec(&s, "spec");
        assert_eq!(rules(&v), vec![Rule::LimitRequired]);
        assert_eq!(v[0].container, "trainer");
        assert_eq!(
            v[0].path,
            "spec.containers[0].resources.limits[nvidia.com/gpu]"
        );
        assert_eq!(
            v[0].api_server_text(),
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
        );
    }

    #[test]
    fn a_gpu_request_different_from_its_limit_is_refused() {
        let s = spec(serde_json::json!({"containers": [{"name": "x"},
            {"name": "trainer", "resources": {"requests": {GPU: "4"}, "limits": {GPU: "8"}}}]}));
        let v = validate_pod_spec(&s, "spec.template.spec");
        assert_eq!(rules(&v), vec![Rule::MustEqualLimit]);
        assert_eq!(
            v[0].path,
            "spec.template.spec.containers[1].resources.requests[nvidia.com/gpu]"
        );
        assert_eq!(v[0].message, "must be equal to nvidia.com/gpu limit of 8");
        assert_eq!(
            v[0].api_server_text(),
            "spec.template.spec.containers[1].resources.requests: Invalid value: \"4\": must be equal to nvidia.com/gpu limit of 8"
        );
        // Equal values in different forms are equal.
        let same = spec(serde_json::json!({"containers": [
            {"name": "t", "resources": {"requests": {GPU: "1k"}, "limits": {GPU: "1000"}}}]}));
        assert!(validate_pod_spec(&same, "spec").is_empty());
    }

    #[test]
    fn fractional_and_negative_extended_resources_are_refused() {
        let s = spec(serde_json::json!({"initContainers": [
            {"name": "i", "resources": {"limits": {EFA: "0.5", "cpu": "-1"}}}], "containers": []}));
        let v = validate_pod_spec(&s, "spec");
        assert_eq!(rules(&v), vec![Rule::Negative, Rule::NotInteger]);
        assert_eq!(
            v[1].path,
            "spec.initContainers[0].resources.limits[vpc.amazonaws.com/efa]"
        );
        assert_eq!(
            v[1].api_server_text(),
            "spec.initContainers[0].resources.limits[vpc.amazonaws.com/efa]: Invalid value: \"0.5\": must be an integer"
        );
        // cpu may be fractional.
        let cpu = spec(serde_json::json!({"containers": [
            {"name": "t", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1.5"}}}]}));
        assert!(validate_pod_spec(&cpu, "spec").is_empty());
    }

    #[test]
    fn overcommitable_requests_may_not_exceed_limits() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "t", "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}}]}));
        let v = validate_pod_spec(&s, "spec");
        assert_eq!(rules(&v), vec![Rule::AboveLimit]);
        assert_eq!(
            v[0].message,
            "must be less than or equal to memory limit of 1Gi"
        );
    }

    #[test]
    fn limits_alone_and_zero_are_accepted() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "t", "resources": {"limits": {GPU: "0", EFA: "32"}}}]}));
        assert!(validate_pod_spec(&s, "spec").is_empty());
    }

    #[test]
    fn names_that_are_not_container_resources() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "t", "resources": {"limits": {"gpu": "1", "nvidia.com/-bad": "1"}}}]}));
        let v = validate_pod_spec(&s, "spec");
        assert_eq!(
            rules(&v),
            vec![Rule::NotAContainerResource, Rule::NotAnExtendedResourceName]
        );
        assert_eq!(v[0].message, "must be a standard resource for containers");
    }

    #[test]
    fn unreadable_quantities_are_violations_not_panics() {
        let s = spec(serde_json::json!({"containers": [
            {"name": "t", "resources": {"requests": {GPU: "8"}, "limits": {GPU: "lots"}}}]}));
        let v = validate_pod_spec(&s, "spec");
        assert_eq!(rules(&v), vec![Rule::Unreadable]);
        assert_eq!(v[0].to_string(), "spec.containers[0].resources.limits[nvidia.com/gpu]: `lots`: `lots` is not a Kubernetes quantity: it does not start with a number");
    }
}
