//! NCCL over EFA: the libfabric variables and the instance types the rules read. Facts from
//! the aws-ofi-nccl EFA Cheatsheet (aws/aws-ofi-nccl@518f4c6a doc/efa-env-var.md) and the
//! facts table (`facts::instances`, EFA interfaces per type).
//!
//! What steers NCCL off EFA ([`steers_off`]):
//! - `FI_PROVIDER` is libfabric's provider filter: "a comma separated list of providers to
//!   include. If the list begins with the '^' symbol, then the list will be negated"
//!   (ofiwg/libfabric `man/fabric.7.md`, PROVIDER INSTALLATION AND SELECTION). A filter that
//!   leaves out `efa` (`tcp`, `sockets`, `^efa`) leaves aws-ofi-nccl no EFA provider. Unset it
//!   filters nothing: aws-ofi-nccl > 1.5.0 finds `efa` itself, so `FI_PROVIDER=efa` is needed
//!   only by aws-ofi-nccl <= 1.5.0 (the Cheatsheet).
//! - `NCCL_NET` names the network NCCL must use, compared case-insensitively with each
//!   network's name (NVIDIA/nccl `src/init.cc` reads it into `config.netName`); NCCL's own
//!   transports are `IB` (`src/transport/net_ib.cc`) and `Socket` (`net_socket.cc`, TCP/IP), so
//!   either keeps NCCL off aws-ofi-nccl and EFA. The plugin is `Libfabric` and also answers to
//!   `AWS Libfabric` and `OFI` (aws/aws-ofi-nccl `ncclNetPlugin_v11.name`,
//!   `nvidia_plugin_name_fixup`).

use std::collections::BTreeSet;

use crate::facts::instances;
use crate::verify::kit::cmdline::EnvLookup;

/// libfabric's provider choice; `efa` is the EFA provider's name (the quiz's answer; the
/// Cheatsheet lists it for aws-ofi-nccl <= 1.5.0).
pub const FI_PROVIDER: &str = "FI_PROVIDER";
pub const EFA_PROVIDER: &str = "efa";
/// NCCL's choice of network (see the module docs).
pub const NCCL_NET: &str = "NCCL_NET";
/// NCCL's built-in networks, neither of which is EFA.
const NCCL_OWN_NETS: [&str; 2] = ["IB", "Socket"];

/// What keeps NCCL's traffic off EFA, with the value that does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffEfa {
    /// `FI_PROVIDER` filters `efa` out (`tcp`, `sockets`, `^efa`).
    Provider(String),
    /// `NCCL_NET` forces one of NCCL's own networks (`Socket`, `IB`).
    NcclNet(String),
}

/// Whether libfabric may still pick `efa` under this `FI_PROVIDER` value (blank: no filter).
pub fn provider_admits_efa(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() {
        return true;
    }
    let (negated, list) = match v.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, v),
    };
    let named = list
        .split(',')
        .any(|p| p.trim().eq_ignore_ascii_case(EFA_PROVIDER));
    named != negated
}

/// What steers NCCL off EFA, given the values its ranks see (None: unset).
pub fn steers_off(fi_provider: Option<&str>, nccl_net: Option<&str>) -> Option<OffEfa> {
    if let Some(v) = fi_provider.filter(|v| !provider_admits_efa(v)) {
        return Some(OffEfa::Provider(v.trim().to_string()));
    }
    let own = |v: &str| {
        NCCL_OWN_NETS
            .iter()
            .any(|n| v.trim().eq_ignore_ascii_case(n))
    };
    nccl_net
        .filter(|v| own(v))
        .map(|v| OffEfa::NcclNet(v.trim().to_string()))
}

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
    fn a_provider_filter_that_keeps_efa_does_not_steer_nccl_off_it() {
        for ok in [
            "",
            "efa",
            " EFA ",
            "efa,shm",
            "tcp,efa",
            "^tcp",
            "^sockets,tcp",
        ] {
            assert!(provider_admits_efa(ok), "{ok:?}");
            assert_eq!(steers_off(Some(ok), None), None, "{ok:?}");
        }
        for off in ["tcp", "sockets", "^efa", "tcp,shm", "^tcp,efa"] {
            assert!(!provider_admits_efa(off), "{off:?}");
        }
        assert_eq!(
            steers_off(Some("tcp"), None),
            Some(OffEfa::Provider("tcp".into()))
        );
        assert_eq!(steers_off(None, None), None);
    }

    #[test]
    fn nccl_net_forcing_nccl_s_own_networks_steers_off_efa() {
        for own in ["Socket", "socket", "IB", "ib"] {
            assert_eq!(
                steers_off(Some("efa"), Some(own)),
                Some(OffEfa::NcclNet(own.into()))
            );
        }
        // aws-ofi-nccl's own names (the plugin is what reaches EFA).
        for plugin in ["Libfabric", "AWS Libfabric", "OFI"] {
            assert_eq!(steers_off(None, Some(plugin)), None);
        }
        // The provider filter is reported first.
        assert_eq!(
            steers_off(Some("sockets"), Some("Socket")),
            Some(OffEfa::Provider("sockets".into()))
        );
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
