//! Building a kube client from kubeconfig (`KUBECONFIG`, `--kubeconfig`, `--context`; exec
//! credential plugins such as `aws eks get-token` work through kube's config loader) or from the
//! in-cluster service account.

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::Error;

#[derive(Debug, Clone)]
pub struct ConnectOpts {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Bound on connecting and on each response.
    pub request_timeout: Duration,
}

impl Default for ConnectOpts {
    fn default() -> Self {
        ConnectOpts {
            kubeconfig: None,
            context: None,
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// A connected client and what it points at, shown to the user once per command.
#[derive(Clone)]
pub struct Conn {
    pub client: kube::Client,
    /// The kube context name (`in-cluster` inside a pod).
    pub context: String,
    /// The API server URL.
    pub server: String,
    pub timeout: Duration,
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
    let kubeconfig = match &opts.kubeconfig {
        Some(p) => Some(
            Kubeconfig::read_from(p)
                .map_err(|e| Error::Usage(format!("--kubeconfig {}: {e}", p.display())))?,
        ),
        None => Kubeconfig::read().ok(),
    };
    let (mut config, context) = match kubeconfig {
        Some(kc) => {
            let context = opts
                .context
                .clone()
                .or_else(|| kc.current_context.clone())
                .ok_or_else(|| {
                    Error::Usage(
                        "the kubeconfig has no current context; pass --context NAME".into(),
                    )
                })?;
            if !kc.contexts.iter().any(|c| c.name == context) {
                let known: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "context `{context}` not found in the kubeconfig; known contexts: {}",
                    known.join(", ")
                )));
            }
            let options = KubeConfigOptions {
                context: Some(context.clone()),
                ..Default::default()
            };
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| Error::Environment(format!("cannot use context `{context}`: {e}")))?;
            (config, context)
        }
        None => {
            if opts.context.is_some() {
                return Err(Error::Usage(
                    "--context given but no kubeconfig was found (set KUBECONFIG or --kubeconfig)"
                        .into(),
                ));
            }
            let config = kube::Config::incluster().map_err(|_| {
                Error::Environment(
                    "no kubeconfig found (KUBECONFIG, ~/.kube/config) and not running in a pod; \
                     point --kubeconfig at one, or create a local cluster with `trainlab setup kind`"
                        .into(),
                )
            })?;
            (config, "in-cluster".to_string())
        }
    };
    config.connect_timeout = Some(opts.request_timeout);
    config.read_timeout = Some(opts.request_timeout);
    config.write_timeout = Some(opts.request_timeout);
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string();
    let client = kube::Client::try_from(config)
        .map_err(|e| Error::Environment(format!("cannot build a client for {server}: {e}")))?;
    Ok(Conn {
        client,
        context,
        server,
        timeout: opts.request_timeout,
        version: Default::default(),
    })
}
