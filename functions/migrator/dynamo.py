"""Small helpers for the low-level DynamoDB client: typed values in, plain items out."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, DecimalException
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError, ParamValidationError

from .messages import MAX_DYNAMO_DIGITS

_ser = TypeSerializer()

# What marshalling a value DynamoDB (or an HTTP header) cannot carry raises: a type it has
# no form for, a number past 38 digits, 1e125 or under 1e-130, text that is not valid Unicode.
MARSHALLING_ERRORS = (TypeError, OverflowError, DecimalException, UnicodeError, ParamValidationError)


class _Deserializer(TypeDeserializer):
    """boto3's, except that a number is read as the text DynamoDB sent. DynamoDB answers a
    number without an exponent (1e100 is a 1 and 100 zeros), and boto3 counts the trailing
    zeros against its 38 digits: any item holding a float of 1e38 or more failed to read with
    decimal.Rounded (boto/boto3#2500, #4693)."""

    def _deserialize_n(self, value: str) -> Decimal:
        return Decimal(value)


_de = _Deserializer()


def to_item(raw: Mapping[str, Any] | None) -> dict | None:
    """A low-level DynamoDB item as plain Python (numbers as Decimal), None when empty."""
    if not raw:
        return None
    return listed_item(raw)


def listed_item(raw: Mapping[str, Any]) -> dict:
    """An item a query, a scan or a batch read lists, as plain Python: never empty (it holds its key), so never None."""
    return {k: _de.deserialize(v) for k, v in raw.items()}


def typed(values: Mapping[str, Any]) -> dict:
    """Plain Python values as low-level attribute values.

    A float that is a value of its own (a time, a duration, a rate: the ledger's numbers) is
    kept to the millisecond. Numbers inside a map or a list (an asset's metadata: user data)
    are kept exactly, as the shortest decimal that reads back as the same float
    (Decimal(repr(f))): rounded, 51.5072178 was stored as 51.507.
    """
    return {k: _ser.serialize(_dynamo_value(v)) for k, v in values.items()}


def _dynamo_value(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(round(value, 3)))
    return _each_leaf(value, lambda leaf: Decimal(repr(leaf)) if isinstance(leaf, float) else leaf)


def plain(value: Any) -> Any:
    """What to_item returns, as plain JSON types, all the way down (a ledger item made a message
    again: json.dumps cannot write a Decimal). A whole number of at most 38 digits becomes an
    int, as a message's integers are; any other number the float it was stored from, exactly.
    DynamoDB keeps no difference between 2 and 2.0, so a float that is a whole number comes
    back an int of the same value."""
    return _each_leaf(value, _plain_number)


def _plain_number(value: Any) -> Any:
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and value.adjusted() < MAX_DYNAMO_DIGITS:
            return int(value)
        return float(value)
    return value


def _each_leaf(value: Any, change) -> Any:
    """`value` with `change` applied to each value that is not a map or a list."""
    if isinstance(value, dict):
        return {k: _each_leaf(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_each_leaf(v, change) for v in value]
    return change(value)


def is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
