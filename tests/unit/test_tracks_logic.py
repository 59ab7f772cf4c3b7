"""Caption tracks' pure rules, as tables: a pass's outcome -> the track's next state; arming an asset's tracks
for a provider; which entries a claim may take; when an asset's tracks are due again; the labels Mux gets; what a
pass makes of its track as the provider lists it (a draft is published, never uploaded again)."""

from __future__ import annotations

import random

import pytest
from migrator.messages import Track, track_key
from migrator.tracks import (
    MAX_TRACK_WAITS,
    SUBMITTED_LOOK_S,
    TrackMove,
    TrackOutcome,
    TrackResult,
    TrackState,
    claimable,
    counts,
    decide,
    failures,
    initial_states,
    listed_outcome,
    next_due,
    settled,
    track_labels,
    tracks_message,
    tracks_message_id,
    tracks_unarmed,
)

NOW = 1_000_000.0
R = TrackResult


def move(kind, attempts=1, waits=0, max_attempts=5, **outcome) -> TrackMove:
    return decide(TrackOutcome(kind, **outcome), attempts, waits, NOW, random.Random(7), max_attempts)


@pytest.mark.parametrize(
    ("kind", "attempts", "state", "retries", "give_back"),
    [
        (R.ATTACHED, 1, TrackState.ATTACHED, False, False),
        (R.SUBMITTED, 1, TrackState.PENDING, True, False),  # Mux fetches it: look again soon
        (R.WAITING, 1, TrackState.PENDING, True, True),  # nothing spent
        (R.THROTTLED, 3, TrackState.PENDING, True, True),  # the provider's pace is not the track's fault
        (R.TRANSIENT, 1, TrackState.FAILED, True, False),  # backed off
        (R.TRANSIENT, 4, TrackState.FAILED, True, False),
        (R.TRANSIENT, 5, TrackState.FAILED, False, False),  # the budget is spent: for good
        (R.REFUSED, 1, TrackState.FAILED, False, False),  # never better: at once, for good
        (R.VIDEO_GONE, 1, TrackState.FAILED, False, False),
    ],
)
def test_a_pass_outcome_decides_the_tracks_next_state(kind, attempts, state, retries, give_back):
    got = move(kind, attempts, error="why")
    assert got.state is state and (got.retry_at is not None) is retries and got.give_back is give_back
    if retries:
        assert got.retry_at > NOW


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        ("ready", None, TrackOutcome(TrackResult.ATTACHED, remote_track_id="t1")),
        ("errored", "provider: bad file", TrackOutcome(TrackResult.REFUSED, error="provider: bad file")),
        ("errored", None, TrackOutcome(TrackResult.REFUSED, error="provider: could not ingest the track")),
        ("preparing", None, TrackOutcome(TrackResult.WAITING, error="the provider is still ingesting the track")),
        # JW Player's draft: the file is there, held from viewers: published by the pass, never waited on for a day.
        ("draft", None, None),
    ],
)
def test_a_listed_track_is_attached_refused_waited_for_or_published(status, error, expected):
    assert listed_outcome(status, "t1", error) == expected


def test_a_failure_keeps_its_reason_and_says_when_it_was_given_up():
    assert (
        move(R.REFUSED, error="not a caption file: the file is empty").error == "not a caption file: the file is empty"
    )
    final = move(R.TRANSIENT, 5, error="the track's server answered HTTP 503")
    assert final.error == "the track's server answered HTTP 503 (after 5 attempts)"


def test_transient_failures_back_off_exponentially_and_throttles_honour_retry_after():
    first, third = move(R.TRANSIENT, 1).retry_at - NOW, move(R.TRANSIENT, 3).retry_at - NOW
    assert 1 <= first <= 2 and 4 <= third <= 8
    assert 30 <= move(R.THROTTLED, retry_after=30.0).retry_at - NOW <= 36


def test_waiting_grows_and_at_last_fails_with_the_reason():
    early, later = move(R.WAITING, waits=0).retry_at - NOW, move(R.WAITING, waits=6).retry_at - NOW
    assert early < later <= 1800
    last = move(R.WAITING, waits=MAX_TRACK_WAITS - 1, error="the provider is still ingesting the track")
    assert last.state is TrackState.FAILED and last.retry_at is None and "60 times in a row" in last.error


def test_a_submitted_track_is_marked_so_the_next_pass_looks_before_it_sends_again():
    assert move(R.SUBMITTED).submitted and not move(R.ATTACHED).submitted
    # Looked at sooner than a track the provider was not ready for: a caption file is fetched in seconds.
    assert move(R.SUBMITTED).retry_at == NOW + SUBMITTED_LOOK_S < move(R.WAITING).retry_at


# --- arming ------------------------------------------------------------------------------------------

EN_SRT = Track("https://c.example.com/en.srt", "en", "captions", format="srt")
EN_SUBS = Track("https://c.example.com/en-sdh.vtt", "en", "subtitles", name="English SDH")
FR = Track("s3://bucket/fr.vtt", "fr")


def test_every_track_starts_pending_and_the_creates_own_are_marked():
    states = initial_states(
        (EN_SRT, FR), takes_tracks=True, provider="mux", at_create={track_key(EN_SRT)}, one_per_language=False, now=NOW
    )
    assert states[track_key(EN_SRT)] == {"state": "pending", "attempts": 0, "updated_at": NOW, "via": "create"}
    assert states[track_key(FR)]["via"] == "upload"


def test_a_provider_with_one_file_per_language_fails_the_second_with_the_reason():
    states = initial_states(
        (EN_SRT, EN_SUBS, FR), takes_tracks=True, provider="cloudflare", at_create=set(), one_per_language=True, now=NOW
    )
    assert [states[track_key(t)]["state"] for t in (EN_SRT, EN_SUBS, FR)] == ["pending", "failed", "pending"]
    assert (
        states[track_key(EN_SUBS)]["error"]
        == "cloudflare keeps one caption file per language, and en is track en.captions.'s"
    )
    assert "retry_after" not in states[track_key(EN_SUBS)]  # failed for good


def test_a_provider_without_a_track_api_fails_every_track_with_the_reason():
    states = initial_states(
        (EN_SRT,), takes_tracks=False, provider="generic", at_create=set(), one_per_language=False, now=NOW
    )
    assert (
        states[track_key(EN_SRT)]["state"] == "failed" and "takes no text tracks" in states[track_key(EN_SRT)]["error"]
    )


# --- the ledger's entries ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "eligible"),
    [
        (None, False),
        ({"state": "pending"}, True),
        ({"state": "pending", "retry_after": NOW - 1}, True),
        ({"state": "pending", "retry_after": NOW + 1}, False),
        ({"state": "pending", "lease_until": NOW + 60}, False),  # another pass holds it
        ({"state": "pending", "lease_until": NOW - 1}, True),  # a pass that died
        ({"state": "failed", "retry_after": NOW - 1}, True),
        ({"state": "failed", "retry_after": NOW + 1}, False),
        ({"state": "failed"}, False),  # failed for good: the operator's retry
        ({"state": "attached"}, False),
        ({"state": "attached", "lease_until": NOW - 1}, False),
    ],
)
def test_which_entries_a_claim_may_take(entry, eligible):
    assert claimable(entry, NOW) is eligible


def test_an_asset_is_due_again_at_its_earliest_unsettled_track_and_never_once_all_are_settled():
    states = {
        "a": {"state": "attached"},
        "b": {"state": "failed", "error": "x"},
        "c": {"state": "failed", "retry_after": NOW + 30},
        "d": {"state": "pending", "retry_after": NOW + 10},
        "e": {"state": "pending", "lease_until": NOW + 90},
    }
    assert [k for k, e in states.items() if settled(e)] == ["a", "b"]
    assert next_due(states, NOW) == NOW + 10
    assert next_due({"a": states["a"], "b": states["b"]}, NOW) is None
    assert next_due({"p": {"state": "pending"}}, NOW) == NOW


def test_counts_and_failures_read_what_the_report_shows():
    states = {"b": {"state": "failed", "error": "too large"}, "a": {"state": "attached"}, "c": {"state": "pending"}}
    assert counts(states) == {"attached": 1, "failed": 1, "pending": 1}
    assert failures(states) == [("b", "too large")]
    assert counts(None) == {} and counts({"x": "garbage"}) == {}


def test_labels_are_unique_among_an_assets_tracks():
    tracks = (
        Track("u", "en", "captions"),
        Track("u", "en", "subtitles"),
        Track("u", "fr", "captions", name="Français"),
        Track("u", "EN", "captions", name="x"),
    )
    labels = track_labels(tracks)
    assert list(labels.values()) == ["en", "en (subtitles)", "Français", "x"]


def test_the_tracks_message_names_only_the_asset():
    assert tracks_message("lib/日本.mp4") == '{"id":"lib/日本.mp4"}'
    assert tracks_message_id(tracks_message("lib/a")) == "lib/a"
    for body in ("", "[]", '{"id": 3}', '{"id": "#pacer"}', '{"id": "a", "x": 1}', "not json"):
        assert tracks_message_id(body) is None, body


TRACKS = [{"url": "https://c.example.com/en.vtt", "language": "en"}]


@pytest.mark.parametrize(
    ("item", "owed"),
    [
        ({"state": "ready", "remote_id": "v1", "tracks": TRACKS}, True),  # settled before the uploader's write
        ({"state": "processing", "remote_id": "v1", "tracks": TRACKS}, True),
        ({"state": "ready", "remote_id": "v1", "tracks": TRACKS, "tracks_video": "v0"}, True),  # an older video's
        ({"state": "ready", "remote_id": "v1", "tracks": TRACKS, "tracks_video": "v1"}, False),  # the worker has it
        ({"state": "ready", "remote_id": "v1"}, False),  # no tracks
        ({"state": "ready", "remote_id": "v1", "tracks": []}, False),
        ({"state": "failed", "tracks": TRACKS}, False),  # no video at the provider
        ({"state": "rejected", "remote_id": "v1", "tracks": TRACKS}, False),
        ({"state": "uploading", "tracks": TRACKS}, False),
        (None, False),
    ],
)
def test_a_video_at_the_provider_with_tracks_not_armed_on_it_is_owed_its_tracks_message(item, owed):
    assert tracks_unarmed(item) is owed
