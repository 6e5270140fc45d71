//! The EKS site the tests render lab files with: values that differ from every kind value and
//! every placeholder (a zone of another region, ids no lab file writes), so a test sees where a
//! value came from. A file of its own so that `tests/conformance.rs`, a test crate of its own,
//! includes the same values (`#[path]`).

/// Every site key with the test's EKS value.
pub const EKS_TEST_SITE: &[(&str, &str)] = &[
    ("cluster", "labtest"),
    ("region", "eu-north-1"),
    ("account", "111122223333"),
    ("zone", "eu-north-1b"),
    ("subnet_id", "subnet-0a1b2c3d4e5f60718"),
    ("security_group_ids", "sg-0f1e2d3c4b5a69788"),
    ("node_role", "labtest-karpenter-node"),
    ("gpu_node_class", "trainlab-gpu"),
    ("neuron_node_class", "trainlab-neuron"),
];

/// The site a test renders a profile's lab files with: kind's own stand-ins, or
/// [`EKS_TEST_SITE`].
pub fn test_site(profile: &str) -> trainlab::profile::site::SiteValues {
    use trainlab::profile::site::SiteValues;
    if profile != "eks" {
        return SiteValues::kind();
    }
    SiteValues::from_map(
        EKS_TEST_SITE
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}
