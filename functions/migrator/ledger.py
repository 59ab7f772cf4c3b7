"""The DynamoDB ledger: one item per asset, moved only by conditional writes.

A claim is a single conditional UpdateItem that also creates the item of an asset the
ledger has never seen. Every later write by the claimant is fenced by its lease token,
so a worker whose lease expired (it was slow, or presumed dead) loses cleanly to its
successor. Terminal states never move backward.

Every state change also rewrites `state_shard` ("<state>#<n>"), the partition key of
the `by_state` index: a state's items are spread over SHARDS partitions, so listing
"uploading, oldest first" or "processing for over an hour" is a few bounded Queries
instead of a Scan, and no single state is a hot partition.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from .dynamo import is_condition_failure, to_item, typed
from .messages import AssetMessage
from .states import State

# A child of the function's Powertools logger: its lines are JSON with the same keys.
log = Logger(child=True)

SHARDS = 16
STATE_INDEX = "by_state"
# remote_id -> asset_id (keys only): for webhooks that name only the provider's video.
REMOTE_INDEX = "by_remote"
# States an operator's retry can re-arm (rejected only on the operator's explicit choice).
REARMABLE = (State.FAILED, State.REJECTED, State.PENDING, State.INVENTORIED)


def shard_of(asset_id: str) -> int:
    return zlib.crc32(asset_id.encode("utf-8")) % SHARDS


def state_shard(state: State, asset_id: str) -> str:
    return f"{state.value}#{shard_of(asset_id)}"


def message_of(item: Mapping[str, Any]) -> AssetMessage:
    """The queue message that carries a ledger item's asset (retry, heal): the ledger's source wins."""
    duration = item.get("duration_s")
    return AssetMessage(
        asset_id=item["asset_id"],
        source_url=item["source_url"],
        title=item.get("title"),
        duration_s=float(duration) if duration is not None else None,
        metadata=dict(item.get("metadata") or {}),
    )


@dataclass(frozen=True)
class Claimed:
    token: str
    attempts: int
    previous: dict | None  # the item before the claim; None for a new asset
    source_url: str  # what the ledger holds: the first URL it saw for this id


@dataclass(frozen=True)
class Refused:
    item: dict  # the item as it stood when the condition failed


class EventOutcome(StrEnum):
    APPLIED = "applied"  # the ledger moved and the event is recorded as acted on
    DUPLICATE = "duplicate"  # the event was acted on before: nothing written
    NOT_APPLIED = "not_applied"  # the ledger refused the move (terminal, another video, unknown)


@dataclass(frozen=True)
class EventResult:
    outcome: EventOutcome
    current: dict | None = None  # APPLIED: the item after; NOT_APPLIED: the item as it stood (None: unknown)


@dataclass(frozen=True)
class WriteResult:
    won: bool
    current: dict | None = None  # on a lost write: the item that beat us; on settle: the item after


class Ledger:
    """Adapter over the ledger table. Methods take `now` so callers control time."""

    def __init__(self, table_name: str, client: Any):
        self.table = table_name
        self.client = client

    # --- reads ---------------------------------------------------------------------

    def get(self, asset_id: str) -> dict | None:
        resp = self.client.get_item(TableName=self.table, Key=typed({"asset_id": asset_id}), ConsistentRead=True)
        return to_item(resp.get("Item"))

    def asset_for_remote(self, remote_id: str) -> str | None:
        """The asset whose recorded provider video is `remote_id` (the by_remote index, eventually
        consistent: a video recorded a moment ago may not be found yet; reconcile's poll is the
        backstop). Two assets never share a video, so the first match is the one."""
        resp = self.client.query(
            TableName=self.table,
            IndexName=REMOTE_INDEX,
            KeyConditionExpression="remote_id = :rid",
            ExpressionAttributeValues=typed({":rid": remote_id}),
            Limit=1,
        )
        items = resp.get("Items") or []
        return to_item(items[0])["asset_id"] if items else None

    def _update(self, asset_id: str, **request: Any) -> WriteResult:
        """One conditional UpdateItem: won with the item after (when asked for), or lost with the item as it stood."""
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": asset_id}),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **request,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return WriteResult(False, to_item(exc.response.get("Item")))
            raise
        return WriteResult(True, to_item(resp.get("Attributes")))

    # --- the claim -------------------------------------------------------------------

    def claim(self, msg: AssetMessage, now: float, lease_until: float, token: str) -> Claimed | Refused:
        """Take the asset for one upload attempt, creating its item if it is new.

        Eligible: a new asset; pending/inventoried whose retry time (if any) has passed;
        failed whose retry time has passed; uploading whose lease has expired.
        """
        values = {
            ":uploading": State.UPLOADING.value,
            ":shard": state_shard(State.UPLOADING, msg.asset_id),
            ":token": token,
            ":lease": lease_until,
            ":now": now,
            ":zero": 0,
            ":one": 1,
            ":src": msg.source_url,
            ":pending": State.PENDING.value,
            ":inventoried": State.INVENTORIED.value,
            ":failed": State.FAILED.value,
        }
        sets = [
            "#state = :uploading",
            "state_shard = :shard",
            "lease_token = :token",
            "lease_until = :lease",
            "attempts = if_not_exists(attempts, :zero) + :one",
            "throttles = if_not_exists(throttles, :zero)",
            "source_url = if_not_exists(source_url, :src)",
            "created_at = if_not_exists(created_at, :now)",
            "updated_at = :now",
            "claimed_at = :now",
        ]
        if msg.title is not None:
            values[":title"] = msg.title
            sets.append("title = if_not_exists(title, :title)")
        if msg.duration_s is not None:
            values[":duration"] = msg.duration_s
            sets.append("duration_s = if_not_exists(duration_s, :duration)")
        if msg.metadata:
            values[":meta"] = msg.metadata
            sets.append("metadata = if_not_exists(metadata, :meta)")
        condition = (
            "attribute_not_exists(asset_id)"
            " OR (#state IN (:pending, :inventoried)"
            "     AND (attribute_not_exists(retry_after) OR retry_after <= :now))"
            " OR (#state = :failed AND retry_after <= :now)"
            " OR (#state = :uploading AND lease_until < :now)"
        )
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": msg.asset_id}),
                UpdateExpression="SET " + ", ".join(sets) + " REMOVE retry_after",
                ConditionExpression=condition,
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues=typed(values),
                ReturnValues="ALL_OLD",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return Refused(to_item(exc.response.get("Item")) or {})
            raise
        previous = to_item(resp.get("Attributes"))
        attempts = int((previous or {}).get("attempts", 0)) + 1
        source = (previous or {}).get("source_url") or msg.source_url
        return Claimed(token=token, attempts=attempts, previous=previous, source_url=source)

    # --- fenced writes by the claimant ---------------------------------------------------

    def mark_processing(self, asset_id: str, token: str, remote_id: str, now: float, throttles: int = 0) -> WriteResult:
        """The provider has the video. `throttles`: 429s this claim waited out before it got there."""
        return self._fenced(
            asset_id,
            token,
            State.PROCESSING,
            now,
            {"remote_id": remote_id},
            remove=("retry_after", "last_error"),
            add={"throttles": throttles} if throttles else None,
        )

    def release_throttled(
        self, asset_id: str, token: str, back_to: State, retry_at: float, error: str, now: float, count: bool = True
    ) -> WriteResult:
        """Give the claim back untried: the attempt is uncounted; a 429 is counted as a
        throttle (`count`), a hold that kept us from calling at all as a hold. Both are
        pacing, which the receive-based deferral floor does not charge to the message."""
        return self._fenced(
            asset_id,
            token,
            back_to,
            now,
            {"retry_after": retry_at, "last_error": error},
            add={"throttles": 1 if count else 0, "holds": 0 if count else 1, "attempts": -1},
        )

    def mark_failed(
        self, asset_id: str, token: str, error: str, retry_at: float | None, now: float, throttles: int = 0
    ) -> WriteResult:
        """Failed: retryable when `retry_at` is set, failed for good when it is None."""
        fields: dict = {"last_error": error}
        remove: tuple[str, ...] = ()
        if retry_at is None:
            remove = ("retry_after",)
        else:
            fields["retry_after"] = retry_at
        add = {"throttles": throttles} if throttles else None
        return self._fenced(asset_id, token, State.FAILED, now, fields, remove=remove, add=add)

    def mark_rejected(self, asset_id: str, token: str, error: str, now: float, throttles: int = 0) -> WriteResult:
        add = {"throttles": throttles} if throttles else None
        return self._fenced(
            asset_id, token, State.REJECTED, now, {"last_error": error}, remove=("retry_after",), add=add
        )

    def _fenced(
        self,
        asset_id: str,
        token: str,
        state: State,
        now: float,
        fields: Mapping[str, Any],
        remove: tuple[str, ...] = (),
        add: Mapping[str, int] | None = None,
    ) -> WriteResult:
        values: dict = {
            ":state": state.value,
            ":shard": state_shard(state, asset_id),
            ":now": now,
            ":token": token,
            ":uploading": State.UPLOADING.value,
        }
        names = {"#state": "state"}
        sets = ["#state = :state", "state_shard = :shard", "updated_at = :now"]
        for i, (name, value) in enumerate(fields.items()):
            names[f"#f{i}"] = name
            values[f":f{i}"] = value
            sets.append(f"#f{i} = :f{i}")
        for i, (name, delta) in enumerate((add or {}).items()):
            names[f"#a{i}"] = name
            values[f":a{i}"] = delta
            values[":zero"] = 0
            sets.append(f"#a{i} = if_not_exists(#a{i}, :zero) + :a{i}")
        expression = "SET " + ", ".join(sets) + " REMOVE " + ", ".join(("lease_token", "lease_until", *remove))
        result = self._update(
            asset_id,
            UpdateExpression=expression,
            ConditionExpression="lease_token = :token AND #state = :uploading",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=typed(values),
        )
        if not result.won:
            log.warning(
                "lost the lease before writing %s: the asset is now %s",
                state.value,
                (result.current or {}).get("state", "gone"),
                extra={"asset_id": asset_id, "wanted_state": state.value},
            )
        return result

    # --- provider outcomes (webhooks, reconcile) -------------------------------------------

    def settle(
        self,
        asset_id: str,
        target: State,
        remote_id: str | None,
        now: float,
        provider_duration_s: float | None = None,
        error: str | None = None,
    ) -> WriteResult:
        """Move an asset to a terminal state the provider reported (ready or rejected).

        Never backward: a terminal asset stays as it is. It may land while the uploader
        still holds its lease (a fast provider); the lease is dropped, so the uploader's
        later fenced write loses. An event for another video than the one the ledger
        records is refused, so a stray duplicate cannot decide the asset's fate.
        """
        request = _settle_request(asset_id, target, remote_id, now, provider_duration_s, error)
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
    ) -> EventResult:
        """`settle`, and the record that the webhook event was acted on, in one transaction.

        Either both land or neither does: a crash between them can neither lose the
        event (recorded as seen, never applied) nor apply it twice. `event` is the
        events-table item; its `event_id` must be new.
        """
        request = _settle_request(asset_id, target, remote_id, now, provider_duration_s, error)
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

    # --- reading a state through the by_state index ------------------------------------

    def query_shard(
        self,
        state: State,
        shard: int,
        limit: int,
        older_than: float | None = None,
        start_key: dict | None = None,
        newest_first: bool = False,
    ) -> tuple[list[dict], dict | None]:
        """One bounded page of one state's shard, oldest change first; returns (items, next key).

        Items carry the index's projection (state, lease, retry, remote id, counters,
        last error), not the whole asset: `get` reads the rest when it is needed.
        """
        values: dict = {":shard": f"{state.value}#{shard}"}
        condition = "state_shard = :shard"
        if older_than is not None:
            values[":cutoff"] = older_than
            condition += " AND updated_at < :cutoff"
        kwargs: dict = {
            "TableName": self.table,
            "IndexName": STATE_INDEX,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": typed(values),
            "Limit": limit,
            "ScanIndexForward": not newest_first,
        }
        if start_key:
            kwargs["ExclusiveStartKey"] = start_key
        resp = self.client.query(**kwargs)
        return [to_item(raw) for raw in resp.get("Items", [])], resp.get("LastEvaluatedKey")

    def iter_state(self, state: State, page_size: int = 100, older_than: float | None = None):
        """Every item of `state`, shard by shard (a paginated walk; bounded per page, not in total)."""
        for shard in range(SHARDS):
            key = None
            while True:
                items, key = self.query_shard(state, shard, page_size, older_than=older_than, start_key=key)
                yield from items
                if not key:
                    break

    # --- staging and the inventory pass (the CLI's load --stage and probe) -------------------

    def stage(self, msg: AssetMessage, now: float) -> bool:
        """Record a new asset as pending without enqueuing it; False when the id is known already."""
        item: dict = {
            "asset_id": msg.asset_id,
            "state": State.PENDING.value,
            "state_shard": state_shard(State.PENDING, msg.asset_id),
            "source_url": msg.source_url,
            "attempts": 0,
            "throttles": 0,
            "created_at": now,
            "updated_at": now,
        }
        if msg.title is not None:
            item["title"] = msg.title
        if msg.duration_s is not None:
            item["duration_s"] = msg.duration_s
        if msg.metadata:
            item["metadata"] = msg.metadata
        try:
            self.client.put_item(
                TableName=self.table, Item=typed(item), ConditionExpression="attribute_not_exists(asset_id)"
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def mark_inventoried(self, asset_id: str, duration_s: float, now: float) -> WriteResult:
        """pending -> inventoried with the probed duration; loses to anything that moved it first."""
        return self._from_pending(asset_id, State.INVENTORIED, now, {"duration_s": duration_s}, remove=("last_error",))

    def reject_unprobed(self, asset_id: str, reason: str, now: float) -> WriteResult:
        """pending -> rejected: the probe found no video stream, or could not read the source."""
        return self._from_pending(asset_id, State.REJECTED, now, {"last_error": reason}, remove=("retry_after",))

    def _from_pending(
        self, asset_id: str, state: State, now: float, fields: Mapping[str, Any], remove: tuple[str, ...]
    ) -> WriteResult:
        names = {"#state": "state"}
        values: dict = {":to": state.value, ":shard": state_shard(state, asset_id), ":now": now}
        values[":pending"] = State.PENDING.value
        sets = ["#state = :to", "state_shard = :shard", "updated_at = :now"]
        for i, (name, value) in enumerate(fields.items()):
            names[f"#f{i}"], values[f":f{i}"] = name, value
            sets.append(f"#f{i} = :f{i}")
        return self._update(
            asset_id,
            UpdateExpression="SET " + ", ".join(sets) + " REMOVE " + ", ".join(remove),
            ConditionExpression="#state = :pending AND attribute_not_exists(lease_token)",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=typed(values),
        )

    # --- the operator's retry and reconcile's heal ----------------------------------------------

    def rearm(self, asset_id: str, state: State, now: float) -> WriteResult:
        """Make an asset claimable now, for an operator's retry; the caller then enqueues it.

        failed (and rejected, by the operator's explicit choice) becomes failed with its
        retry time now and a fresh attempt budget (`retry_base`: attempts spent before
        this retry). Its attempt count is kept, so the next claim still looks the asset
        up at the provider before creating it again. A rejected asset also moves to the
        next `generation`, so its create carries a new Idempotency-Key. pending and
        inventoried lose any retry time. Refused if the asset moved since it was listed.
        """
        if state not in REARMABLE:
            raise ValueError(f"retry re-enqueues failed, rejected, pending or inventoried assets, not {state}")
        values: dict = {":seen": state.value, ":now": now}
        sets = ["updated_at = :now", "enqueued_at = :now"]
        remove = ""
        if state in (State.FAILED, State.REJECTED):
            values.update({":failed": State.FAILED.value, ":shard": state_shard(State.FAILED, asset_id), ":zero": 0})
            sets += [
                "#state = :failed",
                "state_shard = :shard",
                "retry_after = :now",
                "retry_base = if_not_exists(attempts, :zero)",
            ]
        else:
            remove = " REMOVE retry_after"
        if state is State.REJECTED:
            # The provider's errored video answers the old Idempotency-Key: the retry needs a new one.
            values[":one"] = 1
            sets.append("generation = if_not_exists(generation, :zero) + :one")
        return self._update(
            asset_id,
            UpdateExpression="SET " + ", ".join(sets) + remove,
            ConditionExpression="#state = :seen AND attribute_not_exists(lease_token)",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues=typed(values),
            ReturnValues="ALL_NEW",
        )

    def mark_healed(self, seen: Mapping[str, Any], now: float) -> WriteResult:
        """The marker a heal writes before it enqueues: the asset exactly as it was read.

        The condition is the item's `updated_at` (and state) as seen: a claim, a release,
        a settle or another reconcile's heal all change it, so of two reconcile runs, or
        a reconcile and an uploader, at most one acts on what it saw. An uploading asset
        is only healed while its lease is still expired: a live lease is never taken.
        The new `updated_at` restarts the quiet period before any further heal.
        """
        values: dict = {":seen_state": seen["state"], ":seen_at": seen["updated_at"], ":now": now, ":one": 1}
        condition = "#state = :seen_state AND updated_at = :seen_at"
        if seen["state"] == State.UPLOADING.value:
            condition += " AND lease_until < :now"
        else:
            condition += " AND attribute_not_exists(lease_token)"
        return self._update(
            seen["asset_id"],
            UpdateExpression=(
                "SET updated_at = :now, healed_at = :now, enqueued_at = :now,"
                " heals = if_not_exists(heals, :zero) + :one"
            ),
            ConditionExpression=condition,
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues=typed({**values, ":zero": 0}),
            ReturnValues="ALL_NEW",
        )

    def note_polled(self, asset_id: str, now: float, note: str) -> None:
        """A processing asset the provider has not finished: remember when we asked (no state change)."""
        self.client.update_item(
            TableName=self.table,
            Key=typed({"asset_id": asset_id}),
            UpdateExpression=(
                "SET polled_at = :now, poll_note = :note, polls = if_not_exists(polls, :zero) + :one REMOVE poll_misses"
            ),
            ConditionExpression="attribute_exists(asset_id)",
            ExpressionAttributeValues=typed({":now": now, ":note": note, ":zero": 0, ":one": 1}),
        )

    def note_poll_miss(self, asset_id: str, now: float, note: str, max_misses: int) -> WriteResult:
        """A poll that told us nothing (no such video, an unreadable status): counted, and on the
        `max_misses`-th the asset leaves `processing` as failed for good with the reason, so it
        stops taking the poll budget and waits for the operator's retry (which looks it up first)."""
        values = {":now": now, ":note": note, ":zero": 0, ":one": 1, ":processing": State.PROCESSING.value}
        counted = self._update(
            asset_id,
            UpdateExpression=(
                "SET polled_at = :now, poll_note = :note, polls = if_not_exists(polls, :zero) + :one,"
                " poll_misses = if_not_exists(poll_misses, :zero) + :one"
            ),
            ConditionExpression="#state = :processing",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues=typed(values),
            ReturnValues="ALL_NEW",
        )
        misses = int((counted.current or {}).get("poll_misses", 0))
        if not counted.won or misses < max_misses:
            return counted
        values = {
            ":processing": State.PROCESSING.value,
            ":failed": State.FAILED.value,
            ":shard": state_shard(State.FAILED, asset_id),
            ":now": now,
            ":error": f"provider: {note} on {misses} polls in a row; use migrator retry to create it again",
            ":max": max_misses,
        }
        return self._update(
            asset_id,
            UpdateExpression="SET #state = :failed, state_shard = :shard, updated_at = :now, last_error = :error"
            " REMOVE retry_after",
            ConditionExpression="#state = :processing AND poll_misses >= :max",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues=typed(values),
            ReturnValues="ALL_NEW",
        )

    # --- poison ----------------------------------------------------------------------------

    def record_poison(self, asset_id: str, reason: str, source_url: object, now: float) -> bool:
        """Record a poison message for an id we can key on.

        A new id becomes a rejected item with the reason. An existing item keeps its
        state (a malformed duplicate must not undo good work); only `last_poison` is set.
        """
        item = {
            "asset_id": asset_id,
            "state": State.REJECTED.value,
            "state_shard": state_shard(State.REJECTED, asset_id),
            "last_error": f"poison message: {reason}",
            "attempts": 0,
            "throttles": 0,
            "created_at": now,
            "updated_at": now,
        }
        if isinstance(source_url, str) and source_url:
            item["source_url"] = source_url[:4096]
        try:
            self.client.put_item(
                TableName=self.table,
                Item=typed(item),
                ConditionExpression="attribute_not_exists(asset_id)",
            )
            return True
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
        self.client.update_item(
            TableName=self.table,
            Key=typed({"asset_id": asset_id}),
            UpdateExpression="SET last_poison = :reason, last_poison_at = :now",
            ExpressionAttributeValues=typed({":reason": reason, ":now": now}),
        )
        return False


def _settle_request(
    asset_id: str,
    target: State,
    remote_id: str | None,
    now: float,
    provider_duration_s: float | None,
    error: str | None,
) -> dict:
    """The conditional update that settles an asset (see Ledger.settle), as request fields."""
    if target not in (State.READY, State.REJECTED):
        raise ValueError(f"settle moves to ready or rejected, not {target}")
    values: dict = {
        ":state": target.value,
        ":shard": state_shard(target, asset_id),
        ":now": now,
        ":ready": State.READY.value,
        ":rejected": State.REJECTED.value,
    }
    sets = ["#state = :state", "state_shard = :shard", "updated_at = :now", "settled_at = :now"]
    condition = "attribute_exists(asset_id) AND NOT #state IN (:ready, :rejected)"
    if remote_id:
        values[":rid"] = remote_id
        sets.append("remote_id = :rid")
        condition += " AND (attribute_not_exists(remote_id) OR remote_id = :rid)"
    if provider_duration_s is not None:
        values[":pdur"] = provider_duration_s
        sets.append("provider_duration_s = :pdur")
    remove = ["lease_token", "lease_until", "retry_after"]
    if error is not None:
        values[":err"] = error
        sets.append("last_error = :err")
    elif target is State.READY:
        # A good asset carries no error: earlier holds and 429s live on in `throttles` and `attempts`.
        remove.append("last_error")
    return {
        "UpdateExpression": "SET " + ", ".join(sets) + " REMOVE " + ", ".join(remove),
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#state": "state"},
        "ExpressionAttributeValues": typed(values),
    }
