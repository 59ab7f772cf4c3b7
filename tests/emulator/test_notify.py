"""Done and stalled notices against the emulator (functions/migrator/notify.py): the tally's aggregates in a stats
table, the `#notices` item in a ledger table, and an SNS topic with an SQS queue subscribed to read what was
published. Each notice arrives once however many runs look, a second load is told again, and a stall once."""

from __future__ import annotations

import json
import uuid

import pytest
from migrator.dynamo import typed
from migrator.hours import Hours
from migrator.notify import Notifier
from migrator.tally import apply

from tests.emulator.conftest import create_ledger_table, create_table_like

pytestmark = pytest.mark.emulator

T = 1_800_000_000.0


def settled(asset_ids, seq_from: int, state: str = "ready"):
    """Stream records of assets that went from pending to `state` (an INSERT as pending first)."""
    records = []
    for i, asset_id in enumerate(asset_ids):
        for j, (old, new) in enumerate(((None, "pending"), ("pending", state))):
            body = {"Keys": typed({"asset_id": asset_id}), "SequenceNumber": f"{seq_from + 2 * i + j:08d}"}
            if old:
                body["OldImage"] = typed({"asset_id": asset_id, "state": old, "updated_at": T})
            body["NewImage"] = typed({"asset_id": asset_id, "state": new, "updated_at": T})
            records.append({"eventName": "MODIFY" if old else "INSERT", "eventSourceARN": "arn:s", "dynamodb": body})
    return records


@pytest.fixture
def sns(endpoint, localstack):
    """An SNS client on the emulator (the shared session's services leave SNS out: this test alone uses it)."""
    import boto3

    from infra.emulator import REGION

    return boto3.client(
        "sns", endpoint_url=endpoint, region_name=REGION, aws_access_key_id="test", aws_secret_access_key="test"
    )


@pytest.fixture
def topic_and_inbox(aws, sns):
    """An SNS topic and an SQS queue subscribed to it (the body is the message, or its SNS envelope)."""
    sqs = aws("sqs")
    name = f"notices-{uuid.uuid4().hex[:12]}"  # one of each per test: nothing left over from another
    topic = sns.create_topic(Name=name)["TopicArn"]
    inbox = sqs.create_queue(QueueName=name)["QueueUrl"]
    inbox_arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=inbox_arn)
    return topic, inbox


def received(sqs, inbox: str) -> list[str]:
    """Every message the inbox holds (the SNS envelope's Message when it is wrapped)."""
    found = []
    while True:
        batch = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if not batch:
            return found
        for message in batch:
            body = message["Body"]
            try:
                envelope = json.loads(body)
                body = envelope.get("Message", body) if isinstance(envelope, dict) else body
            except ValueError:
                pass
            found.append(body)
            sqs.delete_message(QueueUrl=inbox, ReceiptHandle=message["ReceiptHandle"])


def notifier(aws, sns, ledger: str, stats: str, topic: str, now: list[float], stall_after_s: float = 0.0) -> Notifier:
    dynamodb = aws("dynamodb")
    return Notifier(
        dynamodb=dynamodb,
        sns=sns,
        sqs=aws("sqs"),
        ledger_table=ledger,
        stats_table=stats,
        topic_arn=topic,
        stack="test-stack",
        stall_after_s=stall_after_s,
        hours=Hours("", ledger, dynamodb),
        clock=lambda: now[0],
    )


def test_the_done_notice_is_published_once_per_load(aws, sns, topic_and_inbox):
    dynamodb, sqs = aws("dynamodb"), aws("sqs")
    topic, inbox = topic_and_inbox
    ledger, stats = create_ledger_table(dynamodb), create_table_like(dynamodb, "StatsTable")
    now = [T]
    first, second = notifier(aws, sns, ledger, stats, topic, now), notifier(aws, sns, ledger, stats, topic, now)

    apply(dynamodb, stats, settled(["a", "b"], 1) + settled(["c"], 10, "failed"), T)
    assert first.run()["done"] == "told"
    assert second.run()["done"] == "none"  # an overlapping run: told already
    assert first.run()["done"] == "none"  # and the next scheduled one
    (message,) = received(sqs, inbox)
    summary = json.loads(message.rsplit("\n\n", 1)[1])
    assert (summary["total"], summary["ready"], summary["failed"], summary["remaining"]) == (3, 2, 1, 0)

    apply(dynamodb, stats, settled(["d", "e"], 100), T + 60)  # a second load: two more assets, settled
    assert second.run()["done"] == "told"
    assert first.run()["done"] == "none"
    (again,) = received(sqs, inbox)
    assert (
        "migration done, 5 assets (4 ready, 0 rejected, 1 failed)" in again
        or json.loads(again.rsplit("\n\n", 1)[1])["total"] == 5
    )


def test_a_stall_is_published_once_and_cleared_when_things_move(aws, sns, topic_and_inbox):
    dynamodb, sqs = aws("dynamodb"), aws("sqs")
    topic, inbox = topic_and_inbox
    ledger, stats = create_ledger_table(dynamodb), create_table_like(dynamodb, "StatsTable")
    records = settled(["a"], 1)[:1]  # inserted as pending, never moved
    apply(dynamodb, stats, records, T)
    now = [T]
    looker = notifier(aws, sns, ledger, stats, topic, now, stall_after_s=3600)
    assert looker.run()["stall"] == "moved"  # the counts noted
    now[0] = T + 1800
    assert looker.run()["stall"] == "none"  # half an hour: not yet
    now[0] = T + 3700
    assert looker.run()["stall"] == "told"
    assert looker.run()["stall"] == "none"  # once per episode
    (message,) = received(sqs, inbox)
    assert "Nothing has moved on stack test-stack" in message and "1 asset left" in message

    apply(dynamodb, stats, settled(["a"], 1)[1:], T + 3800)  # it moves: the episode ends
    now[0] = T + 3900
    assert looker.run() == {"done": "told", "stall": "moved"}
    assert "stall_told" in (item := dynamodb.get_item(TableName=ledger, Key=typed({"asset_id": "#notices"}))["Item"])
    assert item["stall_told"] == {"BOOL": False}


def test_a_notice_that_could_not_be_published_is_told_by_the_next_run(aws, sns, topic_and_inbox):
    dynamodb, sqs = aws("dynamodb"), aws("sqs")
    topic, inbox = topic_and_inbox
    ledger, stats = create_ledger_table(dynamodb), create_table_like(dynamodb, "StatsTable")
    apply(dynamodb, stats, settled(["a"], 1), T)
    now = [T]
    broken = notifier(aws, sns, ledger, stats, topic + "-gone", now)  # a topic that does not exist
    assert broken.run()["done"] == "publish failed; the next run tries again"
    assert notifier(aws, sns, ledger, stats, topic, now).run()["done"] == "told"
    assert len(received(sqs, inbox)) == 1
