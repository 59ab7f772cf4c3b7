"""Where a sweep of a source library is, and what a finished one hands the next: pure data and rules.

A sweep lists a source page by page (sweeping.lister). `SweepState` is all it needs to resume after any
page: the platform's cursor, the counts so far, the newest change seen (the mark), the videos the last
sweep left still processing (`carried`) and those this one leaves (`pending`), and a platform's delta
cursor (Dropbox's). Where the state is kept is the caller's: a JSON file on the operator's machine
(`migrator inventory --from`), a checkpoint item in the ledger for the stack's mirror (migrator.mirror).

What a finished sweep hands the next one (its "mark record": the mark, the pending videos, the delta
cursor) is merged and read back by the pure functions below, whichever store holds the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

# A delta sweep starts this long before the mark: what changed in the same second, or on a clock a
# little behind, is listed again (loading it twice costs nothing) rather than missed.
MARK_OVERLAP_S = 60.0
# A video still processing at its platform this long after it was first seen so is written off: it goes to
# the unfetchable entries with the reason, and no later sweep asks for it again.
PENDING_MAX_S = 7 * 86_400.0
RECHECK_BATCH = 50  # carried videos asked for again between two saves of the state


def iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if epoch is not None else None


@dataclass
class SweepState:
    platform: str
    cursor: str | None = None
    since: float | None = None
    rows: int = 0
    unfetchable: int = 0
    skipped: int = 0
    pages: int = 0
    lengths: dict = field(default_factory=dict)  # the CLI's: file path -> bytes written through the last saved page
    reasons: dict = field(default_factory=dict)  # reason -> count
    mark: float | None = None
    done: bool = False
    # When this sweep first began (epoch seconds), kept across resumes: the mark is never later than it,
    # so what changed while a long sweep ran (after it had listed it) is listed again by the next delta.
    began: float | None = None
    # Videos the platform was still processing: those the previous sweep left (`carried`, asked for again
    # first, `rechecked` of them so far) and those this sweep leaves (`pending`), each asset id ->
    # {"ref": its source reference, "since": when first seen processing, "reason", "title"}.
    carried: dict = field(default_factory=dict)
    rechecked: int = 0
    pending: dict = field(default_factory=dict)
    # Where the next delta sweep starts, for a platform whose changes are read from a cursor (Dropbox's): the
    # first a page of this sweep handed on (Page.delta), recorded with the mark.
    delta: str | None = None

    def as_doc(self) -> dict:
        return asdict(self)

    @classmethod
    def from_doc(cls, doc: Mapping):
        """The state saved as `as_doc`; TypeError when `doc` is not one."""
        if not isinstance(doc, Mapping):
            raise TypeError("not a sweep's state")
        return cls(**doc)


def sweep_mark(newest_seen: float, began: float) -> float:
    """Where the next delta starts: the newest change this sweep saw, but never later than the moment it
    began, since a video listed early and changed before a long sweep ended was not seen changed."""
    return min(newest_seen, began)


def next_mark(state: SweepState) -> float | None:
    """The mark a finished sweep records (None: it saw no change time, the last mark stays)."""
    if state.mark is None:
        return None
    return sweep_mark(state.mark, state.began if state.began is not None else state.mark)


def recorded(
    before: Mapping | None,
    mark: float | None,
    swept_at: float,
    pending: dict | None = None,
    delta: str | None = None,
) -> dict:
    """The mark record a finished sweep leaves, from the one `before` it: its mark (None: it saw nothing new,
    the last mark stays), when it swept, the videos it left still processing, and the delta cursor (a platform
    read from one: where the next delta starts; the last one stays where this sweep was handed none)."""
    before = before if isinstance(before, Mapping) else {}
    mark = mark if mark is not None else before.get("mark")
    record = {"mark": mark, "mark_time": iso(mark), "swept_at": iso(swept_at), "pending": pending or {}}
    delta = delta or before.get("delta")
    if isinstance(delta, str):
        record["delta"] = delta
    return record


def pending_of(record: Mapping | None) -> dict:
    """The videos a recorded sweep left still processing ({} when none, or the record is not sound)."""
    pending = record.get("pending") if isinstance(record, Mapping) else None
    if not isinstance(pending, dict):
        return {}
    return {k: v for k, v in pending.items() if isinstance(v, dict) and isinstance(v.get("ref"), str)}


def delta_of(record: Mapping | None, since: float | None) -> str | None:
    """The cursor a recorded sweep handed on for a delta (None: none, or `since` asks for more than the
    changes since that sweep: an earlier time than its mark)."""
    if since is None or not isinstance(record, Mapping):
        return None
    delta, mark = record.get("delta"), record.get("mark")
    if not isinstance(delta, str) or not isinstance(mark, int | float):
        return None
    if since < mark - MARK_OVERLAP_S - 1:
        return None
    return delta


def mark_of(record: Mapping | None) -> float | None:
    """The mark a recorded sweep left (None: none, or not a number)."""
    mark = record.get("mark") if isinstance(record, Mapping) else None
    return float(mark) if isinstance(mark, int | float) and not isinstance(mark, bool) else None
