//! Which kubeconfig execs trainlab stands in for: `aws eks get-token` and
//! `aws-iam-authenticator token` read to an `EksExec` (cluster, region, profile, role), or why
//! the exec keeps running (`KeepExec`).

use std::collections::HashMap;

use kube::config::ExecConfig;

use super::sts::sts_host;

/// The AWS CLI's session name when it assumes `--role-arn` (get_token.py `_get_role_credentials`).
pub const AWS_CLI_SESSION_NAME: &str = "EKSGetTokenAuth";

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

#[cfg(test)]
pub(super) mod tests {
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

    pub(in crate::cluster::eks_token) fn aws(args: &[&str]) -> Result<EksExec, KeepExec> {
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
}
