"""The uploader's side of pacing, with stand-ins for the ledger, the queue and the provider: the pacer
as the settings and the provider's facts make it, and a batch the slot queue is beyond deferred
before any claim (no ledger write, no pacer write)."""

from __future__ import annotations

import random

from migrator.pacer import Hold, Pacer
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
