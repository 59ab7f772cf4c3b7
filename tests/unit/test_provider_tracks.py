"""Each provider's text-track API against its documentation: the requests we build (paths, bodies, the
multipart file) and what we read from the documented answers. No network: the recording session of
test_providers answers with canned bodies."""

from __future__ import annotations

import json

import pytest
from migrator.captions import read_caption
from migrator.messages import AssetMessage, Track, track_key
from migrator.providers import AssetRef
from migrator.providers.facts import TrackUpload
from migrator.trackfetch import FetchPolicy
from migrator.tracks import TrackResult

from tests.track_files import SRT, VTT
from tests.unit.test_providers import API_SECRET, CF_SECRET, MUX_CREATED, MUX_SECRET, SOURCE, provider

ACCOUNT = "023e105f4ecef8ad9ca31a8372d0c353"


def upload(content: bytes, url: str = "https://captions.example.com/en.srt") -> TrackUpload:
    return TrackUpload(read_caption(content), url)


def multipart_file(request) -> tuple[str, bytes]:
    """(the `file` part's file name, its bytes) from a prepared multipart request."""
    boundary = request.headers["Content-Type"].split("boundary=")[1].encode()
    for part in request.body.split(b"--" + boundary):
        if b'name="file"' in part:
            head, _, content = part.partition(b"\r\n\r\n")
            name = head.split(b'filename="')[1].split(b'"')[0].decode()
            return name, content.removesuffix(b"\r\n")
    raise AssertionError("no file part")


# --- Mux ---------------------------------------------------------------------------------------------

TRACKS = (
    Track("https://captions.example.com/en.srt", "en", "captions", closed_captions=True, format="srt"),
    Track("https://captions.example.com/en-sub.vtt", "en", "subtitles"),
    Track("s3://bucket/fr.vtt", "fr"),  # needs a presigned URL: the worker's
    Track("vimeo://123/texttracks/4", "de"),  # a source reference: the worker's
    Track("https://10.0.0.8/internal.vtt", "es"),  # plainly internal: never handed on
    Track("http://captions.example.com/it.vtt", "it"),  # not https
    Track("https://captions.example.com/x.vtt", "x-klingon"),  # a tag Mux might refuse with the whole create
)


def test_mux_create_carries_the_tracks_it_can_fetch_as_text_inputs():
    mux, session = provider("mux", (201, MUX_CREATED), secret=MUX_SECRET)
    asset = AssetRef("lib/a", details=AssetMessage("lib/a", SOURCE, tracks=TRACKS))
    assert mux.create(asset, SOURCE).remote_id
    inputs = session.json()["inputs"]
    assert inputs[0] == {"url": SOURCE}
    # mux-python InputSettings: url, type, text_type, language_code, name, closed_captions, passthrough.
    assert inputs[1:] == [
        {
            "url": "https://captions.example.com/en.srt",
            "type": "text",
            "text_type": "subtitles",
            "language_code": "en",
            "name": "en",
            "closed_captions": True,
            "passthrough": "en.captions.",
        },
        {
            "url": "https://captions.example.com/en-sub.vtt",
            "type": "text",
            "text_type": "subtitles",
            "language_code": "en",
            "name": "en (subtitles)",  # names are unique among an asset's text tracks
            "closed_captions": False,
            "passthrough": "en.subtitles.",
        },
    ]
    assert [track_key(t) for t in mux.create_time_tracks(asset)] == ["en.captions.", "en.subtitles."]


def test_mux_create_without_tracks_has_the_video_alone_and_a_test_origin_counts_as_fetchable():
    mux, session = provider("mux", (201, MUX_CREATED), secret=MUX_SECRET)
    mux.create(AssetRef("lib/b"), SOURCE)
    assert session.json()["inputs"] == [{"url": SOURCE}]
    local = Track("http://127.0.0.1:8123/en.vtt", "en")
    asset = AssetRef("lib/c", details=AssetMessage("lib/c", SOURCE, tracks=(local,)))
    assert mux.create_time_tracks(asset) == []
    mux.track_policy = FetchPolicy(test_origins=frozenset({"http://127.0.0.1:8123"}))
    assert mux.create_time_tracks(asset) == [local]


# Shaped as mux-python's Track model (id, type, text_type, language_code, name, closed_captions, passthrough, status).
MUX_ASSET_WITH_TRACKS = {
    "data": {
        "id": "SqQnqz6s5MBuXGvJaUWdXuXM93J9Q2yv",
        "status": "ready",
        "tracks": [
            {"type": "video", "id": "v1", "max_width": 1920},
            {
                "type": "text",
                "id": "t1",
                "text_type": "subtitles",
                "language_code": "en",
                "name": "en",
                "passthrough": "en.captions.",
                "status": "ready",
            },
            {
                "type": "text",
                "id": "t2",
                "language_code": "fr",
                "passthrough": "fr.captions.",
                "status": "errored",
                "error": {"type": "invalid_input", "messages": ["The file is not a valid text track"]},
            },
            {"type": "text", "id": "t3", "language_code": "de", "passthrough": "de.captions.", "status": "preparing"},
        ],
    }
}


def test_mux_lists_an_assets_text_tracks_by_their_passthrough():
    mux, session = provider("mux", (200, MUX_ASSET_WITH_TRACKS), secret=MUX_SECRET)
    listed = mux.track_list("SqQnqz6s5MBuXGvJaUWdXuXM93J9Q2yv")
    assert (
        session.sent[0].method == "GET"
        and session.sent[0].path_url == "/video/v1/assets/SqQnqz6s5MBuXGvJaUWdXuXM93J9Q2yv"
    )
    assert listed.open_for_tracks and [(t.ref, t.status, t.remote_id) for t in listed.tracks] == [
        ("en.captions.", "ready", "t1"),
        ("fr.captions.", "errored", "t2"),
        ("de.captions.", "preparing", "t3"),
    ]
    assert listed.tracks[1].error == "provider: The file is not a valid text track"
    track = Track("u", "en")
    assert mux.track_matches(listed.tracks[0], track, "en.captions.") and not mux.track_matches(
        listed.tracks[0], track, "x"
    )


@pytest.mark.parametrize(
    ("status", "body", "gone", "open_"),
    [
        (200, {"data": {"id": "a", "status": "preparing"}}, None, False),
        (200, {"data": {"id": "a", "status": "errored"}}, "the asset errored at Mux", True),
        (404, {"error": {"type": "not_found"}}, "mux has no such video (HTTP 404)", True),
    ],
)
def test_mux_says_when_an_asset_takes_no_track_yet_or_never(status, body, gone, open_):
    mux, _ = provider("mux", (status, body), secret=MUX_SECRET)
    listed = mux.track_list("a")
    assert listed.video_gone == gone and listed.open_for_tracks is open_


def test_mux_adds_a_track_later_by_url_and_waits_for_it_to_be_ready():
    created = {"data": {"type": "text", "id": "t9", "status": "preparing", "passthrough": "en.captions."}}
    mux, session = provider("mux", (201, created), secret=MUX_SECRET)
    track = Track("s3://bucket/en.srt", "en", closed_captions=True)
    got = mux.attach_track(
        "asset1", track, upload(SRT, "https://bucket.s3.amazonaws.com/en.srt?X-Amz-Signature=x"), "English"
    )
    assert got.kind is TrackResult.SUBMITTED and got.remote_track_id == "t9"
    sent = session.sent[0]
    assert (sent.method, sent.path_url) == ("POST", "/video/v1/assets/asset1/tracks")
    assert session.json() == {
        "url": "https://bucket.s3.amazonaws.com/en.srt?X-Amz-Signature=x",
        "type": "text",
        "text_type": "subtitles",
        "language_code": "en",
        "name": "English",
        "closed_captions": True,
        "passthrough": "en.captions.",
    }


# --- Cloudflare Stream --------------------------------------------------------------------------------------


def test_cloudflare_puts_the_caption_as_a_multipart_webvtt_file_per_language():
    answer = {"result": {"language": "en", "label": "English"}, "success": True, "errors": [], "messages": []}
    cf, session = provider("cloudflare", (200, answer), secret=CF_SECRET)
    got = cf.attach_track("ea95132c15732412d22c1476fa83f27a", Track("u", "en"), upload(SRT), "English")
    assert got.kind is TrackResult.ATTACHED and got.remote_track_id == "en"
    sent = session.sent[0]
    assert sent.method == "PUT"
    assert sent.path_url == f"/client/v4/accounts/{ACCOUNT}/stream/ea95132c15732412d22c1476fa83f27a/captions/en"
    name, content = multipart_file(sent)
    assert name == "en.vtt" and content.startswith(b"WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello from SubRip")


def test_cloudflare_lists_captions_and_leaves_out_generated_ones():
    listed = {
        "result": [
            {"language": "en", "label": "English"},
            {"language": "de", "label": "Deutsch", "generated": True, "status": "ready"},
        ],
        "success": True,
    }
    cf, session = provider("cloudflare", (200, listed), secret=CF_SECRET)
    got = cf.track_list("uid1")
    assert session.sent[0].path_url == f"/client/v4/accounts/{ACCOUNT}/stream/uid1/captions"
    assert [(t.language, t.status) for t in got.tracks] == [("en", "ready")]
    assert cf.track_matches(got.tracks[0], Track("u", "EN"), "ignored")  # by language: one file per language


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (400, TrackResult.REFUSED, "provider: HTTP 400"),
        (404, TrackResult.VIDEO_GONE, "no such video"),
        (429, TrackResult.THROTTLED, None),
        (502, TrackResult.TRANSIENT, "provider: HTTP 502"),
    ],
)
def test_a_track_calls_failure_is_classified(status, kind, words):
    body = {"success": False, "errors": [{"code": 10004, "message": "bad"}]}
    cf, _ = provider("cloudflare", (status, body, {"retry-after": "30"}), secret=CF_SECRET)
    got = cf.attach_track("uid1", Track("u", "en"), upload(VTT), "English")
    assert got.kind is kind and (words is None or words in got.error)
    if kind is TrackResult.THROTTLED:
        assert got.retry_after == 30


# --- api.video --------------------------------------------------------------------------------------------------


def test_apivideo_posts_the_caption_as_a_multipart_vtt_file_and_reads_the_caption():
    # Documented: the Caption of POST /videos/{videoId}/captions/{language} (oas_apivideo.yaml).
    caption = {
        "uri": "/videos/vi4k0jvEUuaTdRAEjQ4Prklg/captions/en",
        "src": "https://cdn.api.video/vod/vi4k0jvEUuaTdRAEjQ4Prklg/captions/en.vtt",
        "srclang": "en",
        "languageName": "English",
        "default": False,
    }
    api, session = provider("apivideo", (200, caption), secret=API_SECRET)
    got = api.attach_track("vi4k0jvEUuaTdRAEjQ4Prklg", Track("u", "en"), upload(SRT), "English")
    assert got.kind is TrackResult.ATTACHED and got.remote_track_id == "/videos/vi4k0jvEUuaTdRAEjQ4Prklg/captions/en"
    sent = session.sent[0]
    assert (sent.method, sent.path_url) == ("POST", "/videos/vi4k0jvEUuaTdRAEjQ4Prklg/captions/en")
    name, content = multipart_file(sent)
    assert name == "en.vtt" and content.startswith(b"WEBVTT")


def test_apivideo_lists_captions_by_their_srclang():
    page = {
        "data": [{"uri": "/videos/v/captions/fr", "srclang": "fr", "languageName": "Français", "default": False}],
        "pagination": {"currentPage": 1},
    }
    api, session = provider("apivideo", (200, page), secret=API_SECRET)
    got = api.track_list("v")
    assert session.sent[0].path_url == "/videos/v/captions?pageSize=100"
    assert [(t.language, t.remote_id) for t in got.tracks] == [("fr", "/videos/v/captions/fr")]


def test_the_generic_contract_takes_no_tracks():
    generic, session = provider("generic")
    assert not generic.takes_tracks
    assert generic.attach_track("v", Track("u", "en"), upload(VTT), "en").kind is TrackResult.REFUSED
    assert session.sent == []


def test_answers_of_the_wrong_shape_read_as_nothing_never_an_exception():
    for name, secret in (("mux", MUX_SECRET), ("cloudflare", CF_SECRET), ("apivideo", API_SECRET)):
        for body in ([], {"data": 3}, {"data": {"tracks": "x"}}, {"result": {"a": 1}}, {"data": [1, None, "x"]}):
            made, _ = provider(name, (200, body), secret=secret)
            listed = made.track_list("v")
            assert all(t.status in ("ready", "preparing", "errored") for t in listed.tracks), (name, body)
    mux, _ = provider("mux", (201, json.dumps({"data": 5}).encode()), secret=MUX_SECRET)
    assert mux.attach_track("a", Track("u", "en"), upload(VTT), "en").kind is TrackResult.SUBMITTED
