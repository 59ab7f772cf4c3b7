"""The webhook's pure parts: what a verified event asks of the ledger."""

import pytest
from migrator.states import State
from migrator.webhook import event_id_of, interpret, parse_secrets


def event(kind, **data):
    return {"id": "evt_1", "type": kind, "data": {"id": "vid_1", "metadata": {"migration_ref": "a/1"}, **data}}


def test_ready_carries_the_provider_duration():
    action = interpret(event("video.ready", duration=61.5))
    assert (action.asset_id, action.target, action.remote_id, action.provider_duration_s) == (
        "a/1",
        State.READY,
        "vid_1",
        61.5,
    )


def test_errored_carries_the_reason():
    action = interpret(
        event("video.errored", error={"type": "invalid_input", "message": "source could not be ingested"})
    )
    assert action.target is State.REJECTED
    assert action.error == "provider: source could not be ingested"


@pytest.mark.parametrize(
    "doc",
    [
        event("video.created"),
        event("video.asset.updated"),
        {"type": "video.ready"},
        {"type": "video.ready", "data": {"metadata": {"migration_ref": ""}}},
        {"type": "video.ready", "data": {"metadata": {"migration_ref": "#pacer"}}},
        [1, 2],
        "text",
    ],
)
def test_events_that_are_not_outcomes_do_nothing(doc):
    assert interpret(doc).target is None


@pytest.mark.parametrize("duration", ["61", -1, True, float("inf"), None])
def test_bad_durations_are_dropped_not_trusted(duration):
    action = interpret(event("video.ready", duration=duration))
    assert action.target is State.READY and action.provider_duration_s is None


def test_event_ids():
    assert event_id_of("msg_1", {"id": "evt_9"}, b"{}") == "msg_1"
    assert event_id_of(None, {"id": "evt_9"}, b"{}") == "evt_9"
    assert event_id_of(None, {}, b"{}").startswith("sha256:")
    assert event_id_of(None, {}, b"{}") == event_id_of(None, [], b"{}")


def test_secrets_for_rotation():
    assert parse_secrets('{"current": "new", "previous": "old"}') == ["new", "old"]
    assert parse_secrets('{"current": "new"}') == ["new"]
    assert parse_secrets("plain-secret\n") == ["plain-secret"]
    assert parse_secrets("") == []
