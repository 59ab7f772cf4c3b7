"""Due lanes: where an asset waits for reconcile, and from when (pure).

Reconcile must find the few assets that need it among millions that do not, without
walking the rest. So every ledger write that leaves an asset waiting on something that
may never come also files it in a *due lane*, a sparse index (`by_due`): the lane names
what is awaited, `due_at` the moment from which silence counts. Anything else (staged,
failed for good, settled) carries no lane and costs reconcile nothing.

- `heal`: a claim's lease (uploading: from `lease_until`), or a deferred message that
  should come back at its retry time (pending, inventoried, failed: from `retry_after`).
  Silence past `heal_after_s` means the message or the worker was lost.
- `queued`: a message was sent (intake, a heal, an operator's retry) and no claim has
  been seen since (from `enqueued_at`). The queue keeps a message for its retention
  period only, so one the fleet has not reached by then is gone: silence past
  `queued_after_s(retention)` re-sends it from the ledger. A migration longer than the
  queue's retention loses nothing.
- `poll`: the provider has the video (processing, from when it got it or was last
  asked). Silence past `poll_after_s` means its webhook may be lost: reconcile asks.
  Each answer "still working" moves the next poll further away (`next_poll_at`), so a
  slow encode does not take the poll budget from a lost webhook.

- `tracks`: the asset has caption tracks not yet settled (`tracks.py`). An asset with
  tracks sits in this lane *as well as* in one of the others, so it lives in an index of its
  own (`by_tracks_due`: `tracks_lane`, `tracks_due_at`), set from the asset's claim and kept
  by the tracks worker. Silence past `heal_after_s` means the worker's message was lost:
  reconcile sends it again.
- `archive`: an original owed to the archive (`ledger/archive.py`), on the copy's own control item
  (`#archive#<asset id>`, so in `by_due` beside the asset's lane): from when it was owed, a pass's lease
  ends, or its retry time comes. Silence past `heal_after_s` means the archive message was lost: reconcile
  sends it again. A copy archived or failed for good leaves the lane.

Each family is spread over SHARDS partitions (`<family>#<n>`), read oldest due first.
"""

from __future__ import annotations

import zlib
from enum import StrEnum

SHARDS = 16
INDEX = "by_due"
TRACKS_INDEX = "by_tracks_due"
TRACKS_LANE, TRACKS_DUE_AT = "tracks_lane", "tracks_due_at"
# What reconcile reads from the index besides the keys: its projection in the template.
INDEX_FIELDS = (
    "state",
    "updated_at",
    "lease_until",
    "retry_after",
    "remote_id",
    "claimed_at",
    "enqueued_at",
    "polls",
    "processing_at",
)
# Re-send what the queue is about to drop this long before its retention ends: a day for
# the default 14 days, a tenth for a test queue of a minute.
RETENTION_MARGIN_S = 86_400.0
# Still-working polls back off as poll_after x 2^(n-1), never further apart than this.
MAX_POLL_INTERVAL_S = 6 * 3600.0


class Family(StrEnum):
    HEAL = "heal"
    QUEUED = "queued"
    POLL = "poll"
    TRACKS = "tracks"
    ARCHIVE = "archive"


def index_of(family: Family) -> tuple[str, str, str]:
    """(index, lane attribute, due attribute) of the lanes of `family`."""
    if family is Family.TRACKS:
        return TRACKS_INDEX, TRACKS_LANE, TRACKS_DUE_AT
    return INDEX, "due_lane", "due_at"


def shard_of(asset_id: str) -> int:
    return zlib.crc32(asset_id.encode("utf-8")) % SHARDS


def lane(family: Family, asset_id: str) -> str:
    return f"{family.value}#{shard_of(asset_id)}"


def lanes(family: Family) -> list[str]:
    return [f"{family.value}#{n}" for n in range(SHARDS)]


def family_of(lane_name: str) -> Family | None:
    try:
        return Family(lane_name.split("#", 1)[0])
    except ValueError:
        return None


def queued_after_s(retention_s: float) -> float:
    """How long a queued asset may wait unclaimed before it is re-sent: just inside the
    queue's retention, so the re-sent message exists before the first one can vanish."""
    return max(0.0, retention_s - min(RETENTION_MARGIN_S, 0.1 * retention_s))


def next_poll_at(now: float, polls: int, poll_after_s: float, processing_at: float | None, max_processing_s: float):
    """The `due_at` after the `polls`-th answer "still working": the next poll comes
    poll_after x 2^(polls-1) after this one (poll_after after the first), at most
    MAX_POLL_INTERVAL_S apart, and never later than the processing deadline."""
    interval = min(MAX_POLL_INTERVAL_S, poll_after_s * 2 ** max(0, min(polls, 20) - 1))
    at = now + interval
    if processing_at is not None and max_processing_s > 0:
        at = min(at, max(now, processing_at + max_processing_s))
    return at - poll_after_s  # due once silence passes poll_after_s from here
