//! Why a token could not be built, and the user's message about it.

use crate::Error;

use super::exec::EksExec;

/// Building a token failed.
#[derive(Debug, thiserror::Error)]
pub enum EksTokenError {
    #[error("`{0}` is not an AWS region name")]
    Region(String),
    #[error("cannot sign the STS request: {0}")]
    Sign(String),
    #[error("cannot get AWS credentials{}: {why}", profile_words(.profile))]
    Credentials {
        profile: Option<String>,
        why: String,
    },
}

fn profile_words(profile: &Option<String>) -> String {
    profile
        .as_ref()
        .map(|p| format!(" (profile `{p}`)"))
        .unwrap_or_default()
}

impl EksTokenError {
    /// The user's message: what failed, for which context, and the way back to the exec.
    pub fn to_error(&self, context: &str, exec: &EksExec) -> Error {
        let command = exec.plugin.command();
        let cluster = &exec.cluster_id;
        Error::environment(
            format!(
                "context `{context}`: EKS クラスター {cluster} のトークンを作れません: {self}\n  \
                 `aws sts get-caller-identity` で AWS の認証情報を確認してください（SSO プロファイルなら `aws sso login`）。\
                 kubeconfig のとおり `{command}` を実行するには --eks-token exec（または TRAINLAB_EKS_TOKEN=exec）を指定してください"
            ),
            format!(
                "context `{context}`: cannot build the token for EKS cluster {cluster}: {self}\n  \
                 check the AWS credentials with `aws sts get-caller-identity` (`aws sso login` for SSO profiles); \
                 to run `{command}` as the kubeconfig says, pass --eks-token exec (or set TRAINLAB_EKS_TOKEN=exec)"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_that_cannot_be_built_is_a_credentials_error() {
        let e = EksTokenError::Credentials {
            profile: Some("dev".into()),
            why: "the SSO session has expired".into(),
        };
        assert_eq!(
            e.to_string(),
            "cannot get AWS credentials (profile `dev`): the SSO session has expired"
        );
        let kube_error = kube::Error::Service(Box::new(e));
        assert!(crate::cluster::is_credentials_error(&kube_error));
        let other = kube::Error::Service("connection refused".into());
        assert!(!crate::cluster::is_credentials_error(&other));
    }
}
