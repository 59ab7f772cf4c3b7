"""Triage against the Kaltura simulator (issue 45): `plan --from kaltura` shows the usage buckets of the entries'
own plays and lastPlayedAt, and `load --from kaltura --where "plays > 0"` leaves the never-played behind with its
report, which `export --left-behind` turns into a redirect list. The simulator's usage is library_usage.py's."""

from __future__ import annotations

import csv
import json

from migrator_cli.main import main

from tests.sim.test_source_kaltura import APP, library  # noqa: F401  (the fixture)


def test_plan_from_kaltura_shows_the_usage_buckets(library, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    sim, _ = library(library_size=40, library_unfetchable_every=10)
    (tmp_path / "creds.json").write_text(json.dumps({"kaltura": APP}))
    argv = ["--from", "kaltura", "--source-url", sim.url, "--credentials", "creds.json", "--no-tracks"]
    assert main(["plan", *argv, "--provider", "mux", "--rate", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = [json.loads(line) for line in open(tmp_path / "kaltura-inventory.jsonl")]
    buckets = {b["bucket"]: b["videos"] for b in doc["usage"]["buckets"]}
    never = sum(1 for r in rows if r["usage"]["plays"] == 0 and "last_played_at" not in r["usage"])
    assert never and buckets["never"] == never
    assert buckets["unknown"] == 0 and doc["usage"]["with_usage"] == len(rows) == doc["assets"]
    # The rest spread over the three buckets of a last play (library_usage: 0 to 1,199 days ago).
    assert all(buckets[key] for key in ("within_12_months", "12_to_24_months", "over_24_months"))
    assert sum(buckets.values()) == len(rows)
    assert main(["plan", *argv, "--provider", "mux", "--rate", "1"]) == 0
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("  never played "))
    assert line.split()[2] == f"{never:,}"  # the bucket's videos, then its hours and size


def test_load_from_kaltura_where_plays_leaves_the_never_played_behind(library, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    sim, _ = library(library_size=40, library_unfetchable_every=10)
    (tmp_path / "creds.json").write_text(json.dumps({"kaltura": APP}))
    argv = ["--from", "kaltura", "--source-url", sim.url, "--credentials", "creds.json", "--no-tracks"]
    assert main(["load", *argv, "--dry-run", "--where", "plays > 0", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    rows = [json.loads(line) for line in open(tmp_path / "kaltura-inventory.jsonl")]
    never = {r["id"] for r in rows if r["usage"]["plays"] == 0}
    assert never and summary["filtered"] == len(never) and summary["good"] == len(rows) - len(never)
    assert summary["left_behind_file"] == "kaltura-inventory.left-behind.jsonl"
    left = [json.loads(line) for line in open(tmp_path / summary["left_behind_file"])]
    assert {r["id"] for r in left} == never
    assert all(r["why"] == "plays > 0 is false: plays is 0" and r["usage"]["plays"] == 0 for r in left)
    assert all(r["source_url"].startswith("kaltura://0_") and r["title"] for r in left)
    code = main(
        [
            "export",
            "--left-behind",
            summary["left_behind_file"],
            "--format",
            "redirects",
            "--old-url",
            "https://videos.example/media/t/{source_id}",
            "--fallback-url",
            "https://intranet.example/retired",
            "-o",
            "retired.csv",
        ]
    )
    assert code == 0
    pairs = list(csv.reader(open(tmp_path / "retired.csv")))[1:]
    assert len(pairs) == len(never) and all(new == "https://intranet.example/retired" for _, new in pairs)
