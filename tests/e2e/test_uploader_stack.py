"""The deployed stack: SQS really invoking the uploader, the uploader really calling the provider."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import unique
from tests.e2e.conftest import queue_depth, wait_for_states

pytestmark = pytest.mark.e2e
AT_PROVIDER = {"processing", "ready"}


def send_all(sqs, url: str, bodies: list[str]) -> None:
    for start in range(0, len(bodies), 10):
        entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies[start : start + 10])]
        resp = sqs.send_message_batch(QueueUrl=url, Entries=entries)
        assert not resp.get("Failed")


def asset(asset_id: str, url: str | None = None) -> str:
    return json.dumps({"id": asset_id, "source_url": url or f"https://media.example.com/{asset_id}.mp4"})


@pytest.fixture
def fresh_sim(e2e_sim):
    e2e_sim.reset()
    e2e_sim.patch_config(
        {"rate": 0, "burst": 20, "fail_rate": 0.0, "honour_idempotency": False, "webhooks_enabled": False}
    )
    return e2e_sim


def test_every_asset_reaches_the_provider_once_and_poison_does_not_block(stack, aws, fresh_sim):
    sqs, dynamodb = aws("sqs"), aws("dynamodb")
    run = unique("run")
    ids = [f"{run}/{i:03d}" for i in range(40)]
    bad_source = f"{run}/unsupported"
    bodies = [asset(i) for i in ids]
    bodies += [asset(ids[0]), asset(ids[1])]  # duplicate deliveries
    bodies += [asset(bad_source, "https://media.example.com/unsupported.mp4")]
    bodies += ["{not json", json.dumps({"id": f"{run}/ftp", "source_url": "ftp://old.example/x.mp4"})]
    send_all(sqs, stack["QueueUrl"], bodies)

    items = wait_for_states(dynamodb, stack["LedgerTableName"], ids, AT_PROVIDER, timeout_s=90)
    assert all(item["remote_id"].startswith("vid_") for item in items.values())
    assert len({item["remote_id"] for item in items.values()}) == len(ids)
    rejected = wait_for_states(dynamodb, stack["LedgerTableName"], [bad_source, f"{run}/ftp"], {"rejected"}, 30)
    assert "unsupported source" in rejected[bad_source]["last_error"]
    assert "scheme 'ftp'" in rejected[f"{run}/ftp"]["last_error"]

    stats = fresh_sim.stats()
    assert stats["videos"] == len(ids)  # exactly one video per asset, duplicates included
    assert stats["duplicate_videos"] == 0
    deadline = time.time() + 20
    while queue_depth(sqs, stack["QueueUrl"]) and time.time() < deadline:
        time.sleep(0.5)
    assert queue_depth(sqs, stack["QueueUrl"]) == 0  # poison was deleted, not left to block
    assert queue_depth(sqs, stack["DeadLetterQueueUrl"]) == 0  # nothing healthy in the DLQ


def test_throttled_assets_wait_out_retry_after_then_arrive(stack, aws, fresh_sim):
    # The stack paces at 50/s; the provider allows 2/s, so 429s really happen.
    fresh_sim.patch_config({"rate": 2, "burst": 2, "retry_after_mode": "seconds"})
    sqs, dynamodb = aws("sqs"), aws("dynamodb")
    run = unique("thr")
    ids = [f"{run}/{i:02d}" for i in range(12)]
    send_all(sqs, stack["QueueUrl"], [asset(i) for i in ids])
    items = wait_for_states(dynamodb, stack["LedgerTableName"], ids, AT_PROVIDER, timeout_s=120)

    log = [r for r in fresh_sim.requests_log() if r["ref"] in set(ids)]
    throttled = [r for r in log if r["status"] == 429]
    assert throttled, "the provider never throttled: the test proves nothing"
    for r in throttled:
        later = [x["t"] for x in log if x["ref"] == r["ref"] and x["t"] > r["t"]]
        assert later, f"{r['ref']} was throttled and never retried"
        assert min(later) >= r["t"] + r["retry_after_s"] - 0.05, f"{r['ref']} retried before its Retry-After"
    assert sum(int(items[i]["throttles"]) for i in ids) >= 1
    assert all(int(items[i]["attempts"]) == 1 for i in ids)  # throttles never spent an attempt
    assert fresh_sim.stats()["duplicate_videos"] == 0
