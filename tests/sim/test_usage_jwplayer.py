"""JW Player's usage reader (migrator.sources.analytics.jwplayer) against the "jwplayer" profile's Analytics API:
plays by media_id, paged 100 rows at a time until a short page, from JW Player's earliest data."""

from __future__ import annotations

import pytest
from migrator.sources.analytics import READERS
from migrator.sources.analytics.jwplayer import SINCE
from migrator.sources.base import SourceDenied

from infra.sim.platforms.jwplayer_library import library_id
from tests.sim.usage_support import read_all, seed

SITE, SECRET = "Site1234", "v2-api-secret"


@pytest.fixture
def reader(launch):
    def start(secret=SECRET, **config):
        sim = launch("jwplayer", token=SECRET, account_id=SITE, **{"library_size": 260, **config})
        creds = {"site_id": SITE, "api_secret": secret}
        return sim, READERS["jwplayer"](lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def test_every_played_media_s_plays_are_read_through_the_pages(reader):
    sim, usage_reader = reader()
    usage, pages, requests = read_all(usage_reader)
    played = {library_id(i): seed(i).plays for i in range(260) if seed(i).plays}
    assert len(played) == 208 and pages == 3 and requests == 3  # 100, 100, then 8: a short page ends it
    assert {m: u.plays for m, u in usage.items()} == played  # never played: not in the answer at all
    assert all(u.since == SINCE and u.last_played_at is None for u in usage.values())
    assert len(sim.requests_log(ops=["src_usage"])) == 3


def test_a_resumed_pass_keeps_the_range_it_started_with(reader):
    _, usage_reader = reader()
    first = usage_reader.page(None, [])
    assert first.cursor is not None and first.cursor.startswith("1@")
    second = usage_reader.page(first.cursor, [])
    assert second.cursor == f"2@{first.cursor.split('@')[1]}" and not set(first.usage) & set(second.usage)


def test_a_wrong_secret_is_denied_without_echoing_it(reader):
    _, usage_reader = reader(secret="not-the-secret")
    with pytest.raises(SourceDenied) as caught:
        usage_reader.page(None, [])
    assert "not-the-secret" not in caught.value.reason
