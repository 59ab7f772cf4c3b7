"""The pacing decisions, as tables: where the rate starts, how it grows, where a 429 cuts it, what a
header says, and when the breaker holds the fleet."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from migrator import pacing
from migrator.pacing import Rate, Window

T = 1_800_000_000.0


@pytest.mark.parametrize(
    ("start_rate", "ceiling", "rate", "source"),
    [
        (0, None, pacing.DEFAULT_START_RATE, "start"),  # nothing known: a careful start
        (0, 20, 20, "ceiling"),  # the operator knows the limit: start there
        (8, 20, 8, "start"),
        (40, 20, 20, "ceiling"),  # never above the ceiling
        (0.01, None, pacing.MIN_RATE, "start"),
    ],
)
def test_where_the_rate_starts(start_rate, ceiling, rate, source):
    started = pacing.start(start_rate, ceiling, T)
    assert (started.rate, started.source) == (rate, source)


def test_slow_start_grows_fast_until_the_first_429():
    rate = pacing.start(5, None, T)
    seen = []
    for step in range(1, 8):
        rate = pacing.grow(rate, T + step)
        seen.append(round(rate.rate, 2))
    assert seen == [6.25, 7.81, 9.77, 12.21, 15.26, 19.07, 23.84]
    assert pacing.grow(rate, T + 7.5) is None  # one step a second


def test_a_rate_the_fleet_does_not_use_does_not_grow():
    rate = pacing.start(5, None, T)
    assert pacing.grow(rate, T + 1, limiting=False) is None
    assert pacing.grow(rate, T + 1, limiting=True).rate == 6.25


def test_a_429_cuts_once_per_episode_and_remembers_where_the_limit_was():
    rate = Rate(24.0, "start", adjusted_at=T)
    cut = pacing.cut(rate, T + 1)
    assert cut.rate == pytest.approx(24 * pacing.BETA) and cut.limit == 24.0 and not cut.slow_start
    assert pacing.cut(cut, T + 1.2) is None  # the same episode: a burst of 429s is one signal
    again = pacing.cut(cut, T + 3)
    assert again.rate == pytest.approx(24 * pacing.BETA**2) and again.limit == pytest.approx(24 * pacing.BETA)


def test_after_a_cut_the_rate_recovers_to_just_below_the_limit_then_probes_slowly_then_faster():
    rate = pacing.cut(Rate(20.0, "learned", adjusted_at=T, slow_start=False, limit=20.0), T)
    rates = []
    for step in range(1, 13):
        rate = pacing.grow(rate, T + step)
        rates.append(rate.rate)
    target = 20.0 * pacing.MARGIN
    assert rates[3] == pytest.approx(target, rel=0.01)  # recovered within a few seconds
    probes = [b / a - 1 for a, b in itertools.pairwise(rates[4:])]
    assert probes[0] <= 0.011  # a careful first probe...
    assert max(probes) == pytest.approx(pacing.PROBE_MAX)  # ...that widens, to at most PROBE_MAX a step
    assert rate.limit == pytest.approx(rate.rate)  # past the old limit: the limit moved, follow it


def test_the_ceiling_is_never_passed():
    rate = Rate(19.5, "learned", ceiling=20.0, limit=30.0, slow_start=False, adjusted_at=T)
    grown = pacing.grow(rate, T + 1)
    assert (grown.rate, grown.source) == (20.0, "ceiling")
    assert pacing.grow(grown, T + 2) is None


@pytest.mark.parametrize(
    ("limit", "ceiling", "expected", "source"),
    [
        (20.0, None, 19.6, "told"),
        (100 / 60, None, 100 / 60 * pacing.HEADER_MARGIN, "told"),  # api.video: 100 a minute
        (20.0, 10.0, 10.0, "ceiling"),
        (0.0, None, None, None),  # a nonsense header changes nothing
        (float("nan"), None, None, None),
    ],
)
def test_a_stated_limit_sets_the_rate_just_under_it(limit, ceiling, expected, source):
    told = pacing.told(Rate(5.0, "start", ceiling=ceiling), limit, T)
    if expected is None:
        assert told is None
    else:
        assert (told.rate, told.source) == (pytest.approx(expected), source)
        assert pacing.grow(told, T + 10) is None or told.source == "ceiling"  # told: no probing past it
        assert pacing.told(told, limit * 1.01, T + 1) is None  # within 2 %: no write


@pytest.mark.parametrize(
    ("window", "opens"),
    [
        (Window(1, ok=97, err=3), False),  # scattered failures: never the fleet's business
        (Window(1, ok=5, err=5), True),
        (Window(1, ok=0, err=9), False),  # too few requests to judge
        (Window(2, ok=2, err=3, prev_ok=3, prev_err=4), True),  # over both windows
        (Window(2, ok=20, err=0, prev_ok=0, prev_err=19), False),
    ],
)
def test_the_breaker_opens_only_when_failures_are_the_rule(window, opens):
    assert pacing.breaker_open(window) is opens


def test_breaker_windows_roll_and_cooldowns_double():
    window = Window(7, ok=4, err=6)
    assert window.at(7) == window
    assert window.at(8) == Window(8, 0, 0, 4, 6)
    assert window.at(9) == Window(9)
    assert [pacing.breaker_cooldown(n) for n in (1, 2, 3, 10)] == [5.0, 10.0, 20.0, pacing.BREAKER_MAX_S]


def test_a_rate_read_back_from_the_pacer_item_goes_on_growing_past_its_recovery_target():
    # The item keeps rates to the millisecond: 12.13 x MARGIN = 11.7661 comes back as 11.766,
    # a rounding below the target, and must count as recovered, or it is "recovered" forever.
    for limit in (12.13, 7.77, 19.4, 0.61, 33.333):
        rate = pacing.cut(Rate(limit, "learned", adjusted_at=T, slow_start=False, limit=limit), T)
        for step in range(1, 12):
            grown = pacing.grow(rate, T + step)
            rate = replace(grown, rate=round(grown.rate, 3), limit=round(grown.limit, 3))
        assert rate.rate > limit * pacing.MARGIN * 1.02  # recovered, then probed beyond
