"""What every usage reader shares (issue 45): an answer's counts and ids checked, the batch of ids a per-video reader
reads next from its cursor, and `Reader`, which holds the platform's source (its transport, credentials, pacing and
429 handling) for the requests. The checks are pure: the readers beside it do the requests.

An analytics answer is untrusted like any other: a count that is no whole number from 0 to `usage.MAX_COUNT`, an id
that is no short printable text, or an answer that is not the shape the platform documents stops the pass with a
`SourceError` that names the platform and what was wrong (never a value that could carry a secret: an excerpt).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import ClassVar

from ...fate import excerpt
from ...usage import MAX_COUNT
from ..base import HttpSource, SourceDenied, SourceError

MAX_ID_LENGTH = 200
_PRINTABLE_ID = re.compile(r"^[\x21-\x7e]+$")


def malformed(platform: str, what: str, value: object = None) -> SourceError:
    """The error a malformed analytics answer stops the pass with (an excerpt of the value, at most)."""
    shown = "" if value is None else f": {excerpt(repr(value), 60)}"
    return SourceError(f"{platform}: the analytics answer is malformed: {what}{shown}")


def count(platform: str, value: object, what: str) -> int:
    """A count from an answer: a whole number (an integral float is one) from 0 to MAX_COUNT."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise malformed(platform, f"{what} is not a number", value)
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise malformed(platform, f"{what} is not a whole number", value)
    number = int(value)
    if not 0 <= number <= MAX_COUNT:
        raise malformed(platform, f"{what} is not a count from 0 to {MAX_COUNT:,}", value)
    return number


def optional_count(platform: str, value: object, what: str) -> int | None:
    return None if value is None else count(platform, value, what)


def video_id(platform: str, value: object, what: str = "a video id") -> str:
    """A video's id as an answer names it: short printable text, no spaces."""
    if not isinstance(value, str) or not value or len(value) > MAX_ID_LENGTH or not _PRINTABLE_ID.match(value):
        raise malformed(platform, f"{what} is not an id", value)
    return value


def obj(platform: str, value: object, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise malformed(platform, f"{what} is not an object", value if not isinstance(value, list) else "[...]")
    return value


def array(platform: str, value: object, what: str) -> list:
    if not isinstance(value, list):
        raise malformed(platform, f"{what} is not a list", value if not isinstance(value, Mapping) else "{...}")
    return value


def offset_of(platform: str, cursor: str | None) -> int:
    """The position a per-video reader's cursor names in the pass's ids (None: the start)."""
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 12:
        raise SourceError(f"{platform}: not a usage cursor of this reader: {excerpt(cursor, 40)}")
    return int(cursor)


def batch(platform: str, cursor: str | None, video_ids: Sequence[str], size: int) -> tuple[list[str], str | None]:
    """The ids a per-video reader reads next (at most `size` from the cursor on), and the cursor after them."""
    start = offset_of(platform, cursor)
    chosen = list(video_ids[start : start + size])
    end = start + len(chosen)
    return chosen, (str(end) if end < len(video_ids) else None)


class Reader:
    """A usage reader's base (usage.UsageReader): the platform's source, built with the arguments `sources.build`
    takes, whose `read`/`call` every request of the reader goes through."""

    platform: str
    counted_by: str
    source_class: ClassVar[type[HttpSource]]
    account_wide: bool = True  # an analytics breakdown of the account; a per-video reader says False

    def __init__(self, credentials: Callable[[], Mapping | None], base_url: str | None = None, **options):
        self.source = self.source_class(base_url, credentials, **options)


@contextmanager
def needing(permission: str) -> Iterator[None]:
    """A refusal of the credentials within, said again with what the analytics API needs of them."""
    try:
        yield
    except SourceDenied as exc:
        raise SourceDenied(f"{exc.reason} ({permission})") from None
