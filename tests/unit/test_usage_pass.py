"""`migrator usage` (usage_pass.py, commands/usage.py): a fake bulk reader (the account's breakdown, ids ignored) and
a fake per-id one (the ids from its cursor on), the rows written in order with usage merged, a pass stopped mid-way
(a SourceError, Ctrl-C) resumed with no row lost or doubled and no page read twice, and the command's errors."""

from __future__ import annotations

import argparse
import json
import threading
from collections import Counter
from collections.abc import Sequence

import pytest
from migrator.sources import SourceError
from migrator.usage import Usage, UsagePage
from migrator_cli.commands import usage as usage_command
from migrator_cli.errors import CliError
from migrator_cli.usage_pass import Store, StoredIds, UsagePass, video_id_of

READ = "2026-12-06T12:00:00Z"


def plays_of(video_id: str) -> int:
    return int(video_id.removeprefix("v")) * 10


class PerIdReader:
    """Reads `size` of the pass's ids a page from its cursor (a position), as Wistia's per-media stats would."""

    platform = "wistia"
    counted_by = "wistia stats play_count"
    account_wide = False

    def __init__(self, size=3, fail_at_page=None, nothing_for=()):
        self.size, self.fail_at_page, self.nothing_for = size, fail_at_page, set(nothing_for)
        self.cursors: Counter = Counter()
        self.pages = 0

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        self.pages += 1
        if self.fail_at_page is not None and self.pages == self.fail_at_page:
            raise SourceError("wistia: HTTP 503")
        self.cursors[cursor] += 1
        start = int(cursor or 0)
        batch = video_ids[start : start + self.size]
        found = {v: Usage(READ, self.counted_by, plays=plays_of(v)) for v in batch if v not in self.nothing_for}
        following = start + self.size
        return UsagePage(found, str(following) if following < len(video_ids) else None, requests=len(batch))


class BulkReader:
    """The account's whole breakdown, `size` videos a page, whatever ids the pass holds (JW Player's, Mux Data's)."""

    platform = "jwplayer"
    counted_by = "jwplayer analytics plays"
    account_wide = True

    def __init__(self, account: list[str], size=4, since=None):
        self.account, self.size, self.since = account, size, since
        self.cursors: Counter = Counter()

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        self.cursors[cursor] += 1
        start = int(cursor or 0)
        named = self.account[start : start + self.size]
        found = {v: Usage(READ, self.counted_by, plays=plays_of(v), since=self.since) for v in named}
        following = start + self.size
        return UsagePage(found, str(following) if following < len(self.account) else None, requests=1)


def inventory(tmp_path, rows):
    path = tmp_path / "inventory.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def row(platform, n, **extra):
    return {"id": f"{platform}/v{n}", "source_url": f"{platform}://v{n}", "title": f"video {n}", **extra}


def written(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_per_id_pass_writes_every_row_in_order_with_usage_and_counts_the_rest(tmp_path):
    rows = [row("wistia", n) for n in range(1, 8)]
    rows.insert(3, row("vimeo", 99))  # another platform's row: unchanged
    source = inventory(tmp_path, rows)
    out = tmp_path / "out.jsonl"
    reader = PerIdReader(size=3, nothing_for={"v5"})
    summary = UsagePass(reader, source, out).run()
    got = written(out)
    assert [r["id"] for r in got] == [r["id"] for r in rows]
    by_id = {r["id"]: r for r in got}
    assert by_id["vimeo/v99"] == rows[3] and by_id["wistia/v5"] == row("wistia", 5)
    assert by_id["wistia/v2"]["usage"] == {"plays": 20, "read_at": READ, "counted_by": "wistia stats play_count"}
    assert (summary.rows, summary.with_usage, summary.without, summary.other_platforms) == (8, 6, 1, 1)
    assert (summary.videos, summary.pages, summary.requests) == (7, 3, 7)
    assert summary.requests_per_video == 1.0
    assert not list(tmp_path.glob("out.jsonl.*"))  # state and store removed once written


def test_a_bulk_reader_pages_the_account_and_only_the_inventorys_videos_get_usage(tmp_path):
    source = inventory(tmp_path, [row("jwplayer", n) for n in (2, 9, 4)])
    out = tmp_path / "out.jsonl"
    reader = BulkReader([f"v{n}" for n in range(1, 11)], size=4)
    summary = UsagePass(reader, source, out).run()
    assert [r["usage"]["plays"] for r in written(out)] == [20, 90, 40]
    assert (summary.pages, summary.requests, summary.videos, summary.with_usage) == (3, 3, 3, 3)


@pytest.mark.parametrize("since", [None, "2026-08-28T00:00:00Z"])
def test_a_video_a_complete_breakdown_never_named_was_not_played_in_its_period(tmp_path, since):
    source = inventory(tmp_path, [row("jwplayer", n) for n in (2, 30, 4)])
    out = tmp_path / "out.jsonl"
    summary = UsagePass(BulkReader([f"v{n}" for n in range(1, 11)], since=since), source, out).run()
    unplayed = written(out)[1]["usage"]
    assert (unplayed["plays"], unplayed.get("since")) == (0, since)
    assert "last_played_at" not in unplayed and "not in the breakdown" in unplayed["counted_by"]
    assert (summary.with_usage, summary.unplayed, summary.without) == (3, 1, 0)


def test_a_breakdown_that_named_nobody_says_nothing_of_anybody(tmp_path):
    source = inventory(tmp_path, [row("jwplayer", n) for n in (2, 3)])
    out = tmp_path / "out.jsonl"
    summary = UsagePass(BulkReader([]), source, out).run()
    assert all("usage" not in r for r in written(out)) and summary.without == 2


def test_a_per_video_readers_silence_is_not_a_zero(tmp_path):
    source = inventory(tmp_path, [row("wistia", n) for n in (1, 2)])
    out = tmp_path / "out.jsonl"
    UsagePass(PerIdReader(nothing_for={"v2"}), source, out).run()
    assert "usage" not in written(out)[1]


def test_usage_the_row_already_had_is_merged_not_replaced(tmp_path):
    earlier = {"plays": 1, "views": 50, "last_played_at": "2025-01-01T00:00:00Z", "read_at": "2026-01-01T00:00:00Z",
               "counted_by": "wistia stats play_count"}  # fmt: skip
    source = inventory(tmp_path, [row("wistia", 3, usage=earlier)])
    out = tmp_path / "out.jsonl"
    UsagePass(PerIdReader(), source, out).run()
    assert written(out)[0]["usage"] == {**earlier, "plays": 30, "read_at": READ}


@pytest.mark.parametrize("stop_with", ["source_error", "ctrl_c"])
def test_a_pass_stopped_mid_way_resumes_from_its_last_page_with_no_row_lost_or_doubled(tmp_path, stop_with):
    rows = [row("wistia", n) for n in range(1, 11)]
    source = inventory(tmp_path, rows)
    out = tmp_path / "out.jsonl"
    stop = threading.Event()
    if stop_with == "source_error":
        reader = PerIdReader(size=3, fail_at_page=3)
    else:
        reader = PerIdReader(size=3)
        real_page = reader.page

        def page_then_ctrl_c(cursor, ids):  # Ctrl-C pressed while the second page is read
            answer = real_page(cursor, ids)
            if reader.pages == 2:
                stop.set()
            return answer

        reader.page = page_then_ctrl_c  # type: ignore[method-assign]
    with pytest.raises(CliError) as stopped:
        UsagePass(reader, source, out, stop=stop).run()
    assert "the same command resumes" in str(stopped.value) and not out.exists()
    assert stopped.value.exit_code == (1 if stop_with == "source_error" else 130)
    state = json.loads((tmp_path / "out.jsonl.usage-state.json").read_text())
    assert (state["cursor"], state["pages"], state["requests"]) == ("6", 2, 6)
    resumed = PerIdReader(size=3)
    summary = UsagePass(resumed, source, out).run()
    assert resumed.cursors == {"6": 1, "9": 1}  # the pages already read are not read again
    got = written(out)
    assert [r["id"] for r in got] == [r["id"] for r in rows]
    assert [r["usage"]["plays"] for r in got] == [n * 10 for n in range(1, 11)]
    assert summary.resumed and (summary.pages, summary.requests, summary.with_usage) == (4, 10, 10)


def test_a_page_read_again_after_a_crash_before_its_state_was_saved_merges_to_the_same_usage(tmp_path):
    source = inventory(tmp_path, [row("wistia", n) for n in range(1, 4)])
    store = Store(tmp_path / "s.sqlite")
    store.fill_ids(iter(["v1", "v2", "v3", "v2"]))  # a video listed twice is asked for once
    ids = StoredIds(store)
    assert list(ids) == ["v1", "v2", "v3"] and ids[1:] == ["v2", "v3"] and ids[-1] == "v3"
    once = {"v1": Usage(READ, "wistia stats play_count", plays=10)}
    store.add_usage(once)
    store.add_usage(once)
    store.add_usage({"v404": Usage(READ, "x", plays=1)})  # not in the inventory: not kept
    assert store.usage_of("v1") == once["v1"] and store.count_usage() == 1
    store.close()
    assert source.exists()


def test_a_changed_inventory_is_not_resumed_without_restart(tmp_path):
    source = inventory(tmp_path, [row("wistia", n) for n in range(1, 10)])
    out = tmp_path / "out.jsonl"
    with pytest.raises(CliError):
        UsagePass(PerIdReader(fail_at_page=2), source, out).run()
    source.write_text(source.read_text() + json.dumps(row("wistia", 10)) + "\n")
    with pytest.raises(CliError, match="--restart"):
        UsagePass(PerIdReader(), source, out).run()
    summary = UsagePass(PerIdReader(), source, out).run(restart=True)
    assert summary.with_usage == 10 and not summary.resumed


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"id": "wistia/abc", "source_url": "wistia://abc"}, "abc"),
        ({"id": "wistia/abc"}, "abc"),  # no reference: the asset id
        ({"id": "wistia/", "source_url": "https://example.com/a.mp4"}, None),
        ({"id": "mux/abc", "source_url": "mux://abc"}, None),
        ({"id": "x", "source_url": "wistia://abc/captions/en"}, None),  # a track, not a video
        ({"id": 3}, None),
    ],
)
def test_a_rows_video_id_on_the_platform(given, expected):
    assert video_id_of(given, "wistia") == expected


def test_bad_inventory_lines_are_named(tmp_path):
    source = tmp_path / "inventory.jsonl"
    source.write_text(json.dumps(row("wistia", 1)) + "\n[1, 2]\n")
    with pytest.raises(CliError, match="line 2 of"):
        UsagePass(PerIdReader(), source, tmp_path / "out.jsonl").run()


def args(**given):
    base = {"platform": "wistia", "credentials": None, "source_profile": None, "source_url": None}
    return argparse.Namespace(**{**base, "source_rate": None, "state": None, "restart": False, "json": True, **given})


@pytest.mark.parametrize(
    ("platform", "says"),
    [
        ("myspace", "unknown source 'myspace'"),
        ("kaltura", "its listing carries usage"),
        ("vimeo", "its listing carries usage"),
        ("dropbox", "no usage reader for dropbox: it exposes no usage this tool reads"),
    ],
)
def test_a_platform_without_a_reader_is_told_why(platform, says):
    with pytest.raises(CliError, match=says):
        usage_command.reader_factory(platform)


def test_missing_credentials_are_worded_as_the_inventory_words_them(monkeypatch, tmp_path):
    from migrator.sources import analytics

    monkeypatch.setitem(analytics.READERS, "wistia", lambda *a, **k: PerIdReader())
    for name in ("MIGRATOR_SOURCE_CREDENTIALS", "WISTIA_TOKEN", "WISTIA_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(CliError, match=r"no wistia credentials: pass --credentials FILE or --source-profile NAME"):
        usage_command.run(args(inventory=str(tmp_path / "i.jsonl"), output=str(tmp_path / "o.jsonl")))


def test_the_command_runs_the_pass_and_prints_its_summary_as_json(monkeypatch, tmp_path, capsys):
    from migrator.sources import analytics

    monkeypatch.setitem(analytics.READERS, "wistia", lambda credentials, base_url, **options: PerIdReader())
    creds = tmp_path / "creds.json"
    creds.write_text(json.dumps({"wistia": {"token": "t"}}))
    source = inventory(tmp_path, [row("wistia", n) for n in range(1, 5)])
    out = tmp_path / "out.jsonl"
    assert usage_command.run(args(inventory=str(source), output=str(out), credentials=str(creds))) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["type"] == "summary" and summary["with_usage"] == 4 and summary["requests_per_video"] == 1.0
    with pytest.raises(CliError, match="another file"):
        usage_command.run(args(inventory=str(source), output=str(source), credentials=str(creds)))
