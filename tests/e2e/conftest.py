"""End-to-end: template.yaml deployed on the emulator, driven through its real queue.

One stack per test session: the local-stack command builds and deploys the very
template users deploy, with the provider simulator (a real HTTP server in this
process) as the provider and the token in the emulator's Secrets Manager.
"""

from __future__ import annotations

import json

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
    provider_stack,
    wait_for_states,
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


def queue_depth(sqs, url: str) -> int:
    attrs = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


# The source pairs' fixtures (targets, migrate), for every module that migrates from a platform.
from tests.e2e.source_pairs import migrate, targets  # noqa: E402, F401
