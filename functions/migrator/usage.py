"""How much a video was watched at its source, as a row carries it (issue 45): the model and its check, pure.

A migration that loses its view counts loses what the owner used to decide what matters, so the inventory
reads each video's usage where its platform exposes it and the row carries it to the ledger, `migrator
export` and, where the target has room, the target's metadata. A row's `usage` is an object:

    {"plays": 1234, "views": 5678, "last_played_at": "2026-03-01T10:00:00Z",
     "read_at": "2026-12-06T12:00:00Z", "counted_by": "kaltura entry plays", "since": null}

- `plays`: times the video was played, in the platform's own count (Kaltura's `plays`, Vimeo's
  `stats.plays`, Wistia's `play_count`, an analytics API's plays or views metric); None: not known.
- `views`: loads or impressions where the platform counts them apart from plays (Kaltura's `views`,
  Wistia's `load_count`); None: not counted apart.
- `last_played_at`: the last play the platform knows of (RFC 3339 UTC); None: never played, or not said
  (a platform that only gives counts: `plays == 0` is then the "never played" a triage reads).
- `read_at`: when the numbers were read (RFC 3339 UTC): a count is only true as of a time.
- `counted_by`: what counted, in words an operator reads (the platform and its metric).
- `since`: where the platform bounds its count to a period (an analytics API's date range), its start
  (RFC 3339 UTC); None: the video's whole life.

Readers (one per platform: `UsageReader`) live beside their sources; this module knows no platform.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from .row_extras import Refused

USAGE_FIELDS = frozenset({"plays", "views", "last_played_at", "read_at", "counted_by", "since"})
MAX_COUNT = 10**15  # more plays than people have ever lived is garbage, and a DynamoDB number holds it
MAX_COUNTED_BY_LENGTH = 200
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass(frozen=True)
class Usage:
    """A video's usage at its source as read at `read_at` (see the module's description)."""

    read_at: str
    counted_by: str
    plays: int | None = None
    views: int | None = None
    last_played_at: str | None = None
    since: str | None = None

    @property
    def never_played(self) -> bool:
        """Known never played: no plays counted and no last play (unknown counts are not "never")."""
        return self.plays == 0 and self.last_played_at is None

    def as_dict(self) -> dict:
        doc: dict = {"read_at": self.read_at, "counted_by": self.counted_by}
        for name in ("plays", "views", "last_played_at", "since"):
            if (value := getattr(self, name)) is not None:
                doc[name] = value
        return doc

    def merged(self, other: Usage) -> Usage:
        """This usage with what `other` (a later or a separate read) knows and this does not."""
        same = other.counted_by == self.counted_by
        return Usage(
            read_at=max(self.read_at, other.read_at),
            counted_by=self.counted_by if same else f"{self.counted_by}; {other.counted_by}",
            plays=other.plays if other.plays is not None else self.plays,
            views=other.views if other.views is not None else self.views,
            last_played_at=_latest(self.last_played_at, other.last_played_at),
            since=other.since if other.plays is not None else self.since,
        )


def _latest(first: str | None, second: str | None) -> str | None:
    if first is None or second is None:
        return first or second
    return first if epoch_of(first) >= epoch_of(second) else second


def epoch_of(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 time (checked by `parse_usage` before it is stored)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def utc_text(epoch: float) -> str:
    """An epoch time as the RFC 3339 UTC text a row carries."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_usage(value: object) -> Usage:
    """A row's `usage`, checked; raises `Refused` with the reason the message is poison."""
    if not isinstance(value, Mapping):
        raise Refused("usage must be an object")
    unknown = set(value) - USAGE_FIELDS
    if unknown:
        raise Refused(f"usage has unknown fields: {', '.join(sorted(map(str, unknown)))}")
    for name in ("plays", "views"):
        count = value.get(name)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT):
            raise Refused(f"usage.{name} must be a whole number from 0 to {MAX_COUNT:,}")
    for name in ("read_at", "last_played_at", "since"):
        when = value.get(name)
        if when is None:
            if name == "read_at":
                raise Refused("usage.read_at is missing: a count is only true as of a time")
            continue
        if not isinstance(when, str) or not _RFC3339.match(when):
            raise Refused(f"usage.{name} must be an RFC 3339 time")
        try:
            epoch_of(when)
        except ValueError:
            raise Refused(f"usage.{name} must be an RFC 3339 time") from None
    counted_by = value.get("counted_by")
    if not isinstance(counted_by, str) or not counted_by.strip():
        raise Refused("usage.counted_by must say what counted")
    if len(counted_by) > MAX_COUNTED_BY_LENGTH or _CONTROL.search(counted_by):
        raise Refused(f"usage.counted_by must be at most {MAX_COUNTED_BY_LENGTH} printable characters")
    return Usage(
        read_at=value["read_at"],
        counted_by=counted_by,
        plays=value.get("plays"),
        views=value.get("views"),
        last_played_at=value.get("last_played_at"),
        since=value.get("since"),
    )


def absent(counted_by: str, read_at: str, since: str | None) -> Usage:
    """The usage of a video a complete account-wide breakdown never named: no plays in its period (`since`)."""
    return Usage(read_at=read_at, counted_by=f"{counted_by} (not in the breakdown)", plays=0, since=since)


# --- readers ---------------------------------------------------------------------------------------------------


@dataclass
class UsagePage:
    """One page of a usage pass: the usage read, by the video's id at its source, and where the next page starts
    (None: the pass is done). `requests` counts the calls this page cost (the benchmark's figure)."""

    usage: dict[str, Usage] = field(default_factory=dict)
    cursor: str | None = None
    requests: int = 0


class UsageReader(Protocol):
    """A platform's usage, read apart from the listing (where the platform prices or paces its analytics apart).

    `page(cursor, video_ids)` reads the next page: an account-wide analytics breakdown pages through the
    platform's own answer and may ignore `video_ids`; a per-video endpoint (Wistia's stats) reads the ids of
    `video_ids` from `cursor` on (the pass hands the ids of the rows it holds, in order). The reader paces
    itself within the source's budget and raises `SourceError` (sources.base) when it cannot go on; the pass
    saves each page's cursor, so a run that stops resumes where it was.

    `account_wide`: the reader walks the account's own breakdown, which names every video played in its period and
    no other; once such a pass is complete, a video it never named was not played in that period (`absent`).
    """

    platform: str
    counted_by: str
    account_wide: bool

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage: ...
