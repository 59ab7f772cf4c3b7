"""Outside the working hours: the uploader sends a record back to the queue before any claim or reservation until
the window opens (at most SQS's 12 h, asked again then), a claimed one's slot due after the close goes unused, the
tracks worker starts no pass, reconcile heals nothing; the ledger's `#window` override is read at most once a minute
per container (hours.py)."""

from __future__ import annotations

import random
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from migrator.hours import WINDOW, WINDOW_ID, WINDOW_SPREAD_S, Hours, Override, effective, override_of, window_hold
from migrator.pacer import Go, Hold, Pacer
from migrator.settings import SettingsError
from migrator.trackworker import TracksWorker
from migrator.upload.pace import Pace
from migrator.uploader import Uploader
from migrator.window import parse_window

from tests.unit.dynamo_fake import FakeDynamo
from tests.unit.test_uploader_pacing import _Recorder, settings

UTC = ZoneInfo("UTC")
MONDAY_NOON = datetime(2026, 12, 7, 12, 0, tzinfo=UTC).timestamp()
MONDAY_EVENING = datetime(2026, 12, 7, 20, 0, tzinfo=UTC).timestamp()
TUESDAY_OPEN = datetime(2026, 12, 8, 9, 0, tzinfo=UTC).timestamp()
OFFICE = "Mon-Fri 09:00-18:00 UTC"


def test_the_stack_refuses_working_hours_that_are_not_a_window():
    assert settings(WORKING_HOURS=OFFICE).working_hours == OFFICE
    assert settings().working_hours == ""
    with pytest.raises(SettingsError, match=r"WORKING_HOURS: .*'Mox' is not a day"):
        settings(WORKING_HOURS="Mox 09:00-10:00")


@pytest.mark.parametrize(
    ("now", "visibility"),
    [
        (MONDAY_EVENING, TUESDAY_OPEN - MONDAY_EVENING),  # 13 h to go: SQS's 12 h (less 5 s), asked again then
        (datetime(2026, 12, 8, 8, 0, tzinfo=UTC).timestamp(), 3600),  # an hour before it opens: back then
    ],
)
def test_outside_the_hours_a_batch_goes_back_before_any_claim(now, visibility):
    dynamo = FakeDynamo()
    queue = _Recorder()
    hours = Hours(OFFICE)  # the stack's window alone
    pacer = Pacer("ledger", dynamo, 5.0)
    uploader = Uploader(settings(), _Recorder(), pacer, None, queue, str, clock=lambda: now, hours=hours)
    records = [
        {"messageId": f"m{i}", "receiptHandle": f"r{i}", "body": "{}", "attributes": {"ApproximateReceiveCount": "40"}}
        for i in range(3)
    ]
    result = uploader.handle_batch({"Records": records}, lambda: 100.0)
    assert [f["itemIdentifier"] for f in result["batchItemFailures"]] == ["m0", "m1", "m2"]
    assert sum(dynamo.calls.values()) == 0  # no claim, no reservation: nothing written
    wanted = min(visibility, 43_200 - 5)
    # Back when it opens, spread over a minute; pacing, so no deferral floor for a message received 40 times.
    assert all(wanted <= seconds <= wanted + WINDOW_SPREAD_S + 1 for seconds in queue.visibility), queue.visibility


def test_inside_the_hours_the_window_lets_the_record_through():
    pace = Pace(Pacer("ledger", FakeDynamo(), 5.0), settings(), clock=lambda: MONDAY_NOON, hours=Hours(OFFICE))
    assert pace.outside_hours() is None
    assert window_hold(Hours(""), MONDAY_EVENING) is None  # no window: never held
    assert window_hold(None, MONDAY_EVENING) is None


class _Pacer:
    """A pacer that hands out `slot` and records the reservations."""

    def __init__(self, slot):
        self.slot, self.reserved = slot, 0

    def reserve(self, now, within, purpose):
        self.reserved += 1
        return self.slot


def test_a_slot_due_after_the_window_closes_goes_unused():
    """Claimed at 17:59:58 with a slot at 18:00:01: the create is not sent; the claim goes back as a hold."""
    closing = datetime(2026, 12, 7, 17, 59, 58, tzinfo=UTC).timestamp()
    sleeps: list[float] = []
    pacer = _Pacer(Go(closing + 3))
    pace = Pace(pacer, settings(), lambda: closing + sum(sleeps), sleeps.append, random.Random(1), hours=Hours(OFFICE))
    held = pace.slot(closing + 60, "create")
    assert isinstance(held, Hold) and held.kind == WINDOW and held.until == TUESDAY_OPEN
    assert "outside working hours (opens 2026-12-08 09:00 UTC)" == held.reason
    # Once closed, no reservation at all.
    assert pace.slot(closing + 120, "create") == held and pacer.reserved == 1


@pytest.mark.parametrize(
    ("item", "stack", "window", "source"),
    [
        (None, OFFICE, OFFICE, "stack"),
        ({"asset_id": WINDOW_ID}, OFFICE, OFFICE, "stack"),  # an item with no text: no override
        ({"asset_id": WINDOW_ID, "text": "Sat-Sun 00:00-24:00 UTC"}, OFFICE, "Sat-Sun 00:00-24:00 UTC", "override"),
        ({"asset_id": WINDOW_ID, "text": "always"}, OFFICE, None, "override"),  # open around the clock at run time
        ({"asset_id": WINDOW_ID, "text": "Mox 1-2"}, OFFICE, OFFICE, "stack"),  # written by hand, wrong: ignored
        ({"asset_id": WINDOW_ID, "text": OFFICE}, "", OFFICE, "override"),
    ],
)
def test_the_override_wins_over_the_stacks_window(item, stack, window, source):
    found, where = effective(stack, override_of(item))
    assert (found, where) == (parse_window(window) if window else None, source)


def test_the_override_is_read_at_most_once_a_minute():
    dynamo = FakeDynamo()
    hours = Hours(OFFICE, "ledger", dynamo)
    assert hours.closed_until(MONDAY_NOON) is None
    dynamo.items[WINDOW_ID] = {"asset_id": WINDOW_ID, "text": "Sat-Sun 00:00-24:00 UTC"}
    assert hours.closed_until(MONDAY_NOON + 59) is None  # not read again yet
    assert hours.closed_until(MONDAY_NOON + 60) == datetime(2026, 12, 12, tzinfo=UTC).timestamp()
    assert dynamo.calls["get", WINDOW_ID] == 2
    assert override_of(None) == Override(None)


def test_the_tracks_worker_starts_no_pass_outside_the_hours():
    """Its message goes back until the window opens, before the ledger is read (`_Recorder` fails on any call)."""
    worker = TracksWorker(_Recorder(), None, _Recorder(), "q", clock=lambda: MONDAY_EVENING, hours=Hours(OFFICE))
    fate = worker.process({"body": "{}"}, MONDAY_EVENING + 60)
    assert fate.pacing and TUESDAY_OPEN - MONDAY_EVENING <= fate.delay_s <= TUESDAY_OPEN - MONDAY_EVENING + 60
    assert fate.reason == "outside working hours (opens 2026-12-08 09:00 UTC)"


class _Lanes:
    """A ledger whose due lanes are all empty, noting which were read."""

    def __init__(self):
        self.read: list[str] = []

    def query_due(self, lane, before, limit, key):
        self.read.append(lane)
        return [], None


@pytest.mark.parametrize(
    ("now", "families"),
    [
        (MONDAY_NOON, {"heal", "queued", "poll", "tracks"}),
        (MONDAY_EVENING, {"queued", "poll"}),  # closed: the messages held back look lost and are not
    ],
)
def test_reconcile_heals_nothing_while_the_hours_are_closed(now, families):
    from migrator.heal import RunLimits
    from migrator.reconcile import Reconciler

    lanes = _Lanes()
    reconciler = Reconciler(lanes, None, "q", None, RunLimits(), lambda: now, tracks_queue_url="t", hours=Hours(OFFICE))
    reconciler.run()
    assert {lane.split("#")[0] for lane in lanes.read} == families
