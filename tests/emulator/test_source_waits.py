"""A file the source prepares first (Mux master access, Stream's MP4 download), through the real ledger table:
each wait gives the claim back without spending the attempt, `preparing_since` is kept from the first
wait on, and a wait past SourcePrepareTimeoutSeconds fails the asset with the reason (emulator)."""

from __future__ import annotations

import json
import random

import pytest
from migrator.ledger import Ledger
from migrator.pacer import Pacer
from migrator.settings import Settings
from migrator.sources import Resolution
from migrator.states import State
from migrator.uploader import Uploader

from tests.conftest import unique

pytestmark = pytest.mark.emulator


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


class NoProvider:
    def source_problem(self, url):
        return None

    def create(self, asset, source_url):  # pragma: no cover - the test fails if it is reached
        raise AssertionError("a create was sent for a file that is not ready")


def test_waits_for_a_preparing_file_spend_no_attempt_and_end_at_the_bound(aws, table):
    clock = Clock(1_800_000_000.0)
    settings = Settings(table_name=table, queue_url="q", provider_base_url=None, source_prepare_timeout_s=100.0)
    dynamodb = aws("dynamodb")
    uploader = Uploader(
        settings=settings,
        ledger=Ledger(table, dynamodb),
        pacer=Pacer(table, dynamodb, 0.0, 100.0),
        provider=NoProvider(),
        sqs=None,
        presign=lambda url: url,
        clock=clock,
        sleep=lambda s: None,
        rng=random.Random(2),
        sources=lambda url: Resolution.preparing("Mux is preparing the master file", 40.0),
    )
    asset_id = unique("mux/asset")
    record = {"messageId": "m", "body": json.dumps({"id": asset_id, "source_url": "mux://abc"})}
    ledger = Ledger(table, dynamodb)
    first_wait = clock.now
    for _ in range(3):  # three waits: 0 s, 45 s, 90 s into the preparation
        fate = uploader.process(record, clock.now + 60)
        assert fate.kind.value == "later" and fate.pacing
        item = ledger.get(asset_id)
        assert item["state"] == State.PENDING.value and int(item["attempts"]) == 0
        assert float(item["preparing_since"]) == first_wait and item["last_error"] == "Mux is preparing the master file"
        clock.now += 45
    fate = uploader.process(record, clock.now + 60)  # 135 s: past the 100 s bound
    item = ledger.get(asset_id)
    assert fate.kind.value == "finished" and item["state"] == State.FAILED.value
    assert "retry_after" not in item and "preparing_since" not in item  # failed for good; a retry waits afresh
    assert item["last_error"].startswith("the source's file was not ready after 135 s")
    assert int(item["holds"]) == 3 and int(item["attempts"]) == 1


def test_a_wait_that_ends_well_leaves_no_start_behind_for_a_later_wait(aws, table):
    """Review 4, item 5: the file became ready and the create went through, so `preparing_since` goes;
    days later a retry that must wait again (Mux prepares a master again after 24 h) is timed afresh."""
    from migrator.messages import AssetMessage

    ledger = Ledger(table, aws("dynamodb"))
    asset_id = unique("mux/asset")
    msg = AssetMessage(asset_id, "mux://abc")
    start = 1_800_000_000.0
    claim = ledger.claim(msg, start, start + 60, "t1")
    ledger.release_preparing(asset_id, "t1", State.PENDING, start + 30, "preparing", start)
    assert float(ledger.get(asset_id)["preparing_since"]) == start
    claim = ledger.claim(msg, start + 40, start + 100, "t2")
    assert claim.previous["preparing_since"] == start  # the wait goes on: the uploader reads its start
    ledger.mark_processing(asset_id, "t2", "remote-1", start + 41)
    assert "preparing_since" not in ledger.get(asset_id)

    # The provider fails the video; the operator retries two days on, and the source prepares once more.
    later = start + 2 * 86_400
    assert ledger.settle(asset_id, State.REJECTED, "remote-1", later - 10, error="provider: errored").won
    assert ledger.rearm(asset_id, State.REJECTED, later).won
    claim = ledger.claim(msg, later, later + 60, "t3")
    assert "preparing_since" not in (claim.previous or {})
    ledger.release_preparing(asset_id, "t3", State.FAILED, later + 30, "preparing", later)
    assert float(ledger.get(asset_id)["preparing_since"]) == later


def test_an_operator_retry_after_a_wait_that_failed_times_the_next_wait_afresh(aws, table):
    from migrator.messages import AssetMessage

    ledger = Ledger(table, aws("dynamodb"))
    asset_id = unique("stream/asset")
    msg = AssetMessage(asset_id, "cloudflare://abc")
    start = 1_800_000_000.0
    ledger.claim(msg, start, start + 60, "t1")
    ledger.release_preparing(asset_id, "t1", State.PENDING, start + 30, "preparing", start)
    ledger.claim(msg, start + 40, start + 100, "t2")
    ledger.mark_rejected(asset_id, "t2", "provider refused the source", start + 41)
    assert "preparing_since" not in ledger.get(asset_id)


class FailingProvider:
    """A provider that refuses every create with a 503: a retryable failure after the source was ready."""

    name = "failing"

    def source_problem(self, url):
        return None

    def create(self, asset, source_url):
        from migrator.fate import Outcome, OutcomeKind

        return Outcome(OutcomeKind.TRANSIENT, error="HTTP 503: try later")

    def create_notes(self, asset, source_url):
        return ()

    def playback(self, asset):
        return "signed"


def test_a_wait_that_ends_with_a_failed_create_still_ends_the_wait(aws, table):
    """The file became ready and the create failed for another reason (a 503): the wait is over, so the
    retry that must wait again (the master prepared anew) is timed from its own start, not the first's."""
    clock = Clock(1_800_000_000.0)
    settings = Settings(table_name=table, queue_url="q", provider_base_url=None, source_prepare_timeout_s=100.0)
    dynamodb = aws("dynamodb")
    answers = [Resolution.preparing("Mux is preparing the master file", 40.0), Resolution.ready("https://m/x.mp4")]
    uploader = Uploader(
        settings=settings,
        ledger=Ledger(table, dynamodb),
        pacer=Pacer(table, dynamodb, 0.0, 100.0),
        provider=FailingProvider(),
        sqs=None,
        presign=lambda url: url,
        clock=clock,
        sleep=lambda s: None,
        rng=random.Random(2),
        sources=lambda url: answers.pop(0),
    )
    asset_id = unique("mux/asset")
    record = {"messageId": "m", "body": json.dumps({"id": asset_id, "source_url": "mux://abc"})}
    ledger = Ledger(table, dynamodb)
    uploader.process(record, clock.now + 60)  # waits
    assert "preparing_since" in ledger.get(asset_id)
    clock.now += 45
    fate = uploader.process(record, clock.now + 60)  # ready; the create fails with a 503
    item = ledger.get(asset_id)
    assert fate.kind.value == "later" and item["state"] == State.FAILED.value and "retry_after" in item
    assert "preparing_since" not in item
