"""Reconcile's pure decisions: which assets have no live work, which are due a poll, run limits."""

import pytest
from migrator import due
from migrator.heal import (
    PollVerdict,
    RunLimits,
    RunRequestError,
    heal_reason,
    limits_for,
    poll_due,
    poll_verdict,
    stuck_for,
)
from migrator.providers.generic import read_video

NOW = 1_000_000.0
QUIET = 600.0
QUEUED = 86_400.0


def item(state, lane="heal#3", due_at=NOW - 3600, **fields):
    return {"asset_id": "a", "state": state, "updated_at": NOW - 3600, "due_lane": lane, "due_at": due_at, **fields}


@pytest.mark.parametrize(
    "case, expected",
    [
        # heal lane, uploading: only an expired lease, silent for the heal period
        (item("uploading", due_at=NOW - 3000, lease_until=NOW - 3000), True),
        (item("uploading", due_at=NOW + 10, lease_until=NOW + 10), False),  # live lease
        (item("uploading", due_at=NOW - 5, lease_until=NOW - 5), False),  # not silent long enough
        (item("uploading", due_at=NOW - 3000, lease_until=NOW + 10), False),  # stale lane entry, live lease
        # heal lane, deferred: its message was due back at its retry time, long past
        (item("pending", due_at=NOW - 3000, retry_after=NOW - 3000), True),
        (item("failed", due_at=NOW - 1000, retry_after=NOW - 1000), True),
        (item("failed", due_at=NOW - 100, retry_after=NOW - 100), False),  # its message may still come
        (item("failed", due_at=NOW - 3000), False),  # failed for good (a stale entry): the operator decides
        # queued lane: a message sent and never claimed, until the queue may have dropped it
        (item("inventoried", lane="queued#0", due_at=NOW - QUEUED - 1, enqueued_at=NOW - QUEUED - 1), True),
        (item("pending", lane="queued#0", due_at=NOW - 3600, enqueued_at=NOW - 3600), False),  # still queued
        # no lane, or a lane that is not heal's: never healed here
        (item("pending", lane=None), False),  # staged, never enqueued
        (item("processing", lane="poll#1"), False),
        (item("ready", lane=None), False),
        (item("rejected", lane=None), False),
        ({"asset_id": "a", "state": "nonsense", "updated_at": 0, "due_lane": "heal#1", "due_at": 0}, False),
        ({"asset_id": "a", "state": "pending", "due_lane": "heal#1", "due_at": 1}, False),  # no updated_at
    ],
)
def test_heal_reason(case, expected):
    assert (heal_reason(case, NOW, QUIET, QUEUED) is not None) is expected


def test_the_heal_reason_says_why():
    reason = heal_reason(item("uploading", due_at=NOW - 3000, lease_until=NOW - 3000), NOW, QUIET)
    assert "lease expired 3000 s ago" in reason
    queued = item("pending", lane="queued#2", due_at=NOW - QUEUED - 5)
    assert "may have expired" in heal_reason(queued, NOW, QUIET, QUEUED)


def test_poll_due_only_for_long_silent_processing():
    assert poll_due(item("processing", lane="poll#1"), NOW, 1800) is True
    assert poll_due(item("processing", lane="poll#1", due_at=NOW - 60), NOW, 1800) is False
    assert poll_due(item("uploading"), NOW, 1800) is False


def test_a_queued_asset_is_resent_just_inside_the_queues_retention():
    assert due.queued_after_s(1_209_600) == 1_209_600 - 86_400  # a day before SQS's 14 days run out
    assert due.queued_after_s(60) == 54  # a test queue of a minute: a tenth of it


def test_still_working_polls_back_off_and_never_pass_the_processing_deadline():
    poll_after = 1800.0
    first = due.next_poll_at(NOW, 1, poll_after, NOW - 10, 86_400) + poll_after
    third = due.next_poll_at(NOW, 3, poll_after, NOW - 10, 86_400) + poll_after
    assert (first - NOW, third - NOW) == (1800, 7200)
    capped = due.next_poll_at(NOW, 12, poll_after, NOW - 10, 86_400) + poll_after
    assert capped - NOW == due.MAX_POLL_INTERVAL_S
    late = due.next_poll_at(NOW, 12, poll_after, NOW - 86_000, 86_400) + poll_after
    assert late == NOW - 86_000 + 86_400  # asked once more at the deadline


def test_stuck_for_is_the_time_past_the_longest_processing_allowed():
    assert stuck_for({"processing_at": NOW - 100}, NOW, 60) == 100
    assert stuck_for({"processing_at": NOW - 30}, NOW, 60) is None
    assert stuck_for({"processing_at": NOW - 10**6}, NOW, 0) is None  # 0: no limit
    assert stuck_for({}, NOW, 60) is None


def test_scheduled_events_use_the_defaults():
    defaults = RunLimits(heal_after_s=99)
    scheduled = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}
    assert limits_for(scheduled, defaults) == defaults


def test_on_demand_overrides_are_validated():
    limits = limits_for({"heal_after_s": 0, "max_items": 80, "queued_after_s": 5}, RunLimits())
    assert (limits.heal_after_s, limits.max_items, limits.queued_after_s) == (0.0, 80, 5.0)
    assert isinstance(limits.max_items, int)
    with pytest.raises(RunRequestError, match="unknown reconcile option"):
        limits_for({"heal_after": 0}, RunLimits())
    with pytest.raises(RunRequestError, match="must be a number"):
        limits_for({"heal_after_s": "0"}, RunLimits())
    with pytest.raises(RunRequestError, match="between"):
        limits_for({"max_items": 0}, RunLimits())
    with pytest.raises(RunRequestError, match="unknown reconcile option"):
        limits_for({"restart": True}, RunLimits())  # runs start from what is due: no checkpoint to drop


def test_the_sample_on_demand_event_is_accepted():
    import json
    from pathlib import Path

    event = json.loads((Path(__file__).parents[2] / "events" / "reconcile-on-demand.json").read_text())
    limits = limits_for(event, RunLimits())
    assert (limits.heal_after_s, limits.poll_after_s, limits.max_items) == (3600, 1800, 2000)


def test_the_stacks_limits_are_read_in_the_on_demand_ranges():
    from migrator.reconcile import load_limits
    from migrator.settings import SettingsError

    assert load_limits({}) == RunLimits()
    limits = load_limits({"HEAL_AFTER_SECONDS": "7200", "RECONCILE_MAX_ITEMS": "80", "DRIFT_TOLERANCE_SECONDS": "1"})
    assert (limits.heal_after_s, limits.max_items, limits.drift_tolerance_s) == (7200.0, 80, 1.0)
    assert isinstance(limits.max_items, int)
    short = load_limits({"QUEUE_RETENTION_SECONDS": "60", "MAX_PROCESSING_SECONDS": "0"})
    assert (short.queued_after_s, short.max_processing_s) == (54.0, 0.0)
    with pytest.raises(SettingsError, match="RECONCILE_MAX_ITEMS must be between 1 and 1e"):
        load_limits({"RECONCILE_MAX_ITEMS": "0"})


def test_reconcile_checks_the_provider_url_as_the_uploader_does():
    from migrator.reconcile import build
    from migrator.settings import SettingsError

    env = {"LEDGER_TABLE": "t", "QUEUE_URL": "https://q", "PROVIDER_BASE_URL": "https://user:pw@api.example"}
    with pytest.raises(SettingsError, match="must not carry credentials"):
        build(env)
    reconciler = build({**env, "PROVIDER_BASE_URL": "https://api.example", "PROVIDER_READ_TIMEOUT": "4"})
    assert reconciler.provider.http.base == "https://api.example" and reconciler.provider.http.timeout == (3.05, 4.0)
    mux = build({**env, "PROVIDER": "mux", "PROVIDER_BASE_URL": ""})  # a real provider has its own address
    assert mux.provider.name == "mux" and mux.provider.http.base == "https://api.mux.com"
    with pytest.raises(SettingsError, match="PROVIDER must be one of"):
        build({**env, "PROVIDER": "muxx"})  # a typo is refused, not ignored


@pytest.mark.parametrize(
    ("http_status", "video", "verdict"),
    [
        (200, {"id": "v", "status": "ready", "duration": 3}, PollVerdict.SETTLE),
        (200, {"id": "v", "status": "errored"}, PollVerdict.SETTLE),
        (200, {"id": "v", "status": "preparing"}, PollVerdict.WORKING),
        (200, {"id": "v", "status": "transmogrifying"}, PollVerdict.MISS),  # a status we cannot read
        (200, {"id": "v"}, PollVerdict.MISS),
        (200, None, PollVerdict.MISS),  # a lookup that found nothing
        (404, None, PollVerdict.MISS),
        (500, None, PollVerdict.LATER),
        (401, None, PollVerdict.LATER),  # our token: says nothing about the video
    ],
)
def test_what_a_poll_answer_means(http_status, video, verdict):
    status = read_video(video) if video is not None else None
    assert poll_verdict(http_status, status) is verdict
