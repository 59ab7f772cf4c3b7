"""api.video as a source: the "apivideo" simulator's library side driven by api-video 1.4.7 (which
type-checks every field against oas_apivideo.yaml: `VideosApi.list`, `get`, `CaptionsApi.list`) and by
migrator.sources.apivideo, which pages by number, names videos without an MP4, carries private ones
and their captions, and reads a private video's link afresh at the create."""

from __future__ import annotations

import base64

import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import CaptionsApi, VideosApi
from apivideo.configuration import Configuration
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources.apivideo import NO_MP4

API_KEY = "apivideo-src-key"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("apivideo", api_key=API_KEY, **{"library_size": 230, **config})
        return sim, build("apivideo", lambda: {"api_key": API_KEY}, sim.url, patient=True, rate_per_s=0)

    return start


def _client(url: str) -> ApiClient:
    header = "Basic " + base64.b64encode(f"{API_KEY}:".encode()).decode()
    return ApiClient(Configuration(host=url), header_name="Authorization", header_value=header)


def vid(index: int) -> str:
    return f"vi{index:020d}"


def test_the_sdk_pages_the_library_and_reads_captions(library):
    sim, _ = library(library_size=30, library_captions_every=3)
    client = _client(sim.url)
    page = VideosApi(client).list(current_page=2, page_size=10, sort_by="createdAt", sort_order="asc")
    assert page.pagination.items_total == 30 and page.pagination.pages_total == 3 and len(page.data) == 10
    assert page.data[0].video_id == vid(10) and page.data[0].assets.mp4.startswith(sim.url + "/_media/apivideo/10/")
    captions = CaptionsApi(client).list(vid(1))
    assert [(c.srclang, c.language_name) for c in captions.data] == [("en", "English"), ("fr", "Français")]


def test_the_library_is_listed_with_privacy_tags_and_metadata(library):
    _sim, source = library(library_private_every=4, library_unfetchable_every=10)
    entries, cursor, pages = [], None, 0
    while True:
        page = source.page(cursor, tracks=False)
        entries, cursor, pages = entries + page.entries, page.cursor, pages + 1
        if pages == 1:
            assert page.remaining == 130
        if cursor is None:
            break
    assert pages == 3 and len(entries) == 230
    first = entries[0]
    assert first.asset_id == f"apivideo/{vid(0)}" and first.privacy == "private" and entries[1].privacy == "public"
    assert first.tags == ("series-0", "library", "featured") and first.metadata["apivideo_metadata"] == {"series": "0"}
    assert first.duration_s is None  # api.video's list carries none
    no_mp4 = [e for e in entries if isinstance(e, Unfetchable)]
    assert len(no_mp4) == 23 and {e.reason for e in no_mp4} == {NO_MP4}


def test_resolve_reads_the_link_afresh_and_tracks_resolve_to_theirs(library, web):
    _sim, source = library(library_captions_every=3, library_unfetchable_every=10, link_ttl_s=60)
    ready = source.resolve(parse_ref(f"apivideo://{vid(0)}"))
    assert ready.kind is ResolutionKind.READY and web.get(ready.url).status_code == 200
    assert source.resolve(parse_ref(f"apivideo://{vid(9)}")).reason == NO_MP4
    caption = source.resolve(parse_ref(f"apivideo://{vid(1)}/captions/fr"))
    assert caption.kind is ResolutionKind.READY and web.get(caption.url).text.startswith("WEBVTT")
    assert source.resolve(parse_ref(f"apivideo://{vid(999)}")).reason.startswith("not found at the source")


def test_a_delta_sweep_sorts_by_update_and_stops_at_the_mark(library):
    _sim, source = library()
    page = source.page(None, since=1_577_836_800 + 227 * 60 + 3600, tracks=False)
    assert [e.asset_id for e in page.entries] == [f"apivideo/{vid(i)}" for i in (229, 228, 227)] and page.cursor is None
