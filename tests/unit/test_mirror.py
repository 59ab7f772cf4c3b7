"""The mirror's decisions as tables (migrator.mirror.decide): what an invocation does given its checkpoint, the
window and the time left; where a new sweep starts; how a listing ended (a THROTTLED source among them); and
the intake sink's batches and retries."""

from __future__ import annotations

import json

import botocore.client
import pytest
from migrator.messages import AssetMessage
from migrator.mirror.checkpoint import status_of, sweep_of, view_of
from migrator.mirror.decide import PAGE_RESERVE_S, Action, Outcome, View, next_action, outcome_of, start_of
from migrator.mirror.sink import MAX_BATCH_BYTES, IntakeSink, SendFailed, batches
from migrator.sources import Page, SourceDenied, SourceError, SourceThrottled, Unfetchable
from migrator.sweeping import MARK_OVERLAP_S, Failure, Stop, SweepFailed
from migrator.where import parse

NOW = 1_800_000_000.0
RECORD = {"mark": 1_700_000_000.0, "pending": {"vimeo/9": {"ref": "vimeo://9", "since": 1.0}}}


@pytest.mark.parametrize(
    ("view", "closed_until", "time_left", "expected"),
    [
        (View(), None, 900.0, Action.START),  # nothing under way
        (View(sweeping=True), None, 900.0, Action.RESUME),
        (View(scanning=True, sweeping=True), None, 900.0, Action.SCAN),  # the gone check first
        (View(), NOW + 3600, 900.0, Action.WAIT),  # the window is closed: list nothing
        (View(sweeping=True), NOW + 1, 900.0, Action.WAIT),
        (View(lease_until=NOW + 10), None, 900.0, Action.HELD),  # another invocation is listing
        (View(lease_until=NOW - 1, sweeping=True), None, 900.0, Action.RESUME),  # its lease lapsed (it crashed)
        (View(), None, PAGE_RESERVE_S, Action.SHORT),  # no time for a page
        (View(lease_until=NOW + 10), NOW + 5, 900.0, Action.WAIT),
    ],
)
def test_what_an_invocation_does(view, closed_until, time_left, expected):
    assert next_action(view, NOW, closed_until, time_left) is expected


@pytest.mark.parametrize(
    ("view", "audit_every", "since", "full"),
    [
        (View(), 24, None, True),  # the first sweep: no mark, a full listing
        (View(record=RECORD, sweeps=1), 24, RECORD["mark"] - MARK_OVERLAP_S, False),  # a delta from the mark
        (View(record=RECORD, sweeps=24), 24, None, True),  # every 24th: full, for the gone check
        (View(record=RECORD, sweeps=48), 24, None, True),
        (View(record=RECORD, sweeps=25), 24, RECORD["mark"] - MARK_OVERLAP_S, False),
        (View(record=RECORD, sweeps=24), 0, RECORD["mark"] - MARK_OVERLAP_S, False),  # 0: no full sweep again
        (View(record={"mark": "x"}, sweeps=3), 24, None, True),  # a mark that is no number: full
    ],
)
def test_where_a_new_sweep_starts(view, audit_every, since, full):
    start = start_of(view, audit_every)
    assert (start.since, start.full) == (since, full)
    assert start.carried == (RECORD["pending"] if view.record is RECORD else {})


@pytest.mark.parametrize(
    ("record", "sweeps", "cursor"),
    [
        ({"mark": 1_700_000_000.0, "delta": "dbx-cursor"}, 1, "dbx-cursor"),  # Dropbox: the delta from its cursor
        ({"mark": 1_700_000_000.0, "delta": "dbx-cursor"}, 24, None),  # a full sweep lists from the start
        ({"mark": 1_700_000_000.0}, 1, None),
    ],
)
def test_a_delta_starts_at_the_cursor_the_last_sweep_handed_on(record, sweeps, cursor):
    assert start_of(View(record=record, sweeps=sweeps), 24).cursor == cursor


@pytest.mark.parametrize(
    ("stop", "failure", "expected"),
    [
        (Stop.DONE, None, Outcome.FINISHED),
        (Stop.STOPPED, None, Outcome.PAUSED),  # out of time, or the window closed: the next resumes
        (None, SweepFailed(Failure.LISTING, "429", SourceThrottled("vimeo: HTTP 429", 60)), Outcome.THROTTLED),
        (None, SweepFailed(Failure.RECHECK, "429", SourceThrottled("vimeo: HTTP 429", 60)), Outcome.THROTTLED),
        (None, SweepFailed(Failure.LISTING, "502", SourceError("vimeo: HTTP 502")), Outcome.FAILED),
        (None, SweepFailed(Failure.LISTING, "401", SourceDenied("refused")), Outcome.FAILED),
        (None, SweepFailed(Failure.STUCK, "the same page again"), Outcome.STUCK),
    ],
)
def test_how_a_listing_ended(stop, failure, expected):
    assert outcome_of(stop, failure) is expected


def test_rows_go_in_batches_of_ten_and_of_at_most_256_kib():
    assert [len(b) for b in batches(["x"] * 23)] == [10, 10, 3]
    big = "y" * (MAX_BATCH_BYTES // 3)
    assert [len(b) for b in batches([big] * 7)] == [3, 3, 1]
    assert batches([]) == []


class FlakySqs:
    def __init__(self, failures: list[list[dict]]):
        self.failures, self.calls = failures, []

    def send_message_batch(self, QueueUrl, Entries):
        self.calls.append([e["Id"] for e in Entries])
        return {"Failed": self.failures.pop(0) if self.failures else []}


def test_a_row_the_queue_drops_once_is_sent_again_and_one_it_refuses_fails_the_page():
    sqs = FlakySqs([[{"Id": "1", "SenderFault": False, "Code": "InternalError"}]])
    sink = IntakeSink(sqs, "q", sleep=lambda s: None)
    for i in range(3):
        sink.row(AssetMessage(f"vimeo/{i}", f"vimeo://{i}"))
    sink.flush(Page())
    assert sqs.calls == [["0", "1", "2"], ["1"]] and sink.taken() == (3, 0) and sink.taken() == (0, 0)
    refused = IntakeSink(FlakySqs([[{"Id": "0", "SenderFault": True, "Code": "InvalidMessageContents"}]]), "q")
    refused.row(AssetMessage("vimeo/1", "vimeo://1"))
    with pytest.raises(SendFailed):
        refused.flush(Page())


def test_a_full_sweep_stamps_every_id_it_lists_and_a_delta_none():
    stamped: list[list[str]] = []
    sink = IntakeSink(FlakySqs([]), "q", stamp=lambda ids: stamped.append(list(ids)) or len(ids))
    sink.row(AssetMessage("vimeo/1", "vimeo://1"))
    sink.unfetchable(Unfetchable("vimeo/2", "vimeo://2", "no file access"))
    sink.pending(Unfetchable("vimeo/3", "vimeo://3", "still transcoding"))
    sink.flush(Page())
    assert stamped == [["vimeo/1", "vimeo/2", "vimeo/3"]]


def test_mirror_where_leaves_behind_what_the_triage_left_yet_a_full_sweep_stamps_it_as_listed():
    from migrator.usage import Usage

    def row(n: int, plays: int | None) -> AssetMessage:
        usage = Usage("2026-12-06T00:00:00Z", "vimeo stats.plays", plays=plays) if plays is not None else None
        return AssetMessage(f"vimeo/{n}", f"vimeo://{n}", usage=usage)

    sqs, stamped = FlakySqs([]), []
    keep = parse("plays > 0", 0.0).matches
    sink = IntakeSink(sqs, "q", stamp=lambda ids: stamped.append(list(ids)) or len(ids), keep=keep)
    for n, plays in ((1, 5), (2, 0), (3, None), (4, 1)):
        sink.row(row(n, plays))
    sink.flush(Page())
    assert sqs.calls == [["0", "1"]] and sink.taken() == (2, 2)  # 2 and 3 (never played, not counted) stay behind
    assert stamped == [["vimeo/1", "vimeo/2", "vimeo/3", "vimeo/4"]]  # listed at the source: none of them gone


@pytest.mark.parametrize(
    ("text", "kept"),
    [("", ""), ("  ", ""), ("plays > 0 or published > 90d", "plays > 0 or published > 90d")],
)
def test_mirror_where_is_checked_at_start_up(text, kept):
    from migrator.mirror.handler import mirror_where

    assert mirror_where(text) == kept


def test_a_mirror_where_it_cannot_read_fails_at_start_up_with_the_reason():
    from migrator.mirror.handler import mirror_where
    from migrator.settings import SettingsError

    with pytest.raises(SettingsError, match="MIRROR_WHERE: plays compares with a whole number"):
        mirror_where("plays < ten")


def test_the_checkpoint_item_reads_back_as_the_decisions_and_the_status_see_it():
    item = {
        "asset_id": "#mirror#vimeo",
        "platform": "vimeo",
        "lease_until": 5,
        "sweep": '{"platform": "vimeo", "cursor": "200", "rows": 200}',
        "record": '{"mark": 1700000000.0}',
        "sweeps": 3,
        "sent": 1200,
        "gone": 2,
        "last_outcome": "throttled",
    }
    view = view_of(item)
    assert (view.sweeping, view.scanning, view.sweeps, view.record) == (True, False, 3, {"mark": 1700000000.0})
    assert sweep_of(item, "vimeo").cursor == "200" and sweep_of(item, "mux") is None
    assert sweep_of({**item, "sweep": "{not json"}, "vimeo") is None  # a broken state starts over
    status = status_of(item)
    assert (status["sent"], status["gone"], status["last_outcome"], status["sweeping"]) == (1200, 2, "throttled", True)


def test_a_stack_without_a_mirror_says_how_to_deploy_one(tmp_path, capsys, no_api_calls):
    from migrator_cli.main import main

    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"LedgerTableName": "ledger", "MirrorSource": ""}))
    assert main(["mirror", "status", "--outputs", str(outputs)]) != 0
    assert "MirrorSource=<platform>" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("status", "words"),
    [
        ({"platform": "vimeo"}, "mirror      vimeo: not run yet (migrator mirror run)"),
        (
            {"platform": "mux", "last_outcome": "throttled", "sent": 1200, "gone": 3},
            "mirror      mux: throttled, 1,200 sent, 3 gone at the source (migrator mirror status)",
        ),
    ],
)
def test_status_has_a_line_for_the_mirror(status, words):
    from migrator_cli.commands.mirror import mirror_words

    assert mirror_words(status) == words


@pytest.fixture
def no_api_calls(monkeypatch):
    """Any AWS API call fails the test."""

    def refuse(self, operation, params):
        raise AssertionError(f"an AWS call was made: {operation}")

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", refuse)
