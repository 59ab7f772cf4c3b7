"""The local CloudFront edge (infra/sim/edge.py) in front of the emulator's own distribution.

The emulator holds a bucket with `public/` and `signed/` objects, readable only by the distribution through origin
access control (the documented bucket policy: the service principal and the distribution's ARN); a public key in
CloudFront's form, made with `rsa`, in a key group; a second public key in no group; and a distribution whose
default behaviour trusts the key group while an ordered `public/*` behaviour does not. Through the edge: the public
object is served unsigned; the signed ones are refused unsigned (CloudFront's MissingKey answer, byte for byte),
expired, signed with the key outside the group, or with a signature tampered with; and served with a canned URL,
with a custom policy's wildcard (`signed/a1/*`) for a playlist and a segment, and with signed cookies the way an
HLS player fetches a playlist and then its segments. The emulator alone serves the signed object to anyone: that is
the gap the edge fills (the last test).
"""

from __future__ import annotations

import json
import time

import pytest
import requests
import rsa
from migrator.cloudfront_signing import CustomPolicy, custom_cookies, sign_canned_url, sign_custom_url
from migrator.playback_tokens import SigningKey

from infra.emulator import client
from infra.sim.edge import LocalEdge
from tests.conftest import unique
from tests.unit.test_local_edge import public_key_pem

CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"  # an AWS-managed cache policy
OBJECTS = {
    "public/hello.txt": (b"hello, anyone", "text/plain"),
    "signed/a1/index.m3u8": (
        b"#EXTM3U\n#EXT-X-VERSION:3\n#EXTINF:2.0,\nseg_00001.ts\n#EXT-X-ENDLIST\n",
        "application/vnd.apple.mpegurl",
    ),
    "signed/a1/seg_00001.ts": (bytes(range(256)) * 64, "video/MP2T"),
    "signed/b2/index.m3u8": (b"#EXTM3U\n", "application/vnd.apple.mpegurl"),
}


def _behavior(**extra) -> dict:
    return {
        "TargetOriginId": "output",
        "ViewerProtocolPolicy": "allow-all",
        "CachePolicyId": CACHING_OPTIMIZED,
        **extra,
    }


@pytest.fixture(scope="module")
def stack(endpoint):
    """(edge, signing key, outsider key, distribution domain) on a fresh bucket, key group and distribution."""
    s3, cloudfront = client("s3", endpoint), client("cloudfront", endpoint)
    bucket = unique("edge-out")
    s3.create_bucket(Bucket=bucket)
    for key, (body, content_type) in OBJECTS.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)
    oac = cloudfront.create_origin_access_control(
        OriginAccessControlConfig={
            "Name": bucket,
            "SigningProtocol": "sigv4",
            "SigningBehavior": "always",
            "OriginAccessControlOriginType": "s3",
        }
    )["OriginAccessControl"]["Id"]
    keys = {}
    for name in ("member", "outsider"):
        public, private = rsa.newkeys(1024)
        created = cloudfront.create_public_key(
            PublicKeyConfig={
                "CallerReference": f"{bucket}-{name}",
                "Name": f"{bucket}-{name}",
                "EncodedKey": public_key_pem(public),
            }
        )
        keys[name] = SigningKey(created["PublicKey"]["Id"], private.save_pkcs1().decode("ascii"))
    group = cloudfront.create_key_group(KeyGroupConfig={"Name": bucket, "Items": [keys["member"].key_id]})["KeyGroup"][
        "Id"
    ]
    distribution = cloudfront.create_distribution(
        DistributionConfig={
            "CallerReference": bucket,
            "Comment": "",
            "Enabled": True,
            "Origins": {
                "Quantity": 1,
                "Items": [
                    {
                        "Id": "output",
                        "DomainName": f"{bucket}.s3.us-east-1.amazonaws.com",
                        "S3OriginConfig": {"OriginAccessIdentity": ""},
                        "OriginAccessControlId": oac,
                    }
                ],
            },
            "DefaultCacheBehavior": _behavior(TrustedKeyGroups={"Enabled": True, "Quantity": 1, "Items": [group]}),
            "CacheBehaviors": {"Quantity": 1, "Items": [_behavior(PathPattern="public/*")]},
        }
    )["Distribution"]
    # The bucket policy the OAC page gives: only CloudFront, and only for this distribution, reads the objects.
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": "cloudfront.amazonaws.com"},
        "Action": "s3:GetObject",
        "Resource": f"arn:aws:s3:::{bucket}/*",
        "Condition": {"StringEquals": {"AWS:SourceArn": distribution["ARN"]}},
    }
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
    edge = LocalEdge(cloudfront, distribution["Id"], endpoint).start()
    yield edge, keys["member"], keys["outsider"], distribution["DomainName"]
    edge.stop()


def _error(answer: requests.Response) -> tuple[int, str, str]:
    text = answer.text
    code = text.split("<Code>", 1)[1].split("</Code>", 1)[0] if "<Code>" in text else ""
    message = text.split("<Message>", 1)[1].split("</Message>", 1)[0] if "<Message>" in text else ""
    return answer.status_code, code, message


def _assert_served(answer: requests.Response, key: str) -> None:
    body, content_type = OBJECTS[key]
    assert answer.status_code == 200, answer.text
    assert answer.content == body
    assert answer.headers["Content-Type"] == content_type
    assert answer.headers["Content-Length"] == str(len(body))


def test_the_public_object_is_served_unsigned(stack):
    edge = stack[0]
    _assert_served(requests.get(f"{edge.url}/public/hello.txt", timeout=10), "public/hello.txt")


def test_a_signed_object_is_refused_unsigned_as_cloudfront_answers(stack):
    edge = stack[0]
    for path in ("/signed/a1/index.m3u8", "/signed/a1/index.m3u8?rendition=720p", "/Public/hello.txt"):
        answer = requests.get(f"{edge.url}{path}", timeout=10)
        assert answer.status_code == 403
        assert answer.content == (
            b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>MissingKey</Code>'
            b"<Message>Missing Key-Pair-Id query parameter or cookie value</Message></Error>"
        )
        assert answer.headers["Content-Type"] == "text/xml" and answer.headers["Server"] == "CloudFront"
    head = requests.head(f"{edge.url}/signed/a1/index.m3u8", timeout=10)
    assert head.status_code == 403 and head.content == b""


def test_an_expired_url_is_refused(stack):
    edge, key = stack[0], stack[1]
    url = sign_canned_url(f"{edge.url}/signed/a1/index.m3u8", key, int(time.time()) - 5)
    assert _error(requests.get(url, timeout=10)) == (403, "AccessDenied", "Access denied")


def test_a_key_outside_the_key_group_is_refused(stack):
    edge, outsider = stack[0], stack[2]
    url = sign_canned_url(f"{edge.url}/signed/a1/index.m3u8", outsider, int(time.time()) + 300)
    assert _error(requests.get(url, timeout=10)) == (403, "InvalidKey", "Unknown Key")


def test_a_tampered_signature_is_refused(stack):
    edge, key = stack[0], stack[1]
    url = sign_canned_url(f"{edge.url}/signed/a1/index.m3u8", key, int(time.time()) + 300)
    head, signature, tail = url.partition("Signature=")
    middle = len(tail) // 2  # away from the padding, so that it still decodes
    tampered = tail[:middle] + ("A" if tail[middle] != "A" else "B") + tail[middle + 1 :]
    assert _error(requests.get(head + signature + tampered, timeout=10)) == (403, "AccessDenied", "Access denied")
    other_path = url.replace("/signed/a1/index.m3u8", "/signed/b2/index.m3u8")  # a canned URL covers its own URL
    assert _error(requests.get(other_path, timeout=10)) == (403, "AccessDenied", "Access denied")


def test_a_canned_url_is_served(stack):
    edge, key = stack[0], stack[1]
    url = sign_canned_url(f"{edge.url}/signed/a1/seg_00001.ts", key, int(time.time()) + 300)
    _assert_served(requests.get(url, timeout=10), "signed/a1/seg_00001.ts")


def test_a_custom_policy_covers_every_object_under_its_wildcard(stack):
    edge, key = stack[0], stack[1]
    policy = CustomPolicy(f"{edge.url}/signed/a1/*", int(time.time()) + 300)
    playlist = sign_custom_url(f"{edge.url}/signed/a1/index.m3u8", key, policy)
    _assert_served(requests.get(playlist, timeout=10), "signed/a1/index.m3u8")
    signing = playlist.partition("?")[2]  # Policy, Signature, Key-Pair-Id: the same for every URL the policy covers
    _assert_served(requests.get(f"{edge.url}/signed/a1/seg_00001.ts?{signing}", timeout=10), "signed/a1/seg_00001.ts")
    outside = requests.get(f"{edge.url}/signed/b2/index.m3u8?{signing}", timeout=10)
    assert _error(outside) == (403, "AccessDenied", "Access denied")


def test_signed_cookies_serve_a_playlist_and_its_segments(stack):
    edge, key = stack[0], stack[1]
    cookies = custom_cookies(key, CustomPolicy(f"{edge.url}/signed/a1/*", int(time.time()) + 300))
    with requests.Session() as player:
        player.cookies.update(cookies)
        _assert_served(player.get(f"{edge.url}/signed/a1/index.m3u8", timeout=10), "signed/a1/index.m3u8")
        _assert_served(player.get(f"{edge.url}/signed/a1/seg_00001.ts", timeout=10), "signed/a1/seg_00001.ts")
        head = player.head(f"{edge.url}/signed/a1/seg_00001.ts", timeout=10)
        assert head.status_code == 200 and head.content == b""
        assert head.headers["Content-Length"] == str(len(OBJECTS["signed/a1/seg_00001.ts"][0]))
        assert _error(player.get(f"{edge.url}/signed/b2/index.m3u8", timeout=10)) == (
            403,
            "AccessDenied",
            "Access denied",
        )


def test_the_emulator_alone_serves_the_signed_object_to_anyone(stack, endpoint):
    """Why the edge exists: the emulator's data plane does not check signatures (its cloudfront.py docstring)."""
    domain = stack[3]
    answer = requests.get(f"{endpoint}/signed/a1/index.m3u8", headers={"Host": domain}, timeout=10)
    assert answer.status_code == 200 and answer.content == OBJECTS["signed/a1/index.m3u8"][0]
