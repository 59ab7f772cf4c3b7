"""The DynamoDB ledger: one item per asset, moved only by conditional writes.

It is split by its callers, each part a mixin over the same table (`table.LedgerTable`):

- `claims`: the uploader's claim and the fenced writes its holder makes afterwards;
- `settling`: the provider's outcome (webhook, poll, adoption), forward only;
- `healing`: reconcile's heals, polls and give-ups;
- `loading`: intake, staging, the probe's verdicts and the operator's retry;
- `tracks`: each caption track's own state, claim and fenced writes (the tracks worker);
- `collections`: each collection's own item, made once at the target (the tracks worker's collection entries);
- `rules`: the fenced-write and forward-only conditions all of them build on;
- `resend`: a record turned back into the message that carries it;
- `sources`: the wait for a file the source is still preparing;
- `upgrade`: what an item of an earlier release lacks, and `migrator upgrade`'s write that fills it in.

`Ledger` is all of them together, for callers that need more than one part.
"""

from __future__ import annotations

from .archive import ArchiveClaim, ArchiveEnd, ArchiveRefused, Archives
from .claims import Claimed, Claims, Refused
from .collections import CollectionClaim, CollectionRefused, Collections, CollectionSource, CollectionState
from .healing import Healing
from .loading import REARMABLE, Loading, Recorded
from .resend import NotResendable, message_of
from .settling import EventOutcome, EventResult, Settling
from .sources import Preparing
from .table import (
    DUE_INDEX,
    REMOTE_INDEX,
    SHARDS,
    STATE_INDEX,
    TRACKS_INDEX,
    LedgerTable,
    Update,
    WriteResult,
    shard_of,
    state_shard,
)
from .tracks import TrackClaim, TrackRefused, Tracks
from .upgrade import SCHEMA_VERSION, Upgrading


class Ledger(Claims, Settling, Healing, Loading, Tracks, Collections, Archives, Preparing, Upgrading):
    """Adapter over the ledger table. Methods take `now` so callers control time."""


__all__ = [
    "DUE_INDEX",
    "REARMABLE",
    "REMOTE_INDEX",
    "SCHEMA_VERSION",
    "SHARDS",
    "STATE_INDEX",
    "TRACKS_INDEX",
    "ArchiveClaim",
    "ArchiveEnd",
    "ArchiveRefused",
    "Archives",
    "Claimed",
    "Claims",
    "CollectionClaim",
    "CollectionRefused",
    "CollectionSource",
    "CollectionState",
    "Collections",
    "EventOutcome",
    "EventResult",
    "Healing",
    "Ledger",
    "LedgerTable",
    "Loading",
    "NotResendable",
    "Preparing",
    "Recorded",
    "Refused",
    "Settling",
    "TrackClaim",
    "TrackRefused",
    "Tracks",
    "Update",
    "Upgrading",
    "WriteResult",
    "message_of",
    "shard_of",
    "state_shard",
]
