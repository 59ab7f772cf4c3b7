"""Cloudflare Stream as a source: the "cloudflare" simulator's library side driven by cloudflare 5.9.0 (its
pydantic models: `stream.list`, `stream.downloads.create/get`, `stream.captions.get`,
`stream.captions.language.vtt.get`) and by migrator.sources.cloudflare, which lists oldest first by
creation time, names signed-only and unfinished videos, and waits while Stream makes the MP4."""

from __future__ import annotations

import time

import cloudflare
import pytest
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources.cloudflare import SIGNED, STILL_PROCESSING

TOKEN, ACCOUNT = "cf-src-token", "0123456789abcdef0123456789abcdef"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch(
            "cloudflare", token=TOKEN, account_id=ACCOUNT, **{"library_size": 2300, "prepare_s": 0.4, **config}
        )
        creds = {"account_id": ACCOUNT, "api_token": TOKEN}
        return sim, build("cloudflare", lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def uid(index: int) -> str:
    return f"cf{index:030d}"


def test_the_sdk_lists_downloads_and_reads_captions(library):
    sim, _ = library(library_size=12, library_captions_every=3)
    client = cloudflare.Cloudflare(api_token=TOKEN, base_url=sim.url, max_retries=0)
    listed = list(client.stream.list(account_id=ACCOUNT, asc=True, limit=5))
    assert [v.uid for v in listed] == [uid(i) for i in range(5)] and listed[0].meta["name"] == "Library video 000000"
    assert listed[0].status.state == "ready" and listed[0].thumbnail_timestamp_pct == 0.25
    created = client.stream.downloads.create(identifier=uid(1), account_id=ACCOUNT)
    assert created.default.status == "inprogress"
    time.sleep(0.5)
    ready = client.stream.downloads.get(identifier=uid(1), account_id=ACCOUNT)
    assert ready.default.status == "ready" and ready.default.url.startswith(sim.url + "/_media/cloudflare/1/")
    captions = list(client.stream.captions.get(identifier=uid(1), account_id=ACCOUNT))  # every third from video 1
    assert [(c.language, c.label, c.status) for c in captions] == [
        ("en", "English", "ready"),
        ("fr", "Français", "ready"),
    ]
    vtt = client.stream.captions.language.vtt.get("fr", account_id=ACCOUNT, identifier=uid(1))
    assert vtt.startswith("WEBVTT")
    client.close()


def test_the_library_is_listed_a_thousand_at_a_time_with_the_count_left(library):
    _sim, source = library(library_private_every=50)
    first = source.page(None, tracks=False)
    assert len(first.entries) == 1000 and first.remaining == 1300 and first.cursor
    second = source.page(first.cursor, tracks=False)
    third = source.page(second.cursor, tracks=False)
    assert third.cursor is None and len(second.entries) == 1000 and len(third.entries) == 300
    everything = first.entries + second.entries + third.entries
    assert len({e.asset_id for e in everything}) == 2300
    video = everything[1]  # video 0 is private (every fiftieth): signed only
    assert video.title == "Library video 000001" and video.duration_s == 67.25 and video.size_bytes == 1_007_919
    assert video.poster_time_s == 16.812 and video.privacy == "public"  # a quarter in, as thumbnailTimestampPct says
    assert sum(isinstance(e, Unfetchable) and e.reason == SIGNED for e in everything) == 46  # private: signed only


def test_what_can_never_be_fetched_is_named(library):
    _sim, source = library(library_size=60, library_unfetchable_every=10)
    entries = source.page(None, tracks=False).entries
    assert {e.reason for e in entries if isinstance(e, Unfetchable)} == {
        SIGNED,
        STILL_PROCESSING,
        "failed at the source (Stream state error, ERR_MALFORMED_VIDEO)",
    }


def test_resolve_asks_for_the_mp4_waits_while_it_is_made_then_hands_it(library, web):
    sim, source = library(library_size=10, prepare_s=0.3)
    first = source.resolve(parse_ref(f"cloudflare://{uid(4)}"))
    assert first.kind is ResolutionKind.PREPARING and first.reason.startswith("Stream is preparing the MP4 download")
    assert sim.stats()["prepares_asked"] == 1
    time.sleep(0.4)
    ready = source.resolve(parse_ref(f"cloudflare://{uid(4)}"))
    assert ready.kind is ResolutionKind.READY and sim.stats()["prepares_asked"] == 1  # asked for once
    assert (
        web.head(ready.url).status_code == 200 and web.get(ready.url, headers={"Range": "bytes=0-9"}).status_code == 206
    )


def test_a_download_that_never_finishes_stays_preparing(library):
    _sim, source = library(library_size=10, library_stuck_every=5, prepare_s=0.1)
    ref = parse_ref(f"cloudflare://{uid(2)}")  # every fifth from video 2 is stuck
    source.resolve(ref)
    time.sleep(0.2)
    still = source.resolve(ref)
    assert still.kind is ResolutionKind.PREPARING and "50% done" in still.reason


def test_captions_are_listed_and_resolve_to_their_text(library):
    _sim, source = library(library_size=10, library_captions_every=3)
    entries = source.page(None).entries
    captioned = [e for e in entries if e.tracks]
    assert [e.asset_id for e in captioned] == [f"cloudflare/{uid(i)}" for i in (1, 4, 7)]
    assert captioned[0].tracks[0].url == f"cloudflare://{uid(1)}/captions/en"
    text = source.resolve(parse_ref(f"cloudflare://{uid(1)}/captions/fr"))
    assert text.kind is ResolutionKind.READY and text.text.startswith("WEBVTT") and text.text_format == "vtt"


def test_a_delta_sweep_lists_what_was_created_after_the_mark(library):
    _sim, source = library(library_size=50)
    page = source.page(None, since=1_577_836_800 + 44 * 60, tracks=False)
    assert [e.asset_id for e in page.entries] == [f"cloudflare/{uid(i)}" for i in range(45, 50)]
