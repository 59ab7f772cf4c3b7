"""The "mux" profile's Mux Data breakdown driven by Mux's official Python SDK (mux-python,
`MetricsApi.list_breakdown_values("views", group_by="asset_id", timeframe=[start, end], limit=, page=)`): the SDK
deserialises the answer into ListBreakdownValuesResponse / BreakdownValue, and the usage reader's parser reads the
same answer to the same numbers."""

from __future__ import annotations

import time

import mux_python
import pytest
from migrator.sources.analytics.mux import usage_of_breakdown
from mux_python.exceptions import UnauthorizedException

from infra.sim.platforms.mux import library_id
from tests.sim.usage_support import played_by_id

TOKEN_ID, TOKEN_SECRET = "mux-sdk-id", "mux-sdk-secret"


def _metrics(url: str, secret: str = TOKEN_SECRET) -> mux_python.MetricsApi:
    configuration = mux_python.Configuration(host=url)
    configuration.username, configuration.password = TOKEN_ID, secret
    return mux_python.MetricsApi(mux_python.ApiClient(configuration))


def test_the_sdk_reads_views_by_asset_page_by_page(launch):
    sim = launch("mux", token_id=TOKEN_ID, token_secret=TOKEN_SECRET, library_size=30)
    end = int(time.time())
    frame = [str(end - 100 * 86400), str(end)]
    api = _metrics(sim.url)
    first = api.list_breakdown_values("views", group_by="asset_id", timeframe=frame, limit=20, page=1)
    second = api.list_breakdown_values("views", group_by="asset_id", timeframe=frame, limit=20, page=2)
    assert first.total_row_count == 24 and len(first.data) == 20 and len(second.data) == 4
    expected = played_by_id(library_id, 30)
    assert {row.field: row.views for row in first.data + second.data} == expected
    assert first.timeframe == [(end - 100 * 86400) // 86400 * 86400, end]
    raw = api.api_client.sanitize_for_serialization(first)
    usage, held, total = usage_of_breakdown(raw, "2026-12-06T12:00:00Z", 0)
    assert held == 20 and total == 24 and all(expected[a] == u.plays for a, u in usage.items())


def test_a_token_without_data_access_is_the_sdk_s_unauthorized(launch):
    sim = launch("mux", token_id=TOKEN_ID, token_secret=TOKEN_SECRET, library_size=3)
    with pytest.raises(UnauthorizedException):
        _metrics(sim.url, "wrong").list_breakdown_values("views", group_by="asset_id")
