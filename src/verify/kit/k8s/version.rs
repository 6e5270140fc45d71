//! An object written in an `apiVersion` its CRD does not serve: `kubectl apply` refuses it before
//! any controller sees it (apimachinery `pkg/api/meta/errors.go` `NoKindMatchError`: `no matches
//! for kind "Job" in version "batch.volcano.sh/v1beta1"`), so the check that reads the object
//! first fails naming the served version.

use crate::observe::Obj;
use crate::verify::Outcome;

/// A fail of `check` when `obj` is not written in `served`: expected `apiVersion: <served>`,
/// found `apiVersion: <written>`; evidence `served`, `written`. None when it is.
pub fn unserved(check: &str, obj: &Obj, served: &str) -> Option<Outcome> {
    let written = obj.api_version();
    (written != served).then(|| {
        Outcome::fail(
            check,
            format!("apiVersion: {served}"),
            format!("apiVersion: {written}"),
        )
        .with("served", served)
        .with("written", written)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Origin;

    #[test]
    fn an_unserved_version_fails_naming_both() {
        let o = Obj::new(
            serde_json::json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool",
                               "metadata": {"name": "p"}}),
            Origin::Live,
        )
        .unwrap();
        let f = unserved("c", &o, "karpenter.sh/v1").unwrap();
        assert_eq!(f.expected.as_deref(), Some("apiVersion: karpenter.sh/v1"));
        assert_eq!(f.found.as_deref(), Some("apiVersion: karpenter.sh/v1beta1"));
        assert_eq!(f.evidence["written"], "karpenter.sh/v1beta1");
        assert!(unserved("c", &o, "karpenter.sh/v1beta1").is_none());
    }
}
