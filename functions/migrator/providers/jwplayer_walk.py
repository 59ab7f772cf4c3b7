"""JW Player's media list walked by a time field under the 10,000-result ceiling of any query (jwplayer.py, the
target's audit; sources/jwplayer.py, the source's listing). Pure.

"The API returns an upper limit of 10,000 media per search query. Regardless of pagination, only the first 10,000
results based on the sorting used may be retrieved" (docs.jwplayer.com/platform/reference/listing-media); `q` takes
a range of a date field, `<field>:[<from> TO <to>]`, and `sort=<field>:asc` ("Building a request").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from .facts import mapping, text

# "The API returns an upper limit of 10,000 media per search query. Regardless of pagination, only the first
# 10,000 results based on the sorting used may be retrieved" (listing-media).
CEILING = 10_000


def stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CeilingError(ValueError):
    """More media share one second than one query may return: what lies past them cannot be listed."""


@dataclass(frozen=True)
class Slice:
    """Where a walk of the library by a time field stands: the query `<field>:[lo TO hi]` (whole seconds),
    sorted on the field ascending, read from its first page; the ids already listed in its first second
    (`tail`, dropped there). Each page moves `lo` up to the second of the page's last media, so every query
    reads its first page only and none comes near the ceiling; a page wholly inside one second reads that
    query's next page instead (`page`), up to the ceiling."""

    lo: int
    hi: int
    page: int = 1
    tail: tuple[str, ...] = ()

    @classmethod
    def parse(cls, cursor: str | None) -> Slice | None:
        """`<lo>:<hi>:<page>:<id,id,...>`; None for anything else."""
        head = (cursor or "").split(":", 3)
        if len(head) != 4 or not all(h.isdigit() for h in head[:3]) or int(head[2]) < 1:
            return None
        tail = tuple(i for i in head[3].split(",") if i.isalnum())
        return cls(int(head[0]), int(head[1]), int(head[2]), tail)

    def __str__(self) -> str:
        return f"{self.lo}:{self.hi}:{self.page}:{','.join(self.tail)}"

    def params(self, field: str, size: int) -> dict[str, str]:
        return {
            "q": f"{field}:[{stamp(self.lo)} TO {stamp(self.hi)}]",
            "sort": f"{field}:asc",
            "page": str(self.page),
            "page_length": str(size),
        }

    def following(self, items: list, total: object, size: int, when: Callable[[Mapping], float | None]) -> Slice | None:
        """The slice after a page of `items` (read at page length `size`), None when the query is done."""
        listed = (self.page - 1) * size + len(items)
        told_total = total if isinstance(total, int) and not isinstance(total, bool) else None
        if not items or (told_total is not None and told_total <= listed) or (told_total is None and len(items) < size):
            return None
        times = [t for t in (when(mapping(i)) for i in items) if t is not None and math.isfinite(t)]
        if not times:
            raise CeilingError("a page of media without the times it is sorted on")
        last = math.floor(max(times))
        if last > self.lo:
            ids = [(text(mapping(m).get("id")), second_of(m, when)) for m in items]
            tail = tuple(i for i, second in ids if i and second == last)
            return Slice(last, self.hi, 1, tail)
        if self.page * size >= CEILING:
            raise CeilingError(f"more than {CEILING:,} media share the second {stamp(self.lo)}")
        return Slice(self.lo, self.hi, self.page + 1, self.tail)


def second_of(item: object, when: Callable[[Mapping], float | None]) -> int | None:
    moment = when(mapping(item))
    return math.floor(moment) if moment is not None and math.isfinite(moment) else None
