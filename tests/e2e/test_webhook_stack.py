"""The deployed webhook: the simulator's signed callbacks through the real HTTP API route."""

from __future__ import annotations

import json
import time

import pytest
import requests
from migrator.signatures import Scheme, sign

from tests.conftest import unique
from tests.e2e.conftest import WEBHOOK_SECRET, generic_account, wait_for_states
from tests.e2e.test_uploader_stack import asset, send_all

pytestmark = pytest.mark.e2e


@pytest.fixture
def webhook_sim(e2e_sim):
    e2e_sim.reset()
    e2e_sim.patch_config({"rate": 0, "fail_rate": 0.0, "webhooks_enabled": True, "processing_delay_s": 0.3})
    return e2e_sim


def post(url: str, doc: dict, secret: str = WEBHOOK_SECRET, event_id: str = "msg_x", now: float | None = None):
    body = json.dumps(doc).encode()
    headers = {**sign(Scheme.STANDARD, body, secret, now or time.time(), event_id), "content-type": "application/json"}
    return requests.post(url, data=body, headers=headers, timeout=10)


def test_signed_webhooks_carry_assets_to_ready_or_rejected(stack, aws, webhook_sim):
    run = unique("wh")
    good = [f"{run}/{i}" for i in range(6)]
    corrupt = f"{run}/corrupt"
    bodies = [asset(i, f"https://media.example.com/{i}.mp4?duration=42.25") for i in good]
    bodies.append(asset(corrupt, "https://media.example.com/corrupt.mp4"))
    send_all(aws("sqs"), stack["QueueUrl"], bodies)
    table = stack["LedgerTableName"]
    items = wait_for_states(aws("dynamodb"), table, good, {"ready"}, timeout_s=90)
    assert all(float(items[i]["provider_duration_s"]) == 42.25 for i in good)
    rejected = wait_for_states(aws("dynamodb"), table, [corrupt], {"rejected"}, timeout_s=60)
    assert "could not be ingested" in rejected[corrupt]["last_error"]
    assert webhook_sim.stats()["webhooks_delivered"] >= len(good) + 1


def test_forged_replayed_and_out_of_order_deliveries(stack, aws, webhook_sim):
    run = unique("wh2")
    send_all(aws("sqs"), stack["QueueUrl"], [asset(f"{run}/a")])
    table = stack["LedgerTableName"]
    item = wait_for_states(aws("dynamodb"), table, [f"{run}/a"], {"ready"}, timeout_s=60)[f"{run}/a"]
    url = stack["WebhookUrl"]
    errored = {
        "type": "video.errored",
        "data": {"id": item["remote_id"], "error": {"message": "late"}, "metadata": {"migration_ref": f"{run}/a"}},
    }

    forged = post(url, errored, secret="whsec_" + "QUJDREVGR0hJSktMTU5PUA==")
    assert forged.status_code == 401
    stale = post(url, errored, now=time.time() - 3600)
    assert stale.status_code == 401
    late = post(url, errored, event_id=unique("msg"))  # genuine, but out of order
    assert late.status_code == 200
    replay_id = unique("msg")
    assert post(url, errored, event_id=replay_id).status_code == 200
    replay = post(url, errored, event_id=replay_id)
    # Acknowledged, and not acted on: the asset is terminal, so neither delivery moved it (an event
    # that moves nothing is not recorded as seen, and its replay is refused by the ledger again).
    assert replay.status_code == 200 and replay.json()["result"] == "not applied"
    not_json = requests.post(
        url, data=b"{oops", headers=sign(Scheme.STANDARD, b"{oops", WEBHOOK_SECRET, time.time(), "m"), timeout=10
    )
    assert not_json.status_code == 400
    final = wait_for_states(aws("dynamodb"), table, [f"{run}/a"], {"ready"}, timeout_s=5)[f"{run}/a"]
    assert final["state"] == "ready"  # nothing above moved it back


SEED_SECRET = "seed-scheme-signing-secret"


@pytest.fixture
def seed_stack(endpoint, aws, e2e_sim, tmp_path):
    """A second deployment of the same template, with the seed's x-signature scheme."""
    from tests.e2e.conftest import delete_stack, deploy_stack

    name, outputs = deploy_stack(
        endpoint, aws, e2e_sim, tmp_path / "seed-outputs.json", generic_account("seed", SEED_SECRET)
    )
    saved = {k: e2e_sim.config.to_dict()[k] for k in ("webhook_url", "webhook_secret", "webhook_scheme")}
    e2e_sim.reset()
    e2e_sim.patch_config(
        {"webhook_url": outputs["WebhookUrl"], "webhook_secret": SEED_SECRET, "webhook_scheme": "seed", "rate": 0}
    )
    e2e_sim.patch_config({"webhooks_enabled": True, "processing_delay_s": 0.3})
    yield outputs
    e2e_sim.patch_config(saved)
    delete_stack(endpoint, name)


def test_seed_scheme_end_to_end(seed_stack, aws):
    run = unique("seed")
    send_all(aws("sqs"), seed_stack["QueueUrl"], [asset(f"{run}/a", "https://media.example.com/a.mp4?duration=7.5")])
    item = wait_for_states(aws("dynamodb"), seed_stack["LedgerTableName"], [f"{run}/a"], {"ready"}, 60)[f"{run}/a"]
    assert float(item["provider_duration_s"]) == 7.5
    body = json.dumps({"type": "video.ready", "data": {"id": "v", "metadata": {"migration_ref": f"{run}/a"}}}).encode()
    forged = requests.post(seed_stack["WebhookUrl"], data=body, headers={"x-signature": "00" * 32}, timeout=10)
    assert forged.status_code == 401
    signed = sign(Scheme.SEED, body, SEED_SECRET, time.time())
    assert requests.post(seed_stack["WebhookUrl"], data=body, headers=signed, timeout=10).status_code == 200
