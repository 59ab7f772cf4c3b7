"""Loading: how assets enter the ledger and how the operator arms them again.

- `record_intake`: the intake function records each message that reaches the stack, before
  the paced queue sees it, so every loaded asset has a durable record from the first
  minute (status counts it; reconcile re-sends it if its message outlives the queue).
- `stage` (`migrator load --stage`) records an asset without a message, for a probe first;
  `mark_inventoried` / `reject_unprobed` are the probe's verdicts.
- `rearm` (`migrator retry`) makes an asset claimable again before its message is sent.

An asset with a message on its way sits in reconcile's `queued` lane from `enqueued_at`;
a staged one sits in no lane: it waits for the operator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..due import Family
from ..messages import PRIVACY_WIDTH, AssetMessage
from ..states import State
from . import rules
from .table import LedgerTable, Update, WriteResult
from .upgrade import SCHEMA, SCHEMA_VERSION

# States an operator's retry can re-arm (rejected only on the operator's explicit choice).
REARMABLE = (State.FAILED, State.REJECTED, State.PENDING, State.INVENTORIED)


@dataclass(frozen=True)
class Recorded:
    """What intake found: `new` when this message created the item; else the item as it stood."""

    new: bool
    item: dict = field(default_factory=dict)  # empty when `new`


class Loading(LedgerTable):
    def record_intake(self, msg: AssetMessage, now: float) -> Recorded:
        """Record a new asset as pending with its message on the way (the `queued` lane);
        an asset the ledger knows is left as it is and returned."""
        update = _new_asset(msg, now).set("enqueued_at", now).to_lane(Family.QUEUED, msg.asset_id, now)
        result = self._apply(msg.asset_id, update, "attribute_not_exists(asset_id)")
        return Recorded(True) if result.won else Recorded(False, result.current or {})

    def narrow_privacy(self, asset_id: str, privacy: str, now: float) -> WriteResult:
        """A later row says the video is narrower than the ledger has it (made private at its source after
        the first inventory): recorded, while no create has been sent for it yet (pending, inventoried, failed
        with a retry to come: the next claim reads it), and only over a wider privacy, never a narrower one."""
        wider = [p for p, width in PRIVACY_WIDTH.items() if width > PRIVACY_WIDTH[privacy]]
        if not wider:
            return WriteResult(False)
        update = Update().set("privacy", privacy).set("updated_at", now)
        name = update.path("privacy")
        named = [p for p in wider if p is not None]
        values = {f":w{i}": p for i, p in enumerate(named)}
        over = " OR ".join(
            ([f"attribute_not_exists({name})"] if None in wider else [])
            + ([f"{name} IN ({', '.join(values)})"] if named else [])
        )
        # No video made yet (no remote_id): a narrower privacy is worth keeping only for a create to come.
        condition = f"#state IN (:pending, :inventoried, :failed) AND {rules.UNLEASED}"
        condition += f" AND attribute_not_exists(remote_id) AND ({over})"
        states = {
            ":pending": State.PENDING.value,
            ":inventoried": State.INVENTORIED.value,
            ":failed": State.FAILED.value,
        }
        return self._apply(asset_id, update, condition, **states, **values)

    def mark_queued(self, seen: Mapping[str, Any], now: float) -> WriteResult:
        """A staged asset (no message yet) whose message is now on its way: into the `queued` lane.
        Refused if it moved since `seen` was read or is already in a lane."""
        update = Update().set("enqueued_at", now).set("updated_at", now)
        update.to_lane(Family.QUEUED, seen["asset_id"], now)
        condition = f"#state = :seen AND attribute_not_exists(due_lane) AND {rules.UNLEASED}"
        return self._apply(seen["asset_id"], update, condition, **{":seen": seen["state"]})

    def stage(self, msg: AssetMessage, now: float) -> bool:
        """Record a new asset as pending without enqueuing it; False when the id is known already."""
        result = self._apply(msg.asset_id, _new_asset(msg, now), "attribute_not_exists(asset_id)")
        return result.won

    def mark_inventoried(self, asset_id: str, duration_s: float, now: float) -> WriteResult:
        """pending -> inventoried with the probed duration; loses to anything that moved it first."""
        update = Update().to_state(State.INVENTORIED, asset_id, now).set("duration_s", duration_s)
        return self._from_pending(asset_id, update.remove("last_error"))

    def reject_unprobed(self, asset_id: str, reason: str, now: float) -> WriteResult:
        """pending -> rejected: the probe found no video stream, or could not read the source."""
        update = Update().to_state(State.REJECTED, asset_id, now).set("last_error", reason)
        return self._from_pending(asset_id, update.remove("retry_after").off_lanes())

    def _from_pending(self, asset_id: str, update: Update) -> WriteResult:
        condition = f"#state = :pending AND {rules.UNLEASED}"
        return self._apply(asset_id, update, condition, **{":pending": State.PENDING.value})

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
        # An operator's retry starts afresh: any wait for a file the source prepares is timed anew.
        update = Update().set("enqueued_at", now).to_lane(Family.QUEUED, asset_id, now).remove("preparing_since")
        if state in (State.FAILED, State.REJECTED):
            update.to_state(State.FAILED, asset_id, now).set("retry_after", now)
            update.set_from("retry_base", "attempts", 0)
        else:
            update.set("updated_at", now).remove("retry_after")
        if state is State.REJECTED:
            # The provider's errored video answers the old Idempotency-Key: the retry needs a new one.
            update.add("generation", 1)
        condition = f"#state = :seen AND {rules.UNLEASED}"
        return self._apply(asset_id, update, condition, "ALL_NEW", **{":seen": state.value})


def _new_asset(msg: AssetMessage, now: float) -> Update:
    """The fields of an asset the ledger has not seen, as pending."""
    update = Update().to_state(State.PENDING, msg.asset_id, now)
    update.set("source_url", msg.source_url).set("attempts", 0).set("throttles", 0).set("created_at", now)
    update.set(SCHEMA, SCHEMA_VERSION)  # made by this release: nothing for `migrator upgrade` to fill in
    return update.message_fields(msg)
