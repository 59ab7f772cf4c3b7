"""CloudFront signed URLs and cookies (migrator.cloudfront_signing), held to the Developer Guide's forms byte for byte.

The signatures are checked by a second, independent RSA implementation (`cryptography`) with the public key
alone; the verifier, which the local CloudFront stand-in will use, is held to refuse each way a URL or a cookie
can be wrong and to accept each good form. The official SDK's signer is compared in
tests/sim/test_sdk_cloudfront_signing.py.
"""

from __future__ import annotations

import base64
import json
import re

import pytest
import rsa
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa
from migrator.cloudfront_signing import (
    ALLOWED,
    AMBIGUOUS,
    BAD_HASH,
    BAD_SIGNATURE,
    EXPIRED,
    IP_REFUSED,
    MALFORMED,
    MISSING,
    NOT_YET_VALID,
    RESOURCE_MISMATCH,
    SHA256,
    UNKNOWN_KEY,
    CustomPolicy,
    SigningError,
    canned_cookies,
    canned_policy,
    cloudfront_b64decode,
    cloudfront_b64encode,
    custom_cookies,
    load_public_key,
    public_key_of,
    resource_matches,
    set_cookie_headers,
    sign_canned_url,
    sign_custom_url,
    verify_request,
    verify_signed_cookies,
    verify_signed_url,
)
from migrator.playback_tokens import SigningKey, SigningKeyError

KEY_ID = "K2JCJMDEHXQW5F"  # the Developer Guide's example public key id
BASE = "https://d111111abcdef8.cloudfront.net"
URL = f"{BASE}/videos/abc/index.m3u8?rendition=720p"
WILDCARD = f"{BASE}/videos/abc/*"
NOW = 1_800_000_000
START, EXPIRES = NOW - 60, NOW + 600
CLIENT = "192.0.2.7"


@pytest.fixture(scope="module")
def private():
    # 1024 bits: small, so that the pure-Python signing stays quick (the SDK test uses 2048).
    return crypto_rsa.generate_private_key(public_exponent=65537, key_size=1024)


def _pem(private, fmt) -> str:
    return private.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()


@pytest.fixture(scope="module")
def key(private) -> SigningKey:
    return SigningKey(KEY_ID, _pem(private, serialization.PrivateFormat.TraditionalOpenSSL))


@pytest.fixture(scope="module")
def keys(key):
    return {KEY_ID: public_key_of(key)}


def _params(url: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in url.partition("?")[2].split("&"))


def _names(url: str) -> list[str]:
    return [item.split("=", 1)[0] for item in url.partition("?")[2].split("&")]


def _oracle_verifies(private, message: bytes, safe_signature: str, algorithm=None) -> bool:
    try:
        private.public_key().verify(
            cloudfront_b64decode(safe_signature), message, padding.PKCS1v15(), algorithm or hashes.SHA1()
        )
    except InvalidSignature:
        return False
    return True


# The canned page's example statement, as printed; its procedure: "Remove all whitespace".
DOCUMENTED_CANNED = """
{
   "Statement":[
      {
         "Resource":"http://d111111abcdef8.cloudfront.net/horizon.jpg?size=large&license=yes",
         "Condition":{
            "DateLessThan":{
               "AWS:EpochTime":1357034400
            }
         }
      }
   ]
}
"""


@pytest.mark.parametrize(
    "resource, expires, statement",
    [
        (
            "http://d111111abcdef8.cloudfront.net/horizon.jpg?size=large&license=yes",
            1357034400,
            re.sub(r"\s", "", DOCUMENTED_CANNED),
        ),
        (
            f"{BASE}/image.jpg",
            1767290400,
            '{"Statement":[{"Resource":"https://d111111abcdef8.cloudfront.net/image.jpg",'
            '"Condition":{"DateLessThan":{"AWS:EpochTime":1767290400}}}]}',
        ),
    ],
    ids=["documented-example", "no-query"],
)
def test_the_canned_policy_is_the_documented_statement_byte_for_byte(resource, expires, statement):
    assert canned_policy(resource, expires) == statement


@pytest.mark.parametrize(
    "raw, standard, safe",
    [
        (b"\xfb\xff", "+/8=", "-~8_"),
        (b"\xfb\xef\xbe", "++++", "----"),
        (b"\xff\xff\xff", "////", "~~~~"),
        (b"a", "YQ==", "YQ__"),
        (b"abc", "YWJj", "YWJj"),
    ],
)
def test_base64_takes_cloudfronts_replacements(raw, standard, safe):
    assert base64.b64encode(raw).decode() == standard  # the row's premise: these bytes do make + / =
    assert cloudfront_b64encode(raw) == safe
    assert cloudfront_b64decode(safe) == raw


@pytest.mark.parametrize("text", ["YQ==", "YQ_", "a+b/", "", "YWJj%3D", "YW Jj"])
def test_base64_outside_cloudfronts_alphabet_or_padding_is_refused(text):
    with pytest.raises(ValueError):
        cloudfront_b64decode(text)


# The custom-policy cookie page's example CloudFront-Policy value (IpAddress before DateLessThan: any order).
DOCUMENTED_COOKIE_POLICY = (
    "eyJTdGF0ZW1lbnQiOlt7IlJlc291cmNlIjoiaHR0cDovL2QxMTExMTFhYmNkZWY4LmNsb3VkZnJvbnQubmV0L2dhbWVfZG93bmxvYWQuemlwIiwi"
    "Q29uZGl0aW9uIjp7IklwQWRkcmVzcyI6eyJBV1M6U291cmNlSXAiOiIxOTIuMC4yLjAvMjQifSwiRGF0ZUxlc3NUaGFuIjp7IkFXUzpFcG9jaFRp"
    "bWUiOjE0MjY1MDAwMDB9fX1dfQ__"
)
DOCUMENTED_COOKIE_STATEMENT = (
    b'{"Statement":[{"Resource":"http://d111111abcdef8.cloudfront.net/game_download.zip",'
    b'"Condition":{"IpAddress":{"AWS:SourceIp":"192.0.2.0/24"},"DateLessThan":{"AWS:EpochTime":1426500000}}}]}'
)


def test_the_documented_cookie_policy_decodes_and_encodes_back():
    assert cloudfront_b64decode(DOCUMENTED_COOKIE_POLICY) == DOCUMENTED_COOKIE_STATEMENT
    assert cloudfront_b64encode(DOCUMENTED_COOKIE_STATEMENT) == DOCUMENTED_COOKIE_POLICY


@pytest.mark.parametrize(
    "now, client_ip, reason",
    [
        (1426500000 - 1, "192.0.2.9", ""),
        (1426500000, "192.0.2.9", EXPIRED),
        (1426500000 - 1, "198.51.100.9", IP_REFUSED),
    ],
)
def test_the_documented_cookie_policy_is_read_in_its_own_order(key, keys, now, client_ip, reason):
    signature = cloudfront_b64encode(_rsa_sign(key, DOCUMENTED_COOKIE_STATEMENT, "SHA-1"))
    cookies = {
        "CloudFront-Policy": DOCUMENTED_COOKIE_POLICY,
        "CloudFront-Signature": signature,
        "CloudFront-Key-Pair-Id": KEY_ID,
    }
    url = "http://d111111abcdef8.cloudfront.net/game_download.zip"
    assert verify_signed_cookies(url, cookies, keys, now, client_ip=client_ip).reason == reason


def _rsa_sign(key: SigningKey, message: bytes, hash_name: str) -> bytes:
    return rsa.sign(message, key.private(), hash_name)


@pytest.mark.parametrize(
    "url, prefix",
    [
        (f"{BASE}/image.jpg", f"{BASE}/image.jpg?Expires={EXPIRES}&Signature="),
        (
            f"{BASE}/image.jpg?color=red&size=medium",
            f"{BASE}/image.jpg?color=red&size=medium&Expires={EXPIRES}&Signature=",
        ),
    ],
    ids=["no-query", "own-query"],
)
def test_a_canned_url_is_expires_signature_key_pair_id_after_the_own_query(private, key, url, prefix):
    signed = sign_canned_url(url, key, EXPIRES)
    assert signed.startswith(prefix)
    assert _names(signed)[-3:] == ["Expires", "Signature", "Key-Pair-Id"]
    assert signed.endswith(f"&Key-Pair-Id={KEY_ID}")
    assert _oracle_verifies(private, canned_policy(url, EXPIRES).encode(), _params(signed)["Signature"])


def test_a_custom_url_is_policy_signature_key_pair_id_and_signs_the_policy(private, key):
    policy = CustomPolicy(WILDCARD, EXPIRES, date_greater_than=START, ip_address="192.0.2.0/24")
    signed = sign_custom_url(URL, key, policy)
    assert signed.startswith(f"{URL}&Policy=")
    assert _names(signed) == ["rendition", "Policy", "Signature", "Key-Pair-Id"]
    params = _params(signed)
    assert cloudfront_b64decode(params["Policy"]) == policy.statement().encode()
    assert _oracle_verifies(private, policy.statement().encode(), params["Signature"])


@pytest.mark.parametrize("kind", ["canned", "custom"])
def test_sha256_names_itself_after_key_pair_id(private, key, kind):
    if kind == "canned":
        signed, statement = sign_canned_url(URL, key, EXPIRES, hash_algorithm=SHA256), canned_policy(URL, EXPIRES)
    else:
        policy = CustomPolicy(WILDCARD, EXPIRES)
        signed, statement = sign_custom_url(URL, key, policy, hash_algorithm=SHA256), policy.statement()
    assert _names(signed)[-2:] == ["Key-Pair-Id", "Hash-Algorithm"]
    assert signed.endswith("&Hash-Algorithm=SHA256")
    assert _oracle_verifies(private, statement.encode(), _params(signed)["Signature"], hashes.SHA256())
    assert not _oracle_verifies(private, statement.encode(), _params(signed)["Signature"])


@pytest.mark.parametrize(
    "policy, statement",
    [
        (
            CustomPolicy(WILDCARD, 1357034400),
            '{"Statement":[{"Resource":"https://d111111abcdef8.cloudfront.net/videos/abc/*",'
            '"Condition":{"DateLessThan":{"AWS:EpochTime":1357034400}}}]}',
        ),
        (
            CustomPolicy("http://d111111abcdef8.cloudfront.net/training/*", 1357034400, ip_address="192.0.2.0/24"),
            '{"Statement":[{"Resource":"http://d111111abcdef8.cloudfront.net/training/*",'
            '"Condition":{"DateLessThan":{"AWS:EpochTime":1357034400},"IpAddress":{"AWS:SourceIp":"192.0.2.0/24"}}}]}',
        ),
        (
            CustomPolicy("http://*", 1357120800, date_greater_than=1357034400, ip_address="192.0.2.10"),
            '{"Statement":[{"Resource":"http://*","Condition":{"DateLessThan":{"AWS:EpochTime":1357120800},'
            '"IpAddress":{"AWS:SourceIp":"192.0.2.10/32"},"DateGreaterThan":{"AWS:EpochTime":1357034400}}}]}',
        ),
    ],
    ids=["wildcard", "directory-and-range", "any-object-one-address"],
)
def test_custom_policy_statements(policy, statement):
    assert policy.statement() == statement
    assert json.loads(statement)  # and it is JSON


@pytest.mark.parametrize(
    "pattern, candidate, matches",
    [
        (
            "http://d111111abcdef8.cloudfront.net/*game_download.zip*",
            "http://d111111abcdef8.cloudfront.net/game_download.zip",
            True,
        ),
        (
            "http://d111111abcdef8.cloudfront.net/*game_download.zip*",
            "http://d111111abcdef8.cloudfront.net/example_game_download.zip?license=yes",
            True,
        ),
        (
            "http://d111111abcdef8.cloudfront.net/*game_download.zip*",
            "http://d111111abcdef8.cloudfront.net/test_game_download.zip?license=temp",
            True,
        ),
        (
            "http://d111111abcdef8.cloudfront.net/*game_download.zip*",
            "http://d111111abcdef8.cloudfront.net/game.tar",
            False,
        ),
        (WILDCARD, f"{BASE}/videos/abc/", True),
        (WILDCARD, f"{BASE}/videos/abcd/index.m3u8", False),
        (WILDCARD, f"{BASE}/videos/ab", False),
        (f"{BASE}/v/seg?.ts", f"{BASE}/v/seg1.ts", True),
        (f"{BASE}/v/seg?.ts", f"{BASE}/v/seg10.ts", False),
        (f"{BASE}/v/seg?.ts", f"{BASE}/v/seg.ts", False),
        (f"{BASE}/v.mp4", "https://d111111abcdef8xcloudfrontxnet/v.mp4", False),
        ("http://*", "http://d111111abcdef8.cloudfront.net/training/orientation.pdf", True),
        ("http://*", f"{BASE}/a", False),
        ("*", "", True),
        ("a*b*c", "a-b-c", True),
        ("a*b*c", "acb", False),
        ("*a*a*a*a*a*a*a*a*b", "a" * 2000, False),
    ],
)
def test_resource_wildcards(pattern, candidate, matches):
    assert resource_matches(pattern, candidate) is matches


def _signed(kind: str, key: SigningKey) -> str:
    custom = CustomPolicy(WILDCARD, EXPIRES, date_greater_than=START, ip_address="192.0.2.0/24")
    return {
        "canned": lambda: sign_canned_url(URL, key, EXPIRES),
        "custom": lambda: sign_custom_url(URL, key, custom),
        "canned-sha256": lambda: sign_canned_url(URL, key, EXPIRES, hash_algorithm=SHA256),
        "custom-sha256": lambda: sign_custom_url(URL, key, custom, hash_algorithm=SHA256),
    }[kind]()


@pytest.mark.parametrize(
    "kind, now",
    [
        ("canned", NOW),
        ("custom", NOW),
        ("canned-sha256", NOW),
        ("custom-sha256", NOW),
        ("canned", EXPIRES - 1),
        ("custom", START + 1),
    ],
    ids=["canned", "custom", "canned-sha256", "custom-sha256", "last-second", "first-second"],
)
def test_the_verifier_accepts_each_good_form(key, keys, kind, now):
    assert verify_signed_url(_signed(kind, key), keys, now, client_ip=CLIENT) == ALLOWED


def _replace(name: str, value: str):
    def mutate(url: str) -> str:
        return re.sub(rf"([?&]){re.escape(name)}=[^&]*", lambda m: f"{m.group(1)}{name}={value}", url)

    return mutate


def _drop(name: str):
    return lambda url: re.sub(rf"&{re.escape(name)}=[^&]*", "", url)


def _flip_signature(url: str) -> str:
    signature = _params(url)["Signature"]
    return url.replace(signature, ("B" if signature[0] == "A" else "A") + signature[1:])


def _widen_policy(url: str) -> str:
    statement = json.loads(cloudfront_b64decode(_params(url)["Policy"]))
    statement["Statement"][0]["Resource"] = "*"
    widened = json.dumps(statement, separators=(",", ":")).encode()
    return _replace("Policy", cloudfront_b64encode(widened))(url)


def _same(url: str) -> str:
    return url


REFUSALS = [
    ("changed-path", "canned", lambda u: u.replace("index.m3u8", "other.m3u8"), NOW, CLIENT, BAD_SIGNATURE),
    (
        "changed-own-parameter",
        "canned",
        lambda u: u.replace("rendition=720p", "rendition=1080p"),
        NOW,
        CLIENT,
        BAD_SIGNATURE,
    ),
    ("changed-expires", "canned", _replace("Expires", str(EXPIRES + 3600)), NOW, CLIENT, BAD_SIGNATURE),
    ("changed-host", "custom", lambda u: u.replace("d111111abcdef8", "d222222abcdef8"), NOW, CLIENT, RESOURCE_MISMATCH),
    (
        "outside-the-wildcard",
        "custom",
        lambda u: u.replace("/videos/abc/", "/videos/xyz/"),
        NOW,
        CLIENT,
        RESOURCE_MISMATCH,
    ),
    ("expired-canned", "canned", _same, EXPIRES, CLIENT, EXPIRED),
    ("expired-custom", "custom", _same, EXPIRES, CLIENT, EXPIRED),
    ("not-yet-valid", "custom", _same, START, CLIENT, NOT_YET_VALID),
    ("unknown-key-id", "canned", _replace("Key-Pair-Id", "K3OTHERKEYID00"), NOW, CLIENT, UNKNOWN_KEY),
    ("tampered-signature", "canned", _flip_signature, NOW, CLIENT, BAD_SIGNATURE),
    ("tampered-custom-signature", "custom", _flip_signature, NOW, CLIENT, BAD_SIGNATURE),
    ("widened-policy", "custom", _widen_policy, NOW, CLIENT, BAD_SIGNATURE),
    (
        "canned-with-a-policy-too",
        "canned",
        lambda u: u + "&Policy=" + cloudfront_b64encode(b"{}"),
        NOW,
        CLIENT,
        AMBIGUOUS,
    ),
    ("custom-with-expires-too", "custom", lambda u: u + f"&Expires={EXPIRES}", NOW, CLIENT, AMBIGUOUS),
    ("signature-twice", "canned", lambda u: u + "&Signature=AAAA", NOW, CLIENT, AMBIGUOUS),
    ("no-key-pair-id", "canned", _drop("Key-Pair-Id"), NOW, CLIENT, MISSING),
    ("no-signature", "canned", _drop("Signature"), NOW, CLIENT, MISSING),
    ("no-expires", "canned", _drop("Expires"), NOW, CLIENT, MISSING),
    ("sha256-signature-unnamed", "canned-sha256", _drop("Hash-Algorithm"), NOW, CLIENT, BAD_SIGNATURE),
    ("sha1-signature-named-sha256", "canned", lambda u: u + "&Hash-Algorithm=SHA256", NOW, CLIENT, BAD_SIGNATURE),
    ("unknown-hash", "canned", lambda u: u + "&Hash-Algorithm=MD5", NOW, CLIENT, BAD_HASH),
    ("expires-leading-zero", "canned", lambda u: u.replace("Expires=", "Expires=0"), NOW, CLIENT, MALFORMED),
    ("expires-signed", "canned", lambda u: u.replace("Expires=", "Expires=+"), NOW, CLIENT, MALFORMED),
    ("signature-percent-encoded", "canned", lambda u: u.replace("Signature=", "Signature=%2B"), NOW, CLIENT, MALFORMED),
    ("fragment", "canned", lambda u: u + "#t=10", NOW, CLIENT, MALFORMED),
    ("address-outside-range", "custom", _same, NOW, "198.51.100.7", IP_REFUSED),
    ("no-client-address", "custom", _same, NOW, None, IP_REFUSED),
    ("ipv6-client", "custom", _same, NOW, "2001:db8::1", IP_REFUSED),
]


@pytest.mark.parametrize(
    "kind, mutate, now, client_ip, reason", [row[1:] for row in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_the_verifier_refuses(key, keys, kind, mutate, now, client_ip, reason):
    good = _signed(kind, key)
    bad = mutate(good)
    verdict = verify_signed_url(bad, keys, now, client_ip=client_ip)
    assert (verdict.allowed, verdict.reason) == (False, reason)
    assert _params(good)["Signature"] not in verdict.detail  # a refusal's words carry no signature


def _custom_url_with(key: SigningKey, statement: bytes) -> str:
    signature = cloudfront_b64encode(_rsa_sign(key, statement, "SHA-1"))
    return f"{URL}&Policy={cloudfront_b64encode(statement)}&Signature={signature}&Key-Pair-Id={KEY_ID}"


def _policy(condition: str, resource: str = f'"Resource":"{WILDCARD}",') -> bytes:
    return ('{"Statement":[{' + resource + '"Condition":{' + condition + "}}]}").encode()


# The custom page's own example URL carries a policy with spaces and CRLFs: signed as sent, it is read.
SPACED_POLICY = (
    '{ \r\n   "Statement" : [ { "Resource":"'
    + WILDCARD
    + '",\r\n "Condition":{ "DateLessThan":{"AWS:EpochTime":'
    + str(EXPIRES)
    + "} } } ] }\r\n"
).encode()


@pytest.mark.parametrize(
    "statement, reason",
    [
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}}'), ""),
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}}', resource=""), ""),  # no Resource: any object
        (SPACED_POLICY, ""),
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":"{EXPIRES}"}}'), MALFORMED),  # quoted time
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}.0}}'), MALFORMED),
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}},"DateLessThan":{{"AWS:EpochTime":1}}'), MALFORMED),
        (_policy('"DateGreaterThan":{"AWS:EpochTime":1}'), MALFORMED),  # no DateLessThan
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}},"StringLike":{{"a":"b"}}'), MALFORMED),
        (
            _policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}},"IpAddress":{{"AWS:SourceIp":"192.0.2.7"}}'),
            MALFORMED,
        ),
        (
            _policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}},"IpAddress":{{"AWS:SourceIp":"2001:db8::/32"}}'),
            MALFORMED,
        ),
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}}', resource='"Resource":["a"],'), MALFORMED),
        (b'{"Statement":[]}', MALFORMED),
        (b"not json", MALFORMED),
        (_policy(f'"DateLessThan":{{"AWS:EpochTime":{EXPIRES}}},"DateGreaterThan":{{"AWS:EpochTime":NaN}}'), MALFORMED),
    ],
    ids=[
        "compact",
        "no-resource",
        "whitespace",
        "quoted-time",
        "fractional-time",
        "duplicate-key",
        "no-date-less-than",
        "unknown-condition",
        "address-without-prefix",
        "ipv6-range",
        "resource-not-a-string",
        "no-statement",
        "not-json",
        "nan",
    ],
)
def test_a_signed_custom_policy_is_read_strictly(key, keys, statement, reason):
    assert verify_signed_url(_custom_url_with(key, statement), keys, NOW, client_ip=CLIENT).reason == reason


@pytest.mark.parametrize(
    "make, problem",
    [
        (lambda k: sign_canned_url(f"{BASE}/a.jpg#t=1", k, EXPIRES), "fragment"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg?Expires=1", k, EXPIRES), "already signed"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg?x=1&Key-Pair-Id=K", k, EXPIRES), "already signed"),
        (lambda k: sign_canned_url("ftp://d111111abcdef8.cloudfront.net/a.jpg", k, EXPIRES), "scheme"),
        (lambda k: sign_canned_url(f"{BASE}/a b.jpg", k, EXPIRES), "space"),
        (lambda k: sign_canned_url(f"{BASE}/é.jpg", k, EXPIRES), "not ASCII"),
        (lambda k: sign_canned_url(f'{BASE}/a".jpg', k, EXPIRES), "quote"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg?", k, EXPIRES), "empty query"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg", k, 2_147_483_648), "after 2038"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg", k, -1), "negative"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg", k, True), "bool"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg", k, EXPIRES, hash_algorithm="MD5"), "hash"),
        (lambda k: sign_canned_url(f"{BASE}/a.jpg", SigningKey("K&x=1", k.private_key_pem), EXPIRES), "key id"),
        (lambda k: sign_custom_url(f"{BASE}/videos/xyz/a.ts", k, CustomPolicy(WILDCARD, EXPIRES)), "outside"),
        (lambda k: CustomPolicy(WILDCARD, EXPIRES, date_greater_than=EXPIRES), "start not before end"),
        (lambda k: CustomPolicy(WILDCARD, EXPIRES, ip_address="2001:db8::/32"), "IPv6"),
        (lambda k: CustomPolicy(WILDCARD, EXPIRES, ip_address="192.0.2.300"), "bad address"),
        (lambda k: CustomPolicy(WILDCARD, EXPIRES, ip_address="192.0.2.0/33"), "bad prefix"),
        (lambda k: CustomPolicy("d111111abcdef8.cloudfront.net/a.jpg", EXPIRES), "not a URL"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_what_cloudfront_would_not_read_is_not_signed(key, make, problem):
    with pytest.raises(SigningError):
        make(key)


def test_canned_cookies_are_the_canned_urls_values_under_cookie_names(key):
    cookies = canned_cookies(URL, key, EXPIRES)
    assert list(cookies) == ["CloudFront-Expires", "CloudFront-Signature", "CloudFront-Key-Pair-Id"]
    url = _params(sign_canned_url(URL, key, EXPIRES))
    assert cookies == {
        "CloudFront-Expires": str(EXPIRES),
        "CloudFront-Signature": url["Signature"],  # one policy, one signature: PKCS#1 v1.5 is deterministic
        "CloudFront-Key-Pair-Id": KEY_ID,
    }


def test_custom_cookies_are_the_custom_urls_values_under_cookie_names(key):
    policy = CustomPolicy(WILDCARD, EXPIRES, ip_address="192.0.2.0/24")
    cookies = custom_cookies(key, policy, hash_algorithm=SHA256)
    assert list(cookies) == [
        "CloudFront-Policy",
        "CloudFront-Signature",
        "CloudFront-Key-Pair-Id",
        "CloudFront-Hash-Algorithm",
    ]
    url = _params(sign_custom_url(URL, key, policy, hash_algorithm=SHA256))
    assert list(cookies.values()) == [url["Policy"], url["Signature"], KEY_ID, "SHA256"]


def test_set_cookie_headers_take_the_documented_attributes(key):
    headers = set_cookie_headers({"CloudFront-Expires": "1426500000"}, domain="d111111abcdef8.cloudfront.net", path="/")
    assert headers == ["CloudFront-Expires=1426500000; Domain=d111111abcdef8.cloudfront.net; Path=/; Secure; HttpOnly"]
    assert set_cookie_headers({"a": "b", "c": "d"}) == ["a=b; Secure; HttpOnly", "c=d; Secure; HttpOnly"]


@pytest.mark.parametrize(
    "which, url, now, edit, reason",
    [
        ("canned", URL, NOW, None, ""),
        ("canned", f"{BASE}/videos/abc/other.m3u8", NOW, None, BAD_SIGNATURE),  # a canned cookie is for one URL
        ("canned", URL, EXPIRES, None, EXPIRED),
        ("custom", f"{BASE}/videos/abc/seg-001.ts", NOW, None, ""),
        ("custom", f"{BASE}/videos/xyz/seg-001.ts", NOW, None, RESOURCE_MISMATCH),
        ("custom", URL, NOW, ("CloudFront-Key-Pair-Id", None), MISSING),
        ("custom", URL, NOW, ("CloudFront-Expires", str(EXPIRES)), AMBIGUOUS),
        ("custom", URL, NOW, ("CloudFront-Key-Pair-Id", "K3OTHERKEYID00"), UNKNOWN_KEY),
    ],
)
def test_the_verifier_checks_cookies(key, keys, which, url, now, edit, reason):
    if which == "canned":
        cookies = canned_cookies(URL, key, EXPIRES)
    else:
        cookies = custom_cookies(key, CustomPolicy(WILDCARD, EXPIRES))
    if edit is not None:
        name, value = edit
        cookies = {n: v for n, v in cookies.items() if n != name} | ({name: value} if value is not None else {})
    assert verify_signed_cookies(url, cookies, keys, now).reason == reason


def test_a_cookie_sent_twice_is_refused(key, keys):
    pairs = [*canned_cookies(URL, key, EXPIRES).items(), ("CloudFront-Signature", "AAAA")]
    assert verify_signed_cookies(URL, pairs, keys, NOW).reason == AMBIGUOUS


def test_a_url_with_cloudfronts_parameters_is_checked_alone_and_its_cookies_ignored(key, keys):
    good_cookies = custom_cookies(key, CustomPolicy(WILDCARD, EXPIRES))
    assert verify_request(URL, good_cookies, keys, NOW) == ALLOWED
    assert verify_request(sign_canned_url(URL, key, EXPIRES), {}, keys, NOW) == ALLOWED
    # An unsigned URL that merely has an Expires parameter is taken as a signed URL: the cookies are not read.
    assert verify_request(f"{URL}&Expires={EXPIRES}", good_cookies, keys, NOW).reason == MISSING


@pytest.mark.parametrize("fmt", ["spki", "pkcs1"])
def test_public_keys_load_from_pem(private, key, fmt):
    public_format = {
        "spki": serialization.PublicFormat.SubjectPublicKeyInfo,
        "pkcs1": serialization.PublicFormat.PKCS1,
    }[fmt]
    pem = private.public_key().public_bytes(serialization.Encoding.PEM, public_format).decode()
    assert load_public_key(pem) == public_key_of(key)


@pytest.mark.parametrize(
    "pem", ["", "-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----", "ssh-rsa AAAA"]
)
def test_a_public_key_that_is_not_one_is_refused(pem):
    with pytest.raises(SigningKeyError):
        load_public_key(pem)


def test_a_pkcs8_key_signs_the_same(private, key, keys):
    pkcs8 = SigningKey(KEY_ID, _pem(private, serialization.PrivateFormat.PKCS8))
    assert sign_canned_url(URL, pkcs8, EXPIRES) == sign_canned_url(URL, key, EXPIRES)
    assert verify_signed_url(sign_canned_url(URL, pkcs8, EXPIRES), keys, NOW) == ALLOWED
