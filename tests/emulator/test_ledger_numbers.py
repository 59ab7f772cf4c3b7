"""An asset's metadata numbers through the real ledger table: stored by the claim, read back exact."""

from __future__ import annotations

import json

import pytest
from migrator.dynamo import plain
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage, Poison, parse_message

from tests.unit.test_dynamo import METADATA

pytestmark = pytest.mark.emulator
NOW = 1_800_000_000.0


def test_metadata_numbers_are_stored_by_the_claim_and_read_back_exact(aws, table):
    ledger = Ledger(table, aws("dynamodb"))
    message = parse_message(json.dumps({"id": "geo/1", "source_url": "https://h/a.mp4", "metadata": METADATA}))
    assert isinstance(message, AssetMessage)
    assert isinstance(ledger.claim(message, NOW, NOW + 60, "tok"), Claimed)
    item = plain(ledger.get("geo/1"))
    assert item["metadata"] == METADATA
    assert json.dumps(item["metadata"]) == json.dumps(METADATA)  # ints stay ints, floats floats
    assert item["metadata"]["lat"] == 51.5072178  # rounded to the millisecond, it was 51.507


def test_numbers_dynamodb_cannot_store_never_reach_the_claim():
    for number in (1.7976931348623157e308, 1e-200):
        doc = {"id": "geo/2", "source_url": "https://h/a.mp4", "metadata": {"n": number}}
        assert isinstance(parse_message(json.dumps(doc)), Poison)
