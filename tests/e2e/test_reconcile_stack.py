"""The deployed reconcile Lambda, run on demand through the CLI: lost messages, lost webhooks, drift, races."""

from __future__ import annotations

import json
import threading
import time

import pytest
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage

from tests.conftest import unique
from tests.e2e.conftest import wait_for_states
from tests.e2e.test_uploader_stack import asset, send_all

pytestmark = pytest.mark.e2e


def creates_for(sim, asset_id: str) -> int:
    """Videos the provider made for this asset (201s; an idempotent replay answers 200)."""
    return sum(1 for r in sim.requests_log() if r["ref"] == asset_id and r["status"] == 201)


def claim_as_a_dead_worker(ledger: Ledger, asset_id: str, claimed_ago_s: float, lease_left_s: float) -> Claimed:
    """What a worker leaves behind when it claims, then dies with its message deleted."""
    now = time.time()
    msg = AssetMessage(asset_id, f"https://media.example.com/{asset_id}.mp4?duration=12")
    result = ledger.claim(msg, now - claimed_ago_s, now + lease_left_s, unique("token"))
    assert isinstance(result, Claimed)
    return result


def test_a_lost_message_is_healed_once_and_its_asset_reaches_ready(stack, aws, live_sim, migrator):
    ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
    lost = unique("lost")
    claim_as_a_dead_worker(ledger, lost, claimed_ago_s=900, lease_left_s=-600)

    code, out, err = migrator("reconcile", "--heal-after", "300", "--json")

    assert code == 0, err
    assert json.loads(out)["healed"] >= 1
    item = wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [lost], {"ready"}, timeout_s=60)[lost]
    assert item["heals"] == "1"
    assert creates_for(live_sim, lost) == 1
    assert live_sim.stats()["duplicate_videos"] == 0


def test_two_reconcile_runs_at_once_never_double_enqueue(stack, aws, live_sim, endpoint):
    ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
    ids = [unique("race") for _ in range(10)]
    for asset_id in ids:
        claim_as_a_dead_worker(ledger, asset_id, claimed_ago_s=900, lease_left_s=-600)
    summaries: list[dict] = []
    barrier = threading.Barrier(2)

    def invoke():
        from infra.emulator import client

        lam = client("lambda", endpoint)
        barrier.wait()
        resp = lam.invoke(FunctionName=stack["ReconcileFunctionName"], Payload=json.dumps({"heal_after_s": 300}))
        summaries.append(json.loads(resp["Payload"].read()))

    threads = [threading.Thread(target=invoke) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert all("healed" in s for s in summaries), summaries
    items = wait_for_states(aws("dynamodb"), stack["LedgerTableName"], ids, {"ready"}, timeout_s=90)
    assert all(items[i]["heals"] == "1" for i in ids)  # one marker each: one enqueue each
    assert all(creates_for(live_sim, i) == 1 for i in ids)


def test_reconcile_never_steals_a_live_lease(stack, aws, live_sim, migrator):
    ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
    busy = unique("busy")
    held = claim_as_a_dead_worker(ledger, busy, claimed_ago_s=900, lease_left_s=600)  # alive, just slow

    code, _, err = migrator("reconcile", "--heal-after", "300")

    assert code == 0, err
    item = ledger.get(busy)
    assert item["state"] == "uploading" and item["lease_token"] == held.token and "heals" not in item
    assert creates_for(live_sim, busy) == 0


def test_a_lost_webhook_is_recovered_by_polling(stack, aws, live_sim, migrator):
    live_sim.patch_config({"webhooks_enabled": False})
    silent = unique("silent")
    send_all(aws("sqs"), stack["QueueUrl"], [asset(silent, "https://media.example.com/s.mp4?duration=30")])
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [silent], {"processing"}, timeout_s=60)
    time.sleep(0.5)  # the provider finishes, and its webhook never comes
    assert Ledger(stack["LedgerTableName"], aws("dynamodb")).get(silent)["state"] == "processing"

    code, out, err = migrator("reconcile", "--poll-after", "0", "--json")

    assert code == 0, err
    assert json.loads(out)["settled_ready"] >= 1
    item = Ledger(stack["LedgerTableName"], aws("dynamodb")).get(silent)
    assert item["state"] == "ready" and float(item["provider_duration_s"]) == 30.0


def test_duration_drift_over_the_tolerance_is_flagged_and_reported(stack, aws, live_sim, migrator):
    run = unique("drift")
    big, small = f"{run}/2s", f"{run}/0.2s"
    bodies = [
        json.dumps({"id": big, "source_url": "https://media.example.com/a.mp4?duration=20&drift=2", "duration_s": 20}),
        json.dumps(
            {"id": small, "source_url": "https://media.example.com/b.mp4?duration=20&drift=0.2", "duration_s": 20}
        ),
    ]
    send_all(aws("sqs"), stack["QueueUrl"], bodies)
    items = wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [big, small], {"ready"}, timeout_s=60)
    deadline = time.time() + 10  # the flag is written just after the settle
    while "drift_s" not in items[big] and time.time() < deadline:
        time.sleep(0.3)
        items[big] = Ledger(stack["LedgerTableName"], aws("dynamodb")).get(big)

    assert float(items[big]["drift_s"]) == 2.0
    assert "drift_s" not in Ledger(stack["LedgerTableName"], aws("dynamodb")).get(small)
    code, out, err = migrator("report", "--drift", "--format", "jsonl")
    assert code == 0, err
    flagged = {row["id"]: row for row in map(json.loads, out.splitlines())}
    assert big in flagged and small not in flagged
    assert flagged[big]["drift_s"] == 2.0 and flagged[big]["provider_duration_s"] == 22.0
