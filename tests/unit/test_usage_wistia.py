"""Wistia's usage reader, pure parts: a Show Media Stats answer to a Usage, malformed answers refused, the batch of
ids a page reads from the cursor (migrator.sources.analytics.wistia, common)."""

from __future__ import annotations

import pytest
from migrator.sources.analytics.common import batch
from migrator.sources.analytics.wistia import COUNTED_BY, usage_of_stats
from migrator.sources.base import SourceError

READ_AT = "2026-12-06T12:00:00Z"
# The fields of "Show Media Stats" (https://docs.wistia.com/reference/get_stats-medias-mediaid, its OpenAPI schema:
# the page gives no example values, so these are ours).
DOCUMENTED = {
    "load_count": 1042,
    "play_count": 873,
    "play_rate": 0.84,
    "hours_watched": 12.5,
    "engagement": 0.78,
    "visitors": 900,
    "actions": [{"type": "Call to Action", "action_count": 3, "impression_count": 40, "rate": 0.075}],
}


@pytest.mark.parametrize(
    ("answer", "plays", "views"),
    [
        (DOCUMENTED, 873, 1042),
        ({"play_count": 0, "load_count": 0}, 0, 0),
        ({"play_count": 5}, 5, None),  # no load count said: not counted apart
        ({"play_count": 5.0, "load_count": 7.0}, 5, 7),  # a whole number written as a float
    ],
)
def test_a_stats_answer_is_the_media_s_plays_and_loads(answer, plays, views):
    usage = usage_of_stats(answer, READ_AT)
    assert (usage.plays, usage.views, usage.since, usage.last_played_at) == (plays, views, None, None)
    assert usage.counted_by == COUNTED_BY and usage.read_at == READ_AT


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ([], "the media's stats is not an object"),
        ({"load_count": 3}, "play_count is not a number"),
        ({"play_count": "873"}, "play_count is not a number"),
        ({"play_count": True}, "play_count is not a number"),
        ({"play_count": -1}, "play_count is not a count"),
        ({"play_count": 2.5}, "play_count is not a whole number"),
        ({"play_count": 1, "load_count": 10**16}, "load_count is not a count"),
    ],
)
def test_a_malformed_stats_answer_stops_the_pass_saying_what_is_wrong(answer, says):
    with pytest.raises(SourceError, match=says) as caught:
        usage_of_stats(answer, READ_AT)
    assert caught.value.reason.startswith("wistia: the analytics answer is malformed")


@pytest.mark.parametrize(
    ("cursor", "size", "chosen", "following"),
    [
        (None, 2, ["a", "b"], "2"),
        ("2", 2, ["c", "d"], "4"),
        ("4", 2, ["e"], None),
        ("3", 5, ["d", "e"], None),
        ("9", 2, [], None),
    ],
)
def test_a_page_reads_the_next_ids_from_its_cursor(cursor, size, chosen, following):
    assert batch("wistia", cursor, ["a", "b", "c", "d", "e"], size) == (chosen, following)


@pytest.mark.parametrize("cursor", ["-1", "x", "1.5", "9" * 13])
def test_a_cursor_that_is_no_position_is_refused(cursor):
    with pytest.raises(SourceError, match="not a usage cursor"):
        batch("wistia", cursor, ["a"], 2)
