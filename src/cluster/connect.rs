//! Building a kube client from kubeconfig (`KUBECONFIG`, `--kubeconfig`, `--context`) or from the
//! in-cluster service account. Exec credential plugins run through kube's config loader, once
//! first here with a bound (`exec_plugin`), except `aws eks get-token` and
//! `aws-iam-authenticator token`, whose token is built in-process (`eks_token`, unless
//! `--eks-token exec`).

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::Error;

#[derive(Debug, Clone)]
pub struct ConnectOpts {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Bound on each request, retries and the whole answer included; zero: no bound (kubectl's
    /// `--request-timeout 0`).
    pub request_timeout: Duration,
    /// Objects per LIST request (`limit`); 0: each list in one response.
    pub chunk_size: u32,
    /// How an EKS token is obtained when the kubeconfig runs `aws eks get-token`.
    pub eks_token: super::EksTokenMode,
    /// Bound on the kubeconfig's exec credential plugin (zero: none).
    pub exec_timeout: Duration,
    /// The command's bounds on what one answer and one LIST bring (`--max-input-mib`,
    /// `--max-objects`).
    pub limits: crate::observe::limits::Limits,
    /// Where discovery answers are kept between commands (`--cache-dir`); None: not kept.
    pub cache_dir: Option<PathBuf>,
}

impl Default for ConnectOpts {
    fn default() -> Self {
        ConnectOpts {
            kubeconfig: None,
            context: None,
            request_timeout: Duration::from_secs(10),
            chunk_size: super::PAGE_SIZE,
            eks_token: super::EksTokenMode::default(),
            exec_timeout: super::exec_plugin::DEFAULT_BOUND,
            limits: crate::observe::limits::Limits::default(),
            cache_dir: None,
        }
    }
}

/// A connected client and what it points at, shown to the user once per command.
#[derive(Clone)]
pub struct Conn {
    pub client: kube::Client,
    /// The same credentials without the whole-answer bound of `--request-timeout` (nor a read
    /// timeout): a WATCH is an answer that lasts (`grade --watch`, `grade::follow`). Its
    /// connection is still opened within the bound, and each stream ends on the server's
    /// `timeoutSeconds` and the watcher's idle timeout instead.
    pub watch_client: kube::Client,
    /// The kube context name (`in-cluster` inside a pod).
    pub context: String,
    /// The API server URL.
    pub server: String,
    pub timeout: Duration,
    /// Objects per LIST request; 0: each list in one response.
    pub chunk_size: u32,
    /// The command's bounds ([`ConnectOpts::limits`]).
    pub limits: crate::observe::limits::Limits,
    /// Where discovery answers are kept ([`ConnectOpts::cache_dir`]).
    pub cache_dir: Option<PathBuf>,
    /// The server's version, once a probe succeeded: a command probes its connection once,
    /// however many times it gathers (doctor, setup, `--wait` loops).
    pub(crate) version:
        std::sync::Arc<tokio::sync::OnceCell<k8s_openapi::apimachinery::pkg::version::Info>>,
}

impl Conn {
    /// "context kind-trainlab (https://127.0.0.1:6443)"
    pub fn describe(&self) -> String {
        format!("context {} ({})", self.context, self.server)
    }
}

pub async fn connect(opts: &ConnectOpts) -> Result<Conn, Error> {
    let kubeconfig = load_kubeconfig(opts)?;
    let mut ca_file = None;
    let mut eks = None;
    let (mut config, context) = match kubeconfig {
        Some(kc) => {
            let context = opts
                .context
                .clone()
                .or_else(|| kc.current_context.clone().filter(|c| !c.is_empty()))
                .ok_or_else(|| {
                    Error::usage(
                        "kubeconfig に current context がありません。--context NAME で指定してください",
                        "the kubeconfig has no current context; pass --context NAME",
                    )
                })?;
            if !kc.contexts.iter().any(|c| c.name == context) {
                let known: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
                let context = crate::catalog::echo(&context, 80);
                return Err(if known.is_empty() {
                    Error::usage(
                        format!("context `{context}` が kubeconfig にありません。kubeconfig に context が 1 つも定義されていません（`kubectl config get-contexts` で一覧できます）"),
                        format!("context `{context}` not found in the kubeconfig; it defines no context at all (`kubectl config get-contexts` lists them)"),
                    )
                } else {
                    let known = known.join(", ");
                    Error::usage(
                        format!("context `{context}` が kubeconfig にありません。定義されている context: {known}"),
                        format!("context `{context}` not found in the kubeconfig; known contexts: {known}"),
                    )
                });
            }
            check_context_refs(&kc, &context)?;
            check_insecure_with_ca(&kc, &context)?;
            ca_file = certificate_authority_file(&kc, &context);
            let options = KubeConfigOptions {
                context: Some(context.clone()),
                ..Default::default()
            };
            let mut config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| {
                    let why = super::kubeconfig_error::describe(&e);
                    Error::environment(
                        format!("context `{context}` を使えません: {why}"),
                        format!("cannot use context `{context}`: {why}"),
                    )
                })?;
            refuse_removed_auth_provider(&config, &context)?;
            eks = super::eks_token::take_over(&mut config, opts.eks_token, &context).await?;
            // An exec kube will run (one not taken over above, and only when the user has no
            // other credentials, as kube decides): run once here, bounded, for a clear error.
            let auth = &config.auth_info;
            if let Some(exec) = auth.exec.as_ref().filter(|_| {
                auth.auth_provider.is_none()
                    && auth.username.is_none()
                    && auth.token.is_none()
                    && auth.token_file.is_none()
            }) {
                super::exec_plugin::preflight(exec, &context, opts.exec_timeout).await?;
            }
            (config, context)
        }
        None => {
            if opts.context.is_some() {
                return Err(Error::usage(
                    "--context が指定されましたが kubeconfig が見つかりません（KUBECONFIG か --kubeconfig で指定してください）",
                    "--context given but no kubeconfig was found (set KUBECONFIG or --kubeconfig)",
                ));
            }
            let config = kube::Config::incluster().map_err(|_| {
                Error::environment(
                    "kubeconfig が見つからず（KUBECONFIG、~/.kube/config）、Pod の中でもありません。--kubeconfig で kubeconfig を指定するか、`trainlab setup kind` でローカルクラスターを作ってください",
                    "no kubeconfig found (KUBECONFIG, ~/.kube/config) and not running in a pod; \
                     point --kubeconfig at one, or create a local cluster with `trainlab setup kind`",
                )
            })?;
            (config, "in-cluster".to_string())
        }
    };
    check_server_scheme(&config.cluster_url, &context)?;
    check_root_certificates(&config, ca_file.as_deref(), &context)?;
    let timeout = (!opts.request_timeout.is_zero()).then_some(opts.request_timeout);
    config.connect_timeout = timeout;
    config.read_timeout = timeout;
    config.write_timeout = timeout;
    let budget = super::bounds::Budget {
        timeout,
        max_bytes: opts.limits.max_input_bytes,
    };
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string();
    let mut watch_config = config.clone();
    watch_config.read_timeout = None;
    let unbounded = super::bounds::Budget {
        timeout: None,
        ..budget
    };
    let built = super::http::build_client(config, budget, eks.clone()).and_then(|client| {
        Ok((
            client,
            super::http::build_client(watch_config, unbounded, eks)?,
        ))
    });
    let (client, watch_client) = built.map_err(|e| {
        Error::environment(
            format!("{server} のクライアントを作れません: {e}"),
            format!("cannot build a client for {server}: {e}"),
        )
    })?;
    Ok(Conn {
        client,
        watch_client,
        context,
        server,
        timeout: opts.request_timeout,
        chunk_size: opts.chunk_size,
        limits: opts.limits,
        cache_dir: opts.cache_dir.clone(),
        version: Default::default(),
    })
}

/// The cluster and user a context names must be in the kubeconfig: a dangling name is a broken
/// kubeconfig (bad input, exit 2), as a missing context is, not an unreachable cluster.
fn check_context_refs(kc: &Kubeconfig, context: &str) -> Result<(), Error> {
    let Some(ctx) = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
    else {
        return Ok(());
    };
    let echo = |s: &str| crate::catalog::echo(s, 80);
    if !kc.clusters.iter().any(|c| c.name == ctx.cluster) {
        let known: Vec<String> = kc.clusters.iter().map(|c| echo(&c.name)).collect();
        let (name, known) = (echo(&ctx.cluster), known.join(", "));
        return Err(Error::usage(
            format!("context `{}` はクラスター `{name}` を指していますが、kubeconfig にその名前のクラスターがありません（定義されているクラスター: {known}）", echo(context)),
            format!("context `{}` names the cluster `{name}`, which the kubeconfig does not define (clusters: {known})", echo(context)),
        ));
    }
    if let Some(user) = ctx.user.as_deref().filter(|u| !u.is_empty()) {
        if !kc.auth_infos.iter().any(|u| u.name == user) {
            let known: Vec<String> = kc.auth_infos.iter().map(|u| echo(&u.name)).collect();
            let (name, known) = (echo(user), known.join(", "));
            return Err(Error::usage(
                format!("context `{}` はユーザー `{name}` を指していますが、kubeconfig にその名前のユーザーがありません（定義されているユーザー: {known}）", echo(context)),
                format!("context `{}` names the user `{name}`, which the kubeconfig does not define (users: {known})", echo(context)),
            ));
        }
    }
    Ok(())
}

/// `insecure-skip-tls-verify: true` beside a certificate authority is refused, as kubectl refuses
/// it (client-go `rest/transport.go`: "specifying a root certificates file with the insecure flag
/// is not allowed"): the kubeconfig says two contrary things and either reading could be wrong.
fn check_insecure_with_ca(kc: &Kubeconfig, context: &str) -> Result<(), Error> {
    let Some(name) = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())
    else {
        return Ok(());
    };
    let Some(cluster) = kc
        .clusters
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.cluster.as_ref())
    else {
        return Ok(());
    };
    let has_ca =
        cluster.certificate_authority.is_some() || cluster.certificate_authority_data.is_some();
    if cluster.insecure_skip_tls_verify == Some(true) && has_ca {
        let name = crate::catalog::echo(&name, 80);
        return Err(Error::usage(
            format!("kubeconfig のクラスター `{name}` に `insecure-skip-tls-verify: true` と認証局（`certificate-authority` または `-data`）の両方があります。kubectl と同じく受け付けません。どちらか一方を削除してください（認証局を残すのが安全です）"),
            format!("the kubeconfig's cluster `{name}` has both `insecure-skip-tls-verify: true` and a certificate authority (`certificate-authority` or `-data`); kubectl refuses the pair and so does trainlab: remove one (keeping the certificate authority is the safe choice)"),
        ));
    }
    Ok(())
}

/// The `gcp` and `azure` auth providers were removed from client-go (and so from kubectl) in
/// Kubernetes 1.26 in favour of exec plugins (kubernetes/kubernetes CHANGELOG-1.26: the in-tree
/// credential plugins for Azure and GCP are gone); kube-rs only keeps `gcp` behind a feature
/// trainlab does not build. Said plainly, with the plugin that replaces each.
fn refuse_removed_auth_provider(config: &kube::Config, context: &str) -> Result<(), Error> {
    let Some(provider) = config.auth_info.auth_provider.as_ref() else {
        return Ok(());
    };
    let (plugin, how) = match provider.name.as_str() {
        "gcp" => (
            "gke-gcloud-auth-plugin",
            "`gcloud components install gke-gcloud-auth-plugin`, then `gcloud container clusters get-credentials CLUSTER`",
        ),
        "azure" => (
            "kubelogin",
            "install kubelogin (https://azure.github.io/kubelogin/), then `kubelogin convert-kubeconfig`",
        ),
        _ => return Ok(()),
    };
    let name = &provider.name;
    Err(Error::usage(
        format!("context `{context}`: kubeconfig のユーザーは auth-provider `{name}` を使っていますが、これは Kubernetes 1.26 で kubectl からも削除されました。trainlab は対応していません。代わりの exec プラグイン {plugin} を使ってください: {how}"),
        format!("context `{context}`: the kubeconfig's user uses the `{name}` auth-provider, which Kubernetes 1.26 removed from kubectl as well; trainlab does not support it. Use its replacement exec plugin, {plugin}: {how}"),
    ))
}

/// The API server URL must say `https://` or `http://`: without a scheme kube's client cannot
/// build a request (it would panic), and another scheme (`ftp://`) is no API server. Refused as
/// bad input naming the kubeconfig field, with the URL that would work.
fn check_server_scheme(url: &http::Uri, context: &str) -> Result<(), Error> {
    match url.scheme_str() {
        Some("https" | "http") => Ok(()),
        Some(other) => Err(Error::usage(
            format!("context `{context}`: kubeconfig の `clusters[].cluster.server` は `{url}` ですが、スキーム `{other}` は API サーバーが使うものではありません。`https://…`（または `http://…`）にしてください"),
            format!("context `{context}`: the kubeconfig's `clusters[].cluster.server` is `{url}`, whose scheme `{other}` is not one an API server speaks; expected `https://…` (or `http://…`)"),
        )),
        None => Err(Error::usage(
            format!("context `{context}`: kubeconfig の `clusters[].cluster.server` `{url}` にスキームがありません。`https://{url}`（TLS のないサーバーなら `http://{url}`）と書いてください"),
            format!("context `{context}`: the kubeconfig's `clusters[].cluster.server` is `{url}`, without a scheme; write it as `https://{url}` (or `http://{url}` for a server without TLS)"),
        )),
    }
}

/// A certificate authority that holds no PEM certificate (a key, a text file) would leave the
/// client trusting nothing, and every request would fail as "certificate not trusted"; kube
/// keeps only `CERTIFICATE` blocks (kube-client 5.0.0 `config/mod.rs` `certs`). Refused up front,
/// naming the file or field.
fn check_root_certificates(
    config: &kube::Config,
    ca_file: Option<&str>,
    context: &str,
) -> Result<(), Error> {
    if !config.root_cert.as_ref().is_some_and(Vec::is_empty) {
        return Ok(());
    }
    let (source_ja, source) = match ca_file {
        Some(f) => (
            format!("ファイル {f}（`clusters[].cluster.certificate-authority`）"),
            format!("the file {f} (`clusters[].cluster.certificate-authority`)"),
        ),
        None => (
            "`clusters[].cluster.certificate-authority-data`".to_string(),
            "`clusters[].cluster.certificate-authority-data`".to_string(),
        ),
    };
    Err(Error::usage(
        format!("context `{context}`: 認証局 {source_ja} に PEM 証明書（`-----BEGIN CERTIFICATE-----` のブロック）がありません。クラスターの CA 証明書を指定してください"),
        format!("context `{context}`: the certificate authority, {source}, holds no PEM certificate (a `-----BEGIN CERTIFICATE-----` block); point it at the cluster's CA certificate"),
    ))
}

/// The `certificate-authority` file of the context's cluster, when it names one.
fn certificate_authority_file(kc: &Kubeconfig, context: &str) -> Option<String> {
    let cluster = kc
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .cluster
        .clone();
    kc.clusters
        .iter()
        .find(|c| c.name == cluster)?
        .cluster
        .as_ref()?
        .certificate_authority
        .clone()
}

/// The kubeconfig to use, as kubectl finds it: `--kubeconfig` (must exist), else the files of
/// `$KUBECONFIG` merged, else `~/.kube/config`; `None` when there is none (then in-cluster).
///
/// client-go's loader (tools/clientcmd/loader.go, `ClientConfigLoadingRules.Load`): "A missing
/// ExplicitPath file produces an error. Empty filenames or other missing files are ignored.
/// Read errors or files with non-deserializable content produce errors." A file that exists
/// but does not parse is named in the error instead of being taken for "no kubeconfig".
fn load_kubeconfig(opts: &ConnectOpts) -> Result<Option<Kubeconfig>, Error> {
    let home = std::env::home_dir().map(|h| h.join(".kube").join("config"));
    find_kubeconfig(opts, std::env::var_os("KUBECONFIG"), home)
}

/// [`load_kubeconfig`] with `$KUBECONFIG` and the default path given.
fn find_kubeconfig(
    opts: &ConnectOpts,
    env: Option<std::ffi::OsString>,
    home: Option<PathBuf>,
) -> Result<Option<Kubeconfig>, Error> {
    if let Some(p) = &opts.kubeconfig {
        return Kubeconfig::read_from(p).map(Some).map_err(|e| {
            let message = format!(
                "--kubeconfig {}: {}",
                p.display(),
                super::kubeconfig_error::describe(&e)
            );
            Error::usage(message.clone(), message)
        });
    }
    let from_env: Vec<PathBuf> = env
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    let (files, origin_ja, origin) = if from_env.is_empty() {
        (home.into_iter().collect::<Vec<_>>(), "", "")
    } else {
        (from_env, "KUBECONFIG のファイル ", "KUBECONFIG file ")
    };
    let mut merged: Option<Kubeconfig> = None;
    for file in files.iter().filter(|f| f.exists()) {
        let problem = |e: kube::config::KubeconfigError| {
            let (f, why) = (file.display(), super::kubeconfig_error::describe(&e));
            Error::usage(
                format!("{origin_ja}{f}: {why}"),
                format!("{origin}{f}: {why}"),
            )
        };
        let kc = Kubeconfig::read_from(file).map_err(problem)?;
        merged = Some(match merged {
            None => kc,
            Some(m) => m.merge(kc).map_err(problem)?,
        });
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_files_are_found_like_kubectl_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(
            &good,
            "apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts:\n- name: a\n  context: {cluster: a, user: a}\nclusters:\n- name: a\n  cluster: {server: 'https://127.0.0.1:6443'}\nusers:\n- name: a\n  user: {}\n",
        )
        .unwrap();
        let bad = dir.path().join("bad");
        std::fs::write(&bad, "apiVersion: v1\nclusters: [unclosed\n").unwrap();
        let missing = dir.path().join("missing");
        let opts = ConnectOpts::default();
        let env = |paths: &[&std::path::Path]| Some(std::env::join_paths(paths).unwrap());

        // A malformed file named by $KUBECONFIG is an error naming it, not "no kubeconfig".
        let err = find_kubeconfig(&opts, env(&[&bad]), None).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        assert!(
            err.to_string().contains(&bad.display().to_string()),
            "{err}"
        );

        // Missing files in $KUBECONFIG are skipped; the others are used.
        let kc = find_kubeconfig(&opts, env(&[&missing, &good]), None)
            .unwrap()
            .unwrap();
        assert_eq!(kc.current_context.as_deref(), Some("a"));

        // Only missing files: no kubeconfig at all.
        assert!(find_kubeconfig(&opts, env(&[&missing]), None)
            .unwrap()
            .is_none());

        // Without $KUBECONFIG: the default file, and a malformed one is named too.
        let kc = find_kubeconfig(&opts, None, Some(good.clone())).unwrap();
        assert!(kc.is_some());
        let err = find_kubeconfig(&opts, None, Some(bad.clone())).unwrap_err();
        assert!(
            err.to_string().starts_with(&bad.display().to_string()),
            "{err}"
        );
        assert!(find_kubeconfig(&opts, None, Some(missing.clone()))
            .unwrap()
            .is_none());

        // --kubeconfig wins over $KUBECONFIG and must exist.
        let explicit = ConnectOpts {
            kubeconfig: Some(missing.clone()),
            ..ConnectOpts::default()
        };
        let err = find_kubeconfig(&explicit, env(&[&good]), None).unwrap_err();
        assert!(err.to_string().starts_with("--kubeconfig "), "{err}");
    }
}
