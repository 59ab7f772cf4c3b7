"""Cluster-wide pacing of provider creates, and the hold that follows a 429.

Every uploader invocation shares one control item in the ledger table (`#pacer`):

- `next_slot`: the earliest time the next create may start. Reserving a slot advances it
  by 1/rate, so creates from any number of concurrent Lambdas leave at the provider's
  rate instead of each discovering the limit with a 429 of its own.
- `hold_until`: set when anyone sees a 429/503. Until then nobody creates; the others
  put their messages back and wait, rather than each provoking its own 429.

A reservation is one conditional UpdateItem in the common case. The item is written at
most `rate` times a second, far below a DynamoDB partition's 1,000 writes/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from .dynamo import is_condition_failure, to_item, typed

PACER_ID = "#pacer"
# Never sleep longer than this inside an invocation waiting for a slot; past it the
# message goes back to the queue instead (the slot queue is too long).
DEFAULT_HORIZON_S = 5.0


@dataclass(frozen=True)
class Go:
    at: float  # start the create at this time (may be now)


@dataclass(frozen=True)
class Hold:
    until: float  # do not create before this time
    reason: str


class Pacer:
    def __init__(self, table_name: str, client: Any, rate_per_s: float, horizon_s: float = DEFAULT_HORIZON_S):
        self.table = table_name
        self.client = client
        self.interval = 1.0 / rate_per_s if rate_per_s > 0 else 0.0
        self.horizon = horizon_s

    def reserve(self, now: float) -> Go | Hold:
        """Reserve the next create slot, or say how long everyone is held."""
        if not self.interval:
            item = self._get()
            hold = float((item or {}).get("hold_until", 0))
            return Hold(hold, "provider asked us to wait") if hold > now else Go(now)
        for _ in range(8):  # lost races re-read; 8 is plenty at any sane concurrency
            # Common case: slots are queued ahead of now; take the next one.
            old = self._update(
                "SET next_slot = next_slot + :i",
                "next_slot > :now AND next_slot <= :horizon"
                " AND (attribute_not_exists(hold_until) OR hold_until <= :now)",
                {":i": self.interval, ":now": now, ":horizon": now + self.horizon},
            )
            if isinstance(old, dict) and "next_slot" in old:
                return Go(float(old["next_slot"]))
            item = old.get("current") if isinstance(old, dict) else None
            hold = float((item or {}).get("hold_until", 0))
            if hold > now:
                return Hold(hold, "provider asked us to wait")
            next_slot = float((item or {}).get("next_slot", 0))
            if next_slot > now + self.horizon:
                return Hold(next_slot - self.horizon, "create queue is full")
            # Idle pacer: the slot is now.
            won = self._update(
                "SET next_slot = :next",
                "(attribute_not_exists(next_slot) OR next_slot <= :now)"
                " AND (attribute_not_exists(hold_until) OR hold_until <= :now)",
                {":next": now + self.interval, ":now": now},
            )
            if isinstance(won, dict) and "current" not in won:
                return Go(now)
        return Hold(now + self.interval * 8, "pacer contention")

    def hold(self, until: float) -> None:
        """Hold every create until `until`; an earlier hold never shortens a later one."""
        try:
            self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": PACER_ID}),
                UpdateExpression="SET hold_until = :until",
                ConditionExpression="attribute_not_exists(hold_until) OR hold_until < :until",
                ExpressionAttributeValues=typed({":until": until}),
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise

    def _get(self) -> dict | None:
        resp = self.client.get_item(TableName=self.table, Key=typed({"asset_id": PACER_ID}), ConsistentRead=True)
        return to_item(resp.get("Item"))

    def _update(self, expression: str, condition: str, values: dict) -> dict:
        """UPDATED_OLD attributes on success; {"current": item} when the condition failed."""
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": PACER_ID}),
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeValues=typed(values),
                ReturnValues="UPDATED_OLD",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return {"current": to_item(exc.response.get("Item"))}
            raise
        return to_item(resp.get("Attributes")) or {}
