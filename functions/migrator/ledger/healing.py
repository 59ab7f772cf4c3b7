"""Reconcile's part of the ledger: heal what was lost, remember each poll, give up where nothing moves.

Every write here is conditioned on the item exactly as reconcile read it (or on its state),
so of two reconcile runs, or a reconcile and an uploader, at most one acts on what it saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..due import Family
from ..states import State
from . import rules
from .table import LedgerTable, Update, WriteResult


class Healing(LedgerTable):
    def mark_healed(self, seen: Mapping[str, Any], now: float) -> WriteResult:
        """The marker a heal writes before it enqueues: the asset exactly as it was read.

        The condition is the item's `updated_at` (and state) as seen: a claim, a release,
        a settle or another reconcile's heal all change it, so of two reconcile runs, or
        a reconcile and an uploader, at most one acts on what it saw. An uploading asset
        is only healed while its lease is still expired: a live lease is never taken.
        The healed asset waits in the `queued` lane for its new message.
        """
        update = Update().set("updated_at", now).set("healed_at", now).set("enqueued_at", now).add("heals", 1)
        update.to_lane(Family.QUEUED, seen["asset_id"], now)
        condition = "#state = :seen_state AND updated_at = :seen_at"
        if seen["state"] == State.UPLOADING.value:
            condition += " AND lease_until < :now"
        else:
            condition += f" AND {rules.UNLEASED}"
        values = {":seen_state": seen["state"], ":seen_at": seen["updated_at"], ":now": now}
        return self._apply(seen["asset_id"], update, condition, "ALL_NEW", **values)

    def park(self, seen: Mapping[str, Any], now: float, reason: str) -> WriteResult:
        """An asset reconcile cannot re-send (its record no longer makes a valid message):
        failed for good with the reason, out of the lanes, for the operator."""
        update = Update().to_state(State.FAILED, seen["asset_id"], now).set("last_error", reason)
        update.remove("retry_after").off_lanes()
        condition = "#state = :seen_state AND updated_at = :seen_at"
        values = {":seen_state": seen["state"], ":seen_at": seen["updated_at"]}
        return self._apply(seen["asset_id"], update, condition, "ALL_NEW", **values)

    def note_polled(self, asset_id: str, now: float, note: str, due_at: float) -> WriteResult:
        """A processing asset the provider has not finished: remember when we asked, and when
        to ask next (`due_at`, see due.next_poll_at). No state change."""
        update = Update().set("polled_at", now).set("poll_note", note).add("polls", 1).remove("poll_misses")
        update.set("due_at", due_at)
        return self._processing(asset_id, update)

    def note_poll_miss(self, asset_id: str, now: float, note: str, max_misses: int) -> WriteResult:
        """A poll that told us nothing (no such video, an unreadable status): counted, and on the
        `max_misses`-th the asset leaves `processing` as failed for good with the reason, so it
        stops taking the poll budget and waits for the operator's retry (which looks it up first)."""
        update = Update().set("polled_at", now).set("poll_note", note).add("polls", 1).add("poll_misses", 1)
        counted = self._processing(asset_id, update.set("due_at", now), returns="ALL_NEW")
        misses = int((counted.current or {}).get("poll_misses", 0))
        if not counted.won or misses < max_misses:
            return counted
        error = f"provider: {note} on {misses} polls in a row; use migrator retry to create it again"
        update = Update().to_state(State.FAILED, asset_id, now).set("last_error", error)
        condition = "#state = :processing AND poll_misses >= :max"
        return self._apply(
            asset_id,
            update.remove("retry_after").off_lanes(),
            condition,
            "ALL_NEW",
            **{":processing": State.PROCESSING.value, ":max": max_misses},
        )

    def fail_stuck(self, asset_id: str, now: float, reason: str) -> WriteResult:
        """A processing asset past the longest a provider may take (`MaxProcessingSeconds`):
        failed for good with the reason, so it stops waiting for an outcome that will not come."""
        update = Update().to_state(State.FAILED, asset_id, now).set("last_error", reason)
        return self._processing(asset_id, update.remove("retry_after").off_lanes(), returns="ALL_NEW")

    def _processing(self, asset_id: str, update: Update, returns: str = "NONE") -> WriteResult:
        return self._apply(asset_id, update, "#state = :processing", returns, **{":processing": "processing"})
