"""Marshalling for the ledger: an asset's metadata is stored exactly and comes back as the same JSON,
the ledger's own times to the millisecond, and what DynamoDB cannot store is refused up front."""

from __future__ import annotations

import json

import pytest
from migrator.dynamo import plain, to_item, typed
from migrator.messages import AssetMessage, Poison, parse_message

METADATA = {
    "lat": 51.5072178,
    "lon": -0.1275862,
    "tenth": 0.1,
    "small": 1e-5,
    "smallest": 1e-130,
    "big": 12345678901234567890,
    "count": 3,
    "zero": 0,
    "nested": [{"x": 2.5e-7, "y": [1.7976931348623157e124, -3]}, "text", True, None],
}


def test_metadata_numbers_come_back_from_the_ledger_as_the_same_json():
    message = parse_message(json.dumps({"id": "a", "source_url": "https://h/a.mp4", "metadata": METADATA}))
    assert isinstance(message, AssetMessage)
    stored = typed({":meta": message.metadata})
    back = plain(to_item(stored)[":meta"])
    assert back == METADATA
    assert json.dumps(back) == json.dumps(METADATA)  # the same text: ints stay ints, floats floats
    assert stored[":meta"]["M"]["lat"] == {"N": "51.5072178"}


def test_a_whole_float_comes_back_an_int_of_equal_value():
    # DynamoDB keeps no difference between 2 and 2.0 (it may answer either as "2").
    back = plain(to_item(typed({":m": {"two": 2.0, "zero": -0.0, "e20": 1e20}}))[":m"])
    assert back == {"two": 2, "zero": 0, "e20": 10**20} and all(type(v) is int for v in back.values())


def test_plain_turns_a_whole_ledger_item_into_json():
    item = to_item(typed({"asset_id": "a", "attempts": 2, "updated_at": 1_800_000_000.25, "metadata": METADATA}))
    doc = json.loads(json.dumps(plain(item)))
    assert doc["attempts"] == 2 and isinstance(doc["attempts"], int)
    assert doc["updated_at"] == 1_800_000_000.25
    assert doc["metadata"]["lat"] == 51.5072178 and doc["metadata"]["big"] == 12345678901234567890


def test_whole_numbers_past_38_digits_come_back_as_the_floats_they_were():
    # A message's integers have at most 38 digits, so a longer whole number was a float (1e100):
    # as an int it would make the message poison when it is sent again.
    back = plain(to_item(typed({":m": {"f": 1e100, "g": 1.2345e40}}))[":m"])
    assert back == {"f": 1e100, "g": 1.2345e40} and all(isinstance(v, float) for v in back.values())


def test_the_ledgers_own_times_are_kept_to_the_millisecond():
    assert typed({":now": 1_800_000_000.1234567}) == {":now": {"N": "1800000000.123"}}


@pytest.mark.parametrize(
    ("number", "reason"),
    [
        (1.7976931348623157e308, "too large to store"),
        (-1e125, "too large to store"),
        (1e-200, "too small to store (not zero and under 1e-130 in size)"),
        (-5e-324, "too small to store"),
        (9.99e-131, "too small to store"),
    ],
)
def test_magnitudes_dynamodb_cannot_store_are_refused_up_front(number, reason):
    result = parse_message(json.dumps({"id": "a", "source_url": "https://h/a.mp4", "metadata": {"n": [number]}}))
    assert isinstance(result, Poison) and reason in result.reason


@pytest.mark.parametrize("number", [1e-130, -1e-130, 0.0, -0.0, 9.99e124, 2.2250738585072014e-120])
def test_magnitudes_at_dynamodbs_limits_are_accepted_and_marshal(number):
    result = parse_message(json.dumps({"id": "a", "source_url": "https://h/a.mp4", "metadata": {"n": number}}))
    assert isinstance(result, AssetMessage)
    assert plain(to_item(typed({":m": result.metadata}))[":m"]) == {"n": number}


def test_numbers_dynamodb_answers_with_trailing_zeros_past_38_digits_read_back():
    # DynamoDB writes 1.5e40 back as 15 and 39 zeros; boto3's own reader raised decimal.Rounded.
    item = to_item({"metadata": {"M": {"big": {"N": "15" + "0" * 39}, "tiny": {"N": "0." + "0" * 129 + "1"}}}})
    assert plain(item) == {"metadata": {"big": 1.5e40, "tiny": 1e-130}}
