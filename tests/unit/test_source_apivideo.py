"""migrator.sources.apivideo, the pure parts: a video's status read as ready, pending or failed (an answer is
untrusted), a private link's session route, and the listing's cursor read back from a state file."""

from __future__ import annotations

import pytest
from migrator.providers.apivideo import session_url, vod_allowed, with_session
from migrator.sources.apivideo import Cursor, encoding_state, privacy_of

ENCODED = {"type": "hls", "quality": "720p", "status": "encoded"}


@pytest.mark.parametrize(
    "status, state",
    [
        ({"ingest": {"status": "uploaded"}, "encoding": {"playable": True, "qualities": [ENCODED]}}, "ready"),
        ({"ingest": {"status": "ingested"}, "encoding": {"playable": True}}, "ready"),
        ({"ingest": {"status": "uploading"}, "encoding": {"playable": False}}, "pending"),
        ({"ingest": {"status": "ingesting"}, "encoding": {"playable": True}}, "pending"),
        ({"encoding": {"playable": False, "qualities": []}}, "pending"),  # nothing uploaded yet
        ({"ingest": {"status": "uploaded"}, "encoding": {"playable": False}}, "pending"),
        ({"ingest": {"status": "uploaded"}, "encoding": {"playable": "yes"}}, "pending"),
        (
            {"ingest": {"status": "uploaded"}, "encoding": {"playable": True, "qualities": [
                ENCODED, {"type": "mp4", "quality": "1080p", "status": "encoding"}]}},
            "pending",
        ),
        (
            {"ingest": {"status": "uploaded"}, "encoding": {"playable": True, "qualities": [
                ENCODED, {"type": "mp4", "quality": "1080p", "status": "failed"}]}},
            "failed",
        ),
        ({"ingest": {"status": "uploaded"}, "encoding": {"qualities": [{**ENCODED, "status": "failed"}]}}, "failed"),
        ("garbage", "pending"),
        (None, "pending"),
    ],
)  # fmt: skip
def test_a_videos_status_reads_as_ready_pending_or_failed(status, state):
    found, why = encoding_state(status)
    assert found == state and (why is None) == (state == "ready")


@pytest.mark.parametrize("public, privacy", [(True, "public"), (False, "private"), ("true", "private"), (1, "private")])
def test_only_a_true_public_is_public(public, privacy):
    assert privacy_of({"public": public})[0] == privacy
    assert (privacy_of({"public": public})[1] is None) == isinstance(public, bool)


def test_a_private_links_session_route_and_the_session_on_it():
    link = (
        "https://vod.api.video/vod/vi3N6cDinStg3oBbN79GklWS/token/4dfe3225-55b1-4cf3-9671-ccc428baf929/mp4/source.mp4"
    )
    assert session_url(link) == link.rsplit("/mp4/", 1)[0] + "/session"
    assert with_session(link, "111-222-333") == link + "?avh=111-222-333"
    assert session_url("https://vod.api.video/vod/vi3N6cDinStg3oBbN79GklWS/mp4/source.mp4") is None
    assert session_url("https://vod.api.video/vod/vi1/token/a b/mp4/source.mp4") is None
    assert vod_allowed(link, "https://ws.api.video") and not vod_allowed(
        "http://evil.example/x", "https://ws.api.video"
    )
    assert vod_allowed("http://127.0.0.1:9/_stream/x", "http://127.0.0.1:9")


@pytest.mark.parametrize(
    "raw, cursor",
    [
        (None, Cursor(1)),
        ("3", Cursor(3)),  # a state file from before: a page number alone
        ("3|1577843940.0|vi1,vi2", Cursor(3, 1577843940.0, frozenset({"vi1", "vi2"}))),
        ("2|-1.5|", Cursor(2, -1.5)),
        ("2|nan|vi1", Cursor(2, None, frozenset({"vi1"}))),
        ("2|x|vi 1,../", Cursor(2)),
        ("0", Cursor(1)),
        ("garbage", Cursor(1)),
    ],
)
def test_the_listings_cursor_reads_back_whatever_the_state_file_holds(raw, cursor):
    assert Cursor.parse(raw) == cursor
    assert Cursor.parse(str(cursor)) == (cursor if cursor.after is not None else Cursor(cursor.page))
