//! The token itself: the STS `GetCallerIdentity` URL presigned with SigV4 for the regional
//! host of the cluster's partition, prefixed and base64url-encoded.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    sign, SignableBody, SignableRequest, SignatureLocation, SigningSettings,
};
use aws_sigv4::sign::v4;
use base64::Engine as _;

use super::error::EksTokenError;
use super::sts::sts_host;

/// What a token starts with (get_token.py `TOKEN_PREFIX`, token.go `v1Prefix`).
pub const TOKEN_PREFIX: &str = "k8s-aws-v1.";
/// The signed header naming the cluster (get_token.py `K8S_AWS_ID_HEADER`).
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";
/// `X-Amz-Expires` of the presigned URL (get_token.py `URL_TIMEOUT`, token.go
/// `requestPresignParam`): STS ignores it for this purpose; the verifier does not.
pub const PRESIGN_EXPIRES: Duration = Duration::from_secs(60);

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
