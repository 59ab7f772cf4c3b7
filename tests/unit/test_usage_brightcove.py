"""Brightcove's usage reader, pure parts: the report's query, an Analytics API answer to usage (the reference's own
example), malformed answers refused (migrator.sources.analytics.brightcove)."""

from __future__ import annotations

import pytest
from migrator.sources.analytics.brightcove import COUNTED_BY, LIMIT, query, usage_of_items
from migrator.sources.base import SourceError

READ_AT = "2026-12-06T12:00:00Z"
# "Get Analytics Report", its Success Response (BrightcoveLearning/BCL-API-References analytics-api/v1/src/report.js,
# the source of https://apis.support.brightcove.com/analytics/references/reference.html), items cut to the fields read
# and the engagement fields.
DOCUMENTED = {
    "account": "20318290001",
    "account.name": "BC Training Videos",
    "item_count": 125,
    "items": [
        {
            "engagement_score": 189.443,
            "play_rate": 0.667,
            "video": "2127084613001",
            "video_duration": "341",
            "video_engagement_1": 3.0000000000000004,
            "video_impression": 3,
            "video_name": "Live Streaming using Telestream Wirecast (Japanese)",
            "video_percent_viewed": 378.88563049853377,
            "video_seconds_viewed": 1292,
            "video_view": 2,
        }
    ],
    "summary": {"video_impression": 11479, "video_view": 2013, "play_rate": 0.175},
}


def test_the_query_asks_every_video_s_views_over_all_time_sorted_by_video():
    assert query("20318290001", 200) == {
        "accounts": "20318290001",
        "dimensions": "video",
        "fields": "video,video_view,video_impression",
        "from": "alltime",
        "to": "now",
        "limit": str(LIMIT),
        "offset": "200",
        "sort": "video",
    }


@pytest.mark.parametrize(
    ("answer", "usage", "held", "total"),
    [
        (DOCUMENTED, {"2127084613001": (2, 3)}, 1, 125),
        ({"item_count": 0, "items": []}, {}, 0, 0),
        ({"item_count": 1, "items": [{"video": "1", "video_view": 0}]}, {"1": (0, None)}, 1, 1),
    ],
)
def test_an_answer_is_each_video_s_views_and_impressions(answer, usage, held, total):
    got, n, count = usage_of_items(answer, READ_AT)
    assert {v: (u.plays, u.views) for v, u in got.items()} == usage and (n, count) == (held, total)
    assert all(u.counted_by == COUNTED_BY and u.since is None for u in got.values())


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ([{"error_code": "UNAUTHORIZED"}], "the answer is not an object"),
        ({"items": []}, "item_count is not a number"),
        ({"item_count": 1, "items": None}, "items is not a list"),
        ({"item_count": 1, "items": [{"video": "1"}]}, "video_view is not a number"),
        ({"item_count": 1, "items": [{"video": 2127084613001, "video_view": 1}]}, "video is not an id"),
        ({"item_count": 1, "items": [{"video": "1", "video_view": 1, "video_impression": -3}]}, "video_impression"),
    ],
)
def test_a_malformed_answer_stops_the_pass(answer, says):
    with pytest.raises(SourceError, match=says):
        usage_of_items(answer, READ_AT)
