"""Shared test set-up: import paths, the emulator and the provider simulator.

The emulator (ministack) is started once per session on a free 127.0.0.1 port, and
stopped at the end with every Lambda worker it spawned. Tests that only need pure
logic never start it. The tests reach it through pytest-localstack's RunningSession,
which waits for every service they use; set MIGRATOR_TEST_ENDPOINT to attach to an
emulator that already runs (ministack, or LocalStack).
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "functions"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# The modules that run longest (their time in the CI run of 59ed5d8, three workers), collected first: with
# `--dist loadfile --no-loadscope-reorder` (infra/test) each worker takes the next module in collection order,
# so these start at once. xdist's default order (most tests first) had started the one-test upgrade module
# last, and it ran its 470 s alone after every other module had finished.
LONGEST_FIRST = (
    "tests/e2e/test_upgrade_stack.py",  # 470 s
    "tests/e2e/test_mirror_stack.py",  # 320 s alone: two sources listed, a minute's schedule, a closed minute
    "tests/e2e/test_source_links_stack.py",  # 250 s
    "tests/e2e/test_sources_behave_stack.py",  # 250 s
    "tests/e2e/test_fidelity_stack.py",
    "tests/e2e/test_tracks_stack.py",
    "tests/e2e/test_cutover_stack.py",
    "tests/e2e/test_providers_stack.py",
)


# The test depths, one folder each; every test gets its folder's marker, so `-m unit` selects a depth.
DEPTHS = ("unit", "sim", "probe", "static", "template", "emulator", "e2e")


def pytest_collection_modifyitems(items: list) -> None:
    for item in items:
        parts = item.nodeid.split("/")
        if len(parts) > 2 and parts[0] == "tests" and parts[1] in DEPTHS:
            item.add_marker(parts[1])
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep order


os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "VideoMigrationTests")
os.environ.setdefault("POWERTOOLS_DEV", "false")


@pytest.fixture(scope="session")
def endpoint():
    """The emulator's endpoint URL, started for this session unless one is given."""
    given = os.environ.get("MIGRATOR_TEST_ENDPOINT")
    if given:
        yield given.rstrip("/")
        return
    from infra.emulator import Emulator, free_port

    # One emulator per pytest-xdist worker (gw0, gw1, ...), each with its own log.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    emulator = Emulator(port=free_port(), log_path=ROOT / ".local" / f"test-ministack-{worker}.log").start()
    try:
        yield emulator.endpoint
    finally:
        emulator.stop()


# The services the tests call; pytest-localstack waits until each of them answers.
SERVICES = ("dynamodb", "sqs", "s3", "secretsmanager", "ssm", "lambda", "cloudformation", "logs", "sns")


@pytest.fixture(scope="session")
def localstack(endpoint):
    """pytest-localstack's RunningSession on the emulator (ministack here, or the LocalStack
    MIGRATOR_TEST_ENDPOINT names): it checks every service answers, then makes the clients."""
    from urllib.parse import urlsplit

    from pytest_localstack.session import RunningSession

    from infra.emulator import REGION

    parts = urlsplit(endpoint)
    session = RunningSession(parts.hostname, services=dict.fromkeys(SERVICES, parts.port), region_name=REGION)
    session.start(timeout=60)
    return session


@pytest.fixture(scope="session")
def aws(localstack):
    """boto3 clients bound to the emulator: aws("dynamodb")."""
    cache: dict = {}

    def get(service: str):
        if service not in cache:
            cache[service] = localstack.boto3.client(service)
        return cache[service]

    return get


@pytest.fixture
def sim():
    """A fresh provider simulator on a free port; stopped after the test."""
    from infra.provider_sim import ProviderSim, SimConfig

    simulator = ProviderSim(SimConfig(port=0, rate=0, processing_delay_s=0.2)).start()
    try:
        yield simulator
    finally:
        simulator.stop()


@pytest.fixture(scope="session")
def azurite():
    """Azurite's blob service (infra/storage_emulators.py) on 127.0.0.1 and a free port, for the session."""
    from infra.storage_emulators import Azurite

    with Azurite() as emulator:
        yield emulator


@pytest.fixture(scope="session")
def gcs_emulator():
    """fake-gcs-server and a stand-in for Google's token endpoint (infra/storage_emulators.py), for the session."""
    from infra.storage_emulators import GcsEmulator

    emulator = GcsEmulator().start()
    yield emulator
    emulator.stop()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"
