"""`migrator upgrade`: bring every ledger item an earlier release wrote to this release's schema, once.

Run it right after `sam deploy` of a new release, while the migration goes on: it reads only the items
below the version (a filtered parallel scan; the rest cost a read unit each page, not a write), applies
`migrator.ledger.upgrade.backfill` to each with a conditional write (an item that moved meanwhile was
written by this release's code, which writes what it reads: it is read again and left, or filled in),
paced at `rate` writes a second so the migration's own writes keep their capacity. It is idempotent
(an item at the version is never written) and resumable: each scan segment's position is kept in a
checkpoint file after every page, and the same command goes on from there. When every segment is done
the ledger's `#schema` item records the version, which `migrator doctor` reads.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from migrator.dynamo import to_item, typed
from migrator.ledger import SCHEMA_VERSION, Ledger
from migrator.ledger.upgrade import SCHEMA, backfill, version_of

SEGMENTS = 4
PAGE_ITEMS = 200
MARKER = "#schema"  # the ledger's control item: the version every item was brought to, and when


@dataclass
class UpgradeSummary:
    version: int = SCHEMA_VERSION
    read: int = 0  # items below the version, read
    upgraded: int = 0  # written
    moved: int = 0  # changed between the read and the write: read again
    already: int = 0  # at the version by the time it was written
    segments_done: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False
    lanes: dict = field(default_factory=dict)  # due lanes filled in, by family

    @property
    def done(self) -> bool:
        return self.segments_done == SEGMENTS and not self.interrupted

    def as_dict(self) -> dict:
        return {"type": "summary", **asdict(self), "done": self.done}

    def lines(self) -> list[str]:
        lanes = ", ".join(f"{family} {n:,}" for family, n in sorted(self.lanes.items())) or "none"
        out = [
            f"schema          version {self.version}",
            f"read            {self.read:,} items below it",
            f"upgraded        {self.upgraded:,} (due lanes filled in: {lanes})",
            f"moved meanwhile {self.moved:,} (read again)",
            f"took            {self.elapsed_s:.1f} s",
        ]
        if self.done:
            out.append("result          OK: every item is at this release's schema (the ledger's #schema says so)")
        else:
            out.append("result          NOT DONE: run the same command again to go on from its checkpoint")
        return out


class Checkpoint:
    """Each scan segment's next start key (None: from the beginning; "done"), kept on disk after every page."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.positions: dict = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except (OSError, ValueError):
            self.positions = {}

    def save(self) -> None:
        scratch = self.path.with_name(self.path.name + ".tmp")
        scratch.write_text(json.dumps(self.positions), encoding="utf-8")
        os.replace(scratch, self.path)


def run_upgrade(
    ledger: Ledger,
    *,
    checkpoint: Checkpoint,
    rate: float = 50.0,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    progress: Callable[[int], None] = lambda n: None,
) -> UpgradeSummary:
    summary, stop = UpgradeSummary(), stop or threading.Event()
    started, interval, next_at = clock(), (1.0 / rate if rate > 0 else 0.0), clock()
    for segment in range(SEGMENTS):
        while checkpoint.positions.get(str(segment)) != "done":
            if stop.is_set():
                summary.interrupted = True
                break
            items, after = _page(ledger, segment, checkpoint.positions.get(str(segment)))
            for item in items:
                summary.read += 1
                wait = next_at - clock()
                if wait > 0:
                    sleep(wait)
                next_at = max(next_at, clock()) + interval
                _upgrade_one(ledger, item, clock(), summary)
            checkpoint.positions[str(segment)] = after if after is not None else "done"
            checkpoint.save()
            progress(summary.read)
        if checkpoint.positions.get(str(segment)) == "done":
            summary.segments_done += 1
    if summary.done:
        _mark_done(ledger, clock())
    summary.elapsed_s = round(clock() - started, 3)
    return summary


def _page(ledger: Ledger, segment: int, start_key) -> tuple[list[dict], dict | None]:
    """One page of the items below the version in `segment` (the control items skipped)."""
    kwargs: dict = {
        "TableName": ledger.table,
        "Segment": segment,
        "TotalSegments": SEGMENTS,
        "Limit": PAGE_ITEMS,
        "ConsistentRead": True,
        "FilterExpression": "NOT begins_with(asset_id, :control) AND (attribute_not_exists(#v) OR #v < :v)",
        "ExpressionAttributeNames": {"#v": SCHEMA},
        "ExpressionAttributeValues": typed({":control": "#", ":v": SCHEMA_VERSION}),
    }
    if start_key:
        kwargs["ExclusiveStartKey"] = start_key
    page = ledger.client.scan(**kwargs)
    return [to_item(raw) for raw in page.get("Items", [])], page.get("LastEvaluatedKey")


def _upgrade_one(ledger: Ledger, item: dict, now: float, summary: UpgradeSummary) -> None:
    for _ in range(3):  # an item that moves under us is read again; one a live writer keeps moving is left
        update = backfill(item, now)
        if update is None:
            summary.already += 1
            return
        result = ledger.upgrade_item(item, now)
        if result.won:
            summary.upgraded += 1
            lane = str((result.current or {}).get("due_lane") or "")
            if lane and not item.get("due_lane"):
                family = lane.split("#", 1)[0]
                summary.lanes[family] = summary.lanes.get(family, 0) + 1
            return
        summary.moved += 1
        item = ledger.get(str(item["asset_id"])) or {}
        if not item or version_of(item) >= SCHEMA_VERSION:
            summary.already += 1
            return


def _mark_done(ledger: Ledger, now: float) -> None:
    ledger.client.put_item(
        TableName=ledger.table,
        Item=typed({"asset_id": MARKER, SCHEMA: SCHEMA_VERSION, "upgraded_at": now}),
    )


def schema_status(dynamodb, table: str, sample: int = 1000) -> tuple[bool, str]:
    """(whether nothing is due, what was seen): the `#schema` item at this version, else a bounded look for
    items below it (a ledger this release wrote alone has none)."""
    marker = to_item(dynamodb.get_item(TableName=table, Key=typed({"asset_id": MARKER})).get("Item")) or {}
    if version_of(marker) >= SCHEMA_VERSION and marker.get(SCHEMA) is not None:
        return True, f"every item at schema {SCHEMA_VERSION} (migrator upgrade finished)"
    scanned, old, key = 0, 0, None
    while scanned < sample:
        kwargs: dict = {"TableName": table, "Limit": min(200, sample - scanned)}
        if key:
            kwargs["ExclusiveStartKey"] = key
        page = dynamodb.scan(**kwargs)
        for raw in page.get("Items", []):
            item = to_item(raw)
            scanned += 1
            if not str(item.get("asset_id", "")).startswith("#") and version_of(item) < SCHEMA_VERSION:
                old += 1
        key = page.get("LastEvaluatedKey")
        if not key:
            break
    if old:
        return False, f"{old:,} of the first {scanned:,} items were written by an earlier release"
    if key:
        return True, f"none of the first {scanned:,} items below schema {SCHEMA_VERSION} (not every item read)"
    return True, f"every item ({scanned:,}) at schema {SCHEMA_VERSION}"
