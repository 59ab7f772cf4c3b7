"""The files an asset's row carries besides its video, in the archive (issue 43), as tables: which files, under
which names, with which suffix; what a failed fetch leaves; and one pass over them against stand-ins."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from migrator.archive.sidefiles import (
    KEPT,
    MAX_SIDE_ATTEMPTS,
    MISSING,
    WAITING,
    SideFile,
    SideFiles,
    after_failure,
    file_name,
    kept_and_missing,
    retried,
    side_files_of,
)
from migrator.sources.base import Resolution, ResolutionKind
from migrator.trackfetch import Fetched, FetchFailed

pytestmark = pytest.mark.unit

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00\x00\x00\x10\x00\x00\x00\x10" + b"\x00" * 20
VTT = b"WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello\n"
SRT = b"1\n00:00:00,000 --> 00:00:01,000\nHello\n"


def test_a_rows_tracks_chapters_and_thumbnail_are_its_side_files_under_stable_names():
    row = {
        "tracks": [
            {"url": "https://h/en.vtt", "language": "en", "kind": "captions"},
            {"url": "vimeo://videos/1/texttracks/2", "language": "pt-BR", "kind": "subtitles", "name": "Dir/../x"},
            {"url": "https://h/ch.vtt", "language": "und", "kind": "chapters"},
        ],
        "chapters": [{"start_s": Decimal("0"), "title": "Intro"}, {"start_s": Decimal("12.5"), "title": "Talk"}],
        "thumbnail_url": "s3://bucket/poster.jpg",
    }
    files = side_files_of(row)
    assert not isinstance(files, str)
    assert [(f.name, f.kind, f.url) for f in files] == [
        ("captions/en.captions", "caption", "https://h/en.vtt"),
        ("captions/pt-BR.subtitles.Dir%2F..%2Fx", "caption", "vimeo://videos/1/texttracks/2"),  # one segment
        ("chapters/und", "chapters", "https://h/ch.vtt"),
        ("chapters.json", "chapters", None),
        ("thumbnail", "thumbnail", "s3://bucket/poster.jpg"),
    ]
    assert files[3].data is not None and b'"start_s": 12.5' in files[3].data and b'"title": "Intro"' in files[3].data
    assert files[4].max_bytes > files[0].max_bytes  # an image's cap, not a caption's


@pytest.mark.parametrize(
    ("row", "found"),
    [
        ({}, []),
        ({"tracks": [{"url": "ftp://h/x", "language": "en"}]}, "tracks do not read"),
        ({"chapters": [{"start_s": 5, "title": "B"}, {"start_s": 1, "title": "A"}]}, "chapters do not read"),
        ({"thumbnail_url": ""}, []),
    ],
)
def test_a_row_without_files_has_none_and_one_that_does_not_read_says_why(row, found):
    got = side_files_of(row)
    assert got == found if isinstance(found, list) else (isinstance(got, str) and found in got)


def test_a_long_name_from_the_row_becomes_its_digest():
    row = {"tracks": [{"url": "https://h/x", "language": "en", "name": "n" * 200}]}
    files = side_files_of(row)
    assert not isinstance(files, str) and len(files[0].name) == len("captions/en.captions.") + 16


@pytest.mark.parametrize(
    ("side", "body", "name", "media_type"),
    [
        (SideFile("captions/en.captions", "caption", "u"), VTT, "captions/en.captions.vtt", "text/vtt"),
        (SideFile("captions/en.captions", "caption", "u"), SRT, "captions/en.captions.srt", "application/x-subrip"),
        (SideFile("captions/en.captions", "caption", "u"), b"\x00binary", "captions/en.captions.txt", "text/plain"),
        (SideFile("chapters/und", "chapters", "u"), VTT, "chapters/und.vtt", "text/vtt"),
        (SideFile("thumbnail", "thumbnail", "u"), PNG, "thumbnail.png", "image/png"),
        (SideFile("thumbnail", "thumbnail", "u"), b"GIF89a", "thumbnail.bin", "application/octet-stream"),
        (SideFile("chapters.json", "chapters", data=b"[]"), b"[]", "chapters.json", "application/json"),
    ],
)
def test_a_files_suffix_is_what_its_bytes_are(side, body, name, media_type):
    assert file_name(side, body) == (name, media_type)


@pytest.mark.parametrize(
    ("entry", "retryable", "state", "attempts"),
    [
        (None, True, WAITING, 1),
        ({"state": WAITING, "attempts": MAX_SIDE_ATTEMPTS - 2}, True, WAITING, MAX_SIDE_ATTEMPTS - 1),
        ({"state": WAITING, "attempts": MAX_SIDE_ATTEMPTS - 1}, True, MISSING, MAX_SIDE_ATTEMPTS),
        (None, False, MISSING, 1),  # a 404, an address refused: never
    ],
)
def test_a_file_that_failed_waits_while_a_try_could_pass_then_is_missing(entry, retryable, state, attempts):
    after = after_failure(entry, "the track's server answered HTTP 503 https://h/x?sig=SECRET", retryable)
    assert (after["state"], after["attempts"]) == (state, attempts)
    assert "SECRET" not in after["reason"]  # redacted as any stored reason


def test_kept_and_missing_are_counted_and_a_new_copy_tries_the_missing_again():
    entries = {
        "thumbnail": {"state": KEPT, "key": "k"},
        "captions/en.captions": {"state": MISSING, "reason": "HTTP 404"},
        "chapters.json": {"state": KEPT, "key": "k2"},
        "captions/fr.captions": {"state": WAITING, "attempts": 1},
    }
    assert kept_and_missing(entries) == (2, ["captions/en.captions: HTTP 404"])
    assert sorted(retried(entries)) == ["chapters.json", "thumbnail"]


class Store:
    def __init__(self, fail: bool = False):
        self.put_keys: dict[str, tuple[bytes, str]] = {}
        self.fail = fail

    def put(self, key, body, media_type):
        if self.fail:
            raise RuntimeError("S3 down")
        self.put_keys[key] = (body, media_type)


def sides(resolutions: dict, answers: dict, store: Store, now: list[float]) -> SideFiles:
    def fetch(url, policy):
        now[0] += 1
        answer = answers[url]
        return answer if isinstance(answer, FetchFailed) else Fetched(answer, url)

    return SideFiles(store, "m", resolutions.__getitem__, fetch, frozenset(), lambda: now[0], random.Random(1))


def test_a_pass_keeps_what_it_can_and_records_why_not_the_others():
    files = [
        SideFile("captions/en.captions", "caption", "https://h/en"),
        SideFile("captions/de.captions", "caption", "wistia://x"),  # served as text by the platform's API
        SideFile("captions/fr.captions", "caption", "https://h/gone"),
        SideFile("thumbnail", "thumbnail", "vimeo://pic"),
    ]
    resolutions = {
        "https://h/en": Resolution.ready("https://h/en"),
        "wistia://x": Resolution.ready_text("WEBVTT\n\n00:00.000 --> 00:01.000\nHallo\n", "vtt"),
        "https://h/gone": Resolution.ready("https://h/gone"),
        "vimeo://pic": Resolution.unfetchable("the video has no picture"),
    }
    answers = {"https://h/en": VTT, "https://h/gone": FetchFailed("the track's server answered HTTP 404", status=404)}
    store, entries = Store(), {}
    went = sides(resolutions, answers, store, [0.0]).keep("a/1", files, entries, deadline=1000.0)
    assert went.done
    assert sorted(store.put_keys) == ["m/a/1/captions/de.captions.vtt", "m/a/1/captions/en.captions.vtt"]
    assert (
        entries["captions/fr.captions"]["state"] == MISSING and "HTTP 404" in entries["captions/fr.captions"]["reason"]
    )
    assert entries["thumbnail"] == {"state": MISSING, "attempts": 1, "reason": "the source: the video has no picture"}


@pytest.mark.parametrize(
    ("resolution", "answer", "wait"),
    [
        (Resolution.ready("https://h/en"), FetchFailed("the track's server answered HTTP 503", True, 503), None),
        (Resolution(ResolutionKind.PREPARING, reason="being made", retry_after=90.0), None, 90.0),
        (Resolution(ResolutionKind.THROTTLED, reason="429", retry_after=30.0), None, 30.0),
    ],
)
def test_a_file_that_may_come_later_holds_the_pass_and_what_is_kept_is_not_fetched_again(resolution, answer, wait):
    files = [SideFile("thumbnail", "thumbnail", "https://h/t"), SideFile("captions/en.captions", "caption", "x://en")]
    store, now = Store(), [0.0]
    entries = {"thumbnail": {"state": KEPT, "key": "m/a/thumbnail.png"}}
    went = sides({"x://en": resolution}, {"https://h/en": answer}, store, now).keep("a", files, entries, 1000.0)
    assert not went.done and went.wait_until is not None and entries["captions/en.captions"]["state"] == WAITING
    if wait is not None:
        assert went.wait_until == pytest.approx(now[0] + wait)
    assert store.put_keys == {}  # the thumbnail kept by an earlier pass: not fetched, not put again


def test_a_pass_out_of_time_stops_between_files_and_a_failed_put_is_tried_again():
    files = [SideFile("thumbnail", "thumbnail", "https://h/t")]
    went = sides({}, {}, Store(), [990.0]).keep("a", files, {}, deadline=1000.0)
    assert not went.done and went.wait_until is None and "time" in went.why
    entries: dict = {}
    failing = sides({"https://h/t": Resolution.ready("https://h/t")}, {"https://h/t": PNG}, Store(fail=True), [0.0])
    went = failing.keep("a", files, entries, 1000.0)
    assert (
        not went.done and entries["thumbnail"]["state"] == WAITING and "RuntimeError" in entries["thumbnail"]["reason"]
    )
