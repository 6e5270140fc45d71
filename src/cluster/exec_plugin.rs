//! A kubeconfig's exec credential plugin, run once before kube runs it, with a bound and in the
//! user's terms. kube runs the plugin itself (and again when its token expires) but waits for it
//! without end, and when it fails shows `KUBERNETES_EXEC_INFO` and a Rust `Output { … }` dump
//! (kube-client 5.0.0 `client/auth/mod.rs`, `auth_exec`). Running it here first, the same way
//! (its args and env, `KUBERNETES_EXEC_INFO` with `interactive: false`), turns a plugin that
//! hangs, fails or is missing into one error that names the command and quotes what it said
//! (exit 3). A plugin that answers is then run by kube as before, so its tokens still refresh
//! during a long `--watch`; plugins cache their token, so the second run costs little.

use std::process::Stdio;
use std::time::Duration;

use kube::config::ExecConfig;
use tokio::io::AsyncReadExt;

use crate::Error;

/// How long the plugin may take when no `--exec-timeout` is given.
pub const DEFAULT_BOUND: Duration = Duration::from_secs(60);

/// At most this much of the plugin's stdout is read (a credential is a few KiB; a plugin that
/// prints more is broken) and this much of its stderr is quoted.
const MAX_STDOUT: u64 = 1024 * 1024;
const MAX_STDERR_QUOTED: usize = 2000;

/// What the plugin must print (client.authentication.k8s.io ExecCredential): a token, or a
/// client certificate and key.
#[derive(serde::Deserialize)]
struct Credential {
    status: Option<Status>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// The command line as a user would type it, for messages.
fn shown(exec: &ExecConfig) -> String {
    let mut words = vec![exec.command.clone().unwrap_or_default()];
    words.extend(exec.args.clone().unwrap_or_default());
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
}

/// Runs the plugin once, bounded by `bound` (zero: no bound), and checks it printed a credential.
pub async fn preflight(exec: &ExecConfig, context: &str, bound: Duration) -> Result<(), Error> {
    let Some(program) = exec.command.as_deref().filter(|c| !c.is_empty()) else {
        return Err(Error::usage(
            format!(
                "context `{context}`: kubeconfig の `users[].user.exec` に `command` がありません"
            ),
            format!("context `{context}`: the kubeconfig's `users[].user.exec` has no `command`"),
        ));
    };
    let line = shown(exec);
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(exec.args.clone().unwrap_or_default());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            cmd.env(name, value);
        }
    }
    for name in exec.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    let api_version = exec
        .api_version
        .clone()
        .unwrap_or_else(|| "client.authentication.k8s.io/v1".into());
    let info = serde_json::json!({
        "apiVersion": api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": false},
    });
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        let hint = exec
            .install_hint
            .as_deref()
            .map(|h| format!("\n  {h}"))
            .unwrap_or_default();
        let (why_ja, why) = if e.kind() == std::io::ErrorKind::NotFound {
            (
                format!("`{program}` が見つかりません（PATH にありますか？）"),
                format!("`{program}` was not found (is it on PATH?)"),
            )
        } else {
            (format!("起動できません: {e}"), format!("it could not start: {e}"))
        };
        Error::environment(
            format!("context `{context}`: kubeconfig の認証プラグイン `{line}` を実行できません: {why_ja}{hint}"),
            format!("context `{context}`: cannot run the kubeconfig's credential plugin `{line}`: {why}{hint}"),
        )
    })?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let run = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            (&mut stdout)
                .take(MAX_STDOUT + 1)
                .read_to_end(&mut out)
                .await
        };
        let read_err = async { (&mut stderr).take(64 * 1024).read_to_end(&mut err).await };
        let (a, b, status) = tokio::join!(read_out, read_err, child.wait());
        a.and(b)?;
        Ok::<_, std::io::Error>((status?, out, err))
    };
    let finished = if bound.is_zero() {
        Ok(run.await)
    } else {
        tokio::time::timeout(bound, run).await
    };
    let (status, out, err) = match finished {
        Err(_) => {
            let d = humantime::format_duration(bound);
            return Err(Error::environment(
                format!("context `{context}`: 認証プラグイン `{line}` が {d} 以内に終わりませんでした（停止しました）。単体で実行して確かめるか、ログインに時間がかかるなら --exec-timeout を大きくしてください"),
                format!("context `{context}`: the credential plugin `{line}` did not finish within {d} and was stopped; run it on its own to see what it waits for, or raise --exec-timeout if a login takes longer"),
            ));
        }
        Ok(Err(e)) => {
            return Err(Error::environment(
                format!("context `{context}`: 認証プラグイン `{line}` の出力を読めません: {e}"),
                format!("context `{context}`: cannot read the output of the credential plugin `{line}`: {e}"),
            ))
        }
        Ok(Ok(done)) => done,
    };
    let said = quoted(&err);
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_string(), |c| format!("exit code {c}"));
        return Err(Error::environment(
            format!("context `{context}`: 認証プラグイン `{line}` が失敗しました（{code}）{said}"),
            format!("context `{context}`: the credential plugin `{line}` failed ({code}){said}"),
        ));
    }
    if out.len() as u64 > MAX_STDOUT {
        return Err(Error::environment(
            format!("context `{context}`: 認証プラグイン `{line}` の出力が 1 MiB を超えました。ExecCredential ではありません"),
            format!("context `{context}`: the credential plugin `{line}` printed more than 1 MiB, which is no ExecCredential"),
        ));
    }
    let cred: Credential = serde_json::from_slice(&out).map_err(|e| {
        Error::environment(
            format!("context `{context}`: 認証プラグイン `{line}` の出力が ExecCredential の JSON ではありません（{e}）{said}"),
            format!("context `{context}`: the credential plugin `{line}` did not print an ExecCredential as JSON ({e}){said}"),
        )
    })?;
    let has = cred.status.as_ref().is_some_and(|s| {
        s.token.as_deref().is_some_and(|t| !t.is_empty())
            || (s.client_certificate_data.is_some() && s.client_key_data.is_some())
    });
    if !has {
        return Err(Error::environment(
            format!("context `{context}`: 認証プラグイン `{line}` の ExecCredential に status.token（またはクライアント証明書と鍵）がありません"),
            format!("context `{context}`: the credential plugin `{line}` printed an ExecCredential without status.token (or a client certificate and key)"),
        ));
    }
    Ok(())
}

/// `: "what it printed"` from the plugin's stderr, cut to a readable length; empty when it said
/// nothing. Control characters are escaped, as everything trainlab prints from others is.
fn quoted(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let mut cut: String = text.chars().take(MAX_STDERR_QUOTED).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    let escaped: String = cut
        .chars()
        .flat_map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    format!(": \"{}\"", escaped.replace('\n', "\n  "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_is_quoted_escaped_and_cut() {
        assert_eq!(quoted(b""), "");
        assert_eq!(quoted(b"boom\n"), ": \"boom\"");
        assert_eq!(quoted(b"a\x1b[31mred"), ": \"a\\u{1b}[31mred\"");
        assert!(quoted(&vec![b'x'; 5000]).ends_with("…\""));
    }
}
