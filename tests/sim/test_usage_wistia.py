"""Wistia's usage reader (migrator.sources.analytics.wistia) against the "wistia" profile's Stats API: a media at a
time, the pass's ids read from the cursor, the counts exactly as seeded (infra/sim/platforms/analytics.py)."""

from __future__ import annotations

import pytest
from migrator.sources.analytics import READERS
from migrator.sources.analytics.wistia import BATCH, COUNTED_BY
from migrator.sources.base import SourceDenied

from infra.sim.platforms.wistia import hashed_id
from tests.sim.usage_support import read_all, seed

TOKEN = "wistia-token"


@pytest.fixture
def reader(launch):
    def start(token=TOKEN, **config):
        sim = launch("wistia", token=TOKEN, **{"library_size": 40, **config})
        return sim, READERS["wistia"](lambda: {"token": token}, sim.url + "/modern", patient=True, rate_per_s=0)

    return start


def hid(index: int) -> str:
    return hashed_id(type("V", (), {"index": index})())  # type: ignore[arg-type]


def test_each_media_s_plays_and_loads_are_read_from_its_stats_a_batch_a_page(reader):
    _, usage_reader = reader()
    ids = [hid(i) for i in range(40)] + ["wzzzzzzzzz"]  # the last: no such media (404), left out
    usage, pages, requests = read_all(usage_reader, ids)
    assert pages == 2 and requests == 41  # 25 then 16: one request a media
    assert set(usage) == {hid(i) for i in range(40)}
    for i in range(40):
        got = usage[hid(i)]
        assert (got.plays, got.views) == (seed(i).plays, seed(i).loads)
        assert got.counted_by == COUNTED_BY and got.since is None and got.last_played_at is None
    assert usage[hid(1)].plays == 0 and usage[hid(1)].never_played  # one in five never played
    assert usage[hid(0)].plays == 3 and usage[hid(4)].plays == 151


def test_the_cursor_is_the_position_in_the_pass_s_ids(reader):
    _, usage_reader = reader()
    ids = [hid(i) for i in range(40)]
    first = usage_reader.page(None, ids)
    assert first.cursor == str(BATCH) and len(first.usage) == BATCH
    resumed = usage_reader.page(first.cursor, ids)
    assert resumed.cursor is None and set(resumed.usage) == set(ids[BATCH:])


def test_a_token_the_stats_api_refuses_says_which_permission_it_needs(reader):
    _, usage_reader = reader(token="wrong")
    with pytest.raises(SourceDenied, match="Read detailed stats") as caught:
        usage_reader.page(None, [hid(0)])
    assert "wrong" not in caught.value.reason
