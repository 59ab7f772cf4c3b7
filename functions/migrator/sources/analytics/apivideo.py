"""api.video's usage: the Analytics API's total plays per media (issue 45).

Documents: the official Python client, apivideo/api.video-python-client `docs/AnalyticsApi.md` and
`apivideo/api/analytics_api.py` `get_metrics_breakdown` (the analytics endpoints that replace the older
`/analytics/videos/plays`, whose `from` "must be within the last 30 days"):

- `GET /data/buckets/{metric}/{breakdown}` with metric `play-total`, "the total number of times a specific content
  has been played. You can only use the `media-id` breakdown with this metric", and breakdown `media-id`: the plays
  of each video over its life, so `since` is None. No `from`/`to` is sent: their 30-day window ("The maximum value is
  30 days ago") is that of the period metrics (`play`, `start`, ...), and the client's text says the API "ignores"
  them for `/data/metrics/play/total`;
- paging: `currentPage` (from 1) and `pageSize` ("Allowed values 1-100, default is 25"); the answer
  (AnalyticsMetricsBreakdownResponse) is `{"context", "data": [{"dimensionValue": media id, "metricValue": plays}],
  "pagination": {"currentPage", "pagesTotal", "itemsTotal", "pageSize", ...}}`;
- paced as the api.video source is (500 reads a minute, production), with its 429 handling;
- no last play: the `emittedAt`-style timeseries is per metric over 30 days at most: `last_played_at` is None.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...usage import Usage, UsagePage, utc_text
from ..apivideo import ApiVideoSource
from .common import Reader, array, count, obj, offset_of, video_id

PLATFORM = "apivideo"
COUNTED_BY = "apivideo analytics play-total"
PAGE_SIZE = 100  # "Allowed values 1-100"


def usage_of_buckets(answer: object, read_at: str) -> tuple[dict[str, Usage], int]:
    """Each media's total plays from one page of the breakdown, and the answer's `pagination.pagesTotal`."""
    answer = obj(PLATFORM, answer, "the answer")
    found: dict[str, Usage] = {}
    for item in array(PLATFORM, answer.get("data"), "data"):
        item = obj(PLATFORM, item, "a bucket")
        media = video_id(PLATFORM, item.get("dimensionValue"), "dimensionValue")
        found[media] = Usage(
            read_at=read_at, counted_by=COUNTED_BY, plays=count(PLATFORM, item.get("metricValue"), "metricValue")
        )
    pages = count(PLATFORM, obj(PLATFORM, answer.get("pagination"), "pagination").get("pagesTotal"), "pagesTotal")
    return found, pages


class ApiVideoUsage(Reader):
    """Total plays by media, paged through the breakdown (usage.UsageReader); `video_ids` are not needed."""

    platform = PLATFORM
    counted_by = COUNTED_BY
    source_class = ApiVideoSource
    source: ApiVideoSource

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        number = offset_of(PLATFORM, cursor) or 1  # the page, from 1
        before = self.source.requests
        params = {"currentPage": str(number), "pageSize": str(PAGE_SIZE)}
        answer = self.source.read(
            "GET", "/data/buckets/play-total/media-id", "the plays breakdown", gone_ok=False, params=params
        )
        usage, pages = usage_of_buckets(answer, utc_text(self.source.clock()))
        following = str(number + 1) if number < pages else None
        return UsagePage(usage=usage, cursor=following, requests=self.source.requests - before)
