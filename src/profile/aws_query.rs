//! EC2 `DescribeSubnets` as one SigV4-signed AWS Query call (`Action=DescribeSubnets&Version=
//! 2016-11-15`, an XML answer), for the zones of an EKS cluster's subnets.
//!
//! Why not aws-sdk-ec2: measured on 2026-12-04 on the project's 2-core machine (shared with
//! other builds), in a scratch crate with aws-config 1.13 + aws-sdk-eks 1.160 (features as in
//! Cargo.toml, the dev profile as Cargo.toml sets it) and main's Cargo.lock:
//!
//! | | clean build | target/ | debug binary |
//! |---|---|---|---|
//! | aws-config + aws-sdk-eks | 1 min 31 s | 529 MB | 32.8 MB |
//! | + aws-sdk-ec2 1.274.0 (one `describe_subnets` call) | + 5 min 11 s wall (2 min 56 s user) | + 879 MB (its rlib alone 648 MB) | + 10.4 MB |
//!
//! Its source is 88 MB (aws-sdk-eks: 9.3 MB), one crate rustc compiles on one core after the
//! others, so it lengthens every clean build and CI run by minutes. The one call setup needs
//! takes a signer (aws-sigv4, already used for EKS tokens in `cluster::eks_token`), a POST
//! through reqwest (already used for downloads) and a few lines of XML reading: no new crate.
//!
//! The request and answer follow the EC2 Query API reference (DescribeSubnets: `SubnetId.N`
//! parameters; the answer's `subnetSet/item` carries `subnetId` and `availabilityZone`;
//! errors come as `Response/Errors/Error/Code|Message`):
//! <https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSubnets.html> and
//! <https://docs.aws.amazon.com/AWSEC2/latest/APIReference/Query-requests.html>.

use std::time::SystemTime;

use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;

use crate::Error;

/// The EC2 Query API version every call names.
const VERSION: &str = "2016-11-15";

/// Everything but RFC 3986's unreserved characters is encoded in the form body.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// One subnet and its Availability Zone.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Subnet {
    pub id: String,
    pub zone: String,
}

/// The EC2 endpoint for `region`: `AWS_ENDPOINT_URL_EC2`, else the SDK config's endpoint
/// (`AWS_ENDPOINT_URL`, as the SDKs read it), else `https://ec2.<region>.amazonaws.com`
/// (`.amazonaws.com.cn` in the China partition).
pub fn endpoint(config: &aws_config::SdkConfig, region: &str) -> String {
    if let Some(e) = std::env::var("AWS_ENDPOINT_URL_EC2")
        .ok()
        .filter(|e| !e.is_empty())
    {
        return e;
    }
    if let Some(e) = config.endpoint_url() {
        return e.to_string();
    }
    let suffix = if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    };
    format!("https://ec2.{region}.{suffix}")
}

/// The form body of a DescribeSubnets request for `ids`.
pub fn describe_subnets_body(ids: &[String]) -> String {
    let mut body = format!("Action=DescribeSubnets&Version={VERSION}");
    for (i, id) in ids.iter().enumerate() {
        body.push_str(&format!(
            "&SubnetId.{}={}",
            i + 1,
            percent_encoding::utf8_percent_encode(id, UNRESERVED)
        ));
    }
    body
}

/// The text of the first `<tag>…</tag>` in `xml`.
fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&close)? + start;
    Some(&xml[start..end])
}

/// The subnets of a DescribeSubnets answer: each `subnetId` with the `availabilityZone` of the
/// same item (every item has exactly one of each, before the next item's `subnetId`). An EC2
/// error answer is returned as `Err((code, message))`.
pub fn parse_describe_subnets(xml: &str) -> Result<Vec<Subnet>, (String, String)> {
    if let Some(errors) = element(xml, "Errors") {
        let code = element(errors, "Code").unwrap_or("?").to_string();
        let message = element(errors, "Message").unwrap_or_default().to_string();
        return Err((code, message));
    }
    let mut out = Vec::new();
    for part in xml.split("<subnetId>").skip(1) {
        let Some(end) = part.find("</subnetId>") else {
            continue;
        };
        let id = part[..end].trim().to_string();
        if let Some(zone) = element(part, "availabilityZone") {
            out.push(Subnet {
                id,
                zone: zone.trim().to_string(),
            });
        }
    }
    Ok(out)
}

fn failed(what: String, what_ja: String) -> Error {
    Error::environment(
        format!("EC2 DescribeSubnets が失敗しました: {what_ja}\n  AWS の認証情報とリージョン、ec2:DescribeSubnets の権限を確認してください（`aws ec2 describe-subnets --subnet-ids …` で試せます）"),
        format!("EC2 DescribeSubnets failed: {what}\n  check the AWS credentials, the region and the ec2:DescribeSubnets permission (try `aws ec2 describe-subnets --subnet-ids …`)"),
    )
}

/// Asks EC2 for the zones of `ids` with the credentials and region of `config`.
pub async fn describe_subnets(
    config: &aws_config::SdkConfig,
    region: &str,
    ids: &[String],
) -> Result<Vec<Subnet>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let provider = config.credentials_provider().ok_or_else(|| {
        failed(
            "no AWS credentials found".into(),
            "AWS の認証情報が見つかりません".into(),
        )
    })?;
    let credentials = provider
        .provide_credentials()
        .await
        .map_err(|e| failed(e.to_string(), e.to_string()))?;
    let url = endpoint(config, region);
    let body = describe_subnets_body(ids);
    let host = url
        .split_once("://")
        .map(|(_, r)| r)
        .unwrap_or(&url)
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let content_type = "application/x-www-form-urlencoded; charset=utf-8";
    let identity = credentials.into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("ec2")
        .time(SystemTime::now())
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| failed(e.to_string(), e.to_string()))?
        .into();
    let headers = [("host", host.as_str()), ("content-type", content_type)];
    let signable = SignableRequest::new(
        "POST",
        url.as_str(),
        headers.into_iter(),
        SignableBody::Bytes(body.as_bytes()),
    )
    .map_err(|e| failed(e.to_string(), e.to_string()))?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|e| failed(e.to_string(), e.to_string()))?
        .into_parts();
    let mut req = http::Request::post(url.as_str())
        .header("host", host.as_str())
        .header("content-type", content_type)
        .body(body.clone())
        .map_err(|e| failed(e.to_string(), e.to_string()))?;
    instructions.apply_to_request_http1x(&mut req);
    let client = reqwest::Client::builder()
        .user_agent(concat!("trainlab/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| failed(e.to_string(), e.to_string()))?;
    let mut rb = client.post(url.as_str()).body(body);
    for (name, value) in req.headers() {
        rb = rb.header(name, value);
    }
    let answer = rb
        .send()
        .await
        .map_err(|e| failed(format!("{url}: {e}"), format!("{url}: {e}")))?;
    let status = answer.status();
    let text = answer
        .text()
        .await
        .map_err(|e| failed(format!("{url}: {e}"), format!("{url}: {e}")))?;
    match parse_describe_subnets(&text) {
        Err((code, message)) => Err(failed(
            format!("{code}: {message}"),
            format!("{code}: {message}"),
        )),
        Ok(_) if !status.is_success() => {
            let head: String = text.chars().take(200).collect();
            Err(failed(
                format!("HTTP {status}: {head}"),
                format!("HTTP {status}: {head}"),
            ))
        }
        Ok(subnets) => Ok(subnets),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's shape as the EC2 API reference shows it (DescribeSubnets, Example 1),
    /// with a tag whose value looks like an id to prove items do not bleed into each other.
    const ANSWER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeSubnetsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>7a62c49f-347e-4fc4-9331-6e8eEXAMPLE</requestId>
  <subnetSet>
    <item>
      <subnetId>subnet-aaa</subnetId>
      <state>available</state>
      <vpcId>vpc-1</vpcId>
      <availabilityZone>us-west-2a</availabilityZone>
      <availabilityZoneId>usw2-az1</availabilityZoneId>
      <tagSet><item><key>Name</key><value>subnet-lookalike</value></item></tagSet>
    </item>
    <item>
      <subnetId>subnet-bbb</subnetId>
      <availabilityZone>us-west-2b</availabilityZone>
    </item>
  </subnetSet>
</DescribeSubnetsResponse>"#;

    #[test]
    fn subnets_and_their_zones_are_read_item_by_item() {
        let got = parse_describe_subnets(ANSWER).unwrap();
        assert_eq!(
            got,
            vec![
                Subnet {
                    id: "subnet-aaa".into(),
                    zone: "us-west-2a".into()
                },
                Subnet {
                    id: "subnet-bbb".into(),
                    zone: "us-west-2b".into()
                },
            ]
        );
    }

    #[test]
    fn an_error_answer_gives_its_code_and_message() {
        let xml = "<Response><Errors><Error><Code>InvalidSubnetID.NotFound</Code><Message>The subnet ID 'subnet-x' does not exist</Message></Error></Errors><RequestID>r</RequestID></Response>";
        assert_eq!(
            parse_describe_subnets(xml),
            Err((
                "InvalidSubnetID.NotFound".to_string(),
                "The subnet ID 'subnet-x' does not exist".to_string()
            ))
        );
    }

    #[test]
    fn the_body_numbers_subnet_ids_from_one() {
        let body = describe_subnets_body(&["subnet-1".into(), "subnet-2".into()]);
        assert_eq!(
            body,
            "Action=DescribeSubnets&Version=2016-11-15&SubnetId.1=subnet-1&SubnetId.2=subnet-2"
        );
    }
}
