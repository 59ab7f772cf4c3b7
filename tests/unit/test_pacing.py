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


# --- a stated limit is a ceiling (issue 20.2) -------------------------------------------------------


def test_a_stated_limit_is_a_ceiling_that_never_undoes_a_cut():
    told = pacing.told(pacing.start(5, None, T), 40.0, T)
    assert (told.rate, told.source) == (pytest.approx(39.2), "told")  # no 429 yet: pace at what it allows
    cut = pacing.cut(told, T + 1)  # the provider says otherwise
    assert pacing.told(cut, 40.0, T + 1.1) is None  # the same header on the next answer: the cut stands
    rate = cut
    for step in range(2, 40):
        rate = pacing.grow(rate, T + step) or rate
    assert rate.rate == pytest.approx(39.2)  # it climbs back only as it learns, up to the ceiling, not past it
    lower = pacing.told(rate, 20.0, T + 50)
    assert (lower.rate, lower.source) == (pytest.approx(19.6), "told")  # a lower ceiling brings it down


def test_creates_take_their_share_of_a_budget_that_covers_every_call():
    told = pacing.told(Rate(1.0, "start"), 4.0, T, share=0.5)  # Cloudflare: 1,200 per 5 minutes, all calls
    assert told.rate == pytest.approx(4.0 * 0.5 * pacing.HEADER_MARGIN) and told.stated == told.rate


# --- catch-up after a hold (issue 24.11) --------------------------------------------------------------


@pytest.mark.parametrize("late", [0.0, 0.3, 3.0, 4.9])
def test_a_fleet_back_late_from_a_hold_makes_up_at_most_catch_up_s_of_slots(late):
    """At 20/s after a breaker's hold: slots are owed from CATCH_UP_S before the hold's end, but a
    fleet coming back 3 s late was given 78 at once (counted from the hold's end); now 17 at most."""
    interval, until = 1 / 20, T + 10
    floor = pacing.resume_from(until, T, "errors")
    assert floor == pytest.approx(until - pacing.CATCH_UP_S)
    now = until + late
    slot, idle = pacing.slot_for(floor, floor, now)  # the queue's next slot is the hold's resume point
    owed = (now - slot) / interval + 1  # slots due at once, this one included
    assert not idle and owed <= pacing.CATCH_UP_S / interval + 1 + 1e-9


def test_nothing_is_owed_after_a_429s_hold_or_long_after_any():
    assert pacing.resume_from(T + 2, T, "rate") == T + 2  # the bucket was empty
    assert pacing.resume_from(T + 2, T, "account") == T + 2  # a bound on videos, not a rate
    assert pacing.slot_for(T + 1, 0.0, T + 3) == (T + 3, True)  # no floor: a free slot, the fleet idle
    late = T + 1 + pacing.CATCH_UP_S + pacing.OWED_WITHIN_S + 1
    assert pacing.slot_for(T + 1, T + 1, late) == (late, True)  # a hold long over owes nothing
    assert pacing.slot_for(T + 5, T + 1, T + 3) == (T + 5, False)  # a slot queued ahead is just taken


# --- what a throttle does to the fleet (issue 24.18, 20.3) --------------------------------------------


@pytest.mark.parametrize(
    ("scope", "hold", "cut", "failure"),
    [
        ("rate", "rate", True, False),  # a 429: the provider paces the fleet
        ("request", None, False, True),  # a 503 with Retry-After: that request waits, the breaker counts it
        ("account", "account", False, False),  # an account limit: the fleet holds, no cut
        (None, "rate", True, False),  # unknown: as a 429
    ],
)
def test_each_scope_has_its_response(scope, hold, cut, failure):
    assert pacing.response(scope) == pacing.Response(hold, cut, failure)


def test_an_account_limit_that_repeats_holds_longer_each_time_up_to_five_minutes():
    trips, until, seen = 0, 0.0, []
    for _ in range(5):  # a full account: the first create after each hold meets it again
        now = max(T, until + 0.5)
        trips = pacing.account_trips(trips, until, now)
        until = now + pacing.account_cooldown(trips)
        seen.append(pacing.account_cooldown(trips))
    assert seen == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert pacing.account_cooldown(20) == pacing.ACCOUNT_MAX_S
    assert pacing.account_trips(5, until, until + pacing.ACCOUNT_CALM_S + 1) == 1  # calm since: a new one


# --- the slot queue and the in-flight count ---------------------------------------------------------


@pytest.mark.parametrize(
    ("workers", "rate", "horizon"),
    [(5, 20.0, 5.0), (50, 5.0, 12.5), (200, 20.0, 12.5), (200, 5.0, 50.0)],
)
def test_the_slot_queue_has_room_for_a_slot_per_worker(workers, rate, horizon):
    assert pacing.horizon(workers, 1 / rate) == pytest.approx(horizon)


def test_the_ring_says_how_many_slots_were_handed_out_by_a_time():
    entries = []
    for ticket, at in enumerate([T, T + 0.1, T + 0.3, T + 0.6, T + 1.1]):
        name, tag = pacing.ring_entry(at)
        entries = [e for e in entries if e[0] != name] + [(name, tag + ticket)]
    ring = [value for _, value in entries]
    assert pacing.issued_by(ring, T + 0.5) == 3  # tickets 0 to 2: the quarter seconds wholly before
    assert pacing.issued_by(ring, T + 1.0) == 4  # the one at T + 0.6 too (T + 0.75 to 1.0 was empty)
    assert pacing.issued_by(ring, T - 1) is None  # the ring does not reach back that far


def test_in_flight_counts_the_tallied_the_handed_out_and_the_queued():
    assert pacing.in_flight(100, 7, 2.2) == 100 + 7 + 3
    assert pacing.in_flight(-3, 0) == 0  # a count from before the tally knew every asset is never negative
    finishing = pacing.in_flight(100, 0, 0, finishing=6.0, lag=1.0)
    assert finishing == 100 - round(pacing.FINISH_SHARE * 6)  # some of the videos finished since the tally
    assert pacing.in_flight(100, 0, 0, finishing=6.0, lag=60.0) == pytest.approx(
        100 - pacing.FINISH_SHARE * 6 * pacing.FINISH_LAG_MAX_S, abs=1
    )  # a tally that stopped is not a fleet whose videos all finished
