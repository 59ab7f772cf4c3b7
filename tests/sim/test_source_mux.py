"""Mux as a source: the "mux" simulator's library side driven by mux-python 5.1.2 (whose models check every
enum: asset and master status, track types and statuses, playback policies) and by migrator.sources.mux,
which lists assets newest first, names what it cannot fetch (test assets too), keeps what is unfinished
pending for the next sweep, asks for master access and waits while Mux prepares the file, and fetches a
signed asset's text tracks with a token of the credentials' signing key."""

from __future__ import annotations

import io
import json
import time

import mux_python
import pytest
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources.mux import (
    CAPTIONS_PREPARING,
    LIVE,
    NO_SIGNING_KEY,
    PREPARING,
    STILL_PROCESSING,
    TEST_ASSET,
)
from migrator_cli.sweep import read_mark, sweep

from tests.sim.support import list_all

TEST_ID = "MuxAsset" + "39".zfill(24)

ID, SECRET = "mux-src-id", "mux-src-secret"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("mux", token_id=ID, token_secret=SECRET, **{"library_size": 230, "prepare_s": 0.5, **config})
        source = build("mux", lambda: {"token_id": ID, "token_secret": SECRET}, sim.url, patient=True, rate_per_s=0)
        return sim, source

    return start


def asset(index: int) -> str:
    return "MuxAsset" + str(index).zfill(24)


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
    # What a site's embeds name (a playback id, of any policy): kept for migrator rewrite to find the asset by.
    assert newest.metadata["mux_playback_ids"] == ["PB" + "229".zfill(30)]
    assert private.metadata["mux_playback_ids"] == ["SG" + "225".zfill(30)]
    captioned = next(e for e in entries if e.tracks)
    assert [(t.language, t.kind, t.closed_captions) for t in captioned.tracks] == [
        ("en", "captions", True),
        ("fr", "subtitles", False),
    ]


def list_with_pending(source, since=None) -> tuple[list, list]:
    """Every entry and every pending one (still processing at Mux) of every page."""
    entries, pending, cursor = [], [], None
    while True:
        page = source.page(cursor, since)
        entries, pending, cursor = entries + page.entries, pending + page.pending, page.cursor
        if cursor is None:
            return entries, pending


def test_what_can_never_be_fetched_is_named_and_what_is_unfinished_is_pending(library):
    _sim, source = library(library_unfetchable_every=10)
    entries, pending = list_with_pending(source)
    reasons = {e.reason for e in entries if isinstance(e, Unfetchable)}
    assert reasons == {"failed at the source (Mux asset errored: The input file could not be processed)", TEST_ASSET}
    assert {p.reason for p in pending} == {STILL_PROCESSING, LIVE}
    assert len(entries) + len(pending) == 230 and not {e.asset_id for e in entries} & {p.asset_id for p in pending}


def test_a_test_asset_is_named_apart_as_mux_shows_it(library):
    sim, source = library(library_size=40, library_unfetchable_every=10)  # 9 errored, 19, 29, 39 a test asset
    test = _sdk(sim.url).get_asset(TEST_ID).data
    assert test.test is True and test.duration == 10 and test.status == "ready"
    entries, _ = list_all(source)
    assert [e for e in entries if e.asset_id == "mux/" + TEST_ID] == [
        Unfetchable("mux/" + TEST_ID, "mux://" + TEST_ID, TEST_ASSET, "Library video 000039")
    ]
    assert source.resolve(parse_ref("mux://" + TEST_ID)).reason == TEST_ASSET
    assert sim.stats()["prepares_asked"] == 0  # no master asked of it


def test_a_delta_sweep_lists_again_what_the_last_one_saw_still_processing_or_recording(library, tmp_path):
    sim, source = library(library_size=40, library_unfetchable_every=10)  # 19 preparing, 29 still recording
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    written = {json.loads(line)["id"] for line in (tmp_path / "all.jsonl").read_text().splitlines()}
    assert first.pending == 2 and len(written) == 36 and f"mux/{asset(19)}" not in written
    sim.patch_config({"library_processing_done": True})  # both finished between the sweeps
    reads = sim.stats()["source_reads"]
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=read_mark(marks, "mux") + 1)
    rows = [json.loads(line) for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == [f"mux/{asset(19)}", f"mux/{asset(29)}"] and delta.pending == 0
    assert sim.stats()["source_reads"] - reads == 3  # each asked for by id, and one page that finds nothing new
    assert _sdk(sim.url).get_asset(asset(29)).data.is_live is False  # the recording has ended, as Mux shows it


def test_an_asset_whose_text_track_is_still_being_made_waits_for_it(library):
    sim, source = library(library_size=12, library_captions_every=4, library_captions_processing=True)
    captioned = asset(1)  # every fourth from video 1
    assert {t.status for t in _sdk(sim.url).get_asset(captioned).data.tracks if t.type == "text"} == {"preparing"}
    page = source.video(captioned)
    assert page.entries == [] and [p.reason for p in page.pending] == [CAPTIONS_PREPARING]
    assert source.video(captioned, tracks=False).entries[0].tracks == ()  # not asked for: listed as it is
    sim.patch_config({"library_captions_processing": False})
    (row,) = source.video(captioned).entries
    assert [t.language for t in row.tracks] == ["en", "fr"] and source.video("NoSuchAsset").entries == []


def test_resolve_says_the_privacy_mux_shows_at_the_create(library):
    sim, source = library(library_size=10, prepare_s=0)
    ref = parse_ref("mux://" + asset(4))
    source.resolve(ref)  # master access asked for
    assert source.resolve(ref).privacy == "public"
    sim.change_library(delete=[], make_private=[4])  # signed playback only, since the listing
    ready = source.resolve(ref)
    assert ready.kind is ResolutionKind.READY and ready.privacy == "signed"
    assert [p.policy for p in _sdk(sim.url).get_asset(asset(4)).data.playback_ids] == ["signed"]


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


def test_a_text_track_of_public_playback_is_served_as_it_is(library, web):
    _sim, source = library(library_captions_every=2, library_private_every=3)  # video 1: public, captioned
    public = source.resolve(parse_ref(f"mux://{asset(1)}/tracks/TT000000010"))
    assert public.kind is ResolutionKind.READY and "token=" not in public.url
    assert web.get(public.url).text.startswith("WEBVTT")


def test_a_text_track_of_signed_playback_is_fetched_with_a_token_of_the_credentials_key(library, web):
    sim, keyless = library(library_captions_every=2, library_private_every=3)  # video 3: signed, captioned
    track = parse_ref(f"mux://{asset(3)}/tracks/TT000000030")
    refused = keyless.resolve(track)
    assert refused.kind is ResolutionKind.UNFETCHABLE and refused.reason == NO_SIGNING_KEY
    client = _sdk(sim.url).api_client
    key = mux_python.SigningKeysApi(client).create_signing_key().data  # made once, by the operator
    creds = {"token_id": ID, "token_secret": SECRET, "signing_key_id": key.id, "signing_private_key": key.private_key}
    source = build("mux", lambda: creds, sim.url, patient=True, rate_per_s=0)
    signed = source.resolve(track)
    assert signed.kind is ResolutionKind.READY and time.time() + 3500 < signed.expires_at <= time.time() + 3600
    pid = mux_python.PlaybackIDApi(client).get_asset_or_livestream_id(signed.url.split("/")[-3]).data
    assert (pid.policy, pid.object.type, pid.object.id) == ("signed", "asset", asset(3))
    assert web.get(signed.url).text.startswith("WEBVTT")
    assert web.get(signed.url.split("?")[0]).status_code == 403  # without the token
    mux_python.SigningKeysApi(client).delete_signing_key(key.id)
    assert web.get(signed.url).status_code == 403  # the key is gone at Mux: its tokens verify no more
    broken = build("mux", lambda: {**creds, "signing_private_key": "bm90IGEga2V5"}, sim.url, patient=True)
    assert broken.resolve(track).kind is ResolutionKind.DENIED and "bm90" not in broken.resolve(track).reason


def test_a_delta_sweep_stops_at_the_first_asset_created_before_the_mark(library):
    _sim, source = library()
    mark = 1_577_836_800 + 226 * 60  # video 226's creation
    changed, pages = list_all(source, since=mark)
    assert [e.metadata["passthrough"] for e in changed] == [f"library-{i}" for i in (229, 228, 227, 226)]
    assert pages == 1


def test_a_library_of_assets_all_still_being_made_is_listed_to_its_end(library, tmp_path):
    """Review 47, item 3: pages whose assets are all still being made (here every asset's text tracks are
    preparing) hold no row, and the listing guard took them for the empty pages of a stuck listing: "3 empty
    pages in a row" stopped the sweep of a library of 1,000. A page that held assets is not empty."""
    _sim, source = library(library_size=1000, library_captions_every=1, library_captions_processing=True)
    summary = sweep(source, tmp_path / "all.jsonl", out=io.StringIO())
    assert summary.done and summary.pages == 10 and summary.pending == 1000
    assert (tmp_path / "all.jsonl").read_text() == ""  # nothing written yet: each is asked for again next sweep
