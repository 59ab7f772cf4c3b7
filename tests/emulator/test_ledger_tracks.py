"""ledger/tracks.py's conditional writes against DynamoDB in the emulator: arming, the per-track claim (and that
it agrees with the pure `tracks.claimable`), fenced outcomes, the tracks lane, the operator's re-arm, reconcile's
marker. Each asset's tracks live in its own item and never touch its state or lease."""

from __future__ import annotations

import threading
import time

import pytest
from migrator.ledger import CollectionClaim, CollectionRefused, CollectionSource, Ledger, TrackClaim, TrackRefused
from migrator.messages import AssetMessage, Track, track_key
from migrator.states import State
from migrator.tracks import TrackMove, TrackState, claimable, initial_states

pytestmark = pytest.mark.emulator

NOW = time.time()
EN = Track("https://captions.example.com/en.srt", "en")
FR = Track("https://captions.example.com/fr.vtt", "fr")
KEYS = [track_key(EN), track_key(FR)]


@pytest.fixture
def ledger(aws, table):
    return Ledger(table, aws("dynamodb"))


def at_provider(ledger, asset_id: str, remote_id: str = "vid-1", ready: bool = True, tracks=(EN, FR)) -> None:
    """An asset whose video the provider has (processing, or ready), with caption tracks."""
    msg = AssetMessage(asset_id, "https://media.example.com/a.mp4", tracks=tracks)
    ledger.claim(msg, NOW - 100, NOW - 40, "tok")
    assert ledger.mark_processing(asset_id, "tok", remote_id, NOW - 90).won
    if ready:
        assert ledger.settle(asset_id, State.READY, remote_id, NOW - 80).won


def armed(ledger, asset_id: str, remote_id: str = "vid-1", entries=None) -> dict:
    entries = entries or initial_states(
        (EN, FR), takes_tracks=True, provider="p", at_create=set(), one_per_language=True, now=NOW
    )
    result = ledger.arm_tracks(asset_id, remote_id, entries, NOW)
    assert result.won
    return result.current


def lane_items(ledger, asset_id: str, before: float) -> list[str]:
    from migrator import due

    lane = due.lane(due.Family.TRACKS, asset_id)
    items, _ = ledger.query_due(lane, before, 100)
    return [i["asset_id"] for i in items]


def test_a_claim_of_a_message_with_tracks_files_the_asset_in_the_tracks_lane_from_its_lease(ledger):
    ledger.claim(AssetMessage("with", "https://m.example.com/a.mp4", tracks=(EN,)), NOW, NOW + 60, "t1")
    ledger.claim(AssetMessage("without", "https://m.example.com/b.mp4"), NOW, NOW + 60, "t2")
    assert "with" in lane_items(ledger, "with", NOW + 61) and "with" not in lane_items(ledger, "with", NOW + 59)
    assert "without" not in lane_items(ledger, "without", NOW + 10_000)


def test_tracks_are_armed_once_per_video_and_only_for_the_items_video(ledger):
    at_provider(ledger, "a1")
    assert not ledger.arm_tracks("a1", "some-other-video", {}, NOW).won
    item = armed(ledger, "a1")
    assert item["tracks_video"] == "vid-1" and set(item["track_states"]) == set(KEYS)
    assert item["state"] == "ready" and "lease_token" not in item  # the asset's own fields are untouched
    assert not ledger.arm_tracks("a1", "vid-1", {}, NOW).won  # armed already


ENTRY_ROWS = [
    {"state": "pending"},
    {"state": "pending", "retry_after": NOW - 1},
    {"state": "pending", "retry_after": NOW + 30},
    {"state": "pending", "lease_until": NOW + 60, "lease_token": "x"},
    {"state": "pending", "lease_until": NOW - 1, "lease_token": "dead"},
    {"state": "failed", "retry_after": NOW - 1},
    {"state": "failed", "retry_after": NOW + 30},
    {"state": "failed", "error": "for good"},
    {"state": "attached"},
    {"state": "noted", "kind": "thumbnail", "note": "a frame time only"},  # settled: never claimed again
]


@pytest.mark.parametrize("row", range(len(ENTRY_ROWS)))
def test_the_track_claim_and_the_pure_predicate_agree(ledger, row):
    entry = {"attempts": 0, "updated_at": NOW, **ENTRY_ROWS[row]}
    asset_id = f"agree-{row}"
    at_provider(ledger, asset_id)
    armed(ledger, asset_id, entries={KEYS[0]: entry})
    claim = ledger.claim_track(asset_id, KEYS[0], "vid-1", "tok", NOW, NOW + 60)
    assert isinstance(claim, TrackClaim) is claimable(entry, NOW), entry
    if isinstance(claim, TrackClaim):
        assert claim.entry["lease_token"] == "tok" and int(claim.entry["attempts"]) == 1
        assert claim.item["state"] == "ready"  # only the track moved


def test_no_track_is_claimed_before_the_video_is_ready_or_for_another_video(ledger):
    at_provider(ledger, "early", ready=False)
    armed(ledger, "early")
    assert isinstance(ledger.claim_track("early", KEYS[0], "vid-1", "tok", NOW, NOW + 60), TrackRefused)
    at_provider(ledger, "other")
    armed(ledger, "other")
    refused = ledger.claim_track("other", KEYS[0], "vid-2", "tok", NOW, NOW + 60)
    assert isinstance(refused, TrackRefused) and refused.item["tracks_video"] == "vid-1"


def test_twenty_concurrent_passes_on_one_track_exactly_one_claims_it(ledger):
    at_provider(ledger, "race")
    armed(ledger, "race")
    barrier, results, lock = threading.Barrier(20), [], threading.Lock()

    def contend(i):
        barrier.wait()
        got = ledger.claim_track("race", KEYS[0], "vid-1", f"tok-{i}", NOW, NOW + 60)
        with lock:
            results.append(got)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(isinstance(r, TrackClaim) for r in results) == 1
    assert int(ledger.get("race")["track_states"][KEYS[0]]["attempts"]) == 1


def test_a_pass_whose_lease_was_taken_over_loses_its_write_and_its_successor_wins(ledger):
    at_provider(ledger, "fence")
    armed(ledger, "fence")
    first = ledger.claim_track("fence", KEYS[0], "vid-1", "slow", NOW, NOW + 1)
    second = ledger.claim_track("fence", KEYS[0], "vid-1", "fresh", NOW + 2, NOW + 60)
    assert isinstance(first, TrackClaim) and isinstance(second, TrackClaim)
    assert int(second.entry["attempts"]) == 2  # the dead pass's attempt counts
    late = ledger.finish_track("fence", KEYS[0], "vid-1", "slow", TrackMove(TrackState.FAILED, error="late"), NOW + 3)
    assert not late.won
    done = ledger.finish_track(
        "fence", KEYS[0], "vid-1", "fresh", TrackMove(TrackState.ATTACHED, remote_track_id="en"), NOW + 3
    )
    entry = done.current["track_states"][KEYS[0]]
    assert done.won and entry["state"] == "attached" and entry["remote_track_id"] == "en" and "lease_token" not in entry


def test_a_pass_on_a_replaced_video_loses(ledger):
    at_provider(ledger, "replaced")
    armed(ledger, "replaced")
    claim = ledger.claim_track("replaced", KEYS[0], "vid-1", "tok", NOW, NOW + 60)
    # Meanwhile the asset got another video (an operator's retry of a rejected asset re-arms for it).
    ledger.client.update_item(
        TableName=ledger.table,
        Key={"asset_id": {"S": "replaced"}},
        UpdateExpression="SET tracks_video = :v",
        ExpressionAttributeValues={":v": {"S": "vid-2"}},
    )
    assert not ledger.finish_track("replaced", KEYS[0], "vid-1", claim.token, TrackMove(TrackState.ATTACHED), NOW).won


def test_given_back_attempts_and_waits_are_counted_apart(ledger):
    at_provider(ledger, "wait")
    armed(ledger, "wait")
    claim = ledger.claim_track("wait", KEYS[0], "vid-1", "tok", NOW, NOW + 60)
    waited = TrackMove(TrackState.PENDING, retry_at=NOW + 20, give_back=True, waited=True)
    entry = ledger.finish_track("wait", KEYS[0], "vid-1", claim.token, waited, NOW).current["track_states"][KEYS[0]]
    assert (
        int(entry["attempts"]) == 0
        and int(entry["waits"]) == 1
        and float(entry["retry_after"]) == pytest.approx(NOW + 20)
    )


def test_the_tracks_lane_is_left_only_once_every_track_is_settled(ledger):
    at_provider(ledger, "lane")
    armed(ledger, "lane")
    assert not ledger.close_tracks("lane", "vid-1", KEYS, None).won  # both pending
    for key, move in zip(
        KEYS, (TrackMove(TrackState.ATTACHED), TrackMove(TrackState.FAILED, error="x", retry_at=NOW + 5)), strict=True
    ):
        claim = ledger.claim_track("lane", key, "vid-1", "tok", NOW, NOW + 60)
        ledger.finish_track("lane", key, "vid-1", claim.token, move, NOW)
    assert not ledger.close_tracks("lane", "vid-1", KEYS, None).won  # one failed with a retry time
    assert ledger.close_tracks("lane", "vid-1", KEYS, NOW + 5).won
    assert float(ledger.get("lane")["tracks_due_at"]) == pytest.approx(NOW + 5)
    claim = ledger.claim_track("lane", KEYS[1], "vid-1", "tok2", NOW + 6, NOW + 60)
    ledger.finish_track("lane", KEYS[1], "vid-1", claim.token, TrackMove(TrackState.FAILED, error="for good"), NOW + 6)
    assert ledger.close_tracks("lane", "vid-1", KEYS, None).won
    assert "tracks_lane" not in ledger.get("lane") and "lane" not in lane_items(ledger, "lane", NOW + 10**6)


def test_retry_tracks_rearms_failed_tracks_only_and_refuses_what_moved_since(ledger):
    at_provider(ledger, "rearm")
    entries = {
        KEYS[0]: {"state": "attached", "attempts": 1, "updated_at": NOW},
        KEYS[1]: {"state": "failed", "error": "HTTP 404", "attempts": 5, "updated_at": NOW},
    }
    seen = armed(ledger, "rearm", entries=entries)
    ledger.close_tracks("rearm", "vid-1", KEYS, None)
    done = ledger.rearm_failed_tracks(seen, NOW + 1)
    states = done.current["track_states"]
    assert done.won and states[KEYS[0]]["state"] == "attached"
    assert states[KEYS[1]]["state"] == "pending" and int(states[KEYS[1]]["attempts"]) == 0
    assert states[KEYS[1]]["last_error"] == "HTTP 404" and "error" not in states[KEYS[1]]
    assert "rearm" in lane_items(ledger, "rearm", NOW + 2)
    assert not ledger.rearm_failed_tracks(seen, NOW + 2).won  # as read, it has moved on


def test_of_two_reconcile_runs_only_one_resends_the_tracks(ledger):
    at_provider(ledger, "heal")
    armed(ledger, "heal")
    seen = {"asset_id": "heal", "tracks_due_at": ledger.get("heal")["tracks_due_at"]}
    assert ledger.mark_tracks_healed(seen, NOW + 10).won
    assert not ledger.mark_tracks_healed(seen, NOW + 11).won


def test_a_rejected_videos_open_tracks_fail_with_the_reason_unless_a_live_pass_holds_one(ledger):
    at_provider(ledger, "gone")
    armed(ledger, "gone")
    ledger.claim_track("gone", KEYS[0], "vid-1", "tok", NOW, NOW + 60)
    assert not ledger.fail_tracks("gone", "vid-1", KEYS, "the video was rejected", NOW).won
    assert ledger.fail_tracks("gone", "vid-1", KEYS, "the video was rejected", NOW + 61).won
    states = ledger.get("gone")["track_states"]
    assert {e["state"] for e in states.values()} == {"failed"} and states[KEYS[1]]["error"] == "the video was rejected"


# --- extras: the noted state, and each collection's own item (ledger/collections.py) ---------------------------


def test_a_noted_outcome_keeps_its_note_and_closes_the_lane_and_retry_tracks_leaves_it(ledger):
    at_provider(ledger, "noted")
    keys = [KEYS[0], "thumbnail"]
    entries = {
        KEYS[0]: {"state": "failed", "error": "HTTP 404", "attempts": 5, "updated_at": NOW},  # armed by 0.3.0: no kind
        "thumbnail": {"state": "pending", "kind": "thumbnail", "attempts": 0, "updated_at": NOW},
    }
    armed(ledger, "noted", entries=entries)
    claim = ledger.claim_track("noted", "thumbnail", "vid-1", "tok", NOW, NOW + 60)
    move = TrackMove(TrackState.NOTED, note="mux takes a poster time only: set to 5 s")
    item = ledger.finish_track("noted", "thumbnail", "vid-1", claim.token, move, NOW).current
    entry = item["track_states"]["thumbnail"]
    assert (entry["state"], entry["note"], entry["kind"]) == ("noted", move.note, "thumbnail")
    assert "lease_token" not in entry and "retry_after" not in entry
    assert ledger.close_tracks("noted", "vid-1", keys, None).won  # failed for good and noted: all settled
    assert "noted" not in lane_items(ledger, "noted", NOW + 10**6)
    done = ledger.rearm_failed_tracks(ledger.get("noted"), NOW + 1)
    assert done.won and done.current["track_states"]["thumbnail"]["state"] == "noted"  # only the failed one moves
    assert done.current["track_states"][KEYS[0]]["state"] == "pending"


SOURCE = CollectionSource("vimeo", "folders/7", "Talks", "folder")


def test_twenty_passes_race_for_a_new_collection_and_exactly_one_claims_it(ledger):
    won, barrier = [], threading.Barrier(20)

    def race(n: int) -> None:
        barrier.wait()
        claim = ledger.claim_collection("race", SOURCE, f"tok-{n}", NOW, NOW + 60)
        if isinstance(claim, CollectionClaim):
            won.append(claim)

    threads = [threading.Thread(target=race, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    item = ledger.collection("race")
    assert item["asset_id"] == "#collection#race" and item["state"] == "pending" and int(item["attempts"]) == 1
    assert (item["name"], item["source_id"], item["collection_kind"]) == ("Talks", "folders/7", "folder")


def test_a_collection_is_recorded_only_by_its_claims_holder_and_is_never_claimed_once_created(ledger):
    claim = ledger.claim_collection("made", SOURCE, "tok", NOW, NOW + 60)
    assert isinstance(claim, CollectionClaim)
    assert not ledger.record_collection("made", "someone-else", "col-x", NOW).won
    done = ledger.record_collection("made", "tok", "col-1", NOW)
    assert done.won and done.current["state"] == "created" and done.current["remote_collection_id"] == "col-1"
    assert "lease_token" not in done.current
    refused = ledger.claim_collection("made", SOURCE, "tok2", NOW + 100, NOW + 160)
    assert isinstance(refused, CollectionRefused) and refused.item["remote_collection_id"] == "col-1"


def test_a_crashed_holders_claim_is_taken_over_after_its_lease_and_its_late_write_loses(ledger):
    assert isinstance(ledger.claim_collection("crash", SOURCE, "dead", NOW, NOW + 60), CollectionClaim)
    assert isinstance(ledger.claim_collection("crash", SOURCE, "early", NOW + 30, NOW + 90), CollectionRefused)
    later = ledger.claim_collection("crash", SOURCE, "next", NOW + 61, NOW + 120)
    assert isinstance(later, CollectionClaim) and int(later.item["attempts"]) == 2
    assert not ledger.record_collection("crash", "dead", "col-dead", NOW + 62).won
    assert ledger.record_collection("crash", "next", "col-1", NOW + 62).won


def test_a_released_try_waits_for_its_retry_time_and_a_failure_for_good_is_never_claimed(ledger):
    ledger.claim_collection("retry", SOURCE, "tok", NOW, NOW + 60)
    move = TrackMove(TrackState.FAILED, error="provider: HTTP 503", retry_at=NOW + 30)
    assert ledger.release_collection("retry", "tok", move, NOW).won
    assert isinstance(ledger.claim_collection("retry", SOURCE, "t2", NOW + 10, NOW + 70), CollectionRefused)
    again = ledger.claim_collection("retry", SOURCE, "t3", NOW + 31, NOW + 91)
    assert isinstance(again, CollectionClaim) and again.item["error"] == "provider: HTTP 503"
    ledger.release_collection("retry", "t3", TrackMove(TrackState.FAILED, error="provider: HTTP 400"), NOW + 32)
    assert isinstance(ledger.claim_collection("retry", SOURCE, "t4", NOW + 10**6, NOW + 10**6), CollectionRefused)


def test_members_positions_are_kept_once_each_and_ordering_is_taken_one_placement_at_a_time(ledger):
    ledger.claim_collection("ordered", SOURCE, "tok", NOW, NOW + 60)
    assert not ledger.add_member("ordered", "v1", 3, NOW).won  # not created yet: no order to keep
    ledger.record_collection("ordered", "tok", "col-1", NOW)
    assert ledger.add_member("ordered", "v1", 3, NOW).won
    assert ledger.add_member("ordered", "v2", 0, NOW).won
    assert ledger.add_member("ordered", "v1", 3, NOW).won  # a retried pass: counted once
    item = ledger.collection("ordered")
    assert item["members"] == {"v1": 3, "v2": 0} and int(item["member_count"]) == 2
    held = ledger.claim_order("ordered", "o1", NOW, NOW + 60)
    assert held is not None and held["members"] == {"v1": 3, "v2": 0}
    assert ledger.claim_order("ordered", "o2", NOW + 1, NOW + 61) is None  # one orders at a time
    assert ledger.release_order("ordered", "o1").won
    assert ledger.claim_order("ordered", "o2", NOW + 2, NOW + 62) is not None
