"""Every real provider end to end: template.yaml deployed with `Provider=<p>` against the simulator
speaking that provider's API, and driven through the real queue, the real webhook route and the CLI.

For each of Mux, Cloudflare Stream and api.video:
- a batch migrates with lost create answers and a worker that crashed after its create,
  and the provider holds exactly one live video per asset;
- 429s carrying that provider's own headers are waited out;
- a forged, a stale and a replayed webhook in that provider's scheme move nothing;
- a webhook that never comes is made good by reconcile's poll;
- `migrator audit` reports no duplicate, then finds one planted behind its back.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime

import pytest
import requests
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage
from migrator.providers import AssetRef
from migrator.signatures import Scheme, sign

from tests.conftest import unique
from tests.e2e.conftest import PROVIDERS, provider_stack, wait_for_states
from tests.e2e.test_uploader_stack import asset, send_all

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module", params=PROVIDERS)
def deployed(request, stacks, sources, track_files):
    with provider_stack(request.param, stacks, sources, track_files) as stack:
        yield stack


@pytest.fixture
def provider_sim(deployed):
    """The module's simulator with its faults off. Not reset between tests: its library must keep
    every video the ledger records, for the audit; tests compare its counters before and after."""
    deployed.sim.patch_config(
        {"rate": 0, "lose_rate": 0.0, "webhooks_enabled": True, "rate_headers": False, "processing_delay_s": 0.3}
    )
    return deployed.sim


def grown(sim, before: dict) -> dict:
    """How much each of the simulator's counters grew since `before`."""
    return {k: v - before.get(k, 0) for k, v in sim.stats().items() if isinstance(v, int)}


def wait_at_provider(deployed, asset_id: str, remote_id: str, timeout_s: float = 10) -> None:
    """Until the provider itself says the video is ready (what a confirming webhook reads)."""
    client, deadline = deployed.client(), time.time() + timeout_s
    while time.time() < deadline:
        video = client.poll(asset_id, remote_id).video
        if video is not None and video.target is not None:
            return
        time.sleep(0.2)
    raise AssertionError(f"{remote_id} never finished processing at the simulator")


def test_a_batch_migrates_once_despite_lost_answers_and_a_crash_after_create(deployed, provider_sim, aws):
    ledger = Ledger(deployed.outputs["LedgerTableName"], aws("dynamodb"))
    run = unique(deployed.name)
    ids = [f"{run}/{i}" for i in range(12)]
    crashed = f"{run}/crashed"
    # The state a worker leaves when it dies between the provider's answer and its ledger write:
    # the video exists, the ledger says uploading under a lease that has run out.
    url = f"https://media.example.com/{crashed}.mp4?duration=9"
    made = deployed.client().create(AssetRef(crashed), url)
    assert made.remote_id, made
    past = time.time() - 600
    claim = ledger.claim(AssetMessage(crashed, url), past, past + 60, "dead-worker")
    assert isinstance(claim, Claimed)

    before = provider_sim.stats()
    provider_sim.patch_config({"lose_rate": 0.3, "seed": 11})  # a third of create answers never arrive
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [asset(i) for i in ids] + [asset(crashed, url)])
    items = wait_for_states(aws("dynamodb"), deployed.outputs["LedgerTableName"], [*ids, crashed], {"ready"}, 150)

    stats = grown(provider_sim, before)
    assert stats["lost_responses"] > 0, "the fault did not happen: the test would prove nothing"
    assert provider_sim.stats()["duplicate_videos"] == 0
    assert stats["videos"] == len(ids)  # and the crashed worker's, made before `before`
    assert items[crashed]["remote_id"] == made.remote_id  # the crashed worker's video was found, not made again


def test_429s_with_the_providers_own_headers_are_waited_out(deployed, provider_sim, aws):
    before = provider_sim.stats()
    # The account's other clients take the bucket's next two tokens: the fleet meets 429s however slowly a
    # loaded machine sends (the pacer reads the headers and paces at 98 % of 2/s: alone it may never meet one).
    provider_sim.patch_config({"rate": 2.0, "burst": 1, "rate_headers": True, "others_take": 2})
    run = unique(deployed.name)
    ids = [f"{run}/{i}" for i in range(6)]
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [asset(i) for i in ids])
    items = wait_for_states(aws("dynamodb"), deployed.outputs["LedgerTableName"], ids, {"ready"}, 120)
    stats = grown(provider_sim, before)
    assert stats["throttled"] >= 2, "the others took two tokens: two 429s at least"
    assert provider_sim.stats()["duplicate_videos"] == 0 and stats["videos"] == len(ids)
    assert sum(int(item.get("throttles", 0)) for item in items.values()) >= 1
    assert all(int(item["attempts"]) <= 1 for item in items.values())  # a 429 never spends the budget


def _event(provider: str, asset_id: str, remote_id: str, now: float) -> bytes:
    """A genuine ready event in the provider's own shape (docs/providers.md)."""
    if provider == "mux":
        data = {"id": remote_id, "passthrough": asset_id, "status": "ready", "duration": 9.0}
        doc = {"type": "video.asset.ready", "id": str(uuid.uuid4()), "object": {"type": "asset", "id": remote_id}}
        doc["data"] = data
    elif provider == "cloudflare":
        doc = {
            "uid": remote_id,
            "meta": {"migration_ref": asset_id},
            "status": {"state": "ready", "pctComplete": "100.000000", "errorReasonCode": "", "errorReasonText": ""},
            "readyToStream": True,
            "duration": 9.0,
            "modified": datetime.fromtimestamp(now, UTC).isoformat(),
        }
    else:
        emitted = datetime.fromtimestamp(now, UTC).isoformat().replace("+00:00", "Z")
        doc = {"type": "video.encoding.quality.completed", "emittedAt": emitted, "videoId": remote_id}
        doc |= {"encoding": "hls", "quality": "720p"}
    return json.dumps(doc, separators=(",", ":")).encode()


def test_forged_stale_and_replayed_webhooks_move_nothing(deployed, provider_sim, aws):
    provider_sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 0.2})
    asset_id = unique(f"{deployed.name}/hook")
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [asset(asset_id)])
    table = deployed.outputs["LedgerTableName"]
    item = wait_for_states(aws("dynamodb"), table, [asset_id], {"processing"}, 60)[asset_id]
    wait_at_provider(deployed, asset_id, item["remote_id"])  # api.video's event is confirmed by reading it
    scheme, url, now = Scheme(deployed.name), deployed.outputs["WebhookUrl"], time.time()
    body = _event(deployed.name, asset_id, item["remote_id"], now)

    def post(payload: bytes, secret: str, at: float):
        headers = {"Content-Type": "application/json", **sign(scheme, payload, secret, at)}
        return requests.post(url, data=payload, headers=headers, timeout=10)

    assert post(body, "not-the-secret", now).status_code == 401  # forged
    # Replayed an hour later; api.video signs no time and retries late, so its bound is its events'
    # memory (the body's emittedAt within 14 days; a copy inside them is refused as a duplicate).
    late = 15 * 86_400 if deployed.name == "apivideo" else 3600
    stale = _event(deployed.name, asset_id, item["remote_id"], now - late)
    assert post(stale, deployed.acct.webhook_secret, now - late).status_code == 401
    assert wait_for_states(aws("dynamodb"), table, [asset_id], {"processing"}, 5)[asset_id]["state"] == "processing"

    first = post(body, deployed.acct.webhook_secret, now)
    assert first.status_code == 200 and first.json()["result"] == "ready", first.text
    again = post(body, deployed.acct.webhook_secret, now)  # the same delivery, replayed at once
    assert again.status_code == 200 and again.json()["result"] in ("duplicate", "not applied")
    final = wait_for_states(aws("dynamodb"), table, [asset_id], {"ready"}, 5)[asset_id]
    assert final["remote_id"] == item["remote_id"]


def test_a_webhook_that_never_comes_is_settled_by_reconciles_poll(deployed, provider_sim, aws, cli):
    provider_sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 0.2})
    ids = [unique(f"{deployed.name}/quiet") for _ in range(3)]
    send_all(
        aws("sqs"), deployed.outputs["QueueUrl"], [asset(i, f"https://m.example.com/{i}.mp4?duration=7") for i in ids]
    )
    table = deployed.outputs["LedgerTableName"]
    for asset_id, item in wait_for_states(aws("dynamodb"), table, ids, {"processing"}, 60).items():
        wait_at_provider(deployed, asset_id, item["remote_id"])
    code, out, err = cli("reconcile", "--poll-after", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["settled_ready"] >= len(ids)
    items = wait_for_states(aws("dynamodb"), table, ids, {"ready"}, 10)
    assert {float(item["provider_duration_s"]) for item in items.values()} == {7.0}


def test_audit_finds_no_duplicate_then_the_one_planted(deployed, provider_sim, aws, cli):
    asset_id = unique(f"{deployed.name}/audited")
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [asset(asset_id)])
    wait_for_states(aws("dynamodb"), deployed.outputs["LedgerTableName"], [asset_id], {"ready"}, 60)
    code, out, err = cli("audit", "--json")
    report = json.loads(out)
    assert code == 0 and report["duplicates"] == 0 and report["ok"], out + err

    deployed.client().create(AssetRef(asset_id), "https://media.example.com/again.mp4")  # behind our back
    time.sleep(0.5)
    code, out, err = cli("audit", "--json")
    report = json.loads(out)
    assert code == 1 and report["duplicates"] == 1, out + err
    [finding] = [f for f in report["findings"] if f["kind"] == "duplicate"]
    assert finding["asset_id"] == asset_id and len(finding["remote_ids"]) == 2
