"""Triage (issue 45): the usage buckets of `migrator plan` (plan_usage.py), `--where` on load, plan and inventory
(triage.py), the left-behind report a load or an inventory writes, and `export --left-behind` turning it into a
redirect list (export_left_behind.py); on made-up inventories with usage and the existing fakes."""

from __future__ import annotations

import csv
import io
import json
import time
from datetime import UTC, datetime

import pytest
from migrator.messages import AssetMessage
from migrator.sources import Page
from migrator.usage import Usage, utc_text
from migrator.where import parse
from migrator.window import parse_window
from migrator_cli.left_behind import LeftBehindReport, default_path
from migrator_cli.load import load_inventory
from migrator_cli.main import main
from migrator_cli.plan_usage import bucket_of
from migrator_cli.select import Selection

from tests.unit.test_plan import plan
from tests.unit.test_sender import FakeSQS

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC).timestamp()
DAY = 86_400


def used(plays=None, days_ago=None, since_days=None, now=NOW) -> Usage:
    return Usage(
        read_at=utc_text(now),
        counted_by="kaltura entry plays",
        plays=plays,
        last_played_at=utc_text(now - days_ago * DAY) if days_ago is not None else None,
        since=utc_text(now - since_days * DAY) if since_days is not None else None,
    )


@pytest.mark.parametrize(
    ("usage", "bucket"),
    [
        (None, "unknown"),
        (used(), "unknown"),  # a usage that says neither plays nor a last play
        (used(plays=0), "never"),
        (used(plays=5), "played_when_unknown"),  # a count, no date (Vimeo's stats.plays)
        (used(plays=5, days_ago=3), "within_12_months"),
        (used(days_ago=364), "within_12_months"),  # a last play with no count
        (used(plays=5, days_ago=366), "12_to_24_months"),
        (used(plays=5, days_ago=730), "12_to_24_months"),  # 24 calendar months back from 6 Dec 2026 is 6 Dec 2024
        (used(plays=5, days_ago=731), "over_24_months"),
        (used(plays=5, days_ago=4000), "over_24_months"),
        (used(plays=0, days_ago=10), "within_12_months"),  # the date wins over a count that says otherwise
        (used(plays=0, since_days=90), "unknown"),  # none in the last 90 days says nothing of the year
        (used(plays=0, since_days=400), "12_to_24_months"),  # none in 400 days: not played in 12 months
        (used(plays=0, since_days=800), "over_24_months"),
        (used(plays=3, since_days=30), "within_12_months"),  # played since a month ago
        (used(plays=3, since_days=800), "played_when_unknown"),
    ],
)
def test_each_row_falls_in_one_usage_bucket(usage, bucket):
    assert bucket_of(usage, NOW) == bucket


def rows_with_usage(now: float) -> list[dict]:
    """Ten videos: 3 never played, 2 last played 3 years ago, 1 18 months ago, 3 last week, 1 with no usage."""
    spec = [("n", 0, None)] * 3 + [("o", 9, 1100)] * 2 + [("m", 4, 550)] + [("r", 70, 7)] * 3 + [("u", None, None)]
    docs = []
    for i, (kind, plays, days) in enumerate(spec):
        doc = {
            "id": f"lib/{i}",
            "source_url": f"https://m.example/{i}.mp4",
            "title": f"Video {i}",
            "duration_s": 60 * (i + 1),
            "size_bytes": 1_000_000 * (i + 1),
        }
        if kind != "u":
            doc["usage"] = used(plays=plays, days_ago=days, now=now).as_dict()
        docs.append(doc)
    return docs


EXPECTED = {  # bucket: ids
    "never": {0, 1, 2},
    "over_24_months": {3, 4},
    "12_to_24_months": {5},
    "within_12_months": {6, 7, 8},
    "played_when_unknown": set(),
    "unknown": {9},
}


def test_plan_shows_each_bucket_with_its_videos_hours_size_time_and_cost(tmp_path, capsys):
    lines = [json.dumps(d) for d in rows_with_usage(time.time())]
    code, out = plan(tmp_path, capsys, "--provider", "mux", "--rate", "1", "--json", lines=lines)
    doc = json.loads(out)
    assert code == 0
    buckets = {b["bucket"]: b for b in doc["usage"]["buckets"]}
    assert doc["usage"]["with_usage"] == 9
    for key, ids in EXPECTED.items():
        bucket = buckets[key]
        assert bucket["videos"] == len(ids)
        assert bucket["hours"] == pytest.approx(sum(i + 1 for i in ids) / 60, abs=1e-6)
        assert bucket["bytes"] == sum(1_000_000 * (i + 1) for i in ids)
        if ids:
            mux = bucket["providers"]["mux"]
            assert mux["time_s"] == pytest.approx(len(ids))  # one create a second
            assert mux["encoding_usd"] == pytest.approx(sum(i + 1 for i in ids) * 0.02)
        else:
            assert bucket["providers"] == {}
    whole = doc["providers"]["mux"]
    assert sum(b["providers"]["mux"]["one_off_usd"] for b in buckets.values() if b["videos"]) == pytest.approx(
        whole["encoding_usd"] + whole["aws_usd"]
    )
    _, text = plan(tmp_path, capsys, "--provider", "mux", "--rate", "1", lines=lines)
    assert "usage           9 of 10 assets say how they were watched" in text
    never = next(line for line in text.splitlines() if line.startswith("  never played"))
    assert never.split()[2:5] == ["3", "0.1", "6.0"]  # 3 videos, 6 minutes, 6 MB
    assert any(line.startswith("  not played in 24 months") and " mux " in line for line in text.splitlines())


def test_plan_with_no_usage_says_so_in_one_line(tmp_path, capsys):
    _, text = plan(tmp_path, capsys, "--provider", "mux", "--rate", "1")
    usage_lines = [line for line in text.splitlines() if line.startswith("usage")]
    assert usage_lines == [
        "usage           none in the rows: every asset is 'usage unknown' (`migrator usage` reads plays and last"
        " plays where the platform counts them)"
    ]


def test_plan_where_plans_only_what_it_keeps(tmp_path, capsys):
    lines = [json.dumps(d) for d in rows_with_usage(time.time())]
    code, out = plan(
        tmp_path, capsys, "--provider", "mux", "--rate", "1", "--json", "--where", "plays > 0", lines=lines
    )
    doc = json.loads(out)
    assert (code, doc["assets"], doc["filtered"], doc["where"]) == (0, 6, 4, ["plays > 0"])
    assert doc["providers"]["mux"]["time_s"] == pytest.approx(6)
    _, text = plan(tmp_path, capsys, "--provider", "mux", "--rate", "1", "--where", "plays > 0", lines=lines)
    assert "where           plays > 0: 4 assets left out, the plan is the rest" in text


def write_rows(tmp_path, docs, name="lib.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return str(path)


def test_load_where_plays_leaves_the_never_played_behind_with_their_report(tmp_path):
    docs = rows_with_usage(time.time())
    path = write_rows(tmp_path, docs)
    sqs = FakeSQS()
    report_path = tmp_path / "left.jsonl"
    with LeftBehindReport(report_path) as report:
        summary = load_inventory(
            path,
            sqs=sqs,
            queue_url="q",
            out=io.StringIO(),
            selection=Selection(expressions=(parse("plays > 0", time.time()),)),
            left_behind=report,
        )
    assert set(sqs.received) == {f"lib/{i}" for i in (3, 4, 5, 6, 7, 8)}
    assert summary.filtered == 4 and summary.complete is False  # a --from load's mark does not move
    left = [json.loads(line) for line in report_path.read_text().splitlines()]
    assert [row["id"] for row in left] == ["lib/0", "lib/1", "lib/2", "lib/9"]
    assert left[0] == {
        "id": "lib/0",
        "title": "Video 0",
        "source_url": "https://m.example/0.mp4",
        "why": "plays > 0 is false: plays is 0",
        "usage": docs[0]["usage"],
    }
    assert left[3]["why"] == "plays > 0 is false: plays is not known (no usage read)" and left[3]["usage"] is None
    assert f"left behind     4 rows, each with why, in {report_path}" in summary.lines()


def test_load_where_on_the_command_line_writes_the_report_beside_the_input(tmp_path, capsys):
    path = write_rows(tmp_path, rows_with_usage(time.time()))
    code = main(
        ["load", path, "--dry-run", "--where", "plays > 0 or plays is missing", "--where", "size < 9MB", "--json"]
    )
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    beside = tmp_path / "lib.left-behind.jsonl"
    assert code == 0 and summary["left_behind_file"] == str(beside)
    assert summary["where"] == ["plays > 0 or plays is missing", "size < 9MB"] and summary["good"] == 5
    whys = {json.loads(line)["id"]: json.loads(line)["why"] for line in beside.read_text().splitlines()}
    assert whys == {
        **{
            f"lib/{i}": "none holds: plays > 0 is false: plays is 0; plays is missing is false: plays is 0"
            for i in range(3)
        },
        "lib/8": "size < 9MB is false: size is 9,000,000",
        "lib/9": "size < 9MB is false: size is 10,000,000",
    }
    with pytest.raises(SystemExit) as refused:
        main(["load", path, "--dry-run", "--where", "plays < ten"])
    assert refused.value.code == 2 and "plays compares with a whole number, got 'ten'" in capsys.readouterr().err
    # The old form sends as before, and writes its own report of what it left.
    assert main(["load", path, "--dry-run", "--where", "folder=x*", "--left-behind", str(tmp_path / "f.jsonl")]) == 0
    assert len((tmp_path / "f.jsonl").read_text().splitlines()) == 10


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("lib.jsonl", "lib.left-behind.jsonl"),
        ("dir/lib.csv", "dir/lib.left-behind.jsonl"),
        ("lib.jsonl.gz", "lib.left-behind.jsonl"),
        ("-", "left-behind.jsonl"),
        ("s3://bucket/prefix/", "bucket.left-behind.jsonl"),
    ],
)
def test_the_report_goes_beside_the_input(source, expected):
    assert str(default_path(source)) == expected


def left_behind_file(tmp_path) -> str:
    rows = [
        {"id": "k/1", "title": "a", "source_url": "kaltura://0_abc", "why": "w", "usage": None},
        {"id": "k/2", "title": "b", "source_url": "https://old.example/v/2", "why": "w", "usage": None},
        {"id": "k/3", "title": "c", "source_url": "kaltura://0_abc", "why": "w", "usage": None},  # the same video
        "not an object",
        {"id": "", "source_url": "https://x.example/"},
    ]
    path = tmp_path / "left.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{torn\n")
    return str(path)


def test_export_turns_the_left_behind_report_into_a_redirect_list(tmp_path, capsys):
    path, out = left_behind_file(tmp_path), tmp_path / "redirects.csv"
    argv = ["export", "--left-behind", path, "--format", "redirects", "-o", str(out)]
    code = main(
        [
            *argv,
            "--old-url",
            "https://video.example/media/{source_id}",
            "--fallback-url",
            "https://intranet.example/retired?was={source_id}",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1  # three lines that are not rows: said, and the rest still written
    assert list(csv.reader(out.open())) == [
        ["old_url", "new_url"],
        ["https://video.example/media/0_abc", "https://intranet.example/retired?was=0_abc"],
        ["https://video.example/media/k/2", "https://intranet.example/retired?was=k/2"],
    ]
    assert "left behind     6 rows" in err and "written         2 redirects" in err and "not mapped      3" in err
    assert "line 4: not a JSON object" in err and "line 6: not JSON" in err
    # Without --old-url, a source_url that is a web address is the old URL; a reference is not one.
    main([*argv, "--fallback-url", "https://intranet.example/retired"])
    assert list(csv.reader(out.open()))[1:] == [["https://old.example/v/2", "https://intranet.example/retired"]]
    assert "kaltura://0_abc is not a web address: give --old-url" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--format", "redirects"], "--left-behind needs --fallback-url"),
        (["--format", "csv", "--fallback-url", "https://x.example/"], "give --format redirects or --format nginx"),
        (["--format", "redirects", "--fallback-url", "ftp://x"], "does not make an absolute http(s) URL"),
    ],
)
def test_export_left_behind_needs_a_fallback_and_a_redirect_format(tmp_path, capsys, extra, error):
    assert main(["export", "--left-behind", left_behind_file(tmp_path), *extra]) == 2
    assert error in capsys.readouterr().err


def test_export_left_behind_as_an_nginx_map(tmp_path, capsys):
    out = tmp_path / "left.conf"
    argv = ["export", "--left-behind", left_behind_file(tmp_path), "--format", "nginx", "-o", str(out)]
    main([*argv, "--old-url", "https://video.example/media/{source_id}", "--fallback-url", "https://x.example/gone"])
    text = out.read_text()
    assert '"/media/0_abc" "https://x.example/gone";' in text and '"/media/k/2" "https://x.example/gone";' in text


class UsageSource:
    """Six Kaltura-like videos over two pages: the even ones never played."""

    platform = "kaltura"

    def __init__(self):
        self.requests = self.throttled = 0

    def page(self, cursor, since=None, tracks=True):
        self.requests += 1
        start = int(cursor or 0)
        page = Page()
        for i in range(start, start + 3):
            page.saw(1_700_000_000 + i)
            plays = 0 if i % 2 == 0 else 10 * i
            usage = Usage(read_at="2026-12-06T00:00:00Z", counted_by="kaltura entry plays", plays=plays)
            page.entries.append(AssetMessage(f"kaltura/{i}", f"kaltura://0_{i}", title=f"Video {i}", usage=usage))
        page.cursor = "3" if start == 0 else None
        return page


def test_inventory_where_writes_what_it_keeps_and_reports_the_rest(tmp_path, capsys, monkeypatch):
    import migrator_cli.sweep as sweep_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KALTURA_PARTNER_ID", "1")
    monkeypatch.setenv("KALTURA_APP_TOKEN_ID", "t")
    monkeypatch.setenv("KALTURA_APP_TOKEN", "s")
    monkeypatch.setattr(sweep_module, "build_source", lambda *a, **k: UsageSource())
    argv = ["inventory", "--from", "kaltura", "-o", "k.jsonl", "--csv", "k.csv", "--where", "plays > 0"]
    assert main([*argv, "--json"]) == 0
    summaries = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert summaries[-1] == {
        "type": "where",
        "where": ["plays > 0"],
        "listing": "k.jsonl.listed.jsonl",
        "output": "k.jsonl",
        "left_behind_file": "k.left-behind.jsonl",
        "kept": 3,
        "left_behind": 3,
        "bad": 0,
    }
    kept = [json.loads(line)["id"] for line in (tmp_path / "k.jsonl").read_text().splitlines()]
    assert kept == ["kaltura/1", "kaltura/3", "kaltura/5"]
    assert len((tmp_path / "k.jsonl.listed.jsonl").read_text().splitlines()) == 6  # the whole library, resumable
    assert [row[0] for row in csv.reader((tmp_path / "k.csv").open())][1:] == kept
    left = [json.loads(line) for line in (tmp_path / "k.left-behind.jsonl").read_text().splitlines()]
    assert [(r["id"], r["why"], r["usage"]["plays"]) for r in left] == [
        (f"kaltura/{i}", "plays > 0 is false: plays is 0", 0) for i in (0, 2, 4)
    ]
    assert main(argv) == 0  # and in words
    err = capsys.readouterr().err
    assert "kept            3 rows in k.jsonl (of the 6 listed in k.jsonl.listed.jsonl)" in err
    assert "left behind     3 rows, each with why, in k.left-behind.jsonl" in err


def test_plan_window_puts_each_providers_hours_of_work_on_the_calendar(tmp_path, capsys):
    lines = [json.dumps(d) for d in rows_with_usage(time.time())]
    # 10 assets at one create a second: 10 s of work, inside a window open one minute of every day.
    window = "Mon-Sun 03:00-03:01 UTC"
    code, out = plan(tmp_path, capsys, "--provider", "mux", "--rate", "1", "--json", "--window", window, lines=lines)
    timed = json.loads(out)["window"]["mux"]
    canonical = parse_window(window).text
    assert code == 0 and timed["work_s"] == pytest.approx(10) and timed["window"] == canonical
    assert 10 <= timed["wall_s"] <= 86_400 + 10  # waits for the next 03:00 at most, then works its ten seconds
    _, text = plan(tmp_path, capsys, "--provider", "mux", "--rate", "1", "--window", window, lines=lines)
    assert f"  mux: 0.0 h of work inside {canonical}:" in text


def test_plan_refuses_a_window_it_cannot_read_with_the_reason(tmp_path, capsys):
    inventory = tmp_path / "inv.jsonl"
    inventory.write_text(json.dumps({"id": "a", "source_url": "https://example.com/a.mp4"}) + "\n")
    code = main(["plan", str(inventory), "--provider", "mux", "--window", "Mon-Fri 9 to 5"])
    assert code == 2 and "--window:" in capsys.readouterr().err
