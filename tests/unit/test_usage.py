"""A row's usage (usage.py): what is accepted, what is refused and why, and how two reads merge."""

from __future__ import annotations

import json

import pytest
from migrator.messages import Poison, encode_message, parse_message
from migrator.row_extras import Refused
from migrator.usage import Usage, parse_usage

READ = "2026-12-06T12:00:00Z"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([], "usage must be an object"),
        ({"read_at": READ, "counted_by": "x", "likes": 3}, "unknown fields: likes"),
        ({"counted_by": "x", "plays": 3}, "usage.read_at is missing"),
        ({"read_at": "yesterday", "counted_by": "x"}, "usage.read_at must be an RFC 3339 time"),
        ({"read_at": "2026-13-40T00:00:00Z", "counted_by": "x"}, "usage.read_at must be an RFC 3339 time"),
        ({"read_at": READ, "counted_by": "x", "plays": -1}, "usage.plays must be a whole number"),
        ({"read_at": READ, "counted_by": "x", "plays": 1.5}, "usage.plays must be a whole number"),
        ({"read_at": READ, "counted_by": "x", "views": True}, "usage.views must be a whole number"),
        ({"read_at": READ, "counted_by": "x", "plays": 10**16}, "usage.plays must be a whole number"),
        ({"read_at": READ, "counted_by": " "}, "usage.counted_by must say what counted"),
        ({"read_at": READ, "counted_by": "a\nb"}, "printable characters"),
        ({"read_at": READ, "counted_by": "x", "last_played_at": 12}, "usage.last_played_at must be an RFC 3339"),
    ],
)
def test_a_bad_usage_is_refused_with_its_reason(value, reason):
    with pytest.raises(Refused, match=reason):
        parse_usage(value)


@pytest.mark.parametrize(
    ("doc", "never"),
    [
        ({"plays": 0}, True),
        ({"plays": 0, "last_played_at": "2020-01-01T00:00:00Z"}, False),
        ({"plays": 4}, False),
        ({}, False),  # not counted is not "never played"
    ],
)
def test_never_played_is_only_what_the_counts_say(doc, never):
    assert parse_usage({"read_at": READ, "counted_by": "x", **doc}).never_played is never


def test_a_row_carries_its_usage_there_and_back():
    row = {
        "id": "kaltura/0_a",
        "source_url": "kaltura://0_a",
        "usage": {"plays": 7, "views": 9, "last_played_at": "2025-01-02T03:04:05Z", "read_at": READ, "counted_by": "k"},
    }
    msg = parse_message(json.dumps(row))
    assert msg.usage == Usage(READ, "k", plays=7, views=9, last_played_at="2025-01-02T03:04:05Z")
    assert json.loads(encode_message(msg))["usage"] == row["usage"]


def test_a_row_with_a_bad_usage_is_poison_naming_it():
    poison = parse_message(json.dumps({"id": "a", "source_url": "https://x/y.mp4", "usage": {"plays": 3}}))
    assert isinstance(poison, Poison) and "usage.read_at is missing" in poison.reason


def test_a_merge_keeps_the_latest_play_and_the_newer_counts():
    inline = Usage("2026-12-01T00:00:00Z", "kaltura entry", plays=3, last_played_at="2026-11-01T00:00:00Z")
    apart = Usage(READ, "analytics", views=10, last_played_at="2026-10-01T00:00:00Z")
    merged = inline.merged(apart)
    assert (merged.plays, merged.views, merged.last_played_at) == (3, 10, "2026-11-01T00:00:00Z")
    assert merged.read_at == READ and merged.counted_by == "kaltura entry; analytics"
