"""`migrator upgrade` against the real ledger table (emulator): items written the way a release before the due
lanes wrote them are filed in the lanes reconcile reads, get their lookup bound and the version, once; a run
that stops resumes from its checkpoint; `migrator doctor`'s check says when it is due and when it is done. An
old item the uploader claims before the upgrade reaches it is looked up from its earliest try all the same."""

from __future__ import annotations

import threading
import time

import pytest
from migrator.dynamo import typed
from migrator.fate import Outcome, OutcomeKind
from migrator.ledger import SCHEMA_VERSION, Claimed, Ledger
from migrator.ledger.upgrade import SCHEMA
from migrator.messages import AssetMessage
from migrator_cli.upgrade import Checkpoint, run_upgrade, schema_status

from tests.conftest import unique
from tests.emulator.conftest import create_ledger_table
from tests.emulator.test_resend_and_claims import RecordingProvider, record_for, uploader_with

pytestmark = pytest.mark.emulator


def old_item(asset_id: str, state: str, now: float, **fields) -> dict:
    """An item as the release before the due lanes wrote it: no due_lane, no lookup_from, no schema."""
    return {
        "asset_id": asset_id,
        "state": state,
        "state_shard": f"{state}#0",
        "source_url": f"https://media.example.com/{asset_id}.mp4",
        "attempts": 1,
        "throttles": 0,
        "created_at": now - 7200,
        "claimed_at": now - 600,
        "updated_at": now - 300,
        **fields,
    }


def test_old_items_are_brought_into_reconciles_lanes_once_and_doctor_says_so(aws, table, tmp_path):
    dynamodb, now = aws("dynamodb"), time.time()
    ledger = Ledger(table, dynamodb)
    run = unique("old")
    items = [
        old_item(f"{run}/crashed", "uploading", now, lease_token="dead", lease_until=now - 60),
        old_item(f"{run}/processing", "processing", now, remote_id="v1", processing_at=now - 900),
        old_item(f"{run}/deferred", "failed", now, retry_after=now - 30),
        old_item(f"{run}/done", "ready", now, remote_id="v2"),
    ] + [old_item(f"{run}/bulk{i:03d}", "processing", now, remote_id=f"b{i}") for i in range(40)]
    for item in items:
        dynamodb.put_item(TableName=table, Item=typed(item))
    ok, detail = schema_status(dynamodb, table)
    assert not ok and "written by an earlier release" in detail

    # Stopped after the first page, then resumed by the same command from its checkpoint.
    checkpoint_path = tmp_path / "upgrade.json"
    stop = threading.Event()
    checkpoint = Checkpoint(checkpoint_path)
    first = run_upgrade(ledger, checkpoint=checkpoint, rate=0, stop=stop, progress=lambda n: stop.set())
    assert first.interrupted and not first.done
    rest = run_upgrade(ledger, checkpoint=Checkpoint(checkpoint_path), rate=0)
    assert rest.done and first.upgraded + rest.upgraded == len(items)

    crashed = ledger.get(f"{run}/crashed")
    assert crashed["due_lane"].startswith("heal#") and float(crashed["due_at"]) == pytest.approx(now - 60)
    assert float(crashed["lookup_from"]) == pytest.approx(now - 7200)  # the earliest try, not the last claim
    assert ledger.get(f"{run}/processing")["due_lane"].startswith("poll#")
    assert ledger.get(f"{run}/deferred")["due_lane"].startswith("heal#")
    assert "due_lane" not in ledger.get(f"{run}/done") and int(ledger.get(f"{run}/done")["schema"]) == SCHEMA_VERSION
    # Reconcile reads its lanes: the crashed worker's asset is found there now.
    lane = crashed["due_lane"]
    found, _ = ledger.query_due(lane, now, 100)
    assert f"{run}/crashed" in {i["asset_id"] for i in found}

    again = run_upgrade(ledger, checkpoint=Checkpoint(tmp_path / "second.json"), rate=0)
    assert again.done and again.upgraded == 0 and again.read == 0  # idempotent: nothing below the version
    ok, detail = schema_status(dynamodb, table)
    assert ok and "migrator upgrade finished" in detail


def test_a_finished_checkpoint_of_another_ledger_does_not_pass_this_one_as_upgraded(aws, table, tmp_path):
    """The default checkpoint file, left by a finished upgrade of one stack's ledger, is read by the next
    stack's: it must not make that run read nothing, stamp the version and have doctor say all is done."""
    dynamodb, now = aws("dynamodb"), time.time()
    path = tmp_path / "migrator-upgrade.json"
    dynamodb.put_item(TableName=table, Item=typed(old_item(unique("first"), "processing", now, remote_id="v1")))
    assert run_upgrade(Ledger(table, dynamodb), checkpoint=Checkpoint(path), rate=0).done

    second = create_ledger_table(dynamodb)
    ids = [unique("second") for _ in range(3)]
    for asset_id in ids:
        dynamodb.put_item(TableName=second, Item=typed(old_item(asset_id, "processing", now, remote_id="v")))
    ledger = Ledger(second, dynamodb)
    result = run_upgrade(ledger, checkpoint=Checkpoint(path), rate=0)

    assert result.done and result.read == 3 and result.upgraded == 3
    assert f"finished upgrade of table {table}" in result.started_over
    assert all(int(ledger.get(asset_id)[SCHEMA]) == SCHEMA_VERSION for asset_id in ids)
    assert schema_status(dynamodb, second)[0]
    assert Checkpoint(path).run.table == second  # the file is this ledger's now


def test_an_item_that_moves_between_the_read_and_the_write_is_read_again(aws, table):
    dynamodb, now = aws("dynamodb"), time.time()
    ledger = Ledger(table, dynamodb)
    asset_id = unique("moving")
    seen = old_item(asset_id, "processing", now, remote_id="v1")
    dynamodb.put_item(TableName=table, Item=typed(seen))
    moved = {**seen, "state": "ready", "state_shard": "ready#0", "updated_at": now}
    dynamodb.put_item(TableName=table, Item=typed(moved))  # a webhook settled it after the read
    result = ledger.upgrade_item(seen, now)
    assert not result.won
    current = ledger.get(asset_id)
    assert current["state"] == "ready" and "due_lane" not in current  # the stale read wrote nothing


def test_an_item_a_claim_creates_is_at_this_release_and_an_old_one_it_claims_is_not(aws, table):
    """A message that reaches the uploader before intake has recorded it (one sent to the work queue by an
    earlier release, mid-upgrade) makes its item at the claim: that item is this release's. An item an
    earlier release wrote stays below the version when claimed, so `migrator upgrade` still fills it in."""
    dynamodb, now = aws("dynamodb"), time.time()
    ledger = Ledger(table, dynamodb)
    run = unique("claimed")
    made = ledger.claim(AssetMessage(f"{run}/new", "https://media.example.com/new.mp4"), now, now + 60, "t1")
    assert isinstance(made, Claimed) and made.previous is None
    assert int(ledger.get(f"{run}/new")[SCHEMA]) == SCHEMA_VERSION

    dynamodb.put_item(TableName=table, Item=typed(old_item(f"{run}/old", "pending", now)))
    old = AssetMessage(f"{run}/old", "https://media.example.com/old.mp4")
    assert isinstance(ledger.claim(old, now, now + 60, "t2"), Claimed)
    assert SCHEMA not in ledger.get(f"{run}/old")


class VideoFromAnEarlierRelease(RecordingProvider):
    """The earlier release's try made a video at `made_at` and its answer was lost; this release's first
    lookup is throttled. A lookup finds the video only when it reaches back to `made_at`."""

    def __init__(self, made_at: float):
        super().__init__()
        self.made_at = made_at

    def create(self, asset, source_url):
        self.creates += 1
        return Outcome(OutcomeKind.CREATED, remote_id="vid-second")

    def find(self, asset_id, created_after):
        self.lookups += 1
        self.searched_from.append(created_after)
        if self.lookups == 1:
            return Outcome(OutcomeKind.THROTTLED, retry_after=1.0, error="lookup HTTP 429")
        if created_after is not None and created_after <= self.made_at:
            return Outcome(OutcomeKind.CREATED, remote_id="vid-first")
        return Outcome(OutcomeKind.NOT_FOUND)


def test_an_old_item_claimed_before_the_upgrade_is_looked_up_from_its_earliest_try(aws, table, queue, tmp_path):
    """Claimed by this release before `migrator upgrade` reached it, an item an earlier release wrote is
    looked up from its first record, not from this claim (which a throttled lookup would have fixed for good,
    and the second lookup missed the earlier video); the upgrade then writes that bound, not the claim's."""
    now = [time.time()]
    first_record = now[0] - 7200
    provider = VideoFromAnEarlierRelease(made_at=now[0] - 3600)  # between its first record and its last claim
    uploader = uploader_with(aws, table, queue, provider, clock=lambda: now[0])
    asset_id = unique("old-claimed")
    item = old_item(asset_id, "failed", now[0], retry_after=now[0] - 30)
    aws("dynamodb").put_item(TableName=table, Item=typed(item))

    uploader.process(record_for(asset_id), deadline=now[0] + 60)  # this release's first claim: throttled lookup
    now[0] += 900
    fate = uploader.process(record_for(asset_id), deadline=now[0] + 60)

    assert provider.searched_from == [pytest.approx(first_record, abs=0.01)] * 2
    assert provider.creates == 0 and fate.kind.value == "finished"  # no second video
    assert uploader.ledger.get(asset_id)["remote_id"] == "vid-first"

    result = run_upgrade(uploader.ledger, checkpoint=Checkpoint(tmp_path / "upgrade.json"), rate=0)
    assert result.done
    upgraded = uploader.ledger.get(asset_id)
    assert float(upgraded["lookup_from"]) == pytest.approx(first_record, abs=0.01)  # not a claim's later time
