"""Cloudflare Stream's usage reader, pure parts: the settings node's answer to the range read, a page of
streamMinutesViewedAdaptiveGroups to each video's last day delivered, GraphQL errors, the paging filter and the cursor
(migrator.sources.analytics.cloudflare)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from migrator.sources.analytics.cloudflare import (
    COUNTED_BY,
    page_filter,
    parse_cursor,
    usage_of_groups,
    window_of,
)
from migrator.sources.base import SourceDenied, SourceError

READ_AT = "2026-12-06T12:00:00Z"
NOW = datetime(2026, 12, 6, 12, tzinfo=UTC).timestamp()
UID = "ea95132c15732412d22c1476fa83f27a"  # a uid as the Stream API reference writes one


def settings(**node) -> dict:
    node = {"enabled": True, "maxDuration": 31 * 86400, "notOlderThan": 93 * 86400, "maxPageSize": 10000, **node}
    return {
        "data": {"viewer": {"accounts": [{"settings": {"streamMinutesViewedAdaptiveGroups": node}}]}},
        "errors": None,
    }


def groups(*rows) -> dict:
    return {"data": {"viewer": {"accounts": [{"streamMinutesViewedAdaptiveGroups": list(rows)}]}}, "errors": None}


def row(uid: str, day: str, minutes: float) -> dict:
    # The shape of the docs' "Get minutes viewed by country" example (https://developers.cloudflare.com/stream/
    # getting-analytics/fetching-bulk-analytics/), `date` asked as a dimension in place of the country.
    return {"sum": {"minutesViewed": minutes}, "dimensions": {"uid": uid, "date": day}}


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({}, ("2026-11-06", "2026-12-07", 10000)),  # maxDuration (31 days) is the narrower
        ({"maxDuration": 400 * 86400}, ("2026-09-05", "2026-12-07", 10000)),  # notOlderThan (93 days) is
        ({"maxPageSize": 500}, ("2026-11-06", "2026-12-07", 500)),
        ({"maxPageSize": 100000}, ("2026-11-06", "2026-12-07", 10000)),
    ],
)
def test_the_range_is_the_widest_one_query_may_ask(node, expected):
    assert window_of(settings(**node), NOW) == expected


@pytest.mark.parametrize(
    ("answer", "error", "says"),
    [
        (settings(enabled=False), SourceDenied, "not enabled"),
        (settings(maxDuration=3600), SourceError, "less than a day"),
        ({"data": None, "errors": [{"message": "not authorized for that account"}]}, SourceDenied, "not authorized"),
        ({"data": None, "errors": [{"message": "query too complex"}]}, SourceError, "query too complex"),
        ({"data": {"viewer": {"accounts": []}}}, SourceError, "0 accounts answered"),
    ],
)
def test_settings_the_reader_cannot_use_stop_the_pass(answer, error, says):
    with pytest.raises(error, match=says):
        window_of(answer, NOW)


def test_each_video_s_last_day_with_minutes_is_its_last_play():
    other = "0" * 32
    answer = groups(row(other, "2026-11-01", 0), row(UID, "2026-11-20", 3.5), row(UID, "2026-12-01", 12))
    usage, held, last = usage_of_groups(answer, READ_AT, "2026-11-06T00:00:00Z")
    assert held == 3 and last == (UID, "2026-12-01") and set(usage) == {UID}  # no minute delivered: not played
    assert usage[UID].last_played_at == "2026-12-01T00:00:00Z" and usage[UID].since == "2026-11-06T00:00:00Z"
    assert usage[UID].plays is None and usage[UID].views is None and usage[UID].counted_by == COUNTED_BY


@pytest.mark.parametrize(
    ("bad_row", "says"),
    [
        ({"sum": {"minutesViewed": 1}, "dimensions": {"uid": UID, "date": "yesterday"}}, "date is not a day"),
        ({"sum": {"minutesViewed": "1"}, "dimensions": {"uid": UID, "date": "2026-12-01"}}, "minutesViewed"),
        ({"sum": {"minutesViewed": 1}, "dimensions": {"uid": 7, "date": "2026-12-01"}}, "uid is not an id"),
        ({"dimensions": {"uid": UID, "date": "2026-12-01"}}, "sum is not an object"),
    ],
)
def test_a_malformed_group_stops_the_pass(bad_row, says):
    with pytest.raises(SourceError, match=says):
        usage_of_groups(groups(bad_row), READ_AT, "2026-11-06T00:00:00Z")


def test_the_next_page_is_asked_past_the_last_row_read():
    assert page_filter("2026-11-06", "2026-12-07", None) == {"date_geq": "2026-11-06", "date_lt": "2026-12-07"}
    assert page_filter("2026-11-06", "2026-12-07", (UID, "2026-12-01")) == {
        "AND": [
            {"date_geq": "2026-11-06", "date_lt": "2026-12-07"},
            {"OR": [{"uid_gt": UID}, {"uid": UID, "date_gt": "2026-12-01"}]},
        ]
    }


@pytest.mark.parametrize(
    ("cursor", "expected"),
    [
        (
            json.dumps({"first": "2026-11-06", "end": "2026-12-07", "limit": 5, "after": [UID, "2026-12-01"]}),
            ("2026-11-06", "2026-12-07", 5, (UID, "2026-12-01")),
        ),
        (json.dumps({"first": "2026-11-06", "end": "2026-12-07", "limit": 5}), ("2026-11-06", "2026-12-07", 5, None)),
        (json.dumps({"first": "soon", "end": "2026-12-07", "limit": 5}), None),
        (json.dumps({"first": "2026-11-06", "end": "2026-12-07", "limit": 0}), None),
        ("[]", None),
        ("not json", None),
    ],
)
def test_the_cursor_keeps_the_range_the_page_size_and_the_last_row(cursor, expected):
    if expected is None:
        with pytest.raises(SourceError, match="not a usage cursor"):
            parse_cursor(cursor)
    else:
        assert parse_cursor(cursor) == expected
