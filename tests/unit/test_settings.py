"""The functions' settings: the pacing ones are validated strictly (a typo is refused, not ignored)."""

from __future__ import annotations

import pytest
from migrator.settings import SettingsError, load

BASE = {"LEDGER_TABLE": "t", "QUEUE_URL": "q", "PROVIDER": "cloudflare"}


def test_pacing_settings_default_to_the_providers_facts():
    settings = load(BASE)
    assert (settings.max_concurrency, settings.create_share, settings.provider_max_in_flight) == (5, 0.5, None)
    assert settings.max_in_flight_for(120) == 120  # empty: the provider's documented bound
    assert settings.max_in_flight_for(None) is None


@pytest.mark.parametrize(("raw", "bound"), [("0", None), ("50", 50), (" 300 ", 300)])
def test_provider_max_in_flight_zero_is_none_and_n_is_n(raw, bound):
    assert load({**BASE, "PROVIDER_MAX_IN_FLIGHT": raw}).max_in_flight_for(120) == bound


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("CREATE_SHARE", "0"),  # creates need some of the budget
        ("CREATE_SHARE", "1.5"),
        ("CREATE_SHARE", "half"),
        ("PROVIDER_MAX_IN_FLIGHT", "-1"),
        ("PROVIDER_MAX_IN_FLIGHT", "12.5"),
        ("MAXIMUM_CONCURRENCY", "0"),
        ("MAXIMUM_CONCURRENCY", "five"),
    ],
)
def test_a_malformed_pacing_setting_is_refused_by_name(name, raw):
    with pytest.raises(SettingsError, match=name):
        load({**BASE, name: raw})


def test_the_record_budget_keeps_its_slot_wait_apart():
    settings = load({**BASE, "MAXIMUM_CONCURRENCY": "200", "CREATE_SHARE": "0.25"})
    assert settings.max_concurrency == 200 and settings.create_share == 0.25
    assert settings.record_budget_s == settings.work_s + 5.0


ARCHIVE = {"ARCHIVE_BUCKET": "masters-bucket", "ARCHIVE_PREFIX": "masters", "ARCHIVE_QUEUE_URL": "aq"}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, (False, "", "")),  # a stack without an archive
        (ARCHIVE, (False, "masters-bucket", "masters")),  # archived alongside the create
        ({**ARCHIVE, "ARCHIVE_FIRST": "false"}, (False, "masters-bucket", "masters")),
        ({**ARCHIVE, "ARCHIVE_FIRST": "true"}, (True, "masters-bucket", "masters")),
        ({**ARCHIVE, "ARCHIVE_PREFIX": "/a/b/", "ARCHIVE_FIRST": "true"}, (True, "masters-bucket", "a/b")),
    ],
)
def test_archive_first_and_the_archive_the_uploader_presigns_from(env, expected):
    settings = load({**BASE, **env})
    assert (settings.archive_first, settings.archive_bucket, settings.archive_prefix) == expected


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"ARCHIVE_FIRST": "yes"}, "ARCHIVE_FIRST must be one of false, true"),
        ({"ARCHIVE_FIRST": "true"}, "ARCHIVE_BUCKET, ARCHIVE_PREFIX, ARCHIVE_QUEUE_URL is not set"),
        ({**ARCHIVE, "ARCHIVE_BUCKET": "", "ARCHIVE_FIRST": "true"}, "ARCHIVE_BUCKET is not set"),
        ({**ARCHIVE, "ARCHIVE_PREFIX": "/", "ARCHIVE_FIRST": "true"}, "ARCHIVE_PREFIX is not set"),
        ({**ARCHIVE, "ARCHIVE_QUEUE_URL": " ", "ARCHIVE_FIRST": "true"}, "ARCHIVE_QUEUE_URL is not set"),
    ],
)
def test_archive_first_without_an_archive_is_refused_by_name(env, named):
    """Archiving first with no archive to copy to would hold every asset for a copy nobody makes."""
    with pytest.raises(SettingsError, match=named):
        load({**BASE, **env})
