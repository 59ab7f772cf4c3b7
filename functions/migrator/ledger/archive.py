"""Each original's copy to the archive bucket (issue 43), in a ledger item of its own, so a copy of tens of GB can
span invocations and a crash re-copies only the part in flight.

The copy's working state is `#archive#<asset id>` (`#` is the prefix of control items, which the report, the
upgrade and the tally skip): its `state` (archive/decide.ArchiveState), a claim lease like an asset's, the open
upload (`upload_id`, `key`, the plan's `size` and `part_bytes`), every part sent (`parts`: its SHA-256 and ETag,
in order), `copies` made, `mints` of the part in flight, and on the end the object's checksum or the reason.
It stays apart from the asset's item so that a part's write costs the archive item's size, not the asset's, and
the asset's writers never meet it:

- `owe_archive`: the uploader owes the copy once the provider has the video: the item is made pending and filed
  in reconcile's archive lane (`due.Family.ARCHIVE`), so a lost archive message is sent again;
- `claim_archive`: one conditional write makes the item if it is new and takes it for one pass (not archived,
  no live lease, its retry time passed), the pass counted;
- `record_upload`: a copy starts (again, after a restart): the upload, the plan, no parts, `copies` + 1;
- `record_part`: one part sent, appended only where it is the next (`size(parts)` is its number less one), so
  two passes can never record a part twice or out of order; fenced by the claim's token;
- `count_mint`: a fresh source link asked for the part in flight (`decide.MAX_MINTS_PER_PART` bounds them);
- `finish_archive`: archived (with the object's checksum), failed (with the reason, and a retry time while it
  may be tried again) or copying (a later pass goes on), fenced by the token;
- `rearm_archive`: the operator's `migrator retry --archive`: a copy failed for good (and no pass holding it) is
  pending again with a fresh budget of copies, and the asset's own item says so;
- `note_archive`: the copy's state as the asset's own item shows it (`archive_state`, `archive_key`,
  `archive_bytes`, `archive_sha256`, `archive_error`), for `status`, `report` and `show`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..archive.decide import ArchiveState
from ..due import Family
from .table import ControlClaim, ControlRefused, LedgerTable, Update, WriteResult

PREFIX = "#archive#"
ARCHIVE_LANE = Family.ARCHIVE


def archive_item_id(asset_id: str) -> str:
    return f"{PREFIX}{asset_id}"


# A claim's item is after the claim; a refusal's as it stood: archived, held by another pass, or waiting.
ArchiveClaim = ControlClaim
ArchiveRefused = ControlRefused


@dataclass(frozen=True)
class ArchiveEnd:
    """How a pass leaves the copy: its state, why (failed), when to try again (failed or pending), and the fields
    it records besides (an archived object's `sha256` and `bytes`)."""

    state: ArchiveState
    error: str | None = None
    retry_after: float | None = None
    fields: dict | None = None


class Archives(LedgerTable):
    def archive(self, asset_id: str) -> dict | None:
        return self.get(archive_item_id(asset_id))

    def owe_archive(self, asset_id: str, now: float) -> WriteResult:
        """The copy is owed: a new item, pending, in the archive lane from now (an item already made is left)."""
        update = Update().set("kind", "archive").set("source_asset", asset_id).set("state", ArchiveState.PENDING.value)
        update.set("created_at", now).set("updated_at", now)
        update.to_lane(ARCHIVE_LANE, asset_id, now)
        return self._apply(archive_item_id(asset_id), update, "attribute_not_exists(asset_id)")

    def mark_archive_healed(self, seen: dict, now: float) -> WriteResult:
        """Reconcile's marker before it sends a silent copy's message again: conditioned on `due_at` as read, so
        of two runs (or a run and the worker) at most one acts on it."""
        update = Update().set("due_at", now).add("heals", 1)
        return self._apply(str(seen["asset_id"]), update, f"{update.path('due_at')} = {update.value(seen['due_at'])}")

    def claim_archive(self, asset_id: str, token: str, now: float, lease_until: float) -> ArchiveClaim | ArchiveRefused:
        """Make the copy's item if it is new, and take it for one pass (see the module's docstring)."""
        update = Update().set("kind", "archive").set("source_asset", asset_id).set("lease_token", token)
        update.set("lease_until", lease_until).set("updated_at", now).add("passes", 1)
        update.set_if_absent("state", ArchiveState.PENDING.value).set_if_absent("created_at", now)
        update.to_lane(ARCHIVE_LANE, asset_id, lease_until)  # a pass that dies silent: sent again after its lease
        st, lease, retry = update.path("state"), update.path("lease_until"), update.path("retry_after")
        v = update.value
        free = f"(attribute_not_exists({lease}) OR {lease} < {v(now)})"
        due = f"(attribute_not_exists({retry}) OR {retry} <= {v(now)})"
        working = f"{st} IN ({v(ArchiveState.PENDING.value)}, {v(ArchiveState.COPYING.value)})"
        failed = f"({st} = {v(ArchiveState.FAILED.value)} AND attribute_exists({retry}))"
        condition = f"attribute_not_exists(asset_id) OR ({free} AND {due} AND ({working} OR {failed}))"
        result = self._apply(archive_item_id(asset_id), update, condition, "ALL_NEW")
        if not result.won:
            return ArchiveRefused(result.current or {})
        return ArchiveClaim(token, result.current or {})

    def record_upload(
        self, asset_id: str, token: str, key: str, upload_id: str, size: int, part_bytes: int, now: float
    ) -> WriteResult:
        """A copy begins: its upload and plan, no part yet."""
        update = Update().set("state", ArchiveState.COPYING.value).set("key", key).set("upload_id", upload_id)
        update.set("size", size).set("part_bytes", part_bytes).set("parts", []).set("bytes_done", 0)
        update.set("mints", 0).set("updated_at", now).add("copies", 1).remove("error", "retry_after", "sha256")
        condition = f"{update.path('lease_token')} = {update.value(token)}"
        return self._apply(archive_item_id(asset_id), update, condition, "ALL_NEW")

    def record_part(
        self, asset_id: str, token: str, upload_id: str, number: int, sha256: str, etag: str, size: int, now: float
    ) -> WriteResult:
        """Part `number` sent: appended only where it is the next of this upload, while the claim holds."""
        update = Update().set("updated_at", now).set("mints", 0).set("failures", 0).add("bytes_done", size)
        parts = update.path("parts")
        update.sets.append(f"{parts} = list_append({parts}, {update.value([[sha256, etag]])})")
        condition = (
            f"{update.path('lease_token')} = {update.value(token)} AND {update.path('upload_id')} ="
            f" {update.value(upload_id)} AND size({parts}) = {update.value(number - 1)}"
        )
        return self._apply(archive_item_id(asset_id), update, condition, "ALL_NEW")

    def count_mint(self, asset_id: str, token: str, now: float) -> WriteResult:
        update = Update().add("mints", 1).set("updated_at", now)
        return self._apply(
            archive_item_id(asset_id), update, f"{update.path('lease_token')} = {update.value(token)}", "ALL_NEW"
        )

    def finish_archive(self, asset_id: str, token: str, end: ArchiveEnd, now: float) -> WriteResult:
        """The pass's end (see ArchiveEnd), the lease given back; written only while the claim holds."""
        update = Update().set("state", end.state.value).set("updated_at", now).remove("lease_token", "lease_until")
        for name, value in (end.fields or {}).items():
            update.set(name, value)
        if end.state is ArchiveState.ARCHIVED:
            update.set("archived_at", now).remove("error", "retry_after", "upload_id", "parts")
        if end.retry_after is not None:
            update.set("retry_after", end.retry_after)
        elif end.state is not ArchiveState.ARCHIVED:
            update.remove("retry_after")
        if end.state is ArchiveState.ARCHIVED or (end.state is ArchiveState.FAILED and end.retry_after is None):
            update.off_lanes()  # nothing more is awaited: reconcile never reads it again
        else:  # awaited from its retry time, or now (its message was sent back at once)
            update.to_lane(ARCHIVE_LANE, asset_id, end.retry_after if end.retry_after is not None else now)
        if end.error:
            update.set("error", end.error)
        condition = f"{update.path('lease_token')} = {update.value(token)}"
        return self._apply(archive_item_id(asset_id), update, condition, "ALL_NEW")

    def rearm_archive(self, asset_id: str, now: float) -> WriteResult:
        """A failed copy made pending again (`migrator retry --archive`): only a failed item no live pass holds; its
        reason and retry time go, its counts of copies, failures and mints start again (a fresh copy is allowed),
        and it waits in the archive lane from now, so a message that is lost on the way is sent again. Then the
        asset's own item says pending, where it still says failed (a pass that began meanwhile is not overwritten).
        """
        update = Update().set("state", ArchiveState.PENDING.value).set("updated_at", now)
        update.set("copies", 0).set("failures", 0).set("mints", 0)
        update.remove("error", "retry_after", "lease_token", "lease_until")
        update.to_lane(ARCHIVE_LANE, asset_id, now)
        lease = update.path("lease_until")
        condition = (
            f"{update.path('state')} = {update.value(ArchiveState.FAILED.value)}"
            f" AND (attribute_not_exists({lease}) OR {lease} < {update.value(now)})"
        )
        rearmed = self._apply(archive_item_id(asset_id), update, condition, "ALL_NEW")
        if rearmed.won:
            noted = Update().set("archive_state", ArchiveState.PENDING.value).set("archive_at", now)
            noted.remove("archive_error")
            said = f"{noted.path('archive_state')} = {noted.value(ArchiveState.FAILED.value)}"
            self._apply(asset_id, noted, f"attribute_exists(asset_id) AND {said}")
        return rearmed

    def note_archive(self, asset_id: str, fields: dict, now: float) -> WriteResult:
        """The copy's state on the asset's own item (only where the asset is in the ledger)."""
        update = Update().set("archive_at", now)
        for name, value in fields.items():
            update.set(name, value)
        if fields.get("archive_state") != "failed":
            update.remove("archive_error")
        return self._apply(asset_id, update, "attribute_exists(asset_id)")
