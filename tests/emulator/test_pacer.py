"""The shared pacer against DynamoDB (emulator) and the uploader's pacing against the simulator:
a rate signal holds the fleet, a fault and a 503 with Retry-After do not; slots handed out move
with a hold; the rate is learned once per step however many workers race; short holds cost a
sleep, not a trip through the queue; lookups take slots too."""

from __future__ import annotations

import math
import threading
import time

import pytest
from migrator import pacing
from migrator.fate import Fate, Outcome, OutcomeKind, classify_failure
from migrator.pacer import LOOKUP, Go, Hold, Pacer

from tests.emulator.test_uploader import body, make_uploader, plenty, send_and_receive

pytestmark = pytest.mark.emulator


def test_a_scattered_503_without_a_hint_holds_no_one(aws, table, queue, sim):
    sim.patch_config({"unavailable_rate": 1.0, "unavailable_retry_after_fraction": 0.0, "seed": 1})
    first = make_uploader(aws, table, queue, sim)
    [record] = send_and_receive(aws("sqs"), queue, [body("503-alone")])
    fate = first.process(record, deadline=time.time() + 300)
    item = first.ledger.get("503-alone")
    assert fate.kind.value == "later" and not fate.pacing  # this request failed: it alone backs off
    assert item["state"] == "failed" and int(item["attempts"]) == 1 and "HTTP 503" in item["last_error"]
    sim.patch_config({"unavailable_rate": 0.0})
    other = make_uploader(aws, table, queue, sim)
    assert isinstance(other.pacer.reserve(time.time()), Go)  # the rest of the fleet goes on


def test_a_503_that_says_when_is_about_its_request_and_holds_no_one(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 20.0)
    now = time.time()
    assert isinstance(pacer.reserve(now), Go)
    pacer.observe(classify_failure(503, None, 2.0), now)  # the request waits; the fleet goes on
    assert isinstance(pacer.reserve(now + 0.1), Go)
    assert int(pacer.state()["err"]) == 1  # it counts for the breaker


def test_a_fleet_back_late_from_the_breakers_hold_makes_up_at_most_catch_up_s_of_slots(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 20.0)
    now = float(round(time.time()))  # whole seconds: the item keeps times to the millisecond
    pacer.reserve(now)
    pacer.hold(now + 2, "errors", "breaker: 12 of the last requests failed", now=now)
    back = now + 2 + 3.0  # 3 s late: counted from the hold's end, that was 78 creates at once
    burst = 0
    while isinstance(slot := pacer.reserve(back), Go) and slot.at <= back:
        burst += 1
    assert burst <= pacing.CATCH_UP_S * 20 + 1


def test_after_a_429_hold_no_slots_are_made_up(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 20.0)
    now = time.time()
    pacer.reserve(now)
    pacer.hold(now + 2, "rate", "HTTP 429", now=now)
    slot = pacer.reserve(now + 2.01)
    assert isinstance(slot, Go) and slot.at >= now + 2.0 - 0.001  # the bucket was empty: nothing is owed (ms precision)
    late = pacer.reserve(now + 5)  # nor to a fleet that comes back late (it used to get every slot since)
    assert isinstance(late, Go) and late.at >= now + 5 - 0.001


def test_the_breaker_holds_the_fleet_when_failures_are_the_rule(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 50.0)
    now = time.time()
    for _ in range(pacing.BREAKER_MIN):
        pacer.saw(False)
    pacer.reserve(now)  # carries the failures; the breaker opens
    held = pacer.reserve(now + 0.1)
    assert isinstance(held, Hold) and held.kind == "errors" and "breaker" in held.reason
    assert held.until == pytest.approx(now + pacing.breaker_cooldown(1), abs=0.5)


def test_the_rate_grows_once_per_step_however_many_workers_race(aws, table):
    start = time.time()
    pacers = [Pacer(table, aws("dynamodb"), 0.0, 5.0) for _ in range(6)]
    stop = start + 3.2

    def worker(pacer):
        while time.time() < stop:
            slot = pacer.reserve(time.time())
            if isinstance(slot, Go):
                time.sleep(max(0.0, slot.at - time.time()))

    threads = [threading.Thread(target=worker, args=(p,)) for p in pacers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    state = pacers[0].state()
    steps = round(math.log(float(state["rate"]) / 5.0, pacing.SLOW_START_GAIN))
    assert 2 <= steps <= 4, state["rate"]  # about one step a second, not one per worker per second
    assert state["rate_source"] == "start" and state["slow_start"] is True


def test_a_fleet_slower_than_its_rate_does_not_grow_it(aws, table):
    # One worker asking every 0.3 s of a pacer allowing 5/s (a slot every 0.2 s) always finds its
    # slot free: success says nothing about a higher rate, so the rate stays where it is.
    pacer = Pacer(table, aws("dynamodb"), 0.0, 5.0)
    start = time.time()
    while time.time() < start + 3.2:
        assert isinstance(pacer.reserve(time.time()), Go)
        time.sleep(0.3)
    state = pacer.state()
    assert float(state["rate"]) == 5.0 and float(state["idle_at"]) > start + 2.5


def test_a_step_spent_held_does_not_grow_the_rate(aws, table):
    # A hold, not the rate, held the fleet back: a full slot queue just after it says nothing
    # yet about a higher rate (growing then took the 2x scenario's 429s from 1.35 to 1.9 per
    # 100 creates in the fleet model).
    pacer = Pacer(table, aws("dynamodb"), 0.0, 5.0)
    now = float(round(time.time()))  # whole seconds: the item keeps times to the millisecond
    pacer.reserve(now)
    pacer.hold(now + 1.5, "errors", "breaker: 10 of the last requests failed", now=now)
    while isinstance(pacer.reserve(now + 1.6), Go):  # owed slots, then a full queue: the rate limits
        pass
    assert float(pacer.state()["rate"]) == 5.0
    while isinstance(pacer.reserve(now + 2.6), Go):  # a whole step after the hold
        pass
    assert float(pacer.state()["rate"]) == pytest.approx(5.0 * pacing.SLOW_START_GAIN, abs=0.001)


def test_a_burst_of_429s_cuts_the_rate_once(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 0.0, 20.0)
    now = time.time()
    pacer.reserve(now)
    for offset in (0.0, 0.1, 0.3):
        Pacer(table, aws("dynamodb"), 0.0, 20.0).throttled(now + offset)
    state = pacer.state()
    assert float(state["rate"]) == pytest.approx(20 * pacing.BETA)
    assert float(state["limit_seen"]) == 20.0 and state["rate_source"] == "learned"


def test_a_rate_recovered_through_the_item_goes_on_to_probe(aws, table):
    # 12.13 x MARGIN = 11.7661 is stored as 11.766: read back, that rate must count as recovered.
    pacer = Pacer(table, aws("dynamodb"), 0.0, 12.13)
    now = float(round(time.time()))  # whole seconds: the item keeps times to the millisecond
    pacer.reserve(now)
    pacer.throttled(now)
    for step in range(1, 13):  # simulated seconds, the slot queue kept full so the rate limits the fleet
        while isinstance(pacer.reserve(now + step), Go):
            pass
    assert float(pacer.state()["rate"]) > 12.13 * pacing.MARGIN * 1.02


def test_a_stated_limit_sets_the_pace_until_a_429_and_is_a_ceiling_after(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 0.0, 5.0)
    now = time.time()
    pacer.reserve(now)
    pacer.told(20.0, now)
    state = pacer.state()
    assert float(state["rate"]) == pytest.approx(19.6) and state["rate_source"] == "told"
    assert float(state["interval"]) == pytest.approx(1 / 19.6, rel=1e-6)
    pacer.reserve(now + 0.1)
    pacer.throttled(now + 0.2)  # the header overstated the limit
    pacer.told(20.0, now + 0.3)  # and says it again
    assert float(pacer.state()["rate"]) == pytest.approx(19.6 * pacing.BETA, abs=0.001)  # the cut stands


def test_slots_handed_out_move_with_a_hold_and_are_confirmed_when_due(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 5.0, concurrency=50)  # a queue of 10 s: 50 workers at 5/s
    now = float(round(time.time()))
    slots = [pacer.reserve(now) for _ in range(20)]
    far = slots[-1]
    assert isinstance(far, Go) and far.confirm and far.at == pytest.approx(now + 19 * 0.2, abs=0.01)
    pacer.hold(now + 3, "rate", "HTTP 429: the provider asked for 3 s", now=now)
    moved = pacer.confirm(far, now + 1)
    assert moved.at == pytest.approx(far.at + 3, abs=0.01) and moved.confirm  # every slot moved by the hold
    assert pacer.confirm(moved, moved.at).confirm is False  # due now: go


def test_a_lookup_takes_a_slot_and_its_429_holds_the_creates(aws, table):
    """For the uploader's lookups and reconcile's polls: a slot like a create's (the in-flight bound
    is for creates), and a 429 on it holds the fleet like a create's."""
    lookups, creates = Pacer(table, aws("dynamodb"), 20.0, max_in_flight=1), Pacer(table, aws("dynamodb"), 20.0)
    now = time.time()
    assert isinstance(lookups.reserve(now, purpose=LOOKUP), Go)
    assert isinstance(lookups.reserve(now, purpose=LOOKUP), Go)  # over a bound of 1 in flight: not a create
    lookups.observe(classify_failure(429, "", 2.0), now)
    held = creates.reserve(now + 0.5)
    assert isinstance(held, Hold) and held.kind == "rate" and held.until == pytest.approx(now + 2, abs=0.01)
    assert float(creates.state()["rate"]) == pytest.approx(20.0 * pacing.BETA)


def test_an_account_limit_holds_the_fleet_longer_while_it_repeats(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 20.0)
    now = time.time()
    pacer.reserve(now)
    full = Outcome(OutcomeKind.THROTTLED, error="HTTP 413: storage capacity exceeded", scope="account")
    pacer.observe(full, now)
    first = pacer.reserve(now + 0.1)
    assert isinstance(first, Hold) and first.kind == "account" and "413" in first.reason
    pacer.observe(full, first.until + 0.1)  # the first create after the hold meets it again
    second = pacer.reserve(first.until + 0.2)
    assert second.until - (first.until + 0.1) == pytest.approx(2 * (first.until - now), abs=0.01)
    assert float(pacer.state()["rate"]) == 20.0  # no cut: it says nothing about the rate


def test_a_short_hold_is_waited_out_inside_the_invocation(aws, table, queue, sim):
    uploader = make_uploader(aws, table, queue, sim, rate=10.0)
    records = send_and_receive(aws("sqs"), queue, [body("waits-1"), body("waits-2")])
    uploader.pacer.reserve(time.time())
    uploader.pacer.hold(time.time() + 2, "rate", "HTTP 429: the provider asked for 2 s")
    started = time.time()
    result = uploader.handle_batch({"Records": records}, plenty)
    assert result == {"batchItemFailures": []}  # no trip through the queue: no receive spent
    assert time.time() - started >= 2.0
    assert {uploader.ledger.get(i)["state"] for i in ("waits-1", "waits-2")} == {"processing"}


def test_a_429_waited_out_in_place_is_still_counted(aws, table, queue, sim):
    sim.patch_config({"rate": 1.0, "burst": 1})
    uploader = make_uploader(aws, table, queue, sim, rate=50.0)
    records = send_and_receive(aws("sqs"), queue, [body("t-1"), body("t-2")])
    assert uploader.handle_batch({"Records": records}, plenty) == {"batchItemFailures": []}
    assert sim.stats()["throttled"] >= 1
    throttles = sum(int(uploader.ledger.get(i).get("throttles", 0)) for i in ("t-1", "t-2"))
    assert throttles == sim.stats()["throttled"]  # status's 429 rate still sees every one


class _Queue:
    def __init__(self):
        self.visibility: list[int] = []

    def change_message_visibility(self, **request):
        self.visibility.append(request["VisibilityTimeout"])


def test_pacing_deferrals_do_not_climb_the_receive_floor(aws, table, queue, sim):
    uploader = make_uploader(aws, table, queue, sim)
    uploader.sqs = _Queue()
    record = {"receiptHandle": "r", "attributes": {"ApproximateReceiveCount": "40"}}
    uploader._defer(record, Fate.later(3, "held", pacing=True), time.time())
    uploader._defer(record, Fate(Fate.later(3, "x").kind, "failed", 3, paced_receives=38), time.time())
    uploader._defer(record, Fate.later(3, "failed again"), time.time())
    held, mostly_paced, failing = uploader.sqs.visibility
    assert held == 3 and mostly_paced == 3  # 40 receives, 38 of them pacing: not a message that keeps failing
    assert failing == 900  # a message that really failed 40 times waits the floor's cap
