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

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use aws_config::meta::region::ProvideRegion;
use aws_config::BehaviorVersion;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    sign, SignableBody, SignableRequest, SignatureLocation, SigningSettings,
};
use aws_sigv4::sign::v4;
use base64::Engine as _;
use futures::future::BoxFuture;
use http::{HeaderValue, Request};
use kube::config::ExecConfig;
use tower::BoxError;

use crate::Error;

/// What a token starts with (get_token.py `TOKEN_PREFIX`, token.go `v1Prefix`).
pub const TOKEN_PREFIX: &str = "k8s-aws-v1.";
/// The signed header naming the cluster (get_token.py `K8S_AWS_ID_HEADER`).
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";
/// `X-Amz-Expires` of the presigned URL (get_token.py `URL_TIMEOUT`, token.go
/// `requestPresignParam`): STS ignores it for this purpose; the verifier does not.
pub const PRESIGN_EXPIRES: Duration = Duration::from_secs(60);
/// How long EKS accepts a token after its `X-Amz-Date` (token.go `presignedURLExpiration`).
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// A cached token is replaced this long before it expires. The AWS CLI announces 14 minutes
/// (get_token.py `TOKEN_EXPIRATION_MINS = 14`, so client-go refreshes a minute early), and
/// aws-iam-authenticator the same (`presignedURLExpiration - 1*time.Minute`); the minute covers
/// clock skew between this machine and the API server and a request still in flight or retried
/// when the token turns 15 minutes old.
pub const REFRESH_BEFORE: Duration = Duration::from_secs(60);
/// The AWS CLI's session name when it assumes `--role-arn` (get_token.py `_get_role_credentials`).
pub const AWS_CLI_SESSION_NAME: &str = "EKSGetTokenAuth";

/// How trainlab gets an EKS token when the kubeconfig's user runs `aws eks get-token` or
/// `aws-iam-authenticator token` (`--eks-token`, `TRAINLAB_EKS_TOKEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EksTokenMode {
    /// Sign the token here with the same credentials, cached for the run
    #[default]
    InProcess,
    /// Run the command as the kubeconfig says, as kubectl does
    Exec,
}

/// The exec plugin whose token is built in-process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Plugin {
    /// `aws eks get-token` (the AWS CLI, what `aws eks update-kubeconfig` writes).
    AwsCli,
    /// `aws-iam-authenticator token`.
    IamAuthenticator,
}

impl Plugin {
    pub fn command(self) -> &'static str {
        match self {
            Plugin::AwsCli => "aws eks get-token",
            Plugin::IamAuthenticator => "aws-iam-authenticator token",
        }
    }
}

/// Where the AWS profile came from: the AWS CLI's `--profile` flag makes botocore ignore
/// credentials in the environment (`create_credential_resolver`: "An explicitly provided
/// profile will negate an EnvProvider"); `AWS_PROFILE` does not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Profile {
    pub name: String,
    pub from_flag: bool,
}

/// An exec plugin trainlab can stand in for: what its arguments and environment name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EksExec {
    pub plugin: Plugin,
    /// The value of `x-k8s-aws-id`: the cluster name (or an Outposts cluster's id).
    pub cluster_id: String,
    /// `--region`, else the region variable the plugin reads; `None`: the profile's region.
    pub region: Option<String>,
    pub profile: Option<Profile>,
    pub role_arn: Option<String>,
    pub session_name: Option<String>,
    pub external_id: Option<String>,
}

/// Why a kubeconfig's exec keeps running as an exec (said at `-v`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeepExec {
    #[error("`{0}` is not `aws` or `aws-iam-authenticator`")]
    OtherCommand(String),
    #[error("its arguments are not `{0}` (`{1}`)")]
    OtherSubcommand(&'static str, String),
    #[error("option `{0}` is not one trainlab reproduces")]
    Option(String),
    #[error("option `{0}` has no value")]
    MissingValue(String),
    #[error("it sets the environment variable {0}, which trainlab does not reproduce")]
    Environment(String),
    #[error("it names no cluster")]
    NoCluster,
    #[error("it names the cluster twice")]
    TwoClusters,
    #[error("`{0}` is not an AWS region name")]
    Region(String),
    #[error("no region is given (--region, the environment or the profile)")]
    NoRegion,
}

/// Variables the plugins read whose effect is reproduced (or harmless) here. Any other variable in
/// the exec's `env` keeps the exec.
const AWS_CLI_ENV: [&str; 5] = [
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_DEFAULT_REGION",
    // The token is signed for the regional endpoint either way, which EKS accepts.
    "AWS_STS_REGIONAL_ENDPOINTS",
    // Paging only.
    "AWS_PAGER",
];
const AUTHENTICATOR_ENV: [&str; 7] = [
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_STS_REGIONAL_ENDPOINTS",
    "DEFAULT_ROLE",
    "KUBERNETES_AWS_AUTHENTICATOR_CLUSTER_ID",
];

/// Whether trainlab can build this exec's token itself, and what the token is for.
///
/// `process_env` reads this process's environment (the exec inherits it, and its own `env`
/// entries win, as kube and client-go run it). Recognized:
///
/// - `aws [GLOBAL] eks get-token --cluster-name NAME|--cluster-id ID [--role-arn|--role ARN]`
///   with the global options `--region`, `--profile`, `--output`, `--color`, `--debug`,
///   `--no-cli-pager`, in any order, `--opt value` or `--opt=value` (argparse); the region
///   otherwise from `AWS_DEFAULT_REGION` (botocore `configprovider.py`), the profile from
///   `AWS_DEFAULT_PROFILE` then `AWS_PROFILE`.
/// - `aws-iam-authenticator token -i|--cluster-id ID [-r|--role ARN] [--region R]
///   [-s|--session-name S] [-e|--external-id X] [--cache] [-l F] [-v L]` (pflag spellings,
///   `cmd/aws-iam-authenticator/token.go` and `root.go` of v0.7.18), with `DEFAULT_ROLE` and
///   `KUBERNETES_AWS_AUTHENTICATOR_CLUSTER_ID` as viper binds them; the region otherwise from
///   `AWS_REGION`/`AWS_DEFAULT_REGION` as the Go SDK reads them.
pub fn recognize(
    exec: &ExecConfig,
    process_env: &dyn Fn(&str) -> Option<String>,
) -> Result<EksExec, KeepExec> {
    let command = exec.command.as_deref().unwrap_or_default();
    let program = std::path::Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    let program = program
        .strip_suffix(".exe")
        .or_else(|| program.strip_suffix(".cmd"))
        .unwrap_or(program);
    let args = exec.args.clone().unwrap_or_default();
    let own_env: HashMap<String, String> = exec
        .env
        .iter()
        .flatten()
        .filter_map(|e| Some((e.get("name")?.clone(), e.get("value")?.clone())))
        .collect();
    let (plugin, known_env): (Plugin, &[&str]) = match program {
        "aws" => (Plugin::AwsCli, &AWS_CLI_ENV),
        "aws-iam-authenticator" => (Plugin::IamAuthenticator, &AUTHENTICATOR_ENV),
        _ => return Err(KeepExec::OtherCommand(command.to_string())),
    };
    if let Some(unknown) = own_env.keys().find(|k| !known_env.contains(&k.as_str())) {
        return Err(KeepExec::Environment(unknown.clone()));
    }
    let env = |name: &str| {
        own_env
            .get(name)
            .cloned()
            .or_else(|| process_env(name))
            .filter(|v| !v.is_empty())
    };
    let found = match plugin {
        Plugin::AwsCli => aws_cli(&args, &env)?,
        Plugin::IamAuthenticator => iam_authenticator(&args, &env)?,
    };
    if let Some(region) = &found.region {
        sts_host(region).ok_or_else(|| KeepExec::Region(region.clone()))?;
    }
    Ok(found)
}

/// Splits `--opt=value`; `None` for words that are no option.
fn split_option(word: &str) -> Option<(&str, Option<&str>)> {
    if !word.starts_with('-') || word == "-" || word == "--" {
        return None;
    }
    Some(match word.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (word, None),
    })
}

/// Reads an option's value: attached (`--opt=v`) or the next word.
fn value_of(
    name: &str,
    attached: Option<&str>,
    rest: &mut std::slice::Iter<'_, String>,
) -> Result<String, KeepExec> {
    match attached {
        Some(v) => Ok(v.to_string()),
        None => rest
            .next()
            .cloned()
            .ok_or_else(|| KeepExec::MissingValue(name.to_string())),
    }
}

fn set_once(slot: &mut Option<String>, value: String) -> Result<(), KeepExec> {
    if slot.replace(value).is_some() {
        return Err(KeepExec::TwoClusters);
    }
    Ok(())
}

/// `aws ... eks get-token ...` (aws-cli `GetTokenCommand.ARG_TABLE` and the CLI's global
/// options); `update_kubeconfig.py` `get_user_entry` writes `--region R eks get-token
/// --cluster-name NAME --output json [--role ARN]` with `AWS_PROFILE` in `env`.
fn aws_cli(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<EksExec, KeepExec> {
    let mut words = args.iter();
    let mut positional = Vec::new();
    let (mut cluster, mut region, mut profile, mut role) = (None, None, None, None);
    while let Some(word) = words.next() {
        let Some((name, attached)) = split_option(word) else {
            positional.push(word.as_str());
            continue;
        };
        match name {
            "--cluster-name" | "--cluster-id" => {
                set_once(&mut cluster, value_of(name, attached, &mut words)?)?
            }
            // `--role` is what update-kubeconfig writes: argparse takes an unambiguous prefix.
            "--role-arn" | "--role" => role = Some(value_of(name, attached, &mut words)?),
            "--region" => region = Some(value_of(name, attached, &mut words)?),
            "--profile" => profile = Some(value_of(name, attached, &mut words)?),
            // Only how the answer is printed.
            "--output" | "--color" => {
                value_of(name, attached, &mut words)?;
            }
            "--debug" | "--no-cli-pager" if attached.is_none() => {}
            _ => return Err(KeepExec::Option(word.clone())),
        }
    }
    if positional != ["eks", "get-token"] {
        return Err(KeepExec::OtherSubcommand(
            Plugin::AwsCli.command(),
            args.join(" "),
        ));
    }
    let cluster_id = cluster.ok_or(KeepExec::NoCluster)?;
    let profile = match profile {
        Some(name) => Some(Profile {
            name,
            from_flag: true,
        }),
        None => env("AWS_DEFAULT_PROFILE")
            .or_else(|| env("AWS_PROFILE"))
            .map(|name| Profile {
                name,
                from_flag: false,
            }),
    };
    Ok(EksExec {
        plugin: Plugin::AwsCli,
        cluster_id,
        region: region.or_else(|| env("AWS_DEFAULT_REGION")),
        profile,
        role_arn: role,
        session_name: role_session(Plugin::AwsCli),
        external_id: None,
    })
}

fn role_session(plugin: Plugin) -> Option<String> {
    (plugin == Plugin::AwsCli).then(|| AWS_CLI_SESSION_NAME.to_string())
}

/// `aws-iam-authenticator [-i ID] token [flags]` (cobra/pflag: `-i v`, `-i=v`, `-iv`,
/// `--cluster-id v`, `--cluster-id=v`).
fn iam_authenticator(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<EksExec, KeepExec> {
    let mut words = args.iter();
    let mut positional = Vec::new();
    let (mut cluster, mut region, mut role) = (None, None, None);
    let (mut session, mut external) = (None, None);
    while let Some(word) = words.next() {
        let Some((name, attached)) = split_option(word) else {
            positional.push(word.as_str());
            continue;
        };
        // `-iNAME`: a short option with its value attached.
        let (name, attached) = match (name.len() > 2 && !name.starts_with("--"), attached) {
            (true, None) => (&name[..2], Some(&name[2..])),
            _ => (name, attached),
        };
        match name {
            "-i" | "--cluster-id" => set_once(&mut cluster, value_of(name, attached, &mut words)?)?,
            "-r" | "--role" => role = Some(value_of(name, attached, &mut words)?),
            "--region" => region = Some(value_of(name, attached, &mut words)?),
            "-s" | "--session-name" => session = Some(value_of(name, attached, &mut words)?),
            "-e" | "--external-id" => external = Some(value_of(name, attached, &mut words)?),
            // Logging only.
            "-l" | "--log-format" | "-v" | "--log-verbosity" => {
                value_of(name, attached, &mut words)?;
            }
            // A credentials cache on disk; this process keeps its own in memory.
            "--cache" => {}
            _ => return Err(KeepExec::Option(word.clone())),
        }
    }
    if positional != ["token"] {
        return Err(KeepExec::OtherSubcommand(
            Plugin::IamAuthenticator.command(),
            args.join(" "),
        ));
    }
    let cluster_id = cluster
        .or_else(|| env("KUBERNETES_AWS_AUTHENTICATOR_CLUSTER_ID"))
        .ok_or(KeepExec::NoCluster)?;
    Ok(EksExec {
        plugin: Plugin::IamAuthenticator,
        cluster_id,
        region: region
            .or_else(|| env("AWS_REGION"))
            .or_else(|| env("AWS_DEFAULT_REGION")),
        profile: env("AWS_PROFILE")
            .or_else(|| env("AWS_DEFAULT_PROFILE"))
            .map(|name| Profile {
                name,
                from_flag: false,
            }),
        role_arn: role.or_else(|| env("DEFAULT_ROLE")),
        session_name: session,
        external_id: external,
    })
}

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

/// The presigned STS `GetCallerIdentity` URL a token carries, signed at `at`.
///
/// Query parameters in botocore's order (`SigV4QueryAuth._modify_request_before_signing`: the
/// operation's, then the auth parameters, the signature last), each percent-encoded as SigV4
/// requires (RFC 3986 unreserved characters kept), so the URL is byte for byte botocore's.
pub fn presigned_url(
    credentials: &Credentials,
    region: &str,
    cluster_id: &str,
    at: SystemTime,
) -> Result<String, EksTokenError> {
    let host = sts_host(region).ok_or_else(|| EksTokenError::Region(region.to_string()))?;
    let base = format!("https://{host}/?Action=GetCallerIdentity&Version=2011-06-15");
    let identity = credentials.clone().into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(PRESIGN_EXPIRES);
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(at)
        .settings(settings)
        .build()
        .map_err(|e| EksTokenError::Sign(e.to_string()))?
        .into();
    let headers = [("host", host.as_str()), (CLUSTER_ID_HEADER, cluster_id)];
    let request = SignableRequest::new(
        "GET",
        base.as_str(),
        headers.into_iter(),
        SignableBody::Bytes(&[]),
    )
    .map_err(|e| EksTokenError::Sign(e.to_string()))?;
    let (instructions, _signature) = sign(request, &params)
        .map_err(|e| EksTokenError::Sign(e.to_string()))?
        .into_parts();
    let (_, mut query) = instructions.into_parts();
    const ORDER: [&str; 7] = [
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Expires",
        "X-Amz-SignedHeaders",
        "X-Amz-Security-Token",
        "X-Amz-Signature",
    ];
    query.sort_by_key(|(name, _)| ORDER.iter().position(|o| o == name));
    let mut url = base;
    for (name, value) in query {
        url.push('&');
        url.push_str(name);
        url.push('=');
        url.extend(percent_encoding::utf8_percent_encode(&value, UNRESERVED));
    }
    Ok(url)
}

/// Everything but RFC 3986's unreserved characters is encoded (SigV4's canonical query, and
/// botocore's `percent_encode`, `safe='-_.~'`).
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The bearer token for `cluster_id`, signed at `at` with `credentials` for `region`:
/// `k8s-aws-v1.` + base64url without padding of [`presigned_url`]. Deterministic: the
/// differential test against botocore calls it with fixed inputs.
pub fn token_at(
    credentials: &Credentials,
    region: &str,
    cluster_id: &str,
    at: SystemTime,
) -> Result<String, EksTokenError> {
    let url = presigned_url(credentials, region, cluster_id, at)?;
    Ok(format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url)
    ))
}

/// When a token signed at `signed_at` with credentials that expire at `credentials_expiry` is
/// replaced: [`REFRESH_BEFORE`] before the earlier of its 15 minutes and its credentials' end
/// (STS refuses a request signed with expired session credentials), never before it was signed.
pub fn refresh_at(signed_at: SystemTime, credentials_expiry: Option<SystemTime>) -> SystemTime {
    let lifetime_end = signed_at + TOKEN_LIFETIME;
    let end = credentials_expiry.map_or(lifetime_end, |e| e.min(lifetime_end));
    end.checked_sub(REFRESH_BEFORE)
        .filter(|t| *t > signed_at)
        .unwrap_or(signed_at)
}

/// One cluster's tokens for this process, shared by every connection to it (a `--watch` run, a
/// room of contexts on the same cluster): one token at a time, refreshed under a lock.
struct Slot {
    credentials: tokio::sync::OnceCell<SharedCredentialsProvider>,
    token: tokio::sync::Mutex<Option<Cached>>,
}

#[derive(Clone)]
struct Cached {
    header: HeaderValue,
    refresh_at: SystemTime,
}

/// The process's token slots, by what the exec would have been run with and the region.
type Slots = HashMap<(EksExec, String), Arc<Slot>>;
static SLOTS: LazyLock<Mutex<Slots>> = LazyLock::new(Default::default);

/// Builds and caches the tokens of one recognized exec.
pub struct TokenSource {
    exec: EksExec,
    region: String,
    slot: Arc<Slot>,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource")
            .field("exec", &self.exec)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    /// The process's source for `exec`, its region resolved (`--region`, the environment, else
    /// the profile's `region`; no instance metadata lookup). Errors when no region is found.
    pub async fn for_exec(exec: EksExec) -> Result<TokenSource, KeepExec> {
        let region = match &exec.region {
            Some(r) => r.clone(),
            None => {
                let mut provider = aws_config::profile::ProfileFileRegionProvider::builder();
                if let Some(p) = &exec.profile {
                    provider = provider.profile_name(&p.name);
                }
                let region = provider.build().region().await.map(|r| r.to_string());
                let region = region.ok_or(KeepExec::NoRegion)?;
                sts_host(&region).ok_or_else(|| KeepExec::Region(region.clone()))?;
                region
            }
        };
        let slot = SLOTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((exec.clone(), region.clone()))
            .or_insert_with(|| {
                Arc::new(Slot {
                    credentials: Default::default(),
                    token: Default::default(),
                })
            })
            .clone();
        Ok(TokenSource { exec, region, slot })
    }

    pub fn exec(&self) -> &EksExec {
        &self.exec
    }

    pub fn region(&self) -> &str {
        &self.region
    }

    /// The `Authorization` header: the cached token while it is fresh, else a new one.
    pub async fn header(&self) -> Result<HeaderValue, EksTokenError> {
        let mut cached = self.slot.token.lock().await;
        let now = SystemTime::now();
        if let Some(c) = cached.as_ref().filter(|c| now < c.refresh_at) {
            return Ok(c.header.clone());
        }
        let started = Instant::now();
        let provider = self
            .slot
            .credentials
            .get_or_init(|| self.credentials_provider())
            .await;
        let credentials =
            provider
                .provide_credentials()
                .await
                .map_err(|e| EksTokenError::Credentials {
                    profile: self.exec.profile.as_ref().map(|p| p.name.clone()),
                    why: error_chain(&e),
                })?;
        let signed_at = SystemTime::now();
        let token = token_at(&credentials, &self.region, &self.exec.cluster_id, signed_at)?;
        let mut header = HeaderValue::try_from(format!("Bearer {token}"))
            .map_err(|e| EksTokenError::Sign(e.to_string()))?;
        header.set_sensitive(true);
        let fresh = Cached {
            header: header.clone(),
            refresh_at: refresh_at(signed_at, credentials.expiry()),
        };
        tracing::info!(
            "EKS token for cluster {} ({}) built in-process in {:.1}ms, in place of `{}`",
            self.exec.cluster_id,
            self.region,
            started.elapsed().as_secs_f64() * 1000.0,
            self.exec.plugin.command()
        );
        *cached = Some(fresh);
        Ok(header)
    }

    /// aws-config's default chain with the exec's profile and region; the role assumed on top
    /// when one is named, as both plugins do.
    async fn credentials_provider(&self) -> SharedCredentialsProvider {
        let region = aws_config::Region::new(self.region.clone());
        let mut loader = aws_config::defaults(BehaviorVersion::latest()).region(region.clone());
        if let Some(profile) = &self.exec.profile {
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
        let Some(role) = &self.exec.role_arn else {
            return base;
        };
        let mut assume = aws_config::sts::AssumeRoleProvider::builder(role)
            .region(region)
            .configure(&sdk);
        if let Some(name) = &self.exec.session_name {
            assume = assume.session_name(name);
        }
        if let Some(id) = &self.exec.external_id {
            assume = assume.external_id(id);
        }
        SharedCredentialsProvider::new(assume.build().await)
    }
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
fn error_chain(e: &dyn std::error::Error) -> String {
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

/// Sets `Authorization` on each request from a [`TokenSource`] (tower's `AsyncFilter`, as kube's
/// own refreshable tokens do).
#[derive(Clone, Debug)]
pub struct EksAuth(pub Arc<TokenSource>);

impl<B: Send + 'static> tower::filter::AsyncPredicate<Request<B>> for EksAuth {
    type Future = BoxFuture<'static, Result<Request<B>, BoxError>>;
    type Request = Request<B>;

    fn check(&mut self, mut request: Request<B>) -> Self::Future {
        let source = self.0.clone();
        Box::pin(async move {
            let header = source.header().await?;
            request
                .headers_mut()
                .insert(http::header::AUTHORIZATION, header);
            Ok(request)
        })
    }
}

/// Takes over the token of `config`'s exec when it is one this module reproduces and `mode`
/// allows: the exec is removed from the config (kube then runs nothing) and the source of the
/// token is returned for the client's auth layer. The first token is built now, so a credentials
/// problem is said once, at connect, as the exec's failure would have been.
pub async fn take_over(
    config: &mut kube::Config,
    mode: EksTokenMode,
    context: &str,
) -> Result<Option<Arc<TokenSource>>, Error> {
    let auth = &config.auth_info;
    // kube uses an exec only when the user has no other credentials (kube-client 5.0.0
    // `client/auth/mod.rs`, `TryFrom<&AuthInfo> for Auth`: auth provider, basic, token, token
    // file, then exec).
    let Some(exec) = auth.exec.as_ref().filter(|_| {
        auth.auth_provider.is_none()
            && auth.username.is_none()
            && auth.token.is_none()
            && auth.token_file.is_none()
    }) else {
        return Ok(None);
    };
    let recognized = recognize(exec, &|name| std::env::var(name).ok());
    if mode == EksTokenMode::Exec {
        if recognized.is_ok() {
            tracing::info!(
                "EKS token: running the kubeconfig's exec `{}` (--eks-token exec)",
                exec.command.as_deref().unwrap_or_default()
            );
        }
        return Ok(None);
    }
    let found = match recognized {
        Ok(found) => found,
        Err(keep) => {
            tracing::info!(
                "running the kubeconfig's exec `{}` for credentials: {keep}",
                exec.command.as_deref().unwrap_or_default()
            );
            return Ok(None);
        }
    };
    let source = match TokenSource::for_exec(found).await {
        Ok(source) => Arc::new(source),
        Err(keep) => {
            tracing::info!(
                "running the kubeconfig's exec `{}` for credentials: {keep}",
                exec.command.as_deref().unwrap_or_default()
            );
            return Ok(None);
        }
    };
    source
        .header()
        .await
        .map_err(|e| e.to_error(context, source.exec()))?;
    config.auth_info.exec = None;
    Ok(Some(source))
}

/// Whether a failed request failed because its EKS token could not be built (a refresh during a
/// long `--watch` whose credentials ran out).
pub fn is_token_error(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(e);
    while let Some(e) = current {
        if e.downcast_ref::<EksTokenError>().is_some() {
            return true;
        }
        current = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(command: &str, args: &[&str], env: &[(&str, &str)]) -> ExecConfig {
        let mut e: ExecConfig = serde_json::from_value(serde_json::json!({
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": command,
            "args": args,
        }))
        .unwrap();
        if !env.is_empty() {
            e.env = Some(
                env.iter()
                    .map(|(n, v)| {
                        HashMap::from([
                            ("name".to_string(), n.to_string()),
                            ("value".to_string(), v.to_string()),
                        ])
                    })
                    .collect(),
            );
        }
        e
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn aws(args: &[&str]) -> Result<EksExec, KeepExec> {
        recognize(&exec("aws", args, &[]), &no_env)
    }

    #[test]
    fn update_kubeconfig_lines_are_recognized() {
        // update_kubeconfig.py `get_user_entry`, with and without --role-arn and a profile.
        let plain = aws(&[
            "--region",
            "us-west-2",
            "eks",
            "get-token",
            "--cluster-name",
            "trainlab",
            "--output",
            "json",
        ])
        .unwrap();
        assert_eq!(
            plain,
            EksExec {
                plugin: Plugin::AwsCli,
                cluster_id: "trainlab".into(),
                region: Some("us-west-2".into()),
                profile: None,
                role_arn: None,
                session_name: Some(AWS_CLI_SESSION_NAME.into()),
                external_id: None,
            }
        );
        let role = recognize(
            &exec(
                "aws",
                &[
                    "--region",
                    "eu-west-1",
                    "eks",
                    "get-token",
                    "--cluster-name",
                    "gpu",
                    "--output",
                    "json",
                    "--role",
                    "arn:aws:iam::123456789012:role/eks-admin",
                ],
                &[("AWS_PROFILE", "trainlab")],
            ),
            &no_env,
        )
        .unwrap();
        assert_eq!(role.cluster_id, "gpu");
        assert_eq!(role.region.as_deref(), Some("eu-west-1"));
        assert_eq!(
            role.role_arn.as_deref(),
            Some("arn:aws:iam::123456789012:role/eks-admin")
        );
        assert_eq!(
            role.profile,
            Some(Profile {
                name: "trainlab".into(),
                from_flag: false
            })
        );
        // Outposts local clusters: --cluster-id.
        let outposts = aws(&[
            "--region",
            "us-west-2",
            "eks",
            "get-token",
            "--cluster-id",
            "0123abcd-1111-2222-3333-444455556666",
            "--output",
            "json",
        ])
        .unwrap();
        assert_eq!(outposts.cluster_id, "0123abcd-1111-2222-3333-444455556666");
    }

    #[test]
    fn other_spellings_of_aws_eks_get_token_are_recognized() {
        // Options anywhere, `=` forms, a full path, --profile, --role-arn, the region from
        // AWS_DEFAULT_REGION (botocore reads no AWS_REGION).
        let e = recognize(
            &exec(
                "/usr/local/bin/aws",
                &[
                    "eks",
                    "--profile=dev",
                    "get-token",
                    "--cluster-name=c1",
                    "--role-arn",
                    "arn:aws:iam::1:role/r",
                ],
                &[],
            ),
            &|k| (k == "AWS_DEFAULT_REGION").then(|| "ap-northeast-1".to_string()),
        )
        .unwrap();
        assert_eq!(e.cluster_id, "c1");
        assert_eq!(e.region.as_deref(), Some("ap-northeast-1"));
        assert_eq!(
            e.profile,
            Some(Profile {
                name: "dev".into(),
                from_flag: true
            })
        );
        assert_eq!(e.role_arn.as_deref(), Some("arn:aws:iam::1:role/r"));
        let only_aws_region = recognize(
            &exec("aws", &["eks", "get-token", "--cluster-name", "c"], &[]),
            &|k| (k == "AWS_REGION").then(|| "eu-west-1".to_string()),
        )
        .unwrap();
        assert_eq!(only_aws_region.region, None);
        // The exec's env wins over this process's, variable by variable, as the plugin sees it;
        // AWS_DEFAULT_PROFILE before AWS_PROFILE (botocore `configprovider.py`).
        let e = recognize(
            &exec(
                "aws.exe",
                &["--debug", "eks", "get-token", "--cluster-name", "c"],
                &[
                    ("AWS_PROFILE", "from-exec"),
                    ("AWS_DEFAULT_REGION", "us-east-2"),
                ],
            ),
            &|k| match k {
                "AWS_PROFILE" => Some("from-process".into()),
                "AWS_DEFAULT_REGION" => Some("us-east-1".into()),
                _ => None,
            },
        )
        .unwrap();
        assert_eq!(e.profile.unwrap().name, "from-exec");
        assert_eq!(e.region.as_deref(), Some("us-east-2"));
        let e = recognize(
            &exec("aws", &["eks", "get-token", "--cluster-name", "c"], &[]),
            &|k| match k {
                "AWS_PROFILE" => Some("p".into()),
                "AWS_DEFAULT_PROFILE" => Some("d".into()),
                _ => None,
            },
        )
        .unwrap();
        assert_eq!(e.profile.unwrap().name, "d");
    }

    #[test]
    fn aws_commands_that_are_not_get_token_as_understood_stay_execs() {
        let cases: [(&[&str], KeepExec); 7] = [
            (
                &["sts", "get-caller-identity"],
                KeepExec::OtherSubcommand("aws eks get-token", "sts get-caller-identity".into()),
            ),
            (
                &[
                    "eks",
                    "get-token",
                    "--cluster-name",
                    "c",
                    "--endpoint-url",
                    "https://x",
                ],
                KeepExec::Option("--endpoint-url".into()),
            ),
            (
                &[
                    "eks",
                    "get-token",
                    "--cluster-name",
                    "c",
                    "--query",
                    "status",
                ],
                KeepExec::Option("--query".into()),
            ),
            (&["eks", "get-token"], KeepExec::NoCluster),
            (
                &[
                    "eks",
                    "get-token",
                    "--cluster-name",
                    "a",
                    "--cluster-id",
                    "b",
                ],
                KeepExec::TwoClusters,
            ),
            (
                &["eks", "get-token", "--cluster-name"],
                KeepExec::MissingValue("--cluster-name".into()),
            ),
            (
                &[
                    "--region",
                    "us-west-2/x",
                    "eks",
                    "get-token",
                    "--cluster-name",
                    "c",
                ],
                KeepExec::Region("us-west-2/x".into()),
            ),
        ];
        for (args, why) in cases {
            assert_eq!(aws(args), Err(why), "{args:?}");
        }
        let credentials_in_env = recognize(
            &exec(
                "aws",
                &["eks", "get-token", "--cluster-name", "c"],
                &[("AWS_ACCESS_KEY_ID", "AKID")],
            ),
            &no_env,
        );
        assert_eq!(
            credentials_in_env,
            Err(KeepExec::Environment("AWS_ACCESS_KEY_ID".into()))
        );
    }

    #[test]
    fn aws_iam_authenticator_is_recognized_in_pflag_spellings() {
        let auth = |args: &[&str], env: &[(&str, &str)]| {
            recognize(&exec("aws-iam-authenticator", args, env), &no_env)
        };
        let e = auth(&["token", "-i", "trainlab"], &[]).unwrap();
        assert_eq!(e.plugin, Plugin::IamAuthenticator);
        assert_eq!(e.cluster_id, "trainlab");
        assert_eq!(e.region, None);
        assert_eq!(e.session_name, None);
        let e = auth(
            &[
                "-i=c2",
                "token",
                "-r",
                "arn:aws:iam::1:role/r",
                "--region=us-gov-west-1",
                "-sme",
                "--external-id",
                "xid",
                "--cache",
            ],
            &[("AWS_PROFILE", "p")],
        )
        .unwrap();
        assert_eq!(e.cluster_id, "c2");
        assert_eq!(e.role_arn.as_deref(), Some("arn:aws:iam::1:role/r"));
        assert_eq!(e.region.as_deref(), Some("us-gov-west-1"));
        assert_eq!(e.session_name.as_deref(), Some("me"));
        assert_eq!(e.external_id.as_deref(), Some("xid"));
        assert_eq!(e.profile.unwrap().name, "p");
        let e = auth(
            &["token", "--cluster-id", "c3"],
            &[
                ("DEFAULT_ROLE", "arn:aws:iam::1:role/d"),
                ("AWS_REGION", "eu-north-1"),
            ],
        )
        .unwrap();
        assert_eq!(e.role_arn.as_deref(), Some("arn:aws:iam::1:role/d"));
        assert_eq!(e.region.as_deref(), Some("eu-north-1"));
        let e = auth(
            &["token"],
            &[("KUBERNETES_AWS_AUTHENTICATOR_CLUSTER_ID", "from-env")],
        )
        .unwrap();
        assert_eq!(e.cluster_id, "from-env");
        assert_eq!(
            auth(&["token", "-i", "c", "--forward-session-name"], &[]),
            Err(KeepExec::Option("--forward-session-name".into()))
        );
        assert_eq!(
            auth(&["token", "-i", "c", "--token-only"], &[]),
            Err(KeepExec::Option("--token-only".into()))
        );
        assert_eq!(
            auth(&["verify", "-i", "c"], &[]).unwrap_err(),
            KeepExec::OtherSubcommand("aws-iam-authenticator token", "verify -i c".into())
        );
    }

    #[test]
    fn other_exec_plugins_stay_execs() {
        for command in [
            "kubelogin",
            "gke-gcloud-auth-plugin",
            "/opt/bin/awsx",
            "aws-vault",
        ] {
            let e = exec(command, &["eks", "get-token", "--cluster-name", "c"], &[]);
            assert_eq!(
                recognize(&e, &no_env),
                Err(KeepExec::OtherCommand(command.into()))
            );
        }
    }

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

    fn fixed_credentials(token: Option<&str>) -> Credentials {
        Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            token.map(str::to_string),
            None,
            "test",
        )
    }

    #[test]
    fn a_token_is_the_prefix_and_the_presigned_url_in_base64url() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_270_706); // 2026-12-03T04:05:06Z
        let creds = fixed_credentials(Some("FQoGZXIvYXdzE//+ab="));
        let url = presigned_url(&creds, "us-west-2", "trainlab", at).unwrap();
        // botocore 1.43.11 for the same inputs (the conformance suite checks many more).
        assert_eq!(
            url,
            "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15\
             &X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIDEXAMPLE%2F20261203%2Fus-west-2%2Fsts%2Faws4_request\
             &X-Amz-Date=20261203T040506Z&X-Amz-Expires=60\
             &X-Amz-SignedHeaders=host%3Bx-k8s-aws-id\
             &X-Amz-Security-Token=FQoGZXIvYXdzE%2F%2F%2Bab%3D\
             &X-Amz-Signature=ad17d48d8e0da292100228bee04f4042b3add1ddc256df1ce4022847133be594"
        );
        let token = token_at(&creds, "us-west-2", "trainlab", at).unwrap();
        let body = token.strip_prefix(TOKEN_PREFIX).unwrap();
        assert!(!body.contains('=') && !body.contains('+') && !body.contains('/'));
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), url);
    }

    /// Counts the credentials it hands out.
    #[derive(Debug, Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl ProvideCredentials for Counting {
        fn provide_credentials<'a>(
            &'a self,
        ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            aws_credential_types::provider::future::ProvideCredentials::ready(Ok(Credentials::new(
                format!("AKID{n}"),
                "secret",
                None,
                None,
                "test",
            )))
        }
    }

    #[tokio::test]
    async fn a_token_is_reused_until_its_refresh_time_then_signed_again() {
        let counting = Arc::new(Counting::default());
        let slot = Arc::new(Slot {
            credentials: tokio::sync::OnceCell::new_with(Some(SharedCredentialsProvider::new(
                CountingRef(counting.clone()),
            ))),
            token: Default::default(),
        });
        let source = TokenSource {
            exec: aws(&[
                "--region",
                "us-west-2",
                "eks",
                "get-token",
                "--cluster-name",
                "c",
            ])
            .unwrap(),
            region: "us-west-2".into(),
            slot: slot.clone(),
        };
        let first = source.header().await.unwrap();
        assert!(first.is_sensitive());
        let text = first.to_str().unwrap();
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text.strip_prefix("Bearer k8s-aws-v1.").unwrap())
            .unwrap();
        assert!(String::from_utf8(url)
            .unwrap()
            .contains("Credential=AKID0%2F"));
        // Every request of the run (every `--wait` round) gets the same token...
        for _ in 0..5 {
            assert_eq!(source.header().await.unwrap(), first);
        }
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        // ...until its refresh time has passed: then new credentials sign a new one.
        slot.token.lock().await.as_mut().unwrap().refresh_at = SystemTime::now();
        let second = source.header().await.unwrap();
        assert_ne!(second, first);
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::SeqCst), 2);

        // The auth layer sets it on each request.
        let mut auth = EksAuth(Arc::new(source));
        let request = tower::filter::AsyncPredicate::check(&mut auth, Request::new(()))
            .await
            .unwrap();
        assert_eq!(request.headers()[http::header::AUTHORIZATION], second);
    }

    #[derive(Debug)]
    struct CountingRef(Arc<Counting>);

    impl ProvideCredentials for CountingRef {
        fn provide_credentials<'a>(
            &'a self,
        ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            self.0.provide_credentials()
        }
    }

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

    #[test]
    fn tokens_are_replaced_a_minute_before_they_or_their_credentials_expire() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(refresh_at(t0, None), t0 + Duration::from_secs(14 * 60));
        let later = t0 + Duration::from_secs(3600);
        assert_eq!(
            refresh_at(t0, Some(later)),
            t0 + Duration::from_secs(14 * 60)
        );
        let soon = t0 + Duration::from_secs(5 * 60);
        assert_eq!(refresh_at(t0, Some(soon)), t0 + Duration::from_secs(4 * 60));
        // Credentials about to expire: the token is used once and replaced at the next request.
        assert_eq!(refresh_at(t0, Some(t0 + Duration::from_secs(30))), t0);
    }
}
