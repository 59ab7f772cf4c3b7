"""Vimeo sweeps as the platform documents them: a listing that outlasts the rate limit's lock-out, pages that
overlap so a video deleted mid-sweep skips nothing, a team's library, and videos still transcoding carried to
the next sweep. The "vimeo" simulator profile models each (its comments cite the documents); PyVimeo 1.1.2
checks the simulator answers as Vimeo does where it has the call, our source and the sweep the rest, and each
test asserts on what the simulator holds at the end.
"""

from __future__ import annotations

import io
import json
import time

import pytest
import requests
import vimeo
from migrator.sources import ResolutionKind, SourceDenied, SourceThrottled, build, parse_ref
from migrator.sources.vimeo import STILL_PROCESSING
from migrator_cli.sweep import read_mark, sweep
from vimeo.exceptions import APIRateLimitExceededFailure

TOKEN = "vimeo-pat"
# Lock-out tests run at 1/SCALE of Vimeo's time: the simulator's minute is LOCKOUT_S, and the source's waits are
# slept for 1/SCALE of what it asks.
SCALE = 20
LOCKOUT_S = 60 / SCALE


@pytest.fixture
def library(launch):
    def start(credentials: dict | None = None, sleep=None, **config):
        sim = launch("vimeo", **{"token": TOKEN, "library_size": 250, **config})
        creds = {"token": TOKEN, **(credentials or {})}
        options = {"sleep": sleep} if sleep else {}
        return sim, build("vimeo", lambda: creds, sim.url, patient=True, **options)

    return start


def pyvimeo(sim) -> vimeo.VimeoClient:
    client = vimeo.VimeoClient(token=TOKEN)
    client.API_ROOT = sim.url
    return client


def held_ids(sim, path: str = "/me/videos") -> list[str]:
    """Every video id the simulator lists at `path` now, read through PyVimeo page by page."""
    client, ids, following = pyvimeo(sim), [], f"{path}?per_page=100&sort=date&direction=asc"
    while following:
        body = client.get(following).json()
        ids += [v["uri"].rsplit("/", 1)[1] for v in body["data"]]
        following = body["paging"]["next"]
    return ids


def listed(source, since=None, between=None) -> tuple[list, list]:
    """Every entry and pending video of a listing; `between(n)` runs after page n (a change mid-sweep)."""
    entries, pending, cursor, n = [], [], None, 0
    while True:
        page = source.page(cursor, since, tracks=False)
        entries, pending, cursor, n = entries + page.entries, pending + page.pending, page.cursor, n + 1
        if cursor is None:
            return entries, pending
        if between:
            between(n)


# --- the rate limit's lock-out (sources item 6) ------------------------------------------------------------


def test_pyvimeo_meets_the_lockout_as_vimeo_documents_it(library, web):
    """Past the limit, a 429 and "up to a minute" with nothing saying when it ends; then requests pass again."""
    sim, _ = library(budget_quota=3, budget_block_s=LOCKOUT_S)
    client = pyvimeo(sim)
    for _ in range(3):
        assert client.get("/videos/700000000").status_code == 200
    with pytest.raises(APIRateLimitExceededFailure) as caught:
        client.get("/videos/700000000")
    assert caught.value.status_code == 429 and "limit will reset on" not in caught.value.message  # no reset told
    refused = web.get(f"{sim.url}/videos/700000000", headers={"Authorization": f"bearer {TOKEN}"})
    assert refused.status_code == 429 and "Retry-After" not in refused.headers
    assert "X-RateLimit-Reset" not in refused.headers and refused.json()["error_code"] == 9000
    time.sleep(LOCKOUT_S + 0.2)
    assert client.get("/videos/700000000").status_code == 200
    assert sim.stats()["blocks"] == 1 and sim.stats()["budget_throttled"] == 2


def test_a_sweep_outlasts_the_lockout_and_says_it_is_waiting_on_vimeo(library, tmp_path):
    """Sources item 6: the listing gave up after 7 waits of 5 s, inside one lock-out of a minute."""
    slept: list[float] = []

    def scaled(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds / SCALE)

    sim, source = library(sleep=scaled, budget_quota=2, budget_block_s=LOCKOUT_S)
    out = io.StringIO()
    summary = sweep(source, tmp_path / "v.jsonl", out=out, tracks=False)
    assert summary.done and summary.rows == 250
    blocks = sim.stats()["blocks"]
    sim.patch_config({"budget_quota": 0})  # what the simulator holds, read past the limit
    assert sorted(json.loads(line)["id"].split("/")[1] for line in open(tmp_path / "v.jsonl")) == sorted(held_ids(sim))
    assert blocks >= 1 and sum(slept) >= 60  # a minute of Vimeo's time waited, in steps
    said = out.getvalue()
    assert "waiting on vimeo's rate limit: HTTP 429 with no retry time" in said and "giving up after 300 s" in said


def test_a_lockout_that_never_ends_is_given_up_after_minutes_and_the_uploader_told_a_minute(library):
    slept: list[float] = []
    sim, source = library(sleep=slept.append, budget_quota=1, budget_block_s=3600)
    source.page(None, tracks=False)
    with pytest.raises(SourceThrottled) as caught:
        source.page(None, tracks=False)
    assert 299 <= sum(slept) <= 300.5 and len(slept) >= 6 and max(slept) <= 72  # jittered, a minute at most
    assert slept[0] <= 6 and caught.value.retry_after == 60
    impatient = build("vimeo", lambda: {"token": TOKEN}, sim.url)  # the uploader's: it never sleeps
    with pytest.raises(SourceThrottled) as told:
        impatient.resolve(parse_ref("vimeo://700000000"))
    answer = told.value.resolution()
    assert answer.kind is ResolutionKind.THROTTLED and answer.retry_after == 60  # not 5 s into the same minute
    assert sim.stats()["blocks"] == 1  # one lock-out, never lengthened by the calls refused in it


# --- pages by number over a list that changes (sources item 10) -----------------------------------------


@pytest.mark.parametrize(
    "deleted",
    [[3], list(range(20, 35)), list(range(90, 100))],
    ids=["one", "more-than-the-overlap", "the-last-listed-themselves"],
)
def test_videos_deleted_mid_sweep_shift_the_pages_and_none_is_skipped(library, deleted):
    """A video of page 1 deleted before page 2 is read moved page 2's first video onto page 1: it was never read."""
    sim, source = library()
    entries, _ = listed(source, between=lambda n: n == 1 and sim.change_library(deleted, []))
    ids = [e.asset_id.split("/")[1] for e in entries]
    held = held_ids(sim)
    assert len(held) == 250 - len(deleted) and set(held) <= set(ids)  # every video the library still has
    if deleted == list(range(90, 100)):  # the last listed are gone: page 1 is listed again, never a gap
        assert len(set(ids)) == 250 and len(ids) == 250 + 90
    else:
        assert len(ids) == len(set(ids)) == 250  # repeats dropped by id


def test_a_delta_sweep_overlaps_its_pages_too(library):
    sim, source = library()
    mark = 1_577_836_800 + 3600  # every video changed since: the delta lists all, newest change first
    entries, _ = listed(source, since=mark, between=lambda n: n == 1 and sim.change_library([240], []))
    ids = [e.asset_id for e in entries]
    assert len(ids) == len(set(ids)) == 250 and ids[0] == "vimeo/700000249"  # 240 listed before it went


# --- a team's library (sources item 10) ------------------------------------------------------------------


def test_a_team_library_is_listed_at_its_owner_where_me_lists_only_the_tokens_uploads(library):
    sim, mine = library(library_size=40, library_team_every=4)
    client = pyvimeo(sim)
    assert client.get("/me/videos").json()["total"] == 30  # what the token's user uploaded
    assert client.get("/users/2/videos").json()["total"] == 40  # the team's library, every member's uploads
    assert client.get("/users/99/videos").status_code == 404
    assert len(listed(mine)[0]) == 30
    _, team = library(credentials={"team": "/users/2"}, library_size=40, library_team_every=4)
    entries, _ = listed(team)
    assert sorted(e.asset_id.split("/")[1] for e in entries) == sorted(held_ids(sim, "/users/2/videos"))
    _, wrong = library(credentials={"team": "the marketing team"})
    with pytest.raises(SourceDenied) as caught:
        wrong.page(None)
    assert "team owner's user id" in caught.value.reason and TOKEN not in caught.value.reason


# --- videos still transcoding (sources item 3) -------------------------------------------------------------


def test_a_video_still_transcoding_is_held_and_the_next_delta_lists_it_once_done(library, tmp_path, web):
    """A delta by modified time never listed again a video that was transcoding at the last sweep."""
    sim, source = library(library_size=50, library_unfetchable_every=10)
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    transcoding = {"vimeo/700000019", "vimeo/700000049"}  # the simulator's "processing" faults
    assert first.pending == 2 and set(json.loads(marks.read_text())["vimeo"]["pending"]) == transcoding
    written = [json.loads(line)["id"] for line in open(tmp_path / "all.jsonl")]
    written_off = [json.loads(line)["id"] for line in open(tmp_path / "all.jsonl.unfetchable.jsonl")]
    assert not transcoding & set(written + written_off)
    assert pyvimeo(sim).get("/videos/700000019").json()["status"] == "transcoding"

    web.post(f"{sim.url}/_sim/config", json={"library_processing_done": True}).raise_for_status()
    assert pyvimeo(sim).get("/videos/700000019").json()["status"] == "available"
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=read_mark(marks, "vimeo") + 1)
    assert {json.loads(line)["id"] for line in open(tmp_path / "delta.jsonl")} == transcoding
    assert delta.pending == 0 and json.loads(marks.read_text())["vimeo"].get("pending", {}) == {}


def test_one_video_is_answered_as_a_page_would_list_it(library, web):
    sim, source = library(library_size=20, library_unfetchable_every=10)
    [held] = source.video("700000019").pending
    assert held.reason == STILL_PROCESSING and held.asset_id == "vimeo/700000019"
    assert source.video("700000001").entries[0].asset_id == "vimeo/700000001"
    assert source.video("700000009").entries[0].reason.startswith("no file access")
    sim.change_library([1], [])
    gone = source.video("700000001")
    assert not gone.entries and not gone.pending
    assert requests.get(f"{sim.url}/videos/700000001", timeout=5).status_code == 401  # the token is asked for
