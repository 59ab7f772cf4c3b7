"""Settling: the provider's outcome (ready or rejected) moves an asset to its terminal state, forward only.

The webhook settles in one transaction with the record of the event it acted on; reconcile's
poll and the uploader's adoption of a video an earlier try made settle with `settle`. All
three share one request (`_settle_update`) under `rules.NOT_SETTLED` and `rules.SAME_VIDEO`.
A settle may land while the uploader still holds the lease (a fast provider): the lease is
dropped, so the uploader's later fenced write loses cleanly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError

from ..dynamo import to_item, typed
from ..states import State
from . import rules
from .table import LedgerTable, Update, WriteResult


class EventOutcome(StrEnum):
    APPLIED = "applied"  # the ledger moved and the event is recorded as acted on
    DUPLICATE = "duplicate"  # the event was acted on before: nothing written
    NOT_APPLIED = "not_applied"  # the ledger refused the move (terminal, another video, unknown)


@dataclass(frozen=True)
class EventResult:
    outcome: EventOutcome
    current: dict | None = None  # APPLIED: the item after; NOT_APPLIED: the item as it stood (None: unknown)


class Settling(LedgerTable):
    def settle(
        self,
        asset_id: str,
        target: State,
        remote_id: str | None,
        now: float,
        provider_duration_s: float | None = None,
        error: str | None = None,
        playback: dict | None = None,
    ) -> WriteResult:
        """Move an asset to the terminal state the provider reported (ready or rejected).

        Never backward: a terminal asset stays as it is. An event for another video than the
        one the ledger records is refused, so a stray duplicate cannot decide the asset's fate.
        """
        request = _settle_request(asset_id, target, remote_id, now, provider_duration_s, error, playback)
        return self._update(asset_id, **request, ReturnValues="ALL_NEW")

    def settle_event(
        self,
        events_table: str,
        event: Mapping[str, Any],
        asset_id: str,
        target: State,
        remote_id: str | None,
        now: float,
        provider_duration_s: float | None = None,
        error: str | None = None,
        playback: dict | None = None,
    ) -> EventResult:
        """`settle`, and the record that the webhook event was acted on, in one transaction.

        Either both land or neither does: a crash between them can neither lose the event
        (recorded as seen, never applied) nor apply it twice. `event` is the events-table
        item; its `event_id` must be new.
        """
        request = _settle_request(asset_id, target, remote_id, now, provider_duration_s, error, playback)
        try:
            self.client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": events_table,
                            "Item": typed(event),
                            "ConditionExpression": "attribute_not_exists(event_id)",
                        }
                    },
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": typed({"asset_id": asset_id}),
                            **request,
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        }
                    },
                ]
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            reasons = exc.response.get("CancellationReasons") or [{}, {}]
            codes = [reason.get("Code") for reason in reasons]
            if codes[0] == "ConditionalCheckFailed":
                return EventResult(EventOutcome.DUPLICATE)
            if len(codes) > 1 and codes[1] == "ConditionalCheckFailed":
                return EventResult(EventOutcome.NOT_APPLIED, to_item(reasons[1].get("Item")))
            raise  # a conflict with another transaction: the caller answers 5xx and the sender retries
        return EventResult(EventOutcome.APPLIED, self.get(asset_id))

    def flag_drift(self, asset_id: str, drift_s: float, now: float) -> None:
        """Mark a settled asset whose provider duration differs from its source's (the canary)."""
        self.client.update_item(
            TableName=self.table,
            Key=typed({"asset_id": asset_id}),
            UpdateExpression="SET drift_s = :drift, drift_flagged_at = :now",
            ConditionExpression="attribute_exists(asset_id)",
            ExpressionAttributeValues=typed({":drift": drift_s, ":now": now}),
        )


def _settle_request(
    asset_id: str,
    target: State,
    remote_id: str | None,
    now: float,
    provider_duration_s: float | None,
    error: str | None,
    playback: dict | None = None,
) -> dict:
    """The conditional update that settles an asset (see Settling.settle), as request fields."""
    if target not in (State.READY, State.REJECTED):
        raise ValueError(f"settle moves to ready or rejected, not {target}")
    update = Update().to_state(target, asset_id, now).set("settled_at", now)
    update.remove("lease_token", "lease_until", "retry_after").off_lanes()
    condition, values = rules.NOT_SETTLED, rules.settle_values()
    if remote_id:
        update.set("remote_id", remote_id)
        condition += " AND " + rules.SAME_VIDEO
        values[":rid"] = remote_id
    if provider_duration_s is not None:
        update.set("provider_duration_s", provider_duration_s)
    if playback and target is State.READY:
        update.set("playback_info", playback)  # what the provider says of how it plays: the cut-over map
    if error is not None:
        update.set("last_error", error)
    elif target is State.READY:
        # A good asset carries no error: earlier holds and 429s live on in `throttles` and `attempts`.
        update.remove("last_error")
    return update.request(condition, **values)
