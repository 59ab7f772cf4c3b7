"""Every registered platform meets its contract against its own simulator (tests/conformance): each target's
(create, find after a lost answer, poll, its own signed events, the audit's listing, tracks) and each source's
(pages, one video, resolve, tracks). Parametrized over the registry, so a new platform runs it without a line more;
the object stores, which run in their emulators instead of a simulator, are covered at the emulator depth."""

from __future__ import annotations

import pytest
from migrator.platforms import REFERENCED_SOURCES, TARGETS

from infra.storage_emulators import STORE_PLATFORMS
from tests.conformance.providers import check_provider
from tests.conformance.sources import check_source

SIMULATED_SOURCES = tuple(p for p in REFERENCED_SOURCES if p not in STORE_PLATFORMS)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> bytes:
    """A two-second video (for the aws target, whose simulator really transcodes)."""
    from tests.probe.media import make_media

    return make_media(tmp_path_factory.mktemp("conformance-media"))["video"].read_bytes()


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_meets_the_contract_on_its_simulator(name, launch, hooks, origin, request):
    check_provider(name, launch, hooks, origin, request.getfixturevalue("sample") if name == "aws" else None)


@pytest.mark.parametrize("name", SIMULATED_SOURCES)
def test_every_source_meets_the_contract_on_its_simulator(name, launch, web):
    check_source(name, launch, web)
