"""Mux's usage: Mux Data's views broken down by asset, where the credentials reach Mux Data (issue 45).

Documents: the official SDK, muxinc/mux-python `mux_python/api/metrics_api.py` `list_breakdown_values` (`GET
/data/v1/metrics/{METRIC_ID}/breakdown`, `group_by`, `limit`, `page` "Offset by this many pages, of the size of
`limit`", `order_by`, `order_direction`, `timeframe[]` "array of epoch timestamps ... or duration string e.g.
timeframe[]=24:hours or timeframe[]=7:days") and its models (`ListBreakdownValuesResponse` `{data, total_row_count,
timeframe, meta}`, `BreakdownValue` `{views, value, total_watch_time, total_playing_time, negative_impact, field}`);
Mux's reference for the same operation (https://www.mux.com/docs/api-reference/data/metrics/list-breakdown-values):

- `GET /data/v1/metrics/views/breakdown?group_by=asset_id&timeframe[]=<start>&timeframe[]=<end>&limit=LIMIT&page=N
  &order_by=field&order_direction=asc`: the `views` metric, grouped by `asset_id` (the Mux Video asset a view
  played, which Mux Data fills in itself for Mux Video playback; `video_id` is the player's own metadata, set by
  the developer, so it need not name the asset), ordered by the asset id so that pages do not shift;
- each row's `field` is the asset id and `views` its views: `plays`. The answer's `timeframe` (epoch seconds, as
  Mux rounded it: to the day past 15 days) is the period counted: `since` is its start;
- the range: WINDOW_DAYS back from the read. How far back Mux Data keeps views is not in the documents read here
  (Mux's plans page it by plan); the answer's own `timeframe` is what is reported;
- access: Mux Data needs a token with the Mux Data permission (read); a token with Mux Video only is refused with
  401/403, said as such (`SourceDenied`);
- paced as the Mux source is (5 requests a second), with its 429 handling;
- no last play: a view's time is in the views list (one request per view), so `last_played_at` is None.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlencode

from ...fate import excerpt
from ...usage import Usage, UsagePage, utc_text
from ..base import SourceError
from ..mux import MuxSource
from .common import Reader, array, count, needing, obj, video_id

PLATFORM = "mux"
COUNTED_BY = "mux data views by asset_id"
LIMIT = 100
WINDOW_DAYS = 100
DAY_S = 86400


def query(start: int, end: int, page: int) -> list[tuple[str, str]]:
    """The breakdown's query (a list: `timeframe[]` is repeated)."""
    return [
        ("group_by", "asset_id"),
        ("timeframe[]", str(start)),
        ("timeframe[]", str(end)),
        ("limit", str(LIMIT)),
        ("page", str(page)),
        ("order_by", "field"),
        ("order_direction", "asc"),
    ]


def usage_of_breakdown(answer: object, read_at: str, asked_start: int) -> tuple[dict[str, Usage], int, int]:
    """Each asset's views from one page of the breakdown, the rows the page held and the answer's total."""
    answer = obj(PLATFORM, answer, "the answer")
    frame = answer.get("timeframe")
    start = count(PLATFORM, array(PLATFORM, frame, "timeframe")[0], "timeframe[0]") if frame else asked_start
    total = count(PLATFORM, answer.get("total_row_count"), "total_row_count")
    rows = array(PLATFORM, answer.get("data"), "data")
    found: dict[str, Usage] = {}
    for row in rows:
        row = obj(PLATFORM, row, "a breakdown value")
        asset = video_id(PLATFORM, row.get("field"), "field")
        views = count(PLATFORM, row.get("views"), "views")
        found[asset] = Usage(read_at=read_at, counted_by=COUNTED_BY, plays=views, since=utc_text(start))
    return found, len(rows), total


def parse_cursor(cursor: str | None, now: float) -> tuple[int, int, int]:
    """The page and the timeframe a cursor names (None: page 1, the WINDOW_DAYS before now, to the day)."""
    if cursor is None:
        end = int(now) // DAY_S * DAY_S + DAY_S
        return 1, end - WINDOW_DAYS * DAY_S, end
    try:
        page, start, end = json.loads(cursor)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (page, start, end)):
            raise ValueError
    except (ValueError, TypeError):
        raise SourceError(f"{PLATFORM}: not a usage cursor of this reader: {excerpt(cursor, 40)}") from None
    return page, start, end


class MuxUsage(Reader):
    """Views by asset, paged through Mux Data's breakdown (usage.UsageReader); `video_ids` are not needed."""

    platform = PLATFORM
    counted_by = COUNTED_BY
    source_class = MuxSource
    source: MuxSource

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        number, start, end = parse_cursor(cursor, self.source.clock())
        before = self.source.requests
        path = f"/data/v1/metrics/views/breakdown?{urlencode(query(start, end, number))}"  # timeframe[] twice
        with needing("Mux Data needs a token with the Mux Data permission"):
            answer = self.source.call("GET", path)
        if not 200 <= answer.status < 300:
            raise self.source.failure(answer, "the views breakdown")
        body = self.source.json_of(answer, "the views breakdown")
        usage, held, total = usage_of_breakdown(body, utc_text(self.source.clock()), start)
        following = json.dumps([number + 1, start, end]) if held and number * LIMIT < total else None
        return UsagePage(usage=usage, cursor=following, requests=self.source.requests - before)
