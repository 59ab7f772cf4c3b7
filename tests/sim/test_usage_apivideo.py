"""api.video's usage reader (migrator.sources.analytics.apivideo) against the "apivideo" profile's Analytics API:
play-total by media-id, paged 100 at a time until the answer's pagesTotal."""

from __future__ import annotations

import pytest
from migrator.sources.analytics import READERS
from migrator.sources.analytics.apivideo import COUNTED_BY
from migrator.sources.base import SourceDenied

from infra.sim.platforms.apivideo_library import library_id
from tests.sim.usage_support import read_all, seed

API_KEY = "apivideo-key"


@pytest.fixture
def reader(launch):
    def start(key=API_KEY, **config):
        sim = launch("apivideo", api_key=API_KEY, **{"library_size": 230, **config})
        return sim, READERS["apivideo"](lambda: {"api_key": key}, sim.url, patient=True, rate_per_s=0)

    return start


def vid(index: int) -> str:
    return library_id(type("V", (), {"index": index})())  # type: ignore[arg-type]


def test_every_played_video_s_total_plays_are_read_through_the_pages(reader):
    _, usage_reader = reader()
    usage, pages, requests = read_all(usage_reader)
    played = {vid(i): seed(i).plays for i in range(230) if seed(i).plays}
    assert pages == 2 and requests == 2 and len(played) == 184
    assert {v: u.plays for v, u in usage.items()} == played
    assert all(u.counted_by == COUNTED_BY and u.since is None and u.views is None for u in usage.values())


def test_a_wrong_key_is_denied_without_echoing_it(reader):
    _, usage_reader = reader(key="not-the-key")
    with pytest.raises(SourceDenied) as caught:
        usage_reader.page(None, [])
    assert "not-the-key" not in caught.value.reason
