"""The fleet's pace as one uploader invocation meets it: use `Pace` to take a slot before a provider call,
to wait out a short hold in place rather than through the queue, and to tell the pacer what a create heard.

Working hours (`hours.py`, `window.py`) are asked first: while the window is closed no slot is taken, a record
not yet claimed goes back to the queue until it opens (`outside_hours`), and a claimed one meets a Hold of kind
`window` (`slot`) and gives its claim back. Every worker asks the same window itself, from the clock: no write
holds the fleet, so a window set or cleared at run time holds within the minute its override is re-read."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..fate import Fate, Outcome, OutcomeKind
from ..hours import Hours, window_hold
from ..pacer import LOOKUP, Go, Hold, Pacer, wait_for_slot
from ..settings import Settings
from .telemetry import MetricUnit, metrics

# A hold or a Retry-After up to this long is waited out inside the invocation (when its
# time allows) instead of sending the message back through the queue.
INLINE_WAIT_MAX_S = 15.0


@dataclass
class Pace:
    pacer: Pacer
    settings: Settings
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = random.Random()  # noqa: RUF009 - one shared generator is fine
    inline_wait_max_s: float = INLINE_WAIT_MAX_S
    hours: Hours | None = None  # the working hours; None: always open

    def outside_hours(self) -> Fate | None:
        """A record's fate while the working hours are closed: back to the queue, before a claim (no ledger
        write), until the window opens (SQS keeps it at most 12 h: it is asked again then)."""
        now = self.clock()
        held = window_hold(self.hours, now)
        if held is None:
            return None
        delay = held.until - now + self.rng.uniform(0.0, held.spread)
        return Fate.later(delay, f"held: {held.reason}", pacing=True)

    def beyond_reach(self, deadline: float) -> Fate | None:
        """A record's fate when the pacer's queue (as this worker last saw it, no write) is beyond
        what this invocation can wait: deferred as pacing, before a claim, until it would be in reach."""
        now = self.clock()
        slot = self.pacer.known_hold(now, deadline - now - self.settings.work_s)
        if slot is None or slot.kind != "queue":
            return None
        delay = slot.until - now + self.rng.uniform(0.0, max(1.0, slot.spread))
        return Fate.later(delay, f"held: {slot.reason}", pacing=True)

    def slot(self, deadline: float, purpose: str) -> Go | Hold:
        """A slot of the fleet's pace for a create (or a lookup, a poll), waited out in place: one
        this record could not wait for and still finish in its invocation is not taken; a far
        one is confirmed when it is due (a hold or a cut may have moved it). Outside the working hours, the
        window's Hold, before a reservation and again when the slot is due."""
        now = self.clock()
        closed = window_hold(self.hours, now)
        if closed is not None:
            return closed
        slot = self.pacer.reserve(now, deadline - now - self.settings.work_s, purpose)
        slot = wait_for_slot(
            self.pacer,
            slot,
            self.clock,
            self.sleep,
            lambda go, _wait: go.at + self.settings.work_s > deadline,
            "the slot moved past this invocation's time",
        )
        # A slot taken before the window closed and due after it goes unused.
        return slot if isinstance(slot, Hold) else window_hold(self.hours, self.clock()) or slot

    def lookup_slot(self, deadline: float) -> Go | Hold:
        """A slot for a lookup, short holds waited out in place; the Hold of a fleet held for longer
        than this record can wait."""
        while isinstance(slot := self.slot(deadline, LOOKUP), Hold):
            if not self.wait_if_short(slot.until, deadline, slot.spread):
                return slot
        return slot

    def observe(self, outcome: Outcome) -> None:
        """What one create's answer tells the pacer (`Pacer.observe`: the stated limit, a throttle
        by its scope, an outcome for the breaker), and the metrics on it."""
        throttled = outcome.kind is OutcomeKind.THROTTLED
        # 100 or 0 per attempt: the metric's average is the share of attempts that met a 429 (its alarm).
        metrics.add_metric(name="ThrottledPercent", unit=MetricUnit.Percent, value=100 if throttled else 0)
        if throttled:
            metrics.add_metric(name="ProviderThrottled", unit=MetricUnit.Count, value=1)
        self.pacer.observe(outcome, self.clock())

    def wait_if_short(self, until: float, deadline: float, spread: float = 0.0) -> bool:
        """Sleep until `until` when that is short and leaves this record its time budget
        (`inline_wait`); False when it is not."""
        wait = self.inline_wait(until, deadline, spread)
        if wait is None:
            return False
        if wait > 0:
            self.sleep(wait)
        return True

    def inline_wait(self, until: float, deadline: float, spread: float = 0.0) -> float | None:
        """How long to sleep for `until` in place (plus a little jitter, so the fleet does not
        resume in one burst; a fleet held together comes back over `spread`); None when that
        is not short or would not leave this record its time budget."""
        now = self.clock()
        wait = until - now + self.rng.uniform(0.0, 0.05 + 0.02 * max(0.0, until - now) + spread)
        if wait > self.inline_wait_max_s or now + wait + self.settings.record_budget_s > deadline:
            return None
        return wait
