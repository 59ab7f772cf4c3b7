"""The tracks worker's part of the ledger: each caption track's (and each extra's) own state, claim and fenced writes.

An asset's tracks live in its own item (one item per asset stays the truth), in the map
`track_states` (track key -> entry: state, attempts, waits, error, retry_after, lease,
remote_track_id, via, submitted; for an extra its `kind` and, once noted, its `note`: extras.py),
for the provider video `tracks_video` names. Nothing
here touches the asset's own state, lease or lanes, and nothing the asset's writers do
touches these, so the two never fence each other out:

- `arm_tracks`: the entries for a new provider video (first time, or after a retry made
  another video), conditioned on the video being the item's `remote_id`;
- `claim_track`: one conditional write takes a track for one pass, under a lease, with its
  attempt counted (`tracks.claimable` says the same in Python); like the asset's claim, a
  refusal returns the item as it stood;
- `finish_track`: the pass's outcome, fenced by the claim's token and the video, so a pass
  whose lease was taken over (or whose video was replaced) loses cleanly;
- `close_tracks`: the asset's place in reconcile's tracks lane after a pass (`tracks#n` in the
  sparse `by_tracks_due` index, from `tracks_due_at`): due again at its earliest retry, or out
  of the lane when every track is settled (attached, noted, or failed for good), checked in the write's
  own condition. Claims and
  outcomes leave the lane alone, so they cost no index write; a pass that dies leaves the
  asset due from before it began, and reconcile's quiet period outlasts any lease.
- `rearm_failed_tracks` (`migrator retry --tracks`) and `mark_tracks_healed` (reconcile).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import due
from ..states import State
from ..tracks import TrackMove, TrackState
from .table import LedgerTable, Update, WriteResult

STATES = "track_states"
VIDEO = "tracks_video"
LANE, DUE_AT = due.TRACKS_LANE, due.TRACKS_DUE_AT
# Tracks are worked on once the video is ready: Mux takes a track only then, and a track never holds a
# video back (the video reaches ready on its own path first).
WITH_VIDEO = State.READY.value


@dataclass(frozen=True)
class TrackClaim:
    token: str
    entry: dict  # the track's entry after the claim (attempts counted)
    item: dict  # the whole item after the claim


@dataclass(frozen=True)
class TrackRefused:
    item: dict  # as it stood: why the claim failed (taken, settled, another video, no video yet)


class Tracks(LedgerTable):
    def arm_tracks(self, asset_id: str, remote_id: str, entries: Mapping[str, dict], now: float) -> WriteResult:
        """Start the tracks of `remote_id` (the item's video), replacing the entries of an earlier video.
        Refused when the item records another video, or already holds this video's tracks."""
        update = Update().set(STATES, dict(entries)).set(VIDEO, remote_id).set("tracks_armed_at", now)
        update.set(LANE, due.lane(due.Family.TRACKS, asset_id)).set(DUE_AT, now)
        rid, video = update.value(remote_id), update.path(VIDEO)
        condition = f"remote_id = {rid} AND (attribute_not_exists({video}) OR {video} <> {rid})"
        return self._apply(asset_id, update, condition, "ALL_NEW")

    def claim_track(
        self, asset_id: str, key: str, remote_id: str, token: str, now: float, lease_until: float
    ) -> TrackClaim | TrackRefused:
        """Take one track of the video `remote_id` for a pass: pending (or failed with its retry time
        passed), with no live lease, once the video is ready."""
        update = Update()
        entry = (STATES, key)
        update.set((*entry, "lease_token"), token).set((*entry, "lease_until"), lease_until)
        update.add((*entry, "attempts"), 1).set((*entry, "updated_at"), now)
        st, retry, lease = (update.path(*entry, f) for f in ("state", "retry_after", "lease_until"))
        v = update.value
        condition = (
            f"{update.path(VIDEO)} = {v(remote_id)} AND remote_id = {v(remote_id)}"
            f" AND #state = {v(WITH_VIDEO)}"
            f" AND (attribute_not_exists({lease}) OR {lease} < {v(now)})"
            f" AND (({st} = {v(TrackState.PENDING.value)}"
            f" AND (attribute_not_exists({retry}) OR {retry} <= {v(now)}))"
            f" OR ({st} = {v(TrackState.FAILED.value)} AND {retry} <= {v(now)}))"
        )
        result = self._apply(asset_id, update, condition, "ALL_NEW")
        if not result.won:
            return TrackRefused(result.current or {})
        item = result.current or {}
        return TrackClaim(token, dict((item.get(STATES) or {}).get(key) or {}), item)

    def finish_track(
        self, asset_id: str, key: str, remote_id: str, token: str, move: TrackMove, now: float
    ) -> WriteResult:
        """Write a pass's outcome, if its claim still holds (the token) on the same video."""
        update, entry = Update(), (STATES, key)
        update.set((*entry, "state"), move.state.value).set((*entry, "updated_at"), now)
        update.remove((*entry, "lease_token"), (*entry, "lease_until"))
        if move.give_back:
            update.add((*entry, "attempts"), -1)
        if move.waited:
            update.add((*entry, "waits"), 1)
        elif move.state is not TrackState.PENDING:
            update.remove((*entry, "waits"))
        if move.retry_at is not None:
            update.set((*entry, "retry_after"), move.retry_at)
        else:
            update.remove((*entry, "retry_after"))
        if move.error:
            update.set((*entry, "error"), move.error)
        elif move.state in (TrackState.ATTACHED, TrackState.NOTED):
            update.remove((*entry, "error"))
        if move.note:
            update.set((*entry, "note"), move.note)
        if move.submitted:
            update.set((*entry, "submitted"), True)
        if move.remote_track_id:
            update.set((*entry, "remote_track_id"), move.remote_track_id)
        if move.state is TrackState.ATTACHED:
            update.set((*entry, "attached_at"), now)
        condition = f"{update.path(*entry, 'lease_token')} = {update.value(token)}"
        condition += f" AND {update.path(VIDEO)} = {update.value(remote_id)}"
        return self._apply(asset_id, update, condition, "ALL_NEW")

    def close_tracks(self, asset_id: str, remote_id: str, keys: list[str], due_at: float | None) -> WriteResult:
        """The asset's place in the tracks lane after a pass: out of it when every track of `keys` is
        settled (attached, noted, or failed with no retry time), checked in the condition itself so a track
        re-armed meanwhile keeps it in; else due again from `due_at`."""
        update = Update()
        if due_at is not None:
            update.set(DUE_AT, due_at)
            return self._apply(asset_id, update, f"{update.path(VIDEO)} = {update.value(remote_id)}")
        update.remove(LANE, DUE_AT)
        parts = [f"{update.path(VIDEO)} = {update.value(remote_id)}"]
        attached, failed = update.value(TrackState.ATTACHED.value), update.value(TrackState.FAILED.value)
        noted = update.value(TrackState.NOTED.value)
        for key in keys:
            st, retry = update.path(STATES, key, "state"), update.path(STATES, key, "retry_after")
            parts.append(f"({st} IN ({attached}, {noted}) OR ({st} = {failed} AND attribute_not_exists({retry})))")
        return self._apply(asset_id, update, " AND ".join(parts))

    def fail_tracks(self, asset_id: str, remote_id: str, keys: list[str], reason: str, now: float) -> WriteResult:
        """Every unsettled track of `keys` failed for good with `reason` (the video was rejected), and the
        asset out of the tracks lane; conditioned on the video and on no track being under a live lease."""
        update = Update().remove(LANE, DUE_AT)
        parts = [f"{update.path(VIDEO)} = {update.value(remote_id)}"]
        for key in keys:
            entry = (STATES, key)
            update.set((*entry, "state"), TrackState.FAILED.value).set((*entry, "error"), reason)
            update.set((*entry, "updated_at"), now).remove((*entry, "retry_after"))
            lease = update.path(*entry, "lease_until")
            parts.append(f"(attribute_not_exists({lease}) OR {lease} < {update.value(now)})")
        return self._apply(asset_id, update, " AND ".join(parts), "ALL_NEW")

    def rearm_failed_tracks(self, seen: Mapping[str, Any], now: float) -> WriteResult:
        """`migrator retry --tracks`: each track failed in `seen` (the item as read) gets a fresh attempt
        budget, now, and the asset is due in the tracks lane. Refused if any of them moved since."""
        states = seen.get(STATES) or {}
        keys = sorted(k for k, e in states.items() if isinstance(e, Mapping) and e.get("state") == "failed")
        if not keys:
            return WriteResult(False, dict(seen))
        update = Update().set(LANE, due.lane(due.Family.TRACKS, seen["asset_id"])).set(DUE_AT, now)
        parts = [f"{update.path(VIDEO)} = {update.value(seen.get(VIDEO))}"]
        for key in keys:
            entry = (STATES, key)
            parts.append(f"{update.path(*entry, 'state')} = {update.value(TrackState.FAILED.value)}")
            parts.append(f"{update.path(*entry, 'updated_at')} = {update.value(states[key].get('updated_at'))}")
            update.set((*entry, "state"), TrackState.PENDING.value).set((*entry, "attempts"), 0)
            update.set((*entry, "updated_at"), now)
            if states[key].get("error"):
                update.set((*entry, "last_error"), states[key]["error"])
            update.remove((*entry, "retry_after"), (*entry, "error"), (*entry, "waits"), (*entry, "submitted"))
            update.add((*entry, "retries"), 1)
        return self._apply(seen["asset_id"], update, " AND ".join(parts), "ALL_NEW")

    def mark_tracks_healed(self, seen: Mapping[str, Any], now: float) -> WriteResult:
        """Reconcile's marker before it re-sends an asset's tracks message: conditioned on the lane's
        `tracks_due_at` as read, so of two runs (or a run and the worker) at most one acts on it."""
        update = Update().set(DUE_AT, now).add("tracks_heals", 1)
        condition = f"{update.path(DUE_AT)} = {update.value(seen[DUE_AT])}"
        return self._apply(seen["asset_id"], update, condition)
