"""Pure pacing decisions: the rate the fleet creates at, learned or told, and the error breaker.

The provider's limit is rarely published and may change, so the rate is found:

- **Told**: a rate-limit header (`X-RateLimit-Limit`, the IETF `RateLimit-Policy`, each
  provider's dialect) states the limit: the fleet paces at `HEADER_MARGIN` of it.
- **Learned** when nothing says it, as TCP finds a path's capacity: a slow start
  (the rate grows by `SLOW_START_GAIN` a step until the first 429), then on every 429
  episode a multiplicative cut (`BETA`) and a note of the rate that met the limit (`limit`),
  a quick recovery to just below that rate (`MARGIN`), and beyond it a probe that starts
  at 1 % a step and doubles while creates keep succeeding, up to 10 % a step: a limit that
  was halved for a while and then restored is found again in about 9 s (16 s at 5 %;
  25 % buys little more, for more 429s: tests/unit/test_pacing_fleet.py models it).
- The operator's `ProviderRateLimit` is a ceiling the rate never passes (0: none).

A 429 is the provider pacing us: the fleet holds until its Retry-After and the rate is
cut once per episode. A 503 with a Retry-After is pacing too (hold, no cut: it says
nothing about the rate). Anything else that fails (a 503 without a hint, a timeout, a
5xx) is the failure of that one request: only the asset backs off, unless failures become
the rule: the breaker holds the fleet when at least `BREAKER_FRACTION` of the last two
`WINDOW_S` windows' requests failed (and at least `BREAKER_MIN` were made), for a cooldown
that doubles with each consecutive trip.

Everything here is a function of data (the pacer item's fields, a clock value); the
pacer module applies the results with conditional writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

MIN_RATE = 0.2  # creates/s: never stop entirely
DEFAULT_START_RATE = 5.0
STEP_S = 1.0  # how often the rate may grow
SLOW_START_GAIN = 1.25
BETA = 0.85  # the cut on a 429 episode
MARGIN = 0.97  # recover to this share of the rate that met the limit
PROBE_FIRST, PROBE_MAX = 0.01, 0.10  # growth per step beyond that rate: 1 %, doubling, at most 10 %
PROBE_AFTER_STEPS = 3  # quiet steps at the limit's margin before probing starts to double
# Creates/s: a rate this close below its recovery target has reached it. The pacer item keeps
# rates to the millisecond, so a recovered rate read back can sit a rounding below its
# target, and "recovering" it to the same target again and again never probed (a benchmark
# drain stayed at 11.77/s for 40 s after the limit was back at 20/s; half of all limits did it).
RECOVERED_WITHIN = 0.002
EPISODE_S = 1.5  # 429s closer together than this are one episode: one cut
HEADER_MARGIN = 0.98  # of a limit the provider states
# Seconds of a 503's hold whose slots are made up afterwards. The provider's bucket kept
# filling while we waited, but a bucket of one second of its rate (the common size) drained
# to the last token leaves the fleet sending at the limit's very edge, where any jitter
# meets a 429 and its cut: at 1.0 the fleet model drained the fault scenario in 1.081 on
# average over 80 seeds (1.160 at worst, 0.22 429s per 100 creates); 0.85 leaves 15 % of the
# bucket as slack: 1.042 (1.095 at worst, no 429). 0.95 met 429s again.
CATCH_UP_S = 0.85

WINDOW_S = 10.0
BREAKER_FRACTION = 0.5
BREAKER_MIN = 10
BREAKER_BASE_S, BREAKER_MAX_S = 5.0, 300.0


@dataclass(frozen=True)
class Rate:
    """The fleet's create rate and how it came to be."""

    rate: float  # creates per second in use
    source: str  # start | told | learned | ceiling
    ceiling: float | None = None  # the operator's cap; None: none
    limit: float | None = None  # the rate at which the provider last pushed back (learned)
    slow_start: bool = True  # no 429 seen yet: grow fast
    adjusted_at: float = 0.0  # when the rate last changed (or was confirmed)
    quiet_steps: int = 0  # steps since the last cut
    cut_at: float = 0.0

    @property
    def interval(self) -> float:
        """Seconds between two creates."""
        return 1.0 / self.rate


def start(start_rate: float, ceiling: float | None, now: float) -> Rate:
    """The rate a fresh pacer begins with: the start rate, under the ceiling. Without a start
    rate (0), the ceiling when the operator set one (they know the limit), else DEFAULT_START_RATE."""
    if ceiling is not None and ceiling <= 0:
        ceiling = None
    if start_rate <= 0:
        start_rate = ceiling if ceiling is not None else DEFAULT_START_RATE
    rate = max(MIN_RATE, start_rate)
    if ceiling is not None and rate >= ceiling:
        return Rate(ceiling, "ceiling", ceiling, adjusted_at=now)
    return Rate(rate, "start", ceiling, adjusted_at=now)


def _capped(rate: Rate, value: float, source: str) -> Rate:
    value = max(MIN_RATE, value)
    if rate.ceiling is not None and value >= rate.ceiling:
        return replace(rate, rate=rate.ceiling, source="ceiling")
    return replace(rate, rate=value, source=source)


def cut(rate: Rate, now: float) -> Rate | None:
    """After a 429: cut once per episode, and remember where the limit was met. None: same episode."""
    if now - rate.cut_at < EPISODE_S:
        return None
    cutback = _capped(rate, rate.rate * BETA, "learned")
    return replace(cutback, limit=rate.rate, slow_start=False, adjusted_at=now, quiet_steps=0, cut_at=now)


def grow(rate: Rate, now: float, limiting: bool = True) -> Rate | None:
    """A step without a 429: grow (slow start, recovery, then a widening probe). None: not due, or capped.

    `limiting`: the rate is what holds the fleet back (creates queue for slots). When the
    fleet sends slower than the rate allows (too few workers, slow claims), success says
    nothing about a higher rate, and a rate grown on it would be a number nobody sends at:
    at the first 429 it would be cut from there, a few per cent an episode, pacing nothing
    for minutes (as RFC 7661 keeps an application-limited TCP sender's window)."""
    if not limiting or now - rate.adjusted_at < STEP_S or rate.source == "told":
        return None
    if rate.ceiling is not None and rate.rate >= rate.ceiling:
        return None  # at the operator's cap: nothing to learn above it
    steps = rate.quiet_steps + 1
    if rate.slow_start or rate.limit is None:
        value = rate.rate * SLOW_START_GAIN
    elif rate.limit * MARGIN - rate.rate > RECOVERED_WITHIN:
        value = rate.rate + max(MIN_RATE / 2, (rate.limit * MARGIN - rate.rate) / 2)
        value = min(value, rate.limit * MARGIN)
    else:
        probe = min(PROBE_MAX, PROBE_FIRST * 2 ** max(0, steps - PROBE_AFTER_STEPS))
        value = rate.rate * (1 + probe)
    grown = _capped(rate, value, "learned" if rate.limit is not None else rate.source)
    # Past the rate that last met the limit, the limit itself has moved: follow it up.
    limit = max(rate.limit, grown.rate) if rate.limit is not None and grown.rate > rate.limit else rate.limit
    return replace(grown, limit=limit, adjusted_at=now, quiet_steps=steps)


def told(rate: Rate, limit_per_s: float | None, now: float) -> Rate | None:
    """A header stated the limit: pace just under it (and under the ceiling). None: nothing to change."""
    if limit_per_s is None or not math.isfinite(limit_per_s) or limit_per_s <= 0:
        return None
    target = max(MIN_RATE, limit_per_s * HEADER_MARGIN)
    if rate.ceiling is not None and target >= rate.ceiling:
        target, source = rate.ceiling, "ceiling"
    else:
        source = "told"
    if source == rate.source and abs(target - rate.rate) <= 0.02 * rate.rate:
        return None  # within 2 %: not worth a write
    return replace(rate, rate=target, source=source, limit=limit_per_s, slow_start=False, adjusted_at=now)


# --- what the provider said about its limit --------------------------------------------------------


@dataclass(frozen=True)
class RateSignal:
    """What the provider's headers say about its limit; every field None when it said nothing."""

    retry_after: float | None = None  # seconds to wait before the next request
    limit_per_s: float | None = None  # the limit, converted to requests per second
    remaining: float | None = None  # requests left in the current window
    reset_after: float | None = None  # seconds until the window resets
    source: str = ""  # which header said it


def resume_from(until: float, now: float, kind: str) -> float:
    """Where slots resume after a hold placed at `now` until `until`: a 503's hold ("unavailable")
    says nothing about the rate, so the slots it cost are made up, at most CATCH_UP_S of them;
    after any other hold (a 429, the breaker, headers) nothing is owed."""
    if kind != "unavailable":
        return until
    return until - min(CATCH_UP_S, max(0.0, until - now))


# --- the breaker ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """Requests that succeeded and failed in the current WINDOW_S window and the one before."""

    id: int
    ok: int = 0
    err: int = 0
    prev_ok: int = 0
    prev_err: int = 0

    def at(self, window_id: int) -> Window:
        """The counts as seen from `window_id`: older windows roll off."""
        if window_id == self.id:
            return self
        if window_id == self.id + 1:
            return Window(window_id, 0, 0, self.ok, self.err)
        return Window(window_id)

    def add(self, ok: int, err: int) -> Window:
        return replace(self, ok=self.ok + ok, err=self.err + err)


def window_id(now: float) -> int:
    return int(now // WINDOW_S)


def breaker_open(window: Window) -> bool:
    """True when failures are the rule, not the exception: hold the whole fleet."""
    total = window.ok + window.err + window.prev_ok + window.prev_err
    return total >= BREAKER_MIN and (window.err + window.prev_err) >= BREAKER_FRACTION * total


def breaker_cooldown(trips: int) -> float:
    """How long the fleet holds on the `trips`-th consecutive trip (1-based)."""
    return min(BREAKER_MAX_S, BREAKER_BASE_S * 2 ** max(0, trips - 1))
