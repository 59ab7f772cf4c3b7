"""Brightcove's usage: the Analytics API, video views per video over all time (issue 45).

Documents: "Overview: Analytics API v1" (https://apis.support.brightcove.com/analytics/getting-started/
overview-analytics-api-v1.html: base URL https://analytics.api.brightcove.com/v1, OAuth through Brightcove's OAuth
service, client credentials needing "Analytics Read" and "Video Read"), "Dimension: video" (https://apis.support.
brightcove.com/analytics/dimension-guides/dimension-video.html: the URL parameters) and "Overview: Dimensions,
Fields, and Parameters" (https://apis.support.brightcove.com/analytics/getting-started/analytics-api-overview-
dimensions-fields-and-parameters.html, the example `/v1/data?accounts=...&dimensions=video,...&fields=video_view`):

- `GET /v1/data?accounts={account_id}&dimensions=video&fields=video,video_view,video_impression&from=alltime&to=now
  &limit=LIMIT&offset=N&sort=video`: `from` takes "the string alltime" (it defaults to "30 days prior to now"; only
  engagement endpoints or `reconciled=false` are held to 32 days), so the count is the video's whole life and
  `since` is None; `limit` ("Number of items to return", default 10) and `offset` ("Number of items to skip") page
  it, sorted on the video id so that pages do not shift while plays come in;
- the answer: `{"item_count": total, "items": [{"video": id, "video_view": n, "video_impression": n}], "summary"}`:
  `video_view` is the plays (a view is a play start), `video_impression` the loads (the player loaded the video);
- OAuth as the Brightcove source does it (sources/brightcove_token.py: one token for the fleet, renewed before its
  5 minutes end), paced as the source is (10 requests a second, shared with the account's CMS budget);
- no last play: a `date` dimension beside `video` would multiply the rows by the days played: `last_played_at` None.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...providers.facts import CredentialsError
from ...providers.http import HttpTransport
from ...usage import Usage, UsagePage, utc_text
from ..base import SourceDenied
from ..brightcove import BrightcoveSource
from .common import Reader, array, count, needing, obj, offset_of, optional_count, video_id

PLATFORM = "brightcove"
ANALYTICS = "https://analytics.api.brightcove.com"
COUNTED_BY = "brightcove analytics video_view (alltime)"
LIMIT = 100  # the CMS API's own cap on a page; the Analytics API documents none


def query(account_id: str, offset: int) -> dict[str, str]:
    return {
        "accounts": account_id,
        "dimensions": "video",
        "fields": "video,video_view,video_impression",
        "from": "alltime",
        "to": "now",
        "limit": str(LIMIT),
        "offset": str(offset),
        "sort": "video",
    }


def usage_of_items(answer: object, read_at: str) -> tuple[dict[str, Usage], int, int]:
    """Each video's views from one page of the answer, the page's item count and the answer's `item_count`."""
    answer = obj(PLATFORM, answer, "the answer")
    items = array(PLATFORM, answer.get("items"), "items")
    total = count(PLATFORM, answer.get("item_count"), "item_count")
    found: dict[str, Usage] = {}
    for item in items:
        item = obj(PLATFORM, item, "an item")
        video = video_id(PLATFORM, item.get("video"), "video")
        found[video] = Usage(
            read_at=read_at,
            counted_by=COUNTED_BY,
            plays=count(PLATFORM, item.get("video_view"), "video_view"),
            views=optional_count(PLATFORM, item.get("video_impression"), "video_impression"),
        )
    return found, len(items), total


class _AnalyticsSource(BrightcoveSource):
    """The Brightcove source's OAuth, pacing and 429 handling, its requests sent to the Analytics API's host."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        host = ANALYTICS if self.base_url == self.default_base_url else self.base_url  # a simulator serves both
        self.http = HttpTransport(host, self._auth, None, *self.http.timeout)


class BrightcoveUsage(Reader):
    """Views by video, paged through the Analytics API's answer (usage.UsageReader); `video_ids` are not needed."""

    platform = PLATFORM
    counted_by = COUNTED_BY
    source_class = _AnalyticsSource
    source: _AnalyticsSource

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        offset = offset_of(PLATFORM, cursor)
        before = self.source.requests
        try:
            account_id = self.source._client()[0]
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None
        params = query(account_id, offset)
        with needing("the Analytics API needs the 'Analytics Read' permission"):
            answer = self.source.read("GET", "/v1/data", "the analytics report", gone_ok=False, params=params)
        usage, held, total = usage_of_items(answer, utc_text(self.source.clock()))
        following = str(offset + held) if held and offset + held < total else None
        return UsagePage(usage=usage, cursor=following, requests=self.source.requests - before)
