"""Reconcile's tracks lane against the emulator: an asset whose tracks message was lost (the uploader crashed
after its processing write, or the worker's message expired) gets it again, once per quiet period; an asset
whose tracks are all settled costs reconcile nothing."""

from __future__ import annotations

import json
import time

import pytest
from migrator.ledger import Ledger
from migrator.messages import Track
from migrator.providers import build
from migrator.reconcile import Reconciler
from migrator.states import State

from tests.conftest import unique
from tests.emulator.test_reconcile import LIMITS, claim

pytestmark = pytest.mark.emulator


def bodies(sqs, url) -> list[dict]:
    out = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if not messages:
            return out
        for m in messages:
            out.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def run_ahead(ledger, aws, queue, sim, ahead_s: float, **side_queues: str):
    """One reconcile run `ahead_s` in the future, with the side lanes whose queues are given."""
    provider = build("generic", sim.url, lambda: sim.config.token)
    clock = lambda: time.time() + ahead_s  # noqa: E731
    return Reconciler(ledger, aws("sqs"), queue, provider, LIMITS, clock=clock, **side_queues).run()


def test_a_lost_tracks_message_is_sent_again_once_and_settled_tracks_are_never_looked_at(
    aws, table, queue, tracks_queue, sim
):
    ledger = Ledger(table, aws("dynamodb"))
    track = (Track("https://c.example.com/en.vtt", "en"),)
    lost = unique("lost-tracks")
    got = claim(ledger, lost, lease_s=1, tracks=track)  # then its video went ready, and the message never came
    assert ledger.mark_processing(lost, got.token, "vid-1", time.time()).won
    assert ledger.settle(lost, State.READY, "vid-1", time.time()).won
    done = unique("done-tracks")
    got = claim(ledger, done, lease_s=1, tracks=track)
    ledger.mark_processing(done, got.token, "vid-2", time.time())
    ledger.settle(done, State.READY, "vid-2", time.time())
    entries = {"en.captions.": {"state": "attached", "attempts": 1, "updated_at": time.time()}}
    assert ledger.arm_tracks(done, "vid-2", entries, time.time()).won
    assert ledger.close_tracks(done, "vid-2", ["en.captions."], None).won

    def run(ahead_s: float):
        return run_ahead(ledger, aws, queue, sim, ahead_s, tracks_queue_url=tracks_queue)

    assert run(3600).tracks_resent == 1
    assert bodies(aws("sqs"), tracks_queue) == [{"id": lost}]
    assert run(3600).tracks_resent == 0  # the marker moved its due time: not again this quiet period
    assert run(7300).tracks_resent == 1  # a whole quiet period later, still nothing settled: again
    assert bodies(aws("sqs"), tracks_queue) == [{"id": lost}]
    assert int(ledger.get(lost)["tracks_heals"]) == 2 and "tracks_heals" not in ledger.get(done)


def test_a_stack_from_before_tracks_reads_no_tracks_lane(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    summary = Reconciler(ledger, aws("sqs"), queue, build("generic", sim.url, lambda: sim.config.token), LIMITS).run()
    assert summary.lanes == 48 and summary.tracks_resent == 0
