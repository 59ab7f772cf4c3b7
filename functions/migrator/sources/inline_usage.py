"""Usage read in the listing itself, at no request of its own (issue 45): the sources whose list answer carries each
video's counts. Pure readers over one listed video; the sources (kaltura.py, vimeo.py) put what they return in the
row's `usage` (usage.py), `read_at` the time of the listing.

- Kaltura: a media entry is a KalturaPlayableEntry, whose `plays` ("Number of plays"), `views` ("Number of views")
  and `lastPlayedAt` ("The last time the entry was played", Unix seconds) are read-only ints on every entry
  media.list answers (KalturaApiClient 23.10.0, Plugins/Core.py KalturaPlayableEntry; developer.kaltura.com
  /api-docs/General_Objects/Objects/KalturaPlayableEntry). `lastPlayedAt` is null (or 0) where it was never played;
- Vimeo: the video's `stats.plays`, "The current total number of times that the video has been played" (Video,
  vimeo.json 3.4: developer.vimeo.com/api/reference/response/video; the OpenAPI types it nullable: generated clients
  read `plays: Optional[...]`, e.g. konfig-sdks/vimeo-python-sdk VideoStats). It is null where Vimeo does not show
  the count (vimeo/vimeo.php issue 309, "stats.plays is at null", answered "a better ticket for Vimeo support"):
  then no plays are known, never 0, and the row carries no usage. The listing asks for it by name in its `fields`
  (the JSON filter, developer.vimeo.com/api/common-formats#json-filter). Vimeo gives no last play in the video.

Every count comes from outside and is checked: a whole number within usage.MAX_COUNT, else not known.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..usage import MAX_COUNT, Usage, utc_text

KALTURA_COUNTED_BY = "kaltura entry plays"
VIMEO_COUNTED_BY = "vimeo stats.plays"
EARLIEST_PLAY = 946_684_800  # 2000-01-01: no platform here counted a play before it; an earlier time is garbage


def count_of(value: object) -> int | None:
    """A count as the platform sent it, when it is one: a whole number from 0 to MAX_COUNT (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        return None
    return value


def kaltura_usage(entry: Mapping, read_at: float) -> Usage | None:
    """An entry's `plays`, `views` and `lastPlayedAt` as usage read at `read_at`; None when it carries none of them."""
    plays, views = count_of(entry.get("plays")), count_of(entry.get("views"))
    last = entry.get("lastPlayedAt")
    last_played = None
    if not isinstance(last, bool) and isinstance(last, int) and EARLIEST_PLAY <= last <= read_at + 86_400:
        last_played = utc_text(last)
    if plays is None and views is None and last_played is None:
        return None
    return Usage(
        read_at=utc_text(read_at),
        counted_by=KALTURA_COUNTED_BY,
        plays=plays,
        views=views,
        last_played_at=last_played,
    )


def vimeo_usage(video: Mapping, read_at: float) -> Usage | None:
    """A video's `stats.plays` as usage read at `read_at`; None where Vimeo hides it (null) or sent no count."""
    stats = video.get("stats")
    plays = count_of(stats.get("plays")) if isinstance(stats, Mapping) else None
    if plays is None:
        return None
    return Usage(read_at=utc_text(read_at), counted_by=VIMEO_COUNTED_BY, plays=plays)
