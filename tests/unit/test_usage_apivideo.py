"""api.video's usage reader, pure parts: a play-total breakdown answer to usage, malformed answers refused
(migrator.sources.analytics.apivideo)."""

from __future__ import annotations

import pytest
from migrator.sources.analytics.apivideo import COUNTED_BY, usage_of_buckets
from migrator.sources.base import SourceError

READ_AT = "2026-12-06T12:00:00Z"
# AnalyticsMetricsBreakdownResponse as apivideo/api.video-python-client describes it (docs/AnalyticsApi.md and the
# models analytics_metrics_breakdown_response*.py, pagination.py); the values are ours.
DOCUMENTED = {
    "context": {"breakdown": "media-id"},
    "data": [
        {"dimensionValue": "vi4k0jvEUuaTdRAEjQ4Jfrgz", "metricValue": 346},
        {"dimensionValue": "vi3q7HxhApxRF1c8F8r6VeaI", "metricValue": 0},
    ],
    "pagination": {
        "currentPage": 1,
        "pageSize": 100,
        "pagesTotal": 3,
        "itemsTotal": 212,
        "currentPageItems": 2,
        "links": [{"rel": "self", "uri": "/data/buckets/play-total/media-id?currentPage=1&pageSize=100"}],
    },
}


@pytest.mark.parametrize(
    ("answer", "usage", "pages"),
    [
        (DOCUMENTED, {"vi4k0jvEUuaTdRAEjQ4Jfrgz": 346, "vi3q7HxhApxRF1c8F8r6VeaI": 0}, 3),
        ({"data": [], "pagination": {"pagesTotal": 0}}, {}, 0),
    ],
)
def test_a_breakdown_page_is_each_media_s_total_plays(answer, usage, pages):
    got, total = usage_of_buckets(answer, READ_AT)
    assert {m: u.plays for m, u in got.items()} == usage and total == pages
    assert all(u.counted_by == COUNTED_BY and u.since is None and u.views is None for u in got.values())


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"data": {}, "pagination": {"pagesTotal": 1}}, "data is not a list"),
        ({"data": [{"dimensionValue": "vi1", "metricValue": "3"}], "pagination": {"pagesTotal": 1}}, "metricValue"),
        ({"data": [{"dimensionValue": "", "metricValue": 3}], "pagination": {"pagesTotal": 1}}, "dimensionValue"),
        ({"data": []}, "pagination is not an object"),
        ({"data": [], "pagination": {"pagesTotal": -1}}, "pagesTotal"),
    ],
)
def test_a_malformed_answer_stops_the_pass(answer, says):
    with pytest.raises(SourceError, match=says):
        usage_of_buckets(answer, READ_AT)
