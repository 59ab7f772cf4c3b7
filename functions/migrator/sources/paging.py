"""The bound on a source listing: a platform that repeats its pages ends the sweep with a reason.

A listing follows the platform's own "next" (a cursor, a page number, a link) until there is
none. A platform that answers the same next again (Vimeo's `paging.next` stuck on one page),
walks a cycle of cursors (Mux), or keeps handing out empty pages under a total that says more
follow (api.video) would keep a sweep going forever. `PagingGuard.check` is asked about every
page before the sweep follows it; its answer is why the listing cannot go on, or None. A page is
empty only when the platform's page held nothing at all (`held_nothing`): one whose videos are all
still processing, unfetchable, not videos, or unchanged since a delta's mark has nothing to write,
yet the listing is moving (a library of 1,000 Mux assets still preparing is ten such pages). The
sweep stops with that reason before it saves the page, so the resume point stays at the last
page that made sense, and whatever the repeated page held is listed again on resume and
dropped as a repeat by id.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .base import Page

# Empty pages in a row, each naming another page, before the listing is called stuck. A page with
# nothing in it can happen once in a real listing (a video deleted between the count and the read);
# several in a row under a "more follow" cannot.
MAX_EMPTY_PAGES = 3


@dataclass
class PagingGuard:
    max_empty_pages: int = MAX_EMPTY_PAGES
    _seen: set[str] = field(default_factory=set)  # digests of the cursors followed so far
    _empty_run: int = 0

    def check(self, cursor: str | None, page: Page) -> str | None:
        """Why the listing must stop after `page` (read at `cursor`), or None to follow `page.cursor`."""
        if cursor is not None:
            self._seen.add(_digest(cursor))
        if page.cursor is None:
            return None
        if _digest(page.cursor) in self._seen:
            return f"the platform's next page ({_shown(page.cursor)}) is one this listing has already read"
        self._empty_run = self._empty_run + 1 if held_nothing(page) else 0
        if self._empty_run >= self.max_empty_pages:
            return f"{self._empty_run} empty pages in a row while the platform says more follow"
        return None


def held_nothing(page: Page) -> bool:
    """Whether the platform's page held no item at all: nothing written, and nothing still processing,
    unfetchable, skipped as no video, or left out (`Page.listed`). Only such a page counts toward a stuck run."""
    return not (page.entries or page.pending or page.skipped or page.listed)


def _digest(cursor: str) -> str:
    # Digests, not the cursors: a million-video listing follows ten thousand of them, some long.
    return hashlib.sha256(cursor.encode()).hexdigest()[:32]


def _shown(cursor: str) -> str:
    return cursor if len(cursor) <= 40 else cursor[:37] + "..."
