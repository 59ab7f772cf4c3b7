"""The ledger's conditional writes against DynamoDB in the emulator."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from migrator.fate import claim_eligible
from migrator.ledger import Claimed, Ledger, Refused
from migrator.messages import AssetMessage
from migrator.states import State

from tests.unit.test_fate import ITEMS, NOW

pytestmark = pytest.mark.emulator


def msg(asset_id: str = "asset-1", url: str = "https://media.example.com/a.mp4") -> AssetMessage:
    return AssetMessage(asset_id, url)


@pytest.fixture
def ledger(aws, table):
    return Ledger(table, aws("dynamodb"))


def test_first_message_creates_the_item_and_claims_it(ledger):
    claim = ledger.claim(msg(), NOW, NOW + 60, "tok")
    assert isinstance(claim, Claimed)
    assert claim.previous is None and claim.attempts == 1
    item = ledger.get("asset-1")
    assert item["state"] == "uploading"
    assert item["lease_token"] == "tok"
    assert item["source_url"] == "https://media.example.com/a.mp4"
    assert item["state_shard"].startswith("uploading#")
    assert int(item["attempts"]) == 1 and int(item["throttles"]) == 0


def test_twenty_concurrent_claimers_exactly_one_wins(ledger):
    barrier = threading.Barrier(20)
    results: list = []
    lock = threading.Lock()

    def contend(i: int):
        barrier.wait()
        result = ledger.claim(msg(), time.time(), time.time() + 60, f"tok-{i}")
        with lock:
            results.append(result)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if isinstance(r, Claimed)]
    losers = [r for r in results if isinstance(r, Refused)]
    assert len(winners) == 1 and len(losers) == 19
    # every loser learned the winner's lease from ALL_OLD, without a second read
    assert all(r.item["lease_token"] == winners[0].token for r in losers)
    assert int(ledger.get("asset-1")["attempts"]) == 1


def test_expired_claimant_cannot_write_over_its_successor(ledger):
    first = ledger.claim(msg(), NOW, NOW + 1, "old")
    assert isinstance(first, Claimed)
    assert isinstance(ledger.claim(msg(), NOW + 0.5, NOW + 60, "early"), Refused)  # lease still live
    second = ledger.claim(msg(), NOW + 2, NOW + 60, "new")
    assert isinstance(second, Claimed)
    assert second.previous["lease_token"] == "old" and second.attempts == 2

    late = ledger.mark_processing("asset-1", "old", "vid_old", NOW + 3)
    assert not late.won
    assert late.current["lease_token"] == "new"  # told who holds it, in the same call
    assert ledger.mark_processing("asset-1", "new", "vid_new", NOW + 3).won
    item = ledger.get("asset-1")
    assert item["state"] == "processing" and item["remote_id"] == "vid_new"
    assert "lease_token" not in item


def test_terminal_states_never_move_backward(ledger, aws, table):
    claim = ledger.claim(msg(), NOW, NOW + 60, "tok")
    # a webhook lands "ready" while the uploader still holds its lease
    aws("dynamodb").update_item(
        TableName=table,
        Key={"asset_id": {"S": "asset-1"}},
        UpdateExpression="SET #s = :ready REMOVE lease_token, lease_until",
        ExpressionAttributeNames={"#s": "state"},
        ExpressionAttributeValues={":ready": {"S": "ready"}},
    )
    for write in (
        lambda: ledger.mark_processing("asset-1", claim.token, "vid", NOW + 1),
        lambda: ledger.mark_failed("asset-1", claim.token, "HTTP 500", NOW + 10, NOW + 1),
        lambda: ledger.mark_rejected("asset-1", claim.token, "HTTP 400", NOW + 1),
        lambda: ledger.release_throttled("asset-1", claim.token, State.PENDING, NOW + 5, "HTTP 429", NOW + 1),
    ):
        assert not write().won
    assert isinstance(ledger.claim(msg(), NOW + 100, NOW + 160, "again"), Refused)
    assert ledger.get("asset-1")["state"] == "ready"


def test_throttle_release_counts_the_throttle_not_the_attempt(ledger):
    claim = ledger.claim(msg(), NOW, NOW + 60, "tok")
    assert ledger.release_throttled("asset-1", "tok", State.PENDING, NOW + 30, "HTTP 429", NOW + 1).won
    item = ledger.get("asset-1")
    assert item["state"] == "pending"
    assert int(item["attempts"]) == 0 and int(item["throttles"]) == 1
    assert float(item["retry_after"]) == pytest.approx(NOW + 30)
    # not claimable again before its retry time, claimable after
    assert isinstance(ledger.claim(msg(), NOW + 10, NOW + 70, "t2"), Refused)
    again = ledger.claim(msg(), NOW + 31, NOW + 90, "t3")
    assert isinstance(again, Claimed) and again.attempts == 1
    assert claim.token != again.token


def test_failed_for_good_is_not_claimable(ledger):
    ledger.claim(msg(), NOW, NOW + 60, "tok")
    assert ledger.mark_failed("asset-1", "tok", "HTTP 500", None, NOW + 1).won
    refused = ledger.claim(msg(), NOW + 10_000, NOW + 10_060, "t2")
    assert isinstance(refused, Refused) and refused.item["state"] == "failed"


@pytest.mark.parametrize("name", list(ITEMS))
def test_dynamodb_condition_agrees_with_the_pure_predicate(ledger, aws, table, name):
    item = ITEMS[name]
    asset_id = f"row-{uuid.uuid4().hex[:8]}"
    if item is not None:
        from migrator.dynamo import typed

        aws("dynamodb").put_item(
            TableName=table, Item=typed({"asset_id": asset_id, "source_url": "https://h/x", **item})
        )
    result = ledger.claim(msg(asset_id), NOW, NOW + 60, "tok")
    assert isinstance(result, Claimed) == claim_eligible(item, NOW)


def test_poison_is_recorded_without_undoing_good_work(ledger):
    assert ledger.record_poison("bad-1", "source_url scheme 'ftp' is not allowed", "ftp://x/y", NOW)
    item = ledger.get("bad-1")
    assert item["state"] == "rejected" and "ftp" in item["last_error"]
    ledger.claim(msg("good-1"), NOW, NOW + 60, "tok")
    ledger.mark_processing("good-1", "tok", "vid", NOW + 1)
    assert not ledger.record_poison("good-1", "unknown field(s): x", None, NOW + 2)
    item = ledger.get("good-1")
    assert item["state"] == "processing" and item["last_poison"] == "unknown field(s): x"


def test_state_index_lists_a_state_by_shard(ledger, aws, table):
    for i in range(12):
        ledger.claim(msg(f"idx-{i}"), NOW + i, NOW + 60, f"t{i}")
    from migrator.ledger import SHARDS, STATE_INDEX

    found = 0
    for shard in range(SHARDS):
        resp = aws("dynamodb").query(
            TableName=table,
            IndexName=STATE_INDEX,
            KeyConditionExpression="state_shard = :s",
            ExpressionAttributeValues={":s": {"S": f"uploading#{shard}"}},
        )
        found += resp["Count"]
    assert found == 12


def test_a_ready_asset_carries_no_error_from_an_earlier_hold(ledger):
    """A fast provider's ready webhook lands while the asset is still uploading after a hold."""
    first = ledger.claim(msg("fast"), NOW, NOW + 60, "tok-1")
    ledger.release_throttled("fast", first.token, State.PENDING, NOW + 5, "held: provider asked us to wait", NOW)
    assert ledger.get("fast")["last_error"].startswith("held")
    ledger.claim(msg("fast"), NOW + 6, NOW + 60, "tok-2")
    result = ledger.settle("fast", State.READY, "vid-1", NOW + 7, provider_duration_s=3.0)
    item = ledger.get("fast")
    assert result.won and item["state"] == "ready"
    assert "last_error" not in item
    assert int(item["throttles"]) == 1  # the history stays in the counters


def test_a_rejected_asset_keeps_the_providers_reason(ledger):
    ledger.claim(msg("bad"), NOW, NOW + 60, "tok")
    ledger.settle("bad", State.REJECTED, "vid-2", NOW + 1, error="provider: cannot decode")
    assert ledger.get("bad")["last_error"] == "provider: cannot decode"


def test_what_a_video_is_survives_the_ledger_and_comes_back_as_the_same_message(ledger):
    """Title, description, tags, privacy, poster, creation time, folder, size, tracks and options are
    kept with the asset, so a retry or a heal sends exactly what the inventory said."""
    import json

    from migrator.ledger import message_of
    from migrator.messages import parse_message

    from tests.unit.test_messages import FULL

    msg = parse_message(json.dumps({**FULL, "id": "full-1"}))
    now = time.time()
    assert isinstance(ledger.claim(msg, now, now + 60, "t"), Claimed)
    assert message_of(ledger.get("full-1")) == msg
    assert ledger.record_intake(parse_message(json.dumps({**FULL, "id": "full-2"})), now).new
    assert message_of(ledger.get("full-2")) == parse_message(json.dumps({**FULL, "id": "full-2"}))
