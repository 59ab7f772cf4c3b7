"""End-to-end: template.yaml deployed on the emulator, driven through its real queue.

One stack per test session: the local-stack command builds and deploys the very
template users deploy, with the provider simulator (a real HTTP server in this
process) as the provider and the token in the emulator's Secrets Manager.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.e2e.stacks import (  # noqa: F401 - re-exported: the modules import them from here
    PROVIDERS,
    SOURCE_BUCKET,
    TOKEN,
    WEBHOOK_SECRET,
    Deployed,
    Stacks,
    delete,
    deploy,
)

# The names the modules have always used.
deploy_stack, delete_stack = deploy, delete


@pytest.fixture(scope="package")
def e2e_sim():
    from infra.provider_sim import ProviderSim, SimConfig

    simulator = ProviderSim(SimConfig(port=0, rate=0, token=TOKEN, processing_delay_s=0.3)).start()
    try:
        yield simulator
    finally:
        simulator.stop()


def generic_account(scheme: str, secret: str):
    """The generic provider's account the package simulator knows (TOKEN), signing with `secret`."""
    from infra.accounts import Account

    return Account("generic", json.dumps({"token": TOKEN}), {"token": TOKEN}, secret, scheme)


@pytest.fixture(scope="package")
def stacks(endpoint, aws, tmp_path_factory):
    """Every stack the package deploys, one per configuration, deleted at the end (see stacks.py)."""
    made = Stacks(endpoint, aws, tmp_path_factory.mktemp)
    yield made
    made.close()


@pytest.fixture(scope="package")
def track_files():
    """The caption files the tracks' rows name, served for the whole package (the provider stacks'
    TrackFetchTestOrigins is this server's one exact origin)."""
    from tests.track_files import SRT, VTT, FileServer, body, declared_huge

    with FileServer() as server:
        server.route("/en.srt", body(SRT))
        server.route("/fr.vtt", body(VTT))
        server.route("/big.vtt", declared_huge(3 * 1024 * 1024))
        server.route("/page.html", body(b"<!doctype html><html><body>Please sign in</body></html>"))
        yield server


@pytest.fixture(scope="package")
def sources():
    """One source simulator per platform, with its made-up account, for the whole package (their
    credentials are in every provider stack's source secret)."""
    from tests.e2e.sources import Sources

    running = Sources()
    yield running
    running.stop()


@pytest.fixture(scope="package")
def provider_stacks(stacks, sources, track_files):
    """provider_stacks(name): the shared stack of provider `name`, as the last module left it."""
    return lambda name: stacks.provider(name, sources, track_files)


@contextmanager
def provider_stack(name, stacks, sources, track_files) -> Iterator[Deployed]:
    """The shared stack of provider `name`, reset to a clean slate for the module that asks."""
    deployed = stacks.provider(name, sources, track_files)
    stacks.reset(deployed)
    yield deployed


@pytest.fixture
def cli(deployed, endpoint, capsys):
    """Run the CLI in-process against the module's `deployed` provider stack: (exit code, stdout, stderr)."""
    from migrator_cli.main import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main([*args, "--outputs", str(deployed.outputs_path), "--endpoint", endpoint])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="package")
def stack(endpoint, aws, e2e_sim, tmp_path_factory):
    """template.yaml deployed with Standard Webhooks; deleted afterwards."""
    outputs_path = tmp_path_factory.mktemp("stack") / "outputs.json"
    name, outputs = deploy_stack(endpoint, aws, e2e_sim, outputs_path, generic_account("standard", WEBHOOK_SECRET))
    e2e_sim.patch_config(
        {"webhook_url": outputs["WebhookUrl"], "webhook_secret": WEBHOOK_SECRET, "webhook_scheme": "standard"}
    )
    yield outputs
    delete_stack(endpoint, name)


@pytest.fixture
def outputs_file(stack, tmp_path):
    """The stack's outputs as a file, the way `infra/local-stack up --outputs` writes them."""
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(stack))
    return path


@pytest.fixture
def migrator(endpoint, outputs_file, capsys):
    """Run the CLI in-process against the stack: returns (exit code, stdout, stderr)."""
    from migrator_cli.main import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main([*args, "--outputs", str(outputs_file), "--endpoint", endpoint])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def live_sim(e2e_sim):
    """The package's simulator, reset: no rate limit, webhooks on, idempotency honoured."""
    e2e_sim.reset()
    e2e_sim.patch_config(
        {"rate": 0, "fail_rate": 0.0, "webhooks_enabled": True, "honour_idempotency": True, "processing_delay_s": 0.3}
    )
    yield e2e_sim
    e2e_sim.patch_config({"webhooks_enabled": True})


def wait_for_states(dynamodb, table: str, ids: list[str], done: set[str], timeout_s: float = 60) -> dict:
    """Poll the ledger until every id is in a `done` state; return {id: item}."""
    deadline = time.time() + timeout_s
    items: dict = {}
    while time.time() < deadline:
        pending = [i for i in ids if items.get(i, {}).get("state") not in done]
        if not pending:
            return items
        for start in range(0, len(pending), 100):
            keys = [{"asset_id": {"S": i}} for i in pending[start : start + 100]]
            resp = dynamodb.batch_get_item(RequestItems={table: {"Keys": keys, "ConsistentRead": True}})
            for raw in resp["Responses"].get(table, []):
                items[raw["asset_id"]["S"]] = {k: next(iter(v.values())) for k, v in raw.items()}
        time.sleep(0.5)
    missing = {i: items.get(i, {}).get("state") for i in ids if items.get(i, {}).get("state") not in done}
    raise AssertionError(f"{len(missing)} assets not done after {timeout_s:.0f} s: {dict(list(missing.items())[:10])}")


def queue_depth(sqs, url: str) -> int:
    attrs = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])
