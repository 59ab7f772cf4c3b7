"""`migrator export --collections FILE`: the old-collection -> new-collection map, beside the video map (issue 42).

Each collection a row named (a folder, project, showcase, album, playlist, category or channel at the source) is
an item of its own in the ledger, `#collection#<key>` (migrator.ledger.collections), made once at the target by the
tracks worker. Its row here says where it was (the source platform, its id and name there, its kind) and where it
is now (the provider and the collection's id there), with its state: `created`, `pending` (not made yet) or
`failed` (with why, in `note`). The items come from the export's own scan of the ledger (report.scan_ledger with
`with_collections`): one pass over the table gives both maps, streamed, in flat memory.

Names come from the source and ids from both platforms, so they are untrusted: the CSV's cells cannot run as
formulas (report.csv_cell); the JSON Lines carry every value exactly.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import TextIO

from migrator.ledger.collections import PREFIX, CollectionState

from .report import csv_cell

COLLECTION_COLUMNS = (
    "key",
    "source_platform",
    "source_id",
    "name",
    "kind",
    "provider",
    "remote_collection_id",
    "state",
    "note",
)


def is_collection_item(item: Mapping) -> bool:
    """Whether a ledger item is a collection's own (not an asset's)."""
    asset_id = item.get("asset_id")
    return isinstance(asset_id, str) and asset_id.startswith(PREFIX)


def collection_row(item: Mapping, provider: str) -> dict:
    """One row of the collections map from a collection's ledger item (pure)."""
    state = _text(item.get("state"))
    made = state == CollectionState.CREATED.value
    if made:
        note = None
    elif state == CollectionState.FAILED.value:
        why = _text(item.get("error")) or "no reason given"
        note = f"not made: {why}" + (" (to be retried)" if item.get("retry_after") is not None else "")
    else:
        note = "not made yet"
    return {
        "key": str(item.get("asset_id", ""))[len(PREFIX) :],
        "source_platform": _text(item.get("source_platform")),
        "source_id": _text(item.get("source_id")),
        "name": _text(item.get("name")),
        "kind": _text(item.get("collection_kind")),
        "provider": provider,
        "remote_collection_id": _text(item.get("remote_collection_id")) if made else None,
        "state": state,
        "note": note,
    }


class CollectionMap:
    """Writes the collections map to `out` a row at a time, as CSV or JSON Lines (`fmt`), and counts it."""

    def __init__(self, out: TextIO, fmt: str, provider: str):
        self.out, self.provider, self.jsonl = out, provider, fmt == "jsonl"
        self.written = self.made = 0
        self.csv = None if self.jsonl else csv.DictWriter(out, fieldnames=COLLECTION_COLUMNS, lineterminator="\n")
        if self.csv is not None:
            self.csv.writeheader()

    def write(self, item: Mapping) -> None:
        row = collection_row(item, self.provider)
        if self.csv is not None:
            self.csv.writerow({k: csv_cell(v) for k, v in row.items()})
        else:
            self.out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.written += 1
        self.made += int(row["state"] == CollectionState.CREATED.value)


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, Decimal):
        return str(int(value)) if value == value.to_integral_value() else str(value)
    return str(value)
