"""Kaltura's pure parts (migrator.sources.kaltura_api, kaltura_privacy, kaltura_walk, kaltura): the credentials, API
exceptions and what of them may be said, an entry's privacy from its categories and its scheduling window, the
flavor chosen, and the walk's cursor and filter checks (categoryEntry's links among an entry's categories)."""

from __future__ import annotations

import pytest
from migrator.providers.facts import CredentialsError
from migrator.sources import SourceDenied
from migrator.sources.kaltura import PAGE_SIZE, FilterIgnored, Walk, source_flavor, why_not
from migrator.sources.kaltura_api import Credentials, api_error, refusal
from migrator.sources.kaltura_privacy import privacy_of, schedule_metadata

APP = {"partner_id": "123", "app_token_id": "0_tok", "app_token": "t0ken"}


def test_credentials_take_an_app_token_or_the_admin_secret_and_refuse_what_they_do_not_know():
    app = Credentials.parse({**APP, "app_token_hash": "sha256"})
    assert (app.partner_id, app.hash_type, app.admin_secret) == (123, "SHA256", None)
    secret = Credentials.parse({"partner_id": 123, "admin_secret": "s3cret", "user_id": "me"})
    assert secret.admin_secret == "s3cret" and secret.app_token is None and secret.secrets == ("s3cret",)
    for bad in (
        {"app_token_id": "0_tok", "app_token": "t"},  # no partner
        {"partner_id": 123},  # nothing to start a session with
        {**APP, "app_token_hash": "CRC32"},
        {**APP, "category_ids": "12"},
        {**APP, "nameLike": "webinar"},  # a filter this tool cannot check: refused
    ):
        with pytest.raises(CredentialsError) as caught:
            Credentials.parse(bad)
        assert "t0ken" not in str(caught.value)


def test_an_api_exception_is_read_and_its_words_never_carry_a_ks_or_a_secret():
    ks = "djJ8MjAxMjM0NXyq" * 8
    body = {
        "code": "INVALID_KS",
        "message": f'Invalid KS "{ks}", Error "-5,EXPIRED"',
        "objectType": "KalturaAPIException",
    }
    assert api_error(body)[0] == "INVALID_KS" and api_error({"code": "x", "message": "y"}) is None
    denied = refusal("INVALID_KS", body["message"], "media.list", (ks,))
    assert isinstance(denied, SourceDenied) and ks not in denied.reason
    other = refusal("ENTRY_ID_NOT_FOUND", f"Entry id {ks} and s3cret", "media.get", ("s3cret",))
    assert "s3cret" not in other.reason and ks not in other.reason and "ENTRY_ID_NOT_FOUND" in other.reason


CATEGORY = {
    "public": {"fullName": "MediaSpace>site>galleries>Public", "privacy": 1, "appearInList": 1},
    "hidden": {"fullName": "MediaSpace>unlisted", "privacy": 1, "appearInList": 3},
    "staff": {"fullName": "Staff", "privacy": 2, "appearInList": 1},
    "members": {"fullName": "Members", "privacy": 3, "appearInList": 3, "contributionPolicy": 1},
}


@pytest.mark.parametrize(
    ("categories", "entry", "restricted", "expected"),
    [
        ([], {}, False, "private"),  # in no category: published nowhere
        (["members"], {}, False, "private"),
        (["staff"], {}, False, "private"),
        (["hidden"], {}, False, "unlisted"),
        (["members", "public"], {}, False, "public"),  # shown wherever it is published: the widest
        (["public"], {"displayInSearch": 0}, False, "unlisted"),
        (["public"], {}, True, "signed"),  # an access control profile with a rule
        (["members"], {}, True, "private"),  # never widened by a restriction
        (["public"], {"moderationStatus": 1}, False, "private"),  # pending moderation
        ([None], {}, False, "private"),  # a category these credentials cannot read
        ([{"fullName": "X", "privacy": 9}], {}, False, "private"),  # a privacy this tool does not know
    ],
)
def test_privacy_from_categories_is_never_wider_than_kalturas(categories, entry, restricted, expected):
    found = [CATEGORY[c] if isinstance(c, str) else c for c in categories]
    privacy, note = privacy_of(entry, found, restricted, NOW)
    assert privacy == expected and (note is None) == (expected == "public")


NOW = 1_700_000_000  # 2023-11-14T22:13:20Z
DAY = 86_400


@pytest.mark.parametrize(
    ("category", "window", "restricted", "expected", "said"),
    [
        ("public", {}, False, "public", None),
        ("public", {"startDate": None, "endDate": None}, False, "public", None),  # null: not set (JSON answers)
        ("public", {"startDate": 0, "endDate": -1}, False, "public", None),  # no date (-1 is the request's "remove")
        ("public", {"startDate": NOW - DAY}, False, "public", None),  # open for good
        # not yet published: private, saying when Kaltura would publish it
        ("public", {"startDate": NOW + DAY}, False, "private", "published from 2023-11-15T22:13:20Z (startDate)"),
        ("public", {"startDate": str(NOW + DAY)}, False, "private", "publish it at the target then"),  # a string
        ("public", {"startDate": NOW - 2 * DAY, "endDate": NOW - DAY}, False, "private", "no longer played since"),
        ("public", {"endDate": NOW}, False, "private", "no longer played since 2023-11-14T22:13:20Z"),
        ("public", {"endDate": NOW + 30 * DAY}, False, "signed", "played only until 2023-12-14T22:13:20Z"),
        ("hidden", {"endDate": NOW + 30 * DAY}, False, "signed", "played only until"),  # unlisted narrowed too
        ("members", {"endDate": NOW + 30 * DAY}, False, "private", "played only until"),  # never widened
        ("public", {"startDate": NOW + DAY}, True, "private", "startDate"),  # narrower than the profile's signed
        ("public", {"startDate": "tomorrow"}, False, "private", "cannot read"),  # what is not understood
        ("public", {"endDate": 1.5}, False, "private", "cannot read"),
    ],
)
def test_an_entry_outside_its_scheduling_window_is_never_carried_public(category, window, restricted, expected, said):
    privacy, note = privacy_of({"id": "0_a", **window}, [CATEGORY[category]], restricted, NOW)
    assert privacy == expected
    assert (note is None) if said is None else (said in note and note.endswith(f"carried as {expected}"))


def test_the_window_is_kept_in_the_row_as_dates():
    assert schedule_metadata({"startDate": NOW + DAY, "endDate": None}) == {"start_date": "2023-11-15T22:13:20Z"}
    assert schedule_metadata({"startDate": -1, "endDate": "x"}) == {}


def test_the_source_flavor_else_the_tallest_ready_one_said_so():
    source = {"id": "1_a", "isOriginal": True, "status": 2, "height": 1080}
    tall = {"id": "1_b", "isOriginal": False, "status": 2, "height": 720, "bitrate": 2500}
    short = {"id": "1_c", "isOriginal": False, "status": 2, "height": 360}
    assert source_flavor([short, source, tall]) == (source, None)
    chosen, note = source_flavor([{**source, "status": 3}, short, tall])
    assert chosen is tall and "purged" in note and "720p" in note
    assert source_flavor([{**source, "status": 1}, tall]) == (None, "working")  # the source still converting
    assert source_flavor([{**source, "status": -1}])[0] is None
    assert why_not({"mediaType": 1, "status": "1"})[1] and why_not({"mediaType": 1, "status": "-1"})[0]
    assert why_not({"mediaType": 5, "status": "2"})[0].startswith("an audio entry")


def test_the_walk_cursor_its_boundary_and_the_checks_of_every_filter():
    creds = Credentials.parse(APP)
    walk = Walk.of(None, None, 2_000)
    assert (walk.field, walk.after, walk.until) == ("createdAt", 0, 2_000)
    page = [{"id": f"0_{i:08d}", "createdAt": 1_000 + i // 7, "status": "2"} for i in range(PAGE_SIZE)]
    walk.check(page, creds)
    following = walk.next(page)
    # 500 = 71 x 7 + 3: the last second holds three entries, excluded by id from the next window, which starts there
    assert following.after == page[-1]["createdAt"] and following.seen == tuple(e["id"] for e in page[497:])
    assert Walk.of(following.cursor(), None, 9_999) == following
    assert walk.next(page[:10]) is None
    with pytest.raises(FilterIgnored) as caught:
        following.check([page[-1]], creds)  # an id the boundary excluded, answered again
    assert "idNotIn" in caught.value.reason
    with pytest.raises(FilterIgnored):
        following.check([{"id": "0_zz", "createdAt": 5, "status": "2"}], creds)  # before the window
    delta = Walk.of(None, 1_500.0, 2_000)
    assert delta.field == "updatedAt" and delta.filter(creds)["updatedAtGreaterThanOrEqual"] == 1_500


@pytest.mark.parametrize(
    ("categories_ids", "links", "answered_right"),
    [
        ("4", {}, True),  # categoriesIds holds it
        ("", {"0_a": {4}}, True),  # a category with a privacy context: only categoryEntry.list names it
        ("10", {"0_a": {4, 10}}, True),
        ("10", {"0_a": {10}}, False),  # in neither: Kaltura ignored the filter
        ("", {"0_b": {4}}, False),  # another entry's link is not this one's
    ],
)
def test_the_category_filter_is_checked_against_categoryentry_links_too(categories_ids, links, answered_right):
    creds = Credentials.parse({**APP, "category_ids": [4]})
    entry = {"id": "0_a", "createdAt": 10, "status": "2", "categoriesIds": categories_ids}
    walk = Walk.of(None, None, 2_000)
    if answered_right:
        walk.check([entry], creds, links)
    else:
        with pytest.raises(FilterIgnored) as caught:
            walk.check([entry], creds, links)
        assert "categoriesIdsMatchOr" in caught.value.reason
