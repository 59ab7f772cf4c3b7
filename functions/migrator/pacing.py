"""Pure pacing decisions: the rate the fleet creates at, learned or told, the error breaker, how far
ahead slots are handed out, what is owed after a hold, and how many creates are in flight.

The provider's limit is rarely published and may change, so the rate is found:

- **Told**: a rate-limit header (`X-RateLimit-Limit`, the IETF `RateLimit-Policy`, each
  provider's dialect) states the limit: a ceiling at `HEADER_MARGIN` of it (of its `share`
  where the budget covers every call, not only creates). Before any 429 the fleet paces
  there; after one, the rate climbs back only through the learned regime, under that
  ceiling: a header never undoes a cut.
- **Learned** when nothing says it, as TCP finds a path's capacity: a slow start
  (the rate grows by `SLOW_START_GAIN` a step until the first 429), then on every 429
  episode a multiplicative cut (`BETA`) and a note of the rate that met the limit (`limit`),
  a quick recovery to just below that rate (`MARGIN`), and beyond it a probe that starts
  at 1 % a step and doubles while creates keep succeeding, up to 10 % a step: a limit that
  was halved for a while and then restored is found again in about 9 s (16 s at 5 %;
  25 % buys little more, for more 429s: tests/unit/test_pacing_fleet.py models it).
- The operator's `ProviderRateLimit` is a ceiling the rate never passes (0: none).

What a throttled answer does to the fleet depends on its scope (`response`): a 429 ("rate")
is the provider pacing us: the fleet holds until its Retry-After and the rate is cut once
per episode. A 503 with a Retry-After ("request") is about that request: only it waits,
and it counts as a failure for the breaker. An account limit ("account": Cloudflare's 413,
its cap on videos in progress) holds the fleet for a cooldown that doubles while it
repeats, without a cut. Anything else that fails (a 503 without a hint, a timeout, a 5xx)
is the failure of that one request: only the asset backs off, unless failures become the
rule: the breaker holds the fleet when at least `BREAKER_FRACTION` of the last two
`WINDOW_S` windows' requests failed (and at least `BREAKER_MIN` were made), for a cooldown
that doubles with each consecutive trip.

The slot queue reaches `horizon` ahead (room for a slot per worker); after a hold some
slots are made up (`slot_for`), never more than `CATCH_UP_S` counted back from now; and
creates in flight at the provider are estimated from the tally's count (`in_flight`) for
providers that bound them.

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
# Seconds of slots made up after a hold that was not about the rate (the breaker's): the
# provider's bucket kept filling while we waited, but a bucket of one second of its rate (the
# common size) drained to the last token leaves the fleet sending at the limit's very edge,
# where any jitter meets a 429 and its cut. Measured on 503 holds (before a 503 stopped
# holding the fleet): at 1.0 the fleet model drained in 1.081 on average over 80 seeds (0.22
# 429s per 100 creates); 0.85 leaves 15 % of the bucket as slack: 1.042, no 429.
CATCH_UP_S = 0.85
# Holds after which slots are made up. Not a 429's (the bucket is empty), nor an account
# limit's or the in-flight bound's: those bound videos in progress, not a rate, and a burst
# of made-up creates would only meet the bound again.
CATCH_UP_KINDS = frozenset({"errors", "headers"})
# Owed slots are made up only by reservations this soon after the hold's end.
OWED_WITHIN_S = 5.0

# The slot queue: a reservation takes a slot at most this far ahead, so that every worker
# the fleet may run (MaximumConcurrency, plus lookups and polls: HORIZON_PER_WORKER) holds
# one with a single write and waits it out. A shorter queue made the workers it could not
# hold retry together once per slot: 23 pacer writes per create at 50 workers and 5/s.
HORIZON_MIN_S = 5.0
HORIZON_PER_WORKER = 1.25

# The account's limits (a 413, the in-progress cap): the fleet holds for a cooldown that
# doubles while they repeat: another within ACCOUNT_CALM_S of the last hold's end (a full
# account answers every create after its hold; an overshoot of the in-progress cap, minutes
# later, is a new one).
ACCOUNT_BASE_S, ACCOUNT_MAX_S, ACCOUNT_CALM_S = 2.0, 300.0, 10.0
# Over the in-flight bound a worker waits and looks again (a read), not the fleet: a fleet hold
# of a second cost 19 % of the ideal drain in the fleet model (videos kept finishing while it
# held), and its end a write per worker. The looks are spread so that the fleet reads the item
# about IN_FLIGHT_LOOKS_PER_S times a second whatever its size.
IN_FLIGHT_WAIT_S, IN_FLIGHT_LOOKS_PER_S = 0.25, 20.0
BOUND_MARK_S = 5.0  # how long the item says the bound holds the fleet back (`migrator status`), per write


def in_flight_wait(concurrency: int) -> float:
    """How long a worker over the in-flight bound waits before it looks again."""
    return max(IN_FLIGHT_WAIT_S, concurrency / IN_FLIGHT_LOOKS_PER_S)


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
    stated: float | None = None  # the pace the provider's headers allow (a ceiling); None: none stated

    @property
    def interval(self) -> float:
        """Seconds between two creates."""
        return 1.0 / self.rate

    @property
    def cap(self) -> float | None:
        """The lower of the operator's ceiling and the stated one; None: neither."""
        caps = [c for c in (self.ceiling, self.stated) if c is not None]
        return min(caps) if caps else None


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
    if rate.ceiling is not None and value >= rate.ceiling and (rate.stated is None or rate.ceiling <= rate.stated):
        return replace(rate, rate=rate.ceiling, source="ceiling")
    if rate.stated is not None and value >= rate.stated:
        return replace(rate, rate=rate.stated, source="told")
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
    if not limiting or now - rate.adjusted_at < STEP_S:
        return None
    if rate.cap is not None and rate.rate >= rate.cap:
        return None  # at the operator's or the stated ceiling: nothing to learn above it
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


def told(rate: Rate, limit_per_s: float | None, now: float, share: float = 1.0) -> Rate | None:
    """A header stated the limit: a ceiling at HEADER_MARGIN of `share` of it (the share creates
    take of a budget that covers every call). Before any 429 the rate goes there; after one it
    only comes down to it, and climbs again through `grow`, never above it: a header that
    overstates the limit cannot undo the cuts its 429s made. None: nothing to change."""
    if limit_per_s is None or not math.isfinite(limit_per_s) or limit_per_s <= 0:
        return None
    stated = max(MIN_RATE, limit_per_s * share * HEADER_MARGIN)
    ceiled = replace(rate, stated=stated)
    if rate.limit is None or rate.rate > stated:  # no 429 met yet, or over the new ceiling
        new = _capped(ceiled, stated, "told")
    else:
        new = ceiled
    if rate.stated is not None and abs(stated - rate.stated) <= 0.02 * rate.stated:
        if abs(new.rate - rate.rate) <= 0.02 * rate.rate:
            return None  # within 2 %: not worth a write
    return replace(new, adjusted_at=now)


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
    """Where slots resume after a hold placed at `now` until `until`: after a hold that said
    nothing about the rate (CATCH_UP_KINDS) the slots it cost are made up, at most CATCH_UP_S
    of them; after any other (a 429, an account limit) nothing is owed."""
    if kind not in CATCH_UP_KINDS:
        return until
    return until - min(CATCH_UP_S, max(0.0, until - now))


def slot_for(next_slot: float, floor: float, now: float) -> tuple[float, bool]:
    """The slot a reservation takes when the queue's next slot is `next_slot`, and whether the
    fleet was found idle (the slot already free). Just after a hold that owes slots (`floor`,
    its resume point, 0 for none), owed slots are made up, but at most CATCH_UP_S of them counted
    back from now: a fleet that comes back late from the hold must not send every slot since."""
    if next_slot > now:
        return next_slot, False
    if floor > 0 and floor > now - CATCH_UP_S - OWED_WITHIN_S:
        return max(next_slot, floor, now - CATCH_UP_S), False
    return now, True


def horizon(concurrency: int, interval: float) -> float:
    """How far ahead a reservation may take its slot: room for one slot per worker."""
    return max(HORIZON_MIN_S, concurrency * interval * HORIZON_PER_WORKER)


@dataclass(frozen=True)
class Response:
    """What a throttled answer of one scope does to the fleet."""

    hold: str | None  # the kind of fleet hold it places; None: only the request waits
    cut: bool  # the rate is cut (once per episode)
    failure: bool  # it counts as a failed request for the breaker


RESPONSES = {
    "rate": Response("rate", cut=True, failure=False),  # a 429: the provider paces the fleet
    "request": Response(None, cut=False, failure=True),  # a 503 with Retry-After: that request waits
    "account": Response("account", cut=False, failure=False),  # an account limit: hold, no cut
}


def response(scope: str | None) -> Response:
    """The fleet's response to a throttled answer of `scope` (a 429 when the scope is unknown)."""
    return RESPONSES.get(scope or "rate", RESPONSES["rate"])


def account_trips(previous: int, previous_until: float, now: float) -> int:
    """The count of account holds in a row this one makes: it repeats when it comes within
    ACCOUNT_CALM_S of the last one's end."""
    return previous + 1 if previous > 0 and now - previous_until <= ACCOUNT_CALM_S else 1


def account_cooldown(trips: int) -> float:
    """How long the fleet holds on the `trips`-th account limit in a row (1-based)."""
    return min(ACCOUNT_MAX_S, ACCOUNT_BASE_S * 2 ** max(0, trips - 1))


# The slots handed out by a time in the recent past: each reservation notes its ticket in one of
# RING_N attributes of the item, one per RING_S of time (no write of its own), so the tally can
# say which slots its batch of the stream already covers. Three seconds: the stream's lag.
RING_S, RING_N = 0.25, 12
_RING_TAG = 10**10  # an entry is bucket * _RING_TAG + ticket: one number, no second attribute


def ring_entry(now: float) -> tuple[str, int]:
    """The ring attribute a reservation at `now` writes, and the tag its ticket is added to."""
    bucket = int(now / RING_S)
    return f"r{bucket % RING_N}", bucket * _RING_TAG


def issued_by(ring: list[int], at: float) -> int | None:
    """Slots handed out by `at`, from the ring's entries: the last ticket of the latest quarter
    second wholly before `at`, plus one (slots in the quarter second of `at` count as after it: on
    the safe side). None when the ring does not reach back to `at`."""
    best = None
    for entry in ring:
        bucket, ticket = divmod(int(entry), _RING_TAG)
        if (bucket + 1) * RING_S <= at and (best is None or bucket > best[0]):
            best = (bucket, ticket)
    if best is None:
        return None
    return best[1] + 1


# The finishes since the stream's position are estimated for at most this long (about the
# stream's lag and the tally's batching window: a tally that stopped is not a fleet whose videos
# all finished), at FINISH_SHARE of the rate the tally saw, smoothed over its batches
# (FINISH_SMOOTHING of the newest): finishes come in bursts, and one counted too many is a
# create past the provider's bound.
FINISH_LAG_MAX_S, FINISH_SHARE, FINISH_SMOOTHING = 2.0, 0.5, 0.5


def finish_rate(finished: int, span: float | None, previous: float = 0.0) -> float:
    """Assets per second leaving processing, as a batch of the stream saw them over the time since
    the last one, smoothed with the rate the last batch wrote."""
    if not span or span <= 0:
        return previous
    seen = finished / max(span, 0.25)
    return round(FINISH_SMOOTHING * seen + (1 - FINISH_SMOOTHING) * previous, 3)


def in_flight(
    processing: float, issued_since_tally: float, queued: float = 0.0, finishing: float = 0.0, lag: float = 0.0
) -> int:
    """Creates in flight at the provider as the fleet can know them: the ledger's `processing`
    count as the tally last wrote it, less the videos finished since the stream's position (its
    `finishing` rate over the `lag` since: their webhooks are still on the way), plus every slot
    handed out since that position and the slots queued now (a stand-in for those queued at it:
    handed out before it, not yet sent). A slot that made nothing counts until the next tally: an
    overcount, on the safe side."""
    finished = FINISH_SHARE * max(0.0, finishing) * min(max(0.0, lag), FINISH_LAG_MAX_S)
    known = max(0.0, processing - finished)
    return int(math.ceil(known) + max(0.0, issued_since_tally) + max(0.0, math.ceil(queued)))


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
