"""Fake video platforms: a loopback HTTP server that the migration tool's tests, benchmarks and demo talk to.

It imitates the parts of a real platform that make a migration hard: rate limits with
every common retry hint, idempotency keys (honoured or not), duplicate conflicts,
injected latency, 5xx and lost answers, asynchronous processing and signed webhooks with
retries, duplicates and forgeries; and each platform's documented limits (Mux's create
and read rates, Cloudflare's per-user call budget with its block, its cap on videos in
progress, its storage and source fetch; api.video's hanging ingests; JW Player's budget
of every call). It speaks one platform's API (--profile): every target and every source
but the object stores (migrator.platforms; infra/sim/platforms has one profile each), as
a target, or as a source (--library-size N), whose links to files expire and whose
prepared files take time. Everything is standard library so it runs anywhere Python 3.12
does.

This file is the entry point and the stable import path; the code lives in infra/sim/.
Run `python infra/provider_sim.py --help` for the command line, or use ProviderSim
from tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script: make the repository root importable so infra.sim resolves.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from infra.sim import catalog
from infra.sim.cli import build_parser, main
from infra.sim.config import (
    DEFAULT_PORT,
    RETRY_AFTER_MODES,
    WEBHOOK_SCHEMES,
    ConfigError,
    SimConfig,
)
from infra.sim.core import STAT_KEYS, ProviderSim
from infra.sim.profile import WEBHOOK_BACKOFF_S
from infra.sim.scheduler import Scheduler
from infra.sim.signing import sign_seed, sign_standard, sign_timestamped, standard_key
from infra.sim.video import source_duration

PROFILES = catalog.names()  # every profile's name, as infra/sim/platforms registered them

__all__ = [
    "DEFAULT_PORT",
    "PROFILES",
    "RETRY_AFTER_MODES",
    "STAT_KEYS",
    "WEBHOOK_BACKOFF_S",
    "WEBHOOK_SCHEMES",
    "ConfigError",
    "ProviderSim",
    "Scheduler",
    "SimConfig",
    "build_parser",
    "main",
    "sign_seed",
    "sign_standard",
    "sign_timestamped",
    "source_duration",
    "standard_key",
]

if __name__ == "__main__":
    sys.exit(main())
