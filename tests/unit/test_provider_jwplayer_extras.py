"""JW Player as a target, what a viewer sees first (issue 42), no network: the readers of JW's answers
(providers/jwplayer_extras.py) as tables, the create's publish date, and the requests the extras send (the bodies of
jwplatform-go's thumbnails.go and text_tracks.go, jwplatform-py's manual playlist paths)."""

from __future__ import annotations

import hashlib
import json

import pytest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.providers.jwplayer import publish_start
from migrator.providers.jwplayer_extras import (
    chapters_tracks,
    is_chapters,
    manual_values,
    ordered_values,
    poster_of,
)
from migrator.row_extras import Chapter
from migrator.tracks import TrackResult

from tests.unit.test_providers import NOW, Session

PLAIN = json.dumps({"site_id": "Site1234", "api_secret": "v2-secret"})
SIGNING = json.dumps({"site_id": "Site1234", "api_secret": "v2-secret", "signing_secret": "p", "url_signing": True})
BASE = "https://api.jwplayer.com"


def provider(session=None, secret: str = PLAIN):
    return build("jwplayer", None, lambda: secret, clock=lambda: NOW, session=session or Session())


def thumb(tid: str, media: str, poster: bool, source: str = "custom_upload", kind: str = "static") -> dict:
    links = [{"id": media, "is_poster": poster}]
    return {"id": tid, "source_type": source, "thumbnail_type": kind, "relationships": {"media": links}}


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        ({"thumbnails": []}, (None, None)),
        ({"thumbnails": [thumb("Fmedia01", "media001", True, "video_frame")]}, (None, None)),  # JW's own frame
        ({"thumbnails": [thumb("Th000001", "media001", True)]}, ("Th000001", None)),
        ({"thumbnails": [thumb("Th000001", "media001", False)]}, (None, "Th000001")),  # made, never promoted
        ({"thumbnail": [thumb("Th000001", "media001", True)]}, ("Th000001", None)),  # thumbnails.go's key
        ({"thumbnails": [thumb("Th000001", "other001", True)]}, (None, None)),  # another media's
        ({"thumbnails": [thumb("Th000001", "media001", True, kind="motion")]}, (None, None)),
        ({"thumbnails": [thumb("bad id!", "media001", True)]}, (None, None)),
        ({"thumbnails": [{**thumb("Th000001", "media001", False), "status": "failed"}]}, (None, None)),
        (
            {"thumbnails": [thumb("Th000001", "media001", False), thumb("Th000002", "media001", True)]},
            ("Th000002", "Th000001"),
        ),
        ("not an object", (None, None)),
    ],
)
def test_the_look_tells_our_poster_from_jws_frame_and_from_one_not_yet_promoted(listed, expected):
    assert poster_of(listed, "media001") == expected


def track(tid: str, kind: str | None, lang: str, status: str, where: str = "top") -> dict:
    out: dict = {"id": tid, "status": status, "metadata": {"srclang": lang}}
    if where == "top":
        out["track_kind"] = kind
    else:
        out["metadata"]["track_kind"] = kind
    return out


@pytest.mark.parametrize(
    ("tracks", "language", "expected"),
    [
        ([track("T1", "captions", "en", "ready")], "en", []),
        ([track("C1", "chapters", "en", "ready")], "en", [("C1", "ready")]),
        ([track("C1", "chapters", "en", "draft", where="metadata")], "EN", [("C1", "draft")]),
        ([track("C1", "chapters", "fr", "ready")], "en", []),
        ([track("C1", "chapters", "en", "created"), track("C2", "chapters", "en", "failed")], "en",
         [("C1", "created"), ("C2", "failed")]),
        ([{"id": "C1", "track_kind": "chapters", "metadata": {"srclang": "en"}}], "en", [("C1", "processing")]),
    ],
)  # fmt: skip
def test_chapters_tracks_are_read_by_kind_and_language(tracks, language, expected):
    assert chapters_tracks({"text_tracks": tracks}, language) == expected


@pytest.mark.parametrize(
    ("raw", "chapters"),
    [
        ({"track_kind": "chapters"}, True),
        ({"metadata": {"track_kind": "chapters"}}, True),
        ({"track_kind": "captions", "metadata": {"track_kind": "captions"}}, False),
        ({}, False),
        ("chapters", False),
    ],
)
def test_a_chapters_track_is_told_by_its_kind(raw, chapters):
    assert is_chapters(raw) is chapters


@pytest.mark.parametrize(
    ("body", "values"),
    [
        ({"metadata": {"media_filter": {"include": {"values": ["a1", "b2", "a1"]}}}}, ["a1", "b2"]),
        ({"metadata": {"media_filter": {"include": {"values": ["a1", 7, None, "no way"]}}}}, ["a1", "7"]),
        ({"metadata": {"media_filter": {"sort": "publish_start_date:dsc"}}}, []),  # a dynamic one's rule
        ({}, []),
    ],
)
def test_a_manual_playlists_media_are_read_in_order_each_once(body, values):
    assert manual_values(body) == values


@pytest.mark.parametrize(
    ("held", "ordered", "expected"),
    [
        ([], ["a", "b"], ["a", "b"]),  # a member a concurrent write dropped is put back
        (["b", "a"], ["a", "b"], ["a", "b"]),
        (["x", "b", "y", "a"], ["a", "b"], ["a", "b", "x", "y"]),  # the owner's media kept, after ours
        (["a", "b"], ["a", "b"], ["a", "b"]),
        (["a"], ["a", "a"], ["a"]),
    ],
)
def test_ordering_puts_ours_in_source_order_first_and_keeps_the_rest(held, ordered, expected):
    assert ordered_values(held, ordered) == expected


@pytest.mark.parametrize(
    ("published", "held", "start", "noted"),
    [
        ("2019-05-01T10:00:00Z", False, "2019-05-01T10:00:00Z", False),
        ("2019-05-01T10:00:00Z", True, None, True),  # held unpublished: the hold stays
        ("2099-01-01T00:00:00Z", False, None, True),  # ahead: not made a hold of its own
        (None, False, None, False),
    ],
)
def test_the_publish_time_is_the_publish_start_unless_held_or_ahead(published, held, start, noted):
    got, note = publish_start(published, NOW, held)
    assert got == start and bool(note) is noted


def created_metadata(secret: str, **fields) -> tuple[dict, list[str]]:
    details = AssetMessage("lib/1", "https://m.example/a.mp4", **fields)
    body, notes = provider(secret=secret)._create_body(AssetRef("lib/1", "T", 0, details), details.source_url)
    return body["metadata"], notes


def test_the_create_carries_the_original_publish_time_as_publish_start_date():
    metadata, notes = created_metadata(PLAIN, privacy="public", published_at="2019-05-01T10:00:00Z")
    assert metadata["publish_start_date"] == "2019-05-01T10:00:00Z" and "published_at" not in metadata["custom_params"]
    assert not any(n.startswith("published_at") for n in notes)
    held, notes = created_metadata(PLAIN, privacy="private", published_at="2019-05-01T10:00:00Z")
    assert held["publish_start_date"] == "2099-12-31T00:00:00+00:00"  # never public by accident
    assert held["custom_params"]["published_at"] == "2019-05-01T10:00:00Z" and any("published_at" in n for n in notes)
    signed, _ = created_metadata(SIGNING, privacy="private", published_at="2019-05-01T10:00:00Z")
    assert signed["publish_start_date"] == "2019-05-01T10:00:00Z"  # the property signs: published, signed


def test_a_chapters_track_is_never_a_caption_of_its_language():
    listed = {
        "text_tracks": [track("T1", "captions", "en", "ready"), track("C1", "chapters", "en", "ready")],
        "total": 2,
    }
    got = provider(Session((200, listed))).track_list("media001")
    assert [(t.language, t.remote_id) for t in got.tracks] == [("en", "T1")]


def test_a_thumbnail_is_made_from_its_link_then_promoted_to_the_poster():
    session = Session((201, {"id": "Th000001"}), (200, {"id": "Th000001"}))
    image = ThumbnailUpload(b"\x89PNG", "image/png", "png", "d1", "https://img.example/p.png")
    got = provider(session).set_thumbnail("media001", image)
    assert (got.kind, got.remote_track_id) == (TrackResult.ATTACHED, "Th000001")
    made, promoted = session.sent
    assert (made.method, made.url) == ("POST", f"{BASE}/v2/sites/Site1234/thumbnails/")
    assert session.json(0) == {
        "relationships": {"media": [{"id": "media001"}]},
        "upload": {"method": "fetch", "thumbnail_type": "static", "download_url": "https://img.example/p.png"},
    }
    assert (promoted.method, promoted.url) == ("PATCH", f"{BASE}/v2/sites/Site1234/thumbnails/Th000001/")
    assert session.json(1) == {"relationships": {"media": [{"id": "media001", "is_poster": True}]}}
    refused = provider(Session((201, {"id": "Th000001"}), (409, {"errors": []}))).set_thumbnail("media001", image)
    assert refused.kind is TrackResult.TRANSIENT  # the next look promotes it, never makes another
    assert provider().set_thumbnail("media001", ThumbnailUpload(b"x", "image/png", "png", "d")).kind is (
        TrackResult.REFUSED
    )


def test_the_look_promotes_a_thumbnail_an_earlier_pass_made_and_makes_nothing():
    listed = {"thumbnails": [thumb("Fmedia01", "media001", True, "video_frame"), thumb("Th000001", "media001", False)]}
    session = Session((200, listed), (200, {"id": "Th000001"}))
    look = provider(session).thumbnail_state("media001")
    assert (look.custom, look.digest) == (True, "Th000001")
    assert [r.method for r in session.sent] == ["GET", "PATCH"] and "q=media_id%3Amedia001" in session.sent[0].url


def test_chapters_are_a_direct_upload_put_without_our_credentials_and_checked_by_its_etag():
    vtt = b"WEBVTT\n\n00:00:00.000 --> 00:00:05.000\nIntro\n"
    link = "https://upload.example/s3/put?X-Amz-Signature=abc"
    etag = {"ETag": f'"{hashlib.md5(vtt).hexdigest()}"'}
    session = Session((201, {"id": "C0000001", "status": "created", "upload_link": link}), (200, b"", etag))
    upload = ChaptersUpload((Chapter(0.0, "Intro"),), vtt, "en", 5.0)
    got = provider(session).set_chapters("media001", upload)
    assert (got.kind, got.remote_track_id) == (TrackResult.SUBMITTED, "C0000001")
    assert session.json(0) == {
        "upload": {"method": "direct", "file_format": "vtt", "auto_publish": True},
        "metadata": {"label": "Chapters", "srclang": "en", "track_kind": "chapters"},
    }
    put = session.sent[1]
    assert (put.method, put.url, put.body) == ("PUT", link, vtt) and "Authorization" not in put.headers
    altered = Session((201, {"id": "C0000001", "upload_link": link}), (200, b"", {"ETag": '"0"'}))
    assert provider(altered).set_chapters("media001", upload).kind is TrackResult.TRANSIENT
    elsewhere = Session((201, {"id": "C0000001", "upload_link": "http://plain.example/put"}))
    assert provider(elsewhere).set_chapters("media001", upload).kind is TrackResult.TRANSIENT  # never over http
    assert len(elsewhere.sent) == 1


@pytest.mark.parametrize(
    ("tracks", "answers", "expected", "methods"),
    [
        ([track("C1", "chapters", "en", "ready")], [], 1, ["GET"]),
        ([track("C1", "chapters", "en", "draft")], [(200, {"id": "C1", "status": "ready"})], 1, ["GET", "PUT"]),
        ([track("C1", "chapters", "en", "processing")], [], TrackResult.WAITING, ["GET"]),
        ([track("C1", "chapters", "en", "created")], [(204, b"")], 0, ["GET", "DELETE"]),  # its file never came
        ([track("C1", "chapters", "en", "failed")], [], 0, ["GET"]),
        ([track("T1", "captions", "en", "ready")], [], 0, ["GET"]),
    ],
)
def test_the_chapters_look_counts_published_tracks_and_finishes_or_clears_an_earlier_passs(
    tracks, answers, expected, methods
):
    session = Session((200, {"text_tracks": tracks, "total": len(tracks)}), *answers)
    got = provider(session).chapters_of("media001", "en")
    assert (got.kind if hasattr(got, "kind") else got.count) == expected
    assert [r.method for r in session.sent] == methods


def test_a_playlist_is_found_by_our_reference_before_a_title_and_made_with_it():
    listed = {
        "playlists": [
            {"id": "PLtitle1", "metadata": {"title": "Talks", "playlist_type": "manual", "custom_params": {}}},
            {"id": "PLdyn001", "metadata": {"title": "Talks", "playlist_type": "dynamic"}},
            {"id": "PLours01", "metadata": {"title": "Renamed", "custom_params": {"migration_collection": "k1"}}},
        ],
        "page_length": 500,
        "total": 3,
    }
    assert provider(Session((200, listed))).find_collection("Talks", "k1").remote_id == "PLours01"
    assert provider(Session((200, listed))).find_collection("Talks", "k2").remote_id == "PLtitle1"
    assert provider(Session((200, listed))).find_collection("Other", "k2") is None
    session = Session((201, {"id": "PLnew001"}))
    made = provider(session).create_collection("Talks « 2019 »", "folder", "k3")
    assert (made.kind, made.remote_track_id) == (TrackResult.ATTACHED, "PLnew001")
    assert session.sent[0].url == f"{BASE}/v2/sites/Site1234/playlists/manual_playlist/"
    assert session.json(0) == {
        "metadata": {
            "title": "Talks « 2019 »",
            "custom_params": {"migration_collection": "k3", "migration_kind": "folder"},
        }
    }


def test_placing_appends_once_and_ordering_writes_only_what_differs():
    holding = {"metadata": {"media_filter": {"include": {"values": ["x", "b"]}}}}
    session = Session((200, holding), (200, {}))
    assert provider(session).place("a", "PL000001", 3).kind is TrackResult.ATTACHED
    assert session.sent[1].method == "PATCH" and session.sent[1].url.endswith("/playlists/PL000001/manual_playlist/")
    assert session.json(1) == {"metadata": {"media_filter": {"include": {"values": ["x", "b", "a"]}}}}
    again = Session((200, holding))
    assert provider(again).place("b", "PL000001", 1).kind is TrackResult.ATTACHED and len(again.sent) == 1
    order = Session((200, holding), (200, {}))
    assert provider(order).order_collection("PL000001", ["a", "b"]).kind is TrackResult.ATTACHED
    assert order.json(1)["metadata"]["media_filter"]["include"]["values"] == ["a", "b", "x"]
    settled = Session((200, {"metadata": {"media_filter": {"include": {"values": ["a", "b"]}}}}))
    assert provider(settled).order_collection("PL000001", ["a", "b"]).kind is TrackResult.ATTACHED
    assert len(settled.sent) == 1  # already so: nothing written
