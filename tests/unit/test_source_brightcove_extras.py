"""Brightcove's extras, the pure parts (sources/brightcove_extras.py): which image a row carries and the link it
resolves to, the publish time, the folder as a collection, and the playlists read once a sweep from answers given
here, a manual playlist's order kept, a smart one's videos without a place; a bad or missing field never breaks a
row, and credentials that may not read playlists leave them out with a note."""

from __future__ import annotations

import pytest
from migrator.providers.http import Answer
from migrator.sources import build, parse_ref
from migrator.sources.base import ResolutionKind, SourceDenied
from migrator.sources.brightcove_extras import (
    NO_PLAYLIST_READ,
    PlaylistIndex,
    folder_of,
    image_kind,
    image_src,
    published_of,
)
from migrator.sources.brightcove_token import LocalTokens
from migrator.sources.rows import CollectionInfo, make_row

HTTPS = ("https",)
POSTER = {"src": "https://img/p.jpg", "sources": [{"src": "https://img/p.jpg", "width": 1280}]}
THUMB = {"src": "https://img/t.jpg", "sources": []}
NOW = 1_700_000_000.0  # 2023-11-14


@pytest.mark.parametrize(
    ("images", "carried"),
    [
        ({"poster": POSTER, "thumbnail": THUMB}, "poster"),  # what the player shows first
        ({"thumbnail": THUMB}, "thumbnail"),  # no poster: the thumbnail
        ({"poster": {"src": None, "sources": []}, "thumbnail": THUMB}, "thumbnail"),
        ({"poster": {"src": "http://img/p.jpg"}, "thumbnail": THUMB}, "thumbnail"),  # plain http: not over https
        ({"poster": {"src": "javascript:alert(1)"}}, None),
        ({}, None),  # still processing: no images yet
        (None, None),
        ("images", None),
        ([POSTER], None),
    ],
)
def test_the_row_carries_the_poster_else_the_thumbnail(images, carried):
    assert image_kind({"images": images}, HTTPS) == carried


@pytest.mark.parametrize(
    ("image", "schemes", "link"),
    [
        (POSTER, HTTPS, "https://img/p.jpg"),
        (
            {"src": "http://a/1.jpg", "sources": [{"src": "http://a/1.jpg"}, {"src": "https://a/2.jpg"}]},
            HTTPS,
            "https://a/2.jpg",  # the reference's example: src over http, the https one among the sources
        ),
        (
            {"sources": [{"src": "https://a/s.jpg", "width": 320}, {"src": "https://a/l.jpg", "width": 1280}]},
            HTTPS,
            "https://a/l.jpg",  # the widest
        ),
        ({"sources": [{"src": "https://a/1.jpg"}, {"src": "https://a/2.jpg"}]}, HTTPS, "https://a/1.jpg"),
        ({"sources": [{"src": 7}, {"width": 4000}], "src": "https://a/src.jpg"}, HTTPS, "https://a/src.jpg"),
        ({"src": "http://127.0.0.1:9/p.png"}, ("https", "http"), "http://127.0.0.1:9/p.png"),  # a test origin
        ({"src": "https:///no-host"}, HTTPS, None),
        ({"src": "https://a/" + "x" * 3000}, HTTPS, None),
        ({"sources": "none"}, HTTPS, None),
        (None, HTTPS, None),
    ],
)
def test_an_image_resolves_to_its_widest_https_source_else_its_src(image, schemes, link):
    assert image_src(image, schemes) == link


@pytest.mark.parametrize(
    ("video", "published"),
    [
        ({"published_at": "2020-01-02T00:00:00.000Z"}, 1_577_923_200.0),  # "start date-time of first activation"
        (
            {"published_at": "2020-01-02T00:00:00.000Z", "schedule": {"starts_at": "2020-03-01T00:00:00.000Z"}},
            1_583_020_800.0,  # playable only from its schedule's start: that is when viewers first saw it
        ),
        (
            {"published_at": "2020-01-02T00:00:00.000Z", "schedule": {"starts_at": "2019-01-01T00:00:00.000Z"}},
            1_577_923_200.0,
        ),
        ({"published_at": "2020-01-02T00:00:00.000Z", "schedule": {"starts_at": "2099-01-01T00:00:00.000Z"}}, None),
        ({"published_at": None, "state": "INACTIVE"}, None),  # never activated
        ({"published_at": 1_577_923_200_000}, 1_577_923_200.0),  # milliseconds, as the fields reference types times
        ({"published_at": "yesterday"}, None),
        ({"published_at": "2020-01-02T00:00:00.000Z", "schedule": "soon"}, 1_577_923_200.0),
        ({}, None),
    ],
)
def test_the_publish_time_is_the_first_activation_or_the_later_start_of_the_schedule(video, published):
    assert published_of(video, NOW) == published


@pytest.mark.parametrize(
    ("folder_id", "name", "collections"),
    [
        ("5d1f", "Webinars", [CollectionInfo("folders/5d1f", "Webinars", "folder")]),
        ("5d1f", None, []),  # a folder the folders list no longer names
        (None, "Webinars", []),
        ("x" * 65, "Webinars", []),
    ],
)
def test_the_folder_is_a_collection_named_by_its_id(folder_id, name, collections):
    assert folder_of(folder_id, name) == collections


def calls(answers: dict[str, list[Answer]], asked: list[tuple[str, dict]]):
    def call(method: str, path: str, params: dict | None = None) -> Answer:
        asked.append((path, params or {}))
        return answers[path].pop(0)

    return call


ACCOUNT = "/v1/accounts/63"


def test_playlists_are_read_once_a_manual_ones_order_kept_a_smart_ones_videos_placeless():
    playlists = [
        {"id": "101", "name": "Hand-picked", "type": "EXPLICIT", "video_ids": ["30", "10", "bad", "20", "10"]},
        {"id": "102", "name": "Newest", "type": "ACTIVATED_NEWEST_TO_OLDEST", "search": "+tags:a"},
        {"id": "103", "name": "Future kind", "type": "SOMETHING_NEW", "video_ids": ["10"]},
        {"id": "x1", "name": "No id", "type": "EXPLICIT", "video_ids": ["10"]},
        {"id": "104", "name": "Empty", "type": "EXPLICIT", "video_ids": None},
    ]
    answers = {
        f"{ACCOUNT}/playlists": [Answer(200, playlists, "")],
        f"{ACCOUNT}/playlists/102/videos": [Answer(200, [{"id": "20"}, {"id": "40"}, {"name": "no id"}], "")],
    }
    asked: list[tuple[str, dict]] = []
    index = PlaylistIndex(calls(answers, asked), ACCOUNT)
    assert index.of("10") == [CollectionInfo("playlists/101", "Hand-picked", "playlist", 1)]  # its first place
    assert index.of("20") == [
        CollectionInfo("playlists/101", "Hand-picked", "playlist", 3),
        CollectionInfo("playlists/102", "Newest", "playlist", None),  # in Brightcove's order, not kept
    ]
    assert index.of("40") == [CollectionInfo("playlists/102", "Newest", "playlist", None)] and index.of("99") == []
    assert [path for path, _ in asked] == [f"{ACCOUNT}/playlists", f"{ACCOUNT}/playlists/102/videos"]  # once
    assert asked[0][1] == {"limit": "100", "offset": "0", "sort": "name"} and index.refused is None


def test_a_full_page_of_playlists_asks_for_the_next():
    first = [{"id": str(1000 + n), "name": f"P{n}", "type": "EXPLICIT", "video_ids": []} for n in range(100)]
    last = [{"id": "2000", "name": "Last", "type": "EXPLICIT", "video_ids": ["7"]}]
    answers = {f"{ACCOUNT}/playlists": [Answer(200, first, ""), Answer(200, last, "")]}
    asked: list[tuple[str, dict]] = []
    index = PlaylistIndex(calls(answers, asked), ACCOUNT)
    assert index.of("7") == [CollectionInfo("playlists/2000", "Last", "playlist", 0)]
    assert [params["offset"] for _, params in asked] == ["0", "100"]


def test_credentials_that_may_not_read_playlists_leave_them_out_and_say_so():
    def refused(method: str, path: str, params: dict | None = None) -> Answer:
        raise SourceDenied("brightcove refused the credentials: HTTP 401")

    index = PlaylistIndex(refused, ACCOUNT)
    assert index.of("10") == [] and index.refused == NO_PLAYLIST_READ
    gone = PlaylistIndex(lambda method, path, params=None: Answer(404, [{"error_code": "RESOURCE_NOT_FOUND"}], ""), "")
    assert gone.of("10") == [] and gone.refused is None  # an answer other than 200: none listed, nothing refused


def test_a_row_with_every_extra_broken_still_travels():
    row = make_row(
        "brightcove",
        "10",
        "brightcove://10",
        title="T",
        thumbnail_url="brightcove://10/images/poster",
        collections=[CollectionInfo("playlists/101", None, "playlist", 2), CollectionInfo(None, "x", "playlist")],
        published_at=published_of({"published_at": "soon"}, NOW),
    )
    assert row.thumbnail_url == "brightcove://10/images/poster" and row.collections == () and row.published_at is None


@pytest.mark.parametrize(
    ("ref", "kind"),
    [
        ("brightcove://6300000000001/images/banner", ResolutionKind.UNFETCHABLE),
        ("brightcove://6300000000001/pictures/poster", ResolutionKind.UNFETCHABLE),
    ],
)
def test_a_reference_to_an_image_the_video_cannot_have_is_named_unfetchable(ref, kind, monkeypatch):
    creds = {"account_id": "6300000000001", "client_id": "c", "client_secret": "s"}
    source = build("brightcove", lambda: creds, "https://cms.example", tokens=LocalTokens())
    monkeypatch.setattr(source, "read", lambda *a, **k: {"id": "6300000000001", "images": {"poster": POSTER}})
    assert source.resolve(parse_ref(ref)).kind is kind
