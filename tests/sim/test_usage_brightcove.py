"""Brightcove's usage reader (migrator.sources.analytics.brightcove) against the "brightcove" profile's Analytics
API (`/v1/data`, dimensions=video, from=alltime): video_view and video_impression per video, paged by offset, on the
source's own OAuth token."""

from __future__ import annotations

import pytest
from migrator.sources.analytics import READERS
from migrator.sources.analytics.brightcove import COUNTED_BY, LIMIT
from migrator.sources.base import SourceDenied
from migrator.sources.brightcove_token import LocalTokens

from infra.sim.platforms.brightcove import ID_BASE
from tests.sim.usage_support import read_all, seed

ACCOUNT, CLIENT, SECRET = "6300000000001", "bc-client", "bc-secret"
CREDS = {"account_id": ACCOUNT, "client_id": CLIENT, "client_secret": SECRET}


@pytest.fixture
def reader(launch):
    def start(creds=CREDS, **config):
        config = {"library_size": 230, **config}
        sim = launch("brightcove", account_id=ACCOUNT, token_id=CLIENT, token_secret=SECRET, **config)
        return sim, READERS["brightcove"](lambda: creds, sim.url, patient=True, rate_per_s=0, tokens=LocalTokens())

    return start


def test_every_video_with_activity_is_read_with_its_views_and_impressions(reader):
    sim, usage_reader = reader()
    usage, pages, requests = read_all(usage_reader)
    seen = {str(ID_BASE + i): seed(i) for i in range(230) if seed(i).plays or seed(i).loads}
    assert pages == 3 and requests == 4  # 100, 100, 19 items: and one token, minted once
    assert set(usage) == set(seen)
    assert {v: (u.plays, u.views) for v, u in usage.items()} == {v: (s.plays, s.loads) for v, s in seen.items()}
    assert all(u.counted_by == COUNTED_BY and u.since is None for u in usage.values())
    assert usage[str(ID_BASE + 1)].plays == 0 and usage[str(ID_BASE + 1)].views == 1  # loaded, never played
    [first, *_] = sim.requests_log(ops=["src_usage"])
    assert first["status"] == 200


def test_the_cursor_is_the_offset_of_the_next_page(reader):
    _, usage_reader = reader(library_size=150)
    first = usage_reader.page(None, [])
    assert first.cursor == str(LIMIT) and len(first.usage) == LIMIT
    assert usage_reader.page(first.cursor, []).cursor is None


def test_credentials_for_another_account_are_denied_and_say_what_the_api_needs(reader):
    _, usage_reader = reader(creds={**CREDS, "account_id": "6300000000002"})
    with pytest.raises(SourceDenied, match="Analytics Read"):
        usage_reader.page(None, [])
