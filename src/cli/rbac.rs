//! `trainlab rbac` — prints the RBAC workshop grading needs (generated from what the labs read),
//! for admins to review and apply. `manifests/grader/rbac.yaml` is this output.

use clap::Args;

use super::{ok, print, Global};
use crate::exit::ExitCode;
use crate::grade::{self, rbac, Template};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  trainlab rbac | kubectl apply -f -
      the grader's ServiceAccount, a read-only ClusterRole and its binding
  trainlab rbac --namespace-scoped --learners alice,bob
      namespaced kinds granted only in the learners' namespaces (RoleBindings);
      grading then reads them namespace by namespace

Read-only (get, list, and watch for `grade --watch` and `--serve`) on exactly the kinds the gradable labs read, and nothing on Secrets: RBAC cannot grant metadata-only reads, so workshop grading reads no Secrets and skips a check that needs one, saying why.")]
pub struct RbacArgs {
    /// Grant namespaced kinds only in the learners' namespaces (needs --learners)
    #[arg(long, requires = "learners")]
    pub namespace_scoped: bool,
    /// Learners whose namespaces --namespace-scoped binds: --learners alice,bob
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub learners: Vec<String>,
    /// Namespace of a learner's lab [default: {learner}-{lab}]
    #[arg(long, value_name = "TEMPLATE", requires = "namespace_scoped")]
    pub namespace_template: Option<String>,
}

pub fn run(g: &Global, a: &RbacArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let namespaces = if a.namespace_scoped {
        let learners = grade::parse_learners(&a.learners)?;
        let template = match &a.namespace_template {
            Some(t) => Template::parse(t)?,
            None => Template::default(),
        };
        Some(rbac::learner_namespaces(&catalog, &learners, &template))
    } else if !a.learners.is_empty() {
        return Err(crate::Error::usage(
            "--learners は --namespace-scoped と一緒に使います（クラスター全体のロールに名前は要りません）",
            "--learners goes with --namespace-scoped (the cluster-wide role needs no names)",
        ));
    } else {
        None
    };
    print(&rbac::render(&catalog, &rbac::Options { namespaces })?);
    ok()
}
