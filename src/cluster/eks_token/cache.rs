//! The process's tokens: one `TokenSource` per exec and region, its token reused until its
//! refresh time, then signed again.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use aws_config::meta::region::ProvideRegion;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use http::HeaderValue;

use super::credentials::{error_chain, provider_for};
use super::error::EksTokenError;
use super::exec::{EksExec, KeepExec};
use super::presign::token_at;
use super::sts::sts_host;

/// How long EKS accepts a token after its `X-Amz-Date` (token.go `presignedURLExpiration`).
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// A cached token is replaced this long before it expires. The AWS CLI announces 14 minutes
/// (get_token.py `TOKEN_EXPIRATION_MINS = 14`, so client-go refreshes a minute early), and
/// aws-iam-authenticator the same (`presignedURLExpiration - 1*time.Minute`); the minute covers
/// clock skew between this machine and the API server and a request still in flight or retried
/// when the token turns 15 minutes old.
pub const REFRESH_BEFORE: Duration = Duration::from_secs(60);

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
            .get_or_init(|| provider_for(&self.exec, &self.region))
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
}

#[cfg(test)]
mod tests {
    use aws_credential_types::Credentials;
    use base64::Engine as _;
    use http::Request;

    use super::*;
    use crate::cluster::eks_token::exec::tests::aws;
    use crate::cluster::eks_token::EksAuth;

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
