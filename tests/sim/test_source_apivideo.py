"""api.video as a source: the "apivideo" simulator's library side driven by api-video 1.4.7 (which
type-checks every field against oas_apivideo.yaml: `VideosApi.list`, `get`, `get_status`, `CaptionsApi.list`)
and by migrator.sources.apivideo, which pages by number (overlapping pages, so a deletion mid-sweep skips
nothing), reads each video's status (a video still encoding is pending, asked for again by the next sweep),
names videos without an MP4, reads every page of captions, and never reads a video as wider than private.
A private video's links and sessions: test_source_apivideo_private.py."""

from __future__ import annotations

import base64
import json

import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import CaptionsApi, VideosApi
from apivideo.configuration import Configuration
from apivideo.exceptions import ApiException
from migrator.sources import ResolutionKind, SourceError, Unfetchable, build, parse_ref
from migrator.sources.apivideo import NO_MP4, PRIVACY_NOTE
from migrator_cli.main import main

from infra.sim.platforms import apivideo_library

API_KEY = "apivideo-src-key"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("apivideo", api_key=API_KEY, **{"library_size": 230, **config})
        source = build("apivideo", lambda: {"api_key": API_KEY}, sim.url, patient=True, rate_per_s=0)
        source.http.session.trust_env = False
        return sim, source

    return start


def _client(url: str) -> ApiClient:
    header = "Basic " + base64.b64encode(f"{API_KEY}:".encode()).decode()
    return ApiClient(Configuration(host=url), header_name="Authorization", header_value=header)


def vid(index: int) -> str:
    return f"vi{index:020d}"


def sweep(source, since=None, tracks=False, between=None):
    """Every page of a listing: (entries, pending, pages read); `between(n)` runs after page n."""
    entries, pending, cursor, pages = [], [], None, 0
    while True:
        page = source.page(cursor, since=since, tracks=tracks)
        entries, pending, cursor, pages = entries + page.entries, pending + page.pending, page.cursor, pages + 1
        if between:
            between(pages)
        if cursor is None:
            return entries, pending, pages


def test_the_sdk_pages_the_library_and_reads_captions_and_statuses(library):
    sim, _ = library(library_size=40, library_captions_every=3, library_unfetchable_every=10)
    client = _client(sim.url)
    page = VideosApi(client).list(current_page=2, page_size=10, sort_by="createdAt", sort_order="asc")
    assert page.pagination.items_total == 40 and page.pagination.pages_total == 4 and len(page.data) == 10
    assert page.data[0].video_id == vid(10) and page.data[0].assets.mp4.startswith(sim.url + "/_media/apivideo/10/")
    captions = CaptionsApi(client).list(vid(1))
    assert [(c.srclang, c.language_name) for c in captions.data] == [("en", "English"), ("fr", "Français")]
    assert captions.pagination.page_size == 25  # "default is 25"
    second = CaptionsApi(client).list(vid(1), current_page=2, page_size=1)
    assert [c.srclang for c in second.data] == ["fr"] and second.pagination.pages_total == 2
    with pytest.raises(ApiException) as refused:
        CaptionsApi(client).list(vid(1), page_size=101)  # "Allowed values 1-100"
    assert refused.value.status == 400 and json.loads(refused.value.body)["name"] == "pageSize"
    ready, uploading, encoding = (VideosApi(client).get_status(vid(i)) for i in (0, 19, 39))
    assert ready.encoding.playable and ready.encoding.metadata.duration == 30 and ready.ingest.status == "uploaded"
    assert uploading.ingest.status == "uploading" and not uploading.encoding.playable
    assert encoding.ingest.status == "uploaded" and {q.status for q in encoding.encoding.qualities} == {"encoding"}


def test_the_library_is_listed_with_privacy_tags_metadata_and_durations(library):
    _sim, source = library(library_private_every=4, library_unfetchable_every=10)
    page = source.page(None, tracks=False)
    assert page.remaining == 130
    entries, pending, pages = sweep(source)
    assert pages == 3 and len(entries) == 219 and len(pending) == 11  # 23 faults: 12 without an MP4, 11 processing
    first = entries[0]
    assert first.asset_id == f"apivideo/{vid(0)}" and first.privacy == "private" and entries[1].privacy == "public"
    assert first.tags == ("series-0", "library", "featured") and first.metadata["apivideo_metadata"] == {"series": "0"}
    assert first.duration_s == 30  # from /status, in whole seconds (the library's 30.25 s)
    no_mp4 = [e for e in entries if isinstance(e, Unfetchable)]
    assert len(no_mp4) == 12 and {e.reason for e in no_mp4} == {NO_MP4}


def test_resolve_reads_the_link_afresh_and_tracks_resolve_to_theirs(library, web):
    _sim, source = library(library_captions_every=3, library_unfetchable_every=10, link_ttl_s=60)
    ready = source.resolve(parse_ref(f"apivideo://{vid(0)}"))
    assert ready.kind is ResolutionKind.READY and web.get(ready.url).status_code == 200 and ready.privacy == "public"
    assert source.resolve(parse_ref(f"apivideo://{vid(9)}")).reason == NO_MP4
    caption = source.resolve(parse_ref(f"apivideo://{vid(1)}/captions/fr"))
    assert caption.kind is ResolutionKind.READY and web.get(caption.url).text.startswith("WEBVTT")
    assert source.resolve(parse_ref(f"apivideo://{vid(999)}")).reason.startswith("not found at the source")


def test_a_delta_sweep_sorts_by_update_and_stops_at_the_mark(library):
    _sim, source = library()
    page = source.page(None, since=1_577_836_800 + 227 * 60 + 3600, tracks=False)
    assert [e.asset_id for e in page.entries] == [f"apivideo/{vid(i)}" for i in (229, 228, 227)] and page.cursor is None


# --- item 10: page-by-number sweeps overlap --------------------------------------------------------


@pytest.mark.parametrize("deleted", [[5], [0, 1, 2, 50, 99], list(range(10, 160))])
def test_a_deletion_during_a_sweep_skips_no_video_and_lists_none_twice(library, deleted):
    """Deleting videos listed on page 1 before page 2 is read shifts page 2 back: without the overlap, the
    video that moved onto page 1 was never listed. Here every video the library still has is listed once."""
    sim, source = library(library_size=350)

    def delete_after_the_first_page(pages: int) -> None:
        if pages == 1:
            sim.change_library(delete=deleted, make_private=[])

    entries, _, _ = sweep(source, between=delete_after_the_first_page)
    ids = [e.asset_id for e in entries]
    listed_first = {f"apivideo/{vid(i)}" for i in range(100)}
    still_there = {f"apivideo/{vid(i)}" for i in range(350) if i not in deleted}
    assert still_there <= set(ids) <= still_there | listed_first and len(ids) == len(set(ids))
    lists = [r for r in sim.requests_log(ops=("list",))]
    assert len(lists) <= 2 * 4 - 1 + len(deleted) // 100  # each page after the first with the one before it again


def test_a_delta_sweep_with_a_deletion_skips_nothing_either(library):
    sim, source = library(library_size=250)
    since = 1_577_836_800.0

    def delete(pages: int) -> None:
        if pages == 1:
            sim.change_library(delete=[240, 200], make_private=[])

    entries, _, _ = sweep(source, since=since, between=delete)
    assert {f"apivideo/{vid(i)}" for i in range(250) if i not in (200,)} <= {e.asset_id for e in entries}


# --- item 5: every caption page --------------------------------------------------------------------


def test_every_page_of_a_videos_captions_is_read(library, monkeypatch):
    """A video with more captions than a page holds (30, pages of 25) keeps every one of them."""
    sim, source = library(library_size=5, library_captions_every=3)
    languages = [a + b for a in "abc" for b in "abcdefghij"]  # 30 two-letter tags

    def many(self, shelf, video):
        return [{**CAPTION, "srclang": lang, "uri": f"/videos/{vid(1)}/captions/{lang}"} for lang in languages]

    monkeypatch.setattr(apivideo_library.Library, "_library_captions", many)
    source.caption_page_size = 25  # the list's default page
    [row] = source.video(vid(1)).entries
    assert [t.language for t in row.tracks if t.kind != "chapters"] == languages
    asked = sim.requests_log(ops=("src_captions",))
    assert len(asked) == 2


CAPTION = {"src": "https://vod.api.video/vod/x/captions/x.vtt", "languageName": "x", "default": False}


def _caption_pages(monkeypatch, pages):
    """The simulator's caption list answering `pages(call, captions)` instead of the page asked for."""

    def answer(call, path, items):
        return pages(call, items)

    monkeypatch.setattr(apivideo_library, "paged", answer)


def test_a_caption_list_that_repeats_a_page_or_runs_empty_stops_with_the_reason(library, monkeypatch):
    _sim, source = library(library_size=5, library_captions_every=3)
    source.caption_page_size = 1
    stuck = {"currentPage": 1, "pageSize": 1, "pagesTotal": 5, "itemsTotal": 5, "currentPageItems": 1, "links": []}
    _caption_pages(monkeypatch, lambda call, items: (items[:1], stuck))  # page 1 whatever was asked
    with pytest.raises(SourceError) as repeated:
        source.video(vid(1))
    assert "caption list of video vi00000000000000000001 does not end: page 2 repeats" in repeated.value.reason
    _caption_pages(monkeypatch, lambda call, items: ([] if "currentPage=2" in call.query else items[:1], stuck))
    with pytest.raises(SourceError) as empty:
        source.video(vid(1))
    assert "page 2 is empty while the list says 5 pages" in empty.value.reason


# --- item 7: privacy never widens ------------------------------------------------------------------


@pytest.mark.parametrize("public", ["missing", "yes", None, 1])
def test_a_video_whose_public_is_not_a_boolean_is_private_with_a_note(library, monkeypatch, public):
    _sim, source = library(library_size=3)
    render = apivideo_library.Library.render_library

    def odd(self, shelf, video):
        doc = render(self, shelf, video)
        if public == "missing":
            del doc["public"]
        else:
            doc["public"] = public
        return doc

    monkeypatch.setattr(apivideo_library.Library, "render_library", odd)
    [row] = source.video(vid(1)).entries
    assert row.privacy == "private" and row.metadata["privacy_note"] == PRIVACY_NOTE
    assert source.resolve(parse_ref(f"apivideo://{vid(1)}")).privacy == "private"


def test_resolve_says_the_privacy_it_reads_at_the_create(library):
    sim, source = library(library_size=3)
    [row] = source.video(vid(2)).entries
    assert row.privacy == "public"
    sim.change_library(delete=[], make_private=[2])  # made private after the inventory
    resolved = source.resolve(parse_ref(f"apivideo://{vid(2)}"))
    assert resolved.kind is ResolutionKind.READY and resolved.privacy == "private" and "avh=" in resolved.url


# --- item 3: a delta misses nothing still encoding -------------------------------------------------


def test_a_video_still_encoding_is_pending_and_the_next_sweep_lists_it_once_done(
    library, monkeypatch, tmp_path, capsys
):
    sim, _ = library(library_size=40, library_unfetchable_every=10)  # 19 and 39 processing; 9 and 29 no MP4
    monkeypatch.setenv("APIVIDEO_API_KEY", API_KEY)
    monkeypatch.delenv("MIGRATOR_SOURCE_CREDENTIALS", raising=False)
    monkeypatch.chdir(tmp_path)
    base = ["inventory", "--from", "apivideo", "--source-url", sim.url, "--no-tracks", "--mark-file", "m.json"]
    assert main([*base, "-o", "all.jsonl"]) == 0
    assert "pending         2" in capsys.readouterr().err
    held = json.loads((tmp_path / "m.json").read_text())["apivideo"]["pending"]
    assert {held[k]["reason"] for k in held} == {
        "still uploading to api.video (ingest: uploading)",  # 19
        "still encoding at api.video (not playable yet)",  # 39
    }
    sim.patch_config({"library_processing_done": True})  # they finished; the mark is past them
    assert main([*base, "--since", "last", "-o", "delta.jsonl"]) == 0
    ids = {json.loads(line)["id"] for line in (tmp_path / "delta.jsonl").read_text().splitlines()}
    assert {f"apivideo/{vid(19)}", f"apivideo/{vid(39)}"} <= ids
    assert json.loads((tmp_path / "m.json").read_text())["apivideo"].get("pending", {}) == {}
