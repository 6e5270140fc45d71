//! The site facts a lab file may name (`${site.KEY}`), the values the kind profile stands for,
//! and filling the tokens: one rule for `solve`/`start` (which fill from a cluster's site file,
//! `profile::site`) and `lint` (which fills kind's values), kept below both.
//!
//! The `site.` prefix keeps a token apart from shell variables (`${site.zone}` is not a valid
//! shell parameter expansion, so no real script contains it) and from Kubernetes' `$(VAR)`.

/// How a lab file names a site fact: `${site.KEY}`.
pub const TOKEN_OPEN: &str = "${site.";

/// The site facts a lab file may name, each with what it is (for messages and `--help`).
pub const KEYS: &[(&str, &str)] = &[
    ("cluster", "the EKS cluster's name"),
    ("region", "the AWS region"),
    ("account", "the AWS account id"),
    ("zone", "the Availability Zone the labs' GPU nodes use"),
    ("subnet_id", "one subnet of the cluster's VPC in that zone"),
    ("security_group_ids", "the cluster security group"),
    ("node_role", "the IAM role Karpenter's nodes use"),
    (
        "gpu_node_class",
        "the EC2NodeClass (or Auto Mode NodeClass) for GPU/EFA nodes",
    ),
    (
        "neuron_node_class",
        "the EC2NodeClass (or Auto Mode NodeClass) for Trainium nodes",
    ),
];

/// The facts the kind profile stands for: kind-config.yaml's zones, and ids that look like AWS
/// ids (nothing is created in AWS on kind).
pub const KIND_VALUES: &[(&str, &str)] = &[
    ("cluster", "trainlab"),
    ("region", "us-west-2"),
    ("account", "000000000000"),
    ("zone", "us-west-2a"),
    ("subnet_id", "subnet-0123456789abcdef0"),
    ("security_group_ids", "sg-0123456789abcdef0"),
    ("node_role", "KarpenterNodeRole-trainlab"),
    ("gpu_node_class", "default"),
    ("neuron_node_class", "default"),
];

/// Whether `key` is a site fact.
pub fn is_key(key: &str) -> bool {
    KEYS.iter().any(|(k, _)| *k == key)
}

/// What `key` is, for messages ("" for an unknown key).
pub fn what(key: &str) -> &'static str {
    KEYS.iter().find(|(k, _)| *k == key).map_or("", |(_, w)| w)
}

/// The known keys, comma-separated, for messages.
pub fn key_list() -> String {
    KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

/// Why a token could not be filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    /// `${site.` without its `}`.
    Unclosed,
    /// `${site.KEY}` with a key no site has.
    Unknown(String),
    /// A known key the values lack.
    Missing(String),
}

impl TokenError {
    /// The problem in English and Japanese, naming `origin`.
    pub fn said(&self, origin: &str) -> (String, String) {
        match self {
            TokenError::Unclosed => (
                format!("{origin}: `{TOKEN_OPEN}` is not closed with `}}`"),
                format!("{origin}: `{TOKEN_OPEN}` が `}}` で閉じられていません"),
            ),
            TokenError::Unknown(key) => (
                format!(
                    "{origin}: unknown site value `{TOKEN_OPEN}{key}}}` (known keys: {})",
                    key_list()
                ),
                format!(
                    "{origin}: 不明なサイトの値 `{TOKEN_OPEN}{key}}}`（使えるキー: {}）",
                    key_list()
                ),
            ),
            TokenError::Missing(key) => (
                format!("{origin}: no value for `{key}` ({})", what(key)),
                format!("{origin}: `{key}`（{}）の値がありません", what(key)),
            ),
        }
    }
}

/// `text` with every `${site.KEY}` replaced by `value(KEY)`; the first token that cannot be
/// filled is the error.
pub fn fill(text: &str, value: &dyn Fn(&str) -> Option<String>) -> Result<String, TokenError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(TOKEN_OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + TOKEN_OPEN.len()..];
        let end = after.find('}').ok_or(TokenError::Unclosed)?;
        let key = &after[..end];
        if !is_key(key) {
            return Err(TokenError::Unknown(key.to_string()));
        }
        out.push_str(&value(key).ok_or_else(|| TokenError::Missing(key.to_string()))?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The kind profile's value of `key`.
pub fn kind_value(key: &str) -> Option<String> {
    KIND_VALUES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_value_is_a_key_and_every_key_has_a_kind_value() {
        let kind: Vec<&str> = KIND_VALUES.iter().map(|(k, _)| *k).collect();
        let keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        assert_eq!(kind, keys);
    }

    #[test]
    fn tokens_are_filled_and_shell_variables_left_alone() {
        let text = "zone: ${site.zone} sh: ${RANK} $(POD) ${HOME}";
        assert_eq!(
            fill(text, &kind_value).unwrap(),
            "zone: us-west-2a sh: ${RANK} $(POD) ${HOME}"
        );
        assert_eq!(
            fill("${site.vpc}", &kind_value),
            Err(TokenError::Unknown("vpc".into()))
        );
        assert_eq!(fill("${site.zone", &kind_value), Err(TokenError::Unclosed));
        assert_eq!(
            fill("${site.zone}", &|_| None),
            Err(TokenError::Missing("zone".into()))
        );
    }
}
