//! EKS bearer tokens built in-process instead of running `aws eks get-token` (or
//! `aws-iam-authenticator token`) as the kubeconfig's exec plugin.
//!
//! The exec is a Python process (the AWS CLI) that costs 0.5–1.5 s on every command; the token it
//! prints is a presigned STS request, which this module signs with the AWS SDK's own SigV4 signer
//! (`aws-sigv4`) and credentials from `aws-config`'s default chain, in milliseconds.
//!
//! The token format, as both upstream token generators write it:
//!
//! - aws-cli 1.45.55 `awscli/customizations/eks/get_token.py`: `TokenGenerator` presigns STS
//!   `get_caller_identity` as a `GET` with `ExpiresIn=URL_TIMEOUT` (60 s), the header
//!   `K8S_AWS_ID_HEADER = 'x-k8s-aws-id'` set to the cluster name (or `--cluster-id` for local
//!   clusters on Outposts) and signed (`before-sign.sts.GetCallerIdentity`), and returns
//!   `TOKEN_PREFIX = 'k8s-aws-v1.'` + `base64.urlsafe_b64encode(url).rstrip('=')`;
//!   `STSClientFactory` assumes `--role-arn` first (`RoleSessionName='EKSGetTokenAuth'`).
//! - aws-iam-authenticator v0.7.18 `pkg/token/token.go`: `requestPresignParam = 60`,
//!   `v1Prefix = "k8s-aws-v1."`, `clusterIDHeader = "x-k8s-aws-id"`,
//!   `base64.RawURLEncoding`; its verifier (the one EKS runs) accepts any regional STS host of
//!   the cluster's partition (`verifySTSHostnameFormat`) and a URL whose `X-Amz-Date` is at most
//!   15 minutes old ("presigned STS urls are valid for 15 minutes after timestamp in
//!   x-amz-date", `presignedURLExpiration`), whatever `X-Amz-Expires` says.
//!
//! The request goes to the regional endpoint `sts.<region>.<partition domain>` (botocore's
//! default since `sts_regional_endpoints` defaults to `regional`, botocore `args.py`
//! `_get_sts_regional_endpoints_config`). `tests/conformance/eks_token.py` checks that this
//! module's token equals botocore's for the same credentials, region, cluster and time.
//!
//! What is recognized is deliberately narrow: an exec whose arguments and environment this
//! module understands completely. Anything else (another plugin, `--endpoint-url`, an unknown
//! option or environment variable) keeps running as the exec, through kube's own loader.
//!
//! One file per job: `exec` (which execs are recognized), `sts` (the regional STS host), `presign`
//! (the SigV4-presigned STS URL and the token), `cache` (the process's tokens and when they are
//! replaced), `credentials` (aws-config's chain for an exec), `error`, and `auth` (taking over a
//! kubeconfig's exec and setting each request's token).

mod auth;
mod cache;
mod credentials;
mod error;
mod exec;
mod presign;
mod sts;

pub use auth::{is_token_error, take_over, EksAuth, EksTokenMode};
pub use cache::{refresh_at, TokenSource, REFRESH_BEFORE, TOKEN_LIFETIME};
pub use error::EksTokenError;
pub use exec::{recognize, EksExec, KeepExec, Plugin, Profile, AWS_CLI_SESSION_NAME};
pub use presign::{presigned_url, token_at, CLUSTER_ID_HEADER, PRESIGN_EXPIRES, TOKEN_PREFIX};
pub use sts::sts_host;
