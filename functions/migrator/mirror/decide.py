"""The mirror's decisions, pure: what one scheduled invocation does, where a new sweep starts, how it ended.

- `next_action`: from the checkpoint item as read (`View`), the time, the working-hours window and the time
  the invocation has left: wait for the window, leave the lease's holder alone, stop for want of time, go on
  with a gone-at-source check under way, resume a sweep under way, or start one;
- `start_of`: a new sweep from what the last finished one recorded: a delta from its mark (less the overlap),
  or a full listing (the first sweep, and every `audit_every`-th: its listed ids are compared with the
  ledger's to find what is gone at the source), with the videos it left still processing and its delta cursor;
- `outcome_of`: how a listing ended, in the words `migrator mirror status` shows: finished, paused (time or
  window), throttled (the source's budget is spent: the next invocation resumes), failed, stuck.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from ..sources import SourceThrottled
from ..sweeping import MARK_OVERLAP_S, Stop, SweepFailed, delta_of, mark_of, pending_of
from ..sweeping.lister import Failure

# The time one page needs at worst, which an invocation keeps in hand before it asks for another: the page's
# request (its connect and read timeouts, twice for a retry the source may make) and its sends and saves.
PAGE_RESERVE_S = 45.0


class Action(StrEnum):
    WAIT = "wait"  # the working-hours window is closed: list nothing
    HELD = "held"  # another invocation holds the lease: leave it alone
    SHORT = "short"  # too little time left for a page
    SCAN = "scan"  # a full sweep's gone-at-source check is under way: go on with it
    RESUME = "resume"  # a sweep is under way: go on from its saved state
    START = "start"  # nothing under way: start a sweep


class Outcome(StrEnum):
    FINISHED = "finished"  # the sweep (and any gone check) is done; the mark moved
    PAUSED = "paused"  # out of time, or the window closed: the next invocation resumes
    THROTTLED = "throttled"  # the source's budget is spent: the next invocation resumes
    FAILED = "failed"  # the source failed (or refused the credentials): the next invocation tries again
    STUCK = "stuck"  # the platform's paging repeats itself: the next invocation tries again from the last page
    WAITING = "waiting"  # the window is closed
    HELD = "held"  # another invocation was listing


@dataclass(frozen=True)
class View:
    """The checkpoint item as the decisions read it."""

    lease_until: float | None = None
    sweeping: bool = False  # a sweep's state is saved (under way)
    scanning: bool = False  # a full sweep's gone check is under way
    record: Mapping | None = None  # what the last finished sweep recorded (sweeping.recorded)
    sweeps: int = 0  # sweeps finished
    generation: int = 0  # full sweeps started


def next_action(view: View, now: float, closed_until: float | None, time_left_s: float) -> Action:
    if closed_until is not None:
        return Action.WAIT
    if view.lease_until is not None and view.lease_until > now:
        return Action.HELD
    if time_left_s <= PAGE_RESERVE_S:
        return Action.SHORT
    if view.scanning:
        return Action.SCAN
    return Action.RESUME if view.sweeping else Action.START


@dataclass(frozen=True)
class SweepStart:
    since: float | None  # None: a full listing
    full: bool  # its listed ids are compared with the ledger's (gone at the source)
    cursor: str | None = None  # a platform read from a cursor (Dropbox): where the delta starts
    carried: dict = field(default_factory=dict)  # the videos the last sweep left still processing


def start_of(view: View, audit_every: int) -> SweepStart:
    """A new sweep: full for the first (no mark yet) and every `audit_every`-th (0: never again), else a delta."""
    mark = mark_of(view.record)
    audit = audit_every > 0 and view.sweeps > 0 and view.sweeps % audit_every == 0
    since = None if mark is None or audit else mark - MARK_OVERLAP_S
    full = since is None
    return SweepStart(since, full, delta_of(view.record, since), pending_of(view.record))


def outcome_of(stop: Stop | None, failure: SweepFailed | None) -> Outcome:
    """How a listing ended: `stop` what the lister returned (None when it raised `failure`)."""
    if failure is not None:
        if failure.failure is Failure.STUCK:
            return Outcome.STUCK
        return Outcome.THROTTLED if isinstance(failure.error, SourceThrottled) else Outcome.FAILED
    return Outcome.FINISHED if stop is Stop.DONE else Outcome.PAUSED


def lease_for(now: float, time_left_s: float, margin_s: float = 30.0) -> float:
    """Until when an invocation holds the checkpoint: past its own end (it cannot run longer), by a margin."""
    return now + max(0.0, time_left_s) + margin_s
