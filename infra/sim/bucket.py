"""The token bucket that limits creates, and the snapshot of it that rate-limit headers report.

One bucket serves every profile: the profiles only differ in how they write its state
into headers (per second, per minute, IETF structured fields).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class RateState:
    """What is true of the bucket at one instant, in the bucket's own units."""

    rate: float  # tokens per second (creates per second sustained)
    burst: int  # capacity
    remaining: int  # whole creates allowed right now
    next_in_s: float  # seconds until one create is allowed (0 while remaining >= 1)
    full_in_s: float  # seconds until the bucket is full again

    def reset_in_s(self) -> int:
        """Whole seconds until the bucket is full: what a "reset" means for a token bucket."""
        return math.ceil(self.full_in_s)

    def policy(self) -> tuple[int, int]:
        """(quota, window seconds) of an equivalent fixed policy, for IETF-style headers.

        The window is the time an empty bucket takes to fill, in whole seconds (the fields
        are integers); the quota is what the rate earns in that window, so quota/window is
        the true sustained rate.
        """
        window = max(1, round(self.burst / self.rate))
        return max(1, round(self.rate * window)), window


class TokenBucket:
    """Classic token bucket; rate 0 means unlimited (the bucket is always full)."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.at = now

    def _refill(self, now: float) -> None:
        if self.rate <= 0:
            self.tokens = float(self.burst)
        else:
            self.tokens = min(float(self.burst), self.tokens + max(0.0, now - self.at) * self.rate)
        self.at = now

    def configure(self, rate: float, burst: int, now: float) -> None:
        """Change rate and capacity at once: what the old rate earned up to now is settled
        first, so the new rate counts from this instant and not from the last request."""
        self._refill(now)
        self.rate, self.burst = rate, burst
        self.tokens = min(self.tokens, float(burst))

    def take(self, now: float) -> float | None:
        """Consume one token; return None if allowed, else seconds until one is available."""
        if self.rate <= 0:
            return None
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return None
        return (1.0 - self.tokens) / self.rate

    def state(self, now: float) -> RateState | None:
        """The bucket as headers should report it; None when unlimited (nothing true to say)."""
        if self.rate <= 0:
            return None
        self._refill(now)
        next_in = 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate
        return RateState(
            rate=self.rate,
            burst=self.burst,
            remaining=int(self.tokens),
            next_in_s=next_in,
            full_in_s=(self.burst - self.tokens) / self.rate,
        )
