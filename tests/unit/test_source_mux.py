"""migrator.sources.mux reading one asset as a row (pure over Mux's asset object): the playback ids a site's embeds
name travel in the row's metadata, so `migrator rewrite` can find the asset by any of them."""

from __future__ import annotations

import pytest
from migrator.messages import AssetMessage
from migrator.sources import build
from migrator.sources.mux import PLAYBACK_IDS

pytestmark = pytest.mark.unit


def asset(*playback: tuple[str, str]) -> dict:
    """A ready asset as mux-python's Asset model shows it, with `playback` as (policy, id) pairs."""
    return {
        "id": "a1B2c3",
        "status": "ready",
        "created_at": "1700000000",
        "duration": 12.5,
        "playback_ids": [{"policy": policy, "id": pid} for policy, pid in playback],
    }


def row_of(found: dict) -> AssetMessage:
    source = build("mux", lambda: {"token_id": "i", "token_secret": "s"})
    row = source.entry(found, tracks=False)
    assert isinstance(row, AssetMessage)
    return row


def test_every_playback_id_of_every_policy_is_in_the_rows_metadata_in_the_assets_order():
    row = row_of(asset(("signed", "SiGnEd01"), ("public", "PuBlIc02"), ("drm", "DrM03")))
    assert row.metadata[PLAYBACK_IDS] == ["SiGnEd01", "PuBlIc02", "DrM03"]
    assert row.privacy == "public"


def test_an_asset_without_playback_ids_has_no_list_and_a_malformed_id_is_left_out():
    assert PLAYBACK_IDS not in row_of(asset()).metadata
    assert row_of(asset(("public", "../x"), ("signed", "Ok1"))).metadata[PLAYBACK_IDS] == ["Ok1"]
