"""The simulators' playback: each profile's ready video object points at media on the simulator itself,
which serves a valid HLS master (a ladder with RESOLUTION), media playlists whose EXTINF durations add
up to the reported duration, a thumbnail and a player page; and the knobs that plant what verify must
catch (a wrong duration, a missing manifest, a lower resolution). Read through our own adapters."""

from __future__ import annotations

import time

import pytest
import requests
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator_cli.cutover import playback_links
from migrator_cli.hls import parse_master, parse_media

from infra.accounts import account

PROFILES = ("generic", "mux", "cloudflare", "apivideo")


def ready_video(launch, profile: str, source: str, **config):
    acct = account(profile)
    sim = launch(profile, **acct.sim, **config)
    client = build(profile, sim.url, lambda: acct.credentials)
    public = AssetMessage("lib/a", source, title="A", privacy="public")  # the stack's default is signed
    made = client.create(AssetRef("lib/a", "A", details=public), source)
    assert made.remote_id, made
    deadline = time.time() + 5
    while time.time() < deadline:
        video = client.poll("lib/a", made.remote_id).video
        if video is not None and video.target is not None:
            return sim, video
        time.sleep(0.05)
    raise AssertionError("never ready")


def links(sim, profile, video):
    hosts = dict.fromkeys(("hls", "thumbnail", "player"), f"{sim.url}/_play/mux")
    return playback_links(profile, video.playback, hosts)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_ready_video_plays_from_the_simulator(launch, profile):
    sim, video = ready_video(launch, profile, "https://media.example.com/a.mp4?duration=20")
    urls = links(sim, profile, video)
    assert all(url and url.startswith(sim.url + "/_play/") for url in urls.values()), urls
    master = requests.get(urls["hls"], timeout=5)
    assert master.status_code == 200 and master.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    parsed = parse_master(master.text)
    assert [(v.width, v.height) for v in parsed.variants] == [(640, 360), (854, 480), (1280, 720), (1920, 1080)]
    media = requests.get(requests.compat.urljoin(urls["hls"], parsed.top().uri), timeout=5)
    assert parse_media(media.text).duration_s == pytest.approx(20.0) == video.duration_s
    assert requests.get(urls["thumbnail"], timeout=5).headers["Content-Type"] == "image/jpeg"
    assert requests.get(urls["player"], timeout=5).status_code == 200
    assert (video.playback["width"], video.playback["height"]) == (1920, 1080)


def test_the_knobs_plant_a_missing_manifest_a_lower_resolution_and_a_longer_playlist(launch):
    sim, video = ready_video(launch, "cloudflare", "https://m.example/b.mp4?duration=9&manifest=missing")
    assert requests.get(links(sim, "cloudflare", video)["hls"], timeout=5).status_code == 404

    sim, video = ready_video(launch, "apivideo", "https://m.example/c.mp4?duration=9&max_height=720&manifest_drift=4")
    hls = links(sim, "apivideo", video)["hls"]
    top = parse_master(requests.get(hls, timeout=5).text).top()
    assert (top.width, top.height) == (1280, 720)
    assert video.playback["height"] == 1080  # the source, as the provider read it
    media = requests.get(requests.compat.urljoin(hls, top.uri), timeout=5).text
    assert parse_media(media).duration_s == pytest.approx(13.0) and video.duration_s == 9


def test_signed_playback_needs_a_token_and_unready_videos_serve_nothing(launch):
    acct = account("mux")
    sim = launch("mux", **acct.sim, processing_delay_s=30)
    client = build("mux", sim.url, lambda: acct.credentials)
    made = client.create(AssetRef("lib/s"), "https://m.example/s.mp4")
    asset = requests.get(
        f"{sim.url}/video/v1/assets/{made.remote_id}", auth=(acct.sim["token_id"], acct.sim["token_secret"]), timeout=5
    )
    pid = asset.json()["data"]["playback_ids"][0]["id"]
    assert requests.get(f"{sim.url}/_play/mux/{pid}.m3u8", timeout=5).status_code == 404  # still preparing
    assert requests.get(f"{sim.url}/_play/mux/nosuchid.m3u8", timeout=5).status_code == 404

    sim, video = ready_video(launch, "cloudflare", "https://m.example/t.mp4")
    # A video made with requireSignedURLs: its URLs answer 403 without a token.
    with sim._lock:
        stored = sim._store.videos[video.remote_id]
        stored.request["requireSignedURLs"] = True
    hls = links(sim, "cloudflare", video)["hls"]
    assert requests.get(hls, timeout=5).status_code == 403
    # Stream takes its token in place of the uid, never from the query (test_sdk_cloudflare: signed playback).
    assert requests.get(hls + "?token=t", timeout=5).status_code == 404
