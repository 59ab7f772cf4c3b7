"""What a viewer sees first, read from Brightcove (issue 42): each video's poster (else its thumbnail), its chapters
track, its folder and the playlists that hold it in their order, and its first activation, on the "brightcove"
simulator profile.

Brightcove ships no official Python SDK: plain requests shaped as its references show them read what the simulator
holds (infra/sim/platforms/brightcove_library.py cites the pages), including the images at their links and the
chapters file; migrator.sources.brightcove lists the library into rows, and each test holds the rows to what the
plain requests read, and the requests to the budget: nothing asked that the video's own answer holds.
"""

from __future__ import annotations

import base64
import struct
import time
from collections import Counter

import pytest
from migrator.extras import read_chapters
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, build, parse_ref
from migrator.sources.brightcove_extras import NO_PLAYLIST_READ
from migrator.sources.brightcove_token import LocalTokens

from infra.sim.library import item
from infra.sim.platforms import chapter_cues
from infra.sim.platforms.brightcove import FAULTS, ID_BASE
from tests.sim.support import list_all

ACCOUNT, CLIENT, SECRET = "6300000000001", "bc-client", "bc-secret"
CREDS = {"account_id": ACCOUNT, "client_id": CLIENT, "client_secret": SECRET}
EXTRA_OPS = ("src_playlists", "src_playlist_videos")


@pytest.fixture
def library(launch):
    def start(**config):
        config = {"library_size": 60, "library_chapters_every": 3, **config}
        sim = launch("brightcove", account_id=ACCOUNT, token_id=CLIENT, token_secret=SECRET, **config)
        source = build("brightcove", lambda: CREDS, sim.url, tokens=LocalTokens(), patient=True, rate_per_s=0)
        return sim, source

    return start


def vid(index: int) -> str:
    return str(ID_BASE + index)


def cms(sim, web):
    """GET on the CMS API with a token from the OAuth API, as "Getting Access Tokens" shows it."""
    basic = base64.b64encode(f"{CLIENT}:{SECRET}".encode()).decode()
    token = web.post(
        f"{sim.url}/v4/access_token",
        params={"grant_type": "client_credentials"},
        headers={"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
    ).json()["access_token"]

    def get(path: str, **params):
        return web.get(
            f"{sim.url}/v1/accounts/{ACCOUNT}{path}", params=params, headers={"Authorization": f"Bearer {token}"}
        )

    return get


def png_size(image: bytes) -> tuple[int, int]:
    assert image[:8] == b"\x89PNG\r\n\x1a\n" and image[12:16] == b"IHDR"
    return struct.unpack(">II", image[16:24])


def test_plain_requests_read_images_chapters_playlists_and_publish_times(library, web):
    sim, _ = library()
    get = cms(sim, web)
    video = get(f"/videos/{vid(1)}").json()
    poster, thumbnail = video["images"]["poster"], video["images"]["thumbnail"]
    assert png_size(web.get(poster["src"]).content) == (1280, 720) == (poster["sources"][0]["width"], 720)
    assert png_size(web.get(thumbnail["sources"][0]["src"]).content) == (320, 180)
    assert web.get(poster["src"].replace("sig=", "sig=0")).status_code == 403  # a signed link, as assets are
    assert list(get(f"/videos/{vid(6)}").json()["images"]) == ["thumbnail"]  # its poster removed
    assert video["published_at"] == "2020-01-02T00:01:00.000000Z" != video["created_at"]  # activated a day on
    (chapters,) = [t for t in video["text_tracks"] if t["kind"] == "chapters"]  # every third from the second
    assert chapters["status"] == "published" and chapters["mime_type"] == "text/vtt"
    vtt = web.get(chapters["src"])
    assert vtt.headers["Content-Type"] == "text/vtt" and vtt.text.startswith("WEBVTT\n\n1\n00:00:00.000 --> ")
    assert [t["status"] for t in get(f"/videos/{vid(7)}").json()["text_tracks"] if t["kind"] == "chapters"] == ["draft"]
    assert not [t for t in get(f"/videos/{vid(2)}").json()["text_tracks"] if t["kind"] == "chapters"]
    listed = get("/playlists", limit=2, sort="name").json()
    assert [(p["name"], p["type"]) for p in listed] == [
        ("Featured « launch »", "EXPLICIT"),
        ("Newest featured", "ACTIVATED_NEWEST_TO_OLDEST"),
    ]
    assert listed[0]["video_ids"][:3] == [vid(56), vid(49), vid(42)] and "video_ids" not in listed[1]
    assert listed[1]["search"] == '+tags:"featured"' and listed[1]["limit"] == 20
    assert [p["name"] for p in get("/playlists", q="type:EXPLICIT").json()] == [
        "Onboarding 2021",
        "Featured « launch »",
    ]
    smart = get(f"/playlists/{listed[1]['id']}/videos").json()
    assert [v["id"] for v in smart] == [vid(i) for i in (55, 11, 22, 33, 44, 0)]  # newest activation, not upload
    refused = get("/playlists", sort="plays_total")
    assert refused.status_code == 400 and refused.json()[0]["error_code"] == "INVALID_SORT"


def truth(get) -> dict[str, list[tuple[str, str, int | None]]]:
    """Each video's playlists as plain requests read them: an EXPLICIT one's place, a smart one's membership."""
    held: dict[str, list[tuple[str, str, int | None]]] = {}
    for playlist in get("/playlists", limit=100).json():
        if playlist["type"] == "EXPLICIT":
            members = [(v, place) for place, v in enumerate(playlist["video_ids"])]
        else:
            members = [(v["id"], None) for v in get(f"/playlists/{playlist['id']}/videos").json()]
        for video_id, place in members:
            held.setdefault(video_id, []).append((f"playlists/{playlist['id']}", playlist["name"], place))
    return {k: sorted(v) for k, v in held.items()}


def test_each_row_carries_the_poster_chapters_folder_playlists_and_publish_time_brightcove_holds(library, web):
    sim, source = library(library_unfetchable_every=10)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    get = cms(sim, web)
    folders = {f["id"]: f["name"] for f in get("/folders").json()}
    playlists = truth(get)
    assert len(rows) == 54  # 60, every tenth unfetchable (processing, no MP4) in turn
    for row in rows:
        video = get(f"/videos/{row.metadata['source_id']}").json()
        kind = "poster" if "poster" in video["images"] else "thumbnail"
        assert row.thumbnail_url == f"brightcove://{video['id']}/images/{kind}"
        assert row.published_at == video["published_at"][:19] + "Z"
        published = [t for t in video["text_tracks"] if t["kind"] == "chapters" and t["status"] == "published"]
        assert [t.url for t in row.tracks if t.kind == "chapters"] == [
            f"brightcove://{video['id']}/text_tracks/{t['id']}" for t in published
        ]
        shown = [(c.id, c.name, c.position) for c in row.collections]
        folder = (f"folders/{video['folder_id']}", folders[video["folder_id"]], None)
        assert shown[0] == folder and sorted(shown[1:]) == playlists.get(video["id"], [])
        assert row.folder == folder[1] and "playlists_note" not in row.metadata
    by_id = {r.metadata["source_id"]: r for r in rows}
    assert by_id[vid(6)].thumbnail_url == f"brightcove://{vid(6)}/images/thumbnail"  # no poster: its thumbnail
    assert [c.position for c in by_id[vid(0)].collections if c.name == "Featured « launch »"] == [8]  # 56, ..., 0
    assert "1 draft text track(s)" in by_id[vid(7)].metadata["text_tracks_note"]  # its chapters held back


def test_the_extras_cost_a_request_only_where_the_videos_own_answer_does_not_hold_them(library):
    """The poster, the folder, the date and the chapters track come in the video's own answer; the playlists are
    read once a sweep (a page of them, and the videos of the one smart playlist). --no-tracks: none of them."""
    sim, source = library(library_size=120, library_unfetchable_every=10)
    list_all(source)
    asked = Counter(entry["op"] for entry in sim.requests_log(ops=None))
    assert asked["src_playlists"] == 1 and asked["src_playlist_videos"] == 1
    assert asked["list"] == 2 and asked["get"] == 0  # no video read a second time for its extras
    quiet, bare = library(library_size=120, library_unfetchable_every=10)
    rows = [e for e in list_all(bare, tracks=False)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in quiet.requests_log(ops=None))
    assert sum(asked[op] for op in EXTRA_OPS) == 0
    assert all(r.thumbnail_url and r.published_at and [c.kind for c in r.collections] == ["folder"] for r in rows)


def test_a_poster_reference_resolves_to_the_image_shown_now_with_a_fresh_link(library, web):
    sim, source = library(link_ttl_s=1.0)
    ready = source.resolve(parse_ref(f"brightcove://{vid(1)}/images/poster"))
    assert ready.kind is ResolutionKind.READY and png_size(web.get(ready.url).content) == (1280, 720)
    # The poster removed since the inventory: the image the video shows now, its thumbnail, not a failure.
    shown = source.resolve(parse_ref(f"brightcove://{vid(6)}/images/poster"))
    assert png_size(web.get(shown.url).content) == (320, 180)
    time.sleep(1.1)  # the signed link handed out has lived its life; the reference gives a new one
    assert web.get(ready.url).status_code == 403
    again = source.resolve(parse_ref(f"brightcove://{vid(1)}/images/poster"))
    assert again.url != ready.url and web.get(again.url).status_code == 200
    web.post(f"{sim.url}/_sim/library", json={"delete": [1]}).raise_for_status()
    gone = source.resolve(parse_ref(f"brightcove://{vid(1)}/images/poster"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and gone.reason.startswith("not found at the source")
    assert web.get(again.url).status_code == 404  # the image of a deleted video is gone from the CDN too


def test_a_chapters_track_resolves_to_the_webvtt_the_tracks_worker_reads_as_chapters(library, web):
    sim, source = library()
    (row,) = source.video(vid(4)).entries
    (track,) = [t for t in row.tracks if t.kind == "chapters"]
    assert track.language == "en" and track.format == "vtt"
    file = web.get(source.resolve(parse_ref(track.url)).url).content
    held = item(sim.config, 4, FAULTS)
    assert [(c.start_s, c.title) for c in read_chapters(file)] == [(s, t) for s, _, t in chapter_cues.cues(held)]
    assert [c.title for c in read_chapters(file)][:2] == ["Intro", "Welcome « live »"]


def test_credentials_that_may_not_read_playlists_still_list_every_video_and_say_so(library, monkeypatch):
    _sim, source = library(library_size=5)
    real = source.call

    def call(method, path, *args, **kwargs):
        if path.endswith("/playlists"):  # as Brightcove answers credentials without video-cloud/playlist/read
            path = path.replace(f"/accounts/{ACCOUNT}/", "/accounts/1/")  # another account: refused 401
        return real(method, path, *args, **kwargs)

    monkeypatch.setattr(source, "call", call)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    assert len(rows) == 5 and all(r.metadata["playlists_note"] == NO_PLAYLIST_READ for r in rows)
    assert all([c.kind for c in r.collections] == ["folder"] for r in rows)
