"""Intake against the real ledger and queues (emulator): every message is recorded before the paced
queue sees it, and a message that outlives the queue's retention is sent again from the ledger."""

from __future__ import annotations

import json
import random
import time

import pytest
from migrator.due import queued_after_s
from migrator.heal import RunLimits
from migrator.intake import Intake
from migrator.ledger import Ledger
from migrator.messages import AssetMessage, parse_message
from migrator.pacer import Pacer
from migrator.providers import build
from migrator.reconcile import Reconciler
from migrator.settings import Settings
from migrator.uploader import Uploader

from tests.conftest import unique

pytestmark = pytest.mark.emulator


def records(bodies: list[str]) -> list[dict]:
    return [{"messageId": f"m{i}", "receiptHandle": f"r{i}", "body": b, "attributes": {}} for i, b in enumerate(bodies)]


def body(asset_id: str, **fields) -> str:
    return json.dumps({"id": asset_id, "source_url": f"https://media.example.com/{asset_id}.mp4", **fields})


def received(sqs, queue: str) -> list[dict]:
    """Every message in the queue (received and deleted), as Lambda-shaped records."""
    out = []
    while True:
        resp = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1, AttributeNames=["All"])
        messages = resp.get("Messages", [])
        if not messages:
            return out
        for m in messages:
            out.append({"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"]})
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


def test_each_message_is_recorded_then_forwarded_once(aws, table, queue):
    ledger = Ledger(table, aws("dynamodb"))
    intake = Intake(ledger, aws("sqs"), queue)
    new, twice, staged, done = (unique(p) for p in ("new", "twice", "staged", "done"))
    assert ledger.stage(AssetMessage(staged, "https://media.example.com/s.mp4"), time.time())
    ledger.record_poison(done, "an earlier poison", None, time.time())  # rejected: nothing to do

    first = intake.handle_batch({"Records": records([body(new, title="T", metadata={"n": 1}), body(twice)])})
    second = intake.handle_batch({"Records": records([body(twice), body(staged), body(done), "not json"])})

    assert first == second == {"batchItemFailures": []}
    forwarded = sorted(parse_message(r["body"]).asset_id for r in received(aws("sqs"), queue))
    assert forwarded == sorted([new, twice, staged])  # twice once; the rejected one and the poison never
    item = ledger.get(new)
    assert item["state"] == "pending" and item["due_lane"].startswith("queued#") and item["title"] == "T"
    assert ledger.get(staged)["due_lane"].startswith("queued#")


def test_a_forward_that_fails_comes_back_and_is_recorded_once(aws, table, queue):
    ledger = Ledger(table, aws("dynamodb"))

    class FailingSqs:
        def send_message_batch(self, **kwargs):
            raise ConnectionError("the queue is unreachable")

    asset_id = unique("retry")
    failed = Intake(ledger, FailingSqs(), queue).handle_batch({"Records": records([body(asset_id)])})
    assert failed == {"batchItemFailures": [{"itemIdentifier": "m0"}]}
    assert ledger.get(asset_id)["state"] == "pending"  # recorded: status counts it already

    (redelivered,) = records([body(asset_id)])
    redelivered["attributes"] = {"ApproximateReceiveCount": "2"}  # SQS brings it back
    again = Intake(ledger, aws("sqs"), queue).handle_batch({"Records": [redelivered]})
    assert again == {"batchItemFailures": []}
    assert [parse_message(r["body"]).asset_id for r in received(aws("sqs"), queue)] == [asset_id]
    item = ledger.get(asset_id)
    assert item["due_lane"].startswith("queued#") and int(item["attempts"]) == 0


def test_messages_that_expire_unreceived_still_migrate(aws, table, sim):
    """A work queue that keeps messages 60 s (SQS's least): the fleet does not reach them in time, the
    queue drops them, and reconcile sends each one again from the ledger; every asset migrates once.

    The minute is lived on reconcile's clock, not waited out: the queue's drop is the purge (what an expiry
    does to the messages; SQS's own expiry is the emulator's to honour, not ours), and reconcile runs as it
    would 62 s later. Before the queued lane's silence has passed, it sends nothing."""
    sqs = aws("sqs")
    work = sqs.create_queue(QueueName=unique("work"), Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
    ledger = Ledger(table, aws("dynamodb"))
    ids = [unique("slow-fleet") for _ in range(6)]
    assert Intake(ledger, sqs, work).handle_batch({"Records": records([body(i) for i in ids])}) == {
        "batchItemFailures": []
    }
    sqs.purge_queue(QueueUrl=work)  # nobody received them: the queue's retention ran out
    assert received(sqs, work) == []

    def reconciler(later_s: float) -> Reconciler:
        return Reconciler(
            ledger=ledger,
            sqs=sqs,
            queue_url=work,
            provider=build("generic", sim.url, lambda: sim.config.token),
            limits=RunLimits(queued_after_s=queued_after_s(60)),
            clock=lambda: time.time() + later_s,
        )

    assert reconciler(0).run().healed == 0  # the messages may still be on their way: too soon to send again
    assert reconciler(62).run().healed == len(ids)

    settings = Settings(table_name=table, queue_url=work, provider_base_url=sim.url)
    dynamodb = aws("dynamodb")
    uploader = Uploader(
        settings=settings,
        ledger=ledger,
        pacer=Pacer(table, dynamodb, 0.0, 100.0),
        provider=build("generic", sim.url, lambda: sim.config.token),
        sqs=sqs,
        presign=lambda url: url,
        rng=random.Random(1),
    )
    assert uploader.handle_batch({"Records": received(sqs, work)}, lambda: 300.0) == {"batchItemFailures": []}
    assert {ledger.get(i)["state"] for i in ids} == {"processing"}
    stats = sim.stats()
    assert stats["videos"] == len(ids) and stats["duplicate_videos"] == 0


def test_a_later_row_that_says_private_narrows_the_ledger_before_the_create_and_never_widens_it(aws, table, queue):
    """Review 4, item 2: a video made private at its source after the first inventory was created public,
    because the ledger kept the first privacy it saw and intake dropped the later row."""
    ledger = Ledger(table, aws("dynamodb"))
    intake = Intake(ledger, aws("sqs"), queue)
    asset_id, settled = unique("lib"), unique("lib")
    intake.handle_batch({"Records": records([body(asset_id, privacy="public"), body(settled, privacy="public")])})
    assert ledger.get(asset_id)["privacy"] == "public"
    intake.handle_batch({"Records": records([body(asset_id, privacy="private")])})
    assert ledger.get(asset_id)["privacy"] == "private"  # narrowed: the create to come carries it
    intake.handle_batch({"Records": records([body(asset_id, privacy="public"), body(asset_id, privacy="unlisted")])})
    assert ledger.get(asset_id)["privacy"] == "private"  # never widened again

    # A video the provider has already: a narrower row changes nothing here (the audit names the drift).
    now = time.time()
    ledger.claim(AssetMessage(settled, "https://media.example.com/x.mp4"), now, now + 60, "t")
    ledger.mark_processing(settled, "t", "remote-1", now)
    intake.handle_batch({"Records": records([body(settled, privacy="private")])})
    assert ledger.get(settled)["privacy"] == "public"
