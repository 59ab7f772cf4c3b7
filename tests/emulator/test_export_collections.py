"""`migrator export --collections` against DynamoDB in the emulator: one scan of the ledger gives the assets the
filters ask for and every collection's own item, whatever its state, and the export splits them into the video map
and the collections map."""

from __future__ import annotations

import csv
import io
import time

import pytest
from migrator.ledger import CollectionSource, Ledger
from migrator.messages import AssetMessage
from migrator.states import State
from migrator.tracks import TrackMove, TrackState
from migrator_cli.export import export
from migrator_cli.report import scan_ledger

pytestmark = pytest.mark.emulator

NOW = time.time()


def ready(ledger: Ledger, asset_id: str, remote_id: str) -> None:
    ledger.claim(AssetMessage(asset_id, f"https://media.example.com/{remote_id}.mp4"), NOW - 100, NOW - 40, "tok")
    assert ledger.mark_processing(asset_id, "tok", remote_id, NOW - 90).won
    assert ledger.settle(asset_id, State.READY, remote_id, NOW - 80).won


def test_one_scan_gives_the_assets_and_every_collections_item(aws, table):
    dynamodb = aws("dynamodb")
    ledger = Ledger(table, dynamodb)
    ready(ledger, "lib/a", "vid-a")
    ledger.claim(AssetMessage("lib/b", "https://media.example.com/b.mp4"), NOW - 100, NOW - 40, "tok")  # queued
    dynamodb.put_item(TableName=table, Item={"asset_id": {"S": "#pacer"}, "rate": {"N": "5"}})  # a control item
    talks = CollectionSource("vimeo", "folders/7", "Talks", "folder")
    ledger.claim_collection("k-made", talks, "t1", NOW, NOW + 60)
    assert ledger.record_collection("k-made", "t1", "col-1", NOW).won
    ledger.claim_collection("k-pending", CollectionSource("vimeo", "albums/3", "Best of", "showcase"), "t2", NOW, NOW)
    failed = CollectionSource("vimeo", "folders/9", "Old", "folder")
    ledger.claim_collection("k-failed", failed, "t3", NOW, NOW + 60)
    assert ledger.release_collection(
        "k-failed", "t3", TrackMove(TrackState.FAILED, error="provider: HTTP 400"), NOW
    ).won

    plain = sorted(i["asset_id"] for i in scan_ledger(dynamodb, table, [State.READY]))
    assert plain == ["lib/a"]  # control and collection items are never assets
    both = sorted(i["asset_id"] for i in scan_ledger(dynamodb, table, [State.READY], with_collections=True))
    # The state filter is the assets': a failed collection is there all the same, a queued asset is not.
    assert both == ["#collection#k-failed", "#collection#k-made", "#collection#k-pending", "lib/a"]

    out, side = io.StringIO(), io.StringIO()
    summary = export(scan_ledger(dynamodb, table, with_collections=True), out, "csv", "bunny", collections_out=side)
    assert sorted(r["id"] for r in csv.DictReader(io.StringIO(out.getvalue()))) == ["lib/a", "lib/b"]
    rows = {r["key"]: r for r in csv.DictReader(io.StringIO(side.getvalue()))}
    assert (rows["k-made"]["name"], rows["k-made"]["remote_collection_id"], rows["k-made"]["state"]) == (
        "Talks",
        "col-1",
        "created",
    )
    assert rows["k-failed"]["note"] == "not made: provider: HTTP 400" and rows["k-pending"]["note"] == "not made yet"
    assert (summary.collections, summary.collections_made, summary.rows) == (3, 1, 2)
