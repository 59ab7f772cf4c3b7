"""A pilot's selection for `migrator load`: `--where FIELD=VALUE` filters and `--sample N [--seed S]` (pure).

The sample is reproducible and streams: each row's place is a hash of the seed and its id, and the
N rows with the smallest hashes are kept (a bottom-k sample), so the same file and seed give the
same rows whatever their order, a larger N keeps every row a smaller one did (a pilot can grow), and
only the N rows kept are held in memory while the file streams past. They are sent in file order.

`--where` keeps rows whose folder, tag or privacy matches VALUE, a glob (`*`, `?`, `[...]`) matched
case-sensitively; `privacy=default` matches rows that leave privacy to the stack. The same field
given twice matches either value; different fields must all match.
"""

from __future__ import annotations

import fnmatch
import hashlib
import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from migrator.messages import AssetMessage

FIELDS = ("folder", "tag", "privacy")
MAX_SAMPLE = 100_000  # rows held at once while the file streams: a pilot, not a migration


def parse_where(text: str) -> tuple[str, str]:
    """FIELD=VALUE, or ValueError saying what is allowed."""
    name, sep, value = text.partition("=")
    name = name.strip().lower()
    if not sep or name not in FIELDS or not value:
        raise ValueError(f"{text!r}: expected FIELD=VALUE with FIELD one of {', '.join(FIELDS)}")
    return name, value


def place(seed: int, asset_id: str) -> int:
    """A row's place in the sample order: stable for a seed and an id, spread uniformly."""
    return int.from_bytes(hashlib.sha256(f"{seed}\0{asset_id}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Selection:
    where: tuple[tuple[str, str], ...] = ()
    sample: int | None = None
    seed: int = 0
    _by_field: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.sample is not None and not 1 <= self.sample <= MAX_SAMPLE:
            raise ValueError(f"--sample must be between 1 and {MAX_SAMPLE:,}")
        for name, value in self.where:
            self._by_field.setdefault(name, []).append(value)

    def described(self) -> list[str]:
        return [f"{name}={value}" for name, value in self.where]

    def matches(self, msg: AssetMessage) -> bool:
        for name, patterns in self._by_field.items():
            if name == "folder":
                values = [msg.folder] if msg.folder is not None else []
            elif name == "tag":
                values = list(msg.tags)
            else:
                values = [msg.privacy or "default"]
            if not any(fnmatch.fnmatchcase(v, p) for v in values for p in patterns):
                return False
        return True

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
