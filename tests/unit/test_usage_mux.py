"""Mux's usage reader, pure parts: the breakdown's query, a Mux Data breakdown answer to usage (the SDK's own
example), malformed answers refused, the cursor (migrator.sources.analytics.mux)."""

from __future__ import annotations

import json

import pytest
from migrator.sources.analytics.mux import COUNTED_BY, DAY_S, WINDOW_DAYS, parse_cursor, query, usage_of_breakdown
from migrator.sources.base import SourceError

READ_AT = "2026-12-06T12:00:00Z"
# The breakdown's example in Mux's official Elixir SDK (muxinc/mux-elixir, Mux.Data.Metrics.breakdown,
# https://hexdocs.pm/mux/Mux.Data.Metrics.html): rows `{field, negative_impact, total_watch_time, value, views}`;
# the envelope `{data, total_row_count, timeframe}` as mux-python's ListBreakdownValuesResponse has it.
DOCUMENTED = {
    "data": [
        {"field": "mac", "negative_impact": 1, "total_watch_time": 7500, "value": 3500, "views": 3},
        {"field": "windows", "negative_impact": 2, "total_watch_time": 3500, "value": 1000, "views": 2},
    ],
    "total_row_count": 2,
    "timeframe": [1498867200, 1498953600],
}


def test_the_query_asks_views_by_asset_in_a_stable_order():
    assert query(100, 200, 3) == [
        ("group_by", "asset_id"),
        ("timeframe[]", "100"),
        ("timeframe[]", "200"),
        ("limit", "100"),
        ("page", "3"),
        ("order_by", "field"),
        ("order_direction", "asc"),
    ]


@pytest.mark.parametrize(
    ("answer", "usage", "since"),
    [
        (DOCUMENTED, {"mac": 3, "windows": 2}, "2017-07-01T00:00:00Z"),
        ({"data": [], "total_row_count": 0}, {}, None),  # no timeframe said: the one asked (none here: no rows)
        ({"data": [{"field": "a1", "views": 0}], "total_row_count": 1}, {"a1": 0}, "1970-01-01T00:00:00Z"),
    ],
)
def test_a_breakdown_page_is_each_asset_s_views_since_the_answer_s_timeframe(answer, usage, since):
    got, held, total = usage_of_breakdown(answer, READ_AT, 0)
    assert {a: u.plays for a, u in got.items()} == usage and held == len(usage) and total == answer["total_row_count"]
    assert all(u.since == since and u.counted_by == COUNTED_BY for u in got.values())


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"data": [], "total_row_count": "2"}, "total_row_count"),
        ({"data": [{"field": "a1"}], "total_row_count": 1}, "views is not a number"),
        ({"data": [{"field": None, "views": 1}], "total_row_count": 1}, "field is not an id"),
        ({"data": [], "total_row_count": 0, "timeframe": ["x", 1]}, "timeframe"),
        ({"data": None, "total_row_count": 0}, "data is not a list"),
    ],
)
def test_a_malformed_answer_stops_the_pass(answer, says):
    with pytest.raises(SourceError, match=says):
        usage_of_breakdown(answer, READ_AT, 0)


def test_the_first_page_asks_the_window_to_the_day_and_the_cursor_keeps_it():
    now = 1_765_000_000.0
    page, start, end = parse_cursor(None, now)
    assert page == 1 and end % DAY_S == 0 and end - now < DAY_S and end - start == WINDOW_DAYS * DAY_S
    assert parse_cursor(json.dumps([2, start, end]), now) == (2, start, end)


@pytest.mark.parametrize("cursor", ["x", "[1, 2]", '[1, "2", 3]', "[-1, 2, 3]", "[true, 2, 3]"])
def test_a_cursor_of_another_reader_is_refused(cursor):
    with pytest.raises(SourceError, match="not a usage cursor"):
        parse_cursor(cursor, 0.0)
