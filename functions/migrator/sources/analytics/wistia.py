"""Wistia's usage: the Stats API, one request per media (issue 45).

Document: "Show Media Stats", https://docs.wistia.com/reference/get_stats-medias-mediaid (the Stats API's OpenAPI file,
version 2026.09.0, server https://api.wistia.com/modern; the same operation under https://api.wistia.com/v1 as
`/stats/medias/{id}.json`, https://docs.wistia.com/docs/stats-api):

- `GET /stats/medias/{mediaId}` with the media's hashed id, the token needing the "Read detailed stats" permission
  (a token with only "Read all folder and media data", which the listing needs, is refused: 401 or 403);
- the answer: `load_count` ("The total number of times this video has been loaded"), `play_count` ("The total
  number of times this video has been played"), `play_rate`, `hours_watched`, `engagement`, `visitors`, `actions`:
  totals over the media's life, so `since` is None. A 404: "Media not found or does not belong to account" (gone
  since the listing: no usage);
- no last play: the media's stats by date (`/stats/medias/{id}/by_date`, "defaults to yesterday and today") would
  need a request per media per range, so `last_played_at` is None.

Per video: `page` reads the next BATCH of the pass's ids from its cursor (their position). Paced as the Wistia source
is, at its documented 600 requests a minute (sources/wistia.py), with its 429 handling, the credentials read per
request and the release header sent with each.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...providers.http import quote
from ...usage import Usage, UsagePage, utc_text
from ..wistia import WistiaSource
from .common import Reader, batch, count, needing, obj, optional_count

PLATFORM = "wistia"
COUNTED_BY = "wistia stats play_count"
BATCH = 25  # medias a page: 2.5 seconds at the documented pace, a cursor saved that often


def usage_of_stats(answer: object, read_at: str) -> Usage:
    """A media's usage from its Show Media Stats answer; SourceError when the answer is not that shape."""
    stats = obj(PLATFORM, answer, "the media's stats")
    return Usage(
        read_at=read_at,
        counted_by=COUNTED_BY,
        plays=count(PLATFORM, stats.get("play_count"), "play_count"),
        views=optional_count(PLATFORM, stats.get("load_count"), "load_count"),
    )


class WistiaUsage(Reader):
    """The Stats API read a media at a time, for the ids the pass hands (usage.UsageReader)."""

    platform = PLATFORM
    counted_by = COUNTED_BY
    source_class = WistiaSource
    account_wide = False  # asked video by video: a video it did not answer for is unknown, not unplayed
    source: WistiaSource

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        ids, following = batch(PLATFORM, cursor, video_ids, BATCH)
        before = self.source.requests
        page = UsagePage(cursor=following)
        for hashed_id in ids:
            with needing("the Stats API needs a token with 'Read detailed stats'"):
                answer = self.source.read("GET", f"/stats/medias/{quote(hashed_id)}", "the media's stats")
            if answer is not None:  # None: gone since the listing
                page.usage[hashed_id] = usage_of_stats(answer, utc_text(self.source.clock()))
        page.requests = self.source.requests - before
        return page
