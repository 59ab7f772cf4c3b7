"""Listings that must end and lookups that must reach back far enough, against fake provider lists.

`audit` reads the whole library through `Provider.videos()`: it must end on a list that loops
or pads itself with empty pages, stay flat in memory on a library of any size, and stop loudly
(ListingError) rather than quietly when a page cannot be read. Mux's `find` pages the asset
list back to the time it is given; a search it cannot finish never answers "not found".
"""

from __future__ import annotations

import itertools
import json
import tracemalloc
import urllib.parse
from datetime import UTC, datetime

import pytest
import requests
from migrator.fate import OutcomeKind
from migrator.providers import ListingError, build
from migrator.providers import base as provider_base
from migrator.providers.http import TransportError
from migrator.providers.mux import FIND_ABSOLUTE_MAX_PAGES, LOOKUP_TOO_LONG, find_page_cap

NOW = 1_800_000_000.0
SECRETS = {
    "mux": json.dumps({"token_id": "i", "token_secret": "s"}),
    "cloudflare": json.dumps({"account_id": "a1", "api_token": "t"}),
    "apivideo": "k",
    "generic": "t",
}


class Fake(requests.Session):
    """Answers each request with `answer(query)` -> (status, body); counts requests and refuses to
    go on past `limit` of them (a listing that never ends fails the test instead of hanging it)."""

    def __init__(self, answer, limit=10_000):
        super().__init__()
        self.answer, self.limit, self.requests = answer, limit, 0

    def send(self, request, **kwargs):
        self.requests += 1
        if self.requests > self.limit:
            raise AssertionError(f"the listing is still asking after {self.limit} requests")
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(request.url).query))
        status, body = self.answer(query)
        response = requests.Response()
        response.status_code = status
        response._content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return response


def provider(name, answer, limit=10_000):
    made = build(name, "https://p.example", lambda: SECRETS[name], clock=lambda: NOW)
    made.http.session = Fake(answer, limit)
    return made, made.http.session


# --- listings end ---------------------------------------------------------------------------------


def test_mux_listing_ends_on_a_cursor_it_has_seen():
    mux, _ = provider("mux", lambda q: (200, {"data": [{"id": "a" + q.get("cursor", "0")}], "next_cursor": "c1"}))
    listed = list(itertools.islice(mux.videos(), 1000))
    assert [v.remote_id for v in listed] == ["a0", "ac1"]  # the first page, the cursor's page, and no loop


def test_mux_listing_ends_on_an_empty_page_even_with_a_cursor():
    mux, fake = provider("mux", lambda q: (200, {"data": [] if "cursor" in q else [{"id": "a1"}], "next_cursor": "x"}))
    assert [v.remote_id for v in mux.videos()] == ["a1"] and fake.requests == 2


def test_apivideo_listing_ends_on_an_empty_page_whatever_pages_total_says():
    def answer(q):
        items = [{"videoId": f"vi{n}"} for n in range(2)] if q["currentPage"] == "1" else []
        return 200, {"data": items, "pagination": {"pagesTotal": 10**9, "currentPage": int(q["currentPage"])}}

    api, fake = provider("apivideo", answer, limit=50)
    assert [v.remote_id for v in api.videos()] == ["vi0", "vi1"] and fake.requests == 2


@pytest.mark.parametrize("name", ["mux", "apivideo", "generic"])
def test_a_listing_that_goes_on_for_ever_stops_loudly_at_the_page_cap(name, monkeypatch):
    monkeypatch.setattr(provider_base, "LISTING_MAX_PAGES", 5)
    pages = itertools.count()

    def answer(q):
        n = next(pages)
        return 200, {
            "data": [{"id": f"v{n}", "videoId": f"v{n}"}],
            "next_cursor": f"c{n}",
            "pagination": {"pagesTotal": 10**9},
        }

    made, fake = provider(name, answer, limit=50)
    with pytest.raises(ListingError, match="stopped after 5 pages"):
        list(made.videos())
    assert fake.requests == 5


@pytest.mark.parametrize("name", ["mux", "cloudflare", "apivideo", "generic"])
@pytest.mark.parametrize(
    "answer",
    [(200, b"<html>maintenance</html>"), (200, {"data": 7, "result": 7}), (200, [1, 2]), (502, {"error": "bad"})],
)
def test_a_page_that_cannot_be_read_stops_the_listing_loudly(name, answer):
    made, _ = provider(name, lambda q: answer)
    with pytest.raises(ListingError, match="listing the provider's videos failed"):
        list(made.videos())


def test_no_answer_while_listing_is_a_listing_error_not_a_crash():
    mux, _ = provider("mux", lambda q: (200, {}))

    def down(*args, **kwargs):
        raise TransportError("timeout")

    mux.http.send = down
    with pytest.raises(ListingError, match="timeout"):
        list(mux.videos())


# --- Cloudflare: pages by time, flat in memory ------------------------------------------------------

T0 = 1_700_000_000


def iso(second: int) -> str:
    return datetime.fromtimestamp(T0 + second, UTC).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def cloudflare_library(total: int, per_second: int):
    """A Stream list of `total` videos, `per_second` of them sharing each `created` second, oldest
    first; `after` is taken as inclusive, so each page repeats the boundary's videos (the adapter
    must skip them). Pages are made on demand: the fake holds nothing."""

    def answer(q):
        start = 0
        if "after" in q:
            second = int(datetime.fromisoformat(q["after"].replace("Z", "+00:00")).timestamp()) - T0
            start = second * per_second
        page = [
            {"uid": f"{i:032x}", "created": iso(i // per_second), "status": {"state": "ready"}, "duration": 1.5}
            for i in range(start, min(total, start + int(q["limit"])))
        ]
        return 200, {"success": True, "errors": [], "messages": [], "result": page}

    return answer


def test_cloudflare_listing_gives_each_video_once_across_shared_timestamps():
    cf, _ = provider("cloudflare", cloudflare_library(2_500, 3))
    uids = [v.remote_id for v in cf.videos()]
    assert len(uids) == 2_500 and len(set(uids)) == 2_500


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_cloudflare_listing_stays_flat_in_memory_whatever_the_librarys_size():
    def peak_for(total: int) -> int:
        cf, _ = provider("cloudflare", cloudflare_library(total, 2))
        tracemalloc.start()
        try:
            count = sum(1 for _ in cf.videos())
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            assert count == total

    small, large = peak_for(2_000), peak_for(20_000)
    # One page at a time: ten times the library, about the same peak (a set of every uid seen,
    # as before, grew by 3 MB here).
    assert large < small + 1_000_000, f"{small / 2**20:.1f} MiB for 2,000 videos, {large / 2**20:.1f} MiB for 20,000"


def test_cloudflare_listing_reads_a_full_page_of_1000_videos_past_the_ordinary_answer_cap():
    big = {"thumbnail": "https://customer-x.cloudflarestream.com/" + "t" * 900, "meta": {"name": "n" * 200}}

    def answer(q):
        first = "after" not in q
        page = [
            {**big, "uid": f"{i:032x}", "created": iso(i), "status": {"state": "ready"}}
            for i in (range(1000) if first else range(999, 1200))
        ]
        return 200, {"result": page}

    cf, _ = provider("cloudflare", answer)
    assert sum(1 for _ in cf.videos()) == 1200  # each page is 1.3 MB, over the 1 MiB of an ordinary answer


# --- the generic provider pages its list --------------------------------------------------------------


def test_generic_listing_follows_next_cursor_and_keeps_the_seeds_one_page_list():
    library = [{"id": f"vid_{n}", "status": "ready"} for n in range(250)]

    def paged(q):
        start = int(q.get("cursor", 0))
        page = library[start : start + int(q["limit"])]
        more = start + len(page) < len(library)
        return 200, {"data": page, **({"next_cursor": str(start + len(page))} if more else {})}

    generic, fake = provider("generic", paged)
    assert [v.remote_id for v in generic.videos()] == [v["id"] for v in library] and fake.requests == 3
    seed, fake = provider("generic", lambda q: (200, {"data": library}))  # ignores limit, no cursor
    assert len(list(seed.videos())) == 250 and fake.requests == 1


# --- Mux's find reaches back as far as it must ----------------------------------------------------------


def mux_list(assets):
    """Mux's asset list, newest first: `assets(i)` is the i-th newest (or None past the end);
    the cursor is the next index, made opaque enough."""

    def answer(q):
        start = int(q.get("cursor", "i0")[1:])
        limit = int(q["limit"])
        page = [a for a in (assets(i) for i in range(start, start + limit)) if a is not None]
        more = len(page) == limit and assets(start + limit) is not None
        return 200, {"data": page, "next_cursor": f"i{start + limit}" if more else None}

    return answer


def test_mux_find_reaches_an_asset_with_3000_newer_ones_on_top():
    claimed = NOW - 720  # a crashed try's message back after the visibility timeout
    ours = 3_000  # the fleet made 3,000 assets since (over 4/s), on top of ours

    def assets(i):
        created = NOW - i * 0.2 if i < ours else claimed + 1 - (i - ours)
        passthrough = "library/intro-2019" if i == ours else f"other/{i}"
        return {"id": f"a{i}", "passthrough": passthrough, "created_at": str(int(created)), "status": "preparing"}

    mux, fake = provider("mux", mux_list(assets))
    outcome = mux.find("library/intro-2019", created_after=claimed)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "a3000")
    assert fake.requests == 31  # page 31 holds it: the old bound of 5 pages would have missed it


def test_mux_find_that_cannot_reach_back_far_enough_is_transient_not_not_found():
    # Every listed asset is newer than the claim a minute ago: more than 10 creates a second.
    every = lambda i: {"id": f"a{i}", "passthrough": f"other/{i}", "created_at": str(int(NOW)), "status": "ready"}  # noqa: E731
    mux, fake = provider("mux", mux_list(every))
    outcome = mux.find("library/intro-2019", created_after=NOW - 60)
    assert outcome.kind is OutcomeKind.TRANSIENT and outcome.error.startswith(LOOKUP_TOO_LONG)
    assert fake.requests == find_page_cap(NOW - 60, NOW) == 38  # ceil((60 + 300) x 10 / 100) + 2


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_mux_find_over_the_absolute_page_cap_is_transient():
    one = lambda i: {"id": f"a{i}", "passthrough": "x", "created_at": str(int(NOW)), "status": "ready"}  # noqa: E731

    def thin(q):  # one asset a page keeps 2,000 pages cheap
        start = int(q.get("cursor", "i0")[1:])
        return 200, {"data": [one(start)], "next_cursor": f"i{start + 1}"}

    mux, fake = provider("mux", thin)
    outcome = mux.find("library/intro-2019", created_after=NOW - 86_400)
    assert find_page_cap(NOW - 86_400, NOW) > FIND_ABSOLUTE_MAX_PAGES
    assert outcome.kind is OutcomeKind.TRANSIENT and outcome.error.startswith(LOOKUP_TOO_LONG)
    assert fake.requests == FIND_ABSOLUTE_MAX_PAGES


def test_mux_find_on_a_repeated_cursor_is_transient():
    newer = {"id": "a1", "passthrough": "x", "created_at": str(int(NOW)), "status": "ready"}
    mux, fake = provider("mux", lambda q: (200, {"data": [newer], "next_cursor": "same"}), limit=50)
    outcome = mux.find("library/intro-2019", created_after=NOW - 60)
    assert (outcome.kind, fake.requests) == (OutcomeKind.TRANSIENT, 2) and "cursor" in outcome.error


def test_mux_find_without_a_time_reads_a_few_pages_then_says_not_found():
    every = lambda i: {"id": f"a{i}", "passthrough": "x", "created_at": str(int(NOW)), "status": "ready"}  # noqa: E731
    mux, fake = provider("mux", mux_list(every))
    assert mux.find("library/intro-2019", created_after=None).kind is OutcomeKind.NOT_FOUND
    assert fake.requests == provider_base.FIND_MAX_PAGES


def test_mux_find_stops_at_the_end_of_the_list():
    few = lambda i: {"id": f"a{i}", "passthrough": "x", "created_at": str(int(NOW))} if i < 150 else None  # noqa: E731
    mux, fake = provider("mux", mux_list(few))
    assert mux.find("library/intro-2019", created_after=NOW - 3600).kind is OutcomeKind.NOT_FOUND
    assert fake.requests == 2
