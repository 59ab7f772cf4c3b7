"""Where a Kaltura listing is (pure; sources/kaltura.py lists): media.list's window, the cursor, and the check
of every filter sent on every entry answered.

- media.list answers at most 500 a page (KalturaFilterPager: "maximum page size is 500"; a larger one is cut to it)
  and never past the 10,000th entry of a query ("The server has a hard limit of 10,000 entries when accessing the
  media.list", Kaltura's blog, "Tags editor"; the knowledge base, "API results limitation": order by creation
  time and move the time window on). So no page index is ever turned: every page is page 1 of a window
  `createdAtGreaterThanOrEqual` the last second listed (inclusive) and `createdAtLessThanOrEqual` the second the
  sweep began, ordered `+createdAt`, with `idNotIn` the ids already listed in that last second (`Walk`, the
  cursor). A delta sweep walks `updatedAt` the same way from the mark;
- Kaltura answers a filter field it does not support by ignoring it (and so lists everything): `Walk.check`
  checks every filter sent on every entry answered (the window, `idNotIn`, `statusIn`, the order, the
  credentials' `category_ids`), and one answer outside it stops the listing, naming the filter (`FilterIgnored`).
  `categoriesIdsMatchOr` matches an entry's ACTIVE category links, those with a privacy context too
  (entryFilter::categoryIdsToIdsParsed), which `categoriesIds` leaves out: the check reads both (`categories_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..providers.facts import text
from .base import SourceError
from .kaltura_api import Credentials, is_entry_id, number

PAGE_SIZE = 500  # KalturaFilterPager's maximum
MAX_SEEN = 500  # ids one `idNotIn` carries (more entries than a page within one second cannot be walked past)
# KalturaEntryStatus and KalturaEntryModerationStatus: what is listed.
STATUSES = "-2,-1,0,1,2,4,5,6,7"  # every status but DELETED (3)
STATUSES_HIDDEN = "-2,-1,0,1,4,5,6,7"  # every one media.list hides by default (all but READY and DELETED)
MODERATIONS = "1,2,3,4,5,6"  # every moderation status, so none is hidden by default


class FilterIgnored(SourceError):
    """Kaltura answered an entry outside a filter this listing sent: it ignored that filter field."""


@dataclass(frozen=True)
class Walk:
    """Where a listing is: entries whose `field` lies in [after, until], less the ids listed at `after` already.
    As a cursor: `<field>:<after>:<until>:<id>,<id>...`."""

    field: str
    after: int
    until: int
    seen: tuple[str, ...] = ()

    @classmethod
    def of(cls, cursor: str | None, since: float | None, now: float) -> Walk:
        if cursor:
            parts = cursor.split(":", 3)
            if len(parts) == 4 and parts[0] in ("createdAt", "updatedAt") and all(p.isdigit() for p in parts[1:3]):
                seen = tuple(i for i in parts[3].split(",") if is_entry_id(i))
                return cls(parts[0], int(parts[1]), int(parts[2]), seen)
            raise SourceError(f"kaltura: not a cursor of this listing ({cursor[:40]!r}): list again with --restart")
        if since is None:
            return cls("createdAt", 0, int(now))
        return cls("updatedAt", max(0, int(since)), int(now))

    def cursor(self) -> str:
        return f"{self.field}:{self.after}:{self.until}:{','.join(self.seen)}"

    def filter(self, creds: Credentials) -> dict:
        doc = {
            "objectType": "KalturaMediaEntryFilter",
            "orderBy": f"+{self.field}",
            f"{self.field}GreaterThanOrEqual": self.after,
            f"{self.field}LessThanOrEqual": self.until,
            "statusIn": STATUSES,
            "moderationStatusIn": MODERATIONS,
        }
        if self.seen:
            doc["idNotIn"] = ",".join(self.seen)
        if creds.category_ids:
            doc["categoriesIdsMatchOr"] = ",".join(map(str, creds.category_ids))
        return doc

    def check(self, objects: list[dict], creds: Credentials, links: Mapping[str, set[int]] | None = None) -> None:
        """Every entry answered within every filter sent, in order; FilterIgnored naming the first one not. An
        entry's categories are its `categoriesIds` and its categoryEntry `links` (those with a privacy context)."""
        last, seen, wanted = self.after, set(self.seen), set(creds.category_ids)
        allowed = {int(s) for s in STATUSES.split(",")}
        for entry in objects:
            at = number(entry.get(self.field))
            broken = None
            if at is None or not self.after <= at <= self.until:
                broken = f"{self.field}GreaterThanOrEqual/{self.field}LessThanOrEqual"
            elif at < last:
                broken = f"orderBy +{self.field}"
            elif entry.get("id") in seen:
                broken = "idNotIn"
            elif number(entry.get("status")) not in allowed:
                broken = "statusIn"
            elif wanted and not wanted & set(categories_of(entry, links or {})):
                broken = "categoriesIdsMatchOr (category_ids)"
            if broken or at is None:  # at is None: broken says so
                raise FilterIgnored(
                    f"kaltura: media.list answered an entry outside the filter {broken} (entry"
                    f" {str(entry.get('id'))[:20]}): Kaltura ignores a filter field it does not support and lists"
                    " everything, so the listing stops rather than list what was not asked for"
                )
            last = at

    def next(self, objects: list[dict]) -> Walk | None:
        """The walk after a full page (None after a short one: the window is done)."""
        if len(objects) < PAGE_SIZE:
            return None
        last = number(objects[-1].get(self.field)) or self.after
        tied = [str(e["id"]) for e in objects if number(e.get(self.field)) == last and is_entry_id(e.get("id"))]
        seen = (*self.seen, *tied) if last == self.after else tuple(tied)
        if len(seen) > MAX_SEEN:
            raise SourceError(
                f"kaltura: more than {MAX_SEEN} entries share the {self.field} second {last}: media.list cannot be"
                " walked past them (idNotIn would grow past its limit)"
            )
        return Walk(self.field, last, self.until, seen)


def category_ids(entry: Mapping) -> list[int]:
    ids = [number(i) for i in (text(entry.get("categoriesIds")) or "").split(",") if i.strip()]
    return [i for i in ids if i is not None and i > 0]


def categories_of(entry: Mapping, links: Mapping[str, set[int]]) -> list[int]:
    """The entry's categories: its `categoriesIds` first (the first names the row's folder), then those only
    categoryEntry.list gave (a privacy context's), in id order."""
    listed = category_ids(entry)
    return listed + sorted(links.get(str(entry.get("id")), set()) - set(listed))
