"""Kaltura as a source: migrator.sources.kaltura against the "kaltura" simulator profile (Kaltura's API v3 as its
reference, kaltura/server and KalturaApiClient 23.10.0 describe it; tests/sim/test_sdk_kaltura.py drives the same
profile through the official client). The listing walks creation windows past media.list's 10,000-entry ceiling,
renews a KS that expires mid-sweep without losing its place, checks every filter it sends on every entry answered,
carries privacy from categories (those with a privacy context read from categoryEntry.list, one call a page) and
scheduling windows (never wider), the source flavor (or the tallest), captions as WebVTT, and holds entries still
converting for the next sweep. What is asserted is what the simulator answered and logged, and what the sweep wrote.
"""

from __future__ import annotations

import io
import json
import time
from collections import Counter

import pytest
from migrator.sources import ResolutionKind, SourceDenied, build, kaltura_api, parse_ref
from migrator.sources import kaltura as kaltura_source
from migrator.sources.kaltura import FilterIgnored
from migrator_cli.sweep import read_mark, sweep

from infra.sim.platforms import kaltura_entries

PARTNER = 2_012_345
TOKEN_ID, TOKEN, SECRET = "0_apptoken", "app-token-secret", "admin-secret"
APP = {"partner_id": PARTNER, "app_token_id": TOKEN_ID, "app_token": TOKEN}


@pytest.fixture
def library(launch):
    def start(credentials=None, clock=time.time, **config):
        sim = launch("kaltura", token=SECRET, token_id=TOKEN_ID, token_secret=TOKEN, **{"library_size": 60, **config})
        creds = credentials or APP
        source = build("kaltura", lambda: creds, sim.url, patient=True, rate_per_s=0, clock=clock)
        return sim, source

    return start


def listed(source, since=None, tracks=True):
    entries, pending, cursor, pages = [], [], None, 0
    while True:
        page = source.page(cursor, since, tracks)
        entries, pending, pages, cursor = entries + page.entries, pending + page.pending, pages + 1, page.cursor
        if cursor is None:
            return entries, pending, pages


def calls(sim, name=None):
    return [r for r in sim.requests_log(ops=None) if name is None or r.get("call") == name]


def ids_in(path):
    return [json.loads(line)["id"] for line in open(path)] if path.exists() else []


# --- the 10,000-row ceiling -------------------------------------------------------------------------------------


def test_a_library_of_25000_is_listed_whole_past_the_10000_ceiling_and_resumes(library, tmp_path):
    """media.list answers nothing past the 10,000th match of a query: the walk moves its creation window instead
    of a page index, each boundary second's ids excluded by idNotIn, and the sweep stopped half way resumes from
    that cursor."""
    sim, source = library(library_size=25_000, library_unfetchable_every=2_000)
    out, state = tmp_path / "k.jsonl", tmp_path / "k.state.json"
    first = sweep(source, out, state_path=state, tracks=False, limit=12_000, out=io.StringIO())
    assert first.limit_reached and json.loads(state.read_text())["cursor"].startswith("createdAt:")
    rest = sweep(source, out, state_path=state, tracks=False, out=io.StringIO())
    assert rest.done and rest.repeats == 0
    written = ids_in(out) + ids_in(tmp_path / "k.jsonl.unfetchable.jsonl")
    held = set(rest.next_pending)
    assert len(written) == len(set(written)) and not held & set(written)
    assert set(written) | held == {f"kaltura/{kaltura_entries.entry_id(i)}" for i in range(25_000)}
    lists = calls(sim, "media.list")
    # 50 full pages and the last, and the two probes of statusIn/moderationStatusIn when the listing began
    assert len(lists) == 53 and all(r["status"] == 200 and "refused" not in r for r in lists)
    # each full page's 1,000 category links (its folder, the public gallery) in one categoryEntry.list of two pages
    assert len(calls(sim, "categoryentry.list")) == 50 * 2


# --- sessions -----------------------------------------------------------------------------------------------------


def test_a_ks_that_expires_mid_sweep_is_renewed_and_the_sweep_goes_on_from_its_cursor(library, tmp_path, monkeypatch):
    """A clock a little behind Kaltura's (or a KS revoked) is only seen as INVALID_KS -5,EXPIRED: the KS is started
    again from the app token and the same call sent again; the cursor the sweep saved is where it goes on."""
    monkeypatch.setattr(kaltura_api, "RENEW_BEFORE_S", 0.0)
    sim, source = library(library_size=1_200, session_ttl_s=2, clock=lambda: time.time() - 30)
    out, state = tmp_path / "k.jsonl", tmp_path / "k.state.json"
    sweep(source, out, state_path=state, tracks=False, limit=400, out=io.StringIO())
    time.sleep(2.5)  # the KS the simulator started has expired; the source's clock says it has not
    rest = sweep(source, out, state_path=state, tracks=False, out=io.StringIO())
    assert rest.done and rest.repeats == 0 and len(set(ids_in(out))) == len(ids_in(out)) == 1_200
    log = [(r.get("call"), r.get("refused")) for r in calls(sim)]
    refused = log.index(("media.list", "INVALID_KS"))
    assert log[refused + 1 : refused + 4] == [
        ("session.startwidgetsession", None),
        ("apptoken.startsession", None),
        ("media.list", None),
    ]
    assert source.session.started >= 2


def test_a_ks_about_to_expire_is_replaced_before_the_call(library):
    # A KS that lives a minute is within RENEW_BEFORE_S of its expiry from the start: renewed before every call,
    # yet never past its expiry when the call arrives (1 s was, on a loaded machine, between the mint and the call).
    sim, source = library(library_size=10, session_ttl_s=60)
    listed(source, tracks=False)
    listed(source, tracks=False)
    assert not [r for r in calls(sim) if r.get("refused")]  # never sent with a KS past its expiry
    assert source.session.started == len(calls(sim, "apptoken.startsession")) > 1


def test_the_admin_secret_starts_a_session_and_no_secret_is_ever_in_an_error(library):
    sim, source = library(credentials={"partner_id": PARTNER, "admin_secret": SECRET}, library_size=5)
    assert len(listed(source, tracks=False)[0]) == 5 and len(calls(sim, "session.start")) == 1
    sim, wrong = library(credentials={"partner_id": PARTNER, "admin_secret": "not-the-secret"})
    with pytest.raises(SourceDenied) as caught:
        wrong.page(None)
    assert "START_SESSION_ERROR" in caught.value.reason and "not-the-secret" not in caught.value.reason
    sim, token = library(credentials={**APP, "app_token": "stolen"})
    with pytest.raises(SourceDenied) as caught:
        token.page(None)
    assert "INVALID_APP_TOKEN_HASH" in caught.value.reason and "stolen" not in caught.value.reason


# --- filters Kaltura ignores --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dropped", ["idNotIn", "createdAtGreaterThanOrEqual", "statusIn", "moderationStatusIn", "categoriesIdsMatchOr"]
)
def test_a_filter_kaltura_ignores_stops_the_listing_naming_it(library, monkeypatch, dropped):
    """An unsupported filter field answers everything: every filter sent is checked on every entry answered, and
    the two whose neglect only hides entries (statusIn, moderationStatusIn) are probed with what the defaults hide."""
    monkeypatch.setattr(kaltura_entries, "SUPPORTED", kaltura_entries.SUPPORTED - {dropped})
    _sim, source = library(
        credentials={**APP, "category_ids": [2]} if dropped == "categoriesIdsMatchOr" else APP,
        library_size=1_200,
        library_private_every=2,
        library_unfetchable_every=3,
    )
    with pytest.raises(FilterIgnored) as caught:
        listed(source, tracks=False)
    assert dropped in caught.value.reason


def test_the_category_filter_lists_only_its_entries_and_an_unknown_field_is_refused(library):
    """Category 4 has a privacy context (MediaSpace's): media.list matches its entries, whose categoriesIds leave it
    out, and only categoryEntry.list says they are in it. Read from categoriesIds alone, every entry answered looked
    outside the filter, and the listing stopped saying Kaltura had ignored it."""
    sim, source = library(credentials={**APP, "category_ids": [4]}, library_size=120, library_private_every=2)
    entries, _, _ = listed(source, tracks=False)
    assert entries and all("MediaSpace>unlisted" in e.metadata["categories"] for e in entries)
    assert all(e.privacy == "unlisted" for e in entries)  # the category's own privacy, read from category.list
    shelf = _shelf(library_size=120, library_private_every=2)
    shown = kaltura_entries.entry(shelf, shelf.video(kaltura_entries.index_of(entries[0].asset_id.split("/")[1])))
    assert "4" not in shown["categoriesIds"].split(",")  # what media.list said of it
    # one categoryEntry.list per page of media.list (the probes aside), all the page's entries in it
    assert len(calls(sim, "categoryentry.list")) == len(calls(sim, "media.list")) - 2
    _sim, unknown = library(credentials={**APP, "tagsLike": "webinar"})
    with pytest.raises(SourceDenied) as caught:
        unknown.page(None)
    assert "tagsLike" in caught.value.reason and "ignores a filter" in caught.value.reason


def test_category_links_are_read_a_page_at_a_time_and_in_halves_past_the_ceiling(library, monkeypatch):
    """One categoryEntry.list (paged) for all of a page's entries; where its pages reach the ceiling, the ids are
    asked again in halves, so no link is lost (each entry here has two, so a page of 500 entries has 1,000)."""
    sim, source = library(library_size=1_000)
    entries, _, _ = listed(source, tracks=False)
    plain = len(calls(sim, "categoryentry.list"))
    assert plain == 2 * 2  # two pages of entries, 1,000 links each: two pages of links each
    monkeypatch.setattr(kaltura_source, "MAX_LISTED", 500)  # a ceiling a page of links reaches
    sim, source = library(library_size=1_000)
    again, _, _ = listed(source, tracks=False)
    assert [(e.asset_id, e.privacy, e.metadata["categories"]) for e in again] == [
        (e.asset_id, e.privacy, e.metadata["categories"]) for e in entries
    ]
    assert {e.privacy for e in again} == {"public"} and len(calls(sim, "categoryentry.list")) > plain


def test_a_category_link_filter_kaltura_ignores_stops_the_listing(library, monkeypatch):
    real = kaltura_entries.category_links
    stranger = {"objectType": "KalturaCategoryEntry", "entryId": "0_zzzzzzzz", "categoryId": 1, "status": 2}
    monkeypatch.setattr(kaltura_entries, "category_links", lambda *a: [*real(*a), stranger])  # entryIdIn ignored
    _sim, source = library(library_size=20)
    with pytest.raises(FilterIgnored) as caught:
        source.page(None, tracks=False)
    assert "categoryEntry.list" in caught.value.reason and "entryIdIn" in caught.value.reason


# --- rows: privacy, files, captions ------------------------------------------------------------------------------


def kind_of(row) -> str:
    """The simulator's private kind of a row's entry, in a library with `library_private_every` 2."""
    index, kinds = kaltura_entries.index_of(row.asset_id.split("/")[1]), kaltura_entries.PRIVATE_KINDS
    return kinds[(index // 2) % len(kinds)] if index % 2 == 0 else "public"


def test_privacy_comes_from_categories_moderation_access_control_and_the_window_never_wider(library):
    """Every private kind the simulator makes, each carried no wider than Kaltura shows it: MediaSpace's galleries
    and channels (a privacy context) read from categoryEntry.list, a link pending the gallery's moderation
    publishing nothing, and an entry outside its scheduling window private (closing: signed)."""
    _sim, source = library(library_size=2 * len(kaltura_entries.PRIVATE_KINDS) * 5, library_private_every=2)
    entries, _, _ = listed(source, tracks=False)
    by_kind, one = {}, {}
    for row in entries:
        by_kind.setdefault(kind_of(row), set()).add(row.privacy)
        one.setdefault(kind_of(row), row)
    assert by_kind == {
        "public": {"public"},  # its gallery, MediaSpace>site>galleries>Public, only categoryEntry.list names
        "no_category": {"private"},
        "members": {"private"},  # suggested to the public gallery too, pending its moderation: not shown there
        "staff": {"private"},
        "unlisted": {"unlisted"},
        "restricted": {"signed"},
        "moderation": {"private"},
        "not_yet": {"private"},
        "expired": {"private"},
        "closing": {"signed"},
    }
    private = one["no_category"]
    assert "in no category" in private.metadata["privacy_note"] and private.folder is None
    public = one["public"]
    assert public.folder.startswith("Library>") and "privacy_note" not in public.metadata
    assert "MediaSpace>site>galleries>Public" in public.metadata["categories"]
    assert "MediaSpace>site>galleries>Public" not in one["members"].metadata["categories"]
    opens = one["not_yet"].metadata["schedule"]["start_date"]
    assert f"published from {opens} (startDate)" in one["not_yet"].metadata["privacy_note"]
    assert opens > time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    assert "played only until" in one["closing"].metadata["privacy_note"]


def test_an_entry_outside_its_window_is_resolved_private_with_a_url_kaltura_serves(library, web):
    """flavorAsset.getUrl puts a KS of the entry's download privileges in the URL of an entry outside its window
    (asset.php getDownloadUrlWithExpiry), and the delivery serves it with that KS only (validateScheduling)."""
    _sim, source = library(library_size=2 * len(kaltura_entries.PRIVATE_KINDS), library_private_every=2)
    entries, _, _ = listed(source, tracks=False)
    one = {kind_of(e): e for e in entries}
    for kind, privacy, with_ks in (
        ("not_yet", "private", True),
        ("expired", "private", True),
        ("closing", "signed", False),  # closes in a month: no KS needed the day the URL lives
    ):
        resolved = source.resolve(parse_ref(one[kind].source_url))
        assert resolved.kind == ResolutionKind.READY and resolved.privacy == privacy, kind
        assert ("/ks/" in resolved.url) == with_ks and web.get(resolved.url).status_code == 200, kind
        if with_ks:
            assert web.get(resolved.url.split("/ks/")[0] + "/a.mp4").status_code == 403  # NOT_SCHEDULED_NOW


def test_the_source_flavor_or_the_tallest_left_and_the_url_minted_at_the_resolve(library, web):
    sim, source = library(library_size=30, library_unfetchable_every=5, library_private_every=2)
    entries, _, _ = listed(source, tracks=False)
    rows = {e.asset_id.split("/")[1]: e for e in entries if not hasattr(e, "reason")}
    purged = rows[kaltura_entries.entry_id(24)]  # fault "purged": its source flavor DELETED
    assert "purged" in purged.metadata["source_flavor"] and "720p" in purged.metadata["source_flavor"]
    resolved = source.resolve(parse_ref(purged.source_url))
    assert resolved.kind == ResolutionKind.READY and "/flavorId/1_000000o1/" in resolved.url
    assert web.get(resolved.url).status_code == 200
    public = next(r for r in rows.values() if r.privacy == "public")
    plain = source.resolve(parse_ref(public.source_url))
    assert "/ks/" not in plain.url and plain.expires_at is None and plain.privacy == "public"
    signed = next(r for r in rows.values() if r.privacy == "signed")
    minted = source.resolve(parse_ref(signed.source_url))
    assert "/ks/" in minted.url and minted.expires_at > time.time() + 80_000 and minted.privacy == "signed"
    assert web.get(minted.url).status_code == 200
    assert web.get(minted.url.split("/ks/")[0] + "/a.mp4").status_code == 403
    assert len(calls(sim, "flavorasset.geturl")) == 3  # minted only at the resolves


def test_unfetchable_entries_are_named_up_front_and_images_are_no_videos(library, tmp_path):
    _sim, source = library(library_size=50, library_unfetchable_every=5)
    summary = sweep(source, tmp_path / "k.jsonl", tracks=False, out=io.StringIO())
    reasons = Counter(
        json.loads(line)["reason"].split(" (")[0] for line in open(tmp_path / "k.jsonl.unfetchable.jsonl")
    )
    assert reasons == {
        "failed at the source": 2,
        "no media was ever uploaded to it": 2,
        "an audio entry": 2,
    }
    assert summary.pending == 2 and summary.rows == 50 - 6 - 2


def test_captions_are_carried_as_tracks_and_served_whole_as_webvtt(library):
    _sim, source = library(library_size=12, library_captions_every=3)
    entries, _, _ = listed(source)
    captioned = next(e for e in entries if e.tracks)
    assert [(t.language, t.name, t.format) for t in captioned.tracks] == [
        ("en", "English", "vtt"),
        ("fr", "Français", "vtt"),
    ]
    text = source.resolve(parse_ref(captioned.tracks[1].url))
    assert text.kind == ResolutionKind.READY and text.text.startswith("WEBVTT") and ", fr" in text.text
    gone = source.resolve(parse_ref(captioned.tracks[0].url.replace("/captions/2_", "/captions/2_z")))
    assert gone.kind == ResolutionKind.UNFETCHABLE


def test_entries_still_converting_wait_for_the_next_sweep_and_video_answers_one(library, tmp_path, web):
    sim, source = library(library_size=50, library_unfetchable_every=5, library_captions_every=7)
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    converting = {f"kaltura/{kaltura_entries.entry_id(i)}" for i in (4, 29)}  # the "processing" faults
    assert set(json.loads(marks.read_text())["kaltura"]["pending"]) == converting and first.pending == 2
    web.post(f"{sim.url}/_sim/config", json={"library_processing_done": True}).raise_for_status()
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=read_mark(marks, "kaltura") + 1)
    assert set(ids_in(tmp_path / "delta.jsonl")) == converting and delta.pending == 0
    web.post(f"{sim.url}/_sim/config", json={"library_captions_processing": True}).raise_for_status()
    [held] = source.video(kaltura_entries.entry_id(8)).pending  # captioned: its caption asset QUEUED
    assert "caption en is still being made" in held.reason
    sim.change_library([6], [])
    assert source.video(kaltura_entries.entry_id(6)).entries == [] and not source.video("not an id").entries


def test_a_delta_walks_updated_at_from_the_mark(library, tmp_path):
    sim, source = library(library_size=70)
    since = kaltura_entries.created_at(35) + kaltura_entries.UPDATED_AFTER_S
    delta = sweep(source, tmp_path / "d.jsonl", since=float(since), tracks=False, out=io.StringIO())
    assert sorted(ids_in(tmp_path / "d.jsonl")) == [f"kaltura/{kaltura_entries.entry_id(i)}" for i in range(35, 70)]
    assert delta.done and all(r.get("call") != "media.list" or r["status"] == 200 for r in calls(sim))


# --- the operator's commands ------------------------------------------------------------------------------------


def test_migrator_inventory_and_plan_from_kaltura(library, tmp_path, capsys, monkeypatch):
    """`migrator inventory --from kaltura` with the credentials from the environment (KALTURA_PARTNER_ID,
    KALTURA_APP_TOKEN_ID, KALTURA_APP_TOKEN), then `migrator plan` of what it wrote: Kaltura publishes no rate, so
    its side is said not to be timed rather than timed at a number nobody documents."""
    from migrator_cli.main import main

    monkeypatch.chdir(tmp_path)  # the mark file goes beside the inventory's default place
    sim, _ = library(library_size=30, library_unfetchable_every=10, library_captions_every=4)
    for name, value in (("KALTURA_PARTNER_ID", str(PARTNER)), ("KALTURA_APP_TOKEN_ID", TOKEN_ID)):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KALTURA_APP_TOKEN", TOKEN)
    out = tmp_path / "kaltura.jsonl"
    code = main(["inventory", "--from", "kaltura", "--source-url", sim.url, "-o", str(out), "--restart"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert TOKEN not in err and len(ids_in(out)) == 30 - 2 - 1  # 2 unfetchable (19, 29), 1 converting (9)
    assert all(json.loads(line)["source_url"].startswith("kaltura://0_") for line in open(out))
    code = main(["plan", str(out), "--provider", "mux", "--rate", "1"])
    printed = capsys.readouterr()
    assert code == 0 and "kaltura: no documented read rate" in printed.out + printed.err


def test_migrator_load_from_kaltura_lists_then_loads_and_since_last_lists_only_what_changed(
    library, tmp_path, capsys, monkeypatch
):
    from migrator_cli.main import main

    monkeypatch.chdir(tmp_path)
    sim, _ = library(library_size=40, library_unfetchable_every=10)
    (tmp_path / "creds.json").write_text(json.dumps({"kaltura": APP}))
    argv = ["--from", "kaltura", "--source-url", sim.url, "--credentials", "creds.json"]
    code = main(["load", *argv, "--dry-run", "--no-tracks"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "rows            36 written to kaltura-inventory.jsonl" in err and "dry run         36 rows would be" in err
    assert main(["inventory", *argv, "--no-tracks", "-o", "all.jsonl"]) == 0
    capsys.readouterr()
    mark = read_mark(tmp_path / "kaltura.mark.json", "kaltura")
    assert mark == kaltura_entries.created_at(39) + kaltura_entries.UPDATED_AFTER_S  # the newest updatedAt seen
    assert main(["inventory", *argv, "--no-tracks", "--since", "last", "-o", "delta.jsonl"]) == 0
    capsys.readouterr()
    # The delta starts a minute before the mark (the sweep's MARK_OVERLAP_S): the last two creation seconds' entries.
    delta = ids_in(tmp_path / "delta.jsonl")
    assert delta and set(delta) <= {f"kaltura/{kaltura_entries.entry_id(i)}" for i in range(28, 40)}


# --- the simulator's own arithmetic -----------------------------------------------------------------------------


def _shelf(**config):
    from infra.sim.config import SimConfig
    from infra.sim.library import LibraryState, Shelf

    return Shelf(SimConfig(**config), LibraryState(), "", "kaltura", kaltura_entries.FAULTS)


def test_the_simulators_status_arithmetic_agrees_with_every_entry_it_renders():
    """media.list skips entries by their status and moderation before rendering them; the two must never differ."""
    shelf = _shelf(library_size=420, library_unfetchable_every=3, library_private_every=2)
    shelf.state.change(delete=[], make_private=[10, 11, 64])
    seen = set()
    for index in range(shelf.size):
        rendered = kaltura_entries.entry(shelf, shelf.video(index))
        assert kaltura_entries._state_of(shelf, index) == (int(rendered["status"]), rendered["moderationStatus"])
        seen.add(kaltura_entries._state_of(shelf, index))
    assert {(1, 6), (-1, 6), (7, 6), (2, 1), (2, 6)} <= seen  # converting, failed, no content, pending, approved


def test_a_filter_that_matches_no_entry_of_a_large_library_renders_none(monkeypatch):
    """The source's probe asks for the states Kaltura hides by default: in a library where none is, media.list
    rendered every entry to answer nothing, and a million outlasted the client's timeout."""
    shelf, rendered = _shelf(library_size=1_000_000), []
    real_entry = kaltura_entries.entry
    monkeypatch.setattr(kaltura_entries, "entry", lambda s, v: rendered.append(v.index) or real_entry(s, v))
    matched, order = kaltura_entries.listed(shelf, {"statusIn": "-2,-1,0,1,4,5,6,7"}, descending=False)
    assert list(matched) == [] and rendered == [] and len(order) == 1_000_000
    matched, _ = kaltura_entries.listed(shelf, {"moderationStatusIn": "1,3,5"}, descending=True)
    assert next(matched, None) is None and rendered == []
    first, _ = kaltura_entries.listed(shelf, {}, descending=False)
    assert next(first)["id"] == kaltura_entries.entry_id(0) and rendered == [0]


# --- usage (issue 45) -------------------------------------------------------------------------------------------


def test_every_row_carries_the_entrys_plays_views_and_last_play_read_at_the_listing_at_no_extra_request(library):
    from infra.sim import library_usage

    sim, source = library(library_size=30)
    before = time.time()
    entries, _pending, _pages = listed(source, tracks=False)
    rows = [e for e in entries if hasattr(e, "usage")]
    assert rows and all(r.usage is not None for r in rows)
    for row in rows:
        index = kaltura_entries.index_of(row.asset_id.removeprefix("kaltura/"))
        usage = row.usage
        assert usage.counted_by == "kaltura entry plays" and usage.since is None
        assert usage.read_at >= time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(before - 1))
        assert (usage.plays, usage.views) == (library_usage.plays(index), library_usage.views(index))
        assert usage.never_played == library_usage.never_played(index)
        if not usage.never_played:
            expected = library_usage.last_played(index, kaltura_entries.created_at(index))
            assert usage.last_played_at == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expected))
    assert any(r.usage.never_played for r in rows) and not calls(sim, "report.getTable")
