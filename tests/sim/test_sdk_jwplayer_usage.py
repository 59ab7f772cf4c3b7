"""The "jwplayer" profile's Analytics API driven by JW Player's official Python SDK (jwplatform 2.2.2,
`client.analytics.query(site_id, body)`: `POST /v2/sites/{site_id}/analytics/queries/`): the query body the usage
reader sends (migrator.sources.analytics.jwplayer.query_body) is one the SDK carries, and the answer is read back
through it; a page longer than the documented 100 rows is the SDK's BadRequestError."""

from __future__ import annotations

import pytest
from jwplatform.errors import BadRequestError, UnauthorizedError
from migrator.sources.analytics.jwplayer import query_body, usage_of_rows

from infra.sim.platforms.jwplayer_library import library_id
from tests.sim.test_sdk_jwplayer import SECRET, SITE, sdk
from tests.sim.usage_support import seed


@pytest.fixture
def sim(launch):
    return launch("jwplayer", token=SECRET, account_id=SITE, library_size=30)


def test_the_sdk_sends_the_reader_s_query_and_reads_plays_by_media(sim):
    answer = sdk(sim).analytics.query(SITE, query_body(0, "2026-12-06"))
    assert answer.status == 200
    usage, rows = usage_of_rows(answer.json_body, "2026-12-06T12:00:00Z")
    played = {library_id(i): seed(i).plays for i in range(30) if seed(i).plays}
    assert rows == len(played) == 24 and {m: u.plays for m, u in usage.items()} == played
    first, second = answer.json_body["data"]["rows"][:2]
    assert first[1] >= second[1]  # "sort": plays, DESCENDING
    assert answer.json_body["metadata"]["column_headers"]["metrics"] == [{"field": "plays", "type": "integer"}]


def test_a_page_past_100_rows_and_a_wrong_secret_are_the_sdk_s_errors(sim):
    with pytest.raises(BadRequestError):
        sdk(sim).analytics.query(SITE, {**query_body(0, "2026-12-06"), "page_length": 101})
    with pytest.raises(UnauthorizedError):
        sdk(sim, "wrong").analytics.query(SITE, query_body(0, "2026-12-06"))
