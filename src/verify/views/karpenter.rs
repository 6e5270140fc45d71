//! Typed views of Karpenter objects: only the fields the checks read, every field defaulted, unknown
//! fields ignored (so newer Karpenter releases still parse).
//!
//! Upstream types (kubernetes-sigs/karpenter v1.14.1, `karpenter.sh/v1`):
//! - NodePool: `pkg/apis/v1/nodepool.go` (spec), `pkg/apis/v1/nodepool_status.go` (status)
//! - NodeClaim: `pkg/apis/v1/nodeclaim.go`, `pkg/apis/v1/nodeclaim_status.go`
//! - conditions: awslabs/operatorpkg `status/condition.go` (type, status, reason, message,
//!   observedGeneration) — the root condition `Ready` is recomputed from its dependents in
//!   `status/condition_set.go`.

use serde::Deserialize;

use crate::observe::{InputError, Obj};

/// `metadata.generation`, to tell a stale condition from a current one.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Meta {
    pub generation: Option<i64>,
}

/// `karpenter.sh/v1` NodePool (cluster-scoped).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodePool {
    pub metadata: Meta,
    pub spec: NodePoolSpec,
    pub status: NodePoolStatus,
}

impl NodePool {
    pub fn from_obj(o: &Obj) -> Result<NodePool, InputError> {
        o.parse()
    }

    /// `spec.template.spec.requirements`
    pub fn requirements(&self) -> &[Requirement] {
        &self.spec.template.spec.requirements
    }

    /// The requirements on one label key, in the order written.
    pub fn requirements_on(&self, key: &str) -> Vec<&Requirement> {
        self.requirements()
            .iter()
            .filter(|r| r.key == key)
            .collect()
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodePoolSpec {
    pub template: NodeClaimTemplate,
    pub disruption: Disruption,
}

/// `spec.template`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClaimTemplate {
    pub spec: NodeClaimTemplateSpec,
}

/// `spec.template.spec` (`NodeClaimTemplateSpec`): `nodeClassRef` is required by the CRD,
/// `expireAfter` defaults to `720h`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClaimTemplateSpec {
    pub requirements: Vec<Requirement>,
    pub node_class_ref: Option<NodeClassRef>,
    pub expire_after: Option<String>,
}

/// `NodeSelectorRequirementWithMinValues`: a node selector requirement (`key`, `operator` ∈ In,
/// NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, `values`) plus the optional `minValues`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
    pub min_values: Option<u32>,
}

/// `NodeClassReference`: `group`, `kind` and `name`, all required and non-empty in v1
/// (`apiVersion` was the v1beta1 field).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClassRef {
    pub group: String,
    pub kind: String,
    pub name: String,
}

/// `spec.disruption`: `consolidationPolicy` ∈ WhenEmpty, WhenEmptyOrUnderutilized (default),
/// Balanced (v1.14+); `budgets` default to `[{nodes: "10%"}]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Disruption {
    pub consolidation_policy: Option<String>,
    pub consolidate_after: Option<String>,
    pub budgets: Option<Vec<Budget>>,
}

/// A disruption budget. `nodes` is a string in the CRD (`"0"`, `"10%"`); `schedule` and
/// `duration` go together; `reasons` ⊆ Underutilized, Empty, Drifted (none: all reasons).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Budget {
    pub nodes: String,
    pub schedule: Option<String>,
    pub duration: Option<String>,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodePoolStatus {
    pub conditions: Vec<Condition>,
}

/// operatorpkg `status.Condition`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub observed_generation: Option<i64>,
}

impl Condition {
    /// `Type=Status (Reason: message)`, for found texts.
    pub fn describe(&self) -> String {
        let mut s = format!("{}={}", self.type_, self.status);
        match (self.reason.as_deref(), self.message.as_deref()) {
            (Some(r), Some(m)) if !m.is_empty() => s.push_str(&format!(" ({r}: {m})")),
            (Some(r), _) if !r.is_empty() => s.push_str(&format!(" ({r})")),
            (_, Some(m)) if !m.is_empty() => s.push_str(&format!(" ({m})")),
            _ => {}
        }
        s
    }
}

/// `karpenter.sh/v1` NodeClaim (cluster-scoped). Karpenter creates one per node it launches,
/// with the label `karpenter.sh/nodepool` and an ownerReference to the NodePool's uid
/// (`pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go`, `ToNodeClaim`). After launch
/// the cloud provider's resolved labels (zone, instance type, capacity type) are merged into
/// `metadata.labels` (`pkg/controllers/nodeclaim/lifecycle/launch.go`,
/// `PopulateNodeClaimDetails`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClaim {
    pub spec: NodeClaimSpec,
    pub status: NodeClaimStatus,
}

impl NodeClaim {
    pub fn from_obj(o: &Obj) -> Result<NodeClaim, InputError> {
        o.parse()
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClaimSpec {
    pub requirements: Vec<Requirement>,
    pub node_class_ref: Option<NodeClassRef>,
}

/// `status.conditions` (Launched, Registered, Initialized → Ready), `nodeName`, `providerID`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClaimStatus {
    pub conditions: Vec<Condition>,
    pub node_name: Option<String>,
    #[serde(rename = "providerID")]
    pub provider_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{parse_text, Obj};

    fn obj(yaml: &str) -> Obj {
        parse_text(yaml, "test").unwrap().remove(0)
    }

    #[test]
    fn parses_the_fields_checks_read_and_ignores_the_rest() {
        let o = obj(r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p, generation: 3}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a]}
        - {key: kubernetes.io/arch, operator: Exists}
      somethingNew: true
  disruption: {consolidationPolicy: WhenEmpty, budgets: [{nodes: "0"}]}
status:
  conditions:
    - {type: Ready, status: "False", reason: UnhealthyDependents, message: NodeClassReady=False, observedGeneration: 3}
"#);
        let p = NodePool::from_obj(&o).unwrap();
        assert_eq!(p.metadata.generation, Some(3));
        assert_eq!(p.requirements().len(), 2);
        assert!(p.requirements()[1].values.is_empty());
        assert_eq!(
            p.spec.template.spec.node_class_ref.as_ref().unwrap().name,
            "default"
        );
        assert_eq!(p.spec.disruption.budgets.as_ref().unwrap()[0].nodes, "0");
        let ready = p.condition("Ready").unwrap();
        assert_eq!(
            ready.describe(),
            "Ready=False (UnhealthyDependents: NodeClassReady=False)"
        );
    }

    #[test]
    fn a_wrong_type_names_the_field() {
        let o = obj(r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec:
      requirements:
        - {key: topology.kubernetes.io/zone, operator: In, values: us-west-2a}
"#);
        let err = NodePool::from_obj(&o).unwrap_err().to_string();
        assert!(
            err.contains("spec.template.spec.requirements[0].values"),
            "{err}"
        );
    }
}
