"""The tally's pure part: stream records reduced to count and per-minute deltas."""

import pytest
from migrator import pacing
from migrator.dynamo import to_item, typed
from migrator.tally import STREAM_MARGIN_S, batch_token, deltas_of, pacer_update, transaction

T = 1_800_000_000.0  # an epoch second; minute = T // 60


def record(name, asset_id, old=None, new=None, seq="1"):
    body = {"Keys": typed({"asset_id": asset_id}), "SequenceNumber": seq}
    if old is not None:
        body["OldImage"] = typed(old)
    if new is not None:
        body["NewImage"] = typed(new)
    return {"eventName": name, "eventSourceARN": "arn:stream", "dynamodb": body}


def test_a_life_cycle_nets_to_one_ready_asset():
    records = [
        record("INSERT", "a", new={"state": "uploading", "updated_at": T}),
        record(
            "MODIFY",
            "a",
            {"state": "uploading", "updated_at": T},
            {"state": "pending", "throttles": 1, "updated_at": T},
        ),
        record(
            "MODIFY", "a", {"state": "pending", "throttles": 1}, {"state": "uploading", "throttles": 1, "updated_at": T}
        ),
        record("MODIFY", "a", {"state": "uploading"}, {"state": "processing", "updated_at": T + 1}),
        record("MODIFY", "a", {"state": "processing"}, {"state": "ready", "updated_at": T + 61}),
    ]
    deltas = deltas_of(records, T)
    assert dict(deltas.counts) == {"ready": 1}
    minute = int(T // 60)
    assert deltas.minutes[minute]["throttled"] == 1
    assert deltas.minutes[minute]["created"] == 1
    assert deltas.minutes[minute + 1]["ready"] == 1
    assert deltas.first == {minute: T, minute + 1: T + 61}  # each minute's earliest event


def test_control_items_and_unchanged_states_are_ignored():
    records = [
        record("MODIFY", "#pacer", {"next_slot": 1}, {"next_slot": 2}),
        record("MODIFY", "a", {"state": "processing", "updated_at": T}, {"state": "processing", "polls": 1}),
        record("REMOVE", "b", old={"state": "rejected", "updated_at": T}),
    ]
    deltas = deltas_of(records, T)
    assert dict(deltas.counts) == {"rejected": -1}
    assert deltas.minutes == {}


def test_the_token_is_stable_per_batch_and_differs_between_batches():
    a = [record("INSERT", "a", new={"state": "uploading"}, seq="10")]
    b = [record("INSERT", "a", new={"state": "uploading"}, seq="11")]
    assert batch_token(a) == batch_token(list(a))
    assert batch_token(a) != batch_token(b)
    assert len(batch_token(a)) <= 36


def test_the_transaction_adds_to_one_counts_shard_and_each_minute():
    records = [
        record("INSERT", "a", new={"state": "uploading", "updated_at": T}),
        record("MODIFY", "b", {"state": "processing"}, {"state": "ready", "updated_at": T + 120}),
    ]
    entries = transaction("stats", deltas_of(records, T), batch_token(records))
    keys = [e["Update"]["Key"]["key"]["S"] for e in entries]
    assert keys[0].startswith("counts#") and keys[1:] == [f"minute#{int((T + 120) // 60)}"]
    counts = entries[0]["Update"]
    assert sorted(counts["ExpressionAttributeNames"].values()) == ["processing", "ready", "uploading"]
    minute = entries[1]["Update"]
    assert "first_at = if_not_exists(first_at, :first)" in minute["UpdateExpression"]  # a later batch keeps it
    assert minute["ExpressionAttributeValues"][":first"] == {"N": f"{T + 120:.3f}"}


def test_the_sample_stream_event_is_one_asset_becoming_ready():
    import json
    from pathlib import Path

    event = json.loads((Path(__file__).parents[2] / "events" / "ledger-stream.json").read_text())
    deltas = deltas_of(event["Records"], T)
    assert dict(deltas.counts) == {"processing": -1, "ready": 1}


def test_the_pacer_learns_the_processing_change_and_the_slots_the_batch_covers():
    """The in-flight count (issue 20.3): processing moves by the batch's change; the slots handed
    out by the stream's newest change (from the item's ring) are the ones the batch covers."""
    records = [
        record("MODIFY", "a", {"state": "uploading"}, {"state": "processing", "updated_at": T + 1}),
        record("MODIFY", "b", {"state": "uploading"}, {"state": "processing", "updated_at": T + 2}),
        record("MODIFY", "c", {"state": "processing"}, {"state": "ready", "updated_at": T + 3}),
    ]
    deltas = deltas_of(records, T + 5)
    assert (deltas.counts["processing"], deltas.finished, deltas.newest) == (1, 1, T + 3)
    ring = {}
    for ticket, at in enumerate([T + 1, T + 2, T + 2.5, T + 3.5]):
        name, tag = pacing.ring_entry(at)
        ring[name] = tag + ticket
    request = pacer_update("ledger", deltas, T + 5, {"tallied_at": T + 1, **ring})
    values = to_item(request["ExpressionAttributeValues"])
    assert values[":delta"] == 1 and values[":at"] == T + 3
    assert values[":covered"] == 3  # tickets 0-2, before T + 3 - STREAM_MARGIN_S; the one at T + 3.5 is in flight
    assert T + 3 - STREAM_MARGIN_S > T + 2.5
    assert float(values[":finish"]) == pytest.approx(pacing.finish_rate(1, 2.0))
    assert "tallied_seq = :covered" in request["UpdateExpression"]


def test_without_a_ring_the_batch_covers_every_slot_handed_out_and_control_items_say_nothing():
    deltas = deltas_of([record("MODIFY", "a", {"state": "processing"}, {"state": "ready", "updated_at": T})], T)
    assert "tallied_seq = if_not_exists(seq, :zero)" in pacer_update("ledger", deltas, T, None)["UpdateExpression"]
    pacer_only = deltas_of([record("MODIFY", "#pacer", {"next_slot": 1}, {"next_slot": 2})], T)
    assert pacer_update("ledger", pacer_only, T) is None  # no asset: nothing to say, no write on the hot item


def test_track_states_are_counted_from_the_items_track_map_each_change_once():
    def item(**tracks):
        return {
            "state": "ready",
            "updated_at": T,
            "track_states": {k: {"state": v, "attempts": 1} for k, v in tracks.items()},
        }

    records = [
        record("MODIFY", "a", {"state": "ready", "updated_at": T}, item(en="pending", fr="pending")),  # armed
        record("MODIFY", "a", item(en="pending", fr="pending"), item(en="attached", fr="pending")),
        record("MODIFY", "a", item(en="attached", fr="pending"), item(en="attached", fr="failed")),
        # The same state with a new lease or attempt count is no change of count.
        record("MODIFY", "a", item(en="attached", fr="failed"), item(en="attached", fr="failed")),
        record("MODIFY", "b", {"state": "ready"}, item(de="pending")),
    ]
    deltas = deltas_of(records, T)
    assert dict(deltas.counts) == {"tracks_attached": 1, "tracks_failed": 1, "tracks_pending": 1}
    # A retry of the asset makes another video: its tracks start again (the old ones' counts go).
    rearmed = deltas_of([record("MODIFY", "a", item(en="attached", fr="failed"), item(en="pending", fr="pending"))], T)
    assert dict(rearmed.counts) == {"tracks_attached": -1, "tracks_failed": -1, "tracks_pending": 2}
    garbage = deltas_of([record("MODIFY", "c", {"state": "ready"}, {"state": "ready", "track_states": {"x": "y"}})], T)
    assert dict(garbage.counts) == {}


def test_extras_are_counted_per_kind_apart_from_caption_tracks_and_an_old_entry_without_a_kind_is_a_caption():
    def item(**entries):
        return {"state": "ready", "updated_at": T, "track_states": entries}

    armed = item(
        en={"state": "pending"},  # armed by 0.3.0: no kind, a caption track
        thumbnail={"state": "pending", "kind": "thumbnail"},
        chapters={"state": "pending", "kind": "chapters"},
        **{"collection:ab": {"state": "noted", "kind": "collection", "note": "kept as tags"}},
    )
    done = item(
        en={"state": "attached"},
        thumbnail={"state": "noted", "kind": "thumbnail", "note": "a time only"},
        chapters={"state": "attached", "kind": "chapters"},
        **{"collection:ab": {"state": "noted", "kind": "collection", "note": "kept as tags"}},
    )
    deltas = deltas_of([record("MODIFY", "a", {"state": "ready"}, armed), record("MODIFY", "a", armed, done)], T)
    assert dict(deltas.counts) == {
        "tracks_attached": 1,
        "thumbnail_noted": 1,
        "chapters_attached": 1,
        "collection_noted": 1,
    }


def test_status_reads_each_kind_of_extra_per_state_from_the_count_items():
    from migrator.tally import read_stats

    class Reads:
        def batch_get_item(self, RequestItems):
            counts = {
                "key": "counts#3",
                "ready": 2,
                "tracks_attached": 2,
                "thumbnail_noted": 1,
                "collection_attached": 4,
            }
            return {"Responses": {"stats": [typed(counts)]}}

    stats = read_stats(Reads(), "stats", T)
    assert stats.tracks["attached"] == 2 and stats.tracks["noted"] == 0
    assert stats.extras["thumbnail"]["noted"] == 1 and stats.extras["collection"]["attached"] == 4
    assert stats.extras["chapters"] == {"pending": 0, "attached": 0, "failed": 0, "noted": 0}


def _archived(state=None, size=None, **more):
    item = {"state": "ready", "updated_at": T, **more}
    if state is not None:
        item["archive_state"] = state
    if size is not None:
        item["archive_bytes"] = size
    return item


@pytest.mark.parametrize(
    ("old", "new", "counts"),
    [
        # The archiver's first note: a copy begins.
        (_archived(), _archived("copying"), {"archive_copying": 1}),
        # It stands: the copy moves to archived, its bytes arrive with it.
        (
            _archived("copying"),
            _archived("archived", 5_000),
            {"archive_copying": -1, "archive_archived": 1, "archive_bytes": 5_000},
        ),
        # It fails for good, then `retry --archive` re-arms it.
        (_archived("copying"), _archived("failed"), {"archive_copying": -1, "archive_failed": 1}),
        (_archived("failed"), _archived("pending"), {"archive_failed": -1, "archive_pending": 1}),
        # The asset's own moves (its state, a lease) change no archive count.
        (_archived("archived", 5_000), _archived("archived", 5_000, lease_token="x"), {}),
        # Copied again (a file that changed): the old bytes leave, the new arrive, the count stays.
        (
            _archived("archived", 5_000),
            _archived("copying"),
            {"archive_archived": -1, "archive_copying": 1, "archive_bytes": -5_000},
        ),
        # Bytes noted before the state says archived count nothing; an unknown state is no count.
        (_archived(), _archived("copying", 7), {"archive_copying": 1}),
        (_archived(), _archived("lost", 7), {}),
    ],
)
def test_the_archive_copies_are_counted_by_the_assets_archive_state_and_archived_bytes(old, new, counts):
    deltas = deltas_of([record("MODIFY", "a", old, new)], T)
    assert {k: v for k, v in deltas.counts.items() if k.startswith("archive_")} == counts


def test_an_asset_removed_takes_its_archive_count_and_bytes_with_it_and_the_archive_item_counts_nothing():
    gone = deltas_of([record("REMOVE", "a", old=_archived("archived", 9))], T)
    assert dict(gone.counts) == {"ready": -1, "archive_archived": -1, "archive_bytes": -9}
    control = record("MODIFY", "#archive#a", {"state": "copying"}, {"state": "archived", "bytes": 9})
    assert dict(deltas_of([control], T).counts) == {}


def test_status_reads_the_archive_counts_and_bytes_from_the_count_items():
    from migrator.tally import read_stats

    class Reads:
        def batch_get_item(self, RequestItems):
            shards = [
                {"key": "counts#1", "archive_archived": 2, "archive_bytes": 3_000, "archive_failed": 1},
                {"key": "counts#7", "archive_archived": 1, "archive_bytes": 500, "archive_copying": 4},
            ]
            return {"Responses": {"stats": [typed(s) for s in shards]}}

    stats = read_stats(Reads(), "stats", T)
    assert stats.archive == {"pending": 0, "copying": 4, "archived": 3, "failed": 1, "bytes": 3_500}
