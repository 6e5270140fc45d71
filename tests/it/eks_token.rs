//! EKS tokens built in-process: a kubeconfig exactly as `aws eks update-kubeconfig` writes it
//! (tests/data/eks-kubeconfig/) takes the in-process path, its token carries the presigned STS
//! request with the cluster's name and the caller's credentials, no `aws` process runs, and
//! `TRAINLAB_EKS_TOKEN=exec` (or `--eks-token exec`) runs the exec instead. The token's bytes are
//! checked against botocore by the conformance suite (`eks_tokens_match_botocore`).

use crate::support::emulator::Emulator;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use base64::Engine as _;
use kube::config::Kubeconfig;
use trainlab::cluster::eks_token::{recognize, EksExec, Plugin, Profile, TOKEN_PREFIX};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/eks-kubeconfig")
        .join(name)
}

/// The exec of the current context's user.
fn exec_of(kubeconfig: &Path) -> kube::config::ExecConfig {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap();
    let context = kc.current_context.clone().unwrap();
    let user = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.user.clone().unwrap())
        .unwrap();
    kc.auth_infos
        .iter()
        .find(|a| a.name == user)
        .and_then(|a| a.auth_info.as_ref())
        .and_then(|a| a.exec.clone())
        .unwrap()
}

#[test]
fn update_kubeconfig_users_are_recognized() {
    let none = |_: &str| None;
    assert_eq!(
        recognize(&exec_of(&fixture("update-kubeconfig.yaml")), &none),
        Ok(EksExec {
            plugin: Plugin::AwsCli,
            cluster_id: "trainlab".into(),
            region: Some("us-west-2".into()),
            profile: None,
            role_arn: None,
            session_name: Some("EKSGetTokenAuth".into()),
            external_id: None,
        })
    );
    assert_eq!(
        recognize(
            &exec_of(&fixture("update-kubeconfig-profile-role.yaml")),
            &none
        ),
        Ok(EksExec {
            plugin: Plugin::AwsCli,
            cluster_id: "trainlab".into(),
            region: Some("us-west-2".into()),
            profile: Some(Profile {
                name: "trainlab".into(),
                from_flag: false,
            }),
            role_arn: Some("arn:aws:iam::123456789012:role/eks-admin".into()),
            session_name: Some("EKSGetTokenAuth".into()),
            external_id: None,
        })
    );
}

/// A cluster answering as the fixture's EKS endpoint would: the emulator over TLS.
struct Setup {
    emu: Emulator,
    dir: tempfile::TempDir,
    /// Where the stand-in `aws` writes its arguments when it is run.
    ran: PathBuf,
}

/// The fixture with only the cluster's `server` and `certificate-authority-data` pointing at the
/// emulator; the context and the user's exec stay exactly as update-kubeconfig wrote them. A
/// stand-in `aws` on PATH records that it ran and answers an ExecCredential with the token
/// `from-the-exec`.
fn setup(name: &str) -> Setup {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let emu = Emulator::start_from(&[
        &root.join("tests/data/kind-nodes"),
        &root.join("tests/data/efa-nccl/solution-state"),
    ])
    .objects();
    let emu = Emulator::start_tls(emu);
    let dir = tempfile::tempdir().unwrap();
    emu.kubeconfig(dir.path(), "unused");
    let pem = std::fs::read(dir.path().join("emulator-ca.pem")).unwrap();
    let ca = base64::engine::general_purpose::STANDARD.encode(pem);
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut replaced = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let indent = &line[..line.len() - line.trim_start().len()];
            if line.trim_start().starts_with("server: ") {
                replaced += 1;
                format!("{indent}server: {}", emu.url())
            } else if line
                .trim_start()
                .starts_with("certificate-authority-data: ")
            {
                replaced += 1;
                format!("{indent}certificate-authority-data: {ca}")
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_eq!(replaced, 2, "{text}");
    std::fs::write(dir.path().join("config"), lines.join("\n") + "\n").unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let ran = dir.path().join("aws-ran");
    let aws = bin.join("aws");
    std::fs::write(
        &aws,
        format!(
            "#!/bin/sh\necho \"$AWS_PROFILE $*\" >> '{}'\n\
             echo '{{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"spec\":{{}},\"status\":{{\"token\":\"from-the-exec\"}}}}'\n",
            ran.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(0o755)).unwrap();
    Setup { emu, dir, ran }
}

impl Setup {
    /// `trainlab check efa-nccl` with nothing of this machine's AWS settings: only `env`.
    fn check(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::cargo_bin("trainlab").unwrap();
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", self.dir.path())
            .env("KUBECONFIG", self.dir.path().join("config"))
            .env("AWS_CONFIG_FILE", self.dir.path().join("aws-config"))
            .env(
                "AWS_SHARED_CREDENTIALS_FILE",
                self.dir.path().join("aws-credentials"),
            )
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("NO_COLOR", "1")
            .args(["check", "efa-nccl", "-o", "json", "-v"])
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "exit {code:?}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The one `Authorization` header every request carried.
    fn authorization(&self) -> String {
        let requests = self.emu.requests();
        assert!(!requests.is_empty());
        let headers: std::collections::BTreeSet<String> = requests
            .iter()
            .map(|r| r.header("authorization").unwrap_or("(none)").to_string())
            .collect();
        assert_eq!(headers.len(), 1, "one token for the whole run: {headers:?}");
        headers.into_iter().next().unwrap()
    }

    fn aws_ran(&self) -> Option<String> {
        std::fs::read_to_string(&self.ran).ok()
    }
}

/// The presigned URL inside `Bearer k8s-aws-v1.…`.
fn presigned_url(authorization: &str) -> String {
    let token = authorization
        .strip_prefix("Bearer ")
        .and_then(|t| t.strip_prefix(TOKEN_PREFIX))
        .unwrap_or_else(|| panic!("not an EKS token: {authorization}"));
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .unwrap();
    String::from_utf8(url).unwrap()
}

const KEY: (&str, &str) = ("AWS_ACCESS_KEY_ID", "AKIDTRAINLABTEST");
const SECRET: (&str, &str) = ("AWS_SECRET_ACCESS_KEY", "trainlab-test-secret");

#[test]
fn an_update_kubeconfig_user_gets_its_token_in_process() {
    let s = setup("update-kubeconfig.yaml");
    let out = s.check(&[], &[KEY, SECRET]);
    let url = presigned_url(&s.authorization());
    assert!(
        url.starts_with(
            "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15\
             &X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDTRAINLABTEST%2F"
        ),
        "{url}"
    );
    assert!(url.contains("%2Fus-west-2%2Fsts%2Faws4_request&"), "{url}");
    assert!(
        url.contains("&X-Amz-Expires=60&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id&X-Amz-Signature="),
        "{url}"
    );
    assert!(!url.contains("X-Amz-Security-Token"), "{url}");
    assert_eq!(s.aws_ran(), None, "no `aws` process runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("EKS token for cluster trainlab (us-west-2) built in-process"),
        "{stderr}"
    );
}

#[test]
fn eks_token_exec_runs_the_kubeconfigs_aws_eks_get_token() {
    for (args, env) in [
        (&[][..], &[("TRAINLAB_EKS_TOKEN", "exec")][..]),
        (&["--eks-token", "exec"][..], &[][..]),
    ] {
        let s = setup("update-kubeconfig.yaml");
        let env: Vec<(&str, &str)> = env.iter().copied().chain([KEY, SECRET]).collect();
        s.check(args, &env);
        assert_eq!(s.authorization(), "Bearer from-the-exec");
        // kube-client 5 runs the exec for each client twice: for a client certificate
        // (`Config::exec_identity_pem`, building the TLS connector) and for the token
        // (`auth_layer`).
        let ran = s.aws_ran().unwrap_or_default();
        assert!(!ran.is_empty(), "{args:?} {env:?}");
        for line in ran.lines() {
            assert_eq!(
                line, " --region us-west-2 eks get-token --cluster-name trainlab --output json",
                "{args:?} {env:?}"
            );
        }
    }
}

#[test]
fn credentials_that_cannot_be_found_are_an_environment_error_naming_the_way_back() {
    let s = setup("update-kubeconfig.yaml");
    let mut cmd = Command::cargo_bin("trainlab").unwrap();
    let out = cmd
        .env_clear()
        .env("HOME", s.dir.path())
        .env("KUBECONFIG", s.dir.path().join("config"))
        .env("AWS_CONFIG_FILE", s.dir.path().join("aws-config"))
        .env(
            "AWS_SHARED_CREDENTIALS_FILE",
            s.dir.path().join("aws-credentials"),
        )
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("NO_COLOR", "1")
        .args(["check", "efa-nccl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot build the token for EKS cluster trainlab")
            && stderr.contains("--eks-token exec"),
        "{stderr}"
    );
    assert!(s.emu.requests().is_empty());
    assert_eq!(s.aws_ran(), None);
}

/// The role update-kubeconfig writes (`--role ARN`) is assumed with the profile's keys
/// (`env: AWS_PROFILE`) through STS (moto on 127.0.0.1), and the token is signed with the role's
/// session credentials.
#[test]
fn an_update_kubeconfig_user_with_a_profile_and_a_role_assumes_it_in_process() {
    let Some(moto) = crate::eks_doctor::moto() else {
        return;
    };
    let s = setup("update-kubeconfig-profile-role.yaml");
    std::fs::write(
        s.dir.path().join("aws-config"),
        "[profile trainlab]\nregion = us-west-2\n",
    )
    .unwrap();
    std::fs::write(
        s.dir.path().join("aws-credentials"),
        "[trainlab]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\n",
    )
    .unwrap();
    s.check(&[], &[("AWS_ENDPOINT_URL_STS", moto.url.as_str())]);
    let url = presigned_url(&s.authorization());
    assert!(
        url.starts_with("https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity"),
        "{url}"
    );
    // moto's AssumeRole answers session credentials (an ASIA key and a session token).
    assert!(url.contains("&X-Amz-Credential=ASIA"), "{url}");
    assert!(url.contains("&X-Amz-Security-Token="), "{url}");
    assert_eq!(s.aws_ran(), None);
}

/// Without `--region` in the exec, the region is the profile's (`AWS_PROFILE` from the
/// environment, its `region` in the AWS config file), and the profile's keys sign; with no region
/// anywhere the exec runs, as it would decide its own.
#[test]
fn without_region_arguments_the_profiles_region_is_used_or_the_exec_runs() {
    let s = setup("update-kubeconfig.yaml");
    let config = s.dir.path().join("config");
    let text = std::fs::read_to_string(&config).unwrap();
    let without_region = text.replace("      - --region\n      - us-west-2\n", "");
    assert_ne!(without_region, text);
    std::fs::write(&config, without_region).unwrap();
    std::fs::write(
        s.dir.path().join("aws-credentials"),
        "[dev]\naws_access_key_id = AKIDDEV\naws_secret_access_key = dev-secret\n",
    )
    .unwrap();

    // No region anywhere: the exec decides.
    s.check(&[], &[("AWS_PROFILE", "dev")]);
    assert_eq!(s.authorization(), "Bearer from-the-exec");
    assert!(s.aws_ran().is_some());

    std::fs::write(
        s.dir.path().join("aws-config"),
        "[profile dev]\nregion = eu-west-3\n",
    )
    .unwrap();
    std::fs::remove_file(&s.ran).unwrap();
    s.emu.clear_requests();
    s.check(&[], &[("AWS_PROFILE", "dev")]);
    let url = presigned_url(&s.authorization());
    assert!(
        url.starts_with("https://sts.eu-west-3.amazonaws.com/?")
            && url.contains("&X-Amz-Credential=AKIDDEV%2F"),
        "{url}"
    );
    assert_eq!(s.aws_ran(), None);
}
