"""EKS bearer tokens as the AWS CLI builds them, for fixed credentials and a fixed time.

`cargo test --test conformance eks_tokens_match_botocore -- --include-ignored` writes cases
(credentials, region, cluster, signing time) and trainlab's token for each, then runs

    eks_token.py CASES.json

which builds every case's token with botocore exactly as `aws eks get-token` does and prints
`ok ID` or `MISMATCH ID` with both URLs, then `N passed, N failed`; it exits 1 on any mismatch.

The token code follows aws-cli 1.45.55 `awscli/customizations/eks/get_token.py`:
`STSClientFactory.get_sts_client` (an STS client for the region, with the `x-k8s-aws-id`
handlers `_retrieve_k8s_aws_id` / `_inject_k8s_aws_id_header` registered) and
`TokenGenerator.get_token` (`generate_presigned_url('get_caller_identity', ExpiresIn=60,
HttpMethod='GET')`, then `'k8s-aws-v1.' + urlsafe_b64encode(url).rstrip('=')`). The one change:
the credentials are given (AssumeRole's answer is what `--role-arn` would give), and the clock is
fixed by replacing `botocore.auth.get_current_datetime`, which `SigV4Auth.add_auth` reads.
"""

import base64
import datetime
import json
import sys

import botocore.auth
import botocore.session

# get_token.py constants.
URL_TIMEOUT = 60
TOKEN_PREFIX = "k8s-aws-v1."
K8S_AWS_ID_HEADER = "x-k8s-aws-id"


def _retrieve_k8s_aws_id(params, context, **kwargs):
    if K8S_AWS_ID_HEADER in params:
        context[K8S_AWS_ID_HEADER] = params.pop(K8S_AWS_ID_HEADER)


def _inject_k8s_aws_id_header(request, **kwargs):
    if K8S_AWS_ID_HEADER in request.context:
        request.headers[K8S_AWS_ID_HEADER] = request.context[K8S_AWS_ID_HEADER]


def token(case):
    at = datetime.datetime.fromtimestamp(case["time"], tz=datetime.timezone.utc)

    def fixed_now(remove_tzinfo=True):
        return at.replace(tzinfo=None) if remove_tzinfo else at

    botocore.auth.get_current_datetime = fixed_now
    session = botocore.session.get_session()
    # Nothing from this machine's AWS configuration: only what the case says.
    session.set_config_variable("config_file", "/dev/null")
    session.set_config_variable("credentials_file", "/dev/null")
    sts = session.create_client(
        "sts",
        region_name=case["region"],
        aws_access_key_id=case["access_key_id"],
        aws_secret_access_key=case["secret_access_key"],
        aws_session_token=case.get("session_token"),
    )
    sts.meta.events.register(
        "provide-client-params.sts.GetCallerIdentity", _retrieve_k8s_aws_id
    )
    sts.meta.events.register(
        "before-sign.sts.GetCallerIdentity", _inject_k8s_aws_id_header
    )
    url = sts.generate_presigned_url(
        "get_caller_identity",
        Params={K8S_AWS_ID_HEADER: case["cluster_id"]},
        ExpiresIn=URL_TIMEOUT,
        HttpMethod="GET",
    )
    encoded = base64.urlsafe_b64encode(url.encode("utf-8")).decode("utf-8").rstrip("=")
    return url, TOKEN_PREFIX + encoded


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: eks_token.py CASES.json")
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    print(f"botocore {botocore.__version__}")
    passed = failed = 0
    for case in cases:
        url, tok = token(case)
        if tok == case["trainlab_token"]:
            passed += 1
            print(f"ok {case['id']}")
        else:
            failed += 1
            print(f"MISMATCH {case['id']}")
            print(f"  botocore: {url}")
            print(f"  trainlab: {case['trainlab_url']}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not cases else 0)


if __name__ == "__main__":
    main()
