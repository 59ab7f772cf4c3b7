"""`migrator upgrade`: bring every ledger item an earlier release wrote to this release's schema, once.

Run it right after `sam deploy` of a new release, while the migration goes on: it reads only the items
below the version (a filtered parallel scan; the rest cost a read unit each page, not a write), applies
`migrator.ledger.upgrade.backfill` to each with a conditional write (an item that moved meanwhile was
written by this release's code, which writes what it reads: it is read again and left, or filled in),
paced at `rate` writes a second so the migration's own writes keep their capacity. It is idempotent
(an item at the version is never written) and resumable: each scan segment's position is kept in a
checkpoint file after every page, and the same command goes on from there. When every segment is done
the ledger's `#schema` item records the version, which `migrator doctor` reads.

A checkpoint names the ledger table (and its region) and the schema version it was kept for, since its
positions mean nothing anywhere else: read for another ledger (the next stack's, from the same default
file) or another release's version, a finished one would make the run read nothing and stamp the version
over items never upgraded. `checkpoint_fate` decides: the same run's checkpoint is resumed; a finished one
of another run is started over, with a warning (nothing of it is lost); an unfinished one of another run
(or one of a release that named no table) is refused, so its run's progress is not overwritten.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from migrator.dynamo import listed_item, to_item, typed
from migrator.ledger import SCHEMA_VERSION, Ledger
from migrator.ledger.upgrade import SCHEMA, backfill, version_of

from .errors import CliError

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
    started_over: str | None = None  # why a checkpoint of another run was set aside, when one was

    @property
    def done(self) -> bool:
        return self.segments_done == SEGMENTS and not self.interrupted

    def as_dict(self) -> dict:
        return {"type": "summary", **asdict(self), "done": self.done}

    def lines(self) -> list[str]:
        lanes = ", ".join(f"{family} {n:,}" for family, n in sorted(self.lanes.items())) or "none"
        out = [f"checkpoint      {self.started_over}"] if self.started_over else []
        out += [
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


@dataclass(frozen=True)
class RunFor:
    """What a checkpoint's positions are positions in: one ledger table's scan for one schema version."""

    table: str
    region: str | None
    version: int = SCHEMA_VERSION

    def describe(self) -> str:
        where = f" ({self.region})" if self.region else ""
        return f"table {self.table}{where} to schema {self.version}"


class CheckpointFate(Enum):
    FRESH = "fresh"  # no checkpoint: from the beginning
    RESUME = "resume"  # this run's own: go on from its positions
    START_OVER = "start over"  # another run's, finished: set aside, with a warning
    REFUSE = "refuse"  # another run's, unfinished (or naming no table): its progress is not overwritten


def checkpoint_fate(saved: Mapping | None, wanted: RunFor) -> CheckpointFate:
    """What a run for `wanted` does with the checkpoint `saved` (None: no file). `saved` as `Checkpoint`
    read it: `run` (a RunFor, None when the file named none: a release before checkpoints named their
    table) and `finished` (every segment done)."""
    if saved is None:
        return CheckpointFate.FRESH
    if saved.get("run") == wanted:
        return CheckpointFate.RESUME
    return CheckpointFate.START_OVER if saved.get("finished") else CheckpointFate.REFUSE


class Checkpoint:
    """Each scan segment's next start key (None: from the beginning; "done"), kept on disk after every page,
    with the table and schema version they belong to (`RunFor`)."""

    def __init__(self, path: Path):
        self.path = path
        self.run: RunFor | None = None
        self.positions: dict = {}
        self.found, self.unreadable = path.exists(), False
        try:
            doc = json.loads(path.read_text(encoding="utf-8")) if self.found else {}
        except (OSError, ValueError, UnicodeDecodeError):
            doc = None
        if not isinstance(doc, dict):
            self.unreadable = True  # not a checkpoint (another file given by mistake?): never overwritten
        elif isinstance(doc.get("positions"), dict):
            self.positions = doc["positions"]
            self.run = _run_of(doc)
        else:  # a release before checkpoints named their table: the positions alone, of an unknown table
            self.positions = {k: v for k, v in doc.items() if k.isdigit()}

    @property
    def finished(self) -> bool:
        return all(self.positions.get(str(segment)) == "done" for segment in range(SEGMENTS))

    def take(self, wanted: RunFor) -> str | None:
        """Make this checkpoint `wanted`'s: resumed when it is that run's, started over (the reason returned)
        when it is another's that finished; CliError when it is another's that did not."""
        if self.unreadable:
            raise CliError(
                f"the checkpoint {self.path} cannot be read as an upgrade's checkpoint: pass --checkpoint with "
                "another file, or delete it to start over"
            )
        fate = checkpoint_fate({"run": self.run, "finished": self.finished} if self.found else None, wanted)
        kept_for = self.run.describe() if self.run else "a table it does not name (an earlier release's)"
        if fate is CheckpointFate.REFUSE:
            raise CliError(
                f"the checkpoint {self.path} holds an unfinished upgrade of {kept_for}, not of this ledger's "
                f"{wanted.describe()}: pass --checkpoint with another file for this ledger, or delete "
                f"{self.path} to give that run up"
            )
        reason = None
        if fate is CheckpointFate.START_OVER:
            reason = f"{self.path} was a finished upgrade of {kept_for}: this run starts from the beginning"
            self.positions = {}
        self.run = wanted
        return reason

    def save(self) -> None:
        doc: dict[str, object] = {"positions": self.positions}
        if self.run is not None:
            doc.update(table=self.run.table, region=self.run.region, schema=self.run.version)
        scratch = self.path.with_name(self.path.name + ".tmp")
        scratch.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(scratch, self.path)


def _run_of(doc: Mapping) -> RunFor | None:
    table, region, version = doc.get("table"), doc.get("region"), doc.get("schema")
    if not isinstance(table, str) or not table or not isinstance(version, int) or isinstance(version, bool):
        return None
    return RunFor(table, region if isinstance(region, str) else None, version)


def run_for(ledger: Ledger) -> RunFor:
    """The run a checkpoint of `ledger`'s upgrade is kept for: its table, its client's region, this version."""
    region = getattr(getattr(ledger.client, "meta", None), "region_name", None)
    return RunFor(ledger.table, region if isinstance(region, str) else None, SCHEMA_VERSION)


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
    summary.started_over = checkpoint.take(run_for(ledger))  # CliError: another run's, unfinished
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
    return [listed_item(raw) for raw in page.get("Items", [])], page.get("LastEvaluatedKey")


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
            item = listed_item(raw)
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
