"""Reconcile's polls and the fleet's holds, as tables: how long a poll waits out a hold, and when it stops the
run's polls instead (a target without webhooks turns ready only by polls, so a short hold must not end them)."""

from __future__ import annotations

import pytest
from migrator.pacer_item import Go, Hold
from migrator.reconcile import MIN_HOLD_WAIT_S, PollPace, hold_wait

T = 1_800_000_000.0


@pytest.mark.parametrize(
    ("until", "spread", "waited", "may_wait", "expected"),
    [
        (T + 5, 0.0, 0.0, 60.0, 5.0),  # a short hold: slept out
        (T + 5, 10.0, 0.0, 60.0, 6.0),  # its spread's first tenth too, so the lanes do not all return at once
        (T + 59, 0.0, 0.0, 60.0, 59.0),  # Vimeo's window reset, up to a minute: still waited
        (T + 61, 0.0, 0.0, 60.0, None),  # past the poll's patience: the run's polls stop
        (T + 5, 0.0, 0.0, 3.0, None),  # past what is left of the run's time
        (T + 20, 0.0, 45.0, 60.0, None),  # a second hold, the waits together past the patience
        (T + 20, 0.0, 40.0, 60.0, 20.0),  # ... and one that just fits
        (T - 1, 0.0, 0.0, 60.0, MIN_HOLD_WAIT_S),  # a hold just ended and seen again still counts
    ],
)
def test_how_long_a_poll_waits_out_a_hold(until, spread, waited, may_wait, expected):
    assert hold_wait(Hold(until, "429", spread=spread), T, waited, may_wait) == expected


class FakePacer:
    """Answers each reservation from a script: a Hold or a Go (a Go at `now`, never to confirm)."""

    def __init__(self, answers):
        self.answers, self.asked = list(answers), 0

    def reserve(self, now, within=None, purpose="create"):
        self.asked += 1
        return self.answers.pop(0)


class Clock:
    def __init__(self):
        self.now, self.slept = T, []

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.slept.append(s)
        self.now += s


@pytest.mark.parametrize(
    ("answers", "may_wait", "taken", "slept"),
    [
        ([Go(T)], None, True, []),  # free: no wait
        ([Hold(T + 8, "429"), Go(T + 8)], None, True, [8.0]),  # held a few seconds: waited out, then polled
        ([Hold(T + 8, "429"), Hold(T + 38, "429"), Go(T + 38)], None, True, [8.0, 30.0]),  # held again: 38 s in all
        ([Hold(T + 90, "429")], None, False, []),  # a long hold: the run's polls stop at once
        ([Hold(T + 30, "429"), Hold(T + 65, "429")], None, False, [30.0]),  # two holds past the minute
        ([Hold(T + 8, "429")], 5.0, False, []),  # the run has 5 s left: not spent asleep
    ],
)
def test_a_poll_waits_out_a_short_hold_and_stops_at_a_long_one(answers, may_wait, taken, slept):
    clock = Clock()
    pacer = FakePacer(answers)
    pace = PollPace(pacer, clock=clock, sleep=clock.sleep)  # type: ignore[arg-type]
    assert pace.take(may_wait) is taken
    assert clock.slept == slept
    assert pacer.asked == len(answers)  # each hold asked again, and no more
