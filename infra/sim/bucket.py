"""The limits every profile shares: token buckets (creates, other requests), a call budget with a block,
and the snapshot of either that rate-limit headers report.

The same limits serve every profile: the profiles only differ in how they write their
state into headers (per second, per minute, IETF structured fields).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class RateState:
    """What is true of the bucket at one instant, in the bucket's own units."""

    rate: float  # tokens per second (creates per second sustained)
    burst: int  # capacity
    remaining: int  # whole creates allowed right now
    next_in_s: float  # seconds until one create is allowed (0 while remaining >= 1)
    full_in_s: float  # seconds until the bucket is full again
    kind: str = "bucket"  # "budget": a fixed quota per window (Budget), whose "full" is the window's reset

    def stated(self, scale: float) -> RateState:
        """The state as headers that overstate (scale > 1) or understate the limit would tell it."""
        if scale == 1:
            return self
        return replace(
            self, rate=self.rate * scale, burst=max(1, round(self.burst * scale)), remaining=int(self.remaining * scale)
        )

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

    def empty(self, now: float) -> None:
        """What the account's other clients leave after taking every token there was."""
        self._refill(now)
        self.tokens = 0.0

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


class Budget:
    """A quota of calls per fixed window, and a block once it is exceeded (Cloudflare's API limit).

    A window opens at the first call after the previous one closed; the call past the quota
    starts a block of `block_s` (0: to the end of the window) in which every call is refused,
    and the next call after the block opens a fresh window. Refused calls are not counted and
    do not extend the block, as "all API calls for the next five minutes will be blocked"
    reads. quota 0 = no budget.
    """

    def __init__(self, quota: int, window_s: float, block_s: float) -> None:
        self.quota, self.window_s, self.block_s = quota, window_s, block_s
        self.opened: float | None = None  # start of the current window
        self.used = 0
        self.blocked_until: float | None = None
        self.blocks = 0  # how many blocks have started

    @property
    def on(self) -> bool:
        return self.quota > 0

    def configure(self, quota: int, window_s: float, block_s: float) -> None:
        """New limits apply to the current window and block as they stand."""
        self.quota, self.window_s, self.block_s = quota, window_s, block_s

    def _settle(self, now: float) -> None:
        if self.blocked_until is not None and now >= self.blocked_until:
            self.blocked_until, self.opened, self.used = None, None, 0
        if self.opened is not None and now >= self.opened + self.window_s:
            self.opened, self.used = None, 0

    def take(self, now: float) -> float | None:
        """Count one call: None if allowed, else the seconds until calls are allowed again."""
        if not self.on:
            return None
        self._settle(now)
        if self.blocked_until is not None:
            return self.blocked_until - now
        if self.opened is None:
            self.opened = now
        if self.used >= self.quota:
            self.blocked_until = now + self.block_s if self.block_s > 0 else self.opened + self.window_s
            self.blocks += 1
            return self.blocked_until - now
        self.used += 1
        return None

    def state(self, now: float) -> RateState | None:
        """The budget as headers report it: quota per window, what is left, when it resets."""
        if not self.on:
            return None
        self._settle(now)
        if self.blocked_until is not None:
            remaining, reset_in = 0, self.blocked_until - now
        else:
            remaining = self.quota - self.used
            reset_in = (self.opened + self.window_s - now) if self.opened is not None else self.window_s
        return RateState(
            rate=self.quota / self.window_s,
            burst=self.quota,
            remaining=remaining,
            next_in_s=0.0 if remaining >= 1 else reset_in,
            full_in_s=reset_in,
            kind="budget",
        )
