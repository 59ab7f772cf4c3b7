"""botocore's `CloudFrontSigner` (the official SDK's signer) against migrator.cloudfront_signing, byte for byte.

For the same key, URL and times, our signed URL is the SDK's, character for character (canned and custom
policies, with and without a query string of the viewer's own), and our verifier, which the local CloudFront
stand-in will use, accepts the SDK's URLs. The SDK signs through `cryptography` here, a second RSA
implementation, so the comparison also holds our `rsa` signatures to RSA-SHA1 PKCS#1 v1.5. A drift in the
policy's form, the base64 replacements, the parameters' names or order, or the separator fails a row.
(Marked `sim` by its folder, tests/conftest.py.)
"""

from __future__ import annotations

import datetime

import pytest
from botocore.signers import CloudFrontSigner
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa
from migrator.cloudfront_signing import (
    ALLOWED,
    EXPIRED,
    CustomPolicy,
    public_key_of,
    sign_canned_url,
    sign_custom_url,
    verify_signed_url,
)
from migrator.playback_tokens import SigningKey

KEY_ID = "K2JCJMDEHXQW5F"
BASE = "https://d111111abcdef8.cloudfront.net"
NOW = 1_800_000_000
START, EXPIRES = NOW - 60, NOW + 3600
CLIENT = "192.0.2.7"
URLS = [f"{BASE}/videos/abc/index.m3u8", f"{BASE}/videos/abc/index.m3u8?color=red&size=medium"]


@pytest.fixture(scope="module")
def private():
    return crypto_rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def key(private) -> SigningKey:
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return SigningKey(KEY_ID, pem.decode())


@pytest.fixture(scope="module")
def sdk(private) -> CloudFrontSigner:
    def rsa_signer(message: bytes) -> bytes:
        return private.sign(message, padding.PKCS1v15(), hashes.SHA1())  # "CloudFront requires SHA-1 hash"

    return CloudFrontSigner(KEY_ID, rsa_signer)


def at(epoch: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)


@pytest.mark.parametrize("url", URLS, ids=["no-query", "own-query"])
def test_a_canned_url_is_the_sdks(key, sdk, url):
    theirs = sdk.generate_presigned_url(url, date_less_than=at(EXPIRES))
    assert sign_canned_url(url, key, EXPIRES) == theirs
    assert verify_signed_url(theirs, {KEY_ID: public_key_of(key)}, NOW) == ALLOWED
    assert verify_signed_url(theirs, {KEY_ID: public_key_of(key)}, EXPIRES).reason == EXPIRED


CUSTOM = [
    {},
    {"date_greater_than": START},
    {"ip_address": CLIENT},  # a bare address: both write it as /32
    {"date_greater_than": START, "ip_address": "192.0.2.0/24"},
]


@pytest.mark.parametrize("url", URLS, ids=["no-query", "own-query"])
@pytest.mark.parametrize("conditions", CUSTOM, ids=["expiry", "start", "address", "start-and-range"])
@pytest.mark.parametrize("resource", [f"{BASE}/videos/abc/*", None], ids=["wildcard", "the-url"])
def test_a_custom_url_is_the_sdks(key, sdk, url, conditions, resource):
    resource = resource or url
    start = conditions.get("date_greater_than")
    theirs_policy = sdk.build_policy(
        resource,
        at(EXPIRES),
        date_greater_than=at(start) if start is not None else None,
        ip_address=conditions.get("ip_address"),
    )
    ours_policy = CustomPolicy(resource, EXPIRES, **conditions)
    assert ours_policy.statement() == theirs_policy
    theirs = sdk.generate_presigned_url(url, policy=theirs_policy)
    assert sign_custom_url(url, key, ours_policy) == theirs
    assert verify_signed_url(theirs, {KEY_ID: public_key_of(key)}, NOW, client_ip=CLIENT) == ALLOWED
