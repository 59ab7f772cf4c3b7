"""JW Player's usage reader, pure parts: the query body, one page of the Analytics API's answer to usage, malformed
answers refused, the cursor (migrator.sources.analytics.jwplayer)."""

from __future__ import annotations

import pytest
from migrator.sources.analytics.jwplayer import PAGE_LENGTH, SINCE, parse_cursor, query_body, usage_of_rows
from migrator.sources.base import SourceError
from migrator.usage import parse_usage

READ_AT = "2026-12-06T12:00:00Z"
HEADERS = {"dimensions": [{"field": "media_id", "type": "string"}], "metrics": [{"field": "plays", "type": "integer"}]}


def test_the_query_is_the_reference_s_body_for_plays_by_media_from_the_earliest_data():
    # "Query body structure", https://developer.jwplayer.com/jwplayer/docs/analytics-api-reference
    assert query_body(3, "2026-12-06") == {
        "start_date": "2017-01-01",
        "end_date": "2026-12-06",
        "dimensions": ["media_id"],
        "metrics": [{"operation": "sum", "field": "plays"}],
        "sort": [{"field": "plays", "order": "DESCENDING"}],
        "page": 3,
        "page_length": 100,
    }
    assert PAGE_LENGTH == 100  # "Maximum: 100 rows per page"


@pytest.mark.parametrize(
    ("answer", "expected", "rows"),
    [
        (
            {"data": {"rows": [["Abc12345", 10], ["Xyz98765", 0]]}, "metadata": {"column_headers": HEADERS}},
            {"Abc12345": 10, "Xyz98765": 0},
            2,
        ),
        (
            {"data": {"rows": [[7.0, "Abc12345"]]}, "metadata": {"column_headers": {"dimensions": [], "metrics": []}}},
            None,
            0,
        ),
        ({"data": {"rows": [["Abc12345", 4]]}}, {"Abc12345": 4}, 1),  # no headers: the order asked
        (
            {
                "data": {"rows": [[4, "Abc12345"]]},
                "metadata": {
                    "column_headers": {"dimensions": [{"field": "plays"}], "metrics": [{"field": "media_id"}]}
                },
            },
            {"Abc12345": 4},
            1,
        ),
        ({"data": {"rows": []}, "metadata": {"column_headers": HEADERS}}, {}, 0),
    ],
)
def test_rows_are_read_in_the_order_the_column_headers_say(answer, expected, rows):
    if expected is None:
        with pytest.raises(SourceError, match="the columns are not media_id and plays"):
            usage_of_rows(answer, READ_AT)
        return
    usage, held = usage_of_rows(answer, READ_AT)
    assert held == rows and {m: u.plays for m, u in usage.items()} == expected
    for u in usage.values():
        assert u.since == SINCE and u.last_played_at is None
        parse_usage(u.as_dict())  # what a row carries: checked as the ledger checks it


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"rows": []}, "data is not an object"),
        ({"data": {"rows": {}}}, "data.rows is not a list"),
        ({"data": {"rows": [["Abc12345"]]}}, "a row is short"),
        ({"data": {"rows": [["Abc12345", "10"]]}}, "plays is not a number"),
        ({"data": {"rows": [["has space", 1]]}}, "media_id is not an id"),
        ({"data": {"rows": [[None, 1]]}}, "media_id is not an id"),
    ],
)
def test_a_malformed_answer_stops_the_pass(answer, says):
    with pytest.raises(SourceError, match=says):
        usage_of_rows(answer, READ_AT)


@pytest.mark.parametrize(
    ("cursor", "expected"),
    [
        (None, (0, "2026-12-06")),
        ("4@2026-11-30", (4, "2026-11-30")),
        ("bad", None),
        ("x@2026-11-30", None),
        ("1@2026-13-01", None),
    ],
)
def test_the_cursor_is_the_page_and_the_range_s_last_day(cursor, expected):
    if expected is None:
        with pytest.raises(SourceError, match="not a usage cursor"):
            parse_cursor(cursor, "2026-12-06")
    else:
        assert parse_cursor(cursor, "2026-12-06") == expected
