"""The uploader's part of the ledger: the claim, and the fenced writes its holder makes afterwards.

A claim is a single conditional UpdateItem that also creates the item of an asset the
ledger has never seen (a message pushed straight to the paced queue). Every later write
by the claimant is fenced by its lease token (`rules.FENCED`). While claimed, the asset
sits in reconcile's `heal` lane from its lease's end; each outcome moves it to the lane
that fits (processing: `poll`; deferred: `heal` from its retry time) or out of the lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from .. import due
from ..due import Family
from ..dynamo import is_condition_failure, to_item, typed
from ..messages import AssetMessage
from ..states import State
from ..tracks import needs_tracks_worker
from . import rules
from .table import LedgerTable, Update, WriteResult, state_shard
from .upgrade import SCHEMA, SCHEMA_VERSION

log = Logger(child=True)


@dataclass(frozen=True)
class Claimed:
    token: str
    attempts: int
    previous: dict | None  # the item before the claim; None for a new asset
    source_url: str  # what the ledger holds: the first URL it saw for this id
    claimed_at: float = 0.0


@dataclass(frozen=True)
class Refused:
    item: dict  # the item as it stood when the condition failed


CLAIMABLE = (
    "attribute_not_exists(asset_id)"
    " OR (#state IN (:pending, :inventoried) AND (attribute_not_exists(retry_after) OR retry_after <= :now))"
    " OR (#state = :failed AND retry_after <= :now)"
    " OR (#state = :uploading AND lease_until < :now)"
)


class Claims(LedgerTable):
    def claim(
        self, msg: AssetMessage, now: float, lease_until: float, token: str, tracks_due: bool | None = None
    ) -> Claimed | Refused:
        """Take the asset for one upload attempt, creating its item if it is new.

        Eligible: a new asset; pending/inventoried whose retry time (if any) has passed;
        failed whose retry time has passed; uploading whose lease has expired (the pure
        predicate `fate.claim_eligible` says the same). `lookup_from` keeps the time of the
        first claim that may have created a video, the bound of a later lookup. `tracks_due`: the row gives the
        tracks worker work at this provider (tracks.needs_tracks_worker; by default, as any provider's).
        """
        update = (
            Update()
            .to_state(State.UPLOADING, msg.asset_id, now)
            .set("lease_token", token)
            .set("lease_until", lease_until)
            .add("attempts", 1)
            .set_if_absent("throttles", 0)
            .set_if_absent("source_url", msg.source_url)
            .set_if_absent("created_at", now)
            .set_if_absent("lookup_from", now)
            .set("claimed_at", now)
            .to_lane(Family.HEAL, msg.asset_id, lease_until)
            .remove("retry_after")
        )
        update.message_fields(msg, keep_existing=True)
        if needs_tracks_worker(msg) if tracks_due is None else tracks_due:  # reconcile's backstop, until settled
            update.set(due.TRACKS_LANE, due.lane(Family.TRACKS, msg.asset_id)).set(due.TRACKS_DUE_AT, lease_until)
        values = {
            ":now": now,
            ":uploading": State.UPLOADING.value,
            ":pending": State.PENDING.value,
            ":inventoried": State.INVENTORIED.value,
            ":failed": State.FAILED.value,
        }
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": msg.asset_id}),
                **update.request(CLAIMABLE, **values),
                ReturnValues="ALL_OLD",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return Refused(to_item(exc.response.get("Item")) or {})
            raise
        previous = to_item(resp.get("Attributes"))
        if previous is None:
            self._stamp_new(msg.asset_id)
        attempts = int((previous or {}).get("attempts", 0)) + 1
        source = (previous or {}).get("source_url") or msg.source_url
        return Claimed(token=token, attempts=attempts, previous=previous, source_url=source, claimed_at=now)

    def _stamp_new(self, asset_id: str) -> None:
        """An item this claim made (its message came before intake recorded it: one an earlier release sent
        to the work queue) is this release's: its schema version. Not in the claim's own write, since an
        item an earlier release wrote must stay below the version there until `migrator upgrade` fills it."""
        try:
            self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": asset_id}),
                UpdateExpression="SET #schema = :version",
                ConditionExpression="attribute_exists(asset_id) AND attribute_not_exists(#schema)",
                ExpressionAttributeNames={"#schema": SCHEMA},
                ExpressionAttributeValues=typed({":version": SCHEMA_VERSION}),
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise

    # --- fenced writes by the claimant ---------------------------------------------------

    def mark_processing(
        self,
        asset_id: str,
        token: str,
        remote_id: str,
        now: float,
        throttles: int = 0,
        notes: Sequence[str] = (),
        playback: str | None = None,
        privacy: str | None = None,
    ) -> WriteResult:
        """The provider has the video: reconcile polls it if no webhook comes. `notes`: what its create
        could not carry as the row has it (`fidelity_notes`, for the report; the last create's only);
        `playback`: how the provider plays it, public or signed (the audit checks it against the row);
        `privacy`: the narrower privacy the source said at the create, which the create carried."""
        update = Update().set("remote_id", remote_id).set("processing_at", now).to_lane(Family.POLL, asset_id, now)
        # preparing_since: a wait for the source's file ends here, so a later one (a retry days on, a
        # master prepared again) is timed from its own start.
        update.remove("retry_after", "last_error", "polls", "poll_misses", "preparing_since")
        if notes:
            update.set("fidelity_notes", list(notes))
        else:
            update.remove("fidelity_notes")
        if playback is not None:
            update.set("playback", playback)
        if privacy is not None:
            update.set("privacy", privacy)
        if throttles:
            update.add("throttles", throttles)
        return self._fenced(asset_id, token, State.PROCESSING, now, update)

    def release_throttled(
        self,
        asset_id: str,
        token: str,
        back_to: State,
        retry_at: float,
        error: str,
        now: float,
        count: bool = True,
        lookup_from: float | None = None,
        wait_ended: bool = False,
    ) -> WriteResult:
        """Give the claim back untried: the attempt is uncounted; a 429 is counted as a
        throttle (`count`), a hold that kept us from calling at all as a hold. Both are
        pacing, which the receive-based deferral floor does not charge to the message.
        `wait_ended`: the source's file was ready this time, so its wait's start goes."""
        update = Update().set("retry_after", retry_at).set("last_error", error).add("attempts", -1)
        update.add("throttles" if count else "holds", 1)
        if wait_ended:
            update.remove("preparing_since")
        return self._released(asset_id, token, back_to, retry_at, now, update, lookup_from)

    def give_back(
        self, asset_id: str, token: str, back_to: State, retry_at: float, error: str, now: float
    ) -> WriteResult:
        """The worker failed before any create was sent: nothing can exist at the provider, so
        the attempt is given back and the lease dropped; the message comes back at `retry_at`."""
        update = Update().set("retry_after", retry_at).set("last_error", error).add("attempts", -1)
        return self._released(asset_id, token, back_to, retry_at, now, update, None)

    def _released(self, asset_id, token, back_to, retry_at, now, update: Update, lookup_from) -> WriteResult:
        update.to_lane(Family.HEAL, asset_id, retry_at)
        if lookup_from is not None:
            update.set("lookup_from", lookup_from)
        return self._fenced(asset_id, token, back_to, now, update)

    def mark_failed(
        self,
        asset_id: str,
        token: str,
        error: str,
        retry_at: float | None,
        now: float,
        throttles: int = 0,
        lookup_from: float | None = None,
        wait_ended: bool = False,
    ) -> WriteResult:
        """Failed: retryable when `retry_at` is set (its message comes back then), failed for
        good when it is None (the operator's retry decides: out of the due lanes). `wait_ended`:
        the source's file was ready this time, so its wait's start goes."""
        update = Update().set("last_error", error)
        if wait_ended:
            update.remove("preparing_since")
        if retry_at is None:
            update.remove("retry_after").off_lanes()
        else:
            update.set("retry_after", retry_at).to_lane(Family.HEAL, asset_id, retry_at)
        if throttles:
            update.add("throttles", throttles)
        if lookup_from is not None:
            update.set("lookup_from", lookup_from)
        return self._fenced(asset_id, token, State.FAILED, now, update)

    def mark_rejected(self, asset_id: str, token: str, error: str, now: float, throttles: int = 0) -> WriteResult:
        update = Update().set("last_error", error).remove("retry_after", "preparing_since").off_lanes()
        if throttles:
            update.add("throttles", throttles)
        return self._fenced(asset_id, token, State.REJECTED, now, update)

    def _fenced(self, asset_id: str, token: str, state: State, now: float, update: Update) -> WriteResult:
        update.to_state(state, asset_id, now).remove("lease_token", "lease_until")
        result = self._apply(asset_id, update, rules.FENCED, **rules.fenced_values(token))
        if not result.won:
            log.warning(
                "lost the lease before writing %s: the asset is now %s",
                state.value,
                (result.current or {}).get("state", "gone"),
                extra={"asset_id": asset_id, "wanted_state": state.value},
            )
        return result

    # --- poison ----------------------------------------------------------------------------

    def record_poison(self, asset_id: str, reason: str, source_url: object, now: float) -> bool:
        """Record a poison message for an id we can key on.

        A new id becomes a rejected item with the reason. An existing item keeps its
        state (a malformed duplicate must not undo good work); only `last_poison` is set.
        """
        item: dict[str, Any] = {
            "asset_id": asset_id,
            "state": State.REJECTED.value,
            "state_shard": state_shard(State.REJECTED, asset_id),
            "last_error": f"poison message: {reason}",
            "attempts": 0,
            "throttles": 0,
            "created_at": now,
            "updated_at": now,
            SCHEMA: SCHEMA_VERSION,
        }
        if isinstance(source_url, str) and source_url:
            item["source_url"] = source_url[:4096]
        try:
            self.client.put_item(
                TableName=self.table, Item=typed(item), ConditionExpression="attribute_not_exists(asset_id)"
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
