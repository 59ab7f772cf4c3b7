"""Vimeo as a source: the "vimeo" simulator profile driven by Vimeo's own SDK (PyVimeo 1.1.2) and by
migrator.sources.vimeo, which lists it, names what it cannot fetch, and resolves links at the create.

PyVimeo is a thin client (paths, the bearer token, the versioned Accept header): it checks that
the simulator answers Vimeo's paths and auth as Vimeo does. The rest checks our source against
the documented shapes the simulator serves: paging, download links that expire, text tracks,
rate-limit headers with an ISO 8601 reset, and what makes a video unfetchable.
"""

from __future__ import annotations

import time

import pytest
import requests
import vimeo
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources.vimeo import NO_FILES, STILL_PROCESSING

from tests.sim.support import list_all

TOKEN = "vimeo-pat"


@pytest.fixture
def library(launch):
    def start(**config):
        config = {"token": TOKEN, "library_size": 250, **config}
        sim = launch("vimeo", **config)
        return sim, build("vimeo", lambda: {"token": TOKEN}, sim.url, patient=True)

    return start


def test_pyvimeo_lists_the_library_with_vimeo_paging(library):
    sim, _ = library(library_size=30)
    client = vimeo.VimeoClient(token=TOKEN)
    client.API_ROOT = sim.url
    first = client.get("/me/videos", params={"per_page": 10, "sort": "date", "direction": "asc"}).json()
    assert first["total"] == 30 and first["page"] == 1 and len(first["data"]) == 10
    assert first["paging"]["next"].startswith("/me/videos?") and first["paging"]["previous"] is None
    following = client.get(first["paging"]["next"]).json()  # the next page, as the API names it
    assert following["page"] == 2 and following["data"][0]["uri"] != first["data"][0]["uri"]
    video = client.get(first["data"][0]["uri"]).json()
    assert video["name"] == first["data"][0]["name"] and video["download"][0]["quality"] == "source"
    refused = vimeo.VimeoClient(token="wrong")
    refused.API_ROOT = sim.url
    answer = refused.get("/me/videos")
    assert answer.status_code == 401 and answer.json()["error_code"] == 8003


def test_the_library_is_listed_whole_each_video_once_with_what_it_is(library):
    _sim, source = library(library_captions_every=4, library_private_every=5)
    entries, pages = list_all(source)
    assert pages == 3 and len(entries) == 250
    assert len({e.asset_id for e in entries}) == 250
    first = entries[0]
    assert first.asset_id == "vimeo/700000000" and first.source_url == "vimeo://700000000"
    assert first.title == "Library video 000000" and first.tags == ("series-0", "library", "featured")
    assert first.created_at == "2020-01-01T00:00:00Z" and first.folder == "Marketing" and first.size_bytes > 0
    assert first.privacy == "private" and entries[1].privacy == "public"  # privacy.view nobody / anybody
    assert first.metadata["source_file"] == "source"  # the original as uploaded, not a rendition
    odd = entries[3]
    assert odd.title.startswith("Vidéo « spéciale » n°3") and "🎬" in odd.title
    with_tracks = [e for e in entries if e.tracks]
    assert len(with_tracks) == len(range(1, 250, 4))  # every fourth, from video 1
    track = with_tracks[0].tracks[0]
    assert track.url.startswith("vimeo://") and "/texttracks/" in track.url
    assert (track.language, track.kind, track.name) == ("en", "captions", "English")
    assert with_tracks[0].tracks[1].kind == "subtitles"
    assert all("://" in e.source_url and not e.source_url.startswith("http") for e in entries)  # no link in a row


def test_what_can_never_be_fetched_is_named_with_its_reason_and_what_is_still_transcoding_is_held(library):
    _sim, source = library(library_unfetchable_every=10)
    entries, pending = [], []
    cursor = None
    while True:
        page = source.page(cursor)
        entries, pending, cursor = entries + page.entries, pending + page.pending, page.cursor
        if cursor is None:
            break
    unfetchable = [e for e in entries if isinstance(e, Unfetchable)]
    assert len(unfetchable) == 17 and len(pending) == 8  # 25 faults, the 8 still transcoding held for later
    reasons = {e.reason for e in unfetchable}
    assert reasons == {NO_FILES, "failed at the source (Vimeo status transcoding_error)"}
    assert {e.reason for e in pending} == {STILL_PROCESSING} and all(e.title for e in unfetchable + pending)


def test_resolve_gives_a_fresh_link_that_expires_and_names_the_same_reasons(library, web):
    sim, source = library(library_unfetchable_every=10, link_ttl_s=2)
    ready = source.resolve(parse_ref("vimeo://700000000"))
    assert ready.kind is ResolutionKind.READY and ready.expires_at is not None
    assert 0 < ready.expires_at - time.time() <= 3
    assert web.get(ready.url).status_code == 200
    assert web.head(ready.url).headers["Content-Length"] == str(sim.config.media_bytes)
    assert web.get(ready.url, headers={"Range": "bytes=0-1023"}).status_code == 206
    assert web.get(ready.url.replace("sig=", "sig=0")).status_code == 403  # a forged link
    time.sleep(2.2)
    assert web.get(ready.url).status_code == 403  # expired, as a CDN refuses it
    again = source.resolve(parse_ref("vimeo://700000000"))
    assert again.url != ready.url and web.get(again.url).status_code == 200  # minted afresh
    no_files = source.resolve(parse_ref("vimeo://700000009"))
    assert no_files.kind is ResolutionKind.UNFETCHABLE and no_files.reason == NO_FILES
    gone = source.resolve(parse_ref("vimeo://1"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and gone.reason.startswith("not found at the source")


def test_a_video_deleted_or_made_private_after_the_inventory_is_answered_at_resolve(library, web):
    sim, source = library()
    assert source.resolve(parse_ref("vimeo://700000004")).kind is ResolutionKind.READY
    web.post(f"{sim.url}/_sim/library", json={"delete": [4]}).raise_for_status()
    gone = source.resolve(parse_ref("vimeo://700000004"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and "deleted" in gone.reason


def test_a_track_reference_resolves_to_its_own_expiring_link(library, web):
    _sim, source = library(library_captions_every=4, link_ttl_s=60)
    track = source.resolve(parse_ref("vimeo://700000001/texttracks/1"))
    assert track.kind is ResolutionKind.READY and track.expires_at is not None
    assert web.get(track.url).text.startswith("WEBVTT")


def test_rate_limit_headers_with_an_iso_reset_and_429s_are_waited_out(library):
    # A bucket of one: every answer says nothing remains, and when it is full again (an ISO 8601 time).
    _sim, source = library(library_size=300, read_rate=5, read_burst=1, rate_headers=True)
    started = time.monotonic()
    entries, pages = list_all(source, tracks=False)
    assert len(entries) == 300 and pages == 4  # pages overlap by 5 or more: 100, 90, 86 and 24 new videos
    assert source.throttled >= 2 and time.monotonic() - started >= 0.3  # the spent quota was waited out


def test_an_impatient_source_says_throttled_instead_of_waiting(library):
    sim, _ = library(read_rate=0.01, read_burst=1)
    impatient = build("vimeo", lambda: {"token": TOKEN}, sim.url)
    assert impatient.resolve(parse_ref("vimeo://700000000")).kind is ResolutionKind.READY
    with pytest.raises(Exception) as caught:
        impatient.resolve(parse_ref("vimeo://700000001"))
    assert caught.value.resolution().kind is ResolutionKind.THROTTLED and caught.value.retry_after >= 1


def test_a_delta_sweep_lists_only_what_changed_since_the_mark(library):
    _sim, source = library()
    _entries, _ = list_all(source, tracks=False)
    # Video i changed at 2020-01-01 + i minutes + 1 h: since video 239's change, 240..249 and 239 itself.
    mark = 1_577_836_800 + 239 * 60 + 3600
    changed, pages = list_all(source, since=mark, tracks=False)
    assert [e.asset_id for e in changed] == [f"vimeo/{700000000 + i}" for i in range(249, 238, -1)]
    assert pages == 1


def test_wrong_credentials_stop_the_listing_with_a_reason_and_no_secret(library):
    sim, _ = library()
    source = build("vimeo", lambda: {"token": "not-the-token"}, sim.url, patient=True)
    with pytest.raises(Exception) as caught:
        source.page(None)
    assert "HTTP 401" in caught.value.reason and "not-the-token" not in caught.value.reason


def test_links_cannot_be_fetched_without_the_signature(library):
    _sim, source = library()
    link = source.resolve(parse_ref("vimeo://700000000")).url
    bare = link.split("?")[0]
    assert requests.get(bare, timeout=5).status_code == 403


def pyvimeo(sim, token: str = TOKEN) -> vimeo.VimeoClient:
    """Vimeo's own SDK pointed at the simulator."""
    client = vimeo.VimeoClient(token=token)
    client.API_ROOT = sim.url
    return client


# The narrowest of our privacies that still lets no one watch who could not on Vimeo (sources item 7).
NARROWEST = {
    "anybody": "public",
    "unlisted": "unlisted",
    "nobody": "private",
    "password": "private",
    "contacts": "private",
    "users": "private",
    "disable": "private",
}


def test_every_vimeo_privacy_becomes_the_narrowest_that_holds_it_with_a_note_where_it_changed(library):
    """Sources item 7: `disable` (hidden from vimeo.com, playable only where embedded) was sent as unlisted, which
    every target plays as public."""
    sim, source = library(library_size=30, library_private_every=5)
    rows, _ = list_all(source, tracks=False)
    client = pyvimeo(sim)
    views = {}
    for row in rows:
        view = client.get(f"/videos/{row.metadata['source_id']}").json()["privacy"]["view"]  # as Vimeo holds it
        views[view] = row
        assert row.privacy == NARROWEST[view]
        note = row.metadata.get("privacy_note")
        if view in ("anybody", "unlisted", "nobody"):
            assert note is None  # kept as it was
        else:
            assert note.startswith(f"Vimeo privacy.view {view}: ") and note.endswith("carried as private")
    assert set(views) == set(NARROWEST)  # the library shows every value
    assert "only where it is embedded" in views["disable"].metadata["privacy_note"]


def test_resolve_reads_the_privacy_again_so_a_video_made_private_since_is_not_created_public(library, web):
    sim, source = library(library_size=10)
    assert source.resolve(parse_ref("vimeo://700000001")).privacy == "public"
    web.post(f"{sim.url}/_sim/library", json={"make_private": [1]}).raise_for_status()
    assert pyvimeo(sim).get("/videos/700000001").json()["privacy"]["view"] != "anybody"
    again = source.resolve(parse_ref("vimeo://700000001"))
    assert again.kind is ResolutionKind.READY and again.privacy == "private"


def test_inactive_text_tracks_are_carried_after_the_active_ones_marked_and_noted(library, web):
    """Sources item 10: a track its owner deactivated (`active: false`) was dropped; it is the owner's content."""
    sim, source = library(library_size=10, library_captions_every=4)
    held = pyvimeo(sim).get("/videos/700000001/texttracks").json()["data"]
    inactive = [t for t in held if t["active"] is False]
    assert len(held) == 3 and len(inactive) == 1  # the simulator keeps an older English file, deactivated
    [row] = [e for e in list_all(source)[0] if e.asset_id == "vimeo/700000001"]
    assert [(t.language, t.kind, t.name) for t in row.tracks] == [
        ("en", "captions", "English"),
        ("fr", "subtitles", "Français"),
        ("en", "captions", "English (inactive on Vimeo)"),  # last: a one-file-per-language target sends the first
    ]
    assert row.tracks[2].url == f"vimeo://700000001/texttracks/{inactive[0]['uri'].rsplit('/', 1)[1]}"
    assert "1 text track(s) inactive on Vimeo" in row.metadata["texttracks_note"]
    resolved = source.resolve(parse_ref(row.tracks[2].url))
    assert resolved.kind is ResolutionKind.READY and web.get(resolved.url).text.startswith("WEBVTT")


def test_stats_plays_is_asked_for_by_name_and_a_null_count_is_no_usage_not_zero(library):
    """Video.stats.plays (vimeo.json 3.4), nullable; the JSON filter (`fields`) answers only what is named."""
    from infra.sim import library_usage
    from infra.sim.platforms.vimeo import index_of

    sim, source = library(library_size=24)
    client = vimeo.VimeoClient(token=TOKEN)
    client.API_ROOT = sim.url
    answer = client.get("/me/videos", params={"per_page": 24, "fields": "uri,stats.plays"}).json()["data"]
    hidden = [v for v in answer if v["stats"]["plays"] is None]
    assert 0 < len(hidden) < len(answer) and all(set(v) == {"uri", "stats"} for v in answer)
    assert "stats" not in client.get("/me/videos", params={"fields": "uri"}).json()["data"][0]
    entries, _pages = list_all(source, tracks=False)
    rows = {e.asset_id: e for e in entries if not isinstance(e, Unfetchable)}
    assert rows
    for asset_id, row in rows.items():
        index = index_of(asset_id.removeprefix("vimeo/"))
        if library_usage.hidden(index):
            assert row.usage is None  # not known: never a 0 that a triage would read as never played
        else:
            assert row.usage.plays == library_usage.plays(index) and row.usage.counted_by == "vimeo stats.plays"
            assert row.usage.last_played_at is None and row.usage.read_at.endswith("Z")
