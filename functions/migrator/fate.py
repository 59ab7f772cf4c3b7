"""Pure decisions: what a message's fate is and where its asset moves next.

Nothing here does I/O. The uploader feeds in what the ledger and the provider said
and applies what comes out, so every rule below is unit-tested as a table.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .pacing import RateSignal
from .redact import redact_credentials, strip_controls
from .retry import backoff_delay, throttle_delay
from .states import AT_PROVIDER, State

ERROR_EXCERPT_CHARS = 300


class FateKind(StrEnum):
    FINISHED = "finished"  # delete the message: nothing more to do for it
    LATER = "later"  # make it visible again after `delay_s`, report it as a batch failure
    POISON = "poison"  # it can never succeed: record why, delete it


@dataclass(frozen=True)
class Fate:
    kind: FateKind
    reason: str
    delay_s: float = 0.0
    # LATER only. `pacing`: the provider's pace (a hold, a 429), not a fault of this message:
    # no receive-based floor. `paced_receives`: earlier receives that were pacing, which the
    # floor meant for a message that keeps failing does not count.
    pacing: bool = False
    paced_receives: int = 0

    @classmethod
    def finished(cls, reason: str) -> Fate:
        return cls(FateKind.FINISHED, reason)

    @classmethod
    def later(cls, delay_s: float, reason: str, pacing: bool = False) -> Fate:
        return cls(FateKind.LATER, reason, max(0.0, delay_s), pacing)

    @classmethod
    def poison(cls, reason: str) -> Fate:
        return cls(FateKind.POISON, reason)


# --- a claim the ledger refused -------------------------------------------------------


def claim_eligible(item: Mapping | None, now: float) -> bool:
    """The claim's DynamoDB condition as a pure predicate (the emulator tests check they agree)."""
    if not item:
        return True
    state = State(item["state"])
    retry_after = _number(item.get("retry_after"))
    if state in (State.PENDING, State.INVENTORIED):
        return retry_after is None or retry_after <= now
    if state is State.FAILED:
        return retry_after is not None and retry_after <= now
    if state is State.UPLOADING:
        lease_until = _number(item.get("lease_until"))
        return lease_until is not None and lease_until < now
    return False


def fate_of_refused_claim(item: Mapping, now: float, rng: random.Random) -> Fate:
    """The fate of a message whose claim failed, from the item as it stood (ALL_OLD)."""
    state = State(item["state"])
    retry_after = _number(item.get("retry_after"))
    if state in AT_PROVIDER:
        return Fate.finished(f"duplicate: asset already {state}")
    if state is State.REJECTED:
        return Fate.finished("duplicate: asset was rejected")
    if state is State.FAILED and retry_after is None:
        return Fate.finished("asset failed for good; use retry to try again")
    if state is State.UPLOADING:
        lease_until = _number(item.get("lease_until")) or now
        return Fate.later(lease_until - now + rng.uniform(1.0, 3.0), "another worker holds the lease")
    if retry_after is not None and retry_after > now:
        return Fate.later(retry_after - now + rng.uniform(0.0, 1.0), f"asset {state} until its retry time")
    # The item changed between our condition and now (a race we lost): look again soon.
    return Fate.later(rng.uniform(1.0, 3.0), f"claim refused in state {state}; will look again")


# --- a claim the ledger granted -------------------------------------------------------


@dataclass(frozen=True)
class ClaimPlan:
    give_up: bool  # the attempt budget is spent (e.g. every try crashed the worker)
    lookup_first: bool  # an earlier try may have created the video: ask before creating
    spent: int  # attempts counted against the current budget, this claim included


def plan_after_claim(previous: Mapping | None, attempts: int, max_attempts: int) -> ClaimPlan:
    """What to do with a fresh claim. `attempts` already counts this claim.

    Any earlier real try (a crash while uploading, a timeout, a 5xx) may have reached
    the provider, so we look the asset up by migration_ref before creating again.
    An operator's retry grants a fresh budget: attempts before it (`retry_base`) are
    kept in the count (so the lookup still happens) but not charged to the budget.
    """
    earlier_tries = int(_number((previous or {}).get("attempts")) or 0)
    spent_before_retry = int(_number((previous or {}).get("retry_base")) or 0)
    spent = max(1, attempts - spent_before_retry)
    return ClaimPlan(give_up=spent > max_attempts, lookup_first=earlier_tries > 0, spent=spent)


# --- what the provider said -------------------------------------------------------------


class OutcomeKind(StrEnum):
    CREATED = "created"  # the provider has a video for this asset (remote_id)
    CONFLICT = "conflict"  # 409: it exists already; find it by migration_ref
    NOT_FOUND = "not_found"  # a lookup found no video for this asset
    THROTTLED = "throttled"  # 429, 503 with Retry-After, an account limit: not created; come back later
    TRANSIENT = "transient"  # may succeed later; counts against the attempt budget
    REJECTED = "rejected"  # the provider will never take this source


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    remote_id: str | None = None
    retry_after: float | None = None
    error: str | None = None
    signal: RateSignal | None = None  # the answer's rate-limit headers, for the pacer
    # THROTTLED only, what the answer is about (`pacing.response`): "rate" (a 429: the fleet holds,
    # the rate is cut), "request" (a 503 with Retry-After: only this request waits), "account"
    # (an account limit, such as Cloudflare's 413: the fleet holds, no cut).
    scope: str | None = None
    # What the create could not carry as the row has it (cut, left out, kept only in the ledger), in
    # short sentences the ledger keeps with the asset and the report shows.
    notes: tuple[str, ...] = ()


# 401/403 are our configuration (token), 408/425 are timing: none is the asset's fault,
# so they are retried within the attempt budget instead of rejecting the asset.
RETRYABLE_4XX = frozenset({401, 403, 408, 425})


def excerpt(text: str | None, limit: int = ERROR_EXCERPT_CHARS) -> str:
    """A short single-line excerpt of an untrusted body, safe to store, log and print: terminal
    controls are taken out first (so none can split an echoed URL past its redaction), then
    credentials in echoed URLs are redacted before it is cut, so no half-signature remains."""
    if not text:
        return ""
    flat = redact_credentials(" ".join(strip_controls(str(text)).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def transport_failure(kind: str) -> Outcome:
    """A timeout or connection error: the create may or may not have happened."""
    return Outcome(OutcomeKind.TRANSIENT, error=kind)


def classify_failure(status: int, text: str | None, retry_after: float | None) -> Outcome:
    """A non-2xx answer: the provider pacing us (a 429: scope "rate"), this one request asked to
    come back later (a 503 that says when: scope "request"), a refusal of the asset itself
    (another 4xx), or a failure of this one request that may pass (a 503 without a hint, other
    5xx, and the 4xx that are ours to fix). `retry_after` is the provider's hint, read from its
    headers in its own dialect. Account limits are the provider module's to recognise."""
    if status == 429:
        return Outcome(OutcomeKind.THROTTLED, retry_after=retry_after, error=f"HTTP {status}", scope="rate")
    if status == 503 and retry_after is not None:
        return Outcome(OutcomeKind.THROTTLED, retry_after=retry_after, error=f"HTTP {status}", scope="request")
    if 400 <= status < 500 and status not in RETRYABLE_4XX:
        detail = excerpt(text)
        return Outcome(OutcomeKind.REJECTED, error=f"HTTP {status}: {detail}" if detail else f"HTTP {status}")
    return Outcome(OutcomeKind.TRANSIENT, error=f"HTTP {status}")


# --- the ledger move and the message's fate, together ------------------------------------


class MoveKind(StrEnum):
    TO_PROCESSING = "to_processing"
    RELEASE_THROTTLED = "release_throttled"  # back to a claimable state; throttle counted
    TO_FAILED = "to_failed"  # retry_at set: retryable; None: failed for good
    TO_REJECTED = "to_rejected"


@dataclass(frozen=True)
class Decision:
    move: MoveKind
    fate: Fate
    metric: str
    remote_id: str | None = None
    retry_at: float | None = None
    error: str | None = None


def decide(outcome: Outcome, attempts: int, max_attempts: int, now: float, rng: random.Random) -> Decision:
    """Where the asset goes and what happens to its message after `outcome`.

    `attempts` counts the claims charged to the current budget (`ClaimPlan.spent`),
    the one that produced the outcome included. CONFLICT and NOT_FOUND are
    not final answers: the uploader turns a 409 into a lookup, and a lookup that finds
    nothing into a create, before it calls this.
    """
    kind = outcome.kind
    if kind is OutcomeKind.CREATED:
        return Decision(MoveKind.TO_PROCESSING, Fate.finished("uploaded"), "Uploaded", remote_id=outcome.remote_id)
    if kind is OutcomeKind.THROTTLED:
        delay = throttle_delay(outcome.retry_after, rng)
        return Decision(
            MoveKind.RELEASE_THROTTLED,
            Fate.later(delay, f"throttled ({outcome.error})", pacing=True),
            "Throttled",
            retry_at=now + delay,
            error=outcome.error,
        )
    if kind is OutcomeKind.REJECTED:
        return Decision(MoveKind.TO_REJECTED, Fate.finished("rejected by provider"), "Rejected", error=outcome.error)
    error = outcome.error or kind.value
    if kind in (OutcomeKind.CONFLICT, OutcomeKind.NOT_FOUND):
        error = "409 but the lookup found no video"
    if attempts >= max_attempts:
        return Decision(
            MoveKind.TO_FAILED,
            Fate.finished(f"failed for good after {attempts} attempts"),
            "Failed",
            error=error,
        )
    delay = backoff_delay(attempts, rng)
    return Decision(
        MoveKind.TO_FAILED, Fate.later(delay, f"retrying: {error}"), "Retried", retry_at=now + delay, error=error
    )


def _number(value: Any) -> float | None:
    """DynamoDB numbers arrive as Decimal; absent ones as None; what float() refuses is None too."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
