"""How much each library video was watched (issue 45), computed from its index like the rest of the library
(library.py), so a library of a million holds no counts until one is asked. A profile renders these in its own
fields, each documented where it does (platforms/kaltura_entries.py: an entry's plays, views, lastPlayedAt;
platforms/vimeo.py: a video's stats.plays).

- one video in five (index % 5 == 1) was never played: 0 plays, no last play, and a few loads without a play (not
  the fifth a library's `library_unfetchable_every: 5` holds back, index % 5 == 4: a never-played video is listed);
- the others were played 1 to 20,000 times, loaded more often than played, and last played 0 to 1,199 days before
  the day the simulator answers (but not before the video was made): spread over the triage's buckets (played in
  the last year, not in 12 months, not in 24), whatever day the library is listed;
- `hidden(index)`: where a platform can withhold its count (Vimeo's null `stats.plays`), one video in six.
"""

from __future__ import annotations

import time

NEVER_PLAYED_EVERY = 5
HIDDEN_EVERY = 6
DAY_S = 86_400
MOST_DAYS_SINCE_PLAY = 1_200


def never_played(index: int) -> bool:
    return index % NEVER_PLAYED_EVERY == 1


def plays(index: int) -> int:
    return 0 if never_played(index) else 1 + (index * 7919) % 20_000


def views(index: int) -> int:
    """Loads of the player, a play or not: at least the plays."""
    return index % 3 if never_played(index) else plays(index) + (index * 31) % 5_000


def last_played(index: int, created: float, now: float | None = None) -> int | None:
    """Unix seconds of the last play, None when never played; days before today (the day `now` falls in, so the
    same all day), never before `created`."""
    if never_played(index):
        return None
    today = int((time.time() if now is None else now) // DAY_S) * DAY_S
    return max(int(created) + 1, today - ((index * 131) % MOST_DAYS_SINCE_PLAY) * DAY_S)


def hidden(index: int) -> bool:
    return index % HIDDEN_EVERY == HIDDEN_EVERY - 1
