"""Mux's usage reader (migrator.sources.analytics.mux) against the "mux" profile's Mux Data breakdown: views by
asset_id over WINDOW_DAYS, paged by `page` until `total_row_count`, `since` the answer's timeframe start."""

from __future__ import annotations

import pytest
from migrator.sources.analytics import READERS
from migrator.sources.analytics.mux import COUNTED_BY, WINDOW_DAYS
from migrator.sources.base import SourceDenied
from migrator.usage import epoch_of

from infra.sim.platforms.mux import library_id
from tests.sim.usage_support import read_all, seed

ID, SECRET = "mux-id", "mux-secret"


@pytest.fixture
def reader(launch):
    def start(secret=SECRET, **config):
        sim = launch("mux", token_id=ID, token_secret=SECRET, **{"library_size": 230, **config})
        creds = {"token_id": ID, "token_secret": secret}
        return sim, READERS["mux"](lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def asset(index: int) -> str:
    return library_id(type("V", (), {"index": index})())  # type: ignore[arg-type]


def test_every_played_asset_s_views_are_read_with_the_period_counted(reader):
    _, usage_reader = reader()
    usage, pages, requests = read_all(usage_reader)
    played = {asset(i): seed(i).plays for i in range(230) if seed(i).plays}
    assert pages == 2 and requests == 2 and len(played) == 184
    assert {a: u.plays for a, u in usage.items()} == played
    since = {u.since for u in usage.values()}
    assert len(since) == 1 and all(u.counted_by == COUNTED_BY for u in usage.values())
    [start] = since
    read_at = epoch_of(next(iter(usage.values())).read_at)
    assert epoch_of(start) % 86400 == 0 and WINDOW_DAYS - 1 <= (read_at - epoch_of(start)) / 86400 <= WINDOW_DAYS


def test_credentials_without_mux_data_are_denied_saying_so(reader):
    _, usage_reader = reader(secret="not-the-secret")
    with pytest.raises(SourceDenied, match="Mux Data permission") as caught:
        usage_reader.page(None, [])
    assert "not-the-secret" not in caught.value.reason
