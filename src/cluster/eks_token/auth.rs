//! The client's side: `--eks-token` (`EksTokenMode`), taking over a kubeconfig's exec, the
//! auth layer that sets each request's token, and telling a token failure from others.

use std::sync::Arc;

use futures::future::BoxFuture;
use http::Request;
use tower::BoxError;

use crate::Error;

use super::cache::TokenSource;
use super::error::EksTokenError;
use super::exec::recognize;

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
