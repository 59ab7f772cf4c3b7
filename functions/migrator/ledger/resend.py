"""An asset's record turned back into the message that carries it (an operator's retry, reconcile's heal).

The ledger's copy of the source wins over any later message. A record read back holds
DynamoDB's numbers (Decimal), which become JSON numbers again exactly: an integer stays
an integer, a fraction the same fraction. The message is then checked with the queue's
own validation, so a record that could never travel (a poison record without a source,
a field that no longer passes) is refused here, with its reason, before anything is
re-armed or sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..dynamo import plain
from ..messages import FIELDS, AssetMessage, Poison, parse_message
from .table import ledger_name


class NotResendable(ValueError):
    """The record cannot become a valid message; `reason` says why (safe to print)."""

    def __init__(self, asset_id: str, reason: str):
        super().__init__(f"{asset_id}: {reason}")
        self.asset_id, self.reason = asset_id, reason


def message_of(item: Mapping[str, Any]) -> AssetMessage:
    """The queue message for a ledger item; NotResendable when it would not be a valid one."""
    asset_id = str(item.get("asset_id", ""))
    doc: dict = {"id": item.get("asset_id"), "source_url": item.get("source_url")}
    for field in sorted(FIELDS - {"id", "source_url"}):
        value = item.get(ledger_name(field))
        if value is not None:
            doc[field] = plain(value)
    try:
        body = json.dumps(doc, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise NotResendable(asset_id, f"its record holds what a message cannot carry ({type(exc).__name__})") from None
    parsed = parse_message(body)
    if isinstance(parsed, Poison):
        raise NotResendable(asset_id, f"its record is not a valid message: {parsed.reason}")
    return parsed
