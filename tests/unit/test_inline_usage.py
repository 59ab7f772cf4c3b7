"""Usage read in the listing itself (sources/inline_usage.py): Kaltura's entry counts and Vimeo's stats.plays, every
value from outside checked, a hidden count never read as 0."""

from __future__ import annotations

import pytest
from migrator.providers.fidelity import with_usage
from migrator.sources.inline_usage import count_of, kaltura_usage, vimeo_usage
from migrator.usage import Usage

READ = 1_764_979_200  # 2025-12-06T00:00:00Z
READ_TEXT = "2025-12-06T00:00:00Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0), (12, 12), (10**15, 10**15), (10**15 + 1, None), (-1, None), (True, None), (3.0, None), ("7", None)],
)
def test_a_count_is_a_whole_number_within_bounds(value, expected):
    assert count_of(value) == expected


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {"plays": 5, "views": 9, "lastPlayedAt": 1_700_000_000},
            {"plays": 5, "views": 9, "last_played_at": "2023-11-14T22:13:20Z"},
        ),
        ({"plays": 0, "views": 2, "lastPlayedAt": None}, {"plays": 0, "views": 2}),  # never played
        ({"plays": 0, "views": 0, "lastPlayedAt": 0}, {"plays": 0, "views": 0}),  # 0: not set
        ({"plays": 3, "lastPlayedAt": READ + 10 * 86_400}, {"plays": 3}),  # a last play in the future: garbage
        ({"plays": 3, "lastPlayedAt": 12}, {"plays": 3}),  # before any platform counted: garbage
        ({"plays": "3", "views": -1, "lastPlayedAt": True}, None),  # nothing usable
        ({}, None),
    ],
)
def test_kaltura_entry_counts_become_usage_read_at_the_listing(entry, expected):
    usage = kaltura_usage(entry, READ)
    if expected is None:
        assert usage is None
        return
    assert usage.as_dict() == {**expected, "read_at": READ_TEXT, "counted_by": "kaltura entry plays"}


@pytest.mark.parametrize(
    ("video", "plays"),
    [
        ({"stats": {"plays": 42}}, 42),
        ({"stats": {"plays": 0}}, 0),
        ({"stats": {"plays": None}}, None),  # hidden by the plan or the owner: not known, not 0
        ({"stats": None}, None),
        ({}, None),
        ({"stats": {"plays": "42"}}, None),
    ],
)
def test_vimeo_stats_plays_or_no_usage_at_all(video, plays):
    usage = vimeo_usage(video, READ)
    if plays is None:
        assert usage is None
    else:
        assert usage.as_dict() == {"plays": plays, "read_at": READ_TEXT, "counted_by": "vimeo stats.plays"}
        assert usage.never_played == (plays == 0)


@pytest.mark.parametrize(
    ("metadata", "usage", "expected"),
    [
        ({}, None, {}),
        ({"a": 1}, Usage(READ_TEXT, "x", plays=5), {"a": 1, "source_plays": 5}),
        (
            {},
            Usage(READ_TEXT, "x", plays=0, views=3, last_played_at="2025-01-01T00:00:00Z"),
            {"source_plays": 0, "source_views": 3, "source_last_played_at": "2025-01-01T00:00:00Z"},
        ),
        (
            {"source_plays": "mine"},
            Usage(READ_TEXT, "x", plays=5, views=6),
            {"source_plays": "mine", "source_views": 6},
        ),
        ({}, Usage(READ_TEXT, "x"), {}),  # nothing known: nothing written
    ],
)
def test_a_targets_free_map_gets_the_known_counts_never_over_the_rows_own_keys(metadata, usage, expected):
    assert with_usage(metadata, usage) == expected
