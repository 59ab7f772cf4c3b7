"""Playback facts: what each provider says of how a ready video plays, read on every path that settles
it (the webhook's body, reconcile's poll, the uploader's adoption) and kept by settle as `playback`.

The bodies are the providers' documented examples (Mux's asset object, Cloudflare's video object,
api.video's video and status objects), trimmed to the fields read.
"""

from __future__ import annotations

import json

import pytest
from migrator.ledger.settling import _settle_request
from migrator.providers.facts import Video, playback_of, playback_url
from migrator.settle import settle_reported
from migrator.signatures import Scheme, sign
from migrator.states import State

from tests.unit.test_providers import API_SECRET, CF_SECRET, MUX_SECRET, NOW, provider

MUX_ASSET = {
    "id": "JZ2VmTvqUH3c4cKhJ02rMc5xQgUT013W6a",
    "status": "ready",
    "duration": 23.8,
    "passthrough": "library/intro",
    "playback_ids": [
        {"policy": "signed", "id": "sIgNeD00id00000000000000000000000000"},
        {"policy": "public", "id": "uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW"},
    ],
    "tracks": [
        {"type": "audio", "max_channels": 2},
        {"type": "video", "max_width": 1920, "max_height": 1080, "max_frame_rate": 29.97},
    ],
}
CF_UID = "ea95132c15732412d22c1476fa83f27a"
CF_HOST = "https://customer-m033z5x00ks6nunl.cloudflarestream.com"
CF_VIDEO = {
    "uid": CF_UID,
    "status": {"state": "ready"},
    "duration": 5.5,
    "meta": {"migration_ref": "library/intro"},
    "input": {"width": 1920, "height": 1080},
    "playback": {"hls": f"{CF_HOST}/{CF_UID}/manifest/video.m3u8", "dash": f"{CF_HOST}/{CF_UID}/manifest/video.mpd"},
    "preview": f"{CF_HOST}/{CF_UID}/watch",
    "thumbnail": f"{CF_HOST}/{CF_UID}/thumbnails/thumbnail.jpg",
    "requireSignedURLs": False,
}
AV_ID = "vi4k0jvEUuaTdRAEjQ4Jfrgz"
AV_VIDEO = {
    "videoId": AV_ID,
    "public": True,
    "assets": {
        "iframe": f'<iframe src="https://embed.api.video/vod/{AV_ID}" width="100%" height="100%" frameborder="0"'
        ' scrolling="no" allowfullscreen=""></iframe>',
        "player": f"https://embed.api.video/vod/{AV_ID}",
        "hls": f"https://vod.api.video/vod/{AV_ID}/hls/manifest.m3u8",
        "thumbnail": f"https://vod.api.video/vod/{AV_ID}/thumbnail.jpg",
        "mp4": f"https://vod.api.video/vod/{AV_ID}/mp4/source.mp4",
    },
}
AV_STATUS = {
    "ingest": {"status": "ingested"},
    "encoding": {
        "playable": True,
        "qualities": [{"type": "hls", "quality": "1080p", "status": "encoded"}],
        "metadata": {"width": 1920, "height": 1080, "duration": 60},
    },
}


def test_mux_reads_its_playback_ids_and_prefers_the_public_one():
    mux, _ = provider("mux", (200, {"data": MUX_ASSET}), secret=MUX_SECRET)
    video = mux.poll("library/intro", MUX_ASSET["id"]).video
    assert video.target is State.READY
    assert video.playback == {
        "policy": "public",
        "playback_id": "uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW",
        "playback_ids": [
            {"id": "sIgNeD00id00000000000000000000000000", "policy": "signed"},
            {"id": "uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW", "policy": "public"},
        ],
        "width": 1920,
        "height": 1080,
    }


def test_mux_urls_follow_its_documented_hosts_or_the_ones_given():
    from migrator.providers.mux import playback_urls

    assert playback_urls("abc") == {
        "hls": "https://stream.mux.com/abc.m3u8",
        "thumbnail": "https://image.mux.com/abc/thumbnail.jpg",
        "player": "https://player.mux.com/abc",
    }
    assert (
        playback_urls("a/b", {"hls": "http://127.0.0.1:9/_media/mux/"})["hls"]
        == "http://127.0.0.1:9/_media/mux/a%2Fb.m3u8"
    )


def test_a_mux_asset_with_only_a_signed_id_says_it_needs_a_token():
    asset = {**MUX_ASSET, "playback_ids": [{"policy": "signed", "id": "sig"}]}
    mux, _ = provider("mux", (200, {"data": asset}), secret=MUX_SECRET)
    playback = mux.poll("x", asset["id"]).video.playback
    assert (playback["policy"], playback["playback_id"]) == ("signed", "sig")


def test_the_mux_webhook_carries_the_playback_too():
    mux, _ = provider("mux", secret=MUX_SECRET)
    body = json.dumps({"type": "video.asset.ready", "id": "evt-1", "data": MUX_ASSET}).encode()
    headers = sign(Scheme.MUX, body, "whsec", NOW)
    event = mux.read_webhook(body, headers, ["whsec"], NOW, 300)
    assert event.video.playback["playback_id"] == "uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW"


def test_cloudflare_reads_playback_preview_thumbnail_and_the_input_size():
    cf, _ = provider("cloudflare", (200, {"result": CF_VIDEO, "success": True}), secret=CF_SECRET)
    playback = cf.poll("library/intro", CF_UID).video.playback
    assert playback == {
        "policy": "public",
        "playback_id": CF_UID,
        "hls": f"{CF_HOST}/{CF_UID}/manifest/video.m3u8",
        "dash": f"{CF_HOST}/{CF_UID}/manifest/video.mpd",
        "preview": f"{CF_HOST}/{CF_UID}/watch",
        "player": f"{CF_HOST}/{CF_UID}/watch",
        "thumbnail": f"{CF_HOST}/{CF_UID}/thumbnails/thumbnail.jpg",
        "width": 1920,
        "height": 1080,
    }
    body = json.dumps({**CF_VIDEO, "requireSignedURLs": True}).encode()
    event = cf.read_webhook(body, sign(Scheme.CLOUDFLARE, body, "s", NOW), ["s"], NOW, 300)
    assert event.video.playback["policy"] == "signed"


def test_apivideo_reads_the_video_object_after_a_playable_status():
    av, session = provider("apivideo", (200, AV_STATUS), (200, AV_VIDEO), secret=API_SECRET)
    video = av.poll("library/intro", AV_ID).video
    assert [r.path_url for r in session.sent] == [f"/videos/{AV_ID}/status", f"/videos/{AV_ID}"]
    assert video.target is State.READY and video.duration_s == 60
    assert video.playback == {
        "policy": "public",
        "playback_id": AV_ID,
        "hls": f"https://vod.api.video/vod/{AV_ID}/hls/manifest.m3u8",
        "player": f"https://embed.api.video/vod/{AV_ID}",
        "embed": f"https://embed.api.video/vod/{AV_ID}",
        "thumbnail": f"https://vod.api.video/vod/{AV_ID}/thumbnail.jpg",
        "mp4": f"https://vod.api.video/vod/{AV_ID}/mp4/source.mp4",
        "width": 1920,
        "height": 1080,
    }


def test_apivideo_private_videos_and_a_failed_second_read():
    av, _ = provider("apivideo", (200, AV_STATUS), (200, {**AV_VIDEO, "public": False}), secret=API_SECRET)
    assert av.poll("x", AV_ID).video.playback["policy"] == "private"
    av, _ = provider("apivideo", (200, AV_STATUS), (503, {}), secret=API_SECRET)
    video = av.poll("x", AV_ID).video
    assert video.target is State.READY and video.playback == {"width": 1920, "height": 1080}


def test_apivideo_reads_nothing_more_while_the_video_is_not_ready():
    status = {"ingest": {"status": "ingesting"}, "encoding": {"playable": False, "qualities": []}}
    av, session = provider("apivideo", (200, status), secret=API_SECRET)
    assert av.poll("x", AV_ID).video.target is None and len(session.sent) == 1


def test_the_generic_contract_may_carry_a_playback_object():
    body = {
        "id": "v1",
        "status": "ready",
        "playback": {"hls": "https://cdn.example/v1.m3u8", "width": 640, "height": 360},
    }
    generic, _ = provider("generic", (200, body))
    assert generic.poll("a", "v1").video.playback == {
        "policy": "public",
        "playback_id": "v1",
        "hls": "https://cdn.example/v1.m3u8",
        "width": 640,
        "height": 360,
    }


@pytest.mark.parametrize(
    "value",
    [
        "javascript:alert(1)",
        "https://x.example/a b",
        "https://x.example/\n",
        "ftp://x.example/a",
        "https:///path",
        "https://x.example/" + "a" * 3000,
        "https://exa\u00e9mple/",
        42,
        None,
        {"url": "https://x"},
    ],
)
def test_a_playback_url_that_no_player_could_open_is_dropped(value):
    assert playback_url(value) is None


def test_hostile_playback_facts_read_as_nothing_never_raise():
    assert playback_of(policy="everyone", playback_id=10**50, width=-1, height=10**400, hls="data:x") is None
    assert playback_of(width=1920, height=True) is None
    weird = {**CF_VIDEO, "playback": [], "input": "big", "preview": {"x": 1}, "thumbnail": 7}
    cf, _ = provider("cloudflare", (200, {"result": weird}), secret=CF_SECRET)
    assert cf.poll("a", CF_UID).video.playback == {"policy": "public", "playback_id": CF_UID}


class RecordingLedger:
    def __init__(self):
        self.calls = []

    def settle(self, *args, **kwargs):
        from migrator.ledger import WriteResult

        self.calls.append((args, kwargs))
        return WriteResult(True, {"asset_id": args[0], "state": "ready"})


def test_settling_a_reported_video_hands_its_playback_to_the_ledger():
    ledger = RecordingLedger()
    video = Video("v1", "a", State.READY, "ready", duration_s=3.0, playback={"hls": "https://x.example/v.m3u8"})
    assert settle_reported(ledger, "a", video, None, NOW, 0.5).won
    assert ledger.calls[0][1]["playback"] == {"hls": "https://x.example/v.m3u8"}


def test_the_settle_request_sets_playback_on_ready_only():
    playback = {"policy": "public", "hls": "https://x.example/v.m3u8", "width": 1280, "height": 720}
    ready = _settle_request("a", State.READY, "v1", NOW, 3.0, None, playback)
    names = ready["ExpressionAttributeNames"]
    assert "playback_info" in names.values()  # beside the create's `playback` (public or signed)
    placeholder = next(k for k, v in names.items() if v == "playback_info")
    value = next(
        v for k, v in ready["ExpressionAttributeValues"].items() if f"{placeholder} = {k}" in ready["UpdateExpression"]
    )
    assert value == {
        "M": {
            "policy": {"S": "public"},
            "hls": {"S": "https://x.example/v.m3u8"},
            "width": {"N": "1280"},
            "height": {"N": "720"},
        }
    }
    rejected = _settle_request("a", State.REJECTED, "v1", NOW, None, "provider: no", playback)
    assert "playback_info" not in rejected.get("ExpressionAttributeNames", {}).values()
