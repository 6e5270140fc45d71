//! NCCL over EFA: the libfabric variables and the instance types the rules read. Facts from
//! the aws-ofi-nccl EFA Cheatsheet (aws/aws-ofi-nccl@518f4c6a doc/efa-env-var.md) and the
//! facts table (`facts::instances`, EFA interfaces per type).

use std::collections::BTreeSet;

use super::cmdline::EnvLookup;
use crate::facts::instances;

/// libfabric's provider choice; `efa` is the EFA provider's name (the quiz's answer; the
/// Cheatsheet lists it for aws-ofi-nccl <= 1.5.0).
pub const FI_PROVIDER: &str = "FI_PROVIDER";
pub const EFA_PROVIDER: &str = "efa";

/// The types of `types` not known to have EFA (unlisted, or listed with 0 interfaces).
pub fn not_efa(types: &BTreeSet<String>) -> Vec<&str> {
    let efa = |t: &str| instances::efa_interfaces(t).unwrap_or(0) > 0;
    types
        .iter()
        .map(String::as_str)
        .filter(|t| !efa(t))
        .collect()
}

/// Advice ids for what the Cheatsheet discourages, given how a container's program sees a
/// variable: `rdmav-fork-safe` (`RDMAV_FORK_SAFE`, "Do not use", set to anything) and
/// `fi-efa-use-device-rdma` (`FI_EFA_USE_DEVICE_RDMA=1`, "Do not set for libfabric>=1.18.0
/// and aws-ofi-nccl>=1.7.0").
pub fn discouraged(value: impl Fn(&str) -> EnvLookup) -> Vec<&'static str> {
    let mut out = Vec::new();
    if value("RDMAV_FORK_SAFE") != EnvLookup::Absent {
        out.push("rdmav-fork-safe");
    }
    if value("FI_EFA_USE_DEVICE_RDMA") == EnvLookup::Value("1".into()) {
        out.push("fi-efa-use-device-rdma");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efa_types_come_from_the_facts_table() {
        let types: BTreeSet<String> = ["p5.48xlarge", "g5.48xlarge", "m5.large"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(not_efa(&types), ["g5.48xlarge", "m5.large"]);
    }

    #[test]
    fn discouraged_variables_are_named() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| match pairs.iter().find(|(k, _)| *k == n) {
                Some((_, v)) => EnvLookup::Value(v.to_string()),
                None => EnvLookup::Absent,
            }
        };
        assert!(discouraged(env(&[("FI_PROVIDER", "efa")])).is_empty());
        let both = env(&[("RDMAV_FORK_SAFE", "0"), ("FI_EFA_USE_DEVICE_RDMA", "1")]);
        assert_eq!(
            discouraged(both),
            ["rdmav-fork-safe", "fi-efa-use-device-rdma"]
        );
        assert!(discouraged(env(&[("FI_EFA_USE_DEVICE_RDMA", "0")])).is_empty());
    }
}
