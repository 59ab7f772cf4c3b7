"""Small helpers for the low-level DynamoDB client: typed values in, plain items out."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, DecimalException
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError, ParamValidationError

_ser = TypeSerializer()

# What marshalling a value DynamoDB (or an HTTP header) cannot carry raises: a type it has
# no form for, a number past 38 digits or 1e125, text that is not valid Unicode.
MARSHALLING_ERRORS = (TypeError, OverflowError, DecimalException, UnicodeError, ParamValidationError)
_de = TypeDeserializer()


def to_item(raw: Mapping[str, Any] | None) -> dict | None:
    """A low-level DynamoDB item as plain Python (numbers as Decimal), None when empty."""
    if not raw:
        return None
    return {k: _de.deserialize(v) for k, v in raw.items()}


def typed(values: Mapping[str, Any]) -> dict:
    """Plain Python values as low-level attribute values (floats kept to the millisecond)."""
    return {k: _ser.serialize(_dynamo_value(v)) for k, v in values.items()}


def _dynamo_value(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(round(value, 3)))
    if isinstance(value, dict):
        return {k: _dynamo_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dynamo_value(v) for v in value]
    return value


def is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
