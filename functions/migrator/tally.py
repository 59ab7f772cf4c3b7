"""The tally Lambda: counts by state and per-minute throughput, aggregated from the ledger's stream.

`migrator status` must answer for a million assets without reading a million items,
so it reads aggregates: 16 `counts#<k>` items (the number of assets in each state, and
of caption tracks in each track state as `tracks_<state>`, and of each kind of extra in each
state as `<kind>_<state>`: `thumbnail_noted`, `collection_attached`, and of the archive's copies by the asset's
`archive_state` as `archive_<state>` with the archived bytes as `archive_bytes`, as sums of deltas) and one
`minute#<epoch minute>` item per recent minute (assets that became ready, rejected, failed
or processing, and 429s, and `first_at`, the time of the first event counted in it, so a
run that began late in a minute is not measured from the minute's start). This function
keeps them:
each batch of stream records is reduced in memory to deltas (pure: `deltas_of`), then
written in one transaction. The transaction's client token is derived from the batch's
sequence numbers, so a retried batch is not counted twice; the `counts#<k>` item is
chosen by the batch too, so concurrent stream shards rarely write the same item.

The uploader's and webhook's hot path is untouched: the stream costs them nothing.

The same deltas tell the pacer how many creates are in flight at the provider: each batch
with an asset in it adds its change in `processing` to the `#pacer` item of the ledger
(`pacer_update`: one read and one UpdateItem, outside the transaction, which must not
contend with the reservations on that hot item) and notes how many slots the batch covers
(`tallied_seq`), so in flight is `processing` plus the slots handed out since (`pacer.py`).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import boto3
from aws_lambda_powertools import Logger

from . import pacing
from .dynamo import listed_item, to_item, typed
from .extras import CAPTION, KINDS, entry_kind
from .pacer import PACER_ID
from .states import State
from .tracks import STATES as TRACK_STATES

logger = Logger(service="tally")

COUNT_SHARDS = 16
MINUTE_TTL_S = 7 * 86_400
STATE_VALUES = frozenset(s.value for s in State)
EVENTS = ("ready", "rejected", "failed", "created", "throttled", "healed")
# Tracks per track state, kept in the same count items as the assets' states; the extras (a thumbnail, chapters,
# a place in a collection: extras.py) per kind and state beside them (an entry with no kind is a caption track).
TRACK_COUNTS = tuple(f"tracks_{state}" for state in TRACK_STATES)
EXTRA_KINDS = tuple(kind for kind in KINDS if kind != CAPTION)
EXTRA_COUNTS = tuple(f"{kind}_{state}" for kind in EXTRA_KINDS for state in TRACK_STATES)
# The archive's copies (issue 43) by the state the asset's own item shows (`archive_state`: ledger/archive.py's
# `note_archive`), and the bytes of those archived (`archive_bytes`), beside the same counts.
ARCHIVE_STATES = ("pending", "copying", "archived", "failed")
ARCHIVE_COUNTS = (*(f"archive_{state}" for state in ARCHIVE_STATES), "archive_bytes")


@dataclass
class Deltas:
    counts: Counter = field(default_factory=Counter)  # state -> change in the number of assets
    minutes: dict = field(default_factory=dict)  # epoch minute -> Counter of EVENTS
    first: dict = field(default_factory=dict)  # epoch minute -> the earliest event time in it
    assets: int = 0  # records of assets (not control items) in the batch
    newest: float | None = None  # the latest change the batch carries (the items' updated_at): where the stream is
    finished: int = 0  # assets that left processing (the provider finished them)

    def add_event(self, minute: int, event: str, n: int = 1, at: float | None = None) -> None:
        if n:
            self.minutes.setdefault(minute, Counter())[event] += n
            if at is not None:
                self.first[minute] = min(at, self.first.get(minute, at))


def _image(record: dict, which: str) -> dict:
    return to_item(record.get("dynamodb", {}).get(which)) or {}


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, Decimal)) and not isinstance(value, bool) else 0


def deltas_of(records: list[dict], now: float) -> Deltas:
    """Reduce stream records to count and per-minute deltas (pure)."""
    out = Deltas()
    for record in records:
        keys = to_item(record.get("dynamodb", {}).get("Keys")) or {}
        asset_id = keys.get("asset_id")
        if not isinstance(asset_id, str) or asset_id.startswith("#"):
            continue  # control items (pacer, checkpoint) are not assets
        out.assets += 1
        old, new = _image(record, "OldImage"), _image(record, "NewImage")
        before, after = old.get("state"), new.get("state")
        old_tracks, new_tracks = _track_states(old), _track_states(new)
        out.counts.update(_track_deltas(old_tracks, new_tracks))
        out.counts.update(_archive_deltas(old, new))
        if before == after and record.get("eventName") == "MODIFY" and not _changed_counters(old, new):
            continue
        if before == State.PROCESSING.value and after != before:
            out.finished += 1
        if before != after:
            if before in STATE_VALUES:
                out.counts[before] -= 1
            if after in STATE_VALUES:
                out.counts[after] += 1
        when = new.get("updated_at") or old.get("updated_at")
        at = float(when) if isinstance(when, (int, Decimal)) and not isinstance(when, bool) else None
        if at is not None:
            out.newest = at if out.newest is None else max(out.newest, at)
        minute = int(at // 60) if at is not None else int(now // 60)
        if after != before and after in ("ready", "rejected", "failed"):
            out.add_event(minute, after, at=at)
        if after == State.PROCESSING.value and before != after:
            out.add_event(minute, "created", at=at)
        out.add_event(minute, "throttled", max(0, _int(new.get("throttles")) - _int(old.get("throttles"))), at)
        out.add_event(minute, "healed", max(0, _int(new.get("heals")) - _int(old.get("heals"))), at)
    out.counts = Counter({k: v for k, v in out.counts.items() if v})
    return out


def _track_states(image: dict) -> dict[str, str]:
    """Entry key -> the count it is in (`tracks_<state>` for a caption track, `<kind>_<state>` for an extra), from
    an item image's `track_states` map (what is not one counts as none)."""
    states = image.get("track_states")
    if not isinstance(states, dict):
        return {}
    return {
        k: f"{'tracks' if entry_kind(e) == CAPTION else entry_kind(e)}_{e['state']}"
        for k, e in states.items()
        if isinstance(e, dict) and e.get("state") in TRACK_STATES
    }


def _track_deltas(old: dict[str, str], new: dict[str, str]) -> Counter:
    """-1 for each entry's old count, +1 for its new one (a re-armed video replaces every entry)."""
    deltas: Counter = Counter()
    for key in old.keys() | new.keys():
        if old.get(key) != new.get(key):
            if key in old:
                deltas[old[key]] -= 1
            if key in new:
                deltas[new[key]] += 1
    return deltas


def _archive_deltas(old: dict, new: dict) -> Counter:
    """-1 in the old image's `archive_<state>`, +1 in the new one's; the archived bytes leave and arrive with the
    archived state (an asset copied again moves its old bytes out, its new ones in)."""
    deltas: Counter = Counter()
    before, after = _archive_state(old), _archive_state(new)
    if before != after:
        if before:
            deltas[f"archive_{before}"] -= 1
        if after:
            deltas[f"archive_{after}"] += 1
    deltas["archive_bytes"] += _archived_bytes(new) - _archived_bytes(old)
    return deltas


def _archive_state(image: dict) -> str | None:
    state = image.get("archive_state")
    return state if state in ARCHIVE_STATES else None


def _archived_bytes(image: dict) -> int:
    return _int(image.get("archive_bytes")) if _archive_state(image) == "archived" else 0


def _changed_counters(old: dict, new: dict) -> bool:
    return any(_int(new.get(k)) != _int(old.get(k)) for k in ("throttles", "heals"))


def batch_token(records: list[dict]) -> str:
    """A ClientRequestToken that is the same for every delivery of this batch."""
    seqs = [str(r.get("dynamodb", {}).get("SequenceNumber", "")) for r in records]
    source = str(records[0].get("eventSourceARN", "")) if records else ""
    return hashlib.sha256("|".join([source, *seqs]).encode()).hexdigest()[:36]


def transaction(table: str, deltas: Deltas, token: str) -> list[dict]:
    """The TransactWriteItems entries that apply `deltas` (at most 1 + minutes touched)."""
    entries = []
    names: dict[str, str]
    values: dict[str, int | Decimal]  # the expression's values, numbers all
    parts: list[str]
    if deltas.counts:
        shard = int(token[:8], 16) % COUNT_SHARDS
        names, values, parts = {}, {}, []
        for i, (state, delta) in enumerate(sorted(deltas.counts.items())):
            names[f"#s{i}"], values[f":s{i}"] = state, delta
            parts.append(f"#s{i} :s{i}")
        entries.append(
            {
                "Update": {
                    "TableName": table,
                    "Key": typed({"key": f"counts#{shard}"}),
                    "UpdateExpression": "ADD " + ", ".join(parts),
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": typed(values),
                }
            }
        )
    for minute, events in sorted(deltas.minutes.items()):
        names, values, parts = {}, {":ttl": minute * 60 + MINUTE_TTL_S}, []
        for i, (event, n) in enumerate(sorted(events.items())):
            if n:
                names[f"#e{i}"], values[f":e{i}"] = event, n
                parts.append(f"#e{i} :e{i}")
        if parts:
            sets = "expires_at = :ttl"
            if minute in deltas.first:
                # The first batch's earliest time; later batches are later, give or take a shard's lag.
                sets += ", first_at = if_not_exists(first_at, :first)"
                values[":first"] = Decimal(f"{deltas.first[minute]:.3f}")
            entries.append(
                {
                    "Update": {
                        "TableName": table,
                        "Key": typed({"key": f"minute#{minute}"}),
                        "UpdateExpression": "ADD " + ", ".join(parts) + " SET " + sets,
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": typed(values),
                    }
                }
            )
    return entries


# Slots handed out this soon before the stream's newest change may not have reached the ledger
# yet (a create takes its slot, then its answer, then the ledger's write): counted as after it.
STREAM_MARGIN_S = 0.25


def pacer_update(ledger_table: str, deltas: Deltas, now: float, pacer_item: dict | None = None) -> dict | None:
    """The UpdateItem that moves the pacer's count of assets processing by this batch's change and
    notes where the stream is: how many slots the batch already covers (`tallied_seq`, those handed
    out by its newest change, from the item's ring: `pacing.issued_by`; else all handed out by now),
    that change's time (`tallied_at`) and how fast assets left processing since the last batch
    (`finish_rate`). None for a batch with no asset in it. Written for every such batch, a change of
    0 included: slots handed out since are counted as in flight until a tally says otherwise."""
    if not deltas.assets:
        return None
    item = pacer_item or {}
    ring = [v for k, v in item.items() if k in RING_KEYS]
    newest = deltas.newest if deltas.newest is not None else now
    covered = pacing.issued_by(ring, newest - STREAM_MARGIN_S)
    previous = float(item.get("tallied_at", 0))
    span = newest - previous if 0 < previous < newest else None
    values = {":zero": 0, ":delta": deltas.counts.get(State.PROCESSING.value, 0), ":at": newest}
    values[":finish"] = pacing.finish_rate(deltas.finished, span, float(item.get("finish_rate", 0)))
    if covered is None:
        tallied = "tallied_seq = if_not_exists(seq, :zero)"
    else:
        tallied, values[":covered"] = "tallied_seq = :covered", covered
    return {
        "TableName": ledger_table,
        "Key": typed({"asset_id": PACER_ID}),
        "UpdateExpression": f"SET #p = if_not_exists(#p, :zero) + :delta, {tallied}, tallied_at = :at,"
        " finish_rate = :finish",
        "ExpressionAttributeNames": {"#p": "processing"},
        "ExpressionAttributeValues": typed(values),
    }


RING_KEYS = frozenset(f"r{i}" for i in range(pacing.RING_N))


def apply(dynamodb, table: str, records: list[dict], now: float, ledger_table: str | None = None) -> Deltas:
    deltas = deltas_of(records, now)
    token = batch_token(records)
    entries = transaction(table, deltas, token)
    # A transaction holds at most 100 entries; a batch touches one counts item and a few minutes.
    for start in range(0, len(entries), 100):
        chunk = entries[start : start + 100]
        dynamodb.transact_write_items(TransactItems=chunk, ClientRequestToken=f"{token[:30]}{start:06d}")
    if ledger_table and deltas.assets:
        # After the counts, and never failing the batch: a retried batch would count them again (its
        # bisected halves carry other tokens). A lost update leaves the pacer's count off by this
        # batch's change; the provider's own answer at its bound (an account limit) still holds the fleet.
        try:
            key = typed({"asset_id": PACER_ID})
            item = to_item(dynamodb.get_item(TableName=ledger_table, Key=key, ConsistentRead=True).get("Item"))
            update = pacer_update(ledger_table, deltas, now, item)
            if update:  # always, for a batch with assets
                dynamodb.update_item(**update)
        except Exception as exc:
            logger.warning("could not update the pacer's in-flight count: %s", type(exc).__name__)
    return deltas


@dataclass(frozen=True)
class Stats:
    """What status shows, read from the aggregates in a bounded number of items."""

    counts: dict  # state -> assets
    minutes: dict  # epoch minute -> {event: n}
    first: dict = field(default_factory=dict)  # epoch minute -> the first event's time in it
    tracks: dict = field(default_factory=dict)  # track state -> caption tracks
    extras: dict = field(default_factory=dict)  # kind (thumbnail, chapters, collection) -> {state -> entries}
    archive: dict = field(default_factory=dict)  # archive state -> assets, and "bytes": the archived bytes

    def total(self) -> int:
        return sum(self.counts.values())

    def events_since(self, minute: int) -> Counter:
        out: Counter = Counter()
        for m, events in self.minutes.items():
            if m >= minute:
                out.update(events)
        return out


def read_stats(dynamodb, table: str, now: float, window_minutes: int = 15) -> Stats:
    """Sum the count shards and read the last `window_minutes` minute items: 16 + window reads."""
    current = int(now // 60)
    keys = [f"counts#{k}" for k in range(COUNT_SHARDS)] + [
        f"minute#{m}" for m in range(current - window_minutes, current + 1)
    ]
    items: list[dict] = []
    for start in range(0, len(keys), 100):
        request: dict[str, Any] | None = {
            table: {"Keys": [typed({"key": k}) for k in keys[start : start + 100]], "ConsistentRead": True}
        }
        while request:
            resp = dynamodb.batch_get_item(RequestItems=request)
            items += [listed_item(raw) for raw in resp.get("Responses", {}).get(table, [])]
            request = resp.get("UnprocessedKeys") or None
    counts: Counter = Counter()
    minutes: dict = {}
    first: dict = {}
    for item in items:
        key = item.get("key", "")
        values = {k: int(v) for k, v in item.items() if isinstance(v, Decimal)}
        if key.startswith("counts#"):
            counts.update(
                {
                    k: v
                    for k, v in values.items()
                    if k in STATE_VALUES or k in TRACK_COUNTS or k in EXTRA_COUNTS or k in ARCHIVE_COUNTS
                }
            )
        elif key.startswith("minute#"):
            minute = int(key.split("#", 1)[1])
            minutes[minute] = {k: v for k, v in values.items() if k in EVENTS}
            if isinstance(item.get("first_at"), Decimal):
                first[minute] = float(item["first_at"])
    tracks = {name.removeprefix("tracks_"): counts.get(name, 0) for name in TRACK_COUNTS}
    extras = {kind: {state: counts.get(f"{kind}_{state}", 0) for state in TRACK_STATES} for kind in EXTRA_KINDS}
    archive = {name.removeprefix("archive_"): counts.get(name, 0) for name in ARCHIVE_COUNTS}
    return Stats({s.value: counts.get(s.value, 0) for s in State}, minutes, first, tracks, extras, archive)


_dynamodb = None


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    global _dynamodb
    if _dynamodb is None:
        _dynamodb = boto3.client("dynamodb")
    records = event.get("Records", [])
    deltas = apply(_dynamodb, os.environ["STATS_TABLE"], records, time.time(), os.environ.get("LEDGER_TABLE"))
    logger.debug("tallied", extra={"records": len(records), "counts": dict(deltas.counts)})
    return {"records": len(records)}
