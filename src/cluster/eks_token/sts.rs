//! The regional STS endpoint a token is signed for: the host of a region by its partition.

/// The regional STS host of `region`, by its partition's domain (aws-iam-authenticator
/// `pkg/endpoints/partitions.go` `GetSTSPartitionDomain`, the region patterns of the SDKs'
/// `partitions.json`); `None` for what is no region name (it goes into a URL).
pub fn sts_host(region: &str) -> Option<String> {
    let valid = !region.is_empty()
        && region.len() <= 63
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !region.starts_with('-')
        && !region.ends_with('-');
    if !valid {
        return None;
    }
    let domain = [
        ("cn-", "amazonaws.com.cn"),
        ("us-isob-", "sc2s.sgov.gov"),
        ("us-isof-", "csp.hci.ic.gov"),
        ("us-iso-", "c2s.ic.gov"),
        ("eu-isoe-", "cloud.adc-e.uk"),
        ("eusc-", "amazonaws.eu"),
    ]
    .iter()
    .find(|(prefix, _)| region.starts_with(prefix))
    .map_or("amazonaws.com", |(_, domain)| domain);
    Some(format!("sts.{region}.{domain}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sts_hosts_follow_the_partition() {
        assert_eq!(
            sts_host("us-west-2").as_deref(),
            Some("sts.us-west-2.amazonaws.com")
        );
        assert_eq!(
            sts_host("cn-north-1").as_deref(),
            Some("sts.cn-north-1.amazonaws.com.cn")
        );
        assert_eq!(
            sts_host("us-gov-west-1").as_deref(),
            Some("sts.us-gov-west-1.amazonaws.com")
        );
        assert_eq!(
            sts_host("us-isob-east-1").as_deref(),
            Some("sts.us-isob-east-1.sc2s.sgov.gov")
        );
        for bad in ["", "US-WEST-2", "us-west-2.evil.com", "a/b", "-x", "x-"] {
            assert_eq!(sts_host(bad), None, "{bad}");
        }
    }
}
