"""The "apivideo" profile's analytics breakdown driven by api.video's official Python client (api.video 1.4.x,
`AnalyticsApi.get_metrics_breakdown("play-total", "media-id", current_page=, page_size=)`: `GET
/data/buckets/play-total/media-id`): the client deserialises the answer into its AnalyticsMetricsBreakdownResponse
(data, pagination with its required links); a page size past 100 is the API's 400."""

from __future__ import annotations

import pytest
from apivideo import AuthenticatedApiClient
from apivideo.api.analytics_api import AnalyticsApi
from apivideo.exceptions import ApiException

from infra.sim.platforms.apivideo_library import library_id
from tests.sim.usage_support import played_by_id

API_KEY = "apivideo-sdk-key"


@pytest.fixture
def analytics(launch):
    clients = []

    def start(**config):
        sim = launch("apivideo", api_key=API_KEY, **{"library_size": 30, **config})
        client = AuthenticatedApiClient(API_KEY)
        client.configuration.host = sim.url  # the client knows only production and sandbox
        client.__enter__()
        clients.append(client)
        return AnalyticsApi(client)

    yield start
    for client in clients:
        client.__exit__(None, None, None)


def test_the_client_reads_total_plays_by_media_id_page_by_page(analytics):
    api = analytics()
    first = api.get_metrics_breakdown("play-total", "media-id", current_page=1, page_size=20)
    second = api.get_metrics_breakdown("play-total", "media-id", current_page=2, page_size=20)
    assert first.pagination.pages_total == 2 and first.pagination.items_total == 24
    got = {b.dimension_value: b.metric_value for b in first.data + second.data}
    expected = played_by_id(library_id, 30)
    assert got == expected


def test_a_page_size_past_100_is_refused_with_a_400(analytics):
    api = analytics()
    with pytest.raises(ApiException) as caught:  # "Allowed values 1-100": the client sends it, the API refuses it
        api.get_metrics_breakdown("play-total", "media-id", page_size=101)
    assert caught.value.status == 400
