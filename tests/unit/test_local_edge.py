"""The local CloudFront edge's decisions (infra/sim/edge.py), as tables: which cache behaviour a path gets, whether it
needs a signature, what CloudFront's parameters leave of a query string, and what a refusal says. Then the edge's
decision with a stand-in CloudFront API: its cache of the distribution's config and keys, and the read again when a
request names a key the cache does not hold; and, on loopback with a recorder standing in for the emulator's data
plane, what reaches it (no CloudFront parameter or cookie, the distribution's Host) and the sizes refused. The edge
against the emulator: tests/emulator/test_local_edge.py.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
import requests
import rsa
import rsa.pem
from migrator.cloudfront_signing import (
    BAD_SIGNATURE,
    EXPIRED,
    MALFORMED,
    MISSING,
    RESOURCE_MISMATCH,
    UNKNOWN_KEY,
    Verdict,
    load_public_key,
    sign_canned_url,
)
from migrator.playback_tokens import SigningKey

from infra.sim.edge import (
    ACCESS_DENIED,
    MALFORMED_POLICY,
    MALFORMED_SIGNATURE,
    MISSING_KEY,
    UNKNOWN_KEY_REFUSAL,
    LocalEdge,
    choose_behavior,
    parse_cookies,
    path_matches,
    refusal_for,
    signing_values,
    strip_cloudfront_parameters,
    trusted_key_groups,
)


def public_key_pem(public: rsa.PublicKey) -> str:
    """The key as CloudFront's EncodedKey takes it: `BEGIN PUBLIC KEY`, an X.509 SubjectPublicKeyInfo."""

    def der(tag: int, content: bytes) -> bytes:
        size = len(content)
        length = (
            bytes([size])
            if size < 0x80
            else bytes([0x80 | ((size.bit_length() + 7) // 8)]) + size.to_bytes((size.bit_length() + 7) // 8, "big")
        )
        return bytes([tag]) + length + content

    rsa_encryption = bytes.fromhex("300d06092a864886f70d0101010500")  # AlgorithmIdentifier rsaEncryption, NULL
    spki = der(0x30, rsa_encryption + der(0x03, b"\x00" + public.save_pkcs1("DER")))
    return rsa.pem.save_pem(spki, "PUBLIC KEY").decode("ascii")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("public/*", "/public/a.ts", True),
        ("/public/*", "/public/a.ts", True),  # a leading / is optional
        ("public/*", "/public/", True),  # * is zero or more characters
        ("public/*", "/public", False),
        ("public/*", "/Public/a.ts", False),  # case-sensitive
        ("public/*", "/x/public/a.ts", False),  # the whole path, from its start
        ("*.m3u8", "/signed/a1/index.m3u8", True),  # * spans slashes
        ("*.m3u8", "/signed/a1/index.m3u8x", False),
        ("signed/a?/*", "/signed/a1/seg.ts", True),  # ? is exactly one character
        ("signed/a?/*", "/signed/a12/seg.ts", False),
        ("signed/a?/*", "/signed/a/seg.ts", False),
        ("index.html", "/index.html", True),  # no wildcard: that one path
        ("index.html", "/index.htm", False),
        ("*", "/anything/at/all", True),
    ],
)
def test_path_patterns_match_as_cloudfront_documents(pattern, path, matches):
    assert path_matches(pattern, path) is matches


TRUSTS = {"Enabled": True, "Quantity": 1, "Items": ["KG1"]}
NOT_TRUSTED = {"Enabled": False, "Quantity": 0}


def _config(*ordered: tuple[str, str]) -> dict:
    items = [{"PathPattern": pattern, "TargetOriginId": name} for pattern, name in ordered]
    return {
        "DefaultCacheBehavior": {"TargetOriginId": "default", "TrustedKeyGroups": TRUSTS},
        "CacheBehaviors": {"Quantity": len(items), "Items": items},
    }


@pytest.mark.parametrize(
    ("ordered", "path", "chosen"),
    [
        ((("public/*", "public"),), "/public/a.ts", "public"),
        ((("public/*", "public"),), "/signed/a.ts", "default"),  # no pattern matches: the default behaviour
        ((), "/public/a.ts", "default"),  # no ordered behaviours at all
        ((("signed/free/*", "free"), ("signed/*", "signed")), "/signed/free/a.ts", "free"),  # the first that matches
        ((("signed/*", "signed"), ("signed/free/*", "free")), "/signed/free/a.ts", "signed"),  # order, not specificity
        ((("signed/*", "signed"), ("signed/free/*", "free")), "/other.ts", "default"),
        ((("*.ts", "segments"), ("public/*", "public")), "/public/a.ts", "segments"),
        ((("*.ts", "segments"), ("public/*", "public")), "/public/a.m3u8", "public"),
    ],
)
def test_the_first_matching_behaviour_in_order_then_the_default(ordered, path, chosen):
    assert choose_behavior(_config(*ordered), path)["TargetOriginId"] == chosen


def test_a_config_without_cache_behaviors_uses_the_default():
    config = {"DefaultCacheBehavior": {"TargetOriginId": "default"}}
    assert choose_behavior(config, "/a")["TargetOriginId"] == "default"


@pytest.mark.parametrize(
    ("behavior", "groups"),
    [
        ({"TrustedKeyGroups": TRUSTS}, ["KG1"]),
        ({"TrustedKeyGroups": {"Enabled": True, "Quantity": 2, "Items": ["KG1", "KG2"]}}, ["KG1", "KG2"]),
        ({"TrustedKeyGroups": NOT_TRUSTED}, None),
        ({}, None),
        ({"TrustedSigners": {"Enabled": True, "Quantity": 1, "Items": ["self"]}}, []),  # restricted, no key known
        ({"TrustedKeyGroups": NOT_TRUSTED, "TrustedSigners": {"Enabled": False, "Quantity": 0}}, None),
    ],
)
def test_which_behaviours_need_a_signature(behavior, groups):
    assert trusted_key_groups(behavior) == groups


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("", ""),
        ("Expires=1&Signature=s~_-&Key-Pair-Id=K1", ""),
        ("rendition=720p&Expires=1&Signature=s&Key-Pair-Id=K1", "rendition=720p"),
        ("a=1&Policy=p__&Signature=s&Key-Pair-Id=K1&Hash-Algorithm=SHA256&b=2", "a=1&b=2"),
        ("expires=1&Key-Pair-Idx=2", "expires=1&Key-Pair-Idx=2"),  # names are exact and case-sensitive
        ("a=%20b&&c", "a=%20b&c"),  # the rest verbatim (an empty item is nothing)
    ],
)
def test_cloudfront_parameters_are_not_forwarded(query, kept):
    assert strip_cloudfront_parameters(query) == kept


def test_cookies_are_read_in_order_with_repeats():
    headers = ["a=1; CloudFront-Policy=p; b", "CloudFront-Policy=q"]
    assert parse_cookies(headers) == [("a", "1"), ("CloudFront-Policy", "p"), ("CloudFront-Policy", "q")]


URL = "http://127.0.0.1:9/signed/a1/index.m3u8"
COOKIE_VALUES = [("CloudFront-Policy", "P"), ("CloudFront-Signature", "S"), ("CloudFront-Key-Pair-Id", "K")]
URL_VALUES = {"Signature": "T", "Key-Pair-Id": "L"}


@pytest.mark.parametrize(
    ("url", "cookies", "values"),
    [
        (URL, [], {}),
        (URL, COOKIE_VALUES, {"Policy": "P", "Signature": "S", "Key-Pair-Id": "K"}),
        (f"{URL}?Expires=1&Signature=T&Key-Pair-Id=L", COOKIE_VALUES, {**URL_VALUES, "Expires": "1"}),
        (f"{URL}?Signature=T", COOKIE_VALUES, {"Signature": "T"}),  # any of them makes it a signed URL
        (f"{URL}?own=1", [("other", "x")], {}),
    ],
)
def test_a_signed_url_wins_over_cookies(url, cookies, values):
    assert signing_values(url, cookies) == values


GOOD = {"Expires": "1", "Signature": "AAAA", "Key-Pair-Id": "K1"}


@pytest.mark.parametrize(
    ("values", "verdict", "refusal"),
    [
        ({}, None, MISSING_KEY),
        ({"Expires": "1", "Signature": "AAAA"}, None, MISSING_KEY),
        ({**GOOD, "Key-Pair-Id": ""}, None, MISSING_KEY),  # "missing or empty"
        (GOOD, Verdict(True), None),
        (GOOD, Verdict(False, UNKNOWN_KEY), UNKNOWN_KEY_REFUSAL),
        (GOOD, Verdict(False, BAD_SIGNATURE), ACCESS_DENIED),
        (GOOD, Verdict(False, EXPIRED), ACCESS_DENIED),
        (GOOD, Verdict(False, RESOURCE_MISMATCH), ACCESS_DENIED),
        ({"Key-Pair-Id": "K1", "Expires": "1"}, Verdict(False, MISSING), ACCESS_DENIED),
        ({**GOOD, "Signature": "not base64!"}, Verdict(False, MALFORMED), MALFORMED_SIGNATURE),
        ({"Policy": "e30_", "Signature": "AAAA", "Key-Pair-Id": "K1"}, Verdict(False, MALFORMED), MALFORMED_POLICY),
        ({**GOOD, "Expires": "01"}, Verdict(False, MALFORMED), ACCESS_DENIED),
    ],
)
def test_what_a_refusal_says(values, verdict, refusal):
    assert refusal_for(values, verdict) == refusal


def test_the_missing_key_answer_is_cloudfronts_byte_for_byte():
    body = MISSING_KEY.body()
    expected = (
        b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>MissingKey</Code>'
        b"<Message>Missing Key-Pair-Id query parameter or cookie value</Message></Error>"
    )
    assert body == expected and len(body) == 146  # the Content-Length of a real answer


# --- the edge's decision with a stand-in CloudFront API ---------------------------------------------------------


@pytest.fixture(scope="module")
def keypairs():
    return [rsa.newkeys(1024) for _ in range(2)]


def test_the_public_key_pem_is_what_cloudfront_reads(keypairs):
    public, _ = keypairs[0]
    pem = public_key_pem(public)
    assert pem.startswith("-----BEGIN PUBLIC KEY-----") and load_public_key(pem) == public


DOMAIN = "d111111abcdef8.cloudfront.net"


class FakeCloudFront:
    """GetDistributionConfig, GetKeyGroup and GetPublicKey over dicts; counts the config reads."""

    def __init__(self, config: dict, groups: dict[str, list[str]], keys: dict[str, str]) -> None:
        self.config, self.groups, self.keys, self.config_reads = config, groups, keys, 0

    def get_distribution(self, Id: str) -> dict:
        return {"Distribution": {"Id": Id, "DomainName": DOMAIN}}

    def get_distribution_config(self, Id: str) -> dict:
        self.config_reads += 1
        return {"DistributionConfig": self.config}

    def get_key_group(self, Id: str) -> dict:
        return {"KeyGroup": {"KeyGroupConfig": {"Name": Id, "Items": list(self.groups[Id])}}}

    def get_public_key(self, Id: str) -> dict:
        return {"PublicKey": {"PublicKeyConfig": {"EncodedKey": self.keys[Id]}}}


NOW = 1_800_000_000


def _signed(keypair, key_id: str, path: str) -> str:
    pem = keypair[1].save_pkcs1().decode("ascii")
    return sign_canned_url(f"http://edge{path}", SigningKey(key_id, pem), NOW + 60)


def test_a_key_added_to_the_group_is_read_again_at_once(keypairs):
    first, second = keypairs
    api = FakeCloudFront(
        _config(("public/*", "public")),
        {"KG1": ["K1"]},
        {"K1": public_key_pem(first[0]), "K2": public_key_pem(second[0])},
    )
    edge = LocalEdge(api, "E1", "http://127.0.0.1:1", config_ttl_s=3600, clock=lambda: NOW)
    assert edge.decide("http://edge/public/a.ts", "/public/a.ts", [], "127.0.0.1") is None
    assert edge.decide("http://edge/signed/a.ts", "/signed/a.ts", [], "127.0.0.1") == MISSING_KEY
    assert edge.decide(_signed(first, "K1", "/signed/a.ts"), "/signed/a.ts", [], "127.0.0.1") is None
    assert api.config_reads == 1  # cached within config_ttl_s
    api.groups["KG1"].append("K2")  # a key added to the group after the edge read it
    assert edge.decide(_signed(second, "K2", "/signed/a.ts"), "/signed/a.ts", [], "127.0.0.1") is None
    assert api.config_reads == 2  # the miss read the config again
    outsider = _signed(second, "K3", "/signed/a.ts")
    assert edge.decide(outsider, "/signed/a.ts", [], "127.0.0.1") == UNKNOWN_KEY_REFUSAL


def test_the_config_is_read_again_after_its_time(keypairs):
    clock = [NOW]
    api = FakeCloudFront(_config(), {"KG1": []}, {})
    edge = LocalEdge(api, "E1", "http://127.0.0.1:1", config_ttl_s=5, clock=lambda: clock[0])
    assert edge.decide("http://edge/public/a.ts", "/public/a.ts", [], "127.0.0.1") == MISSING_KEY
    api.config = _config(("public/*", "public"))  # the distribution changed: public/* no longer signed
    assert edge.decide("http://edge/public/a.ts", "/public/a.ts", [], "127.0.0.1") == MISSING_KEY  # still cached
    clock[0] += 5
    assert edge.decide("http://edge/public/a.ts", "/public/a.ts", [], "127.0.0.1") is None


def test_the_data_plane_url_is_the_emulators_http_endpoint():
    with pytest.raises(ValueError):
        LocalEdge(FakeCloudFront(_config(), {}, {}), "E1", "ftp://127.0.0.1:1")


class _Recorder(BaseHTTPRequestHandler):
    """The emulator's data plane, standing in: records what reaches it, answers a small object."""

    seen: ClassVar[list[dict]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, "host": self.headers["Host"], "cookie": self.headers.get("Cookie")})
        self.send_response(200)
        self.send_header("Content-Type", "video/MP2T")
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"TS!!")


@pytest.fixture
def relayed():
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    _Recorder.seen = []
    api = FakeCloudFront(_config(("public/*", "public")), {"KG1": []}, {})
    edge = LocalEdge(api, "E1", f"http://127.0.0.1:{upstream.server_address[1]}").start()
    yield edge, _Recorder.seen
    edge.stop()
    upstream.shutdown()
    upstream.server_close()


def test_what_passes_reaches_the_data_plane_without_cloudfronts_own_values(relayed):
    edge, seen = relayed
    answer = requests.get(
        f"{edge.url}/public/a.ts?rendition=720p&Expires=1&Signature=s&Key-Pair-Id=K1",
        cookies={"CloudFront-Policy": "p", "session": "abc"},
        timeout=10,
    )
    assert (answer.status_code, answer.content, answer.headers["Content-Type"]) == (200, b"TS!!", "video/MP2T")
    # The viewer's own parameter and cookie go on; the Host is the distribution's domain, as the emulator routes it.
    assert seen == [{"path": "/public/a.ts?rendition=720p", "host": DOMAIN, "cookie": "session=abc"}]


def test_requests_beyond_cloudfronts_sizes_are_refused(relayed):
    edge, seen = relayed
    assert requests.get(f"{edge.url}/public/{'a' * 8200}", timeout=10).status_code == 414
    assert requests.get(f"{edge.url}/public/a.ts", headers={"X-Big": "b" * 20_500}, timeout=10).status_code == 400
    assert requests.get(f"{edge.url}/public/a.ts", headers={"Host": "bad host"}, timeout=10).status_code == 400
    assert requests.post(f"{edge.url}/public/a.ts", timeout=10).status_code == 501
    assert seen == []
