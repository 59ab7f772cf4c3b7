"""Mux as a source: the "mux" simulator's library side driven by mux-python 5.1.2 (whose models check every
enum: asset and master status, track types) and by migrator.sources.mux, which lists assets newest
first, names what it cannot fetch, asks for master access and waits while Mux prepares the file."""

from __future__ import annotations

import time

import mux_python
import pytest
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources.mux import LIVE, PREPARING, STILL_PROCESSING

from tests.sim.support import list_all

ID, SECRET = "mux-src-id", "mux-src-secret"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("mux", token_id=ID, token_secret=SECRET, **{"library_size": 230, "prepare_s": 0.5, **config})
        source = build("mux", lambda: {"token_id": ID, "token_secret": SECRET}, sim.url, patient=True, rate_per_s=0)
        return sim, source

    return start


def _sdk(url: str) -> mux_python.AssetsApi:
    configuration = mux_python.Configuration(host=url)
    configuration.username, configuration.password = ID, SECRET
    return mux_python.AssetsApi(mux_python.ApiClient(configuration))


def test_the_sdk_reads_the_library_and_asks_for_master_access(library):
    sim, _ = library(library_size=30, library_captions_every=2)
    api = _sdk(sim.url)
    first = api.list_assets(limit=10)
    assert len(first.data) == 10 and first.next_cursor
    assert first.data[0].id == "MuxAsset" + "29".zfill(24)  # newest first
    following = api.list_assets(limit=10, cursor=first.next_cursor)
    assert following.data[0].id == "MuxAsset" + "19".zfill(24)
    asset = api.get_asset(first.data[0].id).data
    assert asset.status == "ready" and asset.meta.title == "Library video 000029" and asset.master_access == "none"
    assert [t.type for t in asset.tracks][:2] == ["video", "audio"]
    request = mux_python.UpdateAssetMasterAccessRequest(master_access="temporary")
    asked = api.update_asset_master_access(asset.id, request).data
    assert asked.master_access == "temporary" and asked.master.status == "preparing"
    time.sleep(0.6)
    ready = api.get_asset(asset.id).data
    assert ready.master.status == "ready" and ready.master.url.startswith(sim.url + "/_media/mux/29/master.mp4")


def test_the_library_is_listed_newest_first_with_privacy_and_tracks(library):
    _sim, source = library(library_captions_every=4, library_private_every=5)
    entries, pages = list_all(source)
    assert pages == 3 and len(entries) == 230 and len({e.asset_id for e in entries}) == 230
    newest = entries[0]
    assert newest.asset_id == "mux/MuxAsset" + "229".zfill(24) and newest.title == "Library video 000229"
    assert newest.metadata["passthrough"] == "library-229" and newest.metadata["external_id"] == "lib-229"
    private = next(e for e in entries if e.privacy == "signed")  # signed playback only
    assert private.asset_id.endswith("225".zfill(24))
    captioned = next(e for e in entries if e.tracks)
    assert [(t.language, t.kind, t.closed_captions) for t in captioned.tracks] == [
        ("en", "captions", True),
        ("fr", "subtitles", False),
    ]


def test_what_can_never_be_fetched_is_named(library):
    _sim, source = library(library_unfetchable_every=10)
    entries, _ = list_all(source)
    reasons = {e.reason for e in entries if isinstance(e, Unfetchable)}
    assert reasons == {
        "failed at the source (Mux asset errored: The input file could not be processed)",
        STILL_PROCESSING,
        LIVE,
    }


def test_resolve_asks_for_the_master_waits_while_it_is_prepared_then_hands_its_url(library, web):
    sim, source = library(prepare_s=0.4)
    ref = parse_ref("mux://MuxAsset" + "7".zfill(24))
    first = source.resolve(ref)
    assert first.kind is ResolutionKind.PREPARING and first.reason == PREPARING and first.retry_after == 30
    assert source.resolve(ref).kind is ResolutionKind.PREPARING  # asked once: the second only reads
    assert sim.stats()["prepares_asked"] == 1
    time.sleep(0.5)
    ready = source.resolve(ref)
    assert ready.kind is ResolutionKind.READY and web.get(ready.url).status_code == 200


def test_a_master_that_never_becomes_ready_stays_preparing(library):
    _sim, source = library(library_stuck_every=10, prepare_s=0.1)
    ref = parse_ref("mux://MuxAsset" + "2".zfill(24))  # every tenth from video 2 is stuck
    source.resolve(ref)
    time.sleep(0.3)
    assert source.resolve(ref).kind is ResolutionKind.PREPARING


def test_a_text_track_is_served_for_public_playback_and_refused_for_signed(library, web):
    _sim, source = library(library_captions_every=2, library_private_every=3)  # video 3: both
    public = source.resolve(parse_ref("mux://MuxAsset" + "1".zfill(24) + "/tracks/TT000000010"))
    assert public.kind is ResolutionKind.READY and web.get(public.url).text.startswith("WEBVTT")
    signed = source.resolve(parse_ref("mux://MuxAsset" + "3".zfill(24) + "/tracks/TT000000030"))
    assert signed.kind is ResolutionKind.UNFETCHABLE and "signed playback only" in signed.reason


def test_a_delta_sweep_stops_at_the_first_asset_created_before_the_mark(library):
    _sim, source = library()
    mark = 1_577_836_800 + 226 * 60  # video 226's creation
    changed, pages = list_all(source, since=mark)
    assert [e.metadata["passthrough"] for e in changed] == [f"library-{i}" for i in (229, 228, 227, 226)]
    assert pages == 1
