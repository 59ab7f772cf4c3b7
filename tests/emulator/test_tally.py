"""The tally against the emulator: deltas land in the stats table, a retried batch counts once, and
the pacer learns from it how many creates are in flight."""

from __future__ import annotations

import pytest
from migrator.dynamo import typed
from migrator.pacer import Go, Hold, Pacer
from migrator.tally import apply, read_stats

from tests.emulator.conftest import create_ledger_table, create_table_like

pytestmark = pytest.mark.emulator

T = 1_800_000_000.0


def record(asset_id, old_state, new_state, seq, throttles=(0, 0), at=T):
    body = {"Keys": typed({"asset_id": asset_id}), "SequenceNumber": seq}
    if old_state:
        body["OldImage"] = typed({"asset_id": asset_id, "state": old_state, "updated_at": T, "throttles": throttles[0]})
    body["NewImage"] = typed({"asset_id": asset_id, "state": new_state, "updated_at": at, "throttles": throttles[1]})
    return {"eventName": "MODIFY" if old_state else "INSERT", "eventSourceARN": "arn:s", "dynamodb": body}


def test_a_retried_batch_is_counted_once_and_the_next_batch_adds(aws):
    dynamodb = aws("dynamodb")
    stats_table = create_table_like(dynamodb, "StatsTable")
    first = [record("a", None, "uploading", "1"), record("b", None, "uploading", "2")]
    second = [record("a", "uploading", "pending", "3", throttles=(0, 1)), record("b", "uploading", "processing", "4")]

    apply(dynamodb, stats_table, first, T)
    apply(dynamodb, stats_table, first, T)  # the stream delivered it again (the Lambda timed out after writing)
    apply(dynamodb, stats_table, second, T)

    stats = read_stats(dynamodb, stats_table, T + 30, window_minutes=5)
    assert stats.counts["uploading"] == 0 and stats.counts["pending"] == 1 and stats.counts["processing"] == 1
    assert stats.total() == 2
    minute = stats.minutes[int(T // 60)]
    assert minute["throttled"] == 1 and minute["created"] == 1
    assert stats.first == {int(T // 60): T}  # the first batch's time, kept by the later one

    later = [record("b", "processing", "ready", "5", at=T + 20)]
    apply(dynamodb, stats_table, later, T + 20)
    assert read_stats(dynamodb, stats_table, T + 30, window_minutes=5).first == {int(T // 60): T}


def test_the_pacer_counts_creates_in_flight_from_the_tally_and_waits_at_the_bound(aws):
    dynamodb = aws("dynamodb")
    stats_table, ledger = create_table_like(dynamodb, "StatsTable"), create_ledger_table(dynamodb)
    pacer = Pacer(ledger, dynamodb, 50.0, max_in_flight=3)
    now = T
    for offset in (0.0, 0.1, 0.2):  # three creates
        assert isinstance(pacer.reserve(now + offset), Go)
    made = [record(f"a{i}", "uploading", "processing", f"{10 + i}", at=now + 0.05 + 0.1 * i) for i in range(3)]
    apply(dynamodb, stats_table, made, now + 2, ledger)  # the stream carries their moves to processing
    item = pacer.state()
    assert int(item["processing"]) == 3 and int(item["tallied_seq"]) == 3
    at_bound = pacer.reserve(now + 2.1)
    assert isinstance(at_bound, Hold) and at_bound.kind == "in_flight"
    assert float(pacer.state()["bound_until"]) > now + 2.1  # what `migrator status` shows
    done = [record("a0", "processing", "ready", "20", at=now + 2.5)]
    apply(dynamodb, stats_table, done, now + 3, ledger)  # one finished: room for one more
    assert isinstance(pacer.reserve(now + 3.1), Go)
    assert isinstance(pacer.reserve(now + 3.2), Hold)
