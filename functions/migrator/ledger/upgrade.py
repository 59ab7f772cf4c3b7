"""What an item written by an earlier release lacks that this release reads, and the write that fills it in.

The ledger outlives the stack: operators `sam deploy` a new release while a migration of weeks goes on,
and the items already written stay as that release wrote them. Each release that adds a field the code
then relies on moves `SCHEMA_VERSION` on and says here how to derive the field from what an older item
holds; `migrator upgrade` walks the ledger once and applies `backfill` to every item below the version
(`migrator doctor` says when that walk is due). Items this release creates carry the version already.

- 1 (no `schema` attribute): written before versions were kept. Items of a release before the due lanes
  lack `due_lane`/`due_at` (so reconcile would never see them again: not healed, polled, or re-sent),
  `lookup_from` (so a lookup after a crash searched only from the last claim, and a video an earlier
  try made could be missed), and the tracks lane.
- 2: every field this release reads is there.

A `lookup_from` on an item below the version was written by this release's claim (the claim sets it where
it is absent), not by the release that made the earlier tries: it is that claim's time, later than those
tries, so it is never trusted there. `lookup_bound` reaches back to the item's earliest trace instead,
until `migrator upgrade` writes that bound and the version, after which the item's own value stands.

`backfill` is pure: it reads the item and returns the `Update` and its condition values, or None.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import due
from ..due import Family
from ..states import State
from ..tracks import settled
from .table import LedgerTable, Update, WriteResult

SCHEMA_VERSION = 2
SCHEMA = "schema"  # the attribute: the version of the release whose rules the item satisfies


def version_of(item: Mapping) -> int:
    value = item.get(SCHEMA)
    try:
        return int(value) if value is not None else 1
    except (TypeError, ValueError):
        return 1


def _number(item: Mapping, name: str) -> float | None:
    value = item.get(name)
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def earliest_try(item: Mapping) -> float | None:
    """The earliest moment a create for the asset can have been sent: the first record of it the item
    keeps (its creation, its first claim, its first enqueue), whichever is oldest."""
    times = [t for t in (_number(item, k) for k in ("created_at", "claimed_at", "enqueued_at")) if t is not None]
    return min(times) if times else None


# The bound of a lookup after tries that left no time on their item: from the start of the provider's list.
FROM_THE_START = 0.0


def had_tries(item: Mapping) -> bool:
    """Whether an earlier try may have sent a create: an attempt counted (a claim counts one, and a worker
    that failed before any create gives it back, so a claim time alone is no trace of a create)."""
    return (_number(item, "attempts") or 0) > 0


def lookup_bound(item: Mapping | None) -> float | None:
    """How far back a lookup for what an earlier try created must reach, from the item before a claim:
    its `lookup_from` where this release wrote the item (the first claim that may have created, moved on
    only by a lookup that completed); for an item an earlier release wrote with tries, the earliest trace
    of them (a `lookup_from` there is a later claim's time and can only narrow it: see the module's
    docstring), FROM_THE_START when none was recorded. None: nothing to bound (no item)."""
    if not item:
        return None
    recorded = _number(item, "lookup_from")
    if version_of(item) >= SCHEMA_VERSION or not had_tries(item):
        return recorded if recorded is not None else _number(item, "claimed_at")
    earliest = earliest_try(item)
    if earliest is None:
        return FROM_THE_START
    return earliest if recorded is None else min(recorded, earliest)


def missing_lane(item: Mapping, now: float) -> tuple[Family, float] | None:
    """The due lane (and from when) today's writes would have filed the item in, for one that has none."""
    if item.get("due_lane"):
        return None
    state = item.get("state")
    retry_at = _number(item, "retry_after")
    if state == State.UPLOADING.value:  # a worker's lease: healed once it runs out
        return Family.HEAL, _number(item, "lease_until") or _number(item, "claimed_at") or now
    if state in (State.PENDING.value, State.INVENTORIED.value, State.FAILED.value) and retry_at is not None:
        return Family.HEAL, retry_at  # a deferred message that should come back at its retry time
    if state in (State.PENDING.value, State.INVENTORIED.value) and _number(item, "enqueued_at") is not None:
        return Family.QUEUED, _number(item, "enqueued_at") or now  # a message sent, no claim seen since
    if state == State.PROCESSING.value:  # the provider has it: polled if no webhook comes
        return Family.POLL, _number(item, "processing_at") or _number(item, "updated_at") or now
    return None  # staged (waiting for the operator), failed for good, or settled: no lane, as today


def tracks_unsettled(item: Mapping) -> bool:
    """Whether a track (or an extra) waits for more work: not attached, noted, or failed for good."""
    states = item.get("track_states")
    if not isinstance(states, Mapping):
        return False
    return any(isinstance(entry, Mapping) and not settled(entry) for entry in states.values())


def backfill(item: Mapping, now: float) -> Update | None:
    """The write that brings `item` to SCHEMA_VERSION (None when it is there already)."""
    if version_of(item) >= SCHEMA_VERSION:
        return None
    asset_id = str(item["asset_id"])
    update = Update().set(SCHEMA, SCHEMA_VERSION)
    lane = missing_lane(item, now)
    if lane is not None:
        update.to_lane(lane[0], asset_id, lane[1])
    if had_tries(item):  # never a claim's later time: the earliest trace of the earlier release's tries
        bound = lookup_bound(item)
        if bound is not None and bound != _number(item, "lookup_from"):
            update.set("lookup_from", bound)
    if tracks_unsettled(item) and not item.get(due.TRACKS_LANE):
        update.set(due.TRACKS_LANE, due.lane(Family.TRACKS, asset_id))
        update.set(due.TRACKS_DUE_AT, _number(item, "updated_at") or now)
    return update


class Upgrading(LedgerTable):
    """`migrator upgrade`'s write: one item brought to SCHEMA_VERSION."""

    def upgrade_item(self, item: Mapping, now: float) -> WriteResult:
        """Apply `backfill` to `item` as it was read: refused (and nothing written) when it has moved since,
        its state or its last change not what was read, or when it is at the version already."""
        update = backfill(item, now)
        if update is None:
            return WriteResult(False, dict(item))
        name = update.path(SCHEMA)
        values: dict = {":version": SCHEMA_VERSION, ":seen_state": item.get("state")}
        condition = f"(attribute_not_exists({name}) OR {name} < :version) AND #state = :seen_state"
        if item.get("updated_at") is not None:
            condition += f" AND {update.path('updated_at')} = :seen_updated"
            values[":seen_updated"] = item["updated_at"]
        else:
            condition += f" AND attribute_not_exists({update.path('updated_at')})"
        return self._apply(str(item["asset_id"]), update, condition, "ALL_NEW", **values)
