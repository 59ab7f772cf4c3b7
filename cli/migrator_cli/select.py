"""A selection for `migrator load`, `plan` and `inventory`: `--where` filters and `--sample N [--seed S]` (pure).

The sample is reproducible and streams: each row's place is a hash of the seed and its id, and the
N rows with the smallest hashes are kept (a bottom-k sample), so the same file and seed give the
same rows whatever their order, a larger N keeps every row a smaller one did (a pilot can grow), and
only the N rows kept are held in memory while the file streams past. They are sent in file order.

`--where EXPRESSION` is the triage language (where.py: usage, dates, size, duration, privacy, folder,
tag, collection, title; and, or, not). Its older, simpler form `--where FIELD=VALUE` is read as it always
was: rows whose folder, tag or privacy matches VALUE, a glob (`*`, `?`, `[...]`) matched case-sensitively;
`privacy=default` matches rows that leave privacy to the stack; the same field given twice matches
either value, different fields must all match. Every expression given must hold as well.
"""

from __future__ import annotations

import fnmatch
import hashlib
import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from migrator.messages import AssetMessage
from migrator.where import Expression, WhereError, parse

FIELDS = ("folder", "tag", "privacy")
MAX_SAMPLE = 100_000  # rows held at once while the file streams: a pilot, not a migration


def parse_where(text: str) -> tuple[str, str]:
    """FIELD=VALUE, or ValueError saying what is allowed."""
    name, sep, value = text.partition("=")
    name = name.strip().lower()
    if not sep or name not in FIELDS or not value:
        raise ValueError(f"{text!r}: expected FIELD=VALUE with FIELD one of {', '.join(FIELDS)}")
    return name, value


_OLD_FORM = re.compile(r"^(?i:folder|tag|privacy)=\S+$")


def parse_clause(text: str, now: float) -> tuple[str, str] | Expression:
    """One `--where`: FIELD=VALUE (the old form, written without spaces, or any text the language cannot read
    that the old form takes, such as `folder=Sales Team*`) or an expression; ValueError saying what is wrong."""
    if _OLD_FORM.match(text):
        return parse_where(text)
    try:
        return parse(text, now)
    except WhereError as exc:
        try:
            return parse_where(text)
        except ValueError:
            raise exc from None


def place(seed: int, asset_id: str) -> int:
    """A row's place in the sample order: stable for a seed and an id, spread uniformly."""
    return int.from_bytes(hashlib.sha256(f"{seed}\0{asset_id}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Selection:
    where: tuple[tuple[str, str], ...] = ()
    sample: int | None = None
    seed: int = 0
    expressions: tuple[Expression, ...] = ()  # every one must hold, besides the FIELD=VALUE filters
    _by_field: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.sample is not None and not 1 <= self.sample <= MAX_SAMPLE:
            raise ValueError(f"--sample must be between 1 and {MAX_SAMPLE:,}")
        for name, value in self.where:
            self._by_field.setdefault(name, []).append(value)

    @property
    def filters(self) -> bool:
        """Whether anything is filtered (a left-behind report has something to say)."""
        return bool(self.where or self.expressions)

    def described(self) -> list[str]:
        return [f"{name}={value}" for name, value in self.where] + [e.text for e in self.expressions]

    def matches(self, msg: AssetMessage) -> bool:
        return self.why_not(msg) is None

    def why_not(self, msg: AssetMessage) -> str | None:
        """None when `msg` is selected; else the filter it failed, in words, and its value."""
        for name, patterns in self._by_field.items():
            if name == "folder":
                values = [msg.folder] if msg.folder is not None else []
            elif name == "tag":
                values = list(msg.tags)
            else:
                values = [msg.privacy or "default"]
            if not any(fnmatch.fnmatchcase(v, p) for v in values for p in patterns):
                wanted = " or ".join(f"{name}={p}" for p in patterns)
                held = ", ".join(repr(v) for v in values[:5]) if values else "none"
                return f"{wanted} is false: {name} {held}"
        return next((why for e in self.expressions if (why := e.why_not(msg)) is not None), None)

    def sampled(self, messages: Iterable[AssetMessage], counts) -> Iterator[AssetMessage]:
        """The `sample` messages of smallest place, in the order they came; `counts.sampled_out`
        counts the others; every message when there is no `sample`."""
        if self.sample is None:
            yield from messages
            return
        kept: list[tuple[int, int, AssetMessage]] = []  # (-place, order, message): a max-heap of the kept
        seen = 0
        for order, msg in enumerate(messages):
            seen += 1
            entry = (-place(self.seed, msg.asset_id), order, msg)
            if len(kept) < self.sample:
                heapq.heappush(kept, entry)
            elif entry > kept[0]:  # a smaller place than the largest kept one
                heapq.heapreplace(kept, entry)
        counts.sampled_out += seen - len(kept)
        for _, _, msg in sorted(kept, key=lambda e: e[1]):
            yield msg


def where_argument(text: str):
    """argparse's type for `--where`: a FIELD=VALUE pair or an expression, its ages counted back from now."""
    import argparse
    import time

    try:
        return parse_clause(text, time.time())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def selection_of(clauses, sample: int | None = None, seed: int = 0) -> Selection | None:
    """The Selection of `--where` clauses (as `where_argument` read them) and a sample; None when neither is given."""
    clauses = list(clauses or ())
    if not clauses and sample is None:
        return None
    pairs = tuple(c for c in clauses if isinstance(c, tuple))
    expressions = tuple(c for c in clauses if not isinstance(c, tuple))
    return Selection(pairs, sample, seed, expressions)
