"""The uploader's side of pacing, with stand-ins for the ledger, the queue and the provider: the pacer
as the settings and the provider's facts make it, a batch the slot queue is beyond deferred
before any claim (no ledger write, no pacer write), and a slot waited out in place."""

from __future__ import annotations

import random

import pytest
from migrator.pacer import Go, Hold, Pacer, wait_for_slot
from migrator.providers import build
from migrator.settings import load
from migrator.uploader import Uploader

from tests.unit.dynamo_fake import FakeDynamo

NOW = 1_800_000_000.0


def settings(**env):
    return load({"LEDGER_TABLE": "ledger", "QUEUE_URL": "q", "PROVIDER": "cloudflare", **env})


def test_the_pacer_takes_the_providers_facts_and_the_settings():
    cloudflare = build("cloudflare", None, lambda: "{}")
    pacer = Pacer.configured(settings(MAXIMUM_CONCURRENCY="50"), FakeDynamo(), cloudflare)
    assert (pacer.concurrency, pacer.max_in_flight, pacer.share) == (50, 120, 0.5)  # a budget of every call
    mux = build("mux", None, lambda: "{}")
    pacer = Pacer.configured(settings(PROVIDER_MAX_IN_FLIGHT="30", CREATE_SHARE="0.8"), FakeDynamo(), mux)
    assert (pacer.max_in_flight, pacer.share) == (30, 1.0)  # Mux's limits count creates alone


def test_mux_is_paced_at_its_documented_create_rate_unless_the_operator_sets_one():
    mux, generic = build("mux", None, lambda: "{}"), build("generic", "https://p.example", lambda: "t")
    assert Pacer.configured(settings(PROVIDER="mux"), FakeDynamo(), mux).ceiling == 1.0  # 1/s sustained
    assert Pacer.configured(settings(PROVIDER="mux", PROVIDER_RATE_LIMIT="4"), FakeDynamo(), mux).ceiling == 4.0
    generic_settings = settings(PROVIDER="generic", PROVIDER_BASE_URL="https://p.example")
    assert Pacer.configured(generic_settings, FakeDynamo(), generic).ceiling is None  # learned from 429s


class _Recorder:
    """Fails the test on any call but the queue's visibility change."""

    def __init__(self):
        self.visibility: list[int] = []

    def change_message_visibility(self, **request):
        self.visibility.append(request["VisibilityTimeout"])

    def __getattr__(self, name):
        raise AssertionError(f"unexpected call: {name}")


def test_a_batch_the_slot_queue_is_beyond_is_deferred_before_any_claim():
    dynamo = FakeDynamo()
    pacer = Pacer("ledger", dynamo, 5.0)
    pacer.last_seen = {"interval": 0.2, "next_slot": NOW + 300, "hold_until": 0}  # 300 s of slots queued
    queue = _Recorder()
    uploader = Uploader(settings(), _Recorder(), pacer, None, queue, str, clock=lambda: NOW, rng=random.Random(1))
    records = [{"messageId": f"m{i}", "receiptHandle": f"r{i}", "body": "{}"} for i in range(3)]
    result = uploader.handle_batch({"Records": records}, lambda: 100.0)
    assert [f["itemIdentifier"] for f in result["batchItemFailures"]] == ["m0", "m1", "m2"]
    assert all(seconds >= 300 - 100 for seconds in queue.visibility)  # back when the queue reaches them
    assert sum(dynamo.calls.values()) == 0  # no claim, no reservation: nothing written
    assert isinstance(pacer.known_hold(NOW, 100 - uploader.settings.work_s), Hold)


class _Confirms:
    """A pacer whose far slots, once due, are where `moves` says (or held)."""

    def __init__(self, *moves):
        self.moves = list(moves)

    def confirm(self, go, now):
        return self.moves.pop(0)


@pytest.mark.parametrize(
    ("slot", "moves", "result", "slept"),
    [
        (Go(NOW + 2), (), Go(NOW + 2), [2.0]),  # near: slept to, not confirmed
        (Go(NOW - 1), (), Go(NOW - 1), []),  # already due
        (Go(NOW + 3, 7, True), (Go(NOW + 3, 7),), Go(NOW + 3, 7), [3.0]),  # far: confirmed where it was
        (Go(NOW + 3, 7, True), (Hold(NOW + 20, "HTTP 429"),), Hold(NOW + 20, "HTTP 429"), [3.0]),  # held meanwhile
        (Go(NOW + 3, 7, True), (Go(NOW + 50, 7),), Hold(NOW + 50, "too far", "queue"), [3.0]),  # moved past reach
        (Go(NOW + 40), (), Hold(NOW + 40, "too far", "queue"), []),  # past reach from the start
        (Hold(NOW + 9, "full"), (), Hold(NOW + 9, "full"), []),  # no slot: the hold as it came
    ],
)
def test_a_slot_is_waited_out_in_place_and_confirmed_when_far(slot, moves, result, slept):
    """`wait_for_slot`, as the uploader's records and reconcile's polls take their slots (here: at
    most 30 s ahead); the clock moves only by the sleeps."""
    sleeps: list[float] = []

    def clock() -> float:
        return NOW + sum(sleeps)

    found = wait_for_slot(_Confirms(*moves), slot, clock, sleeps.append, lambda go, wait: wait > 30, "too far")
    assert found == result and sleeps == pytest.approx(slept)
