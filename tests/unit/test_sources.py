"""Sources, the pure parts: references, rows cleaned from untrusted answers, the resolver's dispatch,
credentials that never leak, the S3 source over a stub client."""

from __future__ import annotations

import datetime
import json

import pytest
from migrator.messages import SOURCE_PLATFORMS, AssetMessage, encode_message, parse_message
from migrator.providers.facts import CredentialsError
from migrator.sources import (
    HTTP_SOURCES,
    Resolution,
    ResolutionKind,
    Resolver,
    S3Source,
    SourceRef,
    SourceThrottled,
    Unfetchable,
    credentials_by_platform,
    parse_base_urls,
    parse_ref,
)
from migrator.sources.rows import TrackInfo, language_tag, make_row


@pytest.mark.parametrize(
    "text, ref",
    [
        ("vimeo://123", SourceRef("vimeo", "123")),
        ("mux://Abc/tracks/t1", SourceRef("mux", "Abc", "tracks", "t1")),
        ("wistia://w00/captions/eng", SourceRef("wistia", "w00", "captions", "eng")),
        ("https://cdn.example.com/a.mp4", None),
        ("s3://bucket/key.mp4", None),
        ("vimeo://123/texttracks", None),
        ("vimeo://123?x=1", None),
        ("ftp://x/y", None),
    ],
)
def test_references_parse_and_print_back(text, ref):
    assert parse_ref(text) == ref
    if ref is not None:
        assert str(ref) == text and parse_message(json.dumps({"id": "x", "source_url": text})).source_url == text


def test_a_row_from_garbage_keeps_what_can_travel_and_drops_the_rest():
    row = make_row(
        "vimeo",
        "42",
        "vimeo://42",
        title="T" * 900,
        description=["not", "text"],
        tags=["ok", " ok ", "", "bell\u0007", 7, "x" * 300, "\ud800lone"],
        created_at="2024-02-03T04:05:06+02:00",
        duration_s=float("nan"),
        size_bytes=-5,
        privacy="secret",
        folder="Folder",
        poster_time_s=4.0,
        tracks=[
            TrackInfo("vimeo://42/texttracks/1", "en-US", "captions", "English"),
            TrackInfo("vimeo://42/texttracks/2", "en-US", "captions", "English"),  # the same track twice
            TrackInfo("vimeo://42/texttracks/3", "not a language", "captions"),
            TrackInfo("vimeo://42/texttracks/4", "fr", "chapters", format="srt"),  # kept, read as WebVTT
            TrackInfo("vimeo://42/texttracks/5", "fr", "descriptions"),
        ],
        metadata={"extra": 1},
    )
    assert isinstance(row, AssetMessage)
    assert row.asset_id == "vimeo/42" and len(row.title) == 512 and row.description is None
    assert row.tags == ("ok", "x" * 255, "lone") and row.created_at == "2024-02-03T02:05:06Z"  # cut, not lost
    assert row.duration_s is None and row.size_bytes is None and row.privacy is None and row.poster_time_s == 4.0
    assert [(t.language, t.kind, t.url, t.format) for t in row.tracks] == [
        ("en-US", "captions", "vimeo://42/texttracks/1", None),
        ("fr", "chapters", "vimeo://42/texttracks/4", None),
    ]
    assert row.metadata == {"source_platform": "vimeo", "source_id": "42", "extra": 1}
    assert parse_message(encode_message(row)) == row  # what the inventory writes, the uploader reads back


def test_a_poster_past_the_end_is_dropped_and_iso639_2_reads_as_bcp47():
    row = make_row("wistia", "w1", "wistia://w1", duration_s=10, poster_time_s=11)
    assert row.poster_time_s is None
    assert [language_tag(code) for code in ("eng", "fre", "pt_BR", "zz-Q", "1x")] == ["en", "fr", "pt-BR", "zz-Q", None]


def test_a_row_that_cannot_be_a_message_is_unfetchable_with_the_reason():
    huge = {"blob": "x" * 70_000}
    row = make_row("mux", "abc", "mux://abc", title="A", metadata=huge)
    assert isinstance(row, Unfetchable) and row.reason.startswith("cannot be carried as a message") and row.title == "A"


class FakeSource:
    def __init__(self, outcome):
        self.outcome, self.asked = outcome, []

    def resolve(self, ref):
        self.asked.append(ref)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def test_the_resolver_hands_urls_on_presigns_s3_and_asks_the_platform_for_references():
    source = FakeSource(Resolution.ready("https://cdn.example.com/fresh.mp4"))
    resolver = Resolver(lambda platform: source, lambda url: url.replace("s3://", "https://signed/"))
    assert resolver("https://a.example.com/x.mp4").url == "https://a.example.com/x.mp4"
    assert resolver("s3://bucket/k.mp4").url == "https://signed/bucket/k.mp4"
    assert resolver("vimeo://9").url == "https://cdn.example.com/fresh.mp4" and source.asked == [
        SourceRef("vimeo", "9")
    ]


@pytest.mark.parametrize(
    "raised, kind",
    [
        (SourceThrottled("vimeo: HTTP 429", 7.0), ResolutionKind.THROTTLED),
        (CredentialsError("no vimeo credentials"), ResolutionKind.DENIED),
    ],
)
def test_the_resolver_turns_a_sources_failure_into_a_kind(raised, kind):
    resolved = Resolver(lambda platform: FakeSource(raised), lambda url: url)("vimeo://1")
    assert resolved.kind is kind and resolved.reason


def test_source_credentials_are_checked_without_echoing_them():
    assert credentials_by_platform('{"vimeo": {"token": "t"}}') == {"vimeo": {"token": "t"}}
    assert credentials_by_platform(None) == {}
    for raw in ('{"vimeo": "hunter2"}', '{"myspace": {"token": "hunter2"}}', "hunter2"):
        with pytest.raises(CredentialsError) as caught:
            credentials_by_platform(raw)
        assert "hunter2" not in str(caught.value)


def test_source_base_urls_are_platform_url_pairs():
    assert parse_base_urls("vimeo=http://127.0.0.1:1/x, wistia=https://w.example/modern") == {
        "vimeo": "http://127.0.0.1:1/x",
        "wistia": "https://w.example/modern",
    }
    assert parse_base_urls("") == {}
    for bad in ("vimeo", "nosuch=https://x", "mux=ftp://x", "mux=https://user:pw@x"):
        with pytest.raises(ValueError):
            parse_base_urls(bad)


def test_the_platforms_source_base_urls_may_name_are_the_http_sources():
    # The settings check SourceBaseUrls against the message schemes' list (settings imports no source).
    assert tuple(HTTP_SOURCES) == SOURCE_PLATFORMS


class StubS3:
    """list_objects_v2 over a fixed listing, 2 keys a page."""

    def __init__(self, objects):
        self.objects, self.calls = objects, []

    def list_objects_v2(self, **kwargs):
        self.calls.append(kwargs)
        start = int(kwargs.get("ContinuationToken", "0"))
        chunk = self.objects[start : start + 2]
        more = start + 2 < len(self.objects)
        return {"Contents": chunk, "IsTruncated": more, **({"NextContinuationToken": str(start + 2)} if more else {})}


def test_the_s3_source_lists_videos_skips_others_and_names_archived_ones():
    when = datetime.datetime(2023, 5, 1, tzinfo=datetime.UTC)
    objects = [
        {"Key": "shows/a.mp4", "Size": 10, "LastModified": when, "StorageClass": "STANDARD"},
        {"Key": "shows/", "Size": 0, "LastModified": when},
        {"Key": "shows/readme.txt", "Size": 3, "LastModified": when},
        {"Key": "shows/old.mov", "Size": 9, "LastModified": when, "StorageClass": "DEEP_ARCHIVE"},
        {"Key": "shows/what?.mp4", "Size": 9, "LastModified": when},
    ]
    source = S3Source(StubS3(objects), "media", "shows/")
    entries, cursor, skipped = [], None, 0
    while True:
        page = source.page(cursor)
        entries += page.entries
        skipped += page.skipped
        cursor = page.cursor
        if cursor is None:
            break
    video, archived, bad_key = entries
    from migrator.sources.s3 import s3_asset_id

    assert video.asset_id == s3_asset_id("media", "shows/a.mp4")  # the id `migrator load s3://` gives
    assert video.source_url == "s3://media/shows/a.mp4" and video.size_bytes == 10 and video.title == "a.mp4"
    assert video.created_at == "2023-05-01T00:00:00Z" and video.metadata == {
        "s3_bucket": "media",
        "s3_key": "shows/a.mp4",
    }
    assert isinstance(archived, Unfetchable) and "DEEP_ARCHIVE" in archived.reason
    assert isinstance(bad_key, Unfetchable) and "cannot be carried" in bad_key.reason
    assert skipped == 2 and source.requests == 3


def test_the_stacks_source_settings_are_read_strictly():
    from migrator.settings import SettingsError, load

    env = {"LEDGER_TABLE": "t", "QUEUE_URL": "q", "PROVIDER": "mux"}
    settings = load({**env, "SOURCE_BASE_URLS": "vimeo=http://127.0.0.1:9", "SOURCE_PREPARE_TIMEOUT_SECONDS": "30"})
    assert settings.source_base_urls == {"vimeo": "http://127.0.0.1:9"} and settings.source_prepare_timeout_s == 30
    assert load(env).source_prepare_timeout_s == 3600 and load(env).source_secret_name is None
    with pytest.raises(SettingsError, match="SOURCE_BASE_URLS"):
        load({**env, "SOURCE_BASE_URLS": "vimeo=ftp://x"})
    with pytest.raises(SettingsError, match="SOURCE_PREPARE_TIMEOUT_SECONDS"):
        load({**env, "SOURCE_PREPARE_TIMEOUT_SECONDS": "5"})
