"""Brightcove as a source: the "brightcove" simulator driven with plain requests shaped as Brightcove's references
show them (Brightcove ships no official Python SDK) and by migrator.sources.brightcove, which shares one OAuth
token across the fleet, lists by updated_at in windows that a deletion cannot shift, names what it cannot fetch
(no MP4 rendition: the CMS API serves no master), keeps what is still processing pending, and carries the
privacy of `state`, `schedule` and `geo`, never wider."""

from __future__ import annotations

import base64
import io
import json
import threading
import time

import pytest
import requests
from migrator.sources import ResolutionKind, build, parse_ref
from migrator.sources.brightcove import NO_RENDITION, RENDITION_NOTE, STILL_PROCESSING, best_rendition
from migrator.sources.brightcove_token import TOKEN_ITEM, LedgerTokens, LocalTokens, seal_key, unseal
from migrator_cli.sweep import read_mark, sweep

from infra.sim.platforms.brightcove import ID_BASE
from tests.sim.support import list_all
from tests.unit.dynamo_fake import FakeDynamo

ACCOUNT, CLIENT, SECRET = "6300000000001", "bc-client", "bc-secret"
CREDS = {"account_id": ACCOUNT, "client_id": CLIENT, "client_secret": SECRET}


@pytest.fixture
def library(launch):
    def start(tokens=None, **config):
        config = {"library_size": 230, **config}
        sim = launch("brightcove", account_id=ACCOUNT, token_id=CLIENT, token_secret=SECRET, **config)
        return sim, source(sim, tokens)

    return start


def source(sim, tokens=None, **options):
    options = {"patient": True, "rate_per_s": 0, **options}
    return build("brightcove", lambda: CREDS, sim.url, tokens=tokens or LocalTokens(), **options)


def vid(index: int) -> str:
    return str(ID_BASE + index)


def token_requests(sim) -> int:
    return sum(1 for r in sim.requests_log(ops=None) if r["op"] == "src_token" and r["status"] == 201)


def access_token(sim, in_body: bool = False, grant: str = "client_credentials") -> requests.Response:
    """A token request as "Getting Access Tokens" shows it: the grant "as the request body or as URL parameter"."""
    basic = base64.b64encode(f"{CLIENT}:{SECRET}".encode()).decode()
    return requests.post(
        f"{sim.url}/v4/access_token",
        params=None if in_body else {"grant_type": grant},
        data=f"grant_type={grant}" if in_body else None,
        headers={"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
        timeout=5,
    )


@pytest.mark.parametrize(
    ("in_body", "grant", "status"),
    [(True, "client_credentials", 201), (False, "client_credentials", 201), (True, "password", 400)],
)
def test_a_token_is_granted_for_the_grant_in_the_form_body_or_the_query(library, in_body, grant, status):
    sim, _ = library(library_size=1)
    answer = access_token(sim, in_body, grant)
    assert answer.status_code == status  # the OAuth API reference: "HTTP/1.1 201 Created"
    if status == 201:
        assert answer.json()["token_type"] == "Bearer" and answer.json()["expires_in"] == 300
        bearer = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        assert requests.get(f"{sim.url}/v1/accounts/{ACCOUNT}/videos", headers=bearer, timeout=5).status_code == 200
    else:
        assert answer.json()["error"] == "unsupported_grant_type"


def test_plain_requests_as_the_reference_shows_them(library):
    sim, _ = library(library_size=30, library_captions_every=3)
    bearer = {"Authorization": f"Bearer {access_token(sim).json()['access_token']}"}
    cms = f"{sim.url}/v1/accounts/{ACCOUNT}"
    first = requests.get(f"{cms}/videos", params={"limit": 10, "sort": "updated_at"}, headers=bearer, timeout=5)
    assert [v["id"] for v in first.json()] == [vid(i) for i in range(10)]
    default = requests.get(f"{cms}/videos", headers=bearer, timeout=5).json()  # 20, newest change first
    assert len(default) == 20 and default[0]["id"] == vid(29)
    since = first.json()[5]["updated_at"]
    later = requests.get(f"{cms}/videos", params={"q": f"updated_at:{since}..", "sort": "updated_at"}, headers=bearer)
    assert later.json()[0]["id"] == vid(5)
    assert requests.get(f"{cms}/counts/videos", params={"q": f"updated_at:{since}.."}, headers=bearer).json() == {
        "count": 25
    }
    video = requests.get(f"{cms}/videos/{vid(1)}", headers=bearer).json()  # every third captioned, from 1
    assert video["complete"] is True and video["duration"] == 67250 and video["state"] == "ACTIVE"
    assert video["geo"] is None  # no geo-filtering: null, as the reference's examples show it
    assert [(t["srclang"], t["status"]) for t in video["text_tracks"]] == [
        ("en", "published"),
        ("fr", "published"),
        ("de", "draft"),
    ]
    sources = requests.get(f"{cms}/videos/{vid(2)}/sources", headers=bearer).json()
    assert {(s.get("container"), s.get("width")) for s in sources} >= {("MP4", 1920), (None, None)}
    assert requests.get(f"{cms}/videos", params={"limit": 101}, headers=bearer).status_code == 422
    refused = requests.get(f"{cms}/videos", headers={"Authorization": "Bearer bc.1.forged"})
    assert refused.status_code == 401 and refused.json()[0]["error_code"] == "UNAUTHORIZED"
    wrong = requests.post(f"{sim.url}/v4/access_token", params={"grant_type": "client_credentials"}, auth=("x", "y"))
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_client"  # as access_token.js shows it


def test_the_library_is_listed_with_every_field_a_row_carries(library):
    _sim, src = library(library_captions_every=4)
    entries, pages = list_all(src)
    assert pages == 3 and len(entries) == 230 and len({e.asset_id for e in entries}) == 230
    row = next(e for e in entries if e.asset_id == f"brightcove/{vid(2)}")
    assert (row.title, row.source_url, row.duration_s) == ("Library video 000002", f"brightcove://{vid(2)}", 104.25)
    assert row.description.startswith("Description of video 2.") and row.tags == ("series-2", "library")
    assert row.created_at == "2020-01-01T00:02:00Z" and row.privacy == "public" and row.folder == "Webinars"
    assert row.metadata["source_file"] == "rendition 1920x1080 MP4" and row.metadata["source_note"] == RENDITION_NOTE
    assert row.size_bytes > 0
    captioned = next(e for e in entries if e.tracks)
    assert [(t.language, t.kind, t.format) for t in captioned.tracks] == [
        ("en", "captions", "vtt"),
        ("fr", "subtitles", "vtt"),
    ]
    assert "1 draft text track" in captioned.metadata["text_tracks_note"]
    assert next(e for e in entries if e.folder == "Training 2021")  # "/" is not allowed in a folder's name


def test_what_has_no_mp4_is_named_up_front_and_what_is_processing_is_pending_then_listed(library, tmp_path):
    sim, src = library(library_size=40, library_unfetchable_every=10)  # 9, 29 processing; 19, 39 no MP4
    marks = tmp_path / "marks.json"
    first = sweep(src, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    bad = [json.loads(line) for line in (tmp_path / "all.jsonl.unfetchable.jsonl").read_text().splitlines()]
    assert sorted(b["id"] for b in bad) == [f"brightcove/{vid(19)}", f"brightcove/{vid(39)}"]
    assert {b["reason"] for b in bad} == {NO_RENDITION} and first.rows == 36 and first.pending == 2
    page = src.video(vid(9))
    assert page.entries == [] and [p.reason for p in page.pending] == [STILL_PROCESSING]
    assert src.resolve(parse_ref(f"brightcove://{vid(9)}")).kind is ResolutionKind.PREPARING
    sim.patch_config({"library_processing_done": True})
    delta = sweep(src, tmp_path / "delta.jsonl", mark_path=marks, since=read_mark(marks, "brightcove") + 1)
    rows = [json.loads(line)["id"] for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert sorted(rows) == [f"brightcove/{vid(9)}", f"brightcove/{vid(29)}"] and delta.pending == 0
    assert src.resolve(parse_ref(f"brightcove://{vid(19)}")).reason == NO_RENDITION


def test_privacy_follows_state_schedule_and_geo_and_is_read_again_at_the_resolve(library):
    # 0 INACTIVE, 4 scheduled later, 8 in a window, 12 geo-restricted to an include list, 16 by an exclude list
    sim, src = library(library_size=20, library_private_every=4)
    entries, _ = list_all(src)
    privacy = {e.asset_id.rsplit("/", 1)[1]: (e.privacy, e.metadata.get("privacy_note")) for e in entries}
    assert privacy[vid(0)] == ("private", None) and privacy[vid(1)] == ("public", None)
    assert privacy[vid(4)][0] == "private" and "outside now" in privacy[vid(4)][1]
    assert privacy[vid(8)][0] == "signed" and "schedule" in privacy[vid(8)][1]
    assert next(e for e in entries if e.asset_id.endswith(vid(8))).metadata["schedule"]["ends_at"].startswith("2099")
    assert privacy[vid(12)][0] == "signed" and "plays only in ph, in, my (an include list)" in privacy[vid(12)][1]
    assert privacy[vid(16)][0] == "signed" and "everywhere except us, ca (an exclude list)" in privacy[vid(16)][1]
    rows = {e.asset_id.rsplit("/", 1)[1]: e for e in entries}
    assert rows[vid(16)].metadata["geo"] == {"restricted": True, "exclude_countries": True, "countries": ["us", "ca"]}
    assert "geo" not in rows[vid(1)].metadata
    assert src.resolve(parse_ref(f"brightcove://{vid(12)}")).privacy == "signed"
    ref = parse_ref(f"brightcove://{vid(1)}")
    assert src.resolve(ref).privacy == "public"
    sim.change_library(delete=[], make_private=[1])  # deactivated since the listing (1 // 4 % 3 == 0: INACTIVE)
    assert src.resolve(ref).privacy == "private"


def test_resolve_hands_the_widest_mp4_rendition_and_a_track_its_file(library):
    _sim, src = library(library_size=10, library_captions_every=3)
    ready = src.resolve(parse_ref(f"brightcove://{vid(1)}"))
    assert ready.kind is ResolutionKind.READY and "/1920x1080.mp4" in ready.url
    assert requests.get(ready.url, timeout=5).content[4:8] == b"ftyp"
    (row,) = src.video(vid(1)).entries
    track = src.resolve(parse_ref(row.tracks[0].url))
    assert track.kind is ResolutionKind.READY and requests.get(track.url, timeout=5).text.startswith("WEBVTT")
    assert src.resolve(parse_ref(f"brightcove://{vid(1)}/text_tracks/none")).kind is ResolutionKind.UNFETCHABLE
    assert src.resolve(parse_ref(f"brightcove://{vid(999)}")).kind is ResolutionKind.UNFETCHABLE  # gone


def test_only_https_mp4_renditions_count_where_the_api_is_https():
    sources = [
        {"src": "http://cdn.example/a.mp4", "container": "MP4", "width": 1920},
        {"src": "https://cdn.example/b.mp4", "container": "MP4", "width": 1280},
        {"src": "https://cdn.example/c.m3u8", "type": "application/x-mpegURL"},
    ]
    assert best_rendition(sources)["src"] == "https://cdn.example/b.mp4"
    assert best_rendition(sources[:1]) is None and best_rendition(sources[:1], ("https", "http")) is not None


def test_a_fleet_of_workers_shares_one_token_through_the_ledger_item(library):
    sim, _ = library(library_size=50)
    dynamo = FakeDynamo()
    clock = {"now": time.time()}
    workers = [
        source(sim, LedgerTokens("ledger", dynamo), patient=False, clock=lambda: clock["now"]) for _ in range(12)
    ]
    results, errors = [], []

    def resolve(worker, index):
        try:
            results.append(worker.resolve(parse_ref(f"brightcove://{vid(index)}")).kind)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=resolve, args=(w, n)) for n, w in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [ResolutionKind.READY] * 12
    assert token_requests(sim) == 1  # twelve workers, one token
    assert sum(w.token.minted for w in workers) == 1
    stored = dynamo.items[TOKEN_ITEM]
    (token,) = {w.token._mine.value for w in workers}
    assert token not in json.dumps(stored, default=str)  # sealed
    assert (
        unseal(seal_key(CLIENT, SECRET), stored["token"]) == token
        and unseal(seal_key(CLIENT, "x"), stored["token"]) is None
    )
    clock["now"] += 280  # 20 s left of its 5 minutes: renewed before it dies, once for everyone
    for n, worker in enumerate(workers):
        assert worker.resolve(parse_ref(f"brightcove://{vid(n)}")).kind is ResolutionKind.READY
    assert token_requests(sim) == 2


def test_a_token_brightcove_refuses_is_dropped_and_renewed_once(library):
    sim, _ = library(library_size=5)
    dynamo = FakeDynamo()
    store = LedgerTokens("ledger", dynamo)
    store.lease(time.time(), "someone")
    from migrator.sources.brightcove_token import Token

    store.write(seal_key(CLIENT, SECRET), Token("bc.9999999999.forged", time.time() + 300), "someone")
    worker = source(sim, store, patient=False)
    assert worker.resolve(parse_ref(f"brightcove://{vid(1)}")).kind is ResolutionKind.READY
    assert token_requests(sim) == 1
    assert unseal(seal_key(CLIENT, SECRET), dynamo.items[TOKEN_ITEM]["token"]) == worker.token._mine.value


def test_a_deletion_between_two_pages_skips_nothing(library):
    sim, src = library(library_size=250)
    first = src.page(None)
    assert len(first.entries) == 100 and first.remaining == 150
    sim.change_library(delete=[3, 40, 99], make_private=[])
    rest, cursor = [], first.cursor
    while cursor:
        page = src.page(cursor)
        rest += page.entries
        cursor = page.cursor
    ids = {e.asset_id for e in first.entries + rest}
    assert len(ids) == 250 and {e.asset_id for e in rest} == {f"brightcove/{vid(i)}" for i in range(100, 250)}


def test_the_accounts_shared_limit_is_waited_out(library):
    sim, _ = library(library_size=40, read_rate=10, read_burst=2)
    slept = []
    patient = source(sim, sleep=lambda s: (slept.append(s), time.sleep(min(s, 0.3))))
    entries, _ = list_all(patient, tracks=False)
    assert len(entries) == 40 and patient.throttled > 0 and sim.stats()["read_throttled"] > 0
