//! The EKS profile: `doctor --cluster NAME` asks the EKS API (aws-sdk-eks) whether the cluster is
//! ACTIVE, whether the kube context points at its endpoint, and what its node groups can run.
//! Credentials, region and endpoint come from the standard AWS chain (profiles, env,
//! `AWS_ENDPOINT_URL` for local emulators).

use aws_config::BehaviorVersion;
use serde::Serialize;

use super::instances;
use crate::Error;

#[derive(Debug, Clone, Serialize)]
pub struct NodegroupRow {
    pub name: String,
    pub status: String,
    pub instance_types: Vec<String>,
    pub desired_size: Option<i32>,
    /// Per-node figures from the instance table; None for a type trainlab does not know.
    pub gpus: Option<u32>,
    pub efa: Option<u32>,
    pub neuron: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EksReport {
    pub cluster: String,
    pub region: Option<String>,
    pub status: String,
    pub version: Option<String>,
    pub endpoint: Option<String>,
    /// Whether the kube context's API server is this cluster's endpoint (None: not compared).
    pub context_matches: Option<bool>,
    pub nodegroups: Vec<NodegroupRow>,
}

impl EksReport {
    pub fn is_active(&self) -> bool {
        self.status == "ACTIVE"
    }
}

fn aws_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::environment(
        format!("EKS の {what} が失敗しました: {e}\n  AWS の認証情報とリージョンを確認してください（`aws sts get-caller-identity`、--region または AWS_REGION）"),
        format!("EKS {what} failed: {e}\n  check AWS credentials and region (`aws sts get-caller-identity`, --region or AWS_REGION)"),
    )
}

/// The AWS settings of the default chain (profiles, env, `AWS_ENDPOINT_URL` for local
/// emulators), in `region` when given.
async fn aws_settings(region: Option<String>) -> aws_config::SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(r) = region {
        loader = loader.region(aws_config::Region::new(r));
    }
    loader.load().await
}

/// `DescribeCluster` of `cluster`, its failure said in the user's terms.
async fn describe_cluster(
    client: &aws_sdk_eks::Client,
    cluster: &str,
) -> Result<aws_sdk_eks::types::Cluster, Error> {
    let described = client
        .describe_cluster()
        .name(cluster)
        .send()
        .await
        .map_err(|e| {
            aws_error(
                &format!("DescribeCluster {cluster}"),
                aws_sdk_eks::error::DisplayErrorContext(e),
            )
        })?;
    described.cluster().cloned().ok_or_else(|| {
        Error::environment(
            format!("EKS が {cluster} という名前のクラスターを返しませんでした"),
            format!("EKS returned no cluster named {cluster}"),
        )
    })
}

/// Describes a cluster and its node groups. `kube_server` is the current context's API server.
pub async fn inspect(
    cluster: &str,
    region: Option<String>,
    kube_server: Option<&str>,
) -> Result<EksReport, Error> {
    let config = aws_settings(region).await;
    let region = config.region().map(|r| r.to_string());
    let client = aws_sdk_eks::Client::new(&config);
    let c = describe_cluster(&client, cluster).await?;
    let endpoint = c.endpoint().map(str::to_string);
    let context_matches = match (kube_server, &endpoint) {
        (Some(k), Some(e)) => Some(same_server(k, e)),
        _ => None,
    };

    let mut names = Vec::new();
    let mut pages = client
        .list_nodegroups()
        .cluster_name(cluster)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page
            .map_err(|e| aws_error("ListNodegroups", aws_sdk_eks::error::DisplayErrorContext(e)))?;
        names.extend(page.nodegroups().iter().cloned());
    }
    let mut nodegroups = Vec::new();
    for name in names {
        let ng = client
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(&name)
            .send()
            .await
            .map_err(|e| {
                aws_error(
                    &format!("DescribeNodegroup {name}"),
                    aws_sdk_eks::error::DisplayErrorContext(e),
                )
            })?;
        let Some(ng) = ng.nodegroup() else { continue };
        let types: Vec<String> = ng.instance_types().to_vec();
        // A group with several types gets figures only when they agree.
        let known: Vec<_> = types.iter().filter_map(|t| instances::lookup(t)).collect();
        let agree = |f: fn(&instances::Instance) -> u32| {
            let first = known.first().map(|i| f(i))?;
            (known.len() == types.len() && known.iter().all(|i| f(i) == first)).then_some(first)
        };
        nodegroups.push(NodegroupRow {
            name,
            status: ng
                .status()
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
            desired_size: ng.scaling_config().and_then(|s| s.desired_size()),
            gpus: agree(|i| i.gpus),
            efa: agree(|i| i.efa),
            neuron: agree(|i| i.neuron),
            instance_types: types,
        });
    }
    Ok(EksReport {
        cluster: cluster.to_string(),
        region,
        status: c
            .status()
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|| "UNKNOWN".into()),
        version: c.version().map(str::to_string),
        endpoint,
        context_matches,
        nodegroups,
    })
}

/// What `setup eks` needs to know of a cluster from the EKS and EC2 APIs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClusterFacts {
    pub name: String,
    pub region: String,
    pub arn: Option<String>,
    /// The ARN's fifth field (`arn:aws:eks:REGION:ACCOUNT:cluster/NAME`).
    pub account: Option<String>,
    pub status: String,
    pub version: Option<String>,
    pub endpoint: Option<String>,
    pub platform_version: Option<String>,
    /// EKS Auto Mode: `computeConfig.enabled`.
    pub auto_mode: bool,
    /// Auto Mode's `computeConfig.nodeRoleArn`.
    pub node_role_arn: Option<String>,
    /// `resourcesVpcConfig.subnetIds` in EKS's order, each with its zone (DescribeSubnets).
    pub subnets: Vec<super::aws_query::Subnet>,
    /// `resourcesVpcConfig.clusterSecurityGroupId`.
    pub cluster_security_group: Option<String>,
    /// `resourcesVpcConfig.securityGroupIds` (the extra groups given at creation).
    pub security_groups: Vec<String>,
}

impl ClusterFacts {
    pub fn is_active(&self) -> bool {
        self.status == "ACTIVE"
    }
}

/// The account of an ARN: its fifth `:`-separated field (`arn:PARTITION:SERVICE:REGION:ACCOUNT:…`).
pub fn arn_account(arn: &str) -> Option<String> {
    let f: Vec<&str> = arn.split(':').collect();
    (f.len() >= 6 && f[0] == "arn" && !f[4].is_empty()).then(|| f[4].to_string())
}

/// An IAM role ARN's role name (`arn:aws:iam::ACCT:role/path/NAME` → `NAME`).
pub fn role_name(arn: &str) -> Option<String> {
    let (_, rest) = arn.split_once(":role/")?;
    rest.rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

/// DescribeCluster (aws-sdk-eks) and, for the subnets' zones, EC2 DescribeSubnets (one signed
/// Query call, `aws_query`). Read-only: `eks:DescribeCluster` and `ec2:DescribeSubnets`.
pub async fn describe_for_setup(
    cluster: &str,
    region: Option<String>,
) -> Result<ClusterFacts, Error> {
    let config = aws_settings(region).await;
    let region = config.region().map(|r| r.to_string()).ok_or_else(|| {
        Error::usage(
            "AWS のリージョンがわかりません。--region で指定するか、AWS_REGION を設定してください",
            "no AWS region known: pass --region or set AWS_REGION",
        )
    })?;
    let client = aws_sdk_eks::Client::new(&config);
    let c = describe_cluster(&client, cluster).await?;
    let vpc = c.resources_vpc_config();
    let subnet_ids: Vec<String> = vpc.map(|v| v.subnet_ids().to_vec()).unwrap_or_default();
    let zones = super::aws_query::describe_subnets(&config, &region, &subnet_ids).await?;
    // In EKS's order; a subnet EC2 did not describe keeps an empty zone.
    let subnets = subnet_ids
        .iter()
        .map(|id| super::aws_query::Subnet {
            id: id.clone(),
            zone: zones
                .iter()
                .find(|s| &s.id == id)
                .map(|s| s.zone.clone())
                .unwrap_or_default(),
        })
        .collect();
    let arn = c.arn().map(str::to_string);
    Ok(ClusterFacts {
        name: cluster.to_string(),
        region,
        account: arn.as_deref().and_then(arn_account),
        arn,
        status: c
            .status()
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|| "UNKNOWN".into()),
        version: c.version().map(str::to_string),
        endpoint: c.endpoint().map(str::to_string),
        platform_version: c.platform_version().map(str::to_string),
        auto_mode: c
            .compute_config()
            .and_then(|cc| cc.enabled())
            .unwrap_or(false),
        node_role_arn: c
            .compute_config()
            .and_then(|cc| cc.node_role_arn())
            .map(str::to_string),
        subnets,
        cluster_security_group: vpc
            .and_then(|v| v.cluster_security_group_id())
            .map(str::to_string),
        security_groups: vpc
            .map(|v| v.security_group_ids().to_vec())
            .unwrap_or_default(),
    })
}

/// API server URLs compared by scheme-less host (EKS endpoints are `https://<id>.<region>.eks.amazonaws.com`).
pub fn same_server(a: &str, b: &str) -> bool {
    fn host(u: &str) -> String {
        let u = u.trim().trim_end_matches('/');
        let u = u.split_once("://").map(|(_, r)| r).unwrap_or(u);
        u.split('/')
            .next()
            .unwrap_or(u)
            .trim_end_matches(":443")
            .to_ascii_lowercase()
    }
    host(a) == host(b)
}

#[cfg(test)]
mod tests {
    use super::{arn_account, role_name, same_server};

    #[test]
    fn the_account_is_the_arns_fifth_field_and_the_role_its_last_segment() {
        assert_eq!(
            arn_account("arn:aws:eks:us-west-2:123456789012:cluster/train").as_deref(),
            Some("123456789012")
        );
        assert_eq!(arn_account("not-an-arn"), None);
        assert_eq!(
            role_name("arn:aws:iam::123456789012:role/path/AmazonEKSAutoNodeRole").as_deref(),
            Some("AmazonEKSAutoNodeRole")
        );
        assert_eq!(role_name("arn:aws:iam::1:user/x"), None);
    }

    #[test]
    fn servers_match_by_host_ignoring_scheme_port_and_slash() {
        assert!(same_server(
            "https://ABC.gr7.us-west-2.eks.amazonaws.com",
            "https://abc.gr7.us-west-2.eks.amazonaws.com:443/"
        ));
        assert!(!same_server(
            "https://127.0.0.1:6443",
            "https://abc.gr7.us-west-2.eks.amazonaws.com"
        ));
    }
}
