"""Reconcile's decisions, as functions of data: which assets have no live work, which to poll.

The ledger is the truth and the queue is only a means of delivery, so an asset whose
message was lost is found here by what its item says, never by looking at the queue:

- uploading, its lease expired, and quiet (no claim, no heal) for `heal_after_s`: the
  worker died and its message is gone too (a surviving message would have come back
  after the queue's visibility timeout and claimed it);
- pending, inventoried or failed, past its retry time, a message expected (it was
  claimed or enqueued before) and quiet for `heal_after_s`: the deferred message was lost.

An asset that was only staged (`load --stage`) or probed has never been enqueued: it
waits for the operator, not for a heal. A failed asset without a retry time has failed
for good: only the operator's `retry` moves it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from .providers.facts import Video
from .states import State

HEAL_STATES = (State.UPLOADING, State.PENDING, State.INVENTORIED, State.FAILED)
POLL_STATES = (State.PROCESSING,)
# What these rules read from an item of the by_state index: the index must project them.
INDEX_FIELDS = (
    *("asset_id", "state_shard", "updated_at"),  # the keys: where an item stands in the index
    *("state", "lease_until", "retry_after", "claimed_at", "enqueued_at", "remote_id"),
)


def _time(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def heal_reason(item: dict, now: float, heal_after_s: float) -> str | None:
    """Why `item` has no live work and should be re-enqueued, or None when it should be left alone."""
    try:
        state = State(item.get("state"))
    except ValueError:
        return None
    updated_at = _time(item.get("updated_at"))
    if updated_at is None or state not in HEAL_STATES:
        return None
    if state is State.UPLOADING:
        lease_until = _time(item.get("lease_until"))
        if lease_until is not None and lease_until >= now:
            return None  # a live lease: its holder is working
        if now - updated_at <= heal_after_s:
            return None
        return f"uploading with a lease expired {now - (lease_until or updated_at):.0f} s ago and no claim since"
    retry_after = _time(item.get("retry_after"))
    if state is State.FAILED and retry_after is None:
        return None  # failed for good: the operator's retry decides
    if item.get("claimed_at") is None and item.get("enqueued_at") is None:
        return None  # staged or probed, never enqueued: it waits for the operator
    quiet_since = max(updated_at, retry_after or updated_at)
    if now - quiet_since <= heal_after_s:
        return None
    return f"{state} past its retry time with no message for {now - quiet_since:.0f} s"


def poll_due(item: dict, now: float, poll_after_s: float) -> bool:
    """A processing asset the provider has had for longer than `poll_after_s`: its webhook may be lost."""
    updated_at = _time(item.get("updated_at"))
    return item.get("state") == State.PROCESSING.value and updated_at is not None and now - updated_at > poll_after_s


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
    max_items: int = 2000  # index items examined per run, over every lane
    max_polls: int = 200  # provider GETs per run: polls share the provider's rate limit
    drift_tolerance_s: float = 0.5


OVERRIDES = {
    # name: (low, high) — what an on-demand run may change
    "heal_after_s": (0.0, 30 * 86_400.0),
    "poll_after_s": (0.0, 30 * 86_400.0),
    "max_items": (1, 1_000_000),
    "max_polls": (0, 100_000),
}


class RunRequestError(ValueError):
    """An on-demand reconcile request that cannot be honoured; the message says why."""


def limits_for(event: object, defaults: RunLimits) -> tuple[RunLimits, bool]:
    """The limits for one run and whether to restart from the oldest items (drop the checkpoint).

    A scheduled event (EventBridge) runs with the defaults. An on-demand event is an
    object of overrides; anything else is refused, so a typo is never silently ignored.
    """
    if not isinstance(event, dict) or event.get("source") == "aws.events" or "detail-type" in event:
        return defaults, False
    unknown = sorted(set(event) - set(OVERRIDES) - {"restart"})
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
    restart = event.get("restart", False)
    if not isinstance(restart, bool):
        raise RunRequestError("restart must be true or false")
    return RunLimits(**{**defaults.__dict__, **changes}), restart
