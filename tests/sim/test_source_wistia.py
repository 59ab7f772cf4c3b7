"""Wistia as a source: the "wistia" simulator profile (Wistia's Data API as its OpenAPI file describes it,
wistia/wistia-typescript-sdk) and migrator.sources.wistia, which lists it by cursor, names what it
cannot fetch, carries its captions, and resolves the original file at the create.

Wistia publishes no Python SDK, and its official TypeScript SDK (@wistia/wistia-api-client) is not on
the registry this machine reaches; the shapes checked here are those of its OpenAPI file: a media list
that is a bare JSON array with a `cursor` per media under cursor paging, `assets[]` with an
OriginalFile, captions in ISO 639-2 with their SRT text, the `archived` filter, the release named in
`X-Wistia-API-Version` (the SDK's AddVersionHeaderHook sends it on every request), and a 429 (or the
older 503) with Retry-After. The simulator notes in its request log the release each answer was served
as, which is what these tests read back.
"""

from __future__ import annotations

import io
import time

import pytest
from migrator.sources import ResolutionKind, SourceThrottled, Unfetchable, build, parse_ref
from migrator.sources.wistia import API_VERSION, ARCHIVED, ARCHIVED_PASS, NO_ORIGINAL, STILL_PROCESSING
from migrator_cli.sweep import read_mark, sweep

TOKEN = "wistia-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("wistia", token=TOKEN, **{"library_size": 230, **config})
        # rate_per_s 0: no pacing of our own, so the tests run at the simulator's pace (limits are tried below).
        return sim, build("wistia", lambda: {"token": TOKEN}, sim.url + "/modern", patient=True, rate_per_s=0)

    return start


def listed(source, since=None, tracks=True):
    """Every entry and every pending media of every page, and how many pages it took."""
    entries, pending, cursor, pages = [], [], None, 0
    while True:
        page = source.page(cursor, since, tracks)
        entries, pending, pages, cursor = entries + page.entries, pending + page.pending, pages + 1, page.cursor
        if cursor is None:
            return entries, pending, pages


def test_the_media_list_is_wistias_bare_array_with_cursors(library, web):
    sim, _ = library(library_size=5)
    medias = web.get(f"{sim.url}/modern/medias", params={"cursor[enabled]": 1, "per_page": 2}, headers=HEADERS).json()
    assert isinstance(medias, list) and len(medias) == 2 and all(m["cursor"] for m in medias)
    after = web.get(
        f"{sim.url}/modern/medias", params={"cursor[after]": medias[-1]["cursor"], "per_page": 2}, headers=HEADERS
    ).json()
    assert [m["hashed_id"] for m in after] != [m["hashed_id"] for m in medias]
    assert medias[0]["assets"][0]["type"] == "OriginalFile" and medias[0]["status"] == "ready"
    refused = web.get(f"{sim.url}/modern/medias", params={"sort_by": "updated", "cursor[enabled]": 1}, headers=HEADERS)
    assert refused.status_code == 400  # cursor paging sorts by id or created only
    assert web.get(f"{sim.url}/modern/medias").status_code == 401


def test_the_archived_filter_lists_only_the_archived_or_only_the_active_medias(library, web):
    """The list's `archived`: "True will return only archived medias, while false will return only active"."""
    sim, _ = library(library_size=100, library_unfetchable_every=5)  # archived: videos 19, 44, 69, 94
    url = f"{sim.url}/modern/medias"
    archived = web.get(url, params={"archived": "true", "cursor[enabled]": 1}, headers=HEADERS).json()
    active = web.get(url, params={"archived": "false"}, headers=HEADERS).json()
    assert [m["hashed_id"] for m in archived] == ["w00000000j", "w000000018", "w00000001x", "w00000002m"]
    assert all(m["archived"] for m in archived) and len(active) == 96 and not any(m["archived"] for m in active)
    second = web.get(url, params={"archived": "true", "cursor[after]": archived[0]["cursor"]}, headers=HEADERS)
    assert [m["hashed_id"] for m in second.json()] == ["w000000018", "w00000001x", "w00000002m"]
    newest = web.get(url, params={"archived": "true", "sort_direction": 0, "per_page": 3, "page": 2}, headers=HEADERS)
    assert [m["hashed_id"] for m in newest.json()] == ["w00000000j"]
    assert len(web.get(url, headers=HEADERS).json()) == 100  # unasked: every media (undocumented; ours)


def test_the_simulator_serves_the_release_a_request_names_and_the_latest_to_one_that_names_none(library, web):
    """The migration guide: a date without a release gets the one before it, an unversioned request the most
    recent stable release; the request log says which each answer was served as."""
    sim, _ = library(library_size=1)
    url = f"{sim.url}/modern/medias/w000000000"
    for asked in ("2026-01", "2026-02", "2026-03", "2031-12", "2025-11", None):
        extra = {"X-Wistia-API-Version": asked} if asked else {}
        assert web.get(url, headers={**HEADERS, **extra}).status_code == 200
    assert web.get(url, headers={**HEADERS, "X-Wistia-API-Version": "2026.03"}).status_code == 400
    served = [(r["api_version_asked"], r["api_version"]) for r in sim.requests_log(ops=None)]
    assert served == [
        ("2026-01", "2026-01"),
        ("2026-02", "2026-01"),  # no release of its own: the one before
        ("2026-03", "2026-03"),
        ("2031-12", "2026-03"),
        ("2025-11", "2026-01"),  # before any supported: the least recent still supported
        (None, "2026-03"),  # unversioned: the most recent stable release
        ("2026.03", None),
    ]


def test_every_request_of_a_listing_and_a_resolve_names_the_release_it_was_written_against(library):
    sim, source = library(library_size=12, library_captions_every=3)
    listed(source)
    source.resolve(parse_ref("wistia://w000000001"))
    source.resolve(parse_ref("wistia://w000000002/captions/eng"))
    log = sim.requests_log(ops=None)
    assert {r["op"] for r in log} == {"list", "get", "src_captions", "src_caption", "src_customizations"}
    assert {(r["api_version_asked"], r["api_version"]) for r in log} == {(API_VERSION, API_VERSION)}


def test_the_library_is_listed_by_cursor_each_media_once(library):
    _sim, source = library(library_captions_every=3)
    entries, pending, pages = listed(source)
    assert pages == 4 and len(entries) == 230 and len({e.asset_id for e in entries}) == 230 and pending == []
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


def test_what_can_never_be_fetched_is_named_and_what_is_processing_is_held_for_the_next_sweep(library):
    _sim, source = library(library_unfetchable_every=10)
    entries, pending, _ = listed(source, tracks=False)
    reasons = sorted({e.reason for e in entries if isinstance(e, Unfetchable)})
    assert reasons == sorted(
        {
            "failed processing at the source (Wistia status failed)",
            "not a video (Wistia media type Image)",
            ARCHIVED,
            NO_ORIGINAL,
        }
    )
    # 23 faults, 5 kinds in turn from video 9: processing at 9, 59, 109, 159, 209; archived at 39, 89, 139, 189.
    assert [int(p.source_url[-9:], 36) for p in pending] == [9, 59, 109, 159, 209]
    assert {p.reason for p in pending} == {STILL_PROCESSING} and all(p.title for p in pending)
    assert sum(isinstance(e, Unfetchable) for e in entries) == 18 and len(entries) == 225
    # The archived ones come from the second pass, after every active media.
    archived = [isinstance(e, Unfetchable) and e.reason == ARCHIVED for e in entries]
    assert archived[-4:] == [True] * 4 and True not in archived[:-4]


def test_a_delta_sweep_asks_again_for_the_medias_it_left_processing(library, tmp_path):
    """Sources item 3: the next sweep asks Wistia for each media the last one saw processing (`video(id)`),
    whatever its mark: the simulator finishes them in between (library_processing_done)."""
    sim, source = library(library_size=40, library_unfetchable_every=10)  # processing: 9
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, tracks=False, out=io.StringIO())
    assert first.pending == 1 and first.rows == 36 and first.unfetchable == 3
    sim.patch_config({"library_processing_done": True})
    since = read_mark(marks, "wistia") + 1  # past every change: the listing itself finds nothing new
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=since, tracks=False, out=io.StringIO())
    assert delta.pending == 0 and delta.rows == 1
    assert (tmp_path / "delta.jsonl").read_text().count('"wistia/w000000009"') == 1
    [asked] = sim.requests_log(ops=["get"])  # the one media, by id
    assert asked["status"] == 200 and asked["api_version"] == API_VERSION


def test_one_media_is_asked_for_by_id(library):
    _sim, source = library(library_unfetchable_every=10, library_captions_every=3)
    [row] = source.video("w000000001").entries
    assert row.asset_id == "wistia/w000000001" and [t.language for t in row.tracks] == ["en", "fr"]
    processing = source.video("w000000009")
    assert processing.entries == [] and [p.reason for p in processing.pending] == [STILL_PROCESSING]
    assert [e.reason for e in source.video("w000000013").entries] == [ARCHIVED]  # video 39
    gone = source.video("wzzzzzzzzz")
    assert gone.entries == [] and gone.pending == []


def test_resolve_gives_the_original_file_and_the_captions_text(library, web):
    _sim, source = library(library_captions_every=3, library_unfetchable_every=10)
    ready = source.resolve(parse_ref("wistia://w000000000"))
    assert ready.kind is ResolutionKind.READY and "/_media/wistia/0/original.bin" in ready.url
    assert ready.privacy is None  # a Wistia media says nothing of privacy
    assert web.get(ready.url, headers={"Range": "bytes=0-1023"}).status_code == 206
    caption = source.resolve(parse_ref("wistia://w000000001/captions/eng"))
    assert caption.kind is ResolutionKind.READY and caption.url is None
    assert caption.text_format == "vtt" and caption.text.startswith("WEBVTT")
    processing = source.resolve(parse_ref("wistia://w000000009"))
    assert processing.kind is ResolutionKind.PREPARING and processing.reason == STILL_PROCESSING
    assert source.resolve(parse_ref("wistia://wzzzzzzzzz")).reason.startswith("not found at the source")


def test_a_delta_sweep_sorts_by_update_and_stops_at_the_mark(library):
    _sim, source = library()
    mark = 1_577_836_800 + 225 * 60 + 3600  # video 225's change
    changed, _pending, pages = listed(source, since=mark, tracks=False)
    assert [e.metadata["wistia_id"] - 1000 for e in changed] == list(range(229, 224, -1)) and pages == 2


def test_a_resumed_listing_goes_on_in_the_pass_its_cursor_names(library):
    _sim, source = library(library_size=250, library_unfetchable_every=2)  # archived: 7, 17, 27, ...
    first = source.page(ARCHIVED_PASS)
    assert len(first.entries) == 25 and {e.reason for e in first.entries} == {ARCHIVED} and first.cursor is None


def test_the_rate_limit_is_waited_out(library):
    _sim, source = library(library_size=300, read_rate=2, read_burst=1)  # 3 pages: 429s with Retry-After
    entries, _pending, _ = listed(source, tracks=False)
    assert len(entries) == 300 and source.throttled >= 1


def test_the_older_documented_503_with_retry_after_is_a_pause_not_a_failure(launch):
    """The earlier text: past the limit "HTTP error 503 Service Unavailable" with Retry-After. A listing waits it
    out; the uploader is told THROTTLED (no attempt spent), never TRANSIENT."""
    sim = launch("wistia", token=TOKEN, library_size=5, unavailable_rate=0.5, seed=7)
    sim.patch_config({"unavailable_retry_after_fraction": 1.0, "unavailable_retry_after_max_s": 2})
    waits: list[float] = []
    patient = build(
        "wistia", lambda: {"token": TOKEN}, sim.url + "/modern", patient=True, rate_per_s=0, sleep=waits.append
    )
    entries, _pending, _ = listed(patient, tracks=False)
    refused = [r for r in sim.requests_log(ops=None) if r["status"] == 503]
    assert len(entries) == 5 and refused and patient.throttled == len(refused)
    assert waits == [r["retry_after_s"] for r in refused]  # each the Retry-After it was told
    sim.patch_config({"unavailable_rate": 1.0})
    impatient = build("wistia", lambda: {"token": TOKEN}, sim.url + "/modern")
    with pytest.raises(SourceThrottled) as held:  # the Resolver hands it on as its resolution
        impatient.resolve(parse_ref("wistia://w000000000"))
    told = held.value.resolution()
    assert told.kind is ResolutionKind.THROTTLED and told.retry_after in (1.0, 2.0)


def test_a_listing_keeps_to_wistias_documented_rate(library):
    sim, _ = library(library_size=5, library_captions_every=1)
    paced = build("wistia", lambda: {"token": TOKEN}, sim.url + "/modern", patient=True)  # 600 a minute
    started = time.monotonic()
    entries, _pending, _ = listed(paced)
    # 15 requests at 10/s: 2 lists (active, archived), 5 captions, 5 customizations, 3 folders' orders
    assert len(entries) == 5 and paced.requests == 15 and time.monotonic() - started >= 1.4
