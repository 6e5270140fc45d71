//! The RBAC grading needs, generated from what the labs read (`trainlab rbac`,
//! `manifests/grader/rbac.yaml`): a ServiceAccount, a read-only ClusterRole with `get`/`list` on
//! exactly the kinds grading reads, and its binding. With `namespace_scoped`, the namespaced
//! kinds are granted only in the learners' namespaces (RoleBindings to a ClusterRole) and the
//! room falls back to reading them namespace by namespace.
//!
//! Never Secrets: RBAC grants a verb on a resource, never "metadata only" (a `list` on
//! secrets returns their data; kubernetes.io/docs/reference/access-authn-authz/rbac/,
//! "Referring to resources"), so room grading reads no Secrets and a check that needs one is
//! skipped with that reason. Discovery and `/version` need no rule: the default
//! `system:discovery` and `system:public-info-viewer` ClusterRoles are bound to every
//! authenticated user (same page, "Discovery roles"; KEP-789).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

use crate::catalog::Catalog;
use crate::facts::capabilities;
use crate::observe::kinds::{self, ResourceKind};
use crate::plan::learners::Template;
use crate::verify::Verifier;
use crate::Error;

/// The verbs grading uses: LIST (reads), WATCH (`grade --watch` and `--serve` on a shared
/// cluster follow each kind after its LIST: `grade::follow`) and GET (a `kubectl get` an admin
/// may run as the grader). All read-only.
pub const VERBS: [&str; 3] = ["get", "list", "watch"];

/// The name of the grader's ServiceAccount, roles and bindings.
pub const NAME: &str = "trainlab-grader";
/// The namespace the grader runs in.
pub const NAMESPACE: &str = "trainlab-grader";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Why each kind is read, for the comments of the generated YAML.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Why {
    /// A lab's verifier reads it (its id).
    Lab(String),
    /// Nodes: profile detection and placement, for every lab.
    Nodes,
    /// Controller Deployments by name: whether a capability's controller runs.
    Controllers,
    /// `--learners-from-namespaces`.
    Learners,
}

/// Every kind room grading reads, with why: each registered verifier's reads (for labs the
/// catalog marks gradable), Nodes, the Deployments of the controllers those labs' checks need,
/// and Namespaces. Never Secrets.
pub fn grader_kinds(catalog: &Catalog) -> Vec<(&'static ResourceKind, BTreeSet<Why>)> {
    let mut out: Vec<(&'static ResourceKind, BTreeSet<Why>)> = Vec::new();
    let mut add = |k: &'static ResourceKind, why: Why| {
        if *k == kinds::SECRETS {
            return;
        }
        match out.iter_mut().find(|(x, _)| *x == k) {
            Some((_, w)) => {
                w.insert(why);
            }
            None => out.push((k, BTreeSet::from([why]))),
        }
    };
    add(&kinds::NODES, Why::Nodes);
    add(&kinds::NAMESPACES, Why::Learners);
    let mut controllers = false;
    for v in crate::labs::VERIFIERS.iter().copied() {
        let Some(b) = catalog.find(v.lab_id()) else {
            continue;
        };
        if !crate::plan::is_gradable(&b.lab) {
            continue;
        }
        for r in reads(v) {
            add(r, Why::Lab(v.lab_id().to_string()));
        }
        controllers |= b
            .lab
            .checks
            .iter()
            .flat_map(|c| c.capabilities.iter())
            .filter_map(|c| capabilities::get(c))
            .any(|c| !c.controllers.is_empty());
    }
    if controllers {
        add(&kinds::DEPLOYMENTS, Why::Controllers);
    }
    out
}

fn reads(v: &dyn Verifier) -> Vec<&'static ResourceKind> {
    v.reads().iter().map(|r| r.kind).collect()
}

/// One rule per API group, resources sorted: `get`/`list` only.
pub fn rules(kinds: &[&'static ResourceKind]) -> Vec<PolicyRule> {
    let mut groups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for k in kinds {
        groups.entry(k.group).or_default().insert(k.plural);
    }
    groups
        .into_iter()
        .map(|(g, res)| PolicyRule {
            api_groups: Some(vec![g.to_string()]),
            resources: Some(res.into_iter().map(str::to_string).collect()),
            verbs: VERBS.iter().map(|v| v.to_string()).collect(),
            ..Default::default()
        })
        .collect()
}

/// What `trainlab rbac` prints.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Grant namespaced kinds only in these namespaces (the learners'); None: cluster-wide.
    pub namespaces: Option<Vec<String>>,
}

/// The learners' namespaces for `--namespace-scoped`: every learner × gradable lab.
pub fn learner_namespaces(
    catalog: &Catalog,
    learners: &[String],
    template: &Template,
) -> Vec<String> {
    let labs: Vec<&str> = catalog
        .labs
        .iter()
        .filter(|b| crate::plan::is_gradable(&b.lab))
        .map(|b| b.lab.id.as_str())
        .collect();
    let mut out = Vec::new();
    for l in learners {
        for lab in &labs {
            let ns = template.namespace(l, lab);
            if !out.contains(&ns) {
                out.push(ns);
            }
        }
    }
    out
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(BTreeMap::from([(
            "app.kubernetes.io/name".to_string(),
            "trainlab-grader".to_string(),
        )])),
        ..Default::default()
    }
}

fn subject() -> Subject {
    Subject {
        kind: "ServiceAccount".into(),
        name: NAME.into(),
        namespace: Some(NAMESPACE.into()),
        ..Default::default()
    }
}

fn role_ref(name: &str) -> RoleRef {
    RoleRef {
        api_group: RBAC_GROUP.into(),
        kind: "ClusterRole".into(),
        name: name.into(),
    }
}

fn cluster_role(name: &str, kinds: &[&'static ResourceKind]) -> ClusterRole {
    ClusterRole {
        metadata: meta(name, None),
        rules: Some(rules(kinds)),
        ..Default::default()
    }
}

fn cluster_binding(name: &str) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(name, None),
        role_ref: role_ref(name),
        subjects: Some(vec![subject()]),
    }
}

/// The RBAC documents, as YAML with a comment saying what each kind is read for.
pub fn render(catalog: &Catalog, opts: &Options) -> Result<String, Error> {
    let kinds = grader_kinds(catalog);
    let mut out = String::from(
        "# trainlab grader RBAC, generated by `trainlab rbac` from what the labs read.\n\
         # Read-only (get/list), and nothing at all on Secrets: RBAC cannot grant metadata-only\n\
         # reads, so room grading reads no Secrets and skips a check that needs one, saying why.\n\
         # Discovery and /version need no rule (system:discovery, system:public-info-viewer).\n\
         # What each resource is read for:\n",
    );
    for (k, why) in &kinds {
        let whys: Vec<String> = why
            .iter()
            .map(|w| match w {
                Why::Lab(id) => format!("lab {id}"),
                Why::Nodes => "profile and placement (every lab)".into(),
                Why::Controllers => "whether lab controllers run (Deployments by name)".into(),
                Why::Learners => "--learners-from-namespaces".into(),
            })
            .collect();
        out.push_str(&format!("#   {}: {}\n", k.resource_name(), whys.join(", ")));
    }
    let mut docs: Vec<String> = Vec::new();
    docs.push(yaml(&Namespace {
        metadata: meta(NAMESPACE, None),
        ..Default::default()
    })?);
    docs.push(yaml(&ServiceAccount {
        metadata: meta(NAME, Some(NAMESPACE)),
        ..Default::default()
    })?);
    let all: Vec<&'static ResourceKind> = kinds.iter().map(|(k, _)| *k).collect();
    match &opts.namespaces {
        None => {
            docs.push(yaml(&cluster_role(NAME, &all))?);
            docs.push(yaml(&cluster_binding(NAME))?);
        }
        Some(namespaces) => {
            // Cluster-wide: cluster-scoped kinds, and the controller Deployments (found by name
            // in whatever namespace their project installs them).
            let cluster: Vec<&'static ResourceKind> = kinds
                .iter()
                .filter(|(k, why)| !k.namespaced || why.contains(&Why::Controllers))
                .map(|(k, _)| *k)
                .collect();
            let namespaced: Vec<&'static ResourceKind> = kinds
                .iter()
                .filter(|(k, why)| k.namespaced && why.iter().any(|w| matches!(w, Why::Lab(_))))
                .map(|(k, _)| *k)
                .collect();
            let cluster_name = format!("{NAME}-cluster");
            let ns_name = format!("{NAME}-namespaced");
            docs.push(yaml(&cluster_role(&cluster_name, &cluster))?);
            docs.push(yaml(&cluster_binding(&cluster_name))?);
            docs.push(yaml(&cluster_role(&ns_name, &namespaced))?);
            // A RoleBinding may name a ClusterRole: its rules then apply in the binding's
            // namespace only (kubernetes.io/docs/reference/access-authn-authz/rbac/,
            // "RoleBinding and ClusterRoleBinding").
            for ns in namespaces {
                docs.push(yaml(&RoleBinding {
                    metadata: meta(NAME, Some(ns)),
                    role_ref: role_ref(&ns_name),
                    subjects: Some(vec![subject()]),
                })?);
            }
        }
    }
    for d in docs {
        out.push_str("---\n");
        out.push_str(&d);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

fn yaml<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_saphyr::to_string(v).map_err(|e| {
        Error::environment(
            format!("RBAC を YAML に書き出せません: {e}"),
            format!("cannot write the RBAC as YAML: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_reads_every_verifier_kind_and_never_secrets() {
        let c = Catalog::embedded().unwrap();
        let kinds: Vec<&ResourceKind> = grader_kinds(&c).into_iter().map(|(k, _)| k).collect();
        assert!(!kinds.contains(&&kinds::SECRETS));
        assert!(kinds.contains(&&kinds::NODES));
        for v in crate::labs::VERIFIERS {
            if !c
                .find(v.lab_id())
                .is_some_and(|b| crate::plan::is_gradable(&b.lab))
            {
                continue;
            }
            for r in v.reads() {
                if *r.kind != kinds::SECRETS {
                    assert!(
                        kinds.contains(&r.kind),
                        "{} reads {}",
                        v.lab_id(),
                        r.kind.plural
                    );
                }
            }
        }
        for rule in rules(&kinds) {
            assert_eq!(rule.verbs, ["get", "list", "watch"]);
            assert!(!rule
                .resources
                .unwrap()
                .iter()
                .any(|r| r == "secrets" || r == "*"));
        }
    }

    #[test]
    fn rules_group_resources_by_api_group() {
        let r = rules(&[&kinds::PODS, &kinds::NODES, &kinds::JOBS]);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].api_groups.as_deref(), Some(&["".to_string()][..]));
        assert_eq!(
            r[0].resources.as_deref(),
            Some(&["nodes".to_string(), "pods".to_string()][..])
        );
        assert_eq!(r[1].api_groups.as_deref(), Some(&["batch".to_string()][..]));
    }
}
