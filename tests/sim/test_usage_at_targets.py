"""Usage outlives the source (issue 45): a target with a free key-value map holds the source's plays, views and last
play beside the row's own metadata (providers/fidelity.py `with_usage`), never over a key the row set itself. What is
asserted is what each target's simulator holds of the create (the conformance pattern: tests/conformance)."""

from __future__ import annotations

import pytest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef
from migrator.usage import Usage

from tests.conformance.providers import provider_on_sim

USAGE = Usage("2026-12-06T12:00:00Z", "kaltura entry plays", plays=42, views=99, last_played_at="2026-01-02T03:04:05Z")
ASSET = "kaltura/0_usage01"


def free_map_of(name: str, request: dict) -> dict:
    """The free map each target keeps, as its simulator holds the create."""
    if name == "apivideo":  # metadata: [{key, value}], text only (oas_apivideo.yaml)
        return {pair["key"]: pair["value"] for pair in request["metadata"]}
    if name == "jwplayer":  # metadata.custom_params, text values
        return request["metadata"]["custom_params"]
    if name == "cloudflare":  # meta, "a user modifiable key-value store"
        return request["meta"]
    return request["metadata"]  # generic: metadata, a free map


@pytest.mark.parametrize("name", ["apivideo", "jwplayer", "cloudflare", "generic"])
def test_the_target_holds_the_source_usage_beside_the_rows_metadata(name, launch, origin):
    sim, provider = provider_on_sim(name, launch)
    source = f"{origin.url}/ok.mp4?duration=12"
    own = {"source_views": "the row's own"}
    row = AssetMessage(ASSET, source, title="Watched", privacy="public", metadata=own, usage=USAGE)
    made = provider.create(AssetRef(ASSET, row.title, 0, row), source)
    assert made.remote_id, f"{name}: create answered {made}"
    held = free_map_of(name, sim._store.videos[made.remote_id].request)
    text = name in ("apivideo", "jwplayer")  # their maps hold text
    assert held["source_plays"] == ("42" if text else 42)
    assert held["source_last_played_at"] == "2026-01-02T03:04:05Z"
    assert held["source_views"] == "the row's own"  # the row's key wins over the usage's
    plain = AssetMessage("kaltura/0_usage02", source, title="Unread", privacy="public")
    other = provider.create(AssetRef(plain.asset_id, plain.title, 0, plain), source)
    assert not {"source_plays", "source_views", "source_last_played_at"} & set(
        free_map_of(name, sim._store.videos[other.remote_id].request)
    )
