//! Which objects a list, watch or deletecollection selects: group, kind, namespace and the
//! label and field selectors (built from a request in `reads.rs`).

use serde_json::Value;

use super::selectors::{FieldRequirement, LabelRequirement};
use super::store::Key;

/// Which objects a list, watch or deletecollection selects.
#[derive(Clone)]
pub(super) struct Filter {
    pub(super) group: String,
    pub(super) kind: String,
    pub(super) namespace: Option<String>,
    pub(super) labels: Vec<LabelRequirement>,
    pub(super) fields: Vec<FieldRequirement>,
}

impl Filter {
    pub(super) fn matches(&self, key: &Key, obj: &Value) -> bool {
        key.group == self.group
            && key.kind == self.kind
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| *ns == key.namespace)
            && self
                .labels
                .iter()
                .all(|l| l.matches(&obj["metadata"]["labels"]))
            && self.fields.iter().all(|f| f.matches(obj))
    }
}
