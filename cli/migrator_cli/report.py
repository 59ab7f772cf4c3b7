"""`migrator report`: the mapping from our ids to the provider's, one line per asset, as CSV or JSONL.

Each line also says how the provider plays the video (`playback`, against the row's `privacy`) and
what its create could not carry as the row has it (`fidelity_notes`: cut, left out, kept only in
the ledger).

An export reads every asset once, so it is a parallel segmented Scan (the one place
the CLI scans), streamed straight to the output: memory stays flat however large the
table. Filters (states, drift) run server-side.

The CSV is for people, who open it in a spreadsheet, so its text cells are made safe
for one (`csv_cell`); the JSON Lines are for machines and carry every value exactly.
Caption tracks: the CSV has each asset's counts per track state and its failed tracks'
reasons in one cell (`key: reason | ...`); the JSON Lines have every track (`tracks`). The
extras (thumbnail, chapters, a place in each collection: migrator.extras): the CSV has the
thumbnail's and the chapters' states, the collection places per state, and the notes of what
was carried otherwise (`noted`: `key: note | ...`); the JSON Lines have every extra (`extras`).
"""

from __future__ import annotations

import csv
import json
import queue
import re
import threading
from collections.abc import Iterator
from decimal import Decimal

from migrator.dynamo import listed_item, plain, typed
from migrator.extras import CAPTION, COLLECTION, entry_kind
from migrator.ledger.collections import PREFIX as COLLECTION_PREFIX
from migrator.states import State
from migrator.tracks import caption_counts
from migrator.tracks import counts as track_counts
from migrator.tracks import failures as track_failures
from migrator.tracks import notes as extra_notes

COLUMNS = (
    "id",
    "source_url",
    "state",
    "remote_id",
    "duration_s",
    "provider_duration_s",
    "drift_s",
    "attempts",
    "last_error",
    "updated_at",
    "privacy",
    "playback",
    "fidelity_notes",
    "tracks_attached",
    "tracks_pending",
    "tracks_failed",
    "track_failures",
    "thumbnail",
    "chapters",
    "collections",
    "extras_notes",
)
# What a create could not carry as the row has it, one cell: notes joined (JSON Lines keeps the list).
NOTES_SEPARATOR = "; "
TRACK_FIELDS = ("state", "attempts", "error", "remote_track_id", "via")
EXTRA_FIELDS = ("state", "attempts", "error", "note", "remote_track_id", "collection")
SEGMENTS = 4

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP's list,
# tab and CR included); ids come from the inventory, remote ids and errors from the provider.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Line breaks, for the csv module and for anything that splits lines its own way (str.splitlines, editors).
_LINE_BREAK = re.compile("[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")


def row_of(item: dict) -> dict:
    """One report row from a ledger item: numbers as numbers, absent fields as None."""

    def number(value):
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
        return value

    row = {column: number(item.get(column)) for column in COLUMNS if column != "id"}
    notes = item.get("fidelity_notes")
    row["fidelity_notes"] = [str(n) for n in notes] if isinstance(notes, list) and notes else None
    states = item.get("track_states") if isinstance(item.get("track_states"), dict) else None
    counted = caption_counts(states)
    for state in ("attached", "pending", "failed"):
        row[f"tracks_{state}"] = counted.get(state, 0) if states is not None else None
    failed = track_failures(states)  # captions and extras alike: each key says which
    row["track_failures"] = " | ".join(f"{key}: {reason}" for key, reason in failed) if failed else None
    for name in ("thumbnail", "chapters"):
        entry = (states or {}).get(name)
        row[name] = entry.get("state") if isinstance(entry, dict) and entry_kind(entry) == name else None
    places = track_counts(states, (COLLECTION,))
    row["collections"] = ", ".join(f"{n} {state}" for state, n in sorted(places.items())) or None
    noted = extra_notes(states)
    row["extras_notes"] = " | ".join(f"{key}: {note}" for key, note in noted) if noted else None
    return {"id": item["asset_id"], **row}


def extras_of(item: dict) -> list[dict]:
    """Every extra of an asset as the JSON Lines carry it: its key, kind and state, what was done instead (note)."""
    states = said if isinstance(said := item.get("track_states"), dict) else {}
    return [
        {"key": key, "kind": entry_kind(entry), **{f: plain(entry[f]) for f in EXTRA_FIELDS if f in entry}}
        for key, entry in sorted(states.items())
        if isinstance(entry, dict) and entry_kind(entry) != CAPTION
    ]


def tracks_of(item: dict) -> list[dict]:
    """Every caption track of an asset as the JSON Lines carry it: the inventory's fields and its state."""
    from migrator.messages import parse_tracks, track_key

    listed = parse_tracks(item.get("tracks")) if item.get("tracks") else ()
    states = said if isinstance(said := item.get("track_states"), dict) else {}
    out = []
    for track in listed if not isinstance(listed, str) else ():
        if track.kind == "chapters":  # a chapters file is an extra (extras_of), never a caption
            continue
        key = track_key(track)
        entry = kept if isinstance(kept := states.get(key), dict) else {}
        shown = {f: plain(entry[f]) for f in TRACK_FIELDS if f in entry}
        out.append({"key": key, **track.as_dict(), "state": "pending", **shown})
    return out


def csv_cell(value) -> str | int | float:
    """`value` as a CSV cell a spreadsheet shows and never runs: one line, no formula.

    Text that would start a formula (after leading blanks, too) gets a leading single
    quote, which spreadsheets read as "this is text". Numbers are left as they are: a
    negative drift_s must stay a number. Line breaks become spaces, so that every asset
    stays one line of the file.
    """
    if value is None:
        return ""
    if isinstance(value, int | float):
        return value
    text = str(value)
    if text.startswith(FORMULA_START) or text.lstrip().startswith(FORMULA_START):
        text = "'" + text
    return _LINE_BREAK.sub(" ", text)


def scan_ledger(
    dynamodb,
    table: str,
    states: list[State] | None = None,
    drift_only: bool = False,
    with_tracks: bool = False,
    with_collections: bool = False,
    archive_states: list[str] | None = None,
) -> Iterator[dict]:
    """Every asset item (control items skipped), by a parallel Scan; order is not defined. `with_tracks`:
    only assets whose caption tracks are armed. `archive_states`: only assets whose archive copy is in one of them
    (the asset's own `archive_state`: ledger/archive.py). `with_collections`: each collection's own item too
    (`#collection#<key>`: ledger/collections.py), whatever the other filters, in the same one pass over the table."""
    filters, values, names = ["NOT begins_with(asset_id, :control)"], {":control": "#"}, {}
    if states:
        names["#state"] = "state"
        keys = []
        for i, state in enumerate(states):
            values[f":s{i}"] = state.value
            keys.append(f":s{i}")
        filters.append(f"#state IN ({', '.join(keys)})")
    if drift_only:
        filters.append("attribute_exists(drift_s)")
    if with_tracks:
        filters.append("attribute_exists(track_states)")
    if archive_states:
        names["#archive_state"] = "archive_state"
        for i, archive_state in enumerate(archive_states):
            values[f":a{i}"] = archive_state
        filters.append(f"#archive_state IN ({', '.join(f':a{i}' for i in range(len(archive_states)))})")
    expression = " AND ".join(filters)
    if with_collections:
        expression = f"({expression}) OR begins_with(asset_id, :collections)"
        values[":collections"] = COLLECTION_PREFIX
    base: dict = {
        "TableName": table,
        "FilterExpression": expression,
        "ExpressionAttributeValues": typed(values),
        "TotalSegments": SEGMENTS,
    }
    if names:
        base["ExpressionAttributeNames"] = names
    pages: queue.Queue = queue.Queue(maxsize=SEGMENTS * 2)  # bounded: a slow writer slows the scan
    done = object()
    failures: list[BaseException] = []

    def segment(n: int) -> None:
        try:
            kwargs = {**base, "Segment": n}
            while True:
                resp = dynamodb.scan(**kwargs)
                pages.put([listed_item(raw) for raw in resp.get("Items", [])])
                if not resp.get("LastEvaluatedKey"):
                    break
                kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        except BaseException as exc:  # surfaced in the consumer's thread
            failures.append(exc)
        finally:
            pages.put(done)

    threads = [threading.Thread(target=segment, args=(n,), daemon=True) for n in range(SEGMENTS)]
    for thread in threads:
        thread.start()
    finished = 0
    while finished < SEGMENTS:
        page = pages.get()
        if page is done:
            finished += 1
            continue
        yield from page
    if failures:
        raise failures[0]


def write_report(items: Iterator[dict], out, fmt: str) -> int:
    """Write one line per asset; returns how many."""
    count = 0
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for item in items:
            row = row_of(item)
            row["fidelity_notes"] = NOTES_SEPARATOR.join(row["fidelity_notes"] or ()) or None
            writer.writerow({k: csv_cell(v) for k, v in row.items()})
            count += 1
    elif fmt == "jsonl":
        for item in items:
            doc = {**row_of(item), "tracks": tracks_of(item), "extras": extras_of(item)}
            out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    else:
        raise ValueError(f"unknown report format {fmt!r}")
    return count
