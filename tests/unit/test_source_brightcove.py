"""Brightcove's privacy as pure decisions: `state`, `schedule` and geo-filtering ("Adding Geo-Filtering":
`geo.restricted`, `geo.countries`, `geo.exclude_countries`) read into the row's privacy, never wider than where
Brightcove plays the video, with a note that names the countries and the kind of list; and the OAuth API's
answers as the adapter reads them (its reference answers 201 Created)."""

from __future__ import annotations

import pytest
from migrator.providers.http import Answer
from migrator.sources import build
from migrator.sources.base import SourceDenied, SourceError
from migrator.sources.brightcove import Geo, privacy_of
from migrator.sources.brightcove_token import LocalTokens

NOW = 1_700_000_000.0
CREDS = {"account_id": "6300000000001", "client_id": "bc-client", "client_secret": "bc-secret"}
OPEN = {"starts_at": "2020-01-01T00:00:00.000Z", "ends_at": "2099-01-01T00:00:00.000Z"}
LATER = {"starts_at": "2099-01-01T00:00:00.000Z", "ends_at": None}


def geo(countries, exclude=False, restricted=True):
    return {"restricted": restricted, "exclude_countries": exclude, "countries": countries}


@pytest.mark.parametrize(
    ("video", "privacy", "in_note"),
    [
        ({"state": "ACTIVE"}, "public", None),
        ({"state": "ACTIVE", "geo": None}, "public", None),  # the reference's examples: null when unset
        ({"state": "ACTIVE", "geo": geo(["us"], restricted=False)}, "public", None),  # filtering off
        ({"state": "ACTIVE", "geo": {"countries": ["us"]}}, "public", None),  # restricted defaults to false
        ({"state": "ACTIVE", "geo": geo(["ph", "in"])}, "signed", "plays only in ph, in (an include list)"),
        ({"state": "ACTIVE", "geo": geo(["us"], exclude=True)}, "signed", "plays everywhere except us (an exclude"),
        ({"state": "ACTIVE", "geo": geo([])}, "private", "plays only in no country (an include list)"),
        ({"state": "ACTIVE", "geo": geo([], exclude=True)}, "signed", "everywhere except no country"),
        ({"state": "ACTIVE", "geo": geo(["US", " gb ", "us"])}, "signed", "plays only in us, gb (an include"),
        ({"state": "ACTIVE", "geo": geo(["ph", "xx-1", 7])}, "signed", "not read as country codes: 2"),
        ({"state": "ACTIVE", "geo": geo(["x1", None])}, "private", "plays only in no country"),
        ({"state": "ACTIVE", "geo": geo(["us"], exclude="yes")}, "signed", "plays only in us (an include list)"),
        ({"state": "ACTIVE", "geo": geo(["us"], restricted="true")}, "signed", "plays only in us"),
        ({"state": "ACTIVE", "geo": geo(["fr"]), "schedule": OPEN}, "signed", "within its schedule"),
        ({"state": "ACTIVE", "geo": geo(["fr"]), "schedule": LATER}, "private", "plays only in fr"),
        ({"state": "INACTIVE", "geo": geo(["fr"], exclude=True)}, "private", "everywhere except fr"),
        ({"state": "ACTIVE", "geo": geo([]), "schedule": OPEN}, "private", "no country"),
        ({"state": "ACTIVE", "geo": "us"}, "public", None),  # not an object: no filtering to read
    ],
)
def test_privacy_is_the_narrowest_of_state_schedule_and_geo(video, privacy, in_note):
    found, note = privacy_of(video, NOW)
    assert found == privacy
    assert note is None if in_note is None else in_note in note


@pytest.mark.parametrize(
    ("field", "metadata"),
    [
        (None, None),
        (geo(["ph", "in"]), {"restricted": True, "exclude_countries": False, "countries": ["ph", "in"]}),
        (geo(["US", "usa1", "gbr"], True), {"restricted": True, "exclude_countries": True, "countries": ["us"]}),
        (geo(["abcd"]), {"restricted": True, "exclude_countries": False, "countries": ["abcd"]}),  # 4-letter codes
    ],
)
def test_the_row_carries_the_geo_rules_the_operator_sets_on_the_target(field, metadata):
    found = Geo.of({"geo": field})
    assert (found.metadata() if found else None) == metadata


@pytest.mark.parametrize(
    ("status", "body", "outcome"),
    [
        (200, {"access_token": "bc-token", "token_type": "Bearer", "expires_in": 300}, "bc-token"),
        (201, {"access_token": "bc-token", "token_type": "Bearer", "expires_in": 300}, "bc-token"),  # the reference
        (201, {"token_type": "Bearer"}, SourceError),  # no token in it
        (202, {"access_token": "bc-token"}, SourceError),
        (400, {"error": "invalid_client"}, SourceDenied),  # access_token.js: invalid_client 400
        (401, {"error": "invalid_client"}, SourceDenied),
        (500, None, SourceError),
    ],
)
def test_the_oauth_answer_is_taken_at_200_or_201_created(status, body, outcome):
    src = build("brightcove", lambda: CREDS, "https://cms.api.brightcove.com", tokens=LocalTokens())
    src._oauth.send = lambda *args, **kwargs: Answer(status, body, "")
    if isinstance(outcome, str):
        assert src.auth_headers({}) == {"Authorization": f"Bearer {outcome}"}
    else:
        with pytest.raises(outcome) as raised:
            src.auth_headers({})
        assert type(raised.value) is outcome and "bc-secret" not in str(raised.value)
