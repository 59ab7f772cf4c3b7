"""Cloudflare Stream's usage reader (migrator.sources.analytics.cloudflare) against the "cloudflare" profile's
GraphQL Analytics API: the settings node read first for the widest range, then minutes viewed by uid and day, paged
by a filter past the last row; the last day each video was delivered is its last play."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from migrator.sources.analytics import READERS
from migrator.sources.analytics.cloudflare import COUNTED_BY
from migrator.sources.base import SourceDenied

from infra.sim.platforms.analytics import SETTINGS
from infra.sim.platforms.cloudflare import library_uid
from tests.sim.usage_support import read_all, seed

ACCOUNT, TOKEN = "a" * 32, "cf-token"


@pytest.fixture
def reader(launch):
    def start(account=ACCOUNT, **config):
        sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT, **{"library_size": 120, **config})
        creds = {"account_id": account, "api_token": TOKEN}
        return sim, READERS["cloudflare"](lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def uid(index: int) -> str:
    return library_uid(type("V", (), {"index": index})())  # type: ignore[arg-type]


def test_the_last_day_delivered_is_read_for_every_video_delivered_in_the_range(reader, monkeypatch):
    monkeypatch.setitem(SETTINGS, "maxPageSize", 50)  # 96 videos played, each on 1 to 3 days: 4 pages of rows
    _, usage_reader = reader()
    usage, pages, requests = read_all(usage_reader)
    today = datetime.now(UTC).date()
    played = {uid(i): seed(i, today).days[-1] for i in range(120) if seed(i).plays}
    rows = sum(len(seed(i, today).days) for i in range(120))
    assert rows == 192 and pages == 4 and requests == 5  # the settings node, then the pages (a uid's days split)
    assert {u: x.last_played_at for u, x in usage.items()} == {u: f"{d}T00:00:00Z" for u, d in played.items()}
    first_day = today - timedelta(days=SETTINGS["maxDuration"] // 86400 - 1)
    assert all(x.since == f"{first_day}T00:00:00Z" and x.plays is None and x.views is None for x in usage.values())
    assert all(x.counted_by == COUNTED_BY for x in usage.values())


def test_another_account_s_tag_is_a_graphql_error_said_as_denied(reader):
    _, usage_reader = reader(account="b" * 32)
    with pytest.raises(SourceDenied, match="not authorized"):
        usage_reader.page(None, [])
