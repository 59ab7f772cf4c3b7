"""The "mux" profile driven by Mux's official Python SDK (mux-python 5.1.2, pinned in the dev extras).

The SDK deserialises every answer into its models (and checks enums such as the asset
status), so a simulator that drifts from Mux's shapes fails here. Also the documented
behaviours: the list newest first with cursor paging, and the profile's default pacing
(creates 1/s sustained with a burst, other requests 5/s, in separate buckets), and the signing keys a
signed playback id's tokens are checked against.
"""

from __future__ import annotations

import base64
import json
import time

import jwt
import mux_python
import pytest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from mux_python.exceptions import ApiException, NotFoundException, UnauthorizedException

from tests.sim.support import wait_for

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")  # the sim's 1024 bits

TOKEN_ID, TOKEN_SECRET = "mux-sdk-id", "mux-sdk-secret"


@pytest.fixture
def assets(launch):
    """start(**config) -> (sim, mux_python.AssetsApi) authenticated with the simulator's token pair."""

    def start(**config):
        sim = launch("mux", token_id=TOKEN_ID, token_secret=TOKEN_SECRET, **config)
        return sim, _api(sim.url, TOKEN_ID, TOKEN_SECRET)

    return start


def _api(url: str, token_id: str, token_secret: str) -> mux_python.AssetsApi:
    configuration = mux_python.Configuration(host=url)
    configuration.username, configuration.password = token_id, token_secret
    return mux_python.AssetsApi(mux_python.ApiClient(configuration))


def _create(api: mux_python.AssetsApi, url: str, ref: str = "lib/1") -> mux_python.Asset:
    request = mux_python.CreateAssetRequest(
        inputs=[mux_python.InputSettings(url=url)],
        playback_policies=[mux_python.PlaybackPolicy.PUBLIC],
        passthrough=ref,
        meta=mux_python.AssetMetadata(external_id=f"vm-{ref}"),
    )
    return api.create_asset(request).data


def test_sdk_creates_gets_and_lists_assets(assets):
    sim, api = assets(processing_delay_s=0.2)
    asset = _create(api, "https://media.example.com/a.mp4?duration=12.5", ref="lib/42")
    assert asset.status == "preparing" and asset.passthrough == "lib/42" and asset.meta.external_id == "vm-lib/42"
    assert asset.playback_ids[0].policy == "public"
    assert wait_for(lambda: api.get_asset(asset.id).data.status == "ready", timeout=3)
    ready = api.get_asset(asset.id).data
    assert ready.duration == 12.5 and ready.playback_ids == asset.playback_ids
    listed = api.list_assets(limit=10)
    assert [a.id for a in listed.data] == [asset.id] and listed.next_cursor is None

    broken = _create(api, "https://media.example.com/corrupt.mp4", ref="bad")
    assert wait_for(lambda: api.get_asset(broken.id).data.status == "errored", timeout=3)
    assert api.get_asset(broken.id).data.errors.type == "invalid_input"
    with pytest.raises(NotFoundException):
        api.get_asset("missing")
    with pytest.raises(UnauthorizedException):
        _api(sim.url, TOKEN_ID, "wrong").list_assets()


def test_sdk_pages_the_list_newest_first_by_cursor(assets):
    _sim, api = assets()
    made = [_create(api, f"https://media.example.com/{i}.mp4", ref=f"p{i}").id for i in range(5)]
    seen, cursor, pages = [], None, 0
    while pages <= len(made):  # bounded: a cursor that fails to advance would loop forever
        page = api.list_assets(limit=2, **({"cursor": cursor} if cursor else {}))
        seen += [a.id for a in page.data]
        pages, cursor = pages + 1, page.next_cursor
        if cursor is None:
            break
    assert seen == made[::-1] and pages == 3
    with pytest.raises(ApiException) as refused:
        api.list_assets(limit=101)  # "limit" at most 100
    assert refused.value.status == 400


def _until_throttled(call, most: int) -> tuple[int, float, ApiException]:
    """Call until a 429 (at most `most` times): how many passed, in how long, and the 429."""
    started, passed = time.monotonic(), 0
    for _ in range(most):
        try:
            call(passed)
        except ApiException as exc:
            assert exc.status == 429, exc
            return passed, time.monotonic() - started, exc
        passed += 1
    raise AssertionError(f"no 429 in {most} calls")


def test_mux_paces_creates_at_one_per_second_and_other_requests_at_five_by_default(assets):
    sim, api = assets(rate=None, burst=None, read_rate=None, read_burst=None)
    limits = {k: sim.config_dict()[k] for k in ("rate", "burst", "read_rate", "read_burst")}
    assert limits == {"rate": 1.0, "burst": 10, "read_rate": 5.0, "read_burst": 10}
    made = []
    passed, took, throttled = _until_throttled(
        lambda i: made.append(_create(api, f"https://media.example.com/{i}.mp4", ref=f"r{i}").id), 30
    )
    # The burst of 10, and what 1/s earns meanwhile; a machine slow enough to earn one more still passes.
    assert 10 <= passed <= 10 + int(took * 1.0) + 1
    assert not any(h.lower().startswith(("retry-after", "x-ratelimit")) for h in throttled.headers)
    # Reads draw from their own bucket: the creates' being empty does not stop them, and a burst goes at once.
    passed, took, _ = _until_throttled(lambda i: api.get_asset(made[i % len(made)]), 60)
    assert 10 <= passed <= 10 + int(took * 5.0) + 1
    stats = sim.stats()
    assert (stats["throttled"], stats["read_throttled"], stats["videos"]) == (1, 1, len(made))


# --- what a create carries, held by the simulator as Mux holds it ---------------------------------

FULL_ROW = AssetMessage(
    "lib/full",
    "https://media.example.com/full.mp4?duration=20",
    title="A title",
    description="Mux has no field for this",
    tags=("a",),
    privacy="private",
    options={
        "mux": {"video_quality": "plus", "max_resolution_tier": "2160p", "static_renditions": ["highest"], "test": True}
    },
)


def test_sdk_reads_back_what_our_create_carried_each_in_muxs_own_field(assets):
    sim, api = assets(processing_delay_s=0.2)
    mux = build("mux", sim.url, lambda: json.dumps({"token_id": TOKEN_ID, "token_secret": TOKEN_SECRET}))
    mux.http.session.trust_env = False
    outcome = mux.create(AssetRef(FULL_ROW.asset_id, FULL_ROW.title, 0, FULL_ROW), FULL_ROW.source_url)
    assert "description: not carried by mux (kept in the ledger)" in outcome.notes
    assert wait_for(lambda: api.get_asset(outcome.remote_id).data.status == "ready", timeout=3)
    held = api.get_asset(outcome.remote_id).data
    assert [p.policy for p in held.playback_ids] == ["signed"]  # a private row: a token is needed to play
    assert (held.meta.title, held.passthrough) == ("A title", "lib/full")
    assert (held.video_quality, held.max_resolution_tier, held.test) == ("plus", "2160p", True)
    assert [(f.name, f.resolution, f.status) for f in held.static_renditions.files] == [
        ("highest.mp4", "highest", "ready")
    ]
    assert mux.poll(FULL_ROW.asset_id, outcome.remote_id).video.privacy == "signed"  # our reader agrees


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("video_quality", "ultra"),
        ("max_resolution_tier", "4k"),
        ("test", "yes"),
        ("static_renditions", [{"resolution": "8k"}]),
        ("meta", {"title": "x" * 511 + "🎬"}),  # 513 UTF-16 units: over "Max 512 code points"
        ("playback_policies", ["private"]),
    ],
)
def test_mux_refuses_what_its_api_refuses(assets, web, field, value):
    sim, _ = assets()
    body = {"inputs": [{"url": "https://media.example.com/a.mp4"}], field: value}
    answer = web.post(f"{sim.url}/video/v1/assets", json=body, auth=(TOKEN_ID, TOKEN_SECRET))
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "invalid_parameters", answer.text
    assert field.split("_")[0] in answer.json()["error"]["messages"][0]


def test_mux_refuses_static_renditions_with_the_deprecated_mp4_support_beside_them(assets, web):
    sim, _ = assets()
    body = {
        "inputs": [{"url": "https://media.example.com/a.mp4"}],
        "static_renditions": [{"resolution": "highest"}],
        "mp4_support": "capped-1080p",
    }
    answer = web.post(f"{sim.url}/video/v1/assets", json=body, auth=(TOKEN_ID, TOKEN_SECRET))
    assert answer.status_code == 400 and "may not both be set" in answer.text


# --- signing keys and signed playback (mux_signing.py) ---------------------------------------------


def test_sdk_makes_lists_reads_and_deletes_signing_keys_and_a_token_of_one_plays_a_signed_id(assets, web):
    sim, api = assets()
    keys = mux_python.SigningKeysApi(api.api_client)
    made = keys.create_signing_key().data
    pem = base64.b64decode(made.private_key)  # "a Base64 encoded private key", shown this once
    assert pem.startswith(b"-----BEGIN RSA PRIVATE KEY-----") and made.created_at.isdigit()
    assert keys.get_signing_key(made.id).data.private_key is None
    older = mux_python.URLSigningKeysApi(api.api_client).create_url_signing_key().data  # /video/v1/signing-keys
    assert [k.id for k in keys.list_signing_keys().data] == [made.id, older.id]
    assert [k.id for k in keys.list_signing_keys(limit=1, page=2).data] == [older.id]
    assert all(k.private_key is None for k in keys.list_signing_keys().data)

    request = mux_python.CreateAssetRequest(
        inputs=[mux_python.InputSettings(url="https://media.example.com/s.mp4?duration=8")],
        playback_policies=[mux_python.PlaybackPolicy.SIGNED],
    )
    asset = api.create_asset(request).data
    assert wait_for(lambda: api.get_asset(asset.id).data.status == "ready", timeout=3)
    pid = asset.playback_ids[0].id
    claims = {"sub": pid, "aud": "v", "exp": int(time.time()) + 60}
    token = jwt.encode(claims, pem, "RS256", {"kid": made.id})
    hls = f"{sim.url}/_play/mux/{pid}.m3u8"
    assert web.get(f"{hls}?token={token}").status_code == 200 and web.get(hls).status_code == 403

    keys.delete_signing_key(made.id)
    with pytest.raises(NotFoundException):
        keys.get_signing_key(made.id)
    assert web.get(f"{hls}?token={token}").status_code == 403  # its key is gone
    assert [k.id for k in keys.list_signing_keys().data] == [older.id]
