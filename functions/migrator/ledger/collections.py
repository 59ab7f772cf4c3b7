"""Each collection's own ledger item, so a crash or a lost answer never makes a second one at the target.

A row's collections (folders, showcases, playlists, ...) are made once at the target for every video in them.
Each is an item of its own, `#collection#<collection key>` (extras.collection_key: the source platform and the
collection's id there; `#` is the prefix reserved for control items, which the report, the upgrade and the
tally skip), holding the source's id, name and kind, its `state` (pending, created, failed), the target's
`remote_collection_id` once made, and a claim lease like an asset's:

- `claim_collection`: one conditional write makes the item if it is new and takes it for one try (pending
  with no live lease and its retry time passed, or failed with one), its attempt counted;
- the holder looks the collection up at the target (a lost answer may have made it), else creates it, then
  `record_collection`, fenced by the claim's token: created, with the target's id; or `release_collection`
  with the try's outcome (`tracks.decide`'s move: back to pending or failed, with its retry time);
- `add_member`: where the target keeps an order, each placed video's source position (`members`, bounded by
  MAX_ORDERED_MEMBERS), so each placement can set the order of every member placed so far.

The memberships themselves are the videos' own `track_states` entries (kind collection): they wait while
their collection is not created yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..tracks import TrackMove, TrackState
from .table import ControlClaim, ControlRefused, LedgerTable, Update, WriteResult

PREFIX = "#collection#"
# Members whose positions an ordered collection's item keeps (about 40 bytes each: far below DynamoDB's 400 KB
# item). Past it a placement is made and its order noted, not set: no target documents ordering more in one call.
MAX_ORDERED_MEMBERS = 2000


class CollectionState(StrEnum):
    PENDING = "pending"
    CREATED = "created"
    FAILED = "failed"


def collection_item_id(key: str) -> str:
    return f"{PREFIX}{key}"


@dataclass(frozen=True)
class CollectionSource:
    """What the source says of a collection (from the row that names it)."""

    platform: str
    source_id: str
    name: str
    kind: str


# A claim's item is after the claim (attempts counted); a refusal's as it stood: created already, held by another
# pass, failed for good, or waiting for its retry.
CollectionClaim = ControlClaim
CollectionRefused = ControlRefused


class Collections(LedgerTable):
    def collection(self, key: str) -> dict | None:
        return self.get(collection_item_id(key))

    def claim_collection(
        self, key: str, source: CollectionSource, token: str, now: float, lease_until: float
    ) -> CollectionClaim | CollectionRefused:
        """Make the collection's item if it is new, and take it for one try (see the module's docstring)."""
        update = Update().set("kind", "collection").set("lease_token", token).set("lease_until", lease_until)
        update.set_if_absent("state", CollectionState.PENDING.value).set("updated_at", now).add("attempts", 1)
        update.set_if_absent("source_platform", source.platform).set_if_absent("source_id", source.source_id)
        update.set_if_absent("name", source.name).set_if_absent("collection_kind", source.kind)
        update.set_if_absent("created_at", now)
        st, lease, retry = update.path("state"), update.path("lease_until"), update.path("retry_after")
        v = update.value
        free = f"(attribute_not_exists({lease}) OR {lease} < {v(now)})"
        due = f"(attribute_not_exists({retry}) OR {retry} <= {v(now)})"
        condition = (
            f"attribute_not_exists(asset_id) OR ({free} AND (({st} = {v(CollectionState.PENDING.value)} AND {due})"
            f" OR ({st} = {v(CollectionState.FAILED.value)} AND {retry} <= {v(now)})))"
        )
        result = self._apply(collection_item_id(key), update, condition, "ALL_NEW")
        if not result.won:
            return CollectionRefused(result.current or {})
        return CollectionClaim(token, result.current or {})

    def record_collection(self, key: str, token: str, remote_collection_id: str, now: float) -> WriteResult:
        """The collection is made at the target, as `remote_collection_id`: written only while the claim holds."""
        update = Update().set("state", CollectionState.CREATED.value).set("remote_collection_id", remote_collection_id)
        update.set("updated_at", now).set("made_at", now)
        update.remove("lease_token", "lease_until", "retry_after", "error")
        condition = f"{update.path('lease_token')} = {update.value(token)}"
        return self._apply(collection_item_id(key), update, condition, "ALL_NEW")

    def release_collection(self, key: str, token: str, move: TrackMove, now: float) -> WriteResult:
        """A try that made nothing: back to pending (nothing spent: a 429) or failed (for good without a retry
        time), with why; written only while the claim holds."""
        state = CollectionState.PENDING if move.state is TrackState.PENDING else CollectionState.FAILED
        update = Update().set("state", state.value).set("updated_at", now).remove("lease_token", "lease_until")
        if move.give_back:
            update.add("attempts", -1)
        if move.retry_at is not None:
            update.set("retry_after", move.retry_at)
        else:
            update.remove("retry_after")
        if move.error:
            update.set("error", move.error)
        condition = f"{update.path('lease_token')} = {update.value(token)}"
        return self._apply(collection_item_id(key), update, condition, "ALL_NEW")

    def add_member(self, key: str, remote_video_id: str, position: int, now: float) -> WriteResult:
        """A placed video's source position, kept for the order of the collection (ordered targets only); refused
        once MAX_ORDERED_MEMBERS are kept (then the order is noted, not set)."""
        update = Update().set(("members", remote_video_id), position).set("updated_at", now)
        update.add("member_count", 1)
        count, st = update.path("member_count"), update.path("state")
        condition = (
            f"{st} = {update.value(CollectionState.CREATED.value)} AND (attribute_not_exists({count})"
            f" OR {count} < {update.value(MAX_ORDERED_MEMBERS)})"
        )
        # A map entry can only be set where the map exists: made empty with the first member.
        first = Update().set("members", {remote_video_id: position}).set("member_count", 1).set("updated_at", now)
        made = self._apply(
            collection_item_id(key),
            first,
            f"{first.path('state')} = {first.value(CollectionState.CREATED.value)}"
            f" AND attribute_not_exists({first.path('members')})",
            "ALL_NEW",
        )
        if made.won:
            return made
        if (made.current or {}).get("members") is None:
            return made  # not created (or gone): nothing to add to
        if remote_video_id in (made.current or {}).get("members", {}):
            return WriteResult(True, made.current)  # placed before (a retried pass): its position stands
        return self._apply(collection_item_id(key), update, condition, "ALL_NEW")

    def claim_order(self, key: str, token: str, now: float, lease_until: float) -> dict | None:
        """Take the collection for one ordering (placements order it one at a time, so the last one to order sees
        every member placed before it): the item with its members, or None while another placement holds it."""
        update = Update().set("order_token", token).set("order_until", lease_until)
        until, st = update.path("order_until"), update.path("state")
        condition = (
            f"{st} = {update.value(CollectionState.CREATED.value)}"
            f" AND (attribute_not_exists({until}) OR {until} < {update.value(now)})"
        )
        result = self._apply(collection_item_id(key), update, condition, "ALL_NEW")
        return result.current if result.won else None

    def release_order(self, key: str, token: str) -> WriteResult:
        update = Update().remove("order_token", "order_until")
        return self._apply(collection_item_id(key), update, f"{update.path('order_token')} = {update.value(token)}")
