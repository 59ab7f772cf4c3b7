"""`migrator export --collections FILE` (issue 42): the old-collection -> new-collection map, from the collections'
own ledger items taken out of the export's one stream, as CSV or JSON Lines; hostile names stay inside a cell."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest
from migrator_cli.export import export
from migrator_cli.export_collections import COLLECTION_COLUMNS, collection_row, is_collection_item

from tests.unit.test_export import MUX, PENDING

MADE = {
    "asset_id": "#collection#0123456789abcdef",
    "kind": "collection",
    "state": "created",
    "source_platform": "vimeo",
    "source_id": "folders/7",
    "name": "Talks",
    "collection_kind": "folder",
    "remote_collection_id": "col-1",
    "attempts": Decimal(1),
    "members": {"asset1": Decimal(0)},
    "member_count": Decimal(1),
}


@pytest.mark.parametrize(
    ("fields", "state", "remote", "note"),
    [
        ({}, "created", "col-1", None),
        ({"state": "pending", "remote_collection_id": None}, "pending", None, "not made yet"),
        (
            {"state": "failed", "error": "provider: HTTP 503", "retry_after": Decimal(99)},
            "failed",
            None,
            "not made: provider: HTTP 503 (to be retried)",
        ),
        (
            {"state": "failed", "error": "provider: HTTP 400: name too long"},
            "failed",
            None,
            "not made: provider: HTTP 400: name too long",
        ),
        ({"state": "failed"}, "failed", None, "not made: no reason given"),
    ],
)
def test_each_collection_says_where_it_was_where_it_is_and_whether_it_was_made(fields, state, remote, note):
    row = collection_row({**MADE, **fields}, "bunny")
    assert (row["state"], row["remote_collection_id"], row["note"]) == (state, remote, note)
    assert (row["key"], row["source_platform"], row["source_id"], row["name"], row["kind"], row["provider"]) == (
        "0123456789abcdef",
        "vimeo",
        "folders/7",
        "Talks",
        "folder",
        "bunny",
    )
    assert tuple(row) == COLLECTION_COLUMNS


@pytest.mark.parametrize(
    ("asset_id", "is_one"),
    [("#collection#abc", True), ("lib/intro", False), ("#pacer", False), (None, False)],
)
def test_a_collections_item_is_told_by_its_prefix(asset_id, is_one):
    assert is_collection_item({"asset_id": asset_id}) is is_one


PENDING_COLLECTION = {**MADE, "asset_id": "#collection#fedcba9876543210", "state": "pending", "name": "Demos"}
HOSTILE = {**MADE, "asset_id": "#collection#1111111111111111", "name": '=HYPERLINK("http://evil.example","x")\nrow'}


def run(items, fmt="csv", collections=True):
    out, side = io.StringIO(), io.StringIO()
    summary = export(items, out, fmt, "bunny", collections_out=side if collections else None)
    return out.getvalue(), side.getvalue(), summary


def test_the_collections_map_is_written_beside_the_video_map_from_the_same_stream():
    videos, collections, summary = run([MUX, MADE, PENDING, PENDING_COLLECTION])
    assert [r["id"] for r in csv.DictReader(io.StringIO(videos))] == ["lib/intro", "lib/later"]  # assets only
    rows = list(csv.DictReader(io.StringIO(collections)))
    assert [(r["name"], r["state"], r["remote_collection_id"], r["note"]) for r in rows] == [
        ("Talks", "created", "col-1", ""),
        ("Demos", "pending", "", "not made yet"),
    ]
    assert (summary.rows, summary.written, summary.collections, summary.collections_made) == (2, 2, 2, 1)
    assert summary.as_dict()["collections"] == 2 and summary.as_dict()["collections_made"] == 1
    assert "collections     2 written, 1 made at the target (1 not made: see their note)" in summary.lines()


def test_json_lines_carry_the_collections_exactly_and_a_redirect_map_leaves_them_csv():
    _, collections, _ = run([MADE, PENDING_COLLECTION], fmt="jsonl")
    docs = [json.loads(line) for line in collections.splitlines()]
    assert docs[0] == {
        "key": "0123456789abcdef",
        "source_platform": "vimeo",
        "source_id": "folders/7",
        "name": "Talks",
        "kind": "folder",
        "provider": "bunny",
        "remote_collection_id": "col-1",
        "state": "created",
        "note": None,
    }
    from migrator_cli.export import Template

    out, side = io.StringIO(), io.StringIO()
    export(
        [MADE],
        out,
        "redirects",
        "bunny",
        old_url=Template("https://vimeo.com/{source_id}", "--old-url"),
        new_url=Template("https://p.example/{remote_id}", "--new-url"),
        collections_out=side,
    )
    assert side.getvalue().splitlines()[0] == ",".join(COLLECTION_COLUMNS)


def test_a_hostile_name_stays_one_cell_that_never_runs():
    _, collections, _ = run([HOSTILE])
    (row,) = csv.DictReader(io.StringIO(collections))
    assert row["name"] == """'=HYPERLINK("http://evil.example","x") row"""
    assert len(collections.splitlines()) == 2  # the header and one row


def test_without_the_option_collection_items_are_passed_over():
    videos, collections, summary = run([MUX, MADE], collections=False)
    assert collections == "" and summary.rows == 1 and "#collection#" not in videos and summary.collections == 0


def test_the_collections_file_must_be_its_own(capsys, tmp_path):
    from migrator_cli.main import main

    same = str(tmp_path / "map.csv")
    assert main(["export", "-o", same, "--collections", same]) == 2
    assert "--collections needs a file of its own" in capsys.readouterr().err
