"""Fixtures for the simulator's profile and fault tests: a simulator factory, an HTTP session, a webhook endpoint.

Named apart from the fixtures test_provider_sim.py defines for itself (sim, http, receiver).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from infra.provider_sim import ProviderSim, SimConfig  # noqa: E402
from tests.sim.support import Hooks, Origin, wait_for  # noqa: E402


def _sim_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("provider-sim")}


@pytest.fixture
def launch():
    """launch(profile, **config) starts a simulator on a free port; all are stopped after the test."""
    before = _sim_threads()
    started: list[ProviderSim] = []

    def start(profile: str = "generic", **config) -> ProviderSim:
        # Unlimited unless a test says otherwise: no create bucket, and none of the profiles' documented
        # limits (Mux's 5 reads/s, Cloudflare's 1,200 calls per 5 minutes) that tests of other things would trip.
        config = {"port": 0, "processing_delay_s": 0.05, "rate": 0, "read_rate": 0, "budget_quota": 0, **config}
        sim = ProviderSim(SimConfig(profile=profile, **config)).start()
        started.append(sim)
        return sim

    yield start
    for sim in started:
        sim.stop()
    assert wait_for(lambda: not (_sim_threads() - before), timeout=3), _sim_threads() - before


@pytest.fixture
def web():
    # trust_env off: a *_proxy variable in the environment must not capture loopback traffic.
    session = requests.Session()
    session.trust_env = False
    yield session
    session.close()


@pytest.fixture
def hooks():
    endpoint = Hooks()
    yield endpoint
    endpoint.close()


@pytest.fixture
def origin():
    server = Origin()
    yield server
    server.close()
