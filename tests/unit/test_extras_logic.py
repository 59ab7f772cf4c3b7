"""The extras' pure decisions (extras.py, tracks.py): which entries a row arms beside its caption tracks, given what
the target takes; the noted state, settled everywhere; the image check; chapters read from and written to WebVTT."""

from __future__ import annotations

import random
import struct
import zlib

import pytest
from migrator.extras import (
    MAX_IMAGE_BYTES,
    ExtrasFacts,
    chapters_webvtt,
    collection_entry_key,
    collection_key,
    entry_kind,
    extras_of,
    image_kind,
    poster_time,
    read_chapters,
    source_platform,
)
from migrator.messages import AssetMessage, Track
from migrator.row_extras import Chapter, Collection
from migrator.tracks import (
    TrackOutcome,
    TrackResult,
    TrackState,
    caption_counts,
    claimable,
    counts,
    decide,
    initial_states,
    needs_tracks_worker,
    next_due,
    notes,
    settled,
    tracks_unarmed,
)

SOURCE = "vimeo://76979871"
EN = Track("https://c.example/en.vtt", "en")
CHAPTERS_FILE = Track("https://c.example/ch.vtt", "und", kind="chapters")
TALKS, BEST = Collection("f1", "Talks", "folder", 3), Collection("s2", "Best of", "showcase", 0)


def png(width: int = 4, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 8)) + chunk(b"IEND", b"")
    )


def arm(row: AssetMessage, facts: ExtrasFacts) -> dict:
    return initial_states(
        row.tracks, takes_tracks=True, provider=facts.provider, at_create=set(), one_per_language=False, now=1.0,
        details=row, extras=facts,
    )  # fmt: skip


FULL = ExtrasFacts("full", takes_thumbnail="image", takes_chapters=True, takes_collections=True)
NONE = ExtrasFacts("bare", collections_instead="kept as tags")
ONE = ExtrasFacts("bunny", takes_thumbnail="image", takes_chapters=True, takes_collections=True,
                  one_collection_per_video=True)  # fmt: skip


def test_a_row_arms_its_thumbnail_chapters_and_a_membership_per_collection_beside_its_captions():
    row = AssetMessage(
        "a", SOURCE, thumbnail_url="https://i.example/p.jpg", tracks=(EN,), chapters=(Chapter(0, "Intro"),),
        collections=(TALKS, BEST),
    )  # fmt: skip
    states = arm(row, FULL)
    key = collection_entry_key(collection_key("vimeo", "f1"))
    assert set(states) == {
        "en.captions.",
        "thumbnail",
        "chapters",
        key,
        collection_entry_key(collection_key("vimeo", "s2")),
    }
    assert {k: entry_kind(e) for k, e in states.items()}["en.captions."] == "caption"
    assert states["thumbnail"]["kind"] == "thumbnail" and states["thumbnail"]["state"] == "pending"
    assert (
        states[key].items()
        >= {"kind": "collection", "state": "pending", "collection": collection_key("vimeo", "f1")}.items()
    )


@pytest.mark.parametrize(
    ("facts", "talks", "best", "note"),
    [
        (FULL, "pending", "pending", None),
        (
            ONE,
            "pending",
            "noted",
            "bunny keeps a video in one collection only: it is placed in 'Talks', the row's first",
        ),
        (NONE, "noted", "noted", "bare keeps no collections: kept as tags"),
    ],
)
def test_memberships_a_target_cannot_hold_are_noted_at_arming_with_what_it_does_instead(facts, talks, best, note):
    states = arm(AssetMessage("a", SOURCE, collections=(TALKS, BEST)), facts)
    first, second = (states[collection_entry_key(collection_key("vimeo", c.id))] for c in (TALKS, BEST))
    assert (first["state"], second["state"]) == (talks, best)
    assert second.get("note") == note


def test_one_chapters_list_a_video_the_inline_list_wins_and_every_chapters_track_is_noted():
    row = AssetMessage("a", SOURCE, chapters=(Chapter(0, "Intro"),), tracks=(EN, CHAPTERS_FILE))
    states = arm(row, FULL)
    assert states["chapters"]["state"] == "pending"
    assert states["und.chapters."].items() >= {"kind": "chapters", "state": "noted"}.items()
    assert "the row's own chapters list is the one carried" in states["und.chapters."]["note"]
    only_tracks = arm(
        AssetMessage("a", SOURCE, tracks=(CHAPTERS_FILE, Track("https://c/2.vtt", "fr", "chapters"))), FULL
    )
    assert only_tracks["chapters"]["state"] == "pending" and only_tracks["fr.chapters."]["state"] == "noted"
    assert "en.captions." not in only_tracks and "und.chapters." not in only_tracks  # a chapters file is no caption


def test_a_poster_time_alone_arms_a_thumbnail_only_where_the_target_picks_the_frame_after_the_create():
    row = AssetMessage("a", SOURCE, poster_time_s=12.0)
    assert "thumbnail" not in arm(row, FULL)
    later = arm(row, ExtrasFacts("apivideo", takes_thumbnail="image", poster_time_later=True))
    assert later["thumbnail"]["state"] == "pending"
    assert extras_of(row, poster_time_later=True)[0].poster_time_s == 12.0


def test_the_uploader_sends_the_tracks_message_for_a_row_with_extras_only():
    assert needs_tracks_worker(AssetMessage("a", SOURCE, thumbnail_url="https://i.example/p.jpg"))
    assert needs_tracks_worker(AssetMessage("a", SOURCE, collections=(TALKS,)))
    assert not needs_tracks_worker(AssetMessage("a", SOURCE, poster_time_s=3.0))
    # ...but where the target picks the frame after the create (api.video), a poster time alone is the worker's too.
    assert needs_tracks_worker(AssetMessage("a", SOURCE, poster_time_s=3.0), poster_time_later=True)
    assert tracks_unarmed({"state": "ready", "remote_id": "v1", "poster_time_s": 3}, poster_time_later=True)
    item = {"state": "ready", "remote_id": "v1", "chapters": [{"start_s": 0, "title": "x"}]}
    assert tracks_unarmed(item) and not tracks_unarmed({**item, "tracks_video": "v1"})


@pytest.mark.parametrize(
    ("url", "platform"),
    [
        ("vimeo://1", "vimeo"),
        ("s3://b/k.mp4", "s3"),
        ("https://m.example/a.mp4", "inventory"),
        ("ftp://x", "inventory"),
    ],
)
def test_a_collection_is_keyed_by_its_source_platform_and_id(url, platform):
    assert source_platform(url) == platform
    assert collection_key(platform, "f1") != collection_key("other", "f1") and len(collection_key(platform, "f1")) == 16


# --- the noted state -----------------------------------------------------------------------------------------


def test_noted_is_decided_from_its_outcome_settled_never_claimed_and_counted_apart():
    move = decide(TrackOutcome(TrackResult.NOTED, note="kept in the bucket"), 1, 0, 10.0, random.Random(1), 5)
    assert (move.state, move.note, move.retry_at) == (TrackState.NOTED, "kept in the bucket", None)
    entry = {"state": "noted", "note": "kept in the bucket", "kind": "thumbnail"}
    assert settled(entry) and not claimable(entry, 10.0)
    states = {
        "en.captions.": {"state": "attached"},
        "thumbnail": entry,
        "chapters": {"state": "pending", "kind": "chapters"},
    }
    assert counts(states) == {"attached": 1, "noted": 1, "pending": 1}
    assert caption_counts(states) == {"attached": 1}
    assert notes(states) == [("thumbnail", "kept in the bucket")]
    assert next_due({"thumbnail": entry}, 10.0) is None  # nothing left: out of reconcile's tracks lane


def test_an_entry_armed_by_0_3_0_has_no_kind_and_is_a_caption():
    assert entry_kind({"state": "attached"}) == "caption" and entry_kind({"kind": "nonsense"}) == "caption"
    assert caption_counts({"en.captions.": {"state": "failed"}}) == {"failed": 1}


# --- the image check ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kind", "size"),
    [
        (png(640, 360), "png", (640, 360)),
        (
            b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
            b"\xff\xc0\x00\x11\x08\x00\x09\x00\x10\x03\x01\x22\x00",
            "jpeg",
            (16, 9),
        ),
        (b"RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\x7f\x02\x00\x67\x01\x00", "webp", (640, 360)),
    ],
)
def test_an_image_is_told_by_its_bytes_with_its_size_where_the_header_says(body, kind, size):
    image = image_kind(body)
    assert not isinstance(image, str) and image.kind == kind and (image.width, image.height) == size


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"", "empty"),
        (b"GIF89a....", "not a JPEG, PNG or WebP"),
        (b"<html>", "not a JPEG, PNG or WebP"),
        (png(0, 10), "a side is 0"),
        (png(20_000, 10), "over 16,384"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * (MAX_IMAGE_BYTES), "over the 10,485,760 allowed"),
    ],
)
def test_what_is_no_poster_image_is_refused_with_why(body, why):
    refused = image_kind(body)
    assert isinstance(refused, str) and why in refused


def test_a_targets_own_size_limit_is_the_one_checked():
    assert "over the 8 allowed" in image_kind(png(), max_bytes=8)


@pytest.mark.parametrize(("row", "duration", "chosen"), [(12.0, 60.0, 12.0), (None, 60.0, 5.0), (None, 4.0, 2.0),
                                                         (90.0, 60.0, 30.0), (None, None, 5.0)])  # fmt: skip
def test_the_frame_a_time_only_target_gets_is_the_rows_else_a_default_within_the_video(row, duration, chosen):
    assert poster_time(row, duration) == chosen


# --- chapters as WebVTT ---------------------------------------------------------------------------------------


def test_chapters_round_trip_through_webvtt_each_ending_where_the_next_begins():
    chapters = (Chapter(0.0, "Intro"), Chapter(61.25, "Part two"))
    vtt = chapters_webvtt(chapters, 120.0)
    assert vtt == b"WEBVTT\n\n00:00:00.000 --> 00:01:01.250\nIntro\n\n00:01:01.250 --> 00:02:00.000\nPart two\n"
    assert read_chapters(vtt) == chapters


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"1\n00:00:01,000 --> 00:00:02,000\nSRT\n", "this file is SubRip"),
        (b"<html>", "not a chapters file"),
        (b"WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nB\n\n00:00:01.000 --> 00:00:02.000\nA\n", "strictly increasing"),
    ],
)
def test_a_chapters_track_that_is_no_chapters_list_is_refused_with_why(raw, why):
    read = read_chapters(raw)
    assert isinstance(read, str) and why in read
