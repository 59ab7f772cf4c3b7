"""`migrator inventory --from`: a sweep over a fake source (pure, no network): rows `migrator load` takes as
they are, unfetchable videos apart with their reasons, a cursor that resumes without writing anything
twice, a mark for delta sweeps, and credentials from a file, a profile or the environment that are
never echoed."""

from __future__ import annotations

import json
import threading

import pytest
from migrator.messages import AssetMessage
from migrator.sources import Page, SourceError, Unfetchable
from migrator_cli.errors import CliError
from migrator_cli.inventory import BadRow, Row, read_inventory
from migrator_cli.main import main
from migrator_cli.source_credentials import source_credentials
from migrator_cli.sweep import SweepState, parse_since, read_mark, sweep


class FakeSource:
    """Pages of 3 videos; every fourth unfetchable; fails once at `fail_at` (a page number) if asked."""

    platform = "vimeo"

    def __init__(self, videos: int = 10, fail_at: int | None = None, stop_after: tuple | None = None):
        self.videos, self.fail_at, self.stop_after = videos, fail_at, stop_after
        self.requests = self.throttled = 0
        self.asked: list[str | None] = []

    def page(self, cursor, since=None, tracks=True):
        self.requests += 1
        start = int(cursor or 0)
        self.asked.append(cursor)
        if self.fail_at is not None and start // 3 == self.fail_at:
            self.fail_at = None
            raise SourceError("vimeo: HTTP 502")
        page = Page()
        for i in range(start, min(self.videos, start + 3)):
            when = 1_700_000_000 + i
            if since is not None and when < since:
                continue
            page.saw(when)
            if i % 4 == 3:
                page.entries.append(Unfetchable(f"vimeo/{i}", f"vimeo://{i}", "no file access", f"Video {i}"))
            else:
                tags = ("a;b", "c") if i == 0 else ()
                page.entries.append(AssetMessage(f"vimeo/{i}", f"vimeo://{i}", title=f"Video {i}", tags=tags))
        page.cursor = str(start + 3) if start + 3 < self.videos else None
        page.remaining = max(0, self.videos - start - 3)
        if self.stop_after and start == self.stop_after[0]:
            self.stop_after[1].set()
        return page


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_sweep_writes_rows_load_reads_as_they_are_and_unfetchable_ones_apart(tmp_path):
    out = tmp_path / "vimeo.jsonl"
    summary = sweep(FakeSource(), out, csv_output=tmp_path / "vimeo.csv", mark_path=tmp_path / "marks.json")
    assert (summary.rows, summary.unfetchable, summary.pages, summary.done) == (8, 2, 4, True)
    assert summary.reasons == {"no file access": 2}
    rows = list(read_inventory(str(out)))
    assert all(isinstance(r, Row) for r in rows) and [r.message.asset_id for r in rows][:3] == [
        "vimeo/0",
        "vimeo/1",
        "vimeo/2",
    ]
    as_csv = list(read_inventory(str(tmp_path / "vimeo.csv")))
    assert [r.message for r in as_csv] == [r.message for r in rows]  # the CSV carries the same, tags with ';' too
    unfetchable = lines(tmp_path / "vimeo.jsonl.unfetchable.jsonl")
    assert unfetchable == [
        {"id": "vimeo/3", "source_url": "vimeo://3", "reason": "no file access", "title": "Video 3"},
        {"id": "vimeo/7", "source_url": "vimeo://7", "reason": "no file access", "title": "Video 7"},
    ]
    assert read_mark(tmp_path / "marks.json", "vimeo") == 1_700_000_009


def test_an_interrupted_sweep_resumes_at_its_cursor_and_writes_nothing_twice(tmp_path):
    out = tmp_path / "vimeo.jsonl"
    source = FakeSource(videos=12, fail_at=2)
    with pytest.raises(CliError, match="resumes after the 2 pages saved"):
        sweep(source, out)
    state = SweepState.load(tmp_path / "vimeo.jsonl.state.json")
    assert state.cursor == "6" and state.rows == 5 and not state.done
    with out.open("a") as torn:  # a half-written line from the crash: the resume cuts it off
        torn.write('{"id": "vimeo/6", "sour')
    again = FakeSource(videos=12)
    summary = sweep(again, out)
    assert again.asked == ["6", "9"] and summary.resumed_at == 5 and summary.done
    ids = [doc["id"] for doc in lines(out)]
    assert ids == [f"vimeo/{i}" for i in range(12) if i % 4 != 3]
    assert len(lines(tmp_path / "vimeo.jsonl.unfetchable.jsonl")) == 3


def test_ctrl_c_ends_after_the_page_in_hand_and_the_same_command_goes_on(tmp_path):
    out, stop = tmp_path / "vimeo.jsonl", threading.Event()
    first = sweep(FakeSource(videos=9, stop_after=(3, stop)), out, stop=stop)
    assert first.interrupted and first.exit_code == 130 and first.pages == 2
    second = sweep(FakeSource(videos=9), out)
    assert second.done and [d["id"] for d in lines(out)] == [f"vimeo/{i}" for i in range(9) if i % 4 != 3]


def test_a_finished_sweep_starts_over_and_a_delta_sweep_lists_from_the_mark(tmp_path):
    out = tmp_path / "vimeo.jsonl"
    sweep(FakeSource(), out)
    sweep(FakeSource(), out)  # done before: a fresh sweep, not an append
    assert len(lines(out)) == 8
    delta = sweep(FakeSource(), tmp_path / "delta.jsonl", since=1_700_000_008)
    assert [d["id"] for d in lines(tmp_path / "delta.jsonl")] == ["vimeo/8", "vimeo/9"] and delta.since


def test_since_reads_times_epochs_and_last():
    assert parse_since("2024-01-01T00:00:00Z") == 1_704_067_200
    assert parse_since("1704067200") == 1_704_067_200 and parse_since("last") == "last"
    with pytest.raises(ValueError):
        parse_since("yesterday")


def test_credentials_come_from_a_file_a_profile_or_the_environment_and_are_never_echoed(tmp_path):
    file = tmp_path / "creds.json"
    file.write_text(json.dumps({"vimeo": {"token": "from-file"}}))
    profiles = tmp_path / "sources.json"
    profiles.write_text(json.dumps({"work": {"mux": {"token_id": "i", "token_secret": "s"}}}))
    env = {"MIGRATOR_SOURCES_FILE": str(profiles), "VIMEO_TOKEN": "from-env", "MUX_TOKEN_ID": "only-half"}
    assert source_credentials("vimeo", str(file), None, env) == {"token": "from-file"}
    assert source_credentials("mux", None, "work", env) == {"token_id": "i", "token_secret": "s"}
    assert source_credentials("vimeo", None, None, env) == {"token": "from-env"}
    assert source_credentials("mux", None, None, env) is None  # half a pair is no credentials
    file.write_text('{"vimeo": "hunter2"}')
    with pytest.raises(CliError) as caught:
        source_credentials("vimeo", str(file), None, env)
    assert "hunter2" not in str(caught.value)


def test_the_command_needs_credentials_and_says_where_they_go(tmp_path, monkeypatch, capsys):
    for name in ("VIMEO_TOKEN", "MIGRATOR_SOURCE_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    assert main(["inventory", "--from", "vimeo", "-o", str(tmp_path / "v.jsonl")]) == 2
    assert "no vimeo credentials: pass --credentials FILE or --source-profile NAME, or set VIMEO_TOKEN" in (
        capsys.readouterr().err
    )
    assert main(["load", "x.csv", "--from", "vimeo", "--dry-run"]) == 2
    assert "a FILE (or s3://bucket/prefix) or --from PLATFORM, one of the two" in capsys.readouterr().err


def test_a_row_the_loader_would_refuse_never_reaches_the_inventory(tmp_path):
    """Every row a sweep writes is a message the queue's validation accepts (the source built it with it)."""
    out = tmp_path / "vimeo.jsonl"
    sweep(FakeSource(videos=40), out)
    assert not [r for r in read_inventory(str(out)) if isinstance(r, BadRow)]


class ScriptedSource:
    """Pages as a misbehaving platform answers them: `script` maps a cursor to (ids on it, next cursor)."""

    platform = "mux"

    def __init__(self, script: dict):
        self.script, self.asked = script, []
        self.requests = self.throttled = 0

    def page(self, cursor, since=None, tracks=True):
        self.requests += 1
        self.asked.append(cursor)
        assert len(self.asked) <= 60, "the listing went round and round"
        ids, following = self.script[cursor]
        return Page(entries=[AssetMessage(f"mux/{i}", f"mux://{i}") for i in ids], cursor=following)


@pytest.mark.parametrize(
    ("script", "reason", "pages_saved"),
    [
        # Vimeo: paging.next stuck on the page it came from.
        ({None: ([1, 2], "page=2"), "page=2": ([3, 4], "page=2")}, "already read", 1),
        # Mux: cursors in a cycle (A -> B -> A).
        ({None: ([1], "A"), "A": ([2], "B"), "B": ([3], "A")}, "already read", 2),
        # api.video: empty pages under a total that says millions more follow.
        ({None: ([1], "2"), **{str(n): ([], str(n + 1)) for n in range(2, 50)}}, "3 empty pages in a row", 3),
    ],
    ids=["stuck-next", "cursor-cycle", "empty-pages"],
)
def test_a_listing_that_repeats_its_pages_ends_with_a_reason_and_keeps_its_resume_point(
    tmp_path, script, reason, pages_saved
):
    out = tmp_path / "mux.jsonl"
    source = ScriptedSource(script)
    with pytest.raises(CliError, match=reason) as stopped:
        sweep(source, out)
    assert len(source.asked) <= len(script)  # it stopped; it did not go round again
    assert f"the {pages_saved} pages before it are saved" in str(stopped.value)
    state = SweepState.load(tmp_path / "mux.jsonl.state.json")
    assert state.pages == pages_saved and not state.done
    assert len({doc["id"] for doc in lines(out)}) == len(lines(out))  # nothing written twice


def test_the_paging_guard_lets_a_sound_listing_through_and_one_empty_page_too():
    from migrator.sources.paging import PagingGuard

    guard = PagingGuard()
    pages = [(None, Page(entries=[AssetMessage("a", "mux://a")], cursor="c1"))]
    pages += [("c1", Page(cursor="c2")), ("c2", Page(entries=[AssetMessage("b", "mux://b")], cursor="c3"))]
    pages += [("c3", Page(cursor="c4")), ("c4", Page(cursor="c5")), ("c5", Page(cursor=None))]
    assert [guard.check(cursor, page) for cursor, page in pages] == [None] * 6
    assert PagingGuard().check("x", Page(cursor="x")) is not None  # a page naming itself
    skipped_only = Page(cursor="n2", skipped=1000)  # an S3 page of other files is not an empty page
    guard = PagingGuard(max_empty_pages=1)
    assert guard.check(None, skipped_only) is None


STILL_PREPARING = Unfetchable("mux/a1", "mux://a1", "still processing at Mux")


@pytest.mark.parametrize(
    ("page", "empty"),
    [
        (Page(cursor="n"), True),  # the platform's page held nothing at all
        (Page(entries=[AssetMessage("a", "mux://a")], cursor="n"), False),
        (Page(entries=[Unfetchable("a", "mux://a", "errored")], cursor="n"), False),  # nothing fetchable
        (Page(pending=[STILL_PREPARING] * 100, cursor="n"), False),  # review 47, item 3: all still processing
        (Page(skipped=1000, cursor="n"), False),  # an S3 page of other files
        (Page(listed=1000, cursor="n"), False),  # unchanged since a delta's mark, or naming no video: left out
    ],
    ids=["nothing", "rows", "unfetchable", "all-pending", "not-videos", "left-out"],
)
def test_only_a_page_that_held_nothing_at_all_is_empty(page, empty):
    from migrator.sources.paging import held_nothing

    assert held_nothing(page) is empty


def test_the_paging_guard_follows_any_run_of_pages_that_held_videos_and_stops_a_run_that_held_none():
    from migrator.sources.paging import PagingGuard

    guard = PagingGuard()
    preparing = [(f"c{n}", Page(pending=[STILL_PREPARING], cursor=f"c{n + 1}")) for n in range(10)]
    left_out = [(f"c{n}", Page(listed=1000, cursor=f"c{n + 1}")) for n in range(10, 20)]
    assert [guard.check(cursor, page) for cursor, page in preparing + left_out] == [None] * 20
    assert [guard.check(f"c{n}", Page(cursor=f"c{n + 1}")) for n in range(20, 23)][-1] == (
        "3 empty pages in a row while the platform says more follow"
    )


def test_the_mark_is_never_later_than_the_sweeps_start_even_across_a_resume(tmp_path):
    """Review 4, item 9: videos 6-9 changed (at ..006-..009) while a sweep that began at ..005 was running;
    it had listed some of them before they changed, so the next --since last must start no later than ..005."""
    out, marks = tmp_path / "vimeo.jsonl", tmp_path / "marks.json"
    times = iter([1_700_000_005.0, 1_700_000_050.0, 1_700_000_100.0, 1_700_000_200.0] + [1_700_000_300.0] * 20)
    with pytest.raises(CliError):
        sweep(FakeSource(videos=12, fail_at=2), out, mark_path=marks, clock=lambda: next(times))
    assert SweepState.load(tmp_path / "vimeo.jsonl.state.json").began == 1_700_000_005.0
    summary = sweep(FakeSource(videos=12), out, mark_path=marks, clock=lambda: next(times))  # resumed later
    assert summary.done and summary.mark == 1_700_000_011  # the newest change seen
    assert read_mark(marks, "vimeo") == 1_700_000_005.0  # but the mark is when the sweep began


def test_a_state_file_written_before_the_start_was_kept_still_resumes(tmp_path):
    out, marks, state_path = tmp_path / "vimeo.jsonl", tmp_path / "marks.json", tmp_path / "vimeo.jsonl.state.json"
    with pytest.raises(CliError):
        sweep(FakeSource(videos=12, fail_at=2), out, mark_path=marks)
    doc = json.loads(state_path.read_text())
    del doc["began"]  # what the release before this one wrote
    state_path.write_text(json.dumps(doc))
    summary = sweep(FakeSource(videos=12), out, mark_path=marks, clock=lambda: 1_700_000_007.0)
    assert summary.done and summary.resumed_at == 5
    assert read_mark(marks, "vimeo") == 1_700_000_007.0  # its start unknown: the resume's is taken


class EncodingSource:
    """A platform listed by creation time only (Mux, Stream): videos `processing` are still encoding, and a
    delta past the mark never lists them again; `video(id)` is the only way back to them."""

    platform = "mux"

    def __init__(self, processing: set[int], captions_processing: set[int] = frozenset()):
        self.processing, self.captions_processing = set(processing), set(captions_processing)
        self.requests = self.throttled = 0
        self.looked_up: list[str] = []

    def _entry(self, i: int, page: Page) -> None:
        ref = f"mux://asset{i}"
        if i in self.processing:
            page.pending.append(Unfetchable(f"mux/asset{i}", ref, "still processing", f"Video {i}"))
        elif i in self.captions_processing:
            page.pending.append(Unfetchable(f"mux/asset{i}", ref, "a caption track still processing"))
        else:
            page.entries.append(AssetMessage(f"mux/asset{i}", ref, title=f"Video {i}"))

    def page(self, cursor, since=None, tracks=True):
        self.requests += 1
        page = Page()
        for i in range(6):
            created = 1_700_000_000 + i
            if since is None or created >= since:
                page.saw(created)
                self._entry(i, page)
        return page

    def video(self, video_id, tracks=True):
        self.requests += 1
        self.looked_up.append(video_id)
        page = Page()
        self._entry(int(video_id.removeprefix("asset")), page)
        return page


def test_a_delta_lists_again_every_video_and_caption_the_last_sweep_saw_still_processing(tmp_path):
    """Sources, item 3: `--since last` never listed again a video still encoding at the previous sweep (or one
    whose captions were), since Mux and Stream list by creation time and the mark had passed it."""
    marks, source = tmp_path / "marks.json", EncodingSource(processing={1, 4}, captions_processing={2})
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks)
    assert [d["id"] for d in lines(tmp_path / "all.jsonl")] == ["mux/asset0", "mux/asset3", "mux/asset5"]
    assert first.pending == 3 and "pending         3 still processing" in "\n".join(first.lines())
    assert lines(tmp_path / "all.jsonl.unfetchable.jsonl") == []  # not written off: waited for

    source.processing, source.captions_processing = {4}, set()  # 1 and 2 finished, 4 still encoding
    since = read_mark(marks, "mux") + 1  # past every creation time: the listing finds nothing new
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=since)
    assert sorted(source.looked_up) == ["asset1", "asset2", "asset4"]
    assert [d["id"] for d in lines(tmp_path / "delta.jsonl")] == ["mux/asset1", "mux/asset2"]
    assert delta.pending == 1 and set(json.loads(marks.read_text())["mux"]["pending"]) == {"mux/asset4"}


def test_a_video_processing_for_a_week_is_written_off_with_its_reason(tmp_path):
    marks, source = tmp_path / "marks.json", EncodingSource(processing={1})
    sweep(source, tmp_path / "a.jsonl", mark_path=marks, clock=lambda: 1_800_000_000.0)
    later = 1_800_000_000.0 + 8 * 86_400
    delta = sweep(source, tmp_path / "b.jsonl", mark_path=marks, since=1_700_000_100, clock=lambda: later)
    assert delta.pending == 0
    [written_off] = lines(tmp_path / "b.jsonl.unfetchable.jsonl")
    assert written_off["id"] == "mux/asset1" and written_off["reason"] == "still processing for 8 days"
