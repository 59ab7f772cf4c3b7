"""JW Player's usage: the Analytics API, plays per media over the widest range it serves (issue 45).

Documents: "Analytics API reference" (https://developer.jwplayer.com/jwplayer/docs/analytics-api-reference, the
route and the query body), "Data Availability" (https://docs.jwplayer.com/platform/docs/analytics-reference) and the
reference page of the route (https://docs.jwplayer.com/platform/reference/analytics); the official SDK's call,
jwplatform-py `jwplatform/client.py` `_AnalyticsClient.query` (`POST /v2/sites/{site_id}/analytics/queries/`):

- `POST /v2/sites/{site_id}/analytics/queries/` (JSON answers: `format` json is the default), the body
  `{"start_date", "end_date" (YYYY-MM-DD), "dimensions": ["media_id"], "metrics": [{"operation": "sum", "field":
  "plays"}], "sort": [{"field": "plays", "order": "DESCENDING"}], "page", "page_length"}` as the reference's
  "Query body structure" writes it; `page` counts from 0 (the reference's example asks page 0);
- the range: "Earliest available data 2017-01-01", "Query date range limit: Non-Enterprise: No limit; Enterprise: ...
  No limit for queries that do not include any premium metrics or dimensions" (media_id and plays are not premium).
  So the query runs from 2017-01-01 to the day read, and `since` says 2017-01-01 (midnight US Eastern, the
  "Reporting time zone": 05:00 UTC) since a play before it is not counted;
- paging: "Page length Default: 10 rows per page Maximum: 100 rows per page": PAGE_LENGTH 100, the next page asked
  until a page comes back short;
- the answer: `data.rows` (one list a row) in the order `metadata.column_headers.dimensions` then `.metrics` name
  (each `{"field": ...}`); where the headers are absent, the order asked (media_id, plays);
- the rate: "60 requests/minute per API token or IP", the Management API's budget, shared with the listing: paced
  as the JW Player source is (1 a second, its 429 lock-out handling);
- no last play: the `eastern_date` dimension would multiply the rows by the days played, so `last_played_at` is None.

A media with no play in the range is not in the answer at all: the reader names only the medias the answer holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from ...fate import excerpt
from ...providers.http import quote
from ...usage import Usage, UsagePage, utc_text
from ..base import SourceError
from ..jwplayer import JwPlayerSource
from .common import Reader, array, count, malformed, obj, video_id

PLATFORM = "jwplayer"
EARLIEST_DAY = "2017-01-01"  # "Earliest available data"
SINCE = "2017-01-01T05:00:00Z"  # its midnight in the reporting time zone, US Eastern (UTC-5 in January)
COUNTED_BY = f"jwplayer analytics plays (sum) since {EARLIEST_DAY}, the earliest data JW Player keeps"
PAGE_LENGTH = 100  # "Maximum: 100 rows per page"


def query_body(page: int, end_day: str) -> dict:
    """The query of one page of plays by media, as the reference's "Query body structure" writes it."""
    return {
        "start_date": EARLIEST_DAY,
        "end_date": end_day,
        "dimensions": ["media_id"],
        "metrics": [{"operation": "sum", "field": "plays"}],
        "sort": [{"field": "plays", "order": "DESCENDING"}],
        "page": page,
        "page_length": PAGE_LENGTH,
    }


def _columns(answer: Mapping) -> tuple[int, int]:
    """Where media_id and plays are in a row: as the answer's column headers say, else in the order asked."""
    headers = answer.get("metadata", {}).get("column_headers") if isinstance(answer.get("metadata"), Mapping) else None
    if headers is None:
        return 0, 1
    headers = obj(PLATFORM, headers, "metadata.column_headers")
    names = [
        obj(PLATFORM, h, "a column header").get("field")
        for h in array(PLATFORM, headers.get("dimensions", []), "column_headers.dimensions")
        + array(PLATFORM, headers.get("metrics", []), "column_headers.metrics")
    ]
    if "media_id" not in names or "plays" not in names:
        raise malformed(PLATFORM, "the columns are not media_id and plays", names)
    return names.index("media_id"), names.index("plays")


def usage_of_rows(answer: object, read_at: str) -> tuple[dict[str, Usage], int]:
    """Each media's plays from one page of the answer, and how many rows the page held."""
    answer = obj(PLATFORM, answer, "the answer")
    rows = array(PLATFORM, obj(PLATFORM, answer.get("data"), "data").get("rows"), "data.rows")
    at_id, at_plays = _columns(answer)
    found: dict[str, Usage] = {}
    for row in rows:
        row = array(PLATFORM, row, "a row")
        if len(row) <= max(at_id, at_plays):
            raise malformed(PLATFORM, "a row is short of its columns", row)
        plays = count(PLATFORM, row[at_plays], "plays")
        media = video_id(PLATFORM, row[at_id], "media_id")
        found[media] = Usage(read_at=read_at, counted_by=COUNTED_BY, plays=plays, since=SINCE)
    return found, len(rows)


def parse_cursor(cursor: str | None, today: str) -> tuple[int, str]:
    """The page and the range's last day a cursor names (None: page 0, ending today)."""
    if cursor is None:
        return 0, today
    page, _, end = cursor.partition("@")
    try:
        datetime.strptime(end, "%Y-%m-%d")
    except ValueError:
        raise SourceError(f"{PLATFORM}: not a usage cursor of this reader: {excerpt(cursor, 40)}") from None
    if not page.isdigit() or len(page) > 9:
        raise SourceError(f"{PLATFORM}: not a usage cursor of this reader: {excerpt(cursor, 40)}")
    return int(page), end


class JwPlayerUsage(Reader):
    """Plays by media, paged through the Analytics API's answer (usage.UsageReader); `video_ids` are not needed."""

    platform = PLATFORM
    counted_by = COUNTED_BY
    source_class = JwPlayerSource
    source: JwPlayerSource

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        today = datetime.fromtimestamp(self.source.clock(), UTC).strftime("%Y-%m-%d")
        number, end_day = parse_cursor(cursor, today)  # a resumed pass keeps the range it started with
        before = self.source.requests
        path = f"/v2/sites/{quote(self.source.jw().site_id)}/analytics/queries/"
        answer = self.source.read(
            "POST", path, "the analytics query", gone_ok=False, json_body=query_body(number, end_day)
        )
        usage, rows = usage_of_rows(answer, utc_text(self.source.clock()))
        following = f"{number + 1}@{end_day}" if rows == PAGE_LENGTH else None
        return UsagePage(usage=usage, cursor=following, requests=self.source.requests - before)
