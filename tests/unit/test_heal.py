"""Reconcile's pure decisions: which assets have no live work, which are due a poll, run limits."""

import pytest
from migrator.heal import PollVerdict, RunLimits, RunRequestError, heal_reason, limits_for, poll_due, poll_verdict
from migrator.providers.generic import read_video

NOW = 1_000_000.0
QUIET = 600.0


def item(state, **fields):
    return {"asset_id": "a", "state": state, "updated_at": NOW - 3600, **fields}


@pytest.mark.parametrize(
    "case, expected",
    [
        # uploading: only an expired lease, quiet for the heal period
        (item("uploading", lease_until=NOW - 3000, claimed_at=NOW - 3600), True),
        (item("uploading", lease_until=NOW + 10, claimed_at=NOW - 3600), False),  # live lease
        (item("uploading", lease_until=NOW - 5, updated_at=NOW - 100), False),  # not quiet long enough
        # pending/inventoried/failed: a message was expected, its retry time is long past
        (item("pending", claimed_at=NOW - 3600, retry_after=NOW - 3000), True),
        (item("inventoried", enqueued_at=NOW - 3600), True),
        (item("failed", claimed_at=NOW - 3600, retry_after=NOW - 1000), True),
        (item("failed", claimed_at=NOW - 3600, retry_after=NOW - 100), False),  # its message may still come
        (item("failed", claimed_at=NOW - 3600), False),  # failed for good: the operator decides
        (item("pending"), False),  # staged, never enqueued
        (item("inventoried"), False),  # probed, never enqueued
        # never healed
        (item("processing", claimed_at=NOW - 9999), False),
        (item("ready", claimed_at=NOW - 9999), False),
        (item("rejected", claimed_at=NOW - 9999), False),
        ({"asset_id": "a", "state": "nonsense", "updated_at": 0}, False),
        ({"asset_id": "a", "state": "pending", "claimed_at": 1}, False),  # no updated_at: cannot reason
    ],
)
def test_heal_reason(case, expected):
    assert (heal_reason(case, NOW, QUIET) is not None) is expected


def test_the_heal_reason_says_why():
    reason = heal_reason(item("uploading", lease_until=NOW - 3000), NOW, QUIET)
    assert "lease expired 3000 s ago" in reason


def test_poll_due_only_for_long_processing():
    assert poll_due(item("processing"), NOW, 1800) is True
    assert poll_due(item("processing", updated_at=NOW - 60), NOW, 1800) is False
    assert poll_due(item("uploading"), NOW, 1800) is False


def test_scheduled_events_use_the_defaults():
    defaults = RunLimits(heal_after_s=99)
    scheduled = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}
    assert limits_for(scheduled, defaults) == (defaults, False)


def test_on_demand_overrides_are_validated():
    limits, restart = limits_for({"heal_after_s": 0, "max_items": 80, "restart": True}, RunLimits())
    assert (limits.heal_after_s, limits.max_items, restart) == (0.0, 80, True)
    assert isinstance(limits.max_items, int)
    with pytest.raises(RunRequestError, match="unknown reconcile option"):
        limits_for({"heal_after": 0}, RunLimits())
    with pytest.raises(RunRequestError, match="must be a number"):
        limits_for({"heal_after_s": "0"}, RunLimits())
    with pytest.raises(RunRequestError, match="between"):
        limits_for({"max_items": 0}, RunLimits())
    with pytest.raises(RunRequestError, match="restart"):
        limits_for({"restart": "yes"}, RunLimits())


def test_the_sample_on_demand_event_is_accepted():
    import json
    from pathlib import Path

    event = json.loads((Path(__file__).parents[2] / "events" / "reconcile-on-demand.json").read_text())
    limits, restart = limits_for(event, RunLimits())
    assert (limits.heal_after_s, limits.poll_after_s, limits.max_items, restart) == (3600, 1800, 2000, False)


def test_the_stacks_limits_are_read_in_the_on_demand_ranges():
    from migrator.reconcile import load_limits
    from migrator.settings import SettingsError

    assert load_limits({}) == RunLimits()
    limits = load_limits({"HEAL_AFTER_SECONDS": "7200", "RECONCILE_MAX_ITEMS": "80", "DRIFT_TOLERANCE_SECONDS": "1"})
    assert (limits.heal_after_s, limits.max_items, limits.drift_tolerance_s) == (7200.0, 80, 1.0)
    assert isinstance(limits.max_items, int)
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
