//! AWS credentials for a recognized exec: aws-config's default chain with its profile and
//! region, the role assumed on top when one is named.

use aws_config::BehaviorVersion;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};

use super::exec::EksExec;

/// aws-config's default chain with the exec's profile and `region`; the role assumed on top
/// when one is named, as both plugins do.
pub(super) async fn provider_for(exec: &EksExec, region: &str) -> SharedCredentialsProvider {
    let region = aws_config::Region::new(region.to_string());
    let mut loader = aws_config::defaults(BehaviorVersion::latest()).region(region.clone());
    if let Some(profile) = &exec.profile {
        loader = loader.profile_name(&profile.name);
        if profile.from_flag {
            // botocore drops the environment's keys for an explicit `--profile`.
            loader = loader.credentials_provider(
                aws_config::profile::ProfileFileCredentialsProvider::builder()
                    .profile_name(&profile.name)
                    .build(),
            );
        }
    }
    let sdk = loader.load().await;
    let base = sdk
        .credentials_provider()
        .unwrap_or_else(|| SharedCredentialsProvider::new(NoCredentials));
    let Some(role) = &exec.role_arn else {
        return base;
    };
    let mut assume = aws_config::sts::AssumeRoleProvider::builder(role)
        .region(region)
        .configure(&sdk);
    if let Some(name) = &exec.session_name {
        assume = assume.session_name(name);
    }
    if let Some(id) = &exec.external_id {
        assume = assume.external_id(id);
    }
    SharedCredentialsProvider::new(assume.build().await)
}

/// Stands in when aws-config has no provider at all (it always has one with its defaults).
#[derive(Debug)]
struct NoCredentials;

impl ProvideCredentials for NoCredentials {
    fn provide_credentials<'a>(
        &'a self,
    ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        aws_credential_types::provider::future::ProvideCredentials::ready(Err(
            aws_credential_types::provider::error::CredentialsError::not_loaded(
                "no credentials provider",
            ),
        ))
    }
}

/// An error and its sources on one line: aws-config's errors say the useful part in a source.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}
