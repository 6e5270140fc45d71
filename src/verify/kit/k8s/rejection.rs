//! What the API server (pod validation) or an operator's webhook refuses in a workload, and
//! how a check says so.

use crate::verify::Outcome;

/// The first error the API server (pod validation) or, for a PyTorchJob, the training-operator's
/// validating webhook would answer `kubectl apply` or pod creation with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// `<field path>: <error>` as the API server prints it (`<field>: <type>: <detail>`,
    /// k8s.io/apimachinery `field.Error`).
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
