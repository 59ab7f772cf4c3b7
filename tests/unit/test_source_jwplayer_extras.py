"""JW Player's extras, the pure parts (sources/jwplayer_extras.py and the poster's reference): which playlists are
read and in which order their media stand, from answers given here, the playlists JW fills by rule never asked for;
the poster resolved to the Delivery API's URL with no request, signed where the property's secret is given; a bad or
missing field never breaks a row."""

from __future__ import annotations

import json
from base64 import urlsafe_b64decode

import pytest
from migrator.providers.http import Answer
from migrator.sources import build, parse_ref
from migrator.sources.base import ResolutionKind, SourceDenied
from migrator.sources.jwplayer_extras import NO_PLAYLIST_READ, PlaylistIndex, manual_order, playlist_type
from migrator.sources.rows import CollectionInfo

SITE = "/v2/sites/Site1234"
NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("playlist", "kind"),
    [
        ({"metadata": {"playlist_type": "manual"}}, "manual"),
        ({"metadata": {"playlist_type": " Dynamic "}}, "dynamic"),
        ({"playlist_type": "trending"}, "trending"),
        ({"type": "playlist", "metadata": {}}, None),  # `type` is the resource's kind, not the playlist's
        ({"metadata": {"playlist_type": 3}}, None),
        ({"metadata": "manual"}, None),
    ],
)
def test_a_listed_playlist_says_its_type_where_it_says_one(playlist, kind):
    assert playlist_type(playlist) == kind


@pytest.mark.parametrize(
    ("playlist", "order"),
    [
        ({"metadata": {"media_filter": {"include": {"values": ["J0000003", "J0000001"]}}}}, ["J0000003", "J0000001"]),
        (
            {"metadata": {"media_filter": {"include": {"values": ["J1", "J1", "bad id", 7, "J2"]}}}},
            ["J1", "J2"],  # each once, where it first stands; what is no media id is left out
        ),
        ({"metadata": {"media_filter": {"include": {"values": "J1"}}}}, []),
        ({"metadata": {"media_filter": None}}, []),
        ({}, []),
    ],
)
def test_a_manual_playlist_lists_its_media_in_its_order(playlist, order):
    assert manual_order(playlist) == order


def manual(*ids: str, title: str = "Picks") -> Answer:
    return Answer(200, {"metadata": {"title": title, "media_filter": {"include": {"values": list(ids)}}}}, "")


def test_manual_playlists_are_read_once_each_media_placed_and_rule_filled_ones_never_asked():
    listed = [
        {"id": "PLman001", "metadata": {"title": "Picks", "playlist_type": "manual"}},
        {"id": "PLdyn002", "metadata": {"title": "Latest", "playlist_type": "dynamic"}},
        {"id": "PLtrd003", "metadata": {"title": "Hot", "playlist_type": "trending"}},
        {"id": "PLunk004", "metadata": {"title": "Untyped"}},  # no type said: tried as a manual one
        {"id": "PLunk005", "metadata": {"title": "Untyped, not manual"}},
        {"id": "PL/bad", "metadata": {"playlist_type": "manual"}},
    ]
    answers = {
        f"{SITE}/playlists/": [Answer(200, {"playlists": listed, "page": 1, "page_length": 500, "total": 6}, "")],
        f"{SITE}/playlists/PLman001/manual_playlist/": [manual("J0000003", "J0000001")],
        f"{SITE}/playlists/PLunk004/manual_playlist/": [manual("J0000001", title="Untyped")],
        f"{SITE}/playlists/PLunk005/manual_playlist/": [Answer(404, {"errors": [{"code": "not_found"}]}, "")],
    }
    asked: list[str] = []

    def call(method: str, path: str, params: dict | None = None) -> Answer:
        asked.append(path)
        return answers[path].pop(0)

    index = PlaylistIndex(call, SITE)
    assert index.of("J0000001") == [
        CollectionInfo("playlists/PLman001", "Picks", "playlist", 1),
        CollectionInfo("playlists/PLunk004", "Untyped", "playlist", 0),
    ]
    assert index.of("J0000003") == [CollectionInfo("playlists/PLman001", "Picks", "playlist", 0)]
    assert index.of("J0000002") == []
    assert asked == [
        f"{SITE}/playlists/",
        f"{SITE}/playlists/PLman001/manual_playlist/",
        f"{SITE}/playlists/PLunk004/manual_playlist/",
        f"{SITE}/playlists/PLunk005/manual_playlist/",
    ]  # once a sweep; the dynamic and trending ones cost nothing


@pytest.mark.parametrize(
    ("pages", "asked"),
    [
        ([(500, 500, 501), (1, 500, 501)], 2),  # the total says one more page
        ([(10, 10, 10)], 1),  # a shorter page size than asked, told: the total reached
        ([(10, 10, 25), (10, 10, 25), (5, 10, 25)], 3),  # read at the size told
        ([(3, 500, None)], 1),  # a short page ends it where no total is said
    ],
)
def test_the_playlists_are_paged_until_the_total_or_a_short_page(pages, asked):
    answers = []
    for count, length, total in pages:
        listed = [{"id": f"PLd{n:05d}", "metadata": {"playlist_type": "dynamic"}} for n in range(count)]
        answers.append(Answer(200, {"playlists": listed, "page_length": length, "total": total}, ""))
    seen: list[dict] = []

    def call(method: str, path: str, params: dict | None = None) -> Answer:
        seen.append(params or {})
        return answers.pop(0)

    assert PlaylistIndex(call, SITE).of("J0000001") == [] and len(seen) == asked
    assert [p["page"] for p in seen] == [str(n) for n in range(1, asked + 1)]


def test_credentials_refused_the_playlists_leave_them_out_and_say_so():
    def refused(method: str, path: str, params: dict | None = None) -> Answer:
        raise SourceDenied("jwplayer refused the credentials: HTTP 403")

    index = PlaylistIndex(refused, SITE)
    assert index.of("J0000001") == [] and index.refused == NO_PLAYLIST_READ


def claims(token: str) -> dict:
    body = token.split(".")[1]
    return json.loads(urlsafe_b64decode(body + "=" * (-len(body) % 4)))


@pytest.mark.parametrize("signing", [None, "property-secret"])
def test_the_poster_resolves_to_the_delivery_apis_widest_poster_with_no_request(signing):
    creds = {"site_id": "Site1234", "api_secret": "s", **({"signing_secret": signing} if signing else {})}
    source = build("jwplayer", lambda: creds, clock=lambda: NOW)
    ready = source.resolve(parse_ref("jwplayer://J0000001/poster/poster.jpg"))
    assert ready.kind is ResolutionKind.READY and source.requests == 0
    assert ready.url.startswith("https://cdn.jwplayer.com/v2/media/J0000001/poster.jpg?width=1920")
    if signing:  # "Protect your content with signed URLs": a JWT for that resource, alive for the hand-off
        token = ready.url.partition("&token=")[2]
        assert claims(token) == {"resource": "/v2/media/J0000001/poster.jpg", "exp": int(NOW + 6 * 3600)}
        assert ready.expires_at == NOW + 6 * 3600
    else:
        assert "token=" not in ready.url and ready.expires_at is None


@pytest.mark.parametrize(
    "ref", ["jwplayer://J0000001/poster/thumb.png", "jwplayer://J00-0001/poster/poster.jpg", "jwplayer://J1/covers/x"]
)
def test_a_reference_that_is_no_poster_is_named_unfetchable(ref):
    source = build("jwplayer", lambda: {"site_id": "Site1234", "api_secret": "s"})
    assert source.resolve(parse_ref(ref)).kind is ResolutionKind.UNFETCHABLE and source.requests == 0
