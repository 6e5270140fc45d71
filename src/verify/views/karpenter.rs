//! Typed view of a Karpenter NodePool: only the fields the checks read, every field defaulted,
//! unknown fields ignored (so newer Karpenter releases still parse). Status conditions are read
//! with the kit (`kit::k8s::conditions`), NodeClaims through their labels and ownerReferences.
//!
//! Upstream type: kubernetes-sigs/karpenter v1.14.1 `pkg/apis/v1/nodepool.go` (`karpenter.sh/v1`).

use k8s_openapi::api::core::v1::NodeSelectorRequirement;
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

    /// The requirements on these keys as written, for found texts (`—`: none).
    pub fn written(&self, keys: &[&str]) -> String {
        let all: Vec<String> = keys
            .iter()
            .flat_map(|k| self.requirements_on(k))
            .map(Requirement::describe)
            .collect();
        if all.is_empty() {
            "—".into()
        } else {
            all.join("; ")
        }
    }

    /// The requirements as node selector requirements, for the kit's placement rules.
    pub fn selector_requirements(&self) -> Vec<NodeSelectorRequirement> {
        self.requirements()
            .iter()
            .map(|r| NodeSelectorRequirement {
                key: r.key.clone(),
                operator: r.operator.clone(),
                values: Some(r.values.clone()),
            })
            .collect()
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

/// `spec.template.spec` (`NodeClaimTemplateSpec`): `nodeClassRef` is required by the CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeClaimTemplateSpec {
    pub requirements: Vec<Requirement>,
    pub node_class_ref: Option<NodeClassRef>,
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

impl Requirement {
    /// `key Operator [values]`, as written.
    pub fn describe(&self) -> String {
        if self.values.is_empty() {
            format!("{} {}", self.key, self.operator)
        } else {
            format!(
                "{} {} [{}]",
                self.key,
                self.operator,
                self.values.join(", ")
            )
        }
    }
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

/// `spec.disruption`: `consolidationPolicy` ∈ WhenEmpty, WhenEmptyOrUnderutilized (the CRD
/// default), Balanced (v1.14+); `budgets` default to `[{nodes: "10%"}]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Disruption {
    pub consolidation_policy: Option<String>,
    pub budgets: Option<Vec<Budget>>,
}

/// A disruption budget. `nodes` is a string in the CRD (`"0"`, `"10%"`); `schedule` and
/// `duration` go together (no schedule: always active); `reasons` ⊆ Underutilized, Empty,
/// Drifted, and "If Reasons is not set, this budget applies to all methods" (`Budget.Reasons`;
/// `NodePool.GetAllowedDisruptionsByReason` counts a budget when `Reasons == nil` or contains
/// the reason).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Budget {
    pub nodes: String,
    pub schedule: Option<String>,
    pub duration: Option<String>,
    pub reasons: Vec<String>,
}

impl Budget {
    /// Whether this budget limits disruptions for `reason` (`Empty`, `Drifted`, …).
    pub fn applies_to(&self, reason: &str) -> bool {
        self.reasons.is_empty() || self.reasons.iter().any(|r| r == reason)
    }

    /// `{nodes: "0", reasons: [Drifted], schedule: "…"}`, for advice texts.
    pub fn describe(&self) -> String {
        let mut s = format!("nodes: \"{}\"", self.nodes);
        if !self.reasons.is_empty() {
            s.push_str(&format!(", reasons: [{}]", self.reasons.join(", ")));
        }
        if let Some(c) = &self.schedule {
            s.push_str(&format!(", schedule: \"{c}\""));
        }
        format!("{{{s}}}")
    }

    /// Always active and allowing no node at all.
    pub fn always_zero(&self) -> bool {
        self.schedule.is_none() && matches!(self.nodes.trim(), "0" | "0%")
    }
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
  disruption: {consolidationPolicy: WhenEmpty, budgets: [{nodes: "0", reasons: [Drifted]}]}
status:
  conditions:
    - {type: Ready, status: "True"}
"#);
        let p = NodePool::from_obj(&o).unwrap();
        assert_eq!(p.metadata.generation, Some(3));
        assert_eq!(p.requirements().len(), 2);
        assert!(p.requirements()[1].values.is_empty());
        assert_eq!(p.requirements_on("kubernetes.io/arch").len(), 1);
        assert_eq!(p.selector_requirements()[0].operator, "In");
        assert_eq!(
            p.spec.template.spec.node_class_ref.as_ref().unwrap().name,
            "default"
        );
        let b = &p.spec.disruption.budgets.as_ref().unwrap()[0];
        assert!(b.always_zero());
        assert!(b.applies_to("Drifted"));
        assert!(!b.applies_to("Empty"));
    }

    #[test]
    fn a_budget_without_reasons_applies_to_every_reason() {
        let b = Budget {
            nodes: "0".into(),
            ..Default::default()
        };
        assert!(b.applies_to("Empty") && b.applies_to("Drifted"));
        let scheduled = Budget {
            nodes: "0".into(),
            schedule: Some("0 9 * * 1-5".into()),
            duration: Some("8h".into()),
            reasons: Vec::new(),
        };
        assert!(!scheduled.always_zero());
        let ten = Budget {
            nodes: "10%".into(),
            ..Default::default()
        };
        assert!(!ten.always_zero());
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
