"""A private api.video video as a source: its links carry a private token good for one request, and a
session token (`avh`) makes them good for many (docs.api.video, "Private videos", "Private video session
tokens"). The "apivideo" simulator's delivery host enforces it, read through api-video 1.4.7 where the SDK
has the call (the video's assets) and over plain HTTP where it has none (vod.api.video is no API); then
migrator.sources.apivideo hands a private video's MP4 on inside a session, so a target that asks more than
once (Cloudflare Stream: HEAD, then range GETs) is served."""

from __future__ import annotations

import base64
import time

import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import VideosApi
from apivideo.configuration import Configuration
from migrator.sources import ResolutionKind, build, parse_ref

API_KEY = "apivideo-private-key"
PRIVATE = "vi00000000000000000000"  # library_private_every=2: videos 0, 2, 4... are private
PUBLIC = "vi00000000000000000001"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("apivideo", api_key=API_KEY, library_size=6, library_private_every=2, **config)
        header = "Basic " + base64.b64encode(f"{API_KEY}:".encode()).decode()
        api = VideosApi(ApiClient(Configuration(host=sim.url), header_name="Authorization", header_value=header))
        source = build("apivideo", lambda: {"api_key": API_KEY}, sim.url, patient=True, rate_per_s=0)
        source.http.session.trust_env = False
        return sim, api, source

    return start


def _session(web, mp4: str) -> str:
    answer = web.get(mp4.rsplit("/mp4/", 1)[0] + "/session")
    assert answer.status_code == 200, answer.text
    return answer.json()["session_token"]


def test_every_read_of_a_private_video_gives_a_fresh_private_token_in_each_link(library):
    _sim, api, _ = library()
    first, second = api.get(PRIVATE), api.get(PRIVATE)
    assert first["public"] is False and "/token/" in first.assets.mp4 and first.assets.mp4 != second.assets.mp4
    token = first.assets.mp4.split("/token/")[1].split("/")[0]
    assert first.assets.hls.endswith(f"/token/{token}/hls/manifest.m3u8") and first.assets.player.endswith(token)
    assert "/token/" not in api.get(PUBLIC).assets.mp4


def test_a_private_token_serves_one_request_and_a_session_many(library, web):
    sim, api, _ = library()
    once = api.get(PRIVATE).assets.mp4
    assert web.get(once, headers={"Range": "bytes=0-9"}).status_code == 206
    assert web.get(once).status_code == 404  # "you will get a 404 error"
    mp4 = api.get(PRIVATE).assets.mp4
    session = _session(web, mp4)
    assert web.get(mp4.rsplit("/mp4/", 1)[0] + "/session").status_code == 404  # the token is spent
    held = f"{mp4}&avh={session}"  # the link's own query holds the duration the simulator reads back
    head = web.head(held)
    assert head.status_code == 200 and int(head.headers["Content-Length"]) > 0
    assert [web.get(held, headers={"Range": "bytes=0-1023"}).status_code for _ in range(3)] == [206] * 3
    assert web.get(mp4).status_code == 404  # without the session, the spent token is refused
    forged_session = session[:-1] + ("1" if session.endswith("0") else "0")  # one character off, never the same
    assert web.get(f"{mp4}&avh={forged_session}").status_code == 404  # a forged session
    other = api.get(PRIVATE).assets.mp4
    assert web.get(f"{other}&avh={session}").status_code == 404  # another token's session
    forged = mp4.replace(mp4.split("/token/")[1].split("/")[0], "00000000-0000-0000-0000-000000000000")
    assert web.get(forged).status_code == 404
    stats = sim.stats()
    assert stats["media_served"] == 6 and stats["media_refused"] == 6


def test_a_session_ends_when_it_expires(library, web):
    _sim, api, _ = library(link_ttl_s=1)  # the simulator's stand-in for api.video's 24 hours
    mp4 = api.get(PRIVATE).assets.mp4
    held = f"{mp4}&avh={_session(web, mp4)}"
    assert web.get(held, headers={"Range": "bytes=0-9"}).status_code == 206
    time.sleep(2.1)
    assert web.get(held, headers={"Range": "bytes=0-9"}).status_code == 404


def test_resolve_hands_a_private_videos_mp4_on_inside_a_session_and_keeps_it_private(library, web):
    sim, _, source = library()
    resolved = source.resolve(parse_ref(f"apivideo://{PRIVATE}"))
    assert resolved.kind is ResolutionKind.READY and resolved.privacy == "private"
    assert "/token/" in resolved.url and "avh=" in resolved.url
    assert resolved.expires_at == pytest.approx(time.time() + 86_400, abs=60)  # "The session token TTL is 24 hours."
    assert web.head(resolved.url).status_code == 200  # what Cloudflare asks first
    assert [web.get(resolved.url, headers={"Range": "bytes=0-1023"}).status_code for _ in range(2)] == [206, 206]
    public = source.resolve(parse_ref(f"apivideo://{PUBLIC}"))
    assert public.privacy == "public" and "avh=" not in public.url
    assert sim.stats()["media_refused"] == 0


def test_cloudflare_fetches_a_private_video_through_the_session_and_not_through_the_bare_link(library, launch, web):
    """Stream's copy asks with HEAD, then a range GET: the bare private link is spent by the HEAD."""
    _sim, api, source = library()
    target = launch("cloudflare", check_source=True, processing_delay_s=0.1)

    def copy(link: str) -> str:
        answer = web.post(f"{target.url}/accounts/a/stream/copy", json={"input": link, "meta": {"name": "x"}})
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]["uid"]

    def state(uid: str) -> str:
        return web.get(f"{target.url}/accounts/a/stream/{uid}").json()["result"]["status"]["state"]

    held = copy(source.resolve(parse_ref(f"apivideo://{PRIVATE}")).url)
    bare = copy(api.get(PRIVATE).assets.mp4)
    deadline = time.time() + 5
    while time.time() < deadline and {state(held), state(bare)} & {"queued", "downloading", "inprogress"}:
        time.sleep(0.05)
    assert (state(held), state(bare)) == ("ready", "error")
    made = web.get(f"{target.url}/accounts/a/stream/{held}").json()["result"]
    assert made["duration"] == 30.25  # the library video's own, read back from the file it fetched
