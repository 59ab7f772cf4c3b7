"""Pure timing decisions: Retry-After parsing, exponential backoff, jitter, SQS caps."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

# SQS counts a message's visibility from its first receive and refuses anything past 12 h.
SQS_MAX_VISIBILITY_S = 43_200
# What we wait when a 429/503 says nothing about when to come back.
DEFAULT_THROTTLE_S = 5.0
# A Retry-After longer than this is treated as this: an hour-long ban is better retried
# hourly than trusted for days.
MAX_THROTTLE_S = 3_600.0
BACKOFF_BASE_S = 2.0
BACKOFF_CAP_S = 900.0
# X-RateLimit-Retry-After values above this are absolute epoch seconds, not a delta.
EPOCH_THRESHOLD = 1_000_000_000
DEFERRAL_FLOOR_CAP_S = 900.0
# The first wait for a file the source is preparing. A short video's file is often ready in seconds (Stream's MP4
# download, Mux's master); a source's poll interval (15 s for Stream, 60 for Kaltura, 600 for Azure's
# rehydration) is right for a long preparation but, asked once, kept every short one waiting for all of it.
FIRST_PREPARE_WAIT_S = 5.0
FREE_RECEIVES = 10


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or HTTP-date).

    Returns None for absent or unusable values (garbage, negative numbers), so the
    caller can fall back to its default. A date in the past means "now": 0.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        if seconds != seconds or seconds < 0 or seconds == float("inf"):
            return None
        return seconds
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None  # RFC 9110 dates are always GMT; a zone-less date is not one
    return max(0.0, when.timestamp() - now)


def retry_after_from_headers(headers: Mapping[str, str], now: float) -> float | None:
    """The provider's requested wait, from Retry-After or X-RateLimit-Retry-After."""
    lowered = {k.lower(): v for k, v in headers.items()}
    found = parse_retry_after(lowered.get("retry-after"), now)
    if found is not None:
        return found
    found = parse_retry_after(lowered.get("x-ratelimit-retry-after"), now)
    if found is not None and found > EPOCH_THRESHOLD:
        return max(0.0, found - now)
    return found


def throttle_delay(retry_after: float | None, rng: random.Random) -> float:
    """How long a throttled message waits: the provider's word (or a default), capped,
    plus up to 20 % (at least 1 s) of jitter so held messages do not return together."""
    base = DEFAULT_THROTTLE_S if retry_after is None else min(retry_after, MAX_THROTTLE_S)
    spread = max(1.0, 0.2 * base)
    return base + rng.uniform(0.0, spread)


def backoff_delay(attempt: int, rng: random.Random) -> float:
    """Exponential backoff with "equal jitter" for the `attempt`-th failure (1-based):
    a value in [ceiling/2, ceiling], ceiling = min(cap, base * 2**(attempt-1))."""
    exponent = max(0, min(attempt - 1, 30))
    ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2**exponent))
    return rng.uniform(ceiling / 2, ceiling)


def prepare_wait(poll_s: float, waited_s: float, left_s: float) -> float:
    """Seconds until a file the source is preparing is asked about again: FIRST_PREPARE_WAIT_S at first, then as
    long as the asset has waited so far (each wait about doubles the whole), never longer than the source's
    `poll_s` (a long preparation costs a few more reads than before, not a wait of its own), and never more than a
    second past the `left_s` that SourcePrepareTimeoutSeconds leaves (the ask after it fails the asset)."""
    return max(0.0, min(poll_s, max(FIRST_PREPARE_WAIT_S, waited_s), left_s + 1.0))


def deferral_floor(receive_count: int) -> float:
    """The least a deferred message waits on its `receive_count`-th receive.

    Every receive counts toward the queue's maxReceiveCount, so a message bounced again
    and again (a long outage) must slow down instead of racing into the DLQ. The first
    FREE_RECEIVES bounces cost nothing extra (a busy but healthy migration); after that
    the floor doubles from 2 s up to 900 s.
    """
    extra = receive_count - FREE_RECEIVES
    if extra <= 0:
        return 0.0
    return float(min(DEFERRAL_FLOOR_CAP_S, 2 ** min(extra, 20)))


def visibility_for(delay: float, received_at: float | None, now: float) -> int:
    """The ChangeMessageVisibility value for `delay`, within the 12 h SQS allows counting
    from the receive (`received_at`, epoch seconds) that gave us the receipt handle."""
    allowed: float = SQS_MAX_VISIBILITY_S
    if received_at is not None:
        allowed = SQS_MAX_VISIBILITY_S - max(0.0, now - received_at) - 5
    seconds = math.ceil(delay)  # round up: never earlier than asked
    return int(max(0, min(seconds, allowed)))
