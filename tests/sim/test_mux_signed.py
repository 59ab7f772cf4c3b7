"""Mux as a target, signed playback (migrator verify): the "mux" simulator makes URL signing keys and keeps
their public halves only, and its stream.mux.com plays a signed playback id to a token it can verify and to
nothing else; MuxProvider makes the key and signs its own manifest URL, and verify's Checker follows the
signed manifest to its top rendition. Bad tokens are made with PyJWT + cryptography (a second implementation)."""

from __future__ import annotations

import base64
import socket
import time

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa
from migrator.messages import AssetMessage
from migrator.playback_tokens import SigningKey
from migrator.providers import AssetRef, SigningUnavailable, build
from migrator.providers.mux import stream_base
from migrator_cli.hls import parse_master, parse_media
from migrator_cli.verify import Checker, Fetched, Pace, Tolerance

from infra.accounts import account
from infra.sim.platforms.mux_signing import KEYS
from tests.sim.support import wait_for

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")  # the sim's 1024 bits


class Keys:
    """migrator.providers.PlaybackKeys in memory: the key made through the provider once, then kept."""

    def __init__(self, provider):
        self.provider, self.made = provider, []

    def mux(self) -> SigningKey:
        if not self.made:
            self.made.append(self.provider.create_signing_key())
        return self.made[0]


def signed_video(launch, **config):
    """A simulator, our provider on it, and a ready asset made from a private row (signed playback only)."""
    acct = account("mux")
    sim = launch("mux", **acct.sim, **config)
    provider = build("mux", sim.url, lambda: acct.credentials)
    provider.http.session.trust_env = False
    row = AssetMessage("lib/s", "https://m.example/s.mp4?duration=20", title="S", privacy="private")
    made = provider.create(AssetRef(row.asset_id, row.title, details=row), row.source_url)
    assert wait_for(lambda: (provider.poll(row.asset_id, made.remote_id).video or row).target is not None, timeout=5)
    video = provider.poll(row.asset_id, made.remote_id).video
    assert video.playback["policy"] == "signed"
    return sim, provider, {**video.playback, "hls": f"{sim.url}/_play/mux/{video.playback['playback_id']}.m3u8"}


def test_a_signing_key_is_made_through_the_api_and_the_simulator_keeps_only_its_public_half(launch):
    sim, provider, _ = signed_video(launch)
    key = provider.create_signing_key()
    assert key.private_key_pem.startswith("-----BEGIN RSA PRIVATE KEY-----")  # the base64 PEM, decoded
    with sim._lock:
        held = dict(sim._store.account[KEYS])
    assert list(held) == [key.key_id] and "PRIVATE" not in held[key.key_id]["public_pem"]


def test_a_signed_manifest_and_its_renditions_play_with_our_token(launch, web):
    sim, provider, playback = signed_video(launch)
    keys = Keys(provider)
    signed = provider.signed_playback(playback, 600, keys)
    pid = playback["playback_id"]
    assert signed.manifest_url.startswith(f"{sim.url}/_play/mux/{pid}.m3u8?token=") and signed.query == ()
    claims = jwt.decode(signed.manifest_url.split("token=")[1], options={"verify_signature": False})
    assert claims["sub"] == pid and claims["aud"] == "v" and time.time() + 590 < claims["exp"] <= time.time() + 600
    master = web.get(signed.manifest_url)
    assert master.status_code == 200, master.text
    top = parse_master(master.text).top()
    rendition = web.get(requests.compat.urljoin(master.url, top.uri))  # as given: it carries its own token
    assert rendition.status_code == 200 and parse_media(rendition.text).duration_s == pytest.approx(20)
    assert web.get(f"{sim.url}/_play/mux/{pid}.m3u8").status_code == 403
    assert web.get(requests.compat.urljoin(master.url, top.uri.split("?")[0])).status_code == 403


def _forged(key: SigningKey, pem: str | None = None, **claims) -> str:
    private = pem or key.private_key_pem
    return jwt.encode({"aud": "v", "exp": int(time.time()) + 600, **claims}, private, "RS256", {"kid": key.key_id})


def test_a_token_the_simulator_cannot_verify_is_refused(launch, web):
    sim, provider, playback = signed_video(launch)
    keys = Keys(provider)
    key, pid = keys.mux(), playback["playback_id"]
    url = f"{sim.url}/_play/mux/{pid}.m3u8?token="
    other = crypto_rsa.generate_private_key(public_exponent=65537, key_size=2048)
    foreign = other.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    refused = {
        "another playback id": _forged(key, sub="someoneelse"),
        "the thumbnail audience": _forged(key, sub=pid, aud="t"),
        "expired": _forged(key, sub=pid, exp=int(time.time()) - 5),
        "a key it never issued": _forged(key, pem=foreign, sub=pid),
        "not a JWT": "garbage",
    }
    for why, token in refused.items():
        assert web.get(url + token).status_code == 403, why
    assert web.get(url + _forged(key, sub=pid)).status_code == 200
    # A thumbnail of a signed playback id needs audience "t".
    assert web.get(f"{sim.url}/_play/mux/{pid}/thumbnail.jpg?token={_forged(key, sub=pid, aud='t')}").ok
    assert web.get(f"{sim.url}/_play/mux/{pid}/thumbnail.jpg?token={_forged(key, sub=pid)}").status_code == 403
    # A key deleted at Mux signs nothing any more.
    acct_auth = (sim.config_dict()["token_id"], sim.config_dict()["token_secret"])
    assert web.delete(f"{sim.url}/system/v1/signing-keys/{key.key_id}", auth=acct_auth).status_code == 204
    assert web.get(url + _forged(key, sub=pid)).status_code == 403
    with sim._lock:
        assert sim._store.account[KEYS] == {}


def test_verify_checks_a_signed_video_through_its_own_token(launch, web):
    sim, provider, playback = signed_video(launch)

    def fetch(url: str) -> Fetched:
        answer = web.get(url)
        return Fetched(answer.status_code, answer.content, answer.url)

    checker = Checker(
        "mux", Tolerance(), Pace(0), fetch, {}, lambda p: provider.signed_playback(p, 600, Keys(provider))
    )
    item = {
        "asset_id": "lib/s",
        "state": "ready",
        "playback_info": playback,
        "duration_s": 20,
        "provider_duration_s": 20,
    }
    verdict = checker(item)
    assert verdict.status == "passed", verdict
    log = [e for e in sim.requests_log(ops=None) if e["op"] == "keys_create"]
    assert len(log) == 1 and log[0]["status"] == 201


def test_the_stream_host_the_playback_info_names_is_kept_and_drm_or_no_key_says_why(launch):
    assert stream_base({"hls": "https://video.example.com/abc.m3u8"}) == "https://video.example.com"
    assert stream_base({"hls": "http://127.0.0.1:9/_play/mux/abc.m3u8"}) == "http://127.0.0.1:9/_play/mux"
    assert stream_base({}) == stream_base({"hls": "javascript:alert(1)"}) == "https://stream.mux.com"
    _sim, provider, playback = signed_video(launch)
    with pytest.raises(SigningUnavailable, match="DRM"):
        provider.signed_playback({"policy": "drm", "playback_ids": [{"id": "d1", "policy": "drm"}]}, 60, None)
    with pytest.raises(SigningUnavailable, match="no playback signing key"):
        provider.signed_playback(playback, 60, None)


def test_a_signing_key_refused_at_mux_is_unavailable_and_names_no_secret(launch):
    acct = account("mux")
    sim = launch("mux", **acct.sim)
    provider = build("mux", sim.url, lambda: acct.credentials)
    provider.http.session.trust_env = False
    sim.patch_config({"token_secret": "rotated"})
    with pytest.raises(SigningUnavailable) as refused:
        provider.create_signing_key()
    assert "HTTP 401" in str(refused.value) and acct.sim["token_secret"] not in str(refused.value)
    with sim._lock:
        assert KEYS not in sim._store.account  # nothing was made


def test_a_deleted_key_answers_204_with_nothing_after_its_headers(launch, web):
    """A 204 carries no body (RFC 9110, 15.3.5): bytes after it would be read as the next answer's start."""
    acct = account("mux")
    sim = launch("mux", **acct.sim)
    auth = (acct.sim["token_id"], acct.sim["token_secret"])
    kid = web.post(f"{sim.url}/system/v1/signing-keys", auth=auth).json()["data"]["id"]
    host, port = sim.url.removeprefix("http://").split(":")
    pair = base64.b64encode(":".join(auth).encode()).decode()
    request = f"DELETE /system/v1/signing-keys/{kid} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Basic {pair}\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=5) as wire:
        wire.sendall(request.encode())
        time.sleep(0.3)  # the whole answer, headers and anything after them
        wire.settimeout(0.5)
        answer = wire.recv(65536)
    assert answer.startswith(b"HTTP/1.1 204") and answer.endswith(b"\r\n\r\n"), answer
    assert web.get(f"{sim.url}/system/v1/signing-keys", auth=auth).json() == {"data": []}
