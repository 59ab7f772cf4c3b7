"""End-to-end: template.yaml deployed on the emulator, driven through its real queue.

One stack per test session: the local-stack command builds and deploys the very
template users deploy, with the provider simulator (a real HTTP server in this
process) as the provider and the token in the emulator's Secrets Manager.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.conftest import ROOT, unique

TOKEN = "e2e-provider-token"
WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"e2e-webhook-signing-key!").decode()
SOURCE_BUCKET = "e2e-source-masters"  # the stack's SourceBucketName: s3:// sources must live here


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


def deploy_stack(endpoint, aws, sim, outputs_path, acct, **extra):
    """Deploy template.yaml pointing at `sim` with `acct`'s provider and secrets; returns (name, outputs)."""
    from infra.toolchain import tool

    secret_name, webhook_secret_name = unique("provider-token"), unique("webhook-secret")
    aws("secretsmanager").create_secret(Name=secret_name, SecretString=acct.credentials)
    aws("secretsmanager").create_secret(Name=webhook_secret_name, SecretString=acct.webhook_secret_json)
    name = unique("e2e")
    params = {
        "Provider": acct.provider,
        "ProviderBaseUrl": sim.url,
        "ProviderTokenSecretName": secret_name,
        "ProviderRateLimit": "50",
        "MaximumConcurrency": "3",
        "UploaderTimeout": "60",
        "MaxAttempts": "3",
        "WebhookScheme": acct.webhook_scheme,
        "WebhookSecretName": webhook_secret_name,
        "SourceBucketName": SOURCE_BUCKET,
        "AlarmEmail": "migration-ops@example.com",
        **extra,
    }
    command = [tool("sam", "python"), "-m", "infra.stack", "up", "--endpoint", endpoint, "--stack-name", name]
    command += ["--outputs", str(outputs_path)]
    for key, value in params.items():
        command += ["--param", f"{key}={value}"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return name, json.loads(outputs_path.read_text())


def delete_stack(endpoint, name):
    from infra.toolchain import tool

    subprocess.run(
        [tool("sam", "python"), "-m", "infra.stack", "down", "--endpoint", endpoint, "--stack-name", name],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )


class ProviderStack:
    """template.yaml deployed with `Provider=<name>` against a simulator speaking that provider's API."""

    def __init__(self, name, outputs, sim, acct, outputs_path):
        self.name, self.outputs, self.sim, self.acct, self.outputs_path = name, outputs, sim, acct, outputs_path

    def client(self):
        """Our own adapter for this provider, pointed at the simulator: a client of its API."""
        from migrator.providers import build

        return build(self.name, self.sim.url, lambda: self.acct.credentials)


@contextmanager
def provider_stack(name, endpoint, aws, tmp_path_factory, **params) -> Iterator[ProviderStack]:
    """A fresh simulator speaking `name`'s API with a made-up account, and the stack deployed against it
    with `params` (template parameters), its webhook pointed at the stack; both gone afterwards."""
    from infra.accounts import account
    from infra.provider_sim import ProviderSim, SimConfig

    acct = account(name)
    sim = ProviderSim(SimConfig(port=0, profile=name, rate=0, processing_delay_s=0.3, **acct.sim)).start()
    outputs_path = tmp_path_factory.mktemp(name) / "outputs.json"
    try:
        stack_name, outputs = deploy_stack(endpoint, aws, sim, outputs_path, acct, **params)
        sim.patch_config({"webhook_url": outputs["WebhookUrl"], "webhook_secret": acct.webhook_secret})
        yield ProviderStack(name, outputs, sim, acct, outputs_path)
        delete_stack(endpoint, stack_name)
    finally:
        sim.stop()


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
