"""Wistia as a source: the "wistia" simulator profile (Wistia's Data API as its OpenAPI file describes it,
wistia/wistia-typescript-sdk) and migrator.sources.wistia, which lists it by cursor, names what it
cannot fetch, carries its captions, and resolves the original file at the create.

Wistia publishes no Python SDK; the shapes checked here are those of its OpenAPI file: a media list
that is a bare JSON array with a `cursor` per media under cursor paging, `assets[]` with an
OriginalFile, captions in ISO 639-2 with their SRT text, and a 429 (or 503) with Retry-After.
"""

from __future__ import annotations

import time

import pytest
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources.wistia import ARCHIVED, NO_ORIGINAL, STILL_PROCESSING

from tests.sim.support import list_all

TOKEN = "wistia-token"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("wistia", token=TOKEN, **{"library_size": 230, **config})
        # rate_per_s 0: no pacing of our own, so the tests run at the simulator's pace (limits are tried below).
        return sim, build("wistia", lambda: {"token": TOKEN}, sim.url + "/modern", patient=True, rate_per_s=0)

    return start


def test_the_media_list_is_wistias_bare_array_with_cursors(library, web):
    sim, _ = library(library_size=5)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    medias = web.get(f"{sim.url}/modern/medias", params={"cursor[enabled]": 1, "per_page": 2}, headers=headers).json()
    assert isinstance(medias, list) and len(medias) == 2 and all(m["cursor"] for m in medias)
    after = web.get(
        f"{sim.url}/modern/medias", params={"cursor[after]": medias[-1]["cursor"], "per_page": 2}, headers=headers
    ).json()
    assert [m["hashed_id"] for m in after] != [m["hashed_id"] for m in medias]
    assert medias[0]["assets"][0]["type"] == "OriginalFile" and medias[0]["status"] == "ready"
    refused = web.get(f"{sim.url}/modern/medias", params={"sort_by": "updated", "cursor[enabled]": 1}, headers=headers)
    assert refused.status_code == 400  # cursor paging sorts by id or created only
    assert web.get(f"{sim.url}/modern/medias").status_code == 401


def test_the_library_is_listed_by_cursor_each_media_once(library):
    _sim, source = library(library_captions_every=3)
    entries, pages = list_all(source)
    assert pages == 3 and len(entries) == 230 and len({e.asset_id for e in entries}) == 230
    first = entries[0]
    assert first.asset_id == "wistia/w000000000" and first.source_url == "wistia://w000000000"
    assert first.title == "Library video 000000" and first.duration_s == 30.25 and first.folder == "Marketing"
    assert first.tags == ("series-0", "library", "featured") and first.created_at == "2020-01-01T00:00:00Z"
    assert first.privacy is None  # Wistia has no per-media privacy: the stack's DefaultPlayback applies
    captioned = next(e for e in entries if e.tracks)
    assert [(t.language, t.kind, t.name, t.format) for t in captioned.tracks] == [
        ("en", "captions", "English", "vtt"),  # ISO 639-2 "eng" carried as BCP 47 "en"
        ("fr", "captions", "French", "vtt"),
    ]
    assert captioned.tracks[0].url == f"wistia://{captioned.metadata['source_id']}/captions/eng"


def test_what_can_never_be_fetched_is_named_with_its_reason(library):
    _sim, source = library(library_unfetchable_every=10)
    entries, _ = list_all(source, tracks=False)
    reasons = sorted({e.reason for e in entries if isinstance(e, Unfetchable)})
    assert reasons == sorted(
        {
            STILL_PROCESSING,
            "failed processing at the source (Wistia status failed)",
            "not a video (Wistia media type Image)",
            ARCHIVED,
            NO_ORIGINAL,
        }
    )
    assert sum(isinstance(e, Unfetchable) for e in entries) == 23


def test_resolve_gives_the_original_file_and_the_captions_text(library, web):
    _sim, source = library(library_captions_every=3, library_unfetchable_every=10)
    ready = source.resolve(parse_ref("wistia://w000000000"))
    assert ready.kind is ResolutionKind.READY and "/_media/wistia/0/original.bin" in ready.url
    assert web.get(ready.url, headers={"Range": "bytes=0-1023"}).status_code == 206
    caption = source.resolve(parse_ref("wistia://w000000001/captions/eng"))
    assert caption.kind is ResolutionKind.READY and caption.url is None
    assert caption.text_format == "vtt" and caption.text.startswith("WEBVTT")
    unfetchable = source.resolve(parse_ref("wistia://w000000009"))
    assert unfetchable.kind is ResolutionKind.UNFETCHABLE and unfetchable.reason == STILL_PROCESSING
    assert source.resolve(parse_ref("wistia://wzzzzzzzzz")).reason.startswith("not found at the source")


def test_a_delta_sweep_sorts_by_update_and_stops_at_the_mark(library):
    _sim, source = library()
    mark = 1_577_836_800 + 225 * 60 + 3600  # video 225's change
    changed, pages = list_all(source, since=mark, tracks=False)
    assert [e.metadata["wistia_id"] - 1000 for e in changed] == list(range(229, 224, -1)) and pages == 1


def test_the_rate_limit_is_waited_out(library):
    _sim, source = library(library_size=300, read_rate=2, read_burst=1)  # 3 pages: 429s with Retry-After
    entries, _ = list_all(source, tracks=False)
    assert len(entries) == 300 and source.throttled >= 1


def test_a_listing_keeps_to_wistias_documented_rate(library):
    sim, _ = library(library_size=5, library_captions_every=1)
    paced = build("wistia", lambda: {"token": TOKEN}, sim.url + "/modern", patient=True)  # 600 a minute
    started = time.monotonic()
    entries, _ = list_all(paced)
    assert len(entries) == 5 and paced.requests == 6 and time.monotonic() - started >= 0.5  # 6 requests at 10/s
