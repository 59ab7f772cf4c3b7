"""The pacer's decisions on a view of its item, as tables without I/O: what a reservation takes or
waits for, where a far slot went, what the in-flight bound says, what an answer tells the fleet, what
a hold or a new rate writes."""

from __future__ import annotations

from decimal import Decimal

import pytest
from migrator import pacer_item as P
from migrator import pacing
from migrator.fate import Outcome, OutcomeKind
from migrator.pacer_item import FleetHold, Go, Hold, RateStep
from migrator.pacing import CATCH_UP_S, OWED_WITHIN_S, Rate, RateSignal, Window
from migrator.retry import DEFAULT_THROTTLE_S

T = 1_800_000_000.0


def item(**fields) -> dict:
    """A pacer at 10/s (interval 0.1) with nothing held, its next slot now, in the current window."""
    return {"interval": Decimal("0.1"), "next_slot": Decimal(str(T)), "hold_until": 0, "win": pacing.window_id(T)} | {
        k: Decimal(str(v)) if isinstance(v, float) else v for k, v in fields.items()
    }


# --- the queue -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("view", "within", "concurrency", "reach"),
    [
        (item(), None, 5, pacing.HORIZON_MIN_S),  # a small fleet: the queue's floor
        (item(), 2.0, 5, 2.0),  # the caller can wait less than that
        (item(), -1.0, 5, 0.0),  # nor less than nothing
        (item(interval=1.0), None, 20, 25.0),  # room for a slot per worker: 20 * 1 s * 1.25
        (None, None, 8, 10.0),  # no view: a slot a second
    ],
)
def test_a_reservation_reaches_a_slot_per_worker_ahead_or_what_the_caller_can_wait(view, within, concurrency, reach):
    assert P.reach(view, within, concurrency) == pytest.approx(reach)


@pytest.mark.parametrize(
    ("view", "within", "expected"),
    [
        (item(), None, None),  # a free slot: nothing in the way
        (item(hold_until=T + 3, hold_kind="errors", hold_reason="breaker"), None, Hold(T + 3, "breaker", "errors")),
        (item(hold_until=T + 3), None, Hold(T + 3, "provider asked us to wait", "rate")),  # a hold without a reason
        (item(hold_until=T - 1), None, None),  # a hold that ended
        (item(next_slot=T + 9), None, Hold(T + 4, "create queue is full", "queue")),  # 9 s of slots, 5 s of reach
        (item(next_slot=T + 3), 1.0, Hold(T + 2, "create queue is full", "queue")),  # the caller's own reach
    ],
)
def test_a_view_blocks_a_reservation_with_a_hold_in_force_or_a_queue_beyond_reach(view, within, expected):
    found = P.blocked(view, T, within, 5)
    if expected is None:
        assert found is None
    else:
        assert (found.until, found.reason, found.kind) == (expected.until, expected.reason, expected.kind)
        assert found.spread == pytest.approx(0.5)  # the fleet's slots: 5 workers at 0.1 s


def test_a_worker_without_a_view_of_a_pacer_that_paces_knows_no_hold():
    assert P.known_hold(None, T, None, 5) is None
    assert P.known_hold({"hold_until": T + 10}, T, None, 5) is None  # from before it learned rates
    assert P.known_hold(item(hold_until=T + 10), T, None, 5).until == T + 10


@pytest.mark.parametrize(
    ("view", "queued"),
    [
        (item(next_slot=T + 1), True),  # a slot queued ahead
        (item(next_slot=T - 1), False),  # stale: the pacer was idle
        (item(next_slot=T + 1, win=pacing.window_id(T) - 1), False),  # a new breaker window
        (item(next_slot=T + 1, hold_until=T + 2), False),  # held
        (item(next_slot=T + 6), False),  # beyond reach
        (item(next_slot=T - 0.5, catchup_floor=T - 0.6), True),  # owed after a hold
        (item(next_slot=T - CATCH_UP_S - 0.1, catchup_floor=T - 1.0), False),  # owed, but longer ago than made up
        (item(next_slot=T - 0.5, catchup_floor=T - CATCH_UP_S - OWED_WITHIN_S - 1), False),  # a hold long over
    ],
)
def test_the_common_reservation_takes_a_slot_queued_ahead_or_one_owed_after_a_hold(view, queued):
    assert P.queued(view, T, pacing.window_id(T), 5.0) is queued


def test_the_common_write_takes_the_next_slot_and_carries_the_outcomes():
    old = item(next_slot=T + 1, seq=41, ok=3, err=1)
    taken = P.taken_from_queue(old, 2, 1)
    assert (taken.slot, taken.ticket) == (T + 1, 41)
    assert taken.view["next_slot"] == Decimal(str(T + 1)) + Decimal("0.1")
    assert (taken.view["seq"], taken.view["ok"], taken.view["err"]) == (42, 5, 2)


@pytest.mark.parametrize(
    ("view", "slot", "idle_at"),
    [
        (item(next_slot=T - 5, idle_at=T - 60), T, T),  # stale: now, and the fleet was idle
        (item(next_slot=T - 0.5, catchup_floor=T - 0.6, idle_at=T - 60), T - 0.5, T - 60),  # owed: not idle
        (item(next_slot=T + 1, win=pacing.window_id(T) - 1, idle_at=T - 60), T + 1, T - 60),  # a new window
    ],
)
def test_a_fresh_slot_is_now_or_owed_and_rolls_the_breakers_window(view, slot, idle_at):
    view |= {"seq": 7, "ok": 4, "err": 2, "prev_ok": 1, "prev_err": 0, "trips": 3}
    fresh = P.fresh_slot(view, T, pacing.window_id(T), 1, 1)
    assert (fresh.slot, fresh.ticket, fresh.idle_at) == (slot, 7, idle_at)
    assert fresh.next_slot == pytest.approx(slot + 0.1)
    assert fresh.trips == 0  # 2 failures of 7: a calm window ends the run of trips
    after = fresh.view(view)
    assert (after["seq"], after["win"], after["idle_at"]) == (8, pacing.window_id(T), idle_at)


def test_a_fresh_slot_keeps_the_breakers_trips_while_failures_are_the_rule():
    view = item(next_slot=T - 5, ok=2, err=9, trips=3)
    assert P.fresh_slot(view, T, pacing.window_id(T), 0, 0).trips == 3


@pytest.mark.parametrize(
    ("slot", "confirm"),
    [(T, False), (T + P.CONFIRM_AFTER_S, False), (T + P.CONFIRM_AFTER_S + 0.01, True)],
)
def test_a_far_slot_is_confirmed_when_it_is_due(slot, confirm):
    assert P.go_for(slot, 3, T) == Go(slot, 3, confirm)


@pytest.mark.parametrize(
    ("view", "ticket", "expected"),
    [
        (item(next_slot=T + 1, seq=10), 0, Go(T, 0, False)),  # 10 slots back from T + 1: due now
        (item(next_slot=T + 1, seq=10), 9, Go(T + 0.9, 9, False)),  # near
        (item(next_slot=T + 5, seq=10), 9, Go(T + 4.9, 9, True)),  # moved far: confirm again
        (item(next_slot=T + 1, seq=10, hold_until=T + 0.5), 0, Go(T + 0.5, 0, True)),  # a hold in force
        (item(next_slot=T + 1.0005, seq=10), 0, Go(T, 0, False)),  # within a millisecond: due
    ],
)
def test_a_confirmed_slot_is_where_the_item_puts_its_ticket_now(view, ticket, expected):
    found = P.confirmed(view, Go(T - 3, ticket, True), T)
    assert (found.at, found.ticket, found.confirm) == (pytest.approx(expected.at), expected.ticket, expected.confirm)


def test_a_worker_that_loses_every_race_waits_the_fleets_slots_for_its_attempts():
    assert P.contention_hold(item(), T, 8, 5) == Hold(T + 0.8, "pacer contention", "queue", 0.5)
    assert P.contention_hold(None, T, 8, 5) == Hold(T + 8, "pacer contention", "queue", 0.0)


def test_a_fresh_pacer_starts_at_its_start_rate_under_its_ceiling_with_empty_windows():
    fields = P.fresh_item(0.0, 20.0, T)
    assert (fields["next_slot"], fields["win"], fields["trips"], fields["ok"], fields["err"]) == (
        T,
        pacing.window_id(T),
        0,
        0,
        0,
    )
    assert (fields["rate"], fields["rate_source"], fields["interval"]) == (20.0, "ceiling", Decimal("0.050000000"))


# --- the in-flight bound ---------------------------------------------------------------------------


def bounded(**fields) -> dict:
    return item(next_slot=T + 0.3, seq=50, tallied_seq=45, processing=100, tallied_at=T) | fields


@pytest.mark.parametrize(
    ("view", "issued", "count"),
    [
        (bounded(), 0, 107),  # 100 processing + 5 slots since the tally + 2 queued
        (bounded(), 1, 108),
        (bounded(finish_rate=10.0, tallied_at=T - 1), 0, 102),  # half of 10/s finished over the 1 s since
    ],
)
def test_creates_in_flight_are_the_tallied_the_handed_out_and_the_queued(view, issued, count):
    assert P.in_flight_of(view, T, issued) == count


@pytest.mark.parametrize(
    ("bound", "near", "held"),
    [(120, False, False), (116, True, False), (106, True, True), (None, True, True)],
)
def test_the_bound_is_looked_at_near_it_and_holds_the_worker_past_it(bound, near, held):
    assert P.near_bound(bounded(), T, 5, bound) is near  # 107 + 2 slots per worker
    hold = P.bound_hold(bounded(), T, 0, bound, 5)
    assert (hold is not None) is held
    if hold is not None:
        assert hold == Hold(
            T + pacing.in_flight_wait(5),
            f"about 106 creates in flight at the provider; ProviderMaxInFlight is {bound}",
            "in_flight",
        )


def test_a_view_from_before_rates_is_not_near_any_bound():
    assert P.near_bound({}, T, 5, 1) is False


def test_the_bound_is_noted_once_a_period_with_half_a_reasons_room():
    assert P.bound_mark(bounded(bound_until=T + 1), T, "why") is None
    until, reason = P.bound_mark(bounded(bound_until=T), T, "x" * 500)
    assert (until, len(reason)) == (T + pacing.BOUND_MARK_S, P.REASON_MAX // 2)


# --- after a reservation ---------------------------------------------------------------------------


def rated(rate: Rate, **fields) -> dict:
    return item(**fields) | P.rate_fields(rate)


def test_a_reservation_that_sees_failures_as_the_rule_trips_the_breaker_longer_each_time():
    view = rated(Rate(10.0, "learned", adjusted_at=T), ok=3, err=9, prev_err=2, trips=1)
    step = P.after_reservation(view, T, None)
    assert step == FleetHold(
        T + pacing.breaker_cooldown(2), "errors", "breaker: 11 of the last requests failed", {"trips": 2}
    )


@pytest.mark.parametrize(
    ("rate", "ceiling", "fields", "expected"),
    [
        (Rate(10.0, "start", adjusted_at=T - 2), None, {"idle_at": T - 5}, 12.5),  # limiting a step: grows
        (Rate(10.0, "start", adjusted_at=T - 2), None, {"idle_at": T - 0.5}, None),  # found a free slot: not
        (Rate(10.0, "start", adjusted_at=T - 0.5), None, {"idle_at": T - 5}, None),  # not a step yet
        (Rate(10.0, "ceiling", ceiling=10.0, adjusted_at=T), 4.0, {}, 4.0),  # redeployed with a lower ceiling
        (Rate(10.0, "ceiling", ceiling=10.0, adjusted_at=T), None, {}, 10.0),  # the ceiling lifted: learned from here
    ],
)
def test_a_reservation_grows_the_rate_only_when_it_is_what_holds_the_fleet_back(rate, ceiling, fields, expected):
    step = P.after_reservation(rated(rate, **fields), T, ceiling)
    if expected is None:
        assert step is None
    else:
        assert isinstance(step, RateStep) and step.seen == rate
        assert step.new.rate == pytest.approx(expected) and step.new.ceiling == ceiling


def test_a_lifted_ceiling_leaves_a_learned_rate():
    step = P.after_reservation(rated(Rate(10.0, "ceiling", ceiling=10.0, stated=12.0, adjusted_at=T)), T, None)
    assert (step.new.source, step.new.ceiling, step.new.stated) == ("learned", None, 12.0)
    assert P.after_reservation({}, T, None) is None  # no rate recorded


# --- what the provider said ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (Outcome(OutcomeKind.CREATED), P.Heard(ok=True)),
        (Outcome(OutcomeKind.REJECTED), P.Heard(ok=True)),  # a 4xx: the provider is serving
        (Outcome(OutcomeKind.TRANSIENT), P.Heard(ok=False)),
        (
            Outcome(OutcomeKind.CREATED, signal=RateSignal(limit_per_s=25.0)),
            P.Heard(limit_per_s=25.0, ok=True),
        ),
        (
            Outcome(OutcomeKind.THROTTLED, retry_after=2.0, error="HTTP 429", scope="rate"),
            P.Heard(cut=True, retry_after=2.0, hold=FleetHold(T + 2, "rate", "HTTP 429: the provider asked for 2 s")),
        ),
        (
            Outcome(OutcomeKind.THROTTLED, error="HTTP 429"),  # no Retry-After, no scope: a 429's default
            P.Heard(cut=True, hold=FleetHold(T + DEFAULT_THROTTLE_S, "rate", "HTTP 429: the provider asked for 5 s")),
        ),
        (Outcome(OutcomeKind.THROTTLED, retry_after=3.0, scope="request"), P.Heard(retry_after=3.0, ok=False)),
        (
            Outcome(OutcomeKind.THROTTLED, error="HTTP 413", scope="account"),
            P.Heard(account_reason="HTTP 413: the provider's account limit"),
        ),
    ],
)
def test_what_an_answer_tells_the_fleet(outcome, expected):
    assert P.heard(outcome, T) == expected


@pytest.mark.parametrize(
    ("fields", "retry_after", "trips", "until"),
    [
        ({}, None, 1, T + pacing.ACCOUNT_BASE_S),
        ({"account_trips": 2, "account_until": T - 1}, None, 3, T + 4 * pacing.ACCOUNT_BASE_S),  # repeats
        ({"account_trips": 2, "account_until": T - 60}, None, 1, T + pacing.ACCOUNT_BASE_S),  # a new one
        ({}, 30.0, 1, T + 30),  # the provider's longer wait
    ],
)
def test_an_account_limit_holds_the_fleet_longer_while_it_repeats(fields, retry_after, trips, until):
    held = P.account_fleet_hold(fields, T, "full", retry_after)
    assert held == FleetHold(until, "account", "full", {"account_trips": trips, "account_until": until})


# --- holds and rates -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("view", "kind", "shift", "floor"),
    [
        (item(next_slot=T + 2), "rate", 3.0, 0),  # slots handed out move past a 429's hold
        (item(next_slot=T + 2, hold_until=T + 1), "rate", 2.0, 0),  # by what it adds to the hold in force
        (item(next_slot=T - 1), "rate", 0.0, 0),  # none handed out
        (None, "rate", 0.0, 0),  # no item yet
        (item(next_slot=T + 2), "errors", 3.0 - CATCH_UP_S, T + 3 - CATCH_UP_S),  # some slots made up after
    ],
)
def test_a_hold_moves_the_slots_handed_out_and_says_what_is_owed_after_it(view, kind, shift, floor):
    write = P.hold_write(view, T + 3, kind, "why", T)
    assert write.shift == pytest.approx(shift)
    assert write.fields == {"hold_until": T + 3, "hold_kind": kind, "hold_reason": "why", "idle_at": T + 3} | {
        "catchup_floor": pytest.approx(floor)
    }


def test_an_earlier_hold_never_shortens_a_later_one_and_a_hold_carries_its_extra_fields():
    assert P.hold_write(item(hold_until=T + 5), T + 3, "rate", "why", T) is None
    assert P.hold_write(item(hold_until=T + 3), T + 3, "rate", "why", T) is None
    write = P.hold_write(item(), T + 3, "errors", "x" * 500, T, {"trips": 2})
    assert write.fields["trips"] == 2 and len(write.fields["hold_reason"]) == P.REASON_MAX


@pytest.mark.parametrize(
    ("view", "interval", "shift"),
    [
        (item(next_slot=T + 2), 0.2, 2.0),  # twice the spacing: the 2 s of slots ahead take 4 s
        (item(next_slot=T + 2), 0.05, -1.0),
        (item(next_slot=T + 2, hold_until=T + 1), 0.2, 1.0),  # from the hold's end
        (item(next_slot=T - 1), 0.2, 0.0),  # none ahead
        (item(next_slot=T + 0.004), 0.11, 0.0),  # less than half a millisecond: not worth a write
        ({}, 0.2, 0.0),  # no rate yet
    ],
)
def test_a_new_rate_respaces_the_slots_handed_out(view, interval, shift):
    assert P.rescale(view, Decimal(str(interval)), T) == pytest.approx(shift)


def test_the_view_after_a_write_is_the_old_item_with_what_it_set():
    old = item(next_slot=T + 1, seq=3)
    assert P.view_after(old, {"seq": 4}) == old | {"seq": 4}
    assert P.view_after(old, {}, P.millis(0.25))["next_slot"] == Decimal(str(T + 1)) + Decimal("0.250")
    assert P.millis(1.23456) == Decimal("1.235")


@pytest.mark.parametrize(
    "rate",
    [
        Rate(10.0, "start", adjusted_at=T),
        Rate(12.5, "learned", ceiling=20.0, limit=14.0, slow_start=False, adjusted_at=T, quiet_steps=3, cut_at=T - 9),
        Rate(19.6, "told", stated=19.6, adjusted_at=T),
    ],
)
def test_a_rate_reads_back_as_the_item_records_it(rate):
    assert P.rate_of(P.rate_fields(rate)) == rate
    assert P.rate_of({}) is None


def test_the_breakers_windows_read_back_from_the_item():
    assert P.window_of(item(ok=3, err=1, prev_ok=5, prev_err=2)) == Window(pacing.window_id(T), 3, 1, 5, 2)
    assert P.window_of({}) == Window(0)
