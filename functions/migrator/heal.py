"""Reconcile's decisions, as functions of data: which assets have no live work, which to poll.

The ledger is the truth and the queue is only a means of delivery, so an asset whose
message was lost is found here by what its item says, never by looking at the queue.
Reconcile reads only the due lanes (`due.py`: a sparse index of the assets it may have to
act on), and these rules confirm what the lane says before anything is sent:

- `heal` lane, uploading: its lease expired and nothing claimed it for `heal_after_s`:
  the worker died and its message is gone too (a surviving message would have come back
  after the queue's visibility timeout and claimed it);
- `heal` lane, pending, inventoried or failed: its deferred message was due back at its
  retry time, and nothing came for `heal_after_s`: the message was lost;
- `queued` lane: a message was sent and never claimed for `queued_after_s`, just inside the
  queue's retention: the queue may drop it, so it is sent again from the ledger.

A staged asset, one failed for good and a settled one are in no lane: they wait for the
operator or for nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from . import due
from .due import Family
from .providers.facts import Video
from .states import State

HEAL_STATES = (State.UPLOADING, State.PENDING, State.INVENTORIED, State.FAILED)
POLL_STATES = (State.PROCESSING,)
# A work queue keeps a message this long unless the stack says otherwise (SQS's 14-day maximum).
DEFAULT_RETENTION_S = 1_209_600.0


def _time(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def heal_reason(item: dict, now: float, heal_after_s: float, queued_after_s: float = math.inf) -> str | None:
    """Why `item` (read from a heal or queued lane) has no live work and should be re-enqueued,
    or None when it should be left alone."""
    try:
        state = State(str(item.get("state")))  # None, or any word that is no state: ValueError
    except ValueError:
        return None
    family = due.family_of(str(item.get("due_lane") or ""))
    due_at = _time(item.get("due_at"))
    if state not in HEAL_STATES or due_at is None or _time(item.get("updated_at")) is None:
        return None
    if state is State.UPLOADING:
        lease_until = _time(item.get("lease_until"))
        if lease_until is None or lease_until >= now:
            return None  # a live lease: its holder is working
    silent = now - due_at
    if family is Family.QUEUED:
        if silent <= queued_after_s:
            return None
        return f"{state} queued {silent:.0f} s ago and never claimed: its message may have expired"
    if family is not Family.HEAL or silent <= heal_after_s:
        return None
    if state is State.UPLOADING:
        return f"uploading with a lease expired {silent:.0f} s ago and no claim since"
    if _time(item.get("retry_after")) is None:
        return None  # failed for good (a stale index entry): the operator's retry decides
    return f"{state} past its retry time with no message for {silent:.0f} s"


def poll_due(item: dict, now: float, poll_after_s: float) -> bool:
    """A processing asset silent for longer than `poll_after_s` since it reached the provider
    or was last asked: its webhook may be lost."""
    due_at = _time(item.get("due_at"))
    return item.get("state") == State.PROCESSING.value and due_at is not None and now - due_at > poll_after_s


def stuck_for(item: dict, now: float, max_processing_s: float) -> float | None:
    """Seconds an asset has been processing, when that is past `max_processing_s` (0: no limit)."""
    since = _time(item.get("processing_at"))
    if max_processing_s <= 0 or since is None or now - since <= max_processing_s:
        return None
    return now - since


# Answers that say nothing about a processing asset (the provider has no such video, or a
# status we cannot read) before reconcile stops polling it: failed, for the operator's retry.
MAX_POLL_MISSES = 3


class PollVerdict(StrEnum):
    SETTLE = "settle"  # the provider finished: ready or rejected
    WORKING = "working"  # the provider is still at it: poll again later
    MISS = "miss"  # no such video, or an answer we cannot read: counts toward MAX_POLL_MISSES
    LATER = "later"  # our side or the path failed (throttled, 5xx): ask again, nothing learned


def poll_verdict(http_status: int, video: Video | None) -> PollVerdict:
    """What one poll's answer means for a processing asset (pure)."""
    if http_status == 404:
        return PollVerdict.MISS
    if not 200 <= http_status < 300:
        return PollVerdict.LATER
    if video is None or not video.known:
        return PollVerdict.MISS
    return PollVerdict.SETTLE if video.target is not None else PollVerdict.WORKING


@dataclass(frozen=True)
class RunLimits:
    """One reconcile run's thresholds and bounds."""

    heal_after_s: float = 3600.0
    poll_after_s: float = 1800.0
    max_items: int = 2000  # due-lane items examined per run, over every lane
    max_polls: int = 200  # provider GETs per run: polls share the provider's rate limit
    drift_tolerance_s: float = 0.5
    queued_after_s: float = due.queued_after_s(DEFAULT_RETENTION_S)
    max_processing_s: float = 86_400.0  # a video still processing after this is failed with the reason; 0: never


OVERRIDES = {
    # name: (low, high) — what an on-demand run may change
    "heal_after_s": (0.0, 30 * 86_400.0),
    "poll_after_s": (0.0, 30 * 86_400.0),
    "queued_after_s": (0.0, 30 * 86_400.0),
    "max_items": (1, 10_000_000),
    "max_polls": (0, 100_000),
}


class RunRequestError(ValueError):
    """An on-demand reconcile request that cannot be honoured; the message says why."""


def limits_for(event: object, defaults: RunLimits) -> RunLimits:
    """The limits for one run.

    A scheduled event (EventBridge) runs with the defaults. An on-demand event is an
    object of overrides; anything else is refused, so a typo is never silently ignored.
    """
    if not isinstance(event, dict) or event.get("source") == "aws.events" or "detail-type" in event:
        return defaults
    unknown = sorted(set(event) - set(OVERRIDES))
    if unknown:
        raise RunRequestError(f"unknown reconcile option(s): {', '.join(unknown)}")
    changes: dict = {}
    for name, (low, high) in OVERRIDES.items():
        if name not in event:
            continue
        value = event[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RunRequestError(f"{name} must be a number")
        if not low <= value <= high:
            raise RunRequestError(f"{name} must be between {low:g} and {high:g}")
        changes[name] = int(value) if isinstance(low, int) else float(value)
    return RunLimits(**{**defaults.__dict__, **changes})
